// SPDX-License-Identifier: Apache-2.0
/*
 * The options and diagnostics the subcommands share: the program name,
 * printing a struct cw_diag, and the options of the commands that open the
 * engine (--policy, --state-dir, --audit, --audit-max-bytes,
 * --audit-max-total, --trace-ringbuf,
 * --trace-overflow) with their help text, parsing and the engine opening.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "engine/engine.h"
#include "kernel/trace.h"

/* One formatted struct cw_error: source, line, column, path and text. */
#define DIAG_LINE_MAX 1200

const char cw_cli_prog[] = "cmdwarden";

/* kind: "" for errors, "warning: " for warnings. */
void cw_cli_print_diag_as(const struct cw_diag *d, const char *kind)
{
	char buf[DIAG_LINE_MAX];
	size_t i;

	for (i = 0; i < d->n; i++) {
		cw_error_format(&d->items[i], buf, sizeof(buf));
		fprintf(stderr, "%s: %s%s\n", cw_cli_prog, kind, buf);
	}
}

void cw_cli_print_diag(const struct cw_diag *d)
{
	cw_cli_print_diag_as(d, "");
}

const char cw_cli_common_help[] =
	"  --policy FILE     policy file (default: the embedded default policy)\n"
	"  --state-dir DIR   durable rate-limit counters (default " CW_DEFAULT_STATE_DIR ")\n"
	"  --audit FILE      audit log, JSON Lines (default " CW_DEFAULT_AUDIT ")\n"
	"  --audit-max-bytes N  rotate the audit log before it passes N bytes\n"
	"                    (K, M, G suffixes; default 64M; 0: never rotate)\n"
	"  --audit-max-total N  remove the oldest rotated files, recording it,\n"
	"                    once the log's files pass N bytes (default 512M;\n"
	"                    0: keep every file)\n"
	"  --trace-ringbuf KIB  kernel event ring buffer, rounded up to a power of\n"
	"                    two pages (default 512 KiB)\n"
	"  --trace-overflow pause|kill  when kernel events come faster than they\n"
	"                    are written: pause the call producing them (default),\n"
	"                    or not; either way a process whose event finds the\n"
	"                    ring full is killed, never left unrecorded\n"
	"  --help            this text\n";

/* "N", "NK", "NM", "NG" (powers of 1024); 0 or -EINVAL. */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* A size option where 0 turns the bound off (*out UINT64_MAX). */
static void size_opt(struct cw_cli_common *co, const char *opt,
		     const char *zero, const char *example, uint64_t *out)
{
	uint64_t v;

	if (parse_size(optarg, &v) || (v && v < 4096)) {
		fprintf(stderr, "%s: %s wants 0 (%s) or a size of at least 4096 bytes such as %s, got \"%s\"\n",
			cw_cli_prog, opt, zero, example, optarg);
		co->bad = true;
	} else {
		*out = v ? v : UINT64_MAX;
	}
}

bool cw_cli_common_opt(int c, struct cw_cli_common *co)
{

	switch (c) {
	case CW_OPT_AUDIT_MAX:
		size_opt(co, "--audit-max-bytes", "never rotate", "64M",
			 &co->audit_max_bytes);
		return true;
	case CW_OPT_AUDIT_TOTAL:
		size_opt(co, "--audit-max-total", "keep every file", "512M",
			 &co->audit_max_total);
		return true;
	case CW_OPT_POLICY:
		co->policy = optarg;
		return true;
	case CW_OPT_STATE:
		co->state_dir = optarg;
		return true;
	case CW_OPT_AUDIT:
		co->audit = optarg;
		return true;
	case CW_OPT_TRACE_OVERFLOW:
		if (!strcmp(optarg, "pause") || !strcmp(optarg, "kill")) {
			co->trace_no_pause = !strcmp(optarg, "kill");
		} else {
			/* "drop" is gone: no event is dropped by choice */
			fprintf(stderr, "%s: --trace-overflow wants pause or kill, got \"%s\"%s\n",
				cw_cli_prog, optarg,
				!strcmp(optarg, "drop") ? " (events are no longer dropped: kill does not pause, and kills a process whose event finds the ring full)" : "");
			co->bad = true;
		}
		return true;
	case CW_OPT_RINGBUF: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || optarg[0] == '-' || v < 1 ||
		    v > CW_TRACE_RINGBUF_MAX_KIB) {
			fprintf(stderr, "%s: --trace-ringbuf wants KiB from 1 to %u, got \"%s\"\n",
				cw_cli_prog, CW_TRACE_RINGBUF_MAX_KIB, optarg);
			co->bad = true;
		} else {
			co->trace_ringbuf_kib = (unsigned)v;
		}
		return true;
	}
	}
	return false;
}

/* serve says once which layers are off; exec stays quiet about them. */
struct cw_engine *cw_cli_open_engine(const struct cw_cli_common *co,
				     bool warn_layers)
{
	struct cw_engine_opts o = { co->policy, co->state_dir, co->audit,
				    co->audit_max_bytes, co->audit_max_total,
				    co->trace_ringbuf_kib,
				    co->approval_lifetime_s, co->trace_no_pause };
	struct cw_engine *e;
	struct cw_diag d;

	cw_diag_init(&d);
	e = cw_engine_open(&o, &d);
	if (!e) {
		cw_cli_print_diag(&d);
	} else {
		cw_engine_lint(cw_engine_policy(e), &d);
		if (warn_layers)
			cw_engine_layer_warnings(cw_engine_policy(e), &d);
		cw_cli_print_diag_as(&d, "warning: ");
	}
	cw_diag_free(&d);
	return e;
}
