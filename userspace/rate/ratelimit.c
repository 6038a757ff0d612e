// SPDX-License-Identifier: Apache-2.0
/*
 * Rate limits: exact sliding windows over an event log, the limiter apart
 * from where its counters live.
 *
 * This file turns a call's limits into the counters a store reserves
 * (struct cw_rate_counter, store.h), opens a store by its scheme, gives
 * cw_decide() its counter view, and holds, for the stores that keep the
 * events themselves (SQLite, memory), the window arithmetic and the
 * reservation protocol: all counters checked and recorded in one
 * transaction of the store. Such a store only answers "how many events of
 * a key are newer than t" and "which is the n-th oldest of them", and
 * applies writes inside its own transaction, so the SQLite and memory
 * stores cannot disagree about what a window holds.
 *
 * Pruning: every counter name keeps a durable horizon, the longest window
 * ever checked for it, and events older than their counter's horizon are
 * deleted by a reservation, at most once a second. A key is a counter name
 * plus a scope id (cw_limit_key()), so a horizon per counter name covers
 * every key built from it (never less than a per-key horizon would keep),
 * while the horizons themselves stay as few as the counter names in the
 * policies: per-session keys come and go without leaving rows behind.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "rate/ratelimit.h"
#include "rate/store.h"
#include "lib/util.h"

/* Cap so that now - window and ts + window stay far from overflow. */
#define RATE_MAX_WINDOW_US (INT64_MAX / 4)
/* A reservation's counters live on the stack: no call has more. */
#define RATE_MAX_COUNTERS CW_MAX_CALL_LIMITS
#define RATE_US_PER_S 1000000

/* Expired events no longer count, so at most one reservation a second drops
 * them: the prune's query is about a seventh of a reservation's time. */
#define RATE_PRUNE_EVERY_US RATE_US_PER_S

/*
 * The stores cw_rate_open() knows, by the name in their type's symbol:
 * NAME.c defines const struct cw_rate_store_type cw_rate_NAME_store.
 * Adding a store is its file and its name here.
 */
#define RATE_STORES(X) X(sqlite) X(memory)

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t cw_rate_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b > 0 ? INT64_MIN : INT64_MAX;
	return r;
}

static int64_t limit_window_us(const struct cw_limit *l)
{
	if (l->window_s > RATE_MAX_WINDOW_US / RATE_US_PER_S)
		return RATE_MAX_WINDOW_US;
	return l->window_s * RATE_US_PER_S;
}

/* ---- stores that keep the events themselves ----------------------------- */

static struct cw_rate_local *to_local(struct cw_rate_store *s)
{
	return (struct cw_rate_local *)s;
}

/*
 * The window arithmetic, shared by reserve and the view. Counts key's events
 * in (now - window, +inf): a stamp later than now means the clock stepped
 * back, and such an event stays inside every window. When count >= max,
 * *retry_after_us is the time until count - max + 1 events have left the
 * window, i.e. until the (count - max + 1)-th oldest one has. window_us and
 * max are never negative, window_us at most RATE_MAX_WINDOW_US.
 */
static int local_window(struct cw_rate_local *l, const char *key,
			int64_t window_us, int64_t now_us, int64_t max,
			int64_t *count, int64_t *retry_after_us,
			struct cw_error *err)
{
	int64_t after, n = 0, ts = 0;
	int ret;

	*count = 0;
	*retry_after_us = 0;
	after = cw_rate_sat_sub(now_us, window_us);
	ret = l->ops->count(l, key, after, &n, err);
	if (ret)
		return ret;
	*count = n;
	if (n < max)
		return 0;
	if (max == 0) {
		*retry_after_us = window_us;
		return 0;
	}
	ret = l->ops->nth(l, key, after, n - max, &ts, err);
	if (ret)
		return ret;
	/* ts > after, hence this is > 0. */
	*retry_after_us = cw_rate_sat_sub(sat_add(ts, window_us), now_us);
	return 0;
}

/* In the transaction: -EAGAIN with *refused when a counter refuses. */
static int local_check(struct cw_rate_local *l,
		       const struct cw_rate_counter *c, size_t n,
		       int64_t now_us, struct cw_rate_refusal *refused,
		       struct cw_error *err)
{
	int64_t worst = -1, count, retry;
	size_t worst_i = 0, i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = local_window(l, c[i].key, c[i].window_us, now_us,
				   c[i].max, &count, &retry, err);
		if (ret)
			return ret;
		if (count >= c[i].max && retry > worst) {
			worst = retry;
			worst_i = i;
		}
	}
	if (worst < 0)
		return 0;
	refused->which = worst_i;
	refused->retry_after_us = worst;
	return -EAGAIN;
}

/* In the transaction: horizons, then one event per key, then the prune. */
static int local_record(struct cw_rate_local *l,
			const struct cw_rate_counter *c, size_t n,
			int64_t now_us, const char *rid, bool prune,
			struct cw_error *err)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = l->ops->horizon(l, c[i].counter, c[i].window_us, err);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		if (!c[i].record)
			continue;
		ret = l->ops->insert(l, c[i].key, c[i].counter, now_us, rid,
				     err);
		if (ret)
			return ret;
	}
	return prune ? l->ops->prune(l, now_us, err) : 0;
}

/* Under l->lock. */
static int local_sync_locked(struct cw_rate_local *l, struct cw_error *err)
{
	uint64_t upto = l->committed;
	int ret;

	if (l->synced == upto)
		return 0;
	ret = l->ops->sync(l, err);
	if (!ret)
		l->synced = upto;
	return ret;
}

static int local_reserve(struct cw_rate_store *s,
			 const struct cw_rate_counter *c, size_t n,
			 int64_t now_us, const char *rid, unsigned flags,
			 struct cw_rate_refusal *refused, struct cw_error *err)
{
	struct cw_rate_local *l = to_local(s);
	bool in_tx = false, prune;
	int ret;

	pthread_mutex_lock(&l->lock);
	ret = l->ops->begin(l, true, err);
	if (ret)
		goto out;
	in_tx = true;
	ret = local_check(l, c, n, now_us, refused, err);
	if (ret)
		goto out;
	prune = !l->pruned || now_us < l->pruned_us ||
		now_us - l->pruned_us >= RATE_PRUNE_EVERY_US;
	ret = local_record(l, c, n, now_us, rid, prune, err);
	if (ret)
		goto out;
	ret = l->ops->end(l, true, err);
	in_tx = false;
	if (ret)
		goto out;
	l->committed++;
	if (prune) {
		l->pruned = true;
		l->pruned_us = now_us;
	}
	/* A failed sync fails the call, but the reservation stays counted
	 * (erring on the side of the limit). */
	if (!(flags & CW_RATE_DEFER_SYNC))
		ret = local_sync_locked(l, err);
out:
	if (in_tx)
		l->ops->end(l, false, NULL);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

static int local_release(struct cw_rate_store *s, const char *rid,
			 struct cw_error *err)
{
	struct cw_rate_local *l = to_local(s);
	int ret;

	pthread_mutex_lock(&l->lock);
	ret = l->ops->release(l, rid, err);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

static int local_sync(struct cw_rate_store *s, struct cw_error *err)
{
	struct cw_rate_local *l = to_local(s);
	int ret;

	pthread_mutex_lock(&l->lock);
	ret = local_sync_locked(l, err);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

static int local_view(struct cw_rate_store *s, const char *key,
		      int64_t window_us, int64_t now_us, int64_t max,
		      int64_t *count, int64_t *retry_after_us,
		      struct cw_error *err)
{
	struct cw_rate_local *l = to_local(s);
	bool in_tx = false;
	int ret;

	pthread_mutex_lock(&l->lock);
	ret = l->ops->begin(l, false, err);
	if (ret)
		goto out;
	in_tx = true;
	ret = local_window(l, key, window_us, now_us, max, count,
			   retry_after_us, err);
	if (ret)
		goto out;
	ret = l->ops->end(l, true, err);
	in_tx = false;
out:
	if (in_tx)
		l->ops->end(l, false, NULL);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

static void local_close(struct cw_rate_store *s)
{
	struct cw_rate_local *l = to_local(s);

	pthread_mutex_destroy(&l->lock);
	l->ops->close(l);
}

static const struct cw_rate_store_ops local_store_ops = {
	.reserve = local_reserve,
	.release = local_release,
	.sync = local_sync,
	.window = local_view,
	.close = local_close,
};

int cw_rate_local_init(struct cw_rate_local *l,
		       const struct cw_rate_local_ops *ops,
		       struct cw_error *err)
{
	int ret;

	l->base.ops = &local_store_ops;
	l->ops = ops;
	l->committed = l->synced = 0;
	l->pruned_us = 0;
	l->pruned = false;
	ret = pthread_mutex_init(&l->lock, NULL);
	if (ret) {
		cw_error_set(err, "rate-limit store: %s", strerror(ret));
		return -ret;
	}
	return 0;
}

/* ---- the limiter ---------------------------------------------------------- */

#define RATE_STORE_DECLARE(name) \
	extern const struct cw_rate_store_type cw_rate_##name##_store;
#define RATE_STORE_ENTRY(name) &cw_rate_##name##_store,

RATE_STORES(RATE_STORE_DECLARE)

static const struct cw_rate_store_type *const rate_stores[] = {
	RATE_STORES(RATE_STORE_ENTRY)
};

struct cw_rate_store *cw_rate_open(const char *spec, struct cw_error *err)
{
	const char *colon;
	size_t i, len;

	if (!spec) {
		cw_error_set(err, "rate-limit store: none named");
		errno = EINVAL;
		return NULL;
	}
	colon = strchr(spec, ':');
	len = colon ? (size_t)(colon - spec) : strlen(spec);
	for (i = 0; i < CW_ARRAY_SIZE(rate_stores); i++) {
		const struct cw_rate_store_type *t = rate_stores[i];

		if (strlen(t->scheme) == len && !strncmp(t->scheme, spec, len))
			return t->open(colon ? colon + 1 : "", err);
	}
	cw_error_set(err, "rate-limit store: unknown kind \"%.*s\"",
		     (int)len, spec);
	errno = EINVAL;
	return NULL;
}

struct cw_rate_store *cw_rate_open_sqlite(const char *state_dir,
					  struct cw_error *err)
{
	return cw_rate_sqlite_store.open(state_dir, err);
}

struct cw_rate_store *cw_rate_open_memory(void)
{
	return cw_rate_memory_store.open("", NULL);
}

void cw_rate_close(struct cw_rate_store *s)
{
	if (!s)
		return;
	s->ops->close(s);
}

static const char *ref_counter(const struct cw_limit_ref *r)
{
	return r->limit->counter ? r->limit->counter : r->key;
}

static int check_refs(const struct cw_limit_ref *refs, size_t nrefs,
		      struct cw_error *err)
{
	size_t i;

	for (i = 0; i < nrefs; i++) {
		const struct cw_limit *l = refs[i].limit;

		if (!l) {
			cw_error_set(err, "limit %zu: no limit", i);
			return -EINVAL;
		}
		if (strnlen(refs[i].key, sizeof(refs[i].key)) ==
		    sizeof(refs[i].key)) {
			cw_error_set(err, "limit %zu: key not terminated", i);
			return -EINVAL;
		}
		if (l->window_s < 0 || l->max < 0) {
			cw_error_set(err, "%s: negative window or max",
				     l->where ? l->where : refs[i].key);
			return -EINVAL;
		}
	}
	return 0;
}

/* Index of the first ref with the same key as refs[i]. */
static size_t first_of_key(const struct cw_limit_ref *refs, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(refs[j].key, refs[i].key))
			return j;
	return i;
}

/* Events carry the counter name of the first ref of their key, so that
 * name's horizon must cover every window checked on the key. */
static void to_counters(const struct cw_limit_ref *refs, size_t nrefs,
			struct cw_rate_counter *c)
{
	size_t i, f;

	for (i = 0; i < nrefs; i++) {
		f = first_of_key(refs, i);
		c[i] = (struct cw_rate_counter){
			.key = refs[i].key,
			.counter = ref_counter(&refs[f]),
			.window_us = limit_window_us(refs[i].limit),
			.max = refs[i].limit->max,
			.record = f == i,
		};
	}
}

int cw_rate_reserve(struct cw_rate_store *s, const struct cw_limit_ref *refs,
		    size_t nrefs, int64_t now_us, const char *reservation_id,
		    int64_t *retry_after_us, size_t *which,
		    struct cw_error *err)
{
	return cw_rate_reserve_flags(s, refs, nrefs, now_us, reservation_id, 0,
				     retry_after_us, which, err);
}

int cw_rate_reserve_flags(struct cw_rate_store *s,
			  const struct cw_limit_ref *refs, size_t nrefs,
			  int64_t now_us, const char *reservation_id,
			  unsigned flags, int64_t *retry_after_us,
			  size_t *which, struct cw_error *err)
{
	struct cw_rate_counter c[RATE_MAX_COUNTERS];
	struct cw_rate_refusal refused = { 0, 0 };
	int ret;

	if (retry_after_us)
		*retry_after_us = 0;
	if (which)
		*which = 0;
	if (!s || (!refs && nrefs) || !reservation_id) {
		cw_error_set(err, "rate reserve: invalid arguments");
		return -EINVAL;
	}
	ret = check_refs(refs, nrefs, err);
	if (ret)
		return ret;
	if (!nrefs)
		return 0;
	if (nrefs > RATE_MAX_COUNTERS) {
		cw_error_set(err, "rate reserve: %zu limits, more than %d",
			     nrefs, RATE_MAX_COUNTERS);
		return -E2BIG;
	}
	to_counters(refs, nrefs, c);
	ret = s->ops->reserve(s, c, nrefs, now_us, reservation_id, flags,
			      &refused, err);
	if (ret == -EAGAIN) {
		if (retry_after_us)
			*retry_after_us = refused.retry_after_us;
		if (which)
			*which = refused.which;
	}
	return ret;
}

int cw_rate_sync(struct cw_rate_store *s, struct cw_error *err)
{
	if (!s) {
		cw_error_set(err, "rate sync: invalid arguments");
		return -EINVAL;
	}
	return s->ops->sync(s, err);
}

int cw_rate_release(struct cw_rate_store *s, const char *reservation_id,
		    struct cw_error *err)
{
	if (!s || !reservation_id) {
		cw_error_set(err, "rate release: invalid arguments");
		return -EINVAL;
	}
	return s->ops->release(s, reservation_id, err);
}

static int rate_view_window(void *ctx, const char *key, int64_t window_us,
			    int64_t now_us, int64_t max, int64_t *count,
			    int64_t *retry_after_us)
{
	struct cw_rate_store *s = ctx;

	*count = 0;
	*retry_after_us = 0;
	if (!s || !key || window_us < 0 || max < 0)
		return -EINVAL;
	if (window_us > RATE_MAX_WINDOW_US)
		window_us = RATE_MAX_WINDOW_US;
	return s->ops->window(s, key, window_us, now_us, max, count,
			      retry_after_us, NULL);
}

struct cw_counter_view cw_rate_view(struct cw_rate_store *s)
{
	struct cw_counter_view v = { .window = rate_view_window, .ctx = s };

	return v;
}
