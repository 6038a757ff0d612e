// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden token NAME`: a random bearer token for a grant of serve --http
 * and the token-file entry that holds its SHA-256.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "lib/json.h"
#include "server/grant.h"

int cw_cmd_token(int argc, char **argv)
{
	char token[CW_GRANT_HEX_SIZE], hash[CW_GRANT_HEX_SIZE];
	json_t *entry;
	char *s;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc > 1 && strcmp(argv[1], "--help") == 0) {
			printf("usage: %s token NAME\n\n"
			       "Makes a random bearer token for the grant NAME. Prints the token (give\n"
			       "it to the caller; it is not stored anywhere) and then the entry to put\n"
			       "under \"grants\" in the token file of serve --http, which holds only its\n"
			       "SHA-256. Add \"policy\": FILE to the entry for a policy of the grant's own.\n",
			       cw_cli_prog);
			return 0;
		}
		fprintf(stderr, "usage: %s token NAME\n", cw_cli_prog);
		return 2;
	}
	cw_grants_new_token(token, hash);
	entry = json_pack("{s:{s:s}}", argv[1], "token_sha256", hash);
	s = entry ? json_dumps(entry, JSON_COMPACT) : NULL;
	json_decref(entry);
	if (!s)
		return 1;
	printf("%s\n%s\n", token, s);
	free(s);
	return 0;
}
