#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A real MCP client (the TypeScript SDK, over StdioClientTransport and over
# StreamableHTTPClientTransport) lists and calls run_command.

load helpers

setup() {
	cw_setup
	[ -d "$BATS_TEST_DIRNAME/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the MCP SDK is not installed (tests/run.sh installs it with npm ci)"
}

teardown() {
	http_stop
}

@test "the SDK client initializes, lists, calls, and sees a denial" {
	# the server's diagnostics (its stderr) stay apart from the client's JSON
	json=$(node "$BATS_TEST_DIRNAME/sdk-client.mjs" "$CW" --state-dir "$STATE" --audit "$AUDIT" 2>"$T/sdk.err") ||
		fail "the SDK client failed: $(cat "$T/sdk.err")"
	assert_equal "$(jq -r .server.name <<<"$json")" cmdwarden
	assert_equal "$(jq -c .tools <<<"$json")" '["run_command"]'
	assert_equal "$(jq -r .allowed.structuredContent.stdout <<<"$json")" from-sdk
	assert_equal "$(jq -r .allowed.structuredContent.exit_code <<<"$json")" 2
	assert_equal "$(jq -r .allowed.structuredContent.sandboxId <<<"$json")" sdk
	assert_equal "$(jq -r '.allowed.content[0].text | fromjson | .stdout' <<<"$json")" from-sdk
	assert_equal "$(jq -r .allowed.isError <<<"$json")" false
	assert_equal "$(jq -r .denied.isError <<<"$json")" true
	[[ "$(jq -r '.denied.content[0].text' <<<"$json")" == "[POLICY DENIED]"* ]]
	assert_equal "$(jq -r .pinged <<<"$json")" true
	# the audit log saw all three calls
	assert_equal "$(jq -r 'select(.type=="decision") | .tool' "$AUDIT" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" "2run_command 1write_file "
}

@test "the SDK client over Streamable HTTP initializes, lists, calls, sees a denial and ends its session" {
	make_tokens agent
	http_start
	json=$(node "$BATS_TEST_DIRNAME/sdk-http-client.mjs" "$URL" "$TOKEN_agent" 2>"$T/sdk.err") ||
		fail "the SDK client failed: $(cat "$T/sdk.err")"
	http_stop
	assert_equal "$(jq -r .server.name <<<"$json")" cmdwarden
	assert_equal "$(jq -r .protocol <<<"$json")" 2025-11-25
	assert_equal "$(jq -c .tools <<<"$json")" '["run_command"]'
	assert_equal "$(jq -r .allowed.structuredContent.stdout <<<"$json")" from-http
	assert_equal "$(jq -r .allowed.structuredContent.exit_code <<<"$json")" 3
	assert_equal "$(jq -r .allowed.structuredContent.sandboxId <<<"$json")" sdk-http
	assert_equal "$(jq -r .denied.isError <<<"$json")" true
	[[ "$(jq -r '.denied.content[0].text' <<<"$json")" == "[POLICY DENIED]"* ]]
	assert_equal "$(jq -r .pinged <<<"$json")" true
	assert_equal "$(jq -r .terminated <<<"$json")" true
	# both calls were decided for the token's grant, in the client's session
	sid=$(jq -r .session <<<"$json")
	assert_equal "$(jq -r 'select(.type == "decision") | "\(.grant) \(.session) \(.tool)"' "$AUDIT" | tr '\n' ';')" \
		"agent $sid run_command;agent $sid write_file;"
}

@test "the SDK client with a wrong token is refused before anything runs" {
	make_tokens agent
	http_start
	json=$(node "$BATS_TEST_DIRNAME/sdk-http-client.mjs" "$URL" "not-the-token" 2>"$T/sdk.err") ||
		fail "the SDK client failed: $(cat "$T/sdk.err")"
	http_stop
	assert_equal "$(jq -r .status <<<"$json")" 401
	[[ "$(jq -r .connectError <<<"$json")" == *"the bearer token is not valid"* ]] || fail "no reason: $json"
	run jq -r .type "$AUDIT"
	refute_output --partial decision
	assert_equal "$(jq -r 'select(.type == "access") | .status' "$AUDIT")" 401
}
