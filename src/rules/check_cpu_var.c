/* P002: __get_cpu_var(x), per_cpu(x, smp_processor_id()). */
#include "rules/cpu_shared.h"

#include <stdlib.h>
#include <string.h>

static void cpu_var_site(struct ctx *c, const struct fn *f, TSNode call, bool is_per_cpu)
{
	TSNode args = ts_field(call, "arguments");
	if (ts_node_named_child_count(args) < 1)
		return;
	if (is_per_cpu) {
		if (ts_node_named_child_count(args) != 2 ||
		    !call_is(c, ts_strip_parens(ts_node_named_child(args, 1), c->text), "smp_processor_id"))
			return;
	}
	char *var = node_text(c, ts_node_named_child(args, 0));
	struct point_state ps = flow_state_at(f, ts_node_start_byte(call));
	char *why = explain_state(f, &ps);
	const char *form = is_per_cpu ? "per_cpu(%s, smp_processor_id())" : "__get_cpu_var(%s)";
	char *shown = xasprintf(form, var);
	bool prot = point_protected(&ps);
	char *held = prot ? NULL : cpu_entry_lock(c, f, call);
	if (held) {
		prot = true;
		free(why);
		why = held;
	}
	if (!prot) {
		/* bring-up code: the CPU runs this task alone, its per-CPU data included */
		bool whole = false;
		char *bound = cpu_stable(c, f, call, &whole);
		if (bound && whole) {
			prot = true;
			free(why);
			why = bound;
		} else {
			free(bound);
		}
	}
	if (prot && c->opts->target == TARGET_MODERN && !is_per_cpu) {
		/* safe where it is, but modern kernels have no __get_cpu_var() */
		struct finding *fd = add_finding(c, RULE_P002, call, f, SEV_NOTE, CONF_HIGH, FIX_GET_CPU_VAR,
			xasprintf("%s: modern kernels have no __get_cpu_var()", shown), why);
		if (fd)
			plan_this_cpu(c, call, var, true, fd);
	} else if (prot) {
		add_protected(c, RULE_P002, call, f, xasprintf("%s with preemption off", shown), why);
	} else {
		struct finding *fd = add_finding(c, RULE_P002, call, f, SEV_WARNING, CONF_HIGH, FIX_GET_CPU_VAR,
			xasprintf("%s in preemptible code", shown), why);
		if (fd && c->opts->target == TARGET_MODERN && plan_this_cpu(c, call, var, false, fd)) {
			/* one this_cpu_* operation */
		} else if (fd) {
			char *rep = xasprintf("get_cpu_var(%s)", var);
			char *put = xasprintf("put_cpu_var(%s)", var);
			add_edit(c, fd, EDIT_REPLACE, call, rep);
			char *no = plan_site_region(c, f, call, put, fd);
			if (no)
				unfixable(fd, no);
			free(rep);
			free(put);
		}
	}
	free(shown);
	free(var);
}

static void check_cpu_var(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	cpu_var_site(c, f, site, strcmp(kind, "per_cpu") == 0);
}

const struct rule_hooks cpu_var_hooks = {.check = check_cpu_var, .site_words = {"__get_cpu_var", "per_cpu"}};
