/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libbpf: what the BPF loaders (bpfnet.c, trace.c) share around libbpf:
 * the collector of libbpf's output while a skeleton opens and loads, so an
 * error can name the program that failed and the verifier's last word
 * instead of libbpf printing to stderr, and the size of a ring buffer.
 */
#ifndef CW_KERNEL_LIBBPF_H
#define CW_KERNEL_LIBBPF_H

#include <bpf/libbpf.h>

#include "lib/util.h"

/* Clears this thread's collected output and routes libbpf's output into
 * it; returns the previous print function for cw_libbpf_log_end. */
libbpf_print_fn_t cw_libbpf_log_begin(void);
void cw_libbpf_log_end(libbpf_print_fn_t old);

/* err = "what: strerror(e)[: libbpf's line][; verifier: last line]": the
 * first failure line naming a program, else libbpf's last line, and the
 * last telling line of the last complete verifier log. */
void cw_libbpf_error(struct cw_error *err, const char *what, int e);

/* The last whole message libbpf printed outside a verifier log and its
 * summary (without "libbpf: "); "" when none. */
const char *cw_libbpf_last(void);

/* A ring buffer's size in bytes for kib KiB (0: default_kib): a power of
 * two, at least a page, as BPF_MAP_TYPE_RINGBUF requires. */
unsigned long cw_libbpf_ringbuf_bytes(unsigned kib, unsigned default_kib);

#endif
