// SPDX-License-Identifier: Apache-2.0
/*
 * The shell lexer's grammar: lists, pipelines, if/while/until/for/select/
 * case, [[ ]], ( ), { }, function definitions, coproc and simple commands
 * (assignments, redirections, words), whose argument vector goes to
 * shlex_run_argv (shlex_programs.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "policy/shlex_int.h"

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
		shlex_next_tok(lx, s, t, mode);
		if (t->t != T_NL)
			return;
		shlex_tok_free(t);
	}
}

static bool expect_kw(struct lx *lx, struct src *s, const char *kw)
{
	struct tok t;

	shlex_next_tok(lx, s, &t, M_CMD);
	if (t.t == T_WORD && wis(&t.w, kw)) {
		shlex_tok_free(&t);
		return true;
	}
	shlex_opaque(lx, "syntax error: expected %s before %.32s", kw,
		     tname(&t));
	shlex_push_back(s, &t);
	return false;
}

static bool expect_rp(struct lx *lx, struct src *s, const char *what)
{
	struct tok t;

	shlex_next_tok(lx, s, &t, 0);
	if (t.t == T_RP) {
		shlex_tok_free(&t);
		return true;
	}
	shlex_opaque(lx, "syntax error: unterminated %s", what);
	shlex_push_back(s, &t);
	return false;
}

static void do_redir(struct lx *lx, struct src *s, const struct tok *op)
{
	struct tok t;

	shlex_next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		shlex_opaque(lx, "syntax error: redirection without a target");
		shlex_push_back(s, &t);
		return;
	}
	if (op->r != R_OTHER)
		shlex_hd_add(lx, &t.w, op->r == R_HEREDOC_STRIP);
	shlex_tok_free(&t);
}

static void redirs_after(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		shlex_next_tok(lx, s, &t, 0);
		if (t.t != T_REDIR) {
			shlex_push_back(s, &t);
			return;
		}
		do_redir(lx, s, &t);
		shlex_tok_free(&t);
	}
}

/* A word naming a variable (read NAME, printf -v NAME, [[ -v NAME ]] ...). */
void shlex_name_arg(struct lx *lx, const struct word *w, bool bind)
{
	const char *p = wstr(w), *e;
	size_t n = strcspn(p, "[");

	if (w->fl & W_DYN) {
		/* bash evaluates a subscript in it: a[$(cmd)] */
		shlex_opaque(lx, "variable name from an expansion");
		return;
	}
	if (p[n] == '[') {
		e = strrchr(p + n, ']');
		shlex_arith_text(lx, p + n + 1,
				 e ? (size_t)(e - p - n - 1) : strlen(p + n + 1));
	}
	if (bind && n)
		shlex_bind_name(lx, p, n, false);
}

/* NAME=VALUE before a command, or alone. */
void shlex_assign_word(struct lx *lx, const struct word *w)
{
	const char *p = wstr(w);
	size_t n = 0;

	while (is_name((unsigned char)p[n]))
		n++;
	shlex_bind_name(lx, p, n,
			!(w->fl & (W_DYN | W_ARRAY)) && p[n] != '[' &&
			shlex_int_text(p + w->eq + 1));
}

static void parse_pipeline(struct lx *lx, struct src *s);
static void parse_simple(struct lx *lx, struct src *s, struct tok *first);
static void parse_command(struct lx *lx, struct src *s);

void shlex_parse_top(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		shlex_parse_list(lx, s);
		shlex_next_tok(lx, s, &t, 0);
		if (t.t == T_EOF)
			break;
		shlex_opaque(lx, "syntax error near %.32s", tname(&t));
		shlex_tok_free(&t);
	}
	shlex_tok_free(&t);
	if (s->lost)
		shlex_opaque(lx, "internal error: token lost");
}

/* Commands up to a terminator, which is left unread. */
void shlex_parse_list(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		shlex_next_tok(lx, s, &t, M_CMD);
		if (t.t == T_NL) {
			shlex_tok_free(&t);
			continue;
		}
		if (is_term(&t)) {
			shlex_push_back(s, &t);
			return;
		}
		if (!starts_command(&t)) {
			shlex_opaque(lx, "syntax error near %.32s", tname(&t));
			shlex_tok_free(&t);
			continue;
		}
		shlex_push_back(s, &t);
		parse_pipeline(lx, s);
		shlex_next_tok(lx, s, &t, 0);
		switch (t.t) {
		case T_SEMI:
		case T_AMP:
		case T_NL:
			shlex_tok_free(&t);
			continue;
		case T_AND:
		case T_OR:
			shlex_tok_free(&t);
			skip_nl(lx, s, &t, M_CMD);
			if (!starts_command(&t))
				shlex_opaque(lx, "syntax error near %.32s",
					     tname(&t));
			shlex_push_back(s, &t);
			continue;
		default:
			if (is_term(&t)) {
				shlex_push_back(s, &t);
				return;
			}
			shlex_opaque(lx, "syntax error near %.32s", tname(&t));
			shlex_tok_free(&t);
			continue;
		}
	}
}

static void parse_pipeline(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		shlex_next_tok(lx, s, &t, M_CMD);
		if (t.t == T_WORD && wis(&t.w, "!")) {
			shlex_tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "time")) {
			shlex_tok_free(&t);
			shlex_add_prog(lx, "time", 4);
			shlex_next_tok(lx, s, &t, M_CMD);
			if (t.t == T_WORD && wis(&t.w, "-p"))
				shlex_tok_free(&t);
			else
				shlex_push_back(s, &t);
			continue;
		}
		break;
	}
	for (;;) {
		if (!starts_command(&t)) {
			shlex_push_back(s, &t);
			return;
		}
		shlex_push_back(s, &t);
		parse_command(lx, s);
		shlex_next_tok(lx, s, &t, 0);
		if (t.t != T_PIPE && t.t != T_PIPEAMP) {
			shlex_push_back(s, &t);
			return;
		}
		shlex_tok_free(&t);
		skip_nl(lx, s, &t, M_CMD);
		if (!starts_command(&t))
			shlex_opaque(lx, "syntax error near %.32s", tname(&t));
	}
}

static void parse_if(struct lx *lx, struct src *s)
{
	struct tok t;

	for (;;) {
		shlex_parse_list(lx, s);
		if (!expect_kw(lx, s, "then"))
			return;
		shlex_parse_list(lx, s);
		shlex_next_tok(lx, s, &t, M_CMD);
		if (t.t == T_WORD && wis(&t.w, "elif")) {
			shlex_tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "else")) {
			shlex_tok_free(&t);
			shlex_parse_list(lx, s);
			expect_kw(lx, s, "fi");
			return;
		}
		if (t.t == T_WORD && wis(&t.w, "fi")) {
			shlex_tok_free(&t);
			return;
		}
		shlex_opaque(lx, "syntax error: unterminated if");
		shlex_push_back(s, &t);
		return;
	}
}

static void parse_loop_body(struct lx *lx, struct src *s)
{
	struct tok t;

	skip_nl(lx, s, &t, M_CMD);
	if (t.t == T_WORD && wis(&t.w, "do")) {
		shlex_tok_free(&t);
		shlex_parse_list(lx, s);
		expect_kw(lx, s, "done");
	} else if (t.t == T_WORD && wis(&t.w, "{")) {
		shlex_tok_free(&t);
		shlex_parse_list(lx, s);
		expect_kw(lx, s, "}");
	} else {
		shlex_opaque(lx, "syntax error: expected do before %.32s",
			     tname(&t));
		shlex_push_back(s, &t);
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
		shlex_scan_arith(lx, s, ')', true);
		shlex_close_dparen(lx, s);
		shlex_next_tok(lx, s, &t, M_CMD);
		if (t.t == T_SEMI)
			shlex_tok_free(&t);
		else
			shlex_push_back(s, &t);
		parse_loop_body(lx, s);
		return;
	}
	shlex_next_tok(lx, s, &nm, 0);
	if (nm.t != T_WORD || !is_ident(wstr(&nm.w), nm.w.v.len) ||
	    (nm.w.fl & (W_QUOTED | W_DYN))) {
		shlex_opaque(lx, "syntax error: bad for/select variable");
		shlex_push_back(s, &nm);
		return;
	}
	skip_nl(lx, s, &t, 0);
	if (t.t == T_WORD && wis(&t.w, "in")) {
		shlex_tok_free(&t);
		in = true;
		for (;;) {
			shlex_next_tok(lx, s, &t, 0);
			if (t.t != T_WORD)
				break;
			if ((t.w.fl & W_DYN) || !shlex_int_text(wstr(&t.w)))
				safe = false;
			shlex_tok_free(&t);
		}
		if (t.t != T_SEMI && t.t != T_NL) {
			shlex_opaque(lx, "syntax error in for/select list");
			shlex_push_back(s, &t);
			shlex_tok_free(&nm);
			return;
		}
		shlex_tok_free(&t);
	} else if (t.t == T_SEMI) {
		shlex_tok_free(&t);
	} else {
		shlex_push_back(s, &t);
	}
	/* without `in`, the loop runs over "$@" */
	shlex_bind_name(lx, wstr(&nm.w), nm.w.v.len, safe && in);
	shlex_tok_free(&nm);
	parse_loop_body(lx, s);
}

static void parse_case(struct lx *lx, struct src *s)
{
	struct tok t;

	shlex_next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		shlex_opaque(lx, "syntax error in case");
		shlex_push_back(s, &t);
		return;
	}
	shlex_tok_free(&t);
	skip_nl(lx, s, &t, 0);
	if (!(t.t == T_WORD && wis(&t.w, "in"))) {
		shlex_opaque(lx, "syntax error: expected in after case");
		shlex_push_back(s, &t);
		return;
	}
	shlex_tok_free(&t);
	for (;;) {
		skip_nl(lx, s, &t, 0);
		if (t.t == T_WORD && wis(&t.w, "esac")) {
			shlex_tok_free(&t);
			return;
		}
		if (t.t == T_LP) {
			shlex_tok_free(&t);
			shlex_next_tok(lx, s, &t, 0);
		}
		/* patterns are words, not commands */
		for (;;) {
			if (t.t != T_WORD) {
				shlex_opaque(lx,
					     "syntax error in case pattern");
				shlex_push_back(s, &t);
				return;
			}
			shlex_tok_free(&t);
			shlex_next_tok(lx, s, &t, 0);
			if (t.t == T_PIPE) {
				shlex_tok_free(&t);
				shlex_next_tok(lx, s, &t, 0);
				continue;
			}
			if (t.t == T_RP) {
				shlex_tok_free(&t);
				break;
			}
			shlex_opaque(lx, "syntax error in case pattern");
			shlex_push_back(s, &t);
			return;
		}
		shlex_parse_list(lx, s);
		shlex_next_tok(lx, s, &t, M_CMD);
		if (t.t == T_DSEMI || t.t == T_SEMIAMP || t.t == T_DSEMIAMP) {
			shlex_tok_free(&t);
			continue;
		}
		if (t.t == T_WORD && wis(&t.w, "esac")) {
			shlex_tok_free(&t);
			return;
		}
		shlex_opaque(lx, "syntax error: unterminated case");
		shlex_push_back(s, &t);
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

	shlex_add_prog(lx, "[[", 2);
	for (;;) {
		shlex_next_tok(lx, s, &t, M_COND);
		if (t.t == T_EOF) {
			shlex_opaque(lx, "syntax error: unterminated [[");
			shlex_push_back(s, &t);
			return;
		}
		if (t.t != T_WORD) {
			prev = NULL;
			shlex_tok_free(&t);
			continue;
		}
		if (wis(&t.w, "]]")) {
			shlex_tok_free(&t);
			return;
		}
		/* operands of -eq and friends are arithmetic */
		if (want_arith)
			shlex_arith_text(lx, t.w.raw, t.w.rawlen);
		if (want_name)
			shlex_name_arg(lx, &t.w, false);
		want_arith = want_name = false;
		if (arith_op(&t.w)) {
			if (prev)
				shlex_arith_text(lx, prev, plen);
			want_arith = true;
		} else if (wis(&t.w, "-v")) {
			want_name = true;
		}
		prev = t.w.raw;
		plen = t.w.rawlen;
		shlex_tok_free(&t);
	}
}

/* f() body; name was read. */
static void funcdef_body(struct lx *lx, struct src *s)
{
	struct tok t;

	shlex_opaque(lx, "function definition");
	if (!shlex_enter(lx))
		return;
	skip_nl(lx, s, &t, M_CMD);
	shlex_push_back(s, &t);
	parse_command(lx, s);
	shlex_leave(lx);
}

static void parse_function(struct lx *lx, struct src *s)
{
	struct tok t;

	shlex_next_tok(lx, s, &t, 0);
	if (t.t != T_WORD) {
		shlex_opaque(lx, "syntax error in function definition");
		shlex_push_back(s, &t);
		return;
	}
	shlex_tok_free(&t);
	shlex_next_tok(lx, s, &t, 0);
	if (t.t == T_LP) {
		shlex_tok_free(&t);
		expect_rp(lx, s, "function definition");
	} else {
		shlex_push_back(s, &t);
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

	shlex_next_tok(lx, s, &t1, M_CMD);
	if (t1.t != T_WORD || compound_start(&t1)) {
		shlex_push_back(s, &t1);
		parse_command(lx, s);
		return;
	}
	shlex_next_tok(lx, s, &t2, 0);
	if (compound_start(&t2)) {
		/* coproc NAME compound-command */
		shlex_tok_free(&t1);
		shlex_push_back(s, &t2);
		parse_command(lx, s);
		return;
	}
	shlex_push_back(s, &t2);
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

	shlex_next_tok(lx, s, &t, M_CMD);
	if (t.t != T_WORD && t.t != T_REDIR && t.t != T_LP) {
		shlex_push_back(s, &t);
		return;
	}
	if (t.t == T_REDIR || (t.t == T_WORD && !compound_kw(&t.w))) {
		parse_simple(lx, s, &t);
		return;
	}
	/* simple commands recurse only through substitutions */
	if (!shlex_enter(lx)) {
		shlex_tok_free(&t);
		return;
	}
	if (t.t == T_LP) {
		shlex_tok_free(&t);
		if (at(s, s->pos) == '(' &&
		    shlex_arith_end(lx, s, s->pos + 1) != SIZE_MAX) {
			s->pos++;
			shlex_scan_arith(lx, s, ')', true);
			shlex_close_dparen(lx, s);
		} else {
			shlex_parse_list(lx, s);
			expect_rp(lx, s, "(");
		}
		redirs_after(lx, s);
		goto out;
	}
	k = wstr(&t.w);
	if (!strcmp(k, "{")) {
		shlex_tok_free(&t);
		shlex_parse_list(lx, s);
		expect_kw(lx, s, "}");
	} else if (!strcmp(k, "if")) {
		shlex_tok_free(&t);
		parse_if(lx, s);
	} else if (!strcmp(k, "while") || !strcmp(k, "until")) {
		shlex_tok_free(&t);
		shlex_parse_list(lx, s);
		if (expect_kw(lx, s, "do")) {
			shlex_parse_list(lx, s);
			expect_kw(lx, s, "done");
		}
	} else if (!strcmp(k, "for") || !strcmp(k, "select")) {
		bool sel = k[0] == 's';

		shlex_tok_free(&t);
		parse_for(lx, s, sel);
	} else if (!strcmp(k, "case")) {
		shlex_tok_free(&t);
		parse_case(lx, s);
	} else if (!strcmp(k, "[[")) {
		shlex_tok_free(&t);
		parse_cond(lx, s);
	} else if (!strcmp(k, "function")) {
		shlex_tok_free(&t);
		parse_function(lx, s);
		goto out;
	} else {
		shlex_tok_free(&t);
		parse_coproc(lx, s);
		goto out;
	}
	redirs_after(lx, s);
out:
	shlex_leave(lx);
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
			shlex_assign_word(lx, &t.w);
			shlex_tok_free(&t);
		} else if (t.t == T_WORD) {
			if (!av.n && next_is_lp(s)) {
				shlex_tok_free(&t);
				shlex_next_tok(lx, s, &t, 0);
				shlex_tok_free(&t);
				expect_rp(lx, s, "function definition");
				funcdef_body(lx, s);
				goto out;
			}
			if (!av.n && !(t.w.fl & W_DYN))
				shlex_add_prog(lx, wstr(&t.w), t.w.v.len);
			if (av.n == av.cap) {
				size_t cap = av.cap ? av.cap * 2 : 8;
				struct word *v;

				v = realloc(av.v, cap * sizeof(*v));

				if (!v) {
					lx->err = -ENOMEM;
					shlex_tok_free(&t);
					goto out;
				}
				av.v = v;
				av.cap = cap;
			}
			av.v[av.n++] = t.w;
			memset(&t, 0, sizeof(t));
		} else if (t.t == T_REDIR) {
			do_redir(lx, s, &t);
			shlex_tok_free(&t);
		} else {
			shlex_push_back(s, &t);
			break;
		}
		if (STOP(lx))
			break;
		shlex_next_tok(lx, s, &t, av.n ? 0 : M_CMD);
	}
	if (!STOP(lx) && av.n)
		shlex_run_argv(lx, av.v, av.n, 0);
out:
	for (i = 0; i < av.n; i++)
		cw_buf_free(&av.v[i].v);
	free(av.v);
}

