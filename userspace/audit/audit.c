// SPDX-License-Identifier: Apache-2.0
/*
 * Audit log writer and verifier.
 *
 * Every record is one line appended under an exclusive flock on the log, so
 * agents sharing the file form a single chain: each line carries the SHA-256
 * of the line before it. A writer remembers where its own last record ended;
 * when the file has grown (or shrunk) since, it reads the tail backwards to
 * pick up the chain from whoever wrote last.
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
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "audit/audit.h"

#define HASH_HEX 64
#define BLOCK_SIZE (64 * 1024)
/* Damaged lines (torn writes) a writer steps over before giving up. */
#define MAX_DAMAGED 16
#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

/* The middles of a batch's records, one after another in text: record i
 * is text.data[i ? end[i - 1] : 0, end[i]). */
struct mids {
	struct cw_buf text;
	size_t *end;
};

struct cw_audit {
	pthread_mutex_t lock;
	int wfd; /* O_WRONLY | O_APPEND: every record goes through it */
	int rfd; /* O_RDONLY: reading the tail written by others */
	char *path;
	bool tail_known;
	off_t end; /* file size after this handle's last record */
	uint64_t seq; /* seq of the last record */
	char hash[HASH_HEX + 1]; /* SHA-256 hex of the last record */
	char *block; /* scratch for backwards scans */
	uint64_t max_bytes; /* rotate before the file passes this; 0: never */
	/* Group commit: appends are numbered; one fdatasync makes every
	 * append before it durable, so threads waiting on the same flush
	 * share it instead of queueing one flush each. */
	uint64_t appended; /* appends by this handle */
	uint64_t synced; /* appends known durable */
	uint64_t failed; /* appends a failed fdatasync covered */
	int sync_errno;
	uint64_t flushes; /* fdatasyncs for synced writes */
	bool syncing; /* a thread is flushing */
	pthread_cond_t synced_cond; /* ... and broadcasts when done */
	/* Writers told later (cw_audit_write_async): their records wait in
	 * pend, in order, until the flusher thread (started with the first)
	 * appends them all with one write, makes them durable and tells
	 * their writers, by ticket in order. */
	struct waiter *pending, **pending_tail;
	struct mids pend;	/* their middles */
	size_t npending, pend_cap;
	struct waiter *waiters, **waiters_tail;
	pthread_cond_t waiters_cond;
	struct waiter *ready, **ready_tail;	/* to be told */
	pthread_t flusher;
	bool flusher_running, flusher_stop;
};

struct waiter {
	struct waiter *next;
	uint64_t ticket;
	int sync_errno;		/* once ready: 0, or why its flush failed */
	struct cw_error *err;	/* or why its append failed (may be NULL) */
	cw_audit_done_fn done;
	void *ctx;
};

/* The chain's tail as found in the file. */
struct tail {
	uint64_t seq;
	char hash[HASH_HEX + 1];
	bool need_nl; /* the file ends inside a line */
	unsigned int damaged; /* lines stepped over */
};

struct rec_info {
	uint64_t seq;
	char prev[HASH_HEX + 1];
	bool torn_before;
	char rotated_from[NAME_MAX + 1]; /* "" unless a file's first record */
};

const char *const cw_audit_types[] = {
	"agent", "access", "decision", "launch", "exec", "process", "file", "net",
	"seccomp", "limit", "exit", "approval", NULL,
};

static const char *const reserved[] = {
	"ts", "seq", "type", "invocation", "prev", "torn_before",
	"rotated_from",
};

static const char *errstr(int e)
{
	const char *s = strerrordesc_np(e);

	return s ? s : "unknown error";
}

static void audit_err(struct cw_error *err, const char *path, int line,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void audit_err(struct cw_error *err, const char *path, int line,
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

/* libsodium: a small, well-kept SHA-256 (libcrypto would triple the
 * agent's resident size for one hash). */
static int sha256_hex(const void *p, size_t n, char out[HASH_HEX + 1])
{
	unsigned char md[crypto_hash_sha256_BYTES];

	if (crypto_hash_sha256(md, p, n) != 0)
		return -EIO;
	sodium_bin2hex(out, HASH_HEX + 1, md, sizeof(md));
	return 0;
}

static bool is_hash_hex(const char *s)
{
	size_t i;

	if (strlen(s) != HASH_HEX)
		return false;
	for (i = 0; i < HASH_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* 0 if buf holds a record as this module writes them, else -EBADMSG. */
static int parse_record(const char *buf, size_t len, struct rec_info *ri,
			char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *prev;
	int ret = -EBADMSG;

	memset(ri, 0, sizeof(*ri));
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(why, whylen, "not JSON: column %d: %s", jerr.column,
			 jerr.text);
		return -EBADMSG;
	}
	if (!json_is_object(root)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	if (!json_is_string(json_object_get(root, "ts")) ||
	    !json_is_string(json_object_get(root, "type"))) {
		snprintf(why, whylen, "ts or type missing or not a string");
		goto out;
	}
	v = json_object_get(root, "seq");
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		snprintf(why, whylen, "seq missing or not a positive integer");
		goto out;
	}
	ri->seq = (uint64_t)json_integer_value(v);
	v = json_object_get(root, "prev");
	prev = json_string_value(v);
	if (!prev || (prev[0] && !is_hash_hex(prev))) {
		snprintf(why, whylen,
			 "prev missing or not \"\" or a SHA-256 in hex");
		goto out;
	}
	memcpy(ri->prev, prev, strlen(prev) + 1);
	ri->torn_before = json_is_true(json_object_get(root, "torn_before"));
	v = json_object_get(root, "rotated_from");
	if (v && (!json_is_string(v) || !json_string_length(v) ||
		  json_string_length(v) > NAME_MAX ||
		  strchr(json_string_value(v), '/'))) {
		snprintf(why, whylen, "rotated_from is not a file name");
		goto out;
	}
	if (v)
		memcpy(ri->rotated_from, json_string_value(v),
		       json_string_length(v) + 1);
	ret = 0;
out:
	json_decref(root);
	return ret;
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
			  errstr(-ret));
}

/* Finds the last intact record before offset size; called under the flock. */
static int find_tail(struct cw_audit *a, off_t size, struct tail *t,
		     struct cw_error *err)
{
	struct rec_info ri;
	char why[256];
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
		if (!parse_record(line, len, &ri, why, sizeof(why))) {
			ret = sha256_hex(line, len, t->hash);
			if (ret) {
				audit_err(err, a->path, 0, "SHA-256 failed");
				goto out;
			}
			t->seq = ri.seq;
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

static int fsync_dir(const char *dir)
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
static char *dir_of(const char *path)
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
	char *dir = dir_of(path);
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
			parent = dir_of(dir);
			ret = parent ? fsync_dir(parent) : -ENOMEM;
			if (ret) {
				audit_err(err, path, 0,
					  "syncing the directory above %s failed: %s",
					  dir, errstr(-ret));
				goto out;
			}
		} else if (errno != EEXIST) {
			ret = -errno;
			audit_err(err, path, 0,
				  "creating directory %s failed: %s", dir,
				  errstr(-ret));
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
	for (tries = 0; tries < 3; tries++) {
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
			  errstr(-fd));
	return fd;
}

struct cw_audit *cw_audit_open(const char *path, struct cw_error *err)
{
	struct cw_audit *a = NULL;
	bool created = false, mutex_ok = false;
	struct stat st, rst;
	char *dir = NULL;
	int ret, fl;

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
			  errstr(-ret));
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
	if (fstat(a->wfd, &st)) {
		ret = -errno;
		audit_err(err, path, 0, "fstat failed: %s", errstr(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		audit_err(err, path, 0,
			  "is not a regular file; give the path of a regular file");
		goto out;
	}
	fl = fcntl(a->wfd, F_GETFL);
	if (fl < 0 || fcntl(a->wfd, F_SETFL, fl & ~O_NONBLOCK)) {
		ret = -errno;
		audit_err(err, path, 0, "fcntl failed: %s", errstr(-ret));
		goto out;
	}
	if (created) {
		/* The umask must not decide who can read the log. */
		if (fchmod(a->wfd, 0600)) {
			ret = -errno;
			audit_err(err, path, 0, "fchmod 0600 failed: %s",
				  errstr(-ret));
			goto out;
		}
	} else if (st.st_mode & 077) {
		ret = -EPERM;
		audit_err(err, path, 0,
			  "mode %04o grants group/other access to the audit log; run 'chmod 600 %s' (and check who read it)",
			  (unsigned int)(st.st_mode & 07777), path);
		goto out;
	} else if (st.st_uid != geteuid()) {
		/* Its owner could rewrite the log behind our back. */
		ret = -EPERM;
		audit_err(err, path, 0,
			  "owned by uid %u, not by this process (uid %u); run 'chown %u %s' or move it aside",
			  (unsigned int)st.st_uid, (unsigned int)geteuid(),
			  (unsigned int)geteuid(), path);
		goto out;
	}
	a->rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (a->rfd < 0) {
		ret = -errno;
		audit_err(err, path, 0, "opening for reading failed: %s",
			  errstr(-ret));
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
		dir = dir_of(path);
		ret = dir ? fsync_dir(dir) : -ENOMEM;
		if (ret) {
			audit_err(err, path, 0,
				  "syncing its directory failed: %s",
				  errstr(-ret));
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
	pthread_mutex_lock(&a->lock);
	a->flusher_stop = true;
	pthread_cond_broadcast(&a->waiters_cond);
	pthread_mutex_unlock(&a->lock);
	if (a->flusher_running)
		pthread_join(a->flusher, NULL);
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

static int lock_file(int fd, int op)
{
	while (flock(fd, op)) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

struct dump_to {
	struct cw_buf *b;
	bool nomem;
};

/* Called for every token: a copy, and a grown buffer only now and then. */
static int dump_cb(const char *p, size_t n, void *data)
{
	struct dump_to *d = data;
	struct cw_buf *b = d->b;

	if (b->cap - b->len <= n && cw_buf_reserve(b, n)) {
		d->nomem = true;
		return -1;
	}
	/* most tokens are one character: no call for those */
	if (n == 1)
		b->data[b->len] = *p;
	else
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

/* Appends j as jansson serializes it, straight into b (no string to
 * allocate, copy and free). -ENOMEM, or -EINVAL when jansson cannot
 * serialize it; b may then hold part of it. */
static int append_json(struct cw_buf *b, const json_t *j, size_t flags)
{
	struct dump_to d = { .b = b };
	int ret = 0;

	if (json_dump_callback(j, dump_cb, &d, flags))
		ret = d.nomem ? -ENOMEM : -EINVAL;
	if (b->data)
		b->data[b->len] = '\0';
	return ret;
}

/* Appends s as a JSON string; -EINVAL when it is not UTF-8. */
static int append_json_string(struct cw_buf *b, const char *s)
{
	json_t *j = json_string(s);
	int ret;

	if (!j)
		return -EINVAL;
	ret = append_json(b, j, DUMP_FLAGS | JSON_ENCODE_ANY);
	json_decref(j);
	return ret;
}

/*
 * The start of a record's middle, "type":T,"invocation":I, serialized once
 * for the records of one write that share them (a burst of kernel events
 * has one call and a few types) and copied for the rest.
 */
#define HEADS 4
struct heads {
	struct {
		const char *type, *invocation;
		struct cw_buf text;
	} e[HEADS];
	unsigned int n, next;
};

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static void heads_free(struct heads *h)
{
	unsigned int i;

	for (i = 0; i < HEADS; i++)
		cw_buf_free(&h->e[i].text);
}

static int head_get(struct heads *h, const char *path, const char *type,
		    const char *invocation, const struct cw_buf **out,
		    struct cw_error *err)
{
	unsigned int i;
	struct cw_buf *t;
	int ret;

	for (i = 0; i < h->n; i++) {
		if (same_str(h->e[i].type, type) &&
		    same_str(h->e[i].invocation, invocation)) {
			*out = &h->e[i].text;
			return 0;
		}
	}
	i = h->n < HEADS ? h->n++ : h->next++ % HEADS;
	h->e[i].type = h->e[i].invocation = NULL;
	t = &h->e[i].text;
	t->len = 0;
	ret = cw_buf_append(t, "\"type\":", 7) ?: append_json_string(t, type);
	if (ret) {
		audit_err(err, path, 0, ret == -EINVAL ?
			  "record type is not valid UTF-8" : "no memory");
		return ret;
	}
	if (invocation) {
		ret = cw_buf_append(t, ",\"invocation\":", 14) ?:
		      append_json_string(t, invocation);
		if (ret) {
			audit_err(err, path, 0, ret == -EINVAL ?
				  "invocation id is not valid UTF-8" : "no memory");
			h->e[i].type = NULL;
			return ret;
		}
	}
	/* a NULL type marks a slot not (yet) valid */
	h->e[i].type = type;
	h->e[i].invocation = invocation;
	*out = t;
	return 0;
}

/* The record's middle, appended to mid: type, invocation and the caller's
 * fields. */
static int build_middle(const char *path, struct heads *h, const char *type,
			const char *invocation, json_t *fields,
			struct cw_buf *mid, struct cw_error *err)
{
	const struct cw_buf *head;
	size_t at;
	int ret;

	ret = head_get(h, path, type, invocation, &head, err);
	if (ret)
		return ret;
	if (cw_buf_append(mid, head->data, head->len)) {
		audit_err(err, path, 0, "no memory to build the record");
		return -ENOMEM;
	}
	if (!fields || !json_object_size(fields))
		return 0;
	at = mid->len;
	ret = append_json(mid, fields, DUMP_FLAGS);
	if (ret) {
		mid->len = at;
		audit_err(err, path, 0, ret == -EINVAL ?
			  "record fields cannot be serialized" :
			  "no memory to build the record");
		return ret;
	}
	/* {"k":v,...} follows the head as ,"k":v,... */
	mid->data[at] = ',';
	mid->data[--mid->len] = '\0';
	return 0;
}

/* Removes a failed append so no half record stays in the file. */
static void undo_append(struct cw_audit *a, off_t size)
{
	if (!ftruncate(a->wfd, size))
		fdatasync(a->wfd);
}

/* Final component of path. */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* N when name is "<base>.<N>" (N decimal, no sign), else -1. */
static long rotated_index(const char *name, const char *base)
{
	size_t n = strlen(base);
	const char *d;
	char *end;
	long v;

	if (strncmp(name, base, n) || name[n] != '.' || name[n + 1] < '0' ||
	    name[n + 1] > '9')
		return -1;
	d = name + n + 1;
	errno = 0;
	v = strtol(d, &end, 10);
	if (errno || *end || v < 0 || (d[0] == '0' && d[1]))
		return -1;
	return v;
}

long cw_audit_rotated_index(const char *file, const char *path)
{
	return rotated_index(base_of(file), base_of(path));
}

/*
 * The rotated files of the log at path, oldest first, with path itself
 * last when it exists. Rotated files are "<path>.<N>", N counting up from
 * 1 in the order they were rotated.
 */
static int list_set(const char *path, char ***out, size_t *nout, long *maxn)
{
	char *dir = dir_of(path);
	const char *base = base_of(path);
	struct { long n; char *p; } *v = NULL, tmp;
	size_t nv = 0, i, j;
	struct dirent *de;
	struct stat st;
	char **files = NULL;
	DIR *d = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (maxn)
		*maxn = 0;
	if (!dir)
		goto out;
	d = opendir(dir);
	if (!d) {
		ret = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		long n = rotated_index(de->d_name, base);
		void *nvp;

		if (n < 0)
			continue;
		nvp = realloc(v, (nv + 1) * sizeof(*v));
		if (!nvp)
			goto out;
		v = nvp;
		/* A bare name stays bare: "audit.jsonl.1", not "./...". */
		if (asprintf(&v[nv].p, "%s%s%s", strchr(path, '/') ? dir : "",
			     strchr(path, '/') ? "/" : "", de->d_name) < 0)
			goto out;
		v[nv++].n = n;
	}
	/* Few files: insertion sort by N. */
	for (i = 1; i < nv; i++)
		for (j = i; j > 0 && v[j - 1].n > v[j].n; j--) {
			tmp = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	files = calloc(nv + 2, sizeof(*files));
	if (!files)
		goto out;
	for (i = 0; i < nv; i++) {
		files[i] = v[i].p;
		v[i].p = NULL;
	}
	if (nv && maxn)
		*maxn = v[nv - 1].n;
	*nout = nv;
	if (!stat(path, &st)) {
		files[nv] = strdup(path);
		if (!files[nv])
			goto out;
		(*nout)++;
	}
	*out = files;
	files = NULL;
	ret = 0;
out:
	if (files) {
		for (i = 0; files[i]; i++)
			free(files[i]);
		free(files);
		*nout = 0;
	}
	for (i = 0; v && i < nv; i++)
		free(v[i].p);
	free(v);
	if (d)
		closedir(d);
	free(dir);
	return ret;
}

static void free_set(char **files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/*
 * Another writer rotated the log: path now names a new file while our
 * descriptors hold the old one. Called with the flock on the old file
 * held; on return 0 the descriptors are the new file's, locked, and st is
 * its fstat. A log deleted while open stays an error.
 */
static int follow_path(struct cw_audit *a, struct stat *st,
		       struct cw_error *err)
{
	const int wflags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY;
	const int rflags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
	struct stat pst, rst;
	int tries, wfd, rfd, ret;

	for (tries = 0; tries < 8; tries++) {
		if (st->st_nlink == 0) {
			audit_err(err, a->path, 0,
				  "the audit log was deleted while open; restart to create a new one");
			return -ENOENT;
		}
		if (stat(a->path, &pst)) {
			ret = -errno;
			audit_err(err, a->path, 0,
				  "the audit log was moved away while open (%s); restart to create a new one",
				  errstr(-ret));
			return ret;
		}
		if (pst.st_dev == st->st_dev && pst.st_ino == st->st_ino)
			return 0;
		wfd = open(a->path, wflags);
		if (wfd < 0) {
			ret = -errno;
			audit_err(err, a->path, 0,
				  "opening the rotated audit log failed: %s",
				  errstr(-ret));
			return ret;
		}
		rfd = open(a->path, rflags);
		if (rfd < 0 || fstat(wfd, st) || fstat(rfd, &rst) ||
		    rst.st_ino != st->st_ino || rst.st_dev != st->st_dev) {
			ret = rfd < 0 ? -errno : -ESTALE;
			if (rfd >= 0)
				close(rfd);
			close(wfd);
			if (ret == -ESTALE)
				continue; /* replaced again meanwhile */
			audit_err(err, a->path, 0,
				  "opening the rotated audit log failed: %s",
				  errstr(-ret));
			return ret;
		}
		/* Closing the old descriptors drops the old file's flock. */
		close(a->wfd);
		close(a->rfd);
		a->wfd = wfd;
		a->rfd = rfd;
		a->tail_known = false;
		ret = lock_file(a->wfd, LOCK_EX);
		if (ret) {
			audit_err(err, a->path, 0, "flock failed: %s",
				  errstr(-ret));
			return ret;
		}
		if (fstat(a->wfd, st)) {
			ret = -errno;
			audit_err(err, a->path, 0, "fstat failed: %s",
				  errstr(-ret));
			return ret;
		}
	}
	audit_err(err, a->path, 0,
		  "the audit log keeps being replaced; is another program rotating it?");
	return -ESTALE;
}

/* seq in decimal at p; its length. */
static size_t format_seq(char *p, uint64_t v)
{
	char d[20];
	size_t n = 0, i;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = d[n - 1 - i];
	return n;
}

/* Appends the line for one record to line: head, the caller's middle, the
 * trailer; no newline at its end. */
static int build_line(struct cw_buf *line, bool need_nl, uint64_t seq,
		      const char *mid, size_t mid_len, bool torn,
		      const char *rotated_from, const char *prev)
{
	char head[96];
	size_t h = 7;

	memcpy(head, "{\"ts\":\"", 7);
	cw_format_ts(cw_now_us(), head + h, 40);
	h += strlen(head + h);
	memcpy(head + h, "\",\"seq\":", 8);
	h += 8;
	h += format_seq(head + h, seq);
	head[h++] = ',';
	/* A torn line gets its own newline so it stands alone. */
	if ((need_nl && cw_buf_append(line, "\n", 1)) ||
	    cw_buf_append(line, head, h) ||
	    cw_buf_append(line, mid, mid_len) ||
	    (torn && cw_buf_append(line, ",\"torn_before\":true", 19)) ||
	    (rotated_from &&
	     (cw_buf_append(line, ",\"rotated_from\":\"", 17) ||
	      cw_buf_append(line, rotated_from, strlen(rotated_from)) ||
	      cw_buf_append(line, "\"", 1))) ||
	    cw_buf_append(line, ",\"prev\":\"", 9) ||
	    cw_buf_append(line, prev, strlen(prev)) ||
	    cw_buf_append(line, "\"}", 2))
		return -ENOMEM;
	return 0;
}

/*
 * Size-based rotation, called under the old file's flock with the new
 * file's first record in line. The old file keeps its records and gets the
 * next free name "<path>.<N>"; a new file takes its place at path, created
 * aside with that record already in it and durable, then renamed over
 * path, so path always names a whole log. The record carries the old
 * file's last hash in prev and its name in rotated_from.
 */
static int rotate(struct cw_audit *a, const struct cw_buf *line,
		  const char *rotated_name, const char *rotated_path,
		  bool linked, struct cw_error *err)
{
	char *tmp = NULL, *dir = NULL;
	int fd = -1, rfd = -1, ret;

	/* Deferred records of the old file become durable before it moves. */
	if (fdatasync(a->wfd)) {
		ret = -errno;
		audit_err(err, a->path, 0, "fdatasync before rotation failed: %s",
			  errstr(-ret));
		goto out;
	}
	dir = dir_of(a->path);
	if (!dir || asprintf(&tmp, "%s.rotating.%d", a->path, (int)getpid()) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory to rotate the log");
		goto out;
	}
	unlink(tmp); /* left by a writer of this pid that crashed */
	fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
			       O_NOCTTY, 0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		ret = -errno;
		audit_err(err, tmp, 0, "creating the next audit log failed: %s",
			  errstr(-ret));
		goto out;
	}
	ret = cw_write_all(fd, line->data, line->len);
	if (!ret && fdatasync(fd))
		ret = -errno;
	if (ret) {
		audit_err(err, tmp, 0, "writing the next audit log failed: %s",
			  errstr(-ret));
		goto out;
	}
	rfd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (rfd < 0) {
		ret = -errno;
		audit_err(err, tmp, 0, "opening for reading failed: %s",
			  errstr(-ret));
		goto out;
	}
	if (!linked && link(a->path, rotated_path)) {
		ret = -errno;
		audit_err(err, rotated_path, 0,
			  "keeping the full audit log under this name failed: %s",
			  errstr(-ret));
		goto out;
	}
	if (rename(tmp, a->path)) {
		ret = -errno;
		audit_err(err, a->path, 0,
			  "putting the next audit log in place failed: %s",
			  errstr(-ret));
		if (!linked)
			unlink(rotated_path);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	ret = fsync_dir(dir);
	if (ret) {
		/* Both names exist; only their durability is in doubt. */
		audit_err(err, a->path, 0,
			  "syncing the directory after rotating to %s failed: %s",
			  rotated_name, errstr(-ret));
	}
	/* Closing the old descriptors releases the old file's flock. */
	close(a->wfd);
	close(a->rfd);
	a->wfd = fd;
	a->rfd = rfd;
	fd = rfd = -1;
	/* Others may append to the new file as soon as it is in place. */
	a->end = (off_t)line->len;
out:
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (rfd >= 0)
		close(rfd);
	if (fd >= 0)
		close(fd);
	free(dir);
	return ret;
}

/* The name the current file gets when rotated; *linked when a crash left
 * it linked already (the highest rotated name is the current file). */
static int rotation_name(struct cw_audit *a, const struct stat *st,
			 char **rpath, bool *linked, struct cw_error *err)
{
	struct stat rst;
	char **files;
	size_t n;
	long maxn;
	int ret;

	*linked = false;
	*rpath = NULL;
	ret = list_set(a->path, &files, &n, &maxn);
	if (ret) {
		audit_err(err, a->path, 0,
			  "listing the rotated audit logs failed: %s",
			  errstr(-ret));
		return ret;
	}
	free_set(files, n);
	if (maxn > 0 && asprintf(rpath, "%s.%ld", a->path, maxn) > 0 &&
	    !stat(*rpath, &rst) && rst.st_ino == st->st_ino &&
	    rst.st_dev == st->st_dev) {
		*linked = true;
		return 0;
	}
	free(*rpath);
	*rpath = NULL;
	if (maxn >= LONG_MAX - 1 ||
	    asprintf(rpath, "%s.%ld", a->path, maxn + 1) < 0) {
		*rpath = NULL;
		audit_err(err, a->path, 0, "no name left to rotate to");
		return -ENOMEM;
	}
	return 0;
}

/*
 * Under the writer's flock: the file that path names now (following a
 * rotation another writer made), its size in st, and its last record in t
 * (from what this writer last wrote when nothing was appended since).
 */
static int locked_tail(struct cw_audit *a, struct stat *st, struct tail *t,
		       struct cw_error *err)
{
	int ret;

	if (fstat(a->wfd, st)) {
		ret = -errno;
		audit_err(err, a->path, 0, "fstat failed: %s", errstr(-ret));
		return ret;
	}
	ret = follow_path(a, st, err);
	if (ret)
		return ret;
	if (a->tail_known && st->st_size == a->end) {
		memset(t, 0, sizeof(*t));
		t->seq = a->seq;
		memcpy(t->hash, a->hash, sizeof(t->hash));
		return 0;
	}
	return find_tail(a, st->st_size, t, err);
}

/* Called with a->lock held. */
static int append_record(struct cw_audit *a, const char *mid,
			 size_t mid_len, struct cw_error *err)
{
	char hash[HASH_HEX + 1];
	struct cw_buf line = { 0 };
	char *rpath = NULL;
	bool rotating = false, linked = false;
	struct stat st;
	struct tail t;
	size_t skip;
	uint64_t seq;
	int ret;

	ret = lock_file(a->wfd, LOCK_EX);
	if (ret) {
		audit_err(err, a->path, 0, "flock failed: %s", errstr(-ret));
		return ret;
	}
	ret = locked_tail(a, &st, &t, err);
	if (ret)
		goto out;
	if (t.seq >= (uint64_t)INT64_MAX) {
		ret = -EOVERFLOW;
		audit_err(err, a->path, 0, "seq would overflow");
		goto out;
	}
	seq = t.seq + 1;
	skip = t.need_nl ? 1 : 0;
	if (build_line(&line, t.need_nl, seq, mid, mid_len, t.damaged, NULL,
		       t.hash)) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	/* A torn tail is mended in place first; the next record rotates. */
	if (a->max_bytes && st.st_size > 0 && !t.need_nl &&
	    (uint64_t)st.st_size + line.len + 1 > a->max_bytes) {
		ret = rotation_name(a, &st, &rpath, &linked, err);
		if (ret)
			goto out;
		rotating = true;
		line.len = 0;
		if (build_line(&line, false, seq, mid, mid_len, t.damaged,
			       base_of(rpath), t.hash)) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0,
				  "no memory to build the record");
			goto out;
		}
	}
	if (line.len - skip >= CW_AUDIT_MAX_LINE) {
		ret = -EMSGSIZE;
		audit_err(err, a->path, 0,
			  "record of %zu bytes exceeds the %u byte line limit",
			  line.len - skip, CW_AUDIT_MAX_LINE - 1);
		goto out;
	}
	ret = sha256_hex(line.data + skip, line.len - skip, hash);
	if (ret) {
		audit_err(err, a->path, 0, "SHA-256 failed");
		goto out;
	}
	ret = cw_buf_append(&line, "\n", 1);
	if (ret) {
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	if (rotating) {
		ret = rotate(a, &line, base_of(rpath), rpath, linked, err);
		if (ret)
			goto out;
	} else {
		/* One write() under the lock: O_APPEND plus flock keep it
		 * whole. */
		ret = cw_write_all(a->wfd, line.data, line.len);
		if (ret) {
			audit_err(err, a->path, 0, "writing record seq %" PRIu64
				  " failed: %s", seq, errstr(-ret));
			undo_append(a, st.st_size);
			goto out;
		}
		a->end = st.st_size + (off_t)line.len;
	}
	a->appended++;
	/* rotate() left the old file and the new record durable */
	if (rotating)
		a->synced = a->appended;
	a->seq = seq;
	memcpy(a->hash, hash, sizeof(a->hash));
	a->tail_known = true;
out:
	if (ret)
		a->tail_known = false;
	lock_file(a->wfd, LOCK_UN);
	free(rpath);
	cw_buf_free(&line);
	return ret;
}

void cw_audit_set_max_bytes(struct cw_audit *a, uint64_t max_bytes)
{
	pthread_mutex_lock(&a->lock);
	a->max_bytes = max_bytes;
	pthread_mutex_unlock(&a->lock);
}

/*
 * Makes this handle's appends up to ticket durable. One thread at a time
 * flushes, outside the lock and on its own descriptor (a rotation may
 * replace wfd meanwhile), while others go on appending; they wait for
 * that flush to end and the next one covers all of them: under load one
 * fdatasync serves many calls. A failed flush fails every append it
 * covered; those records stay in the file (others may follow them), so a
 * reader can find a record whose writer was told it failed.
 */
/* One flush by this thread, a->lock held (and released during the
 * fdatasync); the caller has checked that no other thread is flushing. */
static void flush_once(struct cw_audit *a)
{
	uint64_t upto;
	int fd, r;

	a->syncing = true;
	a->flushes++;
	upto = a->appended;
	fd = fcntl(a->wfd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0) {
		pthread_mutex_unlock(&a->lock);
		r = fdatasync(fd) ? errno : 0;
		close(fd);
		pthread_mutex_lock(&a->lock);
	} else {
		/* out of descriptors: flush under the lock */
		r = fdatasync(a->wfd) ? errno : 0;
	}
	a->syncing = false;
	if (r) {
		if (upto > a->failed)
			a->failed = upto;
		a->sync_errno = r;
	} else if (upto > a->synced) {
		a->synced = upto;
	}
	pthread_cond_broadcast(&a->synced_cond);
}

static int sync_through(struct cw_audit *a, uint64_t ticket,
			struct cw_error *err)
{
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	while (a->synced < ticket) {
		if (a->failed >= ticket) {
			ret = -a->sync_errno;
			audit_err(err, a->path, 0,
				  "fdatasync of the log failed: %s",
				  errstr(-ret));
			break;
		}
		if (a->syncing) {
			pthread_cond_wait(&a->synced_cond, &a->lock);
			continue;
		}
		flush_once(a);
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static int append_mids(struct cw_audit *a, const struct mids *m, size_t n,
		       uint64_t *tickets, size_t *done, struct cw_error *err);

/* A writer to be told of a failure. */
static void tell_failed(struct cw_audit *a, struct waiter *w, int ret,
			const struct cw_error *err)
{
	w->sync_errno = -ret;
	w->err = malloc(sizeof(*w->err));
	if (w->err)
		*w->err = *err;
	*a->ready_tail = w;
	a->ready_tail = &w->next;
}

/*
 * The flusher's append, a->lock held: every record waiting in pend with
 * one write() (more only at a rotation), under the lock the other writers
 * of this handle take too. Its writers wait for the next flush; if the
 * write failed, they are told so.
 */
static void append_pending(struct cw_audit *a)
{
	struct mids m = a->pend;
	struct waiter *list = a->pending, *w;
	struct cw_error err = { 0 };
	size_t i, n = a->npending, done = 0;
	uint64_t *tickets;
	int ret = -ENOMEM;

	a->pend = (struct mids){ 0 };
	a->pend_cap = a->npending = 0;
	a->pending = NULL;
	a->pending_tail = &a->pending;
	tickets = calloc(n, sizeof(*tickets));
	if (tickets)
		ret = append_mids(a, &m, n, tickets, &done, &err);
	else
		audit_err(&err, a->path, 0, "no memory");
	for (i = 0; (w = list); i++) {
		list = w->next;
		w->next = NULL;
		if (i < done) {
			w->ticket = tickets[i];
			*a->waiters_tail = w;
			a->waiters_tail = &w->next;
		} else {
			tell_failed(a, w, ret, &err);
		}
	}
	free(tickets);
	cw_buf_free(&m.text);
	free(m.end);
}

/* Tells the writers on the ready list, in order, outside the lock (held
 * on entry and on return). */
static void tell_ready(struct cw_audit *a)
{
	struct waiter *w, *list = a->ready;
	struct cw_error err;

	a->ready = NULL;
	a->ready_tail = &a->ready;
	pthread_mutex_unlock(&a->lock);
	while ((w = list)) {
		list = w->next;
		if (!w->sync_errno) {
			w->done(w->ctx, 0, NULL);
		} else if (w->err) {
			w->done(w->ctx, -w->sync_errno, w->err);
		} else {
			audit_err(&err, a->path, 0,
				  "fdatasync of the log failed: %s",
				  errstr(w->sync_errno));
			w->done(w->ctx, -w->sync_errno, &err);
		}
		free(w->err);
		free(w);
	}
	pthread_mutex_lock(&a->lock);
}

/*
 * The flusher thread: while writers wait to be told, one write() appends
 * every record handed in since the last, and one fdatasync (or another
 * thread's, when one is under way) covers every record appended before
 * it; then it tells the writers that flush covered (done() is short), and
 * the next round starts for the records handed in meanwhile. So the
 * batches grow with the load, and the writers' threads wait neither for
 * the file nor for the disk. One thread for all of it: under load, a
 * thread of its own for the telling cost more in wakeups than the
 * telling itself.
 */
static void *flusher_main(void *p)
{
	struct cw_audit *a = p;
	struct waiter *w;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		/* Every waiter the flushes so far have covered is told. */
		while ((w = a->waiters) &&
		       (w->ticket <= a->synced || w->ticket <= a->failed)) {
			a->waiters = w->next;
			w->next = NULL;
			w->sync_errno = w->ticket <= a->synced ? 0 :
								 a->sync_errno;
			*a->ready_tail = w;
			a->ready_tail = &w->next;
		}
		if (!a->waiters)
			a->waiters_tail = &a->waiters;
		if (a->ready) {
			tell_ready(a);
			continue;
		}
		if (a->pending) {
			append_pending(a);
			continue;
		}
		if (!a->waiters) {
			if (a->flusher_stop)
				break;
			pthread_cond_wait(&a->waiters_cond, &a->lock);
		} else if (a->syncing) {
			pthread_cond_wait(&a->synced_cond, &a->lock);
		} else {
			flush_once(a);
		}
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int cw_audit_write(struct cw_audit *a, const char *type,
		   const char *invocation, json_t *fields,
		   struct cw_error *err)
{
	return cw_audit_write_flags(a, type, invocation, fields, 0, err);
}

/* Whether an object uses a name reserved[] keeps for the log: one pass
 * over its keys rather than a lookup of each name. */
static bool has_reserved(json_t *fields)
{
	const char *k;
	size_t i, len;
	void *it;

	for (it = json_object_iter(fields); it;
	     it = json_object_iter_next(fields, it)) {
		k = json_object_iter_key(it);
		len = json_object_iter_key_len(it);
		for (i = 0; i < CW_ARRAY_SIZE(reserved); i++)
			if (k[0] == reserved[i][0] &&
			    len == strlen(reserved[i]) &&
			    !memcmp(k, reserved[i], len))
				return true;
	}
	return false;
}

/* Checks a record and appends its middle (type, invocation, fields) to
 * mid. */
static int prepare_record(struct cw_audit *a, struct heads *h,
			  const char *type, const char *invocation,
			  json_t *fields, struct cw_buf *mid,
			  struct cw_error *err)
{
	size_t i, start = mid->len;
	int ret;

	if (!a || !type || !*type) {
		ret = -EINVAL;
		audit_err(err, a ? a->path : "", 0,
			  "audit record needs a log and a type");
		goto out;
	}
	if (fields && !json_is_object(fields)) {
		ret = -EINVAL;
		audit_err(err, a->path, 0,
			  "record fields must be a JSON object");
		goto out;
	}
	for (i = 0; fields && has_reserved(fields) &&
		    i < CW_ARRAY_SIZE(reserved); i++) {
		if (json_object_get(fields, reserved[i])) {
			ret = -EINVAL;
			audit_err(err, a->path, 0,
				  "record field \"%s\" is reserved for the audit log itself",
				  reserved[i]);
			goto out;
		}
	}
	ret = build_middle(a->path, h, type, invocation, fields, mid, err);
	if (ret)
		goto out;
	/* Refuse before taking any lock what can never fit. */
	if (mid->len - start >= CW_AUDIT_MAX_LINE) {
		ret = -EMSGSIZE;
		audit_err(err, a->path, 0,
			  "record of over %zu bytes exceeds the %u byte line limit",
			  mid->len - start, CW_AUDIT_MAX_LINE - 1);
		goto out;
	}
out:
	return ret;
}

int cw_audit_write_flags(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 unsigned flags, struct cw_error *err)
{
	struct cw_buf mid = { 0 };
	struct heads h = { 0 };
	uint64_t ticket;
	int ret;

	ret = prepare_record(a, &h, type, invocation, fields, &mid, err);
	if (ret)
		goto out;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  errstr(-ret));
		goto out;
	}
	ret = append_record(a, mid.data, mid.len, err);
	ticket = a->appended;
	pthread_mutex_unlock(&a->lock);
	if (!ret && !(flags & CW_AUDIT_DEFER_SYNC))
		ret = sync_through(a, ticket, err);
out:
	heads_free(&h);
	cw_buf_free(&mid);
	return ret;
}

int cw_audit_write_async(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 cw_audit_done_fn done, void *ctx,
			 struct cw_error *err)
{
	struct cw_buf mid = { 0 };
	struct heads h = { 0 };
	struct waiter *w = NULL;
	int ret;

	ret = prepare_record(a, &h, type, invocation, fields, &mid, err);
	if (ret)
		goto out;
	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory");
		goto out;
	}
	w->done = done;
	w->ctx = ctx;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  errstr(-ret));
		goto out;
	}
	if (!a->flusher_running) {
		ret = -pthread_create(&a->flusher, NULL, flusher_main, a);
		a->flusher_running = !ret;
	}
	if (ret) {
		audit_err(err, a->path, 0,
			  "cannot start the log's flusher thread: %s",
			  errstr(-ret));
		goto unlock;
	}
	/* Queued for the flusher's next append: no file is touched here. */
	if (a->npending == a->pend_cap) {
		size_t cap = a->pend_cap ? a->pend_cap * 2 : 64;
		size_t *end = realloc(a->pend.end, cap * sizeof(*end));

		if (!end) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0, "no memory");
			goto unlock;
		}
		a->pend.end = end;
		a->pend_cap = cap;
	}
	ret = cw_buf_append(&a->pend.text, mid.data, mid.len);
	if (ret) {
		audit_err(err, a->path, 0, "no memory");
		goto unlock;
	}
	a->pend.end[a->npending++] = a->pend.text.len;
	*a->pending_tail = w;
	a->pending_tail = &w->next;
	w = NULL;
	pthread_cond_signal(&a->waiters_cond);
unlock:
	pthread_mutex_unlock(&a->lock);
out:
	free(w);
	heads_free(&h);
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
	char hash[HASH_HEX + 1];
	struct cw_buf all = { 0 };
	struct stat st;
	struct tail t;
	uint64_t seq;
	size_t i, skip, start, len, mid_len;
	const char *mid;
	int ret;

	ret = lock_file(a->wfd, LOCK_EX);
	if (ret) {
		audit_err(err, a->path, 0, "flock failed: %s", errstr(-ret));
		return ret;
	}
	ret = locked_tail(a, &st, &t, err);
	if (ret)
		goto out;
	memcpy(hash, t.hash, sizeof(hash));
	seq = t.seq;
	/* the middles plus each line's ts, seq and prev, give or take */
	if (cw_buf_reserve(&all, m->end[from + n - 1] -
				 (from ? m->end[from - 1] : 0) + n * 160)) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory to build the record");
		goto out;
	}
	for (i = 0; i < n; i++) {
		bool first = i == 0;

		if (seq >= (uint64_t)INT64_MAX) {
			ret = -EOVERFLOW;
			audit_err(err, a->path, 0, "seq would overflow");
			goto out;
		}
		/* Each line is built in place, hashed there, and left out
		 * again if it needs a rotation. Only the first line mends a
		 * torn tail or notes it. */
		start = all.len;
		skip = first && t.need_nl ? 1 : 0;
		mid = mid_at(m, from + i, &mid_len);
		if (build_line(&all, skip, seq + 1, mid, mid_len,
			       first && t.damaged, NULL, hash)) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0, "no memory to build the record");
			goto out;
		}
		len = all.len - start;
		if (a->max_bytes && st.st_size + start > 0 &&
		    !(first && t.need_nl) &&
		    (uint64_t)st.st_size + start + len + 1 > a->max_bytes) {
			all.len = start;
			break;
		}
		if (len - skip >= CW_AUDIT_MAX_LINE) {
			ret = -EMSGSIZE;
			audit_err(err, a->path, 0,
				  "record of %zu bytes exceeds the %u byte line limit",
				  len - skip, CW_AUDIT_MAX_LINE - 1);
			goto out;
		}
		if (sha256_hex(all.data + start + skip, len - skip, hash)) {
			ret = -EIO;
			audit_err(err, a->path, 0, "SHA-256 failed");
			goto out;
		}
		if (cw_buf_append(&all, "\n", 1)) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0, "no memory to build the record");
			goto out;
		}
		seq++;
	}
	if (!all.len)
		goto out;	/* ret 0: the first needs a rotation */
	ret = cw_write_all(a->wfd, all.data, all.len);
	if (ret) {
		audit_err(err, a->path, 0, "writing records to seq %" PRIu64
			  " failed: %s", seq, errstr(-ret));
		undo_append(a, st.st_size);
		goto out;
	}
	a->appended++;
	a->end = st.st_size + (off_t)all.len;
	a->seq = seq;
	memcpy(a->hash, hash, sizeof(a->hash));
	a->tail_known = true;
	ret = (int)i;
out:
	if (ret < 0)
		a->tail_known = false;
	lock_file(a->wfd, LOCK_UN);
	cw_buf_free(&all);
	return ret;
}

/*
 * Appends the n records of m in order, a->lock held: as many per write() as
 * fit before the rotation size, a record that needs a rotation on its own.
 * *done: how many were written; tickets (may be NULL): the append that
 * wrote each. 0, or -errno with err: none after *done written.
 */
static int append_mids(struct cw_audit *a, const struct mids *m, size_t n,
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
			 size_t n, unsigned flags, struct cw_error *err)
{
	struct mids m = { 0 };
	struct heads h = { 0 };
	uint64_t ticket;
	size_t i, done;
	int ret = 0;

	if (!n)
		return 0;
	m.end = calloc(n, sizeof(*m.end));
	if (!m.end) {
		audit_err(err, a ? a->path : "", 0, "no memory");
		return -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		ret = prepare_record(a, &h, recs[i].type, recs[i].invocation,
				     recs[i].fields, &m.text, err);
		m.end[i] = m.text.len;
	}
	if (ret)
		goto out;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  errstr(-ret));
		goto out;
	}
	ret = append_mids(a, &m, n, NULL, &done, err);
	ticket = a->appended;
	pthread_mutex_unlock(&a->lock);
	if (!ret && !(flags & CW_AUDIT_DEFER_SYNC))
		ret = sync_through(a, ticket, err);
out:
	heads_free(&h);
	cw_buf_free(&m.text);
	free(m.end);
	return ret;
}

/* Verifier: a forward reader of complete lines, bounded per line. */
struct line_reader {
	int fd;
	off_t left; /* bytes of the snapshot not read yet */
	char *blk;
	size_t pos;
	size_t n;
};

/*
 * 1 with the next line in *line (without its '\n'; *nl says whether it had
 * one), 0 at the end, -EMSGSIZE for a line over the limit, else -errno.
 */
static int read_line(struct line_reader *r, struct cw_buf *line, bool *nl)
{
	bool any = false;

	line->len = 0;
	*nl = false;
	for (;;) {
		char *p;
		size_t take;

		if (r->pos == r->n) {
			size_t want = r->left > BLOCK_SIZE ? BLOCK_SIZE :
							     (size_t)r->left;
			ssize_t got;

			if (!want)
				return any ? 1 : 0;
			got = read(r->fd, r->blk, want);
			if (got < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (got == 0) {
				r->left = 0; /* truncated meanwhile */
				continue;
			}
			r->pos = 0;
			r->n = (size_t)got;
			r->left -= got;
		}
		any = true;
		p = memchr(r->blk + r->pos, '\n', r->n - r->pos);
		take = p ? (size_t)(p - (r->blk + r->pos)) : r->n - r->pos;
		if (line->len + take >= CW_AUDIT_MAX_LINE)
			return -EMSGSIZE;
		if (cw_buf_append(line, r->blk + r->pos, take))
			return -ENOMEM;
		r->pos += take;
		if (p) {
			r->pos++;
			*nl = true;
			return 1;
		}
	}
}

struct verify_state {
	const char *path;
	struct cw_error *err;
	unsigned long torn_at; /* first torn line stepped over, 0 if none */
	unsigned long torn_next; /* the record that stepped over it */
};

static int verify_fail(struct verify_state *vs, unsigned long line,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int verify_fail(struct verify_state *vs, unsigned long line,
		       const char *fmt, ...)
{
	char text[sizeof(vs->err->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (vs->torn_at && vs->torn_at < line)
		audit_err(vs->err, vs->path, (int)line,
			  "%s (line %lu is also torn)", text, vs->torn_at);
	else
		audit_err(vs->err, vs->path, (int)line, "%s", text);
	return -EBADMSG;
}

/* The chain as it stands after the files verified so far. */
struct chain {
	uint64_t expected; /* seq of the next record */
	char prev_hash[HASH_HEX + 1];
	uint64_t good;
	const char *prev_path; /* the file before, NULL for the first */
	unsigned long prev_lines; /* its last line */
	const struct cw_audit_anchor *anchor; /* NULL: none */
	bool anchor_seen;
};

/* Checks the first record of a file against the file before it. */
static int check_continuation(struct verify_state *vs, const struct chain *c,
			      const struct rec_info *ri)
{
	const char *prev = c->prev_path ? base_of(c->prev_path) : NULL;

	if (!prev && ri->rotated_from[0])
		return verify_fail(vs, 1,
				   "missing: this file continues %s, which is not present (older files of this rotated log were removed or renamed)",
				   ri->rotated_from);
	if (prev && !ri->rotated_from[0])
		return verify_fail(vs, 1,
				   "not a continuation of %s: its first record has no rotated_from, so the file was replaced or edited",
				   prev);
	if (prev && strcmp(ri->rotated_from, prev))
		return verify_fail(vs, 1,
				   "missing: this file continues %s, but the file before it is %s",
				   ri->rotated_from, prev);
	return 0;
}

static int verify_file(struct chain *c, const char *path, int fd,
		       struct cw_error *err)
{
	struct verify_state vs = { .path = path, .err = err };
	struct line_reader r = { .fd = -1 };
	struct cw_buf line = { 0 };
	char hash[HASH_HEX + 1];
	char why[256] = "", dwhy[256] = "";
	unsigned long lineno = 0, damaged_at = 0;
	unsigned int damaged_n = 0;
	struct rec_info ri, next;
	struct stat st;
	bool nl;
	int ret;

	r.fd = fd;
	/* The size taken under a shared lock ends on a record boundary. */
	ret = lock_file(r.fd, LOCK_SH);
	if (!ret) {
		if (fstat(r.fd, &st))
			ret = -errno;
		lock_file(r.fd, LOCK_UN);
	}
	if (ret) {
		audit_err(err, path, 0, "locking or fstat failed: %s",
			  errstr(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		audit_err(err, path, 0, "is not a regular file");
		goto out;
	}
	r.left = st.st_size;
	r.blk = malloc(BLOCK_SIZE);
	if (!r.blk) {
		ret = -ENOMEM;
		audit_err(err, path, 0, "no memory");
		goto out;
	}
	for (;;) {
		ret = read_line(&r, &line, &nl);
		if (ret == 0)
			break;
		lineno++;
		if (ret == -EMSGSIZE) {
			ret = verify_fail(&vs, lineno,
					  "line longer than %u bytes: not a record",
					  CW_AUDIT_MAX_LINE - 1);
			goto out;
		}
		if (ret < 0) {
			audit_err(err, path, (int)lineno, "reading failed: %s",
				  errstr(-ret));
			goto out;
		}
		if (!nl) {
			if (!damaged_at)
				ret = verify_fail(&vs, lineno,
						  "torn last line: no newline at the end, a write was cut short");
			else
				ret = verify_fail(&vs, damaged_at,
						  "torn: a write was cut short here, and the last line (%lu) is torn too",
						  lineno);
			goto out;
		}
		if (parse_record(line.data, line.len, &ri, why, sizeof(why))) {
			if (!damaged_at) {
				damaged_at = lineno;
				memcpy(dwhy, why, sizeof(dwhy));
			}
			if (++damaged_n > MAX_DAMAGED) {
				ret = verify_fail(&vs, damaged_at,
						  "not a record (%s): edited or corrupted",
						  dwhy);
				goto out;
			}
			continue;
		}
		ret = sha256_hex(line.data, line.len, hash);
		if (ret) {
			audit_err(err, path, (int)lineno, "SHA-256 failed");
			goto out;
		}
		if (lineno == 1) {
			ret = check_continuation(&vs, c, &ri);
			if (ret)
				goto out;
		} else if (ri.rotated_from[0] && !damaged_at) {
			ret = verify_fail(&vs, lineno,
					  "edited: rotated_from belongs only on the first line of a file");
			goto out;
		}
		if (damaged_at) {
			/* Damage the writer stepped over is a torn write. */
			if (!ri.torn_before || ri.seq != c->expected ||
			    strcmp(ri.prev, c->prev_hash)) {
				ret = verify_fail(&vs, damaged_at,
						  "not a record (%s): edited or corrupted",
						  dwhy);
				goto out;
			}
			if (!vs.torn_at) {
				vs.torn_at = damaged_at;
				vs.torn_next = lineno;
			}
			damaged_at = 0;
			damaged_n = 0;
		} else if (strcmp(ri.prev, c->prev_hash)) {
			if (ri.seq == c->expected && lineno == 1 &&
			    !c->prev_path) {
				ret = verify_fail(&vs, lineno,
						  "edited: the first record must have prev \"\"");
			} else if (ri.seq == c->expected && lineno == 1) {
				ret = -EBADMSG;
				audit_err(err, c->prev_path, (int)c->prev_lines,
					  "edited: its SHA-256 does not match the prev recorded on line 1 of %s",
					  path);
			} else if (ri.seq == c->expected) {
				ret = verify_fail(&vs, lineno - 1,
						  "edited: its SHA-256 does not match the prev recorded on line %lu",
						  lineno);
			} else if (ri.seq > c->expected) {
				bool peeked = read_line(&r, &line, &nl) == 1 &&
					      nl &&
					      !parse_record(line.data, line.len,
							    &next, why,
							    sizeof(why));

				if (peeked && next.seq == c->expected)
					ret = verify_fail(&vs, lineno,
							  "out of order: seq %" PRIu64 " comes before seq %" PRIu64 " (line %lu)",
							  ri.seq, c->expected,
							  lineno + 1);
				else
					ret = verify_fail(&vs, lineno,
							  "missing: expected seq %" PRIu64 ", found %" PRIu64 "; the records between were removed",
							  c->expected, ri.seq);
			} else {
				ret = verify_fail(&vs, lineno,
						  "out of order or duplicated: seq %" PRIu64 " after seq %" PRIu64,
						  ri.seq, c->expected - 1);
			}
			goto out;
		} else if (ri.seq != c->expected) {
			ret = verify_fail(&vs, lineno,
					  "edited: seq is %" PRIu64 ", expected %" PRIu64 ", yet prev links it to the line before",
					  ri.seq, c->expected);
			goto out;
		}
		if (c->anchor && ri.seq == c->anchor->seq) {
			if (strcmp(hash, c->anchor->hash)) {
				ret = verify_fail(&vs, lineno,
						  "edited or replaced: seq %" PRIu64 " has SHA-256 %s, the anchor says %s",
						  ri.seq, hash, c->anchor->hash);
				goto out;
			}
			c->anchor_seen = true;
		}
		c->expected = ri.seq + 1;
		memcpy(c->prev_hash, hash, sizeof(c->prev_hash));
		c->good++;
	}
	if (damaged_at) {
		ret = verify_fail(&vs, damaged_at,
				  "not a record (%s): edited or corrupted", dwhy);
		goto out;
	}
	if (lineno == 0 && c->prev_path) {
		ret = verify_fail(&vs, 0,
				  "empty, yet %s was rotated into it: its records were removed",
				  base_of(c->prev_path));
		goto out;
	}
	if (vs.torn_at) {
		ret = -EBADMSG;
		audit_err(err, path, (int)vs.torn_at,
			  "torn: a write was cut short here; line %lu notes torn_before and the chain continues intact around it",
			  vs.torn_next);
		goto out;
	}
	c->prev_lines = lineno;
	ret = 0;
out:
	free(r.blk);
	cw_buf_free(&line);
	return ret;
}

int cw_audit_files(const char *path, char ***files, size_t *n,
		   struct cw_error *err)
{
	char *base = NULL, *dot;
	char **all = NULL;
	size_t nall = 0, i;
	struct stat st;
	int ret;

	*files = NULL;
	*n = 0;
	if (!path || !*path) {
		audit_err(err, "", 0, "no audit log path given");
		return -EINVAL;
	}
	/* A rotated file names the set up to itself. */
	dot = strrchr(base_of(path), '.');
	if (dot && (base = strndup(path, (size_t)(dot - path))) &&
	    rotated_index(base_of(path), base_of(base)) >= 0) {
		ret = list_set(base, &all, &nall, NULL);
		for (i = 0; !ret && i < nall; i++) {
			if (strcmp(base_of(all[i]), base_of(path)))
				continue;
			while (nall > i + 1)
				free(all[--nall]);
			all[nall] = NULL;
			*files = all;
			*n = nall;
			free(base);
			return 0;
		}
		free_set(all, nall);
		all = NULL;
		nall = 0;
	}
	free(base);
	if (stat(path, &st)) {
		ret = -errno;
		audit_err(err, path, 0, "opening the audit log failed: %s",
			  errstr(-ret));
		return ret;
	}
	ret = list_set(path, &all, &nall, NULL);
	if (ret) {
		audit_err(err, path, 0, "listing the audit log's directory failed: %s",
			  errstr(-ret));
		return ret;
	}
	if (nall == 0 || strcmp(all[nall - 1], path)) {
		/* The rotated files alone are no log: the current one is
		 * where the chain ends. */
		free_set(all, nall);
		audit_err(err, path, 0, "opening the audit log failed: %s",
			  errstr(ENOENT));
		return -ENOENT;
	}
	*files = all;
	*n = nall;
	return 0;
}

void cw_audit_files_free(char **files, size_t n)
{
	free_set(files, n);
}

static bool same_names(char **a, size_t na, char **b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

int cw_audit_open_files(const char *path, char ***files, int **fds,
			size_t *n, struct cw_error *err)
{
	char **names = NULL, **again = NULL;
	size_t nn = 0, na = 0, i, opened;
	int *v = NULL, tries, ret = 0;

	*files = NULL;
	*fds = NULL;
	*n = 0;
	/* Rotation only adds names: the same list before and after opening
	 * means the descriptors are one consistent set. */
	for (tries = 0; tries < 8; tries++) {
		ret = cw_audit_files(path, &names, &nn, err);
		if (ret)
			return ret;
		v = calloc(nn ? nn : 1, sizeof(*v));
		if (!v) {
			cw_audit_files_free(names, nn);
			audit_err(err, path, 0, "no memory");
			return -ENOMEM;
		}
		for (opened = 0; opened < nn; opened++) {
			v[opened] = open(names[opened], O_RDONLY | O_CLOEXEC |
								O_NOCTTY | O_NONBLOCK);
			if (v[opened] < 0)
				break;
		}
		if (opened == nn) {
			ret = cw_audit_files(path, &again, &na, err);
			if (!ret && same_names(names, nn, again, na)) {
				cw_audit_files_free(again, na);
				*files = names;
				*fds = v;
				*n = nn;
				return 0;
			}
			cw_audit_files_free(again, na);
		} else {
			ret = -errno;
			audit_err(err, names[opened],
				  0, "opening the audit log failed: %s",
				  errstr(-ret));
		}
		for (i = 0; i < opened; i++)
			close(v[i]);
		free(v);
		cw_audit_files_free(names, nn);
		if (ret && ret != -ENOENT)
			return ret;
	}
	audit_err(err, path, 0,
		  "the log keeps rotating while being read; try again");
	return -EAGAIN;
}

void cw_audit_close_files(char **files, int *fds, size_t n)
{
	size_t i;

	for (i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	cw_audit_files_free(files, n);
}

int cw_audit_verify_ex(const char *path,
		       const struct cw_audit_anchor *anchor,
		       struct cw_audit_verified *out, struct cw_error *err)
{
	struct chain c = { .expected = 1, .anchor = anchor };
	char **files = NULL;
	int *fds = NULL;
	size_t n = 0, i;
	int ret;

	if (anchor && (!anchor->seq || !is_hash_hex(anchor->hash))) {
		audit_err(err, path, 0,
			  "an anchor is a seq of 1 or more and a SHA-256 in lowercase hex");
		return -EINVAL;
	}
	ret = cw_audit_open_files(path, &files, &fds, &n, err);
	for (i = 0; !ret && i < n; i++) {
		ret = verify_file(&c, files[i], fds[i], err);
		c.prev_path = files[i];
	}
	if (!ret && anchor && !c.anchor_seen) {
		ret = -EBADMSG;
		audit_err(err, n ? files[n - 1] : path, (int)c.prev_lines,
			  "missing: the log ends at seq %" PRIu64 ", before the anchored seq %" PRIu64 "; records were removed from its end",
			  c.expected - 1, anchor->seq);
	}
	if (out) {
		memset(out, 0, sizeof(*out));
		out->records = c.good;
		out->files = n;
		out->last_seq = c.expected - 1;
		memcpy(out->last_hash, c.prev_hash, sizeof(out->last_hash));
	}
	cw_audit_close_files(files, fds, n);
	return ret;
}

int cw_audit_verify(const char *path, uint64_t *nrecords,
		    struct cw_error *err)
{
	struct cw_audit_verified v;
	int ret = cw_audit_verify_ex(path, NULL, &v, err);

	if (nrecords)
		*nrecords = v.records;
	return ret;
}
