// SPDX-License-Identifier: Apache-2.0
/*
 * Verification (userspace/audit/verify.c): each kind of damage named at
 * its line, a rotated set checked as one chain, verifying while writers
 * rotate, and anchors.
 */
#include "audit_test.h"

/* Writes l reordered/reduced into a copy and checks what verify reports. */
static void expect_verify(const char *path, const struct lines *l,
			  const size_t *order, size_t n, bool trailing_nl,
			  int want_line, const char *want_text)
{
	struct cw_error err;
	uint64_t good = 99;

	lines_write(path, l, order, n, trailing_nl);
	memset(&err, 0, sizeof(err));
	assert_int_equal(-EBADMSG, cw_audit_verify(path, &good, &err));
	if (want_line != err.line || !strstr(err.text, want_text))
		fail_msg("expected line %d \"%s\", got line %d \"%s\"",
			 want_line, want_text, err.line, err.text);
	assert_true(good < n);
}

static void test_verify_detects_tampering(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	char *copy = join(dir, "copy.jsonl");
	static const size_t deleted[] = { 0, 1, 3, 4, 5 };
	static const size_t swapped[] = { 0, 1, 3, 2, 4, 5 };
	static const size_t head_cut[] = { 2, 3, 4, 5 };
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	uint64_t n = 0;
	char *orig, *p;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 6, "orig");
	cw_audit_close(a);
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(6, n);
	lines_read(path, &l);
	assert_int_equal(6, l.n);

	lines_write(copy, &l, NULL, l.n, true);
	assert_int_equal(0, cw_audit_verify(copy, &n, &err));
	assert_int_equal(6, n);

	expect_verify(copy, &l, deleted, 5, true, 3, "missing");
	expect_verify(copy, &l, swapped, 6, true, 3, "out of order");
	expect_verify(copy, &l, head_cut, 4, true, 1, "missing");
	/* Torn tail: the last line lost its end and its newline. */
	l.len[5] -= 10;
	expect_verify(copy, &l, NULL, 6, false, 6, "torn");
	l.len[5] += 10;

	/* A value changed, still valid JSON: caught by line 4's prev. */
	orig = strdup(l.v[2]);
	assert_non_null(orig);
	p = strstr(l.v[2], "\"orig\"");
	assert_non_null(p);
	memcpy(p, "\"ORIG\"", 6);
	expect_verify(copy, &l, NULL, 6, true, 3, "edited");
	/* The last line edited: nothing after it can tell. */
	strcpy(l.v[2], orig);
	p = strstr(l.v[5], "\"orig\"");
	memcpy(p, "\"ORIG\"", 6);
	lines_write(copy, &l, NULL, l.n, true);
	assert_int_equal(0, cw_audit_verify(copy, &n, &err));
	memcpy(p, "\"orig\"", 6);
	/* Its seq changed, its prev intact. */
	p = strstr(l.v[2], "\"seq\":3,");
	assert_non_null(p);
	p[6] = '9';
	expect_verify(copy, &l, NULL, 6, true, 3, "edited");
	/* No longer JSON. */
	strcpy(l.v[2], orig);
	l.v[2][0] = '[';
	expect_verify(copy, &l, NULL, 6, true, 3, "not a record");
	strcpy(l.v[2], orig);
	lines_write(copy, &l, NULL, l.n, true);
	assert_int_equal(0, cw_audit_verify(copy, &n, &err));
	assert_int_equal(6, n);

	free(orig);
	lines_free(&l);
	free(copy);
	free(path);
}

static void copy_file(const char *from, const char *to)
{
	struct lines l;

	lines_read(from, &l);
	lines_write(to, &l, NULL, l.n, l.trailing_nl);
	lines_free(&l);
}

/* Builds a set of at least three rotated files plus the current one. */
static void make_set(const char *path)
{
	struct cw_error err;
	struct cw_audit *a = cw_audit_open(path, &err);
	struct stat st;
	char *r3 = rot_name(path, 3);

	assert_non_null(a);
	cw_audit_set_max_bytes(a, ROT_MAX);
	write_padded(a, 0, 30);
	cw_audit_close(a);
	assert_int_equal(0, stat(r3, &st));
	free(r3);
}

static void expect_set_error(const char *path, const char *want_file,
			     int want_line, const char *want_text)
{
	struct cw_error err;
	const char *src;

	memset(&err, 0, sizeof(err));
	assert_int_equal(-EBADMSG, cw_audit_verify(path, NULL, &err));
	src = strrchr(err.source, '/') ? strrchr(err.source, '/') + 1 :
					 err.source;
	if (strcmp(src, want_file) || want_line != err.line ||
	    !strstr(err.text, want_text))
		fail_msg("expected %s:%d \"%s\", got %s:%d \"%s\"", want_file,
			 want_line, want_text, err.source, err.line, err.text);
}

static void test_verify_across_rotation(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	char *r1 = rot_name(path, 1), *r2 = rot_name(path, 2);
	char *save = join(dir, "save");
	struct cw_error err;
	struct lines l;
	char *p;

	make_set(path);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));

	/* A rotated file removed from the middle. */
	assert_int_equal(0, rename(r2, save));
	expect_set_error(path, "audit.jsonl.3", 1,
			 "continues audit.jsonl.2, but the file before it is audit.jsonl.1");
	assert_int_equal(0, rename(save, r2));

	/* The oldest removed. */
	assert_int_equal(0, rename(r1, save));
	expect_set_error(path, "audit.jsonl.2", 1,
			 "continues audit.jsonl.1, which is not present");
	assert_int_equal(0, rename(save, r1));

	/* Two files swapped. */
	assert_int_equal(0, rename(r1, save));
	assert_int_equal(0, rename(r2, r1));
	assert_int_equal(0, rename(save, r2));
	expect_set_error(path, "audit.jsonl.1", 1, "continues audit.jsonl.1");
	assert_int_equal(0, rename(r2, save));
	assert_int_equal(0, rename(r1, r2));
	assert_int_equal(0, rename(save, r1));
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));

	/* The last line of a rotated file edited: the next file's first
	 * record holds its hash. */
	copy_file(r1, save);
	lines_read(r1, &l);
	p = strstr(l.v[l.n - 1], "\"pad\":\"p");
	assert_non_null(p);
	p[7] = 'P';
	lines_write(r1, &l, NULL, l.n, true);
	expect_set_error(path, "audit.jsonl.1", (int)l.n,
			 "does not match the prev recorded on line 1 of");
	/* ... and deleted instead. */
	lines_write(r1, &l, NULL, l.n - 1, true);
	expect_set_error(path, "audit.jsonl.2", 1, "missing: expected seq");
	lines_free(&l);
	copy_file(save, r1);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));

	/* A line edited inside a rotated file. */
	lines_read(r2, &l);
	p = strstr(l.v[1], "\"pad\":\"p");
	assert_non_null(p);
	p[7] = 'P';
	copy_file(r2, save);
	lines_write(r2, &l, NULL, l.n, true);
	expect_set_error(path, "audit.jsonl.2", 2, "edited");
	lines_free(&l);
	copy_file(save, r2);

	/* A rotated file emptied. */
	lines_read(r2, &l);
	lines_write(r2, &l, NULL, 0, false);
	expect_set_error(path, "audit.jsonl.2", 0, "empty");
	lines_write(r2, &l, NULL, l.n, true);
	lines_free(&l);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));

	/* rotated_from added to a line that is not a file's first. */
	lines_read(path, &l);
	if (l.n >= 2) {
		copy_file(path, save);
		p = strstr(l.v[1], ",\"prev\":");
		assert_non_null(p);
		{
			char *edited;

			assert_true(asprintf(&edited, "%.*s,\"rotated_from\":\"x\"%s",
					     (int)(p - l.v[1]), l.v[1], p) > 0);
			free(l.v[1]);
			l.v[1] = edited;
			l.len[1] = strlen(edited);
		}
		lines_write(path, &l, NULL, l.n, true);
		expect_set_error(path, "audit.jsonl", 2,
				 "rotated_from belongs only");
		copy_file(save, path);
	}
	lines_free(&l);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));
	free(save);
	free(r2);
	free(r1);
	free(path);
}

/* Verify sees one consistent set while a writer keeps rotating the log. */
static void test_verify_while_rotating(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	uint64_t n = 0, last = 0;
	int status, i, fails = 0;
	pid_t pid;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_padded(a, 0, 1);
	cw_audit_close(a);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		a = cw_audit_open(path, &err);
		if (!a)
			_exit(2);
		cw_audit_set_max_bytes(a, 4096);
		for (i = 0; i < 600; i++) {
			json_t *f = json_pack("{s:i}", "i", i);

			if (!f || cw_audit_write(a, "exec", NULL, f, &err))
				_exit(3);
			json_decref(f);
		}
		cw_audit_close(a);
		_exit(0);
	}
	for (i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		memset(&err, 0, sizeof(err));
		if (cw_audit_verify(path, &n, &err)) {
			printf("# verify during rotation: %s:%d: %s\n",
			       err.source, err.line, err.text);
			fails++;
		}
		assert_true(n >= last);
		last = n;
	}
	if (i == 200)
		assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	assert_int_equal(0, fails);
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(601, n);
	free(path);
}

/* An anchor kept elsewhere shows what was cut from the end or rewritten. */
static void test_verify_anchor(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_audit_anchor anchor = { 0 };
	struct cw_audit_verified v;
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 6, "orig");
	assert_int_equal(0, cw_audit_verify_ex(path, NULL, &v, &err));
	assert_int_equal(6, v.records);
	assert_int_equal(6, v.last_seq);
	assert_int_equal(1, v.files);
	lines_read(path, &l);
	{
		char h[65];

		sha_hex(l.v[5], l.len[5], h);
		assert_string_equal(h, v.last_hash);
	}
	anchor.seq = v.last_seq;
	memcpy(anchor.hash, v.last_hash, sizeof(anchor.hash));
	/* More records after the anchor: still fine. */
	write_n(a, 2, "more");
	cw_audit_close(a);
	assert_int_equal(0, cw_audit_verify_ex(path, &anchor, &v, &err));
	assert_int_equal(8, v.records);

	/* The last three lines cut: the plain check cannot tell. */
	lines_write(path, &l, NULL, 5, true);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));
	assert_int_equal(-EBADMSG, cw_audit_verify_ex(path, &anchor, &v, &err));
	assert_non_null(strstr(err.text, "ends at seq 5, before the anchored seq 6"));
	assert_int_equal(5, err.line);

	/* The anchored line rewritten (and everything after it). */
	memcpy(strstr(l.v[5], "\"orig\""), "\"ORIG\"", 6);
	lines_write(path, &l, NULL, 6, true);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));
	assert_int_equal(-EBADMSG, cw_audit_verify_ex(path, &anchor, &v, &err));
	assert_int_equal(6, err.line);
	assert_non_null(strstr(err.text, "the anchor says"));

	/* A malformed anchor is refused. */
	anchor.hash[0] = 'X';
	assert_int_equal(-EINVAL, cw_audit_verify_ex(path, &anchor, &v, &err));
	lines_free(&l);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_verify_detects_tampering),
		DIR_TEST(test_verify_across_rotation),
		DIR_TEST(test_verify_while_rotating),
		DIR_TEST(test_verify_anchor),
	};
	return cmocka_run_group_tests_name("audit_verify", tests, NULL, NULL);
}
