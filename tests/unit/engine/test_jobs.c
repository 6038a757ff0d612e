// SPDX-License-Identifier: Apache-2.0
/* The background job registry: launch, output so far, kill, grants,
 * pruning, and teardown with jobs still running. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "engine/jobs.h"

/* A stand-in for a command: launches, writes, then waits until killed
 * (or ends at once with code when exit_at_once). */
struct fake {
	pid_t pid;
	bool exit_at_once;
	int code;
	bool fail_launch;
};

static void fake_main(struct cw_job *job, void *arg)
{
	struct fake *f = arg;
	struct cw_spawn_result r = { 0 };
	struct pollfd p = { .fd = cw_job_cancel_fd(job), .events = POLLIN };

	if (f->fail_launch) {
		cw_job_finish(job, NULL, NULL, "could not launch the command: no such user");
		return;
	}
	/* Output first, so that a status right after the launch has it. */
	cw_job_output(job, 1, "hello ", 6);
	cw_job_output(job, 1, "world", 5);
	cw_job_output(job, 2, "warn", 4);
	cw_job_launched(job, f->pid);
	if (f->exit_at_once) {
		r.exit_code = f->code;
	} else {
		assert_int_equal(1, poll(&p, 1, 10000));
		r.exit_code = -1;
		r.term_signal = 9;
	}
	cw_job_finish(job, &r, NULL, NULL);
}

static json_t *wait_ended(struct cw_jobs *js, const char *inv)
{
	char msg[512];
	json_t *o;
	int i;

	for (i = 0; i < 2000; i++) {
		o = cw_jobs_status(js, inv, "g", msg, sizeof(msg));
		assert_non_null(o);
		if (json_is_false(json_object_get(o, "running")))
			return o;
		json_decref(o);
		usleep(5000);
	}
	fail_msg("job %s did not end", inv);
	return NULL;
}

static void test_launch_status_kill(void **state)
{
	struct cw_jobs *js = cw_jobs_new();
	struct fake f = { .pid = 4242 };
	struct cw_job *j;
	char msg[512];
	pid_t pid = 0;
	json_t *o;

	(void)state;
	assert_int_equal(0, cw_jobs_start(js, "inv-a", "g", 8, fake_main, &f, &j));
	assert_int_equal(0, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
	assert_int_equal(4242, pid);

	o = cw_jobs_status(js, "inv-a", "g", msg, sizeof(msg));
	assert_non_null(o);
	assert_true(json_is_true(json_object_get(o, "running")));
	assert_true(json_is_null(json_object_get(o, "exit_code")));
	/* bounded to 8 bytes, its first and last 4, while it runs: the
	 * middle is cut at a marker, flagged and counted */
	assert_string_equal("hell\n[... 3 bytes omitted ...]\norld",
			    json_string_value(json_object_get(o, "stdout")));
	assert_true(json_is_true(json_object_get(o, "truncated")));
	assert_int_equal(11, json_integer_value(json_object_get(o, "stdout_bytes")));
	assert_int_equal(3, json_integer_value(json_object_get(o, "stdout_omitted")));
	assert_string_equal("warn", json_string_value(json_object_get(o, "stderr")));
	json_decref(o);

	/* another grant neither sees nor kills it */
	assert_null(cw_jobs_status(js, "inv-a", "other", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "no background call \"inv-a\""));
	assert_null(cw_jobs_kill(js, "inv-a", "other", 1000, msg, sizeof(msg)));
	o = cw_jobs_status(js, "inv-a", "g", msg, sizeof(msg));
	assert_true(json_is_true(json_object_get(o, "running")));
	json_decref(o);

	o = cw_jobs_kill(js, "inv-a", "g", 10000, msg, sizeof(msg));
	assert_non_null(o);
	assert_true(json_is_false(json_object_get(o, "running")));
	assert_true(json_is_true(json_object_get(o, "killed")));
	assert_int_equal(137, json_integer_value(json_object_get(o, "exit_code")));
	assert_int_equal(9, json_integer_value(json_object_get(o, "signal")));
	json_decref(o);
	cw_jobs_free(js);
}

static void test_ends_by_itself(void **state)
{
	struct cw_jobs *js = cw_jobs_new();
	struct fake f = { .pid = 7, .exit_at_once = true, .code = 3 };
	struct cw_job *j;
	char msg[512];
	pid_t pid;
	json_t *o;

	(void)state;
	assert_int_equal(0, cw_jobs_start(js, "inv-b", "g", 1024, fake_main, &f, &j));
	assert_int_equal(0, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
	o = wait_ended(js, "inv-b");
	assert_int_equal(3, json_integer_value(json_object_get(o, "exit_code")));
	assert_true(json_is_false(json_object_get(o, "killed")));
	assert_string_equal("hello world", json_string_value(json_object_get(o, "stdout")));
	json_decref(o);
	/* killing an ended job changes nothing */
	o = cw_jobs_kill(js, "inv-b", "g", 1000, msg, sizeof(msg));
	assert_true(json_is_false(json_object_get(o, "killed")));
	json_decref(o);
	cw_jobs_free(js);
}

static void test_launch_failure(void **state)
{
	struct cw_jobs *js = cw_jobs_new();
	struct fake f = { .fail_launch = true };
	struct cw_job *j;
	char msg[512];
	pid_t pid;

	(void)state;
	assert_int_equal(0, cw_jobs_start(js, "inv-c", "g", 1024, fake_main, &f, &j));
	assert_int_equal(-1, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
	assert_string_equal("could not launch the command: no such user", msg);
	cw_jobs_free(js);
}

/* Only the newest CW_JOBS_KEEP_FINISHED ended jobs are kept. */
static void test_prune(void **state)
{
	struct cw_jobs *js = cw_jobs_new();
	struct fake f = { .pid = 1, .exit_at_once = true };
	struct cw_job *j;
	char inv[32], msg[512];
	pid_t pid;
	json_t *o;
	int i;

	(void)state;
	for (i = 0; i < CW_JOBS_KEEP_FINISHED + 5; i++) {
		snprintf(inv, sizeof(inv), "inv-%d", i);
		assert_int_equal(0, cw_jobs_start(js, inv, "g", 64, fake_main, &f, &j));
		assert_int_equal(0, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
		json_decref(wait_ended(js, inv));
	}
	/* one more start prunes down to the limit */
	assert_int_equal(0, cw_jobs_start(js, "inv-last", "g", 64, fake_main, &f, &j));
	assert_int_equal(0, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
	assert_null(cw_jobs_status(js, "inv-0", "g", msg, sizeof(msg)));
	snprintf(inv, sizeof(inv), "inv-%d", CW_JOBS_KEEP_FINISHED + 4);
	o = cw_jobs_status(js, inv, "g", msg, sizeof(msg));
	assert_non_null(o);
	json_decref(o);
	cw_jobs_free(js);
}

/* Freeing the registry kills what still runs and waits for it. */
static void test_free_kills_running(void **state)
{
	struct cw_jobs *js = cw_jobs_new();
	struct fake f = { .pid = 9 };
	struct cw_job *j;
	char msg[512];
	pid_t pid;

	(void)state;
	assert_int_equal(0, cw_jobs_start(js, "inv-d", "g", 64, fake_main, &f, &j));
	assert_int_equal(0, cw_job_wait_launched(j, &pid, msg, sizeof(msg)));
	cw_jobs_free(js);	/* returns only once fake_main saw the kill */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launch_status_kill),
		cmocka_unit_test(test_ends_by_itself),
		cmocka_unit_test(test_launch_failure),
		cmocka_unit_test(test_prune),
		cmocka_unit_test(test_free_kills_running),
	};

	return cmocka_run_group_tests_name("jobs", tests, NULL, NULL);
}
