/* Shared helpers of the checkers: syntax, suppression, findings and edits. */
#define _GNU_SOURCE /* memmem */
#include "rules/ctx.h"
#include "parse/ctext.h"

#include <stdlib.h>
#include <string.h>

/* The parse text of N; "" for a null node (a field error recovery left out). */
char *node_text(const struct ctx *c, TSNode n)
{
	if (ts_node_is_null(n))
		return xstrdup("");
	return xstrndup(c->text + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

char *orig_text(const struct ctx *c, TSNode n)
{
	if (ts_node_is_null(n))
		return xstrdup("");
	return xstrndup(c->src->text + ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

unsigned line_of(const struct ctx *c, TSNode n)
{
	return source_pos(c->src, ts_node_start_byte(n)).line;
}

bool name_eq(const char *s, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(s, want, len) == 0;
}

bool call_is(const struct ctx *c, TSNode call, const char *name)
{
	const char *s;
	size_t len;
	if (!ts_type_is(call, "call_expression"))
		return false;
	len = ts_call_name(call, c->text, &s);
	return len && name_eq(s, len, name);
}

/* ---- suppression, dead code, version guards ----------------------------- */

static bool suppressed(const struct ctx *c, unsigned line, enum rule_id rule)
{
	for (unsigned l = line > 1 ? line - 1 : line; l <= line; l++) {
		if (l > c->src->line_starts.len)
			break;
		size_t s = c->src->line_starts.items[l - 1];
		size_t e = l < c->src->line_starts.len ? c->src->line_starts.items[l] : c->src->len;
		const char *m = memmem(c->src->text + s, e - s, "preemptify: ignore", 18);
		if (!m)
			continue;
		const char *p = m + 18, *end = c->src->text + e;
		bool any = false;
		while (p < end && *p != '*' && *p != '\n') {
			while (p < end && (*p == ' ' || *p == ',' || *p == '\t'))
				p++;
			const char *w = p;
			while (p < end && is_ident_char(*p))
				p++;
			if (p == w)
				break;
			any = true;
			char *word = xstrndup(w, (size_t)(p - w));
			int r = rule_parse(word);
			free(word);
			if (r == (int)rule)
				return true;
		}
		if (!any)
			return true;
	}
	return false;
}

/* The preprocessor conditional owning N's arm: condition text, and whether N is in the #if arm. */
bool in_dead_code(const struct ctx *c, TSNode n)
{
	return c->may_if0 && ts_in_if0_arm(c->text, n);
}

/* Skips blanks and backslash-newlines from P (before END). */
static const char *skip_blanks(const char *p, const char *end)
{
	for (;;) {
		size_t k = p < end ? ctext_continuation(p, (size_t)(end - p), 0) : 0;
		if (p < end && (*p == ' ' || *p == '\t'))
			p++;
		else if (k)
			p += k;
		else
			return p;
	}
}

bool text_may_have_if0(const char *text, size_t len)
{
	const char *end = text + len;
	for (const char *p = memchr(text, '#', len); p; p = p + 1 < end ? memchr(p + 1, '#', (size_t)(end - p - 1)) : NULL) {
		const char *q = skip_blanks(p + 1, end);
		size_t kw = (size_t)(end - q) >= 4 && memcmp(q, "elif", 4) == 0 ? 4
			    : (size_t)(end - q) >= 2 && memcmp(q, "if", 2) == 0 ? 2 : 0;
		if (!kw)
			continue;
		q = skip_blanks(q + kw, end);
		if (q < end && *q == '/')
			return true; /* a comment before the condition: not worth reading further */
		if (q < end && *q == '0' && (q + 1 == end || !is_ident_char(q[1])))
			return true;
	}
	return false;
}

void ctx_prescan(struct ctx *c)
{
	c->may_if0 = text_may_have_if0(c->text, c->src->len);
}

bool version_guarded(const struct ctx *c, TSNode n)
{
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); p = ts_parent(p)) {
		TSNode cond = ts_field(p, "condition");
		if ((ts_type_is(p, "preproc_if") || ts_type_is(p, "preproc_elif")) && !ts_node_is_null(cond)) {
			uint32_t s = ts_node_start_byte(cond), e = ts_node_end_byte(cond);
			if (memmem(c->text + s, e - s, "LINUX_VERSION_CODE", 18))
				return true;
		}
	}
	return false;
}

/* ---- findings ------------------------------------------------------------ */

/*
 * A preemption rule's site in an architecture the tree builds without
 * CONFIG_PREEMPT: never compiled preemptible, left alone (with --verbose,
 * a protected site says why).
 */
static bool never_preempted(struct ctx *c, enum rule_id rule, size_t at, const struct fn *f)
{
	size_t len;
	const char *arch = rule_has(rule, PROP_PREEMPT) ? api_arch_without_preempt(c->src->path, &len) : NULL;
	if (!arch)
		return false;
	if (c->opts->verbose) {
		struct finding fd;
		memset(&fd, 0, sizeof fd);
		fd.rule = rule;
		fd.file = xstrdup(c->src->path);
		fd.pos = fd.end = source_pos(c->src, at);
		fd.function = f ? xstrdup(f->name) : NULL;
		fd.message = xasprintf("%s: left alone (never compiled preemptible)", rule_summary(rule));
		fd.evidence = xasprintf("the tree's arch/%.*s/Kconfig has no CONFIG_PREEMPT: this code never runs "
					"preemptible", (int)len, arch);
		fd.severity = SEV_NOTE;
		fd.confidence = CONF_HIGH;
		fd.fix = FIX_NONE;
		fd.protected_site = true;
		vec_push(&c->out->findings, fd);
	}
	return true;
}

struct finding *add_finding(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
				   enum severity sev, enum confidence conf, enum fix_kind fix,
				   char *message, char *evidence)
{
	return add_finding_at(c, rule, ts_node_start_byte(at), ts_node_end_byte(at), f, sev, conf, fix, message,
			      evidence);
}

struct finding *add_finding_at(struct ctx *c, enum rule_id rule, size_t at, size_t end, const struct fn *f,
			       enum severity sev, enum confidence conf, enum fix_kind fix,
			       char *message, char *evidence)
{
	unsigned line = source_pos(c->src, at).line;
	if (!(c->opts->rules & (1u << rule)) || suppressed(c, line, rule) || never_preempted(c, rule, at, f)) {
		free(message);
		free(evidence);
		return NULL;
	}
	struct finding fd;
	memset(&fd, 0, sizeof fd);
	fd.rule = rule;
	fd.file = xstrdup(c->src->path);
	fd.pos = source_pos(c->src, at);
	fd.end = source_pos(c->src, end);
	fd.function = f ? xstrdup(f->name) : NULL;
	fd.message = message;
	fd.evidence = evidence;
	fd.severity = sev;
	fd.confidence = conf;
	fd.fix = fix;
	vec_push(&c->out->findings, fd);
	return &c->out->findings.items[c->out->findings.len - 1];
}

bool rule_reported_at(const struct ctx *c, enum rule_id rule, size_t at)
{
	return (c->opts->rules & (1u << rule)) && !suppressed(c, source_pos(c->src, at).line, rule);
}

/* Records a considered-and-protected site (kept only with --verbose). */
void add_protected(struct ctx *c, enum rule_id rule, TSNode at, const struct fn *f,
			  char *message, char *evidence)
{
	if (!c->opts->verbose) {
		free(message);
		free(evidence);
		return;
	}
	struct finding *fd = add_finding(c, rule, at, f, SEV_NOTE, CONF_HIGH, FIX_NONE, message, evidence);
	if (fd)
		fd->protected_site = true;
}

/* Is statement N the body of an if, else or loop without braces around it? */
static bool is_lone_body(TSNode n)
{
	TSNode p = ts_parent(n);
	return ts_type_is(p, "if_statement") || ts_type_is(p, "else_clause") ||
	       ts_type_is(p, "while_statement") || ts_type_is(p, "for_statement") ||
	       ts_type_is(p, "do_statement");
}

void add_edit(const struct ctx *c, struct finding *fd, enum edit_op op, TSNode anchor, const char *text)
{
	if (!fd)
		return;
	/* edits made in file order (an array's uses: thousands in one file) cannot repeat one */
	size_t n = fd->edits.len, at = ts_node_start_byte(anchor);
	bool ordered = fd->edits_ordered == n && (!n || fd->edits.items[n - 1].start.offset < at);
	for (size_t i = 0; i < n && !ordered; i++) {
		const struct edit *o = &fd->edits.items[i];
		if (o->op == op && o->start.offset == at && strcmp(o->text, text) == 0)
			return; /* the same change, planned twice */
	}
	fd->edits_ordered = ordered ? n + 1 : SIZE_MAX;
	struct edit e;
	e.op = op;
	e.start = source_pos(c->src, ts_node_start_byte(anchor));
	e.end = source_pos(c->src, ts_node_end_byte(anchor));
	e.node = ts_node_type(anchor);
	e.text = xstrdup(text);
	e.wrap = op != EDIT_REPLACE && is_lone_body(anchor);
	e.in_define = false;
	e.by_text = false;
	size_t ls = c->src->line_starts.items[e.start.line - 1], k = 0;
	while (k + 1 < sizeof e.indent && (c->src->text[ls + k] == ' ' || c->src->text[ls + k] == '\t'))
		e.indent[k] = c->src->text[ls + k], k++;
	e.indent[k] = '\0';
	memset(&e.tail, 0, sizeof e.tail);
	if (op == EDIT_INSERT_AFTER) {
		const char *t = c->src->text, *end = t + c->src->len;
		const char *q = t + ts_node_end_byte(anchor);
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		size_t left = (size_t)(end - q);
		if (q < end && ctext_at(q, left, 0) == CTEXT_BLOCK_COMMENT) {
			/* a comment closing on this line */
			const char *nl = memchr(q, '\n', left);
			bool open;
			size_t close = ctext_comment_close(q, nl ? (size_t)(nl - q) : left, 2, &open);
			q = open ? q : q + close;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (q == end || *q == '\n')
				e.tail = source_pos(c->src, (size_t)(q - t));
		} else if (q < end && ctext_at(q, left, 0) == CTEXT_LINE_COMMENT) {
			const char *nl = memchr(q, '\n', (size_t)(end - q));
			e.tail = source_pos(c->src, nl ? (size_t)(nl - t) : c->src->len);
		}
	}
	vec_push(&fd->edits, e);
}

void add_span_edit(const struct ctx *c, struct finding *fd, size_t start, size_t end, const char *node,
		   const char *text)
{
	add_define_edit(c, fd, start, end, node, text);
	if (fd)
		fd->edits.items[fd->edits.len - 1].in_define = false;
}

void add_define_edit(const struct ctx *c, struct finding *fd, size_t start, size_t end, const char *node,
		     const char *text)
{
	if (!fd)
		return;
	struct edit e;
	memset(&e, 0, sizeof e);
	e.op = EDIT_REPLACE;
	e.start = source_pos(c->src, start);
	e.end = source_pos(c->src, end);
	e.node = node;
	e.text = xstrdup(text);
	e.in_define = true;
	vec_push(&fd->edits, e);
}

/* Sets FD's fix note (taking NOTE), replacing any earlier one. */
void set_note(struct finding *fd, char *note)
{
	if (!fd) {
		free(note);
		return;
	}
	free(fd->fix_note);
	fd->fix_note = note;
}

void unfixable(struct finding *fd, char *note)
{
	if (!fd) {
		free(note);
		return;
	}
	finding_unfixable(fd, note);
}

char *explain_state(const struct fn *f, const struct point_state *ps)
{
	struct buf b = BUF_INIT;
	point_explain(f, ps, &b);
	return buf_detach(&b);
}

/* ---- statement structure --------------------------------------------------- */

static bool is_block(TSNode n)
{
	return ts_type_is(n, "compound_statement") || ts_type_is(n, "case_statement") ||
	       ts_type_is(n, "preproc_if") || ts_type_is(n, "preproc_ifdef") ||
	       ts_type_is(n, "preproc_else") || ts_type_is(n, "preproc_elif") ||
	       ts_type_is(n, "labeled_statement");
}

/* The statement containing N that sits directly in a block. */
TSNode block_stmt(TSNode n)
{
	TSNode child = n;
	for (TSNode p = ts_parent(n); !ts_node_is_null(p); child = p, p = ts_parent(p)) {
		if (is_block(p) && !ts_type_is(child, "comment") &&
		    !ts_node_eq(child, ts_field(p, "value")) && !ts_node_eq(child, ts_field(p, "condition")) &&
		    !ts_node_eq(child, ts_field(p, "label")))
			return child;
		if (ts_type_is(p, "function_definition"))
			break;
	}
	return ts_null();
}

bool node_within(TSNode n, TSNode outer)
{
	return ts_node_start_byte(outer) <= ts_node_start_byte(n) &&
	       ts_node_end_byte(n) <= ts_node_end_byte(outer);
}

struct count_reads {
	const struct ctx *c;
	unsigned n;
};

static bool count_reads_visit(TSNode n, void *ctx)
{
	struct count_reads *cr = ctx;
	if (call_is(cr->c, n, "smp_processor_id"))
		cr->n++;
	return true;
}

unsigned count_cpu_reads(const struct ctx *c, TSNode n)
{
	struct count_reads cr = {c, 0};
	ts_walk(n, count_reads_visit, &cr);
	return cr.n;
}

enum sleep_kind call_may_sleep(const struct ctx *c, TSNode call, enum sleep_kind at_least,
			       struct buf *why, const struct fn **via)
{
	if (via)
		*via = NULL;
	/* the file's own definition first (s390's request_irq()); the built-in list for the rest */
	const char *name;
	size_t len = ts_call_name(call, c->text, &name);
	int idx = len ? analysis_fn_index(c->fa, name, len) : -1;
	if (idx < 0) {
		enum sleep_kind k = api_may_sleep(call, c->text, c->src->path, why);
		return k >= at_least ? k : SLEEP_NO;
	}
	enum sleep_kind k = sleep_call_with_args(c->fa, call, &c->fa->fns.items[idx]);
	if (k < at_least)
		return SLEEP_NO;
	if (why)
		buf_clear(why);
	if (via)
		*via = &c->fa->fns.items[idx];
	return k;
}

/* Climbs from N through parentheses and casts. */
TSNode up(TSNode n, TSNode *child)
{
	TSNode p = ts_parent(n);
	while (ts_type_is(p, "parenthesized_expression") || ts_type_is(p, "cast_expression")) {
		n = p;
		p = ts_parent(p);
	}
	if (child)
		*child = n;
	return p;
}

/* The statement after S in its block (skipping comments), or a null node. */
TSNode next_stmt(TSNode s)
{
	TSNode n = ts_node_next_named_sibling(s);
	while (ts_type_is(n, "comment"))
		n = ts_node_next_named_sibling(n);
	return n;
}

struct name_find {
	const struct ctx *c;
	const char *name;
	bool found;
};

static bool name_visit(TSNode n, void *ctx)
{
	struct name_find *in = ctx;
	if (!in->found && (ts_type_is(n, "identifier") || ts_type_is(n, "type_identifier")) &&
	    ts_text_is(n, in->c->text, in->name))
		in->found = true;
	return !in->found;
}

const char *fresh_local_name(const struct ctx *c, const struct fn *f, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct name_find in = {c, names[i], false};
		ts_walk(f->def, name_visit, &in);
		for (size_t k = 0; k < c->src->defs.len && !in.found; k++) {
			const char *dn = c->src->defs.items[k].name, *body = c->src->defs.items[k].body;
			in.found = text_has_word(dn, strlen(dn), names[i]) ||
				   (body && text_has_word(body, strlen(body), names[i]));
		}
		if (!in.found)
			return names[i];
	}
	return NULL;
}
