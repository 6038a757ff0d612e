// SPDX-License-Identifier: Apache-2.0
/*
 * Kernel-event records: the CPU the reading thread spends per event from a
 * decoded event to its line in the log (cw_trace_event_json, then
 * cw_audit_write_batch in batches of 256 with CW_AUDIT_DEFER_SYNC, as a
 * call's trace sink writes them). Half are opens of /etc/hostname, half
 * execs of cat with an argv. Put DIR on tmpfs to leave the disk out.
 * Prints "key value" lines.
 *   bench_events DIR [EVENTS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "kernel/trace.h"
#include "lib/util.h"

#define BATCH 256

static int64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void event(long i, struct cw_trace_event *ev)
{
	static const char argv[] = "cat\0/etc/hostname";

	memset(ev, 0, sizeof(*ev));
	ev->source = "bpf";
	ev->cgroup_id = 4242;
	ev->pid = 31000 + (uint32_t)(i % 1000);
	ev->tid = ev->pid;
	ev->uid = 1000;
	ev->dirfd = ev->dirfd2 = -100;
	if (i % 2) {
		ev->kind = CW_TRACE_FILE;
		snprintf(ev->comm, sizeof(ev->comm), "cat");
		ev->op = "open";
		ev->path = "/etc/hostname";
		ev->flags = O_RDONLY | O_CLOEXEC;
		ev->ret = 3;
		ev->has_ret = true;
	} else {
		ev->kind = CW_TRACE_EXEC;
		snprintf(ev->comm, sizeof(ev->comm), "bash");
		ev->ppid = 30999;
		ev->filename = "/usr/bin/cat";
		ev->argv = argv;
		ev->argv_len = sizeof(argv);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 200000;
	struct cw_audit_rec recs[BATCH];
	struct cw_trace_event ev;
	struct cw_error err;
	struct cw_audit *a;
	int64_t t0, c0, t1, c1, cb, cw = 0;
	uint64_t good = 0;
	char path[4096];
	size_t k = 0, j;
	long i;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: bench_events DIR [EVENTS]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench-events.jsonl", argv[1]);
	unlink(path);
	a = cw_audit_open(path, &err);
	if (!a) {
		fprintf(stderr, "bench_events: %s\n", err.text);
		return 1;
	}
	t0 = cw_mono_us();
	c0 = cpu_us();
	for (i = 0; i < n; i++) {
		event(i, &ev);
		recs[k].type = cw_trace_event_type(&ev);
		recs[k].invocation = "inv-0123456789abcdef";
		recs[k].fields = cw_trace_event_json(&ev);
		if (!recs[k].fields) {
			fprintf(stderr, "bench_events: out of memory\n");
			return 1;
		}
		if (++k < BATCH && i + 1 < n)
			continue;
		cb = cpu_us();
		if (cw_audit_write_batch(a, recs, k, CW_AUDIT_DEFER_SYNC,
					 NULL, &err)) {
			fprintf(stderr, "bench_events: %s\n", err.text);
			return 1;
		}
		cw += cpu_us() - cb;
		for (j = 0; j < k; j++)
			json_decref(recs[j].fields);
		k = 0;
	}
	c1 = cpu_us();
	t1 = cw_mono_us();
	cw_audit_close(a);
	if (cw_audit_verify(path, &good, &err) || good != (uint64_t)n) {
		fprintf(stderr, "bench_events: verify: %s:%d: %s\n",
			err.source, err.line, err.text);
		return 1;
	}
	unlink(path);
	printf("events_per_s %.0f\n", n / ((t1 - t0) / 1e6));
	printf("event_cpu_ns %.0f\n", (c1 - c0) * 1000.0 / n);
	/* of which writing the records (the rest: building and freeing
	 * their fields) */
	printf("event_write_cpu_ns %.0f\n", cw * 1000.0 / n);
	return 0;
}
