// SPDX-License-Identifier: Apache-2.0
/*
 * The seccomp filter. The default profile allows everything except the
 * groups below, which are answered with EPERM (clone3 with ENOSYS). Calls
 * from any other architecture than the native one, x32 on x86_64 and
 * int 0x80 from a 64-bit process included, kill the process.
 *
 * The filter is compiled with libseccomp once and kept as a classic BPF
 * program, so that installing it in a freshly forked child is one syscall
 * and touches neither the heap nor any lock.
 *
 * Denials are audited through seccomp user notification: the profile's
 * denied syscalls (all but clone3, whose ENOSYS is libc's cue to fall back
 * to clone) return SECCOMP_RET_USER_NOTIF instead of an errno, the child
 * installs the filter with a listener and hands it to the agent, and the
 * agent answers every notification with EPERM and describes it. Allowed
 * syscalls run the same filter as before and never reach the agent. A
 * second program, with the errno actions, is kept for kernels or callers
 * that cannot take a listener; its denials are not seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

#include "kernel/seccomp.h"
#include "lib/sockfamily.h"

#define SYSCALLS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * The one list of what the default profile denies; `cmdwarden
 * seccomp-profile` prints it. Two names are special-cased by the builder:
 * clone is refused only when its flags ask for a new namespace, and clone3
 * answers ENOSYS (see the "namespaces" reason).
 */
const struct cw_seccomp_group cw_seccomp_groups[] = {
	{
		.name = "ptrace",
		.reason = "reads, writes, compares or moves the memory, "
			  "registers and descriptors of other processes, other "
			  "calls' and the agent's included",
		.syscalls = SYSCALLS("ptrace", "process_vm_readv",
				     "process_vm_writev", "pidfd_getfd", "kcmp",
				     "process_madvise", "migrate_pages",
				     "move_pages"),
	},
	{
		.name = "bpf",
		.reason = "loads programs into the kernel, can detach the "
			  "agent's own enforcement programs and observe other "
			  "processes and the kernel",
		.syscalls = SYSCALLS("bpf", "perf_event_open"),
	},
	{
		.name = "kernel_modules",
		.reason = "loads or unloads kernel code, or replaces the "
			  "running kernel",
		.syscalls = SYSCALLS("init_module", "finit_module",
				     "delete_module", "kexec_load",
				     "kexec_file_load"),
	},
	{
		.name = "mount",
		.reason = "changes what a path names: can hide or replace the "
			  "files that path-based rules protect, or leave a "
			  "changed root",
		.syscalls = SYSCALLS("mount", "umount2", "pivot_root",
				     "move_mount", "fsopen", "fsconfig",
				     "fsmount", "fspick", "open_tree",
				     "mount_setattr", "chroot"),
	},
	{
		.name = "namespaces",
		.reason = "a new namespace escapes the sandbox's view of users, "
			  "mounts and network and opens kernel attack surface; "
			  "clone is refused only with a CLONE_NEW* flag, and "
			  "clone3 answers ENOSYS (its flags sit behind a pointer "
			  "the filter cannot read) so libc falls back to clone",
		.syscalls = SYSCALLS("unshare", "setns", "clone", "clone3"),
	},
	{
		.name = "keyring",
		.reason = "kernel keyrings are shared beyond the sandbox and "
			  "hold other users' and the system's secrets",
		.syscalls = SYSCALLS("keyctl", "add_key", "request_key"),
	},
	{
		.name = "io_uring",
		.reason = "performs I/O on the kernel's side, out of reach of "
			  "this filter",
		.syscalls = SYSCALLS("io_uring_setup", "io_uring_enter",
				     "io_uring_register"),
	},
	{
		.name = "userfaultfd",
		.reason = "stalls kernel page faults at chosen points, the "
			  "usual tool for winning kernel races",
		.syscalls = SYSCALLS("userfaultfd"),
	},
	{
		.name = "swap",
		.reason = "changes the machine's swap devices",
		.syscalls = SYSCALLS("swapon", "swapoff"),
	},
	{
		.name = "reboot",
		.reason = "reboots or halts the machine",
		.syscalls = SYSCALLS("reboot"),
	},
	{
		.name = "clock",
		.reason = "sets the system clock, which every timestamp, "
			  "timeout and certificate check relies on; adjtimex "
			  "and clock_adjtime are denied whole, reads included, "
			  "because the mode sits in a struct the filter cannot "
			  "read",
		.syscalls = SYSCALLS("settimeofday", "clock_settime",
				     "clock_adjtime", "adjtimex"),
	},
	{
		.name = "accounting",
		.reason = "switches process accounting or changes disk quotas "
			  "for the whole machine",
		.syscalls = SYSCALLS("acct", "quotactl", "quotactl_fd"),
	},
	{
		.name = "handles",
		.reason = "opens files by handle, bypassing path lookup and the "
			  "checks built on it",
		.syscalls = SYSCALLS("open_by_handle_at", "name_to_handle_at",
				     "lookup_dcookie"),
	},
	{
		.name = "raw_io",
		.reason = "grants direct access to hardware I/O ports "
			  "(x86 only)",
		.syscalls = SYSCALLS("iopl", "ioperm"),
	},
	{
		.name = "syslog",
		.reason = "reads the kernel log, which leaks kernel addresses, "
			  "or clears it",
		.syscalls = SYSCALLS("syslog"),
	},
	{
		.name = "vhangup",
		.reason = "hangs up a terminal that other processes share",
		.syscalls = SYSCALLS("vhangup"),
	},
	{
		.name = "fanotify",
		.reason = "watches the whole filesystem; permission events can "
			  "stall every process's file access, the agent's "
			  "included",
		.syscalls = SYSCALLS("fanotify_init"),
	},
	{
		.name = "socket_families",
		.reason = "only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK with "
			  "NETLINK_ROUTE are allowed, plus what "
			  "sandbox.seccomp.socket_families lists (AF_PACKET: "
			  "network.raw_sockets): the network programs see IP "
			  "sockets only, AF_VSOCK reaches the VM's host, "
			  "NETLINK_SOCK_DIAG lists every socket of the machine, "
			  "and AF_ALG, AF_XDP and the rest are kernel code an "
			  "ordinary command never needs",
		.syscalls = SYSCALLS("socket", "socketpair"),
	},
	{
		.name = "personality",
		.reason = "ADDR_NO_RANDOMIZE turns off address randomisation "
			  "for what the process executes, READ_IMPLIES_EXEC "
			  "makes readable memory executable, other personas "
			  "change what the kernel reports; the query "
			  "(0xffffffff) and PER_LINUX (0) stay allowed, and "
			  "seccomp.allow lifts the rest",
		.syscalls = SYSCALLS("personality"),
	},
	{
		.name = "legacy",
		.reason = "16-bit segment descriptors and a.out-era library "
			  "loading, which only emulators and programs of the "
			  "last century use, and which have a history of "
			  "kernel bugs",
		.syscalls = SYSCALLS("modify_ldt", "uselib"),
	},
	{
		.name = "hostname",
		.reason = "renames the machine for every process in it, the "
			  "sandbox's own services included (the kernel lets a "
			  "root command do it)",
		.syscalls = SYSCALLS("sethostname", "setdomainname"),
	},
};
const size_t cw_seccomp_ngroups = CW_ARRAY_SIZE(cw_seccomp_groups);

/* Namespace flags valid for clone(). CLONE_NEWTIME (0x80) is left out: in
 * clone's flags those bits are the exit signal. */
static const unsigned long cw_clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

struct cw_seccomp_prog {
	struct sock_fprog fprog;	/* denials as errno */
	struct sock_fprog notify;	/* denials to a listener; len 0 if none */
};

static bool strv_has(const struct cw_strv *v, const char *name, size_t upto)
{
	size_t i;

	for (i = 0; i < v->n && i < upto; i++)
		if (v->v[i] && strcmp(v->v[i], name) == 0)
			return true;
	return false;
}

static int check_names(const struct cw_strv *v, const char *what,
		       struct cw_error *err)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		if (!v->v[i] ||
		    seccomp_syscall_resolve_name(v->v[i]) == __NR_SCMP_ERROR) {
			cw_error_set(err, "unknown syscall \"%s\" in %s[%zu]",
				     v->v[i] ? v->v[i] : "(null)", what, i);
			if (err)
				snprintf(err->path, sizeof(err->path),
					 "sandbox.seccomp.%s[%zu]", what, i);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * What the launcher itself calls once the filter is in place: sendmsg hands
 * the listener to the agent, execve starts the shell, and a failed execve
 * is reported with write before exit_group. Denied, the first would wait
 * for an answer from an agent that is itself waiting for the launch, and
 * no command could start without the others; so a policy cannot deny them.
 */
static const char *const launcher_calls[] = {
	"sendmsg", "execve", "write", "exit_group",
};

static int check_launcher(const struct cw_strv *deny, struct cw_error *err)
{
	size_t i, j;

	for (i = 0; i < deny->n; i++)
		for (j = 0; j < CW_ARRAY_SIZE(launcher_calls); j++) {
			if (strcmp(deny->v[i], launcher_calls[j]) != 0)
				continue;
			cw_error_set(err, "\"%s\" in deny[%zu] cannot be "
				     "denied: the launcher calls it after the "
				     "filter is in place, to start the "
				     "command", deny->v[i], i);
			if (err)
				snprintf(err->path, sizeof(err->path),
					 "sandbox.seccomp.deny[%zu]", i);
			return -EINVAL;
		}
	return 0;
}

/* The socket families the profile lets a command create: bit n of
 * families is family n, bit n of netlink is netlink protocol n. */
struct cw_socket_allow {
	uint64_t families;
	uint32_t netlink;
	bool netlink_all;	/* "AF_NETLINK" listed: every protocol */
};

static int socket_allow_init(const struct cw_sandbox *sb,
			     struct cw_socket_allow *a, struct cw_error *err)
{
	const struct cw_strv *list = &sb->seccomp.socket_families;
	int family, protocol, rc;
	size_t i;

	a->families = 1ull << AF_UNIX | 1ull << AF_INET | 1ull << AF_INET6 |
		      1ull << AF_NETLINK;
	a->netlink = 1u << NETLINK_ROUTE;
	a->netlink_all = false;
	if (sb->network.raw_sockets)
		a->families |= 1ull << AF_PACKET;
	for (i = 0; i < list->n; i++) {
		rc = cw_sockfamily_parse(list->v[i] ? list->v[i] : "", &family,
					 &protocol);
		if (rc == 0 && family == AF_PACKET)
			rc = -EINVAL;
		if (rc < 0) {
			cw_error_set(err, "socket family \"%s\" in "
				     "socket_families[%zu] is not one this "
				     "profile can allow", list->v[i]
				     ? list->v[i] : "(null)", i);
			if (err)
				snprintf(err->path, sizeof(err->path),
					 "sandbox.seccomp.socket_families[%zu]",
					 i);
			return -EINVAL;
		}
		a->families |= 1ull << family;
		if (family == AF_NETLINK && protocol < 0)
			a->netlink_all = true;
		else if (family == AF_NETLINK)
			a->netlink |= 1u << protocol;
	}
	return 0;
}

/* Rules that refuse nr whenever argument arg is a value outside allowed
 * (bits below limit), with *also as a further condition when given. One
 * comparison per argument is all libseccomp takes in a rule, so each
 * refused value below the highest allowed one gets its own rule and one
 * more rule covers everything above it, values with high bits set
 * included. */
static int deny_outside(scmp_filter_ctx ctx, uint32_t deny, int nr,
			unsigned arg, uint64_t allowed, unsigned limit,
			const struct scmp_arg_cmp *also)
{
	unsigned hi = 0, v;
	int rc;

	for (v = 0; v < limit; v++)
		if (allowed >> v & 1)
			hi = v;
	for (v = 0; v <= hi + 1; v++) {
		struct scmp_arg_cmp cmp[2];
		unsigned n = 0;

		if (v <= hi && allowed >> v & 1)
			continue;
		if (also)
			cmp[n++] = *also;
		cmp[n++] = (struct scmp_arg_cmp){
			.arg = arg,
			.op = v <= hi ? SCMP_CMP_EQ : SCMP_CMP_GE,
			.datum_a = v,
		};
		rc = seccomp_rule_add_array(ctx, deny, nr, n, cmp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* socket(family, type, protocol) and socketpair(family, ...): families
 * outside the allowed set, and for AF_NETLINK protocols outside it. */
static int add_socket_rules(scmp_filter_ctx ctx, uint32_t deny, int nr,
			    const struct cw_socket_allow *a)
{
	const struct scmp_arg_cmp netlink = SCMP_A0(SCMP_CMP_EQ, AF_NETLINK);
	int rc;

	rc = deny_outside(ctx, deny, nr, 0, a->families, CW_SOCKFAMILY_LIMIT,
			  NULL);
	if (rc < 0 || a->netlink_all || !(a->families >> AF_NETLINK & 1))
		return rc;
	return deny_outside(ctx, deny, nr, 2, a->netlink,
			    CW_NETLINK_PROTO_LIMIT, &netlink);
}

/* personality(persona): the kernel reads an unsigned int, so only the low
 * 32 bits count. Allowed are 0 (PER_LINUX) and 0xffffffff (the query);
 * every other value has some bit i set with bit i+1 (mod 32) clear, so 32
 * masked comparisons, one per such pair, refuse exactly the rest. */
static int add_personality_rules(scmp_filter_ctx ctx, uint32_t deny, int nr)
{
	unsigned i;
	int rc;

	for (i = 0; i < 32; i++) {
		uint64_t bit = 1ull << i, next = 1ull << ((i + 1) % 32);

		rc = seccomp_rule_add(ctx, deny, nr, 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next,
					      bit));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Adds the rule a denied name gets. Syscalls that do not exist on this
 * architecture cannot be called through the native ABI (and every other ABI
 * is killed), so they need no rule. sock is set for the profile's names,
 * whose argument rules it decides. */
static int add_deny(scmp_filter_ctx ctx, uint32_t deny, const char *name,
		    const struct cw_socket_allow *sock, struct cw_error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	bool from_profile = sock != NULL;
	int rc = 0;
	size_t i;

	if (nr == __NR_SCMP_ERROR) {
		cw_error_set(err, "libseccomp does not know syscall \"%s\"",
			     name);
		return -EINVAL;
	}
	if (nr < 0)
		return 0;

	if (strcmp(name, "clone3") == 0) {
		/* EPERM would stop libc's fallback to clone. */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	} else if (from_profile && strcmp(name, "clone") == 0) {
		for (i = 0; i < CW_ARRAY_SIZE(cw_clone_ns_flags) && !rc; i++)
			rc = seccomp_rule_add(ctx, deny, nr, 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ,
						      cw_clone_ns_flags[i],
						      cw_clone_ns_flags[i]));
	} else if (from_profile && (strcmp(name, "socket") == 0 ||
				    strcmp(name, "socketpair") == 0)) {
		rc = add_socket_rules(ctx, deny, nr, sock);
	} else if (from_profile && strcmp(name, "personality") == 0) {
		rc = add_personality_rules(ctx, deny, nr);
	} else {
		rc = seccomp_rule_add(ctx, deny, nr, 0);
	}
	if (rc < 0)
		cw_error_set(err, "seccomp rule for \"%s\": %s", name,
			     strerror(-rc));
	return rc;
}

static int build_rules(scmp_filter_ctx ctx, uint32_t deny_act,
		       const struct cw_sandbox *sb, bool profile_default,
		       struct cw_error *err)
{
	const struct cw_strv *deny = &sb->seccomp.deny;
	const struct cw_strv *allow = &sb->seccomp.allow;
	struct cw_socket_allow sock;
	bool families_ruled = false;
	size_t g, i;
	int rc;

	rc = socket_allow_init(sb, &sock, err);
	if (rc < 0)
		return rc;
	for (g = 0; profile_default && g < cw_seccomp_ngroups; g++) {
		const char *const *s;

		for (s = cw_seccomp_groups[g].syscalls; *s; s++) {
			/* deny wins over allow, and is added below */
			if (strv_has(allow, *s, allow->n) ||
			    strv_has(deny, *s, deny->n))
				continue;
			rc = add_deny(ctx, deny_act, *s, &sock, err);
			if (rc < 0)
				return rc;
			if (strcmp(*s, "socket") == 0)
				families_ruled = true;
		}
	}
	for (i = 0; i < deny->n; i++) {
		if (strv_has(deny, deny->v[i], i))
			continue;
		rc = add_deny(ctx, deny_act, deny->v[i], NULL, err);
		if (rc < 0)
			return rc;
	}
	/* network.raw_sockets false: cgroup-BPF sees only IPv4 and IPv6
	 * sockets, so packet sockets are refused here, with or without the
	 * profile's family rules (which refuse them already). */
	if (!sb->network.raw_sockets && !families_ruled &&
	    !strv_has(deny, "socket", deny->n)) {
		rc = seccomp_rule_add(ctx, deny_act, SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_EQ, AF_PACKET));
		if (rc < 0) {
			cw_error_set(err, "seccomp rule for packet sockets: %s",
				     strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Reads fd from offset 0 to its end. */
static int read_back(int fd, struct cw_buf *b)
{
	char chunk[4096];
	ssize_t n;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		if (cw_buf_append(b, chunk, (size_t)n) < 0)
			return -ENOMEM;
	}
}

/* libseccomp 2.5 exports only to a descriptor: a memfd, else a pipe (a
 * maximal program of 4096 instructions fits in a default pipe buffer). */
static int export_bpf(scmp_filter_ctx ctx, struct cw_buf *b)
{
	int fds[2] = { -1, -1 };
	int rc;

	fds[0] = memfd_create("cw-seccomp", MFD_CLOEXEC);
	if (fds[0] >= 0) {
		rc = seccomp_export_bpf(ctx, fds[0]);
		if (rc < 0)
			goto out;
		if (lseek(fds[0], 0, SEEK_SET) < 0) {
			rc = -errno;
			goto out;
		}
		rc = read_back(fds[0], b);
		goto out;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	rc = seccomp_export_bpf(ctx, fds[1]);
	close(fds[1]);
	fds[1] = -1;
	if (rc < 0)
		goto out;
	rc = read_back(fds[0], b);
out:
	if (fds[1] >= 0)
		close(fds[1]);
	if (fds[0] >= 0)
		close(fds[0]);
	return rc;
}

/* Compiles the filter with deny_act for denied syscalls into out. */
static int compile(const struct cw_sandbox *sb, bool profile_default,
		   uint32_t deny_act, struct sock_fprog *out,
		   struct cw_error *err)
{
	struct cw_buf b = { 0 };
	scmp_filter_ctx ctx;
	size_t n;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		cw_error_set(err, "seccomp_init failed");
		return -ENOMEM;
	}
	/* Every other ABI (i386 via int 0x80, x32) is killed; libseccomp
	 * sends x32 numbers on the x86_64 audit arch here too. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			      SCMP_ACT_KILL_PROCESS);
	if (rc < 0) {
		cw_error_set(err, "seccomp: kill-process action: %s",
			     strerror(-rc));
		goto out;
	}
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		cw_error_set(err, "seccomp: binary tree optimisation: %s",
			     strerror(-rc));
		goto out;
	}
	rc = build_rules(ctx, deny_act, sb, profile_default, err);
	if (rc < 0)
		goto out;
	rc = export_bpf(ctx, &b);
	if (rc < 0) {
		cw_error_set(err, "seccomp: exporting the filter: %s",
			     strerror(-rc));
		goto out;
	}
	n = b.len / sizeof(struct sock_filter);
	if (n == 0 || b.len % sizeof(struct sock_filter) || n > BPF_MAXINSNS) {
		cw_error_set(err, "seccomp: exported filter of %zu bytes is "
			     "not a usable program", b.len);
		rc = n > BPF_MAXINSNS ? -E2BIG : -EINVAL;
		goto out;
	}
	/* The buffer holds the instructions; it is handed over, not copied. */
	out->len = (unsigned short)n;
	out->filter = (struct sock_filter *)(void *)b.data;
	b.data = NULL;
	rc = 0;
out:
	seccomp_release(ctx);
	cw_buf_free(&b);
	return rc;
}

struct cw_seccomp_prog *cw_seccomp_build(const struct cw_sandbox *sb,
					 struct cw_error *err)
{
	struct cw_seccomp_prog *p = NULL;
	const char *profile;
	bool profile_default;
	int rc;

	if (!sb) {
		cw_error_set(err, "no sandbox");
		rc = -EINVAL;
		goto out;
	}
	profile = sb->seccomp.profile ? sb->seccomp.profile : "default";
	if (strcmp(profile, "default") == 0) {
		profile_default = true;
	} else if (strcmp(profile, "none") == 0) {
		profile_default = false;
	} else {
		cw_error_set(err, "unknown seccomp profile \"%s\" "
			     "(expected \"default\" or \"none\")", profile);
		if (err)
			snprintf(err->path, sizeof(err->path),
				 "sandbox.seccomp.profile");
		rc = -EINVAL;
		goto out;
	}
	rc = check_names(&sb->seccomp.deny, "deny", err);
	if (rc < 0)
		goto out;
	rc = check_launcher(&sb->seccomp.deny, err);
	if (rc < 0)
		goto out;
	rc = check_names(&sb->seccomp.allow, "allow", err);
	if (rc < 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		cw_error_set(err, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = compile(sb, profile_default, SCMP_ACT_ERRNO(EPERM), &p->fprog,
		     err);
	if (rc < 0)
		goto out;
	/* libseccomp refuses the notify action where the kernel lacks it:
	 * then denials stay errno-only, and are not audited. */
	if (compile(sb, profile_default, SCMP_ACT_NOTIFY, &p->notify, NULL))
		memset(&p->notify, 0, sizeof(p->notify));
	rc = 0;
out:
	if (rc < 0) {
		cw_seccomp_free(p);
		errno = -rc;
		return NULL;
	}
	return p;
}

int cw_seccomp_install(const struct cw_seccomp_prog *p)
{
	if (!p)
		return -EINVAL;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p->fprog) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	/* Kernels before 3.17 have only the prctl interface. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p->fprog, 0, 0) == 0)
		return 0;
	return -errno;
}

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

int cw_seccomp_install_listener(const struct cw_seccomp_prog *p,
				int *listener)
{
	long fd;

	*listener = -1;
	if (!p)
		return -EINVAL;
	if (p->notify.len) {
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, &p->notify);
		if (fd >= 0) {
			*listener = (int)fd;
			return 0;
		}
		/* EBUSY: a filter above us has a listener already. */
	}
	return cw_seccomp_install(p);
}

bool cw_seccomp_can_notify(const struct cw_seccomp_prog *p)
{
	return p && p->notify.len;
}

/* Names of the architectures a notification can come from here. */
static const char *arch_name(uint32_t arch)
{
	switch (arch) {
	case SCMP_ARCH_X86_64:
		return "x86_64";
	case SCMP_ARCH_X86:
		return "x86";
	case SCMP_ARCH_X32:
		return "x32";
	case SCMP_ARCH_AARCH64:
		return "aarch64";
	case SCMP_ARCH_ARM:
		return "arm";
	case SCMP_ARCH_RISCV64:
		return "riscv64";
	}
	return "unknown";
}

struct cw_seccomp_listener {
	int fd;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
};

struct cw_seccomp_listener *cw_seccomp_listener_new(int fd)
{
	struct cw_seccomp_listener *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return NULL;
	rc = seccomp_notify_alloc(&l->req, &l->resp);
	if (rc < 0) {
		free(l);
		errno = -rc;
		return NULL;
	}
	l->fd = fd;
	return l;
}

void cw_seccomp_listener_free(struct cw_seccomp_listener *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	seccomp_notify_free(l->req, l->resp);
	free(l);
}

int cw_seccomp_listener_fd(const struct cw_seccomp_listener *l)
{
	return l ? l->fd : -1;
}

/* The comm of pid, read while its syscall waits for our answer. */
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
	if (n <= 0) {
		comm[0] = '\0';
		return;
	}
	if (comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
}

static void name_or_number(char *buf, size_t len, const char *name, int nr)
{
	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%d", nr);
}

/* For socket and socketpair, the family and, for netlink, the protocol
 * the kernel would have read (ints: the low 32 bits). */
static void describe_socket(struct cw_seccomp_denial *d)
{
	int family = (int)(uint32_t)d->args[0];
	int protocol = (int)(uint32_t)d->args[2];

	if (d->arch != seccomp_arch_native() ||
	    (d->nr != SYS_socket && d->nr != SYS_socketpair))
		return;
	name_or_number(d->family, sizeof(d->family),
		       cw_sockfamily_name(family), family);
	if (family == AF_NETLINK)
		name_or_number(d->protocol, sizeof(d->protocol),
			       cw_netlink_proto_name(protocol), protocol);
}

int cw_seccomp_listener_answer(struct cw_seccomp_listener *l, bool describe,
			       struct cw_seccomp_denial *d)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	char *name;
	int rc, i;

	/* Only when one is pending: the receive would block otherwise. */
	rc = poll(&pfd, 1, 0);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	if (rc == 0)
		return 0;
	if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL) &&
	    !(pfd.revents & POLLIN))
		return -EPIPE; /* every process under the filter is gone */
	memset(l->req, 0, sizeof(*l->req));
	rc = seccomp_notify_receive(l->fd, l->req);
	if (rc < 0)
		/* ENOENT: the caller was killed while we looked. */
		return rc == -ENOENT || rc == -EINTR ? 0 : rc;
	memset(d, 0, sizeof(*d));
	d->nr = l->req->data.nr;
	d->arch = l->req->data.arch;
	d->arch_name = arch_name(d->arch);
	d->pid = (pid_t)l->req->pid;
	for (i = 0; i < 6; i++)
		d->args[i] = l->req->data.args[i];
	d->err = EPERM;
	if (describe) {
		d->described = true;
		read_comm(d->pid, d->comm, sizeof(d->comm));
		/* The pid is the caller's only while the call still waits. */
		if (seccomp_notify_id_valid(l->fd, l->req->id))
			d->comm[0] = '\0';
		name = seccomp_syscall_resolve_num_arch(d->arch, d->nr);
		snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
		free(name);
		describe_socket(d);
	}
	memset(l->resp, 0, sizeof(*l->resp));
	l->resp->id = l->req->id;
	l->resp->error = -EPERM;
	l->resp->val = 0;
	l->resp->flags = 0;
	rc = seccomp_notify_respond(l->fd, l->resp);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	return 1;
}

size_t cw_seccomp_len(const struct cw_seccomp_prog *p)
{
	return p ? p->fprog.len : 0;
}

void cw_seccomp_free(struct cw_seccomp_prog *p)
{
	if (!p)
		return;
	free(p->fprog.filter);
	free(p->notify.filter);
	free(p);
}
