/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mountinfo: the one reader of the kernel's mount and cgroup tables,
 * /proc/self/mountinfo and /proc/<pid>/cgroup. A mountinfo line splits into
 * the fields cmdwarden uses (the mounted root, the mount point, the
 * filesystem type, the superblock options), with the kernel's octal escapes
 * undone; cw_mountinfo_find answers "where is fstype mounted, and where in
 * it is this cgroup", the question cgroup.c and probe.c both ask.
 */
#ifndef CW_KERNEL_MOUNTINFO_H
#define CW_KERNEL_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

#define CW_MOUNTINFO_PATH "/proc/self/mountinfo"

/* One line; the strings point into the line it was parsed from. */
struct cw_mount {
	char *root;	/* the part of the filesystem mounted */
	char *point;	/* where */
	char *fstype;
	char *source;
	char *super;	/* superblock options; "" when the line has none */
};

/* Splits line (changed in place: fields cut, escapes undone) into m.
 * false when it is not a mountinfo line. */
bool cw_mountinfo_parse(char *line, struct cw_mount *m);

/* Reading the table line by line. open returns NULL with errno set; next
 * returns NULL at the end (lines that do not parse are passed over); the
 * mount it returns lives until the next call. */
struct cw_mountinfo;
struct cw_mountinfo *cw_mountinfo_open(void);
/* The same for a table in another file (tests). */
struct cw_mountinfo *cw_mountinfo_open_path(const char *path);
const struct cw_mount *cw_mountinfo_next(struct cw_mountinfo *mi);
void cw_mountinfo_close(struct cw_mountinfo *mi);

/*
 * The first mount of fstype (whose superblock options include opt, when
 * given). With cgpath, the mount must show that cgroup path and dir
 * receives the directory of it; without, dir receives the mount point.
 * The mount point goes to point when given. 0, -ENOENT (no such mount),
 * -EXDEV (mounted, but cgpath lies outside the mounted part) or -errno.
 */
int cw_mountinfo_find(const char *fstype, const char *opt, const char *cgpath,
		      char *dir, size_t len, char *point, size_t plen);
/* The same over the rest of an open table. */
int cw_mountinfo_find_in(struct cw_mountinfo *mi, const char *fstype,
			 const char *opt, const char *cgpath, char *dir,
			 size_t len, char *point, size_t plen);

/* One line of /proc/<pid>/cgroup, "id:controllers:path"; the strings
 * point into the line. The v2 hierarchy is id "0" with no controllers. */
struct cw_cgroup_line {
	char *id;
	char *controllers;	/* comma-separated (v1) */
	char *path;
};

/* Splits line in place (it ends at a newline); false when it is not a
 * cgroup line. */
bool cw_mountinfo_cgroup_line(char *line, struct cw_cgroup_line *c);
bool cw_mountinfo_cgroup_is_v2(const struct cw_cgroup_line *c);

/* Whether word is a whole item of list (items split by any of sep): a
 * superblock option, a controller. */
bool cw_mountinfo_has(const char *list, const char *word, const char *sep);

#endif
