// SPDX-License-Identifier: Apache-2.0
/* A stream kept as its first and last bytes: whatever the chunks, what is
 * kept is the input's start and end, the marker says how much is gone,
 * and nothing is marked when everything fits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "lib/headtail.h"

static char *render(const struct cw_headtail *h, size_t *len)
{
	struct cw_buf b = { 0 };

	assert_int_equal(0, cw_headtail_render(h, &b));
	assert_int_equal(0, cw_buf_append(&b, "", 1));
	*len = b.len - 1;
	return b.data;
}

static void test_fits(void **state)
{
	struct cw_headtail h;
	size_t len;
	char *s;

	(void)state;
	cw_headtail_init(&h, 10);
	cw_headtail_add(&h, "hello ", 6);
	cw_headtail_add(&h, "you", 3);
	s = render(&h, &len);
	assert_string_equal("hello you", s);
	assert_int_equal(0, cw_headtail_omitted(&h));
	free(s);
	/* exactly the budget: still whole */
	cw_headtail_add(&h, "!", 1);
	s = render(&h, &len);
	assert_string_equal("hello you!", s);
	free(s);
	cw_headtail_free(&h);
	/* nothing at all */
	cw_headtail_init(&h, 10);
	s = render(&h, &len);
	assert_int_equal(0, len);
	free(s);
	cw_headtail_free(&h);
}

static void test_marker(void **state)
{
	struct cw_headtail h;
	size_t len;
	char *s;

	(void)state;
	cw_headtail_init(&h, 8);
	cw_headtail_add(&h, "line1\nline2\nline3\nend", 21);
	s = render(&h, &len);
	/* head "line" (4), tail "3\nend" cut to its last 4 bytes */
	assert_string_equal("line\n[... 13 bytes omitted ...]\n\nend", s);
	assert_int_equal(13, cw_headtail_omitted(&h));
	free(s);
	cw_headtail_free(&h);
	/* thousands grouped; a head ending its line gets no extra one */
	cw_headtail_init(&h, 4);
	cw_headtail_add(&h, "a\n", 2);
	for (len = 0; len < 1234567; len++)
		cw_headtail_add(&h, "x", 1);
	cw_headtail_add(&h, "yz", 2);
	s = render(&h, &len);
	assert_string_equal("a\n[... 1,234,567 bytes omitted ...]\nyz", s);
	free(s);
	cw_headtail_free(&h);
}

/* Random chunkings against the input itself. */
static void test_any_chunks(void **state)
{
	static char in[20000];
	struct cw_headtail h;
	size_t i, off, n, len, max, hm, tm;
	unsigned seed = 7;
	char *s, *want;
	int round;

	(void)state;
	for (i = 0; i < sizeof(in); i++)
		in[i] = (char)('a' + (i * 7 + i / 13) % 26);
	for (round = 0; round < 200; round++) {
		max = 1 + (size_t)(rand_r(&seed) % 3000);
		n = (size_t)(rand_r(&seed) % sizeof(in));
		cw_headtail_init(&h, max);
		for (off = 0; off < n; off += len) {
			len = 1 + (size_t)(rand_r(&seed) % 1500);
			if (len > n - off)
				len = n - off;
			cw_headtail_add(&h, in + off, len);
		}
		s = render(&h, &len);
		if (n <= max) {
			assert_int_equal(n, len);
			assert_memory_equal(in, s, n);
		} else {
			tm = max / 2;
			hm = max - tm;
			want = malloc(hm + 64 + tm);
			assert_non_null(want);
			memcpy(want, in, hm);
			assert_int_equal(n - max, cw_headtail_omitted(&h));
			assert_memory_equal(want, s, hm);
			assert_memory_equal(in + n - tm, s + len - tm, tm);
			assert_non_null(strstr(s + hm, " bytes omitted ...]\n"));
			free(want);
		}
		free(s);
		cw_headtail_free(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_marker),
		cmocka_unit_test(test_any_chunks),
	};

	return cmocka_run_group_tests_name("headtail", tests, NULL, NULL);
}
