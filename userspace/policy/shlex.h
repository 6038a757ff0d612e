/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A static shell lexer for policy conditions: finds the program names of
 * every simple command in a bash command line without executing anything.
 * It feeds the policy conditions command.programs and command.opaque.
 */
#ifndef CW_POLICY_SHLEX_H
#define CW_POLICY_SHLEX_H

#include <stdbool.h>
#include <stddef.h>

/* Hard bounds so analysis cost is linear and memory bounded. */
#define CW_SHLEX_MAX_INPUT   (1u << 20)	/* longer input: opaque */
#define CW_SHLEX_MAX_PROGRAMS 4096	/* more programs: opaque */
#define CW_SHLEX_MAX_DEPTH   64		/* nesting of $( ( { ... : opaque */

struct cw_shlex {
	char **programs;	/* basenames, in order of appearance, deduplicated */
	size_t nprograms;
	bool opaque;		/* some program cannot be known statically */
	char why[128];		/* first reason for opaque, "" if not opaque */
};

/* Analyse cmd (len bytes, need not be NUL-terminated). Returns 0, or -ENOMEM
 * (out is then empty). Syntax errors (unterminated quote, ...) make the result
 * opaque, not an error. Free with cw_shlex_free. */
int cw_shlex_analyze(const char *cmd, size_t len, struct cw_shlex *out);
void cw_shlex_free(struct cw_shlex *s);

#endif
