// SPDX-License-Identifier: Apache-2.0
/*
 * namespaces: the holders of the calls' own namespaces (kernel/namespaces.h).
 *
 * The holder is cloned without CLONE_VM: an out-of-memory kill of a call
 * (memory.oom.group) takes every process that shares the victim's memory,
 * so nothing that lives on in the call's namespaces may share the agent's.
 * It is a fork of a multithreaded process and makes system calls only.
 *
 * Its mounts, in order:
 *  - MS_SLAVE, recursive: the copied mounts start as peers of the
 *    sandbox's, so a mount made here would appear there. As slaves, mounts
 *    the sandbox makes later still reach running calls; nothing a call's
 *    namespace mounts or re-mounts goes back.
 *  - A procfs instance of the holder's pid namespace over /proc, stacked on
 *    the sandbox's (nothing is unmounted: the copy stays cheap to make and
 *    to drop). hidepid=invisible also hides the holder, which runs as root.
 *  - Exec that means it: Landlock's execute right is checked by execve
 *    only, never by mmap(PROT_EXEC), so `ld.so ./copied`, dlopen of a
 *    copied library and ctypes ran code from any readable file. A noexec
 *    mount is checked by both. Each writable tree no exec tree holds is
 *    bound onto itself (a mount of its own) and set noexec,nosuid,nodev
 *    with everything beneath it (mount_setattr, AT_RECURSIVE; a remount of
 *    the one mount before 5.12); an exec tree inside one of them is bound
 *    onto itself and given exec back. Trees that do not exist, or are not
 *    directories, are left alone, as Landlock leaves them.
 *  - memfds live on the kernel's internal shmem mount, which no noexec
 *    reaches: where the kernel has vm.memfd_noexec (6.3+, per pid
 *    namespace, which is why the call's own is needed) it is 2 there:
 *    memfd_create with MFD_EXEC is refused and every memfd is created
 *    non-executable and sealed so, so execve of /proc/self/fd/N fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/namespaces.h"
#include "lib/fdpass.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SECBIT_NO_SETUID_FIXUP
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#endif
#define ATTR_NOSUID 0x02
#define ATTR_NODEV 0x04
#define ATTR_NOEXEC 0x08

/* How long a new holder may take to report its mounts. */
#define HOLDER_READY_MS 5000

struct mount_attr_v0 {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct ns_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
		stack_size, tls;
};

/* ---- the plan ---------------------------------------------------------- */

static bool held_by(const char *path, const struct cw_strv *trees)
{
	size_t i;

	for (i = 0; i < trees->n; i++)
		if (trees->v[i] && cw_path_under(path, trees->v[i]))
			return true;
	return false;
}

static int push_copy(char **v, size_t *n, const char *path)
{
	v[*n] = strdup(path);
	if (!v[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int cw_ns_mounts_plan(const struct cw_sandbox *sb, struct cw_ns_mounts *m,
		      struct cw_error *err)
{
	const struct cw_strv *w = &sb->filesystem.write;
	const struct cw_strv *x = &sb->filesystem.exec;
	size_t i, j;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (!w->n)
		return 0;
	for (i = 0; i < w->n; i++)
		if (w->v[i] && !strcmp(w->v[i], CW_NS_SHM))
			m->shm = true;
	m->noexec = calloc(w->n, sizeof(*m->noexec));
	m->exec = calloc(x->n ? x->n : 1, sizeof(*m->exec));
	if (!m->noexec || !m->exec)
		goto oom;
	for (i = 0; i < w->n && rc == 0; i++)
		if (w->v[i] && w->v[i][0] == '/' && !held_by(w->v[i], x))
			rc = push_copy(m->noexec, &m->nnoexec, w->v[i]);
	for (j = 0; j < x->n && rc == 0; j++) {
		for (i = 0; x->v[j] && i < m->nnoexec; i++)
			if (cw_path_under(x->v[j], m->noexec[i]))
				break;
		if (x->v[j] && i < m->nnoexec)
			rc = push_copy(m->exec, &m->nexec, x->v[j]);
	}
	if (rc == 0)
		return 0;
oom:
	cw_ns_mounts_free(m);
	cw_error_set(err, "out of memory");
	return -ENOMEM;
}

int cw_ns_mounts_mask(struct cw_ns_mounts *m, const char *path)
{
	char **v;

	if (m->nmask == m->capmask) {
		size_t cap = m->capmask ? 2 * m->capmask : 8;

		v = realloc(m->mask, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->mask = v;
		m->capmask = cap;
	}
	return push_copy(m->mask, &m->nmask, path);
}

void cw_ns_mounts_free(struct cw_ns_mounts *m)
{
	size_t i;

	for (i = 0; i < m->nmask; i++)
		free(m->mask[i]);
	free(m->mask);
	for (i = 0; i < m->nnoexec; i++)
		free(m->noexec[i]);
	for (i = 0; i < m->nexec; i++)
		free(m->exec[i]);
	free(m->noexec);
	free(m->exec);
	memset(m, 0, sizeof(*m));
}

/* ---- the holder's side (system calls only) ------------------------------ */

enum setup_step {
	STEP_PROPAGATION,
	STEP_PROC,
	STEP_SHM,
	STEP_NOEXEC,		/* index: the noexec tree */
	STEP_EXEC,		/* index: the exec tree */
	STEP_MEMFD,
	STEP_SIGNALFD,
};

struct ready {
	int rc;			/* 0 or -errno */
	int step;
	int index;
	bool proc;
	bool memfd_noexec;
	unsigned masked;
};

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

static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Binds tree onto itself and sets (or, with exec, clears) noexec there;
 * 1 when there is no such directory. */
static int remount(const char *tree, bool exec)
{
	struct mount_attr_v0 a = { 0 };
	unsigned long ms;

	if (!is_dir(tree))
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

/* Binds /dev/null over the socket at path: 0, 1 when there is no socket
 * there (gone, or never one), or -errno. */
static int mask_socket(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 1;
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

/* 2 in this pid namespace's vm.memfd_noexec; no such file before 6.3. */
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

static int setup_mounts(const struct cw_ns_mounts *m, struct ready *r)
{
	const unsigned long pflags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	size_t i;
	int rc;

	r->step = STEP_PROPAGATION;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	r->step = STEP_PROC;
	/* hidepid=invisible is 5.8+; the number form is older. */
	if (mount("proc", "/proc", "proc", pflags, "hidepid=invisible") < 0 &&
	    (errno != EINVAL ||
	     mount("proc", "/proc", "proc", pflags, "hidepid=2") < 0))
		return -errno;
	r->proc = true;
	/* POSIX shared memory and semaphores of the call's own, as its IPC
	 * namespace gives it SysV's: they die with the call. */
	r->step = STEP_SHM;
	if (m && m->shm && is_dir(CW_NS_SHM) &&
	    mount("shm", CW_NS_SHM, "tmpfs", pflags, "mode=1777") < 0)
		return -errno;
	for (i = 0; m && i < m->nnoexec; i++) {
		r->step = STEP_NOEXEC;
		r->index = (int)i;
		rc = remount(m->noexec[i], false);
		if (rc < 0)
			return rc;
	}
	for (i = 0; m && i < m->nexec; i++) {
		r->step = STEP_EXEC;
		r->index = (int)i;
		rc = remount(m->exec[i], true);
		if (rc < 0)
			return rc;
	}
	/* A socket that cannot be masked is reported, not fatal: the count
	 * says how many were. */
	for (i = 0; m && i < m->nmask; i++)
		if (mask_socket(m->mask[i]) == 0)
			r->masked++;
	r->step = STEP_MEMFD;
	return memfd_noexec(&r->memfd_noexec);
}

/* Only its socket, as descriptor 3, and /dev/null as 0, 1 and 2: the
 * agent's other descriptors (clients, other holders' sockets) must not
 * be held open here. */
static void holder_fds(int sock)
{
	int fd, nul;

	if (sock != 3 && dup2(sock, 3) < 0)
		_exit(127);
	if (syscall(SYS_close_range, 4U, ~0U, 0U) != 0)
		for (fd = 4; fd < 4096; fd++)
			close(fd);
	nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 3)
			close(nul);
	}
}

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Pid 1 of the call's namespaces; every signal is blocked (as the agent
 * blocked them around the clone), SIGCHLD comes through a signalfd. */
static void __attribute__((noreturn)) holder_main(int sock,
						  const struct cw_ns_mounts *m)
{
	static char path[4097];
	struct signalfd_siginfo si;
	struct ready r = { 0 };
	struct pollfd p[2];
	sigset_t chld;
	ssize_t n;
	int sfd, rc;

	holder_fds(sock);
	sock = 3;
	r.rc = setup_mounts(m, &r);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = -1;
	if (r.rc == 0) {
		r.step = STEP_SIGNALFD;
		sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sfd < 0)
			r.rc = -errno;
	}
	if (send(sock, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r) ||
	    r.rc < 0)
		_exit(1);
	p[0].fd = sock;
	p[0].events = POLLIN;
	p[1].fd = sfd;
	p[1].events = POLLIN;
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			_exit(1);
		if (p[0].revents & POLLIN) {
			/* a socket to mask (cw_ns_holder_mask), or the end */
			n = recv(sock, path, sizeof(path) - 1, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN))
				_exit(0);
			if (n > 0) {
				path[n] = '\0';
				rc = mask_socket(path);
				if (send(sock, &rc, sizeof(rc), MSG_NOSIGNAL) < 0)
					_exit(0);
			}
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			_exit(0);
		}
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		reap();
	}
}

/* ---- the agent's side --------------------------------------------------- */

static const char *step_text(const struct ready *r, const struct cw_ns_mounts *m,
			     char *buf, size_t len)
{
	switch (r->step) {
	case STEP_PROPAGATION:
		return "making the mounts one-way (MS_SLAVE)";
	case STEP_PROC:
		return "mounting a /proc of the call's pid namespace";
	case STEP_SHM:
		return "mounting a tmpfs of the call's own on " CW_NS_SHM;
	case STEP_NOEXEC:
		snprintf(buf, len, "re-mounting %s noexec (filesystem.write)",
			 m && r->index >= 0 && (size_t)r->index < m->nnoexec ?
				 m->noexec[r->index] : "?");
		return buf;
	case STEP_EXEC:
		snprintf(buf, len, "giving %s exec back (filesystem.exec)",
			 m && r->index >= 0 && (size_t)r->index < m->nexec ?
				 m->exec[r->index] : "?");
		return buf;
	case STEP_MEMFD:
		return "setting vm.memfd_noexec";
	default:
		return "reading SIGCHLD (signalfd)";
	}
}

static int await_ready(int sock, struct ready *r)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int rc;

	do {
		rc = poll(&p, 1, HOLDER_READY_MS);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return -ETIMEDOUT;
	if (rc < 0)
		return -errno;
	n = recv(sock, r, sizeof(*r), 0);
	if (n != (ssize_t)sizeof(*r))
		return n < 0 ? -errno : -EPIPE;
	return 0;
}

/* The next owner of a call's user namespace. A forker that was restarted
 * starts elsewhere in the range, away from the holders still running. */
static uid_t next_owner(void)
{
	static unsigned seq;
	static bool seeded;

	if (!seeded) {
		seq = (unsigned)getpid() * 2654435761u;
		seeded = true;
	}
	return (uid_t)(CW_NS_OWNER_BASE + seq++ % CW_NS_OWNER_COUNT);
}

static int write_map(pid_t pid, const char *file)
{
	static const char all[] = "0 0 4294967295\n";
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, all, sizeof(all) - 1);
	close(fd);
	return n == (ssize_t)sizeof(all) - 1 ? 0 : n < 0 ? -errno : -EIO;
}

/*
 * A user namespace owned by owner, every uid and gid mapped to itself: a
 * child takes owner as its effective uid and unshares (its capabilities
 * kept across the change, SECBIT_NO_SETUID_FIXUP, so that no
 * unprivileged-namespace switch stands in the way), this side writes the
 * maps and opens it, and the child exits. Its descriptor, or -errno.
 */
static int make_userns(uid_t owner)
{
	char path[64], c = 0;
	int sv[2], e = 0, fd, status;
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0,
			  0) < 0 ||
		    syscall(SYS_setresuid, -1, owner, -1) < 0 ||
		    unshare(CLONE_NEWUSER) < 0)
			e = errno;
		if (write(sv[1], &e, sizeof(e)) == (ssize_t)sizeof(e) && !e)
			n = read(sv[1], &c, 1);	/* until the maps are in */
		_exit(0);
	}
	e = errno;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -e;
	}
	n = read(sv[0], &e, sizeof(e));
	fd = n != (ssize_t)sizeof(e) ? -EPROTO : e ? -e : 0;
	if (fd == 0)
		fd = write_map(pid, "uid_map");
	if (fd == 0)
		fd = write_map(pid, "gid_map");
	if (fd == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return fd;
}

/* clone3 into the holder's namespaces, the child going on as holder_main:
 * the holder's pid (pidfd and socket in *pidfd, *sock), or -errno. */
static long clone_holder(const struct cw_ns_mounts *m, int *pidfd, int *sock)
{
	struct ns_clone_args ca;
	sigset_t all, old;
	int sv[2], rc;
	long pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)pidfd;
	ca.exit_signal = SIGCHLD;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		holder_main(sv[1], m);
	rc = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (rc < 0) {
		close(sv[0]);
		return rc;
	}
	*sock = sv[0];
	return pid;
}

/* ---- the forker ----------------------------------------------------------
 *
 * A fork write-protects every page of the process it copies, and that
 * process then takes a copy-on-write fault on each page it writes next:
 * forking the agent for every call's holder put hundreds of faults (and
 * the fork's hold on its memory map) on the calls' path. The forker is
 * forked once, when the agent starts, and forks the holders from its own
 * small, idle copy; the agent asks for each over a socket and receives the
 * holder's socket and pidfd. The forker reaps them, and ends when the
 * agent's end of its socket closes.
 */

/* A request: the counts, then the plan's paths, each with its NUL. */
#define FORK_REQ_MAX 65536
#define FORK_PATHS_MAX 512
#define FORKER_NICE 10

struct fork_reply {
	int rc;			/* 0 or -errno of the clone */
	pid_t pid;
	int userns_err;		/* why no user namespace, when asked for */
	uid_t owner;		/* its owner, with one */
};

struct cw_ns_forker {
	int sock;
	pid_t pid;
	pthread_mutex_t mu;	/* one request at a time */
};

static char fork_req[FORK_REQ_MAX];
static char *fork_paths[3 * FORK_PATHS_MAX];

/* The plan from a request, pointing into fork_req; false if malformed. */
static bool parse_request(size_t len, struct cw_ns_mounts *m)
{
	uint32_t n[4];
	size_t off = sizeof(n), i;

	memset(m, 0, sizeof(*m));
	if (len < sizeof(n))
		return false;
	memcpy(n, fork_req, sizeof(n));
	m->userns = n[3] & 1;
	m->shm = n[3] & 2;
	if (!n[0] && !n[1] && !n[2])
		return true;
	if (n[0] > FORK_PATHS_MAX || n[1] > FORK_PATHS_MAX ||
	    n[2] > FORK_PATHS_MAX || fork_req[len - 1] != '\0')
		return false;
	for (i = 0; i < (size_t)n[0] + n[1] + n[2]; i++) {
		if (off >= len)
			return false;
		fork_paths[i] = fork_req + off;
		off += strlen(fork_req + off) + 1;
	}
	m->noexec = fork_paths;
	m->nnoexec = n[0];
	m->exec = fork_paths + n[0];
	m->nexec = n[1];
	m->mask = fork_paths + n[0] + n[1];
	m->nmask = n[2];
	return true;
}

/* The reply, with the holder's socket, pidfd and user namespace (if
 * any) when the clone worked. */
static void send_reply(int sock, const struct fork_reply *r, const int *fds,
		       size_t nfds)
{
	if (cw_fd_send(sock, r, sizeof(*r), fds, r->rc == 0 ? nfds : 0) < 0)
		_exit(1);
}

static void __attribute__((noreturn)) forker_main(int sock)
{
	struct signalfd_siginfo si;
	struct cw_ns_mounts m;
	struct fork_reply r;
	struct pollfd p[2];
	sigset_t chld;
	ssize_t n;
	int sfd, fds[3];
	long pid;

	holder_fds(sock);
	sock = 3;
	/* Preparing ahead yields to the calls being run. */
	if (setpriority(PRIO_PROCESS, 0, FORKER_NICE) < 0) {
		/* at the agent's priority, then */
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	p[0].fd = sock;
	p[0].events = POLLIN;
	p[1].fd = sfd;
	p[1].events = POLLIN;
	for (;;) {
		if (poll(p, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 100) < 0 &&
		    errno != EINTR)
			_exit(1);
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) ==
					   (ssize_t)sizeof(si))
			;
		reap();
		if (p[0].revents & (POLLHUP | POLLERR))
			_exit(0);
		if (!(p[0].revents & POLLIN))
			continue;
		n = recv(sock, fork_req, sizeof(fork_req), 0);
		if (n <= 0)
			_exit(0);
		memset(&r, 0, sizeof(r));
		fds[0] = fds[1] = fds[2] = -1;
		if (!parse_request((size_t)n, &m)) {
			r.rc = -EINVAL;
		} else {
			pid = clone_holder(&m, &fds[1], &fds[0]);
			if (pid < 0)
				r.rc = (int)pid;
			else
				r.pid = (pid_t)pid;
		}
		if (r.rc == 0 && m.userns) {
			r.owner = next_owner();
			fds[2] = make_userns(r.owner);
			r.userns_err = fds[2] < 0 ? -fds[2] : 0;
		}
		send_reply(sock, &r, fds, fds[2] >= 0 ? 3 : 2);
		for (n = 0; n < 3; n++)
			if (fds[n] >= 0)
				close(fds[n]);
	}
}

/* Forks the forker into f: 0 or -errno. */
static int forker_spawn(struct cw_ns_forker *f)
{
	sigset_t all, old;
	int sv[2], e;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		forker_main(sv[1]);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -e;
	}
	f->sock = sv[0];
	f->pid = pid;
	return 0;
}

/* Ends the forker in f (it ends by itself once its socket closes). */
static void forker_end(struct cw_ns_forker *f)
{
	int status;

	close(f->sock);
	f->sock = -1;
	while (waitpid(f->pid, &status, 0) < 0 && errno == EINTR)
		;
}

struct cw_ns_forker *cw_ns_forker_start(struct cw_error *err)
{
	struct cw_ns_forker *f;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f) {
		cw_error_set(err, "out of memory");
		return NULL;
	}
	rc = forker_spawn(f);
	if (rc < 0) {
		cw_error_set(err, "namespaces: starting the holders' forker: %s",
			     strerror(-rc));
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->mu, NULL);
	return f;
}

void cw_ns_forker_stop(struct cw_ns_forker *f)
{
	if (!f)
		return;
	forker_end(f);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* The plan as a request; its length, or -E2BIG. */
static ssize_t build_request(const struct cw_ns_mounts *m, char *buf,
			     size_t cap)
{
	uint32_t n[4] = { m ? (uint32_t)m->nnoexec : 0,
			  m ? (uint32_t)m->nexec : 0,
			  m ? (uint32_t)m->nmask : 0,
			  (m && m->userns ? 1u : 0u) |
				  (m && m->shm ? 2u : 0u) };
	size_t off = sizeof(n), i, len;

	if (n[0] > FORK_PATHS_MAX || n[1] > FORK_PATHS_MAX ||
	    n[2] > FORK_PATHS_MAX)
		return -E2BIG;
	memcpy(buf, n, sizeof(n));
	for (i = 0; i < (size_t)n[0] + n[1] + n[2]; i++) {
		const char *path = i < n[0] ? m->noexec[i] :
				   i < n[0] + n[1] ? m->exec[i - n[0]] :
						     m->mask[i - n[0] - n[1]];

		len = strlen(path) + 1;
		if (off + len > cap)
			return -E2BIG;
		memcpy(buf + off, path, len);
		off += len;
	}
	return (ssize_t)off;
}

/* A request and its reply (with up to three descriptors): the reply's
 * length, or -errno (-EPIPE when the forker has gone). */
static ssize_t exchange(struct cw_ns_forker *f, const char *req, size_t len,
			struct fork_reply *r, int *fds, size_t *nfds)
{
	ssize_t n = send(f->sock, req, len, MSG_NOSIGNAL);

	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EPIPE;
	n = cw_fd_recv(f->sock, r, sizeof(*r), fds, 3, nfds);
	return n < 0 ? -errno : n == 0 ? -EPIPE : n;
}

/* One holder from the forker: its pid, with *sock, *pidfd and *userns
 * (-1 with r->userns_err when none), or -errno. */
static long ask_forker(struct cw_ns_forker *f, const struct cw_ns_mounts *m,
		       struct fork_reply *r, int *sock, int *pidfd,
		       int *userns)
{
	char *req;
	ssize_t len, n;
	size_t nfds = 0, i;
	int fds[3];

	req = malloc(FORK_REQ_MAX);
	if (!req)
		return -ENOMEM;
	len = build_request(m, req, FORK_REQ_MAX);
	if (len < 0) {
		free(req);
		return len;
	}
	r->rc = -EPIPE;
	pthread_mutex_lock(&f->mu);
	n = exchange(f, req, (size_t)len, r, fds, &nfds);
	if (n == -EPIPE || n == -ECONNRESET) {
		/* The forker is gone (killed): a new one, and once more. */
		forker_end(f);
		n = forker_spawn(f);
		if (n == 0)
			n = exchange(f, req, (size_t)len, r, fds, &nfds);
	}
	pthread_mutex_unlock(&f->mu);
	free(req);
	if (n == (ssize_t)sizeof(*r) && r->rc == 0 && nfds >= 2) {
		*sock = fds[0];
		*pidfd = fds[1];
		*userns = nfds > 2 ? fds[2] : -1;
		return r->pid;
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (n != (ssize_t)sizeof(*r))
		return n < 0 ? n : -EPIPE;
	return r->rc < 0 ? r->rc : -EPROTO;
}

int cw_ns_holder_start(struct cw_ns_forker *f, const struct cw_ns_mounts *m,
		       struct cw_ns_holder *h, struct cw_error *err)
{
	struct fork_reply fr = { 0 };
	struct ready r = { 0 };
	char path[64], buf[4200];
	int pidfd = -1, sock = -1, userns = -1, rc;
	long pid;

	memset(h, 0, sizeof(*h));
	h->pidfd = h->sock = h->root = h->userns = -1;
	if (f) {
		pid = ask_forker(f, m, &fr, &sock, &pidfd, &userns);
	} else {
		pid = clone_holder(m, &pidfd, &sock);
		if (pid >= 0 && m && m->userns) {
			fr.owner = next_owner();
			userns = make_userns(fr.owner);
			fr.userns_err = userns < 0 ? -userns : 0;
		}
	}
	h->userns = userns;
	h->userns_err = fr.userns_err;
	h->owner = userns >= 0 ? fr.owner : 0;
	if (pid < 0) {
		cw_error_set(err, "namespaces: clone3 into new IPC, pid and mount namespaces: %s",
			     strerror((int)-pid));
		return (int)pid;
	}
	h->pid = (pid_t)pid;
	h->pidfd = pidfd;
	h->sock = sock;
	h->reap = !f;
	rc = await_ready(h->sock, &r);
	if (rc == 0)
		rc = r.rc;
	if (rc < 0) {
		cw_error_set(err, "namespaces: %s: %s",
			     r.rc < 0 ? step_text(&r, m, buf, sizeof(buf)) :
					"waiting for the call's init",
			     strerror(-rc));
		cw_ns_holder_stop(h);
		return rc;
	}
	h->proc = r.proc;
	h->memfd_noexec = r.memfd_noexec;
	h->masked = r.masked;
	snprintf(path, sizeof(path), "/proc/%ld/root", pid);
	h->root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->root < 0) {
		rc = -errno;
		cw_error_set(err, "namespaces: %s: %s", path, strerror(-rc));
		cw_ns_holder_stop(h);
		return rc;
	}
	return 0;
}

int cw_ns_holder_mask(struct cw_ns_holder *h, const char *path)
{
	struct pollfd p = { .fd = h->sock, .events = POLLIN };
	size_t len = strlen(path);
	ssize_t n;
	int rc;

	if (!len || len > 4096)
		return -EINVAL;
	if (send(h->sock, path, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -errno;
	do {
		rc = poll(&p, 1, HOLDER_READY_MS);
	} while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return rc ? -errno : -ETIMEDOUT;
	n = recv(h->sock, &rc, sizeof(rc), 0);
	if (n != (ssize_t)sizeof(rc))
		return n < 0 ? -errno : -EPIPE;
	if (rc == 0)
		h->masked++;
	return rc;
}

/* Resolves path in the mount namespace of root, absolute symlinks and ".."
 * staying inside it: an O_PATH descriptor, or -errno. */
static int open_in_root(int root, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT,
	};
	long fd = syscall(SYS_openat2, root, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

int cw_ns_socket_masked(const struct cw_ns_holder *h, pid_t tid,
			const char *path)
{
	char link[64], cwd[PATH_MAX], *full = NULL;
	struct statx stx;
	ssize_t n;
	int fd;

	if (h->root < 0)
		return 0;
	if (path[0] != '/') {
		/* the thread's directory, as its namespace names it */
		snprintf(link, sizeof(link), "/proc/%ld/cwd", (long)tid);
		n = readlink(link, cwd, sizeof(cwd) - 1);
		if (n <= 0)
			return n < 0 ? -errno : -ENOENT;
		cwd[n] = '\0';
		if (asprintf(&full, "%s/%s", cwd, path) < 0)
			return -ENOMEM;
		path = full;
	}
	fd = open_in_root(h->root, path);
	free(full);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
	n = statx(fd, "", AT_EMPTY_PATH, STATX_TYPE, &stx);
	close(fd);
	if (n < 0)
		return -errno;
	/* mask_socket's bind: /dev/null, as a mount of its own */
	return S_ISCHR(stx.stx_mode) && stx.stx_rdev_major == 1 &&
	       stx.stx_rdev_minor == 3 &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

void cw_ns_holder_stop(struct cw_ns_holder *h)
{
	int status;

	if (h->root >= 0)
		close(h->root);
	if (h->userns >= 0)
		close(h->userns);
	if (h->sock >= 0)
		close(h->sock);
	if (h->pid > 0) {
		/* Its exit takes the rest of the pid namespace with it. */
		if (h->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
		else
			kill(h->pid, SIGKILL);
		while (h->reap && waitpid(h->pid, &status, 0) < 0 &&
		       errno == EINTR)
			;
	}
	if (h->pidfd >= 0)
		close(h->pidfd);
	memset(h, 0, sizeof(*h));
	h->pidfd = h->sock = h->root = h->userns = -1;
}

/* ---- joining ------------------------------------------------------------ */

static pthread_once_t own_once = PTHREAD_ONCE_INIT;
static int own_pidns = -1;

static void open_own(void)
{
	own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
}

int cw_ns_enter_pid(const struct cw_ns_holder *h)
{
	pthread_once(&own_once, open_own);
	if (own_pidns < 0)
		return -ENOENT;	/* no way back: do not leave */
	return setns(h->pidfd, CLONE_NEWPID) < 0 ? -errno : 0;
}

int cw_ns_leave_pid(void)
{
	return setns(own_pidns, CLONE_NEWPID) < 0 ? -errno : 0;
}

int cw_ns_join(int pidfd, int userns)
{
	if (setns(pidfd, CLONE_NEWNS | CLONE_NEWIPC) < 0)
		return -errno;
	/* Last: joining a user namespace leaves none of the privileges the
	 * mount namespace's setns needs. */
	if (userns >= 0 && setns(userns, CLONE_NEWUSER) < 0)
		return -errno;
	return 0;
}
