// SPDX-License-Identifier: Apache-2.0
/*
 * The Streamable HTTP transport's request routing (see http.h): each
 * request's headers are checked (http_headers.c), its body read and
 * parsed, and the message goes to its session (sessions.c) or opens one;
 * a tools/call is answered later through its stream. Also the server's
 * start, reload (http_config.c) and stop. libmicrohttpd is reached through
 * mhd.h, which loads it when the server starts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/json.h"
#include "server/http.h"
#include "server/http_config.h"
#include "server/http_connections.h"
#include "server/http_headers.h"
#include "server/http_reply.h"
#include "server/mcp.h"
#include "server/mhd.h"
#include "server/request_id.h"
#include "server/sessions.h"

/* libmicrohttpd's event threads (each with its own epoll): a request
 * waiting for its answer holds none of them, so a few serve every
 * connection; two, so that one busy with a request (a session's end waits
 * for its calls to stop) does not hold up the others. */
#define EVENT_THREADS 2

/* Bounds the request line and headers of each connection. */
#define CONNECTION_MEMORY_LIMIT 32768

/* The printable address listened on: "[v6]:port". */
#define ADDRESS_MAX 80

/* Longest host of --http, brackets of an IPv6 host left out. */
#define LISTEN_HOST_MAX 64

struct cw_http {
	struct cw_engine *engine;
	struct MHD_Daemon *daemon;
	char **origins;
	size_t norigins;
	size_t max_request;
	unsigned timeout_s;
	unsigned max_connections;
	unsigned max_sessions;
	uint16_t port;
	char address[ADDRESS_MAX];

	struct cw_http_config *config;
	struct cw_http_sessions *sessions;
	struct cw_http_conns *conns;

	unsigned connections;		/* atomic: open client connections */
};

/* One HTTP request, from its headers to its completion. */
struct request {
	int64_t started_us;
	struct cw_http_snapshot *cfg;
	int grant;			/* index in cfg's grants */
	const char *grant_name;		/* cfg's, once grant is known */
	struct cw_buf body;
	bool too_large;
	bool sse_ok;			/* the client accepts text/event-stream */
	struct cw_http_stream *st;	/* a tools/call's, once handed in */
};

/* ---- answers that come later ------------------------------------------ */

/* A tools/call: its stream is listed under its id before the MCP core
 * sees it, so that nothing the call sends can miss it. */
static enum MHD_Result answer_later(struct cw_http *h,
				    struct MHD_Connection *c,
				    struct request *rq,
				    struct cw_http_session *s, json_t *msg,
				    bool sse)
{
	json_t *id = json_object_get(msg, "id"), *resp;
	struct cw_http_stream *st;

	st = cw_http_stream_open(h->sessions, s, c, id, sse);
	if (!st) {
		bool stopping = errno == ESHUTDOWN;

		json_decref(msg);
		cw_http_session_put(h->sessions, s);
		return cw_http_refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				      CW_JSONRPC_INTERNAL_ERROR, "%s",
				      stopping ? "the server is stopping" :
						 "out of memory");
	}
	rq->st = st;

	resp = cw_mcp_handle(cw_http_session_mcp(s), msg);
	if (resp) /* answered at once (bad params, ...) */
		cw_http_session_send(s, resp, id);
	json_decref(resp);
	json_decref(msg);
	cw_http_session_put(h->sessions, s);
	return cw_http_stream_respond(c, st);
}

/* ---- requests ----------------------------------------------------------- */

/* DELETE: ends the session its Mcp-Session-Id names. */
static enum MHD_Result on_delete(struct cw_http *h, struct MHD_Connection *c,
				 struct request *rq, const char *sid)
{
	struct cw_http_session *s;

	if (!sid)
		return cw_http_refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      "DELETE needs the Mcp-Session-Id of the session to end");
	s = cw_http_session_find(h->sessions, sid, rq->grant_name);
	if (!s)
		return cw_http_refuse(c, MHD_HTTP_NOT_FOUND,
				      CW_JSONRPC_INVALID_REQUEST,
				      "no such session: it ended or never existed");
	cw_http_session_delete(h->sessions, s);
	return cw_http_send_body(c, MHD_HTTP_NO_CONTENT, NULL, NULL, NULL);
}

/* A refusal of who is asking: audited on its own, or counted once the
 * interval's share of such records is spent (http_connections.h). */
static enum MHD_Result refuse_who(struct cw_http *h, struct MHD_Connection *c,
				  unsigned status, const char *method,
				  const char *why, const char *origin)
{
	if (!cw_http_conns_refusal_recorded(h->conns, status))
		return cw_http_refuse(c, status, CW_JSONRPC_INVALID_REQUEST,
				      "%s", why);
	return cw_http_refuse_audited(h->engine, c, status, method, why,
				      origin);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Checks made on the headers alone, before any body is read, in this
 * order: the endpoint, the method, who is asking (Origin, then the bearer
 * token: both refusals audited), the protocol version, then what the
 * method needs. MHD_YES with nothing queued means go on and read the
 * body. */
static enum MHD_Result on_headers(struct cw_http *h, struct MHD_Connection *c,
				  struct request *rq, const char *url,
				  const char *method)
{
	const char *origin, *auth, *v, *accept;
	const union MHD_ConnectionInfo *ci;
	uint64_t clen;

	if (strcmp(url, CW_HTTP_PATH) != 0)
		return cw_http_refuse(c, MHD_HTTP_NOT_FOUND,
				      CW_JSONRPC_INVALID_REQUEST,
				      "no such endpoint \"%.100s\": MCP is served at " CW_HTTP_PATH,
				      url);
	if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0 &&
	    strcmp(method, "DELETE") != 0)
		return cw_http_refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				      CW_JSONRPC_INVALID_REQUEST,
				      "method %.20s is not allowed: use POST or DELETE",
				      method);
	/* A web page's script (DNS rebinding) carries its own origin. */
	origin = header(c, MHD_HTTP_HEADER_ORIGIN);
	if (origin && !cw_http_origin_allowed((const char *const *)h->origins,
					      h->norigins, origin))
		return refuse_who(h, c, MHD_HTTP_FORBIDDEN, method,
				  "the request's Origin is not allowed (see serve --allow-origin)",
				  origin);
	auth = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
	rq->cfg = cw_http_config_now(h->config);
	rq->grant = cw_http_authenticate(cw_http_snapshot_grants(rq->cfg),
					 auth);
	if (rq->grant < 0)
		return refuse_who(h, c, MHD_HTTP_UNAUTHORIZED, method,
				  auth ? "the bearer token is not valid" :
					 "no bearer token: send Authorization: Bearer TOKEN",
				  NULL);
	rq->grant_name = cw_grants_name(cw_http_snapshot_grants(rq->cfg),
					(size_t)rq->grant);
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	cw_http_conns_authenticated(h->conns, ci ? ci->socket_context : NULL);
	v = header(c, CW_HTTP_VERSION_HEADER);
	if (v && !cw_http_version_supported(v))
		return cw_http_refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      "unsupported MCP-Protocol-Version \"%.40s\"; supported: " CW_HTTP_VERSIONS,
				      v);
	if (strcmp(method, "GET") == 0)
		return cw_http_refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				      CW_JSONRPC_INVALID_REQUEST,
				      "this server sends no messages outside the answers to requests, so it offers no GET stream");
	if (strcmp(method, "DELETE") == 0)
		return on_delete(h, c, rq,
				 header(c, CW_HTTP_SESSION_ID_HEADER));
	if (!cw_http_json_content(header(c, MHD_HTTP_HEADER_CONTENT_TYPE)))
		return cw_http_refuse(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
				      CW_JSONRPC_INVALID_REQUEST,
				      "the body must be Content-Type: application/json");
	accept = header(c, MHD_HTTP_HEADER_ACCEPT);
	if (!cw_http_accepts_json(accept))
		return cw_http_refuse(c, MHD_HTTP_NOT_ACCEPTABLE,
				      CW_JSONRPC_INVALID_REQUEST,
				      "Accept must allow application/json (and text/event-stream for streamed answers)");
	rq->sse_ok = cw_http_accepts_sse(accept);
	if (cw_http_length_over(header(c, MHD_HTTP_HEADER_CONTENT_LENGTH),
				h->max_request, &clen))
		return cw_http_refuse(c, MHD_HTTP_CONTENT_TOO_LARGE,
				      CW_JSONRPC_INVALID_REQUEST,
				      "request too large: %llu bytes exceeds the limit of %zu bytes",
				      (unsigned long long)clen,
				      h->max_request);
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
	struct cw_http_session *s;
	enum MHD_Result ret;
	json_t *resp;

	if (header(c, CW_HTTP_SESSION_ID_HEADER)) {
		json_decref(msg);
		return cw_http_refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      "initialize starts a new session: send it without Mcp-Session-Id");
	}
	s = cw_http_session_new(h->sessions, rq->grant_name);
	if (!s) {
		json_decref(msg);
		return cw_http_refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				      CW_JSONRPC_INTERNAL_ERROR,
				      "out of memory");
	}
	resp = cw_mcp_handle(cw_http_session_mcp(s), msg);
	json_decref(msg);
	/* Only a session that initialized is kept. */
	if (!json_object_get(resp, "result")) {
		cw_http_session_put(h->sessions, s);
		return cw_http_send_json(c, MHD_HTTP_OK, resp, NULL);
	}
	if (cw_http_session_add(h->sessions, s) < 0) {
		cw_http_session_put(h->sessions, s);
		json_decref(resp);
		return cw_http_refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				      CW_JSONRPC_INTERNAL_ERROR,
				      "too many sessions (%u): end one with DELETE, or retry later",
				      h->max_sessions);
	}
	ret = cw_http_send_json(c, MHD_HTTP_OK, resp, cw_http_session_id(s));
	cw_http_session_put(h->sessions, s);
	return ret;
}

/* The message is notifications/cancelled: the id of the request it
 * cancels, else NULL. */
static json_t *cancelled_id(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	if (!m || strcmp(m, "notifications/cancelled") != 0)
		return NULL;
	return json_object_get(json_object_get(msg, "params"), "requestId");
}

/* The whole body is here: one JSON-RPC message. */
static enum MHD_Result on_body(struct cw_http *h, struct MHD_Connection *c,
			       struct request *rq)
{
	struct cw_http_session *s;
	json_error_t jerr;
	const char *sid;
	json_t *msg, *resp, *cancelled;

	if (rq->too_large)
		return cw_http_refuse(c, MHD_HTTP_CONTENT_TOO_LARGE,
				      CW_JSONRPC_INVALID_REQUEST,
				      "request too large: more than the limit of %zu bytes",
				      h->max_request);
	msg = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			 JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!msg) {
		json_t *id = cw_request_id(rq->body.data, rq->body.len);

		resp = cw_mcp_error(id, CW_JSONRPC_PARSE_ERROR,
				    "parse error at line %d, column %d: %s",
				    jerr.line, jerr.column, jerr.text);
		json_decref(id);
		return cw_http_send_json(c, MHD_HTTP_BAD_REQUEST, resp, NULL);
	}
	if (!json_is_object(msg)) {
		bool batch = json_is_array(msg);

		json_decref(msg);
		return cw_http_refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      batch ? "batches are not supported: send one JSON-RPC message per request" :
					      "a JSON-RPC message must be an object");
	}
	if (is_request(msg, "initialize"))
		return on_initialize(h, c, rq, msg);
	sid = header(c, CW_HTTP_SESSION_ID_HEADER);
	if (!sid) {
		json_decref(msg);
		return cw_http_refuse(c, MHD_HTTP_BAD_REQUEST,
				      CW_JSONRPC_INVALID_REQUEST,
				      "Mcp-Session-Id is required: send initialize first and then the id it returned");
	}
	s = cw_http_session_find(h->sessions, sid, rq->grant_name);
	if (!s) {
		json_decref(msg);
		return cw_http_refuse(c, MHD_HTTP_NOT_FOUND,
				      CW_JSONRPC_INVALID_REQUEST,
				      "no such session: it ended or never existed; initialize a new one");
	}
	if (is_request(msg, "tools/call"))
		return answer_later(h, c, rq, s, msg, rq->sse_ok);
	resp = cw_mcp_handle(cw_http_session_mcp(s), msg);
	/* A cancelled request gets no response: its stream ends now. */
	cancelled = cancelled_id(msg);
	if (!resp && cancelled)
		cw_http_session_cancelled(s, cancelled);
	cw_http_session_put(h->sessions, s);
	if (is_request(msg, NULL)) {
		json_decref(msg);
		return cw_http_send_json(c, MHD_HTTP_OK, resp, NULL);
	}
	json_decref(msg);
	/* A notification or a response: accepted, unless it was invalid. */
	if (resp)
		return cw_http_send_json(c, MHD_HTTP_BAD_REQUEST, resp, NULL);
	return cw_http_send_body(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
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
		return cw_http_stream_respond(c, rq->st);
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
	if (rq->st)
		cw_http_stream_closed(rq->st);
	cw_buf_free(&rq->body);
	cw_http_snapshot_put(rq->cfg);
	free(rq);
	*con_cls = NULL;
}

/*
 * Each connection is counted by peer from its accept to its close
 * (http_connections.c), which may close others to make room. When the
 * last one closes, the memory a burst of requests took (calls run on the
 * threads of a pool, workers.c, and threads spread allocations over
 * malloc's arenas) goes back to the machine: a sandbox's memory is small,
 * and the agent should not keep its peak for the rest of the sandbox's
 * life.
 */
static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *fd, *addr;
	struct cw_http *h = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		__atomic_add_fetch(&h->connections, 1, __ATOMIC_RELAXED);
		fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = MHD_get_connection_info(c,
					       MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (fd)
			*socket_context = cw_http_conns_opened(
				h->conns, fd->connect_fd,
				addr ? addr->client_addr : NULL);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		cw_http_conns_closed(h->conns, *socket_context);
		*socket_context = NULL;
		if (__atomic_sub_fetch(&h->connections, 1,
				       __ATOMIC_RELAXED) == 0)
			malloc_trim(0);
	}
}

/*
 * libmicrohttpd says a line for each connection that ends oddly, as every
 * connection closed for its peer's limit or the header deadline does: at
 * most LOG_BURST lines per LOG_WINDOW_S seconds reach stderr, so a caller
 * cannot flood the agent's log; the rest are counted.
 */
#define LOG_BURST 10
#define LOG_WINDOW_S 10

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int64_t window_us;
	static unsigned said, suppressed;
	int64_t now = cw_mono_us();

	(void)cls;
	pthread_mutex_lock(&lock);
	if (now - window_us >= LOG_WINDOW_S * 1000000LL) {
		if (suppressed)
			fprintf(stderr, "cmdwarden serve: http: %u more messages in %d s not shown\n",
				suppressed, LOG_WINDOW_S);
		window_us = now;
		said = suppressed = 0;
	}
	if (said < LOG_BURST) {
		said++;
		fputs("cmdwarden serve: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	} else {
		suppressed++;
	}
	pthread_mutex_unlock(&lock);
}

/* ---- start, reload, stop ------------------------------------------------ */

/* [HOST:]PORT or [V6]:PORT into ss; -EINVAL with diag. */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *sl, struct cw_diag *diag)
{
	char host[LISTEN_HOST_MAX] = CW_HTTP_DEFAULT_HOST;
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

/* Copies the allowed origins; -ENOMEM. */
static int copy_origins(struct cw_http *h, const struct cw_http_opts *o)
{
	size_t i;

	h->origins = calloc(o->norigins + 1, sizeof(char *));
	if (!h->origins)
		return -ENOMEM;
	for (i = 0; i < o->norigins; i++) {
		h->origins[i] = strdup(o->origins[i]);
		if (!h->origins[i])
			return -ENOMEM;
		h->norigins++;
	}
	return 0;
}

/* Event-driven: a request waiting for its answer is suspended, so no
 * thread waits per request. */
static struct MHD_Daemon *daemon_start(struct cw_http *h,
				       const struct sockaddr_storage *ss)
{
	return MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
			(ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)EVENT_THREADS,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
		MHD_OPTION_CONNECTION_LIMIT, h->max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, h->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)CONNECTION_MEMORY_LIMIT,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_END);
}

/* h->address: the host of ss and the port bound. */
static void format_address(struct cw_http *h,
			   const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6)
		snprintf(h->address, sizeof(h->address), "[%s]:%u",
			 inet_ntop(AF_INET6,
				   &((const struct sockaddr_in6 *)ss)->sin6_addr,
				   host, sizeof(host)),
			 h->port);
	else
		snprintf(h->address, sizeof(h->address), "%s:%u",
			 inet_ntop(AF_INET,
				   &((const struct sockaddr_in *)ss)->sin_addr,
				   host, sizeof(host)),
			 h->port);
}

struct cw_http *cw_http_start(struct cw_engine *e,
			      const struct cw_http_opts *o,
			      struct cw_diag *diag)
{
	const union MHD_DaemonInfo *di;
	struct sockaddr_storage ss;
	const char *why;
	struct cw_http *h;
	socklen_t sl;

	if (sodium_init() < 0) {
		cw_diag_add(diag, "", 0, 0, "", "libsodium failed to start");
		return NULL;
	}
	if (parse_listen(o->listen, &ss, &sl, diag) < 0)
		return NULL;
	if (cw_mhd_load(&why) < 0) {
		cw_diag_add(diag, "--http", 0, 0, "", "%s", why);
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
	if (copy_origins(h, o) < 0) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	h->config = cw_http_config_load(o->tokens_path, o->policy_path, diag);
	if (!h->config)
		goto fail;
	h->conns = cw_http_conns_new(e, &(struct cw_http_conn_limits){
		.max_connections = h->max_connections,
		.max_peer = o->max_peer_connections ?
				    o->max_peer_connections :
				    CW_HTTP_DEFAULT_MAX_PEER_CONNECTIONS,
		.header_timeout_s = o->header_timeout_s ?
					    o->header_timeout_s :
					    CW_HTTP_DEFAULT_HEADER_TIMEOUT_S,
	});
	if (!h->conns) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	h->sessions = cw_http_sessions_new(e, h->config, h->max_sessions,
					   o->session_idle_s ?
						   o->session_idle_s :
						   CW_HTTP_DEFAULT_SESSION_IDLE_S,
					   h->timeout_s);
	if (!h->sessions) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	h->daemon = daemon_start(h, &ss);
	if (!h->daemon) {
		cw_diag_add(diag, "--http", 0, 0, "",
			    "cannot listen on %s (in use, or not an address of this machine)",
			    o->listen);
		goto fail;
	}
	if (cw_http_sessions_start(h->sessions) < 0 ||
	    cw_http_conns_start(h->conns) < 0) {
		cw_diag_add(diag, "--http", 0, 0, "",
			    "cannot start a thread: out of resources");
		goto fail;
	}
	di = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di ? di->port : 0;
	format_address(h, &ss);
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
	return cw_http_config_reload(h->config, h->engine, diag);
}

void cw_http_stop(struct cw_http *h)
{
	size_t i;
	int lfd = -1;

	if (!h)
		return;
	/* No new connection, and no new call: calls in progress finish and
	 * are answered first. */
	if (h->daemon)
		lfd = MHD_quiesce_daemon(h->daemon);
	cw_http_sessions_stop(h->sessions);
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	if (lfd >= 0)
		close(lfd);
	/* After the daemon: it closed every connection. */
	cw_http_conns_free(h->conns);
	cw_http_sessions_free(h->sessions);
	cw_http_config_free(h->config);
	for (i = 0; i < h->norigins; i++)
		free(h->origins[i]);
	free(h->origins);
	free(h);
}
