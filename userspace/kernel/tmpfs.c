// SPDX-License-Identifier: Apache-2.0
/* tmpfs: a writable tree's budget (kernel/tmpfs.h). */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "kernel/tmpfs.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* The entries of dir, but for . and ..: how many, or -errno. */
static long entries(const char *dir)
{
	struct dirent *d;
	long n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return -errno;
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

int cw_tree_stat(const char *tree, struct stat *st, char *why, size_t len)
{
	int rc;

	why[0] = '\0';
	if (stat(tree, st) < 0) {
		rc = -errno;
		snprintf(why, len, "%s: %s", tree, strerror(-rc));
		return rc;
	}
	if (!S_ISDIR(st->st_mode)) {
		snprintf(why, len, "%s: not a directory", tree);
		return -ENOTDIR;
	}
	return 0;
}

bool cw_tree_mount_point(const char *tree)
{
	char parent[4200];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", tree);
	return stat(tree, &a) == 0 && stat(parent, &b) == 0 &&
	       (a.st_dev != b.st_dev || a.st_ino == b.st_ino);
}

int cw_tree_empty(const char *tree, const char *what, char *why, size_t len)
{
	long n = entries(tree);

	if (n == 0)
		return 0;
	if (n < 0)
		snprintf(why, len, "%s: %s", tree, strerror((int)-n));
	else
		snprintf(why, len, "%s holds %ld entr%s that %s mounted over it would hide: empty it, or mount it when the sandbox boots",
			 tree, n, n == 1 ? "y" : "ies", what);
	return n < 0 ? (int)n : -ENOTEMPTY;
}

int cw_tmpfs_budget(const char *tree, int64_t max_mb, int64_t max_inodes,
		    char *why, size_t len)
{
	char opts[160];
	struct statfs fs;
	struct stat st;
	int rc;

	rc = cw_tree_stat(tree, &st, why, len);
	if (rc < 0)
		return rc;
	if (statfs(tree, &fs) < 0) {
		rc = -errno;
		snprintf(why, len, "%s: %s", tree, strerror(-rc));
		return rc;
	}
	if (fs.f_type == TMPFS_MAGIC && cw_tree_mount_point(tree)) {
		/* its files stay; only the limits change */
		snprintf(opts, sizeof(opts), "size=%lldm,nr_inodes=%lld",
			 (long long)max_mb, (long long)max_inodes);
		if (mount(NULL, tree, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV,
			  opts) == 0)
			return 0;
		rc = -errno;
		snprintf(why, len, "%s: setting the tmpfs's limits (%s): %s%s",
			 tree, opts, strerror(-rc),
			 rc == -EINVAL ? " (it may hold more than that now)" :
					 "");
		return rc;
	}
	rc = cw_tree_empty(tree, "a tmpfs", why, len);
	if (rc < 0)
		return rc;
	snprintf(opts, sizeof(opts),
		 "size=%lldm,nr_inodes=%lld,mode=%o,uid=%u,gid=%u",
		 (long long)max_mb, (long long)max_inodes,
		 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
		 (unsigned)st.st_gid);
	if (mount("cmdwarden-disk", tree, "tmpfs", MS_NOSUID | MS_NODEV,
		  opts) == 0)
		return 0;
	rc = -errno;
	snprintf(why, len, "%s: mounting a tmpfs (%s): %s", tree, opts,
		 strerror(-rc));
	return rc;
}
