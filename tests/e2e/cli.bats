#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The command line: check, eval, exec, version, help.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cw_setup
}

teardown() {
	if [ -n "${D:-}" ]; then rm -rf "$D"; fi
}

@test "check accepts the seed policy" {
	run "$CW" check --policy "$ROOT/policies/e2b-run-command.json"
	assert_success
	assert_output --partial ': ok'
}

@test "check accepts every shipped policy" {
	for p in "$ROOT"/policies/*.json; do
		run "$CW" check --policy "$p"
		assert_success
	done
}

@test "check lists every error with file, position and path" {
	cat >"$T/bad.json" <<'JSON'
{
  "version": "1",
  "default": "deny",
  "tools": {
    "run_command": {
      "limits": [ { "counter": "c", "window": "minutes", "max": 1 } ],
      "actoin": "allow"
    }
  }
}
JSON
	run "$CW" check --policy "$T/bad.json"
	assert_failure 1
	assert_output --partial 'tools.run_command.limits[0].window'
	assert_output --partial 'minutes'
	assert_output --partial 'actoin'
	assert_output --partial "$T/bad.json"
	assert_output --partial '2 errors'
}

@test "check reports a JSON syntax error with line and column" {
	printf '{\n  "version": "1",\n  "default": deny\n}\n' >"$T/syntax.json"
	run "$CW" check --policy "$T/syntax.json"
	assert_failure 1
	assert_output --partial "$T/syntax.json:3:"
}

@test "check on a missing file names it" {
	run "$CW" check --policy "$T/none.json"
	assert_failure
	assert_output --partial "$T/none.json"
}

@test "eval prints the verdict and the deciding rule without running anything" {
	D=$(public_dir)
	run "$CW" eval --policy "$ROOT/tests/e2e/policies/args.json" --tool run_command --args "{\"command\":\"rm -rf $D\"}"
	assert_failure 3
	assert_equal "$(jq -r .verdict <<<"$output")" deny
	assert_equal "$(jq -r .rule <<<"$output")" 'tools.run_command.deny_if[0]'
	[ -d "$D" ]
	run "$CW" eval --tool run_command --args '{"command":"ls"}'
	assert_success
	assert_equal "$(jq -r .verdict <<<"$output")" allow
	assert_equal "$(jq -r '.counters[0]' <<<"$output")" 'run_command_rate|grant|local'
}

@test "eval does not change counters" {
	for i in $(seq 1 15); do
		run "$CW" eval --state-dir "$STATE" --tool run_command --args '{"command":"true"}'
		assert_success
	done
	run "$CW" exec --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_success
}

@test "eval sees the counters of a state directory" {
	# An hour's window, so a slow (emulated) machine cannot outlast it.
	policy=$ROOT/tests/e2e/policies/grant-limit.json
	run "$CW" eval --policy "$policy" --state-dir "$STATE" --tool run_command --args '{"command":"true"}'
	assert_success
	for i in 1 2; do
		"$CW" exec --policy "$policy" --state-dir "$STATE" --audit "$AUDIT" -- true >/dev/null
	done
	run "$CW" eval --policy "$policy" --state-dir "$STATE" --tool run_command --args '{"command":"true"}'
	assert_failure 3
	assert_equal "$(jq -r .verdict <<<"$output")" rate_limited
	[ "$(jq -r .retry_after_ms <<<"$output")" -gt 0 ]
}

@test "eval rejects bad --args" {
	run "$CW" eval --tool run_command --args 'not json'
	assert_failure 1
	assert_output --partial -- '--args must be a JSON object'
}

@test "exec runs a command and prints the E2B-shaped result" {
	run --separate-stderr "$CW" exec --state-dir "$STATE" --audit "$AUDIT" -- echo hello '&&' exit 4
	assert_success
	assert_equal "$(jq -r .stdout <<<"$output")" hello
	assert_equal "$(jq -r .exit_code <<<"$output")" 4
}

@test "bad values of the tracing options are refused by name; good ones run" {
	run "$CW" exec --trace-overflow wait --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_failure
	assert_output --partial '--trace-overflow wants pause or kill, got "wait"'
	# events are not dropped by choice any more, and the refusal says so
	run "$CW" exec --trace-overflow drop --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_failure
	assert_output --partial 'got "drop" (events are no longer dropped: kill does not pause'
	run "$CW" exec --trace-ringbuf 0 --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_failure
	assert_output --partial '--trace-ringbuf wants KiB from 1 to'
	[ ! -e "$AUDIT" ] || fail "a refused command line wrote to the audit log"
	for v in pause kill; do
		run --separate-stderr "$CW" exec --trace-overflow "$v" --state-dir "$STATE" --audit "$AUDIT" -- echo ran
		assert_success
		assert_equal "$(jq -r .stdout <<<"$output")" ran
	done
}

@test "exec warns about each layer it runs without, as serve does" {
	cat >"$T/files.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "files": {"max_files_written": 5}}}}}
JSON
	export CW_PROBE_DISABLE=bpf_tracepoint
	run --separate-stderr "$CW" exec --policy "$T/files.json" --state-dir "$STATE" --audit "$AUDIT" -- echo ran
	assert_success
	assert_equal "$(jq -r .stdout <<<"$output")" ran
	grep -q 'warning: .*layer "bpf_trace" is not available and commands run without it: .*; the policy.s sandbox.files limits are not enforced' <<<"$stderr" ||
		fail "no warning that sandbox.files goes unenforced: $stderr"
	# the same warnings as serve's
	"$CW" serve --policy "$T/files.json" --state-dir "$STATE" --audit "$AUDIT" </dev/null 2>"$T/serve.err" >/dev/null
	assert_equal "$(grep 'is not available' <<<"$stderr")" "$(grep 'is not available' "$T/serve.err")"
	# a policy without file limits is told only that the layer is off
	run --separate-stderr "$CW" exec --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_success
	grep -q 'layer "bpf_trace" is not available' <<<"$stderr" || fail "no layer warning: $stderr"
	! grep -q 'sandbox.files' <<<"$stderr" || fail "warned about file limits the policy does not set: $stderr"
	unset CW_PROBE_DISABLE
	# where the layer works, nothing about it is said
	[ "$("$CW" probe --json | jq -r .layers.bpf_trace)" = true ] || return 0
	run --separate-stderr "$CW" exec --policy "$T/files.json" --state-dir "$STATE" --audit "$AUDIT" -- true
	assert_success
	! grep -q 'bpf_trace' <<<"$stderr" || fail "warned about a layer that works: $stderr"
}

@test "exec reports a denial on stderr with exit 3" {
	run "$CW" exec --policy "$ROOT/tests/e2e/policies/args.json" --state-dir "$STATE" --audit "$AUDIT" -- rm -rf /tmp/x
	assert_failure 3
	assert_output --partial '[POLICY DENIED]'
}

@test "version and help" {
	run "$CW" version
	assert_success
	assert_output --regexp '^cmdwarden [0-9]+\.[0-9]+\.[0-9]+$'
	for c in serve check eval exec; do
		run "$CW" "$c" --help
		assert_success
		assert_output --partial "usage: cmdwarden $c"
	done
	run "$CW" frobnicate
	assert_failure 2
	assert_output --partial 'unknown command "frobnicate"'
}

@test "the seccomp table of docs/policy.md is what seccomp-profile prints" {
	run "$CW" seccomp-profile
	assert_success
	assert_equal "$(sed -n '/seccomp-profile:begin/,/seccomp-profile:end/p' "$ROOT/docs/policy.md" | sed '1d;$d')" "$output"
	assert_output --partial '| ptrace |'
}

@test "check warns when deny_if on command.programs needs every program to match" {
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"deny_if":[
  {"path":"command.programs","op":"regex","value":"^rm$"}]}}}
JSON
	run "$CW" check --policy "$T/p.json"
	assert_success
	assert_output --partial 'warning:'
	assert_output --partial 'tools.run_command.deny_if[0]'
	assert_output --partial 'use "contains"'
	# and the trap is real: rm hides behind ls
	run "$CW" eval --policy "$T/p.json" --tool run_command --args '{"command":"ls; rm x"}'
	assert_success
	run "$CW" check --policy "$ROOT/policies/demo.json"
	refute_output --partial 'warning:'
}

@test "probe --json lists every feature and layer" {
	run "$CW" probe --json
	assert_success
	for f in seccomp seccomp_notify landlock cgroup2 cgroup_v1_memory cgroup_v1_pids \
		bpf_cgroup_sock_addr bpf_cgroup_sock bpf_cgroup_skb bpf_ringbuf kernel_btf \
		bpf_tracepoint bpf_lsm fanotify kaudit proc_events; do
		assert_equal "$(jq -r ".features.$f.ok | type" <<<"$output")" boolean
		[ -n "$(jq -r ".features.$f.detail" <<<"$output")" ] || fail "$f has no detail"
	done
	assert_equal "$(jq -r '.layers.seccomp' <<<"$output")" true
	run "$CW" probe
	assert_success
	assert_output --regexp 'seccomp +yes'
}

@test "the probe suggests lsm=...,bpf only to a kernel built with BPF LSM" {
	cfg=/boot/config-$(uname -r)
	if [ -r "$cfg" ]; then
		conf=$(cat "$cfg")
	elif [ -r /proc/config.gz ]; then
		conf=$(zcat /proc/config.gz)
	else
		skip "this kernel's config is not available (/boot/config-$(uname -r), /proc/config.gz)"
	fi
	# in a mount namespace of its own, with securityfs (where the active
	# LSM list is) mounted if it is not
	run unshare -m sh -c 'mountpoint -q /sys/kernel/security || mount -t securityfs securityfs /sys/kernel/security || exit 9
		cat /sys/kernel/security/lsm; echo; exec "$0" probe' "$CW"
	assert_success
	lsms=$(head -n 1 <<<"$output")
	line=$(grep -E '^ *bpf_lsm ' <<<"$output")
	case ",$lsms," in *,bpf,*) skip "bpf is an active LSM here ($lsms): nothing to suggest" ;; esac
	if grep -qx 'CONFIG_BPF_LSM=y' <<<"$conf"; then
		assert_equal "$(grep -c 'it needs lsm=...,bpf on the kernel command line' <<<"$line")" 1
	else
		assert_equal "$(grep -c 'kernel was built without CONFIG_BPF_LSM' <<<"$line")" 1
		! grep -q 'lsm=' <<<"$line" || fail "suggests lsm= to a kernel without BPF LSM: $line"
	fi
}

@test "probe decides BPF on tracepoints by a raw tracepoint alone, opening no perf event" {
	# Classic tracepoints are tried only to explain a failure: attaching
	# and detaching one waits for RCU grace periods (about 100 ms here).
	run "$CW" probe --json
	assert_success
	[ "$(jq -r .features.bpf_tracepoint.ok <<<"$output")" = true ] ||
		skip "no BPF on raw tracepoints here: $(jq -r .features.bpf_tracepoint.detail <<<"$output")"
	assert_equal "$(jq -r .features.bpf_tracepoint.detail <<<"$output")" "raw_tracepoint sys_enter attached"
	strace -f -o "$T/trace" -e trace=perf_event_open,bpf -e signal=none "$CW" probe --json >/dev/null
	# the probe did load programs (the trace is not empty), but opened no
	# perf event
	grep -q 'BPF_RAW_TRACEPOINT_OPEN\|BPF_LINK_CREATE' "$T/trace"
	run grep -c perf_event_open "$T/trace"
	assert_output 0
}

@test "a required layer the probe reports missing refuses the policy; its twin loads" {
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"require_layers":["seccomp"]}}}}
JSON
	CW_PROBE_DISABLE=seccomp run "$CW" check --policy "$T/p.json"
	assert_failure 1
	assert_output --partial 'required layer "seccomp" is not available: seccomp: disabled by CW_PROBE_DISABLE'
	run "$CW" check --policy "$T/p.json"
	assert_success
}

@test "an unavailable layer the policy does not require is warned about at start" {
	printf '%s\n' "$INIT" | CW_PROBE_DISABLE=landlock serve
	run cat "$T/err"
	assert_output --partial 'warning:'
	assert_output --partial 'layer "landlock" is not available'
}
