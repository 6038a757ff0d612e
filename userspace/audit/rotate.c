// SPDX-License-Identifier: Apache-2.0
/*
 * Size-based rotation (audit.h): the full file kept as "<path>.<N>", a new
 * one put in its place whose first record continues the chain; a writer
 * following a rotation another writer made; retention, which removes the
 * oldest files past a total size; and the files of a rotated log, listed
 * and opened as one consistent set for the readers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit_int.h"

/* Tries before giving up on a log that is replaced again and again while a
 * writer follows it or a reader lists its files. */
#define RACE_TRIES 8

/* N when name is "<base>.<N>" (N decimal, no sign), else -1. */
static long rotated_index(const char *name, const char *base)
{
	size_t n = strlen(base);
	const char *d;
	char *end;
	long v;

	if (strncmp(name, base, n) || name[n] != '.' || name[n + 1] < '0' ||
	    name[n + 1] > '9')
		return -1;
	d = name + n + 1;
	errno = 0;
	v = strtol(d, &end, 10);
	if (errno || *end || v < 0 || (d[0] == '0' && d[1]))
		return -1;
	return v;
}

long cw_audit_rotated_index(const char *file, const char *path)
{
	return rotated_index(audit_base_of(file), audit_base_of(path));
}

/*
 * The rotated files of the log at path, oldest first, with path itself
 * last when it exists. Rotated files are "<path>.<N>", N counting up from
 * 1 in the order they were rotated.
 */
static int list_set(const char *path, char ***out, size_t *nout, long *maxn)
{
	char *dir = audit_dir_of(path);
	const char *base = audit_base_of(path);
	struct { long n; char *p; } *v = NULL, tmp;
	size_t nv = 0, i, j;
	struct dirent *de;
	struct stat st;
	char **files = NULL;
	DIR *d = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	*nout = 0;
	if (maxn)
		*maxn = 0;
	if (!dir)
		goto out;
	d = opendir(dir);
	if (!d) {
		ret = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		long n = rotated_index(de->d_name, base);
		void *nvp;

		if (n < 0)
			continue;
		nvp = realloc(v, (nv + 1) * sizeof(*v));
		if (!nvp)
			goto out;
		v = nvp;
		/* A bare name stays bare: "audit.jsonl.1", not "./...". */
		if (asprintf(&v[nv].p, "%s%s%s", strchr(path, '/') ? dir : "",
			     strchr(path, '/') ? "/" : "", de->d_name) < 0)
			goto out;
		v[nv++].n = n;
	}
	/* Few files: insertion sort by N. */
	for (i = 1; i < nv; i++)
		for (j = i; j > 0 && v[j - 1].n > v[j].n; j--) {
			tmp = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	files = calloc(nv + 2, sizeof(*files));
	if (!files)
		goto out;
	for (i = 0; i < nv; i++) {
		files[i] = v[i].p;
		v[i].p = NULL;
	}
	if (nv && maxn)
		*maxn = v[nv - 1].n;
	*nout = nv;
	if (!stat(path, &st)) {
		files[nv] = strdup(path);
		if (!files[nv])
			goto out;
		(*nout)++;
	}
	*out = files;
	files = NULL;
	ret = 0;
out:
	if (files) {
		for (i = 0; files[i]; i++)
			free(files[i]);
		free(files);
		*nout = 0;
	}
	for (i = 0; v && i < nv; i++)
		free(v[i].p);
	free(v);
	if (d)
		closedir(d);
	free(dir);
	return ret;
}

static void free_set(char **files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/*
 * Another writer rotated the log: path now names a new file while our
 * descriptors hold the old one. Called with the flock on the old file
 * held; on return 0 the descriptors are the new file's, locked, and st is
 * its fstat. A log deleted while open stays an error.
 */
int audit_follow_path(struct cw_audit *a, struct stat *st,
		      struct cw_error *err)
{
	const int wflags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY;
	const int rflags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
	struct stat pst, rst;
	int tries, wfd, rfd, ret;

	for (tries = 0; tries < RACE_TRIES; tries++) {
		if (st->st_nlink == 0) {
			audit_err(err, a->path, 0,
				  "the audit log was deleted while open; restart to create a new one");
			return -ENOENT;
		}
		if (stat(a->path, &pst)) {
			ret = -errno;
			audit_err(err, a->path, 0,
				  "the audit log was moved away while open (%s); restart to create a new one",
				  audit_errstr(-ret));
			return ret;
		}
		if (pst.st_dev == st->st_dev && pst.st_ino == st->st_ino)
			return 0;
		wfd = open(a->path, wflags);
		if (wfd < 0) {
			ret = -errno;
			audit_err(err, a->path, 0,
				  "opening the rotated audit log failed: %s",
				  audit_errstr(-ret));
			return ret;
		}
		rfd = open(a->path, rflags);
		if (rfd < 0 || fstat(wfd, st) || fstat(rfd, &rst) ||
		    rst.st_ino != st->st_ino || rst.st_dev != st->st_dev) {
			ret = rfd < 0 ? -errno : -ESTALE;
			if (rfd >= 0)
				close(rfd);
			close(wfd);
			if (ret == -ESTALE)
				continue; /* replaced again meanwhile */
			audit_err(err, a->path, 0,
				  "opening the rotated audit log failed: %s",
				  audit_errstr(-ret));
			return ret;
		}
		/* Closing the old descriptors drops the old file's flock. */
		close(a->wfd);
		close(a->rfd);
		a->wfd = wfd;
		a->rfd = rfd;
		a->tail_known = false;
		ret = audit_lock_file(a->wfd, LOCK_EX);
		if (ret) {
			audit_err(err, a->path, 0, "flock failed: %s",
				  audit_errstr(-ret));
			return ret;
		}
		if (fstat(a->wfd, st)) {
			ret = -errno;
			audit_err(err, a->path, 0, "fstat failed: %s",
				  audit_errstr(-ret));
			return ret;
		}
	}
	audit_err(err, a->path, 0,
		  "the audit log keeps being replaced; is another program rotating it?");
	return -ESTALE;
}

/*
 * Size-based rotation, called under the old file's flock with the new
 * file's first record in line. The old file keeps its records and gets the
 * next free name "<path>.<N>"; a new file takes its place at path, created
 * aside with that record already in it and durable, then renamed over
 * path, so path always names a whole log. The record carries the old
 * file's last hash in prev and its name in rotated_from.
 */
int audit_rotate(struct cw_audit *a, const struct cw_buf *line,
		 const char *rotated_name, const char *rotated_path,
		 bool linked, struct cw_error *err)
{
	char *tmp = NULL, *dir = NULL;
	int fd = -1, rfd = -1, ret;

	/* Deferred records of the old file become durable before it moves. */
	if (fdatasync(a->wfd)) {
		ret = -errno;
		audit_err(err, a->path, 0, "fdatasync before rotation failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	dir = audit_dir_of(a->path);
	if (!dir || asprintf(&tmp, "%s.rotating.%d", a->path, (int)getpid()) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory to rotate the log");
		goto out;
	}
	unlink(tmp); /* left by a writer of this pid that crashed */
	fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
			       O_NOCTTY, 0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		ret = -errno;
		audit_err(err, tmp, 0, "creating the next audit log failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	ret = cw_write_all(fd, line->data, line->len);
	if (!ret && fdatasync(fd))
		ret = -errno;
	if (ret) {
		audit_err(err, tmp, 0, "writing the next audit log failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	rfd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (rfd < 0) {
		ret = -errno;
		audit_err(err, tmp, 0, "opening for reading failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	if (!linked && link(a->path, rotated_path)) {
		ret = -errno;
		audit_err(err, rotated_path, 0,
			  "keeping the full audit log under this name failed: %s",
			  audit_errstr(-ret));
		goto out;
	}
	if (rename(tmp, a->path)) {
		ret = -errno;
		audit_err(err, a->path, 0,
			  "putting the next audit log in place failed: %s",
			  audit_errstr(-ret));
		if (!linked)
			unlink(rotated_path);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	ret = audit_fsync_dir(dir);
	if (ret) {
		/* Both names exist; only their durability is in doubt. */
		audit_err(err, a->path, 0,
			  "syncing the directory after rotating to %s failed: %s",
			  rotated_name, audit_errstr(-ret));
	}
	/* Closing the old descriptors releases the old file's flock. */
	close(a->wfd);
	close(a->rfd);
	a->wfd = fd;
	a->rfd = rfd;
	fd = rfd = -1;
	/* Others may append to the new file as soon as it is in place. */
	a->end = (off_t)line->len;
	a->bytes_out += line->len;
out:
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (rfd >= 0)
		close(rfd);
	if (fd >= 0)
		close(fd);
	free(dir);
	return ret;
}

/* The name the current file gets when rotated; *linked when a crash left
 * it linked already (the highest rotated name is the current file). */
int audit_rotation_name(struct cw_audit *a, const struct stat *st,
			char **rpath, bool *linked, struct cw_error *err)
{
	struct stat rst;
	char **files;
	size_t n;
	long maxn;
	int ret;

	*linked = false;
	*rpath = NULL;
	ret = list_set(a->path, &files, &n, &maxn);
	if (ret) {
		audit_err(err, a->path, 0,
			  "listing the rotated audit logs failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	free_set(files, n);
	if (maxn > 0 && asprintf(rpath, "%s.%ld", a->path, maxn) > 0 &&
	    !stat(*rpath, &rst) && rst.st_ino == st->st_ino &&
	    rst.st_dev == st->st_dev) {
		*linked = true;
		return 0;
	}
	free(*rpath);
	*rpath = NULL;
	if (maxn >= LONG_MAX - 1 ||
	    asprintf(rpath, "%s.%ld", a->path, maxn + 1) < 0) {
		*rpath = NULL;
		audit_err(err, a->path, 0, "no name left to rotate to");
		return -ENOMEM;
	}
	return 0;
}

/* The first record of the file at path, parsed. */
static int first_record(const char *path, struct rec_info *ri,
			struct cw_error *err)
{
	char blk[4096], why[WHY_LEN];
	struct cw_buf line = { 0 };
	const char *nl = NULL;
	ssize_t got;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		audit_err(err, path, 0, "opening failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	while (!nl && line.len < CW_AUDIT_MAX_LINE) {
		got = read(fd, blk, sizeof(blk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		nl = memchr(blk, '\n', (size_t)got);
		if (cw_buf_append(&line, blk,
				  nl ? (size_t)(nl - blk) : (size_t)got)) {
			ret = -ENOMEM;
			audit_err(err, path, 1, "no memory");
			goto out;
		}
	}
	ret = audit_parse_record(line.data ? line.data : "", line.len, ri, why,
				 sizeof(why));
	if (ret)
		audit_err(err, path, 1, "not a record (%s)", why);
out:
	cw_buf_free(&line);
	close(fd);
	return ret;
}

/*
 * Retention: the rotated files, oldest first, are removed until the rest
 * and a current file at its rotation size fit max_total; the current file
 * always stays. The record names them and gives the seq and SHA-256 of
 * the last record they held, as the first file kept continues them
 * (its first record's seq less one and its prev), so a verifier can tell
 * a removal the log recorded from files taken away.
 */
int audit_prune_plan(struct cw_audit *a, json_t **fields, char ***victims,
		     size_t *nvictims, struct cw_error *err)
{
	uint64_t rotated = 0, removed = 0, room;
	struct rec_info ri;
	json_t *names = NULL;
	char **files;
	struct stat st;
	size_t n, i, k;
	int ret;

	*fields = NULL;
	*victims = NULL;
	*nvictims = 0;
	ret = list_set(a->path, &files, &n, NULL);
	if (ret) {
		audit_err(err, a->path, 0,
			  "listing the rotated audit logs failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	if (n < 2 || strcmp(files[n - 1], a->path))
		goto out;	/* nothing rotated, or no current file */
	for (i = 0; i + 1 < n; i++)
		if (!stat(files[i], &st))
			rotated += (uint64_t)st.st_size;
	room = a->max_total > a->max_bytes ? a->max_total - a->max_bytes : 0;
	for (k = 0; k + 1 < n && rotated - removed > room; k++)
		if (!stat(files[k], &st))
			removed += (uint64_t)st.st_size;
	if (!k)
		goto out;
	ret = first_record(files[k], &ri, err);
	if (ret)
		goto out;
	if (ri.seq < 2 || !ri.prev[0]) {
		audit_err(err, files[k], 1,
			  "its first record continues nothing; not removing the files before it");
		ret = -EBADMSG;
		goto out;
	}
	names = json_array();
	for (i = 0; names && i < k; i++)
		if (json_array_append_new(names,
				json_string(audit_base_of(files[i]))))
			break;
	if (names && i == k)
		*fields = json_pack("{s:o, s:I, s:I, s:s, s:I}",
				    "removed", names,
				    "removed_bytes", (json_int_t)removed,
				    "through_seq", (json_int_t)(ri.seq - 1),
				    "through_hash", ri.prev,
				    "max_total", (json_int_t)a->max_total);
	else
		json_decref(names);
	if (!*fields) {
		ret = -ENOMEM;
		audit_err(err, a->path, 0, "no memory");
		goto out;
	}
	*victims = files;
	*nvictims = k;
	for (i = k; i < n; i++) {
		free(files[i]);
		files[i] = NULL;
	}
	files = NULL;
out:
	if (files)
		free_set(files, n);
	return ret;
}

int audit_prune_remove(struct cw_audit *a, char **victims, size_t n,
		       struct cw_error *err)
{
	char *dir = audit_dir_of(a->path);
	size_t i;
	int ret = 0;

	for (i = 0; i < n; i++)
		if (unlink(victims[i]) && errno != ENOENT && !ret) {
			ret = -errno;
			audit_err(err, victims[i], 0,
				  "removing the oldest audit log failed: %s",
				  audit_errstr(-ret));
		}
	if (dir && !ret) {
		ret = audit_fsync_dir(dir);
		if (ret)
			audit_err(err, a->path, 0,
				  "syncing the directory after removing the oldest audit logs failed: %s",
				  audit_errstr(-ret));
	}
	free(dir);
	free_set(victims, n);
	return ret;
}

void cw_audit_set_max_total(struct cw_audit *a, uint64_t max_total)
{
	pthread_mutex_lock(&a->lock);
	a->max_total = max_total;
	pthread_mutex_unlock(&a->lock);
}

void cw_audit_set_max_bytes(struct cw_audit *a, uint64_t max_bytes)
{
	pthread_mutex_lock(&a->lock);
	a->max_bytes = max_bytes;
	pthread_mutex_unlock(&a->lock);
}

int cw_audit_files(const char *path, char ***files, size_t *n,
		   struct cw_error *err)
{
	char *base = NULL, *dot;
	char **all = NULL;
	size_t nall = 0, i;
	struct stat st;
	int ret;

	*files = NULL;
	*n = 0;
	if (!path || !*path) {
		audit_err(err, "", 0, "no audit log path given");
		return -EINVAL;
	}
	/* A rotated file names the set up to itself. */
	dot = strrchr(audit_base_of(path), '.');
	if (dot && (base = strndup(path, (size_t)(dot - path))) &&
	    rotated_index(audit_base_of(path), audit_base_of(base)) >= 0) {
		ret = list_set(base, &all, &nall, NULL);
		for (i = 0; !ret && i < nall; i++) {
			if (strcmp(audit_base_of(all[i]), audit_base_of(path)))
				continue;
			while (nall > i + 1)
				free(all[--nall]);
			all[nall] = NULL;
			*files = all;
			*n = nall;
			free(base);
			return 0;
		}
		free_set(all, nall);
		all = NULL;
		nall = 0;
	}
	free(base);
	if (stat(path, &st)) {
		ret = -errno;
		audit_err(err, path, 0, "opening the audit log failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	ret = list_set(path, &all, &nall, NULL);
	if (ret) {
		audit_err(err, path, 0, "listing the audit log's directory failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	if (nall == 0 || strcmp(all[nall - 1], path)) {
		/* The rotated files alone are no log: the current one is
		 * where the chain ends. */
		free_set(all, nall);
		audit_err(err, path, 0, "opening the audit log failed: %s",
			  audit_errstr(ENOENT));
		return -ENOENT;
	}
	*files = all;
	*n = nall;
	return 0;
}

void cw_audit_files_free(char **files, size_t n)
{
	free_set(files, n);
}

/* The two lists hold the same names in the same order. */
static bool same_names(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

int cw_audit_open_files(const char *path, char ***files, int **fds,
			size_t *n, struct cw_error *err)
{
	char **names = NULL, **again = NULL;
	size_t nn = 0, na = 0, i, opened;
	int *v = NULL, tries, ret = 0;

	*files = NULL;
	*fds = NULL;
	*n = 0;
	/* Rotation only adds names: the same list before and after opening
	 * means the descriptors are one consistent set. */
	for (tries = 0; tries < RACE_TRIES; tries++) {
		ret = cw_audit_files(path, &names, &nn, err);
		if (ret)
			return ret;
		v = calloc(nn ? nn : 1, sizeof(*v));
		if (!v) {
			cw_audit_files_free(names, nn);
			audit_err(err, path, 0, "no memory");
			return -ENOMEM;
		}
		for (opened = 0; opened < nn; opened++) {
			v[opened] = open(names[opened], O_RDONLY | O_CLOEXEC |
								O_NOCTTY | O_NONBLOCK);
			if (v[opened] < 0)
				break;
		}
		if (opened == nn) {
			ret = cw_audit_files(path, &again, &na, err);
			if (!ret && same_names(names, nn, again, na)) {
				cw_audit_files_free(again, na);
				*files = names;
				*fds = v;
				*n = nn;
				return 0;
			}
			cw_audit_files_free(again, na);
		} else {
			ret = -errno;
			audit_err(err, names[opened],
				  0, "opening the audit log failed: %s",
				  audit_errstr(-ret));
		}
		for (i = 0; i < opened; i++)
			close(v[i]);
		free(v);
		cw_audit_files_free(names, nn);
		if (ret && ret != -ENOENT)
			return ret;
	}
	audit_err(err, path, 0,
		  "the log keeps rotating while being read; try again");
	return -EAGAIN;
}

void cw_audit_close_files(char **files, int *fds, size_t n)
{
	size_t i;

	for (i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	cw_audit_files_free(files, n);
}
