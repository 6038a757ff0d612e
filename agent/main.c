// SPDX-License-Identifier: Apache-2.0
/*
 * cmdwarden: picks the subcommand named by the first argument and runs it.
 * Each subcommand lives in agent/cli/ (see cli/cli.h); the table below is
 * the list of them, and the one-line help `cmdwarden --help` prints.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "lib/util.h"

/* Names up to this long have their help start in one column. */
#define NAME_COLUMN 8

static int cmd_help(int argc, char **argv);

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;	/* NULL: not listed (an alias) */
} commands[] = {
	{ "serve", cw_cmd_serve,
	  "serve MCP over stdio or HTTP (run_command under the policy)" },
	{ "token", cw_cmd_token,
	  "make a bearer token for a grant of serve --http" },
	{ "check", cw_cmd_check, "validate a policy file" },
	{ "eval", cw_cmd_eval, "decide one tool call without running it" },
	{ "exec", cw_cmd_exec,
	  "decide and run one command, print its result as JSON" },
	{ "probe", cw_cmd_probe,
	  "which kernel layers this kernel and process can use" },
	{ "seccomp-profile", cw_cmd_seccomp_profile,
	  "print the default seccomp profile, a reason per group" },
	{ "audit", cw_cmd_audit,
	  "verify, tail, query and count the audit log" },
	{ "approve", cw_cmd_approve,
	  "approve a pending approval id (reject: refuse it)" },
	{ "version", cw_cmd_version, "print the version" },
	{ "reject", cw_cmd_approve, NULL },
	{ "--version", cw_cmd_version, NULL },
	{ "help", cmd_help, NULL },
	{ "--help", cmd_help, NULL },
	{ "-h", cmd_help, NULL },
};

static void usage_main(FILE *f)
{
	size_t i, len;

	fprintf(f, "usage: %s COMMAND [OPTIONS]\n\ncommands:\n", cw_cli_prog);
	for (i = 0; i < CW_ARRAY_SIZE(commands); i++) {
		if (!commands[i].help)
			continue;
		/* A longer name is followed by two spaces. */
		len = strlen(commands[i].name);
		fprintf(f, "  %-*s %s\n",
			(int)(len <= NAME_COLUMN ? NAME_COLUMN : len + 1),
			commands[i].name, commands[i].help);
	}
	fprintf(f, "\n`%s COMMAND --help` describes each command.\n",
		cw_cli_prog);
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage_main(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	/* A client that goes away must not kill us mid-audit. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage_main(stderr);
		return 2;
	}
	for (i = 0; i < CW_ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command \"%s\"\n", cw_cli_prog, argv[1]);
	usage_main(stderr);
	return 2;
}
