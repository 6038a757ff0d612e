// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "kernel/reads.h"

/* The records cw_reads_records passed, kept. */
static json_t *got;

static void keep(void *ctx, json_t *fields)
{
	(void)ctx;
	json_array_append(got, fields);
}

static json_t *records(struct cw_reads *r)
{
	json_decref(got);
	got = json_array();
	cw_reads_records(r, keep, NULL);
	return got;
}

static const struct cw_reads_opener cat = { 10, 1000, "cat" };
static const struct cw_reads_opener gcc = { 11, 1000, "gcc" };

static json_int_t count_in(json_t *rec, const char *path)
{
	return json_integer_value(
		json_object_get(json_object_get(rec, "files"), path));
}

/* Files are counted at the end under the path their first open told,
 * one record per opener, in the order first opened; paths that found
 * nothing have records of their own. */
static void test_records_by_opener(void **state)
{
	struct cw_reads *r = cw_reads_new();
	json_t *recs, *a;
	const char *k;
	json_t *v;
	size_t i = 0;

	(void)state;
	assert_non_null(r);
	assert_int_equal(0, cw_reads_seen(r, 8, 1, "/etc/hostname", false, &cat));
	assert_int_equal(0, cw_reads_seen(r, 8, 2, "/usr/include/stdio.h", false, &gcc));
	assert_int_equal(0, cw_reads_seen(r, 8, 3, "/etc/passwd", false, &cat));
	/* told twice: the first path stays */
	assert_int_equal(0, cw_reads_seen(r, 8, 1, "/elsewhere", false, &gcc));
	assert_int_equal(0, cw_reads_count(r, 8, 1, 500));
	assert_int_equal(0, cw_reads_count(r, 8, 2, 7));
	assert_int_equal(0, cw_reads_count(r, 8, 3, 1));
	assert_int_equal(0, cw_reads_missing(r, "/nope", 3, &cat));
	assert_int_equal(511, cw_reads_total(r));
	recs = records(r);
	assert_int_equal(3, json_array_size(recs));
	a = json_array_get(recs, 0);
	assert_string_equal("cat", json_string_value(json_object_get(a, "comm")));
	assert_int_equal(10, json_integer_value(json_object_get(a, "pid")));
	assert_int_equal(1000, json_integer_value(json_object_get(a, "uid")));
	assert_true(json_is_true(json_object_get(a, "found")));
	assert_string_equal("kernel", json_string_value(json_object_get(a, "path_source")));
	assert_string_equal("bpf", json_string_value(json_object_get(a, "source")));
	/* in the order first opened */
	json_object_foreach(json_object_get(a, "files"), k, v)
		assert_string_equal(i++ ? "/etc/passwd" : "/etc/hostname", k);
	assert_int_equal(500, count_in(a, "/etc/hostname"));
	assert_int_equal(1, count_in(a, "/etc/passwd"));
	assert_null(json_object_get(json_object_get(a, "files"), "/elsewhere"));
	a = json_array_get(recs, 1);
	assert_string_equal("gcc", json_string_value(json_object_get(a, "comm")));
	assert_int_equal(7, count_in(a, "/usr/include/stdio.h"));
	a = json_array_get(recs, 2);
	assert_true(json_is_false(json_object_get(a, "found")));
	assert_string_equal("user_memory", json_string_value(json_object_get(a, "path_source")));
	assert_int_equal(3, count_in(a, "/nope"));
	cw_reads_free(r);
}

/* A record holds CW_READS_PER_RECORD files at most: the next file of the
 * same opener starts another. */
static void test_records_cut_at_size(void **state)
{
	struct cw_reads *r = cw_reads_new();
	char path[32];
	json_t *recs;
	uint64_t ino;

	(void)state;
	for (ino = 1; ino <= CW_READS_PER_RECORD + 3; ino++) {
		snprintf(path, sizeof(path), "/f/%llu", (unsigned long long)ino);
		assert_int_equal(0, cw_reads_seen(r, 8, ino, path, false, &cat));
		cw_reads_count(r, 8, ino, 1);
	}
	recs = records(r);
	assert_int_equal(2, json_array_size(recs));
	assert_int_equal(CW_READS_PER_RECORD,
			 json_object_size(json_object_get(json_array_get(recs, 0), "files")));
	assert_int_equal(3, json_object_size(json_object_get(json_array_get(recs, 1), "files")));
	assert_int_equal(1, count_in(json_array_get(recs, 1), "/f/515"));
	cw_reads_free(r);
}

/* Two files that had one path share its count; a cut path is listed; a
 * path that is not UTF-8 keeps its bytes as \xNN; a file counted but never
 * told is listed by device and inode, not dropped. */
static void test_records_edges(void **state)
{
	struct cw_reads *r = cw_reads_new();
	json_t *recs, *a, *u;

	(void)state;
	assert_int_equal(0, cw_reads_seen(r, 8, 1, "/tmp/x", false, &cat));
	assert_int_equal(0, cw_reads_seen(r, 8, 2, "/tmp/x", false, &cat));
	assert_int_equal(0, cw_reads_seen(r, 8, 3, "/deep/cut", true, &cat));
	assert_int_equal(0, cw_reads_seen(r, 8, 4, "/bad/\xff", false, &cat));
	cw_reads_count(r, 8, 1, 2);
	cw_reads_count(r, 8, 2, 3);
	cw_reads_count(r, 8, 3, 1);
	cw_reads_count(r, 8, 4, 1);
	assert_int_equal(-ENOENT, cw_reads_count(r, 9, 77, 4));
	recs = records(r);
	assert_int_equal(2, json_array_size(recs));
	a = json_array_get(recs, 0);
	assert_int_equal(5, count_in(a, "/tmp/x"));
	assert_string_equal("/deep/cut",
			    json_string_value(json_array_get(json_object_get(a, "truncated"), 0)));
	assert_int_equal(1, count_in(a, "/bad/\\xff"));
	u = json_array_get(json_object_get(json_array_get(recs, 1), "unknown"), 0);
	assert_int_equal(9, json_integer_value(json_object_get(u, "device")));
	assert_int_equal(77, json_integer_value(json_object_get(u, "inode")));
	assert_int_equal(4, json_integer_value(json_object_get(u, "count")));
	assert_int_equal(11, cw_reads_total(r));
	cw_reads_free(r);
	json_decref(got);
	got = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_by_opener),
		cmocka_unit_test(test_records_cut_at_size),
		cmocka_unit_test(test_records_edges),
	};
	return cmocka_run_group_tests_name("reads", tests, NULL, NULL);
}
