// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher, run for real: these tests run commands through /bin/bash
 * as the test's user (root) would have them run as "nobody" here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "unit.h"
#include "kernel/spawn.h"

static char *pass_names[] = { "LANG", "TERM" };
static char *set_keys[] = { "PATH" };
static char *set_vals[] = { "/usr/local/bin:/usr/bin:/bin" };

/* The default sandbox profile, filled by hand. */
static void sandbox_default(struct cw_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->user = "user";
	sb->shell = "/bin/bash";
	sb->cwd = "/home/user";
	sb->env_pass.v = pass_names;
	sb->env_pass.n = CW_ARRAY_SIZE(pass_names);
	sb->env_set_keys.v = set_keys;
	sb->env_set_keys.n = 1;
	sb->env_set_vals.v = set_vals;
	sb->env_set_vals.n = 1;
	sb->timeout_s = 60;
	sb->max_output_bytes = 1048576;
	sb->resources.memory_mb = 1024;
	sb->resources.pids = 256;
	sb->resources.cpu_s = 120;
	sb->resources.nofile = 1024;
	sb->resources.file_size_mb = 512;
	sb->seccomp.profile = "default";
}

struct launch_seen {
	int calls;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char cwd[256];
};

static void on_launch(void *ctx, pid_t pid, uid_t uid, gid_t gid,
		      const char *cwd)
{
	struct launch_seen *l = ctx;

	l->calls++;
	l->pid = pid;
	l->uid = uid;
	l->gid = gid;
	snprintf(l->cwd, sizeof(l->cwd), "%s", cwd);
}

struct run {
	struct cw_sandbox sb;
	struct cw_spawn_opts o;
	struct cw_spawn_result r;
	struct cw_error err;
	struct launch_seen seen;
	int rc;
};

static void run_init(struct run *x, const char *command)
{
	memset(x, 0, sizeof(*x));
	sandbox_default(&x->sb);
	x->o.sb = &x->sb;
	x->o.command = command;
	x->o.on_launch = on_launch;
	x->o.ctx = &x->seen;
}

static int run_go(struct run *x)
{
	x->rc = cw_spawn_run(&x->o, &x->r, &x->err);
	if (x->rc < 0)
		print_message("# launch error %d: %s\n", x->rc, x->err.text);
	return x->rc;
}

/* Runs command with the defaults; must launch. */
static void run_simple(struct run *x, const char *command)
{
	run_init(x, command);
	assert_int_equal(0, run_go(x));
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

static void assert_no_zombie(void)
{
	errno = 0;
	assert_int_equal(-1, waitpid(-1, NULL, WNOHANG));
	assert_int_equal(ECHILD, errno);
}

/* Members of the process group that are not zombies. */
static int group_live(pid_t pgid)
{
	char path[64], buf[512], st;
	DIR *d = opendir("/proc");
	struct dirent *e;
	int live = 0, pg;
	char *p;
	FILE *f;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat",
			 strtol(e->d_name, NULL, 10));
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %c %*d %d", &st, &pg) == 2 && pg == pgid &&
		    st != 'Z')
			live++;
		fclose(f);
	}
	closedir(d);
	return live;
}

/*
 * Every member is dead when the call returns; the group disappears once
 * init has reaped the orphaned zombies (this machine's init takes up to a
 * second), which is then waited for.
 */
static void assert_group_gone(pid_t pgid)
{
	int i;

	assert_int_equal(0, group_live(pgid));
	for (i = 0; i < 500 && kill(-pgid, 0) == 0; i++)
		usleep(10000);
	errno = 0;
	assert_int_equal(-1, kill(-pgid, 0));
	assert_int_equal(ESRCH, errno);
}

static void test_stdout_stderr(void **state)
{
	struct run x;

	(void)state;
	run_simple(&x, "echo out; echo err >&2; echo more");
	assert_string_equal("out\nmore\n", x.r.out);
	assert_int_equal(9, x.r.out_len);
	assert_string_equal("err\n", x.r.err);
	assert_int_equal(4, x.r.err_len);
	assert_int_equal(9, x.r.out_total);
	assert_int_equal(4, x.r.err_total);
	assert_false(x.r.truncated);
	assert_false(x.r.timed_out);
	assert_int_equal(0, x.r.exit_code);
	assert_int_equal(0, x.r.term_signal);
	assert_true(x.r.duration_us > 0);
	assert_true(x.r.pid > 0);
	assert_int_equal(1, x.seen.calls);
	assert_int_equal(x.r.pid, x.seen.pid);
	cw_spawn_result_free(&x.r);
	assert_null(x.r.out);
	assert_no_zombie();
}

static void test_exit_codes(void **state)
{
	struct run x;

	(void)state;
	run_simple(&x, "exit 3");
	assert_int_equal(3, x.r.exit_code);
	assert_int_equal(0, x.r.term_signal);
	assert_string_equal("", x.r.out);
	assert_string_equal("", x.r.err);
	cw_spawn_result_free(&x.r);

	run_simple(&x, "true");
	assert_int_equal(0, x.r.exit_code);
	cw_spawn_result_free(&x.r);
}

static void test_killed_by_signal(void **state)
{
	struct run x;

	(void)state;
	run_simple(&x, "kill -9 $$");
	assert_int_equal(-1, x.r.exit_code);
	assert_int_equal(SIGKILL, x.r.term_signal);
	assert_false(x.r.timed_out);
	cw_spawn_result_free(&x.r);
}

static void test_timeout_kills_group(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "sleep 100 & sleep 100 & wait");
	x.o.timeout_ms = 300;
	assert_int_equal(0, run_go(&x));
	assert_true(x.r.timed_out);
	assert_int_equal(-1, x.r.exit_code);
	assert_int_equal(SIGTERM, x.r.term_signal);
	assert_true(x.r.duration_us >= 300000);
	assert_true(x.r.duration_us < 5000000);
	assert_group_gone(x.r.pid);
	assert_no_zombie();
	cw_spawn_result_free(&x.r);
}

static void test_sigterm_ignored(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "trap \"\" TERM; sleep 100");
	x.o.timeout_ms = 200;
	x.o.kill_grace_ms = 300;
	assert_int_equal(0, run_go(&x));
	assert_true(x.r.timed_out);
	assert_int_equal(-1, x.r.exit_code);
	assert_int_equal(SIGKILL, x.r.term_signal);
	assert_true(x.r.duration_us >= 500000);
	assert_true(x.r.duration_us < 5000000);
	assert_group_gone(x.r.pid);
	cw_spawn_result_free(&x.r);
}

/* A call cannot extend the policy's timeout. */
static void test_timeout_only_narrows(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "sleep 100");
	x.sb.timeout_s = 1;
	x.o.timeout_ms = 100000;
	x.o.kill_grace_ms = 100;
	assert_int_equal(0, run_go(&x));
	assert_true(x.r.timed_out);
	assert_true(x.r.duration_us < 5000000);
	cw_spawn_result_free(&x.r);
}

static void test_stragglers_killed(void **state)
{
	struct run x;

	(void)state;
	run_simple(&x, "sleep 100 & echo done");
	assert_string_equal("done\n", x.r.out);
	assert_int_equal(0, x.r.exit_code);
	assert_false(x.r.timed_out);
	assert_true(x.r.duration_us < 3000000);
	assert_group_gone(x.r.pid);
	assert_no_zombie();
	cw_spawn_result_free(&x.r);
}

/* The marker line at s, up to its newline (a static copy). */
static const char *strndup_marker(const char *s)
{
	static char line[128];
	const char *nl = strchr(s, '\n');
	size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);

	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, s, n);
	line[n] = '\0';
	return line;
}

static void test_truncation(void **state)
{
	struct run x;
	size_t i;

	(void)state;
	run_init(&x, "yes | head -c 5000000");
	x.sb.max_output_bytes = 1000;
	assert_int_equal(0, run_go(&x));
	/* the first 500 bytes and the last 500, the marker between */
	for (i = 0; i < 500; i++)
		assert_int_equal(i % 2 ? '\n' : 'y', x.r.out[i]);
	assert_string_equal("[... 4,999,000 bytes omitted ...]\n", strndup_marker(x.r.out + 500));
	for (i = 0; i < 500; i++)
		assert_int_equal(i % 2 ? '\n' : 'y', x.r.out[x.r.out_len - 500 + i]);
	assert_int_equal(1000 + strlen("[... 4,999,000 bytes omitted ...]\n"), x.r.out_len);
	assert_int_equal(x.r.out_len, strlen(x.r.out));
	assert_true(x.r.truncated);
	assert_int_equal(5000000, x.r.out_total);
	assert_int_equal(4999000, x.r.out_omitted);
	assert_int_equal(0, x.r.err_total);
	assert_int_equal(0, x.r.exit_code);
	cw_spawn_result_free(&x.r);

	/* Below the limit, everything arrives. */
	run_simple(&x, "head -c 300000 /dev/zero | tr '\\0' a");
	assert_int_equal(300000, x.r.out_len);
	assert_int_equal(300000, x.r.out_total);
	assert_false(x.r.truncated);
	assert_int_equal('a', x.r.out[299999]);
	cw_spawn_result_free(&x.r);
}

static void test_no_fd_leak_into_child(void **state)
{
	struct run x;
	int fd;

	(void)state;
	fd = open("/dev/null", O_RDONLY); /* deliberately not CLOEXEC */
	assert_true(fd >= 0);
	run_simple(&x, "ls /proc/self/fd");
	close(fd);
	/* 3 is the directory ls itself opened */
	assert_string_equal("0\n1\n2\n3\n", x.r.out);
	cw_spawn_result_free(&x.r);

	run_simple(&x, "readlink /proc/$$/fd/0");
	assert_string_equal("/dev/null\n", x.r.out);
	cw_spawn_result_free(&x.r);
}

static void test_no_fd_leak_in_parent(void **state)
{
	struct run x;
	int before;

	(void)state;
	before = count_fds();
	run_simple(&x, "echo a; echo b >&2; sleep 100 &");
	cw_spawn_result_free(&x.r);
	run_init(&x, "sleep 100");
	x.o.timeout_ms = 100;
	x.o.kill_grace_ms = 100;
	assert_int_equal(0, run_go(&x));
	cw_spawn_result_free(&x.r);
	run_init(&x, "true");
	x.sb.cwd = "/nonexistent-cw-spawn";
	x.sb.cwd_explicit = true;
	assert_int_equal(-ENOENT, run_go(&x));
	run_init(&x, "true");
	x.sb.user = "cw-no-such-user";
	x.sb.user_explicit = true;
	assert_int_equal(-ENOENT, run_go(&x));
	assert_int_equal(before, count_fds());
	assert_no_zombie();
}

static void test_stdin_is_devnull(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "cat");
	x.o.timeout_ms = 5000;
	assert_int_equal(0, run_go(&x));
	assert_false(x.r.timed_out);
	assert_int_equal(0, x.r.exit_code);
	assert_int_equal(0, x.r.out_len);
	assert_true(x.r.duration_us < 3000000);
	cw_spawn_result_free(&x.r);
}

static void test_default_user_is_nobody(void **state)
{
	struct run x;

	(void)state;
	/* This machine has no account "user": the fallback applies. */
	assert_null(getpwnam("user"));
	run_simple(&x, "id -u; id -g; id -G");
	assert_string_equal("65534\n65534\n65534\n", x.r.out);
	assert_int_equal(65534, x.seen.uid);
	assert_int_equal(65534, x.seen.gid);
	cw_spawn_result_free(&x.r);
}

static void test_root_only_when_named(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "id -u");
	x.sb.user = "root";
	x.sb.user_explicit = true;
	assert_int_equal(0, run_go(&x));
	assert_string_equal("0\n", x.r.out);
	assert_int_equal(0, x.seen.uid);
	cw_spawn_result_free(&x.r);

	/* A default that resolves to uid 0 is refused. */
	run_init(&x, "id -u");
	x.sb.user = "root";
	assert_int_equal(-EPERM, run_go(&x));
	assert_int_equal(0, x.seen.calls);
	assert_non_null(strstr(x.err.text, "uid 0"));
	assert_null(x.r.out);
}

static void test_missing_explicit_user(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "true");
	x.sb.user = "cw-no-such-user";
	x.sb.user_explicit = true;
	assert_int_equal(-ENOENT, run_go(&x));
	assert_int_equal(0, x.seen.calls);
	assert_non_null(strstr(x.err.text, "\"cw-no-such-user\""));
}

static void test_nnp_and_seccomp(void **state)
{
	struct cw_seccomp_prog *p;
	struct cw_error err;
	struct run x;

	(void)state;
	run_init(&x, "x");
	p = cw_seccomp_build(&x.sb, &err);
	assert_non_null(p);

	run_init(&x, "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status");
	x.o.seccomp = p;
	assert_int_equal(0, run_go(&x));
	assert_string_equal("NoNewPrivs:\t1\nSeccomp:\t2\n", x.r.out);
	cw_spawn_result_free(&x.r);

	run_init(&x, "unshare -U true");
	x.o.seccomp = p;
	assert_int_equal(0, run_go(&x));
	assert_int_not_equal(0, x.r.exit_code);
	assert_non_null(strstr(x.r.err, "Operation not permitted"));
	cw_spawn_result_free(&x.r);

	run_init(&x, "true");
	x.o.seccomp = p;
	assert_int_equal(0, run_go(&x));
	assert_int_equal(0, x.r.exit_code);
	cw_spawn_result_free(&x.r);

	cw_seccomp_free(p);
}

static void test_environment(void **state)
{
	const char *extra[] = { "CW_EXTRA=yes", "PATH=/bin", NULL };
	const char *bad[] = { "NOEQUALS", NULL };
	char *lang = getenv("LANG") ? strdup(getenv("LANG")) : NULL;
	char *term = getenv("TERM") ? strdup(getenv("TERM")) : NULL;
	struct run x;

	(void)state;
	assert_int_equal(0, setenv("CW_SECRET", "hunter2", 1));
	assert_int_equal(0, setenv("LANG", "C.UTF-8", 1));
	assert_int_equal(0, unsetenv("TERM"));
	/* bash's own initial environment, exactly as execve gave it */
	run_init(&x, "tr '\\0' '\\n' < /proc/$$/environ | LC_ALL=C sort");
	x.o.env_extra = extra;
	assert_int_equal(0, run_go(&x));
	assert_string_equal("CW_EXTRA=yes\n"
			    "HOME=/nonexistent\n"
			    "LANG=C.UTF-8\n"
			    "LOGNAME=nobody\n"
			    "PATH=/bin\n"
			    "SHELL=/usr/sbin/nologin\n"
			    "USER=nobody\n",
			    x.r.out);
	cw_spawn_result_free(&x.r);

	run_init(&x, "true");
	x.o.env_extra = bad;
	assert_int_equal(-EINVAL, run_go(&x));
	assert_int_equal(0, x.seen.calls);

	unsetenv("CW_SECRET");
	if (lang)
		setenv("LANG", lang, 1);
	else
		unsetenv("LANG");
	if (term)
		setenv("TERM", term, 1);
	free(lang);
	free(term);
}

static void test_cwd(void **state)
{
	char dir[] = "/tmp/cw-spawn-XXXXXX";
	struct passwd *root;
	struct stat st;
	struct run x;

	(void)state;
	/* The default /home/user is missing, so is nobody's home: "/". */
	run_simple(&x, "pwd");
	assert_string_equal("/\n", x.r.out);
	assert_string_equal("/", x.seen.cwd);
	cw_spawn_result_free(&x.r);

	/* The call's cwd wins. */
	run_init(&x, "pwd");
	x.o.cwd = "/tmp";
	assert_int_equal(0, run_go(&x));
	assert_string_equal("/tmp\n", x.r.out);
	assert_string_equal("/tmp", x.seen.cwd);
	cw_spawn_result_free(&x.r);

	/* A missing default falls back to the user's home. */
	root = getpwnam("root");
	assert_non_null(root);
	if (stat(root->pw_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		char want[300];

		run_init(&x, "pwd");
		x.sb.user = "root";
		x.sb.user_explicit = true;
		x.sb.cwd = "/nonexistent-cw-spawn";
		assert_int_equal(0, run_go(&x));
		snprintf(want, sizeof(want), "%s\n", root->pw_dir);
		assert_string_equal(want, x.r.out);
		cw_spawn_result_free(&x.r);
	}

	/* An explicit cwd that is missing is a launch error. */
	run_init(&x, "pwd");
	x.sb.cwd = "/nonexistent-cw-spawn";
	x.sb.cwd_explicit = true;
	assert_int_equal(-ENOENT, run_go(&x));
	assert_string_equal("chdir \"/nonexistent-cw-spawn\": "
			    "No such file or directory", x.err.text);
	assert_int_equal(0, x.seen.calls);

	/* chdir happens as the user: root's private directory is refused. */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(0, chmod(dir, 0700));
	run_init(&x, "pwd");
	x.o.cwd = dir;
	assert_int_equal(-EACCES, run_go(&x));
	rmdir(dir);
	assert_non_null(strstr(x.err.text, "Permission denied"));
}

static void fmt_limit(char *buf, size_t len, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited\n");
	else
		snprintf(buf, len, "%llu\n", (unsigned long long)v);
}

static void test_rlimits(void **state)
{
	struct rlimit cpu, nproc;
	char want[64];
	struct run x;

	(void)state;
	run_simple(&x, "ulimit -n; ulimit -c; ulimit -t; ulimit -u; "
		       "ulimit -d; ulimit -f");
	/* -d and -f are in KiB */
	assert_string_equal("1024\n0\n120\n256\n1048576\n524288\n", x.r.out);
	cw_spawn_result_free(&x.r);

	/* 0 leaves a limit as the agent has it; root gets no process
	 * limit from the policy either. */
	assert_int_equal(0, getrlimit(RLIMIT_CPU, &cpu));
	assert_int_equal(0, getrlimit(RLIMIT_NPROC, &nproc));
	fmt_limit(want, sizeof(want), cpu.rlim_cur);
	fmt_limit(want + strlen(want), sizeof(want) - strlen(want),
		  nproc.rlim_cur);
	assert_string_not_equal("120\n256\n", want);
	run_init(&x, "ulimit -t; ulimit -u");
	x.sb.resources.cpu_s = 0;
	x.sb.user = "root";
	x.sb.user_explicit = true;
	assert_int_equal(0, run_go(&x));
	assert_string_equal(want, x.r.out);
	cw_spawn_result_free(&x.r);
}

static void test_launch_error(void **state)
{
	struct run x;

	(void)state;
	run_init(&x, "true");
	x.sb.shell = "/nonexistent-cw-spawn/bash";
	assert_int_equal(-ENOENT, run_go(&x));
	assert_string_equal("execve \"/nonexistent-cw-spawn/bash\": "
			    "No such file or directory", x.err.text);
	assert_int_equal(0, x.seen.calls);
	assert_null(x.r.out);
	assert_no_zombie();
}

/* Runs fn in a child and expects it to exit 0 (children do not use the
 * cmocka asserts; they exit with the number of the failed check). */
static void in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
}

static int child_as_unprivileged(void)
{
	struct run x;
	gid_t g = 12345;

	if (setgroups(1, &g) < 0 || setresgid(12345, 12345, 12345) < 0 ||
	    setresuid(12345, 12345, 12345) < 0)
		return 1;
	/* Default user: runs as itself. */
	run_init(&x, "id -u");
	if (run_go(&x) != 0 || strcmp("12345\n", x.r.out) != 0)
		return 2;
	cw_spawn_result_free(&x.r);
	/* Any other user, named explicitly: refused. */
	run_init(&x, "id -u");
	x.sb.user = "nobody";
	x.sb.user_explicit = true;
	if (run_go(&x) != -EPERM || x.seen.calls != 0)
		return 3;
	return 0;
}

static void test_agent_not_root(void **state)
{
	(void)state;
	in_child(child_as_unprivileged);
}

/* With pidfd_open answering ENOSYS, the timed waitpid loop takes over. */
static int child_without_pidfd(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct run x;

	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				     SCMP_SYS(pidfd_open), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		return 1;
	seccomp_release(ctx);
	if (syscall(SYS_pidfd_open, getpid(), 0) != -1 || errno != ENOSYS)
		return 2;

	run_init(&x, "echo hi; exit 4");
	if (run_go(&x) != 0 || strcmp("hi\n", x.r.out) != 0 ||
	    x.r.exit_code != 4)
		return 3;
	cw_spawn_result_free(&x.r);

	run_init(&x, "sleep 100 & sleep 100 & wait");
	x.o.timeout_ms = 300;
	if (run_go(&x) != 0 || !x.r.timed_out ||
	    x.r.term_signal != SIGTERM)
		return 4;
	if (group_live(x.r.pid) != 0)
		return 5;
	cw_spawn_result_free(&x.r);

	run_init(&x, "trap \"\" TERM; sleep 100");
	x.o.timeout_ms = 200;
	x.o.kill_grace_ms = 200;
	if (run_go(&x) != 0 || !x.r.timed_out ||
	    x.r.term_signal != SIGKILL || x.r.duration_us < 400000)
		return 6;
	cw_spawn_result_free(&x.r);

	run_init(&x, "sleep 100 & echo done");
	if (run_go(&x) != 0 || strcmp("done\n", x.r.out) != 0 ||
	    x.r.duration_us > 3000000)
		return 7;
	if (group_live(x.r.pid) != 0)
		return 8;
	cw_spawn_result_free(&x.r);
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
		return 9;
	return 0;
}

static void test_without_pidfd(void **state)
{
	(void)state;
	in_child(child_without_pidfd);
}

struct parallel {
	pthread_t th;
	char cmd[64];
	char want[32];
	int ok;
};

static void *parallel_main(void *arg)
{
	struct parallel *p = arg;
	struct run x;

	run_init(&x, p->cmd);
	x.o.on_launch = NULL;
	p->ok = run_go(&x) == 0 && x.r.out && strcmp(p->want, x.r.out) == 0 &&
		x.r.exit_code == 0;
	cw_spawn_result_free(&x.r);
	return NULL;
}

static void test_parallel_calls(void **state)
{
	struct parallel p[6];
	size_t i;

	(void)state;
	for (i = 0; i < CW_ARRAY_SIZE(p); i++) {
		snprintf(p[i].cmd, sizeof(p[i].cmd),
			 "sleep 0.2; echo call%zu; echo e >&2", i);
		snprintf(p[i].want, sizeof(p[i].want), "call%zu\n", i);
		p[i].ok = 0;
		assert_int_equal(0, pthread_create(&p[i].th, NULL,
						   parallel_main, &p[i]));
	}
	for (i = 0; i < CW_ARRAY_SIZE(p); i++) {
		assert_int_equal(0, pthread_join(p[i].th, NULL));
		assert_int_equal(1, p[i].ok);
	}
	assert_no_zombie();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdout_stderr),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_killed_by_signal),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_sigterm_ignored),
		cmocka_unit_test(test_timeout_only_narrows),
		cmocka_unit_test(test_stragglers_killed),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_no_fd_leak_into_child),
		cmocka_unit_test(test_no_fd_leak_in_parent),
		cmocka_unit_test(test_stdin_is_devnull),
		cmocka_unit_test(test_default_user_is_nobody),
		cmocka_unit_test(test_root_only_when_named),
		cmocka_unit_test(test_missing_explicit_user),
		cmocka_unit_test(test_nnp_and_seccomp),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_rlimits),
		cmocka_unit_test(test_launch_error),
		cmocka_unit_test(test_agent_not_root),
		cmocka_unit_test(test_without_pidfd),
		cmocka_unit_test(test_parallel_calls),
	};
	return cmocka_run_group_tests_name("spawn", tests, NULL, NULL);
}
