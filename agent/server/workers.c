// SPDX-License-Identifier: Apache-2.0
/* The process's pool of waiting threads (see workers.h): work is handed to
 * the most recently idle thread, or to a new one when none waits. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "lib/util.h"
#include "server/workers.h"

struct worker {
	pthread_cond_t cond;	/* work came (fn set) */
	void (*fn)(void *arg);	/* NULL while waiting */
	void *arg;
	struct worker *next;	/* on the idle stack */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The most recently idle first: its stack and caches are the warmest. */
static struct worker *idle;
static unsigned nidle;
static unsigned idle_ms = CW_WORKERS_IDLE_MS;

static void unlink_idle(struct worker *w)
{
	struct worker **pp;

	for (pp = &idle; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			nidle--;
			return;
		}
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct timespec until;

	for (;;) {
		w->fn(w->arg);
		pthread_mutex_lock(&lock);
		if (nidle >= CW_WORKERS_MAX_IDLE)
			break;
		w->fn = NULL;
		w->next = idle;
		idle = w;
		nidle++;
		cw_deadline_ms(CLOCK_MONOTONIC, idle_ms, &until);
		while (!w->fn)
			if (pthread_cond_timedwait(&w->cond, &lock, &until) ==
				    ETIMEDOUT &&
			    !w->fn) {
				unlink_idle(w);
				goto out;
			}
		pthread_mutex_unlock(&lock);
	}
out:
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&w->cond);
	free(w);
	return NULL;
}

int cw_workers_run(void (*fn)(void *arg), void *arg)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	struct worker *w;
	pthread_t th;
	int ret;

	pthread_mutex_lock(&lock);
	w = idle;
	if (w) {
		idle = w->next;
		nidle--;
		w->fn = fn;
		w->arg = arg;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	pthread_mutex_unlock(&lock);

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->arg = arg;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = -pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret) {
		free(w);
		return ret;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&th, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (ret) {
		pthread_cond_destroy(&w->cond);
		free(w);
	}
	return ret;
}

unsigned cw_workers_idle(void)
{
	unsigned n;

	pthread_mutex_lock(&lock);
	n = nidle;
	pthread_mutex_unlock(&lock);
	return n;
}

void cw_workers_set_idle_ms(unsigned ms)
{
	pthread_mutex_lock(&lock);
	idle_ms = ms;
	pthread_mutex_unlock(&lock);
}
