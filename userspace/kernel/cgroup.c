// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup: where per-call cgroups live. It owns finding the hierarchies
 * (cgroup v2, v1 memory and pids), setting up <own>/agent and <own>/calls,
 * enabling controllers, removing the calls of agents that are gone, and
 * tearing down at close. One call's cgroups (creation, limits, the kill,
 * statistics, removal) are cgroup_call.c's; the file access both use is
 * cgroup_fs.c's.
 *
 * Layout. Hierarchies come from /proc/self/mountinfo (fstype cgroup2, or
 * cgroup with "memory" or "pids" among the super options) and the agent's
 * place in each from /proc/self/cgroup; <own> is that place. Everything is
 * created beneath <own> (beside it when it is shared, below), and no file
 * of a root cgroup is ever written.
 *
 *   v2:  <own>/agent        the agent process moves here (no internal
 *                           processes: <own> may then enable controllers)
 *        <own>/calls        controllers enabled for the calls; the attach
 *                           point for cgroup-BPF programs
 *        <own>/calls/<id>   one call
 *   v1:  <own>/calls/<id>   in the memory and pids hierarchies, when those
 *                           controllers are v1 (hybrid machines)
 *
 * A v2 cgroup the agent shares with other processes (a template's start
 * command, a shell) cannot enable controllers for its children: the
 * kernel's no-internal-processes rule answers EBUSY. The agent then makes
 * a cgroup of its own, <A>/cmdwarden, beneath the nearest ancestor <A>
 * that delegates those controllers to its children, and moves there; the
 * agent record names both places (cgroup.moved_from). The last agent to
 * close removes <A>/cmdwarden and moves back to where it started.
 *
 * When <own> is the v2 root (no cgroup.type file) the agent stays there
 * (the root is exempt from the no-internal-processes rule) and only the
 * controllers the root already delegates are used. An agent found in
 * <x>/agent next to <x>/calls (a second open in one process, a re-exec, a
 * forked child) takes <x> as <own> instead of nesting.
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
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_fs.h"
#include "kernel/cgroup_internal.h"
#include "kernel/mountinfo.h"

#define CTL_MEMORY	0x1u
#define CTL_PIDS	0x2u
#define CTL_CPU		0x4u

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

/* The controllers named in a space-separated list file. */
static unsigned int read_ctls(int dirfd, const char *name)
{
	struct cw_buf b = { 0 };
	char *tok, *save = NULL;
	unsigned int set = 0;
	size_t i;

	if (cw_cgfs_read(dirfd, name, &b))
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
	h->is_root = (h->flags & HF_V2) &&
		     !cw_cgfs_exists(h->own_fd, "cgroup.type");
	what = "lock";
	ret = cw_cgfs_lock_wait(h->own_fd, LOCK_SH, LOCK_TIMEOUT_US);
	if (ret)
		goto fail;
	what = "create calls/ in";
	h->calls = cw_cgfs_join(h->own, "calls");
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

/* Moves the agent into <own>/agent: 0, or -errno with a note. */
static int enter_agent_leaf(struct cw_cgroup_root *r, struct hier *h)
{
	char buf[32];
	int ret;

	if (mkdirat(h->own_fd, "agent", 0755) && errno != EEXIST) {
		ret = -errno;
		note(r, "cgroup v2: cannot create %s/agent: %s", h->own,
		     strerror(-ret));
		return ret;
	}
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	ret = cw_cgfs_write(h->own_fd, "agent/cgroup.procs", buf);
	if (ret) {
		note(r, "cgroup v2: cannot move the agent into %s/agent: %s",
		     h->own, strerror(-ret));
		return ret;
	}
	free(r->agent);
	r->agent = cw_cgfs_join(h->own, "agent");
	return 0;
}

/* Whether processes other than the agent's are in <own> itself. */
static bool own_is_shared(const struct hier *h)
{
	struct cw_buf b = { 0 };
	bool shared;

	if (cw_cgfs_read(h->own_fd, "cgroup.procs", &b))
		return false;
	shared = b.data && strspn(b.data, " \n") != b.len;
	cw_buf_free(&b);
	return shared;
}

/*
 * The agent shares <own>, which therefore cannot pass the controllers in
 * want to its children: a cgroup of its own beneath the nearest ancestor
 * whose children get them, <A>/cmdwarden, becomes <own>. The agent moves
 * into its agent/ leaf there; the calls/ left in the old <own> is removed
 * unless another agent uses it. 0 when moved; otherwise h is unchanged.
 */
static int move_to_own_cgroup(struct cw_cgroup_root *r, struct hier *h,
			      unsigned int want)
{
	size_t top_len = strlen(h->own) - (strcmp(h->rel, "/") ?
					   strlen(h->rel) : 0);
	struct hier n = { .flags = h->flags, .own_fd = -1, .calls_fd = -1 };
	char *dir = strdup(h->own), *cut;
	int ret = -ENOENT, fd;

	if (!dir)
		return -ENOMEM;
	while ((cut = strrchr(dir, '/')) && (size_t)(cut - dir) >= top_len &&
	       cut > dir) {
		*cut = '\0';
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if ((read_ctls(fd, "cgroup.subtree_control") & want) != want) {
			close(fd);
			continue;
		}
		if (mkdirat(fd, "cmdwarden", 0755) && errno != EEXIST) {
			note(r, "cgroup v2: cannot create %s/cmdwarden: %s", dir,
			     strerror(errno));
			close(fd);
			continue;
		}
		close(fd);
		/* hier_setup finds the directory from rel, as at open */
		if (asprintf(&n.rel, "%.*s/cmdwarden",
			     (int)(strlen(dir) - top_len), dir + top_len) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (!strcmp(n.rel, h->rel)) {
			hier_free(&n);
			n.flags = h->flags;
			continue;
		}
		ret = hier_setup(r, &n);
		if (!ret)
			ret = enter_agent_leaf(r, &n);
		if (!ret)
			break;
		hier_free(&n);
		n.flags = h->flags;
	}
	free(dir);
	if (ret) {
		hier_free(&n);
		return ret;
	}
	/* The old <own>: its calls/ and agent/ go unless another agent's. */
	if (!flock(h->own_fd, LOCK_EX | LOCK_NB)) {
		unlinkat(h->own_fd, "calls", AT_REMOVEDIR);
		unlinkat(h->own_fd, "agent", AT_REMOVEDIR);
	}
	r->moved_from = h->own;
	h->own = NULL;
	hier_free(h);
	*h = n;
	return 0;
}

/* v2: the agent into <own>/agent, controllers down to calls/. */
static void v2_setup(struct cw_cgroup_root *r, struct hier *h)
{
	unsigned int avail, sub, want;
	char buf[32];
	size_t i;
	int ret;

	if (!h->is_root && !enter_agent_leaf(r, h)) {
		avail = read_ctls(h->own_fd, "cgroup.controllers");
		sub = read_ctls(h->own_fd, "cgroup.subtree_control");
		want = avail & ~sub & (CTL_MEMORY | CTL_PIDS | CTL_CPU);
		if (want && own_is_shared(h)) {
			char *from = strdup(h->own);

			ret = move_to_own_cgroup(r, h, want);
			if (!ret)
				note(r, "cgroup v2: other processes share %s, "
				     "so the agent moved to %s, a cgroup of "
				     "its own", from ? from : "", h->own);
			else
				note(r, "cgroup v2: other processes share %s, "
				     "and no ancestor lets the agent make a "
				     "cgroup of its own with the controllers "
				     "it shares: %s", from ? from : "",
				     strerror(-ret));
			free(from);
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
		ret = cw_cgfs_write(h->own_fd, "cgroup.subtree_control", buf);
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
		ret = cw_cgfs_write(h->calls_fd, "cgroup.subtree_control", buf);
		if (ret)
			note(r, "cgroup v2: cannot enable %s in %s: %s",
			     ctls[i].name, h->calls, strerror(-ret));
		else
			r->v2_ctl |= ctls[i].bit;
	}
}
static void remove_stale(struct cw_cgroup_root *r)
{
	struct cw_cgfs_names all = { 0 };
	struct cw_error e;
	size_t i;
	int ret;

	for (i = 0; i < r->nh; i++) {
		ret = cw_cgfs_subdirs(r->h[i].calls_fd, &all);
		if (ret)
			note(r, "%s: cannot list %s: %s", hier_name(&r->h[i]),
			     r->h[i].calls, strerror(-ret));
	}
	for (i = 0; i < all.n; i++) {
		memset(&e, 0, sizeof(e));
		ret = cw_cgroup_end_stale(r, all.v[i], &e);
		if (ret < 0)
			note(r, "stale call %s: %s", all.v[i], e.text);
		else if (ret == 0)
			r->stale_removed++;
	}
	cw_cgfs_names_free(&all);
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
		int calls_fd = r->h[r->v2].calls_fd;

		v2_setup(r, &r->h[r->v2]);
		r->kill = cw_cgfs_exists(calls_fd, "cgroup.kill") ?
				  KILL_CGROUP :
			  cw_cgfs_exists(calls_fd, "cgroup.freeze") ?
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
			cw_cgfs_write(h->own_fd, "cgroup.subtree_control", buf);
		}
		snprintf(buf, sizeof(buf), "%d", (int)getpid());
		if (r->moved_from) {
			/* back where it started; the cgroup made for it goes */
			int fd = open(r->moved_from,
				      O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (fd >= 0 && !cw_cgfs_write(fd, "cgroup.procs", buf) &&
			    !unlinkat(h->own_fd, "agent", AT_REMOVEDIR))
				rmdir(h->own);
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (r->agent)
			cw_cgfs_write(h->own_fd, "cgroup.procs", buf);
		unlinkat(h->own_fd, "agent", AT_REMOVEDIR);
	}
	for (i = 0; i < r->nh; i++)
		hier_free(&r->h[i]);
	free(r->agent);
	free(r->moved_from);
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
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:I, s:O}",
		      "v2", r->v2 >= 0 ? json_string(r->h[r->v2].own) :
					 json_null(),
		      "agent", r->agent ? json_string(r->agent) : json_null(),
		      "moved_from", r->moved_from ? json_string(r->moved_from) :
						    json_null(),
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
