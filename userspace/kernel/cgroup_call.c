// SPDX-License-Identifier: Apache-2.0
/*
 * One call's cgroups: creating calls/<id> in every hierarchy with its
 * limits, the descriptors the launcher enters it by, counting, killing
 * and measuring its processes, and removing the directories. Where the
 * hierarchies are and how calls/ is set up is cgroup.c's.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_fs.h"
#include "kernel/cgroup_internal.h"
#include "kernel/mountinfo.h"

#define KILL_TIMEOUT_US		(5 * 1000000LL)
#define RMDIR_TIMEOUT_US	(2 * 1000000LL)
#define REMOVE_BUSY_US		(100 * 1000LL)
#define FREEZE_TIMEOUT_US	(1000000LL)
/* How deep below a call its child cgroups are searched. */
#define MAX_DEPTH		16
/* The longest id a call's directory may have. */
#define CALL_ID_MAX		200

struct pidset {
	pid_t *v;
	size_t n, cap;
};

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

int cw_cgroup_pid_invocation(pid_t pid, char *inv, size_t len)
{
	char path[64], line[4096];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "0::", 3))
			continue;
		p = strstr(line, "/calls/");
		if (!p)
			break;
		/* The last /calls/ component: the call's own cgroup. */
		while ((end = strstr(p + 1, "/calls/")))
			p = end;
		p += 7;
		end = p + strcspn(p, "/\n");
		if (end > p && (size_t)(end - p) < len) {
			memcpy(inv, p, (size_t)(end - p));
			inv[end - p] = '\0';
			ret = 1;
		}
		break;
	}
	if (ferror(f))
		ret = -ESRCH;
	fclose(f);
	return ret;
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
	if (cw_cgfs_read(AT_FDCWD, path, &b))
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
	struct cw_cgfs_names subs = { 0 };
	struct cw_buf b = { 0 };
	char *line, *save = NULL, *sub_rel;
	int count = 0, ret, sub;
	size_t i;
	long pid;

	ret = cw_cgfs_read(fd, "cgroup.procs", &b);
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
	ret = cw_cgfs_subdirs(fd, &subs);
	if (ret)
		goto out;
	for (i = 0; i < subs.n; i++) {
		sub = openat(fd, subs.v[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		sub_rel = cw_cgfs_join(rel, subs.v[i]);
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
	cw_cgfs_names_free(&subs);
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
		ret = cw_cgfs_parse_key(buf, key, &v);
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
	if (!signal && cw_cgfs_write(fd, "cgroup.kill", "1"))
		signal = true;
	if (c->r->kill == KILL_FREEZE &&
	    !cw_cgfs_write(fd, "cgroup.freeze", "1")) {
		/* Frozen members cannot fork or exit, so each pid read stays
		 * the process it names; SIGKILL still reaches them. */
		wait_event(fd, "frozen", 1, cw_mono_us() + FREEZE_TIMEOUT_US);
		procs_pass(c, hi, fd, c->rel[hi], seen, true, 0);
		cw_cgfs_write(fd, "cgroup.freeze", "0");
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
		cw_cgfs_sleep_us(pause);
		if (pause < 20000)
			pause *= 2;
	}
}

/* Removes a cgroup directory and its child cgroups, bottom up. */
static int remove_tree(int parent, const char *name, int fd, int64_t until,
		       int depth)
{
	struct cw_cgfs_names subs = { 0 };
	int ret, sub;
	size_t i;

	if (depth < MAX_DEPTH && !cw_cgfs_subdirs(fd, &subs)) {
		for (i = 0; i < subs.n; i++) {
			sub = openat(fd, subs.v[i],
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub < 0)
				continue;
			remove_tree(fd, subs.v[i], sub, until, depth + 1);
			close(sub);
		}
	}
	cw_cgfs_names_free(&subs);
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
		cw_cgfs_sleep_us(2000);
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
			if (cw_cgfs_read_u64(fd, "memory.peak",
					     &st->memory_peak))
				st->memory_peak = c->mem_seen;
			if (!cw_cgfs_read_key(fd, "memory.events", "oom_kill",
					      &v))
				st->oom_kills = v;
			if (!cw_cgfs_read_key(fd, "memory.events", "max", &v) &&
			    v > 0)
				st->memory_limited = true;
			if (!cw_cgfs_read_key(fd, "memory.events", "oom", &v) &&
			    v > 0)
				st->memory_limited = true;
		} else {
			if (!cw_cgfs_read_u64(fd, "memory.max_usage_in_bytes",
					      &v))
				st->memory_peak = v;
			if (!cw_cgfs_read_key(fd, "memory.oom_control",
					      "oom_kill", &v))
				st->oom_kills = v;
			if (!cw_cgfs_read_u64(fd, "memory.failcnt", &v) &&
			    v > 0)
				st->memory_limited = true;
		}
		if (st->oom_kills > 0)
			st->memory_limited = true;
	}
	if (r->pids >= 0 && c->fd[r->pids] >= 0) {
		fd = c->fd[r->pids];
		if (!cw_cgfs_read_u64(fd, "pids.peak", &v))
			st->pids_peak = v;
		if (!cw_cgfs_read_key(fd, "pids.events", "max", &v) && v > 0)
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
		cw_cgfs_read_u64(c->fd[r->mem], "memory.current", &c->mem_seen);
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

int cw_cgroup_end_stale(const struct cw_cgroup_root *r, const char *name,
			struct cw_error *err)
{
	struct cw_cgroup_call *c = adopt(r, name);
	int ret;

	if (!c) {
		if (errno == EWOULDBLOCK)
			return 1;
		ret = -errno;
		cw_error_set(err, "%s", strerror(-ret));
		return ret;
	}
	return call_end(c, NULL, false, err);
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
			cw_cgfs_sleep_us(1000);
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
			ret = cw_cgfs_write(fd, what, buf);
			if (ret)
				goto out;
			/* Swap would let a call exceed the limit unseen. */
			what = "memory.swap.max";
			ret = cw_cgfs_write(fd, what, "0");
			if (ret && ret != -ENOENT)
				goto out;
			what = "memory.oom.group";
			ret = cw_cgfs_write(fd, what, "1");
			if (ret && ret != -ENOENT)
				goto out;
		} else {
			/* memsw (memory + swap) may not be below the memory
			 * limit, so that one first. */
			what = "memory.limit_in_bytes";
			ret = cw_cgfs_write(fd, what, buf);
			if (ret)
				goto out;
			what = "memory.memsw.limit_in_bytes";
			ret = cw_cgfs_write(fd, what, buf);
			if (ret && ret != -ENOENT)
				goto out;
		}
		ret = 0;
	}
	if (c->pids_max && r->pids >= 0) {
		hi = r->pids;
		snprintf(buf, sizeof(buf), "%" PRIu64, c->pids_max);
		what = "pids.max";
		ret = cw_cgfs_write(c->fd[hi], what, buf);
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
	    !strcmp(id, "..") || strlen(id) > CALL_ID_MAX) {
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
			cw_cgfs_sleep_us(1000);
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

