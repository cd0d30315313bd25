#!/usr/bin/env bash
# scan: exit codes, walking (excludes, symlinks, sorted order), diagnostics,
# -o, summary line. Uses only trigger-free files, so it does not depend on
# what the analysis finds.
. "$(dirname "$0")/lib.sh"

mkdir -p tree/sub tree/skip outside
clean_c tree/b.c; clean_c tree/a.h; clean_c tree/sub/c.c; clean_c tree/skip/d.c
clean_c outside/evil.c; echo 'not C' >tree/notes.txt
ln -s "$WORK/outside" tree/link
ln -s "$WORK/outside/evil.c" tree/evil.c

run scan tree; expect_rc 0 "clean tree exits 0"
expect_err '^preemptify: 0 findings in 4 files( \(|$)' "summary counts the walked .c/.h files (symlinks not followed)"
expect_err_lines 1 "summary is one line"
if [ -z "$out" ]; then ok; else bad "no output for a clean tree"; fi

run scan --exclude 'skip' --exclude '*.h' tree; expect_rc 0 "excludes"
expect_err 'in 2 files( \(|$)' "excludes drop a directory and a glob"
run scan --exclude skip,'*.h' tree; expect_err 'in 2 files( \(|$)' "comma-separated excludes"

run scan -j 1 tree/notes.txt; expect_rc 0 "a file named directly is taken whatever its suffix"
expect_err 'in 1 file( \(|$)' "named file counted"

ln -s "$WORK/tree" treelink
run scan treelink; expect_rc 0 "symlink root followed"; expect_err 'in 4 files( \(|$)' "symlink root walked"

run scan tree/b.c missing.c tree/sub; expect_rc 3 "missing file exits 3"
expect_out '^missing\.c: error: cannot access: No such file or directory$' "missing file named on stdout"
expect_err 'in 2 files .*; 1 diagnostic$' "the other paths are still scanned"

printf 'bin\0ary smp_processor_id\n' >tree/bin.c
run scan tree/bin.c; expect_rc 3 "binary file exits 3"; expect_out '^tree/bin\.c: error: ' "binary file reported"
rm tree/bin.c

mkdir noread && clean_c noread/x.c && chmod 000 noread
if [ "$(id -u)" -ne 0 ]; then
	run scan noread; expect_rc 3 "unreadable directory exits 3"; expect_out '^noread: error: cannot open directory' "unreadable dir named"
fi
chmod 755 noread

run scan -o report.txt tree/b.c missing.c; expect_rc 3 "-o with a failure"
if grep -q '^missing\.c: error:' report.txt; then ok; else bad "-o FILE receives the report"; fi
if [ -z "$out" ]; then ok; else bad "-o leaves stdout empty"; fi
run scan -o nodir/report.txt tree/b.c; expect_rc 3 "-o into a missing directory"; expect_err "cannot write 'nodir/report.txt'" "-o failure named"

run scan -- tree/b.c; expect_rc 0 "-- before paths"

# --may-sleep: the user's own sleeping function keeps a region off it
cat >ms.c <<'EOF2'
void board_wait(void);
int board_seen[32];
void board_poll(void)
{
	int cpu = smp_processor_id();
	board_wait();
	board_seen[cpu]++;
}
EOF2
run scan -v ms.c; expect_rc 1 "a CPU number across an unknown call"
expect_out 'fix: get-cpu' "without --may-sleep the region is planned"
run scan -v --may-sleep board_wait,other_wait ms.c; expect_rc 1 "--may-sleep"
expect_out 'board_wait\(\) .*may sleep' "--may-sleep: the call is reported as sleeping"
expect_out 'region would contain board_wait\(\)' "--may-sleep: no region over it"
# an NR_CPUS array indexed by the running CPU only inside a #define body:
# left as it is, and the reason names the macro (not "never indexed")
cat >mac.c <<'EOF2'
struct slot { int users; };
static struct slot __slots[NR_CPUS];
#define this_slot (&__slots[smp_processor_id()])
void slots_init(void)
{
	int i;
	for (i = 0; i < NR_CPUS; i++)
		__slots[i].users = 0;
}
int slot_users(void)
{
	return this_slot->users;
}
EOF2
run scan -v mac.c
expect_out 'NR_CPUS array __slots is left as it is \[P008(, fixable)?\]' "array behind a macro: left"
expect_out 'indexed by the running CPU in the body of #define this_slot \(line 3\)' "the reason names the macro"
expect_no_out 'never indexed by the running CPU' "not called a table of the CPUs' data"
# a padding union around a multi-line struct: the finding stays on one line
cat >pad.c <<'EOF2'
static union {
	struct run_data {
		void *curr;
		long last;
	} run_data;
	char __pad[SMP_CACHE_BYTES];
} run_slots[NR_CPUS];
void *run_curr(void)
{
	return run_slots[smp_processor_id()].run_data.curr;
}
EOF2
run scan pad.c
expect_out '^pad\.c:7:3: note: 2\.4 per-CPU array union \{ struct run_data \{ \.\.\. \} run_data; \.\.\. \} run_slots\[NR_CPUS\]: .*\[P008(, fixable)?\]$' "the declaration folded in the message"
if printf '%s\n' "$out" | grep -vq '^pad\.c:[0-9]*:[0-9]*: '; then bad "every output line is a finding"; else ok; fi
finish
