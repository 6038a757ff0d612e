#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kernel event tracing under load: one call that executes 2,000 processes
# and opens 200,000 files, traced (bpf_tracepoint, the default ring buffer)
# and with every event source off, in ROUNDS interleaved pairs (default 5:
# one pair's difference is within this machine's noise); the overhead is
# that of the medians. Prints key value lines for run.sh:
#   trace_events_recorded, trace_events_lost (the most of any round),
#   trace_events_per_s, trace_wall_ms_traced, trace_wall_ms_untraced
#   (medians, then every round), trace_overhead_pct
#   bench/trace.sh CMDWARDEN POLICY WORKDIR [ROUNDS]
set -euo pipefail
CW=$1
POLICY=$2
W=$3
ROUNDS=${4:-5}
burst='for i in $(seq 2000); do /bin/true; done; for i in $(seq 200000); do : </etc/hostname; done'

# run NAME [ENV...]: wall time of the call, from the request to its answer,
# on an agent already serving (loading the tracing programs is a cost of
# the agent's start, paid once, not of a call); the answer in $W/NAME.out
run() {
	local name=$1 start end line
	shift
	coproc AGENT { env "$@" "$CW" serve --policy "$POLICY" \
		--state-dir "$W/state-$name" --audit "$W/audit-$name.jsonl" 2>/dev/null; }
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >&"${AGENT[1]}"
	read -r line <&"${AGENT[0]}"
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${AGENT[1]}"
	jq -cn --arg c "$burst" '{jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"run_command",arguments:{command:$c}}}' >"$W/$name.req"
	start=$(date +%s%N)
	cat "$W/$name.req" >&"${AGENT[1]}"
	read -r line <&"${AGENT[0]}"
	end=$(date +%s%N)
	exec {AGENT[1]}>&-
	wait "$AGENT_PID" || true
	jq -c '.result.structuredContent' <<<"$line" >"$W/$name.out"
	echo $(((end - start) / 1000000))
}

if [ "$("$CW" probe --json | jq -r .layers.bpf_trace)" != true ]; then
	echo "# skipped: no tracepoint BPF here: $("$CW" probe --json | jq -r .layers_off.bpf_trace)"
	exit 0
fi
# median of the numbers given
median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

traced=() untraced=() recorded=0 lost=0
for ((r = 0; r < ROUNDS; r++)); do
	rm -rf "$W"/state-* "$W"/audit-*.jsonl
	traced+=("$(run traced)")
	untraced+=("$(run untraced CW_PROBE_DISABLE=bpf_tracepoint,fanotify)")
	exit_rec=$(jq -c 'select(.type == "exit")' "$W/audit-traced.jsonl")
	recorded=$(jq -r '.events | .exec + .file + .fork + .exit' <<<"$exit_rec")
	n=$(jq -r '.events_lost' <<<"$exit_rec")
	[ "$n" -gt "$lost" ] && lost=$n
done
t=$(median "${traced[@]}")
u=$(median "${untraced[@]}")
echo "trace_events_recorded $recorded"
echo "trace_events_lost $lost"
awk -v n="$recorded" -v ms="$t" 'BEGIN { printf "trace_events_per_s %.0f\n", n / (ms / 1000) }'
echo "trace_wall_ms_traced $t (rounds: ${traced[*]})"
echo "trace_wall_ms_untraced $u (rounds: ${untraced[*]})"
awk -v a="$t" -v b="$u" 'BEGIN { printf "trace_overhead_pct %.1f\n", (a - b) * 100 / b }'
