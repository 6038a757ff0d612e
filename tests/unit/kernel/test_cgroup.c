// SPDX-License-Identifier: Apache-2.0
/*
 * Per-call cgroups on the real kernel, as root. The test process is the
 * agent: cw_cgroup_open may move it into <own>/agent (cgroup v2), and each
 * test closes its root again so that it moves back. Commands are started
 * the way the launcher starts them: clone3 CLONE_INTO_CGROUP with the v2
 * directory, then "0" written to each v1 cgroup.procs descriptor. The test
 * process is a child subreaper, so double-forked processes are reaped
 * here and their end can be checked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "kernel/cgroup.h"
#include "kernel/cgroup_pool.h"

#define MiB (1024ULL * 1024)

/*
 * What a test created, so that the teardown can release it when an
 * assertion ends the test early: roots, calls, child processes, cgroup
 * directories made by hand, and the heap parts of the test's env (never
 * the env itself: it is on the stack of a test that has ended by then).
 */
static struct {
	struct cw_cgroup_root *root[4];
	int nroot;
	struct cw_cgroup_call *call[8];
	int ncall;
	pid_t pid[64];
	int npid;
	char *dir[3];
	int ndir;
	json_t *env_desc;
	char *env_v2_orig;
} reg;

static void track_pid(pid_t pid)
{
	if (pid > 0 && reg.npid < (int)CW_ARRAY_SIZE(reg.pid))
		reg.pid[reg.npid++] = pid;
}

static struct cw_cgroup_root *root_open(struct cw_error *err)
{
	struct cw_cgroup_root *r = cw_cgroup_open(err);

	if (r && reg.nroot < (int)CW_ARRAY_SIZE(reg.root))
		reg.root[reg.nroot++] = r;
	return r;
}

static void root_close(struct cw_cgroup_root *r)
{
	int i;

	for (i = 0; i < reg.nroot; i++)
		if (reg.root[i] == r)
			reg.root[i] = reg.root[--reg.nroot];
	cw_cgroup_close(r);
}

static struct cw_cgroup_call *call_new(struct cw_cgroup_root *r,
				       const char *id,
				       const struct cw_sandbox *sb,
				       struct cw_error *err)
{
	struct cw_cgroup_call *c = cw_cgroup_call_new(r, id, sb, err);

	if (c && reg.ncall < (int)CW_ARRAY_SIZE(reg.call))
		reg.call[reg.ncall++] = c;
	return c;
}

static int call_end(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
		    struct cw_error *err)
{
	int i;

	for (i = 0; i < reg.ncall; i++)
		if (reg.call[i] == c)
			reg.call[i] = reg.call[--reg.ncall];
	return cw_cgroup_call_end(c, st, err);
}

/* Call names end in "-<pid of the test>", so that concurrent runs of this
 * test (sharing the same cgroups) neither collide nor check each other's. */
static char tag[24];

static const char *name_of(const char *base, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", base, tag);
	return buf;
}

static void sandbox_limits(struct cw_sandbox *sb, int64_t memory_mb,
			   int64_t pids)
{
	memset(sb, 0, sizeof(*sb));
	sb->resources.memory_mb = memory_mb;
	sb->resources.pids = pids;
	sb->resources.cpu_s = 10;
}

static int64_t now_ms(void)
{
	return cw_mono_us() / 1000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Whole small file, or NULL. */
static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t cap = 0;
	FILE *fp;
	ssize_t n;

	fp = fopen(path, "re");
	if (!fp)
		return NULL;
	n = getdelim(&buf, &cap, '\0', fp);
	fclose(fp);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

static char *pathf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *pathf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n > 0);
	return s;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * Gone within ms: a peer agent (another run of this test) that took a
 * stale call first may still be removing it when this open skips it.
 */
static bool gone_within(const char *path, long ms)
{
	int64_t until = now_ms() + ms;

	while (exists(path)) {
		if (now_ms() >= until)
			return false;
		sleep_ms(10);
	}
	return true;
}

/* Number of this test's subdirectories (call cgroups) of path. */
static int subdirs(const char *path)
{
	size_t tl = strlen(tag), nl;
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		nl = strlen(de->d_name);
		if (de->d_type == DT_DIR && nl > tl &&
		    !strcmp(de->d_name + nl - tl, tag))
			n++;
	}
	closedir(d);
	return n;
}

/* The v2 line of /proc/<pid>/cgroup ("0::/x"), or the v1 line naming ctl. */
static char *cgroup_of(pid_t pid, const char *ctl)
{
	char *path = pathf("/proc/%d/cgroup", (int)pid);
	char *text = slurp(path), *line, *save = NULL, *c, *p, *res = NULL;

	free(path);
	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line && !res;
	     line = strtok_r(NULL, "\n", &save)) {
		c = strchr(line, ':');
		p = c ? strchr(c + 1, ':') : NULL;
		if (!p)
			continue;
		*c++ = '\0';
		*p++ = '\0';
		if ((!ctl && !strcmp(line, "0") && !*c) ||
		    (ctl && strstr(c, ctl)))
			res = strdup(p);
	}
	free(text);
	return res;
}

/* Alive and not a zombie. */
static bool alive(pid_t pid)
{
	char *path = pathf("/proc/%d/stat", (int)pid);
	char *text = slurp(path), *p;
	bool live = false;

	free(path);
	if (text) {
		p = strrchr(text, ')');
		live = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
		free(text);
	}
	return live;
}

/* Waits up to ms for pid, a child of this process; status or -1. */
static int wait_for(pid_t pid, long ms)
{
	int64_t until = now_ms() + ms;
	int status;

	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return status;
		if (w < 0 || now_ms() >= until)
			return -1;
		sleep_ms(5);
	}
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Starts shell -c cmd inside call c, the way the launcher does. */
static pid_t launch(const struct cw_cgroup_call *c, const char *shell,
		    const char *cmd)
{
	struct clone_args ca;
	const int *v1;
	size_t n, i;
	int fd, null;
	long pid;

	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	fd = cw_cgroup_call_fd(c);
	if (fd >= 0) {
		ca.flags = CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)fd;
	}
	n = cw_cgroup_call_v1_procs(c, &v1);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		for (i = 0; i < n; i++)
			if (write(v1[i], "0", 1) != 1)
				_exit(125);
		null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(null, 2) < 0)
			_exit(126);
		execl(shell, shell, "-c", cmd, (char *)NULL);
		_exit(127);
	}
	track_pid((pid_t)pid);
	return (pid_t)pid;
}

struct env {
	struct cw_cgroup_root *r;
	json_t *desc;
	char *v2_orig;		/* the test process's v2 cgroup before open */
};

static const char *calls_of(const struct env *e, const char *key)
{
	return json_string_value(json_object_get(
		json_object_get(e->desc, "calls"), key));
}

/* The directory of call id in the hierarchy that enforces key. */
static char *call_dir(const struct env *e, const char *key, const char *id)
{
	const char *which = json_string_value(json_object_get(e->desc, key));
	const char *calls;

	if (!which)
		return NULL;
	calls = calls_of(e, !strcmp(which, "v2") ? "v2" : key);
	return calls ? pathf("%s/%s", calls, id) : NULL;
}

static bool skip_reason(void)
{
	if (geteuid() != 0) {
		print_message("# cgroup tests need root\n");
		return true;
	}
	return false;
}

static void env_open(struct env *e)
{
	struct cw_error err = { 0 };

	memset(e, 0, sizeof(*e));
	e->v2_orig = cgroup_of(getpid(), NULL);
	reg.env_v2_orig = e->v2_orig;
	e->r = root_open(&err);
	if (!e->r && errno == ENOENT) {
		print_message("# no cgroup hierarchy: %s\n", err.text);
		free(e->v2_orig);
		e->v2_orig = reg.env_v2_orig = NULL;
		skip();
	}
	if (!e->r)
		print_message("# cw_cgroup_open: %s\n", err.text);
	assert_non_null(e->r);
	e->desc = reg.env_desc = cw_cgroup_describe(e->r);
	assert_non_null(e->desc);
}

/* Does another agent hold <own>, the parent of path (calls/, agent/)? */
static bool others_hold(const char *path)
{
	char *own = strdup(path);
	bool held = false;
	int fd;

	*strrchr(own, '/') = '\0';
	fd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		held = flock(fd, LOCK_EX | LOCK_NB) != 0;
		close(fd);
	}
	free(own);
	return held;
}

/*
 * After every test: nothing is left under calls/; close removes calls/
 * and agent/ and puts the test process back where it was.
 */
static void env_close(struct env *e)
{
	const char *keys[] = { "v2", "memory", "pids" };
	char *calls[3] = { NULL }, *agent = NULL, *v2;
	const char *s;
	size_t i;

	for (i = 0; i < 3; i++) {
		s = calls_of(e, keys[i]);
		if (!s)
			continue;
		calls[i] = strdup(s);
		assert_int_equal(0, subdirs(calls[i]));
	}
	s = json_string_value(json_object_get(e->desc, "agent"));
	agent = s ? strdup(s) : NULL;
	json_decref(e->desc);
	e->desc = reg.env_desc = NULL;
	root_close(e->r);
	e->r = NULL;
	for (i = 0; i < 3; i++) {
		if (!calls[i])
			continue;
		if (exists(calls[i]) && others_hold(calls[i]))
			print_message("# %s kept: another agent uses it\n",
				      calls[i]);
		else
			assert_false(exists(calls[i]));
		free(calls[i]);
	}
	/* others_hold(agent) tests the lock on <own>, agent's parent. */
	if (agent && !others_hold(agent)) {
		assert_false(exists(agent));
		v2 = cgroup_of(getpid(), NULL);
		assert_string_equal(e->v2_orig, v2);
		free(v2);
	}
	free(agent);
	free(e->v2_orig);
	e->v2_orig = reg.env_v2_orig = NULL;
	reap_all();
}

/* Releases what a test that ended early left behind. */
static int teardown(void **state)
{
	int i, status;

	(void)state;
	while (reg.ncall > 0)
		cw_cgroup_call_end(reg.call[--reg.ncall], NULL, NULL);
	for (i = 0; i < reg.npid; i++) {
		/* Only a child not yet reaped: its pid cannot be reused. */
		if (waitpid(reg.pid[i], &status, WNOHANG) == 0) {
			kill(reg.pid[i], SIGKILL);
			waitpid(reg.pid[i], &status, 0);
		}
	}
	reg.npid = 0;
	while (reg.ndir > 0) {
		rmdir(reg.dir[--reg.ndir]);
		free(reg.dir[reg.ndir]);
	}
	json_decref(reg.env_desc);
	free(reg.env_v2_orig);
	reg.env_desc = NULL;
	reg.env_v2_orig = NULL;
	while (reg.nroot > 0)
		cw_cgroup_close(reg.root[--reg.nroot]);
	reap_all();
	return 0;
}

static void test_open_describes_hierarchies(void **state)
{
	char *mem_v1, *pids_v1, *mounts, *v2now;
	const char *calls, *agent;
	struct env e;
	struct stat st;

	(void)state;
	if (skip_reason())
		skip();
	mounts = slurp("/proc/self/mountinfo");
	assert_non_null(mounts);
	/* v1 memory and pids hierarchies the test process is in. */
	mem_v1 = cgroup_of(getpid(), "memory");
	pids_v1 = cgroup_of(getpid(), "pids");
	env_open(&e);
	{
		char *d = json_dumps(e.desc, JSON_COMPACT);

		print_message("# %s\n", d);
		free(d);
	}
	if (strstr(mounts, " - cgroup2 ")) {
		assert_non_null(json_string_value(json_object_get(e.desc,
								  "v2")));
		calls = cw_cgroup_calls_path(e.r);
		assert_non_null(calls);
		assert_string_equal(calls, calls_of(&e, "v2"));
		assert_true(cw_cgroup_calls_fd(e.r) >= 0);
		assert_int_equal(0, fstat(cw_cgroup_calls_fd(e.r), &st));
		assert_true(S_ISDIR(st.st_mode));
		assert_true(exists(calls));
	}
	if (mem_v1)
		assert_string_equal("v1", json_string_value(
			json_object_get(e.desc, "memory")));
	if (pids_v1)
		assert_string_equal("v1", json_string_value(
			json_object_get(e.desc, "pids")));
	if (mem_v1 && pids_v1) {
		assert_true(exists(calls_of(&e, "memory")));
		assert_true(exists(calls_of(&e, "pids")));
	}
	assert_string_equal("rlimit", json_string_value(
		json_object_get(e.desc, "cpu")));
	if (calls_of(&e, "v2")) {
		/* cgroup.kill exists from Linux 5.14. */
		char *kill = pathf("%s/cgroup.kill", calls_of(&e, "v2"));

		if (exists(kill))
			assert_string_equal("cgroup.kill", json_string_value(
				json_object_get(e.desc, "kill")));
		free(kill);
	}
	agent = json_string_value(json_object_get(e.desc, "agent"));
	if (agent) {
		/* The agent left <own> for the leaf <own>/agent. */
		v2now = cgroup_of(getpid(), NULL);
		assert_non_null(v2now);
		assert_true(strlen(v2now) > 6);
		assert_string_equal("/agent", v2now + strlen(v2now) - 6);
		free(v2now);
	}
	free(mem_v1);
	free(pids_v1);
	free(mounts);
	env_close(&e);
}

static void test_call_limits_and_placement(void **state)
{
	struct cw_cgroup_stats st;
	struct cw_cgroup_call *c, *dup;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	char *dir, *f, *text, *want, *mine;
	char idbuf[64], unl[64];
	const char *id = name_of("t-limits", idbuf, sizeof(idbuf));
	const char *which;
	struct stat s;
	struct env e;
	int status;
	pid_t pid;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	sandbox_limits(&sb, 64, 50);
	c = call_new(e.r, id, &sb, &err);
	if (!c)
		print_message("# %s\n", err.text);
	assert_non_null(c);

	/* The same id twice is refused, and so are ids that are paths. */
	dup = call_new(e.r, id, &sb, &err);
	assert_null(dup);
	assert_int_equal(EEXIST, errno);
	assert_null(call_new(e.r, "../x", &sb, &err));
	assert_int_equal(EINVAL, errno);
	assert_null(call_new(e.r, "..", &sb, &err));
	assert_int_equal(EINVAL, errno);

	/* The limits were written. */
	which = json_string_value(json_object_get(e.desc, "memory"));
	dir = call_dir(&e, "memory", id);
	if (dir) {
		f = pathf("%s/%s", dir, !strcmp(which, "v2") ?
			  "memory.max" : "memory.limit_in_bytes");
		text = slurp(f);
		assert_non_null(text);
		assert_int_equal(64 * MiB, strtoull(text, NULL, 10));
		free(text);
		free(f);
		free(dir);
	}
	dir = call_dir(&e, "pids", id);
	if (dir) {
		f = pathf("%s/pids.max", dir);
		text = slurp(f);
		assert_non_null(text);
		assert_string_equal("50\n", text);
		free(text);
		free(f);
		free(dir);
	}

	/* The cgroup id is the v2 directory's inode number. */
	if (cw_cgroup_calls_path(e.r)) {
		f = pathf("%s/%s", cw_cgroup_calls_path(e.r), id);
		assert_int_equal(0, stat(f, &s));
		assert_int_equal(s.st_ino, cw_cgroup_call_id(c));
		assert_true(cw_cgroup_call_fd(c) >= 0);
		free(f);
	}

	/* A command lands in the call's cgroup in every hierarchy. */
	pid = launch(c, "/bin/sh", "exec sleep 30");
	assert_true(pid > 0);
	sleep_ms(100);
	assert_int_equal(1, cw_cgroup_call_nprocs(c));
	if (cw_cgroup_calls_path(e.r)) {
		mine = cgroup_of(pid, NULL);
		assert_non_null(mine);
		want = pathf("/calls/%s", id);
		assert_string_equal(want, mine + strlen(mine) - strlen(want));
		free(want);
		free(mine);
	}
	if (calls_of(&e, "memory")) {
		mine = cgroup_of(pid, "memory");
		want = pathf("/calls/%s", id);
		assert_non_null(mine);
		assert_string_equal(want, mine + strlen(mine) - strlen(want));
		free(want);
		free(mine);
	}
	if (calls_of(&e, "pids")) {
		mine = cgroup_of(pid, "pids");
		want = pathf("/calls/%s", id);
		assert_non_null(mine);
		assert_string_equal(want, mine + strlen(mine) - strlen(want));
		free(want);
		free(mine);
	}

	assert_int_equal(0, call_end(c, &st, &err));
	assert_int_equal(1, st.killed);
	assert_int_equal(64 * MiB, st.memory_max);
	assert_int_equal(50, st.pids_max);
	assert_false(st.memory_limited);
	assert_false(st.pids_limited);
	status = wait_for(pid, 5000);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(SIGKILL, WTERMSIG(status));

	/* No limits: the files say "max" (or the v1 maximum). */
	sandbox_limits(&sb, 0, 0);
	name_of("t-unlimited", unl, sizeof(unl));
	c = call_new(e.r, unl, &sb, &err);
	assert_non_null(c);
	dir = call_dir(&e, "pids", unl);
	if (dir) {
		f = pathf("%s/pids.max", dir);
		text = slurp(f);
		assert_string_equal("max\n", text);
		free(text);
		free(f);
		free(dir);
	}
	assert_int_equal(0, call_end(c, &st, &err));
	assert_int_equal(0, st.killed);
	assert_int_equal(0, st.memory_max);
	assert_int_equal(0, st.pids_max);
	env_close(&e);
}

/* fork+exec of /bin/true from the test process, in milliseconds. */
static int64_t spawn_true_ms(void)
{
	int64_t t0 = now_ms();
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	status = wait_for(pid, 5000);
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	return now_ms() - t0;
}

static void test_fork_bomb_is_contained(void **state)
{
	char id[64];
	struct cw_cgroup_stats st;
	struct cw_cgroup_call *c;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	struct env e;
	int64_t t0, slowest = 0, ms;
	int n, maxn = 0, status;
	pid_t pid;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	if (json_is_null(json_object_get(e.desc, "pids"))) {
		print_message("# no pids controller in any hierarchy\n");
		env_close(&e);
		skip();
	}
	sandbox_limits(&sb, 256, 32);
	c = call_new(e.r, name_of("t-forkbomb", id, sizeof(id)),
			       &sb, &err);
	assert_non_null(c);
	pid = launch(c, "/bin/bash", "f(){ f|f& };f");
	assert_true(pid > 0);

	/* For 2 s: the bomb stays under its limit and the agent works. */
	t0 = now_ms();
	while (now_ms() - t0 < 2000) {
		n = cw_cgroup_call_nprocs(c);
		assert_true(n >= 0);
		if (n > maxn)
			maxn = n;
		ms = spawn_true_ms();
		if (ms > slowest)
			slowest = ms;
		sleep_ms(50);
	}
	print_message("# bomb: %d processes at most, slowest agent fork "
		      "%lld ms\n", maxn, (long long)slowest);
	assert_true(maxn <= 32);
	assert_true(slowest < 1000);

	t0 = now_ms();
	assert_int_equal(0, call_end(c, &st, &err));
	print_message("# end took %lld ms, killed %llu, pids peak %llu\n",
		      (long long)(now_ms() - t0),
		      (unsigned long long)st.killed,
		      (unsigned long long)st.pids_peak);
	assert_true(now_ms() - t0 < 5000);
	assert_true(st.pids_limited);
	assert_int_equal(32, st.pids_max);
	if (st.pids_peak)
		assert_true(st.pids_peak <= 32);
	assert_true(st.killed >= 2);
	status = wait_for(pid, 5000);
	assert_true(status != -1);
	env_close(&e);
}

static void test_memory_hog_is_oom_killed(void **state)
{
	char id[64];
	struct cw_cgroup_stats st;
	struct cw_cgroup_call *c;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	struct env e;
	int status;
	pid_t pid;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	if (json_is_null(json_object_get(e.desc, "memory"))) {
		print_message("# no memory controller in any hierarchy\n");
		env_close(&e);
		skip();
	}
	sandbox_limits(&sb, 32, 64);
	c = call_new(e.r, name_of("t-memhog", id, sizeof(id)), &sb,
			       &err);
	assert_non_null(c);
	/* tail keeps the whole newline-free "line" in memory. */
	pid = launch(c, "/bin/sh", "head -c 200M /dev/zero | tail");
	assert_true(pid > 0);
	status = wait_for(pid, 30000);
	assert_true(status != -1);
	assert_int_equal(0, call_end(c, &st, &err));
	print_message("# hog: exit status 0x%x, peak %llu bytes, oom kills "
		      "%llu\n", status, (unsigned long long)st.memory_peak,
		      (unsigned long long)st.oom_kills);
	assert_true(st.memory_limited);
	assert_true(st.oom_kills >= 1);
	assert_int_equal(32 * MiB, st.memory_max);
	assert_true(st.memory_peak >= 24 * MiB);
	assert_true(st.memory_peak <= 32 * MiB + 1 * MiB);
	env_close(&e);
}

/* The pids of a call, read from its cgroup.procs (v2 or v1 pids). */
static int call_pids(const struct env *e, const char *id, pid_t *out,
		     int max)
{
	const char *calls = calls_of(e, "v2") ? calls_of(e, "v2") :
						calls_of(e, "pids");
	char *f = pathf("%s/%s/cgroup.procs", calls, id);
	char *text = slurp(f), *line, *save = NULL;
	int n = 0;

	free(f);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save))
		out[n++] = (pid_t)atoi(line);
	free(text);
	return n;
}

static void test_double_fork_is_killed(void **state)
{
	char id[64];
	struct cw_cgroup_stats st;
	struct cw_cgroup_call *c;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	pid_t pid, left[16];
	struct env e;
	int status, n, i;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	sandbox_limits(&sb, 64, 16);
	c = call_new(e.r, name_of("t-daemon", id, sizeof(id)), &sb,
			       &err);
	assert_non_null(c);
	pid = launch(c, "/bin/sh", "(setsid sleep 1000 &) ; exit 0");
	assert_true(pid > 0);
	status = wait_for(pid, 5000);
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	/* The shell is gone; its daemon, in a new session, is not. */
	sleep_ms(100);
	n = call_pids(&e, id, left, 16);
	assert_true(n >= 1);
	assert_int_equal(n, cw_cgroup_call_nprocs(c));
	for (i = 0; i < n; i++)
		track_pid(left[i]);	/* orphans, now children of this test */
	for (i = 0; i < n; i++) {
		assert_true(alive(left[i]));
		assert_int_not_equal(getpgid(left[i]), pid);
	}
	assert_int_equal(0, call_end(c, &st, &err));
	assert_int_equal(n, st.killed);
	for (i = 0; i < n; i++) {
		/* Reparented to this subreaper: it died of SIGKILL. */
		status = wait_for(left[i], 5000);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(SIGKILL, WTERMSIG(status));
		assert_false(alive(left[i]));
	}
	env_close(&e);
}

/*
 * A crashed earlier run: a child agent opens, starts a command in a call
 * and dies without ending it. The next open kills and removes the call.
 */
static void test_stale_call_of_crashed_run_is_removed(void **state)
{
	char idbuf[64];
	const char *id = name_of("stale-crashed", idbuf, sizeof(idbuf));
	struct cw_cgroup_root *r;
	struct cw_cgroup_call *c;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	char *dir = NULL;
	pid_t agent, sleeper = 0;
	struct env e;
	int p[2], status;

	(void)state;
	if (skip_reason())
		skip();
	assert_int_equal(0, pipe2(p, O_CLOEXEC));
	agent = fork();
	assert_true(agent >= 0);
	if (agent == 0) {
		r = cw_cgroup_open(&err);
		if (!r)
			_exit(2);
		sandbox_limits(&sb, 64, 16);
		c = cw_cgroup_call_new(r, id, &sb, &err);
		if (!c)
			_exit(3);
		sleeper = launch(c, "/bin/sh", "exec sleep 1000");
		if (sleeper <= 0 ||
		    write(p[1], &sleeper, sizeof(sleeper)) != sizeof(sleeper))
			_exit(4);
		sleep_ms(100);
		_exit(0);	/* crash: no end, no close */
	}
	track_pid(agent);
	close(p[1]);
	assert_int_equal(sizeof(sleeper), read(p[0], &sleeper, sizeof(sleeper)));
	close(p[0]);
	status = wait_for(agent, 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	/* The sleeper, orphaned, is now a child of this subreaper. */
	track_pid(sleeper);

	/* Another agent sharing these cgroups may remove the stale call
	 * first; either way an open removed it, and killed the sleeper. */
	env_open(&e);
	print_message("# stale calls removed by this open: %lld\n",
		      (long long)json_integer_value(
			      json_object_get(e.desc, "stale_removed")));
	dir = call_dir(&e, "pids", id);
	if (dir)
		assert_true(gone_within(dir, 8000));
	free(dir);
	status = wait_for(sleeper, 5000);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(SIGKILL, WTERMSIG(status));
	env_close(&e);
}

/* Writes pid into <dir>/cgroup.procs. */
static void join(const char *dir, pid_t pid)
{
	char *f = pathf("%s/cgroup.procs", dir);
	FILE *fp = fopen(f, "we");

	assert_non_null(fp);
	fprintf(fp, "%d\n", (int)pid);
	assert_int_equal(0, fclose(fp));
	free(f);
}

/*
 * A stale directory made by hand, locked as an agent would lock it until
 * that agent "crashes", with a process inside; a second open, while the
 * first root is still open, removes it. The process is put only into the
 * v1 cgroups when there are any, so that the v1 kill loop is what kills
 * it.
 */
static void test_stale_dir_made_by_hand_is_removed(void **state)
{
	const char *keys[] = { "v2", "memory", "pids" };
	int fds[3] = { -1, -1, -1 };
	char *dirs[3] = { NULL };
	struct cw_cgroup_root *r2;
	struct cw_error err = { 0 };
	bool any_v1 = false;
	struct env e;
	json_t *d2;
	int status;
	size_t i;
	pid_t pid;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	for (i = 0; i < 3; i++) {
		if (!calls_of(&e, keys[i]))
			continue;
		dirs[i] = pathf("%s/stale-x%s", calls_of(&e, keys[i]), tag);
		assert_int_equal(0, mkdir(dirs[i], 0755));
		reg.dir[reg.ndir++] = strdup(dirs[i]);
		fds[i] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fds[i] >= 0);
		assert_int_equal(0, flock(fds[i], LOCK_EX | LOCK_NB));
		if (i > 0)
			any_v1 = true;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	track_pid(pid);
	for (i = any_v1 ? 1 : 0; i < 3; i++)
		if (dirs[i])
			join(dirs[i], pid);
	sleep_ms(50);
	assert_true(alive(pid));
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);	/* the crash */

	r2 = root_open(&err);
	assert_non_null(r2);
	d2 = cw_cgroup_describe(r2);
	print_message("# stale calls removed by the second open: %lld\n",
		      (long long)json_integer_value(
			      json_object_get(d2, "stale_removed")));
	json_decref(d2);
	for (i = 0; i < 3; i++)
		if (dirs[i])
			assert_true(gone_within(dirs[i], 8000));
	status = wait_for(pid, 5000);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(SIGKILL, WTERMSIG(status));
	/* Not the last agent: r2 leaves calls/ to the first root. */
	root_close(r2);
	if (calls_of(&e, "v2"))
		assert_true(exists(calls_of(&e, "v2")));
	for (i = 0; i < 3; i++)
		free(dirs[i]);
	env_close(&e);
}

/*
 * Two agents in one cgroup: the second open leaves the first agent's
 * running call alone, and only the last close removes calls/.
 */
static void test_live_call_of_other_agent_survives(void **state)
{
	char idbuf[64];
	const char *id = name_of("live-other", idbuf, sizeof(idbuf));
	struct cw_cgroup_stats st;
	struct cw_cgroup_root *r;
	struct cw_cgroup_call *c;
	struct cw_error err = { 0 };
	struct cw_sandbox sb;
	int ready[2], go[2], status, rc;
	pid_t agent, sleeper = 0;
	char *dir, byte = 0;
	struct env e;

	(void)state;
	if (skip_reason())
		skip();
	assert_int_equal(0, pipe2(ready, O_CLOEXEC));
	assert_int_equal(0, pipe2(go, O_CLOEXEC));
	agent = fork();
	assert_true(agent >= 0);
	if (agent == 0) {
		close(ready[0]);
		close(go[1]);
		r = cw_cgroup_open(&err);
		if (!r)
			_exit(2);
		sandbox_limits(&sb, 64, 16);
		c = cw_cgroup_call_new(r, id, &sb, &err);
		if (!c)
			_exit(3);
		sleeper = launch(c, "/bin/sh", "exec sleep 1000");
		if (sleeper <= 0 ||
		    write(ready[1], &sleeper, sizeof(sleeper)) !=
			    sizeof(sleeper))
			_exit(4);
		if (read(go[0], &byte, 1) != 1)
			_exit(5);
		rc = call_end(c, &st, &err);
		if (rc || st.killed != 1)
			_exit(6);
		if (waitpid(sleeper, &status, 0) != sleeper ||
		    !WIFSIGNALED(status))
			_exit(7);
		cw_cgroup_close(r);
		_exit(0);
	}
	track_pid(agent);
	close(ready[1]);
	close(go[0]);
	assert_int_equal(sizeof(sleeper),
			 read(ready[0], &sleeper, sizeof(sleeper)));
	close(ready[0]);

	env_open(&e);
	dir = call_dir(&e, "pids", id);
	if (dir)
		assert_true(exists(dir));
	free(dir);
	assert_true(alive(sleeper));

	/* The other agent ends its call and closes; calls/ stays ours. */
	assert_int_equal(1, write(go[1], "g", 1));
	close(go[1]);
	status = wait_for(agent, 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	if (cw_cgroup_calls_path(e.r))
		assert_true(exists(cw_cgroup_calls_path(e.r)));
	env_close(&e);
}

/* pids.max of call id, or NULL when no hierarchy enforces pids. */
static char *pids_max_of(const struct env *e, const char *id)
{
	char *dir = call_dir(e, "pids", id), *f, *text;

	if (!dir)
		return NULL;
	f = pathf("%s/pids.max", dir);
	text = slurp(f);
	free(f);
	free(dir);
	return text;
}

/* Every directory of call id, in every hierarchy: exist or not. */
static void assert_dirs(const struct env *e, const char *id, bool want)
{
	const char *keys[] = { "v2", "memory", "pids" };
	const char *calls;
	char *dir;
	size_t i;

	for (i = 0; i < 3; i++) {
		calls = calls_of(e, keys[i]);
		if (!calls)
			continue;
		dir = pathf("%s/%s", calls, id);
		if (exists(dir) != want)
			print_message("# %s: exists %d\n", dir, exists(dir));
		assert_int_equal(want, exists(dir));
		free(dir);
	}
}

/*
 * The pool makes a call cgroup ahead with the sandbox's limits, hands it
 * to one call, and removes it after the call was stopped; a cgroup made
 * for other limits is not handed out.
 */
static void test_pool_prepares_and_removes(void **state)
{
	struct cw_cgroup_pool_stats ps;
	struct cw_cgroup_stats st;
	struct cw_cgroup_pool *p;
	struct cw_cgroup_call *c, *c2;
	struct cw_error err = { 0 };
	struct cw_sandbox sb, sb2;
	char id[64], *text;
	pid_t pid, left[16];
	struct env e;
	int status, n, i;

	(void)state;
	if (skip_reason())
		skip();
	env_open(&e);
	sandbox_limits(&sb, 64, 16);
	p = cw_cgroup_pool_open(e.r, &sb);
	assert_non_null(p);
	cw_cgroup_pool_settle(p, &ps);
	assert_int_equal(1, ps.prepared);
	assert_int_equal(0, ps.failed);

	c = cw_cgroup_pool_take(p, &sb);
	assert_non_null(c);
	snprintf(id, sizeof(id), "%s", cw_cgroup_call_name(c));
	assert_int_equal(0, strncmp(id, "inv-", 4));
	assert_dirs(&e, id, true);
	text = pids_max_of(&e, id);
	if (text)
		assert_string_equal("16\n", text);
	free(text);

	/* It contains like any call cgroup: stop kills a double fork. */
	pid = launch(c, "/bin/sh", "(setsid sleep 1000 &) ; exit 0");
	assert_true(pid > 0);
	status = wait_for(pid, 5000);
	assert_true(WIFEXITED(status));
	sleep_ms(100);
	n = call_pids(&e, id, left, 16);
	assert_true(n >= 1);
	for (i = 0; i < n; i++)
		track_pid(left[i]);
	assert_int_equal(0, cw_cgroup_call_stop(c, &st, &err));
	assert_int_equal(n, st.killed);
	for (i = 0; i < n; i++) {
		status = wait_for(left[i], 5000);
		assert_true(WIFSIGNALED(status));
	}
	/* Stopped, not removed: removal is the pool's, later. */
	assert_dirs(&e, id, true);
	assert_false(cw_cgroup_call_fits(c, &sb));
	cw_cgroup_pool_retire(p, c, false);
	cw_cgroup_pool_settle(p, &ps);
	assert_dirs(&e, id, false);
	assert_int_equal(1, ps.removed);
	assert_int_equal(2, ps.prepared);	/* the next one is ready */

	/* Other limits: the ready one does not fit and is not handed out. */
	sandbox_limits(&sb2, 32, 8);
	assert_null(cw_cgroup_pool_take(p, &sb2));
	cw_cgroup_pool_settle(p, &ps);
	assert_int_equal(1, ps.discarded);
	assert_int_equal(3, ps.prepared);
	c2 = cw_cgroup_pool_take(p, &sb2);
	assert_non_null(c2);
	text = pids_max_of(&e, cw_cgroup_call_name(c2));
	if (text)
		assert_string_equal("8\n", text);
	free(text);
	cw_cgroup_pool_retire(p, c2, false);

	/* Close removes what waits and what is ready. */
	cw_cgroup_pool_close(p);
	env_close(&e);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, teardown)
	const struct CMUnitTest tests[] = {
		T(test_open_describes_hierarchies),
		T(test_call_limits_and_placement),
		T(test_fork_bomb_is_contained),
		T(test_memory_hog_is_oom_killed),
		T(test_double_fork_is_killed),
		T(test_stale_call_of_crashed_run_is_removed),
		T(test_stale_dir_made_by_hand_is_removed),
		T(test_live_call_of_other_agent_survives),
		T(test_pool_prepares_and_removes),
	};
#undef T

	snprintf(tag, sizeof(tag), "-%d", (int)getpid());
	/* Orphans of the commands come here, to be reaped and checked. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
