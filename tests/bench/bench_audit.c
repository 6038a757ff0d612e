// SPDX-License-Identifier: Apache-2.0
/*
 * Audit log throughput: records per second appended as a call writes them
 * (deferred, synced once per call), each one synced, with rotation on, and
 * how fast `audit verify` checks a log. Prints "key value" lines.
 *   bench_audit DIR [RECORDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "lib/util.h"

/* A record shaped like a net or seccomp record, about 300 bytes. */
static json_t *fields(long i)
{
	return json_pack("{s:i, s:s, s:s, s:[s,s,s,s,s,s], s:s, s:I}", "pid",
			 4242, "comm", "curl", "syscall", "unshare", "args",
			 "0x10000000",
			 "0x7ffec6aab790", "0x0", "0x8", "0x7ffec6aab980",
			 "0x0", "address", "169.254.169.254", "n",
			 (json_int_t)i);
}

/* Writes n records, syncing every `every` (1: each one). */
static double run(const char *path, long n, long every, uint64_t rotate)
{
	struct cw_error err;
	struct cw_audit *a = cw_audit_open(path, &err);
	int64_t t0, t1;
	long i;

	if (!a) {
		fprintf(stderr, "bench_audit: %s\n", err.text);
		exit(1);
	}
	cw_audit_set_max_bytes(a, rotate);
	t0 = cw_mono_us();
	for (i = 0; i < n; i++) {
		json_t *f = fields(i);
		unsigned flags = (i + 1) % every ? CW_AUDIT_DEFER_SYNC : 0;

		if (cw_audit_write_flags(a, "net", "inv-0123456789abcdef", f,
					 flags, &err)) {
			fprintf(stderr, "bench_audit: %s\n", err.text);
			exit(1);
		}
		json_decref(f);
	}
	t1 = cw_mono_us();
	cw_audit_close(a);
	return n / ((t1 - t0) / 1e6);
}

static void clean(const char *path)
{
	char **files;
	size_t n, i;

	if (cw_audit_files(path, &files, &n, NULL))
		return;
	for (i = 0; i < n; i++)
		unlink(files[i]);
	cw_audit_files_free(files, n);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	struct cw_error err;
	uint64_t good = 0;
	int64_t t0, t1;
	char path[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: bench_audit DIR [RECORDS]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench-audit.jsonl", argv[1]);
	clean(path);
	/* As a call writes its kernel events: synced once per 100. */
	printf("audit_records_per_s_sync_per_100 %.0f\n",
	       run(path, n, 100, 0));
	t0 = cw_mono_us();
	if (cw_audit_verify(path, &good, &err)) {
		fprintf(stderr, "bench_audit: verify: %s:%d: %s\n", err.source,
			err.line, err.text);
		return 1;
	}
	t1 = cw_mono_us();
	printf("audit_verify_records_per_s %.0f\n", good / ((t1 - t0) / 1e6));
	clean(path);
	printf("audit_records_per_s_sync_each %.0f\n",
	       run(path, n / 50 > 0 ? n / 50 : 1, 1, 0));
	clean(path);
	/* Rotating every MiB: about 3,500 records per file. */
	printf("audit_records_per_s_rotating_1mib %.0f\n",
	       run(path, n, 100, 1u << 20));
	if (cw_audit_verify(path, &good, &err) || good != (uint64_t)n) {
		fprintf(stderr, "bench_audit: verify after rotation: %s:%d: %s\n",
			err.source, err.line, err.text);
		return 1;
	}
	clean(path);
	return 0;
}
