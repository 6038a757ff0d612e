// SPDX-License-Identifier: Apache-2.0
/*
 * probe: what it reports must match what this machine has, checked here
 * independently where that is cheap; CW_PROBE_DISABLE turns exactly the
 * named features off; nothing is left behind. Runs as root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/probe.h"
#include "unit.h"

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif

#define OVERRIDE "disabled by CW_PROBE_DISABLE (test override)"

static const char *const names[CW_FEAT_COUNT] = {
	"seccomp", "seccomp_notify", "landlock", "cgroup2",
	"cgroup_v1_memory", "cgroup_v1_pids", "bpf_cgroup_sock_addr",
	"bpf_cgroup_sock", "bpf_cgroup_skb", "bpf_ringbuf", "kernel_btf",
	"bpf_tracepoint", "bpf_lsm", "fanotify", "kaudit", "proc_events",
	"sock_diag_inet", "call_namespaces", "call_user_namespace",
};

/* One probe of the unmodified machine, shared by the read-only tests. */
static struct cw_probe base;

static int setup(void **state)
{
	(void)state;
	unsetenv("CW_PROBE_DISABLE");
	cw_probe_run(&base);
	return 0;
}

static void assert_item(const struct cw_probe *p, enum cw_feature f, bool ok)
{
	if (p->item[f].ok != ok)
		print_error("%s: expected %s, got %s: %s\n", names[f],
			    ok ? "ok" : "not ok", p->item[f].ok ? "ok" : "not ok",
			    p->item[f].detail);
	assert_int_equal(ok, p->item[f].ok);
	assert_true(p->item[f].detail[0] != '\0');
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	fclose(f);
	return 0;
}

/* Field 4 (root) and 5 (mount point) of the first mount of fstype. */
static bool mount_of(const char *fstype, char *root, char *point, size_t len)
{
	char line[4096], pat[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	assert_non_null(f);
	snprintf(pat, sizeof(pat), " - %s ", fstype);
	while (!found && fgets(line, sizeof(line), f)) {
		char r[1024], m[1024];

		if (!strstr(line, pat) ||
		    sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2)
			continue;
		snprintf(root, len, "%s", r);
		snprintf(point, len, "%s", m);
		found = true;
	}
	fclose(f);
	return found;
}

/* Our path in the hierarchy whose controller list contains ctrl ("" = v2). */
static bool own_path(const char *ctrl, char *path, size_t len)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b;

		if (!a || !(b = strchr(a + 1, ':')))
			continue;
		*b = '\0';
		b[1 + strcspn(b + 1, "\n")] = '\0';
		if (ctrl[0] ? !strstr(a + 1, ctrl) : strcmp(a + 1, ""))
			continue;
		snprintf(path, len, "%s", b + 1);
		found = true;
	}
	fclose(f);
	return found;
}

static bool own_v2_dir(char *dir, size_t len)
{
	char root[1024], point[1024], own[1024];
	size_t rl;

	if (!mount_of("cgroup2", root, point, sizeof(root)) ||
	    !own_path("", own, sizeof(own)))
		return false;
	rl = strcmp(root, "/") ? strlen(root) : 0;
	snprintf(dir, len, "%s%s", point, strcmp(own + rl, "/") ? own + rl : "");
	return true;
}

static void test_names(void **state)
{
	int f;

	(void)state;
	for (f = 0; f < CW_FEAT_COUNT; f++)
		assert_string_equal(names[f], cw_probe_name(f));
	errno = 0;
	assert_null(cw_probe_name(CW_FEAT_COUNT));
	assert_int_equal(EINVAL, errno);
}

/* As root the holder of a call's namespaces starts; whether memfds are
 * made non-executable follows the sysctl's presence. */
static void test_call_namespaces(void **state)
{
	const char *d = base.item[CW_FEAT_CALL_NAMESPACES].detail;

	(void)state;
	if (geteuid() != 0) {
		assert_item(&base, CW_FEAT_CALL_NAMESPACES, false);
		assert_non_null(strstr(d, "CAP_SYS_ADMIN"));
		return;
	}
	assert_item(&base, CW_FEAT_CALL_NAMESPACES, true);
	assert_int_equal(access("/proc/sys/vm/memfd_noexec", F_OK) == 0,
			 strstr(d, "no vm.memfd_noexec") == NULL);
}

static void test_seccomp_landlock_fanotify(void **state)
{
	char want[32];
	int abi;

	(void)state;
	/* PR_GET_SECCOMP answers EINVAL only without CONFIG_SECCOMP. */
	assert_true(prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0);
	assert_item(&base, CW_FEAT_SECCOMP, true);
	assert_item(&base, CW_FEAT_SECCOMP_NOTIFY, true);

	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);
	assert_true(abi >= 1);
	assert_item(&base, CW_FEAT_LANDLOCK, true);
	assert_int_equal(abi, base.landlock_abi);
	snprintf(want, sizeof(want), "ABI %d", abi);
	assert_non_null(strstr(base.item[CW_FEAT_LANDLOCK].detail, want));

	assert_item(&base, CW_FEAT_FANOTIFY, true);
	assert_item(&base, CW_FEAT_SOCK_DIAG_INET, true);
}

static void test_cgroups(void **state)
{
	char root[1024], point[1024], dir[2048], file[2100], ctl[256], own[1024];
	struct stat st;

	(void)state;
	assert_true(mount_of("cgroup2", root, point, sizeof(root)));
	assert_item(&base, CW_FEAT_CGROUP2, true);
	assert_string_equal(point, base.cgroup2_mount);
	assert_memory_equal(point, base.item[CW_FEAT_CGROUP2].detail,
			    strlen(point));
	assert_true(own_v2_dir(dir, sizeof(dir)));
	snprintf(file, sizeof(file), "%s/cgroup.controllers", dir);
	assert_int_equal(0, read_text(file, ctl, sizeof(ctl)));
	assert_string_equal(ctl, base.cgroup2_controllers);
	assert_non_null(strstr(base.item[CW_FEAT_CGROUP2].detail,
			       ctl[0] ? ctl : "none"));

	/* v1 memory and pids: usable exactly when we sit in such a tree. */
	assert_item(&base, CW_FEAT_CGROUP_V1_MEMORY,
		    own_path("memory", own, sizeof(own)));
	assert_item(&base, CW_FEAT_CGROUP_V1_PIDS,
		    own_path("pids", own, sizeof(own)));
	if (base.item[CW_FEAT_CGROUP_V1_MEMORY].ok) {
		assert_int_equal(0, stat(base.item[CW_FEAT_CGROUP_V1_MEMORY]
						 .detail, &st));
		assert_true(S_ISDIR(st.st_mode));
	}
	if (base.item[CW_FEAT_CGROUP_V1_PIDS].ok) {
		assert_int_equal(0, stat(base.item[CW_FEAT_CGROUP_V1_PIDS]
						 .detail, &st));
		assert_true(S_ISDIR(st.st_mode));
	}
}

static void test_bpf(void **state)
{
	(void)state;
	assert_item(&base, CW_FEAT_BPF_CGROUP_SOCK_ADDR, true);
	assert_item(&base, CW_FEAT_BPF_CGROUP_SOCK, true);
	assert_item(&base, CW_FEAT_BPF_CGROUP_SKB, true);
	assert_item(&base, CW_FEAT_BPF_RINGBUF, true);
	assert_item(&base, CW_FEAT_KERNEL_BTF,
		    access("/sys/kernel/btf/vmlinux", R_OK) == 0);
}

static void test_bpf_tracepoint(void **state)
{
	char root[1024], point[1024];

	(void)state;
	if (!base.item[CW_FEAT_BPF_TRACEPOINT].ok &&
	    !mount_of("tracefs", root, point, sizeof(root))) {
		print_message("skipped: tracefs unavailable (%s)\n",
			      base.item[CW_FEAT_BPF_TRACEPOINT].detail);
		skip();
	}
	assert_item(&base, CW_FEAT_BPF_TRACEPOINT, true);
}

static void test_bpf_lsm(void **state)
{
	char lsm[256];

	(void)state;
	if (!read_text("/sys/kernel/security/lsm", lsm, sizeof(lsm)) &&
	    strstr(lsm, "bpf")) {
		print_message("skipped: BPF LSM is active here (%s); the "
			      "expectation is for machines without it\n", lsm);
		skip();
	}
	assert_item(&base, CW_FEAT_BPF_LSM, false);
}

static void test_every_item_explains(void **state)
{
	int f;

	(void)state;
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		assert_true(base.item[f].detail[0] != '\0');
		assert_non_null(memchr(base.item[f].detail, '\0',
				       sizeof(base.item[f].detail)));
	}
}

static void test_disable_override(void **state)
{
	struct cw_probe p;
	int f;

	(void)state;
	setenv("CW_PROBE_DISABLE", "landlock,kernel_btf", 1);
	cw_probe_run(&p);
	unsetenv("CW_PROBE_DISABLE");
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		if (f == CW_FEAT_LANDLOCK || f == CW_FEAT_KERNEL_BTF) {
			assert_false(p.item[f].ok);
			assert_string_equal(OVERRIDE, p.item[f].detail);
		} else {
			assert_item(&p, f, base.item[f].ok);
			assert_string_not_equal(OVERRIDE, p.item[f].detail);
		}
	}
	assert_int_equal(0, p.landlock_abi);
	assert_string_equal(base.cgroup2_mount, p.cgroup2_mount);
}

static void test_disable_unknown_warns(void **state)
{
	char out[1024], path[] = "/tmp/test_probe_stderr_XXXXXX";
	struct cw_probe p;
	int fd, saved, f;
	ssize_t n;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(STDERR_FILENO, dup2(fd, STDERR_FILENO));
	setenv("CW_PROBE_DISABLE", " bogus, seccomp_notify,,nope ", 1);
	cw_probe_run(&p);
	unsetenv("CW_PROBE_DISABLE");
	fflush(stderr);
	assert_int_equal(STDERR_FILENO, dup2(saved, STDERR_FILENO));
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr(out, "bogus"));
	assert_non_null(strstr(out, "nope"));
	assert_null(strstr(out, "seccomp_notify"));
	/* One warning line for all unknown names. */
	assert_ptr_equal(strchr(out, '\n'), out + n - 1);

	for (f = 0; f < CW_FEAT_COUNT; f++) {
		if (f == CW_FEAT_SECCOMP_NOTIFY)
			assert_string_equal(OVERRIDE, p.item[f].detail);
		else
			assert_int_equal(base.item[f].ok, p.item[f].ok);
	}
}

static void test_disable_all(void **state)
{
	char list[512] = "";
	struct cw_probe p;
	int f;

	(void)state;
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		strcat(list, names[f]);
		strcat(list, ",");
	}
	setenv("CW_PROBE_DISABLE", list, 1);
	cw_probe_run(&p);
	unsetenv("CW_PROBE_DISABLE");
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		assert_false(p.item[f].ok);
		assert_string_equal(OVERRIDE, p.item[f].detail);
	}
	assert_int_equal(0, p.landlock_abi);
	assert_string_equal("", p.cgroup2_mount);
	assert_string_equal("", p.cgroup2_controllers);
}

static void test_json(void **state)
{
	json_t *j, *feats, *o;
	int f;

	(void)state;
	j = cw_probe_json(&base);
	assert_non_null(j);
	feats = json_object_get(j, "features");
	assert_true(json_is_object(feats));
	assert_int_equal(CW_FEAT_COUNT, json_object_size(feats));
	for (f = 0; f < CW_FEAT_COUNT; f++) {
		o = json_object_get(feats, names[f]);
		assert_true(json_is_object(o));
		assert_true(json_is_boolean(json_object_get(o, "ok")));
		assert_int_equal(base.item[f].ok,
				 json_is_true(json_object_get(o, "ok")));
		assert_string_equal(base.item[f].detail,
				    json_string_value(json_object_get(o, "detail")));
	}
	assert_int_equal(base.landlock_abi,
			 json_integer_value(json_object_get(j, "landlock_abi")));
	o = json_object_get(j, "cgroup2");
	assert_string_equal(base.cgroup2_mount,
			    json_string_value(json_object_get(o, "mount")));
	assert_string_equal(base.cgroup2_controllers,
			    json_string_value(json_object_get(o, "controllers")));
	json_decref(j);
}

/* Paths are bytes, not necessarily UTF-8; the JSON must still come out. */
static void test_json_non_utf8(void **state)
{
	struct cw_probe p = base;
	json_t *j;

	(void)state;
	snprintf(p.cgroup2_mount, sizeof(p.cgroup2_mount), "/cg\xff");
	snprintf(p.item[CW_FEAT_CGROUP2].detail,
		 sizeof(p.item[CW_FEAT_CGROUP2].detail), "/cg\xff (x)");
	j = cw_probe_json(&p);
	assert_non_null(j);
	assert_string_equal("/cg?", json_string_value(json_object_get(
				json_object_get(j, "cgroup2"), "mount")));
	json_decref(j);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Entries of dir whose name starts with this process's probe prefix. */
static int count_leftovers(const char *dir)
{
	char prefix[40];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "cw-probe-%d-", (int)getpid());
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

/* Loaded programs and maps named "cw_probe". */
static int count_bpf_objects(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, "cw_probe"))
			n++;
		close(fd);
	}
	id = 0;
	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, "cw_probe"))
			n++;
		close(fd);
	}
	return n;
}

static int hold_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "cw_probe",
			       "Apache-2.0", insns, 2, NULL);

	assert_true(fd >= 0);
	return fd;
}

static void test_leaves_nothing(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char v2[2048];
	struct cw_probe p;
	int before, i, objs, held;

	(void)state;
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	before = count_fds();
	cw_probe_run(&p);
	assert_int_equal(before, count_fds());

	assert_true(own_v2_dir(v2, sizeof(v2)));
	assert_int_equal(0, count_leftovers(v2));
	if (p.item[CW_FEAT_CGROUP_V1_MEMORY].ok)
		assert_int_equal(0, count_leftovers(
				p.item[CW_FEAT_CGROUP_V1_MEMORY].detail));
	if (p.item[CW_FEAT_CGROUP_V1_PIDS].ok)
		assert_int_equal(0, count_leftovers(
				p.item[CW_FEAT_CGROUP_V1_PIDS].detail));
	assert_int_equal(0, count_leftovers(tmp));

	/* The counter must see a program of that name while it is held. */
	held = hold_prog();
	assert_true(count_bpf_objects() >= 1);
	close(held);

	/* Programs are freed after an RCU grace period: allow a moment. */
	for (i = 0; i < 100 && (objs = count_bpf_objects()); i++)
		usleep(10000);
	assert_int_equal(0, objs);
	assert_int_equal(before, count_fds());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_call_namespaces),
		cmocka_unit_test(test_seccomp_landlock_fanotify),
		cmocka_unit_test(test_cgroups),
		cmocka_unit_test(test_bpf),
		cmocka_unit_test(test_bpf_tracepoint),
		cmocka_unit_test(test_bpf_lsm),
		cmocka_unit_test(test_every_item_explains),
		cmocka_unit_test(test_disable_override),
		cmocka_unit_test(test_disable_unknown_warns),
		cmocka_unit_test(test_disable_all),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_non_utf8),
		cmocka_unit_test(test_leaves_nothing),
	};

	if (geteuid() != 0) {
		print_message("1..0 # SKIP probe tests need root\n");
		return 0;
	}
	return cmocka_run_group_tests_name("probe", tests, setup, NULL);
}
