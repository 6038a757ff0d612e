// SPDX-License-Identifier: Apache-2.0
/*
 * Size-based rotation (userspace/audit/rotate.c): the chain across the
 * files, forked writers rotating one log, and a torn tail before a
 * rotation.
 */
#include "audit_test.h"

static void test_rotation_keeps_chain(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	size_t nfiles, first[32], f;
	struct cw_error err;
	struct cw_audit *a;
	struct lines all;
	struct stat st;
	uint64_t n = 0;
	char *r1;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	cw_audit_set_max_bytes(a, ROT_MAX);
	write_padded(a, 0, 20);
	cw_audit_close(a);
	/* A new handle (an agent restart) continues the same set. */
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	cw_audit_set_max_bytes(a, ROT_MAX);
	write_padded(a, 20, 20);
	cw_audit_close(a);

	r1 = rot_name(path, 1);
	assert_int_equal(0, stat(r1, &st));
	assert_int_equal(0600, st.st_mode & 0777);
	read_set(path, &all, &nfiles, first);
	assert_true(nfiles >= 4);
	assert_int_equal(40, all.n);
	/* One chain through every file: seq 1..40, each prev the line above. */
	check_chain(&all, 0, 1, "");
	for (f = 0; f < nfiles; f++) {
		json_t *o = parse_line(&all, first[f]);
		json_t *rf = json_object_get(o, "rotated_from");
		char **files;
		size_t nf;

		assert_int_equal(0, cw_audit_files(path, &files, &nf, &err));
		if (f == 0) {
			assert_null(rf);
		} else {
			assert_true(json_is_string(rf));
			assert_string_equal(strrchr(files[f - 1], '/') + 1,
					    json_string_value(rf));
		}
		/* No file passes the limit. */
		assert_int_equal(0, stat(files[f], &st));
		assert_true(st.st_size <= ROT_MAX);
		cw_audit_files_free(files, nf);
		json_decref(o);
	}
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(40, n);
	/* A rotated file names the set up to itself. */
	assert_int_equal(0, cw_audit_verify(r1, &n, &err));
	assert_int_equal(first[1], n);
	lines_free(&all);
	free(r1);
	free(path);
}

/* Writers in other processes follow a rotation made by one of them. */
static void test_rotation_with_forked_writers(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	size_t nfiles, first[32];
	struct cw_error err;
	struct lines all;
	uint64_t n = 0;

	/* Only half of them rotate; all must follow. */
	run_writers(path, 50, 8192);
	read_set(path, &all, &nfiles, first);
	assert_true(nfiles >= 2);
	assert_int_equal(WRITERS * 50, all.n);
	check_chain(&all, 0, 1, "");
	if (cw_audit_verify(path, &n, &err))
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	assert_int_equal(WRITERS * 50, n);
	lines_free(&all);
	free(path);
}

/* A torn tail is mended before rotating, and the chain holds. */
static void test_rotation_after_torn_tail(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	uint64_t n = 0;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_padded(a, 0, 8);
	append_raw(path, "{\"ts\":\"2026-");
	cw_audit_set_max_bytes(a, ROT_MAX);
	write_padded(a, 8, 10);
	cw_audit_close(a);
	/* Only the torn line is reported, with where the chain went on. */
	assert_int_equal(-EBADMSG, cw_audit_verify(path, &n, &err));
	assert_non_null(strstr(err.source, "audit.jsonl.1"));
	assert_int_equal(9, err.line);
	assert_non_null(strstr(err.text, "torn"));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_rotation_keeps_chain),
		DIR_TEST(test_rotation_with_forked_writers),
		DIR_TEST(test_rotation_after_torn_tail),
	};
	return cmocka_run_group_tests_name("audit_rotate", tests, NULL, NULL);
}
