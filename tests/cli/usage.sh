#!/usr/bin/env bash
# Command dispatch, --help/--version, usage errors (exit 2, one line naming the option).
. "$(dirname "$0")/lib.sh"

run; expect_rc 2 "no command"; expect_err '^usage: preemptify COMMAND' "no command prints usage"
run --help; expect_rc 0 "--help"; expect_out '^  scan +' "--help lists scan"
expect_out '^  explain +' "--help lists explain"; expect_out '^  rules +' "--help lists rules"
expect_no_out '^  [a-z]+ [A-Z]' "--help: every command's summary stands apart from its name"
run help; expect_rc 0 "help alone"; expect_out '^usage:' "help alone prints usage"
run --version; expect_rc 0 "--version"; expect_out '^preemptify [0-9]+\.[0-9]+\.[0-9]+$' "--version format"

for cmd in scan explain rules; do
	run "$cmd" --help; expect_rc 0 "$cmd --help"; expect_out "^usage: preemptify $cmd " "$cmd --help usage line"
	expect_out '^  -h, --help' "$cmd --help lists -h"
	help1=$out
	run help "$cmd"; expect_rc 0 "help $cmd"
	if [ "$out" = "$help1" ]; then ok; else bad "help $cmd equals $cmd --help"; fi
done
for cmd in scan diff apply commit series explain rules completion; do
	run "$cmd" --help
	expect_no_out '\(repeatable\).*\(repeatable\)' "$cmd --help says (repeatable) once per option"
done
run series --help
expect_out '^      --to ADDR\[,\.\.\.\] +a To: header in every mail \(repeatable\)$' "series --help: --to is repeatable"
run scan --help
expect_out '^  -f, --format text\|json\|sarif' "scan --help lists --format and its values"
expect_out '^  -j, --jobs N' "scan --help lists -j"
expect_out '^      --exclude GLOB\[,\.\.\.\]' "scan --help lists --exclude"
expect_out '^      --ignore RULES\[,\.\.\.\]' "scan --help lists --ignore"
expect_out '^  -v, --verbose' "scan --help lists --verbose"
expect_out '^  -o, --output FILE' "scan --help lists --output"

run frobnicate; expect_rc 2 "unknown command"
expect_err "unknown command 'frobnicate'" "unknown command named"; expect_err_lines 1 "unknown command: one line"
run scna x.c; expect_rc 2 "misspelt command"; expect_err "did you mean 'scan'" "misspelling hint"
run help nosuch; expect_rc 2 "help of an unknown command"
run --frob; expect_rc 2 "unknown global option"
expect_err "unknown option '--frob' before the command" "named"; expect_no_err "did you mean" "no guess"
run --versio; expect_rc 2 "a mistyped --version"
expect_err "^preemptify: unknown option '--versio'; did you mean '--version'\?" "did you mean --version"
run sacn x.c; expect_rc 2 "two letters swapped"; expect_err "did you mean 'scan'" "one edit from scan"

clean_c ok.c
run scan --bogus ok.c; expect_rc 2 "unknown option"
expect_err "^preemptify scan: unknown option '--bogus'" "unknown option named"; expect_err_lines 1 "one line"
run scan --format xml ok.c; expect_rc 2 "bad --format"
expect_err "option '--format': unknown format 'xml'" "bad format named"; expect_err_lines 1 "one line"
run scan -j; expect_rc 2 "-j without N"; expect_err "option '-j' needs an argument" "-j named"
run scan --jobs=lots ok.c; expect_rc 2 "non-integer -j"; expect_err "option '--jobs' expects an integer, got 'lots'" "--jobs named"
run scan -j -3 ok.c; expect_rc 2 "negative -j"; expect_err "option '--jobs' must be between" "range named"
run scan --verbose=1 ok.c; expect_rc 2 "flag with a value"; expect_err "option '--verbose' takes no argument" "flag named"
run scan --ignore P009 ok.c; expect_rc 2 "unknown rule"; expect_err "option '--ignore': unknown rule 'P009'" "rule named"
run scan; expect_rc 2 "scan without PATH"; expect_err "no PATH given" "no PATH"
run explain; expect_rc 2 "explain without FILE:LINE"
run explain ok.c:x; expect_rc 2 "explain of neither FILE nor FILE:LINE"; expect_err "expected one FILE or FILE:LINE" "explain usage"
run scan --contxt-root . ok.c; expect_rc 2 "a mistyped option"
expect_err "^preemptify scan: unknown option '--contxt-root'; did you mean '--context-root'\?" "did you mean the nearest option"
run scan --frobnicate ok.c; expect_rc 2 "an option nothing like ours"
expect_no_out "did you mean" "no guess for an unrelated word"
if printf '%s\n' "$err" | grep -q "did you mean"; then bad "no guess for an unrelated word (stderr)"; else ok; fi
run explain ok.c:0; expect_rc 2 "explain line 0"
run rules P042; expect_rc 2 "rules with an unknown rule"; expect_err "unknown rule 'P042'" "rules names it"
finish
