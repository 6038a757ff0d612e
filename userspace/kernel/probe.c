// SPDX-License-Identifier: Apache-2.0
/*
 * probe: finds out which confinement layers work here by using each one
 * briefly (install a filter in a throwaway child, create and remove a
 * cgroup, load and attach a two-instruction BPF program, ...). Version
 * numbers are never consulted: distribution kernels backport and configs
 * differ, and the E2B guest kernel lacks things its version would suggest.
 *
 * Every probe undoes what it did: file descriptors are closed, BPF objects
 * go away with their last descriptor, probe cgroups and directories are
 * removed. Names of created objects carry the pid so that a leftover (after
 * a crash) can be told apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kernel/kaudit.h"
#include "kernel/procevents.h"
#include "kernel/mountinfo.h"
#include "kernel/netscan.h"
#include "kernel/namespaces.h"
#include "kernel/probe.h"
#include "lib/util.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

/* Capability numbers, from linux/capability.h (older headers lack some). */
#define PROBE_CAP_NET_ADMIN 12
#define PROBE_CAP_SYS_ADMIN 21
#define PROBE_CAP_PERFMON 38
#define PROBE_CAP_BPF 39

/* The kernel-internal "not supported" errno that BPF attach paths return. */
#define PROBE_ENOTSUPP 524

#define DISABLED_REASON "disabled by CW_PROBE_DISABLE (test override)"

/* What the probes share: capabilities and the parsed kernel BTF. */
struct probe_ctx {
	struct cw_probe *p;
	uint64_t cap_eff;
	bool caps_known;
	struct btf *btf;	/* NULL until loaded, or when unavailable */
	int btf_err;		/* 0 = not tried, 1 = loaded, or -errno */
	char prefix[40];	/* "cw-probe-<pid>-" for created objects */
};

static void item_set(struct cw_probe_item *it, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void item_set(struct cw_probe_item *it, bool ok, const char *fmt, ...)
{
	va_list ap;

	it->ok = ok;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof(it->detail), fmt, ap);
	va_end(ap);
}

#define ERRNO_NAME(e) { e, #e }

static const struct {
	int e;
	const char *name;
} errno_names[] = {
	ERRNO_NAME(EPERM),
	ERRNO_NAME(ENOENT),
	ERRNO_NAME(ESRCH),
	ERRNO_NAME(EINTR),
	ERRNO_NAME(EIO),
	ERRNO_NAME(E2BIG),
	ERRNO_NAME(EBADF),
	ERRNO_NAME(ENOMEM),
	ERRNO_NAME(EACCES),
	ERRNO_NAME(EFAULT),
	ERRNO_NAME(EBUSY),
	ERRNO_NAME(EEXIST),
	ERRNO_NAME(EXDEV),
	ERRNO_NAME(ENODEV),
	ERRNO_NAME(ENOTDIR),
	ERRNO_NAME(EINVAL),
	ERRNO_NAME(EMFILE),
	ERRNO_NAME(ENOSPC),
	ERRNO_NAME(EROFS),
	ERRNO_NAME(ENOSYS),
	ERRNO_NAME(EOPNOTSUPP),
	{ PROBE_ENOTSUPP, "ENOTSUPP" },
};

static const char *errno_name(int e)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].e == e)
			return errno_names[i].name;
	return NULL;
}

/* "ENAME: hint" into buf; the hint defaults to strerror. */
static void errno_text(char *buf, size_t len, int e, const char *hint)
{
	const char *name = errno_name(e);

	if (!hint)
		hint = e == PROBE_ENOTSUPP ? "operation not supported" :
					     strerror(e);
	if (name)
		snprintf(buf, len, "%s: %s", name, hint);
	else
		snprintf(buf, len, "errno %d: %s", e, hint);
}

static void item_errno(struct cw_probe_item *it, int e, const char *hint)
{
	it->ok = false;
	errno_text(it->detail, sizeof(it->detail), e, hint);
}

static void read_caps(struct probe_ctx *c)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			c->cap_eff = v;
			c->caps_known = true;
			break;
		}
	}
	fclose(f);
}

static bool has_cap(const struct probe_ctx *c, int cap)
{
	return c->caps_known && (c->cap_eff >> cap) & 1;
}

/* Reads a small text file, dropping the trailing newline. 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
out:
	close(fd);
	return err;
}

/* ------------------------------------------------------------------ */
/* /proc/self/cgroup                                                   */

/*
 * Our path in a hierarchy from /proc/self/cgroup: the v2 one when
 * controller is NULL, else the v1 hierarchy carrying that controller.
 * 0 or -ENOENT.
 */
static int own_cgroup(const char *controller, char *path, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct cw_cgroup_line cl;

		if (!cw_mountinfo_cgroup_line(line, &cl))
			continue;
		if (controller ?
			    !cw_mountinfo_has(cl.controllers, controller, ",") :
			    !cw_mountinfo_cgroup_is_v2(&cl))
			continue;
		snprintf(path, len, "%s", cl.path);
		err = 0;
		break;
	}
	free(line);
	fclose(f);
	return err;
}

/* mkdir + rmdir of a uniquely named child of dir. 0 or -errno. */
static int try_child(const struct probe_ctx *c, const char *dir)
{
	char name[64], path[PATH_MAX];

	cw_random_id(c->prefix, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755))
		return -errno;
	if (rmdir(path))
		return -errno;
	return 0;
}

static void cgroup_child_failed(struct cw_probe_item *it, const char *dir,
				int err)
{
	char e[96];

	errno_text(e, sizeof(e), -err,
		   err == -EACCES || err == -EPERM ?
			   "not delegated to this process" :
		   err == -EROFS ? "mounted read-only" : NULL);
	item_set(it, false, "cannot create a child cgroup in %s: %s", dir, e);
}

/* ------------------------------------------------------------------ */
/* seccomp and Landlock                                                */

static int sys_seccomp(unsigned int op, unsigned int flags, void *args)
{
	return (int)syscall(SYS_seccomp, op, flags, args);
}

static void seccomp_avail_failed(struct cw_probe_item *it, int e,
				 const char *action)
{
	char hint[128];

	switch (e) {
	case ENOSYS:
		item_errno(it, e, "kernel built without CONFIG_SECCOMP, or "
				  "the seccomp syscall is filtered");
		return;
	case EINVAL:
		item_errno(it, e, "kernel built without CONFIG_SECCOMP_FILTER "
				  "or without SECCOMP_GET_ACTION_AVAIL");
		return;
	case EOPNOTSUPP:
		snprintf(hint, sizeof(hint), "the kernel does not offer %s",
			 action);
		item_errno(it, e, hint);
		return;
	}
	item_errno(it, e, NULL);
}

static void probe_seccomp(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_SECCOMP];
	uint32_t action = SECCOMP_RET_ERRNO;
	int mode;

	if (sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action)) {
		seccomp_avail_failed(it, errno, "SECCOMP_RET_ERRNO");
		return;
	}
	mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	item_set(it, true, "filter mode, SECCOMP_RET_ERRNO%s",
		 mode == 2 ? "; this process already runs under a filter" : "");
}

/*
 * Installs a one-instruction filter with a listener in a throwaway child:
 * the only reliable test, since a filter cannot be removed again.
 */
static void probe_seccomp_notify(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_SECCOMP_NOTIFY];
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	int status, code;
	pid_t pid, w;

	if (sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action)) {
		seccomp_avail_failed(it, errno, "SECCOMP_RET_USER_NOTIF");
		return;
	}
	pid = fork();
	if (pid < 0) {
		item_errno(it, errno, "fork for the listener test failed");
		return;
	}
	if (pid == 0) {
		struct sock_filter insn[] = {
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = 1, .filter = insn };
		int fd;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(255);
		fd = sys_seccomp(SECCOMP_SET_MODE_FILTER,
				 SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		_exit(fd >= 0 ? 0 : errno & 0xff);
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		item_errno(it, errno, "waiting for the listener test failed");
		return;
	}
	if (!WIFEXITED(status)) {
		item_set(it, false, "listener test child died by signal %d",
			 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		return;
	}
	code = WEXITSTATUS(status);
	if (code == 0) {
		item_set(it, true, "SECCOMP_RET_USER_NOTIF, listener fd "
				   "returned by SECCOMP_FILTER_FLAG_NEW_LISTENER");
	} else if (code == 255) {
		item_set(it, false, "no_new_privs could not be set");
	} else if (code == EBUSY) {
		item_errno(it, code, "a filter with a listener is already "
				     "installed in this process");
	} else if (code == EINVAL) {
		item_errno(it, code, "SECCOMP_FILTER_FLAG_NEW_LISTENER refused");
	} else {
		item_errno(it, code, NULL);
	}
}

static void probe_landlock(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_LANDLOCK];
	int abi;

	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		int e = errno;

		if (e == ENOSYS)
			item_errno(it, e, "kernel built without "
					  "CONFIG_SECURITY_LANDLOCK, or the "
					  "syscall is filtered");
		else if (e == EOPNOTSUPP)
			item_errno(it, e, "Landlock is built in but not "
					  "enabled: landlock is not in the "
					  "lsm= boot list");
		else
			item_errno(it, e, NULL);
		return;
	}
	c->p->landlock_abi = abi;
	item_set(it, true, "ABI %d (filesystem%s%s%s)", abi,
		 abi >= 4 ? ", TCP ports" : "", abi >= 6 ? ", scoping" : "",
		 abi >= 7 ? ", audit" : "");
}

/* ------------------------------------------------------------------ */
/* cgroups                                                             */

static void probe_cgroup2(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_CGROUP2];
	char own[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32];
	char *ctl = c->p->cgroup2_controllers;
	size_t ctl_len = sizeof(c->p->cgroup2_controllers);
	int err;

	err = own_cgroup(NULL, own, sizeof(own));
	if (err) {
		item_set(it, false, "no cgroup v2 entry (0::) in "
				    "/proc/self/cgroup");
		return;
	}
	err = cw_mountinfo_find("cgroup2", NULL, own, dir, sizeof(dir),
				c->p->cgroup2_mount,
				sizeof(c->p->cgroup2_mount));
	if (err == -ENOENT) {
		item_set(it, false, "cgroup2 is not mounted (no cgroup2 entry "
				    "in /proc/self/mountinfo)");
		return;
	}
	if (err == -EXDEV) {
		item_set(it, false, "our cgroup %s lies outside every mounted "
				    "cgroup2 tree", own);
		return;
	}
	if (err) {
		item_errno(it, -err, "cannot read /proc/self/mountinfo");
		return;
	}
	/* cgroup.controllers: what our cgroup can hand on to children. */
	snprintf(file, sizeof(file), "%s/cgroup.controllers", dir);
	err = read_small(file, ctl, ctl_len);
	if (err)
		ctl[0] = '\0';
	err = try_child(c, dir);
	if (err) {
		cgroup_child_failed(it, dir, err);
		return;
	}
	if (strcmp(dir, c->p->cgroup2_mount))
		item_set(it, true, "%s, own cgroup %s (controllers: %s)",
			 c->p->cgroup2_mount, own, ctl[0] ? ctl : "none");
	else
		item_set(it, true, "%s (controllers: %s)", dir,
			 ctl[0] ? ctl : "none");
}

static void probe_cgroup_v1(struct probe_ctx *c, enum cw_feature f,
			    const char *controller)
{
	struct cw_probe_item *it = &c->p->item[f];
	char own[PATH_MAX], dir[PATH_MAX];
	int err;

	err = own_cgroup(controller, own, sizeof(own));
	if (err) {
		item_set(it, false, "no v1 hierarchy with the %s controller "
				    "in /proc/self/cgroup%s", controller,
			 cw_mountinfo_has(c->p->cgroup2_controllers,
					  controller, " ") ?
				 " (cgroup v2 has it)" : "");
		return;
	}
	err = cw_mountinfo_find("cgroup", controller, own, dir, sizeof(dir),
				NULL, 0);
	if (err == -ENOENT) {
		item_set(it, false, "the v1 %s hierarchy is not mounted",
			 controller);
		return;
	}
	if (err == -EXDEV) {
		item_set(it, false, "our %s cgroup %s lies outside the "
				    "mounted v1 tree", controller, own);
		return;
	}
	if (err) {
		item_errno(it, -err, "cannot read /proc/self/mountinfo");
		return;
	}
	err = try_child(c, dir);
	if (err) {
		cgroup_child_failed(it, dir, err);
		return;
	}
	item_set(it, true, "%s", dir);
}

static void probe_cgroup_v1_memory(struct probe_ctx *c)
{
	probe_cgroup_v1(c, CW_FEAT_CGROUP_V1_MEMORY, "memory");
}

static void probe_cgroup_v1_pids(struct probe_ctx *c)
{
	probe_cgroup_v1(c, CW_FEAT_CGROUP_V1_PIDS, "pids");
}

/* ------------------------------------------------------------------ */
/* BPF                                                                 */

/* r0 = imm; exit */
#define PROG_RET(v)                                                     \
	{                                                               \
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, \
		  .imm = (v) },                                         \
		{ .code = BPF_JMP | BPF_EXIT },                         \
	}

struct prog_spec {
	enum bpf_prog_type type;
	enum bpf_attach_type attach;
	int imm;		/* return value */
	const char *license;
	int cap;		/* needed besides CAP_BPF, -1 if none */
	const char *cap_name;
	const char *config;	/* what EINVAL most likely means */
};

/* Why the kernel answered EPERM, from our own capabilities. */
static void bpf_perm_text(const struct probe_ctx *c, int cap,
			  const char *cap_name, char *buf, size_t len)
{
	char need[96];

	if (cap >= 0)
		snprintf(need, sizeof(need), "CAP_BPF and %s (or CAP_SYS_ADMIN)",
			 cap_name);
	else
		snprintf(need, sizeof(need), "CAP_BPF (or CAP_SYS_ADMIN)");
	if (!c->caps_known) {
		snprintf(buf, len, "EPERM: needs %s", need);
	} else if (has_cap(c, PROBE_CAP_SYS_ADMIN) ||
		   (has_cap(c, PROBE_CAP_BPF) && (cap < 0 || has_cap(c, cap)))) {
		snprintf(buf, len, "EPERM although %s are held: refused by "
				   "kernel policy, lockdown, an LSM or seccomp",
			 need);
	} else {
		snprintf(buf, len, "EPERM: needs %s, which this process lacks",
			 need);
	}
}

static void bpf_errno_text(const struct probe_ctx *c, int e,
			   const struct prog_spec *s, const char *log,
			   char *buf, size_t len)
{
	char hint[160];

	switch (e) {
	case EPERM:
		bpf_perm_text(c, s ? s->cap : -1, s ? s->cap_name : NULL, buf,
			      len);
		return;
	case ENOSYS:
		errno_text(buf, len, e, "bpf() unavailable: kernel built "
					"without CONFIG_BPF_SYSCALL, or the "
					"syscall is filtered");
		return;
	case EACCES:
	case EINVAL:
		if (log && log[0]) {
			snprintf(hint, sizeof(hint), "verifier: %s", log);
			errno_text(buf, len, e, hint);
		} else if (e == EACCES) {
			errno_text(buf, len, e, "refused by the verifier");
		} else if (s && s->config) {
			snprintf(hint, sizeof(hint), "not supported by this "
						     "kernel (%s)", s->config);
			errno_text(buf, len, e, hint);
		} else {
			errno_text(buf, len, e, "not supported by this kernel");
		}
		return;
	}
	errno_text(buf, len, e, NULL);
}

/* The verifier's complaint: the log's last line before its statistics. */
static const char *log_last_line(char *log)
{
	char *p;

	for (;;) {
		char *end = log + strlen(log);

		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			*--end = '\0';
		p = strrchr(log, '\n');
		p = p ? p + 1 : log;
		if (p == log || strncmp(p, "processed ", 10))
			return p;
		*p = '\0';
	}
}

/* Loads a two-instruction program. fd, or -errno with the reason in why. */
static int prog_load(const struct probe_ctx *c, const struct prog_spec *s,
		     uint32_t btf_id, char *why, size_t len)
{
	struct bpf_insn insns[] = PROG_RET(s->imm);
	char log[512] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = s->attach,
		    .attach_btf_id = btf_id,
		    .log_buf = log,
		    .log_size = sizeof(log));
	int fd, e;

	fd = bpf_prog_load(s->type, "cw_probe", s->license, insns,
			   CW_ARRAY_SIZE(insns), &opts);
	if (fd >= 0)
		return fd;
	e = fd == -1 ? errno : -fd;
	bpf_errno_text(c, e, s, log_last_line(log), why, len);
	return -e;
}

static void probe_prog(struct probe_ctx *c, enum cw_feature f,
		       const struct prog_spec *s, const char *what)
{
	struct cw_probe_item *it = &c->p->item[f];
	int fd;

	fd = prog_load(c, s, 0, it->detail, sizeof(it->detail));
	if (fd < 0) {
		it->ok = false;
		return;
	}
	close(fd);
	item_set(it, true, "loaded %s", what);
}

static void probe_bpf_cgroup_sock_addr(struct probe_ctx *c)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR,
		.attach = BPF_CGROUP_INET4_CONNECT,
		.imm = 1,
		.license = "Apache-2.0",
		.cap = PROBE_CAP_NET_ADMIN,
		.cap_name = "CAP_NET_ADMIN",
		.config = "CONFIG_CGROUP_BPF",
	};

	probe_prog(c, CW_FEAT_BPF_CGROUP_SOCK_ADDR, &s,
		   "cgroup/connect4 (BPF_PROG_TYPE_CGROUP_SOCK_ADDR)");
}

static void probe_bpf_cgroup_sock(struct probe_ctx *c)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_CGROUP_SOCK,
		.attach = BPF_CGROUP_INET_SOCK_CREATE,
		.imm = 1,
		.license = "Apache-2.0",
		.cap = PROBE_CAP_NET_ADMIN,
		.cap_name = "CAP_NET_ADMIN",
		.config = "CONFIG_CGROUP_BPF",
	};

	probe_prog(c, CW_FEAT_BPF_CGROUP_SOCK, &s,
		   "cgroup/sock_create (BPF_PROG_TYPE_CGROUP_SOCK)");
}

static void probe_bpf_cgroup_skb(struct probe_ctx *c)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_CGROUP_SKB,
		.attach = BPF_CGROUP_INET_EGRESS,
		.imm = 1,
		.license = "Apache-2.0",
		.cap = PROBE_CAP_NET_ADMIN,
		.cap_name = "CAP_NET_ADMIN",
		.config = "CONFIG_CGROUP_BPF",
	};

	probe_prog(c, CW_FEAT_BPF_CGROUP_SKB, &s,
		   "cgroup_skb/egress (BPF_PROG_TYPE_CGROUP_SKB)");
}

static void probe_bpf_ringbuf(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_BPF_RINGBUF];
	long page = sysconf(_SC_PAGESIZE);
	void *m;
	int fd;

	if (page <= 0)
		page = 4096;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "cw_probe", 0, 0,
			    (uint32_t)page, NULL);
	if (fd < 0) {
		static const struct prog_spec s = {
			.cap = -1,
			.config = "BPF_MAP_TYPE_RINGBUF unknown",
		};

		bpf_errno_text(c, fd == -1 ? errno : -fd, &s, NULL, it->detail,
			       sizeof(it->detail));
		it->ok = false;
		return;
	}
	/* The consumer position page is what a reader maps first. */
	m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		item_errno(it, errno, "ring buffer created but its consumer "
				      "page cannot be mapped");
		close(fd);
		return;
	}
	munmap(m, (size_t)page);
	close(fd);
	item_set(it, true, "BPF_MAP_TYPE_RINGBUF created and mapped (%ld bytes)",
		 page);
}

/* Parses the kernel's BTF once; later callers get the same answer. */
static int load_btf(struct probe_ctx *c)
{
	if (c->btf_err)
		return c->btf_err;
	c->btf = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	c->btf_err = c->btf ? 1 : -(errno ? errno : EINVAL);
	return c->btf_err;
}

static void btf_failed(struct cw_probe_item *it, int err)
{
	if (err == -ENOENT)
		item_errno(it, -err, "/sys/kernel/btf/vmlinux missing: kernel "
				     "built without CONFIG_DEBUG_INFO_BTF");
	else
		item_errno(it, -err, "cannot parse /sys/kernel/btf/vmlinux");
}

static void probe_kernel_btf(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_KERNEL_BTF];
	int err = load_btf(c);

	if (err < 0) {
		btf_failed(it, err);
		return;
	}
	item_set(it, true, "/sys/kernel/btf/vmlinux (%u types)",
		 btf__type_cnt(c->btf));
}

/* Attaches a program to syscalls/sys_enter_getpid through tracefs. */
static int classic_tracepoint(const struct probe_ctx *c, char *why, size_t len)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_TRACEPOINT,
		.imm = 0,
		.license = "GPL",
		.cap = PROBE_CAP_PERFMON,
		.cap_name = "CAP_PERFMON",
		.config = "CONFIG_BPF_EVENTS",
	};
	char base[PATH_MAX], path[PATH_MAX + 64], id[32], e[128];
	struct perf_event_attr attr = { 0 };
	int err, pfd = -1, fd = -1;

	err = cw_mountinfo_find("tracefs", NULL, NULL, base, sizeof(base),
				NULL, 0);
	if (err == -ENOENT) {
		err = cw_mountinfo_find("debugfs", NULL, NULL, path,
					sizeof(path), NULL, 0);
		if (!err)
			snprintf(base, sizeof(base), "%s/tracing", path);
	}
	if (err) {
		snprintf(why, len, "tracefs is not mounted");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getpid/id",
		 base);
	err = read_small(path, id, sizeof(id));
	if (err) {
		errno_text(e, sizeof(e), -err,
			   err == -ENOENT ? "kernel built without "
					    "CONFIG_FTRACE_SYSCALLS" : NULL);
		snprintf(why, len, "%s: %s", path, e);
		goto out;
	}
	fd = prog_load(c, &s, 0, why, len);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = strtoull(id, NULL, 10);
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1,
			   PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		errno_text(why, len, -err, "perf_event_open on the tracepoint "
					   "failed");
		goto out;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, fd)) {
		err = -errno;
		errno_text(why, len, -err, "PERF_EVENT_IOC_SET_BPF failed");
		goto out;
	}
	err = 0;
out:
	if (pfd >= 0)
		close(pfd);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Attaches a raw tracepoint program to sys_enter; needs no tracefs. */
static int raw_tracepoint(const struct probe_ctx *c, char *why, size_t len)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_RAW_TRACEPOINT,
		.imm = 0,
		.license = "GPL",
		.cap = PROBE_CAP_PERFMON,
		.cap_name = "CAP_PERFMON",
		.config = "CONFIG_BPF_EVENTS",
	};
	int fd, lfd, err = 0;

	fd = prog_load(c, &s, 0, why, len);
	if (fd < 0)
		return fd;
	lfd = bpf_raw_tracepoint_open("sys_enter", fd);
	if (lfd < 0) {
		err = lfd == -1 ? -errno : lfd;
		bpf_errno_text(c, -err, &s, NULL, why, len);
		goto out;
	}
	close(lfd);
out:
	close(fd);
	return err;
}

/*
 * The trace programs attach to raw tracepoints, so those decide. Classic
 * tracepoints are tried only to explain a failure: attaching one enables
 * the syscall tracepoints and detaching waits for RCU grace periods, which
 * cost about 100 ms of the probe here against under 20 ms without it.
 */
static void probe_bpf_tracepoint(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_BPF_TRACEPOINT];
	char raw[160], classic[160];

	if (!raw_tracepoint(c, raw, sizeof(raw))) {
		item_set(it, true, "raw_tracepoint sys_enter attached");
		return;
	}
	if (!classic_tracepoint(c, classic, sizeof(classic)))
		item_set(it, false, "raw_tracepoint: %s; tracepoint "
			 "syscalls/sys_enter_getpid attaches, but the trace "
			 "programs need raw tracepoints", raw);
	else
		item_set(it, false, "raw_tracepoint: %s; tracepoint: %s", raw,
			 classic);
}

/* The active LSMs from securityfs. 0, or -errno / -ENOENT if unreadable. */
static int read_lsm_list(char *buf, size_t len)
{
	char base[PATH_MAX], path[PATH_MAX + 8];
	int err;

	err = cw_mountinfo_find("securityfs", NULL, NULL, base, sizeof(base),
				NULL, 0);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/lsm", base);
	return read_small(path, buf, len);
}

/*
 * Whether an fentry program on the same function is refused as well: both
 * go through BPF trampolines, so that names the likely cause.
 */
static bool fentry_refused(const struct probe_ctx *c, uint32_t btf_id)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_TRACING,
		.attach = BPF_TRACE_FENTRY,
		.imm = 0,
		.license = "GPL",
		.cap = PROBE_CAP_PERFMON,
		.cap_name = "CAP_PERFMON",
	};
	char why[160];
	int fd;

	fd = prog_load(c, &s, btf_id, why, sizeof(why));
	if (fd < 0)
		return true;
	close(fd);
	return false;
}

/*
 * Whether this kernel has BPF LSM built in, without kernel BTF: an LSM
 * program with no attach target reaches the verifier, which says it needs
 * one, only when the program type exists; an unknown type is refused
 * before any verifier message.
 */
static bool lsm_prog_type_known(const struct probe_ctx *c,
				const struct prog_spec *s)
{
	char why[160];
	int fd;

	fd = prog_load(c, s, 0, why, sizeof(why));
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return fd != -EINVAL || strstr(why, "verifier:");
}

/*
 * Loads and attaches an LSM program on file_open that allows everything.
 * An attached program only runs when "bpf" is among the active LSMs, so
 * both are required; when the list cannot be read the answer is no.
 */
static void probe_bpf_lsm(struct probe_ctx *c)
{
	static const struct prog_spec s = {
		.type = BPF_PROG_TYPE_LSM,
		.attach = BPF_LSM_MAC,
		.imm = 0,
		.license = "GPL",
		.cap = PROBE_CAP_PERFMON,
		.cap_name = "CAP_PERFMON",
		.config = "CONFIG_BPF_LSM",
	};
	struct cw_probe_item *it = &c->p->item[CW_FEAT_BPF_LSM];
	char lsm[256], why[160];
	int err, id, fd, lfd;
	bool listed;

	err = read_lsm_list(lsm, sizeof(lsm));
	listed = !err && cw_mountinfo_has(lsm, "bpf", ",");
	if (!err && !listed) {
		if (lsm_prog_type_known(c, &s))
			item_set(it, false, "bpf is not in the active LSM list "
					    "(%s); it needs lsm=...,bpf on the "
					    "kernel command line", lsm);
		else
			item_set(it, false, "bpf is not in the active LSM list "
					    "(%s) and the kernel was built "
					    "without CONFIG_BPF_LSM (it does "
					    "not know LSM programs)", lsm);
		return;
	}
	err = load_btf(c);
	if (err < 0) {
		errno_text(why, sizeof(why), -err, NULL);
		item_set(it, false, "needs kernel BTF, which is unavailable "
				    "(%s)", why);
		return;
	}
	id = btf__find_by_name_kind(c->btf, "bpf_lsm_file_open", BTF_KIND_FUNC);
	if (id < 0) {
		item_set(it, false, "bpf_lsm_file_open not in kernel BTF: "
				    "kernel built without CONFIG_BPF_LSM");
		return;
	}
	fd = prog_load(c, &s, (uint32_t)id, why, sizeof(why));
	if (fd < 0) {
		/* A missing capability explains itself; otherwise look wider. */
		bool caps = has_cap(c, PROBE_CAP_SYS_ADMIN) ||
			    (has_cap(c, PROBE_CAP_BPF) &&
			     has_cap(c, PROBE_CAP_PERFMON));

		item_set(it, false, "load refused: %s%s", why,
			 (fd != -EPERM || caps) &&
					 fentry_refused(c, (uint32_t)id) ?
				 "; fentry too: no BPF trampolines" : "");
		return;
	}
	lfd = bpf_link_create(fd, 0, BPF_LSM_MAC, NULL);
	if (lfd < 0 && (lfd == -EINVAL || (lfd == -1 && errno == EINVAL)))
		lfd = bpf_raw_tracepoint_open(NULL, fd);	/* before links */
	if (lfd < 0) {
		int e = lfd == -1 ? errno : -lfd;

		bpf_errno_text(c, e, &s, NULL, why, sizeof(why));
		item_set(it, false, "loads, attach refused: %s%s", why,
			 e == PROBE_ENOTSUPP ? " (no BPF trampolines)" : "");
		goto out;
	}
	close(lfd);
	if (listed)
		item_set(it, true, "file_open program attached; bpf is in the "
				   "active LSM list");
	else
		item_set(it, false, "program attaches, but the active LSM list "
				    "is unreadable (securityfs not mounted), "
				    "so whether it would run is unknown");
out:
	close(fd);
}

/* ------------------------------------------------------------------ */
/* fanotify                                                            */

/* Without it bpf_net reads listeners from /proc/net, which names their
 * user but not their cgroup. */
static void probe_sock_diag_inet(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_SOCK_DIAG_INET];
	int ret = cw_netscan_inet_diag();

	if (!ret)
		item_set(it, true, "listeners are read with their cgroup");
	else
		item_errno(it, -ret, ret == -ENOENT ?
			   "no inet sock_diag (CONFIG_INET_DIAG, or its module not loaded): local services guard only root's and the agent's listeners" :
			   NULL);
}

/* The holder the calls' namespaces need, started and ended once. */
static void probe_call_namespaces(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_CALL_NAMESPACES];
	struct cw_ns_holder h;
	struct cw_error err = { 0 };
	int ret = cw_ns_holder_start(NULL, NULL, &h, &err);

	if (!ret) {
		item_set(it, true, h.memfd_noexec ?
			 "own IPC, pid and mount namespaces, /proc, vm.memfd_noexec" :
			 "own IPC, pid and mount namespaces and /proc; no vm.memfd_noexec (before 6.3): memfds stay executable");
		cw_ns_holder_stop(&h);
	} else {
		item_errno(it, -ret, ret == -EPERM ?
			   "new namespaces need CAP_SYS_ADMIN (run the agent as root)" :
			   err.text);
	}
}

/* A holder with a user namespace of its own: the kernel's per-user limits
 * then count per call (kernel/namespaces.h). */
static void probe_call_userns(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_CALL_USERNS];
	struct cw_ns_mounts m = { .userns = true };
	struct cw_ns_holder h;
	struct cw_error err = { 0 };
	int ret;

	if (!c->p->item[CW_FEAT_CALL_NAMESPACES].ok) {
		item_set(it, false, "needs call_namespaces");
		return;
	}
	ret = cw_ns_holder_start(NULL, &m, &h, &err);
	if (ret < 0) {
		item_errno(it, -ret, err.text);
		return;
	}
	if (h.userns >= 0)
		item_set(it, true, "per-user kernel limits (inotify, message queues, pending signals, processes) count per call");
	else
		item_errno(it, h.userns_err,
			   "no user namespace per call: the kernel's per-user limits (inotify instances, message queues, pending signals) are shared by all calls");
	cw_ns_holder_stop(&h);
}

static void probe_fanotify(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_FANOTIFY];
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	int fd;

	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (fd < 0) {
		int e = errno;

		if (e == ENOSYS)
			item_errno(it, e, "kernel built without "
					  "CONFIG_FANOTIFY");
		else if (e == EPERM)
			item_errno(it, e, "FAN_CLASS_CONTENT needs "
					  "CAP_SYS_ADMIN");
		else if (e == EINVAL)
			item_errno(it, e, "FAN_CLASS_CONTENT refused: kernel "
					  "built without "
					  "CONFIG_FANOTIFY_ACCESS_PERMISSIONS");
		else
			item_errno(it, e, NULL);
		return;
	}
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/%sXXXXXX", tmp, c->prefix);
	if (!mkdtemp(dir)) {
		item_errno(it, errno, "cannot create a directory to mark");
		goto out;
	}
	/* Nothing opens this fresh directory, so no event can wait on us. */
	if (fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, dir)) {
		int e = errno;

		if (e == EINVAL)
			item_errno(it, e, "FAN_OPEN_PERM refused: kernel built "
					  "without "
					  "CONFIG_FANOTIFY_ACCESS_PERMISSIONS");
		else
			item_errno(it, e, "fanotify_mark with FAN_OPEN_PERM "
					  "failed");
	} else {
		item_set(it, true, "FAN_CLASS_CONTENT with FAN_OPEN_PERM marks");
	}
	rmdir(dir);
out:
	close(fd);
}

static void probe_kaudit(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_KAUDIT];
	struct cw_error err = { 0 };
	int ret = cw_kaudit_probe(&err);

	if (ret)
		item_set(it, false, "%s", err.text);
	else
		item_set(it, true, "NETLINK_AUDIT, no audit daemon running, a loginuid per call");
}

static void probe_proc_events(struct probe_ctx *c)
{
	struct cw_probe_item *it = &c->p->item[CW_FEAT_PROC_EVENTS];
	struct cw_error err = { 0 };

	if (cw_procev_probe(&err))
		item_set(it, false, "%s", err.text);
	else
		item_set(it, true, "NETLINK_CONNECTOR: a child's fork and exit seen");
}

/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*run)(struct probe_ctx *c);
} features[CW_FEAT_COUNT] = {
	[CW_FEAT_SECCOMP] = { "seccomp", probe_seccomp },
	[CW_FEAT_SECCOMP_NOTIFY] = { "seccomp_notify", probe_seccomp_notify },
	[CW_FEAT_LANDLOCK] = { "landlock", probe_landlock },
	/* cgroup2 runs before v1: the v1 reasons mention v2's controllers. */
	[CW_FEAT_CGROUP2] = { "cgroup2", probe_cgroup2 },
	[CW_FEAT_CGROUP_V1_MEMORY] = { "cgroup_v1_memory",
				       probe_cgroup_v1_memory },
	[CW_FEAT_CGROUP_V1_PIDS] = { "cgroup_v1_pids", probe_cgroup_v1_pids },
	[CW_FEAT_BPF_CGROUP_SOCK_ADDR] = { "bpf_cgroup_sock_addr",
					   probe_bpf_cgroup_sock_addr },
	[CW_FEAT_BPF_CGROUP_SOCK] = { "bpf_cgroup_sock",
				      probe_bpf_cgroup_sock },
	[CW_FEAT_BPF_CGROUP_SKB] = { "bpf_cgroup_skb", probe_bpf_cgroup_skb },
	[CW_FEAT_BPF_RINGBUF] = { "bpf_ringbuf", probe_bpf_ringbuf },
	[CW_FEAT_KERNEL_BTF] = { "kernel_btf", probe_kernel_btf },
	[CW_FEAT_BPF_TRACEPOINT] = { "bpf_tracepoint", probe_bpf_tracepoint },
	[CW_FEAT_BPF_LSM] = { "bpf_lsm", probe_bpf_lsm },
	[CW_FEAT_FANOTIFY] = { "fanotify", probe_fanotify },
	[CW_FEAT_KAUDIT] = { "kaudit", probe_kaudit },
	[CW_FEAT_PROC_EVENTS] = { "proc_events", probe_proc_events },
	[CW_FEAT_SOCK_DIAG_INET] = { "sock_diag_inet", probe_sock_diag_inet },
	[CW_FEAT_CALL_NAMESPACES] = { "call_namespaces",
				      probe_call_namespaces },
	[CW_FEAT_CALL_USERNS] = { "call_user_namespace", probe_call_userns },
};

const char *cw_probe_name(enum cw_feature f)
{
	if ((unsigned int)f >= CW_FEAT_COUNT) {
		errno = EINVAL;
		return NULL;
	}
	return features[f].name;
}

/*
 * CW_PROBE_DISABLE=name,name: the features to report as missing without
 * probing them. Unknown names are listed in one warning.
 */
static void parse_disable(bool *off)
{
	const char *env = getenv("CW_PROBE_DISABLE");
	char unknown[256] = "";
	size_t used = 0;

	if (!env)
		return;
	while (*env) {
		size_t n;
		int f;

		env += strspn(env, ", \t");
		n = strcspn(env, ", \t");
		if (!n)
			break;
		for (f = 0; f < CW_FEAT_COUNT; f++) {
			if (strlen(features[f].name) == n &&
			    !strncmp(features[f].name, env, n)) {
				off[f] = true;
				break;
			}
		}
		if (f == CW_FEAT_COUNT && used < sizeof(unknown))
			used += (size_t)snprintf(unknown + used,
						 sizeof(unknown) - used,
						 "%s%.*s", used ? ", " : "",
						 (int)n, env);
		env += n;
	}
	if (unknown[0])
		fprintf(stderr, "cmdwarden: warning: CW_PROBE_DISABLE names "
				"unknown features, ignored: %s\n", unknown);
}

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

void cw_probe_run(struct cw_probe *p)
{
	struct probe_ctx c = { .p = p };
	bool off[CW_FEAT_COUNT] = { false };
	libbpf_print_fn_t old;
	int f, saved_errno = errno;

	memset(p, 0, sizeof(*p));
	snprintf(c.prefix, sizeof(c.prefix), "cw-probe-%d-", (int)getpid());
	parse_disable(off);
	read_caps(&c);
	old = libbpf_set_print(silent_print);
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		if (off[f])
			item_set(&p->item[f], false, DISABLED_REASON);
		else
			features[f].run(&c);
		/* Every "no" carries its reason. */
		if (!p->item[f].ok && !p->item[f].detail[0])
			item_set(&p->item[f], false, "unavailable");
	}
	libbpf_set_print(old);
	btf__free(c.btf);
	errno = saved_errno;
}

/* A JSON string even from bytes that are not UTF-8 (paths, truncation). */
static json_t *jstr(const char *s)
{
	char clean[256];
	json_t *j = json_string(s);
	size_t i;

	if (j)
		return j;
	snprintf(clean, sizeof(clean), "%s", s);
	for (i = 0; clean[i]; i++)
		if ((unsigned char)clean[i] >= 0x80)
			clean[i] = '?';
	return json_string(clean);
}

json_t *cw_probe_json(const struct cw_probe *p)
{
	json_t *root, *feats, *cg;
	int f;

	root = json_object();
	feats = json_object();
	cg = json_pack("{s:o, s:o}", "mount", jstr(p->cgroup2_mount),
		       "controllers", jstr(p->cgroup2_controllers));
	if (!root || !feats || !cg)
		goto fail;
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		json_t *o = json_pack("{s:b, s:o}", "ok", p->item[f].ok,
				      "detail", jstr(p->item[f].detail));

		if (!o || json_object_set_new(feats, features[f].name, o))
			goto fail;
	}
	if (json_object_set_new(root, "features", feats)) {
		feats = NULL;
		goto fail;
	}
	feats = NULL;
	if (json_object_set_new(root, "landlock_abi",
				json_integer(p->landlock_abi)))
		goto fail;
	if (json_object_set_new(root, "cgroup2", cg)) {
		cg = NULL;
		goto fail;
	}
	return root;
fail:
	json_decref(cg);
	json_decref(feats);
	json_decref(root);
	errno = ENOMEM;
	return NULL;
}
