/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup_fs (cw_cgfs_*): reading and writing the files of a cgroup
 * directory (whole files, single numbers, "key N" lines), its child
 * cgroups, bounded flock waits. Used by cgroup.c and cgroup_call.c.
 */
#ifndef CW_KERNEL_CGROUP_FS_H
#define CW_KERNEL_CGROUP_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

/* A set of names (no duplicates), as the child cgroups of a directory. */
struct cw_cgfs_names {
	char **v;
	size_t n, cap;
};

void cw_cgfs_names_free(struct cw_cgfs_names *s);

void cw_cgfs_sleep_us(long us);
/* Reads a whole file below dirfd into b (NUL-terminated). */
int cw_cgfs_read(int dirfd, const char *name, struct cw_buf *b);
int cw_cgfs_write(int dirfd, const char *name, const char *s);
/* A single number ("max" reads as UINT64_MAX). */
int cw_cgfs_read_u64(int dirfd, const char *name, uint64_t *v);
/* The value of "key N" in the text of a flat keyed file; -ENOENT. */
int cw_cgfs_parse_key(const char *text, const char *key, uint64_t *v);
/* The same read from a file such as memory.events. */
int cw_cgfs_read_key(int dirfd, const char *name, const char *key,
		     uint64_t *v);
bool cw_cgfs_exists(int dirfd, const char *name);
/* Subdirectories of a cgroup directory (its child cgroups), added to out. */
int cw_cgfs_subdirs(int fd, struct cw_cgfs_names *out);
/* flock with a bounded wait, so a stuck peer cannot hang the agent. */
int cw_cgfs_lock_wait(int fd, int op, int64_t timeout_us);
/* a/b (a malloc'd string), NULL without memory. */
char *cw_cgfs_join(const char *a, const char *b);

#endif
