// SPDX-License-Identifier: Apache-2.0
/*
 * `cmdwarden token NAME [--add FILE [--policy POLICY]]`: a random bearer
 * token for a grant of serve --http and the token-file entry that holds its
 * SHA-256; with --add, the entry written into the token file itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "lib/json.h"
#include "server/grant.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: %s token NAME [--add FILE [--policy POLICY]]\n",
		cw_cli_prog);
}

/* The token file's object, {"grants": {}} when there is none yet; NULL
 * (with the reason said) when it cannot be read or is not one. */
static json_t *read_tokens(const char *path)
{
	json_error_t je;
	json_t *root;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return json_pack("{s:{}}", "grants");
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open the token file %s: %s\n",
			cw_cli_prog, path, strerror(errno));
		return NULL;
	}
	root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	close(fd);
	if (!root) {
		fprintf(stderr, "%s: %s:%d:%d: not valid JSON: %s; it is left as it is\n",
			cw_cli_prog, path, je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(root) ||
	    !json_is_object(json_object_get(root, "grants"))) {
		fprintf(stderr, "%s: %s: expected {\"grants\": {NAME: {\"token_sha256\": HEX}}}; it is left as it is\n",
			cw_cli_prog, path);
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Writes text to path through a new file beside it, mode 0600, renamed
 * over it once on disk: a reader sees the old file or the new, whole. */
static int write_atomic(const char *path, const char *text)
{
	size_t len = strlen(text), off = 0;
	char *tmp = NULL, *dir, *slash;
	ssize_t n;
	int fd, dfd, err = 0;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	while (off < len && !err) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	if (err)
		return err;
	/* the rename itself on disk */
	dir = strdup(path);
	if (!dir)
		return 0;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	return 0;
}

/* Adds grant name (or gives it a new token) in the token file; prints the
 * token. A grant's policy stays unless policy names another. */
static int add_grant(const char *path, const char *name, const char *policy,
		     const char *token, const char *hash)
{
	struct cw_diag d;
	struct cw_grants *g;
	json_t *root, *grants, *entry, *old;
	char *text, *nl = NULL;
	int rc = 1, err;
	bool had;

	root = read_tokens(path);
	if (!root)
		return 1;
	grants = json_object_get(root, "grants");
	old = json_object_get(grants, name);
	had = old != NULL;
	entry = json_pack("{s:s}", "token_sha256", hash);
	if (entry && policy)
		json_object_set_new(entry, "policy", json_string(policy));
	else if (entry && json_is_object(old) &&
		 json_object_get(old, "policy"))
		json_object_set(entry, "policy", json_object_get(old, "policy"));
	if (!entry || json_object_set_new(grants, name, entry) < 0) {
		fprintf(stderr, "%s: out of memory\n", cw_cli_prog);
		goto out;
	}
	text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text && (nl = realloc(text, strlen(text) + 2)))
		text = strcat(nl, "\n");
	if (!text || !nl) {
		fprintf(stderr, "%s: out of memory\n", cw_cli_prog);
		free(text);
		goto out;
	}
	/* what serve would refuse is not written */
	cw_diag_init(&d);
	g = cw_grants_parse(text, strlen(text), path, NULL, &d);
	if (!g) {
		cw_cli_print_diag(&d);
		fprintf(stderr, "%s: %s is left as it is\n", cw_cli_prog, path);
	} else if ((err = write_atomic(path, text)) < 0) {
		fprintf(stderr, "%s: cannot write the token file %s: %s\n",
			cw_cli_prog, path, strerror(-err));
	} else {
		printf("%s\n", token);
		fflush(stdout);
		fprintf(stderr, "%s: %s grant \"%s\" in %s (mode 0600)\n",
			cw_cli_prog, had ? "gave a new token to" : "added",
			name, path);
		rc = 0;
	}
	cw_grants_free(g);
	cw_diag_free(&d);
	free(text);
out:
	json_decref(root);
	return rc;
}

int cw_cmd_token(int argc, char **argv)
{
	char token[CW_GRANT_HEX_SIZE], hash[CW_GRANT_HEX_SIZE];
	const char *name = NULL, *file = NULL, *policy = NULL, *why;
	json_t *entry;
	char *s;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			printf("\nMakes a random bearer token for the grant NAME and prints it (give it\n"
			       "to the caller; it is not stored anywhere). Without --add it then prints\n"
			       "the entry to put under \"grants\" in the token file of serve --http,\n"
			       "which holds only its SHA-256. With --add FILE the entry is written into\n"
			       "FILE (created as {\"grants\": {...}}, mode 0600, replaced atomically);\n"
			       "a grant already there gets the new token and keeps its policy unless\n"
			       "--policy POLICY names one.\n");
			return 0;
		}
		if ((strcmp(argv[i], "--add") == 0 ||
		     strcmp(argv[i], "--policy") == 0) && i + 1 < argc) {
			*(argv[i][2] == 'a' ? &file : &policy) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-' || name) {
			fprintf(stderr, "%s: token: unexpected argument \"%s\"\n",
				cw_cli_prog, argv[i]);
			usage(stderr);
			return 2;
		} else {
			name = argv[i];
		}
	}
	if (!name || (policy && !file)) {
		if (policy && name)
			fprintf(stderr, "%s: token: --policy goes with --add FILE\n",
				cw_cli_prog);
		usage(stderr);
		return 2;
	}
	why = cw_grants_name_problem(name);
	if (why) {
		fprintf(stderr, "%s: token: \"%s\": %s\n", cw_cli_prog, name,
			why);
		return 2;
	}
	cw_grants_new_token(token, hash);
	if (file)
		return add_grant(file, name, policy, token, hash);
	entry = json_pack("{s:{s:s}}", name, "token_sha256", hash);
	s = entry ? json_dumps(entry, JSON_COMPACT) : NULL;
	json_decref(entry);
	if (!s)
		return 1;
	printf("%s\n%s\n", token, s);
	free(s);
	return 0;
}
