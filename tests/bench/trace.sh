#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kernel event tracing under load: one call that executes 2,000 processes
# and opens 200,000 files, traced (bpf_tracepoint, the default ring buffer)
# and with every event source off. Prints key value lines for run.sh:
#   trace_events_recorded, trace_events_lost, trace_events_per_s,
#   trace_wall_ms_traced, trace_wall_ms_untraced, trace_overhead_pct
#   bench/trace.sh CMDWARDEN POLICY WORKDIR
set -euo pipefail
CW=$1
POLICY=$2
W=$3
burst='for i in $(seq 2000); do /bin/true; done; for i in $(seq 200000); do : </etc/hostname; done'

# run NAME [ENV...]: wall time of the whole call, the answer in $W/NAME.out
run() {
	local name=$1 start end
	shift
	start=$(date +%s%N)
	env "$@" "$CW" exec --policy "$POLICY" --state-dir "$W/state-$name" \
		--audit "$W/audit-$name.jsonl" -- "$burst" >"$W/$name.out" 2>/dev/null
	end=$(date +%s%N)
	echo $(((end - start) / 1000000))
}

if [ "$("$CW" probe --json | jq -r .layers.bpf_trace)" != true ]; then
	echo "# skipped: no tracepoint BPF here: $("$CW" probe --json | jq -r .layers_off.bpf_trace)"
	exit 0
fi
traced=$(run traced)
untraced=$(run untraced CW_PROBE_DISABLE=bpf_tracepoint,fanotify)
exit_rec=$(jq -c 'select(.type == "exit")' "$W/audit-traced.jsonl")
recorded=$(jq -r '.events | .exec + .file + .fork + .exit' <<<"$exit_rec")
lost=$(jq -r '.events_lost' <<<"$exit_rec")
ms=$(jq -r '.duration_ms' "$W/traced.out")
echo "trace_events_recorded $recorded"
echo "trace_events_lost $lost"
awk -v n="$recorded" -v ms="$traced" 'BEGIN { printf "trace_events_per_s %.0f\n", n / (ms / 1000) }'
echo "trace_command_ms_traced $ms"
echo "trace_command_ms_untraced $(jq -r .duration_ms "$W/untraced.out")"
echo "trace_wall_ms_traced $traced"
echo "trace_wall_ms_untraced $untraced"
awk -v a="$traced" -v b="$untraced" 'BEGIN { printf "trace_overhead_pct %.1f\n", (a - b) * 100 / b }'
