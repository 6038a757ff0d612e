// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "policy/decide.h"
#include "policy/policy.h"

/* JSON written with ' for " so the tables stay readable. */
static char *jq(const char *s)
{
	char *d = strdup(s), *p;

	assert_non_null(d);
	for (p = d; *p; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

static struct cw_policy *policy(const char *text)
{
	char *t = jq(text);
	struct cw_diag d;
	struct cw_policy *p;

	cw_diag_init(&d);
	p = cw_policy_load_buffer(t, strlen(t), "inline", &d);
	if (!p) {
		size_t i;

		for (i = 0; i < d.n; i++) {
			char buf[1200];

			cw_error_format(&d.items[i], buf, sizeof(buf));
			print_error("%s\n", buf);
		}
		fail_msg("policy did not load: %s", t);
	}
	free(t);
	cw_diag_free(&d);
	return p;
}

/* A policy whose only rule is run_command = rule. */
static struct cw_policy *rc_policy(const char *rule)
{
	char text[8192];

	snprintf(text, sizeof(text),
		 "{'version':'1','default':'deny','tools':{'run_command':%s}}",
		 rule);
	return policy(text);
}

static json_t *args_of(const char *text)
{
	char *t;
	json_error_t je;
	json_t *a;

	if (!text)
		return NULL;
	t = jq(text);
	/* the transport may pass NUL bytes through: so does this test */
	a = json_loads(t, JSON_ALLOW_NUL, &je);
	if (!a)
		fail_msg("bad test args %s: %s", t, je.text);
	free(t);
	return a;
}

/* ---- a fake counter store -------------------------------------------- */

struct fake_entry {
	const char *key;
	int64_t count;
	int64_t retry_us;
};

struct fake {
	struct fake_entry e[8];
	size_t n;
	int calls;
	int fail;		/* -errno to return */
	int64_t last_window_us, last_now_us, last_max;
	char last_key[384];
};

static int fake_window(void *ctx, const char *key, int64_t window_us,
		       int64_t now_us, int64_t max, int64_t *count,
		       int64_t *retry_after_us)
{
	struct fake *f = ctx;
	size_t i;

	f->calls++;
	f->last_window_us = window_us;
	f->last_now_us = now_us;
	f->last_max = max;
	snprintf(f->last_key, sizeof(f->last_key), "%s", key);
	if (f->fail)
		return f->fail;
	*count = 0;
	*retry_after_us = 0;
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->e[i].key, key))
			continue;
		*count = f->e[i].count;
		if (*count >= max)
			*retry_after_us = f->e[i].retry_us;
	}
	return 0;
}

static struct cw_counter_view view_of(struct fake *f)
{
	struct cw_counter_view v = { fake_window, f };

	return v;
}

/* ---- table of condition cases ----------------------------------------- */

struct dcase {
	const char *rule;	/* tools.run_command */
	const char *args;	/* NULL: no arguments */
	enum cw_verdict_kind kind;
	const char *rule_path;	/* exact */
	const char *reason;	/* substring; NULL: not checked */
};

#define ALLOWED CW_VERDICT_ALLOW, "tools.run_command", NULL
#define REQ0 "tools.run_command.require[0]"
#define DIF0 "tools.run_command.deny_if[0]"
#define R(c) "{'require':[" c "]}"
#define D(c) "{'deny_if':[" c "]}"

static const struct dcase cases[] = {
	/* eq / neq */
	{ R("{'path':'args.command','op':'eq','value':'ls'}"),
	  "{'command':'ls'}", ALLOWED },
	{ R("{'path':'args.command','op':'eq','value':'ls'}"),
	  "{'command':'ls -la'}", CW_VERDICT_DENY, REQ0,
	  "args.command does not equal \"ls\"" },
	{ R("{'path':'args.command','op':'eq','value':'ls'}"), "{}",
	  CW_VERDICT_DENY, REQ0, "args.command is missing" },
	{ R("{'path':'args.command','op':'eq','value':'ls'}"), NULL,
	  CW_VERDICT_DENY, REQ0, "args.command is missing" },
	{ R("{'path':'args.n','op':'eq','value':1}"), "{'n':1.0}", ALLOWED },
	{ R("{'path':'args.o','op':'eq','value':{'a':[1,2]}}"),
	  "{'o':{'a':[1.0,2]}}", ALLOWED },
	{ R("{'path':'args.o','op':'eq','value':{'a':[1,2]}}"),
	  "{'o':{'a':[2,1]}}", CW_VERDICT_DENY, REQ0, NULL },
	{ D("{'path':'args.background','op':'eq','value':true}"),
	  "{'background':true}", CW_VERDICT_DENY, DIF0,
	  "args.background equals true" },
	{ D("{'path':'args.background','op':'eq','value':true}"),
	  "{'background':false}", ALLOWED },
	{ D("{'path':'args.background','op':'eq','value':true}"), "{}",
	  ALLOWED },
	{ D("{'path':'args.n','op':'eq','value':0}"), "{'n':'0'}", ALLOWED },
	{ R("{'path':'args.command','op':'neq','value':'rm'}"),
	  "{'command':'ls'}", ALLOWED },
	{ R("{'path':'args.command','op':'neq','value':'rm'}"),
	  "{'command':'rm'}", CW_VERDICT_DENY, REQ0,
	  "args.command equals \"rm\"" },
	{ D("{'path':'args.mode','op':'neq','value':'safe'}"),
	  "{'mode':'fast'}", CW_VERDICT_DENY, DIF0,
	  "args.mode does not equal \"safe\"" },
	{ D("{'path':'args.mode','op':'neq','value':'safe'}"), "{}", ALLOWED },

	/* in / not_in */
	{ R("{'path':'args.cwd','op':'in','value':['/tmp','/home/user']}"),
	  "{'cwd':'/tmp'}", ALLOWED },
	{ R("{'path':'args.cwd','op':'in','value':['/tmp','/home/user']}"),
	  "{'cwd':'/etc'}", CW_VERDICT_DENY, REQ0,
	  "args.cwd is not in [\"/tmp\",\"/home/user\"]" },
	{ R("{'path':'args.n','op':'in','value':[1,2,3]}"), "{'n':2.0}",
	  ALLOWED },
	{ R("{'path':'args.files','op':'in','value':['a','b','c']}"),
	  "{'files':['a','c']}", ALLOWED },
	{ R("{'path':'args.files','op':'in','value':['a','b','c']}"),
	  "{'files':['a','x','c']}", CW_VERDICT_DENY, REQ0,
	  "args.files element \"x\" is not in" },
	{ R("{'path':'args.files','op':'in','value':['a']}"),
	  "{'files':[]}", ALLOWED },
	{ R("{'path':'args.cwd','op':'in','value':['/tmp']}"),
	  "{'cwd':{'path':'/tmp'}}", CW_VERDICT_DENY, REQ0,
	  "args.cwd is an object but op \"in\" needs" },
	{ D("{'path':'args.cwd','op':'in','value':['/etc']}"),
	  "{'cwd':{'path':'/tmp'}}", CW_VERDICT_DENY, DIF0,
	  "is an object but op \"in\"" },
	{ D("{'path':'args.files','op':'in','value':['/etc']}"),
	  "{'files':['/etc',['/tmp']]}", CW_VERDICT_DENY, DIF0,
	  "args.files element [\"/tmp\"] is an array" },
	{ D("{'path':'args.cwd','op':'in','value':['/etc']}"), "{}",
	  ALLOWED },
	{ R("{'path':'args.cwd','op':'not_in','value':['/etc','/root']}"),
	  "{'cwd':'/tmp'}", ALLOWED },
	{ R("{'path':'args.cwd','op':'not_in','value':['/etc','/root']}"),
	  "{'cwd':'/root'}", CW_VERDICT_DENY, REQ0,
	  "args.cwd is in [\"/etc\",\"/root\"]" },
	{ R("{'path':'args.files','op':'not_in','value':['/etc']}"),
	  "{'files':['/tmp','/etc']}", CW_VERDICT_DENY, REQ0,
	  "args.files element \"/etc\" is in" },
	{ D("{'path':'args.files','op':'not_in','value':['ok']}"),
	  "{'files':['x','y']}", CW_VERDICT_DENY, DIF0,
	  "every element of args.files is not in" },
	{ D("{'path':'args.files','op':'not_in','value':['ok']}"),
	  "{'files':['x','ok']}", ALLOWED },

	/* lt / lte / gt / gte */
	{ R("{'path':'args.timeout','op':'lt','value':300}"),
	  "{'timeout':299}", ALLOWED },
	{ R("{'path':'args.timeout','op':'lt','value':300}"),
	  "{'timeout':300}", CW_VERDICT_DENY, REQ0,
	  "args.timeout (300) is not less than 300" },
	{ R("{'path':'args.timeout','op':'lt','value':2.5}"),
	  "{'timeout':2}", ALLOWED },
	{ R("{'path':'args.timeout','op':'lt','value':2}"),
	  "{'timeout':1.999}", ALLOWED },
	{ R("{'path':'args.timeout','op':'lte','value':300}"),
	  "{'timeout':300.0}", ALLOWED },
	{ R("{'path':'args.timeout','op':'lte','value':300}"),
	  "{'timeout':300.5}", CW_VERDICT_DENY, REQ0,
	  "is greater than 300" },
	{ R("{'path':'args.timeout','op':'gt','value':0}"),
	  "{'timeout':0.001}", ALLOWED },
	{ R("{'path':'args.timeout','op':'gt','value':0}"),
	  "{'timeout':-1}", CW_VERDICT_DENY, REQ0,
	  "args.timeout (-1) is not greater than 0" },
	{ R("{'path':'args.timeout','op':'gte','value':3}"),
	  "{'timeout':3.0}", ALLOWED },
	{ R("{'path':'args.timeout','op':'gte','value':3}"),
	  "{'timeout':2.9999}", CW_VERDICT_DENY, REQ0, "is less than 3" },
	{ R("{'path':'args.timeout','op':'lt','value':300}"),
	  "{'timeout':'5'}", CW_VERDICT_DENY, REQ0,
	  "args.timeout is a string but op \"lt\" needs a number" },
	{ D("{'path':'args.timeout','op':'gt','value':300}"),
	  "{'timeout':'900'}", CW_VERDICT_DENY, DIF0,
	  "args.timeout is a string but op \"gt\" needs a number" },
	{ D("{'path':'args.timeout','op':'gt','value':300}"),
	  "{'timeout':[900]}", CW_VERDICT_DENY, DIF0, "is an array" },
	{ D("{'path':'args.timeout','op':'gt','value':300}"),
	  "{'timeout':299}", ALLOWED },
	{ D("{'path':'args.timeout','op':'gt','value':300}"), "{}", ALLOWED },
	{ D("{'path':'args.n','op':'gt','value':9007199254740992}"),
	  "{'n':9007199254740993}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'args.n','op':'gte','value':9007199254740993}"),
	  "{'n':9007199254740992.0}", ALLOWED },

	/* regex / not_regex */
	{ R("{'path':'args.command','op':'regex','value':'^ls'}"),
	  "{'command':'ls -la'}", ALLOWED },
	{ R("{'path':'args.command','op':'regex','value':'^ls'}"),
	  "{'command':'cat x'}", CW_VERDICT_DENY, REQ0,
	  "args.command does not match regex \"^ls\"" },
	{ R("{'path':'args.command','op':'regex','value':'^ls'}"),
	  "{'command':12}", CW_VERDICT_DENY, REQ0,
	  "args.command is a number but op \"regex\" needs a string" },
	{ D("{'path':'args.command','op':'regex','value':'rm'}"),
	  "{'command':12}", CW_VERDICT_DENY, DIF0,
	  "args.command is a number but op \"regex\"" },
	{ D("{'path':'args.command','op':'regex','value':'rm'}"),
	  "{'command':'ls\\u0000rm'}", CW_VERDICT_DENY, DIF0,
	  "a string with a NUL byte" },
	{ D("{'path':'args.command','op':'regex','value':'(^|[ ;])rm '}"),
	  "{'command':'ls; rm x'}", CW_VERDICT_DENY, DIF0,
	  "args.command matches regex" },
	{ D("{'path':'args.command','op':'regex','value':'(^|[ ;])rm '}"),
	  "{'command':'ls -la'}", ALLOWED },
	{ R("{'path':'args.files','op':'regex','value':'^/tmp/'}"),
	  "{'files':['/tmp/a','/tmp/b']}", ALLOWED },
	{ R("{'path':'args.files','op':'regex','value':'^/tmp/'}"),
	  "{'files':['/tmp/a','/etc/b']}", CW_VERDICT_DENY, REQ0,
	  "args.files element \"/etc/b\" does not match regex" },
	{ R("{'path':'args.files','op':'regex','value':'^/tmp/'}"),
	  "{'files':['/tmp/a',7]}", CW_VERDICT_DENY, REQ0,
	  "args.files element 7 is a number" },
	{ R("{'path':'args.command','op':'not_regex','value':'sudo'}"),
	  "{'command':'ls'}", ALLOWED },
	{ R("{'path':'args.command','op':'not_regex','value':'sudo'}"),
	  "{'command':'sudo ls'}", CW_VERDICT_DENY, REQ0,
	  "args.command matches regex \"sudo\"" },
	{ D("{'path':'args.command','op':'not_regex','value':'^[a-z ]+$'}"),
	  "{'command':'ls; id'}", CW_VERDICT_DENY, DIF0,
	  "does not match regex" },
	{ D("{'path':'args.command','op':'not_regex','value':'^[a-z ]+$'}"),
	  "{'command':true}", CW_VERDICT_DENY, DIF0, "is a boolean" },

	/* contains */
	{ D("{'path':'args.command','op':'contains','value':'/etc/shadow'}"),
	  "{'command':'cat /etc/shadow'}", CW_VERDICT_DENY, DIF0,
	  "args.command contains \"/etc/shadow\"" },
	{ D("{'path':'args.command','op':'contains','value':'/etc/shadow'}"),
	  "{'command':'cat /etc/passwd'}", ALLOWED },
	{ D("{'path':'args.command','op':'contains','value':['mkfs','dd if']}"),
	  "{'command':'dd if=/dev/zero'}", CW_VERDICT_DENY, DIF0,
	  "contains one of [\"mkfs\",\"dd if\"]" },
	{ D("{'path':'args.command','op':'contains','value':['mkfs','dd if']}"),
	  "{'command':'ls'}", ALLOWED },
	{ D("{'path':'args.tags','op':'contains','value':'prod'}"),
	  "{'tags':['dev','prod']}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'args.tags','op':'contains','value':'prod'}"),
	  "{'tags':['dev','production']}", ALLOWED },
	{ D("{'path':'args.tags','op':'contains','value':['prod','stage']}"),
	  "{'tags':['stage']}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'args.ports','op':'contains','value':22}"),
	  "{'ports':[80,22.0]}", CW_VERDICT_DENY, DIF0, NULL },
	{ R("{'path':'args.command','op':'contains','value':'ls'}"),
	  "{'command':'cat'}", CW_VERDICT_DENY, REQ0,
	  "args.command does not contain \"ls\"" },
	{ R("{'path':'args.command','op':'contains','value':'ls'}"),
	  "{'command':{'x':1}}", CW_VERDICT_DENY, REQ0, "is an object" },
	{ D("{'path':'args.command','op':'contains','value':'ls'}"),
	  "{'command':5}", CW_VERDICT_DENY, DIF0, "is a number" },
	{ D("{'path':'args.command','op':'contains','value':5}"),
	  "{'command':'555'}", CW_VERDICT_DENY, DIF0,
	  "args.command is a string but op \"contains\" needs a list" },

	/* prefix */
	{ R("{'path':'args.cwd','op':'prefix','value':'/home/user'}"),
	  "{'cwd':'/home/user/src'}", ALLOWED },
	{ R("{'path':'args.cwd','op':'prefix','value':'/home/user'}"),
	  "{'cwd':'/home'}", CW_VERDICT_DENY, REQ0,
	  "args.cwd does not start with \"/home/user\"" },
	{ R("{'path':'args.cwd','op':'prefix','value':'/home/user'}"),
	  "{'cwd':['/home/user']}", CW_VERDICT_DENY, REQ0,
	  "args.cwd is an array but op \"prefix\" needs a string" },
	{ D("{'path':'args.cwd','op':'prefix','value':'/etc'}"),
	  "{'cwd':'/etc/ssh'}", CW_VERDICT_DENY, DIF0,
	  "args.cwd starts with \"/etc\"" },
	{ D("{'path':'args.cwd','op':'prefix','value':'/etc'}"),
	  "{'cwd':null}", CW_VERDICT_DENY, DIF0, "is null" },

	/* max_length */
	{ R("{'path':'args.command','op':'max_length','value':5}"),
	  "{'command':'12345'}", ALLOWED },
	{ R("{'path':'args.command','op':'max_length','value':5}"),
	  "{'command':'123456'}", CW_VERDICT_DENY, REQ0,
	  "args.command is 6 long, longer than 5" },
	{ R("{'path':'args.command','op':'max_length','value':5}"),
	  "{'command':'\xc3\xa9\xc3\xa9\xc3\xa9'}", CW_VERDICT_DENY, REQ0,
	  "is 6 long" },
	{ R("{'path':'args.files','op':'max_length','value':2}"),
	  "{'files':['a','b']}", ALLOWED },
	{ R("{'path':'args.files','op':'max_length','value':2}"),
	  "{'files':['a','b','c']}", CW_VERDICT_DENY, REQ0, "is 3 long" },
	{ R("{'path':'args.command','op':'max_length','value':5}"),
	  "{'command':12}", CW_VERDICT_DENY, REQ0, "is a number" },
	{ D("{'path':'args.command','op':'max_length','value':5}"),
	  "{'command':'ab'}", CW_VERDICT_DENY, DIF0, "is at most 5 long" },

	/* exists */
	{ R("{'path':'args.cwd','op':'exists','value':true}"),
	  "{'cwd':'/tmp'}", ALLOWED },
	{ R("{'path':'args.cwd','op':'exists','value':true}"),
	  "{'cwd':null}", ALLOWED },
	{ R("{'path':'args.cwd','op':'exists','value':true}"), "{}",
	  CW_VERDICT_DENY, REQ0, "args.cwd is absent" },
	{ R("{'path':'args.cwd','op':'exists'}"), "{}", CW_VERDICT_DENY,
	  REQ0, NULL },
	{ R("{'path':'args.cwd','op':'exists','value':false}"), "{}",
	  ALLOWED },
	{ D("{'path':'args.envs.LD_PRELOAD','op':'exists','value':true}"),
	  "{'envs':{'LD_PRELOAD':'/x.so'}}", CW_VERDICT_DENY, DIF0,
	  "args.envs.LD_PRELOAD is present" },
	{ D("{'path':'args.envs.LD_PRELOAD','op':'exists','value':true}"),
	  "{'envs':{}}", ALLOWED },
	{ D("{'path':'args.sandboxId','op':'exists','value':false}"), "{}",
	  CW_VERDICT_DENY, DIF0, "args.sandboxId is absent" },

	/* paths */
	{ D("{'path':'args.files.0','op':'prefix','value':'/etc'}"),
	  "{'files':['/etc/x','/tmp']}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'args.files.1','op':'prefix','value':'/etc'}"),
	  "{'files':['/etc/x','/tmp']}", ALLOWED },
	{ D("{'path':'args.files.5','op':'prefix','value':'/etc'}"),
	  "{'files':['/etc/x']}", ALLOWED },
	{ R("{'path':'args.files.5','op':'exists','value':false}"),
	  "{'files':['/etc/x']}", ALLOWED },
	{ R("{'path':'args.a.b.c','op':'eq','value':1}"),
	  "{'a':{'b':{'c':1}}}", ALLOWED },
	{ R("{'path':'args.a.b.c','op':'eq','value':1}"), "{'a':'b'}",
	  CW_VERDICT_DENY, REQ0, "args.a.b.c is missing" },
	{ R("{'path':'args.a.0','op':'eq','value':1}"), "{'a':{'0':1}}",
	  ALLOWED },
	{ R("{'path':'args.a.x','op':'exists','value':false}"),
	  "{'a':[1,2]}", ALLOWED },

	/* reasons written in the policy */
	{ R("{'path':'args.command','op':'regex','value':'^ls','reason':'only ls'}"),
	  "{'command':'cat'}", CW_VERDICT_DENY, REQ0, "only ls" },
	{ R("{'path':'args.command','op':'regex','value':'^ls','reason':'only ls'}"),
	  "{'command':1}", CW_VERDICT_DENY, REQ0,
	  "only ls; args.command is a number but op \"regex\" needs a string" },

	/* command.programs / command.opaque */
	{ D("{'path':'command.programs','op':'contains','value':'rm'}"),
	  "{'command':'l\\\\s; /bin/rm -rf /'}", CW_VERDICT_DENY, DIF0,
	  "command.programs contains \"rm\"" },
	{ D("{'path':'command.programs','op':'contains','value':'rm'}"),
	  "{'command':'ls -la'}", ALLOWED },
	{ D("{'path':'command.opaque','op':'eq','value':true}"),
	  "{'command':'eval $x'}", CW_VERDICT_DENY, DIF0,
	  "command.opaque equals true" },
	{ D("{'path':'command.opaque','op':'eq','value':true}"),
	  "{'command':'ls -la'}", ALLOWED },
	{ D("{'path':'command.opaque','op':'eq','value':true}"), "{}",
	  CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'command.opaque','op':'eq','value':true}"),
	  "{'command':['ls']}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'command.programs','op':'contains','value':['rm','dd']}"),
	  "{'command':'sudo rm y'}", CW_VERDICT_DENY, DIF0,
	  "command.programs contains one of [\"rm\",\"dd\"]" },
	{ D("{'path':'command.programs','op':'contains','value':'rm'}"),
	  "{'command':'echo $(rm -rf /)'}", CW_VERDICT_DENY, DIF0, NULL },
	{ D("{'path':'command.opaque','op':'eq','value':true}"),
	  "{'command':'bash -c \\\"rm x\\\"'}", CW_VERDICT_DENY, DIF0,
	  NULL },
	{ D("{'path':'command.opaque','op':'eq','value':true}"),
	  "{'command':'$X y'}", CW_VERDICT_DENY, DIF0, NULL },
	{ R("{'path':'command.programs','op':'in','value':['ls','cat']}"),
	  "{'command':'ls | cat'}", ALLOWED },
	{ R("{'path':'command.programs','op':'in','value':['ls','cat']}"),
	  "{'command':'ls; rm x'}", CW_VERDICT_DENY, REQ0,
	  "command.programs element \"rm\" is not in [\"ls\",\"cat\"]" },
	{ R("{'path':'command.programs','op':'max_length','value':0}"),
	  NULL, ALLOWED },
	{ R("{'path':'command.programs','op':'not_regex','value':'^(rm|dd)$'}"),
	  "{'command':'ls; dd if=x'}", CW_VERDICT_DENY, REQ0,
	  "command.programs element \"dd\" matches regex" },

	/* precedence */
	{ "{'action':'deny','require':[{'path':'args.x','op':'exists'}]}",
	  "{}", CW_VERDICT_DENY, "tools.run_command.action",
	  "tool \"run_command\" is denied by the policy" },
	{ "{'action':'deny','reason':'no shell here'}", "{'command':'ls'}",
	  CW_VERDICT_DENY, "tools.run_command.action", "no shell here" },
	{ "{'require':[{'path':'args.a','op':'exists'}],"
	  "'deny_if':[{'path':'args.b','op':'exists','value':false}]}",
	  "{}", CW_VERDICT_DENY, REQ0, NULL },
	{ "{'require':[{'path':'args.a','op':'exists'},"
	  "{'path':'args.b','op':'exists'}]}",
	  "{'a':1}", CW_VERDICT_DENY, "tools.run_command.require[1]",
	  "args.b is absent" },
	{ "{'deny_if':[{'path':'args.a','op':'exists'},"
	  "{'path':'args.b','op':'exists'}]}",
	  "{'b':1}", CW_VERDICT_DENY, "tools.run_command.deny_if[1]", NULL },
	{ "{'action':'require_approval'}", "{}", CW_VERDICT_APPROVAL,
	  "tools.run_command", "requires approval" },
	{ "{'action':'require_approval','reason':'ask a person'}", "{}",
	  CW_VERDICT_APPROVAL, "tools.run_command", "ask a person" },
	{ "{'action':'require_approval',"
	  "'deny_if':[{'path':'args.x','op':'exists'}]}",
	  "{'x':1}", CW_VERDICT_DENY, DIF0, NULL },
	{ "{}", NULL, CW_VERDICT_ALLOW, "tools.run_command",
	  "allowed by tools.run_command" },
};

static void test_condition_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < CW_ARRAY_SIZE(cases); i++) {
		const struct dcase *c = &cases[i];
		struct cw_policy *p = rc_policy(c->rule);
		json_t *args = args_of(c->args);
		struct cw_call call = { "run_command", args, "local", "" };
		struct cw_verdict v;
		int err;

		err = cw_decide(p, &call, NULL, 1000, &v);
		json_decref(args);
		cw_policy_free(p);
		if (err || c->kind != v.kind || strcmp(c->rule_path, v.rule) ||
		    (c->reason && !strstr(v.reason, c->reason)))
			fail_msg("case %zu: rule %s args %s\n"
				 "  want %s %s \"%s\"\n  got  %s %s \"%s\" (err %d)",
				 i, c->rule, c->args ? c->args : "NULL",
				 cw_verdict_name(c->kind), c->rule_path,
				 c->reason ? c->reason : "*",
				 cw_verdict_name(v.kind), v.rule, v.reason,
				 err);
	}
}

/* ---- precedence, defaults, hide -------------------------------------- */

static void decide_tool(const char *policy_text, const char *tool,
			const char *args_text, struct cw_verdict *v)
{
	struct cw_policy *p = policy(policy_text);
	json_t *args = args_of(args_text);
	struct cw_call call = { tool, args, "local", "" };

	assert_int_equal(0, cw_decide(p, &call, NULL, 0, v));
	json_decref(args);
	cw_policy_free(p);
}

static void test_hide_wins(void **state)
{
	struct cw_verdict v;

	(void)state;
	decide_tool("{'version':'1','default':'allow','hide':['run_command'],"
		    "'tools':{'run_command':{}}}",
		    "run_command", "{'command':'ls'}", &v);
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_string_equal("hide", v.rule);
	assert_string_equal("tool \"run_command\" is hidden by the policy",
			    v.reason);

	decide_tool("{'version':'1','default':'allow','hide':['*'],"
		    "'tools':{'read':{}}}",
		    "read", NULL, &v);
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_string_equal("hide", v.rule);

	decide_tool("{'version':'1','default':'allow','hide':['other']}",
		    "read", NULL, &v);
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
}

static void test_default_action(void **state)
{
	struct cw_verdict v;

	(void)state;
	decide_tool("{'version':'1','default':'deny','tools':{'a':{}}}",
		    "x", NULL, &v);
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_string_equal("default", v.rule);
	assert_string_equal(
		"tool \"x\" is not listed in the policy and the default is deny",
		v.reason);

	decide_tool("{'version':'1','default':'allow','tools':{'a':{'action':'deny'}}}",
		    "x", NULL, &v);
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
	assert_string_equal("default", v.rule);
	assert_int_equal(0, v.nlimits);

	decide_tool("{'version':'1','default':'allow','tools':{'a':{'action':'deny'}}}",
		    "a", NULL, &v);
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_string_equal("tools.a.action", v.rule);

	/* a tool name with control characters is escaped in the reason */
	decide_tool("{'version':'1','default':'deny'}", "a\nb\"", NULL, &v);
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_non_null(strstr(v.reason, "\"a\\x0ab\\\"\""));
}

static void test_bad_input(void **state)
{
	struct cw_policy *p = rc_policy("{}");
	json_t *arr = json_array();
	struct cw_call call = { "run_command", arr, "local", "" };
	struct cw_verdict v;

	(void)state;
	assert_int_equal(-EINVAL, cw_decide(p, &call, NULL, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	call.args = NULL;
	call.tool = NULL;
	assert_int_equal(-EINVAL, cw_decide(p, &call, NULL, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	call.tool = "run_command";
	assert_int_equal(-EINVAL, cw_decide(NULL, &call, NULL, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	json_decref(arr);
	cw_policy_free(p);
}

/* ---- limits ----------------------------------------------------------- */

static const char limits_policy[] =
	"{'version':'1','default':'allow',"
	"'all_tools':{'limits':["
	"{'counter':'all','window':'hour','max':100,'scope':'global'},"
	"{'counter':'shared','window':'minute','max':50}]},"
	"'tools':{'run_command':{'limits':["
	"{'counter':'run_command_rate','window':'minute','max':10,'scope':'grant'},"
	"{'counter':'shared','window':'day','max':500,'scope':'grant'},"
	"{'counter':'burst','window':5,'max':3,'scope':'session'}]},"
	"'ask':{'action':'require_approval','limits':["
	"{'counter':'asks','window':'second','max':1}]},"
	"'guarded':{'require':[{'path':'args.ok','op':'eq','value':true}],"
	"'limits':[{'counter':'g','window':'minute','max':1}]}}}";

static void test_limits_listed(void **state)
{
	struct cw_policy *p = policy(limits_policy);
	struct cw_call call = { "run_command", NULL, "tok-a", "sess-1" };
	struct cw_verdict v;

	(void)state;
	assert_int_equal(0, cw_decide(p, &call, NULL, 5, &v));
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
	assert_string_equal("tools.run_command", v.rule);
	assert_int_equal(5, v.nlimits);
	/* all_tools first, then the rule's, in order */
	assert_string_equal("all|global|*", v.limits[0].key);
	assert_string_equal("shared|grant|tok-a", v.limits[1].key);
	assert_string_equal("run_command_rate|grant|tok-a", v.limits[2].key);
	assert_string_equal("shared|grant|tok-a", v.limits[3].key);
	assert_string_equal("burst|session|sess-1", v.limits[4].key);
	assert_ptr_equal(&p->all_limits[0], v.limits[0].limit);
	assert_string_equal("tools.run_command.limits[2]",
			    v.limits[4].limit->where);
	/* a shared counter name gives one key for both limits */
	assert_string_equal(v.limits[1].key, v.limits[3].key);
	assert_int_equal(60, v.limits[1].limit->window_s);
	assert_int_equal(86400, v.limits[3].limit->window_s);

	/* unlisted tool under default allow: all_tools limits only */
	call.tool = "other";
	assert_int_equal(0, cw_decide(p, &call, NULL, 5, &v));
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
	assert_string_equal("default", v.rule);
	assert_int_equal(2, v.nlimits);
	assert_string_equal("all|global|*", v.limits[0].key);

	/* approval still lists its limits */
	call.tool = "ask";
	assert_int_equal(0, cw_decide(p, &call, NULL, 5, &v));
	assert_int_equal(CW_VERDICT_APPROVAL, v.kind);
	assert_int_equal(3, v.nlimits);
	assert_string_equal("asks|grant|tok-a", v.limits[2].key);
	cw_policy_free(p);
}

static void test_limit_keys(void **state)
{
	struct cw_limit l = { .counter = "c", .window_s = 60, .max = 1 };
	struct cw_call call = { "t", NULL, "tok|x", "s-9" };
	char buf[384], small[8];

	(void)state;
	l.scope = CW_SCOPE_GRANT;
	cw_limit_key(&l, &call, buf, sizeof(buf));
	assert_string_equal("c|grant|tok|x", buf);
	l.scope = CW_SCOPE_SESSION;
	cw_limit_key(&l, &call, buf, sizeof(buf));
	assert_string_equal("c|session|s-9", buf);
	l.scope = CW_SCOPE_GLOBAL;
	cw_limit_key(&l, &call, buf, sizeof(buf));
	assert_string_equal("c|global|*", buf);
	call.grant = NULL;
	call.session = NULL;
	l.scope = CW_SCOPE_GRANT;
	cw_limit_key(&l, &call, buf, sizeof(buf));
	assert_string_equal("c|grant|", buf);
	l.scope = CW_SCOPE_SESSION;
	cw_limit_key(&l, &call, buf, sizeof(buf));
	assert_string_equal("c|session|", buf);
	call.grant = "a-long-grant-name";
	l.scope = CW_SCOPE_GRANT;
	cw_limit_key(&l, &call, small, sizeof(small));
	assert_string_equal("c|grant", small);
}

static void test_rate_limited(void **state)
{
	struct cw_policy *p = policy(limits_policy);
	struct fake f = { .n = 2 };
	struct cw_counter_view view = view_of(&f);
	struct cw_call call = { "run_command", NULL, "tok-a", "sess-1" };
	struct cw_verdict v;

	(void)state;
	f.e[0] = (struct fake_entry){ "run_command_rate|grant|tok-a", 9, 0 };
	f.e[1] = (struct fake_entry){ "burst|session|sess-1", 2, 0 };
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
	assert_int_equal(5, f.calls);
	assert_int_equal(777, f.last_now_us);
	assert_int_equal(5000000, f.last_window_us);
	assert_int_equal(3, f.last_max);
	assert_string_equal("burst|session|sess-1", f.last_key);

	f.calls = 0;
	f.e[0] = (struct fake_entry){ "run_command_rate|grant|tok-a", 10,
				      12300000 };
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_string_equal("tools.run_command.limits[0]", v.rule);
	assert_string_equal(
		"rate limit \"run_command_rate\" (10 per 60s, scope grant) reached; retry after 12.3s",
		v.reason);
	assert_int_equal(12300000, v.retry_after_us);
	assert_int_equal(5, v.nlimits);
	assert_int_equal(5, f.calls);
	/* the view was only read */
	assert_int_equal(10, f.e[0].count);
	assert_int_equal(2, f.e[1].count);

	/* two refusing limits: the longest wait decides */
	f.e[1] = (struct fake_entry){ "burst|session|sess-1", 3, 4000001 };
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_int_equal(12300000, v.retry_after_us);
	assert_string_equal("tools.run_command.limits[0]", v.rule);
	f.e[1].retry_us = 20000000;
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(20000000, v.retry_after_us);
	assert_string_equal("tools.run_command.limits[2]", v.rule);
	assert_non_null(strstr(v.reason, "\"burst\" (3 per 5s, scope session)"));
	assert_non_null(strstr(v.reason, "retry after 20.0s"));

	/* retry rounds up to the next tenth */
	f.e[0].count = 0;
	f.e[1].retry_us = 1;
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_non_null(strstr(v.reason, "retry after 0.1s"));

	/* all_tools limits apply to every tool */
	f.e[1] = (struct fake_entry){ "all|global|*", 100, 5000000 };
	call.tool = "other";
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_string_equal("all_tools.limits[0]", v.rule);

	/* rate limits come before approval */
	call.tool = "ask";
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	f.n = 0;
	assert_int_equal(0, cw_decide(p, &call, &view, 777, &v));
	assert_int_equal(CW_VERDICT_APPROVAL, v.kind);
	cw_policy_free(p);
}

static void test_conditions_before_limits(void **state)
{
	struct cw_policy *p = policy(limits_policy);
	struct fake f = { .n = 1 };
	struct cw_counter_view view = view_of(&f);
	json_t *args = args_of("{'ok':false}");
	struct cw_call call = { "guarded", args, "tok-a", "" };
	struct cw_verdict v;

	(void)state;
	f.e[0] = (struct fake_entry){ "g|grant|tok-a", 1, 1000000 };
	assert_int_equal(0, cw_decide(p, &call, &view, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_string_equal("tools.guarded.require[0]", v.rule);
	assert_int_equal(0, f.calls);
	json_decref(args);
	args = args_of("{'ok':true}");
	call.args = args;
	assert_int_equal(0, cw_decide(p, &call, &view, 0, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_string_equal("tools.guarded.limits[0]", v.rule);
	json_decref(args);
	cw_policy_free(p);
}

static void test_zero_max_and_view_errors(void **state)
{
	struct cw_policy *p = rc_policy(
		"{'limits':[{'counter':'never','window':60,'max':0}]}");
	struct fake f = { 0 };
	struct cw_counter_view view = view_of(&f);
	struct cw_call call = { "run_command", NULL, "g", "" };
	struct cw_verdict v;

	(void)state;
	assert_int_equal(0, cw_decide(p, &call, &view, 0, &v));
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_non_null(strstr(v.reason, "allows no calls"));
	/* without a view limits are listed, not checked */
	assert_int_equal(0, cw_decide(p, &call, NULL, 0, &v));
	assert_int_equal(CW_VERDICT_ALLOW, v.kind);
	assert_int_equal(1, v.nlimits);
	f.fail = -EIO;
	assert_int_equal(-EIO, cw_decide(p, &call, &view, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_non_null(strstr(v.reason, "internal error"));
	cw_policy_free(p);
}

static void test_pure(void **state)
{
	struct cw_policy *p = rc_policy(
		"{'deny_if':[{'path':'command.programs','op':'contains','value':'rm'}],"
		"'limits':[{'counter':'c','window':'minute','max':10}]}");
	json_t *args = args_of("{'command':'ls; cat x'}");
	char *before = json_dumps(args, JSON_SORT_KEYS);
	struct fake f = { .n = 1 };
	struct cw_counter_view view = view_of(&f);
	struct cw_call call = { "run_command", args, "g", "" };
	struct cw_verdict v1, v2;
	char *after;

	(void)state;
	f.e[0] = (struct fake_entry){ "c|grant|g", 4, 0 };
	assert_int_equal(0, cw_decide(p, &call, &view, 42, &v1));
	assert_int_equal(0, cw_decide(p, &call, &view, 42, &v2));
	assert_int_equal(CW_VERDICT_ALLOW, v1.kind);
	/* the same verdict: header and every limit in use */
	assert_int_equal(v1.kind, v2.kind);
	assert_string_equal(v1.reason, v2.reason);
	assert_string_equal(v1.rule, v2.rule);
	assert_int_equal(v1.retry_after_us, v2.retry_after_us);
	assert_int_equal(1, v1.nlimits);
	assert_int_equal(v1.nlimits, v2.nlimits);
	assert_ptr_equal(v1.limits[0].limit, v2.limits[0].limit);
	assert_string_equal(v1.limits[0].key, v2.limits[0].key);
	assert_int_equal(2, f.calls);
	assert_int_equal(4, f.e[0].count);
	after = json_dumps(args, JSON_SORT_KEYS);
	assert_string_equal(before, after);
	assert_int_equal(1, args->refcount);
	free(before);
	free(after);
	json_decref(args);
	cw_policy_free(p);
}

/* Reasons are cut to fit, but always stay valid UTF-8. */
static void test_reasons_utf8(void **state)
{
	char text[4096], tool[400];
	struct cw_verdict v;
	struct cw_policy *p;
	struct cw_call call = { "run_command", NULL, "g", "" };
	json_t *s;
	size_t o, i;

	(void)state;
	o = (size_t)snprintf(text, sizeof(text),
			     "{'version':'1','default':'deny','tools':{"
			     "'run_command':{'action':'deny','reason':'xy");
	for (i = 0; i < 700; i++)	/* 3-byte characters, 2100 bytes */
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "\xe2\x82\xac");
	snprintf(text + o, sizeof(text) - o, "'}}}");
	p = policy(text);
	assert_int_equal(0, cw_decide(p, &call, NULL, 0, &v));
	assert_int_equal(CW_VERDICT_DENY, v.kind);
	assert_true(strlen(v.reason) > 400);
	s = json_string(v.reason);
	assert_non_null(s);
	json_decref(s);

	for (o = 0; o + 2 < sizeof(tool) - 1; o += 2)
		memcpy(tool + o, "\xc3\xa9", 2);
	tool[o] = '\0';
	call.tool = tool;
	assert_int_equal(0, cw_decide(p, &call, NULL, 0, &v));
	assert_string_equal("default", v.rule);
	assert_non_null(strstr(v.reason, "...\" is not listed"));
	s = json_string(v.reason);
	assert_non_null(s);
	json_decref(s);
	cw_policy_free(p);
}

/* Clearing and copying a verdict touch its header and the limits in use. */
static void test_verdict_copy(void **state)
{
	static struct cw_verdict a, b;
	static const struct cw_limit l;

	(void)state;
	memset(&a, 0x5a, sizeof(a));
	cw_verdict_clear(&a);
	assert_int_equal(0, a.kind);
	assert_string_equal("", a.reason);
	assert_string_equal("", a.rule);
	assert_int_equal(0, a.retry_after_us);
	assert_int_equal(0, a.nlimits);
	a.kind = CW_VERDICT_ALLOW;
	snprintf(a.reason, sizeof(a.reason), "why");
	snprintf(a.rule, sizeof(a.rule), "tools.run_command");
	a.retry_after_us = 7;
	a.nlimits = 2;
	a.limits[0].limit = &l;
	snprintf(a.limits[0].key, sizeof(a.limits[0].key), "k0");
	snprintf(a.limits[1].key, sizeof(a.limits[1].key), "k1");
	memset(&b, 0, sizeof(b));
	cw_verdict_copy(&b, &a);
	assert_int_equal(CW_VERDICT_ALLOW, b.kind);
	assert_string_equal("why", b.reason);
	assert_string_equal("tools.run_command", b.rule);
	assert_int_equal(7, b.retry_after_us);
	assert_int_equal(2, b.nlimits);
	assert_ptr_equal(&l, b.limits[0].limit);
	assert_string_equal("k0", b.limits[0].key);
	assert_string_equal("k1", b.limits[1].key);
	/* the entries past nlimits are not copied */
	assert_int_equal(0, b.limits[2].key[0]);
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal("allow", cw_verdict_name(CW_VERDICT_ALLOW));
	assert_string_equal("deny", cw_verdict_name(CW_VERDICT_DENY));
	assert_string_equal("approval", cw_verdict_name(CW_VERDICT_APPROVAL));
	assert_string_equal("rate_limited",
			    cw_verdict_name(CW_VERDICT_RATE_LIMITED));
}

/* The engine's reservation that loses the race for the last slot words its
 * denial through the same function as the decision: the counter quoted and
 * escaped, the wait rounded up to tenths. */
static void test_rate_limited_text(void **state)
{
	struct cw_limit l = { .counter = "a\"b", .window_s = 60, .max = 3,
			      .scope = CW_SCOPE_SESSION,
			      .where = "all_tools.limits[1]" };
	struct cw_verdict v = { 0 };

	(void)state;
	cw_verdict_rate_limited(&v, &l, 1200001);
	assert_int_equal(CW_VERDICT_RATE_LIMITED, v.kind);
	assert_int_equal(1200001, v.retry_after_us);
	assert_string_equal("all_tools.limits[1]", v.rule);
	assert_string_equal("rate limit \"a\\\"b\" (3 per 60s, scope session) reached; retry after 1.3s",
			    v.reason);
	l.max = 0;
	cw_verdict_rate_limited(&v, &l, 0);
	assert_string_equal("rate limit \"a\\\"b\" (0 per 60s, scope session) allows no calls",
			    v.reason);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_condition_table),
		cmocka_unit_test(test_hide_wins),
		cmocka_unit_test(test_default_action),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_limits_listed),
		cmocka_unit_test(test_limit_keys),
		cmocka_unit_test(test_rate_limited),
		cmocka_unit_test(test_conditions_before_limits),
		cmocka_unit_test(test_zero_max_and_view_errors),
		cmocka_unit_test(test_pure),
		cmocka_unit_test(test_reasons_utf8),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_verdict_copy),
		cmocka_unit_test(test_rate_limited_text),
	};
	return cmocka_run_group_tests_name("decide", tests, NULL, NULL);
}
