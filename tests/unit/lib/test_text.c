// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "unit.h"
#include "lib/text.h"

static void test_quote_plain(void **state)
{
	char buf[CW_TEXT_QUOTE_LEN];

	(void)state;
	assert_string_equal("\"abc\"", cw_text_quote(buf, sizeof(buf), "abc"));
	assert_string_equal("\"\"", cw_text_quote(buf, sizeof(buf), ""));
}

/* Quotes and backslashes get a backslash; controls and DEL are \xHH. */
static void test_quote_escapes(void **state)
{
	char buf[CW_TEXT_QUOTE_LEN];

	(void)state;
	assert_string_equal("\"a\\\"b\\\\c\\x01\\x0a\\x7f\"",
			    cw_text_quote(buf, sizeof(buf),
					  "a\"b\\c\x01\n\x7f"));
	/* bytes above 0x7f are kept as they are */
	assert_string_equal("\"\xc3\xa9\"",
			    cw_text_quote(buf, sizeof(buf), "\xc3\xa9"));
}

/* CW_TEXT_QUOTE_CUT bytes are shown, then "...". */
static void test_quote_cut(void **state)
{
	char in[CW_TEXT_QUOTE_CUT + 11], want[CW_TEXT_QUOTE_CUT + 8];
	char buf[CW_TEXT_QUOTE_LEN];

	(void)state;
	memset(in, 'a', CW_TEXT_QUOTE_CUT);
	in[CW_TEXT_QUOTE_CUT] = '\0';
	want[0] = '"';
	memset(want + 1, 'a', CW_TEXT_QUOTE_CUT);
	memcpy(want + 1 + CW_TEXT_QUOTE_CUT, "\"", 2);
	assert_string_equal(want, cw_text_quote(buf, sizeof(buf), in));

	memset(in, 'a', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	memcpy(want + 1 + CW_TEXT_QUOTE_CUT, "...\"", 5);
	assert_string_equal(want, cw_text_quote(buf, sizeof(buf), in));
	assert_int_equal(60, CW_TEXT_QUOTE_CUT);
}

/* A cut falls between characters: a sequence begun before the cut is
 * finished, one after it is not begun. */
static void test_quote_cut_utf8(void **state)
{
	char in[CW_TEXT_QUOTE_CUT + 8], want[CW_TEXT_QUOTE_CUT + 12];
	char buf[CW_TEXT_QUOTE_LEN];
	size_t o;

	(void)state;
	/* a 3-byte character at bytes CUT-1 .. CUT+1 */
	memset(in, 'a', CW_TEXT_QUOTE_CUT - 1);
	memcpy(in + CW_TEXT_QUOTE_CUT - 1, "\xe2\x82\xac" "b", 5);
	want[0] = '"';
	memset(want + 1, 'a', CW_TEXT_QUOTE_CUT - 1);
	o = CW_TEXT_QUOTE_CUT;
	memcpy(want + o, "\xe2\x82\xac...\"", 8);
	assert_string_equal(want, cw_text_quote(buf, sizeof(buf), in));

	/* the same character starting at the cut is left out whole */
	memset(in, 'a', CW_TEXT_QUOTE_CUT);
	memcpy(in + CW_TEXT_QUOTE_CUT, "\xe2\x82\xac", 4);
	memset(want + 1, 'a', CW_TEXT_QUOTE_CUT);
	memcpy(want + 1 + CW_TEXT_QUOTE_CUT, "...\"", 5);
	assert_string_equal(want, cw_text_quote(buf, sizeof(buf), in));
}

/* A small buffer cuts earlier, leaving room for an escape and the end;
 * the result always fits. */
static void test_quote_buffer(void **state)
{
	char in[200], buf[20];
	const char *r;
	size_t i;

	(void)state;
	memset(in, 'x', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	r = cw_text_quote(buf, sizeof(buf), in);
	assert_ptr_equal(buf, r);
	assert_string_equal("\"xxxxxxxxxxx...\"", r);

	for (i = 0; i < sizeof(in) - 1; i++)
		in[i] = '\x01';
	r = cw_text_quote(buf, sizeof(buf), in);
	assert_true(strlen(r) < sizeof(buf));
	assert_string_equal("\"\\x01\\x01\\x01...\"", r);

	assert_string_equal("\"\"", cw_text_quote(buf, 15, "abc"));
}

static void test_utf8_trim(void **state)
{
	char s[16];

	(void)state;
	strcpy(s, "ab\xe2\x82");
	cw_text_utf8_trim(s);
	assert_string_equal("ab", s);
	strcpy(s, "ab\xe2\x82\xac");
	cw_text_utf8_trim(s);
	assert_string_equal("ab\xe2\x82\xac", s);
	strcpy(s, "\xc3");
	cw_text_utf8_trim(s);
	assert_string_equal("", s);
	strcpy(s, "\xf0\x9f\x98");
	cw_text_utf8_trim(s);
	assert_string_equal("", s);
	strcpy(s, "plain");
	cw_text_utf8_trim(s);
	assert_string_equal("plain", s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote_plain),
		cmocka_unit_test(test_quote_escapes),
		cmocka_unit_test(test_quote_cut),
		cmocka_unit_test(test_quote_cut_utf8),
		cmocka_unit_test(test_quote_buffer),
		cmocka_unit_test(test_utf8_trim),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
