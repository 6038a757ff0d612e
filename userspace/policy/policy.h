/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy: parse, validate and compile a policy.json.
 *
 * A loaded policy is immutable and compiled: regexes are compiled, rules are
 * sorted for lookup, sandbox sections are filled with defaults, so deciding
 * a call does no parsing. The structures below are read by decide.c and by
 * the launcher; everything else treats struct cw_policy as opaque.
 */
#ifndef CW_POLICY_POLICY_H
#define CW_POLICY_POLICY_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/util.h"

enum cw_action {
	CW_ACTION_ALLOW = 0,
	CW_ACTION_DENY,
	CW_ACTION_APPROVAL, /* "require_approval" */
};

enum cw_op {
	CW_OP_EQ = 0,
	CW_OP_NEQ,
	CW_OP_IN,
	CW_OP_NOT_IN,
	CW_OP_LT,
	CW_OP_LTE,
	CW_OP_GT,
	CW_OP_GTE,
	CW_OP_REGEX,
	CW_OP_NOT_REGEX,
	CW_OP_CONTAINS,
	CW_OP_PREFIX,
	CW_OP_MAX_LENGTH,
	CW_OP_EXISTS,
};

/* Where a condition's path points. */
enum cw_path_kind {
	CW_PATH_ARGS = 0,	 /* args.<name>... : parts[] after "args" */
	CW_PATH_CMD_PROGRAMS, /* command.programs (run_command only) */
	CW_PATH_CMD_OPAQUE,   /* command.opaque (run_command only) */
};

struct cw_cond {
	char *path;		/* as written: "args.command" */
	enum cw_path_kind kind;
	char **parts;		/* for CW_PATH_ARGS: components after "args" */
	size_t nparts;
	enum cw_op op;
	json_t *value;		/* the literal value (owned reference) */
	regex_t re;		/* compiled when op is regex/not_regex */
	bool has_re;
	char *reason;		/* may be NULL */
	char *where;		/* JSON path of the condition: tools.x.deny_if[2] */
};

enum cw_scope {
	CW_SCOPE_GRANT = 0,
	CW_SCOPE_SESSION,
	CW_SCOPE_GLOBAL,
};

struct cw_limit {
	char *counter;
	int64_t window_s;	/* "second"=1, "minute"=60, "hour"=3600, "day"=86400 */
	int64_t max;		/* >= 0 */
	enum cw_scope scope;
	char *where;		/* JSON path: tools.run_command.limits[0] */
};

/* IPv4 or IPv6 CIDR plus an optional port range, for sandbox.network. */
struct cw_net_rule {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network byte order, host bits cleared */
	uint8_t prefix;		/* prefix length */
	uint16_t port_lo;	/* 0..65535; both 0 = any port */
	uint16_t port_hi;
	char *text;		/* as written, for audit */
};

/*
 * The kernel layers, in the order `cmdwarden probe` and the audit records
 * list them: X(ID, name). Each gives CW_LAYER_IDX_<ID> (its bit number),
 * CW_LAYER_<ID> (its bit, as in require_layers) and cw_layer_names[idx].
 * What a layer needs of the kernel is its row in agent/engine/layers.c,
 * indexed by CW_LAYER_IDX_<ID>.
 */
#define CW_LAYERS(X)			\
	X(SECCOMP, "seccomp")		\
	X(LANDLOCK, "landlock")		\
	X(BPF_NET, "bpf_net")		\
	X(CGROUP, "cgroup")		\
	X(BPF_TRACE, "bpf_trace")	\
	X(NAMESPACES, "namespaces")

enum cw_layer_idx {
#define CW_LAYER_IDX_(id, name) CW_LAYER_IDX_##id,
	CW_LAYERS(CW_LAYER_IDX_)
#undef CW_LAYER_IDX_
	CW_LAYER_COUNT
};

enum {
#define CW_LAYER_BIT_(id, name) CW_LAYER_##id = 1u << CW_LAYER_IDX_##id,
	CW_LAYERS(CW_LAYER_BIT_)
#undef CW_LAYER_BIT_
};

/* Name of each layer by bit number, NULL-ended. */
extern const char *const cw_layer_names[CW_LAYER_COUNT + 1];

struct cw_strv {
	char **v;
	size_t n;
};

/* How an allowed run_command executes, defaults filled in. */
struct cw_sandbox {
	char *user;		/* default "user" */
	bool user_explicit;	/* the policy named the user */
	struct cw_strv users;	/* the accounts a call may pick with its
				 * "user" argument; default none */
	char *shell;		/* default "/bin/bash" */
	bool login_shell;	/* shell -l -c, as E2B runs commands: the
				 * profile files set PATH; default true */
	char *cwd;		/* default "/home/user" */
	bool cwd_explicit;	/* the policy named cwd (else a missing default
				 * falls back to the user's home, then "/") */
	struct cw_strv env_pass; /* variable names copied from the agent's env */
	struct cw_strv env_set_keys; /* parallel arrays: set KEY=VAL */
	struct cw_strv env_set_vals;
	int64_t timeout_s;	/* default 60 */
	int64_t background_timeout_s; /* default 3600; 0: until killed or the
				       * agent stops */
	int64_t max_output_bytes; /* default 65536, per stream: the first
				   * half and the last */
	struct {
		int64_t memory_mb;	/* 0 = unlimited; default 1024 */
		int64_t pids;		/* default 256 */
		int64_t cpu_s;		/* default 120 */
		int64_t nofile;		/* default 1024 */
		int64_t file_size_mb;	/* default 512 */
	} resources;
	struct {
		struct cw_strv read, write, exec, deny;
	} filesystem;
	struct {
		bool default_allow;	/* "default": "allow" */
		struct cw_net_rule *deny;
		size_t ndeny;
		struct cw_net_rule *allow;
		size_t nallow;
		/* Local listeners outside the calls a call may reach
		 * (ADDR[/LEN]:PORT): every other one is refused. */
		struct cw_net_rule *local_services;
		size_t nlocal_services;
		/* Pathname unix sockets outside the calls a call may reach
		 * (a path, or a directory ending in "/" for all beneath it):
		 * every other one is masked in the call's mount namespace. */
		struct cw_strv unix_sockets;
		int64_t max_connections;	/* 0 = unlimited */
		int64_t max_egress_bytes;	/* 0 = unlimited */
		bool raw_sockets;
		bool audit_allowed;	/* net records for admitted
					 * connections too, not only denials */
	} network;
	struct {
		int64_t max_files_written;	/* 0 = unlimited */
		int64_t max_write_bytes;	/* 0 = unlimited */
		struct cw_strv deny_open;	/* absolute path prefixes */
	} files;			/* enforced by the bpf_trace layer */
	struct {
		int64_t max_records;	/* kernel-event records of one call
					 * before the rest are summarised;
					 * 0 = unlimited */
		int64_t max_bytes;	/* and their bytes */
	} audit;
	struct {
		struct cw_strv tmpfs;	/* trees given a budget as a tmpfs */
		int64_t max_mb;		/* default 1024 */
		int64_t max_inodes;	/* default 65536 */
		struct cw_strv image;	/* trees given an image of their own */
		int64_t image_mb;	/* default 8192 */
		int64_t image_inodes;	/* default 524288 */
		char *image_dir;	/* where the images are */
	} disk;				/* kernel/tmpfs.h, kernel/diskimage.h */
	struct {
		char *profile;		/* "default" or "none" */
		struct cw_strv deny;	/* extra syscall names to deny */
		struct cw_strv allow;	/* syscalls removed from the profile */
		struct cw_strv socket_families; /* "AF_X", "AF_NETLINK:NETLINK_Y"
						 * beyond the default ones */
	} seccomp;
	unsigned require_layers;	/* CW_LAYER_* bits */
};

struct cw_rule {
	char *name;		/* tool name */
	enum cw_action action;
	char *reason;		/* may be NULL */
	struct cw_cond *require;
	size_t nrequire;
	struct cw_cond *deny_if;
	size_t ndeny_if;
	struct cw_limit *limits;
	size_t nlimits;
	bool uses_command;	/* some condition reads command.* */
	struct cw_sandbox *sandbox; /* non-NULL only for run_command */
};

struct cw_policy {
	char *source;		/* file name or "<embedded>" */
	enum cw_action default_action; /* ALLOW or DENY */
	bool hide_all;		/* hide: ["*"] */
	struct cw_strv hide;	/* sorted */
	int64_t max_concurrent;	/* commands running at once; 0 = not set */
	struct cw_limit *all_limits;
	size_t nall_limits;
	struct cw_rule *rules;	/* sorted by name */
	size_t nrules;
	/* The sandbox used when run_command is allowed by "default": "allow"
	 * or its rule has no sandbox section. */
	struct cw_sandbox default_sandbox;
};

/* Load from a file. On failure returns NULL, errno = EINVAL (or the I/O
 * errno) and every problem found is appended to diag. */
struct cw_policy *cw_policy_load_file(const char *path, struct cw_diag *diag);
/* Load from memory; source names it in errors. */
struct cw_policy *cw_policy_load_buffer(const char *buf, size_t len,
					const char *source,
					struct cw_diag *diag);
/* The embedded default: the seed policy plus the default sandbox profile. */
struct cw_policy *cw_policy_load_default(struct cw_diag *diag);
void cw_policy_free(struct cw_policy *p);

/* Rule for a tool, or NULL when the tool is not listed. */
const struct cw_rule *cw_policy_rule(const struct cw_policy *p,
				     const char *tool);
/* True when the tool is hidden (left out of tools/list, denied if called). */
bool cw_policy_hidden(const struct cw_policy *p, const char *tool);
/* True when every call of the tool is refused whatever its arguments:
 * hidden, a rule whose action is deny, or not listed under default deny.
 * tools/list leaves such a tool out. */
bool cw_policy_refuses(const struct cw_policy *p, const char *tool);
/* The sandbox for run_command: its rule's, else the default profile. */
const struct cw_sandbox *cw_policy_sandbox(const struct cw_policy *p);

const char *cw_action_name(enum cw_action a);
const char *cw_op_name(enum cw_op op);
const char *cw_scope_name(enum cw_scope s);

#endif
