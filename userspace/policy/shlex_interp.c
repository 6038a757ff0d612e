// SPDX-License-Identifier: Apache-2.0
/*
 * Programs that run code given as text, for the shell lexer's table: shells
 * (sh -c, reading stdin), interpreters (python -c, perl -e, node -e, ...),
 * awk programs, sed scripts, vi commands, tar and rsync options that name
 * programs, git -c keys, and which of these run a script file instead.
 */
#include <strings.h>

#include "policy/shlex_int.h"

/* ---- shells and interpreters ---- */

size_t shlex_h_shell(struct lx *lx, struct word *w, size_t n, size_t i,
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

		if (shlex_unknown_option(&w[j])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
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
				shlex_opaque(lx, "%s option %.40s", prog, a);
				return n;
			}
			continue;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		for (k = 1; a[k]; k++) {
			if (a[k] == 'c' || a[k] == 's' || a[k] == 'i' ||
			    a[k] == 't' || (fish && a[k] == 'C')) {
				shlex_opaque(lx,
					     "%s -%c runs commands it is given "
					     "as text", prog, a[k]);
				return n;
			}
			if (a[k] == 'o' || a[k] == 'O')
				j++;
		}
	}
	if (j >= n)
		shlex_opaque(lx, "%s reads commands from stdin", prog);
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

size_t shlex_h_interp(struct lx *lx, struct word *w, size_t n, size_t i,
		      const char *prog, const void *arg)
{
	const struct interp *sp = arg;
	size_t j, k;

	for (j = i + 1; j < n; j++) {
		const char *a = wstr(&w[j]), *eq;
		size_t len;

		if (shlex_unknown_option(&w[j])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
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
			shlex_opaque(lx, "%s reads its program from stdin",
				     prog);
			return n;
		}
		if (a[1] == '-') {
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			if (in_list(sp->lcode, a + 2, len)) {
				shlex_opaque(lx, "%s %.40s runs inline code",
					     prog,
					     a);
				return n;
			}
			if (in_list(sp->larg, a + 2, len)) {
				if (!eq)
					j++;
			} else if (!in_list(sp->lflag, a + 2, len) &&
				   !(eq && sp->lassign)) {
				shlex_opaque(lx, "%s: option %.40s", prog, a);
				return n;
			}
			continue;
		}
		for (k = 1; a[k]; k++) {
			int c = (unsigned char)a[k];

			if (has(sp->code, c)) {
				shlex_opaque(lx, "%s -%c runs inline code",
					     prog, c);
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
				shlex_opaque(lx, "%s: unknown option -%c", prog,
					     c);
				return n;
			}
		}
	}
	if (j >= n)
		shlex_opaque(lx, "%s reads its program from stdin", prog);
	return n;
}

static const char *const py_larg[] = { "check-hash-based-pycs", NULL };
static const char *const help_version[] = { "help", "version", NULL };
const struct interp shlex_python_i = {
	.code = "ci", .arg = "WXm", .flag = "bBdEhIOPqsSuvVx3R?",
	.script = "m", .larg = py_larg, .lflag = help_version,
};
const struct interp shlex_perl_i = {
	.code = "eEMm", .arg = "I", .oarg = "ixCdDVF", .num = "0l",
	.flag = "acfhnpsStTuUvwWXg", .lflag = help_version,
};
const struct interp shlex_ruby_i = {
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
const struct interp shlex_node_i = {
	.code = "epi", .arg = "rC", .flag = "cvh", .lcode = node_lcode,
	.larg = node_larg, .lflag = node_lflag, .lassign = true,
};
const struct interp shlex_php_i = {
	.code = "rRBEa", .arg = "cdfFzSt", .flag = "nqHsilmhvwe",
	.script = "fF", .lflag = help_version,
};
const struct interp shlex_lua_i = {
	.code = "ei", .arg = "ljO", .flag = "vEWb",
};
static const char *const r_lflag[] = {
	"vanilla", "verbose", "version", "help", "no-environ",
	"no-site-file", "no-init-file", "restore", "no-restore", "save",
	"no-save", "slave", "quiet", "silent", "no-echo", "no-restore-data",
	NULL,
};
const struct interp shlex_rscript_i = {
	.code = "e", .arg = "f", .script = "f", .lflag = r_lflag,
	.lassign = true,
};
const struct interp shlex_expect_i = {
	.code = "ci", .arg = "fD", .flag = "bdnNv", .script = "f",
	.lflag = help_version,
};
const struct interp shlex_tcl_i = { .arg = "" };

static bool awk_runs(const char *text)
{
	return strstr(text, "system") || strchr(text, '|') ||
	       strstr(text, "@load");
}

/* awk: the program text itself can run commands. */
size_t shlex_h_awk(struct lx *lx, struct word *w, size_t n, size_t i,
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

		if (shlex_unknown_option(&w[j])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
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
				shlex_opaque(lx, "%s option %.40s", prog, a);
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
				shlex_opaque(lx, "%s -l loads an extension",
					     prog);
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
			shlex_opaque(lx, "%s: unknown option -%c", prog, c);
			return n;
		}
	}
	if (file || j >= n)
		return n;
	if (w[j].fl & W_DYN) {
		shlex_opaque(lx, "%s program from an expansion", prog);
		return n;
	}
	if (awk_runs(wstr(&w[j])))
		goto run;
	return n;
run:
	shlex_opaque(lx, "%s program may run commands (system, |, @load)",
		     prog);
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

size_t shlex_h_sed(struct lx *lx, struct word *w, size_t n, size_t i,
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

		if (shlex_unknown_option(&w[j])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
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
				shlex_opaque(lx, "%s option %.40s", prog, a);
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
				shlex_opaque(lx, "%s: unknown option -%c", prog,
					     c);
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
		shlex_opaque(lx, "%s script may run commands (e)", prog);
	return n;
}

/* vi and friends run ex commands (and so shell commands) from arguments. */
size_t shlex_h_vi(struct lx *lx, struct word *w, size_t n, size_t i,
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
			shlex_opaque(lx, "%s runs editor commands from its "
				     "arguments", prog);
			return n;
		}
	}
	if (!strcmp(prog, "ex"))
		shlex_opaque(lx, "ex reads editor commands from stdin");
	return n;
}

size_t shlex_h_tar(struct lx *lx, struct word *w, size_t n, size_t i,
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

		if (shlex_unknown_option(&w[j]) ||
		    (j == i + 1 && (w[j].fl & W_DYN))) {
			shlex_opaque(lx, "%s: expansion among its arguments",
				     prog);
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
	shlex_opaque(lx, "%s runs a program given as an argument", prog);
	return n;
}

/* rsync -e COMMAND: split on blanks, no shell; plain words are followed. */
size_t shlex_h_rsync(struct lx *lx, struct word *w, size_t n, size_t i,
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
			shlex_opaque(lx,
				     "%s --rsync-path runs a remote command",
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
			shlex_opaque(lx,
				     "%s -e runs a command we cannot follow",
				     prog);
			return n;
		}
		if (!shlex_enter(lx))
			return n;
		shlex_parse_text(lx, v, strlen(v));
		shlex_leave(lx);
	}
	return n;
}

size_t shlex_h_git(struct lx *lx, struct word *w, size_t n, size_t i,
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
	shlex_opaque(lx, "%s -c or --exec-path can name programs to run", prog);
	return n;
}

