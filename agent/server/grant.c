// SPDX-License-Identifier: Apache-2.0
/* Grants (see grant.h): the token file read and checked, bearer tokens
 * matched against the grants' hashes, new tokens made. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "server/grant.h"

/* Token files are small; anything larger is a mistake. */
#define MAX_TOKEN_FILE (1u << 20)
#define MAX_GRANTS 4096
/* A new token is this many random bytes, written in hex. */
#define TOKEN_RANDOM_BYTES 32
/* "grants.NAME", where a diagnostic points; a longer name is cut. */
#define WHERE_MAX (CW_GRANT_NAME_MAX + 32)

_Static_assert(2 * TOKEN_RANDOM_BYTES + 1 == CW_GRANT_HEX_SIZE &&
		       2 * crypto_hash_sha256_BYTES + 1 == CW_GRANT_HEX_SIZE,
	       "a token and its SHA-256 fill CW_GRANT_HEX_SIZE in hex");

struct grant {
	char name[CW_GRANT_NAME_MAX + 1];
	unsigned char sha256[crypto_hash_sha256_BYTES];
	char *policy;		/* absolute path, or NULL */
};

struct cw_grants {
	struct grant *v;
	size_t n;
};

static bool valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > CW_GRANT_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

#define STR_(x) #x
#define STR(x) STR_(x)

const char *cw_grants_name_problem(const char *name)
{
	if (!valid_name(name))
		return "a grant name is 1 to " STR(CW_GRANT_NAME_MAX)
		       " letters, digits, '_', '-' or '.'";
	if (strcmp(name, "local") == 0)
		return "the grant name \"local\" is reserved for stdio callers; choose another";
	return NULL;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_sha256(const char *hex, unsigned char *out)
{
	size_t i;

	if (strlen(hex) != 2 * crypto_hash_sha256_BYTES)
		return false;
	for (i = 0; i < crypto_hash_sha256_BYTES; i++) {
		int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

static int parse_grant(struct grant *g, const char *name, json_t *o,
		       const char *source, const char *base_dir,
		       struct cw_diag *d)
{
	char where[WHERE_MAX];
	const char *key, *s;
	size_t before = d->n;
	json_t *v;

	snprintf(where, sizeof(where), "grants.%s", name);
	s = cw_grants_name_problem(name);
	if (s) {
		cw_diag_add(d, source, 0, 0, where, "%s", s);
		return -EINVAL;
	}
	snprintf(g->name, sizeof(g->name), "%s", name);
	if (!json_is_object(o)) {
		cw_diag_add(d, source, 0, 0, where,
			    "expected an object with \"token_sha256\" and optionally \"policy\"");
		return -EINVAL;
	}
	json_object_foreach(o, key, v) {
		if (strcmp(key, "token_sha256") != 0 &&
		    strcmp(key, "policy") != 0)
			cw_diag_add(d, source, 0, 0, where,
				    "unknown key \"%.64s\"; expected \"token_sha256\" or \"policy\"",
				    key);
	}
	s = json_string_value(json_object_get(o, "token_sha256"));
	if (!s || !parse_sha256(s, g->sha256))
		cw_diag_add(d, source, 0, 0, where,
			    "\"token_sha256\" must be the SHA-256 of the token as 64 hex digits (printf %%s TOKEN | sha256sum, or cmdwarden token)");
	v = json_object_get(o, "policy");
	if (v) {
		s = json_string_value(v);
		if (!s || !*s || strlen(s) >= PATH_MAX) {
			cw_diag_add(d, source, 0, 0, where,
				    "\"policy\" must be the path of a policy file");
		} else if (s[0] == '/' || !base_dir) {
			g->policy = strdup(s);
		} else if (asprintf(&g->policy, "%s/%s", base_dir, s) < 0) {
			g->policy = NULL;
		}
		if (s && *s && !g->policy && d->n == before)
			cw_diag_add(d, source, 0, 0, where, "out of memory");
	}
	if (d->n > before) {
		free(g->policy);
		g->policy = NULL;
		return -EINVAL;
	}
	return 0;
}

struct cw_grants *cw_grants_parse(const char *buf, size_t len,
				  const char *source, const char *base_dir,
				  struct cw_diag *diag)
{
	struct cw_grants *g = NULL;
	size_t before = diag->n, i, j;
	json_error_t jerr;
	json_t *root, *grants, *v;
	const char *key;

	if (sodium_init() < 0) {
		cw_diag_add(diag, source, 0, 0, "", "libsodium failed to start");
		return NULL;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		cw_diag_add(diag, source, jerr.line, jerr.column, "",
			    "not valid JSON: %s", jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		cw_diag_add(diag, source, 0, 0, "",
			    "expected an object {\"grants\": {NAME: {\"token_sha256\": HEX}}}");
		goto out;
	}
	json_object_foreach(root, key, v)
		if (strcmp(key, "grants") != 0)
			cw_diag_add(diag, source, 0, 0, "",
				    "unknown key \"%.64s\"; expected \"grants\"",
				    key);
	grants = json_object_get(root, "grants");
	if (!json_is_object(grants)) {
		cw_diag_add(diag, source, 0, 0, "grants",
			    "expected an object of grants, name -> {\"token_sha256\": HEX, \"policy\": FILE}");
		goto out;
	}
	if (json_object_size(grants) > MAX_GRANTS) {
		cw_diag_add(diag, source, 0, 0, "grants",
			    "at most %d grants", MAX_GRANTS);
		goto out;
	}
	g = calloc(1, sizeof(*g));
	if (g)
		g->v = calloc(json_object_size(grants) + 1, sizeof(*g->v));
	if (!g || !g->v) {
		cw_diag_add(diag, source, 0, 0, "", "out of memory");
		goto out;
	}
	json_object_foreach(grants, key, v) {
		if (parse_grant(&g->v[g->n], key, v, source, base_dir,
				diag) == 0)
			g->n++;
	}
	/* One token must not open two grants. */
	for (i = 0; i < g->n; i++)
		for (j = i + 1; j < g->n; j++)
			if (memcmp(g->v[i].sha256, g->v[j].sha256,
				   sizeof(g->v[i].sha256)) == 0)
				cw_diag_add(diag, source, 0, 0, "grants",
					    "grants \"%s\" and \"%s\" have the same token; each grant needs its own",
					    g->v[i].name, g->v[j].name);
out:
	json_decref(root);
	if (diag->n > before) {
		cw_grants_free(g);
		errno = EINVAL;
		return NULL;
	}
	return g;
}

struct cw_grants *cw_grants_load(const char *path, struct cw_diag *diag)
{
	struct cw_grants *g = NULL;
	char *buf = NULL, *dir = NULL, *slash;
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = errno;
		cw_diag_add(diag, path, 0, 0, "", "cannot open the token file: %s",
			    strerror(err));
		errno = err;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		cw_diag_add(diag, path, 0, 0, "", "cannot stat the token file: %s",
			    strerror(err));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		cw_diag_add(diag, path, 0, 0, "", "the token file is not a regular file");
		goto out;
	}
	if (st.st_mode & 077) {
		err = EPERM;
		cw_diag_add(diag, path, 0, 0, "",
			    "the token file has mode %04o: group or others may access it; run chmod 600 on it",
			    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_uid != geteuid()) {
		err = EPERM;
		cw_diag_add(diag, path, 0, 0, "",
			    "the token file is owned by uid %u, not by this user (uid %u)",
			    (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if (st.st_size > MAX_TOKEN_FILE) {
		err = EFBIG;
		cw_diag_add(diag, path, 0, 0, "",
			    "the token file is larger than %u bytes", MAX_TOKEN_FILE);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = ENOMEM;
		cw_diag_add(diag, path, 0, 0, "", "out of memory");
		goto out;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	dir = strdup(path);
	if (!dir) {
		err = ENOMEM;
		cw_diag_add(diag, path, 0, 0, "", "out of memory");
		goto out;
	}
	/* Relative policy paths start where the token file is. */
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	g = cw_grants_parse(buf, len, path, slash ? dir : ".", diag);
	if (!g)
		err = errno;
out:
	free(dir);
	free(buf);
	close(fd);
	errno = err;
	return g;
}

void cw_grants_free(struct cw_grants *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; g->v && i < g->n; i++)
		free(g->v[i].policy);
	free(g->v);
	free(g);
}

size_t cw_grants_count(const struct cw_grants *g)
{
	return g ? g->n : 0;
}

const char *cw_grants_name(const struct cw_grants *g, size_t i)
{
	return g->v[i].name;
}

const char *cw_grants_policy(const struct cw_grants *g, size_t i)
{
	return g->v[i].policy;
}

int cw_grants_match(const struct cw_grants *g, const char *token, size_t len)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	unsigned found = 0;
	size_t i;

	if (!g || len == 0 || len > CW_TOKEN_MAX)
		return -1;
	crypto_hash_sha256(h, (const unsigned char *)token, len);
	/* Every grant is compared, and the match is folded in without a
	 * branch: the loop takes the same time wherever the grant is. Names
	 * are unique hashes, so at most one compares equal. */
	for (i = 0; i < g->n; i++) {
		unsigned differ = (unsigned)sodium_memcmp(h, g->v[i].sha256,
							  sizeof(h));

		found |= ~differ & (unsigned)(i + 1);
	}
	sodium_memzero(h, sizeof(h));
	return found ? (int)found - 1 : -1;
}

void cw_grants_new_token(char *token, char *sha256_hex)
{
	unsigned char raw[TOKEN_RANDOM_BYTES], h[crypto_hash_sha256_BYTES];

	if (sodium_init() < 0)
		abort();
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(token, CW_GRANT_HEX_SIZE, raw, sizeof(raw));
	crypto_hash_sha256(h, (const unsigned char *)token, 2 * sizeof(raw));
	sodium_bin2hex(sha256_hex, CW_GRANT_HEX_SIZE, h, sizeof(h));
	sodium_memzero(raw, sizeof(raw));
}
