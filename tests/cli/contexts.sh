#!/usr/bin/env bash
# Contexts and the prefilter, each through the one construct that decides it:
# a timer function known only from DEFINE_TIMER; an interrupt handler whose
# helper drops the handler's lock and sleeps (dropping a lock does not make
# an interrupt handler preemptible); files whose only trigger token is one of
# the prefilter's, which must still be parsed and analysed.
. "$(dirname "$0")/lib.sh"

# DEFINE_TIMER(t, fn, ...): fn runs in softirq context, so its CPU use is
# protected; the same use in a plain function is not
cat > timer.c <<'C'
#include <linux/smp.h>
#include <linux/timer.h>
void note(int cpu);

static void poll_tick(unsigned long data)
{
	note(smp_processor_id());
}

static DEFINE_TIMER(poll_timer, poll_tick, 0, 0);

void poll_user(void)
{
	note(smp_processor_id());
}
C
run scan -v timer.c; expect_rc 1 "DEFINE_TIMER: the plain function's use is flagged"
expect_out '^timer\.c:7:7: note: protected: .*\[P003(, fixable)?\]' "DEFINE_TIMER: the timer function's use is protected"
expect_out '^timer\.c:7:7: note: why: poll_tick\(\) runs in softirq context: timer function \(DEFINE_TIMER at line 10\)' \
	"DEFINE_TIMER: the reason names the macro and its line"
expect_no_out '^timer\.c:7:7: warning' "DEFINE_TIMER: no false P003 in the timer function"
expect_out '^timer\.c:14:7: warning: .*\[P003(, fixable)?\]' "the plain function's use: P003"

# an interrupt handler calling a helper that drops the handler's lock around
# a sleep: still atomic (P006); the same call from process context is the
# 2.4 idiom that drops the caller's lock, and is not reported
cat > irq.c <<'C'
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/interrupt.h>
#include <linux/smp.h>

static spinlock_t dev_lock = SPIN_LOCK_UNLOCKED;
static wait_queue_head_t dev_wait;
static int last_cpu;

static void wait_for_room(void)
{
	spin_unlock(&dev_lock);
	sleep_on(&dev_wait);
	spin_lock(&dev_lock);
}

static void dev_interrupt(int irq, void *dev_id, struct pt_regs *regs)
{
	spin_lock(&dev_lock);
	last_cpu = smp_processor_id();
	wait_for_room();
	spin_unlock(&dev_lock);
}

static void dev_write(void)
{
	spin_lock(&dev_lock);
	wait_for_room();
	spin_unlock(&dev_lock);
}

int dev_init(void)
{
	return request_irq(5, dev_interrupt, 0, "dev", NULL);
}
C
run scan irq.c; expect_rc 1 "IRQ handler reaching a sleeper: findings"
expect_out '^irq\.c:21:2: error: wait_for_room\(\) \(which calls sleep_on\(\) at line 13\) may sleep, but preemption is off here \[P006(, fixable)?\]' \
	"IRQ handler: the lock-dropping sleeper is still a sleep in atomic context"
expect_no_out '^irq\.c:28:' "process context: the helper drops the only lock held, no report"

# preemption off by preempt_disable(), no lock of the caller's: the helper's
# unlock/lock pair does not turn preemption back on
cat > pd.c <<'C'
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/preempt.h>

static spinlock_t dev_lock = SPIN_LOCK_UNLOCKED;
static wait_queue_head_t dev_wait;

static void wait_for_room(void)
{
	spin_unlock(&dev_lock);
	sleep_on(&dev_wait);
	spin_lock(&dev_lock);
}

void dev_flush(void)
{
	preempt_disable();
	wait_for_room();
	preempt_enable();
}
C
run scan pd.c; expect_rc 1 "preempt_disable() and a lock-dropping sleeper: a finding"
expect_out '^pd\.c:18:2: error: wait_for_room\(\) \(which calls sleep_on\(\) at line 11\) may sleep, but preemption is off here \[P006(, fixable)?\]' \
	"preempt_disable(): the helper's lock drop does not re-enable preemption"

# 2.6 arm: a flow handler installed with set_irq_handler() (or chained) runs
# in interrupt context, called by asm_do_IRQ() through the descriptor
cat > armirq.c <<'C'
#include <linux/smp.h>
#include <asm/mach/irq.h>
void note(int cpu);

static void board_level_irq(unsigned int irq, struct irqdesc *desc, struct pt_regs *regs)
{
	note(smp_processor_id());
}

static void board_demux(unsigned int irq, struct irqdesc *desc, struct pt_regs *regs)
{
	note(smp_processor_id());
}

static void board_other(unsigned int irq, struct irqdesc *desc, struct pt_regs *regs)
{
	note(smp_processor_id());
}

void board_init_irq(void (*save)(void *))
{
	set_irq_handler(3, board_level_irq);
	set_irq_chained_handler(4, board_demux);
	save(board_other);
}
C
run scan -v --no-tree armirq.c; expect_rc 1 "set_irq_handler: a pointer stored elsewhere is still flagged"
expect_out '^armirq\.c:7:7: note: why: board_level_irq\(\) runs in hard-IRQ context: interrupt flow handler set by set_irq_handler\(\) at line 22' \
	"set_irq_handler(): hard-IRQ context"
expect_out '^armirq\.c:12:7: note: why: board_demux\(\) runs in hard-IRQ context: chained interrupt handler set by set_irq_chained_handler\(\) at line 23' \
	"set_irq_chained_handler(): hard-IRQ context"
expect_out '^armirq\.c:17:7: warning: .*\[P003(, fixable)?\]' "a handler given to an unknown function: flagged"

# 2.6 stop_machine_run(fn, ...): fn runs with every other CPU held and
# interrupts off (kernel/stop_machine.c)
cat > stopm.c <<'C'
#include <linux/smp.h>
#include <linux/stop_machine.h>
void note(int cpu);

static int take_down(void *unused)
{
	note(smp_processor_id());
	return 0;
}

int do_take_down(unsigned int cpu)
{
	return stop_machine_run(take_down, NULL, cpu);
}
C
run scan -v --no-tree stopm.c; expect_rc 0 "stop_machine_run(): no finding"
expect_out '^stopm\.c:7:7: note: why: take_down\(\) is called with preemption off: run by stop_machine_run\(\) at line 13' \
	"stop_machine_run(): the reason"

# a macro of the file that stands for one kernel call (2.6.9 fs/buffer.c
# bh_lru_lock()): its uses take and drop what the call does
cat > lru.c <<'C'
#include <linux/percpu.h>
#include <linux/interrupt.h>

struct lru { int n; };
DEFINE_PER_CPU(struct lru, lrus);

#ifdef CONFIG_SMP
#define lru_lock()	local_irq_disable()
#define lru_unlock()	local_irq_enable()
#else
#define lru_lock()	preempt_disable()
#define lru_unlock()	preempt_enable()
#endif

void lru_add(void)
{
	lru_lock();
	__get_cpu_var(lrus).n++;
	lru_unlock();
}

void lru_peek(int *n)
{
	lru_unlock();
	*n = __get_cpu_var(lrus).n;
	lru_lock();
}
C
run scan --no-tree lru.c; expect_rc 1 "macro lock: the use after its release is flagged"
expect_no_out '^lru\.c:18:' "macro lock: the use between lru_lock() and lru_unlock() is protected"
expect_out '^lru\.c:25:7: warning: .*\[P002(, fixable)?\]' "macro lock: the use after lru_unlock() is not"
expect_no_out '\[P007' "macro lock: the pair is balanced"

# the prefilter: each trigger alone gets its file parsed and its finding
parsed_findings() { # FILE: "PARSED FINDINGS" from the JSON stats
	"$BIN" scan -f json "$1" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(s["parsed"], s["findings"])'
}
one_trigger() { # NAME EXPECT_FINDINGS BODY
	printf '%s\n' "$3" >"$1.c"
	local got
	got=$(parsed_findings "$1.c")
	if [ "$got" = "1 $2" ]; then ok; else rc=-; out=$got; err=; bad "one trigger ($1): want parsed 1, findings $2"; fi
}
one_trigger get_cpu_var 1 $'#include <linux/percpu.h>\nDECLARE_PER_CPU(int, hits);\n\nvoid count(void)\n{\n\t__get_cpu_var(hits)++;\n}'
one_trigger per_cpu 0 $'#include <linux/percpu.h>\nDECLARE_PER_CPU(int, hits);\n\nvoid count(int cpu, int n)\n{\n\tper_cpu(hits, cpu) += n;\n}'
one_trigger need_resched 1 $'#include <linux/sched.h>\nvoid poll(void)\n{\n\tfor (;;) {\n\t\tif (current->need_resched)\n\t\t\tschedule();\n\t}\n}'
one_trigger sched_yield 1 $'#include <linux/sched.h>\nvoid give(void)\n{\n\tcurrent->policy |= SCHED_YIELD;\n\tschedule();\n}'
one_trigger preempt 1 $'#include <linux/preempt.h>\nvoid g(void);\nvoid f(void)\n{\n\tpreempt_disable();\n\tg();\n\tpreempt_enable_no_resched();\n}'
one_trigger nr_cpus 0 $'#include <linux/threads.h>\nstatic int nr[NR_CPUS];\nint cpu_of(void);\nvoid f(void)\n{\n\tnr[cpu_of()]++;\n}'
one_trigger smp_processor_id 1 $'void g(int cpu);\nvoid f(void)\n{\n\tint cpu = smp_processor_id();\n\tg(cpu);\n}'
# and a file with none is not parsed at all
clean_c clean.c
got=$(parsed_findings clean.c)
if [ "$got" = "0 0" ]; then ok; else rc=-; out=$got; err=; bad "no trigger: not parsed"; fi
finish
