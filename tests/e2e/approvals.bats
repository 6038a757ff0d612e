#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# require_approval: asked by elicitation when the client can answer, else
# an approval id an operator decides with `cmdwarden approve` / `reject`
# over the agent's control socket.

load helpers

setup() {
	cw_setup
	AGENT=
	APPROVAL="$BATS_TEST_DIRNAME/policies/approval.json"
}

teardown() {
	if [ -n "$AGENT" ]; then
		exec 4>&- || true
		kill "$AGENT" 2>/dev/null || true
		wait "$AGENT" 2>/dev/null || true
	fi
	public_dirs_remove
}

# An agent that stays up between requests: its input is a FIFO held open
# on fd 4. Started in this shell, bats' descriptors closed.
start_agent() {
	mkfifo "$T/in"
	"$CW" serve --state-dir "$STATE" --audit "$AUDIT" "$@" <"$T/in" >"$T/out" 2>"$T/err" 3>&- &
	AGENT=$!
	exec 4>"$T/in"
	send "$INIT"
	send "$INITIALIZED"
	await 0
}

send() {
	printf '%s\n' "$1" >&4
}

# await ID: waits (generously) for the answer to request ID
await() {
	local _
	for _ in $(seq 1 300); do
		[ -n "$(resp "$1")" ] && return 0
		sleep 0.1
	done
	fail "no answer to request $1: $(cat "$T/out" "$T/err")"
}

# call ID COMMAND: a run_command call, answered
call() {
	send "$(call_json "$1" "$2")"
	await "$1"
}

approval_id() {
	text "$1" | grep -o 'apr-[0-9a-f]*' | head -1
}

approve() {
	run "$CW" "$@" --state-dir "$STATE"
}

@test "an elicitation accepted runs the call, one declined denies it; both answers are audited" {
	D=$(public_dir)
	json=$(node "$BATS_TEST_DIRNAME/sdk-scenarios.mjs" elicit "$D" "$CW" \
		--state-dir "$STATE" --audit "$AUDIT" --policy "$APPROVAL" 2>"$T/sdk.err") ||
		fail "the SDK client failed: $(cat "$T/sdk.err")"
	# the person was asked twice, with the command, where, and the rule
	assert_equal "$(jq -r '.asked | length' <<<"$json")" 2
	run jq -r '.asked[0]' <<<"$json"
	assert_output --partial 'echo approved-ran'
	assert_output --partial 'rule tools.run_command'
	assert_output --partial 'in /'
	# accepted: it ran
	assert_equal "$(jq -r .accepted.isError <<<"$json")" false
	assert_equal "$(jq -r .accepted.sc.stdout <<<"$json")" approved-ran
	# declined: denied, and it did not run
	assert_equal "$(jq -r .declined.isError <<<"$json")" true
	run jq -r .declined.text <<<"$json"
	assert_output --partial '[POLICY DENIED] approval for tool "run_command" was declined by the user'
	assert_equal "$(jq -r .declinedRan <<<"$json")" false
	run jq -c 'select(.type == "decision") | [.verdict, .approval.via, .approval.answer]' "$AUDIT"
	assert_line '["allow","elicitation","accept"]'
	assert_line '["deny","elicitation","decline"]'
}

@test "without elicitation: an approval id, approved by an operator, runs the identical retry once" {
	D=$(public_dir)
	start_agent --policy "$APPROVAL"
	call 1 "touch $D/ran-1"
	run text 1
	assert_output --partial '[POLICY DENIED] approval required: approval id apr-'
	assert_output --partial '(rule: tools.run_command)'
	id=$(approval_id 1)
	[ ! -e "$D/ran-1" ] || fail "it ran before approval"
	approve approve --list
	assert_success
	assert_output --partial "$id"
	assert_output --partial "touch $D/ran-1"
	# the retry before the approval: still pending, same id
	call 2 "touch $D/ran-1"
	assert_equal "$(approval_id 2)" "$id"
	approve approve "$id"
	assert_success
	assert_output --partial "approved $id"
	# other arguments are not approved by it: denied with an id of their own
	call 3 "touch $D/ran-other"
	id3=$(approval_id 3)
	[ -n "$id3" ] && [ "$id3" != "$id" ] || fail "other arguments got $id3"
	[ ! -e "$D/ran-other" ] || fail "a call with other arguments ran"
	# the identical call runs, once
	call 4 "touch $D/ran-1"
	assert_equal "$(resp 4 | jq -r .result.isError)" false
	[ -e "$D/ran-1" ] || fail "the approved call did not run"
	# used: the same call again needs a new approval
	rm "$D/ran-1"
	call 5 "touch $D/ran-1"
	id5=$(approval_id 5)
	[ -n "$id5" ] && [ "$id5" != "$id" ] || fail "the used approval was reused: $(text 5)"
	[ ! -e "$D/ran-1" ] || fail "the used approval ran the call again"
	# a decided id cannot be decided again
	approve approve "$id"
	assert_failure 1
	assert_output --partial "approval $id was used by a call already"
	# audited: the operator's answer and the call it let through
	run jq -c --arg id "$id" 'select(.type == "approval" and .approval_id == $id) | [.answer, .outcome, .peer_uid]' "$AUDIT"
	assert_line '["approve","done",0]'
	run jq -c --arg id "$id" 'select(.type == "decision" and .approval.id == $id) | [.verdict, .approval.state]' "$AUDIT"
	assert_line '["allow","approved"]'
}

@test "a rejected approval keeps the call denied; unknown ids are clear errors" {
	start_agent --policy "$APPROVAL"
	call 1 "echo rejected-one"
	id=$(approval_id 1)
	approve reject "$id"
	assert_success
	assert_output --partial "rejected $id"
	call 2 "echo rejected-one"
	run text 2
	assert_output --partial "approval $id for this call was rejected by an operator"
	approve approve apr-0000000000000000
	assert_failure 1
	assert_output --partial 'unknown approval id "apr-0000000000000000"'
	approve approve
	assert_failure 2
}

@test "an approval id expires after its lifetime; the retry then gets a new one" {
	start_agent --policy "$APPROVAL" --approval-lifetime 1
	call 1 "echo late"
	id=$(approval_id 1)
	sleep 2
	approve approve "$id"
	assert_failure 1
	assert_output --partial "approval $id expired"
	call 2 "echo late"
	id2=$(approval_id 2)
	[ -n "$id2" ] && [ "$id2" != "$id" ] || fail "no new id after expiry: $(text 2)"
	run jq -c --arg id "$id" 'select(.type == "approval" and .approval_id == $id) | .outcome' "$AUDIT"
	assert_output '"expired"'
}

@test "only root reaches the control socket; even with its modes opened another uid is refused" {
	# a state directory another user could reach, were its modes open
	STATE="$(public_dir)/state"
	start_agent --policy "$APPROVAL"
	call 1 "echo guarded"
	id=$(approval_id 1)
	sock=$(ls "$STATE"/control/*.sock)
	assert_equal "$(stat -c %a "$STATE/control")" 700
	assert_equal "$(stat -c %a "$sock")" 600
	run runuser -u nobody -- "$CW" approve --state-dir "$STATE" "$id"
	assert_failure 1
	assert_output --partial 'Permission denied'
	# opened up, the peer credentials still refuse it
	chmod 0755 "$STATE" "$STATE/control"
	chmod 0666 "$sock"
	run runuser -u nobody -- "$CW" approve --state-dir "$STATE" "$id"
	assert_failure 1
	assert_output --partial 'uid 65534 may not use this agent'"'"'s control socket'
	# still pending: root approves it
	approve approve "$id"
	assert_success
}

@test "exec has no way to ask: require_approval is denied, saying so" {
	run "$CW" exec --state-dir "$STATE" --audit "$AUDIT" --policy "$APPROVAL" -- true
	assert_failure 3
	assert_output --partial 'requires approval and this server has no way to ask for it'
}

@test "a client that stops sending while asked is not waited for: the call is denied" {
	init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"bats","version":"1"}}}'
	D=$(public_dir)
	{
		printf '%s\n' "$init" "$INITIALIZED" "$(call_json 1 "touch $D/ran")"
		# input ends only once the question is out
		for _ in $(seq 300); do grep -q elicitation/create "$T/out" 2>/dev/null && break; sleep 0.1; done
	} |
		timeout 60 "$CW" serve --state-dir "$STATE" --audit "$AUDIT" --policy "$APPROVAL" >"$T/out" 2>"$T/err" ||
		fail "serve did not end on its own: $(cat "$T/err")"
	# it asked ...
	run jq -r 'select(.method == "elicitation/create") | .params.message' "$T/out"
	assert_output --partial "touch $D/ran"
	# ... and, with nobody left to answer, denied
	run text 1
	assert_output --partial '[POLICY DENIED] approval for tool "run_command" was cancelled'
	[ ! -e "$D/ran" ] || fail "it ran unapproved"
}
