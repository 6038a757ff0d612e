#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages cmdwarden's build, tests, demo and bench need.
#   deps.sh ensure [vm]  install only when something is missing (fast when
#                        not); "vm" adds what `make vmtest` needs
#   deps.sh install      install everything, the VM's packages included
set -euo pipefail

PKGS=(
	build-essential pkg-config make gcc
	libjansson-dev libseccomp-dev libsqlite3-dev libsodium-dev libssl-dev libbpf-dev
	libcmocka-dev libmicrohttpd-dev
	clang llvm bpftool
	bats bats-assert bats-support
	jq nodejs npm procps util-linux mount e2fsprogs iproute2 python3 time strace
	curl wrk sudo bubblewrap
)
# make vmtest: the emulator and the cpio that packs the VM's root file
# system (the other packages it copies into the VM are listed above and in
# tests/vm/packages; the kernel itself is fetched by tests/vm/vmtest.sh);
# kmod's insmod loads the loop module there. sudo (above) is the VM's (an
# E2B template's) and the host test's that shows commands cannot use it.
VM_PKGS=(qemu-system-x86 cpio passwd login libpam-runtime libpam-modules
	libpam-modules-bin python3-minimal dash mawk diffutils curl kmod)

missing() {
	local p
	for p in "${PKGS[@]}"; do
		# npm ships with nodejs from some repositories: accept either.
		if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then
			continue
		fi
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed'; then
			echo "$p"
		fi
	done
}

install() {
	local need=("$@")
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing packages: ${need[*]}; run 'make deps' as root" >&2
		exit 1
	fi
	echo "deps: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

case "${1:-ensure}" in
ensure)
	[ "${2:-}" = vm ] && PKGS+=("${VM_PKGS[@]}")
	mapfile -t need < <(missing)
	if [ "${#need[@]}" -gt 0 ]; then
		install "${need[@]}"
	fi
	;;
install)
	PKGS+=("${VM_PKGS[@]}")
	mapfile -t need < <(missing)
	if [ "${#need[@]}" -gt 0 ]; then
		install "${need[@]}"
	else
		echo "deps: all packages present"
	fi
	;;
*)
	echo "usage: $0 ensure|install" >&2
	exit 2
	;;
esac
