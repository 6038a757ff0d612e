#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs unit tests (cmocka, under ASan/UBSan) and end-to-end tests (bats),
# both as TAP, and ends with one line: "N passed, N failed, N skipped".
#   run.sh unit BIN...   run.sh e2e   run.sh all BIN...
#   run.sh count NAME FILE RC   counts TAP already run elsewhere (the VM's
#                               passes, tests/vm/vmtest.sh) with exit status RC
set -uo pipefail
cd "$(dirname "$0")/.."

mode=$1
shift
passed=0
failed=0
skipped=0
failures=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Counts a TAP file; a plan that promises more results than were printed,
# or a non-zero exit with no failing result, counts as one failure more.
count_tap() {
	local suite=$1 file=$2 rc=$3 line plan=0 results=0 bad=0
	while IFS= read -r line; do
		case "$line" in
		1..*) plan=${line#1..} ;;
		"ok "*"# skip"* | "ok "*"# SKIP"* | "not ok "*"# SKIP"* | "not ok "*"# skip"*)
			skipped=$((skipped + 1))
			results=$((results + 1))
			;;
		"ok "*)
			passed=$((passed + 1))
			results=$((results + 1))
			;;
		"not ok "*)
			failed=$((failed + 1))
			bad=$((bad + 1))
			results=$((results + 1))
			failures+=("$suite: ${line#not ok }")
			;;
		esac
	done <"$file"
	if [ "$results" -lt "$plan" ] || { [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; }; then
		failed=$((failed + 1))
		failures+=("$suite: exited with status $rc after $results of $plan results")
	fi
}

run_unit() {
	local bin rc name
	for bin in "$@"; do
		name=$(basename "$bin")
		echo "# unit: $name"
		CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			"$bin" >"$tmp/$name.tap" 2>"$tmp/$name.err"
		rc=$?
		cat "$tmp/$name.tap"
		sed 's/^/# /' "$tmp/$name.err"
		count_tap "$name" "$tmp/$name.tap" "$rc"
	done
}

run_e2e() {
	local rc
	if [ -f tests/e2e/package.json ] && [ ! -d tests/e2e/node_modules ]; then
		echo "# installing the MCP SDK for the client tests"
		(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error) ||
			echo "# npm ci failed: the SDK client tests will fail"
	fi
	echo "# e2e: bats tests/e2e"
	bats --tap tests/e2e >"$tmp/e2e.tap" 2>&1
	rc=$?
	cat "$tmp/e2e.tap"
	count_tap e2e "$tmp/e2e.tap" "$rc"
}

case "$mode" in
unit) run_unit "$@" ;;
e2e) run_e2e ;;
all)
	run_unit "$@"
	run_e2e
	;;
count)
	[ $# -eq 3 ] || { echo "usage: $0 count NAME FILE RC" >&2; exit 2; }
	count_tap "$1" "$2" "$3"
	;;
*)
	echo "usage: $0 unit|e2e|all|count [ARGS...]" >&2
	exit 2
	;;
esac

if [ "${#failures[@]}" -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
