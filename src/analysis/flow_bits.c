/*
 * The one worklist behind the small set analyses over a function's CFG:
 * the caller's keys still possibly held (flow.c flow_caller_keys_gone(), a
 * may-analysis) and those surely held from the entry (entry_locks.c, a
 * must-analysis). Each gives its own step per event.
 */
#include "analysis/flow.h"

#include <stdlib.h>

bool flow_bits_at(const struct fn *f, uint64_t entry, bool must, flow_bits_step step, const void *ctx,
		  uint32_t offset, uint64_t *out)
{
	uint32_t at = offset == UINT32_MAX ? CFG_EXIT_ID : cfg_node_at(&f->cfg, offset);
	size_t nn = f->cfg.nodes.len;
	if (at == UINT32_MAX)
		return false;
	uint64_t *in = xcalloc(nn, sizeof *in);
	uint8_t *seen = xcalloc(nn, 1), *queued = xcalloc(nn, 1);
	VEC(uint32_t) work = VEC_INIT;
	in[CFG_ENTRY_ID] = entry;
	seen[CFG_ENTRY_ID] = queued[CFG_ENTRY_ID] = 1;
	vec_push(&work, CFG_ENTRY_ID);
	while (work.len) {
		uint32_t id = work.items[--work.len];
		queued[id] = 0;
		uint64_t h = in[id];
		for (size_t e = 0; e < f->events.items[id].len; e++)
			h = step(f, &f->events.items[id].items[e], h, ctx);
		const struct cfg_node *node = &f->cfg.nodes.items[id];
		for (size_t s = 0; s < node->succ.len; s++) {
			uint32_t to = node->succ.items[s].to;
			uint64_t joined = !seen[to] ? h : must ? in[to] & h : in[to] | h;
			if (seen[to] && joined == in[to])
				continue;
			in[to] = joined;
			seen[to] = 1;
			if (!queued[to]) {
				queued[to] = 1;
				vec_push(&work, to);
			}
		}
	}
	bool reached = seen[at];
	if (reached) {
		uint64_t h = in[at];
		const struct event *ev = f->events.items[at].items;
		for (size_t e = 0; e < f->events.items[at].len && ts_node_end_byte(ev[e].call) <= offset; e++)
			h = step(f, &ev[e], h, ctx);
		*out = h;
	}
	vec_release(&work);
	free(in);
	free(seen);
	free(queued);
	return reached;
}
