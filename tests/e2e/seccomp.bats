#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Every group of the default seccomp profile is blocked for a command run
# through cmdwarden, and the same calls get past with the profile off, so it
# is the filter that blocks them. Commands run as root here so that no
# missing capability can be mistaken for the filter.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cw_setup
	need_sysprobe
}

teardown() {
	if [ -n "${D:-}" ]; then rm -rf "$D"; fi
	public_dirs_remove
}

# exec_policy FILE DIR [FIELDS]: a policy at FILE whose commands may also
# execute what is in DIR, with FIELDS (JSON members and a trailing comma)
# added to its sandbox section.
exec_policy() {
	cat >"$1" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{${3:-}
  "filesystem":{"exec":["/usr","/bin","$2"]}}}}}
JSON
}

# probe_via PROFILE: runs sysprobe as root through cmdwarden with the
# seccomp profile given ("default" or "none"); Landlock may execute it.
probe_via() {
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root",
  "seccomp":{"profile":"$1"},
  "filesystem":{"exec":["/usr","/bin","$(dirname "$PROBE")"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 "$PROBE")"
	text 1 | jq -r .stdout >"$T/probe"
	# one line per syscall of the profile: the probe really ran
	[ "$(grep -c . "$T/probe")" -ge 40 ] || fail "sysprobe did not run: $(cat "$T/out")"
}

@test "every syscall of every default group is refused under the filter" {
	probe_via default
	cat "$T/probe"
	# clone3 answers ENOSYS so that libc falls back to clone
	run awk '$2 != "clone3" && $3 != "EPERM" && $3 != "SKIPPED"' "$T/probe"
	assert_output ''
	assert_equal "$(awk '$2 == "clone3" { print $3 }' "$T/probe")" ENOSYS
	# at least the groups the profile promises
	for g in ptrace bpf kernel_modules mount namespaces keyring io_uring \
		userfaultfd swap reboot clock accounting handles socket_families \
		personality legacy hostname; do
		grep -q "^$g " "$T/probe" || fail "group $g missing"
	done
}

@test "the same syscalls get past with the profile off" {
	probe_via none
	cat "$T/probe"
	# Without the filter the kernel itself answers (EINVAL, EFAULT, ...).
	run awk '$3 == "EPERM"' "$T/probe"
	assert_output ''
}

@test "unshare -U fails with EPERM while an ordinary command works" {
	mcp -- "$(call_json 1 'unshare -U true; echo rc=$?')" "$(call_json 2 'echo works && ls / >/dev/null && echo listed')"
	run text 1
	assert_output --partial 'Operation not permitted'
	assert_output --partial 'rc=1'
	assert_equal "$(text 2 | jq -r .stdout)" "$(printf 'works\nlisted')"
}

@test "unshare -U works as root without cmdwarden (the twin)" {
	run unshare -U true
	assert_success
}

@test "a 32-bit syscall from a 64-bit process is killed" {
	[ "$(uname -m)" = x86_64 ] || skip "x86_64 only"
	x32="$ROOT/build/tests/x32call"
	[ -x "$x32" ] || fail "x32call is not built; run make check"
	D=$(public_dir)
	cp "$x32" "$D/x32"
	exec_policy "$T/p.json" "$D"
	mcp --policy "$T/p.json" -- "$(call_json 1 "$D/x32; echo rc=\$?")"
	# bash reports a process killed by SIGSYS as status 159
	assert_equal "$(text 1 | jq -r .stdout)" "rc=159"
}

@test "a policy's own seccomp deny list is enforced" {
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"seccomp":{"deny":["uname"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 'uname; echo rc=$?')" "$(call_json 2 'echo fine')"
	run text 1
	assert_output --partial 'rc=1'
	assert_equal "$(text 2 | jq -r .stdout)" fine
}

@test "an unknown syscall name in a policy is a load error" {
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"seccomp":{"deny":["no_such_call"]}}}}}
JSON
	run "$CW" check --policy "$T/p.json"
	assert_failure
	assert_output --partial 'no_such_call'
}

@test "what the launcher calls after the filter cannot be denied; denying close still launches" {
	cat >"$T/execve.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"seccomp":{"deny":["execve"]}}}}}
JSON
	run "$CW" check --policy "$T/execve.json"
	assert_failure
	assert_output --partial '"execve" in deny[0] cannot be denied'
	# close used to hang the launch: the child closed the listener after
	# the filter, and the agent answered no denial before the exec.
	cat >"$T/close.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"seccomp":{"deny":["close"]}}}}}
JSON
	# (the shell starts, and its loader is refused the close)
	# (stderr apart: exec warns there about layers this kernel lacks)
	run --separate-stderr timeout 60 "$CW" exec --state-dir "$STATE" --audit "$AUDIT" --policy "$T/close.json" -- true
	assert_success
	assert_equal "$(jq -r .exit_code <<<"$output")" 127
	[[ "$(jq -r .stderr <<<"$output")" == *"cannot close file descriptor: Operation not permitted"* ]]
	run jq -r 'select(.type == "seccomp") | "\(.comm) \(.syscall)"' "$AUDIT"
	assert_line "bash close"
}

@test "packet sockets are refused unless network.raw_sockets is true, even for root" {
	pkt="python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print(\"opened\")' 2>&1 | tail -1"
	for raw in false true; do
		cat >"$T/raw-$raw.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root",
  "network":{"raw_sockets":$raw}}}}}
JSON
	done
	raw="python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print(\"opened\")' 2>&1 | tail -1"
	mcp --policy "$T/raw-false.json" -- "$(call_json 1 "$pkt")" "$(call_json 2 "$raw")"
	assert_equal "$(text 1 | jq -r .stdout)" 'PermissionError: [Errno 1] Operation not permitted'
	assert_equal "$(text 2 | jq -r .stdout)" 'PermissionError: [Errno 1] Operation not permitted'
	mcp --policy "$T/raw-true.json" -- "$(call_json 1 "$pkt")" "$(call_json 2 "$raw")"
	assert_equal "$(text 1 | jq -r .stdout)" opened
	assert_equal "$(text 2 | jq -r .stdout)" opened
}

@test "a denied syscall leaves a seccomp record naming it; the legitimate twin leaves none" {
	mcp -- "$(call_json 1 'unshare -U true; echo rc=$?')" "$(call_json 2 'echo works && ls / >/dev/null && echo listed')"
	inv1=$(structured 1 invocation_id)
	inv2=$(structured 2 invocation_id)
	assert_equal "$(text 1 | jq -r .stdout)" "rc=1"
	run jq -c --arg inv "$inv1" 'select(.type == "seccomp" and .invocation == $inv)' "$AUDIT"
	[ "$(wc -l <<<"$output")" -ge 1 ] || fail "no seccomp record: $(cat "$AUDIT")"
	rec=$(head -1 <<<"$output")
	assert_equal "$(jq -r .syscall <<<"$rec")" unshare
	assert_equal "$(jq -r .arch <<<"$rec")" x86_64
	assert_equal "$(jq -r .comm <<<"$rec")" unshare
	assert_equal "$(jq -r .action <<<"$rec")" EPERM
	# CLONE_NEWUSER in the first argument
	assert_equal "$(jq -r '.args[0]' <<<"$rec")" 0x10000000
	[ "$(jq -r .pid <<<"$rec")" -gt 1 ]
	run jq -c --arg inv "$inv1" 'select(.type == "exit" and .invocation == $inv) | .seccomp' "$AUDIT"
	assert_equal "$(jq -r .audited <<<"$output")" true
	assert_equal "$(jq -r .denied <<<"$output")" "$(jq -r .recorded <<<"$output")"
	assert_equal "$(jq -r .suppressed <<<"$output")" 0
	# the result's audit summary counts it
	assert_equal "$(structured 1 audit.denials.seccomp)" "$(jq -r .denied <<<"$output")"
	assert_equal "$(structured 2 audit.denials.seccomp)" 0
	# the twin ran and was refused nothing
	assert_equal "$(text 2 | jq -r .stdout)" "$(printf 'works\nlisted')"
	assert_equal "$(jq -c --arg inv "$inv2" 'select(.type == "seccomp" and .invocation == $inv)' "$AUDIT")" ""
	assert_equal "$(jq -r --arg inv "$inv2" 'select(.type == "exit" and .invocation == $inv) | .seccomp.denied' "$AUDIT")" 0
	run "$CW" audit stats --json "$AUDIT"
	assert_equal "$(jq -r .seccomp.denied <<<"$output")" "$(jq -s '[.[] | select(.type == "exit") | .seccomp.denied] | add' "$AUDIT")"
}

@test "every syscall the profile refuses is recorded under its own name" {
	probe_via default
	inv=$(structured 1 invocation_id)
	# the probe's refused calls, as it saw them (clone3 answers ENOSYS unrecorded)
	awk '$3 == "EPERM" { print $2 }' "$T/probe" | sort >"$T/refused"
	jq -r --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv) | .syscall' "$AUDIT" | sort >"$T/recorded"
	[ "$(wc -l <"$T/refused")" -ge 40 ] || fail "the probe saw few refusals"
	run diff "$T/refused" "$T/recorded"
	assert_success
}

# The floods' size: CW_E2E_FLOOD overrides it where the CPU is emulated
# (make vmtest), since there the count matters, not the rate.
FLOOD=${CW_E2E_FLOOD:-100000}

@test "a flood of 100,000 denied syscalls completes, is counted, and the agent serves the next call" {
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root","timeout_s":30,
  "filesystem":{"exec":["/usr","/bin","$(dirname "$PROBE")"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 "$PROBE --flood $FLOOD unshare")" "$(call_json 2 'echo after')"
	assert_equal "$(text 1 | jq -r .stdout)" "flood unshare $FLOOD EPERM $FLOOD"
	assert_equal "$(structured 1 timed_out)" false
	inv=$(structured 1 invocation_id)
	# the first ones in full, the rest counted: none lost
	assert_equal "$(jq -c --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv)' "$AUDIT" | wc -l)" 64
	run jq -c --arg inv "$inv" 'select(.type == "exit" and .invocation == $inv) | .seccomp' "$AUDIT"
	assert_equal "$output" "{\"audited\":true,\"denied\":$FLOOD,\"recorded\":64,\"suppressed\":$((FLOOD - 64))}"
	# the next call is served as usual
	assert_equal "$(text 2 | jq -r .stdout)" after
	run "$CW" audit verify "$AUDIT"
	assert_success
	run "$CW" audit stats --json "$AUDIT"
	assert_equal "$(jq -c .seccomp <<<"$output")" "{\"denied\":$FLOOD,\"recorded\":64,\"suppressed\":$((FLOOD - 64))}"
}

@test "a flood in one agent does not hold up a call in another sharing the log" {
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root","timeout_s":30,
  "filesystem":{"exec":["/usr","/bin","$(dirname "$PROBE")"]}}}}}
JSON
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 "$PROBE --flood $((FLOOD * 3)) unshare")"; } |
		"$CW" serve --policy "$T/p.json" --state-dir "$STATE" --audit "$AUDIT" >"$T/flood.out" 2>"$T/flood.err" 3>&- &
	fpid=$!
	# wait until the flood is under way
	for _ in $(seq 1 100); do
		grep -q '"type":"seccomp"' "$AUDIT" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '"type":"seccomp"' "$AUDIT" || fail "the flood did not start"
	mcp --policy "$T/p.json" -- "$(call_json 1 'echo meanwhile')"
	assert_equal "$(text 1 | jq -r .stdout)" meanwhile
	wait "$fpid"
	out=$(jq -r 'select(.id == 1) | .result.structuredContent.stdout' "$T/flood.out")
	[ "$out" = "flood unshare $((FLOOD * 3)) EPERM $((FLOOD * 3))" ] ||
		fail "the flood's call: $(jq -c 'select(.id == 1) | .result.structuredContent // .' "$T/flood.out"); agent: $(cat "$T/flood.err")"
	run "$CW" audit verify "$AUDIT"
	assert_success
}

# sockprobe DIR: a script that opens each socket named in its arguments
# and prints "NAME opened" or "NAME ERRNO"; pair_* names are socketpairs.
sockprobe() {
	cat >"$1/sockprobe.py" <<'PY'
import errno, socket, sys
KINDS = {
    "unix": (socket.AF_UNIX, socket.SOCK_STREAM, 0),
    "inet": (socket.AF_INET, socket.SOCK_STREAM, 0),
    "inet6": (socket.AF_INET6, socket.SOCK_DGRAM, 0),
    "netlink_route": (socket.AF_NETLINK, socket.SOCK_RAW, 0),
    "netlink_sock_diag": (socket.AF_NETLINK, socket.SOCK_RAW, 4),
    "netlink_audit": (socket.AF_NETLINK, socket.SOCK_RAW, 9),
    "vsock": (40, socket.SOCK_STREAM, 0),
    "alg": (38, socket.SOCK_SEQPACKET, 0),
    "xdp": (44, socket.SOCK_RAW, 0),
    "packet": (17, socket.SOCK_DGRAM, 0),
    "pair_unix": (socket.AF_UNIX, socket.SOCK_STREAM, 0),
    "pair_vsock": (40, socket.SOCK_STREAM, 0),
}
for name in sys.argv[1:]:
    try:
        if name.startswith("pair_"):
            for s in socket.socketpair(*KINDS[name]):
                s.close()
        else:
            socket.socket(*KINDS[name]).close()
        print(name, "opened")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
PY
	chmod 0644 "$1/sockprobe.py"
}

REFUSED_SOCKETS="netlink_sock_diag netlink_audit vsock alg xdp packet pair_vsock"
ORDINARY_SOCKETS="unix inet inet6 netlink_route pair_unix"

@test "socket families outside the default set are refused and audited by family; the ordinary ones, ip addr and getaddrinfo work" {
	D=$(public_dir)
	sockprobe "$D"
	mcp -- "$(call_json 1 "python3 $D/sockprobe.py $REFUSED_SOCKETS")" \
		"$(call_json 2 "python3 $D/sockprobe.py $ORDINARY_SOCKETS")" \
		"$(call_json 3 "ip -4 addr show dev lo && python3 -c 'import socket; print(sorted({a[4][0] for a in socket.getaddrinfo(\"localhost\", 80, socket.AF_INET)}))'")"
	text 1 | jq -r .stdout
	# every one refused by the filter...
	for k in $REFUSED_SOCKETS; do
		assert_equal "$(text 1 | jq -r .stdout | awk -v k="$k" '$1 == k { print $2 }')" EPERM
	done
	# ...where the kernel itself, as the same account, answers otherwise
	run runuser -u "$(sandbox_account)" -- python3 "$D/sockprobe.py" $REFUSED_SOCKETS
	echo "without cmdwarden: $output"
	for k in netlink_sock_diag netlink_audit vsock alg pair_vsock; do
		[ "$(awk -v k="$k" '$1 == k { print $2 }' <<<"$output")" != EPERM ] ||
			fail "$k is refused without cmdwarden too"
	done
	# each refusal is a seccomp record naming the family (and protocol)
	inv=$(structured 1 invocation_id)
	run jq -r --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv) | "\(.syscall) \(.family) \(.protocol)"' "$AUDIT"
	assert_line "socket AF_NETLINK NETLINK_SOCK_DIAG"
	assert_line "socket AF_NETLINK NETLINK_AUDIT"
	assert_line "socket AF_VSOCK null"
	assert_line "socket AF_ALG null"
	assert_line "socket AF_XDP null"
	assert_line "socket AF_PACKET null"
	assert_line "socketpair AF_VSOCK null"
	# the twins: opened, and nothing refused
	assert_equal "$(text 2 | jq -r .stdout)" "$(printf '%s opened\n' $ORDINARY_SOCKETS)"
	assert_equal "$(text 3 | jq -r .exit_code)" 0
	[[ "$(text 3 | jq -r .stdout)" == *"inet 127.0.0.1/8"* ]] || fail "ip addr: $(text 3)"
	[[ "$(text 3 | jq -r .stdout)" == *"['127.0.0.1']"* ]] || fail "getaddrinfo: $(text 3)"
	for id in 2 3; do
		inv=$(structured $id invocation_id)
		assert_equal "$(jq -c --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv)' "$AUDIT")" ""
	done
}

@test "a family the policy lists in seccomp.socket_families opens as it does without cmdwarden; the others stay refused" {
	D=$(public_dir)
	sockprobe "$D"
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root",
  "seccomp":{"socket_families":["AF_VSOCK","AF_ALG","AF_NETLINK:NETLINK_SOCK_DIAG"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 "python3 $D/sockprobe.py vsock alg netlink_sock_diag netlink_audit xdp netlink_route")"
	text 1 | jq -r .stdout
	# as root without cmdwarden: the kernel's own answers (EAFNOSUPPORT
	# where this kernel lacks the family)
	run python3 "$D/sockprobe.py" vsock alg netlink_sock_diag
	assert_success
	assert_equal "$(text 1 | jq -r .stdout | head -3)" "$output"
	assert_equal "$(text 1 | jq -r .stdout | awk '$1 == "netlink_sock_diag" { print $2 }')" opened
	# not listed: refused
	assert_equal "$(text 1 | jq -r .stdout | sed -n 4,6p)" "$(printf 'netlink_audit EPERM\nxdp EPERM\nnetlink_route opened')"
	inv=$(structured 1 invocation_id)
	run jq -r --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv) | "\(.family) \(.protocol)"' "$AUDIT"
	assert_output "$(printf 'AF_NETLINK NETLINK_AUDIT\nAF_XDP null')"
}

@test "a bad socket family in a policy is a load error naming the entry" {
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "seccomp":{"socket_families":["AF_VSOCK","AF_NETLINK:NETLINK_SOCKDIAG"]}}}}}
JSON
	run "$CW" check --policy "$T/p.json"
	assert_failure
	assert_output --partial 'sandbox.seccomp.socket_families[1]: "AF_NETLINK:NETLINK_SOCKDIAG": unknown netlink protocol'
}

@test "personality: ADDR_NO_RANDOMIZE and PER_LINUX32 are refused and audited; the query and PER_LINUX work; seccomp.allow lifts it" {
	[ "$(uname -m)" = x86_64 ] || skip "setarch's personas are x86_64 ones here"
	pers="python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); print(hex(libc.personality(0xffffffff)), libc.personality(0), ctypes.get_errno())'"
	mcp -- "$(call_json 1 'setarch -R cat /proc/self/personality; echo rc=$?; setarch linux32 true; echo rc=$?')" \
		"$(call_json 2 "setarch x86_64 cat /proc/self/personality && $pers")"
	run text 1
	assert_output --partial 'Operation not permitted'
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf 'rc=1\nrc=1')"
	inv=$(structured 1 invocation_id)
	run jq -r --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv) | "\(.syscall) \(.args[0])"' "$AUDIT"
	assert_line "personality 0x40000"
	assert_line "personality 0x8"
	# the twin: PER_LINUX and the query, nothing refused
	assert_equal "$(text 2 | jq -r .stdout)" "$(printf '00000000\n0x0 0 0')"
	inv=$(structured 2 invocation_id)
	assert_equal "$(jq -c --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv)' "$AUDIT")" ""
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"seccomp":{"allow":["personality"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 'setarch -R cat /proc/self/personality')"
	assert_equal "$(text 1 | jq -r .stdout)" 00040000
}

@test "modify_ldt and uselib are refused and audited; an LDT entry is written where the policy allows modify_ldt" {
	[ "$(uname -m)" = x86_64 ] || skip "modify_ldt is x86 only"
	D=$(public_dir)
	cp "$PROBE" "$D/sysprobe"
	exec_policy "$T/p.json" "$D"
	exec_policy "$T/allow.json" "$D" '"seccomp":{"allow":["modify_ldt"]},'
	mcp --policy "$T/p.json" -- "$(call_json 1 "$D/sysprobe --ldt; $D/sysprobe legacy")"
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf 'modify_ldt EPERM\nlegacy modify_ldt EPERM\nlegacy uselib EPERM')"
	inv=$(structured 1 invocation_id)
	run jq -r --arg inv "$inv" 'select(.type == "seccomp" and .invocation == $inv) | .syscall' "$AUDIT"
	assert_output "$(printf 'modify_ldt\nmodify_ldt\nuselib')"
	# the same write, allowed by the policy, and outside cmdwarden
	mcp --policy "$T/allow.json" -- "$(call_json 1 "$D/sysprobe --ldt")"
	assert_equal "$(text 1 | jq -r .stdout)" "modify_ldt OK"
	run "$D/sysprobe" --ldt
	assert_output "modify_ldt OK"
}
