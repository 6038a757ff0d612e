/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diskimage: a byte and inode budget for a writable tree that keeps its
 * files on disk (sandbox.disk.image), where a tmpfs (kernel/tmpfs.h) would
 * hold them in memory.
 *
 * The tree becomes an ext4 file system of its own, in an image file of
 * max_mb (sparse: it takes the disk's space as files fill it, and never
 * more than max_mb) made with at least max_inodes inodes, loop-mounted
 * nosuid,nodev at the tree in the sandbox's own mount namespace. A write
 * past the budget fails with ENOSPC in the tree only. The loop device
 * detaches when the tree is unmounted (LO_FLAGS_AUTOCLEAR). A tree already
 * mounted from its image (the agent restarted) is left as it is; after a
 * reboot the empty tree gets its image, and its files, back. An image made
 * before keeps the size it was made with. A directory holding files is
 * left alone (a mount would hide them) and reported. Needs the kernel's
 * loop driver and mkfs.ext4 (e2fsprogs).
 */
#ifndef CW_KERNEL_DISKIMAGE_H
#define CW_KERNEL_DISKIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The image file of tree in dir ("/home/user" -> DIR/home_2fuser.ext4),
 * written to buf; false when it does not fit. */
bool cw_diskimage_path(const char *dir, const char *tree, char *buf,
		       size_t len);

/* Gives tree its image (made in dir when there is none), whose path
 * (cw_diskimage_path) it writes to image: 0, or -errno with why saying
 * what stands in the way. *mb and *inodes are what the file system
 * mounted there holds. */
int cw_diskimage_budget(const char *tree, const char *dir, int64_t max_mb,
			int64_t max_inodes, char *image, size_t ilen,
			int64_t *mb, int64_t *inodes, char *why, size_t len);

#endif
