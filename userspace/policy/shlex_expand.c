// SPDX-License-Identifier: Apache-2.0
/*
 * The shell lexer's expansions: command substitutions ($( ), <( ), `...`),
 * parameter expansion (${...} and its operands), $'...' and "...", array
 * subscripts, and arithmetic ($(( )), $[ ], (( )), subscripts, offsets),
 * noting the variables arithmetic reads.
 */
#include <errno.h>
#include <stdlib.h>

#include "policy/shlex_int.h"

/* ---- substitutions ---- */

/*
 * Offset of the ')' that closes `((` or `$((` whose text starts at p, or
 * SIZE_MAX when bash would read nested parentheses instead.
 */
size_t shlex_arith_end(struct lx *lx, const struct src *s, size_t p)
{
	size_t start = p;
	int depth = 0, c;

	while ((c = at(s, p)) >= 0) {
		/* look-ahead over text parsed otherwise later: bound it */
		if (p - start >= lx->budget) {
			shlex_bound(lx, "input too complex");
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

/* Parses $( ... ), <( ... ), >( ... ) from s->pos to the closing ')'. */
void shlex_parse_nested(struct lx *lx, struct src *s)
{
	struct level lv = { 0 }, *saved = lx->lvl;
	struct tok t;

	if (!shlex_enter(lx))
		return;
	lx->lvl = &lv;
	for (;;) {
		shlex_parse_list(lx, s);
		shlex_next_tok(lx, s, &t, 0);
		if (t.t == T_RP)
			break;
		if (t.t == T_EOF) {
			shlex_opaque(lx, "unterminated command substitution");
			break;
		}
		shlex_opaque(lx, "syntax error in command substitution");
		shlex_tok_free(&t);
	}
	shlex_tok_free(&t);
	if (lv.n)
		shlex_opaque(lx,
			     "here-document inside a substitution is not closed");
	shlex_level_free(&lv);
	lx->lvl = saved;
	shlex_leave(lx);
}

/* Parses text as a separate source (backquotes, rsync -e). */
void shlex_parse_text(struct lx *lx, const char *p, size_t n)
{
	struct level lv = { 0 }, *saved = lx->lvl;
	struct src sub = { .s = p, .len = n };

	if (!shlex_enter(lx))
		return;
	lx->lvl = &lv;
	shlex_parse_top(lx, &sub);
	shlex_src_done(&sub);
	if (lv.n)
		shlex_opaque(lx,
			     "here-document inside a substitution is not closed");
	shlex_level_free(&lv);
	lx->lvl = saved;
	shlex_leave(lx);
}

void shlex_arith_text(struct lx *lx, const char *p, size_t n)
{
	struct src t = { .s = p, .len = n };

	shlex_scan_arith(lx, &t, -1, false);
	shlex_src_done(&t);
}

/* `...`: s->pos at the opening backquote. */
void shlex_read_bq(struct lx *lx, struct src *s, struct word *w, bool dq)
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
		shlex_opaque(lx, "unterminated backquote");
	shlex_parse_text(lx, b.data ? b.data : "", b.len);
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
		shlex_opaque(lx, "unterminated $'...'");
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
				shlex_wputc(lx, w, (char)c);
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
					shlex_wput(lx, w, "\\c", 2);
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
					shlex_wput(lx, w, "\\x", 2);
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
					shlex_wputc(lx, w, '\\');
					shlex_wputc(lx, w, (char)c);
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
				shlex_wputc(lx, w, '\\');
				shlex_wputc(lx, w, (char)c);
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
			shlex_wputc(lx, w, (char)v);
	}
#undef IN
}

/* Scans a subscript from '[' to its ']', parsing substitutions. */
void shlex_read_sub(struct lx *lx, struct src *s, struct word *w)
{
	size_t start = s->pos + 1;
	int depth = 0, c;

	shlex_wputc(lx, w, '[');
	s->pos++;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			shlex_opaque(lx, "unterminated array subscript");
			return;
		}
		if (c == ']' && !depth)
			break;
		if (c == '[')
			depth++;
		else if (c == ']')
			depth--;
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
			shlex_read_dollar(lx, s, w, true);
		} else if (c == '`') {
			shlex_read_bq(lx, s, w, true);
		} else {
			shlex_wputc(lx, w, (char)c);
			s->pos++;
		}
	}
	if (STOP(lx))
		return;
	if (!(s->pos - start == 1 &&
	      (s->s[start] == '@' || s->s[start] == '*')))
		shlex_arith_text(lx, s->s + start, s->pos - start);
	shlex_wputc(lx, w, ']');
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
	if (!shlex_enter(lx))
		return;
	c = at(s, p);
	if (c == ' ' || c == '\t' || c == '\n' || c == '|') {
		struct tok t;

		struct level lv = { 0 }, *saved = lx->lvl;

		/* bash 5.3 runs ${ cmd; } in the current shell */
		shlex_opaque(lx, "${ command; } substitution");
		lx->lvl = &lv;
		s->pos = p + 1;
		shlex_parse_list(lx, s);
		shlex_next_tok(lx, s, &t, M_CMD);
		if (!(t.t == T_WORD && wis(&t.w, "}")))
			shlex_opaque(lx, "unterminated ${ command; }");
		shlex_tok_free(&t);
		shlex_level_free(&lv);
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
			shlex_opaque(lx, "indirect expansion ${!...}");
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
		shlex_opaque(lx, "bad substitution");
	}
	nl = p - n0;
	if (bang && (at(s, p) == '*' || at(s, p) == '@') && at(s, p + 1) == '}')
		p++;
	s->pos = p;
	if (at(s, s->pos) == '[') {
		shlex_read_sub(lx, s, &scratch);
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
		shlex_scan_arith(lx, s, '}', true);
	} else if (c == '@') {
		if (at(s, s->pos + 1) == 'P')
			shlex_opaque(lx,
				     "${x@P} expands its value as a prompt");
	} else if (c >= 0 && strchr(":-=?+#%/^,", c)) {
		if ((c == '=' || (c == ':' && at(s, s->pos + 1) == '=')) &&
		    is_ident(s->s + n0, nl))
			shlex_bind_name(lx, s->s + n0, nl, false);
	} else {
		shlex_opaque(lx, "bad substitution");
	}
	/* operand: the first unquoted '}' closes */
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			shlex_opaque(lx, "unterminated ${");
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
				shlex_opaque(lx, "unterminated single quote");
				break;
			}
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			shlex_read_dq(lx, s, &scratch, false);
		} else if (c == '$') {
			shlex_read_dollar(lx, s, &scratch, true);
		} else if (c == '`') {
			shlex_read_bq(lx, s, &scratch, true);
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
	shlex_leave(lx);
}

/* $...: s->pos at '$'. */
void shlex_read_dollar(struct lx *lx, struct src *s, struct word *w, bool dq)
{
	int c = at(s, s->pos + 1), kind;
	const char *nm;
	size_t nl;

	if (c == '\\' && at(s, s->pos + 2) == '\n')
		shlex_opaque(lx, "line continuation after $");
	if (c == '(') {
		w->fl |= W_EXPAND;
		if (at(s, s->pos + 2) == '(' &&
		    shlex_arith_end(lx, s, s->pos + 3) != SIZE_MAX) {
			s->pos += 3;
			shlex_scan_arith(lx, s, ')', true);
			shlex_close_dparen(lx, s);
		} else {
			s->pos += 2;
			shlex_parse_nested(lx, s);
		}
	} else if (c == '{') {
		read_brace(lx, s, w, &kind, &nm, &nl);
	} else if (c == '[') {
		w->fl |= W_EXPAND;
		s->pos += 2;
		shlex_scan_arith(lx, s, ']', true);
		if (at(s, s->pos) == ']')
			s->pos++;
	} else if (c == '\'' && !dq) {
		read_ansic(lx, s, w);
		return;
	} else if (c == '"' && !dq) {
		w->fl |= W_LOCALE | W_QUOTED;
		s->pos += 2;
		shlex_read_dq(lx, s, w, false);
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
		shlex_wputc(lx, w, '$');
		s->pos++;
	}
}

/* "...": s->pos after the opening quote; a here-document body has none. */
void shlex_read_dq(struct lx *lx, struct src *s, struct word *w,
		   bool heredoc)
{
	int c;

	w->fl |= W_QUOTED;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			if (!heredoc)
				shlex_opaque(lx, "unterminated double quote");
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
				shlex_wputc(lx, w, (char)d);
				s->pos += 2;
				continue;
			}
			shlex_wputc(lx, w, '\\');
			s->pos++;
			continue;
		}
		if (c == '$') {
			shlex_read_dollar(lx, s, w, true);
			continue;
		}
		if (c == '`') {
			shlex_read_bq(lx, s, w, true);
			continue;
		}
		shlex_wputc(lx, w, (char)c);
		s->pos++;
	}
}

/* ---- arithmetic ---- */

/* After arithmetic that should end with "))". */
void shlex_close_dparen(struct lx *lx, struct src *s)
{
	if (STOP(lx))
		return;
	if (at(s, s->pos) == ')' && at(s, s->pos + 1) == ')') {
		s->pos += 2;
		return;
	}
	shlex_opaque(lx, "syntax error in arithmetic");
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
		shlex_set_add(lx, &lx->aref, b, len);
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
	shlex_opaque(lx, "parameter expansion in arithmetic");
}

static void arith_dollar(struct lx *lx, struct src *s, bool parse,
			 struct word *scratch)
{
	int c = at(s, s->pos + 1), kind;
	const char *nm;
	size_t nl, q;

	if (c == '(') {
		if (at(s, s->pos + 2) == '(' &&
		    shlex_arith_end(lx, s, s->pos + 3) != SIZE_MAX) {
			s->pos += 3;
			shlex_scan_arith(lx, s, ')', parse);
			shlex_close_dparen(lx, s);
			return;
		}
		shlex_opaque(lx, "command output used in arithmetic");
		if (!parse) {
			s->pos = s->len;
			return;
		}
		s->pos += 2;
		shlex_parse_nested(lx, s);
	} else if (c == '{' && !parse) {
		brace_text(lx, s);
	} else if (c == '{') {
		read_brace(lx, s, scratch, &kind, &nm, &nl);
		if (kind == BR_SIMPLE && is_ident(nm, nl))
			shlex_set_add(lx, &lx->aref, nm, nl);
		else if (kind != BR_LEN)
			shlex_opaque(lx, "parameter expansion in arithmetic");
	} else if (c == '[') {
		s->pos += 2;
		shlex_scan_arith(lx, s, ']', parse);
		if (at(s, s->pos) == ']')
			s->pos++;
	} else if (is_name0(c)) {
		q = ++s->pos;
		while (is_name(at(s, s->pos)))
			s->pos++;
		shlex_set_add(lx, &lx->aref, s->s + q, s->pos - q);
	} else if (c == '#' || c == '?' || c == '$' || c == '!') {
		s->pos += 2;
	} else if (is_digit(c) || c == '@' || c == '*' || c == '-') {
		shlex_opaque(lx, "positional parameter in arithmetic");
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
void shlex_scan_arith(struct lx *lx, struct src *s, int closer, bool parse)
{
	struct word scratch = { 0 };
	int paren = 0, brack = 0, c;
	size_t q, r;

	if (!shlex_enter(lx))
		return;
	while (!STOP(lx)) {
		c = at(s, s->pos);
		if (c < 0) {
			if (closer >= 0)
				shlex_opaque(lx, "unterminated arithmetic");
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
				shlex_opaque(lx, "syntax error in arithmetic");
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
				shlex_opaque(lx, "backslash in arithmetic");
				s->pos++;
			}
		} else if (c == '\'' || c == '"') {
			if (parse) {
				shlex_opaque(lx, "quotes in arithmetic");
				s->pos++;
				if (c == '"') {
					shlex_read_dq(lx, s, &scratch, false);
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
			shlex_opaque(lx, "command output used in arithmetic");
			if (!parse)
				break;
			shlex_read_bq(lx, s, &scratch, false);
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
				shlex_bind_name(lx, s->s + q, s->pos - q, true);
			else
				shlex_set_add(lx, &lx->aref, s->s + q,
					      s->pos - q);
			continue;
		}
		s->pos++;
	}
	cw_buf_free(&scratch.v);
	shlex_leave(lx);
}

