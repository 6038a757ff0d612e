#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What tracing costs the commands that make the most system calls: find
# over two large trees, a bash loop of 20,000 opens, and a compile of 24 of
# cmdwarden's own sources. Each runs, in ROUNDS interleaved rounds
# (default 5): bare (bash -c), under bubblewrap (--unshare-all, the root
# read-only), and through an agent already serving, with every layer on
# and tracing on (traced) or off (untraced: no kernel event source). The
# call's wall time is from its request to its answer. Prints key value
# lines for run.sh: overhead_NAME_{bare,bwrap,untraced,traced}_ms (the
# median, then every round) and overhead_NAME_tracing_pct (traced against
# untraced, medians), overhead_NAME_traced_vs_bare (a ratio).
#   bench/overhead.sh CMDWARDEN POLICY WORKDIR [ROUNDS]
set -euo pipefail
CW=$1
POLICY=$2
W=$3
ROUNDS=${4:-5}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$W/objs"
# the calls' account makes the objects
chmod 0711 "$W"
chmod 0777 "$W/objs"
srcs=$(cd "$ROOT" && ls userspace/*/*.c | head -24 | sed "s|^|$ROOT/|" | tr '\n' ' ')
declare -A CMD=(
	[find]='find /usr/lib /usr/share -xdev >/dev/null 2>&1; true'
	[opens]='for i in $(seq 20000); do : </etc/hostname; done'
	[compile]="cd $W/objs && for f in $srcs; do gcc -O1 -D_GNU_SOURCE -I$ROOT -I$ROOT/userspace -I$ROOT/agent -I$ROOT/build -c \$f -o \$(basename \$f).o || exit 1; done"
)
NAMES=(find opens compile)

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

bare() {
	local t=$(date +%s%N)
	bash -c "$1" >/dev/null 2>&1 || echo "overhead: bare failed" >&2
	ms_since "$t"
}

bwrap_run() {
	local t=$(date +%s%N)
	bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
		--bind "$W/objs" "$W/objs" --unshare-all --die-with-parent \
		bash -c "$1" >/dev/null 2>&1 || echo "overhead: bwrap failed" >&2
	ms_since "$t"
}

. "$(dirname "$0")/call.sh"

# agent NAME CMD [ENV...]: the call's wall time (bench_call); a call that
# fails says so
agent() {
	local name=$1 cmd=$2
	shift 2
	bench_call "$CW" "$POLICY" "$W" "$name" "$cmd" "$@"
	[ "$(jq -r .exit_code "$W/$name.out")" = 0 ] ||
		echo "overhead: $name failed: $(head -c 400 "$W/$name.out")" >&2
}

have_bwrap=true
if ! command -v bwrap >/dev/null || ! bwrap --ro-bind / / --unshare-all true 2>/dev/null; then
	have_bwrap=false
	echo "# bubblewrap is not installed or cannot run here: its column is left out"
fi
src=$("$CW" probe --json | jq -r 'if .layers.bpf_trace then "bpf_tracepoint" elif .features.kaudit.ok then "kaudit" else "none" end')
echo "# traced with $src"

for n in "${NAMES[@]}"; do
	declare -a "B_$n=()" "W_$n=()" "U_$n=()" "T_$n=()"
	bare "${CMD[$n]}" >/dev/null	# the page cache warm for all
done
for ((r = 0; r < ROUNDS; r++)); do
	for n in "${NAMES[@]}"; do
		rm -rf "$W"/state-* "$W"/audit-*.jsonl "$W"/objs/*.o
		eval "B_$n+=(\$(bare \"\${CMD[$n]}\"))"
		if $have_bwrap; then
			rm -f "$W"/objs/*.o
			eval "W_$n+=(\$(bwrap_run \"\${CMD[$n]}\"))"
		fi
		rm -f "$W"/objs/*.o
		eval "U_$n+=(\$(agent untraced \"\${CMD[$n]}\" CW_PROBE_DISABLE=bpf_tracepoint,kaudit,fanotify))"
		rm -f "$W"/objs/*.o
		eval "T_$n+=(\$(agent traced \"\${CMD[$n]}\"))"
	done
done
for n in "${NAMES[@]}"; do
	eval "b=(\"\${B_$n[@]}\") w=(\"\${W_$n[@]}\") u=(\"\${U_$n[@]}\") t=(\"\${T_$n[@]}\")"
	mb=$(median "${b[@]}") mu=$(median "${u[@]}") mt=$(median "${t[@]}")
	echo "overhead_${n}_bare_ms $mb (rounds: ${b[*]})"
	if $have_bwrap; then
		echo "overhead_${n}_bwrap_ms $(median "${w[@]}") (rounds: ${w[*]})"
	fi
	echo "overhead_${n}_untraced_ms $mu (rounds: ${u[*]})"
	echo "overhead_${n}_traced_ms $mt (rounds: ${t[*]})"
	awk -v a="$mt" -v b="$mu" -v n="$n" 'BEGIN { printf "overhead_%s_tracing_pct %.1f\n", n, (a - b) * 100 / b }'
	awk -v a="$mt" -v b="$mb" -v n="$n" 'BEGIN { printf "overhead_%s_traced_vs_bare %.2f\n", n, a / b }'
done
