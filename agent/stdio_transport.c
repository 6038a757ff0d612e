// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "stdio_transport.h"

static int send_msg(int fd, json_t *msg)
{
	char *s;
	size_t n;
	int ret;

	if (!msg)
		return 0;
	s = cw_json_compact(msg);
	json_decref(msg);
	if (!s)
		return -ENOMEM;
	/* One write of the line and its newline keeps messages whole. */
	n = strlen(s);
	s[n] = '\n';
	ret = cw_write_all(fd, s, n + 1);
	free(s);
	return ret;
}

/* Handles one complete line (without its newline). */
static int handle_line(struct cw_mcp *m, int out_fd, char *line, size_t len)
{
	size_t i;

	if (len && line[len - 1] == '\r')
		len--;
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			break;
	if (i == len)
		return 0; /* blank lines are tolerated */
	return send_msg(out_fd, cw_mcp_handle_raw(m, line, len));
}

int cw_stdio_serve(struct cw_mcp *m, int in_fd, int out_fd,
		   size_t max_request)
{
	struct cw_buf line = { 0 };
	bool discarding = false;
	size_t discarded = 0;
	char chunk[65536];
	int ret = 0;

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
				/* Too large: drop what we hold and skip to the
				 * end of this line. */
				discarding = true;
				discarded = line.len + take;
				line.len = 0;
			} else if (cw_buf_append(&line, p, take) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (!nl)
				break;
			p = nl + 1;
			if (discarding) {
				ret = send_msg(out_fd,
					       cw_mcp_error(NULL,
							    CW_JSONRPC_INVALID_REQUEST,
							    "request too large: %zu bytes exceeds the limit of %zu bytes",
							    discarded,
							    max_request));
				discarding = false;
				discarded = 0;
			} else {
				ret = handle_line(m, out_fd,
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
		ret = handle_line(m, out_fd, line.data, line.len);
	else if (discarding)
		ret = send_msg(out_fd,
			       cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
					    "request too large: %zu bytes exceeds the limit of %zu bytes",
					    discarded, max_request));
out:
	cw_buf_free(&line);
	return ret;
}
