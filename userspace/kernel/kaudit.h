/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kaudit: the kernel's own audit subsystem as an event source of trace.c
 * where BPF on tracepoints is missing (E2B's guest kernel). cmdwarden
 * registers as the audit daemon over NETLINK_AUDIT, refusing to displace
 * one that runs, and adds syscall rules that record, for the processes
 * whose loginuid is in the calls' range only, every execve (with argv)
 * and every file mutation and open for writing, with the paths as the
 * kernel read them. A call's processes get their loginuid, a number of
 * their own, when they start (spawn.c); the kernel lets no confined
 * process change it. Used only by trace.c, under its drain lock.
 */
#ifndef CW_KERNEL_KAUDIT_H
#define CW_KERNEL_KAUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/trace.h"
#include "lib/util.h"

/* The loginuids given to calls: CW_KAUDIT_AUID_BASE and the
 * CW_KAUDIT_AUID_COUNT after it, out of the way of accounts' uids. */
#define CW_KAUDIT_AUID_BASE 0x70000000u
#define CW_KAUDIT_AUID_COUNT 0x01000000u

struct cw_kaudit;

/* Registers and installs the rules. NULL + errno + err: EPROTONOSUPPORT
 * (no audit in this kernel), EBUSY (another audit daemon runs, named),
 * EPERM (not root), or the errno of the failing step. */
struct cw_kaudit *cw_kaudit_open(struct cw_error *err);
/* Whether cw_kaudit_open would work: 0, or -errno with err saying why. */
int cw_kaudit_probe(struct cw_error *err);
/* A reader of records that come on fd as the kernel sends them (a
 * netlink header, then the text), registering nothing and adding no rule:
 * records replayed from elsewhere. fd is the reader's. NULL + errno. */
struct cw_kaudit *cw_kaudit_reader(int fd);
/* Removes the rules and hands the audit daemon's place back. */
void cw_kaudit_close(struct cw_kaudit *k);
int cw_kaudit_fd(const struct cw_kaudit *k);

/* Reads what is queued, without blocking: event(ctx, auid, ev) for each
 * complete event of a call's process; marker(ctx, nonce) for each
 * cw_kaudit_mark that came back. Returns the messages read or -errno. */
int cw_kaudit_read(struct cw_kaudit *k,
		   void (*event)(void *ctx, uint32_t auid,
				 const struct cw_trace_event *ev),
		   void (*marker)(void *ctx, uint64_t nonce), void *ctx);

/* Sends a message of its own through the kernel's audit queue: once it
 * comes back (marker), every record queued before it has been read. */
int cw_kaudit_mark(struct cw_kaudit *k, uint64_t nonce);

/* The loginuid of process pid when it is a call's: 1 with *auid, 0 when
 * it is not a call's, -ESRCH when the process is gone. */
int cw_kaudit_pid_auid(uint32_t pid, uint32_t *auid);

/* Records the kernel could not queue since the last call (its lost
 * counter), or 0. */
uint64_t cw_kaudit_lost(struct cw_kaudit *k);

#endif
