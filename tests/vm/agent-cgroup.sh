#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cmdwarden as a delegated service in the test VM: moves itself into a new
# cgroup of its own beneath agents/ (controllers enabled), then becomes
# cmdwarden (exec: same pid, so tests that signal the agent still reach it).
# Cgroups of agents that have exited are removed first.
agents=/sys/fs/cgroup/agents
for d in "$agents"/a*; do
	[ -d "$d" ] && [ ! -d "/proc/${d##*/a}" ] && rmdir "$d" 2>/dev/null
done
mkdir -p "$agents/a$$" && echo $$ >"$agents/a$$/cgroup.procs" ||
	echo "cmdwarden-service: cannot start in $agents/a$$" >&2
exec /cw/build/cmdwarden "$@"
