// SPDX-License-Identifier: Apache-2.0
/* The id of a request read in part (see request_id.h): a scan of the
 * top-level object's members, skipping each value by its brackets and
 * strings; the id's own text is parsed by jansson. */
#include <stdbool.h>
#include <string.h>

#include "server/request_id.h"

static const char *space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string that starts at p (its opening quote); NULL when it does
 * not end within the bytes. */
static const char *string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past a number or literal; NULL when the bytes end first (it may go
 * on). */
static const char *scalar_end(const char *p, const char *end)
{
	while (p < end && !strchr(",}] \t\r\n", *p))
		p++;
	return p < end ? p : NULL;
}

/* Past the value that starts at p; NULL when it does not end within the
 * bytes or its brackets do not match. */
static const char *value_end(const char *p, const char *end)
{
	char open[64];
	size_t depth = 0;

	do {
		if (p >= end)
			return NULL;
		switch (*p) {
		case '"':
			p = string_end(p, end);
			if (!p)
				return NULL;
			break;
		case '{':
		case '[':
			if (depth == sizeof(open))
				return NULL;
			open[depth++] = *p == '{' ? '}' : ']';
			p++;
			break;
		case '}':
		case ']':
			if (!depth || open[depth - 1] != *p)
				return NULL;
			depth--;
			p++;
			break;
		case ' ': case '\t': case '\n': case '\r': case ',': case ':':
			if (!depth)
				return NULL;
			p++;
			break;
		default:
			p = scalar_end(p, end);
			if (!p)
				return NULL;
		}
	} while (depth);
	return p;
}

json_t *cw_request_id(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *key_end, *val, *val_end;
	json_t *id;
	bool is_id;

	p = space(p, end);
	if (p == end || *p++ != '{')
		return NULL;
	for (;;) {
		p = space(p, end);
		if (p == end || *p != '"')
			return NULL;
		key_end = string_end(p, end);
		if (!key_end)
			return NULL;
		is_id = key_end - p == 4 && !memcmp(p, "\"id\"", 4);
		p = space(key_end, end);
		if (p == end || *p++ != ':')
			return NULL;
		val = space(p, end);
		val_end = value_end(val, end);
		if (!val_end)
			return NULL;
		p = space(val_end, end);
		/* a delimiter after it: the bytes did not cut it */
		if (p == end || (*p != ',' && *p != '}'))
			return NULL;
		if (is_id) {
			id = json_loadb(val, (size_t)(val_end - val),
					JSON_DECODE_ANY, NULL);
			if (json_is_string(id) || json_is_integer(id))
				return id;
			json_decref(id);
			return NULL;
		}
		if (*p == '}')
			return NULL;
		p++;
	}
}
