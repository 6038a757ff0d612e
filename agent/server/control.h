/* SPDX-License-Identifier: Apache-2.0 */
/*
 * control: the agent's local control socket, for operators on the machine
 * (`cmdwarden approve ID`, `cmdwarden reject ID`, `cmdwarden approve
 * --list`).
 *
 * Each serving agent listens on <state_dir>/control/<pid>.sock: the
 * directory is 0700 and the socket 0600, and every connection's peer
 * credentials (SO_PEERCRED) are checked: only root or the agent's own user
 * is served. One request per connection, one JSON object per line each
 * way: {"op": "approve"|"reject"|"list", "id": "..."} and
 * {"ok": true, "message": "..."} or {"ok": false, "error": "...",
 * "code": "unknown"|"expired"|"already"|"refused"|"bad_request"}.
 */
#ifndef CW_SERVER_CONTROL_H
#define CW_SERVER_CONTROL_H

#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

#include "engine/engine.h"
#include "lib/util.h"

struct cw_control;

/* Answers one request from an allowed peer; returns the reply (new
 * reference). Called on the control thread. */
typedef json_t *(*cw_control_fn)(void *ctx, json_t *req,
				 const struct ucred *peer);

/* Creates the socket and starts the thread. NULL + errno + err. */
struct cw_control *cw_control_start(const char *state_dir, cw_control_fn fn,
				    void *ctx, struct cw_error *err);
/* Stops the thread and removes the socket. */
void cw_control_stop(struct cw_control *c);

/* Client: sends req to every agent under state_dir until one knows the id
 * (a reply whose code is not "unknown"); *reply gets that reply, or the
 * last "unknown" one. For "list", the pending approvals of every agent. 0, or -ENOENT when no agent listens there, or
 * -errno with err. */
int cw_control_request(const char *state_dir, json_t *req, json_t **reply,
		       struct cw_error *err);

/* Answers a request ({"op": "approve"|"reject", "id"} or {"op": "list"})
 * from peer with e's approvals, as a cw_control_fn does; decisions are
 * audited before they take effect. New reference. */
json_t *cw_control_answer(struct cw_engine *e, json_t *req,
			  const struct ucred *peer);

#endif
