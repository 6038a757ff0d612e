// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "unit.h"
#include "util.h"

static void test_format_ts(void **state)
{
	char buf[40];

	(void)state;
	cw_format_ts(1764451093123456LL, buf, sizeof(buf));
	assert_string_equal("2025-11-29T21:18:13.123456Z", buf);
	cw_format_ts(5, buf, sizeof(buf));
	assert_string_equal("1970-01-01T00:00:00.000005Z", buf);
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
		cmocka_unit_test(test_diag_format),
		cmocka_unit_test(test_buf_grows),
		cmocka_unit_test(test_random_ids_differ),
		cmocka_unit_test(test_is_identifier),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
