/* SPDX-License-Identifier: Apache-2.0 */
/*
 * user: the account a command runs as (uid, gid, supplementary groups,
 * USER, HOME, login shell), looked up in the parent before the launch.
 *
 * As root the command runs as the sandbox's user (default "user", else
 * "nobody"); without privileges it can only run as the agent. The lookup
 * goes through NSS in a short-lived child, so the modules NSS loads never
 * stay in the agent, and the last result is reused while /etc/passwd and
 * /etc/group are unchanged.
 */
#ifndef CW_KERNEL_USER_H
#define CW_KERNEL_USER_H

#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "lib/util.h"

/* The longest user name kept (with its NUL). */
#define CW_USER_NAME_MAX 256
/* A uid in decimal, with its NUL. */
#define CW_USER_UID_TEXT 24

/* A resolved account. The first fields are the result; the rest holds
 * what the pointers point into. */
struct cw_user {
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups */
	size_t ngroups;
	bool change_ids;	/* false: the command runs as the agent */
	const char *user;	/* USER and LOGNAME */
	const char *home;
	const char *login_shell; /* NULL: the account names none */

	struct passwd pw;
	char *pwbuf;
	bool found;		/* pw is valid */
	char uidname[CW_USER_UID_TEXT]; /* the uid, without a passwd entry */
	/* Copies of the names when they come from the lookup's child or
	 * the cache. */
	char cuser[CW_USER_NAME_MAX];
	char chome[PATH_MAX];
	char cshell[PATH_MAX];
};

/* Resolves the account sb names into u (which it clears first). 0, or
 * -errno with err filled; cw_user_free u either way. */
int cw_user_resolve(const struct cw_sandbox *sb, struct cw_user *u,
		    struct cw_error *err);
void cw_user_free(struct cw_user *u);

/* The directory a command of account u starts in: the call's (asked, may
 * be NULL), the policy's cwd when it names one, the default cwd when it
 * exists, else u's home when it exists, else "/". */
const char *cw_user_cwd(const struct cw_sandbox *sb, const char *asked,
			const struct cw_user *u);

#endif
