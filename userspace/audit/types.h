/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The record types the agent writes (docs/audit.md, "Record types"), in
 * one list: the engine's record builders name their records from it,
 * `audit query --type` accepts these names and `audit stats` counts by
 * them. The writer takes any type; adding one is a row here, one in
 * types.c, and its builder.
 */
#ifndef CW_AUDIT_TYPES_H
#define CW_AUDIT_TYPES_H

enum cw_audit_type {
	CW_AUDIT_TYPE_AGENT,	/* at start and at each reload */
	CW_AUDIT_TYPE_ACCESS,	/* an HTTP request refused */
	CW_AUDIT_TYPE_DECISION,	/* the policy's verdict on a call */
	CW_AUDIT_TYPE_LAUNCH,	/* the command started, its layers */
	CW_AUDIT_TYPE_EXEC,	/* exec, process and file: what the */
	CW_AUDIT_TYPE_PROCESS,	/* call's processes did in the kernel */
	CW_AUDIT_TYPE_FILE,
	CW_AUDIT_TYPE_READS,	/* read-only opens summed, many files */
	CW_AUDIT_TYPE_NET,	/* a connection refused */
	CW_AUDIT_TYPE_SECCOMP,	/* a system call denied */
	CW_AUDIT_TYPE_LIMIT,	/* a resource limit reached */
	CW_AUDIT_TYPE_EXIT,	/* how the call ended */
	CW_AUDIT_TYPE_APPROVAL,	/* an operator's answer */
	CW_AUDIT_TYPE_PRUNED,	/* retention removed the oldest files */
	CW_AUDIT_NTYPES
};

/* The types' names, indexed by enum cw_audit_type, NULL-terminated. */
extern const char *const cw_audit_types[CW_AUDIT_NTYPES + 1];

/* The name of type CW_AUDIT_TYPE_<id>, as a record's "type" is written. */
#define CW_AUDIT_T(id) (cw_audit_types[CW_AUDIT_TYPE_##id])

/* The type named name, or -ENOENT. */
int cw_audit_type_find(const char *name);

#endif
