// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden approve ID`, `cmdwarden reject ID`, `cmdwarden approve
 * --list`: an operator deciding pending approvals through the serving
 * agents' control sockets.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "server/control.h"
#include "engine/engine.h"

enum { OPT_STATE = 3000, OPT_LIST, OPT_HELP };

static void usage(FILE *f, const char *cmd)
{
	fprintf(f,
		"usage: cmdwarden %s [--state-dir DIR] ID\n"
		"       cmdwarden approve [--state-dir DIR] --list\n"
		"\n"
		"Decides a pending approval id that a require_approval call was denied\n"
		"with. After `approve`, the identical call, retried within the id's\n"
		"lifetime, runs once; after `reject` it stays denied. --list shows the\n"
		"pending ids. Talks to every agent serving with the same state directory\n"
		"(default " CW_DEFAULT_STATE_DIR ") through DIR/control/*.sock; only\n"
		"root or the agents' own user may.\n"
		"Exit 0 when done, 1 when refused (unknown, expired or already decided\n"
		"id; no agent), 2 for bad usage.\n",
		cmd);
}

int cw_cmd_approve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *state = CW_DEFAULT_STATE_DIR;
	struct cw_error err = { 0 };
	json_t *req, *reply = NULL, *v;
	bool list = false;
	size_t i;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_STATE:
			state = optarg;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_HELP:
			usage(stdout, cmd);
			return 0;
		default:
			usage(stderr, cmd);
			return 2;
		}
	}
	if (list ? (optind != argc || strcmp(cmd, "approve")) :
		   optind != argc - 1) {
		usage(stderr, cmd);
		return 2;
	}
	req = list ? json_pack("{s:s}", "op", "list") :
		     json_pack("{s:s, s:s}", "op", cmd, "id", argv[optind]);
	ret = req ? cw_control_request(state, req, &reply, &err) : -ENOMEM;
	json_decref(req);
	if (ret == -ENOENT) {
		fprintf(stderr, "cmdwarden %s: no agent is serving with state directory %s (no control socket in %s/control)\n",
			cmd, state, state);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "cmdwarden %s: %s\n", cmd,
			err.text[0] ? err.text : strerror(-ret));
		return 1;
	}
	if (list) {
		json_array_foreach(json_object_get(reply, "pending"), i, v)
			printf("%s\t%s\t%s\texpires in %llds\t%s\n",
			       json_string_value(json_object_get(v, "id")),
			       json_string_value(json_object_get(v, "grant")),
			       json_string_value(json_object_get(v, "tool")),
			       (long long)json_integer_value(
				       json_object_get(v, "expires_in_s")),
			       json_string_value(json_object_get(v, "summary")));
		json_decref(reply);
		return 0;
	}
	if (json_is_true(json_object_get(reply, "ok"))) {
		printf("%s\n", json_string_value(json_object_get(reply, "message")));
		json_decref(reply);
		return 0;
	}
	fprintf(stderr, "cmdwarden %s: %s\n", cmd,
		json_string_value(json_object_get(reply, "error")));
	json_decref(reply);
	return 1;
}
