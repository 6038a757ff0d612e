// SPDX-License-Identifier: Apache-2.0
/*
 * cmdwarden audit: reading the trail.
 *   verify  check the hash chain across the log and its rotated files
 *   tail    the last records, and with -f the ones still to come
 *   query   the records of an invocation, a type, a time range (JSON Lines)
 *   stats   counts per type, verdicts, denials and events lost
 *
 * Every command reads the rotated set in order (cw_audit_open_files), so a
 * rotation never hides records. Lines that are not records are reported on
 * stderr with their file and line, never skipped in silence.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "audit/audit.h"
#include "cli/cli.h"
#include "engine/engine.h"

static const char *prog = "cmdwarden audit";

/* A warning about a line: its reason and jansson's text. */
#define WARN_LEN 300
/* What tail -f reads at once. */
#define FOLLOW_BLOCK (64 * 1024)
/* How long tail -f waits for more, and for a rotated file's name. */
#define FOLLOW_NAP_NS (100 * 1000 * 1000)
#define LISTING_NAP_NS (10 * 1000 * 1000)
/* The most records tail -n shows. */
#define TAIL_MAX 1000000

enum { OPT_AUDIT = 2000, OPT_ANCHOR, OPT_INV, OPT_TYPE, OPT_SINCE, OPT_UNTIL,
       OPT_VERDICT, OPT_JSON, OPT_HELP };


static void usage(FILE *f)
{
	fprintf(f,
		"usage: cmdwarden audit verify [--anchor SEQ:SHA256] [FILE]\n"
		"       cmdwarden audit tail [-n N] [-f] [FILE]\n"
		"       cmdwarden audit query [--invocation ID] [--type T[,T...]]\n"
		"                             [--since TIME] [--until TIME] [--verdict V] [FILE]\n"
		"       cmdwarden audit stats [--json] [FILE]\n"
		"\n"
		"FILE is the audit log (default " CW_DEFAULT_AUDIT ", or --audit FILE);\n"
		"its rotated files (FILE.1, FILE.2, ...) are read with it, oldest first.\n"
		"TIME is RFC 3339 (2026-11-30T01:02:03Z, fractions and offsets allowed),\n"
		"a date (2026-11-30, midnight UTC), or an age such as 90s, 15m, 2h, 7d.\n"
		"\n"
		"verify exits 0 when the chain is intact and 1 at the first broken,\n"
		"reordered, edited, missing or torn line, named as FILE:LINE. It prints\n"
		"the last record as an anchor (SEQ:SHA256): kept elsewhere and given to a\n"
		"later verify with --anchor, it shows records cut from the log's end.\n");
}

/* ---- reading the set ---- */

struct reader_stats {
	size_t nfiles;
	uint64_t bad_lines;
	bool incomplete_tail;
	/* When set, the file with this inode is read only to stop_at: what
	 * follows is for `tail -f`. */
	bool stop;
	dev_t stop_dev;
	ino_t stop_ino;
	off_t stop_at;
	bool stop_found;	/* the file was in the set */
	off_t stop_end;		/* where its last complete line read ends */
};

typedef int (*line_fn)(void *ctx, json_t *rec, const char *line, size_t len,
		       const char *file, unsigned long lineno);

static void warn_line(const char *file, unsigned long lineno, const char *what)
{
	fprintf(stderr, "%s: %s:%lu: %s\n", prog, file, lineno, what);
}

/*
 * Calls fn for every record of the set, in order. A line that is not a
 * JSON object is reported and counted; a last line without its newline (a
 * write cut short or still under way) too. fn returning non-zero stops.
 */
static int read_set(const char *path, line_fn fn, void *ctx,
		    struct reader_stats *rs)
{
	struct cw_error err = { 0 };
	char **files = NULL, *line = NULL;
	size_t nfiles = 0, cap = 0, i;
	int *fds = NULL, ret;

	ret = cw_audit_open_files(path, &files, &fds, &nfiles, &err);
	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", prog, err.source[0] ? err.source : path,
			err.text);
		return ret;
	}
	for (i = 0; i < nfiles && !ret; i++) {
		unsigned long lineno = 0;
		FILE *f = fdopen(fds[i], "r");
		off_t limit = -1, done = 0;
		struct stat st;
		ssize_t n;

		if (f)
			fds[i] = -1; /* fclose closes it */
		if (!f) {
			ret = -errno;
			fprintf(stderr, "%s: %s: %s\n", prog, files[i],
				strerror(errno));
			break;
		}
		if (rs->stop && !fstat(fileno(f), &st) &&
		    st.st_dev == rs->stop_dev && st.st_ino == rs->stop_ino) {
			limit = rs->stop_at;
			rs->stop_found = true;
		}
		while (!ret && (limit < 0 || done < limit) &&
		       (n = getline(&line, &cap, f)) > 0) {
			json_error_t jerr;
			json_t *rec;

			done += n;
			lineno++;
			if (line[n - 1] != '\n') {
				warn_line(files[i], lineno,
					  "incomplete last line (a write cut short or under way), skipped");
				rs->incomplete_tail = true;
				break;
			}
			if (limit >= 0)
				rs->stop_end = done;
			line[--n] = '\0';
			rec = json_loadb(line, (size_t)n, 0, &jerr);
			if (!json_is_object(rec)) {
				char why[WARN_LEN];

				snprintf(why, sizeof(why),
					 "not a record (%s), skipped; run 'cmdwarden audit verify'",
					 rec ? "not a JSON object" : jerr.text);
				warn_line(files[i], lineno, why);
				rs->bad_lines++;
				json_decref(rec);
				continue;
			}
			ret = fn(ctx, rec, line, (size_t)n, files[i], lineno);
			json_decref(rec);
		}
		if (ferror(f) && !ret) {
			ret = -EIO;
			fprintf(stderr, "%s: %s: read error\n", prog, files[i]);
		}
		fclose(f);
	}
	free(line);
	rs->nfiles = nfiles;
	cw_audit_close_files(files, fds, nfiles);
	return ret;
}

/* Writes a record line; a closed stdout ends the command quietly. */
static int emit(const char *line, size_t len)
{
	if (fwrite(line, 1, len, stdout) != len || putchar('\n') == EOF)
		return -EPIPE;
	return 0;
}

/* ---- options shared by the subcommands ---- */

/* The log named by --audit or the one positional argument. */
static const char *log_path(const char *opt, int argc, char **argv,
			    const char *sub)
{
	if (optind < argc - 1 || (opt && optind < argc)) {
		fprintf(stderr, "%s %s: one audit log at most, got \"%s\"%s\n",
			prog, sub, argv[argc - 1],
			opt ? " besides --audit" : " and more");
		return NULL;
	}
	if (optind < argc)
		return argv[optind];
	return opt ? opt : CW_DEFAULT_AUDIT;
}

/* ---- verify ---- */

/* "SEQ:SHA256" */
static int parse_anchor(const char *s, struct cw_audit_anchor *a)
{
	unsigned long long seq;
	char *end;

	if (*s < '1' || *s > '9')
		return -EINVAL;
	errno = 0;
	seq = strtoull(s, &end, 10);
	if (errno || *end != ':' || strlen(end + 1) != CW_AUDIT_HASH_HEX ||
	    strspn(end + 1, "0123456789abcdef") != CW_AUDIT_HASH_HEX)
		return -EINVAL;
	a->seq = seq;
	memcpy(a->hash, end + 1, sizeof(a->hash));
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "anchor", required_argument, NULL, OPT_ANCHOR },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *opt = NULL, *path;
	struct cw_audit_anchor anchor, *ap = NULL;
	struct cw_audit_verified v;
	struct cw_error err = { 0 };
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_AUDIT:
			opt = optarg;
			break;
		case OPT_ANCHOR:
			if (parse_anchor(optarg, &anchor)) {
				fprintf(stderr, "%s verify: --anchor wants SEQ:SHA256 as printed by an earlier verify (1234:9f86d0...), got \"%s\"\n",
					prog, optarg);
				return 2;
			}
			ap = &anchor;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	path = log_path(opt, argc, argv, "verify");
	if (!path)
		return 2;
	ret = cw_audit_verify_ex(path, ap, &v, &err);
	if (ret == -EBADMSG) {
		if (err.line > 0)
			fprintf(stderr, "%s verify: %s:%d: %s\n", prog,
				err.source, err.line, err.text);
		else
			fprintf(stderr, "%s verify: %s: %s\n", prog,
				err.source, err.text);
		fprintf(stderr, "%s verify: %" PRIu64 " records intact before it\n",
			prog, v.records);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "%s verify: %s: %s\n", prog,
			err.source[0] ? err.source : path, err.text);
		return 1;
	}
	printf("%s: ok, %" PRIu64 " record%s in %zu file%s, the chain intact%s\n",
	       path, v.records, v.records == 1 ? "" : "s", v.files,
	       v.files == 1 ? "" : "s", ap ? " through the anchor" : "");
	if (v.pruned_at)
		printf("starts at seq %" PRIu64 ": retention removed the older files, recorded at seq %" PRIu64 "\n",
		       v.first_seq, v.pruned_at);
	if (v.records)
		printf("anchor: %" PRIu64 ":%s\n", v.last_seq, v.last_hash);
	return 0;
}

/* ---- tail ---- */

struct ring {
	char **v;
	size_t cap, n, next;
};

static int ring_add(void *ctx, json_t *rec, const char *line, size_t len,
		    const char *file, unsigned long lineno)
{
	struct ring *r = ctx;
	char *copy;

	(void)rec;
	(void)file;
	(void)lineno;
	if (!r->cap)
		return 0;
	copy = strndup(line, len);
	if (!copy)
		return -ENOMEM;
	free(r->v[r->next]);
	r->v[r->next] = copy;
	r->next = (r->next + 1) % r->cap;
	if (r->n < r->cap)
		r->n++;
	return 0;
}

/* Prints the complete lines from fd's offset on; keeps a partial one. */
static int follow_read(int fd, char **pend, size_t *npend)
{
	char buf[FOLLOW_BLOCK];
	ssize_t got;

	for (;;) {
		char *p, *nl, *start;
		size_t total;

		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : 0;
		p = realloc(*pend, *npend + (size_t)got);
		if (!p)
			return -ENOMEM;
		*pend = p;
		memcpy(p + *npend, buf, (size_t)got);
		total = *npend + (size_t)got;
		start = p;
		while ((nl = memchr(start, '\n', total - (size_t)(start - p)))) {
			if (emit(start, (size_t)(nl - start)))
				return -EPIPE;
			start = nl + 1;
		}
		*npend = total - (size_t)(start - p);
		memmove(p, start, *npend);
		if (fflush(stdout))
			return -EPIPE;
	}
}

/*
 * The file of the set that comes after the one fd holds, opened. The one
 * fd holds is found in the listing by inode; the next is opened by name
 * (its number plus one) rather than taken from the listing, because a
 * directory read while a rotation links and renames files may miss an
 * entry. The listing's next file is the fallback (a file removed by hand).
 */
static int next_in_set(const char *path, int fd)
{
	struct stat fst, st;
	char **files = NULL, *name = NULL;
	size_t n = 0, i;
	int nfd = -1, tries;
	long k;

	if (fstat(fd, &fst))
		return open(path, O_RDONLY | O_CLOEXEC);
	for (tries = 0; tries < 5 && nfd < 0; tries++) {
		if (cw_audit_files(path, &files, &n, NULL))
			break;
		for (i = 0; i + 1 < n; i++) {
			if (stat(files[i], &st) || st.st_ino != fst.st_ino ||
			    st.st_dev != fst.st_dev)
				continue;
			k = cw_audit_rotated_index(files[i], path);
			if (k > 0 && asprintf(&name, "%s.%ld", path, k + 1) >= 0) {
				nfd = open(name, O_RDONLY | O_CLOEXEC);
				free(name);
				name = NULL;
			}
			if (nfd < 0)
				nfd = open(files[i + 1], O_RDONLY | O_CLOEXEC);
			break;
		}
		cw_audit_files_free(files, n);
		files = NULL;
		if (nfd < 0 && i + 1 >= n) {
			/* not listed (yet): the listing may have missed it */
			struct timespec nap = { 0, LISTING_NAP_NS };

			nanosleep(&nap, NULL);
		}
	}
	/* Not in the set any more (moved away): go on with the current. */
	return nfd >= 0 ? nfd : open(path, O_RDONLY | O_CLOEXEC);
}

/* Follows the log from fd's offset, through any number of rotations. */
static int follow(const char *path, int fd)
{
	struct timespec nap = { 0, FOLLOW_NAP_NS };
	struct stat fst, pst;
	char *pend = NULL;
	size_t npend = 0;
	int ret = 0;

	for (;;) {
		ret = follow_read(fd, &pend, &npend);
		if (ret)
			break;
		/* Rotated: this file is read to its end, then the next one
		 * of the set from its start. */
		if (!stat(path, &pst) && !fstat(fd, &fst) &&
		    (pst.st_ino != fst.st_ino || pst.st_dev != fst.st_dev)) {
			int nfd;

			ret = follow_read(fd, &pend, &npend);
			if (ret)
				break;
			nfd = next_in_set(path, fd);
			if (nfd < 0) {
				ret = -errno;
				break;
			}
			close(fd);
			fd = nfd;
			npend = 0; /* a torn line of the old file stays there */
			continue;
		}
		nanosleep(&nap, NULL);
	}
	free(pend);
	close(fd);
	if (ret == -EPIPE)
		return 0; /* the reader went away */
	fprintf(stderr, "%s tail: %s: %s\n", prog, path, strerror(-ret));
	return 1;
}

static int cmd_tail(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "lines", required_argument, NULL, 'n' },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct reader_stats rs = { 0 };
	const char *opt = NULL, *path;
	struct ring r = { 0 };
	bool follow_on = false;
	unsigned long n = 10;
	struct stat st;
	size_t i;
	char *end;
	int c, fd, ret = 0;

	while ((c = getopt_long(argc, argv, "n:f", opts, NULL)) != -1) {
		switch (c) {
		case OPT_AUDIT:
			opt = optarg;
			break;
		case 'n':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] < '0' || optarg[0] > '9' ||
			    n > TAIL_MAX) {
				fprintf(stderr, "%s tail: -n wants a number of records from 0 to %d, got \"%s\"\n",
					prog, TAIL_MAX, optarg);
				return 2;
			}
			break;
		case 'f':
			follow_on = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	path = log_path(opt, argc, argv, "tail");
	if (!path)
		return 2;
	r.cap = n;
	r.v = calloc(n ? n : 1, sizeof(*r.v));
	if (!r.v)
		return 1;
	/* Opened first: what the file holds now is tailed, whatever comes
	 * after is followed. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s tail: %s: %s\n", prog, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(r.v);
		return 1;
	}
	rs.stop = true;
	rs.stop_dev = st.st_dev;
	rs.stop_ino = st.st_ino;
	rs.stop_at = st.st_size;
	ret = read_set(path, ring_add, &r, &rs);
	for (i = 0; !ret && i < r.n; i++) {
		const char *l = r.v[(r.next + r.cap - r.n + i) % r.cap];

		if (emit(l, strlen(l)))
			ret = -EPIPE;
	}
	for (i = 0; i < r.cap; i++)
		free(r.v[i]);
	free(r.v);
	/* Following starts after the last whole line shown, so a line
	 * being written when the tail began comes out whole. */
	if (ret || fflush(stdout) || !follow_on ||
	    lseek(fd, rs.stop_found ? rs.stop_end : st.st_size, SEEK_SET) < 0) {
		close(fd);
		return ret && ret != -EPIPE ? 1 : 0;
	}
	return follow(path, fd);
}

/* ---- query ---- */

/* Parses TIME into microseconds since the epoch; 0 or -EINVAL. */
static int parse_time(const char *s, int64_t now_us, int64_t *out)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0, off = 0;
	int64_t frac = 0, scale = 1000000;
	struct tm tm = { 0 };
	const char *p;
	char unit;
	double v;
	time_t t;

	/* An age: 90s, 15m, 2h, 7d. */
	if (sscanf(s, "%lf%c%n", &v, &unit, &n) == 2 && !s[n] && v >= 0 &&
	    strchr("smhd", unit) && strspn(s, "0123456789.") == strlen(s) - 1) {
		double mul = unit == 's' ? 1 : unit == 'm' ? 60 :
			     unit == 'h' ? 3600 : 86400;

		*out = now_us - (int64_t)(v * mul * 1e6);
		return 0;
	}
	n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -EINVAL;
	p = s + 10;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		n = 0;
		if (sscanf(p + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) != 3 ||
		    n != 8)
			return -EINVAL;
		p += 9;
		if (*p == '.') {
			for (p++; *p >= '0' && *p <= '9'; p++) {
				if (scale > 1) {
					scale /= 10;
					frac += (*p - '0') * scale;
				}
			}
		}
		if (*p == 'Z' || *p == 'z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int oh, om;

			n = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &n) != 2 ||
			    n != 5 || oh > 23 || om > 59)
				return -EINVAL;
			off = (oh * 60 + om) * 60 * (*p == '+' ? 1 : -1);
			p += 6;
		} else {
			return -EINVAL; /* a time needs its zone */
		}
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = ((int64_t)t - off) * 1000000 + frac;
	return 0;
}

struct query {
	const char *invocation;
	char **types;
	size_t ntypes;
	const char *verdict;
	char since[CW_TS_LEN], until[CW_TS_LEN]; /* as the log writes ts, or "" */
	uint64_t matched;
};

static int query_line(void *ctx, json_t *rec, const char *line, size_t len,
		      const char *file, unsigned long lineno)
{
	struct query *q = ctx;
	const char *ts = json_string_value(json_object_get(rec, "ts"));
	const char *type = json_string_value(json_object_get(rec, "type"));
	size_t i;

	(void)file;
	(void)lineno;
	if (q->invocation) {
		const char *inv =
			json_string_value(json_object_get(rec, "invocation"));

		if (!inv || strcmp(inv, q->invocation))
			return 0;
	}
	if (q->ntypes) {
		bool hit = false;

		for (i = 0; type && i < q->ntypes; i++)
			hit |= !strcmp(type, q->types[i]);
		if (!hit)
			return 0;
	}
	if (q->verdict) {
		const char *v = json_string_value(json_object_get(rec, "verdict"));

		if (!v || strcmp(v, q->verdict))
			return 0;
	}
	/* Fixed-width RFC 3339 UTC sorts as text. */
	if (q->since[0] && (!ts || strcmp(ts, q->since) < 0))
		return 0;
	if (q->until[0] && (!ts || strcmp(ts, q->until) > 0))
		return 0;
	q->matched++;
	return emit(line, len);
}

static int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "invocation", required_argument, NULL, OPT_INV },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "verdict", required_argument, NULL, OPT_VERDICT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct reader_stats rs = { 0 };
	struct query q = { 0 };
	const char *opt = NULL, *path;
	int64_t now = cw_now_us(), t;
	char *types = NULL, *tok, *save;
	int c, ret = 2;
	size_t i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_AUDIT:
			opt = optarg;
			break;
		case OPT_INV:
			if (!*optarg) {
				fprintf(stderr, "%s query: --invocation wants an id such as inv-0123456789abcdef\n",
					prog);
				goto out;
			}
			q.invocation = optarg;
			break;
		case OPT_TYPE:
			free(types);
			types = strdup(optarg);
			if (!types)
				goto out;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (parse_time(optarg, now, &t)) {
				fprintf(stderr, "%s query: --%s wants RFC 3339 (2026-11-30T01:02:03Z), a date (2026-11-30) or an age (90s, 15m, 2h, 7d), got \"%s\"\n",
					prog, c == OPT_SINCE ? "since" : "until",
					optarg);
				goto out;
			}
			cw_format_ts(t, c == OPT_SINCE ? q.since : q.until,
				     sizeof(q.since));
			break;
		case OPT_VERDICT:
			q.verdict = optarg;
			break;
		case OPT_HELP:
			usage(stdout);
			ret = 0;
			goto out;
		default:
			goto out;
		}
	}
	for (tok = types ? strtok_r(types, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char **v;

		if (cw_audit_type_find(tok) < 0) {
			fprintf(stderr, "%s query: --type \"%s\" is not a record type; expected one of",
				prog, tok);
			for (i = 0; cw_audit_types[i]; i++)
				fprintf(stderr, "%s %s", i ? "," : "",
					cw_audit_types[i]);
			fprintf(stderr, "\n");
			goto out;
		}
		v = realloc(q.types, (q.ntypes + 1) * sizeof(*v));
		if (!v)
			goto out;
		q.types = v;
		q.types[q.ntypes++] = tok;
	}
	if (types && !q.ntypes) {
		fprintf(stderr, "%s query: --type wants one or more record types separated by commas\n",
			prog);
		goto out;
	}
	if (q.since[0] && q.until[0] && strcmp(q.since, q.until) > 0) {
		fprintf(stderr, "%s query: --since %s is after --until %s\n",
			prog, q.since, q.until);
		goto out;
	}
	path = log_path(opt, argc, argv, "query");
	if (!path)
		goto out;
	ret = read_set(path, query_line, &q, &rs);
	if (ret == -EPIPE)
		ret = 0;
	ret = ret ? 1 : 0;
	fflush(stdout);
out:
	free(q.types);
	free(types);
	return ret;
}

/* ---- stats ---- */

struct stats {
	uint64_t records;
	json_t *by_type, *verdicts, *limits, *sources;
	uint64_t net_denied, seccomp_records, seccomp_denied,
		seccomp_suppressed, events_lost, calls;
	bool seccomp_from_exit;
	char first_ts[CW_TS_LEN], last_ts[CW_TS_LEN];
};

static void bump(json_t *o, const char *key, json_int_t by)
{
	json_t *v = json_object_get(o, key);

	json_object_set_new(o, key,
			    json_integer((v ? json_integer_value(v) : 0) + by));
}

static json_int_t int_at(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);

	if (b)
		v = json_object_get(v, b);
	return json_is_integer(v) && json_integer_value(v) > 0 ?
		       json_integer_value(v) : 0;
}

static int stats_line(void *ctx, json_t *rec, const char *line, size_t len,
		      const char *file, unsigned long lineno)
{
	struct stats *s = ctx;
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *ts = json_string_value(json_object_get(rec, "ts"));
	json_t *srcs, *src;
	const char *v;
	size_t i;

	(void)line;
	(void)len;
	(void)file;
	(void)lineno;
	s->records++;
	if (ts) {
		if (!s->first_ts[0])
			snprintf(s->first_ts, sizeof(s->first_ts), "%s", ts);
		snprintf(s->last_ts, sizeof(s->last_ts), "%s", ts);
	}
	if (!type)
		type = "(none)";
	bump(s->by_type, type, 1);
	switch (cw_audit_type_find(type)) {
	case CW_AUDIT_TYPE_DECISION:
		v = json_string_value(json_object_get(rec, "verdict"));
		bump(s->verdicts, v ? v : "(none)", 1);
		break;
	case CW_AUDIT_TYPE_NET:
		v = json_string_value(json_object_get(rec, "verdict"));
		if (v && !strcmp(v, "deny"))
			s->net_denied++;
		break;
	case CW_AUDIT_TYPE_LIMIT:
		v = json_string_value(json_object_get(rec, "limit"));
		bump(s->limits, v ? v : "(none)", 1);
		break;
	case CW_AUDIT_TYPE_SECCOMP:
		s->seccomp_records++;
		break;
	case CW_AUDIT_TYPE_EXIT:
		s->calls++;
		/* Kernel event sources count what they could not record. */
		s->events_lost += (uint64_t)int_at(rec, "events_lost", NULL);
		/* Calls per kernel event source, "none" when none watched. */
		srcs = json_object_get(rec, "sources");
		if (json_is_array(srcs) && !json_array_size(srcs))
			bump(s->sources, "none", 1);
		json_array_foreach(srcs, i, src)
			if (json_is_string(src))
				bump(s->sources, json_string_value(src), 1);
		if (json_is_object(json_object_get(rec, "seccomp"))) {
			s->seccomp_from_exit = true;
			s->seccomp_denied +=
				(uint64_t)int_at(rec, "seccomp", "denied");
			s->seccomp_suppressed +=
				(uint64_t)int_at(rec, "seccomp", "suppressed");
		}
		break;
	default:
		break;
	}
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct reader_stats rs = { 0 };
	struct stats s = { 0 };
	const char *opt = NULL, *path, *k;
	size_t nfiles = 0;
	bool as_json = false;
	json_t *o = NULL, *val;
	int c, ret = 2;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_AUDIT:
			opt = optarg;
			break;
		case OPT_JSON:
			as_json = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			return 2;
		}
	}
	path = log_path(opt, argc, argv, "stats");
	if (!path)
		return 2;
	s.by_type = json_object();
	s.verdicts = json_object();
	s.limits = json_object();
	s.sources = json_object();
	if (!s.by_type || !s.verdicts || !s.limits || !s.sources)
		goto out;
	if (read_set(path, stats_line, &s, &rs)) {
		ret = 1;
		goto out;
	}
	nfiles = rs.nfiles;
	/* Records written before exit records carried the count. */
	if (!s.seccomp_from_exit)
		s.seccomp_denied = s.seccomp_records;
	o = json_pack("{s:s, s:I, s:I, s:s?, s:s?, s:I, s:O, s:O, s:I, s:O, s:{s:I, s:I, s:I}, s:I, s:O, s:I, s:b}",
		      "log", path, "files", (json_int_t)nfiles, "records",
		      (json_int_t)s.records, "first_ts",
		      s.first_ts[0] ? s.first_ts : NULL, "last_ts",
		      s.last_ts[0] ? s.last_ts : NULL, "calls",
		      (json_int_t)s.calls, "by_type", s.by_type, "decisions",
		      s.verdicts, "net_denied", (json_int_t)s.net_denied,
		      "limits", s.limits, "seccomp", "denied",
		      (json_int_t)s.seccomp_denied, "recorded",
		      (json_int_t)s.seccomp_records, "suppressed",
		      (json_int_t)s.seccomp_suppressed, "events_lost",
		      (json_int_t)s.events_lost, "event_sources", s.sources,
		      "unreadable_lines",
		      (json_int_t)rs.bad_lines, "incomplete_last_line",
		      rs.incomplete_tail);
	if (!o)
		goto out;
	if (as_json) {
		char *txt = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		if (!txt)
			goto out;
		puts(txt);
		free(txt);
	} else {
		printf("log               %s (%zu file%s)\n", path, nfiles,
		       nfiles == 1 ? "" : "s");
		printf("records           %" PRIu64 "%s%s%s%s\n", s.records,
		       s.first_ts[0] ? ", " : "", s.first_ts,
		       s.first_ts[0] ? " to " : "", s.last_ts);
		printf("calls run         %" PRIu64 "\n", s.calls);
		printf("by type          ");
		json_object_foreach(s.by_type, k, val)
			printf(" %s=%" JSON_INTEGER_FORMAT, k,
			       json_integer_value(val));
		printf("\ndecisions        ");
		json_object_foreach(s.verdicts, k, val)
			printf(" %s=%" JSON_INTEGER_FORMAT, k,
			       json_integer_value(val));
		printf("\nnet denied        %" PRIu64 "\n", s.net_denied);
		printf("limits hit       ");
		json_object_foreach(s.limits, k, val)
			printf(" %s=%" JSON_INTEGER_FORMAT, k,
			       json_integer_value(val));
		printf("\nseccomp denied    %" PRIu64 " (%" PRIu64
		       " recorded, %" PRIu64 " counted only)\n",
		       s.seccomp_denied, s.seccomp_records,
		       s.seccomp_suppressed);
		printf("events lost       %" PRIu64 "\n", s.events_lost);
		printf("event sources    ");
		json_object_foreach(s.sources, k, val)
			printf(" %s=%" JSON_INTEGER_FORMAT, k,
			       json_integer_value(val));
		printf("  (calls)\n");
		printf("unreadable lines  %" PRIu64 "%s\n", rs.bad_lines,
		       rs.incomplete_tail ? " (and an incomplete last line)" :
					    "");
	}
	ret = 0;
out:
	json_decref(o);
	json_decref(s.by_type);
	json_decref(s.verdicts);
	json_decref(s.limits);
	json_decref(s.sources);
	return ret;
}

int cw_cmd_audit(int argc, char **argv)
{
	const char *sub;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	sub = argv[1];
	argc--;
	argv++;
	optind = 1;
	if (!strcmp(sub, "verify"))
		return cmd_verify(argc, argv);
	if (!strcmp(sub, "tail"))
		return cmd_tail(argc, argv);
	if (!strcmp(sub, "query"))
		return cmd_query(argc, argv);
	if (!strcmp(sub, "stats"))
		return cmd_stats(argc, argv);
	if (!strcmp(sub, "--help") || !strcmp(sub, "help") || !strcmp(sub, "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "%s: unknown subcommand \"%s\"; expected verify, tail, query or stats\n",
		prog, sub);
	usage(stderr);
	return 2;
}
