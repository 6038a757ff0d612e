#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# cmdwarden audit verify/tail/query/stats, rotation of the log by size and
# retention of its files.

load helpers

setup() {
	cw_setup
}

# a log with calls: one allowed that succeeds, one failing, one denied tool
make_log() {
	mcp "$@" -- "$(call_json 1 'echo one')" "$(call_json 2 'exit 3')" \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
	[ "$(resp 1 | jq -r .result.isError)" = false ] || fail "call 1 failed: $(cat "$T/out")"
}

@test "audit verify passes on a real log and names the first bad line of each kind of damage" {
	make_log
	run "$CW" audit verify "$AUDIT"
	assert_success
	# the calls' kernel events are records too, where the kernel gives them
	assert_output --partial "ok, $(wc -l <"$AUDIT") records in 1 file"
	cp "$AUDIT" "$T/orig"
	# an edited value: the next line's prev no longer matches line 3
	# (calls run concurrently: whatever record line 3 holds)
	sed '3s/"type":"/"type":"x/' "$T/orig" >"$AUDIT"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "$AUDIT:3: edited"
	# a deleted line
	sed '4d' "$T/orig" >"$AUDIT"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "$AUDIT:4: missing: expected seq 4, found 5"
	# two lines swapped
	awk 'NR==5{held=$0; next} NR==6{print; print held; next} {print}' "$T/orig" >"$AUDIT"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "$AUDIT:5: out of order"
	# cut short, as by a crash in the middle of a write
	head -c -20 "$T/orig" >"$AUDIT"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "$AUDIT:$(wc -l <"$T/orig"): torn last line"
	# and the original, once more
	cp "$T/orig" "$AUDIT"
	run "$CW" audit verify --audit "$AUDIT"
	assert_success
}

@test "the log rotates by size and the chain runs across its files" {
	# the seed policy allows 10 calls a minute (here with room for all
	# nine to run at once)
	calls=()
	for i in $(seq 1 9); do calls+=("$(call_json "$i" "echo $i")"); done
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" --audit-max-bytes 4096 -- "${calls[@]}"
	[ -f "$AUDIT.1" ] || fail "no rotated file: $(ls "$(dirname "$AUDIT")")"
	for f in "$AUDIT".* "$AUDIT"; do
		[ "$(stat -c %s "$f")" -le 4096 ] || fail "$f passed the limit"
		assert_equal "$(stat -c %a "$f")" 600
	done
	n=$(ls "$AUDIT".* | wc -l)
	# the current file's first record names the one before it
	assert_equal "$(head -1 "$AUDIT" | jq -r .rotated_from)" "audit.jsonl.$n"
	assert_equal "$(head -1 "$AUDIT" | jq -r .prev)" "$(tail -1 "$AUDIT.$n" | tr -d '\n' | sha256sum | cut -d' ' -f1)"
	total=$(cat "$AUDIT".* "$AUDIT" | wc -l)
	run "$CW" audit verify "$AUDIT"
	assert_success
	assert_output --partial "ok, $total records in $((n + 1)) files"
	# every call's records are found across the files
	run "$CW" audit query --type exit "$AUDIT"
	assert_equal "$(wc -l <<<"$output")" 9
	# a rotated file removed from the set is reported where the chain breaks
	mv "$AUDIT.1" "$T/aside"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "$AUDIT.2:1: missing: this file continues audit.jsonl.1, which is not present"
	mv "$T/aside" "$AUDIT.1"
	# a restart continues the set
	mcp --audit-max-bytes 4096 -- "$(call_json 1 true)"
	run "$CW" audit verify "$AUDIT"
	assert_success
}

@test "past --audit-max-total the oldest files are removed, each removal recorded in the chain, and the rest verifies" {
	# eight calls, and one that floods the log with file records where
	# the kernel's events are traced
	calls=()
	for i in $(seq 1 8); do calls+=("$(call_json "$i" "echo $i")"); done
	calls+=("$(call_json 9 'd=$(mktemp -d) && for i in $(seq 1500); do : >"$d/f$i"; done && rm -r "$d" && echo flooded')")
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" --audit-max-bytes 8K --audit-max-total 32K -- "${calls[@]}"
	assert_equal "$(text 9 | jq -r .stdout)" flooded
	# bounded: the files together, and the oldest gone
	[ "$(cat "$AUDIT".* "$AUDIT" | wc -c)" -le 32768 ] || fail "$(ls -l "$(dirname "$AUDIT")")"
	[ ! -e "$AUDIT.1" ] || fail "audit.jsonl.1 was kept"
	# each removal is a record naming the files and the last record they held
	run jq -sr '[.[] | select(.type == "pruned")] | last | [(.removed | length > 0), (.through_seq > 0), (.through_hash | length), .max_total] | @tsv' $(ls "$AUDIT".* "$AUDIT")
	assert_output "$(printf 'true	true	64	32768')"
	# the rest verifies from where it starts, and every call's exit is kept
	run "$CW" audit verify "$AUDIT"
	assert_success
	assert_output --regexp 'starts at seq [0-9]+: retention removed the older files, recorded at seq [0-9]+'
	# (where the last files begin depends on the records' sizes and on
	# the calls running at once: the flood's exit is in one of them, once)
	inv9=$(structured 9 invocation_id)
	assert_equal "$(jq -r 'select(.type == "exit") | .invocation' $(ls "$AUDIT".* "$AUDIT") | grep -c "^$inv9\$")" 1
	assert_equal "$(jq -r 'select(.type == "exit") | .invocation' $(ls "$AUDIT".* "$AUDIT") | sort | uniq -d)" ''
	# a file taken away without a record is not mistaken for retention
	oldest=$(ls "$AUDIT".* | sort -t. -k3 -n | head -1)
	rm "$oldest"
	run "$CW" audit verify "$AUDIT"
	assert_failure 1
	assert_output --partial "which is not present, and no pruned record says retention removed it"
	# sizes that cannot work are refused, naming the option
	run "$CW" exec --audit "$AUDIT" --audit-max-total 100 -- true
	assert_failure
	assert_output --partial '--audit-max-total wants 0 (keep every file) or a size of at least 4096 bytes'
	run "$CW" exec --audit "$T/other.jsonl" --state-dir "$STATE" --audit-max-bytes 8K --audit-max-total 4K -- true
	assert_failure
	assert_output --partial '--audit-max-total (4096 bytes) is less than one file of --audit-max-bytes (8192 bytes)'
}

@test "audit query selects by invocation, type, verdict and time, as JSON Lines" {
	make_log
	inv=$(structured 1 invocation_id)
	run "$CW" audit query --invocation "$inv" "$AUDIT"
	assert_success
	assert_equal "$(jq -r 'select(.type == "decision" or .type == "launch" or .type == "exit") | .type' <<<"$output" | tr '\n' ' ')" "decision launch exit "
	assert_equal "$(jq -r .type <<<"$output" | tail -1)" exit
	assert_equal "$(jq -r .invocation <<<"$output" | sort -u)" "$inv"
	# the lines are the log's own, byte for byte
	assert_equal "$output" "$(grep -F "\"invocation\":\"$inv\"" "$AUDIT")"
	run "$CW" audit query --type exit,agent "$AUDIT"
	assert_equal "$(jq -r .type <<<"$output" | tr '\n' ' ')" "agent exit exit "
	run "$CW" audit query --type decision --verdict deny "$AUDIT"
	assert_equal "$(jq -r .tool <<<"$output")" nope
	# time: everything since an hour ago, nothing since tomorrow
	run "$CW" audit query --since 1h "$AUDIT"
	assert_equal "$(wc -l <<<"$output")" "$(wc -l <"$AUDIT")"
	tomorrow=$(date -u -d tomorrow +%Y-%m-%d)
	run "$CW" audit query --since "$tomorrow" "$AUDIT"
	assert_success
	assert_output ""
	first=$(head -1 "$AUDIT" | jq -r .ts)
	run "$CW" audit query --until "$first" "$AUDIT"
	assert_equal "$(jq -r .seq <<<"$output")" 1
}

@test "audit query and tail refuse bad input, saying what was wrong" {
	make_log
	run "$CW" audit query --type seccom "$AUDIT"
	assert_failure 2
	assert_output --partial '--type "seccom" is not a record type; expected one of'
	run "$CW" audit query --since yesterday "$AUDIT"
	assert_failure 2
	assert_output --partial '--since wants RFC 3339'
	run "$CW" audit query --since 2026-11-30T10:00:00 "$AUDIT"
	assert_failure 2
	run "$CW" audit query --since 2h --until 3h "$AUDIT"
	assert_failure 2
	assert_output --partial 'is after --until'
	run "$CW" audit tail -n many "$AUDIT"
	assert_failure 2
	assert_output --partial '-n wants a number'
	run "$CW" audit query "$AUDIT" "$AUDIT"
	assert_failure 2
	assert_output --partial 'one audit log at most'
	run "$CW" audit frobnicate
	assert_failure 2
	assert_output --partial 'unknown subcommand "frobnicate"'
	run "$CW" audit stats "$T/no/such.jsonl"
	assert_failure 1
	assert_output --partial "$T/no/such.jsonl: opening the audit log failed: No such file or directory"
	run "$CW" audit verify "$T/no/such.jsonl"
	assert_failure 1
	assert_output --partial "No such file or directory"
	# a line that is not a record is reported with its place, and the rest is read
	cp "$AUDIT" "$T/damaged.jsonl"
	sed -i '2s/.*/garbage/' "$T/damaged.jsonl"
	run "$CW" audit query --type exit "$T/damaged.jsonl"
	assert_success
	assert_output --partial "$T/damaged.jsonl:2: not a record"
	assert_equal "$(grep -c '"type":"exit"' <<<"$output")" 2
}

@test "audit stats counts types, verdicts and denials" {
	make_log
	run "$CW" audit stats --json "$AUDIT"
	assert_success
	n=$(wc -l <"$AUDIT")
	assert_equal "$(jq -r .records <<<"$output")" "$n"
	assert_equal "$(jq -r .calls <<<"$output")" 2
	for t in agent decision launch exit exec file process; do
		assert_equal "$(jq -r ".by_type.$t // 0" <<<"$output")" "$(jq -r "select(.type==\"$t\") | .seq" "$AUDIT" | wc -l)"
	done
	assert_equal "$(jq -r .decisions.allow <<<"$output")" 2
	assert_equal "$(jq -r .decisions.deny <<<"$output")" 1
	assert_equal "$(jq -r .events_lost <<<"$output")" 0
	# each call run counted once per event source (or as none)
	assert_equal "$(jq '[.event_sources[]] | max' <<<"$output")" 2
	assert_equal "$(jq -r '.event_sources | keys | join(",")' <<<"$output")" "$(jq -rs '[.[] | select(.type == "exit") | (if (.sources | length) == 0 then ["none"] else .sources end)[]] | unique | join(",")' "$AUDIT")"
	assert_equal "$(jq -r .unreadable_lines <<<"$output")" 0
	run "$CW" audit stats "$AUDIT"
	assert_success
	assert_output --partial "$(printf 'records           %s' "$n")"
	assert_output --partial "allow=2"
}

@test "audit tail prints the last records and follows new ones across a rotation" {
	make_log
	run "$CW" audit tail -n 2 "$AUDIT"
	assert_success
	assert_equal "$output" "$(tail -2 "$AUDIT")"
	run "$CW" audit tail -n 0 "$AUDIT"
	assert_output ""
	"$CW" audit tail -f -n 1 "$AUDIT" >"$T/follow" 2>"$T/follow.err" 3>&- </dev/null &
	tpid=$!
	calls=()
	for i in $(seq 1 8); do calls+=("$(call_json "$i" "echo follow-$i")"); done
	# fresh counters: the seed policy allows 10 calls a minute
	STATE="$T/state2"
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" --audit-max-bytes 4096 -- "${calls[@]}"
	[ -f "$AUDIT.1" ] || fail "the log did not rotate"
	# exit records after the first line (the last one before: calls run
	# concurrently, so it may be an exit record too)
	new_exits() { jq -s '[.[1:][] | select(.type == "exit")] | length' "$T/follow"; }
	for _ in $(seq 1 50); do
		[ "$(new_exits)" -ge 8 ] && break
		sleep 0.1
	done
	kill "$tpid"
	wait "$tpid" || true
	# every record written after the tail started, once, in order
	assert_equal "$(new_exits)" 8
	seqs=$(jq -r .seq "$T/follow")
	assert_equal "$seqs" "$(seq "$(head -1 <<<"$seqs")" "$(tail -1 <<<"$seqs")")"
	assert_equal "$(tail -1 "$T/follow")" "$(tail -1 "$AUDIT")"
}

@test "audit verify prints an anchor that shows records later cut from the end" {
	make_log
	run "$CW" audit verify "$AUDIT"
	assert_success
	anchor=$(sed -n 's/^anchor: //p' <<<"$output")
	last=$(tail -1 "$AUDIT")
	assert_equal "$anchor" "$(jq -r .seq <<<"$last"):$(printf '%s' "$last" | sha256sum | cut -d' ' -f1)"
	# records appended later keep the anchor valid
	mcp -- "$(call_json 9 true)"
	run "$CW" audit verify --anchor "$anchor" "$AUDIT"
	assert_success
	assert_output --partial "through the anchor"
	# the tail cut off cleanly: the chain alone cannot tell, the anchor can
	nlines=$(wc -l <"$AUDIT")
	head -n "$((${anchor%%:*} - 1))" "$AUDIT" >"$T/cut"
	cp "$T/cut" "$AUDIT"
	run "$CW" audit verify "$AUDIT"
	assert_success
	run "$CW" audit verify --anchor "$anchor" "$AUDIT"
	assert_failure 1
	assert_output --partial "missing: the log ends at seq $((${anchor%%:*} - 1)), before the anchored seq ${anchor%%:*}"
	run "$CW" audit verify --anchor 12:nothex "$AUDIT"
	assert_failure 2
	assert_output --partial '--anchor wants SEQ:SHA256'
	[ "$nlines" -gt "${anchor%%:*}" ]
}

@test "audit tail -f prints a line that was being written when it started, whole, once it is complete" {
	make_log
	last=$(tail -1 "$AUDIT")
	head -n -1 "$AUDIT" >"$T/log.jsonl"
	printf '%s' "${last:0:40}" >>"$T/log.jsonl"
	"$CW" audit tail -f -n 1 "$T/log.jsonl" >"$T/follow" 2>"$T/follow.err" 3>&- </dev/null &
	tpid=$!
	for _ in $(seq 1 50); do
		[ -s "$T/follow" ] && break
		sleep 0.1
	done
	printf '%s\n' "${last:40}" >>"$T/log.jsonl"
	for _ in $(seq 1 50); do
		[ "$(wc -l <"$T/follow")" -ge 2 ] && break
		sleep 0.1
	done
	kill "$tpid"
	wait "$tpid" || true
	assert_equal "$(wc -l <"$T/follow")" 2
	assert_equal "$(tail -1 "$T/follow")" "$last"
	assert_equal "$(head -1 "$T/follow")" "$(tail -2 "$AUDIT" | head -1)"
	grep -q "log.jsonl:$(wc -l <"$AUDIT"): incomplete last line" "$T/follow.err" || fail "no warning: $(cat "$T/follow.err")"
}
