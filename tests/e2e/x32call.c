// SPDX-License-Identifier: Apache-2.0
/*
 * x32call: makes one x32-ABI system call (getpid with __X32_SYSCALL_BIT)
 * from a 64-bit process and exits 0 if it succeeded, 1 if it failed. Under
 * cmdwarden's seccomp filter it never returns: non-native ABIs are killed.
 * Built ahead of the tests so that they need no compiler (the VM has none).
 */
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	return syscall(0x40000000 | SYS_getpid) < 0 ? 1 : 0;
}
