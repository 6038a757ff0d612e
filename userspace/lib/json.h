/* SPDX-License-Identifier: Apache-2.0 */
/* JSON helpers shared by the agent and the library. */
#ifndef CW_LIB_JSON_H
#define CW_LIB_JSON_H

#include <stddef.h>

#include <jansson.h>

/* A JSON string from arbitrary bytes: invalid UTF-8 sequences become
 * U+FFFD, so command output of any kind can be returned. NULL on ENOMEM. */
json_t *cw_json_bytes(const char *p, size_t n);

/* A JSON string from a path or an argument as the kernel holds it:
 * bytes that are not UTF-8 are kept, escaped as \xNN, rather than
 * dropped. NULL on ENOMEM. */
json_t *cw_json_path(const char *s);

/* Serialises compactly into a malloc'd string; NULL on ENOMEM. */
char *cw_json_compact(const json_t *v);

#endif
