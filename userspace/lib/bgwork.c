// SPDX-License-Identifier: Apache-2.0
/* bgwork: a pool's background thread (lib/bgwork.h). */
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/bgwork.h"

/* Work done ahead yields to the calls being run (a thread's own nice
 * value, on Linux). */
#define BGWORK_NICE 10

static void *run(void *arg)
{
	struct cw_bgwork *w = arg;

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BGWORK_NICE) < 0) {
		/* at the agent's priority, then */
	}
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->stop && !w->has_work(w->ctx)) {
			w->busy = false;
			pthread_cond_broadcast(&w->idle);
			pthread_cond_wait(&w->work, &w->mu);
		}
		if (w->stop)
			break;
		w->busy = true;
		w->round(w->ctx);
	}
	w->busy = false;
	pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int cw_bgwork_start(struct cw_bgwork *w, bool (*has_work)(void *ctx),
		    void (*round)(void *ctx), void *ctx)
{
	int ret;

	memset(w, 0, sizeof(*w));
	w->has_work = has_work;
	w->round = round;
	w->ctx = ctx;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->idle, NULL);
	/* Busy until the thread has first looked for work. */
	w->busy = true;
	ret = pthread_create(&w->thread, NULL, run, w);
	if (ret) {
		pthread_cond_destroy(&w->idle);
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->mu);
	}
	return ret;
}

void cw_bgwork_stop(struct cw_bgwork *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->idle);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
}

void cw_bgwork_lock(struct cw_bgwork *w)
{
	pthread_mutex_lock(&w->mu);
}

void cw_bgwork_unlock(struct cw_bgwork *w)
{
	pthread_mutex_unlock(&w->mu);
}

void cw_bgwork_kick(struct cw_bgwork *w)
{
	pthread_cond_signal(&w->work);
}

void cw_bgwork_settle(struct cw_bgwork *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->busy || w->has_work(w->ctx))
		pthread_cond_wait(&w->idle, &w->mu);
}
