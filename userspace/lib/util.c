// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"

#define CW_DIAG_MAX 1000

void cw_diag_init(struct cw_diag *d)
{
	memset(d, 0, sizeof(*d));
}

void cw_diag_free(struct cw_diag *d)
{
	free(d->items);
	memset(d, 0, sizeof(*d));
}

void cw_diag_add(struct cw_diag *d, const char *source, int line, int column,
		 const char *path, const char *fmt, ...)
{
	struct cw_error *e;
	va_list ap;

	if (d->n >= CW_DIAG_MAX)
		return;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct cw_error *items = realloc(d->items, cap * sizeof(*items));

		if (!items)
			return;
		d->items = items;
		d->cap = cap;
	}
	e = &d->items[d->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->source, sizeof(e->source), "%s", source ? source : "");
	e->line = line;
	e->column = column;
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

void cw_error_format(const struct cw_error *e, char *buf, size_t len)
{
	char pos[64] = "";

	if (e->line > 0)
		snprintf(pos, sizeof(pos), ":%d:%d", e->line, e->column);
	snprintf(buf, len, "%s%s%s%s%s%s", e->source, pos,
		 e->source[0] || pos[0] ? ": " : "", e->path,
		 e->path[0] ? ": " : "", e->text);
}

void cw_error_set(struct cw_error *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

int64_t cw_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool cw_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

int64_t cw_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void cw_deadline_ms(clockid_t clk, int64_t ms, struct timespec *ts)
{
	clock_gettime(clk, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void format_ts_slow(int64_t us, char *buf, size_t len)
{
	time_t secs = (time_t)(us / 1000000);
	struct tm tm;
	char base[32];

	gmtime_r(&secs, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lldZ", base, (long long)(us % 1000000));
}

void cw_format_ts(int64_t us, char *buf, size_t len)
{
	/* Records come thousands a second: each thread formats the date
	 * and time once a second and only the microseconds each time. */
	static __thread int64_t cached_sec = -1;
	static __thread char base[32];
	static __thread size_t base_len;
	int64_t frac = us % 1000000;
	int i;

	if (us < 0) {
		format_ts_slow(us, buf, len);
		return;
	}
	if (us / 1000000 != cached_sec) {
		time_t secs = (time_t)(us / 1000000);
		struct tm tm;

		cached_sec = -1;
		if (!gmtime_r(&secs, &tm))
			goto slow;
		base_len = strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S",
				    &tm);
		if (!base_len)
			goto slow;
		cached_sec = us / 1000000;
	}
	/* ".123456Z" and the NUL must fit, else snprintf truncates */
	if (base_len + 9 > len)
		goto slow;
	memcpy(buf, base, base_len);
	buf[base_len] = '.';
	for (i = 6; i > 0; i--, frac /= 10)
		buf[base_len + (size_t)i] = (char)('0' + frac % 10);
	buf[base_len + 7] = 'Z';
	buf[base_len + 8] = '\0';
	return;
slow:
	format_ts_slow(us, buf, len);
}

int cw_buf_reserve(struct cw_buf *b, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *data;

		while (cap < b->len + n + 1)
			cap *= 2;
		data = realloc(b->data, cap);
		if (!data)
			return -ENOMEM;
		b->data = data;
		b->cap = cap;
	}
	return 0;
}

int cw_buf_append(struct cw_buf *b, const void *p, size_t n)
{
	if (cw_buf_reserve(b, n))
		return -ENOMEM;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void cw_buf_free(struct cw_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void cw_random_id(const char *prefix, char *buf, size_t len)
{
	unsigned char r[8];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* Ids need uniqueness, not secrecy: fall back. */
			int64_t t = cw_mono_us() ^ ((int64_t)getpid() << 32);

			memcpy(r, &t, sizeof(r));
			break;
		}
		got += (size_t)n;
	}
	snprintf(buf, len, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0],
		 r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
}

bool cw_is_identifier(const char *s)
{
	size_t i;

	if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (i = 1; s[i]; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

int cw_read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int cw_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The kernel's struct sigaction on x86-64, for rt_sigaction(2). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

int cw_signal_set(int sig, void (*handler)(int))
{
	struct kernel_sigaction ksa = { .handler = handler };

	return syscall(SYS_rt_sigaction, sig, &ksa, NULL, sizeof(ksa.mask)) ?
		       -errno : 0;
}
