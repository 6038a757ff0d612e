// SPDX-License-Identifier: Apache-2.0
/*
 * Latency of tools/call run_command "true" over stdio against a bare
 * fork+exec of the same `bash -c true`, and the agent's peak RSS.
 *   bench_latency CMDWARDEN POLICY STATE_DIR AUDIT N
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

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

int main(int argc, char **argv)
{
	int to[2], from[2], n, i;
	int64_t *agent, *bare;
	char line[65536], path[64];
	FILE *in, *out, *st;
	pid_t pid;
	long hwm = -1;

	if (argc < 6) {
		fprintf(stderr, "usage: %s CMDWARDEN POLICY STATE_DIR AUDIT N\n", argv[0]);
		return 2;
	}
	n = atoi(argv[5]);
	agent = calloc((size_t)n, sizeof(*agent));
	bare = calloc((size_t)n, sizeof(*bare));
	if (!agent || !bare || pipe(to) || pipe(from))
		return 1;
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(argv[1], argv[1], "serve", "--policy", argv[2],
		      "--state-dir", argv[3], "--audit", argv[4], (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	out = fdopen(to[1], "w");
	in = fdopen(from[0], "r");
	fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
		     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	fflush(out);
	if (readline(in, line, sizeof(line)))
		return 1;
	/* Interleaved, so both see the same machine at the same moment. */
	for (i = -10; i < n; i++) {
		int64_t t0 = cw_mono_us();
		pid_t c;

		fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}\n",
			i + 100);
		fflush(out);
		if (readline(in, line, sizeof(line)))
			return 1;
		if (!strstr(line, "\"isError\":false")) {
			fprintf(stderr, "bench_latency: call failed: %.300s\n", line);
			return 1;
		}
		if (i >= 0)
			agent[i] = cw_mono_us() - t0;

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
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = fopen(path, "r");
	while (st && fgets(line, sizeof(line), st))
		if (sscanf(line, "VmHWM: %ld kB", &hwm) == 1)
			break;
	if (st)
		fclose(st);
	fclose(out);
	fclose(in);
	waitpid(pid, NULL, 0);

	report("agent_call", agent, n);
	report("bare_fork_exec", bare, n);
	printf("agent_peak_rss_kib %ld\n", hwm);
	free(agent);
	free(bare);
	return 0;
}
