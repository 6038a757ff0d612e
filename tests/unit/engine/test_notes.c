// SPDX-License-Identifier: Apache-2.0
/* The notes a result carries: one for each kill, limit and refusal, in
 * words that name the limit and the policy key; none for a call that met
 * none; bounded; appended to stderr after a newline of its own. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "engine/notes.h"

struct fixture {
	struct cw_sandbox sb;
	struct cw_run_args ra;
	struct cw_spawn_result run;
	struct cw_cgroup_stats cg;
	struct cw_bpfnet_stats net;
	struct cw_trace_stats trace;
	struct cw_note_facts f;
	struct cw_notes n;
};

static void init(struct fixture *x)
{
	memset(x, 0, sizeof(*x));
	x->sb.timeout_s = 60;
	x->sb.background_timeout_s = 3600;
	x->sb.max_output_bytes = 1024;
	x->sb.resources.memory_mb = 64;
	x->sb.resources.pids = 16;
	x->sb.resources.cpu_s = 5;
	x->sb.resources.file_size_mb = 2;
	x->ra.timeout_ms = 60000;
	x->f = (struct cw_note_facts){ &x->sb, &x->ra, &x->run, &x->cg,
				       &x->net, "", &x->trace, "", 0, "", 0 };
}

static void explain(struct fixture *x)
{
	memset(&x->n, 0, sizeof(x->n));
	cw_notes_explain(&x->n, &x->f);
}

static void test_quiet(void **state)
{
	struct fixture x;

	(void)state;
	init(&x);
	explain(&x);
	assert_int_equal(0, x.n.n);
}

static void test_timeouts(void **state)
{
	struct fixture x;

	(void)state;
	init(&x);
	x.run.timed_out = true;
	explain(&x);
	assert_int_equal(1, x.n.n);
	assert_string_equal("killed at the time limit of 60 s (sandbox.timeout_s); a server or a longer job runs with background: true",
			    x.n.v[0]);
	/* asked for more than the policy allows */
	x.ra.timeout_asked_ms = 120000;
	x.ra.timeout_capped = true;
	explain(&x);
	assert_string_equal("killed at the time limit of 60 s (sandbox.timeout_s); the call asked for 120 s, longer than the policy allows",
			    x.n.v[0]);
	/* not killed, still told */
	x.run.timed_out = false;
	explain(&x);
	assert_string_equal("the call asked for a time limit of 120 s; the policy allows at most 60 s (sandbox.timeout_s), which applied",
			    x.n.v[0]);
	/* its own, shorter one */
	x.ra.timeout_capped = false;
	x.ra.timeout_asked_ms = x.ra.timeout_ms = 1500;
	x.run.timed_out = true;
	explain(&x);
	assert_string_equal("killed at the time limit of 1.5 s the call asked for (timeout)",
			    x.n.v[0]);
	/* a background command's limit is its own key */
	init(&x);
	x.ra.background = true;
	x.ra.timeout_ms = 3600000;
	x.run.timed_out = true;
	explain(&x);
	assert_string_equal("killed at the time limit of 3600 s (sandbox.background_timeout_s)",
			    x.n.v[0]);
}

/* The audit's own bounds: a process killed for a full ring, and events
 * past the call's record budget. */
static void test_audit_bounds(void **state)
{
	struct fixture x;

	(void)state;
	init(&x);
	x.trace.lost_kill.hit = 1;
	x.trace.lost_kill.pid = 4242;
	snprintf(x.trace.lost_kill.comm, sizeof(x.trace.lost_kill.comm),
		 "flood");
	x.trace.lost = 7;
	x.sb.audit.max_records = 100;
	x.sb.audit.max_bytes = 4096;
	x.f.audit_summarised = 12;
	explain(&x);
	assert_int_equal(2, x.n.n);
	assert_string_equal("flood (pid 4242) killed: its kernel events found the audit's ring buffer full, 7 lost (serve's --trace-ringbuf, --trace-overflow)",
			    x.n.v[0]);
	assert_string_equal("12 kernel events past the audit budget of 100 records or 4096 bytes were counted by kind, not recorded one by one (sandbox.audit)",
			    x.n.v[1]);
}

static void test_resources(void **state)
{
	struct fixture x;

	(void)state;
	init(&x);
	x.cg.oom_kills = 1;
	x.cg.memory_peak = 64ull << 20;
	x.cg.pids_limited = true;
	explain(&x);
	assert_int_equal(2, x.n.n);
	assert_string_equal("killed by the memory limit of 64 MiB (sandbox.resources.memory_mb); peak 64 MiB",
			    x.n.v[0]);
	assert_string_equal("a fork was refused at the process limit of 16 (sandbox.resources.pids)",
			    x.n.v[1]);
	/* rlimits, by the signal or the shell's 128 + signal */
	init(&x);
	x.run.term_signal = SIGXCPU;
	explain(&x);
	assert_string_equal("killed by the CPU time limit of 5 s (sandbox.resources.cpu_s)",
			    x.n.v[0]);
	init(&x);
	x.run.exit_code = 128 + SIGXFSZ;
	explain(&x);
	assert_string_equal("killed writing past the file size limit of 2 MiB (sandbox.resources.file_size_mb)",
			    x.n.v[0]);
	/* no cgroup: nothing said of its limits */
	init(&x);
	x.f.cg = NULL;
	explain(&x);
	assert_int_equal(0, x.n.n);
}

static void test_refusals_and_output(void **state)
{
	struct fixture x;

	(void)state;
	init(&x);
	x.run.seccomp_denied = 3;
	x.f.seccomp_first = "unshare";
	x.net.denied = 1;
	x.f.net_first = "192.0.2.7:443 (rule deny)";
	x.run.left_running = 1;
	x.run.truncated = true;
	x.run.out_omitted = 3976;
	x.run.out_total = 5000;
	x.run.err_total = 10;
	explain(&x);
	assert_int_equal(4, x.n.n);
	assert_string_equal("1 process the command left running was killed when it ended; a server runs with background: true",
			    x.n.v[0]);
	assert_string_equal("3 system calls refused by seccomp (EPERM), the first unshare",
			    x.n.v[1]);
	assert_string_equal("1 connection refused by sandbox.network, the first 192.0.2.7:443 (rule deny)",
			    x.n.v[2]);
	assert_string_equal("output cut where the marker line is: 3976 of 5000 bytes of stdout and 0 of 10 of stderr left out (sandbox.max_output_bytes keeps the first 512 and the last 512 bytes of each)",
			    x.n.v[3]);
}

static void test_bounded_and_appended(void **state)
{
	struct cw_notes n = { 0 };
	struct cw_buf b = { 0 };
	char big[600];
	int i;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < CW_NOTES_MAX + 3; i++)
		cw_note(&n, "%s", big);
	assert_int_equal(CW_NOTES_MAX, n.n);
	assert_int_equal(3, n.dropped);
	assert_int_equal(CW_NOTE_LEN - 1, strlen(n.v[0]));
	/* after the command's own stderr, on a line of its own */
	memset(&n, 0, sizeof(n));
	cw_note(&n, "one");
	cw_note(&n, "two");
	assert_int_equal(0, cw_notes_append(&b, "oops", 4, &n));
	assert_int_equal(strlen("oops\n[cmdwarden] one\n[cmdwarden] two\n"), b.len);
	assert_memory_equal("oops\n[cmdwarden] one\n[cmdwarden] two\n", b.data, b.len);
	cw_buf_free(&b);
	assert_int_equal(0, cw_notes_append(&b, "", 0, &n));
	assert_memory_equal("[cmdwarden] one\n", b.data, strlen("[cmdwarden] one\n"));
	cw_buf_free(&b);
}

/* An EACCES is Landlock's only where the lists do not grant the access. */
static void test_fs_refusal(void **state)
{
	char *wr[] = { "/home/user", "/tmp" }, *ex[] = { "/usr", "/bin" },
	     *rd[] = { "/" }, *dn[] = { "/root" };
	struct cw_sandbox sb;
	char b[224];

	(void)state;
	memset(&sb, 0, sizeof(sb));
	sb.filesystem.write = (struct cw_strv){ wr, 2 };
	sb.filesystem.exec = (struct cw_strv){ ex, 2 };
	sb.filesystem.read = (struct cw_strv){ rd, 1 };
	sb.filesystem.deny = (struct cw_strv){ dn, 1 };
	assert_true(cw_notes_fs_refusal(&sb, "open", O_WRONLY | O_CREAT,
					"/opt/x", b, sizeof(b)));
	assert_string_equal("write /opt/x (not beneath sandbox.filesystem.write)", b);
	assert_true(cw_notes_fs_refusal(&sb, "exec", 0, "/home/user/a.out", b,
					sizeof(b)));
	assert_string_equal("exec /home/user/a.out (not beneath sandbox.filesystem.exec)", b);
	assert_true(cw_notes_fs_refusal(&sb, "open", O_RDONLY, "/root/.ssh/id",
					b, sizeof(b)));
	assert_string_equal("read /root/.ssh/id (beneath /root, sandbox.filesystem.deny)", b);
	assert_true(cw_notes_fs_refusal(&sb, "mkdir", 0, "/var/tmp/d", b,
					sizeof(b)));
	/* granted by the lists: the file's own mode refused it */
	assert_false(cw_notes_fs_refusal(&sb, "open", O_WRONLY,
					 "/home/user/ro.txt", b, sizeof(b)));
	assert_false(cw_notes_fs_refusal(&sb, "exec", 0, "/usr/bin/noexec",
					 b, sizeof(b)));
	assert_false(cw_notes_fs_refusal(&sb, "open", O_RDONLY, "/etc/x", b,
					 sizeof(b)));
	/* terminals a logout script probes: not the agent's doing */
	assert_false(cw_notes_fs_refusal(&sb, "open", O_WRONLY, "/dev/tty0",
					 b, sizeof(b)));
	/* not Landlock's to refuse, and not an absolute path */
	assert_false(cw_notes_fs_refusal(&sb, "chmod", 0, "/opt/x", b,
					 sizeof(b)));
	assert_false(cw_notes_fs_refusal(&sb, "exec", 0, "./a.out", b,
					 sizeof(b)));
	assert_true(cw_notes_fs_refusal_relative("exec", 0, "./a.out", b,
						 sizeof(b)));
	assert_string_equal("exec ./a.out (not beneath sandbox.filesystem.exec, or the file's own mode)", b);
	assert_false(cw_notes_fs_refusal_relative("chown", 0, "x", b,
						  sizeof(b)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_resources),
		cmocka_unit_test(test_audit_bounds),
		cmocka_unit_test(test_refusals_and_output),
		cmocka_unit_test(test_bounded_and_appended),
		cmocka_unit_test(test_fs_refusal),
	};

	return cmocka_run_group_tests_name("notes", tests, NULL, NULL);
}
