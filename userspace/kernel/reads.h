/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reads: a call's read-only opens as the kernel summed them (bpf/trace.h),
 * made into "reads" records. A file opened is put in its record when the
 * kernel tells its first open, while the command runs; when the call ends
 * only the counts are left to fill in. A record holds the files of one
 * first opener, CW_READS_PER_RECORD at most: a flood of reads is a few
 * records, not one each.
 *
 * One call's; not thread-safe (trace.c uses it under drain_lock).
 */
#ifndef CW_KERNEL_READS_H
#define CW_KERNEL_READS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#define CW_READS_PER_RECORD 512

struct cw_reads;

/* The process that first opened a file or path. */
struct cw_reads_opener {
	uint32_t pid, uid;
	char comm[17];
};

struct cw_reads *cw_reads_new(void);
void cw_reads_free(struct cw_reads *r);

/* A file's first read-only open: device and inode, its path as the kernel
 * resolved it (cut: truncated). 0, or -ENOMEM. */
int cw_reads_seen(struct cw_reads *r, uint32_t dev, uint64_t ino,
		  const char *path, bool cut, const struct cw_reads_opener *by);

/* The opens of a file summed. 0, or -ENOENT when its first open was not
 * told: it is then listed by device and inode ("unknown"). */
int cw_reads_count(struct cw_reads *r, uint32_t dev, uint64_t ino,
		   uint64_t count);

/* A path that found no file (ENOENT, ENOTDIR), as written, opened count
 * times. 0, or -ENOMEM. */
int cw_reads_missing(struct cw_reads *r, const char *path, uint64_t count,
		     const struct cw_reads_opener *by);

/* The opens counted so far. */
uint64_t cw_reads_total(const struct cw_reads *r);

/*
 * The records' fields, each passed to fn (borrowed), in the order their
 * first file was opened:
 *   {"source":"bpf","pid":P,"comm":C,"uid":U,"found":true,
 *    "path_source":"kernel","files":{"/etc/hostname":18000, ...}}
 * found true: files opened, each under the path the kernel resolved for
 * its first open, by P; two files that had one path (one replaced the
 * other) share its count. found false: paths that found no file, as
 * written (path_source "user_memory"). "truncated" lists the paths that
 * were cut; "unknown" the files counted whose first open was not told
 * ({"device","inode","count"}). Files told but never counted show 0.
 */
typedef void (*cw_reads_fn)(void *ctx, json_t *fields);
void cw_reads_records(struct cw_reads *r, cw_reads_fn fn, void *ctx);

#endif
