// SPDX-License-Identifier: Apache-2.0
/*
 * sysprobe: calls every syscall of the default seccomp profile with
 * arguments that make it fail harmlessly when allowed (-1 everywhere), and
 * prints "name errno-name" per syscall. The e2e tests run it through
 * cmdwarden to show each group is blocked, and with the profile off to show
 * the filter is what blocked it.
 *
 * `sysprobe --flood N NAME` calls NAME N times and prints how many calls
 * failed with EPERM: a flood of denials for the audit tests.
 * `sysprobe --opens N PATH` opens and closes PATH N times as fast as it
 * can: a burst of kernel events faster than any shell loop (read-only
 * opens, which the trace sums per path); `sysprobe --writes N PATH` the
 * same, opened for writing (created if missing): a record each.
 * `sysprobe --forge N REAL FAKE` opens REAL for writing (creating it) N
 * times while a second thread keeps rewriting the name in the buffer to
 * FAKE and back, the attack on a trail that reads the path from the
 * program's memory after the call; prints "forge N opened K".
 * `sysprobe --ignore SIG CMD ARGS...` runs CMD with signal SIG ignored, set
 * through the system call, so glibc's own signals (32, 33) can be too.
 * `sysprobe --ldt` writes one entry into the process's LDT (x86) and
 * prints "modify_ldt OK" or the errno's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __x86_64__
#include <asm/ldt.h>
#endif

#include "kernel/seccomp.h"
#include "lib/util.h"

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EBADF: return "EBADF";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EIO: return "EIO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	default: return "OTHER";
	}
}

static int flood(long n, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	long i, eperm = 0;

	if (nr < 0) {
		fprintf(stderr, "sysprobe: unknown syscall \"%s\"\n", name);
		return 2;
	}
	for (i = 0; i < n; i++)
		if (syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L) == -1 &&
		    errno == EPERM)
			eperm++;
	printf("flood %s %ld EPERM %ld\n", name, n, eperm);
	return 0;
}

static int opens(long n, const char *path, int flags)
{
	long i, failed = 0;
	int fd;

	for (i = 0; i < n; i++) {
		fd = open(path, flags | O_CLOEXEC, 0600);
		if (fd < 0)
			failed++;
		else
			close(fd);
	}
	printf("%s %ld failed %ld\n", flags ? "writes" : "opens", n, failed);
	return 0;
}

static struct {
	char name[PATH_MAX];
	const char *real, *fake;
	volatile int stop;
} forged;

static void *flip_name(void *arg)
{
	(void)arg;
	while (!forged.stop) {
		strcpy(forged.name, forged.fake);
		strcpy(forged.name, forged.real);
	}
	return NULL;
}

static int forge(long n, const char *real, const char *fake)
{
	pthread_t t;
	long i, opened = 0;
	int fd;

	if (strlen(real) >= sizeof(forged.name) ||
	    strlen(fake) >= sizeof(forged.name))
		return 2;
	forged.real = real;
	forged.fake = fake;
	strcpy(forged.name, real);
	if (pthread_create(&t, NULL, flip_name, NULL))
		return 2;
	for (i = 0; i < n; i++) {
		fd = open(forged.name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0) {
			opened++;
			close(fd);
		}
	}
	forged.stop = 1;
	pthread_join(t, NULL);
	printf("forge %ld opened %ld\n", n, opened);
	return 0;
}

/* Signal sig ignored, then CMD: what a parent may hand the agent. */
static int run_ignoring(int sig, char **cmd)
{
	int rc = cw_signal_set(sig, SIG_IGN);

	if (rc) {
		fprintf(stderr, "sysprobe: ignoring signal %d: %s\n", sig,
			strerror(-rc));
		return 2;
	}
	execvp(cmd[0], cmd);
	perror("sysprobe: exec");
	return 127;
}

/* A flat 32-bit data segment in LDT slot 0: what an emulator sets up. */
static int write_ldt(void)
{
#ifdef __x86_64__
	struct user_desc d = {
		.entry_number = 0, .base_addr = 0, .limit = 0xfffff,
		.seg_32bit = 1, .limit_in_pages = 1, .useable = 1,
	};
	long r;

	errno = 0;
	r = syscall(SYS_modify_ldt, 1, &d, sizeof(d));
	printf("modify_ldt %s\n", r == 0 ? "OK" : errname(errno));
	return 0;
#else
	printf("modify_ldt SKIPPED\n");
	return 0;
#endif
}

/* The first argument of a syscall the probe calls: -1, except where -1
 * is a harmless value the profile allows (personality's query). */
static long first_arg(const char *name)
{
	if (strcmp(name, "personality") == 0)
		return 0x0040000; /* ADDR_NO_RANDOMIZE */
	return -1;
}

int main(int argc, char **argv)
{
	size_t g;

	if (argc == 4 && strcmp(argv[1], "--flood") == 0)
		return flood(strtol(argv[2], NULL, 10), argv[3]);
	if (argc == 4 && strcmp(argv[1], "--opens") == 0)
		return opens(strtol(argv[2], NULL, 10), argv[3], O_RDONLY);
	if (argc == 4 && strcmp(argv[1], "--writes") == 0)
		return opens(strtol(argv[2], NULL, 10), argv[3],
			     O_WRONLY | O_CREAT);
	if (argc == 5 && strcmp(argv[1], "--forge") == 0)
		return forge(strtol(argv[2], NULL, 10), argv[3], argv[4]);
	if (argc == 2 && strcmp(argv[1], "--ldt") == 0)
		return write_ldt();
	if (argc >= 4 && strcmp(argv[1], "--ignore") == 0)
		return run_ignoring((int)strtol(argv[2], NULL, 10), argv + 3);

	for (g = 0; g < cw_seccomp_ngroups; g++) {
		const struct cw_seccomp_group *grp = &cw_seccomp_groups[g];
		const char *const *s;

		for (s = grp->syscalls; *s; s++) {
			int nr = seccomp_syscall_resolve_name(*s);
			long r;

			if (argc > 1 && strcmp(argv[1], grp->name) != 0 &&
			    strcmp(argv[1], *s) != 0)
				continue;
			if (nr < 0) {
				printf("%s %s UNKNOWN\n", grp->name, *s);
				continue;
			}
			/* No-argument calls would act for real when allowed. */
			if (strcmp(*s, "vhangup") == 0 ||
			    strcmp(*s, "sync") == 0) {
				printf("%s %s SKIPPED\n", grp->name, *s);
				continue;
			}
			errno = 0;
			r = syscall(nr, first_arg(*s), -1L, -1L, -1L, -1L, -1L);
			printf("%s %s %s\n", grp->name, *s,
			       r == -1 ? errname(errno) : "OK");
			fflush(stdout);
		}
	}
	return 0;
}
