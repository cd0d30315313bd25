#!/usr/bin/env bash
# preemptify completion bash|zsh: a script generated from the command and
# option tables; sourced in bash it completes commands, each command's long
# options, option values (--format, --target, --ignore, ...) and operands.
. "$(dirname "$0")/lib.sh"

run completion bash; expect_rc 0 "completion bash"
printf '%s\n' "$out" >preemptify.bash
run completion; expect_rc 2 "completion without a shell"
run completion fish; expect_rc 2 "completion of an unknown shell"; expect_err "bash or zsh" "the shells are named"
run completion zsh; expect_rc 0 "completion zsh"; expect_out '^autoload -U \+X bashcompinit && bashcompinit$' "zsh through bashcompinit"

spec=$(bash -c '. ./preemptify.bash && complete -p preemptify')
[ "$spec" = "complete -o filenames -F _preemptify preemptify" ] && ok || { out=$spec; bad "complete -p preemptify"; }

# reply WORD...: COMPREPLY (sorted, one line) for the command line WORD... with the cursor on the last word
reply() {
	bash -c '. ./preemptify.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _preemptify; printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" "' \
		reply preemptify "$@"
}
# expect_reply EXPECTED WORD...
expect_reply() {
	local want=$1 got
	shift
	got=$(reply "$@")
	[ "$got" = "$want" ] && ok || { rc=; out=$got; err=; bad "completing '$*': expected '$want'"; }
}

expect_reply "scan series" s
expect_reply "commit completion" co
expect_reply "--format" scan --fo
expect_reply "--group" commit --gr
expect_reply "--quiet" series --qu
expect_reply "json sarif text" scan --format ""
expect_reply "json" scan -f j
expect_reply "2.6 modern" diff --target ""
expect_reply "2.6 modern" diff --target =
expect_reply "modern" apply --target = m   # bash splits --target=m at the =
expect_reply "always auto never" diff --color ""
expect_reply "file" commit --group f
expect_reply "none subsystem" series --split-by ""
expect_reply "subsystem" series --split-by s
expect_reply "$("$BIN" rules | grep -oE '^P[0-9]{3}' | tr '\n' ' ' | sed 's/ $//')" rules P
expect_reply "P006" scan --ignore P006
expect_reply "bash zsh" completion ""
expect_reply "diff" help di
mkdir -p drivers/net && touch drivers/net/a.c
expect_reply "drivers" scan dri
expect_reply "drivers/net" diff --context-root drivers/n
expect_reply "" scan -j ""

# every option of scan's --help completes
run scan --help
for o in $(printf '%s\n' "$out" | grep -Eo -- '--[a-z][a-z-]+' | sort -u); do
	[ "$(reply scan "$o")" = "$o" ] && ok || { rc=; err=; bad "scan $o does not complete"; }
done
finish
