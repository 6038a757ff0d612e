/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `cmdwarden approve ID`, `cmdwarden reject ID`, `cmdwarden approve
 * --list`: an operator deciding pending approvals through the serving
 * agents' control sockets.
 */
#ifndef CW_CLI_APPROVE_H
#define CW_CLI_APPROVE_H

/* argv[0] is "approve" or "reject"; returns the process exit status. */
int cw_cmd_approve(int argc, char **argv);

#endif
