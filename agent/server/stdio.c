// SPDX-License-Identifier: Apache-2.0
/*
 * The MCP stdio transport (see stdio.h): newline-delimited JSON-RPC read
 * from one descriptor, answers written to another. The reader runs on the
 * serving thread and never waits for a command: the MCP core (mcp.c) runs
 * tools/call requests on a pool of waiting threads (workers.c), and they
 * answer through send_out. Every message goes out whole under one lock, so
 * lines from different threads never interleave.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "server/request_id.h"
#include "server/stdio.h"

/* What one read takes in; a request line held past twice this is given
 * back once handled. */
#define READ_CHUNK 65536

struct out {
	int fd;
	pthread_mutex_t lock;
	int failed;		/* first write error, -errno */
};

static int write_msg(struct out *o, json_t *msg)
{
	char *s;
	size_t n;
	int ret;

	s = cw_json_compact(msg);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	s[n] = '\n';
	pthread_mutex_lock(&o->lock);
	ret = o->failed ? o->failed : cw_write_all(o->fd, s, n + 1);
	if (ret < 0 && !o->failed)
		o->failed = ret;
	pthread_mutex_unlock(&o->lock);
	free(s);
	return ret;
}

/* The session's out channel: from any thread. */
static int send_out(void *ctx, json_t *msg, json_t *related)
{
	(void)related;	/* one stream carries everything */
	return write_msg(ctx, msg);
}

/* A direct answer from the reader; takes msg. */
static int send_msg(struct out *o, json_t *msg)
{
	int ret;

	if (!msg)
		return 0;
	ret = write_msg(o, msg);
	json_decref(msg);
	return ret;
}

/* The answer to a line of len bytes, over max and skipped; id (taken)
 * as its first max bytes give it, or NULL. */
static int send_too_large(struct out *o, json_t *id, size_t len, size_t max)
{
	json_t *msg = cw_mcp_error(id, CW_JSONRPC_INVALID_REQUEST,
				   "request too large: %zu bytes exceeds the limit of %zu bytes",
				   len, max);

	json_decref(id);
	return send_msg(o, msg);
}

/* Handles one complete line (without its newline). */
static int handle_line(struct cw_mcp *m, struct out *out, char *line,
		       size_t len)
{
	size_t i;

	if (len && line[len - 1] == '\r')
		len--;
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			break;
	if (i == len)
		return 0; /* blank lines are tolerated */
	return send_msg(out, cw_mcp_handle_raw(m, line, len));
}

int cw_stdio_serve(struct cw_mcp *m, int in_fd, int out_fd,
		   size_t max_request)
{
	struct cw_buf line = { 0 };
	bool discarding = false;
	size_t discarded = 0;
	json_t *too_large_id = NULL;	/* the line's id, while discarding */
	char chunk[READ_CHUNK];
	struct out out = { .fd = out_fd, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct cw_mcp_out mo = { .send = send_out, .ctx = &out };
	int ret = 0;

	cw_mcp_set_out(m, &mo);

	for (;;) {
		ssize_t n = read(in_fd, chunk, sizeof(chunk));
		char *p = chunk, *end;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		end = chunk + n;
		while (p < end) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((nl ? nl : end) - p);

			if (discarding) {
				discarded += take;
			} else if (line.len + take > max_request) {
				/* Too large: its id from the first max_request
				 * bytes, then drop what we hold and skip to the
				 * end of this line. */
				discarded = line.len + take;
				if (cw_buf_append(&line, p,
						  max_request - line.len) < 0) {
					ret = -ENOMEM;
					goto out;
				}
				too_large_id = cw_request_id(line.data,
							     line.len);
				discarding = true;
				line.len = 0;
			} else if (cw_buf_append(&line, p, take) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (!nl)
				break;
			p = nl + 1;
			if (discarding) {
				ret = send_too_large(&out, too_large_id,
						     discarded, max_request);
				too_large_id = NULL;
				discarding = false;
				discarded = 0;
			} else {
				ret = handle_line(m, &out,
						  line.data ? line.data : "",
						  line.len);
				line.len = 0;
			}
			if (ret < 0)
				goto out;
			/* Give back memory a huge request needed. */
			if (line.cap > 2 * sizeof(chunk))
				cw_buf_free(&line);
		}
	}
	/* A last message without a newline still counts. */
	if (!discarding && line.len)
		ret = handle_line(m, &out, line.data, line.len);
	else if (discarding) {
		ret = send_too_large(&out, too_large_id, discarded,
				     max_request);
		too_large_id = NULL;
	}
out:
	/* Calls still running are answered before we return; when the
	 * client can no longer be written to, they are cancelled instead. */
	if (ret < 0)
		cw_mcp_cancel_all(m);
	else
		cw_mcp_end_input(m);
	cw_mcp_drain(m);
	cw_mcp_set_out(m, &(struct cw_mcp_out){ 0 });
	cw_buf_free(&line);
	json_decref(too_large_id);
	pthread_mutex_destroy(&out.lock);
	return ret ? ret : out.failed;
}
