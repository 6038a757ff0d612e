// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/grant.h"
#include "unit.h"

/* SHA-256 of "tok-a" (printf %s tok-a | sha256sum). */
#define HASH_A "4f66a4283f8bc9768c3cb97fd06d267b79315aee941c9c1727b9354509242ffe"

static struct cw_grants *parse(const char *json, struct cw_diag *d)
{
	cw_diag_init(d);
	return cw_grants_parse(json, strlen(json), "tokens.json", "/etc/cw",
			       d);
}

/* The first error's text, for assertions. */
static const char *first(const struct cw_diag *d)
{
	return d->n ? d->items[0].text : "";
}

static void test_match_finds_the_grant(void **state)
{
	struct cw_diag d;
	struct cw_grants *g;
	char tok[CW_GRANT_HEX_SIZE], hash[CW_GRANT_HEX_SIZE], json[512];

	(void)state;
	cw_grants_new_token(tok, hash);
	snprintf(json, sizeof(json),
		 "{\"grants\": {\"ci\": {\"token_sha256\": \"%s\", \"policy\": \"ci.json\"},"
		 " \"alice\": {\"token_sha256\": \"%s\"}}}",
		 HASH_A, hash);
	g = parse(json, &d);
	assert_non_null(g);
	assert_int_equal(0, d.n);
	assert_int_equal(2, cw_grants_count(g));
	/* The generated token opens its grant, and only it. */
	assert_int_equal(1, cw_grants_match(g, tok, strlen(tok)));
	assert_string_equal("alice", cw_grants_name(g, 1));
	assert_null(cw_grants_policy(g, 1));
	/* A relative policy is taken from the token file's directory. */
	assert_string_equal("/etc/cw/ci.json", cw_grants_policy(g, 0));
	/* Near misses do not match: one byte off, a prefix, empty. */
	tok[63] = tok[63] == 'a' ? 'b' : 'a';
	assert_int_equal(-1, cw_grants_match(g, tok, strlen(tok)));
	assert_int_equal(-1, cw_grants_match(g, tok, 63));
	assert_int_equal(-1, cw_grants_match(g, "", 0));
	assert_int_equal(-1, cw_grants_match(NULL, "x", 1));
	cw_grants_free(g);
	cw_diag_free(&d);
}

static void test_hash_is_sha256_of_the_token(void **state)
{
	struct cw_diag d;
	struct cw_grants *g;

	(void)state;
	/* HASH_A was computed by sha256sum, not by the code under test. */
	g = parse("{\"grants\": {\"a\": {\"token_sha256\": \"" HASH_A "\"}}}", &d);
	assert_non_null(g);
	assert_int_equal(0, cw_grants_match(g, "tok-a", 5));
	assert_int_equal(-1, cw_grants_match(g, "tok-b", 5));
	cw_grants_free(g);
	cw_diag_free(&d);
}

static void test_rejects_bad_files(void **state)
{
	static const struct {
		const char *json, *path, *text;
	} cases[] = {
		{ "{\"grants\": {\"a\": {\"token_sha256\": \"abc\"}}}", "grants.a",
		  "64 hex digits" },
		{ "{\"grants\": {\"a\": {\"token_sha256\": \"" HASH_A "\", \"polcy\": \"x\"}}}",
		  "grants.a", "unknown key \"polcy\"" },
		{ "{\"grants\": {\"a b\": {\"token_sha256\": \"" HASH_A "\"}}}",
		  "grants.a b", "a grant name is" },
		{ "{\"grants\": {\"local\": {\"token_sha256\": \"" HASH_A "\"}}}",
		  "grants.local", "reserved for stdio" },
		{ "{\"grants\": {\"a\": {\"token_sha256\": \"" HASH_A "\"}, \"b\": {\"token_sha256\": \"" HASH_A "\"}}}",
		  "grants", "have the same token" },
		{ "{\"grants\": {\"a\": {\"token_sha256\": \"" HASH_A "\", \"policy\": 3}}}",
		  "grants.a", "\"policy\" must be the path" },
		{ "{\"grant\": {}}", "", "unknown key \"grant\"" },
		{ "[]", "", "expected an object" },
	};
	struct cw_diag d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_null(parse(cases[i].json, &d));
		assert_true(d.n >= 1);
		assert_string_equal(cases[i].path, d.items[0].path);
		if (!strstr(first(&d), cases[i].text))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
				 first(&d), cases[i].text);
		cw_diag_free(&d);
	}
	/* Syntax errors carry line and column. */
	assert_null(parse("{\n  \"grants\": {,}\n}", &d));
	assert_int_equal(2, d.items[0].line);
	assert_true(d.items[0].column > 0);
	cw_diag_free(&d);
}

static void test_load_checks_the_mode(void **state)
{
	char dir[] = "/tmp/cw-grant.XXXXXX", path[64];
	struct cw_grants *g;
	struct cw_diag d;
	const char *json = "{\"grants\": {\"a\": {\"token_sha256\": \"" HASH_A "\"}}}";
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens.json", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal((ssize_t)strlen(json), write(fd, json, strlen(json)));
	close(fd);

	/* 0640: refused, saying why and what to do. */
	assert_int_equal(0, chmod(path, 0640));
	cw_diag_init(&d);
	g = cw_grants_load(path, &d);
	assert_null(g);
	assert_int_equal(EPERM, errno);
	assert_non_null(strstr(first(&d), "mode 0640"));
	assert_non_null(strstr(first(&d), "chmod 600"));
	assert_string_equal(path, d.items[0].source);
	cw_diag_free(&d);

	/* The same file at 0600 loads. */
	assert_int_equal(0, chmod(path, 0600));
	cw_diag_init(&d);
	g = cw_grants_load(path, &d);
	assert_non_null(g);
	assert_int_equal(0, d.n);
	assert_int_equal(0, cw_grants_match(g, "tok-a", 5));
	cw_grants_free(g);
	cw_diag_free(&d);

	/* A missing file says so. */
	unlink(path);
	cw_diag_init(&d);
	assert_null(cw_grants_load(path, &d));
	assert_non_null(strstr(first(&d), "No such file"));
	cw_diag_free(&d);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_finds_the_grant),
		cmocka_unit_test(test_hash_is_sha256_of_the_token),
		cmocka_unit_test(test_rejects_bad_files),
		cmocka_unit_test(test_load_checks_the_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
