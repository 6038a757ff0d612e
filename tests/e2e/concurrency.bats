#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Concurrent calls, cancellation, progress, max_concurrent and background
# calls, driven by the MCP TypeScript SDK's Client over stdio
# (sdk-scenarios.mjs), plus the same over raw stdio where the SDK hides it.

load helpers

setup() {
	cw_setup
	[ -d "$BATS_TEST_DIRNAME/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the MCP SDK is not installed (tests/run.sh installs it with npm ci)"
	D=$(public_dir)
}

teardown() {
	public_dirs_remove
}

# gone PID: no such process, or only its zombie (killed, not yet reaped by
# whoever it was reparented to)
gone() {
	[ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*[ZX]' "/proc/$1/status" 2>/dev/null
}

# scenario NAME [SERVE_ARGS...] -> $json
scenario() {
	local name=$1
	shift
	json=$(node "$BATS_TEST_DIRNAME/sdk-scenarios.mjs" "$name" "$D" "$CW" \
		--state-dir "$STATE" --audit "$AUDIT" "$@" 2>"$T/sdk.err") ||
		fail "scenario $name failed: $(cat "$T/sdk.err")"
}

@test "a fast call is answered while a slow one still runs" {
	scenario concurrent
	assert_equal "$(jq -c .order <<<"$json")" '["fast","slow"]'
	assert_equal "$(jq -r .fast.stdout <<<"$json")" fast
	assert_equal "$(jq -r .slow.stdout <<<"$json")" slow
}

@test "notifications/cancelled kills the call's whole tree, even a process that left its group" {
	scenario cancel
	assert_equal "$(jq -r .started <<<"$json")" true
	assert_equal "$(jq -r '.pids | length' <<<"$json")" 2
	# both were running when the cancel was sent ...
	assert_equal "$(jq -r '.aliveBefore | length' <<<"$json")" 2
	[[ "$(jq -r .outcome.rejected <<<"$json")" == *"the test cancels it"* ]] ||
		fail "the call was not cancelled on the client: $json"
	# ... and are gone afterwards
	assert_equal "$(jq -r .gone <<<"$json")" true
	for p in $(jq -r '.pids[]' <<<"$json"); do
		gone "$p" || fail "process $p survived the cancellation"
	done
	# the session goes on: the twin call after it runs
	assert_equal "$(jq -r .after.stdout <<<"$json")" after
	# the audit says the call was cancelled
	run jq -c 'select(.type == "exit" and .cancelled == true)' "$AUDIT"
	assert_equal "${#lines[@]}" 1
}

@test "a call with a progress token gets progress notifications with the elapsed time" {
	scenario progress
	n=$(jq -r '.events | length' <<<"$json")
	[ "$n" -ge 1 ] || fail "no progress notification: $json"
	[[ "$(jq -r '.events[0].message' <<<"$json")" == "running for "*s ]] || fail "$json"
	assert_equal "$(jq -r '[.events[].progress] | . == (sort | unique)' <<<"$json")" true
	assert_equal "$(jq -r .result.stdout <<<"$json")" done
	assert_equal "$(jq -r .quiet.stdout <<<"$json")" quiet
}

@test "max_concurrent refuses a call beyond it with a clear error; the twin runs once a slot is free" {
	scenario maxconc --policy "$BATS_TEST_DIRNAME/policies/concurrent.json"
	assert_equal "$(jq -r .refused.isError <<<"$json")" true
	run jq -r .refused.text <<<"$json"
	assert_output --partial '[POLICY DENIED] too many commands running at once: 1 running, max_concurrent is 1'
	assert_output --partial '(rule: max_concurrent)'
	assert_equal "$(jq -r .twin.isError <<<"$json")" false
	assert_equal "$(jq -r .twin.sc.stdout <<<"$json")" twin-ran
	run jq -c 'select(.type == "decision" and .rule == "max_concurrent")' "$AUDIT"
	assert_equal "${#lines[@]}" 1
}

@test "a background call returns its pid at once; command_status follows it and command_kill ends its tree" {
	scenario background --policy "$BATS_TEST_DIRNAME/policies/background.json"
	# E2B-shaped text with the invocation id command_status needs, the
	# same as the structured fields'
	assert_equal "$(jq -r '.bg.text | keys | join(",")' <<<"$json")" invocation_id,message,pid,sandboxId
	assert_equal "$(jq -r .bg.text.sandboxId <<<"$json")" sb1
	assert_equal "$(jq -r .bg.text.invocation_id <<<"$json")" "$(jq -r .bg.sc.invocation_id <<<"$json")"
	[ "$(jq -r .bg.sc.pid <<<"$json")" -gt 1 ]
	[[ "$(jq -r .bg.sc.invocation_id <<<"$json")" == inv-* ]]
	assert_equal "$(jq -r .bg.sc.background <<<"$json")" true
	# output so far while it runs
	assert_equal "$(jq -r .sawOutput <<<"$json")" true || fail "$json"
	assert_equal "$(jq -r .running.running <<<"$json")" true
	assert_equal "$(jq -r .running.exit_code <<<"$json")" null
	assert_equal "$(jq -r .childAliveBefore <<<"$json")" true
	# killed: its child is gone with it
	assert_equal "$(jq -r .killed.running <<<"$json")" false
	assert_equal "$(jq -r .killed.killed <<<"$json")" true
	assert_equal "$(jq -r .killed.exit_code <<<"$json")" 137
	assert_equal "$(jq -r .childGone <<<"$json")" true
	assert_equal "$(jq -r .mainGone <<<"$json")" true
	assert_equal "$(jq -r .after.stdout <<<"$json")" started
	# the twin that ends by itself reports its exit code
	assert_equal "$(jq -r .ended.exit_code <<<"$json")" 3
	assert_equal "$(jq -r .ended.stdout <<<"$json")" bg-done
	assert_equal "$(jq -r .ended.killed <<<"$json")" false
	# an id that does not exist is a clear error
	assert_equal "$(jq -r .unknown.isError <<<"$json")" true
	run jq -r .unknown.text <<<"$json"
	assert_output --partial 'no background call "inv-0000000000000000"'
	# the background command ran under the same enforcement and was audited
	inv=$(jq -r .bg.sc.invocation_id <<<"$json")
	run jq -c --arg inv "$inv" 'select(.invocation == $inv) | .type' "$AUDIT"
	assert_line '"decision"'
	assert_line '"launch"'
	assert_line '"exit"'
	assert_equal "$(jq -r --arg inv "$inv" 'select(.invocation == $inv and .type == "launch") | .background' "$AUDIT")" true
	assert_equal "$(jq -r --arg inv "$inv" 'select(.invocation == $inv and .type == "launch") | .layers.seccomp' "$AUDIT")" "$(jq -r 'select(.type == "agent") | .layers.seccomp' "$AUDIT" | head -1)"
}

@test "command_status and command_kill are decided by the policy like any tool" {
	# the seed policy lists only run_command: the others are denied
	mcp -- '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"command_status","arguments":{"invocation_id":"inv-1"}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"command_kill","arguments":{"invocation_id":"inv-1"}}}'
	run text 1
	assert_output --partial '[POLICY DENIED]'
	run text 2
	assert_output --partial '[POLICY DENIED]'
	# allowed by a policy, a missing argument is a clear error
	mcp --policy "$BATS_TEST_DIRNAME/policies/background.json" -- \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"command_status","arguments":{}}}'
	run text 3
	assert_output --partial 'invalid arguments: "invocation_id" must be'
}

@test "responses of concurrent calls are whole lines on stdout" {
	lines=()
	for i in $(seq 1 20); do lines+=("$(call_json "$i" "head -c 20000 /dev/zero | tr '\0' $((i % 10))")"); done
	mcp --policy "$BATS_TEST_DIRNAME/policies/background.json" -- "${lines[@]}"
	# every line parses and each call got its own output back
	jq -e . "$T/out" >/dev/null || fail "a line is not JSON"
	for i in $(seq 1 20); do
		out=$(resp "$i" | jq -j .result.structuredContent.stdout)
		assert_equal "${#out}" 20000
		assert_equal "$(tr -d "$((i % 10))" <<<"$out" | tr -d '\n')" ""
	done
}
