// SPDX-License-Identifier: Apache-2.0
/*
 * libbpf: the output collector keeps what the loaders' errors quote (the
 * failing program's line, the verifier's last telling line, libbpf's last
 * message) and prints nothing; ring-buffer sizes are page-sized powers of
 * two.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/libbpf.h"
#include "unit.h"

static libbpf_print_fn_t collector;

/* Hands a message to the collector as libbpf would. */
static void say(enum libbpf_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	collector(level, fmt, ap);
	va_end(ap);
}

/* Starts collecting and learns the collector's address. */
static libbpf_print_fn_t begin(void)
{
	libbpf_print_fn_t old = cw_libbpf_log_begin();

	collector = libbpf_set_print(NULL);
	libbpf_set_print(collector);
	return old;
}

static void test_verifier_log(void **state)
{
	libbpf_print_fn_t old;
	struct cw_error err = { 0 };

	(void)state;
	old = begin();
	say(LIBBPF_DEBUG, "libbpf: debug lines are %s\n", "ignored");
	say(LIBBPF_WARN, "libbpf: prog '%s': BPF program load failed: %s\n",
	    "cw_connect4", "Permission denied");
	say(LIBBPF_WARN,
	    "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s"
	    "-- END PROG LOAD LOG --\n", "cw_connect4",
	    "0: R1=ctx\n1: (85) call bpf_foo#999\ninvalid func unknown#999\n"
	    "processed 2 insns (limit 1000000)\nverification time 5 usec\n");
	say(LIBBPF_WARN, "libbpf: failed to load object '%s'\n", "net_bpf");
	cw_libbpf_error(&err, "loading the network BPF programs", 13);
	assert_string_equal("loading the network BPF programs: Permission "
			    "denied: prog 'cw_connect4': BPF program load "
			    "failed: Permission denied; verifier: invalid "
			    "func unknown#999", err.text);
	assert_string_equal("failed to load object 'net_bpf'",
			    cw_libbpf_last());
	cw_libbpf_log_end(old);
	assert_ptr_equal(old, libbpf_set_print(old));
}

static void test_no_program_line(void **state)
{
	libbpf_print_fn_t old;
	struct cw_error err = { 0 };

	(void)state;
	old = begin();
	assert_string_equal("", cw_libbpf_last());
	cw_libbpf_error(&err, "opening", 2);
	assert_string_equal("opening: No such file or directory", err.text);
	say(LIBBPF_WARN, "libbpf: %s\n", "map 'events': failed to create");
	cw_libbpf_error(&err, "opening", 2);
	assert_string_equal("opening: No such file or directory: map "
			    "'events': failed to create", err.text);
	/* The last message is never a verifier summary. */
	say(LIBBPF_INFO, "processed %d insns\n", 5);
	assert_string_equal("map 'events': failed to create",
			    cw_libbpf_last());
	/* A new load starts empty. */
	cw_libbpf_log_end(old);
	old = begin();
	assert_string_equal("", cw_libbpf_last());
	cw_libbpf_log_end(old);
}

static void test_ringbuf_bytes(void **state)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	(void)state;
	assert_int_equal(256 * 1024, cw_libbpf_ringbuf_bytes(0, 256));
	assert_int_equal(512 * 1024, cw_libbpf_ringbuf_bytes(300, 256));
	assert_int_equal(page, cw_libbpf_ringbuf_bytes(1, 256));
	assert_int_equal(1024 * 1024, cw_libbpf_ringbuf_bytes(1024, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verifier_log),
		cmocka_unit_test(test_no_program_line),
		cmocka_unit_test(test_ringbuf_bytes),
	};

	return cmocka_run_group_tests_name("libbpf", tests, NULL, NULL);
}
