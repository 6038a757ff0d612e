/* SPDX-License-Identifier: Apache-2.0 */
/* The embedded default policy: policies/e2b-run-command.json, verbatim. */
	.section .rodata
	.balign 16
	.global cw_default_policy_json
	.type cw_default_policy_json, @object
cw_default_policy_json:
	.incbin CW_DEFAULT_POLICY
	.global cw_default_policy_json_end
cw_default_policy_json_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
