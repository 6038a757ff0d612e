// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden check --policy FILE`: validates a policy, lists every error
 * and the lint warnings.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "policy/policy.h"

int cw_cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, CW_OPT_POLICY },
		{ "help", no_argument, NULL, CW_OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy = NULL;
	struct cw_policy *p;
	struct cw_diag d;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case CW_OPT_POLICY:
			policy = optarg;
			break;
		case CW_OPT_HELP:
			printf("usage: %s check --policy FILE\n\n"
			       "Validates a policy: syntax, every field, regexes, syscall names and\n"
			       "required layers. Lists every error; exit 0 when valid, 1 when not.\n",
			       cw_cli_prog);
			return 0;
		default:
			return 2;
		}
	}
	if (!policy && optind < argc)
		policy = argv[optind];
	if (!policy) {
		fprintf(stderr, "%s check: --policy FILE is required\n",
			cw_cli_prog);
		return 2;
	}
	cw_diag_init(&d);
	p = cw_engine_load_policy(policy, &d);
	if (p) {
		struct cw_diag w;

		cw_diag_init(&w);
		cw_engine_lint(p, &w);
		cw_cli_print_diag_as(&w, "warning: ");
		cw_diag_free(&w);
		printf("%s: ok\n", policy);
	} else {
		cw_cli_print_diag(&d);
		fprintf(stderr, "%s: %zu error%s\n", policy, d.n,
			d.n == 1 ? "" : "s");
	}
	cw_policy_free(p);
	cw_diag_free(&d);
	return p ? 0 : 1;
}
