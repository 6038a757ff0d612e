// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "server/request_id.h"
#include "unit.h"

/* The id read from s, compact ("null" for none). */
static char *id_of(const char *s)
{
	json_t *id = cw_request_id(s, strlen(s));
	char *out = id ? json_dumps(id, JSON_ENCODE_ANY) : strdup("null");

	json_decref(id);
	return out;
}

static void expect(const char *s, const char *want)
{
	char *got = id_of(s);

	assert_string_equal(want, got);
	free(got);
}

static void test_id_before_the_cut(void **state)
{
	(void)state;
	expect("{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"ping\",\"params\":{\"x\":\"aaa", "40");
	expect(" {\n \"id\" : \"a\\\"b\" , \"method\":", "\"a\\\"b\"");
	/* after members of every kind, nested and with brackets in strings */
	expect("{\"params\":{\"a\":[1,{\"b\":\"]}\"}],\"c\":null},\"n\":-1.5e3,\"t\":true,\"id\":7}", "7");
	/* a syntax error after the id */
	expect("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":", "8");
	expect("{\"id\":9,\"method\":\"ping\" \"x\"}", "9");
}

static void test_no_id(void **state)
{
	(void)state;
	/* cut inside or right after the id: it may go on */
	expect("{\"id\":12", "null");
	expect("{\"id\":\"ab", "null");
	/* after the cut, or after a syntax error */
	expect("{\"params\":{\"x\":\"aaa", "null");
	expect("{\"params\":{\"x\":]},\"id\":1}", "null");
	expect("{\"a\" 1,\"id\":1}", "null");
	/* ids JSON-RPC does not allow */
	expect("{\"id\":null,\"method\":\"ping\"}", "null");
	expect("{\"id\":1.5,\"method\":\"ping\"}", "null");
	expect("{\"id\":{\"x\":1},\"method\":\"ping\"}", "null");
	/* not an object, nested ids, no id */
	expect("[{\"id\":1}]", "null");
	expect("{\"params\":{\"id\":3}}", "null");
	expect("{\"jsonrpc\":\"2.0\"}", "null");
	expect("", "null");
	/* a key that only starts like it */
	expect("{\"idx\":4,\"method\":", "null");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_before_the_cut),
		cmocka_unit_test(test_no_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
