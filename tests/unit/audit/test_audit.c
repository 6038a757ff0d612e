// SPDX-License-Identifier: Apache-2.0
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

static char *tmpdir_new(void)
{
	char tmpl[] = "/tmp/cw-audit-test-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void tmpdir_free(char *d)
{
	assert_int_equal(0, nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS));
	free(d);
}

/* Each test gets a fresh directory, removed even when the test fails. */
static int setup_dir(void **state)
{
	*state = tmpdir_new();
	return 0;
}

static int teardown_dir(void **state)
{
	tmpdir_free(*state);
	return 0;
}

static char *join(const char *dir, const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void sha_hex(const char *p, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	assert_int_equal(1, EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL));
	assert_int_equal(32, mdlen);
	for (i = 0; i < mdlen; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

static void lines_read(const char *path, struct lines *l)
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

static void lines_free(struct lines *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

static void lines_write(const char *path, const struct lines *l,
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

static void append_raw(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, s, strlen(s)));
	assert_int_equal(0, close(fd));
}

static json_t *parse_line(const struct lines *l, size_t i)
{
	json_error_t jerr;
	json_t *o = json_loadb(l->v[i], l->len[i], 0, &jerr);

	if (!o)
		fail_msg("line %zu does not parse: %s", i + 1, jerr.text);
	assert_true(json_is_object(o));
	return o;
}

/* Every line a record, seq first_seq.., prev the SHA-256 of the line above. */
static void check_chain(const struct lines *l, size_t from, int64_t first_seq,
			const char *first_prev)
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

static void write_n(struct cw_audit *a, int n, const char *tag)
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

static void check_ts(const char *ts, const char *lo, const char *hi)
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

#define WRITERS 4
#define PER_WRITER 200

static void test_forked_writers(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	int next[WRITERS] = { 0 };
	pid_t pids[WRITERS];
	struct cw_error err;
	struct lines l;
	uint64_t n = 0;
	size_t i;
	int w;

	for (w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct cw_audit *a = cw_audit_open(path, &err);
			int j, rc = 0;

			if (!a)
				_exit(2);
			for (j = 0; j < PER_WRITER && !rc; j++) {
				json_t *f = json_pack("{s:i, s:i}", "writer", w,
						      "n", j);

				if (!f || cw_audit_write(a, "exec", NULL, f,
							 &err))
					rc = 3;
				json_decref(f);
			}
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

struct thread_arg {
	struct cw_audit *a;
	int id;
	int failures;
};

static void *thread_writer(void *p)
{
	struct thread_arg *t = p;
	struct cw_error err;
	int j;

	for (j = 0; j < 50; j++) {
		json_t *f = json_pack("{s:i, s:i}", "thread", t->id, "n", j);

		if (!f || cw_audit_write(t->a, "net", "inv-t", f, &err))
			t->failures++;
		json_decref(f);
	}
	return NULL;
}

static void test_threads_share_a_handle(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct thread_arg args[4];
	pthread_t th[4];
	struct cw_error err;
	uint64_t flushes;
	struct lines l;
	int i;

	args[0].a = cw_audit_open(path, &err);
	assert_non_null(args[0].a);
	for (i = 0; i < 4; i++) {
		args[i].a = args[0].a;
		args[i].id = i;
		args[i].failures = 0;
		assert_int_equal(0, pthread_create(&th[i], NULL, thread_writer,
						   &args[i]));
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(0, pthread_join(th[i], NULL));
		assert_int_equal(0, args[i].failures);
	}
	/* Group commit: writers waiting on a flush shared it. */
	flushes = cw_audit_flushes(args[0].a);
	print_message("# 200 synced writes from 4 threads took %llu fdatasyncs\n",
		      (unsigned long long)flushes);
	assert_true(flushes >= 1);
	assert_true(flushes < 150);
	cw_audit_close(args[0].a);
	lines_read(path, &l);
	assert_int_equal(200, l.n);
	check_chain(&l, 0, 1, "");
	lines_free(&l);
	free(path);
}

/* What cw_audit_write_async's writers were told. */
struct told {
	pthread_mutex_t lock;
	int ok, failed;
	int told[300];		/* how often each record was told */
	char why[512];		/* the last failure's reason */
};

struct async_ctx {
	struct told *t;
	int i;
};

static void async_done(void *ctx, int ret, const struct cw_error *err)
{
	struct async_ctx *c = ctx;
	struct told *t = c->t;

	assert_true(ret == 0 || (err && err->text[0]));
	pthread_mutex_lock(&t->lock);
	if (ret) {
		t->failed++;
		snprintf(t->why, sizeof(t->why), "%s", err->text);
	} else {
		t->ok++;
	}
	t->told[c->i]++;
	pthread_mutex_unlock(&t->lock);
	free(c);
}

struct async_arg {
	struct cw_audit *a;
	struct told *t;
	int id;
	int failures;
};

static void *thread_async_writer(void *p)
{
	struct async_arg *w = p;
	struct cw_error err;
	int j;

	for (j = 0; j < 100; j++) {
		json_t *f = json_pack("{s:i, s:i}", "thread", w->id, "n", j);
		struct async_ctx *c = malloc(sizeof(*c));
		int ret;

		if (!f || !c) {
			w->failures++;
			json_decref(f);
			free(c);
			continue;
		}
		c->t = w->t;
		c->i = w->id * 100 + j;
		/* Every third a synchronous writer in between. */
		if (j % 3 == 2 &&
		    cw_audit_write(w->a, "net", "inv-s", f, &err))
			w->failures++;
		ret = cw_audit_write_async(w->a, "decision", "inv-a", f,
					   async_done, c, &err);
		if (ret) {
			w->failures++;
			free(c);
		}
		json_decref(f);
	}
	return NULL;
}

static void test_async_writers_told_once_durable(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct told t = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct async_arg args[3];
	struct cw_error err;
	struct cw_audit *a;
	pthread_t th[3];
	struct lines l;
	int i, sync_writes = 3 * 33;
	json_t *bad;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	for (i = 0; i < 3; i++) {
		args[i] = (struct async_arg){ .a = a, .t = &t, .id = i };
		assert_int_equal(0, pthread_create(&th[i], NULL,
						   thread_async_writer,
						   &args[i]));
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(0, pthread_join(th[i], NULL));
		assert_int_equal(0, args[i].failures);
	}
	/* A record refused before it is written is not told. */
	bad = json_pack("{s:i}", "seq", 1);
	assert_int_equal(-EINVAL,
			 cw_audit_write_async(a, "decision", NULL, bad,
					      async_done, NULL, &err));
	json_decref(bad);
	assert_true(cw_audit_flushes(a) >= 1);
	/* Closing tells every writer still waiting. */
	cw_audit_close(a);
	assert_int_equal(300, t.ok);
	assert_int_equal(0, t.failed);
	for (i = 0; i < 300; i++)
		assert_int_equal(1, t.told[i]);
	lines_read(path, &l);
	assert_int_equal(300 + sync_writes, l.n);
	check_chain(&l, 0, 1, "");
	lines_free(&l);
	free(path);
}

#define CHILD_SKIP 77
/* The child cannot use cmocka's asserts: it says what failed and exits. */
#define CHILD_FAIL(step)                                                   \
	do {                                                               \
		printf("# child: %s failed: %s\n", step, err.text);        \
		return 1;                                                  \
	} while (0)

static int told_count(struct told *t, bool failed)
{
	int n;

	pthread_mutex_lock(&t->lock);
	n = failed ? t->failed : t->ok;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* Waits up to 10 s for n writers told ok (or failed). */
static bool told_wait(struct told *t, bool failed, int n)
{
	int i;

	for (i = 0; i < 1000 && told_count(t, failed) < n; i++)
		usleep(10000);
	return told_count(t, failed) == n;
}

static int write_async_n(struct cw_audit *a, struct told *t, int from,
			 int n)
{
	struct cw_error err;
	int i, ret = 0;

	for (i = from; i < from + n && !ret; i++) {
		json_t *f = json_pack("{s:i}", "n", i);
		struct async_ctx *c = malloc(sizeof(*c));

		if (!f || !c) {
			json_decref(f);
			free(c);
			return -ENOMEM;
		}
		*c = (struct async_ctx){ .t = t, .i = i };
		ret = cw_audit_write_async(a, "decision", "inv-a", f,
					   async_done, c, &err);
		if (ret)
			free(c);
		json_decref(f);
	}
	return ret;
}

/*
 * The writer's thread only queues its record: the flusher appends it.
 * Another open file holding the log's lock would stop any append; the
 * writers return all the same, and are told once the lock is let go.
 */
static void test_async_writers_do_not_touch_the_file(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	struct told t = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct cw_error err;
	struct cw_audit *a;
	struct lines l;
	int fd, i;

	a = cw_audit_open(path, &err);
	assert_non_null(a);
	write_n(a, 1, "before");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(0, flock(fd, LOCK_EX));
	alarm(30);	/* a writer stuck on the lock fails the test */
	assert_int_equal(0, write_async_n(a, &t, 0, 5));
	usleep(100000);
	assert_int_equal(0, told_count(&t, false));
	assert_int_equal(0, told_count(&t, true));
	assert_int_equal(0, flock(fd, LOCK_UN));
	close(fd);
	assert_true(told_wait(&t, false, 5));
	alarm(0);
	cw_audit_close(a);
	lines_read(path, &l);
	assert_int_equal(6, l.n);
	check_chain(&l, 0, 1, "");
	for (i = 0; i < 5; i++) {
		json_t *o = json_loads(l.v[1 + i], 0, NULL);

		assert_int_equal(i, json_integer_value(json_object_get(o, "n")));
		json_decref(o);
	}
	lines_free(&l);
	free(path);
}

/* An append the file refuses (past RLIMIT_FSIZE here) fails closed: its
 * writers are told why, nothing of it stays, and the next append goes on
 * with the chain whole. In a child: the limit is the process's. */
static int async_failure_child(const char *path)
{
	struct told t = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rlimit rl;
	struct cw_error err = { 0 };
	struct cw_audit *a;
	struct stat st;
	uint64_t n = 0;

	a = cw_audit_open(path, &err);
	if (!a)
		CHILD_FAIL("open");
	if (cw_audit_write(a, "decision", "inv-1", NULL, &err))
		CHILD_FAIL("first write");
	if (stat(path, &st) || getrlimit(RLIMIT_FSIZE, &rl))
		CHILD_FAIL("stat");
	signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = (rlim_t)st.st_size + 10;
	if (setrlimit(RLIMIT_FSIZE, &rl))
		CHILD_FAIL("setrlimit");
	if (write_async_n(a, &t, 0, 3))
		CHILD_FAIL("queueing");
	if (!told_wait(&t, true, 3) || told_count(&t, false))
		CHILD_FAIL("telling the failure");
	if (!strstr(t.why, "File too large") || !strstr(t.why, "writing"))
		CHILD_FAIL(t.why);
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_FSIZE, &rl))
		CHILD_FAIL("setrlimit back");
	if (write_async_n(a, &t, 3, 1) || !told_wait(&t, false, 1))
		CHILD_FAIL("writing after the limit went");
	cw_audit_close(a);
	if (cw_audit_verify(path, &n, &err) || n != 2)
		CHILD_FAIL("verify");
	return 0;
}

static void test_async_write_failure_told(void **state)
{
	char *dir = *state, *path = join(dir, "audit.jsonl");
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = async_failure_child(path);

		fflush(stdout);
		_exit(rc);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
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

/* ---- rotation ---- */

#define ROT_MAX 2048

static char *rot_name(const char *path, int n)
{
	char *p;

	assert_true(asprintf(&p, "%s.%d", path, n) > 0);
	return p;
}

static void write_padded(struct cw_audit *a, int from, int n)
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
static void read_set(const char *path, struct lines *all, size_t *nfiles,
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
	uint64_t n = 0;
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
	/* without rotation: 10 records in one write */
	assert_int_equal(0, cw_audit_write_batch(a, recs, 10,
						 CW_AUDIT_DEFER_SYNC, &err));
	write_n(a, 1, "single");
	/* a 2 KiB file holds a few: the batch crosses rotations */
	cw_audit_set_max_bytes(a, ROT_MAX);
	assert_int_equal(0, cw_audit_write_batch(a, recs + 10, 20, 0, &err));
	/* a reserved name refuses the whole batch, writing none */
	json_object_set_new(fields[0], "seq", json_integer(1));
	assert_int_equal(-EINVAL, cw_audit_write_batch(a, recs, 2, 0, &err));
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
	assert_int_equal(0, cw_audit_write_batch(a2, recs, 17, 0, &err));
	assert_int_equal(0, cw_audit_write_batch(a2, recs + 17,
						 CW_ARRAY_SIZE(recs) - 17, 0,
						 &err));
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
	assert_int_equal(-EINVAL, cw_audit_write_batch(a2, recs, 3, 0, &err));
	assert_non_null(strstr(err.text, "invocation id is not valid UTF-8"));
	recs[1].invocation = "inv-1";
	recs[2].type = "fi\xffle";
	assert_int_equal(-EINVAL, cw_audit_write_batch(a2, recs, 3, 0, &err));
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
	pid_t pids[WRITERS];
	int w;

	for (w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct cw_audit *a = cw_audit_open(path, &err);
			int j, rc = 0;

			if (!a)
				_exit(2);
			/* Only half of them rotate; all must follow. */
			if (w % 2 == 0)
				cw_audit_set_max_bytes(a, 8192);
			for (j = 0; j < 50 && !rc; j++) {
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

#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_record_fields),
		DIR_TEST(test_reopen_continues),
		DIR_TEST(test_reserved_fields_rejected),
		DIR_TEST(test_modes),
		DIR_TEST(test_refuses_unsafe_paths),
		DIR_TEST(test_forked_writers),
		DIR_TEST(test_threads_share_a_handle),
		DIR_TEST(test_async_writers_told_once_durable),
		DIR_TEST(test_async_writers_do_not_touch_the_file),
		DIR_TEST(test_async_write_failure_told),
		DIR_TEST(test_torn_last_line),
		DIR_TEST(test_torn_first_write),
		DIR_TEST(test_steps_over_damaged_lines),
		DIR_TEST(test_verify_detects_tampering),
		DIR_TEST(test_enospc),
		DIR_TEST(test_large_record),
		DIR_TEST(test_oversized_record_refused),
		DIR_TEST(test_rotation_keeps_chain),
		DIR_TEST(test_batch),
		DIR_TEST(test_batch_mixed_heads),
		DIR_TEST(test_rotation_with_forked_writers),
		DIR_TEST(test_verify_across_rotation),
		DIR_TEST(test_rotation_after_torn_tail),
		DIR_TEST(test_verify_while_rotating),
		DIR_TEST(test_verify_anchor),
	};
	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
