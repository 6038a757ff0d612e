#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Kernel layers end to end: Landlock, the per-call cgroup and the eBPF
# network programs, each blocked attempt paired with a twin that works.

load helpers

setup() {
	cw_setup
	# a duration unique to this test run, which no pattern another run
	# looks for matches: pgrep and pkill see only ours
	NAP="7002.$$"
	D=$(public_dir)
	mkdir -p "$D/rw" "$D/ro" "$D/noexec"
	echo secret >"$D/ro/secret"
	echo visible >"$D/ro/visible"
	chmod -R a+rwX "$D"
	# a sandbox writing only to $D/rw, executing only from /usr and /bin
	cat >"$T/fs.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "cwd": "$D",
  "filesystem": {"read": ["/"], "write": ["$D/rw"], "exec": ["/usr", "/bin"],
                 "deny": ["$D/ro/secret"]}}}}}
JSON
}

teardown() {
	for p in "${LISTENERS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
	# only this test's listeners: other test runs may have theirs
	pkill -f "cw-listener:$T" 2>/dev/null || true
	pkill -f "sleep $NAP" 2>/dev/null || true
	rm -rf "$D"
	# the shared-cgroup test's cgroups, once their processes are gone
	for cg in "${SHARED:-}" "${ALONE:-}"; do
		[ -n "$cg" ] && [ -d "$cg" ] || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -z "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.1
		done
		rmdir "$cg"/*/ "$cg" 2>/dev/null || true
	done
}

layer_on() {
	local j
	j=$("$CW" probe --json)
	[ "$(jq -r ".layers.$1" <<<"$j")" = true ] ||
		skip "layer $1 is off here: $(jq -r ".layers_off.$1" <<<"$j")"
}

# expect_cgroup FIELD VALUE: where the machine is known to have cgroup v2
# controllers (CW_EXPECT_CGROUP=v2, set by the test VM), the agent record's
# cgroup.FIELD must be VALUE: a fallback to v1 or to rlimits fails there.
expect_cgroup() {
	[ "${CW_EXPECT_CGROUP:-}" = v2 ] || return 0
	assert_equal "cgroup.$1=$(jq -c "select(.type == \"agent\") | .cgroup.$1" "$AUDIT" | head -1)" "cgroup.$1=$2"
}

@test "landlock: a write outside the write paths fails; inside works" {
	layer_on landlock
	mcp --policy "$T/fs.json" -- \
		"$(call_json 1 "echo x > $D/ro/new; echo rc=\$?")" \
		"$(call_json 2 "echo x > $D/rw/new && cat $D/rw/new")"
	run text 1
	assert_output --partial 'Permission denied'
	assert_output --partial 'rc=1'
	assert_equal "$(text 2 | jq -r .stdout)" x
	[ ! -e "$D/ro/new" ]
}

@test "landlock: a denied path cannot be read; its sibling can" {
	layer_on landlock
	mcp --policy "$T/fs.json" -- "$(call_json 1 "cat $D/ro/secret; cat $D/ro/visible")"
	run text 1
	assert_output --partial 'Permission denied'
	refute_output --partial '"stdout":"secret'
	assert_equal "$(text 1 | jq -r .stdout)" visible
}

@test "landlock: a binary copied to a non-exec path cannot run; the original can" {
	layer_on landlock
	mcp --policy "$T/fs.json" -- "$(call_json 1 "cp /bin/true $D/rw/mytrue && $D/rw/mytrue; echo rc=\$?; /bin/true && echo original-ok")"
	run text 1
	assert_output --partial 'rc=126'
	assert_output --partial 'original-ok'
}

@test "landlock: .. and symlinks do not widen access" {
	layer_on landlock
	mcp --policy "$T/fs.json" -- "$(call_json 1 "ln -s $D/ro $D/rw/link; echo y > $D/rw/link/evil; echo a=\$?; echo z > $D/rw/../ro/evil2; echo b=\$?")"
	run text 1
	assert_output --partial 'a=1'
	assert_output --partial 'b=1'
	[ ! -e "$D/ro/evil" ] && [ ! -e "$D/ro/evil2" ]
}

@test "landlock: a command cannot signal the agent" {
	layer_on landlock
	# the agent as the command's parent, in its pid namespace: without
	# the call's own, which hides the agent (namespaces.bats)
	CW_PROBE_DISABLE=call_namespaces \
		mcp --policy "$T/fs.json" -- "$(call_json 1 "kill -0 \$PPID 2>&1; echo rc=\$?; sleep 0.1 & kill \$! && echo own-child-ok")"
	run text 1
	assert_output --partial 'rc=1'
	assert_output --partial 'own-child-ok'
}

# start_listener NAME: a TCP listener on 127.0.0.1 that answers "hi"; its
# port goes to $T/port.NAME. It runs as root outside the calls, so a
# command reaches it only where network.local_services allows its port. Run in this shell (not in $(...)), so that
# teardown knows it, with bats' descriptors closed so bats never waits on it.
start_listener() {
	python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hi\n"); c.close()
' "cw-listener:$T" >"$T/port.$1" 2>/dev/null 3>&- </dev/null &
	LISTENERS+=($!)
	for _ in $(seq 300); do [ -s "$T/port.$1" ] && break; sleep 0.1; done
}

connect_cmd() {
	echo "python3 -c 'import socket,sys; s=socket.socket(); s.settimeout(3); s.connect((\"$1\", $2)); print(s.recv(10).decode().strip())'"
}

@test "bpf_net: a denied port is refused with EPERM; an allowed port connects" {
	layer_on bpf_net
	LISTENERS=()
	start_listener a
	start_listener b
	p1=$(cat "$T/port.a")
	p2=$(cat "$T/port.b")
	cat >"$T/net.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "allow", "deny": ["127.0.0.1/32:$p1"],
              "local_services": ["127.0.0.1:$p1", "127.0.0.1:$p2"]}}}}}
JSON
	mcp --policy "$T/net.json" -- "$(call_json 1 "$(connect_cmd 127.0.0.1 "$p1")")" "$(call_json 2 "$(connect_cmd 127.0.0.1 "$p2")")"
	run text 1
	assert_output --partial 'PermissionError'
	assert_equal "$(text 2 | jq -r .stdout)" hi
	# the denial is in the audit log
	run jq -c 'select(.type == "net")' "$AUDIT"
	assert_output --partial "\"port\":$p1"
	assert_output --partial '"verdict":"deny"'
}

@test "bpf_net: cloud metadata and raw sockets are refused under the default profile" {
	layer_on bpf_net
	mcp -- "$(call_json 1 "$(connect_cmd 169.254.169.254 80) 2>&1 | tail -1")" \
		"$(call_json 2 "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>&1 | tail -1")"
	run text 1
	assert_output --partial 'PermissionError'
	run text 2
	assert_output --partial 'PermissionError'
	# the results' audit summaries count what each layer refused
	assert_equal "$(structured 1 audit.denials.net)" 1
	assert_equal "$(structured 1 audit.denials.seccomp)" 0
	assert_equal "$(structured 2 audit.denials.seccomp)" 1
}

@test "bpf_net: the connection cap refuses the next connect" {
	layer_on bpf_net
	LISTENERS=()
	start_listener c
	p=$(cat "$T/port.c")
	cat >"$T/cap.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "allow", "max_connections": 2,
              "local_services": ["127.0.0.1:$p"]}}}}}
JSON
	c=$(connect_cmd 127.0.0.1 "$p")
	mcp --policy "$T/cap.json" -- "$(call_json 1 "$c; $c; $c 2>&1 | tail -1")"
	run text 1
	assert_output --partial 'hi'
	assert_output --partial 'PermissionError'
}

@test "cgroup: a fork bomb stops at the pids limit and the agent stays responsive" {
	layer_on cgroup
	cat >"$T/pids.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "timeout_s": 5, "resources": {"pids": 64}}}}}
JSON
	mcp --policy "$T/pids.json" -- "$(call_json 1 'b(){ b|b& }; b; sleep 2; echo survived')" '{"jsonrpc":"2.0","id":2,"method":"ping"}' "$(call_json 3 'echo after')"
	assert_equal "$(resp 2 | jq -c .result)" '{}'
	assert_equal "$(text 3 | jq -r .stdout)" after
	run jq -c 'select(.type == "limit")' "$AUDIT"
	assert_output --partial '"limit":"pids"'
	expect_cgroup pids '"v2"'
}

@test "cgroup: a memory hog is killed and reported" {
	layer_on cgroup
	cat >"$T/mem.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "resources": {"memory_mb": 64}}}}}
JSON
	mcp --policy "$T/mem.json" -- "$(call_json 1 "python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'; echo rc=\$?")"
	run text 1
	refute_output --partial '536870912'
	run jq -c 'select(.type == "limit")' "$AUDIT"
	assert_output --partial '"limit":"memory"'
	expect_cgroup memory '"v2"'
}

@test "cgroup: a double-forked daemon is killed when the call ends" {
	layer_on cgroup
	mcp -- "$(call_json 1 "(setsid sleep $NAP &) ; echo started")"
	assert_equal "$(text 1 | jq -r .stdout)" started
	sleep 0.5
	run pgrep -f "sleep $NAP"
	assert_failure
	expect_cgroup kill '"cgroup.kill"'
}

@test "cgroup: cpu_s stops a command that spins; one within its budget ends normally" {
	layer_on cgroup
	cat >"$T/cpu.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "timeout_s": 30, "resources": {"cpu_s": 1}}}}}
JSON
	mcp --policy "$T/cpu.json" -- "$(call_json 1 'while :; do :; done')" "$(call_json 2 'echo within')"
	# 137 = 128 + SIGKILL at RLIMIT_CPU's hard limit, long before the 30 s
	# timeout
	assert_equal "$(structured 1 exit_code)" 137
	[ "$(structured 1 duration_ms)" -lt 20000 ]
	assert_equal "$(text 2 | jq -r .stdout)" within
	run jq -c 'select(.type == "limit" and .limit == "timeout")' "$AUDIT"
	assert_output ''
	# the cpu controller is on for the calls (accounting; cpu_s is a total,
	# which cpu.max, a rate, cannot express)
	expect_cgroup controllers '["memory","pids","cpu"]'
}

@test "cgroup: an agent started in a cgroup other processes share makes one of its own" {
	layer_on cgroup
	v2=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[ -n "$v2" ] || fail "no cgroup2 mount, though layer cgroup is on"
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
	# beside this test's own cgroup, which holds processes (a cgroup
	# with processes cannot pass controllers to children of its own)
	parent=$v2${self%/*}
	[ "$self" = / ] && parent=$v2
	SHARED=$parent/cwtest-shared-$$ ALONE=$parent/cwtest-alone-$$
	mkdir "$SHARED" "$ALONE"
	sleep "$NAP" &
	echo $! >"$SHARED/cgroup.procs"
	# the agent starts in a cgroup (not moved by the VM's service
	# wrapper): first one it has alone, the twin, then the shared one
	for cg in "$ALONE" "$SHARED"; do
		printf '#!/bin/bash\necho $$ >"%s/cgroup.procs" || exit 99\nexec "%s" "$@"\n' \
			"$cg" "$ROOT/build/cmdwarden" >"$T/in-${cg##*/}"
		chmod +x "$T/in-${cg##*/}"
	done
	cat >"$T/mem.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "resources": {"memory_mb": 64, "pids": 64}}}}}
JSON
	hog="python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'; echo rc=\$?"
	CW=$T/in-${ALONE##*/} mcp --policy "$T/mem.json" -- "$(call_json 1 'cat /proc/self/cgroup')"
	assert_equal "$(jq -r 'select(.type == "agent") | .cgroup.moved_from' "$AUDIT")" null
	rm -f "$AUDIT"
	CW=$T/in-${SHARED##*/} mcp --policy "$T/mem.json" -- "$(call_json 1 "$hog")" "$(call_json 2 'cat /proc/self/cgroup')"
	agent=$(jq -c 'select(.type == "agent") | .cgroup' "$AUDIT")
	# memory and pids are enforced by a cgroup, not only by rlimits
	[ "$(jq -r .memory <<<"$agent")" != null ] || fail "no memory controller: $agent"
	[ "$(jq -r .pids <<<"$agent")" != null ] || fail "no pids controller: $agent"
	run text 1
	refute_output --partial '536870912'
	run jq -c 'select(.type == "limit")' "$AUDIT"
	assert_output --partial '"limit":"memory"'
	if ! grep -qw memory "$SHARED/cgroup.controllers"; then
		# cgroup v2 here has no memory controller (this machine's is
		# v1): the shared cgroup cannot block one, so nothing moves
		assert_equal "$(jq -r .moved_from <<<"$agent")" null
		return 0
	fi
	# v2 controllers: the agent moved to a sibling of its own and says so
	assert_equal "$(jq -r .moved_from <<<"$agent")" "$SHARED"
	assert_equal "$(jq -r .v2 <<<"$agent")" "$parent/cmdwarden"
	assert_equal "$(jq -r .memory,.pids <<<"$agent" | tr '\n' ' ')" "v2 v2 "
	jq -r '.notes[]' <<<"$agent" | grep -q "other processes share $SHARED, so the agent moved to $parent/cmdwarden" ||
		fail "no note of the move: $agent"
	assert_equal "$(text 2 | jq -r .stdout)" "0::${self%/*}/cmdwarden/calls/$(structured 2 invocation_id)"
	# the other process stayed; the cgroup made for the agent is gone
	[ -n "$(cat "$SHARED/cgroup.procs")" ] || fail "the process sharing the cgroup moved"
	[ ! -d "$parent/cmdwarden" ] || fail "$parent/cmdwarden is left behind"
}

@test "cgroup: a policy requiring the cgroup layer refuses to start where memory and pids would be only rlimits" {
	layer_on cgroup
	cat >"$T/req.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"require_layers":["cgroup"]}}}}
JSON
	# the twin: here it starts, and memory and pids are cgroup limits
	run "$CW" serve --policy "$T/req.json" --state-dir "$STATE" --audit "$AUDIT" </dev/null
	assert_success
	v2=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	cat >"$T/nowhere" <<'SH'
#!/bin/bash
# $1: a cgroup v2 directory to start in, or empty; then cmdwarden's command
set -e
if [ -n "$1" ]; then
	# inside a cgroup namespace rooted at a cgroup shared with another
	# process: no ancestor is visible to move to
	echo $$ >"$1/cgroup.procs"
	shift
	exec unshare -m -C sh -c 'umount -l "$0" && mount -t cgroup2 cgroup2 "$0" && exec "$@"' "$(findmnt -n -t cgroup2 -o TARGET | head -n 1)" "$@"
fi
shift
# cgroup v2 without memory and pids (this machine's are v1): hide the v1
# hierarchies
exec unshare -m sh -c 'for m in $(findmnt -n -t cgroup -o TARGET); do umount "$m"; done; exec "$@"' sh "$@"
SH
	chmod +x "$T/nowhere"
	cg=
	if grep -qw memory "$v2/cgroup.controllers"; then
		self=$(sed -n 's/^0:://p' /proc/self/cgroup)
		SHARED=$v2${self%/*}/cwtest-req-$$
		mkdir "$SHARED"
		sleep "$NAP" &
		echo $! >"$SHARED/cgroup.procs"
		cg=$SHARED
	fi
	run "$T/nowhere" "$cg" "$ROOT/build/cmdwarden" serve --policy "$T/req.json" --state-dir "$STATE" --audit "$T/a2.jsonl" </dev/null
	assert_failure
	assert_output --regexp 'cgroup: the policy requires layer "cgroup", but no cgroup the agent can be in has the (memory|pids) controller: '
	# where it moved to nothing, it says why
	[ -z "$cg" ] || assert_output --partial "other processes share"
}

@test "cgroup: no call cgroup is left behind" {
	layer_on cgroup
	mcp -- "$(call_json 1 'sleep 0.1 & echo x')" "$(call_json 2 true)"
	run jq -r 'select(.type == "agent") | .cgroup.calls.v2 // empty' "$AUDIT"
	calls=$output
	[ -n "$calls" ] || fail "the agent record names no calls cgroup"
	# Only this agent's calls: other agents on the machine may share the
	# directory while they run.
	for inv in $(jq -r 'select(.type == "launch") | .invocation' "$AUDIT"); do
		[ ! -d "$calls/$inv" ] || fail "$calls/$inv is left behind"
	done
	assert_equal "$(jq -r 'select(.type == "launch") | .invocation' "$AUDIT" | wc -l)" 2
}

@test "bpf_net: UDP to a denied address fails; to an allowed one it is sent" {
	layer_on bpf_net
	cat >"$T/udp.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "allow", "deny": ["127.0.0.2/32"]}}}}}
JSON
	send="python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print(s.sendto(b\"x\", (sys.argv[1], 9999)))'"
	mcp --policy "$T/udp.json" -- "$(call_json 1 "$send 127.0.0.2 2>&1 | tail -1")" "$(call_json 2 "$send 127.0.0.1")"
	run text 1
	assert_output --partial 'PermissionError'
	assert_equal "$(text 2 | jq -r .stdout)" 1
	run jq -c 'select(.type == "net" and .op == "sendmsg")' "$AUDIT"
	assert_output --partial '"address":"127.0.0.2"'
}

@test "bpf_net: the egress budget cuts a transfer that exceeds it; a small one passes" {
	layer_on bpf_net
	# a sink that writes how many bytes each connection delivered
	python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.settimeout(3); n = 0
    try:
        while True:
            d = c.recv(65536)
            if not d: break
            n += len(d)
    except Exception: pass
    open(sys.argv[1], "a").write("%d\n" % n); c.close()
' "$T/received" "cw-listener:$T" >"$T/port.sink" 2>/dev/null 3>&- </dev/null &
	LISTENERS=($!)
	for _ in $(seq 300); do [ -s "$T/port.sink" ] && break; sleep 0.1; done
	p=$(cat "$T/port.sink")
	[ -n "$p" ] || fail "the sink did not start"
	cat >"$T/egress.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "allow", "max_egress_bytes": 262144,
              "local_services": ["127.0.0.1:$p"]}}}}}
JSON
	xfer() { echo "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", $p)); s.settimeout(3)
try: s.sendall(b\"x\" * $1)
except Exception as e: print(type(e).__name__)
s.close()'"; }
	# The agent stays up while the sink waits: what a command queued in
	# its socket before exiting must stay under the budget too.
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 "$(xfer 4096)")" "$(call_json 2 "$(xfer 4194304)")"
		for _ in $(seq 150); do [ "$(cat "$T/received" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.2; done
	} | serve --policy "$T/egress.json"
	[ -s "$T/received" ] ||
		fail "the sink got nothing (alive: $(kill -0 "${LISTENERS[0]}" 2>&1 && echo yes)): $(jq -c 'select(.type == "exit" or .type == "limit" or .type == "net") | del(.landlock)' "$AUDIT") $(cat "$T/out")"
	# the calls run at once: the sink lists them in the order it took them
	assert_equal "$(wc -l <"$T/received")" 2
	assert_equal "$(sort -n "$T/received" | sed -n 1p)" 4096
	[ "$(sort -n "$T/received" | sed -n 2p)" -lt 4194304 ] ||
		fail "the whole 4 MiB arrived: $(jq -c 'select(.type == "exit" or .type == "limit" or .type == "launch") | del(.landlock)' "$AUDIT") $(cat "$T/out")"
	run jq -c 'select(.type == "limit" and .limit == "max_egress_bytes")' "$AUDIT"
	assert_output --partial '"max":262144'
}

@test "bpf_net: with audit_allowed, admitted connections are recorded too" {
	layer_on bpf_net
	LISTENERS=()
	start_listener d
	p=$(cat "$T/port.d")
	for a in false true; do
		cat >"$T/aa-$a.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "network": {"default": "allow", "audit_allowed": $a,
              "local_services": ["127.0.0.1:$p"]}}}}}
JSON
	done
	mcp --policy "$T/aa-false.json" -- "$(call_json 1 "$(connect_cmd 127.0.0.1 "$p")")"
	assert_equal "$(jq -c 'select(.type == "net")' "$AUDIT" | wc -l)" 0
	mcp --policy "$T/aa-true.json" -- "$(call_json 1 "$(connect_cmd 127.0.0.1 "$p")")"
	assert_equal "$(text 1 | jq -r .stdout)" hi
	run jq -c 'select(.type == "net" and .op == "connect")' "$AUDIT"
	assert_output --partial '"verdict":"allow"'
	assert_output --partial "\"port\":$p"
}
