#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make demo: drives the real MCP server over stdio through a short session
# with the embedded default policy, then with policies/demo.json.
set -euo pipefail
cd "$(dirname "$0")/.."

CW=${1:-build/cmdwarden}
work=$(mktemp -d /tmp/cmdwarden-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
RESP=""
STATE=$work/state
AUDIT=$work/audit.jsonl
id=0

# bold only on a terminal: a log or a pipe gets plain text
if [ -t 1 ]; then
	bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	bold() { printf '\n== %s\n' "$*"; }
fi

# start STATE_DIR [SERVE_ARGS...]
start() {
	local state=$1
	shift
	coproc CWP { "$CW" serve --state-dir "$state" --audit "$AUDIT" "$@" 2>"$work/stderr"; }
	send '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${CWP[1]}"
}

stop() {
	exec {CWP[1]}>&-
	wait "$CWP_PID" || true
}

# send JSON: writes one request and reads its response into RESP (the
# coprocess's descriptors exist only in this shell, not in pipelines)
send() {
	printf '%s\n' "$1" >&"${CWP[1]}"
	IFS= read -r RESP <&"${CWP[0]}"
}

# run_command COMMAND [EXTRA_ARGUMENTS_JSON]
run_command() {
	id=$((id + 1))
	send "$(jq -cn --argjson id "$id" --arg c "$1" --argjson x "${2:-{\}}" '{jsonrpc:"2.0",id:$id,method:"tools/call",params:{name:"run_command",arguments:({command:$c} + $x)}}')"
}

show() {
	printf '%s\n' "$RESP" | jq -r 'if .result.isError then "  isError: true\n  " + .result.content[0].text
	       else "  exit_code: \(.result.structuredContent.exit_code)\n  stdout: \(.result.structuredContent.stdout | rtrimstr("\n") | gsub("\n"; "\n          "))" +
	            (if .result.structuredContent.stderr != "" then "\n  stderr: \(.result.structuredContent.stderr | rtrimstr("\n") | split("\n") | if length > 2 then .[0:2] + ["(\(length - 2) more lines)"] else . end | join("\n          "))" else "" end)
	       end'
}

echo "cmdwarden demo: $("$CW" version)"
echo "state: $STATE   audit: $AUDIT"

bold "Serving MCP over stdio with the embedded default policy (seed: run_command, 10 calls a minute)"
start "$STATE"
send '{"jsonrpc":"2.0","id":100,"method":"tools/list"}'
printf '%s\n' "$RESP" | jq -r '"  tools: " + ([.result.tools[].name] | join(", "))'

bold "1. An allowed command runs as the sandbox user and returns its output"
echo '  $ echo "hello from $(id -un)"; uname -s'
run_command 'echo "hello from $(id -un)"; uname -s'
show
if ! getent passwd user >/dev/null; then
	echo '  (this machine has no account "user", the one an E2B template runs commands'
	echo '   as: the default profile fell back to "nobody"; the launch record names it)'
fi

bold "2. A tool the policy does not list is denied"
id=$((id + 1))
echo '  tools/call write_file {"path":"/etc/passwd"}'
send "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\",\"arguments\":{\"path\":\"/etc/passwd\"}}}" 
show

bold "3. seccomp blocks what a command has no business doing"
echo '  $ unshare -U true   (a new user namespace)'
run_command 'unshare -U true' 
show

bold "4. The 11th run_command within a minute is rate limited"
for i in $(seq 3 10); do
	run_command true
done
echo '  (calls 3 to 10 ran `true`)'
echo '  $ echo eleven'
run_command 'echo eleven' 
show
stop

bold "5. Argument rules (policies/demo.json): a destructive command is denied, its twin runs"
# its own counters, so the rate limit above does not carry over
start "$work/state-demo" --policy policies/demo.json
echo '  $ /bin/r\m -rf /home/user    (quoting does not hide the program)'
run_command '/bin/r\m -rf /home/user' 
show
echo '  $ eval "$(echo cm0gLXJmIC8K | base64 -d)"'
run_command 'eval "$(echo cm0gLXJmIC8K | base64 -d)"' 
show
echo '  $ ls -d /usr/bin'
run_command 'ls -d /usr/bin' 
show
stop

bold "6. Kernel layers (embedded default profile): Landlock, eBPF network rules, the call's cgroup"
"$CW" probe | sed -n '/^layers:/,$p' | sed 's/^/  /'
start "$work/state-layers"
echo '  $ echo x > /var/tmp/cw-demo   (world-writable, but not a write path of the policy)'
run_command 'echo x > /var/tmp/cw-demo'
show
echo '  $ curl-like connect to the cloud metadata service 169.254.169.254:80; unshare -U true'
run_command "python3 -c 'import socket; socket.create_connection((\"169.254.169.254\", 80), timeout=3)' 2>&1 | tail -1; unshare -U true 2>&1"
show
echo '  $ b(){ b|b& }; b    (a fork bomb, with a 3 s timeout)'
run_command 'b(){ b|b& }; b; sleep 5' '{"timeout": 3}'
show
echo "  its exit record: $(jq -c 'select(.type == "exit") | {exit_code, signal, timed_out}' "$AUDIT" | tail -n 1)"
printf '%s\n' '{"jsonrpc":"2.0","id":999,"method":"ping"}' >&"${CWP[1]}"
IFS= read -r RESP <&"${CWP[0]}"
echo "  the agent still answers: ping -> $(printf '%s' "$RESP" | jq -c .result)"
stop
echo
echo '  their net and limit records:'
jq -r 'select(.type == "net" or .type == "limit") | "    #\(.seq) \(.type) " +
	(if .type == "net" then "\(.op) \(.address):\(.port) \(.verdict) (rule \(.rule)) by \(.comm)"
	 else "\(.limit) peak \(.peak) of \(.max)" end)' "$AUDIT"

kernel_events='.type == "exec" or .type == "file" or .type == "process"'
bold "7. The audit log it wrote ($(wc -l <"$AUDIT") records, JSON Lines, hash-chained)"
echo "  ($(jq -c "select($kernel_events)" "$AUDIT" | wc -l) of them kernel events of the calls' processes, left out here; see 8.)"
jq -r "select(($kernel_events) | not)"' | "  #\(.seq) \(.type)\t\(.invocation // "-")  " +
	(if .type == "decision" then "\(.tool) \(.verdict) (\(.rule))"
	 elif .type == "launch" then "shell=\(.shell) timeout=\(.timeout_ms)ms layers=\(.layers | to_entries | map(select(.value) | .key) | join(","))"
	 elif .type == "exit" then "uid=\(.uid // "-") exit_code=\(.exit_code // "-") \(.duration_ms // "-")ms events=\(.events // {} | [.[]] | add // 0) lost=\(.events_lost // 0)"
	 elif .type == "net" then "\(.op) \(.address):\(.port) \(.verdict)"
	 elif .type == "limit" then "\(.limit) peak \(.peak) of \(.max)"
	 elif .type == "seccomp" then "\(.syscall)(\(.args[0]), ...) by \(.comm) pid \(.pid): \(.action)"
	 elif .type == "agent" then "start: layers \(.layers | to_entries | map(select(.value) | .key) | join(","))"
	 else "" end)' "$AUDIT"
echo
echo "  the first decision record in full:"
jq -n 'first(inputs | select(.type == "decision"))' "$AUDIT" | sed 's/^/    /'

bold "8. The trail of one call: the connect to the metadata service, then a new user namespace"
inv=$(jq -nr 'first(inputs | select(.type == "net" and .verdict == "deny") | .invocation)' "$AUDIT")
jq -r --arg inv "$inv" 'select(.invocation == $inv) |
	if .type == "decision" then "  #\(.seq) decision  \(.verdict) by \(.rule): \(.args.command)"
	elif .type == "launch" then "  #\(.seq) launch    as \(.user), event sources \(.sources | join(",") | if . == "" then "none" else . end)"
	elif .type == "exec" then "  #\(.seq) exec      pid \(.pid) (parent \(.ppid // "?")) \(.filename) \(.argv // [] | .[1:] | join(" ") | .[0:60])"
	elif .type == "process" and .event == "fork" then "  #\(.seq) fork      pid \(.pid) -> \(.child)"
	elif .type == "process" then "  #\(.seq) exit      pid \(.pid) code \(.exit_code) signal \(.signal)"
	elif .type == "file" and (.path | test("^/(usr/)?lib|^/etc/ld.so|/locale|gconv|pycache|^/usr/lib/python") | not) then "  #\(.seq) file      pid \(.pid) \(.comm) \(.op) \(.path) -> \(.result // "")"
	elif .type == "net" then "  #\(.seq) net       pid \(.pid) \(.comm) \(.op) \(.address):\(.port) \(.verdict) (rule \(.rule))"
	elif .type == "seccomp" then "  #\(.seq) seccomp   pid \(.pid) \(.comm) \(.syscall)(\(.args[0]), ...) \(.action)"
	elif .type == "exit" then "  #\(.seq) exit      exit_code \(.exit_code), \(.events.exec) execs, \(.events.file) file events, \(.events_lost) lost"
	else empty end' "$AUDIT"
echo "  (opens of libraries, locales and Python's own modules left out)"

bold "9. Checking the trail: cmdwarden audit verify, query, stats"
echo '  $ cmdwarden audit verify'
"$CW" audit verify "$AUDIT" | sed 's/^/  /'
echo '  $ cmdwarden audit query --type seccomp    (the denials of steps 3 and 6, as written)'
"$CW" audit query --type seccomp "$AUDIT" | jq -c 'del(.prev)' | sed 's/^/  /'
echo '  $ cmdwarden audit stats'
"$CW" audit stats "$AUDIT" | sed 's/^/  /'
