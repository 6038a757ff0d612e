// SPDX-License-Identifier: Apache-2.0
/*
 * trace: loads bpf/trace.bpf.c once (skeleton: open, size the ring buffer,
 * load, attach the raw tracepoints), or opens the fanotify fallback, and
 * routes each event to the sink of the call it belongs to. What the
 * programs record and enforce is documented at the top of bpf/trace.bpf.c.
 *
 * Threads: one reading thread waits on the ring buffer and the fanotify
 * descriptor and delivers events as they come. Locks:
 *   drain_lock  consuming the sources and delivering to sinks; a call is
 *               freed only under it, so a sink never sees a freed call
 *   lock        the list of calls (short sections only)
 * cw_trace_call_end takes drain_lock, reads until the call has received
 * every event the programs say they submitted for it, then forgets it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "audit/types.h"
#include "kernel/cgroup.h"
#include "kernel/fanotify.h"
#include "kernel/kaudit.h"
#include "kernel/libbpf.h"
#include "kernel/procevents.h"
#include "kernel/reads.h"
#include "lib/json.h"
#include "bpf/trace.h"
#include "kernel/trace.h"
#include "bpf/trace.skel.h"

#define CW_MIN(a, b) ((a) < (b) ? (a) : (b))

/* How long cw_trace_call_end waits for records still being written by
 * another CPU (a reserved, uncommitted record holds back those after it). */
#define END_WAIT_US 200000
/* ... and for the kernel audit's marker to come back through its queue. */
#define KAUDIT_WAIT_US 2000000

/* How often the reader looks for records that came without a wakeup. */
#define POLL_MS 5

/* Descriptors the loading child hands over, in this order. */
enum {
	FD_EVENTS = 0,
	FD_CALLS,
	FD_LOST,
	FD_READS,
	FD_SEEN,
	FD_SEEN_EVENTS,
	FD_LINK_EXEC,
	FD_LINK_FORK,
	FD_LINK_EXIT,
	FD_LINK_SYS_EXIT,
	FD_COUNT,
};

struct stale {
	int fd;			/* the map */
	size_t ksz, n, done;
	char *keys;
	struct stale *next;
};

struct cw_trace_call {
	uint64_t cgid;
	char invocation[64];
	cw_trace_sink sink;
	void *ctx;
	uint64_t delivered;	/* bpf events handed to the sink */
	bool unflushed;		/* events since the sink's last flush */
	int freeze_fd;		/* its cgroup.freeze, -1: cannot pause it */
	bool frozen;		/* under drain_lock */
	int64_t frozen_at;
	uint32_t auid;		/* kaudit: the loginuid of its processes */
	/* bpf: its read-only opens, kept as the kernel tells each file's
	 * first one; under drain_lock */
	struct cw_reads *reads;
	struct cw_trace_stats st;
	struct cw_trace_call *next;
};

struct cw_trace {
	/* The tracing programs, loaded by a child (load_child): the maps
	 * and the links that keep the programs attached. */
	bool bpf;
	int fd[FD_COUNT];
	struct ring_buffer *rb;
	struct cw_fanotify *fan;
	/* The kernel's audit: each call's loginuid, the markers sent and
	 * come back. */
	struct cw_kaudit *ka;
	/* Beside it, fork and exit from the process events connector. */
	struct cw_procev *pe;
	uint32_t next_auid;
	uint64_t marks_sent, mark_seen;
	pthread_mutex_t lock;
	pthread_mutex_t drain_lock;
	struct cw_trace_call *calls;
	/* The keys of ended calls' sums, deleted by the reading thread a
	 * chunk at a time, so that a call's end does not wait for them;
	 * under lock, but for the head's progress, the reader's own. */
	struct stale *stale, **stale_tail;
	/* Back-pressure: the ring's fill, read from its position pages; a
	 * call whose events fill it past high is paused (its cgroup frozen)
	 * until the reader is back under low. Under drain_lock. */
	bool pause;
	void *pos_map;		/* consumer page, producer page (read-only) */
	size_t page;
	uint64_t high, low;
	unsigned nfrozen;
	pthread_t thread;
	bool thread_started;
	int stop_fd;
	int epfd;
};

/* ---- decoding ------------------------------------------------------- */

static const char *const file_ops[] = {
	[TRACE_OP_OPEN] = "open",     [TRACE_OP_UNLINK] = "unlink",
	[TRACE_OP_RMDIR] = "rmdir",   [TRACE_OP_RENAME] = "rename",
	[TRACE_OP_CHMOD] = "chmod",   [TRACE_OP_CHOWN] = "chown",
	[TRACE_OP_CONNECT] = "connect", [TRACE_OP_SENDMSG] = "sendmsg",
	[TRACE_OP_MKDIR] = "mkdir",   [TRACE_OP_EXEC] = "exec",
	[TRACE_OP_TRUNCATE] = "truncate", [TRACE_OP_LINK] = "link",
	[TRACE_OP_SYMLINK] = "symlink", [TRACE_OP_MKNOD] = "mknod",
	[TRACE_OP_UTIMES] = "utimes", [TRACE_OP_SETXATTR] = "setxattr",
	[TRACE_OP_REMOVEXATTR] = "removexattr",
	[TRACE_OP_FALLOCATE] = "fallocate",
};

/* The ops whose record is a struct trace_file2, with a second string. */
static bool has_path2(__u8 op)
{
	return op == TRACE_OP_RENAME || op == TRACE_OP_LINK ||
	       op == TRACE_OP_SYMLINK || op == TRACE_OP_SETXATTR ||
	       op == TRACE_OP_REMOVEXATTR;
}

/* A string field of a record: NUL-terminated within its array. */
static const char *fixed_str(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) ? s : NULL;
}

int cw_trace_decode(const void *data, size_t size, struct cw_trace_event *ev)
{
	const struct trace_hdr *h = data;

	memset(ev, 0, sizeof(*ev));
	if (!data || size < sizeof(*h))
		return -EINVAL;
	ev->source = "bpf";
	ev->cgroup_id = h->cgid;
	ev->pid = h->pid;
	ev->tid = h->tid;
	ev->uid = h->uid;
	memcpy(ev->comm, h->comm, sizeof(h->comm));
	ev->comm[sizeof(h->comm)] = '\0';
	ev->path_truncated = h->truncated & TRACE_TRUNC_PATH;
	ev->path2_truncated = h->truncated & TRACE_TRUNC_PATH2;
	ev->argv_truncated = h->truncated & TRACE_TRUNC_ARGV;
	ev->path_kernel = h->path_from == TRACE_PATH_KERNEL;
	switch (h->kind) {
	case TRACE_EXEC: {
		/* Sent up to the end of its argv. */
		const struct trace_exec *e = data;
		size_t at = offsetof(struct trace_exec, argv);

		if (size < at || e->argv_len > sizeof(e->argv) ||
		    e->argv_len > size - at)
			return -EINVAL;
		ev->kind = CW_TRACE_EXEC;
		ev->ppid = e->ppid;
		ev->filename = fixed_str(e->filename, sizeof(e->filename));
		if (!ev->filename)
			return -EINVAL;
		ev->argv = e->argv;
		ev->argv_len = e->argv_len;
		return 0;
	}
	case TRACE_FORK:
	case TRACE_EXIT: {
		const struct trace_proc *p = data;

		if (size < sizeof(*p))
			return -EINVAL;
		ev->kind = h->kind == TRACE_FORK ? CW_TRACE_FORK : CW_TRACE_EXIT;
		ev->child = p->child;
		/* A wait status: code << 8, or the signal in the low bits. */
		ev->exit_signal = p->exit_code & 0x7f;
		ev->exit_code = ev->exit_signal ? -1 :
						  (int)((p->exit_code >> 8) & 0xff);
		return 0;
	}
	case TRACE_SEEN: {
		/* Sent up to the NUL of its path. */
		const struct trace_seen_ev *e = data;
		size_t at = offsetof(struct trace_seen_ev, path);

		if (size <= at)
			return -EINVAL;
		ev->kind = CW_TRACE_SEEN;
		ev->path = fixed_str(e->path, CW_MIN(size - at, sizeof(e->path)));
		if (!ev->path)
			return -EINVAL;
		ev->ino = e->ino;
		ev->dev = e->dev;
		return 0;
	}
	case TRACE_UNIX:
	case TRACE_FILE: {
		/* Sent up to the NUL of its path; one with two whole. */
		const struct trace_file *f = data;
		size_t at = offsetof(struct trace_file, path);
		bool unix_op = f->op == TRACE_OP_CONNECT ||
			       f->op == TRACE_OP_SENDMSG;

		if (size <= at || !f->op || f->op >= CW_ARRAY_SIZE(file_ops) ||
		    unix_op != (h->kind == TRACE_UNIX))
			return -EINVAL;
		ev->kind = unix_op ? CW_TRACE_UNIX : CW_TRACE_FILE;
		ev->op = file_ops[f->op];
		ev->path = fixed_str(f->path, CW_MIN(size - at, sizeof(f->path)));
		if (!ev->path)
			return -EINVAL;
		if (has_path2(f->op)) {
			const struct trace_file2 *f2 = data;

			if (size < sizeof(*f2))
				return -EINVAL;
			ev->path2 = fixed_str(f2->path2, sizeof(f2->path2));
			if (!ev->path2)
				return -EINVAL;
		}
		ev->dirfd = f->dirfd;
		ev->dirfd2 = f->dirfd2;
		ev->flags = f->flags;
		ev->mode = f->mode;
		ev->owner = f->owner == (__u32)-1 ? -1 : (int64_t)f->owner;
		ev->group = f->group == (__u32)-1 ? -1 : (int64_t)f->group;
		ev->size = f->size;
		ev->ret = f->ret;
		ev->has_ret = true;
		return 0;
	}
	}
	return -EINVAL;
}

const char *cw_trace_event_type(const struct cw_trace_event *ev)
{
	switch (ev->kind) {
	case CW_TRACE_EXEC:
		return CW_AUDIT_T(EXEC);
	case CW_TRACE_FILE:
		return CW_AUDIT_T(FILE);
	case CW_TRACE_READS:
		return CW_AUDIT_T(READS);
	case CW_TRACE_UNIX:
		return CW_AUDIT_T(NET);
	default:
		return CW_AUDIT_T(PROCESS);
	}
}

/*
 * The words records repeat (sources, operations, flags), made once and
 * shared by every record that names them: a reference instead of two
 * allocations and a UTF-8 check each. jansson counts references
 * atomically, so records on several threads may hold them.
 */
static const char *const words[] = {
	"bpf",	  "fanotify", "open",	   "unlink",   "rmdir",	  "rename",
	"chmod",  "chown",    "modify",	   "close_write", "fork", "exit",
	"rdonly", "wronly",   "rdwr",	   "creat",    "excl",	  "trunc",
	"append", "directory", "nofollow", "cloexec",  "path",	  "tmpfile",
	"connect", "sendmsg", "unix",	   "mkdir",    "exec",	  "kaudit",
	"read",	  "user_memory", "kernel",
};
static json_t *word_vals[CW_ARRAY_SIZE(words)];
static pthread_once_t words_once = PTHREAD_ONCE_INIT;

static void words_init(void)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(words); i++)
		word_vals[i] = json_string_nocheck(words[i]);
}

/* s as a JSON string, shared when it is one of words. New reference. */
static json_t *word(const char *s)
{
	size_t i;

	if (!s)
		return NULL;
	pthread_once(&words_once, words_init);
	for (i = 0; i < CW_ARRAY_SIZE(words); i++)
		if (words[i][0] == s[0] && word_vals[i] && !strcmp(words[i], s))
			return json_incref(word_vals[i]);
	return json_string(s);
}

/* Record keys are ASCII literals: no UTF-8 check needed. */
static int put(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new_nocheck(o, key, v);
}

/* O_* flags as words, so a reader need not decode numbers. */
static json_t *open_flags(uint32_t f)
{
	static const struct { uint32_t bit; const char *name; } bits[] = {
		{ O_CREAT, "creat" },	  { O_EXCL, "excl" },
		{ O_TRUNC, "trunc" },	  { O_APPEND, "append" },
		{ O_DIRECTORY, "directory" }, { O_NOFOLLOW, "nofollow" },
		{ O_CLOEXEC, "cloexec" }, { O_PATH, "path" },
		{ O_TMPFILE & ~O_DIRECTORY, "tmpfile" },
	};
	json_t *a = json_array();
	size_t i;

	if (!a)
		return NULL;
	json_array_append_new(a, word((f & O_ACCMODE) == O_RDWR ? "rdwr" :
				      (f & O_ACCMODE) == O_WRONLY ? "wronly" :
								    "rdonly"));
	for (i = 0; i < CW_ARRAY_SIZE(bits); i++)
		if ((f & bits[i].bit) == bits[i].bit)
			json_array_append_new(a, word(bits[i].name));
	return a;
}

static json_t *argv_json(const char *p, size_t len)
{
	json_t *a = json_array();
	size_t i = 0;

	while (a && i < len) {
		size_t n = strnlen(p + i, len - i);

		json_array_append_new(a, json_stringn(p + i, n));
		i += n + 1;
	}
	return a;
}

json_t *cw_trace_event_json(const struct cw_trace_event *ev)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	put(o, "source", word(ev->source));
	if (ev->kind == CW_TRACE_READS) {
		json_decref(o);
		return json_incref(ev->reads);
	}
	put(o, "pid", json_integer(ev->pid));
	if (ev->tid && ev->tid != ev->pid)
		put(o, "tid", json_integer(ev->tid));
	put(o, "comm", cw_json_path(ev->comm));
	/* fanotify and the process events connector know neither */
	if (strcmp(ev->source, "fanotify") && strcmp(ev->source, "proc_events"))
		put(o, "uid", json_integer(ev->uid));
	switch (ev->kind) {
	case CW_TRACE_EXEC:
		if (strcmp(ev->source, "fanotify"))
			put(o, "ppid", json_integer(ev->ppid));
		put(o, "filename", cw_json_path(ev->filename));
		if (ev->argv) {
			json_t *a = argv_json(ev->argv, ev->argv_len);
			size_t i;

			/* Each argument may hold any bytes. */
			for (i = 0; a && i < json_array_size(a); i++)
				if (!json_array_get(a, i)) {
					json_decref(a);
					a = NULL;
				}
			if (!a) {
				a = json_array();
				json_array_append_new(a, cw_json_path(ev->argv));
			}
			put(o, "argv", a);
		}
		if (ev->path_truncated)
			put(o, "filename_truncated", json_true());
		if (ev->argv_truncated)
			put(o, "argv_truncated", json_true());
		break;
	case CW_TRACE_FORK:
		put(o, "event", word("fork"));
		put(o, "child", json_integer(ev->child));
		break;
	case CW_TRACE_EXIT:
		put(o, "event", word("exit"));
		put(o, "exit_code", json_integer(ev->exit_code));
		put(o, "signal", json_integer(ev->exit_signal));
		break;
	case CW_TRACE_FILE:
		put(o, "op", word(ev->op));
		put(o, "path", cw_json_path(ev->path));
		/* bpf walks it up from the file the call opened or named by
		 * descriptor, or else reads it from the process after the
		 * call (a thread may have rewritten it); the kernel audit
		 * gives the kernel's own copy, fanotify the file it opened */
		put(o, "path_source",
		    word(strcmp(ev->source, "bpf") || ev->path_kernel ?
				 "kernel" : "user_memory"));
		if (ev->path_truncated)
			put(o, "path_truncated", json_true());
		if (ev->dirfd != -100)
			put(o, "dirfd", json_integer(ev->dirfd));
		if (ev->path2) {
			/* a link's target and an attribute's name are
			 * strings, not files */
			const char *k = !strcmp(ev->op, "symlink") ? "target" :
					strstr(ev->op, "xattr") ? "name" :
								  "path2";

			put(o, k, cw_json_path(ev->path2));
			if (ev->path2_truncated)
				put(o, !strcmp(k, "path2") ? "path2_truncated" :
				       !strcmp(k, "name") ? "name_truncated" :
							    "target_truncated",
				    json_true());
			if (ev->dirfd2 != -100)
				put(o, "dirfd2", json_integer(ev->dirfd2));
		}
		if (!strcmp(ev->op, "open") && ev->has_ret) {
			put(o, "flags", open_flags(ev->flags));
			if (ev->flags & O_CREAT)
				put(o, "mode", json_integer(ev->mode));
		} else if (!strcmp(ev->op, "chmod") ||
			   !strcmp(ev->op, "mkdir")) {
			put(o, "mode", json_integer(ev->mode));
		} else if (!strcmp(ev->op, "chown")) {
			put(o, "owner", json_integer(ev->owner));
			put(o, "group", json_integer(ev->group));
		} else if (!strcmp(ev->op, "mknod")) {
			put(o, "mode", json_integer(ev->mode));
			put(o, "device", json_integer((json_int_t)ev->size));
		} else if (ev->flags) {
			put(o, "flags", json_integer(ev->flags));
		}
		if (!strcmp(ev->op, "truncate") || !strcmp(ev->op, "fallocate"))
			put(o, "length", json_integer((json_int_t)ev->size));
		else if (!strcmp(ev->op, "setxattr"))
			put(o, "size", json_integer((json_int_t)ev->size));
		if (ev->has_ret) {
			put(o, "result", json_integer(ev->ret < 0 ? -1 : ev->ret));
			if (ev->ret < 0)
				put(o, "error",
				    json_string(strerror((int)-ev->ret)));
		}
		break;
	case CW_TRACE_UNIX:
		put(o, "op", word(ev->op));
		put(o, "family", word("unix"));
		put(o, "socket_type", json_integer(ev->flags));
		put(o, "address", cw_json_path(ev->path));
		break;
	case CW_TRACE_SEEN:
	case CW_TRACE_READS:
		break;
	}
	return o;
}

/* ---- routing -------------------------------------------------------- */

static struct cw_trace_call *find_cgid(struct cw_trace *t, uint64_t cgid)
{
	struct cw_trace_call *c;

	pthread_mutex_lock(&t->lock);
	for (c = t->calls; c && c->cgid != cgid; c = c->next)
		;
	pthread_mutex_unlock(&t->lock);
	return c;
}

static void deliver(struct cw_trace_call *c, const struct cw_trace_event *ev)
{
	switch (ev->kind) {
	case CW_TRACE_EXEC:
		c->st.exec++;
		break;
	case CW_TRACE_FORK:
		c->st.fork++;
		break;
	case CW_TRACE_EXIT:
		c->st.exit++;
		break;
	case CW_TRACE_FILE:
		c->st.file++;
		break;
	case CW_TRACE_UNIX:
	case CW_TRACE_SEEN:
	case CW_TRACE_READS:
		break;
	}
	c->unflushed = true;
	if (c->sink)
		c->sink(c->ctx, ev);
}

/* The end of a round of reading: sinks that buffer write what they hold.
 * Under drain_lock, so no call is freed meanwhile. */
static void flush_sinks(struct cw_trace *t)
{
	struct cw_trace_call *c, *dirty[64];
	size_t i, n;

	do {
		n = 0;
		pthread_mutex_lock(&t->lock);
		for (c = t->calls; c && n < CW_ARRAY_SIZE(dirty); c = c->next)
			if (c->unflushed) {
				c->unflushed = false;
				dirty[n++] = c;
			}
		pthread_mutex_unlock(&t->lock);
		for (i = 0; i < n; i++)
			if (dirty[i]->sink)
				dirty[i]->sink(dirty[i]->ctx, NULL);
	} while (n == CW_ARRAY_SIZE(dirty));
}

/* ---- back-pressure -------------------------------------------------- */

/* Bytes written to the ring and not yet read. */
static uint64_t ring_fill(const struct cw_trace *t)
{
	const uint64_t *cons = t->pos_map;
	const uint64_t *prod = (const uint64_t *)((const char *)t->pos_map +
						  t->page);

	return __atomic_load_n(prod, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(cons, __ATOMIC_ACQUIRE);
}

static void freeze(struct cw_trace *t, struct cw_trace_call *c)
{
	if (pwrite(c->freeze_fd, "1", 1, 0) != 1)
		return;		/* its cgroup is gone: nothing left to pause */
	c->frozen = true;
	c->frozen_at = cw_mono_us();
	c->st.pauses++;
	t->nfrozen++;
}

static void thaw(struct cw_trace *t, struct cw_trace_call *c)
{
	/* A failed write leaves nothing frozen: the cgroup is gone. */
	if (pwrite(c->freeze_fd, "0", 1, 0) != 1) {
		/* nothing to do */
	}
	c->frozen = false;
	c->st.paused_us += (uint64_t)(cw_mono_us() - c->frozen_at);
	t->nfrozen--;
}

static void thaw_all(struct cw_trace *t)
{
	struct cw_trace_call *c;

	if (!t->nfrozen)
		return;
	pthread_mutex_lock(&t->lock);
	for (c = t->calls; c; c = c->next)
		if (c->frozen)
			thaw(t, c);
	pthread_mutex_unlock(&t->lock);
}

/*
 * After each record: a call whose events are being read while the ring is
 * over half full is paused (cgroup v2 freezer: its processes stop at
 * their next return to user space, unseen by their parents), so a burst
 * waits for the audit log instead of losing events; paused calls go on
 * once the reader is back under an eighth.
 */
static void pressure(struct cw_trace *t, struct cw_trace_call *c)
{
	uint64_t fill = ring_fill(t);

	if (fill >= t->high) {
		if (!c->frozen && c->freeze_fd >= 0)
			freeze(t, c);
	} else if (t->nfrozen && fill <= t->low) {
		thaw_all(t);
	}
}

/* A file's first read-only open: kept, its count to come at the call's
 * end. Without memory its sum comes out with its path unknown. */
static void keep_seen(struct cw_trace_call *c, const struct cw_trace_event *ev)
{
	struct cw_reads_opener by = { .pid = ev->pid, .uid = ev->uid };

	if (!c->reads)
		c->reads = cw_reads_new();
	if (!c->reads)
		return;
	memcpy(by.comm, ev->comm, sizeof(by.comm));
	cw_reads_seen(c->reads, ev->dev, ev->ino, ev->path, ev->path_truncated,
		      &by);
}

/* Called by libbpf for each record, under drain_lock. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct cw_trace *t = ctx;
	struct cw_trace_event ev;
	struct cw_trace_call *c;

	if (cw_trace_decode(data, size, &ev) < 0)
		return 0;
	c = find_cgid(t, ev.cgroup_id);
	if (!c)
		return 0;	/* a call already ended: its count said so */
	/* before the sink, which may take its time */
	if (t->pause)
		pressure(t, c);
	c->delivered++;
	if (ev.kind == CW_TRACE_SEEN)
		keep_seen(c, &ev);
	else
		deliver(c, &ev);
	return 0;
}

/* fanotify events, attributed by the invocation the cgroup names. */
static void on_fan_event(void *ctx, const char *invocation,
			 const struct cw_trace_event *ev)
{
	struct cw_trace *t = ctx;
	struct cw_trace_call *c;

	pthread_mutex_lock(&t->lock);
	for (c = t->calls; c && strcmp(c->invocation, invocation); c = c->next)
		;
	pthread_mutex_unlock(&t->lock);
	if (c)
		deliver(c, ev);
}

/* Kernel audit events, attributed by the loginuid of their process. */
static void on_ka_event(void *ctx, uint32_t auid,
			const struct cw_trace_event *ev)
{
	struct cw_trace *t = ctx;
	struct cw_trace_call *c;

	pthread_mutex_lock(&t->lock);
	for (c = t->calls; c && c->auid != auid; c = c->next)
		;
	pthread_mutex_unlock(&t->lock);
	if (c)
		deliver(c, ev);
}

/* Whose process a process events pid is: a call's by its loginuid beside
 * the kernel audit, by its cgroup beside fanotify. */
static int pe_owner(void *ctx, uint32_t pid, char *key, size_t len)
{
	struct cw_trace *t = ctx;
	uint32_t auid;
	int r;

	if (!t->ka)
		return cw_cgroup_pid_invocation((pid_t)pid, key, len);
	r = cw_kaudit_pid_auid(pid, &auid);
	if (r == 1)
		snprintf(key, len, "%u", auid);
	return r;
}

static void on_pe_event(void *ctx, const char *key,
			const struct cw_trace_event *ev)
{
	struct cw_trace *t = ctx;

	if (t->ka)
		on_ka_event(ctx, (uint32_t)strtoul(key, NULL, 10), ev);
	else
		on_fan_event(ctx, key, ev);
}

static void on_ka_marker(void *ctx, uint64_t nonce)
{
	struct cw_trace *t = ctx;

	if (nonce > t->mark_seen)
		t->mark_seen = nonce;
}

/* Counts an event no call could be found for against every running call:
 * one of them lost it. */
static void on_fan_unattributed(void *ctx, bool overflow)
{
	struct cw_trace *t = ctx;
	struct cw_trace_call *c;

	pthread_mutex_lock(&t->lock);
	for (c = t->calls; c; c = c->next) {
		if (overflow)
			c->st.lost++;
		else
			c->st.unattributed++;
	}
	pthread_mutex_unlock(&t->lock);
}

/* Reads every source to its end and flushes the sinks; drain_lock held. */
static void read_all(struct cw_trace *t)
{
	if (t->rb) {
		ring_buffer__consume(t->rb);
		/* read to the end: nothing needs to wait any more */
		thaw_all(t);
	}
	if (t->fan)
		cw_fanotify_read(t->fan, on_fan_event, on_fan_unattributed, t);
	if (t->ka)
		cw_kaudit_read(t->ka, on_ka_event, on_ka_marker, t);
	if (t->pe)
		cw_procev_read(t->pe, on_pe_event, t);
	flush_sinks(t);
}

static void drain(struct cw_trace *t)
{
	pthread_mutex_lock(&t->drain_lock);
	read_all(t);
	pthread_mutex_unlock(&t->drain_lock);
}

/* ---- stale sums ------------------------------------------------------ */

/* Entries of a reads map read or deleted at a time. */
#define TAKE_BATCH 256

/* Queues the n keys (taking them) of a map fd for the reader to delete;
 * without memory, deletes them now. */
static void queue_stale(struct cw_trace *t, int fd, size_t ksz, char *keys,
			size_t n)
{
	struct stale *s;

	if (!n) {
		free(keys);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		while (n--)
			bpf_map_delete_elem(fd, keys + n * ksz);
		free(keys);
		return;
	}
	*s = (struct stale){ .fd = fd, .ksz = ksz, .n = n, .keys = keys };
	pthread_mutex_lock(&t->lock);
	*t->stale_tail = s;
	t->stale_tail = &s->next;
	pthread_mutex_unlock(&t->lock);
}

/* The reader's share: deletes a batch of the oldest stale keys. True when
 * more are left. */
static bool delete_stale(struct cw_trace *t)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct stale *s;
	__u32 count, want;
	bool more;

	pthread_mutex_lock(&t->lock);
	s = t->stale;
	pthread_mutex_unlock(&t->lock);
	if (!s)
		return false;
	want = count = (__u32)CW_MIN(s->n - s->done, (size_t)TAKE_BATCH);
	/* a key that is gone stops the batch: the rest one by one */
	if (bpf_map_delete_batch(s->fd, s->keys + s->done * s->ksz, &count,
				 &opts))
		for (; count < want; count++)
			bpf_map_delete_elem(s->fd,
					    s->keys + (s->done + count) * s->ksz);
	s->done += want;
	pthread_mutex_lock(&t->lock);
	if (s->done == s->n) {
		t->stale = s->next;
		if (!t->stale)
			t->stale_tail = &t->stale;
		free(s->keys);
		free(s);
	}
	more = t->stale != NULL;
	pthread_mutex_unlock(&t->lock);
	return more;
}

/*
 * The reader runs ahead of the calls it reads: a command busy on a loaded
 * machine would otherwise fill the ring in one of its time slices, before
 * the reader is scheduled to see the ring fill and pause it. Real-time
 * (the lowest FIFO priority, as root) preempts every ordinary task the
 * moment the ring wakes it; the reader sleeps again once the ring is
 * drained, and the kernel's real-time throttling bounds it in any case.
 * Without the privilege it stays an ordinary thread and pausing is best
 * effort.
 */
static void reader_priority(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		/* not root: ordinary scheduling */
	}
}

static void *reader(void *arg)
{
	struct cw_trace *t = arg;
	struct epoll_event evs[4];
	sigset_t all;
	int i, n;

	/* Signals are the main thread's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	reader_priority();
	for (;;) {
		int timeout;

		/* While calls are traced, records arrive without a wakeup
		 * (bpf/trace.bpf.c wakes only for a pile): poll for them;
		 * idle, look once a second for a call that has begun. */
		pthread_mutex_lock(&t->lock);
		timeout = !t->rb ? -1 : t->calls || t->stale ? POLL_MS : 1000;
		pthread_mutex_unlock(&t->lock);
		n = epoll_wait(t->epfd, evs, (int)CW_ARRAY_SIZE(evs), timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++)
			if (evs[i].data.fd == t->stop_fd)
				return NULL;
		drain(t);
		if (t->bpf)
			delete_stale(t);
	}
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------ */

void cw_trace_close(struct cw_trace *t)
{
	struct cw_trace_call *c, *next;
	int i;

	if (!t)
		return;
	if (t->thread_started) {
		uint64_t one = 1;

		if (write(t->stop_fd, &one, sizeof(one)) < 0) {
			/* An eventfd write only fails on overflow. */
		}
		pthread_join(t->thread, NULL);
	}
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->stop_fd >= 0)
		close(t->stop_fd);
	ring_buffer__free(t->rb);
	if (t->pos_map)
		munmap(t->pos_map, 2 * t->page);
	/* Closing the links detaches the programs; the maps go with them. */
	for (i = 0; i < FD_COUNT; i++)
		if (t->fd[i] >= 0)
			close(t->fd[i]);
	cw_fanotify_close(t->fan);
	cw_kaudit_close(t->ka);
	cw_procev_close(t->pe);
	for (c = t->calls; c; c = next) {
		next = c->next;
		if (c->freeze_fd >= 0)
			close(c->freeze_fd);
		cw_reads_free(c->reads);
		free(c);
	}
	while (t->stale) {
		struct stale *s = t->stale;

		t->stale = s->next;
		free(s->keys);
		free(s);
	}
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->drain_lock);
	free(t);
}

static unsigned long ring_bytes(const struct cw_trace_opts *o)
{
	return cw_libbpf_ringbuf_bytes(o->ringbuf_kib,
				       CW_TRACE_RINGBUF_DEFAULT_KIB);
}

/*
 * In the loading child: open, size, load (CO-RE parses the kernel's BTF,
 * several MiB) and attach; fds[] gets the maps and links. 0, or -errno
 * with err.
 */
static int load_child(const struct cw_trace_opts *o, int fds[FD_COUNT],
		      struct cw_error *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct trace_bpf *skel;
	int ret;

	cw_libbpf_log_begin();
	oo.btf_custom_path = o->btf_path;
	skel = trace_bpf__open_opts(&oo);
	if (!skel) {
		ret = -errno;
		cw_libbpf_error(err, "opening the tracing BPF object", -ret);
		return ret;
	}
	ret = bpf_map__set_max_entries(skel->maps.events, ring_bytes(o));
	if (ret) {
		cw_error_set(err, "sizing the tracing ring buffer: %s",
			     strerror(-ret));
		return ret;
	}
	ret = trace_bpf__load(skel);
	if (ret) {
		cw_libbpf_error(err,
				"loading the tracing BPF programs (they need kernel BTF and BPF on raw tracepoints)",
				-ret);
		return ret;
	}
	ret = trace_bpf__attach(skel);
	if (ret) {
		cw_libbpf_error(err, "attaching the tracing BPF programs", -ret);
		return ret;
	}
	fds[FD_EVENTS] = bpf_map__fd(skel->maps.events);
	fds[FD_CALLS] = bpf_map__fd(skel->maps.calls);
	fds[FD_LOST] = bpf_map__fd(skel->maps.lost_total);
	fds[FD_READS] = bpf_map__fd(skel->maps.reads);
	fds[FD_SEEN] = bpf_map__fd(skel->maps.reads_seen);
	fds[FD_SEEN_EVENTS] = bpf_map__fd(skel->maps.seen_events);
	fds[FD_LINK_EXEC] = bpf_link__fd(skel->links.cw_exec);
	fds[FD_LINK_FORK] = bpf_link__fd(skel->links.cw_fork);
	fds[FD_LINK_EXIT] = bpf_link__fd(skel->links.cw_exit);
	fds[FD_LINK_SYS_EXIT] = bpf_link__fd(skel->links.cw_sys_exit);
	/* The child exits without destroying: the parent holds them now. */
	return 0;
}

/*
 * The programs are loaded in a child, which hands the maps and links over
 * a socket (SCM_RIGHTS) and exits: the kernel BTF CO-RE needs never counts
 * against the agent's memory, as with the probe.
 */
static int open_bpf(struct cw_trace *t, const struct cw_trace_opts *o,
		    struct cw_error *err)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FD_COUNT)];
	struct cw_error cerr = { 0 };
	struct iovec iov = { &cerr, sizeof(cerr) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int sv[2], status, ret;
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		cw_error_set(err, "trace: socketpair: %s", strerror(-ret));
		return ret;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		cw_error_set(err, "trace: fork: %s", strerror(-ret));
		return ret;
	}
	if (pid == 0) {
		int fds[FD_COUNT];

		close(sv[0]);
		if (load_child(o, fds, &cerr)) {
			send(sv[1], &cerr, sizeof(cerr), MSG_NOSIGNAL);
			_exit(1);
		}
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		_exit(sendmsg(sv[1], &m, MSG_NOSIGNAL) < 0 ? 2 : 0);
	}
	close(sv[1]);
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : 0;
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cm = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (cm && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int) * FD_COUNT)) {
		memcpy(t->fd, CMSG_DATA(cm), sizeof(int) * FD_COUNT);
		t->bpf = true;
	} else {
		cerr.text[sizeof(cerr.text) - 1] = '\0';
		cw_error_set(err, "%s", n > 0 && cerr.text[0] ? cerr.text :
			     "the tracing programs' loader ended without a word");
		return ret ? ret : -EIO;
	}
	t->rb = ring_buffer__new(t->fd[FD_EVENTS], on_record, t, NULL);
	if (!t->rb || ring_buffer__add(t->rb, t->fd[FD_SEEN_EVENTS],
				       on_record, t)) {
		ret = -errno;
		cw_error_set(err, "opening the tracing ring buffers: %s",
			     strerror(-ret));
		return ret;
	}
	if (o->no_pause)
		return 0;
	/* The ring's consumer and producer positions, to see its fill. */
	t->page = (size_t)sysconf(_SC_PAGESIZE);
	t->pos_map = mmap(NULL, 2 * t->page, PROT_READ, MAP_SHARED,
			  t->fd[FD_EVENTS], 0);
	if (t->pos_map == MAP_FAILED) {
		ret = -errno;
		t->pos_map = NULL;
		cw_error_set(err, "mapping the tracing ring buffer's positions: %s",
			     strerror(-ret));
		return ret;
	}
	t->high = ring_bytes(o) / 2;
	t->low = ring_bytes(o) / 8;
	t->pause = true;
	return 0;
}

static int watch(struct cw_trace *t, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

struct cw_trace *cw_trace_open(const struct cw_trace_opts *o,
			       struct cw_error *err)
{
	struct cw_error perr;
	struct cw_trace *t;
	int i, ret = 0;

	if (!o || o->ringbuf_kib > CW_TRACE_RINGBUF_MAX_KIB) {
		cw_error_set(err, "trace: the ring buffer may be at most %u KiB",
			     CW_TRACE_RINGBUF_MAX_KIB);
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		cw_error_set(err, "trace: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->stale_tail = &t->stale;
	pthread_mutex_init(&t->drain_lock, NULL);
	for (i = 0; i < FD_COUNT; i++)
		t->fd[i] = -1;
	t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->stop_fd < 0 || t->epfd < 0) {
		ret = -errno;
		cw_error_set(err, "trace: %s", strerror(-ret));
		goto out;
	}
	if (o->bpf) {
		ret = open_bpf(t, o, err);
		if (ret)
			goto out;
		ret = watch(t, ring_buffer__epoll_fd(t->rb));
	} else if (o->kaudit) {
		t->ka = cw_kaudit_open(err);
		if (!t->ka) {
			ret = -errno;
			goto out;
		}
		ret = watch(t, cw_kaudit_fd(t->ka));
	} else if (o->fanotify) {
		t->fan = cw_fanotify_open(o->cgroup2_mount, err);
		if (!t->fan) {
			ret = -errno;
			goto out;
		}
		ret = watch(t, cw_fanotify_fd(t->fan));
	}
	/* Fork and exit beside the kernel audit or fanotify; without it
	 * they go unrecorded, and the sources say so. */
	if (!ret && (t->ka || t->fan) && o->proc_events) {
		t->pe = cw_procev_open(pe_owner, t, &perr);
		if (t->pe)
			ret = watch(t, cw_procev_fd(t->pe));
	}
	if (!ret)
		ret = watch(t, t->stop_fd);
	if (ret) {
		cw_error_set(err, "trace: epoll: %s", strerror(-ret));
		goto out;
	}
	ret = -pthread_create(&t->thread, NULL, reader, t);
	if (ret) {
		cw_error_set(err, "trace: starting the reading thread: %s",
			     strerror(-ret));
		goto out;
	}
	t->thread_started = true;
out:
	if (ret) {
		cw_trace_close(t);
		errno = -ret;
		return NULL;
	}
	return t;
}

size_t cw_trace_source_names(const struct cw_trace *t,
			     const char *names[CW_TRACE_SOURCES_MAX])
{
	size_t n = 0;

	if (t && t->bpf)
		names[n++] = "bpf_tracepoint";
	if (t && t->fan)
		names[n++] = "fanotify";
	if (t && t->ka)
		names[n++] = "kaudit";
	if (t && t->pe)
		names[n++] = "proc_events";
	return n;
}

json_t *cw_trace_sources(const struct cw_trace *t)
{
	const char *names[CW_TRACE_SOURCES_MAX];
	size_t n = cw_trace_source_names(t, names), i;
	json_t *a = json_array();

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(names[i]));
	return a;
}

bool cw_trace_enforces_files(const struct cw_trace *t)
{
	return t && t->bpf;
}

uint64_t cw_trace_lost_total(const struct cw_trace *t)
{
	uint64_t *v, sum = 0;
	uint32_t zero = 0;
	int i, ncpu;

	if (!t || !t->bpf)
		return 0;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(t->fd[FD_LOST], &zero, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* ---- calls ---------------------------------------------------------- */

static void unlink_call(struct cw_trace *t, struct cw_trace_call *c)
{
	struct cw_trace_call **pc;

	for (pc = &t->calls; *pc; pc = &(*pc)->next)
		if (*pc == c) {
			*pc = c->next;
			return;
		}
}

struct cw_trace_call *cw_trace_call_add(struct cw_trace *t, uint64_t cgid,
					int cgroup_fd, const char *invocation,
					const struct cw_sandbox *sb,
					cw_trace_sink sink, void *ctx,
					struct cw_error *err)
{
	struct cw_trace_call *c;
	struct trace_call *cfg = NULL;
	size_t i;

	if (!t || !invocation || (t->bpf && !cgid)) {
		cw_error_set(err, "trace: no cgroup id or invocation");
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		cw_error_set(err, "trace: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->cgid = cgid;
	snprintf(c->invocation, sizeof(c->invocation), "%s", invocation);
	c->sink = sink;
	c->ctx = ctx;
	c->freeze_fd = -1;
	if (t->pause && cgroup_fd >= 0) {
		/* Without a freezer (before Linux 5.2) a full ring kills,
		 * as with no_pause. */
		c->freeze_fd = openat(cgroup_fd, "cgroup.freeze",
				      O_WRONLY | O_CLOEXEC);
	}
	/* Listed first, so that no event of the call finds no call. */
	pthread_mutex_lock(&t->lock);
	if (t->ka)
		c->auid = CW_KAUDIT_AUID_BASE +
			  t->next_auid++ % CW_KAUDIT_AUID_COUNT;
	c->next = t->calls;
	t->calls = c;
	pthread_mutex_unlock(&t->lock);
	if (!t->bpf)
		return c;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		goto fail;
	if (sb) {
		cfg->max_files_written = (uint64_t)sb->files.max_files_written;
		cfg->max_write_bytes = (uint64_t)sb->files.max_write_bytes;
		for (i = 0; i < sb->files.deny_open.n && i < TRACE_DENY_MAX; i++)
			snprintf(cfg->deny[i], sizeof(cfg->deny[i]), "%s",
				 sb->files.deny_open.v[i]);
		cfg->ndeny = (uint32_t)i;
	}
	if (bpf_map_update_elem(t->fd[FD_CALLS], &cgid, cfg, BPF_NOEXIST)) {
		cw_error_set(err, "trace: tracking cgroup %llu: %s",
			     (unsigned long long)cgid, strerror(errno));
		goto fail;
	}
	free(cfg);
	return c;
fail:
	if (!cfg)
		cw_error_set(err, "trace: out of memory");
	free(cfg);
	pthread_mutex_lock(&t->lock);
	unlink_call(t, c);
	pthread_mutex_unlock(&t->lock);
	if (c->freeze_fd >= 0)
		close(c->freeze_fd);
	free(c);
	errno = EIO;
	return NULL;
}

static void copy_comm(char *dst, const char *src)
{
	memcpy(dst, src, 16);
	dst[16] = '\0';
}

typedef void (*take_fn)(struct cw_trace_call *c, const void *key,
			const void *value);

/*
 * Calls fn for each entry of the reads map fd that is the call's (a key
 * that starts with its cgroup id), then deletes them: read in batches,
 * a few system calls for thousands of entries, the other calls' entries
 * left as they are.
 */
static void take_entries(struct cw_trace *t, int fd,
			 struct cw_trace_call *c, size_t ksz, size_t vsz,
			 take_fn fn)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t cap = TAKE_BATCH, n = 0, mcap = 0, i;
	char *keys = NULL, *vals = NULL, *mine = NULL, *grown;
	uint64_t in = 0, out = 0;
	void *from = NULL;
	__u32 count;
	int ret;

	for (;;) {
		if (!keys) {
			keys = malloc(cap * ksz);
			vals = malloc(cap * vsz);
			if (!keys || !vals)
				break;
		}
		count = cap;
		ret = bpf_map_lookup_batch(fd, from, &out, keys, vals, &count,
					   &opts);
		if (ret == -ENOSPC && cap < 65536) {
			/* a bucket holds more than a batch: larger ones */
			free(keys);
			free(vals);
			keys = vals = NULL;
			cap *= 4;
			continue;
		}
		if (ret && ret != -ENOENT)
			break;
		for (i = 0; i < count; i++) {
			const char *k = keys + i * ksz;
			uint64_t cgid;

			memcpy(&cgid, k, sizeof(cgid));
			if (cgid != c->cgid)
				continue;
			if (n == mcap) {
				mcap = mcap ? 2 * mcap : TAKE_BATCH;
				grown = realloc(mine, mcap * ksz);
				if (!grown)
					break;
				mine = grown;
			}
			memcpy(mine + n++ * ksz, k, ksz);
			fn(c, k, vals + i * vsz);
		}
		if (ret)
			break;	/* -ENOENT: that was the last batch */
		in = out;
		from = &in;
	}
	queue_stale(t, fd, ksz, mine, n);
	free(keys);
	free(vals);
}

static void take_seen(struct cw_trace_call *c, const void *key,
		      const void *value)
{
	struct trace_seen_key k;
	struct trace_seen_sum sum;

	memcpy(&k, key, sizeof(k));
	memcpy(&sum, value, sizeof(sum));
	cw_reads_count(c->reads, k.dev, k.ino, sum.count);
}

static void take_missing(struct cw_trace_call *c, const void *key,
			 const void *value)
{
	struct trace_read_key k;
	struct trace_read_sum sum;
	struct cw_reads_opener by;

	memcpy(&k, key, sizeof(k));
	memcpy(&sum, value, sizeof(sum));
	k.path[sizeof(k.path) - 1] = '\0';
	by.pid = sum.pid;
	by.uid = sum.uid;
	memcpy(by.comm, sum.comm, sizeof(sum.comm));
	by.comm[sizeof(sum.comm)] = '\0';
	cw_reads_missing(c->reads, k.path, sum.count, &by);
}

/* One "reads" record's fields, as an event. */
static void deliver_reads_record(void *ctx, json_t *fields)
{
	struct cw_trace_call *c = ctx;
	struct cw_trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = CW_TRACE_READS;
	ev.source = "bpf";
	ev.cgroup_id = c->cgid;
	ev.reads = fields;
	deliver(c, &ev);
}

/*
 * The call's read-only opens summed in the kernel, delivered after the
 * call's other events as "reads" events (reads.h), and taken out of the
 * tables. Under drain_lock.
 */
static void deliver_reads(struct cw_trace *t, struct cw_trace_call *c)
{
	if (!c->reads)
		c->reads = cw_reads_new();
	if (!c->reads)
		return;
	take_entries(t, t->fd[FD_SEEN], c, sizeof(struct trace_seen_key),
		     sizeof(struct trace_seen_sum), take_seen);
	take_entries(t, t->fd[FD_READS], c, sizeof(struct trace_read_key),
		     sizeof(struct trace_read_sum), take_missing);
	c->st.reads = cw_reads_total(c->reads);
	cw_reads_records(c->reads, deliver_reads_record, c);
	cw_reads_free(c->reads);
	c->reads = NULL;
}

uint32_t cw_trace_call_loginuid(const struct cw_trace_call *c)
{
	return c ? c->auid : 0;
}

/*
 * The kernel's audit queue up to now, read: a marker sent through it
 * comes back after every record queued before it, those of the call's
 * ended processes among them. Under drain_lock.
 */
static void read_kaudit_through_now(struct cw_trace *t,
				    struct cw_trace_call *c)
{
	int64_t deadline = cw_mono_us() + KAUDIT_WAIT_US;
	uint64_t nonce = ++t->marks_sent;

	if (cw_kaudit_mark(t->ka, nonce) == 0)
		while (t->mark_seen < nonce && cw_mono_us() < deadline) {
			read_all(t);
			if (t->mark_seen < nonce)
				usleep(1000);
		}
	/* what the kernel could not queue, while this call ran */
	c->st.lost += cw_kaudit_lost(t->ka) + cw_procev_lost(t->pe);
}

void cw_trace_call_end(struct cw_trace *t, struct cw_trace_call *c,
		       struct cw_trace_stats *st)
{
	struct trace_call cnt;
	bool have = false;
	int64_t deadline = cw_mono_us() + END_WAIT_US;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!t || !c)
		return;
	pthread_mutex_lock(&t->drain_lock);
	for (;;) {
		read_all(t);
		if (!t->bpf)
			break;
		have = !bpf_map_lookup_elem(t->fd[FD_CALLS], &c->cgid, &cnt);
		if (!have || c->delivered >= cnt.emitted ||
		    cw_mono_us() >= deadline)
			break;
		usleep(1000);
	}
	if (t->bpf) {
		deliver_reads(t, c);
		flush_sinks(t);
	}
	if (t->ka)
		read_kaudit_through_now(t, c);
	if (have) {
		bpf_map_delete_elem(t->fd[FD_CALLS], &c->cgid);
		c->st.lost = cnt.lost;
		c->st.missing = cnt.emitted > c->delivered ?
					cnt.emitted - c->delivered : 0;
		c->st.files_written = cnt.files_written;
		c->st.write_bytes = cnt.write_bytes;
		c->st.files.hit = cnt.files_hit;
		c->st.files.pid = cnt.files_pid;
		copy_comm(c->st.files.comm, cnt.files_comm);
		c->st.bytes.hit = cnt.bytes_hit;
		c->st.bytes.pid = cnt.bytes_pid;
		copy_comm(c->st.bytes.comm, cnt.bytes_comm);
		c->st.lost_kill.hit = cnt.lost_hit;
		c->st.lost_kill.pid = cnt.lost_pid;
		copy_comm(c->st.lost_kill.comm, cnt.lost_comm);
		c->st.deny.hit = cnt.deny_hit;
		c->st.deny.pid = cnt.deny_pid;
		copy_comm(c->st.deny.comm, cnt.deny_comm);
		cnt.deny_path[sizeof(cnt.deny_path) - 1] = '\0';
		snprintf(c->st.deny_path, sizeof(c->st.deny_path), "%s",
			 cnt.deny_path);
		if (cnt.deny_index < TRACE_DENY_MAX) {
			cnt.deny[cnt.deny_index][TRACE_DENY_LEN - 1] = '\0';
			snprintf(c->st.deny_prefix, sizeof(c->st.deny_prefix),
				 "%s", cnt.deny[cnt.deny_index]);
		}
	}
	if (t->fan)
		cw_fanotify_forget(t->fan, c->invocation);
	if (c->frozen)
		thaw(t, c);
	pthread_mutex_lock(&t->lock);
	unlink_call(t, c);
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&t->drain_lock);
	if (c->freeze_fd >= 0)
		close(c->freeze_fd);
	if (st)
		*st = c->st;
	cw_reads_free(c->reads);
	free(c);
}
