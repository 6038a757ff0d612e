/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP transport's sessions and the streams of their tools/call
 * requests. A session is opened by initialize and named by a random id
 * that every later request carries; it holds an MCP core of the grant
 * that opened it, and ends when deleted, when idle too long and not in
 * use, or when the server stops.
 *
 * A tools/call request gets a stream, listed in its session under the
 * request's id: what the MCP core sends for the call (progress,
 * elicitation/create, then the response) goes to it. As SSE it is written
 * as it comes, with keepalive comments between; as plain JSON, the
 * response alone. Until there is something to send the request's
 * connection is suspended, so no thread waits for it.
 */
#ifndef CW_SERVER_SESSIONS_H
#define CW_SERVER_SESSIONS_H

#include <stdbool.h>

#include <jansson.h>

#include "engine/engine.h"
#include "server/http_config.h"
#include "server/mcp.h"
#include "server/mhd.h"

struct cw_http_sessions;
struct cw_http_session;
struct cw_http_stream;

/* The table of sessions: at most max, each ended after idle_s unused;
 * SSE keepalives at least twice per timeout_s (the connection timeout).
 * Sessions decide by the rules cfg gives at each request. NULL: ENOMEM. */
struct cw_http_sessions *cw_http_sessions_new(struct cw_engine *e,
					      struct cw_http_config *cfg,
					      unsigned max, unsigned idle_s,
					      unsigned timeout_s);
/* Starts the thread that sends keepalives. 0 or -errno. */
int cw_http_sessions_start(struct cw_http_sessions *t);
/* No stream may start from now on; waits for every session's calls to be
 * answered, then ends the streams still open, so that no connection stays
 * suspended. NULL is ignored. */
void cw_http_sessions_stop(struct cw_http_sessions *t);
/* Frees every session, once no connection can reach them. NULL is
 * ignored. */
void cw_http_sessions_free(struct cw_http_sessions *t);

/* A session not yet listed (one reference), or NULL (ENOMEM). */
struct cw_http_session *cw_http_session_new(struct cw_http_sessions *t,
					    const char *grant);
/* Lists s (taking over the caller's reference as the list's own and
 * giving the caller another); -EAGAIN when the table is full. */
int cw_http_session_add(struct cw_http_sessions *t, struct cw_http_session *s);
/* The session with this id of this grant (a new reference), or NULL.
 * Sessions idle too long end first. */
struct cw_http_session *cw_http_session_find(struct cw_http_sessions *t,
					     const char *id,
					     const char *grant);
void cw_http_session_put(struct cw_http_sessions *t,
			 struct cw_http_session *s);
/* Unlists s (DELETE) and puts the caller's reference. */
void cw_http_session_delete(struct cw_http_sessions *t,
			    struct cw_http_session *s);

const char *cw_http_session_id(const struct cw_http_session *s);
struct cw_mcp *cw_http_session_mcp(struct cw_http_session *s);

/* Sends msg (not taken) to the stream of the request whose id is related,
 * as the session's out channel does: the response ends the stream. */
int cw_http_session_send(struct cw_http_session *s, json_t *msg,
			 json_t *related);
/* The request with this id was cancelled: it gets no response, so its
 * stream ends now. */
void cw_http_session_cancelled(struct cw_http_session *s, json_t *id);

/* Lists a stream in s for the request id (copied) on connection c, as SSE
 * or plain JSON. NULL with errno: ENOMEM, or ESHUTDOWN once the server
 * stops. The caller holds one reference, for cw_http_stream_closed. */
struct cw_http_stream *cw_http_stream_open(struct cw_http_sessions *t,
					   struct cw_http_session *s,
					   struct MHD_Connection *c,
					   json_t *id, bool sse);
/* Answers the request of st once there is something to send: called when
 * it is handed in and again at each resume of its connection; until then
 * the connection is suspended. */
enum MHD_Result cw_http_stream_respond(struct MHD_Connection *c,
				       struct cw_http_stream *st);
/* Its request completed (answered, or the client went away); puts the
 * caller's reference. What the call sends later is dropped. */
void cw_http_stream_closed(struct cw_http_stream *st);

#endif
