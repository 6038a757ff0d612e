#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# tools/call run_command end to end: decisions, execution, limits, audit.

load helpers

setup() {
	cw_setup
	# a duration unique to this test run, which no pattern another run
	# looks for matches: pgrep and pkill see only ours
	NAP="7001.$$"
}

teardown() {
	pkill -f "sleep $NAP" 2>/dev/null || true
	if [ -n "${SUDOER:-}" ]; then
		rm -f "/etc/sudoers.d/$SUDOER"
		userdel "$SUDOER" 2>/dev/null || true
	fi
	public_dirs_remove
}

@test "an allowed command runs and returns E2B-shaped output" {
	mcp -- "$(call_json 1 'echo hello; echo oops >&2; exit 3' '{"sandboxId":"sbx-1"}')"
	assert_equal "$(resp 1 | jq -r .result.isError)" false
	assert_equal "$(text 1 | jq -r .stdout)" hello
	assert_equal "$(text 1 | jq -r .stderr)" oops
	assert_equal "$(text 1 | jq -r .exit_code)" 3
	assert_equal "$(text 1 | jq -r .sandboxId)" sbx-1
	# nothing went wrong: the text has E2B's four keys only
	assert_equal "$(text 1 | jq -c 'keys')" '["exit_code","sandboxId","stderr","stdout"]'
	assert_equal "$(structured 1 exit_code)" 3
	assert_equal "$(structured 1 truncated)" false
	assert_equal "$(structured 1 sandboxId)" sbx-1
	[[ "$(structured 1 invocation_id)" == inv-* ]]
	[ "$(structured 1 duration_ms)" -ge 0 ]
	# decision, launch, exit and the call's kernel events, all in the log
	inv=$(structured 1 invocation_id)
	[ "$(structured 1 audit.records)" -ge 3 ]
	assert_equal "$(structured 1 audit.records)" "$(jq -c --arg inv "$inv" 'select(.invocation == $inv)' "$AUDIT" | wc -l)"
}

@test "commands run as the sandbox user, not as the agent" {
	mcp -- "$(call_json 1 'id -u; id -G')"
	u=$(sandbox_account)
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf '%s\n%s' "$(id -u "$u")" "$(id -G "$u")")"
	[ "$(id -u "$u")" -ne 0 ] || fail "the sandbox account $u is root"
	# the exit record names the same account
	assert_equal "$(jq -r 'select(.type == "exit") | .uid' "$AUDIT")" "$(id -u "$u")"
}

@test "the launch record names the account and directory the command really got" {
	# no user or cwd in the policy: "user" and /home/user where they
	# exist, else nobody and its home or /
	mcp -- "$(call_json 1 'id -un; id -u; pwd')"
	launch=$(jq -c 'select(.type == "launch")' "$AUDIT")
	assert_equal "$(jq -r '.user, .uid, .cwd' <<<"$launch")" "$(text 1 | jq -r .stdout)"
	assert_equal "$(jq -r .user <<<"$launch")" "$(sandbox_account)"
	assert_equal "$(jq -r 'select(.type == "exit") | [.uid, .cwd] | @tsv' "$AUDIT")" "$(jq -r '[.uid, .cwd] | @tsv' <<<"$launch")"
}

@test "account lookups leave no NSS module in the agent" {
	# A process that looks up an account keeps the NSS modules it loaded
	# (libnss_systemd on Debian); the agent looks up in a child instead.
	n=$(python3 -c 'import os, pwd; os.getgrouplist("root", pwd.getpwnam("root").pw_gid); print(open("/proc/self/maps").read())' | grep -c 'libnss_' || true)
	[ "$n" -gt 0 ] || skip "looking up an account loads no NSS module here"
	cat >"$T/p.json" <<'JSON'
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"root"}}}}
JSON
	# the agent's maps through the agent's /proc: the call's own hides it
	CW_PROBE_DISABLE=call_namespaces \
		mcp --policy "$T/p.json" -- "$(call_json 1 'id -un; grep -c libnss_ /proc/$PPID/maps')"
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf 'root\n0')"
}

@test "the command's environment comes from the policy, not the agent" {
	export CW_AGENT_SECRET=s3cret LANG=C.UTF-8
	mcp -- "$(call_json 1 'env' '{"envs":{"MY_VAR":"x y"}}')"
	run text 1
	refute_output --partial CW_AGENT_SECRET
	assert_output --partial 'LANG=C.UTF-8'
	assert_output --partial 'MY_VAR=x y'
	# the login shell's profile files may set PATH; without one the
	# policy's PATH is the command's, exactly
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {login_shell: false}}}}' >"$T/nl.json"
	mcp --policy "$T/nl.json" -- "$(call_json 1 'echo "$PATH"')"
	assert_equal "$(text 1 | jq -r .stdout)" /usr/local/bin:/usr/bin:/bin
}

@test "a tool the policy does not list is denied" {
	mcp -- '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/etc"}}}'
	assert_equal "$(resp 1 | jq -r .result.isError)" true
	run text 1
	assert_output --partial '[POLICY DENIED]'
	assert_output --partial 'delete_file'
	assert_output --partial '(rule: default)'
}

@test "an argument rule denies a destructive command and allows its twin" {
	mcp --policy "$ROOT/tests/e2e/policies/args.json" -- \
		"$(call_json 1 'l\s /; /bin/r"m" -rf /tmp/nothing-here')" \
		"$(call_json 2 'ls / | head -1')" \
		"$(call_json 3 'eval "$(echo rm) x"')"
	run text 1
	assert_output --partial '[POLICY DENIED] destructive programs are not allowed'
	assert_output --partial 'tools.run_command.deny_if[0]'
	assert_equal "$(resp 2 | jq -r .result.isError)" false
	assert_equal "$(structured 2 exit_code)" 0
	run text 3
	assert_output --partial 'cannot be known'
}

# Calls run concurrently: which of them is refused is not fixed, how many
# is. The seed policy's limit, with room for all of them to run at once.
@test "of 11 calls at once within a minute one is rate limited and says when to retry" {
	lines=()
	for i in $(seq 1 11); do lines+=("$(call_json "$i" true)"); done
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" -- "${lines[@]}"
	assert_equal "$(jq -s '[.[] | select(.id >= 1 and .result.isError == false)] | length' "$T/out")" 10
	run jq -r 'select(.id >= 1 and .result.isError == true) | .result.content[0].text' "$T/out"
	assert_equal "${#lines[@]}" 1
	assert_output --partial '[POLICY DENIED] rate limit "run_command_rate" (10 per 60s, scope grant) reached; retry after'
	assert_output --partial 'tools.run_command.limits[0]'
}

@test "a restart of the agent keeps the rate-limit counters" {
	lines=()
	for i in $(seq 1 6); do lines+=("$(call_json "$i" true)"); done
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" -- "${lines[@]}"
	lines=()
	for i in $(seq 7 11); do lines+=("$(call_json "$i" true)"); done
	mcp --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" -- "${lines[@]}"
	assert_equal "$(jq -s '[.[] | select(.id >= 7 and .result.isError == false)] | length' "$T/out")" 4
	run jq -r 'select(.id >= 7 and .result.isError == true) | .result.content[0].text' "$T/out"
	assert_output --partial 'rate limit'
}

@test "a call's rate-limit count is on disk before its answer, flushed while the command starts" {
	command -v strace >/dev/null || skip "strace is not installed"
	# -y names each descriptor's file. No open or exec is traced: with
	# fanotify permission events (kernels without BPF tracing) the agent
	# must answer for the opens and execs strace makes while it holds the
	# agent's threads stopped.
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 true)"; } |
		strace -f -y -o "$T/trace" -e trace=pwrite64,fdatasync,fsync,setsid,write \
			-e signal=none "$CW" serve --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" \
			--state-dir "$STATE" --audit "$AUDIT" >"$T/out"
	assert_equal "$(resp 1 | jq -r .result.isError)" false
	grep -q 'pwrite64([0-9]*<[^>]*ratelimit\.db-wal>' "$T/trace" || fail "no write to the counter database's WAL"
	# the call's last write to the WAL, then its command's first step in
	# the child (setsid, before exec), then the WAL's sync, then the
	# response on fd 1
	run awk '
		{ tid = $1; sub(/^[0-9]+ +/, "") }
		/^pwrite64\([0-9]+<[^>]*ratelimit\.db-wal>/ { w = NR; x = 0; synced = 0 }
		/^setsid\(/ && w && !x { x = NR }
		/^(fdatasync|fsync)\([0-9]+<[^>]*ratelimit\.db-wal>/ && w {
			if ($0 ~ /unfinished/) syncing[tid] = 1; else synced = NR
		}
		/^<\.\.\. (fdatasync|fsync) resumed>/ && syncing[tid] { synced = NR; syncing[tid] = 0 }
		/^write\(1<[^>]*>, .*"id\\":1/ { print (synced > x && x > w && w > 0) ? "ordered" : "unordered w=" w " child=" x " sync=" synced; exit }
	' "$T/trace"
	assert_output ordered
}

@test "the command's process shares the agent's memory until its exec, and starts in the call's cgroup" {
	command -v strace >/dev/null || skip "strace is not installed"
	case "$(uname -m)" in x86_64) ;; *) skip "the shared-memory start is x86_64 only; others fork" ;; esac
	[ -z "${CW_SANITIZER:-}" ] || skip "a $CW_SANITIZER-sanitizer build forks (spawn.c)"
	# Only clone3 is traced (see the test above for why no open or exec).
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 'echo started')"; } |
		strace -f -o "$T/trace" -e trace=clone3 -e signal=none \
			"$CW" serve --policy "$BATS_TEST_DIRNAME/policies/seed-wide.json" \
			--state-dir "$STATE" --audit "$AUDIT" >"$T/out"
	assert_equal "$(text 1 | jq -r .stdout)" started
	want='clone3({flags=CLONE_VM|CLONE_VFORK'
	[ "$("$CW" probe --json | jq -r .layers.cgroup)" = true ] && want="$want|CLONE_INTO_CGROUP"
	run grep -c -F "$want, exit_signal=SIGCHLD, stack=" "$T/trace"
	assert_output 1
}

@test "a call that cannot launch gives its counter back" {
	d="$T/launch-cwd"
	cat >"$T/policy.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{
  "limits":[{"counter":"c","window":"minute","max":2,"scope":"grant"}],
  "sandbox":{"user":"root","cwd":"$d"}}}}
JSON
	# The policy's cwd is missing: both calls fail to launch.
	mcp --policy "$T/policy.json" -- "$(call_json 1 true)" "$(call_json 2 true)"
	run text 1
	assert_output --partial 'could not launch the command'
	assert_output --partial "$d"
	mkdir "$d"
	# Had the failures counted, these would be rate limited (one agent
	# each, so that the order is fixed).
	mcp --policy "$T/policy.json" -- "$(call_json 3 pwd)"
	assert_equal "$(text 3 | jq -r .stdout)" "$d"
	mcp --policy "$T/policy.json" -- "$(call_json 4 true)"
	assert_equal "$(resp 4 | jq -r .result.isError)" false
	mcp --policy "$T/policy.json" -- "$(call_json 5 true)"
	run text 5
	assert_output --partial 'rate limit "c"'
}

@test "require_approval from a client without elicitation is denied with an approval id" {
	mcp --policy "$ROOT/tests/e2e/policies/approval.json" -- "$(call_json 1 true)"
	run text 1
	assert_output --partial '[POLICY DENIED] approval required: approval id apr-'
	assert_output --partial 'cmdwarden approve apr-'
}

@test "the timeout kills the whole process group" {
	start=$(date +%s)
	mcp -- "$(call_json 1 "sleep $NAP & sleep $NAP & echo started; wait" '{"timeout":1}')"
	assert_equal "$(structured 1 timed_out)" true
	assert_equal "$(text 1 | jq -r .stdout)" started
	[ "$(text 1 | jq -r .exit_code)" -gt 128 ]
	run pgrep -f "sleep $NAP"
	assert_failure
	[ $(($(date +%s) - start)) -lt 30 ]
}

@test "a command ignoring SIGTERM is killed after the grace period" {
	mcp -- "$(call_json 1 "trap '' TERM; sleep $NAP" '{"timeout":0.5}')"
	assert_equal "$(structured 1 timed_out)" true
	assert_equal "$(structured 1 signal)" 9
	# an agent reading only the text is told too
	assert_equal "$(text 1 | jq -c '[.timed_out, .signal, .exit_code]')" '[true,9,137]'
	# and the exit record says what the result says
	assert_equal "$(jq -c 'select(.type == "exit") | [.timed_out, .signal, .exit_code]' "$AUDIT")" '[true,9,137]'
	run pgrep -f "sleep $NAP"
	assert_failure
}

@test "output beyond max_output_bytes keeps its first and last bytes, a marker at the cut, and is flagged" {
	mcp --policy "$ROOT/tests/e2e/policies/small-output.json" -- \
		"$(call_json 1 'echo first; head -c 5000000 /dev/zero | tr "\0" a; echo; echo last; echo done >&2')" \
		"$(call_json 2 'echo short')"
	assert_equal "$(structured 1 truncated)" true
	assert_equal "$(text 1 | jq -r .truncated)" true
	assert_equal "$(text 2 | jq -r 'has("truncated")')" false
	# 500 bytes from the start, the marker, 500 from the end
	run jq -r .stdout <<<"$(text 1)"
	assert_line --index 0 first
	assert_line --index 1 --regexp '^a{494}$'
	assert_line --index 2 "[... 4,999,012 bytes omitted ...]"
	assert_line --index 3 --regexp '^a{494}$'
	assert_line --index 4 last
	assert_equal "$(structured 1 stdout_bytes)" 5000012
	assert_equal "$(structured 1 stdout_omitted)" 4999012
	# stderr fit, and says where stdout was cut
	run jq -r .stderr <<<"$(text 1)"
	assert_line --index 0 done
	assert_line --index 1 "[cmdwarden] output cut where the marker line is: 4999012 of 5000012 bytes of stdout and 0 of 5 of stderr left out (sandbox.max_output_bytes keeps the first 500 and the last 500 bytes of each)"
	assert_equal "$(structured 2 truncated)" false
	inv=$(structured 1 invocation_id)
	assert_equal "$(jq -r --arg inv "$inv" 'select(.type=="exit" and .invocation==$inv) | .stdout_bytes' "$AUDIT")" 5000012
}

@test "binary output is returned as valid UTF-8" {
	mcp -- "$(call_json 1 'printf "ok\377\376end"')"
	assert_equal "$(text 1 | jq -r .stdout)" "ok��end"
}

@test "invalid arguments are refused with a clear message" {
	mcp -- '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{}}}' \
		"$(call_json 2 'true' '{"timeout":-1}')" \
		"$(call_json 3 'true' '{"envs":{"A":1}}')" \
		"$(call_json 4 'true' '{"bogus":1}')" \
		"$(call_json 5 'true' '{"cwd":"relative/dir"}')"
	run text 1
	assert_output --partial '"command" must be a non-empty string'
	run text 2
	assert_output --partial '"timeout" must be a number'
	run text 3
	assert_output --partial 'envs.A'
	run text 4
	assert_output --partial 'unknown argument "bogus"'
	run text 5
	assert_output --partial 'absolute path'
	for i in 1 2 3 4 5; do
		assert_equal "$(resp $i | jq -r .result.isError)" true
	done
}

@test "cwd narrows within the sandbox and is refused outside it" {
	D=$(public_dir)
	mcp -- "$(call_json 1 pwd "{\"cwd\":\"$D\"}")" "$(call_json 2 pwd '{"cwd":"/root"}')"
	assert_equal "$(text 1 | jq -r .stdout)" "$D"
	run text 2
	assert_output --partial 'outside what the policy'
}

@test "a killed command reports its signal" {
	mcp -- "$(call_json 1 'kill -9 $$')"
	assert_equal "$(structured 1 signal)" 9
	assert_equal "$(structured 1 exit_code)" 137
}

@test "no descriptors of the agent leak into the command" {
	mcp -- "$(call_json 1 'ls /proc/self/fd | sort -n | tr "\n" " "')"
	# 0 1 2 and the one ls opens for the directory
	assert_equal "$(text 1 | jq -r .stdout)" "0 1 2 3 "
}

@test "the command starts with every signal at its default and none blocked" {
	# The agent ignores SIGPIPE and its threads block signals; neither may
	# reach the command: a writer into a closed pipe must die of SIGPIPE.
	# Whoever starts the agent may leave signals ignored too, glibc's own
	# 32 and 33 included (which glibc's sigaction cannot reset): here the
	# agent starts with 32 ignored.
	need_sysprobe
	"$PROBE" --ignore 32 grep -q '^SigIgn:.*[1-9a-f]' /proc/self/status ||
		fail "sysprobe --ignore 32 left no signal ignored"
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 'grep -E "^Sig(Blk|Ign):" /proc/self/status; yes | head -n1 >/dev/null; echo "${PIPESTATUS[0]}"')"; } |
		"$PROBE" --ignore 32 "$CW" serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf 'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n141')"
}

@test "no_new_privs is set and setuid binaries cannot raise privileges" {
	mcp --policy "$ROOT/tests/e2e/policies/args.json" -- "$(call_json 1 'grep NoNewPrivs /proc/self/status')" "$(call_json 2 'su -c id root </dev/null; echo rc=$?')"
	assert_equal "$(text 1 | jq -r .stdout)" "NoNewPrivs:	1"
	run text 2
	refute_output --partial 'uid=0'
}

@test "sudo from a command fails under no_new_privs, though the account may use it" {
	command -v sudo >/dev/null || fail "sudo is not installed; run make deps"
	# the sandbox account where it may sudo (an E2B template's "user"),
	# else an account of this test's with a passwordless sudo rule
	u=$(sandbox_account)
	args=()
	if ! sudo -n -l -U "$u" 2>/dev/null | grep -q 'NOPASSWD: ALL'; then
		u=cwsudo$$
		useradd -M -s /bin/sh "$u"
		echo "$u ALL=(ALL:ALL) NOPASSWD: ALL" >"/etc/sudoers.d/$u"
		chmod 0440 "/etc/sudoers.d/$u"
		SUDOER=$u
		jq -n --arg u "$u" '{version:"1",default:"deny",tools:{run_command:{sandbox:{user:$u,cwd:"/"}}}}' >"$T/p.json"
		args=(--policy "$T/p.json")
	fi
	# the twin: outside cmdwarden the account becomes root with sudo
	run runuser -u "$u" -- sudo -n id -u
	assert_success
	assert_output 0
	mcp "${args[@]}" -- "$(call_json 1 'id -un; sudo -n id -u; echo rc=$?')"
	assert_equal "$(text 1 | jq -r .stdout)" "$(printf '%s\nrc=1' "$u")"
	run text 1
	assert_output --partial 'no new privileges'
}

@test "a policy requiring a missing layer is refused at load, naming it" {
	CW_PROBE_DISABLE=landlock run "$CW" serve --policy "$ROOT/tests/e2e/policies/missing-layer.json" --state-dir "$STATE" --audit "$AUDIT" </dev/null
	assert_failure
	assert_output --partial 'required layer "landlock" is not available: landlock: disabled by CW_PROBE_DISABLE'
	# the twin: the same policy loads where the layer exists
	[ "$("$CW" probe --json | jq -r .layers.landlock)" = true ] || skip "landlock is not available here"
	run "$CW" check --policy "$ROOT/tests/e2e/policies/missing-layer.json"
	assert_success
}

@test "each layer this kernel lacks is refused when a policy requires it, with the probe's reason" {
	probe=$("$CW" probe --json)
	off=$(jq -r '.layers_off | keys[]' <<<"$probe")
	# E2B's 6.1 guest (make vmtest's e2b pass) lacks what needs kernel BTF
	# or BPF on tracepoints; where every layer works there is nothing to refuse
	[ -n "$off" ] || skip "every layer is available on this kernel"
	for l in $off; do
		jq -n --arg l "$l" '{version:"1",default:"deny",tools:{run_command:{sandbox:{require_layers:[$l]}}}}' >"$T/req-$l.json"
		run "$CW" serve --policy "$T/req-$l.json" --state-dir "$STATE" --audit "$AUDIT" </dev/null
		assert_failure
		assert_output --partial "required layer \"$l\" is not available: $(jq -r ".layers_off.\"$l\"" <<<"$probe")"
	done
}

@test "an account removed while the agent runs is not used from a stale lookup" {
	command -v useradd >/dev/null || skip "useradd is not installed"
	u=cwtest$$
	useradd -M -s /bin/sh "$u"
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{"user":"$u","cwd":"/"}}}}
JSON
	{
		printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 'id -un')"
		# the account goes once the first call has answered (not after a
		# fixed sleep: on a slow machine the call may still run as it)
		for _ in $(seq 100); do [ -n "$(resp 1)" ] && break; sleep 0.1; done
		userdel "$u"
		printf '%s\n' "$(call_json 2 'id -un')"
	} | serve --policy "$T/p.json"
	userdel "$u" 2>/dev/null || true
	assert_equal "$(text 1 | jq -r .stdout)" "$u"
	run text 2
	assert_output --partial "user \"$u\" does not exist"
}

@test "nothing waits for a person: git commit without -m, a pager and a read of stdin end at once; a policy's own EDITOR is kept" {
	command -v git >/dev/null || skip "git is not installed"
	D=$(public_dir)
	mcp -- "$(call_json 1 "cd $D && git init -q r && cd r && git -c user.email=a@b -c user.name=a commit --allow-empty; echo commit=\$?; git log 2>&1 | head -1; read x; echo read=\$?; echo \$EDITOR \$GIT_EDITOR \$PAGER \$GIT_PAGER \$DEBIAN_FRONTEND \$CI" '{"timeout":20}')"
	assert_equal "$(structured 1 timed_out)" false
	# the editor is true: the commit ends, refused for its empty message
	run jq -r .stdout <<<"$(text 1)"
	assert_line --index 0 commit=1
	assert_line --index 1 --regexp "^fatal: your current branch '.+' does not have any commits yet$"
	# stdin is /dev/null: a read ends at once
	assert_line --index 2 read=1
	assert_line --index 3 "true true cat cat noninteractive 1"
	[[ "$(text 1 | jq -r .stderr)" == *"Aborting commit due to empty commit message"* ]] || fail "$(text 1 | jq -r .stderr)"
	# a policy's own value wins over the default
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {env: {set: {EDITOR: "vi", CI: null}}}}}}' >"$T/env.json"
	mcp --policy "$T/env.json" -- "$(call_json 2 'echo "$EDITOR ${CI-unset} $PAGER"')"
	assert_equal "$(text 2 | jq -r .stdout)" "vi unset cat"
}
