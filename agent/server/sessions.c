// SPDX-License-Identifier: Apache-2.0
/*
 * The HTTP transport's sessions and their streams (see sessions.h). A
 * tools/call runs on a thread of the pool (workers.c) for the session's
 * MCP core, which sends what belongs to the call through the session's
 * out channel with the call's request id; a call the policy refuses is
 * answered from the audit log's flusher thread once its decision record
 * is durable. A client that goes away does not stop the call: what it
 * would have been sent is dropped when the response comes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "lib/json.h"
#include "server/grant.h"
#include "server/http_reply.h"
#include "server/sessions.h"

/* An SSE stream with nothing to say sends a comment this often, so proxies
 * keep it open and a client that went away is noticed; and at least twice
 * per idle timeout, which libmicrohttpd also applies to a response that
 * sends nothing. */
#define KEEPALIVE_MS 15000

/* A session id is this many random bytes, in hex. */
#define SESSION_ID_BYTES 16
/* How much of an SSE stream libmicrohttpd asks for at a time. */
#define SSE_BLOCK_SIZE 16384

#define SSE_MESSAGE "event: message\ndata: "
#define SSE_END "\n\n"
#define SSE_KEEPALIVE ": keepalive\n\n"

struct cw_http_session {
	struct cw_http_session *next;
	int refs;			/* under the table's lock */
	bool gone;			/* deleted or expired */
	char id[2 * SESSION_ID_BYTES + 1];
	char grant[CW_GRANT_NAME_MAX + 1];
	struct cw_mcp *mcp;
	int64_t last_used_us;		/* under the table's lock */
	pthread_mutex_t lock;		/* guards streams */
	struct cw_http_stream *streams;	/* tools/call requests in flight */
};

/*
 * What one tools/call request gets sent, until its response. Its
 * connection is suspended while it waits for something to send, and
 * resumed by whoever gives it something (out_send, streams_end, the
 * keepalive timer): both under lock, so a resume never comes before its
 * suspend, and nothing is missed in between.
 */
struct cw_http_stream {
	struct cw_http_stream *next;	/* in its session's list */
	pthread_mutex_t lock;
	int refs;			/* under lock */
	json_t *id;			/* the request's id */
	bool sse;			/* else JSON: the response only */
	bool done;			/* the response is in out */
	struct MHD_Connection *conn;	/* NULL once the request completed */
	bool suspended;			/* conn waits for a resume */
	bool keepalive_due;		/* an SSE comment is to be sent */
	int64_t last_sent_us;		/* when SSE bytes last went out */
	int64_t keepalive_ms;
	struct cw_buf out;		/* bytes not yet sent start at sent */
	size_t sent;
};

struct cw_http_sessions {
	struct cw_engine *engine;
	struct cw_http_config *cfg;
	unsigned max;
	int64_t idle_us;
	int64_t keepalive_ms;

	pthread_mutex_t lock;		/* guards the session list */
	struct cw_http_session *list;
	unsigned n;

	/* Sends SSE keepalive comments: resumes idle streams. */
	pthread_t ticker;
	bool ticker_running;
	bool stopping;			/* atomic; set under lock */
	pthread_cond_t tick_cond;	/* with lock: stop now */
};

/* ---- streams ------------------------------------------------------------ */

/* Its connection goes on with what is new; st->lock held. */
static void stream_wake(struct cw_http_stream *st)
{
	if (st->suspended && st->conn) {
		st->suspended = false;
		MHD_resume_connection(st->conn);
	}
}

static void stream_put(struct cw_http_stream *st)
{
	bool free_it;

	pthread_mutex_lock(&st->lock);
	free_it = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!free_it)
		return;
	json_decref(st->id);
	cw_buf_free(&st->out);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Gives text (a serialized message, ours to free) to the stream of the
 * request whose id is related; final: it is that request's response. */
static int stream_give(struct cw_http_session *s, char *text, json_t *related,
		       bool final)
{
	struct cw_http_stream *st, **pp;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->streams; *pp; pp = &(*pp)->next)
		if (related && json_equal((*pp)->id, related))
			break;
	st = *pp;
	if (!st || (!st->sse && !final)) {
		pthread_mutex_unlock(&s->lock);
		free(text);
		return -EPIPE;
	}
	if (final)
		*pp = st->next;	/* the list's reference moves to us */
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&st->lock);
	if (!text) {
		ret = -ENOMEM;
	} else if (st->sse) {
		if (cw_buf_append(&st->out, SSE_MESSAGE,
				  strlen(SSE_MESSAGE)) < 0 ||
		    cw_buf_append(&st->out, text, strlen(text)) < 0 ||
		    cw_buf_append(&st->out, SSE_END, strlen(SSE_END)) < 0)
			ret = -ENOMEM;
	} else if (!st->out.len) {
		/* the whole body: the buffer is taken over as it is */
		free(st->out.data);
		st->out.data = text;
		st->out.len = strlen(text);
		st->out.cap = st->out.len + 1;
		text = NULL;
	} else if (cw_buf_append(&st->out, text, strlen(text)) < 0) {
		ret = -ENOMEM;
	}
	if (final)
		st->done = true;
	stream_wake(st);
	pthread_mutex_unlock(&st->lock);
	free(text);
	if (final)
		stream_put(st);
	return ret;
}

/* cw_mcp_out.send: a message for the request whose id is related. Only an
 * SSE stream can carry requests and notifications; with none to carry it,
 * the MCP core learns it could not be sent (an approval it cannot ask
 * for is denied). */
static int out_send(void *ctx, json_t *msg, json_t *related)
{
	bool final = !json_object_get(msg, "method") && related &&
		     json_equal(json_object_get(msg, "id"), related);

	return stream_give(ctx, cw_json_compact(msg), related, final);
}

/* cw_mcp_out.send_final: a response serialized by the thread that decided
 * it, so that telling it (on the audit log's thread) is cheap. */
static int out_send_final(void *ctx, char *text, json_t *related)
{
	return stream_give(ctx, text, related, true);
}

/* Ends the streams of requests that will get no response: cancelled ones
 * (the one with this id), or all when id is NULL. SSE streams just end; a
 * JSON waiter answers with no content. */
static void streams_end(struct cw_http_session *s, json_t *id)
{
	struct cw_http_stream *st, **pp = &s->streams, *ended = NULL;

	pthread_mutex_lock(&s->lock);
	while ((st = *pp)) {
		if (id && !json_equal(st->id, id)) {
			pp = &st->next;
			continue;
		}
		*pp = st->next;
		st->next = ended;
		ended = st;
	}
	pthread_mutex_unlock(&s->lock);
	while ((st = ended)) {
		ended = st->next;
		pthread_mutex_lock(&st->lock);
		st->done = true;
		stream_wake(st);
		pthread_mutex_unlock(&st->lock);
		stream_put(st);
	}
}

int cw_http_session_send(struct cw_http_session *s, json_t *msg,
			 json_t *related)
{
	return out_send(s, msg, related);
}

void cw_http_session_cancelled(struct cw_http_session *s, json_t *id)
{
	streams_end(s, id);
}

struct cw_http_stream *cw_http_stream_open(struct cw_http_sessions *t,
					   struct cw_http_session *s,
					   struct MHD_Connection *c,
					   json_t *id, bool sse)
{
	struct cw_http_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	st->refs = 2;	/* the caller's, and the session's list */
	st->sse = sse;
	st->conn = c;
	st->last_sent_us = cw_mono_us();
	/* Its own copy: the id object is also the MCP core's, on other threads,
	 * and jansson reads a reference count unguarded. */
	st->id = json_deep_copy(id);
	st->keepalive_ms = t->keepalive_ms;
	pthread_mutex_lock(&s->lock);
	/* cw_http_sessions_stop ends the streams listed: none may start
	 * after. */
	if (__atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&s->lock);
		st->refs = 1;
		stream_put(st);
		errno = ESHUTDOWN;
		return NULL;
	}
	st->next = s->streams;
	s->streams = st;
	pthread_mutex_unlock(&s->lock);
	return st;
}

/* MHD_ContentReaderCallback. With nothing to send yet, the connection is
 * suspended until there is (0 is then returned, and MHD asks again once it
 * is resumed). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char keepalive[] = SSE_KEEPALIVE;
	struct cw_http_stream *st = cls;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&st->lock);
	if (st->out.len == st->sent && !st->done) {
		if (st->keepalive_due) {
			st->keepalive_due = false;
			st->last_sent_us = cw_mono_us();
			pthread_mutex_unlock(&st->lock);
			n = (ssize_t)(sizeof(keepalive) - 1 < max ?
					      sizeof(keepalive) - 1 : max);
			memcpy(buf, keepalive, (size_t)n);
			return n;
		}
		if (!st->conn) {
			pthread_mutex_unlock(&st->lock);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		st->suspended = true;
		MHD_suspend_connection(st->conn);
		pthread_mutex_unlock(&st->lock);
		return 0;
	}
	if (st->out.len == st->sent) {
		pthread_mutex_unlock(&st->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = (ssize_t)(st->out.len - st->sent < max ? st->out.len - st->sent :
						      max);
	memcpy(buf, st->out.data + st->sent, (size_t)n);
	st->sent += (size_t)n;
	if (st->sent == st->out.len)
		st->out.len = st->sent = 0;
	st->last_sent_us = cw_mono_us();
	st->keepalive_due = false;	/* this does as well */
	pthread_mutex_unlock(&st->lock);
	return n;
}

static void stream_release(void *cls)
{
	stream_put(cls);
}

/*
 * A JSON answer is sent whole when the response has come; an SSE stream
 * starts when its first message (or a keepalive) is due, and is sent in
 * one piece when the response is all there is.
 */
enum MHD_Result cw_http_stream_respond(struct MHD_Connection *c,
				       struct cw_http_stream *st)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *body;

	pthread_mutex_lock(&st->lock);
	if (!st->done && (!st->sse || (st->out.len == st->sent &&
				       !st->keepalive_due))) {
		st->suspended = true;
		MHD_suspend_connection(c);
		pthread_mutex_unlock(&st->lock);
		return MHD_YES;
	}
	if (st->done) {
		/* The response is the whole body: hand the buffer over (it
		 * is kept terminated). A cancelled request has none. */
		body = st->out.len ? st->out.data : NULL;
		if (body) {
			st->out.data = NULL;
			st->out.len = st->out.cap = 0;
		}
		pthread_mutex_unlock(&st->lock);
		if (!body && st->sse)
			return cw_http_send_body(c, MHD_HTTP_OK,
						 "text/event-stream", NULL,
						 NULL);
		if (!body)
			return cw_http_send_body(c, MHD_HTTP_NO_CONTENT, NULL,
						 NULL, NULL);
		return cw_http_send_body(c, MHD_HTTP_OK,
					 st->sse ? "text/event-stream" :
						   "application/json",
					 body, NULL);
	}
	st->refs++;	/* the response's */
	pthread_mutex_unlock(&st->lock);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK_SIZE,
					      stream_read, st, stream_release);
	if (!r) {
		stream_put(st);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

void cw_http_stream_closed(struct cw_http_stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->conn = NULL;
	st->suspended = false;
	pthread_mutex_unlock(&st->lock);
	stream_put(st);
}

/* ---- sessions ----------------------------------------------------------- */

static void session_free(struct cw_http_session *s)
{
	/* Calls still running are ended: their client has gone. Cancelled
	 * calls are answered with nothing, so their streams end here. */
	cw_mcp_cancel_all(s->mcp);
	cw_mcp_end_input(s->mcp);
	cw_mcp_free(s->mcp);
	streams_end(s, NULL);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void cw_http_session_put(struct cw_http_sessions *t,
			 struct cw_http_session *s)
{
	bool free_it;

	pthread_mutex_lock(&t->lock);
	free_it = --s->refs == 0;
	pthread_mutex_unlock(&t->lock);
	if (free_it)
		session_free(s);
}

/* Unlinks s; the table's lock held. Its memory goes with its last
 * reference. */
static void session_unlink(struct cw_http_sessions *t,
			   struct cw_http_session *s)
{
	struct cw_http_session **pp;

	for (pp = &t->list; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->gone = true;
			t->n--;
			break;
		}
}

void cw_http_session_delete(struct cw_http_sessions *t,
			    struct cw_http_session *s)
{
	pthread_mutex_lock(&t->lock);
	if (!s->gone) {
		session_unlink(t, s);
		s->refs--;	/* the list's reference */
	}
	pthread_mutex_unlock(&t->lock);
	cw_http_session_put(t, s);
}

/* Ends sessions idle too long and not in use; the table's lock held.
 * Returns how many. The list is short (max), so a walk per request is
 * cheap. */
static unsigned sessions_expire(struct cw_http_sessions *t, int64_t now)
{
	struct cw_http_session *s = t->list, *next;
	unsigned n = 0;
	bool idle;

	for (; s; s = next) {
		next = s->next;
		if (s->refs != 1 || now - s->last_used_us <= t->idle_us)
			continue;
		/* Its streams change under its lock (out_send, on the
		 * threads of calls and of the audit log). */
		pthread_mutex_lock(&s->lock);
		idle = !s->streams;
		pthread_mutex_unlock(&s->lock);
		if (idle) {
			session_unlink(t, s);
			if (--s->refs == 0)
				session_free(s);
			n++;
		}
	}
	return n;
}

struct cw_http_session *cw_http_session_find(struct cw_http_sessions *t,
					     const char *id,
					     const char *grant)
{
	int64_t now = cw_mono_us();
	struct cw_http_session *s;
	size_t n = strlen(id);

	if (n != sizeof(s->id) - 1)
		return NULL;
	pthread_mutex_lock(&t->lock);
	sessions_expire(t, now);
	for (s = t->list; s; s = s->next)
		if (sodium_memcmp(s->id, id, n) == 0)
			break;
	/* Another grant's session is as unknown as a made-up one. */
	if (s && strcmp(s->grant, grant) != 0)
		s = NULL;
	if (s) {
		s->refs++;
		s->last_used_us = now;
	}
	pthread_mutex_unlock(&t->lock);
	return s;
}

struct cw_http_session *cw_http_session_new(struct cw_http_sessions *t,
					    const char *grant)
{
	struct cw_http_session *s = calloc(1, sizeof(*s));
	unsigned char raw[SESSION_ID_BYTES];

	if (!s)
		return NULL;
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(s->id, sizeof(s->id), raw, sizeof(raw));
	snprintf(s->grant, sizeof(s->grant), "%s", grant);
	s->mcp = cw_mcp_new(t->engine, grant, s->id);
	if (!s->mcp) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	cw_mcp_set_rules_source(s->mcp, cw_http_config_rules, t->cfg);
	cw_mcp_set_out(s->mcp, &(struct cw_mcp_out){
				       .send = out_send,
				       .send_final = out_send_final,
				       .ctx = s,
				       .refusals_later = true });
	s->refs = 1;
	return s;
}

int cw_http_session_add(struct cw_http_sessions *t, struct cw_http_session *s)
{
	int ret = 0;

	pthread_mutex_lock(&t->lock);
	if (t->n >= t->max)
		sessions_expire(t, cw_mono_us());
	if (t->n >= t->max) {
		ret = -EAGAIN;
	} else {
		s->next = t->list;
		t->list = s;
		t->n++;
		s->refs++;
		s->last_used_us = cw_mono_us();
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

const char *cw_http_session_id(const struct cw_http_session *s)
{
	return s->id;
}

struct cw_mcp *cw_http_session_mcp(struct cw_http_session *s)
{
	return s->mcp;
}

/* ---- the table ---------------------------------------------------------- */

/*
 * Every second, SSE streams whose connection waits with nothing sent for
 * their keepalive period are resumed to send a comment: proxies keep them
 * open, and a client that went away is noticed (a suspended connection is
 * neither timed out nor read by MHD).
 */
static void *ticker_main(void *p)
{
	struct cw_http_sessions *t = p;
	struct cw_http_session *s;
	struct cw_http_stream *st;
	struct timespec until;
	int64_t now;

	pthread_mutex_lock(&t->lock);
	while (!t->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec++;
		pthread_cond_timedwait(&t->tick_cond, &t->lock, &until);
		if (t->stopping)
			break;
		now = cw_mono_us();
		for (s = t->list; s; s = s->next) {
			pthread_mutex_lock(&s->lock);
			for (st = s->streams; st; st = st->next) {
				pthread_mutex_lock(&st->lock);
				if (st->sse && st->suspended && !st->done &&
				    now - st->last_sent_us >=
					    st->keepalive_ms * 1000) {
					st->keepalive_due = true;
					stream_wake(st);
				}
				pthread_mutex_unlock(&st->lock);
			}
			pthread_mutex_unlock(&s->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct cw_http_sessions *cw_http_sessions_new(struct cw_engine *e,
					      struct cw_http_config *cfg,
					      unsigned max, unsigned idle_s,
					      unsigned timeout_s)
{
	struct cw_http_sessions *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t)
		return NULL;
	t->engine = e;
	t->cfg = cfg;
	t->max = max;
	t->idle_us = (int64_t)idle_s * 1000000;
	t->keepalive_ms = (int64_t)timeout_s * 1000 / 2;
	if (t->keepalive_ms > KEEPALIVE_MS)
		t->keepalive_ms = KEEPALIVE_MS;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->tick_cond, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

int cw_http_sessions_start(struct cw_http_sessions *t)
{
	int ret = -pthread_create(&t->ticker, NULL, ticker_main, t);

	if (!ret)
		t->ticker_running = true;
	return ret;
}

void cw_http_sessions_stop(struct cw_http_sessions *t)
{
	struct cw_http_session *s, **held = NULL;
	size_t i, n = 0;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&t->tick_cond);
	held = calloc(t->n + 1, sizeof(*held));
	for (s = t->list; held && s; s = s->next) {
		s->refs++;
		held[n++] = s;
	}
	pthread_mutex_unlock(&t->lock);
	if (t->ticker_running)
		pthread_join(t->ticker, NULL);
	t->ticker_running = false;
	for (i = 0; i < n; i++) {
		cw_mcp_drain(held[i]->mcp);
		cw_http_session_put(t, held[i]);
	}
	free(held);
	/* MHD must not be stopped with connections suspended: every request
	 * still waiting ends now. */
	pthread_mutex_lock(&t->lock);
	for (s = t->list; s; s = s->next)
		streams_end(s, NULL);
	pthread_mutex_unlock(&t->lock);
}

void cw_http_sessions_free(struct cw_http_sessions *t)
{
	struct cw_http_session *s, *next;

	if (!t)
		return;
	for (s = t->list; s; s = next) {
		next = s->next;
		session_free(s);
	}
	pthread_cond_destroy(&t->tick_cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
