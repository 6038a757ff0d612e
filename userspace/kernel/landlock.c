// SPDX-License-Identifier: Apache-2.0
/*
 * Landlock: sandbox.filesystem, and where the running ABI allows TCP ports
 * and scoping, as one ruleset. It is built in the agent (paths resolved,
 * directories listed, rules added) and kept as a descriptor; the child
 * applies it with one landlock_restrict_self(2), after no_new_privs and
 * right before seccomp.
 *
 * What each ABI enforces. The ruleset handles every right the target ABI
 * knows (the lower of the running kernel's and the one asked for), so
 * anything not granted below is refused with EACCES:
 *   ABI 1  files: execute, read, write, list directories, create (regular
 *          files, directories, symlinks, fifos, sockets, devices), remove.
 *          Renaming or linking into another directory is always refused
 *          (EXDEV), even inside one writable tree.
 *   ABI 2  + refer: renaming and linking across directories, allowed where
 *          both sides are writable and the file gains no right by moving.
 *   ABI 3  + truncate: truncate(2), ftruncate(2) and open(O_TRUNC) need a
 *          write path; below ABI 3 only the permission bits guard
 *          truncate(2) of a file the command can reach.
 *   ABI 4  + TCP ports, only when sandbox.network.default is "deny" (see
 *          below).
 *   ABI 5  + ioctl on devices opened by the command: only beneath write
 *          paths and on the terminal devices granted below.
 *   ABI 6  + scoping: the command cannot send signals to, nor connect to
 *          abstract unix sockets of, processes outside its own Landlock
 *          domain: the agent, other calls, the rest of the machine.
 *   ABI 7  audit logging of denials: not used.
 * The E2B production kernel (6.1) has ABI 2. Descriptors the command
 * inherits (its standard streams) are never restricted.
 *
 * Rights by list; a rule on a directory covers everything beneath it, a
 * rule on a file gets the file rights only:
 *   read   read files, list directories.
 *   write  read, plus write, create, remove, rename and link (ABI 2),
 *          truncate (ABI 3), device ioctl (ABI 5).
 *   exec   execute, plus read (a program and its libraries must be read).
 * execve needs execute on the program and on its ELF interpreter
 * (/lib64/ld-linux-x86-64.so.2, under /usr on merged-/usr systems), so
 * "exec" must cover the dynamic loader, as "/usr" does. A copied binary in a path that
 * is not in "exec" fails with EACCES (cp /bin/sh /tmp/x; /tmp/x). Limits:
 * Landlock does not check mmap(PROT_EXEC), so a readable ELF still runs
 * through an executable loader (ld.so /tmp/x), and interpreters (sh, python)
 * run scripts from any readable path: "exec" stops running copied or
 * downloaded binaries directly, not code execution as such.
 *
 * Paths are resolved when the ruleset is built, one component at a time.
 * A symlink in a read, write or exec path is followed only when root or the
 * agent's own user owns it (a command could otherwise point the next
 * build's rule at another tree); /bin -> usr/bin is followed. A path that
 * does not exist, or leads through an untrusted symlink, is skipped and
 * named in describe() ("missing", "untrusted_symlinks"). Deny paths follow
 * every symlink, since that only narrows.
 *
 * deny. Landlock can only grant, so a deny entry inside a granted tree is
 * realised by granting the tree's other entries instead: each directory on
 * the way from the tree down to the deny entry is listed, and every entry
 * of it but the one leading to the deny entry gets the tree's rights; the
 * directories on the way themselves get only "list directory". With read
 * ["/"] and deny ["/root", "/etc/shadow"], every entry of / but root and
 * etc, and every entry of /etc but shadow, is readable. A deny entry equal
 * to or above a granted path removes that path; deny also wins over the
 * devices granted below. A deny entry that does not exist yet is left out
 * the same way, so creating it later gives no access. Limits:
 *  - The directories are listed at build time. An entry created later
 *    directly in a directory on the way (in / or /etc above) gets no right
 *    at all: it cannot be opened (fail closed). A file replaced by rename
 *    (editors, package managers, useradd rewriting /etc/passwd) is such a
 *    new entry: build the ruleset again after such a change
 *    (cw_landlock_stale() says when; it also notices a granted path
 *    replaced by a new directory, which the old rule no longer covers).
 *  - The directories on the way stay listable, so the names inside a
 *    denied directory can be listed, though nothing in it can be opened;
 *    Landlock never restricts stat(2) anyway.
 *  - In a writable tree, the directories on the way cannot get new
 *    entries: files are created in their subdirectories only.
 *  - deny names a path, not a file: another hard link to the same file
 *    inside a granted tree stays reachable.
 *  - Symlinks among the listed entries get no rule: what they point to is
 *    covered, or not, where it lies.
 *  - At most 4096 rules; leaving a deny entry out of a very large
 *    directory can exceed that, and the build then fails saying so.
 *
 * Always granted, unless denied, because shells and ordinary tools need
 * them whatever the lists say (redirections to /dev/null, terminals, random
 * numbers, pseudo-terminals for script(1) and the like):
 *   /dev/null, /dev/zero, /dev/full      read, write
 *   /dev/random, /dev/urandom           read
 *   /dev/tty, /dev/ptmx, /dev/pts       read, write, device ioctl
 * Not /dev/shm, which every process on the machine shares: add it to
 * "write" for POSIX shared memory and semaphores (Python multiprocessing).
 * /proc follows the read list; /proc/self cannot be granted on its own, as
 * a rule would name the agent's own /proc entry.
 *
 * TCP ports (ABI 4, and only with network.default "deny"; addresses are
 * the eBPF layer's, and UDP is not covered by Landlock):
 *   connect  to the ports of the network.allow rules, to any address. A
 *            rule without a port, a range of more than 1024 ports, or more
 *            than 1024 ports in all leave connect to the eBPF layer alone;
 *            describe() says so.
 *   bind     port 0 only: the kernel picks an ephemeral port, as clients
 *            that bind before connecting do. Listening on a chosen port
 *            is refused, as a default-deny network takes no connections.
 * With network.default "allow", no network right is handled.
 */
#if defined(__has_include)
#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#endif
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/landlock.h"

/* Where POSIX shared memory lives; a call may have a tmpfs of its own
 * there (kernel/namespaces.h), whose root its rules must name. */
#define SHM_DIR "/dev/shm"

/* path is SHM_DIR or beneath it. */
static bool on_shm(const char *path)
{
	size_t n = sizeof(SHM_DIR) - 1;

	return path && !strncmp(path, SHM_DIR, n) &&
	       (path[n] == '\0' || path[n] == '/');
}

/* The installed headers may be older than the ABI this file knows. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
/* ABI 1 */
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#endif
/* ABI 2 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 4 */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6 */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* enum landlock_rule_type; enumerators cannot be tested with #ifndef. */
#define RULE_PATH_BENEATH 1
#define RULE_NET_PORT 2

/* Own copies of the uapi structs at their ABI 6 size. */
struct ll_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net; /* ABI 4 */
	__u64 scoped;		  /* ABI 6 */
};

struct ll_path_beneath_attr {
	__u64 allowed_access;
	__s32 parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	__u64 allowed_access;
	__u64 port;
};

#define ABI_KNOWN 7
#define MAX_RULES 4096
#define MAX_PORTS 1024
#define MAX_LINKS 40
/* TCP ports 0-65535; a port set has one bit each. */
#define NPORTS 65536

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_WRITE                                                           \
	(FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |                          \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |    \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |        \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |        \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |      \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |            \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FS_EXEC (FS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
/* The rights a rule on a non-directory may carry (else EINVAL). */
#define FS_FILE_ONLY                                                       \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |       \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |        \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define FS_RW (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE)
#define FS_TTY (FS_RW | LANDLOCK_ACCESS_FS_IOCTL_DEV | \
		LANDLOCK_ACCESS_FS_READ_DIR)

/* A granted path, a directory listed at build time, or a list entry that
 * was missing: when one changes, the ruleset no longer says what the
 * policy says. Rules hold inodes, so a granted path that was replaced is
 * no longer covered; a listed directory also must not gain or lose
 * entries (its mtime). */
struct stamp {
	char *path;
	bool exists;
	bool listed;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

/*
 * The rules again, for a call with a /proc of its own (kernel/namespaces.h):
 * that procfs is another filesystem, which the rules on the agent's /proc
 * do not cover, so the call's init builds the ruleset once more with them
 * moved onto its /proc. A rule holds its own O_PATH descriptor, or the
 * path beneath /proc to open in the call's; the call's other rules are
 * the same inodes as ever.
 */
struct kept_rule {
	int fd;			/* -1 for a rule beneath /proc */
	char *proc_rel;		/* beneath /proc: "" for /proc itself */
	char *shm_rel;		/* beneath /dev/shm ("" for itself), which a
				 * call may have a tmpfs of its own on; the
				 * descriptor is kept too */
	__u64 rights;
	int type;
	struct ll_net_port_attr port;
};

struct recipe {
	struct ll_ruleset_attr attr;
	size_t attr_size;
	struct kept_rule *v;
	size_t n, cap;
	dev_t proc_dev;		/* the agent's /proc; 0 when none */
	size_t nfds, maxfds;	/* descriptors kept, and the most it may */
	bool broken;		/* a rule could not be kept */
};

struct cw_landlock {
	int fd;
	bool names_proc;
	bool names_shm;
	json_t *desc;
	struct stamp *stamps;
	size_t nstamps;
	struct recipe recipe;
};

/* Bit i of a right mask is named fs_names[i]. */
static const char *const fs_names[] = {
	"execute",   "write_file", "read_file",  "read_dir",
	"remove_dir", "remove_file", "make_char", "make_dir",
	"make_reg",  "make_sock",  "make_fifo",  "make_block",
	"make_sym",  "refer",      "truncate",   "ioctl_dev",
};

static const struct {
	const char *path;
	__u64 rights;
} always_granted[] = {
	{ "/dev/null", FS_RW },
	{ "/dev/zero", FS_RW },
	{ "/dev/full", FS_RW },
	{ "/dev/random", LANDLOCK_ACCESS_FS_READ_FILE },
	{ "/dev/urandom", LANDLOCK_ACCESS_FS_READ_FILE },
	{ "/dev/tty", FS_TTY },
	{ "/dev/ptmx", FS_TTY },
	{ "/dev/pts", FS_TTY },
};

struct build {
	int root;		/* where paths start; -1: the agent's / */
	bool names_proc;	/* a rule is on the agent's /proc */
	bool names_shm;		/* a rule is at or beneath /dev/shm */
	int rs;			/* the ruleset being filled */
	__u64 fs;		/* handled filesystem rights */
	size_t nrules;
	char **deny;		/* canonical deny paths */
	size_t ndeny;
	char where[64];		/* "filesystem.read[0]", for errors */
	struct cw_error *err;
	json_t *missing;
	json_t *untrusted;
	json_t *split;		/* directories listed to leave out deny entries */
	json_t *notes;
	struct stamp *stamps;
	size_t nstamps, capstamps;
	struct recipe recipe;
};

static int ll_create_ruleset(const struct ll_ruleset_attr *attr, size_t size,
			     __u32 flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static int ll_add_rule(int fd, int type, const void *attr)
{
	return (int)syscall(__NR_landlock_add_rule, fd, type, attr, 0);
}

static struct kept_rule *keep_rule(struct recipe *r)
{
	struct kept_rule *v;

	if (r->broken)
		return NULL;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;

		v = realloc(r->v, cap * sizeof(*v));
		if (!v) {
			r->broken = true;
			return NULL;
		}
		r->v = v;
		r->cap = cap;
	}
	v = &r->v[r->n];
	memset(v, 0, sizeof(*v));
	v->fd = -1;
	return v;
}

/* True when fd is an object of the agent's /proc. */
static bool on_proc(const struct recipe *r, int fd)
{
	struct stat st;

	return r->proc_dev && fstat(fd, &st) == 0 && st.st_dev == r->proc_dev;
}

/* A path rule for the recipe: beneath the agent's /proc (proc: on_proc)
 * by its path, else by a descriptor of its own. Failing only marks the
 * recipe unusable. */
static void keep_path_rule(struct recipe *r, int fd, bool proc, __u64 rights,
			   const char *path)
{
	struct kept_rule *k = keep_rule(r);

	if (!k)
		return;
	k->type = RULE_PATH_BENEATH;
	k->rights = rights;
	if (proc) {
		/* Only what names it through /proc maps onto the call's. */
		if (!path || strncmp(path, "/proc", 5) ||
		    (path[5] && path[5] != '/'))
			return;
		k->proc_rel = strdup(path[5] ? path + 6 : "");
		if (!k->proc_rel) {
			r->broken = true;
			return;
		}
	} else {
		k->fd = r->nfds < r->maxfds ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
		if (k->fd < 0) {
			r->broken = true;
			return;
		}
		r->nfds++;
		if (on_shm(path)) {
			k->shm_rel = strdup(path[sizeof(SHM_DIR) - 1] ?
					    path + sizeof(SHM_DIR) : "");
			if (!k->shm_rel) {
				r->broken = true;
				return;
			}
		}
	}
	r->n++;
}

static void recipe_free(struct recipe *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->v[i].fd >= 0)
			close(r->v[i].fd);
		free(r->v[i].proc_rel);
		free(r->v[i].shm_rel);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int cw_landlock_abi(void)
{
	int abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi > 0 ? abi : 0;
}

static __u64 fs_handled(int abi)
{
	__u64 a = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

static void __attribute__((format(printf, 4, 5)))
fail_at(struct build *b, const char *path, const char *jpath,
	const char *fmt, ...)
{
	char text[384];
	va_list ap;

	if (!b->err)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (path)
		cw_error_set(b->err, "%s \"%s\": %s", b->where, path, text);
	else
		cw_error_set(b->err, "%s: %s", b->where, text);
	if (jpath)
		snprintf(b->err->path, sizeof(b->err->path), "sandbox.%s",
			 jpath);
}

#define fail(b, path, ...) fail_at(b, path, NULL, __VA_ARGS__)

/* p lies strictly beneath dir; both canonical. */
static bool beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return p[0] == '/' && p[1] != '\0';
	return strncmp(p, dir, n) == 0 && p[n] == '/';
}

static bool is_denied(const struct build *b, const char *p)
{
	size_t i;

	for (i = 0; i < b->ndeny; i++)
		if (strcmp(p, b->deny[i]) == 0 || beneath(p, b->deny[i]))
			return true;
	return false;
}

static bool deny_below(const struct build *b, const char *p)
{
	size_t i;

	for (i = 0; i < b->ndeny; i++)
		if (beneath(b->deny[i], p))
			return true;
	return false;
}

static char *join(const char *dir, const char *name)
{
	char *s;

	if (asprintf(&s, "%s%s%s", dir, dir[1] ? "/" : "", name) < 0)
		return NULL;
	return s;
}

/* Appends /comp to canon (PATH_MAX + 1 bytes), or drops a component for "..". */
static int push(char *canon, const char *comp)
{
	size_t n = strlen(canon), c = strlen(comp);

	if (strcmp(comp, ".") == 0 || !c)
		return 0;
	if (strcmp(comp, "..") == 0) {
		char *slash = strrchr(canon, '/');

		if (slash == canon)
			canon[1] = '\0';
		else if (slash)
			*slash = '\0';
		return 0;
	}
	if (n + (n > 1) + c > PATH_MAX)
		return -ENAMETOOLONG;
	if (n > 1)
		canon[n++] = '/';
	memcpy(canon + n, comp, c + 1);
	return 0;
}

/* Appends the components of rest lexically (nothing to look up there). */
static int push_all(char *canon, char *rest)
{
	char *save = NULL, *c;
	int rc;

	for (c = strtok_r(rest, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		rc = push(canon, c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * realpath(3), one component at a time with O_PATH|O_NOFOLLOW, ending with
 * a descriptor for the object the canonical string names. Symlinks not
 * owned by root or the agent are followed only with follow_any, else the
 * result is -EPERM. When a lookup fails, *canonp still receives the
 * resolved prefix plus the rest taken lexically (what a deny entry that
 * does not exist yet would be).
 */
static int open_root(int root)
{
	return root < 0 ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) :
			  openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int resolve(int root, const char *path, bool follow_any, char **canonp,
		   int *fdp)
{
	char *canon = NULL, *todo = NULL, *target = NULL, *p, *comp, *rest;
	int fd = -1, nfd = -1, links = 0, rc;
	struct stat st;
	ssize_t n;

	*canonp = NULL;
	*fdp = -1;
	canon = malloc(PATH_MAX + 1);
	target = malloc(PATH_MAX + 1);
	todo = strdup(path);
	if (!canon || !target || !todo) {
		rc = -ENOMEM;
		goto out;
	}
	strcpy(canon, "/");
	fd = open_root(root);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	p = todo;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		while (*p && *p != '/')
			p++;
		rest = *p ? p + 1 : p;
		*p = '\0';
		p = rest;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (strcmp(canon, "/") == 0)
				continue;
			nfd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			rc = -errno;
			if (push(canon, comp) == 0 && push_all(canon, rest) == 0) {
				*canonp = canon;
				canon = NULL;
			}
			goto out;
		}
		if (fstat(nfd, &st) < 0) {
			rc = -errno;
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > MAX_LINKS) {
				rc = -ELOOP;
				goto out;
			}
			if (!follow_any && st.st_uid != 0 &&
			    st.st_uid != geteuid()) {
				rc = -EPERM;
				if (push(canon, comp) == 0) {
					*canonp = canon;
					canon = NULL;
				}
				goto out;
			}
			n = readlinkat(nfd, "", target, PATH_MAX);
			if (n < 0) {
				rc = -errno;
				goto out;
			}
			target[n] = '\0';
			close(nfd);
			nfd = -1;
			if (target[0] == '/') {
				strcpy(canon, "/");
				close(fd);
				fd = open_root(root);
				if (fd < 0) {
					rc = -errno;
					goto out;
				}
			}
			/* The link's text replaces its component. */
			if (asprintf(&comp, "%s/%s", target, rest) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			free(todo);
			todo = comp;
			p = todo;
			continue;
		}
		rc = push(canon, comp);
		if (rc < 0)
			goto out;
		close(fd);
		fd = nfd;
		nfd = -1;
	}
	*canonp = canon;
	canon = NULL;
	*fdp = fd;
	fd = -1;
	rc = 0;
out:
	if (nfd >= 0)
		close(nfd);
	if (fd >= 0)
		close(fd);
	free(todo);
	free(target);
	free(canon);
	return rc;
}

static int add_stamp(struct build *b, const char *path, const struct stat *st,
		     bool listed)
{
	struct stamp *s;

	if (b->nstamps == b->capstamps) {
		size_t cap = b->capstamps ? 2 * b->capstamps : 8;

		s = realloc(b->stamps, cap * sizeof(*s));
		if (!s)
			goto oom;
		b->stamps = s;
		b->capstamps = cap;
	}
	s = &b->stamps[b->nstamps];
	memset(s, 0, sizeof(*s));
	s->path = strdup(path);
	if (!s->path)
		goto oom;
	if (st) {
		s->exists = true;
		s->listed = listed;
		s->dev = st->st_dev;
		s->ino = st->st_ino;
		s->mtime = st->st_mtim;
	}
	b->nstamps++;
	return 0;
oom:
	cw_error_set(b->err, "out of memory");
	return -ENOMEM;
}

static void free_stamps(struct stamp *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].path);
	free(s);
}

static int add_path_rule(struct build *b, int fd, bool dir, __u64 rights,
			 const char *path)
{
	struct ll_path_beneath_attr pb;
	bool proc;

	if (!dir)
		rights &= FS_FILE_ONLY;
	rights &= b->fs;
	if (!rights)
		return 0;
	if (b->nrules >= MAX_RULES) {
		fail(b, path,
		     "more than %d Landlock rules; leaving a deny entry out of "
		     "a large directory takes one rule per other entry, so "
		     "deny fewer paths there", MAX_RULES);
		return -E2BIG;
	}
	proc = on_proc(&b->recipe, fd);
	b->names_proc |= proc;
	b->names_shm |= on_shm(path);
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	if (ll_add_rule(b->rs, RULE_PATH_BENEATH, &pb) < 0) {
		int e = errno;

		/* Kernel-internal objects (nsfs bind mounts) take no rule;
		 * Landlock never restricts them anyway. */
		if (e == EBADFD)
			return 0;
		fail(b, path, "landlock_add_rule: %s", strerror(e));
		return -e;
	}
	b->nrules++;
	keep_path_rule(&b->recipe, fd, proc, rights, path);
	return 0;
}

static int grant(struct build *b, int fd, const char *path,
		 const struct stat *st, __u64 rights);

/* Grants rights on every entry of dir but the denied ones, going down
 * towards the deny entries beneath it. */
static int split(struct build *b, int fd, const char *path, __u64 rights)
{
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	char *child = NULL;
	int dfd, cfd = -1, rc;
	size_t i;

	for (i = 0; i < json_array_size(b->split); i++)
		if (!strcmp(json_string_value(json_array_get(b->split, i)),
			    path))
			break;
	if (i == json_array_size(b->split)) {
		/* Stamped before listing: a change while listing shows. */
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			fail(b, path, "%s", strerror(-rc));
			return rc;
		}
		rc = add_stamp(b, path, &st, true);
		if (rc < 0)
			return rc;
		if (json_array_append_new(b->split, json_string(path)) < 0) {
			fail(b, path, "out of memory");
			return -ENOMEM;
		}
	}
	/* The directories on the way stay listable, nothing more. */
	rc = add_path_rule(b, fd, true, rights & LANDLOCK_ACCESS_FS_READ_DIR,
			   path);
	if (rc < 0)
		return rc;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		rc = -errno;
		if (dfd >= 0)
			close(dfd);
		fail(b, path, "listing it to leave out a deny entry: %s",
		     strerror(-rc));
		return rc;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			rc = -errno;
			if (rc < 0)
				fail(b, path, "listing it: %s", strerror(-rc));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = join(path, de->d_name);
		if (!child) {
			fail(b, path, "out of memory");
			rc = -ENOMEM;
			break;
		}
		if (!is_denied(b, child)) {
			cfd = openat(dirfd(d), de->d_name,
				     O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0 && errno != ENOENT) {
				rc = -errno;
				fail(b, child, "%s", strerror(-rc));
				break;
			}
			/* Gone since listed: nothing to grant. */
			if (cfd >= 0) {
				if (fstat(cfd, &st) < 0) {
					rc = -errno;
					fail(b, child, "%s", strerror(-rc));
					break;
				}
				if (!S_ISLNK(st.st_mode)) {
					rc = grant(b, cfd, child, &st, rights);
					if (rc < 0)
						break;
				}
				close(cfd);
				cfd = -1;
			}
		}
		free(child);
		child = NULL;
	}
	if (cfd >= 0)
		close(cfd);
	free(child);
	closedir(d);
	return rc;
}

static int grant(struct build *b, int fd, const char *path,
		 const struct stat *st, __u64 rights)
{
	if (is_denied(b, path))
		return 0;
	if (S_ISDIR(st->st_mode) && deny_below(b, path))
		return split(b, fd, path, rights);
	return add_path_rule(b, fd, S_ISDIR(st->st_mode), rights, path);
}

static int resolve_denies(struct build *b, const struct cw_strv *deny)
{
	char *canon;
	size_t i;
	int fd, rc;

	b->deny = calloc(deny->n ? deny->n : 1, sizeof(*b->deny));
	if (!b->deny) {
		cw_error_set(b->err, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < deny->n; i++) {
		const char *p = deny->v[i];

		snprintf(b->where, sizeof(b->where), "filesystem.deny[%zu]", i);
		if (!p || p[0] != '/') {
			fail_at(b, p ? p : "(null)", b->where,
				"not an absolute path");
			return -EINVAL;
		}
		rc = resolve(b->root, p, true, &canon, &fd);
		if (fd >= 0)
			close(fd);
		/* A deny entry that does not exist yet is still left out. */
		if (!canon) {
			fail_at(b, p, b->where, "%s", strerror(-rc));
			return rc;
		}
		b->deny[b->ndeny++] = canon;
	}
	return 0;
}

static int note_path(struct build *b, json_t *list, const char *path)
{
	if (json_array_append_new(list, json_string(path)) < 0) {
		cw_error_set(b->err, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Adds the rules for one list entry, or for one always-granted device
 * (jpath NULL: problems there skip the device quietly). */
static int grant_path(struct build *b, const char *p, const char *jpath,
		      __u64 rights)
{
	struct stat st;
	char *canon = NULL;
	int fd = -1, rc;

	if (!p || p[0] != '/') {
		if (!jpath)
			return 0;
		fail_at(b, p ? p : "(null)", jpath, "not an absolute path");
		return -EINVAL;
	}
	rc = resolve(b->root, p, false, &canon, &fd);
	if (!jpath && rc < 0) {
		rc = 0;
		goto out;
	}
	if (rc == -ENOENT || rc == -ENOTDIR) {
		rc = note_path(b, b->missing, p);
		if (rc == 0)
			rc = add_stamp(b, p, NULL, false);
		goto out;
	}
	if (rc == -EPERM && canon) {
		rc = note_path(b, b->untrusted, p);
		goto out;
	}
	if (rc < 0) {
		fail_at(b, p, jpath, "%s", strerror(-rc));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		fail_at(b, p, jpath, "%s", strerror(-rc));
		goto out;
	}
	rc = grant(b, fd, canon, &st, rights);
	if (rc == 0 && jpath)
		rc = add_stamp(b, canon, &st, false);
	if (rc < 0 && b->err && jpath)
		snprintf(b->err->path, sizeof(b->err->path), "sandbox.%s",
			 jpath);
out:
	if (fd >= 0)
		close(fd);
	free(canon);
	return rc;
}

static int grant_filesystem(struct build *b, const struct cw_sandbox *sb)
{
	const struct {
		const char *name;
		const struct cw_strv *v;
		__u64 rights;
	} lists[] = {
		{ "read", &sb->filesystem.read, FS_READ },
		{ "write", &sb->filesystem.write, FS_WRITE },
		{ "exec", &sb->filesystem.exec, FS_EXEC },
	};
	size_t l, i;
	int rc;

	for (l = 0; l < CW_ARRAY_SIZE(lists); l++) {
		for (i = 0; i < lists[l].v->n; i++) {
			snprintf(b->where, sizeof(b->where),
				 "filesystem.%s[%zu]", lists[l].name, i);
			rc = grant_path(b, lists[l].v->v[i], b->where,
					lists[l].rights);
			if (rc < 0)
				return rc;
		}
	}
	snprintf(b->where, sizeof(b->where), "always granted");
	for (i = 0; i < CW_ARRAY_SIZE(always_granted); i++) {
		rc = grant_path(b, always_granted[i].path, NULL,
				always_granted[i].rights);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* TCP connect ports from network.allow, as a bitmap; false when some rule
 * means any port (then connect is not handled at all). */
static bool connect_ports(const struct cw_sandbox *sb, uint8_t *bits,
			  size_t *nports, char *why, size_t whylen)
{
	size_t i;
	unsigned p;

	*nports = 0;
	for (i = 0; i < sb->network.nallow; i++) {
		const struct cw_net_rule *r = &sb->network.allow[i];
		const char *text = r->text ? r->text : "?";

		if (r->port_lo == 0 && r->port_hi == 0) {
			snprintf(why, whylen,
				 "network.allow[%zu] \"%s\" names no port",
				 i, text);
			return false;
		}
		if ((unsigned)r->port_hi - r->port_lo + 1 > MAX_PORTS) {
			snprintf(why, whylen,
				 "network.allow[%zu] \"%s\" spans more than "
				 "%d ports", i, text, MAX_PORTS);
			return false;
		}
		for (p = r->port_lo; p <= r->port_hi; p++) {
			if (!(bits[p / 8] & (1u << (p % 8))))
				(*nports)++;
			bits[p / 8] |= (uint8_t)(1u << (p % 8));
		}
	}
	if (*nports > MAX_PORTS) {
		snprintf(why, whylen,
			 "network.allow names more than %d ports in all",
			 MAX_PORTS);
		return false;
	}
	return true;
}

static int add_port_rule(struct build *b, __u64 access, unsigned port)
{
	struct ll_net_port_attr np = { .allowed_access = access,
				       .port = port };

	if (b->nrules >= MAX_RULES) {
		fail(b, NULL, "more than %d Landlock rules", MAX_RULES);
		return -E2BIG;
	}
	if (ll_add_rule(b->rs, RULE_NET_PORT, &np) < 0) {
		int e = errno;

		fail(b, NULL, "landlock_add_rule for TCP port %u: %s", port,
		     strerror(e));
		return -e;
	}
	b->nrules++;
	{
		struct kept_rule *k = keep_rule(&b->recipe);

		if (k) {
			k->type = RULE_NET_PORT;
			k->port = np;
			b->recipe.n++;
		}
	}
	return 0;
}

/* [[lo, hi], ...] of the set bits. */
static json_t *port_ranges(const uint8_t *bits)
{
	json_t *a = json_array();
	unsigned p, lo;

	for (p = 0; a && p < NPORTS; p++) {
		if (!(bits[p / 8] & (1u << (p % 8))))
			continue;
		lo = p;
		while (p + 1 < NPORTS && (bits[(p + 1) / 8] & (1u << ((p + 1) % 8))))
			p++;
		if (json_array_append_new(a, json_pack("[ii]", lo, p)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *right_names(__u64 rights)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < CW_ARRAY_SIZE(fs_names); i++) {
		if (!(rights & (1ULL << i)))
			continue;
		if (json_array_append_new(a, json_string(fs_names[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static int add_note(struct build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_note(struct build *b, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return note_path(b, b->notes, text);
}

/* What the target ABI leaves to other layers, for describe(). */
static int abi_notes(struct build *b, int abi, int kernel_abi)
{
	static const struct {
		int abi;
		const char *what;
	} later[] = {
		{ 2, "renaming and linking across directories is refused "
		     "(refer needs ABI 2)" },
		{ 3, "truncation is not restricted (needs ABI 3)" },
		{ 4, "TCP ports are not restricted (needs ABI 4)" },
		{ 5, "device ioctls are not restricted (needs ABI 5)" },
		{ 6, "signals and abstract unix sockets are not scoped "
		     "(needs ABI 6)" },
	};
	size_t i;
	int rc;

	for (i = 0; i < CW_ARRAY_SIZE(later); i++) {
		if (abi >= later[i].abi)
			continue;
		rc = add_note(b, "%s; target ABI %d, kernel ABI %d",
			      later[i].what, abi, kernel_abi);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * The ruleset for abi: the filesystem rights it handles, TCP bind (and
 * connect, when the policy's ports fit in bits) unless the network is
 * open by default, scoping from ABI 6. *tcp and *tcp_connect say which TCP
 * rights it handles. 0, or -errno with b->err.
 */
static int create_ruleset(struct build *b, const struct cw_sandbox *sb,
			  int abi, uint8_t *bits, bool *tcp, bool *tcp_connect)
{
	struct ll_ruleset_attr attr = { 0 };
	char why[160] = "";
	size_t size, nports = 0;
	int rc;

	b->fs = fs_handled(abi);
	attr.handled_access_fs = b->fs;
	size = sizeof(attr.handled_access_fs);
	*tcp = abi >= 4 && !sb->network.default_allow;
	if (*tcp) {
		*tcp_connect = connect_ports(sb, bits, &nports, why,
					     sizeof(why));
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP;
		if (*tcp_connect) {
			attr.handled_access_net |=
				LANDLOCK_ACCESS_NET_CONNECT_TCP;
		} else {
			rc = add_note(b, "TCP connect is left to the eBPF "
				      "layer: %s", why);
			if (rc < 0)
				return rc;
		}
	} else if (abi >= 4) {
		rc = add_note(b, "TCP ports are not restricted: "
			      "network.default is \"allow\"");
		if (rc < 0)
			return rc;
	}
	if (abi >= 4)
		size = offsetof(struct ll_ruleset_attr, scoped);
	if (abi >= 6) {
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
			      LANDLOCK_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	b->recipe.attr = attr;
	b->recipe.attr_size = size;
	b->rs = ll_create_ruleset(&attr, size, 0);
	if (b->rs < 0) {
		rc = -errno;
		cw_error_set(b->err, "landlock_create_ruleset (ABI %d): %s",
			     abi, strerror(-rc));
		return rc;
	}
	return 0;
}

/* Binding is allowed on port 0 only (an ephemeral port); connecting to
 * each port in connect, when given. */
static int grant_ports(struct build *b, const uint8_t *connect)
{
	unsigned p;
	int rc;

	rc = add_port_rule(b, LANDLOCK_ACCESS_NET_BIND_TCP, 0);
	for (p = 1; rc == 0 && connect && p < NPORTS; p++)
		if (connect[p / 8] & (1u << (p % 8)))
			rc = add_port_rule(b, LANDLOCK_ACCESS_NET_CONNECT_TCP,
					   p);
	return rc;
}

struct cw_landlock *cw_landlock_build(const struct cw_sandbox *sb, int abi,
				      struct cw_error *err)
{
	return cw_landlock_build_at(sb, abi, -1, err);
}

struct cw_landlock *cw_landlock_build_at(const struct cw_sandbox *sb, int abi,
					 int root, struct cw_error *err)
{
	struct build b = { .root = root, .rs = -1, .err = err };
	struct cw_landlock *l = NULL;
	uint8_t *bits = NULL;
	json_t *connect = NULL, *tcp_desc = NULL;
	bool tcp = false, tcp_connect = false;
	int kernel_abi, rc;
	struct rlimit nofile;
	struct stat proc;
	size_t i;

	if (stat("/proc", &proc) == 0)
		b.recipe.proc_dev = proc.st_dev;
	/* A quarter of the descriptors at most: the agent needs the rest
	 * for its clients and calls. */
	b.recipe.maxfds = getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
			  nofile.rlim_cur != RLIM_INFINITY ?
			  (size_t)nofile.rlim_cur / 4 : MAX_RULES;

	if (!sb || abi < 0) {
		cw_error_set(err, "landlock: no sandbox or a negative ABI");
		rc = -EINVAL;
		goto out;
	}
	kernel_abi = cw_landlock_abi();
	if (abi == 0 || kernel_abi == 0) {
		cw_error_set(err, "landlock: %s", kernel_abi ?
			     "ABI 0 asked for" :
			     "not available in this kernel (needs Linux 5.13+ "
			     "with landlock in the lsm= list)");
		rc = -EOPNOTSUPP;
		goto out;
	}
	if (abi > kernel_abi)
		abi = kernel_abi;
	if (abi > ABI_KNOWN)
		abi = ABI_KNOWN;

	b.missing = json_array();
	b.untrusted = json_array();
	b.split = json_array();
	b.notes = json_array();
	bits = calloc(NPORTS / 8, 1);
	if (!b.missing || !b.untrusted || !b.split || !b.notes || !bits) {
		cw_error_set(err, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = abi_notes(&b, abi, kernel_abi);
	if (rc < 0)
		goto out;

	rc = create_ruleset(&b, sb, abi, bits, &tcp, &tcp_connect);
	if (rc < 0)
		goto out;

	rc = resolve_denies(&b, &sb->filesystem.deny);
	if (rc < 0)
		goto out;
	rc = grant_filesystem(&b, sb);
	if (rc < 0)
		goto out;

	snprintf(b.where, sizeof(b.where), "network");
	if (tcp) {
		rc = grant_ports(&b, tcp_connect ? bits : NULL);
		if (rc < 0)
			goto out;
		connect = tcp_connect ? port_ranges(bits) : json_string("any");
	}

	l = calloc(1, sizeof(*l));
	if (!l) {
		cw_error_set(err, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	l->fd = b.rs;
	if (tcp) {
		tcp_desc = json_pack("{s:[i], s:o}", "bind_ports", 0,
				     "connect_ports", connect);
		connect = NULL;
		if (!tcp_desc) {
			cw_error_set(err, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
	}
	l->desc = json_pack(
		"{s:i, s:i, s:b, s:o, s:I, s:O, s:O, s:O, s:b, s:o*, s:o, s:O}",
		"abi", abi, "kernel_abi", kernel_abi, "filesystem", 1,
		"fs_access", right_names(b.fs), "rules", (json_int_t)b.nrules,
		"missing", b.missing, "untrusted_symlinks", b.untrusted,
		"deny_split", b.split, "tcp_ports", tcp, "tcp", tcp_desc,
		"scoped", abi >= 6 ? json_pack("[ss]", "abstract_unix_socket",
					       "signal") : json_array(),
		"notes", b.notes);
	tcp_desc = NULL;
	if (!l->desc) {
		cw_error_set(err, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	l->names_proc = b.names_proc;
	l->names_shm = b.names_shm;
	l->stamps = b.stamps;
	l->nstamps = b.nstamps;
	/* Unusable, or of no use (no rule on the agent's /proc to move, or
	 * built for another root already): no descriptors held for nothing. */
	if (b.recipe.broken || !(b.names_proc || b.names_shm) || root >= 0) {
		bool broken = b.recipe.broken || root >= 0;

		recipe_free(&b.recipe);
		b.recipe.broken = broken;
	}
	l->recipe = b.recipe;
	memset(&b.recipe, 0, sizeof(b.recipe));
	b.stamps = NULL;
	b.nstamps = 0;
	b.rs = -1;
	rc = 0;
out:
	if (rc < 0 && l) {
		free(l);
		l = NULL;
	}
	json_decref(connect);
	json_decref(tcp_desc);
	if (b.rs >= 0)
		close(b.rs);
	for (i = 0; i < b.ndeny; i++)
		free(b.deny[i]);
	free(b.deny);
	free(bits);
	free_stamps(b.stamps, b.nstamps);
	recipe_free(&b.recipe);
	json_decref(b.missing);
	json_decref(b.untrusted);
	json_decref(b.split);
	json_decref(b.notes);
	if (rc < 0)
		errno = -rc;
	return l;
}

void cw_landlock_free(struct cw_landlock *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	json_decref(l->desc);
	free_stamps(l->stamps, l->nstamps);
	recipe_free(&l->recipe);
	free(l);
}

bool cw_landlock_stale(const struct cw_landlock *l)
{
	const struct stamp *s;
	struct stat st;
	size_t i;
	bool ok;

	for (i = 0; l && i < l->nstamps; i++) {
		s = &l->stamps[i];
		ok = stat(s->path, &st) == 0;
		if (ok != s->exists)
			return true;
		if (ok && (st.st_dev != s->dev || st.st_ino != s->ino))
			return true;
		if (ok && s->listed &&
		    (st.st_mtim.tv_sec != s->mtime.tv_sec ||
		     st.st_mtim.tv_nsec != s->mtime.tv_nsec))
			return true;
	}
	return false;
}

bool cw_landlock_names_proc(const struct cw_landlock *l)
{
	return l && l->names_proc;
}

bool cw_landlock_names_shm(const struct cw_landlock *l)
{
	return l && l->names_shm;
}

int cw_landlock_fd(const struct cw_landlock *l)
{
	return l ? l->fd : -1;
}

int cw_landlock_apply(const struct cw_landlock *l)
{
	if (!l || l->fd < 0)
		return -EINVAL;
	if (syscall(__NR_landlock_restrict_self, l->fd, 0) < 0)
		return -errno;
	return 0;
}

bool cw_landlock_can_move(const struct cw_landlock *l)
{
	return l && !l->recipe.broken && l->recipe.attr_size;
}

/* The descriptor a kept rule is on in the call's mount namespace: its
 * own, or looked up from the call's /proc or /dev/shm; -1 when gone
 * there. *opened: the caller closes it. */
static int moved_fd(const struct kept_rule *k, int proc_fd, int shm_fd,
		    bool *opened)
{
	const char *rel = k->proc_rel ? k->proc_rel : k->shm_rel;
	int base = k->proc_rel ? proc_fd : k->shm_rel ? shm_fd : -1;

	*opened = false;
	if (base < 0)
		return k->fd;
	if (!rel[0])
		return base;
	*opened = true;
	return openat(base, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

static int build_moved(const struct cw_landlock *l, int proc_fd, int shm_fd)
{
	const struct recipe *r = &l->recipe;
	struct ll_path_beneath_attr pb;
	const struct kept_rule *k;
	bool opened;
	int rs, fd, e;
	size_t i;

	if (!cw_landlock_can_move(l))
		return -ENOTSUP;
	rs = ll_create_ruleset(&r->attr, r->attr_size, 0);
	if (rs < 0)
		return -errno;
	for (i = 0; i < r->n; i++) {
		k = &r->v[i];
		if (k->type == RULE_NET_PORT) {
			if (ll_add_rule(rs, RULE_NET_PORT, &k->port) < 0)
				goto fail;
			continue;
		}
		/* Gone in the call's namespace (an agent's pid): no rule,
		 * nothing to cover. */
		fd = moved_fd(k, proc_fd, shm_fd, &opened);
		if (fd < 0)
			continue;
		pb.allowed_access = k->rights;
		pb.parent_fd = fd;
		e = ll_add_rule(rs, RULE_PATH_BENEATH, &pb) < 0 ? errno : 0;
		if (opened)
			close(fd);
		if (e && e != EBADFD) {
			errno = e;
			goto fail;
		}
	}
	return rs;
fail:
	e = errno;
	close(rs);
	return -e;
}

struct cw_landlock *cw_landlock_moved(const struct cw_landlock *l,
				      int proc_fd, int shm_fd,
				      struct cw_error *err)
{
	struct cw_landlock *m;
	int fd = build_moved(l, proc_fd, shm_fd);

	if (fd < 0) {
		cw_error_set(err, "landlock: the ruleset for the call's /proc and /dev/shm: %s",
			     strerror(-fd));
		errno = -fd;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		cw_error_set(err, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	m->fd = fd;
	return m;
}

/*
 * A copy the caller owns: "abi" (targeted), "kernel_abi", "filesystem",
 * "fs_access" (handled rights), "rules", "missing", "untrusted_symlinks",
 * "deny_split" (directories listed), "tcp_ports", "tcp" ({"bind_ports":
 * [0], "connect_ports": [[lo, hi], ...] or "any"}, only when tcp_ports),
 * "scoped" and "notes" (what this ruleset leaves to other layers, and why).
 */
json_t *cw_landlock_describe(const struct cw_landlock *l)
{
	return l ? json_deep_copy(l->desc) : NULL;
}
