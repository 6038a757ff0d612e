// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden exec -- COMMAND...`: decides and runs one command as a
 * run_command call and prints the E2B-shaped result.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "server/tools.h"
#include "lib/json.h"

enum { OPT_CWD = CW_OPT_OWN, OPT_TIMEOUT };

int cw_cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		CW_CLI_COMMON_OPTS,
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct cw_cli_common co = { 0 };
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .grant = "local",
				.session = "" };
	struct cw_call_result r;
	struct cw_buf cmd = { 0 };
	struct cw_engine *e = NULL;
	json_t *args = NULL, *out;
	const char *cwd = NULL;
	double timeout = 0;
	char *s, *end;
	int c, i, ret = 1;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (cw_cli_common_opt(c, &co))
			continue;
		switch (c) {
		case OPT_CWD:
			cwd = optarg;
			break;
		case OPT_TIMEOUT:
			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0)) {
				fprintf(stderr, "%s exec: --timeout wants seconds > 0, got \"%s\"\n",
					cw_cli_prog, optarg);
				return 2;
			}
			break;
		case CW_OPT_HELP:
			printf("usage: %s exec [OPTIONS] -- COMMAND...\n\n"
			       "Decides COMMAND (its words joined by spaces, run by the policy's shell)\n"
			       "as a run_command call and runs it when allowed. Prints the result as\n"
			       "E2B-shaped JSON on stdout. Exit 0 when it ran (see exit_code), 3 when\n"
			       "the policy refused it, 1 on error.\n\n%s"
			       "  --cwd DIR         working directory (within the policy's limits)\n"
			       "  --timeout SECS    shorter timeout than the policy's\n",
			       cw_cli_prog, cw_cli_common_help);
			return 0;
		default:
			return 2;
		}
	}
	if (co.bad)
		return 2;
	if (optind >= argc) {
		fprintf(stderr, "%s exec: no command given (usage: %s exec [OPTIONS] -- COMMAND...)\n",
			cw_cli_prog, cw_cli_prog);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		if (i > optind && cw_buf_append(&cmd, " ", 1) < 0)
			goto out;
		if (cw_buf_append(&cmd, argv[i], strlen(argv[i])) < 0)
			goto out;
	}
	args = json_pack("{s:s}", "command", cmd.data);
	if (!args)
		goto out;
	if (cwd)
		json_object_set_new(args, "cwd", json_string(cwd));
	if (timeout > 0)
		json_object_set_new(args, "timeout", json_real(timeout));
	e = cw_cli_open_engine(&co, true);
	if (!e)
		goto out;
	call.args = args;
	cw_engine_call(e, &call, &r);
	switch (r.outcome) {
	case CW_OUTCOME_RAN:
		out = cw_tool_result_json(&r, true);
		s = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) :
			  NULL;
		json_decref(out);
		if (s)
			puts(s);
		free(s);
		ret = s ? 0 : 1;
		break;
	case CW_OUTCOME_DENIED:
		fprintf(stderr, "%s\n", r.message);
		ret = 3;
		break;
	default:
		fprintf(stderr, "%s exec: %s\n", cw_cli_prog, r.message);
		break;
	}
	cw_engine_result_free(&r);
out:
	cw_engine_close(e);
	json_decref(args);
	cw_buf_free(&cmd);
	return ret;
}
