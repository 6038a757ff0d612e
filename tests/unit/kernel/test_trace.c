// SPDX-License-Identifier: Apache-2.0
/*
 * Kernel event tracing: decoding of ring buffer records (no kernel needed),
 * then the tracepoint programs and the fanotify source against the running
 * kernel (root). Calls live in a private tree beneath this process's own
 * v2 cgroup, <own>/cw-trace-test-<pid>/calls/<name>; each step forks a
 * child that moves itself into a call cgroup and does a few operations,
 * and the same operations by a child outside every call cgroup must not
 * show up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "unit.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "kernel/trace.h"
#include "bpf/trace.h"

#define MAX_EVS 256

struct seen {
	enum cw_trace_kind kind;
	char source[16];
	uint32_t pid, child;
	int exit_code, exit_signal;
	char op[16];
	char path[256], path2[256], filename[256];
	char argv1[64];
	int64_t ret;
	uint64_t count;		/* reads: one per file or path */
	bool found;
	char path_source[16];
};

static struct {
	bool kernel;		/* BPF on tracepoints with BTF works here */
	bool fanotify;
	char why[256];
	char own[PATH_MAX];	/* <mnt><own> */
	char base[PATH_MAX];	/* <own>/cw-trace-test-<pid> */
	char calls[PATH_MAX];	/* base/calls */
	char dir[PATH_MAX];	/* scratch directory for files */
	struct seen ev[MAX_EVS];
	int nev;
	int flushes;
} F;

#define NEED_KERNEL()                                                \
	do {                                                         \
		if (!F.kernel) {                                     \
			print_message("# skipped: %s\n", F.why);     \
			skip();                                      \
			return;                                      \
		}                                                    \
	} while (0)

/* ---- decoding ---- */

static void test_decode_exec(void **state)
{
	struct trace_exec e;
	struct cw_trace_event ev;
	json_t *j;
	static const char argv[] = "cat\0/etc/hostname";

	(void)state;
	memset(&e, 0, sizeof(e));
	e.h.kind = TRACE_EXEC;
	e.h.cgid = 42;
	e.h.pid = 100;
	e.h.tid = 100;
	memcpy(e.h.comm, "cat", 4);
	e.ppid = 99;
	strcpy(e.filename, "/usr/bin/cat");
	memcpy(e.argv, argv, sizeof(argv));
	e.argv_len = sizeof(argv);
	assert_int_equal(0, cw_trace_decode(&e, sizeof(e), &ev));
	assert_int_equal(CW_TRACE_EXEC, ev.kind);
	assert_int_equal(42, ev.cgroup_id);
	assert_string_equal("/usr/bin/cat", ev.filename);
	assert_string_equal("exec", cw_trace_event_type(&ev));
	j = cw_trace_event_json(&ev);
	assert_non_null(j);
	assert_string_equal("cat", json_string_value(json_array_get(json_object_get(j, "argv"), 0)));
	assert_string_equal("/etc/hostname", json_string_value(json_array_get(json_object_get(j, "argv"), 1)));
	assert_int_equal(2, json_array_size(json_object_get(j, "argv")));
	assert_int_equal(99, json_integer_value(json_object_get(j, "ppid")));
	assert_null(json_object_get(j, "argv_truncated"));
	/* the audit writer's reserved names are never fields */
	assert_null(json_object_get(j, "type"));
	assert_null(json_object_get(j, "ts"));
	assert_null(json_object_get(j, "seq"));
	assert_null(json_object_get(j, "invocation"));
	assert_null(json_object_get(j, "prev"));
	json_decref(j);

	/* a cut argv is flagged; the last argument has no NUL */
	e.h.truncated = TRACE_TRUNC_ARGV;
	e.argv_len = 6;		/* "cat\0/e" */
	assert_int_equal(0, cw_trace_decode(&e, sizeof(e), &ev));
	j = cw_trace_event_json(&ev);
	assert_true(json_is_true(json_object_get(j, "argv_truncated")));
	assert_string_equal("/e", json_string_value(json_array_get(json_object_get(j, "argv"), 1)));
	json_decref(j);
}

static void test_decode_file(void **state)
{
	struct trace_file2 f;
	struct cw_trace_event ev;
	json_t *j;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.f.h.kind = TRACE_FILE;
	f.f.op = TRACE_OP_RENAME;
	f.f.ret = -2;
	f.f.dirfd = -100;
	f.f.dirfd2 = 5;
	strcpy(f.f.path, "/tmp/a");
	strcpy(f.path2, "b");
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f), &ev));
	assert_string_equal("rename", ev.op);
	assert_string_equal("b", ev.path2);
	j = cw_trace_event_json(&ev);
	assert_string_equal("file", cw_trace_event_type(&ev));
	assert_int_equal(-1, json_integer_value(json_object_get(j, "result")));
	assert_string_equal("No such file or directory",
			    json_string_value(json_object_get(j, "error")));
	assert_null(json_object_get(j, "dirfd"));
	assert_int_equal(5, json_integer_value(json_object_get(j, "dirfd2")));
	json_decref(j);
	/* a rename record without room for its target is refused */
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f.f), &ev));

	/* an open: flags as words; a path of non-UTF-8 bytes is kept */
	memset(&f, 0, sizeof(f));
	f.f.h.kind = TRACE_FILE;
	f.f.op = TRACE_OP_OPEN;
	f.f.flags = O_WRONLY | O_CREAT | O_TRUNC;
	f.f.mode = 0644;
	f.f.ret = 3;
	f.f.dirfd = -100;
	strcpy(f.f.path, "/tmp/\xff");
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f.f), &ev));
	j = cw_trace_event_json(&ev);
	assert_string_equal("/tmp/\\xff", json_string_value(json_object_get(j, "path")));
	assert_string_equal("wronly", json_string_value(json_array_get(json_object_get(j, "flags"), 0)));
	assert_string_equal("creat", json_string_value(json_array_get(json_object_get(j, "flags"), 1)));
	assert_string_equal("trunc", json_string_value(json_array_get(json_object_get(j, "flags"), 2)));
	assert_int_equal(0644, json_integer_value(json_object_get(j, "mode")));
	assert_int_equal(3, json_integer_value(json_object_get(j, "result")));
	assert_string_equal("user_memory", json_string_value(json_object_get(j, "path_source")));
	json_decref(j);

	/* the path walked up from the file opened says so */
	f.f.h.path_from = TRACE_PATH_KERNEL;
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f.f), &ev));
	assert_true(ev.path_kernel);
	j = cw_trace_event_json(&ev);
	assert_string_equal("kernel", json_string_value(json_object_get(j, "path_source")));
	json_decref(j);
}

/* The mutations beyond open, unlink, rename, chmod and chown: each op's
 * own fields, and the second string's name by what it is. */
static void test_decode_mutations(void **state)
{
	static const struct {
		__u8 op;
		const char *name, *key2;	/* key2: NULL when one path */
	} ops[] = {
		{ TRACE_OP_TRUNCATE, "truncate", NULL },
		{ TRACE_OP_LINK, "link", "path2" },
		{ TRACE_OP_SYMLINK, "symlink", "target" },
		{ TRACE_OP_MKNOD, "mknod", NULL },
		{ TRACE_OP_UTIMES, "utimes", NULL },
		{ TRACE_OP_SETXATTR, "setxattr", "name" },
		{ TRACE_OP_REMOVEXATTR, "removexattr", "name" },
		{ TRACE_OP_FALLOCATE, "fallocate", NULL },
	};
	struct cw_trace_event ev;
	struct trace_file2 f;
	size_t i;
	json_t *j;

	(void)state;
	for (i = 0; i < CW_ARRAY_SIZE(ops); i++) {
		memset(&f, 0, sizeof(f));
		f.f.h.kind = TRACE_FILE;
		f.f.op = ops[i].op;
		f.f.dirfd = -100;
		f.f.dirfd2 = -100;
		f.f.mode = 010600;
		f.f.size = 4096;
		f.f.h.truncated = TRACE_TRUNC_PATH2;
		strcpy(f.f.path, "/w/f");
		strcpy(f.path2, "second");
		assert_int_equal(0, cw_trace_decode(&f, sizeof(f), &ev));
		assert_string_equal(ops[i].name, ev.op);
		j = cw_trace_event_json(&ev);
		assert_string_equal("/w/f", json_string_value(json_object_get(j, "path")));
		if (ops[i].key2) {
			char cut[32];

			assert_string_equal("second", json_string_value(json_object_get(j, ops[i].key2)));
			snprintf(cut, sizeof(cut), "%s_truncated", ops[i].key2);
			assert_true(json_is_true(json_object_get(j, cut)));
			/* without room for the second string: refused */
			assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f.f), &ev));
		} else {
			assert_null(ev.path2);
			assert_null(json_object_get(j, "path2"));
		}
		json_decref(j);
	}
	/* the sizes, by what they are */
	f.f.op = TRACE_OP_TRUNCATE;
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f.f), &ev));
	j = cw_trace_event_json(&ev);
	assert_int_equal(4096, json_integer_value(json_object_get(j, "length")));
	json_decref(j);
	f.f.op = TRACE_OP_MKNOD;
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f.f), &ev));
	j = cw_trace_event_json(&ev);
	assert_int_equal(010600, json_integer_value(json_object_get(j, "mode")));
	assert_int_equal(4096, json_integer_value(json_object_get(j, "device")));
	json_decref(j);
	f.f.op = TRACE_OP_SETXATTR;
	assert_int_equal(0, cw_trace_decode(&f, sizeof(f), &ev));
	j = cw_trace_event_json(&ev);
	assert_int_equal(4096, json_integer_value(json_object_get(j, "size")));
	json_decref(j);
	/* an op past the last one is refused */
	f.f.op = TRACE_OP_FALLOCATE + 1;
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
}

/* A refused unix connect: a net record's fields; a file op under the unix
 * kind, or a unix op under the file kind, is refused. */
static void test_decode_unix(void **state)
{
	struct trace_file f;
	struct cw_trace_event ev;
	json_t *j;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.h.kind = TRACE_UNIX;
	f.op = TRACE_OP_SENDMSG;
	f.flags = 2;		/* SOCK_DGRAM */
	f.ret = -111;
	strcpy(f.path, "/run/x.sock");
	assert_int_equal(0, cw_trace_decode(&f, offsetof(struct trace_file, path) + 12, &ev));
	assert_int_equal(CW_TRACE_UNIX, ev.kind);
	assert_string_equal("net", cw_trace_event_type(&ev));
	j = cw_trace_event_json(&ev);
	assert_string_equal("sendmsg", json_string_value(json_object_get(j, "op")));
	assert_string_equal("unix", json_string_value(json_object_get(j, "family")));
	assert_string_equal("/run/x.sock", json_string_value(json_object_get(j, "address")));
	assert_int_equal(2, json_integer_value(json_object_get(j, "socket_type")));
	assert_null(json_object_get(j, "path"));
	json_decref(j);
	/* cut before its path's NUL */
	assert_int_equal(-EINVAL, cw_trace_decode(&f, offsetof(struct trace_file, path) + 11, &ev));
	f.op = TRACE_OP_OPEN;
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
	f.h.kind = TRACE_FILE;
	f.op = TRACE_OP_CONNECT;
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
}

/* Two typical events and their records as the audit log writes them. */
static void typical(bool open, struct cw_trace_event *ev, const char **want)
{
	static const char argv[] = "cat\0/etc/hostname";

	memset(ev, 0, sizeof(*ev));
	ev->source = "bpf";
	ev->pid = ev->tid = 7;
	ev->uid = 1000;
	ev->dirfd = ev->dirfd2 = -100;
	if (open) {
		ev->kind = CW_TRACE_FILE;
		strcpy(ev->comm, "cat");
		ev->op = "open";
		ev->path = "/etc/hostname";
		ev->flags = O_RDONLY | O_CLOEXEC;
		ev->ret = 3;
		ev->has_ret = true;
		*want = "{\"source\":\"bpf\",\"pid\":7,\"comm\":\"cat\",\"uid\":1000,"
			"\"op\":\"open\",\"path\":\"/etc/hostname\",\"path_source\":\"user_memory\","
			"\"flags\":[\"rdonly\",\"cloexec\"],\"result\":3}";
	} else {
		ev->kind = CW_TRACE_EXEC;
		strcpy(ev->comm, "bash");
		ev->ppid = 6;
		ev->filename = "/usr/bin/cat";
		ev->argv = argv;
		ev->argv_len = sizeof(argv);
		*want = "{\"source\":\"bpf\",\"pid\":7,\"comm\":\"bash\",\"uid\":1000,"
			"\"ppid\":6,\"filename\":\"/usr/bin/cat\","
			"\"argv\":[\"cat\",\"/etc/hostname\"]}";
	}
}

static void *records_loop(void *arg)
{
	struct cw_trace_event ev;
	const char *want;
	json_t *j[8];
	char *text;
	int i, k;

	for (i = 0; i < 500; i++) {
		for (k = 0; k < 8; k++) {
			typical(k % 2, &ev, &want);
			j[k] = cw_trace_event_json(&ev);
			if (!j[k])
				return "no record";
		}
		/* freed in another order than made */
		for (k = 7; k >= 0; k--) {
			typical(k % 2, &ev, &want);
			text = json_dumps(j[k], JSON_COMPACT | JSON_PRESERVE_ORDER);
			if (!text || strcmp(want, text)) {
				free(text);
				return "wrong text";
			}
			free(text);
			json_decref(j[k]);
		}
	}
	return arg;
}

/* Records share the words they repeat (source, op, flags): made and freed
 * on several threads at once, each keeps its exact text. */
static void test_event_json_text(void **state)
{
	pthread_t t[4];
	void *ret;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(0, pthread_create(&t[i], NULL, records_loop,
						   NULL));
	for (i = 0; i < 4; i++) {
		assert_int_equal(0, pthread_join(t[i], &ret));
		if (ret)
			fail_msg("thread %d: %s", i, (const char *)ret);
	}
}

static void test_decode_rejects(void **state)
{
	struct trace_file f;
	struct trace_proc p;
	struct cw_trace_event ev;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.h.kind = TRACE_FILE;
	f.op = TRACE_OP_OPEN;
	/* short, cut before its path, unknown kind, unknown op,
	 * unterminated path; a record ends at its path's NUL */
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f.h) - 1, &ev));
	assert_int_equal(-EINVAL, cw_trace_decode(&f, offsetof(struct trace_file, path), &ev));
	strcpy(f.path, "/etc/hostname");
	assert_int_equal(0, cw_trace_decode(&f, offsetof(struct trace_file, path) + 14, &ev));
	assert_string_equal("/etc/hostname", ev.path);
	assert_int_equal(-EINVAL, cw_trace_decode(&f, offsetof(struct trace_file, path) + 13, &ev));
	f.h.kind = 99;
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
	f.h.kind = TRACE_FILE;
	f.op = 99;
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
	f.op = TRACE_OP_OPEN;
	memset(f.path, 'a', sizeof(f.path));
	assert_int_equal(-EINVAL, cw_trace_decode(&f, sizeof(f), &ev));
	assert_int_equal(-EINVAL, cw_trace_decode(NULL, 0, &ev));

	/* exit: a wait status becomes code or signal */
	memset(&p, 0, sizeof(p));
	p.h.kind = TRACE_EXIT;
	p.exit_code = 3 << 8;
	assert_int_equal(0, cw_trace_decode(&p, sizeof(p), &ev));
	assert_int_equal(3, ev.exit_code);
	assert_int_equal(0, ev.exit_signal);
	p.exit_code = SIGKILL;
	assert_int_equal(0, cw_trace_decode(&p, sizeof(p), &ev));
	assert_int_equal(-1, ev.exit_code);
	assert_int_equal(SIGKILL, ev.exit_signal);
	assert_string_equal("process", cw_trace_event_type(&ev));
}

/* ---- kernel fixture ---- */

static int read_line(const char *path, const char *prefix, char *out,
		     size_t len)
{
	char line[4096];
	FILE *f = fopen(path, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%s", line + strlen(prefix));
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static uint64_t cgroup_id(const char *path)
{
	struct stat st;

	/* A v2 cgroup's id is its directory's inode number. */
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static void cgroup_remove(const char *path)
{
	int i;

	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++)
		usleep(10000);
}

static int group_setup(void **state)
{
	struct cw_probe p;
	char own[PATH_MAX];

	(void)state;
	cw_probe_run(&p);
	F.kernel = p.item[CW_FEAT_KERNEL_BTF].ok &&
		   p.item[CW_FEAT_BPF_TRACEPOINT].ok &&
		   p.item[CW_FEAT_BPF_RINGBUF].ok && p.item[CW_FEAT_CGROUP2].ok;
	F.fanotify = p.item[CW_FEAT_FANOTIFY].ok && p.item[CW_FEAT_CGROUP2].ok;
	snprintf(F.why, sizeof(F.why), "%s; %s",
		 p.item[CW_FEAT_KERNEL_BTF].detail,
		 p.item[CW_FEAT_BPF_TRACEPOINT].detail);
	if (!p.item[CW_FEAT_CGROUP2].ok ||
	    read_line("/proc/self/cgroup", "0::", own, sizeof(own))) {
		F.kernel = F.fanotify = false;
		snprintf(F.why, sizeof(F.why), "no cgroup v2");
		return 0;
	}
	snprintf(F.own, sizeof(F.own), "%s%s", p.cgroup2_mount,
		 strcmp(own, "/") ? own : "");
	snprintf(F.base, sizeof(F.base), "%s/cw-trace-test-%d", F.own,
		 (int)getpid());
	snprintf(F.calls, sizeof(F.calls), "%s/calls", F.base);
	if (mkdir(F.base, 0755) || mkdir(F.calls, 0755)) {
		F.kernel = F.fanotify = false;
		snprintf(F.why, sizeof(F.why), "cannot create %s: %s", F.calls,
			 strerror(errno));
	}
	snprintf(F.dir, sizeof(F.dir), "/tmp/cw-trace-unit.%d", (int)getpid());
	mkdir(F.dir, 0777);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	DIR *d;
	struct dirent *de;
	char cg[PATH_MAX * 2];

	(void)state;
	/* A test that failed half-way leaves its call cgroup behind. */
	d = F.calls[0] ? opendir(F.calls) : NULL;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(cg, sizeof(cg), "%s/%s", F.calls, de->d_name);
		cgroup_remove(cg);
	}
	if (d)
		closedir(d);
	rmdir(F.calls);
	rmdir(F.base);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", F.dir);
	if (system(cmd)) {
		/* best effort */
	}
	return 0;
}

static int reset(void **state)
{
	(void)state;
	F.nev = 0;
	F.flushes = 0;
	return 0;
}

static void sink(void *ctx, const struct cw_trace_event *ev)
{
	struct seen *s;

	(void)ctx;
	if (!ev) {		/* the end of a round of reading */
		F.flushes++;
		return;
	}
	if (ev->kind == CW_TRACE_READS) {
		/* one seen per file of the record, with its opener */
		const char *path;
		json_t *n;

		json_object_foreach(json_object_get(ev->reads, "files"), path,
				    n) {
			if (F.nev == MAX_EVS)
				return;
			s = &F.ev[F.nev++];
			memset(s, 0, sizeof(*s));
			s->kind = ev->kind;
			snprintf(s->source, sizeof(s->source), "%s",
				 json_string_value(json_object_get(ev->reads,
								   "source")));
			snprintf(s->op, sizeof(s->op), "read");
			snprintf(s->path, sizeof(s->path), "%s", path);
			snprintf(s->path_source, sizeof(s->path_source), "%s",
				 json_string_value(json_object_get(
					 ev->reads, "path_source")));
			s->pid = (uint32_t)json_integer_value(
				json_object_get(ev->reads, "pid"));
			s->found = json_is_true(json_object_get(ev->reads,
								"found"));
			s->count = (uint64_t)json_integer_value(n);
		}
		return;
	}
	if (F.nev == MAX_EVS)
		return;
	s = &F.ev[F.nev++];
	memset(s, 0, sizeof(*s));
	s->kind = ev->kind;
	snprintf(s->source, sizeof(s->source), "%s", ev->source);
	s->pid = ev->pid;
	s->child = ev->child;
	s->exit_code = ev->exit_code;
	s->exit_signal = ev->exit_signal;
	s->ret = ev->ret;
	snprintf(s->op, sizeof(s->op), "%s", ev->op ? ev->op : "");
	snprintf(s->path, sizeof(s->path), "%s", ev->path ? ev->path : "");
	snprintf(s->path2, sizeof(s->path2), "%s", ev->path2 ? ev->path2 : "");
	snprintf(s->filename, sizeof(s->filename), "%s",
		 ev->filename ? ev->filename : "");
	if (ev->argv && ev->argv_len > strlen(ev->argv) + 1)
		snprintf(s->argv1, sizeof(s->argv1), "%s",
			 ev->argv + strlen(ev->argv) + 1);
}

static const struct seen *find(enum cw_trace_kind kind, const char *op,
			       const char *path)
{
	int i;

	for (i = 0; i < F.nev; i++)
		if (F.ev[i].kind == kind && (!op || !strcmp(F.ev[i].op, op)) &&
		    (!path || !strcmp(kind == CW_TRACE_EXEC ? F.ev[i].filename :
							      F.ev[i].path,
				      path)))
			return &F.ev[i];
	return NULL;
}

/* What each child does, in a call cgroup or outside. */
static void file_ops(const char *tag)
{
	char a[PATH_MAX], b[PATH_MAX];
	int fd;

	snprintf(a, sizeof(a), "%s/%s-a", F.dir, tag);
	snprintf(b, sizeof(b), "%s/%s-b", F.dir, tag);
	fd = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(10);
	if (write(fd, "data", 4) != 4)
		_exit(11);
	close(fd);
	if (chmod(a, 0640) || rename(a, b) || unlink(b))
		_exit(12);
}

/* Forks a child that joins cg (NULL: stays outside), runs fn, then
 * executes `/bin/echo tag`; its pid, and its wait status in *status. */
static pid_t run_child_status(const char *cg, const char *tag,
			      void (*fn)(const char *), int *status)
{
	char procs[PATH_MAX + 16];
	int fd;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (cg) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
			fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(20);
			close(fd);
		}
		if (fn)
			fn(tag);
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execl("/bin/echo", "echo", tag, (char *)NULL);
		_exit(21);
	}
	assert_int_equal(pid, waitpid(pid, status, 0));
	return pid;
}

/* run_child_status for a child that must end well. */
static pid_t run_child(const char *cg, const char *tag,
		       void (*fn)(const char *))
{
	int status;
	pid_t pid = run_child_status(cg, tag, fn, &status);

	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	return pid;
}

/* Forks a child that joins cg (NULL: stays outside) and executes a shell
 * writing <dir>/<tag>-a; its pid. */
static pid_t run_sh(const char *cg, const char *tag)
{
	char procs[PATH_MAX + 16], script[PATH_MAX * 2];
	int status, fd;
	pid_t pid;

	snprintf(script, sizeof(script), "echo data > %s/%s-a; cat %s/%s-a",
		 F.dir, tag, F.dir, tag);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (cg) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
			fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(20);
			close(fd);
		}
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execl("/usr/bin/dash", "sh", "-c", script, (char *)NULL);
		_exit(21);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	return pid;
}

static char *new_call(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", F.calls, name);
	assert_int_equal(0, mkdir(buf, 0755));
	return buf;
}

static void test_tracepoints(void **state)
{
	struct cw_trace_opts o = { .bpf = true, .ringbuf_kib = 256 };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	const struct seen *s;
	char cg[PATH_MAX], path[PATH_MAX];
	pid_t in, out;
	int i, n;

	(void)state;
	NEED_KERNEL();
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	new_call("inv-unit-1", cg, sizeof(cg));
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-1", &sb, sink, NULL,
			      &err);
	assert_non_null(c);
	in = run_child(cg, "inside", file_ops);
	out = run_child(NULL, "outside", file_ops);
	cw_trace_call_end(t, c, &st);

	snprintf(path, sizeof(path), "%s/inside-a", F.dir);
	s = find(CW_TRACE_FILE, "open", path);
	assert_non_null(s);
	assert_int_equal(in, s->pid);
	assert_true(s->ret >= 0);
	assert_non_null(find(CW_TRACE_FILE, "chmod", path));
	s = find(CW_TRACE_FILE, "rename", path);
	assert_non_null(s);
	assert_int_equal(0, s->ret);
	snprintf(path, sizeof(path), "%s/inside-b", F.dir);
	assert_string_equal(path, s->path2);
	assert_non_null(find(CW_TRACE_FILE, "unlink", path));
	s = find(CW_TRACE_EXEC, NULL, "/bin/echo");
	assert_non_null(s);
	assert_string_equal("inside", s->argv1);
	s = find(CW_TRACE_EXIT, NULL, NULL);
	assert_non_null(s);
	assert_int_equal(in, s->pid);
	assert_int_equal(0, s->exit_code);
	/* nothing of the child outside every call cgroup */
	for (i = 0; i < F.nev; i++) {
		assert_int_not_equal(out, F.ev[i].pid);
		assert_null(strstr(F.ev[i].path, "outside"));
	}
	assert_int_equal(0, st.lost);
	assert_int_equal(0, st.missing);
	/* the sink was told a round had ended after its last event */
	assert_true(F.flushes > 0);
	assert_int_equal(1, st.exec);
	assert_int_equal(1, st.exit);
	/* every event counted, but the reads, which are summaries */
	for (i = 0, n = 0; i < F.nev; i++)
		n += F.ev[i].kind != CW_TRACE_READS;
	assert_int_equal(n, st.exec + st.file + st.fork + st.exit);
	/* the file, not /dev/null */
	assert_int_equal(1, st.files_written);
	cw_trace_close(t);
	cgroup_remove(cg);
}

static void slow_sink(void *ctx, const struct cw_trace_event *ev)
{
	(void)ctx;
	if (ev)
		usleep(200);
}

/* 2000 opens for writing (each a record: reads are summed), pace_us
 * apart. */
static void opens(useconds_t pace_us)
{
	int i, fd;

	for (i = 0; i < 2000; i++) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		if (pace_us)
			usleep(pace_us);
	}
}

/* As fast as a process can. */
static void many_opens(const char *tag)
{
	(void)tag;
	opens(0);
}

/* At about a shell loop's pace. */
static void paced_opens(const char *tag)
{
	(void)tag;
	opens(20);
}

static void test_lost_counted(void **state)
{
	/* One page: a few dozen records; nothing pauses the call. */
	struct cw_trace_opts o = { .bpf = true, .ringbuf_kib = 4,
				   .no_pause = true };
	struct cw_trace_stats st;
	int status;
	pid_t pid;
	struct cw_trace_call *c;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	char cg[PATH_MAX];

	(void)state;
	NEED_KERNEL();
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	new_call("inv-unit-2", cg, sizeof(cg));
	/* a sink slower than the burst: the ring buffer fills */
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-2", &sb, slow_sink,
			      NULL, &err);
	assert_non_null(c);
	pid = run_child_status(cg, "burst", many_opens, &status);
	cw_trace_call_end(t, c, &st);
	assert_true(st.lost > 0);
	/* the process whose event found no room was killed, not let go on
	 * unrecorded */
	assert_true(WIFSIGNALED(status));
	assert_int_equal(SIGKILL, WTERMSIG(status));
	assert_true(st.lost_kill.hit);
	assert_int_equal(pid, st.lost_kill.pid);
	assert_true(st.file < 2000);
	assert_true(cw_trace_lost_total(t) >= st.lost);
	assert_int_equal(0, st.missing);
	cw_trace_close(t);
	cgroup_remove(cg);
}

/* The twin: a burst into a small ring, with the call's cgroup to pause
 * it, loses nothing; the pauses are counted. */
static void test_paused_not_lost(void **state)
{
	struct cw_trace_opts o = { .bpf = true, .ringbuf_kib = 64 };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	char cg[PATH_MAX], frozen[PATH_MAX + 16], buf[8] = "";
	int fd;

	(void)state;
	NEED_KERNEL();
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	new_call("inv-unit-4", cg, sizeof(cg));
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	c = cw_trace_call_add(t, cgroup_id(cg), fd, "inv-unit-4", &sb,
			      slow_sink, NULL, &err);
	assert_non_null(c);
	run_child(cg, "burst", paced_opens);
	cw_trace_call_end(t, c, &st);
	print_message("# 2000 opens, 64 KiB ring: %llu paused for %llu us, %llu lost\n",
		      (unsigned long long)st.pauses,
		      (unsigned long long)st.paused_us,
		      (unsigned long long)st.lost);
	assert_int_equal(0, st.lost);
	assert_true(st.file >= 2000);
	assert_true(st.pauses > 0);
	assert_true(st.paused_us > 0);
	assert_int_equal(0, st.missing);
	/* and the call is not left frozen */
	snprintf(frozen, sizeof(frozen), "%s/cgroup.freeze", cg);
	close(fd);
	fd = open(frozen, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	assert_int_equal('0', buf[0]);
	cw_trace_close(t);
	cgroup_remove(cg);
}

/* 500 reads of one file and 3 of one that is not there. */
static void reads(const char *tag)
{
	char missing[PATH_MAX];
	int i, fd;

	snprintf(missing, sizeof(missing), "%s/%s-missing", F.dir, tag);
	for (i = 0; i < 500; i++) {
		fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(40);
		close(fd);
	}
	for (i = 0; i < 3; i++)
		if (open(missing, O_RDONLY | O_CLOEXEC) >= 0)
			_exit(41);
}

/* Read-only opens are summed per path in the kernel: one event each, at
 * the call's end, with the count, how many failed and the first opener;
 * a tiny ring is not filled by them. */
static void test_reads_summed(void **state)
{
	struct cw_trace_opts o = { .bpf = true, .ringbuf_kib = 4,
				   .no_pause = true };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	const struct seen *s;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	char cg[PATH_MAX], missing[PATH_MAX];
	pid_t pid;
	int i, n = 0;

	(void)state;
	NEED_KERNEL();
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	new_call("inv-unit-7", cg, sizeof(cg));
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-7", &sb, sink,
			      NULL, &err);
	assert_non_null(c);
	pid = run_child(cg, "reads", reads);
	cw_trace_call_end(t, c, &st);
	s = find(CW_TRACE_READS, "read", "/etc/hostname");
	assert_non_null(s);
	assert_int_equal(500, s->count);
	assert_true(s->found);
	assert_string_equal("kernel", s->path_source);
	assert_string_equal("bpf", s->source);
	assert_int_equal(pid, s->pid);
	snprintf(missing, sizeof(missing), "%s/reads-missing", F.dir);
	s = find(CW_TRACE_READS, "read", missing);
	assert_non_null(s);
	assert_int_equal(3, s->count);
	assert_false(s->found);
	assert_string_equal("user_memory", s->path_source);
	assert_int_equal(pid, s->pid);
	/* no open record of them, one summary per path */
	for (i = 0; i < F.nev; i++) {
		if (!strcmp(F.ev[i].path, "/etc/hostname")) {
			assert_int_equal(CW_TRACE_READS, F.ev[i].kind);
			n++;
		}
	}
	assert_int_equal(1, n);
	assert_true(st.reads >= 503);
	assert_int_equal(0, st.lost);
	cw_trace_close(t);
	cgroup_remove(cg);
}

/* Distinct files read while the reader is held up: more first opens than
 * the ring of paths holds. */
#define SEEN_FILES 6000

static struct {
	int reads[SEEN_FILES];		/* summed in a reads record */
	int records[SEEN_FILES];	/* an open record of its own */
	bool held;
} G;

/* i of F.dir/seen/i, or -1. */
static int seen_index(const char *path)
{
	char pre[PATH_MAX];
	int n = snprintf(pre, sizeof(pre), "%s/seen/", F.dir);
	long i;
	char *end;

	if (strncmp(path, pre, (size_t)n))
		return -1;
	i = strtol(path + n, &end, 10);
	return *end || i < 0 || i >= SEEN_FILES ? -1 : (int)i;
}

/* Holds the reader up at the first record (its open of /dev/null for
 * writing), then tallies where each file went. */
static void holding_sink(void *ctx, const struct cw_trace_event *ev)
{
	const char *path;
	json_t *n;
	int i;

	(void)ctx;
	if (!ev)
		return;
	if (ev->kind == CW_TRACE_FILE && !strcmp(ev->op, "open")) {
		if (!G.held && !strcmp(ev->path, "/dev/null")) {
			G.held = true;
			usleep(1500000);
			return;
		}
		i = seen_index(ev->path);
		if (i >= 0 && ev->ret >= 0)
			G.records[i]++;
	} else if (ev->kind == CW_TRACE_READS) {
		json_object_foreach(json_object_get(ev->reads, "files"), path,
				    n) {
			i = seen_index(path);
			if (i >= 0)
				G.reads[i] += (int)json_integer_value(n);
		}
	}
}

static void read_distinct(const char *tag)
{
	char p[PATH_MAX];
	int i, fd;

	(void)tag;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(50);
	close(fd);
	for (i = 0; i < SEEN_FILES; i++) {
		snprintf(p, sizeof(p), "%s/seen/%d", F.dir, i);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(51);
		close(fd);
	}
}

/* A read's path has a ring of its own; when it is full the open is a
 * record instead: each file is either summed or a record, never both,
 * never neither, and nothing is lost. */
static void test_seen_ring_full(void **state)
{
	struct cw_trace_opts o = { .bpf = true, .ringbuf_kib = 8192,
				   .no_pause = true };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	char cg[PATH_MAX], p[PATH_MAX];
	int i, fd, status, summed = 0, recorded = 0;

	(void)state;
	NEED_KERNEL();
	memset(&G, 0, sizeof(G));
	snprintf(p, sizeof(p), "%s/seen", F.dir);
	mkdir(p, 0755);
	for (i = 0; i < SEEN_FILES; i++) {
		snprintf(p, sizeof(p), "%s/seen/%d", F.dir, i);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	new_call("inv-unit-9", cg, sizeof(cg));
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-9", &sb,
			      holding_sink, NULL, &err);
	assert_non_null(c);
	run_child_status(cg, "distinct", read_distinct, &status);
	cw_trace_call_end(t, c, &st);
	assert_true(WIFEXITED(status));
	assert_int_equal(0, WEXITSTATUS(status));
	assert_true(G.held);
	for (i = 0; i < SEEN_FILES; i++) {
		assert_int_equal(1, G.reads[i] + G.records[i]);
		summed += G.reads[i];
		recorded += G.records[i];
	}
	print_message("# %d distinct reads: %d summed, %d records\n",
		      SEEN_FILES, summed, recorded);
	/* the ring of paths did fill, and did hold some */
	assert_true(recorded > 0);
	assert_true(summed > 0);
	assert_int_equal(0, st.lost);
	assert_int_equal(0, st.missing);
	cw_trace_close(t);
	cgroup_remove(cg);
}

static void open_five(const char *tag)
{
	char p[PATH_MAX];
	int i, fd;

	for (i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/%s-%d", F.dir, tag, i);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(30);
		close(fd);
	}
}

static void test_files_limit(void **state)
{
	struct cw_trace_opts o = { .bpf = true };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	struct cw_sandbox sb;
	struct cw_error err;
	struct cw_trace *t;
	char cg[PATH_MAX], procs[PATH_MAX + 16], p[PATH_MAX];
	int status, fd;
	pid_t pid;

	(void)state;
	NEED_KERNEL();
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	memset(&sb, 0, sizeof(sb));
	sb.files.max_files_written = 3;
	new_call("inv-unit-3", cg, sizeof(cg));
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-3", &sb, NULL, NULL,
			      &err);
	assert_non_null(c);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(20);
		close(fd);
		open_five("lim");
		_exit(0);
	}
	assert_int_equal(pid, waitpid(pid, &status, 0));
	/* killed right after the fourth open */
	assert_true(WIFSIGNALED(status));
	assert_int_equal(SIGKILL, WTERMSIG(status));
	snprintf(p, sizeof(p), "%s/lim-3", F.dir);
	assert_int_equal(0, access(p, F_OK));
	snprintf(p, sizeof(p), "%s/lim-4", F.dir);
	assert_int_equal(-1, access(p, F_OK));
	cw_trace_call_end(t, c, &st);
	assert_true(st.files.hit);
	assert_int_equal(pid, st.files.pid);
	assert_int_equal(4, st.files_written);
	assert_false(st.bytes.hit);
	assert_false(st.deny.hit);
	cw_trace_close(t);
	cgroup_remove(cg);
}

static void test_no_btf(void **state)
{
	struct cw_trace_opts o = { .bpf = true,
				   .btf_path = "/nonexistent/vmlinux" };
	struct cw_error err = { 0 };

	(void)state;
	NEED_KERNEL();
	/* CO-RE needs the kernel's types: a clear error, not a crash */
	assert_null(cw_trace_open(&o, &err));
	assert_non_null(strstr(err.text, "tracing BPF"));
}

static void test_bad_ringbuf(void **state)
{
	struct cw_trace_opts o = { .bpf = true,
				   .ringbuf_kib = CW_TRACE_RINGBUF_MAX_KIB + 1 };
	struct cw_error err = { 0 };

	(void)state;
	errno = 0;
	assert_null(cw_trace_open(&o, &err));
	assert_int_equal(EINVAL, errno);
	assert_non_null(strstr(err.text, "ring buffer"));
}

static void test_fanotify(void **state)
{
	struct cw_trace_opts o = { .fanotify = true };
	struct cw_trace_stats st;
	struct cw_trace_call *c;
	struct cw_error err;
	struct cw_trace *t;
	const struct seen *s;
	char cg[PATH_MAX], path[PATH_MAX];
	pid_t in;
	int i;
	json_t *src;

	(void)state;
	if (!F.fanotify) {
		print_message("# skipped: no fanotify permission events or no cgroup v2 here\n");
		skip();
		return;
	}
	t = cw_trace_open(&o, &err);
	assert_non_null(t);
	src = cw_trace_sources(t);
	assert_string_equal("fanotify", json_string_value(json_array_get(src, 0)));
	json_decref(src);
	assert_false(cw_trace_enforces_files(t));
	new_call("inv-unit-fan", cg, sizeof(cg));
	c = cw_trace_call_add(t, cgroup_id(cg), -1, "inv-unit-fan", NULL, sink,
			      NULL, &err);
	assert_non_null(c);
	/* fanotify attributes a process by the exec it waited for */
	in = run_sh(cg, "faninside");
	run_sh(NULL, "fanoutside");
	cw_trace_call_end(t, c, &st);
	s = find(CW_TRACE_EXEC, NULL, "/usr/bin/dash");
	assert_non_null(s);
	assert_int_equal(in, s->pid);
	assert_string_equal("fanotify", s->source);
	snprintf(path, sizeof(path), "%s/faninside-a", F.dir);
	s = find(CW_TRACE_FILE, "open", path);
	assert_non_null(s);
	assert_int_equal(in, s->pid);
	assert_non_null(find(CW_TRACE_FILE, "close_write", path));
	for (i = 0; i < F.nev; i++)
		assert_null(strstr(F.ev[i].path, "fanoutside"));
	assert_int_equal(0, st.lost);
	cw_trace_close(t);
	cgroup_remove(cg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_exec),
		cmocka_unit_test(test_decode_file),
		cmocka_unit_test(test_decode_mutations),
		cmocka_unit_test(test_decode_unix),
		cmocka_unit_test(test_event_json_text),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_bad_ringbuf),
		cmocka_unit_test_setup(test_tracepoints, reset),
		cmocka_unit_test_setup(test_lost_counted, reset),
		cmocka_unit_test_setup(test_reads_summed, reset),
		cmocka_unit_test_setup(test_seen_ring_full, reset),
		cmocka_unit_test_setup(test_paused_not_lost, reset),
		cmocka_unit_test_setup(test_files_limit, reset),
		cmocka_unit_test_setup(test_no_btf, reset),
		cmocka_unit_test_setup(test_fanotify, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
