/* P007: an acquisition not released on every path. */
#include "rules/ctx.h"

void check_balance(struct ctx *c, const struct fn *f, TSNode site, const char *kind)
{
	(void)site;
	(void)kind;
	for (size_t i = 0; i < f->acqs.len; i++) {
		const struct acq *a = &f->acqs.items[i];
		bool m, y;
		if (!flow_exit_state(f, (uint32_t)i, &m, &y))
			return;
		if (m || !y)
			continue; /* released everywhere, or held on every exit by design */
		if (i > 0 && ts_node_eq(f->acqs.items[i - 1].call, a->call))
			continue; /* one report per call (spin_lock_irqsave: lock + irq) */
		/* only when this function also releases it, and not a caller's lock it retakes */
		if (!fn_releases(f, a->key) || fn_drops_caller_lock(f, a->key))
			continue;
		/* the return that leaks it */
		unsigned leak_line = 0;
		for (size_t n = 0; n < f->cfg.nodes.len && !leak_line; n++) {
			const struct cfg_node *node = &f->cfg.nodes.items[n];
			if (node->kind != CFG_RETURN || !f->reached[n])
				continue;
			struct point_state ps = flow_state_at(f, ts_node_end_byte(node->ast) - 1);
			if (ps.must_acq == (int)i || ps.may_acq == (int)i)
				leak_line = line_of(c, node->ast);
		}
		char *ev = leak_line ? xasprintf("%s(%s) at line %u is still held at the return at line %u, "
						 "but released on other paths", a->api, a->key, a->line, leak_line)
				     : xasprintf("%s(%s) at line %u is still held at the end of the function on "
						 "some path, but released on others", a->api, a->key, a->line);
		add_finding(c, RULE_P007, a->call, f, SEV_WARNING, CONF_MEDIUM, FIX_NONE,
			    xasprintf("%s() not balanced on every path", a->api), ev);
	}
}
