// SPDX-License-Identifier: Apache-2.0
/*
 * Group commit: appends are numbered and one fdatasync makes every append
 * before it durable, so writers waiting at once share one flush. And the
 * writers told later (cw_audit_write_async): their records are queued and
 * the log's flusher thread appends what is queued with one write(), makes
 * it durable and tells the writers, in order.
 *
 * The counters and the queues are the handle's lock's (a->lock): the
 * flusher holds it but around an fdatasync and while it tells writers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "audit/audit_int.h"

/* Room for this many queued records at first; it doubles when full. */
#define PEND_MIN 64

/* One flush by this thread, a->lock held (and released during the
 * fdatasync); the caller has checked that no other thread is flushing. */
static void flush_once(struct cw_audit *a)
{
	uint64_t upto;
	int fd, r;

	a->syncing = true;
	a->flushes++;
	upto = a->appended;
	fd = fcntl(a->wfd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0) {
		pthread_mutex_unlock(&a->lock);
		r = fdatasync(fd) ? errno : 0;
		close(fd);
		pthread_mutex_lock(&a->lock);
	} else {
		/* out of descriptors: flush under the lock */
		r = fdatasync(a->wfd) ? errno : 0;
	}
	a->syncing = false;
	if (r) {
		if (upto > a->failed)
			a->failed = upto;
		a->sync_errno = r;
	} else if (upto > a->synced) {
		a->synced = upto;
	}
	pthread_cond_broadcast(&a->synced_cond);
}

/*
 * Makes this handle's appends up to ticket durable. One thread at a time
 * flushes, outside the lock and on its own descriptor (a rotation may
 * replace wfd meanwhile), while others go on appending; they wait for
 * that flush to end and the next one covers all of them: under load one
 * fdatasync serves many calls. A failed flush fails every append it
 * covered; those records stay in the file (others may follow them), so a
 * reader can find a record whose writer was told it failed.
 */
int audit_sync_through(struct cw_audit *a, uint64_t ticket,
		       struct cw_error *err)
{
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	while (a->synced < ticket) {
		if (a->failed >= ticket) {
			ret = -a->sync_errno;
			audit_err(err, a->path, 0,
				  "fdatasync of the log failed: %s",
				  audit_errstr(-ret));
			break;
		}
		if (a->syncing) {
			pthread_cond_wait(&a->synced_cond, &a->lock);
			continue;
		}
		flush_once(a);
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

/* A writer to be told of a failure. */
static void tell_failed(struct cw_audit *a, struct waiter *w, int ret,
			const struct cw_error *err)
{
	w->sync_errno = -ret;
	w->err = malloc(sizeof(*w->err));
	if (w->err)
		*w->err = *err;
	*a->ready_tail = w;
	a->ready_tail = &w->next;
}

/*
 * The flusher's append, a->lock held: every record waiting in pend with
 * one write() (more only at a rotation), under the lock the other writers
 * of this handle take too. Its writers wait for the next flush; if the
 * write failed, they are told so.
 */
static void append_pending(struct cw_audit *a)
{
	struct mids m = a->pend;
	struct waiter *list = a->pending, *w;
	struct cw_error err = { 0 };
	size_t i, n = a->npending, done = 0;
	uint64_t *tickets;
	int ret = -ENOMEM;

	a->pend = (struct mids){ 0 };
	a->pend_cap = a->npending = 0;
	a->pending = NULL;
	a->pending_tail = &a->pending;
	tickets = calloc(n, sizeof(*tickets));
	if (tickets)
		ret = audit_append_mids(a, &m, n, tickets, &done, &err);
	else
		audit_err(&err, a->path, 0, "no memory");
	for (i = 0; (w = list); i++) {
		list = w->next;
		w->next = NULL;
		if (i < done) {
			w->ticket = tickets[i];
			*a->waiters_tail = w;
			a->waiters_tail = &w->next;
		} else {
			tell_failed(a, w, ret, &err);
		}
	}
	free(tickets);
	cw_buf_free(&m.text);
	free(m.end);
}

/* Tells the writers on the ready list, in order, outside the lock (held
 * on entry and on return). */
static void tell_ready(struct cw_audit *a)
{
	struct waiter *w, *list = a->ready;
	struct cw_error err;

	a->ready = NULL;
	a->ready_tail = &a->ready;
	pthread_mutex_unlock(&a->lock);
	while ((w = list)) {
		list = w->next;
		if (!w->sync_errno) {
			w->done(w->ctx, 0, NULL);
		} else if (w->err) {
			w->done(w->ctx, -w->sync_errno, w->err);
		} else {
			audit_err(&err, a->path, 0,
				  "fdatasync of the log failed: %s",
				  audit_errstr(w->sync_errno));
			w->done(w->ctx, -w->sync_errno, &err);
		}
		free(w->err);
		free(w);
	}
	pthread_mutex_lock(&a->lock);
}

/*
 * The flusher thread: while writers wait to be told, one write() appends
 * every record handed in since the last, and one fdatasync (or another
 * thread's, when one is under way) covers every record appended before
 * it; then it tells the writers that flush covered (done() is short), and
 * the next round starts for the records handed in meanwhile. So the
 * batches grow with the load, and the writers' threads wait neither for
 * the file nor for the disk. One thread for all of it: under load, a
 * thread of its own for the telling cost more in wakeups than the
 * telling itself.
 */
static void *flusher_main(void *p)
{
	struct cw_audit *a = p;
	struct waiter *w;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		/* Every waiter the flushes so far have covered is told. */
		while ((w = a->waiters) &&
		       (w->ticket <= a->synced || w->ticket <= a->failed)) {
			a->waiters = w->next;
			w->next = NULL;
			w->sync_errno = w->ticket <= a->synced ? 0 :
								 a->sync_errno;
			*a->ready_tail = w;
			a->ready_tail = &w->next;
		}
		if (!a->waiters)
			a->waiters_tail = &a->waiters;
		if (a->ready) {
			tell_ready(a);
			continue;
		}
		if (a->pending) {
			append_pending(a);
			continue;
		}
		if (!a->waiters) {
			if (a->flusher_stop)
				break;
			pthread_cond_wait(&a->waiters_cond, &a->lock);
		} else if (a->syncing) {
			pthread_cond_wait(&a->synced_cond, &a->lock);
		} else {
			flush_once(a);
		}
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int cw_audit_write_async(struct cw_audit *a, const char *type,
			 const char *invocation, json_t *fields,
			 cw_audit_done_fn done, void *ctx,
			 struct cw_error *err)
{
	struct cw_buf mid = { 0 };
	struct heads h = { 0 };
	struct waiter *w = NULL;
	int ret;

	ret = audit_prepare_record(a, &h, type, invocation, fields, &mid, err);
	if (ret)
		goto out;
	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory");
		goto out;
	}
	w->done = done;
	w->ctx = ctx;
	ret = -pthread_mutex_lock(&a->lock);
	if (ret) {
		audit_err(err, a->path, 0, "pthread_mutex_lock failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	if (!a->flusher_running) {
		ret = -pthread_create(&a->flusher, NULL, flusher_main, a);
		a->flusher_running = !ret;
	}
	if (ret) {
		audit_err(err, a->path, 0,
			  "cannot start the log's flusher thread: %s",
			  audit_errstr(-ret));
		goto unlock;
	}
	/* Queued for the flusher's next append: no file is touched here. */
	if (a->npending == a->pend_cap) {
		size_t cap = a->pend_cap ? a->pend_cap * 2 : PEND_MIN;
		size_t *end = realloc(a->pend.end, cap * sizeof(*end));

		if (!end) {
			ret = -ENOMEM;
			audit_err(err, a->path, 0, "no memory");
			goto unlock;
		}
		a->pend.end = end;
		a->pend_cap = cap;
	}
	ret = cw_buf_append(&a->pend.text, mid.data, mid.len);
	if (ret) {
		audit_err(err, a->path, 0, "no memory");
		goto unlock;
	}
	a->pend.end[a->npending++] = a->pend.text.len;
	*a->pending_tail = w;
	a->pending_tail = &w->next;
	w = NULL;
	pthread_cond_signal(&a->waiters_cond);
unlock:
	pthread_mutex_unlock(&a->lock);
out:
	free(w);
	audit_heads_free(&h);
	cw_buf_free(&mid);
	return ret;
}

void audit_stop_flusher(struct cw_audit *a)
{
	pthread_mutex_lock(&a->lock);
	a->flusher_stop = true;
	pthread_cond_broadcast(&a->waiters_cond);
	pthread_mutex_unlock(&a->lock);
	if (a->flusher_running)
		pthread_join(a->flusher, NULL);
}
