// SPDX-License-Identifier: Apache-2.0
/*
 * The filter is installed in forked children only; each child reports what
 * one call returned (or dies), and the parent compares. Where it is safe,
 * the same call is also made without the filter, to show that the filter is
 * what made the difference.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/netlink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "unit.h"
#include "kernel/seccomp.h"

#define MAX_LIST 8

struct sandbox_lists {
	struct cw_sandbox sb;
	char *deny[MAX_LIST];
	char *allow[MAX_LIST];
	char *families[MAX_LIST];
};

/* The seccomp part of the default profile; the rest is not read here. */
static void sandbox_init(struct sandbox_lists *s, const char *profile)
{
	memset(s, 0, sizeof(*s));
	s->sb.seccomp.profile = (char *)profile;
	s->sb.seccomp.deny.v = s->deny;
	s->sb.seccomp.allow.v = s->allow;
	s->sb.seccomp.socket_families.v = s->families;
}

static void sandbox_family(struct sandbox_lists *s, const char *name)
{
	s->families[s->sb.seccomp.socket_families.n++] = (char *)name;
}

static void sandbox_deny(struct sandbox_lists *s, const char *name)
{
	s->deny[s->sb.seccomp.deny.n++] = (char *)name;
}

static void sandbox_allow(struct sandbox_lists *s, const char *name)
{
	s->allow[s->sb.seccomp.allow.n++] = (char *)name;
}

static struct cw_seccomp_prog *build(struct sandbox_lists *s)
{
	struct cw_seccomp_prog *p;
	struct cw_error err;

	memset(&err, 0, sizeof(err));
	p = cw_seccomp_build(&s->sb, &err);
	if (!p)
		print_error("build: %s: %s\n", err.path, err.text);
	assert_non_null(p);
	return p;
}

/* What happened to one call in a child. */
struct outcome {
	bool reported;	/* the child wrote its result */
	bool signaled;
	int sig;
	int status;	/* exit status when !signaled */
	long ret;
	int err;
};

struct report {
	long ret;
	int err;
	int install_rc;
};

typedef long (*call_fn)(void *arg, int *err);

/* Runs fn in a child, under p when p is not NULL. */
static struct outcome run(const struct cw_seccomp_prog *p, call_fn fn,
			  void *arg)
{
	struct outcome o = { 0 };
	struct report rep = { 0 };
	struct rlimit nocore = { 0, 0 };
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(0, pipe2(fds, O_CLOEXEC));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const int faults[] = { SIGSEGV, SIGILL, SIGFPE,
					      SIGBUS, SIGSYS };
		size_t i;

		close(fds[0]);
		/* cmocka's handlers would carry the child on through the
		 * other tests (int 0x80 without IA32 emulation faults):
		 * a fault ends it, as the parent expects */
		for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
			signal(faults[i], SIG_DFL);
		/* SIGSYS would dump core. */
		setrlimit(RLIMIT_CORE, &nocore);
		if (p) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
				_exit(120);
			rep.install_rc = cw_seccomp_install(p);
			if (rep.install_rc < 0) {
				(void)!write(fds[1], &rep, sizeof(rep));
				_exit(121);
			}
		}
		rep.ret = fn(arg, &rep.err);
		(void)!write(fds[1], &rep, sizeof(rep));
		_exit(0);
	}
	close(fds[1]);
	do {
		n = read(fds[0], &rep, sizeof(rep));
	} while (n < 0 && errno == EINTR);
	close(fds[0]);
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_int_equal(0, rep.install_rc);
	o.reported = n == (ssize_t)sizeof(rep);
	o.signaled = WIFSIGNALED(status);
	o.sig = o.signaled ? WTERMSIG(status) : 0;
	o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	o.ret = rep.ret;
	o.err = rep.err;
	return o;
}

/* One call made with harmless or invalid arguments. */
struct probe {
	const char *name;
	long a[6];
	call_fn fn;		/* instead of syscall(nr, a...) */
	bool setsid_first;	/* vhangup: no controlling terminal */
	bool proof;		/* also made without the filter: not EPERM */
	int nr;
};

static long call_probe(void *arg, int *err)
{
	const struct probe *pr = arg;
	long ret;

	if (pr->setsid_first && setsid() < 0) {
		*err = errno;
		return -2;
	}
	errno = 0;
	ret = syscall(pr->nr, pr->a[0], pr->a[1], pr->a[2], pr->a[3],
		      pr->a[4], pr->a[5]);
	*err = errno;
	return ret;
}

/* clone(flags | SIGCHLD) like fork: the new child leaves at once. */
static long call_clone(void *arg, int *err)
{
	unsigned long flags = *(unsigned long *)arg;
	long ret;
	int status;

	errno = 0;
	ret = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	*err = errno;
	if (ret == 0)
		_exit(7);
	if (ret < 0)
		return ret;
	if (waitpid((pid_t)ret, &status, 0) != ret || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 7) {
		*err = ECHILD;
		return -3;
	}
	return 0;
}

static long call_clone_newuser(void *arg, int *err)
{
	unsigned long flags = CLONE_NEWUSER;

	(void)arg;
	return call_clone(&flags, err);
}

#define NOPATH ((long)"/nonexistent-cw-seccomp-test")

static void test_groups_table(void **state)
{
	size_t g, h, total = 0;
	const char *const *s, *const *t;

	(void)state;
	assert_true(cw_seccomp_ngroups >= 13);
	for (g = 0; g < cw_seccomp_ngroups; g++) {
		assert_non_null(cw_seccomp_groups[g].name);
		assert_true(strlen(cw_seccomp_groups[g].reason) > 10);
		assert_non_null(cw_seccomp_groups[g].syscalls[0]);
		for (s = cw_seccomp_groups[g].syscalls; *s; s++, total++) {
			if (seccomp_syscall_resolve_name(*s) == __NR_SCMP_ERROR)
				fail_msg("libseccomp does not know %s", *s);
			/* Each syscall is listed once, in one group. */
			for (h = 0; h <= g; h++)
				for (t = cw_seccomp_groups[h].syscalls; *t &&
				     t != s; t++)
					if (strcmp(*t, *s) == 0)
						fail_msg("%s listed twice", *s);
		}
	}
	assert_true(total >= 45);
}

static void test_every_default_syscall_denied(void **state)
{
	struct timex tx = { .modes = 0 };
	const struct probe probes[] = {
		{ "ptrace", { -1, 0, 0, 0 }, NULL, false, true, 0 },
		{ "process_vm_readv", { 0, 0, 0, 0, 0, 1 }, NULL, false, true,
		  0 },
		{ "process_vm_writev", { 0, 0, 0, 0, 0, 1 }, NULL, false, true,
		  0 },
		{ "pidfd_getfd", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "kcmp", { -1, -1, 0, 0, 0 }, NULL, false, true, 0 },
		{ "process_madvise", { -1, 0, 0, 0, 0 }, NULL, false, true,
		  0 },
		{ "migrate_pages", { -1, 0, 0, 0 }, NULL, false, true, 0 },
		{ "move_pages", { -1, 0, 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "bpf", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "perf_event_open", { 0, 0, -1, -1, 0 }, NULL, false, true,
		  0 },
		{ "init_module", { 0, 0, (long)"" }, NULL, false, true, 0 },
		{ "finit_module", { -1, (long)"", 0 }, NULL, false, true, 0 },
		{ "delete_module", { (long)"cw_no_such_module", O_NONBLOCK },
		  NULL, false, true, 0 },
		/* invalid flags: kexec_load(0, 0, NULL, 0) would unload */
		{ "kexec_load", { 0, 0, 0, 0x7ead0000 }, NULL, false, true, 0 },
		{ "kexec_file_load", { -1, -1, 0, 0, 0x7ead0000 }, NULL, false,
		  true, 0 },
		{ "mount", { 0, 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "umount2", { NOPATH, 0 }, NULL, false, true, 0 },
		{ "pivot_root", { NOPATH, NOPATH }, NULL, false, true, 0 },
		{ "move_mount", { -1, (long)"", -1, (long)"", 0 }, NULL, false,
		  true, 0 },
		{ "fsopen", { (long)"cw-no-such-fs", 0 }, NULL, false, true,
		  0 },
		{ "fsconfig", { -1, 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "fsmount", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "fspick", { -1, (long)"", 0 }, NULL, false, true, 0 },
		{ "open_tree", { -1, NOPATH, 0 }, NULL, false, true, 0 },
		{ "mount_setattr", { -1, (long)"", 0, 0, 0 }, NULL, false,
		  true, 0 },
		{ "chroot", { NOPATH }, NULL, false, true, 0 },
		/* unshare(0) succeeds without the filter */
		{ "unshare", { 0 }, NULL, false, true, 0 },
		{ "setns", { -1, 0 }, NULL, false, true, 0 },
		{ "clone", { 0 }, call_clone_newuser, false, true, 0 },
		{ "clone3", { 0, 0 }, NULL, false, true, 0 },
		{ "keyctl", { -1 }, NULL, false, true, 0 },
		{ "add_key", { 0, 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "request_key", { 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "io_uring_setup", { 0, 0 }, NULL, false, true, 0 },
		{ "io_uring_enter", { -1, 0, 0, 0, 0, 0 }, NULL, false, true,
		  0 },
		{ "io_uring_register", { -1, 0, 0, 0 }, NULL, false, true, 0 },
		{ "userfaultfd", { 0x7ead0000 }, NULL, false, true, 0 },
		{ "swapon", { 0, 0 }, NULL, false, true, 0 },
		{ "swapoff", { 0 }, NULL, false, true, 0 },
		/* wrong magic: EINVAL without the filter */
		{ "reboot", { 0, 0, 0, 0 }, NULL, false, true, 0 },
		/* both NULL: a successful no-op without the filter */
		{ "settimeofday", { 0, 0 }, NULL, false, true, 0 },
		{ "clock_settime", { -1, 0 }, NULL, false, true, 0 },
		{ "clock_adjtime", { -1, 0 }, NULL, false, true, 0 },
		/* modes 0 is a read: denied too (documented) */
		{ "adjtimex", { (long)&tx }, NULL, false, true, 0 },
		{ "acct", { NOPATH }, NULL, false, true, 0 },
		{ "quotactl", { 0, 0, 0, 0 }, NULL, false, true, 0 },
		{ "quotactl_fd", { -1, 0, 0, 0 }, NULL, false, true, 0 },
		{ "open_by_handle_at", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "name_to_handle_at", { -1, 0, 0, 0, 0 }, NULL, false, true,
		  0 },
		{ "lookup_dcookie", { 0, 0, 0 }, NULL, false, true, 0 },
		{ "iopl", { 4 }, NULL, false, true, 0 },
		{ "ioperm", { 0x10000, 1, 0 }, NULL, false, true, 0 },
		/* SYSLOG_ACTION_SIZE_BUFFER: a read */
		{ "syslog", { 10, 0, 0 }, NULL, false, true, 0 },
		{ "vhangup", { 0 }, NULL, true, true, 0 },
		{ "fanotify_init", { 0x7ead0000, 0 }, NULL, false, true, 0 },
		/* no such family: EAFNOSUPPORT without the filter */
		{ "socket", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "socketpair", { -1, 0, 0, 0 }, NULL, false, true, 0 },
		/* ADDR_NO_RANDOMIZE: set for this child alone without it */
		{ "personality", { 0x0040000 }, NULL, false, true, 0 },
		/* no such function: ENOSYS without the filter */
		{ "modify_ldt", { -1, 0, 0 }, NULL, false, true, 0 },
		{ "uselib", { NOPATH }, NULL, false, true, 0 },
		/* too long a name: EINVAL without the filter */
		{ "sethostname", { 0, -1 }, NULL, false, true, 0 },
		{ "setdomainname", { 0, -1 }, NULL, false, true, 0 },
	};
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	size_t g, i, checked = 0;
	const char *const *name;

	(void)state;
	sandbox_init(&s, "default");
	p = build(&s);
	for (g = 0; g < cw_seccomp_ngroups; g++) {
		for (name = cw_seccomp_groups[g].syscalls; *name; name++) {
			struct probe pr;
			struct outcome o;
			bool is_clone3 = strcmp(*name, "clone3") == 0;
			int want = is_clone3 ? ENOSYS : EPERM;

			for (i = 0; i < CW_ARRAY_SIZE(probes); i++)
				if (strcmp(probes[i].name, *name) == 0)
					break;
			if (i == CW_ARRAY_SIZE(probes))
				fail_msg("no probe for %s", *name);
			pr = probes[i];
			pr.nr = seccomp_syscall_resolve_name(*name);
			if (pr.nr < 0) {
				print_message("# %s does not exist on this "
					      "architecture\n", *name);
				continue;
			}
			if (pr.proof) {
				o = run(NULL, pr.fn ? pr.fn : call_probe, &pr);
				if (!o.reported || (o.ret == -1 &&
				    (o.err == EPERM || o.err == want)))
					fail_msg("%s without the filter: ret %ld "
						 "errno %d signal %d", *name,
						 o.ret, o.err, o.sig);
			}
			o = run(p, pr.fn ? pr.fn : call_probe, &pr);
			if (!o.reported || o.ret != -1 || o.err != want)
				fail_msg("%s under the filter: ret %ld errno %d "
					 "signal %d, want errno %d", *name,
					 o.ret, o.err, o.sig, want);
			assert_int_equal(-1, o.ret);
			assert_int_equal(want, o.err);
			checked++;
		}
	}
	assert_true(checked >= 45);
	cw_seccomp_free(p);
}

static void test_clone_namespace_flags(void **state)
{
	const unsigned long ns[] = {
		CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
		CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	};
	unsigned long flags;
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;
	size_t i;

	(void)state;
	sandbox_init(&s, "default");
	p = build(&s);
	for (i = 0; i < CW_ARRAY_SIZE(ns); i++) {
		flags = ns[i];
		o = run(p, call_clone, &flags);
		assert_true(o.reported);
		assert_int_equal(-1, o.ret);
		assert_int_equal(EPERM, o.err);
	}
	flags = CLONE_NEWUSER | CLONE_NEWNS;
	o = run(p, call_clone, &flags);
	assert_int_equal(-1, o.ret);
	assert_int_equal(EPERM, o.err);

	/* Without the filter, as root, the same clone works. */
	flags = CLONE_NEWUSER | CLONE_NEWNS;
	o = run(NULL, call_clone, &flags);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);

	/* Plain clone is fine under the filter. */
	flags = 0;
	o = run(p, call_clone, &flags);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);
	cw_seccomp_free(p);
}

static long call_unshare_newuser(void *arg, int *err)
{
	long ret;

	(void)arg;
	errno = 0;
	ret = unshare(CLONE_NEWUSER);
	*err = errno;
	return ret;
}

static void test_unshare_newuser(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;

	(void)state;
	o = run(NULL, call_unshare_newuser, NULL);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);

	sandbox_init(&s, "default");
	p = build(&s);
	o = run(p, call_unshare_newuser, NULL);
	assert_true(o.reported);
	assert_int_equal(-1, o.ret);
	assert_int_equal(EPERM, o.err);
	cw_seccomp_free(p);

	/* Profile "none" lets it through. */
	sandbox_init(&s, "none");
	p = build(&s);
	o = run(p, call_unshare_newuser, NULL);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);
	cw_seccomp_free(p);
}

static void *thread_main(void *arg)
{
	return arg;
}

/* What a shell, a compiler or a package manager does all the time. */
static long call_ordinary(void *arg, int *err)
{
	char buf[8] = { 0 };
	pthread_t th;
	void *res = NULL;
	int fds[2], fd, status;
	pid_t pid;

	(void)arg;
	*err = 0;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) != 0)
		return 1;
	close(fd);
	if (pipe(fds) < 0 || write(fds[1], "ok", 2) != 2 ||
	    read(fds[0], buf, sizeof(buf)) != 2 || memcmp(buf, "ok", 2))
		return 2;
	close(fds[0]);
	close(fds[1]);
	if (getpid() <= 0)
		return 3;
	/* glibc tries clone3 first; ENOSYS makes it fall back to clone. */
	if (pthread_create(&th, NULL, thread_main, buf) != 0 ||
	    pthread_join(th, &res) != 0 || res != buf)
		return 4;
	pid = fork();
	if (pid < 0)
		return 5;
	if (pid == 0) {
		char *const argv[] = { "true", NULL };
		char *const envp[] = { NULL };

		execve("/bin/true", argv, envp);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 6;
	return 0;
}

static void test_ordinary_syscalls_work(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;

	(void)state;
	sandbox_init(&s, "default");
	p = build(&s);
	o = run(p, call_ordinary, NULL);
	assert_true(o.reported);
	assert_false(o.signaled);
	assert_int_equal(0, o.ret);
	cw_seccomp_free(p);
}

#ifdef __x86_64__
#define X32_SYSCALL_BIT 0x40000000L

static long call_x32_getpid(void *arg, int *err)
{
	long ret;

	(void)arg;
	errno = 0;
	ret = syscall(X32_SYSCALL_BIT | SYS_getpid);
	*err = errno;
	return ret;
}

static void test_x32_killed(void **state)
{
	static const char *const profiles[] = { "default", "none" };
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;
	size_t i;

	(void)state;
	/* Without the filter the call returns (ENOSYS when the kernel has
	 * no x32 ABI, the pid when it has). */
	o = run(NULL, call_x32_getpid, NULL);
	assert_true(o.reported);
	assert_false(o.signaled);
	for (i = 0; i < CW_ARRAY_SIZE(profiles); i++) {
		sandbox_init(&s, profiles[i]);
		p = build(&s);
		o = run(p, call_x32_getpid, NULL);
		assert_false(o.reported);
		assert_true(o.signaled);
		assert_int_equal(SIGSYS, o.sig);
		cw_seccomp_free(p);
	}
}

/* i386 getpid (20) through the 32-bit entry point. */
static long call_int80_getpid(void *arg, int *err)
{
	long ret;

	(void)arg;
	*err = 0;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static void test_int80_killed(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;

	(void)state;
	o = run(NULL, call_int80_getpid, NULL);
	if (!o.reported || o.ret <= 0) {
		print_message("# no IA32 emulation in this kernel (int 0x80 "
			      "getpid: ret %ld, signal %d)\n", o.ret, o.sig);
		skip();
	}
	sandbox_init(&s, "default");
	p = build(&s);
	o = run(p, call_int80_getpid, NULL);
	assert_false(o.reported);
	assert_true(o.signaled);
	assert_int_equal(SIGSYS, o.sig);
	cw_seccomp_free(p);
}
#endif

static long call_uname(void *arg, int *err)
{
	struct utsname u;
	long ret;

	(void)arg;
	errno = 0;
	ret = uname(&u);
	*err = errno;
	return ret;
}

static void test_deny_list(void **state)
{
	static const char *const profiles[] = { "default", "none" };
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;
	size_t i;

	(void)state;
	o = run(NULL, call_uname, NULL);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);
	for (i = 0; i < CW_ARRAY_SIZE(profiles); i++) {
		sandbox_init(&s, profiles[i]);
		sandbox_deny(&s, "uname");
		sandbox_deny(&s, "uname"); /* duplicates are harmless */
		p = build(&s);
		o = run(p, call_uname, NULL);
		assert_true(o.reported);
		assert_int_equal(-1, o.ret);
		assert_int_equal(EPERM, o.err);
		cw_seccomp_free(p);
	}
}

static long call_ptrace(void *arg, int *err)
{
	long ret;

	(void)arg;
	errno = 0;
	ret = syscall(SYS_ptrace, -1L, 0L, 0L, 0L);
	*err = errno;
	return ret;
}

static long call_bpf(void *arg, int *err)
{
	long ret;

	(void)arg;
	errno = 0;
	ret = syscall(SYS_bpf, -1L, 0L, 0L);
	*err = errno;
	return ret;
}

static void test_allow_list(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct outcome o;

	(void)state;
	sandbox_init(&s, "default");
	sandbox_allow(&s, "ptrace");
	p = build(&s);
	o = run(p, call_ptrace, NULL);
	assert_true(o.reported);
	assert_int_equal(-1, o.ret);
	assert_int_not_equal(EPERM, o.err);
	/* The rest of the profile stays. */
	o = run(p, call_bpf, NULL);
	assert_int_equal(-1, o.ret);
	assert_int_equal(EPERM, o.err);
	cw_seccomp_free(p);

	/* deny wins over allow */
	sandbox_init(&s, "default");
	sandbox_allow(&s, "ptrace");
	sandbox_deny(&s, "ptrace");
	p = build(&s);
	o = run(p, call_ptrace, NULL);
	assert_int_equal(-1, o.ret);
	assert_int_equal(EPERM, o.err);
	cw_seccomp_free(p);

	/* allowing clone removes the namespace check */
	sandbox_init(&s, "default");
	sandbox_allow(&s, "clone");
	p = build(&s);
	o = run(p, call_clone_newuser, NULL);
	assert_true(o.reported);
	assert_int_equal(0, o.ret);
	cw_seccomp_free(p);
}

/* The calls the launcher makes after the filter cannot be denied (a denied
 * sendmsg or execve would hang the launch waiting for a listener nobody
 * reads yet); close, which it no longer makes, can. */
static void test_launcher_calls(void **state)
{
	static const char *const refused[] = {
		"sendmsg", "execve", "write", "exit_group",
	};
	struct cw_seccomp_prog *p;
	struct sandbox_lists s;
	struct cw_error err;
	char want[64];
	size_t i;

	(void)state;
	for (i = 0; i < CW_ARRAY_SIZE(refused); i++) {
		sandbox_init(&s, "none");
		sandbox_deny(&s, "uname");
		sandbox_deny(&s, refused[i]);
		memset(&err, 0, sizeof(err));
		errno = 0;
		assert_null(cw_seccomp_build(&s.sb, &err));
		assert_int_equal(EINVAL, errno);
		snprintf(want, sizeof(want), "\"%s\" in deny[1] cannot be denied",
			 refused[i]);
		if (!strstr(err.text, want))
			fail_msg("expected \"%s\" in: %s", want, err.text);
		assert_string_equal("sandbox.seccomp.deny[1]", err.path);
	}
	sandbox_init(&s, "default");
	sandbox_deny(&s, "close");
	p = cw_seccomp_build(&s.sb, NULL);
	assert_non_null(p);
	cw_seccomp_free(p);
}

static void test_unknown_names(void **state)
{
	struct sandbox_lists s;
	struct cw_error err;

	(void)state;
	sandbox_init(&s, "default");
	sandbox_deny(&s, "uname");
	sandbox_deny(&s, "no_such_syscall");
	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_seccomp_build(&s.sb, &err));
	assert_int_equal(EINVAL, errno);
	assert_string_equal("unknown syscall \"no_such_syscall\" in deny[1]",
			    err.text);
	assert_string_equal("sandbox.seccomp.deny[1]", err.path);

	sandbox_init(&s, "none");
	sandbox_allow(&s, "ptrace_typo");
	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_seccomp_build(&s.sb, &err));
	assert_int_equal(EINVAL, errno);
	assert_non_null(strstr(err.text, "\"ptrace_typo\""));
	assert_string_equal("sandbox.seccomp.allow[0]", err.path);

	sandbox_init(&s, "strict");
	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_seccomp_build(&s.sb, &err));
	assert_int_equal(EINVAL, errno);
	assert_non_null(strstr(err.text, "\"strict\""));
}

struct sock_args {
	long family, type, protocol;
	bool pair;
};

/* socket() or socketpair() with the raw register values given. */
static long call_socket(void *arg, int *err)
{
	const struct sock_args *a = arg;
	int sv[2];
	long ret;

	errno = 0;
	if (a->pair)
		ret = syscall(SYS_socketpair, a->family, a->type, a->protocol,
			      sv);
	else
		ret = syscall(SYS_socket, a->family, a->type, a->protocol);
	*err = errno;
	return ret < 0 ? ret : 0;
}

/* errno of one socket call under p: 0 when it opened. */
static int socket_errno(const struct cw_seccomp_prog *p, long family,
			long type, long protocol, bool pair)
{
	struct sock_args a = { family, type, protocol, pair };
	struct outcome o = run(p, call_socket, &a);

	assert_true(o.reported);
	return o.ret == 0 ? 0 : o.err;
}

#define NL_SOCK_DIAG 4
#define NL_AUDIT 9
#define AF_VSOCK_NR 40
#define AF_ALG_NR 38
#define AF_XDP_NR 44

static void test_socket_families_default(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p, *none;

	(void)state;
	sandbox_init(&s, "default");
	p = build(&s);
	sandbox_init(&s, "none");
	none = build(&s);
	/* what glibc, ip and ordinary programs open */
	assert_int_equal(0, socket_errno(p, AF_UNIX, SOCK_STREAM, 0, false));
	assert_int_equal(0, socket_errno(p, AF_INET, SOCK_DGRAM, 0, false));
	assert_int_equal(0, socket_errno(p, AF_INET6, SOCK_STREAM, 0, false));
	assert_int_equal(0, socket_errno(p, AF_NETLINK, SOCK_RAW,
					 NETLINK_ROUTE, false));
	assert_int_equal(0, socket_errno(p, AF_UNIX, SOCK_STREAM, 0, true));
	/* refused by the filter, where without it the kernel answers */
	assert_int_equal(EPERM, socket_errno(p, AF_VSOCK_NR, SOCK_STREAM, 0,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     NL_SOCK_DIAG, false));
	assert_int_not_equal(EPERM, socket_errno(none, AF_NETLINK, SOCK_RAW,
						 NL_SOCK_DIAG, false));
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     NL_AUDIT, false));
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW, 31,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_ALG_NR, SOCK_SEQPACKET, 0,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_XDP_NR, SOCK_RAW, 0,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_PACKET, SOCK_RAW, 0,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_UNSPEC, SOCK_STREAM, 0,
					     false));
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     NL_SOCK_DIAG, true));
	assert_int_equal(EPERM, socket_errno(p, AF_VSOCK_NR, SOCK_STREAM, 0,
					     true));
	/* families past the kernel's last, and high bits the kernel drops:
	 * AF_VSOCK with bit 32 set would be AF_VSOCK to the kernel */
	assert_int_equal(EPERM, socket_errno(p, 63, SOCK_STREAM, 0, false));
	assert_int_equal(EPERM, socket_errno(p, 1000, SOCK_STREAM, 0, false));
	assert_int_equal(EPERM, socket_errno(p, (1L << 32) | AF_VSOCK_NR,
					     SOCK_STREAM, 0, false));
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     (1L << 32) | NL_SOCK_DIAG,
					     false));
	cw_seccomp_free(p);
	cw_seccomp_free(none);
}

static void test_socket_families_policy(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct cw_error err;

	(void)state;
	sandbox_init(&s, "default");
	sandbox_family(&s, "AF_VSOCK");
	sandbox_family(&s, "AF_NETLINK:NETLINK_SOCK_DIAG");
	p = build(&s);
	assert_int_not_equal(EPERM, socket_errno(p, AF_VSOCK_NR, SOCK_STREAM,
						 0, false));
	assert_int_equal(0, socket_errno(p, AF_NETLINK, SOCK_RAW,
					 NL_SOCK_DIAG, false));
	assert_int_equal(0, socket_errno(p, AF_NETLINK, SOCK_RAW,
					 NETLINK_ROUTE, false));
	/* only the protocols listed */
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     NL_AUDIT, false));
	assert_int_equal(EPERM, socket_errno(p, AF_ALG_NR, SOCK_SEQPACKET, 0,
					     false));
	assert_int_equal(0, socket_errno(p, AF_UNIX, SOCK_DGRAM, 0, false));
	cw_seccomp_free(p);

	/* AF_NETLINK alone: every protocol */
	sandbox_init(&s, "default");
	sandbox_family(&s, "AF_NETLINK");
	p = build(&s);
	assert_int_equal(0, socket_errno(p, AF_NETLINK, SOCK_RAW, NL_AUDIT,
					 false));
	assert_int_equal(EPERM, socket_errno(p, AF_VSOCK_NR, SOCK_STREAM, 0,
					     false));
	cw_seccomp_free(p);

	/* raw_sockets keeps deciding about AF_PACKET */
	sandbox_init(&s, "default");
	s.sb.network.raw_sockets = true;
	p = build(&s);
	assert_int_equal(0, socket_errno(p, AF_PACKET, SOCK_RAW, 0, false));
	assert_int_equal(EPERM, socket_errno(p, AF_VSOCK_NR, SOCK_STREAM, 0,
					     false));
	cw_seccomp_free(p);

	/* without the profile, or with socket allowed, only AF_PACKET is
	 * judged (by raw_sockets) */
	sandbox_init(&s, "default");
	sandbox_allow(&s, "socket");
	p = build(&s);
	assert_int_equal(0, socket_errno(p, AF_NETLINK, SOCK_RAW,
					 NL_SOCK_DIAG, false));
	assert_int_equal(EPERM, socket_errno(p, AF_PACKET, SOCK_RAW, 0, false));
	/* socketpair keeps its own rule */
	assert_int_equal(EPERM, socket_errno(p, AF_NETLINK, SOCK_RAW,
					     NL_SOCK_DIAG, true));
	cw_seccomp_free(p);

	/* a name the profile cannot allow */
	sandbox_init(&s, "default");
	sandbox_family(&s, "AF_UNIX");
	sandbox_family(&s, "AF_VSOK");
	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_seccomp_build(&s.sb, &err));
	assert_int_equal(EINVAL, errno);
	assert_non_null(strstr(err.text, "\"AF_VSOK\""));
	assert_string_equal("sandbox.seccomp.socket_families[1]", err.path);
	sandbox_init(&s, "default");
	sandbox_family(&s, "AF_PACKET");
	assert_null(cw_seccomp_build(&s.sb, NULL));
}

static long call_personality(void *arg, int *err)
{
	long ret;

	errno = 0;
	ret = syscall(SYS_personality, *(unsigned long *)arg);
	*err = errno;
	return ret == -1 ? -1 : 0;
}

static int persona_errno(const struct cw_seccomp_prog *p,
			 unsigned long persona)
{
	struct outcome o = run(p, call_personality, &persona);

	assert_true(o.reported);
	return o.ret == 0 ? 0 : o.err;
}

static void test_personality(void **state)
{
	/* ADDR_NO_RANDOMIZE, PER_LINUX32, READ_IMPLIES_EXEC, UNAME26,
	 * PER_BSD, and patterns with one bit, one bit clear, and the top */
	static const unsigned long refused[] = {
		0x0040000, 0x0008, 0x0400000, 0x0020000, 0x0006, 1,
		0xfffffffe, 0x7fffffff, 0x80000000, 0x55555555,
	};
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	size_t i;

	(void)state;
	sandbox_init(&s, "default");
	p = build(&s);
	/* the query, PER_LINUX, and the query as a sign-extended int */
	assert_int_equal(0, persona_errno(p, 0xffffffffUL));
	assert_int_equal(0, persona_errno(p, 0));
	assert_int_equal(0, persona_errno(p, ~0UL));
	for (i = 0; i < CW_ARRAY_SIZE(refused); i++) {
		if (persona_errno(p, refused[i]) != EPERM)
			fail_msg("personality(0x%lx) was not refused",
				 refused[i]);
		/* the kernel reads 32 bits: high bits change nothing */
		assert_int_equal(EPERM, persona_errno(p, (1UL << 40) |
							    refused[i]));
		/* without the filter the kernel takes any value */
		assert_int_equal(0, persona_errno(NULL, refused[i]));
	}
	cw_seccomp_free(p);

	/* seccomp.allow lifts the rule */
	sandbox_init(&s, "default");
	sandbox_allow(&s, "personality");
	p = build(&s);
	assert_int_equal(0, persona_errno(p, 0x0040000));
	cw_seccomp_free(p);
}

static void test_program_len(void **state)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *def, *none;

	(void)state;
	sandbox_init(&s, "default");
	def = build(&s);
	sandbox_init(&s, "none");
	none = build(&s);
	assert_true(cw_seccomp_len(none) > 0);
	assert_true(cw_seccomp_len(def) > cw_seccomp_len(none));
	assert_true(cw_seccomp_len(def) <= 4096);
	assert_int_equal(0, cw_seccomp_len(NULL));
	assert_int_equal(-EINVAL, cw_seccomp_install(NULL));
	cw_seccomp_free(def);
	cw_seccomp_free(none);
	cw_seccomp_free(NULL);
}

/* Passes one descriptor over a Unix socket. */
static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	int fd = -1;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The kernel and libseccomp give a listener. */
static bool notify_works(void)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	bool ok;

	sandbox_init(&s, "default");
	p = build(&s);
	ok = cw_seccomp_can_notify(p);
	cw_seccomp_free(p);
	return ok;
}

/* The first denial a child's fn makes under the default profile with a
 * listener, as the agent describes it; fn must fail with EPERM. Returns
 * the listener, once the child is gone, and the child's pid in *pidp. */
static struct cw_seccomp_listener *denial_of(call_fn fn, void *arg,
					     struct cw_seccomp_denial *d,
					     pid_t *pidp)
{
	struct sandbox_lists s;
	struct cw_seccomp_prog *p;
	struct cw_seccomp_listener *l;
	int sv[2], lfd, status, err = 0;
	pid_t pid;

	sandbox_init(&s, "default");
	p = build(&s);
	assert_int_equal(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				       sv));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		prctl(PR_SET_NAME, "cw-denied", 0, 0, 0);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    cw_seccomp_install_listener(p, &lfd) < 0 || lfd < 0 ||
		    send_fd(sv[1], lfd))
			_exit(121);
		close(lfd);
		_exit(fn(arg, &err) == -1 && err == EPERM ? 0 : 122);
	}
	close(sv[1]);
	lfd = recv_fd(sv[0]);
	assert_true(lfd >= 0);
	l = cw_seccomp_listener_new(lfd);
	assert_non_null(l);
	/* Nothing pending yet, or the denial: never blocks. */
	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int rc;

		assert_true(poll(&pfd, 1, 5000) > 0);
		rc = cw_seccomp_listener_answer(l, true, d);
		if (rc == 1)
			break;
		assert_int_equal(0, rc);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	close(sv[0]);
	cw_seccomp_free(p);
	*pidp = pid;
	return l;
}

/* Allowed first (answered by the filter alone), then a denied one. */
static long call_getppid_unshare(void *arg, int *err)
{
	long ret;

	(void)arg;
	if (getppid() <= 0)
		return -2;
	errno = 0;
	ret = syscall(SYS_unshare, CLONE_NEWUSER);
	*err = errno;
	return ret;
}

/*
 * With a listener, a denied syscall waits for the agent, which answers
 * EPERM and sees its name, arguments and caller; allowed syscalls never
 * reach it.
 */
static void test_listener_answers_denials(void **state)
{
	struct cw_seccomp_listener *l;
	struct cw_seccomp_denial d;
	pid_t pid;

	(void)state;
	if (!notify_works())
		skip();
	l = denial_of(call_getppid_unshare, NULL, &d, &pid);
	assert_true(d.described);
	assert_string_equal("unshare", d.name);
	assert_int_equal(SYS_unshare, d.nr);
#ifdef __x86_64__
	assert_string_equal("x86_64", d.arch_name);
#endif
	assert_int_equal(CLONE_NEWUSER, d.args[0]);
	assert_int_equal(pid, d.pid);
	assert_string_equal("cw-denied", d.comm);
	assert_int_equal(EPERM, d.err);
	assert_string_equal("", d.family);
	/* Nobody is left under the filter, and nothing else was pending. */
	assert_int_equal(-EPIPE, cw_seccomp_listener_answer(l, true, &d));
	cw_seccomp_listener_free(l);
}

/* A refused socket's record names its family and netlink protocol. */
static void test_listener_names_socket_family(void **state)
{
	struct sock_args diag = { AF_NETLINK, SOCK_RAW, NL_SOCK_DIAG, false };
	struct sock_args vsock = { AF_VSOCK_NR, SOCK_STREAM, 0, true };
	struct sock_args odd = { 60, SOCK_STREAM, 0, false };
	struct cw_seccomp_denial d;
	pid_t pid;

	(void)state;
	if (!notify_works())
		skip();
	cw_seccomp_listener_free(denial_of(call_socket, &diag, &d, &pid));
	assert_string_equal("socket", d.name);
	assert_string_equal("AF_NETLINK", d.family);
	assert_string_equal("NETLINK_SOCK_DIAG", d.protocol);
	cw_seccomp_listener_free(denial_of(call_socket, &vsock, &d, &pid));
	assert_string_equal("socketpair", d.name);
	assert_string_equal("AF_VSOCK", d.family);
	assert_string_equal("", d.protocol);
	/* a family without a name: its number */
	cw_seccomp_listener_free(denial_of(call_socket, &odd, &d, &pid));
	assert_string_equal("60", d.family);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_table),
		cmocka_unit_test(test_every_default_syscall_denied),
		cmocka_unit_test(test_clone_namespace_flags),
		cmocka_unit_test(test_unshare_newuser),
		cmocka_unit_test(test_ordinary_syscalls_work),
#ifdef __x86_64__
		cmocka_unit_test(test_x32_killed),
		cmocka_unit_test(test_int80_killed),
#endif
		cmocka_unit_test(test_deny_list),
		cmocka_unit_test(test_allow_list),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_launcher_calls),
		cmocka_unit_test(test_socket_families_default),
		cmocka_unit_test(test_socket_families_policy),
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_program_len),
		cmocka_unit_test(test_listener_answers_denials),
		cmocka_unit_test(test_listener_names_socket_family),
	};
	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
