/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text for messages: quoting caller- or author-controlled words into error
 * texts and denial reasons, and keeping cut texts valid UTF-8.
 */
#ifndef CW_LIB_TEXT_H
#define CW_LIB_TEXT_H

#include <stddef.h>

/* A quoted word shows at most this many bytes of it, then "...". */
#define CW_TEXT_QUOTE_CUT 60
/* A buffer for one quoted word: the cut text, with room for some escapes
 * (more escapes than fit cut the text earlier). */
#define CW_TEXT_QUOTE_LEN 80

/*
 * Writes s into buf as a double-quoted word: '"' and '\' escaped with a
 * backslash, control bytes and DEL as \xHH, cut with "..." after
 * CW_TEXT_QUOTE_CUT bytes or when buf is nearly full, never inside a UTF-8
 * sequence. Returns buf, or the literal "\"\"" when len is below 16.
 */
const char *cw_text_quote(char *buf, size_t len, const char *s);

/* Drops a UTF-8 sequence left incomplete at the end of s (by a cutting
 * snprintf, say), so the text stays valid UTF-8 for JSON encoders. */
void cw_text_utf8_trim(char *s);

#endif
