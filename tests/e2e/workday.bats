#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# An agent's ordinary day of work, through the real server over MCP with
# the default sandbox profile: build and run what it wrote, virtualenvs,
# multiprocessing, node packages, a dev server in the background, git; and
# every kill or refusal explains itself in the text the agent reads. The
# same work under policies/locked-down.json is refused, each refusal with
# its note.

load helpers

# The default profile runs commands as the template's account "user" in
# /home/user: made for this file where the machine has no such account.
setup_file() {
	if ! getent passwd user >/dev/null; then
		useradd -m -d /home/user -s /bin/bash user
		touch "$BATS_FILE_TMPDIR/made-user"
	fi
	mkdir -p /home/user
	chown user: /home/user
}

teardown_file() {
	if [ -e "$BATS_FILE_TMPDIR/made-user" ]; then
		userdel -r user 2>/dev/null || true
		rm -rf /home/user
	fi
}

setup() {
	cw_setup
	# the project, in the workspace the profile makes writable
	W=$(runuser -u user -- mktemp -d /home/user/workday.XXXXXX)
	# the seed policy's rate limit would end a day's work in a minute:
	# the default profile, every tool allowed
	jq -n '{version: "1", default: "deny",
		tools: {run_command: {}, command_status: {}, command_kill: {}}}' >"$T/day.json"
	LOCKED="$ROOT/policies/locked-down.json"
}

teardown() {
	pkill -u user -f "http.server $PORT" 2>/dev/null || true
	[ -z "${ACCT:-}" ] || userdel -r "$ACCT" 2>/dev/null || true
	rm -rf "$W"
	rm -f /dev/shm/cw-workday.*
}

# day ID COMMAND [EXTRA] : one call in the workspace under the day policy
day() {
	local extra=${3:-'{}'}
	mcp --policy "$T/day.json" -- "$(call_json "$1" "cd $W && { $2; }" "$extra")"
}

# out ID / err ID : the stdout and stderr of the text block
out() { text "$1" | jq -r .stdout; }
err() { text "$1" | jq -r .stderr; }

@test "a program compiled in the workspace runs, and so does make test" {
	command -v gcc >/dev/null || skip "gcc is not installed"
	command -v make >/dev/null || skip "make is not installed"
	day 1 "printf '#include <stdio.h>\nint main(void){puts(\"hello\");return 0;}\n' >hello.c && printf 'test: hello\n\t./hello\n' >Makefile && gcc -o hello hello.c && ./hello && make -s test"
	assert_equal "$(out 1)" "$(printf 'hello\nhello')" || fail "$(err 1)"
	assert_equal "$(text 1 | jq -r .exit_code)" 0
}

@test "binaries and shebang scripts written into the workspace and /tmp run" {
	# a binary is a binary: one copied there is what a compiler leaves
	day 1 "cp /bin/echo ./myecho && ./myecho bin-ok && printf '#!/bin/sh\necho script-ok\n' >s.sh && chmod +x s.sh && ./s.sh && d=\$(mktemp -d /tmp/cw-day.XXXXXX) && cp s.sh \$d/ && \$d/s.sh && rm -r \$d"
	assert_equal "$(out 1)" "$(printf 'bin-ok\nscript-ok\nscript-ok')" || fail "$(err 1)"
	# the kernel's view: the workspace is not mounted noexec in the call
	day 2 "findmnt -no OPTIONS -T $W"
	run out 2
	assert_output --regexp '^rw'
	refute_output --partial noexec
}

@test "a virtualenv's console script runs from .venv/bin" {
	# --without-pip: ensurepip needs the network here; the entry point
	# is what pip writes for a console_scripts entry
	day 1 "python3 -m venv --without-pip .venv && mkdir -p .venv/lib/app && printf 'def main():\n    print(\"console-ok\")\n' >.venv/lib/app/cli.py && printf '#!$W/.venv/bin/python\nimport sys\nsys.path.insert(0, \"$W/.venv/lib/app\")\nfrom cli import main\nsys.exit(main())\n' >.venv/bin/hello-cli && chmod +x .venv/bin/hello-cli && .venv/bin/hello-cli && .venv/bin/python -c 'import sys; print(sys.prefix)'"
	assert_equal "$(out 1)" "$(printf 'console-ok\n%s/.venv' "$W")" || fail "$(err 1)"
}

@test "multiprocessing works: /dev/shm is writable in a call and its own" {
	python3 -c 'import multiprocessing' || skip "python3 has no multiprocessing"
	day 1 "python3 -c 'from multiprocessing import Pool
from concurrent.futures import ProcessPoolExecutor
with Pool(2) as p: print(sum(p.map(abs, [-1, -2, 3])))
with ProcessPoolExecutor(2) as x: print(sum(x.map(abs, [-4, 5])))' && echo mine >/dev/shm/cw-workday.\$\$ && ls /dev/shm"
	run out 1
	assert_line --index 0 6
	assert_line --index 1 9
	assert_line --regexp '^cw-workday\.[0-9]+$'
	# nothing of it reached the machine's /dev/shm, nor does the next call
	# see it: the tmpfs was the call's
	run compgen -G '/dev/shm/cw-workday.*'
	assert_failure
	day 2 "ls /dev/shm | grep -c cw-workday; grep ' /dev/shm ' /proc/self/mountinfo | tail -n 1 | cut -d' ' -f6-9"
	run out 2
	assert_line --index 0 0
	assert_line --index 1 --regexp '^rw,nosuid,nodev,noexec.* - tmpfs shm$'
}

@test "npm init -y and a node_modules/.bin script of a local package run" {
	# the VM's root leaves out npm's modules: its npm is a link to nothing
	npm --version >/dev/null 2>&1 || skip "npm is not installed"
	# a package made here, installed from its directory: no registry
	day 1 "mkdir pkg && cd pkg && npm init -y >/dev/null && printf '#!/usr/bin/env node\nconsole.log(\"bin-ok\")\n' >cli.js && chmod +x cli.js && node -e 'const f=\"package.json\",p=JSON.parse(require(\"fs\").readFileSync(f));p.name=\"daypkg\";p.bin={daycli:\"cli.js\"};require(\"fs\").writeFileSync(f,JSON.stringify(p))' && cd .. && npm init -y >/dev/null && npm install --offline --no-audit --no-fund ./pkg >/dev/null && node_modules/.bin/daycli && npx --no-install daycli" '{"timeout":60}'
	assert_equal "$(out 1)" "$(printf 'bin-ok\nbin-ok')" || fail "$(err 1)"
}

@test "a background dev server outlives the foreground timeout and answers another call" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {timeout_s: 2}},
		command_status: {}, command_kill: {}}}' >"$T/short.json"
	PORT=$((20000 + RANDOM % 20000))
	get="python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:$PORT/\", timeout=5).status)'"
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 "cd $W && exec python3 -m http.server $PORT --bind 127.0.0.1" '{"background":true}')"
		# past the foreground limit of 2 s
		sleep 4
		printf '%s\n' "$(call_json 2 "for i in 1 2 3 4 5 6 7 8 9 10; do $get 2>/dev/null && break; sleep 0.5; done")"
		sleep 1
		inv=$(jq -r 'select(.id == 1) | .result.structuredContent.invocation_id' "$T/out")
		printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"command_status\",\"arguments\":{\"invocation_id\":\"$inv\"}}}"
		sleep 1
	} | serve --policy "$T/short.json"
	assert_equal "$(out 2)" 200 || fail "$(err 2) $(cat "$T/err")"
	# still running when asked, not timed out
	assert_equal "$(resp 3 | jq -r .result.structuredContent.running)" true
	assert_equal "$(resp 3 | jq -r .result.structuredContent.timed_out)" false
	# its own limit is the launch record's
	assert_equal "$(jq -r 'select(.type == "launch" and .background) | .timeout_ms' "$AUDIT")" 3600000
}

@test "a command's leftover processes are killed at its end, and the result says how many" {
	day 1 "sleep 300 & sleep 301 & echo started"
	assert_equal "$(out 1)" started
	assert_equal "$(text 1 | jq -r .left_running_killed)" 2
	run err 1
	assert_output --partial "[cmdwarden] 2 processes the command left running were killed when it ended; a server runs with background: true"
	assert_equal "$(structured 1 left_running_killed)" 2
	assert_equal "$(structured 1 'notes | length')" 1
	# gone indeed
	run pgrep -u user -f 'sleep 30[01]'
	assert_failure
	# the twin that waits for its children leaves nothing and says nothing
	day 2 "sleep 0.1 & wait; echo done"
	assert_equal "$(text 2 | jq -r '.left_running_killed // "none"')" none
	assert_equal "$(err 2)" ""
	assert_equal "$(structured 2 left_running_killed)" 0
}

@test "10 MB of build output: the text keeps its end, with a marker where the middle was cut" {
	day 1 "seq 1 1500000 | sed 's/^/compiling unit /'; echo 'error: the build failed at its end' >&2; echo 'make: *** [all] Error 1'; exit 2"
	assert_equal "$(text 1 | jq -r .exit_code)" 2
	assert_equal "$(text 1 | jq -r .truncated)" true
	run out 1
	assert_line --index 0 "compiling unit 1"
	assert_line --regexp '^\[\.\.\. [0-9,]+ bytes omitted \.\.\.\]$'
	assert_line "compiling unit 1500000"
	assert_equal "${lines[-1]}" "make: *** [all] Error 1"
	# within the default budget: 32 KiB from each end, and the counts
	[ "$(text 1 | jq -r '.stdout | length')" -lt 66000 ]
	[ "$(structured 1 stdout_bytes)" -gt 10000000 ]
	[ "$(structured 1 stdout_omitted)" -eq $(($(structured 1 stdout_bytes) - 65536)) ]
	run err 1
	assert_line --index 0 "error: the build failed at its end"
	assert_line --index 1 --partial "[cmdwarden] output cut where the marker line is:"
}

@test "git commit without -m ends at once instead of waiting for an editor" {
	command -v git >/dev/null || skip "git is not installed"
	day 1 "git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty; echo commit=\$?" '{"timeout":20}'
	assert_equal "$(structured 1 timed_out)" false
	assert_equal "$(out 1)" commit=1
	run err 1
	assert_output --partial "Aborting commit due to empty commit message"
}

@test "as E2B: a login shell reads the profile, stdin is the call's or empty, and a call picks an account the policy lists" {
	# an account of this test's own, with a profile that puts ~/bin on PATH
	ACCT=cwday$$
	local acct=$ACCT
	useradd -m -d /home/$acct -s /bin/bash "$acct"
	runuser -u "$acct" -- sh -c 'mkdir -p ~/bin && printf "#!/bin/sh\necho tool-ok\n" >~/bin/daytool && chmod +x ~/bin/daytool && echo "PATH=\$HOME/bin:\$PATH" >~/.bash_profile'
	jq -n --arg a "$acct" '{version: "1", default: "deny", tools: {run_command: {sandbox: {users: [$a],
		filesystem: {exec: ["/usr", "/bin", "/home"]}}}}}' >"$T/u.json"
	jq -n --arg a "$acct" '{version: "1", default: "deny", tools: {run_command: {sandbox: {users: [$a], login_shell: false,
		filesystem: {exec: ["/usr", "/bin", "/home"]}}}}}' >"$T/nl.json"
	u="{\"user\":\"$acct\"}"
	# without a login shell the profile is not read
	mcp --policy "$T/nl.json" -- "$(call_json 6 'shopt -q login_shell || echo not-login; daytool' "$u")"
	run out 6
	assert_line --index 0 not-login
	assert_equal "$(text 6 | jq -r .exit_code)" 127
	mcp --policy "$T/u.json" -- "$(call_json 1 'id -un; shopt -q login_shell && echo login; daytool' "$u")" \
		"$(call_json 2 'wc -l; cat' '{"stdin":"one\ntwo\n"}')" \
		"$(call_json 3 'cat; echo "read=$?"' '{"timeout":5}')" \
		"$(call_json 4 'id -un')" \
		"$(call_json 5 'true' '{"user":"root"}')"
	assert_equal "$(out 1)" "$(printf '%s\nlogin\ntool-ok' "$acct")" || fail "$(err 1)"
	# stdin: the call's text, read to its end; none: /dev/null, no wait
	assert_equal "$(out 2)" 2
	assert_equal "$(out 3)" read=0
	assert_equal "$(structured 3 timed_out)" false
	assert_equal "$(jq -r 'select(.type == "launch") | .stdin_bytes // empty' "$AUDIT" | head -n 1)" 8
	# the policy's own account when the call names none; root is not listed
	assert_equal "$(out 4)" user
	assert_equal "$(resp 5 | jq -r .result.isError)" true
	run jq -r '.result.content[0].text' <<<"$(resp 5)"
	assert_output --partial '"root" is not one of the accounts the policy lists in sandbox.users'
}

@test "a timeout says its limit, and that the longer one the call asked for was cut to it" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {timeout_s: 1}}}}' >"$T/t.json"
	mcp --policy "$T/t.json" -- "$(call_json 1 "sleep 30" '{"timeout":20}')" "$(call_json 2 "sleep 30")" \
		"$(call_json 3 "sleep 30" '{"timeout":0.5}')" "$(call_json 4 "echo quick" '{"timeout":5}')"
	assert_equal "$(text 1 | jq -r .timed_out)" true
	run err 1
	assert_output "[cmdwarden] killed at the time limit of 1 s (sandbox.timeout_s); the call asked for 20 s, longer than the policy allows"
	run err 2
	assert_output "[cmdwarden] killed at the time limit of 1 s (sandbox.timeout_s); a server or a longer job runs with background: true"
	run err 3
	assert_output "[cmdwarden] killed at the time limit of 0.5 s the call asked for (timeout)"
	# not killed, but told its timeout was shortened
	assert_equal "$(out 4)" quick
	run err 4
	assert_output "[cmdwarden] the call asked for a time limit of 5 s; the policy allows at most 1 s (sandbox.timeout_s), which applied"
}

@test "the process limit, a refused connection and a refused system call each have a note; stdout is untouched" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {resources: {pids: 16}, network: {deny: ["192.0.2.0/24"]}}}}}' >"$T/n.json"
	mcp --policy "$T/n.json" -- \
		"$(call_json 1 '(for i in $(seq 40); do sleep 1 & done) 2>/dev/null; echo forked')" \
		"$(call_json 2 "python3 -c 'import socket; socket.create_connection((\"192.0.2.7\", 8443), timeout=3)' 2>/dev/null; echo rc=\$?")" \
		"$(call_json 3 'unshare -U true 2>/dev/null; echo rc=$?')"
	assert_equal "$(out 1)" forked || fail "$(text 1)"
	run err 1
	assert_output --partial "[cmdwarden] a fork was refused at the process limit of 16 (sandbox.resources.pids)"
	assert_equal "$(out 2)" rc=1
	run err 2
	assert_output "[cmdwarden] 1 connection refused by sandbox.network, the first 192.0.2.7:8443 (rule deny)"
	assert_equal "$(structured 2 'notes[0]')" "1 connection refused by sandbox.network, the first 192.0.2.7:8443 (rule deny)"
	assert_equal "$(out 3)" rc=1
	run err 3
	assert_output "[cmdwarden] 1 system call refused by seccomp (EPERM), the first unshare"
	# the twins that stay within the limits have no notes
	mcp --policy "$T/n.json" -- "$(call_json 4 'sleep 0.1 & wait; true')"
	assert_equal "$(structured 4 'notes | length')" 0
}

@test "a memory kill names the limit and the peak" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {resources: {memory_mb: 64}}}}}' >"$T/m.json"
	mcp --policy "$T/m.json" -- "$(call_json 1 "python3 -c 'b = bytearray(256 << 20); print(len(b))'")"
	[ "$(text 1 | jq -r .exit_code)" -ne 0 ] || fail "$(text 1)"
	run err 1
	assert_output --regexp '\[cmdwarden\] (killed by|the memory limit of 64 MiB was reached)'
	assert_output --partial '64 MiB (sandbox.resources.memory_mb)'
}

@test "under locked-down.json the workspace's programs and the network are refused, each with its note" {
	# the calls run concurrently: each writes the program it runs
	mcp --policy "$LOCKED" -- \
		"$(call_json 1 "cd $W && cp /bin/echo ./myecho && ./myecho bin-ok; echo rc=\$?")" \
		"$(call_json 2 "exec 3<>/dev/tcp/192.0.2.7/443; echo rc=\$?")" \
		"$(call_json 3 "echo fine")" \
		"$(call_json 4 "mkdir /var/tmp/cw-day-\$\$ 2>/dev/null; echo rc=\$?")" \
		"$(call_json 5 "cp /bin/echo $W/myecho5 && $W/myecho5 again; echo rc=\$?")"
	assert_equal "$(out 1)" rc=126
	assert_equal "$(out 5)" rc=126
	# where the kernel's events tell it, the note names the path and the list
	if jq -se 'any(.[]; .type == "agent" and .layers.bpf_trace)' "$AUDIT" >/dev/null; then
		run err 5
		assert_line "[cmdwarden] 1 file access refused by Landlock (EACCES), the first: exec $W/myecho5 (not beneath sandbox.filesystem.exec)"
		# a relative path is joined to the directory the kernel resolved
		run err 1
		assert_line "[cmdwarden] 1 file access refused by Landlock (EACCES), the first: exec $W/myecho (not beneath sandbox.filesystem.exec)"
		assert_equal "$(out 4)" rc=1
		run err 4
		assert_line --regexp '^\[cmdwarden\] 1 file access refused by Landlock \(EACCES\), the first: write /var/tmp/cw-day-[0-9]+ \(not beneath sandbox.filesystem.write\)$'
		# the failed exec is in the trail too
		assert_equal "$(jq -r 'select(.type == "file" and .op == "exec") | [.path, .error] | join(" ")' "$AUDIT" | sort)" "$(printf '%s/myecho Permission denied\n%s/myecho5 Permission denied' "$W" "$W" | sort)"
	fi
	assert_equal "$(out 2)" rc=1
	run err 2
	assert_line "[cmdwarden] 1 connection refused by sandbox.network, the first 192.0.2.7:443 (rule default)"
	# its own work still runs
	assert_equal "$(out 3)" fine
	# and its budgets are the small ones
	assert_equal "$(jq -r 'select(.type == "launch") | .timeout_ms' "$AUDIT" | sort -u)" 30000
}
