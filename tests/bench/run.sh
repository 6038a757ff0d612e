#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make bench: one run, all numbers, each against its target.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
N=${BENCH_CALLS:-500}
work=$(mktemp -d /tmp/cmdwarden-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== decisions per second (in-memory counters)"
"$B/bench/bench_decide" | tee "$work/decide"
echo
echo "== tools/call run_command \"true\" over stdio vs bare fork+exec of bash -c true ($N each)"
echo "   (policy tests/bench/bench.json: the seed policy with a limit high enough not to refuse);"
echo "   b_: a second agent with only seccomp (CW_PROBE_DISABLE turns the other layers off), called in the same rounds"
"$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$work/state" "$work/audit.jsonl" "$N" landlock,cgroup2,call_namespaces | tee "$work/lat"
echo "   layers in force: all: $("$B/cmdwarden" probe --json | jq -c .layers)"
echo
echo "== the same with counters and audit log on tmpfs: the agent's own cost, without the disk's flush latency"
shm=$(mktemp -d /dev/shm/cmdwarden-bench.XXXXXX)
"$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$shm/state" "$shm/audit.jsonl" "$N" landlock,cgroup2,call_namespaces |
	sed 's/^/tmpfs_/' | tee "$work/lat-tmpfs"
rm -rf "$shm"

echo
echo "== the enforcement layers (Landlock, cgroup, eBPF network, namespaces) without kernel event tracing, against seccomp only (b_), in the same rounds"
CW_PROBE_DISABLE=bpf_tracepoint,fanotify "$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$work/state4" "$work/audit4.jsonl" "$N" landlock,cgroup2,call_namespaces |
	sed 's/^/untraced_/' | tee "$work/lat-untraced"
echo
echo "== kernel event tracing: every layer against every layer but tracing (b_), in the same rounds"
"$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$work/state5" "$work/audit5.jsonl" "$N" bpf_tracepoint,fanotify |
	sed 's/^/traced_/' | tee "$work/lat-traced"

echo
echo "== the calls' own namespaces: every layer against every layer but namespaces (b_), in the same rounds"
"$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$work/state6" "$work/audit6.jsonl" "$N" call_namespaces |
	sed 's/^/ns_/' | tee "$work/lat-ns"

echo
echo "== the calls' own user namespaces: every layer against every layer but the user namespace (b_), in the same rounds"
"$B/bench/bench_latency" "$B/cmdwarden" tests/bench/bench.json "$work/state7" "$work/audit7.jsonl" "$N" call_user_namespace |
	sed 's/^/userns_/' | tee "$work/lat-userns"

echo "== audit log: records per second (disk, then tmpfs), and verify"
"$B/bench/bench_audit" "$work" | tee "$work/audit"
shm=$(mktemp -d /dev/shm/cmdwarden-bench.XXXXXX)
"$B/bench/bench_audit" "$shm" | sed 's/^/tmpfs_/' | tee "$work/audit-tmpfs"
rm -rf "$shm"

echo
echo "== kernel-event records: building and writing exec and file records in batches of 256, on tmpfs (CPU per event)"
shm=$(mktemp -d /dev/shm/cmdwarden-bench.XXXXXX)
"$B/bench/bench_events" "$shm" | tee "$work/events"
rm -rf "$shm"

echo
echo "== denied syscalls answered and counted per second (sysprobe --flood 200000 unshare)"
cat >"$work/flood.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root",
  "filesystem":{"exec":["/usr","/bin","$(cd "$B/tests" && pwd)"]}}}}}
JSON
"$B/cmdwarden" exec --policy "$work/flood.json" --state-dir "$work/state3" --audit "$work/audit3.jsonl" \
	-- "$(cd "$B/tests" && pwd)/sysprobe --flood 200000 unshare" >"$work/flood.out"
ms=$(jq -r .duration_ms "$work/flood.out")
awk -v ms="$ms" 'BEGIN { printf "seccomp_denials_per_s %.0f\n", 200000 / (ms / 1000) }' | tee "$work/flood"
echo "   exit record: $(jq -c 'select(.type == "exit") | .seccomp' "$work/audit3.jsonl")"

echo
echo "== kernel events: one call executing 2,000 processes and opening 200,000 files, traced and untraced"
tests/bench/trace.sh "$B/cmdwarden" tests/bench/bench.json "$work" | tee "$work/trace"

echo
echo "== tracing's cost on busy commands (find, 20,000 opens, a compile): bare, bubblewrap, untraced and traced calls"
tests/bench/overhead.sh "$B/cmdwarden" tests/bench/bench.json "$work" | tee "$work/overhead"

echo
echo "== tools/call over Streamable HTTP (wrk, one session, state and audit on disk): denied tool, run_command \"true\""
# The tracing run above leaves much written and not yet on disk: the
# kernel's writeback of it would compete with the audit log's flushes.
sync
tests/bench/http.sh "$B/cmdwarden" tests/bench/bench.json "$work" | tee "$work/http"

echo
echo "== cmdwarden probe, the whole process (median of 5)"
for _ in 1 2 3 4 5; do
	a=$(date +%s%N)
	"$B/cmdwarden" probe --json >/dev/null
	echo $(( ($(date +%s%N) - a) / 1000000 ))
done | sort -n | sed -n 3p | sed 's/^/probe_ms /' | tee "$work/probe"

get() { awk -v k="$1" '$1 == k { print $2 }' "$work/decide" "$work/lat" "$work/lat-tmpfs" "$work/lat-untraced" "$work/lat-traced" "$work/lat-ns" "$work/lat-userns" "$work/audit" "$work/audit-tmpfs" "$work/events" "$work/flood" "$work/trace" "$work/overhead" "$work/http" "$work/probe"; }
ratio=$(awk -v a="$(get agent_call_median_us)" -v b="$(get bare_fork_exec_median_us)" 'BEGIN { printf "%.2f", a / b }')
ratio_core=$(awk -v a="$(get b_agent_call_median_us)" -v b="$(get bare_fork_exec_median_us)" 'BEGIN { printf "%.2f", a / b }')
ratio_tmpfs=$(awk -v a="$(get tmpfs_agent_call_median_us)" -v b="$(get tmpfs_bare_fork_exec_median_us)" 'BEGIN { printf "%.2f", a / b }')
ratio_core_tmpfs=$(awk -v a="$(get tmpfs_b_agent_call_median_us)" -v b="$(get tmpfs_bare_fork_exec_median_us)" 'BEGIN { printf "%.2f", a / b }')
echo
echo "== summary"
# The 1.5x target is the working core's (seccomp); the other layers are held
# to their own target below (under 1 ms on top of seccomp).
printf '  %-40s %12s   target %s\n' "median overhead, seccomp only (b_ / bare)" "${ratio_core}x" "< 1.5x"
printf '  %-40s %12s\n' "  the same, state and audit on tmpfs" "${ratio_core_tmpfs}x"
printf '  %-40s %12s\n' "median overhead, every layer (agent / bare)" "${ratio}x"
printf '  %-40s %12s\n' "  the same, state and audit on tmpfs" "${ratio_tmpfs}x"
printf '  %-40s %12s\n' "  p99 agent / bare (us)" "$(get agent_call_p99_us) / $(get bare_fork_exec_p99_us)"
# differences of agents called in the same rounds (bench_latency's b_)
gap() { awk -v a="$(get "$1")" -v b="$(get "$2")" 'BEGIN { printf "%d", a - b }'; }
printf '  %-40s %12s\n' "all layers vs seccomp only, median (us)" "+$(gap agent_call_median_us b_agent_call_median_us)"
printf '  %-40s %12s\n' "all layers vs seccomp only, p99 (us)" "+$(gap agent_call_p99_us b_agent_call_p99_us)"
printf '  %-40s %12s   target %s\n' "  Landlock+cgroup+eBPF+ns, median (us)" "+$(gap untraced_agent_call_median_us untraced_b_agent_call_median_us)" "< +1000"
printf '  %-40s %12s\n' "  Landlock+cgroup+eBPF+ns, p99 (us)" "+$(gap untraced_agent_call_p99_us untraced_b_agent_call_p99_us)"
printf '  %-40s %12s\n' "  kernel event tracing, median (us)" "+$(gap traced_agent_call_median_us traced_b_agent_call_median_us)"
printf '  %-40s %12s\n' "  the calls' namespaces, median (us)" "+$(gap ns_agent_call_median_us ns_b_agent_call_median_us)"
printf '  %-40s %12s\n' "  the calls' namespaces, p99 (us)" "+$(gap ns_agent_call_p99_us ns_b_agent_call_p99_us)"
printf '  %-40s %12s\n' "  their user namespaces, median (us)" "+$(gap userns_agent_call_median_us userns_b_agent_call_median_us)"
printf '  %-40s %12s\n' "  their user namespaces, p99 (us)" "+$(gap userns_agent_call_p99_us userns_b_agent_call_p99_us)"
for n in find opens compile; do
	printf '  %-40s %12s   target %s\n' "tracing's cost on $n (traced/untraced)" "+$(get overhead_${n}_tracing_pct)%" "<= 5%"
done
printf '  %-40s %12s   target %s\n' "probe, whole process (ms)" "$(get probe_ms)" "< 100"
printf '  %-40s %12s   target %s\n' "decisions/s, seed policy" "$(get decisions_per_s_seed)" ">= 500000"
printf '  %-40s %12s\n' "decisions/s, 50 regex conditions" "$(get decisions_per_s_50_regex)"
printf '  %-40s %12s   target %s\n' "agent peak RSS (KiB)" "$(get agent_peak_rss_kib | head -1)" "< 8192"
printf '  %-40s %12s\n' "  without kernel event tracing (KiB)" "$(get traced_b_agent_peak_rss_kib)"
printf '  %-40s %12s\n' "audit records/s, synced per 100" "$(get audit_records_per_s_sync_per_100)"
printf '  %-40s %12s\n' "  each synced" "$(get audit_records_per_s_sync_each)"
printf '  %-40s %12s\n' "  rotating every MiB" "$(get audit_records_per_s_rotating_1mib)"
printf '  %-40s %12s\n' "  on tmpfs, synced per 100" "$(get tmpfs_audit_records_per_s_sync_per_100)"
printf '  %-40s %12s\n' "audit verify, records/s" "$(get audit_verify_records_per_s)"
printf '  %-40s %12s\n' "kernel-event records/s, one thread" "$(get events_per_s)"
printf '  %-40s %12s\n' "  CPU per record (ns)" "$(get event_cpu_ns)"
printf '  %-40s %12s\n' "seccomp denials answered/s" "$(get seccomp_denials_per_s)"
printf '  %-40s %12s\n' "kernel events recorded/s (one call)" "$(get trace_events_per_s)"
printf '  %-40s %12s   target %s\n' "  events lost at the default ring buffer" "$(get trace_events_lost)" "0"
printf '  %-40s %12s   target %s\n' "  wall-time overhead of tracing (%)" "$(get trace_overhead_pct)" "< 15"
for kind in denied allowed; do
	for c in 1 8 32; do
		t=
		[ "$kind" = denied ] && [ "$c" = 32 ] && t=">= 20000"
		printf '  %-40s %12s   %s\n' "HTTP $kind, $c clients: req/s" "$(get "http_${kind}_c${c}_rps")" "${t:+target $t}"
		printf '  %-40s %12s\n' "  three runs (median above)" "$(get "http_${kind}_c${c}_rps_runs")"
		printf '  %-40s %12s\n' "  p50 / p99 (us)" "$(get "http_${kind}_c${c}_p50_us") / $(get "http_${kind}_c${c}_p99_us")"
	done
done
