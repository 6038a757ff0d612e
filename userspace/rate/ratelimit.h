/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rate limits: exact sliding windows over a durable event log.
 *
 * Every allowed call records one event per counter key it is limited by.
 * A limit {window, max} admits a call when fewer than max events of its key
 * fall in (now - window, now]. Reservation checks and records all of a
 * call's keys at once (one transaction of the store), so concurrent agents
 * sharing a store never over-admit. Where the events live is a store's concern,
 * behind the interface of rate/store.h: one file per store.
 */
#ifndef CW_RATE_RATELIMIT_H
#define CW_RATE_RATELIMIT_H

#include <stdint.h>

#include "policy/decide.h"

struct cw_rate_store;

/* Opens the store spec names, "KIND:ARG": "sqlite:STATE_DIR" (as
 * cw_rate_open_sqlite) or "memory:". NULL with errno set and err filled
 * on failure. */
struct cw_rate_store *cw_rate_open(const char *spec, struct cw_error *err);

/* Durable store: SQLite database <state_dir>/ratelimit.db (WAL; every
 * reservation's commit is synced, at once or by cw_rate_sync). Creates
 * state_dir (0700) if missing. */
struct cw_rate_store *cw_rate_open_sqlite(const char *state_dir,
					  struct cw_error *err);
/* Volatile store for tests and benchmarks. */
struct cw_rate_store *cw_rate_open_memory(void);
void cw_rate_close(struct cw_rate_store *s);

/* A view for cw_decide() that reads this store. */
struct cw_counter_view cw_rate_view(struct cw_rate_store *s);

/* Atomically: if every limit in refs admits a call at now_us, record one
 * event per distinct key, tagged reservation_id, durably (fsynced) before
 * returning 0. Otherwise record nothing and return -EAGAIN with
 * *retry_after_us and *which (index into refs of the limit that refused).
 * Other failures: -errno with err filled. */
int cw_rate_reserve(struct cw_rate_store *s, const struct cw_limit_ref *refs,
		    size_t nrefs, int64_t now_us, const char *reservation_id,
		    int64_t *retry_after_us, size_t *which,
		    struct cw_error *err);

/* The same, but the reservation is only committed (other agents sharing
 * the store count it at once): cw_rate_sync must make it durable before
 * the call is answered. Lets a caller overlap the flush with other work,
 * such as the command's start. */
#define CW_RATE_DEFER_SYNC 0x1u

int cw_rate_reserve_flags(struct cw_rate_store *s,
			  const struct cw_limit_ref *refs, size_t nrefs,
			  int64_t now_us, const char *reservation_id,
			  unsigned flags, int64_t *retry_after_us,
			  size_t *which, struct cw_error *err);

/* Makes every reservation committed so far durable: one flush covers
 * them all, none when nothing is pending. 0 or -errno with err filled. */
int cw_rate_sync(struct cw_rate_store *s, struct cw_error *err);

/* Give a reservation back (only when the command could not be launched). */
int cw_rate_release(struct cw_rate_store *s, const char *reservation_id,
		    struct cw_error *err);

#endif
