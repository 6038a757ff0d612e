#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The SDK scenarios of concurrency.bats and approvals.bats over Streamable
# HTTP: calls answered on their own SSE streams, cancellation, progress and
# elicitation travel the same way as over stdio.

load helpers

setup() {
	cw_setup
	[ -d "$BATS_TEST_DIRNAME/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the MCP SDK is not installed (tests/run.sh installs it with npm ci)"
	D=$(public_dir)
	make_tokens agent
}

teardown() {
	http_stop
	public_dirs_remove
}

# http_scenario NAME : runs sdk-scenarios.mjs NAME against the server
http_scenario() {
	json=$(CW_MCP_URL="$URL" CW_MCP_TOKEN="$TOKEN_agent" \
		node "$BATS_TEST_DIRNAME/sdk-scenarios.mjs" "$1" "$D" "$CW" 2>"$T/sdk.err") ||
		fail "scenario $1 failed: $(cat "$T/sdk.err")"
}

@test "over HTTP a fast call is answered while a slow one of the same session still runs" {
	http_start
	http_scenario concurrent
	assert_equal "$(jq -c .order <<<"$json")" '["fast","slow"]'
	assert_equal "$(jq -r .slow.stdout <<<"$json")" slow
}

@test "over HTTP notifications/cancelled kills the call's tree; the session goes on" {
	http_start
	http_scenario cancel
	assert_equal "$(jq -r '.aliveBefore | length' <<<"$json")" 2
	[[ "$(jq -r .outcome.rejected <<<"$json")" == *"the test cancels it"* ]] ||
		fail "the call was not cancelled on the client: $json"
	assert_equal "$(jq -r .gone <<<"$json")" true
	assert_equal "$(jq -r .after.stdout <<<"$json")" after
	run jq -c 'select(.type == "exit" and .cancelled == true)' "$AUDIT"
	assert_equal "${#lines[@]}" 1
}

@test "over HTTP progress notifications arrive on the call's SSE stream" {
	http_start
	http_scenario progress
	[ "$(jq -r '.events | length' <<<"$json")" -ge 1 ] || fail "no progress: $json"
	[[ "$(jq -r '.events[0].message' <<<"$json")" == "running for "*s ]] || fail "$json"
	assert_equal "$(jq -r .result.stdout <<<"$json")" done
}

@test "over HTTP an elicitation accepted runs the call, one declined denies it" {
	http_start --policy "$BATS_TEST_DIRNAME/policies/approval.json"
	http_scenario elicit
	assert_equal "$(jq -r '.asked | length' <<<"$json")" 2
	run jq -r '.asked[0]' <<<"$json"
	assert_output --partial 'echo approved-ran'
	assert_equal "$(jq -r .accepted.sc.stdout <<<"$json")" approved-ran
	assert_equal "$(jq -r .declined.isError <<<"$json")" true
	assert_equal "$(jq -r .declinedRan <<<"$json")" false
	run jq -c 'select(.type == "decision") | [.grant, .verdict, .approval.answer]' "$AUDIT"
	assert_line '["agent","allow","accept"]'
	assert_line '["agent","deny","decline"]'
}

@test "a JSON-only client gets the call's response alone, and a call needing approval is denied rather than left waiting" {
	http_start --policy "$BATS_TEST_DIRNAME/policies/approval.json"
	# declares elicitation, but accepts only JSON: no stream to ask on
	init=$(jq -c '.params.capabilities.elicitation = {}' <<<"$INIT")
	code=$(ACCEPT='application/json' req POST "$TOKEN_agent" "" "$init")
	assert_equal "$code" 200
	sid=$(header Mcp-Session-Id)
	ACCEPT='application/json' run req POST "$TOKEN_agent" "$sid" \
		'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo x"}}}'
	assert_output 200
	assert_equal "$(header Content-Type)" application/json
	assert_equal "$(jq -r .result.isError "$T/b")" true
	[[ "$(jq -r '.result.content[0].text' "$T/b")" == "[POLICY DENIED]"* ]] || fail "$(cat "$T/b")"
}
