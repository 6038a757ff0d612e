// SPDX-License-Identifier: Apache-2.0
/*
 * fanotify fallback for kernels without BPF on tracepoints (the E2B guest).
 *
 * One group of class FAN_CLASS_CONTENT, filesystem marks on every mounted
 * filesystem that holds files (not proc, sysfs, cgroup, devpts...), for
 *   FAN_OPEN_EXEC_PERM  an exec: the process waits until the agent answers,
 *                       so its cgroup can always be read; the pid is then
 *                       remembered for the call
 *   FAN_OPEN, FAN_MODIFY, FAN_CLOSE_WRITE   file events, attributed by the
 *                       remembered pid, else by /proc/<pid>/cgroup
 * Every permission event is answered FAN_ALLOW at once: fanotify observes
 * here, it never decides. What it cannot see, compared with the BPF source:
 * argv, fork and exit, unlink, rename, chmod, chown, failed opens, and
 * opens of directories. A process that never executed anything and was
 * gone before its event was read (a subshell writing a redirect) cannot be
 * attributed: that event is counted as unattributed, for the calls that
 * were running. An overflow of the kernel's queue counts as a lost event.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/fanotify.h"
#include "kernel/mountinfo.h"

#define MARK_MASK (FAN_OPEN_EXEC_PERM | FAN_OPEN | FAN_MODIFY | FAN_CLOSE_WRITE)
/* Each event of a read comes with a new descriptor: a small buffer keeps
 * that number low. */
#define READ_BUF 4096
#define PID_SLOTS 4096
/* Distinct filesystems marked at the most. */
#define MAX_FILESYSTEMS 256

struct pid_slot {
	pid_t pid;
	char inv[48];
};

struct cw_fanotify {
	int fd;
	pid_t self;
	struct pid_slot pids[PID_SLOTS];
};

/* Filesystems without files a command could open for data. */
static bool pseudo_fs(const char *type)
{
	static const char *const skip[] = {
		"proc",	     "sysfs",	"cgroup",  "cgroup2",	 "devpts",
		"mqueue",    "bpf",	"tracefs", "debugfs",	 "securityfs",
		"pstore",    "configfs", "fusectl", "hugetlbfs", "autofs",
		"binfmt_misc", "efivarfs", "nsfs",  "rpc_pipefs", "selinuxfs",
	};
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(skip); i++)
		if (!strcmp(type, skip[i]))
			return true;
	return false;
}

/* Marks each filesystem once; the number marked, or -errno. */
static int mark_all(int fd, struct cw_error *err)
{
	dev_t seen[MAX_FILESYSTEMS];
	size_t nseen = 0, i;
	int marked = 0, first_err = 0;
	const struct cw_mount *m;
	struct cw_mountinfo *mi = cw_mountinfo_open();

	if (!mi) {
		cw_error_set(err, "fanotify: " CW_MOUNTINFO_PATH ": %s",
			     strerror(errno));
		return -errno;
	}
	while ((m = cw_mountinfo_next(mi))) {
		struct stat st;

		if (pseudo_fs(m->fstype) || stat(m->point, &st))
			continue;
		for (i = 0; i < nseen && seen[i] != st.st_dev; i++)
			;
		if (i < nseen || nseen == CW_ARRAY_SIZE(seen))
			continue;
		seen[nseen++] = st.st_dev;
		if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				  MARK_MASK, AT_FDCWD, m->point)) {
			if (!first_err) {
				first_err = errno;
				cw_error_set(err, "fanotify: marking %s (%s): %s",
					     m->point, m->fstype,
					     strerror(errno));
			}
			continue;
		}
		marked++;
	}
	cw_mountinfo_close(mi);
	return marked ? marked : -(first_err ? first_err : ENOENT);
}

struct cw_fanotify *cw_fanotify_open(const char *cgroup2_mount,
				     struct cw_error *err)
{
	struct cw_fanotify *f;
	int ret;

	(void)cgroup2_mount;
	f = calloc(1, sizeof(*f));
	if (!f) {
		cw_error_set(err, "fanotify: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	f->self = getpid();
	f->fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK,
			      O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (f->fd < 0) {
		ret = -errno;
		cw_error_set(err, "fanotify_init: %s", strerror(-ret));
		goto fail;
	}
	ret = mark_all(f->fd, err);
	if (ret < 0)
		goto fail;
	return f;
fail:
	cw_fanotify_close(f);
	errno = -ret;
	return NULL;
}

void cw_fanotify_close(struct cw_fanotify *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);	/* pending permission events are allowed */
	free(f);
}

int cw_fanotify_fd(const struct cw_fanotify *f)
{
	return f ? f->fd : -EINVAL;
}

static struct pid_slot *slot(struct cw_fanotify *f, pid_t pid)
{
	return &f->pids[(unsigned)pid % PID_SLOTS];
}

static int attribute(struct cw_fanotify *f, pid_t pid, bool exec, char *inv,
		     size_t len)
{
	struct pid_slot *s = slot(f, pid);
	int r;

	if (!exec && s->pid == pid) {
		snprintf(inv, len, "%s", s->inv);
		return 1;
	}
	r = cw_cgroup_pid_invocation(pid, inv, len);
	if (r == 1) {
		s->pid = pid;
		snprintf(s->inv, sizeof(s->inv), "%s", inv);
	} else if (r == 0 && s->pid == pid) {
		s->pid = 0;
	} else if (r < 0 && s->pid == pid) {
		snprintf(inv, len, "%s", s->inv);
		return 1;
	}
	return r;
}

static void read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

static void handle(struct cw_fanotify *f,
		   const struct fanotify_event_metadata *m,
		   void (*event)(void *, const char *,
				 const struct cw_trace_event *),
		   void (*lost)(void *, bool), void *ctx)
{
	static const struct { uint64_t bit; const char *op; } ops[] = {
		{ FAN_OPEN, "open" },
		{ FAN_MODIFY, "modify" },
		{ FAN_CLOSE_WRITE, "close_write" },
	};
	char inv[48], path[PATH_MAX], link[64];
	struct cw_trace_event ev;
	bool exec = m->mask & FAN_OPEN_EXEC_PERM;
	ssize_t n;
	size_t i;
	int r;

	if (m->pid == f->self || m->pid <= 0)
		return;
	r = attribute(f, m->pid, exec, inv, sizeof(inv));
	if (r < 0) {
		lost(ctx, false);
		return;
	}
	if (r == 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		n = 0;
	path[n] = '\0';
	memset(&ev, 0, sizeof(ev));
	ev.source = "fanotify";
	ev.pid = (uint32_t)m->pid;
	ev.dirfd = ev.dirfd2 = -100;
	ev.owner = ev.group = -1;
	read_comm(m->pid, ev.comm, sizeof(ev.comm));
	if (exec) {
		ev.kind = CW_TRACE_EXEC;
		ev.filename = path;
		event(ctx, inv, &ev);
	}
	ev.kind = CW_TRACE_FILE;
	ev.path = path;
	for (i = 0; i < CW_ARRAY_SIZE(ops); i++) {
		if (!(m->mask & ops[i].bit))
			continue;
		ev.op = ops[i].op;
		event(ctx, inv, &ev);
	}
}

int cw_fanotify_read(struct cw_fanotify *f,
		     void (*event)(void *ctx, const char *invocation,
				   const struct cw_trace_event *ev),
		     void (*lost)(void *ctx, bool overflow), void *ctx)
{
	char buf[READ_BUF] __attribute__((aligned(8)));
	const struct fanotify_event_metadata *m;
	int total = 0;
	ssize_t n;

	if (!f)
		return -EINVAL;
	for (;;) {
		n = read(f->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno != EAGAIN ? -errno : total;
		for (m = (const void *)buf; FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			total++;
			if (m->mask & FAN_Q_OVERFLOW) {
				lost(ctx, true);
				continue;
			}
			/* An exec waits for the answer: attributed first,
			 * while its process surely exists. */
			if (m->mask & FAN_OPEN_EXEC_PERM) {
				struct fanotify_response r = {
					.fd = m->fd, .response = FAN_ALLOW
				};

				handle(f, m, event, lost, ctx);
				if (cw_write_all(f->fd, &r, sizeof(r)) < 0) {
					/* The kernel allows it when the
					 * group goes; nothing else to do. */
				}
			} else {
				handle(f, m, event, lost, ctx);
			}
			if (m->fd >= 0)
				close(m->fd);
		}
	}
}

void cw_fanotify_forget(struct cw_fanotify *f, const char *invocation)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < PID_SLOTS; i++)
		if (f->pids[i].pid && !strcmp(f->pids[i].inv, invocation))
			f->pids[i].pid = 0;
}
