#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The documentation: README.md stays short, and every relative link of
# README.md and docs/*.md names a file that exists and, with #anchor, a
# heading of that file (GitHub's slugs).

load helpers

setup() {
	load_libs
}

# check_links FILE... : prints each broken link as FILE:LINE: TARGET (why),
# fails when there is one
check_links() {
	python3 - "$@" <<'PY'
import os, re, sys

def slug(heading):
    s = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return s.replace(' ', '-')

def lines_outside_fences(path):
    fence = False
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if re.match(r'^\s*(```|~~~)', line):
                fence = not fence
                continue
            if not fence:
                yield n, line

def anchors(path):
    seen = {}
    for _, line in lines_outside_fences(path):
        m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        yield base if k == 0 else '%s-%d' % (base, k)

bad = 0
for md in sys.argv[1:]:
    for n, line in lines_outside_fences(md):
        line = re.sub(r'`[^`]*`', '', line)
        for target in re.findall(r'\]\(([^)\s]+)\)', line):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            why = None
            if not os.path.exists(dest):
                why = 'no such file'
            elif anchor and (not dest.endswith('.md') or anchor not in set(anchors(dest))):
                why = 'no heading with that anchor'
            if why:
                print('%s:%d: %s (%s)' % (md, n, target, why))
                bad += 1
sys.exit(1 if bad else 0)
PY
}

@test "README.md is under 250 lines" {
	run wc -l <"$ROOT/README.md"
	assert_success
	[ "$output" -lt 250 ] || fail "README.md has $output lines"
}

@test "every relative link of README.md and docs/ resolves, anchors included" {
	cd "$ROOT"
	[ -d docs ] || fail "docs/ is missing"
	run check_links README.md docs/*.md
	assert_success
	assert_output ''
}

@test "the link check finds a missing file and a missing anchor" {
	mkdir -p "$BATS_TEST_TMPDIR/d/docs"
	cd "$BATS_TEST_TMPDIR/d"
	printf '# A page\n\n## Its part: `x`, y\n' >docs/page.md
	printf '%s\n' '# T' '[ok](docs/page.md#its-part-x-y) [ok](#t)' \
		'[gone](docs/gone.md) [bad](docs/page.md#nothing)' \
		'```' '[in a fence](nowhere.md)' '```' '`[in code](nowhere.md)`' >README.md
	run check_links README.md docs/page.md
	assert_failure
	assert_line 'README.md:3: docs/gone.md (no such file)'
	assert_line 'README.md:3: docs/page.md#nothing (no heading with that anchor)'
	[ "${#lines[@]}" -eq 2 ] || fail "$output"
}
