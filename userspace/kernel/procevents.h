/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procevents: the kernel's process events connector (CONFIG_PROC_EVENTS,
 * NETLINK_CONNECTOR) as the source of fork and exit events beside the
 * kernel audit (kaudit.h) and fanotify (fanotify.h), which record neither.
 * Every process of the machine is reported; a call's are told apart by
 * the owner function the caller gives: asked when a process executes (its
 * loginuid, its cgroup), inherited by what the process forks, forgotten
 * when it exits. Used only by trace.c, under its drain lock.
 */
#ifndef CW_KERNEL_PROCEVENTS_H
#define CW_KERNEL_PROCEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/trace.h"
#include "lib/util.h"

struct cw_procev;

/* Whose process pid is: 1 with the call's key in key (a string of at
 * most len - 1 bytes), 0 none of the calls', -ESRCH gone. */
typedef int (*cw_procev_owner)(void *ctx, uint32_t pid, char *key,
			       size_t len);

#define CW_PROCEV_KEY_LEN 64

/* Subscribes, without checking that events come (cw_procev_probe does).
 * NULL + errno + err: EPROTONOSUPPORT (no connector in this kernel),
 * EPERM (not root), or the errno of the failing step. */
struct cw_procev *cw_procev_open(cw_procev_owner owner, void *owner_ctx,
				 struct cw_error *err);
/* Whether cw_procev_open would work: 0, or -errno with err saying why. */
int cw_procev_probe(struct cw_error *err);
void cw_procev_close(struct cw_procev *p);
int cw_procev_fd(const struct cw_procev *p);

/* Reads what is queued, without blocking: event(ctx, key, ev) for each
 * fork (ev->pid the parent, ev->child) and exit (ev->exit_code,
 * ev->exit_signal) of a call's process, key its owner's. Returns the
 * messages read, or -errno. */
int cw_procev_read(struct cw_procev *p,
		   void (*event)(void *ctx, const char *key,
				 const struct cw_trace_event *ev),
		   void *ctx);

/* Events the kernel could not queue (the socket overflowed) since the
 * last call, or 0. */
uint64_t cw_procev_lost(struct cw_procev *p);

#endif
