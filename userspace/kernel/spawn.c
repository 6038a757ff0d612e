// SPDX-License-Identifier: Apache-2.0
/*
 * spawn: the confined launcher. It owns the child's setup from fork to
 * execve and the parent's watch over the running command (its output, the
 * deadline, seccomp denials, the kill and the reaping). The account the
 * command runs as is looked up by user.c.
 *
 * Everything that allocates, reads files or takes locks (user and group
 * lookup, the environment, argv, rlimit values, descriptors) is prepared in
 * the parent. The agent may run several calls at once from threads, and a
 * forked child of a threaded process may only make async-signal-safe calls:
 * another thread may have held the malloc or NSS locks at fork time.
 *
 * The child, in this order:
 *  1. setsid: its own session and process group, no controlling terminal;
 *     the parent can then signal the whole tree with kill(-pgid). Then
 *     the loginuid, when the kernel audit knows the call by it (while the
 *     child is root in the first user namespace; the command cannot
 *     change it after).
 *  2. dup2 stdin (/dev/null or the call's data), the stdout pipe and the
 *     stderr pipe onto 0, 1, 2.
 *  3. close every other descriptor (close_range) but the CLOEXEC error pipe:
 *     the agent's sockets, audit log and database must not leak.
 *  4. reset signal dispositions and unblock all signals: ignored signals and
 *     the mask survive execve, and the parent blocked everything around
 *     fork so that no agent handler runs in the child.
 *  5. setrlimit floors while still privileged; RLIMIT_NPROC must be in
 *     place before setresuid so the new user's process count is checked.
 *  6. setgroups, setresgid, setresuid (in that order: after setresuid the
 *     other two are no longer permitted), then read them back.
 *  7. chdir after dropping privileges, so the user must be able to enter it.
 *  8. PR_SET_PDEATHSIG after setresuid, since a credential change clears it;
 *     then getppid closes the race with a parent that died before.
 *  9. PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities grant
 *     nothing from here on; it also lets a non-root child load seccomp.
 * 10. seccomp last, just before execve, so that a policy's deny list cannot
 *     break the launcher's own steps (the few it makes after the filter, a
 *     policy may not deny: cw_seccomp_build). With a listener (denials
 *     audited), the child sends it to the parent over the report socket;
 *     it is close-on-exec, so the command can never answer its own denials.
 * 11. execve shell -c command.
 * A failing step writes {step, errno} to the report socket (a SEQPACKET
 * pair, one message each) and exits 127; EOF (the child's end closed by
 * execve) means the command runs.
 *
 * The parent then polls the two output pipes, a pidfd and the seccomp
 * listener against the deadline, answering each denied syscall with EPERM
 * as it comes (a bounded number per wakeup, so a flood of them cannot hold
 * off the deadline). Timeouts signal the process group: SIGTERM, then
 * SIGKILL after the grace period. When the main process has exited,
 * whatever is left of its group is killed before the process is reaped
 * (the zombie keeps the group id from being reused); then the pipes are
 * drained, and the group waited for, only briefly.
 */
#include <dirent.h>
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/spawn.h"
#include "kernel/cgroup_fs.h"
#include "lib/headtail.h"
#include "kernel/user.h"
#include "lib/fdpass.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* Raw id syscalls: glibc's wrappers may try to broadcast the change to
 * threads that do not exist in the child. 32-bit ABIs have the legacy
 * 16-bit calls under the plain names. */
#ifdef SYS_setresuid32
#define CW_SYS_SETRESUID SYS_setresuid32
#define CW_SYS_SETRESGID SYS_setresgid32
#define CW_SYS_GETRESUID SYS_getresuid32
#define CW_SYS_GETRESGID SYS_getresgid32
#define CW_SYS_SETGROUPS SYS_setgroups32
#define CW_SYS_GETGROUPS SYS_getgroups32
#else
#define CW_SYS_SETRESUID SYS_setresuid
#define CW_SYS_SETRESGID SYS_setresgid
#define CW_SYS_GETRESUID SYS_getresuid
#define CW_SYS_GETRESGID SYS_getresgid
#define CW_SYS_SETGROUPS SYS_setgroups
#define CW_SYS_GETGROUPS SYS_getgroups
#endif

#define DEFAULT_TIMEOUT_MS	60000
#define DEFAULT_GRACE_MS	2000
#define MAX_WAIT_MS		(INT64_C(365) * 86400 * 1000) /* no overflow in us */
#define DEFAULT_MAX_OUTPUT	65536
#define DRAIN_AFTER_EXIT_US	200000
#define GROUP_POLL_US		5000
#define FALLBACK_POLL_MS	10
#define READS_PER_WAKEUP	16
#define DENIALS_PER_WAKEUP	64
#define FALLBACK_MAXFD		65536	/* RLIMIT_NOFILE gives no usable bound */

enum child_step {
	STEP_SETSID = 1,
	STEP_DUP2,
	STEP_SIGMASK,
	STEP_SETRLIMIT,
	STEP_SETGROUPS,
	STEP_SETRESGID,
	STEP_SETRESUID,
	STEP_VERIFY_IDS,
	STEP_CHDIR,
	STEP_PDEATHSIG,
	STEP_PARENT_GONE,
	STEP_NO_NEW_PRIVS,
	STEP_SECCOMP,
	STEP_EXECVE,
	STEP_CGROUP,
	STEP_LANDLOCK,
	STEP_LISTENER,		/* not a failure: the seccomp listener */
	STEP_NAMESPACES,
	STEP_LOGINUID,
};

struct child_report {
	int step;
	int err;
	long arg;
};

/* The rlimits plan_limits may set: DATA, NPROC, CPU, NOFILE, FSIZE, CORE. */
#define CHILD_LIMITS 6

struct child_limit {
	int resource;
	struct rlimit rl;
};

/* Everything the child needs, prepared before fork. */
struct plan {
	const char *shell;
	char *const *argv;
	char *const *envp;
	const char *cwd;
	bool change_ids;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
	struct child_limit lim[CHILD_LIMITS];
	size_t nlim;
	int fd_in, fd_out, fd_err, fd_report;
	int maxfd;
	pid_t ppid;
	const struct cw_seccomp_prog *seccomp;
	bool seccomp_listen;
	const struct cw_landlock *landlock;
	int fd_landlock;	/* kept open until applied; -1 when none */
	const int *join;	/* v1 tasks descriptors to write "0" to */
	size_t njoin;
	int join_v2;		/* the v2 one, when clone3 could not place us */
	int ns_pidfd;		/* the holder of the call's namespaces; -1 */
	int ns_userns;		/* the call's user namespace; -1 */
	char loginuid[16];	/* written to /proc/self/loginuid; "" */
	size_t loginuid_len;
};

struct envv {
	char **v;
	size_t n;
	size_t cap;
};

struct stream {
	int fd;
	struct cw_headtail ht;	/* its first and last bytes */
};

static const char *errstr(int e, char *buf, size_t len)
{
	return strerror_r(e, buf, len);
}

/* ------------------------------------------------------------------ */
/* The child. Async-signal-safe calls only, from here to execve. */

static void __attribute__((noreturn))
child_fail(int fd, int step, int err, long arg)
{
	struct child_report rep = { .step = step, .err = err, .arg = arg };
	ssize_t n;

	do {
		n = write(fd, &rep, sizeof(rep));
	} while (n < 0 && errno == EINTR);
	/* Not _exit: a sanitizer's would take locks that another thread of
	 * the agent may have held when it was copied into this child. */
	syscall(SYS_exit_group, 127);
	__builtin_unreachable();
}

/* Closes every descriptor from 3 up but the two kept ones (-1: none). */
static void close_others(int keep1, int keep2, int maxfd)
{
	unsigned int lo = 3, k[2];
	int fd, n = 0, i;

	if (keep1 >= 3)
		k[n++] = (unsigned int)keep1;
	if (keep2 >= 3 && keep2 != keep1)
		k[n++] = (unsigned int)keep2;
	if (n == 2 && k[0] > k[1]) {
		unsigned int t = k[0];

		k[0] = k[1];
		k[1] = t;
	}
	for (i = 0; i <= n; i++) {
		unsigned int hi = i < n ? k[i] : 0;

		if (i < n && hi == lo) {
			lo = hi + 1;
			continue;
		}
		if (syscall(SYS_close_range, lo, i < n ? hi - 1 : ~0U, 0U) != 0)
			goto fallback;
		lo = hi + 1;
	}
	return;
fallback:
	for (fd = 3; fd < maxfd; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
}

/*
 * Every signal to its default, 32 and 33 included: whoever started the
 * agent may have left one ignored, which an exec keeps. SIGKILL and
 * SIGSTOP refuse: fine.
 */
static void reset_signals(int report)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		cw_signal_set(sig, SIG_DFL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(report, STEP_SIGMASK, errno, 0);
}

static void set_ids(const struct plan *pl)
{
	int fd = pl->fd_report;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	long n;

	if (syscall(CW_SYS_SETGROUPS, pl->ngroups, pl->groups) < 0)
		child_fail(fd, STEP_SETGROUPS, errno, 0);
	if (syscall(CW_SYS_SETRESGID, pl->gid, pl->gid, pl->gid) < 0)
		child_fail(fd, STEP_SETRESGID, errno, pl->gid);
	if (syscall(CW_SYS_SETRESUID, pl->uid, pl->uid, pl->uid) < 0)
		child_fail(fd, STEP_SETRESUID, errno, pl->uid);
	if (syscall(CW_SYS_GETRESUID, &ru, &eu, &su) < 0 ||
	    syscall(CW_SYS_GETRESGID, &rg, &eg, &sg) < 0)
		child_fail(fd, STEP_VERIFY_IDS, errno, 0);
	n = syscall(CW_SYS_GETGROUPS, 0, NULL);
	if (ru != pl->uid || eu != pl->uid || su != pl->uid ||
	    rg != pl->gid || eg != pl->gid || sg != pl->gid ||
	    n != (long)pl->ngroups)
		child_fail(fd, STEP_VERIFY_IDS, EPERM, 0);
}

/* Hands the seccomp listener to the parent; the filter is in place, so a
 * failure here must stop the launch (nobody would answer its denials). */
static void send_listener(int fd, int lfd)
{
	struct child_report rep = { .step = STEP_LISTENER };
	ssize_t n = cw_fd_send(fd, &rep, sizeof(rep), &lfd, 1);

	if (n != (ssize_t)sizeof(rep))
		child_fail(fd, STEP_SECCOMP, n < 0 ? errno : EIO, 0);
}

static void __attribute__((noreturn)) child_run(const struct plan *pl)
{
	int fd = pl->fd_report;
	size_t i;
	int rc;

	if (setsid() < 0)
		child_fail(fd, STEP_SETSID, errno, 0);
	/* The kernel audit's mark of the call (kaudit.h), while the child
	 * is still root in the first user namespace. */
	if (pl->loginuid_len) {
		int lfd = open("/proc/self/loginuid", O_WRONLY | O_CLOEXEC);

		if (lfd < 0 || write(lfd, pl->loginuid, pl->loginuid_len) !=
				       (ssize_t)pl->loginuid_len)
			child_fail(fd, STEP_LOGINUID, errno, 0);
		close(lfd);
	}
	/* Join the call's cgroups before anything can fork. */
	for (i = 0; i < pl->njoin; i++)
		if (write(pl->join[i], "0", 1) != 1)
			child_fail(fd, STEP_CGROUP, errno, 0);
	if (pl->join_v2 >= 0 && write(pl->join_v2, "0", 1) != 1)
		child_fail(fd, STEP_CGROUP, errno, 0);
	/* Its pid namespace is the holder's already (cw_ns_enter_pid). */
	if (pl->ns_pidfd >= 0) {
		rc = cw_ns_join(pl->ns_pidfd, pl->ns_userns);
		if (rc < 0)
			child_fail(fd, STEP_NAMESPACES, -rc, 0);
	}
	/* The parent moved all four descriptors above 2, so none of the
	 * dup2 calls overwrites a later source. */
	if (dup2(pl->fd_in, 0) < 0 || dup2(pl->fd_out, 1) < 0 ||
	    dup2(pl->fd_err, 2) < 0)
		child_fail(fd, STEP_DUP2, errno, 0);
	close_others(fd, pl->fd_landlock, pl->maxfd);
	reset_signals(fd);
	for (i = 0; i < pl->nlim; i++)
		if (setrlimit(pl->lim[i].resource, &pl->lim[i].rl) < 0)
			child_fail(fd, STEP_SETRLIMIT, errno,
				   pl->lim[i].resource);
	if (pl->change_ids)
		set_ids(pl);
	if (chdir(pl->cwd) < 0)
		child_fail(fd, STEP_CHDIR, errno, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(fd, STEP_PDEATHSIG, errno, 0);
	if (getppid() != pl->ppid)
		child_fail(fd, STEP_PARENT_GONE, ESRCH, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(fd, STEP_NO_NEW_PRIVS, errno, 0);
	if (pl->landlock) {
		rc = cw_landlock_apply(pl->landlock);
		if (rc < 0)
			child_fail(fd, STEP_LANDLOCK, -rc, 0);
	}
	if (pl->seccomp && pl->seccomp_listen) {
		int lfd;

		rc = cw_seccomp_install_listener(pl->seccomp, &lfd);
		if (rc < 0)
			child_fail(fd, STEP_SECCOMP, -rc, 0);
		/* The kernel made lfd close-on-exec: no close, which a
		 * policy may deny, is needed after the filter. */
		if (lfd >= 0)
			send_listener(fd, lfd);
	} else if (pl->seccomp) {
		rc = cw_seccomp_install(pl->seccomp);
		if (rc < 0)
			child_fail(fd, STEP_SECCOMP, -rc, 0);
	}
	execve(pl->shell, pl->argv, pl->envp);
	child_fail(fd, STEP_EXECVE, errno, 0);
}

/* ------------------------------------------------------------------ */
/* Preparation in the parent. */

/* Sets key=val (key is keylen bytes), replacing an earlier entry. */
static int env_put(struct envv *e, const char *key, size_t keylen,
		   const char *val)
{
	size_t vlen = strlen(val), i;
	char *s, **v;

	s = malloc(keylen + vlen + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, key, keylen);
	s[keylen] = '=';
	memcpy(s + keylen + 1, val, vlen + 1);
	for (i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], key, keylen) == 0 &&
		    e->v[i][keylen] == '=') {
			free(e->v[i]);
			e->v[i] = s;
			return 0;
		}
	}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;

		v = realloc(e->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

static void env_free(struct envv *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

static bool valid_key(const char *k, size_t len)
{
	return len > 0 && !memchr(k, '=', len);
}

/* Only the policy's pass list, the user's identity, the policy's set list
 * and the call's extra entries; later wins. */
static int build_env(const struct cw_spawn_opts *o, const struct cw_user *t,
		     struct envv *e, struct cw_error *err)
{
	const struct cw_sandbox *sb = o->sb;
	const char *const *x;
	const char *val;
	size_t i;
	int rc = 0;

	for (i = 0; i < sb->env_pass.n && !rc; i++) {
		const char *k = sb->env_pass.v[i];

		if (!k || !valid_key(k, strlen(k)))
			continue;
		val = getenv(k);
		if (val)
			rc = env_put(e, k, strlen(k), val);
	}
	if (!rc)
		rc = env_put(e, "HOME", 4, t->home);
	if (!rc)
		rc = env_put(e, "USER", 4, t->user);
	if (!rc)
		rc = env_put(e, "LOGNAME", 7, t->user);
	if (!rc)
		rc = env_put(e, "SHELL", 5,
			     t->login_shell ? t->login_shell : sb->shell);
	for (i = 0; i < sb->env_set_keys.n && !rc; i++) {
		const char *k = sb->env_set_keys.v[i];

		if (!k || !valid_key(k, strlen(k)) ||
		    i >= sb->env_set_vals.n || !sb->env_set_vals.v[i]) {
			cw_error_set(err, "sandbox env.set entry %zu is not a "
				     "valid variable", i);
			return -EINVAL;
		}
		rc = env_put(e, k, strlen(k), sb->env_set_vals.v[i]);
	}
	for (x = o->env_extra; x && *x && !rc; x++) {
		const char *eq = strchr(*x, '=');

		if (!eq || !valid_key(*x, (size_t)(eq - *x))) {
			cw_error_set(err, "environment entry \"%s\" is not "
				     "KEY=VALUE", *x);
			return -EINVAL;
		}
		rc = env_put(e, *x, (size_t)(eq - *x), eq + 1);
	}
	if (rc < 0) {
		cw_error_set(err, "building the environment: out of memory");
		return rc;
	}
	if (!e->v) {
		e->v = calloc(1, sizeof(*e->v));
		if (!e->v) {
			cw_error_set(err, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

static void add_limit(struct plan *pl, int resource, int64_t value,
		      int64_t unit)
{
	struct rlimit cur;
	rlim_t v;

	if (value < 0 || (value == 0 && resource != RLIMIT_CORE))
		return;
	if (value > (int64_t)(RLIM_INFINITY / 2) / unit)
		return;
	v = (rlim_t)value * (rlim_t)unit;
	/* Never above the current hard limit: raising it may be refused. */
	if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
	    cur.rlim_max < v)
		v = cur.rlim_max;
	pl->lim[pl->nlim].resource = resource;
	pl->lim[pl->nlim].rl.rlim_cur = v;
	pl->lim[pl->nlim].rl.rlim_max = v;
	pl->nlim++;
}

static void plan_limits(struct plan *pl, const struct cw_spawn_opts *o,
			uid_t uid)
{
	const struct cw_sandbox *sb = o->sb;
	const int64_t mb = 1024 * 1024;

	if (!o->cgroup_memory)
		add_limit(pl, RLIMIT_DATA, sb->resources.memory_mb, mb);
	if (uid != 0 && !o->cgroup_pids)
		add_limit(pl, RLIMIT_NPROC, sb->resources.pids, 1);
	add_limit(pl, RLIMIT_CPU, sb->resources.cpu_s, 1);
	add_limit(pl, RLIMIT_NOFILE, sb->resources.nofile, 1);
	add_limit(pl, RLIMIT_FSIZE, sb->resources.file_size_mb, mb);
	add_limit(pl, RLIMIT_CORE, 0, 1);
}

static const char *rlimit_name(long r)
{
	switch (r) {
	case RLIMIT_DATA:
		return "RLIMIT_DATA";
	case RLIMIT_NPROC:
		return "RLIMIT_NPROC";
	case RLIMIT_CPU:
		return "RLIMIT_CPU";
	case RLIMIT_NOFILE:
		return "RLIMIT_NOFILE";
	case RLIMIT_FSIZE:
		return "RLIMIT_FSIZE";
	case RLIMIT_CORE:
		return "RLIMIT_CORE";
	}
	return "rlimit";
}

static void report_error(const struct child_report *rep,
			 const struct plan *pl, struct cw_error *err)
{
	char eb[128];
	const char *es = errstr(rep->err, eb, sizeof(eb));

	switch (rep->step) {
	case STEP_CHDIR:
		cw_error_set(err, "chdir \"%s\": %s", pl->cwd, es);
		break;
	case STEP_EXECVE:
		cw_error_set(err, "execve \"%s\": %s", pl->shell, es);
		break;
	case STEP_SETRESUID:
		cw_error_set(err, "setresuid %ld: %s", rep->arg, es);
		break;
	case STEP_SETRESGID:
		cw_error_set(err, "setresgid %ld: %s", rep->arg, es);
		break;
	case STEP_SETRLIMIT:
		cw_error_set(err, "setrlimit %s: %s", rlimit_name(rep->arg), es);
		break;
	case STEP_SETGROUPS:
		cw_error_set(err, "setgroups: %s", es);
		break;
	case STEP_VERIFY_IDS:
		cw_error_set(err, "user ids did not take: %s", es);
		break;
	case STEP_SETSID:
		cw_error_set(err, "setsid: %s", es);
		break;
	case STEP_DUP2:
		cw_error_set(err, "dup2: %s", es);
		break;
	case STEP_SIGMASK:
		cw_error_set(err, "sigprocmask: %s", es);
		break;
	case STEP_PDEATHSIG:
		cw_error_set(err, "prctl(PR_SET_PDEATHSIG): %s", es);
		break;
	case STEP_PARENT_GONE:
		cw_error_set(err, "parent exited during launch");
		break;
	case STEP_NO_NEW_PRIVS:
		cw_error_set(err, "prctl(PR_SET_NO_NEW_PRIVS): %s", es);
		break;
	case STEP_SECCOMP:
		cw_error_set(err, "seccomp: %s", es);
		break;
	case STEP_CGROUP:
		cw_error_set(err, "joining the call's cgroup: %s", es);
		break;
	case STEP_LANDLOCK:
		cw_error_set(err, "landlock_restrict_self: %s", es);
		break;
	case STEP_NAMESPACES:
		cw_error_set(err, "joining the call's mount and IPC namespaces: %s",
			     es);
		break;
	case STEP_LOGINUID:
		cw_error_set(err, "setting the call's loginuid for the kernel audit: %s",
			     es);
		break;
	default:
		cw_error_set(err, "launch step %d: %s", rep->step, es);
		break;
	}
}

/* Moves fd above 0-2 so that dup2 onto them in the child is unambiguous
 * and can never be a no-op that keeps CLOEXEC. */
static int above_stdio(int *fd)
{
	int n;

	if (*fd > 2)
		return 0;
	n = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (n < 0)
		return -errno;
	close(*fd);
	*fd = n;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static pid_t waitpid_eintr(pid_t pid, int *status, int flags)
{
	pid_t r;

	do {
		r = waitpid(pid, status, flags);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* The command's stdin: the call's data in a memfd read from its start,
 * or /dev/null. */
static int open_stdin(const struct cw_spawn_opts *o, struct cw_error *err)
{
	char eb[128];
	size_t off = 0;
	ssize_t n;
	int fd, rc;

	if (!o->stdin_data) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			cw_error_set(err, "open /dev/null: %s",
				     errstr(-rc, eb, sizeof(eb)));
			return rc;
		}
		return fd;
	}
	fd = memfd_create("cmdwarden-stdin", MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		cw_error_set(err, "memfd_create for stdin: %s",
			     errstr(-rc, eb, sizeof(eb)));
		return rc;
	}
	while (off < o->stdin_len) {
		n = write(fd, o->stdin_data + off, o->stdin_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			cw_error_set(err, "writing stdin to its memfd: %s",
				     errstr(-rc, eb, sizeof(eb)));
			close(fd);
			return rc;
		}
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		rc = -errno;
		cw_error_set(err, "lseek on stdin's memfd: %s",
			     errstr(-rc, eb, sizeof(eb)));
		close(fd);
		return rc;
	}
	return fd;
}

/* The output pipes, the error pipe and stdin; every end the child uses is
 * above 2 and every descriptor is CLOEXEC. */
static int open_fds(const struct cw_spawn_opts *o, int out[2], int errp[2],
		    int rp[2], int *stdin_fd, struct cw_error *err)
{
	int *child_ends[] = { stdin_fd, &out[1], &errp[1], &rp[1] };
	char eb[128];
	size_t i;
	int rc;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		rc = -errno;
		cw_error_set(err, "pipe: %s", errstr(-rc, eb, sizeof(eb)));
		return rc;
	}
	/* Messages keep reports and the listener apart; EOF at execve. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rp) < 0) {
		rc = -errno;
		cw_error_set(err, "socketpair: %s",
			     errstr(-rc, eb, sizeof(eb)));
		return rc;
	}
	rc = open_stdin(o, err);
	if (rc < 0)
		return rc;
	*stdin_fd = rc;
	for (i = 0; i < CW_ARRAY_SIZE(child_ends); i++) {
		rc = above_stdio(child_ends[i]);
		if (rc < 0) {
			cw_error_set(err, "fcntl(F_DUPFD_CLOEXEC): %s",
				     errstr(-rc, eb, sizeof(eb)));
			return rc;
		}
	}
	/* Only the parent's ends: the child's stdout must block. */
	if (fcntl(out[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(errp[0], F_SETFL, O_NONBLOCK) < 0) {
		rc = -errno;
		cw_error_set(err, "fcntl(O_NONBLOCK): %s",
			     errstr(-rc, eb, sizeof(eb)));
		return rc;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Running: output, deadline, reaping. */

static void stream_read(struct stream *s, bool *truncated,
			const struct cw_spawn_watch *w, int which)
{
	char chunk[32768];
	ssize_t n;
	int i;

	/* Bounded, so a fast writer cannot keep us past the deadline. */
	for (i = 0; i < READS_PER_WAKEUP; i++) {
		n = read(s->fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			close_fd(&s->fd);
			return;
		}
		if (n == 0) {
			close_fd(&s->fd);
			return;
		}
		cw_headtail_add(&s->ht, chunk, (size_t)n);
		if (w && w->on_output)
			w->on_output(w->ctx, which, chunk, (size_t)n);
		if (cw_headtail_omitted(&s->ht) || s->ht.nomem)
			*truncated = true;
	}
}

/* A stream's kept bytes as the result's string (always one, "" at
 * least). 0 or -ENOMEM (then an empty string where one could be had). */
static int take_output(const struct cw_headtail *h, char **out, size_t *len,
		       uint64_t *total, uint64_t *omitted)
{
	struct cw_buf b = { 0 };
	int rc = cw_headtail_render(h, &b);

	if (rc == 0 && !b.data)
		rc = cw_buf_append(&b, "", 0);
	if (rc < 0) {
		cw_buf_free(&b);
		b.data = strdup("");
	}
	*out = b.data;
	*len = b.data ? b.len : 0;
	*total = h->total;
	*omitted = rc < 0 ? h->total : cw_headtail_omitted(h);
	return rc;
}

/* True once pid has exited, without reaping it. */
static bool exited_nowait(pid_t pid)
{
	siginfo_t si;
	int rc;

	memset(&si, 0, sizeof(si));
	do {
		rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
	} while (rc < 0 && errno == EINTR);
	return rc == 0 ? si.si_pid == pid : errno == ECHILD;
}

/* True when some process of the group is not yet dead (a zombie). */
/* The state and process group of pid from /proc/PID/stat; false when it
 * is gone. */
static bool proc_stat(pid_t pid, char *state, int *pgrp)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	do {
		n = read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ...", comm may hold ')' */
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %c %*d %d", state, pgrp) == 2;
}

static bool alive(char state)
{
	return state != 'Z' && state != 'X';
}

static bool group_has_live(pid_t pgid)
{
	struct dirent *e;
	bool live = false;
	DIR *d;
	int pg;
	char st;

	d = opendir("/proc");
	if (!d)
		return true;
	while (!live && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (proc_stat((pid_t)strtol(e->d_name, NULL, 10), &st, &pg) &&
		    pg == pgid && alive(st))
			live = true;
	}
	closedir(d);
	return live;
}

/*
 * How many processes the command left running when its main process
 * exited: those of its cgroup (which also holds the ones that left its
 * process group), else of its process group; the main one, a zombie
 * until reaped, is not counted.
 */
static unsigned count_left(const struct cw_spawn_opts *o, pid_t pid)
{
	struct cw_buf b = { 0 };
	struct dirent *e;
	unsigned n = 0;
	char *p, *end;
	pid_t q;
	DIR *d;
	int pg;
	char st;

	if (o->into_cgroup && cw_cgfs_read(o->cgroup_fd, "cgroup.procs", &b) == 0) {
		for (p = b.data; p && *p; p = end) {
			q = (pid_t)strtol(p, &end, 10);
			if (end == p)
				break;
			if (q != pid && proc_stat(q, &st, &pg) && alive(st))
				n++;
		}
		cw_buf_free(&b);
		return n;
	}
	cw_buf_free(&b);
	d = opendir("/proc");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		q = (pid_t)strtol(e->d_name, NULL, 10);
		if (q != pid && proc_stat(q, &st, &pg) && pg == pid &&
		    alive(st))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * True when every process of the group is dead. Killed stragglers stay
 * zombies until their new parent reaps them: the agent, when it is a
 * subreaper or pid 1 (reaped here), else init, which may take its time.
 */
static bool group_gone(pid_t pgid)
{
	pid_t r;

	do {
		r = waitpid(-pgid, NULL, WNOHANG);
	} while (r > 0 || (r < 0 && errno == EINTR));
	if (kill(-pgid, 0) < 0 && errno == ESRCH)
		return true;
	return !group_has_live(pgid);
}

static int poll_timeout_ms(int64_t until, int64_t now)
{
	int64_t ms;

	if (until < 0)
		return -1;
	if (until <= now)
		return 0;
	ms = (until - now + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Answers the denials pending on the listener, a bounded number at once;
 * drops the listener when nobody is left under the filter. */
static void answer_denials(const struct cw_spawn_opts *o,
			   struct cw_seccomp_listener **lis,
			   struct cw_spawn_result *r)
{
	unsigned max = o->seccomp_describe_max ? o->seccomp_describe_max : 64;
	struct cw_seccomp_denial d;
	int i, rc;

	for (i = 0; i < DENIALS_PER_WAKEUP; i++) {
		rc = cw_seccomp_listener_answer(*lis, r->seccomp_denied < max,
						&d);
		if (rc == 0)
			return;
		if (rc < 0) {
			/* Gone, or broken: the kernel then fails the
			 * remaining denials with ENOSYS. */
			cw_seccomp_listener_free(*lis);
			*lis = NULL;
			return;
		}
		r->seccomp_denied++;
		o->on_seccomp(o->seccomp_ctx, &d);
	}
}

static void supervise(pid_t pid, struct stream s[2], int64_t timeout_ms,
		      int64_t grace_ms, const struct cw_spawn_opts *o,
		      struct cw_seccomp_listener **lis,
		      struct cw_spawn_result *r)
{
	const struct cw_spawn_watch *w = o->watch;
	int64_t deadline, kill_at = -1, drain_until = -1, now, next, start;
	int64_t tick_at = -1;
	struct pollfd pfd[5];
	int pidfd, status = 0, n, i, rc, t, lis_at, cancel_at = -1;
	int cancel_fd = w ? w->cancel_fd : -1;
	bool exited = false;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	now = start = cw_mono_us();
	deadline = now + timeout_ms * 1000;
	if (w && w->on_tick && w->tick_ms > 0)
		tick_at = now + w->tick_ms * 1000;
	for (;;) {
		if (exited && s[0].fd < 0 && s[1].fd < 0 && group_gone(pid))
			break;
		now = cw_mono_us();
		if (exited) {
			if (now >= drain_until)
				break;
			next = drain_until;
			if (s[0].fd < 0 && s[1].fd < 0 &&
			    next > now + GROUP_POLL_US)
				next = now + GROUP_POLL_US;
		} else if (!r->timed_out) {
			if (now >= deadline) {
				r->timed_out = true;
				kill(-pid, SIGTERM);
				kill_at = now + grace_ms * 1000;
			}
			next = r->timed_out ? kill_at : deadline;
		} else {
			if (kill_at >= 0 && now >= kill_at) {
				kill(-pid, SIGKILL);
				kill_at = -1;
			}
			next = kill_at;
		}
		if (!exited && tick_at >= 0) {
			if (now >= tick_at) {
				w->on_tick(w->ctx, now - start);
				tick_at = now + w->tick_ms * 1000;
			}
			if (next < 0 || tick_at < next)
				next = tick_at;
		}
		t = poll_timeout_ms(next, now);
		if (!exited && pidfd < 0 &&
		    (t < 0 || t > FALLBACK_POLL_MS))
			t = FALLBACK_POLL_MS;

		n = 0;
		for (i = 0; i < 2; i++) {
			if (s[i].fd < 0)
				continue;
			pfd[n].fd = s[i].fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
		lis_at = -1;
		if (*lis) {
			/* Stragglers blocked in a denied syscall are answered
			 * after the main process exits too. */
			lis_at = n;
			pfd[n].fd = cw_seccomp_listener_fd(*lis);
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
		cancel_at = -1;
		if (!exited && cancel_fd >= 0 && !r->cancelled) {
			pfd[n].fd = cancel_fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			cancel_at = n++;
		}
		if (!exited && pidfd >= 0) {
			pfd[n].fd = pidfd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
		rc = poll(pfd, (nfds_t)n, t);
		if (rc < 0 && errno != EINTR) {
			/* Cannot watch it any more: end it. */
			kill(-pid, SIGKILL);
			break;
		}
		if (lis_at >= 0 && rc > 0 && pfd[lis_at].revents)
			answer_denials(o, lis, r);
		for (i = 0; i < 2; i++)
			if (s[i].fd >= 0)
				stream_read(&s[i], &r->truncated, w, i + 1);
		if (exited)
			continue;
		if (cancel_at >= 0 && rc > 0 && pfd[cancel_at].revents) {
			/* The caller gave up on it: no grace period. */
			r->cancelled = true;
			kill(-pid, SIGKILL);
		}
		if (pidfd >= 0 ? (rc > 0 && pfd[n - 1].revents) :
				 exited_nowait(pid)) {
			/* What it left behind is killed with it, and said. */
			if (!r->timed_out && !r->cancelled)
				r->left_running = count_left(o, pid);
			/* Still a zombie: its pid pins the group id. */
			kill(-pid, SIGKILL);
			if (waitpid_eintr(pid, &status, 0) != pid)
				status = 0;
			exited = true;
			drain_until = cw_mono_us() + DRAIN_AFTER_EXIT_US;
		}
	}
	if (!exited) {
		if (waitpid_eintr(pid, &status, 0) != pid)
			status = 0;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (WIFSIGNALED(status)) {
		r->exit_code = -1;
		r->term_signal = WTERMSIG(status);
	} else {
		r->exit_code = WEXITSTATUS(status);
		r->term_signal = 0;
	}
}

/* ------------------------------------------------------------------ */

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
		stack_size, tls, set_tid, set_tid_size, cgroup;
};

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
	!defined(__SANITIZE_THREAD__)
/*
 * long cw_spawn_clone3(struct clone3_args *ca, size_t size,
 *                      void (*fn)(void *), void *arg)
 * clone3 whose child calls fn(arg) on the stack ca gives it and exits 127
 * should fn return. In assembly because a child sharing the parent's
 * memory must not return through the C frames of the parent's stack. The
 * sanitizers keep per-thread state such a child would corrupt, so their
 * builds use fork.
 */
#define CW_SPAWN_SHARED_VM 1
#define CW_SPAWN_STACK 16384
long cw_spawn_clone3(struct clone3_args *ca, size_t size,
		     void (*fn)(void *), void *arg)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".globl cw_spawn_clone3\n"
	".hidden cw_spawn_clone3\n"
	".type cw_spawn_clone3, @function\n"
	".p2align 4\n"
	"cw_spawn_clone3:\n"
	"	movq %rdx, %r8\n"	/* fn: r8 and r9 survive syscall */
	"	movq %rcx, %r9\n"	/* arg */
	"	movl $435, %eax\n"	/* __NR_clone3 */
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"			/* parent: the pid or -errno */
	"1:	xorl %ebp, %ebp\n"	/* child, on its own stack */
	"	movq %r9, %rdi\n"
	"	call *%r8\n"
	"	movl $127, %edi\n"
	"	movl $231, %eax\n"	/* __NR_exit_group */
	"	syscall\n"
	"	hlt\n"
	".size cw_spawn_clone3, .-cw_spawn_clone3\n");

static void child_entry(void *pl)
{
	child_run(pl);
}
#endif

/*
 * Starts the child, in the call's cgroup from its first instruction when
 * asked: clone3 with CLONE_INTO_CGROUP, so not even a fork the command
 * makes at once can land outside it.
 *
 * Where it can, the child shares the agent's memory until its execve
 * (CLONE_VM | CLONE_VFORK, as posix_spawn does): copying the agent's page
 * tables and then taking copy-on-write faults on both sides cost more than
 * anything else a launch does. The agent's thread waits, suspended, until
 * the child has called execve or exited; the child only reads the plan and
 * writes its own stack (a buffer here) and, through libc, this thread's
 * errno. Its credential change marks the shared memory non-dumpable, so
 * nothing running as the target user can read the agent through it.
 *
 * Kernels without clone3 (before 5.3), or without CLONE_INTO_CGROUP (before
 * 5.7), get clone3 without CLONE_VM or fork, and then the child writes
 * itself into cgroup.procs before anything else. Returns like fork().
 */
static pid_t start_child(const struct cw_spawn_opts *o, struct plan *pl,
			 int *v2procs)
{
	struct clone3_args ca;
	long pid;

#ifdef CW_SPAWN_SHARED_VM
	{
		/* This thread is suspended while the child runs on it. */
		char stack[CW_SPAWN_STACK] __attribute__((aligned(16)));

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_VM | CLONE_VFORK;
		if (o->into_cgroup) {
			ca.flags |= CLONE_INTO_CGROUP;
			ca.cgroup = (uint64_t)o->cgroup_fd;
		}
		ca.exit_signal = SIGCHLD;
		ca.stack = (uint64_t)(uintptr_t)stack;
		ca.stack_size = sizeof(stack);
		pid = cw_spawn_clone3(&ca, sizeof(ca), child_entry, pl);
		if (pid >= 0)
			return (pid_t)pid;
		if (pid != -ENOSYS && pid != -E2BIG && pid != -EINVAL) {
			errno = (int)-pid;
			return -1;
		}
	}
#endif
	if (!o->into_cgroup)
		return fork();
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)o->cgroup_fd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
		return (pid_t)pid;
	*v2procs = openat(o->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (*v2procs < 0)
		return -1;
	pl->join_v2 = *v2procs;
	return fork();
}

/* One message from the child: a report, possibly with a descriptor. */
static ssize_t recv_report(int fd, struct child_report *rep, int *lfd)
{
	size_t nfds;

	return cw_fd_recv(fd, rep, sizeof(*rep), lfd, 1, &nfds);
}

/* What the child needs from the call's options and the account; the
 * descriptors are the caller's to add. */
static void plan_fill(struct plan *pl, const struct cw_spawn_opts *o,
		      const struct cw_user *t, char **envp, const char **argv)
{
	struct rlimit nofile;

	pl->shell = o->sb->shell;
	pl->argv = (char *const *)argv;
	pl->envp = envp;
	pl->cwd = cw_user_cwd(o->sb, o->cwd, t);
	pl->change_ids = t->change_ids;
	pl->uid = t->uid;
	pl->gid = t->gid;
	pl->groups = t->groups;
	pl->ngroups = t->ngroups;
	plan_limits(pl, o, t->uid);
	pl->maxfd = getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
		    nofile.rlim_cur != RLIM_INFINITY &&
		    nofile.rlim_cur < INT_MAX ? (int)nofile.rlim_cur :
						FALLBACK_MAXFD;
	/* A parent outside the child's pid namespace reads as 0 there. */
	pl->ppid = o->ns ? 0 : getpid();
	pl->seccomp = o->seccomp;
	pl->seccomp_listen = o->on_seccomp && cw_seccomp_can_notify(o->seccomp);
	pl->landlock = o->landlock;
	pl->fd_landlock = o->landlock ? cw_landlock_fd(o->landlock) : -1;
	pl->join = o->join_fds;
	pl->njoin = o->njoin;
	pl->join_v2 = -1;
	pl->ns_pidfd = o->ns ? o->ns->pidfd : -1;
	/* Root stays root of the sandbox: in a namespace of its own it would
	 * lose what a policy running commands as root asks for (raw sockets,
	 * for one). */
	pl->ns_userns = o->ns && t->uid != 0 ? o->ns->userns : -1;
	if (o->loginuid) {
		int n = snprintf(pl->loginuid, sizeof(pl->loginuid), "%u",
				 o->loginuid);

		pl->loginuid_len = n > 0 ? (size_t)n : 0;
	}
}

/*
 * Waits on the report socket rfd until the child's execve: EOF (execve
 * closed the socket) means it runs. A report means the launch failed: the
 * child is reaped and err tells the step. The seccomp listener may come
 * first, into *lis. 0 or -errno.
 */
static int await_exec(int rfd, pid_t pid, const struct plan *pl,
		      struct cw_seccomp_listener **lis, struct cw_error *err)
{
	struct child_report rep;
	int status;
	ssize_t got;

	for (;;) {
		int lfd = -1;

		memset(&rep, 0, sizeof(rep));
		got = recv_report(rfd, &rep, &lfd);
		if (got == (ssize_t)sizeof(rep) && rep.step == STEP_LISTENER &&
		    lfd >= 0 && !*lis) {
			*lis = cw_seccomp_listener_new(lfd);
			if (!*lis) {
				/* Nobody could answer its denials. */
				close(lfd);
				kill(pid, SIGKILL);
				rep.step = STEP_SECCOMP;
				rep.err = ENOMEM;
				break;
			}
			continue;
		}
		if (lfd >= 0)
			close(lfd);
		break;
	}
	if (got == 0)
		return 0;
	waitpid_eintr(pid, &status, 0);
	if (got == (ssize_t)sizeof(rep) && rep.err > 0) {
		report_error(&rep, pl, err);
		return -rep.err;
	}
	cw_error_set(err, "launch failed: unreadable report from the child");
	return -EIO;
}

int cw_spawn_run(const struct cw_spawn_opts *o, struct cw_spawn_result *r,
		 struct cw_error *err)
{
	struct cw_seccomp_listener *lis = NULL;
	struct cw_user t;
	const struct cw_user *u = &t;
	struct envv env = { 0 };
	struct plan pl;
	struct stream s[2];
	sigset_t all, old;
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, rp[2] = { -1, -1 };
	int stdin_fd = -1, v2procs = -1, rc, i;
	int64_t timeout_ms, grace_ms, sb_ms, start;
	const struct cw_sandbox *sb;
	const char *argv[5];
	char eb[128];
	size_t max;
	pid_t pid;

	memset(&t, 0, sizeof(t));
	memset(&pl, 0, sizeof(pl));
	memset(s, 0, sizeof(s));
	s[0].fd = s[1].fd = -1;
	if (r)
		memset(r, 0, sizeof(*r));
	if (!o || !o->sb || !o->command || !r || !o->sb->shell) {
		cw_error_set(err, "spawn: missing sandbox, shell or command");
		rc = -EINVAL;
		goto out;
	}
	sb = o->sb;

	if (o->user) {
		u = o->user;
	} else {
		rc = cw_user_resolve(sb, &t, err);
		if (rc < 0)
			goto out;
		u = &t;
	}
	rc = build_env(o, u, &env, err);
	if (rc < 0)
		goto out;

	max = sb->max_output_bytes > 0 ? (size_t)sb->max_output_bytes :
					 DEFAULT_MAX_OUTPUT;
	for (i = 0; i < 2; i++)
		cw_headtail_init(&s[i].ht, max);
	/* A call may shorten the policy's timeout, never extend it. */
	if (o->background)
		sb_ms = sb->background_timeout_s > 0 ? sb->background_timeout_s :
						       MAX_WAIT_MS / 1000;
	else
		sb_ms = sb->timeout_s > 0 ? sb->timeout_s :
					    DEFAULT_TIMEOUT_MS / 1000;
	sb_ms = sb_ms < MAX_WAIT_MS / 1000 ? sb_ms * 1000 : MAX_WAIT_MS;
	timeout_ms = o->timeout_ms > 0 && o->timeout_ms < sb_ms ?
		     o->timeout_ms : sb_ms;
	grace_ms = o->kill_grace_ms > 0 ? o->kill_grace_ms : DEFAULT_GRACE_MS;
	if (grace_ms > MAX_WAIT_MS)
		grace_ms = MAX_WAIT_MS;

	rc = open_fds(o, out, errp, rp, &stdin_fd, err);
	if (rc < 0)
		goto out;

	i = 0;
	argv[i++] = sb->shell;
	if (sb->login_shell)
		argv[i++] = "-l";
	argv[i++] = "-c";
	argv[i++] = o->command;
	argv[i] = NULL;
	plan_fill(&pl, o, u, env.v, argv);
	pl.fd_in = stdin_fd;
	pl.fd_out = out[1];
	pl.fd_err = errp[1];
	pl.fd_report = rp[1];

	start = cw_mono_us();
	if (o->ns) {
		rc = cw_ns_enter_pid(o->ns);
		if (rc < 0) {
			cw_error_set(err, "namespaces: joining the call's pid namespace: %s",
				     errstr(-rc, eb, sizeof(eb)));
			goto out;
		}
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = start_child(o, &pl, &v2procs);
	if (pid == 0)
		child_run(&pl);
	rc = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* A thread whose later children would land in this call's pid
	 * namespace must not go on. */
	if (o->ns && cw_ns_leave_pid() < 0)
		abort();
	close_fd(&v2procs);
	if (rc < 0) {
		cw_error_set(err, "fork: %s", errstr(-rc, eb, sizeof(eb)));
		goto out;
	}
	close_fd(&stdin_fd);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	close_fd(&rp[1]);

	rc = await_exec(rp[0], pid, &pl, &lis, err);
	if (rc < 0)
		goto out;
	close_fd(&rp[0]);

	r->pid = pid;
	if (o->on_launch)
		o->on_launch(o->ctx, pid, u->uid, u->gid, pl.cwd);

	s[0].fd = out[0];
	s[1].fd = errp[0];
	out[0] = errp[0] = -1;
	r->seccomp_audited = lis != NULL;
	supervise(pid, s, timeout_ms, grace_ms, o, &lis, r);
	r->duration_us = cw_mono_us() - start;
	rc = take_output(&s[0].ht, &r->out, &r->out_len, &r->out_total,
			 &r->out_omitted);
	if (rc == 0)
		rc = take_output(&s[1].ht, &r->err, &r->err_len,
				 &r->err_total, &r->err_omitted);
	if (rc < 0) {
		/* It ran: its output is what cannot be given. */
		r->truncated = true;
		rc = 0;
	}
out:
	cw_seccomp_listener_free(lis);
	close_fd(&s[1].fd);
	close_fd(&s[0].fd);
	close_fd(&stdin_fd);
	close_fd(&rp[1]);
	close_fd(&rp[0]);
	close_fd(&errp[1]);
	close_fd(&errp[0]);
	close_fd(&out[1]);
	close_fd(&out[0]);
	cw_headtail_free(&s[1].ht);
	cw_headtail_free(&s[0].ht);
	env_free(&env);
	cw_user_free(&t);
	return rc;
}

void cw_spawn_result_free(struct cw_spawn_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}
