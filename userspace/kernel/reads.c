// SPDX-License-Identifier: Apache-2.0
/*
 * A call's read-only opens into "reads" records (reads.h). Each file gets
 * its key in its record when its first open is told, with a count of 0 that
 * the end of the call fills in: the files are found again by device and
 * inode in a tree (tsearch), which points at their counts.
 */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/reads.h"
#include "lib/json.h"

struct read_file {
	uint32_t dev;
	uint64_t ino;
	json_t *count;		/* its record's: borrowed */
};

/* A record files are still added to: one per opener, this many at once
 * (another opener's starts a new record). */
#define FILLING_MAX 32

struct filling {
	struct cw_reads_opener by;
	bool found;
	json_t *files;		/* borrowed from the record */
};

struct cw_reads {
	void *tree;		/* struct read_file, by device and inode */
	json_t *records;	/* the records' fields, in order made */
	struct filling fill[FILLING_MAX];
	size_t nfill;
	json_t *unknown;	/* counted, never told */
	uint64_t total;
};

static int by_file(const void *a, const void *b)
{
	const struct read_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

struct cw_reads *cw_reads_new(void)
{
	struct cw_reads *r = calloc(1, sizeof(*r));

	if (r && !(r->records = json_array())) {
		free(r);
		r = NULL;
	}
	return r;
}

void cw_reads_free(struct cw_reads *r)
{
	if (!r)
		return;
	tdestroy(r->tree, free);
	json_decref(r->records);
	json_decref(r->unknown);
	free(r);
}

static bool same_opener(const struct filling *f,
			const struct cw_reads_opener *by, bool found)
{
	return f->found == found && f->by.pid == by->pid &&
	       f->by.uid == by->uid && !strcmp(f->by.comm, by->comm);
}

/* The files of the record by's next file goes in: one still filling, or a
 * new one. NULL without memory. */
static json_t *record_for(struct cw_reads *r, const struct cw_reads_opener *by,
			  bool found)
{
	json_t *o, *files;
	size_t i;

	for (i = 0; i < r->nfill; i++) {
		if (!same_opener(&r->fill[i], by, found))
			continue;
		if (json_object_size(r->fill[i].files) < CW_READS_PER_RECORD)
			return r->fill[i].files;
		/* full: a new one takes its place */
		memmove(&r->fill[i], &r->fill[i + 1],
			(r->nfill - i - 1) * sizeof(r->fill[0]));
		r->nfill--;
		break;
	}
	files = json_object();
	o = json_pack("{s:s, s:I, s:o, s:I, s:b, s:s, s:o}", "source", "bpf",
		      "pid", (json_int_t)by->pid, "comm", cw_json_path(by->comm),
		      "uid", (json_int_t)by->uid, "found", found,
		      "path_source", found ? "kernel" : "user_memory",
		      "files", json_incref(files));
	if (!o || json_array_append_new(r->records, o)) {
		json_decref(files);
		return NULL;
	}
	json_decref(files);
	if (r->nfill == FILLING_MAX) {
		/* the oldest opener's next file starts a record anew */
		memmove(&r->fill[0], &r->fill[1],
			(FILLING_MAX - 1) * sizeof(r->fill[0]));
		r->nfill--;
	}
	r->fill[r->nfill].by = *by;
	r->fill[r->nfill].found = found;
	r->fill[r->nfill].files = files;
	r->nfill++;
	return files;
}

/* The count of path in files (borrowed), added at 0 when new; NULL
 * without memory. A key must be UTF-8: a path that is not is keyed with
 * its other bytes as \xNN. */
static json_t *count_of(json_t *files, const char *path)
{
	json_t *c = json_object_get(files, path), *esc;
	const char *key;

	if (c)
		return c;
	c = json_integer(0);
	/* takes c, or drops it when it fails */
	if (!json_object_set_new(files, path, c))
		return c;
	esc = cw_json_path(path);
	key = json_string_value(esc);
	c = key ? json_object_get(files, key) : NULL;
	if (!c && key) {
		c = json_integer(0);
		if (json_object_set_new(files, key, c))
			c = NULL;
	}
	json_decref(esc);
	return c;
}

/* Lists a cut path in the record of files. */
static void mark_cut(struct cw_reads *r, json_t *files, const char *path)
{
	size_t i;
	json_t *o, *list;

	for (i = json_array_size(r->records); i-- > 0;) {
		o = json_array_get(r->records, i);
		if (json_object_get(o, "files") != files)
			continue;
		list = json_object_get(o, "truncated");
		if (!list) {
			list = json_array();
			json_object_set_new(o, "truncated", list);
		}
		json_array_append_new(list, cw_json_path(path));
		return;
	}
}

static void add_count(json_t *c, uint64_t n)
{
	json_integer_set(c, json_integer_value(c) + (json_int_t)n);
}

int cw_reads_seen(struct cw_reads *r, uint32_t dev, uint64_t ino,
		  const char *path, bool cut, const struct cw_reads_opener *by)
{
	struct read_file key = { .dev = dev, .ino = ino }, *f;
	json_t *files;

	/* told twice (the kernel sends it once): the first stays */
	if (tfind(&key, &r->tree, by_file))
		return 0;
	files = record_for(r, by, true);
	f = malloc(sizeof(*f));
	if (!files || !f) {
		free(f);
		return -ENOMEM;
	}
	*f = key;
	f->count = count_of(files, path);
	if (!f->count || !tsearch(f, &r->tree, by_file)) {
		free(f);
		return -ENOMEM;
	}
	if (cut)
		mark_cut(r, files, path);
	return 0;
}

int cw_reads_count(struct cw_reads *r, uint32_t dev, uint64_t ino,
		   uint64_t count)
{
	struct read_file key = { .dev = dev, .ino = ino }, **at;

	r->total += count;
	at = tfind(&key, &r->tree, by_file);
	if (at) {
		add_count((*at)->count, count);
		return 0;
	}
	if (!r->unknown)
		r->unknown = json_array();
	json_array_append_new(r->unknown,
			      json_pack("{s:I, s:I, s:I}", "device",
					(json_int_t)dev, "inode",
					(json_int_t)ino, "count",
					(json_int_t)count));
	return -ENOENT;
}

int cw_reads_missing(struct cw_reads *r, const char *path, uint64_t count,
		     const struct cw_reads_opener *by)
{
	json_t *files = record_for(r, by, false), *c;

	r->total += count;
	c = files ? count_of(files, path) : NULL;
	if (!c)
		return -ENOMEM;
	add_count(c, count);
	return 0;
}

uint64_t cw_reads_total(const struct cw_reads *r)
{
	return r ? r->total : 0;
}

void cw_reads_records(struct cw_reads *r, cw_reads_fn fn, void *ctx)
{
	json_t *o;
	size_t i;

	json_array_foreach(r->records, i, o)
		/* one begun when memory ran out may hold nothing */
		if (json_object_size(json_object_get(o, "files")))
			fn(ctx, o);
	if (json_array_size(r->unknown)) {
		o = json_pack("{s:s, s:b, s:s, s:{}, s:O}", "source", "bpf",
			      "found", 1, "path_source", "none", "files",
			      "unknown", r->unknown);
		if (o)
			fn(ctx, o);
		json_decref(o);
	}
}
