/*
 * The kernel calls the analysis knows, as tables: locking and interrupt
 * APIs, sleeping calls and allocators, and the registrations that decide
 * the context a function runs in; and what a kernel tree says of itself
 * (architectures without CONFIG_PREEMPT, a spinning big kernel lock).
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/flow.h"
#include "parse/source.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static bool name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(name, want, len) == 0;
}

/* ---- locks, interrupts, bottom halves, preemption ------------------------ */

static const struct api apis[] = {
#define API(name, op, keys) {name, op, keys, NULL, 0, NULL, NULL},
#include "analysis/apis.def"
#undef API
};

/* 2.6.9 include/linux/smp_lock.h: spin_lock(&kernel_flag) at the outermost depth */
static const struct api bkl_apis[] = {
	{"lock_kernel", API_ACQUIRE, KEY_LOCK, "kernel_flag", 0, NULL, NULL},
	{"unlock_kernel", API_RELEASE, KEY_LOCK, "kernel_flag", 0, NULL, NULL},
};

const struct api *api_lookup(const char *name, size_t len)
{
	for (size_t i = 0; api_bkl_spins() && i < ARRAY_SIZE(bkl_apis); i++)
		if (name_is(name, len, bkl_apis[i].name))
			return &bkl_apis[i];
	for (size_t i = 0; i < ARRAY_SIZE(apis); i++)
		if (name_is(name, len, apis[i].name))
			return &apis[i];
	return NULL;
}

static const char *key_class_name(unsigned key)
{
	switch (key) {
	case KEY_IRQ: return "irq";
	case KEY_BH: return "bh";
	case KEY_PREEMPT: return "preempt";
	default: return NULL;
	}
}

char *lock_key(TSNode call, unsigned key, const char *src)
{
	if (key != KEY_LOCK)
		return xstrdup(key_class_name(key));
	return lock_key_arg(call, 0, NULL, src);
}

char *lock_key_text(const char *raw)
{
	char *k = xstrdup(raw);
	if (k[0] == '&')
		memmove(k, k + 1, strlen(k));
	/* `&(priv->lock)` is the lock `&priv->lock` names */
	size_t n = strlen(k);
	bool outer = n > 2 && k[0] == '(' && k[n - 1] == ')';
	for (size_t i = 1, depth = 1; outer && i + 1 < n; i++) {
		depth += k[i] == '(' ? 1 : k[i] == ')' ? (size_t)-1 : 0;
		outer = depth > 0;
	}
	if (outer) {
		memmove(k, k + 1, n - 2);
		k[n - 2] = '\0';
	}
	return k;
}

char *lock_key_arg(TSNode call, unsigned arg, const char *field, const char *src)
{
	TSNode args = ts_field(call, "arguments");
	if (ts_node_named_child_count(args) <= arg)
		return xstrdup("?");
	TSNode a = ts_node_named_child(args, arg);
	struct buf b = BUF_INIT;
	for (uint32_t i = ts_node_start_byte(a); i < ts_node_end_byte(a); i++)
		if (src[i] != ' ' && src[i] != '\t' && src[i] != '\n')
			buf_putc(&b, src[i]);
	char *raw = buf_detach(&b);
	bool addr = raw[0] == '&';
	char *k = lock_key_text(raw);
	free(raw);
	if (!field)
		return k;
	/* p->lock of a parameter p: the argument &s gives s.lock */
	char *full = xasprintf("%s%s%s", k, addr && field[0] == '-' ? "." : "",
			       addr && field[0] == '-' ? field + 2 : field);
	free(k);
	return full;
}

/* ---- sleeping calls -------------------------------------------------------- */

/* Calls that may sleep whatever their arguments. */
static const char *const sleepers[] = {
	"schedule", "schedule_timeout", "interruptible_sleep_on",
	"interruptible_sleep_on_timeout", "sleep_on", "sleep_on_timeout",
	"wait_event", "wait_event_interruptible", "wait_event_timeout",
	"wait_event_interruptible_timeout", "wait_for_completion",
	"wait_for_completion_interruptible", "down", "down_interruptible",
	"down_read", "down_write", "msleep", "ssleep", "msleep_interruptible",
	/* not free_irq(): 2.4 and 2.6.9 wait for a running handler by spinning */
	"cond_resched", "yield", "lock_kernel", "request_irq",
	"filp_open", "vmalloc", "vfree", "copy_to_user", "copy_from_user",
	"__copy_to_user", "__copy_from_user", "get_user", "put_user",
	"clear_user", "strncpy_from_user", "kernel_thread", "flush_scheduled_tasks",
	"flush_scheduled_work", "synchronize_irq", "synchronize_net",
	/* 2.4: sets the mask, then schedule()s until the task runs on an allowed CPU */
	"set_cpus_allowed",
	/* allocate the new task with GFP_KERNEL */
	"do_fork",
	"wait_on_buffer", "__wait_on_buffer", "lock_page", "wait_on_page", "___wait_on_page",
	"lock_super", "down_timeout", "sys_sched_yield",
};

/* Names the user added (--may-sleep, config); set before any analysis runs. */
static struct strvec user_sleepers = STRVEC_INIT;

void kernel_api_add_sleeper(const char *name)
{
	strvec_push(&user_sleepers, name);
}

void kernel_api_reset_sleepers(void)
{
	strvec_release(&user_sleepers);
}

/* Allocators: the index of their GFP argument. */
static const struct {
	const char *name;
	unsigned gfp_arg;
} allocators[] = {
	{"kmalloc", 1}, {"kzalloc", 1}, {"kcalloc", 2}, {"kmem_cache_alloc", 1},
	{"__get_free_pages", 0}, {"__get_free_page", 0}, {"get_free_page", 0},
	{"get_zeroed_page", 0}, {"alloc_pages", 0}, {"alloc_page", 0},
	{"alloc_skb", 1}, {"__alloc_pages", 0}, {"pci_alloc_consistent", 99},
	{"skb_copy", 1}, {"skb_clone", 1}, {"pskb_copy", 1},
};

int api_gfp_arg(TSNode call, const char *src)
{
	const char *name;
	size_t len = ts_call_name(call, src, &name);
	for (size_t i = 0; len && i < ARRAY_SIZE(allocators); i++)
		if (name_is(name, len, allocators[i].name))
			return allocators[i].gfp_arg < ts_node_named_child_count(ts_field(call, "arguments"))
			       ? (int)allocators[i].gfp_arg : -1;
	return -1;
}

/* An allocator sleeps unless its GFP argument says it must not. */
static enum sleep_kind allocator_may_sleep(TSNode call, size_t i, const char *src, struct buf *why)
{
	TSNode args = ts_field(call, "arguments");
	if (allocators[i].gfp_arg >= ts_node_named_child_count(args))
		return SLEEP_NO;
	TSNode a = ts_node_named_child(args, allocators[i].gfp_arg);
	uint32_t s = ts_node_start_byte(a), e = ts_node_end_byte(a);
	char *text = xstrndup(src + s, e - s);
	enum sleep_kind k = SLEEP_MAYBE;
	if (strstr(text, "GFP_ATOMIC"))
		k = SLEEP_NO;
	else if (strstr(text, "GFP_KERNEL") || strstr(text, "GFP_USER") ||
		 strstr(text, "GFP_NOFS") || strstr(text, "GFP_NOIO") ||
		 strstr(text, "GFP_HIGHUSER") || strstr(text, "GFP_BUFFER") ||
		 strstr(text, "__GFP_WAIT"))
		k = SLEEP_YES;
	else if (strcmp(text, "GFP_DMA") == 0)
		k = SLEEP_NO;
	if (why && k != SLEEP_NO)
		buf_printf(why, "%s(%s)", allocators[i].name, text);
	free(text);
	return k;
}

/*
 * Listed sleepers an architecture builds not to sleep: s390's request_irq()
 * and free_irq() (2.4 arch/s390/kernel/irq.c) only hand the subchannel to
 * s390_request_irq_special() / s390_free_irq(), which run under the
 * subchannel's lock with interrupts off and allocate nothing.
 */
static bool arch_does_not_sleep(const char *name, size_t len, const char *path)
{
	return path && (strstr(path, "arch/s390") || strstr(path, "drivers/s390") || strstr(path, "include/asm-s390")) &&
	       (name_is(name, len, "request_irq") || name_is(name, len, "free_irq"));
}

enum sleep_kind api_may_sleep(TSNode call, const char *src, const char *path, struct buf *why)
{
	const char *name;
	size_t len = ts_call_name(call, src, &name);
	if (!len || arch_does_not_sleep(name, len, path))
		return SLEEP_NO;
	for (size_t i = 0; i < ARRAY_SIZE(sleepers); i++)
		if (name_is(name, len, sleepers[i]) && !(api_bkl_spins() && name_is(name, len, "lock_kernel"))) {
			if (why)
				buf_printf(why, "%s()", sleepers[i]);
			return SLEEP_YES;
		}
	for (size_t i = 0; i < user_sleepers.len; i++)
		if (name_is(name, len, user_sleepers.items[i])) {
			if (why)
				buf_printf(why, "%s() (declared sleeping by the user)", user_sleepers.items[i]);
			return SLEEP_YES;
		}
	for (size_t i = 0; i < ARRAY_SIZE(allocators); i++)
		if (name_is(name, len, allocators[i].name))
			return allocator_may_sleep(call, i, src, why);
	return SLEEP_NO;
}

/* ---- calls that work on the CPU they run on ------------------------------- */

/*
 * Name prefixes of calls that act on the current CPU's own state (its TLB,
 * MMU context, MSRs, local APIC): code around them depends on staying on one
 * CPU even where it never reads the CPU number.
 */
static const char *const cpu_local_prefixes[] = {
	"local_flush_", "__flush_tlb", "flush_tlb_current", "__load_new_mm_context",
	"load_mmu_context", "load_LDT", "switch_mm", "activate_mm", "rdmsr", "wrmsr",
	"apic_read", "apic_write", "ack_APIC_irq", "__local_flush", "local_tlb",
	/* the local APIC as a whole (2.4 x86_64 smp_stop_cpu(): disable_local_APIC() after the CPU leaves the map) */
	"disable_local_APIC", "clear_local_APIC", "setup_local_APIC", "enable_local_APIC",
};

bool api_noreturn(const char *name, size_t len)
{
	static const char *const names[] = {"panic", "do_exit", "complete_and_exit", "machine_halt",
					    "machine_restart", "machine_power_off", "BUG"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return true;
	return false;
}

bool api_context_test(const char *name, size_t len)
{
	/* not in_interrupt() or in_softirq(): local_bh_disable() changes them */
	return len == 6 && memcmp(name, "in_irq", 6) == 0;
}

bool api_cpu_local(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(cpu_local_prefixes); i++) {
		size_t n = strlen(cpu_local_prefixes[i]);
		if (len >= n && memcmp(name, cpu_local_prefixes[i], n) == 0)
			return true;
	}
	return false;
}

const char *api_context_switch(const char *caller, const char *name, size_t len)
{
	static const char *const steps[] = {"switch_to", "switch_mm", "prepare_to_switch", "enter_lazy_tlb"};
	if (strcmp(caller, "schedule") != 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (strlen(steps[i]) == len && memcmp(name, steps[i], len) == 0)
			return "the context switch in schedule(), which 2.6 makes with preemption off "
			       "(2.6.9 context_switch() runs with the runqueue locked and interrupts off)";
	return NULL;
}

const char *api_bound_entry(const char *name, size_t len)
{
	static const struct {
		const char *name, *why;
	} entries[] = {
		{"start_secondary", "start_secondary() runs on the new CPU's own idle task during bring-up, which never "
				    "migrates"},
		{"smp_callin", "smp_callin() runs on the new CPU's own idle task during bring-up, which never migrates"},
		{"secondary_start_kernel", "secondary_start_kernel() runs on the new CPU's own idle task during "
					   "bring-up, which never migrates"},
		{"start_kernel", "start_kernel() runs on the boot CPU's first task, which never migrates, before any "
				 "other task exists"},
		/* 2.6 init/main.c init(): smp_prepare_cpus() before smp_init() brings the others online;
		 * 2.4 smp_boot_cpus(): the others spin until smp_commence() */
		{"smp_prepare_cpus", "smp_prepare_cpus() runs at boot before the other CPUs run tasks: only the boot "
				     "CPU schedules, so no task migrates"},
		{"smp_boot_cpus", "smp_boot_cpus() runs at boot before the other CPUs run tasks: only the boot CPU "
				  "schedules, so no task migrates"},
		{"smp_prepare_boot_cpu", "smp_prepare_boot_cpu() runs in start_kernel() on the boot CPU's first task, "
					 "before any other task exists"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
		if (strlen(entries[i].name) == len && memcmp(name, entries[i].name, len) == 0)
			return entries[i].why;
	return NULL;
}

/*
 * Contracts a function's documentation states rather than its callers show:
 * s390 do_IO(), halt_IO(), clear_IO() and resume_IO() must be called with
 * the subchannel's lock held and I/O interrupts off
 * (Documentation/s390/cds.txt: s390irq_spin_lock_irqsave()).
 */
static const char *const s390_io[] = {"do_IO", "halt_IO", "clear_IO", "resume_IO"};

const char *api_contract(const char *name, size_t len, const char *path)
{
	if (!strstr(path, "s390"))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(s390_io); i++)
		if (name_is(name, len, s390_io[i]))
			return "s390 channel I/O entry (line %u): its contract (Documentation/s390/cds.txt) "
			       "requires the subchannel lock, s390irq_spin_lock_irqsave(), with I/O interrupts off";
	return NULL;
}

bool api_lock_impl(const char *name, size_t len)
{
	static const char *const ops[] = {"spin_lock", "spin_trylock", "spin_unlock", "read_lock", "read_trylock",
					  "read_unlock", "write_lock", "write_trylock", "write_unlock"};
	while (len && *name == '_')
		name++, len--;
	/* 2.6.9 ppc `_raw_spin_lock()` and parisc `_dbg_spin_lock()`, what spin_lock() runs after its
	 * preempt_disable() (include/linux/spinlock.h) */
	if (len > 3 && memcmp(name, "do_", 3) == 0)
		name += 3, len -= 3;
	else if (len > 6 && memcmp(name, "debug_", 6) == 0)
		name += 6, len -= 6;
	else if (len > 4 && (memcmp(name, "raw_", 4) == 0 || memcmp(name, "dbg_", 4) == 0))
		name += 4, len -= 4;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (name_is(name, len, ops[i]))
			return true;
	return false;
}

/* ---- contexts and the registrations that imply them ------------------------ */

const char *fn_context_name(enum fn_context c)
{
	static const char *const n[] = {"process context", "hard-IRQ context",
					"softirq context", "called with preemption off"};
	return n[c];
}

#define PCI_OPS_WHY "pci_read_config_*() and pci_write_config_*() call it under spin_lock_irqsave(&pci_lock)"
#define PCI_OPS_ROWS(member, pos, nth) \
	{REG_FIELD, member, 0, CTX_CALLERS, \
	 "PCI config accessor (." member " of a struct pci_ops, line %u): " PCI_OPS_WHY, "pci_ops"}, \
	{REG_POSITION, member, pos, CTX_CALLERS, \
	 "PCI config accessor (" nth " member of a struct pci_ops initialiser, line %u): " PCI_OPS_WHY, "pci_ops"}

#define IRQ_CHIP_WHY "the IRQ code calls it under spin_lock_irqsave(&desc->lock) (enable_irq(), setup_irq(), ...)"
#define IRQ_CHIP_ROWS(member, pos, nth) \
	{REG_FIELD, member, 0, CTX_CALLERS, \
	 "interrupt controller's " member " (." member " of a struct hw_interrupt_type, line %u): " IRQ_CHIP_WHY, \
	 "hw_interrupt_type"}, \
	{REG_POSITION, member, pos, CTX_CALLERS, \
	 "interrupt controller's " member " (" nth " member of a struct hw_interrupt_type initialiser, line %u): " \
	 IRQ_CHIP_WHY, "hw_interrupt_type"}

static const struct registration registrations[] = {
	{REG_CALL, "request_irq", 1, CTX_HARDIRQ, "interrupt handler passed to request_irq() at line %u", NULL},
	{REG_CALL, "setup_timer", 1, CTX_SOFTIRQ, "timer function set by setup_timer() at line %u", NULL},
	/* 2.6 include/linux/timer.h: `struct timer_list t = TIMER_INITIALIZER(fn, expires, data);` */
	{REG_CALL, "TIMER_INITIALIZER", 0, CTX_SOFTIRQ, "timer function (TIMER_INITIALIZER at line %u)", NULL},
	/* 2.6 kernel/stop_machine.c: do_stop() runs fn after stop_machine()'s local_irq_disable() */
	{REG_CALL, "stop_machine_run", 0, CTX_CALLERS,
	 "run by stop_machine_run() at line %u, with every other CPU held and interrupts off", NULL},
	{REG_CALL, "__stop_machine_run", 0, CTX_CALLERS,
	 "run by __stop_machine_run() at line %u, with every other CPU held and interrupts off", NULL},
	/* 2.6 arm, arm26 (include/asm-arm/mach/irq.h): asm_do_IRQ() calls desc->handle(irq, desc, regs) */
	{REG_CALL, "set_irq_handler", 1, CTX_HARDIRQ,
	 "interrupt flow handler set by set_irq_handler() at line %u: asm_do_IRQ() calls it in interrupt context",
	 NULL},
	{REG_CALL, "set_irq_chained_handler", 1, CTX_HARDIRQ,
	 "chained interrupt handler set by set_irq_chained_handler() at line %u: asm_do_IRQ() calls it in "
	 "interrupt context", NULL},
	{REG_CALL, "__set_irq_handler", 1, CTX_HARDIRQ,
	 "interrupt flow handler set by __set_irq_handler() at line %u: asm_do_IRQ() calls it in interrupt context",
	 NULL},
	{REG_CALL, "tasklet_init", 1, CTX_SOFTIRQ, "tasklet function set by tasklet_init() at line %u", NULL},
	{REG_CALL, "open_softirq", 1, CTX_SOFTIRQ, "softirq action registered by open_softirq() at line %u", NULL},
	{REG_CALL, "init_bh", 1, CTX_SOFTIRQ, "bottom half registered by init_bh() at line %u", NULL},
	{REG_FIELD, "function", 0, CTX_SOFTIRQ, "timer function (assigned to a timer's .function at line %u)", NULL},
	{REG_FIELD, "hard_start_xmit", 0, CTX_SOFTIRQ,
	 "net_device hard_start_xmit (set at line %u): the network core calls it with bottom halves disabled", NULL},
	{REG_CALL, "smp_call_function", 0, CTX_HARDIRQ,
	 "run on other CPUs by smp_call_function() at line %u (IPI handler)", NULL},
	/* ia64 (2.4, 2.6.9 arch/ia64/kernel/smp.c): only ever another CPU, by IPI; never the caller's */
	{REG_CALL, "smp_call_function_single", 1, CTX_HARDIRQ,
	 "run on another CPU by smp_call_function_single() at line %u (IPI handler)", NULL},
	/* 2.6 include/linux/smp.h: smp_call_function(), then func(info) with interrupts off */
	{REG_CALL, "on_each_cpu", 0, CTX_HARDIRQ,
	 "run on every CPU by on_each_cpu() at line %u (IPI handler, and locally with interrupts off)", NULL},
	/* i386/x86_64 bluesmoke.c: do_machine_check(), the machine-check exception, calls it */
	{REG_VARIABLE, "machine_check_vector", 0, CTX_HARDIRQ,
	 "machine-check handler (installed as machine_check_vector at line %u): do_machine_check() runs it "
	 "from the machine-check exception", NULL},
	{REG_VARIABLE, "pm_idle", 0, CTX_CALLERS,
	 "the idle loop (installed as pm_idle at line %u) runs with preemption disabled", NULL},
	/* only a runtime assignment to a net_device reached through something
	 * (dev->poll =, q->backlog.poll =): file_operations' .poll runs in process context */
	{REG_POINTER_FIELD, "poll", 0, CTX_SOFTIRQ,
	 "NAPI poll function (assigned to a net_device's poll at line %u): run by the NET_RX softirq", NULL},
	{REG_FIELD, "tx_timeout", 0, CTX_SOFTIRQ,
	 "net_device tx_timeout (set at line %u): called from the netdev watchdog timer", NULL},
	/* fields whose meaning depends on the struct: only in its initialisers */
	{REG_FIELD, "handler", 0, CTX_SOFTIRQ,
	 "protocol receive handler (.handler of a struct inet_protocol, line %u): run by the NET_RX softirq",
	 "inet_protocol"},
	{REG_FIELD, "err_handler", 0, CTX_SOFTIRQ,
	 "protocol error handler (.err_handler of a struct inet_protocol, line %u): called by icmp_rcv() "
	 "in the NET_RX softirq", "inet_protocol"},
	{REG_FIELD, "handler", 0, CTX_SOFTIRQ,
	 "IPv6 protocol receive handler (.handler of a struct inet6_protocol, line %u): run by the NET_RX "
	 "softirq", "inet6_protocol"},
	{REG_FIELD, "err_handler", 0, CTX_SOFTIRQ,
	 "IPv6 protocol error handler (.err_handler of a struct inet6_protocol, line %u): called by "
	 "icmpv6_rcv() in the NET_RX softirq", "inet6_protocol"},
	{REG_FIELD, "func", 0, CTX_SOFTIRQ,
	 "packet handler (.func of a struct packet_type, line %u): run by the NET_RX softirq", "packet_type"},
	{REG_FIELD, "handler", 0, CTX_HARDIRQ,
	 "interrupt handler (.handler of a struct irqaction, line %u)", "irqaction"},
	/* alpha: do_entInt(), the PALcode's interrupt entry, calls
	 * alpha_mv.machine_check for a machine check and alpha_mv.device_interrupt
	 * for a device interrupt (2.4 arch/alpha/kernel/irq_alpha.c) */
	{REG_FIELD, "machine_check", 0, CTX_HARDIRQ,
	 "alpha machine-check handler (.machine_check of a struct alpha_machine_vector, line %u): "
	 "do_entInt() calls it in interrupt context", "alpha_machine_vector"},
	{REG_FIELD, "device_interrupt", 0, CTX_HARDIRQ,
	 "alpha device-interrupt dispatcher (.device_interrupt of the machine vector, line %u): "
	 "do_entInt() calls it in interrupt context", NULL},
	/* ppc, ppc64: do_IRQ() asks ppc_md.get_irq(regs) for the pending interrupt after hardirq_enter() */
	{REG_FIELD, "get_irq", 0, CTX_HARDIRQ,
	 "interrupt source of the platform (ppc_md.get_irq, set at line %u): do_IRQ() calls it in interrupt "
	 "context", NULL},
	/* netfilter: nf_hook_slow() and nf_reinject() run the hooks under
	 * br_read_lock_bh(BR_NETPROTO_LOCK); ipt_do_table() and ip6t_do_table()
	 * run the matches and targets under read_lock_bh(&table->lock) */
	{REG_FIELD, "hook", 0, CTX_CALLERS,
	 "netfilter hook (.hook of a struct nf_hook_ops, line %u): nf_hook_slow() runs it with "
	 "BR_NETPROTO_LOCK read-held and bottom halves off", "nf_hook_ops"},
	{REG_FIELD, "target", 0, CTX_CALLERS,
	 "iptables target (.target of a struct ipt_target, line %u): ipt_do_table() runs it with the "
	 "table's lock read-held and bottom halves off", "ipt_target"},
	{REG_FIELD, "match", 0, CTX_CALLERS,
	 "iptables match (.match of a struct ipt_match, line %u): ipt_do_table() runs it with the "
	 "table's lock read-held and bottom halves off", "ipt_match"},
	{REG_FIELD, "target", 0, CTX_CALLERS,
	 "ip6tables target (.target of a struct ip6t_target, line %u): ip6t_do_table() runs it with the "
	 "table's lock read-held and bottom halves off", "ip6t_target"},
	{REG_FIELD, "match", 0, CTX_CALLERS,
	 "ip6tables match (.match of a struct ip6t_match, line %u): ip6t_do_table() runs it with the "
	 "table's lock read-held and bottom halves off", "ip6t_match"},
	/* the same members in 2.4's positional initialisers (include/net/protocol.h,
	 * include/linux/netdevice.h, include/linux/interrupt.h) */
	{REG_POSITION, "handler", 0, CTX_SOFTIRQ,
	 "protocol receive handler (first member of a struct inet_protocol initialiser, line %u): run by the "
	 "NET_RX softirq", "inet_protocol"},
	{REG_POSITION, "err_handler", 1, CTX_SOFTIRQ,
	 "protocol error handler (second member of a struct inet_protocol initialiser, line %u): called by "
	 "icmp_rcv() in the NET_RX softirq", "inet_protocol"},
	{REG_POSITION, "handler", 0, CTX_SOFTIRQ,
	 "IPv6 protocol receive handler (first member of a struct inet6_protocol initialiser, line %u): run "
	 "by the NET_RX softirq", "inet6_protocol"},
	{REG_POSITION, "err_handler", 1, CTX_SOFTIRQ,
	 "IPv6 protocol error handler (second member of a struct inet6_protocol initialiser, line %u): called "
	 "by icmpv6_rcv() in the NET_RX softirq", "inet6_protocol"},
	{REG_POSITION, "func", 2, CTX_SOFTIRQ,
	 "packet handler (third member of a struct packet_type initialiser, line %u): run by the NET_RX "
	 "softirq", "packet_type"},
	{REG_POSITION, "handler", 0, CTX_HARDIRQ,
	 "interrupt handler (first member of a struct irqaction initialiser, line %u)", "irqaction"},
	/* 2.4 net/ipv4/icmp.c: icmp_rcv() dispatches through icmp_pointers[type].handler */
	{REG_POSITION, "handler", 2, CTX_SOFTIRQ,
	 "ICMP message handler (third member of a struct icmp_control initialiser, line %u): icmp_rcv() "
	 "calls it in the NET_RX softirq", "icmp_control"},
	{REG_POSITION, "hook", 1, CTX_CALLERS,
	 "netfilter hook (second member of a struct nf_hook_ops initialiser, line %u): nf_hook_slow() runs "
	 "it with BR_NETPROTO_LOCK read-held and bottom halves off", "nf_hook_ops"},
	{REG_POSITION, "target", 2, CTX_CALLERS,
	 "iptables target (third member of a struct ipt_target initialiser, line %u): ipt_do_table() runs "
	 "it with the table's lock read-held and bottom halves off", "ipt_target"},
	{REG_POSITION, "match", 2, CTX_CALLERS,
	 "iptables match (third member of a struct ipt_match initialiser, line %u): ipt_do_table() runs it "
	 "with the table's lock read-held and bottom halves off", "ipt_match"},
	{REG_POSITION, "target", 2, CTX_CALLERS,
	 "ip6tables target (third member of a struct ip6t_target initialiser, line %u): ip6t_do_table() "
	 "runs it with the table's lock read-held and bottom halves off", "ip6t_target"},
	{REG_POSITION, "match", 2, CTX_CALLERS,
	 "ip6tables match (third member of a struct ip6t_match initialiser, line %u): ip6t_do_table() runs "
	 "it with the table's lock read-held and bottom halves off", "ip6t_match"},
	/* 2.4 do_IRQ() (ppc: ppc_irq_dispatch_handler(), alpha: handle_irq()) acknowledges and ends an
	 * interrupt through its controller's struct hw_interrupt_type; nothing else calls them */
	{REG_FIELD, "ack", 0, CTX_HARDIRQ,
	 "interrupt controller's ack (.ack of a struct hw_interrupt_type, line %u): do_IRQ() calls it in "
	 "interrupt context", "hw_interrupt_type"},
	{REG_FIELD, "end", 0, CTX_HARDIRQ,
	 "interrupt controller's end (.end of a struct hw_interrupt_type, line %u): do_IRQ() calls it in "
	 "interrupt context", "hw_interrupt_type"},
	{REG_POSITION, "ack", 5, CTX_HARDIRQ,
	 "interrupt controller's ack (sixth member of a struct hw_interrupt_type initialiser, line %u): "
	 "do_IRQ() calls it in interrupt context", "hw_interrupt_type"},
	{REG_POSITION, "end", 6, CTX_HARDIRQ,
	 "interrupt controller's end (seventh member of a struct hw_interrupt_type initialiser, line %u): "
	 "do_IRQ() calls it in interrupt context", "hw_interrupt_type"},
	/* 2.4 and 2.6.9 enable_irq(), disable_irq(), setup_irq(), free_irq() and probe_irq_on()
	 * (arch/<arch>/kernel/irq.c) call the rest of the controller under its descriptor's lock */
	IRQ_CHIP_ROWS("startup", 1, "second"), IRQ_CHIP_ROWS("shutdown", 2, "third"),
	IRQ_CHIP_ROWS("enable", 3, "fourth"), IRQ_CHIP_ROWS("disable", 4, "fifth"),
	/* 2.4 pci_read_config_*()/pci_write_config_*() (drivers/pci/pci.c PCI_OP) call the bus's
	 * struct pci_ops under spin_lock_irqsave(&pci_lock); the calls are token-pasted */
	PCI_OPS_ROWS("read_byte", 0, "first"), PCI_OPS_ROWS("read_word", 1, "second"),
	PCI_OPS_ROWS("read_dword", 2, "third"), PCI_OPS_ROWS("write_byte", 3, "fourth"),
	PCI_OPS_ROWS("write_word", 4, "fifth"), PCI_OPS_ROWS("write_dword", 5, "sixth"),
	/* 2.4 scsi_dispatch_cmd(): spin_lock_irqsave(&io_request_lock) around it */
	{REG_FIELD, "queuecommand", 0, CTX_CALLERS,
	 "SCSI queuecommand (.queuecommand of a Scsi_Host_Template, line %u): the midlayer calls it "
	 "with io_request_lock held and interrupts off", "Scsi_Host_Template"},
	/* its 2.6 name: scsi_dispatch_cmd() holds the host's host_lock with interrupts off */
	{REG_FIELD, "queuecommand", 0, CTX_CALLERS,
	 "SCSI queuecommand (.queuecommand of a struct scsi_host_template, line %u): the midlayer calls it "
	 "with the host's lock held and interrupts off", "scsi_host_template"},
};

const struct registration *api_registration(enum reg_via via, const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(registrations); i++)
		if (registrations[i].via == via && !registrations[i].type &&
		    name_is(name, len, registrations[i].name))
			return &registrations[i];
	return NULL;
}

/*
 * 2.4 include/linux/netfilter.h: NF_HOOK() calls okfn(skb) at once when no
 * hook is registered; nf_hook_slow() and nf_reinject() call it under
 * br_read_lock_bh(BR_NETPROTO_LOCK).  Either way okfn runs in its caller's
 * context, or with bottom halves off: never preemptible where the caller
 * is not.
 */
static const struct callback_arg {
	const char *name;
	int arg;
} callback_args[] = {
	{"NF_HOOK", 5},
	{"nf_hook_slow", 5},
};

int api_callback_arg(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(callback_args); i++)
		if (name_is(name, len, callback_args[i].name))
			return callback_args[i].arg;
	return -1;
}

/* TYPE's text names the struct WANT as a whole word (`struct inet_protocol`). */
static bool type_names(const char *type, size_t tlen, const char *want)
{
	size_t n = strlen(want);
	for (size_t i = 0; i + n <= tlen; i++)
		if (memcmp(type + i, want, n) == 0 && (i == 0 || !is_ident_char(type[i - 1])) &&
		    (i + n == tlen || !is_ident_char(type[i + n])))
			return true;
	return false;
}

const struct registration *api_registration_in(enum reg_via via, const char *name, size_t len,
					       const char *type, size_t tlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(registrations); i++)
		if (registrations[i].via == via && name_is(name, len, registrations[i].name) &&
		    (!registrations[i].type || type_names(type, tlen, registrations[i].type)))
			return &registrations[i];
	return NULL;
}

const struct registration *api_registration_at(unsigned pos, const char *type, size_t tlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(registrations); i++)
		if (registrations[i].via == REG_POSITION && registrations[i].arg == pos &&
		    type_names(type, tlen, registrations[i].type))
			return &registrations[i];
	return NULL;
}

/*
 * Every name of the tables above, by the class of site it can make
 * (api_words.c builds the prefilter of P006 and P007 from them): the
 * locking calls, the calls that may sleep (the user's own are
 * api_user_sleepers()), and what registers a function in an atomic context
 * (a typed row by its struct type, which its match needs too).
 */
void api_table_words(void (*visit)(const char *word, unsigned cls, void *ctx), void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(apis); i++)
		visit(apis[i].name, API_WORD_LOCK, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(bkl_apis); i++)
		visit(bkl_apis[i].name, API_WORD_LOCK, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(sleepers); i++)
		visit(sleepers[i], API_WORD_SLEEP, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(allocators); i++)
		visit(allocators[i].name, API_WORD_SLEEP, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(registrations); i++)
		visit(registrations[i].type ? registrations[i].type : registrations[i].name, API_WORD_CONTEXT, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(callback_args); i++)
		visit(callback_args[i].name, API_WORD_CONTEXT, ctx);
	for (size_t i = 0; i < ARRAY_SIZE(s390_io); i++)
		visit(s390_io[i], API_WORD_CONTEXT, ctx);
}

const char *const *api_user_sleepers(size_t *n)
{
	*n = user_sleepers.len;
	return (const char *const *)user_sleepers.items;
}

/*
 * ---- what a kernel tree's own sources say about preemption -----------------
 * Read once before any analysis: the architectures its Kconfig builds
 * without CONFIG_PREEMPT (their code is never compiled preemptible), and
 * whether its big kernel lock is a spinlock under CONFIG_PREEMPT (2.6.9
 * include/linux/smp_lock.h) or sleeps (2.6.11's PREEMPT_BKL semaphore; a
 * 2.4 tree has no preemption to judge, and its port keeps the 2.6 default
 * of "no protection").
 */

static bool bkl_spins;
static struct strvec no_preempt = STRVEC_INIT; /* architectures without `config PREEMPT` */

static char *read_text(const char *path, size_t *len)
{
	char *text = NULL;
	*len = 0;
	if (read_file_max(path, 1u << 22, &text, len) < 0) {
		error_clear();
		return NULL;
	}
	return text;
}

static bool has(const char *text, size_t len, const char *word)
{
	return text && memmem(text, len, word, strlen(word)) != NULL;
}

/* Does a Kconfig file of arch/NAME (Kconfig, Kconfig.cpu, ...) define PREEMPT? */
static bool arch_defines_preempt(const char *root, const char *name)
{
	char *dir = xasprintf("%s/arch/%s", root, name);
	DIR *d = opendir(dir);
	bool yes = false;
	for (struct dirent *e; d && !yes && (e = readdir(d));) {
		if (strncmp(e->d_name, "Kconfig", 7) != 0)
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		size_t len;
		char *text = read_text(p, &len);
		for (const char *l = text; l && !yes; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			yes = strncmp(l, "config PREEMPT", 14) == 0 && (l[14] == '\n' || l[14] == ' ' || l[14] == '\t');
		free(text);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
	return yes;
}

static void read_arches(const char *root)
{
	char *dir = xasprintf("%s/arch", root);
	DIR *d = opendir(dir);
	struct strvec without = STRVEC_INIT;
	bool any = false;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *kc = xasprintf("%s/%s/Kconfig", dir, e->d_name);
		size_t len;
		char *text = read_text(kc, &len);
		free(kc);
		if (!text)
			continue; /* not a Kconfig architecture (2.4's config.in): nothing to judge */
		free(text);
		if (arch_defines_preempt(root, e->d_name))
			any = true;
		else
			strvec_push(&without, e->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
	/* a tree none of whose architectures can preempt predates CONFIG_PREEMPT: it is ported, not judged */
	if (any)
		for (size_t i = 0; i < without.len; i++)
			strvec_push(&no_preempt, without.items[i]);
	strvec_release(&without);
}

static void read_bkl(const char *root)
{
	char *h = xasprintf("%s/include/linux/smp_lock.h", root), *c = xasprintf("%s/lib/kernel_lock.c", root);
	size_t hl, cl;
	char *ht = read_text(h, &hl), *ct = read_text(c, &cl);
	bkl_spins = has(ht, hl, "CONFIG_PREEMPT") && has(ht, hl, "spin_lock(&kernel_flag)") &&
		    !has(ct, cl, "kernel_sem") && !has(ht, hl, "PREEMPT_BKL");
	free(ht);
	free(ct);
	free(h);
	free(c);
}

void kernel_api_read_tree(const char *root)
{
	kernel_api_reset_tree();
	if (!root)
		return;
	read_arches(root);
	read_bkl(root);
	header_locks_read(root);
}

void kernel_api_reset_tree(void)
{
	bkl_spins = false;
	header_locks_reset();
	strvec_release(&no_preempt);
}

void kernel_api_digest(struct buf *out)
{
	buf_printf(out, "kernel-api bkl %d\n", bkl_spins);
	header_locks_digest(out);
	for (size_t i = 0; i < no_preempt.len; i++)
		buf_printf(out, "no-preempt %s%c", no_preempt.items[i], 0);
	for (size_t i = 0; i < user_sleepers.len; i++)
		buf_printf(out, "sleeper %s%c", user_sleepers.items[i], 0);
}

bool api_bkl_spins(void)
{
	return bkl_spins;
}

const char *api_arch_without_preempt(const char *path, size_t *len)
{
	static const char *const prefixes[] = {"arch/", "include/asm-"};
	for (size_t k = 0; k < ARRAY_SIZE(prefixes); k++) {
		size_t pl = strlen(prefixes[k]);
		for (const char *p = path; (p = strstr(p, prefixes[k])); p++) {
			if (p != path && p[-1] != '/')
				continue;
			const char *a = p + pl, *slash = strchr(a, '/');
			if (!slash)
				break;
			for (size_t i = 0; i < no_preempt.len; i++)
				if (strlen(no_preempt.items[i]) == (size_t)(slash - a) &&
				    memcmp(no_preempt.items[i], a, (size_t)(slash - a)) == 0) {
					*len = (size_t)(slash - a);
					return a;
				}
			break;
		}
	}
	return NULL;
}

bool point_bkl_only(const struct fn *f, const struct point_state *s, uint32_t offset)
{
	if (!bkl_spins || s->atomic_ctx || s->entry_held || s->must_acq < 0)
		return false;
	name_vec held = VEC_INIT;
	flow_held_keys(f, offset, false, &held);
	bool only = held.len > 0;
	for (size_t i = 0; i < held.len && only; i++)
		only = strcmp(held.items[i], "kernel_flag") == 0;
	vec_release(&held);
	return only;
}
