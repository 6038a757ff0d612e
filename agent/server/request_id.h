/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The id of a request that cannot be parsed whole: one cut at the size
 * limit, or one with a syntax error after its id. JSON-RPC answers such a
 * request with a null id, and a client that waits for its own id then
 * waits forever; where the id can be read from the bytes at hand, the
 * error carries it instead.
 */
#ifndef CW_SERVER_REQUEST_ID_H
#define CW_SERVER_REQUEST_ID_H

#include <stddef.h>

#include <jansson.h>

/* The top-level "id" member of the object that buf starts with, when it
 * is read whole (a string or an integer, followed by a delimiter) before
 * the bytes end or stop being JSON; NULL otherwise. The key must be
 * written "id" (an escaped spelling of it is not looked for); the first
 * one counts. New reference. */
json_t *cw_request_id(const char *buf, size_t len);

#endif
