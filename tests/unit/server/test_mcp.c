// SPDX-License-Identifier: Apache-2.0
/* JSON-RPC framing over stdio and the MCP core's error handling. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "server/mcp.h"
#include "server/stdio.h"

struct fixture {
	char dir[64];
	char state[96];
	char audit[96];
	struct cw_engine *engine;
	struct cw_mcp *mcp;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct cw_engine_opts o = { 0 };
	struct cw_diag d;

	strcpy(f->dir, "/tmp/cw-mcp-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", f->dir);
	o.state_dir = f->state;
	o.audit_path = f->audit;
	cw_diag_init(&d);
	f->engine = cw_engine_open(&o, &d);
	assert_int_equal(0, d.n);
	cw_diag_free(&d);
	assert_non_null(f->engine);
	f->mcp = cw_mcp_new(f->engine, "local", "s1");
	assert_non_null(f->mcp);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	cw_mcp_free(f->mcp);
	cw_engine_close(f->engine);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(0, system(cmd));
	free(f);
	return 0;
}

/* Feeds input through cw_stdio_serve and returns everything it wrote. */
static char *serve(struct fixture *f, const char *const *chunks, size_t n,
		   size_t max)
{
	int in[2], out[2];
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	pid_t pid;
	char tmp[4096];
	ssize_t r;
	size_t i;

	assert_int_equal(0, pipe(in));
	assert_int_equal(0, pipe(out));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A writer that splits input at arbitrary points. */
		close(in[0]);
		close(out[0]);
		close(out[1]);
		for (i = 0; i < n; i++) {
			if (write(in[1], chunks[i], strlen(chunks[i])) < 0)
				_exit(1);
			usleep(2000);
		}
		_exit(0);
	}
	close(in[1]);
	assert_int_equal(0, cw_stdio_serve(f->mcp, in[0], out[1], max));
	close(in[0]);
	close(out[1]);
	mem = open_memstream(&buf, &len);
	while ((r = read(out[0], tmp, sizeof(tmp))) > 0)
		fwrite(tmp, 1, (size_t)r, mem);
	fclose(mem);
	close(out[0]);
	waitpid(pid, NULL, 0);
	return buf;
}

static json_t *nth_line(const char *out, int n)
{
	const char *p = out;
	json_error_t e;

	while (n-- > 0) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	return json_loadb(p, strcspn(p, "\n"), 0, &e);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_split_messages(void **state)
{
	static const char *const chunks[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"met", "hod\":\"ping\"}\n{\"jsonrpc\"",
		":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
	};
	char *out = serve(*state, chunks, 3, 1 << 20);
	json_t *a = nth_line(out, 0), *b = nth_line(out, 1);

	assert_int_equal(2, count_lines(out));
	assert_int_equal(1, json_integer_value(json_object_get(a, "id")));
	assert_int_equal(2, json_integer_value(json_object_get(b, "id")));
	assert_true(json_is_object(json_object_get(b, "result")));
	json_decref(a);
	json_decref(b);
	free(out);
}

static void test_oversized_line_skipped(void **state)
{
	char *big = malloc(300000);
	const char *chunks[3];
	char *out;
	json_t *e, *p;

	memset(big, 'x', 299999);
	big[299999] = '\0';
	chunks[0] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{\"a\":\"";
	chunks[1] = big;
	chunks[2] = "\"},\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n";
	out = serve(*state, chunks, 3, 1000);
	e = nth_line(out, 0);
	p = nth_line(out, 1);
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST,
			 json_integer_value(json_object_get(
				 json_object_get(e, "error"), "code")));
	/* its id, read from the first 1000 bytes */
	assert_int_equal(1, json_integer_value(json_object_get(e, "id")));
	assert_non_null(strstr(json_string_value(json_object_get(
				       json_object_get(e, "error"), "message")),
			       "exceeds the limit of 1000 bytes"));
	assert_int_equal(9, json_integer_value(json_object_get(p, "id")));
	json_decref(e);
	json_decref(p);
	free(out);
	free(big);
}

static void test_last_line_without_newline(void **state)
{
	static const char *const chunks[] = {
		"\r\n\n  \n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}",
	};
	char *out = serve(*state, chunks, 1, 1 << 20);
	json_t *a = nth_line(out, 0);

	assert_int_equal(1, count_lines(out));
	assert_string_equal("x", json_string_value(json_object_get(a, "id")));
	json_decref(a);
	free(out);
}

static int code_of(struct fixture *f, const char *msg)
{
	json_t *r = cw_mcp_handle_raw(f->mcp, msg, strlen(msg));
	int code;

	if (!r)
		return 0;
	code = (int)json_integer_value(
		json_object_get(json_object_get(r, "error"), "code"));
	json_decref(r);
	return code;
}

static void test_error_codes(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(CW_JSONRPC_PARSE_ERROR, code_of(f, "{nope"));
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST, code_of(f, "[]"));
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST, code_of(f, "42"));
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST,
			 code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":1}"));
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST,
			 code_of(f, "{\"id\":1,\"method\":\"ping\"}"));
	/* not initialized yet */
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST,
			 code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"));
	assert_int_equal(CW_JSONRPC_METHOD_NOT_FOUND,
			 code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/y\"}"));
	assert_int_equal(CW_JSONRPC_INVALID_PARAMS,
			 code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"));
	/* notifications and responses get nothing back */
	assert_int_equal(0, code_of(f, "{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}"));
	assert_int_equal(0, code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"));
	/* duplicate keys are malformed: which one would count is ambiguous */
	assert_int_equal(CW_JSONRPC_PARSE_ERROR,
			 code_of(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}"));
}

static void test_initialize_then_list(void **state)
{
	struct fixture *f = *state;
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
	const char *list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
	json_t *r;

	r = cw_mcp_handle_raw(f->mcp, init, strlen(init));
	assert_string_equal("2025-03-26",
			    json_string_value(json_object_get(
				    json_object_get(r, "result"),
				    "protocolVersion")));
	json_decref(r);
	r = cw_mcp_handle_raw(f->mcp, list, strlen(list));
	assert_string_equal("run_command",
			    json_string_value(json_object_get(
				    json_array_get(json_object_get(
							   json_object_get(r, "result"),
							   "tools"),
						   0),
				    "name")));
	json_decref(r);
	assert_int_equal(CW_JSONRPC_INVALID_REQUEST, code_of(f, init));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_line_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_line_without_newline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_codes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initialize_then_list, setup, teardown),
	};
	return cmocka_run_group_tests_name("mcp", tests, NULL, NULL);
}
