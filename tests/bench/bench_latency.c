// SPDX-License-Identifier: Apache-2.0
/*
 * Latency of tools/call run_command "true" over stdio against a bare
 * fork+exec of the same `bash -c true`, and the agent's peak RSS.
 *   bench_latency CMDWARDEN POLICY STATE_DIR AUDIT N [DISABLE]
 * With DISABLE, a second agent runs with CW_PROBE_DISABLE=DISABLE (its
 * state in STATE_DIR.b, its log in AUDIT.b) and every round calls both
 * agents and the bare command in turn: what the disabled layers cost is
 * then measured on the same machine at the same moment (b_agent_call_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

struct agent {
	pid_t pid;
	FILE *in, *out;
	int64_t *lat;
};

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("%s_median_us %lld\n%s_p99_us %lld\n", name,
	       (long long)v[n / 2], name, (long long)v[(n * 99) / 100]);
}

static int readline(FILE *f, char *buf, size_t len)
{
	return fgets(buf, (int)len, f) ? 0 : -1;
}

/* Starts `cmdwarden serve` (with CW_PROBE_DISABLE=disable when given) and
 * initializes the session. */
static int agent_start(struct agent *a, char **argv, const char *disable,
		       const char *suffix, int n)
{
	char line[65536], state[4096], audit[4096];
	int to[2], from[2];

	snprintf(state, sizeof(state), "%s%s", argv[3], suffix);
	snprintf(audit, sizeof(audit), "%s%s", argv[4], suffix);
	a->lat = calloc((size_t)n, sizeof(*a->lat));
	if (!a->lat || pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	a->pid = fork();
	if (a->pid < 0)
		return -1;
	if (a->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		if (disable)
			setenv("CW_PROBE_DISABLE", disable, 1);
		execl(argv[1], argv[1], "serve", "--policy", argv[2],
		      "--state-dir", state, "--audit", audit, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	a->out = fdopen(to[1], "w");
	a->in = fdopen(from[0], "r");
	if (!a->out || !a->in)
		return -1;
	fprintf(a->out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
		     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	fflush(a->out);
	return readline(a->in, line, sizeof(line));
}

/* One call; its latency in lat[i] when i >= 0 (a warm-up round when not). */
static int agent_call(struct agent *a, int i)
{
	char line[65536];
	int64_t t0 = cw_mono_us();

	fprintf(a->out, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}\n",
		i + 100);
	fflush(a->out);
	if (readline(a->in, line, sizeof(line)))
		return -1;
	if (!strstr(line, "\"isError\":false")) {
		fprintf(stderr, "bench_latency: call failed: %.300s\n", line);
		return -1;
	}
	if (i >= 0)
		a->lat[i] = cw_mono_us() - t0;
	return 0;
}

/* Peak RSS, then the agent is ended. */
static long agent_stop(struct agent *a)
{
	char line[256], path[64];
	long hwm = -1;
	FILE *st;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)a->pid);
	st = fopen(path, "r");
	while (st && fgets(line, sizeof(line), st))
		if (sscanf(line, "VmHWM: %ld kB", &hwm) == 1)
			break;
	if (st)
		fclose(st);
	fclose(a->out);
	fclose(a->in);
	waitpid(a->pid, NULL, 0);
	return hwm;
}

int main(int argc, char **argv)
{
	struct agent a = { 0 }, b = { 0 };
	const char *disable = argc > 6 ? argv[6] : NULL;
	int64_t *bare;
	long hwm, hwm_b = -1;
	int n, i;

	if (argc < 6) {
		fprintf(stderr, "usage: %s CMDWARDEN POLICY STATE_DIR AUDIT N [DISABLE]\n", argv[0]);
		return 2;
	}
	n = atoi(argv[5]);
	bare = calloc((size_t)n, sizeof(*bare));
	if (!bare || n < 1 || agent_start(&a, argv, NULL, "", n) ||
	    (disable && agent_start(&b, argv, disable, ".b", n)))
		return 1;
	/* Interleaved, so all see the same machine at the same moment. */
	for (i = -10; i < n; i++) {
		int64_t t0;
		pid_t c;

		if (agent_call(&a, i) || (disable && agent_call(&b, i)))
			return 1;
		t0 = cw_mono_us();
		c = fork();
		if (c == 0) {
			execl("/bin/bash", "bash", "-c", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(c, NULL, 0);
		if (i >= 0)
			bare[i] = cw_mono_us() - t0;
	}
	hwm = agent_stop(&a);
	if (disable)
		hwm_b = agent_stop(&b);

	report("agent_call", a.lat, n);
	if (disable)
		report("b_agent_call", b.lat, n);
	report("bare_fork_exec", bare, n);
	printf("agent_peak_rss_kib %ld\n", hwm);
	if (disable)
		printf("b_agent_peak_rss_kib %ld\n", hwm_b);
	free(a.lat);
	free(b.lat);
	free(bare);
	return 0;
}
