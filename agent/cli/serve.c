// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden serve`: MCP on stdin/stdout, or with --http as MCP Streamable
 * HTTP; its options, the control socket operators decide approvals through,
 * and the signal loop of the HTTP server (SIGHUP reloads).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "engine/approvals.h"
#include "engine/engine.h"
#include "server/control.h"
#include "server/http.h"
#include "server/mcp.h"
#include "server/stdio.h"

enum { OPT_MAXREQ = CW_OPT_OWN, OPT_HTTP, OPT_TOKENS, OPT_ORIGIN,
       OPT_HTTP_TIMEOUT, OPT_MAXCONN, OPT_SESSION_IDLE,
       OPT_APPROVAL_LIFETIME, OPT_MAXPEER, OPT_HEADER_TIMEOUT };

/* The most --allow-origin options one serve takes. */
#define SERVE_MAX_ORIGINS 64

/* serve's options, as parsed. */
struct serve_args {
	struct cw_cli_common co;
	struct cw_http_opts ho;
	const char *origins[SERVE_MAX_ORIGINS];
	size_t max_request;
};

static void serve_help(void)
{
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
	       "  --max-connections N  connections at once (default %d); a quarter is kept\n"
	       "                    for connections that presented a valid token\n"
	       "  --max-peer-connections N  connections without a valid token yet from\n"
	       "                    one address (127.0.0.0/8 counts as one; default %d)\n"
	       "  --header-timeout S  a connection presents a valid token within S seconds\n"
	       "                    of connecting, or is closed (default %d)\n"
	       "  --session-idle S  a session unused for S seconds ends (default 3600)\n\n"
	       "With --http, SIGHUP reloads the token file and the policies (all or\n"
	       "nothing: a reload that fails keeps the running ones and says why).\n",
	       cw_cli_prog, cw_cli_prog, cw_cli_common_help,
	       CW_DEFAULT_MAX_REQUEST, CW_APPROVAL_LIFETIME_S,
	       CW_HTTP_DEFAULT_TIMEOUT_S, CW_HTTP_DEFAULT_MAX_CONNECTIONS,
	       CW_HTTP_DEFAULT_MAX_PEER_CONNECTIONS,
	       CW_HTTP_DEFAULT_HEADER_TIMEOUT_S);
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
			cw_cli_prog, opt, min, max, v);
		return -EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

/* One of serve's own options; 0, or -EINVAL after saying why. */
static int serve_opt(int c, struct serve_args *sa)
{
	char *end;

	switch (c) {
	case OPT_MAXREQ:
		errno = 0;
		sa->max_request = strtoull(optarg, &end, 10);
		if (errno || *end || sa->max_request < 64) {
			fprintf(stderr, "%s serve: --max-request wants a number of bytes >= 64, got \"%s\"\n",
				cw_cli_prog, optarg);
			return -EINVAL;
		}
		break;
	case OPT_APPROVAL_LIFETIME:
		errno = 0;
		sa->co.approval_lifetime_s = strtoll(optarg, &end, 10);
		if (errno || *end || sa->co.approval_lifetime_s < 1 ||
		    sa->co.approval_lifetime_s > 86400) {
			fprintf(stderr, "%s serve: --approval-lifetime wants seconds from 1 to 86400, got \"%s\"\n",
				cw_cli_prog, optarg);
			return -EINVAL;
		}
		break;
	case OPT_HTTP:
		sa->ho.listen = optarg;
		break;
	case OPT_TOKENS:
		sa->ho.tokens_path = optarg;
		break;
	case OPT_ORIGIN:
		if (sa->ho.norigins == CW_ARRAY_SIZE(sa->origins)) {
			fprintf(stderr, "%s serve: at most %zu --allow-origin\n",
				cw_cli_prog, CW_ARRAY_SIZE(sa->origins));
			return -EINVAL;
		}
		sa->origins[sa->ho.norigins++] = optarg;
		break;
	case OPT_HTTP_TIMEOUT:
		if (parse_count("--http-timeout", optarg, 1, 3600,
				&sa->ho.timeout_s) < 0)
			return -EINVAL;
		break;
	case OPT_MAXCONN:
		if (parse_count("--max-connections", optarg, 1, 4096,
				&sa->ho.max_connections) < 0)
			return -EINVAL;
		break;
	case OPT_MAXPEER:
		if (parse_count("--max-peer-connections", optarg, 1, 4096,
				&sa->ho.max_peer_connections) < 0)
			return -EINVAL;
		break;
	case OPT_HEADER_TIMEOUT:
		if (parse_count("--header-timeout", optarg, 1, 3600,
				&sa->ho.header_timeout_s) < 0)
			return -EINVAL;
		break;
	case OPT_SESSION_IDLE:
		if (parse_count("--session-idle", optarg, 1, 7 * 86400,
				&sa->ho.session_idle_s) < 0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* 0 to serve, 1 after --help, -EINVAL on bad usage (said on stderr). */
static int serve_parse(int argc, char **argv, struct serve_args *sa)
{
	static const struct option opts[] = {
		CW_CLI_COMMON_OPTS,
		{ "max-request", required_argument, NULL, OPT_MAXREQ },
		{ "http", required_argument, NULL, OPT_HTTP },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "allow-origin", required_argument, NULL, OPT_ORIGIN },
		{ "http-timeout", required_argument, NULL, OPT_HTTP_TIMEOUT },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "session-idle", required_argument, NULL, OPT_SESSION_IDLE },
		{ "max-peer-connections", required_argument, NULL,
		  OPT_MAXPEER },
		{ "header-timeout", required_argument, NULL,
		  OPT_HEADER_TIMEOUT },
		{ "approval-lifetime", required_argument, NULL,
		  OPT_APPROVAL_LIFETIME },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	sa->ho.origins = sa->origins;
	sa->max_request = CW_DEFAULT_MAX_REQUEST;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (cw_cli_common_opt(c, &sa->co))
			continue;
		if (c == CW_OPT_HELP) {
			serve_help();
			return 1;
		}
		if (serve_opt(c, sa) < 0)
			return -EINVAL;
	}
	if (sa->co.bad)
		return -EINVAL;
	if (optind < argc) {
		fprintf(stderr, "%s serve: unexpected argument \"%s\"\n",
			cw_cli_prog, argv[optind]);
		return -EINVAL;
	}
	if (sa->ho.listen && !sa->ho.tokens_path) {
		fprintf(stderr, "%s serve: --http needs --tokens FILE: every HTTP caller must present a grant's bearer token (see %s token --help)\n",
			cw_cli_prog, cw_cli_prog);
		return -EINVAL;
	}
	if (!sa->ho.listen &&
	    (sa->ho.tokens_path || sa->ho.norigins || sa->ho.timeout_s ||
	     sa->ho.max_connections || sa->ho.session_idle_s ||
	     sa->ho.max_peer_connections || sa->ho.header_timeout_s)) {
		fprintf(stderr, "%s serve: --tokens, --allow-origin, --http-timeout, --max-connections, --max-peer-connections, --header-timeout and --session-idle only go with --http\n",
			cw_cli_prog);
		return -EINVAL;
	}
	return 0;
}

static json_t *control_request(void *ctx, json_t *req,
				const struct ucred *peer)
{
	return cw_control_answer(ctx, req, peer);
}

/* Serves HTTP until SIGINT or SIGTERM; SIGHUP reloads the token file and
 * the policies. The signals are blocked in every thread and taken here. */
static int serve_http(struct cw_engine *e, const struct cw_http_opts *ho)
{
	struct cw_http *h;
	struct cw_diag d;
	const char *port;
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
		cw_cli_print_diag(&d);
		cw_diag_free(&d);
		return 1;
	}
	port = strrchr(cw_http_address(h), ':');
	sig = port ? cw_engine_guard_port(e, (uint16_t)atoi(port + 1)) : 0;
	if (sig < 0)
		fprintf(stderr, "%s serve: warning: calls are not kept from the agent's port %s: %s\n",
			cw_cli_prog, port + 1, strerror(-sig));
	fprintf(stderr, "%s serve: MCP on http://%s" CW_HTTP_PATH " (%zu allowed origins); SIGHUP reloads %s and the policies\n",
		cw_cli_prog, cw_http_address(h), ho->norigins, ho->tokens_path);
	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig != SIGHUP)
			break;
		cw_diag_free(&d);
		cw_diag_init(&d);
		if (cw_http_reload(h, &d) == 0) {
			cw_cli_print_diag_as(&d, "warning: ");
			fprintf(stderr, "%s serve: reloaded %s and the policies\n",
				cw_cli_prog, ho->tokens_path);
		} else {
			cw_cli_print_diag(&d);
			fprintf(stderr, "%s serve: reload failed; still serving with the previous tokens and policies\n",
				cw_cli_prog);
		}
	}
	fprintf(stderr, "%s serve: stopping; calls in progress finish first\n",
		cw_cli_prog);
	cw_http_stop(h);
	cw_diag_free(&d);
	return 0;
}

/* Serves MCP on stdin/stdout until the client goes; the exit status. */
static int serve_stdio(struct cw_engine *e, size_t max_request)
{
	struct cw_mcp *m;
	int ret;

	m = cw_mcp_new(e, "local", "");
	if (!m) {
		fprintf(stderr, "%s serve: out of memory\n", cw_cli_prog);
		return 1;
	}
	ret = cw_stdio_serve(m, STDIN_FILENO, STDOUT_FILENO, max_request);
	if (ret < 0)
		fprintf(stderr, "%s serve: %s\n", cw_cli_prog, strerror(-ret));
	cw_mcp_free(m);
	return ret < 0 ? 1 : 0;
}

int cw_cmd_serve(int argc, char **argv)
{
	struct serve_args sa = { 0 };
	struct cw_control *ctl;
	struct cw_error err = { 0 };
	struct cw_engine *e;
	int ret;

	ret = serve_parse(argc, argv, &sa);
	if (ret)
		return ret > 0 ? 0 : 2;
	e = cw_cli_open_engine(&sa.co, true);
	if (!e)
		return 1;
	/* Without the socket, approvals need an elicitation-capable client. */
	ctl = cw_control_start(sa.co.state_dir ? sa.co.state_dir :
						 CW_DEFAULT_STATE_DIR,
			       control_request, e, &err);
	if (ctl)
		cw_engine_operator_approvals(e, true);
	else
		fprintf(stderr, "%s serve: warning: %s; approvals only by elicitation\n",
			cw_cli_prog, err.text);
	if (sa.ho.listen) {
		sa.ho.policy_path = sa.co.policy;
		sa.ho.max_request = sa.max_request;
		ret = serve_http(e, &sa.ho);
	} else {
		ret = serve_stdio(e, sa.max_request);
	}
	cw_control_stop(ctl);
	cw_engine_close(e);
	return ret;
}
