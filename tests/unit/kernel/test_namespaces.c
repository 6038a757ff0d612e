// SPDX-License-Identifier: Apache-2.0
/*
 * namespaces: which trees a call's mount namespace re-mounts. Each
 * filesystem.write tree no exec tree holds becomes noexec, and each exec
 * tree inside one of those gets exec back; "/" holds everything; a path
 * is beneath a tree only at a component boundary. The mounts themselves
 * are tested end to end (tests/e2e/namespaces.bats).
 */
#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_outside_exec),
		cmocka_unit_test(test_exec_inside_write),
		cmocka_unit_test(test_write_inside_exec),
		cmocka_unit_test(test_no_write),
	};

	return cmocka_run_group_tests_name("namespaces", tests, NULL, NULL);
}
