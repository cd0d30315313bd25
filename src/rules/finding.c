#include "rules/finding.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *code, *name, *summary, *help;
} rules[RULE_COUNT] = {
	[RULE_P001] = {"P001", "percpu-array",
		"2.4 per-CPU array indexed by smp_processor_id() in preemptible code",
		"A file-scope `static T x[NR_CPUS]` is the 2.4 way to keep per-CPU data. "
		"Indexed by smp_processor_id() with preemption enabled, the task can "
		"migrate between reading the CPU number and touching the slot, so two "
		"CPUs update one slot. The fix `define-per-cpu` turns the array into "
		"DEFINE_PER_CPU(T, x), this-CPU uses into get_cpu_var(x)/put_cpu_var(x) "
		"(or __get_cpu_var(x) where preemption is already off) and other x[i] "
		"into per_cpu(x, i). When x is used other than by subscript (address "
		"taken, passed whole, sizeof), the fix falls back to `get-cpu`."},
	[RULE_P002] = {"P002", "percpu-unguarded",
		"this-CPU per-CPU access without preemption disabled",
		"__get_cpu_var(x), per_cpu(x, smp_processor_id()) and this-CPU "
		"subscripts of a non-static or extern NR_CPUS array give no protection "
		"of their own: they are only correct where preemption is already off "
		"(a spinlock held, interrupts disabled, IRQ or softirq context). In "
		"preemptible code the fix `get-cpu-var` uses get_cpu_var(x) ... "
		"put_cpu_var(x); other forms use `get-cpu`."},
	[RULE_P003] = {"P003", "cpu-id",
		"value of smp_processor_id() used in preemptible code",
		"A CPU number read with preemption enabled is stale as soon as the "
		"task migrates. Kept in a variable, used as an index or passed on, it "
		"must be read with get_cpu() and released with put_cpu() after its "
		"last use (fix `get-cpu`). When it is read just before a lock or "
		"interrupt-disable and only used inside it, the read moves inside "
		"(fix `move-inside`, what 2.6 did in net/core/dev.c). A value that "
		"is only printed is reported with low severity."},
	[RULE_P004] = {"P004", "resched",
		"2.4 manual reschedule check",
		"2.4 code polled `current->need_resched` and called schedule(). In 2.6 "
		"the field is gone: `if (current->need_resched) schedule();` and its "
		"variants become cond_resched() (fix `cond-resched`); a test inside a "
		"larger condition, an else-if, or one followed by break/return keeps "
		"its shape and becomes need_resched() (fix `need-resched-call`); "
		"`current->policy |= SCHED_YIELD; schedule();` becomes yield() (fix "
		"`yield`). Version-guarded compatibility code is left alone."},
	[RULE_P005] = {"P005", "noresched",
		"preempt_enable_no_resched() without a later preempt_check_resched()",
		"preempt_enable_no_resched() re-enables preemption without honouring a "
		"reschedule that became due meanwhile. Unless schedule() or "
		"preempt_check_resched() follows before the code may sleep or returns, "
		"the reschedule is lost until the next interrupt. Fix `check-resched` "
		"inserts preempt_check_resched() there. The misspelling "
		"preempt_enable_noresched() is reported as such."},
	[RULE_P006] = {"P006", "sleep-in-atomic",
		"call that may sleep while preemption is off",
		"A call that may sleep (schedule, down, kmalloc(GFP_KERNEL), "
		"copy_to_user, ... or a function of the same file that may sleep) "
		"made with a spinlock held, interrupts or preemption disabled, or "
		"in IRQ/softirq context. 2.6 traps this with in_atomic(). Report "
		"only; preemptify never creates such a region."},
	[RULE_P007] = {"P007", "unbalanced",
		"preemption/lock/irq state not balanced on some path",
		"A get_cpu/put_cpu, preempt_disable/enable, lock/unlock or "
		"irq-disable/restore pair that is not balanced on every path through "
		"the function (an early return or a goto that skips the release). "
		"Report only."},
};

const char *rule_code(enum rule_id r) { return rules[r].code; }
const char *rule_name(enum rule_id r) { return rules[r].name; }
const char *rule_summary(enum rule_id r) { return rules[r].summary; }
const char *rule_help(enum rule_id r) { return rules[r].help; }

int rule_parse(const char *s)
{
	for (int r = 0; r < RULE_COUNT; r++)
		if (strcasecmp(s, rules[r].code) == 0 || strcmp(s, rules[r].name) == 0)
			return r;
	return -1;
}

const char *severity_name(enum severity s)
{
	static const char *const n[] = {"error", "warning", "note"};
	return n[s];
}

const char *confidence_name(enum confidence c)
{
	static const char *const n[] = {"high", "medium", "low"};
	return n[c];
}

static const char *const fix_names[FIX_COUNT] = {
	"none", "get-cpu", "define-per-cpu", "get-cpu-var", "move-inside",
	"cond-resched", "need-resched-call", "yield", "check-resched",
};

const char *fix_name(enum fix_kind f) { return fix_names[f]; }

int fix_parse(const char *s)
{
	for (int f = 0; f < FIX_COUNT; f++)
		if (strcmp(s, fix_names[f]) == 0)
			return f;
	return -1;
}

void finding_release(struct finding *f)
{
	free(f->file);
	free(f->function);
	free(f->message);
	free(f->evidence);
	free(f->fix_note);
	for (size_t i = 0; i < f->edits.len; i++)
		free(f->edits.items[i].text);
	vec_release(&f->edits);
}

void diagnostic_release(struct diagnostic *d)
{
	free(d->file);
	free(d->message);
}

int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.column != y->pos.column)
		return x->pos.column < y->pos.column ? -1 : 1;
	return (int)x->rule - (int)y->rule;
}
