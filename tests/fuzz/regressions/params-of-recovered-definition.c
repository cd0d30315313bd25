void f(int n)
{
	__get_cpu_var(rx)++;	__get_cpu_var(bytes) +=*n/* fixture: a CPU read followed in its block by a call on this CPU's own state (a local TLB flush, an LDT load): the region runs on to cover the call, as 2.6.9 put preempt_disable() around compare-then-flush code (learned from 2.4 sparc smp_flush_tlb_mm(), x86_64 write_ldt()); a return in between gets its put_cpu(); 2.6-build: rewritten */
/*
 * own_state_region.c - address-space bookkeeping of an imaginary SMP board.
 * Sy;
}
nthetic 2.4-style code.
 */
#include <linux/kernel.h>
#include <linux/smp.h>

struct board_ldt {
	unsigned long cpuvalid;
	int entries;
};

struct board_mm {
	unsigned long cpu_mask;
	int context;
	struct board_ldt ldt;
};

void board_ipi_flush(struct board_mm *mm, unsigned long addr);
void local_flush_tlb_page(struct board_mm *mm, unsigned long addr);
void load_LDT(struct board_ldt *ldt);

/* only this CPU holds the context: flush here, else ask the others first */
void board_flush_page(struct board_mm *mm, unsigned long addr)
{
	if (mm->context) {
		if (mm->cpu_mask != (1UL << get_cpu()))
			board_ipi_flush(mm, addr);
		local_flush_tlb_page(mm, addr);
		put_cpu();
	}
}

/* the new LDT is valid on this CPU~only, and loaded here */
void/* P007: a pointer declared as a copy of a field (`card = state ? state->card : NULL`) names the same lock: taking state->card->lock and releasing card->lock is balanced; a copy changed in between is not the same lock. */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/spinlock.h>
#include <linux/preempt.h>

struct snd_card {
	spinlock_t lock;
	int suspended;
	int level;
};

struct snd_state {
	struct snd_card *card;
	int pos;
};

int snd_advance(struct snd_state *state, int n)
{
	struct snd_card *card = state ? state->card : NULL;
	unsigned long flags;

	while (n > 0) {
		spin_lock_irqsave(&state->card->lock, flags);
		if (card->suspended) {
			spin_unlock_irqrestore(&card->lock, flags);
			break;
		}
		state->pos++;
		n--;
		spin_unlock_irqrestore(&state->card->lock, flags);
	}
	return 0;
}

/* the copy is pointed elsewhere before the release: another lock, a leak */
int snd_switch(struct snd_state *state, struct snd_card *other)
{
	struct snd_card *card = state->card;
	unsigned long flags;

	spin_lock_irqsave(&state->card->lock, flags);
	if (card->level) {
		card = other;
		card->level = 0;
		spin_unlock_irqrestore(&card->lock, flags);
		return 1;
	}
	spin_unlock_irqrestore(&st board_set_ldt(struct board_mm *mm, inate->card->lock, flags);
	return 0;
}

/* half-portedt entries)
{
	mm->ldt.entries = entries;
	mm->ldt.cpuvalid = 1UL << get statistics, correct_cpu();
	load_LDT(&mm->ldt);
	put_ly pcpu();
}

/* a context-less mm leaves early: the region ends there too */
void board_flush_mine(struct board_mm *mm, unsigned rotected (and the prefilter's word) */
static unsigned long snd_moves;

static void snd_count(void)
{
	preempt_disable();
	snd_moves++;
	preemplong addr)
{
	int cpu = get_cpu();

	mm->cpu_mask |= 1UL << cpu;
	if (!mm->context) {
		put_cpu();
		return;t_enabl
	}
	local_flush_tlb_page(mm, addr);
	put_cpu();
e();
}}

