#!/usr/bin/env bash
# Odd input a hostile or unlucky user gives: K&R definitions, control
# characters in file names, a file named twice, no spatch.
. "$(dirname "$0")/lib.sh"

# K&R definitions without a return type: reported as unparsed, and the
# array they use is not converted (half a conversion would not compile)
cat > kr.c <<'C'
#include <linux/smp.h>
static int nr[NR_CPUS];

kr_count(x)
int x;
{
	nr[smp_processor_id()] += x;
	return x;
}

kr_bump(y)
{
	nr[smp_processor_id()]++;
}

void show(int n);

void modern(void)
{
	show(nr[smp_processor_id()]);
}
C
run scan -v kr.c; expect_rc 1 "K&R: the modern site is flagged"
expect_out 'kr\.c:7:[0-9]+: note: unparsed: .*not read as a function \(a K&R definition' "K&R: the first definition is reported unparsed"
expect_out 'kr\.c:13:[0-9]+: note: unparsed: .*not read as a function \(a K&R definition' "K&R: the second definition is reported unparsed"
expect_out 'nr is used at line 7 outside any function' "K&R: the array stays an array, with the reason"
if have spatch "rewrite checks"; then
	run diff kr.c
	expect_no_out 'DEFINE_PER_CPU' "K&R: no half conversion"
fi

# what spatch cannot parse is refused when planned, with the reason, so
# explain/JSON and diff agree: K&R parameter declarations, and a function
# holding text that is not C (spatch parses #ifdef arms too)
cat > spatch_cannot.c <<'C'
#include <linux/smp.h>
extern unsigned long stamp[NR_CPUS];
void note(int cpu);

int
old_style(vp)
unsigned *vp;
{
	int cpu = smp_processor_id();

	note(cpu);
	return *vp;
}

void with_notes(void)
{
	int cpu = smp_processor_id();

	note(cpu);
#ifdef LATER
	Wait logic goes here.
#endif
}

void iterate(void)
{
	int cpu;

	cpu = smp_processor_id();
	note(cpu);
	task_for_first(t, &queue) {
		note(1);
	} else {
		note(2);
	}
}

void typed_arg(void *p)
{
	struct item *it = list_entry(p, struct item, link);
	int cpu = smp_processor_id();

	note(cpu);
	note(it->n);
}
void mark(void)
{
	unsigned long m = smp_processor_id();

	m = (m << 24) | 1UL;
	__asm__ __volatile__("" : : "r" (m));
}
C
run scan --format=json spatch_cannot.c
expect_out '"line": 9, .*"fix": "none", .*old_style\(\) is a K&R-style definition' "K&R parameters: refused when planned"
expect_out '"line": 17, .*"fix": "none", .*with_notes\(\) holds text that is not C \(line 21\)' "prose in an #ifdef arm: refused when planned"
expect_out '"line": 29, .*"fix": "none", .*iterate\(\) holds text that is not C \(line 33\)' "an iterator macro with an else arm: refused when planned"
expect_out '"line": 41, .*"fix": "get-cpu"' "a type as a macro argument is no reason to refuse"
expect_out '"line": 48, .*"fix": "none", .*next to the inline asm statement at line 51' "no insertion at an asm statement"
if have spatch "rewrite checks"; then
	run diff -v spatch_cannot.c; expect_rc 1 "typed_arg() is rewritten"
	expect_err '^preemptify: 1 site to fix in 1 file(;|$)' "no refusal left for the rewrite"
	expect_err '^preemptify: fixes: get-cpu: 1$' "no refusal left for the rewrite: the kind"
	printf '%s\n' "$err" | grep -q '; not fixed: ' && bad "no refusal (stderr)" || ok
fi

# the 2.4 definition of need_resched() is what the rewrite calls: never a site
cat > sched_defs.h <<'C'
static inline int need_resched(void)
{
	return (unlikely(current->need_resched));
}

static inline void cond_resched(void)
{
	if (need_resched())
		__cond_resched();
}
C
run scan sched_defs.h; expect_rc 0 "need_resched()'s own definition is not a site"
expect_no_out 'P004' "no need_resched() inside need_resched()"

# statistics counters: a note without a fix, unless --strict-stats
cat > stats.c <<'C'
#include <linux/smp.h>
struct counters { unsigned long hits, misses; };
extern struct counters drv_stats[NR_CPUS];
extern int drv_owner[NR_CPUS];

void count_hit(void)
{
	drv_stats[smp_processor_id()].hits++;
}

void remember(int v)
{
	drv_owner[smp_processor_id()] = v;
}
C
run scan --format=json stats.c
expect_out '"line": 8, .*"severity": "note", .*"fix": "none", .*statistics counter' "a counter: a note, no fix"
expect_out '"line": 13, .*"fix": "get-cpu"' "a store that is not a count keeps its fix"
run scan --strict-stats --format=json stats.c
expect_out '"line": 8, .*"fix": "get-cpu"' "--strict-stats fixes counters too"
# 2.4's SNMP counters: two slots per CPU, the slot computed from the CPU number
cat > snmp.c <<'C'
#include <linux/smp.h>
struct mib { unsigned long estab; };
extern struct mib tcp_stats[NR_CPUS * 2];
void note(unsigned long v);

void set_state(int old)
{
	if (old == 1)
		tcp_stats[smp_processor_id()*2+!in_softirq()].estab--;
	note(tcp_stats[smp_processor_id()*2].estab);
}
C
run scan --format=json snmp.c
expect_out '"line": 9, .*"severity": "note", .*"fix": "none", .*statistics counter' "a slot computed from the CPU number: a counter"
expect_out '"line": 10, .*"fix": "get-cpu"' "a read of the same slot is no counter"

# a comparison that only decides whether a debug message is printed
cat > dbg.c <<'C'
#include <linux/smp.h>
#include <linux/kernel.h>
extern int last_cpu;
void note(int v);

void demo_flush(int pid)
{
	if (last_cpu != smp_processor_id())
		printk(KERN_DEBUG "demo: [%d] last_cpu=%d\n", pid, last_cpu);
	if (last_cpu != smp_processor_id())
		note(pid);
	if (last_cpu != smp_processor_id())
		printk("moved\n");
	else
		note(pid);
}
C
run scan --format=json dbg.c
expect_out '"line": 8, .*"severity": "note", .*"fix": "none"' "a test that only decides a printk: a note"
expect_out '"line": 10, .*"fix": "get-cpu"' "a test that decides other work: a fix"
expect_out '"line": 12, .*"fix": "get-cpu"' "a test with an else: a fix"

# control characters in a file name: refused, shown escaped
esc=$(printf 'e\033[31mred.c')
cp kr.c "$esc"
run scan "$esc" kr.c; expect_rc 3 "control characters: exit 3"
expect_out 'e\\x1b\[31mred\.c: error: the file name contains control characters' "control characters: escaped name"
if printf '%s%s' "$out" "$err" | grep -q "$(printf '\033')"; then bad "control characters: ESC printed raw"; else ok; fi
rm -f "$esc"

# a file named twice is scanned once
mkdir one && cp kr.c one/
run scan one/kr.c ./one/kr.c one; expect_err 'in 1 file[:; (]' "a file named three ways is scanned once"

# a report that cannot be written is a failure, not a success
if [ -w /dev/full ]; then
	"$BIN" scan kr.c >/dev/full 2>"$WORK/.err"; rc=$?; err=$(cat "$WORK/.err"); out=
	expect_rc 3 "scan to a full disk: exit 3"
	expect_err 'cannot write the output: No space left on device' "scan to a full disk: says so"
fi

# no spatch: says nothing was rewritten, not "0 not fixed"
run diff --spatch "$WORK/no-such-spatch" kr.c; expect_rc 3 "no spatch: exit 3"
expect_err 'nothing rewritten; 1 fixable site left as it is' "no spatch: the fixable sites are counted"
expect_no_out '^(diff|---|\+\+\+)' "no spatch: no diff"
if printf '%s\n' "$err" | grep -q '0 not fixed'; then bad "no spatch: a misleading total"; else ok; fi
# declarations the parser had to repair (found by the fuzzer): an array with no
# name (a MISSING identifier: an empty name matched every byte of a macro body)
# and one with an empty inner dimension are not per-CPU data to convert
cat > repaired.c <<'C'
#include <linux/smp.h>
#define BUMP(i) (i)++
static int [NR_CPUS];
static struct hist { unsigned long n; } hist[NR_CPUS][;
static int nr[NR_CPUS];

void count(void)
{
	BUMP(nr[smp_processor_id()]);
}
C
run scan -v repaired.c; expect_rc 1 "repaired declarations: scanned"
expect_out '^repaired\.c:9:7: warning: per-CPU array nr indexed by smp_processor_id\(\) .*\[P001, fixable\]' \
	"repaired declarations: the real site flagged (BUMP() evaluates its argument on every path)"
# scan -v names every array it would convert in a P008 note at its declaration
expect_out '^repaired\.c:5:12: note: 2\.4 per-CPU array int nr\[NR_CPUS\]' "repaired declarations: nr is an array"
expect_no_out '^repaired\.c:[34]:' "repaired declarations: nothing said of the broken arrays"
run scan -f json repaired.c; expect_rc 1 "repaired declarations: JSON too"
if printf '%s' "$out" | python3 -c '
import json, sys
fs = json.load(sys.stdin)["findings"]
got = [(f["line"], f["rule"]) for f in fs]
sys.exit(0 if got == [(5, "P008"), (9, "P001")] and "hist" not in json.dumps(fs) else 1)'; then ok
else bad "repaired declarations: JSON has exactly the P008 of nr and the P001 at line 9"; fi
if have spatch "rewrite checks"; then
	run diff repaired.c
	expect_out '^\+static DEFINE_PER_CPU\(int, nr\);' "repaired declarations: nr converted, the broken arrays not"
	expect_out '^\+	BUMP\(get_cpu_var\(nr\)\);' "repaired declarations: the use inside BUMP() converted"
	expect_no_out '^[-+].*hist' "repaired declarations: hist left as it is"
fi
# inputs the fuzzer found crashing (tests/fuzz/regressions): each is scanned,
# with and without its definitions' parameters, and never kills the tool
for f in "$SRC"/tests/fuzz/regressions/*.c; do
	cp "$f" regression.c
	run scan --no-cache --no-tree regression.c
	[ "$rc" -le 1 ] && ok || bad "${f##*/}: scan exits $rc (a crash?)"
	run scan --no-cache --no-tree -f json regression.c
	[ "$rc" -le 1 ] && ok || bad "${f##*/}: JSON scan exits $rc"
done
finish
