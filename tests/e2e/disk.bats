#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The writable trees' byte and inode budget (sandbox.disk, kernel/tmpfs.h,
# kernel/diskimage.h): a tree listed in disk.tmpfs becomes a size- and
# inode-limited tmpfs, one in disk.image an ext4 of an image file of its
# own, in the sandbox's own mount namespace, so a runaway call fills the
# budget, not the disk, and what the calls write stays visible to the
# sandbox.

load helpers

setup() {
	cw_setup
	D=$(public_dir)
	W="$D/w"
	mkdir "$W"
	chmod 0777 "$W"
}

teardown() {
	umount "$W" 2>/dev/null || true
	# the image's loop device detaches with the unmount
	rm -rf "$D/img"
	public_dirs_remove
}

# image_policy: $T/image.json, writing to $W (and /tmp) with $W on an
# image of 16 MiB and 64 inodes in $D/img
image_policy() {
	jq -n --arg w "$W" --arg d "$D/img" '{version: "1", default: "deny", tools: {run_command: {sandbox: {
		filesystem: {read: ["/"], write: [$w, "/tmp"], exec: ["/usr", "/bin"]},
		disk: {image: [$w], image_mb: 16, image_inodes: 64, image_dir: $d}}}}}' >"$T/image.json"
}

loop_on() {
	[ -e /dev/loop-control ] || skip "no /dev/loop-control: the kernel's loop driver is not loaded"
}

# disk_policy [TMPFS-JSON]: $T/disk.json, writing to $W (and /tmp) with a
# budget of 8 MiB and 64 inodes on the trees TMPFS-JSON lists
disk_policy() {
	jq -n --arg w "$W" --argjson t "${1:-[\"$W\"]}" '{version: "1", default: "deny", tools: {run_command: {sandbox: {
		filesystem: {read: ["/"], write: [$w, "/tmp"], exec: ["/usr", "/bin"]},
		disk: {tmpfs: $t, max_mb: 8, max_inodes: 64}}}}}' >"$T/disk.json"
}

launch_field() {
	jq -c --arg i "$(structured "$1" invocation_id)" \
		"select(.type == \"launch\" and .invocation == \$i) | $2" "$AUDIT"
}

@test "a call cannot write past the tree's byte budget (fallocate, write), while a file inside it is written and seen by the sandbox" {
	disk_policy
	# one call: calls of one agent run at once
	mcp --policy "$T/disk.json" -- \
		"$(call_json 1 "head -c 3000000 /dev/zero >$W/ok && echo wrote; fallocate -l 20M $W/big; echo rc=\$?; head -c 9000000 /dev/zero >$W/more; echo rc=\$?; df -m --output=size $W | tail -1")"
	# the attack: refused by the file system, with the reason a program shows
	assert_equal "$(text 1 | jq -r '.stdout + .stderr' | tr -d ' ')" "$(printf 'wrote\nrc=1\nrc=1\n8\nfallocate:fallocatefailed:Nospaceleftondevice\nhead:errorwriting\x27standardoutput\x27:Nospaceleftondevice')"
	# the twin: the file the call wrote is the sandbox's, whole
	assert_equal "$(stat -c %s "$W/ok")" 3000000
	assert_equal "$(findmnt -no FSTYPE "$W")" tmpfs
	run findmnt -no OPTIONS "$W"
	assert_output --partial nosuid
	assert_output --partial nodev
	# the launch record says what the tree's budget is
	assert_equal "$(launch_field 1 ".disk_budget[\"$W\"]")" "{\"tmpfs\":\"$W\",\"max_mb\":8,\"max_inodes\":64}"
	assert_equal "$(launch_field 1 ".layer_gaps.disk_budget")" '"/tmp: no budget (sandbox.disk.tmpfs or sandbox.disk.image): a call is held to resources.file_size_mb a file and, where tracing works, files.max_write_bytes"'
}

@test "a call cannot make more files than the tree's inode budget; the files it made stay, and a restarted agent keeps them" {
	disk_policy
	mcp --policy "$T/disk.json" -- \
		"$(call_json 1 "for i in \$(seq 200); do : >$W/f\$i 2>/dev/null || { echo stopped at \$i; break; }; done")"
	run text 1
	stopped=$(text 1 | jq -r .stdout)
	[[ "$stopped" =~ ^stopped\ at\ ([0-9]+)$ ]] || fail "no refusal: $stopped"
	n=${BASH_REMATCH[1]}
	[ "$n" -gt 50 ] && [ "$n" -le 64 ] || fail "refused at file $n of a 64-inode budget"
	# the twin: a new agent finds the tmpfs, sets its limits again and
	# hides nothing; a file removed makes room for one more
	mcp --policy "$T/disk.json" -- \
		"$(call_json 2 "ls $W | wc -l; rm $W/f1; : >$W/again && echo made")"
	assert_equal "$(text 2 | jq -r .stdout)" "$(printf '%s\nmade' $((n - 1)))"
}

@test "a tree that holds files is not hidden under a tmpfs: the agent names it as a gap and the files stay reachable" {
	echo keep >"$W/old"
	disk_policy
	mcp --policy "$T/disk.json" -- "$(call_json 1 "cat $W/old")"
	assert_equal "$(text 1 | jq -r .stdout)" keep
	[ "$(findmnt -no FSTYPE "$W")" != tmpfs ] || fail "a tmpfs was mounted over $W"
	run launch_field 1 ".layer_gaps.disk_budget"
	assert_output --partial "$W holds 1 entry that a tmpfs mounted over it would hide: empty it, or mount it when the sandbox boots"
	assert_equal "$(launch_field 1 ".disk_budget[\"$W\"].error")" '"no budget (sandbox.disk.tmpfs or sandbox.disk.image): a call is held to resources.file_size_mb a file and, where tracing works, files.max_write_bytes"'
}

@test "a tree on an image cannot be written past its byte budget, and keeps its files on disk across an agent restart and a remount" {
	loop_on
	image_policy
	mcp --policy "$T/image.json" -- \
		"$(call_json 1 "head -c 3000000 /dev/zero >$W/ok && echo wrote; fallocate -l 40M $W/big; echo rc=\$?; head -c 20000000 /dev/zero >$W/more; echo rc=\$?; ls -A $W")"
	# the attack: refused by the tree's own file system
	assert_equal "$(text 1 | jq -r '.stdout + .stderr' | tr -d ' ')" "$(printf 'wrote\nrc=1\nrc=1\nbig\nmore\nok\nfallocate:fallocatefailed:Nospaceleftondevice\nhead:errorwriting\x27standardoutput\x27:Nospaceleftondevice')"
	# the twin: the file the call wrote is the sandbox's, whole, on an
	# ext4 of the image in the image directory
	assert_equal "$(stat -c %s "$W/ok")" 3000000
	assert_equal "$(findmnt -no FSTYPE "$W")" ext4
	img=$(ls "$D/img")
	[ "$img" = "$(printf '%s' "${W#/}" | sed 's|/|_2f|g').ext4" ] || fail "image named $img"
	assert_equal "$(losetup -nO BACK-FILE -j "$D/img/$img" | head -1)" "$D/img/$img"
	run findmnt -no OPTIONS "$W"
	assert_output --partial nosuid
	assert_output --partial nodev
	# sparse: the image takes what its files take, not its size
	[ "$(stat -c %s "$D/img/$img")" -eq $((16 << 20)) ]
	[ "$(du -k "$D/img/$img" | cut -f1)" -lt 16384 ]
	# the launch record gives the file system's own size
	run launch_field 1 ".disk_budget[\"$W\"] | [.image, .file, (.max_mb | . > 8 and . <= 16), (.max_inodes | . >= 64)]"
	assert_output "[\"$W\",\"$D/img/$img\",true,true]"
	# a new agent finds the tree mounted from its image and keeps it
	mcp --policy "$T/image.json" -- "$(call_json 2 "stat -c %s $W/ok")"
	assert_equal "$(text 2 | jq -r .stdout)" 3000000
	[ "$(findmnt -no SOURCE "$W" | wc -l)" -eq 1 ] || fail "mounted twice: $(findmnt -no SOURCE "$W")"
	# after an unmount (a reboot), the empty tree gets its files back
	umount "$W"
	[ -z "$(losetup -nO NAME -j "$D/img/$img")" ] || fail "the loop device stayed after the unmount"
	[ ! -e "$W/ok" ]
	mcp --policy "$T/image.json" -- "$(call_json 3 "stat -c %s $W/ok")"
	assert_equal "$(text 3 | jq -r .stdout)" 3000000
}

@test "a call cannot make more files than the image's inode budget; a tree holding files is not hidden under an image" {
	loop_on
	image_policy
	mcp --policy "$T/image.json" -- \
		"$(call_json 1 "for i in \$(seq 200); do : >$W/f\$i 2>/dev/null || { echo stopped at \$i; break; }; done")"
	stopped=$(text 1 | jq -r .stdout)
	[[ "$stopped" =~ ^stopped\ at\ ([0-9]+)$ ]] || fail "no refusal: $stopped"
	n=${BASH_REMATCH[1]}
	# 64 inodes, less the file system's reserved ones
	[ "$n" -gt 40 ] && [ "$n" -le 64 ] || fail "refused at file $n of a 64-inode budget"
	umount "$W"
	rm -rf "$D/img"
	# the twin: a tree holding a file keeps it in sight
	echo keep >"$W/old"
	mcp --policy "$T/image.json" -- "$(call_json 2 "cat $W/old")"
	assert_equal "$(text 2 | jq -r .stdout)" keep
	! mountpoint -q "$W" || fail "an image was mounted over $W"
	run launch_field 2 ".layer_gaps.disk_budget"
	assert_output --partial "$W holds 1 entry that an image mounted over it would hide"
}

@test "sandbox.disk is checked when the policy loads: a relative tree and a zero budget are named" {
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {disk: {tmpfs: ["tmp"], max_mb: 0}}}}}' >"$T/bad.json"
	run "$CW" check "$T/bad.json"
	assert_failure
	assert_output --partial 'tools.run_command.sandbox.disk.tmpfs[0]: "tmp" is not an absolute path'
	assert_output --partial 'tools.run_command.sandbox.disk.max_mb: 0 is out of range; expected an integer from 1 to 16777216 (16 TiB)'
	jq -n '{version: "1", default: "deny", tools: {run_command: {sandbox: {disk: {image: ["/w"], image_mb: 8, image_dir: "img"}}}}}' >"$T/bad.json"
	run "$CW" check "$T/bad.json"
	assert_failure
	assert_output --partial 'tools.run_command.sandbox.disk.image_mb: 8 is out of range; expected an integer from 16 to 16777216 (16 TiB)'
	assert_output --partial 'tools.run_command.sandbox.disk.image_dir: "img" is not an absolute path'
}
