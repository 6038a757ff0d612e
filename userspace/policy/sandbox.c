// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox section of a policy (how an allowed run_command executes):
 * the default profile, and the parsing and checking of "sandbox" into a
 * struct cw_sandbox: user, shell, cwd, env, timeout and output bounds,
 * resources, filesystem, network CIDRs and ports, files (bpf_trace),
 * seccomp and require_layers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/types.h>

#include "policy/sandbox.h"
#include "bpf/trace.h"
#include "lib/sockfamily.h"
#include "lib/text.h"

/*
 * The default sandbox profile, the one place it is defined.
 *
 * It is used as is when run_command has no "sandbox" section, and it is the
 * base a "sandbox" section is applied to: every field given overrides the
 * default of that field; nested objects (env, resources, filesystem, network,
 * seccomp) are applied field by field, so "resources": {"memory_mb": 64}
 * keeps the other resource limits. Lists replace the default list as a
 * whole. env.set is merged key by key; a key set to null removes a default.
 */
static const char default_sandbox_json[] =
	"{\n"
	"  \"user\": \"user\", \"users\": [],\n"
	"  \"shell\": \"/bin/bash\", \"login_shell\": true,\n"
	"  \"cwd\": \"/home/user\",\n"
	"  \"env\": {\n"
	"    \"pass\": [\"LANG\", \"TERM\"],\n"
	"    \"set\": { \"PATH\": \"/usr/local/bin:/usr/bin:/bin\",\n"
	"             \"GIT_EDITOR\": \"true\", \"EDITOR\": \"true\",\n"
	"             \"PAGER\": \"cat\", \"GIT_PAGER\": \"cat\",\n"
	"             \"DEBIAN_FRONTEND\": \"noninteractive\", \"CI\": \"1\" }\n"
	"  },\n"
	"  \"timeout_s\": 60, \"background_timeout_s\": 3600,\n"
	"  \"max_output_bytes\": 65536,\n"
	"  \"resources\": { \"memory_mb\": 1024, \"pids\": 256, \"cpu_s\": 120,\n"
	"                 \"nofile\": 1024, \"file_size_mb\": 512 },\n"
	"  \"disk\": { \"tmpfs\": [], \"max_mb\": 1024, \"max_inodes\": 65536,\n"
	"            \"image\": [], \"image_mb\": 8192, \"image_inodes\": 524288,\n"
	"            \"image_dir\": \"/var/lib/cmdwarden/disk\" },\n"
	"  \"filesystem\": { \"read\": [\"/\"],\n"
	"                  \"write\": [\"/home/user\", \"/tmp\", \"/dev/shm\"],\n"
	"                  \"exec\": [\"/usr\", \"/bin\", \"/home/user\", \"/tmp\"],\n"
	"                  \"deny\": [\"/root\", \"/etc/shadow\"] },\n"
	"  \"network\": { \"default\": \"allow\",\n"
	"               \"deny\": [\"169.254.0.0/16\", \"fe80::/10\",\n"
	"                        \"fd00:ec2::/32\"],\n"
	"               \"allow\": [], \"local_services\": [],\n"
	"               \"unix_sockets\": [],\n"
	"               \"max_connections\": 256,\n"
	"               \"max_egress_bytes\": 0, \"raw_sockets\": false },\n"
	"  \"seccomp\": { \"profile\": \"default\", \"deny\": [], \"allow\": [],\n"
	"               \"socket_families\": [] },\n"
	"  \"audit\": { \"max_records\": 100000, \"max_bytes\": 33554432 },\n"
	"  \"require_layers\": []\n"
	"}\n";

/* Range of each bounded number of the sandbox section. */
#define TIMEOUT_MAX_S 86400
#define OUTPUT_MAX_BYTES (256ll << 20)
#define MEMORY_MAX_MB (1ll << 30)
#define PIDS_MAX 4194304ll
#define CPU_MAX_S (1ll << 31)
#define NOFILE_MAX (1ll << 20)
#define FSIZE_MAX_MB (1ll << 30)
#define DISK_MAX_MB (1ll << 24)
#define DISK_MAX_INODES 4294967295ll
/* The smallest ext4 image mkfs makes with room for files and a journal. */
#define IMAGE_MIN_MB 16
#define IMAGE_MIN_INODES 64
#define CONN_MAX (1ll << 31)

const char *const cw_layer_names[CW_LAYER_COUNT + 1] = {
#define LAYER_NAME(id, name) [CW_LAYER_IDX_##id] = name,
	CW_LAYERS(LAYER_NAME)
#undef LAYER_NAME
};

static void net_rules_free(struct cw_net_rule *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(r[i].text);
	free(r);
}

void cw_sandbox_free(struct cw_sandbox *sb)
{
	free(sb->user);
	free(sb->shell);
	free(sb->cwd);
	cw_load_strv_free(&sb->users);
	cw_load_strv_free(&sb->env_pass);
	cw_load_strv_free(&sb->env_set_keys);
	cw_load_strv_free(&sb->env_set_vals);
	cw_load_strv_free(&sb->disk.tmpfs);
	cw_load_strv_free(&sb->disk.image);
	free(sb->disk.image_dir);
	cw_load_strv_free(&sb->filesystem.read);
	cw_load_strv_free(&sb->filesystem.write);
	cw_load_strv_free(&sb->filesystem.exec);
	cw_load_strv_free(&sb->filesystem.deny);
	net_rules_free(sb->network.deny, sb->network.ndeny);
	net_rules_free(sb->network.allow, sb->network.nallow);
	net_rules_free(sb->network.local_services,
		       sb->network.nlocal_services);
	cw_load_strv_free(&sb->network.unix_sockets);
	free(sb->seccomp.profile);
	cw_load_strv_free(&sb->seccomp.deny);
	cw_load_strv_free(&sb->seccomp.allow);
	cw_load_strv_free(&sb->seccomp.socket_families);
	cw_load_strv_free(&sb->files.deny_open);
	memset(sb, 0, sizeof(*sb));
}

static bool check_abs_path(struct cw_loader *ld, const char *s, const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (s[0] == '/' && strlen(s) < PATH_MAX)
		return true;
	cw_load_err(ld, path, "%s is not an absolute path; expected a path starting with \"/\"",
		    cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static bool check_ident(struct cw_loader *ld, const char *s, const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (cw_is_identifier(s))
		return true;
	cw_load_err(ld, path,
		    "%s is not a valid environment variable name; expected letters, digits and '_', not starting with a digit",
		    cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static bool check_user(struct cw_loader *ld, const char *s, const char *path)
{
	size_t i;
	char qs[CW_TEXT_QUOTE_LEN];

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '.' || (s[i] == '-' && i > 0)))
			break;
	if (i && !s[i] && i <= 32)
		return true;
	cw_load_err(ld, path,
		    "%s is not a valid user name; expected 1 to 32 letters, digits, '.', '_' or '-' (not first)",
		    cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static void set_str(struct cw_loader *ld, json_t *v, const char *path,
		    cw_load_check check, char **dst)
{
	char *d;

	if (!cw_load_want(ld, v, path, json_is_string(v), "a string"))
		return;
	if (check && !check(ld, json_string_value(v), path))
		return;
	d = cw_load_strdup(ld, json_string_value(v));
	if (!d)
		return;
	free(*dst);
	*dst = d;
}

static void set_bool(struct cw_loader *ld, json_t *v, const char *path,
		     bool *dst)
{
	if (cw_load_want(ld, v, path, json_is_boolean(v), "true or false"))
		*dst = json_is_true(v);
}

static bool parse_port(const char *s, char **end, unsigned *out)
{
	unsigned long n;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, end, 10);
	if (errno || n < 1 || n > 65535)
		return false;
	*out = (unsigned)n;
	return true;
}

/*
 * ADDR[/LEN][:PORT[-PORT]]; an IPv6 address with a port and no prefix length
 * is written in brackets: [::1]:443.
 */
static bool parse_net_rule(const char *text, struct cw_net_rule *r,
			   char *why, size_t whylen)
{
	char addr[64], *end;
	const char *p = text, *ports = NULL, *slash;
	size_t alen;
	unsigned lo = 0, hi = 0, i;
	long len = -1;

	memset(r, 0, sizeof(*r));
	if (*p == '[') {
		const char *close = strchr(p, ']');

		if (!close) {
			snprintf(why, whylen, "missing ']'");
			return false;
		}
		alen = (size_t)(close - p - 1);
		if (alen >= sizeof(addr))
			goto bad_addr;
		memcpy(addr, p + 1, alen);
		addr[alen] = '\0';
		p = close + 1;
	} else {
		slash = strchr(p, '/');
		if (slash) {
			alen = (size_t)(slash - p);
		} else {
			const char *c1 = strchr(p, ':');

			/* a single ':' is IPv4 with a port, more is IPv6 */
			if (c1 && !strchr(c1 + 1, ':'))
				alen = (size_t)(c1 - p);
			else
				alen = strlen(p);
		}
		if (alen >= sizeof(addr))
			goto bad_addr;
		memcpy(addr, p, alen);
		addr[alen] = '\0';
		p += alen;
	}
	if (inet_pton(AF_INET, addr, r->addr) == 1) {
		r->family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		r->family = AF_INET6;
	} else {
		goto bad_addr;
	}
	if (*p == '/') {
		p++;
		if (*p < '0' || *p > '9') {
			snprintf(why, whylen, "missing prefix length after '/'");
			return false;
		}
		errno = 0;
		len = strtol(p, &end, 10);
		if (errno || len > (r->family == AF_INET ? 32 : 128)) {
			snprintf(why, whylen,
				 "prefix length out of range (0 to %d)",
				 r->family == AF_INET ? 32 : 128);
			return false;
		}
		p = end;
	}
	if (len < 0)
		len = r->family == AF_INET ? 32 : 128;
	r->prefix = (uint8_t)len;
	if (*p == ':') {
		ports = p + 1;
		if (!parse_port(ports, &end, &lo))
			goto bad_port;
		hi = lo;
		if (*end == '-' && !parse_port(end + 1, &end, &hi))
			goto bad_port;
		if (*end || hi < lo)
			goto bad_port;
		p = end;
	}
	if (*p) {
		snprintf(why, whylen, "unexpected text after the address");
		return false;
	}
	for (i = 0; i < 16; i++) {
		unsigned bits = (unsigned)len > i * 8 ?
					(unsigned)len - i * 8 : 0;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		if (r->addr[i] & ~mask) {
			snprintf(why, whylen,
				 "host bits are set beyond the /%ld prefix",
				 len);
			return false;
		}
	}
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return true;
bad_addr:
	snprintf(why, whylen, "not an IPv4 or IPv6 address");
	return false;
bad_port:
	snprintf(why, whylen, "bad port range (expected 1-65535, low-high)");
	return false;
}

/* need_port: a local service is an address and a port, never a whole
 * address. */
static void set_net_rules(struct cw_loader *ld, json_t *arr, const char *path,
			  struct cw_net_rule **dst, size_t *ndst,
			  bool need_port)
{
	struct cw_net_rule *nr = NULL;
	size_t i, n = 0;
	bool ok = true;
	json_t *e;

	if (!cw_load_want(ld, arr, path, json_is_array(arr),
			  "an array of CIDR strings such as \"10.0.0.0/8:443\""))
		return;
	nr = cw_load_calloc(ld, json_array_size(arr), sizeof(*nr));
	if (json_array_size(arr) && !nr)
		return;
	json_array_foreach(arr, i, e) {
		char ep[CW_LOAD_PATH_LEN], why[96], qs[CW_TEXT_QUOTE_LEN];

		cw_load_idx(ep, path, i);
		if (!json_is_string(e)) {
			cw_load_err(ld, ep, "expected a CIDR string, got %s",
				    cw_load_jtype(e));
			ok = false;
			continue;
		}
		if (!parse_net_rule(json_string_value(e), &nr[n], why,
				    sizeof(why))) {
			cw_load_err(ld, ep,
				    "bad CIDR %s: %s; expected ADDR[/LEN][:PORT[-PORT]] such as \"10.0.0.0/8\", \"0.0.0.0/0:443\" or \"[::1]:8000-8999\"",
				    cw_text_quote(qs, sizeof(qs),
						  json_string_value(e)),
				    why);
			ok = false;
			continue;
		}
		if (need_port && !nr[n].port_lo) {
			cw_load_err(ld, ep,
				    "local service %s has no port; expected ADDR[/LEN]:PORT[-PORT] such as \"127.0.0.1:5432\" or \"[::1]:8000-8999\"",
				    cw_text_quote(qs, sizeof(qs),
						  json_string_value(e)));
			ok = false;
			continue;
		}
		nr[n].text = cw_load_strdup(ld, json_string_value(e));
		if (!nr[n].text)
			ok = false;
		n++;
	}
	if (!ok) {
		net_rules_free(nr, n);
		return;
	}
	net_rules_free(*dst, *ndst);
	*dst = nr;
	*ndst = n;
}

static void env_set_merge(struct cw_loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	const char *key;
	json_t *v;

	if (!cw_load_want(ld, o, path, json_is_object(o),
			  "an object of NAME: value strings"))
		return;
	json_object_foreach(o, key, v) {
		char kp[CW_LOAD_PATH_LEN];
		size_t i;

		cw_load_key(kp, path, key);
		if (!check_ident(ld, key, kp))
			continue;
		if (!json_is_string(v) && !json_is_null(v)) {
			cw_load_err(ld, kp,
				    "expected a string (or null to remove a default), got %s",
				    cw_load_jtype(v));
			continue;
		}
		for (i = 0; i < sb->env_set_keys.n; i++)
			if (!strcmp(sb->env_set_keys.v[i], key))
				break;
		if (json_is_null(v)) {
			if (i == sb->env_set_keys.n)
				continue;
			free(sb->env_set_keys.v[i]);
			free(sb->env_set_vals.v[i]);
			sb->env_set_keys.n--;
			sb->env_set_vals.n--;
			memmove(&sb->env_set_keys.v[i],
				&sb->env_set_keys.v[i + 1],
				(sb->env_set_keys.n - i) * sizeof(char *));
			memmove(&sb->env_set_vals.v[i],
				&sb->env_set_vals.v[i + 1],
				(sb->env_set_vals.n - i) * sizeof(char *));
		} else if (i < sb->env_set_keys.n) {
			char *d = cw_load_strdup(ld, json_string_value(v));

			if (!d)
				return;
			free(sb->env_set_vals.v[i]);
			sb->env_set_vals.v[i] = d;
		} else {
			if (cw_load_strv_push(ld, &sb->env_set_keys, key))
				return;
			if (cw_load_strv_push(ld, &sb->env_set_vals,
					      json_string_value(v))) {
				free(sb->env_set_keys.v[--sb->env_set_keys.n]);
				return;
			}
		}
	}
}

static void apply_env(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
		      const char *path)
{
	static const char *const keys[] = { "pass", "set", NULL };
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	if (!cw_load_want(ld, o, path, json_is_object(o),
			  "an object {\"pass\", \"set\"}"))
		return;
	cw_load_keys(ld, o, path, keys);
	cw_load_key(kp, path, "pass");
	v = json_object_get(o, "pass");
	if (v)
		cw_load_strv_set(ld, v, kp, "an array of variable names", check_ident,
				 &sb->env_pass);
	cw_load_key(kp, path, "set");
	v = json_object_get(o, "set");
	if (v)
		env_set_merge(ld, sb, v, kp);
}

struct int_field {
	const char *name;
	long long lo, hi;
	const char *expected;
	size_t off;
};

#define SB_OFF(f) offsetof(struct cw_sandbox, f)

static void apply_ints(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
		       const char *path, const struct int_field *f, size_t n)
{
	char kp[CW_LOAD_PATH_LEN];
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(o, f[i].name);

		if (!v)
			continue;
		cw_load_key(kp, path, f[i].name);
		cw_load_set_int(ld, v, kp, f[i].lo, f[i].hi, f[i].expected,
				(int64_t *)((char *)sb + f[i].off));
	}
}

/* Member key of object o, when present, as a list of strings into dst. */
static void key_strv(struct cw_loader *ld, json_t *o, const char *path,
		     const char *key, const char *what, cw_load_check check,
		     struct cw_strv *dst)
{
	char kp[CW_LOAD_PATH_LEN];
	json_t *v = json_object_get(o, key);

	cw_load_key(kp, path, key);
	if (v)
		cw_load_strv_set(ld, v, kp, what, check, dst);
}

/* The common part of a section: an object of these keys, its integers
 * applied; returns the value of its key list (NULL when absent or when o
 * is no object), that key's path in kp. */
static json_t *apply_section(struct cw_loader *ld, struct cw_sandbox *sb,
			     json_t *o, const char *path,
			     const char *const *keys, const struct int_field *f,
			     size_t nf, const char *list, char *kp)
{
	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return NULL;
	cw_load_keys(ld, o, path, keys);
	apply_ints(ld, sb, o, path, f, nf);
	cw_load_key(kp, path, list);
	return json_object_get(o, list);
}

static void apply_resources(struct cw_loader *ld, struct cw_sandbox *sb,
			    json_t *o, const char *path)
{
	static const char *const keys[] = { "memory_mb", "pids", "cpu_s",
					    "nofile", "file_size_mb", NULL };
	static const struct int_field f[] = {
		{ "memory_mb", 0, MEMORY_MAX_MB,
		  "an integer from 0 (unlimited) to 1073741824 MiB",
		  SB_OFF(resources.memory_mb) },
		{ "pids", 0, PIDS_MAX,
		  "an integer from 0 (unlimited) to 4194304",
		  SB_OFF(resources.pids) },
		{ "cpu_s", 0, CPU_MAX_S,
		  "an integer from 0 (unlimited) to 2147483648 seconds",
		  SB_OFF(resources.cpu_s) },
		{ "nofile", 0, NOFILE_MAX,
		  "an integer from 0 (unlimited) to 1048576",
		  SB_OFF(resources.nofile) },
		{ "file_size_mb", 0, FSIZE_MAX_MB,
		  "an integer from 0 (unlimited) to 1073741824 MiB",
		  SB_OFF(resources.file_size_mb) },
	};

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
}

static void apply_filesystem(struct cw_loader *ld, struct cw_sandbox *sb,
			     json_t *o, const char *path)
{
	static const char *const keys[] = { "read", "write", "exec", "deny",
					    NULL };
	struct cw_strv *dst[] = { &sb->filesystem.read, &sb->filesystem.write,
				  &sb->filesystem.exec, &sb->filesystem.deny };
	char kp[CW_LOAD_PATH_LEN];
	size_t i;

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	for (i = 0; i < CW_ARRAY_SIZE(dst); i++) {
		json_t *v = json_object_get(o, keys[i]);

		if (!v)
			continue;
		cw_load_key(kp, path, keys[i]);
		cw_load_strv_set(ld, v, kp, "an array of absolute paths",
				 check_abs_path, dst[i]);
	}
}

static void apply_disk(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
		       const char *path)
{
	static const char *const keys[] = { "tmpfs", "max_mb", "max_inodes",
					    "image", "image_mb", "image_inodes",
					    "image_dir", NULL };
	static const struct int_field f[] = {
		{ "max_mb", 1, DISK_MAX_MB, "an integer from 1 to 16777216 (16 TiB)",
		  SB_OFF(disk.max_mb) },
		{ "max_inodes", 1, DISK_MAX_INODES,
		  "an integer from 1 to 4294967295", SB_OFF(disk.max_inodes) },
		{ "image_mb", IMAGE_MIN_MB, DISK_MAX_MB,
		  "an integer from 16 to 16777216 (16 TiB)",
		  SB_OFF(disk.image_mb) },
		{ "image_inodes", IMAGE_MIN_INODES, DISK_MAX_INODES,
		  "an integer from 64 to 4294967295", SB_OFF(disk.image_inodes) },
	};
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	v = apply_section(ld, sb, o, path, keys, f, CW_ARRAY_SIZE(f), "tmpfs",
			  kp);
	if (v)
		cw_load_strv_set(ld, v, kp, "an array of absolute paths",
				 check_abs_path, &sb->disk.tmpfs);
	if (!json_is_object(o))
		return;
	key_strv(ld, o, path, "image", "an array of absolute paths",
		 check_abs_path, &sb->disk.image);
	v = json_object_get(o, "image_dir");
	cw_load_key(kp, path, "image_dir");
	if (v)
		set_str(ld, v, kp, check_abs_path, &sb->disk.image_dir);
}

static void apply_network(struct cw_loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	static const char *const keys[] = { "default", "deny", "allow",
					    "local_services", "unix_sockets",
					    "max_connections",
					    "max_egress_bytes", "raw_sockets",
					    "audit_allowed", NULL };
	static const char *const defaults[] = { "allow", "deny", NULL };
	static const struct int_field f[] = {
		{ "max_connections", 0, CONN_MAX,
		  "an integer from 0 (unlimited) to 2147483648",
		  SB_OFF(network.max_connections) },
		{ "max_egress_bytes", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(network.max_egress_bytes) },
	};
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	v = json_object_get(o, "default");
	cw_load_key(kp, path, "default");
	if (v && cw_load_want(ld, v, kp, json_is_string(v), "a string")) {
		if (!strcmp(json_string_value(v), "allow"))
			sb->network.default_allow = true;
		else if (!strcmp(json_string_value(v), "deny"))
			sb->network.default_allow = false;
		else
			cw_load_unknown(ld, kp, "network default",
					json_string_value(v), defaults);
	}
	v = json_object_get(o, "deny");
	cw_load_key(kp, path, "deny");
	if (v)
		set_net_rules(ld, v, kp, &sb->network.deny, &sb->network.ndeny,
			      false);
	v = json_object_get(o, "allow");
	cw_load_key(kp, path, "allow");
	if (v)
		set_net_rules(ld, v, kp, &sb->network.allow,
			      &sb->network.nallow, false);
	v = json_object_get(o, "local_services");
	cw_load_key(kp, path, "local_services");
	if (v)
		set_net_rules(ld, v, kp, &sb->network.local_services,
			      &sb->network.nlocal_services, true);
	v = json_object_get(o, "unix_sockets");
	cw_load_key(kp, path, "unix_sockets");
	if (v)
		cw_load_strv_set(ld, v, kp, "an array of absolute paths",
				 check_abs_path, &sb->network.unix_sockets);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
	v = json_object_get(o, "raw_sockets");
	cw_load_key(kp, path, "raw_sockets");
	if (v)
		set_bool(ld, v, kp, &sb->network.raw_sockets);
	v = json_object_get(o, "audit_allowed");
	cw_load_key(kp, path, "audit_allowed");
	if (v)
		set_bool(ld, v, kp, &sb->network.audit_allowed);
}

/* A deny_open prefix must fit the kernel program's fixed-size slot. */
static bool check_deny_prefix(struct cw_loader *ld, const char *s,
			      const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (!check_abs_path(ld, s, path))
		return false;
	if (strlen(s) < TRACE_DENY_LEN)
		return true;
	cw_load_err(ld, path, "%s is longer than %d bytes; expected a shorter path prefix",
		    cw_text_quote(qs, sizeof(qs), s), TRACE_DENY_LEN - 1);
	return false;
}

static void apply_files(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
			const char *path)
{
	static const char *const keys[] = { "max_files_written",
					    "max_write_bytes", "deny_open",
					    NULL };
	static const struct int_field f[] = {
		{ "max_files_written", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(files.max_files_written) },
		{ "max_write_bytes", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(files.max_write_bytes) },
	};
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	v = apply_section(ld, sb, o, path, keys, f, CW_ARRAY_SIZE(f),
			  "deny_open", kp);
	if (!v)
		return;
	if (json_is_array(v) && json_array_size(v) > TRACE_DENY_MAX) {
		cw_load_err(ld, kp, "%zu prefixes; expected at most %d",
			    json_array_size(v), TRACE_DENY_MAX);
		return;
	}
	cw_load_strv_set(ld, v, kp, "an array of absolute path prefixes",
			 check_deny_prefix, &sb->files.deny_open);
}

/* The kernel-event records one call may write before the rest of its
 * events are summarised. */
static void apply_audit(struct cw_loader *ld, struct cw_sandbox *sb,
			json_t *o, const char *path)
{
	static const char *const keys[] = { "max_records", "max_bytes", NULL };
	static const struct int_field f[] = {
		{ "max_records", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(audit.max_records) },
		{ "max_bytes", 0, INT64_MAX,
		  "a non-negative integer of bytes (0 = unlimited)",
		  SB_OFF(audit.max_bytes) },
	};

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
}

static bool check_profile(struct cw_loader *ld, const char *s, const char *path)
{
	static const char *const profiles[] = { "default", "none", NULL };

	if (!strcmp(s, "default") || !strcmp(s, "none"))
		return true;
	cw_load_unknown(ld, path, "seccomp profile", s, profiles);
	return false;
}

/* "AF_VSOCK", or "AF_NETLINK:NETLINK_SOCK_DIAG"; AF_PACKET belongs to
 * network.raw_sockets, which also decides about raw IP sockets. */
static bool check_socket_family(struct cw_loader *ld, const char *s,
				const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];
	const char *why = NULL;
	int family, protocol;

	switch (cw_sockfamily_parse(s, &family, &protocol)) {
	case -ENOENT:
		why = "unknown socket family; expected a name of "
		      "<sys/socket.h> (\"AF_VSOCK\", \"AF_ALG\", \"AF_XDP\" "
		      "...), or \"AF_NETLINK:\" and a protocol of "
		      "<linux/netlink.h>";
		break;
	case -EPROTONOSUPPORT:
		why = "unknown netlink protocol; expected a name of "
		      "<linux/netlink.h> (\"NETLINK_SOCK_DIAG\", "
		      "\"NETLINK_AUDIT\", \"NETLINK_GENERIC\" ...)";
		break;
	case -EINVAL:
		why = "only AF_NETLINK takes a protocol "
		      "(\"AF_NETLINK:NETLINK_SOCK_DIAG\"); other families are "
		      "listed by name alone";
		break;
	default:
		if (family == AF_PACKET)
			why = "AF_PACKET is allowed with network.raw_sockets, "
			      "not here";
	}
	if (!why)
		return true;
	cw_load_err(ld, path, "%s: %s", cw_text_quote(qs, sizeof(qs), s), why);
	return false;
}

static void apply_seccomp(struct cw_loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	static const char *const keys[] = { "profile", "deny", "allow",
					    "socket_families", NULL };
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	v = json_object_get(o, "profile");
	cw_load_key(kp, path, "profile");
	if (v)
		set_str(ld, v, kp, check_profile, &sb->seccomp.profile);
	key_strv(ld, o, path, "deny", "an array of syscall names",
		 cw_load_nonempty, &sb->seccomp.deny);
	key_strv(ld, o, path, "allow", "an array of syscall names",
		 cw_load_nonempty, &sb->seccomp.allow);
	v = json_object_get(o, "socket_families");
	cw_load_key(kp, path, "socket_families");
	if (v)
		cw_load_strv_set(ld, v, kp, "an array of socket family names",
				 check_socket_family,
				 &sb->seccomp.socket_families);
}

static void apply_layers(struct cw_loader *ld, struct cw_sandbox *sb, json_t *a,
			 const char *path)
{
	unsigned bits = 0;
	bool ok = true;
	size_t i, k;
	json_t *e;

	if (!cw_load_want(ld, a, path, json_is_array(a),
			  "an array of layer names"))
		return;
	json_array_foreach(a, i, e) {
		char ep[CW_LOAD_PATH_LEN];

		cw_load_idx(ep, path, i);
		if (!cw_load_want(ld, e, ep, json_is_string(e), "a string")) {
			ok = false;
			continue;
		}
		for (k = 0; cw_layer_names[k]; k++)
			if (!strcmp(json_string_value(e), cw_layer_names[k]))
				break;
		if (!cw_layer_names[k]) {
			cw_load_unknown(ld, ep, "layer", json_string_value(e),
					cw_layer_names);
			ok = false;
			continue;
		}
		bits |= 1u << k;
	}
	if (ok)
		sb->require_layers = bits;
}

/* Applies a sandbox object on top of sb; explicit marks the policy's own. */
void cw_sandbox_apply(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
		      const char *path, bool explicit)
{
	static const char *const keys[] = { "user", "users", "shell",
					    "login_shell",
					    "cwd", "env",
					    "timeout_s", "background_timeout_s",
					    "max_output_bytes", "resources", "filesystem",
					    "network", "seccomp", "files",
					    "disk", "audit", "require_layers",
					    NULL };
	static const struct int_field f[] = {
		{ "timeout_s", 1, TIMEOUT_MAX_S,
		  "an integer from 1 to 86400 seconds", SB_OFF(timeout_s) },
		{ "background_timeout_s", 0, TIMEOUT_MAX_S,
		  "an integer from 0 (until killed) to 86400 seconds",
		  SB_OFF(background_timeout_s) },
		{ "max_output_bytes", 1, OUTPUT_MAX_BYTES,
		  "an integer from 1 to 268435456 (256 MiB)",
		  SB_OFF(max_output_bytes) },
	};
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;

	if (!cw_load_want(ld, o, path, json_is_object(o), "an object"))
		return;
	cw_load_keys(ld, o, path, keys);
	v = json_object_get(o, "user");
	cw_load_key(kp, path, "user");
	if (v) {
		set_str(ld, v, kp, check_user, &sb->user);
		sb->user_explicit = explicit;
	}
	key_strv(ld, o, path, "users", "an array of user names", check_user,
		 &sb->users);
	v = json_object_get(o, "shell");
	cw_load_key(kp, path, "shell");
	if (v)
		set_str(ld, v, kp, check_abs_path, &sb->shell);
	v = json_object_get(o, "login_shell");
	cw_load_key(kp, path, "login_shell");
	if (v)
		set_bool(ld, v, kp, &sb->login_shell);
	v = json_object_get(o, "cwd");
	cw_load_key(kp, path, "cwd");
	if (v) {
		set_str(ld, v, kp, check_abs_path, &sb->cwd);
		sb->cwd_explicit = explicit;
	}
	v = json_object_get(o, "env");
	cw_load_key(kp, path, "env");
	if (v)
		apply_env(ld, sb, v, kp);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
	v = json_object_get(o, "resources");
	cw_load_key(kp, path, "resources");
	if (v)
		apply_resources(ld, sb, v, kp);
	v = json_object_get(o, "filesystem");
	cw_load_key(kp, path, "filesystem");
	if (v)
		apply_filesystem(ld, sb, v, kp);
	v = json_object_get(o, "network");
	cw_load_key(kp, path, "network");
	if (v)
		apply_network(ld, sb, v, kp);
	v = json_object_get(o, "seccomp");
	cw_load_key(kp, path, "seccomp");
	if (v)
		apply_seccomp(ld, sb, v, kp);
	v = json_object_get(o, "files");
	cw_load_key(kp, path, "files");
	if (v)
		apply_files(ld, sb, v, kp);
	v = json_object_get(o, "disk");
	cw_load_key(kp, path, "disk");
	if (v)
		apply_disk(ld, sb, v, kp);
	v = json_object_get(o, "audit");
	cw_load_key(kp, path, "audit");
	if (v)
		apply_audit(ld, sb, v, kp);
	v = json_object_get(o, "require_layers");
	cw_load_key(kp, path, "require_layers");
	if (v)
		apply_layers(ld, sb, v, kp);
}

/* Fills sb with the default profile; the profile is checked like a policy
 * so a bad edit of it shows up as a load error. */
void cw_sandbox_default(struct cw_loader *ld, struct cw_sandbox *sb)
{
	struct cw_loader dl = { "<default sandbox>", ld->diag, 0, false };
	json_error_t je;
	json_t *o;

	o = json_loads(default_sandbox_json, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		cw_load_err(ld, "", "internal: default sandbox profile: %s", je.text);
		return;
	}
	cw_sandbox_apply(&dl, sb, o, "", false);
	json_decref(o);
	ld->nerr += dl.nerr;
	ld->oom |= dl.oom;
}
