# SPDX-License-Identifier: Apache-2.0
# Sourced by the bench scripts that time one call at a time.

# bench_call CW POLICY WORKDIR NAME CMD [ENV...]: the wall time in ms of
# one run_command call, from its request to its answer, on an agent already
# serving (its start, and loading the tracing programs, are not the call's
# cost), started with ENV; its state and log are WORKDIR/state-NAME and
# WORKDIR/audit-NAME.jsonl, the answer's structuredContent WORKDIR/NAME.out
bench_call() {
	local cw=$1 policy=$2 w=$3 name=$4 cmd=$5 start end line
	shift 5
	coproc AGENT { env "$@" "$cw" serve --policy "$policy" \
		--state-dir "$w/state-$name" --audit "$w/audit-$name.jsonl" 2>/dev/null; }
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >&"${AGENT[1]}"
	read -r line <&"${AGENT[0]}"
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${AGENT[1]}"
	jq -cn --arg c "$cmd" '{jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"run_command",arguments:{command:$c,timeout:600}}}' >"$w/$name.req"
	start=$(date +%s%N)
	cat "$w/$name.req" >&"${AGENT[1]}"
	read -r line <&"${AGENT[0]}"
	end=$(date +%s%N)
	exec {AGENT[1]}>&-
	wait "$AGENT_PID" || true
	jq -c '.result.structuredContent' <<<"$line" >"$w/$name.out"
	echo $(((end - start) / 1000000))
}

# median N... : the median of the numbers given
median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
