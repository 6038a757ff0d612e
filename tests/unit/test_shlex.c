// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlex.h"
#include "unit.h"

/* One analysis: input, the programs expected in order, opacity. */
struct tcase {
	const char *in;
	const char *progs[8];
	int opaque;
	size_t len;		/* 0: strlen(in) */
};

/* expected opacity, then the input length (0: strlen) */
#define O 1, 0
#define K 0, 0

static const struct tcase quoting[] = {
	{ "ls -la", { "ls" }, K },
	{ "l\\s", { "ls" }, K },
	{ "\"r\"m -rf /", { "rm" }, K },
	{ "'r''m'", { "rm" }, K },
	{ "'r'\"m\" -rf /", { "rm" }, K },
	{ "\"/usr/bin/r\"m", { "rm" }, K },
	{ "\\/bin\\/rm x", { "rm" }, K },
	{ "r\\\nm x", { "rm" }, K },
	{ "$'rm' x", { "rm" }, K },
	{ "$'\\x72\\x6d' -rf /", { "rm" }, K },
	{ "$'\\162\\155'", { "rm" }, K },
	{ "$'\\u0072m'", { "rm" }, K },
	{ "$'r\\u00e9m'", { NULL }, O },
	{ "$'r\\0m'", { NULL }, O },
	{ "$'\\cAx'", { NULL }, O },
	{ "$\"rm\" x", { NULL }, O },
	{ "echo $\"hello\" $'a\\tb'", { "echo" }, K },
	{ "\"ec\"\"ho\" hi", { "echo" }, K },
	{ "echo 'it''s'", { "echo" }, K },
	{ "echo \"a \\\"b\\\" $(id)\"", { "echo", "id" }, K },
	{ "echo 'unterminated", { NULL }, O },
	{ "echo \"unterminated", { NULL }, O },
	{ "ls \"a b\" 'c d'", { "ls" }, K },
	{ "echo \\$(rm)", { "echo" }, O },
	{ "echo \\$\\(rm\\)", { "echo" }, K },
	{ "echo '$(rm)' \"\\$(rm)\"", { "echo" }, K },
	{ "e\\\\cho", { "e\\cho" }, K },
	{ "''", { NULL }, K },
	{ "\"\" rm", { NULL }, K },
	{ "\\$X", { "$X" }, K },
	{ "'$X' a", { "$X" }, K },
	{ "\"s\"u\"d\"o r\"\"m", { "sudo", "rm" }, K },
	{ "e\\cho $(r\\m x)", { "echo", "rm" }, K },
};

static const struct tcase lists[] = {
	{ "", { NULL }, K },
	{ "   \t\n  ", { NULL }, K },
	{ "# only a comment", { NULL }, K },
	{ "ls; rm x", { "ls", "rm" }, K },
	{ "ls;rm", { "ls", "rm" }, K },
	{ "ls & rm x", { "ls", "rm" }, K },
	{ "ls && rm || cat", { "ls", "rm", "cat" }, K },
	{ "ls&&rm", { "ls", "rm" }, K },
	{ "ls | grep x |& wc -l", { "ls", "grep", "wc" }, K },
	{ "ls\nrm", { "ls", "rm" }, K },
	{ "ls ||\n rm", { "ls", "rm" }, K },
	{ "ls |\\\n| rm", { "ls", "rm" }, K },
	{ "ls # rm -rf /", { "ls" }, K },
	{ "ls #comment\nrm", { "ls", "rm" }, K },
	{ "ls #\\\nrm", { "ls", "rm" }, K },
	{ "echo a#b; rm", { "echo", "rm" }, K },
	{ "echo a\\\n#b; rm", { "echo", "rm" }, K },
	{ "ls;", { "ls" }, K },
	{ "ls;;", { "ls" }, O },
	{ ";ls", { NULL }, O },
	{ "ls &&", { "ls" }, O },
	{ "| ls", { NULL }, O },
	{ "ls & ; rm", { "ls" }, O },
	{ "ls>x;rm<y", { "ls", "rm" }, K },
	{ "echo $(ls) $(ls); ls", { "echo", "ls" }, K },
	{ "until rm; do :; done &", { "rm", ":" }, K },
};

static const struct tcase substitutions[] = {
	{ "(cd /tmp && rm x)", { "cd", "rm" }, K },
	{ "{ ls; rm x; }", { "ls", "rm" }, K },
	{ "( ( rm x ) )", { "rm" }, K },
	{ "{ls;}", { "{ls" }, O },
	{ "echo $(rm -rf /)", { "echo", "rm" }, K },
	{ "echo `rm -rf /`", { "echo", "rm" }, K },
	{ "echo $(echo $(rm x))", { "echo", "rm" }, K },
	{ "echo \"$(ls \"$(rm x)\")\"", { "echo", "ls", "rm" }, K },
	{ "echo `echo \\`rm x\\``", { "echo", "rm" }, K },
	{ "echo \"`echo \\\"; rm x; \\\"`\"", { "echo" }, K },
	{ "echo `echo \\\"; rm x; \\\"`", { "echo", "rm", "\"" }, K },
	{ "diff <(ls a) >(rm b)", { "diff", "ls", "rm" }, K },
	{ "cat < <(rm x)", { "cat", "rm" }, K },
	{ "ls 2>&1 | tee >(rm x)", { "ls", "tee", "rm" }, K },
	{ "{ rm x; } > >(cat)", { "rm", "cat" }, K },
	{ "echo $((1+2))", { "echo" }, K },
	{ "echo $(( (1+2) * 3 ))", { "echo" }, K },
	{ "echo $(( $(rm x) + 1 ))", { "echo", "rm" }, K },
	{ "echo $((a[1]+$(rm x)))", { "echo", "rm" }, K },
	{ "(( i++ ))", { NULL }, K },
	{ "(( $(rm x) ))", { "rm" }, K },
	{ "echo $[1+$(rm)]", { "echo", "rm" }, K },
	{ "x=$(rm y)", { "rm" }, K },
	{ "ls > $(rm x)", { "ls", "rm" }, K },
	{ "echo ${x:-$(rm)}", { "echo", "rm" }, K },
	{ "echo \"${x:-`rm`}\"", { "echo", "rm" }, K },
	{ "echo $( case x in a) rm;; esac )", { "echo", "rm" }, K },
	{ "echo $(case x in (esac) rm;; esac)", { "echo", "rm" }, K },
	{ "echo ${ rm x; }", { "echo", "rm" }, K },
	{ "echo ${| rm x; }", { "echo", "rm" }, K },
	{ "ls $(: ')' ) ; rm x", { "ls", ":", "rm" }, K },
	{ "echo $(echo \")\"; rm x)", { "echo", "rm" }, K },
	{ "echo $(", { NULL }, O },
	{ "echo `ls", { NULL }, O },
	{ "echo ${x", { NULL }, O },
	{ "cat $(<file)", { "cat" }, K },
	{ "echo $(ls # a comment )\n)", { "echo", "ls" }, K },
};

static const struct tcase compound[] = {
	{ "if rm a; then ls; elif cat b; then wc; else du; fi",
	  { "rm", "ls", "cat", "wc", "du" }, K },
	{ "if { true; } then ls; fi", { "true", "ls" }, K },
	{ "while read l; do rm \"$l\"; done < f", { "read", "rm" }, K },
	{ "until false; do sleep 1; done", { "false", "sleep" }, K },
	{ "while :; do :; done", { ":" }, K },
	{ "for f in *.txt; do rm \"$f\"; done", { "rm" }, K },
	{ "for f in $(ls); do cat $f; done", { "ls", "cat" }, K },
	{ "for ((i=0;i<3;i++)); do echo $i; done", { "echo" }, K },
	{ "for ((i=$(rm x);;)) { ls; }", { "rm", "ls" }, K },
	{ "for x do echo; done", { "echo" }, K },
	{ "for x\nin a b\ndo rm $x\ndone", { "rm" }, K },
	{ "for x in a b; { rm $x; }", { "rm" }, K },
	{ "for do in do; do echo; done", { "echo" }, K },
	{ "for do in do; do done; done", { NULL }, O },
	{ "select x in a b; do ls; done", { "ls" }, K },
	{ "case $1 in start) svc;; stop|halt) kill 1;; *) exit;; esac",
	  { "svc", "kill", "exit" }, K },
	{ "case x in (rm) ls;; esac", { "ls" }, K },
	{ "case x in a) ls;& b) rm;;& c) cat;; esac", { "ls", "rm", "cat" },
	  K },
	{ "case $(rm) in *) ;; esac", { "rm" }, K },
	{ "case x in\n a) ls\n ;;\n b) rm\nesac", { "ls", "rm" }, K },
	{ "case x in @(a|b)) ls;; esac", { "ls" }, K },
	{ "case x in $(rm)) ls;; esac", { "rm", "ls" }, K },
	{ "[[ -f x ]] && rm x", { "[[", "rm" }, K },
	{ "[[ $(rm x) == y ]]", { "[[", "rm" }, K },
	{ "[[ x =~ ^(a|b)$ ]]", { "[[" }, K },
	{ "[[ x =~ (#) ]]; rm y", { "[[", "rm" }, K },
	{ "[[ a < b && ( c > d ) ]]", { "[[" }, K },
	{ "[[ x ]", { "[[" }, O },
	{ "! rm x", { "rm" }, K },
	{ "! ! rm x", { "rm" }, K },
	{ "!", { NULL }, K },
	{ "echo a | ! cat", { "echo" }, O },
	{ "time rm x", { "time", "rm" }, K },
	{ "time -p rm x", { "time", "rm" }, K },
	{ "time -p -- rm x", { "time", "rm" }, K },
	{ "time ! rm", { "time", "rm" }, K },
	{ "time", { "time" }, K },
	{ "echo a | time cat", { "echo", "time", "cat" }, K },
	{ "coproc rm x", { "rm" }, K },
	{ "coproc NAME { rm x; }", { "rm" }, K },
	{ "coproc { rm x; }", { "rm" }, K },
	{ "coproc rm { ls; }", { "ls" }, K },
	{ "f() { rm x; }", { "rm" }, K },
	{ "function g { rm x; }; ls", { "rm", "ls" }, K },
	{ "function f() ( ls )", { "ls" }, K },
	{ "f ()\n{\n rm; }", { "rm" }, K },
	{ "f() ls", { NULL }, O },
	{ "f() { rm \"$@\"; }; f", { "rm", "f" }, O },
	{ "function rm { ls; }; rm -rf /", { "ls", "rm" }, O },
	{ "while true; do f() { :; }; done; f", { "true", ":", "f" }, O },
	{ "command_not_found_handle() { ls; }", { "ls" }, O },
	{ "if true; then ls", { "true", "ls" }, O },
	{ "while true", { "true" }, O },
	{ "{ ls", { "ls" }, O },
	{ "(ls", { "ls" }, O },
	{ "ls )", { "ls" }, O },
	{ "if", { NULL }, O },
	{ "case x in a) ls", { "ls" }, O },
	{ "fi", { NULL }, O },
};

static const struct tcase assignments[] = {
	{ "VAR=x rm y", { "rm" }, K },
	{ "A=1 B=2 C=3 ls", { "ls" }, K },
	{ "a=1 b=2", { NULL }, K },
	{ "a=1;rm", { "rm" }, K },
	{ "a=(1 2 $(rm x))", { "rm" }, K },
	{ "a=(\n 1 # c\n [2]=$(rm) )", { "rm" }, K },
	{ "a[$(rm x)]=1", { "rm" }, K },
	{ "a[1 + 2]=3 ls", { "ls" }, K },
	{ "a+=x ls", { "ls" }, K },
	{ "X=$(cat f) env", { "cat", "env" }, K },
	{ "echo a=$(rm)", { "echo", "rm" }, K },
	{ "\"A\"=1", { "A=1" }, K },
	{ "PATH=/tmp ls", { "ls" }, K },
	{ "2>&1 rm x", { "rm" }, K },
	{ ">out rm x", { "rm" }, K },
	{ ">out A=1 rm x", { "rm" }, K },
	{ "rm x 2>/dev/null >&2", { "rm" }, K },
	{ "{fd}>f ls", { "ls" }, K },
	{ "ls 3>&- 4<&0 <>f >|g", { "ls" }, K },
	{ "echo a2>f", { "echo" }, K },
	{ "exec 3>file", { "exec" }, K },
	{ "cat <<< \"$(rm x)\"", { "cat", "rm" }, K },
	{ "cat <<< 'rm -rf /'", { "cat" }, K },
	{ "ls &>/dev/null; ls &>>log", { "ls" }, K },
	{ "echo >", { NULL }, O },
	{ "echo a=(b)", { "echo" }, O },
	{ "LD_PRELOAD=/tmp/x.so ls", { "ls" }, O },
	{ "PS4='$(rm)' bash -x s", { "bash" }, O },
	{ "BASH_ENV=x bash s", { "bash" }, O },
	{ "X='a[$(rm)]'; echo $((X))", { "echo" }, O },
	{ "export PS4=x", { "export" }, O },
	{ "declare -n r='a[$(id)]'", { "declare" }, O },
	{ "declare -a a=(1 $(rm x))", { "declare", "rm" }, K },
	{ "local x=1 y", { "local" }, K },
};

static const struct tcase heredocs[] = {
	{ "cat <<EOF\nrm -rf /\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<'EOF'\n$(rm x)\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<EOF\n$(rm x)\nEOF", { "cat", "rm" }, K },
	{ "cat <<EOF\n`rm x`\n${y:-$(id)}\nEOF", { "cat", "rm", "id" }, K },
	{ "cat <<EOF\n\\$(rm x) '$(id)'\nEOF", { "cat", "id" }, K },
	{ "cat <<-EOF\n\trm -rf /\n\tEOF\nls", { "cat", "ls" }, K },
	{ "cat <<\"E F\"\nrm\nE F\nls", { "cat", "ls" }, K },
	{ "cat <<\\EOF\n$(rm)\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<E\"O\"F\n$(rm)\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<EOF; rm x\nbody\nEOF", { "cat", "rm" }, K },
	{ "cat <<A <<B\nrm\nA\nrm2\nB\nls", { "cat", "ls" }, K },
	{ "cat <<EOF\nfoo\nEOF", { "cat" }, K },
	{ "cat <<EOF\nunterminated body rm", { "cat" }, K },
	{ "cat <<EOF", { "cat" }, K },
	{ "echo $(cat <<EOF\nrm\nEOF\n)", { "echo", "cat" }, K },
	{ "echo $(cat <<EOF\nhi\nEOF)\nls", { "echo", "cat", "ls" }, K },
	{ "cat <<EOF\nE\\\nOF\nls", { "cat", "ls" }, K },
	{ "cat <<'EOF'\nE\\\nOF\nrm\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<EOF\nfoo\\\\\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<EOF\n$(r\\\nm)\nEOF", { "cat", "rm" }, K },
	{ "cat <<EOF | rm x\nbody\nEOF", { "cat", "rm" }, K },
	{ "cat <<EOF; echo $(echo A\nrm B)\nbody\nEOF\nls",
	  { "cat", "echo", "rm", "ls" }, K },
	{ "cat <<EOF && (\nbody rm\nEOF\nls)", { "cat", "ls" }, K },
	{ ": <<'EOF'\n$(rm)\nEOF\nrm -rf /", { ":", "rm" }, K },
	{ "cat <<EOF\nEOF\nrm", { "cat", "rm" }, K },
	{ "bash <<EOF\nrm -rf /\nEOF", { "bash" }, O },
	{ "cat <<$x\nrm\n$x\nls", { "cat", "ls" }, O },
};

static const struct tcase wrappers[] = {
	{ "sudo rm y", { "sudo", "rm" }, K },
	{ "sudo -u root -g wheel rm", { "sudo", "rm" }, K },
	{ "sudo -Eu root rm", { "sudo", "rm" }, K },
	{ "sudo --user=root rm", { "sudo", "rm" }, K },
	{ "sudo --user root --preserve-env rm", { "sudo", "rm" }, K },
	{ "sudo -- rm x", { "sudo", "rm" }, K },
	{ "sudo X=1 rm", { "sudo", "rm" }, K },
	{ "sudo -s rm", { "sudo", "rm" }, O },
	{ "sudo -i", { "sudo" }, O },
	{ "sudo -e /etc/passwd", { "sudo" }, O },
	{ "sudo -Z rm", { "sudo" }, O },
	{ "sudo $OPT rm", { "sudo" }, O },
	{ "sudo -h rm", { "sudo" }, O },
	{ "sudo -v", { "sudo" }, K },
	{ "doas -u root rm x", { "doas", "rm" }, K },
	{ "doas -s", { "doas" }, O },
	{ "env -i PATH=/bin rm x", { "env", "rm" }, K },
	{ "env -u HOME -C /tmp rm", { "env", "rm" }, K },
	{ "env - rm", { "env", "rm" }, K },
	{ "env -- rm x", { "env", "rm" }, K },
	{ "env -i -- A=1 - rm x", { "env", "-" }, K },
	{ "env - A=1 rm x", { "env", "rm" }, K },
	{ "env", { "env" }, K },
	{ "env -S 'rm -rf /'", { "env" }, O },
	{ "env BASH_ENV=/tmp/x bash s.sh", { "env", "bash" }, O },
	{ "env 'BASH_FUNC_ls%%=() { rm; }' bash s", { "env", "bash" }, O },
	{ "env $X rm", { "env" }, O },
	{ "env X=$(echo 1 rm) ls", { "env", "echo" }, O },
	{ "nice -n 5 rm", { "nice", "rm" }, K },
	{ "nice -5 rm", { "nice", "rm" }, K },
	{ "nice --10 rm", { "nice", "rm" }, K },
	{ "nice --adjustment=5 rm", { "nice", "rm" }, K },
	{ "nice -- rm", { "nice", "rm" }, K },
	{ "nohup rm x &", { "nohup", "rm" }, K },
	{ "timeout 5 rm x", { "timeout", "rm" }, K },
	{ "timeout -s KILL -k 5 10s rm x", { "timeout", "rm" }, K },
	{ "timeout --signal=9 1m rm", { "timeout", "rm" }, K },
	{ "/usr/bin/time -f %e rm x", { "time", "rm" }, K },
	{ "\\time -v -o out rm x", { "time", "rm" }, K },
	{ "stdbuf -oL rm x", { "stdbuf", "rm" }, K },
	{ "stdbuf -o L -e 0 rm", { "stdbuf", "rm" }, K },
	{ "setsid -f rm", { "setsid", "rm" }, K },
	{ "ls | xargs rm", { "ls", "xargs", "rm" }, K },
	{ "xargs -n 1 -P 4 -I {} rm {}", { "xargs", "rm" }, K },
	{ "xargs -0 -a list -d '\\n' rm", { "xargs", "rm" }, K },
	{ "xargs -I{} {}", { "xargs" }, O },
	{ "xargs -i sh{} x", { "xargs" }, O },
	{ "find . | xargs", { "find", "xargs", "echo" }, K },
	{ "xargs -r -- sudo rm", { "xargs", "sudo", "rm" }, K },
	{ "exec rm x", { "exec", "rm" }, K },
	{ "exec -a name rm x", { "exec", "rm" }, K },
	{ "exec -cl rm", { "exec", "rm" }, K },
	{ "command rm x", { "command", "rm" }, K },
	{ "command -v rm", { "command", "rm" }, K },
	{ "command -V sudo rm", { "command", "sudo" }, K },
	{ "command -p sudo rm", { "command", "sudo", "rm" }, K },
	{ "builtin cd /tmp", { "builtin", "cd" }, K },
	{ "builtin eval ls", { "builtin", "eval", "ls" }, O },
	{ "chroot /srv rm x", { "chroot", "rm" }, K },
	{ "chroot --userspec=u:g /srv rm", { "chroot", "rm" }, K },
	{ "chroot /srv", { "chroot" }, O },
	{ "ionice -c 3 rm x", { "ionice", "rm" }, K },
	{ "ionice -c3 -p 123", { "ionice" }, K },
	{ "chrt -f 10 rm x", { "chrt", "rm" }, K },
	{ "chrt --idle rm x", { "chrt", "rm" }, K },
	{ "chrt -p 10 123", { "chrt" }, K },
	{ "taskset -c 0 rm x", { "taskset", "rm" }, K },
	{ "taskset 0x1 rm", { "taskset", "rm" }, K },
	{ "taskset -p 0x1 123", { "taskset" }, K },
	{ "nsenter -t 1 -m -u rm x", { "nsenter", "rm" }, K },
	{ "nsenter --target=1 --mount --net rm", { "nsenter", "rm" }, K },
	{ "nsenter -t 1 -a", { "nsenter" }, O },
	{ "unshare -r -n rm x", { "unshare", "rm" }, K },
	{ "unshare --map-root-user --net -- rm", { "unshare", "rm" }, K },
	{ "unshare -U", { "unshare" }, O },
	{ "flock /tmp/l rm x", { "flock", "rm" }, K },
	{ "flock -n -w 5 /tmp/l sudo rm", { "flock", "sudo", "rm" }, K },
	{ "flock -w 5 /tmp/l -c 'rm x'", { "flock", "rm" }, O },
	{ "flock 9", { "flock" }, K },
	{ "runuser -u bob -- rm x", { "runuser", "rm" }, K },
	{ "runuser bob -c 'rm x'", { "runuser" }, O },
	{ "runuser -u bob -c 'rm x'", { "runuser", "rm" }, O },
	{ "su -c 'rm -rf /' bob", { "su", "rm" }, O },
	{ "su", { "su" }, O },
	{ "find . -name '*.o' -exec rm {} \\;", { "find", "rm" }, K },
	{ "find . -execdir sudo rm {} +", { "find", "sudo", "rm" }, K },
	{ "find . -ok rm {} ';' -exec ls {} +", { "find", "rm", "ls" }, K },
	{ "find . -exec {} \\;", { "find" }, O },
	{ "find . -exec ./{} \\;", { "find" }, O },
	{ "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
	  { "find", "sh", "rm" }, O },
	{ "find $X", { "find" }, O },
	{ "find . -exec $CMD {} +", { "find" }, O },
	{ "busybox rm x", { "busybox", "rm" }, K },
	{ "busybox sh -c 'rm x'", { "busybox", "sh", "rm" }, O },
	{ "busybox --list", { "busybox" }, K },
	{ "toybox env rm", { "toybox", "env", "rm" }, K },
	{ "strace -f -o log rm x", { "strace", "rm" }, K },
	{ "strace -p 123", { "strace" }, K },
	{ "ltrace -e malloc rm", { "ltrace", "rm" }, K },
	{ "parallel rm ::: a b", { "parallel" }, O },
	{ "script -c 'rm x' log", { "script" }, O },
	{ "watch ls", { "watch" }, O },
	{ "ssh host", { "ssh" }, K },
	{ "ssh -p 22 -i key user@host", { "ssh" }, K },
	{ "ssh host rm -rf /", { "ssh", "rm" }, O },
	{ "ssh -o ProxyCommand='nc %h %p' host", { "ssh" }, O },
	{ "ssh -F cfg host", { "ssh" }, O },
	{ "pkexec rm x", { "pkexec" }, O },
	{ "sudo env X=1 nice -n 5 rm f", { "sudo", "env", "nice", "rm" }, K },
	{ "sudo timeout 5 nohup setsid rm",
	  { "sudo", "timeout", "nohup", "setsid", "rm" }, K },
	{ "nice sudo -u x env rm", { "nice", "sudo", "env", "rm" }, K },
	{ "A=1 sudo B=2 env C=3 rm", { "sudo", "env", "rm" }, K },
	{ "/usr/bin/sudo /bin/rm", { "sudo", "rm" }, K },
};

static const struct tcase interpreters[] = {
	{ "sh -c 'rm -rf /'", { "sh", "rm" }, O },
	{ "bash -c \"$CMD\"", { "bash" }, O },
	{ "bash -xc 'ls; rm x'", { "bash", "ls", "rm" }, O },
	{ "bash script.sh", { "bash" }, K },
	{ "bash -x script.sh arg", { "bash" }, K },
	{ "bash -o errexit +O extglob script", { "bash" }, K },
	{ "bash --norc --rcfile f script", { "bash" }, K },
	{ "bash --version", { "bash" }, K },
	{ "bash", { "bash" }, O },
	{ "echo rm | bash", { "echo", "bash" }, O },
	{ "bash <<< 'rm -rf /'", { "bash" }, O },
	{ "bash -s < f", { "bash" }, O },
	{ "bash -i", { "bash" }, O },
	{ "bash -", { "bash" }, O },
	{ "dash -ec 'ls'", { "dash", "ls" }, O },
	{ "zsh -c ls", { "zsh", "ls" }, O },
	{ "ksh -c x", { "ksh", "x" }, O },
	{ "/bin/sh ./configure --prefix=/usr", { "sh" }, K },
	{ "busybox sh script", { "busybox", "sh" }, K },
	{ "fish -c 'rm'", { "fish" }, O },
	{ "fish script.fish", { "fish" }, K },
	{ "python3 -c 'import os'", { "python3" }, O },
	{ "python3 script.py", { "python3" }, K },
	{ "python3 -u -W ignore script.py", { "python3" }, K },
	{ "python3 -m http.server", { "python3" }, K },
	{ "python3 -V", { "python3" }, K },
	{ "python3", { "python3" }, O },
	{ "python3 -", { "python3" }, O },
	{ "python3.11 -Bc x", { "python3.11" }, O },
	{ "perl -e 'print 1'", { "perl" }, O },
	{ "perl -ne 'print' f", { "perl" }, O },
	{ "perl -lane 'x' f", { "perl" }, O },
	{ "perl -MPOSIX script.pl", { "perl" }, O },
	{ "perl -w script.pl", { "perl" }, K },
	{ "ruby -e 'x'", { "ruby" }, O },
	{ "ruby -w app.rb", { "ruby" }, K },
	{ "node -e 'x'", { "node" }, O },
	{ "node -pe 'x'", { "node" }, O },
	{ "node app.js", { "node" }, K },
	{ "node --max-old-space-size=4096 app.js", { "node" }, K },
	{ "node --inspect-port 1 -e x", { "node" }, O },
	{ "node --unknown-opt 1 app.js", { "node" }, O },
	{ "php -r 'x'", { "php" }, O },
	{ "php -f index.php", { "php" }, K },
	{ "lua -e x", { "lua" }, O },
	{ "lua5.4 script.lua", { "lua5.4" }, K },
	{ "Rscript -e 'x'", { "Rscript" }, O },
	{ "deno eval 'x'", { "deno" }, O },
	{ "deno run app.ts", { "deno" }, K },
	{ "awk '{print $1}' f", { "awk" }, K },
	{ "awk -F: '$1 || $2 {print}' f", { "awk" }, K },
	{ "awk 'BEGIN{system(\"rm -rf /\")}'", { "awk" }, O },
	{ "awk '{print | \"sh\"}'", { "awk" }, O },
	{ "gawk -e '{ \"date\" | getline d }'", { "gawk" }, O },
	{ "awk -f prog.awk f", { "awk" }, K },
	{ "awk \"$PROG\" f", { "awk" }, O },
	{ "awk --sandbox 'BEGIN{system(\"x\")}'", { "awk" }, K },
	{ "sed 's/a/b/' f", { "sed" }, K },
	{ "sed -n '/x/,/y/{p;d}' f", { "sed" }, K },
	{ "sed 's/a/b/e' f", { "sed" }, O },
	{ "sed -n '1e rm -rf /' f", { "sed" }, O },
	{ "sed -e 's/x/y/' -e '2e id' f", { "sed" }, O },
	{ "sed -i.bak 's/a/b/g' *.txt", { "sed" }, K },
	{ "sed f -e '1e rm'", { "sed" }, O },
	{ "sed 's|a|b|w out' f", { "sed" }, K },
	{ "sed --sandbox 's/a/b/e' f", { "sed" }, K },
};

static const struct tcase opaque_cases[] = {
	{ "eval rm x", { "eval", "rm" }, O },
	{ "eval \"$CMD\"", { "eval" }, O },
	{ "eval 'ls; rm x'", { "eval", "ls", "rm" }, O },
	{ "source ./x.sh", { "source" }, O },
	{ ". ./x.sh", { "." }, O },
	{ "trap 'rm -rf /' EXIT", { "trap", "rm" }, O },
	{ "trap - EXIT", { "trap" }, K },
	{ "trap '' INT TERM", { "trap" }, K },
	{ "trap INT", { "trap" }, K },
	{ "trap -l", { "trap" }, K },
	{ "alias ll='ls -l'", { "alias" }, O },
	{ "alias x=rm; x", { "alias", "x" }, O },
	{ "alias", { "alias" }, K },
	{ "hash -p /bin/rm ls; ls", { "hash", "ls" }, O },
	{ "hash -r", { "hash" }, K },
	{ "enable -f ./x.so x", { "enable" }, O },
	{ "mapfile -C 'rm' -c 1 a < f", { "mapfile" }, O },
	{ "mapfile -t lines < f", { "mapfile" }, K },
	{ "complete -C 'rm x' ls", { "complete" }, O },
	{ "bind -x '\"\\C-x\": rm'", { "bind" }, O },
	{ "fc -s", { "fc" }, O },
	{ "jobs -x rm %1", { "jobs" }, O },
	{ "set -k; ls", { "set", "ls" }, O },
	{ "set -e; ls", { "set", "ls" }, K },
	{ "set -o pipefail -x; ls", { "set", "ls" }, K },
	{ "echo ${!x}", { "echo" }, O },
	{ "echo ${x@P}", { "echo" }, O },
	{ "echo ${!} ${#x} ${x#a}", { "echo" }, K },
	{ ": ${PS4:=x}", { ":" }, O },
	{ "unset 'a[$(rm)]'", { "unset" }, O },
	{ "unset x y", { "unset" }, K },
	{ "echo $(( '$(rm)' ))", { "echo" }, O },
	{ "echo $(( $'\\x24(rm)' ))", { "echo" }, O },
	{ "echo ${a['$(rm)']}", { "echo" }, O },
	{ "echo \"${x:-'$(id)'}\"", { "echo" }, O },
	{ "printf -v 'a[$(id)]' x", { "printf" }, O },
	{ "printf '%s $(x)\\n' a", { "printf" }, K },
	{ "[[ -v 'a[$(id)]' ]]", { "[[" }, O },
	{ "test -v 'a[$(id)]'", { "test" }, O },
	{ "let 'a[$(id)]=1'", { "let" }, O },
	{ "x='${HOME}/bin' ls", { "ls" }, K },
	{ "x='use `ls`'", { NULL }, O },
	{ "x=$'\\x24(rm)'", { NULL }, O },
	{ "read 'a[$(id)]' < f", { "read" }, O },
	{ "echo @($(rm))", { "echo" }, O },
	{ "echo $((echo rm) )", { "echo" }, O },
	{ "((rm x) )", { NULL }, O },
	{ "cat <((ls))", { "cat" }, O },
	{ "ls\0rm", { "ls" }, 1, 5 },
};

static const struct tcase command_words[] = {
	{ "$CMD -rf /", { NULL }, O },
	{ "${CMD} x", { NULL }, O },
	{ "$(echo rm) -rf /", { "echo" }, O },
	{ "`echo rm` x", { "echo" }, O },
	{ "\"$X\"", { NULL }, O },
	{ "/bin/r? x", { NULL }, O },
	{ "/bin/r* x", { NULL }, O },
	{ "/bin/[r]m x", { NULL }, O },
	{ "{rm,x}", { NULL }, O },
	{ "r{m,} x", { NULL }, O },
	{ "{1..3}", { NULL }, O },
	{ "~", { NULL }, O },
	{ "~/bin/x", { "x" }, K },
	{ "~root/bin/x -y", { "x" }, K },
	{ "@(rm) x", { NULL }, O },
	{ "!(x) y", { NULL }, O },
	{ "$0 x", { NULL }, O },
	{ "$@", { NULL }, O },
	{ "[ -f x ]", { "[" }, K },
	{ "[", { "[" }, K },
	{ "test -f x", { "test" }, K },
	{ "cd /tmp && ls", { "cd", "ls" }, K },
	{ "export A=1", { "export" }, K },
	{ "read x", { "read" }, K },
	{ "true", { "true" }, K },
	{ "{}", { "{}" }, K },
	{ "/bin/", { NULL }, K },
	{ "./configure && make -j4", { "configure", "make" }, K },
	{ "\"if\" x", { "if" }, K },
	{ "X=1 if", { "if" }, K },
	{ "in x", { "in" }, K },
};

/* Strings meant to hide a program from a careless lexer. */
static const struct tcase attacks[] = {
	{ "echo \"${x:-'}\"; rm -rf /; : \"'}\"", { "echo" }, K },
	{ "echo \\\"; rm -rf /", { "echo", "rm" }, K },
	{ "echo '\\''; rm x", { NULL }, O },
	{ "echo $'\\''; rm x", { "echo", "rm" }, K },
	{ "x=$'\\x27'; rm", { "rm" }, K },
	{ "echo \"$(echo \"$(rm x)\")\"", { "echo", "rm" }, K },
	{ "ls #\"\nrm", { "ls", "rm" }, K },
	{ "echo ${x:-\"}\"}; rm", { "echo", "rm" }, K },
	{ "echo ${x#'}'}; rm", { "echo", "rm" }, K },
	{ "echo $(echo '$(' ); rm", { "echo", "rm" }, K },
	{ "echo `echo \\` rm \\``", { "echo", "rm" }, K },
	{ "a=1\\\n rm x", { "rm" }, K },
	{ "ls\\\n;rm", { "ls", "rm" }, K },
	{ "i\\\nf true; then rm; fi", { "true", "rm" }, K },
	{ "$\\\n(rm)", { "rm" }, O },
	{ "echo $\\\n(rm)", { "echo", "rm" }, K },
	{ "cat <<EOF\nx\nEOF rm\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<-EOF\n\t\tEOF\nrm", { "cat", "rm" }, K },
	{ "cat <<EOF\n  EOF\nrm\nEOF\nls", { "cat", "ls" }, K },
	{ "cat <<E'OF'\n$(rm)\nE'OF'\nEOF\nls", { "cat", "ls" }, K },
	{ "echo $(cat <<'X'\n)\nX\n); rm y", { "echo", "cat", "rm" }, K },
	{ "echo \"$(cat <<X\n\"\nX\n)\"; rm", { "echo", "cat", "rm" }, K },
	{ "f=(a b); ${f[0]} x", { NULL }, O },
	{ "case x in a) ;; esac; rm", { "rm" }, K },
	{ "case \"esac\" in esac) rm;; esac", { NULL }, O },
	{ "case esac in (esac) rm;; esac", { "rm" }, K },
	{ "echo { rm x; }", { "echo" }, O },
	{ "{ echo }; rm }", { "echo", "rm" }, O },
	{ "[[ x == ]] ]]; rm", { "[[" }, O },
	{ "[[ x =~ a\\ ]] ]]; rm", { "[[", "rm" }, K },
	{ "cat <<EOF\n$(cat <<EOF2\nrm\nEOF2\n)\nEOF\nid",
	  { "cat", "id" }, K },
	{ "true `#`; rm", { "true", "rm" }, K },
	{ "echo $(( 1 #\n)); rm", { "echo", "rm" }, K },
	{ "sudo -u root -- \"$@\"", { "sudo" }, O },
	{ "sudo -u \"$U\" rm", { "sudo", "rm" }, K },
	{ "env \"$N=x\" bash s", { "env" }, O },
	{ "timeout $T rm", { "timeout" }, O },
	{ "nice -n $N rm", { "nice" }, O },
	{ "nice -n \"$N\" rm", { "nice", "rm" }, K },
	{ "exec {fd}<>/dev/tcp/h/80", { "exec" }, K },
	{ "ls > >(rm) 2> >(id)", { "ls", "rm", "id" }, K },
	{ "echo $'\\101' `echo $'\\x60'`", { "echo" }, K },
};

#define CW_ARRAY_SIZE_T(a) (sizeof(a) / sizeof((a)[0]))

#define ALL_TABLES(X)                                                         \
	X(quoting) X(lists) X(substitutions) X(compound) X(assignments)       \
	X(heredocs) X(wrappers) X(interpreters) X(opaque_cases)               \
	X(command_words) X(attacks)

static void describe(const struct cw_shlex *s, char *buf, size_t len)
{
	size_t i, o = 0;

	o += (size_t)snprintf(buf + o, len - o, "[");
	for (i = 0; i < s->nprograms && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "",
				      s->programs[i]);
	if (o < len)
		snprintf(buf + o, len - o, "] opaque=%d", s->opaque);
}

static void expected(const struct tcase *t, char *buf, size_t len)
{
	size_t i, o = 0;

	o += (size_t)snprintf(buf + o, len - o, "[");
	for (i = 0; i < CW_ARRAY_SIZE_T(t->progs) && t->progs[i] && o < len;
	     i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "",
				      t->progs[i]);
	if (o < len)
		snprintf(buf + o, len - o, "] opaque=%d", t->opaque);
}

static size_t input_len(const struct tcase *t)
{
	return t->len ? t->len : strlen(t->in);
}

static int run_table(const struct tcase *t, size_t n, const char *name)
{
	char want[512], got[512];
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		struct cw_shlex s;
		int err = cw_shlex_analyze(t[i].in, input_len(&t[i]), &s);

		if (err) {
			print_error("%s[%zu] %s: error %d\n", name, i, t[i].in,
				    err);
			bad++;
			continue;
		}
		expected(&t[i], want, sizeof(want));
		describe(&s, got, sizeof(got));
		if (strcmp(want, got)) {
			print_error("%s[%zu] <<%s>>\n  want %s\n"
				    "  got  %s (%s)\n",
				    name, i, t[i].in, want, got, s.why);
			bad++;
		}
		/* why is set exactly when the result is opaque */
		if (s.opaque != (s.why[0] != '\0')) {
			print_error("%s[%zu] why \"%s\" with opaque=%d\n",
				    name, i, s.why, s.opaque);
			bad++;
		}
		cw_shlex_free(&s);
	}
	return bad;
}

#define DEFINE_TABLE_TEST(t)                                                  \
	static void test_##t(void **state)                                    \
	{                                                                     \
		(void)state;                                                  \
		assert_int_equal(0, run_table(t, CW_ARRAY_SIZE_T(t), #t));    \
	}
ALL_TABLES(DEFINE_TABLE_TEST)

static void test_table_size(void **state)
{
	size_t n = 0;

	(void)state;
#define COUNT(t) n += CW_ARRAY_SIZE_T(t);
	ALL_TABLES(COUNT)
#undef COUNT
	assert_true(n >= 150);
}

/* The outcome of one analysis, copied so the result can be freed before
 * any assertion runs. */
struct outcome {
	int err;
	size_t n;
	bool opaque;
	char why[sizeof(((struct cw_shlex *)0)->why)];
	char first[64];
	char last[64];
};

static void analyze(const char *in, size_t len, struct outcome *o)
{
	struct cw_shlex s;

	memset(o, 0, sizeof(*o));
	o->err = cw_shlex_analyze(in, len, &s);
	if (o->err)
		return;
	o->n = s.nprograms;
	o->opaque = s.opaque;
	memcpy(o->why, s.why, sizeof(o->why));
	if (s.nprograms) {
		snprintf(o->first, sizeof(o->first), "%s", s.programs[0]);
		snprintf(o->last, sizeof(o->last), "%s",
			 s.programs[s.nprograms - 1]);
	}
	cw_shlex_free(&s);
}

static void analyze_str(const char *in, struct outcome *o)
{
	analyze(in, strlen(in), o);
}

static void test_why_texts(void **state)
{
	struct outcome o;

	(void)state;
	analyze_str("eval x", &o);
	assert_int_equal(0, o.err);
	assert_true(o.opaque);
	assert_non_null(strstr(o.why, "eval"));
	analyze_str("ls", &o);
	assert_false(o.opaque);
	assert_string_equal("", o.why);
	/* the first reason is kept */
	analyze_str("$X; eval y", &o);
	assert_string_equal("command word contains an expansion", o.why);
	analyze_str("echo $(rm -rf /)", &o);
	assert_int_equal(2, o.n);
	assert_string_equal("echo", o.first);
	assert_string_equal("rm", o.last);
}

static void test_null_and_free(void **state)
{
	struct cw_shlex s;
	struct outcome o;

	(void)state;
	memset(&s, 0, sizeof(s));
	cw_shlex_free(&s);
	cw_shlex_free(NULL);
	analyze(NULL, 0, &o);
	assert_int_equal(0, o.err);
	assert_int_equal(0, o.n);
	assert_false(o.opaque);
	assert_int_equal(-EINVAL, cw_shlex_analyze("ls", 2, NULL));
	/* len bounds the input; no terminator needed */
	analyze("lsof", 2, &o);
	assert_int_equal(1, o.n);
	assert_string_equal("ls", o.first);
	/* bash sees the text before a NUL only */
	analyze("ls\0rm", 5, &o);
	assert_int_equal(1, o.n);
	assert_true(o.opaque);
	assert_string_equal("NUL byte in command", o.why);
}

/* ---------------------------------------------------------------------- */
/* Bounds                                                                  */

static char *repeat(const char *unit, size_t times, const char *tail,
		    size_t *len)
{
	size_t ul = strlen(unit), tl = strlen(tail), i;
	char *p = malloc(ul * times + tl + 1);

	assert_non_null(p);
	for (i = 0; i < times; i++)
		memcpy(p + i * ul, unit, ul);
	memcpy(p + ul * times, tail, tl + 1);
	*len = ul * times + tl;
	return p;
}

static void test_input_too_long(void **state)
{
	size_t len = 2u << 20;
	char *p = malloc(len);
	struct outcome big, limit;

	(void)state;
	assert_non_null(p);
	memset(p, 'a', len);
	analyze(p, len, &big);
	/* exactly the limit is still read */
	memcpy(p, "ls #", 4);
	analyze(p, CW_SHLEX_MAX_INPUT, &limit);
	free(p);
	assert_int_equal(0, big.err);
	assert_true(big.opaque);
	assert_string_equal("input too long", big.why);
	assert_int_equal(0, big.n);
	assert_int_equal(0, limit.err);
	assert_false(limit.opaque);
	assert_int_equal(1, limit.n);
}

static void expect_deep(const char *unit, const char *tail, const char *why)
{
	struct outcome o;
	size_t len;
	char *p = repeat(unit, 10000, tail, &len);

	analyze(p, len, &o);
	free(p);
	if (strcmp(why, o.why))
		print_error("unit <<%s>>: why=%s\n", unit, o.why);
	assert_int_equal(0, o.err);
	assert_true(o.opaque);
	assert_string_equal(why, o.why);
	assert_true(o.n <= CW_SHLEX_MAX_PROGRAMS);
}

static void test_deep_nesting(void **state)
{
	const char *deep = "nesting too deep";

	(void)state;
	expect_deep("$(", "", deep);
	expect_deep("echo $(", "rm", deep);
	expect_deep("( ", "ls", deep);
	expect_deep("{ ", "ls", deep);
	expect_deep("\"$(", "", deep);
	expect_deep("${x:-", "", deep);
	expect_deep("if true; then ", "", deep);
	expect_deep("<(", "", deep);
	expect_deep("a=(", "", deep);
	expect_deep("f() { ", "", deep);
	expect_deep("case x in x) ", "", deep);
	expect_deep("\"${x:-\"", "", deep);
	expect_deep("sh -c 'eval ", "", "sh -c runs a command string");
	expect_deep("[[ ( ", "", "syntax error: [[ without ]]");
	expect_deep("$((", "", deep);
	/* brackets bash only counts: no recursion at all */
	expect_deep("((a+", "", "syntax error: unterminated bracket");
	expect_deep("(", "ls", "syntax error: unterminated bracket");
	expect_deep("@(", "", "syntax error: unterminated bracket");
}

static void test_deep_nesting_legal(void **state)
{
	char p[4 * 60 + 64];
	struct outcome o;
	size_t len = 0, i;

	(void)state;
	/* 60 levels of $( ) are within the bound */
	for (i = 0; i < 60; i++) {
		memcpy(p + len, "a $(", 4);
		len += 4;
	}
	p[len++] = 'r';
	p[len++] = 'm';
	for (i = 0; i < 60; i++)
		p[len++] = ')';
	analyze(p, len, &o);
	if (o.opaque)
		print_error("why: %s\n", o.why);
	assert_int_equal(0, o.err);
	assert_false(o.opaque);
	assert_int_equal(2, o.n);
	assert_string_equal("a", o.first);
	assert_string_equal("rm", o.last);
}

static void test_many_programs(void **state)
{
	size_t cap = 100000 * 12, len = 0, i;
	char *p = malloc(cap);
	struct outcome o;

	(void)state;
	assert_non_null(p);
	for (i = 0; i < 100000; i++)
		len += (size_t)snprintf(p + len, cap - len, "p%zu;", i);
	analyze(p, len, &o);
	free(p);
	assert_int_equal(0, o.err);
	assert_true(o.opaque);
	assert_string_equal("too many programs", o.why);
	assert_int_equal(CW_SHLEX_MAX_PROGRAMS, o.n);
	assert_string_equal("p0", o.first);
	assert_string_equal("p4095", o.last);
}

static void test_many_same_program(void **state)
{
	struct outcome o;
	size_t len;
	char *p = repeat("ls|", 100000, "ls", &len);

	(void)state;
	analyze(p, len, &o);
	free(p);
	assert_int_equal(0, o.err);
	assert_false(o.opaque);
	assert_int_equal(1, o.n);
	assert_string_equal("ls", o.first);
}

static void finish_opaque_or_not(const char *unit, const char *tail,
				 size_t times)
{
	struct outcome o;
	size_t len;
	char *p = repeat(unit, times, tail, &len);

	analyze(p, len, &o);
	free(p);
	assert_int_equal(0, o.err);
	assert_true(o.n <= CW_SHLEX_MAX_PROGRAMS);
	assert_int_equal(o.opaque, o.why[0] != '\0');
}

/* Shapes that could make a careless lexer quadratic: they must finish. */
static void test_large_inputs(void **state)
{
	(void)state;
	finish_opaque_or_not("a", "", CW_SHLEX_MAX_INPUT);
	finish_opaque_or_not("'", "", CW_SHLEX_MAX_INPUT);
	finish_opaque_or_not("\\\n", "ls", CW_SHLEX_MAX_INPUT / 2 - 2);
	finish_opaque_or_not("cat <<E\n", "", 100000);
	finish_opaque_or_not("cat <<E;", "\nE\n", 16);
	finish_opaque_or_not("echo `echo \\`", "", 50000);
	finish_opaque_or_not("((", "", 400000);
	finish_opaque_or_not("$((", "", 300000);
	finish_opaque_or_not("\"", "", CW_SHLEX_MAX_INPUT);
	finish_opaque_or_not("x=(", "", 300000);
	finish_opaque_or_not("${", "", 400000);
	finish_opaque_or_not("f(){ :;};", "f", 100000);
	finish_opaque_or_not("sh -c ", "ls", 100000);
	finish_opaque_or_not("a ", "", 500000);
	finish_opaque_or_not("$'\\x41", "'", 100000);
}

/* A payload chain: each level is parsed again, within the budget. */
static void test_nested_payloads(void **state)
{
	struct outcome o;

	(void)state;
	analyze_str("sh -c 'sh -c \"sh -c \\\"rm x\\\"\"'", &o);
	assert_int_equal(0, o.err);
	assert_true(o.opaque);
	assert_int_equal(2, o.n);
	assert_string_equal("sh", o.first);
	assert_string_equal("rm", o.last);
}

/* ---------------------------------------------------------------------- */
/* Fuzzing                                                                 */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static void check_consistent(const char *in, size_t len)
{
	struct cw_shlex s;
	size_t i;
	int err = cw_shlex_analyze(in, len, &s);

	assert_int_equal(0, err);
	assert_true(s.nprograms <= CW_SHLEX_MAX_PROGRAMS);
	assert_true(s.nprograms == 0 || s.programs != NULL);
	assert_int_equal(s.opaque, s.why[0] != '\0');
	assert_non_null(memchr(s.why, '\0', sizeof(s.why)));
	for (i = 0; i < s.nprograms; i++) {
		size_t k;

		assert_non_null(s.programs[i]);
		assert_true(s.programs[i][0] != '\0');
		assert_null(strchr(s.programs[i], '/'));
		for (k = 0; k < i; k++)
			assert_string_not_equal(s.programs[k], s.programs[i]);
	}
	cw_shlex_free(&s);
}

static void test_fuzz_random(void **state)
{
	static const char alphabet[] =
		"ab rm$(){}[]<>|&;'\"`\\\n\t#=~*?!@+-,.:%^/0123456789EOF"
		"$(($((<<<<-";
	char buf[96];
	int iter;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (iter = 0; iter < 20000; iter++) {
		size_t len = rng() % sizeof(buf), i;
		bool bytes = rng() % 4 == 0;

		for (i = 0; i < len; i++)
			buf[i] = bytes ? (char)(rng() & 0xff) :
					 alphabet[rng() %
						  (sizeof(alphabet) - 1)];
		check_consistent(buf, len);
	}
}

static void mutate_table(const struct tcase *t, size_t n)
{
	static const char pick[] = "$(){}[]<>|&;'\"`\\\n #=*!";
	char buf[256];
	size_t i;
	int m;

	for (i = 0; i < n; i++) {
		size_t base = input_len(&t[i]);

		if (base >= sizeof(buf) - 8)
			continue;
		for (m = 0; m < 40; m++) {
			size_t len = base, pos, k, edits = 1 + rng() % 3;

			memcpy(buf, t[i].in, base);
			for (k = 0; k < edits; k++) {
				pos = len ? rng() % (len + 1) : 0;
				switch (rng() % 3) {
				case 0:	/* insert */
					if (len + 1 >= sizeof(buf))
						break;
					memmove(buf + pos + 1, buf + pos,
						len - pos);
					buf[pos] = pick[rng() %
							(sizeof(pick) - 1)];
					len++;
					break;
				case 1:	/* delete */
					if (pos < len) {
						memmove(buf + pos,
							buf + pos + 1,
							len - pos - 1);
						len--;
					}
					break;
				default: /* replace */
					if (pos < len)
						buf[pos] = (char)(rng() & 0xff);
					break;
				}
			}
			check_consistent(buf, len);
		}
	}
}

static void test_fuzz_mutations(void **state)
{
	(void)state;
	rng_state = 0x2545f4914f6cdd1dULL;
#define MUTATE(t) mutate_table(t, CW_ARRAY_SIZE_T(t));
	ALL_TABLES(MUTATE)
#undef MUTATE
}

int main(void)
{
#define ENTRY(t) cmocka_unit_test(test_##t),
	const struct CMUnitTest tests[] = {
		ALL_TABLES(ENTRY)
		cmocka_unit_test(test_table_size),
		cmocka_unit_test(test_why_texts),
		cmocka_unit_test(test_null_and_free),
		cmocka_unit_test(test_input_too_long),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_deep_nesting_legal),
		cmocka_unit_test(test_many_programs),
		cmocka_unit_test(test_many_same_program),
		cmocka_unit_test(test_large_inputs),
		cmocka_unit_test(test_nested_payloads),
		cmocka_unit_test(test_fuzz_random),
		cmocka_unit_test(test_fuzz_mutations),
	};
#undef ENTRY

	return cmocka_run_group_tests_name("shlex", tests, NULL, NULL);
}
