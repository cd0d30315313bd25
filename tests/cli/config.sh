#!/usr/bin/env bash
# .preemptify.toml: found by walking up from the first PATH, --config,
# --no-config, each key, the command line winning, errors naming file:line.
. "$(dirname "$0")/lib.sh"

mkdir -p proj/sub/drv proj/other
cp "$SRC/fixtures/drivers/char/lp_poll.c" proj/sub/drv/lp.c   # P004 only
cat >proj/other/c.c <<'EOC'
int seen[32];
void f(void)
{
	int cpu = smp_processor_id();
	seen[cpu] = 1;
}
EOC

run scan -q proj; expect_rc 1 "no config: findings"
expect_out '\[P004(, fixable)?\]$' "P004 in lp.c"; expect_out '\[P003(, fixable)?\]$' "P003 in c.c"

# discovery: the nearest file above the first PATH
cat >proj/.preemptify.toml <<'EOC'
# the project's defaults
ignore = ["P004"]   # reschedule checks: done by hand
EOC
run scan -q proj/sub/drv; expect_rc 0 "found by walking up from the PATH"
run scan -q proj/sub/drv/lp.c; expect_rc 0 "walking up from a file PATH"
(cd proj/sub && "$BIN" scan -q drv >/dev/null); rc=$?; expect_rc 0 "walking up from a relative PATH"
run scan -q --no-config proj/sub/drv; expect_rc 1 "--no-config"
printf 'ignore = ["P003"]\n' >proj/sub/.preemptify.toml
run scan -q proj/sub/drv; expect_rc 1 "the nearest file wins (it does not ignore P004)"
rm proj/sub/.preemptify.toml
run scan -q --ignore P003 proj; expect_rc 0 "lists add up: the file's ignore and --ignore"

# --config FILE
printf 'exclude = [\n  "lp.c",   # a list over lines\n  "nothing*",\n]\n' >excl.toml
run scan --config excl.toml proj/sub/drv; expect_rc 0 "--config: exclude"
expect_err 'in 0 files( \(|$)' "excluded by the file's glob"

# may_sleep
cat >proj/other/ms.c <<'EOC'
void board_wait(void);
int board_seen[32];
void board_poll(void)
{
	int cpu = smp_processor_id();
	board_wait();
	board_seen[cpu]++;
}
EOC
printf 'may_sleep = ["board_wait"]\n' >ms.toml
run scan -v --config ms.toml proj/other/ms.c
expect_out 'board_wait\(\) .*may sleep' "may_sleep: the call is reported as sleeping"
run scan -v --no-config proj/other/ms.c; expect_no_out 'board_wait\(\) .*may sleep' "without the file it is not"
run explain --config ms.toml proj/other/ms.c; expect_out 'board_wait\(\) .*may sleep' "explain: may_sleep from --config"
run explain proj/other/ms.c; expect_no_out 'board_wait\(\) .*may sleep' "explain: no config, no sleeper"
# a key may be spelled with - for _, as the option is (--may-sleep)
printf 'may-sleep = ["board_wait"]\n' >ms-dash.toml
run scan -v --config ms-dash.toml proj/other/ms.c; expect_rc 1 "may-sleep read"
expect_out 'board_wait\(\) .*may sleep' "may-sleep is may_sleep"

# [ignore-paths]: globs relative to the file's directory
cp proj/other/c.c proj/sub/c2.c
cat >proj/.preemptify.toml <<'EOC'
[ignore_paths]
"sub/drv/*" = ["P004"]
"other/*.c" = ["cpu-id"]
EOC
run scan -q proj/sub/drv; expect_rc 0 "[ignore_paths] is [ignore-paths]"
cat >proj/.preemptify.toml <<'EOC'
[ignore-paths]
"sub/drv/*" = ["P004"]
"other/*.c" = ["cpu-id"]
EOC
run scan -q proj; expect_rc 1 "[ignore-paths] leaves other paths"
expect_out '^proj/sub/c2\.c:.*\[P003(, fixable)?\]$' "cpu-id still reported outside other/"
expect_no_out 'lp\.c:.*\[P004(, fixable)?\]$' "P004 ignored under sub/drv"
expect_no_out 'c\.c:.*\[P003(, fixable)?\]$' "cpu-id ignored under other"
run scan -q proj/sub/drv; expect_rc 0 "[ignore-paths] from a PATH below the file"
# explain reads the same file: it names the ignore instead of hiding the site
run explain proj/sub/drv/lp.c; expect_rc 0 "explain: the only site is ignored by the config"
expect_out '^  config: .*proj/\.preemptify\.toml ignores P004 in "sub/drv/\*"' "explain names the file and glob"
run explain --no-config proj/sub/drv/lp.c; expect_rc 0 "explain --no-config: the site is flagged"; expect_out ": flagged \(" "explain --no-config: the site is flagged (flagged)"
expect_no_out '^  config:' "no config line without the file"
run scan --format json proj/sub/drv; expect_out '"P004": 0' "JSON stats count what was reported"

# baseline: relative to the file's directory; --baseline wins
run scan -q --no-config --write-baseline proj/base.txt proj; expect_rc 0 "a baseline"
printf 'baseline = "base.txt"\n' >proj/.preemptify.toml
run scan -q proj; expect_rc 0 "baseline from the file"
printf '# preemptify baseline 1\n' >empty.txt
run scan -q --baseline empty.txt proj; expect_rc 1 "--baseline wins over the file's"

# strict_stats
printf 'int hits[NR_CPUS];\nvoid g(void)\n{\n\thits[smp_processor_id()]++;\n}\n' >proj/other/st.c
run scan -v --no-config --format json proj/other/st.c; expect_out '"rule": "P002".*"fix": "none"' "statistics counter left bare by default"
printf 'strict_stats = true\n' >st.toml
run scan -v --config st.toml --format json proj/other/st.c; expect_out '"rule": "P002".*"fix": "get-cpu"' "strict_stats = true fixes it"

# errors: file and line, exit 2
printf '# ok\nignore = ["P004"]\ncolour = "red"\n' >proj/.preemptify.toml
run scan proj; expect_rc 2 "unknown key"
expect_err "^preemptify scan: .*proj/\.preemptify\.toml:3: unknown key 'colour'" "names file and line"
expect_no_err "did you mean" "no guess for a word that is none of ours"
printf 'ignore = ["P004"]\nmaysleep = ["board_wait"]\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "a mistyped key"
expect_err "^preemptify scan: bad\.toml:2: unknown key 'maysleep'; did you mean 'may_sleep'\?$" "the nearest key, file and line"
printf 'strict-statz = true\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "a mistyped key spelled with -"
expect_err "bad\.toml:1: unknown key 'strict-statz'; did you mean 'strict_stats'\?" "named as written"
printf '[ignore-path]\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "a mistyped section"
expect_err "bad\.toml:1: unknown section \[ignore-path\]; did you mean \[ignore-paths\]\?" "the section"
printf 'exclude = ["a",\n  "b\n]\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "unterminated string"; expect_err 'bad\.toml:2: unterminated string' "its line"
printf 'ignore = ["P042"]\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "unknown rule"; expect_err "bad\.toml:1: unknown rule 'P042'" "named"
printf 'target = "2.4"\n' >bad.toml
run diff --config bad.toml proj; expect_rc 2 "a bad target"; expect_err 'bad\.toml:1: .target. must be "2\.6" or "modern"' "named"
printf 'ignore = "P004"\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "a string for a list"; expect_err "bad\.toml:1: 'ignore' must be a list of strings" "named"
printf '[[ignore-path]]\nglob = "x"\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "arrays of tables"; expect_err 'bad\.toml:1: arrays of tables' "named"
printf 'ignore = ["P004"] x\n' >bad.toml
run scan --config bad.toml proj; expect_rc 2 "junk after a value"; expect_err 'bad\.toml:1: expected the end of the line' "named"
run scan --config missing.toml proj; expect_rc 2 "a missing --config file"; expect_err 'missing\.toml' "named"
run scan --no-config proj; expect_rc 1 "--no-config skips a bad file"

# target: the rewrite's API generation; --target wins
have spatch "target" || { finish; exit $?; }
rm proj/.preemptify.toml
mkdir fl && cp "$SRC/fixtures/drivers/block/floppy_switch.c" fl/
printf 'target = "modern"\n' >fl/.preemptify.toml
run diff fl; expect_rc 1 "diff with target from the file"; expect_out '^\+.*this_cpu_inc\(fd_stats\.polls\)' "target = modern"
run explain fl/floppy_switch.c; expect_out 'this_cpu_inc\(fd_stats\.polls\)' "explain: the fix planned for the file's target"
run diff --target 2.6 fl; expect_out '^\+.*__get_cpu_var\(fd_stats\)\.polls\+\+' "--target wins"
finish
