// SPDX-License-Identifier: Apache-2.0
/*
 * namespaces: what the call's init sets up in its new mount namespace.
 *
 * Propagation first: the copied mounts start as peers of the sandbox's,
 * so a mount made here would appear there. MS_SLAVE (recursive) turns
 * that into one way: mounts the sandbox makes later still reach running
 * calls, nothing a call's namespace mounts or re-mounts goes back.
 *
 * Then a procfs instance of the call's pid namespace over /proc, stacked
 * on the sandbox's (which stays underneath, unreachable: nothing is
 * unmounted, so the copy of the tree stays cheap to make and to drop).
 * hidepid=invisible hides the processes of other users too: the call's
 * init runs as root and is not the command's to look at.
 */
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

#include "kernel/namespaces.h"

uint64_t cw_ns_clone_flags(void)
{
	return CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNS;
}

int cw_ns_setup_mounts(bool proc, enum cw_ns_step *step)
{
	const unsigned long pflags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	*step = CW_NS_PROPAGATION;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	if (!proc)
		return 0;
	*step = CW_NS_PROC;
	/* hidepid=invisible is 5.8+; the number form is older. */
	if (mount("proc", "/proc", "proc", pflags, "hidepid=invisible") == 0)
		return 0;
	if (errno == EINVAL &&
	    mount("proc", "/proc", "proc", pflags, "hidepid=2") == 0)
		return 0;
	return -errno;
}
