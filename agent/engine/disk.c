// SPDX-License-Identifier: Apache-2.0
/* disk: the writable trees' budgets (engine/disk.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/disk.h"
#include "kernel/tmpfs.h"
#include "lib/util.h"

#define NO_BUDGET "no budget (sandbox.disk.tmpfs): a call is held to resources.file_size_mb a file and, where tracing works, files.max_write_bytes"

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

/* The budget of tree (a tmpfs tree in force holding it), or NULL. */
static const char *budget_of(const char *tree, const struct cw_strv *t,
			     const json_t *done)
{
	size_t j;

	for (j = 0; j < t->n; j++)
		if (json_object_get(done, t->v[j]) &&
		    cw_path_under(tree, t->v[j]))
			return t->v[j];
	return NULL;
}

json_t *cw_disk_budgets(const struct cw_sandbox *sb, char **gap)
{
	const struct cw_strv *t = &sb->disk.tmpfs, *w = &sb->filesystem.write;
	json_t *out = json_object(), *done = json_object();
	char why[1024];
	size_t i;

	*gap = NULL;
	if (!out || !done) {
		json_decref(out);
		json_decref(done);
		return NULL;
	}
	for (i = 0; i < t->n; i++) {
		if (geteuid() != 0)
			snprintf(why, sizeof(why),
				 "%s: mounting a tmpfs needs root", t->v[i]);
		if (geteuid() == 0 &&
		    cw_tmpfs_budget(t->v[i], sb->disk.max_mb,
				    sb->disk.max_inodes, why, sizeof(why)) == 0)
			json_object_set_new(done, t->v[i], json_true());
		else
			add_gap(gap, why);
	}
	for (i = 0; i < w->n; i++) {
		const char *under = budget_of(w->v[i], t, done);

		if (under) {
			json_object_set_new(out, w->v[i],
					    json_pack("{s:s, s:I, s:I}", "tmpfs", under,
						      "max_mb", (json_int_t)sb->disk.max_mb,
						      "max_inodes",
						      (json_int_t)sb->disk.max_inodes));
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
