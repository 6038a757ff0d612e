#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Every group of the default seccomp profile is blocked for a command run
# through cmdwarden, and the same calls get past with the profile off, so it
# is the filter that blocks them. Commands run as root here so that no
# missing capability can be mistaken for the filter.

load helpers

PROBE="$ROOT/build/tests/sysprobe"

setup() {
	cw_setup
	[ -x "$PROBE" ] || fail "sysprobe is not built; run make check"
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
		userfaultfd swap reboot clock accounting handles; do
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
	cat >"$T/x32.c" <<'C'
#include <unistd.h>
#include <sys/syscall.h>
int main(void) { return syscall(0x40000000 | SYS_getpid) < 0 ? 1 : 0; }
C
	d=$(public_dir)
	gcc -O1 -o "$d/x32" "$T/x32.c"
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "filesystem":{"exec":["/usr","/bin","$d"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 "$d/x32; echo rc=\$?")"
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
