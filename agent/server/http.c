// SPDX-License-Identifier: Apache-2.0
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <sodium.h>

#include "audit/audit.h"
#include "server/grant.h"
#include "server/http.h"
#include "lib/json.h"
#include "server/mcp.h"

/* An SSE stream with nothing to say sends a comment this often, so proxies
 * keep it open and a client that went away is noticed; and at least twice
 * per idle timeout, which libmicrohttpd also applies to a response that
 * sends nothing. */
#define KEEPALIVE_MS 15000

/* libmicrohttpd's event threads (each with its own epoll): a request
 * waiting for its answer holds none of them, so a few serve every
 * connection; two, so that one busy with a request (a session's end waits
 * for its calls to stop) does not hold up the others. */
#define EVENT_THREADS 2

/*
 * libmicrohttpd is loaded when an HTTP server starts rather than at exec: it
 * brings GnuTLS and its libraries (about 2 MiB resident), which an agent
 * serving only stdio would carry for nothing. The header still checks every
 * call's types at build time.
 */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static char mhd_error[512];

static void mhd_load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(f) { "MHD_" #f, offsetof(__typeof__(mhd), f) }
		SYM(start_daemon), SYM(stop_daemon), SYM(get_daemon_info),
		SYM(get_connection_info), SYM(lookup_connection_value),
		SYM(add_response_header), SYM(queue_response),
		SYM(destroy_response), SYM(create_response_from_callback),
		SYM(create_response_from_buffer), SYM(suspend_connection),
		SYM(resume_connection), SYM(quiesce_daemon),
#undef SYM
	};
	void *lib, *f;
	size_t i;

	lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(mhd_error, sizeof(mhd_error),
			 "the HTTP transport needs %s (Debian package libmicrohttpd12): %s",
			 MHD_SONAME, dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		f = dlsym(lib, syms[i].name);
		if (!f) {
			snprintf(mhd_error, sizeof(mhd_error), "%s: %s",
				 MHD_SONAME, dlerror());
			memset(&mhd, 0, sizeof(mhd));
			return;
		}
		memcpy((char *)&mhd + syms[i].off, &f, sizeof(f));
	}
}

#define MHD_start_daemon mhd.start_daemon
#define MHD_stop_daemon mhd.stop_daemon
#define MHD_get_daemon_info mhd.get_daemon_info
#define MHD_get_connection_info mhd.get_connection_info
#define MHD_lookup_connection_value mhd.lookup_connection_value
#define MHD_add_response_header mhd.add_response_header
#define MHD_queue_response mhd.queue_response
#define MHD_destroy_response mhd.destroy_response
#define MHD_create_response_from_callback mhd.create_response_from_callback
#define MHD_create_response_from_buffer mhd.create_response_from_buffer
#define MHD_suspend_connection mhd.suspend_connection
#define MHD_resume_connection mhd.resume_connection
#define MHD_quiesce_daemon mhd.quiesce_daemon

static const char *const versions[] = { "2025-11-25", "2025-06-18",
					"2025-03-26" };

/* What the token file and the policies say, as one snapshot: requests take
 * a reference, a reload swaps it whole. */
struct config {
	int refs;			/* atomic */
	struct cw_grants *grants;
	struct cw_rules **rules;	/* per grant; NULL: the default */
};

struct session {
	struct session *next;
	int refs;			/* under sess_lock */
	bool gone;			/* deleted or expired */
	char id[33];
	char grant[CW_GRANT_NAME_MAX + 1];
	struct cw_mcp *mcp;
	int64_t last_used_us;		/* under sess_lock */
	pthread_mutex_t lock;		/* guards streams */
	struct stream *streams;		/* tools/call requests in flight */
};

/*
 * What one tools/call request gets sent, until its response. Its
 * connection is suspended while it waits for something to send, and
 * resumed by whoever gives it something (out_send, streams_end, the
 * keepalive timer): both under lock, so a resume never comes before its
 * suspend, and nothing is missed in between.
 */
struct stream {
	struct stream *next;		/* in its session's list */
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

struct cw_http {
	struct cw_engine *engine;
	struct MHD_Daemon *daemon;
	char *tokens_path;
	char *policy_path;
	char **origins;
	size_t norigins;
	size_t max_request;
	unsigned timeout_s;
	unsigned max_connections;
	unsigned max_sessions;
	int64_t session_idle_us;
	uint16_t port;
	char address[80];

	pthread_mutex_t cfg_lock;	/* guards cfg, and serializes reloads */
	struct config *cfg;

	pthread_mutex_t sess_lock;	/* guards the session list */
	struct session *sessions;
	unsigned nsessions;

	unsigned connections;		/* atomic: open client connections */

	/* Sends SSE keepalive comments: resumes idle streams. */
	pthread_t ticker;
	bool ticker_running;
	bool stopping;			/* atomic; set under sess_lock */
	pthread_cond_t tick_cond;	/* with sess_lock: stop now */
};

/* One HTTP request, from its headers to its completion. */
struct request {
	int64_t started_us;
	struct config *cfg;
	int grant;			/* index in cfg->grants */
	struct cw_buf body;
	bool too_large;
	bool sse_ok;			/* the client accepts text/event-stream */
	struct stream *st;		/* a tools/call's, once handed in */
};

/* ---- configuration ------------------------------------------------------ */

static void config_put(struct config *c)
{
	size_t i;

	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; c->rules && i < cw_grants_count(c->grants); i++)
		cw_rules_put(c->rules[i]);
	free(c->rules);
	cw_grants_free(c->grants);
	free(c);
}

static struct config *config_now(struct cw_http *h)
{
	struct config *c;

	pthread_mutex_lock(&h->cfg_lock);
	c = h->cfg;
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->cfg_lock);
	return c;
}

/* Loads the token file and each grant's policy (a file named by several
 * grants is loaded once). NULL with diag. */
static struct config *config_load(const char *tokens, struct cw_diag *diag)
{
	struct config *c = calloc(1, sizeof(*c));
	size_t i, j, n, before = diag->n;

	if (!c) {
		cw_diag_add(diag, tokens, 0, 0, "", "out of memory");
		return NULL;
	}
	c->refs = 1;
	c->grants = cw_grants_load(tokens, diag);
	if (!c->grants)
		goto fail;
	n = cw_grants_count(c->grants);
	c->rules = calloc(n + 1, sizeof(*c->rules));
	if (!c->rules) {
		cw_diag_add(diag, tokens, 0, 0, "", "out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		const char *p = cw_grants_policy(c->grants, i);

		if (!p)
			continue;
		for (j = 0; j < i; j++) {
			const char *q = cw_grants_policy(c->grants, j);

			if (q && c->rules[j] && strcmp(p, q) == 0) {
				c->rules[i] = cw_rules_get(c->rules[j]);
				break;
			}
		}
		if (!c->rules[i])
			c->rules[i] = cw_rules_load(p, diag);
	}
	if (diag->n > before)
		goto fail;
	return c;
fail:
	config_put(c);
	return NULL;
}

/* cw_mcp_rules_fn: the rules of a grant in the configuration of now. */
static struct cw_rules *rules_for(void *ctx, const char *grant)
{
	struct cw_http *h = ctx;
	struct config *c = config_now(h);
	struct cw_rules *r = NULL;
	size_t i;

	for (i = 0; i < cw_grants_count(c->grants); i++)
		if (strcmp(cw_grants_name(c->grants, i), grant) == 0) {
			r = cw_rules_get(c->rules[i]);
			break;
		}
	config_put(c);
	return r;
}

/* ---- sessions ----------------------------------------------------------- */

/* Its connection goes on with what is new; st->lock held. */
static void stream_wake(struct stream *st)
{
	if (st->suspended && st->conn) {
		st->suspended = false;
		MHD_resume_connection(st->conn);
	}
}

static void stream_put(struct stream *st)
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
static int stream_give(struct session *s, char *text, json_t *related,
		       bool final)
{
	struct stream *st, **pp;
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
		if (cw_buf_append(&st->out, "event: message\ndata: ", 21) < 0 ||
		    cw_buf_append(&st->out, text, strlen(text)) < 0 ||
		    cw_buf_append(&st->out, "\n\n", 2) < 0)
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
static void streams_end(struct session *s, json_t *id)
{
	struct stream *st, **pp = &s->streams, *ended = NULL;

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

static void session_free(struct session *s)
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

static void session_put(struct cw_http *h, struct session *s)
{
	bool free_it;

	pthread_mutex_lock(&h->sess_lock);
	free_it = --s->refs == 0;
	pthread_mutex_unlock(&h->sess_lock);
	if (free_it)
		session_free(s);
}

/* Unlinks s; sess_lock held. Its memory goes with its last reference. */
static void session_unlink(struct cw_http *h, struct session *s)
{
	struct session **pp;

	for (pp = &h->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->gone = true;
			h->nsessions--;
			break;
		}
}

/* Ends sessions idle too long and not in use; sess_lock held. Returns how
 * many. The list is short (max_sessions), so a walk per request is cheap. */
static unsigned sessions_expire(struct cw_http *h, int64_t now)
{
	struct session *s = h->sessions, *next;
	unsigned n = 0;
	bool idle;

	for (; s; s = next) {
		next = s->next;
		if (s->refs != 1 || now - s->last_used_us <= h->session_idle_us)
			continue;
		/* Its streams change under its lock (out_send, on the
		 * threads of calls and of the audit log). */
		pthread_mutex_lock(&s->lock);
		idle = !s->streams;
		pthread_mutex_unlock(&s->lock);
		if (idle) {
			session_unlink(h, s);
			if (--s->refs == 0)
				session_free(s);
			n++;
		}
	}
	return n;
}

/* The session with this id of this grant (a new reference), or NULL. */
static struct session *session_find(struct cw_http *h, const char *id,
				    const char *grant)
{
	int64_t now = cw_mono_us();
	struct session *s;
	size_t n = strlen(id);

	if (n != sizeof(s->id) - 1)
		return NULL;
	pthread_mutex_lock(&h->sess_lock);
	sessions_expire(h, now);
	for (s = h->sessions; s; s = s->next)
		if (sodium_memcmp(s->id, id, n) == 0)
			break;
	/* Another grant's session is as unknown as a made-up one. */
	if (s && strcmp(s->grant, grant) != 0)
		s = NULL;
	if (s) {
		s->refs++;
		s->last_used_us = now;
	}
	pthread_mutex_unlock(&h->sess_lock);
	return s;
}

/* A session not yet listed, or NULL (ENOMEM). */
static struct session *session_new(struct cw_http *h, const char *grant)
{
	struct session *s = calloc(1, sizeof(*s));
	unsigned char raw[16];

	if (!s)
		return NULL;
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(s->id, sizeof(s->id), raw, sizeof(raw));
	snprintf(s->grant, sizeof(s->grant), "%s", grant);
	s->mcp = cw_mcp_new(h->engine, grant, s->id);
	if (!s->mcp) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	cw_mcp_set_rules_source(s->mcp, rules_for, h);
	cw_mcp_set_out(s->mcp, &(struct cw_mcp_out){
				       .send = out_send,
				       .send_final = out_send_final,
				       .ctx = s,
				       .refusals_later = true });
	s->refs = 1;
	return s;
}

/* Lists s (taking over the caller's reference as the list's own and
 * giving the caller another); -EAGAIN when the table is full. */
static int session_add(struct cw_http *h, struct session *s)
{
	int ret = 0;

	pthread_mutex_lock(&h->sess_lock);
	if (h->nsessions >= h->max_sessions)
		sessions_expire(h, cw_mono_us());
	if (h->nsessions >= h->max_sessions) {
		ret = -EAGAIN;
	} else {
		s->next = h->sessions;
		h->sessions = s;
		h->nsessions++;
		s->refs++;
		s->last_used_us = cw_mono_us();
	}
	pthread_mutex_unlock(&h->sess_lock);
	return ret;
}

/* ---- responses ---------------------------------------------------------- */

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status,
				 const char *type, char *body,
				 const char *session_id)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body,
					    body ? MHD_RESPMEM_MUST_FREE :
						   MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"cmdwarden\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
					"POST, DELETE");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status,
				 json_t *msg, const char *session_id)
{
	char *s = msg ? cw_json_compact(msg) : NULL;

	json_decref(msg);
	if (!s)
		return MHD_NO;
	return send_body(c, status, "application/json", s, session_id);
}

/* An HTTP refusal: status plus a JSON-RPC error saying why. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status,
			      int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status,
			      int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return send_json(c, status, cw_mcp_error(NULL, code, "%s", msg), NULL);
}

static void client_address(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char host[INET6_ADDRSTRLEN] = "", port[8] = "";
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(buf, len, "unknown");
	if (!sa)
		return;
	if (getnameinfo(sa,
			sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						    sizeof(struct sockaddr_in),
			host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%s" :
							       "%s:%s",
			 host, port);
}

/* Refusals of who is asking (token, origin) are audited. The record's
 * sync is left to the next synced record: a caller without a token must
 * not be able to make the agent flush its disk at will. */
static enum MHD_Result refuse_audited(struct cw_http *h,
				      struct MHD_Connection *c,
				      unsigned status, const char *method,
				      const char *why, const char *origin)
{
	struct cw_error err;
	char remote[80];
	json_t *rec;

	client_address(c, remote, sizeof(remote));
	rec = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "event", "refused",
			"status", (int)status, "reason", why, "remote", remote,
			"method", method, "path", CW_HTTP_PATH);
	if (rec && origin)
		json_object_set_new(rec, "origin", cw_json_bytes(origin,
								 strlen(origin)));
	if (!rec ||
	    cw_engine_audit(h->engine, "access", rec, CW_AUDIT_DEFER_SYNC,
			    &err) < 0)
		fprintf(stderr, "cmdwarden serve: could not audit a refused request from %s: %s\n",
			remote, rec ? err.text : "out of memory");
	json_decref(rec);
	return refuse(c, status, CW_JSONRPC_INVALID_REQUEST, "%s", why);
}

/* ---- answers that come later ------------------------------------------ */

/*
 * A tools/call runs on a thread of the session's MCP core, which sends what
 * belongs to the call (progress, elicitation/create, then the response)
 * through the session's out channel with the call's request id; a call the
 * policy refuses is answered from the audit log's flusher thread once its
 * decision record is durable. Each such request has a stream here, listed
 * in its session under that id: as SSE, what arrives is written as it
 * comes, with keepalive comments between; as plain JSON, the response
 * alone. Between, its connection is suspended. A client that goes away
 * does not stop the call: what it would have been sent is dropped when the
 * response comes.
 */
/* MHD_ContentReaderCallback. With nothing to send yet, the connection is
 * suspended until there is (0 is then returned, and MHD asks again once it
 * is resumed). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char keepalive[] = ": keepalive\n\n";
	struct stream *st = cls;
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
 * The answer of a tools/call request, once there is something to send:
 * called when it is handed in and again at each resume of its connection.
 * A JSON answer is sent whole when the response has come; an SSE stream
 * starts when its first message (or a keepalive) is due, and is sent in
 * one piece when the response is all there is. Until then the connection
 * is suspended: no thread waits for it.
 */
static enum MHD_Result stream_respond(struct MHD_Connection *c,
				      struct stream *st)
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
			return send_body(c, MHD_HTTP_OK, "text/event-stream",
					 NULL, NULL);
		if (!body)
			return send_body(c, MHD_HTTP_NO_CONTENT, NULL, NULL,
					 NULL);
		return send_body(c, MHD_HTTP_OK,
				 st->sse ? "text/event-stream" :
					   "application/json",
				 body, NULL);
	}
	st->refs++;	/* the response's */
	pthread_mutex_unlock(&st->lock);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
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

static enum MHD_Result answer_later(struct cw_http *h,
				    struct MHD_Connection *c,
				    struct request *rq, struct session *s,
				    json_t *msg, bool sse)
{
	json_t *id = json_object_get(msg, "id"), *resp;
	struct stream *st;

	st = calloc(1, sizeof(*st));
	if (!st) {
		json_decref(msg);
		session_put(h, s);
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			      CW_JSONRPC_INTERNAL_ERROR, "out of memory");
	}
	pthread_mutex_init(&st->lock, NULL);
	st->refs = 2;	/* this request, and the session's list */
	st->sse = sse;
	st->conn = c;
	st->last_sent_us = cw_mono_us();
	/* Its own copy: the id object is also the MCP core's, on other threads,
	 * and jansson reads a reference count unguarded. */
	st->id = json_deep_copy(id);
	st->keepalive_ms = (int64_t)h->timeout_s * 1000 / 2;
	if (st->keepalive_ms > KEEPALIVE_MS)
		st->keepalive_ms = KEEPALIVE_MS;
	pthread_mutex_lock(&s->lock);
	/* cw_http_stop ends the streams listed: none may start after. */
	if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&s->lock);
		st->refs = 1;
		stream_put(st);
		json_decref(msg);
		session_put(h, s);
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			      CW_JSONRPC_INTERNAL_ERROR,
			      "the server is stopping");
	}
	st->next = s->streams;
	s->streams = st;
	pthread_mutex_unlock(&s->lock);
	rq->st = st;

	resp = cw_mcp_handle(s->mcp, msg);
	if (resp) /* answered at once (bad params, ...) */
		out_send(s, resp, id);
	json_decref(resp);
	json_decref(msg);
	session_put(h, s);
	return stream_respond(c, st);
}

/*
 * Every second, SSE streams whose connection waits with nothing sent for
 * their keepalive period are resumed to send a comment: proxies keep them
 * open, and a client that went away is noticed (a suspended connection is
 * neither timed out nor read by MHD).
 */
static void *ticker_main(void *p)
{
	struct cw_http *h = p;
	struct session *s;
	struct stream *st;
	struct timespec until;
	int64_t now;

	pthread_mutex_lock(&h->sess_lock);
	while (!h->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec++;
		pthread_cond_timedwait(&h->tick_cond, &h->sess_lock, &until);
		if (h->stopping)
			break;
		now = cw_mono_us();
		for (s = h->sessions; s; s = s->next) {
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
	pthread_mutex_unlock(&h->sess_lock);
	return NULL;
}

/* ---- requests ----------------------------------------------------------- */

static bool header_lists(const char *value, const char *want)
{
	return value && strcasestr(value, want);
}

static bool origin_allowed(const struct cw_http *h, const char *origin)
{
	size_t i;

	for (i = 0; i < h->norigins; i++)
		if (strcasecmp(origin, h->origins[i]) == 0)
			return true;
	return false;
}

static bool version_supported(const char *v)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(versions); i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return false;
}

/* The grant whose token the Authorization header carries, or -1. */
static int authenticate(const struct config *cfg, const char *auth)
{
	size_t n;

	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return -1;
	auth += 7;
	while (*auth == ' ')
		auth++;
	n = strlen(auth);
	while (n && auth[n - 1] == ' ')
		n--;
	return cw_grants_match(cfg->grants, auth, n);
}

/* Checks made on the headers alone, before any body is read. MHD_YES
 * with nothing queued means go on and read the body. */
static enum MHD_Result on_headers(struct cw_http *h, struct MHD_Connection *c,
				  struct request *rq, const char *url,
				  const char *method)
{
	const char *origin, *auth, *v, *sid, *accept;
	struct session *s;
	uint64_t clen;
	char *end;

	if (strcmp(url, CW_HTTP_PATH) != 0)
		return refuse(c, MHD_HTTP_NOT_FOUND, CW_JSONRPC_INVALID_REQUEST,
			      "no such endpoint \"%.100s\": MCP is served at " CW_HTTP_PATH,
			      url);
	if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0 &&
	    strcmp(method, "DELETE") != 0)
		return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			      CW_JSONRPC_INVALID_REQUEST,
			      "method %.20s is not allowed: use POST or DELETE",
			      method);
	/* A web page's script (DNS rebinding) carries its own origin. */
	origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_ORIGIN);
	if (origin && !origin_allowed(h, origin))
		return refuse_audited(h, c, MHD_HTTP_FORBIDDEN, method,
				      "the request's Origin is not allowed (see serve --allow-origin)",
				      origin);
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_AUTHORIZATION);
	rq->cfg = config_now(h);
	rq->grant = authenticate(rq->cfg, auth);
	if (rq->grant < 0)
		return refuse_audited(h, c, MHD_HTTP_UNAUTHORIZED, method,
				      auth ? "the bearer token is not valid" :
					     "no bearer token: send Authorization: Bearer TOKEN",
				      NULL);
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					"MCP-Protocol-Version");
	if (v && !version_supported(v))
		return refuse(c, MHD_HTTP_BAD_REQUEST,
			      CW_JSONRPC_INVALID_REQUEST,
			      "unsupported MCP-Protocol-Version \"%.40s\"; supported: 2025-11-25, 2025-06-18, 2025-03-26",
			      v);
	if (strcmp(method, "GET") == 0)
		return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			      CW_JSONRPC_INVALID_REQUEST,
			      "this server sends no messages outside the answers to requests, so it offers no GET stream");
	sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					  "Mcp-Session-Id");
	if (strcmp(method, "DELETE") == 0) {
		if (!sid)
			return refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      "DELETE needs the Mcp-Session-Id of the session to end");
		s = session_find(h, sid,
				 cw_grants_name(rq->cfg->grants, rq->grant));
		if (!s)
			return refuse(c, MHD_HTTP_NOT_FOUND,
				      CW_JSONRPC_INVALID_REQUEST,
				      "no such session: it ended or never existed");
		pthread_mutex_lock(&h->sess_lock);
		if (!s->gone) {
			session_unlink(h, s);
			s->refs--;	/* the list's reference */
		}
		pthread_mutex_unlock(&h->sess_lock);
		session_put(h, s);
		return send_body(c, MHD_HTTP_NO_CONTENT, NULL, NULL, NULL);
	}
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!v || strncasecmp(v, "application/json", 16) != 0 ||
	    (v[16] && v[16] != ';' && v[16] != ' '))
		return refuse(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			      CW_JSONRPC_INVALID_REQUEST,
			      "the body must be Content-Type: application/json");
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_ACCEPT);
	if (accept && !header_lists(accept, "application/json") &&
	    !header_lists(accept, "*/*") && !header_lists(accept, "application/*"))
		return refuse(c, MHD_HTTP_NOT_ACCEPTABLE,
			      CW_JSONRPC_INVALID_REQUEST,
			      "Accept must allow application/json (and text/event-stream for streamed answers)");
	rq->sse_ok = header_lists(accept, "text/event-stream");
	v = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (v) {
		errno = 0;
		clen = strtoull(v, &end, 10);
		if (!errno && !*end && clen > h->max_request)
			return refuse(c, MHD_HTTP_CONTENT_TOO_LARGE,
				      CW_JSONRPC_INVALID_REQUEST,
				      "request too large: %llu bytes exceeds the limit of %zu bytes",
				      (unsigned long long)clen,
				      h->max_request);
	}
	return MHD_YES;
}

static bool is_request(json_t *msg, const char *method)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return m && json_object_get(msg, "id") &&
	       (!method || strcmp(m, method) == 0);
}

static enum MHD_Result on_initialize(struct cw_http *h,
				     struct MHD_Connection *c,
				     struct request *rq, json_t *msg)
{
	enum MHD_Result ret;
	struct session *s;
	json_t *resp;

	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id")) {
		json_decref(msg);
		return refuse(c, MHD_HTTP_BAD_REQUEST,
			      CW_JSONRPC_INVALID_REQUEST,
			      "initialize starts a new session: send it without Mcp-Session-Id");
	}
	s = session_new(h, cw_grants_name(rq->cfg->grants, rq->grant));
	if (!s) {
		json_decref(msg);
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			      CW_JSONRPC_INTERNAL_ERROR, "out of memory");
	}
	resp = cw_mcp_handle(s->mcp, msg);
	json_decref(msg);
	/* Only a session that initialized is kept. */
	if (!json_object_get(resp, "result")) {
		session_put(h, s);
		return send_json(c, MHD_HTTP_OK, resp, NULL);
	}
	if (session_add(h, s) < 0) {
		session_put(h, s);
		json_decref(resp);
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			      CW_JSONRPC_INTERNAL_ERROR,
			      "too many sessions (%u): end one with DELETE, or retry later",
			      h->max_sessions);
	}
	ret = send_json(c, MHD_HTTP_OK, resp, s->id);
	session_put(h, s);
	return ret;
}

/* The whole body is here: one JSON-RPC message. */
static enum MHD_Result on_body(struct cw_http *h, struct MHD_Connection *c,
			       struct request *rq)
{
	struct session *s;
	json_error_t jerr;
	const char *sid;
	json_t *msg, *resp;

	if (rq->too_large)
		return refuse(c, MHD_HTTP_CONTENT_TOO_LARGE,
			      CW_JSONRPC_INVALID_REQUEST,
			      "request too large: more than the limit of %zu bytes",
			      h->max_request);
	msg = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			 JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!msg)
		return refuse(c, MHD_HTTP_BAD_REQUEST, CW_JSONRPC_PARSE_ERROR,
			      "parse error at line %d, column %d: %s",
			      jerr.line, jerr.column, jerr.text);
	if (!json_is_object(msg)) {
		bool batch = json_is_array(msg);

		json_decref(msg);
		return refuse(c, MHD_HTTP_BAD_REQUEST,
			      CW_JSONRPC_INVALID_REQUEST,
			      batch ? "batches are not supported: send one JSON-RPC message per request" :
				      "a JSON-RPC message must be an object");
	}
	if (is_request(msg, "initialize"))
		return on_initialize(h, c, rq, msg);
	sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	if (!sid) {
		json_decref(msg);
		return refuse(c, MHD_HTTP_BAD_REQUEST,
			      CW_JSONRPC_INVALID_REQUEST,
			      "Mcp-Session-Id is required: send initialize first and then the id it returned");
	}
	s = session_find(h, sid, cw_grants_name(rq->cfg->grants, rq->grant));
	if (!s) {
		json_decref(msg);
		return refuse(c, MHD_HTTP_NOT_FOUND, CW_JSONRPC_INVALID_REQUEST,
			      "no such session: it ended or never existed; initialize a new one");
	}
	if (is_request(msg, "tools/call"))
		return answer_later(h, c, rq, s, msg, rq->sse_ok);
	resp = cw_mcp_handle(s->mcp, msg);
	/* A cancelled request gets no response: its stream ends now. */
	if (!resp && json_is_string(json_object_get(msg, "method")) &&
	    !strcmp(json_string_value(json_object_get(msg, "method")),
		    "notifications/cancelled") &&
	    json_object_get(json_object_get(msg, "params"), "requestId"))
		streams_end(s, json_object_get(json_object_get(msg, "params"),
					       "requestId"));
	session_put(h, s);
	if (is_request(msg, NULL)) {
		json_decref(msg);
		return send_json(c, MHD_HTTP_OK, resp, NULL);
	}
	json_decref(msg);
	/* A notification or a response: accepted, unless it was invalid. */
	if (resp)
		return send_json(c, MHD_HTTP_BAD_REQUEST, resp, NULL);
	return send_body(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
}

/* MHD_AccessHandlerCallback: called once with the headers, then with each
 * piece of the body, then once more with none. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct cw_http *h = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		rq->started_us = cw_mono_us();
		rq->grant = -1;
		*con_cls = rq;
		return on_headers(h, c, rq, url, method);
	}
	if (rq->st)	/* resumed: its answer, or more of it, is here */
		return stream_respond(c, rq->st);
	if (*upload_data_size) {
		/* A client that trickles its body is cut off. */
		if (cw_mono_us() - rq->started_us >
		    (int64_t)h->timeout_s * 1000000)
			return MHD_NO;
		if (rq->body.len + *upload_data_size > h->max_request) {
			rq->too_large = true;
			cw_buf_free(&rq->body);
		} else if (!rq->too_large &&
			   cw_buf_append(&rq->body, upload_data,
					 *upload_data_size) < 0) {
			return MHD_NO;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return on_body(h, c, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!rq)
		return;
	if (rq->st) {
		pthread_mutex_lock(&rq->st->lock);
		rq->st->conn = NULL;
		rq->st->suspended = false;
		pthread_mutex_unlock(&rq->st->lock);
		stream_put(rq->st);
	}
	cw_buf_free(&rq->body);
	config_put(rq->cfg);
	free(rq);
	*con_cls = NULL;
}

/*
 * When the last client connection closes, the memory a burst of requests
 * took (calls run on threads of their own, and threads spread allocations
 * over malloc's arenas) goes back to the machine: a sandbox's memory is small,
 * and the agent should not keep its peak for the rest of the sandbox's
 * life.
 */
static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct cw_http *h = cls;

	(void)c;
	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		__atomic_add_fetch(&h->connections, 1, __ATOMIC_RELAXED);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED &&
		 __atomic_sub_fetch(&h->connections, 1, __ATOMIC_RELAXED) == 0)
		malloc_trim(0);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("cmdwarden serve: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/* ---- start, reload, stop ------------------------------------------------ */

/* [HOST:]PORT or [V6]:PORT into ss; -EINVAL with diag. */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *sl, struct cw_diag *diag)
{
	char host[64] = CW_HTTP_DEFAULT_HOST;
	const char *port = s, *colon;
	unsigned long p;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':' ||
		    (size_t)(close - s - 1) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		port = close + 2;
	} else if ((colon = strrchr(s, ':'))) {
		if ((size_t)(colon - s) >= sizeof(host))
			goto bad;
		if (colon > s)
			snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535)
		goto bad;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)p);
		*sl = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)p);
		*sl = sizeof(struct sockaddr_in6);
		return 0;
	}
bad:
	cw_diag_add(diag, "--http", 0, 0, "",
		    "\"%s\" is not an address to listen on: expected [HOST:]PORT with a numeric IPv4 host (default " CW_HTTP_DEFAULT_HOST ") or [IPv6]:PORT",
		    s);
	return -EINVAL;
}

struct cw_http *cw_http_start(struct cw_engine *e,
			      const struct cw_http_opts *o,
			      struct cw_diag *diag)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *di;
	char host[INET6_ADDRSTRLEN];
	struct cw_http *h;
	pthread_condattr_t ca;
	socklen_t sl;
	size_t i;

	if (sodium_init() < 0) {
		cw_diag_add(diag, "", 0, 0, "", "libsodium failed to start");
		return NULL;
	}
	if (parse_listen(o->listen, &ss, &sl, diag) < 0)
		return NULL;
	pthread_once(&mhd_once, mhd_load);
	if (!mhd.start_daemon) {
		cw_diag_add(diag, "--http", 0, 0, "", "%s", mhd_error);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		return NULL;
	}
	h->engine = e;
	h->max_request = o->max_request;
	h->timeout_s = o->timeout_s ? o->timeout_s : CW_HTTP_DEFAULT_TIMEOUT_S;
	h->max_connections = o->max_connections ? o->max_connections :
						  CW_HTTP_DEFAULT_MAX_CONNECTIONS;
	h->max_sessions = o->max_sessions ? o->max_sessions :
					    CW_HTTP_DEFAULT_MAX_SESSIONS;
	h->session_idle_us = (int64_t)(o->session_idle_s ? o->session_idle_s :
							   3600) * 1000000;
	pthread_mutex_init(&h->cfg_lock, NULL);
	pthread_mutex_init(&h->sess_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->tick_cond, &ca);
	pthread_condattr_destroy(&ca);
	h->tokens_path = strdup(o->tokens_path);
	h->policy_path = o->policy_path ? strdup(o->policy_path) : NULL;
	h->origins = calloc(o->norigins + 1, sizeof(char *));
	if (!h->tokens_path || (o->policy_path && !h->policy_path) ||
	    !h->origins) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	for (i = 0; i < o->norigins; i++) {
		h->origins[i] = strdup(o->origins[i]);
		if (!h->origins[i]) {
			cw_diag_add(diag, "", 0, 0, "", "out of memory");
			goto fail;
		}
		h->norigins++;
	}
	h->cfg = config_load(h->tokens_path, diag);
	if (!h->cfg)
		goto fail;
	/* Event-driven: a request waiting for its answer is suspended, so
	 * no thread waits per request. */
	h->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
			(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)EVENT_THREADS,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, h->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, h->timeout_s,
		/* Bounds the request line and headers of each connection. */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_END);
	if (!h->daemon) {
		cw_diag_add(diag, "--http", 0, 0, "",
			    "cannot listen on %s (in use, or not an address of this machine)",
			    o->listen);
		goto fail;
	}
	if (pthread_create(&h->ticker, NULL, ticker_main, h)) {
		cw_diag_add(diag, "--http", 0, 0, "",
			    "cannot start a thread: out of resources");
		goto fail;
	}
	h->ticker_running = true;
	di = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di ? di->port : 0;
	if (ss.ss_family == AF_INET6)
		snprintf(h->address, sizeof(h->address), "[%s]:%u",
			 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
				   host, sizeof(host)),
			 h->port);
	else
		snprintf(h->address, sizeof(h->address), "%s:%u",
			 inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr,
				   host, sizeof(host)),
			 h->port);
	return h;
fail:
	cw_http_stop(h);
	return NULL;
}

uint16_t cw_http_port(const struct cw_http *h)
{
	return h->port;
}

const char *cw_http_address(const struct cw_http *h)
{
	return h->address;
}

int cw_http_reload(struct cw_http *h, struct cw_diag *diag)
{
	struct cw_rules *rules;
	struct config *c = NULL, *old;
	struct cw_error err;
	char why[1200] = "";
	size_t before = diag->n;
	json_t *rec;
	int ret = 0;

	rules = cw_rules_load(h->policy_path, diag);
	if (rules)
		c = config_load(h->tokens_path, diag);
	if (!rules || !c) {
		ret = -EINVAL;
		if (diag->n > before)
			cw_error_format(&diag->items[before], why, sizeof(why));
		cw_rules_put(rules);
	} else {
		cw_engine_set_rules(h->engine, rules);
		cw_rules_put(rules);
		pthread_mutex_lock(&h->cfg_lock);
		old = h->cfg;
		h->cfg = c;
		pthread_mutex_unlock(&h->cfg_lock);
		config_put(old);
	}
	rec = json_pack("{s:s, s:b, s:s, s:s?}", "event", "reload", "ok", !ret,
			"tokens", h->tokens_path, "policy",
			h->policy_path);
	if (rec && ret)
		json_object_set_new(rec, "error", json_string(why));
	if (rec && !ret)
		json_object_set_new(rec, "grants",
				    json_integer((json_int_t)cw_grants_count(
					    c->grants)));
	if (!rec || cw_engine_audit(h->engine, "agent", rec, 0, &err) < 0)
		cw_diag_add(diag, "", 0, 0, "", "audit log: %s",
			    rec ? err.text : "out of memory");
	json_decref(rec);
	return ret;
}

void cw_http_stop(struct cw_http *h)
{
	struct session *s, *next, **held = NULL;
	size_t i, n = 0;
	int lfd = -1;

	if (!h)
		return;
	/* No new connection, and no new call: calls in progress finish and
	 * are answered first. */
	if (h->daemon)
		lfd = MHD_quiesce_daemon(h->daemon);
	pthread_mutex_lock(&h->sess_lock);
	__atomic_store_n(&h->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&h->tick_cond);
	held = calloc(h->nsessions + 1, sizeof(*held));
	for (s = h->sessions; held && s; s = s->next) {
		s->refs++;
		held[n++] = s;
	}
	pthread_mutex_unlock(&h->sess_lock);
	if (h->ticker_running)
		pthread_join(h->ticker, NULL);
	for (i = 0; i < n; i++) {
		cw_mcp_drain(held[i]->mcp);
		session_put(h, held[i]);
	}
	free(held);
	/* MHD must not be stopped with connections suspended: every request
	 * still waiting ends now. */
	pthread_mutex_lock(&h->sess_lock);
	for (s = h->sessions; s; s = s->next)
		streams_end(s, NULL);
	pthread_mutex_unlock(&h->sess_lock);
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	if (lfd >= 0)
		close(lfd);
	for (s = h->sessions; s; s = next) {
		next = s->next;
		session_free(s);
	}
	config_put(h->cfg);
	for (i = 0; i < h->norigins; i++)
		free(h->origins[i]);
	free(h->origins);
	free(h->tokens_path);
	free(h->policy_path);
	pthread_cond_destroy(&h->tick_cond);
	pthread_mutex_destroy(&h->sess_lock);
	pthread_mutex_destroy(&h->cfg_lock);
	free(h);
}
