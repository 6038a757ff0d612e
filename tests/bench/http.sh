#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tools/call over Streamable HTTP under load: wrk (tests/bench/http.lua)
# with 1, 8 and 32 connections in one session, three runs each, for
# run_command "true" (allowed: fork+exec under every layer) and for a denied
# tool (the fast path: policy decision and one audit record). State and
# audit on disk, as in production. Prints key value lines for run.sh:
#   http_{allowed,denied}_c{1,8,32}_{rps,p50_us,p99_us}  the median run
#   http_{allowed,denied}_c{1,8,32}_rps_runs             all three
#   bench/http.sh CMDWARDEN POLICY WORKDIR
# BENCH_HTTP_SECONDS: seconds per run (default 5).
set -euo pipefail
CW=$1
POLICY=$2
W=$3
SECS=${BENCH_HTTP_SECONDS:-5}
LUA="$(cd "$(dirname "$0")" && pwd)/http.lua"

command -v wrk >/dev/null || { echo "# skipped: wrk is missing (make deps installs it)"; exit 0; }

out=$("$CW" token bench)
token=$(sed -n 1p <<<"$out")
(umask 077 && jq -n --argjson e "$(sed -n 2p <<<"$out")" '{grants: $e}' >"$W/http-tokens.json")
: >"$W/http.err"
"$CW" serve --http 127.0.0.1:0 --tokens "$W/http-tokens.json" --policy "$POLICY" \
	--state-dir "$W/http-state" --audit "$W/http-audit.jsonl" \
	</dev/null >/dev/null 2>"$W/http.err" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
port=
for _ in $(seq 100); do
	port=$(sed -n 's|.*MCP on http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$W/http.err")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { echo "# serve --http did not start: $(cat "$W/http.err")" >&2; exit 1; }
url="http://127.0.0.1:$port/mcp"
session=$(curl -sS -D - -o /dev/null -H "Authorization: Bearer $token" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	--data-binary '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
	"$url" | tr -d '\r' | sed -n 's/^mcp-session-id: //Ip')
[ -n "$session" ] || { echo "# initialize gave no session id" >&2; exit 1; }
curl -sS -o /dev/null -H "Authorization: Bearer $token" -H "Mcp-Session-Id: $session" \
	-H 'MCP-Protocol-Version: 2025-06-18' -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	--data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$url"

# Each row is the median of three runs by requests per second (this
# machine's load moves single runs by 10-20%), with that run's latencies;
# the three rates are printed too.
for kind in denied allowed; do
	for c in 1 8 32; do
		for r in 1 2 3; do
			wrk -t "$((c < 2 ? 1 : 2))" -c "$c" -d "${SECS}s" -s "$LUA" "$url" -- \
				"$token" "$session" "$kind" >"$W/wrk-$kind-$c-$r" 2>&1 || {
				echo "# wrk failed: $(cat "$W/wrk-$kind-$c-$r")" >&2
				exit 1
			}
			bad=$(awk '$1 == "checked_bad" { print $2 }' "$W/wrk-$kind-$c-$r")
			if [ "${bad:-1}" != 0 ]; then
				echo "# $kind with $c connections: $bad unexpected responses; $(grep '^first_bad' "$W/wrk-$kind-$c-$r")" >&2
				exit 1
			fi
			echo "$(awk '$1 == "rps" { print $2 }' "$W/wrk-$kind-$c-$r") $r"
		done >"$W/wrk-$kind-$c"
		mid=$(sort -n "$W/wrk-$kind-$c" | sed -n 2p | cut -d' ' -f2)
		for k in rps p50_us p99_us; do
			echo "http_${kind}_c${c}_$k $(awk -v k="$k" '$1 == k { print $2 }' "$W/wrk-$kind-$c-$mid")"
		done
		echo "http_${kind}_c${c}_rps_runs $(cut -d' ' -f1 "$W/wrk-$kind-$c" | paste -sd,)"
	done
done
echo "http_audit_records $(wc -l <"$W/http-audit.jsonl")"
