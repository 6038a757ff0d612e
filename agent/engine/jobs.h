/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobs: background calls (`run_command` with `background: true`).
 *
 * A job is one call whose command runs on its own thread, under the same
 * enforcement as a foreground call; the caller gets its pid at launch and
 * later asks for its state (command_status) or ends it (command_kill).
 * A job belongs to the grant that started it: another grant neither sees
 * nor kills it. Finished jobs are kept (output included, bounded by the
 * policy's max_output_bytes) until CW_JOBS_KEEP_FINISHED newer ones ended.
 */
#ifndef CW_ENGINE_JOBS_H
#define CW_ENGINE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "engine/notes.h"

#include "kernel/spawn.h"

#define CW_JOBS_KEEP_FINISHED 64

struct cw_jobs;
struct cw_job;

struct cw_jobs *cw_jobs_new(void);
/* Kills every running job, waits for their threads, frees everything. */
void cw_jobs_free(struct cw_jobs *js);

/* Runs fn(job, arg) on a new thread. fn reports through cw_job_launched,
 * cw_job_output and ends with cw_job_finish. 0 or -errno. */
int cw_jobs_start(struct cw_jobs *js, const char *invocation,
		  const char *grant, size_t max_output,
		  void (*fn)(struct cw_job *job, void *arg), void *arg,
		  struct cw_job **out);

/* For fn: an eventfd that becomes readable when the job is to be killed
 * (the launcher's cancel descriptor). */
int cw_job_cancel_fd(const struct cw_job *j);
void cw_job_launched(struct cw_job *j, pid_t pid);
void cw_job_output(struct cw_job *j, int stream, const char *data,
		   size_t len);
/* The command ended (run is its result, notes what it must be told, may
 * be NULL) or could not be launched (run NULL, error says why). */
void cw_job_finish(struct cw_job *j, const struct cw_spawn_result *run,
		   const struct cw_notes *notes, const char *error);

/* For the caller that started it: waits until the command runs (0, *pid
 * set) or could not start (-1, msg says why). */
int cw_job_wait_launched(struct cw_job *j, pid_t *pid, char *msg,
			 size_t len);

/* command_status: the job's state as a JSON object, or NULL with msg
 * when there is no such job for this grant. */
json_t *cw_jobs_status(struct cw_jobs *js, const char *invocation,
		       const char *grant, char *msg, size_t len);
/* command_kill: kills the job's process tree and waits (up to wait_ms)
 * until it has ended. Its state afterwards, or NULL with msg. */
json_t *cw_jobs_kill(struct cw_jobs *js, const char *invocation,
		     const char *grant, int64_t wait_ms, char *msg,
		     size_t len);

#endif
