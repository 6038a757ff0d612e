// SPDX-License-Identifier: Apache-2.0
/*
 * Access to cgroupfs files for the per-call cgroups: what cgroup.c and
 * cgroup_call.c read and write, with errors as -errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/cgroup_fs.h"

/* Read size of one chunk of a cgroup file. */
#define READ_CHUNK 4096

void cw_cgfs_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int names_add(struct cw_cgfs_names *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(name);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

void cw_cgfs_names_free(struct cw_cgfs_names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Reads a whole file below dirfd into b (NUL-terminated). */
int cw_cgfs_read(int dirfd, const char *name, struct cw_buf *b)
{
	char chunk[READ_CHUNK];
	int fd, ret = 0;
	ssize_t n;

	b->len = 0;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cw_buf_append(b, "", 0);
	while (!ret) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		ret = cw_buf_append(b, chunk, (size_t)n);
	}
	close(fd);
	return ret;
}

int cw_cgfs_write(int dirfd, const char *name, const char *s)
{
	int fd, ret;

	fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cw_write_all(fd, s, strlen(s));
	close(fd);
	return ret;
}

/* A single number ("max" reads as UINT64_MAX). */
int cw_cgfs_read_u64(int dirfd, const char *name, uint64_t *v)
{
	struct cw_buf b = { 0 };
	char *end;
	int ret;

	ret = cw_cgfs_read(dirfd, name, &b);
	if (ret)
		goto out;
	if (!strncmp(b.data, "max", 3)) {
		*v = UINT64_MAX;
		goto out;
	}
	errno = 0;
	*v = strtoull(b.data, &end, 10);
	if (errno || end == b.data)
		ret = -EINVAL;
out:
	cw_buf_free(&b);
	return ret;
}

/* The value of "key N" in the text of a flat keyed file. */
int cw_cgfs_parse_key(const char *text, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			*v = strtoull(line + klen + 1, NULL, 10);
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

/* The value of "key N" in a flat keyed file such as memory.events. */
int cw_cgfs_read_key(int dirfd, const char *name, const char *key,
		     uint64_t *v)
{
	struct cw_buf b = { 0 };
	int ret;

	ret = cw_cgfs_read(dirfd, name, &b);
	if (!ret)
		ret = cw_cgfs_parse_key(b.data, key, v);
	cw_buf_free(&b);
	return ret;
}

bool cw_cgfs_exists(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, 0) == 0;
}

/* Subdirectories of a cgroup directory: its child cgroups. */
int cw_cgfs_subdirs(int fd, struct cw_cgfs_names *out)
{
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int dfd, ret = 0;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode))
				continue;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		ret = names_add(out, de->d_name);
		if (ret)
			break;
	}
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	return ret;
}

/* flock with a bounded wait, so a stuck peer cannot hang the agent. */
int cw_cgfs_lock_wait(int fd, int op, int64_t timeout_us)
{
	int64_t until = cw_mono_us() + timeout_us;

	for (;;) {
		if (!flock(fd, op | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (cw_mono_us() >= until)
			return -ETIMEDOUT;
		cw_cgfs_sleep_us(5000);
	}
}

char *cw_cgfs_join(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/",
		     b) < 0)
		return NULL;
	return s;
}
