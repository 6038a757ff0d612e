#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Kernel event records: what a call's processes executed and did to files,
# from the tracepoint programs or, without them, from fanotify; lost events
# counted; sandbox.files limits enforced from BPF, each kill paired with a
# twin under the limit.

load helpers

setup() {
	cw_setup
	# not public_dir: another suite's teardown removes /tmp/cw-e2e.*
	D=$(mktemp -d /tmp/cw-trace.XXXXXX)
	chmod 0777 "$D"
	cat >"$T/rw.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "cwd": "$D",
  "filesystem": {"read": ["/"], "write": ["$D"], "exec": ["/usr", "/bin"]}}}}}
JSON
}

teardown() {
	[ -n "${BG:-}" ] && kill "$BG" 2>/dev/null
	[ -n "${HOGS:-}" ] && kill $HOGS 2>/dev/null
	mountpoint -q "$D/small" && umount "$D/small"
	rm -rf "$D"
}

trace_on() {
	local j
	j=$("$CW" probe --json)
	[ "$(jq -r '.layers.bpf_trace' <<<"$j")" = true ] ||
		skip "layer bpf_trace is off here: $(jq -r '.layers_off.bpf_trace' <<<"$j")"
}

# forge : sysprobe opens $D/real 3000 times while a second thread rewrites
# the name in its buffer to $D/none/fake and back; sets worked to the
# [path, path_source] of every open record that worked, checks there is one
# for each open and each names a file that exists, never the fake (which
# cannot be created: no such directory, so a record of it that worked would
# be a forgery)
forge() {
	need_sysprobe
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "filesystem":{"write":["$D"],"exec":["/usr","/bin","$(dirname "$PROBE")"]}}}}}
JSON
	mcp --policy "$T/p.json" -- "$(call_json 1 "$PROBE --forge 3000 $D/real $D/none/fake")"
	inv=$(structured 1 invocation_id)
	opened=$(structured 1 stdout | awk '{ print $4 }')
	[ "$opened" -gt 0 ] || fail "$(structured 1 stdout)"
	worked=$(recs "$inv" "select(.type == \"file\" and .op == \"open\" and .result >= 0 and (.path | startswith(\"$D/\"))) | [.path, .path_source]")
	assert_equal "$(grep -c . <<<"$worked")" "$opened"
	[ -z "$(grep -F "$D/none/fake" <<<"$worked")" ]
	# a name the kernel caught half rewritten may be created (another
	# file of $D) and is recorded so: none is named as the program's
	# buffer said afterwards
	for p in $(jq -r '.[0]' <<<"$worked" | sort -u); do
		[ -f "$p" ] || fail "a record names $p, which was never made"
	done
}

# recs INV FILTER : the call's records matching a jq filter, compact
recs() {
	jq -c --arg inv "$1" "select(.invocation == \$inv) | $2" "$AUDIT"
}

# reads INV PATH : each summed read of PATH in the call's reads records,
# with what its record says: {count, found, path_source, source, pid, comm}
reads() {
	jq -c --arg inv "$1" --arg p "$2" 'select(.invocation == $inv and .type == "reads") |
		select(.files | has($p)) | {count: .files[$p], found, path_source, source, pid, comm}' "$AUDIT"
}

@test "tracepoints: exec records with argv and an open record carry the call's invocation" {
	trace_on
	mcp -- "$(call_json 1 "bash -c 'cat /etc/hostname; ls /tmp >/dev/null'")"
	inv=$(structured 1 invocation_id)
	[ "$(structured 1 exit_code)" -eq 0 ]
	for p in /usr/bin/bash /usr/bin/cat /usr/bin/ls; do
		[ -n "$(recs "$inv" "select(.type == \"exec\" and .filename == \"$p\")")" ] ||
			fail "no exec record for $p"
	done
	assert_equal "$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/cat") | .argv')" '["cat","/etc/hostname"]'
	assert_equal "$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/ls") | .argv')" '["ls","/tmp"]'
	# cat's read of /etc/hostname, by cat's own pid, summed with the
	# other reads of it
	cat_pid=$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/cat") | .pid')
	read=$(reads "$inv" /etc/hostname)
	[ -n "$read" ] || fail "no reads record for /etc/hostname"
	assert_equal "$(jq -r '.pid' <<<"$read")" "$cat_pid"
	assert_equal "$(jq -r '[.comm, .source, .count, .found, .path_source] | @tsv' <<<"$read")" "$(printf 'cat\tbpf\t1\ttrue\tkernel')"
	[ -z "$(recs "$inv" 'select(.type == "file" and .path == "/etc/hostname")')" ] ||
		fail "a read-only open of /etc/hostname has a file record of its own"
	# the shell's open of a file for writing is a record of its own
	open=$(recs "$inv" 'select(.type == "file" and .op == "open" and .path == "/dev/null")')
	[ -n "$open" ] || fail "no open record for /dev/null"
	assert_equal "$(jq -r '.comm + " " + .source + " " + .flags[0]' <<<"$open")" "bash bpf wronly"
	[ "$(jq -r '.result' <<<"$open")" -ge 0 ]
	# the process tree: bash forked cat, and cat exited with 0
	[ -n "$(recs "$inv" "select(.type == \"process\" and .event == \"fork\" and .child == $cat_pid)")" ]
	assert_equal "$(recs "$inv" "select(.type == \"process\" and .event == \"exit\" and .pid == $cat_pid) | .exit_code")" 0
	# the exit record counts them and says where they came from
	exit_rec=$(recs "$inv" 'select(.type == "exit")')
	assert_equal "$(jq -c '.sources' <<<"$exit_rec")" '["bpf_tracepoint"]'
	assert_equal "$(jq -r '.events_lost' <<<"$exit_rec")" 0
	[ "$(jq -r '.events.exec' <<<"$exit_rec")" -ge 3 ]
	assert_equal "$(jq -r '.events.exec' <<<"$exit_rec")" "$(recs "$inv" 'select(.type == "exec")' | wc -l)"
	assert_equal "$(jq -r '.events.file' <<<"$exit_rec")" "$(recs "$inv" 'select(.type == "file")' | wc -l)"
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .sources')" '["bpf_tracepoint"]'
	# and so does the result's audit summary
	assert_equal "$(structured 1 audit.execs)" "$(jq -r '.events.exec' <<<"$exit_rec")"
	assert_equal "$(structured 1 audit.files)" "$(jq -r '.events.file' <<<"$exit_rec")"
	assert_equal "$(structured 1 audit.events_lost)" 0
	assert_equal "$(resp 1 | jq -c .result.structuredContent.audit.sources)" '["bpf_tracepoint"]'
	# all of them lie between the launch and the exit record
	run recs "$inv" '.type'
	assert_equal "${lines[1]}" '"launch"'
	assert_equal "${lines[-1]}" '"exit"'
}

@test "tracepoints: unlink, rename, chmod and failed opens are recorded with their results" {
	trace_on
	# the call's account may not read it
	install -m 000 /dev/null "$D/locked"
	mcp --policy "$T/rw.json" -- "$(call_json 1 "touch $D/a && mv $D/a $D/b && chmod 640 $D/b && rm $D/b && cat $D/missing; cat $D/locked")"
	inv=$(structured 1 invocation_id)
	# read from the process after the call: said so
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "rename") | [.path, .path2, .result, .path_source]')" "[\"$D/a\",\"$D/b\",0,\"user_memory\"]"
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "chmod") | [.path, .mode, .result, .comm]')" "[\"$D/b\",$((8#640)),0,\"chmod\"]"
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "unlink") | [.path, .result, .comm]')" "[\"$D/b\",0,\"rm\"]"
	# a read of a file that is not there is summed with the reads
	assert_equal "$(reads "$inv" "$D/missing" | jq -c '[.count, .found, .path_source]')" '[1,false,"user_memory"]'
	# a read refused is a record of its own, with its error
	assert_equal "$(recs "$inv" "select(.type == \"file\" and .path == \"$D/locked\") | [.op, .result, .error]")" '["open",-1,"Permission denied"]'
	assert_equal "$(recs "$inv" "select(.type == \"file\" and .op == \"open\" and .path == \"$D/a\" and .comm == \"touch\") | .flags | index(\"creat\") != null")" true
	[ ! -e "$D/b" ]
}

@test "tracepoints: truncate, link, symlink, mkdir, mknod, utimes, the xattr calls and fallocate each leave a record" {
	trace_on
	cat >"$D/mutate.py" <<'PY'
import os, stat, sys
d = sys.argv[1]
f = d + "/f"
with open(f, "w") as o:
    o.write("0123456789")
os.truncate(f, 4)
fd = os.open(f, os.O_RDWR)
os.ftruncate(fd, 2)
os.posix_fallocate(fd, 0, 8192)
os.link(f, d + "/hard")
os.symlink("f", d + "/soft")
os.mkdir(d + "/sub", 0o750)
os.mknod(d + "/fifo", stat.S_IFIFO | 0o600)
os.utime(f, (1, 1))
for call in (lambda: os.setxattr(f, "user.cw", b"value"),
             lambda: os.setxattr(d + "/soft", "user.cw", b"v", follow_symlinks=False),
             lambda: os.setxattr(fd, "user.cw", b"vv"),
             lambda: os.removexattr(f, "user.cw")):
    try:
        call()
    except OSError:
        pass  # a file system without user xattrs: still recorded
print("mutated")
PY
	mcp --policy "$T/rw.json" -- "$(call_json 1 "python3 $D/mutate.py $D")"
	assert_equal "$(text 1 | jq -r .stdout)" mutated
	inv=$(structured 1 invocation_id)
	file() { recs "$inv" "select(.type == \"file\" and .op == \"$1\") | $2"; }
	# by path as written; by descriptor, the file the kernel knows
	assert_equal "$(file truncate '[.path, .dirfd, .length, .result, .path_source]')" "$(printf '["%s",null,4,0,"user_memory"]\n["%s",%s,2,0,"kernel"]' "$D/f" "$D/f" 3)"
	assert_equal "$(file fallocate '[.path, .dirfd, .length, .result, .path_source]')" "[\"$D/f\",3,8192,0,\"kernel\"]"
	assert_equal "$(file link '[.path, .path2, .result]')" "[\"$D/f\",\"$D/hard\",0]"
	assert_equal "$(file symlink '[.path, .target, .result]')" "[\"$D/soft\",\"f\",0]"
	assert_equal "$(file mkdir '[.path, .mode, .result]')" "[\"$D/sub\",$((8#750)),0]"
	assert_equal "$(file mknod '[.path, .mode, .result]')" "[\"$D/fifo\",$((8#10600)),0]"
	assert_equal "$(file utimes '[.path, .result]')" "[\"$D/f\",0]"
	# the three ways to set an attribute, by path, link and descriptor
	assert_equal "$(file setxattr '[.path, .name, .size, .flags, .dirfd]')" "$(printf '["%s","user.cw",5,null,null]\n["%s","user.cw",1,256,null]\n["%s","user.cw",2,null,3]' "$D/f" "$D/soft" "$D/f")"
	assert_equal "$(file removexattr '[.path, .name]')" "[\"$D/f\",\"user.cw\"]"
}

@test "tracepoints: an open names the file the kernel opened: relative paths, symlinks, .. and /proc/self/fd come out absolute and resolved" {
	trace_on
	mkdir -p "$D/dir/sub"
	echo x >"$D/dir/real"
	ln -s "$D/dir/real" "$D/link"
	chmod -R a+rwX "$D"
	# cwd is $D: a relative write, one through .., one through a symlink,
	# one through /proc/self/fd; a relative unlink; a read through ..
	mcp --policy "$T/rw.json" -- "$(call_json 1 "cd dir/sub && echo a >../w1 && echo b >>../../link && exec 7<../real && echo c >/proc/self/fd/7 2>/dev/null; cat ../sub/../real >/dev/null && rm ../w1 && echo done")"
	assert_equal "$(text 1 | jq -r .stdout)" done
	inv=$(structured 1 invocation_id)
	opens() { recs "$inv" "select(.type == \"file\" and .op == \"open\" and .comm == \"bash\" and (.path | startswith(\"$D\")) and (.flags | index(\"wronly\") != null)) | [.path, .path_source]"; }
	assert_equal "$(opens | sort -u)" "$(printf '["%s","kernel"]\n["%s","kernel"]' "$D/dir/real" "$D/dir/w1")"
	# the read through .. is summed under the file it opened
	assert_equal "$(reads "$inv" "$D/dir/real" | jq -c '[.path_source, .count]')" '["kernel",2]'
	# a mutation keeps its name as written, joined to the directory the
	# kernel knows
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "unlink") | [.path, .path_source]')" "[\"$D/dir/sub/../w1\",\"user_memory\"]"
}

@test "tracepoints: a path another thread rewrites after an open is recorded as the file the kernel opened, never forged" {
	trace_on
	forge
	assert_equal "$(jq -r '.[1]' <<<"$worked" | sort -u)" kernel
	grep -qF "[\"$D/real\",\"kernel\"]" <<<"$worked"
}

@test "tracepoints: processes outside the call's cgroups produce no records" {
	trace_on
	cp /usr/bin/cat "$D/cw-outside-cat"
	# an outside process opening and executing while the call runs; the
	# call starts only once it has
	(
		for _ in $(seq 1 60); do
			"$D/cw-outside-cat" /etc/hostname >/dev/null
			: >"$D/outside-ran"
			sleep 0.02
		done
	) 3>&- </dev/null &
	BG=$!
	mcp -- "$(call_json 1 "while [ ! -e $D/outside-ran ]; do sleep 0.01; done; sleep 0.3; cat /etc/hostname")"
	wait "$BG" || true
	BG=
	inv=$(structured 1 invocation_id)
	[ -e "$D/outside-ran" ]
	# the call's own cat is there ...
	[ -n "$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/cat")')" ]
	# ... the outside one is in no kernel event record, under any invocation
	run jq -c 'select(.type == "exec" or .type == "file" or .type == "process" or .type == "reads") |
		select(.comm == "cw-outside-cat" or ((.filename // "") | contains("cw-outside-cat")) or
		       ((.path // "") | contains("outside-ran")) or
		       ((.files // {}) | keys | any(contains("outside") or contains("cw-outside-cat"))))' "$AUDIT"
	assert_output ''
}

@test "tracepoints: a flood of reads is summed per path, and the creations hidden among them are each recorded" {
	trace_on
	# three processes hide 20 creations each among 300 reads apiece
	cat >"$D/hide.py" <<'PY'
import os, sys
d, who = sys.argv[1], sys.argv[2]
for i in range(20):
    for _ in range(300):
        os.close(os.open("/etc/hostname", os.O_RDONLY))
    os.close(os.open(f"{d}/hidden-{who}-{i}", os.O_WRONLY | os.O_CREAT, 0o600))
PY
	mcp --policy "$T/rw.json" -- "$(call_json 1 "for w in a b c; do python3 $D/hide.py $D \$w & done; wait; echo done")"
	assert_equal "$(text 1 | jq -r .stdout)" done
	inv=$(structured 1 invocation_id)
	# every hidden creation is a record of its own
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "open" and (.path | test("/hidden-[abc]-[0-9]+$"))) | .path' | sort -u | wc -l)" 60
	# the reads are one sum: the count, found, and no record of their own
	assert_equal "$(reads "$inv" /etc/hostname | jq -c '[.count, .found]')" '[18000,true]'
	# and the exit record counts every one of them
	[ "$(recs "$inv" 'select(.type == "exit") | .events.reads')" -ge 18000 ]
	assert_equal "$(recs "$inv" 'select(.type == "file" and .path == "/etc/hostname")')" ''
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .events_lost')" 0
}

@test "tracepoints: a process whose event finds the ring full is killed, with a limit record and a note; paused, the same burst loses none" {
	trace_on
	# a C loop of opens for writing, a record each: faster than the
	# agent writes records, so a 4 KiB ring fills
	need_sysprobe
	cat >"$T/p.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "filesystem":{"write":["$D"],"exec":["/usr","/bin","$(dirname "$PROBE")"]}}}}}
JSON
	mcp --policy "$T/p.json" --trace-ringbuf 4 --trace-overflow kill -- \
		"$(call_json 1 "$PROBE --writes 20000 $D/w; echo rc=\$?")"
	inv=$(structured 1 invocation_id)
	# killed before it could finish, unrecorded
	assert_equal "$(structured 1 stdout)" rc=137
	exit_rec=$(recs "$inv" 'select(.type == "exit")')
	lost=$(jq -r '.events_lost' <<<"$exit_rec")
	[ "$lost" -gt 0 ] || fail "a 4 KiB ring buffer lost nothing of 20000 opens"
	assert_equal "$(structured 1 audit.events_lost)" "$lost"
	assert_equal "$(recs "$inv" 'select(.type == "limit" and .limit == "trace_ring") | [.comm, .action, .lost]')" "[\"sysprobe\",\"killed\",$lost]"
	run jq -r .stderr <<<"$(text 1)"
	assert_output --regexp "\[cmdwarden\] sysprobe \(pid [0-9]+\) killed: its kernel events found the audit's ring buffer full, $lost lost"
	recorded=$(recs "$inv" "select(.type == \"file\" and .path == \"$D/w\")" | wc -l)
	[ "$recorded" -lt 20000 ] || fail "all $recorded recorded, yet $lost lost"
	assert_equal "$(jq -r '.events.file' <<<"$exit_rec")" "$(recs "$inv" 'select(.type == "file")' | wc -l)"
	# and audit stats reports them
	assert_equal "$("$CW" audit stats --json "$AUDIT" | jq -r .events_lost)" "$lost"

	# the twin: the same burst with the defaults (512 KiB ring, pausing):
	# the call waits whenever the ring is over half full, and loses nothing,
	# even with every CPU busy with something else (the reader must not
	# wait its turn behind them while the command fills the ring)
	rm -f "$AUDIT" "$D/w"
	HOGS=
	for _ in $(seq "$(nproc)"); do
		sh -c 'while :; do :; done' &
		HOGS="$HOGS $!"
	done
	mcp --policy "$T/p.json" -- "$(call_json 2 "$PROBE --writes 20000 $D/w && echo done")"
	kill $HOGS
	HOGS=
	inv=$(structured 2 invocation_id)
	assert_equal "$(structured 2 stdout)" "writes 20000 failed 0
done"
	exit_rec=$(recs "$inv" 'select(.type == "exit")')
	echo "# paused $(jq -r '.events.paused // 0' <<<"$exit_rec") times, $(jq -r '.events.paused_ms // 0' <<<"$exit_rec") ms" >&3
	assert_equal "$(jq -r .events_lost <<<"$exit_rec")" 0
	assert_equal "$(recs "$inv" "select(.type == \"file\" and .path == \"$D/w\")" | wc -l)" 20000
}

@test "audit budget: past sandbox.audit.max_records a call's kernel events are counted by kind, with a limit record and a note; without it each is a record" {
	budget() {
		cat >"$T/budget.json" <<JSON
{"version":"1","default":"deny","tools":{"run_command":{"sandbox":{
  "cwd": "$D",
  "filesystem": {"read": ["/"], "write": ["$D"], "exec": ["/usr", "/bin"]},
  "audit": {"max_records": $1}}}}}
JSON
	}
	make600="for i in \$(seq 600); do : >$D/b\$i; done; echo made"
	budget 50
	mcp --policy "$T/budget.json" -- "$(call_json 1 "$make600")"
	jq -se 'any(.[]; .type == "agent" and (.sources | length) > 0)' "$AUDIT" >/dev/null ||
		skip "no kernel event source here: $(head -1 "$AUDIT" | jq -c .trace_error)"
	assert_equal "$(structured 1 stdout)" made
	inv=$(structured 1 invocation_id)
	# the budget, and not one record of the kind it bounds more
	assert_equal "$(recs "$inv" 'select(.type == "exec" or .type == "file" or .type == "process")' | wc -l)" 50
	lim=$(recs "$inv" 'select(.type == "limit" and .limit == "audit_records")')
	assert_equal "$(jq -r '[.records, .max_records, .action] | @tsv' <<<"$lim")" "$(printf '50\t50\tsummarised')"
	# what was left out is counted, by kind
	[ "$(jq -r .summarised <<<"$lim")" -ge 550 ] || fail "$lim"
	assert_equal "$(jq -r '[.events[]] | add' <<<"$lim")" "$(jq -r .summarised <<<"$lim")"
	run jq -r .stderr <<<"$(text 1)"
	assert_output --regexp "\[cmdwarden\] $(jq -r .summarised <<<"$lim") kernel events past the audit budget of 50 records or [0-9]+ bytes were counted by kind, not recorded one by one \(sandbox.audit\)"
	# the twin: no budget, a record for each file made
	rm -f "$AUDIT" "$D"/b*
	budget 0
	mcp --policy "$T/budget.json" -- "$(call_json 2 "$make600")"
	inv=$(structured 2 invocation_id)
	assert_equal "$(recs "$inv" 'select(.type == "file" and (.path | test("/b[0-9]+$"))) | .path' | sort -u | wc -l)" 600
	assert_equal "$(recs "$inv" 'select(.type == "limit")')" ""
}

@test "tracepoints: a long argv is cut at the documented bound and flagged" {
	trace_on
	long=$(printf 'x%.0s' $(seq 1 3000))
	mcp -- "$(call_json 1 "/bin/echo $long >/dev/null; /bin/echo short")"
	inv=$(structured 1 invocation_id)
	rec=$(recs "$inv" 'select(.type == "exec" and .filename == "/bin/echo" and (.argv | length) > 1 and (.argv[1] | startswith("xxx")))')
	assert_equal "$(jq -r '.argv_truncated' <<<"$rec")" true
	# arguments and the NULs between them fill the 1024-byte bound
	assert_equal "$(jq -r '.argv | (map(length) | add) + length - 1' <<<"$rec")" 1024
	assert_equal "$(recs "$inv" 'select(.type == "exec" and .argv == ["/bin/echo","short"]) | .argv_truncated')" null
}

@test "files: crossing max_files_written kills the writer and records it; the twin under the limit completes" {
	trace_on
	jq '.tools.run_command.sandbox.files = {"max_files_written": 5}' "$T/rw.json" >"$T/files.json"
	mcp --policy "$T/files.json" -- \
		"$(call_json 1 "for i in 1 2 3 4 5; do echo x > $D/a\$i; done; echo survived")" \
		"$(call_json 2 "for i in 1 2 3 4 5 6 7 8; do echo x > $D/b\$i; done; echo survived")"
	# the twin: five files, no kill, no limit record
	assert_equal "$(structured 1 stdout)" survived
	inv1=$(structured 1 invocation_id)
	assert_equal "$(recs "$inv1" 'select(.type == "limit")')" ""
	assert_equal "$(recs "$inv1" 'select(.type == "exit") | .files.written')" 5
	# the sixth open for writing: the kill follows it
	assert_equal "$(structured 2 stdout)" ""
	assert_equal "$(structured 2 exit_code)" 137
	[ -e "$D/b6" ] && [ ! -e "$D/b7" ]
	inv2=$(structured 2 invocation_id)
	lim=$(recs "$inv2" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .peak, .max, .comm, .action]' <<<"$lim")" '["max_files_written",6,5,"bash","killed"]'
	assert_equal "$(jq -r .pid <<<"$lim")" "$(recs "$inv2" 'select(.type == "exit") | .pid')"
}

@test "files: crossing max_write_bytes kills the writing process, not its parent" {
	trace_on
	jq '.tools.run_command.sandbox.files = {"max_write_bytes": 100000}' "$T/rw.json" >"$T/files.json"
	mcp --policy "$T/files.json" -- \
		"$(call_json 1 "head -c 60000 /dev/zero > $D/a; echo a=\$?; head -c 500000 /dev/zero > $D/b; echo b=\$?")"
	assert_equal "$(structured 1 stdout)" "$(printf 'a=0\nb=137')"
	[ "$(stat -c %s "$D/a")" -eq 60000 ]
	[ "$(stat -c %s "$D/b")" -lt 500000 ]
	inv=$(structured 1 invocation_id)
	lim=$(recs "$inv" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .max, .comm]' <<<"$lim")" '["max_write_bytes",100000,"head"]'
	[ "$(jq -r .peak <<<"$lim")" -gt 100000 ]
}

# write_limit : the policy of the max_write_bytes tests, 100000 bytes
write_limit() {
	jq '.tools.run_command.sandbox.files = {"max_write_bytes": 100000}' "$T/rw.json" >"$T/files.json"
}

# call_bytes ID : the bytes call ID wrote to files, from its exit record.
# A call of `true` gives what the launch itself counts: nothing (the
# child's "0" into each cgroup v1 tasks file is no data).
call_bytes() {
	recs "$(structured "$1" invocation_id)" 'select(.type == "exit") | .files.write_bytes'
}

@test "files: the launch's own write into a cgroup v1 tasks file counts nothing toward max_write_bytes; five bytes into a file count five" {
	trace_on
	write_limit
	[ -n "$("$CW" probe --json | jq -r 'select(.features.cgroup_v1_memory.ok or .features.cgroup_v1_pids.ok) | 1')" ] ||
		echo "# no cgroup v1 controller here: the launch writes no tasks file" >&3
	mcp --policy "$T/files.json" -- "$(call_json 1 true)" "$(call_json 2 "printf 12345 >$D/five")"
	assert_equal "$(structured 2 exit_code)" 0
	assert_equal "$(call_bytes 1)" 0
	assert_equal "$(call_bytes 2)" 5
}

# copier : $D/copy.py HOW TOTAL SRC DST copies TOTAL bytes of SRC into DST
# with the system call HOW (copy_file_range, sendfile or splice), 30000
# bytes a call; splice goes through a pipe, SRC into it (a splice into a
# pipe, no file bytes) and out of it into DST. $D/src has 1000000 bytes.
copier() {
	cat >"$D/copy.py" <<'PY'
import os, sys
how, total, src, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
fi = os.open(src, os.O_RDONLY)
fo = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
r, w = os.pipe()
done = 0
while done < total:
    n = min(30000, total - done)
    if how == "copy_file_range":
        n = os.copy_file_range(fi, fo, n)
    elif how == "sendfile":
        n = os.sendfile(fo, fi, None, n)
    elif how == "splice":
        n = os.splice(r, fo, os.splice(fi, w, n))
    else:
        sys.exit("unknown system call " + how)
    if n <= 0:
        sys.exit("%s returned %d" % (how, n))
    done += n
print(how, done)
PY
	head -c 1000000 /dev/urandom >"$D/src"
	chmod 644 "$D/copy.py" "$D/src"
}

# copy_crosses HOW : copying 60000 bytes with HOW completes and counts
# 60000; copying 1000000 is killed at the fourth call, the one that
# crosses 100000, and the limit record names it
copy_crosses() {
	trace_on
	copier
	write_limit
	mcp --policy "$T/files.json" -- \
		"$(call_json 1 "python3 $D/copy.py $1 60000 $D/src $D/a")" \
		"$(call_json 2 "python3 $D/copy.py $1 1000000 $D/src $D/b; echo b=\$?")" \
		"$(call_json 3 true)"
	base=$(call_bytes 3)
	assert_equal "$(structured 1 stdout)" "$1 60000"
	cmp -n 60000 "$D/src" "$D/a"
	[ "$(stat -c %s "$D/a")" -eq 60000 ]
	inv1=$(structured 1 invocation_id)
	assert_equal "$(recs "$inv1" 'select(.type == "limit")')" ""
	assert_equal "$(call_bytes 1)" $((base + 60000))
	assert_equal "$(structured 2 stdout)" b=137
	assert_equal "$(stat -c %s "$D/b")" 120000
	inv2=$(structured 2 invocation_id)
	lim=$(recs "$inv2" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .peak, .max, .comm, .action]' <<<"$lim")" "[\"max_write_bytes\",$((base + 120000)),100000,\"python3\",\"killed\"]"
}

@test "files: max_write_bytes counts copy_file_range; the twin under the limit completes" {
	copy_crosses copy_file_range
}

@test "files: max_write_bytes counts sendfile into a file; the twin under the limit completes" {
	copy_crosses sendfile
}

@test "files: max_write_bytes counts splice into a file, not into a pipe; the twin under the limit completes" {
	copy_crosses splice
}

@test "files: max_write_bytes counts fallocate's length, with or without keep-size; a punched hole counts nothing" {
	trace_on
	write_limit
	mcp --policy "$T/files.json" -- \
		"$(call_json 1 "fallocate -l 60000 $D/a && fallocate -p -o 0 -l 10000000 $D/a && echo done")" \
		"$(call_json 2 "for i in \$(seq 0 19); do fallocate -o \$((i * 30000)) -l 30000 $D/b || { echo \"rc=\$? at \$i\"; break; }; done; fallocate -l 10 $D/c; echo c=\$?")" \
		"$(call_json 3 ": >$D/k; fallocate -n -l 500000 $D/k; echo k=\$?")" \
		"$(call_json 4 true)"
	base=$(call_bytes 4)
	# the twin: 60000 allocated, then the hole punched, ten times larger
	assert_equal "$(structured 1 stdout)" done
	inv1=$(structured 1 invocation_id)
	assert_equal "$(recs "$inv1" 'select(.type == "limit")')" ""
	assert_equal "$(call_bytes 1)" $((base + 60000))
	[ "$(stat -c %s "$D/a")" -eq 60000 ]
	[ "$(stat -c %b "$D/a")" -eq 0 ]
	# the fourth fallocate crossed the limit and was the last; over the
	# limit, the next is killed too and not counted further
	assert_equal "$(structured 2 stdout)" "$(printf 'rc=137 at 3\nc=137')"
	assert_equal "$(stat -c %s "$D/b")" 120000
	[ "$(stat -c %s "$D/c")" -eq 10 ]
	inv2=$(structured 2 invocation_id)
	lim=$(recs "$inv2" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .peak, .max, .comm, .action]' <<<"$lim")" "[\"max_write_bytes\",$((base + 120000)),100000,\"fallocate\",\"killed\"]"
	# keep-size: the file's size stays 0, its blocks were allocated
	assert_equal "$(structured 3 stdout)" k=137
	[ "$(stat -c %s "$D/k")" -eq 0 ]
	[ "$(($(stat -c %b "$D/k") * 512))" -ge 500000 ]
	inv3=$(structured 3 invocation_id)
	assert_equal "$(recs "$inv3" 'select(.type == "limit") | [.limit, .peak]' | jq -c .)" "[\"max_write_bytes\",$((base + 500000))]"
}

@test "files: a fallocate that runs out of space counts its length; one that fits under the limit does not kill" {
	trace_on
	mkdir "$D/small"
	mount -t tmpfs -o size=64k,mode=0777 tmpfs "$D/small"
	write_limit
	mcp --policy "$T/files.json" -- \
		"$(call_json 1 "fallocate -l 90000 $D/small/a; echo a=\$?")" \
		"$(call_json 2 "fallocate -l 500000 $D/small/b; echo b=\$?")" \
		"$(call_json 3 true)"
	base=$(call_bytes 3)
	# over the file system's room but under the limit: refused, not killed
	assert_equal "$(structured 1 stdout)" a=1
	[[ "$(structured 1 stderr)" == *"No space left on device"* ]]
	inv1=$(structured 1 invocation_id)
	assert_equal "$(recs "$inv1" 'select(.type == "limit")')" ""
	assert_equal "$(call_bytes 1)" $((base + 90000))
	# the attempt past the limit is killed although it failed
	assert_equal "$(structured 2 stdout)" b=137
	inv2=$(structured 2 invocation_id)
	lim=$(recs "$inv2" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .peak, .max, .comm, .action]' <<<"$lim")" "[\"max_write_bytes\",$((base + 500000)),100000,\"fallocate\",\"killed\"]"
}

@test "files: opening a deny_open path kills the opener before it reads, and every later opener of the file; a sibling name is not a match" {
	trace_on
	echo secret-data >"$D/secret"
	echo other-data >"$D/secretary"
	chmod 644 "$D/secret" "$D/secretary"
	jq --arg p "$D/secret" '.tools.run_command.sandbox.files = {"deny_open": [$p]}' "$T/rw.json" >"$T/files.json"
	# the second open of the file finds its sum in the kernel, not its
	# path: the sum remembers the match; the sibling is read twice
	mcp --policy "$T/files.json" -- "$(call_json 1 "cat $D/secretary; cat $D/secret; echo rc=\$?; cat $D/secret; echo rc=\$?; cat $D/secretary")"
	assert_equal "$(structured 1 stdout)" "$(printf 'other-data\nrc=137\nrc=137\nother-data')"
	inv=$(structured 1 invocation_id)
	lim=$(recs "$inv" 'select(.type == "limit")')
	assert_equal "$(jq -c '[.limit, .path, .prefix, .comm]' <<<"$lim")" "[\"deny_open\",\"$D/secret\",\"$D/secret\",\"cat\"]"
}

# kaudit_on : tracepoints off (E2B's kernel has none), the kernel audit on
kaudit_on() {
	local j
	export CW_PROBE_DISABLE=bpf_tracepoint
	j=$("$CW" probe --json)
	[ "$(jq -r .features.kaudit.ok <<<"$j")" = true ] ||
		skip "the kernel audit is not ours here: $(jq -r .features.kaudit.detail <<<"$j")"
}

@test "kaudit: without BPF tracing the kernel's audit records each exec with argv and each mutation of the call, as the kernel read the paths" {
	kaudit_on
	cat >"$D/work.sh" <<SH
cd $D && echo hi >f && mv f g && chmod 600 g && mkdir sub && ln -s g soft && ln g hard && truncate -s 1 hard && rm g && rmdir sub && echo done
SH
	mcp --policy "$T/rw.json" -- "$(call_json 1 "bash $D/work.sh")"
	assert_equal "$(structured 1 stdout)" done
	inv=$(structured 1 invocation_id)
	sources='["kaudit"]'
	[ "$("$CW" probe --json | jq -r .features.proc_events.ok)" = true ] && sources='["kaudit","proc_events"]'
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .sources')" "$sources"
	assert_equal "$(resp 1 | jq -c .result.structuredContent.audit.sources)" "$sources"
	assert_equal "$(head -1 "$AUDIT" | jq -c '.sources')" "$sources"
	# each program with its arguments, and who ran it
	assert_equal "$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/mv") | [.argv, .source, .uid == (.uid | numbers)]')" '[["mv","f","g"],"kaudit",true]'
	bash_pid=$(recs "$inv" 'select(.type == "exec" and (.argv | index("'"$D"'/work.sh"))) | .pid')
	assert_equal "$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/mv") | .ppid')" "$bash_pid"
	# each mutation, its paths made absolute from the directory it ran in
	file() { recs "$inv" "select(.type == \"file\" and .op == \"$1\") | $2"; }
	assert_equal "$(file open "select(.path == \"$D/f\") | [(.flags | index(\"creat\") != null), .result >= 0]")" '[true,true]'
	assert_equal "$(file rename '[.path, .path2, .result, .path_source]')" "[\"$D/f\",\"$D/g\",0,\"kernel\"]"
	assert_equal "$(file chmod '[.path, .mode]')" "[\"$D/g\",$((8#600))]"
	assert_equal "$(file mkdir '.path')" "\"$D/sub\""
	assert_equal "$(file symlink '.path')" "\"$D/soft\""
	assert_equal "$(file link '[.path, .path2]')" "[\"$D/g\",\"$D/hard\"]"
	assert_equal "$(file unlink '.path')" "\"$D/g\""
	assert_equal "$(file rmdir '.path')" "\"$D/sub\""
	[ -n "$(file truncate '.length')" ] || fail "no truncate record"
	# nothing of processes outside the call
	[ -z "$(jq -c 'select(.type == "file" and .source == "kaudit" and .invocation == null)' "$AUDIT")" ]
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .events_lost')" 0
}

@test "kaudit: the process events connector gives the call's forks and exits, with exit codes and signals; an outside process's are not the call's" {
	kaudit_on
	[ "$("$CW" probe --json | jq -r .features.proc_events.ok)" = true ] ||
		skip "no process events: $("$CW" probe --json | jq -r .features.proc_events.detail)"
	cp /usr/bin/sleep "$D/cw-outside-sleep"
	# an outside process forking and exiting while the call runs
	(
		for _ in $(seq 1 40); do
			"$D/cw-outside-sleep" 0.01
			: >"$D/outside-ran"
		done
	) 3>&- </dev/null &
	BG=$!
	mcp --policy "$T/rw.json" -- "$(call_json 1 "while [ ! -e $D/outside-ran ]; do sleep 0.01; done; sh -c 'exit 3'; (exit 5); sleep 30 & sleep 0.3; kill -9 \$!; wait; echo done")"
	wait "$BG" || true
	BG=
	assert_equal "$(structured 1 stdout)" done
	inv=$(structured 1 invocation_id)
	proc() { recs "$inv" "select(.type == \"process\" and .event == \"$1\") | $2"; }
	# each exit with how it ended, each fork from the call's shell
	sh_pid=$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/sh") | .pid' | head -1)
	sleep_pid=$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/sleep" and .argv[1] == "30") | .pid')
	[ -n "$sh_pid" ] && [ -n "$sleep_pid" ] || fail "no exec records of sh and sleep"
	assert_equal "$(proc exit "select(.pid == $sh_pid) | [.exit_code, .signal, .source, .comm]")" '[3,0,"proc_events","sh"]'
	assert_equal "$(proc exit "select(.pid == $sleep_pid) | [.exit_code, .signal]")" '[-1,9]'
	main=$(recs "$inv" 'select(.type == "exit") | .pid')
	assert_equal "$(proc fork "select(.child == $sh_pid) | .pid")" "$main"
	assert_equal "$(proc fork "select(.child == $sleep_pid) | .pid")" "$main"
	assert_equal "$(proc exit "select(.pid == $main) | .exit_code")" 0
	# a subshell that executes nothing is known by its fork alone
	sub=$(proc exit 'select(.exit_code == 5) | .pid')
	[ -n "$sub" ] || fail "no exit record of the subshell"
	assert_equal "$(proc fork "select(.child == $sub) | [.pid, .comm]")" "[$main,\"bash\"]"
	# the exit record counts them
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .events.exit')" "$(proc exit .pid | wc -l)"
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .events.fork')" "$(proc fork .pid | wc -l)"
	# the outside process ran, and is in no process record
	[ -e "$D/outside-ran" ]
	assert_equal "$(jq -c 'select(.type == "process" and (.comm | startswith("cw-outside")))' "$AUDIT")" ''

	# the twin: without the connector, no process record, and the
	# sources say so
	rm -f "$AUDIT"
	CW_PROBE_DISABLE=bpf_tracepoint,proc_events mcp --policy "$T/rw.json" -- "$(call_json 2 "sh -c 'exit 3'; echo done")"
	assert_equal "$(structured 2 stdout)" done
	inv=$(structured 2 invocation_id)
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .sources')" '["kaudit"]'
	assert_equal "$(recs "$inv" 'select(.type == "process")')" ''
}

@test "kaudit: a path another thread rewrites after the call is recorded as the kernel read it, never forged" {
	kaudit_on
	forge
}

@test "kaudit: an audit daemon already running is not displaced; the agent says so and uses fanotify" {
	kaudit_on
	# a stand-in daemon: registered, then left running
	python3 - "$T/daemon.pid" <<'PY' &
import os, socket, struct, sys, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)
st = struct.pack("=IIIIIIIIII", 4, 0, 0, os.getpid(), 0, 0, 0, 0, 0, 0)
s.send(struct.pack("=IHHII", 16 + len(st), 1001, 5, 1, 0) + st)
s.recv(8192)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(30)
PY
	BG=$!
	for _ in $(seq 50); do [ -s "$T/daemon.pid" ] && break; sleep 0.1; done
	run "$CW" probe --json
	assert_equal "$(jq -r .features.kaudit.ok <<<"$output")" false
	assert_equal "$(jq -r .features.kaudit.detail <<<"$output")" "kernel audit: pid $(cat "$T/daemon.pid") is the audit daemon (auditd?); cmdwarden does not displace it"
	mcp -- "$(call_json 1 true)"
	[ "$(head -1 "$AUDIT" | jq -r '.sources[0] // "none"')" != kaudit ] || fail "displaced the daemon"
	kill "$BG"
	wait "$BG" 2>/dev/null || true
	BG=
	# the daemon gone, the kernel audit is the agent's again
	for _ in $(seq 50); do "$CW" probe --json | jq -e .features.kaudit.ok >/dev/null && break; sleep 0.1; done
	run "$CW" probe --json
	assert_equal "$(jq -r .features.kaudit.ok <<<"$output")" true
}

@test "fallback: with tracepoints and the kernel audit forced off, fanotify gives exec and open records of the call" {
	"$CW" probe --json | jq -e '.features.fanotify.ok' >/dev/null ||
		skip "fanotify is not available here"
	export CW_PROBE_DISABLE=bpf_tracepoint,kaudit
	mcp -- "$(call_json 1 "bash -c 'cat /etc/hostname; ls /tmp'")"
	inv=$(structured 1 invocation_id)
	assert_equal "$(structured 1 stdout | head -1)" "$(cat /etc/hostname)"
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .layers.bpf_trace')" false
	sources='["fanotify"]'
	[ "$("$CW" probe --json | jq -r .features.proc_events.ok)" = true ] && sources='["fanotify","proc_events"]'
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .sources')" "$sources"
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .sources')" "$sources"
	assert_equal "$(resp 1 | jq -c .result.structuredContent.audit.sources)" "$sources"
	for p in /usr/bin/cat /usr/bin/ls; do
		[ "$(recs "$inv" "select(.type == \"exec\" and .filename == \"$p\") | .source")" = '"fanotify"' ] ||
			fail "no fanotify exec record for $p"
	done
	cat_pid=$(recs "$inv" 'select(.type == "exec" and .filename == "/usr/bin/cat") | .pid')
	assert_equal "$(recs "$inv" 'select(.type == "file" and .op == "open" and .path == "/etc/hostname") | .pid')" "$cat_pid"
	# beside it, the process events connector: cat's fork and its exit,
	# the call's by its cgroup
	if [ "$sources" = '["fanotify","proc_events"]' ]; then
		assert_equal "$(recs "$inv" "select(.type == \"process\" and .event == \"exit\" and .pid == $cat_pid) | [.exit_code, .source]")" '[0,"proc_events"]'
		[ -n "$(recs "$inv" "select(.type == \"process\" and .event == \"fork\" and .child == $cat_pid)")" ] ||
			fail "no fork record of cat"
	fi
	# no sandbox.files enforcement without the BPF source, and it says so
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .files')" null
	assert_equal "$(head -1 "$AUDIT" | jq -c '.sources')" "$sources"
}

@test "fallback: with no event source at all, records say so instead of pretending" {
	export CW_PROBE_DISABLE=bpf_tracepoint,kaudit,fanotify
	mcp -- "$(call_json 1 "cat /etc/hostname")"
	inv=$(structured 1 invocation_id)
	assert_equal "$(structured 1 exit_code)" 0
	assert_equal "$(recs "$inv" 'select(.type == "launch") | .sources')" '[]'
	assert_equal "$(recs "$inv" 'select(.type == "exit") | .sources')" '[]'
	assert_equal "$(recs "$inv" 'select(.type == "exec" or .type == "file")')" ""
	assert_equal "$(resp 1 | jq -c .result.structuredContent.audit.sources)" '[]'
}
