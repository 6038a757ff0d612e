/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layers: the one table of kernel layers (by CW_LAYER_IDX_*: the probed
 * features each needs; names and bits are CW_LAYERS in policy/policy.h),
 * what this kernel and build offer of them, and the policy checks that
 * depend on it (require_layers, and the warnings for layers a policy does
 * not require but cannot have).
 *
 * Adding a kernel layer: its file pair under userspace/kernel/, its line
 * in CW_LAYERS (policy/policy.h: name and bit), its row in layers.c (what
 * it needs of the probe), one attach/detach pair in launch.c.
 */
#ifndef CW_ENGINE_LAYERS_H
#define CW_ENGINE_LAYERS_H

#include <stdbool.h>

#include <jansson.h>

#include "kernel/probe.h"
#include "lib/util.h"
#include "policy/policy.h"

/* The probe of this kernel, run once per process. */
const struct cw_probe *cw_engine_probe(void);

/* Whether the layer with this CW_LAYER_* bit can be used here. */
bool cw_layer_on(unsigned bit);

/* Layer availability for this kernel and build, as a JSON object
 * {"seccomp": true, ...}, in the table's order. */
json_t *cw_engine_layers(void);

/* The layers that are off, each with why: {"cgroup": "..."}. */
json_t *cw_engine_layers_off(void);
/* What layers in force cannot do on this kernel ({"local_services": why,
 * "memfd_noexec": why}, each only when it applies), for the launch
 * record. */
json_t *cw_engine_layer_gaps(void);

/* Layers the policy does not require but that are unavailable: they are
 * skipped, and said so once at start. */
void cw_engine_layer_warnings(const struct cw_policy *p, struct cw_diag *warn);

/* Loads and fully validates a policy: parse, compile, build its seccomp
 * filter (unknown syscall names), check require_layers against what this
 * kernel and build offer. NULL with every problem in diag. */
struct cw_policy *cw_engine_load_policy(const char *path,
					struct cw_diag *diag);

#endif
