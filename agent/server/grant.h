/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Grants: who may call over HTTP. A token file (JSON, mode 0600, owned by
 * the agent's user) names each grant, the SHA-256 of its bearer token and,
 * optionally, the policy file its calls are decided by:
 *
 *   {"grants": {"ci": {"token_sha256": "<64 hex digits>", "policy": "ci.json"}}}
 *
 * Only hashes are stored, so the file does not give the tokens away. A grant
 * is the rate-limit scope "grant" of its calls.
 */
#ifndef CW_SERVER_GRANT_H
#define CW_SERVER_GRANT_H

#include <stddef.h>

#include "lib/util.h"

#define CW_GRANT_NAME_MAX 64
/* Longest bearer token accepted; longer ones are refused unhashed. */
#define CW_TOKEN_MAX 4096

struct cw_grants;

/* Why name cannot name a grant (a message), or NULL when it can. */
const char *cw_grants_name_problem(const char *name);

/* Reads and validates a token file: refuses one that group or others may
 * access or another user owns. NULL with every problem in diag (file,
 * line and column where the parser gives them, and the JSON path). A
 * relative policy path is taken from the token file's directory. */
struct cw_grants *cw_grants_load(const char *path, struct cw_diag *diag);
/* The same from a buffer; base_dir resolves relative policy paths. */
struct cw_grants *cw_grants_parse(const char *buf, size_t len,
				  const char *source, const char *base_dir,
				  struct cw_diag *diag);
void cw_grants_free(struct cw_grants *g);

size_t cw_grants_count(const struct cw_grants *g);
const char *cw_grants_name(const struct cw_grants *g, size_t i);
/* The grant's own policy file, or NULL for the server's policy. */
const char *cw_grants_policy(const struct cw_grants *g, size_t i);

/* The index of the grant this bearer token belongs to, or -1. The token is
 * hashed and compared with every grant's hash in constant time, so neither
 * the time taken nor the order of the grants tells how close a guess was. */
int cw_grants_match(const struct cw_grants *g, const char *token,
		    size_t len);

/* A new token from cw_grants_new_token, or a SHA-256, in hex with its
 * terminating NUL. */
#define CW_GRANT_HEX_SIZE 65

/* A new random token (64 hex digits) and its SHA-256 in hex; token and
 * sha256_hex need CW_GRANT_HEX_SIZE bytes each. */
void cw_grants_new_token(char *token, char *sha256_hex);

#endif
