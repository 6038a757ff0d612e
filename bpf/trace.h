/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures shared by bpf/trace.bpf.c and userspace/kernel/trace.c. No
 * includes: the includer provides __u8.. __u64 (<linux/types.h> or
 * <linux/bpf.h>).
 */
#ifndef CW_BPF_TRACE_H
#define CW_BPF_TRACE_H

/* Bounds of what one event carries; longer strings are cut and flagged. */
#define TRACE_PATH_MAX 512	/* a path, including its NUL */
#define TRACE_ARGV_MAX 1024	/* the NUL-separated argv of an exec */
/* sandbox.files.deny_open: at most this many prefixes of this length. */
#define TRACE_DENY_MAX 8
#define TRACE_DENY_LEN 128

enum trace_kind {
	TRACE_EXEC = 1,
	TRACE_FORK,
	TRACE_EXIT,
	TRACE_FILE,
	TRACE_UNIX,		/* struct trace_file: a refused unix connect */
	TRACE_SEEN,		/* struct trace_seen_ev: a file the call
				 * first opened read-only */
};

enum trace_file_op {
	TRACE_OP_OPEN = 1,
	TRACE_OP_UNLINK,
	TRACE_OP_RMDIR,
	TRACE_OP_RENAME,
	TRACE_OP_CHMOD,
	TRACE_OP_CHOWN,
	TRACE_OP_CONNECT,	/* TRACE_UNIX: connect */
	TRACE_OP_SENDMSG,	/* TRACE_UNIX: sendto, sendmsg, sendmmsg */
	TRACE_OP_MKDIR,
	TRACE_OP_EXEC,		/* an execve or execveat that failed (one
				 * that worked is a TRACE_EXEC) */
	TRACE_OP_TRUNCATE,	/* truncate, ftruncate: size */
	TRACE_OP_LINK,		/* link, linkat: path2 the new name */
	TRACE_OP_SYMLINK,	/* symlink, symlinkat: path the link made,
				 * path2 its target as given */
	TRACE_OP_MKNOD,		/* mknod, mknodat: mode, size the device */
	TRACE_OP_UTIMES,	/* utime, utimes, futimesat, utimensat */
	TRACE_OP_SETXATTR,	/* setxattr, lsetxattr, fsetxattr: path2 the
				 * attribute's name, size its value's */
	TRACE_OP_REMOVEXATTR,	/* removexattr, lremovexattr, fremovexattr */
	TRACE_OP_FALLOCATE,	/* fallocate: flags its mode, size its length */
};

/* Read-only opens are summed per call in the kernel: a flood of reads is a
 * counter, not a record. One that worked is summed by the file it opened
 * (the call's cgroup, the device and the inode: a short key whatever the
 * path) in "reads_seen"; the first open of each file walks its path and
 * sends it once (TRACE_SEEN), so the table holds counters only. One that
 * found no file is summed by the path as written, with zeros after it (a
 * hash map compares whole keys, so no two paths share a sum) in "reads";
 * longer paths are sent one by one. */
#define TRACE_READ_PATH	(512 - 8)
#define TRACE_READS_MAX	8192
#define TRACE_SEEN_MAX	65536
#define TRACE_SEEN_RING	(256 * 1024)	/* bytes of TRACE_SEEN in flight */

struct trace_read_key {
	__u64 cgid;
	char path[TRACE_READ_PATH];
};

struct trace_read_sum {
	__u64 count;		/* opens of the path */
	__u64 failed;		/* of them ENOENT or ENOTDIR */
	__u32 pid;		/* the first opener */
	__u32 uid;
	char comm[16];
};

struct trace_seen_key {
	__u64 cgid;
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct trace_seen_sum {
	__u64 count;		/* opens of the file */
	__u32 denied;		/* its path is under a deny_open prefix */
	__u32 pad;
};

/* Bits of trace_hdr.truncated. */
#define TRACE_TRUNC_PATH	0x1	/* path or filename cut */
#define TRACE_TRUNC_PATH2	0x2	/* rename's target cut */
#define TRACE_TRUNC_ARGV	0x4	/* argv cut */

/* Map "calls": cgroup id -> the call's limits and what it did. Userspace
 * writes the first four fields; the programs update the rest in place. */
struct trace_call {
	__u64 max_files_written;	/* 0 = unlimited */
	__u64 max_write_bytes;		/* 0 = unlimited */
	__u32 ndeny;
	__u32 pad;
	char deny[TRACE_DENY_MAX][TRACE_DENY_LEN];
	/* counters */
	__u64 emitted;		/* events submitted to the ring buffer */
	__u64 lost;		/* events the ring buffer had no room for */
	__u64 files_written;	/* successful opens for writing */
	__u64 write_bytes;	/* bytes written to regular files */
	__u32 files_hit;	/* a limit was crossed (plain stores: no
				 * atomics beyond add on older kernels) */
	__u32 bytes_hit;
	__u32 deny_hit;
	__u32 files_pid;	/* first process killed for each limit */
	__u32 bytes_pid;
	__u32 deny_pid;
	__u32 deny_index;	/* which deny_open prefix */
	__u32 lost_hit;		/* an event found the ring full: the
				 * process it was of was killed */
	__u32 lost_pid;		/* the first of them */
	__u32 pad2;
	char files_comm[16];
	char bytes_comm[16];
	char deny_comm[16];
	char lost_comm[16];
	char deny_path[TRACE_DENY_LEN];
};

/* Where a file record's path came from. */
enum trace_path_from {
	TRACE_PATH_USER = 0,	/* the program's memory, read after the call
				 * (a thread may have rewritten it); a
				 * relative one joined to the directory it
				 * was relative to, as the kernel resolved
				 * that directory */
	TRACE_PATH_KERNEL,	/* the file the call opened or named by
				 * descriptor, its path walked up from the
				 * kernel's dentry to the task's root */
};

/* Every ring buffer record starts with this. */
struct trace_hdr {
	__u64 cgid;
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 uid;
	__u8 kind;		/* enum trace_kind */
	__u8 truncated;		/* TRACE_TRUNC_* */
	__u8 path_from;		/* enum trace_path_from: file records */
	__u8 pad;
	char comm[16];
};

struct trace_exec {
	struct trace_hdr h;
	__u32 ppid;
	__u32 argv_len;		/* bytes used in argv */
	char filename[TRACE_PATH_MAX];
	char argv[TRACE_ARGV_MAX];
};

struct trace_proc {		/* TRACE_FORK and TRACE_EXIT */
	struct trace_hdr h;
	__u32 child;		/* fork: the new process */
	__u32 exit_code;	/* exit: wait status (code << 8 | signal) */
};

struct trace_file {
	struct trace_hdr h;
	__s64 ret;		/* the system call's result (-errno) */
	__s32 dirfd;		/* -100 (AT_FDCWD) when none */
	__s32 dirfd2;
	__u32 flags;		/* open flags, AT_* flags, rename flags;
				 * TRACE_UNIX: the socket's type */
	__u32 mode;		/* open's create mode, chmod's mode */
	__u32 owner;		/* chown */
	__u32 group;
	__u64 size;		/* truncate's length, fallocate's, an
				 * attribute value's; mknod's device */
	__u8 op;		/* enum trace_file_op */
	__u8 pad[7];
	char path[TRACE_PATH_MAX];
};

/* The path of a file a call opened read-only for the first time, as
 * the kernel resolved it; the header names the first opener. */
struct trace_seen_ev {
	struct trace_hdr h;
	__u64 ino;
	__u32 dev;
	__u32 pad;
	char path[TRACE_PATH_MAX];
};

/* A rename, link or symlink carries its second path as well, an xattr
 * call the attribute's name. */
struct trace_file2 {
	struct trace_file f;
	char path2[TRACE_PATH_MAX];
};

#endif
