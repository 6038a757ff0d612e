// SPDX-License-Identifier: Apache-2.0
/*
 * The shell lexer's words and tokens: word buffers, the token pushback,
 * words with their quoting and flags (assignments, arrays, extended globs),
 * operators and redirections, and here-documents (recorded at the operator,
 * read at the next newline).
 */
#include <errno.h>
#include <stdlib.h>

#include "policy/shlex_int.h"

/* ---- words and tokens ---- */

void shlex_wput(struct lx *lx, struct word *w, const void *p, size_t n)
{
	if (lx->err)
		return;
	if (cw_buf_append(&w->v, p, n))
		lx->err = -ENOMEM;
}

void shlex_wputc(struct lx *lx, struct word *w, char c)
{
	shlex_wput(lx, w, &c, 1);
}

void shlex_tok_free(struct tok *t)
{
	cw_buf_free(&t->w.v);
	memset(t, 0, sizeof(*t));
}

void shlex_push_back(struct src *s, struct tok *t)
{
	if (s->nback < (int)CW_ARRAY_SIZE(s->back)) {
		s->back[s->nback++] = *t;
		memset(t, 0, sizeof(*t));
	} else {
		s->lost = true;
		shlex_tok_free(t);
	}
}

void shlex_src_done(struct src *s)
{
	while (s->nback > 0)
		shlex_tok_free(&s->back[--s->nback]);
}

void shlex_level_free(struct level *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].delim);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- here-documents ---- */

/* Records a here-document; its body is read at the next newline. */
void shlex_hd_add(struct lx *lx, const struct word *w, bool strip)
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
		shlex_opaque(lx, "unusual here-document delimiter");
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

			shlex_read_dq(lx, &b, &scratch, true);
			cw_buf_free(&scratch.v);
			shlex_src_done(&b);
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

	if (!shlex_enter(lx))
		return;
	s->pos++;
	for (;;) {
		shlex_next_tok(lx, s, &t, M_ELEM);
		if (t.t == T_RP)
			break;
		if (t.t == T_EOF) {
			shlex_opaque(lx, "unterminated array assignment");
			break;
		}
		if (t.t != T_WORD && t.t != T_NL)
			shlex_opaque(lx, "syntax error in array assignment");
		shlex_tok_free(&t);
	}
	shlex_tok_free(&t);
	shlex_leave(lx);
}

/* ?( *( +( @( !( pattern: s->pos at '('. */
static void read_extglob(struct lx *lx, struct src *s, struct word *w)
{
	int depth = 0, c;

	w->fl |= W_GLOB;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			shlex_opaque(lx, "unterminated extended glob");
			return;
		}
		if (c == '\\' && at(s, s->pos + 1) >= 0) {
			shlex_wput(lx, w, &s->s[s->pos], 2);
			s->pos += 2;
		} else if (c == '\'') {
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				shlex_wputc(lx, w, (char)c);
			if (c < 0) {
				shlex_opaque(lx, "unterminated single quote");
				return;
			}
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			shlex_read_dq(lx, s, w, false);
		} else if (c == '$') {
			shlex_read_dollar(lx, s, w, false);
		} else if (c == '`') {
			shlex_read_bq(lx, s, w, false);
		} else {
			shlex_wputc(lx, w, (char)c);
			s->pos++;
			if (c == '(')
				depth++;
			else if (c == ')' && --depth == 0)
				return;
		}
	}
}

enum { AS_NO, AS_NAME, AS_SUB, AS_PLUS };

/*
 * The NAME, NAME[sub], NAME+ and = of an assignment at the start of a word
 * (*as says how far it got); returns true when it took c.
 */
static bool read_assign(struct lx *lx, struct src *s, struct word *w,
			unsigned mode, int c, int *as)
{
	if (*as == AS_NAME && is_name(c)) {
		shlex_wputc(lx, w, (char)c);
		s->pos++;
		return true;
	}
	if (*as == AS_NAME && c == '[' && (mode & M_CMD)) {
		/* bash reads NAME[...] whole, blanks included;
		 * without '=' it is a glob pattern */
		shlex_read_sub(lx, s, w);
		w->fl |= W_GLOB;
		*as = AS_SUB;
		return true;
	}
	if (c == '+' && *as != AS_PLUS && at(s, s->pos + 1) == '=') {
		shlex_wputc(lx, w, '+');
		s->pos++;
		*as = AS_PLUS;
		return true;
	}
	if (c == '=') {
		if (*as == AS_SUB || *as == AS_PLUS)
			w->fl &= ~W_GLOB;
		w->fl |= W_ASSIGN;
		w->eq = w->v.len;
		shlex_wputc(lx, w, '=');
		s->pos++;
		*as = AS_NO;
		if (at(s, s->pos) == '(') {
			w->fl |= W_ARRAY;
			read_array(lx, s);
		}
		return true;
	}
	*as = AS_NO;
	return false;
}

static void read_word(struct lx *lx, struct src *s, struct word *w,
		      unsigned mode)
{
	size_t start = s->pos, p0;
	bool sq = false, br = false, brsep = false;
	int as, c, d;

	memset(w, 0, sizeof(*w));
	as = is_name0(at(s, s->pos)) ? AS_NAME : AS_NO;
	if ((mode & M_ELEM) && at(s, s->pos) == '[') {
		shlex_read_sub(lx, s, w);
		as = AS_SUB;
	}
	while (!STOP(lx) && (c = at(s, s->pos)) >= 0) {
		if (as != AS_NO && read_assign(lx, s, w, mode, c, &as))
			continue;
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
			shlex_parse_nested(lx, s);
			continue;
		case '\\':
			d = at(s, s->pos + 1);
			if (d == '\n') {
				s->pos += 2;
				continue;
			}
			w->fl |= W_QUOTED;
			if (d < 0) {
				shlex_wputc(lx, w, '\\');
				s->pos++;
				continue;
			}
			shlex_wputc(lx, w, (char)d);
			s->pos += 2;
			continue;
		case '\'':
			w->fl |= W_QUOTED;
			while ((c = at(s, ++s->pos)) >= 0 && c != '\'')
				shlex_wputc(lx, w, (char)c);
			if (c < 0) {
				shlex_opaque(lx, "unterminated single quote");
				goto out;
			}
			s->pos++;
			continue;
		case '"':
			s->pos++;
			shlex_read_dq(lx, s, w, false);
			continue;
		case '$':
			p0 = s->pos;
			d = at(s, s->pos + 1);
			shlex_read_dollar(lx, s, w, false);
			if (s->pos > p0 + 1 && d != '\'' && d != '"')
				w->fl |= W_SPLIT;
			continue;
		case '`':
			shlex_read_bq(lx, s, w, false);
			w->fl |= W_SPLIT;
			continue;
		case '*':
		case '?':
		case '+':
		case '@':
		case '!':
			if (at(s, s->pos + 1) == '(') {
				shlex_wputc(lx, w, (char)c);
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
		shlex_wputc(lx, w, (char)c);
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

void shlex_next_tok(struct lx *lx, struct src *s, struct tok *t,
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
		shlex_opaque(lx, "syntax error");
		s->pos++;
	}
	c = at(s, s->pos);
	if ((c == '<' || c == '>') && at(s, s->pos + 1) != '(' &&
	    !(mode & M_COND) && fd_prefix(&t->w)) {
		shlex_tok_free(t);
		redir_op(s, t);
		goto check;
	}
	return;
check:
	/* `&\<newline>&` is `&&` to bash */
	if (at(s, s->pos) == '\\' && at(s, s->pos + 1) == '\n' &&
	    (c = at(s, s->pos + 2)) >= 0 && strchr(";&|<>()-", c))
		shlex_opaque(lx, "line continuation inside an operator");
}

