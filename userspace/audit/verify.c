// SPDX-License-Identifier: Apache-2.0
/*
 * Verification (audit.h, cw_audit_verify): a log and its rotated files
 * read back line by line, bounded per line, from a snapshot of their
 * sizes; every record's seq and prev checked against the line before,
 * across files too, a start removed by retention vouched for by the
 * pruned record that removed it, and what is wrong named with its file
 * and line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit_int.h"

/* Verifier: a forward reader of complete lines, bounded per line. */
struct line_reader {
	int fd;
	off_t left; /* bytes of the snapshot not read yet */
	char *blk;
	size_t pos;
	size_t n;
};

/*
 * 1 with the next line in *line (without its '\n'; *nl says whether it had
 * one), 0 at the end, -EMSGSIZE for a line over the limit, else -errno.
 */
static int read_line(struct line_reader *r, struct cw_buf *line, bool *nl)
{
	bool any = false;

	line->len = 0;
	*nl = false;
	for (;;) {
		char *p;
		size_t take;

		if (r->pos == r->n) {
			size_t want = r->left > BLOCK_SIZE ? BLOCK_SIZE :
							     (size_t)r->left;
			ssize_t got;

			if (!want)
				return any ? 1 : 0;
			got = read(r->fd, r->blk, want);
			if (got < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (got == 0) {
				r->left = 0; /* truncated meanwhile */
				continue;
			}
			r->pos = 0;
			r->n = (size_t)got;
			r->left -= got;
		}
		any = true;
		p = memchr(r->blk + r->pos, '\n', r->n - r->pos);
		take = p ? (size_t)(p - (r->blk + r->pos)) : r->n - r->pos;
		if (line->len + take >= CW_AUDIT_MAX_LINE)
			return -EMSGSIZE;
		if (cw_buf_append(line, r->blk + r->pos, take))
			return -ENOMEM;
		r->pos += take;
		if (p) {
			r->pos++;
			*nl = true;
			return 1;
		}
	}
}

/* next_record: a line that is not a record, perhaps a torn write. */
#define NOT_A_RECORD 2

/* One file being verified. */
struct verify_state {
	const char *path;
	struct cw_error *err;
	struct line_reader r;
	struct cw_buf line; /* the line read last */
	unsigned long lineno; /* its number */
	unsigned long torn_at; /* first torn line stepped over, 0 if none */
	unsigned long torn_next; /* the record that stepped over it */
	unsigned long damaged_at; /* first of the lines not records since the
				   * last record, 0 if none */
	unsigned int damaged_n; /* how many */
	char dwhy[WHY_LEN]; /* what is wrong with the first */
};

static int verify_fail(struct verify_state *vs, unsigned long line,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int verify_fail(struct verify_state *vs, unsigned long line,
		       const char *fmt, ...)
{
	char text[sizeof(vs->err->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (vs->torn_at && vs->torn_at < line)
		audit_err(vs->err, vs->path, (int)line,
			  "%s (line %lu is also torn)", text, vs->torn_at);
	else
		audit_err(vs->err, vs->path, (int)line, "%s", text);
	return -EBADMSG;
}

/* The chain as it stands after the files verified so far. */
struct chain {
	uint64_t expected; /* seq of the next record */
	char prev_hash[HASH_HEX + 1];
	uint64_t good;
	const char *prev_path; /* the file before, NULL for the first */
	unsigned long prev_lines; /* its last line */
	const struct cw_audit_anchor *anchor; /* NULL: none */
	bool anchor_seen;
	/* The first file continues one retention removed: where the log
	 * starts, and whether a "pruned" record in it says so. */
	uint64_t start_seq; /* 0: the log starts at seq 1 */
	char start_prev[HASH_HEX + 1];
	char start_from[NAME_MAX + 1];
	uint64_t pruned_at; /* seq of the pruned record that says so, 0: none */
};

/* Checks the first record of a file against the file before it. */
static int check_continuation(struct verify_state *vs, const struct chain *c,
			      const struct rec_info *ri)
{
	const char *prev = c->prev_path ? audit_base_of(c->prev_path) : NULL;

	if (!prev && ri->rotated_from[0]) {
		/* Removed by retention if a record says so; but only a file
		 * older than this one can have been. */
		const char *dot = strrchr(ri->rotated_from, '.');
		const char *self = audit_base_of(vs->path);
		char base[NAME_MAX + 1];
		long from, own = -1;

		snprintf(base, sizeof(base), "%.*s",
			 dot ? (int)(dot - ri->rotated_from) : 0,
			 ri->rotated_from);
		from = cw_audit_rotated_index(ri->rotated_from, base);
		if (!strcmp(self, base))
			own = LONG_MAX;	/* the current file */
		else
			own = cw_audit_rotated_index(self, base);
		if (from < 0 || own <= from)
			return verify_fail(vs, 1,
					   "this file continues %s, which is not a file before it: the log's files were renamed",
					   ri->rotated_from);
		return 0;
	}
	if (prev && !ri->rotated_from[0])
		return verify_fail(vs, 1,
				   "not a continuation of %s: its first record has no rotated_from, so the file was replaced or edited",
				   prev);
	if (prev && strcmp(ri->rotated_from, prev))
		return verify_fail(vs, 1,
				   "missing: this file continues %s, but the file before it is %s",
				   ri->rotated_from, prev);
	return 0;
}

/* The file's size under a shared lock (it ends on a record boundary),
 * as the bytes to read, and a block to read them through. */
static int open_snapshot(struct verify_state *vs, int fd)
{
	struct stat st;
	int ret;

	vs->r.fd = fd;
	ret = audit_lock_file(fd, LOCK_SH);
	if (!ret) {
		if (fstat(fd, &st))
			ret = -errno;
		audit_lock_file(fd, LOCK_UN);
	}
	if (ret) {
		audit_err(vs->err, vs->path, 0, "locking or fstat failed: %s",
			  audit_errstr(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		audit_err(vs->err, vs->path, 0, "is not a regular file");
		return -EINVAL;
	}
	vs->r.left = st.st_size;
	vs->r.blk = malloc(BLOCK_SIZE);
	if (!vs->r.blk) {
		audit_err(vs->err, vs->path, 0, "no memory");
		return -ENOMEM;
	}
	return 0;
}

/*
 * A record whose prev is not the SHA-256 of the record before: what is
 * wrong, said as precisely as the records around it allow (edited,
 * missing, out of order). Always -EBADMSG.
 */
static int chain_broken(struct verify_state *vs, const struct chain *c,
			const struct rec_info *ri)
{
	unsigned long lineno = vs->lineno;
	char why[WHY_LEN];
	struct rec_info next;
	bool nl, peeked;

	if (ri->seq == c->expected && lineno == 1 && !c->prev_path)
		return verify_fail(vs, lineno,
				   "edited: the first record must have prev \"\"");
	if (ri->seq == c->expected && lineno == 1) {
		audit_err(vs->err, c->prev_path, (int)c->prev_lines,
			  "edited: its SHA-256 does not match the prev recorded on line 1 of %s",
			  vs->path);
		return -EBADMSG;
	}
	if (ri->seq == c->expected)
		return verify_fail(vs, lineno - 1,
				   "edited: its SHA-256 does not match the prev recorded on line %lu",
				   lineno);
	if (ri->seq < c->expected)
		return verify_fail(vs, lineno,
				   "out of order or duplicated: seq %" PRIu64 " after seq %" PRIu64,
				   ri->seq, c->expected - 1);
	/* A later seq: the next line tells out of order from missing. */
	peeked = read_line(&vs->r, &vs->line, &nl) == 1 && nl &&
		 !audit_parse_record(vs->line.data, vs->line.len, &next, why,
				     sizeof(why));
	if (peeked && next.seq == c->expected)
		return verify_fail(vs, lineno,
				   "out of order: seq %" PRIu64 " comes before seq %" PRIu64 " (line %lu)",
				   ri->seq, c->expected, lineno + 1);
	return verify_fail(vs, lineno,
			   "missing: expected seq %" PRIu64 ", found %" PRIu64 "; the records between were removed",
			   c->expected, ri->seq);
}

/* Checks the record on the line just read (hash its SHA-256) against the
 * chain and, when it passes, adds it to the chain. */
static int check_record(struct verify_state *vs, struct chain *c,
			const struct rec_info *ri, const char *hash)
{
	unsigned long lineno = vs->lineno;
	int ret;

	if (lineno == 1) {
		ret = check_continuation(vs, c, ri);
		if (ret)
			return ret;
		if (!c->prev_path && ri->rotated_from[0]) {
			/* the chain starts here, to be vouched for later */
			c->start_seq = ri->seq;
			c->expected = ri->seq;
			memcpy(c->start_prev, ri->prev, sizeof(c->start_prev));
			memcpy(c->prev_hash, ri->prev, sizeof(c->prev_hash));
			snprintf(c->start_from, sizeof(c->start_from), "%s",
				 ri->rotated_from);
		}
	} else if (ri->rotated_from[0] && !vs->damaged_at) {
		return verify_fail(vs, lineno,
				   "edited: rotated_from belongs only on the first line of a file");
	}
	if (vs->damaged_at) {
		/* Damage the writer stepped over is a torn write. */
		if (!ri->torn_before || ri->seq != c->expected ||
		    strcmp(ri->prev, c->prev_hash))
			return verify_fail(vs, vs->damaged_at,
					   "not a record (%s): edited or corrupted",
					   vs->dwhy);
		if (!vs->torn_at) {
			vs->torn_at = vs->damaged_at;
			vs->torn_next = lineno;
		}
		vs->damaged_at = 0;
		vs->damaged_n = 0;
	} else if (strcmp(ri->prev, c->prev_hash)) {
		return chain_broken(vs, c, ri);
	} else if (ri->seq != c->expected) {
		return verify_fail(vs, lineno,
				   "edited: seq is %" PRIu64 ", expected %" PRIu64 ", yet prev links it to the line before",
				   ri->seq, c->expected);
	}
	if (c->anchor && ri->seq == c->anchor->seq) {
		if (strcmp(hash, c->anchor->hash))
			return verify_fail(vs, lineno,
					   "edited or replaced: seq %" PRIu64 " has SHA-256 %s, the anchor says %s",
					   ri->seq, hash, c->anchor->hash);
		c->anchor_seen = true;
	}
	if (ri->pruned && c->start_seq && ri->through_seq + 1 == c->start_seq &&
	    !strcmp(ri->through_hash, c->start_prev) &&
	    !strcmp(ri->last_removed, c->start_from))
		c->pruned_at = ri->seq;
	c->expected = ri->seq + 1;
	memcpy(c->prev_hash, hash, sizeof(c->prev_hash));
	c->good++;
	return 0;
}

/*
 * The end of the chain: a log that starts past seq 1 must say that
 * retention removed its start, and an anchor must be at or after where
 * the log starts now (at the last record removed, its hash is the one
 * the pruned record gives).
 */
static int check_start_and_anchor(struct chain *c, char **files, size_t n,
				  const char *path, struct cw_error *err)
{
	const struct cw_audit_anchor *an = c->anchor;

	if (c->start_seq && !c->pruned_at) {
		audit_err(err, files[0], 1,
			  "missing: this file continues %s, which is not present, and no pruned record says retention removed it (older files of this rotated log were removed or renamed)",
			  c->start_from);
		return -EBADMSG;
	}
	if (!an || c->anchor_seen)
		return 0;
	if (c->start_seq && an->seq + 1 == c->start_seq) {
		if (!strcmp(an->hash, c->start_prev))
			return 0;
		audit_err(err, files[0], 1,
			  "edited or replaced: seq %" PRIu64 " was removed by retention with SHA-256 %s, the anchor says %s",
			  an->seq, c->start_prev, an->hash);
		return -EBADMSG;
	}
	if (c->start_seq && an->seq < c->start_seq) {
		audit_err(err, files[0], 1,
			  "the anchored seq %" PRIu64 " was removed by retention (the log starts at seq %" PRIu64 ", the removal recorded at seq %" PRIu64 "): it cannot be checked; keep a newer anchor",
			  an->seq, c->start_seq, c->pruned_at);
		return -EBADMSG;
	}
	audit_err(err, n ? files[n - 1] : path, (int)c->prev_lines,
		  "missing: the log ends at seq %" PRIu64 ", before the anchored seq %" PRIu64 "; records were removed from its end",
		  c->expected - 1, an->seq);
	return -EBADMSG;
}

/*
 * The next line of the file, checked: 1 with a record in ri and the
 * SHA-256 of its line in hash, 0 at the end of the file, NOT_A_RECORD for a
 * line that may be a torn write the writer stepped over (up to MAX_DAMAGED
 * of them), -EBADMSG or another -errno with vs->err.
 */
static int next_record(struct verify_state *vs, struct rec_info *ri,
		       char hash[HASH_HEX + 1])
{
	char why[WHY_LEN] = "";
	bool nl;
	int ret;

	ret = read_line(&vs->r, &vs->line, &nl);
	if (ret == 0)
		return 0;
	vs->lineno++;
	if (ret == -EMSGSIZE)
		return verify_fail(vs, vs->lineno,
				   "line longer than %u bytes: not a record",
				   CW_AUDIT_MAX_LINE - 1);
	if (ret < 0) {
		audit_err(vs->err, vs->path, (int)vs->lineno,
			  "reading failed: %s", audit_errstr(-ret));
		return ret;
	}
	if (!nl) {
		if (!vs->damaged_at)
			return verify_fail(vs, vs->lineno,
					   "torn last line: no newline at the end, a write was cut short");
		return verify_fail(vs, vs->damaged_at,
				   "torn: a write was cut short here, and the last line (%lu) is torn too",
				   vs->lineno);
	}
	if (audit_parse_record(vs->line.data, vs->line.len, ri, why,
			       sizeof(why))) {
		if (!vs->damaged_at) {
			vs->damaged_at = vs->lineno;
			memcpy(vs->dwhy, why, sizeof(vs->dwhy));
		}
		if (++vs->damaged_n > MAX_DAMAGED)
			return verify_fail(vs, vs->damaged_at,
					   "not a record (%s): edited or corrupted",
					   vs->dwhy);
		return NOT_A_RECORD;
	}
	if (audit_sha256_hex(vs->line.data, vs->line.len, hash)) {
		audit_err(vs->err, vs->path, (int)vs->lineno, "SHA-256 failed");
		return -EIO;
	}
	return 1;
}

/* Verifies one file of the set, continuing the chain c. */
static int verify_file(struct chain *c, const char *path, int fd,
		       struct cw_error *err)
{
	struct verify_state vs = { .path = path, .err = err, .r.fd = -1 };
	char hash[HASH_HEX + 1];
	struct rec_info ri;
	int ret;

	ret = open_snapshot(&vs, fd);
	if (ret)
		goto out;
	while ((ret = next_record(&vs, &ri, hash)) > 0) {
		if (ret == NOT_A_RECORD)
			continue;
		ret = check_record(&vs, c, &ri, hash);
		if (ret)
			goto out;
	}
	if (ret)
		goto out;
	if (vs.damaged_at) {
		ret = verify_fail(&vs, vs.damaged_at,
				  "not a record (%s): edited or corrupted",
				  vs.dwhy);
		goto out;
	}
	if (vs.lineno == 0 && c->prev_path) {
		ret = verify_fail(&vs, 0,
				  "empty, yet %s was rotated into it: its records were removed",
				  audit_base_of(c->prev_path));
		goto out;
	}
	if (vs.torn_at) {
		ret = -EBADMSG;
		audit_err(err, path, (int)vs.torn_at,
			  "torn: a write was cut short here; line %lu notes torn_before and the chain continues intact around it",
			  vs.torn_next);
		goto out;
	}
	c->prev_lines = vs.lineno;
	ret = 0;
out:
	free(vs.r.blk);
	cw_buf_free(&vs.line);
	return ret;
}

int cw_audit_verify_ex(const char *path,
		       const struct cw_audit_anchor *anchor,
		       struct cw_audit_verified *out, struct cw_error *err)
{
	struct chain c = { .expected = 1, .anchor = anchor };
	char **files = NULL;
	int *fds = NULL;
	size_t n = 0, i;
	int ret;

	if (anchor && (!anchor->seq || !audit_is_hash_hex(anchor->hash))) {
		audit_err(err, path, 0,
			  "an anchor is a seq of 1 or more and a SHA-256 in lowercase hex");
		return -EINVAL;
	}
	ret = cw_audit_open_files(path, &files, &fds, &n, err);
	for (i = 0; !ret && i < n; i++) {
		ret = verify_file(&c, files[i], fds[i], err);
		c.prev_path = files[i];
	}
	if (!ret)
		ret = check_start_and_anchor(&c, files, n, path, err);
	if (out) {
		memset(out, 0, sizeof(*out));
		out->records = c.good;
		out->files = n;
		out->first_seq = c.start_seq ? c.start_seq : 1;
		out->pruned_at = c.pruned_at;
		out->last_seq = c.expected - 1;
		memcpy(out->last_hash, c.prev_hash, sizeof(out->last_hash));
	}
	cw_audit_close_files(files, fds, n);
	return ret;
}

int cw_audit_verify(const char *path, uint64_t *nrecords,
		    struct cw_error *err)
{
	struct cw_audit_verified v;
	int ret = cw_audit_verify_ex(path, NULL, &v, err);

	if (nrecords)
		*nrecords = v.records;
	return ret;
}
