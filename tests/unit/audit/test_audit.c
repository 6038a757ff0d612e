// SPDX-License-Identifier: Apache-2.0
/*
 * The audit log writer (userspace/audit/audit.c, record.c): the records'
 * fields and chain, reopening, refused fields and paths, modes, forked
 * writers sharing a file, torn and damaged tails, a full disk, the line
 * limit, and batches.
 */
#include "audit_test.h"

static void test_record_fields(void **state)
{
	static const char *const keys[] = { "ts",   "seq",   "type",
					    "invocation", "zeta", "alpha",
					    "count", "ok",   "nested", "prev" };
	char *dir = *state, *path = join(dir, "audit.jsonl");
	char before[40], after[40];
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	json_t *f, *o;
	void *it;
	size_t i;

	f = json_pack("{s:s, s:s, s:i, s:b, s:{s:[i,i]}}", "zeta", "last?",
		      "alpha", "line\nbreak \"q\"", "count", 42, "ok", 1,
		      "nested", "a", 1, 2);
	assert_non_null(f);
	cw_format_ts(cw_now_us(), before, sizeof(before));
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	assert_string_equal(path, cw_audit_path(a));
	for (i = 0; i < 3; i++)
		assert_int_equal(0, cw_audit_write(a, "decision", "inv-abc", f,
						   &err));
	/* Borrowed: still ours, untouched. */
	assert_int_equal(1, f->refcount);
	assert_int_equal(5, json_object_size(f));
	assert_int_equal(0, cw_audit_write(a, "agent", NULL, NULL, &err));
	cw_audit_close(a);
	cw_format_ts(cw_now_us(), after, sizeof(after));

	lines_read(path, &l);
	assert_int_equal(4, l.n);
	assert_true(l.trailing_nl);
	check_chain(&l, 0, 1, "");
	for (i = 0; i < 3; i++) {
		size_t k = 0;

		o = parse_line(&l, i);
		for (it = json_object_iter(o); it;
		     it = json_object_iter_next(o, it)) {
			assert_true(k < CW_ARRAY_SIZE(keys));
			assert_string_equal(keys[k], json_object_iter_key(it));
			k++;
		}
		assert_int_equal(CW_ARRAY_SIZE(keys), k);
		assert_true(json_is_string(json_object_get(o, "ts")));
		check_ts(json_string_value(json_object_get(o, "ts")), before,
			 after);
		assert_true(json_is_integer(json_object_get(o, "seq")));
		assert_string_equal("decision", json_string_value(
							json_object_get(o, "type")));
		assert_string_equal("inv-abc", json_string_value(json_object_get(
						       o, "invocation")));
		assert_true(json_equal(json_object_get(f, "nested"),
				       json_object_get(o, "nested")));
		assert_string_equal("line\nbreak \"q\"",
				    json_string_value(json_object_get(o, "alpha")));
		assert_true(json_is_true(json_object_get(o, "ok")));
		assert_null(json_object_get(o, "torn_before"));
		json_decref(o);
	}
	/* No invocation, no fields: only ts, seq, type and prev. */
	o = parse_line(&l, 3);
	assert_int_equal(4, json_object_size(o));
	assert_null(json_object_get(o, "invocation"));
	assert_string_equal("agent",
			    json_string_value(json_object_get(o, "type")));
	json_decref(o);
	/* Compact: no space after the separators. */
	assert_memory_equal("{\"ts\":\"", l.v[0], 7);
	lines_free(&l);
	json_decref(f);
	free(path);
}

static void test_reopen_continues(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_audit *a, *b;
	struct cw_error err;
	struct lines l;
	uint64_t n = 0;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 3, "first");
	cw_audit_close(a);
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 2, "second");
	/* Two handles on one file take turns: each must notice the other. */
	b = cw_audit_open(path, &err);
	assert_non_null(b);
	write_n(b, 1, "b");
	write_n(a, 1, "a");
	write_n(b, 2, "b");
	cw_audit_close(b);
	cw_audit_close(a);
	lines_read(path, &l);
	assert_int_equal(9, l.n);
	check_chain(&l, 0, 1, "");
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(9, n);
	lines_free(&l);
	free(path);
}

static void test_reserved_fields_rejected(void **state)
{
	static const char *const names[] = { "ts",	   "seq",  "type",
					     "invocation", "prev", "torn_before" };
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct stat st;
	json_t *f, *arr;
	size_t i;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "x");
	assert_int_equal(0, stat(path, &st));
	for (i = 0; i < CW_ARRAY_SIZE(names); i++) {
		struct stat now;

		f = json_pack("{s:i, s:i}", "fine", 1, names[i], 7);
		assert_non_null(f);
		memset(&err, 0, sizeof(err));
		assert_int_equal(-EINVAL, cw_audit_write(a, "decision", "inv",
							 f, &err));
		assert_non_null(strstr(err.text, names[i]));
		assert_int_equal(0, stat(path, &now));
		assert_int_equal(st.st_size, now.st_size);
		json_decref(f);
	}
	arr = json_array();
	assert_int_equal(-EINVAL, cw_audit_write(a, "decision", NULL, arr,
						 &err));
	json_decref(arr);
	assert_int_equal(-EINVAL, cw_audit_write(a, NULL, NULL, NULL, &err));
	assert_int_equal(-EINVAL, cw_audit_write(a, "", NULL, NULL, &err));
	assert_int_equal(-EINVAL, cw_audit_write(a, "bad\xff", NULL, NULL,
						 &err));
	cw_audit_close(a);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));
	free(path);
}

static void test_modes(void **state)
{
	char *dir = *state, *sub = join(dir, "a"), *sub2 = join(sub, "b");
	char *path = join(sub2, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct stat st;
	mode_t old = umask(0);

	/* With no umask at all, the log must still be private. */
	a = cw_audit_open(path, &err);
	umask(old);
	assert_non_null(a);
	assert_int_equal(0, stat(sub, &st));
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(0700, st.st_mode & 07777);
	assert_int_equal(0, stat(sub2, &st));
	assert_int_equal(0700, st.st_mode & 07777);
	assert_int_equal(0, stat(path, &st));
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(0600, st.st_mode & 07777);
	write_n(a, 1, "x");
	cw_audit_close(a);
	assert_int_equal(0, stat(path, &st));
	assert_int_equal(0600, st.st_mode & 07777);
	free(path);
	free(sub2);
	free(sub);
}

static void test_refuses_unsafe_paths(void **state)
{
	char *dir = *state, *path = join(dir, "open.jsonl");
	char *fifo = join(dir, "fifo"), msg[1024];
	struct cw_error err;
	struct stat st;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, "keep\n", 5));
	assert_int_equal(0, fchmod(fd, 0644));
	assert_int_equal(0, close(fd));

	errno = 0;
	assert_null(cw_audit_open(path, &err));
	assert_int_equal(EPERM, errno);
	assert_string_equal(path, err.source);
	assert_non_null(strstr(err.text, "0644"));
	assert_non_null(strstr(err.text, "chmod 600"));
	assert_int_equal(0, stat(path, &st));
	assert_int_equal(5, st.st_size);
	assert_int_equal(0644, st.st_mode & 07777);

	assert_int_equal(0, chmod(path, 0640));
	errno = 0;
	assert_null(cw_audit_open(path, &err));
	assert_int_equal(EPERM, errno);

	/* Another owner could rewrite the log: refused even with 0600. */
	if (geteuid() == 0) {
		assert_int_equal(0, chmod(path, 0600));
		assert_int_equal(0, chown(path, 65534, 65534));
		errno = 0;
		assert_null(cw_audit_open(path, &err));
		assert_int_equal(EPERM, errno);
		assert_non_null(strstr(err.text, "owned by uid 65534"));
	}

	errno = 0;
	assert_null(cw_audit_open(dir, &err));
	assert_int_equal(EISDIR, errno);
	cw_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, dir));
	assert_non_null(strstr(err.text, "directory"));

	assert_int_equal(0, mkfifo(fifo, 0600));
	errno = 0;
	assert_null(cw_audit_open(fifo, &err));
	assert_int_equal(ENXIO, errno);
	assert_non_null(strstr(err.text, "regular file"));

	free(fifo);
	free(path);
}

static void test_forked_writers(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	int next[WRITERS] = { 0 };
	struct cw_error err;
	struct lines l;
	uint64_t n = 0;
	size_t i;
	int w;

	run_writers(path, PER_WRITER, 0);
	lines_read(path, &l);
	assert_int_equal(WRITERS * PER_WRITER, l.n);
	assert_true(l.trailing_nl);
	check_chain(&l, 0, 1, "");
	/* Each writer's records appear whole and in its own order. */
	for (i = 0; i < l.n; i++) {
		json_t *o = parse_line(&l, i);
		json_int_t wr = json_integer_value(json_object_get(o, "writer"));

		assert_true(wr >= 0 && wr < WRITERS);
		assert_int_equal(next[wr],
				 json_integer_value(json_object_get(o, "n")));
		next[wr]++;
		json_decref(o);
	}
	for (w = 0; w < WRITERS; w++)
		assert_int_equal(PER_WRITER, next[w]);
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(WRITERS * PER_WRITER, n);
	lines_free(&l);
	free(path);
}

static void test_torn_last_line(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	char h[65];
	uint64_t n = 0;
	json_t *o;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 3, "before");
	/* A crash mid-write leaves a line without its newline. */
	append_raw(path, "{\"ts\":\"2025-11-29T21:18:13.1");
	write_n(a, 1, "after");
	write_n(a, 1, "later");
	cw_audit_close(a);

	lines_read(path, &l);
	assert_int_equal(6, l.n);
	assert_true(l.trailing_nl);
	assert_string_equal("{\"ts\":\"2025-11-29T21:18:13.1", l.v[3]);
	l.n = 3;
	check_chain(&l, 0, 1, "");
	l.n = 6;
	o = parse_line(&l, 4);
	assert_int_equal(4, json_integer_value(json_object_get(o, "seq")));
	sha_hex(l.v[2], l.len[2], h);
	assert_string_equal(h, json_string_value(json_object_get(o, "prev")));
	assert_true(json_is_true(json_object_get(o, "torn_before")));
	json_decref(o);
	o = parse_line(&l, 5);
	assert_int_equal(5, json_integer_value(json_object_get(o, "seq")));
	sha_hex(l.v[4], l.len[4], h);
	assert_string_equal(h, json_string_value(json_object_get(o, "prev")));
	assert_null(json_object_get(o, "torn_before"));
	json_decref(o);

	memset(&err, 0, sizeof(err));
	assert_int_equal(-EBADMSG, cw_audit_verify(path, &n, &err));
	assert_int_equal(4, err.line);
	assert_string_equal(path, err.source);
	assert_non_null(strstr(err.text, "torn"));
	assert_int_equal(5, n);
	lines_free(&l);
	free(path);
}

static void test_torn_first_write(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	json_t *o;
	int fd;

	/* The very first write was cut short: a new chain starts after it. */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, "{\"ts\":", 6));
	assert_int_equal(0, close(fd));
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 2, "x");
	cw_audit_close(a);
	lines_read(path, &l);
	assert_int_equal(3, l.n);
	assert_string_equal("{\"ts\":", l.v[0]);
	check_chain(&l, 1, 1, "");
	o = parse_line(&l, 1);
	assert_true(json_is_true(json_object_get(o, "torn_before")));
	json_decref(o);
	assert_int_equal(-EBADMSG, cw_audit_verify(path, NULL, &err));
	assert_int_equal(1, err.line);
	assert_non_null(strstr(err.text, "torn"));
	lines_free(&l);
	free(path);
}

static void test_steps_over_damaged_lines(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	char h[65];
	json_t *o;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 2, "x");
	cw_audit_close(a);
	/* A torn line that got its newline, then another torn write. */
	append_raw(path, "{\"ts\":\"20\n{\"ts\":\"2025-11-29T");
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "y");
	cw_audit_close(a);
	lines_read(path, &l);
	assert_int_equal(5, l.n);
	o = parse_line(&l, 4);
	assert_int_equal(3, json_integer_value(json_object_get(o, "seq")));
	sha_hex(l.v[1], l.len[1], h);
	assert_string_equal(h, json_string_value(json_object_get(o, "prev")));
	assert_true(json_is_true(json_object_get(o, "torn_before")));
	json_decref(o);
	assert_int_equal(-EBADMSG, cw_audit_verify(path, NULL, &err));
	assert_int_equal(3, err.line);
	assert_non_null(strstr(err.text, "torn"));
	lines_free(&l);
	free(path);
}

static int enospc_child(const char *mnt)
{
	char *path = join(mnt, "audit.jsonl"), *fill = join(mnt, "fill");
	char block[4096], msg[1024], *big;
	struct cw_error err = { 0 };
	struct cw_audit *a;
	struct stat before, after;
	uint64_t n = 0;
	json_t *f;
	int fd, ret;

	if (unshare(CLONE_NEWNS)) {
		printf("# skip: unshare(CLONE_NEWNS): %s\n", strerror(errno));
		return CHILD_SKIP;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=16k,mode=0700")) {
		printf("# skip: mount tmpfs: %s\n", strerror(errno));
		return CHILD_SKIP;
	}
	a = cw_audit_open(path, &err);
	if (!a)
		CHILD_FAIL("open");
	if (cw_audit_write(a, "agent", NULL, NULL, &err))
		CHILD_FAIL("first write");
	fd = open(fill, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		CHILD_FAIL("creating the filler");
	memset(block, 'f', sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	if (errno != ENOSPC)
		CHILD_FAIL("filling the disk");
	close(fd);
	/* Larger than what is left of the log's last page. */
	big = malloc(8192);
	if (!big)
		CHILD_FAIL("malloc");
	memset(big, 'b', 8191);
	big[8191] = '\0';
	f = json_pack("{s:s}", "output", big);
	free(big);
	if (stat(path, &before))
		CHILD_FAIL("stat");
	memset(&err, 0, sizeof(err));
	ret = cw_audit_write(a, "exit", "inv-full", f, &err);
	cw_error_format(&err, msg, sizeof(msg));
	printf("# full disk: %d %s\n", ret, msg);
	if (ret != -ENOSPC)
		CHILD_FAIL("expecting -ENOSPC");
	if (!strstr(msg, path) || !strstr(err.text, "No space left"))
		CHILD_FAIL("the error naming the file");
	/* The failed record left nothing behind. */
	if (stat(path, &after) || after.st_size != before.st_size)
		CHILD_FAIL("the file staying as it was");
	unlink(fill);
	if (cw_audit_write(a, "exit", "inv-full", f, &err))
		CHILD_FAIL("writing after space came back");
	json_decref(f);
	cw_audit_close(a);
	if (cw_audit_verify(path, &n, &err) || n != 2)
		CHILD_FAIL("verify");
	if (umount(mnt))
		CHILD_FAIL("umount");
	free(fill);
	free(path);
	return 0;
}

static void test_enospc(void **state)
{
	char *dir = *state, *mnt = join(dir, "mnt");
	int status;
	pid_t pid;

	assert_int_equal(0, mkdir(mnt, 0700));
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = enospc_child(mnt);

		fflush(stdout);
		_exit(rc);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	free(mnt);
	if (WEXITSTATUS(status) == CHILD_SKIP)
		skip();
	assert_int_equal(0, WEXITSTATUS(status));
}

static void test_large_record(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	const size_t big_len = 2u << 20;
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	char *big, h[65];
	uint64_t n = 0;
	json_t *f, *o;
	size_t i;

	big = malloc(big_len + 1);
	assert_non_null(big);
	for (i = 0; i < big_len; i++)
		big[i] = (char)('a' + i % 26);
	big[big_len] = '\0';
	f = json_pack("{s:s}", "stdout", big);
	assert_non_null(f);
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "small");
	assert_int_equal(0, cw_audit_write(a, "exit", "inv-big", f, &err));
	cw_audit_close(a);
	/* A fresh handle must find the chain behind a 2 MiB line. */
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "after");
	cw_audit_close(a);

	lines_read(path, &l);
	assert_int_equal(3, l.n);
	assert_true(l.len[1] > big_len);
	check_chain(&l, 0, 1, "");
	o = parse_line(&l, 1);
	assert_string_equal(big, json_string_value(json_object_get(o, "stdout")));
	json_decref(o);
	o = parse_line(&l, 2);
	sha_hex(l.v[1], l.len[1], h);
	assert_string_equal(h, json_string_value(json_object_get(o, "prev")));
	json_decref(o);
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(3, n);
	lines_free(&l);
	json_decref(f);
	free(big);
	free(path);
}

static void test_oversized_record_refused(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_error err;
	struct cw_audit *a;
	struct stat st;
	char *huge;
	json_t *f;

	huge = malloc(CW_AUDIT_MAX_LINE + 1);
	assert_non_null(huge);
	memset(huge, 'h', CW_AUDIT_MAX_LINE);
	huge[CW_AUDIT_MAX_LINE] = '\0';
	f = json_pack("{s:s}", "stdout", huge);
	free(huge);
	assert_non_null(f);
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "x");
	assert_int_equal(-EMSGSIZE, cw_audit_write(a, "exit", NULL, f, &err));
	write_n(a, 1, "y");
	cw_audit_close(a);
	assert_int_equal(0, stat(path, &st));
	assert_true(st.st_size < 4096);
	assert_int_equal(0, cw_audit_verify(path, NULL, &err));
	json_decref(f);
	free(path);
}

/* A batch writes the lines single writes would: one chain, in order,
 * rotating between its records where the size says so. */
static void test_batch(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct cw_audit_rec recs[30];
	json_t *fields[30];
	size_t nfiles, first[32];
	struct cw_error err;
	struct cw_audit *a;
	struct lines all;
	char pad[200];
	uint64_t n = 0, bytes = 0;
	struct stat st0, st1;
	int i;

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 2, "single");
	for (i = 0; i < 30; i++) {
		fields[i] = json_pack("{s:i, s:s}", "i", i, "pad", pad);
		assert_non_null(fields[i]);
		recs[i].type = "file";
		recs[i].invocation = "inv-b";
		recs[i].fields = fields[i];
	}
	/* without rotation: 10 records in one write, whose size it gives */
	assert_int_equal(0, stat(path, &st0));
	assert_int_equal(0, cw_audit_write_batch(a, recs, 10, CW_AUDIT_DEFER_SYNC, &bytes, &err));
	assert_int_equal(0, stat(path, &st1));
	assert_true(bytes > 10 * sizeof(pad));
	assert_int_equal(st1.st_size - st0.st_size, bytes);
	write_n(a, 1, "single");
	/* a 2 KiB file holds a few: the batch crosses rotations */
	cw_audit_set_max_bytes(a, ROT_MAX);
	assert_int_equal(0, cw_audit_write_batch(a, recs + 10, 20, 0, NULL, &err));
	/* a reserved name refuses the whole batch, writing none */
	json_object_set_new(fields[0], "seq", json_integer(1));
	assert_int_equal(-EINVAL, cw_audit_write_batch(a, recs, 2, 0, NULL, &err));
	assert_non_null(strstr(err.text, "reserved"));
	cw_audit_close(a);

	read_set(path, &all, &nfiles, first);
	assert_true(nfiles >= 3);
	assert_int_equal(33, all.n);
	check_chain(&all, 0, 1, "");
	for (i = 0; i < 30; i++) {
		json_t *o = parse_line(&all, (size_t)(i < 10 ? 2 + i : 3 + i));

		assert_string_equal("file", json_string_value(json_object_get(o, "type")));
		assert_int_equal(i, json_integer_value(json_object_get(o, "i")));
		json_decref(o);
	}
	assert_int_equal(0, cw_audit_verify(path, &n, &err));
	assert_int_equal(33, n);
	for (i = 0; i < 30; i++)
		json_decref(fields[i]);
	lines_free(&all);
	free(path);
}

/* The line with its ts and prev values blanked: what two logs of the same
 * records written at other times share. */
static char *masked(const struct lines *l, size_t i)
{
	char *m = strdup(l->v[i]), *prev;

	assert_non_null(m);
	assert_memory_equal("{\"ts\":\"", m, 7);
	memset(m + 7, 'T', 27);
	prev = strstr(m, ",\"prev\":\"");
	assert_non_null(prev);
	memset(prev + 9, 'P', strlen(prev + 9) - 2);
	return m;
}

/* Records of several types and calls, each written on its own and then as
 * one batch: the same lines (but for ts and prev), each exactly as
 * jansson serializes the record, in a valid chain. Batches reuse the
 * serialized type and invocation of earlier records of the batch. */
static void test_batch_mixed_heads(void **state)
{
	static const char *const types[] = { "exec", "file", "process" };
	static const char *const invs[] = {
		"inv-1", "inv-2", NULL, "inv-\"q\"\\", "inv-\xc3\xa9", "inv-3",
	};
	char *dir = *state, *p1 = join(dir, "single.jsonl"),
	     *p2 = join(dir, "batch.jsonl");
	struct cw_audit_rec recs[40];
	/* the same text in other buffers, so only contents can match */
	char type_copy[40][16];
	struct cw_audit *a1, *a2;
	struct cw_error err;
	struct lines l1, l2;
	uint64_t n = 0;
	size_t i;

	a1 = cw_audit_open(p1, &err);
	a2 = cw_audit_open(p2, &err);
	assert_non_null(a1);
	assert_non_null(a2);
	for (i = 0; i < CW_ARRAY_SIZE(recs); i++) {
		/* more distinct pairs than are kept, coming back to
		 * earlier ones */
		snprintf(type_copy[i], sizeof(type_copy[i]), "%s",
			 types[(i / 2) % CW_ARRAY_SIZE(types)]);
		recs[i].type = i % 3 ? type_copy[i] :
				       types[(i / 2) % CW_ARRAY_SIZE(types)];
		recs[i].invocation = invs[(i * 7 / 5) % CW_ARRAY_SIZE(invs)];
		switch (i % 4) {
		case 0:
			recs[i].fields = NULL;
			break;
		case 1:
			recs[i].fields = json_object();
			break;
		default:
			recs[i].fields = json_pack(
				"{s:i, s:s, s:[s,s], s:{s:b}}", "pid", (int)i,
				"path", "/tmp/\"x\"\n\xc3\xa9", "argv", "cat",
				"\t", "o", "k", 1);
		}
		assert_true(i % 4 == 0 || recs[i].fields);
		assert_int_equal(0, cw_audit_write_flags(
					    a1, recs[i].type, recs[i].invocation,
					    recs[i].fields, CW_AUDIT_DEFER_SYNC,
					    &err));
	}
	assert_int_equal(0, cw_audit_write_batch(a2, recs, 17, 0, NULL, &err));
	assert_int_equal(0, cw_audit_write_batch(a2, recs + 17,
						 CW_ARRAY_SIZE(recs) - 17, 0,
						 NULL, &err));
	cw_audit_close(a1);
	cw_audit_close(a2);

	lines_read(p1, &l1);
	lines_read(p2, &l2);
	assert_int_equal(CW_ARRAY_SIZE(recs), l1.n);
	assert_int_equal(CW_ARRAY_SIZE(recs), l2.n);
	check_chain(&l2, 0, 1, "");
	for (i = 0; i < l1.n; i++) {
		char *m1 = masked(&l1, i), *m2 = masked(&l2, i), *dump;
		json_t *o = parse_line(&l2, i);

		assert_string_equal(m1, m2);
		dump = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		assert_non_null(dump);
		assert_string_equal(dump, l2.v[i]);
		assert_string_equal(recs[i].type, json_string_value(
							  json_object_get(o, "type")));
		if (recs[i].invocation)
			assert_string_equal(recs[i].invocation,
					    json_string_value(json_object_get(
						    o, "invocation")));
		else
			assert_null(json_object_get(o, "invocation"));
		free(dump);
		free(m1);
		free(m2);
		json_decref(o);
	}
	assert_int_equal(0, cw_audit_verify(p2, &n, &err));
	assert_int_equal(CW_ARRAY_SIZE(recs), n);

	/* A pair not valid UTF-8 after valid ones refuses the batch. */
	a2 = cw_audit_open(p2, &err);
	assert_non_null(a2);
	recs[1].invocation = "inv-\xff";
	assert_int_equal(-EINVAL, cw_audit_write_batch(a2, recs, 3, 0, NULL, &err));
	assert_non_null(strstr(err.text, "invocation id is not valid UTF-8"));
	recs[1].invocation = "inv-1";
	recs[2].type = "fi\xffle";
	assert_int_equal(-EINVAL, cw_audit_write_batch(a2, recs, 3, 0, NULL, &err));
	assert_non_null(strstr(err.text, "record type is not valid UTF-8"));
	cw_audit_close(a2);
	lines_free(&l2);
	lines_read(p2, &l2);
	assert_int_equal(CW_ARRAY_SIZE(recs), l2.n);

	for (i = 0; i < CW_ARRAY_SIZE(recs); i++)
		json_decref(recs[i].fields);
	lines_free(&l1);
	lines_free(&l2);
	free(p1);
	free(p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_record_fields),
		DIR_TEST(test_reopen_continues),
		DIR_TEST(test_reserved_fields_rejected),
		DIR_TEST(test_modes),
		DIR_TEST(test_refuses_unsafe_paths),
		DIR_TEST(test_forked_writers),
		DIR_TEST(test_torn_last_line),
		DIR_TEST(test_torn_first_write),
		DIR_TEST(test_steps_over_damaged_lines),
		DIR_TEST(test_enospc),
		DIR_TEST(test_large_record),
		DIR_TEST(test_oversized_record_refused),
		DIR_TEST(test_batch),
		DIR_TEST(test_batch_mixed_heads),
	};
	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
