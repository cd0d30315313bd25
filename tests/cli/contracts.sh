#!/usr/bin/env bash
# Contracts a function's own comment states (src/analysis/contract.c): a
# function documented as called with interrupts off, from an interrupt, or
# with a spinlock of its file held runs with preemption off, whatever its
# callers look like; a sentence that hedges (may, if, can), describes
# something else (a handler), or names a lock the file never spins on
# states nothing.
. "$(dirname "$0")/lib.sh"

cat > contract.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <asm/semaphore.h>

struct dev { spinlock_t lock; struct semaphore cfg_lock; int last[32]; };
void note(int cpu);

/*
 * Must be called with interrupts disabled.
 */
void irq_off_fn(struct dev *d)
{
	note(smp_processor_id());
}

/* Called with d->lock held. */
void lock_held_fn(struct dev *d)
{
	note(smp_processor_id());
}

void lock_taker(struct dev *d)
{
	spin_lock(&d->lock);
	lock_held_fn(d);
	spin_unlock(&d->lock);
	down(&d->cfg_lock);
	sem_held_fn(d);
	up(&d->cfg_lock);
}

/* Called with d->cfg_lock held. */
void sem_held_fn(struct dev *d)
{
	note(smp_processor_id());
}

/* This may be called from interrupt context. */
void hedged_fn(struct dev *d)
{
	note(smp_processor_id());
}

/* Its handler is called with interrupts disabled. */
void handler_setup_fn(struct dev *d)
{
	note(smp_processor_id());
}

void body_comment_fn(struct dev *d)
{
	/* This is safe as we are holding d->lock */
	note(smp_processor_id());
}

/*
 * vx_tick - called from the timer interrupt handler
 */
void tick_fn(struct dev *d)
{
	note(smp_processor_id());
}
C
run scan -v --no-tree contract.c; expect_rc 1 "contracts: the plain functions are still flagged"
expect_out '^contract\.c:13:7: note: why: irq_off_fn\(\) is called with preemption off: its comment \(line 8\) states the contract "Must be called with interrupts disabled"' \
	"an irq-off contract protects the function, and the reason quotes it"
expect_out '^contract\.c:19:7: note: why: lock_held_fn\(\) is called with preemption off: its comment \(line 16\) states the contract "Called with d->lock held"' \
	"a spinlock the file takes protects the function"
expect_out '^contract\.c:35:7: warning: .*\[P003(, fixable)?\]' "a lock the file only takes with down() is no contract"
expect_out '^contract\.c:41:7: warning: .*\[P003(, fixable)?\]' "a hedged sentence (may) is no contract"
expect_out '^contract\.c:47:7: warning: .*\[P003(, fixable)?\]' "a sentence about a handler is no contract"
expect_out '^contract\.c:53:7: note: why: body_comment_fn\(\) is called with preemption off: its comment \(line 52\)' \
	"the comment that opens the body counts too"
expect_out '^contract\.c:61:7: note: why: tick_fn\(\) runs in hard-IRQ context: its comment \(line 56\) states the contract "vx_tick - called from the timer interrupt handler"' \
	"called from an interrupt handler: hard-IRQ context"
expect_no_out '^contract\.c:(13|19|53|61):7: warning' "no P003 where a contract holds"

# P005: a function entered with preemption off gives the count back to its
# caller, which reschedules; the same code without the contract is flagged
cat > noresched.c <<'C'
#include <linux/preempt.h>
void step(void);

/*
 * Interrupts are disabled on entry as trap3 is an interrupt gate.
 */
int trap_handler(void)
{
	preempt_disable();
	step();
	preempt_enable_no_resched();
	return 1;
}

int plain_handler(void)
{
	preempt_disable();
	step();
	preempt_enable_no_resched();
	return 1;
}
C
run scan --no-tree noresched.c; expect_rc 1 "P005: the plain function is flagged"
expect_out '^noresched\.c:19:2: warning: .*\[P005(, fixable)?\]' "P005 without a contract"
expect_no_out '^noresched\.c:11:' "no P005 in a function entered with interrupts off"
# a static function some caller of its file calls with preemption on: the
# reason names that caller and its line, not only "not every caller"
cat > callers.c <<'C'
#include <linux/smp.h>
#include <linux/spinlock.h>
static spinlock_t l = SPIN_LOCK_UNLOCKED;
void note(int cpu);

static void helper(void)
{
	note(smp_processor_id());
}

void locked(void)
{
	spin_lock(&l);
	helper();
	spin_unlock(&l);
}

void unlocked(void)
{
	helper();
}
C
run scan -v --no-tree callers.c; expect_rc 1 "callers: the helper is flagged"
expect_out '^callers\.c:8:7: note: why: no lock held, interrupts and preemption enabled on every path from entry; called from unlocked\(\) at line 20 with preemption on' \
	"the reason names the caller that calls with preemption on"
# the P006 prefilter reads the comments too: a file whose only atomic
# context is a contract gives the same findings with and without it
cat > sleeper.c <<'C'
#include <linux/slab.h>

/*
 * Must be called with interrupts disabled.
 */
void *grab(void)
{
	return kmalloc(64, GFP_KERNEL);
}
C
run scan --no-tree sleeper.c; expect_rc 1 "contract and sleep: a finding by default"
expect_out '^sleeper\.c:8:9: error: .*\[P006\]' "contract and sleep: P006 without --no-prefilter"
finish
