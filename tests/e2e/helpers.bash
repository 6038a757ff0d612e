# SPDX-License-Identifier: Apache-2.0
# Shared setup for the end-to-end tests: a private state dir and audit log
# per test, and helpers that drive `cmdwarden serve` over stdio.

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
CW="${CW:-$ROOT/build/cmdwarden}"
FIX="$ROOT/tests/fixtures"
# the test helper of tests/e2e/sysprobe.c
PROBE="$ROOT/build/tests/sysprobe"

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

need_sysprobe() {
	[ -x "$PROBE" ] || fail "sysprobe is not built; run make check"
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

# sandbox_account : the account commands run as under a policy that names
# none: "user" (an E2B template's), or nobody where no such account exists
# (docs/policy.md, sandbox.user)
sandbox_account() {
	if getent passwd user >/dev/null; then echo user; else echo nobody; fi
}

# A world-readable scratch directory for commands run as nobody.
public_dir() {
	local d
	d=$(mktemp -d /tmp/cw-pub.XXXXXX)
	chmod 0777 "$d"
	echo "$d" >>"$BATS_TEST_TMPDIR/.public_dirs"
	echo "$d"
}

# ---- MCP over HTTP -------------------------------------------------------

# make_tokens NAME[=POLICY]... : a token file at $T/tokens.json (0600) with
# a fresh token per grant, exported as TOKEN_<NAME>.
make_tokens() {
	local spec name policy out grants='{}'
	for spec in "$@"; do
		name=${spec%%=*}
		policy=
		[ "$spec" != "$name" ] && policy=${spec#*=}
		out=$("$CW" token "$name")
		printf -v "TOKEN_$name" '%s' "$(sed -n 1p <<<"$out")"
		grants=$(jq -c --argjson e "$(sed -n 2p <<<"$out")" --arg p "$policy" \
			'. + ($e | map_values(if $p != "" then . + {policy: $p} else . end))' <<<"$grants")
	done
	(umask 077 && jq -n --argjson g "$grants" '{grants: $g}' >"$T/tokens.json")
}

# http_start [SERVE_ARGS...] : serve --http on a free loopback port with
# $T/tokens.json; sets HTTP_PID and URL. Stop it with http_stop.
http_start() {
	local i port=
	# made first: the server opens them in its own time
	: >"$T/http.out"
	: >"$T/http.err"
	"$CW" serve --http 127.0.0.1:0 --tokens "$T/tokens.json" \
		--state-dir "$STATE" --audit "$AUDIT" "$@" \
		>"$T/http.out" 2>"$T/http.err" 3>&- </dev/null &
	HTTP_PID=$!
	for i in $(seq 100); do
		port=$(sed -n 's|.*MCP on http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/http.err")
		[ -n "$port" ] && break
		kill -0 "$HTTP_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$port" ] || fail "serve --http did not start: $(cat "$T/http.err")"
	URL="http://127.0.0.1:$port/mcp"
}

http_stop() {
	if [ -n "${HTTP_PID:-}" ]; then
		kill "$HTTP_PID" 2>/dev/null || true
		wait "$HTTP_PID" 2>/dev/null || true
		HTTP_PID=
	fi
}

# req METHOD TOKEN [SESSION] [BODY] [CURL_ARGS...] : one request; prints the
# status, leaves the headers in $T/h and the body in $T/b. $ACCEPT replaces
# the Accept header a conforming client sends.
req() {
	local method=$1 token=$2 session=${3:-} body=${4:-} args=()
	shift 4 2>/dev/null || shift $#
	[ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
	[ -n "$session" ] && args+=(-H "Mcp-Session-Id: $session")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	curl -sS -X "$method" -o "$T/b" -D "$T/h" -w '%{http_code}' \
		-H "Accept: ${ACCEPT:-application/json, text/event-stream}" "${args[@]}" "$@" "$URL"
}

# header NAME : a header of the last response
header() {
	tr -d '\r' <"$T/h" | sed -n "s/^$1: //Ip" | tail -1
}

# http_init TOKEN : initializes a session; prints its id
http_init() {
	local code
	code=$(req POST "$1" "" "$INIT") || return 1
	[ "$code" = 200 ] || { echo "initialize: HTTP $code $(cat "$T/b")" >&2; return 1; }
	header Mcp-Session-Id
}

# sse_data : the JSON of the data lines of an SSE body in $T/b
sse_data() {
	sed -n 's/^data: //p' "$T/b"
}

# Removes this test's public directories (only its own: other test runs
# may be using theirs).
public_dirs_remove() {
	local d
	[ -f "$BATS_TEST_TMPDIR/.public_dirs" ] || return 0
	while read -r d; do
		rm -rf "$d"
	done <"$BATS_TEST_TMPDIR/.public_dirs"
	rm -f "$BATS_TEST_TMPDIR/.public_dirs"
}
