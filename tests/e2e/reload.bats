#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# SIGHUP reloads the token file and the policies of serve --http: all or
# nothing, without dropping sessions or counters.

load helpers

setup() {
	cw_setup
	cp "$BATS_TEST_DIRNAME/policies/grant-limit.json" "$T/policy.json"
}

teardown() {
	http_stop
}

CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo ran"}}}'

# hup : sends SIGHUP and waits for the server to say how the reload went
hup() {
	local before i
	before=$(grep -c 'reload' "$T/http.err")
	kill -HUP "$HTTP_PID"
	for i in $(seq 100); do
		[ "$(grep -c 'reload' "$T/http.err")" -gt "$before" ] && return 0
		sleep 0.05
	done
	fail "no word of the reload: $(cat "$T/http.err")"
}

# call TOKEN SESSION : prints the call's result text
call() {
	req POST "$1" "$2" "$CALL" >/dev/null
	sse_data | jq -r '.result.content[0].text'
}

@test "a reload adds and removes grants; sessions and counters go on" {
	make_tokens alice bob
	http_start --policy "$T/policy.json"
	a=$(http_init "$TOKEN_alice")
	run call "$TOKEN_alice" "$a"
	assert_output --partial '"stdout":"ran\n"'
	old_bob=$TOKEN_bob
	# a new token file: alice keeps her token, bob is gone, carol is new
	alice=$TOKEN_alice
	make_tokens carol
	jq --arg h "$(printf %s "$alice" | sha256sum | cut -d' ' -f1)" \
		'.grants.alice = {token_sha256: $h}' "$T/tokens.json" >"$T/t2"
	install -m 0600 "$T/t2" "$T/tokens.json"
	hup
	assert_equal "$(tail -1 "$T/http.err")" "cmdwarden serve: reloaded $T/tokens.json and the policies"
	run req POST "$old_bob" "" "$INIT"
	assert_output 401
	c=$(http_init "$TOKEN_carol")
	[ -n "$c" ]
	# alice's session survived, and her count too: one more call, then the limit
	run call "$alice" "$a"
	assert_output --partial '"stdout":"ran\n"'
	run call "$alice" "$a"
	assert_output --partial '[POLICY DENIED] rate limit "per_grant" (2 per 3600s, scope grant) reached'
	assert_equal "$(jq -c 'select(.type == "agent" and .event == "reload") | [.ok, .grants]' "$AUDIT")" '[true,2]'
}

@test "a reload with a broken policy keeps the old configuration and says why" {
	make_tokens alice
	http_start --policy "$T/policy.json"
	a=$(http_init "$TOKEN_alice")
	printf '{\n  "version": "1",\n  "default": "dany"\n}\n' >"$T/policy.json"
	hup
	run cat "$T/http.err"
	assert_output --partial "$T/policy.json"
	assert_output --partial 'default'
	assert_equal "$(tail -1 "$T/http.err")" "cmdwarden serve: reload failed; still serving with the previous tokens and policies"
	# the old policy still decides: run_command allowed, under its limit
	run call "$TOKEN_alice" "$a"
	assert_output --partial '"stdout":"ran\n"'
	run jq -r 'select(.type == "agent" and .event == "reload") | "\(.ok) \(.error)"' "$AUDIT"
	assert_output --partial "false $T/policy.json"
	# fixed, the new policy takes over in the same session
	cp "$BATS_TEST_DIRNAME/policies/deny-run.json" "$T/policy.json"
	hup
	run call "$TOKEN_alice" "$a"
	assert_output "[POLICY DENIED] this grant may not run commands (rule: tools.run_command.action)"
}

@test "a reload with a token file others may read, or a broken grant policy, keeps the old tokens" {
	make_tokens alice
	http_start
	chmod 0644 "$T/tokens.json"
	hup
	grep -q "the token file has mode 0644" "$T/http.err" || fail "$(cat "$T/http.err")"
	run req POST "$TOKEN_alice" "" "$INIT"
	assert_output 200
	# a grant naming a policy that does not load
	chmod 0600 "$T/tokens.json"
	echo '{"version": "1", "default": "deny", "tools": {"run_command": {"actoin": "deny"}}}' >"$T/bad.json"
	jq --arg p "$T/bad.json" '.grants.alice.policy = $p' "$T/tokens.json" >"$T/t2"
	install -m 0600 "$T/t2" "$T/tokens.json"
	hup
	grep -q "$T/bad.json" "$T/http.err" || fail "the error does not name the policy: $(cat "$T/http.err")"
	a=$(http_init "$TOKEN_alice")
	run call "$TOKEN_alice" "$a"
	assert_output --partial '"stdout":"ran\n"'
}
