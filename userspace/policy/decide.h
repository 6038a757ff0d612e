/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decision engine: a pure function from (compiled policy, call, counters,
 * now) to a verdict. It reads counters through a view and never changes them;
 * the caller reserves the verdict's limits in the store afterwards.
 */
#ifndef CW_POLICY_DECIDE_H
#define CW_POLICY_DECIDE_H

#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"

enum cw_verdict_kind {
	CW_VERDICT_ALLOW = 0,
	CW_VERDICT_DENY,
	CW_VERDICT_APPROVAL,	/* needs approval (no way to ask: caller denies) */
	CW_VERDICT_RATE_LIMITED,
};

struct cw_call {
	const char *tool;
	json_t *args;		/* object; NULL means {} */
	const char *grant;	/* credential name; "local" for stdio */
	const char *session;	/* MCP session id; may be "" */
};

/* One counter a call must reserve: key = counter/scope/scope-id. */
struct cw_limit_ref {
	const struct cw_limit *limit;
	char key[384];
};

#define CW_MAX_CALL_LIMITS 64

struct cw_verdict {
	enum cw_verdict_kind kind;
	char reason[512];
	char rule[256];		/* JSON path of what decided: tools.x.deny_if[0] */
	int64_t retry_after_us;	/* RATE_LIMITED: wait at least this long */
	struct cw_limit_ref limits[CW_MAX_CALL_LIMITS]; /* ALLOW/APPROVAL */
	size_t nlimits;
};

/* Counters as the decision sees them: for key, how many events fall in
 * (now - window, now] (events stamped in the future count too: a clock that
 * stepped back must not reopen a window) and, when count >= max, how long
 * until count drops below max. Returns 0 or -errno. */
struct cw_counter_view {
	int (*window)(void *ctx, const char *key, int64_t window_us,
		      int64_t now_us, int64_t max, int64_t *count,
		      int64_t *retry_after_us);
	void *ctx;
};

/* Decide. counters may be NULL (limits then not checked, only listed).
 * Returns 0, or -errno on internal failure (verdict then DENY). */
int cw_decide(const struct cw_policy *p, const struct cw_call *call,
	      const struct cw_counter_view *counters, int64_t now_us,
	      struct cw_verdict *out);

/* Sets out to "rate limited by l, retry after retry_us": the one wording of
 * that denial, for the decision (cw_decide) and the reservation that lost a
 * race for the last slot (the engine). */
void cw_verdict_rate_limited(struct cw_verdict *out, const struct cw_limit *l,
			     int64_t retry_us);

/* A verdict's limit table is most of its 26 KiB and only its first nlimits
 * entries mean anything: these clear and copy the rest of it. */
void cw_verdict_clear(struct cw_verdict *v);
void cw_verdict_copy(struct cw_verdict *dst, const struct cw_verdict *src);

/* Builds a counter key for a limit and call into buf. */
void cw_limit_key(const struct cw_limit *l, const struct cw_call *call,
		  char *buf, size_t len);

const char *cw_verdict_name(enum cw_verdict_kind k);

#endif
