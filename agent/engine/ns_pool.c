// SPDX-License-Identifier: Apache-2.0
/*
 * The namespace pool: its thread keeps one slot ready for the rules last
 * asked for and stops the slots handed back to it, those first. What a
 * slot was made for is held by reference (rules, ruleset), so "made for
 * these" is a pointer comparison that a reload cannot fool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/ns_pool.h"
#include "lib/bgwork.h"

struct cw_ns_pool {
	struct cw_ns_forker *forker;
	struct cw_bgwork w;
	/* Guarded by w's lock. */
	struct cw_ns_slot *ready;
	struct cw_rules *want_ru;	/* prepare one for these (references) */
	struct cw_ll_ref *want_src;
	struct cw_ns_slot *retired;
	struct cw_ns_pool_stats st;
};

static struct cw_ll_ref *ll_get(struct cw_ll_ref *r)
{
	if (r)
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

static void slot_end(struct cw_ns_slot *s)
{
	if (!s)
		return;
	cw_ns_holder_stop(&s->h);
	cw_landlock_free(s->ll);
	cw_ll_put(s->src);
	cw_rules_put(s->ru);
	free(s);
}

/* The rules' ruleset with its rules on the agent's /proc moved to the
 * slot's: from the descriptors the ruleset keeps where it could keep
 * them, else built again from the holder's root. */
static struct cw_landlock *moved_ruleset(const struct cw_ns_slot *s,
					 const struct cw_sandbox *sb,
					 struct cw_error *err)
{
	struct cw_landlock *ll;
	int proc;

	if (!cw_landlock_can_move_proc(s->src->ll))
		return cw_landlock_build_at(sb, cw_landlock_abi(), s->h.root,
					    err);
	proc = openat(s->h.root, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0) {
		cw_error_set(err, "namespaces: the call's /proc: %s",
			     strerror(errno));
		return NULL;
	}
	ll = cw_landlock_moved_to_proc(s->src->ll, proc, err);
	close(proc);
	return ll;
}

static struct cw_ns_slot *slot_make(struct cw_ns_pool *p, struct cw_rules *ru,
				    struct cw_ll_ref *src,
				    struct cw_error *err)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(ru->policy);
	struct cw_ns_mounts m;
	struct cw_ns_slot *s;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s) {
		cw_error_set(err, "out of memory");
		return NULL;
	}
	s->h.pid = 0;
	s->h.pidfd = s->h.sock = s->h.root = -1;
	s->ru = cw_rules_get(ru);
	s->src = ll_get(src);
	rc = cw_ns_mounts_plan(sb, &m, err);
	if (rc == 0) {
		rc = cw_ns_holder_start(p->forker, &m, &s->h, err);
		cw_ns_mounts_free(&m);
	}
	if (rc == 0 && src && cw_landlock_names_proc(src->ll)) {
		s->ll = moved_ruleset(s, sb, err);
		if (!s->ll)
			rc = -EIO;
	}
	if (rc < 0) {
		slot_end(s);
		return NULL;
	}
	return s;
}

static bool fits(const struct cw_ns_slot *s, const struct cw_rules *ru,
		 const struct cw_ll_ref *src)
{
	return s->ru == ru && s->src == src &&
	       !(s->ll && cw_landlock_stale(s->ll));
}

static bool has_work(void *ctx)
{
	const struct cw_ns_pool *p = ctx;

	return p->retired || (p->want_ru && !p->ready);
}

/* Under the lock: forgets what is wanted, into *ru and *src for the
 * caller to drop outside it. */
static void clear_want(struct cw_ns_pool *p, struct cw_rules **ru,
		       struct cw_ll_ref **src)
{
	*ru = p->want_ru;
	*src = p->want_src;
	p->want_ru = NULL;
	p->want_src = NULL;
}

/* One round of the thread, entered and left under the lock. */
static void pool_round(void *ctx)
{
	struct cw_ns_pool *p = ctx;
	struct cw_ns_slot *list, *s = NULL;
	struct cw_rules *ru = NULL, *gone_ru = NULL;
	struct cw_ll_ref *src = NULL, *gone_src = NULL;
	struct cw_error err;

	list = p->retired;
	p->retired = NULL;
	if (p->want_ru && !p->ready) {
		ru = cw_rules_get(p->want_ru);
		src = ll_get(p->want_src);
	}
	cw_bgwork_unlock(&p->w);

	/* Stops first: a slot's end frees what a new one takes. */
	while (list) {
		struct cw_ns_slot *next = list->next;

		slot_end(list);
		list = next;
	}
	if (ru) {
		memset(&err, 0, sizeof(err));
		s = slot_make(p, ru, src, &err);
	}

	cw_bgwork_lock(&p->w);
	if (ru && !s) {
		/* Not tried again before the next take asks. */
		p->st.failed++;
		if (p->want_ru == ru)
			clear_want(p, &gone_ru, &gone_src);
	}
	if (s) {
		p->st.prepared++;
		if (!p->ready && fits(s, p->want_ru, p->want_src)) {
			p->ready = s;
			s = NULL;
		} else {
			p->st.discarded++;
			if (!p->ready && p->want_ru == ru)
				clear_want(p, &gone_ru, &gone_src);
		}
	}
	cw_bgwork_unlock(&p->w);
	/* Made for rules no longer wanted. */
	slot_end(s);
	cw_ll_put(src);
	cw_rules_put(ru);
	cw_ll_put(gone_src);
	cw_rules_put(gone_ru);
	cw_bgwork_lock(&p->w);
}

/* Under the lock: what the thread prepares next. The references replaced
 * go back to the caller, to drop outside the lock. */
static void set_want(struct cw_ns_pool *p, struct cw_rules *ru,
		     struct cw_ll_ref *src, struct cw_rules **old_ru,
		     struct cw_ll_ref **old_src)
{
	clear_want(p, old_ru, old_src);
	p->want_ru = cw_rules_get(ru);
	p->want_src = ll_get(src);
}

struct cw_ns_pool *cw_ns_pool_open(struct cw_rules *ru, struct cw_error *err)
{
	struct cw_ll_ref *src, *old_src;
	struct cw_rules *old_ru;
	struct cw_ns_pool *p;
	bool ok;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p) {
		cw_error_set(err, "out of memory");
		return NULL;
	}
	p->forker = cw_ns_forker_start(err);
	if (!p->forker) {
		free(p);
		return NULL;
	}
	src = cw_rules_landlock(ru, cw_policy_sandbox(ru->policy), &ok, NULL);
	set_want(p, ru, src, &old_ru, &old_src);
	cw_ll_put(src);
	ret = cw_bgwork_start(&p->w, has_work, pool_round, p);
	if (ret) {
		cw_rules_put(p->want_ru);
		cw_ll_put(p->want_src);
		cw_ns_forker_stop(p->forker);
		free(p);
		cw_error_set(err, "pthread_create: %s", strerror(ret));
		return NULL;
	}
	return p;
}

void cw_ns_pool_close(struct cw_ns_pool *p)
{
	struct cw_ns_slot *s, *next;

	if (!p)
		return;
	cw_bgwork_stop(&p->w);
	for (s = p->retired; s; s = next) {
		next = s->next;
		slot_end(s);
	}
	slot_end(p->ready);
	cw_rules_put(p->want_ru);
	cw_ll_put(p->want_src);
	cw_ns_forker_stop(p->forker);
	free(p);
}

struct cw_ns_slot *cw_ns_pool_take(struct cw_ns_pool *p, struct cw_rules *ru,
				   struct cw_ll_ref *src,
				   struct cw_error *err)
{
	struct cw_ns_slot *s = NULL, *unfit = NULL;
	struct cw_ll_ref *old_src;
	struct cw_rules *old_ru;

	cw_bgwork_lock(&p->w);
	if (p->ready && fits(p->ready, ru, src)) {
		s = p->ready;
		p->st.taken++;
	} else {
		unfit = p->ready;
		if (unfit)
			p->st.discarded++;
		p->st.made_inline++;
	}
	p->ready = NULL;
	set_want(p, ru, src, &old_ru, &old_src);
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
	cw_ll_put(old_src);
	cw_rules_put(old_ru);
	/* Made for other rules (a reload, a rebuilt ruleset): off the path. */
	cw_ns_pool_give(p, unfit);
	return s ? s : slot_make(p, ru, src, err);
}

void cw_ns_pool_give(struct cw_ns_pool *p, struct cw_ns_slot *s)
{
	if (!s)
		return;
	cw_bgwork_lock(&p->w);
	s->next = p->retired;
	p->retired = s;
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
}

const struct cw_landlock *cw_ns_slot_landlock(const struct cw_ns_slot *s)
{
	return s->ll ? s->ll : s->src ? s->src->ll : NULL;
}

void cw_ns_pool_settle(struct cw_ns_pool *p, struct cw_ns_pool_stats *st)
{
	cw_bgwork_settle(&p->w);
	if (st)
		*st = p->st;
	cw_bgwork_unlock(&p->w);
}
