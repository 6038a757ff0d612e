// SPDX-License-Identifier: Apache-2.0
/*
 * kaudit (kaudit.h): NETLINK_AUDIT as the agent's event source on kernels
 * without BPF tracing.
 *
 * Two sockets: the daemon's, which registered (AUDIT_SET pid: the kernel
 * sends every record to the socket the registration came from), and a
 * control socket for requests whose replies must not be mixed with the
 * records (the rules, AUDIT_GET, the markers).
 *
 * The rules (at syscall exit, x86-64 calls only: the sandbox's seccomp
 * profile refuses the others) match loginuid in [CW_KAUDIT_AUID_BASE,
 * + CW_KAUDIT_AUID_COUNT): execve and execveat; open, openat with a
 * writing flag, openat2 and creat; every mutation trace.bpf.c records.
 * The kernel then writes, per system call, a SYSCALL record (number,
 * result, arguments, pid, ppid, auid, comm), EXECVE (argv), CWD, one PATH
 * per name it resolved (as read once by the kernel, with its type:
 * NORMAL, PARENT, CREATE, DELETE) and EOE, each a message of its own, of
 * one serial; other events' messages may come between them. A full queue
 * makes the writing task wait (backlog_wait_time), not drop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/kaudit.h"

/* Events being put together at once, by serial. */
#define PENDING 16
/* PATH records kept per event (rename has five). */
#define NPATHS 6
/* An exec's arguments, NUL-separated, as trace.bpf.c cuts them. */
#define ARGV_MAX 1024
/* The kernel's queue: records waiting for the agent before writers wait. */
#define BACKLOG 16384
/* Writing flags of open: O_WRONLY | O_RDWR | O_CREAT | O_TRUNC. */
#define OPEN_WRITE_FLAGS 01103u
#define AT_FDCWD_ARG 0xffffff9cu
#define MSG_MAX (16 * 1024)

struct kpath {
	char name[PATH_MAX];
	bool null;		/* (null): a descriptor's file */
	char type[12];		/* nametype */
};

struct pending {
	uint64_t serial;	/* 0: free */
	bool syscall;
	long nr, exit;
	uint64_t a[4];
	uint32_t pid, ppid, uid, auid;
	char comm[17];
	char cwd[PATH_MAX];
	struct kpath path[NPATHS];
	unsigned npaths;
	char argv[ARGV_MAX];
	size_t argv_len;
	bool argv_cut;
};

struct cw_kaudit {
	int fd;			/* the daemon's */
	int ctl;
	uint32_t seq;
	bool registered;
	uint32_t enabled_before;
	uint32_t lost_seen;
	struct pending *p;
};

/* ---- netlink -------------------------------------------------------- */

static int nl_send(int fd, uint32_t seq, int type, bool ack, const void *data,
		   size_t len)
{
	struct nlmsghdr h = {
		.nlmsg_len = (uint32_t)NLMSG_LENGTH(len),
		.nlmsg_type = (uint16_t)type,
		.nlmsg_flags = NLM_F_REQUEST | (ack ? NLM_F_ACK : 0),
		.nlmsg_seq = seq,
	};
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	struct iovec iov[2] = { { &h, NLMSG_HDRLEN },
				{ (void *)data, len } };
	struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to),
			    .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	do
		n = sendmsg(fd, &m, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* Sends a request on fd and waits for its answer: 0 or the kernel's
 * -errno; a reply of type reply (0: none) is copied to out. The kernel
 * may send the acknowledgement before the reply (a thread of its own
 * sends replies), so both are waited for. */
static int request(struct cw_kaudit *k, int fd, int type, const void *data,
		   size_t len, int reply, void *out, size_t outlen)
{
	char buf[MSG_MAX];
	uint32_t seq = ++k->seq;
	bool acked = false, replied = !reply;
	int ret, tries, acked_ret = 0;

	ret = nl_send(fd, seq, type, true, data, len);
	if (ret)
		return ret;
	for (tries = 0; tries < 64 && !(acked && replied); tries++) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n;
		int left;

		do
			n = recv(fd, buf, sizeof(buf), 0);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		for (left = (int)n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				acked = true;
				acked_ret = e->error;
				if (e->error)
					return e->error;
			} else if (reply && h->nlmsg_type == reply && out) {
				size_t got = h->nlmsg_len - NLMSG_HDRLEN;

				memcpy(out, NLMSG_DATA(h),
				       got < outlen ? got : outlen);
				replied = true;
			}
		}
	}
	return acked && replied ? acked_ret : -ETIMEDOUT;
}

static int get_status(struct cw_kaudit *k, struct audit_status *st)
{
	memset(st, 0, sizeof(*st));
	return request(k, k->ctl, AUDIT_GET, NULL, 0, AUDIT_GET, st,
		       sizeof(*st));
}

/* ---- rules ---------------------------------------------------------- */

static const int exec_and_mutations[] = {
	SYS_execve, SYS_execveat, SYS_creat, SYS_openat2,
	SYS_unlink, SYS_unlinkat, SYS_rmdir, SYS_rename, SYS_renameat,
	SYS_renameat2, SYS_chmod, SYS_fchmod, SYS_fchmodat, SYS_chown,
	SYS_lchown, SYS_fchown, SYS_fchownat, SYS_mkdir, SYS_mkdirat,
	SYS_truncate, SYS_ftruncate, SYS_link, SYS_linkat, SYS_symlink,
	SYS_symlinkat, SYS_mknod, SYS_mknodat, SYS_utime, SYS_utimes,
	SYS_futimesat, SYS_utimensat, SYS_setxattr, SYS_lsetxattr,
	SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
	SYS_fallocate,
};
static const int open_calls[] = { SYS_open };
static const int openat_calls[] = { SYS_openat };

struct rule {
	const int *nrs;
	size_t n;
	int argfield;		/* AUDIT_ARGn filtered for a writing flag, 0:
				 * none */
};

static const struct rule rules[] = {
	{ exec_and_mutations, CW_ARRAY_SIZE(exec_and_mutations), 0 },
	{ open_calls, 1, AUDIT_ARG1 },
	{ openat_calls, 1, AUDIT_ARG0 + 2 },
};

static int send_rule(struct cw_kaudit *k, int type, const struct rule *r)
{
	struct audit_rule_data *d = calloc(1, sizeof(*d));
	size_t i;
	int ret;

	if (!d)
		return -ENOMEM;
	d->flags = AUDIT_FILTER_EXIT;
	d->action = AUDIT_ALWAYS;
	for (i = 0; i < r->n; i++)
		d->mask[r->nrs[i] / 32] |= 1u << (r->nrs[i] % 32);
	d->fields[0] = AUDIT_ARCH;
	d->values[0] = AUDIT_ARCH_X86_64;
	d->fieldflags[0] = AUDIT_EQUAL;
	d->fields[1] = AUDIT_LOGINUID;
	d->values[1] = CW_KAUDIT_AUID_BASE;
	d->fieldflags[1] = AUDIT_GREATER_THAN_OR_EQUAL;
	d->fields[2] = AUDIT_LOGINUID;
	d->values[2] = CW_KAUDIT_AUID_BASE + CW_KAUDIT_AUID_COUNT;
	d->fieldflags[2] = AUDIT_LESS_THAN;
	d->field_count = 3;
	if (r->argfield) {
		d->fields[3] = (uint32_t)r->argfield;
		d->values[3] = OPEN_WRITE_FLAGS;
		d->fieldflags[3] = AUDIT_BIT_MASK;
		d->field_count = 4;
	}
	ret = request(k, k->ctl, type, d, sizeof(*d), 0, NULL, 0);
	free(d);
	return ret;
}

static void del_rules(struct cw_kaudit *k)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(rules); i++)
		send_rule(k, AUDIT_DEL_RULE, &rules[i]);
}

/* ---- opening -------------------------------------------------------- */

/* Whether a process of this agent may be given a loginuid: one whose own
 * is unset may be, else only with CAP_AUDIT_CONTROL and a mutable one. */
static int loginuid_settable(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char v[16];
		int fd = open("/proc/self/loginuid", O_WRONLY | O_CLOEXEC);
		int n = snprintf(v, sizeof(v), "%u",
				 CW_KAUDIT_AUID_BASE + CW_KAUDIT_AUID_COUNT - 1);

		_exit(fd >= 0 && write(fd, v, (size_t)n) == n ? 0 :
		      fd < 0 ? 2 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 2 ? -ENOENT :
							       -EPERM;
}

static int open_socket(struct cw_error *err)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);

	if (fd < 0) {
		int e = errno;

		cw_error_set(err, "kernel audit: %s",
			     e == EPROTONOSUPPORT ?
				     "kernel built without CONFIG_AUDIT" :
				     strerror(e));
		errno = e;
	}
	return fd;
}

/* Whether cmdwarden can be the audit daemon here, on k->ctl: 0 with the
 * kernel's status in st, or -errno with err saying why not. */
static int usable(struct cw_kaudit *k, struct audit_status *st,
		  struct cw_error *err)
{
	int ret = get_status(k, st);

	if (ret) {
		cw_error_set(err, "kernel audit: AUDIT_GET: %s%s",
			     strerror(-ret),
			     ret == -EPERM ? " (it needs CAP_AUDIT_CONTROL)" :
					     "");
		return ret;
	}
	if (st->enabled == 2) {
		cw_error_set(err, "kernel audit: its configuration is locked (enabled 2): no rules can be added");
		return -EPERM;
	}
	if (st->pid && (kill((pid_t)st->pid, 0) == 0 || errno == EPERM)) {
		cw_error_set(err, "kernel audit: pid %u is the audit daemon (auditd?); cmdwarden does not displace it",
			     st->pid);
		return -EBUSY;
	}
	ret = loginuid_settable();
	if (ret)
		cw_error_set(err, "kernel audit: a call's processes cannot be given a loginuid of their own: %s",
			     ret == -ENOENT ? "/proc/self/loginuid is missing (kernel built without CONFIG_AUDITSYSCALL)" :
			     "the agent's own loginuid is set and immutable, or the agent lacks CAP_AUDIT_CONTROL");
	return ret;
}

int cw_kaudit_probe(struct cw_error *err)
{
	struct cw_kaudit k = { .fd = -1 };
	struct audit_status st;
	int ret;

	k.ctl = open_socket(err);
	if (k.ctl < 0)
		return -errno;
	ret = usable(&k, &st, err);
	close(k.ctl);
	return ret;
}

struct cw_kaudit *cw_kaudit_open(struct cw_error *err)
{
	struct cw_kaudit *k = calloc(1, sizeof(*k));
	struct audit_status st, set = { 0 };
	size_t i;
	int ret;

	if (!k) {
		cw_error_set(err, "kernel audit: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	k->fd = k->ctl = -1;
	k->p = calloc(PENDING, sizeof(*k->p));
	if (!k->p) {
		ret = -ENOMEM;
		cw_error_set(err, "kernel audit: out of memory");
		goto fail;
	}
	k->fd = open_socket(err);
	k->ctl = k->fd >= 0 ? open_socket(err) : -1;
	if (k->ctl < 0) {
		ret = -errno;
		goto fail;
	}
	ret = usable(k, &st, err);
	if (ret)
		goto fail;
	k->enabled_before = st.enabled;
	k->lost_seen = st.lost;
	set.mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID |
		   AUDIT_STATUS_BACKLOG_LIMIT;
	set.enabled = 1;
	set.pid = (uint32_t)getpid();
	set.backlog_limit = BACKLOG;
	/* From the daemon's socket: the kernel sends records to it. */
	ret = request(k, k->fd, AUDIT_SET, &set, sizeof(set), 0, NULL, 0);
	if (ret) {
		cw_error_set(err, "kernel audit: registering as the audit daemon: %s",
			     strerror(-ret));
		goto fail;
	}
	k->registered = true;
	/* A crashed agent's rules are the same: gone first. */
	del_rules(k);
	for (i = 0; i < CW_ARRAY_SIZE(rules); i++) {
		ret = send_rule(k, AUDIT_ADD_RULE, &rules[i]);
		if (ret) {
			cw_error_set(err, "kernel audit: adding a rule: %s",
				     strerror(-ret));
			goto fail;
		}
	}
	return k;
fail:
	cw_kaudit_close(k);
	errno = -ret;
	return NULL;
}

struct cw_kaudit *cw_kaudit_reader(int fd)
{
	struct cw_kaudit *k = calloc(1, sizeof(*k));

	if (!k || !(k->p = calloc(PENDING, sizeof(*k->p)))) {
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	k->fd = fd;
	k->ctl = -1;
	return k;
}

void cw_kaudit_close(struct cw_kaudit *k)
{
	struct audit_status set = { 0 };

	if (!k)
		return;
	if (k->registered) {
		del_rules(k);
		set.mask = AUDIT_STATUS_PID | AUDIT_STATUS_ENABLED;
		set.pid = 0;
		set.enabled = k->enabled_before;
		request(k, k->fd, AUDIT_SET, &set, sizeof(set), 0, NULL, 0);
	}
	if (k->fd >= 0)
		close(k->fd);
	if (k->ctl >= 0)
		close(k->ctl);
	free(k->p);
	free(k);
}

int cw_kaudit_fd(const struct cw_kaudit *k)
{
	return k->fd;
}

int cw_kaudit_mark(struct cw_kaudit *k, uint64_t nonce)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "cw-mark=%" PRIu64, nonce);

	return request(k, k->ctl, AUDIT_USER, msg, (size_t)n + 1, 0, NULL, 0);
}

uint64_t cw_kaudit_lost(struct cw_kaudit *k)
{
	struct audit_status st;
	uint32_t d;

	if (get_status(k, &st))
		return 0;
	d = st.lost - k->lost_seen;
	k->lost_seen = st.lost;
	return d;
}

/* ---- records -------------------------------------------------------- */

/* One key=value of a record's text: the value, and whether it was
 * quoted. */
struct kv {
	const char *key, *val;
	size_t klen, vlen;
	bool quoted;
};

/* The next field of s[*at..n): 1, or 0 at the end. */
static int next_kv(const char *s, size_t n, size_t *at, struct kv *kv)
{
	size_t i = *at;

	while (i < n && s[i] == ' ')
		i++;
	if (i >= n)
		return 0;
	kv->key = s + i;
	while (i < n && s[i] != '=' && s[i] != ' ')
		i++;
	kv->klen = (size_t)(s + i - kv->key);
	kv->quoted = false;
	if (i >= n || s[i] != '=') {
		kv->val = s + i;
		kv->vlen = 0;
		*at = i;
		return 1;
	}
	i++;
	if (i < n && (s[i] == '"' || s[i] == '\'')) {
		char q = s[i++];

		kv->val = s + i;
		while (i < n && s[i] != q)
			i++;
		kv->vlen = (size_t)(s + i - kv->val);
		kv->quoted = true;
		if (i < n)
			i++;
	} else {
		kv->val = s + i;
		while (i < n && s[i] != ' ')
			i++;
		kv->vlen = (size_t)(s + i - kv->val);
	}
	*at = i;
	return 1;
}

static bool key_is(const struct kv *kv, const char *k)
{
	return kv->klen == strlen(k) && !memcmp(kv->key, k, kv->klen);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A string value into out (cap bytes, NUL-terminated): quoted as is, else
 * hex (the kernel's encoding of a string with special bytes). Its length,
 * or -1 for (null) or a value that is neither. */
static long str_val(const struct kv *kv, char *out, size_t cap)
{
	size_t i, n = 0;

	if (!cap)
		return -1;
	if (kv->quoted) {
		n = kv->vlen < cap - 1 ? kv->vlen : cap - 1;
		memcpy(out, kv->val, n);
		out[n] = '\0';
		return (long)n;
	}
	if (kv->vlen == 6 && !memcmp(kv->val, "(null)", 6))
		return -1;
	if (kv->vlen % 2)
		return -1;
	for (i = 0; i + 1 < kv->vlen && n + 1 < cap; i += 2) {
		int hi = hexval(kv->val[i]), lo = hexval(kv->val[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = (char)(hi << 4 | lo);
	}
	out[n] = '\0';
	return (long)n;
}

/* A number; a negative decimal (exit=-2) wraps back through the cast. */
static long long num_val(const struct kv *kv, int base)
{
	char tmp[32];
	size_t n = kv->vlen < sizeof(tmp) - 1 ? kv->vlen : sizeof(tmp) - 1;

	memcpy(tmp, kv->val, n);
	tmp[n] = '\0';
	return (long long)strtoull(tmp, NULL, base);
}

static struct pending *pending_for(struct cw_kaudit *k, uint64_t serial)
{
	struct pending *free_one = NULL, *oldest = &k->p[0];
	size_t i;

	for (i = 0; i < PENDING; i++) {
		if (k->p[i].serial == serial)
			return &k->p[i];
		if (!k->p[i].serial && !free_one)
			free_one = &k->p[i];
		if (k->p[i].serial < oldest->serial)
			oldest = &k->p[i];
	}
	/* All in use: the oldest never got its end, drop it. */
	if (!free_one)
		free_one = oldest;
	memset(free_one, 0, sizeof(*free_one));
	free_one->serial = serial;
	return free_one;
}

static void on_syscall(struct pending *p, const char *s, size_t n)
{
	struct kv kv;
	size_t at = 0;

	p->syscall = true;
	while (next_kv(s, n, &at, &kv)) {
		if (key_is(&kv, "syscall"))
			p->nr = (long)num_val(&kv, 10);
		else if (key_is(&kv, "exit"))
			p->exit = (long)num_val(&kv, 10);
		else if (kv.klen == 2 && kv.key[0] == 'a' &&
			 kv.key[1] >= '0' && kv.key[1] <= '3')
			p->a[kv.key[1] - '0'] = (uint64_t)num_val(&kv, 16);
		else if (key_is(&kv, "pid"))
			p->pid = (uint32_t)num_val(&kv, 10);
		else if (key_is(&kv, "ppid"))
			p->ppid = (uint32_t)num_val(&kv, 10);
		else if (key_is(&kv, "uid"))
			p->uid = (uint32_t)num_val(&kv, 10);
		else if (key_is(&kv, "auid"))
			p->auid = (uint32_t)num_val(&kv, 10);
		else if (key_is(&kv, "comm") &&
			 str_val(&kv, p->comm, sizeof(p->comm)) < 0)
			p->comm[0] = '\0';
	}
}

/* EXECVE: argc=N a0=.. a1=..; a long one as aN_len=L aN[0]=.. aN[1]=..,
 * in as many records as it takes. */
static void on_execve(struct pending *p, const char *s, size_t n)
{
	char chunk[ARGV_MAX];
	struct kv kv;
	size_t at = 0;
	long len;

	while (next_kv(s, n, &at, &kv)) {
		size_t i;
		bool arg = kv.klen >= 2 && kv.key[0] == 'a';

		for (i = 1; arg && i < kv.klen; i++)
			if (!(kv.key[i] >= '0' && kv.key[i] <= '9') &&
			    kv.key[i] != '[' && kv.key[i] != ']')
				arg = false;
		if (!arg)
			continue;
		len = str_val(&kv, chunk, sizeof(chunk));
		if (len < 0)
			continue;
		/* a piece of a long argument goes on the one before */
		if (memchr(kv.key, '[', kv.klen) &&
		    memcmp(kv.key + kv.klen - 3, "[0]", 3) && p->argv_len)
			p->argv_len--;
		if (p->argv_len + (size_t)len + 1 > sizeof(p->argv)) {
			p->argv_cut = true;
			len = (long)(sizeof(p->argv) - p->argv_len - 1);
			if (len < 0)
				continue;
		}
		memcpy(p->argv + p->argv_len, chunk, (size_t)len);
		p->argv_len += (size_t)len;
		p->argv[p->argv_len++] = '\0';
	}
}

static void on_cwd(struct pending *p, const char *s, size_t n)
{
	struct kv kv;
	size_t at = 0;

	while (next_kv(s, n, &at, &kv))
		if (key_is(&kv, "cwd") &&
		    str_val(&kv, p->cwd, sizeof(p->cwd)) < 0)
			p->cwd[0] = '\0';
}

static void on_path(struct pending *p, const char *s, size_t n)
{
	struct kpath *kp;
	struct kv kv;
	size_t at = 0;

	if (p->npaths == NPATHS)
		return;
	kp = &p->path[p->npaths++];
	memset(kp, 0, sizeof(*kp));
	kp->null = true;
	while (next_kv(s, n, &at, &kv)) {
		if (key_is(&kv, "name"))
			kp->null = str_val(&kv, kp->name, sizeof(kp->name)) < 0;
		else if (key_is(&kv, "nametype"))
			snprintf(kp->type, sizeof(kp->type), "%.*s",
				 (int)kv.vlen, kv.val);
	}
}

/* ---- translation ---------------------------------------------------- */

enum pick {
	PICK_ITEM0,		/* the name the call was given */
	PICK_OPENED,		/* the first that is not a PARENT */
	PICK_DELETED,
	PICK_CREATED,
	PICK_MOVED,		/* rename: DELETE, then CREATE as path2 */
	PICK_LINKED,		/* link: NORMAL, then CREATE as path2 */
	PICK_NONE,		/* a descriptor's call: no name */
};

struct sc_map {
	int nr;
	const char *op;
	enum pick pick;
	int dirfd;		/* the argument that is a directory
				 * descriptor, -1: none */
	int mode, flags;	/* their arguments, -1: none */
	int size, owner;	/* owner: group is the argument after it */
	uint32_t flags_set;
};

static const struct sc_map sc_map[] = {
	{ SYS_execve, "exec", PICK_ITEM0, -1, -1, -1, -1, -1, 0 },
	{ SYS_execveat, "exec", PICK_ITEM0, 0, -1, -1, -1, -1, 0 },
	{ SYS_open, "open", PICK_OPENED, -1, 2, 1, -1, -1, 0 },
	{ SYS_openat, "open", PICK_OPENED, 0, 3, 2, -1, -1, 0 },
	{ SYS_openat2, "open", PICK_OPENED, 0, -1, -1, -1, -1, 0 },
	{ SYS_creat, "open", PICK_OPENED, -1, 1, -1, -1, -1, 01101 },
	{ SYS_unlink, "unlink", PICK_DELETED, -1, -1, -1, -1, -1, 0 },
	{ SYS_unlinkat, "unlink", PICK_DELETED, 0, -1, 2, -1, -1, 0 },
	{ SYS_rmdir, "rmdir", PICK_DELETED, -1, -1, -1, -1, -1, 0 },
	{ SYS_rename, "rename", PICK_MOVED, -1, -1, -1, -1, -1, 0 },
	{ SYS_renameat, "rename", PICK_MOVED, 0, -1, -1, -1, -1, 0 },
	{ SYS_renameat2, "rename", PICK_MOVED, 0, -1, -1, -1, -1, 0 },
	{ SYS_chmod, "chmod", PICK_ITEM0, -1, 1, -1, -1, -1, 0 },
	{ SYS_fchmod, "chmod", PICK_NONE, -1, 1, -1, -1, -1, 0 },
	{ SYS_fchmodat, "chmod", PICK_ITEM0, 0, 2, -1, -1, -1, 0 },
	{ SYS_chown, "chown", PICK_ITEM0, -1, -1, -1, -1, 1, 0 },
	{ SYS_lchown, "chown", PICK_ITEM0, -1, -1, -1, -1, 1, 0x100 },
	{ SYS_fchown, "chown", PICK_NONE, -1, -1, -1, -1, 1, 0 },
	{ SYS_fchownat, "chown", PICK_ITEM0, 0, -1, -1, -1, 2, 0 },
	{ SYS_mkdir, "mkdir", PICK_CREATED, -1, 1, -1, -1, -1, 0 },
	{ SYS_mkdirat, "mkdir", PICK_CREATED, 0, 2, -1, -1, -1, 0 },
	{ SYS_truncate, "truncate", PICK_ITEM0, -1, -1, -1, 1, -1, 0 },
	{ SYS_ftruncate, "truncate", PICK_NONE, -1, -1, -1, 1, -1, 0 },
	{ SYS_link, "link", PICK_LINKED, -1, -1, -1, -1, -1, 0 },
	{ SYS_linkat, "link", PICK_LINKED, 0, -1, -1, -1, -1, 0 },
	{ SYS_symlink, "symlink", PICK_CREATED, -1, -1, -1, -1, -1, 0 },
	{ SYS_symlinkat, "symlink", PICK_CREATED, 1, -1, -1, -1, -1, 0 },
	{ SYS_mknod, "mknod", PICK_CREATED, -1, 1, -1, 2, -1, 0 },
	{ SYS_mknodat, "mknod", PICK_CREATED, 0, 2, -1, 3, -1, 0 },
	{ SYS_utime, "utimes", PICK_ITEM0, -1, -1, -1, -1, -1, 0 },
	{ SYS_utimes, "utimes", PICK_ITEM0, -1, -1, -1, -1, -1, 0 },
	{ SYS_futimesat, "utimes", PICK_ITEM0, 0, -1, -1, -1, -1, 0 },
	{ SYS_utimensat, "utimes", PICK_ITEM0, 0, -1, 3, -1, -1, 0 },
	{ SYS_setxattr, "setxattr", PICK_ITEM0, -1, -1, -1, 3, -1, 0 },
	{ SYS_lsetxattr, "setxattr", PICK_ITEM0, -1, -1, -1, 3, -1, 0x100 },
	{ SYS_fsetxattr, "setxattr", PICK_NONE, -1, -1, -1, 3, -1, 0 },
	{ SYS_removexattr, "removexattr", PICK_ITEM0, -1, -1, -1, -1, -1, 0 },
	{ SYS_lremovexattr, "removexattr", PICK_ITEM0, -1, -1, -1, -1, -1,
	  0x100 },
	{ SYS_fremovexattr, "removexattr", PICK_NONE, -1, -1, -1, -1, -1, 0 },
	{ SYS_fallocate, "fallocate", PICK_NONE, -1, -1, 1, 3, -1, 0 },
};

static const struct kpath *pick(const struct pending *p, const char *type,
				unsigned from)
{
	unsigned i;

	for (i = from; i < p->npaths; i++)
		if (!type ? strcmp(p->path[i].type, "PARENT") :
			    !strcmp(p->path[i].type, type))
			return &p->path[i];
	return NULL;
}

/* A name as the kernel read it, made absolute with the call's directory
 * when it was relative to it. */
static const char *absolute(const struct pending *p, const struct kpath *kp,
			    bool at_cwd, char *buf, size_t len)
{
	const char *n;

	if (!kp || kp->null)
		return "";
	n = kp->name;
	if (n[0] == '/' || !at_cwd || !p->cwd[0])
		return n;
	while (n[0] == '.' && n[1] == '/')
		n += 2;
	snprintf(buf, len, "%s/%s", strcmp(p->cwd, "/") ? p->cwd : "", n);
	return buf;
}

static uint64_t arg(const struct pending *p, int i)
{
	return i >= 0 && i < 4 ? p->a[i] : 0;
}

static void finish(struct pending *p,
		   void (*event)(void *ctx, uint32_t auid,
				 const struct cw_trace_event *ev),
		   void *ctx)
{
	static char b1[PATH_MAX * 2], b2[PATH_MAX * 2];
	const struct sc_map *m = NULL;
	const struct kpath *k1 = NULL, *k2 = NULL;
	struct cw_trace_event ev;
	bool at_cwd;
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(sc_map) && p->syscall; i++)
		if (sc_map[i].nr == p->nr)
			m = &sc_map[i];
	if (!m || p->auid < CW_KAUDIT_AUID_BASE ||
	    p->auid - CW_KAUDIT_AUID_BASE >= CW_KAUDIT_AUID_COUNT)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.source = "kaudit";
	ev.pid = ev.tid = p->pid;
	ev.uid = p->uid;
	memcpy(ev.comm, p->comm, sizeof(ev.comm));
	ev.dirfd = ev.dirfd2 = -100;
	ev.owner = ev.group = -1;
	at_cwd = m->dirfd < 0 || (uint32_t)arg(p, m->dirfd) == AT_FDCWD_ARG;
	if (!at_cwd)
		ev.dirfd = (int)(int32_t)arg(p, m->dirfd);
	switch (m->pick) {
	case PICK_ITEM0:
		k1 = p->npaths ? &p->path[0] : NULL;
		break;
	case PICK_OPENED:
		k1 = pick(p, NULL, 0);
		break;
	case PICK_DELETED:
		k1 = pick(p, "DELETE", 0);
		break;
	case PICK_CREATED:
		k1 = pick(p, "CREATE", 0);
		break;
	case PICK_MOVED:
		k1 = pick(p, "DELETE", 0);
		k2 = pick(p, "CREATE", 0);
		break;
	case PICK_LINKED:
		k1 = pick(p, "NORMAL", 0);
		k2 = pick(p, "CREATE", 0);
		break;
	case PICK_NONE:
		ev.dirfd = (int)(int32_t)p->a[0];
		break;
	}
	if (!strcmp(m->op, "exec") && p->exit >= 0) {
		ev.kind = CW_TRACE_EXEC;
		ev.ppid = p->ppid;
		ev.filename = absolute(p, k1, at_cwd, b1, sizeof(b1));
		ev.argv = p->argv;
		ev.argv_len = p->argv_len;
		ev.argv_truncated = p->argv_cut;
		event(ctx, p->auid, &ev);
		return;
	}
	ev.kind = CW_TRACE_FILE;
	ev.op = m->op;
	if (m->nr == SYS_unlinkat && (arg(p, 2) & 0x200))
		ev.op = "rmdir";
	ev.path = absolute(p, k1, at_cwd, b1, sizeof(b1));
	if (k2)
		ev.path2 = absolute(p, k2, at_cwd, b2, sizeof(b2));
	ev.flags = (uint32_t)arg(p, m->flags) | m->flags_set;
	ev.mode = (uint32_t)arg(p, m->mode);
	ev.size = arg(p, m->size);
	if (m->owner >= 0) {
		ev.owner = (int64_t)(int32_t)arg(p, m->owner);
		ev.group = (int64_t)(int32_t)arg(p, m->owner + 1);
	}
	ev.ret = p->exit;
	ev.has_ret = true;
	event(ctx, p->auid, &ev);
}

int cw_kaudit_read(struct cw_kaudit *k,
		   void (*event)(void *ctx, uint32_t auid,
				 const struct cw_trace_event *ev),
		   void (*marker)(void *ctx, uint64_t nonce), void *ctx)
{
	static char buf[MSG_MAX + 1];
	int count = 0;

	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n = recv(k->fd, buf, MSG_MAX, MSG_DONTWAIT);
		unsigned long long serial;
		const char *s, *colon;
		struct pending *p;
		size_t len;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? count : -errno;
		count++;
		/* One record a message; its nlmsg_len counts the text alone
		 * (as the kernel has always sent them), so the text is what
		 * came after the header. */
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type < AUDIT_GET)
			continue;
		s = (const char *)buf + NLMSG_HDRLEN;
		len = (size_t)n - NLMSG_HDRLEN;
		/* "audit(SECONDS.MS:SERIAL): fields" */
		if (len < 8 || memcmp(s, "audit(", 6) ||
		    !(colon = memchr(s, ':', len)))
			continue;
		serial = strtoull(colon + 1, NULL, 10);
		colon = memchr(colon, ' ', len - (size_t)(colon - s));
		if (!colon)
			colon = s + len - 1;
		len -= (size_t)(colon + 1 - s);
		s = colon + 1;
		while (len && !s[len - 1])
			len--;
		if (h->nlmsg_type == AUDIT_USER) {
			const char *mk = memmem(s, len, "cw-mark=", 8);

			if (mk && marker)
				marker(ctx, strtoull(mk + 8, NULL, 10));
			continue;
		}
		if (h->nlmsg_type != AUDIT_SYSCALL &&
		    h->nlmsg_type != AUDIT_EXECVE &&
		    h->nlmsg_type != AUDIT_CWD &&
		    h->nlmsg_type != AUDIT_PATH &&
		    h->nlmsg_type != AUDIT_EOE)
			continue;
		p = pending_for(k, serial);
		switch (h->nlmsg_type) {
		case AUDIT_SYSCALL:
			on_syscall(p, s, len);
			break;
		case AUDIT_EXECVE:
			on_execve(p, s, len);
			break;
		case AUDIT_CWD:
			on_cwd(p, s, len);
			break;
		case AUDIT_PATH:
			on_path(p, s, len);
			break;
		case AUDIT_EOE:
			finish(p, event, ctx);
			p->serial = 0;
			break;
		}
	}
}

int cw_kaudit_pid_auid(uint32_t pid, uint32_t *auid)
{
	char path[64], line[32], *end;
	unsigned long v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/loginuid", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	line[n] = '\0';
	v = strtoul(line, &end, 10);
	if (end == line || v < CW_KAUDIT_AUID_BASE ||
	    v >= (unsigned long)CW_KAUDIT_AUID_BASE + CW_KAUDIT_AUID_COUNT)
		return 0;
	*auid = (uint32_t)v;
	return 1;
}
