// SPDX-License-Identifier: Apache-2.0
/*
 * The namespace pool: its thread keeps one slot ready for the rules last
 * asked for and stops the slots handed back to it, those first. What a
 * slot was made for is held by reference (rules, ruleset), so "made for
 * these" is a pointer comparison that a reload cannot fool.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/ns_pool.h"
#include "engine/layers.h"
#include "kernel/netscan.h"
#include "lib/bgwork.h"

struct cw_ns_pool {
	struct cw_ns_forker *forker;
	const char *calls;		/* the calls' v2 cgroups; may be NULL */
	struct cw_bgwork w;
	/* Guarded by w's lock. */
	struct cw_ns_slot *ready;
	struct cw_rules *want_ru;	/* prepare one for these (references) */
	struct cw_ll_ref *want_src;
	struct cw_ns_slot *retired;
	struct cw_ns_pool_stats st;
};

static struct cw_ll_ref *ll_get(struct cw_ll_ref *r)
{
	if (r)
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

static void slot_end(struct cw_ns_slot *s)
{
	if (!s)
		return;
	cw_ns_holder_stop(&s->h);
	cw_ns_mounts_free(&s->m);
	cw_landlock_free(s->ll);
	cw_ll_put(s->src);
	cw_rules_put(s->ru);
	free(s);
}

/* The rules' ruleset with its rules on the agent's /proc, and on
 * /dev/shm where the call has a tmpfs of its own there, moved to the
 * slot's: from the descriptors the ruleset keeps where it could keep
 * them, else built again from the holder's root. */
static struct cw_landlock *moved_ruleset(const struct cw_ns_slot *s,
					 const struct cw_sandbox *sb,
					 struct cw_error *err)
{
	struct cw_landlock *ll;
	int proc = -1, shm = -1;

	if (!cw_landlock_can_move(s->src->ll))
		return cw_landlock_build_at(sb, cw_landlock_abi(), s->h.root,
					    err);
	if (cw_landlock_names_proc(s->src->ll))
		proc = openat(s->h.root, "proc",
			      O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cw_landlock_names_proc(s->src->ll) && proc < 0) {
		cw_error_set(err, "namespaces: the call's /proc: %s",
			     strerror(errno));
		return NULL;
	}
	/* Not there (no such directory): its rules stay as they are. */
	if (s->m.shm && cw_landlock_names_shm(s->src->ll))
		shm = openat(s->h.root, CW_NS_SHM + 1,
			     O_PATH | O_DIRECTORY | O_CLOEXEC);
	ll = cw_landlock_moved(s->src->ll, proc, shm, err);
	if (proc >= 0)
		close(proc);
	if (shm >= 0)
		close(shm);
	return ll;
}

/* ---- unix sockets outside the calls ---------------------------------- */

struct inodes {
	unsigned long *v;
	size_t n, cap;
};

static void inode_add(struct inodes *in, unsigned long ino)
{
	unsigned long *v;

	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;

		v = realloc(in->v, cap * sizeof(*v));
		if (!v)
			return;	/* not counted as the calls': masked */
		in->v = v;
		in->cap = cap;
	}
	in->v[in->n++] = ino;
}

static bool inode_held(const struct inodes *in, unsigned long ino)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		if (in->v[i] == ino)
			return true;
	return false;
}

/* The sockets the processes of pid hold open. */
static void fd_sockets(const char *pid, struct inodes *in)
{
	char dir[64], link[64];
	struct dirent *de;
	unsigned long ino;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) == 1)
			inode_add(in, ino);
	}
	closedir(d);
}

/* Every socket the running calls' processes hold: theirs stay reachable
 * from other calls (a server one call started, for the next). */
static void calls_sockets(const char *calls, struct inodes *in)
{
	char path[PATH_MAX], pid[32];
	struct dirent *de;
	DIR *d;
	FILE *f;

	d = calls ? opendir(calls) : NULL;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", calls,
			 de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%31s", pid) == 1)
			fd_sockets(pid, in);
		fclose(f);
	}
	closedir(d);
}

static bool unix_allowed(const struct cw_strv *allow, const char *path)
{
	size_t i, n;

	for (i = 0; i < allow->n; i++) {
		n = strlen(allow->v[i]);
		if (n && allow->v[i][n - 1] == '/' ?
			    cw_path_under(path, allow->v[i]) :
			    !strcmp(path, allow->v[i]))
			return true;
	}
	return false;
}

struct mask_ctx {
	const struct cw_sandbox *sb;
	const struct inodes *own;
	struct cw_ns_mounts *m;
	int rc;
};

static void on_unix(void *ctx, const struct cw_netscan_unix *u)
{
	struct mask_ctx *mc = ctx;
	size_t i;

	/* a path bound relative to another process's directory cannot be
	 * named here; the calls' own and the policy's stay */
	if (u->path[0] != '/' || inode_held(mc->own, u->inode) ||
	    unix_allowed(&mc->sb->network.unix_sockets, u->path))
		return;
	for (i = 0; i < mc->m->nmask; i++)
		if (!strcmp(mc->m->mask[i], u->path))
			return;
	if (cw_ns_mounts_mask(mc->m, u->path) < 0)
		mc->rc = -ENOMEM;
}

/* Adds to m every unix socket outside the calls sb does not allow. */
static int outside_sockets(const char *calls, const struct cw_sandbox *sb,
			   struct cw_ns_mounts *m)
{
	struct inodes own = { 0 };
	struct mask_ctx mc = { sb, &own, m, 0 };
	int rc;

	calls_sockets(calls, &own);
	rc = cw_netscan_unix(on_unix, &mc);
	free(own.v);
	return rc < 0 ? rc : mc.rc;
}

/* A slot older than this finds the sockets outside the calls again when
 * taken, and masks those that came since. */
#define SLOT_FRESH_US 1000000

/* At take: what came since the slot was made. The socket that cannot be
 * masked now fails the call rather than leave it reachable. */
static int refresh_masks(struct cw_ns_pool *p, struct cw_ns_slot *s,
			 struct cw_error *err)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(s->ru->policy);
	struct cw_ns_mounts now = { 0 };
	size_t i, j;
	int rc;

	if (cw_mono_us() - s->made_us < SLOT_FRESH_US)
		return 0;
	rc = outside_sockets(p->calls, sb, &now);
	for (i = 0; rc >= 0 && i < now.nmask; i++) {
		for (j = 0; j < s->m.nmask; j++)
			if (!strcmp(now.mask[i], s->m.mask[j]))
				break;
		if (j < s->m.nmask)
			continue;
		rc = cw_ns_holder_mask(&s->h, now.mask[i]);
		if (rc < 0)
			cw_error_set(err, "namespaces: masking the unix socket %s: %s",
				     now.mask[i], strerror(-rc));
		else if (rc == 0 && cw_ns_mounts_mask(&s->m, now.mask[i]) < 0)
			rc = -ENOMEM;
	}
	cw_ns_mounts_free(&now);
	return rc < 0 ? rc : 0;
}

static struct cw_ns_slot *slot_make(struct cw_ns_pool *p, struct cw_rules *ru,
				    struct cw_ll_ref *src,
				    struct cw_error *err)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(ru->policy);
	struct cw_ns_slot *s;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s) {
		cw_error_set(err, "out of memory");
		return NULL;
	}
	s->h.pid = 0;
	s->h.pidfd = s->h.sock = s->h.root = s->h.userns = -1;
	s->ru = cw_rules_get(ru);
	s->src = ll_get(src);
	s->made_us = cw_mono_us();
	rc = cw_ns_mounts_plan(sb, &s->m, err);
	s->m.userns = cw_engine_probe()->item[CW_FEAT_CALL_USERNS].ok;
	if (rc == 0) {
		rc = outside_sockets(p->calls, sb, &s->m);
		if (rc < 0)
			cw_error_set(err, "namespaces: /proc/net/unix: %s",
				     strerror(-rc));
	}
	if (rc == 0)
		rc = cw_ns_holder_start(p->forker, &s->m, &s->h, err);
	if (rc == 0 && src && (cw_landlock_names_proc(src->ll) ||
			       (s->m.shm && cw_landlock_names_shm(src->ll)))) {
		s->ll = moved_ruleset(s, sb, err);
		if (!s->ll)
			rc = -EIO;
	}
	if (rc < 0) {
		slot_end(s);
		return NULL;
	}
	return s;
}

static bool fits(const struct cw_ns_slot *s, const struct cw_rules *ru,
		 const struct cw_ll_ref *src)
{
	return s->ru == ru && s->src == src &&
	       !(s->ll && cw_landlock_stale(s->ll));
}

static bool has_work(void *ctx)
{
	const struct cw_ns_pool *p = ctx;

	return p->retired || (p->want_ru && !p->ready);
}

/* Under the lock: forgets what is wanted, into *ru and *src for the
 * caller to drop outside it. */
static void clear_want(struct cw_ns_pool *p, struct cw_rules **ru,
		       struct cw_ll_ref **src)
{
	*ru = p->want_ru;
	*src = p->want_src;
	p->want_ru = NULL;
	p->want_src = NULL;
}

/* One round of the thread, entered and left under the lock. */
static void pool_round(void *ctx)
{
	struct cw_ns_pool *p = ctx;
	struct cw_ns_slot *list, *s = NULL;
	struct cw_rules *ru = NULL, *gone_ru = NULL;
	struct cw_ll_ref *src = NULL, *gone_src = NULL;
	struct cw_error err;

	list = p->retired;
	p->retired = NULL;
	if (p->want_ru && !p->ready) {
		ru = cw_rules_get(p->want_ru);
		src = ll_get(p->want_src);
	}
	cw_bgwork_unlock(&p->w);

	/* Stops first: a slot's end frees what a new one takes. */
	while (list) {
		struct cw_ns_slot *next = list->next;

		slot_end(list);
		list = next;
	}
	if (ru) {
		memset(&err, 0, sizeof(err));
		s = slot_make(p, ru, src, &err);
	}

	cw_bgwork_lock(&p->w);
	if (ru && !s) {
		/* Not tried again before the next take asks. */
		p->st.failed++;
		if (p->want_ru == ru)
			clear_want(p, &gone_ru, &gone_src);
	}
	if (s) {
		p->st.prepared++;
		if (!p->ready && fits(s, p->want_ru, p->want_src)) {
			p->ready = s;
			s = NULL;
		} else {
			p->st.discarded++;
			if (!p->ready && p->want_ru == ru)
				clear_want(p, &gone_ru, &gone_src);
		}
	}
	cw_bgwork_unlock(&p->w);
	/* Made for rules no longer wanted. */
	slot_end(s);
	cw_ll_put(src);
	cw_rules_put(ru);
	cw_ll_put(gone_src);
	cw_rules_put(gone_ru);
	cw_bgwork_lock(&p->w);
}

/* Under the lock: what the thread prepares next. The references replaced
 * go back to the caller, to drop outside the lock. */
static void set_want(struct cw_ns_pool *p, struct cw_rules *ru,
		     struct cw_ll_ref *src, struct cw_rules **old_ru,
		     struct cw_ll_ref **old_src)
{
	clear_want(p, old_ru, old_src);
	p->want_ru = cw_rules_get(ru);
	p->want_src = ll_get(src);
}

struct cw_ns_pool *cw_ns_pool_open(struct cw_rules *ru, const char *calls,
				   struct cw_error *err)
{
	struct cw_ll_ref *src, *old_src;
	struct cw_rules *old_ru;
	struct cw_ns_pool *p;
	bool ok;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p) {
		cw_error_set(err, "out of memory");
		return NULL;
	}
	p->calls = calls;
	p->forker = cw_ns_forker_start(err);
	if (!p->forker) {
		free(p);
		return NULL;
	}
	src = cw_rules_landlock(ru, cw_policy_sandbox(ru->policy), &ok, NULL);
	set_want(p, ru, src, &old_ru, &old_src);
	cw_ll_put(src);
	ret = cw_bgwork_start(&p->w, has_work, pool_round, p);
	if (ret) {
		cw_rules_put(p->want_ru);
		cw_ll_put(p->want_src);
		cw_ns_forker_stop(p->forker);
		free(p);
		cw_error_set(err, "pthread_create: %s", strerror(ret));
		return NULL;
	}
	return p;
}

void cw_ns_pool_close(struct cw_ns_pool *p)
{
	struct cw_ns_slot *s, *next;

	if (!p)
		return;
	cw_bgwork_stop(&p->w);
	for (s = p->retired; s; s = next) {
		next = s->next;
		slot_end(s);
	}
	slot_end(p->ready);
	cw_rules_put(p->want_ru);
	cw_ll_put(p->want_src);
	cw_ns_forker_stop(p->forker);
	free(p);
}

struct cw_ns_slot *cw_ns_pool_take(struct cw_ns_pool *p, struct cw_rules *ru,
				   struct cw_ll_ref *src,
				   struct cw_error *err)
{
	struct cw_ns_slot *s = NULL, *unfit = NULL;
	struct cw_ll_ref *old_src;
	struct cw_rules *old_ru;

	cw_bgwork_lock(&p->w);
	if (p->ready && fits(p->ready, ru, src)) {
		s = p->ready;
		p->st.taken++;
	} else {
		unfit = p->ready;
		if (unfit)
			p->st.discarded++;
		p->st.made_inline++;
	}
	p->ready = NULL;
	set_want(p, ru, src, &old_ru, &old_src);
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
	cw_ll_put(old_src);
	cw_rules_put(old_ru);
	/* Made for other rules (a reload, a rebuilt ruleset): off the path. */
	cw_ns_pool_give(p, unfit);
	if (s && refresh_masks(p, s, err) < 0) {
		cw_ns_pool_give(p, s);
		return NULL;
	}
	return s ? s : slot_make(p, ru, src, err);
}

void cw_ns_pool_give(struct cw_ns_pool *p, struct cw_ns_slot *s)
{
	if (!s)
		return;
	cw_bgwork_lock(&p->w);
	s->next = p->retired;
	p->retired = s;
	cw_bgwork_kick(&p->w);
	cw_bgwork_unlock(&p->w);
}

const struct cw_landlock *cw_ns_slot_landlock(const struct cw_ns_slot *s)
{
	return s->ll ? s->ll : s->src ? s->src->ll : NULL;
}

void cw_ns_pool_settle(struct cw_ns_pool *p, struct cw_ns_pool_stats *st)
{
	cw_bgwork_settle(&p->w);
	if (st)
		*st = p->st;
	cw_bgwork_unlock(&p->w);
}
