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

. "$(dirname "$0")/call.sh"

# run NAME [ENV...]: the call's wall time (bench_call); its answer in
# $W/NAME.out
run() {
	local name=$1
	shift
	bench_call "$CW" "$POLICY" "$W" "$name" "$burst" "$@"
}

if [ "$("$CW" probe --json | jq -r .layers.bpf_trace)" != true ]; then
	echo "# skipped: no tracepoint BPF here: $("$CW" probe --json | jq -r .layers_off.bpf_trace)"
	exit 0
fi
traced=() untraced=() recorded=0 lost=0
for ((r = 0; r < ROUNDS; r++)); do
	rm -rf "$W"/state-* "$W"/audit-*.jsonl
	traced+=("$(run traced)")
	untraced+=("$(run untraced CW_PROBE_DISABLE=bpf_tracepoint,kaudit,fanotify)")
	exit_rec=$(jq -c 'select(.type == "exit")' "$W/audit-traced.jsonl")
	# every event seen: the records, and the opens summed in reads
	recorded=$(jq -r '.events | .exec + .file + .fork + .exit + (.reads // 0)' <<<"$exit_rec")
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
