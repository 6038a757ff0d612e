// SPDX-License-Identifier: Apache-2.0
/* Checks of a request's headers (see http_headers.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"
#include "server/http_headers.h"

#define BEARER "Bearer "
#define JSON_TYPE "application/json"

static const char *const versions[] = { "2025-11-25", "2025-06-18",
					"2025-03-26" };

static bool header_lists(const char *value, const char *want)
{
	return value && strcasestr(value, want);
}

bool cw_http_origin_allowed(const char *const *allowed, size_t n,
			    const char *origin)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(origin, allowed[i]) == 0)
			return true;
	return false;
}

bool cw_http_version_supported(const char *v)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(versions); i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return false;
}

int cw_http_authenticate(const struct cw_grants *g, const char *auth)
{
	size_t n;

	if (!auth || strncasecmp(auth, BEARER, strlen(BEARER)) != 0)
		return -1;
	auth += strlen(BEARER);
	while (*auth == ' ')
		auth++;
	n = strlen(auth);
	while (n && auth[n - 1] == ' ')
		n--;
	return cw_grants_match(g, auth, n);
}

bool cw_http_json_content(const char *v)
{
	size_t n = strlen(JSON_TYPE);

	return v && strncasecmp(v, JSON_TYPE, n) == 0 &&
	       (!v[n] || v[n] == ';' || v[n] == ' ');
}

bool cw_http_accepts_json(const char *accept)
{
	return !accept || header_lists(accept, JSON_TYPE) ||
	       header_lists(accept, "*/*") ||
	       header_lists(accept, "application/*");
}

bool cw_http_accepts_sse(const char *accept)
{
	return header_lists(accept, "text/event-stream");
}

bool cw_http_length_over(const char *v, size_t max, uint64_t *len)
{
	unsigned long long n;
	char *end;

	if (!v)
		return false;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n <= max)
		return false;
	*len = n;
	return true;
}
