/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `cmdwarden audit verify|tail|query|stats`: reading the audit trail.
 */
#ifndef CW_CLI_AUDIT_H
#define CW_CLI_AUDIT_H

/* argv[0] is "audit"; returns the process exit status. */
int cw_cmd_audit(int argc, char **argv);

#endif
