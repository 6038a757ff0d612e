// SPDX-License-Identifier: Apache-2.0
/* headtail: lib/headtail.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/headtail.h"

void cw_headtail_init(struct cw_headtail *h, size_t max)
{
	memset(h, 0, sizeof(*h));
	h->tail_max = max / 2;
	h->head_max = max - h->tail_max;
}

/* Room for want bytes at *buf, allocated on first use. */
static bool have(struct cw_headtail *h, char **buf, size_t want)
{
	if (*buf || !want)
		return true;
	*buf = malloc(want);
	if (!*buf)
		h->nomem = true;
	return *buf != NULL;
}

void cw_headtail_add(struct cw_headtail *h, const char *p, size_t n)
{
	size_t k, at;

	h->total += n;
	k = h->head_max - h->head_len;
	if (k > n)
		k = n;
	if (k && have(h, &h->head, h->head_max)) {
		memcpy(h->head + h->head_len, p, k);
		h->head_len += k;
		p += k;
		n -= k;
	}
	if (!n || !h->tail_max || !have(h, &h->tail, h->tail_max))
		return;
	/* Only the last tail_max bytes of this chunk can stay. */
	if (n >= h->tail_max) {
		memcpy(h->tail, p + n - h->tail_max, h->tail_max);
		h->tail_len = h->tail_max;
		h->tail_pos = 0;
		return;
	}
	while (n) {
		if (h->tail_len < h->tail_max) {
			/* filling: after the newest byte */
			at = (h->tail_pos + h->tail_len) % h->tail_max;
			k = h->tail_max - h->tail_len;
			if (k > h->tail_max - at)
				k = h->tail_max - at;
		} else {
			/* full: over the oldest bytes */
			at = h->tail_pos;
			k = h->tail_max - at;
		}
		if (k > n)
			k = n;
		memcpy(h->tail + at, p, k);
		if (h->tail_len < h->tail_max)
			h->tail_len += k;
		else
			h->tail_pos = (h->tail_pos + k) % h->tail_max;
		p += k;
		n -= k;
	}
}

uint64_t cw_headtail_omitted(const struct cw_headtail *h)
{
	return h->total - h->head_len - h->tail_len;
}

/* n with a comma between each three digits. */
static void with_commas(char *buf, size_t len, uint64_t n)
{
	char d[32];
	size_t i, j = 0, nd;

	nd = (size_t)snprintf(d, sizeof(d), "%llu", (unsigned long long)n);
	for (i = 0; i < nd && j + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = d[i];
	}
	buf[j] = '\0';
}

int cw_headtail_render(const struct cw_headtail *h, struct cw_buf *out)
{
	uint64_t omitted = cw_headtail_omitted(h);
	size_t first;
	char num[40], mark[80];
	int rc;

	rc = cw_buf_append(out, h->head ? h->head : "", h->head_len);
	if (!rc && omitted) {
		with_commas(num, sizeof(num), omitted);
		snprintf(mark, sizeof(mark), "%s[... %s bytes omitted ...]\n",
			 h->head_len && h->head[h->head_len - 1] != '\n' ?
				 "\n" : "", num);
		rc = cw_buf_append(out, mark, strlen(mark));
	}
	if (rc || !h->tail_len)
		return rc;
	first = h->tail_max - h->tail_pos;
	if (first > h->tail_len)
		first = h->tail_len;
	rc = cw_buf_append(out, h->tail + h->tail_pos, first);
	if (!rc && first < h->tail_len)
		rc = cw_buf_append(out, h->tail, h->tail_len - first);
	return rc;
}

void cw_headtail_free(struct cw_headtail *h)
{
	free(h->head);
	free(h->tail);
	memset(h, 0, sizeof(*h));
}
