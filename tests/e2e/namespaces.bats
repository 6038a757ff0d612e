#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Each call's own IPC, pid and mount namespaces (kernel/namespaces.h): SysV
# objects of the sandbox out of reach and a call's own dying with it, a
# /proc showing only the call's processes, exit codes and signals reported
# as before, mounts never reaching the sandbox.

load helpers

setup() {
	cw_setup
	D=$(public_dir)
	NAP="7019.$$"
	ACCOUNT=$(sandbox_account)
	SHMID=
}

teardown() {
	[ -n "$SHMID" ] && ipcrm -m "$SHMID" 2>/dev/null
	pkill -f "sleep $NAP" 2>/dev/null || true
	[ -n "${SVC:-}" ] && kill $SVC 2>/dev/null
	[ -n "${RUNSOCK:-}" ] && rm -f "$RUNSOCK" "$RUNSOCK.ready"
	public_dirs_remove
}

# serve_ns LINE... : initialize, then the lines, to an agent whose pid is
# left in $D/agent.pid for the commands to aim at
serve_ns() {
	{ printf '%s\n' "$INIT" "$INITIALIZED"; printf '%s\n' "$@"; } |
		bash -c 'echo $$ >"$1/agent.pid"; exec "$2" serve --state-dir "$3" --audit "$4"' \
			_ "$D" "$CW" "$STATE" "$AUDIT" >"$T/out" 2>"$T/err"
}

# out ID : the command's stdout
out() {
	text "$1" | jq -r .stdout
}

# $D/attach.py ID: attaches SysV segment ID, writes and reads it back
write_attach() {
	cat >"$D/attach.py" <<'EOF'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
p = libc.shmat(int(sys.argv[1]), None, 0)
if p is None or p == ctypes.c_void_p(-1).value:
    print("refused errno", ctypes.get_errno())
    sys.exit(1)
ctypes.memmove(p, b"cw", 2)
print("attached", ctypes.string_at(p, 2).decode())
EOF
}

@test "a SysV segment of the sandbox is neither listed nor attachable in a call, while one the call makes works" {
	command -v ipcmk >/dev/null || skip "ipcmk is not installed"
	write_attach
	SHMID=$(ipcmk -M 4096 -p 0666 | awk '{print $NF}')
	[ -n "$SHMID" ]
	# the twin outside cmdwarden: the same account reaches it
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/attach.py" "$SHMID"
	assert_output "attached cw"
	serve_ns "$(call_json 1 "ipcs -m | awk '\$2 == $SHMID' | wc -l; /usr/bin/python3 $D/attach.py $SHMID")" \
		"$(call_json 2 "id=\$(ipcmk -M 4096 | awk '{print \$NF}'); ipcs -m | awk -v id=\$id '\$2 == id' | wc -l; /usr/bin/python3 $D/attach.py \$id")"
	# refused: not listed, and shmat finds no such id (EINVAL)
	assert_equal "$(out 1)" "$(printf '0\nrefused errno 22')"
	assert_equal "$(structured 1 exit_code)" 1
	# the sandbox's segment is untouched
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/attach.py" "$SHMID"
	assert_output "attached cw"
	# the call's own segment: listed and attached
	assert_equal "$(out 2)" "$(printf '1\nattached cw')"
}

@test "the SysV objects a call makes die with it: its IPC namespace is gone when it ends" {
	command -v ipcmk >/dev/null || skip "ipcmk is not installed"
	before=$(ipcs | awk '$1 ~ /^0x/' | wc -l)
	serve_ns "$(call_json 1 'ipcmk -M 1048576 >/dev/null && ipcmk -Q >/dev/null && ipcmk -S 1 >/dev/null && ipcs | awk "\$1 ~ /^0x/" | wc -l; readlink /proc/self/ns/ipc')"
	run out 1
	assert_line --index 0 3
	ns=$(sed -n 2p <<<"$output")
	[[ "$ns" == ipc:\[*\] ]] || fail "no ipc namespace in: $output"
	# not the sandbox's, and no process holds it any more
	[ "$ns" != "$(readlink /proc/self/ns/ipc)" ]
	run bash -c 'for f in /proc/[0-9]*/ns/ipc; do readlink "$f"; done 2>/dev/null | grep -cxF "$1"' _ "$ns"
	assert_output 0
	# nothing of it in the sandbox's namespace either
	assert_equal "$(ipcs | awk '$1 ~ /^0x/' | wc -l)" "$before"
}

@test "a call's /proc shows only its own processes: the agent's argv and status are out of reach, its own are not, and the agent cannot be signalled" {
	# a process of the sandbox beside the agent, alive throughout
	sleep "$NAP" &
	other=$!
	serve_ns "$(call_json 1 'ps -eo pid=,comm=; true')" \
		"$(call_json 2 "a=\$(cat $D/agent.pid); cat /proc/\$a/cmdline; cat /proc/\$a/status; cat /proc/\$a/mountinfo; cat /proc/$other/cmdline; echo rc=\$?")" \
		"$(call_json 3 'cat /proc/self/comm; grep -c . /proc/self/status /proc/self/mountinfo | sed "s/:[0-9]*//"; echo $$')" \
		"$(call_json 4 "a=\$(cat $D/agent.pid); kill -0 \$a; echo agent=\$?; echo ppid=\$PPID; sleep 1 & kill \$! && echo own-child-ok")"
	agent=$(cat "$D/agent.pid")
	# the twin outside cmdwarden: the same account reads another's argv
	run runuser -u "$ACCOUNT" -- sh -c 'tr "\0" " " <"/proc/$1/cmdline"' _ "$other"
	assert_output "sleep $NAP "
	# ps: the shell (pid 2, under the call's init) and ps, nothing else
	# (the login shell's profile may have run a program or two between)
	assert_equal "$(out 1 | awk 'NF {print $2}')" "$(printf 'bash\nps')"
	assert_equal "$(out 1 | awk 'NF {print $1, $2; exit}')" "2 bash"
	assert_equal "$(out 2)" "rc=1"
	run jq -r .stderr <<<"$(text 2)"
	assert_line "cat: /proc/$agent/cmdline: No such file or directory"
	assert_line "cat: /proc/$agent/status: No such file or directory"
	assert_line "cat: /proc/$agent/mountinfo: No such file or directory"
	assert_line "cat: /proc/$other/cmdline: No such file or directory"
	# its own /proc works, and its pid is the namespace's 2
	run out 3
	assert_line --index 0 cat
	assert_line --index 1 /proc/self/status
	assert_line --index 2 /proc/self/mountinfo
	assert_line --index 3 2
	# the agent cannot be signalled, or even named: no such process
	# there, and the shell's parent is outside (0); its own child is
	run out 4
	assert_line --index 0 agent=1
	assert_line --index 1 ppid=0
	assert_line --index 2 own-child-ok
	run jq -r .stderr <<<"$(text 4)"
	assert_output --partial "No such process"
}

@test "the call's /proc hides the call's init (root) and is mounted hidepid=invisible, nosuid, nodev, noexec" {
	serve_ns "$(call_json 1 'ls /proc/1 2>&1 | head -1; awk "\$5 == \"/proc\"" /proc/self/mountinfo | tail -1')"
	run out 1
	assert_line --index 0 --partial "cannot access '/proc/1'"
	assert_line --index 1 --regexp ' /proc rw,nosuid,nodev,noexec,[^ ]* - proc proc rw,(.*,)?hidepid=invisible'
}

@test "exit codes and signals are reported exactly: kill -TERM \$\$, a SIGSEGV, exit 7, the timeout's SIGTERM" {
	serve_ns "$(call_json 1 'echo $$; kill -TERM $$')" \
		"$(call_json 2 'kill -SEGV $$')" \
		"$(call_json 3 'exit 7')" \
		"$(call_json 4 "sleep $NAP" '{"timeout":0.5}')" \
		"$(call_json 5 'kill -KILL $$')"
	assert_equal "$(out 1)" 2
	assert_equal "$(structured 1 signal)" 15
	assert_equal "$(structured 1 exit_code)" 143
	assert_equal "$(structured 2 signal)" 11
	assert_equal "$(structured 2 exit_code)" 139
	assert_equal "$(structured 3 exit_code)" 7
	assert_equal "$(structured 3 signal)" 0
	# the shell, not a pid 1 ignoring it, took the SIGTERM: no SIGKILL
	assert_equal "$(structured 4 timed_out)" true
	assert_equal "$(structured 4 signal)" 15
	assert_equal "$(structured 5 signal)" 9
	run pgrep -f "sleep $NAP"
	assert_failure
}

@test "processes that leave the call's process group or session end with the call" {
	serve_ns "$(call_json 1 "setsid sleep $NAP & (sleep $NAP &); sleep 0.2; ps -eo comm= | grep -c sleep")"
	assert_equal "$(out 1)" 2
	run pgrep -f "sleep $NAP"
	assert_failure
}

@test "the call's mounts never reach the sandbox: a slave mount namespace of its own" {
	before=$(awk '{print $5}' /proc/self/mountinfo | sort)
	serve_ns "$(call_json 1 'readlink /proc/self/ns/mnt /proc/self/ns/pid; awk "\$5 == \"/proc\"" /proc/self/mountinfo | wc -l')"
	run out 1
	[ "$(sed -n 1p <<<"$output")" != "$(readlink /proc/self/ns/mnt)" ]
	[ "$(sed -n 2p <<<"$output")" != "$(readlink /proc/self/ns/pid)" ]
	# the call's /proc is stacked on the sandbox's, which it hides
	assert_line --index 2 2
	assert_equal "$(awk '{print $5}' /proc/self/mountinfo | sort)" "$before"
}

# exec_policy : $T/exec.json, writing to $D and /tmp, executing from
# /usr, /bin and $D/bin
exec_policy() {
	mkdir -p "$D/bin"
	chmod 0777 "$D/bin"
	jq -n --arg d "$D" '{version: "1", default: "deny", tools: {run_command: {sandbox: {filesystem: {
		read: ["/"], write: [$d, "/tmp"], exec: ["/usr", "/bin", ($d + "/bin")]}}}}}' >"$T/exec.json"
}

serve_exec() {
	{ printf '%s\n' "$INIT" "$INITIALIZED"; printf '%s\n' "$@"; } |
		"$CW" serve --policy "$T/exec.json" --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
}

@test "code copied into a writable tree cannot be mapped executable: ld.so ./binary and dlopen are refused, the exec trees run" {
	exec_policy
	# the libm python3 itself maps (no ldconfig or compiler needed)
	libpath=$(/usr/bin/python3 -c 'print(next(l.split()[-1] for l in open("/proc/self/maps") if "/libm.so" in l))')
	[ -f "$libpath" ] || fail "python3 maps no libm: $libpath"
	cp /bin/true "$D/x"
	cp /bin/true "$D/bin/x"
	cp "$libpath" "$D/lib.so"
	cp "$libpath" "$D/bin/lib.so"
	chmod 0755 "$D/x" "$D/bin/x"
	chmod 0644 "$D/lib.so" "$D/bin/lib.so"
	ld=/lib64/ld-linux-x86-64.so.2
	[ -x "$ld" ] || skip "no $ld"
	# the twins outside cmdwarden: the same account runs both
	run runuser -u "$ACCOUNT" -- "$ld" "$D/x"
	assert_success
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 -c "import ctypes; ctypes.CDLL('$D/lib.so'); print('loaded')"
	assert_output loaded
	serve_exec "$(call_json 1 "$ld $D/x; echo rc=\$?")" \
		"$(call_json 2 "/usr/bin/python3 -c \"import ctypes; ctypes.CDLL('$D/lib.so')\" 2>&1 | tail -1")" \
		"$(call_json 3 "$ld $D/bin/x; echo rc=\$?; $D/bin/x; echo rc=\$?; $ld /bin/true; echo rc=\$?")" \
		"$(call_json 4 "/usr/bin/python3 -c \"import ctypes; ctypes.CDLL('$D/bin/lib.so'); ctypes.CDLL('$libpath'); print('loaded')\"")" \
		"$(call_json 5 "echo ok >$D/written; cat $D/written")"
	# refused: the kernel will not map the copies executable
	assert_equal "$(out 1)" rc=127
	run jq -r .stderr <<<"$(text 1)"
	assert_output --partial "failed to map segment from shared object"
	run out 2
	assert_output --partial "failed to map segment from shared object"
	# the exec tree inside the writable one, and the system's, run
	assert_equal "$(out 3)" "$(printf 'rc=0\nrc=0\nrc=0')"
	assert_equal "$(out 4)" loaded
	# writing is as before
	assert_equal "$(out 5)" ok
	# and the sandbox's own view of the tree is untouched
	run runuser -u "$ACCOUNT" -- "$ld" "$D/x"
	assert_success
}

@test "a memfd cannot be executed where the kernel has vm.memfd_noexec; one for data works" {
	[ -e /proc/sys/vm/memfd_noexec ] || skip "this kernel has no vm.memfd_noexec (6.3+): memfds stay executable (docs/kernels.md)"
	cat >"$D/memfd.py" <<'EOF'
import os, sys
fd = os.memfd_create("cw", 0)
os.write(fd, open("/bin/true", "rb").read())
print("data", os.pread(fd, 3, 1).decode())
try:
    os.memfd_create("cw-exec", 0x10)  # MFD_EXEC
    print("MFD_EXEC allowed")
except OSError as e:
    print("MFD_EXEC refused errno", e.errno)
sys.stdout.flush()
try:
    os.execv("/proc/self/fd/%d" % fd, ["cw"])
except OSError as e:
    print("execve refused errno", e.errno)
EOF
	# the twin outside cmdwarden (this namespace's memfd_noexec)
	[ "$(cat /proc/sys/vm/memfd_noexec)" = 0 ] || skip "vm.memfd_noexec is already set here"
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/memfd.py"
	assert_output "$(printf 'data ELF\nMFD_EXEC allowed')"
	serve_ns "$(call_json 1 "/usr/bin/python3 $D/memfd.py; cat /proc/sys/vm/memfd_noexec")"
	assert_equal "$(out 1)" "$(printf 'data ELF\nMFD_EXEC refused errno 13\nexecve refused errno 13\n2')"
	# the sandbox's own setting is untouched
	assert_equal "$(cat /proc/sys/vm/memfd_noexec)" 0
}

# start_unix PATH [DELAY]: a root service answering "hi" on a pathname unix
# socket (mode 0666) at PATH, after DELAY seconds; waits for it unless
# delayed. Runs with bats' descriptors closed, so bats never waits on it.
start_unix() {
	python3 -c '
import os, socket, sys, time
time.sleep(float(sys.argv[2]))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    os.unlink(sys.argv[1])
except FileNotFoundError:
    pass
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
s.listen(16)
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    c.sendall(b"hi")
    c.close()
' "$1" "${2:-0}" </dev/null >/dev/null 2>&1 3>&- &
	SVC="${SVC:-} $!"
	[ -n "${2:-}" ] && return 0
	for _ in $(seq 100); do
		[ -e "$1.ready" ] && return 0
		sleep 0.05
	done
	fail "no service on $1"
}

# $D/uconnect.py PATH...: connects to each unix socket, prints what it read
# or the errno
write_uconnect() {
	cat >"$D/uconnect.py" <<'PY'
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print(p, s.recv(2).decode())
    except OSError as e:
        print(p, "errno", e.errno)
    s.close()
PY
	# the call's own server, a socketpair and an abstract socket
	cat >"$D/own.py" <<'PY'
import socket, sys
a, b = socket.socketpair()
a.sendall(b"pair")
print(b.recv(4).decode())
l = socket.socket(socket.AF_UNIX)
l.bind("\0cw-e2e-" + sys.argv[2])
l.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect("\0cw-e2e-" + sys.argv[2])
print("abstract ok")
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
print("own ok")
PY
	# a server of the call's own that stays, for a background call
	cat >"$D/bg.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    c.sendall(b"bg")
    c.close()
PY
}

@test "a unix socket of a service outside the call is masked however its path is written; one the policy allows, and the call's own, are reached" {
	write_uconnect
	RUNSOCK=/run/cw-e2e-$$.sock
	start_unix "$RUNSOCK"
	start_unix "$D/allowed.sock"
	ln -s "$RUNSOCK" "$D/link.sock"
	# the twin outside cmdwarden: the same account reaches both
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/uconnect.py" "$RUNSOCK" "$D/allowed.sock"
	assert_output "$(printf '%s hi\n%s hi' "$RUNSOCK" "$D/allowed.sock")"
	jq -n --arg d "$D" '{version: "1", default: "deny", tools: {run_command: {sandbox: {
		filesystem: {read: ["/"], write: [$d], exec: ["/usr", "/bin"]},
		network: {unix_sockets: [($d + "/allowed.sock")]}}}}}' >"$T/unix.json"
	{ printf '%s\n' "$INIT" "$INITIALIZED"
	  printf '%s\n' "$(call_json 1 "/usr/bin/python3 $D/uconnect.py $RUNSOCK $D/link.sock $D/allowed.sock; cd /run && /usr/bin/python3 $D/uconnect.py ${RUNSOCK#/run/}")" \
		"$(call_json 2 "/usr/bin/python3 $D/own.py $D/own.sock $$")"
	} | "$CW" serve --policy "$T/unix.json" --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	# refused, absolute, through a symlink and relative: no socket there
	# (ECONNREFUSED); the one the policy lists is reached
	assert_equal "$(out 1)" "$(printf '%s errno 111\n%s errno 111\n%s hi\n%s errno 111' \
		"$RUNSOCK" "$D/link.sock" "$D/allowed.sock" "${RUNSOCK#/run/}")"
	assert_equal "$(out 2)" "$(printf 'pair\nabstract ok\nown ok')"
	# the launch record names what was masked
	inv=$(structured 1 invocation_id)
	run jq -r --arg i "$inv" 'select(.type == "launch" and .invocation == $i) | .unix_sockets_masked[]' "$AUDIT"
	assert_line "$RUNSOCK"
	refute_line "$D/allowed.sock"
	# the sandbox's own view is untouched
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/uconnect.py" "$RUNSOCK"
	assert_output "$RUNSOCK hi"
}

@test "a connect or send refused by a masked unix socket is a net record naming the path; the call's own socket without a reader refuses with no record" {
	j=$("$CW" probe --json)
	[ "$(jq -r '.layers.bpf_trace' <<<"$j")" = true ] ||
		skip "layer bpf_trace is off here: $(jq -r '.layers_off.bpf_trace' <<<"$j")"
	write_uconnect
	RUNSOCK=/run/cw-e2e-rec-$$.sock
	DGSOCK=/run/cw-e2e-dg-$$.sock
	start_unix "$RUNSOCK"
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
open(sys.argv[1] + ".ready", "w").close()
while True:
    s.recv(64)
' "$DGSOCK" </dev/null >/dev/null 2>&1 3>&- &
	SVC="${SVC:-} $!"
	for _ in $(seq 100); do [ -e "$DGSOCK.ready" ] && break; sleep 0.05; done
	[ -e "$DGSOCK.ready" ] || fail "no datagram service on $DGSOCK"
	cat >"$D/send.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", sys.argv[1])
    print(sys.argv[1], "sent")
except OSError as e:
    print(sys.argv[1], "errno", e.errno)
PY
	# the call's own socket file, bound and closed: nobody reads it
	cat >"$D/dead.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.close()
PY
	ln -s "$RUNSOCK" "$D/link.sock"
	# the twin outside cmdwarden: the same account reaches both services
	run runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/send.py" "$DGSOCK"
	assert_output "$DGSOCK sent"
	serve_ns "$(call_json 1 "/usr/bin/python3 $D/dead.py $D/dead.sock; /usr/bin/python3 $D/uconnect.py $RUNSOCK $D/link.sock $D/dead.sock; /usr/bin/python3 $D/send.py $DGSOCK; /usr/bin/python3 $D/send.py $D/dead.sock; cd /run && /usr/bin/python3 $D/uconnect.py ${RUNSOCK#/run/}")"
	assert_equal "$(out 1)" "$(printf '%s errno 111\n%s errno 111\n%s errno 111\n%s errno 111\n%s errno 111\n%s errno 111' \
		"$RUNSOCK" "$D/link.sock" "$D/dead.sock" "$DGSOCK" "$D/dead.sock" "${RUNSOCK#/run/}")"
	inv=$(structured 1 invocation_id)
	run jq -c --arg i "$inv" 'select(.type == "net" and .invocation == $i and .family == "unix") | [.op, .address, .socket_type, .verdict, .rule, (.reason | startswith("a unix socket of a service"))]' "$AUDIT"
	# the service's stream socket, by its path and through a symlink, and
	# the datagram one; the call's own dead socket twice refused, never
	# recorded
	assert_line --index 0 "[\"connect\",\"$RUNSOCK\",1,\"deny\",\"unix_socket\",true]"
	assert_line --index 1 "[\"connect\",\"$D/link.sock\",1,\"deny\",\"unix_socket\",true]"
	assert_line --index 2 "[\"sendmsg\",\"$DGSOCK\",2,\"deny\",\"unix_socket\",true]"
	# the relative path: resolved in the thread's directory while it lives,
	# else recorded as not told apart from a socket without a reader
	assert_line --index 3 --regexp "^\[\"connect\",\"${RUNSOCK#/run/}\",1,\"deny\",\"unix_socket\",(true|false)\]$"
	[ "${#lines[@]}" -eq 4 ]
	rm -f "$DGSOCK" "$DGSOCK.ready"
}

@test "a service socket that appears after the call's namespaces were made is masked too; a background call's own server is reached" {
	write_uconnect
	RUNSOCK=/run/cw-e2e-late-$$.sock
	# after the agent has made the next call's namespaces
	start_unix "$RUNSOCK" 0.5
	# call 2's namespaces are made as call 1 starts, before the service;
	# call 2 comes two seconds later, after it, and masks it all the same
	{ printf '%s\n' "$INIT" "$INITIALIZED" \
		"$(call_json 1 "/usr/bin/python3 $D/bg.py $D/bg.sock" '{"background":true}')"
	  sleep 2
	  printf '%s\n' "$(call_json 2 "for i in \$(seq 50); do [ -e $D/bg.sock.ready ] && break; sleep 0.1; done; /usr/bin/python3 $D/uconnect.py $RUNSOCK $D/bg.sock")"
	} | "$CW" serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	[ -e "$RUNSOCK.ready" ] || fail "the service did not start"
	assert_equal "$(out 2)" "$(printf '%s errno 111\n%s bg' "$RUNSOCK" "$D/bg.sock")"
}

@test "a killed forker of the calls' namespaces is replaced: the next calls still get namespaces of their own" {
	{ printf '%s\n' "$INIT" "$INITIALIZED" "$(call_json 1 'echo $$')"
	  sleep 1
	  # the forker: the agent's child that is itself a cmdwarden
	  agent=$(cat "$D/agent.pid")
	  forker=$(pgrep -P "$agent" -x cmdwarden | head -1)
	  echo "$forker" >"$D/forker.pid"
	  [ -n "$forker" ] && kill -KILL "$forker"
	  sleep 0.5
	  printf '%s\n' "$(call_json 2 'echo $$')" "$(call_json 3 'echo $$')"
	  sleep 1
	  printf '%s\n' "$(call_json 4 'echo $$')"
	} | bash -c 'echo $$ >"$1/agent.pid"; exec "$2" serve --state-dir "$3" --audit "$4"' \
		_ "$D" "$CW" "$STATE" "$AUDIT" >"$T/out" 2>"$T/err"
	[ -s "$D/forker.pid" ] || fail "no forker found among the agent's children"
	! kill -0 "$(cat "$D/forker.pid")" 2>/dev/null
	for i in 1 2 3 4; do
		assert_equal "$(structured "$i" exit_code)" 0
		assert_equal "$(out "$i")" 2
	done
}

# $D/inotify.py [READY SECONDS]: takes inotify instances until refused and
# says how many; with READY, holds them SECONDS after touching READY
write_inotify() {
	cat >"$D/inotify.py" <<'EOF'
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while True:
    fd = libc.inotify_init1(0o2000000)
    if fd < 0:
        break
    fds.append(fd)
print("held", len(fds), "errno", ctypes.get_errno(), flush=True)
if len(sys.argv) > 2:
    open(sys.argv[1], "w").close()
    time.sleep(float(sys.argv[2]))
EOF
}

# inotify_race [ENV...]: a background call takes every inotify instance the
# kernel allows a user and holds them while call 2 asks for its own
inotify_race() {
	{ printf '%s\n' "$INIT" "$INITIALIZED" \
		"$(call_json 1 "/usr/bin/python3 $D/inotify.py $D/ready 8 >$D/held1" '{"background":true}')"
	  for i in $(seq 50); do [ -e "$D/ready" ] && break; sleep 0.1; done
	  # the sandbox user outside the calls, while call 1 holds them all
	  runuser -u "$ACCOUNT" -- /usr/bin/python3 "$D/inotify.py" >"$D/outside"
	  printf '%s\n' "$(call_json 2 "/usr/bin/python3 $D/inotify.py; id -un")"
	  sleep 1
	} | env "$@" "$CW" serve --state-dir "$STATE" --audit "$AUDIT" >"$T/out" 2>"$T/err"
	[ -e "$D/ready" ] || fail "call 1 did not take its instances"
}

@test "a call holding every inotify instance of the user starves neither the next call nor the user's own processes" {
	write_inotify
	max=$(cat /proc/sys/fs/inotify/max_user_instances)
	inotify_race
	# call 1 took all a user may have (the attack), and call 2 as many
	assert_equal "$(cat "$D/held1")" "held $max errno 24"
	assert_equal "$(out 2)" "$(printf 'held %s errno 24\n%s' "$max" "$ACCOUNT")"
	held=$(awk '{print $2}' "$D/outside")
	[ "$held" -gt 0 ] || fail "the sandbox user's own process got no inotify instance: $(cat "$D/outside")"
	# without a user namespace per call, the same attack starves call 2
	rm -f "$D/ready"
	inotify_race CW_PROBE_DISABLE=call_user_namespace
	assert_equal "$(out 2)" "$(printf 'held 0 errno 24\n%s' "$ACCOUNT")"
	inv=$(structured 2 invocation_id)
	run jq -r --arg i "$inv" 'select(.type == "launch" and .invocation == $i) | .layer_gaps.per_uid_limits' "$AUDIT"
	assert_output --partial "disabled by CW_PROBE_DISABLE"
}

@test "the launch record names what the layers in force cannot do on this kernel" {
	serve_ns "$(call_json 1 true)"
	inv=$(structured 1 invocation_id)
	gaps=$(jq -c --arg i "$inv" 'select(.type == "launch" and .invocation == $i) | .layer_gaps' "$AUDIT")
	[ -n "$gaps" ] && [ "$gaps" != null ] || fail "no layer_gaps in the launch record"
	# vm.memfd_noexec: 6.3+
	if [ -e /proc/sys/vm/memfd_noexec ]; then
		assert_equal "$(jq -r 'has("memfd_noexec")' <<<"$gaps")" false
	else
		assert_equal "$(jq -r '.memfd_noexec' <<<"$gaps")" "no vm.memfd_noexec (before Linux 6.3): a binary written into a memfd can be executed"
	fi
	# a user namespace per call: what the probe says
	userns=$("$CW" probe --json | jq -r '.features.call_user_namespace.ok')
	assert_equal "$(jq -r 'has("per_uid_limits")' <<<"$gaps")" "$([ "$userns" = true ] && echo false || echo true)"
	# records of refused unix connects: the layer bpf_trace
	trace=$("$CW" probe --json | jq -r '.layers.bpf_trace')
	assert_equal "$(jq -r 'has("unix_refusal_records")' <<<"$gaps")" "$([ "$trace" = true ] && echo false || echo true)"
	# listeners with their cgroup: what the probe says
	diag=$("$CW" probe --json | jq -r '.features.sock_diag_inet.ok')
	[ "$diag" = true ] || [ "$diag" = false ] || fail "probe names no sock_diag_inet: $diag"
	assert_equal "$(jq -r 'has("local_services")' <<<"$gaps")" "$([ "$diag" = true ] && echo false || echo true)"
	# the same agent without inet sock_diag says so
	CW_PROBE_DISABLE=sock_diag_inet serve_ns "$(call_json 2 true)"
	inv=$(structured 2 invocation_id)
	run jq -r --arg i "$inv" 'select(.type == "launch" and .invocation == $i) | .layer_gaps.local_services' "$AUDIT"
	assert_output --partial "disabled by CW_PROBE_DISABLE"
	# and without tracepoint programs, that masked sockets go unrecorded
	CW_PROBE_DISABLE=bpf_tracepoint serve_ns "$(call_json 3 true)"
	inv=$(structured 3 invocation_id)
	run jq -r --arg i "$inv" 'select(.type == "launch" and .invocation == $i) | .layer_gaps.unix_refusal_records' "$AUDIT"
	assert_output --partial "leaves no net record without bpf_trace"
	# the reason: the probe's, where the layer was on until disabled
	if [ "$trace" = true ]; then
		assert_output --partial "disabled by CW_PROBE_DISABLE"
	fi
}
