// SPDX-License-Identifier: Apache-2.0
/*
 * The cgroup pool: its thread keeps one call cgroup ready for the shape
 * (resource limits) last asked for and ends the calls handed back to it,
 * removals first. The ready one is taken under the pool's lock; one made
 * for other limits is handed back to the thread instead of to the call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cgroup_pool.h"
#include "lib/bgwork.h"
#include "lib/util.h"

/* A ready call's id, "inv-" and random characters, with its NUL. */
#define CALL_ID_LEN 32

struct retired {
	struct cw_cgroup_call *c;
	bool keep_v2;
	struct retired *next;
};

struct cw_cgroup_pool {
	struct cw_cgroup_root *r;
	struct cw_bgwork w;
	/* Guarded by w's lock. */
	struct cw_cgroup_call *ready;
	bool want;		/* prepare one for shape */
	struct cw_sandbox shape; /* only .resources is read by the cgroup */
	struct retired *retired;
	struct cw_cgroup_pool_stats st;
};

static int end_call(struct cw_cgroup_call *c, bool keep_v2,
		    struct cw_error *err)
{
	return keep_v2 ? cw_cgroup_call_end_keep_v2(c, NULL, err) :
			 cw_cgroup_call_end(c, NULL, err);
}

static void set_shape(struct cw_cgroup_pool *p, const struct cw_sandbox *sb)
{
	memset(&p->shape, 0, sizeof(p->shape));
	if (sb)
		p->shape.resources = sb->resources;
}

static bool has_work(void *ctx)
{
	const struct cw_cgroup_pool *p = ctx;

	return p->retired || (p->want && !p->ready);
}

/* One round of the thread, entered and left under the lock. */
static void pool_round(void *ctx)
{
	struct cw_cgroup_pool *p = ctx;
	struct cw_cgroup_call *c;
	struct cw_sandbox shape;
	struct retired *list;
	struct cw_error err;
	bool make;
	char id[CALL_ID_LEN];

	list = p->retired;
	p->retired = NULL;
	make = p->want && !p->ready;
	shape = p->shape;
	p->want = false;
	cw_bgwork_unlock(&p->w);

	/* Removals first: they free the names and memory a new call cgroup
	 * would take. */
	while (list) {
		struct retired *next = list->next;
		int ret;

		memset(&err, 0, sizeof(err));
		ret = end_call(list->c, list->keep_v2, &err);
		cw_bgwork_lock(&p->w);
		if (ret)
			p->st.failed++;
		else
			p->st.removed++;
		cw_bgwork_unlock(&p->w);
		free(list);
		list = next;
	}
	c = NULL;
	if (make) {
		memset(&err, 0, sizeof(err));
		cw_random_id("inv-", id, sizeof(id));
		c = cw_cgroup_call_new(p->r, id, &shape, &err);
	}

	cw_bgwork_lock(&p->w);
	if (make && !c)
		p->st.failed++;	/* the next take asks again */
	if (c) {
		p->st.prepared++;
		if (!p->ready && cw_cgroup_call_fits(c, &p->shape)) {
			p->ready = c;
		} else {
			/* The shape changed meanwhile: not wanted. */
			p->st.discarded++;
			cw_bgwork_unlock(&p->w);
			cw_cgroup_call_end(c, NULL, NULL);
			cw_bgwork_lock(&p->w);
		}
	}
}

struct cw_cgroup_pool *cw_cgroup_pool_open(struct cw_cgroup_root *r,
					   const struct cw_sandbox *sb)
{
	struct cw_cgroup_pool *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->r = r;
	set_shape(p, sb);
	p->want = true;
	ret = cw_bgwork_start(&p->w, has_work, pool_round, p);
	if (ret) {
		free(p);
		errno = ret;
		return NULL;
	}
	return p;
}

void cw_cgroup_pool_close(struct cw_cgroup_pool *p)
{
	struct retired *list, *next;

	if (!p)
		return;
	cw_bgwork_stop(&p->w);
	for (list = p->retired; list; list = next) {
		next = list->next;
		end_call(list->c, list->keep_v2, NULL);
		free(list);
	}
	cw_cgroup_call_end(p->ready, NULL, NULL);
	free(p);
}

struct cw_cgroup_call *cw_cgroup_pool_take(struct cw_cgroup_pool *p,
					   const struct cw_sandbox *sb)
{
	struct cw_cgroup_call *c = NULL, *unfit = NULL;

	if (!p)
		return NULL;
	cw_bgwork_lock(&p->w);
	set_shape(p, sb);
	if (p->ready && cw_cgroup_call_fits(p->ready, sb)) {
		c = p->ready;
		p->st.taken++;
	} else if (p->ready) {
		unfit = p->ready;
		p->st.discarded++;
	}
	p->ready = NULL;
	p->want = true;
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
	/* Made for other limits (the policy changed): removed off the path. */
	cw_cgroup_pool_retire(p, unfit, false);
	return c;
}

void cw_cgroup_pool_retire(struct cw_cgroup_pool *p, struct cw_cgroup_call *c,
			   bool keep_v2)
{
	struct retired *t;

	if (!c)
		return;
	t = p ? malloc(sizeof(*t)) : NULL;
	if (!t) {
		/* No pool or no memory: remove it now rather than leak it. */
		end_call(c, keep_v2, NULL);
		return;
	}
	t->c = c;
	t->keep_v2 = keep_v2;
	cw_bgwork_lock(&p->w);
	t->next = p->retired;
	p->retired = t;
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
}

void cw_cgroup_pool_settle(struct cw_cgroup_pool *p,
			   struct cw_cgroup_pool_stats *st)
{
	cw_bgwork_settle(&p->w);
	if (st)
		*st = p->st;
	cw_bgwork_unlock(&p->w);
}
