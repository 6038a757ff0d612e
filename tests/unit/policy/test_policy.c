// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"
#include "policy/policy.h"
#include "lib/util.h"

#define VALID_DIR "tests/fixtures/policies/valid"
#define INVALID_DIR "tests/fixtures/policies/invalid"

/* All formatted errors of d, one per line. */
static char *format_all(const struct cw_diag *d)
{
	struct cw_buf b = { 0 };
	size_t i;

	for (i = 0; i < d->n; i++) {
		char line[1200];

		cw_error_format(&d->items[i], line, sizeof(line));
		assert_int_equal(0, cw_buf_append(&b, line, strlen(line)));
		assert_int_equal(0, cw_buf_append(&b, "\n", 1));
	}
	if (!b.data)
		assert_int_equal(0, cw_buf_append(&b, "", 0));
	return b.data;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	struct cw_buf b = { 0 };
	char chunk[4096];
	size_t n;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(0, cw_buf_append(&b, chunk, n));
	fclose(f);
	if (!b.data)
		assert_int_equal(0, cw_buf_append(&b, "", 0));
	return b.data;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static struct cw_policy *load(const char *path)
{
	struct cw_diag d;
	struct cw_policy *p;

	cw_diag_init(&d);
	p = cw_policy_load_file(path, &d);
	if (!p) {
		char *all = format_all(&d);

		print_error("%s", all);
		free(all);
		cw_diag_free(&d);
		fail_msg("%s did not load", path);
	}
	assert_int_equal(0, d.n);
	cw_diag_free(&d);
	return p;
}

static void test_valid_fixtures(void **state)
{
	DIR *dir = opendir(VALID_DIR);
	struct dirent *de;
	int count = 0;

	(void)state;
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		char path[512];
		struct cw_policy *p;

		if (!ends_with(de->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", VALID_DIR, de->d_name);
		p = load(path);
		assert_string_equal(path, p->source);
		cw_policy_free(p);
		count++;
	}
	closedir(dir);
	assert_true(count >= 7);
}

/* Every line of the .err file must occur in some formatted error. */
static void check_invalid(const char *json_path)
{
	char err_path[512];
	struct cw_diag d;
	struct cw_policy *p;
	char *want, *all, *line, *save = NULL;

	snprintf(err_path, sizeof(err_path), "%.*s.err",
		 (int)(strlen(json_path) - 5), json_path);
	want = read_text(err_path);
	cw_diag_init(&d);
	errno = 0;
	p = cw_policy_load_file(json_path, &d);
	if (p) {
		cw_policy_free(p);
		fail_msg("%s loaded but must fail", json_path);
	}
	assert_int_equal(EINVAL, errno);
	assert_true(d.n > 0);
	all = format_all(&d);
	/* every error is located in the file */
	for (size_t i = 0; i < d.n; i++)
		if (d.items[i].line <= 0)
			fail_msg("%s: error without a line: %s", json_path,
				 all);
	for (line = strtok_r(want, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(all, line))
			fail_msg("%s: expected an error containing\n  %s\ngot:\n%s",
				 json_path, line, all);
	}
	free(all);
	free(want);
	cw_diag_free(&d);
}

static void test_invalid_fixtures(void **state)
{
	DIR *dir = opendir(INVALID_DIR);
	struct dirent *de;
	int count = 0;

	(void)state;
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		char path[512];

		if (!ends_with(de->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", INVALID_DIR, de->d_name);
		check_invalid(path);
		count++;
	}
	closedir(dir);
	assert_true(count >= 25);
}

static void check_seed(const struct cw_policy *p)
{
	const struct cw_rule *r;

	assert_int_equal(CW_ACTION_DENY, p->default_action);
	assert_false(p->hide_all);
	assert_int_equal(0, p->hide.n);
	assert_int_equal(0, p->nall_limits);
	assert_int_equal(1, p->nrules);
	r = cw_policy_rule(p, "run_command");
	assert_non_null(r);
	assert_string_equal("run_command", r->name);
	assert_int_equal(CW_ACTION_ALLOW, r->action);
	assert_null(r->reason);
	assert_int_equal(0, r->nrequire);
	assert_int_equal(0, r->ndeny_if);
	assert_false(r->uses_command);
	assert_null(r->sandbox);
	assert_int_equal(1, r->nlimits);
	assert_string_equal("run_command_rate", r->limits[0].counter);
	assert_int_equal(60, r->limits[0].window_s);
	assert_int_equal(10, r->limits[0].max);
	assert_int_equal(CW_SCOPE_GRANT, r->limits[0].scope);
	assert_string_equal("tools.run_command.limits[0]", r->limits[0].where);
	assert_ptr_equal(&p->default_sandbox, cw_policy_sandbox(p));
}

static void test_seed_policy(void **state)
{
	struct cw_policy *p;

	(void)state;
	p = load("policies/e2b-run-command.json");
	check_seed(p);
	assert_null(cw_policy_rule(p, "run_commands"));
	assert_null(cw_policy_rule(p, ""));
	cw_policy_free(p);
}

/* max_concurrent is read as given and left 0 (the engine's default)
 * when absent. */
static void test_max_concurrent(void **state)
{
	struct cw_policy *p;

	(void)state;
	p = load(VALID_DIR "/max_concurrent.json");
	assert_int_equal(3, p->max_concurrent);
	cw_policy_free(p);
	p = load("policies/e2b-run-command.json");
	assert_int_equal(0, p->max_concurrent);
	cw_policy_free(p);
}

static void test_embedded_default(void **state)
{
	struct cw_diag d;
	struct cw_policy *p;

	(void)state;
	cw_diag_init(&d);
	p = cw_policy_load_default(&d);
	assert_non_null(p);
	assert_int_equal(0, d.n);
	assert_string_equal("<embedded>", p->source);
	check_seed(p);
	cw_policy_free(p);
	cw_diag_free(&d);
}

static void assert_strv(const struct cw_strv *s, const char *const *want,
			size_t n)
{
	size_t i;

	assert_int_equal(n, s->n);
	for (i = 0; i < n; i++)
		assert_string_equal(want[i], s->v[i]);
}

static const char *env_get(const struct cw_sandbox *sb, const char *key)
{
	size_t i;

	assert_int_equal(sb->env_set_keys.n, sb->env_set_vals.n);
	for (i = 0; i < sb->env_set_keys.n; i++)
		if (!strcmp(sb->env_set_keys.v[i], key))
			return sb->env_set_vals.v[i];
	return NULL;
}

static void test_default_sandbox(void **state)
{
	static const char *const pass[] = { "LANG", "TERM" };
	static const char *const rd[] = { "/" };
	static const char *const wr[] = { "/home/user", "/tmp", "/dev/shm" };
	static const char *const ex[] = { "/usr", "/bin", "/home/user", "/tmp" };
	static const char *const dn[] = { "/root", "/etc/shadow" };
	static const uint8_t v4[4] = { 169, 254, 0, 0 };
	static const uint8_t ll6[16] = { 0xfe, 0x80 };
	static const uint8_t v6[16] = { 0xfd, 0x00, 0x0e, 0xc2 };
	const struct cw_sandbox *sb;
	struct cw_policy *p;

	(void)state;
	p = load("policies/e2b-run-command.json");
	sb = cw_policy_sandbox(p);
	assert_string_equal("user", sb->user);
	assert_false(sb->user_explicit);
	assert_string_equal("/bin/bash", sb->shell);
	assert_string_equal("/home/user", sb->cwd);
	assert_false(sb->cwd_explicit);
	assert_strv(&sb->env_pass, pass, 2);
	assert_int_equal(7, sb->env_set_keys.n);
	assert_string_equal("/usr/local/bin:/usr/bin:/bin", env_get(sb, "PATH"));
	/* nothing waits for a person: editors, pagers, prompts */
	assert_string_equal("true", env_get(sb, "GIT_EDITOR"));
	assert_string_equal("true", env_get(sb, "EDITOR"));
	assert_string_equal("cat", env_get(sb, "PAGER"));
	assert_string_equal("cat", env_get(sb, "GIT_PAGER"));
	assert_string_equal("noninteractive", env_get(sb, "DEBIAN_FRONTEND"));
	assert_string_equal("1", env_get(sb, "CI"));
	assert_int_equal(60, sb->timeout_s);
	assert_int_equal(3600, sb->background_timeout_s);
	assert_true(sb->login_shell);
	assert_int_equal(0, sb->users.n);
	assert_int_equal(65536, sb->max_output_bytes);
	assert_int_equal(1024, sb->resources.memory_mb);
	assert_int_equal(256, sb->resources.pids);
	assert_int_equal(120, sb->resources.cpu_s);
	assert_int_equal(1024, sb->resources.nofile);
	assert_int_equal(512, sb->resources.file_size_mb);
	/* no budgets, and the limits a listed tree gets */
	assert_int_equal(0, sb->disk.tmpfs.n);
	assert_int_equal(1024, sb->disk.max_mb);
	assert_int_equal(65536, sb->disk.max_inodes);
	assert_int_equal(0, sb->disk.image.n);
	assert_int_equal(8192, sb->disk.image_mb);
	assert_int_equal(524288, sb->disk.image_inodes);
	assert_string_equal("/var/lib/cmdwarden/disk", sb->disk.image_dir);
	assert_strv(&sb->filesystem.read, rd, 1);
	assert_strv(&sb->filesystem.write, wr, 3);
	assert_strv(&sb->filesystem.exec, ex, 4);
	assert_strv(&sb->filesystem.deny, dn, 2);
	assert_true(sb->network.default_allow);
	/* link-local and metadata ranges, not single addresses */
	assert_int_equal(3, sb->network.ndeny);
	assert_int_equal(AF_INET, sb->network.deny[0].family);
	assert_memory_equal(v4, sb->network.deny[0].addr, 4);
	assert_int_equal(16, sb->network.deny[0].prefix);
	assert_int_equal(0, sb->network.deny[0].port_lo);
	assert_int_equal(0, sb->network.deny[0].port_hi);
	assert_string_equal("169.254.0.0/16", sb->network.deny[0].text);
	assert_int_equal(AF_INET6, sb->network.deny[1].family);
	assert_memory_equal(ll6, sb->network.deny[1].addr, 16);
	assert_int_equal(10, sb->network.deny[1].prefix);
	assert_int_equal(AF_INET6, sb->network.deny[2].family);
	assert_memory_equal(v6, sb->network.deny[2].addr, 16);
	assert_int_equal(32, sb->network.deny[2].prefix);
	assert_int_equal(0, sb->network.nallow);
	assert_int_equal(0, sb->network.nlocal_services);
	assert_int_equal(256, sb->network.max_connections);
	assert_int_equal(0, sb->network.max_egress_bytes);
	assert_false(sb->network.raw_sockets);
	assert_string_equal("default", sb->seccomp.profile);
	assert_int_equal(0, sb->seccomp.deny.n);
	assert_int_equal(0, sb->seccomp.allow.n);
	assert_int_equal(0, sb->seccomp.socket_families.n);
	assert_int_equal(0, sb->require_layers);
	cw_policy_free(p);
}

static void test_sandbox_merge(void **state)
{
	static const char *const pass[] = { "LANG", "TERM" };
	static const char *const wr[] = { "/home/user", "/tmp", "/dev/shm" };
	const struct cw_sandbox *sb;
	struct cw_policy *p;

	(void)state;
	p = load(VALID_DIR "/sandbox_partial.json");
	sb = cw_policy_sandbox(p);
	assert_ptr_equal(cw_policy_rule(p, "run_command")->sandbox, sb);
	/* the given field */
	assert_int_equal(64, sb->resources.memory_mb);
	/* its siblings keep their defaults */
	assert_int_equal(256, sb->resources.pids);
	assert_int_equal(120, sb->resources.cpu_s);
	assert_int_equal(1024, sb->resources.nofile);
	assert_int_equal(512, sb->resources.file_size_mb);
	/* env.set merges by key; null removes a default */
	assert_string_equal("vi", env_get(sb, "EDITOR"));
	assert_null(env_get(sb, "PATH"));
	assert_strv(&sb->env_pass, pass, 2);
	assert_string_equal("none", sb->seccomp.profile);
	assert_string_equal("user", sb->user);
	assert_false(sb->user_explicit);
	assert_false(sb->cwd_explicit);
	assert_int_equal(60, sb->timeout_s);
	assert_strv(&sb->filesystem.write, wr, 3);
	assert_int_equal(3, sb->network.ndeny);
	/* the default profile itself is untouched */
	assert_int_equal(1024, p->default_sandbox.resources.memory_mb);
	assert_string_equal("/usr/local/bin:/usr/bin:/bin",
			    env_get(&p->default_sandbox, "PATH"));
	assert_string_equal("default", p->default_sandbox.seccomp.profile);
	cw_policy_free(p);
}

static void test_full_sandbox(void **state)
{
	static const char *const sd[] = { "ptrace" };
	static const char *const sa[] = { "personality" };
	static const char *const sf[] = { "AF_VSOCK",
					  "AF_NETLINK:NETLINK_SOCK_DIAG" };
	static const char *const dopen[] = { "/home/user/.ssh",
					     "/etc/ssl/private" };
	const struct cw_sandbox *sb;
	const struct cw_net_rule *a;
	struct cw_policy *p;

	(void)state;
	p = load(VALID_DIR "/full.json");
	sb = cw_policy_sandbox(p);
	assert_ptr_not_equal(&p->default_sandbox, sb);
	assert_true(sb->user_explicit);
	assert_true(sb->cwd_explicit);
	assert_string_equal("/usr/bin:/bin", env_get(sb, "PATH"));
	assert_string_equal("/home/user", env_get(sb, "HOME"));
	assert_int_equal(120, sb->timeout_s);
	assert_int_equal(65536, sb->max_output_bytes);
	assert_int_equal(64, sb->resources.pids);
	assert_false(sb->network.default_allow);
	assert_int_equal(3, sb->network.ndeny);
	assert_int_equal(8, sb->network.deny[2].prefix);
	assert_int_equal(22, sb->network.deny[2].port_lo);
	assert_int_equal(22, sb->network.deny[2].port_hi);
	assert_int_equal(4, sb->network.nallow);
	a = sb->network.allow;
	assert_int_equal(AF_INET, a[0].family);
	assert_int_equal(0, a[0].prefix);
	assert_int_equal(443, a[0].port_lo);
	assert_int_equal(443, a[0].port_hi);
	assert_int_equal(AF_INET6, a[1].family);
	assert_int_equal(128, a[1].prefix);
	assert_int_equal(8000, a[1].port_lo);
	assert_int_equal(8999, a[1].port_hi);
	assert_int_equal(1, a[1].addr[15]);
	assert_int_equal(AF_INET, a[2].family);
	assert_int_equal(32, a[2].prefix);
	assert_int_equal(10, a[2].addr[3]);
	assert_int_equal(AF_INET6, a[3].family);
	assert_int_equal(32, a[3].prefix);
	assert_string_equal("2001:db8::/32", a[3].text);
	assert_int_equal(2, sb->network.nlocal_services);
	a = sb->network.local_services;
	assert_int_equal(AF_INET, a[0].family);
	assert_int_equal(32, a[0].prefix);
	assert_int_equal(5432, a[0].port_lo);
	assert_int_equal(5432, a[0].port_hi);
	assert_int_equal(AF_INET6, a[1].family);
	assert_int_equal(0, a[1].prefix);
	assert_int_equal(3000, a[1].port_lo);
	assert_int_equal(3009, a[1].port_hi);
	assert_int_equal(16, sb->network.max_connections);
	assert_int_equal(10485760, sb->network.max_egress_bytes);
	assert_strv(&sb->seccomp.deny, sd, 1);
	assert_strv(&sb->seccomp.allow, sa, 1);
	assert_strv(&sb->seccomp.socket_families, sf, 2);
	assert_int_equal(100, sb->files.max_files_written);
	assert_int_equal(1048576, sb->files.max_write_bytes);
	assert_strv(&sb->files.deny_open, dopen, 2);
	assert_int_equal(CW_LAYER_SECCOMP | CW_LAYER_LANDLOCK |
				 CW_LAYER_BPF_NET | CW_LAYER_CGROUP,
			 sb->require_layers);
	cw_policy_free(p);
}

static void test_compiled_rules(void **state)
{
	static const char *const names[] = { "delete_everything", "list_dir",
					     "read_file", "run_command",
					     "write_file" };
	const struct cw_rule *r;
	struct cw_policy *p;
	size_t i;

	(void)state;
	p = load(VALID_DIR "/full.json");
	assert_int_equal(CW_ARRAY_SIZE(names), p->nrules);
	for (i = 0; i < p->nrules; i++) {
		assert_string_equal(names[i], p->rules[i].name);
		assert_ptr_equal(&p->rules[i], cw_policy_rule(p, names[i]));
	}
	assert_null(cw_policy_rule(p, "nope"));
	assert_null(cw_policy_rule(p, "read_fil"));

	r = cw_policy_rule(p, "run_command");
	assert_true(r->uses_command);
	assert_int_equal(6, r->nrequire);
	assert_int_equal(14, r->ndeny_if);
	assert_int_equal(CW_OP_MAX_LENGTH, r->require[0].op);
	assert_int_equal(CW_OP_REGEX, r->require[1].op);
	assert_true(r->require[1].has_re);
	assert_string_equal("one line only", r->require[1].reason);
	assert_string_equal("tools.run_command.require[1]",
			    r->require[1].where);
	assert_int_equal(CW_PATH_CMD_PROGRAMS, r->require[4].kind);
	assert_int_equal(CW_PATH_CMD_OPAQUE, r->require[5].kind);
	assert_int_equal(CW_PATH_ARGS, r->require[0].kind);
	assert_int_equal(1, r->require[0].nparts);
	assert_string_equal("command", r->require[0].parts[0]);
	/* args.envs.LD_PRELOAD, exists without a value: present */
	assert_int_equal(2, r->deny_if[4].nparts);
	assert_string_equal("LD_PRELOAD", r->deny_if[4].parts[1]);
	assert_true(json_is_true(r->deny_if[4].value));
	assert_int_equal(2, r->deny_if[13].nparts);
	assert_string_equal("0", r->deny_if[13].parts[1]);
	assert_string_equal("args.files.0", r->deny_if[13].path);
	assert_string_equal("tools.run_command.deny_if[13]",
			    r->deny_if[13].where);
	assert_int_equal(4, r->nlimits);
	assert_int_equal(5, r->limits[1].window_s);
	assert_int_equal(CW_SCOPE_SESSION, r->limits[1].scope);
	assert_int_equal(86400, r->limits[2].window_s);
	assert_int_equal(CW_SCOPE_GRANT, r->limits[2].scope);
	assert_int_equal(1, r->limits[3].window_s);

	r = cw_policy_rule(p, "read_file");
	assert_false(r->uses_command);
	assert_null(r->sandbox);
	assert_int_equal(60, r->limits[0].window_s);
	assert_int_equal(CW_ACTION_APPROVAL,
			 cw_policy_rule(p, "write_file")->action);
	assert_int_equal(CW_ACTION_DENY,
			 cw_policy_rule(p, "delete_everything")->action);
	assert_string_equal("never",
			    cw_policy_rule(p, "delete_everything")->reason);

	assert_int_equal(1, p->nall_limits);
	assert_string_equal("all_tools.limits[0]", p->all_limits[0].where);
	assert_int_equal(3600, p->all_limits[0].window_s);
	assert_int_equal(CW_SCOPE_GLOBAL, p->all_limits[0].scope);
	cw_policy_free(p);
}

static void test_hide(void **state)
{
	struct cw_policy *p;

	(void)state;
	p = load(VALID_DIR "/full.json");
	assert_false(p->hide_all);
	assert_int_equal(2, p->hide.n);
	assert_string_equal("admin_reset", p->hide.v[0]);
	assert_string_equal("internal_debug", p->hide.v[1]);
	assert_true(cw_policy_hidden(p, "internal_debug"));
	assert_true(cw_policy_hidden(p, "admin_reset"));
	assert_false(cw_policy_hidden(p, "run_command"));
	assert_false(cw_policy_hidden(p, "internal"));
	cw_policy_free(p);

	p = load(VALID_DIR "/hide_all.json");
	assert_true(p->hide_all);
	assert_true(cw_policy_hidden(p, "run_command"));
	assert_true(cw_policy_hidden(p, "anything"));
	cw_policy_free(p);
}

static void test_syntax_error_position(void **state)
{
	static const char text[] = "{\n  \"version\": \"1\",\n  \"default\" \"deny\"\n}";
	struct cw_diag d;
	struct cw_policy *p;

	(void)state;
	cw_diag_init(&d);
	errno = 0;
	p = cw_policy_load_buffer(text, strlen(text), "inline.json", &d);
	assert_null(p);
	assert_int_equal(EINVAL, errno);
	assert_int_equal(1, d.n);
	assert_string_equal("inline.json", d.items[0].source);
	assert_int_equal(3, d.items[0].line);
	assert_int_equal(18, d.items[0].column);
	assert_non_null(strstr(d.items[0].text, "invalid JSON"));
	cw_diag_free(&d);
}

static void test_value_positions(void **state)
{
	/* tabs, an escaped key and a multi-byte character before the error */
	static const char text[] =
		"{\"version\":\"1\",\"default\":\"deny\",\"tools\":{\n"
		"\t\"caf\\u00e9\": {\"reason\": \"\xc3\xa9\xc3\xa9\", \"action\": 7}}}";
	struct cw_diag d;
	struct cw_policy *p;

	(void)state;
	cw_diag_init(&d);
	p = cw_policy_load_buffer(text, strlen(text), "pos.json", &d);
	assert_null(p);
	assert_int_equal(1, d.n);
	assert_string_equal("tools.caf\xc3\xa9.action", d.items[0].path);
	assert_int_equal(2, d.items[0].line);
	/* column in characters: \t"caf\u00e9": {"reason": "éé", "action" */
	assert_int_equal(32, d.items[0].column);
	cw_diag_free(&d);
}

static void test_all_errors_in_order(void **state)
{
	struct cw_diag d;
	struct cw_policy *p;
	size_t i;

	(void)state;
	cw_diag_init(&d);
	p = cw_policy_load_file(INVALID_DIR "/several_errors.json", &d);
	assert_null(p);
	assert_int_equal(9, d.n);
	for (i = 0; i < d.n; i++) {
		assert_true(d.items[i].line > 0);
		if (i)
			assert_true(d.items[i - 1].line < d.items[i].line ||
				    (d.items[i - 1].line == d.items[i].line &&
				     d.items[i - 1].column <
					     d.items[i].column));
	}
	cw_diag_free(&d);
}

static void test_diag_appends(void **state)
{
	static const char bad[] = "{\"version\":\"1\"}";
	struct cw_diag d;
	struct cw_policy *p;

	(void)state;
	cw_diag_init(&d);
	cw_diag_add(&d, "x", 0, 0, "", "earlier");
	p = cw_policy_load_buffer(bad, strlen(bad), NULL, &d);
	assert_null(p);
	assert_int_equal(2, d.n);
	assert_string_equal("earlier", d.items[0].text);
	assert_string_equal("default", d.items[1].path);
	/* a NULL diag is allowed: failure still reported by errno */
	errno = 0;
	assert_null(cw_policy_load_buffer(bad, strlen(bad), "b", NULL));
	assert_int_equal(EINVAL, errno);
	cw_diag_free(&d);
}

static void test_io_errors(void **state)
{
	struct cw_diag d;
	char buf[1200];

	(void)state;
	cw_diag_init(&d);
	errno = 0;
	assert_null(cw_policy_load_file("tests/fixtures/policies/none.json",
					&d));
	assert_int_equal(ENOENT, errno);
	assert_int_equal(1, d.n);
	cw_error_format(&d.items[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "tests/fixtures/policies/none.json"));
	assert_non_null(strstr(buf, "No such file or directory"));
	cw_diag_free(&d);

	cw_diag_init(&d);
	errno = 0;
	assert_null(cw_policy_load_file(VALID_DIR, &d));
	assert_int_equal(EISDIR, errno);
	assert_int_equal(1, d.n);
	cw_diag_free(&d);
}

static void test_temp_file(void **state)
{
	static const char text[] =
		"{\"version\":\"1\",\"default\":\"allow\",\"hide\":[\"b\",\"a\",\"b\"]}";
	char path[] = "/tmp/cw-policy-XXXXXX";
	struct cw_policy *p;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(0, cw_write_all(fd, text, strlen(text)));
	close(fd);
	p = load(path);
	unlink(path);
	assert_int_equal(CW_ACTION_ALLOW, p->default_action);
	/* sorted, duplicates dropped */
	assert_int_equal(2, p->hide.n);
	assert_string_equal("a", p->hide.v[0]);
	assert_string_equal("b", p->hide.v[1]);
	assert_int_equal(0, p->nrules);
	assert_null(cw_policy_rule(p, "a"));
	cw_policy_free(p);
}

/* Every prefix of a valid policy fails cleanly, with a located error. */
static void test_truncated(void **state)
{
	char *text = read_text(VALID_DIR "/full.json");
	size_t len = strlen(text), n;

	(void)state;
	for (n = 0; n < len; n++) {
		struct cw_diag d;
		struct cw_policy *p;

		cw_diag_init(&d);
		p = cw_policy_load_buffer(text, n, "cut", &d);
		if (p) {
			cw_policy_free(p);
			/* only trailing whitespace may be cut */
			assert_true(strspn(text + n, " \n") == len - n);
		} else {
			assert_true(d.n >= 1);
			assert_true(d.items[0].line >= 1);
		}
		cw_diag_free(&d);
	}
	free(text);
}

/* Adds "bogus_key" to every object of root in turn: each must fail to load
 * with an error at <object>.bogus_key (an unknown key, or for the maps
 * tools and env.set, a bad entry). */
static void add_bogus_everywhere(json_t *root, json_t *node, const char *path,
				 int *count)
{
	char want[300], sub[300];
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_array(node)) {
		json_array_foreach(node, i, v) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			add_bogus_everywhere(root, v, sub, count);
		}
		return;
	}
	if (!json_is_object(node))
		return;
	assert_int_equal(0, json_object_set_new(node, "bogus_key",
						json_integer(1)));
	{
		char *text = json_dumps(root, JSON_INDENT(2));
		struct cw_diag d;
		struct cw_policy *p;
		bool found = false;

		assert_non_null(text);
		cw_diag_init(&d);
		p = cw_policy_load_buffer(text, strlen(text), "bogus", &d);
		snprintf(want, sizeof(want), "%s%sbogus_key", path,
			 path[0] ? "." : "");
		for (i = 0; i < d.n; i++)
			if (!strcmp(want, d.items[i].path) &&
			    d.items[i].line > 0)
				found = true;
		cw_policy_free(p);
		cw_diag_free(&d);
		free(text);
		if (p || !found)
			fail_msg("no located error at %s", want);
		(*count)++;
	}
	assert_int_equal(0, json_object_del(node, "bogus_key"));
	json_object_foreach(node, key, v) {
		snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "",
			 key);
		add_bogus_everywhere(root, v, sub, count);
	}
}

static void test_unknown_keys_everywhere(void **state)
{
	json_t *root = json_load_file(VALID_DIR "/full.json", 0, NULL);
	int count = 0;

	(void)state;
	assert_non_null(root);
	add_bogus_everywhere(root, root, "", &count);
	json_decref(root);
	/* top, all_tools, tools, 5 rules, 22 conditions, 6 limits, sandbox
	 * and the 7 objects in it */
	assert_int_equal(44, count);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal("allow", cw_action_name(CW_ACTION_ALLOW));
	assert_string_equal("deny", cw_action_name(CW_ACTION_DENY));
	assert_string_equal("require_approval",
			    cw_action_name(CW_ACTION_APPROVAL));
	assert_string_equal("eq", cw_op_name(CW_OP_EQ));
	assert_string_equal("not_regex", cw_op_name(CW_OP_NOT_REGEX));
	assert_string_equal("max_length", cw_op_name(CW_OP_MAX_LENGTH));
	assert_string_equal("exists", cw_op_name(CW_OP_EXISTS));
	assert_string_equal("grant", cw_scope_name(CW_SCOPE_GRANT));
	assert_string_equal("session", cw_scope_name(CW_SCOPE_SESSION));
	assert_string_equal("global", cw_scope_name(CW_SCOPE_GLOBAL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_fixtures),
		cmocka_unit_test(test_invalid_fixtures),
		cmocka_unit_test(test_seed_policy),
		cmocka_unit_test(test_max_concurrent),
		cmocka_unit_test(test_embedded_default),
		cmocka_unit_test(test_default_sandbox),
		cmocka_unit_test(test_sandbox_merge),
		cmocka_unit_test(test_full_sandbox),
		cmocka_unit_test(test_compiled_rules),
		cmocka_unit_test(test_hide),
		cmocka_unit_test(test_syntax_error_position),
		cmocka_unit_test(test_value_positions),
		cmocka_unit_test(test_all_errors_in_order),
		cmocka_unit_test(test_diag_appends),
		cmocka_unit_test(test_io_errors),
		cmocka_unit_test(test_temp_file),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unknown_keys_everywhere),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
