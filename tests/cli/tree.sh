#!/usr/bin/env bash
# Callers across files (the tree index): on the fixture tree
# fixtures/trees/fastnet, each way a function gets its context from another
# file is recognised (header inline under its callers' lock, a core helper
# called with a lock held, an IRQ handler's callee, a struct irqaction and a
# struct inet_protocol registration, a two-level chain, an IPI entry stub
# built by BUILD_SMP_INTERRUPT), and each way it
# must not be (a caller through a macro, a call from assembly, a cycle, a
# caller with preemption on) leaves the finding. Macros of the tree's
# headers that hide a site are reported at each use with their location,
# and a reschedule check that is a whole macro body is rewritten there.
. "$(dirname "$0")/lib.sh"
command -v spatch >/dev/null || skip_all "spatch is not installed; this test checks the rewrite of the trees"

cp -r "$SRC/fixtures/trees/fastnet" fastnet

# findings as "PATH:LINE:COL RULE", PATH relative to the tree
sites() { printf '%s\n' "$out" | sed -nE 's#^fastnet/([^:]+:[0-9]+:[0-9]+): [a-z]+: .*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p'; }
same() { # same EXPECTED-FILE DESCRIPTION
	if [ "$(sites)" = "$(cat "$1")" ]; then ok; else
		bad "$2: $(diff <(sites) "$1" | tr '\n' ' ')"; fi
}

run scan fastnet; expect_rc 1 "the tree has findings"
same "$SRC/fixtures/trees/fastnet.expect" "whole tree: contexts from other files"
expect_err ': [0-9]+ functions whose callers decide a finding, 8 of them always called with preemption off' "summary names the index"

run scan --no-tree fastnet; expect_rc 1 "--no-tree has findings"
same "$SRC/fixtures/trees/fastnet.no-tree.expect" "--no-tree: each file alone"
if printf '%s\n' "$err" | grep -q 'callers across files'; then bad "--no-tree builds no index"; else ok; fi

# a subdirectory alone: the tree is found above it (a top Makefile with
# VERSION and PATCHLEVEL, and include/linux/), so it gets the whole tree's
# verdicts and header macros, as with --context-root...
run scan fastnet/drivers/net
want='drivers/net/fastnet.c:44:7 P004
drivers/net/fastnet.c:60:16 P003
drivers/net/fastnet_lib.c:29:12 P003
drivers/net/fastnet_stat.c:6:2 P002
drivers/net/fastnet_stat.c:6:2 P008'
if [ "$(sites)" = "$want" ]; then ok; else bad "drivers/net alone: the tree found above it decides: $(sites | tr '\n' ' ')"; fi
expect_err 'callers followed through the kernel tree at fastnet, found above fastnet/drivers/net' "the summary names the tree found"
alone=$(sites)
run scan --context-root fastnet fastnet/drivers/net
if [ "$(sites)" = "$alone" ]; then ok; else bad "--context-root gives what the tree found gives"; fi
# ...and each file alone gets exactly its part of the whole tree's answer, the
# per-CPU array shared across files included (its part of the conversion,
# naming the files that convert together)
whole=$("$BIN" scan -v fastnet 2>/dev/null)
for f in $(cd fastnet && find . -name '*.[ch]' | sed 's#^\./##' | sort); do
	one=$("$BIN" scan -v "fastnet/$f" 2>/dev/null | grep -v '^  ')
	part=$(printf '%s\n' "$whole" | grep -v '^  ' | grep "^fastnet/$f:" || true)
	[ "$one" = "$part" ] && ok || bad "$f alone differs from its part of the whole tree: $(diff <(echo "$one") <(echo "$part") | head -4 | tr '\n' ' ')"
done
# a PATH that cannot be read is named, even when the tree above the others is indexed
run scan fastnet/drivers/net/fastnet.c fastnet/drivers/net/nope.c
expect_rc 3 "a missing PATH beside a tree's file: exit 3"
expect_out 'fastnet/drivers/net/nope.c: error: cannot access' "a missing PATH beside a tree's file is named"
# from inside the tree, with a relative path
inside=$(cd fastnet/drivers/net && "$BIN" scan fastnet.c 2>&1)
printf '%s\n' "$inside" | grep -Eq 'fastnet.c:44:7: .*\[P004(, fixable)?\]' && ok || bad "from inside the tree: the header macro's site is seen"
printf '%s\n' "$inside" | grep -q 'kernel tree at \.\./\.\., found above fastnet.c' && ok || bad "from inside the tree: the root is spelled from where the user stands"
# --no-tree: callers outside each file unknown, as before
run scan --no-tree fastnet/drivers/net
if printf '%s\n' "$err" | grep -q 'kernel tree at'; then bad "--no-tree finds no tree"; else ok; fi
# without a kernel tree's Makefile, the PATHs are the index
cp -r fastnet plain && rm plain/Makefile
run scan plain/drivers/net
if printf '%s\n' "$err" | grep -q 'kernel tree at'; then bad "no Makefile: no tree is found"; else ok; fi
expect_out 'plain/drivers/net/fastnet_lib.c:21:12: .*\[P003(, fixable)?\]' "no Makefile: callers outside the PATHs unknown"
# ...but a git work tree is an out-of-tree driver's repository: its top is the
# tree, so a file or a directory of it gets its part of the whole repository's answer
if command -v git >/dev/null; then
	cp -r plain mod && (cd mod && git init -q . && git add -A && git -c user.name=T -c user.email=t@example.org commit -qm base) ||
		bad "git repository of the module"
	whole=$("$BIN" scan --no-cache -v mod 2>/dev/null | grep -v '^  ')
	for f in drivers/net/fastnet_lib.c drivers/net/fastnet.c net/core/fastcore.c; do
		one=$("$BIN" scan --no-cache -v "mod/$f" 2>/dev/null | grep -v '^  ')
		part=$(printf '%s\n' "$whole" | grep "^mod/$f:" || true)
		[ -n "$one" ] && [ "$one" = "$part" ] && ok || bad "mod/$f alone differs from its part of the repository's answer: $(diff <(echo "$one") <(echo "$part") | head -4 | tr '\n' ' ')"
	done
	run scan --no-cache mod/drivers/net
	expect_err 'callers followed through the git work tree at mod, found above mod/drivers/net' "the summary names the git work tree found"
	run scan --no-cache --no-tree mod/drivers/net/fastnet_lib.c
	expect_out 'mod/drivers/net/fastnet_lib.c:21:12: .*\[P003(, fixable)?\]' "--no-tree: the file alone, its caller in the repository unknown"
	run explain --no-cache mod/drivers/net/fastnet_lib.c:21
	expect_out 'from core_poll_all\(\) at mod/net/core/fastcore.c' "explain follows the callers through the git work tree"
	rm -rf mod
fi
run scan -v fastnet/drivers/net/fastnet_stat.c
expect_out 'the files naming it convert together: fastnet/drivers/net/fastnet_stat.c, fastnet/include/linux/fastdev_stat.h, fastnet/net/core/fastdev_stat.c' "a shared array in a file alone: its part, naming the files that convert together"
# the diff of each file alone is its part of the whole tree's diff
if command -v spatch >/dev/null; then
	wdiff=$("$BIN" diff --color never fastnet 2>/dev/null)
	for f in drivers/net/fastnet_stat.c net/core/fastdev_stat.c drivers/net/fastnet.c; do
		one=$("$BIN" diff --color never "fastnet/$f" 2>/dev/null)
		part=$(printf '%s\n' "$wdiff" | awk -v f="diff --git a/fastnet/$f " 'index($0, "diff --git ") == 1 { on = index($0, f) == 1 } on')
		[ -n "$one" ] && [ "$one" = "$part" ] && ok || bad "diff of $f alone is not its part of the whole tree's diff"
	done
	# a file asked alone: its last line names the files the same conversion changes
	run diff --color never fastnet/drivers/net/fastnet_stat.c
	expect_err 'the per-CPU conversion also changes 2 files not given here \(fastnet/include/linux/fastdev_stat\.h, fastnet/net/core/fastdev_stat\.c\): give them too' \
		"diff of one file of a shared conversion names the others"
	run diff --color never fastnet
	if printf '%s\n' "$err" | grep -q 'not given here'; then bad "the whole tree gives every file of the conversion"; else ok; fi
	# a file that only exports the array (2.4 kernel/ksyms.c exports softirq.c's
	# tasklet_vec): alone, it gets the whole tree's EXPORT_PER_CPU_SYMBOL edit
	cp -r fastnet syms && mkdir -p syms/kernel
	sed -i '/^EXPORT_SYMBOL(fastdev_stats);$/d' syms/net/core/fastdev_stat.c
	printf '/* the tree'"'"'s exports */\n#include <linux/fastdev_stat.h>\n\nEXPORT_SYMBOL(fastdev_stats);\n' > syms/kernel/fastsyms.c
	wdiff=$("$BIN" diff --color never syms 2>/dev/null)
	one=$("$BIN" diff --color never syms/kernel/fastsyms.c 2>/dev/null)
	part=$(printf '%s\n' "$wdiff" | awk -v f="diff --git a/syms/kernel/fastsyms.c " 'index($0, "diff --git ") == 1 { on = index($0, f) == 1 } on')
	printf '%s\n' "$part" | grep -q '^+EXPORT_PER_CPU_SYMBOL(fastdev_stats);' && ok || bad "the whole tree converts the export of another file"
	[ "$one" = "$part" ] && ok || bad "diff of an exporting file alone is not its part of the whole tree's diff: $one"
	rm -rf syms
fi
rm -rf plain

# macros of the tree's headers: a site at each use, with the macro's location...
run explain --context-root fastnet fastnet/drivers/net/fastnet.c:44
expect_out 'fastq_should_yield\(\) is defined at fastnet/include/net/fastq.h:48 as `\(\(tsk\)->need_resched\)`' "a test macro of a header: where it is defined"
run explain --context-root fastnet fastnet/drivers/net/fastnet.c:60
expect_out 'FASTNET_THIS_CPU\(\) is defined at fastnet/drivers/net/fastnet_hw.h:9' "a CPU read behind a header macro"
expect_out 'fix: preempt-region' "a CPU read inside a header's expression macro: preemption held off around the use"
expect_out '^    \+	preempt_disable\(\);$' "preempt_disable() before the statement that expands it"
# ...except the whole check as one statement, rewritten in the header, its uses left as they are
if sites | grep -q '^drivers/net/fastnet.c:5[0-4]:'; then bad "FASTQ_RELAX() use reported: the macro body is the site"; else ok; fi

# explain shows the chain across files, or says that it was not followed
run explain --context-root fastnet fastnet/drivers/net/fastnet_lib.c:21; expect_rc 0 "protected site: exit 0"
expect_out 'from core_poll_all\(\) at fastnet/net/core/fastcore.c:51' "chain: the core caller"
expect_out 'demo_timer_tick\(\) runs in hard-IRQ context: interrupt handler \(.handler of a struct irqaction' "chain: the registration in arch code"
run explain --context-root fastnet fastnet/net/core/fastcore.c:27; expect_rc 0 "a finding"; expect_out ": flagged \(" "a finding (flagged)"
expect_out 'named in the body of the macro FASTQ_KICK \(fastnet/include/net/fastq\.h:41\), which is used with preemption on: called from fastnet_open\(\) at fastnet/drivers/net/fastnet\.c:28' "why the macro's caller leaves it preemptible"
run explain --context-root fastnet fastnet/net/core/fastcore.c:57
expect_out 'a cycle of calls' "a cycle stays preemptible (the pessimistic fixed point)"
run explain fastnet/drivers/net/fastnet_lib.c:21; expect_rc 0 "explain finds the tree above the file: its callers protect it"
expect_out 'protected \(not a finding\)' "explain of a file alone: the whole tree's verdict"
run explain --no-tree fastnet/drivers/net/fastnet_lib.c:21; expect_rc 0 "explain --no-tree: a finding"; expect_out ": flagged \(" "explain --no-tree: a finding (flagged)"
expect_out 'callers in other files were not followed: --no-tree' "explain --no-tree says what it did not follow"

# an i386-style IPI entry stub built by BUILD_SMP_INTERRUPT(x, ...) calls smp_x() in hard-IRQ context
run explain --context-root fastnet fastnet/arch/demo/kernel/smp.c:13; expect_rc 0 "the stub's target: no finding"
expect_out 'hard-IRQ context: interrupt entry: BUILD_SMP_INTERRUPT\(flush_ring_interrupt, ...\) at fastnet/arch/demo/kernel/irq.c:26' "the stub named as the context"
run explain --context-root fastnet fastnet/arch/demo/kernel/smp.c:21; expect_rc 0 "no stub for smp_spare_interrupt(): a finding"; expect_out ": flagged \(" "no stub for smp_spare_interrupt(): a finding (flagged)"
expect_out 'no caller and no registration in the tree' "without a stub the callers are unknown"

# the assembly caller is what keeps demo_syscall_trace() preemptible
run explain --context-root fastnet fastnet/arch/demo/kernel/time.c:18
expect_out 'named in assembly code.*entry\.S' "assembly named as the reason"
rm fastnet/arch/demo/kernel/entry.S
run scan fastnet
if sites | grep -q 'time.c:18'; then bad "without entry.S, the locked C caller makes it atomic"; else ok; fi

# diff plans exactly the remaining sites, verified with the same contexts
cp -r "$SRC/fixtures/trees/fastnet" again
run diff -v again; expect_rc 1 "diff of the tree: changes to show (exit 1, as diff(1))"
expect_err '^preemptify: 14 sites to fix in [0-9]+ files(;|$)' "one fix per remaining site"
expect_err '^preemptify: fixes: get-cpu: 6, define-per-cpu: 5, cond-resched: 2, preempt-region: 1$' "one fix per remaining site: the kinds"
expect_no_out '; not fixed: ' "none refused"
printf '%s\n' "$err" | grep -q '; not fixed: ' && bad "none refused (stderr)" || ok
if [ "$(printf '%s\n' "$out" | grep -c '^+.*put_cpu();')" -eq 6 ]; then ok; else bad "six put_cpu() inserted"; fi
# a non-static per-CPU array converts in every file that names it
expect_out '^\+DEFINE_PER_CPU\(struct fastdev_stat, fastdev_stats\);$' "shared array: the definition"
expect_out '^\+EXPORT_PER_CPU_SYMBOL\(fastdev_stats\);$' "shared array: its EXPORT_SYMBOL"
expect_out '^\+DECLARE_PER_CPU\(struct fastdev_stat, fastdev_stats\);$' "shared array: the header's extern"
expect_out '^\+	__get_cpu_var\(fastdev_stats\)\.rx\+\+;$' "shared array: a use with interrupts off"
expect_out '^\+	get_cpu_var\(fastdev_stats\)\.drops\+\+;$' "shared array: a driver's unprotected use"
if printf '%s\n' "$out" | grep -q '^[-+].*fastdev_ring_owner'; then bad "an array named in assembly is left alone"; else ok; fi
expect_out '^\+		cond_resched\(\); \\$' "the header macro's body rewritten, its continuation kept"
expect_out '^-		if \(fastq_should_yield\(current\)\)$' "the header test macro's use rewritten"
# the files' runs share spatch processes; whole files, one process each, give the same diff
run diff --no-cache -v again
expect_err 'preemptify: [0-9]+ spatch processes \([1-9][0-9]* file runs shared a process, 0 answered by the cache\)' "runs of several files share a spatch process"
shared=$out
run diff --no-cache --no-batch --no-slice -v again
expect_err 'preemptify: [0-9]+ spatch processes \(0 file runs shared a process, 0 answered by the cache\)' "--no-batch: one process per file and run"
if [ "$out" = "$shared" ]; then ok; else bad "batched and sliced runs give the diff whole files give"; fi

# the shared array's verdicts and reasons
# SARIF: every part of a shared array's conversion highlights its name, never an empty span
run scan -f sarif again
empty=$(printf '%s\n' "$out" | python3 -c '
import json, sys
res = json.load(sys.stdin)["runs"][0]["results"]
parts = [r for r in res if r["ruleId"] == "P008"]
bad = [r for r in parts if r["locations"][0]["physicalLocation"]["region"].get("endColumn") in
       (None, r["locations"][0]["physicalLocation"]["region"].get("startColumn"))]
print(len(parts), len(bad))')
if [ "${empty% *}" -ge 3 ] && [ "${empty#* }" -eq 0 ]; then ok; else bad "P008 parts with an empty SARIF region (parts, empty): $empty"; fi
run scan -v again
expect_out 'fastdev_ring_owner is named in assembly code \(again/arch/demo/kernel/entry.S\)' "the assembly use is the reason"
run scan -v again/net
expect_out 'the files naming it convert together: again/drivers/net/fastnet_stat.c, again/include/linux/fastdev_stat.h, again/net/core/fastdev_stat.c' "a subdirectory alone converts its part of a shared array, as the tree does"
# --context-root . from inside the tree: the index's ./net/... is the scanned net/...
ctx=$(cd again && "$BIN" diff --context-root . net drivers include arch 2>&1)
if printf '%s\n' "$ctx" | grep -qxF '+DEFINE_PER_CPU(struct fastdev_stat, fastdev_stats);'; then ok
else bad "--context-root . with relative paths converts the shared array: $ctx"; fi
run explain --context-root again again/drivers/net/fastnet_stat.c:6
expect_out 'the files naming it convert together: .*again/include/linux/fastdev_stat\.h' "explain names every file of the conversion: the header"
expect_out 'the files naming it convert together: .*again/net/core/fastdev_stat\.c' "explain names every file of the conversion: the definition"
expect_out '^    \+.*get_cpu_var\(fastdev_stats\)' "explain: this file's edit, as the line after"
expect_out '^    again/net/core/fastdev_stat.c:4:1: replace "DEFINE_PER_CPU\(struct fastdev_stat, fastdev_stats\);"$' "explain: the whole plan, another file's edit"
# one file's part suppressed: no file converts the array
sed -i 's|fastdev_stats\[smp_processor_id()\]\.drops++;|& /* preemptify: ignore P008 */|' again/drivers/net/fastnet_stat.c
run diff again
if printf '%s\n' "$out" | grep -qE '^\+.*(PER_CPU|cpu_var)\(.*fastdev_stats'; then bad "a suppressed part keeps the whole array"; else ok; fi
# as an NR_CPUS array the use only counts: 2.6 left such counters bare (a note, no fix)
expect_no_out 'fastdev_stats\[get_cpu' "the counter stays as it is"
run scan -v again
expect_out 'fastnet_stat\.c:6:.*statistics counter fastdev_stats\[smp_processor_id\(\)\] updated in preemptible code' "the counter is a note"
expect_out 'its P008 is off or suppressed in again/drivers/net/fastnet_stat.c' "the suppression named as the reason"


# a shared array whose struct tag (`struct rt_stat`, in a header with no
# extern) has its name, and a parse error in a function between two uses
# (a label before #ifdef): neither is a part of the conversion
mkdir -p tag/include/linux tag/include/net tag/net/ipv4
printf 'struct rt_stat {\n\tunsigned int hit;\n\tunsigned int miss;\n};\n' >tag/include/net/rt_stat.h
cat >tag/net/ipv4/rt.c <<'EOC'
#include <net/rt_stat.h>

struct rt_stat rt_stat[NR_CPUS];

int rt_hits(void)
{
	int i, n = 0;

	for (i = 0; i < NR_CPUS; i++)
		n += rt_stat[i].hit;
	return n;
}

void rt_redirect(int x)
{
	if (x)
		goto reject;
	return;
reject:
#ifdef CONFIG_RT_VERBOSE
	printk("rejected\n");
#endif
	x++;
}

void rt_miss(void)
{
	rt_stat[smp_processor_id()].miss++;
}
EOC
run diff tag; expect_rc 1 "the tag tree converts"
expect_out '^\+DEFINE_PER_CPU\(struct rt_stat, rt_stat\);$' "tag tree: the definition"
expect_out '^\+		n \+= per_cpu\(rt_stat, i\)\.hit;$' "tag tree: the loop over CPUs"
expect_out '^\+	get_cpu_var\(rt_stat\)\.miss\+\+;$' "tag tree: the use after the unparsed function"
if printf '%s\n' "$out" | grep -q '^[-+].*printk'; then bad "the function the grammar could not parse is left alone"; else ok; fi

# commit: the files of one shared array build only together: one commit, named after it
rm -rf repo && cp -r "$SRC/fixtures/trees/fastnet" repo
export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.org
(cd repo && git init -q && git add -A && git commit -qm base) || bad "test repository"
(cd repo && "$BIN" commit . >/dev/null 2>&1) || bad "commit of the tree"
c=$(cd repo && git log --format=%h --grep='^fastdev_stats: ' -n 1)
files=$(cd repo && git show --name-only --format= "$c" | sort | tr '\n' ' ')
if [ -n "$c" ] && [ "$files" = "drivers/net/fastnet_stat.c include/linux/fastdev_stat.h net/core/fastdev_stat.c " ]; then ok
else bad "one commit for the shared array's three files, named after it: '$c' $files"; fi

# the config ignores the driver's part: the shared array converts nowhere
rm -rf cfgtree && cp -r "$SRC/fixtures/trees/fastnet" cfgtree
printf '[ignore-paths]\n"drivers/net/fastnet_stat.c" = ["P002", "P008"]\n' >cfgtree/.preemptify.toml
run diff cfgtree
if printf '%s\n' "$out" | grep -qE '^\+.*PER_CPU.*fastdev_stats'; then bad "an ignored part keeps the whole array"; else ok; fi
run scan -v cfgtree
expect_out 'a part of the conversion of fastdev_stats is ignored \(config or baseline\)' "the ignored part named as the reason"

# diff --stat is git's: the text `git diff --stat` prints for the applied change
rm -rf st && cp -r "$SRC/fixtures/trees/fastnet" st
(cd st && git init -q && git add -A && git commit -qm base) || bad "stat repository"
mine=$(cd st && "$BIN" diff --stat . 2>/dev/null)
(cd st && "$BIN" apply . >/dev/null 2>&1)
theirs=$(cd st && git diff --stat)
if [ -n "$mine" ] && [ "$mine" = "$theirs" ]; then ok; else bad "diff --stat as git diff --stat: mine
$mine
git's
$theirs"; fi
# one name defined by three architectures: each definition is left as it is,
# and says where else the name is defined, from its own side
mkdir -p av/arch/alpha/kernel av/arch/i386/kernel av/arch/mips/kernel
for a in alpha i386 mips; do
	cat >"av/arch/$a/kernel/setup.c" <<'EOC'
struct cpuinfo { unsigned long loops; };
struct cpuinfo cpu_data[NR_CPUS];

void calibrate(void)
{
	cpu_data[smp_processor_id()].loops = 1;
}
EOC
done
run scan -v av
expect_out "^av/arch/mips/kernel/setup.c:2:[0-9]+: note: fix: none - not converted: cpu_data is also defined in av/arch/alpha/kernel/setup.c:2, av/arch/i386/kernel/setup.c:2 \\(one name" "an arch variant names the other definitions"
expect_out "^av/arch/alpha/kernel/setup.c:2:[0-9]+: note: fix: none - not converted: cpu_data is also defined in av/arch/i386/kernel/setup.c:2, av/arch/mips/kernel/setup.c:2 " "each variant from its own side"
# a definition refused at its own declaration (an initialiser that is not all
# zero) still refuses another architecture's array of its name
mkdir -p av2/arch/i386/kernel av2/arch/x86_64/kernel
cat >av2/arch/i386/kernel/task.c <<'EOC'
struct tss { unsigned long sp; };
struct tss tss_area[NR_CPUS] = { [0 ... NR_CPUS-1] = { 1 } };
EOC
cat >av2/arch/x86_64/kernel/task.c <<'EOC'
struct tss { unsigned long sp; };
struct tss tss_area[NR_CPUS];

void load_sp(void)
{
	unsigned long flags;

	local_irq_save(flags);
	tss_area[smp_processor_id()].sp = 0;
	local_irq_restore(flags);
}
EOC
run scan -v av2
expect_out "^av2/arch/x86_64/kernel/task.c:2:[0-9]+: note: fix: none - not converted: tss_area is also defined in av2/arch/i386/kernel/task.c:2 \\(one name" "a definition refused at its declaration refuses the other one"
expect_out "^av2/arch/i386/kernel/task.c:2:[0-9]+: note: why: the array has an initialiser that is not all zero" "and keeps its own reason"
# explain on one file indexes no tree, and says so truly (not --no-tree)
run explain av/arch/mips/kernel/setup.c:2
expect_out "its other files were not indexed \\(--no-tree, or explain without --context-root DIR\\)" "explain alone: why a non-static array is left"
# --context-root reads the wider tree for context, but reports and rewrites
# only the paths given: a header outside them that declares a shared array
# (refused: not all its files are given) and has sites of its own stays out
mkdir -p cr/include/linux cr/net/core cr/drivers/net
cat >cr/include/linux/crstat.h <<'EOC'
struct crstat { unsigned long n; };
extern struct crstat crstats[NR_CPUS];

static inline void crstat_note(void)
{
	int cpu = smp_processor_id();
	printk("%d", cpu);
	crnote(cpu);
}
EOC
cat >cr/net/core/crstat.c <<'EOC'
#include <linux/crstat.h>
struct crstat crstats[NR_CPUS];

void crstat_core(void)
{
	crstats[smp_processor_id()].n = 1;
}
EOC
cat >cr/drivers/net/crdrv.c <<'EOC'
#include <linux/crstat.h>

void crdrv_poll(void)
{
	int cpu = smp_processor_id();
	crstats[cpu].n = 0;
	crnote(cpu);
}
EOC
run scan -v --context-root cr cr/drivers/net cr/net
expect_out '^cr/drivers/net/crdrv.c:5:[0-9]+: warning: .*\[P00[23](, fixable)?\]' "the driver's own site is reported"
expect_no_out '^cr/include/' "no finding in a file outside the paths given"
run diff --context-root cr cr/drivers/net cr/net
expect_out '^\+\+\+ b/cr/drivers/net/crdrv.c' "the driver is rewritten"
expect_no_out '^\+\+\+ b/cr/include/' "nothing outside the paths given is rewritten"
# netfilter and protocol tables: NF_HOOK(..., okfn) runs okfn in its
# caller's context; 2.4's positional initialisers of struct packet_type and
# struct inet_protocol register their handlers as the designated ones do;
# an iptables target runs under the table's lock. A positional initialiser
# of a struct the kernel does not run in a known context registers nothing.
mkdir -p nf/include/net nf/net/ipv4
cat >nf/include/net/nfdemo.h <<'EOC'
struct sk_buff;
int nfdemo_finish(struct sk_buff *skb);
int nfdemo_out_finish(struct sk_buff *skb);
EOC
cat >nf/net/ipv4/nfdemo_in.c <<'EOC'
#include <net/nfdemo.h>

static int nfdemo_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt)
{
	return NF_HOOK(PF_INET, NF_IP_PRE_ROUTING, skb, dev, NULL, nfdemo_finish);
}

int nfdemo_send(struct sk_buff *skb)
{
	return NF_HOOK(PF_INET, NF_IP_LOCAL_OUT, skb, NULL, skb->dev, nfdemo_out_finish);
}

static struct packet_type nfdemo_packet_type = {
	0x0800,		/* type */
	NULL,		/* any device */
	nfdemo_rcv,	/* func */
	NULL,
	NULL,
};
EOC
cat >nf/net/ipv4/nfdemo_out.c <<'EOC'
#include <net/nfdemo.h>

int nfdemo_finish(struct sk_buff *skb)
{
	int cpu = smp_processor_id();

	nfdemo_count(cpu, skb);
	return 0;
}

int nfdemo_out_finish(struct sk_buff *skb)
{
	int cpu = smp_processor_id();

	nfdemo_count(cpu, skb);
	return 0;
}
EOC
cat >nf/net/ipv4/nfdemo_tun.c <<'EOC'
static int tun_rcv(struct sk_buff *skb)
{
	return 0;
}

static void tun_err(struct sk_buff *skb, u32 info)
{
	int cpu = smp_processor_id();

	tun_note(cpu, info);
}

static struct inet_protocol tun_protocol = {
	tun_rcv,	/* handler */
	tun_err,	/* error control */
	0,		/* next */
	IPPROTO_GRE,	/* protocol */
};

static unsigned int demo_target(struct sk_buff **pskb, unsigned int hooknum)
{
	int cpu = smp_processor_id();

	tun_note(cpu, hooknum);
	return 0;
}

static struct ipt_target demo_tg = {
	.name	= "DEMO",
	.target	= demo_target,
};

static void demo_op(int x)
{
	int cpu = smp_processor_id();

	tun_note(cpu, x);
}

static struct demo_ops demo_ops = {
	demo_op,
};
EOC
run scan nf; expect_rc 1 "the netfilter tree keeps two findings"
if [ "$(printf '%s\n' "$out" | sed -nE 's#^nf/([^:]+:[0-9]+):.*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p')" = "$(printf '%s\n' 'net/ipv4/nfdemo_out.c:13 P003' 'net/ipv4/nfdemo_tun.c:35 P003')" ]; then ok
else bad "okfn of a softirq's NF_HOOK, a positional inet_protocol's err_handler and an iptables target are atomic; okfn of a preemptible caller and an unknown table's member are not"; fi
run explain --context-root nf nf/net/ipv4/nfdemo_out.c:5; expect_rc 0 "okfn under a softirq's NF_HOOK: protected"
expect_out 'from nfdemo_rcv\(\) at nf/net/ipv4/nfdemo_in.c:5 \(as the okfn of NF_HOOK\(\), run in its caller.s context: .*third member of a struct packet_type initialiser' "the chain names the NF_HOOK and the positional packet_type"
run explain --context-root nf nf/net/ipv4/nfdemo_out.c:13; expect_rc 0 "okfn of a preemptible caller: a finding"; expect_out ": flagged \(" "okfn of a preemptible caller: a finding (flagged)"
expect_out 'called from nfdemo_send\(\) at nf/net/ipv4/nfdemo_in.c:10 with preemption on' "the preemptible NF_HOOK caller is named"
# alpha: do_entInt() is the interrupt entry; the machine vector's
# machine_check (initialised) and device_interrupt (assigned at boot) are
# called from it in interrupt context, and so is the IPI handler it calls
mkdir -p mv/arch/alpha/kernel
cat >mv/arch/alpha/kernel/irq_alpha.c <<'EOC'
asmlinkage void
do_entInt(unsigned long type, unsigned long vector, unsigned long la_ptr,
	  unsigned long a3, unsigned long a4, unsigned long a5,
	  struct pt_regs regs)
{
	switch (type) {
	case 0:
		handle_ipi(&regs);
		return;
	case 2:
		alpha_mv.machine_check(vector, la_ptr, &regs);
		return;
	case 3:
		alpha_mv.device_interrupt(vector, &regs);
		return;
	}
}
EOC
cat >mv/arch/alpha/kernel/smp.c <<'EOC'
void handle_ipi(struct pt_regs *regs)
{
	int this_cpu = smp_processor_id();

	ipi_note(this_cpu, regs);
}
EOC
cat >mv/arch/alpha/kernel/sys_demo.c <<'EOC'
static void demo_machine_check(u64 vector, u64 la, struct pt_regs *regs)
{
	int cpu = smp_processor_id();

	mcheck_note(cpu, vector);
}

static void demo_device_interrupt(unsigned long vector, struct pt_regs *regs)
{
	int cpu = smp_processor_id();

	dev_note(cpu, vector);
}

static void __init demo_init_irq(void)
{
	alpha_mv.device_interrupt = demo_device_interrupt;
}

struct alpha_machine_vector demo_mv __initmv = {
	vector_name:	"Demo",
	init_irq:	demo_init_irq,
	machine_check:	demo_machine_check,
};
EOC
mkdir -p mv/arch/i386/kernel
cat >mv/arch/i386/kernel/bluesmoke.c <<'EOC'
static void unexpected_machine_check(struct pt_regs *regs, long error_code);
static void (*machine_check_vector)(struct pt_regs *, long error_code) = unexpected_machine_check;

asmlinkage void do_machine_check(struct pt_regs *regs, long error_code)
{
	machine_check_vector(regs, error_code);
}

static void demo_mce(struct pt_regs *regs, long error_code)
{
	int cpu = smp_processor_id();

	mce_log(cpu, error_code);
}

void __init demo_mcheck_init(void)
{
	machine_check_vector = demo_mce;
}
EOC
# ppc: do_IRQ() asks the platform's ppc_md.get_irq for the interrupt; an IPI it finds is handled there
mkdir -p mv/arch/ppc/platforms
cat >mv/arch/ppc/platforms/demo_pic.c <<'EOC'
static int demo_get_irq(struct pt_regs *regs)
{
	int cpu = smp_processor_id();

	if (demo_ipi_pending(cpu)) {
		demo_ipi_recv(cpu, regs);
		return -2;
	}
	return demo_pending_irq(cpu);
}

void __init demo_pic_init(void)
{
	ppc_md.get_irq = demo_get_irq;
}
EOC
# i386: entry.S's NMI entry calls do_nmi(), which calls the watchdog in another file
cat >mv/arch/i386/kernel/entry.S <<'EOC'
/*
 * The NMI entry: do_nmi() calls demo_watchdog_tick() ("a comment is no call").
 */
ENTRY(nmi)
	pushl %eax
	call SYMBOL_NAME(do_nmi)
	jmp restore_all
EOC
cat >mv/arch/i386/kernel/traps.c <<'EOC'
extern void demo_watchdog_tick(struct pt_regs *regs);

asmlinkage void do_nmi(struct pt_regs *regs, long error_code)
{
	++nmi_count(smp_processor_id());
	demo_watchdog_tick(regs);
}
EOC
cat >mv/arch/i386/kernel/nmi.c <<'EOC'
void demo_watchdog_tick(struct pt_regs *regs)
{
	int cpu = smp_processor_id();

	if (demo_stuck(cpu))
		demo_die(cpu, regs);
}
EOC
# ppc: an exception handler that enters hard-IRQ context itself (2.4 temp.c TAUException())
mkdir -p mv/arch/ppc/kernel
cat >mv/arch/ppc/kernel/demo_tau.c <<'EOC'
void demo_tau_exception(struct pt_regs *regs)
{
	unsigned long cpu = smp_processor_id();

	hardirq_enter(cpu);
	demo_tau[cpu].interrupts++;
	hardirq_exit(cpu);
}
EOC
# an interrupt controller's ack and end: do_IRQ() calls them (positional and designated initialisers)
mkdir -p mv/arch/ppc64/kernel
cat >mv/arch/ppc64/kernel/demo_xics.c <<'EOC'
static void demo_end_irq(unsigned int irq)
{
	int cpu = smp_processor_id();

	demo_cppr(cpu, 0xff);
}

static void demo_ack_irq(unsigned int irq)
{
	int cpu = smp_processor_id();

	demo_cppr(cpu, 0);
}

struct hw_interrupt_type demo_pic = {
	" DEMO ",
	NULL,
	NULL,
	NULL,
	NULL,
	NULL,
	demo_end_irq,
	NULL
};

struct hw_interrupt_type demo_pic2 = {
	typename: " DEMO2 ",
	ack: demo_ack_irq,
};
EOC
run scan --no-tree mv/arch/i386/kernel/nmi.c; expect_rc 1 "the NMI watchdog alone: its callers are unknown"
run scan mv; expect_rc 0 "the machine vector's handlers, the IPI handler, the machine_check_vector handler and ppc_md.get_irq run in interrupt context"
run explain --context-root mv mv/arch/i386/kernel/nmi.c:3
expect_out 'every call in the tree is made with preemption off: from do_nmi\(\) at mv/arch/i386/kernel/traps.c:6 \(do_nmi\(\) runs in hard-IRQ context: NMI handler' "the NMI handler named as the watchdog's context"
run explain --context-root mv mv/arch/ppc64/kernel/demo_xics.c:3
expect_out "seventh member of a struct hw_interrupt_type initialiser, line 22\\): do_IRQ\\(\\) calls it" "an interrupt controller's end, by position"
run explain --context-root mv mv/arch/ppc64/kernel/demo_xics.c:10
expect_out "\\.ack of a struct hw_interrupt_type, line 28\\)" "an interrupt controller's ack, by name"
run explain --context-root mv mv/arch/ppc/kernel/demo_tau.c:3
expect_out 'calls hardirq_enter\(\) at line 5' "ppc's hardirq_enter() named as the context"
run explain --context-root mv mv/arch/ppc/platforms/demo_pic.c:3
expect_out 'ppc_md.get_irq, set at line 14\): do_IRQ\(\) calls it in interrupt context' "ppc_md.get_irq named as the context"
run explain --context-root mv mv/arch/alpha/kernel/smp.c:3
expect_out "do_entInt\\(\\) runs in hard-IRQ context: alpha's interrupt entry point" "the chain names do_entInt"
# a slot converted to per_cpu(x, cpu) whose CPU read keeps no fix: the note says the race stays
run scan -f json "$SRC/fixtures/drivers/misc/stale_slot.c"
expect_out '"line": 17,.*"fix": "define-per-cpu".*"fix_note": "per_cpu\(\) only converts the storage: the CPU number read at line 15 is not fixed' "the converted slot's note names the unfixed read"

# a driver's own function pointer (2.4 e1000's adapter->clean_rx): a static function
# stored only in a field no other file accesses is called through the file's ->field(...)
cp -r "$SRC/fixtures/trees/fastring" fr
ringsites() { printf '%s\n' "$out" | sed -nE 's#^fr/([^:]+:[0-9]+):[0-9]+: [a-z]+: .*\[(P[0-9]+)(, fixable)?\]$#\1 \2#p' | tr '\n' ' '; }
run scan fr
if [ "$(ringsites)" = "net/core/ringcore.c:14 P003 " ]; then ok
else bad "only the routine another file also calls through its field stays preemptible: $(ringsites)"; fi
run explain --context-root fr fr/net/core/ringcore.c:8; expect_rc 0 "called through ->receive from the interrupt handler: protected"
expect_out 'ring_rx\(\) is called with preemption off: it is stored only in field receive, which no other file of the tree accesses' "the field named in the chain"
run scan --no-tree fr
if [ "$(ringsites)" = "net/core/ringcore.c:8 P003 net/core/ringcore.c:14 P003 " ]; then ok
else bad "--no-tree: the other files are unknown, both stay: $(ringsites)"; fi
# the file reads the pointer into a variable: its calls through the field are not all there is
sed -i 's|^int ring_open(void)$|int (*ring_saved)(struct ring *r);\n\nvoid ring_save(void)\n{\n\tring_saved = the_ring.receive;\n}\n\n&|' fr/drivers/net/ring.c
run scan fr
if [ "$(ringsites)" = "net/core/ringcore.c:8 P003 net/core/ringcore.c:14 P003 " ]; then ok
else bad "a pointer read out of the field: not followed: $(ringsites)"; fi
finish
