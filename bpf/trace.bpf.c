// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel events of run_command calls: every program executed, every
 * process forked and exited, every file opened for writing, unlinked,
 * renamed, chmod-ed, chown-ed, made (mkdir, mknod, link, symlink),
 * truncated, allocated, given times or extended attributes, and the
 * read-only opens summed per path, by the processes of cmdwarden's call
 * cgroups only.
 * The same programs count what a call writes and kill it from the kernel
 * when it crosses sandbox.files.
 *
 * Programs (raw tracepoints: they need no tracefs, which is often not
 * mounted; kernel types are read with CO-RE, so kernel BTF is needed):
 *   raw_tracepoint/sched_process_exec   exec: filename and argv
 *   raw_tracepoint/sched_process_fork   a new process (threads are not)
 *   raw_tracepoint/sched_process_exit   a process's end: its wait status
 *   tp_btf/sys_exit                     file system calls, with their
 *                                       result; write byte counts; unix
 *                                       connects and sends refused with
 *                                       ECONNREFUSED
 * sys_exit runs on every system call of every process, so it is the raw
 * tracepoint typed by kernel BTF: the syscall number, all that most calls
 * need, is a plain load instead of a bpf_probe_read_kernel call.
 *
 * File system calls are read at sys_exit only: the syscall number and the
 * arguments are still in the saved user registers. The path of an open
 * that worked, and of a call that names its file by descriptor, is walked
 * up from the file's dentry to the task's root (path_from KERNEL): a
 * thread rewriting the program's buffer cannot change it, and relative
 * paths, symlinks, ".." and /proc/self/fd/N come out absolute and resolved.
 * Other paths (a mutation by name, an open that failed) are read from the
 * caller's memory, resident since the kernel has just read them, and a
 * relative one is joined to its directory as the kernel resolved that; a
 * thread of the same process could rewrite such a path between the
 * kernel's read and this one, and the record then shows the new text.
 *
 * Which call: bpf_get_current_cgroup_id(), the v2 cgroup of the task,
 * looked up in "calls" (cgroup id -> struct trace_call). A task outside
 * every call cgroup costs one hash lookup per traced event and nothing
 * more.
 *
 * Never dropped in silence, never by choice: userspace pauses a call whose
 * events fill the ring buffer over half (cgroup.freeze); an event that still
 * finds no room is counted in the call's "lost" counter (and "lost_total")
 * and the process it was of is killed, so nothing goes on unrecorded.
 * Every submitted one is counted in "emitted", which userspace compares
 * with what it has read before it closes the call's trail. Read-only opens
 * that worked are summed per file in "reads_seen" (the path sent at the
 * file's first open), those that found no file per path in "reads"
 * (trace.h), and userspace writes them as summaries at the call's end.
 *
 * Limits (sandbox.files), counted per call in "calls":
 *   max_files_written  successful opens of regular files (as for
 *                      max_write_bytes) with O_WRONLY, O_RDWR, O_CREAT or
 *                      O_TRUNC (and creat); each open counts, the same
 *                      file opened twice twice
 *   max_write_bytes    bytes put into regular files (not pipes, sockets,
 *                      terminals, nor files of /proc, /sys and the
 *                      cgroup file systems): the result of write, pwrite64, writev,
 *                      pwritev, pwritev2, sendfile, copy_file_range and
 *                      splice, by the descriptor written to (a splice
 *                      into a pipe counts nothing, the splice out of it
 *                      into a file counts); fallocate's length, in every
 *                      mode but PUNCH_HOLE and COLLAPSE_RANGE (which free
 *                      space), when it succeeds or fails with ENOSPC or
 *                      EDQUOT (having allocated part of the range); one
 *                      call counts at most 2^56 bytes, and once over the
 *                      limit the counter stops, so it cannot wrap; writes
 *                      through mmap and io_submit are not counted
 *   deny_open          an open of a path equal to or below one of the
 *                      prefixes: the path the kernel resolved for an open
 *                      that worked, the path as passed (joined to its
 *                      directory) for one that failed
 * The process that crosses a limit gets SIGKILL (bpf_send_signal) at the
 * end of the system call that crossed it: the kill follows the operation,
 * which has happened. These are audit-and-kill measures; Landlock is the
 * boundary for paths.
 *
 * A connect, sendto, sendmsg or sendmmsg to a pathname unix socket that
 * fails with ECONNREFUSED is an event (TRACE_UNIX) with the path as the
 * program passed it: a socket of a service outside the calls, masked in the
 * call's mount namespace, answers so, and so does a socket with no reader.
 * Which of the two it was, only the call's namespace can tell: userspace
 * resolves the path there (kernel/namespaces.h).
 */
#include <linux/bpf.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "trace.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

#define AT_FDCWD	-100
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR	0x200
#define O_WRONLY	01
#define O_RDWR		02
#define O_CREAT		0100
#define O_TRUNC		01000
#define S_IFMT		0170000
#define S_IFREG		0100000
#define SIGKILL		9
#define ENOENT		2
#define ENOTDIR		20
#define ENOSPC		28
#define ECONNREFUSED	111
#define AF_UNIX		1
#define UNIX_PATH_LEN	108	/* sizeof(sockaddr_un.sun_path) */
#define EDQUOT		122
#define FALLOC_FL_PUNCH_HOLE	 0x02
#define FALLOC_FL_COLLAPSE_RANGE 0x08
/* Far above what one call can write or allocate; a sum of a few never
 * wraps. */
#define WRITE_CALL_MAX	(1ULL << 56)

#define MAX_CALLS	4096

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The kernel's own types, only the fields read here; CO-RE finds them by
 * name in the running kernel's BTF. */
struct mm_struct {
	unsigned long arg_start;
	unsigned long arg_end;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned int s_dev;
	unsigned long s_magic;
} __attribute__((preserve_access_index));

struct inode {
	unsigned short i_mode;
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct qstr {
	unsigned int len;	/* in an anonymous union: CO-RE finds it */
	const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
} __attribute__((preserve_access_index));

struct vfsmount {
	struct dentry *mnt_root;
} __attribute__((preserve_access_index));

/* fs/mount.h: a vfsmount is the member mnt of its struct mount */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
} __attribute__((preserve_access_index));

struct fs_struct {
	struct path root;
	struct path pwd;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
	void *private_data;
} __attribute__((preserve_access_index));

struct socket {
	short type;
} __attribute__((preserve_access_index));

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
	struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	int exit_code;
	struct task_struct *real_parent;
	struct mm_struct *mm;
	struct files_struct *files;
	struct fs_struct *fs;
} __attribute__((preserve_access_index));

struct linux_binprm {
	const char *filename;
} __attribute__((preserve_access_index));

struct pt_regs___cw {
	unsigned long di, si, dx, r10, r8, r9, orig_ax;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLS);
	__type(key, __u64);
	__type(value, struct trace_call);
} calls SEC(".maps");

/* Resized by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
} events SEC(".maps");

/* The paths of files first opened read-only (TRACE_SEEN), apart from the
 * records: summaries never take the records' room, and one that finds
 * no room here is a record instead. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TRACE_SEEN_RING);
} seen_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_total SEC(".maps");

/*
 * Records are built here, then copied to the ring buffer with only the
 * bytes their strings use (bpf_ringbuf_output), so that a burst of short
 * paths takes a fraction of the room of fixed-size records. Tracepoint
 * programs run with preemption off: one record per CPU at a time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_file2);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_exec);
} scratch_exec SEC(".maps");

static __always_inline struct trace_call *current_call(__u64 *cgid)
{
	*cgid = bpf_get_current_cgroup_id();
	return bpf_map_lookup_elem(&calls, cgid);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_READS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct trace_read_key);
	__type(value, struct trace_read_sum);
} reads SEC(".maps");

/* A read's key is built here: a key is compared whole. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_read_key);
} scratch_read SEC(".maps");

/* Read-only opens that worked, summed by the file they opened. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_SEEN_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct trace_seen_key);
	__type(value, struct trace_seen_sum);
} reads_seen SEC(".maps");

/* A file's first read-only open is told here (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_seen_ev);
} scratch_seen SEC(".maps");

/*
 * A path is walked up from its file to the root and written backwards into
 * the first half of this buffer, ending at its middle; a relative path
 * joined to a directory waits in the second half. Offsets are masked to
 * the half and names to NAME_MAX, so no write can leave the buffer.
 */
#define WALK_HALF	TRACE_PATH_MAX
#define HALF_MASK	(WALK_HALF - 1)
#define NAME_MASK	255
#define WALK_DEPTH	48	/* components and mounts crossed */
#define WALK_CUT	0x10000	/* flag of walk_path's result */

struct walk_buf {
	char b[2 * WALK_HALF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_buf);
} scratch_walk SEC(".maps");

/* An event with no room: counted, and the process it was of killed (at
 * its return to user space), so what it does next is not unrecorded. */
static __always_inline void count_lost(struct trace_call *c)
{
	__u32 zero = 0;
	__u64 *n;

	__sync_fetch_and_add(&c->lost, 1);
	n = bpf_map_lookup_elem(&lost_total, &zero);
	if (n)
		*n += 1;
	if (!c->lost_hit) {
		c->lost_pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(c->lost_comm, sizeof(c->lost_comm));
	}
	bpf_send_signal(SIGKILL);
	c->lost_hit = 1;
}

/* Waking the reader for each record costs the writing CPU an interrupt (a
 * VM exit under virtualization) while the reader keeps up; instead the
 * reader polls every few milliseconds and is woken at once only when 64 KiB
 * have piled up. */
#define WAKE_BYTES (64 * 1024)

static __always_inline __u64 wake_flags(void *ring, __u64 size)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);

	return avail < WAKE_BYTES && avail + size >= WAKE_BYTES ?
		       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Copies the first size bytes of a built record to the ring buffer;
 * counted as emitted or as lost. */
static __always_inline void output(struct trace_call *c, void *rec,
				   __u64 size, __u64 max)
{
	if (size > max)
		size = max;
	barrier_var(size);
	if (size > max)
		return;
	if (bpf_ringbuf_output(&events, rec, size, wake_flags(&events, size))) {
		count_lost(c);
		return;
	}
	__sync_fetch_and_add(&c->emitted, 1);
}

static __always_inline void fill_hdr(struct trace_hdr *h, __u64 cgid,
				     __u8 kind)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->cgid = cgid;
	h->ts_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->uid = (__u32)bpf_get_current_uid_gid();
	h->kind = kind;
	h->truncated = 0;
	h->path_from = TRACE_PATH_USER;
	h->pad = 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

/* Reads a user string; its length with the NUL (at least 1), and
 * whether it did not fit. */
static __always_inline __u32 read_path(char *dst, const char *src, int *cut)
{
	char next = 0;
	long n;

	dst[0] = '\0';
	*cut = 0;
	if (!src)
		return 1;
	n = bpf_probe_read_user_str(dst, TRACE_PATH_MAX, src);
	if (n <= 0) {
		dst[0] = '\0';
		return 1;
	}
	if (n < TRACE_PATH_MAX)
		return n;
	bpf_probe_read_user(&next, 1, src + TRACE_PATH_MAX - 1);
	*cut = next != '\0';
	return TRACE_PATH_MAX;
}

SEC("raw_tracepoint/sched_process_exec")
int cw_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (void *)ctx->args[0];
	struct linux_binprm *bprm = (void *)ctx->args[2];
	unsigned long start, end, len;
	const char *filename;
	struct trace_call *c;
	struct trace_exec *e;
	__u32 zero = 0;
	__u64 cgid;
	long n;

	c = current_call(&cgid);
	if (!c)
		return 0;
	e = bpf_map_lookup_elem(&scratch_exec, &zero);
	if (!e)
		return 0;
	fill_hdr(&e->h, cgid, TRACE_EXEC);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	filename = BPF_CORE_READ(bprm, filename);
	n = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
				      filename);
	if (n < 0)
		e->filename[0] = '\0';
	else if (n == sizeof(e->filename))
		e->h.truncated |= TRACE_TRUNC_PATH;
	start = BPF_CORE_READ(task, mm, arg_start);
	end = BPF_CORE_READ(task, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > TRACE_ARGV_MAX) {
		len = TRACE_ARGV_MAX;
		e->h.truncated |= TRACE_TRUNC_ARGV;
	}
	barrier_var(len);
	if (len > TRACE_ARGV_MAX)
		len = 0;
	if (len && bpf_probe_read_user(e->argv, len, (void *)start))
		len = 0;
	e->argv_len = len;
	output(c, e, __builtin_offsetof(struct trace_exec, argv) + len,
	       sizeof(*e));
	return 0;
}

static __always_inline int proc_event(struct task_struct *task, __u8 kind)
{
	struct trace_call *c;
	struct trace_proc *e;
	__u64 cgid;

	c = current_call(&cgid);
	if (!c)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(c);
		return 0;
	}
	fill_hdr(&e->h, cgid, kind);
	e->child = kind == TRACE_FORK ? BPF_CORE_READ(task, tgid) : 0;
	e->exit_code = kind == TRACE_EXIT ? BPF_CORE_READ(task, exit_code) : 0;
	__sync_fetch_and_add(&c->emitted, 1);
	bpf_ringbuf_submit(e, wake_flags(&events, sizeof(*e)));
	return 0;
}

SEC("raw_tracepoint/sched_process_fork")
int cw_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (void *)ctx->args[1];

	/* A thread is part of its process, not a new one. */
	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	return proc_event(child, TRACE_FORK);
}

SEC("raw_tracepoint/sched_process_exit")
int cw_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (void *)ctx->args[0];

	if (BPF_CORE_READ(task, pid) != BPF_CORE_READ(task, tgid))
		return 0;
	return proc_event(task, TRACE_EXIT);
}

/* The system call's arguments, as the caller passed them. */
struct sc {
	long nr;
	long ret;
	unsigned long a[5];
};

/* 1 when path is a deny_open prefix or below one (component-wise). */
static __always_inline int deny_match(struct trace_call *c, const char *path,
				      __u32 *which)
{
	__u32 i, j;

	for (i = 0; i < TRACE_DENY_MAX; i++) {
		int match = 1;

		if (i >= c->ndeny)
			break;
		for (j = 0; j < TRACE_DENY_LEN; j++) {
			char p = c->deny[i][j];

			if (!p) {
				/* The prefix ended: a match when the path
				 * ends here too or goes on below it. */
				if (j && c->deny[i][j - 1] != '/' &&
				    path[j] && path[j] != '/')
					match = 0;
				break;
			}
			if (path[j] != p) {
				match = 0;
				break;
			}
		}
		if (match) {
			*which = i;
			return 1;
		}
	}
	return 0;
}

static __always_inline void kill_for(__u32 *hit)
{
	bpf_send_signal(SIGKILL);
	*hit = 1;
}

static __always_inline void deny_check(struct trace_call *c, const char *path)
{
	__u32 which = 0;
	__u64 id;

	if (!c->ndeny || !deny_match(c, path, &which))
		return;
	if (!c->deny_hit) {
		id = bpf_get_current_pid_tgid();
		c->deny_pid = id >> 32;
		c->deny_index = which;
		bpf_get_current_comm(c->deny_comm, sizeof(c->deny_comm));
		bpf_probe_read_kernel_str(c->deny_path, sizeof(c->deny_path),
					  path);
	}
	kill_for(&c->deny_hit);
}

static __always_inline void count_file_written(struct trace_call *c)
{
	__u64 n = __sync_fetch_and_add(&c->files_written, 1) + 1;

	if (!c->max_files_written || n <= c->max_files_written)
		return;
	if (!c->files_hit) {
		c->files_pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(c->files_comm, sizeof(c->files_comm));
	}
	kill_for(&c->files_hit);
}

/* Fills what every file record shares; the op-specific fields after. */
/* A file record's header, result and fields that say "none". */
static __always_inline void fill_file_hdr(struct trace_file *f, __u64 cgid,
					  __u8 kind, long ret)
{
	fill_hdr(&f->h, cgid, kind);
	f->ret = ret;
	f->dirfd = AT_FDCWD;
	f->dirfd2 = AT_FDCWD;
	f->flags = 0;
	f->mode = 0;
	f->owner = (__u32)-1;
	f->group = (__u32)-1;
	f->size = 0;
}

static __always_inline __u32 fill_file(struct trace_file *f,
				       const struct sc *s, __u64 cgid)
{
	const char *path = 0;
	__u32 len;
	int cut;

	fill_file_hdr(f, cgid, TRACE_FILE, s->ret);
	switch (s->nr) {
	case __NR_open:
		f->op = TRACE_OP_OPEN;
		path = (const char *)s->a[0];
		f->flags = s->a[1];
		f->mode = s->a[2];
		break;
	case __NR_creat:
		f->op = TRACE_OP_OPEN;
		path = (const char *)s->a[0];
		f->flags = O_CREAT | O_WRONLY | O_TRUNC;
		f->mode = s->a[1];
		break;
	case __NR_openat:
		f->op = TRACE_OP_OPEN;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->flags = s->a[2];
		f->mode = s->a[3];
		break;
	case __NR_openat2: {
		__u64 how[2] = { 0, 0 };	/* struct open_how: flags, mode */

		f->op = TRACE_OP_OPEN;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		bpf_probe_read_user(how, sizeof(how), (void *)s->a[2]);
		f->flags = how[0];
		f->mode = how[1];
		break;
	}
	case __NR_unlink:
		f->op = TRACE_OP_UNLINK;
		path = (const char *)s->a[0];
		break;
	case __NR_rmdir:
		f->op = TRACE_OP_RMDIR;
		path = (const char *)s->a[0];
		break;
	case __NR_unlinkat:
		f->op = s->a[2] & AT_REMOVEDIR ? TRACE_OP_RMDIR :
						 TRACE_OP_UNLINK;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->flags = s->a[2];
		break;
	case __NR_rename:
		f->op = TRACE_OP_RENAME;
		path = (const char *)s->a[0];
		break;
	case __NR_renameat:
	case __NR_renameat2:
		f->op = TRACE_OP_RENAME;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->dirfd2 = s->a[2];
		f->flags = s->nr == __NR_renameat2 ? s->a[4] : 0;
		break;
	case __NR_chmod:
		f->op = TRACE_OP_CHMOD;
		path = (const char *)s->a[0];
		f->mode = s->a[1];
		break;
	case __NR_fchmod:
		f->op = TRACE_OP_CHMOD;
		f->dirfd = s->a[0];	/* the file itself */
		f->mode = s->a[1];
		break;
	case __NR_fchmodat:
	case __NR_fchmodat2:
		f->op = TRACE_OP_CHMOD;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->mode = s->a[2];
		f->flags = s->nr == __NR_fchmodat2 ? s->a[3] : 0;
		break;
	case __NR_chown:
	case __NR_lchown:
		f->op = TRACE_OP_CHOWN;
		path = (const char *)s->a[0];
		f->owner = s->a[1];
		f->group = s->a[2];
		f->flags = s->nr == __NR_lchown ? AT_SYMLINK_NOFOLLOW : 0;
		break;
	case __NR_fchown:
		f->op = TRACE_OP_CHOWN;
		f->dirfd = s->a[0];
		f->owner = s->a[1];
		f->group = s->a[2];
		break;
	case __NR_fchownat:
		f->op = TRACE_OP_CHOWN;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->owner = s->a[2];
		f->group = s->a[3];
		f->flags = s->a[4];
		break;
	case __NR_mkdir:
		f->op = TRACE_OP_MKDIR;
		path = (const char *)s->a[0];
		f->mode = s->a[1];
		break;
	case __NR_mkdirat:
		f->op = TRACE_OP_MKDIR;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->mode = s->a[2];
		break;
	case __NR_execve:
		f->op = TRACE_OP_EXEC;
		path = (const char *)s->a[0];
		break;
	case __NR_execveat:
		f->op = TRACE_OP_EXEC;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->flags = s->a[4];
		break;
	case __NR_truncate:
		f->op = TRACE_OP_TRUNCATE;
		path = (const char *)s->a[0];
		f->size = s->a[1];
		break;
	case __NR_ftruncate:
		f->op = TRACE_OP_TRUNCATE;
		f->dirfd = s->a[0];
		f->size = s->a[1];
		break;
	case __NR_link:
		f->op = TRACE_OP_LINK;
		path = (const char *)s->a[0];
		break;
	case __NR_symlink:
		f->op = TRACE_OP_SYMLINK;
		path = (const char *)s->a[1];
		break;
	case __NR_linkat:
		f->op = TRACE_OP_LINK;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->dirfd2 = s->a[2];
		f->flags = s->a[4];
		break;
	case __NR_symlinkat:
		f->op = TRACE_OP_SYMLINK;
		f->dirfd = s->a[1];
		path = (const char *)s->a[2];
		break;
	case __NR_mknod:
		f->op = TRACE_OP_MKNOD;
		path = (const char *)s->a[0];
		f->mode = s->a[1];
		f->size = s->a[2];
		break;
	case __NR_mknodat:
		f->op = TRACE_OP_MKNOD;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->mode = s->a[2];
		f->size = s->a[3];
		break;
	case __NR_utime:
	case __NR_utimes:
		f->op = TRACE_OP_UTIMES;
		path = (const char *)s->a[0];
		break;
	case __NR_futimesat:
	case __NR_utimensat:
		/* utimensat with no path: the descriptor's own file */
		f->op = TRACE_OP_UTIMES;
		f->dirfd = s->a[0];
		path = (const char *)s->a[1];
		f->flags = s->nr == __NR_utimensat ? s->a[3] : 0;
		break;
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_fsetxattr:
		f->op = TRACE_OP_SETXATTR;
		f->size = s->a[3];
		f->flags = s->a[4];
		break;
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		f->op = TRACE_OP_REMOVEXATTR;
		break;
	case __NR_fallocate:
		f->op = TRACE_OP_FALLOCATE;
		f->dirfd = s->a[0];
		f->flags = s->a[1];
		f->size = s->a[3];
		break;
	}
	/* the xattr calls: the file by path or, f*, by descriptor */
	if (f->op == TRACE_OP_SETXATTR || f->op == TRACE_OP_REMOVEXATTR) {
		if (s->nr == __NR_fsetxattr || s->nr == __NR_fremovexattr)
			f->dirfd = s->a[0];
		else
			path = (const char *)s->a[0];
		if (s->nr == __NR_lsetxattr || s->nr == __NR_lremovexattr)
			f->flags = AT_SYMLINK_NOFOLLOW;
	}
	len = read_path(f->path, path, &cut);
	if (cut)
		f->h.truncated |= TRACE_TRUNC_PATH;
	return len;
}

/* An open's flags. */
static __always_inline __u32 open_flags(const struct sc *s)
{
	__u64 how = 0;		/* struct open_how's first field */

	switch (s->nr) {
	case __NR_open:
		return s->a[1];
	case __NR_creat:
		return O_CREAT | O_WRONLY | O_TRUNC;
	case __NR_openat:
		return s->a[2];
	}
	bpf_probe_read_user(&how, sizeof(how), (void *)s->a[2]);
	return how;
}

#define WRITE_FLAGS	(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

/* The second string of a rename, link or symlink (its target), or an
 * xattr call's attribute name; NULL for the others. */
static __always_inline const char *second_path(const struct sc *s)
{
	switch (s->nr) {
	case __NR_rename:
	case __NR_link:
		return (const char *)s->a[1];
	case __NR_renameat:
	case __NR_renameat2:
	case __NR_linkat:
		return (const char *)s->a[3];
	case __NR_symlink:
	case __NR_symlinkat:
		return (const char *)s->a[0];
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_fsetxattr:
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		return (const char *)s->a[1];
	}
	return 0;
}

/* The file of descriptor fd of the current process; NULL when none. */
static __always_inline struct file *fd_file(unsigned int fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file **fds, *file = 0;
	struct fdtable *fdt;

	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]))
		return 0;
	return file;
}

/* Whether descriptor fd of the current process is a regular file. */
/* The kernel's own files (the magic numbers of linux/magic.h): a write
 * there is a setting, not data, such as the spawned child's "0" into a
 * cgroup v1 tasks file. */
#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572
#define CGROUP_SUPER_MAGIC	0x27e0eb
#define CGROUP2_SUPER_MAGIC	0x63677270

/* A regular file that holds data: not /dev/null, a pipe or a terminal,
 * nor a file of /proc, /sys or a cgroup file system. */
static __always_inline int fd_is_regular(unsigned int fd)
{
	struct file *file = fd_file(fd);
	unsigned long magic;

	if (!file ||
	    (BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	magic = BPF_CORE_READ(file, f_inode, i_sb, s_magic);
	return magic != PROC_SUPER_MAGIC && magic != SYSFS_MAGIC &&
	       magic != CGROUP_SUPER_MAGIC && magic != CGROUP2_SUPER_MAGIC;
}

/*
 * The path of (dentry, vfsmnt) from the current task's root, as d_path
 * gives it, built in scratch_walk: the offset where it starts there, with
 * WALK_CUT when its first components did not fit (too deep or too long:
 * the path then starts at the deepest ones that did); -1 when the walk
 * ends at a root that is not the task's (a pipe or socket's pseudo file
 * system, a file of another mount namespace). With join the path is a
 * directory, and the relative path waiting in the buffer's second half is
 * joined to it. A global function, verified once.
 */
struct walk_ctx {
	struct dentry *dentry;
	struct vfsmount *vfsmnt;
	struct dentry *root;
	struct vfsmount *root_mnt;
	__u32 pos;		/* where the path built so far starts */
	int end;		/* 1 the task's root reached, -1 another */
};

/* One step of the walk up: a component written, or a mount crossed. */
static long walk_step(__u32 i __attribute__((unused)), struct walk_ctx *x)
{
	struct dentry *dentry = x->dentry, *parent, *top;
	struct vfsmount *vfsmnt = x->vfsmnt;
	struct mount *mnt, *up;
	const unsigned char *name;
	struct walk_buf *w;
	__u32 zero = 0, len, pos = x->pos;

	w = bpf_map_lookup_elem(&scratch_walk, &zero);
	if (!w)
		return 1;
	if (dentry == x->root && vfsmnt == x->root_mnt) {
		x->end = 1;
		return 1;
	}
	top = BPF_CORE_READ(vfsmnt, mnt_root);
	parent = BPF_CORE_READ(dentry, d_parent);
	if (dentry == top || dentry == parent) {
		/* a mount's root: on to where it is mounted */
		mnt = (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt);
		up = BPF_CORE_READ(mnt, mnt_parent);
		if (dentry != top || !up || up == mnt) {
			x->end = -1;
			return 1;
		}
		x->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		x->vfsmnt = &up->mnt;
		return 0;
	}
	len = BPF_CORE_READ(dentry, d_name.len);
	name = BPF_CORE_READ(dentry, d_name.name);
	if (len > NAME_MASK)
		len = NAME_MASK;
	/* room for the name, its '/' and the root's */
	if (len + 2 > pos)
		return 1;
	pos -= len;
	bpf_probe_read_kernel(&w->b[pos & HALF_MASK], len & NAME_MASK, name);
	pos--;
	w->b[pos & HALF_MASK] = '/';
	x->pos = pos;
	x->dentry = parent;
	return 0;
}

/*
 * The path of (dentry, vfsmnt) from the current task's root, as d_path
 * gives it, built in scratch_walk: the offset where it starts there, with
 * WALK_CUT when its first components did not fit (too deep or too long:
 * the path then starts at the deepest ones that did); -1 when the walk
 * ends at a root that is not the task's (a pipe or socket's pseudo file
 * system, a file of another mount namespace). With join the path is a
 * directory, and the relative path waiting in the buffer's second half is
 * joined to it. A global function, its steps a bpf_loop callback: each is
 * verified once, not once per step.
 */
__attribute__((noinline)) int walk_path(__u64 dentry_ptr, __u64 mnt_ptr,
					int join)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct walk_ctx x = {
		.dentry = (void *)dentry_ptr,
		.vfsmnt = (void *)mnt_ptr,
		.pos = HALF_MASK,
	};
	struct walk_buf *w;
	__u32 zero = 0, pos;

	w = bpf_map_lookup_elem(&scratch_walk, &zero);
	if (!w || !x.dentry || !x.vfsmnt)
		return -1;
	x.root = BPF_CORE_READ(task, fs, root.dentry);
	x.root_mnt = BPF_CORE_READ(task, fs, root.mnt);
	w->b[HALF_MASK] = join ? '/' : '\0';
	bpf_loop(WALK_DEPTH, walk_step, &x, 0);
	if (x.end < 0)
		return -1;
	pos = x.pos;
	if (pos == HALF_MASK && !join) {
		pos--;
		w->b[pos & HALF_MASK] = '/';
	}
	return (pos & HALF_MASK) | (x.end > 0 ? 0 : WALK_CUT);
}

/* Copies a path walk_path built (r its result) to dst, TRACE_PATH_MAX
 * bytes: its length with the NUL, 0 when none; *cut when it was cut. */
static __always_inline long walked(char *dst, int r, int *cut)
{
	struct walk_buf *w;
	__u32 zero = 0;
	long n;

	w = bpf_map_lookup_elem(&scratch_walk, &zero);
	if (!w || r < 0)
		return 0;
	n = bpf_probe_read_kernel_str(dst, TRACE_PATH_MAX, &w->b[r & HALF_MASK]);
	*cut = (r & WALK_CUT) || n >= TRACE_PATH_MAX;
	return n > 0 ? n : 0;
}

/*
 * The scratch record's path from the file of descriptor fd, as the kernel
 * resolved it (TRACE_PATH_KERNEL): its length with the NUL, or 0 when it
 * cannot be told, the record keeping its path as written. Global.
 */
__attribute__((noinline)) int fd_path(__u64 fd)
{
	struct trace_file2 *f2;
	struct file *file;
	__u32 zero = 0;
	int r, cut;
	long n;

	f2 = bpf_map_lookup_elem(&scratch, &zero);
	file = fd_file(fd);
	if (!f2 || !file)
		return 0;
	r = walk_path((__u64)BPF_CORE_READ(file, f_path.dentry),
		      (__u64)BPF_CORE_READ(file, f_path.mnt), 0);
	n = walked(f2->f.path, r, &cut);
	if (!n)
		return 0;
	if (cut)
		f2->f.h.truncated |= TRACE_TRUNC_PATH;
	f2->f.h.path_from = TRACE_PATH_KERNEL;
	return n;
}

/*
 * The scratch record's relative path, as written, joined to the directory
 * it is relative to (dirfd, or the working directory for AT_FDCWD) as the
 * kernel resolved that: its new length with the NUL; len, the path left as
 * it is, when it is absolute or its directory cannot be told. Global.
 */
__attribute__((noinline)) int join_dir(__s64 dirfd, __u32 len)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct dentry *dentry;
	struct vfsmount *mnt;
	struct trace_file2 *f2;
	struct walk_buf *w;
	struct file *file;
	__u32 zero = 0, skip = 0;
	int r, cut, i;
	long n;

	f2 = bpf_map_lookup_elem(&scratch, &zero);
	w = bpf_map_lookup_elem(&scratch_walk, &zero);
	if (!f2 || !w || f2->f.path[0] == '/' || !f2->f.path[0])
		return len;
	if (dirfd == AT_FDCWD) {
		dentry = BPF_CORE_READ(task, fs, pwd.dentry);
		mnt = BPF_CORE_READ(task, fs, pwd.mnt);
	} else {
		file = fd_file(dirfd);
		if (!file)
			return len;
		dentry = BPF_CORE_READ(file, f_path.dentry);
		mnt = BPF_CORE_READ(file, f_path.mnt);
	}
	/* "./x" is x in that directory: the joined name says so once. */
	for (i = 0; i < 8; i++) {
		if (f2->f.path[skip] != '.' || f2->f.path[skip + 1] != '/' ||
		    !f2->f.path[skip + 2])
			break;
		skip += 2;
	}
	if (bpf_probe_read_kernel_str(&w->b[WALK_HALF], WALK_HALF,
				      &f2->f.path[skip]) <= 0)
		return len;
	r = walk_path((__u64)dentry, (__u64)mnt, 1);
	if (r < 0)
		return len;
	n = walked(f2->f.path, r, &cut);
	if (!n)
		return len;
	if (cut)
		f2->f.h.truncated |= TRACE_TRUNC_PATH;
	return n;
}

/* The user's msghdr, up to its name's length. */
struct msghdr_name {
	void *name;
	int namelen;
};

/*
 * A connect or send to a pathname unix socket that was refused
 * (ECONNREFUSED): one TRACE_UNIX event with the path within its address
 * length. Abstract and unnamed addresses are not paths. uaddr and alen are
 * the address and its length (connect, sendto), or the msghdr (sendmsg,
 * sendmmsg's first message). A global function, so the verifier checks it
 * once on its own rather than in each of cw_sys_exit's states, which 6.1's
 * verifier has few to spare for.
 */
__attribute__((noinline)) int unix_refused(__u64 cgid, long nr, __u64 fd,
					   __u64 uaddr, __u64 alen)
{
	struct trace_file2 *f2;
	struct trace_call *c;
	struct trace_file *f;
	struct msghdr_name mh;
	struct file *file;
	const char *addr = (const char *)uaddr;
	__u64 key = cgid, len = alen;
	__u16 family = 0;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&calls, &key);
	if (!c)
		return 0;
	if (nr == __NR_sendmsg || nr == __NR_sendmmsg) {
		if (bpf_probe_read_user(&mh, sizeof(mh), addr))
			return 0;
		addr = mh.name;
		len = (__u32)mh.namelen;
	}
	if (!addr || len <= sizeof(family) ||
	    bpf_probe_read_user(&family, sizeof(family), addr) ||
	    family != AF_UNIX)
		return 0;
	len -= sizeof(family);
	if (len > UNIX_PATH_LEN)
		len = UNIX_PATH_LEN;
	f2 = bpf_map_lookup_elem(&scratch, &zero);
	if (!f2)
		return 0;
	f = &f2->f;
	fill_file_hdr(f, cgid, TRACE_UNIX, -ECONNREFUSED);
	f->op = nr == __NR_connect ? TRACE_OP_CONNECT : TRACE_OP_SENDMSG;
	file = fd_file(fd);
	if (file) {
		struct socket *sock = BPF_CORE_READ(file, private_data);

		f->flags = sock ? BPF_CORE_READ(sock, type) : 0;
	}
	/* kept: clang knows len <= 108 and would drop the mask, and 6.1's
	 * verifier does not follow the bound through the min above */
	barrier_var(len);
	len &= 127;
	if (bpf_probe_read_user(f->path, len, addr + sizeof(family)))
		return 0;
	f->path[len] = '\0';
	if (!f->path[0])
		return 0;
	output(c, f, __builtin_offsetof(struct trace_file, path) + len + 1,
	       sizeof(*f));
	return 0;
}

/* The bytes a system call of the write family put into a file, and the
 * descriptor they went to; 0 when none. */
static __always_inline __u64 bytes_written(struct pt_regs___cw *regs, long nr,
					   long ret, unsigned int *fd)
{
	long len;

	switch (nr) {
	case __NR_copy_file_range:
	case __NR_splice:
		*fd = BPF_CORE_READ(regs, dx);	/* fd_out */
		return ret > 0 ? ret : 0;
	case __NR_fallocate:
		/* Its result is 0; what it allocated is its length. Out of
		 * space, part of the range may stay allocated. */
		if (ret != 0 && ret != -ENOSPC && ret != -EDQUOT)
			return 0;
		if (BPF_CORE_READ(regs, si) &
		    (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE))
			return 0;
		*fd = BPF_CORE_READ(regs, di);
		len = BPF_CORE_READ(regs, r10);
		return len > 0 ? len : 0;
	default:	/* write, pwrite64, writev, pwritev(2), sendfile */
		*fd = BPF_CORE_READ(regs, di);
		return ret > 0 ? ret : 0;
	}
}

static __always_inline void count_write(struct trace_call *c,
					struct pt_regs___cw *regs, long nr,
					long ret)
{
	unsigned int fd = 0;
	__u64 bytes, n;

	bytes = bytes_written(regs, nr, ret, &fd);
	if (!bytes || !fd_is_regular(fd))
		return;
	if (bytes > WRITE_CALL_MAX)
		bytes = WRITE_CALL_MAX;
	/* Over already: killed again, not counted further. */
	n = c->write_bytes;
	if (n <= c->max_write_bytes)
		n = __sync_fetch_and_add(&c->write_bytes, bytes) + bytes;
	if (n <= c->max_write_bytes)
		return;
	if (!c->bytes_hit) {
		c->bytes_pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(c->bytes_comm, sizeof(c->bytes_comm));
	}
	kill_for(&c->bytes_hit);
}

/*
 * An open's deny_open check and its count of files opened for writing, on
 * the path fill_file left in the scratch record. A global function, as
 * unix_refused: the prefix loops are verified once, not once for each state
 * cw_sys_exit reaches them in (that multiplied its verification cost about
 * tenfold, seconds per agent start under emulation).
 */
__attribute__((noinline)) int open_limits(__u64 cgid, long ret, __u32 flags)
{
	struct trace_file2 *f2;
	struct trace_call *c;
	__u64 key = cgid;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&calls, &key);
	f2 = bpf_map_lookup_elem(&scratch, &zero);
	if (!c || !f2)
		return 0;
	deny_check(c, f2->f.path);
	/* opened for writing, and a regular file (not /dev/null, a pipe or
	 * a terminal) */
	if (ret >= 0 && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) &&
	    fd_is_regular(ret))
		count_file_written(c);
	return 0;
}

/*
 * A read-only open that worked (ret its descriptor), summed in "reads_seen"
 * by the file it opened: 1 when summed, 0 when it is to be a record (the
 * table full, or a file not beneath the task's root). A hit costs a short
 * key's lookup and a counter; only a file's first open walks its path,
 * checks it against deny_open (the sum remembers a match, so every later
 * open of the file is refused too) and sends it (TRACE_SEEN). Global.
 */
__attribute__((noinline)) int read_seen(__u64 cgid, long nr, long ret,
					__u64 a1, __u64 a2)
{
	struct sc s = { .nr = nr, .a = { 0, a1, a2 } };
	struct trace_seen_key k = {};
	struct trace_seen_sum *sum, init = { .count = 1 };
	struct trace_seen_ev *e;
	struct trace_call *c;
	struct inode *inode;
	struct file *file;
	__u64 key = cgid;
	__u32 zero = 0, which = 0;
	int r, cut;
	long len;

	if (ret < 0 || (open_flags(&s) & WRITE_FLAGS))
		return 0;
	c = bpf_map_lookup_elem(&calls, &key);
	file = fd_file(ret);
	if (!c || !file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	k.cgid = cgid;
	k.ino = BPF_CORE_READ(inode, i_ino);
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	sum = bpf_map_lookup_elem(&reads_seen, &k);
	if (sum) {
		__sync_fetch_and_add(&sum->count, 1);
		if (sum->denied)
			kill_for(&c->deny_hit);
		return 1;
	}
	e = bpf_map_lookup_elem(&scratch_seen, &zero);
	if (!e)
		return 0;
	r = walk_path((__u64)BPF_CORE_READ(file, f_path.dentry),
		      (__u64)BPF_CORE_READ(file, f_path.mnt), 0);
	len = walked(e->path, r, &cut);
	if (!len)
		return 0;
	fill_hdr(&e->h, cgid, TRACE_SEEN);
	e->h.truncated = cut ? TRACE_TRUNC_PATH : 0;
	e->h.path_from = TRACE_PATH_KERNEL;
	e->ino = k.ino;
	e->dev = k.dev;
	e->pad = 0;
	if (c->ndeny && deny_match(c, e->path, &which)) {
		init.denied = 1;
		deny_check(c, e->path);
	}
	/* The path first, then the sum: a sum always has its path. With
	 * no room for it the open is a record of its own (the ring of
	 * records then pauses the call, or kills the process). */
	len += __builtin_offsetof(struct trace_seen_ev, path);
	if (len > (long)sizeof(*e))
		len = sizeof(*e);
	barrier_var(len);
	if (len > (long)sizeof(*e) ||
	    bpf_ringbuf_output(&seen_events, e, len,
			       wake_flags(&seen_events, len)))
		return 0;
	__sync_fetch_and_add(&c->emitted, 1);
	/* fails when another CPU made it meanwhile (its path told twice:
	 * userspace keeps one), or when the table is full (a path told
	 * for no sum is left out) */
	if (bpf_map_update_elem(&reads_seen, &k, &init, BPF_NOEXIST)) {
		sum = bpf_map_lookup_elem(&reads_seen, &k);
		if (!sum)
			return 0;
		__sync_fetch_and_add(&sum->count, 1);
	}
	return 1;
}

/*
 * A read-only open that found no file (ENOENT, ENOTDIR), summed
 * by path in "reads": 1 when summed, 0 when it is to be sent as an event
 * (a path too long for the key, or the table full). On the path fill_file
 * left in the scratch record; a global function, verified once.
 */
__attribute__((noinline)) int read_summed(__u64 cgid, long ret)
{
	struct trace_read_sum *sum, init = {};
	struct trace_read_key *k;
	struct trace_file2 *f2;
	__u32 zero = 0;
	long n;

	if (ret != -ENOENT && ret != -ENOTDIR)
		return 0;	/* refusals are records of their own */
	f2 = bpf_map_lookup_elem(&scratch, &zero);
	k = bpf_map_lookup_elem(&scratch_read, &zero);
	if (!f2 || !k)
		return 0;
	__builtin_memset(k, 0, sizeof(*k));
	k->cgid = cgid;
	n = bpf_probe_read_kernel_str(k->path, sizeof(k->path), f2->f.path);
	if (n <= 0 || n >= (long)sizeof(k->path))
		return 0;
	sum = bpf_map_lookup_elem(&reads, k);
	if (!sum) {
		init.pid = bpf_get_current_pid_tgid() >> 32;
		init.uid = (__u32)bpf_get_current_uid_gid();
		bpf_get_current_comm(init.comm, sizeof(init.comm));
		/* fails when another CPU made it meanwhile, or when full */
		bpf_map_update_elem(&reads, k, &init, BPF_NOEXIST);
		sum = bpf_map_lookup_elem(&reads, k);
		if (!sum)
			return 0;
	}
	__sync_fetch_and_add(&sum->count, 1);
	__sync_fetch_and_add(&sum->failed, 1);
	return 1;
}

/*
 * The scratch record's path settled, and an open's limits: the path of the
 * file opened or named by descriptor as the kernel resolved it, else the
 * path as written made absolute; then the deny_open check and the count
 * of files written, which hold whether or not the record finds room. The
 * record's length, or 0 when it was a read summed instead. Global.
 */
__attribute__((noinline)) int settle_file(__u64 cgid, int is_open, long ret,
					  __u32 len)
{
	struct trace_file2 *f2;
	struct trace_file *f;
	__u32 zero = 0;
	int n;

	f2 = bpf_map_lookup_elem(&scratch, &zero);
	if (!f2)
		return len;
	f = &f2->f;
	if (is_open && ret >= 0)
		n = fd_path(ret);
	else if (!f->path[0] && f->dirfd != AT_FDCWD)
		n = fd_path(f->dirfd);
	else
		n = join_dir(f->dirfd, len);
	if (n)
		len = n;
	if (is_open) {
		open_limits(cgid, ret, f->flags);
		if (!(f->flags & WRITE_FLAGS) && read_summed(cgid, ret))
			return 0;
	}
	return len;
}

SEC("tp_btf/sys_exit")
int cw_sys_exit(unsigned long long *ctx)
{
	struct pt_regs___cw *regs = (void *)ctx[0];
	struct trace_file2 *f2;
	struct trace_call *c;
	struct trace_file *f;
	struct sc s;
	__u64 cgid;
	__u32 zero = 0, len;
	int is_open = 0, cut;

	s.nr = regs->orig_ax;
	switch (s.nr) {
	case __NR_write:
	case __NR_pwrite64:
	case __NR_writev:
	case __NR_pwritev:
	case __NR_pwritev2:
	case __NR_sendfile:
	case __NR_copy_file_range:
	case __NR_splice:
		c = current_call(&cgid);
		if (!c || !c->max_write_bytes)
			return 0;
		count_write(c, regs, s.nr, ctx[1]);
		return 0;
	case __NR_fallocate:
		/* counted, and a file record like the other mutations */
		c = current_call(&cgid);
		if (!c)
			return 0;
		if (c->max_write_bytes)
			count_write(c, regs, s.nr, ctx[1]);
		break;
	case __NR_connect:
	case __NR_sendto:
	case __NR_sendmsg:
	case __NR_sendmmsg:
		if ((long)ctx[1] != -ECONNREFUSED)
			return 0;
		cgid = bpf_get_current_cgroup_id();
		if (s.nr == __NR_sendto)
			return unix_refused(cgid, s.nr, BPF_CORE_READ(regs, di),
					    BPF_CORE_READ(regs, r8),
					    BPF_CORE_READ(regs, r9));
		return unix_refused(cgid, s.nr, BPF_CORE_READ(regs, di),
				    BPF_CORE_READ(regs, si),
				    BPF_CORE_READ(regs, dx));
	case __NR_open:
	case __NR_creat:
	case __NR_openat:
	case __NR_openat2:
		is_open = 1;
		break;
	case __NR_unlink:
	case __NR_unlinkat:
	case __NR_rmdir:
	case __NR_rename:
	case __NR_renameat:
	case __NR_renameat2:
	case __NR_chmod:
	case __NR_fchmod:
	case __NR_fchmodat:
	case __NR_fchmodat2:
	case __NR_chown:
	case __NR_lchown:
	case __NR_fchown:
	case __NR_fchownat:
	case __NR_mkdir:
	case __NR_mkdirat:
	case __NR_truncate:
	case __NR_ftruncate:
	case __NR_link:
	case __NR_linkat:
	case __NR_symlink:
	case __NR_symlinkat:
	case __NR_mknod:
	case __NR_mknodat:
	case __NR_utime:
	case __NR_utimes:
	case __NR_futimesat:
	case __NR_utimensat:
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_fsetxattr:
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		break;
	case __NR_execve:
	case __NR_execveat:
		/* one that worked is the exec record; its arguments are
		 * gone with the old image anyway */
		if ((long)ctx[1] >= 0)
			return 0;
		break;
	default:
		return 0;
	}
	c = current_call(&cgid);
	if (!c)
		return 0;
	s.ret = ctx[1];
	/* Read, not loaded: loaded from regs, the arguments gave 6.1's
	 * verifier too many states to tell apart (over a million
	 * instructions); read into the stack they are as before. */
	s.a[1] = BPF_CORE_READ(regs, si);
	s.a[2] = BPF_CORE_READ(regs, dx);
	/* a read that worked: a counter, its path walked only the first
	 * time its file is opened (the flags are all it needs) */
	if (is_open && read_seen(cgid, s.nr, s.ret, s.a[1], s.a[2]))
		return 0;
	s.a[0] = BPF_CORE_READ(regs, di);
	s.a[3] = BPF_CORE_READ(regs, r10);
	s.a[4] = BPF_CORE_READ(regs, r8);
	f2 = bpf_map_lookup_elem(&scratch, &zero);
	if (!f2)
		return 0;
	f = &f2->f;
	len = fill_file(f, &s, cgid);
	len = settle_file(cgid, is_open, s.ret, len);
	if (!len)
		return 0;
	if (second_path(&s)) {
		read_path(f2->path2, second_path(&s), &cut);
		if (cut)
			f->h.truncated |= TRACE_TRUNC_PATH2;
		output(c, f2, sizeof(*f2), sizeof(*f2));
	} else {
		output(c, f, __builtin_offsetof(struct trace_file, path) + len,
		       sizeof(*f));
	}
	return 0;
}
