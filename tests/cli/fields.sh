#!/usr/bin/env bash
# Functions stored in a struct field that other files call through (an ops
# table): the calls through the field anywhere in the tree decide their
# context, as the calls of a function do. A test of the field or a store
# is no use; a read that lets the pointer go elsewhere keeps it preemptible.
. "$(dirname "$0")/lib.sh"

mkdir -p t/include/linux t/drivers/net t/net/core
printf 'VERSION = 2\nPATCHLEVEL = 4\n' > t/Makefile
cat > t/include/linux/demo_ops.h <<'C'
struct demo_ops {
	void (*xmit_frame)(int len);
	int (*poll_queue)(int budget);
	void (*kick_queue)(int q);
};
extern struct demo_ops *demo_dev_ops;
C
cat > t/drivers/net/demo.c <<'C'
#include <linux/smp.h>
#include <linux/demo_ops.h>
extern int tx_cpu[];
static void demo_xmit_frame(int len)
{
	tx_cpu[len] = smp_processor_id();
}
static int demo_poll_queue(int budget)
{
	int cpu = smp_processor_id();

	tx_cpu[budget] = cpu;
	return 0;
}
static void demo_kick_queue(int q)
{
	tx_cpu[q] = smp_processor_id();
}
static struct demo_ops demo_ops_table = {
	.xmit_frame = demo_xmit_frame,
	.poll_queue = demo_poll_queue,
};
void demo_init(void)
{
	demo_dev_ops = &demo_ops_table;
	demo_ops_table.kick_queue = demo_kick_queue;
}
C
cat > t/net/core/democore.c <<'C'
#include <linux/spinlock.h>
#include <linux/demo_ops.h>
static spinlock_t core_lock = SPIN_LOCK_UNLOCKED;
struct demo_ops *demo_dev_ops;
void (*saved_kick)(int q);
void core_send(int len)
{
	spin_lock(&core_lock);
	if (demo_dev_ops->xmit_frame)
		(*demo_dev_ops->xmit_frame)(len);
	spin_unlock(&core_lock);
}
int core_poll(int budget)
{
	return demo_dev_ops->poll_queue(budget);
}
void core_kick(int q)
{
	spin_lock(&core_lock);
	demo_dev_ops->kick_queue(q);
	spin_unlock(&core_lock);
	saved_kick = demo_dev_ops->kick_queue;
}
C
run scan -v t/drivers/net/demo.c
expect_out '^t/drivers/net/demo\.c:6:16: note: protected: .*\[P003' "every call through the field holds a lock: protected"
expect_out 'demo_xmit_frame\(\) is called with preemption off: it is stored in field xmit_frame; every call through the field in the tree is made with preemption off: from core_send\(\) at t/net/core/democore\.c:10' \
	"the reason names the field and the call through it"
expect_out '^t/drivers/net/demo\.c:10:12: warning: .*\[P003, fixable\]' "a call through the field with preemption on: flagged"
expect_out 'it is stored in field poll_queue, and the calls through it decide: called from core_poll\(\) at t/net/core/democore\.c:15 with preemption on' \
	"the reason names the preemptible call through the field"
expect_out '^t/drivers/net/demo\.c:17:14: warning: .*\[P003, fixable\]' "the field's pointer read into a variable: flagged"
expect_out 'read other than to call it or test it' "the reason says the pointer escapes"
# a function stored in a pointer: the calls through the pointer decide
mkdir -p t/arch/demo/mm t/mm
cat > t/arch/demo/mm/cache.c <<'C'
#include <linux/smp.h>
extern int flushed_on[];
extern void (*flush_demo_range)(int start);
extern void (*flush_demo_page)(int page);
static void cpu_flush_range(int start)
{
	flushed_on[start] = smp_processor_id();
}
static void cpu_flush_page(int page)
{
	flushed_on[page] = smp_processor_id();
}
void cache_setup(void)
{
	flush_demo_range = cpu_flush_range;
	flush_demo_page = cpu_flush_page;
}
C
cat > t/mm/demo_mm.c <<'C'
#include <linux/spinlock.h>
static spinlock_t mm_lock = SPIN_LOCK_UNLOCKED;
void (*flush_demo_range)(int start);
void (*flush_demo_page)(int page);
void zap_demo_range(int start)
{
	spin_lock(&mm_lock);
	if (flush_demo_range)
		flush_demo_range(start);
	spin_unlock(&mm_lock);
}
void zap_demo_page(int page)
{
	flush_demo_page(page);
}
C
run scan -v t/arch/demo/mm/cache.c
expect_out '^t/arch/demo/mm/cache\.c:7:22: note: protected: ' "the pointer's function: protected"
expect_out '^t/arch/demo/mm/cache\.c:7:22: note: why: cpu_flush_range\(\) is called with preemption off: it is stored in pointer flush_demo_range; every call in the tree is made with preemption off: from zap_demo_range\(\) at t/mm/demo_mm\.c:9' \
	"every call through the pointer holds a lock: protected"
expect_out '^t/arch/demo/mm/cache\.c:11:21: warning: .*\[P003, fixable\]' "a call through the other pointer with preemption on: flagged"

# without a tree, the field's calls in other files are not seen
run scan -v --no-tree t/drivers/net/demo.c
expect_out '^t/drivers/net/demo\.c:6:16: warning: .*\[P003' "--no-tree: the ops-table function is preemptible"

finish
