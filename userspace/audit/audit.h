/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Audit log: JSON Lines. Each record gets ts, seq, type,
 * invocation and prev (SHA-256 hex of the previous line, "" for the first).
 * Appended with O_APPEND under an exclusive flock, so several agents can
 * share one file and the chain stays intact; fsynced before returning.
 */
#ifndef CW_AUDIT_AUDIT_H
#define CW_AUDIT_AUDIT_H

#include <stdint.h>

#include <jansson.h>

#include "audit/types.h"
#include "lib/util.h"

struct cw_audit;

/* Longest line (record plus its newline) written or accepted when reading. */
#define CW_AUDIT_MAX_LINE (16u << 20)

/* A SHA-256 in lowercase hex, as prev and anchors give it. */
#define CW_AUDIT_HASH_HEX 64

/* Opens (creates with mode 0600; refuses a file readable by others) the log
 * and its parent directory (0700) if missing. NULL + errno + err on failure:
 * EISDIR or EINVAL (not a regular file), ENXIO (a FIFO without a reader),
 * EPERM (mode grants group/other any access, or another user owns it), or the
 * errno of the failing call. err->source names the file. */
struct cw_audit *cw_audit_open(const char *path, struct cw_error *err);
void cw_audit_close(struct cw_audit *a);

/* Writes one record: fields (an object, may be NULL; borrowed) plus ts, seq,
 * type, invocation (omitted when NULL), prev. Durable on return 0; -errno
 * with err filled otherwise (the caller then fails closed). Key order: ts,
 * seq, type, invocation, the caller's fields, torn_before (only on the first
 * record after a torn line), rotated_from (only on the first record of a
 * file after rotation), prev. -EINVAL if fields uses one of those names,
 * -EMSGSIZE if the line would exceed CW_AUDIT_MAX_LINE. A failed write is
 * truncated away so the file stays as it was; a failed fdatasync leaves the
 * record (later ones may follow it) and fails every write it covered.
 * Thread-safe, with group commit: concurrent writers share one fdatasync.
 * Records from several processes sharing the file never interleave and
 * form one chain. */
int cw_audit_write(struct cw_audit *a, const char *type,
		   const char *invocation, json_t *fields,
		   struct cw_error *err);

/* The record is written (visible to readers, kept if the agent crashes)
 * but its fdatasync is left to the next synced write of the same log, which
 * makes every record before it durable at once. For records that must be on
 * disk only before a result is returned, with a synced record still due. */
#define CW_AUDIT_DEFER_SYNC 0x1u

int cw_audit_write_flags(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 unsigned flags, struct cw_error *err);

/* Told once a record written by cw_audit_write_async is durable (ret 0),
 * or that the write or the fdatasync that was to make it so failed (-errno,
 * with err saying why; the caller then fails closed as cw_audit_write's
 * would).
 * Runs on the log's flusher thread: it must not write to this log
 * synchronously, and it should be short, as it delays the writers told
 * after it and the next flush. */
typedef void (*cw_audit_done_fn)(void *ctx, int ret,
				 const struct cw_error *err);

/* The record is checked and queued; a thread of the log's own (started
 * with the first such write) appends what is queued with one write(), the
 * lines, seq and chain those of cw_audit_write_flags, makes it durable
 * and calls done(ctx, ...), so the writer's thread touches neither the
 * file nor the disk. 0 when queued (done will be called exactly once,
 * possibly before this returns), or -errno with err (done is not called):
 * a record that can never be written, or no memory. cw_audit_close tells
 * every writer still waiting before it returns. */
int cw_audit_write_async(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 cw_audit_done_fn done, void *ctx,
			 struct cw_error *err);

/* Several records at once, in order: one lock, one write() (and one
 * fdatasync unless CW_AUDIT_DEFER_SYNC) for as many as fit before the
 * rotation size; the lines, seq and chain are those of one
 * cw_audit_write_flags each. For bursts of kernel events. 0, or -errno with
 * err: records before the failing write stay written, none after it. */
struct cw_audit_rec {
	const char *type;
	const char *invocation;
	json_t *fields;		/* borrowed */
};
/* bytes (may be NULL): what the records took in the log, newlines
 * included, also when some of them failed. */
int cw_audit_write_batch(struct cw_audit *a, const struct cw_audit_rec *recs,
			 size_t n, unsigned flags, uint64_t *bytes,
			 struct cw_error *err);

const char *cw_audit_path(const struct cw_audit *a);

/* How many fdatasyncs synced writes have needed so far: fewer than the
 * writes when concurrent writers shared them. */
uint64_t cw_audit_flushes(struct cw_audit *a);

/*
 * Size-based rotation: a record that would take the file past max_bytes
 * (0: never rotate) goes to a new file instead. The full file is kept as
 * "<path>.<N>" (N = 1, 2, ... in order) and the new one takes its place
 * at path; its first record continues the chain (seq, prev) and names the
 * file before it in "rotated_from".
 */
void cw_audit_set_max_bytes(struct cw_audit *a, uint64_t max_bytes);

/*
 * Retention (0: every file kept): after a rotation, the oldest rotated
 * files are removed until the rest and a full current file fit max_total
 * bytes. First a "pruned" record is appended and made durable: removed
 * (their names, oldest first), removed_bytes, max_total, and through_seq
 * and through_hash, the seq and SHA-256 of the last record they held, so
 * cw_audit_verify proves what remains and an anchor at through_seq still
 * checks. Writers sharing the log prune under its flock, once.
 */
void cw_audit_set_max_total(struct cw_audit *a, uint64_t max_total);

/* The files of the log at path, oldest first: its rotated files, then
 * path itself. When path is a rotated file, the set ends with it. */
int cw_audit_files(const char *path, char ***files, size_t *n,
		   struct cw_error *err);
void cw_audit_files_free(char **files, size_t n);
/* N when file is the log's rotated file "<path>.<N>", else -1. */
long cw_audit_rotated_index(const char *file, const char *path);
/* The same files opened for reading (fds[i] for files[i]), as one
 * consistent set even while writers rotate the log. */
int cw_audit_open_files(const char *path, char ***files, int **fds,
			size_t *n, struct cw_error *err);
void cw_audit_close_files(char **files, int *fds, size_t n);

/* Checks a whole log, its rotated files included (cw_audit_files): every
 * line a record, seq rising by 1 from 1, prev the SHA-256 of the line
 * before, across files too, each file's first record naming the file before
 * it; a log whose oldest files retention removed (cw_audit_set_max_total)
 * starts where its pruned record says. 0 if intact; -EBADMSG with
 * err->source = the file, err->line = the first bad line and err->text
 * saying what is wrong (edited, missing, out of order, torn, not a
 * record); other -errno if the file cannot be read. A torn line the writer stepped over (the next record has
 * torn_before and continues the chain) is reported only when nothing worse is
 * found. *nrecords (may be NULL) gets the records that passed. Only the bytes
 * present when the check starts are read: records appended meanwhile are not.
 * The last lines can be edited or dropped without a trace: keep the last
 * seq and hash elsewhere and check them with cw_audit_verify_ex. */
int cw_audit_verify(const char *path, uint64_t *nrecords,
		    struct cw_error *err);

/* A record known from elsewhere: its seq and the SHA-256 of its line. */
struct cw_audit_anchor {
	uint64_t seq;
	char hash[CW_AUDIT_HASH_HEX + 1];
};

struct cw_audit_verified {
	uint64_t records;	/* that passed */
	size_t files;
	uint64_t first_seq;	/* where the log starts: 1 unless retention
				 * removed its oldest files */
	uint64_t pruned_at;	/* the pruned record that says so, 0: none */
	uint64_t last_seq;	/* of the last record that passed */
	/* its SHA-256, to keep as the next anchor */
	char last_hash[CW_AUDIT_HASH_HEX + 1];
};

/* cw_audit_verify, and with an anchor also that the record with that seq
 * is present with that hash: what was cut from the end of the log, or
 * rewritten together with all that follows it, shows. -EINVAL for a
 * malformed anchor. out (may be NULL) is filled in either case. */
int cw_audit_verify_ex(const char *path,
		       const struct cw_audit_anchor *anchor,
		       struct cw_audit_verified *out, struct cw_error *err);

#endif
