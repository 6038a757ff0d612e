/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small shared helpers: diagnostics, clocks, growable buffers.
 */
#ifndef CW_LIB_UTIL_H
#define CW_LIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* One error, shaped like jansson's json_error_t plus the JSON path. */
struct cw_error {
	char source[256]; /* file name or "<embedded>", "" if none */
	int line;         /* 1-based, 0 if unknown */
	int column;       /* 1-based, 0 if unknown */
	char path[256];   /* JSON path such as tools.run_command.limits[0].window */
	char text[512];   /* what was wrong and what was expected */
};

/* A list of errors; parsers append every problem they find. */
struct cw_diag {
	struct cw_error *items;
	size_t n;
	size_t cap;
};

void cw_diag_init(struct cw_diag *d);
void cw_diag_free(struct cw_diag *d);
/* Appends an error; never fails (drops past 1000 entries, noting it). */
void cw_diag_add(struct cw_diag *d, const char *source, int line, int column,
		 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* "source:line:column: path: text" into buf. */
void cw_error_format(const struct cw_error *e, char *buf, size_t len);

void cw_error_set(struct cw_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* True when path is dir or lies beneath it, at a component boundary
 * ("/" holds every path; trailing slashes of dir are ignored). */
bool cw_path_under(const char *path, const char *dir);

/* Microseconds since the epoch (CLOCK_REALTIME). */
int64_t cw_now_us(void);
/* Microseconds of CLOCK_MONOTONIC. */
int64_t cw_mono_us(void);
/* The time ms milliseconds from now on clock clk, as the deadline of a
 * pthread_cond_timedwait whose condition uses that clock. */
void cw_deadline_ms(clockid_t clk, int64_t ms, struct timespec *ts);
/* RFC 3339 UTC with microseconds: 2026-11-29T21:18:13.123456Z: 27 bytes and
 * the NUL; CW_TS_LEN leaves room for a year past 9999. */
#define CW_TS_LEN 40
void cw_format_ts(int64_t us, char *buf, size_t len);

/* Growable byte buffer. */
struct cw_buf {
	char *data;
	size_t len;
	size_t cap;
};
int cw_buf_append(struct cw_buf *b, const void *p, size_t n); /* 0 / -ENOMEM */
/* Room for n more bytes and a NUL after them: 0 / -ENOMEM. */
int cw_buf_reserve(struct cw_buf *b, size_t n);
void cw_buf_free(struct cw_buf *b);

/* Random identifier of 16 hex chars prefixed by prefix ("inv-"). */
void cw_random_id(const char *prefix, char *buf, size_t len);

/* A shell variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool cw_is_identifier(const char *s);

/* write() all of it, retrying on EINTR; 0 or -errno. */
int cw_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes, retrying after EINTR and short reads: 0, -EIO at
 * an early end of file, or -errno. */
int cw_read_all(int fd, void *p, size_t n);

/* Signal sig's disposition set to handler (SIG_DFL or SIG_IGN) through
 * rt_sigaction itself, as glibc's sigaction refuses its own signals 32 and
 * 33; 0 or -errno. Touches no lock or heap: safe in a vfork child. */
int cw_signal_set(int sig, void (*handler)(int));

#define CW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
