/* SPDX-License-Identifier: Apache-2.0 */
/*
 * headtail: a stream's output kept within a byte budget as its first and
 * its last bytes. A build or a test run says what went wrong at its end,
 * so a cut that kept only the start would drop the part an agent needs;
 * the start says what ran. Rendered with a marker line at the cut:
 *   ...first bytes
 *   [... 12,345,678 bytes omitted ...]
 *   last bytes...
 */
#ifndef CW_LIB_HEADTAIL_H
#define CW_LIB_HEADTAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

struct cw_headtail {
	char *head, *tail;	/* tail: a ring of tail_max bytes */
	size_t head_max, tail_max;
	size_t head_len, tail_len, tail_pos; /* tail_pos: the oldest byte */
	uint64_t total;		/* bytes given, kept or not */
	bool nomem;		/* a buffer could not be had: less is kept */
};

/* max bytes in all: the first half (rounded up) from the start, the rest
 * from the end. Buffers are had as bytes come. */
void cw_headtail_init(struct cw_headtail *h, size_t max);
void cw_headtail_add(struct cw_headtail *h, const char *p, size_t n);
/* Bytes given but not kept. */
uint64_t cw_headtail_omitted(const struct cw_headtail *h);
/* The kept bytes in order, with the marker line between head and tail
 * when bytes were omitted, appended to out. 0 or -ENOMEM. */
int cw_headtail_render(const struct cw_headtail *h, struct cw_buf *out);
void cw_headtail_free(struct cw_headtail *h);

#endif
