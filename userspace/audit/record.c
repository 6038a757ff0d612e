// SPDX-License-Identifier: Apache-2.0
/*
 * A record's text. Writing: the caller's fields checked against the names
 * the log keeps for itself, the middle (type, invocation, fields)
 * serialized once, before any lock, and the line around it (ts, seq,
 * torn_before, rotated_from, prev) built under the lock. Reading: a line
 * parsed back into what the chain needs (seq, prev, torn_before,
 * rotated_from), for the writer's tail and for the verifier. And the
 * SHA-256 that links the lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/audit_int.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

/* A string literal as the pointer and length cw_buf_append takes. */
#define LIT(s) s, sizeof(s) - 1

/* A line's start, {"ts":"<ts>","seq":<seq>, built in a buffer of HEAD_LEN
 * bytes: the timestamp gets CW_TS_LEN (cw_format_ts writes 27 bytes and a NUL),
 * the seq at most 20 digits. */
#define TS_KEY "{\"ts\":\""
#define SEQ_KEY "\",\"seq\":"
#define SEQ_DIGITS 20
#define HEAD_LEN 96
_Static_assert(sizeof(TS_KEY) - 1 + CW_TS_LEN + sizeof(SEQ_KEY) - 1 +
	       SEQ_DIGITS + 1 <= HEAD_LEN, "a line's head fits HEAD_LEN");

static const char *const reserved[] = {
	"ts", "seq", "type", "invocation", "prev", "torn_before",
	"rotated_from",
};

/* libsodium: a small, well-kept SHA-256 (libcrypto would triple the
 * agent's resident size for one hash). */
int audit_sha256_hex(const void *p, size_t n, char out[HASH_HEX + 1])
{
	unsigned char md[crypto_hash_sha256_BYTES];

	if (crypto_hash_sha256(md, p, n) != 0)
		return -EIO;
	sodium_bin2hex(out, HASH_HEX + 1, md, sizeof(md));
	return 0;
}

bool audit_is_hash_hex(const char *s)
{
	size_t i;

	if (strlen(s) != HASH_HEX)
		return false;
	for (i = 0; i < HASH_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* A file name as rotation gives them: no directory, not empty. */
static bool is_file_name(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) &&
	       json_string_length(v) <= NAME_MAX &&
	       !strchr(json_string_value(v), '/');
}

/* The fields of a "pruned" record, which verification relies on. */
static int parse_pruned(json_t *root, struct rec_info *ri)
{
	json_t *removed = json_object_get(root, "removed");
	json_t *seq = json_object_get(root, "through_seq");
	const char *hash = json_string_value(json_object_get(root,
							     "through_hash"));
	json_t *last;
	size_t i;

	if (!json_is_array(removed) || !json_array_size(removed) ||
	    !json_is_integer(seq) || json_integer_value(seq) < 1 || !hash ||
	    !audit_is_hash_hex(hash))
		return -EBADMSG;
	for (i = 0; i < json_array_size(removed); i++)
		if (!is_file_name(json_array_get(removed, i)))
			return -EBADMSG;
	last = json_array_get(removed, json_array_size(removed) - 1);
	ri->pruned = true;
	ri->through_seq = (uint64_t)json_integer_value(seq);
	memcpy(ri->through_hash, hash, HASH_HEX + 1);
	memcpy(ri->last_removed, json_string_value(last),
	       json_string_length(last) + 1);
	return 0;
}

/* 0 if buf holds a record as this module writes them, else -EBADMSG. */
int audit_parse_record(const char *buf, size_t len, struct rec_info *ri,
		       char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *prev;
	int ret = -EBADMSG;

	memset(ri, 0, sizeof(*ri));
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(why, whylen, "not JSON: column %d: %s", jerr.column,
			 jerr.text);
		return -EBADMSG;
	}
	if (!json_is_object(root)) {
		snprintf(why, whylen, "not a JSON object");
		goto out;
	}
	if (!json_is_string(json_object_get(root, "ts")) ||
	    !json_is_string(json_object_get(root, "type"))) {
		snprintf(why, whylen, "ts or type missing or not a string");
		goto out;
	}
	v = json_object_get(root, "seq");
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		snprintf(why, whylen, "seq missing or not a positive integer");
		goto out;
	}
	ri->seq = (uint64_t)json_integer_value(v);
	v = json_object_get(root, "prev");
	prev = json_string_value(v);
	if (!prev || (prev[0] && !audit_is_hash_hex(prev))) {
		snprintf(why, whylen,
			 "prev missing or not \"\" or a SHA-256 in hex");
		goto out;
	}
	memcpy(ri->prev, prev, strlen(prev) + 1);
	ri->torn_before = json_is_true(json_object_get(root, "torn_before"));
	v = json_object_get(root, "rotated_from");
	if (v && !is_file_name(v)) {
		snprintf(why, whylen, "rotated_from is not a file name");
		goto out;
	}
	if (v)
		memcpy(ri->rotated_from, json_string_value(v),
		       json_string_length(v) + 1);
	if (!strcmp(json_string_value(json_object_get(root, "type")),
		    CW_AUDIT_T(PRUNED)) &&
	    parse_pruned(root, ri)) {
		snprintf(why, whylen,
			 "a pruned record needs removed (file names), through_seq and through_hash");
		goto out;
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

struct dump_to {
	struct cw_buf *b;
	bool nomem;
};

/* Called for every token: a copy, and a grown buffer only now and then. */
static int dump_cb(const char *p, size_t n, void *data)
{
	struct dump_to *d = data;
	struct cw_buf *b = d->b;

	if (b->cap - b->len <= n && cw_buf_reserve(b, n)) {
		d->nomem = true;
		return -1;
	}
	/* most tokens are one character: no call for those */
	if (n == 1)
		b->data[b->len] = *p;
	else
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

/* Appends j as jansson serializes it, straight into b (no string to
 * allocate, copy and free). -ENOMEM, or -EINVAL when jansson cannot
 * serialize it; b may then hold part of it. */
static int append_json(struct cw_buf *b, const json_t *j, size_t flags)
{
	struct dump_to d = { .b = b };
	int ret = 0;

	if (json_dump_callback(j, dump_cb, &d, flags))
		ret = d.nomem ? -ENOMEM : -EINVAL;
	if (b->data)
		b->data[b->len] = '\0';
	return ret;
}

/* Appends s as a JSON string; -EINVAL when it is not UTF-8. */
static int append_json_string(struct cw_buf *b, const char *s)
{
	json_t *j = json_string(s);
	int ret;

	if (!j)
		return -EINVAL;
	ret = append_json(b, j, DUMP_FLAGS | JSON_ENCODE_ANY);
	json_decref(j);
	return ret;
}

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

void audit_heads_free(struct heads *h)
{
	unsigned int i;

	for (i = 0; i < HEADS; i++)
		cw_buf_free(&h->e[i].text);
}

static int head_get(struct heads *h, const char *path, const char *type,
		    const char *invocation, const struct cw_buf **out,
		    struct cw_error *err)
{
	unsigned int i;
	struct cw_buf *t;
	int ret;

	for (i = 0; i < h->n; i++) {
		if (same_str(h->e[i].type, type) &&
		    same_str(h->e[i].invocation, invocation)) {
			*out = &h->e[i].text;
			return 0;
		}
	}
	i = h->n < HEADS ? h->n++ : h->next++ % HEADS;
	h->e[i].type = h->e[i].invocation = NULL;
	t = &h->e[i].text;
	t->len = 0;
	ret = cw_buf_append(t, LIT("\"type\":")) ?: append_json_string(t, type);
	if (ret) {
		audit_err(err, path, 0, ret == -EINVAL ?
			  "record type is not valid UTF-8" : "no memory");
		return ret;
	}
	if (invocation) {
		ret = cw_buf_append(t, LIT(",\"invocation\":")) ?:
		      append_json_string(t, invocation);
		if (ret) {
			audit_err(err, path, 0, ret == -EINVAL ?
				  "invocation id is not valid UTF-8" : "no memory");
			h->e[i].type = NULL;
			return ret;
		}
	}
	/* a NULL type marks a slot not (yet) valid */
	h->e[i].type = type;
	h->e[i].invocation = invocation;
	*out = t;
	return 0;
}

/* The record's middle, appended to mid: type, invocation and the caller's
 * fields. */
static int build_middle(const char *path, struct heads *h, const char *type,
			const char *invocation, json_t *fields,
			struct cw_buf *mid, struct cw_error *err)
{
	const struct cw_buf *head;
	size_t at;
	int ret;

	ret = head_get(h, path, type, invocation, &head, err);
	if (ret)
		return ret;
	if (cw_buf_append(mid, head->data, head->len)) {
		audit_err(err, path, 0, "no memory to build the record");
		return -ENOMEM;
	}
	if (!fields || !json_object_size(fields))
		return 0;
	at = mid->len;
	ret = append_json(mid, fields, DUMP_FLAGS);
	if (ret) {
		mid->len = at;
		audit_err(err, path, 0, ret == -EINVAL ?
			  "record fields cannot be serialized" :
			  "no memory to build the record");
		return ret;
	}
	/* {"k":v,...} follows the head as ,"k":v,... */
	mid->data[at] = ',';
	mid->data[--mid->len] = '\0';
	return 0;
}

/* seq in decimal at p; its length. */
static size_t format_seq(char *p, uint64_t v)
{
	char d[SEQ_DIGITS];
	size_t n = 0, i;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = d[n - 1 - i];
	return n;
}

/* Appends the line for one record to line: head, the caller's middle, the
 * trailer; no newline at its end. */
int audit_build_line(struct cw_buf *line, bool need_nl, uint64_t seq,
		     const char *mid, size_t mid_len, bool torn,
		     const char *rotated_from, const char *prev)
{
	char head[HEAD_LEN];
	size_t h = sizeof(TS_KEY) - 1;

	memcpy(head, TS_KEY, h);
	cw_format_ts(cw_now_us(), head + h, CW_TS_LEN);
	h += strlen(head + h);
	memcpy(head + h, LIT(SEQ_KEY));
	h += sizeof(SEQ_KEY) - 1;
	h += format_seq(head + h, seq);
	head[h++] = ',';
	/* A torn line gets its own newline so it stands alone. */
	if ((need_nl && cw_buf_append(line, LIT("\n"))) ||
	    cw_buf_append(line, head, h) ||
	    cw_buf_append(line, mid, mid_len) ||
	    (torn && cw_buf_append(line, LIT(",\"torn_before\":true"))) ||
	    (rotated_from &&
	     (cw_buf_append(line, LIT(",\"rotated_from\":\"")) ||
	      cw_buf_append(line, rotated_from, strlen(rotated_from)) ||
	      cw_buf_append(line, LIT("\"")))) ||
	    cw_buf_append(line, LIT(",\"prev\":\"")) ||
	    cw_buf_append(line, prev, strlen(prev)) ||
	    cw_buf_append(line, LIT("\"}")))
		return -ENOMEM;
	return 0;
}

/* Whether an object uses a name reserved[] keeps for the log: one pass
 * over its keys rather than a lookup of each name. */
static bool has_reserved(json_t *fields)
{
	const char *k;
	size_t i, len;
	void *it;

	for (it = json_object_iter(fields); it;
	     it = json_object_iter_next(fields, it)) {
		k = json_object_iter_key(it);
		len = json_object_iter_key_len(it);
		for (i = 0; i < CW_ARRAY_SIZE(reserved); i++)
			if (k[0] == reserved[i][0] &&
			    len == strlen(reserved[i]) &&
			    !memcmp(k, reserved[i], len))
				return true;
	}
	return false;
}

/* Checks a record and appends its middle (type, invocation, fields) to
 * mid. */
int audit_prepare_record(struct cw_audit *a, struct heads *h,
			 const char *type, const char *invocation,
			 json_t *fields, struct cw_buf *mid,
			 struct cw_error *err)
{
	size_t i, start = mid->len;
	int ret;

	if (!a || !type || !*type) {
		ret = -EINVAL;
		audit_err(err, a ? a->path : "", 0,
			  "audit record needs a log and a type");
		goto out;
	}
	if (fields && !json_is_object(fields)) {
		ret = -EINVAL;
		audit_err(err, a->path, 0,
			  "record fields must be a JSON object");
		goto out;
	}
	for (i = 0; fields && has_reserved(fields) &&
		    i < CW_ARRAY_SIZE(reserved); i++) {
		if (json_object_get(fields, reserved[i])) {
			ret = -EINVAL;
			audit_err(err, a->path, 0,
				  "record field \"%s\" is reserved for the audit log itself",
				  reserved[i]);
			goto out;
		}
	}
	ret = build_middle(a->path, h, type, invocation, fields, mid, err);
	if (ret)
		goto out;
	/* Refuse before taking any lock what can never fit. */
	if (mid->len - start >= CW_AUDIT_MAX_LINE) {
		ret = -EMSGSIZE;
		audit_err(err, a->path, 0,
			  "record of over %zu bytes exceeds the %u byte line limit",
			  mid->len - start, CW_AUDIT_MAX_LINE - 1);
		goto out;
	}
out:
	return ret;
}
