// SPDX-License-Identifier: Apache-2.0
/* Approval ids: bound to the exact call, single use, expiring, decided
 * once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "engine/approvals.h"

#define S 1000000LL

static json_t *args(const char *cmd)
{
	return json_pack("{s:s}", "command", cmd);
}

static void test_approve_then_run_once(void **state)
{
	struct cw_approvals *a = cw_approvals_new(600);
	enum cw_approval_state st;
	char id[32], id2[32], msg[256];
	json_t *x = args("rm -rf build"), *y = json_pack("{s:s}", "command", "rm -rf build");

	(void)state;
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "rm -rf build", 0, id, &st));
	assert_int_equal(CW_APPROVAL_PENDING, st);
	assert_memory_equal("apr-", id, 4);
	/* asked again before a decision: the same id */
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", y, "", 1 * S, id2, &st));
	assert_string_equal(id, id2);
	assert_int_equal(0, cw_approvals_decide(a, id, true, 2 * S, msg, sizeof(msg), NULL));
	assert_non_null(strstr(msg, "approved"));
	/* an equal object (another instance) matches: runs once */
	assert_int_equal(0, cw_approvals_check(a, "local", "run_command", y, "", 3 * S, id2, &st));
	assert_string_equal(id, id2);
	/* used: a new id */
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "", 4 * S, id2, &st));
	assert_string_not_equal(id, id2);
	assert_int_equal(-EALREADY, cw_approvals_decide(a, id, true, 5 * S, msg, sizeof(msg), NULL));
	assert_non_null(strstr(msg, "used by a call already"));
	json_decref(x);
	json_decref(y);
	cw_approvals_free(a);
}

/* Bound to grant, tool and exact arguments. */
static void test_bound_to_the_call(void **state)
{
	struct cw_approvals *a = cw_approvals_new(600);
	enum cw_approval_state st;
	char id[32], other[32], msg[256];
	json_t *x = args("ls"), *z = args("ls "), *w = json_pack("{s:s, s:i}", "command", "ls", "timeout", 5);

	(void)state;
	assert_int_equal(-EACCES, cw_approvals_check(a, "g1", "run_command", x, "ls", 0, id, &st));
	assert_int_equal(0, cw_approvals_decide(a, id, true, 0, msg, sizeof(msg), NULL));
	assert_int_equal(-EACCES, cw_approvals_check(a, "g1", "run_command", z, "", 0, other, &st));
	assert_string_not_equal(id, other);
	assert_int_equal(-EACCES, cw_approvals_check(a, "g1", "run_command", w, "", 0, other, &st));
	assert_string_not_equal(id, other);
	assert_int_equal(-EACCES, cw_approvals_check(a, "g2", "run_command", x, "", 0, other, &st));
	assert_string_not_equal(id, other);
	assert_int_equal(-EACCES, cw_approvals_check(a, "g1", "other_tool", x, "", 0, other, &st));
	assert_string_not_equal(id, other);
	/* the approved one is still there for the exact call */
	assert_int_equal(0, cw_approvals_check(a, "g1", "run_command", x, "", 0, other, &st));
	assert_string_equal(id, other);
	json_decref(x);
	json_decref(z);
	json_decref(w);
	cw_approvals_free(a);
}

static void test_reject_unknown_expired(void **state)
{
	struct cw_approvals *a = cw_approvals_new(10);
	enum cw_approval_state st;
	char id[32], id2[32], msg[256];
	json_t *x = args("make deploy"), *desc = NULL;

	(void)state;
	assert_int_equal(-ENOENT, cw_approvals_decide(a, "apr-nope", true, 0, msg, sizeof(msg), NULL));
	assert_non_null(strstr(msg, "unknown approval id \"apr-nope\""));

	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "make deploy", 0, id, &st));
	/* a try changes nothing */
	assert_int_equal(0, cw_approvals_try(a, id, false, 1 * S, msg, sizeof(msg), &desc));
	assert_string_equal("make deploy", json_string_value(json_object_get(desc, "summary")));
	json_decref(desc);
	assert_int_equal(0, cw_approvals_decide(a, id, false, 1 * S, msg, sizeof(msg), NULL));
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "", 2 * S, id2, &st));
	assert_string_equal(id, id2);
	assert_int_equal(CW_APPROVAL_REJECTED, st);
	assert_int_equal(-EALREADY, cw_approvals_decide(a, id, true, 3 * S, msg, sizeof(msg), NULL));

	/* after its lifetime: expired, and the call gets a new id */
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "", 11 * S, id2, &st));
	assert_string_not_equal(id, id2);
	assert_int_equal(CW_APPROVAL_PENDING, st);
	assert_int_equal(-ETIMEDOUT, cw_approvals_decide(a, id2, true, 22 * S, msg, sizeof(msg), NULL));
	assert_non_null(strstr(msg, "expired"));
	/* an approved one not used in time does not run either */
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "", 30 * S, id, &st));
	assert_int_equal(0, cw_approvals_decide(a, id, true, 31 * S, msg, sizeof(msg), NULL));
	assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, "", 41 * S, id2, &st));
	assert_string_not_equal(id, id2);
	json_decref(x);
	cw_approvals_free(a);
}

/* The store is bounded: the oldest goes when it is full. */
static void test_bounded(void **state)
{
	struct cw_approvals *a = cw_approvals_new(600);
	enum cw_approval_state st;
	char id[32], first[32], msg[256], cmd[32];
	json_t *p;
	int i;

	(void)state;
	for (i = 0; i < CW_APPROVALS_MAX + 1; i++) {
		snprintf(cmd, sizeof(cmd), "echo %d", i);
		json_t *x = args(cmd);

		assert_int_equal(-EACCES, cw_approvals_check(a, "local", "run_command", x, cmd, 0, id, &st));
		if (!i)
			memcpy(first, id, sizeof(id));
		json_decref(x);
	}
	assert_int_equal(-ENOENT, cw_approvals_decide(a, first, true, 0, msg, sizeof(msg), NULL));
	p = cw_approvals_pending(a, 0);
	assert_int_equal(CW_APPROVALS_MAX, json_array_size(p));
	json_decref(p);
	cw_approvals_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_approve_then_run_once),
		cmocka_unit_test(test_bound_to_the_call),
		cmocka_unit_test(test_reject_unknown_expired),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests_name("approvals", tests, NULL, NULL);
}
