/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ns_pool: the calls' own namespaces (kernel/namespaces.h) made ahead of
 * time, on a thread of their own, so that the clone, the mounts and the
 * Landlock ruleset a call's /proc needs are not on the path between a
 * call's request and its answer.
 *
 * One slot is kept ready for the rules last asked for. A slot holds its
 * holder and, where the rules' ruleset names the agent's /proc (a read
 * list split at "/" by a deny entry names /proc itself), a ruleset built
 * again from the holder's root, so that it names the call's /proc
 * instead. The unix sockets services outside the calls listen on are
 * masked in each slot's mount namespace, as /proc/net/unix lists them when
 * the slot is made, and again when it is taken if it was made more than
 * a second before; the sockets the running calls' processes hold, and
 * those the policy's network.unix_sockets lists, are left alone. A call
 * that finds nothing ready for its rules makes its own. Ended slots are
 * stopped on the thread.
 */
#ifndef CW_ENGINE_NS_POOL_H
#define CW_ENGINE_NS_POOL_H

#include "engine/internal.h"
#include "kernel/namespaces.h"

struct cw_ns_pool;

struct cw_ns_slot {
	struct cw_ns_holder h;
	struct cw_rules *ru;		/* a reference: made for these */
	struct cw_ll_ref *src;		/* a reference; NULL without Landlock */
	struct cw_landlock *ll;		/* built from h.root; NULL: src's */
	struct cw_ns_mounts m;		/* what the holder mounted */
	int64_t made_us;		/* CLOCK_MONOTONIC */
	struct cw_ns_slot *next;	/* in the pool's lists */
};

/* Starts the holders' forker (kernel/namespaces.h) and the thread, which
 * prepares a first slot for ru. calls: the directory of the calls' v2
 * cgroups (their sockets are not masked; NULL: none known). NULL with err
 * when either cannot start. */
struct cw_ns_pool *cw_ns_pool_open(struct cw_rules *ru, const char *calls,
				   struct cw_error *err);
/* Stops the thread, then every slot it still has. */
void cw_ns_pool_close(struct cw_ns_pool *p);

/* A slot for ru whose ruleset is now src (NULL: Landlock off), made ahead
 * if one fits, else made now; NULL with err when it cannot be made.
 * Either way the next one is prepared in the background. */
struct cw_ns_slot *cw_ns_pool_take(struct cw_ns_pool *p, struct cw_rules *ru,
				   struct cw_ll_ref *src,
				   struct cw_error *err);
/* Hands back a slot to be stopped in the background (with it, whatever is
 * left of the call in its pid namespace). */
void cw_ns_pool_give(struct cw_ns_pool *p, struct cw_ns_slot *s);

/* The ruleset a call in s applies; NULL when Landlock is off. */
const struct cw_landlock *cw_ns_slot_landlock(const struct cw_ns_slot *s);

struct cw_ns_pool_stats {
	unsigned long prepared;	/* slots made ahead */
	unsigned long taken;	/* ... and used by a call */
	unsigned long discarded; /* ... that did not fit and were stopped */
	unsigned long made_inline; /* slots a call had to make itself */
	unsigned long failed;	/* preparations that failed */
};

/* Waits until the thread has nothing left to do, then reads its counts. */
void cw_ns_pool_settle(struct cw_ns_pool *p, struct cw_ns_pool_stats *st);

#endif
