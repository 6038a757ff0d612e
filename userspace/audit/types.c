// SPDX-License-Identifier: Apache-2.0
/* The names of the record types (types.h), one row each. */
#include <errno.h>
#include <string.h>

#include "audit/types.h"

const char *const cw_audit_types[CW_AUDIT_NTYPES + 1] = {
	[CW_AUDIT_TYPE_AGENT] = "agent",
	[CW_AUDIT_TYPE_ACCESS] = "access",
	[CW_AUDIT_TYPE_DECISION] = "decision",
	[CW_AUDIT_TYPE_LAUNCH] = "launch",
	[CW_AUDIT_TYPE_EXEC] = "exec",
	[CW_AUDIT_TYPE_PROCESS] = "process",
	[CW_AUDIT_TYPE_FILE] = "file",
	[CW_AUDIT_TYPE_READS] = "reads",
	[CW_AUDIT_TYPE_NET] = "net",
	[CW_AUDIT_TYPE_SECCOMP] = "seccomp",
	[CW_AUDIT_TYPE_LIMIT] = "limit",
	[CW_AUDIT_TYPE_EXIT] = "exit",
	[CW_AUDIT_TYPE_APPROVAL] = "approval",
	[CW_AUDIT_TYPE_PRUNED] = "pruned",
	[CW_AUDIT_NTYPES] = NULL,
};

int cw_audit_type_find(const char *name)
{
	int i;

	for (i = 0; i < CW_AUDIT_NTYPES; i++)
		if (!strcmp(name, cw_audit_types[i]))
			return i;
	return -ENOENT;
}
