/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe: which kernel layers this kernel and this process can use, found by
 * trying each one (never by reading version numbers).
 */
#ifndef CW_KERNEL_PROBE_H
#define CW_KERNEL_PROBE_H

#include <stdbool.h>

#include <jansson.h>

enum cw_feature {
	CW_FEAT_SECCOMP = 0,		/* seccomp filter mode */
	CW_FEAT_SECCOMP_NOTIFY,		/* SECCOMP_RET_USER_NOTIF */
	CW_FEAT_LANDLOCK,		/* any Landlock ABI */
	CW_FEAT_CGROUP2,		/* a cgroup2 mount we can create children in */
	CW_FEAT_CGROUP_V1_MEMORY,	/* v1 memory controller usable */
	CW_FEAT_CGROUP_V1_PIDS,		/* v1 pids controller usable */
	CW_FEAT_BPF_CGROUP_SOCK_ADDR,	/* load cgroup/connect4 etc. */
	CW_FEAT_BPF_CGROUP_SOCK,	/* load cgroup/sock_create */
	CW_FEAT_BPF_CGROUP_SKB,		/* load cgroup_skb/egress */
	CW_FEAT_BPF_RINGBUF,		/* BPF_MAP_TYPE_RINGBUF */
	CW_FEAT_KERNEL_BTF,		/* /sys/kernel/btf/vmlinux loads */
	CW_FEAT_BPF_TRACEPOINT,		/* BPF on tracepoints */
	CW_FEAT_BPF_LSM,		/* BPF LSM programs attach */
	CW_FEAT_FANOTIFY,		/* fanotify with permission events */
	CW_FEAT_KAUDIT,			/* the kernel audit, ours to run */
	CW_FEAT_PROC_EVENTS,		/* the process events connector */
	CW_FEAT_SOCK_DIAG_INET,		/* inet sock_diag: listeners with their
					 * cgroup (bpf_net's local services) */
	CW_FEAT_CALL_NAMESPACES,	/* a holder of a call's IPC, pid and
					 * mount namespaces starts */
	CW_FEAT_CALL_USERNS,		/* a user namespace of its own per call */
	CW_FEAT_COUNT,
};

struct cw_probe_item {
	bool ok;
	char detail[192];	/* when ok: what was found (e.g. "ABI 7",
				 * "/sys/fs/cgroup/unified, controllers: cpu");
				 * when not: why (errno text, missing config,
				 * missing privilege) */
};

struct cw_probe {
	struct cw_probe_item item[CW_FEAT_COUNT];
	int landlock_abi;	/* 0 when unavailable */
	char cgroup2_mount[256];	/* "" when none */
	char cgroup2_controllers[256];	/* enabled in our subtree */
};

/* Runs every probe. Never fails: each item says yes or no and why.
 * The environment variable CW_PROBE_DISABLE (a comma-separated list of
 * feature names as in cw_probe_name) forces features off, with the reason
 * "disabled by CW_PROBE_DISABLE", so tests can simulate a kernel that lacks
 * them. */
void cw_probe_run(struct cw_probe *p);

const char *cw_probe_name(enum cw_feature f);	/* "seccomp", "landlock", ... */

/* {"features": {name: {"ok": bool, "detail": text}}, "landlock_abi": N,
 *  "cgroup2": {"mount": ..., "controllers": ...}} New reference. */
json_t *cw_probe_json(const struct cw_probe *p);

#endif
