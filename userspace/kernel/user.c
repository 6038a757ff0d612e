// SPDX-License-Identifier: Apache-2.0
/*
 * The account lookup: getpwnam_r / getpwuid_r and getgrouplist for the
 * sandbox's user, the rules for which account a command may run as, the
 * lookup in a short-lived child and the cache of its last result.
 *
 * Everything here runs in the parent before the launch; the launcher's
 * child only applies the uid, gid and groups found (spawn.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/user.h"

/* getpw*_r's buffer: its size when sysconf names none, and the most it
 * grows to on ERANGE. */
#define PW_BUF_DEFAULT	16384
#define PW_BUF_MAX	(1u << 20)
/* Supplementary groups: the first guess, and the most accepted. */
#define GROUPS_FIRST	16
#define GROUPS_MAX	65536

static int lookup_pw(bool by_name, const char *name, uid_t uid,
		     struct cw_user *t)
{
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t len = sz > 0 ? (size_t)sz : PW_BUF_DEFAULT;
	struct passwd *res = NULL;
	char *buf;
	int rc;

	for (;;) {
		buf = realloc(t->pwbuf, len);
		if (!buf)
			return -ENOMEM;
		t->pwbuf = buf;
		if (by_name)
			rc = getpwnam_r(name, &t->pw, buf, len, &res);
		else
			rc = getpwuid_r(uid, &t->pw, buf, len, &res);
		if (rc == ERANGE && len < PW_BUF_MAX) {
			len *= 2;
			continue;
		}
		if (rc == EINTR)
			continue;
		break;
	}
	/* "Not found" comes back as 0 or as one of these. */
	if (!res && (rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF ||
		     rc == EPERM))
		return -ENOENT;
	if (!res)
		return -rc;
	t->found = true;
	return 0;
}

static int load_groups(struct cw_user *t)
{
	int n = GROUPS_FIRST;
	gid_t *g;

	for (;;) {
		int want = n;

		g = realloc(t->groups, (size_t)n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		t->groups = g;
		if (getgrouplist(t->pw.pw_name, t->pw.pw_gid, g, &n) >= 0)
			break;
		/* n now holds the count needed */
		if (n <= want)
			n = want * 2;
		if (n > GROUPS_MAX)
			return -E2BIG;
	}
	t->ngroups = (size_t)n;
	return 0;
}

static int resolve_user(const struct cw_sandbox *sb, struct cw_user *t,
			struct cw_error *err)
{
	const char *name = sb->user && sb->user[0] ? sb->user : "user";
	uid_t self = geteuid();
	int rc;

	if (self != 0) {
		/* Without privileges the command can only run as the agent. */
		if (sb->user_explicit) {
			rc = lookup_pw(true, name, 0, t);
			if (rc == -ENOENT) {
				cw_error_set(err, "user \"%s\" does not exist",
					     name);
				return rc;
			}
			if (rc < 0) {
				cw_error_set(err, "looking up user \"%s\" "
					     "failed", name);
				return rc;
			}
			if (t->pw.pw_uid != self) {
				cw_error_set(err, "cannot run as user \"%s\": "
					     "the agent runs as uid %u, not "
					     "root", name, (unsigned)self);
				return -EPERM;
			}
		} else {
			rc = lookup_pw(false, NULL, self, t);
			if (rc < 0 && rc != -ENOENT) {
				cw_error_set(err, "looking up uid %u failed",
					     (unsigned)self);
				return rc;
			}
		}
		t->uid = self;
		t->gid = getegid();
		t->change_ids = false;
		goto names;
	}

	rc = lookup_pw(true, name, 0, t);
	if (rc == -ENOENT && !sb->user_explicit) {
		name = "nobody";
		rc = lookup_pw(true, name, 0, t);
		if (rc == -ENOENT) {
			cw_error_set(err, "neither user \"%s\" nor \"nobody\" "
				     "exists", sb->user ? sb->user : "user");
			return rc;
		}
	}
	if (rc == -ENOENT) {
		cw_error_set(err, "user \"%s\" does not exist", name);
		return rc;
	}
	if (rc < 0) {
		cw_error_set(err, "looking up user \"%s\" failed", name);
		return rc;
	}
	if (t->pw.pw_uid == 0 && !sb->user_explicit) {
		cw_error_set(err, "user \"%s\" is uid 0: commands run as root "
			     "only when the policy names that user", name);
		return -EPERM;
	}
	rc = load_groups(t);
	if (rc < 0) {
		cw_error_set(err, "supplementary groups of \"%s\": %s", name,
			     rc == -ENOMEM ? "out of memory" : "too many");
		return rc;
	}
	t->uid = t->pw.pw_uid;
	t->gid = t->pw.pw_gid;
	t->change_ids = true;
names:
	if (t->found) {
		t->user = t->pw.pw_name;
		t->home = t->pw.pw_dir && t->pw.pw_dir[0] ? t->pw.pw_dir : "/";
		t->login_shell = t->pw.pw_shell && t->pw.pw_shell[0] ?
				 t->pw.pw_shell : NULL;
	} else {
		snprintf(t->uidname, sizeof(t->uidname), "%u",
			 (unsigned)t->uid);
		t->user = t->uidname;
		t->home = "/";
		t->login_shell = NULL;
	}
	return 0;
}

/* What a lookup in the child sends back: the result of resolve_user. */
struct resolved {
	int rc;
	struct cw_error err;
	uid_t uid;
	gid_t gid;
	bool change_ids;
	bool has_shell;
	char user[CW_USER_NAME_MAX];
	char home[PATH_MAX];
	char shell[PATH_MAX];
	uint32_t ngroups;
	/* then ngroups gid_t */
};

/* Points t's names at copies of these, each the size of its field. */
static void copy_names(struct cw_user *t, const char *user, const char *home,
		       const char *shell, bool has_shell)
{
	memcpy(t->cuser, user, sizeof(t->cuser));
	memcpy(t->chome, home, sizeof(t->chome));
	memcpy(t->cshell, shell, sizeof(t->cshell));
	t->user = t->cuser;
	t->home = t->chome;
	t->login_shell = has_shell ? t->cshell : NULL;
}

static void __attribute__((noreturn))
resolve_child(const struct cw_sandbox *sb, int fd)
{
	struct resolved *res = calloc(1, sizeof(*res));
	struct cw_user t;

	if (!res)
		_exit(1);
	memset(&t, 0, sizeof(t));
	res->rc = resolve_user(sb, &t, &res->err);
	if (res->rc == 0) {
		res->uid = t.uid;
		res->gid = t.gid;
		res->change_ids = t.change_ids;
		res->has_shell = t.login_shell != NULL;
		res->ngroups = (uint32_t)t.ngroups;
		if (strlen(t.user) >= sizeof(res->user) ||
		    strlen(t.home) >= sizeof(res->home) ||
		    (t.login_shell &&
		     strlen(t.login_shell) >= sizeof(res->shell))) {
			res->rc = -ENAMETOOLONG;
			cw_error_set(&res->err, "the name, home or shell of "
				     "user \"%s\" is too long", t.user);
		} else {
			strcpy(res->user, t.user);
			strcpy(res->home, t.home);
			strcpy(res->shell, t.login_shell ? t.login_shell : "");
		}
	}
	if (res->rc < 0)
		res->ngroups = 0;
	_exit(cw_write_all(fd, res, sizeof(*res)) < 0 ||
	      cw_write_all(fd, t.groups, res->ngroups * sizeof(gid_t)) < 0);
}

/*
 * resolve_user in a short-lived child. NSS loads the modules nsswitch.conf
 * names (libnss_systemd on Debian, about 0.3 MiB) into the process that
 * asks and never unloads them, for lookups the cache below then answers;
 * in a child they never reach the agent. glibc resets its malloc, loader
 * and NSS locks in a forked child, so the lookup is safe there although
 * the agent has threads; signals stay blocked, so no agent handler runs in
 * the child. Without a child, the lookup runs here.
 */
static int resolve_user_isolated(const struct cw_sandbox *sb,
				 struct cw_user *t, struct cw_error *err)
{
	struct resolved *res;
	sigset_t all, old;
	int fds[2], status, rc;
	pid_t pid;

	res = calloc(1, sizeof(*res));
	if (!res || pipe2(fds, O_CLOEXEC) < 0) {
		free(res);
		return resolve_user(sb, t, err);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		resolve_child(sb, fds[1]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		free(res);
		return resolve_user(sb, t, err);
	}
	rc = cw_read_all(fds[0], res, sizeof(*res));
	if (rc == 0 && res->rc == 0 && res->ngroups > GROUPS_MAX)
		rc = -EIO;
	if (rc == 0 && res->rc == 0 && res->ngroups) {
		t->groups = malloc(res->ngroups * sizeof(gid_t));
		rc = t->groups ? cw_read_all(fds[0], t->groups,
					     res->ngroups * sizeof(gid_t)) :
				 -ENOMEM;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		rc = -EIO;
	if (rc < 0) {
		cw_error_set(err, "looking up the user in a child process "
			     "failed");
	} else if (res->rc < 0) {
		rc = res->rc;
		if (err)
			*err = res->err;
	} else {
		t->ngroups = res->ngroups;
		t->uid = res->uid;
		t->gid = res->gid;
		t->change_ids = res->change_ids;
		copy_names(t, res->user, res->home, res->shell,
			   res->has_shell);
	}
	free(res);
	return rc;
}

/*
 * Account lookups go through NSS and cost about 100 us a call, a large part
 * of a short command's overhead. The last resolution is reused while the
 * request is the same and /etc/passwd and /etc/group are unchanged (same
 * inode, size and change time); failures are never cached.
 */
struct id_cache {
	pthread_mutex_t lock;
	bool valid;
	char name[CW_USER_NAME_MAX];
	bool explicit_user;
	uid_t euid;
	struct stat passwd, group;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	bool change_ids;
	char user[CW_USER_NAME_MAX];
	char home[PATH_MAX];
	char shell[PATH_MAX];
	bool has_shell;
};

static struct id_cache idc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int cw_user_resolve(const struct cw_sandbox *sb, struct cw_user *t,
		    struct cw_error *err)
{
	const char *name = sb->user && sb->user[0] ? sb->user : "user";
	struct stat pw, gr;
	bool files = stat("/etc/passwd", &pw) == 0 &&
		     stat("/etc/group", &gr) == 0 &&
		     strlen(name) < CW_USER_NAME_MAX;
	uid_t euid = geteuid();
	gid_t *g;
	int rc;

	memset(t, 0, sizeof(*t));
	pthread_mutex_lock(&idc.lock);
	if (files && idc.valid && idc.euid == euid &&
	    idc.explicit_user == sb->user_explicit &&
	    strcmp(idc.name, name) == 0 && same_file(&idc.passwd, &pw) &&
	    same_file(&idc.group, &gr)) {
		g = idc.ngroups ? malloc(idc.ngroups * sizeof(*g)) : NULL;
		if (!idc.ngroups || g) {
			if (g)
				memcpy(g, idc.groups, idc.ngroups * sizeof(*g));
			t->groups = g;
			t->ngroups = idc.ngroups;
			t->uid = idc.uid;
			t->gid = idc.gid;
			t->change_ids = idc.change_ids;
			copy_names(t, idc.user, idc.home, idc.shell,
				   idc.has_shell);
			pthread_mutex_unlock(&idc.lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&idc.lock);

	rc = resolve_user_isolated(sb, t, err);
	if (rc < 0 || !files)
		return rc;
	g = t->ngroups ? malloc(t->ngroups * sizeof(*g)) : NULL;
	if (t->ngroups && !g)
		return 0; /* no cache this time; the lookup itself worked */
	if (g)
		memcpy(g, t->groups, t->ngroups * sizeof(*g));
	pthread_mutex_lock(&idc.lock);
	free(idc.groups);
	idc.groups = g;
	idc.ngroups = t->ngroups;
	idc.uid = t->uid;
	idc.gid = t->gid;
	idc.change_ids = t->change_ids;
	idc.euid = euid;
	idc.explicit_user = sb->user_explicit;
	idc.passwd = pw;
	idc.group = gr;
	snprintf(idc.name, sizeof(idc.name), "%s", name);
	snprintf(idc.user, sizeof(idc.user), "%s", t->user);
	snprintf(idc.home, sizeof(idc.home), "%s", t->home);
	idc.has_shell = t->login_shell != NULL;
	snprintf(idc.shell, sizeof(idc.shell), "%s",
		 t->login_shell ? t->login_shell : "");
	idc.valid = true;
	pthread_mutex_unlock(&idc.lock);
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return path && path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *cw_user_cwd(const struct cw_sandbox *sb, const char *asked,
			const struct cw_user *u)
{
	if (asked)
		return asked;
	if (sb->cwd_explicit && sb->cwd)
		return sb->cwd;
	if (is_dir(sb->cwd))
		return sb->cwd;
	if (is_dir(u->home))
		return u->home;
	return "/";
}

void cw_user_free(struct cw_user *t)
{
	free(t->groups);
	free(t->pwbuf);
}
