/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Socket families and netlink protocols by their kernel names ("AF_VSOCK",
 * "NETLINK_SOCK_DIAG"), both ways: a policy names them, the seccomp
 * profile and its audit records use the numbers.
 */
#ifndef CW_LIB_SOCKFAMILY_H
#define CW_LIB_SOCKFAMILY_H

/* Families are below this bound, netlink protocols below the other one
 * (the kernel's own limits: AF_MAX grows, MAX_LINKS is 32). */
#define CW_SOCKFAMILY_LIMIT 64
#define CW_NETLINK_PROTO_LIMIT 32

/* The name of a family or netlink protocol, or NULL when it has none. */
const char *cw_sockfamily_name(int family);
const char *cw_netlink_proto_name(int protocol);

/* The number a name stands for, or -1. Names are exact ("AF_UNIX"). */
int cw_sockfamily_by_name(const char *name);
int cw_netlink_proto_by_name(const char *name);

/*
 * One entry of a policy's list: "AF_X", or "AF_NETLINK:NETLINK_Y" for one
 * netlink protocol. 0 with *family and *protocol set (-1: every protocol
 * of the family); -ENOENT for an unknown family, -EPROTONOSUPPORT for an
 * unknown netlink protocol, -EINVAL for a protocol after another family.
 */
int cw_sockfamily_parse(const char *entry, int *family, int *protocol);

/* Every known name, in number order, NULL-terminated (for messages that
 * list what was expected). */
extern const char *const cw_sockfamily_names[];
extern const char *const cw_netlink_proto_names[];

#endif
