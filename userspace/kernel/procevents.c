// SPDX-License-Identifier: Apache-2.0
/*
 * The process events connector (procevents.h). The kernel multicasts a
 * message for each fork, exec, comm change and exit of the machine, from
 * the task's own context, so a process's messages come in the order it
 * did things, and its exit is queued before its parent can reap it. The
 * processes of calls are kept in a tree by pid: entered when one executes
 * and the owner function says it is a call's (a /proc read per exec), or
 * is forked by one; left when it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "kernel/procevents.h"

/* Room for a burst of the machine's forks and exits between reads. */
#define RCVBUF (4 << 20)
/* How long open waits for its own child's exit to come back. */
#define OPEN_WAIT_MS 1000

struct proc {
	uint32_t pid;
	char key[CW_PROCEV_KEY_LEN];	/* its call's */
	char comm[17];
};

struct cw_procev {
	int fd;
	cw_procev_owner owner;
	void *owner_ctx;
	void *tree;		/* struct proc, by pid */
	uint64_t lost;
};

static int by_pid(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Asks the connector to send (or stop sending) the process events. */
static int listen_op(int fd, enum proc_cn_mcast_op op)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))];
	struct nlmsghdr *nl = (struct nlmsghdr *)buf;
	struct cn_msg *cn = NLMSG_DATA(nl);

	memset(buf, 0, sizeof(buf));
	nl->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(op));
	nl->nlmsg_type = NLMSG_DONE;
	nl->nlmsg_pid = (uint32_t)getpid();
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(op);
	memcpy(cn->data, &op, sizeof(op));
	return send(fd, buf, nl->nlmsg_len, 0) < 0 ? -errno : 0;
}

/* A file of /proc/pid, its first line; -1 when the process is gone. */
static int read_proc(uint32_t pid, const char *name, char *out, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, out, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static struct proc *find(struct cw_procev *p, uint32_t pid)
{
	struct proc key = { .pid = pid }, **at;

	at = tfind(&key, &p->tree, by_pid);
	return at ? *at : NULL;
}

static void forget(struct cw_procev *p, uint32_t pid)
{
	struct proc *t = find(p, pid);

	if (t) {
		tdelete(t, &p->tree, by_pid);
		free(t);
	}
}

/* Enters pid (or updates it) as a process of the call of key. */
static struct proc *track(struct cw_procev *p, uint32_t pid, const char *key,
			  const char *comm)
{
	struct proc *t = find(p, pid);

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->pid = pid;
		if (!tsearch(t, &p->tree, by_pid)) {
			free(t);
			return NULL;
		}
	}
	snprintf(t->key, sizeof(t->key), "%s", key);
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

/* An exec: the process is a call's when the owner function says so (a
 * pid reused by a process outside the calls is forgotten here). */
static void on_exec(struct cw_procev *p, uint32_t pid)
{
	char key[CW_PROCEV_KEY_LEN], comm[17];

	if (p->owner(p->owner_ctx, pid, key, sizeof(key)) != 1) {
		forget(p, pid);
		return;
	}
	if (read_proc(pid, "comm", comm, sizeof(comm)))
		comm[0] = '\0';
	track(p, pid, key, comm);
}

typedef void (*event_fn)(void *, const char *, const struct cw_trace_event *);

static void deliver(const struct proc *t, struct cw_trace_event *ev,
		    event_fn event, void *ctx)
{
	ev->source = "proc_events";
	memcpy(ev->comm, t->comm, sizeof(ev->comm));
	event(ctx, t->key, ev);
}

static void on_message(struct cw_procev *p, const struct proc_event *pe,
		       event_fn event, void *ctx)
{
	struct cw_trace_event ev;
	struct proc *t;
	uint32_t pid;
	int status;

	memset(&ev, 0, sizeof(ev));
	switch (pe->what) {
	case PROC_EVENT_EXEC:
		on_exec(p, pe->event_data.exec.process_tgid);
		break;
	case PROC_EVENT_COMM:
		t = find(p, pe->event_data.comm.process_tgid);
		if (t && pe->event_data.comm.process_pid ==
				 pe->event_data.comm.process_tgid)
			snprintf(t->comm, sizeof(t->comm), "%.16s",
				 pe->event_data.comm.comm);
		break;
	case PROC_EVENT_FORK:
		/* a new thread is no new process */
		if (pe->event_data.fork.child_pid !=
		    pe->event_data.fork.child_tgid)
			break;
		t = find(p, pe->event_data.fork.parent_tgid);
		if (!t)
			break;
		pid = pe->event_data.fork.child_tgid;
		/* without memory its own events go unattributed */
		track(p, pid, t->key, t->comm);
		ev.kind = CW_TRACE_FORK;
		ev.pid = ev.tid = t->pid;
		ev.child = pid;
		deliver(t, &ev, event, ctx);
		break;
	case PROC_EVENT_EXIT:
		/* a thread's end; the process ends with its last */
		if (pe->event_data.exit.process_pid !=
		    pe->event_data.exit.process_tgid)
			break;
		pid = pe->event_data.exit.process_tgid;
		t = find(p, pid);
		if (!t)
			break;
		/* a wait status: code << 8, or the signal in the low bits */
		status = (int)pe->event_data.exit.exit_code;
		ev.kind = CW_TRACE_EXIT;
		ev.pid = ev.tid = pid;
		ev.exit_signal = status & 0x7f;
		ev.exit_code = ev.exit_signal ? -1 : (status >> 8) & 0xff;
		deliver(t, &ev, event, ctx);
		forget(p, pid);
		break;
	default:
		break;
	}
}

/* The event of a message, copied out: a message's data is aligned to 4
 * bytes, the event's fields to 8. Zeros past what this kernel sent. */
static const struct proc_event *event_at(const struct cn_msg *cn)
{
	static __thread struct proc_event e;

	memset(&e, 0, sizeof(e));
	memcpy(&e, cn->data, cn->len < sizeof(e) ? cn->len : sizeof(e));
	return &e;
}

int cw_procev_read(struct cw_procev *p,
		   void (*event)(void *ctx, const char *key,
				 const struct cw_trace_event *ev),
		   void *ctx)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nl;
	struct cn_msg *cn;
	int count = 0;
	ssize_t n;

	for (;;) {
		n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* the kernel dropped messages: forks and exits of
			 * calls may be among them */
			p->lost++;
			continue;
		}
		if (n < 0)
			return errno == EAGAIN ? count : -errno;
		for (nl = (struct nlmsghdr *)buf; NLMSG_OK(nl, (size_t)n);
		     nl = NLMSG_NEXT(nl, n)) {
			if (nl->nlmsg_type == NLMSG_ERROR ||
			    nl->nlmsg_type == NLMSG_NOOP ||
			    nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)))
				continue;
			cn = NLMSG_DATA(nl);
			if (cn->id.idx != CN_IDX_PROC ||
			    cn->id.val != CN_VAL_PROC ||
			    cn->len < sizeof(struct proc_event) ||
			    nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + cn->len))
				continue;
			on_message(p, event_at(cn), event, ctx);
			count++;
		}
	}
}

/* Until the exit of pid comes back, or ms pass: 0, or -ETIMEDOUT. */
static int await_exit(int fd, pid_t pid, int ms)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct nlmsghdr *nl;
	struct cn_msg *cn;
	const struct proc_event *pe;
	ssize_t n;

	while (poll(&pfd, 1, ms) > 0) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == ENOBUFS ||
			      errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		for (nl = (struct nlmsghdr *)buf; NLMSG_OK(nl, (size_t)n);
		     nl = NLMSG_NEXT(nl, n)) {
			if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)))
				continue;
			cn = NLMSG_DATA(nl);
			if (cn->id.idx != CN_IDX_PROC ||
			    cn->len < sizeof(*pe))
				continue;
			pe = event_at(cn);
			if (pe->what == PROC_EVENT_EXIT &&
			    pe->event_data.exit.process_tgid == pid)
				return 0;
		}
	}
	return -ETIMEDOUT;
}

/*
 * Opens and subscribes; with check, forks a child and waits for its exit
 * to come back, for a kernel with the connector but without
 * CONFIG_PROC_EVENTS accepts the subscription and sends nothing. The
 * socket, or -errno with err.
 */
static int subscribe(bool check, struct cw_error *err)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = CN_IDX_PROC };
	int fd, ret, size = RCVBUF;
	pid_t pid;

	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0) {
		ret = -errno;
		cw_error_set(err, "process events: NETLINK_CONNECTOR: %s%s",
			     strerror(-ret),
			     ret == -EPROTONOSUPPORT ?
				     " (a kernel without CONFIG_CONNECTOR)" :
				     "");
		return ret;
	}
	/* beyond rmem_max with CAP_NET_ADMIN; the default otherwise */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		cw_error_set(err, "process events: joining the connector's group: %s",
			     strerror(-ret));
		close(fd);
		return ret;
	}
	ret = listen_op(fd, PROC_CN_MCAST_LISTEN);
	if (ret) {
		cw_error_set(err, "process events: subscribing: %s",
			     strerror(-ret));
		close(fd);
		return ret;
	}
	if (!check)
		return fd;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		ret = -errno;
		cw_error_set(err, "process events: fork: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	ret = await_exit(fd, pid, OPEN_WAIT_MS);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (ret) {
		cw_error_set(err, "process events: a child's exit never came (%s): a kernel without CONFIG_PROC_EVENTS",
			     strerror(-ret));
		listen_op(fd, PROC_CN_MCAST_IGNORE);
		close(fd);
		return -EPROTONOSUPPORT;
	}
	return fd;
}

struct cw_procev *cw_procev_open(cw_procev_owner owner, void *owner_ctx,
				 struct cw_error *err)
{
	struct cw_procev *p;
	/* the probe has seen events come (the agent opens this only when
	 * it says so): no second child to fork at start */
	int fd = subscribe(false, err);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		cw_error_set(err, "process events: out of memory");
		listen_op(fd, PROC_CN_MCAST_IGNORE);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	p->fd = fd;
	p->owner = owner;
	p->owner_ctx = owner_ctx;
	return p;
}

int cw_procev_probe(struct cw_error *err)
{
	int fd = subscribe(true, err);

	if (fd < 0)
		return fd;
	listen_op(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
	return 0;
}

void cw_procev_close(struct cw_procev *p)
{
	if (!p)
		return;
	listen_op(p->fd, PROC_CN_MCAST_IGNORE);
	close(p->fd);
	tdestroy(p->tree, free);
	free(p);
}

int cw_procev_fd(const struct cw_procev *p)
{
	return p->fd;
}

uint64_t cw_procev_lost(struct cw_procev *p)
{
	uint64_t n = p ? p->lost : 0;

	if (p)
		p->lost = 0;
	return n;
}
