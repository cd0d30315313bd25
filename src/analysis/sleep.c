/*
 * May-sleep summaries: a function may sleep when it calls something that
 * sleeps (schedule(), kmalloc(GFP_KERNEL), ...; kernel_api.c) or a function
 * of this file that may, propagated over fn.calls to a fixed point.
 */
#include "analysis/flow.h"

#include <stdlib.h>

/* The strongest of F's own calls, with the first call that is that strong. */
static void direct_sleeps(const struct file_analysis *fa, struct fn *f)
{
	const char *src = fa->src->parse_text;
	for (size_t n = 0; n < f->events.len && f->sleeps != SLEEP_YES; n++)
		for (size_t e = 0; e < f->events.items[n].len; e++) {
			struct buf why = BUF_INIT;
			TSNode call = f->events.items[n].items[e].call;
			enum sleep_kind k = api_may_sleep(call, src, &why);
			if (k > f->sleeps) {
				f->sleeps = k;
				free(f->sleep_reason);
				f->sleep_reason = xasprintf("calls %s at line %u", buf_cstr(&why),
					source_pos(fa->src, ts_node_start_byte(call)).line);
			}
			buf_release(&why);
			if (k == SLEEP_YES)
				break;
		}
}

void sleep_summarise(struct file_analysis *fa)
{
	for (size_t i = 0; i < fa->fns.len; i++)
		direct_sleeps(fa, &fa->fns.items[i]);
	for (bool changed = true; changed; ) {
		changed = false;
		for (size_t i = 0; i < fa->fns.len; i++) {
			struct fn *f = &fa->fns.items[i];
			for (size_t c = 0; c < f->calls.len; c++) {
				const struct fn *g = &fa->fns.items[f->calls.items[c].callee];
				if (g->sleeps > f->sleeps) {
					f->sleeps = g->sleeps;
					free(f->sleep_reason);
					f->sleep_reason = xasprintf("calls %s() at line %u, which %s", g->name,
						source_pos(fa->src, ts_node_start_byte(f->calls.items[c].call)).line,
						g->sleep_reason);
					changed = true;
				}
			}
		}
	}
}
