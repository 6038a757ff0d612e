// SPDX-License-Identifier: Apache-2.0
/*
 * The memory rate-limit store, for tests and benchmarks: the same events
 * and horizons as the SQLite store, in this process only and gone when it
 * is closed.
 *
 * Each key's events are kept sorted by stamp, so counting a window is one
 * binary search (keys and horizons are found by a linear scan). A
 * transaction logs its writes (struct mem_undo) and a rollback
 * undoes them in reverse; the prune, the last write of a transaction,
 * ends the log, since removing keys reorders them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rate/store.h"
#include "lib/util.h"

struct mem_event {
	int64_t ts;
	char *rid;
	size_t hz;		/* index into horizons: the event's counter */
};

struct mem_key {
	char *key;
	struct mem_event *ev;	/* sorted by ts */
	size_t n, cap;
};

struct mem_horizon {
	char *counter;
	int64_t window_us;
};

enum mem_undo_kind { UNDO_EVENT, UNDO_KEY_NEW, UNDO_HZ_NEW, UNDO_HZ_RAISE };

struct mem_undo {
	enum mem_undo_kind kind;
	size_t idx;
	char *rid;		/* UNDO_EVENT: identifies the event */
	int64_t old;		/* UNDO_HZ_RAISE */
};

struct mem_store {
	struct cw_rate_local local;
	struct mem_key *keys;
	size_t nkeys, capkeys;
	struct mem_horizon *hz;	/* only grows: events refer to it by index */
	size_t nhz, caphz;
	struct mem_undo *undo;	/* writes of the open transaction */
	size_t nundo, capundo;
};

static struct mem_store *to_mem(struct cw_rate_local *l)
{
	return (struct mem_store *)l;
}

/* An array's first allocation, in elements; it doubles from there. */
#define MEM_FIRST_CAP 8

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : MEM_FIRST_CAP;
	void *n;

	if (need <= *cap)
		return 0;
	while (cap2 < need)
		cap2 *= 2;
	n = reallocarray(*p, cap2, size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = cap2;
	return 0;
}

static int mem_nomem(struct cw_error *err)
{
	cw_error_set(err, "rate-limit store: out of memory");
	return -ENOMEM;
}

static struct mem_key *mem_find(struct mem_store *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nkeys; i++)
		if (!strcmp(m->keys[i].key, key))
			return &m->keys[i];
	return NULL;
}

/* First index of k's events with ts > t. */
static size_t mem_upper(const struct mem_key *k, int64_t t)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ev[mid].ts > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int mem_begin(struct cw_rate_local *l, bool write,
		     struct cw_error *err)
{
	(void)write;
	(void)err;
	to_mem(l)->nundo = 0;
	return 0;
}

static void mem_remove_key(struct mem_store *m, size_t i)
{
	free(m->keys[i].ev);
	free(m->keys[i].key);
	m->keys[i] = m->keys[--m->nkeys];
}

static void mem_undo_one(struct mem_store *m, const struct mem_undo *u)
{
	struct mem_key *k;
	size_t j;

	switch (u->kind) {
	case UNDO_EVENT:
		k = &m->keys[u->idx];
		for (j = 0; j < k->n; j++) {
			if (k->ev[j].rid != u->rid)
				continue;
			free(k->ev[j].rid);
			memmove(&k->ev[j], &k->ev[j + 1],
				(k->n - j - 1) * sizeof(k->ev[0]));
			k->n--;
			break;
		}
		break;
	case UNDO_KEY_NEW:
		/* Appended in this transaction, so still the last one. */
		mem_remove_key(m, u->idx);
		break;
	case UNDO_HZ_NEW:
		free(m->hz[--m->nhz].counter);
		break;
	case UNDO_HZ_RAISE:
		m->hz[u->idx].window_us = u->old;
		break;
	}
}

static int mem_end(struct cw_rate_local *l, bool commit, struct cw_error *err)
{
	struct mem_store *m = to_mem(l);

	(void)err;
	if (!commit)
		while (m->nundo)
			mem_undo_one(m, &m->undo[--m->nundo]);
	m->nundo = 0;
	return 0;
}

static int mem_count(struct cw_rate_local *l, const char *key,
		     int64_t after_us, int64_t *count, struct cw_error *err)
{
	struct mem_key *k = mem_find(to_mem(l), key);

	(void)err;
	*count = k ? (int64_t)(k->n - mem_upper(k, after_us)) : 0;
	return 0;
}

static int mem_nth(struct cw_rate_local *l, const char *key, int64_t after_us,
		   int64_t n, int64_t *ts, struct cw_error *err)
{
	struct mem_key *k = mem_find(to_mem(l), key);
	size_t i;

	if (!k || n < 0)
		goto bad;
	i = mem_upper(k, after_us);
	if ((uint64_t)n >= k->n - i)
		goto bad;
	*ts = k->ev[i + (size_t)n].ts;
	return 0;
bad:
	cw_error_set(err, "rate-limit store: counter %s changed while read",
		     key);
	return -EIO;
}

/* Room for one more undo record, so a write that succeeded can always be
 * logged. */
static int mem_undo_room(struct mem_store *m)
{
	return grow((void **)&m->undo, &m->capundo, m->nundo + 1,
		    sizeof(m->undo[0]));
}

static int mem_hz_get(struct mem_store *m, const char *counter,
		      size_t *idx, struct cw_error *err)
{
	struct mem_horizon *h;
	size_t i;

	for (i = 0; i < m->nhz; i++) {
		if (!strcmp(m->hz[i].counter, counter)) {
			*idx = i;
			return 0;
		}
	}
	if (mem_undo_room(m) ||
	    grow((void **)&m->hz, &m->caphz, m->nhz + 1, sizeof(m->hz[0])))
		return mem_nomem(err);
	h = &m->hz[m->nhz];
	h->counter = strdup(counter);
	if (!h->counter)
		return mem_nomem(err);
	h->window_us = 0;
	*idx = m->nhz++;
	m->undo[m->nundo++] = (struct mem_undo){ .kind = UNDO_HZ_NEW };
	return 0;
}

static int mem_horizon(struct cw_rate_local *l, const char *counter,
		       int64_t window_us, struct cw_error *err)
{
	struct mem_store *m = to_mem(l);
	size_t i;
	int ret;

	ret = mem_hz_get(m, counter, &i, err);
	if (ret)
		return ret;
	if (window_us <= m->hz[i].window_us)
		return 0;
	if (mem_undo_room(m))
		return mem_nomem(err);
	m->undo[m->nundo++] = (struct mem_undo){
		.kind = UNDO_HZ_RAISE, .idx = i, .old = m->hz[i].window_us
	};
	m->hz[i].window_us = window_us;
	return 0;
}

static int mem_insert(struct cw_rate_local *l, const char *key,
		      const char *counter, int64_t ts, const char *rid,
		      struct cw_error *err)
{
	struct mem_store *m = to_mem(l);
	struct mem_key *k;
	size_t hz, at, ki;
	char *r = NULL;
	int ret;

	ret = mem_hz_get(m, counter, &hz, err);
	if (ret)
		goto out;
	k = mem_find(m, key);
	if (!k) {
		ret = -ENOMEM;
		if (mem_undo_room(m) ||
		    grow((void **)&m->keys, &m->capkeys, m->nkeys + 1,
			 sizeof(m->keys[0])))
			goto out;
		k = &m->keys[m->nkeys];
		memset(k, 0, sizeof(*k));
		k->key = strdup(key);
		if (!k->key)
			goto out;
		m->undo[m->nundo++] = (struct mem_undo){
			.kind = UNDO_KEY_NEW, .idx = m->nkeys
		};
		m->nkeys++;
	}
	ki = (size_t)(k - m->keys);
	ret = -ENOMEM;
	if (mem_undo_room(m) ||
	    grow((void **)&k->ev, &k->cap, k->n + 1, sizeof(k->ev[0])))
		goto out;
	r = strdup(rid);
	if (!r)
		goto out;
	at = mem_upper(k, ts);
	memmove(&k->ev[at + 1], &k->ev[at], (k->n - at) * sizeof(k->ev[0]));
	k->ev[at] = (struct mem_event){ .ts = ts, .rid = r, .hz = hz };
	k->n++;
	m->undo[m->nundo++] = (struct mem_undo){
		.kind = UNDO_EVENT, .idx = ki, .rid = r
	};
	ret = 0;
out:
	if (ret == -ENOMEM)
		mem_nomem(err);
	return ret;
}

/* Keeps the events of key i for which drop() is false; frees the key when
 * none remain. */
static void mem_filter(struct mem_store *m, size_t i,
		       bool (*drop)(const struct mem_store *m,
				    const struct mem_event *e, const void *arg),
		       const void *arg)
{
	struct mem_key *k = &m->keys[i];
	size_t r, w = 0;

	for (r = 0; r < k->n; r++) {
		if (drop(m, &k->ev[r], arg))
			free(k->ev[r].rid);
		else
			k->ev[w++] = k->ev[r];
	}
	k->n = w;
	if (!k->n)
		mem_remove_key(m, i);
}

static bool mem_expired(const struct mem_store *m, const struct mem_event *e,
			const void *arg)
{
	int64_t now_us = *(const int64_t *)arg;

	return e->ts <= cw_rate_sat_sub(now_us, m->hz[e->hz].window_us);
}

static bool mem_of_rid(const struct mem_store *m, const struct mem_event *e,
		       const void *arg)
{
	(void)m;
	return !strcmp(e->rid, arg);
}

static int mem_prune(struct cw_rate_local *l, int64_t now_us,
		     struct cw_error *err)
{
	struct mem_store *m = to_mem(l);
	size_t i;

	(void)err;
	/* Removing keys reorders them: nothing may be undone past this. */
	m->nundo = 0;
	for (i = m->nkeys; i-- > 0;)
		mem_filter(m, i, mem_expired, &now_us);
	return 0;
}

static int mem_release(struct cw_rate_local *l, const char *rid,
		       struct cw_error *err)
{
	struct mem_store *m = to_mem(l);
	size_t i;

	(void)err;
	for (i = m->nkeys; i-- > 0;)
		mem_filter(m, i, mem_of_rid, rid);
	return 0;
}

static void mem_close(struct cw_rate_local *l)
{
	struct mem_store *m = to_mem(l);
	size_t i, j;

	for (i = 0; i < m->nkeys; i++) {
		for (j = 0; j < m->keys[i].n; j++)
			free(m->keys[i].ev[j].rid);
		free(m->keys[i].ev);
		free(m->keys[i].key);
	}
	for (i = 0; i < m->nhz; i++)
		free(m->hz[i].counter);
	free(m->undo);
	free(m->hz);
	free(m->keys);
	free(m);
}

static int mem_sync(struct cw_rate_local *l, struct cw_error *err)
{
	(void)l;
	(void)err;
	return 0;
}

static const struct cw_rate_local_ops mem_ops = {
	.begin = mem_begin,
	.end = mem_end,
	.count = mem_count,
	.nth = mem_nth,
	.horizon = mem_horizon,
	.insert = mem_insert,
	.prune = mem_prune,
	.release = mem_release,
	.sync = mem_sync,
	.close = mem_close,
};

static struct cw_rate_store *mem_open(const char *arg, struct cw_error *err)
{
	struct mem_store *m = calloc(1, sizeof(*m));
	int ret;

	(void)arg;
	if (!m) {
		mem_nomem(err);
		errno = ENOMEM;
		return NULL;
	}
	ret = cw_rate_local_init(&m->local, &mem_ops, err);
	if (ret) {
		free(m);
		errno = -ret;
		return NULL;
	}
	return &m->local.base;
}

const struct cw_rate_store_type cw_rate_memory_store = {
	.scheme = "memory",
	.open = mem_open,
};
