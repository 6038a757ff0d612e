// SPDX-License-Identifier: Apache-2.0
/*
 * Audit log writer: opening and closing a log, and appending to it.
 *
 * Every record is one line appended under an exclusive flock on the log, so
 * agents sharing the file form a single chain: each line carries the SHA-256
 * of the line before it. A writer remembers where its own last record ended;
 * when the file has grown (or shrunk) since, it reads the tail backwards to
 * pick up the chain from whoever wrote last. Single and batched appends
 * seal each record's line with seal_line, the one place for the chain's
 * rules (seq, prev, the line limit, the rotation size).
 *
 * A record's text is built in record.c; group commit (commit.c) makes the
 * appends durable; rotation (rotate.c) starts a new file when one is full;
 * verify.c reads a log back; audit_int.h lists what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "audit/audit_int.h"

/* A record of the chain: its seq and the SHA-256 of its line. */
struct link {
	uint64_t seq;
	char hash[HASH_HEX + 1];
};

/* The chain's tail as found in the file. */
struct tail {
	struct link last; /* the last intact record */
	bool need_nl; /* the file ends inside a line */
	unsigned int damaged; /* lines stepped over */
};

/* Where one record's line goes, and what it notes besides. */
struct place {
	off_t at; /* the file offset it starts at */
	bool mend; /* the file ends inside a torn line: a newline first */
	bool torn; /* torn_before: damaged lines were stepped over */
	const char *rotated_from; /* the first line of a new file, else NULL */
};

/* seal_line: the line would take the file past the rotation size. */
#define NEEDS_ROTATION 1

/* Opening the log: tries while the file comes and goes meanwhile. */
#define OPEN_TRIES 3

/* Room to reserve per line of a batch besides its middle: ts, seq, prev
 * and their punctuation, give or take. */
#define LINE_FRAME 160

const char *audit_errstr(int e)
{
	const char *s = strerrordesc_np(e);

	return s ? s : "unknown error";
}

void audit_err(struct cw_error *err, const char *path, int line,
	       const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	snprintf(err->source, sizeof(err->source), "%s", path ? path : "");
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
}

static int pread_all(int fd, void *p, size_t n, off_t at)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = pread(fd, c, n, at);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO; /* shrank under our lock: not a writer of ours */
		c += r;
		n -= (size_t)r;
		at += r;
	}
	return 0;
}

/*
 * Start of the line whose content ends at offset e (exclusive). Reads
 * backwards in blocks so memory stays bounded whatever the line length;
 * -EMSGSIZE when no line start lies within CW_AUDIT_MAX_LINE.
 */
static int line_start(struct cw_audit *a, off_t e, off_t *start)
{
	off_t lo = e > (off_t)CW_AUDIT_MAX_LINE ? e - CW_AUDIT_MAX_LINE : 0;
	off_t hi = e;

	while (hi > lo) {
		size_t n = hi - lo > BLOCK_SIZE ? BLOCK_SIZE : (size_t)(hi - lo);
		off_t at = hi - (off_t)n;
		char *nl;
		int ret = pread_all(a->rfd, a->block, n, at);

		if (ret)
			return ret;
		nl = memrchr(a->block, '\n', n);
		if (nl) {
			*start = at + (nl - a->block) + 1;
			return 0;
		}
		hi = at;
	}
	if (lo > 0)
		return -EMSGSIZE;
	*start = 0;
	return 0;
}

static void scan_err(struct cw_audit *a, int ret, struct cw_error *err)
{
	if (ret == -EMSGSIZE)
		audit_err(err, a->path, 0,
			  "a line near the end is longer than %u bytes, so cmdwarden did not write it; move the file aside to start a new log",
			  CW_AUDIT_MAX_LINE - 1);
	else
		audit_err(err, a->path, 0, "reading the last record failed: %s",
			  audit_errstr(-ret));
}

/* Finds the last intact record before offset size; called under the flock. */
static int find_tail(struct cw_audit *a, off_t size, struct tail *t,
		     struct cw_error *err)
{
	struct rec_info ri;
	char why[WHY_LEN];
	char *line = NULL;
	off_t end = size, start;
	size_t len;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (size == 0)
		goto out;
	ret = pread_all(a->rfd, a->block, 1, size - 1);
	if (ret) {
		scan_err(a, ret, err);
		goto out;
	}
	if (a->block[0] != '\n') {
		/* A torn write: never chain onto it. */
		t->need_nl = true;
		t->damaged = 1;
		ret = line_start(a, size, &end);
		if (ret) {
			scan_err(a, ret, err);
			goto out;
		}
	}
	/* end is 0 or just past the '\n' of the line to look at. */
	while (end > 0) {
		ret = line_start(a, end - 1, &start);
		if (ret) {
			scan_err(a, ret, err);
			goto out;
		}
		len = (size_t)(end - 1 - start);
		free(line);
		line = malloc(len ? len : 1);
		if (!line) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0,
				  "no memory to read the last record");
			goto out;
		}
		ret = pread_all(a->rfd, line, len, start);
		if (ret) {
			scan_err(a, ret, err);
			goto out;
		}
		if (!audit_parse_record(line, len, &ri, why, sizeof(why))) {
			ret = audit_sha256_hex(line, len, t->last.hash);
			if (ret) {
				audit_err(err, a->path, 0, "SHA-256 failed");
				goto out;
			}
			t->last.seq = ri.seq;
			goto out;
		}
		if (++t->damaged > MAX_DAMAGED) {
			ret = -EBADMSG;
			audit_err(err, a->path, 0,
				  "the last %d lines are not records (%s); run 'cmdwarden audit verify' and move the file aside to start a new log",
				  MAX_DAMAGED, why);
			goto out;
		}
		end = start;
	}
	/* Nothing intact is left: a new chain, still flagged torn_before. */
out:
	free(line);
	return ret;
}

int audit_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

/* Directory part of path: "." for a bare name, "/" for "/x". */
char *audit_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Creates the missing directories above path with 0700, each one durable. */
static int make_parents(const char *path, struct cw_error *err)
{
	char *dir = audit_dir_of(path);
	char *p, *parent = NULL;
	struct stat st;
	int ret = 0;

	if (!dir) {
		ret = -ENOMEM;
		audit_err(err, path, 0, "no memory");
		goto out;
	}
	if (!stat(dir, &st))
		goto out;
	for (p = dir + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (!mkdir(dir, 0700)) {
			free(parent);
			parent = audit_dir_of(dir);
			ret = parent ? audit_fsync_dir(parent) : -ENOMEM;
			if (ret) {
				audit_err(err, path, 0,
					  "syncing the directory above %s failed: %s",
					  dir, audit_errstr(-ret));
				goto out;
			}
		} else if (errno != EEXIST) {
			ret = -errno;
			audit_err(err, path, 0,
				  "creating directory %s failed: %s", dir,
				  audit_errstr(-ret));
			goto out;
		}
		if (last)
			break;
		*p = '/';
	}
out:
	free(parent);
	free(dir);
	return ret;
}

/* Opens the log for appending; *created tells whether this call made it. */
static int open_log(const char *path, bool *created, struct cw_error *err)
{
	const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY;
	int fd = -1, tries;

	*created = false;
	/* O_EXCL tells creation apart; retry if the file comes and goes. */
	for (tries = 0; tries < OPEN_TRIES; tries++) {
		fd = open(path, flags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			*created = true;
			return fd;
		}
		if (errno != EEXIST)
			break;
		/* O_NONBLOCK: a FIFO without a reader must not hang us. */
		fd = open(path, flags | O_NONBLOCK);
		if (fd >= 0 || errno != ENOENT)
			break;
	}
	if (fd >= 0)
		return fd;
	fd = -errno;
	if (fd == -EISDIR)
		audit_err(err, path, 0,
			  "is a directory, not a regular file; give a file path such as %s/audit.jsonl",
			  path);
	else if (fd == -ENXIO)
		audit_err(err, path, 0,
			  "is not a regular file (a FIFO or socket); give the path of a regular file");
	else
		audit_err(err, path, 0, "opening the audit log failed: %s",
			  audit_errstr(-fd));
	return fd;
}

/*
 * The log just opened on fd: a regular file, its descriptor blocking, and
 * either created now (then made 0600 whatever the umask) or already 0600
 * and ours. st gets its fstat.
 */
static int check_log(int fd, const char *path, bool created, struct stat *st,
		     struct cw_error *err)
{
	int ret, fl;

	if (fstat(fd, st)) {
		ret = -errno;
		audit_err(err, path, 0, "fstat failed: %s", audit_errstr(-ret));
		return ret;
	}
	if (!S_ISREG(st->st_mode)) {
		ret = -EINVAL;
		audit_err(err, path, 0,
			  "is not a regular file; give the path of a regular file");
		return ret;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		ret = -errno;
		audit_err(err, path, 0, "fcntl failed: %s", audit_errstr(-ret));
		return ret;
	}
	if (created) {
		/* The umask must not decide who can read the log. */
		if (fchmod(fd, 0600)) {
			ret = -errno;
			audit_err(err, path, 0, "fchmod 0600 failed: %s",
				  audit_errstr(-ret));
			return ret;
		}
	} else if (st->st_mode & 077) {
		ret = -EPERM;
		audit_err(err, path, 0,
			  "mode %04o grants group/other access to the audit log; run 'chmod 600 %s' (and check who read it)",
			  (unsigned int)(st->st_mode & 07777), path);
		return ret;
	} else if (st->st_uid != geteuid()) {
		/* Its owner could rewrite the log behind our back. */
		ret = -EPERM;
		audit_err(err, path, 0,
			  "owned by uid %u, not by this process (uid %u); run 'chown %u %s' or move it aside",
			  (unsigned int)st->st_uid, (unsigned int)geteuid(),
			  (unsigned int)geteuid(), path);
		return ret;
	}
	return 0;
}

struct cw_audit *cw_audit_open(const char *path, struct cw_error *err)
{
	struct cw_audit *a = NULL;
	bool created = false, mutex_ok = false;
	struct stat st, rst;
	char *dir = NULL;
	int ret;

	if (!path || !*path) {
		ret = -EINVAL;
		audit_err(err, "", 0, "no audit log path given");
		goto out;
	}
	/* Idempotent and thread-safe; picks the fastest hash code. */
	if (sodium_init() < 0) {
		ret = -EIO;
		audit_err(err, path, 0, "libsodium failed to initialise");
		goto out;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		ret = -ENOMEM;
		audit_err(err, path, 0, "no memory");
		goto out;
	}
	a->wfd = -1;
	a->rfd = -1;
	a->path = strdup(path);
	a->block = malloc(BLOCK_SIZE);
	if (!a->path || !a->block) {
		ret = -ENOMEM;
		audit_err(err, path, 0, "no memory");
		goto out;
	}
	a->pending_tail = &a->pending;
	a->waiters_tail = &a->waiters;
	a->ready_tail = &a->ready;
	ret = -pthread_mutex_init(&a->lock, NULL);
	if (!ret) {
		ret = -pthread_cond_init(&a->synced_cond, NULL);
		if (ret)
			pthread_mutex_destroy(&a->lock);
	}
	if (!ret) {
		ret = -pthread_cond_init(&a->waiters_cond, NULL);
		if (ret) {
			pthread_cond_destroy(&a->synced_cond);
			pthread_mutex_destroy(&a->lock);
		}
	}
	if (ret) {
		audit_err(err, path, 0, "pthread_mutex_init failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	mutex_ok = true;
	ret = make_parents(path, err);
	if (ret)
		goto out;
	ret = open_log(path, &created, err);
	if (ret < 0)
		goto out;
	a->wfd = ret;
	ret = 0;
	ret = check_log(a->wfd, path, created, &st, err);
	if (ret)
		goto out;
	a->rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (a->rfd < 0) {
		ret = -errno;
		audit_err(err, path, 0, "opening for reading failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	if (fstat(a->rfd, &rst) || rst.st_dev != st.st_dev ||
	    rst.st_ino != st.st_ino) {
		ret = -ESTALE;
		audit_err(err, path, 0,
			  "the file was replaced while being opened; try again");
		goto out;
	}
	if (created) {
		dir = audit_dir_of(path);
		ret = dir ? audit_fsync_dir(dir) : -ENOMEM;
		if (ret) {
			audit_err(err, path, 0,
				  "syncing its directory failed: %s",
				  audit_errstr(-ret));
			goto out;
		}
	}
out:
	free(dir);
	if (ret && a) {
		if (a->rfd >= 0)
			close(a->rfd);
		if (a->wfd >= 0)
			close(a->wfd);
		if (mutex_ok) {
			pthread_cond_destroy(&a->waiters_cond);
			pthread_cond_destroy(&a->synced_cond);
			pthread_mutex_destroy(&a->lock);
		}
		free(a->block);
		free(a->path);
		free(a);
	}
	if (ret) {
		errno = -ret;
		return NULL;
	}
	return a;
}

void cw_audit_close(struct cw_audit *a)
{
	if (!a)
		return;
	/* Writers still waiting are told first. */
	audit_stop_flusher(a);
	close(a->rfd);
	close(a->wfd);
	pthread_cond_destroy(&a->waiters_cond);
	pthread_cond_destroy(&a->synced_cond);
	pthread_mutex_destroy(&a->lock);
	cw_buf_free(&a->pend.text);
	free(a->pend.end);
	free(a->block);
	free(a->path);
	free(a);
}

uint64_t cw_audit_flushes(struct cw_audit *a)
{
	uint64_t n;

	pthread_mutex_lock(&a->lock);
	n = a->flushes;
	pthread_mutex_unlock(&a->lock);
	return n;
}

const char *cw_audit_path(const struct cw_audit *a)
{
	return a ? a->path : NULL;
}

int audit_lock_file(int fd, int op)
{
	while (flock(fd, op)) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Removes a failed append so no half record stays in the file. */
static void undo_append(struct cw_audit *a, off_t size)
{
	if (!ftruncate(a->wfd, size))
		fdatasync(a->wfd);
}

/* Final component of path. */
const char *audit_base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Takes the log's flock and, under it, finds the file that path names now
 * (following a rotation another writer made), its size in st, and its last
 * record in t (from what this writer last wrote when nothing was appended
 * since). On failure the flock is let go (and the tail forgotten if it
 * was taken).
 */
static int lock_tail(struct cw_audit *a, struct stat *st, struct tail *t,
		     struct cw_error *err)
{
	int ret;

	ret = audit_lock_file(a->wfd, LOCK_EX);
	if (ret) {
		audit_err(err, a->path, 0, "flock failed: %s", audit_errstr(-ret));
		return ret;
	}
	if (fstat(a->wfd, st)) {
		ret = -errno;
		audit_err(err, a->path, 0, "fstat failed: %s", audit_errstr(-ret));
		goto out;
	}
	ret = audit_follow_path(a, st, err);
	if (ret)
		goto out;
	if (a->tail_known && st->st_size == a->end) {
		memset(t, 0, sizeof(*t));
		t->last.seq = a->seq;
		memcpy(t->last.hash, a->hash, sizeof(t->last.hash));
		goto out;
	}
	ret = find_tail(a, st->st_size, t, err);
out:
	if (ret) {
		a->tail_known = false;
		audit_lock_file(a->wfd, LOCK_UN);
	}
	return ret;
}

/*
 * The integrity core, a->lock and the file's flock held: appends to buf the
 * line of the record whose middle is mid, chained onto the record at *c
 * (seq one past it, prev its SHA-256), and its newline, and makes *c that
 * record. The seq must not overflow and the line must fit the line limit;
 * a line that would take the file past the rotation size is left out,
 * unless it is the first of a new file. 0; NEEDS_ROTATION with buf as it
 * was; or -errno with err, buf then holding part of the line.
 */
static int seal_line(struct cw_audit *a, struct cw_buf *buf, struct link *c,
		     const char *mid, size_t mid_len, const struct place *p,
		     struct cw_error *err)
{
	size_t start = buf->len, skip = p->mend ? 1 : 0, len;
	char hash[HASH_HEX + 1];
	int ret;

	if (c->seq >= (uint64_t)INT64_MAX) {
		ret = -EOVERFLOW;
		audit_err(err, a->path, 0, "seq would overflow");
		goto out;
	}
	ret = audit_build_line(buf, p->mend, c->seq + 1, mid, mid_len, p->torn,
			       p->rotated_from, c->hash);
	if (ret) {
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	len = buf->len - start;
	/* A torn tail is mended in place first; the next record rotates. */
	if (!p->rotated_from && a->max_bytes && p->at > 0 && !p->mend &&
	    (uint64_t)p->at + len + 1 > a->max_bytes) {
		buf->len = start;
		ret = NEEDS_ROTATION;
		goto out;
	}
	if (len - skip >= CW_AUDIT_MAX_LINE) {
		ret = -EMSGSIZE;
		audit_err(err, a->path, 0,
			  "record of %zu bytes exceeds the %u byte line limit",
			  len - skip, CW_AUDIT_MAX_LINE - 1);
		goto out;
	}
	ret = audit_sha256_hex(buf->data + start + skip, len - skip, hash);
	if (ret) {
		audit_err(err, a->path, 0, "SHA-256 failed");
		goto out;
	}
	ret = cw_buf_append(buf, "\n", 1);
	if (ret) {
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	c->seq++;
	memcpy(c->hash, hash, sizeof(c->hash));
out:
	return ret;
}

/*
 * Appends the lines sealed in buf to the file, size bytes long, with one
 * write() under the flock: O_APPEND plus flock keep it whole. A failed
 * write is truncated away, so the file stays as it was; what names the
 * records in its error ("record seq", "records to seq") goes before c's
 * seq, the last of them.
 */
static int write_sealed(struct cw_audit *a, const struct cw_buf *buf,
			off_t size, const struct link *c, const char *what,
			struct cw_error *err)
{
	int ret = cw_write_all(a->wfd, buf->data, buf->len);

	if (ret) {
		audit_err(err, a->path, 0, "writing %s %" PRIu64 " failed: %s",
			  what, c->seq, audit_errstr(-ret));
		undo_append(a, size);
		return ret;
	}
	a->end = size + (off_t)buf->len;
	a->bytes_out += buf->len;
	return 0;
}

/* One more append by this handle, whose last record is now c. */
static void advance(struct cw_audit *a, const struct link *c)
{
	a->appended++;
	a->seq = c->seq;
	memcpy(a->hash, c->hash, sizeof(a->hash));
	a->tail_known = true;
}

/*
 * Retention after a rotation, a->lock held: under the current file's
 * flock (so writers sharing the log prune once), the "pruned" record is
 * appended and made durable, then the files it names are removed. A
 * current file too full for the record leaves the pruning to the next
 * rotation.
 */
static int prune(struct cw_audit *a, struct cw_error *err)
{
	struct cw_buf mid = { 0 }, line = { 0 };
	struct heads h = { 0 };
	json_t *fields = NULL;
	char **victims = NULL;
	size_t nvictims = 0;
	struct place p;
	struct stat st;
	struct tail t;
	int ret;

	ret = lock_tail(a, &st, &t, err);
	if (ret)
		return ret;
	ret = audit_prune_plan(a, &fields, &victims, &nvictims, err);
	if (ret || !fields)
		goto out;
	ret = audit_prepare_record(a, &h, CW_AUDIT_T(PRUNED), NULL, fields,
				   &mid, err);
	if (ret)
		goto out;
	p = (struct place){ .at = st.st_size, .mend = t.need_nl,
			    .torn = t.damaged };
	ret = seal_line(a, &line, &t.last, mid.data, mid.len, &p, err);
	if (ret == NEEDS_ROTATION) {
		ret = 0;
		goto out;
	}
	if (!ret)
		ret = write_sealed(a, &line, st.st_size, &t.last,
				   "record seq", err);
	if (ret)
		goto out;
	advance(a, &t.last);
	if (fdatasync(a->wfd)) {
		ret = -errno;
		a->failed = a->appended;
		a->sync_errno = -ret;
		audit_err(err, a->path, 0,
			  "fdatasync of the pruned record failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	/* The current file holds every append since the rotation. */
	a->synced = a->appended;
	ret = audit_prune_remove(a, victims, nvictims, err);
	victims = NULL;
	nvictims = 0;
out:
	if (ret)
		a->tail_known = false;
	audit_lock_file(a->wfd, LOCK_UN);
	if (victims) {
		size_t i;

		for (i = 0; i < nvictims; i++)
			free(victims[i]);
		free(victims);
	}
	json_decref(fields);
	audit_heads_free(&h);
	cw_buf_free(&mid);
	cw_buf_free(&line);
	return ret;
}

/* One record, rotating first when it does not fit; a->lock held. */
static int append_record(struct cw_audit *a, const char *mid,
			 size_t mid_len, struct cw_error *err)
{
	struct cw_buf line = { 0 };
	char *rpath = NULL;
	bool linked = false;
	struct place p;
	struct stat st;
	struct tail t;
	int ret;

	ret = lock_tail(a, &st, &t, err);
	if (ret)
		return ret;
	p = (struct place){ .at = st.st_size, .mend = t.need_nl,
			    .torn = t.damaged };
	ret = seal_line(a, &line, &t.last, mid, mid_len, &p, err);
	if (ret == NEEDS_ROTATION) {
		ret = audit_rotation_name(a, &st, &rpath, &linked, err);
		if (ret)
			goto out;
		p.rotated_from = audit_base_of(rpath);
		ret = seal_line(a, &line, &t.last, mid, mid_len, &p, err);
	}
	if (ret)
		goto out;
	if (rpath)
		ret = audit_rotate(a, &line, audit_base_of(rpath), rpath,
				   linked, err);
	else
		ret = write_sealed(a, &line, st.st_size, &t.last, "record seq",
				   err);
	if (ret)
		goto out;
	advance(a, &t.last);
	/* audit_rotate() left the old file and the new record durable */
	if (rpath)
		a->synced = a->appended;
out:
	if (ret)
		a->tail_known = false;
	audit_lock_file(a->wfd, LOCK_UN);
	if (!ret && rpath && a->max_total)
		ret = prune(a, err);
	free(rpath);
	cw_buf_free(&line);
	return ret;
}

int cw_audit_write(struct cw_audit *a, const char *type,
		   const char *invocation, json_t *fields,
		   struct cw_error *err)
{
	return cw_audit_write_flags(a, type, invocation, fields, 0, err);
}

int cw_audit_write_flags(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 unsigned flags, struct cw_error *err)
{
	struct cw_buf mid = { 0 };
	struct heads h = { 0 };
	uint64_t ticket;
	int ret;

	ret = audit_prepare_record(a, &h, type, invocation, fields, &mid, err);
	if (ret)
		goto out;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	ret = append_record(a, mid.data, mid.len, err);
	ticket = a->appended;
	pthread_mutex_unlock(&a->lock);
	if (!ret && !(flags & CW_AUDIT_DEFER_SYNC))
		ret = audit_sync_through(a, ticket, err);
out:
	audit_heads_free(&h);
	cw_buf_free(&mid);
	return ret;
}

static const char *mid_at(const struct mids *m, size_t i, size_t *len)
{
	size_t from = i ? m->end[i - 1] : 0;

	*len = m->end[i] - from;
	return m->text.data + from;
}

/*
 * Appends records from.. of m, as many as fit before the rotation size,
 * with one flock, one write() and (without CW_AUDIT_DEFER_SYNC) one
 * fdatasync: the same lines, seq and chain as one append_record each. The
 * count written (0 when the first needs a rotation: the caller then uses
 * append_record), or -errno with nothing written.
 */
static int append_batch(struct cw_audit *a, const struct mids *m,
			size_t from, size_t n, struct cw_error *err)
{
	struct cw_buf all = { 0 };
	const char *mid;
	struct stat st;
	struct tail t;
	size_t i, mid_len;
	int ret;

	ret = lock_tail(a, &st, &t, err);
	if (ret)
		return ret;
	/* the middles plus each line's ts, seq and prev, give or take */
	if (cw_buf_reserve(&all, m->end[from + n - 1] -
				 (from ? m->end[from - 1] : 0) +
				 n * LINE_FRAME)) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	/* Each line is built in place, hashed there, and left out again if
	 * it needs a rotation. Only the first line mends a torn tail or
	 * notes it. */
	for (i = 0; i < n; i++) {
		struct place p = { .at = st.st_size + (off_t)all.len,
				   .mend = !i && t.need_nl,
				   .torn = !i && t.damaged };

		mid = mid_at(m, from + i, &mid_len);
		ret = seal_line(a, &all, &t.last, mid, mid_len, &p, err);
		if (ret == NEEDS_ROTATION)
			break;
		if (ret)
			goto out;
	}
	ret = 0;
	if (!all.len)
		goto out;	/* the first needs a rotation */
	ret = write_sealed(a, &all, st.st_size, &t.last, "records to seq",
			   err);
	if (ret)
		goto out;
	advance(a, &t.last);
	ret = (int)i;
out:
	if (ret < 0)
		a->tail_known = false;
	audit_lock_file(a->wfd, LOCK_UN);
	cw_buf_free(&all);
	return ret;
}

/*
 * Appends the n records of m in order, a->lock held: as many per write() as
 * fit before the rotation size, a record that needs a rotation on its own.
 * *done: how many were written; tickets (may be NULL): the append that
 * wrote each. 0, or -errno with err: none after *done written.
 */
int audit_append_mids(struct cw_audit *a, const struct mids *m, size_t n,
		      uint64_t *tickets, size_t *done, struct cw_error *err)
{
	const char *mid;
	size_t len, i;
	int ret;

	*done = 0;
	while (*done < n) {
		if (n - *done > INT_MAX) {
			audit_err(err, a->path, 0, "too many records at once");
			return -E2BIG;
		}
		ret = append_batch(a, m, *done, n - *done, err);
		if (ret == 0) {	/* a rotation: this record on its own */
			mid = mid_at(m, *done, &len);
			ret = append_record(a, mid, len, err) ?: 1;
		}
		if (ret < 0)
			return ret;
		for (i = 0; tickets && i < (size_t)ret; i++)
			tickets[*done + i] = a->appended;
		*done += (size_t)ret;
	}
	return 0;
}

int cw_audit_write_batch(struct cw_audit *a, const struct cw_audit_rec *recs,
			 size_t n, unsigned flags, uint64_t *bytes,
			 struct cw_error *err)
{
	struct mids m = { 0 };
	struct heads h = { 0 };
	uint64_t ticket, before;
	size_t i, done;
	int ret = 0;

	if (bytes)
		*bytes = 0;
	if (!n)
		return 0;
	m.end = calloc(n, sizeof(*m.end));
	if (!m.end) {
		audit_err(err, a ? a->path : "", 0, "no memory");
		return -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		ret = audit_prepare_record(a, &h, recs[i].type,
					   recs[i].invocation, recs[i].fields,
					   &m.text, err);
		m.end[i] = m.text.len;
	}
	if (ret)
		goto out;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	before = a->bytes_out;
	ret = audit_append_mids(a, &m, n, NULL, &done, err);
	ticket = a->appended;
	if (bytes)
		*bytes = a->bytes_out - before;
	pthread_mutex_unlock(&a->lock);
	if (!ret && !(flags & CW_AUDIT_DEFER_SYNC))
		ret = audit_sync_through(a, ticket, err);
out:
	audit_heads_free(&h);
	cw_buf_free(&m.text);
	free(m.end);
	return ret;
}
