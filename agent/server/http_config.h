/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP transport's configuration: the token file and the server's
 * policy, and what they say now. What they say is read as one snapshot
 * (the grants, each with the rules its calls are decided by): a request
 * takes a reference for its whole life, and a reload swaps the snapshot
 * whole, so a request never sees half of one and half of another.
 */
#ifndef CW_SERVER_HTTP_CONFIG_H
#define CW_SERVER_HTTP_CONFIG_H

#include "engine/engine.h"
#include "lib/util.h"
#include "server/grant.h"

struct cw_http_config;
struct cw_http_snapshot;

/* Keeps both paths and loads the token file and each grant's policy (the
 * server's own policy is the engine's already). NULL with diag. */
struct cw_http_config *cw_http_config_load(const char *tokens_path,
					   const char *policy_path,
					   struct cw_diag *diag);
/* NULL is ignored. Requests must have put their snapshots or not: each
 * holds its own reference. */
void cw_http_config_free(struct cw_http_config *c);

/* The snapshot of now, a new reference for cw_http_snapshot_put. */
struct cw_http_snapshot *cw_http_config_now(struct cw_http_config *c);
/* NULL is ignored. */
void cw_http_snapshot_put(struct cw_http_snapshot *s);
const struct cw_grants *
cw_http_snapshot_grants(const struct cw_http_snapshot *s);

/* cw_mcp_rules_fn with a struct cw_http_config as ctx: the rules of a
 * grant in the snapshot of now, so a reload reaches open sessions. */
struct cw_rules *cw_http_config_rules(void *ctx, const char *grant);

/* Re-reads the server's policy, the token file and every grant's policy;
 * all or nothing (see cw_http_reload). 0 or -EINVAL; audited either way. */
int cw_http_config_reload(struct cw_http_config *c, struct cw_engine *e,
			  struct cw_diag *diag);

#endif
