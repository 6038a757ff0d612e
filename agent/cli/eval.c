// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden eval`: decides one tool call without running it and prints the
 * verdict as JSON, optionally against the counters of a state directory.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "lib/json.h"
#include "policy/decide.h"
#include "policy/policy.h"
#include "rate/ratelimit.h"

enum { OPT_TOOL = CW_OPT_OWN, OPT_ARGS, OPT_GRANT, OPT_SESSION };

int cw_cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, CW_OPT_POLICY },
		{ "state-dir", required_argument, NULL, CW_OPT_STATE },
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "args", required_argument, NULL, OPT_ARGS },
		{ "grant", required_argument, NULL, OPT_GRANT },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "help", no_argument, NULL, CW_OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy = NULL, *state = NULL, *tool = NULL, *args = "{}";
	struct cw_call call = { .grant = "local", .session = "" };
	struct cw_rate_store *rs = NULL;
	struct cw_counter_view view, *vp = NULL;
	struct cw_policy *p = NULL;
	struct cw_verdict v;
	struct cw_error err;
	struct cw_diag d;
	json_error_t jerr;
	json_t *a = NULL, *out;
	char *s;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case CW_OPT_POLICY: policy = optarg; break;
		case CW_OPT_STATE: state = optarg; break;
		case OPT_TOOL: tool = optarg; break;
		case OPT_ARGS: args = optarg; break;
		case OPT_GRANT: call.grant = optarg; break;
		case OPT_SESSION: call.session = optarg; break;
		case CW_OPT_HELP:
			printf("usage: %s eval [--policy FILE] --tool NAME [--args JSON]\n"
			       "          [--grant NAME] [--session ID] [--state-dir DIR]\n\n"
			       "Decides one call and prints the verdict as JSON: verdict, rule, reason\n"
			       "and the counters it would use. Runs nothing and changes no counter;\n"
			       "with --state-dir the current counts there are taken into account.\n"
			       "Exit 0 when allowed, 3 when not, 1 on error.\n",
			       cw_cli_prog);
			return 0;
		default:
			return 2;
		}
	}
	if (!tool) {
		fprintf(stderr, "%s eval: --tool NAME is required\n",
			cw_cli_prog);
		return 2;
	}
	a = json_loads(args, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(a)) {
		fprintf(stderr, "%s eval: --args must be a JSON object: %s\n",
			cw_cli_prog, a ? "got another JSON value" : jerr.text);
		goto out;
	}
	cw_diag_init(&d);
	p = cw_engine_load_policy(policy, &d);
	if (!p)
		cw_cli_print_diag(&d);
	cw_diag_free(&d);
	if (!p)
		goto out;
	if (state) {
		rs = cw_rate_open_sqlite(state, &err);
		if (!rs) {
			fprintf(stderr, "%s eval: %s\n", cw_cli_prog, err.text);
			goto out;
		}
		view = cw_rate_view(rs);
		vp = &view;
	}
	call.tool = tool;
	call.args = a;
	if (cw_decide(p, &call, vp, cw_now_us(), &v) < 0) {
		fprintf(stderr, "%s eval: internal error deciding\n",
			cw_cli_prog);
		goto out;
	}
	out = json_pack("{s:s, s:s, s:s, s:[]}", "verdict",
			cw_verdict_name(v.kind), "rule", v.rule, "reason",
			v.reason, "counters");
	for (size_t i = 0; out && i < v.nlimits; i++)
		json_array_append_new(json_object_get(out, "counters"),
				      json_string(v.limits[i].key));
	if (out && v.kind == CW_VERDICT_RATE_LIMITED)
		json_object_set_new(out, "retry_after_ms",
				    json_integer(v.retry_after_us / 1000));
	s = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(out);
	if (!s)
		goto out;
	puts(s);
	free(s);
	ret = v.kind == CW_VERDICT_ALLOW ? 0 : 3;
out:
	cw_rate_close(rs);
	cw_policy_free(p);
	json_decref(a);
	return ret;
}
