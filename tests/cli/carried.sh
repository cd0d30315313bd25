#!/usr/bin/env bash
# What a caller holds, carried to the code it calls (issue 32, a 2.6.9 tree
# the tool should leave alone): a lock wrapper of the file that drops its
# lock and interrupts when it took the wrong object and goes back to take
# them again (2.6 sched.c's task_rq_lock() retry); a function entered with
# its caller's lock, which it drops and takes again on one path only, calls
# a helper of another file on the path that never dropped it (2.6.9
# do_anonymous_page() and update_mmu_cache()); a callback handed to a
# wrapper of the file that runs it here with preemption off and on the
# other CPUs through smp_call_function() (mm/slab.c, 2.4 and 2.6.9); a
# helper other files could call, called only from bring-up entries whose
# own callers the analysis cannot see (start_secondary() reached through
# its address: 2.6.9 i386 map_cpu_to_logical_apicid()); an interrupt
# controller's enable (the IRQ code holds desc->lock, interrupts off) and a
# 2.6 SCSI host's queuecommand (the midlayer holds host_lock); an
# architecture's _raw_spin_lock(), which spin_lock() runs after
# preempt_disable(); a lock wrapper that takes a second lock in order,
# dropping the caller's and taking it back (2.6.9 double_lock_balance());
# a 2.6 TIMER_INITIALIZER(fn, ...) and ia64's smp_call_function_single(cpu,
# fn, ...), which runs fn on another CPU by IPI; and the tree index, which
# parses only part of a file, reads that part's lock wrappers too.
. "$(dirname "$0")/lib.sh"

cat > retry.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
struct queue { spinlock_t lock; int owner; };
extern struct queue *queue_of(int id);
void note(int cpu);

static struct queue *queue_lock(int id, unsigned long *flags)
{
	struct queue *q;
again:
	local_irq_save(*flags);
	q = queue_of(id);
	spin_lock(&q->lock);
	if (q != queue_of(id)) {	/* moved meanwhile: let go, look again */
		spin_unlock_irqrestore(&q->lock, *flags);
		goto again;
	}
	return q;
}

void queue_poke(int id)
{
	unsigned long flags;
	struct queue *q = queue_lock(id, &flags);
	int cpu = smp_processor_id();
	q->owner = cpu;
	note(cpu);
	spin_unlock_irqrestore(&q->lock, flags);
}

static void *grab_twice(void)
{
	get_cpu();
	get_cpu();
	put_cpu();
	return 0;
}
C
run scan -v --no-tree retry.c; expect_rc 1 "the nested get_cpu() is a finding"
expect_out '^retry\.c:25:12: note: why: queue_lock\(\) was called at line 24, so irq, q->lock \(which this lock wrapper of the file takes\) are held' \
	"a retrying lock wrapper: the reason names the wrapper"
expect_no_out '^retry\.c:25:.*warning' "a retrying lock wrapper: no P003"
expect_no_out 'fixable' "a retrying lock wrapper: nothing to fix"
expect_out '^retry\.c:33:2: warning: get_cpu\(\) not balanced on every path \[P007\]' \
	"a nested get_cpu() released once is no retry: still a leak, no wrapper"

mkdir -p tr/include/linux tr/mm tr/arch/demo/mm
printf 'VERSION = 2\nPATCHLEVEL = 6\n' > tr/Makefile
cat > tr/mm/fault.c <<'C'
#include <linux/mm.h>
#include <linux/spinlock.h>
extern void tlb_refill(struct mm_struct *mm, unsigned long addr);
extern void *page_get(void);

/* Called with mm->table_lock held; drops it to allocate */
int fault_in(struct mm_struct *mm, unsigned long addr, int write)
{
	void *page = 0;

	if (write) {
		spin_unlock(&mm->table_lock);
		page = page_get();
		spin_lock(&mm->table_lock);
	}
	tlb_refill(mm, addr);
	spin_unlock(&mm->table_lock);
	return page != 0;
}

int fault(struct mm_struct *mm, unsigned long addr, int write)
{
	spin_lock(&mm->table_lock);
	return fault_in(mm, addr, write);
}
C
cat > tr/arch/demo/mm/tlb.c <<'C'
#include <linux/smp.h>
#include <linux/mm.h>
void tlb_write(int cpu, unsigned long addr, unsigned long ctx);

void tlb_refill(struct mm_struct *mm, unsigned long addr)
{
	tlb_write(smp_processor_id(), addr, mm->context);
}
C
run scan -v tr; expect_rc 0 "a callee of a function entered with its caller's lock: nothing to fix"
# its comment names the lock too: held from the entry, taken again at line 14 on the other path
expect_out "^tr/arch/demo/mm/tlb\.c:7:12: note: why: .*from fault_in\(\) at tr/mm/fault\.c:16 \(spin_lock\(mm->table_lock\) at line 14 is held on every path to here \(or its callers', held on entry: its comment \(line 6\) states the contract \"Called with mm->table_lock held\"\)" \
	"the entry lock is carried to the callee, and said"
run explain tr/arch/demo/mm/tlb.c:7
expect_out "or its callers', held on entry: its comment" "explain gives the chain"
# without the comment, the release before the take says the callers hold it
sed -i 's|^/\* Called with mm->table_lock held; drops it to allocate \*/$|/* drops the table lock to allocate */|' tr/mm/fault.c
run scan -v tr; expect_rc 0 "a callee of a function entered with its caller's lock, no comment: nothing to fix"
expect_out "^tr/arch/demo/mm/tlb\.c:7:12: note: why: .*fault_in\(\) is entered with mm->table_lock held: it releases it at line 12 before it takes it, so its callers hold it" \
	"the entry lock read from the release is carried to the callee, and said"
run scan -v tr/arch/demo/mm/tlb.c; expect_rc 0 "the same answer for the file alone (the tree is indexed)"
cat > each.c <<'C'
#include <linux/smp.h>
#include <linux/interrupt.h>
struct ring { int slot[NR_CPUS]; };
void note(int cpu);

static void run_everywhere(void (*fn)(void *), void *arg)
{
	preempt_disable();
	local_irq_disable();
	fn(arg);
	local_irq_enable();
	smp_call_function(fn, arg, 1, 1);
	preempt_enable();
}

static void run_here_bare(void (*fn)(void *), void *arg)
{
	fn(arg);
}

static void swap_slot(void *info)
{
	struct ring *r = info;
	note(r->slot[smp_processor_id()]);
}

static void count_slot(void *info)
{
	struct ring *r = info;
	note(r->slot[smp_processor_id()]);
}

void ring_update(struct ring *r)
{
	run_everywhere(swap_slot, r);
	run_here_bare(count_slot, r);
}
C
run scan -v --no-tree each.c; expect_rc 1 "a bare wrapper: its callback is a finding"
expect_out '^each\.c:24:15: note: why: swap_slot\(\) is called with preemption off: passed to run_everywhere\(\) at line 35, which calls it with preemption off at line 10 and hands it to smp_call_function\(\) at line 12' \
	"a callback of a wrapper that runs it with preemption off and by IPI: protected, and why"
expect_no_out '^each\.c:24:.*warning' "the wrapped callback: no P003"
expect_out '^each\.c:30:15: warning: .*\[P003, fixable\]' "a wrapper that calls it with preemption on: P003"
mkdir -p tb/include/linux tb/arch/demo/kernel
printf 'VERSION = 2\nPATCHLEVEL = 6\n' > tb/Makefile
cat > tb/arch/demo/kernel/boot.c <<'C'
#include <linux/smp.h>
#include <linux/sched.h>
extern void note(int cpu);

void tag_this_cpu(void)
{
	note(smp_processor_id());
}

void __init smp_callin(void)
{
	tag_this_cpu();
}

int __init start_secondary(void *unused)
{
	smp_callin();
	return 0;
}

static void __init do_boot_cpu(struct task_struct *idle)
{
	idle->thread.eip = (unsigned long) start_secondary;
}

static void __init smp_boot_cpus(struct task_struct *idle)
{
	do_boot_cpu(idle);
	tag_this_cpu();
}

void __init smp_prepare_cpus(struct task_struct *idle)
{
	smp_boot_cpus(idle);
}
C
run scan -v tb; expect_rc 0 "a helper called only from bring-up entries: nothing to fix"
expect_out '^tb/arch/demo/kernel/boot\.c:7:7: note: why: every call in the tree runs on a task bound to its CPU' \
	"a helper called only from bring-up entries: bound, and why"
cat > chip.c <<'C'
#include <linux/smp.h>
#include <linux/irq.h>
#include <scsi/scsi_host.h>
static unsigned long chip_mask[NR_CPUS];
extern void chip_write(int cpu, unsigned long mask);

static void chip_enable(unsigned int irq)
{
	int cpu = smp_processor_id();
	chip_mask[cpu] |= 1UL << irq;
	chip_write(cpu, chip_mask[cpu]);
}

static unsigned int chip_startup(unsigned int irq)
{
	chip_write(smp_processor_id(), 0);
	return 0;
}

static struct hw_interrupt_type chip_type = {
	"demo-chip",
	NULL,
	NULL,
	chip_enable,
};

static struct hw_interrupt_type chip2_type = {
	.typename = "demo-chip2",
	.startup = chip_startup,
};

static int host_queue(struct scsi_cmnd *cmd, void (*done)(struct scsi_cmnd *))
{
	chip_write(smp_processor_id(), 1);
	return 0;
}

static struct scsi_host_template host_template = {
	.queuecommand = host_queue,
};
C
run scan -v --no-tree chip.c; expect_no_out '(P00[1-3]|warning).*fixable' "an interrupt controller's enable and startup, a queuecommand: nothing to fix"
expect_out "^chip\.c:9:12: note: why: chip_enable\(\) is called with preemption off: interrupt controller's enable \(fourth member of a struct hw_interrupt_type initialiser, line 24\)" \
	"a positional enable: why"
expect_out "^chip\.c:16:13: note: why: chip_startup\(\) is called with preemption off: interrupt controller's startup \(\.startup of a struct hw_interrupt_type" \
	"a designated startup: why"
expect_out "^chip\.c:34:13: note: why: host_queue\(\) is called with preemption off: SCSI queuecommand \(\.queuecommand of a struct scsi_host_template" \
	"a 2.6 queuecommand: why"
cat > rawlock.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
extern int try_word(volatile unsigned int *w);

void _raw_spin_lock(spinlock_t *lock)
{
	int cpu = smp_processor_id();
	while (try_word(&lock->lock))
		;
	lock->owner_cpu = cpu;
}
C
run scan -v --no-tree rawlock.c; expect_rc 0 "_raw_spin_lock(): nothing to fix"
expect_out "^rawlock\.c:7:12: note: why: _raw_spin_lock\(\) is called with preemption off: a debug build's lock implementation" \
	"_raw_spin_lock(): why"
cat > inorder.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
struct queue { spinlock_t lock; int n; };
extern void note(int cpu);
extern struct queue *queue_of(int i);

static void lock_second(struct queue *mine, struct queue *other)
{
	if (!spin_trylock(&other->lock)) {
		if (other < mine) {
			spin_unlock(&mine->lock);
			spin_lock(&other->lock);
			spin_lock(&mine->lock);
		} else
			spin_lock(&other->lock);
	}
}

/* Called with busiest locked. */
static void push_away(struct queue *busiest, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		struct queue *q = queue_of(i);
		lock_second(busiest, q);
		note(smp_processor_id());
		spin_unlock(&q->lock);
	}
}

void balance(struct queue *busiest)
{
	spin_lock(&busiest->lock);
	push_away(busiest, 3);
	spin_unlock(&busiest->lock);
}
C
run scan -v --no-tree inorder.c; expect_rc 0 "a wrapper that takes a second lock in order: nothing to fix"
expect_out "^inorder\.c:26:8: note: why: lock_second\(\) was called at line 25, so other->lock \(which this lock wrapper of the file takes\) is held" \
	"a wrapper that drops the caller's lock and takes it back: why"
# the caller's lock and interrupts dropped and taken back (2.4 IDE
# ide_do_request()): no key of its own, so the caller's sleep after its
# irqrestore is no P006
cat > giveback.c <<'C'
#include <linux/spinlock.h>
#include <linux/completion.h>
static spinlock_t queue_lock = SPIN_LOCK_UNLOCKED;
extern int more(void);
extern void start_io(void);

static void run_queue(void)
{
	local_irq_disable();
	while (more()) {
		spin_unlock(&queue_lock);
		local_irq_enable();
		start_io();
		spin_lock_irq(&queue_lock);
	}
}

int submit_wait(struct completion *done)
{
	unsigned long flags;
	spin_lock_irqsave(&queue_lock, flags);
	run_queue();
	spin_unlock_irqrestore(&queue_lock, flags);
	wait_for_completion(done);
	return 0;
}
C
run scan --no-tree giveback.c
expect_no_out 'P006' "the caller's lock and interrupts taken back: no wrapper of irq, no P006 after the irqrestore"
cat > regs.c <<'C'
#include <linux/smp.h>
#include <linux/timer.h>
extern void note(int cpu);

static void poll_tick(unsigned long data)
{
	note(smp_processor_id());
}

static struct timer_list poll_timer = TIMER_INITIALIZER(poll_tick, 0, 0);

static void stop_remote(void *info)
{
	note(smp_processor_id());
}

int stop_on(int cpu)
{
	return smp_call_function_single(cpu, stop_remote, NULL, 0, 1);
}
C
run scan -v --no-tree regs.c; expect_rc 0 "TIMER_INITIALIZER, smp_call_function_single(): nothing to fix"
expect_out "^regs\.c:7:7: note: why: poll_tick\(\) runs in softirq context: timer function \(TIMER_INITIALIZER at line 10\)" \
	"TIMER_INITIALIZER: why"
expect_out "^regs\.c:14:7: note: why: stop_remote\(\) runs in hard-IRQ context: run on another CPU by smp_call_function_single\(\) at line 19" \
	"smp_call_function_single(): why"
mkdir -p ts/include/linux ts/kernel ts/arch/demo/kernel
printf 'VERSION = 2\nPATCHLEVEL = 6\n' > ts/Makefile
cat > ts/kernel/queue.c <<'C'
#include <linux/spinlock.h>
struct queue { spinlock_t lock; int n; };
extern struct queue *queue_of(int id);
extern void poke_cpu(void);

static struct queue *queue_lock(int id)
{
	struct queue *q = queue_of(id);
	spin_lock(&q->lock);
	return q;
}

static void queue_unlock(struct queue *q)
{
	spin_unlock(&q->lock);
}

void queue_kick(int id)
{
	struct queue *q = queue_lock(id);
	poke_cpu();
	queue_unlock(q);
}
C
for i in 0 1 2 3 4 5 6 7; do	# enough else that the index parses only part of the file
	printf '\nint filler_%s(int a, int b)\n{\n\tint s = 0;\n\twhile (a < b) {\n\t\ts += a * %s + b;\n\t\ta++;\n\t}\n\treturn s;\n}\n' "$i" "$i" >> ts/kernel/queue.c
done
cat > ts/arch/demo/kernel/poke.c <<'C'
#include <linux/smp.h>
extern void note(int cpu);

void poke_cpu(void)
{
	note(smp_processor_id());
}
C
run scan -v ts/arch/demo/kernel/poke.c; expect_rc 0 "a caller in another file under its file's lock wrappers: nothing to fix"
expect_out "^ts/arch/demo/kernel/poke\.c:6:7: note: why: poke_cpu\(\) is called with preemption off: every call in the tree is made with preemption off: from queue_kick\(\) at ts/kernel/queue\.c:21 \(queue_lock\(\) was called at line 20" \
	"the index reads the caller's lock wrapper, and says so"
finish
