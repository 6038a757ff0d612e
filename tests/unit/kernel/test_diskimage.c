// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "kernel/diskimage.h"
#include "unit.h"

/* An image's name says its tree: '/' and every byte but letters, digits,
 * '.' and '-' as _XX, so two trees never share an image. */
static void test_image_names(void **state)
{
	char buf[64];

	(void)state;
	assert_true(cw_diskimage_path("/var/lib/cw", "/home/user", buf, sizeof(buf)));
	assert_string_equal("/var/lib/cw/home_2fuser.ext4", buf);
	assert_true(cw_diskimage_path("/d", "/a_b/c d", buf, sizeof(buf)));
	assert_string_equal("/d/a_5fb_2fc_20d.ext4", buf);
	assert_true(cw_diskimage_path("/d", "/a-b.c", buf, sizeof(buf)));
	assert_string_equal("/d/a-b.c.ext4", buf);
	assert_true(cw_diskimage_path("/d", "/", buf, sizeof(buf)));
	assert_string_equal("/d/root.ext4", buf);
	/* too long for the buffer: refused, never cut */
	assert_false(cw_diskimage_path("/d", "/home/user", buf, 16));
	assert_false(cw_diskimage_path("/d", "/home/user", buf, 17));
	assert_true(cw_diskimage_path("/d", "/home/user", buf, 21));
	assert_string_equal("/d/home_2fuser.ext4", buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
