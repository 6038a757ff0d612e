// SPDX-License-Identifier: Apache-2.0
/* The Streamable HTTP transport in process, under ASan: every refusal, a
 * session's life, and reloads, through a plain socket client; and the
 * header checks on their own. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "server/grant.h"
#include "server/http.h"
#include "server/http_headers.h"

struct fixture {
	char dir[64];
	char tokens[96];
	char audit[96];
	char token[CW_GRANT_HEX_SIZE];
	struct cw_engine *engine;
	struct cw_http *http;
};

/* Writes a token file with one grant per name; the first grant's token
 * goes to token (CW_GRANT_HEX_SIZE bytes) when not NULL. */
static void write_tokens(const char *path, const char *name, char *token)
{
	char tok[CW_GRANT_HEX_SIZE], hash[CW_GRANT_HEX_SIZE];
	FILE *f;

	cw_grants_new_token(tok, hash);
	if (token)
		memcpy(token, tok, sizeof(tok));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"grants\": {\"%s\": {\"token_sha256\": \"%s\"}}}\n", name,
		hash);
	fclose(f);
	assert_int_equal(0, chmod(path, 0600));
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct cw_engine_opts o = { 0 };
	struct cw_http_opts ho = { 0 };
	static const char *const origins[] = { "https://ok.example" };
	char statedir[96];
	struct cw_diag d;

	strcpy(f->dir, "/tmp/cw-http-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(statedir, sizeof(statedir), "%s/state", f->dir);
	snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", f->dir);
	snprintf(f->tokens, sizeof(f->tokens), "%s/tokens.json", f->dir);
	write_tokens(f->tokens, "t", f->token);
	o.state_dir = statedir;
	o.audit_path = f->audit;
	cw_diag_init(&d);
	f->engine = cw_engine_open(&o, &d);
	assert_non_null(f->engine);
	ho.listen = "127.0.0.1:0";
	ho.tokens_path = f->tokens;
	ho.origins = origins;
	ho.norigins = 1;
	ho.max_request = 4096;
	f->http = cw_http_start(f->engine, &ho, &d);
	if (!f->http)
		fail_msg("cw_http_start: %s", d.n ? d.items[0].text : "?");
	assert_true(cw_http_port(f->http) > 0);
	cw_diag_free(&d);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	cw_http_stop(f->http);
	cw_engine_close(f->engine);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(0, system(cmd));
	free(f);
	return 0;
}

/* One request on its own connection; returns the whole response (status
 * line, headers, body) and its status in *status. */
static char *http(struct fixture *f, const char *method, const char *headers,
		  const char *body, int *status)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char *req = NULL, *resp = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, rlen;

	sa.sin_port = htons(cw_http_port(f->http));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(0, connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	rlen = asprintf(&req,
			"%s /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s"
			"Content-Length: %zu\r\n\r\n%s",
			method, headers, body ? strlen(body) : 0,
			body ? body : "");
	assert_true(rlen > 0);
	assert_int_equal(rlen, write(fd, req, (size_t)rlen));
	free(req);
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			resp = realloc(resp, cap);
			assert_non_null(resp);
		}
		n = read(fd, resp + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	resp[len] = '\0';
	close(fd);
	*status = 0;
	sscanf(resp, "HTTP/1.1 %d", status);
	return resp;
}

#define JSON "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
#define INIT "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"u\",\"version\":\"1\"}}}"
#define LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"

static void expect(struct fixture *f, const char *method, const char *headers,
		   const char *body, int want, const char *has)
{
	int status;
	char *r = http(f, method, headers, body, &status);

	if (status != want || (has && !strstr(r, has)))
		fail_msg("%s: want %d with \"%s\", got:\n%s", method, want,
			 has ? has : "", r);
	free(r);
}

/* Opens a session with token; its id into sid (33 bytes). */
static void initialize(struct fixture *f, const char *token, char *sid)
{
	char hdr[256];
	const char *p;
	int status;
	char *r;

	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n" JSON, token);
	r = http(f, "POST", hdr, INIT, &status);
	assert_int_equal(200, status);
	p = strstr(r, "Mcp-Session-Id: ");
	assert_non_null(p);
	memcpy(sid, p + 16, 32);
	sid[32] = '\0';
	free(r);
}

static size_t count_in_file(const char *path, const char *needle)
{
	char line[65536];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static void test_refusals(void **state)
{
	struct fixture *f = *state;
	char auth[128], hdr[512], big[5000];

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", f->token);
	expect(f, "POST", JSON, INIT, 401, "no bearer token");
	expect(f, "POST", "Authorization: Bearer nope\r\n" JSON, INIT, 401,
	       "the bearer token is not valid");
	snprintf(hdr, sizeof(hdr), "%sOrigin: http://evil.example\r\n" JSON, auth);
	expect(f, "POST", hdr, INIT, 403, "Origin is not allowed");
	assert_int_equal(3, count_in_file(f->audit, "\"type\":\"access\""));
	assert_int_equal(0, count_in_file(f->audit, "\"type\":\"decision\""));
	/* The twins: the right token, the listed origin. */
	snprintf(hdr, sizeof(hdr), "%sOrigin: https://ok.example\r\n" JSON, auth);
	expect(f, "POST", hdr, INIT, 200, "\"protocolVersion\":\"2025-06-18\"");

	snprintf(hdr, sizeof(hdr), "%s" JSON, auth);
	expect(f, "POST", hdr, "[1]", 400, "batches are not supported");
	expect(f, "POST", hdr, "{\"jsonrpc\":", 400, "-32700");
	expect(f, "POST", hdr, "\"x\"", 400, "must be an object");
	expect(f, "POST", hdr, LIST, 400, "Mcp-Session-Id is required");
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect(f, "POST", hdr, big, 413, "exceeds the limit of 4096 bytes");
	snprintf(hdr, sizeof(hdr), "%sMCP-Protocol-Version: 1999-01-01\r\n" JSON,
		 auth);
	expect(f, "POST", hdr, INIT, 400, "unsupported MCP-Protocol-Version");
	snprintf(hdr, sizeof(hdr), "%sContent-Type: text/plain\r\n", auth);
	expect(f, "POST", hdr, INIT, 415, NULL);
	expect(f, "GET", auth, NULL, 405, "Allow: POST, DELETE");
	expect(f, "PATCH", auth, NULL, 405, NULL);
}

static void test_session_life(void **state)
{
	struct fixture *f = *state;
	char sid[33], hdr[512];

	initialize(f, f->token, sid);
	snprintf(hdr, sizeof(hdr),
		 "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n" JSON,
		 f->token, sid);
	expect(f, "POST", hdr, LIST, 200, "\"name\":\"run_command\"");
	expect(f, "POST", hdr,
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	       202, NULL);
	expect(f, "POST", hdr,
	       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"echo unit-$((1+1))\"}}}",
	       200, "\"stdout\":\"unit-2\\n\"");
	assert_int_equal(1, count_in_file(f->audit, "\"grant\":\"t\""));
	expect(f, "DELETE", hdr, NULL, 204, NULL);
	expect(f, "POST", hdr, LIST, 404, "no such session");
	expect(f, "DELETE", hdr, NULL, 404, NULL);
}

static void test_reload(void **state)
{
	struct fixture *f = *state;
	char sid[33], hdr[512], fresh[CW_GRANT_HEX_SIZE];
	struct cw_diag d;
	FILE *fp;

	initialize(f, f->token, sid);
	/* Broken: refused, the old token still opens sessions. */
	fp = fopen(f->tokens, "w");
	assert_non_null(fp);
	fputs("{\"grants\": {\"t\": {\"token_sha256\": \"xyz\"}}}\n", fp);
	fclose(fp);
	cw_diag_init(&d);
	assert_int_equal(-EINVAL, cw_http_reload(f->http, &d));
	assert_true(d.n >= 1);
	assert_non_null(strstr(d.items[0].text, "64 hex digits"));
	cw_diag_free(&d);
	initialize(f, f->token, sid);
	/* A new token replaces the old; the open session stays. */
	write_tokens(f->tokens, "t", fresh);
	cw_diag_init(&d);
	assert_int_equal(0, cw_http_reload(f->http, &d));
	cw_diag_free(&d);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s\r\n" JSON,
		 f->token);
	expect(f, "POST", hdr, INIT, 401, NULL);
	snprintf(hdr, sizeof(hdr),
		 "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n" JSON,
		 fresh, sid);
	expect(f, "POST", hdr, LIST, 200, "run_command");
	assert_int_equal(1, count_in_file(f->audit, "\"event\":\"reload\",\"ok\":false"));
	assert_int_equal(1, count_in_file(f->audit, "\"event\":\"reload\",\"ok\":true"));
}

/* Each header check on the values a client may send, absent ones too. */
static void test_header_checks(void **state)
{
	static const char *const origins[] = { "https://ok.example" };
	char tok[CW_GRANT_HEX_SIZE], hash[CW_GRANT_HEX_SIZE], json[256],
		auth[CW_GRANT_HEX_SIZE + 16];
	struct cw_grants *g;
	struct cw_diag d;
	uint64_t len = 0;

	(void)state;
	assert_true(cw_http_origin_allowed(origins, 1, "HTTPS://OK.example"));
	assert_false(cw_http_origin_allowed(origins, 1, "https://ok.example.evil"));
	assert_false(cw_http_origin_allowed(origins, 0, "https://ok.example"));

	assert_true(cw_http_version_supported("2025-06-18"));
	assert_false(cw_http_version_supported("2024-11-05"));

	assert_true(cw_http_json_content("application/json"));
	assert_true(cw_http_json_content("Application/JSON; charset=utf-8"));
	assert_true(cw_http_json_content("application/json ;x"));
	assert_false(cw_http_json_content("application/jsonx"));
	assert_false(cw_http_json_content("text/plain"));
	assert_false(cw_http_json_content(NULL));

	assert_true(cw_http_accepts_json(NULL));
	assert_true(cw_http_accepts_json("text/event-stream, application/json"));
	assert_true(cw_http_accepts_json("*/*"));
	assert_true(cw_http_accepts_json("application/*"));
	assert_false(cw_http_accepts_json("text/event-stream"));
	assert_true(cw_http_accepts_sse("application/json, TEXT/EVENT-STREAM"));
	assert_false(cw_http_accepts_sse("application/json"));
	assert_false(cw_http_accepts_sse(NULL));

	assert_false(cw_http_length_over(NULL, 10, &len));
	assert_false(cw_http_length_over("10", 10, &len));
	assert_false(cw_http_length_over("11x", 10, &len));
	assert_false(cw_http_length_over("99999999999999999999999", 10, &len));
	assert_int_equal(0, len);
	assert_true(cw_http_length_over("11", 10, &len));
	assert_int_equal(11, len);

	cw_grants_new_token(tok, hash);
	snprintf(json, sizeof(json),
		 "{\"grants\": {\"a\": {\"token_sha256\": \"%s\"}}}", hash);
	cw_diag_init(&d);
	g = cw_grants_parse(json, strlen(json), "t.json", "/", &d);
	assert_non_null(g);
	cw_diag_free(&d);
	assert_int_equal(-1, cw_http_authenticate(g, NULL));
	assert_int_equal(-1, cw_http_authenticate(g, tok));
	snprintf(auth, sizeof(auth), "bearer   %s  ", tok);
	assert_int_equal(0, cw_http_authenticate(g, auth));
	snprintf(auth, sizeof(auth), "Basic %s", tok);
	assert_int_equal(-1, cw_http_authenticate(g, auth));
	snprintf(auth, sizeof(auth), "Bearer %.10s", tok);
	assert_int_equal(-1, cw_http_authenticate(g, auth));
	cw_grants_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_life, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown),
		cmocka_unit_test(test_header_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
