/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the subcommands share: the program name their messages start with,
 * printing a struct cw_diag, and the options of the commands that open the
 * engine (serve, exec) with their parsing, help text and the engine opening.
 */
#ifndef CW_CLI_OPTIONS_H
#define CW_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/util.h"

struct cw_engine;

/* "cmdwarden", the first word of every message. */
extern const char cw_cli_prog[];

/* Each item of d on stderr as "cmdwarden: KIND TEXT"; kind is "" for
 * errors, "warning: " for warnings. */
void cw_cli_print_diag_as(const struct cw_diag *d, const char *kind);
/* cw_cli_print_diag_as(d, ""). */
void cw_cli_print_diag(const struct cw_diag *d);

/* Options shared by the commands that open the engine. */
struct cw_cli_common {
	const char *policy;
	const char *state_dir;
	const char *audit;
	uint64_t audit_max_bytes;	/* 0: default, UINT64_MAX: never */
	uint64_t audit_max_total;	/* 0: default, UINT64_MAX: keep all */
	unsigned trace_ringbuf_kib;	/* 0: default */
	bool trace_no_pause;		/* --trace-overflow kill */
	int64_t approval_lifetime_s;	/* serve; 0: default */
	bool bad;			/* an option's value was refused */
};

/* getopt_long values of the shared options; a command numbers its own
 * options from CW_OPT_OWN. */
enum {
	CW_OPT_POLICY = 1000,
	CW_OPT_STATE,
	CW_OPT_AUDIT,
	CW_OPT_AUDIT_MAX,
	CW_OPT_AUDIT_TOTAL,
	CW_OPT_RINGBUF,
	CW_OPT_TRACE_OVERFLOW,
	CW_OPT_HELP,
	CW_OPT_OWN,
};

/* The struct option rows of struct cw_cli_common, and --help. */
#define CW_CLI_COMMON_OPTS                                                   \
	{ "policy", required_argument, NULL, CW_OPT_POLICY },                \
	{ "state-dir", required_argument, NULL, CW_OPT_STATE },              \
	{ "audit", required_argument, NULL, CW_OPT_AUDIT },                  \
	{ "audit-max-bytes", required_argument, NULL, CW_OPT_AUDIT_MAX },    \
	{ "audit-max-total", required_argument, NULL, CW_OPT_AUDIT_TOTAL },  \
	{ "trace-ringbuf", required_argument, NULL, CW_OPT_RINGBUF },        \
	{ "trace-overflow", required_argument, NULL, CW_OPT_TRACE_OVERFLOW }, \
	{ "help", no_argument, NULL, CW_OPT_HELP }

/* Their lines of --help. */
extern const char cw_cli_common_help[];

/* Takes getopt_long's value c when it is a shared option other than --help
 * (true), with optarg; a refused value is said on stderr and sets co->bad. */
bool cw_cli_common_opt(int c, struct cw_cli_common *co);

/* Opens the engine with co's options, lints the policy and prints the
 * warnings (with warn_layers, also which layers are off: serve says so
 * once, exec stays quiet); NULL after printing why it could not. */
struct cw_engine *cw_cli_open_engine(const struct cw_cli_common *co,
				     bool warn_layers);

#endif
