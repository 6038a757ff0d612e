// SPDX-License-Identifier: Apache-2.0
/*
 * Group commit (userspace/audit/commit.c): threads sharing one handle and
 * its fdatasyncs, and the writers told later, by the log's flusher
 * thread, once their records are durable or why they are not.
 */
#include "audit_test.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_threads_share_a_handle),
		DIR_TEST(test_async_writers_told_once_durable),
		DIR_TEST(test_async_writers_do_not_touch_the_file),
		DIR_TEST(test_async_write_failure_told),
	};
	return cmocka_run_group_tests_name("audit_commit", tests, NULL, NULL);
}
