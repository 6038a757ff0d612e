// SPDX-License-Identifier: Apache-2.0
/*
 * cmdwarden: command-line entry points.
 *   serve   MCP server (stdio, or Streamable HTTP with --http)
 *   check   validate a policy
 *   eval    decide one call without running it
 *   exec    decide and run one command, print the E2B-shaped result
 *   audit   verify, tail, query, stats (cli/audit.c)
 *   version
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/approvals.h"
#include "cli/approve.h"
#include "cli/audit.h"
#include "server/control.h"
#include "policy/decide.h"
#include "engine/engine.h"
#include "server/grant.h"
#include "server/http.h"
#include "lib/json.h"
#include "server/mcp.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "rate/ratelimit.h"
#include "kernel/seccomp.h"
#include "server/stdio.h"
#include "kernel/trace.h"
#include "version.h"

static const char *prog = "cmdwarden";

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  serve    serve MCP over stdio or HTTP (run_command under the policy)\n"
		"  token    make a bearer token for a grant of serve --http\n"
		"  check    validate a policy file\n"
		"  eval     decide one tool call without running it\n"
		"  exec     decide and run one command, print its result as JSON\n"
		"  probe    which kernel layers this kernel and process can use\n"
		"  seccomp-profile  print the default seccomp profile, a reason per group\n"
		"  audit    verify, tail, query and count the audit log\n"
		"  approve  approve a pending approval id (reject: refuse it)\n"
		"  version  print the version\n"
		"\n"
		"`%s COMMAND --help` describes each command.\n",
		prog, prog);
}

/* kind: "" for errors, "warning: " for warnings. */
static void print_diag_as(const struct cw_diag *d, const char *kind)
{
	char buf[1200];
	size_t i;

	for (i = 0; i < d->n; i++) {
		cw_error_format(&d->items[i], buf, sizeof(buf));
		fprintf(stderr, "%s: %s%s\n", prog, kind, buf);
	}
}

static void print_diag(const struct cw_diag *d)
{
	print_diag_as(d, "");
}

/* Options shared by the commands that open the engine. */
struct common {
	const char *policy;
	const char *state_dir;
	const char *audit;
	uint64_t audit_max_bytes;	/* 0: default, UINT64_MAX: never */
	unsigned trace_ringbuf_kib;	/* 0: default */
	bool trace_drop;		/* --trace-overflow drop */
	int64_t approval_lifetime_s;	/* serve; 0: default */
	bool bad;			/* an option's value was refused */
};

enum { OPT_POLICY = 1000, OPT_STATE, OPT_AUDIT, OPT_AUDIT_MAX, OPT_RINGBUF,
       OPT_MAXREQ, OPT_TOOL, OPT_ARGS, OPT_GRANT, OPT_SESSION, OPT_CWD,
       OPT_TIMEOUT, OPT_HELP, OPT_HTTP, OPT_TOKENS, OPT_ORIGIN,
       OPT_HTTP_TIMEOUT, OPT_MAXCONN, OPT_SESSION_IDLE,
       OPT_APPROVAL_LIFETIME, OPT_TRACE_OVERFLOW };

#define COMMON_OPTS                                                 \
	{ "policy", required_argument, NULL, OPT_POLICY },          \
	{ "state-dir", required_argument, NULL, OPT_STATE },        \
	{ "audit", required_argument, NULL, OPT_AUDIT },            \
	{ "audit-max-bytes", required_argument, NULL, OPT_AUDIT_MAX }, \
	{ "trace-ringbuf", required_argument, NULL, OPT_RINGBUF },  \
	{ "trace-overflow", required_argument, NULL, OPT_TRACE_OVERFLOW }, \
	{ "help", no_argument, NULL, OPT_HELP }

static const char common_help[] =
	"  --policy FILE     policy file (default: the embedded default policy)\n"
	"  --state-dir DIR   durable rate-limit counters (default " CW_DEFAULT_STATE_DIR ")\n"
	"  --audit FILE      audit log, JSON Lines (default " CW_DEFAULT_AUDIT ")\n"
	"  --audit-max-bytes N  rotate the audit log before it passes N bytes\n"
	"                    (K, M, G suffixes; default 64M; 0: never rotate)\n"
	"  --trace-ringbuf KIB  kernel event ring buffer, rounded up to a power of\n"
	"                    two pages (default 512 KiB)\n"
	"  --trace-overflow pause|drop  when kernel events come faster than they\n"
	"                    are written: pause the call producing them (default),\n"
	"                    or lose and count them\n"
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

static bool common_opt(int c, struct common *co)
{
	uint64_t v;

	switch (c) {
	case OPT_AUDIT_MAX:
		if (parse_size(optarg, &v) || (v && v < 4096)) {
			fprintf(stderr, "%s: --audit-max-bytes wants 0 (never rotate) or a size of at least 4096 bytes such as 64M, got \"%s\"\n",
				prog, optarg);
			co->bad = true;
		} else {
			co->audit_max_bytes = v ? v : UINT64_MAX;
		}
		return true;
	case OPT_POLICY:
		co->policy = optarg;
		return true;
	case OPT_STATE:
		co->state_dir = optarg;
		return true;
	case OPT_AUDIT:
		co->audit = optarg;
		return true;
	case OPT_TRACE_OVERFLOW:
		if (!strcmp(optarg, "pause") || !strcmp(optarg, "drop")) {
			co->trace_drop = !strcmp(optarg, "drop");
		} else {
			fprintf(stderr, "%s: --trace-overflow wants pause or drop, got \"%s\"\n",
				prog, optarg);
			co->bad = true;
		}
		return true;
	case OPT_RINGBUF: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || optarg[0] == '-' || v < 1 ||
		    v > CW_TRACE_RINGBUF_MAX_KIB) {
			fprintf(stderr, "%s: --trace-ringbuf wants KiB from 1 to %u, got \"%s\"\n",
				prog, CW_TRACE_RINGBUF_MAX_KIB, optarg);
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
static struct cw_engine *open_engine(const struct common *co, bool warn_layers)
{
	struct cw_engine_opts o = { co->policy, co->state_dir, co->audit,
				    co->audit_max_bytes, co->trace_ringbuf_kib,
				    co->approval_lifetime_s, co->trace_drop };
	struct cw_engine *e;
	struct cw_diag d;

	cw_diag_init(&d);
	e = cw_engine_open(&o, &d);
	if (!e) {
		print_diag(&d);
	} else {
		cw_engine_lint(cw_engine_policy(e), &d);
		if (warn_layers)
			cw_engine_layer_warnings(cw_engine_policy(e), &d);
		print_diag_as(&d, "warning: ");
	}
	cw_diag_free(&d);
	return e;
}

static json_t *control_request(void *ctx, json_t *req,
				const struct ucred *peer)
{
	return cw_engine_control(ctx, req, peer);
}

/* Serves HTTP until SIGINT or SIGTERM; SIGHUP reloads the token file and
 * the policies. The signals are blocked in every thread and taken here. */
static int serve_http(struct cw_engine *e, const struct cw_http_opts *ho)
{
	struct cw_http *h;
	struct cw_diag d;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	cw_diag_init(&d);
	h = cw_http_start(e, ho, &d);
	if (!h) {
		print_diag(&d);
		cw_diag_free(&d);
		return 1;
	}
	fprintf(stderr, "%s serve: MCP on http://%s" CW_HTTP_PATH " (%zu allowed origins); SIGHUP reloads %s and the policies\n",
		prog, cw_http_address(h), ho->norigins, ho->tokens_path);
	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig != SIGHUP)
			break;
		cw_diag_free(&d);
		cw_diag_init(&d);
		if (cw_http_reload(h, &d) == 0) {
			print_diag_as(&d, "warning: ");
			fprintf(stderr, "%s serve: reloaded %s and the policies\n",
				prog, ho->tokens_path);
		} else {
			print_diag(&d);
			fprintf(stderr, "%s serve: reload failed; still serving with the previous tokens and policies\n",
				prog);
		}
	}
	fprintf(stderr, "%s serve: stopping; calls in progress finish first\n",
		prog);
	cw_http_stop(h);
	cw_diag_free(&d);
	return 0;
}

static int parse_count(const char *opt, const char *v, unsigned min,
		       unsigned max, unsigned *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || !*v || n < min || n > max) {
		fprintf(stderr, "%s serve: %s wants a whole number from %u to %u, got \"%s\"\n",
			prog, opt, min, max, v);
		return -EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

static int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
		{ "max-request", required_argument, NULL, OPT_MAXREQ },
		{ "http", required_argument, NULL, OPT_HTTP },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "allow-origin", required_argument, NULL, OPT_ORIGIN },
		{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "session-idle", required_argument, NULL, OPT_SESSION_IDLE },
		{ "approval-lifetime", required_argument, NULL,
		  OPT_APPROVAL_LIFETIME },
		{ NULL, 0, NULL, 0 },
	};
	struct common co = { 0 };
	struct cw_http_opts ho = { 0 };
	const char *origins[64];
	size_t max_request = CW_DEFAULT_MAX_REQUEST;
	struct cw_control *ctl;
	struct cw_error err = { 0 };
	struct cw_engine *e;
	struct cw_mcp *m;
	char *end;
	int c, ret;

	ho.origins = origins;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (common_opt(c, &co))
			continue;
		switch (c) {
		case OPT_MAXREQ:
			errno = 0;
			max_request = strtoull(optarg, &end, 10);
			if (errno || *end || max_request < 64) {
				fprintf(stderr, "%s serve: --max-request wants a number of bytes >= 64, got \"%s\"\n",
					prog, optarg);
				return 2;
			}
			break;
		case OPT_APPROVAL_LIFETIME:
			errno = 0;
			co.approval_lifetime_s = strtoll(optarg, &end, 10);
			if (errno || *end || co.approval_lifetime_s < 1 ||
			    co.approval_lifetime_s > 86400) {
				fprintf(stderr, "%s serve: --approval-lifetime wants seconds from 1 to 86400, got \"%s\"\n",
					prog, optarg);
				return 2;
			}
			break;
		case OPT_HTTP:
			ho.listen = optarg;
			break;
		case OPT_TOKENS:
			ho.tokens_path = optarg;
			break;
		case OPT_ORIGIN:
			if (ho.norigins == CW_ARRAY_SIZE(origins)) {
				fprintf(stderr, "%s serve: at most %zu --allow-origin\n",
					prog, CW_ARRAY_SIZE(origins));
				return 2;
			}
			origins[ho.norigins++] = optarg;
			break;
		case OPT_HTTP_TIMEOUT:
			if (parse_count("--http-timeout", optarg, 1, 3600,
					&ho.timeout_s) < 0)
				return 2;
			break;
		case OPT_MAXCONN:
			if (parse_count("--max-connections", optarg, 1, 4096,
					&ho.max_connections) < 0)
				return 2;
			break;
		case OPT_SESSION_IDLE:
			if (parse_count("--session-idle", optarg, 1, 7 * 86400,
					&ho.session_idle_s) < 0)
				return 2;
			break;
		case OPT_HELP:
			printf("usage: %s serve [OPTIONS]\n"
			       "       %s serve --http [HOST:]PORT --tokens FILE [OPTIONS]\n\n"
			       "Serves MCP (JSON-RPC 2.0) on stdin/stdout, one message per line, or with\n"
			       "--http as MCP Streamable HTTP at http://HOST:PORT" CW_HTTP_PATH ".\n"
			       "Diagnostics go to stderr. Operators decide approvals through the\n"
			       "control socket STATE_DIR/control/PID.sock (`cmdwarden approve`).\n\n%s"
			       "  --max-request N   largest request in bytes (default %d)\n"
			       "  --approval-lifetime S  how long an approval id lives (default %d)\n"
			       "  --http [HOST:]PORT  listen for HTTP (HOST defaults to " CW_HTTP_DEFAULT_HOST ";\n"
			       "                    [IPv6]:PORT; port 0 picks a free one)\n"
			       "  --tokens FILE     grants and the SHA-256 of their bearer tokens (mode 0600)\n"
			       "  --allow-origin O  a browser Origin allowed to call (repeatable; requests\n"
			       "                    with any other Origin get 403; without one they pass)\n"
			       "  --http-timeout S  idle connections close, and a body must arrive, within\n"
			       "                    S seconds (default %d)\n"
			       "  --max-connections N  connections at once (default %d)\n"
			       "  --session-idle S  a session unused for S seconds ends (default 3600)\n\n"
			       "With --http, SIGHUP reloads the token file and the policies (all or\n"
			       "nothing: a reload that fails keeps the running ones and says why).\n",
			       prog, prog, common_help, CW_DEFAULT_MAX_REQUEST,
			       CW_APPROVAL_LIFETIME_S, CW_HTTP_DEFAULT_TIMEOUT_S,
			       CW_HTTP_DEFAULT_MAX_CONNECTIONS);
			return 0;
		default:
			return 2;
		}
	}
	if (co.bad)
		return 2;
	if (optind < argc) {
		fprintf(stderr, "%s serve: unexpected argument \"%s\"\n", prog,
			argv[optind]);
		return 2;
	}
	if (ho.listen && !ho.tokens_path) {
		fprintf(stderr, "%s serve: --http needs --tokens FILE: every HTTP caller must present a grant's bearer token (see %s token --help)\n",
			prog, prog);
		return 2;
	}
	if (!ho.listen && (ho.tokens_path || ho.norigins || ho.timeout_s ||
			   ho.max_connections || ho.session_idle_s)) {
		fprintf(stderr, "%s serve: --tokens, --allow-origin, --http-timeout, --max-connections and --session-idle only go with --http\n",
			prog);
		return 2;
	}
	e = open_engine(&co, true);
	if (!e)
		return 1;
	/* Without the socket, approvals need an elicitation-capable client. */
	ctl = cw_control_start(co.state_dir ? co.state_dir :
					      CW_DEFAULT_STATE_DIR,
			       control_request, e, &err);
	if (ctl)
		cw_engine_operator_approvals(e, true);
	else
		fprintf(stderr, "%s serve: warning: %s; approvals only by elicitation\n",
			prog, err.text);
	if (ho.listen) {
		ho.policy_path = co.policy;
		ho.max_request = max_request;
		ret = serve_http(e, &ho);
		cw_control_stop(ctl);
		cw_engine_close(e);
		return ret;
	}
	m = cw_mcp_new(e, "local", "");
	if (!m) {
		cw_control_stop(ctl);
		cw_engine_close(e);
		fprintf(stderr, "%s serve: out of memory\n", prog);
		return 1;
	}
	ret = cw_stdio_serve(m, STDIN_FILENO, STDOUT_FILENO, max_request);
	if (ret < 0)
		fprintf(stderr, "%s serve: %s\n", prog, strerror(-ret));
	cw_mcp_free(m);
	cw_control_stop(ctl);
	cw_engine_close(e);
	return ret < 0 ? 1 : 0;
}

static int cmd_token(int argc, char **argv)
{
	char token[65], hash[65];
	json_t *entry;
	char *s;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc > 1 && strcmp(argv[1], "--help") == 0) {
			printf("usage: %s token NAME\n\n"
			       "Makes a random bearer token for the grant NAME. Prints the token (give\n"
			       "it to the caller; it is not stored anywhere) and then the entry to put\n"
			       "under \"grants\" in the token file of serve --http, which holds only its\n"
			       "SHA-256. Add \"policy\": FILE to the entry for a policy of the grant's own.\n",
			       prog);
			return 0;
		}
		fprintf(stderr, "usage: %s token NAME\n", prog);
		return 2;
	}
	cw_grants_new_token(token, hash);
	entry = json_pack("{s:{s:s}}", argv[1], "token_sha256", hash);
	s = entry ? json_dumps(entry, JSON_COMPACT) : NULL;
	json_decref(entry);
	if (!s)
		return 1;
	printf("%s\n%s\n", token, s);
	free(s);
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy = NULL;
	struct cw_policy *p;
	struct cw_diag d;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			policy = optarg;
			break;
		case OPT_HELP:
			printf("usage: %s check --policy FILE\n\n"
			       "Validates a policy: syntax, every field, regexes, syscall names and\n"
			       "required layers. Lists every error; exit 0 when valid, 1 when not.\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (!policy && optind < argc)
		policy = argv[optind];
	if (!policy) {
		fprintf(stderr, "%s check: --policy FILE is required\n", prog);
		return 2;
	}
	cw_diag_init(&d);
	p = cw_engine_load_policy(policy, &d);
	if (p) {
		struct cw_diag w;

		cw_diag_init(&w);
		cw_engine_lint(p, &w);
		print_diag_as(&w, "warning: ");
		cw_diag_free(&w);
		printf("%s: ok\n", policy);
	} else {
		print_diag(&d);
		fprintf(stderr, "%s: %zu error%s\n", policy, d.n,
			d.n == 1 ? "" : "s");
	}
	cw_policy_free(p);
	cw_diag_free(&d);
	return p ? 0 : 1;
}

static int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "args", required_argument, NULL, OPT_ARGS },
		{ "grant", required_argument, NULL, OPT_GRANT },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy = NULL, *state = NULL, *tool = NULL, *args = "{}";
	struct cw_call call = { .grant = "local", .session = "" };
	struct cw_rate_store *rs = NULL;
	struct cw_counter_view view, *vp = NULL;
	struct cw_policy *p = NULL;
	struct cw_verdict v;
	struct cw_error err;
	struct cw_diag d;
	json_error_t jerr;
	json_t *a = NULL, *out;
	char *s;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY: policy = optarg; break;
		case OPT_STATE: state = optarg; break;
		case OPT_TOOL: tool = optarg; break;
		case OPT_ARGS: args = optarg; break;
		case OPT_GRANT: call.grant = optarg; break;
		case OPT_SESSION: call.session = optarg; break;
		case OPT_HELP:
			printf("usage: %s eval [--policy FILE] --tool NAME [--args JSON]\n"
			       "          [--grant NAME] [--session ID] [--state-dir DIR]\n\n"
			       "Decides one call and prints the verdict as JSON: verdict, rule, reason\n"
			       "and the counters it would use. Runs nothing and changes no counter;\n"
			       "with --state-dir the current counts there are taken into account.\n"
			       "Exit 0 when allowed, 3 when not, 1 on error.\n",
			       prog);
			return 0;
		default:
			return 2;
		}
	}
	if (!tool) {
		fprintf(stderr, "%s eval: --tool NAME is required\n", prog);
		return 2;
	}
	a = json_loads(args, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(a)) {
		fprintf(stderr, "%s eval: --args must be a JSON object: %s\n",
			prog, a ? "got another JSON value" : jerr.text);
		goto out;
	}
	cw_diag_init(&d);
	p = cw_engine_load_policy(policy, &d);
	if (!p)
		print_diag(&d);
	cw_diag_free(&d);
	if (!p)
		goto out;
	if (state) {
		rs = cw_rate_open_sqlite(state, &err);
		if (!rs) {
			fprintf(stderr, "%s eval: %s\n", prog, err.text);
			goto out;
		}
		view = cw_rate_view(rs);
		vp = &view;
	}
	call.tool = tool;
	call.args = a;
	if (cw_decide(p, &call, vp, cw_now_us(), &v) < 0) {
		fprintf(stderr, "%s eval: internal error deciding\n", prog);
		goto out;
	}
	out = json_pack("{s:s, s:s, s:s, s:[]}", "verdict",
			cw_verdict_name(v.kind), "rule", v.rule, "reason",
			v.reason, "counters");
	for (size_t i = 0; out && i < v.nlimits; i++)
		json_array_append_new(json_object_get(out, "counters"),
				      json_string(v.limits[i].key));
	if (out && v.kind == CW_VERDICT_RATE_LIMITED)
		json_object_set_new(out, "retry_after_ms",
				    json_integer(v.retry_after_us / 1000));
	s = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(out);
	if (!s)
		goto out;
	puts(s);
	free(s);
	ret = v.kind == CW_VERDICT_ALLOW ? 0 : 3;
out:
	cw_rate_close(rs);
	cw_policy_free(p);
	json_decref(a);
	return ret;
}

static int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct common co = { 0 };
	struct cw_call call = { .tool = CW_TOOL_RUN_COMMAND, .grant = "local",
				.session = "" };
	struct cw_call_result r;
	struct cw_buf cmd = { 0 };
	struct cw_engine *e = NULL;
	json_t *args = NULL, *out;
	const char *cwd = NULL;
	double timeout = 0;
	char *s, *end;
	int c, i, ret = 1;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (common_opt(c, &co))
			continue;
		switch (c) {
		case OPT_CWD:
			cwd = optarg;
			break;
		case OPT_TIMEOUT:
			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0)) {
				fprintf(stderr, "%s exec: --timeout wants seconds > 0, got \"%s\"\n",
					prog, optarg);
				return 2;
			}
			break;
		case OPT_HELP:
			printf("usage: %s exec [OPTIONS] -- COMMAND...\n\n"
			       "Decides COMMAND (its words joined by spaces, run by the policy's shell)\n"
			       "as a run_command call and runs it when allowed. Prints the result as\n"
			       "E2B-shaped JSON on stdout. Exit 0 when it ran (see exit_code), 3 when\n"
			       "the policy refused it, 1 on error.\n\n%s"
			       "  --cwd DIR         working directory (within the policy's limits)\n"
			       "  --timeout SECS    shorter timeout than the policy's\n",
			       prog, common_help);
			return 0;
		default:
			return 2;
		}
	}
	if (co.bad)
		return 2;
	if (optind >= argc) {
		fprintf(stderr, "%s exec: no command given (usage: %s exec [OPTIONS] -- COMMAND...)\n",
			prog, prog);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		if (i > optind && cw_buf_append(&cmd, " ", 1) < 0)
			goto out;
		if (cw_buf_append(&cmd, argv[i], strlen(argv[i])) < 0)
			goto out;
	}
	args = json_pack("{s:s}", "command", cmd.data);
	if (!args)
		goto out;
	if (cwd)
		json_object_set_new(args, "cwd", json_string(cwd));
	if (timeout > 0)
		json_object_set_new(args, "timeout", json_real(timeout));
	e = open_engine(&co, false);
	if (!e)
		goto out;
	call.args = args;
	cw_engine_call(e, &call, &r);
	switch (r.outcome) {
	case CW_OUTCOME_RAN:
		out = cw_engine_result_json(&r, true);
		s = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) :
			  NULL;
		json_decref(out);
		if (s)
			puts(s);
		free(s);
		ret = s ? 0 : 1;
		break;
	case CW_OUTCOME_DENIED:
		fprintf(stderr, "%s\n", r.message);
		ret = 3;
		break;
	default:
		fprintf(stderr, "%s exec: %s\n", prog, r.message);
		break;
	}
	cw_engine_result_free(&r);
out:
	cw_engine_close(e);
	json_decref(args);
	cw_buf_free(&cmd);
	return ret;
}

static int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const struct cw_probe *p;
	bool as_json = false;
	json_t *j;
	char *s;
	int c, f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case OPT_HELP:
			printf("usage: %s probe [--json]\n\n"
			       "Tries each kernel feature cmdwarden can use and prints yes or no with\n"
			       "what was found or why not. CW_PROBE_DISABLE=name,... forces features\n"
			       "off (for tests).\n", prog);
			return 0;
		default:
			return 2;
		}
	}
	p = cw_engine_probe();
	if (as_json) {
		j = cw_probe_json(p);
		json_object_set_new(j, "layers", cw_engine_layers());
		json_object_set_new(j, "layers_off", cw_engine_layers_off());
		s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		json_decref(j);
		if (!s)
			return 1;
		puts(s);
		free(s);
		return 0;
	}
	for (f = 0; f < CW_FEAT_COUNT; f++)
		printf("%-22s %-3s %s\n", cw_probe_name(f),
		       p->item[f].ok ? "yes" : "no", p->item[f].detail);
	j = cw_engine_layers();
	printf("\nlayers:");
	{
		const char *k;
		json_t *v;

		json_object_foreach(j, k, v)
			printf(" %s=%s", k, json_is_true(v) ? "on" : "off");
		printf("\n");
		json_decref(j);
		j = cw_engine_layers_off();
		json_object_foreach(j, k, v)
			printf("  %s is off: %s\n", k, json_string_value(v));
	}
	json_decref(j);
	return 0;
}

static int cmd_seccomp_profile(int argc, char **argv)
{
	size_t g;

	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: %s seccomp-profile\n\n"
		       "Prints the default seccomp profile as a Markdown table: each group,\n"
		       "why an agent's command has no business there, and its syscalls.\n",
		       prog);
		return 0;
	}
	printf("| group | why it is denied | syscalls |\n|---|---|---|\n");
	for (g = 0; g < cw_seccomp_ngroups; g++) {
		const struct cw_seccomp_group *grp = &cw_seccomp_groups[g];
		const char *const *sc;

		printf("| %s | %s |", grp->name, grp->reason);
		for (sc = grp->syscalls; *sc; sc++)
			printf("%s%s", sc == grp->syscalls ? " " : ", ", *sc);
		printf(" |\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	/* A client that goes away must not kill us mid-audit. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage_main(stderr);
		return 2;
	}
	cmd = argv[1];
	argc--;
	argv++;
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc, argv);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc, argv);
	if (strcmp(cmd, "token") == 0)
		return cmd_token(argc, argv);
	if (strcmp(cmd, "eval") == 0)
		return cmd_eval(argc, argv);
	if (strcmp(cmd, "exec") == 0)
		return cmd_exec(argc, argv);
	if (strcmp(cmd, "probe") == 0)
		return cmd_probe(argc, argv);
	if (strcmp(cmd, "seccomp-profile") == 0)
		return cmd_seccomp_profile(argc, argv);
	if (strcmp(cmd, "approve") == 0 || strcmp(cmd, "reject") == 0)
		return cw_cmd_approve(argc, argv);
	if (strcmp(cmd, "audit") == 0)
		return cw_cmd_audit(argc, argv);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("cmdwarden %s\n", CW_VERSION);
		return 0;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "-h") == 0) {
		usage_main(stdout);
		return 0;
	}
	fprintf(stderr, "%s: unknown command \"%s\"\n", prog, cmd);
	usage_main(stderr);
	return 2;
}
