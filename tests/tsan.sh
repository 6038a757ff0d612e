#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make tsan: the end-to-end tests of concurrent calls, background calls,
# approvals, commands and the HTTP transport (its event threads, the audit
# log's flusher and notifier) against an agent built with ThreadSanitizer
# (not the HTTP soak: it measures RSS, which the sanitizer inflates). Fails
# on a failing test or on any report.
set -euo pipefail
cd "$(dirname "$0")/.."
agent=$(realpath "$1")
reports=$(mktemp -d /tmp/cmdwarden-tsan.XXXXXX)
trap 'rm -rf "$reports"' EXIT
[ -d tests/e2e/node_modules/@modelcontextprotocol/sdk ] ||
	(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
rc=0
TSAN_OPTIONS="log_path=$reports/tsan second_deadlock_stack=1" CW="$agent" CW_SANITIZER=thread \
	bats tests/e2e/concurrency.bats tests/e2e/approvals.bats tests/e2e/run_command.bats \
		tests/e2e/http.bats tests/e2e/http_sdk.bats || rc=1
if compgen -G "$reports/tsan*" >/dev/null; then
	cat "$reports"/tsan*
	echo "ThreadSanitizer reported the above" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "tsan: no reports"
exit $rc
