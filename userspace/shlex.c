// SPDX-License-Identifier: Apache-2.0
/*
 * Static shell lexer: the programs a bash command line would run.
 *
 * cw_shlex_analyze() reads a command line the way bash 5.x parses one and
 * reports the program name (the basename: /bin/rm -> rm) of every simple
 * command in it, without executing or expanding anything. Policies use the
 * result as command.programs and command.opaque (design.md §6). This is a
 * first, cheap layer; the kernel layers are the boundary. When the lexer
 * cannot know what would run it says so: opaque is set and why holds the
 * first reason. Programs found so far are listed even then.
 *
 * What it understands
 *   Quoting: '...', "..." (\" \\ \$ \` and \newline), backslash escapes,
 *   backslash-newline continuations (bash drops them almost everywhere,
 *   also inside operators and reserved words), $'...' (\a \b \e \E \f \n \r
 *   \t \v \\ \' \" \? \NNN \xHH, and \u \U below 0x80), $"...".
 *   Lists and pipelines: ; & && || | |& and newlines; comments (# at the
 *   start of a word, to the end of the line).
 *   Grouping and substitution: ( ) subshells, { ...; } groups, $( ) and
 *   `...` at any depth, <( ) and >( ), $(( )), $[ ] and (( )) arithmetic
 *   (not commands, but the substitutions inside them count), ${ cmd; } and
 *   ${| cmd; }. Substitutions count wherever they appear: arguments,
 *   redirection targets, assignment values, double quotes, ${...}
 *   operands, array subscripts, case words and patterns, for lists,
 *   arithmetic and unquoted here-document bodies. Extents are found the way
 *   bash finds them (its parse_matched_pair() rules).
 *   Compound commands: if/then/elif/else/fi, while and until ... do ...
 *   done, for NAME [in WORDS]; do ... done (or { ... }), for (( ; ; )),
 *   select, case WORD in [(]PATTERN[|PATTERN]...) ... ;; ;& ;;& esac
 *   (patterns are not commands), [[ ... ]] (its =~ regex read as bash reads
 *   it), NAME () BODY and function NAME [()] BODY, ! and time [-p] [--],
 *   coproc [NAME].
 *   Simple commands: leading NAME=value, NAME+=value, NAME[i]=value and
 *   NAME=(...) assignments are skipped (assignments alone run nothing);
 *   redirections anywhere (N>file, N>&M, {fd}>file, <>, >|, &>, &>>, <<<
 *   here-strings, << and <<- here-documents with quoted or unquoted
 *   delimiters). Here-document bodies are skipped line by line exactly as
 *   bash reads them; an unquoted body is scanned for substitutions.
 *   Extended glob groups ?( ) *( ) +( ) @( ) !( ) are always recognised.
 *
 * Programs
 *   Each command word is listed by its basename. Builtins are listed by
 *   name (cd, echo, [, test, export), and so are the keywords [[ and time.
 *   The list is deduplicated and ordered by first appearance in the input.
 *   An empty command word ("") runs nothing and is not listed.
 *   Wrappers add the program they run, recursively (sudo env X=1 nice -n 5
 *   rm -> sudo, env, nice, rm). Each one's option syntax is followed: env
 *   (NAME=VALUE pairs too), sudo (and its NAME=VALUE pairs), doas, nice
 *   (also -N), nohup, timeout DURATION, time, stdbuf, setsid, xargs (echo
 *   when given no command), exec, command (-v/-V list the name only),
 *   builtin, chroot NEWROOT, ionice, chrt [PRIORITY], taskset MASK,
 *   nsenter, unshare, flock FILE, runuser -u, find -exec/-execdir/-ok/
 *   -okdir up to ; or {} +, busybox and toybox applets, strace, ltrace.
 *   Options with arguments, bundles (-Eu root) and long options (also
 *   abbreviated, --user=x or --user x) are understood. An option the
 *   wrapper does not have, a word that is not literal where an option may
 *   be, or one that may expand to several words before the wrapped program
 *   makes the result opaque rather than a guess.
 *
 * Opaque
 *   - A command word with an expansion ($X, ${X}, $(...), `...`), a glob
 *     (* ? [...] or an extended glob group), a brace expansion ({a,b},
 *     {1..3}), a $"..." string, a $'...' escape whose bytes are not known
 *     (\c, NUL, \u or \U at or above 0x80), or a bare tilde (~ and ~user;
 *     ~/bin/x is fine and lists x).
 *   - eval, source and ., trap with a command, alias definitions, hash -p,
 *     enable -f, mapfile/readarray -C, complete/compgen -C or -F, bind -x,
 *     jobs -x, fc, set -k, and calling a function the input defines (any
 *     listed program with the name of a function defined anywhere in it),
 *     or defining command_not_found_handle. Defining a function is not
 *     opaque by itself: its body is listed.
 *   - Shells given -c, -s or -i, or given no script file (they read
 *     standard input: pipes, here-documents, here-strings): sh, bash, dash,
 *     ash, zsh, ksh, mksh, yash, busybox sh, ...; fish, csh, tcsh and other
 *     non-POSIX shells unless running a plain script file. sudo -s/-i/-e,
 *     doas -s, su, runuser without -u, chroot, nsenter and unshare without
 *     a command, env -S, flock -c, ssh with a remote command, with -F or
 *     with a -o ...Command option, watch, parallel, script, and programs
 *     known to run commands this lexer does not follow (pkexec, setpriv,
 *     systemd-run, valgrind, gdb, tmux, screen, at, R, ...).
 *   - Interpreters given inline code or reading it from standard input:
 *     python -c, perl -e/-E/-M/-m, ruby -e, node -e/-p, php -r/-B/-R/-E,
 *     lua -e, julia -e, Rscript -e, osascript -e, expect -c, deno eval, or
 *     any of them with no script operand; an unknown option of theirs. An
 *     interpreter running a script file or module is an ordinary program.
 *     awk programs that call system(), use a pipe or @load (or awk -l); sed
 *     scripts with the e command or the s///e flag (not with --sandbox).
 *   - Assignments (prefix, env, sudo or declare-style) to BASH_ENV, ENV,
 *     BASH_FUNC_*, PS0-PS4, PROMPT_COMMAND, SHELLOPTS, BASHOPTS, LD_PRELOAD
 *     or LD_AUDIT, also through ${NAME=...}. Quoted text spelling $( or `
 *     stored by an assignment or given to let, unset, read, wait, getopts,
 *     printf -v, test -v, [[ or a declaration builtin: bash evaluates array
 *     subscripts found in variable values used as numbers or names, and
 *     would run it. ${!name} and ${name@P}. Single-quoted text holding $
 *     or ` inside arithmetic, subscripts or ${...} (bash expands it there),
 *     and any substitution inside an extended glob group or [[ =~ group.
 *     $(( that bash would take as a command substitution, (( that it would
 *     take as nested subshells, and <(( / >((.
 *   - Syntax errors (unterminated quotes, substitutions or compound
 *     commands, unexpected tokens), a NUL byte (the text before it is still
 *     read), more than 16 pending here-documents.
 *   Command strings given as literal words (sh -c '...', eval '...',
 *   trap '...', su -c '...', flock -c '...', runuser -c '...', ssh host
 *   '...') are still parsed and their programs listed; the result stays
 *   opaque.
 *
 * Not seen (the kernel layers cover these)
 *   Values of variables, including ones the caller passes in the
 *   environment, which arithmetic evaluation could run; file names that
 *   globs produce; the contents of scripts and files; commands that
 *   programs run from their own configuration (git aliases, make, editors,
 *   pagers); aliases and functions inherited from the environment.
 *
 * Bounds
 *   Input longer than CW_SHLEX_MAX_INPUT bytes is not read: opaque ("input
 *   too long"). Nesting deeper than CW_SHLEX_MAX_DEPTH levels ("nesting too
 *   deep") and more than CW_SHLEX_MAX_PROGRAMS distinct programs ("too many
 *   programs") stop the analysis, opaque. Each byte is read a bounded
 *   number of times: `...` bodies and literal command strings are read once
 *   more per level, and what may be copied for that is capped at a fixed
 *   multiple of the input length ("analysis budget exceeded"), so time and
 *   memory are linear in the input. Recursion is bounded by the depth
 *   limit. Only allocation failure is an error (-ENOMEM, with out empty).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlex.h"
#include "util.h"

#define CH_EOF (-1)
#define HEREDOC_MAX 16
#define MAX_OPTVALS 32

/* Internal results besides 0 and -ENOMEM: the analysis stopped (opaque is
 * set), or a syntax error stopped it (opaque is set too). */
#define E_STOP (-ECANCELED)
#define E_SYNTAX (-EINVAL)

/* ---------------------------------------------------------------------- */
/* Words and tokens                                                        */

enum {
	W_QUOTED = 1u << 0,	/* ' " \ $' $" present */
	W_EXPAND = 1u << 1,	/* parameter, command or arith. expansion */
	W_SPLITEXP = 1u << 2,	/* expansion that may yield 0 or n words */
	W_GLOB = 1u << 3,	/* unquoted pattern characters */
	W_BRACE = 1u << 4,	/* unquoted brace expansion */
	W_UNDEC = 1u << 5,	/* quoted text not decodable exactly */
	W_ASSIGN = 1u << 6,	/* NAME=, NAME+=, NAME[..]= */
	W_TILDE = 1u << 7,	/* starts with an unquoted ~ */
	W_FDPREFIX = 1u << 8,	/* N or {name} right before < or > */
	W_CODEQ = 1u << 9,	/* literal text spells $( or ` */
};

#define W_SPLIT (W_SPLITEXP | W_GLOB | W_BRACE)
#define W_UNKNOWN (W_EXPAND | W_GLOB | W_BRACE | W_UNDEC)

struct word {
	const char *val;	/* quotes removed; expansions kept as written */
	size_t len;
	size_t litpre;		/* bytes of val before any non-literal */
	size_t name_len;	/* W_ASSIGN: length of NAME */
	size_t off;		/* position in the top-level input */
	unsigned flags;
};

enum tk {
	TK_EOF,
	TK_WORD,
	TK_NL,
	TK_SEMI,
	TK_AMP,
	TK_ANDAND,
	TK_OROR,
	TK_PIPE,
	TK_PIPEAMP,
	TK_LPAR,
	TK_RPAR,
	TK_DSEMI,
	TK_SEMIAMP,
	TK_DSEMIAMP,
	TK_REDIR,
};

enum redir {
	R_OTHER,
	R_LESS,
	R_GREATER,
	R_HEREDOC,
	R_HEREDOC_STRIP,
};

struct tok {
	enum tk kind;
	enum redir redir;
	struct word w;
};

/* Word-reading modes. */
#define RW_ASSIGN 0x1	  /* assignments allowed: NAME=( ) and NAME[..]= */
#define RW_REGEX 0x2	  /* right side of =~ inside [[ ]] */
#define RW_COMPASSIGN 0x4 /* inside NAME=( ): [sub]=value */

/* Matched-pair scanning flags, after bash's parse_matched_pair(). */
#define P_FIRSTCLOSE 0x01
#define P_ARITH 0x02
#define P_DOLBRACE 0x04
#define P_ARRAYSUB 0x08
#define P_DQUOTE 0x10
#define P_ALLOWESC 0x20

/* ---------------------------------------------------------------------- */
/* Analysis state                                                          */

struct chunk {
	struct chunk *next;
	size_t used;
	size_t cap;
	_Alignas(max_align_t) char data[];
};

struct slot {
	const char *key;
	size_t len;
	size_t idx;
};

struct sset {
	struct slot *slots;
	size_t cap;
	size_t n;
};

struct prog {
	char *name;
	size_t off;
	size_t seq;
};

struct ctx {
	struct prog *progs;
	size_t nprogs;
	size_t capprogs;
	struct sset progset;
	struct sset funcset;
	bool opaque;
	char why[sizeof(((struct cw_shlex *)0)->why)];
	int depth;
	struct chunk *chunks;
	size_t spent;
	size_t budget;
	struct cw_buf scratch[CW_SHLEX_MAX_DEPTH + 2];
};

struct heredoc {
	struct heredoc *next;
	const char *delim;
	size_t dlen;
	bool quoted;
	bool strip;
};

struct lx {
	struct ctx *c;
	const char *s;
	size_t len;
	size_t pos;
	size_t base;		/* top-level position of s[0] */
	size_t span;		/* top-level length s stands for */
	int eof_char;		/* ) or } while reading a substitution */
	struct heredoc *hd_head;
	struct heredoc *hd_tail;
	unsigned nhd;
	bool have;
	struct tok tok;
};

static int parse_list(struct lx *lx);
static int scan_pair(struct lx *lx, int qc, int open, int close,
		     unsigned flags, unsigned *wflags);
static int analyze_cmd(struct lx *lx, struct word *v, size_t n);

__attribute__((format(printf, 2, 3)))
static void set_opaque(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->opaque)
		return;
	c->opaque = true;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static int stop(struct ctx *c, const char *why)
{
	set_opaque(c, "%s", why);
	return E_STOP;
}

static int syntax(struct ctx *c, const char *what)
{
	set_opaque(c, "syntax error: %s", what);
	return E_SYNTAX;
}

static int enter(struct ctx *c)
{
	if (c->depth >= CW_SHLEX_MAX_DEPTH)
		return stop(c, "nesting too deep");
	c->depth++;
	return 0;
}

static void leave(struct ctx *c)
{
	c->depth--;
}

/* Bump allocator for everything that lives until the analysis ends;
 * blocks are aligned for any record. */
static int arena_get(struct ctx *c, size_t n, void **out)
{
	const size_t align = _Alignof(max_align_t);
	struct chunk *k = c->chunks;
	size_t need = (n + align - 1) & ~(align - 1);

	if (need >= c->budget - c->spent)
		return stop(c, "analysis budget exceeded");
	c->spent += need;
	if (!k || k->cap - k->used < need) {
		size_t cap = need > 65536 ? need : 65536;
		struct chunk *nk = malloc(sizeof(*nk) + cap);

		if (!nk)
			return -ENOMEM;
		nk->used = 0;
		nk->cap = cap;
		if (k && need > 16384) {
			/* keep filling the current chunk after a big one */
			nk->next = k->next;
			k->next = nk;
		} else {
			nk->next = k;
			c->chunks = nk;
		}
		k = nk;
	}
	*out = k->data + k->used;
	k->used += need;
	return 0;
}

static int arena_dup(struct ctx *c, const char *p, size_t n, const char **out)
{
	void *m;
	int err = arena_get(c, n + 1, &m);

	if (err)
		return err;
	if (n)
		memcpy(m, p, n);
	((char *)m)[n] = '\0';
	*out = m;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* String sets                                                             */

static uint64_t hash_str(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 1099511628211ULL;
	}
	return h;
}

static struct slot *sset_find(const struct sset *s, const char *k, size_t n)
{
	size_t i;

	if (!s->cap)
		return NULL;
	i = hash_str(k, n) & (s->cap - 1);
	while (s->slots[i].key) {
		if (s->slots[i].len == n && !memcmp(s->slots[i].key, k, n))
			return &s->slots[i];
		i = (i + 1) & (s->cap - 1);
	}
	return NULL;
}

static int sset_add(struct sset *s, const char *k, size_t n, size_t idx)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct slot *slots = calloc(cap, sizeof(*slots));
		size_t j;

		if (!slots)
			return -ENOMEM;
		for (j = 0; j < s->cap; j++) {
			struct slot *o = &s->slots[j];

			if (!o->key)
				continue;
			i = hash_str(o->key, o->len) & (cap - 1);
			while (slots[i].key)
				i = (i + 1) & (cap - 1);
			slots[i] = *o;
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	i = hash_str(k, n) & (s->cap - 1);
	while (s->slots[i].key)
		i = (i + 1) & (s->cap - 1);
	s->slots[i].key = k;
	s->slots[i].len = n;
	s->slots[i].idx = idx;
	s->n++;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Results                                                                 */

static size_t lx_off(const struct lx *lx, size_t pos)
{
	return lx->base + (pos < lx->span ? pos : lx->span);
}

static int add_program(struct ctx *c, const char *name, size_t n, size_t off)
{
	struct slot *sl = sset_find(&c->progset, name, n);
	struct prog *p;
	char *copy;
	int err;

	if (sl) {
		if (off < c->progs[sl->idx].off)
			c->progs[sl->idx].off = off;
		return 0;
	}
	if (c->nprogs >= CW_SHLEX_MAX_PROGRAMS)
		return stop(c, "too many programs");
	if (c->nprogs == c->capprogs) {
		size_t cap = c->capprogs ? c->capprogs * 2 : 16;
		struct prog *np = realloc(c->progs, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->progs = np;
		c->capprogs = cap;
	}
	copy = malloc(n + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, n);
	copy[n] = '\0';
	err = sset_add(&c->progset, copy, n, c->nprogs);
	if (err) {
		free(copy);
		return err;
	}
	p = &c->progs[c->nprogs++];
	p->name = copy;
	p->off = off;
	p->seq = c->nprogs;
	return 0;
}

static int add_program_str(struct ctx *c, const char *name, size_t off)
{
	return add_program(c, name, strlen(name), off);
}

/* ---------------------------------------------------------------------- */
/* Characters                                                              */

static int at(const struct lx *lx, size_t i)
{
	return i < lx->len ? (unsigned char)lx->s[i] : CH_EOF;
}

/* bash drops backslash-newline pairs almost everywhere while reading. */
static size_t skip_lc_at(const struct lx *lx, size_t i)
{
	while (i + 1 < lx->len && lx->s[i] == '\\' && lx->s[i + 1] == '\n')
		i += 2;
	return i;
}

static void skip_lc(struct lx *lx)
{
	lx->pos = skip_lc_at(lx, lx->pos);
}

/* Index of the character after the one at i, continuations skipped. */
static size_t next_idx(const struct lx *lx, size_t i)
{
	return skip_lc_at(lx, i + 1);
}

static bool is_break(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' ||
	       ch == '&' || ch == '|' || ch == '(' || ch == ')' ||
	       ch == '<' || ch == '>';
}

static bool is_name_start(int ch)
{
	return ch != CH_EOF && (isalpha(ch) || ch == '_');
}

static bool is_name_char(int ch)
{
	return ch != CH_EOF && (isalnum(ch) || ch == '_');
}

static bool is_param_start(int ch)
{
	return is_name_start(ch) || (ch != CH_EOF && isdigit(ch)) ||
	       (ch != CH_EOF && ch && strchr("@*#?-$!", ch));
}

static bool funsub_char(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '|';
}

static bool is_ident(const char *p, size_t n)
{
	size_t i;

	if (!n || !is_name_start((unsigned char)p[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!is_name_char((unsigned char)p[i]))
			return false;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Building a word                                                         */

struct wstate {
	struct cw_buf *b;
	int err;
	unsigned flags;
	bool name_ok;		/* so far only unquoted identifier chars */
	bool subscript;		/* NAME[...] read */
	bool eq_seen;
	bool lit_dollar;	/* last literal character was $ */
	bool bracket;		/* unquoted [ seen */
	bool bcomma;		/* , or .. inside unquoted braces */
	int bdepth;
	size_t litpre;
	size_t name_len;
};

static void ws_put(struct wstate *ws, const char *p, size_t n)
{
	if (!ws->err && cw_buf_append(ws->b, p, n))
		ws->err = -ENOMEM;
}

static void ws_mark_unknown(struct wstate *ws)
{
	if (ws->litpre == SIZE_MAX)
		ws->litpre = ws->b->len;
}

/* Text of an expansion, kept as written. */
static void ws_raw(struct wstate *ws, const char *p, size_t n)
{
	ws_mark_unknown(ws);
	ws_put(ws, p, n);
	ws->lit_dollar = false;
	if (!ws->eq_seen)
		ws->name_ok = false;
}

/* A literal character; notes text that spells a command substitution. */
static void ws_lit(struct wstate *ws, char ch, bool quoted)
{
	if (ch == '`' || (ch == '(' && ws->lit_dollar))
		ws->flags |= W_CODEQ;
	ws->lit_dollar = ch == '$';
	if (quoted && !ws->eq_seen)
		ws->name_ok = false;
	ws_put(ws, &ch, 1);
}

/* ---------------------------------------------------------------------- */
/* Here-documents                                                          */

/* One logical line of a here-document body, newline included if any. */
static void heredoc_line(struct lx *lx, bool join, struct cw_buf *b, int *err)
{
	bool pass = false;

	while (lx->pos < lx->len) {
		char ch = lx->s[lx->pos];

		if (pass) {
			pass = false;
		} else if (join && ch == '\\') {
			if (at(lx, lx->pos + 1) == '\n') {
				lx->pos += 2;
				continue;
			}
			pass = true;
		}
		if (!*err && cw_buf_append(b, &ch, 1))
			*err = -ENOMEM;
		lx->pos++;
		if (ch == '\n')
			return;
	}
}

/* Source position right after the delimiter that starts a body line. */
static size_t after_delim(const struct lx *lx, size_t i,
			  const struct heredoc *h)
{
	size_t k = 0;

	if (h->strip)
		while (i < lx->len && lx->s[i] == '\t')
			i++;
	while (k < h->dlen && i < lx->len) {
		if (!h->quoted)
			i = skip_lc_at(lx, i);
		i++;
		k++;
	}
	return i;
}

static int scan_dq(struct lx *lx, bool heredoc, struct wstate *ws);

static int read_heredoc(struct lx *lx, const struct heredoc *h)
{
	struct ctx *c = lx->c;
	struct cw_buf *b = &c->scratch[c->depth];
	size_t src0 = lx->pos;
	const char *body;
	int err = 0;

	b->len = 0;
	while (lx->pos < lx->len) {
		size_t src_line = lx->pos;
		size_t ls = b->len;
		const char *line;
		size_t cl;

		heredoc_line(lx, !h->quoted, b, &err);
		if (err)
			return err;
		line = b->data + ls;
		cl = b->len - ls;
		if (cl && line[cl - 1] == '\n')
			cl--;
		if (h->strip && cl) {
			if (cl == h->dlen && !memcmp(line, h->delim, cl)) {
				b->len = ls;
				break;
			}
			while (cl && *line == '\t') {
				line++;
				cl--;
			}
		}
		if (cl == h->dlen && !memcmp(line, h->delim, cl)) {
			b->len = ls;
			break;
		}
		/* bash: inside $( ), "EOF)" ends the body and the ) is kept */
		if (lx->eof_char && cl > h->dlen &&
		    !memcmp(line, h->delim, h->dlen) &&
		    memchr(line + h->dlen, lx->eof_char, cl - h->dlen)) {
			b->len = ls;
			lx->pos = after_delim(lx, src_line, h);
			break;
		}
	}
	if (h->quoted || !b->len)
		return 0;
	/* unquoted bodies are expanded like double-quoted text */
	err = arena_dup(c, b->data, b->len, &body);
	if (!err) {
		struct lx sub = {
			.c = c,
			.s = body,
			.len = b->len,
			.base = lx_off(lx, src0),
			.span = lx->pos - src0,
		};

		err = scan_dq(&sub, true, NULL);
	}
	return err;
}

static int gather_heredocs(struct lx *lx)
{
	int err = 0;

	while (lx->hd_head && !err) {
		struct heredoc *h = lx->hd_head;

		lx->hd_head = h->next;
		lx->nhd--;
		err = read_heredoc(lx, h);
	}
	if (!lx->hd_head)
		lx->hd_tail = NULL;
	return err;
}

/* ---------------------------------------------------------------------- */
/* Substitutions                                                           */

/* Parses $( ... ) or ${ ...; } from just after the opening bracket. */
static int parse_comsub(struct lx *lx, int close)
{
	struct heredoc *sh = lx->hd_head, *st = lx->hd_tail;
	unsigned sn = lx->nhd;
	int seof = lx->eof_char;
	int err;

	lx->hd_head = lx->hd_tail = NULL;
	lx->nhd = 0;
	lx->eof_char = close;
	lx->have = false;
	err = parse_list(lx);
	if (!err) {
		const struct tok *t = &lx->tok;

		/* parse_list leaves the token that ended it read */
		if (close == ')' ? t->kind != TK_RPAR :
				   !(t->kind == TK_WORD && !t->w.flags &&
				     t->w.len == 1 && t->w.val[0] == '}'))
			err = syntax(lx->c,
				     "unterminated command substitution");
		lx->have = false;
	}
	if (!err && lx->hd_head)
		set_opaque(lx->c, "here-document not terminated inside a "
				  "command substitution");
	lx->hd_head = sh;
	lx->hd_tail = st;
	lx->nhd = sn;
	lx->eof_char = seof;
	return err;
}

/* Runs the parser over a separate buffer: `...` bodies, payloads. */
static int parse_buffer(struct ctx *c, const char *s, size_t len, size_t base,
			size_t span)
{
	struct lx sub = {
		.c = c,
		.s = s,
		.len = len,
		.base = base,
		.span = span,
	};
	int err;

	err = parse_list(&sub);
	if (!err && sub.tok.kind != TK_EOF)
		err = syntax(c, "unexpected token");
	return err;
}

/*
 * `...`: finds the closing backquote (from just after the opening one),
 * removes the escapes bash removes before parsing the body, and parses it.
 */
static int backquote(struct lx *lx, bool in_dq)
{
	struct ctx *c = lx->c;
	size_t s0 = lx->pos, s1, i;
	struct cw_buf *b;
	const char *body;
	size_t blen;
	int err;

	err = scan_pair(lx, '`', '`', '`', 0, NULL);
	if (err)
		return err;
	s1 = lx->pos - 1;
	/* the body is copied out before parse_list() uses this buffer */
	b = &c->scratch[c->depth + 1];
	b->len = 0;
	for (i = s0; i < s1 && !err; i++) {
		char ch = lx->s[i];

		if (ch == '\\' && i + 1 < s1) {
			char nc = lx->s[i + 1];

			if (nc == '\n') {
				i++;
				continue;
			}
			if (nc == '$' || nc == '`' || nc == '\\' ||
			    (in_dq && nc == '"'))
				err = cw_buf_append(b, &nc, 1);
			else
				err = cw_buf_append(b, lx->s + i, 2);
			i++;
			continue;
		}
		err = cw_buf_append(b, &ch, 1);
	}
	blen = b->len;
	if (!err)
		err = arena_dup(c, b->data, blen, &body);
	if (!err)
		err = parse_buffer(c, body, blen, lx_off(lx, s0), s1 - s0);
	return err;
}

/* Variables whose values bash runs or loads as code. */
static const char *const code_vars[] = {
	"BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS3", "PS4",
	"PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "LD_PRELOAD", "LD_AUDIT",
};

static bool is_code_var(const char *p, size_t n)
{
	size_t i;

	if (n >= 10 && !memcmp(p, "BASH_FUNC_", 10))
		return true;
	for (i = 0; i < CW_ARRAY_SIZE(code_vars); i++)
		if (strlen(code_vars[i]) == n && !memcmp(p, code_vars[i], n))
			return true;
	return false;
}

/* Checks on the text of ${...}: indirection, prompt expansion and
 * assignments to code variables. */
static void check_dolbrace(struct lx *lx, size_t s0, size_t s1)
{
	const char *p = lx->s + s0;
	size_t n = s1 - s0, k = 0;

	if (n >= 2 && p[0] == '!' && p[1] != '}')
		set_opaque(lx->c, "indirect expansion ${!...}");
	if (memmem(p, n, "@P", 2))
		set_opaque(lx->c, "prompt expansion ${...@P}");
	while (k < n && is_name_char((unsigned char)p[k]))
		k++;
	if (k && is_code_var(p, k) && k < n &&
	    (p[k] == '=' || (p[k] == ':' && k + 1 < n && p[k + 1] == '=')))
		set_opaque(lx->c, "assignment to %.*s", (int)k, p);
}

/* Is $(( ... )) arithmetic? bash's rule: "(...)" balanced inside. */
static bool arith_form(const struct lx *lx, size_t a, size_t z)
{
	const char *t = lx->s;
	int depth = 0;
	size_t k;

	/* t[a] is the second (, t[z - 1] the last ) */
	if (z < a + 2 || t[z - 1] != ')' || t[z - 2] != ')')
		return false;
	for (k = a + 1; k < z - 2; k++) {
		char ch = t[k];

		if (ch == '\\') {
			k++;
		} else if (ch == '\'' || ch == '"') {
			const char *q = memchr(t + k + 1, ch, z - 2 - (k + 1));

			if (!q)
				return false;
			k = (size_t)(q - t);
		} else if (ch == '(') {
			depth++;
		} else if (ch == ')' && --depth < 0) {
			return false;
		}
	}
	return depth == 0;
}

/*
 * A construct that starts with intro ($ < >) and bracket ( { [, read from
 * just after the bracket; the caller keeps its text.
 */
static int dollar_construct(struct lx *lx, int intro, int bracket,
			    unsigned rflags, unsigned *wflags)
{
	struct ctx *c = lx->c;
	size_t s0 = lx->pos;
	int err;

	if (bracket == '(') {
		size_t i = skip_lc_at(lx, lx->pos);

		if (at(lx, i) != '(')
			return parse_comsub(lx, ')');
		/* $(( and <((: bash reads a matched pair and decides later */
		lx->pos = i;
		err = scan_pair(lx, 0, '(', ')', P_ARITH | (rflags & P_DQUOTE),
				wflags);
		if (err)
			return err;
		if (intro != '$')
			set_opaque(c, "process substitution starting with ((");
		else if (!arith_form(lx, i, lx->pos))
			set_opaque(c, "$(( ... )) that bash reads as a command "
				      "substitution");
		return 0;
	}
	if (bracket == '{') {
		size_t i = skip_lc_at(lx, lx->pos);

		if (funsub_char(at(lx, i))) {
			if (at(lx, i) == '|')
				lx->pos = i + 1;
			return parse_comsub(lx, '}');
		}
		err = scan_pair(lx, 0, '{', '}',
				P_FIRSTCLOSE | P_DOLBRACE | rflags, wflags);
		if (!err) {
			check_dolbrace(lx, s0, lx->pos - 1);
			if (wflags && memchr(lx->s + s0, '@', lx->pos - s0))
				*wflags |= W_SPLITEXP;
		}
		return err;
	}
	return scan_pair(lx, 0, '[', ']', P_ARITH | rflags, wflags);
}

/* Is there a $ or ` in s[a..z)? */
static bool has_subst_chars(const struct lx *lx, size_t a, size_t z)
{
	return memchr(lx->s + a, '$', z - a) || memchr(lx->s + a, '`', z - a);
}

/*
 * Finds the end of a construct the way bash's parse_matched_pair() does,
 * parsing the command substitutions inside. qc is the quote character when
 * scanning a quoted string. pos is just after the opening character and ends
 * just after the closing one.
 */
static int scan_pair(struct lx *lx, int qc, int open, int close,
		     unsigned flags, unsigned *wflags)
{
	struct ctx *c = lx->c;
	unsigned rflags = qc == '"' ? P_DQUOTE : (flags & P_DQUOTE);
	bool passnext = false, wasdol = false, gtlt = false;
	int count = 1, ch, err;

	err = enter(c);
	if (err)
		return err;
	for (;;) {
		int dol = 0;

		if (qc != '\'' && !passnext)
			skip_lc(lx);
		ch = at(lx, lx->pos);
		if (ch == CH_EOF) {
			err = syntax(c, open == '\'' ? "unterminated quote" :
				     open == '"' ? "unterminated double quote" :
				     open == '`' ? "unterminated backquote" :
						   "unterminated bracket");
			break;
		}
		lx->pos++;
		if (passnext) {
			passnext = false;
			continue;
		}
		if (ch == close)
			count--;
		else if (open != close && wasdol && open == '{' && ch == open)
			count++;
		else if (!(flags & P_FIRSTCLOSE) && ch == open)
			count++;
		if (count == 0)
			break;
		if (open == '\'') {
			if ((flags & P_ALLOWESC) && ch == '\\')
				passnext = true;
			continue;
		}
		if (ch == '\\')
			passnext = true;
		if (open != close) {
			if (ch == '\'' || ch == '"' || ch == '`') {
				size_t s0 = lx->pos;

				if (ch == '`')
					err = backquote(lx, rflags & P_DQUOTE);
				else if (wasdol && ch == '\'')
					err = scan_pair(lx, '\'', '\'', '\'',
							P_ALLOWESC | rflags,
							wflags);
				else
					err = scan_pair(lx, ch, ch, ch, rflags,
							wflags);
				if (err)
					break;
				/* bash expands these at run time */
				if (ch == '\'' &&
				    (flags & (P_ARITH | P_DOLBRACE |
					      P_ARRAYSUB)) &&
				    (wasdol ||
				     has_subst_chars(lx, s0, lx->pos - 1)))
					set_opaque(c, "quoted expansion inside "
						      "arithmetic or ${...}");
			} else if ((flags & (P_ARRAYSUB | P_DOLBRACE)) &&
				   wasdol &&
				   (ch == '(' || ch == '{' || ch == '[')) {
				dol = '$';
			} else if ((flags & P_ARITH) && wasdol && ch == '(') {
				dol = '$';
			} else if ((flags & P_ARITH) && wasdol && ch == '{' &&
				   funsub_char(at(lx, skip_lc_at(lx,
								 lx->pos)))) {
				dol = '$';
			} else if ((flags & (P_ARRAYSUB | P_DOLBRACE)) &&
				   gtlt && ch == '(') {
				dol = '<';
			} else if (!(flags & (P_ARITH | P_DOLBRACE |
					      P_ARRAYSUB)) &&
				   wasdol && (ch == '(' || ch == '{')) {
				/* bash only counts brackets here but expands
				 * the text later */
				set_opaque(c, "substitution inside a pattern "
					      "group");
			}
		} else if (open == '"' && ch == '`') {
			err = backquote(lx, true);
			if (err)
				break;
		} else if (open != '`' && wasdol &&
			   (ch == '(' || ch == '{' || ch == '[')) {
			dol = '$';
		}
		if (dol) {
			if (open == ch)
				count--;
			err = dollar_construct(lx, dol, ch, rflags, wflags);
			if (err)
				break;
		}
		gtlt = (ch == '<' || ch == '>') && !gtlt;
		wasdol = ch == '$' && !wasdol;
	}
	leave(c);
	return err;
}

/*
 * Double-quoted text from just after the quote, or a here-document body
 * (to the end of the buffer). ws, when given, receives the value.
 */
static int scan_dq(struct lx *lx, bool heredoc, struct wstate *ws)
{
	for (;;) {
		int ch, nc, err;
		size_t i2;

		skip_lc(lx);
		ch = at(lx, lx->pos);
		if (ch == CH_EOF)
			return heredoc ? 0 :
					 syntax(lx->c,
						"unterminated double quote");
		if (ch == '"' && !heredoc) {
			lx->pos++;
			return 0;
		}
		if (ch == '\\') {
			nc = at(lx, lx->pos + 1);
			if (nc == CH_EOF) {
				if (ws)
					ws_lit(ws, '\\', true);
				lx->pos++;
				continue;
			}
			if (ws) {
				if (!(nc == '$' || nc == '`' || nc == '\\' ||
				      (!heredoc && nc == '"')))
					ws_lit(ws, '\\', true);
				ws_lit(ws, (char)nc, true);
			}
			lx->pos += 2;
			continue;
		}
		if (ch == '`') {
			size_t s0 = lx->pos;

			lx->pos++;
			err = backquote(lx, !heredoc);
			if (err)
				return err;
			if (ws) {
				ws->flags |= W_EXPAND;
				ws_raw(ws, lx->s + s0, lx->pos - s0);
			}
			continue;
		}
		if (ch == '$') {
			i2 = next_idx(lx, lx->pos);
			nc = at(lx, i2);
			if (nc == '(' || nc == '{' || nc == '[') {
				size_t s0 = lx->pos;
				unsigned fl = 0;

				lx->pos = i2 + 1;
				err = dollar_construct(lx, '$', nc, P_DQUOTE,
						       &fl);
				if (err)
					return err;
				if (ws) {
					ws->flags |= W_EXPAND |
						     (fl & W_SPLITEXP);
					ws_raw(ws, lx->s + s0, lx->pos - s0);
				}
				continue;
			}
			if (is_param_start(nc)) {
				if (ws) {
					ws->flags |= W_EXPAND;
					if (nc == '@')
						ws->flags |= W_SPLITEXP;
					ws_raw(ws, "$", 1);
				}
				lx->pos++;
				continue;
			}
		}
		if (ws)
			ws_lit(ws, (char)ch, true);
		lx->pos++;
	}
}

/* ---------------------------------------------------------------------- */
/* Reading words                                                           */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int ansi_simple(int ch)
{
	switch (ch) {
	case 'a': return '\a';
	case 'b': return '\b';
	case 'e':
	case 'E': return 27;
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case 'v': return '\v';
	case '\\':
	case '\'':
	case '"':
	case '?': return ch;
	default: return -1;
	}
}

/* Decodes $'...' (pos after the opening quote). */
static int word_ansi(struct lx *lx, struct wstate *ws)
{
	size_t s0 = lx->pos, s1, i;
	const char *p = lx->s;
	int err;

	err = scan_pair(lx, '\'', '\'', '\'', P_ALLOWESC, NULL);
	if (err)
		return err;
	s1 = lx->pos - 1;
	for (i = s0; i < s1; i++) {
		unsigned long v = 0;
		int nd = 0, max, base = 16, simple;
		char ch = p[i];

		if (ch != '\\' || i + 1 >= s1) {
			ws_lit(ws, ch, true);
			continue;
		}
		ch = p[++i];
		simple = ansi_simple((unsigned char)ch);
		if (simple >= 0) {
			ws_lit(ws, (char)simple, true);
			continue;
		}
		if (ch == 'x') {
			max = 2;
		} else if (ch == 'u') {
			max = 4;
		} else if (ch == 'U') {
			max = 8;
		} else if (ch >= '0' && ch <= '7') {
			max = 3;
			base = 8;
			i--;
		} else {
			if (ch == 'c') {
				/* control characters: bash's rules vary */
				ws->flags |= W_UNDEC;
				ws_mark_unknown(ws);
			}
			ws_lit(ws, '\\', true);
			ws_lit(ws, ch, true);
			continue;
		}
		while (nd < max && i + 1 < s1) {
			int d = hexval((unsigned char)p[i + 1]);

			if (d < 0 || d >= base)
				break;
			v = v * (unsigned long)base + (unsigned long)d;
			nd++;
			i++;
		}
		if (!nd) {
			ws_lit(ws, '\\', true);
			ws_lit(ws, ch, true);
			continue;
		}
		if (base == 8)
			v &= 0xff;
		if (v == 0 || ((ch == 'u' || ch == 'U') && v >= 0x80)) {
			/* a NUL ends the word; non-ASCII depends on locale */
			ws->flags |= W_UNDEC;
			ws_mark_unknown(ws);
			continue;
		}
		ws_lit(ws, (char)v, true);
	}
	return 0;
}

static int lex_token(struct lx *lx, unsigned rw, struct tok *out);

/* The words of NAME=( ... ), from just after the parenthesis. */
static int compound_assign(struct lx *lx)
{
	struct ctx *c = lx->c;
	struct tok t;
	int err;

	err = enter(c);
	if (err)
		return err;
	for (;;) {
		err = lex_token(lx, RW_COMPASSIGN, &t);
		if (err)
			break;
		if (t.kind == TK_RPAR)
			break;
		if (t.kind == TK_WORD || t.kind == TK_NL)
			continue;
		err = syntax(c, t.kind == TK_EOF ?
					"unterminated array assignment" :
					"unexpected token in array assignment");
		break;
	}
	leave(c);
	return err;
}

/* May the word so far followed by = make an assignment? */
static bool assign_lhs_ok(const struct wstate *ws)
{
	const char *p = ws->b->data;
	size_t n = ws->b->len;

	if (!ws->name_ok || !n)
		return false;
	if (p[n - 1] == '+')
		n--;
	if (ws->subscript)
		return n && p[n - 1] == ']';
	return is_ident(p, n);
}

static int read_word(struct lx *lx, unsigned mode, struct word *w)
{
	struct ctx *c = lx->c;
	struct wstate ws = {
		.b = &c->scratch[c->depth],
		.name_ok = true,
		.litpre = SIZE_MAX,
	};
	size_t start;
	int ch = CH_EOF, err = 0;

	ws.b->len = 0;
	skip_lc(lx);
	start = lx->pos;
	memset(w, 0, sizeof(*w));
	w->off = lx_off(lx, start);
	for (;;) {
		size_t i2, s0;
		int p;

		if (err || ws.err)
			break;
		skip_lc(lx);
		ch = at(lx, lx->pos);
		if (ch == CH_EOF)
			break;
		i2 = next_idx(lx, lx->pos);
		p = at(lx, i2);
		s0 = lx->pos;
		if (ch == '\\') {
			ws.flags |= W_QUOTED;
			lx->pos++;
			if (lx->pos >= lx->len) {
				ws_lit(&ws, '\\', true);
				continue;
			}
			ws_lit(&ws, lx->s[lx->pos], true);
			lx->pos++;
			continue;
		}
		if (ch == '\'') {
			const char *q = memchr(lx->s + s0 + 1, '\'',
					       lx->len - s0 - 1);
			size_t k;

			if (!q) {
				err = syntax(c, "unterminated quote");
				break;
			}
			ws.flags |= W_QUOTED;
			if (!ws.eq_seen)
				ws.name_ok = false;
			for (k = s0 + 1; lx->s + k < q; k++)
				ws_lit(&ws, lx->s[k], true);
			lx->pos = (size_t)(q - lx->s) + 1;
			continue;
		}
		if (ch == '"') {
			ws.flags |= W_QUOTED;
			if (!ws.eq_seen)
				ws.name_ok = false;
			lx->pos++;
			err = scan_dq(lx, false, &ws);
			continue;
		}
		if (ch == '`') {
			lx->pos++;
			err = backquote(lx, false);
			ws.flags |= W_EXPAND | W_SPLITEXP;
			ws_raw(&ws, lx->s + s0, lx->pos - s0);
			continue;
		}
		if ((mode & RW_REGEX) && (ch == '|' || ch == '(')) {
			lx->pos++;
			if (ch == '(')
				err = scan_pair(lx, 0, '(', ')', 0, &ws.flags);
			ws_raw(&ws, lx->s + s0, lx->pos - s0);
			continue;
		}
		if (strchr("*?+@!", ch) && p == '(') {
			lx->pos = i2 + 1;
			err = scan_pair(lx, 0, '(', ')', 0, &ws.flags);
			ws.flags |= W_GLOB;
			ws_raw(&ws, lx->s + s0, lx->pos - s0);
			continue;
		}
		if ((ch == '$' || ch == '<' || ch == '>') &&
		    (p == '(' || (ch == '$' && (p == '{' || p == '[')))) {
			unsigned fl = 0;

			lx->pos = i2 + 1;
			err = dollar_construct(lx, ch, p, 0, &fl);
			ws.flags |= W_EXPAND | fl;
			if (ch == '$')
				ws.flags |= W_SPLITEXP;
			ws_raw(&ws, lx->s + s0, lx->pos - s0);
			continue;
		}
		if (ch == '$' && (p == '\'' || p == '"')) {
			ws.flags |= W_QUOTED;
			if (!ws.eq_seen)
				ws.name_ok = false;
			lx->pos = i2 + 1;
			if (p == '\'') {
				err = word_ansi(lx, &ws);
			} else {
				/* the translation is not known here */
				ws.flags |= W_UNDEC;
				ws_mark_unknown(&ws);
				err = scan_dq(lx, false, &ws);
			}
			continue;
		}
		if (ch == '$' && p == '$') {
			ws.flags |= W_EXPAND | W_SPLITEXP;
			lx->pos = i2 + 1;
			ws_raw(&ws, "$$", 2);
			continue;
		}
		if (ch == '$' && is_param_start(p)) {
			ws.flags |= W_EXPAND | W_SPLITEXP;
			lx->pos++;
			ws_raw(&ws, "$", 1);
			continue;
		}
		if (ch == '[' && !ws.eq_seen && !ws.subscript &&
		    (((mode & RW_ASSIGN) && ws.b->len && ws.name_ok &&
		      is_ident(ws.b->data, ws.b->len)) ||
		     ((mode & RW_COMPASSIGN) && lx->pos == start))) {
			size_t nl = ws.b->len;

			lx->pos++;
			err = scan_pair(lx, 0, '[', ']', P_ARRAYSUB, &ws.flags);
			ws_put(&ws, lx->s + s0, lx->pos - s0);
			ws.subscript = true;
			ws.name_len = nl;
			continue;
		}
		if (ch == '=' && !ws.eq_seen && assign_lhs_ok(&ws)) {
			if (!ws.subscript) {
				ws.name_len = ws.b->len;
				if (ws.b->data[ws.name_len - 1] == '+')
					ws.name_len--;
			}
			ws.eq_seen = true;
			ws.flags |= W_ASSIGN;
			ws_lit(&ws, '=', false);
			lx->pos++;
			if ((mode & (RW_ASSIGN | RW_COMPASSIGN)) &&
			    at(lx, skip_lc_at(lx, lx->pos)) == '(') {
				lx->pos = skip_lc_at(lx, lx->pos) + 1;
				err = compound_assign(lx);
				ws_raw(&ws, lx->s + s0 + 1,
				       lx->pos - (s0 + 1));
			}
			continue;
		}
		if (is_break(ch))
			break;
		/* an ordinary character */
		if (!ws.eq_seen && ws.name_ok) {
			bool ok;

			if (ws.subscript)
				ok = ch == '+' && p == '=';
			else if (ws.b->len)
				ok = is_name_char(ch) ||
				     (ch == '+' && p == '=');
			else
				ok = is_name_start(ch);
			if (!ok)
				ws.name_ok = false;
		}
		if (ch == '*' || ch == '?') {
			ws.flags |= W_GLOB;
		} else if (ch == '[') {
			ws.bracket = true;
		} else if (ch == ']' && ws.bracket) {
			ws.flags |= W_GLOB;
		} else if (ch == '{') {
			ws.bdepth++;
		} else if (ws.bdepth && (ch == ',' ||
					 (ch == '.' && p == '.'))) {
			ws.bcomma = true;
		} else if (ch == '}' && ws.bdepth) {
			ws.bdepth--;
			if (ws.bcomma)
				ws.flags |= W_BRACE;
		} else if (ch == '~' && lx->pos == start) {
			ws.flags |= W_TILDE;
		}
		if (ws.flags & (W_GLOB | W_BRACE))
			ws_mark_unknown(&ws);
		ws_lit(&ws, (char)ch, false);
		lx->pos++;
	}
	if (!err)
		err = ws.err;
	if (err)
		return err;
	if (lx->pos == start)
		return syntax(c, "unexpected character");
	if ((ch == '<' || ch == '>') && !ws.flags && ws.b->len) {
		const char *d = ws.b->data;
		size_t n = ws.b->len, k;
		bool digits = true;

		for (k = 0; k < n; k++)
			if (!isdigit((unsigned char)d[k]))
				digits = false;
		if (digits || (n > 2 && d[0] == '{' && d[n - 1] == '}' &&
			       is_ident(d + 1, n - 2)))
			ws.flags |= W_FDPREFIX;
	}
	err = arena_dup(c, ws.b->data, ws.b->len, &w->val);
	if (err)
		return err;
	w->len = ws.b->len;
	w->flags = ws.flags;
	w->litpre = ws.litpre == SIZE_MAX ? w->len : ws.litpre;
	if (w->flags & W_ASSIGN)
		w->name_len = ws.name_len;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Tokens                                                                  */

/* Reads an operator at pos (ch and the next character p at i2). */
static void lex_operator(struct lx *lx, int ch, int p, size_t i2,
			 struct tok *t)
{
	size_t end = lx->pos + 1, i3 = next_idx(lx, i2);

	t->kind = TK_REDIR;
	t->redir = R_OTHER;
	switch (ch) {
	case ';':
		t->kind = TK_SEMI;
		if (p == ';') {
			end = i2 + 1;
			t->kind = TK_DSEMI;
			if (at(lx, i3) == '&') {
				end = i3 + 1;
				t->kind = TK_DSEMIAMP;
			}
		} else if (p == '&') {
			end = i2 + 1;
			t->kind = TK_SEMIAMP;
		}
		break;
	case '&':
		t->kind = TK_AMP;
		if (p == '&') {
			end = i2 + 1;
			t->kind = TK_ANDAND;
		} else if (p == '>') {
			end = at(lx, i3) == '>' ? i3 + 1 : i2 + 1;
			t->kind = TK_REDIR;
		}
		break;
	case '|':
		t->kind = TK_PIPE;
		if (p == '|') {
			end = i2 + 1;
			t->kind = TK_OROR;
		} else if (p == '&') {
			end = i2 + 1;
			t->kind = TK_PIPEAMP;
		}
		break;
	case '(':
		t->kind = TK_LPAR;
		break;
	case ')':
		t->kind = TK_RPAR;
		break;
	case '<':
		t->redir = R_LESS;
		if (p == '<') {
			end = i2 + 1;
			t->redir = R_HEREDOC;
			if (at(lx, i3) == '-') {
				end = i3 + 1;
				t->redir = R_HEREDOC_STRIP;
			} else if (at(lx, i3) == '<') {
				end = i3 + 1;
				t->redir = R_OTHER;
			}
		} else if (p == '&' || p == '>') {
			end = i2 + 1;
			t->redir = R_OTHER;
		}
		break;
	case '>':
		t->redir = R_GREATER;
		if (p == '>' || p == '&' || p == '|') {
			end = i2 + 1;
			t->redir = R_OTHER;
		}
		break;
	}
	lx->pos = end;
}

static int lex_token(struct lx *lx, unsigned rw, struct tok *out)
{
	struct tok t = { .kind = TK_EOF };
	int ch, err = 0;

	for (;;) {
		skip_lc(lx);
		ch = at(lx, lx->pos);
		if (ch != ' ' && ch != '\t')
			break;
		lx->pos++;
	}
	if (ch == '#') {
		const char *nl = memchr(lx->s + lx->pos, '\n',
					lx->len - lx->pos);

		lx->pos = nl ? (size_t)(nl - lx->s) : lx->len;
		ch = at(lx, lx->pos);
	}
	if (ch == CH_EOF) {
		/* bash ends the input with a newline: bodies are empty */
		lx->hd_head = lx->hd_tail = NULL;
		lx->nhd = 0;
		*out = t;
		return 0;
	}
	if (ch == '\n') {
		lx->pos++;
		err = gather_heredocs(lx);
		t.kind = TK_NL;
		*out = t;
		return err;
	}
	if (!(rw & RW_REGEX) && strchr(";&|()<>", ch)) {
		size_t i2 = next_idx(lx, lx->pos);
		int p = at(lx, i2);

		if (!((ch == '<' || ch == '>') && p == '(')) {
			lex_operator(lx, ch, p, i2, &t);
			*out = t;
			return 0;
		}
	}
	t.kind = TK_WORD;
	err = read_word(lx, rw, &t.w);
	*out = t;
	return err;
}

static int peek(struct lx *lx, unsigned rw, struct tok **t)
{
	if (!lx->have) {
		struct tok tmp;
		int err = lex_token(lx, rw, &tmp);

		if (err)
			return err;
		lx->tok = tmp;
		lx->have = true;
	}
	*t = &lx->tok;
	return 0;
}

static void consume(struct lx *lx)
{
	lx->have = false;
}

static bool is_rword(const struct tok *t, const char *rw)
{
	return t->kind == TK_WORD && !(t->w.flags & (W_QUOTED | W_EXPAND)) &&
	       t->w.len == strlen(rw) && !memcmp(t->w.val, rw, t->w.len);
}

static bool word_is(const struct word *w, const char *s)
{
	return !(w->flags & W_UNKNOWN) && w->len == strlen(s) &&
	       !memcmp(w->val, s, w->len);
}

static bool is_list_end(const struct tok *t)
{
	static const char *const ends[] = {
		"then", "else", "elif", "fi", "do", "done", "esac", "}",
	};
	size_t i;

	switch (t->kind) {
	case TK_EOF:
	case TK_RPAR:
	case TK_DSEMI:
	case TK_SEMIAMP:
	case TK_DSEMIAMP:
		return true;
	case TK_WORD:
		for (i = 0; i < CW_ARRAY_SIZE(ends); i++)
			if (is_rword(t, ends[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static int skip_newlines(struct lx *lx, unsigned rw)
{
	struct tok *t;
	int err;

	for (;;) {
		err = peek(lx, rw, &t);
		if (err || t->kind != TK_NL)
			return err;
		consume(lx);
	}
}

static int expect_word(struct lx *lx, const char *rw, const char *what)
{
	struct tok *t;
	int err = skip_newlines(lx, RW_ASSIGN);

	if (!err)
		err = peek(lx, RW_ASSIGN, &t);
	if (err)
		return err;
	if (!is_rword(t, rw))
		return syntax(lx->c, what);
	consume(lx);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Grammar                                                                 */

static int parse_redirect(struct lx *lx)
{
	struct ctx *c = lx->c;
	enum redir r = lx->tok.redir;
	struct heredoc *h;
	struct tok *t;
	int err;

	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (t->kind != TK_WORD)
		return syntax(c, "missing redirection target");
	consume(lx);
	if (r != R_HEREDOC && r != R_HEREDOC_STRIP)
		return 0;
	if (lx->nhd >= HEREDOC_MAX)
		return stop(c, "too many here-documents");
	if (t->w.flags & (W_EXPAND | W_UNDEC))
		set_opaque(c, "unusual here-document delimiter");
	err = arena_get(c, sizeof(*h), (void **)&h);
	if (err)
		return err;
	memset(h, 0, sizeof(*h));
	h->delim = t->w.val;
	h->dlen = t->w.len;
	h->quoted = t->w.flags & W_QUOTED;
	h->strip = r == R_HEREDOC_STRIP;
	if (lx->hd_tail)
		lx->hd_tail->next = h;
	else
		lx->hd_head = h;
	lx->hd_tail = h;
	lx->nhd++;
	return 0;
}

static int parse_redirs(struct lx *lx)
{
	struct tok *t;
	int err;

	for (;;) {
		err = peek(lx, 0, &t);
		if (err)
			return err;
		if (t->kind == TK_WORD && (t->w.flags & W_FDPREFIX)) {
			consume(lx);
			err = peek(lx, 0, &t);
			if (err)
				return err;
			if (t->kind != TK_REDIR)
				return syntax(lx->c, "bad redirection");
		}
		if (t->kind != TK_REDIR)
			return 0;
		err = parse_redirect(lx);
		if (err)
			return err;
	}
}

static bool is_compound_start(const struct tok *t)
{
	static const char *const starts[] = {
		"{", "if", "while", "until", "for", "select", "case", "[[",
	};
	size_t i;

	if (t->kind == TK_LPAR)
		return true;
	for (i = 0; i < CW_ARRAY_SIZE(starts); i++)
		if (is_rword(t, starts[i]))
			return true;
	return false;
}

static int parse_if(struct lx *lx)
{
	struct tok *t;
	int err;

	consume(lx);
	err = parse_list(lx);
	if (!err)
		err = expect_word(lx, "then", "if without then");
	if (!err)
		err = parse_list(lx);
	while (!err) {
		err = peek(lx, RW_ASSIGN, &t);
		if (err)
			break;
		if (is_rword(t, "elif")) {
			consume(lx);
			err = parse_list(lx);
			if (!err)
				err = expect_word(lx, "then",
						  "elif without then");
			if (!err)
				err = parse_list(lx);
		} else if (is_rword(t, "else")) {
			consume(lx);
			err = parse_list(lx);
			if (!err)
				err = expect_word(lx, "fi", "if without fi");
			break;
		} else if (is_rword(t, "fi")) {
			consume(lx);
			break;
		} else {
			err = syntax(lx->c, "if without fi");
		}
	}
	return err;
}

static int parse_while(struct lx *lx)
{
	int err;

	consume(lx);
	err = parse_list(lx);
	if (!err)
		err = expect_word(lx, "do", "while without do");
	if (!err)
		err = parse_list(lx);
	if (!err)
		err = expect_word(lx, "done", "while without done");
	return err;
}

/* After the header of for/select: do ... done or { ... }. */
static int parse_loop_body(struct lx *lx)
{
	struct tok *t;
	int err = skip_newlines(lx, RW_ASSIGN);

	if (!err)
		err = peek(lx, RW_ASSIGN, &t);
	if (err)
		return err;
	if (is_rword(t, "do")) {
		consume(lx);
		err = parse_list(lx);
		if (!err)
			err = expect_word(lx, "done", "for without done");
		return err;
	}
	if (is_rword(t, "{")) {
		consume(lx);
		err = parse_list(lx);
		if (!err)
			err = expect_word(lx, "}", "for without }");
		return err;
	}
	return syntax(lx->c, "for without do");
}

/* (( ... )) from just after the first parenthesis. */
static int parse_arith_cmd(struct lx *lx, bool in_for)
{
	struct ctx *c = lx->c;
	struct tok *t;
	size_t i;
	int err;

	lx->pos = skip_lc_at(lx, lx->pos) + 1;
	err = scan_pair(lx, 0, '(', ')', P_ARITH, NULL);
	if (err)
		return err;
	i = skip_lc_at(lx, lx->pos);
	if (at(lx, i) == ')') {
		lx->pos = i + 1;
		return 0;
	}
	if (in_for)
		return syntax(c, "for (( without ))");
	/* bash rereads it as nested subshells: not followed here */
	set_opaque(c, "(( ... ) ... ) that bash reads as nested subshells");
	err = parse_list(lx);
	if (!err)
		err = peek(lx, 0, &t);
	if (!err && t->kind != TK_RPAR)
		err = syntax(c, "unterminated subshell");
	if (!err)
		consume(lx);
	return err;
}

static int parse_for(struct lx *lx, bool select)
{
	struct tok *t;
	int err;

	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (!select && t->kind == TK_LPAR &&
	    at(lx, skip_lc_at(lx, lx->pos)) == '(') {
		consume(lx);
		err = parse_arith_cmd(lx, true);
		if (!err)
			err = peek(lx, RW_ASSIGN, &t);
		if (!err && t->kind == TK_SEMI)
			consume(lx);
		return err ? err : parse_loop_body(lx);
	}
	if (t->kind != TK_WORD)
		return syntax(lx->c, "for without a name");
	consume(lx);
	err = skip_newlines(lx, 0);
	if (!err)
		err = peek(lx, 0, &t);
	if (err)
		return err;
	if (is_rword(t, "in")) {
		consume(lx);
		for (;;) {
			err = peek(lx, 0, &t);
			if (err)
				return err;
			if (t->kind == TK_WORD) {
				consume(lx);
				continue;
			}
			if (t->kind == TK_SEMI || t->kind == TK_NL) {
				consume(lx);
				break;
			}
			return syntax(lx->c, "bad word list in for");
		}
	} else if (t->kind == TK_SEMI) {
		consume(lx);
	}
	return parse_loop_body(lx);
}

static int parse_case(struct lx *lx)
{
	struct tok *t;
	int err;

	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (t->kind != TK_WORD)
		return syntax(lx->c, "case without a word");
	consume(lx);
	err = skip_newlines(lx, 0);
	if (!err)
		err = peek(lx, 0, &t);
	if (err)
		return err;
	if (!is_rword(t, "in"))
		return syntax(lx->c, "case without in");
	consume(lx);
	for (;;) {
		err = skip_newlines(lx, 0);
		if (!err)
			err = peek(lx, 0, &t);
		if (err)
			return err;
		if (is_rword(t, "esac")) {
			consume(lx);
			return 0;
		}
		if (t->kind == TK_LPAR) {
			consume(lx);
			err = peek(lx, 0, &t);
			if (err)
				return err;
		}
		for (;;) {
			if (t->kind != TK_WORD)
				return syntax(lx->c, "bad case pattern");
			consume(lx);
			err = peek(lx, 0, &t);
			if (err)
				return err;
			if (t->kind == TK_RPAR) {
				consume(lx);
				break;
			}
			if (t->kind != TK_PIPE)
				return syntax(lx->c, "bad case pattern");
			consume(lx);
			err = peek(lx, 0, &t);
			if (err)
				return err;
		}
		err = parse_list(lx);
		if (!err)
			err = peek(lx, 0, &t);
		if (err)
			return err;
		if (t->kind == TK_DSEMI || t->kind == TK_SEMIAMP ||
		    t->kind == TK_DSEMIAMP) {
			consume(lx);
			continue;
		}
		if (is_rword(t, "esac")) {
			consume(lx);
			return 0;
		}
		return syntax(lx->c, "case without esac");
	}
}

/* Words whose literal text holds code that evaluation could run. */
static void check_codeq(struct lx *lx, const struct word *w)
{
	if (w->flags & W_CODEQ)
		set_opaque(lx->c, "argument holds quoted shell code that may "
				  "be evaluated");
}

static int parse_cond(struct lx *lx)
{
	struct ctx *c = lx->c;
	bool regex = false;
	struct tok *t;
	int err;

	err = add_program_str(c, "[[", lx->tok.w.off);
	if (err)
		return err;
	consume(lx);
	for (;;) {
		err = peek(lx, regex ? RW_REGEX : 0, &t);
		if (err)
			return err;
		regex = false;
		switch (t->kind) {
		case TK_WORD:
			if (is_rword(t, "]]")) {
				consume(lx);
				return 0;
			}
			check_codeq(lx, &t->w);
			regex = is_rword(t, "=~");
			break;
		case TK_LPAR:
		case TK_RPAR:
		case TK_ANDAND:
		case TK_OROR:
		case TK_NL:
			break;
		case TK_REDIR:
			if (t->redir == R_LESS || t->redir == R_GREATER)
				break;
			return syntax(c, "unexpected token in [[ ]]");
		case TK_EOF:
			return syntax(c, "[[ without ]]");
		default:
			return syntax(c, "unexpected token in [[ ]]");
		}
		consume(lx);
	}
}

static int parse_compound(struct lx *lx)
{
	struct tok *t = &lx->tok;
	int err;

	if (t->kind == TK_LPAR) {
		consume(lx);
		if (at(lx, skip_lc_at(lx, lx->pos)) == '(') {
			err = parse_arith_cmd(lx, false);
		} else {
			err = parse_list(lx);
			if (!err)
				err = peek(lx, 0, &t);
			if (!err && t->kind != TK_RPAR)
				err = syntax(lx->c, "unterminated subshell");
			if (!err)
				consume(lx);
		}
	} else if (is_rword(t, "{")) {
		consume(lx);
		err = parse_list(lx);
		if (!err)
			err = expect_word(lx, "}", "{ without }");
	} else if (is_rword(t, "if")) {
		err = parse_if(lx);
	} else if (is_rword(t, "while") || is_rword(t, "until")) {
		err = parse_while(lx);
	} else if (is_rword(t, "for")) {
		err = parse_for(lx, false);
	} else if (is_rword(t, "select")) {
		err = parse_for(lx, true);
	} else if (is_rword(t, "case")) {
		err = parse_case(lx);
	} else {
		err = parse_cond(lx);
	}
	return err ? err : parse_redirs(lx);
}

static int define_function(struct lx *lx, const struct word *name)
{
	struct ctx *c = lx->c;
	struct tok *t;
	int err;

	if (name->flags & (W_EXPAND | W_UNDEC | W_GLOB | W_BRACE))
		set_opaque(c, "function name is not literal");
	if (word_is(name, "command_not_found_handle"))
		set_opaque(c, "defines command_not_found_handle");
	if (!sset_find(&c->funcset, name->val, name->len)) {
		const char *slash = memrchr(name->val, '/', name->len);
		const char *b = slash ? slash + 1 : name->val;

		err = sset_add(&c->funcset, b,
			       name->len - (size_t)(b - name->val), 0);
		if (err)
			return err;
	}
	err = skip_newlines(lx, RW_ASSIGN);
	if (!err)
		err = peek(lx, RW_ASSIGN, &t);
	if (err)
		return err;
	if (!is_compound_start(t))
		return syntax(c, "function body is not a compound command");
	return parse_compound(lx);
}

struct wvec {
	struct word *v;
	size_t n;
	size_t cap;
};

static int wvec_push(struct wvec *wv, const struct word *w)
{
	if (wv->n == wv->cap) {
		size_t cap = wv->cap ? wv->cap * 2 : 8;
		struct word *v = realloc(wv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		wv->v = v;
		wv->cap = cap;
	}
	wv->v[wv->n++] = *w;
	return 0;
}

static bool is_decl_builtin(const struct word *w)
{
	return word_is(w, "declare") || word_is(w, "typeset") ||
	       word_is(w, "local") || word_is(w, "export") ||
	       word_is(w, "readonly");
}

static void check_assignment(struct lx *lx, const char *name, size_t n,
			     const struct word *w)
{
	if (is_code_var(name, n))
		set_opaque(lx->c, "assignment to %.*s", (int)(n > 40 ? 40 : n),
			   name);
	else if (w->flags & W_CODEQ)
		set_opaque(lx->c, "assignment value holds quoted shell code");
}

static int parse_simple(struct lx *lx, const struct word *first)
{
	struct ctx *c = lx->c;
	struct wvec wv = { 0 };
	bool prefix = true, decl = false, any = false;
	struct tok *t;
	int err = 0;

	for (;;) {
		struct word w;

		if (first) {
			w = *first;
			first = NULL;
		} else {
			err = peek(lx, prefix || decl ? RW_ASSIGN : 0, &t);
			if (err)
				goto out;
			if (t->kind == TK_REDIR) {
				err = parse_redirect(lx);
				if (err)
					goto out;
				any = true;
				continue;
			}
			if (t->kind != TK_WORD)
				break;
			w = t->w;
			consume(lx);
			if (w.flags & W_FDPREFIX) {
				err = peek(lx, 0, &t);
				if (!err && t->kind != TK_REDIR)
					err = syntax(c, "bad redirection");
				if (!err)
					err = parse_redirect(lx);
				if (err)
					goto out;
				any = true;
				continue;
			}
		}
		if (prefix && (w.flags & W_ASSIGN)) {
			check_assignment(lx, w.val, w.name_len, &w);
			any = true;
			continue;
		}
		err = wvec_push(&wv, &w);
		if (err)
			goto out;
		if (!prefix)
			continue;
		prefix = false;
		decl = is_decl_builtin(&w);
		if (any)
			continue;
		/* NAME () BODY */
		err = peek(lx, decl ? RW_ASSIGN : 0, &t);
		if (err)
			goto out;
		if (t->kind == TK_LPAR) {
			consume(lx);
			err = peek(lx, 0, &t);
			if (!err && t->kind != TK_RPAR)
				err = syntax(c, "bad function definition");
			if (err)
				goto out;
			consume(lx);
			err = define_function(lx, &w);
			goto out;
		}
	}
	err = analyze_cmd(lx, wv.v, wv.n);
out:
	free(wv.v);
	return err;
}

static int parse_function_kw(struct lx *lx)
{
	struct tok *t;
	struct word name;
	int err;

	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (t->kind != TK_WORD)
		return syntax(lx->c, "function without a name");
	name = t->w;
	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (t->kind == TK_LPAR) {
		consume(lx);
		err = peek(lx, 0, &t);
		if (err)
			return err;
		if (t->kind != TK_RPAR)
			return syntax(lx->c, "bad function definition");
		consume(lx);
	}
	return define_function(lx, &name);
}

static int parse_coproc(struct lx *lx)
{
	struct tok *t;
	struct word w;
	int err;

	consume(lx);
	err = peek(lx, RW_ASSIGN, &t);
	if (err)
		return err;
	if (is_compound_start(t))
		return parse_compound(lx);
	if (t->kind != TK_WORD)
		return parse_simple(lx, NULL);
	w = t->w;
	consume(lx);
	err = peek(lx, 0, &t);
	if (err)
		return err;
	if (is_compound_start(t))
		return parse_compound(lx);
	return parse_simple(lx, &w);
}

static int parse_command(struct lx *lx)
{
	struct tok *t;
	int err;

	err = peek(lx, RW_ASSIGN, &t);
	if (err)
		return err;
	if (is_compound_start(t))
		return parse_compound(lx);
	if (is_rword(t, "function"))
		return parse_function_kw(lx);
	if (is_rword(t, "coproc"))
		return parse_coproc(lx);
	if (is_rword(t, "!") || is_list_end(t))
		return syntax(lx->c, "unexpected token");
	if (t->kind == TK_WORD || t->kind == TK_REDIR)
		return parse_simple(lx, NULL);
	return syntax(lx->c, t->kind == TK_EOF ? "unexpected end of input" :
						 "unexpected token");
}

static bool ends_pipeline(const struct tok *t)
{
	return is_list_end(t) || t->kind == TK_SEMI || t->kind == TK_AMP ||
	       t->kind == TK_NL || t->kind == TK_ANDAND || t->kind == TK_OROR;
}

static int parse_pipeline(struct lx *lx)
{
	struct tok *t;
	bool prefixed = false;
	int err;

	for (;;) {
		err = peek(lx, RW_ASSIGN, &t);
		if (err)
			return err;
		if (is_rword(t, "!")) {
			consume(lx);
			prefixed = true;
			continue;
		}
		if (!is_rword(t, "time"))
			break;
		err = add_program_str(lx->c, "time", t->w.off);
		if (err)
			return err;
		consume(lx);
		prefixed = true;
		err = peek(lx, RW_ASSIGN, &t);
		if (!err && is_rword(t, "-p")) {
			consume(lx);
			err = peek(lx, RW_ASSIGN, &t);
		}
		if (!err && is_rword(t, "--"))
			consume(lx);
		if (err)
			return err;
	}
	/* `time` and `!` may stand alone */
	if (prefixed && ends_pipeline(t))
		return 0;
	err = parse_command(lx);
	while (!err) {
		err = peek(lx, 0, &t);
		if (err || (t->kind != TK_PIPE && t->kind != TK_PIPEAMP))
			break;
		consume(lx);
		err = skip_newlines(lx, RW_ASSIGN);
		if (!err)
			err = parse_command(lx);
	}
	return err;
}

static int parse_and_or(struct lx *lx)
{
	struct tok *t;
	int err = parse_pipeline(lx);

	while (!err) {
		err = peek(lx, 0, &t);
		if (err || (t->kind != TK_ANDAND && t->kind != TK_OROR))
			break;
		consume(lx);
		err = skip_newlines(lx, RW_ASSIGN);
		if (!err)
			err = parse_pipeline(lx);
	}
	return err;
}

/* A list; stops, leaving the token read, at anything that closes one. */
static int parse_list(struct lx *lx)
{
	struct ctx *c = lx->c;
	struct tok *t;
	int err;

	err = enter(c);
	if (err)
		return err;
	for (;;) {
		err = skip_newlines(lx, RW_ASSIGN);
		if (!err)
			err = peek(lx, RW_ASSIGN, &t);
		if (err || is_list_end(t))
			break;
		err = parse_and_or(lx);
		if (!err)
			err = peek(lx, 0, &t);
		if (err)
			break;
		if (t->kind != TK_SEMI && t->kind != TK_AMP &&
		    t->kind != TK_NL)
			break;
		consume(lx);
	}
	leave(c);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Option syntax of wrappers                                               */

struct lopt {
	const char *name;
	int id;
	int arg;		/* 0 none, 1 required, 2 optional (=value) */
};

struct ospec {
	const char *sopts;	/* getopt string, letters with : or :: */
	const struct lopt *lopts;
};

struct optval {
	int id;
	const struct word *w;	/* the word the value came from */
	const char *val;
	size_t len;
	bool known;		/* the value is literal */
};

struct opts {
	uint64_t seen[2];
	struct optval v[MAX_OPTVALS];
	unsigned n;
};

enum { OPT_NEXT, OPT_END, OPT_OPAQUE };

static void opt_mark(struct opts *o, int id)
{
	o->seen[(id >> 6) & 1] |= 1ULL << (id & 63);
}

static bool opt_seen(const struct opts *o, int id)
{
	return o->seen[(id >> 6) & 1] & (1ULL << (id & 63));
}

static const struct optval *opt_last(const struct opts *o, int id)
{
	unsigned k;

	for (k = o->n; k-- > 0;)
		if (o->v[k].id == id)
			return &o->v[k];
	return NULL;
}

static int opt_record(struct lx *lx, const char *prog, struct opts *o, int id,
		      const struct word *w, const char *val, size_t len,
		      bool known)
{
	opt_mark(o, id);
	if (o->n == MAX_OPTVALS) {
		set_opaque(lx->c, "%s: too many options", prog);
		return OPT_OPAQUE;
	}
	o->v[o->n++] = (struct optval){ id, w, val, len, known };
	return OPT_NEXT;
}

static int opt_long(struct lx *lx, const char *prog, struct word *v, size_t n,
		    size_t *ip, const struct ospec *sp, struct opts *o)
{
	const struct word *w = &v[*ip];
	const char *name = w->val + 2;
	const char *eq = memchr(name, '=', w->len - 2);
	size_t nl = eq ? (size_t)(eq - name) : w->len - 2;
	const struct lopt *lo, *hit = NULL;
	bool ambiguous = false;

	for (lo = sp->lopts; lo && lo->name; lo++) {
		if (strlen(lo->name) == nl && !memcmp(lo->name, name, nl)) {
			hit = lo;
			ambiguous = false;
			break;
		}
		if (strlen(lo->name) > nl && !memcmp(lo->name, name, nl)) {
			if (hit && (hit->id != lo->id || hit->arg != lo->arg))
				ambiguous = true;
			hit = lo;
		}
	}
	if (!hit || ambiguous || !nl) {
		set_opaque(lx->c, "%s: %s option --%.*s", prog,
			   ambiguous ? "ambiguous" : "unknown",
			   (int)(nl > 32 ? 32 : nl), name);
		return OPT_OPAQUE;
	}
	(*ip)++;
	if (hit->arg == 0) {
		if (eq) {
			set_opaque(lx->c, "%s: --%s takes no argument", prog,
				   hit->name);
			return OPT_OPAQUE;
		}
		opt_mark(o, hit->id);
		return OPT_NEXT;
	}
	if (eq)
		return opt_record(lx, prog, o, hit->id, w, eq + 1,
				  w->len - (size_t)(eq + 1 - w->val), true);
	if (hit->arg == 2)
		return opt_record(lx, prog, o, hit->id, w, "", 0, true);
	if (*ip >= n) {
		set_opaque(lx->c, "%s: --%s needs an argument", prog,
			   hit->name);
		return OPT_OPAQUE;
	}
	w = &v[(*ip)++];
	if (w->flags & W_SPLIT) {
		set_opaque(lx->c, "%s: an option argument may expand to "
				  "several words", prog);
		return OPT_OPAQUE;
	}
	return opt_record(lx, prog, o, hit->id, w, w->val, w->len,
			  !(w->flags & W_UNKNOWN));
}

/* One getopt step ('+' mode: options end at the first operand). */
static int opt_step(struct lx *lx, const char *prog, struct word *v, size_t n,
		    size_t *ip, const struct ospec *sp, struct opts *o)
{
	const struct word *w = &v[*ip];
	const char *a = w->val;
	size_t al = w->len, k;

	if (w->flags & W_SPLIT) {
		set_opaque(lx->c, "%s: an argument may expand to several words",
			   prog);
		return OPT_OPAQUE;
	}
	if (w->flags & W_UNKNOWN) {
		set_opaque(lx->c, "%s: an argument cannot be known", prog);
		return OPT_OPAQUE;
	}
	if (al < 2 || a[0] != '-')
		return OPT_END;
	if (al == 2 && a[1] == '-') {
		(*ip)++;
		return OPT_END;
	}
	if (a[1] == '-')
		return opt_long(lx, prog, v, n, ip, sp, o);
	for (k = 1; k < al; k++) {
		int ch = (unsigned char)a[k];
		const char *p = ch != ':' && ch ? strchr(sp->sopts, ch) : NULL;
		const struct word *aw;

		if (!p) {
			set_opaque(lx->c, "%s: unknown option -%c", prog,
				   isprint(ch) ? ch : '?');
			return OPT_OPAQUE;
		}
		if (p[1] != ':') {
			opt_mark(o, ch);
			continue;
		}
		if (p[2] == ':' || k + 1 < al) {
			(*ip)++;
			return opt_record(lx, prog, o, ch, w, a + k + 1,
					  al - k - 1, true);
		}
		if (*ip + 1 >= n) {
			set_opaque(lx->c, "%s: option -%c needs an argument",
				   prog, ch);
			return OPT_OPAQUE;
		}
		aw = &v[*ip + 1];
		if (aw->flags & W_SPLIT) {
			set_opaque(lx->c, "%s: an option argument may expand "
					  "to several words", prog);
			return OPT_OPAQUE;
		}
		*ip += 2;
		return opt_record(lx, prog, o, ch, aw, aw->val, aw->len,
				  !(aw->flags & W_UNKNOWN));
	}
	(*ip)++;
	return OPT_NEXT;
}

static int parse_opts(struct lx *lx, const char *prog, struct word *v,
		      size_t n, size_t *ip, const struct ospec *sp,
		      struct opts *o)
{
	while (*ip < n) {
		int r = opt_step(lx, prog, v, n, ip, sp, o);

		if (r != OPT_NEXT)
			return r;
	}
	return OPT_END;
}

/* ---------------------------------------------------------------------- */
/* What programs do with their arguments                                   */

struct wrapper;
typedef int (*wrap_fn)(struct lx *lx, const struct wrapper *wr,
		       struct word *v, size_t n, size_t *ip);

struct wrapper {
	const char *name;
	wrap_fn fn;
	const void *data;	/* ospec or interp */
	unsigned flags;
};

#define WR_BUILTIN 0x1		/* only as a bash builtin (no slash) */
#define WR_VERSIONED 0x2	/* also with a version suffix: python3.12 */

/* Parses a literal payload (sh -c STRING...) for what it lists. */
static int payload(struct lx *lx, const char *s, size_t len, size_t off)
{
	int err = parse_buffer(lx->c, s, len, off, len);

	/* the result is opaque already; a broken payload changes nothing */
	return err == E_SYNTAX ? 0 : err;
}

static int payload_word(struct lx *lx, const struct word *w)
{
	if (w->flags & W_UNKNOWN)
		return 0;
	return payload(lx, w->val, w->len, w->off);
}

/* Joins literal words with spaces (eval, ssh) and parses the result. */
static int payload_join(struct lx *lx, struct word *v, size_t n)
{
	struct ctx *c = lx->c;
	struct cw_buf *b;
	const char *s;
	size_t i, len;
	int err = 0;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i].flags & W_UNKNOWN)
			return 0;
	/* copied out before parse_list() uses this buffer */
	b = &c->scratch[c->depth + 1];
	b->len = 0;
	for (i = 0; i < n && !err; i++) {
		if (i)
			err = cw_buf_append(b, " ", 1);
		if (!err)
			err = cw_buf_append(b, v[i].val, v[i].len);
	}
	len = b->len;
	if (!err)
		err = arena_dup(c, b->data, len, &s);
	return err ? err : payload(lx, s, len, v[0].off);
}

static int opaque_rest(struct lx *lx, size_t n, size_t *ip, const char *fmt,
		       const char *name)
{
	set_opaque(lx->c, fmt, name);
	*ip = n;
	return 0;
}

/* Generic: options, then the program. */
static int h_opts(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, wr->data, &o) == OPT_OPAQUE)
		*ip = n;
	return 0;
}

/* NAME=VALUE arguments of env and sudo. */
static bool env_assign(struct lx *lx, const char *prog, const struct word *w)
{
	const char *eq;

	if (w->flags & W_SPLIT) {
		set_opaque(lx->c, "%s: an argument may expand to several words",
			   prog);
		return true;
	}
	eq = memchr(w->val, '=', w->litpre);
	if (!eq)
		return false;
	check_assignment(lx, w->val, (size_t)(eq - w->val), w);
	return true;
}

static const struct lopt env_lopts[] = {
	{ "ignore-environment", 'i', 0 }, { "null", '0', 0 },
	{ "unset", 'u', 1 }, { "chdir", 'C', 1 }, { "split-string", 'S', 1 },
	{ "debug", 'v', 0 }, { "argv0", 'a', 1 },
	{ "block-signal", 'B', 2 }, { "default-signal", 'D', 2 },
	{ "ignore-signal", 'I', 2 }, { "list-signal-handling", 'L', 0 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec env_spec = { "a:C:iS:u:v0", env_lopts };

static int h_env(struct lx *lx, const struct wrapper *wr, struct word *v,
		 size_t n, size_t *ip)
{
	struct opts o = { 0 };
	size_t i = *ip + 1;

	if (parse_opts(lx, wr->name, v, n, &i, &env_spec, &o) == OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if (opt_seen(&o, 'S'))
		return opaque_rest(lx, n, ip, "%s -S splits its own command "
					      "string", wr->name);
	/* a lone - after the options means -i */
	if (i < n && word_is(&v[i], "-"))
		i++;
	while (i < n && env_assign(lx, wr->name, &v[i]))
		i++;
	*ip = i;
	return 0;
}

static const struct lopt sudo_lopts[] = {
	{ "askpass", 'A', 0 }, { "auth-type", 'a', 1 },
	{ "background", 'b', 0 }, { "bell", 'B', 0 },
	{ "close-from", 'C', 1 }, { "chdir", 'D', 1 },
	{ "preserve-env", 'E', 2 }, { "edit", 'e', 0 }, { "group", 'g', 1 },
	{ "set-home", 'H', 0 }, { "help", '?', 0 }, { "host", 'h', 1 },
	{ "login", 'i', 0 }, { "remove-timestamp", 'K', 0 },
	{ "reset-timestamp", 'k', 0 }, { "list", 'l', 0 },
	{ "non-interactive", 'n', 0 }, { "no-update", 'N', 0 },
	{ "preserve-groups", 'P', 0 }, { "prompt", 'p', 1 },
	{ "chroot", 'R', 1 }, { "role", 'r', 1 }, { "stdin", 'S', 0 },
	{ "shell", 's', 0 }, { "type", 't', 1 },
	{ "command-timeout", 'T', 1 }, { "other-user", 'U', 1 },
	{ "user", 'u', 1 }, { "version", 'V', 0 }, { "validate", 'v', 0 },
	{ "login-class", 'c', 1 }, { NULL, 0, 0 },
};
static const struct ospec sudo_spec = {
	"Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv", sudo_lopts
};

static int h_sudo(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct opts o = { 0 };
	const struct optval *h;
	size_t i = *ip + 1;

	if (parse_opts(lx, wr->name, v, n, &i, &sudo_spec, &o) == OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	h = opt_last(&o, 'h');
	if (h && !h->len && h->w->val[1] != '-')
		return opaque_rest(lx, n, ip, "%s -h: host or help cannot be "
					      "told apart", wr->name);
	if (opt_seen(&o, 'e'))
		return opaque_rest(lx, n, ip, "%s -e runs an editor",
				   wr->name);
	while (i < n && env_assign(lx, wr->name, &v[i]))
		i++;
	/* sudo -s/-i hand the rest to a shell: list it, but opaque */
	if (opt_seen(&o, 's') || opt_seen(&o, 'i'))
		set_opaque(lx->c, "%s -s/-i runs a shell", wr->name);
	*ip = i;
	return 0;
}

static const struct lopt no_lopts[] = { { NULL, 0, 0 } };
static const struct ospec doas_spec = { "C:Lnsu:", no_lopts };

static int h_doas(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct opts o = { 0 };
	size_t i = *ip + 1;

	if (parse_opts(lx, wr->name, v, n, &i, &doas_spec, &o) == OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if (opt_seen(&o, 's'))
		set_opaque(lx->c, "%s -s runs a shell", wr->name);
	*ip = i;
	return 0;
}

static const struct lopt nice_lopts[] = {
	{ "adjustment", 'n', 1 }, { "help", 'h', 0 }, { "version", 'V', 0 },
	{ NULL, 0, 0 },
};
static const struct ospec nice_spec = { "n:", nice_lopts };

static int h_nice(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct opts o = { 0 };
	size_t i = *ip + 1;

	while (i < n) {
		const struct word *w = &v[i];
		int r;

		/* nice's historical -N, --N and -+N adjustments */
		if (!(w->flags & (W_UNKNOWN | W_SPLIT)) && w->len >= 2 &&
		    w->val[0] == '-') {
			size_t d = 1 + (w->val[1] == '-' || w->val[1] == '+');

			if (d < w->len && isdigit((unsigned char)w->val[d])) {
				i++;
				continue;
			}
		}
		r = opt_step(lx, wr->name, v, n, &i, &nice_spec, &o);
		if (r == OPT_OPAQUE)
			i = n;
		if (r != OPT_NEXT)
			break;
	}
	*ip = i;
	return 0;
}

static int h_nohup(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	(void)lx;
	(void)wr;
	(*ip)++;
	if (*ip < n && word_is(&v[*ip], "--"))
		(*ip)++;
	return 0;
}

/* Skips `count` operands before the program (timeout DURATION, ...). */
static int skip_operands(struct lx *lx, const char *prog, struct word *v,
			 size_t n, size_t *ip, size_t count)
{
	while (count-- && *ip < n) {
		if (v[*ip].flags & W_SPLIT) {
			set_opaque(lx->c, "%s: an argument may expand to "
					  "several words", prog);
			*ip = n;
			return 0;
		}
		(*ip)++;
	}
	return 0;
}

static const struct lopt timeout_lopts[] = {
	{ "foreground", 'f', 0 }, { "kill-after", 'k', 1 },
	{ "preserve-status", 'p', 0 }, { "signal", 's', 1 },
	{ "verbose", 'v', 0 }, { "help", 'h', 0 }, { "version", 'V', 0 },
	{ NULL, 0, 0 },
};
static const struct ospec timeout_spec = { "fk:ps:v", timeout_lopts };

static int h_timeout(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &timeout_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	return skip_operands(lx, wr->name, v, n, ip, 1);
}

static const struct lopt stdbuf_lopts[] = {
	{ "input", 'i', 1 }, { "output", 'o', 1 }, { "error", 'e', 1 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec stdbuf_spec = { "i:o:e:", stdbuf_lopts };

static const struct lopt setsid_lopts[] = {
	{ "ctty", 'c', 0 }, { "fork", 'f', 0 }, { "wait", 'w', 0 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec setsid_spec = { "cfwhV", setsid_lopts };

static const struct lopt time_lopts[] = {
	{ "format", 'f', 1 }, { "output", 'o', 1 }, { "append", 'a', 0 },
	{ "portability", 'p', 0 }, { "quiet", 'q', 0 },
	{ "verbose", 'v', 0 }, { "help", 'h', 0 }, { "version", 'V', 0 },
	{ NULL, 0, 0 },
};
static const struct ospec time_spec = { "f:o:apqvV", time_lopts };

static const struct ospec exec_spec = { "cla:", no_lopts };

static const struct lopt strace_lopts[] = {
	{ "output", 'o', 1 }, { "trace", 'e', 1 }, { "signal", 'e', 1 },
	{ "abbrev", 'e', 1 }, { "verbose", 'e', 1 }, { "raw", 'e', 1 },
	{ "read", 'e', 1 }, { "write", 'e', 1 }, { "fault", 'e', 1 },
	{ "inject", 'e', 1 }, { "status", 'e', 1 }, { "quiet", 'e', 1 },
	{ "silent", 'e', 1 }, { "decode-fds", 'e', 1 },
	{ "attach", 'p', 1 }, { "user", 'u', 1 }, { "env", 'E', 1 },
	{ "string-limit", 's', 1 }, { "summary-sort-by", 'S', 1 },
	{ "follow-forks", 'f', 0 }, { "output-separately", 'F', 0 },
	{ "summary-only", 'c', 0 }, { "summary", 'C', 0 },
	{ "trace-path", 'P', 1 }, { "columns", 'a', 1 },
	{ "instruction-pointer", 'i', 0 }, { "stack-trace", 'k', 0 },
	{ "syscall-times", 'T', 0 }, { "relative-timestamps", 'r', 2 },
	{ "absolute-timestamps", 't', 2 }, { "timestamps", 't', 2 },
	{ "no-abbrev", 'v', 0 }, { "help", 'h', 0 }, { "version", 'V', 0 },
	{ "seccomp-bpf", 'Z', 0 }, { "daemonize", 'D', 2 },
	{ NULL, 0, 0 },
};
static const struct ospec strace_spec = {
	"+a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ", strace_lopts
};
static const struct ospec ltrace_spec = {
	"+a:A:bcCdDe:E:fF:hiIl:Ln:o:p:rs:Su:tTvVwx:X:", no_lopts
};

static int h_trace(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, wr->data, &o) == OPT_OPAQUE)
		*ip = n;
	return 0;
}

static const struct lopt xargs_lopts[] = {
	{ "null", '0', 0 }, { "arg-file", 'a', 1 }, { "delimiter", 'd', 1 },
	{ "eof", 'e', 2 }, { "replace", 'i', 2 }, { "max-lines", 'l', 2 },
	{ "max-args", 'n', 1 }, { "open-tty", 'o', 0 },
	{ "interactive", 'p', 0 }, { "no-run-if-empty", 'r', 0 },
	{ "max-chars", 's', 1 }, { "verbose", 't', 0 },
	{ "show-limits", 'S', 0 }, { "exit", 'x', 0 },
	{ "max-procs", 'P', 1 }, { "process-slot-var", 'Z', 1 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec xargs_spec = {
	"0a:E:e::i::I:l::L:n:oprs:txP:d:", xargs_lopts
};

static int h_xargs(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	const struct optval *rv = NULL;
	struct opts o = { 0 };
	const char *rs = NULL;
	size_t i = *ip + 1, rl = 0;
	unsigned k;

	if (parse_opts(lx, wr->name, v, n, &i, &xargs_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	for (k = 0; k < o.n; k++)
		if (o.v[k].id == 'I' || o.v[k].id == 'i')
			rv = &o.v[k];
	if (rv) {
		if (!rv->known)
			return opaque_rest(lx, n, ip, "%s: replace string is "
						      "not literal", wr->name);
		rs = rv->val;
		rl = rv->len;
		if (rv->id == 'i' && !rl) {
			rs = "{}";
			rl = 2;
		}
	}
	if (i >= n) {
		*ip = n;
		return add_program_str(lx->c, "echo", v[*ip].off);
	}
	if (rs && rl && !(v[i].flags & W_UNKNOWN) &&
	    memmem(v[i].val, v[i].len, rs, rl))
		return opaque_rest(lx, n, ip, "%s replaces the command word "
					      "with its input", wr->name);
	*ip = i;
	return 0;
}

static const struct ospec command_spec = { "pvV", no_lopts };

static int h_command(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	struct opts o = { 0 };
	size_t i = *ip + 1;

	if (parse_opts(lx, wr->name, v, n, &i, &command_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if ((opt_seen(&o, 'v') || opt_seen(&o, 'V')) && i < n) {
		/* a lookup: list the name, follow nothing */
		const struct word *w = &v[i];
		const char *slash, *b;

		*ip = n;
		if (w->flags & (W_UNKNOWN | W_TILDE))
			return 0;
		slash = memrchr(w->val, '/', w->len);
		b = slash ? slash + 1 : w->val;
		if (w->len == (size_t)(b - w->val))
			return 0;
		return add_program(lx->c, b, w->len - (size_t)(b - w->val),
				   w->off);
	}
	*ip = i;
	return 0;
}

static int h_builtin(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	(void)lx;
	(void)wr;
	(*ip)++;
	if (*ip < n && word_is(&v[*ip], "--"))
		(*ip)++;
	return 0;
}

static const struct lopt chroot_lopts[] = {
	{ "groups", 'G', 1 }, { "userspec", 'U', 1 },
	{ "skip-chdir", 'K', 0 }, { "help", 'h', 0 }, { "version", 'V', 0 },
	{ NULL, 0, 0 },
};
static const struct ospec chroot_spec = { "", chroot_lopts };

static int h_chroot(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &chroot_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if (*ip >= n)
		return 0;
	skip_operands(lx, wr->name, v, n, ip, 1);
	if (*ip >= n && !lx->c->opaque)
		set_opaque(lx->c, "%s without a command runs a shell",
			   wr->name);
	return 0;
}

static const struct lopt ionice_lopts[] = {
	{ "class", 'c', 1 }, { "classdata", 'n', 1 }, { "pid", 'p', 1 },
	{ "pgid", 'P', 1 }, { "ignore", 't', 0 }, { "uid", 'u', 1 },
	{ "version", 'V', 0 }, { "help", 'h', 0 }, { NULL, 0, 0 },
};
static const struct ospec ionice_spec = { "c:n:p:P:tu:Vh", ionice_lopts };

static int h_ionice(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &ionice_spec, &o) ==
	    OPT_OPAQUE)
		*ip = n;
	/* with -p, -P or -u the operands are process ids */
	if (opt_seen(&o, 'p') || opt_seen(&o, 'P') || opt_seen(&o, 'u'))
		*ip = n;
	return 0;
}

static const struct lopt chrt_lopts[] = {
	{ "all-tasks", 'a', 0 }, { "batch", 'b', 0 }, { "deadline", 'd', 0 },
	{ "fifo", 'f', 0 }, { "idle", 'i', 0 }, { "pid", 'p', 0 },
	{ "help", 'h', 0 }, { "max", 'm', 0 }, { "other", 'o', 0 },
	{ "rr", 'r', 0 }, { "reset-on-fork", 'R', 0 },
	{ "sched-runtime", 'T', 1 }, { "sched-period", 'P', 1 },
	{ "sched-deadline", 'D', 1 }, { "verbose", 'v', 0 },
	{ "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec chrt_spec = { "abdD:fiphmoP:rRT:vV", chrt_lopts };

static bool all_digits(const struct word *w)
{
	size_t k;

	if (w->flags & W_UNKNOWN || !w->len)
		return false;
	for (k = 0; k < w->len; k++)
		if (!isdigit((unsigned char)w->val[k]))
			return false;
	return true;
}

static int h_chrt(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &chrt_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if (opt_seen(&o, 'p') || opt_seen(&o, 'm')) {
		*ip = n;
		return 0;
	}
	/* the priority may be left out for policies without one */
	if (*ip < n && all_digits(&v[*ip]))
		(*ip)++;
	return 0;
}

static const struct lopt taskset_lopts[] = {
	{ "all-tasks", 'a', 0 }, { "pid", 'p', 0 }, { "cpu-list", 'c', 0 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec taskset_spec = { "apchV", taskset_lopts };

static int h_taskset(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &taskset_spec, &o) ==
	    OPT_OPAQUE || opt_seen(&o, 'p')) {
		*ip = n;
		return 0;
	}
	return skip_operands(lx, wr->name, v, n, ip, 1);
}

static const struct lopt nsenter_lopts[] = {
	{ "all", 'a', 0 }, { "target", 't', 1 }, { "mount", 'm', 2 },
	{ "uts", 'u', 2 }, { "ipc", 'i', 2 }, { "net", 'n', 2 },
	{ "pid", 'p', 2 }, { "cgroup", 'C', 2 }, { "user", 'U', 2 },
	{ "time", 'T', 2 }, { "setuid", 'S', 1 }, { "setgid", 'G', 1 },
	{ "preserve-credentials", '1', 0 }, { "keep-caps", '2', 0 },
	{ "user-parent", '3', 0 }, { "root", 'r', 2 }, { "wd", 'w', 2 },
	{ "wdns", 'W', 1 }, { "env", 'e', 0 }, { "no-fork", 'F', 0 },
	{ "join-cgroup", 'c', 0 }, { "follow-context", 'Z', 0 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec nsenter_spec = {
	"acehFVZt:m::u::i::n::p::C::U::T::S:G:r::w::W:", nsenter_lopts
};

static const struct lopt unshare_lopts[] = {
	{ "fork", 'f', 0 }, { "kill-child", '1', 2 }, { "mount", 'm', 2 },
	{ "uts", 'u', 2 }, { "ipc", 'i', 2 }, { "net", 'n', 2 },
	{ "pid", 'p', 2 }, { "user", 'U', 2 }, { "cgroup", 'C', 2 },
	{ "time", 'T', 2 }, { "mount-proc", '2', 2 },
	{ "mount-binfmt", '3', 2 }, { "map-root-user", 'r', 0 },
	{ "map-current-user", 'c', 0 }, { "map-user", '4', 1 },
	{ "map-users", '5', 1 }, { "map-group", '6', 1 },
	{ "map-groups", '7', 1 }, { "map-auto", '8', 0 },
	{ "propagation", '9', 1 }, { "setgroups", '!', 1 },
	{ "keep-caps", '@', 0 }, { "setuid", 'S', 1 }, { "setgid", 'G', 1 },
	{ "root", 'R', 1 }, { "wd", 'w', 1 }, { "monotonic", '#', 1 },
	{ "boottime", '$', 1 }, { "load-interp", 'l', 1 },
	{ "forward-signals", '%', 0 }, { "help", 'h', 0 },
	{ "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec unshare_spec = {
	"fhVmuinpCTUrR:w:S:G:cl:", unshare_lopts
};

static int h_ns(struct lx *lx, const struct wrapper *wr, struct word *v,
		size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, wr->data, &o) == OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	if (*ip >= n && !opt_seen(&o, 'h') && !opt_seen(&o, 'V'))
		set_opaque(lx->c, "%s without a command runs a shell",
			   wr->name);
	return 0;
}

static const struct lopt flock_lopts[] = {
	{ "shared", 's', 0 }, { "exclusive", 'x', 0 }, { "unlock", 'u', 0 },
	{ "nonblocking", 'n', 0 }, { "nb", 'n', 0 }, { "timeout", 'w', 1 },
	{ "wait", 'w', 1 }, { "conflict-exit-code", 'E', 1 },
	{ "close", 'o', 0 }, { "no-fork", 'F', 0 }, { "verbose", '1', 0 },
	{ "help", 'h', 0 }, { "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec flock_spec = { "sexnoFuw:E:hV", flock_lopts };

static int h_flock(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &flock_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	skip_operands(lx, wr->name, v, n, ip, 1);
	if (*ip < n && (word_is(&v[*ip], "-c") ||
			word_is(&v[*ip], "--command"))) {
		size_t k = *ip + 1;

		set_opaque(lx->c, "%s -c runs a shell command", wr->name);
		*ip = n;
		return k < n ? payload_word(lx, &v[k]) : 0;
	}
	return 0;
}

static const struct lopt runuser_lopts[] = {
	{ "command", 'c', 1 }, { "session-command", 'C', 1 },
	{ "fast", 'f', 0 }, { "group", 'g', 1 }, { "supp-group", 'G', 1 },
	{ "login", 'l', 0 }, { "preserve-environment", 'm', 0 },
	{ "pty", 'P', 0 }, { "shell", 's', 1 }, { "user", 'u', 1 },
	{ "whitelist-environment", 'w', 1 }, { "help", 'h', 0 },
	{ "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec runuser_spec = {
	"c:fg:G:lmpPs:u:hVw:", runuser_lopts
};

static int h_runuser(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	const struct optval *cv;
	struct opts o = { 0 };

	(*ip)++;
	if (parse_opts(lx, wr->name, v, n, ip, &runuser_spec, &o) ==
	    OPT_OPAQUE) {
		*ip = n;
		return 0;
	}
	cv = opt_last(&o, 'c');
	if (!cv)
		cv = opt_last(&o, 'C');
	if (cv) {
		set_opaque(lx->c, "%s -c runs a shell command", wr->name);
		*ip = n;
		return cv->known ? payload(lx, cv->val, cv->len, cv->w->off) :
				   0;
	}
	if (!opt_seen(&o, 'u') || *ip >= n)
		return opaque_rest(lx, n, ip, "%s runs a shell", wr->name);
	return 0;
}

static bool word_has(const struct word *w, const char *s)
{
	return !(w->flags & W_UNKNOWN) && memmem(w->val, w->len, s, strlen(s));
}

static int h_find(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	struct ctx *c = lx->c;
	size_t i = *ip + 1, e;
	int err;

	*ip = n;
	for (; i < n; i++) {
		if (v[i].flags & W_SPLITEXP) {
			set_opaque(c, "%s: an argument may expand to several "
				      "words", wr->name);
			return 0;
		}
	}
	for (i = *ip == n ? 1 : 1; i < n; i++) {
		if (!(word_is(&v[i], "-exec") || word_is(&v[i], "-execdir") ||
		      word_is(&v[i], "-ok") || word_is(&v[i], "-okdir")))
			continue;
		for (e = i + 1; e < n; e++)
			if (word_is(&v[e], ";") ||
			    (word_is(&v[e], "+") && word_is(&v[e - 1], "{}") &&
			     e > i + 2))
				break;
		if (e > i + 1) {
			if (word_has(&v[i + 1], "{}")) {
				set_opaque(c, "%s -exec runs the files it "
					      "finds", wr->name);
			} else {
				err = enter(c);
				if (err)
					return err;
				err = analyze_cmd(lx, v + i + 1, e - (i + 1));
				leave(c);
				if (err)
					return err;
			}
		}
		i = e;
	}
	return 0;
}

static int h_applet(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	(void)lx;
	(void)wr;
	(*ip)++;
	if (*ip < n && !(v[*ip].flags & W_UNKNOWN) && v[*ip].len >= 2 &&
	    v[*ip].val[0] == '-' && v[*ip].val[1] == '-')
		*ip = n;
	return 0;
}

static const struct ospec ssh_spec = {
	"1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy",
	no_lopts
};

static int h_ssh(struct lx *lx, const struct wrapper *wr, struct word *v,
		 size_t n, size_t *ip)
{
	struct opts o = { 0 };
	size_t i = *ip + 1;
	unsigned k;

	*ip = n;
	if (parse_opts(lx, wr->name, v, n, &i, &ssh_spec, &o) == OPT_OPAQUE)
		return 0;
	for (k = 0; k < o.n; k++) {
		const struct optval *ov = &o.v[k];

		if (ov->id != 'o')
			continue;
		if (!ov->known || strcasestr(ov->val, "command"))
			return opaque_rest(lx, n, ip, "%s -o may run a local "
						      "command", wr->name);
	}
	if (opt_seen(&o, 'F'))
		return opaque_rest(lx, n, ip, "%s -F reads a configuration "
					      "that may run commands",
				   wr->name);
	if (i + 1 < n) {
		set_opaque(lx->c, "%s runs a remote command", wr->name);
		return payload_join(lx, v + i + 1, n - i - 1);
	}
	return 0;
}

static int h_opaque(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	(void)v;
	return opaque_rest(lx, n, ip, "%s runs a command this lexer does not "
				      "follow", wr->name);
}

static int h_su(struct lx *lx, const struct wrapper *wr, struct word *v,
		size_t n, size_t *ip)
{
	size_t i;

	set_opaque(lx->c, "%s runs a shell", wr->name);
	for (i = *ip + 1; i < n; i++) {
		const struct word *w = &v[i];

		if ((word_is(w, "-c") || word_is(w, "--command")) &&
		    i + 1 < n) {
			*ip = n;
			return payload_word(lx, &v[i + 1]);
		}
		if (!(w->flags & W_UNKNOWN) && w->len > 10 &&
		    !memcmp(w->val, "--command=", 10)) {
			*ip = n;
			return payload(lx, w->val + 10, w->len - 10, w->off);
		}
	}
	*ip = n;
	return 0;
}

/* Shells: -c STRING runs code, no script file reads standard input. */
static int h_shell(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	static const char *const noarg[] = {
		"norc", "noprofile", "login", "posix", "restricted",
		"verbose", "debugger", "dump-strings", "dump-po-strings",
		"wordexp", "noediting", "pretty-print", "protected", NULL,
	};
	bool cmd = false, in = false, info = false;
	size_t i = *ip + 1;

	*ip = n;
	while (i < n) {
		const struct word *w = &v[i];
		const char *a = w->val;
		size_t k;

		if (w->flags & (W_SPLIT | W_UNKNOWN)) {
			set_opaque(lx->c, "%s: argument cannot be known",
				   wr->name);
			return 0;
		}
		if (word_is(w, "--") || word_is(w, "-")) {
			i++;
			break;
		}
		if (w->len > 2 && a[0] == '-' && a[1] == '-') {
			const char *const *q;

			if (word_is(w, "--version") || word_is(w, "--help")) {
				info = true;
			} else if (word_is(w, "--rcfile") ||
				   word_is(w, "--init-file")) {
				i++;
			} else {
				for (q = noarg; *q; q++)
					if (w->len - 2 == strlen(*q) &&
					    !memcmp(a + 2, *q, w->len - 2))
						break;
				if (!*q) {
					set_opaque(lx->c, "%s: unknown option",
						   wr->name);
					return 0;
				}
			}
			i++;
			continue;
		}
		if (w->len >= 2 && (a[0] == '-' || a[0] == '+')) {
			size_t args = 0;

			for (k = 1; k < w->len; k++) {
				if (a[k] == 'c')
					cmd = true;
				else if (a[k] == 's' || a[k] == 'i')
					in = true;
				else if (a[k] == 'o' || a[k] == 'O')
					args++;
			}
			i += 1 + args;
			continue;
		}
		break;
	}
	if (cmd) {
		set_opaque(lx->c, "%s -c runs a command string", wr->name);
		return i < n ? payload_word(lx, &v[i]) : 0;
	}
	if (in || (i >= n && !info))
		set_opaque(lx->c, "%s reads commands from standard input",
			   wr->name);
	return 0;
}

/* Shells with their own syntax: only a plain script file is known. */
static int h_xshell(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	size_t i = *ip + 1;

	*ip = n;
	if (i >= n || (v[i].flags & W_UNKNOWN) ||
	    (v[i].len && v[i].val[0] == '-'))
		set_opaque(lx->c, "%s may run code this lexer does not read",
			   wr->name);
	return 0;
}

/* Interpreters: inline code or code from standard input is opaque. */
struct interp {
	const char *code;	/* short options followed by inline code */
	const char *arg;	/* short options taking an argument */
	const char *opt;	/* optional argument: the rest of the word */
	const char *digits;	/* optional argument: digits only */
	const char *flag;	/* options without an argument */
	const char *in;		/* code from stdin, or interactive */
	const char *info;	/* print something and exit */
	const char *prog;	/* the argument names what to run (-m, -f) */
	const char *const *lcode;
	const char *const *larg;
	const char *const *lflag;	/* "x*" matches a prefix */
	const char *const *linfo;
};

static bool in_list(const char *const *l, const char *p, size_t n)
{
	for (; l && *l; l++) {
		size_t ln = strlen(*l);

		if (ln && (*l)[ln - 1] == '*') {
			if (n >= ln - 1 && !memcmp(*l, p, ln - 1))
				return true;
		} else if (ln == n && !memcmp(*l, p, n)) {
			return true;
		}
	}
	return false;
}

static bool has_ch(const char *set, int ch)
{
	return set && ch && strchr(set, ch);
}

static int h_interp(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	const struct interp *ip_ = wr->data;
	bool info = false, operand = false;
	size_t i = *ip + 1;

	*ip = n;
	while (i < n) {
		const struct word *w = &v[i];
		const char *a = w->val;
		size_t k;

		if (w->flags & (W_SPLIT | W_UNKNOWN)) {
			set_opaque(lx->c, "%s: argument cannot be known",
				   wr->name);
			return 0;
		}
		if (word_is(w, "--")) {
			operand = i + 1 < n;
			break;
		}
		if (word_is(w, "-"))
			break;
		if (w->len < 2 || a[0] != '-') {
			operand = true;
			break;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = memchr(name, '=', w->len - 2);
			size_t nl = eq ? (size_t)(eq - name) : w->len - 2;

			if (in_list(ip_->lcode, name, nl)) {
				set_opaque(lx->c, "%s runs inline code",
					   wr->name);
				return 0;
			}
			if (in_list(ip_->linfo, name, nl))
				info = true;
			else if (in_list(ip_->larg, name, nl))
				i += eq ? 0 : 1;
			else if (!eq && !in_list(ip_->lflag, name, nl)) {
				set_opaque(lx->c, "%s: unknown option",
					   wr->name);
				return 0;
			}
			i++;
			continue;
		}
		for (k = 1; k < w->len; k++) {
			int ch = (unsigned char)a[k];

			if (has_ch(ip_->code, ch)) {
				set_opaque(lx->c, "%s runs inline code",
					   wr->name);
				return 0;
			}
			if (has_ch(ip_->in, ch)) {
				set_opaque(lx->c, "%s reads code from "
						  "standard input", wr->name);
				return 0;
			}
			if (has_ch(ip_->prog, ch)) {
				operand = true;
				break;
			}
			if (has_ch(ip_->arg, ch)) {
				if (k + 1 == w->len)
					i++;
				break;
			}
			if (has_ch(ip_->opt, ch))
				break;
			if (has_ch(ip_->digits, ch)) {
				while (k + 1 < w->len &&
				       isxdigit((unsigned char)a[k + 1]))
					k++;
				continue;
			}
			if (has_ch(ip_->info, ch)) {
				info = true;
				continue;
			}
			if (!has_ch(ip_->flag, ch)) {
				set_opaque(lx->c, "%s: unknown option -%c",
					   wr->name, isprint(ch) ? ch : '?');
				return 0;
			}
		}
		if (operand)
			break;
		i++;
	}
	if (!operand && !info)
		set_opaque(lx->c, "%s reads code from standard input",
			   wr->name);
	return 0;
}

static const char *const py_linfo[] = {
	"help", "version", "help-env", "help-xoptions", "help-all", NULL,
};
static const char *const py_larg[] = { "check-hash-based-pycs", NULL };
static const struct interp python_ip = {
	.code = "c", .arg = "WX", .flag = "bBdEIOqsSuvxPR", .in = "i",
	.info = "hV", .prog = "m", .larg = py_larg, .linfo = py_linfo,
};

static const char *const info_linfo[] = { "help", "version", NULL };
static const struct interp perl_ip = {
	.code = "eEMm", .arg = "I", .opt = "ixFdDV", .digits = "l0C",
	.flag = "acnpsStTuUwWX", .info = "vh", .linfo = info_linfo,
};

static const char *const ruby_larg[] = {
	"encoding", "external-encoding", "internal-encoding", "dump", NULL,
};
static const char *const ruby_lflag[] = {
	"verbose", "debug", "disable-*", "enable-*", "jit*", "yjit*",
	"rjit*", NULL,
};
static const char *const ruby_linfo[] = {
	"help", "version", "copyright", NULL,
};
static const struct interp ruby_ip = {
	.code = "e", .arg = "rICE", .opt = "ixWTKF", .digits = "0",
	.flag = "acdlnpsSwyU", .info = "vh", .larg = ruby_larg,
	.lflag = ruby_lflag, .linfo = ruby_linfo,
};

static const char *const node_lcode[] = { "eval", "print", NULL };
static const char *const node_larg[] = {
	"require", "import", "loader", "experimental-loader", "input-type",
	"title", "env-file", "conditions", "inspect-port",
	"redirect-warnings", "openssl-config", "icu-data-dir", NULL,
};
static const char *const node_lflag[] = {
	"inspect*", "experimental-*", "no-*", "trace-*", "enable-source-maps",
	"watch*", "preserve-symlinks*", "pending-deprecation",
	"throw-deprecation", "abort-on-uncaught-exception", "expose-gc",
	"frozen-intrinsics", "jitless", "prof", "zero-fill-buffers",
	"check", "allow-*", "permission", NULL,
};
static const char *const node_linfo[] = {
	"help", "version", "v8-options", "test", NULL,
};
static const struct interp node_ip = {
	.code = "ep", .arg = "rC", .flag = "c", .in = "i", .info = "vh",
	.lcode = node_lcode, .larg = node_larg, .lflag = node_lflag,
	.linfo = node_linfo,
};

static const struct interp php_ip = {
	.code = "rBRE", .arg = "dcztb", .flag = "nqsewHC", .in = "a",
	.info = "vhiml", .prog = "fFS", .linfo = info_linfo,
};

static const struct interp lua_ip = {
	.code = "e", .arg = "ljO", .flag = "EWbd", .in = "i", .info = "v",
};

static const char *const julia_lcode[] = { "eval", "print", NULL };
static const char *const julia_larg[] = {
	"project", "load", "sysimage", "threads", "procs", "machine-file",
	"cpu-target", NULL,
};
static const char *const julia_lflag[] = {
	"quiet", "banner*", "color*", "startup-file*", "history-file*", NULL,
};
static const struct interp julia_ip = {
	.code = "eE", .arg = "pLJCtM", .opt = "Og", .flag = "q", .in = "i",
	.info = "hv", .lcode = julia_lcode, .larg = julia_larg,
	.lflag = julia_lflag, .linfo = info_linfo,
};

static const char *const any_lflag[] = { "*", NULL };
static const struct interp rscript_ip = {
	.code = "e", .lflag = any_lflag, .linfo = info_linfo,
};

static const struct interp osascript_ip = {
	.code = "e", .arg = "ls", .info = "h",
};

static const struct interp tcl_ip = { .flag = "", .info = "" };

static const struct interp expect_ip = {
	.code = "c", .prog = "f", .in = "i", .flag = "dDnNbv",
};

/* deno and bun take subcommands. */
static int h_jsrun(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	size_t i;

	*ip = n;
	if (n < 2)
		return opaque_rest(lx, n, ip, "%s reads code from standard "
					      "input", wr->name);
	for (i = 1; i < n; i++) {
		const struct word *w = &v[i];

		if (w->flags & (W_SPLIT | W_UNKNOWN) || word_is(w, "eval") ||
		    word_is(w, "repl") || word_is(w, "-e") ||
		    word_is(w, "-p") || word_is(w, "--eval") ||
		    word_is(w, "--print"))
			return opaque_rest(lx, n, ip, "%s may run inline code",
					   wr->name);
	}
	return 0;
}

/* awk: a program that can run commands. */
static bool awk_runs_code(const char *p, size_t n)
{
	size_t k;

	if (memmem(p, n, "system", 6) || memmem(p, n, "@load", 5))
		return true;
	for (k = 0; k < n; k++)
		if (p[k] == '|' && !(k + 1 < n && p[k + 1] == '|') &&
		    !(k && p[k - 1] == '|'))
			return true;
	return false;
}

static const struct lopt awk_lopts[] = {
	{ "field-separator", 'F', 1 }, { "assign", 'v', 1 },
	{ "file", 'f', 1 }, { "source", 'e', 1 }, { "exec", 'E', 1 },
	{ "include", 'i', 1 }, { "load", 'l', 1 },
	{ "characters-as-bytes", 'b', 0 }, { "traditional", 'c', 0 },
	{ "copyright", 'C', 0 }, { "dump-variables", 'd', 2 },
	{ "debug", 'D', 2 }, { "gen-pot", 'g', 0 }, { "help", 'h', 0 },
	{ "lint", 'L', 2 }, { "bignum", 'M', 0 },
	{ "non-decimal-data", 'n', 0 }, { "use-lc-numeric", 'N', 0 },
	{ "pretty-print", 'o', 2 }, { "optimize", 'O', 0 },
	{ "profile", 'p', 2 }, { "posix", 'P', 0 }, { "re-interval", 'r', 0 },
	{ "no-optimize", 's', 0 }, { "sandbox", 'S', 0 },
	{ "lint-old", 't', 0 }, { "version", 'V', 0 }, { "csv", 'k', 0 },
	{ "persist", 'I', 2 }, { NULL, 0, 0 },
};
static const struct ospec awk_spec = {
	"F:f:v:W:e:E:i:l:bcCd::D::ghkL::MnNo::Op::PrsStVY", awk_lopts
};

static void awk_check(struct lx *lx, const char *prog, const char *p,
		      size_t len, bool known)
{
	if (!known)
		set_opaque(lx->c, "%s program is not literal", prog);
	else if (awk_runs_code(p, len))
		set_opaque(lx->c, "%s program can run commands", prog);
}

static int h_awk(struct lx *lx, const struct wrapper *wr, struct word *v,
		 size_t n, size_t *ip)
{
	struct opts o = { 0 };
	bool have = false, sandbox;
	size_t i = *ip + 1;
	unsigned k;

	*ip = n;
	if (parse_opts(lx, wr->name, v, n, &i, &awk_spec, &o) == OPT_OPAQUE)
		return 0;
	sandbox = opt_seen(&o, 'S');
	for (k = 0; k < o.n; k++) {
		const struct optval *ov = &o.v[k];

		if (ov->id == 'W' && ov->known &&
		    memmem(ov->val, ov->len, "sandbox", 7))
			sandbox = true;
	}
	for (k = 0; k < o.n; k++) {
		const struct optval *ov = &o.v[k];

		if (ov->id == 'l') {
			set_opaque(lx->c, "%s loads an extension", wr->name);
			return 0;
		}
		if (ov->id == 'f' || ov->id == 'E' ||
		    (ov->id == 'W' && ov->known &&
		     memmem(ov->val, ov->len, "exec", 4))) {
			have = true;
		} else if (ov->id == 'e') {
			have = true;
			if (!sandbox)
				awk_check(lx, wr->name, ov->val, ov->len,
					  ov->known);
		}
	}
	if (!have && i < n && !sandbox)
		awk_check(lx, wr->name, v[i].val, v[i].len,
			  !(v[i].flags & W_UNKNOWN));
	return 0;
}

/* GNU sed: the e command and the e flag of s run commands. */
static size_t sed_skip_delim(const char *p, size_t n, size_t i, char d,
			     bool *ok)
{
	while (i < n && p[i] != d) {
		if (p[i] == '\\')
			i++;
		i++;
	}
	*ok = i < n;
	return i + 1;
}

static bool sed_runs_code(const char *p, size_t n)
{
	size_t i = 0;
	bool ok;
	char d;

	for (;;) {
		int a;

		while (i < n && (isspace((unsigned char)p[i]) || p[i] == ';'))
			i++;
		if (i >= n)
			return false;
		if (p[i] == '#') {
			while (i < n && p[i] != '\n')
				i++;
			continue;
		}
		for (a = 0; a < 2; a++) {
			if (isdigit((unsigned char)p[i])) {
				while (i < n && (isdigit((unsigned char)p[i]) ||
						 p[i] == '~'))
					i++;
			} else if (p[i] == '$') {
				i++;
			} else if (p[i] == '/' || p[i] == '\\') {
				if (p[i] == '\\') {
					if (++i >= n)
						return true;
				}
				d = p[i];
				i = sed_skip_delim(p, n, i + 1, d, &ok);
				if (!ok)
					return true;
				while (i < n && (p[i] == 'I' || p[i] == 'M'))
					i++;
			} else if (a == 1 && (p[i] == '+' || p[i] == '~')) {
				i++;
				while (i < n && isdigit((unsigned char)p[i]))
					i++;
			} else {
				break;
			}
			if (a == 0) {
				if (i < n && p[i] == ',') {
					i++;
					continue;
				}
				break;
			}
		}
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '!'))
			i++;
		if (i >= n)
			return false;
		switch (p[i++]) {
		case 'e':
			return true;
		case 's':
			if (i >= n || p[i] == '\n' || p[i] == '\\')
				return true;
			d = p[i];
			i = sed_skip_delim(p, n, i + 1, d, &ok);
			if (ok)
				i = sed_skip_delim(p, n, i, d, &ok);
			if (!ok)
				return true;
			while (i < n && p[i] != ';' && p[i] != '\n' &&
			       p[i] != '}' && p[i] != '#') {
				if (p[i] == 'e')
					return true;
				if (p[i] == 'w' || p[i] == 'W') {
					while (i < n && p[i] != '\n')
						i++;
					break;
				}
				i++;
			}
			break;
		case 'y':
			if (i >= n)
				return true;
			d = p[i];
			i = sed_skip_delim(p, n, i + 1, d, &ok);
			if (ok)
				i = sed_skip_delim(p, n, i, d, &ok);
			if (!ok)
				return true;
			break;
		case 'a':
		case 'i':
		case 'c':
			/* text to the end of the line, \-continued */
			while (i < n && p[i] != '\n') {
				if (p[i] == '\\')
					i++;
				i++;
			}
			break;
		case 'r':
		case 'R':
		case 'w':
		case 'W':
			while (i < n && p[i] != '\n')
				i++;
			break;
		case 'b':
		case 't':
		case 'T':
		case ':':
		case 'v':
			while (i < n && p[i] != '\n' && p[i] != ';')
				i++;
			break;
		case 'q':
		case 'Q':
		case 'l':
		case 'L':
			while (i < n && (p[i] == ' ' ||
					  isdigit((unsigned char)p[i])))
				i++;
			break;
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
		default:
			return true;
		}
	}
}

static const struct lopt sed_lopts[] = {
	{ "binary", 'b', 0 }, { "debug", 'D', 0 }, { "expression", 'e', 1 },
	{ "file", 'f', 1 }, { "follow-symlinks", 'L', 0 }, { "help", 'h', 0 },
	{ "in-place", 'i', 2 }, { "line-length", 'l', 1 },
	{ "null-data", 'z', 0 }, { "zero-terminated", 'z', 0 },
	{ "posix", 'p', 0 }, { "quiet", 'n', 0 }, { "silent", 'n', 0 },
	{ "regexp-extended", 'r', 0 }, { "sandbox", 'S', 0 },
	{ "separate", 's', 0 }, { "unbuffered", 'u', 0 },
	{ "version", 'V', 0 }, { NULL, 0, 0 },
};
static const struct ospec sed_spec = { "bnrsuzEe:f:i::l:", sed_lopts };

static void sed_check(struct lx *lx, const char *prog, const char *p,
		      size_t len, bool known)
{
	if (!known)
		set_opaque(lx->c, "%s script is not literal", prog);
	else if (sed_runs_code(p, len))
		set_opaque(lx->c, "%s script can run commands", prog);
}

static int h_sed(struct lx *lx, const struct wrapper *wr, struct word *v,
		 size_t n, size_t *ip)
{
	const struct word *script = NULL;
	struct opts o = { 0 };
	size_t i = *ip + 1;
	bool have = false;
	unsigned k;

	*ip = n;
	/* GNU sed takes options after operands too */
	while (i < n) {
		size_t before = i;
		int r;

		if (v[i].flags & W_SPLITEXP) {
			set_opaque(lx->c, "%s: an argument may expand to "
					  "several words", wr->name);
			return 0;
		}
		if (v[i].flags & W_UNKNOWN &&
		    !(v[i].litpre && v[i].val[0] != '-')) {
			if (!script)
				script = &v[i];
			i++;
			continue;
		}
		r = opt_step(lx, wr->name, v, n, &i, &sed_spec, &o);
		if (r == OPT_OPAQUE)
			return 0;
		if (r == OPT_END) {
			if (i > before)
				break;
			if (!script)
				script = &v[i];
			i++;
		}
	}
	if (i < n && !script)
		script = &v[i];
	if (opt_seen(&o, 'S'))
		return 0;
	for (k = 0; k < o.n; k++) {
		if (o.v[k].id == 'e') {
			have = true;
			sed_check(lx, wr->name, o.v[k].val, o.v[k].len,
				  o.v[k].known);
		} else if (o.v[k].id == 'f') {
			have = true;
		}
	}
	if (!have && script)
		sed_check(lx, wr->name, script->val, script->len,
			  !(script->flags & W_UNKNOWN));
	return 0;
}

/* Builtins that run code given as data. */
static int h_eval(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	size_t i = *ip + 1;

	set_opaque(lx->c, "%s runs its arguments as shell code", wr->name);
	*ip = n;
	if (i < n && word_is(&v[i], "--"))
		i++;
	return payload_join(lx, v + i, n - i);
}

static int h_source(struct lx *lx, const struct wrapper *wr, struct word *v,
		    size_t n, size_t *ip)
{
	(void)v;
	return opaque_rest(lx, n, ip, "%s runs a script in this shell",
			   wr->name);
}

static int h_alias(struct lx *lx, const struct wrapper *wr, struct word *v,
		   size_t n, size_t *ip)
{
	size_t i;

	for (i = *ip + 1; i < n; i++)
		if ((v[i].flags & W_UNKNOWN) ||
		    memchr(v[i].val, '=', v[i].len))
			return opaque_rest(lx, n, ip, "%s defines an alias",
					   wr->name);
	*ip = n;
	return 0;
}

static int h_trap(struct lx *lx, const struct wrapper *wr, struct word *v,
		  size_t n, size_t *ip)
{
	size_t i = *ip + 1;

	*ip = n;
	while (i < n && !(v[i].flags & W_UNKNOWN) &&
	       (word_is(&v[i], "-l") || word_is(&v[i], "-p") ||
		word_is(&v[i], "-P") || word_is(&v[i], "-lp") ||
		word_is(&v[i], "-pl")))
		i++;
	if (i < n && word_is(&v[i], "--"))
		i++;
	/* one operand is a signal to reset; - and '' reset or ignore */
	if (n - i < 2 || word_is(&v[i], "-") ||
	    (!(v[i].flags & W_UNKNOWN) && !v[i].len))
		return 0;
	set_opaque(lx->c, "%s runs its argument as shell code", wr->name);
	return payload_word(lx, &v[i]);
}

/* Builtins whose given option letter makes them run code. */
static int h_optletter(struct lx *lx, const struct wrapper *wr,
		       struct word *v, size_t n, size_t *ip)
{
	const char *letters = wr->data;
	size_t i, k;

	for (i = *ip + 1; i < n; i++) {
		const struct word *w = &v[i];

		if (w->flags & W_UNKNOWN) {
			if (w->litpre && w->val[0] != '-')
				continue;
			return opaque_rest(lx, n, ip, "%s: an option cannot "
						      "be known", wr->name);
		}
		if (w->len < 2 || w->val[0] != '-')
			continue;
		for (k = 1; k < w->len; k++)
			if (strchr(letters, w->val[k]))
				return opaque_rest(lx, n, ip,
						   "%s runs code given as an "
						   "option", wr->name);
	}
	*ip = n;
	return 0;
}

static int h_set(struct lx *lx, const struct wrapper *wr, struct word *v,
		 size_t n, size_t *ip)
{
	size_t i;

	for (i = *ip + 1; i < n; i++) {
		const struct word *w = &v[i];

		if (word_is(w, "--") || word_is(w, "-"))
			break;
		if (w->flags & W_UNKNOWN)
			return opaque_rest(lx, n, ip, "%s: an option cannot "
						      "be known", wr->name);
		if ((w->len >= 2 && w->val[0] == '-' &&
		     memchr(w->val, 'k', w->len)) ||
		    word_is(w, "keyword"))
			return opaque_rest(lx, n, ip, "%s -k changes which "
						      "words are arguments",
					   wr->name);
	}
	*ip = n;
	return 0;
}

/* declare, export, ... and builtins that evaluate their arguments. */
static int h_declare(struct lx *lx, const struct wrapper *wr, struct word *v,
		     size_t n, size_t *ip)
{
	size_t i;

	(void)wr;
	for (i = *ip + 1; i < n; i++) {
		const struct word *w = &v[i];

		if (w->flags & W_ASSIGN)
			check_assignment(lx, w->val, w->name_len, w);
		else
			check_codeq(lx, w);
	}
	*ip = n;
	return 0;
}

static int h_evalargs(struct lx *lx, const struct wrapper *wr,
		      struct word *v, size_t n, size_t *ip)
{
	const char *needs = wr->data;
	size_t i;
	bool on = !needs;

	for (i = *ip + 1; i < n && !on; i++)
		if (word_is(&v[i], needs))
			on = true;
	for (i = *ip + 1; on && i < n; i++)
		check_codeq(lx, &v[i]);
	*ip = n;
	return 0;
}

static const char *const shells[] = {
	"sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh",
	"lksh", "pdksh", "oksh", "loksh", "yash", "posh", "hush", "osh",
	"bosh", NULL,
};

static const char *const xshells[] = {
	"fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh",
	"powershell", "rc", "es", NULL,
};

/* Known to run commands in ways not followed here. */
static const char *const opaque_progs[] = {
	"watch", "parallel", "script", "pkexec", "setpriv", "prlimit",
	"systemd-run", "run0", "firejail", "bwrap", "proot", "fakeroot",
	"fakechroot", "faketime", "valgrind", "gdb", "lldb", "perf",
	"numactl", "cgexec", "sshpass", "daemonize", "start-stop-daemon",
	"unbuffer", "rlwrap", "torsocks", "proxychains", "proxychains4",
	"tmux", "screen", "dtach", "at", "batch", "sg", "newgrp",
	"catchsegv", "chpst", "xvfb-run", "dbus-run-session", "dbus-launch",
	"ssh-agent", "capsh", "setarch", "linux32", "linux64", "chronic",
	"ifne", "sem", "tsp", "nq", "sudoedit", "pdsh", "pssh", "mpirun",
	"srun", "R", "crontab", NULL,
};

static const struct wrapper wrappers[] = {
	{ "env", h_env, NULL, 0 },
	{ "sudo", h_sudo, NULL, 0 },
	{ "doas", h_doas, NULL, 0 },
	{ "nice", h_nice, NULL, 0 },
	{ "nohup", h_nohup, NULL, 0 },
	{ "timeout", h_timeout, NULL, 0 },
	{ "time", h_opts, &time_spec, 0 },
	{ "stdbuf", h_opts, &stdbuf_spec, 0 },
	{ "setsid", h_opts, &setsid_spec, 0 },
	{ "xargs", h_xargs, NULL, 0 },
	{ "exec", h_opts, &exec_spec, WR_BUILTIN },
	{ "command", h_command, NULL, WR_BUILTIN },
	{ "builtin", h_builtin, NULL, WR_BUILTIN },
	{ "chroot", h_chroot, NULL, 0 },
	{ "ionice", h_ionice, NULL, 0 },
	{ "chrt", h_chrt, NULL, 0 },
	{ "taskset", h_taskset, NULL, 0 },
	{ "nsenter", h_ns, &nsenter_spec, 0 },
	{ "unshare", h_ns, &unshare_spec, 0 },
	{ "flock", h_flock, NULL, 0 },
	{ "runuser", h_runuser, NULL, 0 },
	{ "su", h_su, NULL, 0 },
	{ "find", h_find, NULL, 0 },
	{ "busybox", h_applet, NULL, 0 },
	{ "toybox", h_applet, NULL, 0 },
	{ "strace", h_trace, &strace_spec, 0 },
	{ "ltrace", h_trace, &ltrace_spec, 0 },
	{ "ssh", h_ssh, NULL, 0 },
	{ "python", h_interp, &python_ip, WR_VERSIONED },
	{ "pypy", h_interp, &python_ip, WR_VERSIONED },
	{ "perl", h_interp, &perl_ip, WR_VERSIONED },
	{ "ruby", h_interp, &ruby_ip, WR_VERSIONED },
	{ "node", h_interp, &node_ip, WR_VERSIONED },
	{ "nodejs", h_interp, &node_ip, WR_VERSIONED },
	{ "php", h_interp, &php_ip, WR_VERSIONED },
	{ "lua", h_interp, &lua_ip, WR_VERSIONED },
	{ "luajit", h_interp, &lua_ip, WR_VERSIONED },
	{ "julia", h_interp, &julia_ip, WR_VERSIONED },
	{ "Rscript", h_interp, &rscript_ip, 0 },
	{ "osascript", h_interp, &osascript_ip, 0 },
	{ "tclsh", h_interp, &tcl_ip, WR_VERSIONED },
	{ "wish", h_interp, &tcl_ip, WR_VERSIONED },
	{ "expect", h_interp, &expect_ip, 0 },
	{ "deno", h_jsrun, NULL, 0 },
	{ "bun", h_jsrun, NULL, 0 },
	{ "awk", h_awk, NULL, 0 },
	{ "gawk", h_awk, NULL, 0 },
	{ "mawk", h_awk, NULL, 0 },
	{ "nawk", h_awk, NULL, 0 },
	{ "sed", h_sed, NULL, 0 },
	{ "gsed", h_sed, NULL, 0 },
	{ "eval", h_eval, NULL, WR_BUILTIN },
	{ "source", h_source, NULL, WR_BUILTIN },
	{ ".", h_source, NULL, WR_BUILTIN },
	{ "alias", h_alias, NULL, WR_BUILTIN },
	{ "trap", h_trap, NULL, WR_BUILTIN },
	{ "hash", h_optletter, "p", WR_BUILTIN },
	{ "enable", h_optletter, "f", WR_BUILTIN },
	{ "mapfile", h_optletter, "C", WR_BUILTIN },
	{ "readarray", h_optletter, "C", WR_BUILTIN },
	{ "compgen", h_optletter, "CF", WR_BUILTIN },
	{ "complete", h_optletter, "CF", WR_BUILTIN },
	{ "bind", h_optletter, "x", WR_BUILTIN },
	{ "jobs", h_optletter, "x", WR_BUILTIN },
	{ "fc", h_source, NULL, WR_BUILTIN },
	{ "set", h_set, NULL, WR_BUILTIN },
	{ "declare", h_declare, NULL, WR_BUILTIN },
	{ "typeset", h_declare, NULL, WR_BUILTIN },
	{ "local", h_declare, NULL, WR_BUILTIN },
	{ "export", h_declare, NULL, WR_BUILTIN },
	{ "readonly", h_declare, NULL, WR_BUILTIN },
	{ "let", h_evalargs, NULL, WR_BUILTIN },
	{ "unset", h_evalargs, NULL, WR_BUILTIN },
	{ "read", h_evalargs, NULL, WR_BUILTIN },
	{ "wait", h_evalargs, NULL, WR_BUILTIN },
	{ "getopts", h_evalargs, NULL, WR_BUILTIN },
	{ "printf", h_evalargs, "-v", WR_BUILTIN },
	{ "test", h_evalargs, "-v", WR_BUILTIN },
	{ "[", h_evalargs, "-v", WR_BUILTIN },
};

static const struct wrapper shell_wr = { NULL, h_shell, NULL, 0 };
static const struct wrapper xshell_wr = { NULL, h_xshell, NULL, 0 };
static const struct wrapper opaque_wr = { NULL, h_opaque, NULL, 0 };

static bool name_in(const char *const *l, const char *p, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && !memcmp(*l, p, n))
			return true;
	return false;
}

/* The handler for a program name; *tmp receives name-only wrappers. */
static const struct wrapper *find_wrapper(const char *p, size_t n,
					  bool builtin_ok, struct wrapper *tmp)
{
	size_t i, vn = n;

	for (i = 0; i < CW_ARRAY_SIZE(wrappers); i++) {
		const struct wrapper *w = &wrappers[i];

		if ((w->flags & WR_BUILTIN) && !builtin_ok)
			continue;
		if (strlen(w->name) == n && !memcmp(w->name, p, n))
			return w;
	}
	if (name_in(shells, p, n))
		*tmp = shell_wr;
	else if (name_in(xshells, p, n))
		*tmp = xshell_wr;
	else if (name_in(opaque_progs, p, n))
		*tmp = opaque_wr;
	else
		tmp = NULL;
	if (tmp)
		return tmp;
	/* python3.12, perl5.36, lua5.4 ... */
	while (vn && (isdigit((unsigned char)p[vn - 1]) || p[vn - 1] == '.'))
		vn--;
	if (vn == n || !vn)
		return NULL;
	for (i = 0; i < CW_ARRAY_SIZE(wrappers); i++) {
		const struct wrapper *w = &wrappers[i];

		if ((w->flags & WR_VERSIONED) && strlen(w->name) == vn &&
		    !memcmp(w->name, p, vn))
			return w;
	}
	return NULL;
}

/* The program a command word names: 1 with *name set, 0 if none. */
static int program_word(struct lx *lx, const struct word *w,
			const char **name, size_t *len)
{
	struct ctx *c = lx->c;
	const char *slash;

	if (w->flags & W_EXPAND) {
		set_opaque(c, "command word contains an expansion");
		return 0;
	}
	if (w->flags & W_GLOB) {
		set_opaque(c, "command word contains a glob pattern");
		return 0;
	}
	if (w->flags & W_BRACE) {
		set_opaque(c, "command word contains a brace expansion");
		return 0;
	}
	if (w->flags & W_UNDEC) {
		set_opaque(c, "command word uses quoting whose value is not "
			      "known");
		return 0;
	}
	slash = memrchr(w->val, '/', w->len);
	if ((w->flags & W_TILDE) && !slash) {
		set_opaque(c, "command word is a tilde expansion");
		return 0;
	}
	*name = slash ? slash + 1 : w->val;
	*len = w->len - (size_t)(*name - w->val);
	return *len ? 1 : 0;
}

static int analyze_cmd(struct lx *lx, struct word *v, size_t n)
{
	size_t i = 0;
	int err;

	while (i < n) {
		const struct word *w = &v[i];
		const struct wrapper *wr;
		struct wrapper tmp;
		const char *name;
		size_t len;
		char buf[40];

		err = program_word(lx, w, &name, &len);
		if (err <= 0)
			return err;
		err = add_program(lx->c, name, len, w->off);
		if (err)
			return err;
		wr = find_wrapper(name, len, !memchr(w->val, '/', w->len),
				  &tmp);
		if (!wr)
			return 0;
		if (wr == &tmp) {
			snprintf(buf, sizeof(buf), "%.*s",
				 (int)(len > 39 ? 39 : len), name);
			tmp.name = buf;
		}
		err = wr->fn(lx, wr, v, n, &i);
		if (err)
			return err;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Entry points                                                            */

static int prog_cmp(const void *a, const void *b)
{
	const struct prog *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void ctx_free(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->nprogs; i++)
		free(c->progs[i].name);
	free(c->progs);
	free(c->progset.slots);
	free(c->funcset.slots);
	while (c->chunks) {
		struct chunk *k = c->chunks;

		c->chunks = k->next;
		free(k);
	}
	for (i = 0; i < CW_ARRAY_SIZE(c->scratch); i++)
		cw_buf_free(&c->scratch[i]);
	free(c);
}

int cw_shlex_analyze(const char *cmd, size_t len, struct cw_shlex *out)
{
	struct ctx *c = NULL;
	struct lx lx;
	const char *nul;
	size_t i;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!cmd)
		len = 0;
	if (len > CW_SHLEX_MAX_INPUT) {
		out->opaque = true;
		snprintf(out->why, sizeof(out->why), "input too long");
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->budget = 8 * len + 65536;
	nul = len ? memchr(cmd, '\0', len) : NULL;
	if (nul) {
		/* bash would see the text up to the NUL only */
		set_opaque(c, "NUL byte in command");
		len = (size_t)(nul - cmd);
	}
	memset(&lx, 0, sizeof(lx));
	lx.c = c;
	lx.s = cmd ? cmd : "";
	lx.len = len;
	lx.span = len;
	err = parse_list(&lx);
	if (!err && lx.have && lx.tok.kind != TK_EOF)
		err = syntax(c, lx.tok.kind == TK_RPAR ? "unexpected )" :
							 "unexpected token");
	if (err == E_SYNTAX || err == E_STOP)
		err = 0;
	if (err)
		goto fail;
	for (i = 0; i < c->nprogs && !c->opaque; i++)
		if (sset_find(&c->funcset, c->progs[i].name,
			      strlen(c->progs[i].name)))
			set_opaque(c, "calls a function defined in the "
				      "command: %.40s", c->progs[i].name);
	if (c->nprogs) {
		out->programs = malloc(c->nprogs * sizeof(*out->programs));
		if (!out->programs) {
			err = -ENOMEM;
			goto fail;
		}
		qsort(c->progs, c->nprogs, sizeof(*c->progs), prog_cmp);
		for (i = 0; i < c->nprogs; i++) {
			out->programs[i] = c->progs[i].name;
			c->progs[i].name = NULL;
		}
		out->nprograms = c->nprogs;
	}
	out->opaque = c->opaque;
	if (c->opaque)
		snprintf(out->why, sizeof(out->why), "%s", c->why);
	ctx_free(c);
	return 0;
fail:
	ctx_free(c);
	memset(out, 0, sizeof(*out));
	return err;
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
