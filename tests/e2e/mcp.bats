#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# MCP over stdio: lifecycle, framing, every JSON-RPC error code.

load helpers

setup() {
	cw_setup
}

@test "initialize negotiates a supported protocol version" {
	for v in 2025-11-25 2025-06-18 2025-03-26; do
		printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$v\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}" | serve
		assert_equal "$(resp 1 | jq -r .result.protocolVersion)" "$v"
		assert_equal "$(resp 1 | jq -r .result.serverInfo.name)" cmdwarden
		assert_equal "$(resp 1 | jq -r .result.capabilities.tools.listChanged)" false
	done
}

@test "initialize with an unknown version answers with the latest" {
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | serve
	assert_equal "$(resp 1 | jq -r .result.protocolVersion)" 2025-11-25
}

@test "initialize twice is an invalid request" {
	mcp -- "$INIT"
	# the second initialize has id 0 too: both answers are in out
	run jq -c 'select(.error)' "$T/out"
	assert_output --partial '"code":-32600'
	assert_output --partial 'already initialized'
}

@test "tools/list before initialize is refused" {
	printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"tools/list"}' | serve
	assert_equal "$(resp 5 | jq -r .error.code)" -32600
	assert_equal "$(resp 5 | jq -r .error.message)" "the session is not initialized: send initialize first"
}

@test "ping works before and after initialize" {
	printf '%s\n' '{"jsonrpc":"2.0","id":"p1","method":"ping"}' "$INIT" '{"jsonrpc":"2.0","id":"p2","method":"ping"}' | serve
	assert_equal "$(jq -c 'select(.id=="p1") | .result' "$T/out")" '{}'
	assert_equal "$(jq -c 'select(.id=="p2") | .result' "$T/out")" '{}'
}

@test "unknown method is -32601" {
	mcp -- '{"jsonrpc":"2.0","id":7,"method":"resources/list"}'
	assert_equal "$(resp 7 | jq -r .error.code)" -32601
}

@test "malformed JSON is -32700 with the request's id where it can be read, and the server keeps serving" {
	mcp -- '{"jsonrpc":"2.0","id":8,"method":' '{"jsonrpc":"2.0","method":"ping",' '{"jsonrpc":"2.0","id":9,"method":"ping"}'
	# the id is read before the error: the client's own request is answered
	run jq -c 'select(.error.code == -32700) | [.id, (.error.message | startswith("parse error at line 1"))]' "$T/out"
	assert_line --index 0 '[8,true]'
	# none to read: null, as JSON-RPC says
	assert_line --index 1 '[null,true]'
	assert_equal "${#lines[@]}" 2
	assert_equal "$(resp 9 | jq -c .result)" '{}'
}

@test "invalid requests are -32600" {
	mcp -- '{"jsonrpc":"1.0","id":10,"method":"ping"}' \
		'{"jsonrpc":"2.0","id":11}' \
		'[{"jsonrpc":"2.0","id":12,"method":"ping"}]' \
		'{"jsonrpc":"2.0","id":13,"method":"ping","params":[1]}' \
		'"just a string"' \
		'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'
	assert_equal "$(resp 10 | jq -r .error.code)" -32600
	assert_equal "$(resp 11 | jq -r .error.code)" -32600
	assert_equal "$(resp 13 | jq -r .error.code)" -32600
	# batch, bare string and object id: answered with a null id
	assert_equal "$(jq -c 'select(.id == null and .error.code == -32600)' "$T/out" | wc -l)" 3
}

@test "bad params are -32602" {
	mcp -- '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{}}' \
		'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_command","arguments":"ls"}}' \
		'{"jsonrpc":"2.0","id":22,"method":"initialize","params":{}}'
	assert_equal "$(resp 20 | jq -r .error.code)" -32602
	assert_equal "$(resp 21 | jq -r .error.code)" -32602
	# initialize already happened, so this one is refused as a repeat
	assert_equal "$(resp 22 | jq -r .error.code)" -32600
}

@test "notifications get no response" {
	mcp -- '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}' '{"jsonrpc":"2.0","id":30,"method":"ping"}'
	# exactly two responses: initialize and ping
	assert_equal "$(wc -l <"$T/out")" 2
}

@test "tools/list gives run_command, command_status and command_kill with input and output schemas" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {}, command_status: {}, command_kill: {}}}' >"$T/all.json"
	mcp --policy "$T/all.json" -- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	assert_equal "$(resp 2 | jq -c '[.result.tools[].name]')" '["run_command","command_status","command_kill"]'
	assert_equal "$(resp 2 | jq -r '.result.tools[1].inputSchema.required[0]')" invocation_id
	assert_equal "$(resp 2 | jq -r '.result.tools[2].outputSchema.properties.running.type')" boolean
	assert_equal "$(resp 2 | jq -r '.result.tools[0].name')" run_command
	assert_equal "$(resp 2 | jq -r '.result.tools[0].inputSchema.required[0]')" command
	assert_equal "$(resp 2 | jq -r '.result.tools[0].inputSchema.properties.timeout.type')" number
	assert_equal "$(resp 2 | jq -r '.result.tools[0].inputSchema.properties.stdin.type')" string
	assert_equal "$(resp 2 | jq -r '.result.tools[0].outputSchema.properties.exit_code.type')" integer
	run jq -r '.result.instructions' <<<"$(resp 0)"
	assert_output --partial "then command_status and command_kill"
}

@test "tools/list and the instructions name only the tools the policy would not refuse outright; those are still refused" {
	# the seed policy: run_command only (its rule unchanged), the rest denied by default
	mcp -- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"command_status","arguments":{"invocation_id":"inv-0"}}}' \
		"$(call_json 4 'echo still-runs')"
	assert_equal "$(resp 2 | jq -c '[.result.tools[].name]')" '["run_command"]'
	run jq -r '.result.instructions' <<<"$(resp 0)"
	assert_output --partial "Call run_command to run shell commands. "
	refute_output --partial command_status
	assert_equal "$(resp 3 | jq -r .result.isError)" true
	[[ "$(resp 3 | jq -r '.result.content[0].text')" == "[POLICY DENIED]"* ]]
	assert_equal "$(text 4 | jq -r .stdout)" still-runs
	# a rule whose action is deny: left out; one with conditions is listed
	jq -n '{version: "1", default: "allow", tools: {command_kill: {action: "deny"},
		command_status: {deny_if: [{path: "args.invocation_id", op: "eq", value: "x"}]}}}' >"$T/p.json"
	mcp --policy "$T/p.json" -- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	assert_equal "$(resp 2 | jq -c '[.result.tools[].name]')" '["run_command","command_status"]'
	run jq -r '.result.instructions' <<<"$(resp 0)"
	assert_output --partial "then command_status). "
	# nothing open at all
	jq -n '{version: "1", default: "deny", tools: {}}' >"$T/none.json"
	mcp --policy "$T/none.json" -- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	assert_equal "$(resp 2 | jq -c .result.tools)" '[]'
	assert_equal "$(resp 0 | jq -r .result.instructions)" "This server's policy opens no tool to this caller."
}

@test "tools/list leaves hidden tools out" {
	mcp --policy "$FIX/policies/valid/hide_all.json" -- '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	assert_equal "$(resp 2 | jq -c '.result.tools')" '[]'
}

@test "a request larger than --max-request gets an error with its id and serving goes on" {
	big=$(head -c 5000 /dev/zero | tr '\0' 'a')
	mcp --max-request 1024 -- "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"ping\",\"params\":{\"x\":\"$big\"}}" \
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{\"x\":\"$big\"},\"id\":43}" \
		'{"jsonrpc":"2.0","id":41,"method":"ping"}'
	# the id in the first 1024 bytes answers the client's own request
	assert_equal "$(resp 40 | jq -r .error.code)" -32600
	run jq -r 'select(.id == 40) | .error.message' "$T/out"
	assert_output "request too large: 5059 bytes exceeds the limit of 1024 bytes"
	# an id past the limit is never read: null
	run jq -r 'select(.id == null and .error.code == -32600) | .error.message' "$T/out"
	assert_output --partial 'limit of 1024 bytes'
	assert_equal "${#lines[@]}" 1
	assert_equal "$(resp 41 | jq -c .result)" '{}'
}

@test "a 64 MiB line without newline is refused without growing memory" {
	# Peak RSS stays far below the input size: the line is skipped, not held.
	{ printf '%s\n' "$INIT"; head -c 67108864 /dev/zero | tr '\0' 'x'; printf '\n%s\n' '{"jsonrpc":"2.0","id":42,"method":"ping"}'; } |
		/usr/bin/time -f '%M' -o "$T/rss" "$CW" serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	assert_equal "$(resp 42 | jq -c .result)" '{}'
	run jq -r 'select(.error.code == -32600) | .error.message' "$T/out"
	assert_output --partial '67108864 bytes exceeds the limit of 1048576 bytes'
	[ "$(cat "$T/rss")" -lt 32768 ] # KiB
}

@test "random binary input never crashes the server" {
	for seed in 1 2 3 4 5; do
		{ printf '%s\n' "$INIT"; head -c 200000 /dev/urandom; printf '\n%s\n' '{"jsonrpc":"2.0","id":99,"method":"ping"}'; } | serve
		assert_equal "$(resp 99 | jq -c .result)" '{}'
	done
}

@test "CRLF line endings and blank lines are tolerated" {
	printf '%s\r\n\r\n\n%s\r\n' "$INIT" '{"jsonrpc":"2.0","id":50,"method":"ping"}' | serve
	assert_equal "$(resp 50 | jq -c .result)" '{}'
}

@test "deeply nested JSON is refused, not recursed into" {
	deep=$(python3 -c "print('{\"jsonrpc\":\"2.0\",\"id\":60,\"method\":\"ping\",\"params\":{\"a\":' + '['*200000 + ']'*200000 + '}}')")
	mcp -- "$deep" '{"jsonrpc":"2.0","id":61,"method":"ping"}'
	run jq -r 'select(.error.code == -32700) | .error.message' "$T/out"
	assert_output --partial 'maximum parsing depth'
	assert_equal "$(resp 61 | jq -c .result)" '{}'
}
