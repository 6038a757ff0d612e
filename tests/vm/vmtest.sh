#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make vmtest: runs the end-to-end suite inside VMs on the two 6.1 kernels
# of design §4, one boot each:
#   full  Debian's 6.1 cloud kernel, with everything it offers
#   e2b   a kernel built the way E2B builds its guests (E2B_KERNEL, see
#         docs/kernels.md): no kernel BTF, no BPF JIT, no BPF on
#         tracepoints, no modules, no PCI; qemu's microvm machine, results
#         over virtio consoles. Nothing is overridden: the kernel lacks it.
# Prints each pass's kernel, probe output and TAP, and ends with "N passed,
# N failed, N skipped" over both; exits non-zero when a test fails, a pass
# does not report, or the VMs run out of time. When the guest kernel itself
# stops (the emulator's fault, see the run section), the VM is booted again
# and goes on from the file it was in.
#   vmtest.sh BUILD_DIR
# Environment: E2B_KERNEL (a bzImage; default ../shared/kernels/e2b-6.1/
# bzImage beside the checkout when it exists, else the e2b pass is skipped
# with the reason), VMTEST_KERNEL_PKG (a linux-image-* package for the full
# pass, default: what linux-image-cloud-amd64 depends on), VMTEST_TIMEOUT
# (seconds, 4200, for all boots together), VMTEST_MEM (MiB, 2048),
# VMTEST_CPUS (2), VMTEST_PASSES ("full e2b"), VMTEST_SUITES ("all": every
# e2e file in the full pass, not only those whose outcome depends on the
# kernel; see init.sh), VMTEST_FILTER (a regex
# without spaces: only the tests it matches, bats -f), VMTEST_HEARTBEAT
# (seconds of silence that mean the guest stopped, 180), VMTEST_RESTARTS
# (2 per pass), VMTEST_CPU (qemu -cpu, "max,-la57"), VMTEST_TCG_THREAD
# (multi or single).
#
# The root file system is an initramfs assembled from this machine's
# installed Debian packages (tests/vm/packages) and the shared libraries
# their programs load, plus the freshly built cmdwarden and tests/. Chosen
# over debootstrap because it takes seconds rather than minutes, needs no
# network beyond the kernel package and no disk image, holds exactly the
# versions the host suite ran with, and runs from RAM, which matters under
# TCG where every disk access is emulated. It is shaped like an E2B
# template: an account "user" (uid 1000, /home/user) with passwordless sudo.
# Debian's kernel is fetched with apt-get download and kept under
# BUILD_DIR/vm so nothing is cached outside the clone; its loop module (one
# test uses a loop device) goes into that boot's initrd only, and each
# kernel's config (when known) to /boot/config-VERSION.
set -uo pipefail
cd "$(dirname "$0")/../.."

BUILD=${1:-build}
VM=$BUILD/vm
TIMEOUT=${VMTEST_TIMEOUT:-4200}
MEM=${VMTEST_MEM:-2048}
CPUS=${VMTEST_CPUS:-2}
PASSES=${VMTEST_PASSES:-full e2b}
FILTER=${VMTEST_FILTER:-}
SUITES=${VMTEST_SUITES:-}
HEARTBEAT=${VMTEST_HEARTBEAT:-180}
MAX_RESTARTS=${VMTEST_RESTARTS:-2}

say() { printf 'vmtest: %s\n' "$*" >&2; }
die() {
	say "$*"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

# The kernel: Debian's linux-image-cloud-amd64 (6.1 in bookworm) resolves to
# one versioned package; its vmlinuz boots under qemu with everything the
# tests need built in (virtio and 8250 serial, cgroup2, BPF, Landlock).
kernel_pkg() {
	local p=${VMTEST_KERNEL_PKG:-}
	if [ -z "$p" ]; then
		p=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			awk '/Depends: linux-image-/ { print $2; exit }')
	fi
	if [ -z "$p" ]; then
		apt-get update -qq >/dev/null 2>&1
		p=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			awk '/Depends: linux-image-/ { print $2; exit }')
	fi
	echo "$p"
}

fetch_kernel() {
	local pkg dir deb
	pkg=$(kernel_pkg)
	[ -n "$pkg" ] || die "cannot resolve linux-image-cloud-amd64 to a kernel package (apt-cache depends)"
	dir=$VM/kernel/$pkg
	if ! compgen -G "$dir/boot/vmlinuz-*" >/dev/null || [ ! -f "$dir/modules/loop.ko" ]; then
		say "downloading $pkg"
		rm -rf "$dir" && mkdir -p "$dir"
		# stale package lists name a version the archive no longer has
		(cd "$dir" && apt-get -q -o APT::Sandbox::User=root download "$pkg" >/dev/null) ||
			{ apt-get update -qq >/dev/null 2>&1 && pkg=$(kernel_pkg) && dir=$VM/kernel/$pkg &&
				mkdir -p "$dir" && (cd "$dir" && apt-get -q -o APT::Sandbox::User=root download "$pkg" >/dev/null); } ||
			die "apt-get download $pkg failed"
		# loop is a module in this kernel; the VM loads it for the
		# file system whose writes fail (http.bats)
		deb=$(ls "$dir"/*.deb) && dpkg-deb -x "$deb" "$dir/x" &&
			mkdir -p "$dir/boot" "$dir/modules" && cp "$dir"/x/boot/vmlinuz-* "$dir"/x/boot/config-* "$dir/boot/" &&
			cp "$dir"/x/lib/modules/*/kernel/drivers/block/loop.ko "$dir/modules/" ||
			die "cannot extract the kernel from $deb"
		rm -rf "$dir/x" "$deb"
	fi
	DEB_KERNEL=$(ls "$dir"/boot/vmlinuz-*)
	DEB_KVER=${DEB_KERNEL##*/vmlinuz-}
	DEB_PKG=$pkg
	KMODS=$dir/modules
}

# The version a bzImage carries: the boot header's kernel_version field
# (offset 0x20e) points at the string, 0x200 bytes on.
bzimage_version() {
	local off
	off=$(od -An -tu2 -j 526 -N 2 "$1" 2>/dev/null | tr -d ' ')
	[ -n "$off" ] && [ "$off" -gt 0 ] || return 1
	dd if="$1" bs=1 skip=$((off + 512)) count=64 status=none 2>/dev/null |
		tr '\0' '\n' | head -n 1 | awk '{ print $1 }'
}

# The E2B-built kernel: E2B_KERNEL, or the shared build beside the checkout.
# Empty E2B_KERNEL_PATH and a reason in E2B_SKIP when there is none.
find_e2b_kernel() {
	local k=${E2B_KERNEL:-}
	E2B_KERNEL_PATH= E2B_SKIP=
	if [ -z "$k" ] && [ -f ../shared/kernels/e2b-6.1/bzImage ]; then
		k=$(readlink -f ../shared/kernels/e2b-6.1/bzImage)
	fi
	if [ -z "$k" ]; then
		E2B_SKIP="no E2B-built kernel: set E2B_KERNEL to a bzImage built from E2B's fc-kernels config, or put one at ../shared/kernels/e2b-6.1/bzImage (docs/kernels.md#an-e2b-built-kernel says how)"
	elif [ ! -f "$k" ]; then
		E2B_SKIP="E2B_KERNEL=$k does not exist (docs/kernels.md#an-e2b-built-kernel says how to build one)"
	else
		E2B_KERNEL_PATH=$k
		E2B_KVER=$(bzimage_version "$k") || E2B_KVER=unknown
	fi
}

# --- root file system --------------------------------------------------------

declare -A seen=() canon=()
paths=()

# add PATH: queue a file or symlink, named by its canonical directory so that
# /bin/su and /usr/bin/su are one file (this machine is merged-/usr).
add() {
	local p=$1 d b
	[ -e "$p" ] || [ -L "$p" ] || return 0
	[ -d "$p" ] && [ ! -L "$p" ] && return 0
	d=${p%/*}
	b=${p##*/}
	[ -n "$d" ] || d=/
	if [ -z "${canon[$d]:-}" ]; then
		canon[$d]=$(readlink -f "$d")
	fi
	p=${canon[$d]%/}/$b
	[ -n "${seen[$p]:-}" ] && return 0
	seen[$p]=1
	paths+=("$p")
}

# Follows every queued path: a symlink brings its target, a program or
# library the libraries ldd names, a .py file its compiled .pyc (without
# them the VM would recompile the standard library at every start).
close_over() {
	local i=0 p t m lib pyc
	while [ "$i" -lt "${#paths[@]}" ]; do
		p=${paths[$i]}
		i=$((i + 1))
		if [ -L "$p" ]; then
			t=$(readlink "$p")
			[ "${t:0:1}" = / ] || t=${p%/*}/$t
			add "$t"
			continue
		fi
		case "$p" in
		*.py)
			pyc=${p%/*}/__pycache__/${p##*/}
			add "${pyc%.py}.cpython-311.pyc"
			continue
			;;
		esac
		m=
		LC_ALL=C IFS= read -r -N 4 m <"$p" 2>/dev/null
		[ "$m" = $'\x7fELF' ] || continue
		while read -r lib; do
			add "$lib"
		done < <(ldd "$p" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	done
}

# Everything a package installed, less documentation, headers and npm.
package_files() {
	dpkg-query -L "$1" 2>/dev/null | grep -Ev \
		'^/usr/share/(doc|man|info|locale|lintian|bug|bash-completion|zsh|fish)/|^/usr/include/|^/usr/lib/node_modules/|^/usr/lib/python3[^/]*/(test|idlelib|tkinter|ensurepip|lib2to3|turtledemo)/'
}

build_base() {
	local list=tests/vm/packages pkgs extra key stage p
	mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' -e '/^\//d' "$list")
	mapfile -t extra < <(sed -n 's/[[:space:]]*$//; /^\//p' "$list")
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			die "package $p (named in $list) is not installed; run make deps"
	done
	key=$({ cat "$list" tests/vm/vmtest.sh; dpkg-query -W "${pkgs[@]}"; } | sha256sum | cut -c1-16)
	BASE=$VM/base-$key.cpio
	[ -s "$BASE" ] && return 0
	say "assembling the root file system from ${#pkgs[@]} packages"
	rm -f "$VM"/base-*.cpio
	stage=$VM/base
	rm -rf "$stage"
	mkdir -p "$stage"
	for p in "${pkgs[@]}"; do
		while IFS= read -r f; do add "$f"; done < <(package_files "$p")
	done
	for p in "${extra[@]}"; do
		[ -e "$p" ] || die "$p (named in $list) does not exist here"
		add "$p"
	done
	close_over
	printf '%s\n' "${paths[@]#/}" | tar -C / --no-recursion -cf - -T - |
		tar -C "$stage" -xf - || die "copying the packages' files failed"
	# merged /usr, as on the host
	for p in bin sbin lib lib64; do
		[ -e "$stage/usr/$p" ] && ln -sfn "usr/$p" "$stage/$p"
	done
	mkdir -p "$stage"/{proc,sys,dev,tmp,run,root,home,etc,var/tmp,var/lib}
	chmod 1777 "$stage/tmp" "$stage/var/tmp"
	# accounts: root, nobody and, as in an E2B template, "user" (uid
	# 1000, /home/user, passwordless sudo); the tests create their own
	{ getent passwd root nobody; echo 'user:x:1000:1000::/home/user:/bin/bash'; } >"$stage/etc/passwd"
	{ getent group root nogroup; echo 'sudo:x:27:user'; echo 'user:x:1000:'; } >"$stage/etc/group"
	printf '%s:*:19000:0:99999:7:::\n' root nobody user >"$stage/etc/shadow"
	printf '%s:*::\n' root nogroup sudo user >"$stage/etc/gshadow"
	chmod 0640 "$stage/etc/shadow" "$stage/etc/gshadow"
	mkdir -p "$stage/home/user" "$stage/etc/sudoers.d"
	echo 'user ALL=(ALL:ALL) NOPASSWD: ALL' >"$stage/etc/sudoers.d/user"
	chmod 0440 "$stage/etc/sudoers.d/user"
	printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$stage/etc/nsswitch.conf"
	printf '127.0.0.1 localhost\n127.0.1.1 vmtest\n::1 localhost\n' >"$stage/etc/hosts"
	echo vmtest >"$stage/etc/hostname"
	# PAM's common-* files are generated by pam-auth-update, not packaged
	mkdir -p "$stage/etc/pam.d"
	cp -a /etc/pam.d/. "$stage/etc/pam.d/"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$BASE.tmp" &&
		mv "$BASE.tmp" "$BASE" || die "cpio of the root file system failed"
	rm -rf "$stage"
}

# The project's part, rebuilt every run: cmdwarden, the test programs and
# tests/ at /cw (helpers.bash finds the tree from the tests' directory).
build_project() {
	local stage=$VM/project f
	rm -rf "$stage"
	mkdir -p "$stage/cw/build/tests" "$stage/cw/tests"
	cp "$BUILD/cmdwarden" "$stage/cw/build/"
	cp "$BUILD"/tests/sysprobe "$stage/cw/build/tests/"
	for f in "$BUILD"/tests/*; do
		# e2e helper programs only: the unit tests stay on the host
		case "${f##*/}" in test_*) continue ;; esac
		[ -f "$f" ] && [ -x "$f" ] && cp "$f" "$stage/cw/build/tests/"
	done
	cp -a tests/e2e tests/fixtures tests/run.sh "$stage/cw/tests/"
	cp -a policies README.md LICENSE docs "$stage/cw/"
	cp tests/vm/init.sh "$stage/init"
	cp tests/vm/agent-cgroup.sh "$stage/cw/build/cmdwarden-service"
	chmod 0755 "$stage/init" "$stage/cw/build/cmdwarden-service"
	# the libraries cmdwarden links, in case the base image lacks one
	paths=()
	seen=()
	for f in "$stage"/cw/build/cmdwarden "$stage"/cw/build/tests/*; do
		while read -r lib; do add "$lib"; done < <(ldd "$f" 2>/dev/null |
			awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
	done
	close_over
	[ "${#paths[@]}" -eq 0 ] || printf '%s\n' "${paths[@]#/}" |
		tar -C / --no-recursion -cf - -T - | tar -C "$stage" -xf -
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$VM/project.cpio" ||
		die "cpio of the project failed"
	rm -rf "$stage"
}

# build_kernel_part PASS VERSION CONFIG [MODULE_DIR] : that boot's own
# files, $VM/kernel-PASS.cpio: the kernel's config at /boot/config-VERSION,
# as a distribution installs it (the probe's tests read it), and the
# modules the tests need (loop) for a kernel that has modules
build_kernel_part() {
	local stage=$VM/kpart
	rm -rf "$stage"
	mkdir -p "$stage/boot"
	[ -f "$3" ] && cp "$3" "$stage/boot/config-$2"
	if [ -n "${4:-}" ]; then
		mkdir -p "$stage/cw/build/modules"
		cp "$4"/*.ko "$stage/cw/build/modules/"
	fi
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$VM/kernel-$1.cpio" ||
		die "cpio of the kernel's files failed"
	rm -rf "$stage"
}

# --- run ---------------------------------------------------------------------

case "$FILTER" in *[[:space:]]*) die "VMTEST_FILTER must not contain spaces (use . for one)" ;; esac
case "$SUITES" in "" | all) ;; *) die "VMTEST_SUITES: \"$SUITES\" is not all (or empty: the kernel's suites)" ;; esac
[ -x "$BUILD/cmdwarden" ] || die "$BUILD/cmdwarden is not built; run make"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing; run make deps"
for pass in $PASSES; do
	case "$pass" in full | e2b) ;; *) die "VMTEST_PASSES: unknown pass \"$pass\" (full, e2b)" ;; esac
done
if [ -f tests/e2e/package.json ] && [ ! -d tests/e2e/node_modules ]; then
	say "installing the MCP SDK for the client tests"
	(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error) ||
		say "npm ci failed: the SDK client tests will fail"
fi
mkdir -p "$VM"
find_e2b_kernel
case " $PASSES " in *" full "*) fetch_kernel ;; esac
build_base
build_project

# pass_kernel PASS : sets KERNEL, KVER, KDESC (what the summary names) and
# the qemu machine, consoles and command line of that pass's boot
pass_kernel() {
	case "$1" in
	full)
		KERNEL=$DEB_KERNEL KVER=$DEB_KVER
		KDESC="Linux $DEB_KVER, Debian's $DEB_PKG"
		INITRD=$VM/initrd-full.cpio
		build_kernel_part full "$DEB_KVER" "$(ls "${DEB_KERNEL%/*}"/config-* 2>/dev/null | head -n 1)" "$KMODS"
		cat "$BASE" "$VM/project.cpio" "$VM/kernel-full.cpio" >"$INITRD"
		# ttyS0 is the console (kernel messages, init's progress);
		# ttyS1 carries only the results, so no kernel message can
		# land inside TAP; ttyS2 the guest's heartbeat. The LSM list
		# lacks bpf, as E2B's kernel does (design §4), so the probe
		# does not attach a BPF LSM program, which patches kernel code
		# at every agent start.
		MACHINE=()
		CHANNELS=(-serial chardev:con -serial chardev:res -serial chardev:hb)
		KAPPEND="lsm=landlock,lockdown,yama,apparmor,tomoyo vmtest.results=/dev/ttyS1 vmtest.heartbeat=/dev/ttyS2"
		;;
	e2b)
		KERNEL=$E2B_KERNEL_PATH KVER=$E2B_KVER
		KDESC="Linux $E2B_KVER, built with E2B's fc-kernels config ($E2B_KERNEL_PATH)"
		INITRD=$VM/initrd-e2b.cpio
		# its config, when one sits beside it (config-VERSION*)
		build_kernel_part e2b "$E2B_KVER" "$(ls "${E2B_KERNEL_PATH%/*}/config-$E2B_KVER"* 2>/dev/null | head -n 1)"
		cat "$BASE" "$VM/project.cpio" "$VM/kernel-e2b.cpio" >"$INITRD"
		# microvm, as Firecracker: no PCI, devices on virtio-mmio
		# found through ACPI, one UART (the console); results and
		# heartbeat on virtio consoles (hvc0, hvc1). The kernel's own
		# LSM list, as in production.
		# The early TSC calibration against the PIT fails under
		# emulation once the initramfs is large (it was ~200 MB), and
		# that kernel then hangs before its first message: it is given
		# the frequency instead, the host's (a TCG guest reads the
		# host's TSC); the later, refined calibration still runs.
		MACHINE=(-M microvm,acpi=on)
		CHANNELS=(-serial chardev:con -device virtio-serial-device
			-device virtconsole,chardev=res -device virtconsole,chardev=hb)
		KAPPEND="vmtest.results=/dev/hvc0 vmtest.heartbeat=/dev/hvc1"
		khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
		[ -n "$khz" ] && [ "$khz" -gt 0 ] && KAPPEND+=" tsc_early_khz=$khz"
		;;
	esac
}

# boot PASS ATTEMPT RESUME : one run of the VM for PASS, resuming at its
# RESUME-th file when set; sets qrc (qemu's status) and why (empty, or why
# it was stopped)
boot() {
	local pass=$1 n=$2 resume=$3 left hb=0 hb_at now size qpid
	left=$((deadline - $(date +%s)))
	[ "$left" -gt 0 ] || left=1
	say "pass $pass: booting $KDESC under qemu (TCG, $CPUS vCPUs, $MEM MiB, ${left}s left of ${TIMEOUT}s)${resume:+, resuming at file $resume}"
	rm -f "$VM/console.$pass.$n.log" "$VM/results.$pass.$n.log" "$VM/heartbeat.$pass.$n.log"
	: >"$VM/heartbeat.$pass.$n.log"
	# TCG: this machine's /dev/kvm hangs nested guests. The CPU is qemu's
	# "max" without 5-level paging (la57): the suite passed so; whether it
	# matters for the stalls below is not settled (docs/kernels.md).
	# -no-reboot turns the guest's final reboot into qemu's exit. A kernel
	# stuck in a loop (soft lockup) panics with every CPU's stack on the
	# console (loglevel 5 shows the stacks); the threshold is 2 x 60 s, well
	# above the stalls a loaded host can cause an emulated CPU.
	# timeout runs in a process group of its own: stop it with this script.
	timeout --kill-after=10 "$left" qemu-system-x86_64 "${MACHINE[@]}" \
		-accel "tcg,thread=${VMTEST_TCG_THREAD:-multi}" -cpu "${VMTEST_CPU:-max,-la57}" -smp "$CPUS" -m "$MEM" \
		-nodefaults -display none -no-reboot \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 loglevel=5 panic=-1 watchdog_thresh=60 softlockup_panic=1 softlockup_all_cpu_backtrace=1 rdinit=/init mitigations=off $KAPPEND vmtest.passes=$pass${FILTER:+ vmtest.filter=$FILTER}${SUITES:+ vmtest.suites=$SUITES}${resume:+ vmtest.resume=$pass:$resume}" \
		-chardev file,id=con,path="$VM/console.$pass.$n.log" \
		-chardev file,id=res,path="$VM/results.$pass.$n.log" \
		-chardev file,id=hb,path="$VM/heartbeat.$pass.$n.log" \
		"${CHANNELS[@]}" &
	qpid=$!
	trap 'kill "$qpid" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM HUP
	why=
	hb_at=$(date +%s)
	# The guest writes a heartbeat every 5 s from a shell loop of its own.
	# When none comes for HEARTBEAT seconds the guest kernel has stopped
	# scheduling (a slow or hung test never silences it): stop the VM.
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		now=$(date +%s)
		size=$(stat -c %s "$VM/heartbeat.$pass.$n.log")
		if [ "$size" -ne "$hb" ]; then
			hb=$size
			hb_at=$now
		elif [ $((now - hb_at)) -ge "$HEARTBEAT" ]; then
			why="no heartbeat from the guest for $((now - hb_at))s"
			kill "$qpid" 2>/dev/null
			break
		fi
	done
	wait "$qpid"
	qrc=$?
	trap - EXIT
	if [ -z "$why" ] && { [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; }; then
		why="the time limit of ${TIMEOUT}s ran out"
	fi
	tr -d '\r' <"$VM/results.$pass.$n.log" >>"$VM/results.txt" 2>/dev/null
	tr -d '\r' <"$VM/console.$pass.$n.log" >>"$VM/console.log" 2>/dev/null
}

# kernel_report FILE : the start of the kernel's own reports (lockup, stall,
# oops, panic) on a console, which say more than its tail
kernel_report() {
	grep -qE 'BUG:|Oops|Kernel panic|Call Trace|rcu: INFO' "$1" 2>/dev/null || return 0
	echo "# kernel reports on the VM console ($1):"
	tr -d '\r' <"$1" | grep -m1 -A60 -E 'BUG:|Oops|Kernel panic|Call Trace|rcu: INFO' | sed 's/^/#   /'
}

# The guest kernel, not a test, can stop: Debian 12's qemu (7.2) running
# Linux 6.1 under TCG sometimes stops both vCPUs for good while the kernel
# patches its own code (a static key toggled by attaching or detaching a
# BPF program or tracepoint). A guest that does nothing but toggle one
# tracepoint (echo 1/0 >events/sched/sched_process_fork/enable) while a
# shell loop runs /bin/true stops within a few hundred toggles, with no
# cmdwarden involved. Hence the CPU without la57 and the LSM list above,
# and init's idle agent that keeps the suite's static keys on; they make
# it rare, and this makes it harmless. When the heartbeat stops, or the
# guest kernel panics, the VM is booted again and goes on from the file
# that was running (that file again from its start); the restart and the
# kernel's report are printed. A failing or hanging test is never re-run.
rm -f "$VM"/console.*.log "$VM"/results.*.log "$VM"/heartbeat.*.log "$VM/console.log" "$VM/results.txt"
: >"$VM/results.txt"
start=$(date +%s)
deadline=$((start + TIMEOUT))
restarts=() problems=() skipped_passes=()
declare -A kdesc=() took=()
for pass in $PASSES; do
	if [ "$pass" = e2b ] && [ -z "$E2B_KERNEL_PATH" ]; then
		skipped_passes+=("$pass")
		say "pass e2b skipped: $E2B_SKIP"
		continue
	fi
	pass_kernel "$pass"
	kdesc[$pass]=$KDESC
	pass_start=$(date +%s)
	resume=
	attempt=1
	while :; do
		boot "$pass" "$attempt" "$resume"
		log=$VM/results.$pass.$attempt.log
		grep -q "^=== vmtest pass $pass end" "$log" 2>/dev/null && break
		if [ -z "$why" ] && grep -q 'Kernel panic' "$VM/console.$pass.$attempt.log" 2>/dev/null; then
			why="the guest kernel panicked"
		fi
		# where it stopped: the file that began last, unless it also ended
		at=$(tr -d '\r' <"$log" | sed -n 's/^=== vmtest file [^ ]* \([0-9]*\) \([^ ]*\) \(begin\|end\).*/\1 \2 \3/p' | tail -n 1)
		case "$at" in *" begin") at=${at% begin} ;; *) at= ;; esac
		case "$why" in
		"the time limit"* | "") break ;;
		esac
		[ "$attempt" -le "$MAX_RESTARTS" ] || break
		restarts+=("pass $pass, attempt $attempt: $why${at:+ in ${at#* }}; booted again")
		echo "# vmtest: $why${at:+ during ${at#* }} of pass $pass; booting the VM again"
		tail -n 5 "$VM/console.$pass.$attempt.log" 2>/dev/null | tr -d '\r' | sed 's/^/#   /'
		kernel_report "$VM/console.$pass.$attempt.log" | head -n 25
		# go on after the last file of this pass that ended, in
		# whichever boot it ran
		resume=$(sed -n "s/^=== vmtest file $pass \([0-9]*\) [^ ]* end rc=[0-9]*\$/\1/p" "$VM/results.txt" |
			tail -n 1 | awk '{ print $1 + 1 }')
		attempt=$((attempt + 1))
	done
	took[$pass]=$(($(date +%s) - pass_start))
	if ! grep -q "^=== vmtest pass $pass end" "$log" 2>/dev/null; then
		problems+=("pass $pass did not finish: ${why:-qemu exited with status $qrc}${at:+ in ${at#* }}")
		echo "# last lines of the VM console ($VM/console.$pass.$attempt.log):"
		tail -n 30 "$VM/console.$pass.$attempt.log" 2>/dev/null | tr -d '\r' | sed 's/^/#   /'
		kernel_report "$VM/console.$pass.$attempt.log"
	fi
done
elapsed=$(($(date +%s) - start))

passed=0 failed=0 skipped=0

# Each pass writes "=== vmtest pass NAME begin" and its probe output, then
# each file's TAP between "=== vmtest file NAME N FILE begin" and "... end
# rc=RC", then "=== vmtest pass NAME end". A file that began in a VM that
# stopped has no end: it ran again in the next boot, and only complete
# runs count. run.sh counts each file's TAP as it counts the host's (a
# plan not met is a failure).
for pass in $PASSES; do
	case " ${skipped_passes[*]} " in
	*" $pass "*)
		echo "# ---- VM pass \"$pass\": skipped: $E2B_SKIP ----"
		skipped=$((skipped + 1))
		continue
		;;
	esac
	echo "# ---- VM pass \"$pass\" (${kdesc[$pass]}) ----"
	# the pass's header from the first boot that printed it
	awk -v p="$pass" '$0 == "=== vmtest pass " p " begin" { on = 1; next }
		on && /^=== vmtest / { exit } on { print }' "$VM/results.txt"
	if ! grep -q "^=== vmtest pass $pass begin" "$VM/results.txt"; then
		problems+=("pass $pass reported nothing")
		continue
	fi
	p_pass=0 p_fail=0 p_skip=0
	while read -r idx file; do
		sec=$VM/pass-$pass-$idx.tap
		awk -v b="=== vmtest file $pass $idx $file begin" -v e="=== vmtest file $pass $idx $file end rc=" '
			$0 == b { n = 0; delete buf; on = 1; next }
			on && index($0, e) == 1 { for (i = 1; i <= n; i++) print buf[i]; print; on = 0; next }
			on && /^=== vmtest / { on = 0; next }
			on { buf[++n] = $0 }' "$VM/results.txt" >"$sec"
		rc=$(sed -n 's/^=== vmtest file .* end rc=\([0-9]*\)$/\1/p' "$sec" | tail -n 1)
		echo "# $file"
		grep -v '^=== vmtest' "$sec"
		out=$(tests/run.sh count "vm-$pass-${file%.bats}" "$sec" "$rc")
		sum=$(tail -n 1 <<<"$out")
		sed '$d' <<<"$out"
		read -r p _ f _ s _ <<<"$sum"
		p_pass=$((p_pass + p))
		p_fail=$((p_fail + f))
		p_skip=$((p_skip + s))
		if [ "$s" -gt 0 ]; then
			echo "# $file skipped $s:"
			grep -E '^ok [0-9]+ .*# (skip|SKIP)' "$sec" | sed 's/^ok [0-9]* /#   /'
		fi
	done < <(sed -n "s/^=== vmtest file $pass \([0-9]*\) \([^ ]*\) end rc=[0-9]*$/\1 \2/p" "$VM/results.txt" | sort -n -u)
	echo "# pass $pass: $p_pass passed, $p_fail failed, $p_skip skipped (${kdesc[$pass]}; ${took[$pass]:-0}s)"
	passed=$((passed + p_pass))
	failed=$((failed + p_fail))
	skipped=$((skipped + p_skip))
done

if [ "${#restarts[@]}" -gt 0 ]; then
	echo "# vmtest: the guest kernel stopped and the VM was booted again (see above):"
	printf '#   %s\n' "${restarts[@]}"
fi
if [ "${#problems[@]}" -gt 0 ]; then
	failed=$((failed + ${#problems[@]}))
	echo "# vmtest problems:"
	printf '#   %s\n' "${problems[@]}"
fi
for pass in $PASSES; do
	[ -n "${took[$pass]:-}" ] && echo "# vmtest: pass $pass booted ${kdesc[$pass]}: ${took[$pass]}s"
done
echo "# vmtest: wall time ${elapsed}s, ${#restarts[@]} restart(s) of a VM"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
