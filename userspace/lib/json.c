// SPDX-License-Identifier: Apache-2.0
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and out-of-range values are invalid. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

json_t *cw_json_bytes(const char *p, size_t n)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, o = 0;
	char *out;
	json_t *s;

	/* Fast path: already valid. */
	while (i < n) {
		size_t l = utf8_seq(u + i, n - i);

		if (!l)
			break;
		i += l;
	}
	if (i == n)
		return json_stringn(p, n);

	/* Each invalid byte grows to at most 3 bytes. */
	out = malloc(n * 3 + 1);
	if (!out)
		return NULL;
	memcpy(out, p, i);
	o = i;
	while (i < n) {
		size_t l = utf8_seq(u + i, n - i);

		if (l) {
			memcpy(out + o, p + i, l);
			o += l;
			i += l;
		} else {
			memcpy(out + o, repl, 3);
			o += 3;
			i++;
		}
	}
	s = json_stringn(out, o);
	free(out);
	return s;
}

char *cw_json_compact(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
				     JSON_ENCODE_ANY);
}

json_t *cw_json_path(const char *s)
{
	json_t *j = json_string(s);
	char *buf;
	size_t i, o = 0, n = strlen(s);

	if (j)
		return j;
	buf = malloc(n * 4 + 1);
	if (!buf)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x80)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}
