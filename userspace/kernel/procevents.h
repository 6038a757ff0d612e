/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procevents: the kernel's process events connector (CONFIG_PROC_EVENTS,
 * NETLINK_CONNECTOR) as the source of fork and exit events beside the
 * kernel audit (kaudit.h), which records neither. Every process of the
 * machine is reported; a call's are told apart by their loginuid, as the
 * kernel audit's are: read when a process executes, inherited by what it
 * forks, forgotten when it exits. Used only by trace.c, under its drain
 * lock.
 */
#ifndef CW_KERNEL_PROCEVENTS_H
#define CW_KERNEL_PROCEVENTS_H

#include <stdint.h>

#include "kernel/trace.h"
#include "lib/util.h"

struct cw_procev;

/* Subscribes. NULL + errno + err: EPROTONOSUPPORT (no connector in this
 * kernel), EPERM (not root), or the errno of the failing step. lo..hi:
 * the loginuids of the calls (those of kaudit.h). */
struct cw_procev *cw_procev_open(uint32_t lo, uint32_t hi,
				 struct cw_error *err);
/* Whether cw_procev_open would work: 0, or -errno with err saying why. */
int cw_procev_probe(struct cw_error *err);
void cw_procev_close(struct cw_procev *p);
int cw_procev_fd(const struct cw_procev *p);

/* Reads what is queued, without blocking: event(ctx, auid, ev) for each
 * fork (ev->pid the parent, ev->child) and exit (ev->exit_code,
 * ev->exit_signal) of a process with a loginuid in lo..hi. Returns the
 * messages read, or -errno. */
int cw_procev_read(struct cw_procev *p,
		   void (*event)(void *ctx, uint32_t auid,
				 const struct cw_trace_event *ev),
		   void *ctx);

/* Events the kernel could not queue (the socket overflowed) since the
 * last call, or 0. */
uint64_t cw_procev_lost(struct cw_procev *p);

#endif
