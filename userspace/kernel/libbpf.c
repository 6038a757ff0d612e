// SPDX-License-Identifier: Apache-2.0
/*
 * The libbpf output collector and the ring-buffer size, shared by the BPF
 * loaders.
 *
 * libbpf prints through one process-wide function; while a loader runs it
 * is collect(), which keeps, per thread (libbpf calls back in the thread
 * that loads), what an error message needs and prints nothing. A verifier
 * log arrives as one message from "-- BEGIN PROG LOAD LOG --" to
 * "-- END PROG LOAD LOG --"; its last lines are a summary ("processed N
 * insns", "verification time") that says nothing about the cause, so the
 * line kept is the one before.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/libbpf.h"

/* One line kept from libbpf's output, with its NUL. */
#define LINE_MAX_LEN 256

static __thread struct {
	bool in_log;
	char line[LINE_MAX_LEN];	/* last line outside a verifier log */
	char prog[LINE_MAX_LEN];	/* first failure line naming a prog */
	char vlast[LINE_MAX_LEN];	/* last telling line of this log */
	char verifier[LINE_MAX_LEN];	/* ... of the last complete log */
	char last[LINE_MAX_LEN];	/* last whole message outside a log */
} lbuf;

static bool is_summary(const char *line)
{
	return !strncmp(line, "processed ", 10) ||
	       !strncmp(line, "verification time", 17);
}

static const char *unprefixed(const char *s)
{
	return strncmp(s, "libbpf: ", 8) ? s : s + 8;
}

static void copy_line(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", unprefixed(src));
}

/* The whole message, cut to a line's length: the last one that is
 * neither a verifier log nor its summary. */
static void keep_message(const char *fmt, va_list ap)
{
	char msg[LINE_MAX_LEN];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (n && !is_summary(msg) && !strstr(msg, "PROG LOAD LOG"))
		copy_line(lbuf.last, sizeof(lbuf.last), msg);
}

/* Line by line: the verifier's last word and libbpf's own lines. */
static void keep_lines(char *buf)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end = strstr(line, "-- END PROG LOAD LOG --");

		if (strstr(line, "-- BEGIN PROG LOAD LOG --")) {
			lbuf.in_log = true;
			lbuf.vlast[0] = '\0';
		} else if (end) {
			/* A log without a final newline ends on this line. */
			*end = '\0';
			if (lbuf.in_log && *line)
				copy_line(lbuf.vlast, sizeof(lbuf.vlast), line);
			lbuf.in_log = false;
			snprintf(lbuf.verifier, sizeof(lbuf.verifier), "%s",
				 lbuf.vlast);
		} else if (lbuf.in_log) {
			if (*line && !is_summary(line))
				copy_line(lbuf.vlast, sizeof(lbuf.vlast), line);
		} else if (*line) {
			copy_line(lbuf.line, sizeof(lbuf.line), line);
			if (!lbuf.prog[0] && strstr(line, "prog '") &&
			    strstr(line, "fail"))
				copy_line(lbuf.prog, sizeof(lbuf.prog), line);
		}
	}
}

static int collect(enum libbpf_print_level level, const char *fmt,
		   va_list ap)
{
	char *buf = NULL;
	va_list aq;
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	va_copy(aq, ap);
	keep_message(fmt, aq);
	va_end(aq);
	n = vasprintf(&buf, fmt, ap);
	if (n >= 0) {
		keep_lines(buf);
		free(buf);
	}
	return 0;
}

libbpf_print_fn_t cw_libbpf_log_begin(void)
{
	memset(&lbuf, 0, sizeof(lbuf));
	return libbpf_set_print(collect);
}

void cw_libbpf_log_end(libbpf_print_fn_t old)
{
	libbpf_set_print(old);
}

void cw_libbpf_error(struct cw_error *err, const char *what, int e)
{
	const char *detail = lbuf.prog[0] ? lbuf.prog : lbuf.line;

	cw_error_set(err, "%s: %s%s%s%s%s", what, strerror(e),
		     detail[0] ? ": " : "", detail,
		     lbuf.verifier[0] ? "; verifier: " : "", lbuf.verifier);
}

const char *cw_libbpf_last(void)
{
	return lbuf.last;
}

unsigned long cw_libbpf_ringbuf_bytes(unsigned kib, unsigned default_kib)
{
	unsigned long want, n = (unsigned long)sysconf(_SC_PAGESIZE);

	want = (unsigned long)(kib ? kib : default_kib) * 1024;
	while (n < want)
		n <<= 1;
	return n;
}
