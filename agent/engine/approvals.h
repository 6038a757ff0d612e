/* SPDX-License-Identifier: Apache-2.0 */
/*
 * approvals: require_approval calls decided by an operator when the client
 * cannot be asked (no elicitation).
 *
 * Such a call is denied with an approval id. An operator approves or
 * rejects the id (`cmdwarden approve ID`, over the control socket); a retry
 * of the identical call (same grant, tool and arguments, compared as
 * canonical JSON through its SHA-256) within the approval's lifetime then
 * runs, once. An id lives for the lifetime from its creation: approving,
 * and the retry, must both happen within it. Entries live in memory only:
 * after a restart every call asks again.
 */
#ifndef CW_ENGINE_APPROVALS_H
#define CW_ENGINE_APPROVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define CW_APPROVAL_LIFETIME_S 600
#define CW_APPROVALS_MAX 1024

struct cw_approvals;

/* lifetime_s <= 0: CW_APPROVAL_LIFETIME_S. NULL when out of memory. */
struct cw_approvals *cw_approvals_new(int64_t lifetime_s);
void cw_approvals_free(struct cw_approvals *a);
int64_t cw_approvals_lifetime_s(const struct cw_approvals *a);

enum cw_approval_state {
	CW_APPROVAL_PENDING = 0,
	CW_APPROVAL_APPROVED,
	CW_APPROVAL_REJECTED,
	CW_APPROVAL_USED,
};

/*
 * For a call that needs approval. When an approved, unexpired, unused
 * approval of exactly this call exists, it is used up and 0 returned with
 * its id. Otherwise -EACCES, with id the approval to decide (a pending one
 * for this call, or a new one) and *state what it is (PENDING or
 * REJECTED). -ENOMEM when it cannot be recorded.
 */
int cw_approvals_check(struct cw_approvals *a, const char *grant,
		       const char *tool, json_t *args, const char *summary,
		       int64_t now_us, char id[32],
		       enum cw_approval_state *state);

/* An operator's answer. 0, or -ENOENT (unknown id), -ETIMEDOUT (expired),
 * -EALREADY (approved, rejected or used already), with msg saying which.
 * *desc (may be NULL) gets {"tool","grant","summary"} of the call. */
int cw_approvals_decide(struct cw_approvals *a, const char *id, bool approve,
			int64_t now_us, char *msg, size_t len, json_t **desc);
/* The same answer and message without changing anything: to audit a
 * decision before it takes effect. */
int cw_approvals_try(struct cw_approvals *a, const char *id, bool approve,
		     int64_t now_us, char *msg, size_t len, json_t **desc);

/* The pending ones, for `cmdwarden approve --list`: an array of
 * {"id","tool","grant","summary","expires_in_s"}. */
json_t *cw_approvals_pending(struct cw_approvals *a, int64_t now_us);

#endif
