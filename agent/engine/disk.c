// SPDX-License-Identifier: Apache-2.0
/* disk: the writable trees' budgets (engine/disk.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/disk.h"
#include "kernel/diskimage.h"
#include "kernel/tmpfs.h"
#include "lib/util.h"

#define NO_BUDGET "no budget (sandbox.disk.tmpfs or sandbox.disk.image): a call is held to resources.file_size_mb a file and, where tracing works, files.max_write_bytes"

/* Appends "; text" (or text) to *s. */
static void add_gap(char **s, const char *text)
{
	size_t have = *s ? strlen(*s) : 0, add = strlen(text);
	char *n = realloc(*s, have + add + 3);

	if (!n)
		return;
	if (have) {
		memcpy(n + have, "; ", 2);
		have += 2;
	}
	memcpy(n + have, text, add + 1);
	*s = n;
}

/* The budget in force holding tree (done: each budget tree's record), or
 * NULL. */
static json_t *budget_of(const char *tree, json_t *done)
{
	const char *t, *best = NULL;
	json_t *b, *found = NULL;

	/* the innermost, when budgets nest */
	json_object_foreach(done, t, b)
		if (cw_path_under(tree, t) && (!best || strlen(t) > strlen(best))) {
			best = t;
			found = b;
		}
	return found;
}

/* Each tree of sb's disk.tmpfs and disk.image given its budget; done gets
 * the record of each one that has it, *gap why each other has not. */
static void give_budgets(const struct cw_sandbox *sb, json_t *done,
			 char **gap)
{
	const struct cw_strv *t = &sb->disk.tmpfs, *im = &sb->disk.image;
	char why[1024], file[4200];
	int64_t mb, inodes;
	size_t i;

	for (i = 0; i < t->n + im->n; i++) {
		bool tmpfs = i < t->n;
		const char *tree = tmpfs ? t->v[i] : im->v[i - t->n];
		int rc;

		if (geteuid() != 0) {
			snprintf(why, sizeof(why), "%s: mounting %s needs root",
				 tree, tmpfs ? "a tmpfs" : "an image");
			add_gap(gap, why);
			continue;
		}
		if (tmpfs) {
			rc = cw_tmpfs_budget(tree, sb->disk.max_mb,
					     sb->disk.max_inodes, why,
					     sizeof(why));
			if (rc == 0)
				json_object_set_new(done, tree, json_pack(
					"{s:s, s:I, s:I}", "tmpfs", tree,
					"max_mb", (json_int_t)sb->disk.max_mb,
					"max_inodes",
					(json_int_t)sb->disk.max_inodes));
		} else {
			rc = cw_diskimage_budget(tree, sb->disk.image_dir,
						 sb->disk.image_mb,
						 sb->disk.image_inodes, file,
						 sizeof(file), &mb, &inodes,
						 why, sizeof(why));
			if (rc == 0)
				json_object_set_new(done, tree, json_pack(
					"{s:s, s:s, s:I, s:I}", "image", tree,
					"file", file, "max_mb", (json_int_t)mb,
					"max_inodes", (json_int_t)inodes));
		}
		if (rc < 0)
			add_gap(gap, why);
	}
}

json_t *cw_disk_budgets(const struct cw_sandbox *sb, char **gap)
{
	const struct cw_strv *w = &sb->filesystem.write;
	json_t *out = json_object(), *done = json_object();
	char why[1024];
	size_t i;

	*gap = NULL;
	if (!out || !done) {
		json_decref(out);
		json_decref(done);
		return NULL;
	}
	give_budgets(sb, done, gap);
	for (i = 0; i < w->n; i++) {
		json_t *b = budget_of(w->v[i], done);

		if (b) {
			json_object_set(out, w->v[i], b);
			continue;
		}
		json_object_set_new(out, w->v[i],
				    json_pack("{s:s}", "error", NO_BUDGET));
		snprintf(why, sizeof(why), "%s: " NO_BUDGET, w->v[i]);
		add_gap(gap, why);
	}
	json_decref(done);
	return out;
}
