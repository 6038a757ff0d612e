#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# /init of the test VM (tests/vm/vmtest.sh). Mounts what a guest like E2B's
# has, then runs the pass the kernel command line names (vmtest.passes) and
# writes its probe output and TAP to the results channel (vmtest.results: a
# second serial port, or a virtio console on microvm), between markers the
# host parses:
#   full  Debian's 6.1 kernel, everything it offers
#   e2b   the E2B-built kernel, as it is (no BTF, JIT, tracepoints, modules)
# Then powers the VM off (qemu runs with -no-reboot).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

say() { echo "vmtest-init: $*" >/dev/console; }
halt() {
	sync
	echo b >/proc/sysrq-trigger
	sleep 10
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
echo vmtest >/proc/sys/kernel/hostname
ip link set lo up
# the kernel's modules the tests need (loop), from its own package; a
# kernel without modules (E2B's) has what it needs built in
for m in /cw/build/modules/*.ko; do
	[ -e "$m" ] && ! insmod "$m" && say "insmod $m failed"
done
# the template's account owns its home (the initramfs is all root's)
chown 1000:1000 /home/user

# cgroup v2 alone, with controllers, as on E2B's guest. The suite runs in a
# leaf (runner/); each cmdwarden is started in a cgroup of its own beneath
# agents/ by cmdwarden-service, the way a service manager starts a
# delegated service, and creates its own cgroups beneath that (design §4).
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
cg=/sys/fs/cgroup
echo "+memory +pids +cpu" >"$cg/cgroup.subtree_control"
mkdir "$cg/runner" "$cg/agents"
echo "+memory +pids +cpu" >"$cg/agents/cgroup.subtree_control"
echo $$ >"$cg/runner/cgroup.procs"

results=$(sed -n 's/.*vmtest\.results=\([^ ]*\).*/\1/p' /proc/cmdline)
heartbeat=$(sed -n 's/.*vmtest\.heartbeat=\([^ ]*\).*/\1/p' /proc/cmdline)
exec 5>"${results:-/dev/ttyS1}" || { say "cannot open the results channel ${results:-/dev/ttyS1}"; halt; }
stty -F "${results:-/dev/ttyS1}" raw -echo 2>/dev/null
say "Linux $(uname -r), $(nproc) CPUs; landlock: $(cat /sys/kernel/security/lsm 2>/dev/null)"

cd /cw || { say "no /cw"; halt; }
# A heartbeat on a channel of its own: the host restarts the VM when it
# stops (the guest kernel itself is stuck, see vmtest.sh), never because a
# test is slow or hangs.
(while :; do date +%s; sleep 5; done) >"${heartbeat:-/dev/ttyS2}" 2>/dev/null </dev/null &

# Every static key the suite would otherwise switch on and off again and
# again stays on: an idle agent keeps its cgroup BPF programs and
# tracepoints attached for the whole run, and ftrace's raw_syscalls event
# (recording nothing) keeps sys_enter and sys_exit on, which the probe
# attaches to. Each switch makes the kernel patch its own code, which is
# what stops this guest under qemu's TCG (vmtest.sh says more); the agents
# under test attach and detach exactly as before, only the patching goes.
echo 0 >/sys/kernel/tracing/tracing_on 2>/dev/null &&
	echo 1 >/sys/kernel/tracing/events/raw_syscalls/enable 2>/dev/null
mkdir -p /run/keeper && mkfifo /run/keeper/in
# It leaves the kernel audit alone: one audit daemon at a time, and that
# is the agents' under test (E2B's kernel has no BPF tracing).
CW_PROBE_DISABLE=kaudit /cw/build/cmdwarden-service serve --state-dir /run/keeper --audit /run/keeper/audit.jsonl \
	</run/keeper/in >/dev/null 2>/run/keeper/err &
keeper=$!
sleep infinity >/run/keeper/in &

# vmtest.resume=PASS:N (set by the host after a restart): passes before PASS
# were done, and PASS goes on from its N-th file
resume=$(sed -n 's/.*vmtest\.resume=\([^ ]*\).*/\1/p' /proc/cmdline)
resume_pass=${resume%%:*}
resume_file=${resume#*:}

# run_pass NAME [BATS_FILE...] : the whole suite, or the files given, one
# bats run per file, each between markers, so a restarted VM knows where to
# go on and the host counts each file's TAP on its own
run_pass() {
	local name=$1 rc f i=0 first=1
	shift
	local suites=("$@")
	[ "${#suites[@]}" -gt 0 ] || suites=(tests/e2e/*.bats)
	if [ -n "$resume_pass" ]; then
		[ "$resume_pass" = "$name" ] || return 0
		first=$resume_file
		resume_pass=
	fi
	say "pass $name: start${resume:+ (from file $first)}"
	{
		echo "=== vmtest pass $name begin"
		echo "# Linux $(uname -r); bpf_jit_enable: $(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo 'absent (no JIT)'); modules: $([ -e /proc/modules ] && echo yes || echo 'no (CONFIG_MODULES off)'); kernel BTF: $([ -e /sys/kernel/btf/vmlinux ] && echo yes || echo no); LSMs: $(cat /sys/kernel/security/lsm 2>/dev/null)"
		echo "# sandbox user: $(getent passwd user || echo 'none (nobody)')"
		echo "# suites: ${suites[*]##*/}"
		if kill -0 "$keeper" 2>/dev/null; then
			echo "# static keys held by an idle agent (pid $keeper)"
		else
			echo "# the idle agent holding static keys is gone: $(tail -n 3 /run/keeper/err | tr '\n' ' ')"
		fi
		echo "# cmdwarden probe:"
		/cw/build/cmdwarden probe 2>&1 | sed 's/^/#   /'
	} >&5
	for f in "${suites[@]}"; do
		i=$((i + 1))
		[ "$i" -ge "$first" ] || continue
		echo "=== vmtest file $name $i ${f##*/} begin" >&5
		# TAP to the host as it comes; a copy of each result on the
		# console shows progress
		CW=/cw/build/cmdwarden-service bats --tap ${filter:+-f "$filter"} "$f" 2>&1 |
			tee >(grep --line-buffered -E '^(not )?ok ' |
				while IFS= read -r l; do printf '[%(%T)T] %s\n' -1 "$l"; done >/dev/console) >&5
		rc=${PIPESTATUS[0]}
		echo "=== vmtest file $name $i ${f##*/} end rc=$rc" >&5
	done
	echo "=== vmtest pass $name end" >&5
	say "pass $name: done"
}

# vmtest.passes=full or e2b on the kernel command line picks the pass;
passes=$(sed -n 's/.*vmtest\.passes=\([^ ]*\).*/\1/p' /proc/cmdline)
# vmtest.filter=REGEX runs only the tests whose names match (bats -f)
filter=$(sed -n 's/.*vmtest\.filter=\([^ ]*\).*/\1/p' /proc/cmdline)
export CW_EXPECT_CGROUP=v2
# seccomp floods: 5,000 denials, not 100,000; each is a user-notification
# round trip, which emulation makes ~20x slower than the tests' timeouts allow
export CW_E2E_FLOOD=5000
# the HTTP soak: 10 clients x 10 calls (after 10 each to warm up), not 50 x 200
export CW_E2E_SOAK="10 10"
# The suites whose outcome depends on what the kernel offers (event
# sources, BPF without BTF or JIT, Landlock, cgroups, namespaces, tmpfs,
# network, seccomp, probe and required layers, and the default profile's
# day of work) run in both passes. The MCP, HTTP, approval, reload, SDK and
# docs suites run the same code on any kernel and run on
# the host (make check); vmtest.suites=all adds them to the full pass.
kernel_suites=(tests/e2e/{audit,audit_cli,cli,concurrency,disk,layers,namespaces,network,run_command,seccomp,trace,workday}.bats)
suites=$(sed -n 's/.*vmtest\.suites=\([^ ]*\).*/\1/p' /proc/cmdline)
case ",${passes:-full}," in
*,full,*)
	if [ "$suites" = all ]; then run_pass full; else run_pass full "${kernel_suites[@]}"; fi
	;;
esac
case ",${passes:-full}," in *,e2b,*) run_pass e2b "${kernel_suites[@]}" ;; esac
echo "=== vmtest done" >&5
exec 5>&-
say "done"
halt
