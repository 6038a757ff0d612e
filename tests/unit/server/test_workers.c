// SPDX-License-Identifier: Apache-2.0
/* The worker pool: work runs, finished threads wait and are reused, a
 * burst gets a thread per piece of work, and waiting threads leave. */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "unit.h"
#include "server/workers.h"

struct work {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;		/* the thread that ran it */
	bool done;
	bool *release;		/* when set, wait until *release */
};

#define WORK_INIT                                                     \
	{ .lock = PTHREAD_MUTEX_INITIALIZER,                          \
	  .cond = PTHREAD_COND_INITIALIZER }

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;

static void work_main(void *arg)
{
	struct work *w = arg;

	if (w->release) {
		pthread_mutex_lock(&gate_lock);
		while (!*w->release)
			pthread_cond_wait(&gate_cond, &gate_lock);
		pthread_mutex_unlock(&gate_lock);
	}
	pthread_mutex_lock(&w->lock);
	w->tid = (pid_t)syscall(SYS_gettid);
	w->done = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void wait_done(struct work *w)
{
	pthread_mutex_lock(&w->lock);
	while (!w->done)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

/* The thread parks itself after returning from the work: poll for it. */
static void wait_idle(unsigned n)
{
	int i;

	for (i = 0; i < 5000 && cw_workers_idle() != n; i++)
		usleep(1000);
	assert_int_equal(n, cw_workers_idle());
}

/* Runs first so that the pool starts empty. */
static void test_runs_and_reuses(void **state)
{
	struct work a = WORK_INIT, b = WORK_INIT;

	(void)state;
	assert_int_equal(0, cw_workers_idle());
	assert_int_equal(0, cw_workers_run(work_main, &a));
	wait_done(&a);
	assert_true(a.tid > 0);
	assert_int_not_equal(syscall(SYS_gettid), a.tid);
	wait_idle(1);
	/* The waiting thread takes the next piece of work. */
	assert_int_equal(0, cw_workers_run(work_main, &b));
	wait_done(&b);
	assert_int_equal(a.tid, b.tid);
	wait_idle(1);
}

/* Runs n pieces of work held at a gate, all at once, then opens the gate
 * and waits for them: none may wait for a thread another one holds. */
static void run_held(struct work *w, int n)
{
	bool release = false;
	int i;

	for (i = 0; i < n; i++) {
		w[i] = (struct work)WORK_INIT;
		w[i].release = &release;
		assert_int_equal(0, cw_workers_run(work_main, &w[i]));
	}
	assert_int_equal(0, cw_workers_idle());
	pthread_mutex_lock(&gate_lock);
	release = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	for (i = 0; i < n; i++)
		wait_done(&w[i]);
}

/* The threads of this process. */
static int threads(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Each piece of a burst gets a thread of its own, and afterwards no more
 * than CW_WORKERS_MAX_IDLE stay. */
static void test_burst(void **state)
{
	enum { N = CW_WORKERS_MAX_IDLE + 4 };
	struct work w[N];
	int i, j;

	(void)state;
	run_held(w, N);
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			assert_int_not_equal(w[i].tid, w[j].tid);
	wait_idle(CW_WORKERS_MAX_IDLE);
	/* and the rest have left (the next test counts on no straggler
	 * coming back to wait after it took every waiting thread) */
	for (i = 0; i < 5000 && threads() != 1 + CW_WORKERS_MAX_IDLE; i++)
		usleep(1000);
	assert_int_equal(1 + CW_WORKERS_MAX_IDLE, threads());
}

/* A thread without work for the idle time leaves; work still runs after. */
static void test_idle_threads_leave(void **state)
{
	struct work w[CW_WORKERS_MAX_IDLE], a = WORK_INIT;

	(void)state;
	cw_workers_set_idle_ms(20);
	/* Those waiting already keep their old deadline: give each of them
	 * work, so that all wait again under the short one. */
	assert_int_equal(CW_WORKERS_MAX_IDLE, cw_workers_idle());
	run_held(w, CW_WORKERS_MAX_IDLE);
	wait_idle(0);
	assert_int_equal(0, cw_workers_run(work_main, &a));
	wait_done(&a);
	cw_workers_set_idle_ms(CW_WORKERS_IDLE_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_and_reuses),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_idle_threads_leave),
	};

	return cmocka_run_group_tests_name("workers", tests, NULL, NULL);
}
