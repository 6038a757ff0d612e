# SPDX-License-Identifier: Apache-2.0
# Shared setup for the end-to-end tests: a private state dir and audit log
# per test, and helpers that drive `cmdwarden serve` over stdio.

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
CW="${CW:-$ROOT/build/cmdwarden}"
FIX="$ROOT/tests/fixtures"

load_libs() {
	load '/usr/lib/bats/bats-support/load'
	load '/usr/lib/bats/bats-assert/load'
}

cw_setup() {
	load_libs
	[ -x "$CW" ] || fail "cmdwarden is not built ($CW); run make"
	T="$BATS_TEST_TMPDIR"
	STATE="$T/state"
	AUDIT="$T/audit/audit.jsonl"
}

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bats","version":"1"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# call_json ID COMMAND [EXTRA_ARGS_JSON] -> a tools/call request line
call_json() {
	local extra=${3:-'{}'}
	jq -cn --argjson id "$1" --arg cmd "$2" --argjson extra "$extra" \
		'{jsonrpc:"2.0",id:$id,method:"tools/call",params:{name:"run_command",arguments:({command:$cmd}+$extra)}}'
}

# serve [ARGS...] < lines : runs the server on stdin, output in $T/out
serve() {
	"$CW" serve --state-dir "$STATE" --audit "$AUDIT" "$@" >"$T/out" 2>"$T/err"
}

# mcp [SERVE_ARGS...] -- LINE... : initialize, then send each line
mcp() {
	local args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	{ printf '%s\n' "$INIT" "$INITIALIZED"; printf '%s\n' "$@"; } | serve "${args[@]}"
}

# resp ID : the response with that id from $T/out
resp() {
	jq -c --argjson id "$1" 'select(.id == $id)' "$T/out"
}

# structured ID FIELD : a field of a tool result's structuredContent
structured() {
	resp "$1" | jq -r ".result.structuredContent.$2"
}

# text ID : the text of a tool result's first content block
text() {
	resp "$1" | jq -r '.result.content[0].text'
}

# A world-readable scratch directory for commands run as nobody.
public_dir() {
	local d
	d=$(mktemp -d /tmp/cw-e2e.XXXXXX)
	chmod 0777 "$d"
	echo "$d"
}
