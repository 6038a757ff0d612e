// SPDX-License-Identifier: Apache-2.0
/*
 * The control socket (control.h): the listening thread and its peers'
 * checks, the client that asks every agent, and the protocol's answers
 * (approve, reject, list), which go to the engine's approvals and the
 * audit log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit/types.h"
#include "engine/approvals.h"
#include "engine/records.h"
#include "lib/json.h"
#include "server/control.h"

#define MAX_REQUEST 4096
#define IO_TIMEOUT_S 5

struct cw_control {
	int fd;
	int stop_fd;
	pthread_t th;
	cw_control_fn fn;
	void *ctx;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static int control_dir(const char *state_dir, char *buf, size_t len,
		       bool create, struct cw_error *err)
{
	struct stat st;

	if ((size_t)snprintf(buf, len, "%s/control", state_dir) >= len) {
		cw_error_set(err, "control: state directory path too long");
		return -ENAMETOOLONG;
	}
	if (create) {
		if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
			goto fail;
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			goto fail;
		/* Only the agent's own user may reach the sockets. */
		if (lstat(buf, &st) < 0)
			goto fail;
		if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
			cw_error_set(err, "control: %s is not a directory owned by uid %u",
				     buf, (unsigned)geteuid());
			return -EPERM;
		}
		if ((st.st_mode & 0077) && chmod(buf, 0700) < 0)
			goto fail;
	}
	return 0;
fail:
	cw_error_set(err, "control: %s: %s", buf, strerror(errno));
	return -errno;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One line of at most MAX_REQUEST bytes, parsed. */
static json_t *read_line(int fd, char *why, size_t len)
{
	char buf[MAX_REQUEST + 1];
	size_t got = 0;
	json_error_t jerr;
	json_t *o;
	ssize_t n;

	while (got < MAX_REQUEST) {
		n = read(fd, buf + got, MAX_REQUEST - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	buf[got] = '\0';
	if (!memchr(buf, '\n', got)) {
		snprintf(why, len, "expected one JSON object on one line of at most %d bytes",
			 MAX_REQUEST);
		return NULL;
	}
	o = json_loads(buf, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!json_is_object(o)) {
		json_decref(o);
		snprintf(why, len, "not a JSON object: %s", jerr.text);
		return NULL;
	}
	return o;
}

static int write_line(int fd, json_t *o)
{
	char *s = cw_json_compact(o);
	size_t n;
	int ret;

	if (!s)
		return -ENOMEM;
	n = strlen(s);
	s[n] = '\n';
	ret = cw_write_all(fd, s, n + 1);
	free(s);
	return ret;
}

static json_t *refusal(const char *code, const char *msg)
{
	return json_pack("{s:b, s:s, s:s}", "ok", 0, "error", msg, "code",
			 code);
}

static void serve_one(struct cw_control *c, int fd)
{
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	char why[256];
	json_t *req = NULL, *resp;

	set_timeouts(fd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0) {
		resp = refusal("refused", "cannot read the peer's credentials");
	} else if (peer.uid != 0 && peer.uid != geteuid()) {
		snprintf(why, sizeof(why),
			 "uid %u may not use this agent's control socket: only root (or uid %u, the agent's own user) may",
			 (unsigned)peer.uid, (unsigned)geteuid());
		resp = refusal("refused", why);
	} else if (!(req = read_line(fd, why, sizeof(why)))) {
		resp = refusal("bad_request", why);
	} else {
		resp = c->fn(c->ctx, req, &peer);
	}
	if (resp)
		write_line(fd, resp);
	json_decref(resp);
	json_decref(req);
}

static void *control_main(void *p)
{
	struct cw_control *c = p;
	struct pollfd pfd[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = c->stop_fd, .events = POLLIN },
	};

	for (;;) {
		int fd;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(c, fd);
		close(fd);
	}
	return NULL;
}

/* Removes sockets of agents that are gone (nobody accepts on them). */
static void remove_stale(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct dirent *de;
	DIR *d = opendir(dir);
	int fd;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".sock"))
			continue;
		if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s",
				     dir, de->d_name) >= sizeof(sa.sun_path))
			continue;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
		    errno == ECONNREFUSED)
			unlink(sa.sun_path);
		close(fd);
	}
	closedir(d);
}

struct cw_control *cw_control_start(const char *state_dir, cw_control_fn fn,
				    void *ctx, struct cw_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cw_control *c;
	sigset_t all, old;
	char dir[4096];
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c) {
		cw_error_set(err, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->fd = c->stop_fd = -1;
	c->fn = fn;
	c->ctx = ctx;
	ret = control_dir(state_dir, dir, sizeof(dir), true, err);
	if (ret)
		goto fail;
	remove_stale(dir);
	if ((size_t)snprintf(c->path, sizeof(c->path), "%s/%d.sock", dir,
			     (int)getpid()) >= sizeof(c->path)) {
		ret = -ENAMETOOLONG;
		cw_error_set(err, "control: socket path %s/%d.sock is longer than %zu bytes",
			     dir, (int)getpid(), sizeof(c->path) - 1);
		c->path[0] = '\0';
		goto fail;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	unlink(c->path);	/* a pid reused after a crash */
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (c->fd < 0 || c->stop_fd < 0 ||
	    bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(c->path, 0600) < 0 || listen(c->fd, 16) < 0) {
		ret = -errno;
		cw_error_set(err, "control: %s: %s", c->path, strerror(errno));
		goto fail;
	}
	/* Signals are the serving thread's to take (SIGHUP reloads): the
	 * control thread starts with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&c->th, NULL, control_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		cw_error_set(err, "control: cannot start its thread: %s",
			     strerror(-ret));
		goto fail;
	}
	return c;
fail:
	if (c->fd >= 0) {
		close(c->fd);
		if (c->path[0])
			unlink(c->path);
	}
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	free(c);
	errno = -ret;
	return NULL;
}

void cw_control_stop(struct cw_control *c)
{
	uint64_t one = 1;

	if (!c)
		return;
	if (write(c->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(c->th, NULL);
	close(c->fd);
	close(c->stop_fd);
	unlink(c->path);
	free(c);
}

static int ask_one(const char *path, json_t *req, json_t **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char why[256];
	int fd, ret;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	set_timeouts(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* A refused peer may be answered and closed before it has written:
	 * the answer is still there to read. */
	ret = write_line(fd, req);
	if (!ret || ret == -EPIPE) {
		*reply = read_line(fd, why, sizeof(why));
		ret = *reply ? 0 : ret ? ret : -EPROTO;
	}
	close(fd);
	return ret;
}

int cw_control_request(const char *state_dir, json_t *req, json_t **reply,
		       struct cw_error *err)
{
	char dir[4096], path[4096 + 300];
	const char *op = json_string_value(json_object_get(req, "op"));
	bool list = op && !strcmp(op, "list");
	struct dirent *de;
	json_t *r = NULL;
	int ret, reached = 0, last = -ENOENT;
	DIR *d;

	*reply = NULL;
	ret = control_dir(state_dir, dir, sizeof(dir), false, err);
	if (ret)
		return ret;
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return -ENOENT;
		ret = -errno;
		cw_error_set(err, "%s: %s", dir, strerror(errno));
		return ret;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		const char *code;

		if (n < 6 || strcmp(de->d_name + n - 5, ".sock"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		r = NULL;
		ret = ask_one(path, req, &r);
		if (ret) {
			last = ret;
			continue; /* an agent that is gone */
		}
		reached++;
		if (list) {
			/* Every agent's pending approvals, together. */
			if (!*reply)
				*reply = json_pack("{s:b, s:[]}", "ok", 1,
						   "pending");
			json_array_extend(json_object_get(*reply, "pending"),
					  json_object_get(r, "pending"));
			json_decref(r);
			continue;
		}
		code = json_string_value(json_object_get(r, "code"));
		if (code && !strcmp(code, "unknown")) {
			json_decref(*reply);
			*reply = r;
			continue;
		}
		json_decref(*reply);
		*reply = r;
		break;
	}
	closedir(d);
	if (!reached) {
		if (last != -ENOENT && last != -ECONNREFUSED) {
			cw_error_set(err, "%s: %s", dir, strerror(-last));
			return last;
		}
		return -ENOENT;
	}
	return 0;
}

/* ---- the protocol ------------------------------------------------------ */

json_t *cw_control_answer(struct cw_engine *e, json_t *req,
			  const struct ucred *peer)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	const char *id = json_string_value(json_object_get(req, "id"));
	struct cw_error err;
	json_t *desc = NULL, *rec;
	char msg[512];
	bool approve;
	int64_t now;
	int ret;

	if (op && !strcmp(op, "list"))
		return json_pack("{s:b, s:o}", "ok", 1, "pending",
				 cw_approvals_pending(cw_engine_approvals(e),
						      cw_mono_us()));
	if (!op || (strcmp(op, "approve") && strcmp(op, "reject")) || !id)
		return json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
				 "expected {\"op\": \"approve\"|\"reject\", \"id\": ID} or {\"op\": \"list\"}",
				 "code", "bad_request");
	approve = !strcmp(op, "approve");
	now = cw_mono_us();
	ret = cw_approvals_try(cw_engine_approvals(e), id, approve, now, msg, sizeof(msg),
			       &desc);
	if (ret == -ENOENT) {
		json_decref(desc);
		return json_pack("{s:b, s:s, s:s}", "ok", 0, "error", msg,
				 "code", "unknown");
	}
	/* Every answer to a known id is on the record, refused ones too. */
	rec = cw_rec_approval(id, approve, ret, peer, desc);
	json_decref(desc);
	/* On the record before it takes effect. */
	if (!rec || cw_engine_audit(e, CW_AUDIT_T(APPROVAL), rec, 0, &err) < 0) {
		json_decref(rec);
		return json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
				 "the decision was not taken: the audit log cannot be written",
				 "code", "refused");
	}
	json_decref(rec);
	if (!ret)
		ret = cw_approvals_decide(cw_engine_approvals(e), id, approve, now, msg,
					  sizeof(msg), NULL);
	if (ret)
		return json_pack("{s:b, s:s, s:s}", "ok", 0, "error", msg,
				 "code",
				 ret == -ETIMEDOUT ? "expired" : "already");
	return json_pack("{s:b, s:s}", "ok", 1, "message", msg);
}
