/* SPDX-License-Identifier: Apache-2.0 */
/* MCP stdio transport: newline-delimited JSON-RPC on two descriptors. */
#ifndef CW_SERVER_STDIO_H
#define CW_SERVER_STDIO_H

#include <stddef.h>

#include "server/mcp.h"

#define CW_DEFAULT_MAX_REQUEST (1024 * 1024)

/* Serves until end of input. A line longer than max_request is answered
 * with an error and skipped without being held in memory. 0 at EOF, -errno
 * when the output cannot be written. */
int cw_stdio_serve(struct cw_mcp *m, int in_fd, int out_fd,
		   size_t max_request);

#endif
