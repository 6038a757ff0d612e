// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden seccomp-profile`: the default seccomp profile as a Markdown
 * table, a reason per group.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "kernel/seccomp.h"

int cw_cmd_seccomp_profile(int argc, char **argv)
{
	size_t g;

	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: %s seccomp-profile\n\n"
		       "Prints the default seccomp profile as a Markdown table: each group,\n"
		       "why an agent's command has no business there, and its syscalls.\n",
		       cw_cli_prog);
		return 0;
	}
	printf("| group | why it is denied | syscalls |\n|---|---|---|\n");
	for (g = 0; g < cw_seccomp_ngroups; g++) {
		const struct cw_seccomp_group *grp = &cw_seccomp_groups[g];
		const char *const *sc;

		printf("| %s | %s |", grp->name, grp->reason);
		for (sc = grp->syscalls; *sc; sc++)
			printf("%s%s", sc == grp->syscalls ? " " : ", ", *sc);
		printf(" |\n");
	}
	return 0;
}
