// SPDX-License-Identifier: Apache-2.0
/*
 * Decisions per second: the seed policy, and a policy with 50 regex
 * conditions on run_command's arguments, against an in-memory counter view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/decide.h"
#include "policy/policy.h"
#include "rate/ratelimit.h"
#include "lib/util.h"

static double rate(const struct cw_policy *p, const struct cw_call *call,
		   struct cw_counter_view *view, long n)
{
	struct cw_verdict v;
	int64_t t0, t1;
	long i;

	t0 = cw_mono_us();
	for (i = 0; i < n; i++)
		cw_decide(p, call, view, t0, &v);
	t1 = cw_mono_us();
	return n / ((t1 - t0) / 1e6);
}

static char *regex_policy(int n)
{
	struct cw_buf b = { 0 };
	char item[256];
	int i;

	static const char head[] = "{\"version\":\"1\",\"default\":\"deny\",\"tools\":{\"run_command\":{\"deny_if\":[";
	static const char tail[] = "],\"limits\":[{\"counter\":\"run_command_rate\",\"window\":\"minute\",\"max\":10,\"scope\":\"grant\"}]}}}";

	cw_buf_append(&b, head, strlen(head));
	for (i = 0; i < n; i++) {
		int len = snprintf(item, sizeof(item),
				   "%s{\"path\":\"args.command\",\"op\":\"regex\",\"value\":\"(^|[;&| ])forbidden%d([ ;&|]|$)\"}",
				   i ? "," : "", i);
		cw_buf_append(&b, item, (size_t)len);
	}
	cw_buf_append(&b, tail, strlen(tail));
	return b.data;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct cw_rate_store *rs = cw_rate_open_memory();
	struct cw_counter_view view = cw_rate_view(rs);
	struct cw_policy *seed, *rx;
	struct cw_diag d;
	json_t *args = json_pack("{s:s}", "command",
				 "ls -la /home/user && git status --short");
	struct cw_call call = { "run_command", args, "local", "" };
	char *text = regex_policy(50);

	cw_diag_init(&d);
	seed = cw_policy_load_default(&d);
	rx = cw_policy_load_buffer(text, strlen(text), "<bench>", &d);
	if (!seed || !rx) {
		fprintf(stderr, "bench_decide: policy failed to load (%zu errors)\n", d.n);
		return 1;
	}
	printf("decisions_per_s_seed %.0f\n", rate(seed, &call, &view, n));
	printf("decisions_per_s_50_regex %.0f\n", rate(rx, &call, &view, n / 20));
	cw_policy_free(rx);
	cw_policy_free(seed);
	cw_diag_free(&d);
	cw_rate_close(rs);
	json_decref(args);
	free(text);
	return 0;
}
