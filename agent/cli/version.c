// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden version`: the version, as version.h gives it.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "version.h"

int cw_cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("cmdwarden %s\n", CW_VERSION);
	return 0;
}
