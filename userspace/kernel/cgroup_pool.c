// SPDX-License-Identifier: Apache-2.0
/*
 * The cgroup pool: its thread keeps one call cgroup ready for the shape
 * (resource limits) last asked for and ends the calls handed back to it,
 * removals first. The ready one is taken under the pool's lock; one made
 * for other limits is handed back to the thread instead of to the call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cgroup_pool.h"
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
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;	/* something to do, or stop */
	pthread_cond_t idle;	/* the thread has nothing to do */
	bool stop, busy;
	/* Guarded by mu. */
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

static bool has_work(const struct cw_cgroup_pool *p)
{
	return p->retired || (p->want && !p->ready);
}

static void *pool_thread(void *arg)
{
	struct cw_cgroup_pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct cw_cgroup_call *c;
		struct cw_sandbox shape;
		struct retired *list;
		struct cw_error err;
		bool make;
		char id[CALL_ID_LEN];

		while (!p->stop && !has_work(p)) {
			p->busy = false;
			pthread_cond_broadcast(&p->idle);
			pthread_cond_wait(&p->work, &p->mu);
		}
		if (p->stop)
			break;
		p->busy = true;
		list = p->retired;
		p->retired = NULL;
		make = p->want && !p->ready;
		shape = p->shape;
		p->want = false;
		pthread_mutex_unlock(&p->mu);

		/* Removals first: they free the names and memory a new call
		 * cgroup would take. */
		while (list) {
			struct retired *next = list->next;
			int ret;

			memset(&err, 0, sizeof(err));
			ret = end_call(list->c, list->keep_v2, &err);
			pthread_mutex_lock(&p->mu);
			if (ret)
				p->st.failed++;
			else
				p->st.removed++;
			pthread_mutex_unlock(&p->mu);
			free(list);
			list = next;
		}
		c = NULL;
		if (make) {
			memset(&err, 0, sizeof(err));
			cw_random_id("inv-", id, sizeof(id));
			c = cw_cgroup_call_new(p->r, id, &shape, &err);
		}

		pthread_mutex_lock(&p->mu);
		if (make && !c)
			p->st.failed++;	/* the next take asks again */
		if (c) {
			p->st.prepared++;
			if (!p->ready && cw_cgroup_call_fits(c, &p->shape)) {
				p->ready = c;
			} else {
				/* The shape changed meanwhile: not wanted. */
				p->st.discarded++;
				pthread_mutex_unlock(&p->mu);
				cw_cgroup_call_end(c, NULL, NULL);
				pthread_mutex_lock(&p->mu);
			}
		}
	}
	p->busy = false;
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->mu);
	return NULL;
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
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->idle, NULL);
	set_shape(p, sb);
	p->want = true;
	p->busy = true;
	ret = pthread_create(&p->thread, NULL, pool_thread, p);
	if (ret) {
		pthread_cond_destroy(&p->idle);
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->mu);
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
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);

	for (list = p->retired; list; list = next) {
		next = list->next;
		end_call(list->c, list->keep_v2, NULL);
		free(list);
	}
	cw_cgroup_call_end(p->ready, NULL, NULL);
	pthread_cond_destroy(&p->idle);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

struct cw_cgroup_call *cw_cgroup_pool_take(struct cw_cgroup_pool *p,
					   const struct cw_sandbox *sb)
{
	struct cw_cgroup_call *c = NULL, *unfit = NULL;

	if (!p)
		return NULL;
	pthread_mutex_lock(&p->mu);
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
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
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
	pthread_mutex_lock(&p->mu);
	t->next = p->retired;
	p->retired = t;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

void cw_cgroup_pool_settle(struct cw_cgroup_pool *p,
			   struct cw_cgroup_pool_stats *st)
{
	pthread_mutex_lock(&p->mu);
	while (p->busy || has_work(p))
		pthread_cond_wait(&p->idle, &p->mu);
	if (st)
		*st = p->st;
	pthread_mutex_unlock(&p->mu);
}
