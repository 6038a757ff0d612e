/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fanotify: the event source of trace.c where BPF on tracepoints is
 * missing. Marks every real filesystem for FAN_OPEN_EXEC_PERM, FAN_OPEN,
 * FAN_MODIFY and FAN_CLOSE_WRITE and attributes each event to a call by
 * the cgroup of the process that caused it (<calls>/<invocation>).
 * Used only by trace.c, under its drain lock.
 */
#ifndef CW_KERNEL_FANOTIFY_H
#define CW_KERNEL_FANOTIFY_H

#include <stdbool.h>

#include "kernel/trace.h"
#include "lib/util.h"

struct cw_fanotify;

/* NULL + errno + err when fanotify or a mark cannot be had. */
struct cw_fanotify *cw_fanotify_open(const char *cgroup2_mount,
				     struct cw_error *err);
void cw_fanotify_close(struct cw_fanotify *f);
int cw_fanotify_fd(const struct cw_fanotify *f);

/* Reads what is queued, without blocking: event() for each event of a
 * process in a call cgroup, with the invocation it names; lost(ctx, true)
 * when the kernel's queue overflowed, lost(ctx, false) for an event whose
 * process was gone before it could be attributed. Answers every permission
 * event (always FAN_ALLOW). Returns the events read or -errno. */
int cw_fanotify_read(struct cw_fanotify *f,
		     void (*event)(void *ctx, const char *invocation,
				   const struct cw_trace_event *ev),
		     void (*lost)(void *ctx, bool overflow), void *ctx);

/* Forgets the processes attributed to a call that ended. */
void cw_fanotify_forget(struct cw_fanotify *f, const char *invocation);

#endif
