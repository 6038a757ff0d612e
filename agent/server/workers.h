/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers: threads for work that must not hold up its caller, such as a
 * tools/call while the transport goes on reading.
 *
 * A thread that has finished its work waits a while for the next instead
 * of exiting, so most work starts on a thread that is already there:
 * handing work over is a wake-up, where a new thread costs its creation,
 * the page faults of a fresh stack and, at its end, the stack's release.
 * At most CW_WORKERS_MAX_IDLE threads wait; each leaves after
 * CW_WORKERS_IDLE_MS without work. The pool is the process's own.
 */
#ifndef CW_SERVER_WORKERS_H
#define CW_SERVER_WORKERS_H

#define CW_WORKERS_MAX_IDLE 4
#define CW_WORKERS_IDLE_MS 10000

/* Runs fn(arg) on a waiting thread, or on a new one when none waits.
 * Returns 0, or -errno when no thread could be started (fn not run). */
int cw_workers_run(void (*fn)(void *arg), void *arg);

/* Threads waiting for work now. */
unsigned cw_workers_idle(void);

/* How long a thread waits for work before it leaves, for threads that
 * start waiting from now on (tests shorten it). */
void cw_workers_set_idle_ms(unsigned ms);

#endif
