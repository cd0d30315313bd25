/* A finding's planned edits as replacements of the original text, and the text they make (edit_text.h). */
#include "cli/edit_text.h"

#include <stdlib.h>
#include <string.h>

static void replacement_add(replacement_vec *v, struct srcpos start, struct srcpos end, char *text)
{
	struct replacement r = {start, end, text};
	vec_push(v, r);
}

void edit_replacements(const struct edit *e, replacement_vec *out)
{
	const char *t = e->text ? e->text : "";
	if (e->op == EDIT_REPLACE) {
		replacement_add(out, e->start, e->end, xstrdup(t));
	} else if (e->wrap) {
		bool before = e->op == EDIT_INSERT_BEFORE;
		replacement_add(out, e->start, e->start, before ? xasprintf("{ %s ", t) : xstrdup("{ "));
		replacement_add(out, e->end, e->end, before ? xstrdup(" }") : xasprintf(" %s }", t));
	} else if (e->op == EDIT_INSERT_BEFORE) {
		replacement_add(out, e->start, e->start, xasprintf("%s\n%s", t, e->indent));
	} else {
		struct srcpos at = e->tail.line ? e->tail : e->end; /* after a trailing comment */
		replacement_add(out, at, at, xasprintf("\n%s%s", e->indent, t));
	}
}

void replacements_sort(replacement_vec *v)
{
	/* insertion sort: few edits, and a stable order for two insertions at one place */
	for (size_t i = 1; i < v->len; i++)
		for (size_t k = i; k > 0 && v->items[k - 1].start.offset > v->items[k].start.offset; k--) {
			struct replacement t = v->items[k];
			v->items[k] = v->items[k - 1];
			v->items[k - 1] = t;
		}
}

void replacements_release(replacement_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i].text);
	vec_release(v);
}

char *edit_text_apply(const struct finding *f, const char *src, size_t len, size_t *out_len)
{
	replacement_vec reps = VEC_INIT;
	struct buf b = BUF_INIT;
	size_t at = 0;
	bool ok = true;
	for (size_t k = 0; k < f->edits.len; k++)
		edit_replacements(&f->edits.items[k], &reps);
	replacements_sort(&reps);
	for (size_t i = 0; i < reps.len && ok; i++) {
		const struct replacement *r = &reps.items[i];
		ok = r->start.offset >= at && r->end.offset >= r->start.offset && r->end.offset <= len;
		if (!ok)
			break;
		buf_add(&b, src + at, r->start.offset - at);
		buf_puts(&b, r->text);
		at = r->end.offset;
	}
	replacements_release(&reps);
	if (!ok) {
		buf_release(&b);
		return NULL;
	}
	buf_add(&b, src + at, len - at);
	*out_len = b.len;
	return buf_detach(&b);
}
