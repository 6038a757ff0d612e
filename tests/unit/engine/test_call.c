// SPDX-License-Identifier: Apache-2.0
/* The call state machine: a call is decided once at submission (a refused
 * or invalid one answered there, any other run on a worker under that
 * verdict), and a reservation the call does not use is given back on one
 * path, with an exit record, whichever launch step failed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "engine/engine.h"
#include "server/tools.h"

/* One counter, one call per hour for everyone: a call the limit lets
 * through after a failed one proves the failed one gave its count back. */
static const char policy_json[] =
	"{\"version\": \"1\", \"default\": \"deny\", \"tools\": {"
	"\"run_command\": {"
	"\"deny_if\": [{\"path\": \"args.command\", \"op\": \"contains\","
	" \"value\": \"forbidden\", \"reason\": \"not that\"}],"
	"\"limits\": [{\"counter\": \"once\", \"window\": \"hour\","
	" \"max\": 1, \"scope\": \"global\"}]},"
	"\"other_tool\": {"
	"\"limits\": [{\"counter\": \"once\", \"window\": \"hour\","
	" \"max\": 1, \"scope\": \"global\"}]}}}";

static const char deny_all_json[] =
	"{\"version\": \"1\", \"default\": \"deny\", \"tools\": {"
	"\"run_command\": {\"action\": \"deny\", \"reason\": \"closed\"}}}";

struct fixture {
	char dir[64];
	char state[96];
	char audit[96];
	char policy[96];
	char deny_all[96];
	struct cw_engine *engine;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(strlen(text), fwrite(text, 1, strlen(text), f));
	assert_int_equal(0, fclose(f));
}

static struct fixture *fixture_open(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct cw_engine_opts o = { 0 };
	struct cw_diag d;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/cw-call-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", f->dir);
	snprintf(f->policy, sizeof(f->policy), "%s/policy.json", f->dir);
	snprintf(f->deny_all, sizeof(f->deny_all), "%s/deny.json", f->dir);
	write_file(f->policy, policy_json);
	write_file(f->deny_all, deny_all_json);
	o.policy_path = f->policy;
	o.state_dir = f->state;
	o.audit_path = f->audit;
	cw_diag_init(&d);
	f->engine = cw_engine_open(&o, &d);
	if (d.n)
		fprintf(stderr, "# %s\n", d.items[0].text);
	assert_int_equal(0, d.n);
	cw_diag_free(&d);
	assert_non_null(f->engine);
	return f;
}

static void fixture_close(struct fixture *f)
{
	char cmd[128];

	cw_engine_close(f->engine);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(0, system(cmd));
	free(f);
}

static int setup(void **state)
{
	*state = fixture_open();
	return 0;
}

static int teardown(void **state)
{
	fixture_close(*state);
	return 0;
}

static json_t *run_args(const char *command)
{
	json_t *a = json_pack("{s:s}", "command", command);

	assert_non_null(a);
	return a;
}

/* The types of the decision, launch and exit records of invocation inv
 * (kernel event records left out), in order, as "decision,launch,exit";
 * *launched gets the exit record's "launched"
 * (1 when it has none, -1 with no exit record). */
static char *records_of(struct fixture *f, const char *inv, int *launched)
{
	FILE *in = fopen(f->audit, "r");
	static char types[512];
	char line[1 << 16];

	assert_non_null(in);
	types[0] = '\0';
	if (launched)
		*launched = -1;
	while (fgets(line, sizeof(line), in)) {
		json_t *rec = json_loads(line, 0, NULL);
		const char *type, *id;

		assert_non_null(rec);
		type = json_string_value(json_object_get(rec, "type"));
		id = json_string_value(json_object_get(rec, "invocation"));
		if (id && type && !strcmp(id, inv) &&
		    (!strcmp(type, "decision") || !strcmp(type, "launch") ||
		     !strcmp(type, "exit"))) {
			if (types[0])
				strcat(types, ",");
			strcat(types, type);
			if (!strcmp(type, "exit") && launched) {
				json_t *l = json_object_get(rec, "launched");

				*launched = l ? json_is_true(l) : 1;
			}
		}
		json_decref(rec);
	}
	fclose(in);
	return types;
}

static const char *decision_verdict(struct fixture *f, const char *inv)
{
	FILE *in = fopen(f->audit, "r");
	static char verdict[32];
	char line[1 << 16];

	assert_non_null(in);
	verdict[0] = '\0';
	while (fgets(line, sizeof(line), in)) {
		json_t *rec = json_loads(line, 0, NULL);
		const char *id;

		id = json_string_value(json_object_get(rec, "invocation"));
		if (id && !strcmp(id, inv) &&
		    !strcmp(json_string_value(json_object_get(rec, "type")),
			    "decision"))
			snprintf(verdict, sizeof(verdict), "%s",
				 json_string_value(json_object_get(rec,
								   "verdict")));
		json_decref(rec);
	}
	fclose(in);
	return verdict;
}

/* A call the policy refuses is answered at submission: recorded, denied,
 * with nothing left for a worker. */
static void test_refused_answered_at_submission(void **state)
{
	struct fixture *f = *state;
	json_t *args = run_args("echo forbidden");
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .args = args,
				.grant = "local", .session = "" };
	/* Not NULL: the submission must clear it. */
	struct cw_pending *p = (struct cw_pending *)&call;
	struct cw_call_result r;

	assert_int_equal(CW_CALL_ANSWERED,
			 cw_engine_submit(f->engine, NULL, &call, NULL, &r, &p));
	assert_null(p);
	assert_int_equal(CW_OUTCOME_DENIED, r.outcome);
	assert_non_null(strstr(r.message, "[POLICY DENIED] not that"));
	assert_int_equal(1, cw_engine_decisions(f->engine));
	assert_string_equal("decision", records_of(f, r.invocation, NULL));
	assert_string_equal("deny", decision_verdict(f, r.invocation));
	cw_engine_result_free(&r);
	json_decref(args);
}

/* Invalid arguments are answered at submission too, undecided. */
static void test_invalid_answered_at_submission(void **state)
{
	struct fixture *f = *state;
	json_t *args = json_pack("{s:s, s:i}", "command", "true", "bogus", 1);
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .args = args,
				.grant = "local", .session = "" };
	struct cw_pending *p;
	struct cw_call_result r;

	assert_int_equal(CW_CALL_ANSWERED,
			 cw_engine_submit(f->engine, NULL, &call, NULL, &r, &p));
	assert_null(p);
	assert_int_equal(CW_OUTCOME_INVALID, r.outcome);
	assert_non_null(strstr(r.message, "unknown argument \"bogus\""));
	assert_int_equal(0, cw_engine_decisions(f->engine));
	assert_string_equal("invalid", decision_verdict(f, r.invocation));
	cw_engine_result_free(&r);
	json_decref(args);
}

struct worker {
	struct cw_pending *p;
	const struct cw_call *call;
	struct cw_call_result r;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	cw_engine_run(w->p, w->call, NULL, &w->r);
	return NULL;
}

/* An allowed run_command needs a worker and runs there under the verdict
 * of its submission: not decided again, even though the rules that would
 * decide it now refuse every command. */
static void test_allowed_needs_worker_decided_once(void **state)
{
	struct fixture *f = *state;
	json_t *args = run_args("echo ran");
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .args = args,
				.grant = "local", .session = "" };
	struct worker w = { .call = &call };
	struct cw_call_result r;
	struct cw_rules *closed;
	struct cw_diag d;
	pthread_t th;

	assert_int_equal(CW_CALL_NEEDS_WORKER,
			 cw_engine_submit(f->engine, NULL, &call, NULL, &r,
					  &w.p));
	assert_non_null(w.p);
	assert_int_equal(1, cw_engine_decisions(f->engine));
	/* Nothing is recorded before the worker takes it. */
	assert_string_equal("", records_of(f, r.invocation, NULL));

	cw_diag_init(&d);
	closed = cw_rules_load(f->deny_all, &d);
	assert_non_null(closed);
	cw_diag_free(&d);
	cw_engine_set_rules(f->engine, closed);
	cw_rules_put(closed);

	assert_int_equal(0, pthread_create(&th, NULL, worker_main, &w));
	assert_int_equal(0, pthread_join(th, NULL));
	assert_int_equal(CW_OUTCOME_RAN, w.r.outcome);
	assert_string_equal("ran\n", w.r.run.out);
	assert_int_equal(1, cw_engine_decisions(f->engine));
	assert_string_equal("allow", decision_verdict(f, w.r.invocation));
	cw_engine_result_free(&w.r);

	/* The rules now in force refuse the next call at submission. */
	cw_engine_call(f->engine, &call, &r);
	assert_int_equal(CW_OUTCOME_DENIED, r.outcome);
	assert_int_equal(2, cw_engine_decisions(f->engine));
	cw_engine_result_free(&r);
	json_decref(args);
}

/* Whether step s of a launch runs on this machine (the layers it needs
 * are on). */
static bool step_runs(enum cw_launch_step s)
{
	json_t *l = cw_engine_layers();
	bool cg = json_is_true(json_object_get(l, "cgroup"));
	bool on = true;

	if (s == CW_STEP_CGROUP)
		on = cg;
	else if (s == CW_STEP_NET)
		on = cg && json_is_true(json_object_get(l, "bpf_net"));
	else if (s == CW_STEP_TRACE)
		on = cg; /* tracepoint BPF, else fanotify */
	json_decref(l);
	return on;
}

/* A failure at each launch step: the call fails with a decision record
 * and an exit record saying nothing launched, and its count is given
 * back, so the one call the limit allows still runs (and the next does
 * not: the count is taken by that one). */
static void test_failed_launch_gives_back(void **state)
{
	static const char *const names[] = {
		[CW_STEP_LANDLOCK] = "landlock", [CW_STEP_RECORD] = "record",
		[CW_STEP_CGROUP] = "cgroup", [CW_STEP_NET] = "net",
		[CW_STEP_TRACE] = "trace", [CW_STEP_SPAWN] = "spawn",
	};
	json_t *args = run_args("true");
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .args = args,
				.grant = "local", .session = "" };
	struct cw_call_result r;
	enum cw_launch_step s;
	int launched;

	(void)state;
	for (s = CW_STEP_LANDLOCK; s <= CW_STEP_SPAWN; s++) {
		struct fixture *f;
		char want[64];

		if (!step_runs(s)) {
			fprintf(stderr, "# step %s does not run here: skipped\n",
				names[s]);
			continue;
		}
		f = fixture_open();
		cw_engine_fail_at(f->engine, s);
		cw_engine_call(f->engine, &call, &r);
		assert_int_equal(CW_OUTCOME_FAILED, r.outcome);
		/* The launch record is there unless writing it failed. */
		snprintf(want, sizeof(want), "decision,%sexit",
			 s > CW_STEP_RECORD ? "launch," : "");
		assert_string_equal(want, records_of(f, r.invocation,
						     &launched));
		assert_int_equal(0, launched);
		assert_string_equal("allow", decision_verdict(f, r.invocation));
		cw_engine_result_free(&r);

		cw_engine_fail_at(f->engine, CW_STEP_NONE);
		cw_engine_call(f->engine, &call, &r);
		assert_int_equal(CW_OUTCOME_RAN, r.outcome);
		assert_string_equal("decision,launch,exit",
				    records_of(f, r.invocation, &launched));
		assert_int_equal(1, launched);
		cw_engine_result_free(&r);

		cw_engine_call(f->engine, &call, &r);
		assert_int_equal(CW_OUTCOME_DENIED, r.outcome);
		assert_int_equal(CW_VERDICT_RATE_LIMITED, r.verdict.kind);
		cw_engine_result_free(&r);
		fixture_close(f);
	}
	json_decref(args);
}

/* A reservation not used by an allowed call of a tool this server does
 * not have goes back on the same path, with its exit record. */
static void test_unknown_tool_gives_back(void **state)
{
	struct fixture *f = *state;
	json_t *args = run_args("true");
	struct cw_call other = { .tool = "other_tool", .args = NULL,
				 .grant = "local", .session = "" };
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .args = args,
				.grant = "local", .session = "" };
	struct cw_call_result r;
	int launched;

	cw_engine_call(f->engine, &other, &r);
	assert_int_equal(CW_OUTCOME_UNKNOWN_TOOL, r.outcome);
	assert_string_equal("decision,exit",
			    records_of(f, r.invocation, &launched));
	assert_int_equal(0, launched);
	cw_engine_result_free(&r);
	cw_engine_call(f->engine, &call, &r);
	assert_int_equal(CW_OUTCOME_RAN, r.outcome);
	cw_engine_result_free(&r);
	json_decref(args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_answered_at_submission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_answered_at_submission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allowed_needs_worker_decided_once, setup, teardown),
		cmocka_unit_test(test_failed_launch_gives_back),
		cmocka_unit_test_setup_teardown(test_unknown_tool_gives_back, setup, teardown),
	};
	return cmocka_run_group_tests_name("call", tests, NULL, NULL);
}
