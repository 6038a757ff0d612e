/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands of cmdwarden, one file each in agent/cli/. Each takes the
 * arguments from its own name on (argv[0] is the subcommand's name) and
 * returns the process exit status.
 */
#ifndef CW_CLI_CLI_H
#define CW_CLI_CLI_H

/* serve.c: MCP over stdio, or Streamable HTTP with --http. */
int cw_cmd_serve(int argc, char **argv);
/* token.c: a bearer token for a grant of serve --http. */
int cw_cmd_token(int argc, char **argv);
/* check.c: validate a policy file. */
int cw_cmd_check(int argc, char **argv);
/* eval.c: decide one tool call without running it. */
int cw_cmd_eval(int argc, char **argv);
/* exec.c: decide and run one command, print its result as JSON. */
int cw_cmd_exec(int argc, char **argv);
/* probe.c: which kernel layers this kernel and process can use. */
int cw_cmd_probe(int argc, char **argv);
/* seccomp_profile.c: the default seccomp profile as a Markdown table. */
int cw_cmd_seccomp_profile(int argc, char **argv);
/* audit.c: verify, tail, query and count the audit log. */
int cw_cmd_audit(int argc, char **argv);
/* approve.c: `cmdwarden approve ID`, `cmdwarden reject ID`, `cmdwarden
 * approve --list`: an operator deciding pending approvals through the
 * serving agents' control sockets. argv[0] is "approve" or "reject". */
int cw_cmd_approve(int argc, char **argv);
/* version.c: print the version. */
int cw_cmd_version(int argc, char **argv);

#endif
