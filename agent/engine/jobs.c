// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "engine/jobs.h"
#include "lib/headtail.h"
#include "lib/json.h"
#include "lib/util.h"

enum job_state { JOB_STARTING, JOB_RUNNING, JOB_ENDED };

struct cw_job {
	struct cw_jobs *js;
	char invocation[32];
	char *grant;
	pthread_t th;
	int cancel_fd;
	void (*fn)(struct cw_job *job, void *arg);
	void *arg;
	/* Everything below is guarded by js->lock. */
	enum job_state state;
	bool launched;
	bool kill_requested;
	bool collected;		/* the starter saw its launch: prunable */
	pid_t pid;
	struct cw_headtail out, err;	/* their first and last bytes */
	bool truncated;
	int exit_code, term_signal;
	bool timed_out;
	unsigned left_running;
	struct cw_notes notes;	/* appended to stderr once it ended */
	int64_t start_us, duration_us;
	uint64_t ended_seq;	/* order of ending, for pruning */
	char error[512];
	struct cw_job *next;
};

struct cw_jobs {
	pthread_mutex_t lock;	/* the list and every job's state */
	pthread_cond_t cond;	/* a job changed state */
	struct cw_job *jobs;
	uint64_t ended;
};

struct cw_jobs *cw_jobs_new(void)
{
	struct cw_jobs *js = calloc(1, sizeof(*js));

	if (!js)
		return NULL;
	pthread_mutex_init(&js->lock, NULL);
	pthread_cond_init(&js->cond, NULL);
	return js;
}

static void job_free(struct cw_job *j)
{
	if (j->cancel_fd >= 0)
		close(j->cancel_fd);
	cw_headtail_free(&j->out);
	cw_headtail_free(&j->err);
	free(j->grant);
	free(j);
}

static void signal_cancel(struct cw_job *j)
{
	uint64_t one = 1;

	j->kill_requested = true;
	if (write(j->cancel_fd, &one, sizeof(one)) < 0) {
		/* An eventfd only refuses at its maximum count: already
		 * signalled. */
	}
}

void cw_jobs_free(struct cw_jobs *js)
{
	struct cw_job *j, *next;

	if (!js)
		return;
	pthread_mutex_lock(&js->lock);
	for (j = js->jobs; j; j = j->next)
		if (j->state != JOB_ENDED)
			signal_cancel(j);
	pthread_mutex_unlock(&js->lock);
	/* The threads end once their commands are gone. */
	for (j = js->jobs; j; j = next) {
		next = j->next;
		pthread_join(j->th, NULL);
		job_free(j);
	}
	pthread_cond_destroy(&js->cond);
	pthread_mutex_destroy(&js->lock);
	free(js);
}

/* Unlinks the oldest finished jobs beyond the number kept; the caller
 * joins and frees them after unlocking. */
static struct cw_job *prune_locked(struct cw_jobs *js)
{
	struct cw_job **pp, **oldest, *gone = NULL;
	size_t nended;

	for (;;) {
		nended = 0;
		oldest = NULL;
		for (pp = &js->jobs; *pp; pp = &(*pp)->next) {
			if ((*pp)->state != JOB_ENDED || !(*pp)->collected)
				continue;
			nended++;
			if (!oldest || (*pp)->ended_seq < (*oldest)->ended_seq)
				oldest = pp;
		}
		if (nended <= CW_JOBS_KEEP_FINISHED)
			return gone;
		struct cw_job *j = *oldest;

		*oldest = j->next;
		j->next = gone;
		gone = j;
	}
}

static void reap(struct cw_job *gone)
{
	struct cw_job *next;

	for (; gone; gone = next) {
		next = gone->next;
		pthread_join(gone->th, NULL);
		job_free(gone);
	}
}

static void *job_main(void *p)
{
	struct cw_job *j = p;
	bool ended;

	j->fn(j, j->arg);
	pthread_mutex_lock(&j->js->lock);
	ended = j->state == JOB_ENDED;
	pthread_mutex_unlock(&j->js->lock);
	if (!ended)
		cw_job_finish(j, NULL, NULL, "the job ended without a result");
	return NULL;
}

int cw_jobs_start(struct cw_jobs *js, const char *invocation,
		  const char *grant, size_t max_output,
		  void (*fn)(struct cw_job *job, void *arg), void *arg,
		  struct cw_job **out)
{
	struct cw_job *j, *gone;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->js = js;
	snprintf(j->invocation, sizeof(j->invocation), "%s", invocation);
	j->grant = strdup(grant ? grant : "");
	j->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	j->fn = fn;
	j->arg = arg;
	cw_headtail_init(&j->out, max_output);
	cw_headtail_init(&j->err, max_output);
	j->exit_code = -1;
	j->start_us = cw_mono_us();
	if (!j->grant || j->cancel_fd < 0) {
		ret = j->cancel_fd < 0 ? -errno : -ENOMEM;
		job_free(j);
		return ret;
	}
	pthread_mutex_lock(&js->lock);
	ret = -pthread_create(&j->th, NULL, job_main, j);
	if (!ret) {
		j->next = js->jobs;
		js->jobs = j;
	}
	gone = prune_locked(js);
	pthread_mutex_unlock(&js->lock);
	reap(gone);
	if (ret) {
		job_free(j);
		return ret;
	}
	*out = j;
	return 0;
}

int cw_job_cancel_fd(const struct cw_job *j)
{
	return j->cancel_fd;
}

void cw_job_launched(struct cw_job *j, pid_t pid)
{
	pthread_mutex_lock(&j->js->lock);
	j->pid = pid;
	j->launched = true;
	j->state = JOB_RUNNING;
	pthread_cond_broadcast(&j->js->cond);
	pthread_mutex_unlock(&j->js->lock);
}

void cw_job_output(struct cw_job *j, int stream, const char *data,
		   size_t len)
{
	struct cw_headtail *h = stream == 2 ? &j->err : &j->out;

	pthread_mutex_lock(&j->js->lock);
	cw_headtail_add(h, data, len);
	if (cw_headtail_omitted(h) || h->nomem)
		j->truncated = true;
	pthread_mutex_unlock(&j->js->lock);
}

void cw_job_finish(struct cw_job *j, const struct cw_spawn_result *run,
		   const struct cw_notes *notes, const char *error)
{
	pthread_mutex_lock(&j->js->lock);
	if (notes)
		j->notes = *notes;
	if (run) {
		j->exit_code = cw_spawn_status(run);
		j->term_signal = run->term_signal;
		j->timed_out = run->timed_out;
		j->left_running = run->left_running;
		j->truncated |= run->truncated;
		j->duration_us = run->duration_us;
	} else {
		j->duration_us = cw_mono_us() - j->start_us;
	}
	if (error)
		snprintf(j->error, sizeof(j->error), "%s", error);
	j->state = JOB_ENDED;
	j->ended_seq = ++j->js->ended;
	pthread_cond_broadcast(&j->js->cond);
	pthread_mutex_unlock(&j->js->lock);
}

int cw_job_wait_launched(struct cw_job *j, pid_t *pid, char *msg,
			 size_t len)
{
	int ret;

	pthread_mutex_lock(&j->js->lock);
	while (j->state == JOB_STARTING)
		pthread_cond_wait(&j->js->cond, &j->js->lock);
	ret = j->launched ? 0 : -1;
	*pid = j->pid;
	j->collected = true;
	if (ret)
		snprintf(msg, len, "%s",
			 j->error[0] ? j->error : "the command did not start");
	pthread_mutex_unlock(&j->js->lock);
	return ret;
}

/* Under js->lock. */
static struct cw_job *find_locked(struct cw_jobs *js, const char *invocation,
				  const char *grant)
{
	struct cw_job *j;

	for (j = js->jobs; j; j = j->next)
		if (!strcmp(j->invocation, invocation) &&
		    !strcmp(j->grant, grant ? grant : ""))
			return j;
	return NULL;
}

/* Under js->lock: a stream's kept bytes so far, with the marker line
 * at the cut; stderr with a line for each note once it ended. */
static json_t *stream_locked(const struct cw_job *j, int stream)
{
	const struct cw_headtail *h = stream == 2 ? &j->err : &j->out;
	struct cw_buf b = { 0 }, n = { 0 };
	json_t *v;

	if (cw_headtail_render(h, &b) < 0) {
		cw_buf_free(&b);
		return json_string("");
	}
	if (stream != 2 || !j->notes.n) {
		v = cw_json_bytes(b.data ? b.data : "", b.len);
	} else {
		v = cw_notes_append(&n, b.data ? b.data : "", b.len,
				    &j->notes) == 0 ?
			    cw_json_bytes(n.data, n.len) :
			    cw_json_bytes(b.data ? b.data : "", b.len);
		cw_buf_free(&n);
	}
	cw_buf_free(&b);
	return v;
}

/* Under js->lock. */
static json_t *status_locked(const struct cw_job *j)
{
	bool running = j->state != JOB_ENDED;
	int64_t dur = running ? cw_mono_us() - j->start_us : j->duration_us;
	json_t *o;

	o = json_pack("{s:s, s:i, s:b, s:o, s:i, s:b, s:b, s:o, s:o, s:b, s:I}",
		      "invocation_id", j->invocation, "pid", (int)j->pid,
		      "running", running, "exit_code",
		      running || !j->launched ? json_null() :
						json_integer(j->exit_code),
		      "signal", j->term_signal, "timed_out", j->timed_out,
		      "killed", j->kill_requested, "stdout",
		      stream_locked(j, 1), "stderr", stream_locked(j, 2),
		      "truncated", j->truncated, "duration_ms",
		      (json_int_t)(dur / 1000));
	if (o && j->error[0])
		json_object_set_new(o, "error", json_string(j->error));
	if (o)
		json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:I}",
			"stdout_bytes", (json_int_t)j->out.total,
			"stdout_omitted", (json_int_t)cw_headtail_omitted(&j->out),
			"stderr_bytes", (json_int_t)j->err.total,
			"stderr_omitted", (json_int_t)cw_headtail_omitted(&j->err)));
	if (o && !running) {
		json_t *a = json_array();
		unsigned i;

		for (i = 0; a && i < j->notes.n; i++)
			json_array_append_new(a, cw_json_bytes(j->notes.v[i],
					      strlen(j->notes.v[i])));
		json_object_set_new(o, "notes", a);
		json_object_set_new(o, "left_running_killed",
				    json_integer(j->left_running));
	}
	return o;
}

static void no_job(const char *invocation, char *msg, size_t len)
{
	snprintf(msg, len, "no background call \"%.64s\" for this caller (it never existed, belongs to another grant, or ended more than %d calls ago)",
		 invocation, CW_JOBS_KEEP_FINISHED);
}

json_t *cw_jobs_status(struct cw_jobs *js, const char *invocation,
		       const char *grant, char *msg, size_t len)
{
	struct cw_job *j;
	json_t *o = NULL;

	pthread_mutex_lock(&js->lock);
	j = find_locked(js, invocation, grant);
	if (j) {
		o = status_locked(j);
		if (!o)
			snprintf(msg, len, "out of memory");
	} else {
		no_job(invocation, msg, len);
	}
	pthread_mutex_unlock(&js->lock);
	return o;
}

json_t *cw_jobs_kill(struct cw_jobs *js, const char *invocation,
		     const char *grant, int64_t wait_ms, char *msg,
		     size_t len)
{
	struct timespec until;
	struct cw_job *j;
	json_t *o = NULL;

	cw_deadline_ms(CLOCK_REALTIME, wait_ms, &until);
	pthread_mutex_lock(&js->lock);
	j = find_locked(js, invocation, grant);
	if (!j) {
		no_job(invocation, msg, len);
		goto out;
	}
	if (j->state != JOB_ENDED) {
		signal_cancel(j);
		/* The job stays listed until it ends: it is only pruned
		 * once ended, so j remains valid while we wait. */
		while (j->state != JOB_ENDED &&
		       pthread_cond_timedwait(&js->cond, &js->lock, &until) !=
			       ETIMEDOUT)
			;
	}
	o = status_locked(j);
	if (!o)
		snprintf(msg, len, "out of memory");
out:
	pthread_mutex_unlock(&js->lock);
	return o;
}
