/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bgwork: the thread of a pool that prepares things ahead of the calls
 * and ends what they hand back (kernel/cgroup_pool.c, engine/ns_pool.c).
 *
 * The pool's state is guarded by the thread's mutex. Whenever has_work
 * says so, the thread calls round with the mutex held; round may drop it
 * around slow work and must hold it again when it returns. Both run on
 * the thread only.
 */
#ifndef CW_LIB_BGWORK_H
#define CW_LIB_BGWORK_H

#include <pthread.h>
#include <stdbool.h>

struct cw_bgwork {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;	/* something to do, or stop */
	pthread_cond_t idle;	/* the thread has nothing to do */
	bool stop, busy;
	bool (*has_work)(void *ctx);
	void (*round)(void *ctx);
	void *ctx;
};

/* Starts the thread; 0, or an errno value with nothing left to free. */
int cw_bgwork_start(struct cw_bgwork *w, bool (*has_work)(void *ctx),
		    void (*round)(void *ctx), void *ctx);
/* Stops the thread after its current round and frees what start made. */
void cw_bgwork_stop(struct cw_bgwork *w);

void cw_bgwork_lock(struct cw_bgwork *w);
void cw_bgwork_unlock(struct cw_bgwork *w);
/* Under the lock: there is something new to do. */
void cw_bgwork_kick(struct cw_bgwork *w);
/* Takes the lock and waits, holding it, until the thread has nothing
 * left to do. */
void cw_bgwork_settle(struct cw_bgwork *w);

#endif
