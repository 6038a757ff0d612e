/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the files of the audit log share: the handle, the waiting writers
 * of group commit, a record's parts and the functions each file calls.
 *   audit.c   open and close, the chain's tail, appends (the integrity core)
 *   record.c  a record's text: checking fields, building a line, parsing one
 *   commit.c  group commit: shared fdatasyncs, the queue and its flusher
 *   rotate.c  size-based rotation, retention and the files of a rotated log
 *   verify.c  reading a log back and checking its chain
 *   types.c   the record types' names (types.h, public with audit.h)
 * Nothing here is for other modules (audit.h is).
 */
#ifndef CW_AUDIT_AUDIT_INT_H
#define CW_AUDIT_AUDIT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#include "audit/audit.h"

#define HASH_HEX CW_AUDIT_HASH_HEX
/* What a read of the file takes at once, forwards or backwards. */
#define BLOCK_SIZE (64 * 1024)
/* Damaged lines (torn writes) a writer steps over before giving up. */
#define MAX_DAMAGED 16
/* Why a line is not a record: room for a jansson error and its column. */
#define WHY_LEN 256

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
	uint64_t bytes_out; /* bytes this handle has appended */
	uint64_t seq; /* seq of the last record */
	char hash[HASH_HEX + 1]; /* SHA-256 hex of the last record */
	char *block; /* scratch for backwards scans */
	uint64_t max_bytes; /* rotate before the file passes this; 0: never */
	uint64_t max_total; /* retention: the log's files together; 0: all kept */
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

struct rec_info {
	uint64_t seq;
	char prev[HASH_HEX + 1];
	bool torn_before;
	char rotated_from[NAME_MAX + 1]; /* "" unless a file's first record */
	/* a "pruned" record: the files retention removed, the last of them
	 * named, and the seq and SHA-256 of the last record they held */
	bool pruned;
	uint64_t through_seq;
	char through_hash[HASH_HEX + 1];
	char last_removed[NAME_MAX + 1];
};

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

/* audit.c */
const char *audit_errstr(int e);
/* Fills err (may be NULL) with path as its source, line and the text. */
void audit_err(struct cw_error *err, const char *path, int line,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* flock, retried on EINTR: 0 or -errno. */
int audit_lock_file(int fd, int op);
/* Final component of path. */
const char *audit_base_of(const char *path);
/* Directory part of path (allocated): "." for a bare name, "/" for "/x". */
char *audit_dir_of(const char *path);
int audit_fsync_dir(const char *dir);
/* Appends the n records of m in order, a->lock held; tickets (may be
 * NULL) gets the append that wrote each, *done how many were written. */
int audit_append_mids(struct cw_audit *a, const struct mids *m, size_t n,
		      uint64_t *tickets, size_t *done, struct cw_error *err);

/* record.c */
int audit_sha256_hex(const void *p, size_t n, char out[HASH_HEX + 1]);
bool audit_is_hash_hex(const char *s);
/* 0 if buf holds a record as this module writes them, else -EBADMSG and
 * why says what is wrong. */
int audit_parse_record(const char *buf, size_t len, struct rec_info *ri,
		       char *why, size_t whylen);
/* Checks a record and appends its middle (type, invocation, fields) to
 * mid. */
int audit_prepare_record(struct cw_audit *a, struct heads *h,
			 const char *type, const char *invocation,
			 json_t *fields, struct cw_buf *mid,
			 struct cw_error *err);
void audit_heads_free(struct heads *h);
/* Appends the line of one record to line: head, the middle, the trailer;
 * no newline at its end. -ENOMEM. */
int audit_build_line(struct cw_buf *line, bool need_nl, uint64_t seq,
		     const char *mid, size_t mid_len, bool torn,
		     const char *rotated_from, const char *prev);

/* commit.c */
/* Makes this handle's appends up to ticket durable (a->lock not held). */
int audit_sync_through(struct cw_audit *a, uint64_t ticket,
		       struct cw_error *err);
/* Stops the flusher thread, once it has told every writer waiting. */
void audit_stop_flusher(struct cw_audit *a);

/* rotate.c */
/* Follows a rotation another writer made, under the old file's flock. */
int audit_follow_path(struct cw_audit *a, struct stat *st,
		      struct cw_error *err);
/* The name the current file gets when rotated. */
int audit_rotation_name(struct cw_audit *a, const struct stat *st,
			char **rpath, bool *linked, struct cw_error *err);
/* Puts a new file, holding line, in the place of the full one. */
int audit_rotate(struct cw_audit *a, const struct cw_buf *line,
		 const char *rotated_name, const char *rotated_path,
		 bool linked, struct cw_error *err);
/* Retention, under the current file's flock: the oldest rotated files to
 * remove so that the rest and a full current file fit a->max_total, and
 * the fields of the "pruned" record that says so (*fields NULL: none to
 * remove). */
int audit_prune_plan(struct cw_audit *a, json_t **fields, char ***victims,
		     size_t *nvictims, struct cw_error *err);
/* Removes the files planned, once the record is durable. */
int audit_prune_remove(struct cw_audit *a, char **victims, size_t n,
		       struct cw_error *err);

#endif
