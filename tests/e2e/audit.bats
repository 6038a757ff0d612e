#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The audit log: a record per decision, launch and exit, durable before the
# caller sees the result, and fail-closed when it cannot be written.

load helpers

setup() {
	cw_setup
}

teardown() {
	if [ -n "${D:-}" ]; then rm -rf "$D"; fi
}

@test "every call leaves decision, launch and exit records sharing its invocation" {
	mcp -- "$(call_json 1 'echo hi')" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
	inv=$(structured 1 invocation_id)
	run jq -r --arg inv "$inv" 'select(.invocation == $inv) | .type | select(. == "decision" or . == "launch" or . == "exit")' "$AUDIT"
	assert_output "$(printf 'decision\nlaunch\nexit')"
	# kernel events of the call, if any, lie between its launch and exit
	run jq -r --arg inv "$inv" 'select(.invocation == $inv) | .type' "$AUDIT"
	assert_equal "${lines[1]}" launch
	assert_equal "${lines[-1]}" exit
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="decision" and .invocation==$inv) | .verdict' "$AUDIT")" allow
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="decision" and .invocation==$inv) | .args.command' "$AUDIT")" "echo hi"
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="launch" and .invocation==$inv) | .layers.seccomp' "$AUDIT")" true
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="exit" and .invocation==$inv) | .exit_code' "$AUDIT")" 0
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="exit" and .invocation==$inv) | .stdout_bytes' "$AUDIT")" 3
	# the denied call has a decision record with its rule and reason
	assert_equal "$(jq -r 'select(.type=="decision" and .tool=="nope") | .verdict + " " + .rule' "$AUDIT")" "deny default"
}

@test "records carry ts, a gapless seq and a hash chain" {
	mcp -- "$(call_json 1 true)" "$(call_json 2 false)"
	run jq -r '.seq' "$AUDIT"
	# the agent's start record, then decision, launch, kernel events, exit
	[ "${#lines[@]}" -ge 7 ]
	assert_output "$(seq 1 "${#lines[@]}")"
	jq -r '.ts' "$AUDIT" | grep -Evq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$' && fail "bad ts"
	assert_equal "$(head -1 "$AUDIT" | jq -r .prev)" ""
	# each prev is the SHA-256 of the line before it
	prev=""
	while IFS= read -r line; do
		if [ -n "$prev" ]; then
			assert_equal "$(jq -r .prev <<<"$line")" "$(printf '%s' "$prev" | sha256sum | cut -d' ' -f1)"
		fi
		prev=$line
	done <"$AUDIT"
}

@test "the audit log is created with mode 0600 in a 0700 directory" {
	mcp -- "$(call_json 1 true)"
	assert_equal "$(stat -c %a "$AUDIT")" 600
	assert_equal "$(stat -c %a "$(dirname "$AUDIT")")" 700
}

@test "records are fsynced before the response is written" {
	command -v strace >/dev/null || skip "strace is not installed"
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 true)"; } |
		strace -f -o "$T/trace" -e trace=write,fdatasync,fsync,fcntl -e signal=none \
			"$CW" serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out"
	assert_equal "$(resp 1 | jq -r .result.isError)" false
	# -f: calls run on threads of their own, so a call may show as
	# "unfinished" and "resumed" on two lines: both carry the thread id
	afd=$(grep -m1 -E '^[0-9]+ +write\(([0-9]+), "\{\\"ts' "$T/trace" | sed -E 's/^[0-9]+ +write\(([0-9]+),.*/\1/')
	[ -n "$afd" ] || fail "no audit write seen"
	# the last audit write is followed by its sync (on the log's descriptor
	# or a duplicate of it), then the response on fd 1
	run awk -v fd="$afd" '
		{ tid = $1; sub(/^[0-9]+ +/, "") }
		$0 ~ "^fcntl\\(" fd ", F_DUPFD" {
			if ($0 ~ /unfinished/) dupping[tid] = 1; else dup[$NF] = 1
		}
		/^<\.\.\. fcntl resumed>/ && dupping[tid] { dup[$NF] = 1; dupping[tid] = 0 }
		$0 ~ "^write\\(" fd ", " { w = NR; synced = 0 }
		/^(fdatasync|fsync)\(/ && w {
			f = $0; sub(/^[a-z]+\(/, "", f); sub(/[ )].*/, "", f)
			if (f == fd || (f in dup)) {
				if ($0 ~ /unfinished/) syncing[tid] = 1; else synced = NR
			}
		}
		/^<\.\.\. (fdatasync|fsync) resumed>/ && syncing[tid] { synced = NR; syncing[tid] = 0 }
		/^write\(1, .*"id\\":1/ { print (synced > w && w > 0) ? "ordered" : "unordered"; exit }
	' "$T/trace"
	assert_output ordered
}

@test "nothing runs when the audit log cannot be opened" {
	D=$(public_dir)
	run "$CW" exec --state-dir "$STATE" --audit /proc/cmdwarden-audit/audit.jsonl -- touch "$D/ran"
	assert_failure
	assert_output --partial 'audit log'
	[ ! -e "$D/ran" ]
	# the twin with a writable log runs
	run "$CW" exec --state-dir "$STATE" --audit "$AUDIT" -- touch "$D/ran"
	assert_success
	[ -e "$D/ran" ]
}

@test "a full disk makes the call fail closed with the reason" {
	d="$T/full"
	mkdir -p "$d"
	mount -t tmpfs -o size=64k tmpfs "$d" || skip "cannot mount tmpfs here"
	rc=0
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 true)"
		# the first call answered (a generous wait on a loaded machine)
		for _ in $(seq 300); do [ -n "$(resp 1)" ] && break; sleep 0.1; done
		# fill the file system the log lives on, then call again
		head -c 1000000 /dev/zero >"$d/filler" 2>/dev/null || true
		# a long command makes a record larger than a page, so the write
		# cannot fit into the slack of the file's last page
		printf '%s\n' "$(call_json 2 "echo ran # $(head -c 20000 /dev/zero | tr '\0' x)")"
	} | "$CW" serve --state-dir "$STATE" --audit "$d/audit.jsonl" >"$T/out" 2>"$T/err" || rc=$?
	umount "$d"
	assert_equal "$(resp 1 | jq -r .result.isError)" false
	assert_equal "$(resp 2 | jq -r .result.isError)" true
	run text 2
	assert_output --partial 'audit log cannot be written'
	assert_output --partial 'No space left on device'
}

@test "the agent records its start with the probe and the layers in force" {
	mcp -- "$(call_json 1 true)"
	run jq -c 'select(.type == "agent")' "$AUDIT"
	assert_equal "$(jq -r .event <<<"$output")" start
	assert_equal "$(jq -r .policy <<<"$output")" '<embedded>'
	assert_equal "$(jq -r .probe.features.seccomp.ok <<<"$output")" true
	assert_equal "$(jq -r .layers.seccomp <<<"$output")" true
	# the launch record carries the same layers
	assert_equal "$(jq -c 'select(.type == "launch") | .layers' "$AUDIT")" "$(jq -c .layers <<<"$output")"
}
