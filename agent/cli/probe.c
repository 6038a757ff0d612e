// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden probe [--json]`: which kernel features and layers this kernel
 * and process can use, and why not.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "kernel/probe.h"
#include "lib/json.h"

int cw_cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, CW_OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const struct cw_probe *p;
	bool as_json = false;
	json_t *j;
	char *s;
	int c, f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case CW_OPT_HELP:
			printf("usage: %s probe [--json]\n\n"
			       "Tries each kernel feature cmdwarden can use and prints yes or no with\n"
			       "what was found or why not. CW_PROBE_DISABLE=name,... forces features\n"
			       "off (for tests).\n", cw_cli_prog);
			return 0;
		default:
			return 2;
		}
	}
	p = cw_engine_probe();
	if (as_json) {
		j = cw_probe_json(p);
		json_object_set_new(j, "layers", cw_engine_layers());
		json_object_set_new(j, "layers_off", cw_engine_layers_off());
		s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		json_decref(j);
		if (!s)
			return 1;
		puts(s);
		free(s);
		return 0;
	}
	for (f = 0; f < CW_FEAT_COUNT; f++)
		printf("%-22s %-3s %s\n", cw_probe_name(f),
		       p->item[f].ok ? "yes" : "no", p->item[f].detail);
	j = cw_engine_layers();
	printf("\nlayers:");
	{
		const char *k;
		json_t *v;

		json_object_foreach(j, k, v)
			printf(" %s=%s", k, json_is_true(v) ? "on" : "off");
		printf("\n");
		json_decref(j);
		j = cw_engine_layers_off();
		json_object_foreach(j, k, v)
			printf("  %s is off: %s\n", k, json_string_value(v));
	}
	json_decref(j);
	return 0;
}
