// SPDX-License-Identifier: Apache-2.0
/*
 * The SQLite rate-limit store: the events and horizons of every counter in
 * <state_dir>/ratelimit.db, shared safely by agents on one machine.
 *
 * WAL journal, one transaction per reservation (BEGIN IMMEDIATE, so
 * concurrent agents serialise on the write lock and never over-admit).
 * Commits run with synchronous=NORMAL and are made durable by sql_sync,
 * which flushes the WAL: at once after a reservation, or later for one
 * reserved with CW_RATE_DEFER_SYNC, one flush covering every reservation
 * committed before it. Opening checks the file (a regular file, mode 0600,
 * a database that passes quick_check, a schema version this program knows)
 * and says what to do when it is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rate/store.h"
#include "lib/util.h"

#define RATE_DB_NAME "ratelimit.db"
#define RATE_SCHEMA_VERSION 1
#define RATE_BUSY_MS 10000
/* Beyond the busy handler, sql_step sleeps 1 ms, doubling while the sleep
 * is under 50 ms (so at most 64 ms at a time), until RATE_BUSY_MS. */
#define RATE_BUSY_SLEEP_FIRST_NS 1000000L
#define RATE_BUSY_SLEEP_DOUBLE_BELOW_NS 50000000L
/* Room for a PRAGMA's one-line answer (quick_check's first problem, the
 * journal mode) and for the schema version. */
#define RATE_PRAGMA_TEXT 512
#define RATE_VERSION_TEXT 32

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
	struct cw_rate_local local;
	sqlite3 *db;
	sqlite3_stmt *st[ST_MAX];
	char path[PATH_MAX];
};

static struct sql_store *to_sql(struct cw_rate_local *l)
{
	return (struct sql_store *)l;
}

/* The primary result code of an extended one. */
static int sql_primary(int rc)
{
	return rc & 0xff;
}

static int sql_errno(int rc)
{
	switch (sql_primary(rc)) {
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
		if (sql_primary(rc) == SQLITE_CORRUPT ||
		    sql_primary(rc) == SQLITE_NOTADB)
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
	struct timespec ts = { 0, RATE_BUSY_SLEEP_FIRST_NS };
	int rc;

	for (;;) {
		rc = sqlite3_step(st);
		if (sql_primary(rc) != SQLITE_BUSY &&
		    sql_primary(rc) != SQLITE_LOCKED)
			return rc;
		if (cw_mono_us() >= deadline)
			return rc;
		sqlite3_reset(st);
		nanosleep(&ts, NULL);
		if (ts.tv_nsec < RATE_BUSY_SLEEP_DOUBLE_BELOW_NS)
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

static int sql_begin(struct cw_rate_local *l, bool write,
		     struct cw_error *err)
{
	return sql_run(to_sql(l), write ? ST_BEGIN_WRITE : ST_BEGIN_READ,
		       "cannot begin transaction", err);
}

static int sql_end(struct cw_rate_local *l, bool commit, struct cw_error *err)
{
	struct sql_store *q = to_sql(l);
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

static int sql_count(struct cw_rate_local *l, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err)
{
	struct sql_store *q = to_sql(l);
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

static int sql_nth(struct cw_rate_local *l, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err)
{
	struct sql_store *q = to_sql(l);
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

static int sql_horizon(struct cw_rate_local *l, const char *counter,
		       int64_t window_us, struct cw_error *err)
{
	struct sql_store *q = to_sql(l);

	sqlite3_bind_text(q->st[ST_HORIZON], 1, counter, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q->st[ST_HORIZON], 2, window_us);
	return sql_run(q, ST_HORIZON, "cannot record horizon", err);
}

static int sql_insert(struct cw_rate_local *l, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err)
{
	struct sql_store *q = to_sql(l);
	sqlite3_stmt *st = q->st[ST_INSERT];

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, counter, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ts);
	sqlite3_bind_text(st, 4, rid, -1, SQLITE_STATIC);
	return sql_run(q, ST_INSERT, "cannot record event", err);
}

static int sql_prune(struct cw_rate_local *l, int64_t now_us,
		     struct cw_error *err)
{
	struct sql_store *q = to_sql(l);

	sqlite3_bind_int64(q->st[ST_PRUNE], 1, now_us);
	return sql_run(q, ST_PRUNE, "cannot prune events", err);
}

static int sql_release(struct cw_rate_local *l, const char *rid,
		       struct cw_error *err)
{
	struct sql_store *q = to_sql(l);

	sqlite3_bind_text(q->st[ST_RELEASE], 1, rid, -1, SQLITE_STATIC);
	return sql_run(q, ST_RELEASE, "cannot release reservation", err);
}

/* Commits are not synced by SQLite (synchronous=NORMAL): this flushes
 * the WAL through SQLite's own file handle, which also makes a new WAL's
 * directory entry durable. A checkpoint syncs the WAL before it copies
 * frames out, so what this covered stays durable across WAL restarts. */
static int sql_sync(struct cw_rate_local *l, struct cw_error *err)
{
	struct sql_store *q = to_sql(l);
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

static void sql_close(struct cw_rate_local *l)
{
	struct sql_store *q = to_sql(l);
	int i;

	for (i = ST_MAX - 1; i >= 0; i--)
		sqlite3_finalize(q->st[i]);
	sqlite3_close_v2(q->db);
	free(q);
}

static const struct cw_rate_local_ops sql_ops = {
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
	char buf[RATE_VERSION_TEXT];
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

/* Creates state_dir (0700) if missing, and <state_dir>/ratelimit.db in it
 * (WAL; every reservation's commit is synced, at once or by the store's
 * sync). */
static struct cw_rate_store *sql_open(const char *state_dir,
				      struct cw_error *err)
{
	struct sql_store *q = NULL;
	char buf[RATE_PRAGMA_TEXT];
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
	ret = cw_rate_local_init(&q->local, &sql_ops, err);
out:
	if (ret) {
		if (q)
			sql_close(&q->local);
		errno = -ret;
		return NULL;
	}
	return &q->local.base;
}

const struct cw_rate_store_type cw_rate_sqlite_store = {
	.scheme = "sqlite",
	.open = sql_open,
};
