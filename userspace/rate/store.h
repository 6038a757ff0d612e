/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rate-limit store interface, between the limiter (ratelimit.c) and the
 * places counters live: one file per store.
 *
 * A store answers for a whole call at once: reserve checks every counter
 * of the call and records the call in all of them or in none, so a network
 * store does it in one round trip (one server-side script) and a local one
 * in one transaction. Release gives a reservation back; sync makes the
 * reservations committed so far durable; window counts one key for
 * cw_decide()'s counter view.
 *
 * Stores that keep the events themselves (SQLite, memory) implement the
 * smaller struct cw_rate_local_ops instead, inside their own transactions,
 * and share the window arithmetic and the reservation protocol of
 * ratelimit.c through cw_rate_local_init().
 *
 * Adding a store: its file, defining a struct cw_rate_store_type, and its
 * name in RATE_STORES in ratelimit.c.
 */
#ifndef CW_RATE_STORE_H
#define CW_RATE_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rate/ratelimit.h"

/* One limit of a call, as a store sees it. Several may share a key (limits
 * with the same counter name): the call is one event of that key, recorded
 * by the first of them. */
struct cw_rate_counter {
	const char *key;	/* counter name + scope id (cw_limit_key()) */
	/* Counter name of the key's first limit: the one its event carries
	 * and whose horizon covers every window checked on the key. */
	const char *counter;
	/* Never negative; the window at most INT64_MAX / 4, so stamps
	 * plus or minus a window stay far from overflow. */
	int64_t window_us;
	int64_t max;
	bool record;		/* the first limit of its key */
};

/* A refusal: which counter (index into the call's counters) and how long
 * until it admits the call. */
struct cw_rate_refusal {
	size_t which;
	int64_t retry_after_us;
};

struct cw_rate_store_ops {
	/* Atomically: if every counter admits a call at now_us, records it
	 * in each key (tagged rid) and returns 0; else records nothing and
	 * returns -EAGAIN with *refused filled: of the refusing counters,
	 * the one with the longest wait, the first of them on a tie. flags:
	 * CW_RATE_DEFER_SYNC (durable only once sync returns). */
	int (*reserve)(struct cw_rate_store *s,
		       const struct cw_rate_counter *c, size_t n,
		       int64_t now_us, const char *rid, unsigned flags,
		       struct cw_rate_refusal *refused, struct cw_error *err);
	/* Removes every event tagged rid; none is no error. */
	int (*release)(struct cw_rate_store *s, const char *rid,
		       struct cw_error *err);
	/* Makes every reservation committed so far durable. */
	int (*sync)(struct cw_rate_store *s, struct cw_error *err);
	/* Events of key in (now - window, +inf), and when count >= max the
	 * wait until one more call is admitted. */
	int (*window)(struct cw_rate_store *s, const char *key,
		      int64_t window_us, int64_t now_us, int64_t max,
		      int64_t *count, int64_t *retry_after_us,
		      struct cw_error *err);
	void (*close)(struct cw_rate_store *s);
};

/* Every store begins with this. */
struct cw_rate_store {
	const struct cw_rate_store_ops *ops;
};

/* How a store is opened: cw_rate_open("SCHEME:ARG") calls open(ARG). NULL
 * with errno set (and err filled) on failure. Store NAME defines one, named
 * cw_rate_NAME_store (RATE_STORES in ratelimit.c declares it). */
struct cw_rate_store_type {
	const char *scheme;
	struct cw_rate_store *(*open)(const char *arg, struct cw_error *err);
};

/* ---- stores that keep the events themselves ----------------------------- */

struct cw_rate_local;

/* Called one at a time (under the store's lock), between begin and end
 * except release, sync and close. */
struct cw_rate_local_ops {
	int (*begin)(struct cw_rate_local *l, bool write,
		     struct cw_error *err);
	/* Commit, or roll back when !commit (never fails then). */
	int (*end)(struct cw_rate_local *l, bool commit, struct cw_error *err);
	/* Number of events of key stamped after after_us. */
	int (*count)(struct cw_rate_local *l, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err);
	/* Stamp of the n-th (0-based) oldest event of key after after_us. */
	int (*nth)(struct cw_rate_local *l, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err);
	/* Raise counter's horizon to at least window_us. */
	int (*horizon)(struct cw_rate_local *l, const char *counter,
		       int64_t window_us, struct cw_error *err);
	int (*insert)(struct cw_rate_local *l, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err);
	/* Drop events older than their horizon; the last write of a
	 * transaction. */
	int (*prune)(struct cw_rate_local *l, int64_t now_us,
		     struct cw_error *err);
	int (*release)(struct cw_rate_local *l, const char *rid,
		       struct cw_error *err);
	/* Makes committed transactions durable. */
	int (*sync)(struct cw_rate_local *l, struct cw_error *err);
	/* Frees the store (the lock is already destroyed). */
	void (*close)(struct cw_rate_local *l);
};

/* The first member of a local store; ratelimit.c owns every field. */
struct cw_rate_local {
	struct cw_rate_store base;
	const struct cw_rate_local_ops *ops;
	/* One caller at a time: statements and undo logs are shared. */
	pthread_mutex_t lock;
	uint64_t committed, synced;	/* reservations */
	/* When this process last dropped expired events. */
	int64_t pruned_us;
	bool pruned;
};

/* Makes l a store served by ops. 0 or -errno with err filled; on failure
 * l needs no cw_rate_close (free it as the store would). */
int cw_rate_local_init(struct cw_rate_local *l,
		       const struct cw_rate_local_ops *ops,
		       struct cw_error *err);

/* Saturating arithmetic on stamps, shared with the stores' pruning. */
int64_t cw_rate_sat_sub(int64_t a, int64_t b);

#endif
