// SPDX-License-Identifier: Apache-2.0
/*
 * What the shell lexer knows of programs: option parsing in the style of
 * getopt_long, the wrappers that run their argument as a program (env,
 * sudo, nice, timeout, xargs, find -exec, ...), the builtins that run or
 * bind code (eval, trap, read, declare, ...), and the table that maps a
 * program name to its handler (shells and interpreters: shlex_interp.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "policy/shlex_int.h"

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
bool shlex_unknown_option(const struct word *w)
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

		if (shlex_unknown_option(&w[i])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
			return SIZE_MAX;
		}
		if (a[0] != '-' || !a[1] || (w[i].fl & W_DYN))
			return i;
		if (!strcmp(a, "--"))
			return i + 1;
		if (a[1] == '-') {
			eq = strchr(a, '=');
			lo = find_lopt(sp->lo, a + 2,
				       eq ? (size_t)(eq - a - 2) :
							   strlen(a + 2));
			if (!lo || lo->arg == 3 || (eq && !lo->arg)) {
				shlex_opaque(lx, "%s: option %.40s", prog, a);
				return SIZE_MAX;
			}
			if (lo->arg == 1 && !eq) {
				if (++i >= n)
					return n;
				if (w[i].fl & W_WILD) {
					shlex_opaque(lx,
						     "%s: expansion among its "
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
				shlex_opaque(lx,
					     "%s -%c runs code given as text",
					     prog, c);
				return SIZE_MAX;
			}
			if (has(sp->arg, c)) {
				if (!a[j + 1]) {
					if (++i >= n)
						return n;
					if (w[i].fl & W_WILD) {
						shlex_opaque(lx,
							     "%s: expansion "
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
				shlex_opaque(lx, "%s: unknown option -%c", prog,
					     c);
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
		shlex_opaque(lx, "%s: expansion before its command", prog);
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
		if (shlex_code_var(a, (size_t)(eq - a)))
			shlex_opaque(lx,
				     "%s sets %.*s, which names code to run",
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
		shlex_opaque(lx, "%s without a command starts a shell", prog);
	return j;
}

static size_t h_opaque(struct lx *lx, struct word *w, size_t n, size_t i,
		       const char *prog, const void *arg)
{
	(void)w;
	(void)i;
	shlex_opaque(lx, "%s %s", prog, (const char *)arg);
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
		shlex_add_prog(lx, "echo", 4);
		return n;
	}
	if (oseen(&o, 'I'))
		rep = o.val[oidx('I')];
	else if (oseen(&o, 'i'))
		rep = o.val[oidx('i')] && *o.val[oidx('i')] ?
			      o.val[oidx('i')] : "{}";
	if (rep && *rep && strstr(wstr(&w[j]), rep)) {
		shlex_opaque(lx, "xargs builds its program name from input");
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
				shlex_add_prog(lx, wstr(&w[j]), w[j].v.len);
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
		shlex_opaque(lx, "flock -c runs a command string");
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
		shlex_opaque(lx, "runuser without -u starts a shell");
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
			shlex_opaque(lx, "%s: expansion among its arguments",
				     prog);
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
				shlex_opaque(lx,
					     "find -exec runs the file it found");
				return n;
			}
			if (!shlex_enter(lx))
				return n;
			shlex_run_argv(lx, w, k, j + 1);
			shlex_leave(lx);
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
		if (shlex_unknown_option(&w[j])) {
			shlex_opaque(lx, "%s: expansion among its options",
				     prog);
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
				shlex_opaque(lx,
					     "ssh -o %s runs a local command",
					     bad[k]);
				return n;
			}
		}
	}
	j = parse_opts(lx, w, n, i + 1, &sp, prog, &o);
	if (j == SIZE_MAX || j >= n)
		return n;
	if (j + 1 < n)
		shlex_opaque(lx, "ssh runs a remote command");
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
	shlex_opaque(lx, "%s runs its argument as code", prog);
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
		shlex_opaque(lx, "%s -%c%s runs or loads code", prog, set[0],
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
			shlex_opaque(lx, "%s definition", prog);
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
		shlex_name_arg(lx, &w[j], true);
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

		shlex_name_arg(lx, &aw, true);
	}
	for (; j < n; j++)
		shlex_name_arg(lx, &w[j], true);
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

			shlex_name_arg(lx, &aw, true);
		} else if (j + 1 < n) {
			shlex_name_arg(lx, &w[j + 1], true);
		}
	} else if (j < n && (w[j].fl & W_DYN)) {
		const char *r = w[j].raw;
		size_t k = 0;

		/* only a word that may begin with '-' can be -v */
		while (k < w[j].rawlen && (r[k] == '"' || r[k] == '\''))
			k++;
		if ((w[j].fl & W_WILD) || k == w[j].rawlen ||
		    strchr("$`-\\", r[k]))
			shlex_opaque(lx, "printf: expansion where -v may be");
	}
	return n;
}

static size_t h_getopts(struct lx *lx, struct word *w, size_t n, size_t i,
			const char *prog, const void *arg)
{
	(void)prog;
	(void)arg;
	if (i + 2 < n)
		shlex_name_arg(lx, &w[i + 2], true);
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
			shlex_name_arg(lx, &w[j + 1], true);
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
			shlex_name_arg(lx, &w[j], true);
	return n;
}

static size_t h_let(struct lx *lx, struct word *w, size_t n, size_t i,
		    const char *prog, const void *arg)
{
	size_t j;

	(void)prog;
	(void)arg;
	for (j = i + 1; j < n; j++)
		shlex_arith_text(lx, w[j].raw, w[j].rawlen);
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
			shlex_assign_word(lx, &w[j]);
			continue;
		}
		eq = memchr(w[j].raw, '=', w[j].rawlen);
		if (eq && strchr(a, '=') && !(w[j].fl & (W_GLOB | W_BRACE)) &&
		    !memchr(w[j].raw, '$', (size_t)(eq - w[j].raw)) &&
		    !memchr(w[j].raw, '`', (size_t)(eq - w[j].raw))) {
			/* "x=v": the builtin splits it again; only the
			 * name matters, and a[...] or x=(...) is parsed */
			if (strchr(a, '=')[1] == '(') {
				shlex_opaque(lx, "%s: quoted array assignment",
					     prog);
				return n;
			}
			if (strcspn(a, "[") < strcspn(a, "=")) {
				shlex_opaque(lx, "%s: quoted subscript", prog);
				return n;
			}
			shlex_bind_name(lx, a, strcspn(a, "="), false);
			continue;
		}
		if (w[j].fl & W_DYN) {
			shlex_opaque(lx, "%s: variable name from an expansion",
				     prog);
			return n;
		}
		if ((a[0] == '-' || a[0] == '+') && a[1]) {
			if (attrs && strpbrk(a + 1, "in")) {
				/* -i evaluates values, -n aliases names */
				shlex_opaque(lx, "%s %.8s", prog, a);
				return n;
			}
			continue;
		}
		shlex_name_arg(lx, &w[j], false);
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
			shlex_name_arg(lx, &w[j + 1], false);
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
	{ "awk", shlex_h_awk, NULL },
	{ "bash", shlex_h_shell, NULL },
	{ "batch", h_opaque, "runs commands read from stdin" },
	{ "builtin", h_builtin, NULL },
	{ "busybox", h_busybox, NULL },
	{ "catchsegv", h_wrap, &plain_w },
	{ "chroot", h_wrap, &chroot_w },
	{ "chrt", h_chrt, NULL },
	{ "command", h_command, NULL },
	{ "compgen", h_optcode, "CF" },
	{ "complete", h_optcode, "CF" },
	{ "csh", shlex_h_shell, NULL },
	{ "dash", shlex_h_shell, NULL },
	{ "declare", h_declare, "attrs" },
	{ "doas", h_wrap, &doas_w },
	{ "eatmydata", h_wrap, &plain_w },
	{ "enable", h_optcode, "f" },
	{ "env", h_env, NULL },
	{ "eval", h_opaque, "runs its arguments as code" },
	{ "ex", shlex_h_vi, NULL },
	{ "exec", h_wrap, &exec_w },
	{ "expect", shlex_h_interp, &shlex_expect_i },
	{ "export", h_declare, NULL },
	{ "fakeroot", h_wrap, &fakeroot_w },
	{ "fc", h_opaque, "runs commands from the history" },
	{ "find", h_find, NULL },
	{ "fish", shlex_h_shell, NULL },
	{ "flock", h_flock, NULL },
	{ "gawk", shlex_h_awk, NULL },
	{ "getopts", h_getopts, NULL },
	{ "git", shlex_h_git, NULL },
	{ "gsed", shlex_h_sed, NULL },
	{ "hash", h_optcode, "p" },
	{ "hush", shlex_h_shell, NULL },
	{ "ionice", h_wrap, &ionice_w },
	{ "ksh", shlex_h_shell, NULL },
	{ "ksh93", shlex_h_shell, NULL },
	{ "let", h_let, NULL },
	{ "lksh", shlex_h_shell, NULL },
	{ "local", h_declare, "attrs" },
	{ "ltrace", h_wrap, &ltrace_w },
	{ "luajit", shlex_h_interp, &shlex_lua_i },
	{ "mapfile", h_mapfile, NULL },
	{ "mawk", shlex_h_awk, NULL },
	{ "mksh", shlex_h_shell, NULL },
	{ "nawk", shlex_h_awk, NULL },
	{ "newgrp", h_opaque, "starts a shell" },
	{ "nice", h_nice, NULL },
	{ "node", shlex_h_interp, &shlex_node_i },
	{ "nodejs", shlex_h_interp, &shlex_node_i },
	{ "nohup", h_wrap, &nohup_w },
	{ "nsenter", h_wrap, &nsenter_w },
	{ "nvim", shlex_h_vi, NULL },
	{ "oksh", shlex_h_shell, NULL },
	{ "parallel", h_opaque, "runs commands built from its input" },
	{ "pdksh", shlex_h_shell, NULL },
	{ "pkexec", h_wrap, &pkexec_w },
	{ "posh", shlex_h_shell, NULL },
	{ "printf", h_printf, NULL },
	{ "proxychains", h_wrap, &proxychains_w },
	{ "proxychains4", h_wrap, &proxychains_w },
	{ "pwsh", h_opaque, "runs PowerShell code" },
	{ "R", shlex_h_interp, &shlex_rscript_i },
	{ "rbash", shlex_h_shell, NULL },
	{ "read", h_read, NULL },
	{ "readarray", h_mapfile, NULL },
	{ "readonly", h_declare, NULL },
	{ "Rscript", shlex_h_interp, &shlex_rscript_i },
	{ "rsync", shlex_h_rsync, NULL },
	{ "runuser", h_runuser, NULL },
	{ "script", h_opaque, "runs a shell" },
	{ "sed", shlex_h_sed, NULL },
	{ "setsid", h_wrap, &setsid_w },
	{ "sg", h_opaque, "runs its argument through a shell" },
	{ "sh", shlex_h_shell, NULL },
	{ "source", h_opaque, "runs a file in this shell" },
	{ "ssh", h_ssh, NULL },
	{ "stdbuf", h_wrap, &stdbuf_w },
	{ "strace", h_wrap, &strace_w },
	{ "su", h_opaque, "runs a shell" },
	{ "sudo", h_sudo, NULL },
	{ "systemd-run", h_opaque, "runs commands we do not follow" },
	{ "tar", shlex_h_tar, NULL },
	{ "taskset", h_wrap, &taskset_w },
	{ "tclsh", shlex_h_interp, &shlex_tcl_i },
	{ "tcsh", shlex_h_shell, NULL },
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
	{ "vi", shlex_h_vi, NULL },
	{ "view", shlex_h_vi, NULL },
	{ "vim", shlex_h_vi, NULL },
	{ "wait", h_wait, NULL },
	{ "watch", h_opaque, "runs its arguments through sh -c" },
	{ "wish", shlex_h_interp, &shlex_tcl_i },
	{ "xargs", h_xargs, NULL },
	{ "yash", shlex_h_shell, NULL },
	{ "zsh", shlex_h_shell, NULL },
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
	static const struct handler
		py = { "python", shlex_h_interp, &shlex_python_i },
		pl = { "perl", shlex_h_interp, &shlex_perl_i },
		rb = { "ruby", shlex_h_interp, &shlex_ruby_i },
		php = { "php", shlex_h_interp, &shlex_php_i },
		lua = { "lua", shlex_h_interp, &shlex_lua_i },
		tcl = { "tclsh", shlex_h_interp, &shlex_tcl_i };
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

void shlex_run_argv(struct lx *lx, struct word *w, size_t n, size_t i)
{
	while (i < n && !STOP(lx)) {
		const struct handler *h;
		const char *p = wstr(&w[i]), *b;
		unsigned fl = w[i].fl;

		if (fl & W_DYN) {
			shlex_opaque(lx, "program name %s",
				     fl & W_GLOB ? "is a glob pattern" :
				     fl & W_BRACE ? "uses brace expansion" :
				     fl & W_LOCALE ? "is a $\"...\" string" :
				     fl & W_UNDEC ? "uses an inexact $'...' escape" :
				     "is an expansion");
			return;
		}
		shlex_add_prog(lx, p, w[i].v.len);
		b = strrchr(p, '/');
		b = b && b[1] ? b + 1 : p;
		h = find_handler(b);
		if (!h)
			return;
		i = h->fn(lx, w, n, i, b, h->arg);
	}
}

