// SPDX-License-Identifier: Apache-2.0
/*
 * Parsing /proc/self/mountinfo and /proc/<pid>/cgroup lines, and finding a
 * mount (and a cgroup's directory in it) from them. A mountinfo line is
 *
 *   id parent major:minor root point options [optional...] -
 *       fstype source super
 *
 * with space, tab, newline and backslash in root and point written as
 * octal escapes (\040 for a space).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/mountinfo.h"

/* Fields before the optional ones: id parent major:minor root point
 * options. */
#define FIXED_FIELDS 6

struct cw_mountinfo {
	FILE *f;
	char *line;
	size_t cap;
	struct cw_mount m;
};

/* Undoes mountinfo's octal escapes (\040 for space) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

bool cw_mountinfo_parse(char *line, struct cw_mount *m)
{
	char *f[FIXED_FIELDS], *save = NULL, *tok;
	int i = 0;

	for (tok = strtok_r(line, " \n", &save); tok && i < FIXED_FIELDS;
	     tok = strtok_r(NULL, " \n", &save))
		f[i++] = tok;
	if (i < FIXED_FIELDS)
		return false;
	/* Optional fields run up to the lone "-". */
	while (tok && strcmp(tok, "-"))
		tok = strtok_r(NULL, " \n", &save);
	if (!tok)
		return false;
	m->fstype = strtok_r(NULL, " \n", &save);
	if (!m->fstype)
		return false;
	m->source = strtok_r(NULL, " \n", &save);
	if (!m->source)
		return false;
	m->super = strtok_r(NULL, " \n", &save);
	if (!m->super)
		m->super = "";
	m->root = f[3];
	m->point = f[4];
	unescape(m->root);
	unescape(m->point);
	return true;
}

struct cw_mountinfo *cw_mountinfo_open_path(const char *path)
{
	struct cw_mountinfo *mi = calloc(1, sizeof(*mi));
	int saved;

	if (!mi)
		return NULL;
	mi->f = fopen(path, "re");
	if (!mi->f) {
		saved = errno;
		free(mi);
		errno = saved;
		return NULL;
	}
	return mi;
}

struct cw_mountinfo *cw_mountinfo_open(void)
{
	return cw_mountinfo_open_path(CW_MOUNTINFO_PATH);
}

const struct cw_mount *cw_mountinfo_next(struct cw_mountinfo *mi)
{
	while (getline(&mi->line, &mi->cap, mi->f) > 0)
		if (cw_mountinfo_parse(mi->line, &mi->m))
			return &mi->m;
	return NULL;
}

void cw_mountinfo_close(struct cw_mountinfo *mi)
{
	int saved = errno;

	if (!mi)
		return;
	free(mi->line);
	fclose(mi->f);
	free(mi);
	errno = saved;
}

int cw_mountinfo_find_in(struct cw_mountinfo *mi, const char *fstype,
			 const char *opt, const char *cgpath, char *dir,
			 size_t len, char *point, size_t plen)
{
	const struct cw_mount *m;
	int err = -ENOENT;

	while ((m = cw_mountinfo_next(mi))) {
		const char *rel = "";
		size_t rl;

		if (strcmp(m->fstype, fstype))
			continue;
		if (opt && !cw_mountinfo_has(m->super, opt, ","))
			continue;
		if (cgpath) {
			rl = strcmp(m->root, "/") ? strlen(m->root) : 0;
			if (strncmp(cgpath, m->root, rl) ||
			    (cgpath[rl] != '/' && cgpath[rl] != '\0')) {
				err = -EXDEV;
				continue;
			}
			rel = strcmp(cgpath + rl, "/") ? cgpath + rl : "";
		}
		if (*rel)
			snprintf(dir, len, "%s%s",
				 strcmp(m->point, "/") ? m->point : "", rel);
		else
			snprintf(dir, len, "%s", m->point);
		if (point)
			snprintf(point, plen, "%s", m->point);
		err = 0;
		break;
	}
	return err;
}

int cw_mountinfo_find(const char *fstype, const char *opt, const char *cgpath,
		      char *dir, size_t len, char *point, size_t plen)
{
	struct cw_mountinfo *mi;
	int err;

	mi = cw_mountinfo_open();
	if (!mi)
		return -errno;
	err = cw_mountinfo_find_in(mi, fstype, opt, cgpath, dir, len, point,
				   plen);
	cw_mountinfo_close(mi);
	return err;
}

bool cw_mountinfo_cgroup_line(char *line, struct cw_cgroup_line *c)
{
	char *ctl, *path;

	line[strcspn(line, "\n")] = '\0';
	ctl = strchr(line, ':');
	path = ctl ? strchr(ctl + 1, ':') : NULL;
	if (!path)
		return false;
	*ctl++ = '\0';
	*path++ = '\0';
	c->id = line;
	c->controllers = ctl;
	c->path = path;
	return true;
}

bool cw_mountinfo_cgroup_is_v2(const struct cw_cgroup_line *c)
{
	return !strcmp(c->id, "0") && !*c->controllers;
}

bool cw_mountinfo_has(const char *list, const char *word, const char *sep)
{
	size_t wl = strlen(word);
	const char *s = list;

	while (*s) {
		size_t n = strcspn(s, sep);

		if (n == wl && !strncmp(s, word, wl))
			return true;
		s += n;
		s += strspn(s, sep);
	}
	return false;
}
