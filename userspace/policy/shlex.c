// SPDX-License-Identifier: Apache-2.0
/*
 * Static shell lexer for policy conditions: the program names
 * of every simple command bash would run for a command line, found without
 * executing or expanding anything.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/shlex.h"
#include "lib/util.h"

/* Word flags. */
#define W_QUOTED 0x001u	/* some quoting: no reserved word */
#define W_EXPAND 0x002u	/* $x, ${..}, $(..), `..`, $((..)), <(..) */
#define W_GLOB 0x004u
#define W_BRACE 0x008u
#define W_UNDEC 0x010u	/* $'...' escape that depends on the locale */
#define W_LOCALE 0x020u	/* $"..." */
#define W_ASSIGN 0x040u	/* NAME=, NAME+=, NAME[sub]= (unquoted prefix) */
#define W_ARRAY 0x080u	/* NAME=( ... ) */
#define W_SPLIT 0x100u	/* unquoted expansion: may become several words */
#define W_DYN (W_EXPAND | W_GLOB | W_BRACE | W_UNDEC | W_LOCALE)
#define W_WILD (W_SPLIT | W_GLOB | W_BRACE)

/* Word reading modes. */
#define M_CMD 0x1u	/* before the command word: NAME[a b]= is one word */
#define M_ELEM 0x2u	/* element of NAME=( ... ): [sub]=value */
#define M_COND 0x4u	/* inside [[ ]] */

enum {
	T_EOF,
	T_WORD,
	T_NL,
	T_SEMI,
	T_AMP,
	T_AND,
	T_OR,
	T_PIPE,
	T_PIPEAMP,
	T_DSEMI,
	T_SEMIAMP,
	T_DSEMIAMP,
	T_LP,
	T_RP,
	T_REDIR,
	T_CONDOP,
};

enum { R_OTHER, R_HEREDOC, R_HEREDOC_STRIP };

struct word {
	struct cw_buf v;	/* text after quote removal, without expansions */
	unsigned fl;
	const char *raw;	/* source text */
	size_t rawlen;
	size_t eq;		/* W_ASSIGN: length of the NAME part */
};

struct tok {
	int t;
	int r;			/* T_REDIR: R_* */
	struct word w;		/* T_WORD */
};

struct src {
	const char *s;
	size_t len;
	size_t pos;
	struct tok back[4];
	int nback;
	bool lost;		/* pushback overflow: never expected */
};

struct hdoc {
	char *delim;
	bool strip;
	bool quoted;
};

/* Here-documents wait for the next newline of their own nesting level. */
struct level {
	struct hdoc *v;
	size_t n, cap;
};

struct strset {
	char **v;
	size_t cap;		/* power of two, or 0 */
	size_t n;
};

struct lx {
	struct cw_shlex *out;
	int err;		/* -ENOMEM, sticky */
	bool abort;		/* a bound was hit */
	unsigned depth;
	size_t budget;		/* steps left for look-ahead scans */
	uint32_t *ptab;		/* program index + 1, open addressing */
	size_t pcap;
	size_t prog_alloc;
	struct level *lvl;
	struct strset aref;	/* variables read by arithmetic */
	struct strset safe;	/* given integer values */
	struct strset unsafe;	/* bound in any other way */
};

#define STOP(lx) ((lx)->err || (lx)->abort)
#define PTAB_CAP 8192u		/* > 2 * CW_SHLEX_MAX_PROGRAMS */

static void parse_list(struct lx *lx, struct src *s);
static void parse_command(struct lx *lx, struct src *s);
static void read_dollar(struct lx *lx, struct src *s, struct word *w,
			bool dq);
static void read_bq(struct lx *lx, struct src *s, struct word *w, bool dq);
static void read_dq(struct lx *lx, struct src *s, struct word *w,
		    bool heredoc);
static void scan_arith(struct lx *lx, struct src *s, int closer,
		       bool parse);
static void close_dparen(struct lx *lx, struct src *s);
static void run_argv(struct lx *lx, struct word *w, size_t n, size_t i);
static void next_tok(struct lx *lx, struct src *s, struct tok *t,
		     unsigned mode);

static __attribute__((format(printf, 2, 3))) void
opaque(struct lx *lx, const char *fmt, ...)
{
	va_list ap;

	if (lx->out->opaque)
		return;
	lx->out->opaque = true;
	va_start(ap, fmt);
	vsnprintf(lx->out->why, sizeof(lx->out->why), fmt, ap);
	va_end(ap);
}

static void bound(struct lx *lx, const char *why)
{
	opaque(lx, "%s", why);
	lx->abort = true;
}

static bool enter(struct lx *lx)
{
	if (STOP(lx))
		return false;
	if (lx->depth >= CW_SHLEX_MAX_DEPTH) {
		bound(lx, "nesting too deep");
		return false;
	}
	lx->depth++;
	return true;
}

static void leave(struct lx *lx)
{
	lx->depth--;
}

static inline int at(const struct src *s, size_t i)
{
	return i < s->len ? (unsigned char)s->s[i] : -1;
}

static bool is_name0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name(int c)
{
	return is_name0(c) || (c >= '0' && c <= '9');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(int c)
{
	return c == ' ' || c == '\t';
}

static bool is_ident(const char *p, size_t n)
{
	size_t i;

	if (!n || !is_name0((unsigned char)p[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!is_name((unsigned char)p[i]))
			return false;
	return true;
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

static void set_add(struct lx *lx, struct strset *st, const char *p, size_t n)
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

static void add_prog(struct lx *lx, const char *p, size_t n)
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
		bound(lx, "too many programs");
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

/* ---- words and tokens ---- */

static void wput(struct lx *lx, struct word *w, const void *p, size_t n)
{
	if (lx->err)
		return;
	if (cw_buf_append(&w->v, p, n))
		lx->err = -ENOMEM;
}

static void wputc(struct lx *lx, struct word *w, char c)
{
	wput(lx, w, &c, 1);
}

static const char *wstr(const struct word *w)
{
	return w->v.data ? w->v.data : "";
}

static bool wis(const struct word *w, const char *lit)
{
	return !(w->fl & (W_QUOTED | W_DYN)) && !strcmp(wstr(w), lit);
}

static void tok_free(struct tok *t)
{
	cw_buf_free(&t->w.v);
	memset(t, 0, sizeof(*t));
}

static void push_back(struct src *s, struct tok *t)
{
	if (s->nback < (int)CW_ARRAY_SIZE(s->back)) {
		s->back[s->nback++] = *t;
		memset(t, 0, sizeof(*t));
	} else {
		s->lost = true;
		tok_free(t);
	}
}

static void src_done(struct src *s)
{
	while (s->nback > 0)
		tok_free(&s->back[--s->nback]);
}

static void level_free(struct level *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].delim);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- variables: arithmetic and code-carrying names ---- */

/* Assigning these makes bash or common tools run code taken from them. */
static bool code_var(const char *p, size_t n)
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

static void bind_name(struct lx *lx, const char *p, size_t n, bool safe)
{
	if (code_var(p, n))
		opaque(lx, "assigns %.*s, which names code to run", (int)n, p);
	set_add(lx, safe ? &lx->safe : &lx->unsafe, p, n);
}

/* A value bash can only read as a plain integer. */
static bool int_text(const char *p)
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
			opaque(lx, "arithmetic reads variable %s, whose value "
				   "may hold code", p);
	}
}

/* ---- substitutions ---- */

/*
 * Offset of the ')' that closes `((` or `$((` whose text starts at p, or
 * SIZE_MAX when bash would read nested parentheses instead.
 */
static size_t arith_end(struct lx *lx, const struct src *s, size_t p)
{
	size_t start = p;
	int depth = 0, c;

	while ((c = at(s, p)) >= 0) {
		/* look-ahead over text parsed otherwise later: bound it */
		if (p - start >= lx->budget) {
			bound(lx, "input too complex");
			return SIZE_MAX;
		}
		switch (c) {
		case '\\':
			p++;
			break;
		case '\'':
		case '`':
			while (at(s, ++p) >= 0 && at(s, p) != c)
				if (c == '`' && at(s, p) == '\\')
					p++;
			break;
		case '"':
			while (at(s, ++p) >= 0 && at(s, p) != '"')
				if (at(s, p) == '\\')
					p++;
			break;
		case '(':
			depth++;
			break;
		case ')':
			if (depth--)
				break;
			lx->budget -= p - start;
			return at(s, p + 1) == ')' ? p : SIZE_MAX;
		}
		p++;
	}
	lx->budget -= p - start < lx->budget ? p - start : lx->budget;
	return SIZE_MAX;
}

static void parse_top(struct lx *lx, struct src *s);

/* Parses $( ... ), <( ... ), >( ... ) from s->pos to the closing ')'. */
static void parse_nested(struct lx *lx, struct src *s)
{
	struct level lv = { 0 }, *saved = lx->lvl;
	struct tok t;

	if (!enter(lx))
		return;
	lx->lvl = &lv;
	for (;;) {
		parse_list(lx, s);
		next_tok(lx, s, &t, 0);
		if (t.t == T_RP)
			break;
		if (t.t == T_EOF) {
			opaque(lx, "unterminated command substitution");
			break;
		}
		opaque(lx, "syntax error in command substitution");
		tok_free(&t);
	}
	tok_free(&t);
	if (lv.n)
		opaque(lx, "here-document inside a substitution is not closed");
	level_free(&lv);
	lx->lvl = saved;
	leave(lx);
}

/* Parses text as a separate source (backquotes, rsync -e). */
static void parse_text(struct lx *lx, const char *p, size_t n)
{
	struct level lv = { 0 }, *saved = lx->lvl;
	struct src sub = { .s = p, .len = n };

	if (!enter(lx))
		return;
	lx->lvl = &lv;
	parse_top(lx, &sub);
	src_done(&sub);
	if (lv.n)
		opaque(lx, "here-document inside a substitution is not closed");
	level_free(&lv);
	lx->lvl = saved;
	leave(lx);
}

static void arith_text(struct lx *lx, const char *p, size_t n)
{
	struct src t = { .s = p, .len = n };

	scan_arith(lx, &t, -1, false);
	src_done(&t);
}

/* `...`: s->pos at the opening backquote. */
static void read_bq(struct lx *lx, struct src *s, struct word *w, bool dq)
{
	struct cw_buf b = { 0 };
	bool closed = false;
	int c;

	w->fl |= W_EXPAND;
	s->pos++;
	while ((c = at(s, s->pos)) >= 0) {
		if (c == '`') {
			s->pos++;
			closed = true;
			break;
		}
		if (c == '\\') {
			int d = at(s, s->pos + 1);

			if (d == '$' || d == '`' || d == '\\' ||
			    (dq && d == '"')) {
				s->pos++;
				c = d;
			}
		}
		if (cw_buf_append(&b, &s->s[s->pos], 1)) {
			lx->err = -ENOMEM;
			goto out;
		}
		s->pos++;
	}
	if (!closed)
		opaque(lx, "unterminated backquote");
	parse_text(lx, b.data ? b.data : "", b.len);
out:
	cw_buf_free(&b);
}

static int hexval(int c)
{
	if (is_digit(c))
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static inline int at_lim(const struct src *s, size_t i, size_t end)
{
	return i < end ? (unsigned char)s->s[i] : -1;
}

/*
 * $'...': s->pos at '$'. Like bash, the extent is found first (a backslash
 * escapes the next byte), then the text inside it is decoded.
 */
static void read_ansic(struct lx *lx, struct src *s, struct word *w)
{
	size_t p = s->pos + 2, end = p;
	bool cut = false;
	int c, d, k;

	w->fl |= W_QUOTED;
	while ((c = at(s, end)) >= 0 && c != '\'')
		end += c == '\\' ? 2 : 1;
	if (c < 0) {
		opaque(lx, "unterminated $'...'");
		s->pos = s->len;
		return;
	}
	s->pos = end + 1;
#define IN(i) at_lim(s, i, end)
	while (p < end) {
		unsigned v = 0;

		c = IN(p++);
		if (c != '\\' || p >= end) {
			if (!cut)
				wputc(lx, w, (char)c);
			continue;
		}
		c = IN(p++);
		switch (c) {
		case 'a': v = 7; break;
		case 'b': v = 8; break;
		case 'e':
		case 'E': v = 27; break;
		case 'f': v = 12; break;
		case 'n': v = 10; break;
		case 'r': v = 13; break;
		case 't': v = 9; break;
		case 'v': v = 11; break;
		case '\\':
		case '\'':
		case '"':
		case '?': v = (unsigned)c; break;
		case 'c':
			d = IN(p);
			if (d < 0) {
				if (!cut)
					wput(lx, w, "\\c", 2);
				continue;
			}
			p++;
			if (d == '\\' && IN(p) == '\\')
				p++;
			v = d == '?' ? 0x7f : (unsigned)d & 0x1f;
			break;
		case 'x':
			if (IN(p) == '{') {
				/* \x{HHH...}: every hex digit, then '}' */
				for (p++; hexval(IN(p)) >= 0; p++)
					v = (v * 16 + (unsigned)hexval(IN(p))) &
					    0xfff;
				if (IN(p) == '}')
					p++;
				break;
			}
			for (k = 0; k < 2 && hexval(IN(p)) >= 0; k++)
				v = v * 16 + (unsigned)hexval(IN(p++));
			if (!k) {
				if (!cut)
					wput(lx, w, "\\x", 2);
				continue;
			}
			break;
		case 'u':
		case 'U':
			for (k = 0; k < (c == 'u' ? 4 : 8) &&
				    hexval(IN(p)) >= 0; k++)
				v = (v << 4 | (unsigned)hexval(IN(p++))) &
				    0x0fffffff;
			if (!k) {
				if (!cut) {
					wputc(lx, w, '\\');
					wputc(lx, w, (char)c);
				}
				continue;
			}
			if (v >= 0x80) {
				/* the bytes depend on the locale */
				w->fl |= W_UNDEC;
				continue;
			}
			break;
		default:
			if (c >= '0' && c <= '7') {
				v = (unsigned)(c - '0');
				for (k = 0; k < 2 && IN(p) >= '0' &&
					    IN(p) <= '7'; k++)
					v = v * 8 + (unsigned)(IN(p++) - '0');
				break;
			}
			if (!cut) {
				wputc(lx, w, '\\');
				wputc(lx, w, (char)c);
			}
			continue;
		}
		v &= 0xff;
		if (!v) {
			/* bash cuts the string at a NUL */
			cut = true;
			w->fl |= W_UNDEC;
		}
		if (!cut)
			wputc(lx, w, (char)v);
	}
#undef IN
}

/* Scans a subscript from '[' to its ']', parsing substitutions. */
static void read_sub(struct lx *lx, struct src *s, struct word *w)
{
	size_t start = s->pos + 1;
	int depth = 0, c;

	wputc(lx, w, '[');
	s->pos++;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			opaque(lx, "unterminated array subscript");
			return;
		}
		if (c == ']' && !depth)
			break;
		if (c == '[')
			depth++;
		else if (c == ']')
			depth--;
		if (c == '\\' && at(s, s->pos + 1) >= 0) {
			wput(lx, w, &s->s[s->pos], 2);
			s->pos += 2;
		} else if (c == '\'') {
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				wputc(lx, w, (char)c);
			if (c < 0) {
				opaque(lx, "unterminated single quote");
				return;
			}
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			read_dq(lx, s, w, false);
		} else if (c == '$') {
			read_dollar(lx, s, w, true);
		} else if (c == '`') {
			read_bq(lx, s, w, true);
		} else {
			wputc(lx, w, (char)c);
			s->pos++;
		}
	}
	if (STOP(lx))
		return;
	if (!(s->pos - start == 1 &&
	      (s->s[start] == '@' || s->s[start] == '*')))
		arith_text(lx, s->s + start, s->pos - start);
	wputc(lx, w, ']');
	s->pos++;
}

enum { BR_SIMPLE, BR_LEN, BR_COMPLEX };

/* ${...}: s->pos at '$'. *kind and the name tell arithmetic what it read. */
static void read_brace(struct lx *lx, struct src *s, struct word *w,
		       int *kind, const char **name, size_t *nlen)
{
	struct word scratch = { 0 };
	size_t p = s->pos + 2, n0, nl = 0;
	int c, k = BR_SIMPLE;
	bool bang = false;

	w->fl |= W_EXPAND;
	*kind = BR_COMPLEX;
	if (!enter(lx))
		return;
	c = at(s, p);
	if (c == ' ' || c == '\t' || c == '\n' || c == '|') {
		struct tok t;

		struct level lv = { 0 }, *saved = lx->lvl;

		/* bash 5.3 runs ${ cmd; } in the current shell */
		opaque(lx, "${ command; } substitution");
		lx->lvl = &lv;
		s->pos = p + 1;
		parse_list(lx, s);
		next_tok(lx, s, &t, M_CMD);
		if (!(t.t == T_WORD && wis(&t.w, "}")))
			opaque(lx, "unterminated ${ command; }");
		tok_free(&t);
		level_free(&lv);
		lx->lvl = saved;
		goto out;
	}
	if (c == '#' && at(s, p + 1) != '}' &&
	    (is_name(at(s, p + 1)) || strchr("@*#?$!-", at(s, p + 1)))) {
		k = BR_LEN;
		p++;
	} else if (c == '!' && at(s, p + 1) != '}') {
		size_t q = p + 1;

		while (is_name(at(s, q)))
			q++;
		if (!((at(s, q) == '[' &&
		       (at(s, q + 1) == '@' || at(s, q + 1) == '*') &&
		       at(s, q + 2) == ']' && at(s, q + 3) == '}') ||
		      ((at(s, q) == '@' || at(s, q) == '*') &&
		       at(s, q + 1) == '}' && q > p + 1)))
			opaque(lx, "indirect expansion ${!...}");
		k = BR_COMPLEX;
		bang = true;
		p++;
	}
	n0 = p;
	c = at(s, p);
	if (is_name0(c)) {
		while (is_name(at(s, p)))
			p++;
	} else if (is_digit(c)) {
		while (is_digit(at(s, p)))
			p++;
		if (k == BR_SIMPLE)
			k = BR_COMPLEX;
	} else if (c >= 0 && strchr("@*#?$!-", c)) {
		p++;
		if (k == BR_SIMPLE)
			k = (c == '#' || c == '?' || c == '$' || c == '!') ?
				    BR_LEN : BR_COMPLEX;
	} else {
		opaque(lx, "bad substitution");
	}
	nl = p - n0;
	if (bang && (at(s, p) == '*' || at(s, p) == '@') && at(s, p + 1) == '}')
		p++;
	s->pos = p;
	if (at(s, s->pos) == '[') {
		read_sub(lx, s, &scratch);
		if (k == BR_SIMPLE)
			k = BR_COMPLEX;
	}
	c = at(s, s->pos);
	if (c == '}') {
		s->pos++;
		goto done;
	}
	k = BR_COMPLEX;
	if (c == ':' && !strchr("-=?+", at(s, s->pos + 1))) {
		/* ${x:offset:length} is arithmetic */
		s->pos++;
		scan_arith(lx, s, '}', true);
	} else if (c == '@') {
		if (at(s, s->pos + 1) == 'P')
			opaque(lx, "${x@P} expands its value as a prompt");
	} else if (c >= 0 && strchr(":-=?+#%/^,", c)) {
		if ((c == '=' || (c == ':' && at(s, s->pos + 1) == '=')) &&
		    is_ident(s->s + n0, nl))
			bind_name(lx, s->s + n0, nl, false);
	} else {
		opaque(lx, "bad substitution");
	}
	/* operand: the first unquoted '}' closes */
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			opaque(lx, "unterminated ${");
			break;
		}
		if (c == '}') {
			s->pos++;
			break;
		}
		if (c == '\\') {
			s->pos += at(s, s->pos + 1) >= 0 ? 2 : 1;
		} else if (c == '\'') {
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				;
			if (c < 0) {
				opaque(lx, "unterminated single quote");
				break;
			}
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			read_dq(lx, s, &scratch, false);
		} else if (c == '$') {
			read_dollar(lx, s, &scratch, true);
		} else if (c == '`') {
			read_bq(lx, s, &scratch, true);
		} else {
			s->pos++;
		}
	}
done:
	*kind = k;
	*name = s->s + n0;
	*nlen = nl;
out:
	cw_buf_free(&scratch.v);
	leave(lx);
}

/* $...: s->pos at '$'. */
static void read_dollar(struct lx *lx, struct src *s, struct word *w, bool dq)
{
	int c = at(s, s->pos + 1), kind;
	const char *nm;
	size_t nl;

	if (c == '\\' && at(s, s->pos + 2) == '\n')
		opaque(lx, "line continuation after $");
	if (c == '(') {
		w->fl |= W_EXPAND;
		if (at(s, s->pos + 2) == '(' &&
		    arith_end(lx, s, s->pos + 3) != SIZE_MAX) {
			s->pos += 3;
			scan_arith(lx, s, ')', true);
			close_dparen(lx, s);
		} else {
			s->pos += 2;
			parse_nested(lx, s);
		}
	} else if (c == '{') {
		read_brace(lx, s, w, &kind, &nm, &nl);
	} else if (c == '[') {
		w->fl |= W_EXPAND;
		s->pos += 2;
		scan_arith(lx, s, ']', true);
		if (at(s, s->pos) == ']')
			s->pos++;
	} else if (c == '\'' && !dq) {
		read_ansic(lx, s, w);
		return;
	} else if (c == '"' && !dq) {
		w->fl |= W_LOCALE | W_QUOTED;
		s->pos += 2;
		read_dq(lx, s, w, false);
		return;
	} else if (is_name0(c)) {
		w->fl |= W_EXPAND;
		s->pos++;
		while (is_name(at(s, s->pos)))
			s->pos++;
	} else if (is_digit(c) || (c >= 0 && strchr("@*#?$!-", c))) {
		w->fl |= W_EXPAND;
		s->pos += 2;
	} else {
		wputc(lx, w, '$');
		s->pos++;
	}
}

/* "...": s->pos after the opening quote; a here-document body has none. */
static void read_dq(struct lx *lx, struct src *s, struct word *w,
		    bool heredoc)
{
	int c;

	w->fl |= W_QUOTED;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			if (!heredoc)
				opaque(lx, "unterminated double quote");
			return;
		}
		if (c == '"' && !heredoc) {
			s->pos++;
			return;
		}
		if (c == '\\') {
			int d = at(s, s->pos + 1);

			if (d == '\n') {
				s->pos += 2;
				continue;
			}
			if (d == '$' || d == '`' || d == '\\' ||
			    (d == '"' && !heredoc)) {
				wputc(lx, w, (char)d);
				s->pos += 2;
				continue;
			}
			wputc(lx, w, '\\');
			s->pos++;
			continue;
		}
		if (c == '$') {
			read_dollar(lx, s, w, true);
			continue;
		}
		if (c == '`') {
			read_bq(lx, s, w, true);
			continue;
		}
		wputc(lx, w, (char)c);
		s->pos++;
	}
}

/* ---- arithmetic ---- */

/* After arithmetic that should end with "))". */
static void close_dparen(struct lx *lx, struct src *s)
{
	if (STOP(lx))
		return;
	if (at(s, s->pos) == ')' && at(s, s->pos + 1) == ')') {
		s->pos += 2;
		return;
	}
	opaque(lx, "syntax error in arithmetic");
	if (at(s, s->pos) == ')')
		s->pos++;
}

/*
 * ${...} in a word's text being read as arithmetic. The word was parsed
 * already, so it is not parsed again: only ${name}, ${#name}, ${#name[@]}
 * and ${#} ${?} ${$} ${!} are understood.
 */
static void brace_text(struct lx *lx, struct src *s)
{
	size_t p = s->pos + 2, q, len;
	const char *b = s->s + p;
	int depth = 1, c;

	for (q = p; (c = at(s, q)) >= 0; q++) {
		if (c == '\\') {
			q++;
		} else if (c == '\'') {
			while (at(s, ++q) >= 0 && at(s, q) != '\'')
				;
		} else if (c == '$' && at(s, q + 1) == '{') {
			depth++;
			q++;
		} else if (c == '}' && !--depth) {
			break;
		}
	}
	if (q > s->len)
		q = s->len;
	len = q - p;
	s->pos = q < s->len ? q + 1 : s->len;
	if (is_ident(b, len)) {
		set_add(lx, &lx->aref, b, len);
		return;
	}
	if (len == 1 && strchr("#?$!", b[0]))
		return;
	if (len > 1 && b[0] == '#') {
		b++;
		len--;
		if (len > 3 && b[len - 1] == ']' && b[len - 3] == '[' &&
		    (b[len - 2] == '@' || b[len - 2] == '*'))
			len -= 3;
		if (is_ident(b, len) || (len == 1 && strchr("#?$!@*", b[0])))
			return;
	}
	opaque(lx, "parameter expansion in arithmetic");
}

static void arith_dollar(struct lx *lx, struct src *s, bool parse,
			 struct word *scratch)
{
	int c = at(s, s->pos + 1), kind;
	const char *nm;
	size_t nl, q;

	if (c == '(') {
		if (at(s, s->pos + 2) == '(' &&
		    arith_end(lx, s, s->pos + 3) != SIZE_MAX) {
			s->pos += 3;
			scan_arith(lx, s, ')', parse);
			close_dparen(lx, s);
			return;
		}
		opaque(lx, "command output used in arithmetic");
		if (!parse) {
			s->pos = s->len;
			return;
		}
		s->pos += 2;
		parse_nested(lx, s);
	} else if (c == '{' && !parse) {
		brace_text(lx, s);
	} else if (c == '{') {
		read_brace(lx, s, scratch, &kind, &nm, &nl);
		if (kind == BR_SIMPLE && is_ident(nm, nl))
			set_add(lx, &lx->aref, nm, nl);
		else if (kind != BR_LEN)
			opaque(lx, "parameter expansion in arithmetic");
	} else if (c == '[') {
		s->pos += 2;
		scan_arith(lx, s, ']', parse);
		if (at(s, s->pos) == ']')
			s->pos++;
	} else if (is_name0(c)) {
		q = ++s->pos;
		while (is_name(at(s, s->pos)))
			s->pos++;
		set_add(lx, &lx->aref, s->s + q, s->pos - q);
	} else if (c == '#' || c == '?' || c == '$' || c == '!') {
		s->pos += 2;
	} else if (is_digit(c) || c == '@' || c == '*' || c == '-') {
		opaque(lx, "positional parameter in arithmetic");
		s->pos += 2;
	} else {
		s->pos++;
	}
}

/*
 * Arithmetic text from s->pos up to closer (')' of "))", ']' or '}' at
 * nesting level 0; -1: end of text). parse: live source, so quotes are odd
 * and substitutions are parsed; otherwise the text is a word's source whose
 * quotes bash removes before evaluating it.
 */
static void scan_arith(struct lx *lx, struct src *s, int closer, bool parse)
{
	struct word scratch = { 0 };
	int paren = 0, brack = 0, c;
	size_t q, r;

	if (!enter(lx))
		return;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			if (closer >= 0)
				opaque(lx, "unterminated arithmetic");
			break;
		}
		if (!paren && !brack && c == closer)
			break;
		if (c == '(') {
			paren++;
		} else if (c == ')') {
			if (paren)
				paren--;
			else if (closer >= 0)
				opaque(lx, "syntax error in arithmetic");
		} else if (c == '[') {
			brack++;
		} else if (c == ']') {
			if (brack)
				brack--;
		} else if (c == '\\') {
			if (at(s, s->pos + 1) == '\n') {
				s->pos += 2;
				continue;
			}
			if (parse) {
				opaque(lx, "backslash in arithmetic");
				s->pos++;
			}
		} else if (c == '\'' || c == '"') {
			if (parse) {
				opaque(lx, "quotes in arithmetic");
				s->pos++;
				if (c == '"') {
					read_dq(lx, s, &scratch, false);
				} else {
					while (at(s, s->pos) >= 0 &&
					       at(s, s->pos) != '\'')
						s->pos++;
					s->pos++;
				}
				continue;
			}
		} else if (c == '$') {
			arith_dollar(lx, s, parse, &scratch);
			continue;
		} else if (c == '`') {
			opaque(lx, "command output used in arithmetic");
			if (!parse)
				break;
			read_bq(lx, s, &scratch, false);
			continue;
		} else if (is_digit(c)) {
			while (is_name(at(s, s->pos)) || at(s, s->pos) == '#' ||
			       at(s, s->pos) == '@')
				s->pos++;
			continue;
		} else if (is_name0(c)) {
			q = s->pos;
			while (is_name(at(s, s->pos)))
				s->pos++;
			r = s->pos;
			while (is_blank(at(s, r)))
				r++;
			if (at(s, r) == '=' && at(s, r + 1) != '=')
				bind_name(lx, s->s + q, s->pos - q, true);
			else
				set_add(lx, &lx->aref, s->s + q, s->pos - q);
			continue;
		}
		s->pos++;
	}
	cw_buf_free(&scratch.v);
	leave(lx);
}

/* ---- here-documents ---- */

/* Records a here-document; its body is read at the next newline. */
static void hd_add(struct lx *lx, const struct word *w, bool strip)
{
	struct level *l = lx->lvl;
	struct cw_buf d = { 0 };
	const char *r = w->raw;
	size_t n = w->rawlen, i;
	bool quoted = false, odd = false;
	int err = 0;

	err = cw_buf_append(&d, "", 0);
	for (i = 0; i < n && !err; i++) {
		char c = r[i];

		if (c == '\\') {
			if (i + 1 < n && r[i + 1] != '\n') {
				quoted = true;
				err = cw_buf_append(&d, &r[i + 1], 1);
			}
			i++;
		} else if (c == '\'') {
			quoted = true;
			for (i++; i < n && r[i] != '\'' && !err; i++)
				err = cw_buf_append(&d, &r[i], 1);
		} else if (c == '"') {
			quoted = true;
			for (i++; i < n && r[i] != '"' && !err; i++) {
				if (r[i] == '\\' && i + 1 < n &&
				    strchr("$`\"\\\n", r[i + 1])) {
					if (r[++i] == '\n')
						continue;
				}
				err = cw_buf_append(&d, &r[i], 1);
			}
		} else {
			if (c == '$' || c == '`')
				odd = true;
			err = cw_buf_append(&d, &c, 1);
		}
	}
	if (!err && l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct hdoc *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			err = -ENOMEM;
		else {
			l->v = v;
			l->cap = cap;
		}
	}
	if (err) {
		lx->err = -ENOMEM;
		cw_buf_free(&d);
		return;
	}
	if (odd)
		opaque(lx, "unusual here-document delimiter");
	l->v[l->n].delim = d.data;
	l->v[l->n].strip = strip;
	l->v[l->n].quoted = quoted;
	l->n++;
}

/*
 * Skips one body from s->pos, past its delimiter line; returns where the
 * body ends. Unquoted bodies join continuation lines before the delimiter
 * is compared, as bash does; <<- strips tabs until the line has text.
 */
static size_t hd_body(struct src *s, const struct hdoc *h)
{
	size_t dl = strlen(h->delim);

	for (;;) {
		size_t line = s->pos, p = s->pos, k = 0;
		bool match = true, strip = h->strip;
		int c;

		if (p >= s->len)
			return s->len;
		while ((c = at(s, p)) >= 0 && c != '\n') {
			if (c == '\\' && !h->quoted) {
				if (at(s, p + 1) == '\n') {
					p += 2;
					continue;
				}
				strip = false;
				match = match && k < dl && h->delim[k] == '\\';
				k++;
				if ((c = at(s, ++p)) < 0)
					break;
			} else if (strip && c == '\t') {
				p++;
				continue;
			}
			strip = false;
			match = match && k < dl && h->delim[k] == (char)c;
			k++;
			p++;
		}
		s->pos = c < 0 ? p : p + 1;
		if (match && k == dl)
			return line;
	}
}

static void read_heredocs(struct lx *lx, struct src *s)
{
	struct level *l = lx->lvl;
	size_t k;

	for (k = 0; k < l->n && !STOP(lx); k++) {
		const struct hdoc *h = &l->v[k];
		size_t start = s->pos, end = hd_body(s, h);

		if (!h->quoted) {
			/* an unquoted body is expanded like "..." */
			struct src b = { .s = s->s, .len = end, .pos = start };
			struct word scratch = { 0 };

			read_dq(lx, &b, &scratch, true);
			cw_buf_free(&scratch.v);
			src_done(&b);
		}
	}
	for (k = 0; k < l->n; k++)
		free(l->v[k].delim);
	l->n = 0;
}

/* ---- words ---- */

/* NAME=( ... ): s->pos at '('. */
static void read_array(struct lx *lx, struct src *s)
{
	struct tok t;

	if (!enter(lx))
		return;
	s->pos++;
	for (;;) {
		next_tok(lx, s, &t, M_ELEM);
		if (t.t == T_RP)
			break;
		if (t.t == T_EOF) {
			opaque(lx, "unterminated array assignment");
			break;
		}
		if (t.t != T_WORD && t.t != T_NL)
			opaque(lx, "syntax error in array assignment");
		tok_free(&t);
	}
	tok_free(&t);
	leave(lx);
}

/* ?( *( +( @( !( pattern: s->pos at '('. */
static void read_extglob(struct lx *lx, struct src *s, struct word *w)
{
	int depth = 0, c;

	w->fl |= W_GLOB;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			opaque(lx, "unterminated extended glob");
			return;
		}
		if (c == '\\' && at(s, s->pos + 1) >= 0) {
			wput(lx, w, &s->s[s->pos], 2);
			s->pos += 2;
		} else if (c == '\'') {
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				wputc(lx, w, (char)c);
			if (c < 0) {
				opaque(lx, "unterminated single quote");
				return;
			}
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			read_dq(lx, s, w, false);
		} else if (c == '$') {
			read_dollar(lx, s, w, false);
		} else if (c == '`') {
			read_bq(lx, s, w, false);
		} else {
			wputc(lx, w, (char)c);
			s->pos++;
			if (c == '(')
				depth++;
			else if (c == ')' && --depth == 0)
				return;
		}
	}
}

static void read_word(struct lx *lx, struct src *s, struct word *w,
		      unsigned mode)
{
	enum { AS_NO, AS_NAME, AS_SUB, AS_PLUS } as;
	size_t start = s->pos, p0;
	bool sq = false, br = false, brsep = false;
	int c, d;

	memset(w, 0, sizeof(*w));
	as = is_name0(at(s, s->pos)) ? AS_NAME : AS_NO;
	if ((mode & M_ELEM) && at(s, s->pos) == '[') {
		read_sub(lx, s, w);
		as = AS_SUB;
	}
	while (!STOP(lx) && (c = at(s, s->pos)) >= 0) {
		if (as != AS_NO) {
			if (as == AS_NAME && is_name(c)) {
				wputc(lx, w, (char)c);
				s->pos++;
				continue;
			}
			if (as == AS_NAME && c == '[' && (mode & M_CMD)) {
				/* bash reads NAME[...] whole, blanks included;
				 * without '=' it is a glob pattern */
				read_sub(lx, s, w);
				w->fl |= W_GLOB;
				as = AS_SUB;
				continue;
			}
			if (c == '+' && as != AS_PLUS &&
			    at(s, s->pos + 1) == '=') {
				wputc(lx, w, '+');
				s->pos++;
				as = AS_PLUS;
				continue;
			}
			if (c == '=') {
				if (as == AS_SUB || as == AS_PLUS)
					w->fl &= ~W_GLOB;
				w->fl |= W_ASSIGN;
				w->eq = w->v.len;
				wputc(lx, w, '=');
				s->pos++;
				as = AS_NO;
				if (at(s, s->pos) == '(') {
					w->fl |= W_ARRAY;
					read_array(lx, s);
				}
				continue;
			}
			as = AS_NO;
		}
		switch (c) {
		case ' ':
		case '\t':
		case '\n':
		case ';':
		case '&':
		case '|':
		case '(':
		case ')':
			goto out;
		case '<':
		case '>':
			if (at(s, s->pos + 1) != '(')
				goto out;
			w->fl |= W_EXPAND;
			s->pos += 2;
			parse_nested(lx, s);
			continue;
		case '\\':
			d = at(s, s->pos + 1);
			if (d == '\n') {
				s->pos += 2;
				continue;
			}
			w->fl |= W_QUOTED;
			if (d < 0) {
				wputc(lx, w, '\\');
				s->pos++;
				continue;
			}
			wputc(lx, w, (char)d);
			s->pos += 2;
			continue;
		case '\'':
			w->fl |= W_QUOTED;
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				wputc(lx, w, (char)c);
			if (c < 0) {
				opaque(lx, "unterminated single quote");
				goto out;
			}
			s->pos++;
			continue;
		case '"':
			s->pos++;
			read_dq(lx, s, w, false);
			continue;
		case '$':
			p0 = s->pos;
			d = at(s, s->pos + 1);
			read_dollar(lx, s, w, false);
			if (s->pos > p0 + 1 && d != '\'' && d != '"')
				w->fl |= W_SPLIT;
			continue;
		case '`':
			read_bq(lx, s, w, false);
			w->fl |= W_SPLIT;
			continue;
		case '*':
		case '?':
		case '+':
		case '@':
		case '!':
			if (at(s, s->pos + 1) == '(') {
				wputc(lx, w, (char)c);
				s->pos++;
				read_extglob(lx, s, w);
				continue;
			}
			if (c == '*' || c == '?')
				w->fl |= W_GLOB;
			break;
		case '[':
			sq = true;
			break;
		case ']':
			if (sq)
				w->fl |= W_GLOB;
			break;
		case '{':
			br = true;
			break;
		case ',':
			brsep |= br;
			break;
		case '.':
			if (br && at(s, s->pos + 1) == '.')
				brsep = true;
			break;
		case '}':
			if (br && brsep)
				w->fl |= W_BRACE;
			break;
		}
		wputc(lx, w, (char)c);
		s->pos++;
	}
out:
	w->raw = s->s + start;
	w->rawlen = s->pos - start;
}

/* ---- tokens ---- */

static void redir_op(struct src *s, struct tok *t)
{
	int c = at(s, s->pos), d = at(s, s->pos + 1), e = at(s, s->pos + 2);

	t->t = T_REDIR;
	t->r = R_OTHER;
	if (c == '&') {
		s->pos += e == '>' ? 3 : 2;
	} else if (c == '<' && d == '<') {
		if (e == '-')
			t->r = R_HEREDOC_STRIP;
		else if (e != '<')
			t->r = R_HEREDOC;
		s->pos += t->r == R_HEREDOC ? 2 : 3;
	} else if ((c == '<' && (d == '&' || d == '>')) ||
		   (c == '>' && (d == '>' || d == '&' || d == '|'))) {
		s->pos += 2;
	} else {
		s->pos++;
	}
}

static bool fd_prefix(const struct word *w)
{
	const char *r = w->raw;
	size_t n = w->rawlen, i;

	if (n > 2 && r[0] == '{' && r[n - 1] == '}' && is_ident(r + 1, n - 2))
		return true;
	for (i = 0; i < n; i++)
		if (!is_digit((unsigned char)r[i]))
			return false;
	return n > 0;
}

static void next_tok(struct lx *lx, struct src *s, struct tok *t,
		     unsigned mode)
{
	size_t p0;
	int c, d;

	if (s->nback) {
		*t = s->back[--s->nback];
		memset(&s->back[s->nback], 0, sizeof(*t));
		return;
	}
	memset(t, 0, sizeof(*t));
	if (STOP(lx)) {
		t->t = T_EOF;
		return;
	}
	for (;;) {
		c = at(s, s->pos);
		if (is_blank(c)) {
			s->pos++;
		} else if (c == '\\' && at(s, s->pos + 1) == '\n') {
			s->pos += 2;
		} else if (c == '#') {
			while ((c = at(s, s->pos)) >= 0 && c != '\n')
				s->pos++;
		} else {
			break;
		}
	}
	p0 = s->pos;
	d = at(s, s->pos + 1);
	switch (c) {
	case -1:
		t->t = T_EOF;
		return;
	case '\n':
		s->pos++;
		t->t = T_NL;
		read_heredocs(lx, s);
		return;
	case ';':
		if (d == ';') {
			t->t = at(s, s->pos + 2) == '&' ? T_DSEMIAMP : T_DSEMI;
			s->pos += t->t == T_DSEMI ? 2 : 3;
		} else if (d == '&') {
			t->t = T_SEMIAMP;
			s->pos += 2;
		} else {
			t->t = T_SEMI;
			s->pos++;
		}
		break;
	case '&':
		if (d == '&') {
			t->t = T_AND;
			s->pos += 2;
		} else if (d == '>' && !(mode & M_COND)) {
			redir_op(s, t);
		} else {
			t->t = T_AMP;
			s->pos++;
		}
		break;
	case '|':
		t->t = d == '|' ? T_OR : d == '&' ? T_PIPEAMP : T_PIPE;
		s->pos += t->t == T_PIPE ? 1 : 2;
		break;
	case '(':
		t->t = T_LP;
		s->pos++;
		break;
	case ')':
		t->t = T_RP;
		s->pos++;
		break;
	case '<':
	case '>':
		if (d == '(')
			goto word;
		if (mode & M_COND) {
			t->t = T_CONDOP;
			s->pos++;
			break;
		}
		redir_op(s, t);
		break;
	default:
		goto word;
	}
	goto check;
word:
	read_word(lx, s, &t->w, mode);
	t->t = T_WORD;
	if (s->pos == p0) {
		/* cannot happen; never loop on it */
		opaque(lx, "syntax error");
		s->pos++;
	}
	c = at(s, s->pos);
	if ((c == '<' || c == '>') && at(s, s->pos + 1) != '(' &&
	    !(mode & M_COND) && fd_prefix(&t->w)) {
		tok_free(t);
		redir_op(s, t);
		goto check;
	}
	return;
check:
	/* `&\<newline>&` is `&&` to bash */
	if (at(s, s->pos) == '\\' && at(s, s->pos + 1) == '\n' &&
	    (c = at(s, s->pos + 2)) >= 0 && strchr(";&|<>()-", c))
		opaque(lx, "line continuation inside an operator");
}

/* ---- grammar ---- */

static bool is_term(const struct tok *t)
{
	static const char *const kw[] = {
		"then", "elif", "else", "fi", "do", "done", "esac", "}",
	};
	size_t i;

	switch (t->t) {
	case T_EOF:
	case T_RP:
	case T_DSEMI:
	case T_SEMIAMP:
	case T_DSEMIAMP:
		return true;
	case T_WORD:
		for (i = 0; i < CW_ARRAY_SIZE(kw); i++)
			if (wis(&t->w, kw[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static bool starts_command(const struct tok *t)
{
	return (t->t == T_WORD || t->t == T_REDIR || t->t == T_LP) &&
	       !is_term(t);
}

static const char *tname(const struct tok *t)
{
	static const char *const names[] = {
		[T_EOF] = "end of input", [T_NL] = "newline", [T_SEMI] = ";",
		[T_AMP] = "&", [T_AND] = "&&", [T_OR] = "||", [T_PIPE] = "|",
		[T_PIPEAMP] = "|&", [T_DSEMI] = ";;", [T_SEMIAMP] = ";&",
		[T_DSEMIAMP] = ";;&", [T_LP] = "(", [T_RP] = ")",
		[T_REDIR] = "redirection", [T_CONDOP] = "operator",
	};

	if (t->t == T_WORD)
		return wstr(&t->w);
	return names[t->t] ? names[t->t] : "token";
}

static void skip_nl(struct lx *lx, struct src *s, struct tok *t,
		    unsigned mode)
{
	for (;;) {
		next_tok(lx, s, t, mode);
		if (t->t != T_NL)
			return;
		tok_free(t);
	}
}

static bool expect_kw(struct lx *lx, struct src *s, const char *kw)
{
	struct tok t;

	next_tok(lx, s, &t, M_CMD);
	if (t.t == T_WORD && wis(&t.w, kw)) {
		tok_free(&t);
		return true;
	}
	opaque(lx, "syntax error: expected %s before %.32s", kw, tname(&t));
	push_back(s, &t);
	return false;
}

static bool expect_rp(struct lx *lx, struct src *s, const char *what)
{
	struct tok t;

	next_tok(lx, s, &t, 0);
	if (t.t == T_RP) {
		tok_free(&t);
		return true;
	}
	opaque(lx, "syntax error: unterminated %s", what);
	push_back(s, &t);
	return false;
}

static void do_redir(struct lx *lx, struct src *s, const struct tok *op)
{
	struct tok t;

	next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		opaque(lx, "syntax error: redirection without a target");
		push_back(s, &t);
		return;
	}
	if (op->r != R_OTHER)
		hd_add(lx, &t.w, op->r == R_HEREDOC_STRIP);
	tok_free(&t);
}

static void redirs_after(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		next_tok(lx, s, &t, 0);
		if (t.t != T_REDIR) {
			push_back(s, &t);
			return;
		}
		do_redir(lx, s, &t);
		tok_free(&t);
	}
}

/* A word naming a variable (read NAME, printf -v NAME, [[ -v NAME ]] ...). */
static void name_arg(struct lx *lx, const struct word *w, bool bind)
{
	const char *p = wstr(w), *e;
	size_t n = strcspn(p, "[");

	if (w->fl & W_DYN) {
		/* bash evaluates a subscript in it: a[$(cmd)] */
		opaque(lx, "variable name from an expansion");
		return;
	}
	if (p[n] == '[') {
		e = strrchr(p + n, ']');
		arith_text(lx, p + n + 1,
			   e ? (size_t)(e - p - n - 1) : strlen(p + n + 1));
	}
	if (bind && n)
		bind_name(lx, p, n, false);
}

/* NAME=VALUE before a command, or alone. */
static void assign_word(struct lx *lx, const struct word *w)
{
	const char *p = wstr(w);
	size_t n = 0;

	while (is_name((unsigned char)p[n]))
		n++;
	bind_name(lx, p, n,
		  !(w->fl & (W_DYN | W_ARRAY)) && p[n] != '[' &&
			  int_text(p + w->eq + 1));
}

static void parse_pipeline(struct lx *lx, struct src *s);
static void parse_simple(struct lx *lx, struct src *s, struct tok *first);

static void parse_top(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		parse_list(lx, s);
		next_tok(lx, s, &t, 0);
		if (t.t == T_EOF)
			break;
		opaque(lx, "syntax error near %.32s", tname(&t));
		tok_free(&t);
	}
	tok_free(&t);
	if (s->lost)
		opaque(lx, "internal error: token lost");
}

/* Commands up to a terminator, which is left unread. */
static void parse_list(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		next_tok(lx, s, &t, M_CMD);
		if (t.t == T_NL) {
			tok_free(&t);
			continue;
		}
		if (is_term(&t)) {
			push_back(s, &t);
			return;
		}
		if (!starts_command(&t)) {
			opaque(lx, "syntax error near %.32s", tname(&t));
			tok_free(&t);
			continue;
		}
		push_back(s, &t);
		parse_pipeline(lx, s);
		next_tok(lx, s, &t, 0);
		switch (t.t) {
		case T_SEMI:
		case T_AMP:
		case T_NL:
			tok_free(&t);
			continue;
		case T_AND:
		case T_OR:
			tok_free(&t);
			skip_nl(lx, s, &t, M_CMD);
			if (!starts_command(&t))
				opaque(lx, "syntax error near %.32s",
				       tname(&t));
			push_back(s, &t);
			continue;
		default:
			if (is_term(&t)) {
				push_back(s, &t);
				return;
			}
			opaque(lx, "syntax error near %.32s", tname(&t));
			tok_free(&t);
			continue;
		}
	}
}

static void parse_pipeline(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		next_tok(lx, s, &t, M_CMD);
		if (t.t == T_WORD && wis(&t.w, "!")) {
			tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "time")) {
			tok_free(&t);
			add_prog(lx, "time", 4);
			next_tok(lx, s, &t, M_CMD);
			if (t.t == T_WORD && wis(&t.w, "-p"))
				tok_free(&t);
			else
				push_back(s, &t);
			continue;
		}
		break;
	}
	for (;;) {
		if (!starts_command(&t)) {
			push_back(s, &t);
			return;
		}
		push_back(s, &t);
		parse_command(lx, s);
		next_tok(lx, s, &t, 0);
		if (t.t != T_PIPE && t.t != T_PIPEAMP) {
			push_back(s, &t);
			return;
		}
		tok_free(&t);
		skip_nl(lx, s, &t, M_CMD);
		if (!starts_command(&t))
			opaque(lx, "syntax error near %.32s", tname(&t));
	}
}

static void parse_if(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		parse_list(lx, s);
		if (!expect_kw(lx, s, "then"))
			return;
		parse_list(lx, s);
		next_tok(lx, s, &t, M_CMD);
		if (t.t == T_WORD && wis(&t.w, "elif")) {
			tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "else")) {
			tok_free(&t);
			parse_list(lx, s);
			expect_kw(lx, s, "fi");
			return;
		}
		if (t.t == T_WORD && wis(&t.w, "fi")) {
			tok_free(&t);
			return;
		}
		opaque(lx, "syntax error: unterminated if");
		push_back(s, &t);
		return;
	}
}

static void parse_loop_body(struct lx *lx, struct src *s)
{
	struct tok t;

	skip_nl(lx, s, &t, M_CMD);
	if (t.t == T_WORD && wis(&t.w, "do")) {
		tok_free(&t);
		parse_list(lx, s);
		expect_kw(lx, s, "done");
	} else if (t.t == T_WORD && wis(&t.w, "{")) {
		tok_free(&t);
		parse_list(lx, s);
		expect_kw(lx, s, "}");
	} else {
		opaque(lx, "syntax error: expected do before %.32s",
		       tname(&t));
		push_back(s, &t);
	}
}

static void parse_for(struct lx *lx, struct src *s, bool sel)
{
	struct tok t, nm;
	bool safe = !sel, in = false;
	size_t c = s->pos;

	while (is_blank(at(s, c)))
		c++;
	if (!sel && at(s, c) == '(' && at(s, c + 1) == '(') {
		s->pos = c + 2;
		scan_arith(lx, s, ')', true);
		close_dparen(lx, s);
		next_tok(lx, s, &t, M_CMD);
		if (t.t == T_SEMI)
			tok_free(&t);
		else
			push_back(s, &t);
		parse_loop_body(lx, s);
		return;
	}
	next_tok(lx, s, &nm, 0);
	if (nm.t != T_WORD || !is_ident(wstr(&nm.w), nm.w.v.len) ||
	    (nm.w.fl & (W_QUOTED | W_DYN))) {
		opaque(lx, "syntax error: bad for/select variable");
		push_back(s, &nm);
		return;
	}
	skip_nl(lx, s, &t, 0);
	if (t.t == T_WORD && wis(&t.w, "in")) {
		tok_free(&t);
		in = true;
		for (;;) {
			next_tok(lx, s, &t, 0);
			if (t.t != T_WORD)
				break;
			if ((t.w.fl & W_DYN) || !int_text(wstr(&t.w)))
				safe = false;
			tok_free(&t);
		}
		if (t.t != T_SEMI && t.t != T_NL) {
			opaque(lx, "syntax error in for/select list");
			push_back(s, &t);
			tok_free(&nm);
			return;
		}
		tok_free(&t);
	} else if (t.t == T_SEMI) {
		tok_free(&t);
	} else {
		push_back(s, &t);
	}
	/* without `in`, the loop runs over "$@" */
	bind_name(lx, wstr(&nm.w), nm.w.v.len, safe && in);
	tok_free(&nm);
	parse_loop_body(lx, s);
}

static void parse_case(struct lx *lx, struct src *s)
{
	struct tok t;

	next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		opaque(lx, "syntax error in case");
		push_back(s, &t);
		return;
	}
	tok_free(&t);
	skip_nl(lx, s, &t, 0);
	if (!(t.t == T_WORD && wis(&t.w, "in"))) {
		opaque(lx, "syntax error: expected in after case");
		push_back(s, &t);
		return;
	}
	tok_free(&t);
	for (;;) {
		skip_nl(lx, s, &t, 0);
		if (t.t == T_WORD && wis(&t.w, "esac")) {
			tok_free(&t);
			return;
		}
		if (t.t == T_LP) {
			tok_free(&t);
			next_tok(lx, s, &t, 0);
		}
		/* patterns are words, not commands */
		for (;;) {
			if (t.t != T_WORD) {
				opaque(lx, "syntax error in case pattern");
				push_back(s, &t);
				return;
			}
			tok_free(&t);
			next_tok(lx, s, &t, 0);
			if (t.t == T_PIPE) {
				tok_free(&t);
				next_tok(lx, s, &t, 0);
				continue;
			}
			if (t.t == T_RP) {
				tok_free(&t);
				break;
			}
			opaque(lx, "syntax error in case pattern");
			push_back(s, &t);
			return;
		}
		parse_list(lx, s);
		next_tok(lx, s, &t, M_CMD);
		if (t.t == T_DSEMI || t.t == T_SEMIAMP || t.t == T_DSEMIAMP) {
			tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "esac")) {
			tok_free(&t);
			return;
		}
		opaque(lx, "syntax error: unterminated case");
		push_back(s, &t);
		return;
	}
}

static bool arith_op(const struct word *w)
{
	static const char *const ops[] = {
		"-eq", "-ne", "-lt", "-le", "-gt", "-ge",
	};
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(ops); i++)
		if (wis(w, ops[i]))
			return true;
	return false;
}

static void parse_cond(struct lx *lx, struct src *s)
{
	const char *prev = NULL;
	bool want_arith = false, want_name = false;
	size_t plen = 0;
	struct tok t;

	add_prog(lx, "[[", 2);
	for (;;) {
		next_tok(lx, s, &t, M_COND);
		if (t.t == T_EOF) {
			opaque(lx, "syntax error: unterminated [[");
			push_back(s, &t);
			return;
		}
		if (t.t != T_WORD) {
			prev = NULL;
			tok_free(&t);
			continue;
		}
		if (wis(&t.w, "]]")) {
			tok_free(&t);
			return;
		}
		/* operands of -eq and friends are arithmetic */
		if (want_arith)
			arith_text(lx, t.w.raw, t.w.rawlen);
		if (want_name)
			name_arg(lx, &t.w, false);
		want_arith = want_name = false;
		if (arith_op(&t.w)) {
			if (prev)
				arith_text(lx, prev, plen);
			want_arith = true;
		} else if (wis(&t.w, "-v")) {
			want_name = true;
		}
		prev = t.w.raw;
		plen = t.w.rawlen;
		tok_free(&t);
	}
}

/* f() body; name was read. */
static void funcdef_body(struct lx *lx, struct src *s)
{
	struct tok t;

	opaque(lx, "function definition");
	if (!enter(lx))
		return;
	skip_nl(lx, s, &t, M_CMD);
	push_back(s, &t);
	parse_command(lx, s);
	leave(lx);
}

static void parse_function(struct lx *lx, struct src *s)
{
	struct tok t;

	next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		opaque(lx, "syntax error in function definition");
		push_back(s, &t);
		return;
	}
	tok_free(&t);
	next_tok(lx, s, &t, 0);
	if (t.t == T_LP) {
		tok_free(&t);
		expect_rp(lx, s, "function definition");
	} else {
		push_back(s, &t);
	}
	funcdef_body(lx, s);
}

static bool compound_start(const struct tok *t)
{
	static const char *const kw[] = {
		"{", "if", "while", "until", "for", "select", "case", "[[",
	};
	size_t i;

	if (t->t == T_LP)
		return true;
	if (t->t != T_WORD)
		return false;
	for (i = 0; i < CW_ARRAY_SIZE(kw); i++)
		if (wis(&t->w, kw[i]))
			return true;
	return false;
}

static void parse_coproc(struct lx *lx, struct src *s)
{
	struct tok t1, t2;

	next_tok(lx, s, &t1, M_CMD);
	if (t1.t != T_WORD || compound_start(&t1)) {
		push_back(s, &t1);
		parse_command(lx, s);
		return;
	}
	next_tok(lx, s, &t2, 0);
	if (compound_start(&t2)) {
		/* coproc NAME compound-command */
		tok_free(&t1);
		push_back(s, &t2);
		parse_command(lx, s);
		return;
	}
	push_back(s, &t2);
	parse_simple(lx, s, &t1);
}

static bool compound_kw(const struct word *w)
{
	static const char *const kw[] = {
		"{", "if", "while", "until", "for", "select", "case", "[[",
		"function", "coproc",
	};
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(kw); i++)
		if (wis(w, kw[i]))
			return true;
	return false;
}

static void parse_command(struct lx *lx, struct src *s)
{
	struct tok t;
	const char *k;

	next_tok(lx, s, &t, M_CMD);
	if (t.t != T_WORD && t.t != T_REDIR && t.t != T_LP) {
		push_back(s, &t);
		return;
	}
	if (t.t == T_REDIR || (t.t == T_WORD && !compound_kw(&t.w))) {
		parse_simple(lx, s, &t);
		return;
	}
	/* simple commands recurse only through substitutions */
	if (!enter(lx)) {
		tok_free(&t);
		return;
	}
	if (t.t == T_LP) {
		tok_free(&t);
		if (at(s, s->pos) == '(' &&
		    arith_end(lx, s, s->pos + 1) != SIZE_MAX) {
			s->pos++;
			scan_arith(lx, s, ')', true);
			close_dparen(lx, s);
		} else {
			parse_list(lx, s);
			expect_rp(lx, s, "(");
		}
		redirs_after(lx, s);
		goto out;
	}
	k = wstr(&t.w);
	if (!strcmp(k, "{")) {
		tok_free(&t);
		parse_list(lx, s);
		expect_kw(lx, s, "}");
	} else if (!strcmp(k, "if")) {
		tok_free(&t);
		parse_if(lx, s);
	} else if (!strcmp(k, "while") || !strcmp(k, "until")) {
		tok_free(&t);
		parse_list(lx, s);
		if (expect_kw(lx, s, "do")) {
			parse_list(lx, s);
			expect_kw(lx, s, "done");
		}
	} else if (!strcmp(k, "for") || !strcmp(k, "select")) {
		bool sel = k[0] == 's';

		tok_free(&t);
		parse_for(lx, s, sel);
	} else if (!strcmp(k, "case")) {
		tok_free(&t);
		parse_case(lx, s);
	} else if (!strcmp(k, "[[")) {
		tok_free(&t);
		parse_cond(lx, s);
	} else if (!strcmp(k, "function")) {
		tok_free(&t);
		parse_function(lx, s);
		goto out;
	} else {
		tok_free(&t);
		parse_coproc(lx, s);
		goto out;
	}
	redirs_after(lx, s);
out:
	leave(lx);
}

struct wvec {
	struct word *v;
	size_t n, cap;
};

/* After the first word at command position: is it `NAME ( )`? */
static bool next_is_lp(struct src *s)
{
	size_t p = s->pos;

	if (s->nback)
		return s->back[s->nback - 1].t == T_LP;
	for (;;) {
		if (is_blank(at(s, p)))
			p++;
		else if (at(s, p) == '\\' && at(s, p + 1) == '\n')
			p += 2;
		else
			return at(s, p) == '(';
	}
}

static void parse_simple(struct lx *lx, struct src *s, struct tok *first)
{
	struct wvec av = { 0 };
	struct tok t = *first;
	size_t i;

	memset(first, 0, sizeof(*first));
	for (;;) {
		if (t.t == T_WORD && !av.n && (t.w.fl & W_ASSIGN)) {
			assign_word(lx, &t.w);
			tok_free(&t);
		} else if (t.t == T_WORD) {
			if (!av.n && next_is_lp(s)) {
				tok_free(&t);
				next_tok(lx, s, &t, 0);
				tok_free(&t);
				expect_rp(lx, s, "function definition");
				funcdef_body(lx, s);
				goto out;
			}
			if (!av.n && !(t.w.fl & W_DYN))
				add_prog(lx, wstr(&t.w), t.w.v.len);
			if (av.n == av.cap) {
				size_t cap = av.cap ? av.cap * 2 : 8;
				struct word *v;

				v = realloc(av.v, cap * sizeof(*v));

				if (!v) {
					lx->err = -ENOMEM;
					tok_free(&t);
					goto out;
				}
				av.v = v;
				av.cap = cap;
			}
			av.v[av.n++] = t.w;
			memset(&t, 0, sizeof(t));
		} else if (t.t == T_REDIR) {
			do_redir(lx, s, &t);
			tok_free(&t);
		} else {
			push_back(s, &t);
			break;
		}
		if (STOP(lx))
			break;
		next_tok(lx, s, &t, av.n ? 0 : M_CMD);
	}
	if (!STOP(lx) && av.n)
		run_argv(lx, av.v, av.n, 0);
out:
	for (i = 0; i < av.n; i++)
		cw_buf_free(&av.v[i].v);
	free(av.v);
}

/* ---- argument vectors: wrappers, interpreters, code-running builtins ---- */

struct lopt {
	const char *name;
	char arg;		/* 0 none, 1 required, 2 only =x, 3 opaque */
	char sh;		/* same as this short option, or 0 */
};

struct ospec {
	const char *arg;	/* short options taking an argument */
	const char *oarg;	/* ... taking the rest of the word, if any */
	const char *flag;	/* short options without one */
	const char *opq;	/* short options that run code we cannot see */
	const char *stop;	/* short options after which nothing runs */
	const struct lopt *lo;
};

struct opts {
	uint64_t seen;
	const char *val[64];
	bool stop;
};

static int oidx(int c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return 62;
}

static bool has(const char *set, int c)
{
	return set && c > 0 && strchr(set, c);
}

static void oset(struct opts *o, const struct ospec *sp, int c,
		 const char *v)
{
	o->seen |= 1ull << oidx(c);
	o->val[oidx(c)] = v;
	if (has(sp->stop, c))
		o->stop = true;
}

static bool oseen(const struct opts *o, int c)
{
	return o->seen & (1ull << oidx(c));
}

/*
 * Could this word be an option? A quoted expansion is one word, so it is
 * an operand when its text starts with something other than '-'.
 */
static bool maybe_option(const struct word *w)
{
	size_t k = 0;

	if (w->fl & W_WILD)
		return true;
	if (!(w->fl & W_DYN))
		return wstr(w)[0] == '-';
	while (k < w->rawlen && (w->raw[k] == '"' || w->raw[k] == '\''))
		k++;
	return k == w->rawlen || strchr("$`-\\", w->raw[k]);
}

/* An option word we cannot read. */
static bool unknown_option(const struct word *w)
{
	return (w->fl & W_WILD) || ((w->fl & W_DYN) && maybe_option(w));
}

static const struct lopt *find_lopt(const struct lopt *lo, const char *p,
				    size_t n)
{
	const struct lopt *hit = NULL;
	int nhit = 0;

	for (; lo && lo->name; lo++) {
		if (strncmp(lo->name, p, n))
			continue;
		if (!lo->name[n])
			return lo;
		/* getopt_long takes unambiguous prefixes */
		hit = lo;
		nhit++;
	}
	return nhit == 1 ? hit : NULL;
}

/*
 * Options of a wrapper from w[i]; returns the index of its first operand,
 * or SIZE_MAX after making the result opaque.
 */
static size_t parse_opts(struct lx *lx, struct word *w, size_t n, size_t i,
			 const struct ospec *sp, const char *prog,
			 struct opts *o)
{
	memset(o, 0, sizeof(*o));
	for (; i < n; i++) {
		const char *a = wstr(&w[i]), *eq;
		const struct lopt *lo;
		size_t j;

		if (unknown_option(&w[i])) {
			opaque(lx, "%s: expansion among its options", prog);
			return SIZE_MAX;
		}
		if (a[0] != '-' || !a[1] || (w[i].fl & W_DYN))
			return i;
		if (!strcmp(a, "--"))
			return i + 1;
		if (a[1] == '-') {
			eq = strchr(a, '=');
			lo = find_lopt(sp->lo, a + 2, eq ? (size_t)(eq - a - 2) :
							   strlen(a + 2));
			if (!lo || lo->arg == 3 || (eq && !lo->arg)) {
				opaque(lx, "%s: option %.40s", prog, a);
				return SIZE_MAX;
			}
			if (lo->arg == 1 && !eq) {
				if (++i >= n)
					return n;
				if (w[i].fl & W_WILD) {
					opaque(lx, "%s: expansion among its "
						   "options", prog);
					return SIZE_MAX;
				}
				eq = wstr(&w[i]) - 1;
			}
			if (lo->sh)
				oset(o, sp, lo->sh, eq ? eq + 1 : NULL);
			continue;
		}
		for (j = 1; a[j]; j++) {
			int c = (unsigned char)a[j];

			if (has(sp->opq, c)) {
				opaque(lx, "%s -%c runs code given as text",
				       prog, c);
				return SIZE_MAX;
			}
			if (has(sp->arg, c)) {
				if (!a[j + 1]) {
					if (++i >= n)
						return n;
					if (w[i].fl & W_WILD) {
						opaque(lx, "%s: expansion "
							   "among its options",
						       prog);
						return SIZE_MAX;
					}
					oset(o, sp, c, wstr(&w[i]));
				} else {
					oset(o, sp, c, a + j + 1);
				}
				break;
			}
			if (has(sp->oarg, c)) {
				oset(o, sp, c, a + j + 1);
				break;
			}
			if (!has(sp->flag, c)) {
				opaque(lx, "%s: unknown option -%c", prog, c);
				return SIZE_MAX;
			}
			oset(o, sp, c, NULL);
		}
	}
	return n;
}

/* Operands before the command must not split into several words. */
static bool plain_operand(struct lx *lx, const struct word *w,
			  const char *prog)
{
	if (w->fl & W_WILD) {
		opaque(lx, "%s: expansion before its command", prog);
		return false;
	}
	return true;
}

/* NAME=VALUE words for env and sudo; returns the first other word. */
static size_t env_assigns(struct lx *lx, struct word *w, size_t n, size_t i,
			  const char *prog)
{
	for (; i < n; i++) {
		const char *a = wstr(&w[i]), *eq = strchr(a, '=');

		if (!eq || eq == a)
			return i;
		if (!plain_operand(lx, &w[i], prog))
			return n;
		if (code_var(a, (size_t)(eq - a)))
			opaque(lx, "%s sets %.*s, which names code to run",
			       prog, (int)(eq - a), a);
	}
	return n;
}

typedef size_t (*handler_fn)(struct lx *lx, struct word *w, size_t n,
			     size_t i, const char *prog, const void *arg);

/* A wrapper: options, npos operands, then the command it runs. */
struct wrap {
	struct ospec o;
	unsigned npos;
	bool shell;		/* without a command it starts a shell */
};

static size_t h_wrap(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	const struct wrap *sp = arg;
	struct opts o;
	size_t j = parse_opts(lx, w, n, i + 1, &sp->o, prog, &o);
	unsigned k;

	if (j == SIZE_MAX || o.stop)
		return n;
	for (k = 0; k < sp->npos; k++, j++) {
		if (j >= n || !plain_operand(lx, &w[j], prog))
			return n;
	}
	if (j >= n && sp->shell)
		opaque(lx, "%s without a command starts a shell", prog);
	return j;
}

static size_t h_opaque(struct lx *lx, struct word *w, size_t n, size_t i,
		       const char *prog, const void *arg)
{
	(void)w;
	(void)i;
	opaque(lx, "%s %s", prog, (const char *)arg);
	return n;
}

static const struct lopt env_lo[] = {
	{ "ignore-environment", 0, 'i' }, { "null", 0, '0' },
	{ "unset", 1, 'u' }, { "chdir", 1, 'C' },
	{ "split-string", 3, 0 }, { "debug", 0, 'v' },
	{ "block-signal", 2, 0 }, { "default-signal", 2, 0 },
	{ "ignore-signal", 2, 0 }, { "list-signal-handling", 0, 0 },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};

static const struct ospec env_o = {
	.arg = "uC", .flag = "i0vhV", .opq = "S", .stop = "hV", .lo = env_lo,
};

static size_t h_env(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	struct opts o;
	size_t j;

	(void)arg;
	/* a lone "-" means -i */
	for (j = i + 1; j < n; j++) {
		if (strcmp(wstr(&w[j]), "-") || (w[j].fl & W_DYN))
			break;
	}
	j = parse_opts(lx, w, n, j, &env_o, prog, &o);
	if (j == SIZE_MAX || o.stop)
		return n;
	return env_assigns(lx, w, n, j, prog);
}

static const struct lopt sudo_lo[] = {
	{ "askpass", 0, 'A' }, { "background", 0, 'b' }, { "bell", 0, 'B' },
	{ "close-from", 1, 'C' }, { "chdir", 1, 'D' },
	{ "preserve-env", 2, 'E' }, { "edit", 0, 'e' }, { "group", 1, 'g' },
	{ "set-home", 0, 'H' }, { "help", 0, 'V' }, { "host", 1, 'h' },
	{ "login", 3, 0 }, { "remove-timestamp", 0, 'K' },
	{ "reset-timestamp", 0, 'k' }, { "list", 0, 'l' },
	{ "non-interactive", 0, 'n' }, { "preserve-groups", 0, 'P' },
	{ "prompt", 1, 'p' }, { "chroot", 1, 'R' }, { "role", 1, 'r' },
	{ "stdin", 0, 'S' }, { "shell", 3, 0 }, { "type", 1, 't' },
	{ "command-timeout", 1, 'T' }, { "other-user", 1, 'U' },
	{ "user", 1, 'u' }, { "version", 0, 'V' }, { "validate", 0, 'v' },
	{ "no-update", 0, 'N' }, { NULL, 0, 0 },
};

static const struct ospec sudo_o = {
	.arg = "CDghpRrTtUuc", .flag = "AbBEHKklnNPSVve", .opq = "si",
	.stop = "eKVv", .lo = sudo_lo,
};

static size_t h_sudo(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sudo_o, prog, &o);
	if (j == SIZE_MAX || o.stop)
		return n;
	return env_assigns(lx, w, n, j, prog);
}

static const struct wrap doas_w = {
	.o = { .arg = "uC", .flag = "nL", .opq = "s", .stop = "C" },
};

static size_t h_nice(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	static const struct lopt lo[] = {
		{ "adjustment", 1, 'n' }, { "help", 0, 'h' },
		{ "version", 0, 'V' }, { NULL, 0, 0 },
	};
	static const struct ospec sp = {
		.arg = "n", .flag = "hV", .stop = "hV", .lo = lo,
	};
	struct opts o;
	size_t j = i + 1;

	(void)arg;
	/* the old form: nice -10 cmd */
	if (j < n && !(w[j].fl & W_DYN) && wstr(&w[j])[0] == '-' &&
	    wstr(&w[j])[1] && strspn(wstr(&w[j]) + 1, "0123456789") ==
				     strlen(wstr(&w[j]) + 1))
		j++;
	j = parse_opts(lx, w, n, j, &sp, prog, &o);
	return j == SIZE_MAX || o.stop ? n : j;
}

static const struct lopt nohup_lo[] = {
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap nohup_w = {
	.o = { .stop = "hV", .lo = nohup_lo },
};

static const struct lopt timeout_lo[] = {
	{ "kill-after", 1, 'k' }, { "signal", 1, 's' },
	{ "foreground", 0, 0 }, { "preserve-status", 0, 0 },
	{ "verbose", 0, 'v' }, { "help", 0, 'h' }, { "version", 0, 'V' },
	{ NULL, 0, 0 },
};
static const struct wrap timeout_w = {
	.o = { .arg = "ks", .flag = "v", .stop = "hV", .lo = timeout_lo },
	.npos = 1,
};

static const struct lopt time_lo[] = {
	{ "format", 1, 'f' }, { "output", 1, 'o' }, { "append", 0, 'a' },
	{ "portability", 0, 'p' }, { "quiet", 0, 'q' },
	{ "verbose", 0, 'v' }, { "help", 0, 'h' }, { "version", 0, 'V' },
	{ NULL, 0, 0 },
};
static const struct wrap time_w = {
	.o = { .arg = "fo", .flag = "apqvV", .stop = "hV", .lo = time_lo },
};

static const struct lopt stdbuf_lo[] = {
	{ "input", 1, 'i' }, { "output", 1, 'o' }, { "error", 1, 'e' },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap stdbuf_w = {
	.o = { .arg = "ioe", .stop = "hV", .lo = stdbuf_lo },
};

static const struct lopt setsid_lo[] = {
	{ "ctty", 0, 'c' }, { "fork", 0, 'f' }, { "wait", 0, 'w' },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap setsid_w = {
	.o = { .flag = "cfwhV", .stop = "hV", .lo = setsid_lo },
};

static size_t h_xargs(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	static const struct lopt lo[] = {
		{ "arg-file", 1, 'a' }, { "delimiter", 1, 'd' },
		{ "eof", 2, 'e' }, { "replace", 2, 'i' },
		{ "max-lines", 2, 'l' }, { "max-args", 1, 'n' },
		{ "max-procs", 1, 'P' }, { "max-chars", 1, 's' },
		{ "process-slot-var", 1, 0 }, { "null", 0, '0' },
		{ "no-run-if-empty", 0, 'r' }, { "verbose", 0, 't' },
		{ "interactive", 0, 'p' }, { "exit", 0, 'x' },
		{ "open-tty", 0, 'o' }, { "show-limits", 0, 0 },
		{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
	};
	static const struct ospec sp = {
		.arg = "aEdILnPs", .oarg = "eil", .flag = "0prtxohV",
		.stop = "hV", .lo = lo,
	};
	const char *rep = NULL;
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || o.stop)
		return n;
	if (j >= n) {
		/* with no command xargs runs echo */
		add_prog(lx, "echo", 4);
		return n;
	}
	if (oseen(&o, 'I'))
		rep = o.val[oidx('I')];
	else if (oseen(&o, 'i'))
		rep = o.val[oidx('i')] && *o.val[oidx('i')] ?
			      o.val[oidx('i')] : "{}";
	if (rep && *rep && strstr(wstr(&w[j]), rep)) {
		opaque(lx, "xargs builds its program name from input");
		return n;
	}
	return j;
}

static const struct wrap exec_w = { .o = { .arg = "a", .flag = "cl" } };

static size_t h_command(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	static const struct ospec sp = { .flag = "pvV" };
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX)
		return n;
	if (oseen(&o, 'v') || oseen(&o, 'V')) {
		/* a lookup, not a run: still listed */
		for (; j < n; j++)
			if (!(w[j].fl & W_DYN))
				add_prog(lx, wstr(&w[j]), w[j].v.len);
		return n;
	}
	return j;
}

static size_t h_builtin(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	(void)lx;
	(void)prog;
	(void)arg;
	if (i + 1 < n && wis(&w[i + 1], "--"))
		i++;
	return i + 1;
}

static const struct lopt chroot_lo[] = {
	{ "userspec", 1, 0 }, { "groups", 1, 0 }, { "skip-chdir", 0, 0 },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap chroot_w = {
	.o = { .stop = "hV", .lo = chroot_lo }, .npos = 1, .shell = true,
};

static const struct lopt ionice_lo[] = {
	{ "class", 1, 'c' }, { "classdata", 1, 'n' }, { "pid", 1, 'p' },
	{ "pgid", 1, 'P' }, { "uid", 1, 'u' }, { "ignore", 0, 't' },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap ionice_w = {
	.o = { .arg = "cnpPu", .flag = "thV", .stop = "pPuhV",
	       .lo = ionice_lo },
};

static size_t h_chrt(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	static const struct lopt lo[] = {
		{ "all-tasks", 0, 'a' }, { "batch", 0, 'b' },
		{ "deadline", 0, 'd' }, { "fifo", 0, 'f' },
		{ "ext", 0, 'e' }, { "idle", 0, 'i' }, { "other", 0, 'o' },
		{ "rr", 0, 'r' }, { "reset-on-fork", 0, 'R' },
		{ "sched-runtime", 1, 'T' }, { "sched-period", 1, 'P' },
		{ "sched-deadline", 1, 'D' }, { "pid", 0, 'p' },
		{ "max", 0, 'm' }, { "verbose", 0, 'v' }, { "help", 0, 'h' },
		{ "version", 0, 'V' }, { NULL, 0, 0 },
	};
	static const struct ospec sp = {
		.arg = "TPD", .flag = "abdefiorRpmvhV", .stop = "pmhV",
		.lo = lo,
	};
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || o.stop || j >= n)
		return n;
	if (!plain_operand(lx, &w[j], prog))
		return n;
	/* the priority may be left out for some policies */
	if (!(w[j].fl & W_DYN) && strspn(wstr(&w[j]), "0123456789") ==
					 w[j].v.len)
		j++;
	return j;
}

static const struct lopt taskset_lo[] = {
	{ "all-tasks", 0, 'a' }, { "cpu-list", 0, 'c' }, { "pid", 0, 'p' },
	{ "help", 0, 'h' }, { "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap taskset_w = {
	.o = { .flag = "acphV", .stop = "phV", .lo = taskset_lo },
	.npos = 1,
};

static const struct lopt nsenter_lo[] = {
	{ "all", 0, 'a' }, { "target", 1, 't' }, { "mount", 2, 'm' },
	{ "uts", 2, 'u' }, { "ipc", 2, 'i' }, { "net", 2, 'n' },
	{ "pid", 2, 'p' }, { "cgroup", 2, 'C' }, { "user", 2, 'U' },
	{ "time", 2, 'T' }, { "user-parent", 0, 0 }, { "setuid", 1, 'S' },
	{ "setgid", 1, 'G' }, { "preserve-credentials", 0, 0 },
	{ "root", 2, 'r' }, { "wd", 2, 'w' }, { "wdns", 1, 'W' },
	{ "env", 0, 'e' }, { "no-fork", 0, 'F' },
	{ "follow-context", 0, 'Z' }, { "join-cgroup", 0, 'c' },
	{ "keep-caps", 0, 0 }, { "net-socket", 1, 'N' }, { "help", 0, 'h' },
	{ "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap nsenter_w = {
	.o = { .arg = "tSGWN", .oarg = "muinpCUTrw", .flag = "aeFZchV",
	       .stop = "hV", .lo = nsenter_lo },
	.shell = true,
};

static const struct lopt unshare_lo[] = {
	{ "mount", 2, 'm' }, { "uts", 2, 'u' }, { "ipc", 2, 'i' },
	{ "net", 2, 'n' }, { "pid", 2, 'p' }, { "user", 2, 'U' },
	{ "cgroup", 2, 'C' }, { "time", 2, 'T' }, { "fork", 0, 'f' },
	{ "kill-child", 2, 0 }, { "mount-proc", 2, 0 },
	{ "map-root-user", 0, 'r' }, { "map-current-user", 0, 'c' },
	{ "map-user", 1, 0 }, { "map-group", 1, 0 }, { "map-users", 1, 0 },
	{ "map-groups", 1, 0 }, { "map-auto", 0, 0 },
	{ "propagation", 1, 0 }, { "setgroups", 1, 0 },
	{ "keep-caps", 0, 0 }, { "setuid", 1, 'S' }, { "setgid", 1, 'G' },
	{ "root", 1, 'R' }, { "wd", 1, 'w' }, { "monotonic", 1, 0 },
	{ "boottime", 1, 0 }, { "load-interp", 1, 'l' }, { "help", 0, 'h' },
	{ "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap unshare_w = {
	.o = { .arg = "RwSGl", .oarg = "muinpUCT", .flag = "frchV",
	       .stop = "hV", .lo = unshare_lo },
	.shell = true,
};

static size_t h_flock(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	static const struct lopt lo[] = {
		{ "shared", 0, 's' }, { "exclusive", 0, 'x' },
		{ "unlock", 0, 'u' }, { "nonblock", 0, 'n' },
		{ "nb", 0, 'n' }, { "close", 0, 'o' }, { "no-fork", 0, 'F' },
		{ "conflict-exit-code", 1, 'E' }, { "timeout", 1, 'w' },
		{ "wait", 1, 'w' }, { "command", 3, 0 },
		{ "verbose", 0, 0 }, { "help", 0, 'h' },
		{ "version", 0, 'V' }, { NULL, 0, 0 },
	};
	static const struct ospec sp = {
		.arg = "wE", .flag = "sexunoFhV", .opq = "c", .stop = "hV",
		.lo = lo,
	};
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || o.stop || j >= n)
		return n;
	if (!plain_operand(lx, &w[j], prog))
		return n;
	j++;
	if (j < n && ((w[j].fl & W_DYN) || wis(&w[j], "-c") ||
		      !strncmp(wstr(&w[j]), "--command", 9) ||
		      !strncmp(wstr(&w[j]), "--c", 3))) {
		opaque(lx, "flock -c runs a command string");
		return n;
	}
	return j;
}

static size_t h_runuser(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	static const struct lopt lo[] = {
		{ "user", 1, 'u' }, { "group", 1, 'g' },
		{ "supp-group", 1, 'G' }, { "login", 0, 'l' },
		{ "preserve-environment", 0, 'm' }, { "shell", 1, 's' },
		{ "command", 3, 0 }, { "session-command", 3, 0 },
		{ "fast", 0, 'f' }, { "whitelist-environment", 1, 'w' },
		{ "pty", 0, 'P' }, { "help", 0, 'h' }, { "version", 0, 'V' },
		{ NULL, 0, 0 },
	};
	static const struct ospec sp = {
		.arg = "ugsGw", .flag = "lmpfPhV", .opq = "c", .stop = "hV",
		.lo = lo,
	};
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || o.stop)
		return n;
	if (!oseen(&o, 'u')) {
		opaque(lx, "runuser without -u starts a shell");
		return n;
	}
	return j;
}

static size_t h_find(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		if (w[j].fl & W_DYN) {
			/* it might be -exec, or split into it */
			opaque(lx, "%s: expansion among its arguments", prog);
			return n;
		}
	}
	for (j = i + 1; j < n && !STOP(lx); j++) {
		if (!wis(&w[j], "-exec") && !wis(&w[j], "-execdir") &&
		    !wis(&w[j], "-ok") && !wis(&w[j], "-okdir"))
			continue;
		for (k = j + 1; k < n; k++) {
			if (wis(&w[k], ";") && !(w[k].fl & W_DYN))
				break;
			if (!strcmp(wstr(&w[k]), ";"))
				break;
			if (!strcmp(wstr(&w[k]), "+") && k > j + 1 &&
			    !strcmp(wstr(&w[k - 1]), "{}"))
				break;
		}
		if (k > j + 1) {
			if (strstr(wstr(&w[j + 1]), "{}")) {
				opaque(lx, "find -exec runs the file it found");
				return n;
			}
			if (!enter(lx))
				return n;
			run_argv(lx, w, k, j + 1);
			leave(lx);
		}
		j = k;
	}
	return n;
}

static size_t h_busybox(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	(void)lx;
	(void)prog;
	(void)arg;
	if (i + 1 >= n || !strncmp(wstr(&w[i + 1]), "--", 2))
		return n;
	return i + 1;
}

static const struct lopt strace_lo[] = {
	{ "trace", 1, 0 }, { "signal", 1, 0 }, { "status", 1, 0 },
	{ "abbrev", 1, 0 }, { "verbose", 1, 0 }, { "raw", 1, 0 },
	{ "read", 1, 0 }, { "write", 1, 0 }, { "fault", 1, 0 },
	{ "inject", 1, 0 }, { "kvm", 1, 0 }, { "output", 1, 'o' },
	{ "attach", 1, 'p' }, { "string-limit", 1, 's' }, { "user", 1, 'u' },
	{ "env", 1, 'E' }, { "columns", 1, 'a' }, { "sort", 1, 'S' },
	{ "trace-path", 1, 'P' }, { "follow-forks", 0, 'f' },
	{ "output-separately", 0, 0 }, { "summary-only", 0, 'c' },
	{ "summary", 0, 'C' }, { "summary-wall-clock", 0, 'w' },
	{ "seccomp-bpf", 0, 0 }, { "instruction-pointer", 0, 'i' },
	{ "stack-trace", 0, 'k' }, { "no-abbrev", 0, 'v' },
	{ "debug", 0, 'd' }, { "decode-fds", 2, 0 },
	{ "absolute-timestamps", 2, 0 }, { "relative-timestamps", 2, 0 },
	{ "syscall-times", 2, 0 }, { "quiet", 2, 0 }, { "help", 0, 'h' },
	{ "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap strace_w = {
	.o = { .arg = "abeEIoOpPsSuUX", .flag = "cCdDfFhiknqrtTvVwxyzZ",
	       .stop = "hV", .lo = strace_lo },
};

static const struct lopt ltrace_lo[] = {
	{ "output", 1, 'o' }, { "library", 1, 'l' }, { "demangle", 0, 'C' },
	{ "indent", 1, 'n' }, { "align", 1, 'a' }, { "help", 0, 'h' },
	{ "version", 0, 'V' }, { NULL, 0, 0 },
};
static const struct wrap ltrace_w = {
	.o = { .arg = "aADeFlnopsuwx", .flag = "bcCfhiLrStTV",
	       .stop = "hV", .lo = ltrace_lo },
};

static const struct lopt pkexec_lo[] = {
	{ "user", 1, 'u' }, { "disable-internal-agent", 0, 0 },
	{ "keep-cwd", 0, 0 }, { "help", 0, 'h' }, { "version", 0, 'V' },
	{ NULL, 0, 0 },
};
static const struct wrap pkexec_w = {
	.o = { .stop = "hV", .lo = pkexec_lo }, .shell = true,
};

static const struct lopt fakeroot_lo[] = {
	{ "lib", 1, 'l' }, { "faked", 1, 0 }, { "unknown-is-real", 0, 'u' },
	{ "help", 0, 'h' }, { "version", 0, 'v' }, { NULL, 0, 0 },
};
static const struct wrap fakeroot_w = {
	.o = { .arg = "lsib", .flag = "uhv", .stop = "hv",
	       .lo = fakeroot_lo },
	.shell = true,
};

static const struct wrap plain_w = { .o = { 0 } };
static const struct wrap unbuffer_w = { .o = { .flag = "p" } };
static const struct wrap proxychains_w = {
	.o = { .arg = "f", .flag = "q" },
};
static const struct wrap torsocks_w = {
	.o = { .arg = "uapP", .flag = "idqh", .stop = "h" },
};

static size_t h_valgrind(struct lx *lx, struct word *w, size_t n, size_t i,
			 const char *prog, const void *arg)
{
	size_t j;

	(void)arg;
	/* valgrind's options never take a separate argument */
	for (j = i + 1; j < n; j++) {
		if (unknown_option(&w[j])) {
			opaque(lx, "%s: expansion among its options", prog);
			return n;
		}
		if ((w[j].fl & W_DYN) || wstr(&w[j])[0] != '-')
			return j;
		if (wis(&w[j], "--"))
			return j + 1;
	}
	return n;
}

static size_t h_ssh(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	static const struct ospec sp = {
		.arg = "BbcDEeFIiJLlmOoPpQRSWw",
		.flag = "46AaCfGgKkMNnqsTtVvXxYy",
	};
	static const char *const bad[] = {
		"proxycommand", "localcommand", "knownhostscommand", "match",
		"permitlocalcommand",
	};
	struct opts o;
	size_t j, k;

	(void)arg;
	/* scan every -o, wherever it is */
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (!strcmp(a, "-o") && j + 1 < n)
			a = wstr(&w[++j]);
		else if (!strncmp(a, "-o", 2))
			a += 2;
		else
			continue;
		for (k = 0; k < CW_ARRAY_SIZE(bad); k++) {
			if (!strncasecmp(a, bad[k], strlen(bad[k]))) {
				opaque(lx, "ssh -o %s runs a local command",
				       bad[k]);
				return n;
			}
		}
	}
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || j >= n)
		return n;
	if (j + 1 < n)
		opaque(lx, "ssh runs a remote command");
	return n;
}

/* ---- shells and interpreters ---- */

static size_t h_shell(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	static const char *const lflag[] = {
		"login", "noprofile", "norc", "posix", "restricted", "verbose",
		"version", "help", "debugger", "dump-po-strings",
		"dump-strings", "noediting", "no-config", "private",
	};
	bool fish = !strcmp(prog, "fish");
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (unknown_option(&w[j])) {
			opaque(lx, "%s: expansion among its options", prog);
			return n;
		}
		if (w[j].fl & W_DYN)
			break;
		if (!strcmp(a, "--") || !strcmp(a, "-")) {
			j++;
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			if (!strcmp(a, "--rcfile") ||
			    !strcmp(a, "--init-file")) {
				j++;
				continue;
			}
			for (k = 0; k < CW_ARRAY_SIZE(lflag); k++)
				if (!strcmp(a + 2, lflag[k]))
					break;
			if (k == CW_ARRAY_SIZE(lflag)) {
				opaque(lx, "%s option %.40s", prog, a);
				return n;
			}
			continue;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		for (k = 1; a[k]; k++) {
			if (a[k] == 'c' || a[k] == 's' || a[k] == 'i' ||
			    a[k] == 't' || (fish && a[k] == 'C')) {
				opaque(lx, "%s -%c runs commands it is given "
					   "as text", prog, a[k]);
				return n;
			}
			if (a[k] == 'o' || a[k] == 'O')
				j++;
		}
	}
	if (j >= n)
		opaque(lx, "%s reads commands from stdin", prog);
	return n;
}

struct interp {
	const char *code;	/* options that take inline code */
	const char *arg;	/* with an argument: rest of word or next */
	const char *oarg;	/* with the rest of the word, if any */
	const char *num;	/* with digits attached (perl -l0 -0777) */
	const char *flag;
	const char *script;	/* the program is this option's file */
	const char *const *lcode;
	const char *const *larg;
	const char *const *lflag;
	bool lassign;		/* --name=value is always fine */
};

static bool in_list(const char *const *l, const char *p, size_t n)
{
	for (; l && *l; l++)
		if (strlen(*l) == n && !strncmp(*l, p, n))
			return true;
	return false;
}

static size_t h_interp(struct lx *lx, struct word *w, size_t n, size_t i,
		       const char *prog, const void *arg)
{
	const struct interp *sp = arg;
	size_t j, k;

	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *eq;
		size_t len;

		if (unknown_option(&w[j])) {
			opaque(lx, "%s: expansion among its options", prog);
			return n;
		}
		if (w[j].fl & W_DYN)
			break;
		if (!strcmp(a, "--")) {
			j++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!a[1]) {
			opaque(lx, "%s reads its program from stdin", prog);
			return n;
		}
		if (a[1] == '-') {
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			if (in_list(sp->lcode, a + 2, len)) {
				opaque(lx, "%s %.40s runs inline code", prog,
				       a);
				return n;
			}
			if (in_list(sp->larg, a + 2, len)) {
				if (!eq)
					j++;
			} else if (!in_list(sp->lflag, a + 2, len) &&
				   !(eq && sp->lassign)) {
				opaque(lx, "%s: option %.40s", prog, a);
				return n;
			}
			continue;
		}
		for (k = 1; a[k]; k++) {
			int c = (unsigned char)a[k];

			if (has(sp->code, c)) {
				opaque(lx, "%s -%c runs inline code", prog, c);
				return n;
			}
			if (has(sp->script, c))
				return n;	/* what follows is the script's */
			if (has(sp->arg, c)) {
				if (!a[k + 1])
					j++;
				break;
			}
			if (has(sp->oarg, c))
				break;
			if (has(sp->num, c)) {
				while (a[k + 1] &&
				       strchr("0123456789abcdefABCDEFx",
					      a[k + 1]))
					k++;
				continue;
			}
			if (!has(sp->flag, c)) {
				opaque(lx, "%s: unknown option -%c", prog, c);
				return n;
			}
		}
	}
	if (j >= n)
		opaque(lx, "%s reads its program from stdin", prog);
	return n;
}

static const char *const py_larg[] = { "check-hash-based-pycs", NULL };
static const char *const help_version[] = { "help", "version", NULL };
static const struct interp python_i = {
	.code = "ci", .arg = "WXm", .flag = "bBdEhIOPqsSuvVx3R?",
	.script = "m", .larg = py_larg, .lflag = help_version,
};
static const struct interp perl_i = {
	.code = "eEMm", .arg = "I", .oarg = "ixCdDVF", .num = "0l",
	.flag = "acfhnpsStTuUvwWXg", .lflag = help_version,
};
static const struct interp ruby_i = {
	.code = "e", .arg = "IrCE", .oarg = "0FKTWxi",
	.flag = "acdhlnpsSvwy", .lflag = help_version, .lassign = true,
};
static const char *const node_lcode[] = {
	"eval", "print", "interactive", NULL,
};
static const char *const node_larg[] = {
	"require", "import", "loader", "experimental-loader", "input-type",
	"conditions", "title", "env-file", NULL,
};
static const char *const node_lflag[] = {
	"check", "version", "help", "no-warnings", "trace-warnings",
	"enable-source-maps", "expose-gc", "inspect", "inspect-brk", "watch",
	"test", "preserve-symlinks", "abort-on-uncaught-exception",
	"throw-deprecation", "no-deprecation", "trace-deprecation",
	"pending-deprecation", "experimental-vm-modules", "frozen-intrinsics",
	"trace-uncaught", "use-strict", "no-experimental-fetch", NULL,
};
static const struct interp node_i = {
	.code = "epi", .arg = "rC", .flag = "cvh", .lcode = node_lcode,
	.larg = node_larg, .lflag = node_lflag, .lassign = true,
};
static const struct interp php_i = {
	.code = "rRBEa", .arg = "cdfFzSt", .flag = "nqHsilmhvwe",
	.script = "fF", .lflag = help_version,
};
static const struct interp lua_i = {
	.code = "ei", .arg = "ljO", .flag = "vEWb",
};
static const char *const r_lflag[] = {
	"vanilla", "verbose", "version", "help", "no-environ",
	"no-site-file", "no-init-file", "restore", "no-restore", "save",
	"no-save", "slave", "quiet", "silent", "no-echo", "no-restore-data",
	NULL,
};
static const struct interp rscript_i = {
	.code = "e", .arg = "f", .script = "f", .lflag = r_lflag,
	.lassign = true,
};
static const struct interp expect_i = {
	.code = "ci", .arg = "fD", .flag = "bdnNv", .script = "f",
	.lflag = help_version,
};
static const struct interp tcl_i = { .arg = "" };

static bool awk_runs(const char *text)
{
	return strstr(text, "system") || strchr(text, '|') ||
	       strstr(text, "@load");
}

/* awk: the program text itself can run commands. */
static size_t h_awk(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	static const char *const larg[] = {
		"field-separator", "assign", "include", "dump-variables",
		NULL,
	};
	static const char *const lflag[] = {
		"posix", "traditional", "lint", "sandbox",
		"characters-as-bytes", "re-interval", "optimize",
		"no-optimize", "bignum", "use-lc-numeric", "gen-pot",
		"non-decimal-data", "copyright", "version", "help", "debug",
		"profile", "pretty-print", "csv", NULL,
	};
	const char *text = NULL;
	bool file = false;
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *eq;
		size_t len;

		if (unknown_option(&w[j])) {
			opaque(lx, "%s: expansion among its options", prog);
			return n;
		}
		if (w[j].fl & W_DYN)
			break;
		if (!strcmp(a, "--")) {
			j++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (a[1] == '-') {
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			if ((len == 4 && !strncmp(a + 2, "file", 4)) ||
			    (len == 4 && !strncmp(a + 2, "exec", 4))) {
				file = true;
				j += !eq;
			} else if (len == 6 && !strncmp(a + 2, "source", 6)) {
				if (!eq)
					j++;
				text = eq ? eq + 1 : j < n ? wstr(&w[j]) : "";
				if (j < n && (w[j].fl & W_DYN))
					text = "system";
			} else if (in_list(larg, a + 2, len)) {
				j += !eq;
			} else if (!in_list(lflag, a + 2, len)) {
				opaque(lx, "%s option %.40s", prog, a);
				return n;
			}
			if (text && awk_runs(text))
				goto run;
			text = NULL;
			continue;
		}
		for (k = 1; a[k]; k++) {
			int c = (unsigned char)a[k];

			if (c == 'l') {
				opaque(lx, "%s -l loads an extension", prog);
				return n;
			}
			if (strchr("FvfEei", c)) {
				const char *v = a[k + 1] ? a + k + 1 :
					++j < n ? wstr(&w[j]) : "";

				if (c == 'f' || c == 'E')
					file = true;
				if (c == 'e' && (awk_runs(v) ||
						 (j < n && !a[k + 1] &&
						  (w[j].fl & W_DYN))))
					goto run;
				break;
			}
			if (strchr("dDLopbcCgMnNOPrsStVYhW", c)) {
				if (strchr("dDLop", c))
					break;
				continue;
			}
			opaque(lx, "%s: unknown option -%c", prog, c);
			return n;
		}
	}
	if (file || j >= n)
		return n;
	if (w[j].fl & W_DYN) {
		opaque(lx, "%s program from an expansion", prog);
		return n;
	}
	if (awk_runs(wstr(&w[j])))
		goto run;
	return n;
run:
	opaque(lx, "%s program may run commands (system, |, @load)", prog);
	return n;
}

/* A GNU sed script runs commands through `e` and s///e. */
static bool sed_exec(const char *p)
{
	size_t n = strlen(p), i = 0, k;
	char d;
	int part;

#define SKIP(set) while (i < n && strchr(set, p[i])) i++
#define TO_EOL() while (i < n && p[i] != '\n') i++
	while (i < n) {
		SKIP(" \t\n;");
		if (i >= n)
			break;
		for (k = 0; k < 2; k++) {
			if (is_digit((unsigned char)p[i])) {
				SKIP("0123456789");
				if (p[i] == '~') {
					i++;
					SKIP("0123456789");
				}
			} else if (p[i] == '$') {
				i++;
			} else if (p[i] == '/' || p[i] == '\\') {
				if (p[i] == '\\')
					i++;
				if (i >= n)
					return true;
				d = p[i++];
				while (i < n && p[i] != d) {
					if (p[i] == '\\')
						i++;
					i++;
				}
				if (i >= n)
					return true;
				i++;
				SKIP("IM");
			} else {
				break;
			}
			SKIP(" \t");
			if (k || p[i] != ',')
				break;
			i++;
			SKIP(" \t");
			if (p[i] == '+' || p[i] == '~') {
				i++;
				SKIP("0123456789");
				break;
			}
		}
		SKIP(" \t!");
		if (i >= n)
			break;
		switch (p[i++]) {
		case '{':
		case '}':
		case '=':
		case 'd':
		case 'D':
		case 'g':
		case 'G':
		case 'h':
		case 'H':
		case 'n':
		case 'N':
		case 'p':
		case 'P':
		case 'x':
		case 'z':
		case 'F':
			break;
		case '#':
		case 'a':
		case 'i':
		case 'c':
		case 'r':
		case 'R':
		case 'w':
		case 'W':
			/* text or file name up to the end of the line */
			while (i < n && p[i] != '\n') {
				if (p[i] == '\\')
					i++;
				i++;
			}
			break;
		case ':':
		case 'b':
		case 't':
		case 'T':
		case 'v':
			while (i < n && p[i] != '\n' && p[i] != ';')
				i++;
			break;
		case 'q':
		case 'Q':
		case 'l':
		case 'L':
			SKIP(" \t0123456789");
			break;
		case 's':
		case 'y':
			if (i >= n || p[i] == '\n' || p[i] == '\\')
				return true;
			d = p[i++];
			for (part = 0; part < 2; part++) {
				while (i < n && p[i] != d) {
					if (p[i] == '\\')
						i++;
					i++;
				}
				if (i >= n)
					return true;
				i++;
			}
			/* flags */
			while (i < n && !strchr(";\n}", p[i])) {
				if (p[i] == 'e')
					return true;
				if (p[i] == 'w') {
					TO_EOL();
					break;
				}
				if (!strchr("gpiImM0123456789 \t", p[i]))
					return true;
				i++;
			}
			break;
		default:
			return true;
		}
	}
#undef SKIP
#undef TO_EOL
	return false;
}

static size_t h_sed(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	static const char *const lflag[] = {
		"quiet", "silent", "debug", "posix", "follow-symlinks",
		"null-data", "zero-terminated", "separate", "unbuffered",
		"regexp-extended", "binary", "help", "version", "sandbox",
		"in-place", "line-length", NULL,
	};
	bool script = false, sandbox = false, bad = false;
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *eq;
		size_t len;

		if (unknown_option(&w[j])) {
			opaque(lx, "%s: expansion among its options", prog);
			return n;
		}
		if (w[j].fl & W_DYN)
			break;
		if (!strcmp(a, "--")) {
			j++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (a[1] == '-') {
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			if (len == 10 && !strncmp(a + 2, "expression", 10)) {
				if (!eq && ++j < n && (w[j].fl & W_DYN))
					bad = true;
				bad |= sed_exec(eq ? eq + 1 :
						j < n ? wstr(&w[j]) : "");
				script = true;
			} else if (len == 4 && !strncmp(a + 2, "file", 4)) {
				j += !eq;
				script = true;
			} else if (len == 11 &&
				   !strncmp(a + 2, "line-length", 11)) {
				j += !eq;
			} else if (in_list(lflag, a + 2, len)) {
				sandbox |= len == 7 &&
					   !strncmp(a + 2, "sandbox", 7);
			} else {
				opaque(lx, "%s option %.40s", prog, a);
				return n;
			}
			continue;
		}
		for (k = 1; a[k]; k++) {
			int c = (unsigned char)a[k];

			if (c == 'e' || c == 'f' || c == 'l') {
				const char *v = a[k + 1] ? a + k + 1 : NULL;

				if (!v && ++j < n) {
					v = wstr(&w[j]);
					if (c == 'e' && (w[j].fl & W_DYN))
						bad = true;
				}
				if (c == 'e')
					bad |= sed_exec(v ? v : "");
				if (c != 'l')
					script = true;
				break;
			}
			if (c == 'i')
				break;
			if (!strchr("nErsuzhV", c)) {
				opaque(lx, "%s: unknown option -%c", prog, c);
				return n;
			}
		}
	}
	if (!script && j < n) {
		if (w[j].fl & W_DYN)
			bad = true;
		else
			bad |= sed_exec(wstr(&w[j]));
	}
	if (bad && !sandbox)
		opaque(lx, "%s script may run commands (e)", prog);
	return n;
}

/* vi and friends run ex commands (and so shell commands) from arguments. */
static size_t h_vi(struct lx *lx, struct word *w, size_t n, size_t i,
		   const char *prog, const void *arg)
{
	size_t j;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (wis(&w[j], "--"))
			break;
		if ((w[j].fl & W_DYN) || a[0] == '+' || !strcmp(a, "-c") ||
		    !strcmp(a, "--cmd") || !strcmp(a, "-S") ||
		    !strcmp(a, "-s") || !strcmp(a, "-e") ||
		    !strcmp(a, "-E") || !strcmp(a, "-es") ||
		    !strcmp(a, "-Es")) {
			opaque(lx, "%s runs editor commands from its "
				   "arguments", prog);
			return n;
		}
	}
	if (!strcmp(prog, "ex"))
		opaque(lx, "ex reads editor commands from stdin");
	return n;
}

static size_t h_tar(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	static const char *const bad[] = {
		"--to-command", "--checkpoint-action", "--use-compress-program",
		"--rsh-command", "--info-script", "--new-volume-script",
		"--rmt-command",
	};
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (unknown_option(&w[j]) ||
		    (j == i + 1 && (w[j].fl & W_DYN))) {
			opaque(lx, "%s: expansion among its arguments", prog);
			return n;
		}
		if (a[0] == '-' && a[1] == '-') {
			/* long options may be abbreviated */
			size_t l = strcspn(a, "=");

			for (k = 0; k < CW_ARRAY_SIZE(bad); k++)
				if (l > 3 && !strncmp(bad[k], a, l))
					goto bad;
			continue;
		}
		/* -I PROG, -F SCRIPT, also bundled: tar cIf prog ... */
		if (((a[0] == '-' && a[1] != '-') || j == i + 1) &&
		    (strchr(a, 'I') || strchr(a, 'F')))
			goto bad;
	}
	return n;
bad:
	opaque(lx, "%s runs a program given as an argument", prog);
	return n;
}

/* rsync -e COMMAND: split on blanks, no shell; plain words are followed. */
static size_t h_rsync(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	const char *v;
	size_t j;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *e;

		if (!strcmp(a, "--"))
			break;
		if (!strncmp(a, "--rsync-path", 12)) {
			opaque(lx, "%s --rsync-path runs a remote command",
			       prog);
			return n;
		}
		e = a[0] == '-' && a[1] != '-' ? strchr(a, 'e') : NULL;
		if (!e && strncmp(a, "--rsh", 5))
			continue;
		if (e && e[1])
			v = e + 1;
		else if (!e && a[5] == '=')
			v = a + 6;
		else
			v = j + 1 < n ? wstr(&w[++j]) : "";
		if ((w[j].fl & W_DYN) ||
		    strpbrk(v, ";&|<>()$`\\\"'*?[{~#\n")) {
			opaque(lx, "%s -e runs a command we cannot follow",
			       prog);
			return n;
		}
		if (!enter(lx))
			return n;
		parse_text(lx, v, strlen(v));
		leave(lx);
	}
	return n;
}

static size_t h_git(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	static const char *const okkeys[] = {
		"user.name", "user.email", "color.", "init.defaultbranch",
		"advice.", "core.quotepath", "safe.directory",
		"commit.gpgsign", "pull.rebase", "push.default",
		"http.sslverify", "core.autocrlf", "column.ui",
	};
	size_t j, k;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (w[j].fl & W_DYN) {
			if (j > i + 1 && wis(&w[j - 1], "-c"))
				goto bad;
			continue;
		}
		if (!strcmp(a, "-c") && j + 1 < n) {
			a = wstr(&w[++j]);
			if (w[j].fl & W_DYN)
				goto bad;
			for (k = 0; k < CW_ARRAY_SIZE(okkeys); k++)
				if (!strncasecmp(a, okkeys[k],
						 strlen(okkeys[k])))
					break;
			if (k == CW_ARRAY_SIZE(okkeys))
				goto bad;
			continue;
		}
		if (!strncmp(a, "--exec-path=", 12) ||
		    !strncmp(a, "--config-env", 12))
			goto bad;
		if (a[0] != '-')
			break;
	}
	return n;
bad:
	opaque(lx, "%s -c or --exec-path can name programs to run", prog);
	return n;
}

/* ---- builtins that run or bind code ---- */

static size_t h_trap(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	size_t j = i + 1;

	(void)arg;
	if (j < n && wis(&w[j], "--"))
		j++;
	if (j >= n || wis(&w[j], "-l") || wis(&w[j], "-p") ||
	    wis(&w[j], "-P") || (!(w[j].fl & W_DYN) &&
				 (!w[j].v.len || !strcmp(wstr(&w[j]), "-"))))
		return n;
	opaque(lx, "%s runs its argument as code", prog);
	return n;
}

/* Does any option word before the operands hold one of these letters? */
static bool opt_letter(struct word *w, size_t n, size_t i, const char *set)
{
	size_t j;

	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]);

		if (w[j].fl & W_DYN)
			return true;
		if ((a[0] != '-' && a[0] != '+') || !strcmp(a, "--"))
			break;
		if (strpbrk(a + 1, set))
			return true;
	}
	return false;
}

static size_t h_optcode(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	const char *set = arg;

	if (opt_letter(w, n, i, set))
		opaque(lx, "%s -%c%s runs or loads code", prog, set[0],
		       set[1] ? " or similar" : "");
	return n;
}

static size_t h_alias(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	size_t j;

	(void)arg;
	for (j = i + 1; j < n; j++) {
		if ((w[j].fl & W_DYN) || strchr(wstr(&w[j]), '=')) {
			opaque(lx, "%s definition", prog);
			break;
		}
	}
	return n;
}

static size_t h_mapfile(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	static const struct ospec sp = {
		.arg = "dnOsuc", .flag = "t", .opq = "C",
	};
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX)
		return n;
	for (; j < n; j++)
		name_arg(lx, &w[j], true);
	return n;
}

static size_t h_read(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	static const struct ospec sp = {
		.arg = "adinNptu", .flag = "ers",
	};
	struct opts o;
	size_t j;

	(void)arg;
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX)
		return n;
	if (oseen(&o, 'a')) {
		struct word aw = { .v = { .data = (char *)o.val[oidx('a')],
					  .len = strlen(o.val[oidx('a')]) } };

		name_arg(lx, &aw, true);
	}
	for (; j < n; j++)
		name_arg(lx, &w[j], true);
	return n;
}

static size_t h_printf(struct lx *lx, struct word *w, size_t n, size_t i,
		       const char *prog, const void *arg)
{
	size_t j = i + 1;

	(void)prog;
	(void)arg;
	if (j < n && !strncmp(wstr(&w[j]), "-v", 2) && !(w[j].fl & W_DYN)) {
		if (w[j].v.len > 2) {
			struct word aw = {
				.v = { .data = w[j].v.data + 2,
				       .len = w[j].v.len - 2 },
			};

			name_arg(lx, &aw, true);
		} else if (j + 1 < n) {
			name_arg(lx, &w[j + 1], true);
		}
	} else if (j < n && (w[j].fl & W_DYN)) {
		const char *r = w[j].raw;
		size_t k = 0;

		/* only a word that may begin with '-' can be -v */
		while (k < w[j].rawlen && (r[k] == '"' || r[k] == '\''))
			k++;
		if ((w[j].fl & W_WILD) || k == w[j].rawlen ||
		    strchr("$`-\\", r[k]))
			opaque(lx, "printf: expansion where -v may be");
	}
	return n;
}

static size_t h_getopts(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	(void)prog;
	(void)arg;
	if (i + 2 < n)
		name_arg(lx, &w[i + 2], true);
	return n;
}

static size_t h_wait(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	size_t j;

	(void)prog;
	(void)arg;
	for (j = i + 1; j + 1 < n; j++)
		if (wis(&w[j], "-p"))
			name_arg(lx, &w[j + 1], true);
	return n;
}

static size_t h_unset(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	size_t j;

	(void)prog;
	(void)arg;
	for (j = i + 1; j < n; j++)
		if (wstr(&w[j])[0] != '-')
			name_arg(lx, &w[j], true);
	return n;
}

static size_t h_let(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	size_t j;

	(void)prog;
	(void)arg;
	for (j = i + 1; j < n; j++)
		arith_text(lx, w[j].raw, w[j].rawlen);
	return n;
}

/* declare, typeset, local, export, readonly */
static size_t h_declare(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	bool attrs = arg != NULL;
	size_t j;

	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *eq;

		if (w[j].fl & W_ASSIGN) {
			assign_word(lx, &w[j]);
			continue;
		}
		eq = memchr(w[j].raw, '=', w[j].rawlen);
		if (eq && strchr(a, '=') && !(w[j].fl & (W_GLOB | W_BRACE)) &&
		    !memchr(w[j].raw, '$', (size_t)(eq - w[j].raw)) &&
		    !memchr(w[j].raw, '`', (size_t)(eq - w[j].raw))) {
			/* "x=v": the builtin splits it again; only the
			 * name matters, and a[...] or x=(...) is parsed */
			if (strchr(a, '=')[1] == '(') {
				opaque(lx, "%s: quoted array assignment", prog);
				return n;
			}
			if (strcspn(a, "[") < strcspn(a, "=")) {
				opaque(lx, "%s: quoted subscript", prog);
				return n;
			}
			bind_name(lx, a, strcspn(a, "="), false);
			continue;
		}
		if (w[j].fl & W_DYN) {
			opaque(lx, "%s: variable name from an expansion", prog);
			return n;
		}
		if ((a[0] == '-' || a[0] == '+') && a[1]) {
			if (attrs && strpbrk(a + 1, "in")) {
				/* -i evaluates values, -n aliases names */
				opaque(lx, "%s %.8s", prog, a);
				return n;
			}
			continue;
		}
		name_arg(lx, &w[j], false);
	}
	return n;
}

static size_t h_test(struct lx *lx, struct word *w, size_t n, size_t i,
		     const char *prog, const void *arg)
{
	size_t j;

	(void)prog;
	(void)arg;
	for (j = i + 1; j + 1 < n; j++)
		if (wis(&w[j], "-v"))
			name_arg(lx, &w[j + 1], false);
	return n;
}

struct handler {
	const char *name;
	handler_fn fn;
	const void *arg;
};

static const struct handler handlers[] = {
	{ ".", h_opaque, "runs a file in this shell" },
	{ "[", h_test, NULL },
	{ "alias", h_alias, NULL },
	{ "at", h_opaque, "runs commands read from stdin" },
	{ "awk", h_awk, NULL },
	{ "bash", h_shell, NULL },
	{ "batch", h_opaque, "runs commands read from stdin" },
	{ "builtin", h_builtin, NULL },
	{ "busybox", h_busybox, NULL },
	{ "catchsegv", h_wrap, &plain_w },
	{ "chroot", h_wrap, &chroot_w },
	{ "chrt", h_chrt, NULL },
	{ "command", h_command, NULL },
	{ "compgen", h_optcode, "CF" },
	{ "complete", h_optcode, "CF" },
	{ "csh", h_shell, NULL },
	{ "dash", h_shell, NULL },
	{ "declare", h_declare, "attrs" },
	{ "doas", h_wrap, &doas_w },
	{ "eatmydata", h_wrap, &plain_w },
	{ "enable", h_optcode, "f" },
	{ "env", h_env, NULL },
	{ "eval", h_opaque, "runs its arguments as code" },
	{ "ex", h_vi, NULL },
	{ "exec", h_wrap, &exec_w },
	{ "expect", h_interp, &expect_i },
	{ "export", h_declare, NULL },
	{ "fakeroot", h_wrap, &fakeroot_w },
	{ "fc", h_opaque, "runs commands from the history" },
	{ "find", h_find, NULL },
	{ "fish", h_shell, NULL },
	{ "flock", h_flock, NULL },
	{ "gawk", h_awk, NULL },
	{ "getopts", h_getopts, NULL },
	{ "git", h_git, NULL },
	{ "gsed", h_sed, NULL },
	{ "hash", h_optcode, "p" },
	{ "hush", h_shell, NULL },
	{ "ionice", h_wrap, &ionice_w },
	{ "ksh", h_shell, NULL },
	{ "ksh93", h_shell, NULL },
	{ "let", h_let, NULL },
	{ "lksh", h_shell, NULL },
	{ "local", h_declare, "attrs" },
	{ "ltrace", h_wrap, &ltrace_w },
	{ "luajit", h_interp, &lua_i },
	{ "mapfile", h_mapfile, NULL },
	{ "mawk", h_awk, NULL },
	{ "mksh", h_shell, NULL },
	{ "nawk", h_awk, NULL },
	{ "newgrp", h_opaque, "starts a shell" },
	{ "nice", h_nice, NULL },
	{ "node", h_interp, &node_i },
	{ "nodejs", h_interp, &node_i },
	{ "nohup", h_wrap, &nohup_w },
	{ "nsenter", h_wrap, &nsenter_w },
	{ "nvim", h_vi, NULL },
	{ "oksh", h_shell, NULL },
	{ "parallel", h_opaque, "runs commands built from its input" },
	{ "pdksh", h_shell, NULL },
	{ "pkexec", h_wrap, &pkexec_w },
	{ "posh", h_shell, NULL },
	{ "printf", h_printf, NULL },
	{ "proxychains", h_wrap, &proxychains_w },
	{ "proxychains4", h_wrap, &proxychains_w },
	{ "pwsh", h_opaque, "runs PowerShell code" },
	{ "R", h_interp, &rscript_i },
	{ "rbash", h_shell, NULL },
	{ "read", h_read, NULL },
	{ "readarray", h_mapfile, NULL },
	{ "readonly", h_declare, NULL },
	{ "Rscript", h_interp, &rscript_i },
	{ "rsync", h_rsync, NULL },
	{ "runuser", h_runuser, NULL },
	{ "script", h_opaque, "runs a shell" },
	{ "sed", h_sed, NULL },
	{ "setsid", h_wrap, &setsid_w },
	{ "sg", h_opaque, "runs its argument through a shell" },
	{ "sh", h_shell, NULL },
	{ "source", h_opaque, "runs a file in this shell" },
	{ "ssh", h_ssh, NULL },
	{ "stdbuf", h_wrap, &stdbuf_w },
	{ "strace", h_wrap, &strace_w },
	{ "su", h_opaque, "runs a shell" },
	{ "sudo", h_sudo, NULL },
	{ "systemd-run", h_opaque, "runs commands we do not follow" },
	{ "tar", h_tar, NULL },
	{ "taskset", h_wrap, &taskset_w },
	{ "tclsh", h_interp, &tcl_i },
	{ "tcsh", h_shell, NULL },
	{ "test", h_test, NULL },
	{ "time", h_wrap, &time_w },
	{ "timeout", h_wrap, &timeout_w },
	{ "torsocks", h_wrap, &torsocks_w },
	{ "trap", h_trap, NULL },
	{ "typeset", h_declare, "attrs" },
	{ "unbuffer", h_wrap, &unbuffer_w },
	{ "unset", h_unset, NULL },
	{ "unshare", h_wrap, &unshare_w },
	{ "valgrind", h_valgrind, NULL },
	{ "vi", h_vi, NULL },
	{ "view", h_vi, NULL },
	{ "vim", h_vi, NULL },
	{ "wait", h_wait, NULL },
	{ "watch", h_opaque, "runs its arguments through sh -c" },
	{ "wish", h_interp, &tcl_i },
	{ "xargs", h_xargs, NULL },
	{ "yash", h_shell, NULL },
	{ "zsh", h_shell, NULL },
};

/* name followed by nothing, or by digits, dots and dashes (python3.11) */
static bool versioned(const char *p, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(p, base, n) &&
	       strspn(p + n, "0123456789.-") == strlen(p + n);
}

static const struct handler *find_handler(const char *p)
{
	static const struct handler py = { "python", h_interp, &python_i },
				    pl = { "perl", h_interp, &perl_i },
				    rb = { "ruby", h_interp, &ruby_i },
				    php = { "php", h_interp, &php_i },
				    lua = { "lua", h_interp, &lua_i },
				    tcl = { "tclsh", h_interp, &tcl_i };
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(handlers); i++)
		if (!strcmp(handlers[i].name, p))
			return &handlers[i];
	if (versioned(p, "python") || versioned(p, "pypy"))
		return &py;
	if (versioned(p, "perl"))
		return &pl;
	if (versioned(p, "ruby"))
		return &rb;
	if (versioned(p, "php"))
		return &php;
	if (versioned(p, "lua"))
		return &lua;
	if (versioned(p, "tclsh") || versioned(p, "wish"))
		return &tcl;
	return NULL;
}

static void run_argv(struct lx *lx, struct word *w, size_t n, size_t i)
{
	while (i < n && !STOP(lx)) {
		const struct handler *h;
		const char *p = wstr(&w[i]), *b;
		unsigned fl = w[i].fl;

		if (fl & W_DYN) {
			opaque(lx, "program name %s",
			       fl & W_GLOB ? "is a glob pattern" :
			       fl & W_BRACE ? "uses brace expansion" :
			       fl & W_LOCALE ? "is a $\"...\" string" :
			       fl & W_UNDEC ? "uses an inexact $'...' escape" :
					      "is an expansion");
			return;
		}
		add_prog(lx, p, w[i].v.len);
		b = strrchr(p, '/');
		b = b && b[1] ? b + 1 : p;
		h = find_handler(b);
		if (!h)
			return;
		i = h->fn(lx, w, n, i, b, h->arg);
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
		opaque(&lx, "input too long");
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
		opaque(&lx, "NUL byte in command");
		len = (size_t)(nul - cmd);
	}
	s.s = cmd ? cmd : "";
	s.len = len;
	parse_top(&lx, &s);
	src_done(&s);
	if (!lx.err && !lx.abort)
		arith_final(&lx);
	err = lx.err;
	level_free(&top);
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
