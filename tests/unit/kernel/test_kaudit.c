// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel audit's records as the agent reads them (kernel/kaudit.c),
 * replayed through a socket in the kernel's own form: a SYSCALL, EXECVE,
 * CWD, PATH and EOE per event, events interleaved, strings quoted or in
 * hex, a long argument in pieces; only a call's loginuid counts, and a
 * marker comes back by its nonce. The real kernel's are in trace.bats.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"
#include "kernel/kaudit.h"

#define MAX_SEEN 8

static struct {
	struct {
		uint32_t auid;
		enum cw_trace_kind kind;
		char op[16], path[128], path2[128], filename[128];
		char argv[256];
		size_t argv_len;
		int64_t ret;
		uint32_t pid, ppid, uid;
		char comm[17];
		int dirfd;
		uint64_t size;
	} ev[MAX_SEEN];
	int n;
	uint64_t marker;
} S;

static void on_event(void *ctx, uint32_t auid, const struct cw_trace_event *e)
{
	(void)ctx;
	if (S.n == MAX_SEEN)
		return;
	S.ev[S.n].auid = auid;
	S.ev[S.n].kind = e->kind;
	snprintf(S.ev[S.n].op, sizeof(S.ev[0].op), "%s", e->op ? e->op : "");
	snprintf(S.ev[S.n].path, sizeof(S.ev[0].path), "%s",
		 e->path ? e->path : "");
	snprintf(S.ev[S.n].path2, sizeof(S.ev[0].path2), "%s",
		 e->path2 ? e->path2 : "");
	snprintf(S.ev[S.n].filename, sizeof(S.ev[0].filename), "%s",
		 e->filename ? e->filename : "");
	if (e->argv && e->argv_len <= sizeof(S.ev[0].argv)) {
		memcpy(S.ev[S.n].argv, e->argv, e->argv_len);
		S.ev[S.n].argv_len = e->argv_len;
	}
	S.ev[S.n].ret = e->ret;
	S.ev[S.n].pid = e->pid;
	S.ev[S.n].ppid = e->ppid;
	S.ev[S.n].uid = e->uid;
	memcpy(S.ev[S.n].comm, e->comm, sizeof(S.ev[0].comm));
	S.ev[S.n].dirfd = e->dirfd;
	S.ev[S.n].size = e->size;
	S.n++;
}

static void on_marker(void *ctx, uint64_t nonce)
{
	(void)ctx;
	S.marker = nonce;
}

/* One record as the kernel sends it: its nlmsg_len counts the text. */
static void send_rec(int fd, int type, const char *text)
{
	char buf[4096];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	size_t n = strlen(text);

	assert_true(NLMSG_HDRLEN + n <= sizeof(buf));
	memset(h, 0, NLMSG_HDRLEN);
	h->nlmsg_type = (uint16_t)type;
	h->nlmsg_len = (uint32_t)n;
	memcpy(buf + NLMSG_HDRLEN, text, n);
	assert_int_equal((ssize_t)(NLMSG_HDRLEN + n),
			 send(fd, buf, NLMSG_HDRLEN + n, 0));
}

#define AUID_IN "1879048197"	/* CW_KAUDIT_AUID_BASE + 5 */

static void test_replayed_records(void **state)
{
	struct cw_kaudit *k;
	int sv[2];

	(void)state;
	memset(&S, 0, sizeof(S));
	assert_int_equal(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0,
				       sv));
	k = cw_kaudit_reader(sv[0]);
	assert_non_null(k);
	/* an exec, its third argument in two pieces, interleaved with a
	 * rename whose directory has a space (hex) and relative names */
	send_rec(sv[1], AUDIT_SYSCALL, "audit(1.000:10): arch=c000003e syscall=59 success=yes exit=0 a0=1 a1=2 a2=3 a3=4 items=2 ppid=40 pid=41 auid=" AUID_IN " uid=1000 comm=\"ls\" exe=\"/usr/bin/ls\"");
	send_rec(sv[1], AUDIT_SYSCALL, "audit(1.000:11): arch=c000003e syscall=82 success=yes exit=0 a0=5 a1=6 a2=0 a3=0 items=4 ppid=40 pid=42 auid=" AUID_IN " uid=1000 comm=\"mv\"");
	send_rec(sv[1], AUDIT_EXECVE, "audit(1.000:10): argc=3 a0=\"ls\" a1=2D6C61 a2_len=8 a2[0]=\"/tm\" a2[1]=\"p/x\"");
	send_rec(sv[1], AUDIT_CWD, "audit(1.000:11): cwd=2F746D702F6D7920646972");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:11): item=0 name=\"./\" nametype=PARENT");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:11): item=1 name=\"./\" nametype=PARENT");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:11): item=2 name=\"./a\" nametype=DELETE");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:11): item=3 name=\"b\" nametype=CREATE");
	send_rec(sv[1], AUDIT_CWD, "audit(1.000:10): cwd=\"/home/user\"");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:10): item=0 name=\"/usr/bin/ls\" nametype=NORMAL");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:10): item=1 name=\"/lib64/ld-linux-x86-64.so.2\" nametype=NORMAL");
	send_rec(sv[1], AUDIT_EOE, "audit(1.000:11): ");
	send_rec(sv[1], AUDIT_EOE, "audit(1.000:10): ");
	/* a failed unlink by descriptor-relative name; an ftruncate */
	send_rec(sv[1], AUDIT_SYSCALL, "audit(1.000:12): arch=c000003e syscall=263 success=no exit=-2 a0=7 a1=8 a2=0 a3=0 items=0 ppid=40 pid=43 auid=" AUID_IN " uid=1000 comm=\"rm\"");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:12): item=0 name=\"gone\" nametype=DELETE");
	send_rec(sv[1], AUDIT_EOE, "audit(1.000:12): ");
	send_rec(sv[1], AUDIT_SYSCALL, "audit(1.000:13): arch=c000003e syscall=77 success=yes exit=0 a0=3 a1=400 a2=0 a3=0 items=0 ppid=40 pid=43 auid=" AUID_IN " uid=1000 comm=\"truncate\"");
	send_rec(sv[1], AUDIT_EOE, "audit(1.000:13): ");
	/* a process that is no call's: its loginuid is unset */
	send_rec(sv[1], AUDIT_SYSCALL, "audit(1.000:14): arch=c000003e syscall=87 success=yes exit=0 a0=1 a1=0 a2=0 a3=0 items=2 ppid=1 pid=2 auid=4294967295 uid=0 comm=\"rm\"");
	send_rec(sv[1], AUDIT_PATH, "audit(1.000:14): item=1 name=\"/etc/x\" nametype=DELETE");
	send_rec(sv[1], AUDIT_EOE, "audit(1.000:14): ");
	/* the agent's marker, and a record type the reader has no use for */
	send_rec(sv[1], AUDIT_USER, "audit(1.000:15): pid=9 uid=0 auid=4294967295 ses=4294967295 msg='cw-mark=77'");
	send_rec(sv[1], AUDIT_CONFIG_CHANGE, "audit(1.000:16): op=add_rule res=1");
	assert_int_equal(23, cw_kaudit_read(k, on_event, on_marker, NULL));
	assert_int_equal(77, S.marker);
	assert_int_equal(4, S.n);

	/* the rename, whichever came first: its names from the directory */
	assert_int_equal(CW_TRACE_FILE, S.ev[0].kind);
	assert_string_equal("rename", S.ev[0].op);
	assert_string_equal("/tmp/my dir/a", S.ev[0].path);
	assert_string_equal("/tmp/my dir/b", S.ev[0].path2);
	assert_int_equal(0, S.ev[0].ret);
	assert_int_equal(42, S.ev[0].pid);
	assert_int_equal(1879048197u, S.ev[0].auid);
	/* the exec, with its argv whole */
	assert_int_equal(CW_TRACE_EXEC, S.ev[1].kind);
	assert_string_equal("/usr/bin/ls", S.ev[1].filename);
	assert_int_equal(sizeof("ls\0-la\0/tmp/x"), S.ev[1].argv_len);
	assert_memory_equal("ls\0-la\0/tmp/x", S.ev[1].argv, S.ev[1].argv_len);
	assert_int_equal(40, S.ev[1].ppid);
	assert_int_equal(1000, S.ev[1].uid);
	assert_string_equal("ls", S.ev[1].comm);
	/* relative to a descriptor: kept as given, the descriptor said */
	assert_string_equal("unlink", S.ev[2].op);
	assert_string_equal("gone", S.ev[2].path);
	assert_int_equal(7, S.ev[2].dirfd);
	assert_int_equal(-2, S.ev[2].ret);
	/* by descriptor: no path, the descriptor and the length */
	assert_string_equal("truncate", S.ev[3].op);
	assert_string_equal("", S.ev[3].path);
	assert_int_equal(3, S.ev[3].dirfd);
	assert_int_equal(0x400, S.ev[3].size);
	/* nothing left: the socket is read to its end */
	assert_int_equal(0, cw_kaudit_read(k, on_event, on_marker, NULL));
	cw_kaudit_close(k);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replayed_records),
	};
	return cmocka_run_group_tests_name("kaudit", tests, NULL, NULL);
}
