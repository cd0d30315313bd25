#!/usr/bin/env bash
# Lock macros of the tree's headers (2.4 include/asm-s390/irq.h's
# s390irq_spin_lock_irqsave(irq, flags), bluetooth's hci_dev_lock(d)):
# a function-like #define under include/ whose body is one locking call
# takes and drops what that call does, its lock named by the use's
# arguments; so a CPU read between them is protected, an early return
# between them unbalanced, and a sleep between them a P006, with or
# without the prefilter. A name two headers define differently (another
# lock call, a function, a no-op of another architecture: 2.4's
# release_dma_lock() is a macro in asm-sparc64/dma.h and an inline
# function in asm-i386/dma.h), or one the file defines itself, is not the
# header's lock; a no-op in the same header (the !CONFIG_SMP arm) is.
. "$(dirname "$0")/lib.sh"

mkdir -p t/include/linux t/include/asm-demo t/drivers/demo
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > t/Makefile
cat > t/include/asm-demo/chan.h <<'H'
#define chan_lock_irqsave(c, flags) \
	spin_lock_irqsave(&(chans[c]->lock), flags)
#define chan_unlock_irqrestore(c, flags) \
	spin_unlock_irqrestore(&(chans[c]->lock), flags)
#define dev_lock(d)	do { spin_lock(&(d)->lock); } while (0)
#define dev_unlock(d)	spin_unlock(&(d)->lock)
#define odd_lock(d)	spin_lock(&(d)->lock)
H
printf '#define odd_lock(d)\tspin_unlock(&(d)->lock)\n' > t/include/asm-demo/odd.h
cat > t/drivers/demo/chan.c <<'C'
#include <linux/smp.h>
#include <asm/chan.h>
void note(int cpu);
struct chan { spinlock_t lock; } *chans[8];
struct dev { spinlock_t lock; };

void chan_poll(int c)
{
	unsigned long flags;

	chan_lock_irqsave(c, flags);
	note(smp_processor_id());
	chan_unlock_irqrestore(c, flags);
}

void dev_poke(struct dev *d)
{
	dev_lock(d);
	note(smp_processor_id());
	dev_unlock(d);
}

void dev_leak(struct dev *d, int bad)
{
	dev_lock(d);
	if (bad)
		return;
	note(bad);
	dev_unlock(d);
}

void odd_poke(struct dev *d)
{
	odd_lock(d);
	note(smp_processor_id());
}
C
cat > t/drivers/demo/sleepy.c <<'C'
#include <asm/chan.h>
#include <linux/slab.h>
struct dev { int lock; };
void *buf;

void dev_fill(struct dev *d)
{
	dev_lock(d);
	buf = kmalloc(64, GFP_KERNEL);
	dev_unlock(d);
}
C
cat > t/drivers/demo/own.c <<'C'
#include <linux/smp.h>
#define dev_lock(d)	do { } while (0)
#define dev_unlock(d)	do { } while (0)
void note(int cpu);
struct dev { int lock; };

void own_poke(struct dev *d)
{
	dev_lock(d);
	note(smp_processor_id());
	dev_unlock(d);
}
C
run scan -v t; expect_rc 1 "header lock macros: findings"
expect_out '^t/drivers/demo/chan\.c:12:7: note: why: chan_lock_irqsave\(irq\) at line 11 is held on every path to here' \
	"a header's spin_lock_irqsave macro: interrupts off"
expect_out '^t/drivers/demo/chan\.c:19:7: note: why: dev_lock\(\(d\)->lock\) at line 18 is held on every path to here' \
	"a header's do { spin_lock() } while (0): the lock, named by the use's argument"
expect_out '^t/drivers/demo/chan\.c:25:2: warning: dev_lock\(\) not balanced on every path \[P007\]' "an early return under it: P007"
expect_out '^t/drivers/demo/chan\.c:35:7: warning: .*\[P003, fixable\]' "a name two headers define differently: no lock"
expect_out '^t/drivers/demo/own\.c:10:7: warning: .*\[P003, fixable\]' "the file's own definition wins"
expect_out '^t/drivers/demo/sleepy\.c:9:8: error: kmalloc\(GFP_KERNEL\) may sleep, but preemption is off here \[P006\]' \
	"a sleep under a header's lock macro"
run scan -f json --no-prefilter t
np=$(printf '%s\n' "$out" | grep -c '"rule": "P00[67]"')
run scan -f json t
dp=$(printf '%s\n' "$out" | grep -c '"rule": "P00[67]"')
if [ "$np" = "$dp" ] && [ "$dp" -ge 2 ]; then ok; else bad "P006/P007 with and without the prefilter: $dp vs $np"; fi
# definitions elsewhere that say something else
mkdir -p t/include/asm-other
printf '#define dma_release(f) spin_unlock_irqrestore(&dma_lock, f)\n#define sw_prepare() local_irq_disable()\n' > t/include/asm-demo/dma.h
printf 'static inline void dma_release(unsigned long f)\n{\n}\n#define sw_prepare() do { } while (0)\n' > t/include/asm-other/dma.h
printf '#ifdef CONFIG_SMP\n#define up_lock(x) spin_lock(x)\n#else\n#define up_lock(x) do { } while (0)\n#endif\n' > t/include/asm-demo/up.h
cat > t/drivers/demo/other.c <<'C'
#include <linux/smp.h>
void note(int cpu);
extern spinlock_t demo_lock;

void other_release(unsigned long f)
{
	cli();
	dma_release(f);
	note(smp_processor_id());
	sti();
}

void other_prepare(void)
{
	sw_prepare();
	note(smp_processor_id());
}

void other_up(void)
{
	up_lock(&demo_lock);
	note(smp_processor_id());
	spin_unlock(&demo_lock);
}
C
run scan -v t
expect_out '^t/drivers/demo/other\.c:9:7: note: protected: ' "a macro here, a function in another header: not a release"
expect_out '^t/drivers/demo/other\.c:16:7: warning: .*\[P003, fixable\]' "a lock here, a no-op in another header: no lock"
expect_out '^t/drivers/demo/other\.c:22:7: note: why: up_lock\(demo_lock\) at line 21 is held' "a no-op in the same header's other arm: still the lock"

# a debug arm `do { CHECK(l); read_lock_bh(&(l)->l); set_bit(...); } while (0)`
# beside a plain `read_lock_bh(l)` (2.6's netfilter lock helpers): one
# locking call among checks is the lock (and write_seqlock_irqsave()'s
# local_irq_save() beside a seqlock call); two locking calls, or a jump, are not
cat > t/include/asm-demo/lkdbg.h <<'H'
#ifdef CONFIG_DEMO_DEBUG
#define RD_LOCK(lk)						\
do {								\
	MUST_BE_FREE(lk);					\
	read_lock_bh(&(lk)->l);					\
	set_bit(smp_processor_id(), &(lk)->map);		\
} while (0)
#define RD_UNLOCK(lk)						\
do {								\
	clear_bit(smp_processor_id(), &(lk)->map);		\
	read_unlock_bh(&(lk)->l);				\
} while (0)
#define TWO_LOCK(lk) do { spin_lock(lk); local_irq_enable(); } while (0)
#define JMP_LOCK(lk) do { if (!lk) break; spin_lock(lk); } while (0)
#define SQ_LOCK_IRQSAVE(lk, f) do { local_irq_save(f); sq_lock(lk); } while (0)
#define SQ_UNLOCK_IRQRESTORE(lk, f) do { sq_unlock(lk); local_irq_restore(f); } while (0)
#else
#define RD_LOCK(lk) read_lock_bh(lk)
#define RD_UNLOCK(lk) read_unlock_bh(lk)
#define TWO_LOCK(lk) spin_lock(lk)
#define JMP_LOCK(lk) spin_lock(lk)
#endif
H
cat > t/drivers/demo/lkdbg.c <<'C'
#include <linux/smp.h>
#include <asm/lkdbg.h>
void note(int cpu);
extern rwlock_t tab_lock;
extern spinlock_t two_lock;

static void tab_find(void)
{
	note(smp_processor_id());
}

void tab_get(void)
{
	RD_LOCK(&tab_lock);
	tab_find();
	RD_UNLOCK(&tab_lock);
}

void two_get(void)
{
	TWO_LOCK(&two_lock);
	note(smp_processor_id());
}

void jmp_get(void)
{
	JMP_LOCK(&two_lock);
	note(smp_processor_id());
}

void sq_set(unsigned long f)
{
	SQ_LOCK_IRQSAVE(&two_lock, f);
	note(smp_processor_id());
	SQ_UNLOCK_IRQRESTORE(&two_lock, f);
}
C
run scan -v t
expect_out '^t/drivers/demo/lkdbg\.c:9:7: note: protected: ' "a debug arm with checks around one read_lock_bh(): the lock"
expect_out '^t/drivers/demo/lkdbg\.c:22:7: warning: .*\[P003' "an arm with two locking calls: no lock"
expect_out '^t/drivers/demo/lkdbg\.c:28:7: warning: .*\[P003' "an arm that may jump past the lock: no lock"
expect_out '^t/drivers/demo/lkdbg\.c:34:7: note: why: SQ_LOCK_IRQSAVE\(irq\) at line 33 is held' \
	"local_irq_save() beside a call of no known lock (seqlock's write_seqlock_irqsave): interrupts off"

# alone, without the tree's headers, the macros are unknown calls
run scan --no-tree t/drivers/demo/chan.c
expect_out '^t/drivers/demo/chan\.c:12:7: warning: .*\[P003' "--no-tree: the header is not read"
finish
