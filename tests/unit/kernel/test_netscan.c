// SPDX-License-Identifier: Apache-2.0
/*
 * netscan against the running kernel: the loopback addresses are among the
 * machine's addresses, and a TCP listener and a bound UDP socket of this
 * process are found with its port, uid and cgroup (from sock_diag; from
 * /proc/net without the cgroup), and gone once closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "unit.h"
#include "kernel/mountinfo.h"
#include "kernel/netscan.h"

struct seen {
	bool lo4, lo6;
	uint16_t tcp_port, udp_port;
	int tcp_hits, udp_hits;
	uint32_t tcp_uid;
	uint64_t tcp_cgroup;
};

static void on_addr(void *ctx, int family, const uint8_t *addr,
		    bool broadcast)
{
	static const uint8_t lo4[4] = { 127, 0, 0, 1 };
	static const uint8_t lo6[16] = { [15] = 1 };
	struct seen *s = ctx;

	if (family == AF_INET && !broadcast && !memcmp(addr, lo4, 4))
		s->lo4 = true;
	if (family == AF_INET6 && !memcmp(addr, lo6, 16))
		s->lo6 = true;
}

static void on_listener(void *ctx, const struct cw_netscan_listener *l)
{
	struct seen *s = ctx;

	if (l->family == AF_INET && l->protocol == IPPROTO_TCP &&
	    l->port == s->tcp_port) {
		s->tcp_hits++;
		s->tcp_uid = l->uid;
		s->tcp_cgroup = l->cgroup_id;
	}
	if (l->family == AF_INET && l->protocol == IPPROTO_UDP &&
	    l->port == s->udp_port)
		s->udp_hits++;
}

/* A socket bound to 127.0.0.1 on a port the kernel picks. */
static int bound(int type, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	if (type == SOCK_STREAM)
		assert_int_equal(0, listen(fd, 1));
	assert_int_equal(0, getsockname(fd, (struct sockaddr *)&a, &len));
	*port = ntohs(a.sin_port);
	return fd;
}

/* The cgroup v2 id of this process: its cgroup directory's inode; 0 when
 * there is no v2 hierarchy to find it in. */
static uint64_t own_cgroup_id(void)
{
	char line[4096], dir[4096];
	struct cw_cgroup_line c;
	FILE *f = fopen("/proc/self/cgroup", "re");
	struct stat st;
	uint64_t id = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (cw_mountinfo_cgroup_line(line, &c) &&
		    cw_mountinfo_cgroup_is_v2(&c) &&
		    !cw_mountinfo_find("cgroup2", NULL, c.path, dir,
				       sizeof(dir), NULL, 0) &&
		    !stat(dir, &st))
			id = st.st_ino;
	fclose(f);
	return id;
}

struct unix_seen {
	const char *path;
	unsigned long inode;
	int hits;
	int others_here;	/* another socket of ours, by inode */
	unsigned long other[2];
};

static void on_unix(void *ctx, const struct cw_netscan_unix *u)
{
	struct unix_seen *v = ctx;
	int i;

	for (i = 0; i < 2; i++)
		if (u->inode == v[i].inode && !strcmp(u->path, v[i].path))
			v[i].hits++;
	for (i = 0; i < 2; i++)
		if (u->inode == v[0].other[i])
			v[0].others_here++;
}

static int unix_at(int type, const char *path, struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (path[0] == '@')
		memcpy(a->sun_path + 1, path + 1, strlen(path) - 1);
	else
		snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
	assert_int_equal(0, bind(fd, (struct sockaddr *)a,
				 (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					     strlen(path))));
	return fd;
}

static unsigned long ino(int fd)
{
	struct stat st;

	assert_int_equal(0, fstat(fd, &st));
	return (unsigned long)st.st_ino;
}

/* A listener and a bound datagram socket are found with their paths and
 * inodes; an abstract listener and a connected client are not. */
static void test_unix(void **state)
{
	char dir[] = "/tmp/cw-netscan.XXXXXX", lpath[64], dpath[64];
	struct unix_seen v[2];
	struct sockaddr_un a;
	int l, d, ab, c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(lpath, sizeof(lpath), "%s/l.sock", dir);
	snprintf(dpath, sizeof(dpath), "%s/d.sock", dir);
	l = unix_at(SOCK_STREAM, lpath, &a);
	assert_int_equal(0, listen(l, 1));
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(0, connect(c, (struct sockaddr *)&a, sizeof(a)));
	d = unix_at(SOCK_DGRAM, dpath, &a);
	ab = unix_at(SOCK_STREAM, "@cw-netscan-test", &a);
	assert_int_equal(0, listen(ab, 1));
	memset(v, 0, sizeof(v));
	v[0].path = lpath;
	v[0].inode = ino(l);
	v[1].path = dpath;
	v[1].inode = ino(d);
	v[0].other[0] = ino(ab);
	v[0].other[1] = ino(c);
	assert_int_equal(0, cw_netscan_unix(on_unix, v));
	assert_int_equal(1, v[0].hits);
	assert_int_equal(1, v[1].hits);
	assert_int_equal(0, v[0].others_here);
	close(c);
	close(ab);
	close(d);
	close(l);
	unlink(lpath);
	unlink(dpath);
	rmdir(dir);
}

static void test_addrs(void **state)
{
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(0, cw_netscan_addrs(on_addr, &s));
	assert_true(s.lo4);
	if (access("/proc/net/if_inet6", F_OK) == 0 && !s.lo6)
		print_message("# note: IPv6 is on but lo has no ::1\n");
}

/* source: cw_netscan_listeners or cw_netscan_listeners_proc */
static void listeners_from(int (*source)(void (*cb)(void *,
				const struct cw_netscan_listener *), void *),
			   bool with_cgroup)
{
	uint64_t cg = own_cgroup_id();
	struct seen s;
	int t, u;

	memset(&s, 0, sizeof(s));
	t = bound(SOCK_STREAM, &s.tcp_port);
	u = bound(SOCK_DGRAM, &s.udp_port);
	assert_int_equal(0, source(on_listener, &s));
	assert_int_equal(1, s.tcp_hits);
	assert_int_equal(1, s.udp_hits);
	assert_int_equal(geteuid(), s.tcp_uid);
	/* the socket's cgroup, where there is a v2 hierarchy */
	if (with_cgroup && cg)
		assert_int_equal(cg, s.tcp_cgroup);
	close(t);
	close(u);
	s.tcp_hits = s.udp_hits = 0;
	assert_int_equal(0, source(on_listener, &s));
	assert_int_equal(0, s.tcp_hits);
	assert_int_equal(0, s.udp_hits);
}

static void test_listeners(void **state)
{
	(void)state;
	listeners_from(cw_netscan_listeners, true);
}

static void test_listeners_proc(void **state)
{
	(void)state;
	listeners_from(cw_netscan_listeners_proc, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addrs),
		cmocka_unit_test(test_listeners),
		cmocka_unit_test(test_listeners_proc),
		cmocka_unit_test(test_unix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
