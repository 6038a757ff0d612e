#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Many clients at once over Streamable HTTP: every request answered, rate
# limits exact under races, and nothing left behind in the agent.
# CW_E2E_SOAK="CLIENTS CALLS" scales it (default 50 200; an emulated
# machine runs fewer).

load helpers

setup() {
	cw_setup
	[ -d "$BATS_TEST_DIRNAME/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the MCP SDK is not installed (tests/run.sh installs it with npm ci)"
	make_tokens alice bob
}

teardown() {
	http_stop
}

# soak CLIENTS CALLS : runs the load; its JSON in $json
soak() {
	json=$(node "$BATS_TEST_DIRNAME/sdk-soak.mjs" "$URL" "$1" "$2" \
		alice="$TOKEN_alice" bob="$TOKEN_bob" 2>"$T/soak.err") ||
		fail "sdk-soak.mjs failed: $(cat "$T/soak.err")"
	assert_equal "$(jq -r .failed <<<"$json")" 0 ||
		fail "failed requests: $(jq -c .failures <<<"$json")"
}

# agent_fds / agent_rss_kib : the agent's open descriptors and resident KiB
agent_fds() { ls "/proc/$HTTP_PID/fd" | wc -l; }
agent_rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$HTTP_PID/status"; }

# settled_fds N : waits (up to 10 s) for the agent's descriptors to drop to
# N as the clients' connections close; prints the count it ended at
settled_fds() {
	local i n
	for i in $(seq 100); do
		n=$(agent_fds)
		[ "$n" -le "$1" ] && break
		sleep 0.1
	done
	echo "$n"
}

@test "concurrent HTTP clients: no failed request, exact per-grant limits, no growth of RSS or descriptors" {
	read -r clients calls <<<"${CW_E2E_SOAK:-50 200}"
	# the warm-up fills what is bounded but kept a while (1,024 sealed calls'
	# network entries, the counter database's cache): 30 calls per client,
	# or as many as the run makes when it makes fewer
	warm=$((calls < 30 ? calls : 30))
	[ $((clients % 2)) -eq 0 ] || fail "CW_E2E_SOAK needs an even number of clients"
	# per grant: half the clients, each making warm + calls calls; the limit
	# admits about 60% of them, so both outcomes race at the boundary
	per_grant=$((clients / 2 * (warm + calls)))
	max=$((per_grant * 3 / 5))
	[ "$max" -gt $((clients / 2 * warm)) ] || fail "CW_E2E_SOAK too small"
	jq -n --argjson max "$max" --argjson mc $((clients + 14)) '{version: "1", default: "deny",
		max_concurrent: $mc,
		tools: {run_command: {limits: [{counter: "soak", window: "hour", max: $max, scope: "grant"}]}}}' >"$T/soak.json"
	# one file, for jq to count from
	http_start --policy "$T/soak.json" --audit-max-bytes 0

	# warm up: every thread, arena and pool the load needs exists after it
	soak "$clients" "$warm"
	assert_equal "$(jq -c .counts <<<"$json")" \
		"{\"alice\":{\"ran\":$((clients / 2 * warm)),\"limited\":0},\"bob\":{\"ran\":$((clients / 2 * warm)),\"limited\":0}}"
	sleep 1
	fds0=$(agent_fds)
	rss0=$(agent_rss_kib)

	soak "$clients" "$calls"
	echo "# $clients clients x $calls calls: $(jq -r .ms <<<"$json") ms" >&3
	# exactly max per grant ran over both runs, the rest were limited
	ran=$((max - clients / 2 * warm))
	limited=$((per_grant - max))
	assert_equal "$(jq -c .counts <<<"$json")" \
		"{\"alice\":{\"ran\":$ran,\"limited\":$limited},\"bob\":{\"ran\":$ran,\"limited\":$limited}}"

	fds1=$(settled_fds "$fds0")
	rss1=$(agent_rss_kib)
	echo "# agent: $fds0 -> $fds1 descriptors, RSS $rss0 -> $rss1 KiB" >&3
	[ "$fds1" -le "$fds0" ] || fail "descriptors grew from $fds0 to $fds1: $(ls -l /proc/$HTTP_PID/fd)"
	# allocator noise is a few pages; a leak per call is 1000s of calls' worth
	[ "$rss1" -le $((rss0 + 1024)) ] || fail "RSS grew from $rss0 to $rss1 KiB"

	# the audit agrees, record by record, and its chain is whole
	http_stop
	assert_equal "$(jq -r 'select(.type == "decision") | "\(.grant) \(.verdict)"' "$AUDIT" | sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ';')" \
		"$max alice allow;$limited alice rate_limited;$max bob allow;$limited bob rate_limited;"
	assert_equal "$(jq -r 'select(.type == "exit") | .invocation' "$AUDIT" | sort -u | wc -l)" $((2 * max))
	run "$CW" audit verify "$AUDIT"
	assert_success
}
