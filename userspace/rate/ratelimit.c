// SPDX-License-Identifier: Apache-2.0
/*
 * Rate limits: exact sliding windows over an event log.
 *
 * The window arithmetic and the reservation protocol are written once, in
 * this file's first half. A store only answers "how many events of a key
 * are newer than t" and "which is the n-th oldest of them", and applies
 * writes inside its own transaction, so the SQLite and memory stores cannot
 * disagree about what a window holds.
 *
 * Pruning: every counter name keeps a durable horizon, the longest window
 * ever checked for it, and events older than their counter's horizon are
 * deleted after each reservation. A key is a counter name plus a scope id
 * (cw_limit_key()), so a horizon per counter name covers every key built
 * from it (never less than a per-key horizon would keep), while the horizons
 * themselves stay as few as the counter names in the policies: per-session
 * keys come and go without leaving rows behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rate/ratelimit.h"
#include "lib/util.h"

#define RATE_DB_NAME "ratelimit.db"
#define RATE_SCHEMA_VERSION 1
#define RATE_BUSY_MS 10000
/* Cap so that now - window and ts + window stay far from overflow. */
#define RATE_MAX_WINDOW_US (INT64_MAX / 4)

struct rate_ops {
	int (*begin)(struct cw_rate_store *s, bool write,
		     struct cw_error *err);
	/* Commit, or roll back when !commit (never fails then). */
	int (*end)(struct cw_rate_store *s, bool commit, struct cw_error *err);
	/* Number of events of key stamped after after_us. */
	int (*count)(struct cw_rate_store *s, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err);
	/* Stamp of the n-th (0-based) oldest event of key after after_us. */
	int (*nth)(struct cw_rate_store *s, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err);
	/* Raise counter's horizon to at least window_us. */
	int (*horizon)(struct cw_rate_store *s, const char *counter,
		       int64_t window_us, struct cw_error *err);
	int (*insert)(struct cw_rate_store *s, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err);
	/* Drop events older than their horizon; the last write of a
	 * transaction. */
	int (*prune)(struct cw_rate_store *s, int64_t now_us,
		     struct cw_error *err);
	int (*release)(struct cw_rate_store *s, const char *rid,
		       struct cw_error *err);
	/* Makes committed transactions durable. */
	int (*sync)(struct cw_rate_store *s, struct cw_error *err);
	void (*close)(struct cw_rate_store *s);
};

struct cw_rate_store {
	const struct rate_ops *ops;
	/* One caller at a time: statements and undo logs are shared. */
	pthread_mutex_t lock;
	uint64_t committed, synced;	/* reservations */
	/* When this process last dropped expired events. */
	int64_t pruned_us;
	bool pruned;
};

/* Expired events no longer count, so at most one reservation a second drops
 * them: the prune's query is about a seventh of a reservation's time. */
#define RATE_PRUNE_EVERY_US 1000000

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b > 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* Paths longer than the field are cut; the text still says what failed. */
static void set_source(struct cw_error *err, const char *source)
{
	size_t n;

	if (!err)
		return;
	n = strnlen(source, sizeof(err->source) - 1);
	memcpy(err->source, source, n);
	err->source[n] = '\0';
}

static int64_t limit_window_us(const struct cw_limit *l)
{
	if (l->window_s > RATE_MAX_WINDOW_US / 1000000)
		return RATE_MAX_WINDOW_US;
	return l->window_s * 1000000;
}

/*
 * The window arithmetic, shared by reserve and the view. Counts key's events
 * in (now - window, +inf): a stamp later than now means the clock stepped
 * back, and such an event stays inside every window. When count >= max,
 * *retry_after_us is the time until count - max + 1 events have left the
 * window, i.e. until the (count - max + 1)-th oldest one has.
 */
static int rate_window(struct cw_rate_store *s, const char *key,
		       int64_t window_us, int64_t now_us, int64_t max,
		       int64_t *count, int64_t *retry_after_us,
		       struct cw_error *err)
{
	int64_t after, n = 0, ts = 0;
	int ret;

	*count = 0;
	*retry_after_us = 0;
	if (window_us < 0 || max < 0) {
		cw_error_set(err, "counter %s: negative window or max", key);
		return -EINVAL;
	}
	if (window_us > RATE_MAX_WINDOW_US)
		window_us = RATE_MAX_WINDOW_US;
	after = sat_sub(now_us, window_us);
	ret = s->ops->count(s, key, after, &n, err);
	if (ret)
		return ret;
	*count = n;
	if (n < max)
		return 0;
	if (max == 0) {
		*retry_after_us = window_us;
		return 0;
	}
	ret = s->ops->nth(s, key, after, n - max, &ts, err);
	if (ret)
		return ret;
	/* ts > after, hence this is > 0. */
	*retry_after_us = sat_sub(sat_add(ts, window_us), now_us);
	return 0;
}

static const char *ref_counter(const struct cw_limit_ref *r)
{
	return r->limit->counter ? r->limit->counter : r->key;
}

static int check_refs(const struct cw_limit_ref *refs, size_t nrefs,
		      struct cw_error *err)
{
	size_t i;

	for (i = 0; i < nrefs; i++) {
		const struct cw_limit *l = refs[i].limit;

		if (!l) {
			cw_error_set(err, "limit %zu: no limit", i);
			return -EINVAL;
		}
		if (strnlen(refs[i].key, sizeof(refs[i].key)) ==
		    sizeof(refs[i].key)) {
			cw_error_set(err, "limit %zu: key not terminated", i);
			return -EINVAL;
		}
		if (l->window_s < 0 || l->max < 0) {
			cw_error_set(err, "%s: negative window or max",
				     l->where ? l->where : refs[i].key);
			return -EINVAL;
		}
	}
	return 0;
}

/* Index of the first ref with the same key as refs[i]. */
static size_t first_of_key(const struct cw_limit_ref *refs, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(refs[j].key, refs[i].key))
			return j;
	return i;
}

/* Under s->lock. */
static int sync_locked(struct cw_rate_store *s, struct cw_error *err)
{
	uint64_t upto = s->committed;
	int ret;

	if (s->synced == upto)
		return 0;
	ret = s->ops->sync(s, err);
	if (!ret)
		s->synced = upto;
	return ret;
}

int cw_rate_sync(struct cw_rate_store *s, struct cw_error *err)
{
	int ret;

	if (!s) {
		cw_error_set(err, "rate sync: invalid arguments");
		return -EINVAL;
	}
	pthread_mutex_lock(&s->lock);
	ret = sync_locked(s, err);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int cw_rate_reserve(struct cw_rate_store *s, const struct cw_limit_ref *refs,
		    size_t nrefs, int64_t now_us, const char *reservation_id,
		    int64_t *retry_after_us, size_t *which,
		    struct cw_error *err)
{
	return cw_rate_reserve_flags(s, refs, nrefs, now_us, reservation_id, 0,
				     retry_after_us, which, err);
}

int cw_rate_reserve_flags(struct cw_rate_store *s,
			  const struct cw_limit_ref *refs, size_t nrefs,
			  int64_t now_us, const char *reservation_id,
			  unsigned flags, int64_t *retry_after_us,
			  size_t *which, struct cw_error *err)
{
	int64_t worst = -1, count, retry;
	size_t worst_i = 0, i, f;
	bool in_tx = false, prune;
	int ret;

	if (retry_after_us)
		*retry_after_us = 0;
	if (which)
		*which = 0;
	if (!s || (!refs && nrefs) || !reservation_id) {
		cw_error_set(err, "rate reserve: invalid arguments");
		return -EINVAL;
	}
	ret = check_refs(refs, nrefs, err);
	if (ret)
		return ret;
	if (!nrefs)
		return 0;

	pthread_mutex_lock(&s->lock);
	ret = s->ops->begin(s, true, err);
	if (ret)
		goto out;
	in_tx = true;

	for (i = 0; i < nrefs; i++) {
		ret = rate_window(s, refs[i].key,
				  limit_window_us(refs[i].limit), now_us,
				  refs[i].limit->max, &count, &retry, err);
		if (ret)
			goto out;
		if (count >= refs[i].limit->max && retry > worst) {
			worst = retry;
			worst_i = i;
		}
	}
	if (worst >= 0) {
		if (retry_after_us)
			*retry_after_us = worst;
		if (which)
			*which = worst_i;
		ret = -EAGAIN;
		goto out;
	}

	/* Events carry the counter name of the first ref of their key, so
	 * that name's horizon must cover every window checked on the key. */
	for (i = 0; i < nrefs; i++) {
		f = first_of_key(refs, i);
		ret = s->ops->horizon(s, ref_counter(&refs[f]),
				      limit_window_us(refs[i].limit), err);
		if (ret)
			goto out;
	}
	for (i = 0; i < nrefs; i++) {
		if (first_of_key(refs, i) != i)
			continue;
		ret = s->ops->insert(s, refs[i].key, ref_counter(&refs[i]),
				     now_us, reservation_id, err);
		if (ret)
			goto out;
	}
	prune = !s->pruned || now_us < s->pruned_us ||
		now_us - s->pruned_us >= RATE_PRUNE_EVERY_US;
	if (prune) {
		ret = s->ops->prune(s, now_us, err);
		if (ret)
			goto out;
	}
	ret = s->ops->end(s, true, err);
	in_tx = false;
	if (ret)
		goto out;
	s->committed++;
	if (prune) {
		s->pruned = true;
		s->pruned_us = now_us;
	}
	/* A failed sync fails the call, but the reservation stays counted
	 * (erring on the side of the limit). */
	if (!(flags & CW_RATE_DEFER_SYNC))
		ret = sync_locked(s, err);
out:
	if (in_tx)
		s->ops->end(s, false, NULL);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int cw_rate_release(struct cw_rate_store *s, const char *reservation_id,
		    struct cw_error *err)
{
	int ret;

	if (!s || !reservation_id) {
		cw_error_set(err, "rate release: invalid arguments");
		return -EINVAL;
	}
	pthread_mutex_lock(&s->lock);
	ret = s->ops->release(s, reservation_id, err);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static int rate_view_window(void *ctx, const char *key, int64_t window_us,
			    int64_t now_us, int64_t max, int64_t *count,
			    int64_t *retry_after_us)
{
	struct cw_rate_store *s = ctx;
	bool in_tx = false;
	int ret;

	*count = 0;
	*retry_after_us = 0;
	if (!s || !key)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = s->ops->begin(s, false, NULL);
	if (ret)
		goto out;
	in_tx = true;
	ret = rate_window(s, key, window_us, now_us, max, count,
			  retry_after_us, NULL);
	if (ret)
		goto out;
	ret = s->ops->end(s, true, NULL);
	in_tx = false;
out:
	if (in_tx)
		s->ops->end(s, false, NULL);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

struct cw_counter_view cw_rate_view(struct cw_rate_store *s)
{
	struct cw_counter_view v = { .window = rate_view_window, .ctx = s };

	return v;
}

void cw_rate_close(struct cw_rate_store *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	s->ops->close(s);
}

/* ---- SQLite store ------------------------------------------------------ */

enum {
	ST_BEGIN_WRITE,
	ST_BEGIN_READ,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_COUNT,
	ST_NTH,
	ST_HORIZON,
	ST_INSERT,
	ST_PRUNE,
	ST_RELEASE,
	ST_MAX,
};

static const char *const sql_stmts[ST_MAX] = {
	[ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
	[ST_BEGIN_READ] = "BEGIN DEFERRED",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_COUNT] = "SELECT count(*) FROM events WHERE key = ?1 AND ts > ?2",
	[ST_NTH] = "SELECT ts FROM events WHERE key = ?1 AND ts > ?2 "
		   "ORDER BY ts LIMIT 1 OFFSET ?3",
	[ST_HORIZON] = "INSERT INTO horizons(counter, window_us) "
		       "VALUES(?1, ?2) ON CONFLICT(counter) DO UPDATE "
		       "SET window_us = excluded.window_us "
		       "WHERE excluded.window_us > horizons.window_us",
	[ST_INSERT] = "INSERT INTO events(key, counter, ts, rid) "
		      "VALUES(?1, ?2, ?3, ?4)",
	/* CROSS JOIN keeps the few horizons as the outer loop, so each
	 * counter is one range of the (counter, ts) index. */
	[ST_PRUNE] = "DELETE FROM events WHERE rowid IN ("
		     "SELECT e.rowid FROM horizons AS h CROSS JOIN events AS e "
		     "ON e.counter = h.counter AND e.ts <= ?1 - h.window_us)",
	[ST_RELEASE] = "DELETE FROM events WHERE rid = ?1",
};

static const char sql_schema_v1[] =
	"CREATE TABLE events ("
	" key TEXT NOT NULL,"
	" counter TEXT NOT NULL,"
	" ts INTEGER NOT NULL,"
	" rid TEXT NOT NULL);"
	"CREATE INDEX events_key_ts ON events(key, ts);"
	"CREATE INDEX events_counter_ts ON events(counter, ts);"
	"CREATE INDEX events_rid ON events(rid);"
	"CREATE TABLE horizons ("
	" counter TEXT PRIMARY KEY NOT NULL,"
	" window_us INTEGER NOT NULL) WITHOUT ROWID;"
	"PRAGMA user_version = 1;";

struct sql_store {
	struct cw_rate_store base;
	sqlite3 *db;
	sqlite3_stmt *st[ST_MAX];
	char path[PATH_MAX];
};

static struct sql_store *to_sql(struct cw_rate_store *s)
{
	return (struct sql_store *)s;
}

static int sql_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/* Fills err with the database path and SQLite's message; returns -errno. */
static int sql_fail(struct sql_store *q, struct cw_error *err,
		    const char *what, int rc)
{
	const char *msg = q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc);

	if (err) {
		if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
			cw_error_set(err,
				     "rate-limit database is corrupt or not a "
				     "database (%s): %s; move it aside to start "
				     "with empty counters",
				     what, msg);
		else
			cw_error_set(err, "rate-limit database: %s: %s", what,
				     msg);
		set_source(err, q->path);
	}
	return sql_errno(rc);
}

/* Steps st; retries SQLITE_BUSY beyond what the busy handler waited (WAL
 * returns it without waiting in a few cases) until the busy timeout. */
static int sql_step(sqlite3_stmt *st)
{
	int64_t deadline = cw_mono_us() + (int64_t)RATE_BUSY_MS * 1000;
	struct timespec ts = { 0, 1000000 };
	int rc;

	for (;;) {
		rc = sqlite3_step(st);
		if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
			return rc;
		if (cw_mono_us() >= deadline)
			return rc;
		sqlite3_reset(st);
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < 50000000)
			ts.tv_nsec *= 2;
	}
}

/* Runs a prepared statement that returns no rows. */
static int sql_run(struct sql_store *q, int idx, const char *what,
		   struct cw_error *err)
{
	sqlite3_stmt *st = q->st[idx];
	int rc = sql_step(st);
	int ret = 0;

	if (rc != SQLITE_DONE)
		ret = sql_fail(q, err, what, rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int sql_begin(struct cw_rate_store *s, bool write,
		     struct cw_error *err)
{
	return sql_run(to_sql(s), write ? ST_BEGIN_WRITE : ST_BEGIN_READ,
		       "cannot begin transaction", err);
}

static int sql_end(struct cw_rate_store *s, bool commit, struct cw_error *err)
{
	struct sql_store *q = to_sql(s);
	int ret = 0;

	if (sqlite3_get_autocommit(q->db)) {
		if (!commit)
			return 0;
		/* SQLite already rolled back after an error. */
		cw_error_set(err, "rate-limit database: transaction lost");
		set_source(err, q->path);
		return -EIO;
	}
	if (commit)
		ret = sql_run(q, ST_COMMIT, "cannot commit", err);
	/* A failed COMMIT leaves the transaction open. */
	if ((!commit || ret) && !sqlite3_get_autocommit(q->db))
		sql_run(q, ST_ROLLBACK, "cannot roll back", NULL);
	return ret;
}

static int sql_count(struct cw_rate_store *s, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err)
{
	struct sql_store *q = to_sql(s);
	sqlite3_stmt *st = q->st[ST_COUNT];
	int ret = 0, rc;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, after_us);
	rc = sql_step(st);
	if (rc == SQLITE_ROW)
		*count = sqlite3_column_int64(st, 0);
	else
		ret = sql_fail(q, err, "cannot count events", rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int sql_nth(struct cw_rate_store *s, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err)
{
	struct sql_store *q = to_sql(s);
	sqlite3_stmt *st = q->st[ST_NTH];
	int ret = 0, rc;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, after_us);
	sqlite3_bind_int64(st, 3, n);
	rc = sql_step(st);
	if (rc == SQLITE_ROW)
		*ts = sqlite3_column_int64(st, 0);
	else if (rc == SQLITE_DONE)
		ret = sql_fail(q, err, "event vanished while counting",
			       SQLITE_CORRUPT);
	else
		ret = sql_fail(q, err, "cannot read events", rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int sql_horizon(struct cw_rate_store *s, const char *counter,
		       int64_t window_us, struct cw_error *err)
{
	struct sql_store *q = to_sql(s);

	sqlite3_bind_text(q->st[ST_HORIZON], 1, counter, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q->st[ST_HORIZON], 2, window_us);
	return sql_run(q, ST_HORIZON, "cannot record horizon", err);
}

static int sql_insert(struct cw_rate_store *s, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err)
{
	struct sql_store *q = to_sql(s);
	sqlite3_stmt *st = q->st[ST_INSERT];

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, counter, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ts);
	sqlite3_bind_text(st, 4, rid, -1, SQLITE_STATIC);
	return sql_run(q, ST_INSERT, "cannot record event", err);
}

static int sql_prune(struct cw_rate_store *s, int64_t now_us,
		     struct cw_error *err)
{
	struct sql_store *q = to_sql(s);

	sqlite3_bind_int64(q->st[ST_PRUNE], 1, now_us);
	return sql_run(q, ST_PRUNE, "cannot prune events", err);
}

static int sql_release(struct cw_rate_store *s, const char *rid,
		       struct cw_error *err)
{
	struct sql_store *q = to_sql(s);

	sqlite3_bind_text(q->st[ST_RELEASE], 1, rid, -1, SQLITE_STATIC);
	return sql_run(q, ST_RELEASE, "cannot release reservation", err);
}

/* Commits are not synced by SQLite (synchronous=NORMAL): this flushes
 * the WAL through SQLite's own file handle, which also makes a new WAL's
 * directory entry durable. A checkpoint syncs the WAL before it copies
 * frames out, so what this covered stays durable across WAL restarts. */
static int sql_sync(struct cw_rate_store *s, struct cw_error *err)
{
	struct sql_store *q = to_sql(s);
	sqlite3_file *wal = NULL;
	int rc;

	rc = sqlite3_file_control(q->db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
				  &wal);
	if (rc != SQLITE_OK || !wal || !wal->pMethods) {
		cw_error_set(err, "rate-limit database: no WAL file to sync");
		set_source(err, q->path);
		return -EIO;
	}
	rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
	if (rc != SQLITE_OK) {
		cw_error_set(err, "rate-limit database: syncing the WAL "
			     "failed: %s", sqlite3_errstr(rc));
		set_source(err, q->path);
		return sql_errno(rc);
	}
	return 0;
}

static void sql_close(struct cw_rate_store *s)
{
	struct sql_store *q = to_sql(s);
	int i;

	for (i = ST_MAX - 1; i >= 0; i--)
		sqlite3_finalize(q->st[i]);
	sqlite3_close_v2(q->db);
	free(q);
}

static const struct rate_ops sql_ops = {
	.begin = sql_begin,
	.end = sql_end,
	.count = sql_count,
	.nth = sql_nth,
	.horizon = sql_horizon,
	.insert = sql_insert,
	.prune = sql_prune,
	.release = sql_release,
	.sync = sql_sync,
	.close = sql_close,
};

/* mkdir -p; new directories get 0700. */
static int make_state_dir(const char *dir, struct cw_error *err)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t len;
	char *p;

	len = strlen(dir);
	if (!len || len >= sizeof(buf)) {
		cw_error_set(err, "state directory: invalid path");
		set_source(err, dir);
		return len ? -ENAMETOOLONG : -EINVAL;
	}
	memcpy(buf, dir, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (p = buf + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST) {
			int e = errno;

			cw_error_set(err, "cannot create state directory %s: %s",
				     buf, strerror(e));
			return -e;
		}
		if (last)
			break;
		*p = '/';
	}
	if (stat(buf, &st)) {
		int e = errno;

		cw_error_set(err, "state directory %s: %s", buf, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		cw_error_set(err,
			     "state directory %s exists and is not a directory",
			     buf);
		return -ENOTDIR;
	}
	return 0;
}

/* Creates the database file 0600 before SQLite does (it would use 0644);
 * SQLite gives the -wal and -shm files the database file's mode. */
static int make_db_file(const char *path, struct cw_error *err)
{
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		cw_error_set(err, "cannot open rate-limit database: %s",
			     strerror(-ret));
		goto out;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		cw_error_set(err, "cannot stat rate-limit database: %s",
			     strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		cw_error_set(err, "rate-limit database is not a regular file");
		goto out;
	}
	if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600)) {
		ret = -errno;
		cw_error_set(err, "cannot make rate-limit database 0600: %s",
			     strerror(-ret));
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		set_source(err, path);
	return ret;
}

/* Runs one statement; the first column of its first row, if any, goes to
 * out. */
static int sql_exec1(struct sql_store *q, const char *sql, const char *what,
		     char *out, size_t outlen, struct cw_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (out && outlen)
		out[0] = '\0';
	rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		ret = sql_fail(q, err, what, rc);
		goto out;
	}
	rc = sql_step(st);
	if (rc == SQLITE_ROW && out) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		snprintf(out, outlen, "%s", t ? (const char *)t : "");
	}
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		ret = sql_fail(q, err, what, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

static int sql_schema(struct sql_store *q, struct cw_error *err)
{
	char buf[32];
	bool in_tx = false;
	long version;
	int rc, ret;

	ret = sql_exec1(q, "BEGIN IMMEDIATE", "cannot lock for schema", NULL,
			0, err);
	if (ret)
		goto out;
	in_tx = true;
	ret = sql_exec1(q, "PRAGMA user_version", "cannot read schema version",
			buf, sizeof(buf), err);
	if (ret)
		goto out;
	version = strtol(buf, NULL, 10);
	if (version > RATE_SCHEMA_VERSION) {
		ret = -EPROTO;
		cw_error_set(err,
			     "rate-limit database has schema version %ld, "
			     "newer than the %d this cmdwarden knows",
			     version, RATE_SCHEMA_VERSION);
		set_source(err, q->path);
		goto out;
	}
	/* Later versions migrate here, one step per version. */
	if (version == 0) {
		rc = sqlite3_exec(q->db, sql_schema_v1, NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			ret = sql_fail(q, err, "cannot create schema", rc);
			goto out;
		}
	}
	ret = sql_exec1(q, "COMMIT", "cannot commit schema", NULL, 0, err);
	if (ret)
		goto out;
	in_tx = false;
out:
	if (in_tx)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

struct cw_rate_store *cw_rate_open_sqlite(const char *state_dir,
					  struct cw_error *err)
{
	struct sql_store *q = NULL;
	char buf[512];
	int i, rc, ret;

	if (!state_dir || !*state_dir) {
		cw_error_set(err, "rate-limit store: no state directory");
		ret = -EINVAL;
		goto out;
	}
	ret = make_state_dir(state_dir, err);
	if (ret)
		goto out;
	q = calloc(1, sizeof(*q));
	if (!q) {
		ret = -ENOMEM;
		cw_error_set(err, "rate-limit store: out of memory");
		goto out;
	}
	q->base.ops = &sql_ops;
	if ((size_t)snprintf(q->path, sizeof(q->path), "%s/%s", state_dir,
			     RATE_DB_NAME) >= sizeof(q->path)) {
		ret = -ENAMETOOLONG;
		cw_error_set(err, "state directory path too long");
		goto out;
	}
	ret = make_db_file(q->path, err);
	if (ret)
		goto out;
	rc = sqlite3_open_v2(q->path, &q->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
			     NULL);
	if (rc != SQLITE_OK) {
		ret = sql_fail(q, err, "cannot open", rc);
		goto out;
	}
	sqlite3_extended_result_codes(q->db, 1);
	sqlite3_busy_timeout(q->db, RATE_BUSY_MS);
	/* The first read: a file that is not a database fails here. */
	ret = sql_exec1(q, "SELECT count(*) FROM sqlite_schema",
			"reading it", NULL, 0, err);
	if (ret)
		goto out;
	/* Catch damaged pages as errors early rather than reading them. */
	ret = sql_exec1(q, "PRAGMA cell_size_check = ON",
			"cannot configure", NULL, 0, err);
	if (ret)
		goto out;
	ret = sql_exec1(q, "PRAGMA trusted_schema = OFF", "cannot configure",
			NULL, 0, err);
	if (ret)
		goto out;
	/* The agent's memory stays small however many calls a window holds:
	 * beyond 64 KiB the pages come from the kernel's page cache (a
	 * window of thousands of calls counts a few percent slower). */
	ret = sql_exec1(q, "PRAGMA cache_size = -64", "cannot configure",
			NULL, 0, err);
	if (ret)
		goto out;
	ret = sql_exec1(q, "PRAGMA journal_mode = WAL",
			"cannot enable WAL journal", buf, sizeof(buf), err);
	if (ret)
		goto out;
	if (strcmp(buf, "wal")) {
		ret = -EOPNOTSUPP;
		cw_error_set(err,
			     "rate-limit database: WAL journal unavailable "
			     "(journal_mode is %s)",
			     buf);
		set_source(err, q->path);
		goto out;
	}
	/* Reservations are synced by sql_sync, when their caller says. */
	ret = sql_exec1(q, "PRAGMA synchronous = NORMAL", "cannot configure",
			NULL, 0, err);
	if (ret)
		goto out;
	ret = sql_exec1(q, "PRAGMA quick_check(1)", "cannot check database",
			buf, sizeof(buf), err);
	if (ret)
		goto out;
	if (strcmp(buf, "ok")) {
		for (i = 0; buf[i]; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		ret = -EBADMSG;
		cw_error_set(err,
			     "rate-limit database is corrupt (quick_check: "
			     "%s); move it aside to start with empty counters",
			     buf);
		set_source(err, q->path);
		goto out;
	}
	ret = sql_schema(q, err);
	if (ret)
		goto out;
	for (i = 0; i < ST_MAX; i++) {
		rc = sqlite3_prepare_v3(q->db, sql_stmts[i], -1,
					SQLITE_PREPARE_PERSISTENT, &q->st[i],
					NULL);
		if (rc != SQLITE_OK) {
			ret = sql_fail(q, err, "cannot prepare statements", rc);
			goto out;
		}
	}
	ret = pthread_mutex_init(&q->base.lock, NULL);
	if (ret) {
		cw_error_set(err, "rate-limit store: %s", strerror(ret));
		ret = -ret;
		goto out;
	}
out:
	if (ret) {
		if (q)
			sql_close(&q->base);
		errno = -ret;
		return NULL;
	}
	return &q->base;
}

/* ---- memory store ------------------------------------------------------ */

struct mem_event {
	int64_t ts;
	char *rid;
	size_t hz;		/* index into horizons: the event's counter */
};

struct mem_key {
	char *key;
	struct mem_event *ev;	/* sorted by ts */
	size_t n, cap;
};

struct mem_horizon {
	char *counter;
	int64_t window_us;
};

enum mem_undo_kind { UNDO_EVENT, UNDO_KEY_NEW, UNDO_HZ_NEW, UNDO_HZ_RAISE };

struct mem_undo {
	enum mem_undo_kind kind;
	size_t idx;
	char *rid;		/* UNDO_EVENT: identifies the event */
	int64_t old;		/* UNDO_HZ_RAISE */
};

struct mem_store {
	struct cw_rate_store base;
	struct mem_key *keys;
	size_t nkeys, capkeys;
	struct mem_horizon *hz;	/* only grows: events refer to it by index */
	size_t nhz, caphz;
	struct mem_undo *undo;	/* writes of the open transaction */
	size_t nundo, capundo;
};

static struct mem_store *to_mem(struct cw_rate_store *s)
{
	return (struct mem_store *)s;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : 8;
	void *n;

	if (need <= *cap)
		return 0;
	while (cap2 < need)
		cap2 *= 2;
	n = reallocarray(*p, cap2, size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = cap2;
	return 0;
}

static int mem_nomem(struct cw_error *err)
{
	cw_error_set(err, "rate-limit store: out of memory");
	return -ENOMEM;
}

static struct mem_key *mem_find(struct mem_store *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nkeys; i++)
		if (!strcmp(m->keys[i].key, key))
			return &m->keys[i];
	return NULL;
}

/* First index of k's events with ts > t. */
static size_t mem_upper(const struct mem_key *k, int64_t t)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ev[mid].ts > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int mem_begin(struct cw_rate_store *s, bool write,
		     struct cw_error *err)
{
	(void)write;
	(void)err;
	to_mem(s)->nundo = 0;
	return 0;
}

static void mem_remove_key(struct mem_store *m, size_t i)
{
	free(m->keys[i].ev);
	free(m->keys[i].key);
	m->keys[i] = m->keys[--m->nkeys];
}

static void mem_undo_one(struct mem_store *m, const struct mem_undo *u)
{
	struct mem_key *k;
	size_t j;

	switch (u->kind) {
	case UNDO_EVENT:
		k = &m->keys[u->idx];
		for (j = 0; j < k->n; j++) {
			if (k->ev[j].rid != u->rid)
				continue;
			free(k->ev[j].rid);
			memmove(&k->ev[j], &k->ev[j + 1],
				(k->n - j - 1) * sizeof(k->ev[0]));
			k->n--;
			break;
		}
		break;
	case UNDO_KEY_NEW:
		/* Appended in this transaction, so still the last one. */
		mem_remove_key(m, u->idx);
		break;
	case UNDO_HZ_NEW:
		free(m->hz[--m->nhz].counter);
		break;
	case UNDO_HZ_RAISE:
		m->hz[u->idx].window_us = u->old;
		break;
	}
}

static int mem_end(struct cw_rate_store *s, bool commit, struct cw_error *err)
{
	struct mem_store *m = to_mem(s);

	(void)err;
	if (!commit)
		while (m->nundo)
			mem_undo_one(m, &m->undo[--m->nundo]);
	m->nundo = 0;
	return 0;
}

static int mem_count(struct cw_rate_store *s, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err)
{
	struct mem_key *k = mem_find(to_mem(s), key);

	(void)err;
	*count = k ? (int64_t)(k->n - mem_upper(k, after_us)) : 0;
	return 0;
}

static int mem_nth(struct cw_rate_store *s, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err)
{
	struct mem_key *k = mem_find(to_mem(s), key);
	size_t i;

	if (!k || n < 0)
		goto bad;
	i = mem_upper(k, after_us);
	if ((uint64_t)n >= k->n - i)
		goto bad;
	*ts = k->ev[i + (size_t)n].ts;
	return 0;
bad:
	cw_error_set(err, "rate-limit store: counter %s changed while read",
		     key);
	return -EIO;
}

/* Room for one more undo record, so a write that succeeded can always be
 * logged. */
static int mem_undo_room(struct mem_store *m)
{
	return grow((void **)&m->undo, &m->capundo, m->nundo + 1,
		    sizeof(m->undo[0]));
}

static int mem_hz_get(struct mem_store *m, const char *counter,
		      size_t *idx, struct cw_error *err)
{
	struct mem_horizon *h;
	size_t i;

	for (i = 0; i < m->nhz; i++) {
		if (!strcmp(m->hz[i].counter, counter)) {
			*idx = i;
			return 0;
		}
	}
	if (mem_undo_room(m) ||
	    grow((void **)&m->hz, &m->caphz, m->nhz + 1, sizeof(m->hz[0])))
		return mem_nomem(err);
	h = &m->hz[m->nhz];
	h->counter = strdup(counter);
	if (!h->counter)
		return mem_nomem(err);
	h->window_us = 0;
	*idx = m->nhz++;
	m->undo[m->nundo++] = (struct mem_undo){ .kind = UNDO_HZ_NEW };
	return 0;
}

static int mem_horizon(struct cw_rate_store *s, const char *counter,
		       int64_t window_us, struct cw_error *err)
{
	struct mem_store *m = to_mem(s);
	size_t i;
	int ret;

	ret = mem_hz_get(m, counter, &i, err);
	if (ret)
		return ret;
	if (window_us <= m->hz[i].window_us)
		return 0;
	if (mem_undo_room(m))
		return mem_nomem(err);
	m->undo[m->nundo++] = (struct mem_undo){
		.kind = UNDO_HZ_RAISE, .idx = i, .old = m->hz[i].window_us
	};
	m->hz[i].window_us = window_us;
	return 0;
}

static int mem_insert(struct cw_rate_store *s, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err)
{
	struct mem_store *m = to_mem(s);
	struct mem_key *k;
	size_t hz, at, ki;
	char *r = NULL;
	int ret;

	ret = mem_hz_get(m, counter, &hz, err);
	if (ret)
		goto out;
	k = mem_find(m, key);
	if (!k) {
		ret = -ENOMEM;
		if (mem_undo_room(m) ||
		    grow((void **)&m->keys, &m->capkeys, m->nkeys + 1,
			 sizeof(m->keys[0])))
			goto out;
		k = &m->keys[m->nkeys];
		memset(k, 0, sizeof(*k));
		k->key = strdup(key);
		if (!k->key)
			goto out;
		m->undo[m->nundo++] = (struct mem_undo){
			.kind = UNDO_KEY_NEW, .idx = m->nkeys
		};
		m->nkeys++;
	}
	ki = (size_t)(k - m->keys);
	ret = -ENOMEM;
	if (mem_undo_room(m) ||
	    grow((void **)&k->ev, &k->cap, k->n + 1, sizeof(k->ev[0])))
		goto out;
	r = strdup(rid);
	if (!r)
		goto out;
	at = mem_upper(k, ts);
	memmove(&k->ev[at + 1], &k->ev[at], (k->n - at) * sizeof(k->ev[0]));
	k->ev[at] = (struct mem_event){ .ts = ts, .rid = r, .hz = hz };
	k->n++;
	m->undo[m->nundo++] = (struct mem_undo){
		.kind = UNDO_EVENT, .idx = ki, .rid = r
	};
	ret = 0;
out:
	if (ret == -ENOMEM)
		mem_nomem(err);
	return ret;
}

/* Keeps the events of key i for which drop() is false; frees the key when
 * none remain. */
static void mem_filter(struct mem_store *m, size_t i,
		       bool (*drop)(const struct mem_store *m,
				    const struct mem_event *e, const void *arg),
		       const void *arg)
{
	struct mem_key *k = &m->keys[i];
	size_t r, w = 0;

	for (r = 0; r < k->n; r++) {
		if (drop(m, &k->ev[r], arg))
			free(k->ev[r].rid);
		else
			k->ev[w++] = k->ev[r];
	}
	k->n = w;
	if (!k->n)
		mem_remove_key(m, i);
}

static bool mem_expired(const struct mem_store *m, const struct mem_event *e,
			const void *arg)
{
	int64_t now_us = *(const int64_t *)arg;

	return e->ts <= sat_sub(now_us, m->hz[e->hz].window_us);
}

static bool mem_of_rid(const struct mem_store *m, const struct mem_event *e,
		       const void *arg)
{
	(void)m;
	return !strcmp(e->rid, arg);
}

static int mem_prune(struct cw_rate_store *s, int64_t now_us,
		     struct cw_error *err)
{
	struct mem_store *m = to_mem(s);
	size_t i;

	(void)err;
	/* Removing keys reorders them: nothing may be undone past this. */
	m->nundo = 0;
	for (i = m->nkeys; i-- > 0;)
		mem_filter(m, i, mem_expired, &now_us);
	return 0;
}

static int mem_release(struct cw_rate_store *s, const char *rid,
		       struct cw_error *err)
{
	struct mem_store *m = to_mem(s);
	size_t i;

	(void)err;
	for (i = m->nkeys; i-- > 0;)
		mem_filter(m, i, mem_of_rid, rid);
	return 0;
}

static void mem_close(struct cw_rate_store *s)
{
	struct mem_store *m = to_mem(s);
	size_t i, j;

	for (i = 0; i < m->nkeys; i++) {
		for (j = 0; j < m->keys[i].n; j++)
			free(m->keys[i].ev[j].rid);
		free(m->keys[i].ev);
		free(m->keys[i].key);
	}
	for (i = 0; i < m->nhz; i++)
		free(m->hz[i].counter);
	free(m->undo);
	free(m->hz);
	free(m->keys);
	free(m);
}

static int mem_sync(struct cw_rate_store *s, struct cw_error *err)
{
	(void)s;
	(void)err;
	return 0;
}

static const struct rate_ops mem_ops = {
	.begin = mem_begin,
	.end = mem_end,
	.count = mem_count,
	.nth = mem_nth,
	.horizon = mem_horizon,
	.insert = mem_insert,
	.prune = mem_prune,
	.release = mem_release,
	.sync = mem_sync,
	.close = mem_close,
};

struct cw_rate_store *cw_rate_open_memory(void)
{
	struct mem_store *m = calloc(1, sizeof(*m));
	int ret;

	if (!m)
		return NULL;
	m->base.ops = &mem_ops;
	ret = pthread_mutex_init(&m->base.lock, NULL);
	if (ret) {
		free(m);
		errno = ret;
		return NULL;
	}
	return &m->base;
}
