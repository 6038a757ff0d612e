// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "unit.h"
#include "rate/ratelimit.h"

/* A fake clock: every test passes explicit stamps. */
#define T0 1700000000000000LL
#define SEC(x) ((int64_t)((x) * 1000000.0 + ((x) >= 0 ? 0.5 : -0.5)))
#define US(x) ((int64_t)(x))
#define ALL INT64_MAX /* a view window that sees every stored event */

enum store_kind { STORE_MEMORY, STORE_SQLITE };

struct fixture {
	enum store_kind kind;
	char dir[64];
	struct cw_rate_store *s;
	struct cw_counter_view v;
	unsigned next_id;
};

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmpdir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/cw-rl-XXXXXX");
	assert_non_null(mkdtemp(buf));
}

static struct cw_rate_store *open_sqlite_or_fail(const char *dir)
{
	struct cw_error err;
	struct cw_rate_store *s;
	char msg[1024];

	memset(&err, 0, sizeof(err));
	s = cw_rate_open_sqlite(dir, &err);
	if (!s) {
		cw_error_format(&err, msg, sizeof(msg));
		fail_msg("cw_rate_open_sqlite(%s): %s", dir, msg);
	}
	return s;
}

static int setup(void **state)
{
	enum store_kind kind = *(enum store_kind *)*state;
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->kind = kind;
	if (kind == STORE_SQLITE) {
		make_tmpdir(f->dir, sizeof(f->dir));
		f->s = open_sqlite_or_fail(f->dir);
	} else {
		f->s = cw_rate_open_memory();
		assert_non_null(f->s);
	}
	f->v = cw_rate_view(f->s);
	*state = f;
	return 0;
}

/* SQLite-only tests: a directory, removed even when a test fails. */
static int setup_dir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->kind = STORE_SQLITE;
	make_tmpdir(f->dir, sizeof(f->dir));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	cw_rate_close(f->s);
	if (f->kind == STORE_SQLITE)
		remove_tree(f->dir);
	free(f);
	return 0;
}

static void close_store(struct fixture *f)
{
	cw_rate_close(f->s);
	f->s = NULL;
}

static struct cw_limit limit(const char *counter, int64_t window_s,
			     int64_t max)
{
	struct cw_limit l = {
		.counter = (char *)counter,
		.window_s = window_s,
		.max = max,
		.scope = CW_SCOPE_GLOBAL,
		.where = (char *)"tools.run_command.limits[0]",
	};

	return l;
}

static void ref(struct cw_limit_ref *r, const struct cw_limit *l,
		const char *key)
{
	memset(r, 0, sizeof(*r));
	r->limit = l;
	snprintf(r->key, sizeof(r->key), "%s", key);
}

struct outcome {
	int ret;
	int64_t retry;
	size_t which;
};

static struct outcome reserve_id(struct fixture *f,
				 const struct cw_limit_ref *refs, size_t n,
				 int64_t now, const char *rid)
{
	struct outcome o = { .retry = -1, .which = 99 };
	struct cw_error err;

	memset(&err, 0, sizeof(err));
	o.ret = cw_rate_reserve(f->s, refs, n, now, rid, &o.retry, &o.which,
				&err);
	if (o.ret && o.ret != -EAGAIN)
		fail_msg("reserve: %d: %s", o.ret, err.text);
	return o;
}

static struct outcome reserve(struct fixture *f,
			      const struct cw_limit_ref *refs, size_t n,
			      int64_t now)
{
	char rid[32];

	snprintf(rid, sizeof(rid), "r%u", f->next_id++);
	return reserve_id(f, refs, n, now, rid);
}

static int64_t view_count(struct fixture *f, const char *key,
			  int64_t window_us, int64_t now)
{
	int64_t count = -1, retry = -1;

	assert_int_equal(0, f->v.window(f->v.ctx, key, window_us, now, 1000000,
					&count, &retry));
	return count;
}

static void assert_admitted(struct outcome o)
{
	assert_int_equal(0, o.ret);
	assert_int_equal(0, o.retry);
}

static void assert_refused(struct outcome o, int64_t retry, size_t which)
{
	assert_int_equal(-EAGAIN, o.ret);
	assert_int_equal(retry, o.retry);
	assert_int_equal(which, o.which);
}

/* ---- tests run against both stores ------------------------------------ */

static void test_exact_window(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l = limit("c", 60, 3);
	struct cw_limit_ref r;

	ref(&r, &l, "c/global/");
	assert_admitted(reserve(f, &r, 1, T0));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(10)));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(20)));
	assert_refused(reserve(f, &r, 1, T0 + SEC(30)), SEC(30), 0);
	assert_refused(reserve(f, &r, 1, T0 + SEC(60) - 1), US(1), 0);
	/* An event exactly one window old has left the window. */
	assert_int_equal(3, view_count(f, r.key, SEC(60), T0 + SEC(60) - 1));
	assert_int_equal(2, view_count(f, r.key, SEC(60), T0 + SEC(60)));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(60) + 1));
	/* In window now: 10 s, 20 s, 60.000001 s; 10 s leaves at 70 s. */
	assert_refused(reserve(f, &r, 1, T0 + SEC(60) + 2), SEC(10) - 2, 0);
	assert_int_equal(3, view_count(f, r.key, ALL, T0 + SEC(60) + 2));
}

static void test_retry_over_max(void **state)
{
	struct fixture *f = *state;
	struct cw_limit five = limit("c", 60, 5), two = limit("c", 60, 2);
	struct cw_limit_ref r5, r2;
	int64_t count, retry;
	int i;

	ref(&r5, &five, "c/global/");
	ref(&r2, &two, "c/global/");
	for (i = 0; i < 5; i++)
		assert_admitted(reserve(f, &r5, 1, T0 + SEC(10 * i)));
	/* Policy lowered to 2: three events must leave, the third oldest
	 * (30 s) does so at 90 s. */
	assert_refused(reserve(f, &r2, 1, T0 + SEC(45)), SEC(45), 0);
	assert_int_equal(0, f->v.window(f->v.ctx, r2.key, SEC(60),
					T0 + SEC(45), 2, &count, &retry));
	assert_int_equal(5, count);
	assert_int_equal(SEC(45), retry);
	assert_int_equal(0, f->v.window(f->v.ctx, r2.key, SEC(60),
					T0 + SEC(45), 4, &count, &retry));
	assert_int_equal(5, count);
	assert_int_equal(SEC(25), retry);
	assert_int_equal(0, f->v.window(f->v.ctx, r2.key, SEC(60),
					T0 + SEC(45), 6, &count, &retry));
	assert_int_equal(5, count);
	assert_int_equal(0, retry);
}

static void test_max_zero(void **state)
{
	struct fixture *f = *state;
	struct cw_limit open = limit("a", 60, 10), shut = limit("b", 60, 0);
	struct cw_limit_ref r[2];

	ref(&r[0], &open, "a/global/");
	ref(&r[1], &shut, "b/global/");
	assert_refused(reserve(f, r, 2, T0), SEC(60), 1);
	assert_refused(reserve(f, &r[1], 1, T0 + SEC(1000)), SEC(60), 0);
	assert_int_equal(0, view_count(f, r[0].key, ALL, T0 + SEC(1000)));
	assert_int_equal(0, view_count(f, r[1].key, ALL, T0 + SEC(1000)));
}

static void test_future_events(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l = limit("c", 10, 2), tiny = limit("c", 1, 2);
	struct cw_limit_ref r, rt;

	ref(&r, &l, "c/global/");
	ref(&rt, &tiny, "c/global/");
	assert_admitted(reserve(f, &r, 1, T0 + SEC(100)));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(101)));
	/* The clock stepped back 50 s: both events still count, and the
	 * older leaves the 10 s window at 110 s. */
	assert_refused(reserve(f, &r, 1, T0 + SEC(50)), SEC(60), 0);
	assert_refused(reserve(f, &rt, 1, T0 + SEC(50)), SEC(51), 0);
	assert_int_equal(2, view_count(f, r.key, US(1), T0));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(111)));
}

static void test_shared_key(void **state)
{
	struct fixture *f = *state;
	struct cw_limit a = limit("c", 10, 3), b = limit("c", 60, 5);
	struct cw_limit_ref r[2];

	ref(&r[0], &a, "c/grant/local");
	ref(&r[1], &b, "c/grant/local");
	assert_admitted(reserve(f, r, 2, T0));
	assert_admitted(reserve(f, r, 2, T0 + SEC(1)));
	assert_admitted(reserve(f, r, 2, T0 + SEC(2)));
	/* One event per call, not one per limit. */
	assert_int_equal(3, view_count(f, r[0].key, ALL, T0 + SEC(2)));
	assert_refused(reserve(f, r, 2, T0 + SEC(3)), SEC(7), 0);
	assert_admitted(reserve(f, r, 2, T0 + SEC(10)));
	assert_admitted(reserve(f, r, 2, T0 + SEC(11)));
	/* Both refuse; the longer wait (48.5 s against 0.5 s) is reported. */
	assert_refused(reserve(f, r, 2, T0 + SEC(11.5)), SEC(48.5), 1);
	assert_refused(reserve(f, r, 2, T0 + SEC(12)), SEC(48), 1);
	assert_int_equal(5, view_count(f, r[0].key, ALL, T0 + SEC(12)));
}

static void test_all_or_nothing(void **state)
{
	struct fixture *f = *state;
	struct cw_limit a = limit("a", 60, 5), b = limit("b", 60, 1);
	struct cw_limit_ref r[2];

	ref(&r[0], &a, "a/global/");
	ref(&r[1], &b, "b/session/s1");
	assert_admitted(reserve(f, r, 2, T0));
	assert_refused(reserve(f, r, 2, T0 + SEC(1)), SEC(59), 1);
	assert_refused(reserve(f, r, 2, T0 + SEC(2)), SEC(58), 1);
	assert_int_equal(1, view_count(f, r[0].key, ALL, T0 + SEC(2)));
	assert_int_equal(1, view_count(f, r[1].key, ALL, T0 + SEC(2)));
	/* The first limit alone still has room for four. */
	assert_admitted(reserve(f, r, 1, T0 + SEC(3)));
	assert_int_equal(2, view_count(f, r[0].key, ALL, T0 + SEC(3)));
}

static void test_release(void **state)
{
	struct fixture *f = *state;
	struct cw_limit a = limit("a", 60, 3), b = limit("b", 60, 10);
	struct cw_limit_ref r[2];
	struct cw_error err;
	int64_t count, retry;

	ref(&r[0], &a, "a/global/");
	ref(&r[1], &b, "b/global/");
	assert_admitted(reserve_id(f, r, 2, T0, "r1"));
	assert_admitted(reserve_id(f, r, 2, T0 + SEC(1), "r2"));
	assert_admitted(reserve_id(f, r, 2, T0 + SEC(2), "r3"));
	assert_refused(reserve_id(f, r, 2, T0 + SEC(3), "r4"), SEC(57), 0);

	assert_int_equal(0, cw_rate_release(f->s, "r2", &err));
	assert_int_equal(2, view_count(f, r[0].key, ALL, T0 + SEC(3)));
	assert_int_equal(2, view_count(f, r[1].key, ALL, T0 + SEC(3)));
	assert_admitted(reserve_id(f, r, 2, T0 + SEC(3), "r5"));

	/* Unknown or already released ids change nothing. */
	assert_int_equal(0, cw_rate_release(f->s, "nope", &err));
	assert_int_equal(0, cw_rate_release(f->s, "r2", &err));
	assert_int_equal(3, view_count(f, r[0].key, ALL, T0 + SEC(4)));
	/* Left: r1 (0 s), r3, r5. Had r1 gone, the wait would be 57 s. */
	assert_int_equal(0, f->v.window(f->v.ctx, r[0].key, SEC(60),
					T0 + SEC(4), 3, &count, &retry));
	assert_int_equal(3, count);
	assert_int_equal(SEC(56), retry);
	assert_int_equal(0, f->v.window(f->v.ctx, r[0].key, SEC(60),
					T0 + SEC(4), 2, &count, &retry));
	assert_int_equal(SEC(58), retry);
}

/* The view is what cw_decide() sees; reserve must agree with it. */
static void test_view_agrees(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l[3] = { limit("a", 10, 3), limit("a", 30, 5),
				 limit("b", 5, 2) };
	struct cw_limit_ref r[3];
	uint32_t seed = 12345;
	int64_t now = T0, count, retry, worst;
	size_t i, worst_i;
	int step, admitted = 0, refused = 0;

	ref(&r[0], &l[0], "a/global/");
	ref(&r[1], &l[1], "a/global/");
	ref(&r[2], &l[2], "b/global/");
	for (step = 0; step < 300; step++) {
		struct outcome o;

		seed = seed * 1103515245u + 12345u;
		/* Mostly forward by up to 3 s, sometimes back by up to 2 s. */
		if ((seed >> 16) % 10 == 0)
			now -= (int64_t)((seed >> 8) % 2000000);
		else
			now += (int64_t)((seed >> 8) % 3000000);
		worst = -1;
		worst_i = 0;
		for (i = 0; i < 3; i++) {
			assert_int_equal(0, f->v.window(f->v.ctx, r[i].key,
							l[i].window_s * 1000000,
							now, l[i].max, &count,
							&retry));
			if (count >= l[i].max && retry > worst) {
				worst = retry;
				worst_i = i;
			}
			if (count < l[i].max)
				assert_int_equal(0, retry);
			else
				assert_true(retry > 0);
		}
		o = reserve(f, r, 3, now);
		if (worst < 0) {
			assert_admitted(o);
			admitted++;
		} else {
			assert_refused(o, worst, worst_i);
			refused++;
		}
	}
	/* The sequence exercised both outcomes. */
	assert_true(admitted > 20);
	assert_true(refused > 20);
}

static void test_prune_horizon(void **state)
{
	struct fixture *f = *state;
	struct cw_limit shortl = limit("c", 10, 3), longl = limit("c", 3600, 100);
	struct cw_limit_ref both[2], one;

	ref(&both[0], &shortl, "c/global/");
	ref(&both[1], &longl, "c/global/");
	ref(&one, &shortl, "c/global/");
	assert_admitted(reserve(f, both, 2, T0));
	/* A policy that only knows the 10 s limit must not drop what the
	 * hour needs. */
	assert_admitted(reserve(f, &one, 1, T0 + SEC(20)));
	assert_admitted(reserve(f, &one, 1, T0 + SEC(40)));
	assert_int_equal(3, view_count(f, one.key, SEC(3600), T0 + SEC(60)));
	assert_admitted(reserve(f, both, 2, T0 + SEC(60)));
	assert_int_equal(4, view_count(f, one.key, ALL, T0 + SEC(60)));
	/* Past the hour, events older than it go: 0 s and 20 s. */
	assert_admitted(reserve(f, &one, 1, T0 + SEC(3630)));
	assert_int_equal(3, view_count(f, one.key, ALL, T0 + SEC(3630)));
}

static void test_prune_once_a_second(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l = limit("c", 10, 100);
	struct cw_limit_ref r;

	ref(&r, &l, "c/global/");
	assert_admitted(reserve(f, &r, 1, T0));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(0.5)));
	/* A second after the last prune: the event at 0 s goes. */
	assert_admitted(reserve(f, &r, 1, T0 + SEC(10)));
	assert_int_equal(2, view_count(f, r.key, ALL, T0 + SEC(10)));
	/* 0.9 s later the one at 0.5 s has expired: it no longer counts,
	 * but stays stored until the next prune... */
	assert_admitted(reserve(f, &r, 1, T0 + SEC(10.9)));
	assert_int_equal(2, view_count(f, r.key, SEC(10), T0 + SEC(10.9)));
	assert_int_equal(3, view_count(f, r.key, ALL, T0 + SEC(10.9)));
	/* ...a second after the last one. */
	assert_admitted(reserve(f, &r, 1, T0 + SEC(11)));
	assert_int_equal(3, view_count(f, r.key, ALL, T0 + SEC(11)));
}

static void test_storage_bounded(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l = limit("c", 10, 3), s = limit("s", 60, 5);
	struct cw_limit_ref r, rs;
	char key[64];
	int i, admitted = 0;

	ref(&r, &l, "c/global/");
	for (i = 0; i < 1000; i++) {
		if (!reserve(f, &r, 1, T0 + SEC(i)).ret)
			admitted++;
		/* Nothing older than the horizon, nothing for refusals. */
		assert_in_range(view_count(f, r.key, ALL, T0 + SEC(i)), 1, 3);
	}
	assert_int_equal(300, admitted);

	/* Keys that are never used again (one per session) go too. */
	for (i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "s/session/%d", i);
		ref(&rs, &s, key);
		assert_admitted(reserve(f, &rs, 1, T0 + SEC(i)));
	}
	assert_int_equal(1, view_count(f, "s/session/49", ALL, T0 + SEC(100)));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(5000)));
	for (i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "s/session/%d", i);
		assert_int_equal(0, view_count(f, key, ALL, T0 + SEC(5000)));
	}
}

static void test_invalid(void **state)
{
	struct fixture *f = *state;
	struct cw_limit neg = limit("c", 60, -1), ok = limit("c", 60, 1);
	struct cw_limit_ref r;
	struct cw_error err;
	int64_t count, retry, rt;
	size_t which;

	ref(&r, &ok, "c/global/");
	assert_int_equal(-EINVAL, cw_rate_reserve(f->s, &r, 1, T0, NULL, &rt,
						  &which, &err));
	r.limit = NULL;
	assert_int_equal(-EINVAL, cw_rate_reserve(f->s, &r, 1, T0, "x", &rt,
						  &which, &err));
	ref(&r, &neg, "c/global/");
	assert_int_equal(-EINVAL, cw_rate_reserve(f->s, &r, 1, T0, "x", &rt,
						  &which, &err));
	memset(r.key, 'k', sizeof(r.key));
	r.limit = &ok;
	assert_int_equal(-EINVAL, cw_rate_reserve(f->s, &r, 1, T0, "x", &rt,
						  &which, &err));
	assert_int_equal(-EINVAL, f->v.window(f->v.ctx, "c/global/", SEC(60),
					      T0, -1, &count, &retry));
	/* No refs: nothing to limit. */
	assert_int_equal(0, cw_rate_reserve(f->s, NULL, 0, T0, "x", &rt,
					    &which, &err));
	assert_int_equal(0, view_count(f, "c/global/", ALL, T0));
}

/* ---- SQLite only ------------------------------------------------------ */

static void test_sqlite_durable(void **state)
{
	struct cw_limit l = limit("c", 60, 3), longl = limit("c", 3600, 100);
	struct cw_limit_ref r, both[2];
	struct fixture *f = *state;

	ref(&r, &l, "c/global/");
	ref(&both[0], &l, "c/global/");
	ref(&both[1], &longl, "c/global/");

	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	assert_admitted(reserve(f, both, 2, T0));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(10)));
	assert_admitted(reserve(f, &r, 1, T0 + SEC(20)));
	close_store(f);

	/* A restart does not reset counters. */
	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	assert_refused(reserve(f, &r, 1, T0 + SEC(30)), SEC(30), 0);
	assert_int_equal(3, view_count(f, r.key, SEC(60), T0 + SEC(30)));
	close_store(f);

	/* Nor does it forget the hour horizon recorded before it. */
	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	assert_admitted(reserve(f, &r, 1, T0 + SEC(300)));
	assert_int_equal(4, view_count(f, r.key, SEC(3600), T0 + SEC(300)));
	close_store(f);
}

/* cachestat(2) (Linux 6.5), not yet in these headers: how many of a
 * file's cached pages are dirty, i.e. written but not yet flushed. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct cs_range { uint64_t off, len; };
struct cs_stat { uint64_t cache, dirty, writeback, evicted, recent; };

/* Dirty or in-writeback pages of path, or -errno. */
static int64_t unflushed_pages(const char *path)
{
	struct cs_range r = { 0, 0 };	/* len 0: to the end */
	struct cs_stat cs;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long rc;

	if (fd < 0)
		return -errno;
	memset(&cs, 0, sizeof(cs));
	rc = syscall(__NR_cachestat, fd, &r, &cs, 0);
	close(fd);
	if (rc < 0)
		return -errno;
	return (int64_t)(cs.dirty + cs.writeback);
}

/* A deferred reservation is committed (another agent counts it at once)
 * but left in the page cache; cw_rate_sync flushes it, and a plain
 * reservation is flushed before it returns. */
static void test_sqlite_deferred_sync(void **state)
{
	struct cw_limit l = limit("c", 60, 2);
	struct cw_limit_ref r;
	struct fixture *f = *state;
	struct cw_rate_store *other;
	struct cw_error err;
	int64_t retry = 0;
	size_t which = 0;
	char wal[128];
	int64_t n;

	ref(&r, &l, "c/global/");
	snprintf(wal, sizeof(wal), "%s/ratelimit.db-wal", f->dir);
	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	n = unflushed_pages(wal);
	if (n == -ENOSYS) {
		print_message("# skipped: cachestat(2) is missing (Linux < "
			      "6.5): cannot see which pages are flushed\n");
		skip();
	}
	assert_true(n >= 0);
	other = open_sqlite_or_fail(f->dir);
	/* Nothing pending: a sync is a no-op that succeeds. */
	assert_int_equal(0, cw_rate_sync(f->s, NULL));

	memset(&err, 0, sizeof(err));
	assert_int_equal(0, cw_rate_reserve_flags(f->s, &r, 1, T0, "d1",
						  CW_RATE_DEFER_SYNC, &retry,
						  &which, &err));
	assert_true(unflushed_pages(wal) > 0);
	assert_int_equal(0, cw_rate_sync(f->s, &err));
	assert_int_equal(0, unflushed_pages(wal));

	/* The other agent sees it before any flush. */
	assert_int_equal(0, cw_rate_reserve_flags(f->s, &r, 1, T0 + SEC(1),
						  "d2", CW_RATE_DEFER_SYNC,
						  &retry, &which, &err));
	assert_true(unflushed_pages(wal) > 0);
	assert_int_equal(-EAGAIN,
			 cw_rate_reserve(other, &r, 1, T0 + SEC(2), "o1",
					 &retry, &which, &err));
	assert_int_equal(SEC(58), retry);
	assert_int_equal(0, cw_rate_sync(f->s, &err));
	assert_int_equal(0, unflushed_pages(wal));

	/* Without the flag, durable on return. */
	assert_int_equal(0, cw_rate_release(f->s, "d2", &err));
	assert_int_equal(0, cw_rate_reserve(f->s, &r, 1, T0 + SEC(3), "p1",
					    &retry, &which, &err));
	assert_int_equal(0, unflushed_pages(wal));
	cw_rate_close(other);
	close_store(f);
}

static void test_sqlite_modes(void **state)
{
	struct cw_limit l = limit("c", 60, 3);
	struct cw_limit_ref r;
	struct fixture *f = *state;
	const char *base = f->dir;
	char dir[128], path[192];
	struct stat st;
	mode_t old;

	snprintf(dir, sizeof(dir), "%s/state/nested/", base);
	old = umask(022);
	f->s = open_sqlite_or_fail(dir);
	umask(old);
	f->v = cw_rate_view(f->s);
	ref(&r, &l, "c/global/");
	assert_admitted(reserve(f, &r, 1, T0));

	snprintf(path, sizeof(path), "%s/state", base);
	assert_int_equal(0, stat(path, &st));
	assert_int_equal(0700, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/state/nested", base);
	assert_int_equal(0, stat(path, &st));
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(0700, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/state/nested/ratelimit.db", base);
	assert_int_equal(0, stat(path, &st));
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(0600, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/state/nested/ratelimit.db-wal", base);
	assert_int_equal(0, stat(path, &st));
	assert_int_equal(0600, st.st_mode & 07777);
	close_store(f);

	/* A database left with a wider mode is tightened on open. */
	snprintf(path, sizeof(path), "%s/state/nested/ratelimit.db", base);
	assert_int_equal(0, chmod(path, 0644));
	f->s = open_sqlite_or_fail(dir);
	assert_int_equal(0, stat(path, &st));
	assert_int_equal(0600, st.st_mode & 07777);
	close_store(f);
}

static void test_sqlite_not_a_dir(void **state)
{
	struct fixture *f = *state;
	const char *base = f->dir;
	char path[128], msg[1024];
	struct cw_error err;
	int fd;

	snprintf(path, sizeof(path), "%s/plainfile", base);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);

	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_rate_open_sqlite(path, &err));
	assert_int_equal(ENOTDIR, errno);
	cw_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, "not a directory"));

	/* Also when it is a component in the middle. */
	snprintf(path, sizeof(path), "%s/plainfile/sub", base);
	memset(&err, 0, sizeof(err));
	assert_null(cw_rate_open_sqlite(path, &err));
	assert_int_equal(ENOTDIR, errno);
	cw_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "plainfile"));
}

static void write_file(const char *path, const void *p, size_t n, off_t at,
		       int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0600);

	assert_true(fd >= 0);
	assert_int_equal((ssize_t)n, pwrite(fd, p, n, at));
	close(fd);
}

static void test_sqlite_corrupt(void **state)
{
	struct cw_limit l = limit("c", 86400, 100000);
	struct cw_limit_ref r;
	struct fixture *f = *state;
	char path[128], msg[1024], junk[16384];
	struct cw_error err;
	struct outcome o;
	struct stat st;
	int i, ret;

	snprintf(path, sizeof(path), "%s/ratelimit.db", f->dir);

	/* Not a database at all. */
	memset(junk, 'x', sizeof(junk));
	write_file(path, junk, 4096, 0, O_TRUNC);
	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_rate_open_sqlite(f->dir, &err));
	assert_int_equal(EBADMSG, errno);
	cw_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, "not a database"));
	assert_int_equal(0, unlink(path));

	/* A real database with its pages scribbled over. */
	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	for (i = 0; i < 2000; i++) {
		char key[128];

		snprintf(key, sizeof(key), "c/session/%0100d", i % 50);
		ref(&r, &l, key);
		assert_admitted(reserve(f, &r, 1, T0 + i));
	}
	close_store(f);
	assert_int_equal(0, stat(path, &st));
	assert_true(st.st_size > 8 * 4096);
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	write_file(path, junk, sizeof(junk), 4096, 0);

	memset(&err, 0, sizeof(err));
	f->s = cw_rate_open_sqlite(f->dir, &err);
	if (!f->s) {
		assert_int_equal(EBADMSG, errno);
		cw_error_format(&err, msg, sizeof(msg));
		assert_non_null(strstr(msg, path));
		assert_non_null(strstr(msg, "corrupt"));
	} else {
		/* Damage the quick check missed must still be an error. */
		ref(&r, &l, "c/session/x");
		memset(&err, 0, sizeof(err));
		ret = cw_rate_reserve(f->s, &r, 1, T0, "x", &o.retry, &o.which,
				      &err);
		assert_true(ret < 0);
		assert_non_null(strstr(err.source, "ratelimit.db"));
		close_store(f);
	}
}

static void test_sqlite_newer_schema(void **state)
{
	struct fixture *f = *state;
	const char *dir = f->dir;
	char path[128], msg[1024];
	struct cw_error err;
	sqlite3 *db;

	f->s = open_sqlite_or_fail(dir);
	close_store(f);
	snprintf(path, sizeof(path), "%s/ratelimit.db", dir);
	assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
	assert_int_equal(SQLITE_OK, sqlite3_exec(db, "PRAGMA user_version = 99",
						 NULL, NULL, NULL));
	sqlite3_close(db);

	memset(&err, 0, sizeof(err));
	assert_null(cw_rate_open_sqlite(dir, &err));
	assert_int_equal(EPROTO, errno);
	cw_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, "schema version 99"));
}

#define NCHILD 4
#define PER_CHILD 50
#define SHARED_MAX 60

/* In a child: cmocka must not run, so failures are exit codes. */
static int child_reserve_loop(const char *dir, int id, int go_fd)
{
	struct cw_limit l = limit("c", 60, SHARED_MAX);
	struct cw_limit_ref r;
	struct cw_rate_store *s;
	struct cw_error err;
	int64_t retry;
	size_t which;
	char rid[32], c;
	int i, ret, admitted = 0;

	if (read(go_fd, &c, 1) < 0)
		return 201;
	s = cw_rate_open_sqlite(dir, &err);
	if (!s) {
		fprintf(stderr, "child %d: open: %s\n", id, err.text);
		return 202;
	}
	ref(&r, &l, "c/global/");
	for (i = 0; i < PER_CHILD; i++) {
		snprintf(rid, sizeof(rid), "c%d-%d", id, i);
		ret = cw_rate_reserve(s, &r, 1, T0, rid, &retry, &which, &err);
		if (!ret) {
			admitted++;
		} else if (ret != -EAGAIN || retry != SEC(60)) {
			fprintf(stderr, "child %d: reserve: %d %s\n", id, ret,
				err.text);
			cw_rate_close(s);
			return 203;
		}
	}
	cw_rate_close(s);
	return admitted;
}

static void test_sqlite_concurrent(void **state)
{
	struct fixture *f = *state;
	pid_t pids[NCHILD];
	int go[2], i, status, total = 0;

	assert_int_equal(0, pipe(go));
	for (i = 0; i < NCHILD; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			close(go[1]);
			_exit(child_reserve_loop(f->dir, i, go[0]));
		}
	}
	close(go[0]);
	/* EOF on the pipe releases every child at once. */
	close(go[1]);
	for (i = 0; i < NCHILD; i++) {
		assert_int_equal(pids[i], waitpid(pids[i], &status, 0));
		assert_true(WIFEXITED(status));
		assert_in_range(WEXITSTATUS(status), 0, PER_CHILD);
		total += WEXITSTATUS(status);
	}
	assert_int_equal(SHARED_MAX, total);

	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	assert_int_equal(SHARED_MAX, view_count(f, "c/global/", ALL, T0));
	close_store(f);
}

static void test_sqlite_sigkill(void **state)
{
	struct cw_limit big = limit("c", 86400, 1000000);
	struct cw_limit_ref r;
	struct fixture *f = *state;
	int64_t reported = 0, stored;
	int p[2], status;
	char buf[256];
	ssize_t n;
	pid_t pid;

	ref(&r, &big, "c/global/");
	assert_int_equal(0, pipe(p));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cw_rate_store *s;
		struct cw_error err;
		int64_t retry, i;
		size_t which;
		char rid[32];

		close(p[0]);
		s = cw_rate_open_sqlite(f->dir, &err);
		if (!s)
			_exit(1);
		for (i = 0;; i++) {
			snprintf(rid, sizeof(rid), "k%lld", (long long)i);
			if (cw_rate_reserve(s, &r, 1, T0 + i, rid, &retry,
					    &which, &err))
				_exit(2);
			/* One byte per committed reservation. */
			if (write(p[1], "+", 1) != 1)
				_exit(3);
		}
	}
	close(p[1]);
	while (reported < 40) {
		n = read(p[0], buf, sizeof(buf));
		assert_true(n > 0);
		reported += n;
	}
	assert_int_equal(0, kill(pid, SIGKILL));
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFSIGNALED(status));
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		reported += n;
	close(p[0]);

	f->s = open_sqlite_or_fail(f->dir);
	f->v = cw_rate_view(f->s);
	stored = view_count(f, r.key, ALL, T0 + SEC(1));
	/* Killed between commit and report at most once. */
	assert_in_range(stored, reported, reported + 1);

	/* And it keeps counting: exactly two more fit under stored + 2. */
	{
		struct cw_limit tight = limit("c", 86400, stored + 2);

		ref(&r, &tight, "c/global/");
		assert_admitted(reserve(f, &r, 1, T0 + SEC(1)));
		assert_admitted(reserve(f, &r, 1, T0 + SEC(2)));
		assert_int_equal(-EAGAIN, reserve(f, &r, 1, T0 + SEC(3)).ret);
	}
	close_store(f);
}

/* ---- every store against the others -------------------------------------- */

#define SAME_STEPS 300

static struct cw_rate_store *open_spec(const char *spec)
{
	struct cw_rate_store *s;
	struct cw_error err;

	memset(&err, 0, sizeof(err));
	s = cw_rate_open(spec, &err);
	if (!s)
		fail_msg("cw_rate_open(%s): %s", spec, err.text);
	return s;
}

/* A small deterministic generator, so a failure replays. */
static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

static struct outcome reserve_in(struct cw_rate_store *s,
				 const struct cw_limit_ref *refs, size_t n,
				 int64_t now, const char *rid, unsigned flags)
{
	struct outcome o = { .retry = -1, .which = 99 };
	struct cw_error err;

	memset(&err, 0, sizeof(err));
	o.ret = cw_rate_reserve_flags(s, refs, n, now, rid, flags, &o.retry,
				      &o.which, &err);
	if (o.ret && o.ret != -EAGAIN)
		fail_msg("reserve %s: %d: %s", rid, o.ret, err.text);
	return o;
}

static void assert_same_views(struct cw_rate_store *const *s, size_t ns,
			      const char *const *keys, size_t nkeys,
			      int64_t now)
{
	static const int64_t windows[] = { 0, SEC(1), SEC(10), SEC(60), ALL };
	int64_t count[2], retry[2];
	size_t k, w, i;

	for (k = 0; k < nkeys; k++) {
		for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
			for (i = 0; i < ns; i++) {
				struct cw_counter_view v = cw_rate_view(s[i]);

				assert_int_equal(0, v.window(v.ctx, keys[k],
							     windows[w], now, 2,
							     &count[i],
							     &retry[i]));
			}
			assert_int_equal(count[0], count[1]);
			assert_int_equal(retry[0], retry[1]);
		}
	}
}

/* The same reservations, releases and reads, through each store: every
 * answer must be the same. */
static void test_stores_agree(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l[] = {
		limit("a", 1, 2), limit("b", 60, 5), limit("b", 10, 3),
		limit("z", 5, 0), limit("c", 3, 1), limit("d", 0, 1),
	};
	const char *const keys[] = { "a/global/", "b/global/", "b/grant/x",
				     "z/global/", "c/session/s1", "d/global/" };
	/* Which limit each key of keys[] is checked by. */
	const size_t limit_of[] = { 0, 1, 2, 3, 4, 5 };
	struct cw_rate_store *s[2];
	struct cw_limit_ref refs[4];
	struct outcome o[2];
	unsigned seed = 17, admitted = 0, refused = 0;
	char spec[128], rid[32];
	int64_t now = T0;
	size_t step, i, n, k;

	snprintf(spec, sizeof(spec), "sqlite:%s", f->dir);
	s[0] = open_spec("memory:");
	s[1] = open_spec(spec);
	for (step = 0; step < SAME_STEPS; step++) {
		unsigned r = next_rand(&seed) % 100;

		/* Mostly forward, now and then the clock steps back; on a
		 * 0.1 s grid, so events often sit on a window's edge. */
		if (next_rand(&seed) % 10)
			now += SEC(0.1) * (next_rand(&seed) % 15);
		else
			now -= SEC(0.1) * (next_rand(&seed) % 5);
		if (r < 80) {
			n = 1 + next_rand(&seed) % 3;
			for (i = 0; i < n; i++) {
				k = next_rand(&seed) % 6;
				if (k == 3 && next_rand(&seed) % 4)
					k = 0; /* max 0 refuses: rarely */
				ref(&refs[i], &l[limit_of[k]], keys[k]);
			}
			if (next_rand(&seed) % 3 == 0) {
				/* Two limits of one counter on one key. */
				ref(&refs[n++], &l[2], keys[1]);
			}
			snprintf(rid, sizeof(rid), "r%zu", step);
			for (i = 0; i < 2; i++)
				o[i] = reserve_in(s[i], refs, n, now, rid,
						  CW_RATE_DEFER_SYNC);
			assert_int_equal(o[0].ret, o[1].ret);
			assert_int_equal(o[0].retry, o[1].retry);
			assert_int_equal(o[0].which, o[1].which);
			if (o[0].ret)
				refused++;
			else
				admitted++;
		} else if (r < 90) {
			snprintf(rid, sizeof(rid), "r%u",
				 next_rand(&seed) % (unsigned)(step + 1));
			for (i = 0; i < 2; i++)
				assert_int_equal(0,
						 cw_rate_release(s[i], rid, NULL));
		} else {
			for (i = 0; i < 2; i++)
				assert_int_equal(0, cw_rate_sync(s[i], NULL));
			assert_same_views(s, 2, keys, 6, now);
		}
	}
	assert_same_views(s, 2, keys, 6, now);
	assert_true(admitted > SAME_STEPS / 10);
	assert_true(refused > SAME_STEPS / 10);
	cw_rate_close(s[1]);
	cw_rate_close(s[0]);
}

static void test_open_spec(void **state)
{
	struct fixture *f = *state;
	struct cw_limit l = limit("c", 60, 1);
	struct cw_limit_ref r[CW_MAX_CALL_LIMITS + 1];
	struct cw_rate_store *s;
	struct cw_error err;
	char spec[128];
	int64_t rt;
	size_t w, i;

	memset(&err, 0, sizeof(err));
	errno = 0;
	assert_null(cw_rate_open("carrier-pigeon:x", &err));
	assert_int_equal(EINVAL, errno);
	assert_non_null(strstr(err.text, "carrier-pigeon"));
	assert_null(cw_rate_open(NULL, &err));
	assert_int_equal(EINVAL, errno);
	assert_null(cw_rate_open("sqlite:", &err));
	assert_null(cw_rate_open("sqlite", &err));

	snprintf(spec, sizeof(spec), "sqlite:%s", f->dir);
	s = open_spec(spec);
	cw_rate_close(s);
	snprintf(spec, sizeof(spec), "%s/ratelimit.db", f->dir);
	assert_int_equal(0, access(spec, F_OK));

	/* A call has at most CW_MAX_CALL_LIMITS limits. */
	s = open_spec("memory");
	for (i = 0; i < CW_MAX_CALL_LIMITS + 1; i++)
		ref(&r[i], &l, "c/global/");
	assert_int_equal(-E2BIG, cw_rate_reserve(s, r, CW_MAX_CALL_LIMITS + 1,
						 T0, "x", &rt, &w, &err));
	assert_int_equal(0, cw_rate_reserve(s, r, CW_MAX_CALL_LIMITS, T0, "x",
					    &rt, &w, &err));
	cw_rate_close(s);
}

static enum store_kind kind_memory = STORE_MEMORY;
static enum store_kind kind_sqlite = STORE_SQLITE;

#define BOTH(fn)                                                         \
	{ #fn "/memory", fn, setup, teardown, &kind_memory },            \
	{ #fn "/sqlite", fn, setup, teardown, &kind_sqlite }

#define SQLITE(fn) cmocka_unit_test_setup_teardown(fn, setup_dir, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_exact_window),
		BOTH(test_retry_over_max),
		BOTH(test_max_zero),
		BOTH(test_future_events),
		BOTH(test_shared_key),
		BOTH(test_all_or_nothing),
		BOTH(test_release),
		BOTH(test_view_agrees),
		BOTH(test_prune_horizon),
		BOTH(test_prune_once_a_second),
		BOTH(test_storage_bounded),
		BOTH(test_invalid),
		SQLITE(test_sqlite_durable),
		SQLITE(test_sqlite_deferred_sync),
		SQLITE(test_sqlite_modes),
		SQLITE(test_sqlite_not_a_dir),
		SQLITE(test_sqlite_corrupt),
		SQLITE(test_sqlite_newer_schema),
		SQLITE(test_sqlite_concurrent),
		SQLITE(test_sqlite_sigkill),
		SQLITE(test_stores_agree),
		SQLITE(test_open_spec),
	};

	return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
