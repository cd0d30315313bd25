#!/usr/bin/env bash
# A struct of per-CPU arrays across a tree (2.4 `struct kernel_stat kstat`):
# on fixtures/trees/cpustat, the NR_CPUS fields of struct cpu_stat move to a
# per-CPU struct (DEFINE_PER_CPU / DECLARE_PER_CPU / EXPORT_PER_CPU_SYMBOL),
# every use in every file converts with the accessor its context needs, the
# result is the golden tree fixtures/trees/cpustat.expected, compiles
# against the 2.6 shim, and a second run changes nothing. A struct with
# several instances, one whose layout is used (offsetof) or one whose
# instance is used whole is left as it is, with the reason.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test checks the struct conversion"

tree=$SRC/fixtures/trees/cpustat
gold=$SRC/fixtures/trees/cpustat.expected

# compiles TREE's .c files against the shim INCLUDE dirs, with and without CONFIG_SMP
compiles() { # compiles TREE INCLUDE...
	local t=$1 f smp
	shift
	local incs=()
	for i in "$@"; do incs+=(-I "$i"); done
	for f in $(cd "$t" && find . -name '*.c' | sort); do
		for smp in -DCONFIG_SMP -UCONFIG_SMP; do
			gcc -std=gnu89 -fsyntax-only -Wall -Werror -Wno-unused-function -nostdinc "${incs[@]}" \
				-I "$t/include" "$smp" "$t/$f" 2>&1 || return 1
		done
	done
}

# the fixture itself is 2.4 code that builds
if out=$(compiles "$tree" "$SRC/fixtures/include-2.4"); then ok; else bad "the 2.4 fixture tree compiles: $out"; fi

cp -r "$tree" cs
run scan -v cs; expect_rc 1 "findings"
expect_out '^cs/include/linux/cpustat.h:[0-9]+:[0-9]+: note: 2.4 struct cpu_stat holds per-CPU arrays \(user_ticks system_ticks irqs\) for its one instance cstat: they move to DEFINE_PER_CPU\(struct cpu_stat_percpu, cstat_percpu\) in 2.6 \[P008(, fixable)?\]$' "the struct's part, at its file's extern"
expect_out 'cs/kernel/cpustat.c:[0-9]+:[0-9]+: note: protected: cstat.user_ticks\[smp_processor_id\(\)\] with preemption off \[P002(, fixable)?\]' "a use with interrupts off: named by its field"
expect_out 'cs/drivers/char/cpustat_irq.c:21:2: warning: this-CPU element of non-static per-CPU array cstat.system_ticks in preemptible code \[P002(, fixable)?\]' "a preemptible use"
expect_out 'struct proto_stat has more than one instance .*alloc_percpu' "two instances: left, with the reason"
expect_no_out 'keeps the directives' "the emptied #ifdef goes: no note asks for it by hand"

run diff -v cs; expect_rc 1 "diff shows changes"
expect_err '^preemptify: 4 sites to fix in 3 files(;|$)' "one conversion, every part fixed"
expect_err '^preemptify: fixes: define-per-cpu: 4$' "one conversion, every part fixed: the kinds"
expect_no_out '; not fixed: ' "one conversion: no refusal"
expect_no_out 'proto_stat' "the refused struct is untouched"
expect_out '^-#ifdef CONFIG_SMP$' "the #ifdef that held only moved fields goes"
expect_out '^-#endif$' "and its #endif"

run apply cs; expect_rc 0 "apply"
same=1
for f in $(cd "$tree" && find . -type f | sort); do
	if [ -f "$gold/$f" ]; then cmp -s "cs/$f" "$gold/$f" || { same=0; bad "$f differs from cpustat.expected: $(diff -u "$gold/$f" "cs/$f" | head -20)"; }
	else cmp -s "cs/$f" "$tree/$f" || { same=0; bad "$f changed but has no golden"; }; fi
done
[ "$same" -eq 1 ] && ok
if out=$(compiles cs "$SRC/fixtures/include-2.6" "$SRC/fixtures/include-2.4"); then ok; else bad "the converted tree compiles against the 2.6 shim: $out"; fi
run diff cs; expect_rc 0 "a second run changes nothing"
run scan -v cs
expect_no_out 'P008.*cpu_stat' "nothing left to convert"

# --target modern: single updates become this_cpu_*
cp -r "$tree" mod
run diff --target modern mod
expect_out '^\+		this_cpu_inc\(cstat_percpu.user_ticks\);$' "modern: a protected update"
expect_out '^\+	this_cpu_add\(cstat_percpu.system_ticks, ticks\);$' "modern: a preemptible update"
run apply --target modern mod; expect_rc 0 "apply --target modern"
if out=$(compiles mod "$SRC/fixtures/include-modern" "$SRC/fixtures/include-2.6" "$SRC/fixtures/include-2.4"); then ok
else bad "the modern tree compiles against the modern shim: $out"; fi

# without the tree (--no-tree): nothing is known of the other files
cp -r "$tree" nt
run diff --no-tree nt
expect_no_out 'cstat_percpu' "--no-tree converts nothing"
# a subdirectory alone: the tree is found above it, and the subdirectory gets
# exactly its part of the whole tree's conversion
run diff nt/drivers
sub=$out
run diff nt
part=$(printf '%s\n' "$out" | awk 'index($0, "diff --git ") == 1 { on = index($0, "diff --git a/nt/drivers/") == 1 } on')
[ -n "$sub" ] && [ "$sub" = "$part" ] && ok || bad "a subdirectory alone: its part of the whole tree's diff"
expect_out 'cstat_percpu' "the whole tree converts the struct of arrays"

# refusals: the instance used whole, the layout used by offsetof
cp -r "$tree" whole
printf '\nvoid cpustat_reset(void)\n{\n\tmemset(&cstat, 0, sizeof(cstat));\n}\n' >> whole/kernel/cpustat.c
run diff whole
expect_no_out 'cstat_percpu' "the instance's address taken: left"
run scan -v whole
expect_out 'cstat is used whole at line 35 \(its address or a copy\)' "the reason names the use"
cp -r "$tree" layout
printf '\nunsigned long cpustat_irq_offset = offsetof(struct cpu_stat, irqs);\n' >> layout/kernel/cpustat.c
run scan -v layout
expect_out 'the layout of struct cpu_stat is used at layout/kernel/cpustat.c:33 \(offsetof' "offsetof: left, the place named"

# what a comment or a string says of the struct is no use of it
cp -r "$tree" prose
printf '\n/* never hand out a struct cpu_stat * or copy cstat: its fields are per CPU */\nconst char *cpustat_doc = "struct cpu_stat *p = &cstat;";\n' >> prose/kernel/cpustat.c
run diff prose
expect_out '^\+DEFINE_PER_CPU\(struct cpu_stat_percpu, cstat_percpu\);$' "comments and strings do not refuse the conversion"
# a field declaration mixing per-CPU arrays and other fields: left, with the reason
cp -r "$tree" mixed
sed -i 's/unsigned int disk_reads\[CS_MAX_DISK\];/unsigned int disk_reads[CS_MAX_DISK], idle_ticks[NR_CPUS];/' mixed/include/linux/cpustat.h
run scan -v mixed
expect_out 'the field declaration at line 14 mixes per-CPU arrays and other fields' "a mixed declaration: the reason"
run diff mixed
expect_no_out 'cstat_percpu' "a mixed declaration: nothing converts"

# the instance defined in a header (a tentative definition in every includer): left
cp -r "$tree" hdr
sed -i 's/^extern struct cpu_stat cstat;/struct cpu_stat cstat;/' hdr/include/linux/cpustat.h
sed -i 's/^struct cpu_stat cstat;$//' hdr/kernel/cpustat.c
run scan -v hdr
expect_out 'cstat is defined in hdr/include/linux/cpustat.h, not in a .c file' "an instance in a header: the reason"

# a comment on or above a field that moves: spatch would misplace or drop it, so the struct stays
cp -r "$tree" cmt
sed -i 's|^\t\t     system_ticks\[NR_CPUS\];$|&\t/* kernel mode */|' cmt/include/linux/cpustat.h
run scan -v cmt
expect_out 'the field at line 12 shares its lines with a comment or other code' "a trailing comment: the reason"
run diff cmt
expect_no_out 'cstat_percpu' "a trailing comment: nothing converts"
cp -r "$tree" cmt2
sed -i 's|^\tunsigned int irqs\[NR_CPUS\]\[CS_NR_IRQS\];$|\t/* interrupts taken, per CPU */\n&|' cmt2/include/linux/cpustat.h
run scan -v cmt2
expect_out 'the field at line 17 has a comment above it, which spatch removes with the field' "a comment above: the reason"

# a conditional with arms, all of them moving: every directive goes, and both configurations build
cp -r "$tree" arms
sed -i 's|^\tunsigned int irqs\[NR_CPUS\]\[CS_NR_IRQS\];$|&\n#else\n\tunsigned int irqs[NR_CPUS][1];|' arms/include/linux/cpustat.h
run diff -v arms; expect_rc 1 "arms: diff"
expect_err '^preemptify: 4 sites to fix in 3 files(;|$)' "arms: every part fixed"
expect_err '^preemptify: fixes: define-per-cpu: 4$' "arms: every part fixed: the kinds"
run apply arms; expect_rc 0 "arms: apply"
if grep -q '^#' <(sed -n '/^struct cpu_stat {/,/^};/p' arms/include/linux/cpustat.h) ||
	[ "$(sed -n '/^struct cpu_stat_percpu {/,/^};/p' arms/include/linux/cpustat.h | grep -c '^#')" != 3 ]; then
	bad "arms: the conditional moves whole, its 3 directives with it: $(cat arms/include/linux/cpustat.h)"
else ok; fi
if out=$(compiles arms "$SRC/fixtures/include-2.6" "$SRC/fixtures/include-2.4"); then ok; else bad "arms: the converted tree compiles: $out"; fi
run diff arms; expect_rc 0 "arms: a second run changes nothing"

# a directive continued on the next line: it goes, and moves, whole
cp -r "$tree" cont
sed -i 's|^#ifdef CONFIG_SMP$|#if defined(CONFIG_SMP) \\\n    \|\| defined(CS_ALWAYS)|' cont/include/linux/cpustat.h
run apply -v cont; expect_rc 0 "continued: apply"
expect_err '^preemptify: 4 sites fixed in 3 files(;|$)' "continued: every part fixed"
expect_err '^preemptify: fixes: define-per-cpu: 4$' "continued: every part fixed: the kinds"
if [ "$(grep -c 'defined(CONFIG_SMP) \\$' cont/include/linux/cpustat.h)" = 1 ] &&
	sed -n '/^struct cpu_stat_percpu {/,/^};/p' cont/include/linux/cpustat.h | grep -q '^    || defined(CS_ALWAYS)$'; then ok
else bad "continued: the directive is in the per-CPU struct only, whole: $(cat cont/include/linux/cpustat.h)"; fi
if out=$(compiles cont "$SRC/fixtures/include-2.6" "$SRC/fixtures/include-2.4"); then ok; else bad "continued: the converted tree compiles: $out"; fi

# explain on one use shows the whole plan: every file of the conversion
cp -r "$tree" cs2
run explain --context-root cs2 cs2/drivers/char/cpustat_irq.c:13
expect_out 'the files naming it convert together: .*cs2/include/linux/cpustat.h' "explain: the header's part"
expect_out 'the files naming it convert together: .*cs2/kernel/cpustat.c' "explain: the definition's part"
run explain --context-root cs2 cs2/drivers/char/cpustat_irq.c:21
expect_out '^  the whole conversion, every file:$' "explain on a use: the whole plan"
expect_out '^    cs2/include/linux/cpustat.h:12:2: remove$' "the plan: a field removed from the struct"
expect_out '^    cs2/kernel/cpustat.c:5:1: insert-after "DEFINE_PER_CPU\(struct cpu_stat_percpu, cstat_percpu\);"$' "the plan: the definition in another file"
expect_out '^    cs2/kernel/cpustat.c:29:10: replace "per_cpu\(cstat_percpu, i\).user_ticks"$' "the plan: another file's use"
expect_out '^    \+.*get_cpu_var\(cstat_percpu\)\.system_ticks' "explain: this use's edit, as the line after"

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
