// SPDX-License-Identifier: Apache-2.0
/*
 * Per-call cgroups.
 *
 * Layout. Hierarchies come from /proc/self/mountinfo (fstype cgroup2, or
 * cgroup with "memory" or "pids" among the super options) and the agent's
 * place in each from /proc/self/cgroup; <own> is that place. Everything is
 * created beneath <own>, and no file of a root cgroup is ever written.
 *
 *   v2:  <own>/agent        the agent process moves here (no internal
 *                           processes: <own> may then enable controllers)
 *        <own>/calls        controllers enabled for the calls; the attach
 *                           point for cgroup-BPF programs
 *        <own>/calls/<id>   one call
 *   v1:  <own>/calls/<id>   in the memory and pids hierarchies, when those
 *                           controllers are v1 (hybrid machines)
 *
 * When <own> is the v2 root (no cgroup.type file) the agent stays there
 * (the root is exempt from the no-internal-processes rule) and only the
 * controllers the root already delegates are used. An agent found in
 * <x>/agent next to <x>/calls (a second open in one process, a re-exec, a
 * forked child) takes <x> as <own> instead of nesting.
 *
 * Enforcement. memory: v2 memory.max, memory.swap.max = 0 and
 * memory.oom.group = 1 (an OOM kill takes the whole call), or v1
 * memory.limit_in_bytes and memory.memsw.limit_in_bytes when present.
 * pids: pids.max (v2 or v1). cpu_s is not a cgroup limit: cpu.max bounds a
 * rate, not a total, so the launcher's RLIMIT_CPU enforces it; the cpu
 * controller is only enabled for accounting. setrlimit stays the floor in
 * every case. The launcher enters the call atomically with clone3
 * CLONE_INTO_CGROUP (v2) and writes "0" to each v1 tasks descriptor in the
 * child before execve (the child has one thread then). Reaching pids.max
 * does not end a call (fork just fails); the caller ends calls on exit or
 * timeout.
 *
 * Killing. v2 cgroup.kill (5.14); else freeze, SIGKILL every member, thaw;
 * without v2, SIGKILL every pid in cgroup.procs until it stays empty. That
 * last loop races with fork: a process can fork between the read and the
 * kill, so it repeats until empty or 5 s; the pids limit is what bounds
 * it. A pid is signalled through a pidfd only after /proc/<pid>/cgroup shows
 * it in the call, so a recycled pid is never hit.
 *
 * Statistics. memory peak: v2 memory.peak (5.19), else memory.current just
 * before the kill; v1 memory.max_usage_in_bytes. "limited": v2 memory.events
 * max, oom or oom_kill above 0; v1 memory.failcnt or oom_kill above 0. pids:
 * pids.peak where the kernel has it, pids.events max for "limited". killed
 * counts the distinct processes found in the call when it was ended.
 *
 * Several agents. Each agent holds a shared flock on every <own> directory
 * and an exclusive flock on each of its call directories. At open, a child
 * of calls/ whose lock can be taken belongs to no live agent (a crashed
 * run, or a directory nobody owns): it is killed and removed; a locked one
 * is left alone. At close, calls/ and agent/ are removed (and the agent
 * moves back to <own>) only by the agent that can take the exclusive lock
 * on <own>, i.e. the last one; the others leave them, and in v2 stay in
 * agent/. So agents sharing a cgroup do not kill each other's calls.
 *
 * Callers: a root is read-only after cw_cgroup_open, so calls may be made
 * and ended from several threads; it must outlive its calls, and every
 * call must be ended before cw_cgroup_close (a call left open keeps
 * calls/, and in v2 the agent in agent/).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/mountinfo.h"

#define NHIER		3
#define HF_V2		0x1u
#define HF_MEMORY	0x2u	/* v1 hierarchy with the memory controller */
#define HF_PIDS		0x4u	/* v1 hierarchy with the pids controller */

#define CTL_MEMORY	0x1u
#define CTL_PIDS	0x2u
#define CTL_CPU		0x4u

#define KILL_TIMEOUT_US		(5 * 1000000LL)
#define RMDIR_TIMEOUT_US	(2 * 1000000LL)
#define REMOVE_BUSY_US		(100 * 1000LL)
#define LOCK_TIMEOUT_US		(2 * 1000000LL)
#define FREEZE_TIMEOUT_US	(1000000LL)
#define MAX_DEPTH		16

enum kill_mode { KILL_CGROUP, KILL_FREEZE, KILL_SIGNAL };

struct hier {
	unsigned int flags;
	bool is_root;		/* <own> is the v2 root cgroup */
	char *rel;		/* <own> as /proc/self/cgroup names it */
	char *own;		/* <own> as a directory */
	char *calls;		/* <own>/calls */
	int own_fd;		/* LOCK_SH while the root is open */
	int calls_fd;
};

struct cw_cgroup_root {
	struct hier h[NHIER];
	size_t nh;
	int v2;			/* index in h, -1 if none */
	int mem;		/* hierarchy enforcing memory, -1 if none */
	int pids;		/* hierarchy enforcing pids, -1 if none */
	unsigned int v2_ctl;	/* controllers enabled in v2 calls/ */
	char *agent;		/* <own>/agent once the agent moved there */
	enum kill_mode kill;
	unsigned int stale_removed;
	json_t *notes;
};

struct cw_cgroup_call {
	const struct cw_cgroup_root *r;
	char *id;
	int fd[NHIER];		/* the call's directories, LOCK_EX held */
	char *rel[NHIER];	/* as /proc/<pid>/cgroup names them */
	int v1_procs[NHIER];
	size_t nv1;
	uint64_t memory_max;
	uint64_t pids_max;
	uint64_t cgid;
	uint64_t mem_seen;	/* memory.current before the kill */
	bool stopped;		/* killed and measured; only removal is left */
};

struct pidset {
	pid_t *v;
	size_t n, cap;
};

struct names {
	char **v;
	size_t n, cap;
};

static const struct {
	const char *name;
	unsigned int bit;
} ctls[] = {
	{ "memory", CTL_MEMORY },
	{ "pids", CTL_PIDS },
	{ "cpu", CTL_CPU },
};

static void note(struct cw_cgroup_root *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct cw_cgroup_root *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(r->notes, json_string(buf));
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int names_add(struct names *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(name);
	if (!s->v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

static void names_free(struct names *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int pidset_add(struct pidset *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == pid)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		pid_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = pid;
	return 0;
}

/* Reads a whole file below dirfd into b (NUL-terminated). */
static int read_at(int dirfd, const char *name, struct cw_buf *b)
{
	char chunk[4096];
	int fd, ret = 0;
	ssize_t n;

	b->len = 0;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cw_buf_append(b, "", 0);
	while (!ret) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		ret = cw_buf_append(b, chunk, (size_t)n);
	}
	close(fd);
	return ret;
}

static int write_at(int dirfd, const char *name, const char *s)
{
	int fd, ret;

	fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cw_write_all(fd, s, strlen(s));
	close(fd);
	return ret;
}

/* A single number ("max" reads as UINT64_MAX). */
static int read_u64_at(int dirfd, const char *name, uint64_t *v)
{
	struct cw_buf b = { 0 };
	char *end;
	int ret;

	ret = read_at(dirfd, name, &b);
	if (ret)
		goto out;
	if (!strncmp(b.data, "max", 3)) {
		*v = UINT64_MAX;
		goto out;
	}
	errno = 0;
	*v = strtoull(b.data, &end, 10);
	if (errno || end == b.data)
		ret = -EINVAL;
out:
	cw_buf_free(&b);
	return ret;
}

/* The value of "key N" in the text of a flat keyed file. */
static int parse_key(const char *text, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			*v = strtoull(line + klen + 1, NULL, 10);
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

/* The value of "key N" in a flat keyed file such as memory.events. */
static int read_key_at(int dirfd, const char *name, const char *key,
		       uint64_t *v)
{
	struct cw_buf b = { 0 };
	int ret;

	ret = read_at(dirfd, name, &b);
	if (!ret)
		ret = parse_key(b.data, key, v);
	cw_buf_free(&b);
	return ret;
}

/* The controllers named in a space-separated list file. */
static unsigned int read_ctls(int dirfd, const char *name)
{
	struct cw_buf b = { 0 };
	char *tok, *save = NULL;
	unsigned int set = 0;
	size_t i;

	if (read_at(dirfd, name, &b))
		goto out;
	for (tok = strtok_r(b.data, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		for (i = 0; i < CW_ARRAY_SIZE(ctls); i++)
			if (!strcmp(tok, ctls[i].name))
				set |= ctls[i].bit;
out:
	cw_buf_free(&b);
	return set;
}

static bool exists_at(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, 0) == 0;
}

/* Subdirectories of a cgroup directory: its child cgroups. */
static int list_subdirs(int fd, struct names *out)
{
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int dfd, ret = 0;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode))
				continue;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		ret = names_add(out, de->d_name);
		if (ret)
			break;
	}
	if (!ret && errno)
		ret = -errno;
	closedir(d);
	return ret;
}

/* flock with a bounded wait, so a stuck peer cannot hang the agent. */
static int lock_wait(int fd, int op, int64_t timeout_us)
{
	int64_t until = cw_mono_us() + timeout_us;

	for (;;) {
		if (!flock(fd, op | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (cw_mono_us() >= until)
			return -ETIMEDOUT;
		sleep_us(5000);
	}
}

static char *join(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/",
		     b) < 0)
		return NULL;
	return s;
}

/*
 * The directory of cgroup rel in the hierarchy h->flags names: the first
 * mount of that hierarchy whose root contains rel.
 */
static int find_mount(struct hier *h)
{
	char dir[PATH_MAX];
	int ret;

	ret = cw_mountinfo_find((h->flags & HF_V2) ? "cgroup2" : "cgroup",
				(h->flags & HF_V2) ? NULL :
				(h->flags & HF_MEMORY) ? "memory" : "pids",
				h->rel, dir, sizeof(dir), NULL, 0);
	if (ret)
		return ret == -EXDEV ? -ENOENT : ret;
	h->own = strdup(dir);
	return h->own ? 0 : -ENOMEM;
}

/* Reads /proc/self/cgroup: the v2 entry and the v1 memory/pids entries. */
static int find_hierarchies(struct hier *h, size_t *nh)
{
	struct cw_cgroup_line cl;
	char *line = NULL;
	unsigned int flags;
	size_t cap = 0, k = 0;
	int ret = 0;
	FILE *fp;

	fp = fopen("/proc/self/cgroup", "re");
	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0 && k < NHIER) {
		if (!cw_mountinfo_cgroup_line(line, &cl))
			continue;
		flags = 0;
		if (cw_mountinfo_cgroup_is_v2(&cl)) {
			flags = HF_V2;
		} else {
			if (cw_mountinfo_has(cl.controllers, "memory", ","))
				flags |= HF_MEMORY;
			if (cw_mountinfo_has(cl.controllers, "pids", ","))
				flags |= HF_PIDS;
		}
		if (!flags)
			continue;
		h[k].flags = flags;
		h[k].rel = strdup(cl.path);
		if (!h[k].rel) {
			ret = -ENOMEM;
			break;
		}
		k++;
	}
	free(line);
	fclose(fp);
	*nh = k;
	return ret;
}

static void hier_free(struct hier *h)
{
	if (h->calls_fd >= 0)
		close(h->calls_fd);
	if (h->own_fd >= 0)
		close(h->own_fd);
	free(h->rel);
	free(h->own);
	free(h->calls);
	memset(h, 0, sizeof(*h));
	h->own_fd = -1;
	h->calls_fd = -1;
}

static const char *hier_name(const struct hier *h)
{
	if (h->flags & HF_V2)
		return "cgroup v2";
	if ((h->flags & HF_MEMORY) && (h->flags & HF_PIDS))
		return "v1 memory,pids";
	return (h->flags & HF_MEMORY) ? "v1 memory" : "v1 pids";
}

/*
 * An agent already in <x>/agent beside <x>/calls (a second open in one
 * process, a re-exec, a forked child) uses <x>, instead of nesting.
 */
static void leave_agent_leaf(struct hier *h)
{
	size_t rl = strlen(h->rel), ol = strlen(h->own);
	char *calls;

	if (rl < 6 || strcmp(h->rel + rl - 6, "/agent") || ol < 7 ||
	    strcmp(h->own + ol - 6, "/agent"))
		return;
	if (asprintf(&calls, "%.*s/calls", (int)(ol - 6), h->own) < 0)
		return;
	if (!access(calls, F_OK)) {
		h->own[ol - 6] = '\0';
		h->rel[rl - 6] = '\0';
		if (!*h->rel)
			strcpy(h->rel, "/");
	}
	free(calls);
}

/* Opens and locks <own>, creates and opens <own>/calls. */
static int hier_setup(struct cw_cgroup_root *r, struct hier *h)
{
	const char *what = "find its mount";
	int ret;

	ret = find_mount(h);
	if (ret)
		goto fail;
	if (h->flags & HF_V2)
		leave_agent_leaf(h);
	what = "open";
	h->own_fd = open(h->own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->own_fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* Every v2 cgroup but the root has cgroup.type. */
	h->is_root = (h->flags & HF_V2) && !exists_at(h->own_fd, "cgroup.type");
	what = "lock";
	ret = lock_wait(h->own_fd, LOCK_SH, LOCK_TIMEOUT_US);
	if (ret)
		goto fail;
	what = "create calls/ in";
	h->calls = join(h->own, "calls");
	if (!h->calls) {
		ret = -ENOMEM;
		goto fail;
	}
	if (mkdirat(h->own_fd, "calls", 0755) && errno != EEXIST) {
		ret = -errno;
		goto fail;
	}
	h->calls_fd = openat(h->own_fd, "calls",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->calls_fd < 0) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	note(r, "%s: cannot %s %s: %s", hier_name(h), what,
	     h->own ? h->own : h->rel, strerror(-ret));
	return ret;
}

/* v2: the agent into <own>/agent, controllers down to calls/. */
static void v2_setup(struct cw_cgroup_root *r, struct hier *h)
{
	unsigned int avail, sub;
	char buf[32];
	size_t i;
	int ret;

	if (!h->is_root) {
		if (mkdirat(h->own_fd, "agent", 0755) && errno != EEXIST) {
			note(r, "cgroup v2: cannot create %s/agent: %s",
			     h->own, strerror(errno));
		} else {
			snprintf(buf, sizeof(buf), "%d", (int)getpid());
			ret = write_at(h->own_fd, "agent/cgroup.procs", buf);
			if (ret)
				note(r, "cgroup v2: cannot move the agent into "
				     "%s/agent: %s", h->own, strerror(-ret));
			else
				r->agent = join(h->own, "agent");
		}
	}
	avail = read_ctls(h->own_fd, "cgroup.controllers");
	sub = read_ctls(h->own_fd, "cgroup.subtree_control");
	for (i = 0; i < CW_ARRAY_SIZE(ctls); i++) {
		if (!(avail & ctls[i].bit) || (sub & ctls[i].bit))
			continue;
		if (h->is_root) {
			note(r, "cgroup v2: %s is not enabled in the root's "
			     "cgroup.subtree_control (the root is not written)",
			     ctls[i].name);
			continue;
		}
		snprintf(buf, sizeof(buf), "+%s", ctls[i].name);
		ret = write_at(h->own_fd, "cgroup.subtree_control", buf);
		if (ret)
			note(r, "cgroup v2: cannot enable %s in %s: %s%s",
			     ctls[i].name, h->own, strerror(-ret),
			     ret == -EBUSY ? " (other processes share the "
					     "agent's cgroup)" : "");
	}
	avail = read_ctls(h->calls_fd, "cgroup.controllers");
	for (i = 0; i < CW_ARRAY_SIZE(ctls); i++) {
		if (!(avail & ctls[i].bit))
			continue;
		snprintf(buf, sizeof(buf), "+%s", ctls[i].name);
		ret = write_at(h->calls_fd, "cgroup.subtree_control", buf);
		if (ret)
			note(r, "cgroup v2: cannot enable %s in %s: %s",
			     ctls[i].name, h->calls, strerror(-ret));
		else
			r->v2_ctl |= ctls[i].bit;
	}
}

static void call_free(struct cw_cgroup_call *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < NHIER; i++) {
		if (c->v1_procs[i] >= 0)
			close(c->v1_procs[i]);
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		free(c->rel[i]);
	}
	free(c->id);
	free(c);
}

static struct cw_cgroup_call *call_alloc(const struct cw_cgroup_root *r,
					 const char *id)
{
	struct cw_cgroup_call *c;
	size_t i;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->r = r;
	for (i = 0; i < NHIER; i++) {
		c->fd[i] = -1;
		c->v1_procs[i] = -1;
	}
	c->id = strdup(id);
	if (!c->id)
		goto fail;
	for (i = 0; i < r->nh; i++) {
		const char *rel = r->h[i].rel;

		if (asprintf(&c->rel[i], "%s/calls/%s",
			     strcmp(rel, "/") ? rel : "", id) < 0) {
			c->rel[i] = NULL;
			goto fail;
		}
	}
	return c;
fail:
	call_free(c);
	errno = ENOMEM;
	return NULL;
}

/* Is pid in cgroup rel (or below) of the hierarchy h? */
static bool pid_in(pid_t pid, const struct hier *h, const char *rel)
{
	char path[64], *line, *p, *save = NULL;
	struct cw_cgroup_line cl;
	struct cw_buf b = { 0 };
	size_t rlen = strlen(rel);
	bool in = false;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_at(AT_FDCWD, path, &b))
		goto out;
	for (line = strtok_r(b.data, "\n", &save); line && !in;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!cw_mountinfo_cgroup_line(line, &cl))
			continue;
		if (h->flags & HF_V2) {
			if (!cw_mountinfo_cgroup_is_v2(&cl))
				continue;
		} else if (!cw_mountinfo_has(cl.controllers,
					     (h->flags & HF_MEMORY) ? "memory" :
								      "pids",
					     ",")) {
			continue;
		}
		p = cl.path;
		in = !strncmp(p, rel, rlen) && (!p[rlen] || p[rlen] == '/');
	}
out:
	cw_buf_free(&b);
	return in;
}

/* SIGKILL pid only if it is still a member: the pidfd pins the process. */
static void kill_member(pid_t pid, const struct hier *h, const char *rel)
{
	int pfd;

	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0 && errno != ENOSYS)
		return;
	if (pid_in(pid, h, rel)) {
		if (pfd >= 0)
			syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
		else
			kill(pid, SIGKILL);
	}
	if (pfd >= 0)
		close(pfd);
}

/*
 * One pass over a call's subtree: records every pid in seen and, when
 * kill_them, kills it. Returns how many pids were listed, or -errno.
 */
static int procs_pass(const struct cw_cgroup_call *c, size_t hi, int fd,
		      const char *rel, struct pidset *seen, bool kill_them,
		      int depth)
{
	struct names subs = { 0 };
	struct cw_buf b = { 0 };
	char *line, *save = NULL, *sub_rel;
	int count = 0, ret, sub;
	size_t i;
	long pid;

	ret = read_at(fd, "cgroup.procs", &b);
	if (ret)
		goto out;
	for (line = strtok_r(b.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		pid = strtol(line, NULL, 10);
		if (pid <= 0)
			continue;
		count++;
		ret = pidset_add(seen, (pid_t)pid);
		if (ret)
			goto out;
		if (kill_them)
			kill_member((pid_t)pid, &c->r->h[hi], rel);
	}
	if (depth >= MAX_DEPTH)
		goto out;
	ret = list_subdirs(fd, &subs);
	if (ret)
		goto out;
	for (i = 0; i < subs.n; i++) {
		sub = openat(fd, subs.v[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		sub_rel = join(rel, subs.v[i]);
		ret = sub_rel ? procs_pass(c, hi, sub, sub_rel, seen,
					   kill_them, depth + 1) : -ENOMEM;
		free(sub_rel);
		close(sub);
		if (ret < 0)
			goto out;
		count += ret;
	}
	ret = 0;
out:
	names_free(&subs);
	cw_buf_free(&b);
	return ret < 0 ? ret : count;
}

/*
 * Waits until key in cgroup.events reads want. The file signals a change
 * with POLLPRI once it has been read through the same descriptor.
 */
static int wait_event(int fd, const char *key, uint64_t want, int64_t until)
{
	struct pollfd pfd = { .events = POLLPRI };
	char buf[256];
	uint64_t v;
	int64_t left;
	ssize_t n;
	int ret;

	pfd.fd = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (pfd.fd < 0)
		return -errno;
	for (;;) {
		n = pread(pfd.fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			ret = -errno;
			break;
		}
		buf[n] = '\0';
		ret = parse_key(buf, key, &v);
		if (ret || v == want)
			break;
		left = until - cw_mono_us();
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		/* Capped, in case a change slips between read and poll. */
		poll(&pfd, 1, left > 20000 ? 20 : (int)(left / 1000) + 1);
	}
	close(pfd.fd);
	return ret;
}

static int v2_kill(const struct cw_cgroup_call *c, struct pidset *seen,
		   int64_t until)
{
	size_t hi = (size_t)c->r->v2;
	int fd = c->fd[hi], ret;
	bool signal = c->r->kill != KILL_CGROUP;

	ret = procs_pass(c, hi, fd, c->rel[hi], seen, false, 0);
	if (ret < 0)
		return ret;
	if (!signal && write_at(fd, "cgroup.kill", "1"))
		signal = true;
	if (c->r->kill == KILL_FREEZE && !write_at(fd, "cgroup.freeze", "1")) {
		/* Frozen members cannot fork or exit, so each pid read stays
		 * the process it names; SIGKILL still reaches them. */
		wait_event(fd, "frozen", 1, cw_mono_us() + FREEZE_TIMEOUT_US);
		procs_pass(c, hi, fd, c->rel[hi], seen, true, 0);
		write_at(fd, "cgroup.freeze", "0");
	}
	for (;;) {
		ret = wait_event(fd, "populated", 0,
				 signal ? cw_mono_us() + 20000 : until);
		if (ret != -ETIMEDOUT || cw_mono_us() >= until)
			return ret;
		procs_pass(c, hi, fd, c->rel[hi], seen, true, 0);
	}
}

/* v1 has no kill file and no populated flag: kill and re-read. */
static int v1_kill(const struct cw_cgroup_call *c, size_t hi,
		   struct pidset *seen, int64_t until)
{
	long pause = 1000;
	int n;

	for (;;) {
		n = procs_pass(c, hi, c->fd[hi], c->rel[hi], seen, true, 0);
		if (n <= 0)
			return n;
		if (cw_mono_us() >= until)
			return -ETIMEDOUT;
		sleep_us(pause);
		if (pause < 20000)
			pause *= 2;
	}
}

/* Removes a cgroup directory and its child cgroups, bottom up. */
static int remove_tree(int parent, const char *name, int fd, int64_t until,
		       int depth)
{
	struct names subs = { 0 };
	int ret, sub;
	size_t i;

	if (depth < MAX_DEPTH && !list_subdirs(fd, &subs)) {
		for (i = 0; i < subs.n; i++) {
			sub = openat(fd, subs.v[i],
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub < 0)
				continue;
			remove_tree(fd, subs.v[i], sub, until, depth + 1);
			close(sub);
		}
	}
	names_free(&subs);
	/* An emptied cgroup can stay busy briefly while its last tasks are
	 * released. */
	for (;;) {
		if (!unlinkat(parent, name, AT_REMOVEDIR))
			return 0;
		ret = -errno;
		if (ret == -ENOENT)
			return 0;
		if (ret != -EBUSY || cw_mono_us() >= until)
			return ret;
		sleep_us(2000);
	}
}

static void read_stats(const struct cw_cgroup_call *c,
		       struct cw_cgroup_stats *st)
{
	const struct cw_cgroup_root *r = c->r;
	uint64_t v;
	int fd;

	st->memory_max = c->memory_max;
	st->pids_max = c->pids_max;
	if (r->mem >= 0 && c->fd[r->mem] >= 0) {
		fd = c->fd[r->mem];
		if (r->h[r->mem].flags & HF_V2) {
			if (read_u64_at(fd, "memory.peak", &st->memory_peak))
				st->memory_peak = c->mem_seen;
			if (!read_key_at(fd, "memory.events", "oom_kill", &v))
				st->oom_kills = v;
			if (!read_key_at(fd, "memory.events", "max", &v) &&
			    v > 0)
				st->memory_limited = true;
			if (!read_key_at(fd, "memory.events", "oom", &v) &&
			    v > 0)
				st->memory_limited = true;
		} else {
			if (!read_u64_at(fd, "memory.max_usage_in_bytes", &v))
				st->memory_peak = v;
			if (!read_key_at(fd, "memory.oom_control", "oom_kill",
					 &v))
				st->oom_kills = v;
			if (!read_u64_at(fd, "memory.failcnt", &v) && v > 0)
				st->memory_limited = true;
		}
		if (st->oom_kills > 0)
			st->memory_limited = true;
	}
	if (r->pids >= 0 && c->fd[r->pids] >= 0) {
		fd = c->fd[r->pids];
		if (!read_u64_at(fd, "pids.peak", &v))
			st->pids_peak = v;
		if (!read_key_at(fd, "pids.events", "max", &v) && v > 0)
			st->pids_limited = true;
	}
}

/* Kills every member, waits until they are gone, reads statistics. */
static int call_stop(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
		     struct cw_error *err)
{
	const struct cw_cgroup_root *r = c->r;
	struct pidset seen = { 0 };
	int64_t until = cw_mono_us() + KILL_TIMEOUT_US;
	int ret = 0, rc;
	size_t i;

	for (i = 0; i < NHIER; i++) {
		if (c->v1_procs[i] >= 0)
			close(c->v1_procs[i]);
		c->v1_procs[i] = -1;
	}
	c->nv1 = 0;
	if (r->mem >= 0 && c->fd[r->mem] >= 0 && (r->h[r->mem].flags & HF_V2))
		read_u64_at(c->fd[r->mem], "memory.current", &c->mem_seen);
	/* v2 first: cgroup.kill empties the v1 cgroups of the same call. */
	for (i = 0; i < r->nh; i++) {
		if (c->fd[i] < 0)
			continue;
		if (r->h[i].flags & HF_V2)
			rc = v2_kill(c, &seen, until);
		else
			rc = v1_kill(c, i, &seen, until);
		if (rc && !ret) {
			ret = rc;
			cw_error_set(err, "cgroup: processes survive in %s/%s: "
				     "%s", r->h[i].calls, c->id, strerror(-rc));
		}
	}
	if (st) {
		read_stats(c, st);
		st->killed = seen.n;
	}
	free(seen.v);
	c->stopped = true;
	return ret;
}

/* Stops c unless that was done, removes the directories, frees c. */
static int call_end(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
		    bool keep_v2, struct cw_error *err)
{
	const struct cw_cgroup_root *r = c->r;
	int ret = 0, rc;
	size_t i;

	if (!c->stopped)
		ret = call_stop(c, st, err);
	for (i = 0; i < r->nh; i++) {
		if (c->fd[i] < 0 || (keep_v2 && (r->h[i].flags & HF_V2)))
			continue;
		rc = remove_tree(r->h[i].calls_fd, c->id, c->fd[i],
				 cw_mono_us() + RMDIR_TIMEOUT_US, 0);
		if (rc && !ret) {
			ret = rc;
			cw_error_set(err, "cgroup: cannot remove %s/%s: %s",
				     r->h[i].calls, c->id, strerror(-rc));
		}
	}
	call_free(c);
	return ret;
}

/*
 * Takes over calls/<name> in every hierarchy if no live agent holds it.
 * NULL with errno EWOULDBLOCK when one does.
 */
static struct cw_cgroup_call *adopt(const struct cw_cgroup_root *r,
				    const char *name)
{
	struct cw_cgroup_call *c;
	int saved;
	size_t i;

	c = call_alloc(r, name);
	if (!c)
		return NULL;
	for (i = 0; i < r->nh; i++) {
		c->fd[i] = openat(r->h[i].calls_fd, name,
				  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->fd[i] < 0) {
			if (errno == ENOENT)
				continue;
			goto fail;
		}
		if (flock(c->fd[i], LOCK_EX | LOCK_NB))
			goto fail;
	}
	return c;
fail:
	saved = errno;
	call_free(c);
	errno = saved;
	return NULL;
}

static void remove_stale(struct cw_cgroup_root *r)
{
	struct cw_cgroup_call *c;
	struct names all = { 0 };
	struct cw_error e;
	size_t i;
	int ret;

	for (i = 0; i < r->nh; i++) {
		ret = list_subdirs(r->h[i].calls_fd, &all);
		if (ret)
			note(r, "%s: cannot list %s: %s", hier_name(&r->h[i]),
			     r->h[i].calls, strerror(-ret));
	}
	for (i = 0; i < all.n; i++) {
		c = adopt(r, all.v[i]);
		if (!c) {
			if (errno != EWOULDBLOCK)
				note(r, "stale call %s: %s", all.v[i],
				     strerror(errno));
			continue;
		}
		memset(&e, 0, sizeof(e));
		ret = call_end(c, NULL, false, &e);
		if (ret)
			note(r, "stale call %s: %s", all.v[i], e.text);
		else
			r->stale_removed++;
	}
	names_free(&all);
}

struct cw_cgroup_root *cw_cgroup_open(struct cw_error *err)
{
	struct hier found[NHIER];
	struct cw_cgroup_root *r;
	size_t n = 0, i;
	int ret, first = 0;

	r = calloc(1, sizeof(*r));
	if (!r) {
		cw_error_set(err, "cgroup: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	r->v2 = r->mem = r->pids = -1;
	for (i = 0; i < NHIER; i++) {
		r->h[i].own_fd = r->h[i].calls_fd = -1;
		memset(&found[i], 0, sizeof(found[i]));
		found[i].own_fd = found[i].calls_fd = -1;
	}
	r->notes = json_array();
	if (!r->notes) {
		ret = -ENOMEM;
		cw_error_set(err, "cgroup: out of memory");
		goto fail;
	}
	ret = find_hierarchies(found, &n);
	if (ret) {
		cw_error_set(err, "cgroup: cannot read /proc/self/cgroup: %s",
			     strerror(-ret));
		goto fail;
	}
	/* v2 first: it kills for all, so v1 passes find little left. */
	for (i = 0; i < n; i++) {
		if (!(found[i].flags & HF_V2))
			continue;
		ret = hier_setup(r, &found[i]);
		if (!ret) {
			r->v2 = (int)r->nh;
			r->h[r->nh++] = found[i];
			memset(&found[i], 0, sizeof(found[i]));
			found[i].own_fd = found[i].calls_fd = -1;
		} else {
			first = first ? first : ret;
			hier_free(&found[i]);
		}
	}
	/* Then v1 (the v2 entry is gone from found[] by now). */
	for (i = 0; i < n; i++) {
		if (!found[i].rel)
			continue;
		ret = hier_setup(r, &found[i]);
		if (!ret) {
			r->h[r->nh++] = found[i];
			memset(&found[i], 0, sizeof(found[i]));
			found[i].own_fd = found[i].calls_fd = -1;
		} else {
			first = first ? first : ret;
			hier_free(&found[i]);
		}
	}
	if (!r->nh) {
		/* ENOENT: nothing found; else why what was found is unusable. */
		ret = first ? first : -ENOENT;
		cw_error_set(err, "cgroup: no usable cgroup hierarchy (neither "
			     "cgroup v2 nor v1 memory or pids)%s%s",
			     json_array_size(r->notes) ? ": " : "",
			     json_array_size(r->notes) ?
				     json_string_value(json_array_get(r->notes,
								      0)) :
				     "");
		goto fail;
	}
	if (r->v2 >= 0) {
		v2_setup(r, &r->h[r->v2]);
		r->kill = exists_at(r->h[r->v2].calls_fd, "cgroup.kill") ?
				  KILL_CGROUP :
			  exists_at(r->h[r->v2].calls_fd, "cgroup.freeze") ?
				  KILL_FREEZE : KILL_SIGNAL;
	} else {
		r->kill = KILL_SIGNAL;
	}
	for (i = 0; i < r->nh; i++) {
		if (r->h[i].flags & HF_MEMORY)
			r->mem = (int)i;
		if (r->h[i].flags & HF_PIDS)
			r->pids = (int)i;
	}
	if (r->v2_ctl & CTL_MEMORY)
		r->mem = r->v2;
	if (r->v2_ctl & CTL_PIDS)
		r->pids = r->v2;
	if (r->mem < 0)
		note(r, "memory: no cgroup controller; only the rlimit applies");
	if (r->pids < 0)
		note(r, "pids: no cgroup controller; only the rlimit applies");
	remove_stale(r);
	return r;
fail:
	for (i = 0; i < n; i++)
		hier_free(&found[i]);
	json_decref(r->notes);
	free(r);
	errno = -ret;
	return NULL;
}

void cw_cgroup_close(struct cw_cgroup_root *r)
{
	struct hier *h;
	char buf[32];
	size_t i, k;

	if (!r)
		return;
	for (i = 0; i < r->nh; i++) {
		h = &r->h[i];
		/* Only the last agent sharing <own> tears down. */
		if (flock(h->own_fd, LOCK_EX | LOCK_NB))
			continue;
		if (unlinkat(h->own_fd, "calls", AT_REMOVEDIR))
			continue;
		if (!(h->flags & HF_V2) || h->is_root)
			continue;
		/* <own> can hold the agent again only without controllers. */
		for (k = CW_ARRAY_SIZE(ctls); k-- > 0;) {
			if (!(read_ctls(h->own_fd, "cgroup.subtree_control") &
			      ctls[k].bit))
				continue;
			snprintf(buf, sizeof(buf), "-%s", ctls[k].name);
			write_at(h->own_fd, "cgroup.subtree_control", buf);
		}
		if (r->agent) {
			snprintf(buf, sizeof(buf), "%d", (int)getpid());
			write_at(h->own_fd, "cgroup.procs", buf);
		}
		unlinkat(h->own_fd, "agent", AT_REMOVEDIR);
	}
	for (i = 0; i < r->nh; i++)
		hier_free(&r->h[i]);
	free(r->agent);
	json_decref(r->notes);
	free(r);
}

int cw_cgroup_calls_fd(const struct cw_cgroup_root *r)
{
	return r && r->v2 >= 0 ? r->h[r->v2].calls_fd : -1;
}

const char *cw_cgroup_calls_path(const struct cw_cgroup_root *r)
{
	return r && r->v2 >= 0 ? r->h[r->v2].calls : NULL;
}

static json_t *enforcer(const struct cw_cgroup_root *r, int i)
{
	if (i < 0)
		return json_null();
	return json_string((r->h[i].flags & HF_V2) ? "v2" : "v1");
}

json_t *cw_cgroup_describe(const struct cw_cgroup_root *r)
{
	static const char *const kill_names[] = {
		[KILL_CGROUP] = "cgroup.kill",
		[KILL_FREEZE] = "freeze",
		[KILL_SIGNAL] = "signal",
	};
	json_t *o, *calls, *ctl;
	size_t i;

	if (!r)
		return json_null();
	calls = json_object();
	ctl = json_array();
	for (i = 0; i < r->nh; i++)
		json_object_set_new(calls, (r->h[i].flags & HF_V2) ? "v2" :
					   (r->h[i].flags & HF_MEMORY) ?
					   "memory" : "pids",
				    json_string(r->h[i].calls));
	for (i = 0; i < r->nh; i++)
		if ((r->h[i].flags & HF_MEMORY) && (r->h[i].flags & HF_PIDS))
			json_object_set_new(calls, "pids",
					    json_string(r->h[i].calls));
	for (i = 0; i < CW_ARRAY_SIZE(ctls); i++)
		if (r->v2_ctl & ctls[i].bit)
			json_array_append_new(ctl, json_string(ctls[i].name));
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:I, s:O}",
		      "v2", r->v2 >= 0 ? json_string(r->h[r->v2].own) :
					 json_null(),
		      "agent", r->agent ? json_string(r->agent) : json_null(),
		      "calls", calls,
		      "memory", enforcer(r, r->mem),
		      "pids", enforcer(r, r->pids),
		      "cpu", "rlimit",
		      "kill", kill_names[r->kill],
		      "controllers", ctl,
		      "stale_removed", (json_int_t)r->stale_removed,
		      "notes", r->notes);
	return o;
}

/*
 * mkdir + open + exclusive lock, then check that the name still refers to
 * the locked directory: a peer agent's stale scan may lock and remove a
 * directory in the moment between mkdir and flock.
 */
static int make_call_dir(int calls_fd, const char *id)
{
	struct stat a, b;
	int64_t until = cw_mono_us() + LOCK_TIMEOUT_US;
	bool first = true;
	int fd;

	for (;; first = false) {
		if (cw_mono_us() >= until)
			return -ETIMEDOUT;
		if (!first)
			sleep_us(1000);
		if (mkdirat(calls_fd, id, 0755)) {
			if (errno == EEXIST && first)
				return -EEXIST;
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		fd = openat(calls_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		if (!flock(fd, LOCK_EX | LOCK_NB) && !fstat(fd, &a) &&
		    !fstatat(calls_fd, id, &b, AT_SYMLINK_NOFOLLOW) &&
		    a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
}

static int set_limits(struct cw_cgroup_call *c, struct cw_error *err)
{
	const struct cw_cgroup_root *r = c->r;
	const char *what = NULL;
	char buf[32];
	int fd, hi = -1, ret = 0;

	if (c->memory_max && r->mem >= 0) {
		hi = r->mem;
		fd = c->fd[hi];
		snprintf(buf, sizeof(buf), "%" PRIu64, c->memory_max);
		if (r->h[hi].flags & HF_V2) {
			what = "memory.max";
			ret = write_at(fd, what, buf);
			if (ret)
				goto out;
			/* Swap would let a call exceed the limit unseen. */
			what = "memory.swap.max";
			ret = write_at(fd, what, "0");
			if (ret && ret != -ENOENT)
				goto out;
			what = "memory.oom.group";
			ret = write_at(fd, what, "1");
			if (ret && ret != -ENOENT)
				goto out;
		} else {
			/* memsw (memory + swap) may not be below the memory
			 * limit, so that one first. */
			what = "memory.limit_in_bytes";
			ret = write_at(fd, what, buf);
			if (ret)
				goto out;
			what = "memory.memsw.limit_in_bytes";
			ret = write_at(fd, what, buf);
			if (ret && ret != -ENOENT)
				goto out;
		}
		ret = 0;
	}
	if (c->pids_max && r->pids >= 0) {
		hi = r->pids;
		snprintf(buf, sizeof(buf), "%" PRIu64, c->pids_max);
		what = "pids.max";
		ret = write_at(c->fd[hi], what, buf);
	}
out:
	if (ret)
		cw_error_set(err, "cgroup: cannot write %s in %s/%s: %s", what,
			     r->h[hi].calls, c->id, strerror(-ret));
	return ret;
}

struct cw_cgroup_call *cw_cgroup_call_new(struct cw_cgroup_root *r,
					  const char *id,
					  const struct cw_sandbox *sb,
					  struct cw_error *err)
{
	struct cw_cgroup_call *c = NULL;
	struct stat st;
	size_t i;
	int ret;

	if (!r || !id || !*id || strchr(id, '/') || !strcmp(id, ".") ||
	    !strcmp(id, "..") || strlen(id) > 200) {
		ret = -EINVAL;
		cw_error_set(err, "cgroup: invalid call id \"%s\"",
			     id ? id : "(null)");
		goto fail;
	}
	if (sb && (sb->resources.memory_mb > (int64_t)(INT64_MAX >> 20) ||
		   sb->resources.memory_mb < 0 || sb->resources.pids < 0)) {
		ret = -EINVAL;
		cw_error_set(err, "cgroup: resource limit out of range");
		goto fail;
	}
	c = call_alloc(r, id);
	if (!c) {
		ret = -ENOMEM;
		cw_error_set(err, "cgroup: out of memory");
		goto fail;
	}
	if (sb) {
		c->memory_max = (uint64_t)sb->resources.memory_mb << 20;
		c->pids_max = (uint64_t)sb->resources.pids;
	}
	for (i = 0; i < r->nh; i++) {
		ret = make_call_dir(r->h[i].calls_fd, id);
		if (ret < 0) {
			cw_error_set(err, "cgroup: cannot create %s/%s: %s",
				     r->h[i].calls, id, strerror(-ret));
			goto fail;
		}
		c->fd[i] = ret;
	}
	if (r->mem < 0)
		c->memory_max = 0;
	if (r->pids < 0)
		c->pids_max = 0;
	ret = set_limits(c, err);
	if (ret)
		goto fail;
	for (i = 0; i < r->nh; i++) {
		if (r->h[i].flags & HF_V2)
			continue;
		/* "tasks", not cgroup.procs: the child writes "0" before it
		 * can have a second thread, and moving only the writing
		 * thread spares the kernel the write lock on every thread
		 * group (an RCU grace period, 5-20 ms here, when it has not
		 * been taken lately). */
		ret = openat(c->fd[i], "tasks", O_WRONLY | O_CLOEXEC);
		if (ret < 0) {
			ret = -errno;
			cw_error_set(err, "cgroup: cannot open %s/%s/"
				     "tasks: %s", r->h[i].calls, id,
				     strerror(-ret));
			goto fail;
		}
		c->v1_procs[c->nv1++] = ret;
	}
	if (r->v2 >= 0) {
		if (fstat(c->fd[r->v2], &st)) {
			ret = -errno;
			cw_error_set(err, "cgroup: cannot stat %s/%s: %s",
				     r->h[r->v2].calls, id, strerror(-ret));
			goto fail;
		}
		/* kernfs: a cgroup's inode number is its id on 64-bit. */
		c->cgid = (uint64_t)st.st_ino;
	}
	return c;
fail:
	if (c) {
		/* Undo only what this call created: those fds hold locks. */
		for (i = 0; i < r->nh; i++)
			if (c->fd[i] >= 0)
				unlinkat(r->h[i].calls_fd, id, AT_REMOVEDIR);
		call_free(c);
	}
	errno = -ret;
	return NULL;
}

bool cw_cgroup_call_fits(const struct cw_cgroup_call *c,
			 const struct cw_sandbox *sb)
{
	uint64_t mem = 0, pids = 0;

	if (!c || c->stopped)
		return false;
	if (sb && c->r->mem >= 0 && sb->resources.memory_mb > 0 &&
	    sb->resources.memory_mb <= (int64_t)(INT64_MAX >> 20))
		mem = (uint64_t)sb->resources.memory_mb << 20;
	if (sb && c->r->pids >= 0 && sb->resources.pids > 0)
		pids = (uint64_t)sb->resources.pids;
	return mem == c->memory_max && pids == c->pids_max;
}

const char *cw_cgroup_call_name(const struct cw_cgroup_call *c)
{
	return c ? c->id : NULL;
}

int cw_cgroup_call_fd(const struct cw_cgroup_call *c)
{
	return c && c->r->v2 >= 0 ? c->fd[c->r->v2] : -1;
}

size_t cw_cgroup_call_v1_procs(const struct cw_cgroup_call *c,
			       const int **fds)
{
	*fds = c ? c->v1_procs : NULL;
	return c ? c->nv1 : 0;
}

uint64_t cw_cgroup_call_id(const struct cw_cgroup_call *c)
{
	return c ? c->cgid : 0;
}

int cw_cgroup_call_nprocs(const struct cw_cgroup_call *c)
{
	struct pidset seen = { 0 };
	int n, max = 0;
	size_t i;

	if (!c)
		return 0;
	for (i = 0; i < c->r->nh; i++) {
		if (c->fd[i] < 0)
			continue;
		seen.n = 0;
		n = procs_pass(c, i, c->fd[i], c->rel[i], &seen, false, 0);
		if (n < 0) {
			max = n;
			break;
		}
		if (n > max)
			max = n;
	}
	free(seen.v);
	return max;
}

int cw_cgroup_call_stop(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
			struct cw_error *err)
{
	if (st)
		memset(st, 0, sizeof(*st));
	if (!c)
		return -EINVAL;
	if (c->stopped)
		return 0;
	return call_stop(c, st, err);
}

int cw_cgroup_call_end_keep_v2(struct cw_cgroup_call *c,
			       struct cw_cgroup_stats *st,
			       struct cw_error *err)
{
	if (st)
		memset(st, 0, sizeof(*st));
	if (!c)
		return -EINVAL;
	return call_end(c, st, true, err);
}

int cw_cgroup_remove_call(struct cw_cgroup_root *r, const char *id)
{
	int64_t until = cw_mono_us() + REMOVE_BUSY_US;
	size_t i;

	for (i = 0; i < r->nh; i++) {
		if (!(r->h[i].flags & HF_V2))
			continue;
		/* Busy for a moment while its last tasks are released. */
		while (unlinkat(r->h[i].calls_fd, id, AT_REMOVEDIR) < 0) {
			if (errno == ENOENT)
				break;
			if (errno != EBUSY || cw_mono_us() >= until)
				return -errno;
			sleep_us(1000);
		}
	}
	return 0;
}

int cw_cgroup_call_end(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
		       struct cw_error *err)
{
	if (st)
		memset(st, 0, sizeof(*st));
	if (!c)
		return 0;
	return call_end(c, st, false, err);
}
