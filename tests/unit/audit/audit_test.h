/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the audit log's unit tests share: a fresh directory per test, a
 * log read back as lines and checked as a chain, records written in
 * numbers, the files of a rotated log, and how a forked child reports.
 */
#ifndef CW_TESTS_UNIT_AUDIT_AUDIT_TEST_H
#define CW_TESTS_UNIT_AUDIT_AUDIT_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "unit.h"
#include "audit/audit.h"

struct lines {
	char **v; /* each line without its '\n' */
	size_t *len;
	size_t n;
	bool trailing_nl;
};

static inline char *tmpdir_new(void)
{
	char tmpl[] = "/tmp/cw-audit-test-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

static inline int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static inline void tmpdir_free(char *d)
{
	assert_int_equal(0, nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS));
	free(d);
}

/* Each test gets a fresh directory, removed even when the test fails. */
static inline int setup_dir(void **state)
{
	*state = tmpdir_new();
	return 0;
}

static inline int teardown_dir(void **state)
{
	tmpdir_free(*state);
	return 0;
}

static inline char *join(const char *dir, const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static inline void sha_hex(const char *p, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	assert_int_equal(1, EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL));
	assert_int_equal(32, mdlen);
	for (i = 0; i < mdlen; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

static inline void lines_read(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "r");
	char *data = NULL, *p, *end;
	long size;

	assert_non_null(f);
	memset(l, 0, sizeof(*l));
	assert_int_equal(0, fseek(f, 0, SEEK_END));
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	data = malloc((size_t)size + 1);
	assert_non_null(data);
	assert_int_equal(size, fread(data, 1, (size_t)size, f));
	fclose(f);
	l->trailing_nl = size > 0 && data[size - 1] == '\n';
	for (p = data, end = data + size; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
		l->len = realloc(l->len, (l->n + 1) * sizeof(*l->len));
		assert_non_null(l->v);
		assert_non_null(l->len);
		l->v[l->n] = malloc(n + 1);
		assert_non_null(l->v[l->n]);
		memcpy(l->v[l->n], p, n);
		l->v[l->n][n] = '\0';
		l->len[l->n] = n;
		l->n++;
		p += n + (nl ? 1 : 0);
	}
	free(data);
}

static inline void lines_free(struct lines *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

static inline void lines_write(const char *path, const struct lines *l,
			const size_t *order, size_t n, bool trailing_nl)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t i;

	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		size_t k = order ? order[i] : i;

		assert_int_equal(0, cw_write_all(fd, l->v[k], l->len[k]));
		if (i + 1 < n || trailing_nl)
			assert_int_equal(0, cw_write_all(fd, "\n", 1));
	}
	assert_int_equal(0, close(fd));
}

static inline void append_raw(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, s, strlen(s)));
	assert_int_equal(0, close(fd));
}

static inline json_t *parse_line(const struct lines *l, size_t i)
{
	json_error_t jerr;
	json_t *o = json_loadb(l->v[i], l->len[i], 0, &jerr);

	if (!o)
		fail_msg("line %zu does not parse: %s", i + 1, jerr.text);
	assert_true(json_is_object(o));
	return o;
}

/* Every line a record, seq first_seq.., prev the SHA-256 of the line above. */
static inline void check_chain(const struct lines *l, size_t from,
			       int64_t first_seq, const char *first_prev)
{
	char h[65];
	size_t i;

	for (i = from; i < l->n; i++) {
		json_t *o = parse_line(l, i);
		json_t *prev = json_object_get(o, "prev");

		assert_int_equal(first_seq + (int64_t)(i - from),
				 json_integer_value(json_object_get(o, "seq")));
		assert_true(json_is_string(prev));
		if (i == from) {
			assert_string_equal(first_prev, json_string_value(prev));
		} else {
			sha_hex(l->v[i - 1], l->len[i - 1], h);
			assert_string_equal(h, json_string_value(prev));
		}
		json_decref(o);
	}
}

static inline void write_n(struct cw_audit *a, int n, const char *tag)
{
	struct cw_error err;
	int i;

	for (i = 0; i < n; i++) {
		json_t *f = json_pack("{s:s, s:i}", "tag", tag, "i", i);

		assert_non_null(f);
		assert_int_equal(0, cw_audit_write(a, "decision", "inv-1", f,
						   &err));
		json_decref(f);
	}
}

static inline void check_ts(const char *ts, const char *lo, const char *hi)
{
	const char *pat = "dddd-dd-ddTdd:dd:dd.ddddddZ";
	size_t i;

	assert_int_equal(strlen(pat), strlen(ts));
	for (i = 0; pat[i]; i++) {
		if (pat[i] == 'd')
			assert_true(ts[i] >= '0' && ts[i] <= '9');
		else
			assert_int_equal(pat[i], ts[i]);
	}
	/* Fixed-width RFC 3339 UTC sorts as text. */
	assert_true(strcmp(lo, ts) <= 0);
	assert_true(strcmp(ts, hi) <= 0);
}

#define WRITERS 4
#define PER_WRITER 200

/*
 * WRITERS processes each write n exec records ({"writer":w,"n":j}) to the
 * log at path through a handle of their own, the even ones rotating at
 * even_max_bytes (0: never); returns once all have ended well.
 */
static inline void run_writers(const char *path, int n,
			       uint64_t even_max_bytes)
{
	pid_t pids[WRITERS];
	struct cw_error err;
	int w;

	for (w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct cw_audit *a = cw_audit_open(path, &err);
			int j, rc = 0;

			if (!a)
				_exit(2);
			if (w % 2 == 0 && even_max_bytes)
				cw_audit_set_max_bytes(a, even_max_bytes);
			for (j = 0; j < n && !rc; j++) {
				json_t *f = json_pack("{s:i, s:i}", "writer", w,
						      "n", j);

				if (!f || cw_audit_write(a, "exec", NULL, f,
							 &err))
					rc = 3;
				json_decref(f);
			}
			if (rc)
				printf("# writer %d: %s\n", w, err.text);
			cw_audit_close(a);
			_exit(rc);
		}
	}
	for (w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(pids[w], waitpid(pids[w], &status, 0));
		assert_true(WIFEXITED(status));
		assert_int_equal(0, WEXITSTATUS(status));
	}
}

#define CHILD_SKIP 77
/* The child cannot use cmocka's asserts: it says what failed and exits. */
#define CHILD_FAIL(step)                                                   \
	do {                                                               \
		printf("# child: %s failed: %s\n", step, err.text);        \
		return 1;                                                  \
	} while (0)

/* The rotation size the rotation tests write past. */
#define ROT_MAX 2048

static inline char *rot_name(const char *path, int n)
{
	char *p;

	assert_true(asprintf(&p, "%s.%d", path, n) > 0);
	return p;
}

static inline void write_padded(struct cw_audit *a, int from, int n)
{
	char pad[200];
	struct cw_error err;
	int i;

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (i = from; i < from + n; i++) {
		json_t *f = json_pack("{s:i, s:s}", "i", i, "pad", pad);

		assert_non_null(f);
		if (cw_audit_write(a, "exec", "inv-r", f, &err))
			fail_msg("write %d: %s", i, err.text);
		json_decref(f);
	}
}

/* Reads the rotated set in order into one list; nfiles gets the count. */
static inline void read_set(const char *path, struct lines *all, size_t *nfiles,
		     size_t *first_line_of /* [32] */)
{
	struct cw_error err;
	char **files;
	size_t n, i, j;

	assert_int_equal(0, cw_audit_files(path, &files, &n, &err));
	memset(all, 0, sizeof(*all));
	assert_true(n <= 32);
	for (i = 0; i < n; i++) {
		struct lines l;

		lines_read(files[i], &l);
		assert_true(l.trailing_nl);
		first_line_of[i] = all->n;
		all->v = realloc(all->v, (all->n + l.n) * sizeof(*all->v));
		all->len = realloc(all->len, (all->n + l.n) * sizeof(*all->len));
		assert_non_null(all->v);
		for (j = 0; j < l.n; j++) {
			all->v[all->n] = l.v[j];
			all->len[all->n] = l.len[j];
			all->n++;
		}
		free(l.v);
		free(l.len);
	}
	all->trailing_nl = true;
	*nfiles = n;
	cw_audit_files_free(files, n);
}

#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)

#endif
