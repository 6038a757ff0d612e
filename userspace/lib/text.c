// SPDX-License-Identifier: Apache-2.0
/*
 * Text for messages: the one quoting of a word in an error or a denial
 * (policy load errors, decision reasons) and the UTF-8 trim of cut texts.
 */
#include <stdio.h>
#include <string.h>

#include "lib/text.h"

/* Room kept at the end of buf: the longest escape, "...", '"' and NUL. */
#define QUOTE_TAIL 8
#define QUOTE_MIN_LEN 16

const char *cw_text_quote(char *buf, size_t len, const char *s)
{
	size_t o = 0, i;

	if (len < QUOTE_MIN_LEN)
		return "\"\"";
	buf[o++] = '"';
	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c & 0xc0) != 0x80 &&
		    (i >= CW_TEXT_QUOTE_CUT || o + QUOTE_TAIL >= len)) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

void cw_text_utf8_trim(char *s)
{
	size_t n = strlen(s), j = n, need;
	unsigned char lead;

	while (j > 0 && ((unsigned char)s[j - 1] & 0xc0) == 0x80)
		j--;
	if (!j)
		return;
	lead = (unsigned char)s[j - 1];
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (n - (j - 1) < need)
		s[j - 1] = '\0';
}
