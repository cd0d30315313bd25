#!/usr/bin/env bash
# --exclude globs and the config's paths as users type them, from the top of
# the tree and from its subdirectories: "." and ".." roots (files walked
# from "." are spelled without "./"), "./" prefixes,
# hidden directories, [ignore-paths] keyed from the config's directory.
. "$(dirname "$0")/lib.sh"

site_c() {
	mkdir -p "$(dirname "$1")"
	printf '#include <linux/smp.h>\nvoid note(int cpu);\n\nvoid f(void)\n{\n\tnote(smp_processor_id());\n}\n' >"$1"
}
site_c t/drivers/net/a.c
site_c t/drivers/char/b.c
site_c t/arch/x/c.c
site_c t/.git/d.c
site_c t/.pc/e.c
site_c t/.hidden.c

# files: the scanned files, from the text output's finding lines
files() { printf '%s\n' "$out" | sed -n 's/:[0-9]*:[0-9]*: warning: .*//p' | sort -u | tr '\n' ' '; }
# at DIR ARGS...: run from DIR
at() { local d=$1; shift; (cd "$d" && "$BIN" "$@" >"$WORK/.out" 2>"$WORK/.err"); rc=$?; out=$(cat "$WORK/.out"); err=$(cat "$WORK/.err"); }
want_files() { if [ "$(files)" = "$1" ]; then ok; else bad "$2: files '$(files)', want '$1'"; fi; }

# '.*' skips hidden files and directories, never the root the user named
at t scan --no-config --exclude '.*' .; expect_rc 1 "--exclude '.*' .: findings"
want_files "arch/x/c.c drivers/char/b.c drivers/net/a.c " "--exclude '.*' ."
at t scan --no-config --exclude '.*' ./; want_files "arch/x/c.c drivers/char/b.c drivers/net/a.c " "--exclude '.*' ./"
at t/drivers scan --no-config --exclude '.*' ..; expect_rc 1 "--exclude '.*' .. from a subdirectory: findings"
want_files "../arch/x/c.c ../drivers/char/b.c ../drivers/net/a.c " "--exclude '.*' .. from a subdirectory"
at t/drivers/net scan --no-config --exclude '.*' ../../arch ../char
want_files "../../arch/x/c.c ../char/b.c " "--exclude '.*' ../../arch ../char"
at t scan --no-config --exclude '.*' ./drivers/char/b.c .hidden.c; want_files "./drivers/char/b.c " "a named file: '.*' only skips the hidden one"
at t scan --no-config --exclude '.git' --exclude .pc .; want_files ".hidden.c arch/x/c.c drivers/char/b.c drivers/net/a.c " "--exclude .git --exclude .pc"
# a directory glob, from the top and from below
at t scan --no-config --exclude 'drivers/net' .; want_files ".git/d.c .hidden.c .pc/e.c arch/x/c.c drivers/char/b.c " "--exclude drivers/net from the top"
at t/drivers scan --no-config --exclude 'net' .; want_files "char/b.c " "--exclude net from drivers/"
at t/drivers scan --no-config --exclude 'drivers/net/*' ..; want_files "../.git/d.c ../.hidden.c ../.pc/e.c ../arch/x/c.c ../drivers/char/b.c " "--exclude drivers/net/* from drivers/ with .."
at t/drivers scan --no-config --exclude '*.c' .; expect_rc 0 "--exclude '*.c': nothing to scan"
expect_err 'in 0 files' "--exclude '*.c': 0 files"

# the config at the top of the tree, used from its subdirectories
cat >t/.preemptify.toml <<'T'
exclude = ["arch/*", ".*"]

[ignore-paths]
"drivers/net/*" = ["P003"]
T
at t scan .; want_files "drivers/char/b.c " "config from the top: arch and hidden excluded, net ignored"
at t/drivers scan .; want_files "char/b.c " "config from drivers/: [ignore-paths] keyed from the config's directory"
at t/drivers scan net; expect_rc 0 "config from drivers/, scan net: all ignored"
expect_err '^preemptify: 0 findings in 1 file' "config from drivers/, scan net: the file was scanned"
at t/drivers/net scan a.c; expect_rc 0 "config from drivers/net, scan a.c: ignored"
at t/drivers/net scan ../char/b.c a.c; want_files "../char/b.c " "config from drivers/net, two files"
at t/drivers scan ..; want_files "../drivers/char/b.c " "config from drivers/, scan ..: excludes and ignore-paths apply"
at t/drivers/net explain a.c:6; expect_out '^a\.c:6:7: P003 cpu-id: flagged' "explain from drivers/net: the site is explained"
expect_out "config: .*drivers/net/\\*" "explain from drivers/net: names the glob that hides it from scan"
finish
