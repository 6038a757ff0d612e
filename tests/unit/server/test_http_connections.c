// SPDX-License-Identifier: Apache-2.0
/* The accounting of HTTP connections by peer, without a server: each
 * "connection" is one end of a socketpair, and a connection closed by the
 * accounting shows as the end of file at the other end. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"
#include "server/http_connections.h"

#define MAX_CONNS 16

struct fixture {
	char dir[64];
	char audit[96];
	struct cw_engine *engine;
	struct cw_http_conns *t;
	struct cw_http_conn *c[MAX_CONNS];
	int ours[MAX_CONNS], theirs[MAX_CONNS];
	unsigned n;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct cw_engine_opts o = { 0 };
	char statedir[96];
	struct cw_diag d;

	strcpy(f->dir, "/tmp/cw-conns-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(statedir, sizeof(statedir), "%s/state", f->dir);
	snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", f->dir);
	o.state_dir = statedir;
	o.audit_path = f->audit;
	cw_diag_init(&d);
	f->engine = cw_engine_open(&o, &d);
	assert_non_null(f->engine);
	cw_diag_free(&d);
	*state = f;
	return 0;
}

/* Closes what is left, frees the accounting (which writes its record). */
static void finish(struct fixture *f)
{
	unsigned i;

	for (i = 0; i < f->n; i++) {
		cw_http_conns_closed(f->t, f->c[i]);
		close(f->ours[i]);
		close(f->theirs[i]);
	}
	cw_http_conns_free(f->t);
	f->t = NULL;
	f->n = 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f->t)
		finish(f);
	cw_engine_close(f->engine);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(0, system(cmd));
	free(f);
	return 0;
}

static void limits(struct fixture *f, unsigned max, unsigned peer)
{
	struct cw_http_conn_limits l = {
		.max_connections = max, .max_peer = peer, .header_timeout_s = 600,
	};

	f->t = cw_http_conns_new(f->engine, &l);
	assert_non_null(f->t);
}

/* A connection from addr (v4 or v6 text); its index. */
static unsigned open_from(struct fixture *f, const char *addr)
{
	struct sockaddr_storage ss = { 0 };
	int sv[2];

	if (strchr(addr, ':')) {
		ss.ss_family = AF_INET6;
		assert_int_equal(1, inet_pton(AF_INET6, addr,
					      &((struct sockaddr_in6 *)&ss)->sin6_addr));
	} else {
		ss.ss_family = AF_INET;
		assert_int_equal(1, inet_pton(AF_INET, addr,
					      &((struct sockaddr_in *)&ss)->sin_addr));
	}
	assert_true(f->n < MAX_CONNS);
	assert_int_equal(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	f->ours[f->n] = sv[0];
	f->theirs[f->n] = sv[1];
	f->c[f->n] = cw_http_conns_opened(f->t, sv[0], (struct sockaddr *)&ss);
	assert_non_null(f->c[f->n]);
	return f->n++;
}

/* The connection was shut down by the accounting. */
static bool shut(struct fixture *f, unsigned i)
{
	char b;

	return read(f->theirs[i], &b, 1) == 0;
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *fp = fopen(path, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	return buf;
}

static void test_newcomer_closes_the_heaviest_peers_oldest(void **state)
{
	struct fixture *f = *state;
	unsigned i;

	/* 8 slots: 6 for connections without a token */
	limits(f, 8, 64);
	open_from(f, "10.0.0.9");			/* 0: oldest, alone */
	open_from(f, "127.0.0.1");			/* 1 */
	open_from(f, "127.0.0.2");			/* 2: same peer as 1 */
	open_from(f, "127.1.2.3");			/* 3: and again */
	open_from(f, "::ffff:127.0.0.7");		/* 4: v4-mapped loopback */
	open_from(f, "10.0.0.10");			/* 5 */
	for (i = 0; i < 6; i++)
		assert_false(shut(f, i));
	/* one over the share: loopback holds four, so its oldest goes, not
	 * the older connection of a peer that holds one */
	open_from(f, "10.0.0.11");
	assert_true(shut(f, 1));
	assert_false(shut(f, 0));
	assert_false(shut(f, 2));
	assert_false(shut(f, 6));
	finish(f);
	assert_non_null(strstr(slurp(f->audit),
			       "\"count\":1,\"reasons\":{\"peer_limit\":0,\"unauthenticated_limit\":1,\"header_timeout\":0},\"remotes\":{\"127.0.0.0/8\":1}"));
}

static void test_ipv6_peers_are_their_64(void **state)
{
	struct fixture *f = *state;

	limits(f, 4, 64);				/* share: 3 */
	open_from(f, "2001:db8:1::1");			/* 0: oldest, alone */
	open_from(f, "2001:db8::1");			/* 1 */
	open_from(f, "2001:db8::2");			/* 2: the same /64 */
	open_from(f, "::1");				/* 3 */
	assert_true(shut(f, 1));
	assert_false(shut(f, 0));
	finish(f);
	assert_non_null(strstr(slurp(f->audit), "\"remotes\":{\"2001:db8::/64\":1}"));
}

static void test_authenticated_connections_are_never_closed(void **state)
{
	struct fixture *f = *state;
	unsigned i;

	limits(f, 4, 1);
	for (i = 0; i < 3; i++) {
		open_from(f, "127.0.0.1");
		cw_http_conns_authenticated(f->t, f->c[i]);
	}
	/* the last slot: nothing without a token to make room with */
	open_from(f, "127.0.0.1");
	for (i = 0; i < 4; i++)
		assert_false(shut(f, i));
	/* one authenticated goes; a newcomer takes the last free slot, and
	 * the one without a token before it makes room */
	cw_http_conns_closed(f->t, f->c[0]);
	f->c[0] = NULL;
	open_from(f, "10.0.0.1");
	assert_true(shut(f, 3));
	assert_false(shut(f, 1));
	assert_false(shut(f, 2));
	assert_false(shut(f, 4));
}

static void test_header_deadline(void **state)
{
	struct fixture *f = *state;
	struct cw_http_conn_limits l = {
		.max_connections = 16, .max_peer = 16, .header_timeout_s = 1,
	};
	unsigned i;

	f->t = cw_http_conns_new(f->engine, &l);
	assert_non_null(f->t);
	assert_int_equal(0, cw_http_conns_start(f->t));
	open_from(f, "127.0.0.1");
	open_from(f, "127.0.0.1");
	cw_http_conns_authenticated(f->t, f->c[1]);
	for (i = 0; i < 100 && !shut(f, 0); i++)
		usleep(50000);
	assert_true(shut(f, 0));
	assert_false(shut(f, 1));
	finish(f);
	assert_non_null(strstr(slurp(f->audit), "\"header_timeout\":1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_newcomer_closes_the_heaviest_peers_oldest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_peers_are_their_64,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_authenticated_connections_are_never_closed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_deadline, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
