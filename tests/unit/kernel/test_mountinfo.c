// SPDX-License-Identifier: Apache-2.0
/*
 * mountinfo: lines of /proc/self/mountinfo and /proc/<pid>/cgroup split
 * into their fields (escapes undone, optional fields passed over, broken
 * lines refused), list items matched whole, and cw_mountinfo_find against
 * this machine's own table.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/mountinfo.h"
#include "lib/util.h"
#include "unit.h"

static void test_parse(void **state)
{
	char line[] = "36 35 98:0 /mnt\\0401 /mnt/a\\040b rw,noatime "
		      "master:1 shared:2 - ext3 /dev/root rw,errors=continue\n";
	struct cw_mount m;

	(void)state;
	assert_true(cw_mountinfo_parse(line, &m));
	assert_string_equal("/mnt 1", m.root);
	assert_string_equal("/mnt/a b", m.point);
	assert_string_equal("ext3", m.fstype);
	assert_string_equal("/dev/root", m.source);
	assert_string_equal("rw,errors=continue", m.super);
}

static void test_parse_edges(void **state)
{
	char plain[] = "25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
	char nosuper[] = "25 1 0:22 / /x rw - tmpfs none";
	char nosource[] = "25 1 0:22 / /x rw - tmpfs";
	char nodash[] = "25 1 0:22 / /x rw shared:1 tmpfs none rw";
	char tooshort[] = "25 1 0:22 / /x";
	char backslash[] = "1 1 0:1 / /a\\134b\\9 rw - tmpfs none rw";
	struct cw_mount m;

	(void)state;
	assert_true(cw_mountinfo_parse(plain, &m));
	assert_string_equal("/sys/fs/cgroup", m.point);
	assert_string_equal("cgroup2", m.fstype);
	assert_true(cw_mountinfo_parse(nosuper, &m));
	assert_string_equal("", m.super);
	assert_false(cw_mountinfo_parse(nosource, &m));
	assert_false(cw_mountinfo_parse(nodash, &m));
	assert_false(cw_mountinfo_parse(tooshort, &m));
	/* \134 is a backslash; "\9" is no escape and stays. */
	assert_true(cw_mountinfo_parse(backslash, &m));
	assert_string_equal("/a\\b\\9", m.point);
}

static void test_cgroup_line(void **state)
{
	char v2[] = "0::/user.slice/x.scope\n";
	char v1[] = "4:memory,pids:/calls";
	char named[] = "1:name=systemd:/";
	char broken[] = "0:/no-second-colon";
	struct cw_cgroup_line c;

	(void)state;
	assert_true(cw_mountinfo_cgroup_line(v2, &c));
	assert_string_equal("0", c.id);
	assert_string_equal("", c.controllers);
	assert_string_equal("/user.slice/x.scope", c.path);
	assert_true(cw_mountinfo_cgroup_is_v2(&c));
	assert_true(cw_mountinfo_cgroup_line(v1, &c));
	assert_string_equal("memory,pids", c.controllers);
	assert_string_equal("/calls", c.path);
	assert_false(cw_mountinfo_cgroup_is_v2(&c));
	assert_true(cw_mountinfo_cgroup_line(named, &c));
	assert_false(cw_mountinfo_cgroup_is_v2(&c));
	assert_false(cw_mountinfo_cgroup_line(broken, &c));
}

static void test_has(void **state)
{
	(void)state;
	assert_true(cw_mountinfo_has("rw,memory", "memory", ","));
	assert_true(cw_mountinfo_has("memory", "memory", ","));
	assert_true(cw_mountinfo_has(",,pids,", "pids", ","));
	assert_false(cw_mountinfo_has("rw,memory_recursiveprot", "memory",
				      ","));
	assert_false(cw_mountinfo_has("xpids,pid", "pids", ","));
	assert_false(cw_mountinfo_has("", "pids", ","));
	assert_true(cw_mountinfo_has("cpu io  memory", "io", " "));
}

/* Every line of the real table parses, and find agrees with a walk. */
static void test_find_here(void **state)
{
	char dir[PATH_MAX], point[PATH_MAX];
	const struct cw_mount *m;
	struct cw_mountinfo *mi;
	char proc[PATH_MAX] = "";
	int n = 0;

	(void)state;
	mi = cw_mountinfo_open();
	assert_non_null(mi);
	while ((m = cw_mountinfo_next(mi))) {
		if (!proc[0] && !strcmp(m->fstype, "proc"))
			snprintf(proc, sizeof(proc), "%s", m->point);
		n++;
	}
	cw_mountinfo_close(mi);
	assert_true(n > 0);
	assert_true(proc[0] != '\0');

	assert_int_equal(0, cw_mountinfo_find("proc", NULL, NULL, dir,
					      sizeof(dir), point,
					      sizeof(point)));
	assert_string_equal(proc, dir);
	assert_string_equal(proc, point);
	assert_int_equal(-ENOENT, cw_mountinfo_find("no-such-fs", NULL, NULL,
						    dir, sizeof(dir), NULL,
						    0));
	assert_int_equal(-ENOENT, cw_mountinfo_find("proc", "no-such-option",
						    NULL, dir, sizeof(dir),
						    NULL, 0));
}

/* A table of our own: which mount is chosen, and the directory given. */
static const char table[] =
	"20 1 0:5 / /proc rw - proc proc rw\n"
	"21 1 0:6 /sub /mnt/v2\\040x rw - cgroup2 cgroup2 rw\n"
	"22 1 0:7 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
	"23 1 0:8 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	"24 1 0:9 /a /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	"25 1 0:10 / / rw - cgroup cgroup rw,pids\n";

static int find(const char *path, const char *fstype, const char *opt,
		const char *cgpath, char *dir, size_t len)
{
	struct cw_mountinfo *mi = cw_mountinfo_open_path(path);
	int ret;

	assert_non_null(mi);
	ret = cw_mountinfo_find_in(mi, fstype, opt, cgpath, dir, len, NULL, 0);
	cw_mountinfo_close(mi);
	return ret;
}

static void test_find_table(void **state)
{
	char path[] = "/tmp/cw-mountinfo-XXXXXX", dir[PATH_MAX];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, table, strlen(table)));
	close(fd);

	/* Inside the mounted part /sub of the first cgroup2 mount. */
	assert_int_equal(0, find(path, "cgroup2", NULL, "/sub/calls", dir,
				 sizeof(dir)));
	assert_string_equal("/mnt/v2 x/calls", dir);
	assert_int_equal(0, find(path, "cgroup2", NULL, "/sub", dir,
				 sizeof(dir)));
	assert_string_equal("/mnt/v2 x", dir);
	/* "/subway" is not below "/sub": the next mount (root /) has it. */
	assert_int_equal(0, find(path, "cgroup2", NULL, "/subway", dir,
				 sizeof(dir)));
	assert_string_equal("/sys/fs/cgroup/unified/subway", dir);
	assert_int_equal(0, find(path, "cgroup2", NULL, "/", dir,
				 sizeof(dir)));
	assert_string_equal("/sys/fs/cgroup/unified", dir);
	/* v1 by controller; outside the mounted part is -EXDEV. */
	assert_int_equal(0, find(path, "cgroup", "memory", "/a/b", dir,
				 sizeof(dir)));
	assert_string_equal("/sys/fs/cgroup/memory/b", dir);
	assert_int_equal(-EXDEV, find(path, "cgroup", "memory", "/b", dir,
				      sizeof(dir)));
	assert_int_equal(-ENOENT, find(path, "cgroup", "io", "/", dir,
				       sizeof(dir)));
	/* A hierarchy mounted on / gives /x, not //x. */
	assert_int_equal(0, find(path, "cgroup", "pids", "/x", dir,
				 sizeof(dir)));
	assert_string_equal("/x", dir);
	/* Without a cgroup path: the mount point. */
	assert_int_equal(0, find(path, "proc", NULL, NULL, dir, sizeof(dir)));
	assert_string_equal("/proc", dir);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_edges),
		cmocka_unit_test(test_cgroup_line),
		cmocka_unit_test(test_has),
		cmocka_unit_test(test_find_here),
		cmocka_unit_test(test_find_table),
	};

	return cmocka_run_group_tests_name("mountinfo", tests, NULL, NULL);
}
