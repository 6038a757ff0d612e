// SPDX-License-Identifier: Apache-2.0
/*
 * The MCP core (mcp.h): JSON-RPC messages, the session's lifecycle, the
 * calls in flight on the worker pool, elicitation. What each tool is lives
 * in the tool table (tools.c); what a call does, in the engine.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "server/mcp.h"
#include "server/request_id.h"
#include "server/tools.h"
#include "version.h"
#include "server/workers.h"

static const char *const versions[] = { "2025-11-25", "2025-06-18",
					"2025-03-26" };

/* A tools/call running on a thread of the pool (workers.h). */
struct flight {
	struct cw_mcp *m;
	json_t *id;		/* the request's id */
	json_t *params;
	json_t *progress_token;	/* NULL when none was asked for */
	int cancel_fd;		/* eventfd: notifications/cancelled */
	struct cw_pending *pending; /* the submitted call, until it runs */
	bool cancelled;		/* under m->lock */
	struct flight *next;
};

/* An elicitation/create we sent, waiting for its response. */
struct ask {
	char id[48];
	json_t *response;	/* the whole message once it came */
	struct flight *f;
	struct ask *next;
};

struct cw_mcp {
	struct cw_engine *engine;
	char *grant;
	char *session;
	cw_mcp_rules_fn rules_fn;
	void *rules_ctx;
	bool initialized;	/* initialize answered */
	char version[16];	/* negotiated protocol version */
	bool elicit;		/* the client declared elicitation */
	struct cw_mcp_out out;	/* send NULL: calls run inline */
	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t cond;	/* a call ended, an answer came, cancels */
	struct flight *flights;
	size_t nflights;
	struct ask *asks;
	unsigned long next_ask;
	bool closing;
};

struct cw_mcp *cw_mcp_new(struct cw_engine *e, const char *grant,
			  const char *session_id)
{
	struct cw_mcp *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->engine = e;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->grant = strdup(grant ? grant : "local");
	m->session = strdup(session_id ? session_id : "");
	if (!m->grant || !m->session) {
		cw_mcp_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void cw_mcp_set_rules_source(struct cw_mcp *m, cw_mcp_rules_fn fn,
			     void *ctx)
{
	m->rules_fn = fn;
	m->rules_ctx = ctx;
}

/* The rules for this request: a new reference, never NULL. */
static struct cw_rules *rules_now(struct cw_mcp *m)
{
	struct cw_rules *r = m->rules_fn ? m->rules_fn(m->rules_ctx, m->grant) :
					   NULL;

	return r ? r : cw_engine_rules(m->engine);
}

void cw_mcp_set_out(struct cw_mcp *m, const struct cw_mcp_out *out)
{
	m->out = *out;
}

void cw_mcp_drain(struct cw_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	while (m->nflights)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

/* Under m->lock. */
static void cancel_locked(struct cw_mcp *m, struct flight *f)
{
	uint64_t one = 1;

	if (f->cancelled)
		return;
	f->cancelled = true;
	if (write(f->cancel_fd, &one, sizeof(one)) < 0) {
		/* Only at the eventfd's maximum: signalled already. */
	}
	pthread_cond_broadcast(&m->cond);
}

void cw_mcp_cancel_all(struct cw_mcp *m)
{
	struct flight *f;

	pthread_mutex_lock(&m->lock);
	m->closing = true;
	for (f = m->flights; f; f = f->next)
		cancel_locked(m, f);
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void cw_mcp_end_input(struct cw_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	m->closing = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void cw_mcp_free(struct cw_mcp *m)
{
	if (!m)
		return;
	cw_mcp_drain(m);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m->grant);
	free(m->session);
	free(m);
}

json_t *cw_mcp_error(json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			 id, "error", "code", code, "message", msg);
}

static json_t *result(json_t *id, json_t *res)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
			 "result", res);
}

static json_t *do_initialize(struct cw_mcp *m, json_t *id, json_t *params)
{
	const char *want = NULL;
	struct cw_rules *rules;
	json_t *res;
	size_t i;

	if (m->initialized)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_REQUEST,
				    "the session is already initialized");
	if (!json_is_object(params))
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "initialize needs params with protocolVersion, capabilities and clientInfo");
	want = json_string_value(json_object_get(params, "protocolVersion"));
	if (!want)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "params.protocolVersion must be a string");
	/* Answer with the client's version when supported, else our latest
	 * (the client then decides whether it can go on). */
	snprintf(m->version, sizeof(m->version), "%s", CW_MCP_LATEST_VERSION);
	for (i = 0; i < CW_ARRAY_SIZE(versions); i++)
		if (strcmp(want, versions[i]) == 0)
			snprintf(m->version, sizeof(m->version), "%s", want);
	m->initialized = true;
	m->elicit = json_is_object(json_object_get(
		json_object_get(params, "capabilities"), "elicitation"));
	rules = rules_now(m);
	res = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}",
			"protocolVersion", m->version,
			"capabilities", "tools", "listChanged", 0,
			"serverInfo", "name", "cmdwarden", "title",
			"cmdwarden execution-point enforcer",
			"version", CW_VERSION, "instructions",
			cw_mcp_instructions(cw_rules_policy(rules)));
	cw_rules_put(rules);
	return result(id, res);
}

static json_t *tool_error(const char *text)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
			 "text", text, "isError", 1);
}

/* ---- elicitation: asking the person behind the client ---------------- */

static int send_out(struct cw_mcp *m, json_t *msg, json_t *related)
{
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = m->out.send(m->out.ctx, msg, related);
	json_decref(msg);
	return ret;
}

/* The approval question, as elicitation/create puts it to a person. */
static json_t *ask_request(const char *id, const struct cw_ask *q)
{
	char text[3072];

	if (q->command)
		snprintf(text, sizeof(text),
			 "Approve running this command?\n\n%.2000s\n\nin %.256s\n\nThe policy asks for approval (rule %.200s%s%.300s).",
			 q->command, q->cwd ? q->cwd : "", q->rule,
			 q->reason && *q->reason ? ": " : "",
			 q->reason ? q->reason : "");
	else
		snprintf(text, sizeof(text),
			 "Approve a call of the tool \"%.100s\"?\n\nThe policy asks for approval (rule %.200s%s%.300s).",
			 q->tool, q->rule,
			 q->reason && *q->reason ? ": " : "",
			 q->reason ? q->reason : "");
	/* Nothing to fill in: accept, decline or cancel is the answer. */
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:s, s:{}}}}", "jsonrpc",
			 "2.0", "id", id, "method", "elicitation/create",
			 "params", "message", text, "requestedSchema", "type",
			 "object", "properties");
}

static int ask_hook(void *ctx, const struct cw_ask *q)
{
	struct flight *f = ctx;
	struct cw_mcp *m = f->m;
	struct timespec until;
	struct ask a = { .f = f };
	struct ask **pp;
	const char *action;
	json_t *res;
	int ret;

	if (!m->elicit)
		return -ENOTSUP;
	pthread_mutex_lock(&m->lock);
	if (m->closing) {
		/* Nobody is left to answer. */
		pthread_mutex_unlock(&m->lock);
		return CW_ANSWER_CANCEL;
	}
	snprintf(a.id, sizeof(a.id), "cmdwarden-ask-%lu", ++m->next_ask);
	a.next = m->asks;
	m->asks = &a;
	pthread_mutex_unlock(&m->lock);

	ret = send_out(m, ask_request(a.id, q), f->id);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CW_MCP_ASK_TIMEOUT_S;
	pthread_mutex_lock(&m->lock);
	while (!ret && !a.response && !f->cancelled && !m->closing)
		if (pthread_cond_timedwait(&m->cond, &m->lock, &until) ==
		    ETIMEDOUT)
			break;
	for (pp = &m->asks; *pp; pp = &(*pp)->next)
		if (*pp == &a) {
			*pp = a.next;
			break;
		}
	pthread_mutex_unlock(&m->lock);
	if (ret < 0 || !a.response)
		return CW_ANSWER_CANCEL; /* no answer is no approval */
	res = json_object_get(a.response, "result");
	action = json_string_value(json_object_get(res, "action"));
	ret = CW_ANSWER_CANCEL;
	if (action && !strcmp(action, "accept"))
		ret = CW_ANSWER_ACCEPT;
	else if (action && !strcmp(action, "decline"))
		ret = CW_ANSWER_DECLINE;
	json_decref(a.response);
	return ret;
}

/* A response from the client: the answer to one of our asks. */
static void answer_ask(struct cw_mcp *m, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	struct ask *a;

	if (!id)
		return;
	pthread_mutex_lock(&m->lock);
	for (a = m->asks; a; a = a->next)
		if (!strcmp(a->id, id) && !a->response) {
			a->response = json_deep_copy(msg); /* as above */
			pthread_cond_broadcast(&m->cond);
			break;
		}
	pthread_mutex_unlock(&m->lock);
}

/* ---- calls ----------------------------------------------------------- */

static void cancel_request(struct cw_mcp *m, json_t *id)
{
	struct flight *f;

	if (!id)
		return;
	pthread_mutex_lock(&m->lock);
	for (f = m->flights; f; f = f->next)
		if (json_equal(f->id, id))
			cancel_locked(m, f);
	pthread_mutex_unlock(&m->lock);
}

static void progress_hook(void *ctx, int64_t elapsed_ms)
{
	struct flight *f = ctx;
	char msg[64];

	snprintf(msg, sizeof(msg), "running for %llds",
		 (long long)(elapsed_ms / 1000));
	send_out(f->m,
		 json_pack("{s:s, s:s, s:{s:O, s:I, s:s}}", "jsonrpc", "2.0",
			   "method", "notifications/progress", "params",
			   "progressToken", f->progress_token, "progress",
			   (json_int_t)(elapsed_ms / 1000), "message", msg),
		 f->id);
}

/* Fills call from tools/call params, for this session: NULL, or what is
 * wrong with params (at submission, and on the worker from its copy of
 * params). */
static const char *call_of(struct cw_mcp *m, json_t *params,
			   struct cw_call *call)
{
	json_t *args = json_object_get(params, "arguments");

	call->tool = json_string_value(json_object_get(params, "name"));
	if (!json_is_object(params) || !call->tool)
		return "tools/call needs params.name (a string)";
	if (args && !json_is_object(args))
		return "params.arguments must be an object";
	call->args = args;
	call->grant = m->grant;
	call->session = m->session;
	return NULL;
}

/* A call no longer in flight: cw_mcp_free may be waiting for the last. */
static void flight_over(struct cw_mcp *m)
{
	pthread_mutex_lock(&m->lock);
	m->nflights--;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* A refused call whose answer waits for its decision record to be
 * durable: whichever of the answer and the flush comes second sends it. */
struct later {
	struct cw_mcp *m;
	json_t *id;		/* a copy */
	json_t *resp;		/* the answer, once built */
	char *text;		/* or it serialized (out.send_final) */
	int refs;		/* atomic: the caller and the flush */
	int ret;		/* of the flush */
	char why[1100];		/* and why it failed */
	bool pending;		/* the flush will tell (durable_later) */
};

static void later_put(struct later *lt)
{
	struct cw_mcp *m = lt->m;
	json_t *resp;

	if (__atomic_sub_fetch(&lt->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	resp = lt->resp;
	if (lt->ret < 0) {
		/* Fail closed, as the answer of a synchronous write would. */
		json_decref(resp);
		free(lt->text);
		lt->text = NULL;
		resp = result(lt->id, tool_error(lt->why));
	}
	if (lt->text)
		m->out.send_final(m->out.ctx, lt->text, lt->id);
	else if (resp)
		send_out(m, resp, lt->id);
	json_decref(lt->id);
	free(lt);
	flight_over(m);
}

/* cw_audit_done_fn of a refused call's decision record. */
static void later_durable(void *ctx, int ret, const struct cw_error *err)
{
	struct later *lt = ctx;

	lt->ret = ret;
	if (ret < 0)
		snprintf(lt->why, sizeof(lt->why),
			 "call refused because the audit log cannot be written: %s",
			 err ? err->text : strerror(-ret));
	later_put(lt);
}

/* The JSON-RPC response to a call's result; frees r's contents. */
static json_t *answer(json_t *id, struct cw_call_result *r)
{
	json_t *res = NULL, *js;
	char *text;

	switch (r->outcome) {
	case CW_OUTCOME_RAN:
		js = cw_tool_result(r, false);
		text = js ? cw_json_compact(js) : NULL;
		json_decref(js);
		if (text)
			res = json_pack("{s:[{s:s, s:s}], s:o, s:b}",
					"content", "type", "text", "text",
					text, "structuredContent",
					cw_tool_result(r, true), "isError", 0);
		free(text);
		break;
	case CW_OUTCOME_UNKNOWN_TOOL:
		res = cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS, "%s",
				   r->message);
		cw_engine_result_free(r);
		return res;
	case CW_OUTCOME_DENIED:
	case CW_OUTCOME_FAILED:
		res = tool_error(r->message);
		break;
	case CW_OUTCOME_INVALID: {
		char msg[1100];

		snprintf(msg, sizeof(msg), "invalid arguments: %s", r->message);
		res = tool_error(msg);
		break;
	}
	}
	cw_engine_result_free(r);
	if (!res)
		return cw_mcp_error(id, CW_JSONRPC_INTERNAL_ERROR,
				    "out of memory building the result");
	return result(id, res);
}

static void flight_free(struct flight *f)
{
	cw_engine_pending_free(f->pending);
	json_decref(f->id);
	json_decref(f->params);
	json_decref(f->progress_token);
	if (f->cancel_fd >= 0)
		close(f->cancel_fd);
	free(f);
}

/* The rest of a submitted call, on a thread of the pool, taking part in
 * it through the hooks (cancellation, progress, approval by elicitation). */
static void flight_main(void *p)
{
	struct flight *f = p, **pp;
	struct cw_mcp *m = f->m;
	struct cw_call_hooks hooks = {
		.cancel_fd = f->cancel_fd,
		.ask = ask_hook,
		.ctx = f,
	};
	struct cw_call_result r;
	struct cw_call call;
	json_t *resp;
	bool cancelled;

	if (f->progress_token) {
		hooks.progress = progress_hook;
		hooks.progress_ms = CW_MCP_PROGRESS_MS;
	}
	/* The same call as submitted: its arguments are the copy. */
	call_of(m, f->params, &call);
	cw_engine_run(f->pending, &call, &hooks, &r);
	f->pending = NULL;
	resp = answer(f->id, &r);
	pthread_mutex_lock(&m->lock);
	cancelled = f->cancelled;
	pthread_mutex_unlock(&m->lock);
	/* A cancelled request gets no response (MCP cancellation). */
	if (resp && !cancelled)
		send_out(m, json_incref(resp), f->id);
	json_decref(resp);
	pthread_mutex_lock(&m->lock);
	for (pp = &m->flights; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	m->nflights--;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	flight_free(f);
}

/* Hands a submitted call to a thread of the pool; its answer goes out
 * later. Takes pending. */
static json_t *dispatch(struct cw_mcp *m, json_t *id, json_t *params,
			struct cw_pending *pending)
{
	json_t *tok = json_object_get(json_object_get(params, "_meta"),
				      "progressToken");
	struct flight *f;
	int ret;

	pthread_mutex_lock(&m->lock);
	if (m->nflights >= CW_MCP_MAX_INFLIGHT) {
		pthread_mutex_unlock(&m->lock);
		cw_engine_pending_free(pending);
		return cw_mcp_error(id, CW_JSONRPC_INTERNAL_ERROR,
				    "too many calls in flight on this session (%d); wait for answers before sending more",
				    CW_MCP_MAX_INFLIGHT);
	}
	m->nflights++;
	pthread_mutex_unlock(&m->lock);
	f = calloc(1, sizeof(*f));
	if (!f) {
		cw_engine_pending_free(pending);
		goto fail;
	}
	f->m = m;
	f->pending = pending;
	/* Copies, not references: the message is freed on the transport's
	 * thread, and jansson reads a reference count unguarded. */
	f->id = json_deep_copy(id);
	f->params = json_deep_copy(params);
	if (json_is_string(tok) || json_is_integer(tok))
		f->progress_token = json_deep_copy(tok);
	f->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->cancel_fd < 0)
		goto fail;
	pthread_mutex_lock(&m->lock);
	f->next = m->flights;
	m->flights = f;
	ret = cw_workers_run(flight_main, f);
	if (ret) {
		m->flights = f->next;
		pthread_mutex_unlock(&m->lock);
		goto fail;
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
fail:
	if (f)
		flight_free(f);
	flight_over(m);
	return cw_mcp_error(id, CW_JSONRPC_INTERNAL_ERROR,
			    "could not start the call: out of resources");
}

/* A refusal whose answer may wait for its decision record (see
 * refusals_later): counted in flight until answered. NULL when it cannot
 * wait (out of memory): it is then answered once durable, at once. */
static struct later *later_new(struct cw_mcp *m, json_t *id)
{
	struct later *lt = calloc(1, sizeof(*lt));

	if (!lt)
		return NULL;
	lt->m = m;
	lt->id = json_deep_copy(id);
	lt->refs = 2;
	pthread_mutex_lock(&m->lock);
	m->nflights++;	/* until answered: cw_mcp_free waits for it */
	pthread_mutex_unlock(&m->lock);
	return lt;
}

/* The answer res of a call answered at submission, with lt: sent through
 * out once its decision record is durable, then NULL; else res now. */
static json_t *later_answer(struct later *lt, json_t *res)
{
	struct cw_mcp *m = lt->m;

	if (!lt->pending) {
		json_decref(lt->id);
		free(lt);
		flight_over(m);
		return res;
	}
	if (res && m->out.send_final) {
		lt->text = cw_json_compact(res);
		if (lt->text)
			json_decref(res);
		else
			lt->resp = res;
	} else {
		lt->resp = res;
	}
	later_put(lt);
	return NULL;
}

/*
 * A tools/call request, submitted to the engine, which decides it once. A
 * call it answers at submission (refused, invalid) launches nothing and
 * asks no one, so it is answered on the transport's thread: handing it to
 * another thread would cost more than the decision and its audit record.
 * It is answered there, or (refusals_later) through out once its record is
 * durable, so that thread does not wait for the disk. Every other call
 * runs on a thread of the worker pool (workers.h) when the transport can
 * send answers later, else here.
 */
static json_t *tools_call(struct cw_mcp *m, json_t *id, json_t *params)
{
	struct cw_call_hooks hooks = { .cancel_fd = -1 };
	struct cw_pending *pending;
	struct cw_call_result r;
	struct cw_rules *rules;
	struct later *lt = NULL;
	struct cw_call call;
	const char *bad;
	json_t *res;

	bad = call_of(m, params, &call);
	if (bad)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS, "%s", bad);
	rules = rules_now(m);
	if (!m->out.send) {
		cw_engine_call_hooked(m->engine, rules, &call, NULL, &r);
		cw_rules_put(rules);
		return answer(id, &r);
	}
	if (m->out.refusals_later)
		lt = later_new(m, id);
	if (lt) {
		hooks.durable = later_durable;
		hooks.durable_ctx = lt;
	}
	if (cw_engine_submit(m->engine, rules, &call, &hooks, &r, &pending) ==
	    CW_CALL_NEEDS_WORKER) {
		cw_rules_put(rules);
		if (lt)
			later_answer(lt, NULL);
		return dispatch(m, id, params, pending);
	}
	cw_rules_put(rules);
	if (lt)
		lt->pending = r.durable_later;
	res = answer(id, &r);
	return lt ? later_answer(lt, res) : res;
}

/* A request id must be a string or an integer (JSON-RPC; MCP forbids null). */
static bool valid_id(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

json_t *cw_mcp_handle(struct cw_mcp *m, json_t *msg)
{
	json_t *id, *params;
	const char *method, *ver;

	if (json_is_array(msg))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "batches are not supported: send one JSON-RPC message per line");
	if (!json_is_object(msg))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "a JSON-RPC message must be an object");
	id = json_object_get(msg, "id");
	ver = json_string_value(json_object_get(msg, "jsonrpc"));
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!method && (json_object_get(msg, "result") ||
			json_object_get(msg, "error"))) {
		answer_ask(m, msg);	/* a response to our request */
		return NULL;
	}
	if (!ver || strcmp(ver, "2.0") != 0)
		return cw_mcp_error(valid_id(id) ? id : NULL,
				    CW_JSONRPC_INVALID_REQUEST,
				    "\"jsonrpc\" must be \"2.0\"");
	if (!method)
		return cw_mcp_error(valid_id(id) ? id : NULL,
				    CW_JSONRPC_INVALID_REQUEST,
				    "\"method\" must be a string");
	if (params && !json_is_object(params))
		return id ? cw_mcp_error(valid_id(id) ? id : NULL,
					 CW_JSONRPC_INVALID_REQUEST,
					 "\"params\" must be an object") :
			    NULL;
	if (!id) {
		/* notifications: initialized, cancelled, ... */
		if (!strcmp(method, "notifications/cancelled"))
			cancel_request(m, json_object_get(params, "requestId"));
		return NULL;
	}
	if (!valid_id(id))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "\"id\" must be a string or an integer");

	if (strcmp(method, "initialize") == 0)
		return do_initialize(m, id, params);
	if (strcmp(method, "ping") == 0)
		return result(id, json_object());
	if (!m->initialized &&
	    (strcmp(method, "tools/list") == 0 ||
	     strcmp(method, "tools/call") == 0))
		return cw_mcp_error(id, CW_JSONRPC_INVALID_REQUEST,
				    "the session is not initialized: send initialize first");
	if (strcmp(method, "tools/list") == 0) {
		struct cw_rules *rules = rules_now(m);
		json_t *tools = cw_mcp_tools(cw_rules_policy(rules));

		cw_rules_put(rules);
		return result(id, json_pack("{s:o}", "tools", tools));
	}
	if (strcmp(method, "tools/call") == 0)
		return tools_call(m, id, params);
	return cw_mcp_error(id, CW_JSONRPC_METHOD_NOT_FOUND,
			    "method \"%.100s\" not found", method);
}

json_t *cw_mcp_handle_raw(struct cw_mcp *m, const char *buf, size_t len)
{
	json_error_t jerr;
	json_t *msg, *resp;

	msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			 &jerr);
	if (!msg) {
		json_t *id = cw_request_id(buf, len);

		resp = cw_mcp_error(id, CW_JSONRPC_PARSE_ERROR,
				    "parse error at line %d, column %d: %s",
				    jerr.line, jerr.column, jerr.text);
		json_decref(id);
		return resp;
	}
	resp = cw_mcp_handle(m, msg);
	json_decref(msg);
	return resp;
}
