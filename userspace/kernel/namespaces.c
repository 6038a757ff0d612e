// SPDX-License-Identifier: Apache-2.0
/*
 * namespaces: what the call's command process sets up in its new mount
 * namespace, while still root.
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
 *
 * Exec that means it: Landlock's execute right is checked by execve only,
 * never by mmap(PROT_EXEC), so `ld.so ./copied`, dlopen of a copied
 * library and ctypes ran code from any readable file. A noexec mount is
 * checked by both. Each writable tree no exec tree holds is bound onto
 * itself (so it is a mount of its own) and set noexec,nosuid,nodev with
 * everything mounted beneath it (mount_setattr, AT_RECURSIVE; a remount
 * of the one mount on kernels before 5.12); an exec tree inside one of
 * them is bound onto itself and given exec back. Trees that do not exist,
 * or are not directories, are left alone, as Landlock leaves them.
 *
 * memfds live on the kernel's internal shmem mount, which no noexec
 * reaches: where the kernel has vm.memfd_noexec (6.3+, per pid namespace,
 * which is why the call's own is needed), it is set to 2 there:
 * memfd_create with MFD_EXEC is refused and every memfd is created
 * non-executable and sealed so, so execve of /proc/self/fd/N fails. Its
 * pages can still be mapped executable (the kernel checks no mode bits
 * for that); 6.1 has no such sysctl (docs/kernels.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/namespaces.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define ATTR_NOSUID 0x02
#define ATTR_NODEV 0x04
#define ATTR_NOEXEC 0x08

struct mount_attr_v0 {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

uint64_t cw_ns_clone_flags(void)
{
	return CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNS;
}

static bool held_by(const char *path, const struct cw_strv *trees)
{
	size_t i;

	for (i = 0; i < trees->n; i++)
		if (trees->v[i] && cw_path_under(path, trees->v[i]))
			return true;
	return false;
}

int cw_ns_mounts_plan(const struct cw_sandbox *sb, struct cw_ns_mounts *m,
		      struct cw_error *err)
{
	const struct cw_strv *w = &sb->filesystem.write;
	const struct cw_strv *x = &sb->filesystem.exec;
	size_t i, j;

	memset(m, 0, sizeof(*m));
	if (!w->n)
		return 0;
	m->noexec = calloc(w->n, sizeof(*m->noexec));
	m->exec = calloc(x->n ? x->n : 1, sizeof(*m->exec));
	if (!m->noexec || !m->exec) {
		cw_ns_mounts_free(m);
		cw_error_set(err, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < w->n; i++)
		if (w->v[i] && w->v[i][0] == '/' && !held_by(w->v[i], x))
			m->noexec[m->nnoexec++] = w->v[i];
	for (j = 0; j < x->n; j++) {
		for (i = 0; x->v[j] && i < m->nnoexec; i++)
			if (cw_path_under(x->v[j], m->noexec[i]))
				break;
		if (x->v[j] && i < m->nnoexec)
			m->exec[m->nexec++] = x->v[j];
	}
	return 0;
}

void cw_ns_mounts_free(struct cw_ns_mounts *m)
{
	free(m->noexec);
	free(m->exec);
	memset(m, 0, sizeof(*m));
}

/* The per-mount flags statfs reports, as mount(2) takes them back. */
static unsigned long mount_flags(const char *path)
{
	static const struct {
		unsigned long st, ms;
	} map[] = {
		{ ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },
		{ ST_NODEV, MS_NODEV },       { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME },
	};
	unsigned long ms = 0;
	struct statfs st;
	size_t i;

	if (syscall(SYS_statfs, path, &st) < 0)
		return 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if ((unsigned long)st.f_flags & map[i].st)
			ms |= map[i].ms;
	return ms;
}

/* Binds tree onto itself and sets (or, with exec, clears) noexec there;
 * 1 when there is no such directory. */
static int remount(const char *tree, bool exec)
{
	struct mount_attr_v0 a = { 0 };
	unsigned long ms;
	struct stat st;

	if (lstat(tree, &st) < 0 || !S_ISDIR(st.st_mode))
		return 1;
	if (mount(tree, tree, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	if (exec)
		a.attr_clr = ATTR_NOEXEC;
	else
		a.attr_set = ATTR_NOEXEC | ATTR_NOSUID | ATTR_NODEV;
	if (syscall(SYS_mount_setattr, AT_FDCWD, tree, AT_RECURSIVE, &a,
		    sizeof(a)) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	ms = mount_flags(tree);
	ms = exec ? ms & ~(unsigned long)MS_NOEXEC :
		    ms | MS_NOEXEC | MS_NOSUID | MS_NODEV;
	if (mount(NULL, tree, NULL, MS_BIND | MS_REMOUNT | ms, NULL) < 0)
		return -errno;
	return 0;
}

/* 2 in this pid namespace's vm.memfd_noexec; false where there is none. */
static int memfd_noexec(bool *set)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	*set = false;
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	n = write(fd, "2", 1);
	close(fd);
	if (n != 1)
		return n < 0 ? -errno : -EIO;
	*set = true;
	return 0;
}

int cw_ns_setup_mounts(bool proc, const struct cw_ns_mounts *m,
		       struct cw_ns_outcome *out, enum cw_ns_step *step,
		       size_t *index)
{
	const unsigned long pflags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	size_t i;
	int rc;

	out->proc = out->memfd_noexec = false;
	*index = 0;
	*step = CW_NS_PROPAGATION;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	*step = CW_NS_PROC;
	/* hidepid=invisible is 5.8+; the number form is older. */
	if (proc &&
	    mount("proc", "/proc", "proc", pflags, "hidepid=invisible") < 0 &&
	    (errno != EINVAL ||
	     mount("proc", "/proc", "proc", pflags, "hidepid=2") < 0))
		return -errno;
	out->proc = proc;
	for (i = 0; m && i < m->nnoexec; i++) {
		*step = CW_NS_NOEXEC;
		*index = i;
		rc = remount(m->noexec[i], false);
		if (rc < 0)
			return rc;
	}
	for (i = 0; m && i < m->nexec; i++) {
		*step = CW_NS_EXEC;
		*index = i;
		rc = remount(m->exec[i], true);
		if (rc < 0)
			return rc;
	}
	*step = CW_NS_MEMFD;
	return memfd_noexec(&out->memfd_noexec);
}
