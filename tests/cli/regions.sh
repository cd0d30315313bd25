#!/usr/bin/env bash
# A get_cpu() region left early: every goto, break or continue that jumps out
# of the region gets its put_cpu() first, and one that stays inside gets none.
# A continue inside a switch leaves the loop's region (the switch is not its
# target); the switch's break does not. Without that the plan's proof finds get/put unpaired and the site silently
# becomes "not fixed"; with a put_cpu() too many the count goes negative.
. "$(dirname "$0")/lib.sh"

cat > exits.c <<'C'
#include <linux/smp.h>
void note(int cpu, int v);

int count_goto(int v)
{
	int cpu = smp_processor_id();

	if (v < 0)
		goto out;
	note(cpu, v);
out:
	return 0;
}

int count_loop(int *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		int cpu = smp_processor_id();

		if (v[i] < 0)
			break;
		if (v[i] == 0)
			continue;
		note(cpu, v[i]);
	}
	return i;
}

void count_inner(int *v, int n)
{
	int i, cpu = smp_processor_id();

	for (i = 0; i < n; i++) {
		if (v[i] < 0)
			break;
		if (v[i] == 0)
			goto again;
		note(cpu, v[i]);
again:
		continue;
	}
	note(cpu, n);
}

void count_switch(int *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		int cpu = smp_processor_id();

		switch (v[i]) {
		case 0:
			continue;
		default:
			break;
		}
		note(cpu, v[i]);
	}
}
C

# edits: "LINE:op:node" of each planned edit, one finding per line of output
edits() {
	printf '%s' "$out" | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    e = " ".join("%d:%s:%s" % (x["line"], x["op"], x["node"]) for x in f["edits"])
    print("%s %d %s %s" % (f["function"], f["line"], f["fix"], e))'
}

run scan -f json exits.c; expect_rc 1 "four regions: findings"
got=$(edits)
want='count_goto 6 get-cpu 6:replace:call_expression 9:insert-before:goto_statement 10:insert-after:expression_statement
count_loop 20 get-cpu 20:replace:call_expression 23:insert-before:break_statement 25:insert-before:continue_statement 26:insert-after:expression_statement
count_inner 33 get-cpu 33:replace:call_expression 44:insert-after:expression_statement
count_switch 52 get-cpu 52:replace:call_expression 56:insert-before:continue_statement 60:insert-after:expression_statement'
if [ "$got" = "$want" ]; then ok; else bad "planned edits: want
$want
got
$got"; fi

# no region over a call that might sleep (an allocation whose GFP flags are
# not known here): refused when planned, with the call named
cat > maysleep.c <<'C'
#include <linux/smp.h>
#include <linux/slab.h>
void note(int cpu, void *p);

void *alloc_note(int gfp)
{
	int cpu = smp_processor_id();
	void *p = kmalloc(64, gfp);

	note(cpu, p);
	return p;
}
C
run scan -v maysleep.c; expect_rc 1 "a region over kmalloc(gfp): flagged"
expect_out '^maysleep\.c:7:12: note: fix: none - the region would contain kmalloc\(gfp\) at line 8, which might sleep$' \
	"a region over kmalloc(gfp): refused, the call named"

if have spatch "the rewrite of the exits"; then
	run diff -v exits.c; expect_rc 1 "diff: changes"
	expect_err '^preemptify: 4 sites to fix in 1 file(;|$)' "every region fixed"
	expect_err '^preemptify: fixes: get-cpu: 4$' "every region fixed: the kind"
	printf '%s\n' "$err" | grep -q '; not fixed: ' && bad "none refused" || ok
	# the put_cpu() before each exit, in the block spatch opens for it, one tab deeper than the if
	expect_out '^\+	if \(v < 0\) \{$' "goto: the if opens a block"
	expect_out '^\+		put_cpu\(\);$' "goto: put_cpu() one tab inside the if"
	expect_out '^\+			put_cpu\(\);$' "break/continue: put_cpu() one tab inside the if"
	n=$(printf '%s\n' "$out" | grep -c '^+.*put_cpu();')
	[ "$n" -eq 8 ] && ok || bad "eight put_cpu() in all (goto, fall-through; break, continue, fall-through; one after the loop; continue in a switch, fall-through), got $n"
	cp exits.c applied.c
	run apply applied.c; expect_rc 0 "apply"
	run scan -q applied.c; expect_rc 0 "nothing left to fix, and no unbalanced get/put (P007)"
fi
# an if whose else arm is split off by #endif (2.6.9 ia64 perfmon pfm_flush()):
# the grammar's if ends before `else`, so no statement may follow it there
cat > split_else.c <<'C'
#include <linux/smp.h>
struct ctx { int cpu; };
void other_cpu(struct ctx *c);
void here(struct ctx *c);

void flush(struct ctx *c, int sys)
{
	if (c) {
#ifdef CONFIG_SMP
		if (sys && c->cpu != smp_processor_id()) {
			other_cpu(c);
		} else
#endif
		{
			here(c);
		}
	}
}
C
run scan -f json --no-tree split_else.c; expect_rc 1 "split else: a finding"
if python3 - "$out" <<'PY'
import json, sys
f = [x for x in json.loads(sys.argv[1])["findings"] if x["line"] == 10]
assert f and not f[0]["fixable"], f
assert "goes on with an else" in f[0]["fix_note"], f[0]["fix_note"]
PY
then ok; else bad "split else: refused, with the reason"; fi
run diff --no-tree split_else.c; expect_no_out 'preempt_enable\(\); else' "split else: no hunk cuts the else off"
# the lone body of an if before its else becomes a block: `{ x; put(); } else` keeps the else
cat > lone_else.c <<'C'
#include <linux/percpu.h>
DECLARE_PER_CPU(int, hits);
DECLARE_PER_CPU(int, misses);

void count(int hit)
{
	if (hit)
		__get_cpu_var(hits)++;
	else
		__get_cpu_var(misses)++;
}
C
run scan -f json --no-tree lone_else.c; expect_rc 1 "lone body before else: a finding"
if python3 - "$out" <<'PY'
import json, sys
f = [x for x in json.loads(sys.argv[1])["findings"] if x["line"] == 8]
assert f and f[0]["fixable"], f
PY
then ok; else bad "lone body before else: still fixable"; fi
# the region reaches the calls on this CPU's local APIC (2.4 x86_64
# smp_stop_cpu(): the CPU leaves the map, then its own APIC is disabled)
cat > stop_cpu.c <<'C'
#include <linux/smp.h>
#include <asm/bitops.h>
extern unsigned long cpu_online_map;
void disable_local_APIC(void);

void demo_stop_cpu(void)
{
	clear_bit(smp_processor_id(), &cpu_online_map);
	__cli();
	disable_local_APIC();
	__sti();
}
C
run diff --no-tree stop_cpu.c; expect_rc 1 "local APIC: a fix"
if printf '%s\n' "$out" | grep -A1 '^ 	disable_local_APIC();$' | grep -qx '+	put_cpu();'; then ok
else bad "local APIC: put_cpu() after disable_local_APIC(), not before it"; fi
finish
