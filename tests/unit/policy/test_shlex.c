// SPDX-License-Identifier: Apache-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "policy/shlex.h"
#include "lib/util.h"

#define MAXP 8

struct tcase {
	const char *in;
	const char *progs[MAXP];	/* expected, NULL-terminated */
	bool opaque;
};

#define P(...) { __VA_ARGS__ }
#define NONE { NULL }

static const struct tcase cases[] = {
	/* plain commands, paths, empty input */
	{ "ls -la", P("ls"), false },
	{ "", NONE, false },
	{ "   \t  \n\n", NONE, false },
	{ "# only a comment", NONE, false },
	{ "a=1 b=2", NONE, false },
	{ "x=1", NONE, false },
	{ "/bin/rm -rf /", P("rm"), false },
	{ "./configure --prefix=/usr", P("configure"), false },
	{ "~/bin/tool x", P("tool"), false },
	{ "''", NONE, false },
	{ "ls; ls; ls -l", P("ls"), false },
	{ "ls\r\nrm -rf /\r\n", P("ls\r", "rm"), false },

	/* quoting */
	{ "l\\s", P("ls"), false },
	{ "\"r\"m", P("rm"), false },
	{ "'r''m'", P("rm"), false },
	{ "'r'\"m\" -rf /", P("rm"), false },
	{ "\"/usr/bin/r\"m", P("rm"), false },
	{ "r\"\"m -rf /", P("rm"), false },
	{ "\\rm x", P("rm"), false },
	{ "r\\\nm", P("rm"), false },
	{ "$'\\x72\\x6d' x", P("rm"), false },
	{ "$'\\162\\155'", P("rm"), false },
	{ "$'r\\u006d'", P("rm"), false },
	{ "$'\\U00000072m' x", P("rm"), false },
	{ "$'r\\u00e9'", NONE, true },
	{ "$'r\\u0000m'", NONE, true },
	{ "$'p\\x{39'", P("p9"), false },
	{ "$'p\\c?'", P("p\x7f"), false },
	{ "p[5] x", NONE, true },
	{ "$'r\\0m'", NONE, true },
	{ "$\"rm\" x", NONE, true },
	{ "echo $'it\\'s'; id", P("echo", "id"), false },
	{ "echo \"a\\\"b\" 'c\\'; id", P("echo", "id"), false },
	{ "echo 'a'\"b\"$'c'; rm", P("echo", "rm"), false },
	{ "echo \"$(id)\"", P("echo", "id"), false },
	{ "echo 'unterminated", P("echo"), true },
	{ "echo \"unterminated", P("echo"), true },
	{ "echo $'unterminated", P("echo"), true },
	{ "echo a\\;rm", P("echo"), false },
	{ "echo a#b; id", P("echo", "id"), false },
	{ "echo a #; rm x", P("echo"), false },
	{ "echo a # b \\\nrm c", P("echo", "rm"), false },
	{ "echo $'\\n' | cat", P("echo", "cat"), false },

	/* lists and pipelines */
	{ "a; b & c && d || e | f |& g", P("a", "b", "c", "d", "e", "f", "g"),
	  false },
	{ "a\nb\n\nc", P("a", "b", "c"), false },
	{ "a &&\n b", P("a", "b"), false },
	{ "a |\n b", P("a", "b"), false },
	{ "true \\\n; rm x", P("true", "rm"), false },
	{ "ls;;", P("ls"), true },
	{ "&& ls", P("ls"), true },
	{ "fi", NONE, true },
	{ "echo a &\\\n& rm b", P("echo", "rm"), true },

	/* grouping */
	{ "(cd /tmp && rm x)", P("cd", "rm"), false },
	{ "{ ls; rm x; }", P("ls", "rm"), false },
	{ "{ echo a; } > f", P("echo"), false },
	{ "{ echo a", P("echo"), true },
	{ "(ls", P("ls"), true },
	{ "echo } {", P("echo"), false },

	/* substitutions */
	{ "echo $(rm -rf /)", P("echo", "rm"), false },
	{ "echo `rm -rf /`", P("echo", "rm"), false },
	{ "echo $(echo $(rm x))", P("echo", "rm"), false },
	{ "echo `echo \\`rm x\\``", P("echo", "rm"), false },
	{ "echo \"`id`\"", P("echo", "id"), false },
	{ "echo $(echo \"$(rm x)\")", P("echo", "rm"), false },
	{ "cat <(ls) >(wc -l)", P("cat", "ls", "wc"), false },
	{ "diff <(sort a) <(sort b)", P("diff", "sort"), false },
	{ "echo hi > >(rm)", P("echo", "rm"), false },
	{ "echo $((1 + 2))", P("echo"), false },
	{ "echo $(( $(rm x) ))", P("echo", "rm"), true },
	{ "echo $((echo a); (rm b))", P("echo", "rm"), false },
	{ "((echo a); (rm b))", P("echo", "rm"), false },
	{ "(( 1 + 2 ))", NONE, false },
	{ "echo $[1 + 2]", P("echo"), false },
	{ "echo $(", P("echo"), true },
	{ "echo `id", P("echo", "id"), true },
	{ "echo $(case x in x) rm;; esac)", P("echo", "rm"), false },
	{ "echo $(echo a #); id\n)", P("echo"), false },
	{ "echo `# c` ; rm", P("echo", "rm"), false },
	{ "echo ${x:-$(rm)}", P("echo", "rm"), false },
	{ "echo \"${x:-`rm`}\"", P("echo", "rm"), false },
	{ ": ${x:=$(id)}", P(":", "id"), false },
	{ "echo >$(rm) <<<$(id)", P("echo", "rm", "id"), false },
	{ "a=$(id) ls", P("id", "ls"), false },
	{ "a=(1 $(rm) 3)", P("rm"), false },
	{ "a=(1 2) b+=3 ls", P("ls"), false },
	{ "x=`rm`", P("rm"), false },
	{ "echo $(< file)", P("echo"), false },
	{ "echo ${x", P("echo"), true },

	/* compound commands */
	{ "if a; then b; elif c; then d; else e; fi",
	  P("a", "b", "c", "d", "e"), false },
	{ "if a; then b", P("a", "b"), true },
	{ "if", NONE, true },
	{ "while read l; do rm \"$l\"; done < f", P("read", "rm"), false },
	{ "until false; do sleep 1; done", P("false", "sleep"), false },
	{ "for f in *.c; do gcc -c \"$f\"; done", P("gcc"), false },
	{ "for f in a b\ndo rm $f\ndone", P("rm"), false },
	{ "for ((i = 0; i < 3; i++)); do echo $i; done", P("echo"), false },
	{ "for x; do id; done", P("id"), false },
	{ "for x in a; { rm; }", P("rm"), false },
	{ "for x in $(ls); do rm $x; done", P("ls", "rm"), false },
	{ "select x in a b; do rm $x; break; done", P("rm", "break"), false },
	{ "case $1 in a|b) rm x;; (c) ls;& d) id;;& *) pwd;; esac",
	  P("rm", "ls", "id", "pwd"), false },
	{ "case x in rm) echo;; esac", P("echo"), false },
	{ "case x in\n# c\nx) id ;;\nesac", P("id"), false },
	{ "case $(whoami) in root) id;; esac", P("whoami", "id"), false },
	{ "case x in $(rm)) id;; esac", P("rm", "id"), false },
	{ "case x in x) id", P("id"), true },
	{ "f() { rm \"$@\"; }; f", P("rm", "f"), true },
	{ "function f { rm; }", P("rm"), true },
	{ "function g() ( id )", P("id"), true },
	{ "! rm x", P("rm"), false },
	{ "time -p ls | grep x", P("time", "ls", "grep"), false },
	{ "time ls", P("time", "ls"), false },
	{ "coproc cat", P("cat"), false },
	{ "coproc N { rm x; }", P("rm"), false },
	{ "[[ -f x && $(id) == y ]]", P("[[", "id"), false },
	{ "[[ x =~ ^(a|b)$ ]] && ls", P("[[", "ls"), false },
	{ "[ -f x ] && test -d y", P("[", "test"), false },
	{ "true && false || :", P("true", "false", ":"), false },
	{ "echo done; echo fi", P("echo"), false },
	{ "x=1 if true; then rm; fi", P("if", "rm"), true },

	/* assignments and redirections */
	{ "VAR=x cmd arg", P("cmd"), false },
	{ "A=1 B=2 env", P("env"), false },
	{ "ls >f 2>&1 </dev/null", P("ls"), false },
	{ ">f", NONE, false },
	{ "2>/dev/null rm x", P("rm"), false },
	{ "exec 3>&1 {fd}>/dev/null", P("exec"), false },
	{ "ls &>/dev/null; id &>>log", P("ls", "id"), false },
	{ "ls >", P("ls"), true },
	{ "cat <<EOF\nrm -rf /\nEOF\nls", P("cat", "ls"), false },
	{ "cat <<-EOF\n\trm -rf /\n\tEOF\nls", P("cat", "ls"), false },
	{ "cat <<'EOF'\n$(rm x)\nEOF\npwd", P("cat", "pwd"), false },
	{ "cat <<EOF\n$(rm x)\nEOF", P("cat", "rm"), false },
	{ "cat <<E\"O\"F\n$(rm x)\nEOF\nid", P("cat", "id"), false },
	{ "cat <<EOF <<END\na\nEOF\nrm\nEND\nid", P("cat", "id"), false },
	{ "cat <<EOF\nabc\nEO\\\nF\nrm -rf /\nEOF", P("cat", "rm", "EOF"),
	  false },
	{ "cat <<EOF\nabc\\\\\nEOF\nid", P("cat", "id"), false },
	{ "cat <<'EOF'\nEO\\\nF\nrm\nEOF\nid", P("cat", "id"), false },
	{ "cat <<EOF\nrm", P("cat"), false },
	{ "cat <<'EOF'\nEOF\nrm x", P("cat", "rm"), false },
	{ "cat <<EOF\n EOF\nrm\nEOF\nid", P("cat", "id"), false },
	{ "cat <<-EOF\n  EOF\nrm\nEOF", P("cat"), false },
	{ "cat <<\"\"\nrm\n\nid", P("cat", "id"), false },
	{ "cat <<<\"$(whoami)\"", P("cat", "whoami"), false },
	{ "cat <<EOF; echo $(echo X\nbody\nEOF\n)",
	  P("cat", "echo", "body", "EOF"), false },
	{ "echo $(cat <<EOF)\nbody\nEOF\n", P("echo", "cat", "body", "EOF"),
	  true },
	{ "if true; then cat <<EOF; fi\nrm\nEOF\nid", P("true", "cat", "id"),
	  false },
	{ "(cat <<EOF)\nrm\nEOF\nid", P("cat", "id"), false },
	{ "cat <<$X\nrm\n$X\nid", P("cat", "id"), true },

	/* wrappers */
	{ "sudo rm y", P("sudo", "rm"), false },
	{ "sudo -u root -g wheel -- rm x", P("sudo", "rm"), false },
	{ "sudo -E -H FOO=1 rm x", P("sudo", "rm"), false },
	{ "sudo --user=root rm x", P("sudo", "rm"), false },
	{ "sudo -uroot -p pw -C 3 -D /tmp rm", P("sudo", "rm"), false },
	{ "sudo -s rm", P("sudo"), true },
	{ "sudo -Z rm", P("sudo"), true },
	{ "sudo env X=1 nice -n 5 rm f", P("sudo", "env", "nice", "rm"),
	  false },
	{ "doas -u root rm x", P("doas", "rm"), false },
	{ "env -i -u HOME -C /tmp PATH=/bin ls", P("env", "ls"), false },
	{ "env - ls", P("env", "ls"), false },
	{ "env -S 'rm x'", P("env"), true },
	{ "env --split-string='rm x'", P("env"), true },
	{ "env", P("env"), false },
	{ "env FOO=$(id) ls", P("env", "id"), true },
	{ "env FOO=\"$(id)\" ls", P("env", "id", "ls"), false },
	{ "nice -n 5 rm x", P("nice", "rm"), false },
	{ "nice -10 rm x", P("nice", "rm"), false },
	{ "nohup rm x &", P("nohup", "rm"), false },
	{ "timeout -s KILL 5 rm x", P("timeout", "rm"), false },
	{ "timeout --kill-after=1 5s curl x", P("timeout", "curl"), false },
	{ "timeout $t rm", P("timeout"), true },
	{ "\\time -f %e rm x", P("time", "rm"), false },
	{ "stdbuf -oL -e0 grep x", P("stdbuf", "grep"), false },
	{ "setsid -f rm x", P("setsid", "rm"), false },
	{ "xargs", P("xargs", "echo"), false },
	{ "xargs -0 -n 1 -P 4 rm", P("xargs", "rm"), false },
	{ "xargs -I{} cp {} /tmp", P("xargs", "cp"), false },
	{ "xargs -I{} {} x", P("xargs"), true },
	{ "exec -a name rm x", P("exec", "rm"), false },
	{ "exec rm", P("exec", "rm"), false },
	{ "command -v git", P("command", "git"), false },
	{ "command -p rm x", P("command", "rm"), false },
	{ "builtin eval x", P("builtin", "eval"), true },
	{ "builtin cd /", P("builtin", "cd"), false },
	{ "chroot /mnt rm x", P("chroot", "rm"), false },
	{ "chroot /mnt", P("chroot"), true },
	{ "ionice -c 3 rm x", P("ionice", "rm"), false },
	{ "ionice -p 1", P("ionice"), false },
	{ "chrt -f 99 rm x", P("chrt", "rm"), false },
	{ "taskset -c 0-3 rm x", P("taskset", "rm"), false },
	{ "taskset -p 1", P("taskset"), false },
	{ "nsenter -t 1 -m -u rm x", P("nsenter", "rm"), false },
	{ "unshare -r rm x", P("unshare", "rm"), false },
	{ "unshare -mr", P("unshare"), true },
	{ "flock /tmp/l rm x", P("flock", "rm"), false },
	{ "flock -w 5 /tmp/l -c 'rm x'", P("flock"), true },
	{ "watch ls", P("watch"), true },
	{ "su -c ls", P("su"), true },
	{ "runuser -u bob -- rm x", P("runuser", "rm"), false },
	{ "runuser bob", P("runuser"), true },
	{ "find . -name '*.o' -exec rm {} \\;", P("find", "rm"), false },
	{ "find . -execdir sudo rm {} + -ok ls \\;",
	  P("find", "sudo", "rm", "ls"), false },
	{ "find . -exec sh -c 'x' \\;", P("find", "sh"), true },
	{ "find . -exec {} \\;", P("find"), true },
	{ "find $d -delete", P("find"), true },
	{ "busybox rm x", P("busybox", "rm"), false },
	{ "busybox sh -c x", P("busybox", "sh"), true },
	{ "strace -f -o /tmp/o rm x", P("strace", "rm"), false },
	{ "ltrace -c rm x", P("ltrace", "rm"), false },
	{ "parallel rm ::: a", P("parallel"), true },
	{ "script -c ls", P("script"), true },
	{ "ssh host ls", P("ssh"), true },
	{ "ssh -p 22 host", P("ssh"), false },
	{ "ssh -o ProxyCommand='rm x' host", P("ssh"), true },

	/* what cannot be known */
	{ "$X", NONE, true },
	{ "${X}", NONE, true },
	{ "$(which rm) x", P("which"), true },
	{ "`echo rm` x", P("echo"), true },
	{ "/usr/bin/r? x", NONE, true },
	{ "/?\?\?/rm", NONE, true },
	{ "r[m] x", NONE, true },
	{ "{rm,-rf} x", NONE, true },
	{ "x=rm; $x -rf /", NONE, true },
	{ "eval rm x", P("eval"), true },
	{ "source ./x.sh", P("source"), true },
	{ ". ./x.sh", P("."), true },
	{ "sh -c 'rm x'", P("sh"), true },
	{ "bash -lc 'rm x'", P("bash"), true },
	{ "dash -c x; zsh -c y; ksh -c z", P("dash", "zsh", "ksh"), true },
	{ "bash <<< 'rm x'", P("bash"), true },
	{ "echo rm x | bash", P("echo", "bash"), true },
	{ "bash -s", P("bash"), true },
	{ "bash -e script.sh", P("bash"), false },
	{ "python3 -c 'import os'", P("python3"), true },
	{ "python3 script.py", P("python3"), false },
	{ "python3 -m http.server", P("python3"), false },
	{ "perl -ne 'print'", P("perl"), true },
	{ "ruby -e x", P("ruby"), true },
	{ "node -e x", P("node"), true },
	{ "node app.js", P("node"), false },
	{ "alias x=rm; x", P("alias", "x"), true },
	{ "trap 'rm x' EXIT", P("trap"), true },
	{ "trap - INT", P("trap"), false },
	{ "echo ${!x}", P("echo"), true },
	{ "echo ${!x[@]}", P("echo"), false },
	{ "PATH=/tmp ls", P("ls"), false },
	{ "hash -p /bin/rm ls; ls", P("hash", "ls"), true },
	{ "enable -f x.so y", P("enable"), true },
	{ "BASH_ENV=/tmp/x bash s.sh", P("bash"), true },
	{ "ENV=/tmp/x sh s.sh", P("sh"), true },
	{ "PS4='$(rm)' bash -x s.sh", P("bash"), true },
	{ "LD_PRELOAD=./e.so ls", P("ls"), true },
	{ "x='a[$(rm)]'; echo $((x))", P("echo"), true },
	{ "read x; echo $((x))", P("read", "echo"), true },
	{ "x=5; echo $((x + 1))", P("echo"), false },
	{ "[[ $n -gt 1 ]]", P("[["), true },
	{ "n=2; [[ $n -gt 1 ]]", P("[["), false },
	{ "let i=1 j=i+1", P("let"), false },
	{ "echo ${x@P}", P("echo"), true },
	{ "declare -n r=x", P("declare"), true },
	{ "read \"$v\"", P("read"), true },
	{ "printf -v \"$v\" x", P("printf"), true },
	{ "awk '{print $1}' f", P("awk"), false },
	{ "awk 'BEGIN{system(\"rm\")}'", P("awk"), true },
	{ "sed -n 's/a/b/p' f", P("sed"), false },
	{ "sed 's/a/b/e' f", P("sed"), true },
	{ "sed -e '1e rm' f", P("sed"), true },
	{ "vim -c '!rm' f", P("vim"), true },
	{ "tar -xf a.tar --to-command=rm", P("tar"), true },
	{ "tar czf a.tgz d", P("tar"), false },
	{ "git -c core.pager=rm log", P("git"), true },
	{ "git -c user.name=a commit -m x", P("git"), false },
	{ "rsync -e ssh a b:c", P("rsync", "ssh"), false },
	{ "cat x | sh", P("cat", "sh"), true },

	/* $'...' ends where bash says, before decoding */
	{ "echo $'\\c'; rm -rf /\necho 'x'", P("echo", "rm"), false },
	{ "$'a\\'' ; id", P("a'", "id"), false },
	{ "$'\\x' y", P("\\x"), false },

	/* arithmetic and variable names */
	{ "n=3; for ((i = 0; i < n; i++)); do :; done", P(":"), false },
	{ "for i in 1 2 3; do echo $((i * 2)); done", P("echo"), false },
	{ "for i in $(seq 3); do echo $((i * 2)); done", P("seq", "echo"),
	  true },
	{ "i=0; while :; do echo $((i)); read i; done", P(":", "echo", "read"),
	  true },
	{ "echo ${a[$i]}", P("echo"), true },
	{ "echo ${s:i:2}", P("echo"), true },
	{ "echo $((RANDOM % 6)) $(($# + $?))", P("echo"), false },
	{ "echo $(($1))", P("echo"), true },
	{ "x=1; [[ ${x} -eq 1 ]]", P("[["), false },
	{ "[[ ${#a[@]} -gt 0 ]]", P("[["), false },
	{ "[[ ${x:-1} -eq 1 ]]", P("[["), true },
	{ "a[$(rm)]=1", P("rm"), true },
	{ "a[1]=x ls", P("ls"), false },
	{ "test -v 'a[$(rm)]'", P("test"), true },
	{ "export x=$(id) PATH=\"$PATH:/x\"", P("export", "id"), false },
	{ "export \"Y=$(id)\"", P("export", "id"), false },
	{ "export \"$n=1\"", P("export"), true },
	{ "declare \"a=($x)\"", P("declare"), true },
	{ "printf \"Hello $name\\n\"", P("printf"), false },
	{ "printf \"$fmt\" x", P("printf"), true },
	{ "python3 \"run_$n.py\"", P("python3"), false },
	{ "python3 \"$script\"", P("python3"), true },
	{ "echo ${!prefix*}", P("echo"), false },
	{ "echo ${x@Q}", P("echo"), false },

	/* more wrappers, interpreters and tools */
	{ "rsync -e 'ssh -p 22' a b:c", P("rsync", "ssh"), false },
	{ "rsync -e 'sh -c x' a b:c", P("rsync", "sh"), true },
	{ "valgrind --leak-check=full ./a.out", P("valgrind", "a.out"), false },
	{ "fakeroot -- make install", P("fakeroot", "make"), false },
	{ "eatmydata apt-get install x", P("eatmydata", "apt-get"), false },
	{ "pkexec rm x", P("pkexec", "rm"), false },
	{ "perl -I lib script.pl", P("perl"), false },
	{ "perl -MPOSIX script.pl", P("perl"), true },
	{ "php -f x.php", P("php"), false },
	{ "lua5.4 x.lua", P("lua5.4"), false },
	{ "gawk -f prog.awk data", P("gawk"), false },
	{ "awk -F: '{print $1}' /etc/passwd", P("awk"), false },
	{ "sed -i -e 's/a/b/g' -e '/x/d' f", P("sed"), false },
	{ "sed --sandbox 's/a/b/e' f", P("sed"), false },
	{ "sed 'w /dev/stdout' f", P("sed"), false },
	{ "tar -cf - . | ssh h 'tar -xf -'", P("tar", "ssh"), true },
	{ "git log --oneline | head", P("git", "head"), false },
};

static void join(const char *const *v, size_t n, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && v[i]; i++)
		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s",
				      i ? "," : "", v[i]);
}

static void test_table(void **state)
{
	char want[512], got[512];
	size_t i, n;

	(void)state;
	assert_true(CW_ARRAY_SIZE(cases) >= 150);
	for (i = 0; i < CW_ARRAY_SIZE(cases); i++) {
		const struct tcase *c = &cases[i];
		struct cw_shlex s;

		assert_int_equal(0, cw_shlex_analyze(c->in, strlen(c->in), &s));
		for (n = 0; n < MAXP && c->progs[n]; n++)
			;
		join(c->progs, n, want, sizeof(want));
		join((const char *const *)s.programs, s.nprograms, got,
		     sizeof(got));
		if (strcmp(want, got) || c->opaque != s.opaque)
			fail_msg("case %zu `%s`: want [%s] opaque=%d, got "
				 "[%s] opaque=%d (%s)", i, c->in, want,
				 c->opaque, got, s.opaque, s.why);
		assert_int_equal(n, s.nprograms);
		assert_int_equal(c->opaque, s.opaque);
		/* a reason exactly when opaque */
		assert_int_equal(c->opaque, s.why[0] != '\0');
		cw_shlex_free(&s);
		assert_null(s.programs);
	}
}

static void expect_why(const char *in, size_t len, const char *why)
{
	struct cw_shlex s;

	assert_int_equal(0, cw_shlex_analyze(in, len, &s));
	assert_true(s.opaque);
	assert_string_equal(why, s.why);
	cw_shlex_free(&s);
}

static void test_reasons(void **state)
{
	(void)state;
	expect_why("eval x", 6, "eval runs its arguments as code");
	expect_why("$X", 2, "program name is an expansion");
	expect_why("r?", 2, "program name is a glob pattern");
	expect_why("echo 'x", 7, "unterminated single quote");
	expect_why("f(){ :; }", 9, "function definition");
	/* the first reason is kept */
	expect_why("$X; eval y", 10, "program name is an expansion");
}

static void test_nul_and_length(void **state)
{
	static const char in[] = "ls\0rm -rf /";
	struct cw_shlex s;

	(void)state;
	/* bash never sees past a NUL */
	assert_int_equal(0, cw_shlex_analyze(in, sizeof(in) - 1, &s));
	assert_true(s.opaque);
	assert_string_equal("NUL byte in command", s.why);
	assert_int_equal(1, s.nprograms);
	assert_string_equal("ls", s.programs[0]);
	cw_shlex_free(&s);

	/* len, not the terminator, bounds the input */
	assert_int_equal(0, cw_shlex_analyze("ls; rm x", 2, &s));
	assert_false(s.opaque);
	assert_int_equal(1, s.nprograms);
	assert_string_equal("ls", s.programs[0]);
	cw_shlex_free(&s);

	assert_int_equal(0, cw_shlex_analyze(NULL, 0, &s));
	assert_false(s.opaque);
	assert_int_equal(0, s.nprograms);
	cw_shlex_free(&s);
	cw_shlex_free(NULL);
}

static char *repeat(const char *unit, size_t times, size_t *len)
{
	size_t u = strlen(unit), i;
	char *p = malloc(u * times + 1);

	assert_non_null(p);
	for (i = 0; i < times; i++)
		memcpy(p + i * u, unit, u);
	p[u * times] = '\0';
	*len = u * times;
	return p;
}

struct nesting {
	const char *head, *open, *mid, *close;
	size_t nprog;
};

static const struct nesting nests[] = {
	{ "echo ", "$(a ", "", ")", 2 },
	{ "", "( ", "a", " )", 1 },
	{ "", "{ ", "a;", " }", 1 },
	{ "", "if a; then ", "a", "; fi", 1 },
};

/* head open^d mid close^d */
static char *nest(const struct nesting *n, size_t d, size_t *len)
{
	struct cw_buf b = { 0 };
	size_t i;

	assert_int_equal(0, cw_buf_append(&b, n->head, strlen(n->head)));
	for (i = 0; i < d; i++)
		assert_int_equal(0, cw_buf_append(&b, n->open,
						  strlen(n->open)));
	assert_int_equal(0, cw_buf_append(&b, n->mid, strlen(n->mid)));
	for (i = 0; i < d; i++)
		assert_int_equal(0, cw_buf_append(&b, n->close,
						  strlen(n->close)));
	*len = b.len;
	return b.data;
}

/* Backquotes nest by doubling backslashes: `a \`a \\\`a\\\` \` ` */
static void test_backquote_nesting(void **state)
{
	struct cw_buf b = { 0 };
	struct cw_shlex s;
	size_t d = 12, i, k;

	(void)state;
	assert_int_equal(0, cw_buf_append(&b, "echo ", 5));
	for (i = 0; i < d; i++) {
		for (k = 0; k < (1u << i) - 1; k++)
			assert_int_equal(0, cw_buf_append(&b, "\\", 1));
		assert_int_equal(0, cw_buf_append(&b, "`p", 2));
		assert_int_equal(0, cw_buf_append(&b, &"0123456789ab"[i], 1));
		assert_int_equal(0, cw_buf_append(&b, " ", 1));
	}
	for (i = d; i-- > 0;) {
		for (k = 0; k < (1u << i) - 1; k++)
			assert_int_equal(0, cw_buf_append(&b, "\\", 1));
		assert_int_equal(0, cw_buf_append(&b, "`", 1));
	}
	assert_int_equal(0, cw_shlex_analyze(b.data, b.len, &s));
	assert_false(s.opaque);
	assert_int_equal(d + 1, s.nprograms);
	assert_string_equal("echo", s.programs[0]);
	assert_string_equal("p0", s.programs[1]);
	assert_string_equal("pb", s.programs[d]);
	cw_shlex_free(&s);
	cw_buf_free(&b);
}

static void test_bounds(void **state)
{
	struct cw_shlex s;
	size_t len, o = 0, i;
	char *p;

	(void)state;
	p = repeat("a", 2u << 20, &len);
	assert_int_equal(0, cw_shlex_analyze(p, len, &s));
	assert_true(s.opaque);
	assert_string_equal("input too long", s.why);
	assert_int_equal(0, s.nprograms);
	cw_shlex_free(&s);
	free(p);

	/* exactly the limit is analysed */
	p = repeat("a", CW_SHLEX_MAX_INPUT, &len);
	assert_int_equal(0, cw_shlex_analyze(p, len, &s));
	assert_false(s.opaque);
	assert_int_equal(1, s.nprograms);
	assert_int_equal(CW_SHLEX_MAX_INPUT, strlen(s.programs[0]));
	cw_shlex_free(&s);
	free(p);

	p = repeat("$(", 10000, &len);
	assert_int_equal(0, cw_shlex_analyze(p, len, &s));
	assert_true(s.opaque);
	assert_string_equal("nesting too deep", s.why);
	cw_shlex_free(&s);
	free(p);

	/* CW_SHLEX_MAX_DEPTH levels are fine, one more is not */
	for (i = 0; i < CW_ARRAY_SIZE(nests); i++) {
		size_t d;

		for (d = CW_SHLEX_MAX_DEPTH; d <= CW_SHLEX_MAX_DEPTH + 1; d++) {
			p = nest(&nests[i], d, &len);
			assert_int_equal(0, cw_shlex_analyze(p, len, &s));
			if (d > CW_SHLEX_MAX_DEPTH) {
				assert_true(s.opaque);
				assert_string_equal("nesting too deep", s.why);
			} else {
				assert_false(s.opaque);
				assert_int_equal(nests[i].nprog, s.nprograms);
				assert_string_equal("a",
						    s.programs[s.nprograms - 1]);
			}
			cw_shlex_free(&s);
			free(p);
		}
	}

	p = malloc(1u << 20);
	assert_non_null(p);
	for (i = 0, o = 0; i < 100000; i++)
		o += (size_t)sprintf(p + o, "p%zu;", i);
	assert_int_equal(0, cw_shlex_analyze(p, o, &s));
	assert_true(s.opaque);
	assert_string_equal("too many programs", s.why);
	assert_int_equal(CW_SHLEX_MAX_PROGRAMS, s.nprograms);
	assert_string_equal("p0", s.programs[0]);
	cw_shlex_free(&s);
	free(p);

	{
		static const char *const units[] = {
			"(", "((", "$((", "{ ", "${x:-", "\"$(", "a=(",
			"$[", "<(", "f() ", "if ", "@(", "a[", "`",
			"find -exec ", "cat <<E\n", "case x in ",
			"[[ ", "$'\\", "<<E ",
		};

		for (i = 0; i < CW_ARRAY_SIZE(units); i++) {
			p = repeat(units[i],
				   CW_SHLEX_MAX_INPUT / strlen(units[i]), &len);
			assert_int_equal(0, cw_shlex_analyze(p, len, &s));
			assert_true(s.nprograms <= CW_SHLEX_MAX_PROGRAMS);
			cw_shlex_free(&s);
			free(p);
		}
	}
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check_one(const char *p, size_t len)
{
	struct cw_shlex s, t;
	char *buf = malloc(len ? len : 1);
	size_t i;

	/* no terminator after the input: reads past len would trap */
	assert_non_null(buf);
	memcpy(buf, p, len);
	assert_int_equal(0, cw_shlex_analyze(buf, len, &s));
	assert_true(s.nprograms <= CW_SHLEX_MAX_PROGRAMS);
	assert_int_equal(s.opaque, s.why[0] != '\0');
	for (i = 0; i < s.nprograms; i++) {
		assert_non_null(s.programs[i]);
		assert_true(s.programs[i][0] != '\0');
		assert_null(strchr(s.programs[i], '/'));
	}
	/* deterministic */
	assert_int_equal(0, cw_shlex_analyze(buf, len, &t));
	assert_int_equal(s.nprograms, t.nprograms);
	assert_int_equal(s.opaque, t.opaque);
	assert_string_equal(s.why, t.why);
	for (i = 0; i < s.nprograms; i++)
		assert_string_equal(s.programs[i], t.programs[i]);
	cw_shlex_free(&t);
	cw_shlex_free(&s);
	free(buf);
}

static void test_fuzz(void **state)
{
	static const char alpha[] = " \t\n;&|()<>{}[]$`'\"\\#=!*?@+-,.~:%/0129"
				    "abcdefrmEOFinfdoesac";
	char buf[256];
	size_t i, j, len;

	(void)state;
	for (i = 0; i < 20000; i++) {
		len = next_rand() % 96;
		for (j = 0; j < len; j++) {
			uint64_t r = next_rand();

			buf[j] = (i & 1) ? (char)(r & 0xff) :
					   alpha[r % (sizeof(alpha) - 1)];
		}
		check_one(buf, len);
	}
	for (i = 0; i < CW_ARRAY_SIZE(cases); i++) {
		for (j = 0; j < 20; j++) {
			size_t k, m = strlen(cases[i].in);

			if (m >= sizeof(buf) - 8)
				continue;
			memcpy(buf, cases[i].in, m);
			len = m;
			for (k = 0; k < 1 + next_rand() % 3; k++) {
				size_t at = len ? next_rand() % len : 0;
				char c;

				c = alpha[next_rand() % (sizeof(alpha) - 1)];

				switch (next_rand() % 3) {
				case 0: /* replace */
					if (len)
						buf[at] = c;
					break;
				case 1: /* insert */
					memmove(buf + at + 1, buf + at,
						len - at);
					buf[at] = c;
					len++;
					break;
				default: /* delete */
					if (len) {
						memmove(buf + at, buf + at + 1,
							len - at - 1);
						len--;
					}
				}
			}
			check_one(buf, len);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_nul_and_length),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_backquote_nesting),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests_name("shlex", tests, NULL, NULL);
}
