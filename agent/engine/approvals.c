// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine/approvals.h"
#include "lib/util.h"

struct entry {
	char id[32];
	unsigned char key[crypto_hash_sha256_BYTES]; /* grant, tool, args */
	enum cw_approval_state state;
	int64_t created_us;
	char *tool, *grant, *summary;
};

struct cw_approvals {
	pthread_mutex_t lock;	/* everything below */
	int64_t lifetime_us;
	struct entry v[CW_APPROVALS_MAX];
	size_t n;		/* in order of creation */
};

struct cw_approvals *cw_approvals_new(int64_t lifetime_s)
{
	struct cw_approvals *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	a->lifetime_us = (lifetime_s > 0 ? lifetime_s : CW_APPROVAL_LIFETIME_S) *
			 1000000LL;
	return a;
}

static void entry_free(struct entry *e)
{
	free(e->tool);
	free(e->grant);
	free(e->summary);
}

void cw_approvals_free(struct cw_approvals *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++)
		entry_free(&a->v[i]);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int64_t cw_approvals_lifetime_s(const struct cw_approvals *a)
{
	return a->lifetime_us / 1000000;
}

/* The call as one digest: grant, tool and canonical arguments, each
 * length-prefixed so that no two calls run together. */
static int call_key(const char *grant, const char *tool, json_t *args,
		    unsigned char key[crypto_hash_sha256_BYTES])
{
	crypto_hash_sha256_state st;
	char *canon;
	uint64_t n;

	canon = args ? json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS |
					  JSON_ENCODE_ANY) :
		       strdup("{}");
	if (!canon)
		return -ENOMEM;
	crypto_hash_sha256_init(&st);
	n = strlen(grant);
	crypto_hash_sha256_update(&st, (const unsigned char *)&n, sizeof(n));
	crypto_hash_sha256_update(&st, (const unsigned char *)grant, n);
	n = strlen(tool);
	crypto_hash_sha256_update(&st, (const unsigned char *)&n, sizeof(n));
	crypto_hash_sha256_update(&st, (const unsigned char *)tool, n);
	n = strlen(canon);
	crypto_hash_sha256_update(&st, (const unsigned char *)&n, sizeof(n));
	crypto_hash_sha256_update(&st, (const unsigned char *)canon, n);
	crypto_hash_sha256_final(&st, key);
	free(canon);
	return 0;
}

static bool expired(const struct cw_approvals *a, const struct entry *e,
		    int64_t now)
{
	return now - e->created_us >= a->lifetime_us;
}

/* Under the lock: drops expired entries, kept CW_APPROVAL_LIFETIME_S
 * longer so that `approve` can still say "expired" rather than
 * "unknown". */
static void purge(struct cw_approvals *a, int64_t now)
{
	size_t i, k = 0;

	for (i = 0; i < a->n; i++) {
		if (now - a->v[i].created_us >=
		    a->lifetime_us + CW_APPROVAL_LIFETIME_S * 1000000LL)
			entry_free(&a->v[i]);
		else
			a->v[k++] = a->v[i];
	}
	a->n = k;
}

int cw_approvals_check(struct cw_approvals *a, const char *grant,
		       const char *tool, json_t *args, const char *summary,
		       int64_t now_us, char id[32],
		       enum cw_approval_state *state)
{
	unsigned char key[crypto_hash_sha256_BYTES];
	struct entry *e = NULL, *use = NULL, *wait = NULL;
	size_t i;
	int ret;

	ret = call_key(grant ? grant : "", tool, args, key);
	if (ret)
		return ret;
	pthread_mutex_lock(&a->lock);
	purge(a, now_us);
	for (i = 0; i < a->n; i++) {
		e = &a->v[i];
		if (memcmp(e->key, key, sizeof(key)) || expired(a, e, now_us))
			continue;
		if (e->state == CW_APPROVAL_APPROVED && !use)
			use = e;
		else if ((e->state == CW_APPROVAL_PENDING ||
			  e->state == CW_APPROVAL_REJECTED) && !wait)
			wait = e;
	}
	if (use) {
		use->state = CW_APPROVAL_USED;
		snprintf(id, 32, "%s", use->id);
		*state = CW_APPROVAL_APPROVED;
		ret = 0;
		goto out;
	}
	if (wait) {
		snprintf(id, 32, "%s", wait->id);
		*state = wait->state;
		ret = -EACCES;
		goto out;
	}
	if (a->n == CW_APPROVALS_MAX) {
		/* Full: the oldest goes. */
		entry_free(&a->v[0]);
		memmove(&a->v[0], &a->v[1], (a->n - 1) * sizeof(a->v[0]));
		a->n--;
	}
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	cw_random_id("apr-", e->id, sizeof(e->id));
	memcpy(e->key, key, sizeof(key));
	e->state = CW_APPROVAL_PENDING;
	e->created_us = now_us;
	e->tool = strdup(tool);
	e->grant = strdup(grant ? grant : "");
	e->summary = strndup(summary ? summary : "", 512);
	if (!e->tool || !e->grant || !e->summary) {
		entry_free(e);
		ret = -ENOMEM;
		goto out;
	}
	a->n++;
	snprintf(id, 32, "%s", e->id);
	*state = CW_APPROVAL_PENDING;
	ret = -EACCES;
out:
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static int decide(struct cw_approvals *a, const char *id, bool approve,
		  int64_t now_us, char *msg, size_t len, json_t **desc,
		  bool apply)
{
	static const char *const done[] = { "pending", "approved", "rejected",
					    "used by a call" };
	struct entry *e = NULL;
	size_t i;
	int ret;

	if (desc)
		*desc = NULL;
	pthread_mutex_lock(&a->lock);
	purge(a, now_us);
	for (i = 0; i < a->n && !e; i++)
		if (!strcmp(a->v[i].id, id))
			e = &a->v[i];
	if (!e) {
		snprintf(msg, len, "unknown approval id \"%.40s\" (never issued by this agent, or expired long ago)",
			 id);
		ret = -ENOENT;
		goto out;
	}
	if (desc)
		*desc = json_pack("{s:s, s:s, s:s}", "tool", e->tool, "grant",
				  e->grant, "summary", e->summary);
	if (e->state != CW_APPROVAL_PENDING) {
		snprintf(msg, len, "approval %s was %s already", e->id,
			 done[e->state]);
		ret = -EALREADY;
		goto out;
	}
	if (expired(a, e, now_us)) {
		snprintf(msg, len, "approval %s expired %llds ago (it lives %llds); the call must be retried to get a new id",
			 e->id,
			 (long long)((now_us - e->created_us - a->lifetime_us) /
				     1000000),
			 (long long)(a->lifetime_us / 1000000));
		ret = -ETIMEDOUT;
		goto out;
	}
	if (apply)
		e->state = approve ? CW_APPROVAL_APPROVED : CW_APPROVAL_REJECTED;
	if (approve)
		snprintf(msg, len, "approved %s: the identical call may now run once within %llds",
			 e->id,
			 (long long)((e->created_us + a->lifetime_us - now_us) /
				     1000000));
	else
		snprintf(msg, len, "rejected %s", e->id);
	ret = 0;
out:
	pthread_mutex_unlock(&a->lock);
	return ret;
}

int cw_approvals_decide(struct cw_approvals *a, const char *id, bool approve,
			int64_t now_us, char *msg, size_t len, json_t **desc)
{
	return decide(a, id, approve, now_us, msg, len, desc, true);
}

int cw_approvals_try(struct cw_approvals *a, const char *id, bool approve,
		     int64_t now_us, char *msg, size_t len, json_t **desc)
{
	return decide(a, id, approve, now_us, msg, len, desc, false);
}

json_t *cw_approvals_pending(struct cw_approvals *a, int64_t now_us)
{
	json_t *arr = json_array();
	size_t i;

	if (!arr)
		return NULL;
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n; i++) {
		const struct entry *e = &a->v[i];

		if (e->state != CW_APPROVAL_PENDING || expired(a, e, now_us))
			continue;
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:s, s:s, s:I}", "id", e->id,
				       "tool", e->tool, "grant", e->grant,
				       "summary", e->summary, "expires_in_s",
				       (json_int_t)((e->created_us +
						     a->lifetime_us - now_us) /
						    1000000)));
	}
	pthread_mutex_unlock(&a->lock);
	return arr;
}
