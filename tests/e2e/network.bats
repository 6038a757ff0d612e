#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The eBPF network layer against local services and link-local ranges:
# real listeners (root, outside the calls) that a command tries to reach
# in every form the kernel takes for a local address, each refusal checked
# in the audit log beside the twin that must keep working. The agent runs
# in a network namespace of its own (loopback only, plus test addresses on
# it), so the fixed ports are free and nothing can leave the machine.

load helpers

setup() {
	cw_setup
	j=$("$CW" probe --json)
	[ "$(jq -r .layers.bpf_net <<<"$j")" = true ] ||
		skip "layer bpf_net is off here: $(jq -r .layers_off.bpf_net <<<"$j")"
	# listen.py SPEC...: TCP and UDP listeners for each FAMILY,ADDR,PORT
	# (FAMILY 4 or 6); TCP answers "hi" and logs "tcp PORT" to $T/hits,
	# UDP logs "udp PORT"; "ready" goes to $T/ready once all are bound.
	cat >"$T/listen.py" <<'PY'
import os, socket, sys, threading
hits = sys.argv[1]
def log(s):
    with open(hits, "a") as f: f.write(s + "\n")
def tcp(s, port):
    while True:
        c, _ = s.accept(); log("tcp %d" % port); c.sendall(b"hi\n"); c.close()
def udp(s, port):
    while True:
        s.recvfrom(100); log("udp %d" % port)
for spec in [a for a in sys.argv[3:] if not a.startswith("cw-listener:")]:
    fam, addr, port = spec.split(",")
    af = socket.AF_INET if fam == "4" else socket.AF_INET6
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(af, kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if af == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((addr, int(port)))
        if kind == socket.SOCK_STREAM:
            s.listen(16)
        threading.Thread(target=tcp if kind == socket.SOCK_STREAM else udp,
                         args=(s, int(port)), daemon=True).start()
open(sys.argv[2], "w").write("ready\n")
threading.Event().wait()
PY
	# innet LISTENER_SPEC... -- CMDWARDEN_ARGS...: cmdwarden in a fresh
	# network namespace with loopback up, 192.0.2.77 and 2001:db8::77 on
	# it (the machine's own addresses there), and listen.py's listeners;
	# the agent's pid goes to $T/agent.pid
	cat >"$T/innet" <<'SH'
#!/bin/bash
T=$1; CWBIN=$2; shift 2
specs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do specs+=("$1"); shift; done
shift
exec unshare -n bash -c '
T=$1; CWBIN=$2; n=$3; shift 3
ip link set lo up
ip addr add 192.0.2.77/32 dev lo
ip addr add 2001:db8::77/128 dev lo nodad
python3 "$T/listen.py" "$T/hits" "$T/ready" "${@:1:$n}" "cw-listener:$T" 3>&- </dev/null &
shift "$n"
for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.05; done
[ -s "$T/ready" ] || { echo "the listeners did not start" >&2; exit 97; }
echo $$ >"$T/agent.pid"
exec "$CWBIN" "$@"' innet "$T" "$CWBIN" "${#specs[@]}" "${specs[@]}" "$@"
SH
	chmod +x "$T/innet"
	: >"$T/hits"
	# try ADDR:PORT|udp ADDR PORT...: one line per target, "ADDR PORT hi"
	# or "ADDR PORT ERRNO-NAME"
	cat >"$T/try.py" <<'PY'
import errno, socket, sys
args = sys.argv[1:]
udp = args and args[0] == "udp"
if udp: args = args[1:]
for i in range(0, len(args), 2):
    addr, port = args[i], int(args[i + 1])
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        if udp:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            s.sendto(b"x", (addr, port)); r = "sent"
        else:
            s.connect((addr, port)); r = s.recv(10).decode().strip()
    except socket.timeout:
        r = "timeout"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(addr, port, r, flush=True)
    s.close()
PY
	# where the sandbox account can read it
	D=$(public_dir)
	mv "$T/try.py" "$D/try.py"
	chmod a+r "$D/try.py"
}

teardown() {
	pkill -f "cw-listener:$T" 2>/dev/null || true
	http_stop
	public_dirs_remove
}

# netmcp LISTENER_SPEC... -- SERVE_ARGS... -- LINE...: mcp, with the agent
# in its own network namespace holding those listeners
netmcp() {
	local specs=() args=()
	while [ "$1" != -- ]; do specs+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	printf '%s\n' "$INIT" "$INITIALIZED" "$@" |
		"$T/innet" "$T" "$CW" "${specs[@]}" -- serve --state-dir "$STATE" --audit "$AUDIT" "${args[@]}" >"$T/out" 2>"$T/err"
}

try() {
	echo "python3 $D/try.py $*"
}

# refusals KIND: the net records of local-service refusals, as "ADDR PORT SERVICE"
refusals() {
	jq -r 'select(.type == "net" and .rule == "local_service" and .verdict == "deny") | "\(.address) \(.port) \(.service)"' "$AUDIT"
}

@test "network: envd's and the MCP gateway's ports are refused on every local address, TCP and UDP; a call's own loopback server works" {
	forms="127.0.0.1 127.3.4.5 0.0.0.0 ::1 :: ::ffff:127.0.0.1 ::ffff:0.0.0.0 192.0.2.77 2001:db8::77 ::ffff:192.0.2.77"
	targets=
	for a in $forms; do targets="$targets $a 49983 $a 50005"; done
	udp="127.0.0.1 49983 0.0.0.0 50005 ::1 49983 255.255.255.255 49983 224.0.0.1 50005 192.0.2.77 50005"
	own="python3 -c 'import socket,time,os
s=socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1); p=s.getsockname()[1]
if os.fork() == 0:
    c=socket.create_connection((\"127.0.0.1\", p)); print(c.recv(20).decode().strip(), flush=True); os._exit(0)
c,_=s.accept(); c.sendall(b\"own-server-hi\"); c.close(); os.wait()'"
	netmcp 4,0.0.0.0,49983 4,0.0.0.0,50005 6,::,49983 6,::,50005 -- -- \
		"$(call_json 1 "$(try "$targets")")" \
		"$(call_json 2 "$(try udp "$udp")")" \
		"$(call_json 3 "$own")"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	# every form, both ports: refused with EPERM by the connect hook
	run text 1
	for a in $forms; do
		assert_output --partial "$a 49983 EPERM"
		assert_output --partial "$a 50005 EPERM"
	done
	run text 2
	for t in "127.0.0.1 49983" "0.0.0.0 50005" "::1 49983" "255.255.255.255 49983" "224.0.0.1 50005" "192.0.2.77 50005"; do
		assert_output --partial "$t EPERM"
	done
	# nothing reached the listeners
	assert_equal "$(cat "$T/hits")" ""
	# each refusal is audited, naming the service and why
	assert_equal "$(refusals | grep -c ' 49983 envd$')" 13
	assert_equal "$(refusals | grep -c ' 50005 mcp_gateway$')" 13
	run jq -r 'select(.type == "net" and .rule == "local_service") | .reason' "$AUDIT"
	assert_output --partial "E2B's envd (runs processes and files as any user) listens on this port; network.local_services does not allow it"
	assert_equal "$(refusals | grep -c '^::ffff:0.0.0.0 49983 envd$')" 1
	# the twin: a server of the call's own, reached over loopback
	assert_equal "$(text 3 | jq -r .stdout)" own-server-hi || fail "$(text 3)"
}

@test "network: a root listener is refused unless network.local_services allows its address and port" {
	cat >"$T/svc.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"local_services": ["127.0.0.1:7102", "[::1]:7102"]}}}}}
JSON
	netmcp 4,127.0.0.1,7101 4,127.0.0.1,7102 6,::1,7102 -- --policy "$T/svc.json" -- \
		"$(call_json 1 "$(try 127.0.0.1 7101 127.0.0.1 7102 0.0.0.0 7102 ::ffff:127.0.0.1 7102 ::1 7102 :: 7102)")" \
		"$(call_json 2 "$(try udp 127.0.0.1 7101 127.0.0.1 7102)")"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	run text 1
	assert_output --partial "127.0.0.1 7101 EPERM"
	# the allowed service, also through the unspecified and mapped forms
	assert_output --partial "127.0.0.1 7102 hi"
	assert_output --partial "0.0.0.0 7102 hi"
	assert_output --partial "::ffff:127.0.0.1 7102 hi"
	assert_output --partial "::1 7102 hi"
	assert_output --partial ":: 7102 hi"
	run text 2
	assert_output --partial "127.0.0.1 7101 EPERM"
	assert_output --partial "127.0.0.1 7102 sent"
	for _ in $(seq 20); do grep -q "udp 7102" "$T/hits" && break; sleep 0.1; done
	assert_equal "$(sort "$T/hits" | uniq -c | awk '{print $2 " " $3 " " $1}' | tr '\n' ,)" "tcp 7102 5,udp 7102 1,"
	assert_equal "$(refusals | sort | tr '\n' ,)" "127.0.0.1 7101 listener,127.0.0.1 7101 listener,"
	run jq -r 'select(.type == "net" and .rule == "local_service") | .reason' "$AUDIT"
	assert_output --partial "a socket outside the calls listens on this local port"
	# under a default deny the service is listed in allow too
	cat >"$T/svc-deny.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "deny", "allow": ["127.0.0.1/32:7101-7102"],
              "local_services": ["127.0.0.1:7102"]}}}}}
JSON
	rm -f "$AUDIT"
	: >"$T/hits"
	: >"$T/ready"
	netmcp 4,127.0.0.1,7101 4,127.0.0.1,7102 -- --policy "$T/svc-deny.json" -- \
		"$(call_json 1 "$(try 127.0.0.1 7101 127.0.0.1 7102)")"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	run text 1
	assert_output --partial "127.0.0.1 7101 EPERM"
	assert_output --partial "127.0.0.1 7102 hi"
	assert_equal "$(refusals)" "127.0.0.1 7101 listener"
}

@test "network: a dev server a background call started is reachable from the next call" {
	serve_cmd="python3 -c 'import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", 7300)); s.listen(8)
while True:
    c,_=s.accept(); c.sendall(b\"dev-server\"); c.close()'"
	# 7300 = 0x1C84, in LISTEN (0A): the server is up before the next call
	# starts, so that call's reading of the listeners sees it
	wait_up="for i in \$(seq 50); do grep -q ':1C84 00000000:0000 0A' /proc/net/tcp && echo up && exit 0; sleep 0.1; done; echo down"
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 "$serve_cmd" '{"background": true}')" "$(call_json 2 "$wait_up")"
		for _ in $(seq 100); do grep -q '"id":2' "$T/out" 2>/dev/null && break; sleep 0.1; done
		printf '%s\n' "$(call_json 3 "$(try 127.0.0.1 7300 127.0.0.1 7301)")"
		for _ in $(seq 100); do grep -q '"id":3' "$T/out" && break; sleep 0.1; done
	} | "$T/innet" "$T" "$CW" 4,127.0.0.1,7301 -- serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	assert_equal "$(text 2 | jq -r .stdout)" up
	run text 3
	assert_output --partial "127.0.0.1 7300 dev-server"
	# while a root listener beside it stays out of reach
	assert_output --partial "127.0.0.1 7301 EPERM"
	assert_equal "$(refusals)" "127.0.0.1 7301 listener"
}

@test "network: an address added while the agent runs is refused from the next call on, and by the egress program at once" {
	# call 1 (background) keeps trying 192.0.2.99 while it is added: the
	# connect hook does not know it yet, the egress program sees the SYN
	# routed through loopback and drops it
	probe="for i in \$(seq 30); do python3 $D/try.py 192.0.2.99 49983; sleep 0.1; done"
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 "$probe" '{"background": true}')"
		# the background call has started (and read the addresses)
		for _ in $(seq 100); do grep -q '"id":1' "$T/out" 2>/dev/null && break; sleep 0.1; done
		nsenter -t "$(cat "$T/agent.pid")" -n ip addr add 192.0.2.99/32 dev lo
		sleep 3
		printf '%s\n' "$(call_json 2 "$(try 192.0.2.99 49983 192.0.2.99 7402)")"
		for _ in $(seq 100); do grep -q '"id":2' "$T/out" && break; sleep 0.1; done
	} | "$T/innet" "$T" "$CW" 4,0.0.0.0,49983 -- serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	# the next call knows the address: EPERM at connect, for envd and
	# a port no one listens on is open there (ECONNREFUSED)
	run text 2
	assert_output --partial "192.0.2.99 49983 EPERM"
	assert_output --partial "192.0.2.99 7402 ECONNREFUSED"
	assert_equal "$(cat "$T/hits")" ""
	run jq -r 'select(.type == "net" and .rule == "local_service" and .op == "egress") | "\(.address) \(.port) \(.service)"' "$AUDIT"
	assert_output --partial "192.0.2.99 49983 envd"
	run jq -r 'select(.type == "net" and .rule == "local_service" and .op == "connect") | "\(.address) \(.port) \(.service)"' "$AUDIT"
	assert_output --partial "192.0.2.99 49983 envd"
}

@test "network: the agent's own --http port is refused to its calls" {
	make_tokens alice
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$T/h0.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"local_services": []}}}}}
JSON
	cat >"$T/h1.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"local_services": ["127.0.0.1:$port"]}}}}}
JSON
	: >"$T/http.err"
	"$CW" serve --http "127.0.0.1:$port" --tokens "$T/tokens.json" --policy "$T/h0.json" \
		--state-dir "$STATE" --audit "$AUDIT" >"$T/http.out" 2>"$T/http.err" 3>&- </dev/null &
	HTTP_PID=$!
	URL="http://127.0.0.1:$port/mcp"
	for _ in $(seq 100); do grep -q "MCP on" "$T/http.err" && break; sleep 0.05; done
	sid=$(http_init "$TOKEN_alice")
	call=$(call_json 5 "$(try 127.0.0.1 "$port" 0.0.0.0 "$port")")
	run req POST "$TOKEN_alice" "$sid" "$call"
	assert_output 200
	run sse_data
	assert_output --partial "127.0.0.1 $port EPERM"
	assert_output --partial "0.0.0.0 $port EPERM"
	assert_equal "$(refusals | sort | tr '\n' ,)" "0.0.0.0 $port agent,127.0.0.1 $port agent,"
	http_stop
	# the twin: a policy that allows the port reaches the agent (which
	# answers HTTP, not "hi": the connect itself is what counts)
	rm -f "$AUDIT"
	"$CW" serve --http "127.0.0.1:$port" --tokens "$T/tokens.json" --policy "$T/h1.json" \
		--state-dir "$STATE" --audit "$AUDIT" >"$T/http.out" 2>"$T/http.err" 3>&- </dev/null &
	HTTP_PID=$!
	for _ in $(seq 100); do grep -q "MCP on" "$T/http.err" && break; sleep 0.05; done
	sid=$(http_init "$TOKEN_alice")
	call=$(call_json 6 "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", $port)); print(\"connected\")'")
	run req POST "$TOKEN_alice" "$sid" "$call"
	assert_output 200
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" connected
	http_stop
}

@test "network: link-local and metadata ranges are refused by default; without the default rules the same connects reach routing" {
	targets="169.254.169.254 80 169.254.1.1 80 169.254.170.2 80 fe80::1 80 fe80::a:b 443 fd00:ec2::254 80 fd00:ec2::23 53"
	cat >"$T/nodeny.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"deny": []}}}}}
JSON
	netmcp -- -- "$(call_json 1 "$(try "$targets")")" "$(call_json 2 "$(try udp 169.254.169.253 53 fe80::1 53)")"
	run text 1
	for a in 169.254.169.254 169.254.1.1 169.254.170.2 fe80::1 fe80::a:b fd00:ec2::254 fd00:ec2::23; do
		assert_output --partial "$a "
	done
	[ "$(grep -o 'EPERM' <<<"$output" | wc -l)" -eq 7 ] || fail "not all refused: $output"
	run text 2
	assert_output --partial "169.254.169.253 53 EPERM"
	assert_output --partial "fe80::1 53 EPERM"
	run jq -r 'select(.type == "net" and .rule == "deny") | .address' "$AUDIT"
	assert_equal "$(sort -u <<<"$output" | wc -l)" 8
	# the twin: with the rules removed, the kernel's routing answers (the
	# namespace has no route there), not the eBPF program
	rm -f "$AUDIT"
	netmcp -- --policy "$T/nodeny.json" -- "$(call_json 1 "$(try 169.254.1.1 80 fd00:ec2::23 53)")"
	run text 1
	refute_output --partial EPERM
	assert_output --partial "169.254.1.1 80 ENETUNREACH"
	assert_equal "$(jq -c 'select(.type == "net")' "$AUDIT")" ""
}

@test "network: a datagram to 0.0.0.0 is judged as the loopback it goes to" {
	cat >"$T/any.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"deny": ["127.0.0.1/32:7601"],
              "local_services": ["127.0.0.1:7601", "127.0.0.1:7602"]}}}}}
JSON
	netmcp 4,127.0.0.1,7601 4,127.0.0.1,7602 -- --policy "$T/any.json" -- \
		"$(call_json 1 "$(try udp 0.0.0.0 7601 ::ffff:0.0.0.0 7601 0.0.0.0 7602)")" \
		"$(call_json 2 "$(try 0.0.0.0 7601 0.0.0.0 7602)")"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	run text 1
	assert_output --partial "0.0.0.0 7601 EPERM"
	assert_output --partial "::ffff:0.0.0.0 7601 EPERM"
	assert_output --partial "0.0.0.0 7602 sent"
	run text 2
	assert_output --partial "0.0.0.0 7601 EPERM"
	assert_output --partial "0.0.0.0 7602 hi"
	for _ in $(seq 20); do grep -q "udp 7602" "$T/hits" && break; sleep 0.1; done
	assert_equal "$(sort "$T/hits" | tr '\n' ,)" "tcp 7602,udp 7602,"
	# recorded as written, refused by the deny rule on loopback (an
	# IPv4-mapped datagram meets the IPv4 hook)
	run jq -r 'select(.type == "net" and .verdict == "deny") | "\(.op) \(.address) \(.port) \(.rule)"' "$AUDIT"
	assert_equal "$(sort <<<"$output" | tr '\n' ,)" "connect 0.0.0.0 7601 deny,sendmsg 0.0.0.0 7601 deny,sendmsg 0.0.0.0 7601 deny,"
}

@test "network: a source route is refused as a socket option and as a datagram's ancillary data; the datagram without it is sent" {
	cat >"$T/srr.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"local_services": ["127.0.0.1:7501"]}}}}}
JSON
	cat >"$D/srr.py" <<'PY'
import errno, socket
def r(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
IP_OPTIONS, IP_RETOPTS, IPV6_RTHDR, IPV6_2292RTHDR = 4, 7, 57, 5
# NOP, then loose source route (length 7, pointer 4) through 127.0.0.1
lsrr = bytes([1, 0x83, 7, 4, 127, 0, 0, 1])
# a type 2 routing header (one address, ::1)
rth = bytes([0, 2, 2, 1, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, "::1")
dst = ("127.0.0.1", 7501)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("ip_options", r(lambda: s.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, lsrr)))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
print("tcp_ip_options", r(lambda: t.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, lsrr)))
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
print("rthdr", r(lambda: u.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, rth)))
print("rthdr2292", r(lambda: u.setsockopt(socket.IPPROTO_IPV6, IPV6_2292RTHDR, rth)))
print("retopts", r(lambda: s.sendmsg([b"x"], [(socket.IPPROTO_IP, IP_RETOPTS, lsrr)], 0, dst)))
print("plain", r(lambda: s.sendto(b"x", dst)))
PY
	chmod a+r "$D/srr.py"
	netmcp 4,127.0.0.1,7501 -- --policy "$T/srr.json" -- "$(call_json 1 "python3 $D/srr.py")"
	[ -s "$T/ready" ] || fail "no listeners: $(cat "$T/err")"
	assert_equal "$(tr '\n' , <<<"$(text 1 | jq -r .stdout)")" "ip_options EPERM,tcp_ip_options EPERM,rthdr EPERM,rthdr2292 EPERM,retopts EPERM,plain ok,"
	for _ in $(seq 20); do [ -s "$T/hits" ] && break; sleep 0.1; done
	# only the datagram without a source route arrived
	assert_equal "$(cat "$T/hits")" "udp 7501"
	# the ancillary source route: refused by the kernel itself where it
	# takes source routes from CAP_NET_RAW only (6.18), else dropped by
	# the egress program (test_bpfnet proves that drop as root)
	run jq -r 'select(.type == "net" and .rule == "source_route" and .op == "setsockopt") | .option' "$AUDIT"
	assert_equal "$(sort <<<"$output" | tr '\n' ,)" "IPV6_2292RTHDR,IPV6_RTHDR,IP_OPTIONS,IP_OPTIONS,"
	run jq -r 'select(.type == "net" and .rule == "source_route") | .reason' "$AUDIT"
	assert_output --partial "a source route sends the packet to a first hop other than the destination the rules judged"
}
