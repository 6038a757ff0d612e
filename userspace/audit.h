/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Audit log: JSON Lines (design.md §9). Each record gets ts, seq, type,
 * invocation and prev (SHA-256 hex of the previous line, "" for the first).
 * Appended with O_APPEND under an exclusive flock, so several agents can
 * share one file and the chain stays intact; fsynced before returning.
 */
#ifndef CW_AUDIT_H
#define CW_AUDIT_H

#include <stdint.h>

#include <jansson.h>

#include "util.h"

struct cw_audit;

/* Opens (creates with mode 0600; refuses a file readable by others) the log
 * and its parent directory (0700) if missing. NULL + errno + err on failure. */
struct cw_audit *cw_audit_open(const char *path, struct cw_error *err);
void cw_audit_close(struct cw_audit *a);

/* Writes one record: fields (an object, may be NULL; borrowed) plus ts, seq,
 * type, invocation (omitted when NULL), prev. Durable on return 0; -errno
 * with err filled otherwise (the caller then fails closed). */
int cw_audit_write(struct cw_audit *a, const char *type,
		   const char *invocation, json_t *fields,
		   struct cw_error *err);

const char *cw_audit_path(const struct cw_audit *a);

#endif
