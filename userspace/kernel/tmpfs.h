/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tmpfs: a byte and inode budget for a writable tree (sandbox.disk).
 *
 * The tree becomes a tmpfs of at most max_mb and max_inodes, mounted in
 * the sandbox's own mount namespace so that the calls, the sandbox user
 * and the sandbox's services see the same files. A write past the budget
 * fails with ENOSPC in the tree only: a runaway call cannot fill the disk
 * the agent, its audit log and the sandbox's services write to. A tree
 * that is a tmpfs already keeps its files and gets the limits by a
 * remount; an empty directory gets a new tmpfs with its owner and mode; a
 * directory holding files is left alone (a mount would hide them) and
 * reported. The mount outlives the agent: the files in it are the
 * sandbox's, and a restart finds a tmpfs and sets the limits again.
 */
#ifndef CW_KERNEL_TMPFS_H
#define CW_KERNEL_TMPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* stat of tree, which must be a directory: 0, or -errno with why. */
int cw_tree_stat(const char *tree, struct stat *st, char *why, size_t len);

/* Whether tree is itself a mount point (not only on one). */
bool cw_tree_mount_point(const char *tree);

/* 0 when tree holds nothing, else -ENOTEMPTY (or -errno) with why saying
 * that what ("a tmpfs") mounted over it would hide its entries. */
int cw_tree_empty(const char *tree, const char *what, char *why, size_t len);

/* 0, or -errno with why saying what stands in the way. */
int cw_tmpfs_budget(const char *tree, int64_t max_mb, int64_t max_inodes,
		    char *why, size_t len);

#endif
