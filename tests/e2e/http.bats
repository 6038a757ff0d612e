#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# MCP Streamable HTTP: every rule of the transport is tried against curl,
# the refusal and its legitimate twin, with the server still serving after.

load helpers

setup() {
	cw_setup
	make_tokens alice bob
}

teardown() {
	http_stop
	broken_disk_remove
}

# broken_disk : an ext4 file system ($BROKEN/m) on a loop device whose
# backing file lives on an 8 MiB tmpfs ($BROKEN/t); filling the tmpfs makes
# the file system's writes fail, so fdatasync reports an I/O error.
broken_disk() {
	local b="$T/broken"
	command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null ||
		skip "mkfs.ext4 or losetup is not installed"
	mkdir -p "$b/t" "$b/m"
	mount -t tmpfs -o size=8m tmpfs "$b/t" || skip "cannot mount tmpfs here"
	BROKEN=$b
	truncate -s 64M "$b/t/img"
	mkfs.ext4 -q -F "$b/t/img" || fail "mkfs.ext4 failed"
	BROKEN_DEV=$(losetup -f --show "$b/t/img") || skip "no loop device"
	mount "$BROKEN_DEV" "$b/m" || fail "cannot mount the loop device"
}

broken_disk_remove() {
	[ -n "${BROKEN:-}" ] || return 0
	umount "$BROKEN/m" 2>/dev/null || true
	[ -n "${BROKEN_DEV:-}" ] && losetup -d "$BROKEN_DEV" 2>/dev/null
	umount "$BROKEN/t" 2>/dev/null || true
	BROKEN= BROKEN_DEV=
}

CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo ran-$((6*7))"}}}'
LIST='{"jsonrpc":"2.0","id":3,"method":"tools/list"}'

# decisions : how many decision records the audit log holds
decisions() {
	jq -s '[.[] | select(.type == "decision")] | length' "$AUDIT"
}

@test "no token or a wrong token: 401, audited, nothing decided; the right token works" {
	http_start
	run req POST "" "" "$INIT"
	assert_output 401
	assert_equal "$(header WWW-Authenticate)" 'Bearer realm="cmdwarden"'
	assert_equal "$(jq -r .error.message "$T/b")" "no bearer token: send Authorization: Bearer TOKEN"
	run req POST "wrong-$TOKEN_alice" "" "$INIT"
	assert_output 401
	assert_equal "$(jq -r .error.message "$T/b")" "the bearer token is not valid"
	# a session opened with the right token, then a call with a wrong one
	sid=$(http_init "$TOKEN_alice")
	run req POST "${TOKEN_alice%?}" "$sid" "$CALL"
	assert_output 401
	run req POST "" "$sid" "$CALL" -H 'Authorization: Basic YTpi'
	assert_output 401
	assert_equal "$(decisions)" 0
	assert_equal "$(jq -s '[.[] | select(.type == "access" and .status == 401)] | length' "$AUDIT")" 4
	assert_equal "$(jq -r 'select(.type == "access") | .remote' "$AUDIT" | sed -n 1p | cut -d: -f1)" 127.0.0.1
	# the legitimate twin runs
	run req POST "$TOKEN_alice" "$sid" "$CALL"
	assert_output 200
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" ran-42
	assert_equal "$(decisions)" 1
	assert_equal "$(jq -r 'select(.type == "decision") | .grant' "$AUDIT")" alice
	# the refusals are part of the hash chain
	run "$CW" audit verify "$AUDIT"
	assert_success
	run "$CW" audit query --type access "$AUDIT"
	assert_equal "${#lines[@]}" 4
}

@test "a foreign Origin gets 403 and is audited; a listed one and none pass" {
	http_start --allow-origin https://agent.example.com
	run req POST "$TOKEN_alice" "" "$INIT" -H 'Origin: http://evil.example'
	assert_output 403
	assert_equal "$(jq -r .error.message "$T/b")" "the request's Origin is not allowed (see serve --allow-origin)"
	assert_equal "$(jq -r 'select(.type == "access") | "\(.status) \(.origin)"' "$AUDIT")" "403 http://evil.example"
	run req POST "$TOKEN_alice" "" "$INIT" -H 'Origin: https://agent.example.com'
	assert_output 200
	run req POST "$TOKEN_alice" "" "$INIT"
	assert_output 200
}

@test "session ids: issued at initialize, required after, unknown or another grant's is 404, DELETE ends it" {
	http_start
	sid=$(http_init "$TOKEN_alice")
	[[ "$sid" =~ ^[0-9a-f]{32}$ ]]
	run req POST "$TOKEN_alice" "" "$LIST"
	assert_output 400
	assert_equal "$(jq -r .error.message "$T/b")" "Mcp-Session-Id is required: send initialize first and then the id it returned"
	run req POST "$TOKEN_alice" "0123456789abcdef0123456789abcdef" "$LIST"
	assert_output 404
	# bob's token cannot use alice's session
	run req POST "$TOKEN_bob" "$sid" "$LIST"
	assert_output 404
	run req DELETE "$TOKEN_bob" "$sid"
	assert_output 404
	# initialize inside a session is refused
	run req POST "$TOKEN_alice" "$sid" "$INIT"
	assert_output 400
	run req POST "$TOKEN_alice" "$sid" "$LIST"
	assert_output 200
	assert_equal "$(jq -r '.result.tools[0].name' "$T/b")" run_command
	run req DELETE "$TOKEN_alice" ""
	assert_output 400
	run req DELETE "$TOKEN_alice" "$sid"
	assert_output 204
	run req POST "$TOKEN_alice" "$sid" "$LIST"
	assert_output 404
	run req DELETE "$TOKEN_alice" "$sid"
	assert_output 404
}

@test "MCP-Protocol-Version is checked" {
	http_start
	sid=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$sid" "$LIST" -H 'MCP-Protocol-Version: 2024-01-01'
	assert_output 400
	assert_equal "$(jq -r .error.message "$T/b")" 'unsupported MCP-Protocol-Version "2024-01-01"; supported: 2025-11-25, 2025-06-18, 2025-03-26'
	for v in 2025-11-25 2025-06-18 2025-03-26; do
		run req POST "$TOKEN_alice" "$sid" "$LIST" -H "MCP-Protocol-Version: $v"
		assert_output 200
	done
}

@test "an oversized body is 413, declared or chunked, and the server keeps serving" {
	http_start --max-request 4096
	sid=$(http_init "$TOKEN_alice")
	big=$(jq -cn --arg c "$(head -c 8000 /dev/zero | tr '\0' x)" '{jsonrpc:"2.0",id:9,method:"tools/call",params:{name:"run_command",arguments:{command:$c}}}')
	run req POST "$TOKEN_alice" "$sid" "$big"
	assert_output 413
	assert_equal "$(jq -r .error.message "$T/b")" "request too large: ${#big} bytes exceeds the limit of 4096 bytes"
	run req POST "$TOKEN_alice" "$sid" "$big" -H 'Transfer-Encoding: chunked'
	assert_output 413
	assert_equal "$(jq -r .error.message "$T/b")" "request too large: more than the limit of 4096 bytes"
	assert_equal "$(decisions)" 0
	run req POST "$TOKEN_alice" "$sid" "$CALL"
	assert_output 200
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" ran-42
}

@test "malformed JSON, batches and wrong content types are clear errors; the server keeps serving" {
	http_start
	sid=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","id":4,"method":'
	assert_output 400
	assert_equal "$(jq -r .error.code "$T/b")" -32700
	[[ "$(jq -r .error.message "$T/b")" == "parse error at line 1"* ]]
	# the id, read before the error, answers the client's own request
	assert_equal "$(jq -r .id "$T/b")" 4
	run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","method":'
	assert_output 400
	assert_equal "$(jq -c '[.id, .error.code]' "$T/b")" '[null,-32700]'
	run req POST "$TOKEN_alice" "$sid" '[{"jsonrpc":"2.0","id":4,"method":"ping"}]'
	assert_output 400
	assert_equal "$(jq -r .error.code "$T/b")" -32600
	run req POST "$TOKEN_alice" "$sid" "" --data-binary "$LIST" -H 'Content-Type: text/plain'
	assert_output 415
	ACCEPT='text/html' run req POST "$TOKEN_alice" "$sid" "$LIST"
	assert_output 406
	run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","id":5,"method":"ping"}'
	assert_output 200
	assert_equal "$(jq -c .result "$T/b")" '{}'
}

@test "GET offers no stream (405), other methods and paths are refused" {
	http_start
	sid=$(http_init "$TOKEN_alice")
	run req GET "$TOKEN_alice" "$sid"
	assert_output 405
	assert_equal "$(header Allow)" "POST, DELETE"
	run req PUT "$TOKEN_alice" "$sid"
	assert_output 405
	run curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN_alice" "${URL%/mcp}/other"
	assert_output 404
	# GET without a token is refused for that first
	run req GET "" "$sid"
	assert_output 401
}

@test "tools/call answers as JSON or as an SSE stream, as the client accepts" {
	http_start
	sid=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	assert_output 202
	run req POST "$TOKEN_alice" "$sid" "$CALL"
	assert_output 200
	assert_equal "$(header Content-Type)" text/event-stream
	assert_equal "$(sed -n 1p "$T/b")" "event: message"
	assert_equal "$(sse_data | jq -r .id)" 2
	ACCEPT='application/json' run req POST "$TOKEN_alice" "$sid" "$CALL"
	assert_output 200
	assert_equal "$(header Content-Type)" application/json
	assert_equal "$(jq -r .result.structuredContent.stdout "$T/b")" ran-42
	assert_equal "$(jq -r 'select(.type == "decision") | .session' "$AUDIT" | sort -u)" "$sid"
}

@test "a refused call is answered, as JSON and as SSE, only after its decision record is flushed" {
	command -v strace >/dev/null || skip "strace is not installed"
	http_start
	sid=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	assert_output 202
	strace -f -p "$HTTP_PID" -o "$T/trace" -s 4096 -e signal=none \
		-e trace=write,writev,sendmsg,sendto,fdatasync,fsync,fcntl 2>"$T/strace.err" &
	spid=$!
	for _ in $(seq 200); do
		grep -q attached "$T/strace.err" && break
		sleep 0.05
	done
	grep -q attached "$T/strace.err" || { kill "$spid"; fail "strace did not attach: $(cat "$T/strace.err")"; }
	for id in 4241 4242; do
		[ "$id" = 4241 ] && export ACCEPT=application/json || unset ACCEPT
		run req POST "$TOKEN_alice" "$sid" '{"jsonrpc":"2.0","id":'"$id"',"method":"tools/call","params":{"name":"write_file","arguments":{}}}'
		assert_output 200
		grep -q '"isError":true' "$T/b" || { kill "$spid"; fail "not a denial: $(cat "$T/b")"; }
	done
	unset ACCEPT
	kill "$spid"
	wait "$spid" || true
	afd=$(grep -m1 -E '^[0-9]+ +write\(([0-9]+), "\{\\"ts.*\\"type\\":\\"decision\\"' "$T/trace" | sed -E 's/^[0-9]+ +write\(([0-9]+),.*/\1/')
	[ -n "$afd" ] || fail "no decision record written: $(head -c 2000 "$T/trace")"
	# each answer goes out after the last decision record written before
	# it and a sync of the log (on its descriptor or a duplicate) that
	# ended after that write; -f: a call may show as "unfinished" and
	# "resumed" on two lines, both with the thread id
	run awk -v fd="$afd" '
		{ tid = $1; sub(/^[0-9]+ +/, "") }
		/^fcntl\(/ {
			split($0, a, /[(,]/)
			if (a[2] == fd && $0 ~ /F_DUPFD/) {
				if ($0 ~ /unfinished/) dupping[tid] = 1
				else { n = $NF; dup[n] = 1 }
			}
		}
		/^<\.\.\. fcntl resumed>/ && dupping[tid] { dup[$NF] = 1; dupping[tid] = 0 }
		$0 ~ "^write\\(" fd ", \"\\{\\\\\"ts" && /decision/ { w = NR; synced = 0 }
		/^(fdatasync|fsync)\(/ && w {
			f = $0; sub(/^[a-z]+\(/, "", f); sub(/[ )].*/, "", f)
			if (f == fd || (f in dup)) {
				if ($0 ~ /unfinished/) { syncing[tid] = 1; started[tid] = NR }
				else synced = NR
			}
		}
		/^<\.\.\. (fdatasync|fsync) resumed>/ && syncing[tid] {
			if (started[tid] > w) synced = NR
			syncing[tid] = 0
		}
		/^(sendmsg|sendto|writev|write)\(/ && /\\"id\\":424[12][,}]/ {
			id = $0; sub(/.*\\"id\\":/, "", id); id = substr(id, 1, 4)
			print id, (w > 0 && synced > w) ? "ordered" : "unordered"
		}
	' "$T/trace"
	assert_output "4241 ordered
4242 ordered"
}

@test "a refused call whose decision record cannot be flushed is refused with the reason; the server keeps serving" {
	broken_disk
	AUDIT="$BROKEN/m/audit.jsonl"
	http_start
	sid=$(http_init "$TOKEN_alice")
	# a large argument: the record needs blocks the disk no longer has
	big=$(head -c 20000 /dev/zero | tr '\0' x)
	refused='{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"'"$big"'"}}}'
	# the legitimate twin, while the disk works: the policy's denial
	run req POST "$TOKEN_alice" "$sid" "$refused"
	assert_output 200
	assert_equal "$(sse_data | jq -r '.result.content[0].text' | cut -c1-16)" "[POLICY DENIED] "
	# the disk under the file system fills up: its writes fail
	head -c 16M /dev/zero >"$BROKEN/t/filler" 2>/dev/null || true
	run req POST "$TOKEN_alice" "$sid" "${refused/\"id\":5/\"id\":6}"
	assert_output 200
	run sse_data
	assert_equal "$(jq -r .result.isError <<<"$output")" true
	run jq -r '.result.content[0].text' <<<"$output"
	assert_output --partial 'call refused because the audit log cannot be written: '
	assert_output --partial 'fdatasync of the log failed: Input/output error'
	# the server goes on: a request that needs no record is answered
	run req POST "$TOKEN_alice" "$sid" "$LIST"
	assert_output 200
	assert_equal "$(jq -r '.result.tools[0].name' "$T/b")" run_command
}

@test "a token file others may read is refused at start, naming the file" {
	chmod 0644 "$T/tokens.json"
	run "$CW" serve --http 127.0.0.1:0 --tokens "$T/tokens.json" --state-dir "$STATE" --audit "$AUDIT"
	assert_failure 1
	assert_output --partial "$T/tokens.json: the token file has mode 0644: group or others may access it; run chmod 600 on it"
	run "$CW" serve --http 127.0.0.1:0 --state-dir "$STATE" --audit "$AUDIT"
	assert_failure 2
	assert_output --partial "--http needs --tokens FILE"
	run "$CW" serve --http 1.2.3:80 --tokens "$T/tokens.json" --state-dir "$STATE" --audit "$AUDIT"
	assert_failure 1
	assert_output --partial '"1.2.3:80" is not an address to listen on'
}

@test "token --add writes a token file serve takes, updates a grant in place, and refuses bad names" {
	local f="$T/made/tokens.json"
	mkdir -p "$T/made"
	run "$CW" token alice --add "$f"
	assert_success
	assert_line --index 0 --regexp '^[0-9a-f]{64}$'
	assert_line --index 1 "cmdwarden: added grant \"alice\" in $f (mode 0600)"
	old=${lines[0]}
	assert_equal "$(stat -c %a "$f")" 600
	"$CW" token bob --add "$f" --policy "$BATS_TEST_DIRNAME/policies/deny-run.json" >/dev/null 2>&1
	# a new token for alice: the old one stops working, bob keeps his policy
	run "$CW" token alice --add "$f"
	assert_line --index 1 "cmdwarden: gave a new token to grant \"alice\" in $f (mode 0600)"
	new=${lines[0]}
	assert_equal "$(jq -r '.grants | keys | join(",")' "$f")" alice,bob
	assert_equal "$(jq -r .grants.bob.policy "$f")" "$BATS_TEST_DIRNAME/policies/deny-run.json"
	cp -p "$f" "$T/tokens.json"
	http_start
	run req POST "$old" "" "$INIT"
	assert_output 401
	http_init "$new" >/dev/null
	# what serve would refuse is refused with its reason, and the file stays
	cp "$f" "$T/before.json"
	run "$CW" token local --add "$f"
	assert_failure 2
	assert_output 'cmdwarden: token: "local": the grant name "local" is reserved for stdio callers; choose another'
	run "$CW" token 'a/b'
	assert_failure 2
	assert_output --partial "a grant name is 1 to 64 letters, digits"
	echo '{"grants": [' >"$T/bad.json"
	run "$CW" token carol --add "$T/bad.json"
	assert_failure 1
	assert_output --partial "$T/bad.json:2:0: not valid JSON"
	assert_output --partial "it is left as it is"
	assert_equal "$(cat "$T/bad.json")" '{"grants": ['
	cmp "$f" "$T/before.json"
	run ls "$T/made"
	assert_output tokens.json
}

@test "two grants keep separate rate-limit counters; a grant's own policy decides its calls" {
	make_tokens alice bob carol="$BATS_TEST_DIRNAME/policies/deny-run.json"
	http_start --policy "$BATS_TEST_DIRNAME/policies/grant-limit.json"
	a=$(http_init "$TOKEN_alice")
	b=$(http_init "$TOKEN_bob")
	c=$(http_init "$TOKEN_carol")
	for i in 1 2; do
		run req POST "$TOKEN_alice" "$a" "$CALL"
		assert_equal "$(sse_data | jq -r .result.isError)" false
	done
	run req POST "$TOKEN_alice" "$a" "$CALL"
	[[ "$(sse_data | jq -r '.result.content[0].text')" == '[POLICY DENIED] rate limit "per_grant" (2 per 3600s, scope grant) reached; retry after'* ]] ||
		fail "not a rate-limit denial: $(cat "$T/b")"
	# bob's count is his own
	run req POST "$TOKEN_bob" "$b" "$CALL"
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" ran-42
	# alice's second session shares her grant's count
	a2=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$a2" "$CALL"
	assert_equal "$(sse_data | jq -r .result.isError)" true
	# carol's policy denies run_command outright
	run req POST "$TOKEN_carol" "$c" "$CALL"
	assert_equal "$(sse_data | jq -r '.result.content[0].text')" "[POLICY DENIED] this grant may not run commands (rule: tools.run_command.action)"
	assert_equal "$(jq -r 'select(.type == "decision") | "\(.grant) \(.verdict)"' "$AUDIT" | sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ';')" \
		"2 alice allow;2 alice rate_limited;1 bob allow;1 carol deny;"
}

@test "an idle or trickling client is cut off; a prompt one is served" {
	http_start --http-timeout 1
	port=${URL#http://127.0.0.1:}
	port=${port%/mcp}
	# half a request line, then silence: the server closes the connection
	exec 5<>"/dev/tcp/127.0.0.1/$port"
	printf 'POST /mcp HTTP/1.1\r\nHost: x\r\n' >&5
	start=$(date +%s%N)
	run timeout 10 cat <&5
	exec 5<&- 5>&-
	elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$elapsed" -lt 5000 ] || fail "the idle connection stayed open ${elapsed} ms"
	# the legitimate twin
	run req POST "$TOKEN_alice" "" "$INIT"
	assert_output 200
}

@test "at most --max-connections connections are served; one more waits until one closes" {
	http_start --max-connections 2
	port=${URL#http://127.0.0.1:}
	port=${port%/mcp}
	# initialize on a connection of its own, kept open
	ask() {
		printf 'POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
			"$TOKEN_alice" "${#INIT}" "$INIT" >&"$1"
	}
	exec 5<>"/dev/tcp/127.0.0.1/$port"
	ask 5
	read -r -t 10 -u 5 status || fail "the first connection got no answer"
	[[ "$status" == "HTTP/1.1 200"* ]] || fail "first: $status"
	exec 6<>"/dev/tcp/127.0.0.1/$port"
	ask 6
	read -r -t 10 -u 6 status || fail "the second connection got no answer"
	[[ "$status" == "HTTP/1.1 200"* ]] || fail "second: $status"
	# a third is over the limit: no answer while the two stay open
	exec 7<>"/dev/tcp/127.0.0.1/$port"
	ask 7
	if read -r -t 1 -u 7 status; then
		fail "a third connection was served over the limit: $status"
	fi
	# one closes: the third is served
	exec 5<&- 5>&-
	read -r -t 10 -u 7 status || fail "the third connection got no answer after one closed"
	[[ "$status" == "HTTP/1.1 200"* ]] || fail "third: $status"
	exec 6<&- 6>&- 7<&- 7>&-
}

@test "a call longer than the idle timeout is answered over SSE, kept alive meanwhile" {
	http_start --http-timeout 1
	sid=$(http_init "$TOKEN_alice")
	slow='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"sleep 2.5; echo slow-done"}}}'
	run req POST "$TOKEN_alice" "$sid" "$slow"
	assert_output 200
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" slow-done
	# comments every half timeout kept the idle connection from closing
	[ "$(grep -c '^: keepalive$' "$T/b")" -ge 2 ] || fail "no keepalives: $(cat "$T/b")"
}

@test "a session unused for --session-idle ends; one in use goes on" {
	http_start --session-idle 3
	old=$(http_init "$TOKEN_alice")
	live=$(http_init "$TOKEN_alice")
	# live is used every half second (well inside the 3 s) for 4 s or more
	start=$(date +%s%N)
	while [ $(( ($(date +%s%N) - start) / 1000000 )) -lt 4000 ]; do
		sleep 0.5
		run req POST "$TOKEN_alice" "$live" "$LIST"
		assert_output 200
	done
	run req POST "$TOKEN_alice" "$old" "$LIST"
	assert_output 404
}

@test "the E2B start command of the README: 0.0.0.0 listens on every address; a bare port means loopback" {
	"$CW" serve --http 0.0.0.0:0 --tokens "$T/tokens.json" --policy "$ROOT/policies/e2b-run-command.json" \
		--state-dir "$STATE" --audit "$AUDIT" >/dev/null 2>"$T/any.err" 3>&- </dev/null &
	HTTP_PID=$!
	for _ in $(seq 100); do grep -q 'MCP on' "$T/any.err" && break; sleep 0.05; done
	port=$(sed -n 's|.*MCP on http://0.0.0.0:\([0-9]*\)/mcp.*|\1|p' "$T/any.err")
	[ -n "$port" ] || fail "$(cat "$T/any.err")"
	URL="http://127.0.0.1:$port/mcp"
	sid=$(http_init "$TOKEN_alice")
	run req POST "$TOKEN_alice" "$sid" "$CALL"
	assert_equal "$(sse_data | jq -r .result.structuredContent.stdout)" ran-42
	http_stop
	# --http PORT alone binds 127.0.0.1
	"$CW" serve --http 0 --tokens "$T/tokens.json" --state-dir "$STATE" --audit "$AUDIT" \
		>/dev/null 2>"$T/lo.err" 3>&- </dev/null &
	HTTP_PID=$!
	for _ in $(seq 100); do grep -q 'MCP on' "$T/lo.err" && break; sleep 0.05; done
	run grep -o 'MCP on http://127.0.0.1:[0-9]*/mcp' "$T/lo.err"
	assert_success
}

@test "libmicrohttpd and GnuTLS are loaded by an HTTP server only, not by a stdio one" {
	mkfifo "$T/in"
	"$CW" serve --state-dir "$STATE" --audit "$AUDIT" <"$T/in" >"$T/out" 2>"$T/err" 3>&- &
	pid=$!
	exec 4>"$T/in"
	printf '%s\n' "$INIT" >&4
	for i in $(seq 100); do
		[ -s "$T/out" ] && break
		sleep 0.05
	done
	[ -s "$T/out" ] || fail "stdio serve did not answer: $(cat "$T/err")"
	stdio_maps=$(grep -c -E 'libmicrohttpd|libgnutls' "/proc/$pid/maps" || true)
	exec 4>&-
	wait "$pid"
	assert_equal "$stdio_maps" 0
	http_start
	run grep -c -E 'libmicrohttpd|libgnutls' "/proc/$HTTP_PID/maps"
	assert_success
	[ "$output" -ge 2 ] || fail "the HTTP server maps $output of the libraries"
	run req POST "$TOKEN_alice" "" "$INIT"
	assert_output 200
}
