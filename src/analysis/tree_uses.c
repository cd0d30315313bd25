/*
 * The uses of the followed names in one file (step 2 of tree.h): each file
 * naming an open name is read, parsed (whole or in slices, tree_slice.c)
 * and analysed with the contexts known so far, and every use classified:
 * a call with or without preemption off, a registration, an address taken,
 * a declaration, EXPORT_SYMBOL.
 */
#define _GNU_SOURCE /* memmem */
#include "analysis/tree_internal.h"

#include <stdlib.h>
#include <string.h>

#include "parse/source.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/overlay.h"

const TSLanguage *tree_sitter_c(void);

static void tref_release(struct tref *r)
{
	free(r->caller);
	free(r->via);
	free(r->why);
	for (size_t i = 0; i < r->nroots; i++)
		free(r->roots[i]);
	free(r->roots);
}

void tree_file_seen_clear(struct tfile *f)
{
	for (size_t i = 0; i < f->seen.len; i++)
		free(f->seen.items[i].name);
	f->seen.len = 0;
}

void tree_file_refs_clear(struct tfile *f)
{
	for (size_t i = 0; i < f->refs.len; i++)
		tref_release(&f->refs.items[i]);
	f->refs.len = 0;
}

/* The macro definition whose body holds N, or a null node. */
static TSNode macro_def_of(TSNode n)
{
	for (; !ts_node_is_null(n); n = ts_parent(n))
		if (ts_type_is(n, "preproc_def") || ts_type_is(n, "preproc_function_def"))
			return n;
	return ts_null();
}

/*
 * A use in the body of the macro DEF (of file text S): the macro's own
 * uses decide it, so the macro's name is followed in its stead
 * (tree_fixpoint.c). False when the use does not count: the macro is
 * compiled only without CONFIG_SMP, where the CPU number is always 0.
 */
static bool macro_use(TSNode def, const char *s, struct tref *r)
{
	if (ts_in_up_arm(s, def))
		return false;
	TSNode name = ts_field(def, "name");
	r->kind = USE_ADDRESS;
	r->verbatim = true;
	r->via = xstrndup(s + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name));
	r->why = xasprintf("named in the body of the macro %s", r->via);
	return true;
}

/* Is the identifier at OFF of S a member name: after `.` or `->` (blanks between)? */
static bool member_name_at(const char *s, uint32_t off)
{
	while (off > 0 && (s[off - 1] == ' ' || s[off - 1] == '\t'))
		off--;
	return off > 0 && (s[off - 1] == '.' || (off > 1 && s[off - 1] == '>' && s[off - 2] == '-'));
}

/*
 * R is the call CALL made in CALLER (of FA): with preemption off, or not,
 * and then the roots of CALLER the tree must decide. NAME (N bytes) is the
 * name called, or NULL for a call through a field.
 */
static void call_ref(const struct file_analysis *fa, const struct fn *caller, TSNode call, const char *name, size_t n,
		     struct tref *r)
{
	r->self = name && strcmp(caller->name, name) == 0 && strlen(name) == n;
	const char *sw = name ? api_context_switch(caller->name, name, n) : NULL;
	if (sw) {
		r->protected_call = true;
		free(r->why);
		r->why = xstrdup(sw);
		return;
	}
	struct buf why = BUF_INIT;
	const char *via;
	size_t vlen = ts_call_name(call, fa->src->parse_text, &via);
	if (name && vlen && (vlen != n || memcmp(via, name, vlen) != 0))
		buf_printf(&why, "as the okfn of %.*s(), run in its caller's context: ", (int)vlen, via);
	r->protected_call = flow_call_off(caller, fa->src, ts_node_start_byte(call), &why);
	free(r->why);
	r->why = buf_detach(&why);
	if (!r->protected_call) {
		name_vec roots = VEC_INIT;
		r->roots_ok = caller->ctx == CTX_PROCESS && context_roots_sleep(fa, caller, &roots, &r->roots_sleep);
		r->roots = xcalloc(roots.len ? roots.len : 1, sizeof *r->roots);
		for (size_t i = 0; i < roots.len; i++)
			r->roots[r->nroots++] = xstrdup(roots.items[i]);
		vec_release(&roots);
	}
}

/*
 * A use the grammar did not read as an identifier (or, for a followed
 * field, as a field name): in a macro body, or unread text.
 */
static void classify_unread(const struct file_analysis *fa, TSNode n, uint32_t off, bool member, struct tref *r,
			    struct tfile *out)
{
	TSNode def = macro_def_of(n);
	if (ts_node_is_null(def) && !ts_type_is(n, "ERROR") && !ts_node_has_error(n)) {
		tref_release(r);
		return; /* a comment, a string, a field or type of that name */
	}
	if (!member && member_name_at(fa->src->parse_text, off)) {
		tref_release(r);
		return; /* `ia64_mv.cpu_init` in a macro body: a field of that name */
	}
	if (!ts_node_is_null(def)) {
		if (macro_use(def, fa->src->parse_text, r))
			vec_push(&out->refs, *r);
		else
			tref_release(r);
		return;
	}
	r->kind = USE_ADDRESS;
	r->why = xstrdup("named in a macro body or in code the grammar could not read; the users "
			 "of that text are not followed");
	r->verbatim = true;
	vec_push(&out->refs, *r);
}

/* Is E (a field access, parentheses and `*` stripped) only tested: `if (ops->f)`, `ops->f && ...`, `!ops->f`? */
static bool field_tested(TSNode e, TSNode up, const char *s)
{
	if (ts_type_is(up, "if_statement") || ts_type_is(up, "while_statement") || ts_type_is(up, "do_statement"))
		return ts_node_eq(ts_field(up, "condition"), e);
	if (ts_type_is(up, "conditional_expression"))
		return ts_node_eq(ts_field(up, "condition"), e);
	if (ts_type_is(up, "unary_expression"))
		return ts_text_is(ts_field(up, "operator"), s, "!");
	if (!ts_type_is(up, "binary_expression"))
		return false;
	TSNode op = ts_field(up, "operator");
	return ts_text_is(op, s, "==") || ts_text_is(op, s, "!=") || ts_text_is(op, s, "&&") || ts_text_is(op, s, "||");
}

/*
 * A use of the followed field at OFF (node N) of FA: a call through it
 * (`ops->f(x)`, `(*ops->f)(x)`) is weighed like a call of a function; a
 * store, a test, a declaration and another name of that spelling are no
 * use; any other read lets the pointer go where its calls are not seen.
 */
static void member_classify(const struct file_analysis *fa, TSNode n, uint32_t off, struct tref *r,
			    struct tfile *out)
{
	const char *s = fa->src->parse_text;
	if (!ts_type_is(n, "field_identifier")) {
		if (!ts_type_is(n, "identifier"))
			classify_unread(fa, n, off, true, r, out); /* a macro body: its uses decide */
		return;
	}
	TSNode fe = ts_parent(n);
	if (!ts_type_is(fe, "field_expression") || !ts_node_eq(ts_field(fe, "field"), n))
		return; /* `.f = fn` in an initialiser, the field's declaration */
	TSNode e = fe, up = ts_parent(fe);
	while (ts_type_is(up, "parenthesized_expression") ||
	       (ts_type_is(up, "pointer_expression") && ts_text_is(ts_field(up, "operator"), s, "*")))
		e = up, up = ts_parent(up);
	r->kind = USE_CALL;
	if (ts_type_is(up, "call_expression") && ts_node_eq(ts_field(up, "function"), e)) {
		const struct fn *caller = analysis_fn_at(fa, off);
		if (!caller) {
			r->kind = USE_ADDRESS;
			r->why = xstrdup("called outside a function");
		} else {
			r->caller = xstrdup(caller->name);
			call_ref(fa, caller, up, NULL, 0, r);
		}
		vec_push(&out->refs, *r);
		return;
	}
	if ((ts_type_is(up, "assignment_expression") && ts_node_eq(ts_field(up, "left"), e) &&
	     ts_text_is(ts_field(up, "operator"), s, "=")) ||
	    field_tested(e, up, s))
		return;
	r->kind = USE_ADDRESS;
	r->why = xstrdup("read other than to call it or test it: the pointer may be called where it is not seen");
	vec_push(&out->refs, *r);
}

/* Is the identifier N (of text S) the left side of `=`, or only tested? */
static bool ident_stored_or_tested(TSNode n, const char *s)
{
	TSNode e = n, up = ts_parent(n);
	while (ts_type_is(up, "parenthesized_expression"))
		e = up, up = ts_parent(up);
	return (ts_type_is(up, "assignment_expression") && ts_node_eq(ts_field(up, "left"), e) &&
		ts_text_is(ts_field(up, "operator"), s, "=")) ||
	       field_tested(e, up, s);
}

/*
 * The address of the name N (of text S) stored in a struct field (`.read =
 * name`, `ops->read = name`) or a pointer (`p = name;`): the calls through
 * that field or pointer decide, followed in its stead (R->via).
 */
static void via_store(TSNode n, const char *s, struct tref *r)
{
	char *fld = context_stored_field(n, s);
	char *ptr = fld ? NULL : context_stored_pointer(n, s);
	if (!fld && !ptr)
		return;
	free(r->why);
	r->why = fld ? xasprintf("stored in the field %s", fld) : xasprintf("stored in the pointer %s", ptr);
	r->via = fld ? xasprintf(".%s", fld) : xstrdup(ptr);
	r->via_pointer = ptr != NULL;
	r->verbatim = true;
	free(fld);
	free(ptr);
}

static void classify_at(const struct tree_context *t, const struct file_analysis *fa, uint32_t name,
			uint32_t off, struct tfile *out)
{
	const struct tname *x = &t->names.items[name];
	TSNode root = ts_tree_root_node(fa->tree);
	TSNode n = ts_node_descendant_for_byte_range(root, off, off + (uint32_t)x->len);
	/* compiled only without CONFIG_SMP (2.6.9 init/main.c's UP smp_init()): no use, as for macros */
	if (ts_in_up_arm(fa->src->parse_text, n))
		return;
	struct tref r = {0};
	r.name = name;
	r.line = source_pos(fa->src, off).line;
	if (x->member) {
		member_classify(fa, n, off, &r, out);
		return;
	}
	bool ident = ts_type_is(n, "identifier") && ts_node_start_byte(n) == off &&
		     ts_node_end_byte(n) == off + x->len;
	if (!ident) {
		classify_unread(fa, n, off, false, &r, out);
		return;
	}
	TSNode up = ts_parent(n);
	if ((ts_type_is(up, "preproc_def") || ts_type_is(up, "preproc_function_def")) &&
	    ts_node_eq(ts_field(up, "name"), n))
		return; /* a macro of the same name (`#define smp_prepare_boot_cpu() do {} while (0)`
			 * for other configurations): its uses call it, not the function */
	int own = analysis_fn_index(fa, x->name, x->len);
	if (own >= 0 && !analysis_fn_is_shared(fa, &fa->fns.items[own]))
		r.other = true;
	struct fn_use u;
	context_classify_use(fa, n, &u);
	r.kind = u.kind;
	r.ctx = u.ctx;
	r.why = u.reason;
	if (u.unread) {
		free(r.why);
		r.why = xstrdup("named in a macro body or in code the grammar could not read; the users of "
				"that text are not followed");
		r.verbatim = true;
	} else if (u.kind == USE_ADDRESS) {
		if (ident_stored_or_tested(n, fa->src->parse_text)) {
			tref_release(&r);
			return; /* `name = fn;`, `if (name)`: a followed pointer is stored or tested, not called */
		}
		via_store(n, fa->src->parse_text, &r);
	}
	const struct fn *caller = analysis_fn_at(fa, off);
	if (caller)
		r.caller = xstrdup(caller->name);
	if (u.kind == USE_CALL && !caller)
		r.kind = USE_ADDRESS; /* a call outside a function: in an initialiser */
	else if (u.kind == USE_CALL)
		call_ref(fa, caller, u.call, x->name, x->len, &r);
	vec_push(&out->refs, r);
}

/* F's names from F->from on are in a file that cannot be read: their uses there are unknown. */
static void refs_unreadable(struct tfile *f)
{
	for (size_t k = f->from; k < f->names.len; k++) {
		struct tref r = {0};
		r.name = f->names.items[k];
		r.kind = USE_ADDRESS;
		r.why = xstrdup("named in a file that could not be read");
		r.verbatim = true;
		vec_push(&f->refs, r);
	}
}

static bool path_is_assembly(const char *path)
{
	size_t pl = strlen(path);
	return pl > 2 && path[pl - 2] == '.' && (path[pl - 1] == 'S' || path[pl - 1] == 's');
}

/* The line of TEXT holding P: its start and end. */
static const char *line_start(const char *text, const char *p)
{
	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

/*
 * Is the assembler macro whose name is the first word of LINE an interrupt
 * entry: a `.macro NAME ...` of TEXT whose body, up to `.endm`, returns
 * through ret_from_intr (2.6 x86_64 entry.S: `.macro apicinterrupt
 * num,func ... interrupt \func; jmp ret_from_intr`)?
 */
static bool interrupt_macro_line(const char *text, size_t len, const char *line, const char *eol)
{
	const char *w = line;
	while (w < eol && (*w == ' ' || *w == '\t'))
		w++;
	const char *we = w;
	while (we < eol && is_ident_char(*we))
		we++;
	if (we == w || we >= eol || (*we != ' ' && *we != '\t'))
		return false;
	size_t n = (size_t)(we - w);
	const char *end = text + len;
	for (const char *m = memmem(text, len, ".macro", 6); m; m = memmem(m + 6, (size_t)(end - m - 6), ".macro", 6)) {
		const char *q = m + 6;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(end - q) <= n || memcmp(q, w, n) != 0 || is_ident_char(q[n]))
			continue;
		const char *endm = memmem(q, (size_t)(end - q), ".endm", 5);
		return endm && memmem(q, (size_t)(endm - q), "ret_from_intr", 13) != NULL;
	}
	return false;
}

/*
 * Every mention of NAME in assembly TEXT is an argument of an interrupt
 * entry macro (interrupt_macro_line()): the first such line, else NULL.
 */
static const char *asm_interrupt_entry(const char *text, size_t len, const char *name, unsigned *line)
{
	size_t n = strlen(name);
	const char *end = text + len, *first = NULL;
	for (const char *p = memmem(text, len, name, n); p; p = memmem(p + n, (size_t)(end - p - n), name, n)) {
		if ((p > text && is_ident_char(p[-1])) || (p + n < end && is_ident_char(p[n])))
			continue;
		const char *ls = line_start(text, p), *eol = memchr(p, '\n', (size_t)(end - p));
		if (!interrupt_macro_line(text, len, ls, eol ? eol : end) || ls == p)
			return NULL;
		if (!first) {
			first = ls;
			*line = 1;
			for (const char *c = text; c < ls; c++)
				*line += *c == '\n';
		}
	}
	return first;
}

/* Assembly (TEXT, LEN bytes): any mention outside a comment may be a call the C analysis cannot see. */
static void refs_in_assembly(const struct tree_context *t, struct tfile *f, char *text, size_t len)
{
	asm_blank_comments(text, len);
	for (size_t k = f->from; k < f->names.len; k++) {
		const char *name = t->names.items[f->names.items[k]].name;
		if (!text_has_word(text, len, name))
			continue;
		struct tref r = {0};
		r.name = f->names.items[k];
		const char *entry = asm_interrupt_entry(text, len, name, &r.line);
		if (entry) {
			const char *eol = memchr(entry, '\n', (size_t)(text + len - entry));
			const char *w = entry;
			while (*w == ' ' || *w == '\t')
				w++;
			r.kind = USE_REGISTERED;
			r.ctx = CTX_HARDIRQ;
			r.why = xasprintf("interrupt entry: `%.*s` (line %u), an assembler macro that returns through "
					  "ret_from_intr", (int)((eol ? eol : text + len) - w), w, r.line);
		} else if ((r.why = asm_irqs_off_call(f->path, text, len, name, &r.line)) != NULL) {
			r.kind = USE_REGISTERED;
			r.ctx = CTX_CALLERS;
		} else {
			r.kind = USE_ADDRESS;
			r.why = xstrdup("named in assembly code, which may call it in any context");
			r.verbatim = true;
			r.asm_own = asm_defines_routine(text, len, name);
		}
		vec_push(&f->refs, r);
	}
}

/* Records the shared definitions the analysis FA of F read (a whole analysis starts afresh). */
static void defs_record(struct tfile *f, const struct file_analysis *fa)
{
	if (f->from == 0) {
		tree_file_seen_clear(f);
		f->defines.len = 0;
		f->sleeping.len = 0;
	}
	for (size_t d = 0; d < fa->fns.len; d++) {
		const struct fn *fn = &fa->fns.items[d];
		/* the first definition of a name answers (#if arms), as analysis_fn_index() does */
		if (analysis_fn_index(fa, fn->name, strlen(fn->name)) == (int)d && analysis_fn_is_shared(fa, fn)) {
			struct tdef td = {xstrdup(fn->name), fn->sleeps != SLEEP_NO};
			vec_push(&f->seen, td);
		}
	}
}

/* Classifies each use of F's open names (from F->from on) in S, LEN bytes, analysed as FA. */
static void refs_classify(const struct tree_context *t, struct tfile *f, const struct file_analysis *fa,
			  const char *s, size_t len)
{
	const char *end = s + len;
	for (size_t k = f->from; k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		if (x->state != T_OPEN)
			continue;
		for (const char *p = memmem(s, len, x->name, x->len); p;
		     p = memmem(p + 1, (size_t)(end - p - 1), x->name, x->len)) {
			size_t off = (size_t)(p - s);
			if ((off > 0 && is_ident_char(s[off - 1])) ||
			    (off + x->len < len && is_ident_char(s[off + x->len])))
				continue;
			classify_at(t, fa, f->names.items[k], (uint32_t)off, f);
			if ((size_t)(end - p) <= 1)
				break;
		}
	}
}

/* Parses F's TEXT (LEN bytes, taken over), whole or in slices, analyses it and classifies its uses. */
static void parse_and_classify(const struct tree_context *t, struct tfile *f, char *text, size_t len)
{
	f->parsed = true;
	bool whole_defs = f->force_parse;
	f->force_parse = false;
	struct source src;
	source_init(&src, f->path, text, len);
	TSParser *parser = ts_parser_new();
	ts_parser_set_language(parser, tree_sitter_c());
	uint32_t nr;
	TSRange *ranges = tree_slice_ranges(t, f, src.parse_text, len, whole_defs, &nr);
	if (nr && !ts_parser_set_included_ranges(parser, ranges, nr))
		nr = 0;
	free(ranges);
	f->sliced = nr > 0;
	TSTree *tree = ts_parser_parse_string(parser, NULL, src.parse_text, (uint32_t)len);
	if (tree) {
		struct file_analysis fa;
		analysis_run(&fa, &src, tree, t);
		defs_record(f, &fa);
		refs_classify(t, f, &fa, src.parse_text, len);
		analysis_release(&fa);
		ts_parent_forget(tree);
		ts_tree_delete(tree);
	}
	ts_parser_delete(parser);
	source_release(&src);
}

/* analyse_one() for F's names from F->from on. */
static void analyse_names(const struct tree_context *t, struct tfile *f)
{
	char *text = NULL;
	size_t len = 0;
	f->parsed = f->sliced = false;
	if (overlay_read(f->path, &text, &len) < 0 || memchr(text, '\0', len)) {
		refs_unreadable(f);
	} else if (path_is_assembly(f->path)) {
		refs_in_assembly(t, f, text, len);
	} else if (f->force_parse || tree_needs_parse(t, f, text, len)) {
		parse_and_classify(t, f, text, len);
		text = NULL; /* the source took it */
	} /* else only declarations: no use to classify */
	free(text);
}

struct analyse_job {
	const struct tree_context *t;
	size_t *which;  /* file indices to analyse */
};

static void analyse_fresh(const struct tree_context *t, struct tfile *f);

static void analyse_one(size_t i, void *ctx)
{
	struct analyse_job *j = ctx;
	const struct tree_context *t = j->t;
	struct tfile *f = &t->files[j->which[i]];
	if (interrupted())
		return;
	struct memo_call mc = {BUF_INIT, VEC_INIT, 0};
	if (t->memo && tree_memo_replay(t, f, &mc)) { /* an earlier run analysed it so */
		memo_call_release(&mc);
		return;
	}
	if (t->memo)
		tree_fields_log(&mc.asked);
	analyse_fresh(t, f);
	if (t->memo) {
		tree_fields_log(NULL);
		tree_memo_keep(t, f, &mc);
		memo_call_release(&mc);
	}
}

/* analyse_one() without the memo. */
static void analyse_fresh(const struct tree_context *t, struct tfile *f)
{
	/* only new names since the last analysis: the uses classified then stand */
	bool whole = f->from == 0;
	if (whole)
		tree_file_refs_clear(f);
	bool was_parsed = f->parsed, was_sliced = f->sliced;
	analyse_names(t, f);
	f->parsed_now = f->parsed;
	if (!whole) {
		f->parsed = f->parsed && was_parsed;
		f->sliced = f->sliced || was_sliced;
	}
	/* a definition read by this parse or an earlier one (a definition's name alone
	 * is no use: a new name it holds is classified without a parse); a whole
	 * analysis without a parse keeps what the last parse found */
	for (size_t k = f->from; (f->parsed || !whole) && k < f->names.len; k++) {
		const struct tname *x = &t->names.items[f->names.items[k]];
		for (size_t d = 0; d < f->seen.len; d++)
			if (strlen(f->seen.items[d].name) == x->len && memcmp(f->seen.items[d].name, x->name, x->len) == 0) {
				vec_push(&f->defines, f->names.items[k]);
				if (f->seen.items[d].sleeps)
					vec_push(&f->sleeping, f->names.items[k]);
				break;
			}
	}
	f->from = f->names.len;
}

/*
 * Analyses, for each open name, up to K of the dirty files naming it
 * (sources before headers, which mostly only declare): a name fails on its
 * first call with preemption on, so the files after it need no parse.
 * Returns the number of files analysed.
 */
size_t tree_analyse_some(struct tree_context *t, size_t k, int jobs)
{
	VEC(size_t) which = VEC_INIT;
	uint8_t *picked = xcalloc(t->nfiles ? t->nfiles : 1, 1);
	for (int pass = 0; pass < 2; pass++)
		for (size_t n = 0; n < t->names.len; n++) {
			const struct tname *x = &t->names.items[n];
			/* a name waiting for the roots of a call made with preemption on reads no
			 * more files: most roots are preemptible, and then so is the name */
			if (x->state != T_OPEN || x->waiting)
				continue;
			size_t taken = 0;
			for (size_t i = 0; i < x->files.len && taken < k; i++) {
				uint32_t fi = x->files.items[i];
				size_t pl = strlen(t->files[fi].path);
				bool header = pl >= 2 && strcmp(t->files[fi].path + pl - 2, ".h") == 0;
				if (!t->files[fi].dirty || header != (pass == 1))
					continue;
				taken++;
				if (!picked[fi]) {
					picked[fi] = 1;
					vec_push(&which, (size_t)fi);
				}
			}
		}
	free(picked);
	for (size_t i = 0; i < which.len; i++)
		t->files[which.items[i]].dirty = false;
	struct analyse_job j = {t, which.items};
	if (t->memo && which.len)
		tree_memo_round(t);
	parallel_for(which.len, jobs, analyse_one, &j);
	for (size_t i = 0; i < which.len; i++)
		t->stats.files_analysed += t->files[which.items[i]].parsed_now;
	size_t done = which.len;
	vec_release(&which);
	return done;
}
