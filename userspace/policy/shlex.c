// SPDX-License-Identifier: Apache-2.0
/*
 * Static shell lexer for policy conditions: the program names
 * of every simple command bash would run for a command line, found without
 * executing or expanding anything. This file holds the lexer's state, the
 * program list, what it tracks of variables, and the interface; the other
 * parts are listed in shlex_int.h.
 *
 * Output
 *   programs  basenames (`/bin/rm` -> `rm`), deduplicated, in order of first
 *             appearance. Builtins and `[[` are listed by name (`cd`, `echo`,
 *             `[`, `test`, `[[`). A wrapper is listed and so is the program
 *             it runs (`sudo env X=1 nice -n 5 rm f` -> sudo, env, nice, rm).
 *             An empty command word (`""`) runs nothing and is not listed.
 *   opaque    true when some program cannot be known from the text; `why`
 *             holds the first reason. Programs found so far are still listed.
 *
 * Syntax understood (bash 5.2)
 *   Quoting: '...', "..." (\" \\ \$ \` and \newline), backslash escapes,
 *   $'...' (its extent found first, as bash does; then \a \b \e \E \f \n
 *   \r \t \v \\ \' \" \? octal, \xHH, \x{H...}, \cX, and \u \U below
 *   0x80; above that the bytes depend on the locale, and a NUL cuts the
 *   string, so a program word using those is opaque), $"..." (translated at run time: opaque as a program word),
 *   line continuations. Lists and pipelines: ; & && || | |& newlines, `#`
 *   comments. Grouping: ( ), { ; }, $( ), `...` (nested), <( ), >( ),
 *   $(( )), $[ ], (( )) and bash's fallback of `((`/`$((` to nested
 *   parentheses. Compound commands: if/elif/else/fi, while/until/do/done,
 *   for NAME [in ...], for (( ; ; )), select, case/esac with ;; ;& ;;&,
 *   `{ }` bodies for for/select, [[ ]], function definitions, `!`,
 *   `time [-p]`, coproc [NAME]. Simple commands: leading assignments
 *   (NAME=, NAME+=, NAME[sub]=, NAME=(...)), redirections anywhere
 *   (N>, {var}>, <&, >&, &>, &>>, <>, >|), here-documents (<<, <<-, quoted
 *   delimiters, continuation lines, several on one line, bodies expanded
 *   when the delimiter is unquoted) and here-strings. Substitutions count
 *   wherever they appear: arguments, redirection targets, assignment values,
 *   case patterns and subjects, for lists, ${...} operands, array subscripts,
 *   arithmetic and unquoted here-document bodies. Case patterns, here-document
 *   text and arithmetic are never taken as commands.
 *
 * Wrappers followed (their options are parsed; an unknown option, an
 * expansion that may be an option, or an unquoted expansion, glob or brace
 * before the wrapped command makes the result opaque: it could shift which
 * word is the program)
 *   env (-S: opaque), sudo (-s/-i: opaque), doas (-s: opaque), nice, nohup,
 *   timeout, time, stdbuf, setsid, xargs (no command: echo; -I/-i string in
 *   the program word: opaque), exec, command (-v/-V list without running),
 *   builtin, chroot, ionice, chrt, taskset, nsenter, unshare, flock (-c:
 *   opaque), runuser -u, find -exec/-execdir/-ok/-okdir, busybox APPLET,
 *   strace, ltrace, pkexec, fakeroot, eatmydata, unbuffer, catchsegv,
 *   valgrind, proxychains, torsocks, rsync -e (split, not run by a shell).
 *   A wrapper that would start a shell without a command (chroot DIR,
 *   unshare, nsenter, pkexec ...) is opaque; so is find with any expansion
 *   among its arguments. Programs not listed here are taken at face value:
 *   a policy should prefer allowlists (`in`) to denylists (`not_in`).
 *
 * Opaque
 *   - a command word with an expansion ($X, ${X}, $(...), `...`), a glob
 *     (* ? [..] or an extglob group), brace expansion, $"..." or an
 *     undecodable $'...'; tilde is fine (`~/bin/x` -> `x`);
 *   - eval, source, `.`, trap with a command, fc, alias definitions,
 *     hash -p, enable -f, mapfile/readarray -C, compgen/complete -C/-F,
 *     watch, parallel, su, script, sg, newgrp, at, batch, systemd-run, pwsh;
 *   - shells (sh bash dash zsh ksh mksh yash ash fish csh tcsh busybox sh
 *     ...) run with -c, -s or -i, or with no script operand (they read
 *     commands from stdin: pipes, here-documents, here-strings);
 *   - interpreters given inline code or reading code from stdin:
 *     python -c, perl -e/-E/-M/-m, ruby -e, node -e/-p/-i, php -r/-R/-B/-E/-a,
 *     lua -e, Rscript/R -e, expect -c, tclsh with no script; an awk program
 *     text containing system, `|` or @load (or awk -l); a sed script with
 *     the e command or the s///e flag; vi/vim/nvim/ex -c/+cmd/-S/-s/-e;
 *     tar --to-command/--checkpoint-action/-I/-F and similar; rsync -e with
 *     shell syntax; git -c KEY other than a few harmless keys,
 *     git --exec-path; ssh with a remote command or -o ProxyCommand/
 *     LocalCommand/KnownHostsCommand. An interpreter or shell running a
 *     script file is just that program: the file is not read;
 *   - a function definition (f() { }, function f { }), since a later word
 *     may call it;
 *   - assigning a variable that names code to run: BASH_ENV, ENV, PS0-PS4,
 *     PROMPT_COMMAND, SHELLOPTS, BASHOPTS, LD_PRELOAD, LD_AUDIT,
 *     LD_LIBRARY_PATH, BASH_FUNC_*, GIT_CONFIG*, PAGER, EDITOR, VISUAL,
 *     GIT_SSH_COMMAND and the like (as a prefix, through env or sudo, or by
 *     read, declare, export, printf -v, ...). PATH= is not opaque: the name
 *     stays known;
 *   - bash evaluates array subscripts, and so command substitutions, found
 *     in variable values used as arithmetic or as variable names. So:
 *     ${!x} (indirection), ${x@P}, declare/typeset/local -n or -i, a
 *     variable name built from an expansion (read "$v", printf -v "$v",
 *     declare "$v"=..., [[ -v $v ]]), positional parameters or command
 *     output in arithmetic, and any variable read by arithmetic ((( )),
 *     $(( )), let, [[ -eq ]], subscripts, ${x:off:len}) unless the same
 *     line gives it only integer values (NAME=123, for NAME in 1 2,
 *     ((NAME = expr))) and never binds it otherwise (read NAME, ...);
 *   - syntax errors: unterminated quotes, substitutions or compound
 *     commands, unexpected tokens, a here-document left open inside $( );
 *     a NUL byte; a line continuation inside an operator.
 *
 * Bounds: input longer than CW_SHLEX_MAX_INPUT is opaque and not analysed;
 * nesting deeper than CW_SHLEX_MAX_DEPTH ("nesting too deep") and more than
 * CW_SHLEX_MAX_PROGRAMS distinct programs ("too many programs") stop the
 * analysis, opaque. Each byte is examined a bounded number of times: text is
 * parsed once (backquote bodies are copied once per nesting level, and
 * words read again as arithmetic are scanned, never parsed again); the
 * look-ahead that tells `((` from `( (` has a budget of CW_SHLEX_MAX_DEPTH
 * steps per input byte ("input too complex"). Time and memory are linear in
 * the input. Allocation failure is the only error (-ENOMEM).
 *
 * Not modelled: the contents of files (scripts, Makefiles, configuration),
 * programs that run commands named in their own configuration, and aliases
 * or functions inherited from the environment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy/shlex_int.h"

#define PTAB_CAP 8192u		/* > 2 * CW_SHLEX_MAX_PROGRAMS */

void shlex_opaque(struct lx *lx, const char *fmt, ...)
{
	va_list ap;

	if (lx->out->opaque)
		return;
	lx->out->opaque = true;
	va_start(ap, fmt);
	vsnprintf(lx->out->why, sizeof(lx->out->why), fmt, ap);
	va_end(ap);
}

void shlex_bound(struct lx *lx, const char *why)
{
	shlex_opaque(lx, "%s", why);
	lx->abort = true;
}

bool shlex_enter(struct lx *lx)
{
	if (STOP(lx))
		return false;
	if (lx->depth >= CW_SHLEX_MAX_DEPTH) {
		shlex_bound(lx, "nesting too deep");
		return false;
	}
	lx->depth++;
	return true;
}

void shlex_leave(struct lx *lx)
{
	lx->depth--;
}

static uint32_t hash(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

/* ---- string sets ---- */

static bool set_has(const struct strset *st, const char *p, size_t n)
{
	size_t i;

	if (!st->cap)
		return false;
	for (i = hash(p, n) & (st->cap - 1); st->v[i];
	     i = (i + 1) & (st->cap - 1))
		if (!strncmp(st->v[i], p, n) && !st->v[i][n])
			return true;
	return false;
}

void shlex_set_add(struct lx *lx, struct strset *st, const char *p, size_t n)
{
	size_t i;
	char *d;

	if (lx->err || set_has(st, p, n))
		return;
	if ((st->n + 1) * 2 > st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16, j;
		char **v = calloc(cap, sizeof(*v));

		if (!v) {
			lx->err = -ENOMEM;
			return;
		}
		for (j = 0; j < st->cap; j++) {
			const char *q = st->v[j];

			if (!q)
				continue;
			for (i = hash(q, strlen(q)) & (cap - 1); v[i];
			     i = (i + 1) & (cap - 1))
				;
			v[i] = st->v[j];
		}
		free(st->v);
		st->v = v;
		st->cap = cap;
	}
	d = strndup(p, n);
	if (!d) {
		lx->err = -ENOMEM;
		return;
	}
	for (i = hash(p, n) & (st->cap - 1); st->v[i];
	     i = (i + 1) & (st->cap - 1))
		;
	st->v[i] = d;
	st->n++;
}

static void set_free(struct strset *st)
{
	size_t i;

	for (i = 0; i < st->cap; i++)
		free(st->v[i]);
	free(st->v);
	memset(st, 0, sizeof(*st));
}

/* ---- programs ---- */

void shlex_add_prog(struct lx *lx, const char *p, size_t n)
{
	struct cw_shlex *o = lx->out;
	size_t i;
	char *d;

	if (STOP(lx))
		return;
	while (n > 1 && p[n - 1] == '/')
		n--;
	for (i = n; i > 0; i--) {
		if (p[i - 1] == '/') {
			p += i;
			n -= i;
			break;
		}
	}
	if (!n || (n == 1 && p[0] == '/'))
		return;
	for (i = hash(p, n) & (lx->pcap - 1); lx->ptab[i];
	     i = (i + 1) & (lx->pcap - 1)) {
		const char *q = o->programs[lx->ptab[i] - 1];

		if (!strncmp(q, p, n) && !q[n])
			return;
	}
	if (o->nprograms >= CW_SHLEX_MAX_PROGRAMS) {
		shlex_bound(lx, "too many programs");
		return;
	}
	if (o->nprograms == lx->prog_alloc) {
		size_t na = lx->prog_alloc ? lx->prog_alloc * 2 : 16;
		char **v = realloc(o->programs, na * sizeof(*v));

		if (!v) {
			lx->err = -ENOMEM;
			return;
		}
		o->programs = v;
		lx->prog_alloc = na;
	}
	d = strndup(p, n);
	if (!d) {
		lx->err = -ENOMEM;
		return;
	}
	o->programs[o->nprograms++] = d;
	lx->ptab[i] = (uint32_t)o->nprograms;
}

/* ---- variables: arithmetic and code-carrying names ---- */

/* Assigning these makes bash or common tools run code taken from them. */
bool shlex_code_var(const char *p, size_t n)
{
	static const char *const names[] = {
		"BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS3", "PS4",
		"PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
		"BASH_LOADABLES_PATH", "BASH_XTRACEFD", "LD_PRELOAD",
		"LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "PAGER",
		"MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL",
		"SUDO_EDITOR", "FCEDIT", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF",
		"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
		"GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "LESSOPEN", "LESSCLOSE",
		"BROWSER", "PERL5OPT", "PERL5DB", "PYTHONSTARTUP",
		"NODE_OPTIONS", "RUBYOPT", "TAR_OPTIONS", "RSYNC_RSH",
		"MAKEFLAGS", "TEXTDOMAINDIR",
	};
	size_t i;

	if ((n >= 10 && !strncmp(p, "BASH_FUNC_", 10)) ||
	    (n >= 10 && !strncmp(p, "GIT_CONFIG", 10)))
		return true;
	for (i = 0; i < CW_ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && !strncmp(names[i], p, n))
			return true;
	return false;
}

void shlex_bind_name(struct lx *lx, const char *p, size_t n, bool safe)
{
	if (shlex_code_var(p, n))
		shlex_opaque(lx, "assigns %.*s, which names code to run",
			     (int)n, p);
	shlex_set_add(lx, safe ? &lx->safe : &lx->unsafe, p, n);
}

/* A value bash can only read as a plain integer. */
bool shlex_int_text(const char *p)
{
	if (*p == '-')
		p++;
	while (is_digit((unsigned char)*p))
		p++;
	return !*p;
}

/* Variables bash sets itself to text an attacker can choose. */
static bool tainted_var(const char *p)
{
	static const char *const names[] = {
		"_", "REPLY", "OPTARG", "MAPFILE", "PWD", "OLDPWD", "COPROC",
		"DIRSTACK", "HOSTNAME", "FUNCNAME", "GROUPS", "HOME", "IFS",
	};
	size_t i;

	if (!strncmp(p, "BASH", 4) || !strncmp(p, "COMP", 4) ||
	    !strncmp(p, "READLINE", 8))
		return true;
	for (i = 0; i < CW_ARRAY_SIZE(names); i++)
		if (!strcmp(p, names[i]))
			return true;
	return false;
}

/* Integers bash maintains. */
static bool int_var(const char *p)
{
	static const char *const names[] = {
		"RANDOM", "SRANDOM", "LINENO", "SECONDS", "EPOCHSECONDS",
		"PPID", "UID", "EUID", "OPTIND", "HISTCMD", "SHLVL",
	};
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(names); i++)
		if (!strcmp(p, names[i]))
			return true;
	return false;
}

static void arith_final(struct lx *lx)
{
	size_t i;

	for (i = 0; i < lx->aref.cap && !lx->out->opaque; i++) {
		const char *p = lx->aref.v[i];

		if (!p)
			continue;
		if (int_var(p) && !set_has(&lx->unsafe, p, strlen(p)))
			continue;
		if (tainted_var(p) || !set_has(&lx->safe, p, strlen(p)) ||
		    set_has(&lx->unsafe, p, strlen(p)))
			shlex_opaque(lx,
				     "arithmetic reads variable %s, whose value "
				     "may hold code", p);
	}
}

/* ---- interface ---- */

int cw_shlex_analyze(const char *cmd, size_t len, struct cw_shlex *out)
{
	struct level top = { 0 };
	struct lx lx = { 0 };
	struct src s = { 0 };
	const char *nul;
	int err;

	memset(out, 0, sizeof(*out));
	if (!cmd)
		len = 0;
	lx.out = out;
	if (len > CW_SHLEX_MAX_INPUT) {
		shlex_opaque(&lx, "input too long");
		return 0;
	}
	lx.ptab = calloc(PTAB_CAP, sizeof(*lx.ptab));
	if (!lx.ptab)
		return -ENOMEM;
	lx.pcap = PTAB_CAP;
	lx.lvl = &top;
	lx.budget = (size_t)CW_SHLEX_MAX_DEPTH * len + 65536;
	nul = len ? memchr(cmd, '\0', len) : NULL;
	if (nul) {
		/* bash gets a C string: nothing after the NUL runs */
		shlex_opaque(&lx, "NUL byte in command");
		len = (size_t)(nul - cmd);
	}
	s.s = cmd ? cmd : "";
	s.len = len;
	shlex_parse_top(&lx, &s);
	shlex_src_done(&s);
	if (!lx.err && !lx.abort)
		arith_final(&lx);
	err = lx.err;
	shlex_level_free(&top);
	set_free(&lx.aref);
	set_free(&lx.safe);
	set_free(&lx.unsafe);
	free(lx.ptab);
	if (err) {
		cw_shlex_free(out);
		return err;
	}
	return 0;
}

void cw_shlex_free(struct cw_shlex *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprograms; i++)
		free(s->programs[i]);
	free(s->programs);
	memset(s, 0, sizeof(*s));
}

