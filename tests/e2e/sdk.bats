#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A real MCP client (the TypeScript SDK over StdioClientTransport) lists and
# calls run_command.

load helpers

setup() {
	cw_setup
	[ -d "$BATS_TEST_DIRNAME/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the MCP SDK is not installed (tests/run.sh installs it with npm ci)"
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
