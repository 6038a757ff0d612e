/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the shell lexer (userspace/policy/shlex*.c): its state, words and
 * tokens, and the functions its files share. The lexer is split as
 *   shlex.c           the state, the program list, variables, the interface
 *   shlex_words.c     words, tokens, here-documents
 *   shlex_expand.c    quoting and substitutions ($..., ${...}, `...`,
 *                     $'...', "..."), arithmetic
 *   shlex_grammar.c   lists, pipelines, compound and simple commands
 *   shlex_programs.c  what programs do with their arguments: option
 *                     parsing, wrappers, code-running builtins, the table
 *   shlex_interp.c    shells, interpreters and tools that run code text
 * Not for use outside userspace/policy/.
 */
#ifndef CW_POLICY_SHLEX_INT_H
#define CW_POLICY_SHLEX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

static inline int at(const struct src *s, size_t i)
{
	return i < s->len ? (unsigned char)s->s[i] : -1;
}

static inline bool is_name0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool is_name(int c)
{
	return is_name0(c) || (c >= '0' && c <= '9');
}

static inline bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_blank(int c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_ident(const char *p, size_t n)
{
	size_t i;

	if (!n || !is_name0((unsigned char)p[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!is_name((unsigned char)p[i]))
			return false;
	return true;
}

static inline const char *wstr(const struct word *w)
{
	return w->v.data ? w->v.data : "";
}

static inline bool wis(const struct word *w, const char *lit)
{
	return !(w->fl & (W_QUOTED | W_DYN)) && !strcmp(wstr(w), lit);
}

/* c is one of the option letters in set (NULL: none). */
static inline bool has(const char *set, int c)
{
	return set && c > 0 && strchr(set, c);
}

/* ---- shlex.c: state, programs, variables ---- */

/* Marks the result opaque; the first reason is kept. */
void shlex_opaque(struct lx *lx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A bound was hit: opaque, and the analysis stops. */
void shlex_bound(struct lx *lx, const char *why);
/* One nesting level deeper; false (the analysis stops) past the bound. */
bool shlex_enter(struct lx *lx);
void shlex_leave(struct lx *lx);
void shlex_set_add(struct lx *lx, struct strset *st, const char *p,
		   size_t n);
/* Lists a program by its basename, once. */
void shlex_add_prog(struct lx *lx, const char *p, size_t n);
/* Assigning this variable makes bash or common tools run code from it. */
bool shlex_code_var(const char *p, size_t n);
/* A variable is bound: safe when only to an integer. */
void shlex_bind_name(struct lx *lx, const char *p, size_t n, bool safe);
/* A value bash can only read as a plain integer. */
bool shlex_int_text(const char *p);

/* ---- shlex_words.c: words, tokens, here-documents ---- */

void shlex_wput(struct lx *lx, struct word *w, const void *p, size_t n);
void shlex_wputc(struct lx *lx, struct word *w, char c);
void shlex_tok_free(struct tok *t);
void shlex_push_back(struct src *s, struct tok *t);
void shlex_src_done(struct src *s);
void shlex_level_free(struct level *l);
/* Records a here-document; its body is read at the next newline. */
void shlex_hd_add(struct lx *lx, const struct word *w, bool strip);
/* The next token; mode is M_* (how a word is read). */
void shlex_next_tok(struct lx *lx, struct src *s, struct tok *t,
		    unsigned mode);

/* ---- shlex_expand.c: quoting, substitutions, arithmetic ---- */

/* Offset of the ')' closing `((`/`$((` whose text starts at p, or
 * SIZE_MAX when bash would read nested parentheses instead. */
size_t shlex_arith_end(struct lx *lx, const struct src *s, size_t p);
/* $( ... ), <( ... ), >( ... ) from s->pos to the closing ')'. */
void shlex_parse_nested(struct lx *lx, struct src *s);
/* Text parsed as a separate source (backquotes, rsync -e). */
void shlex_parse_text(struct lx *lx, const char *p, size_t n);
/* Text read as arithmetic, never parsed as commands. */
void shlex_arith_text(struct lx *lx, const char *p, size_t n);
void shlex_read_bq(struct lx *lx, struct src *s, struct word *w, bool dq);
void shlex_read_sub(struct lx *lx, struct src *s, struct word *w);
void shlex_read_dollar(struct lx *lx, struct src *s, struct word *w,
		       bool dq);
void shlex_read_dq(struct lx *lx, struct src *s, struct word *w,
		   bool heredoc);
void shlex_close_dparen(struct lx *lx, struct src *s);
void shlex_scan_arith(struct lx *lx, struct src *s, int closer, bool parse);

/* ---- shlex_grammar.c: commands ---- */

/* Commands up to a terminator, which is left unread. */
void shlex_parse_list(struct lx *lx, struct src *s);
/* A whole source, to its end. */
void shlex_parse_top(struct lx *lx, struct src *s);
/* A word naming a variable (read NAME, printf -v NAME ...). */
void shlex_name_arg(struct lx *lx, const struct word *w, bool bind);
/* NAME=VALUE before a command, or alone. */
void shlex_assign_word(struct lx *lx, const struct word *w);

/* ---- shlex_programs.c and shlex_interp.c: programs ---- */

/* The programs of one simple command, w[i..n): each word that is run. */
void shlex_run_argv(struct lx *lx, struct word *w, size_t n, size_t i);
/* An option word we cannot read. */
bool shlex_unknown_option(const struct word *w);

/* Handlers of the program table (shlex_programs.c) in shlex_interp.c: each
 * takes the command's words, the index of the program and its basename,
 * and returns the index of the word it runs next (n: none). */
#define SHLEX_HANDLER(name)                                                 \
	size_t name(struct lx *lx, struct word *w, size_t n, size_t i,      \
		    const char *prog, const void *arg)
SHLEX_HANDLER(shlex_h_shell);
SHLEX_HANDLER(shlex_h_interp);
SHLEX_HANDLER(shlex_h_awk);
SHLEX_HANDLER(shlex_h_sed);
SHLEX_HANDLER(shlex_h_vi);
SHLEX_HANDLER(shlex_h_tar);
SHLEX_HANDLER(shlex_h_rsync);
SHLEX_HANDLER(shlex_h_git);

/* The options of an interpreter, the arg of shlex_h_interp. */
struct interp;
extern const struct interp shlex_python_i, shlex_perl_i, shlex_ruby_i,
	shlex_node_i, shlex_php_i, shlex_lua_i, shlex_rscript_i,
	shlex_expect_i, shlex_tcl_i;

#endif
