// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "lib/util.h"

static void test_format_ts(void **state)
{
	char buf[40];

	(void)state;
	cw_format_ts(1764451093123456LL, buf, sizeof(buf));
	assert_string_equal("2025-11-29T21:18:13.123456Z", buf);
	cw_format_ts(5, buf, sizeof(buf));
	assert_string_equal("1970-01-01T00:00:00.000005Z", buf);
}

/* What cw_format_ts must give, by the plain route. */
static void ts_ref(int64_t us, char *buf, size_t len)
{
	time_t secs = (time_t)(us / 1000000);
	struct tm tm;
	char base[32];

	assert_non_null(gmtime_r(&secs, &tm));
	assert_true(strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) > 0);
	snprintf(buf, len, "%s.%06lldZ", base, (long long)(us % 1000000));
}

static void *format_other_second(void *arg)
{
	char *buf = arg;

	cw_format_ts(1000000000000000LL, buf, 40);
	return NULL;
}

/* The date and time are kept from one call to the next within a second:
 * crossing seconds, minutes, days and years, forwards and back, and with
 * another thread in another second, each result is the plain one. */
static void test_format_ts_seconds(void **state)
{
	static const int64_t at[] = {
		1764451093999999LL, 1764451094000000LL, 1764451094000001LL,
		1764451093000000LL, 1764547199999999LL, 1764547200000000LL,
		1767225599999999LL, 1767225600000000LL, 1767225599500000LL,
		0,		    999999,		1000000,
		1764451094123456LL, 1764451094000010LL, 1764451094999999LL,
	};
	char got[40], want[40], other[40];
	pthread_t t;
	size_t i;
	int64_t us;

	(void)state;
	for (i = 0; i < CW_ARRAY_SIZE(at); i++) {
		cw_format_ts(at[i], got, sizeof(got));
		ts_ref(at[i], want, sizeof(want));
		assert_string_equal(want, got);
		if (i == 4) {
			assert_int_equal(0, pthread_create(&t, NULL,
							   format_other_second,
							   other));
			assert_int_equal(0, pthread_join(t, NULL));
			assert_string_equal("2001-09-09T01:46:40.000000Z", other);
		}
	}
	/* one step of 0.37 s at a time across two days */
	for (us = 1764460800000000LL - 86400000000LL;
	     us < 1764460800000000LL + 86400000000LL; us += 370000) {
		cw_format_ts(us, got, sizeof(got));
		ts_ref(us, want, sizeof(want));
		assert_string_equal(want, got);
	}
	/* too small a buffer: cut short like snprintf, still terminated */
	cw_format_ts(1764451094000001LL, got, 20);
	assert_string_equal("2025-11-29T21:18:14", got);
	cw_format_ts(1764451094000001LL, got, 27);
	assert_string_equal("2025-11-29T21:18:14.000001", got);
}

/* A deadline is normalised (tv_nsec below a second) and lies ms ahead:
 * 999 ms from any moment carries into the seconds at most once. */
static void test_deadline_ms(void **state)
{
	static const int64_t ms[] = { 0, 1, 999, 1000, 1500, 10000 };
	struct timespec before, d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		clock_gettime(CLOCK_MONOTONIC, &before);
		cw_deadline_ms(CLOCK_MONOTONIC, ms[i], &d);
		assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
		int64_t ahead = (int64_t)(d.tv_sec - before.tv_sec) * 1000000000LL +
				(d.tv_nsec - before.tv_nsec);
		assert_true(ahead >= ms[i] * 1000000LL);
		assert_true(ahead < ms[i] * 1000000LL + 1000000000LL);
	}
}

static void test_diag_format(void **state)
{
	struct cw_diag d;
	char buf[1024];

	(void)state;
	cw_diag_init(&d);
	cw_diag_add(&d, "p.json", 3, 7, "tools.x.action", "expected %s",
		    "\"allow\"");
	assert_int_equal(1, d.n);
	cw_error_format(&d.items[0], buf, sizeof(buf));
	assert_string_equal("p.json:3:7: tools.x.action: expected \"allow\"", buf);
	cw_diag_free(&d);
}

static void test_buf_grows(void **state)
{
	struct cw_buf b = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 1000; i++)
		assert_int_equal(0, cw_buf_append(&b, "abc", 3));
	assert_int_equal(3000, b.len);
	assert_int_equal('\0', b.data[b.len]);
	assert_memory_equal("abcabc", b.data + 2994, 6);
	cw_buf_free(&b);
}

static void test_random_ids_differ(void **state)
{
	char a[32], b[32];

	(void)state;
	cw_random_id("inv-", a, sizeof(a));
	cw_random_id("inv-", b, sizeof(b));
	assert_int_equal(20, strlen(a));
	assert_memory_equal("inv-", a, 4);
	assert_string_not_equal(a, b);
}

/* Whether signal sig is ignored, from /proc (bit sig - 1 of SigIgn). */
static bool ignored(int sig)
{
	char line[128];
	unsigned long long mask = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigIgn: %llx", &mask) == 1)
			break;
	if (f)
		fclose(f);
	return mask >> (sig - 1) & 1;
}

static void test_signal_set(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	/* In a child: the test runner's own dispositions stay as they are. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* 32 is glibc's own, which its sigaction refuses (ASan's
		 * interceptor does not, so that is not asserted here); the
		 * runner's parent may have left it ignored. */
		if (cw_signal_set(32, SIG_DFL) || ignored(32))
			_exit(1);
		if (cw_signal_set(32, SIG_IGN) || !ignored(32))
			_exit(2);
		if (cw_signal_set(32, SIG_DFL) || ignored(32))
			_exit(3);
		if (cw_signal_set(SIGPIPE, SIG_IGN) || !ignored(SIGPIPE))
			_exit(4);
		if (cw_signal_set(SIGKILL, SIG_IGN) != -EINVAL ||
		    cw_signal_set(99, SIG_DFL) != -EINVAL)
			_exit(5);
		_exit(0);
	}
	assert_int_equal(pid, waitpid(pid, &st, 0));
	assert_true(WIFEXITED(st));
	assert_int_equal(0, WEXITSTATUS(st));
}

/* Whole reads across short reads; an early end is an error, not a short
 * count. */
static void test_read_all(void **state)
{
	char buf[64 * 1024], got[sizeof(buf)];
	int fds[2];
	pid_t pid;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	assert_int_equal(0, pipe(fds));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* In pieces, with pauses: the reader sees short reads. */
		close(fds[0]);
		for (i = 0; i < sizeof(buf); i += 1000) {
			size_t n = sizeof(buf) - i < 1000 ? sizeof(buf) - i : 1000;

			if (cw_write_all(fds[1], buf + i, n))
				_exit(1);
			if (i % 16000 == 0)
				usleep(1000);
		}
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(0, cw_read_all(fds[0], got, sizeof(got)));
	assert_memory_equal(buf, got, sizeof(buf));
	/* The writer is done: one byte more is an early end. */
	assert_int_equal(-EIO, cw_read_all(fds[0], got, 1));
	close(fds[0]);
	assert_int_equal(pid, waitpid(pid, NULL, 0));
	assert_int_equal(-EBADF, cw_read_all(-1, got, 1));
	assert_int_equal(0, cw_read_all(-1, got, 0));
}

static void test_is_identifier(void **state)
{
	(void)state;
	assert_true(cw_is_identifier("PATH"));
	assert_true(cw_is_identifier("_a1"));
	assert_false(cw_is_identifier(""));
	assert_false(cw_is_identifier("1A"));
	assert_false(cw_is_identifier("A-B"));
	assert_false(cw_is_identifier("A=B"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_ts),
		cmocka_unit_test(test_format_ts_seconds),
		cmocka_unit_test(test_deadline_ms),
		cmocka_unit_test(test_diag_format),
		cmocka_unit_test(test_buf_grows),
		cmocka_unit_test(test_random_ids_differ),
		cmocka_unit_test(test_read_all),
		cmocka_unit_test(test_signal_set),
		cmocka_unit_test(test_is_identifier),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
