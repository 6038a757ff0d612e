// SPDX-License-Identifier: Apache-2.0
/*
 * Size-based rotation (userspace/audit/rotate.c): the chain across the
 * files, forked writers rotating one log, a torn tail before a rotation,
 * and retention removing the oldest files with a record of it.
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

/* The log's files together, in bytes. */
static uint64_t set_bytes(const char *path, size_t *nfiles)
{
	struct cw_error err;
	uint64_t total = 0;
	struct stat st;
	char **files;
	size_t n, i;

	assert_int_equal(0, cw_audit_files(path, &files, &n, &err));
	for (i = 0; i < n; i++) {
		assert_int_equal(0, stat(files[i], &st));
		total += (uint64_t)st.st_size;
	}
	cw_audit_files_free(files, n);
	*nfiles = n;
	return total;
}

/* The pruned records of the set, and each file name they removed, once. */
static size_t check_pruned(const struct lines *all)
{
	char seen[64][NAME_MAX + 1];
	size_t i, j, k, nseen = 0, npruned = 0;

	for (i = 0; i < all->n; i++) {
		json_t *o = parse_line(all, i), *rm;

		if (strcmp(json_string_value(json_object_get(o, "type")),
			   "pruned")) {
			json_decref(o);
			continue;
		}
		npruned++;
		assert_null(json_object_get(o, "invocation"));
		rm = json_object_get(o, "removed");
		assert_true(json_array_size(rm) >= 1);
		assert_true(json_integer_value(json_object_get(o, "through_seq")) >= 1);
		for (j = 0; j < json_array_size(rm); j++) {
			const char *name = json_string_value(json_array_get(rm, j));

			for (k = 0; k < nseen; k++)
				if (!strcmp(seen[k], name))
					fail_msg("%s removed twice", name);
			assert_true(nseen < 64);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
		}
		json_decref(o);
	}
	return npruned;
}

/*
 * Retention: past max_total the oldest files go, each removal a pruned
 * record in the chain; what remains verifies from where it starts, an
 * anchor at the last record removed still checks, an older one is said
 * to be out of reach, and a file taken away without a record is not
 * mistaken for retention.
 */
static void test_retention_bounds_and_verifies(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_audit_anchor an = { 0 };
	struct cw_audit_verified v;
	struct cw_audit *a, *b;
	size_t nfiles, first[32];
	struct cw_error err;
	struct lines all;
	char *r1, *oldest;
	json_t *o;
	int i;

	/* Two handles sharing the log, as two agents would. */
	a = cw_audit_open(path, &err);
	b = cw_audit_open(path, &err);
	assert_non_null(a);
	assert_non_null(b);
	cw_audit_set_max_bytes(a, ROT_MAX);
	cw_audit_set_max_bytes(b, ROT_MAX);
	cw_audit_set_max_total(a, 3 * ROT_MAX);
	cw_audit_set_max_total(b, 3 * ROT_MAX);
	for (i = 0; i < 60; i++)
		write_padded(i % 2 ? b : a, i, 1);
	cw_audit_close(a);
	cw_audit_close(b);

	assert_true(set_bytes(path, &nfiles) <= 3 * ROT_MAX);
	r1 = rot_name(path, 1);
	assert_int_equal(-1, access(r1, F_OK));
	read_set(path, &all, &nfiles, first);
	assert_true(check_pruned(&all) >= 2);
	if (cw_audit_verify_ex(path, NULL, &v, &err))
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	assert_true(v.first_seq > 1);
	assert_true(v.pruned_at > v.first_seq);
	assert_int_equal(all.n, v.records);
	/* the chain runs on from the first record kept */
	o = parse_line(&all, 0);
	assert_int_equal(v.first_seq, json_integer_value(json_object_get(o, "seq")));
	check_chain(&all, 0, (int64_t)v.first_seq,
		    json_string_value(json_object_get(o, "prev")));

	/* An anchor at the last record removed: its hash is the pruned one. */
	an.seq = v.first_seq - 1;
	snprintf(an.hash, sizeof(an.hash), "%s",
		 json_string_value(json_object_get(o, "prev")));
	if (cw_audit_verify_ex(path, &an, &v, &err))
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	an.hash[0] = an.hash[0] == 'a' ? 'b' : 'a';
	assert_int_equal(-EBADMSG, cw_audit_verify_ex(path, &an, &v, &err));
	assert_non_null(strstr(err.text, "removed by retention with SHA-256"));
	/* An older one cannot be checked, and says so. */
	an.seq = 1;
	assert_int_equal(-EBADMSG, cw_audit_verify_ex(path, &an, &v, &err));
	assert_non_null(strstr(err.text, "was removed by retention"));
	assert_non_null(strstr(err.text, "keep a newer anchor"));
	json_decref(o);

	/* The oldest file left, taken away without a record. */
	{
		char **files;
		size_t n;

		assert_int_equal(0, cw_audit_files(path, &files, &n, &err));
		assert_true(n >= 2);
		oldest = strdup(files[0]);
		cw_audit_files_free(files, n);
	}
	assert_int_equal(0, unlink(oldest));
	assert_int_equal(-EBADMSG, cw_audit_verify(path, NULL, &err));
	assert_non_null(strstr(err.text, "which is not present, and no pruned record says"));
	free(oldest);
	lines_free(&all);
	free(r1);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_rotation_keeps_chain),
		DIR_TEST(test_rotation_with_forked_writers),
		DIR_TEST(test_rotation_after_torn_tail),
		DIR_TEST(test_retention_bounds_and_verifies),
	};
	return cmocka_run_group_tests_name("audit_rotate", tests, NULL, NULL);
}
