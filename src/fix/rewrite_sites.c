/*
 * Rewrite sites: the distinct edits of a file's active findings as spatch
 * sites, grouped into rounds that one spatch run can take, verified after
 * each run and carried through what it changed into the next text.
 */
#include "fix/rewrite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"
#include "fix/lines.h"
#include "fix/textdiff.h"

/* Old-side line interval of H; a pure insertion touches both neighbours. */
static bool hunk_touches(const struct textdiff_hunk *h, unsigned lo, unsigned hi)
{
	unsigned a = h->old_start, b = h->old_lines ? h->old_start + h->old_lines - 1 : h->old_start + 1;
	return a <= hi && b >= lo;
}

static bool site_verified(const struct site *s, const textdiff_hunk_vec *hunks,
			  const struct lines *newl)
{
	unsigned lo, hi;
	switch (s->op) {
	case EDIT_REPLACE:
		lo = hi = s->line;
		break;
	case EDIT_INSERT_AFTER:
		lo = s->line;
		hi = s->end_line + 1;
		break;
	default:
		lo = s->line > 1 ? s->line - 1 : 1;
		hi = s->end_line;
		break;
	}
	/* a replacement that keeps its line and adds lines after it: spatch's diff only adds them */
	const char *tail = s->op == EDIT_REPLACE ? strrchr(s->text, '\n') : NULL;
	for (size_t i = 0; i < hunks->len; i++) {
		const struct textdiff_hunk *h = &hunks->items[i];
		if (s->op == EDIT_REPLACE && h->old_lines == 0) {
			if (tail && hunk_touches(h, lo, hi + 1) && lines_hunk_has(h, newl, tail + 1))
				return true;
			continue;
		}
		if (!hunk_touches(h, lo, hi))
			continue;
		if (!s->text[0] || lines_hunk_has(h, newl, s->text))
			return true;
	}
	return false;
}

/*
 * spatch re-parses a function after a modifying rule changed it, and later
 * rules see positions relative to that fragment: so a run may contain only
 * sites that one rule of the .cocci changes. Replacements are grouped by
 * node type and the replacement's leading word (get_cpu_var, per_cpu,
 * static, ...); insertions are one rule per operation.
 */
static void site_group(struct site *s)
{
	size_t n = 0;
	if (s->op == EDIT_REPLACE)
		while (s->text[n] && (s->text[n] == '_' || (s->text[n] >= 'a' && s->text[n] <= 'z') ||
				      (s->text[n] >= 'A' && s->text[n] <= 'Z') ||
				      (s->text[n] >= '0' && s->text[n] <= '9')))
			n++;
	snprintf(s->group, sizeof s->group, "%s:%.*s", s->op == EDIT_REPLACE && s->node ? s->node : "",
		 (int)(n > 24 ? 24 : n), s->text);
}

void build_sites(struct job *j, const bool *active, const struct lines *l, site_vec *out)
{
	for (size_t fi = 0; fi < j->findings.len; fi++) {
		if (!active[fi])
			continue;
		struct finding *f = j->findings.items[fi];
		for (size_t ei = 0; ei < f->edits.len; ei++) {
			const struct edit *e = &f->edits.items[ei];
			const char *text = e->text ? e->text : "";
			struct site *s = NULL;
			if (e->by_text)
				continue; /* made after spatch: lines_drop_emptied_conditionals() */
			for (size_t k = 0; k < out->len; k++) {
				struct site *o = &out->items[k];
				if (o->kind == f->fix && o->op == e->op && o->start == e->start.offset &&
				    o->end == e->end.offset && strcmp(o->text, text) == 0) {
					s = o;
					break;
				}
			}
			if (!s) {
				struct site ns = {0};
				ns.kind = f->fix;
				ns.op = e->op;
				ns.start = e->start.offset;
				ns.end = e->end.offset;
				ns.node = e->node;
				ns.text = text;
				site_group(&ns);
				unsigned ec;
				lines_pos(l, ns.start, &ns.line, &ns.col);
				lines_pos(l, ns.end > ns.start ? ns.end - 1 : ns.end, &ns.end_line, &ec);
				ns.orig_line = ns.line;
				vec_push(out, ns);
				s = &out->items[out->len - 1];
			}
			bool have = false;
			for (size_t k = 0; k < s->owners.len; k++)
				have |= s->owners.items[k] == fi;
			if (!have)
				vec_push(&s->owners, fi);
		}
	}
}

/*
 * The top-level definition or declaration that holds byte AT of the tree
 * under N, looking through preprocessor conditionals; the null node when AT
 * lies in none, or in one tree-sitter could not parse.
 */
static TSNode function_at(TSNode n, size_t at)
{
	for (;;) {
		TSNode next = ts_null();
		for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
			TSNode c = ts_node_named_child(n, i);
			if (ts_node_start_byte(c) <= at && at < ts_node_end_byte(c)) {
				next = c;
				break;
			}
		}
		if (ts_node_is_null(next))
			return next;
		const char *t = ts_node_type(next);
		if (strncmp(t, "preproc_if", 10) != 0 && strncmp(t, "preproc_el", 10) != 0)
			return ts_node_has_error(next) ? ts_null() : next;
		n = next;
	}
}

/*
 * Runs the groups of one fix kind and operation side by side where they
 * cannot meet: spatch re-parses a top-level definition a rule changed, so
 * one takes one group per run (site_group()), but they are independent of
 * each other. Each site's group becomes its round: the k-th distinct group
 * of its definition runs in round k. Sites outside any definition, or in
 * one with a parse error, count as one definition; on a file tree-sitter
 * cannot parse every group keeps a round of its own.
 */
void merge_groups(site_vec *sites, const char *path, const char *text, size_t len)
{
	struct source src;
	source_init(&src, path, xstrndup(text, len), len);
	TSTree *tree = ts_parse_c(src.parse_text, len);
	size_t n = sites->len;
	size_t *fn = xcalloc(n ? n : 1, sizeof *fn); /* 1 + the definition's start byte, or 0 */
	for (size_t i = 0; tree && i < n; i++) {
		TSNode f = function_at(ts_tree_root_node(tree), sites->items[i].start);
		fn[i] = ts_node_is_null(f) ? 0 : 1 + (size_t)ts_node_start_byte(f);
	}
	unsigned *round = xcalloc(n ? n : 1, sizeof *round);
	for (size_t i = 0; tree && i < n; i++) {
		const struct site *s = &sites->items[i];
		unsigned next = 0; /* the groups met in this definition so far */
		bool same = false;
		for (size_t q = 0; q < i && !same; q++) {
			const struct site *o = &sites->items[q];
			if (o->kind != s->kind || o->op != s->op || fn[q] != fn[i])
				continue;
			if (strcmp(o->group, s->group) == 0)
				round[i] = round[q], same = true;
			else if (round[q] + 1 > next)
				next = round[q] + 1;
		}
		if (!same)
			round[i] = next;
	}
	for (size_t i = 0; tree && i < n; i++)
		snprintf(sites->items[i].group, sizeof sites->items[i].group, "round %u", round[i]);
	free(round);
	free(fn);
	if (tree) {
		ts_parent_forget(tree);
		ts_tree_delete(tree);
	}
	source_release(&src);
}

void sites_release(site_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		vec_release(&v->items[i].owners);
	vec_release(v);
}

static void mark_failed(char **why, const struct site *s, const char *fmt)
{
	for (size_t k = 0; k < s->owners.len; k++)
		if (!why[s->owners.items[k]])
			why[s->owners.items[k]] =
				xasprintf(fmt, s->node ? s->node : "site", s->orig_line);
}

/* The group of the first site of KIND/OP not yet done, or NULL. */
const char *next_group(const site_vec *sites, enum fix_kind kind, enum edit_op op)
{
	for (size_t i = 0; i < sites->len; i++)
		if (sites->items[i].kind == kind && sites->items[i].op == op && !sites->items[i].lost)
			return sites->items[i].group;
	return NULL;
}

/*
 * After the run of KIND/OP/GROUP turned CUR into NEXT: verifies the sites it
 * was given (done with them either way) and remaps the others into NEXT.
 * WHY[i] is set for the findings whose site failed. 0, or -1 with *ERR.
 */
int after_run(site_vec *sites, enum fix_kind kind, enum edit_op op, const char *group,
	      const char *cur, size_t cur_len, const char *next, size_t next_len, char **why, char **err)
{
	textdiff_hunk_vec hunks = VEC_INIT;
	if (textdiff_hunks(cur, cur_len, next, next_len, &hunks) < 0) {
		*err = xstrdup(error_last());
		return -1;
	}
	struct lines oldl, newl;
	lines_init(&oldl, cur, cur_len);
	lines_init(&newl, next, next_len);
	for (size_t i = 0; i < sites->len; i++) {
		struct site *s = &sites->items[i];
		if (s->lost)
			continue;
		if (s->kind == kind && s->op == op && strcmp(s->group, group) == 0) {
			if (!site_verified(s, &hunks, &newl))
				mark_failed(why, s, "spatch did not change the %s at "
						    "line %u (function not parsed, or "
						    "the pattern did not match)");
			s->lost = true; /* done with it */
			continue;
		}
		unsigned line = s->line, col = s->col;
		if (!lines_map_pos(&hunks, &oldl, &newl, &line, &col)) {
			s->lost = true;
			mark_failed(why, s, "the %s at line %u was changed by an "
					    "earlier rewrite of this file");
			continue;
		}
		s->line = line;
		s->col = col;
		s->end_line = lines_map_line(&hunks, s->end_line);
	}
	lines_release(&oldl);
	lines_release(&newl);
	vec_release(&hunks);
	return 0;
}
