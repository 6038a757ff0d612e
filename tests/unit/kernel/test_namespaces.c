// SPDX-License-Identifier: Apache-2.0
/*
 * namespaces: which trees a call's mount namespace re-mounts. Each
 * filesystem.write tree no exec tree holds becomes noexec, and each exec
 * tree inside one of those gets exec back; "/" holds everything; a path
 * is beneath a tree only at a component boundary. A holder, started by
 * the caller and by the forker, mounts what its plan says in its own
 * namespace only, masks sockets asked for later, and is gone once
 * stopped; what the calls see is tested end to end
 * (tests/e2e/namespaces.bats).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/namespaces.h"
#include "lib/util.h"
#include "unit.h"

static struct cw_strv strv(char **v)
{
	struct cw_strv s = { .v = v, .n = 0 };

	while (v[s.n])
		s.n++;
	return s;
}

static void plan(char **write, char **exec, struct cw_ns_mounts *m)
{
	struct cw_sandbox sb;
	struct cw_error err;

	memset(&sb, 0, sizeof(sb));
	sb.filesystem.write = strv(write);
	sb.filesystem.exec = strv(exec);
	assert_int_equal(0, cw_ns_mounts_plan(&sb, m, &err));
}

static void test_write_outside_exec(void **state)
{
	char *write[] = { "/home/user", "/tmp", NULL };
	char *exec[] = { "/usr", "/bin", NULL };
	struct cw_ns_mounts m;

	(void)state;
	plan(write, exec, &m);
	assert_int_equal(2, m.nnoexec);
	assert_string_equal("/home/user", m.noexec[0]);
	assert_string_equal("/tmp", m.noexec[1]);
	assert_int_equal(0, m.nexec);
	assert_false(m.shm);
	cw_ns_mounts_free(&m);
}

static void test_shm_of_its_own(void **state)
{
	char *write[] = { "/home/user", "/dev/shm", NULL };
	char *exec[] = { "/usr", "/home/user", NULL };
	struct cw_ns_mounts m;

	(void)state;
	/* listed as writable: a tmpfs of the call's own, and noexec */
	plan(write, exec, &m);
	assert_true(m.shm);
	assert_int_equal(1, m.nnoexec);
	assert_string_equal("/dev/shm", m.noexec[0]);
	cw_ns_mounts_free(&m);
}

static void test_exec_inside_write(void **state)
{
	char *write[] = { "/home/user", "/tmp", NULL };
	char *exec[] = { "/usr", "/home/user/bin", "/tmpfoo", NULL };
	struct cw_ns_mounts m;

	(void)state;
	plan(write, exec, &m);
	assert_int_equal(2, m.nnoexec);
	/* /tmpfoo is not beneath /tmp: no exec back for it */
	assert_int_equal(1, m.nexec);
	assert_string_equal("/home/user/bin", m.exec[0]);
	cw_ns_mounts_free(&m);
}

static void test_write_inside_exec(void **state)
{
	char *write[] = { "/opt/app/cache", "/srv", "/var/tmp", NULL };
	char *exec[] = { "/opt/app", "/srv/", NULL };
	char *root[] = { "/", NULL };
	struct cw_ns_mounts m;

	(void)state;
	/* held by an exec tree (a trailing slash too): runs as before */
	plan(write, exec, &m);
	assert_int_equal(1, m.nnoexec);
	assert_string_equal("/var/tmp", m.noexec[0]);
	assert_int_equal(0, m.nexec);
	cw_ns_mounts_free(&m);
	/* exec "/" holds every tree */
	plan(write, root, &m);
	assert_int_equal(0, m.nnoexec);
	cw_ns_mounts_free(&m);
}

static void test_no_write(void **state)
{
	char *none[] = { NULL };
	char *exec[] = { "/usr", NULL };
	struct cw_ns_mounts m;

	(void)state;
	plan(none, exec, &m);
	assert_int_equal(0, m.nnoexec);
	assert_int_equal(0, m.nexec);
	cw_ns_mounts_free(&m);
}

/* The holder's mount namespace as /proc/PID/mountinfo shows it: whether
 * a mount point is there, and with which options. */
static bool mounted(pid_t pid, const char *point, const char *opt)
{
	char path[64], line[4096], mp[4096], opts[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mp, opts) == 2 &&
		    !strcmp(mp, point) && (!opt || strstr(opts, opt)))
			found = true;
	fclose(f);
	return found;
}

static int unix_listener(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_equal(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	assert_int_equal(0, listen(fd, 1));
	return fd;
}

/* A child that joins userns maps every uid to itself. */
static bool same_map(int userns)
{
	char buf[128] = "";
	unsigned long in, out, count;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(0, pipe(p));
	pid = fork();
	if (pid == 0) {
		int fd;

		if (setns(userns, CLONE_NEWUSER) < 0)
			_exit(1);
		fd = open("/proc/self/uid_map", O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		_exit(n > 0 && write(p[1], buf, (size_t)n) == n ? 0 : 2);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_int_equal(0, status);
	buf[n > 0 ? n : 0] = '\0';
	return sscanf(buf, "%lu %lu %lu", &in, &out, &count) == 3 && in == 0 &&
	       out == 0 && count == 4294967295UL;
}

/* A holder, started by the caller and through the forker: its tree
 * noexec, its socket masked (also one asked for later), its own /proc;
 * stopped, it is gone and reaped, and the sandbox's mounts are as before. */
static void holder_round(struct cw_ns_forker *f)
{
	char dir[] = "/tmp/cw-ns-test.XXXXXX", tree[64], sock[64], late[64];
	struct cw_ns_mounts m;
	struct cw_ns_holder h;
	struct cw_error err;
	int s1, s2, i;
	uid_t owner;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(tree, sizeof(tree), "%s/w", dir);
	snprintf(sock, sizeof(sock), "%s/svc.sock", dir);
	snprintf(late, sizeof(late), "%s/late.sock", dir);
	assert_int_equal(0, mkdir(tree, 0755));
	s1 = unix_listener(sock);
	memset(&m, 0, sizeof(m));
	m.noexec = calloc(1, sizeof(char *));
	assert_non_null(m.noexec);
	m.noexec[0] = strdup(tree);
	m.nnoexec = 1;
	assert_int_equal(0, cw_ns_mounts_mask(&m, sock));
	m.userns = true;
	assert_int_equal(0, cw_ns_holder_start(f, &m, &h, &err));
	assert_true(h.proc);
	/* a user namespace owned by a transient uid, not the agent's */
	assert_true(h.userns >= 0);
	assert_true(h.owner >= CW_NS_OWNER_BASE &&
		    h.owner < CW_NS_OWNER_BASE + CW_NS_OWNER_COUNT);
	assert_int_equal(0, ioctl(h.userns, NS_GET_OWNER_UID, &owner));
	assert_int_equal(h.owner, owner);
	assert_true(same_map(h.userns));
	assert_int_equal(1, h.masked);
	assert_true(mounted(h.pid, tree, "noexec"));
	assert_true(mounted(h.pid, sock, NULL));
	assert_true(mounted(h.pid, "/proc", "nosuid"));
	/* one more, after the holder started; a path with no socket is 1 */
	s2 = unix_listener(late);
	assert_int_equal(0, cw_ns_holder_mask(&h, late));
	assert_int_equal(2, h.masked);
	assert_true(mounted(h.pid, late, NULL));
	assert_int_equal(1, cw_ns_holder_mask(&h, tree));
	/* none of it in the sandbox's namespace */
	assert_false(mounted(getpid(), tree, NULL));
	assert_false(mounted(getpid(), sock, NULL));
	pid = h.pid;
	cw_ns_holder_stop(&h);
	if (!f) {
		errno = 0;
		assert_int_equal(-1, waitpid(pid, NULL, WNOHANG));
		assert_int_equal(ECHILD, errno);
	}
	/* gone: the forker reaps its own soon after */
	for (i = 0; i < 100 && kill(pid, 0) == 0; i++)
		usleep(10000);
	assert_int_equal(-1, kill(pid, 0));
	cw_ns_mounts_free(&m);
	close(s1);
	close(s2);
	unlink(sock);
	unlink(late);
	rmdir(tree);
	rmdir(dir);
}

static void test_holder(void **state)
{
	struct cw_ns_forker *f;
	struct cw_error err;

	(void)state;
	if (geteuid() != 0)
		skip();
	holder_round(NULL);
	f = cw_ns_forker_start(&err);
	assert_non_null(f);
	holder_round(f);
	cw_ns_forker_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_outside_exec),
		cmocka_unit_test(test_shm_of_its_own),
		cmocka_unit_test(test_exec_inside_write),
		cmocka_unit_test(test_write_inside_exec),
		cmocka_unit_test(test_no_write),
		cmocka_unit_test(test_holder),
	};

	return cmocka_run_group_tests_name("namespaces", tests, NULL, NULL);
}
