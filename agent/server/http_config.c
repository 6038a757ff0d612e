// SPDX-License-Identifier: Apache-2.0
/* The HTTP transport's configuration, its snapshots and reloads (see
 * http_config.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/types.h"
#include "server/http_config.h"

/* Room for the first problem a failed reload found, as its audit record
 * and the control socket's answer carry it. */
#define RELOAD_WHY_MAX 1200

/* What the token file and the policies say, as one snapshot. */
struct cw_http_snapshot {
	int refs;			/* atomic */
	struct cw_grants *grants;
	struct cw_rules **rules;	/* per grant; NULL: the default */
};

struct cw_http_config {
	char *tokens_path;
	char *policy_path;		/* NULL: the embedded policy */
	pthread_mutex_t lock;		/* guards now, and serializes reloads */
	struct cw_http_snapshot *now;
};

void cw_http_snapshot_put(struct cw_http_snapshot *s)
{
	size_t i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; s->rules && i < cw_grants_count(s->grants); i++)
		cw_rules_put(s->rules[i]);
	free(s->rules);
	cw_grants_free(s->grants);
	free(s);
}

const struct cw_grants *
cw_http_snapshot_grants(const struct cw_http_snapshot *s)
{
	return s->grants;
}

struct cw_http_snapshot *cw_http_config_now(struct cw_http_config *c)
{
	struct cw_http_snapshot *s;

	pthread_mutex_lock(&c->lock);
	s = c->now;
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	return s;
}

/* Loads the token file and each grant's policy (a file named by several
 * grants is loaded once). NULL with diag. */
static struct cw_http_snapshot *snapshot_load(const char *tokens,
					      struct cw_diag *diag)
{
	struct cw_http_snapshot *c = calloc(1, sizeof(*c));
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
	cw_http_snapshot_put(c);
	return NULL;
}

struct cw_http_config *cw_http_config_load(const char *tokens_path,
					   const char *policy_path,
					   struct cw_diag *diag)
{
	struct cw_http_config *c = calloc(1, sizeof(*c));

	if (!c) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->tokens_path = strdup(tokens_path);
	c->policy_path = policy_path ? strdup(policy_path) : NULL;
	if (!c->tokens_path || (policy_path && !c->policy_path)) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	c->now = snapshot_load(c->tokens_path, diag);
	if (!c->now)
		goto fail;
	return c;
fail:
	cw_http_config_free(c);
	return NULL;
}

void cw_http_config_free(struct cw_http_config *c)
{
	if (!c)
		return;
	cw_http_snapshot_put(c->now);
	free(c->tokens_path);
	free(c->policy_path);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct cw_rules *cw_http_config_rules(void *ctx, const char *grant)
{
	struct cw_http_snapshot *c = cw_http_config_now(ctx);
	struct cw_rules *r = NULL;
	size_t i;

	for (i = 0; i < cw_grants_count(c->grants); i++)
		if (strcmp(cw_grants_name(c->grants, i), grant) == 0) {
			r = cw_rules_get(c->rules[i]);
			break;
		}
	cw_http_snapshot_put(c);
	return r;
}

int cw_http_config_reload(struct cw_http_config *cfg, struct cw_engine *e,
			  struct cw_diag *diag)
{
	struct cw_http_snapshot *c = NULL, *old;
	char why[RELOAD_WHY_MAX] = "";
	size_t before = diag->n;
	struct cw_rules *rules;
	struct cw_error err;
	json_t *rec;
	int ret = 0;

	rules = cw_rules_load(cfg->policy_path, diag);
	if (rules)
		c = snapshot_load(cfg->tokens_path, diag);
	if (!rules || !c) {
		ret = -EINVAL;
		if (diag->n > before)
			cw_error_format(&diag->items[before], why, sizeof(why));
		cw_rules_put(rules);
	} else {
		cw_engine_set_rules(e, rules);
		cw_rules_put(rules);
		pthread_mutex_lock(&cfg->lock);
		old = cfg->now;
		cfg->now = c;
		pthread_mutex_unlock(&cfg->lock);
		cw_http_snapshot_put(old);
	}
	rec = json_pack("{s:s, s:b, s:s, s:s?}", "event", "reload", "ok", !ret,
			"tokens", cfg->tokens_path, "policy",
			cfg->policy_path);
	if (rec && ret)
		json_object_set_new(rec, "error", json_string(why));
	if (rec && !ret)
		json_object_set_new(rec, "grants",
				    json_integer((json_int_t)cw_grants_count(
					    c->grants)));
	if (!rec || cw_engine_audit(e, CW_AUDIT_T(AGENT), rec, 0, &err) < 0)
		cw_diag_add(diag, "", 0, 0, "", "audit log: %s",
			    rec ? err.text : "out of memory");
	json_decref(rec);
	return ret;
}
