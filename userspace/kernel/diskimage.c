// SPDX-License-Identifier: Apache-2.0
/* diskimage: a writable tree's budget on disk (kernel/diskimage.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/diskimage.h"
#include "kernel/mountinfo.h"
#include "kernel/tmpfs.h"

#define MIB (1024ll * 1024)
/* Tries at a free loop device: another process may take the one the
 * kernel named before this one configures it. */
#define LOOP_TRIES 8

extern char **environ;

bool cw_diskimage_path(const char *dir, const char *tree, char *buf,
		       size_t len)
{
	const unsigned char *p = (const unsigned char *)tree;
	size_t o = (size_t)snprintf(buf, len, "%s/", dir), start = o;

	while (*p == '/')
		p++;
	for (; *p && o + 4 < len; p++) {
		if (isalnum(*p) || *p == '.' || *p == '-')
			buf[o++] = (char)*p;
		else
			o += (size_t)snprintf(buf + o, len - o, "_%02x", *p);
	}
	if (*p || o >= len)
		return false;
	buf[o] = '\0';
	if (o == start && o + 4 < len)
		o += (size_t)snprintf(buf + o, len - o, "root");
	return o + sizeof(".ext4") <= len &&
	       snprintf(buf + o, len - o, ".ext4") == 5;
}

/* The backing file of the loop device a mount at tree comes from, when
 * the top mount there is one: 0 with file set, else -ENOENT. */
static int mounted_from(const char *tree, char *file, size_t len)
{
	struct cw_mountinfo *mi = cw_mountinfo_open();
	const struct cw_mount *m;
	char src[64] = "", path[128];
	ssize_t n;
	int fd;

	if (!mi)
		return -errno;
	/* the last line of a mount point is its top mount */
	while ((m = cw_mountinfo_next(mi)))
		if (!strcmp(m->point, tree))
			snprintf(src, sizeof(src), "%s", m->source);
	cw_mountinfo_close(mi);
	if (strncmp(src, "/dev/loop", 9))
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file",
		 src + 5);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, file, len - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	file[n] = '\0';
	file[strcspn(file, "\n")] = '\0';
	return 0;
}

/* Runs mkfs.ext4 on image: 0, or -errno with why. */
static int make_fs(const char *image, int64_t inodes, uid_t uid, gid_t gid,
		   char *why, size_t len)
{
	static const char *const mkfs[] = { "/usr/sbin/mkfs.ext4",
					    "/sbin/mkfs.ext4" };
	char n[32], ext[64];
	const char *prog = NULL;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	size_t i;
	int rc, status;

	for (i = 0; i < sizeof(mkfs) / sizeof(mkfs[0]) && !prog; i++)
		if (access(mkfs[i], X_OK) == 0)
			prog = mkfs[i];
	if (!prog) {
		snprintf(why, len, "no mkfs.ext4 (install e2fsprogs)");
		return -ENOENT;
	}
	snprintf(n, sizeof(n), "%lld", (long long)inodes);
	snprintf(ext, sizeof(ext), "root_owner=%u:%u", (unsigned)uid,
		 (unsigned)gid);
	{
		/* no reserved blocks: the budget is the calls' whole */
		char *const argv[] = { (char *)prog, "-q", "-F", "-m", "0",
				       "-N", n, "-E", ext, (char *)image, NULL };

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	if (rc) {
		snprintf(why, len, "%s: %s", prog, strerror(rc));
		return -rc;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(why, len, "%s %s failed (status %d)", prog, image, status);
	return -EIO;
}

/* Makes image (sparse, mb MiB) with its file system: 0, or -errno. */
static int make_image(const char *dir, const char *image, int64_t mb,
		      int64_t inodes, const struct stat *owner, char *why,
		      size_t len)
{
	int fd, rc;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(why, len, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	fd = open(image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "%s: %s", image, strerror(-rc));
		return rc;
	}
	rc = ftruncate(fd, (off_t)(mb * MIB)) < 0 ? -errno : 0;
	close(fd);
	if (rc == 0)
		rc = make_fs(image, inodes, owner->st_uid, owner->st_gid, why,
			     len);
	else
		snprintf(why, len, "%s: %s", image, strerror(-rc));
	if (rc < 0)
		unlink(image);
	return rc;
}

/* A free loop device configured on image, detaching itself when
 * unmounted: its descriptor, with its name in dev; or -errno. */
static int attach(const char *image, char *dev, size_t dlen, char *why,
		  size_t len)
{
	struct loop_config cfg;
	int ctl, img, loop = -1, rc = -EBUSY, i;
	long n;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		rc = -errno;
		snprintf(why, len, "/dev/loop-control: %s (the kernel's loop driver is not loaded)",
			 strerror(-rc));
		return rc;
	}
	img = open(image, O_RDWR | O_CLOEXEC);
	if (img < 0) {
		rc = -errno;
		snprintf(why, len, "%s: %s", image, strerror(-rc));
		close(ctl);
		return rc;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = (unsigned)img;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name),
		 "%s", image);
	for (i = 0; i < LOOP_TRIES; i++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			rc = -errno;
			break;
		}
		snprintf(dev, dlen, "/dev/loop%ld", n);
		loop = open(dev, O_RDWR | O_CLOEXEC);
		if (loop < 0) {
			rc = -errno;
			break;
		}
		if (ioctl(loop, LOOP_CONFIGURE, &cfg) == 0) {
			rc = 0;
			break;
		}
		rc = -errno;
		close(loop);
		loop = -1;
		if (rc != -EBUSY)
			break;
	}
	close(img);
	close(ctl);
	if (rc < 0) {
		snprintf(why, len, "a loop device for %s: %s", image,
			 strerror(-rc));
		return rc;
	}
	return loop;
}

/* What the file system at tree holds. */
static void capacity(const char *tree, int64_t *mb, int64_t *inodes)
{
	struct statvfs v;

	*mb = *inodes = 0;
	if (statvfs(tree, &v) == 0) {
		*mb = (int64_t)((uint64_t)v.f_blocks * v.f_frsize / MIB);
		*inodes = (int64_t)v.f_files;
	}
}

int cw_diskimage_budget(const char *tree, const char *dir, int64_t max_mb,
			int64_t max_inodes, char *image, size_t ilen,
			int64_t *mb, int64_t *inodes, char *why, size_t len)
{
	char from[PATH_MAX], dev[32], lost[PATH_MAX];
	bool made = false;
	struct stat st;
	int rc, loop;

	why[0] = '\0';
	*mb = *inodes = 0;
	if (!cw_diskimage_path(dir, tree, image, ilen)) {
		snprintf(why, len, "%s: the image's name is too long", tree);
		return -ENAMETOOLONG;
	}
	rc = cw_tree_stat(tree, &st, why, len);
	if (rc < 0)
		return rc;
	if (cw_tree_mount_point(tree)) {
		/* the agent's restart: mounted from its image already */
		char real[PATH_MAX];

		if (mounted_from(tree, from, sizeof(from)) == 0 &&
		    realpath(image, real) && !strcmp(from, real)) {
			capacity(tree, mb, inodes);
			return 0;
		}
		snprintf(why, len, "%s is a mount point, not from its image %s",
			 tree, image);
		return -EEXIST;
	}
	rc = cw_tree_empty(tree, "an image", why, len);
	if (rc < 0)
		return rc;
	if (access(image, F_OK) < 0) {
		rc = make_image(dir, image, max_mb, max_inodes, &st, why, len);
		if (rc < 0)
			return rc;
		made = true;
	}
	loop = attach(image, dev, sizeof(dev), why, len);
	if (loop < 0)
		return loop;
	if (mount(dev, tree, "ext4", MS_NOSUID | MS_NODEV, "") < 0) {
		int err = -errno;

		snprintf(why, len, "%s: mounting %s (%s): %s", tree, dev,
			 image, strerror(-err));
		close(loop);	/* unmounted, so AUTOCLEAR frees it now */
		return err;
	}
	close(loop);
	if (made) {
		/* mkfs's lost+found would appear in the workspace */
		snprintf(lost, sizeof(lost), "%s/lost+found", tree);
		rmdir(lost);
		if (chmod(tree, st.st_mode & 07777) < 0) {
			rc = -errno;
			snprintf(why, len, "%s: %s", tree, strerror(-rc));
			return rc;
		}
	}
	capacity(tree, mb, inodes);
	return 0;
}
