/*
 * The second pass with the tree's index (scan_with_tree()): the header
 * macros of files not scanned, the tree's contexts for the functions the
 * first pass wants decided, and the per-CPU arrays shared across files,
 * judged over every file naming them; the files whose verdicts change are
 * scanned again and their results replaced.
 */
#define _GNU_SOURCE /* memmem */
#include "pipeline/scan.h"
#include "pipeline/scan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "parse/source.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/overlay.h"

typedef VEC(char *) char_vec;

static int cstr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* PATHS (N of them) sorted, for bsearch() with cstr_cmp (owned; the strings are PATHS'). */
static char **sorted_copy(char *const *paths, size_t n)
{
	char **sorted = xmalloc((n ? n : 1) * sizeof *sorted);
	if (n)
		memcpy(sorted, paths, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cstr_cmp);
	return sorted;
}

/*
 * Keeps OUT's findings and diagnostics whose file is among PATHS (N of them)
 * when LISTED, or is not among them when !LISTED.  With --context-root, a
 * file of the wider tree is read for its context, never reported or
 * rewritten (a shared array it names is refused instead); a file scanned
 * again with the index drops its first findings. With INDEX (NI files),
 * a diagnostic of a file the index does not hold is kept too: a PATH the
 * walk could not read is the user's, whatever the tree.
 */
static void filter_files(struct scan_result *out, char *const *paths, size_t n, bool listed,
			 char *const *index, size_t ni)
{
	char **sorted = sorted_copy(paths, n), **inx = index ? sorted_copy(index, ni) : NULL;
	bool *kf = xcalloc(out->findings.len + 1, sizeof *kf), *kd = xcalloc(out->diagnostics.len + 1, sizeof *kd);
	for (size_t i = 0; i < out->findings.len; i++)
		kf[i] = (bsearch(&out->findings.items[i].file, sorted, n, sizeof *sorted, cstr_cmp) != NULL) == listed;
	for (size_t i = 0; i < out->diagnostics.len; i++) {
		const char *f = out->diagnostics.items[i].file;
		kd[i] = (bsearch(&f, sorted, n, sizeof *sorted, cstr_cmp) != NULL) == listed ||
			(inx && !bsearch(&f, inx, ni, sizeof *inx, cstr_cmp));
	}
	scan_result_keep(out, kf, kd);
	free(kf);
	free(kd);
	free(sorted);
	free(inx);
}

/*
 * The findings the tree leaves as they were, in files not scanned again:
 * their evidence gains what a scan with the index would say (flow.c's
 * point_explain(): the use that keeps the function preemptible).
 */
static void note_preemptible(struct scan_result *out, char *const *again, size_t n)
{
	static const char tail[] = "preemption enabled on every path from entry";
	for (size_t i = 0; i < out->findings.len; i++) {
		struct finding *f = &out->findings.items[i];
		enum fn_context ctx;
		const char *why;
		if (!f->function || !f->evidence || f->protected_site)
			continue;
		size_t el = strlen(f->evidence), tl = sizeof tail - 1;
		if (el < tl || strcmp(f->evidence + el - tl, tail) != 0)
			continue;
		bool rescanned = false;
		for (size_t k = 0; k < n && !rescanned; k++)
			rescanned = strcmp(again[k], f->file) == 0;
		if (rescanned || !tree_context_lookup(out->tree, f->function, strlen(f->function), f->file, &ctx, &why) ||
		    ctx != CTX_PROCESS || !why)
			continue;
		char *e = xasprintf("%s; %s", f->evidence, why);
		free(f->evidence);
		f->evidence = e;
	}
}

/*
 * Appends to AGAIN the files of SCANNED that use one of OUT's header
 * macros (without defining the name themselves: a file's own #define
 * wins). IDS, when set, are SCANNED's identifiers (aligned); else each
 * file is read.
 */
static void macro_users(const struct scan_result *out, char *const *scanned, size_t nscanned,
			const struct tree_ids *ids, char_vec *again)
{
	for (size_t i = 0; i < nscanned; i++) {
		struct tree_ids own = {NULL, 0};
		const struct tree_ids *fi = ids && ids[i].ids ? &ids[i] : NULL;
		if (!fi) {
			char *text;
			size_t len;
			if (overlay_read(scanned[i], &text, &len) < 0)
				continue;
			tree_ids_of(text, len, &own);
			free(text);
			fi = &own;
		}
		bool uses = false;
		for (size_t k = 0; k < out->macros.len && !uses; k++)
			uses = strcmp(out->macros.items[k].file, scanned[i]) != 0 &&
			       tree_ids_has(fi, out->macros.items[k].def.name);
		if (uses)
			vec_push(again, scanned[i]);
		free(own.ids);
	}
}

/* The options of a first look at a file of the index: its definitions, no plan proved. */
static struct scan_options index_options(const struct scan_options *opts)
{
	struct scan_options o = *opts;
	o.want = true;
	o.no_verify = true;
	o.verify_depth = 0;
	o.tree = NULL;
	o.ids = NULL;
	o.macros = NULL;
	o.arrays = NULL;
	o.progress = NULL;
	o.jobs = 1;
	return o;
}

/*
 * Reads PATH and scans it with O into *R when WANTED says its text may
 * define what the caller collects. True if scanned (release R then).
 */
static bool index_scan(const char *path, bool (*wanted)(const char *, size_t), const struct scan_options *o,
		       struct scan_result *r)
{
	char *text;
	size_t len;
	if (overlay_read(path, &text, &len) < 0)
		return false;
	bool yes = wanted(text, len);
	if (yes)
		scan_buffer(path, text, len, o, r);
	free(text);
	return yes;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool may_define_site_macro(const char *text, size_t len)
{
	return memmem(text, len, "define", 6) &&
	       (memmem(text, len, "need_resched", 12) || memmem(text, len, "smp_processor_id", 16));
}

/*
 * The header macros of the tree's headers that were not scanned (INDEX
 * beyond SCANNED: --context-root), into OUT->macros. Only headers naming a
 * site word in a #define are parsed.
 */
static void index_header_macros(char *const *index, size_t n, char *const *scanned, size_t nscanned,
				const struct scan_options *opts, struct scan_result *out)
{
	char **sorted = xmalloc((nscanned ? nscanned : 1) * sizeof *sorted);
	memcpy(sorted, scanned, nscanned * sizeof *sorted);
	qsort(sorted, nscanned, sizeof *sorted, cstr_cmp);
	struct scan_options o = index_options(opts);
	for (size_t i = 0; i < n && !interrupted(); i++) {
		struct scan_result r = SCAN_RESULT_INIT;
		if (!has_suffix(index[i], ".h") || bsearch(&index[i], sorted, nscanned, sizeof *sorted, cstr_cmp) ||
		    !index_scan(index[i], may_define_site_macro, &o, &r))
			continue;
		for (size_t k = 0; k < r.macros.len; k++)
			vec_push(&out->macros, r.macros.items[k]);
		r.macros.len = 0;
		scan_result_release(&r);
	}
	free(sorted);
}

static void resort(struct scan_result *out);

/*
 * Sorts AGAIN and drops its duplicates, then scans those files again with
 * O, their results in OUT replaced.
 */
static void scan_again(char_vec *again, const struct scan_options *o, struct scan_result *out)
{
	if (again->len > 1)
		qsort(again->items, again->len, sizeof *again->items, cstr_cmp);
	size_t w = 0;
	for (size_t i = 0; i < again->len; i++)
		if (w == 0 || strcmp(again->items[w - 1], again->items[i]) != 0)
			again->items[w++] = again->items[i];
	again->len = w;
	filter_files(out, again->items, again->len, false, NULL, 0);
	struct scan_result r = SCAN_RESULT_INIT;
	scan_files(again->items, again->len, o, &r);
	for (size_t k = 0; k < r.findings.len; k++)
		vec_push(&out->findings, r.findings.items[k]);
	for (size_t k = 0; k < r.diagnostics.len; k++)
		vec_push(&out->diagnostics, r.diagnostics.items[k]);
	r.findings.len = r.diagnostics.len = 0; /* moved */
	scan_result_release(&r);
}

/* ---- per-CPU arrays shared across files ------------------------------------ */

static bool is_asm(const char *path)
{
	return has_suffix(path, ".S") || has_suffix(path, ".s");
}


/*
 * Arrays defined in more than one file are left alone (arch variants of one
 * name); each says where else its name is defined, from its own side.
 */
static void arrays_dedupe(tree_array_vec *a)
{
	for (size_t i = 0; i < a->len; i++) {
		struct tree_array *t = &a->items[i];
		struct buf b = BUF_INIT;
		size_t others = 0;
		for (size_t k = 0; k < a->len; k++) {
			if (k == i || strcmp(t->name, a->items[k].name) != 0)
				continue;
			if (others < 2)
				buf_printf(&b, "%s%s:%u", others ? ", " : "", a->items[k].file, a->items[k].line);
			others++;
		}
		if (others > 2)
			buf_printf(&b, " and %zu more", others - 2);
		if (others && !t->why_not)
			t->why_not = xasprintf("%s is also defined in %s (one name, several definitions: "
					       "each is left as it is)", t->name, buf_cstr(&b));
		buf_release(&b);
	}
}

typedef VEC(bool) bool_vec;

/* One file's part of arrays_users(): read in parallel, merged in the index's order. */
struct users_job {
	const tree_array_vec *a;
	char *const *index;
	const struct tree_ids *ids;
	size_t *lens;           /* per array: strlen of its name */
	uint8_t **named;        /* per file: NULL, or per array 0 / 1 names it / 3 names and declares it */
};

static void users_one(size_t f, void *ctx)
{
	struct users_job *j = ctx;
	const tree_array_vec *a = j->a;
	if (interrupted())
		return;
	bool maybe = !j->ids || !j->ids[f].ids;
	/* the identifiers the scan hashed say which files may name one: only those are read */
	for (size_t i = 0; i < a->len && !maybe; i++)
		maybe = a->items[i].name[0] && /* a struct left alone before its instance was met */
			(j->lens[i] < TREE_MIN_NAME || tree_ids_has(&j->ids[f], a->items[i].name));
	char *text;
	size_t len;
	if (!maybe || overlay_read(j->index[f], &text, &len) < 0)
		return;
	if (is_asm(j->index[f]))
		asm_blank_comments(text, len); /* a comment naming the array is no use of it */
	/* no identifiers hashed by the scan (the tree was walked, not scanned): hashed here, at
	 * once, rather than one memmem() pass per array over the text */
	struct tree_ids own = {NULL, 0};
	const struct tree_ids *fids = j->ids && j->ids[f].ids ? &j->ids[f] : NULL;
	if (!fids) {
		tree_ids_of(text, len, &own);
		fids = &own;
	}
	uint8_t *named = NULL;
	for (size_t i = 0; i < a->len; i++) {
		/* a name the file's identifiers lack is not there (the short ones are not hashed) */
		if (j->lens[i] >= TREE_MIN_NAME && !tree_ids_has(fids, a->items[i].name))
			continue;
		if (!text_names_object(text, len, a->items[i].name)) /* `struct rt_cache_stat` is a tag */
			continue;
		if (!named)
			named = xcalloc(a->len, 1);
		bool declares;
		if (a->items[i].soa_tag) {
			declares = strcmp(j->index[f], a->items[i].soa_file) == 0;
		} else {
			char *decl = xasprintf("%s[NR_CPUS]", a->items[i].name);
			declares = memmem(text, len, decl, strlen(decl)) != NULL;
			free(decl);
		}
		named[i] = declares ? 3 : 1;
	}
	j->named[f] = named;
	free(own.ids);
	free(text);
}

/*
 * USERS[i] gets the files of INDEX naming array i, DECLARES[i] whether each
 * declares it (`x[NR_CPUS]`); one whose name is in assembly or in a file
 * not scanned keeps the array as it is.
 */
static void arrays_users(tree_array_vec *a, char *const *index, size_t n, char *const *scanned, size_t nscanned,
			 const struct tree_ids *ids, char_vec *users, bool_vec *declares, bool verbose, int jobs)
{
	char **sorted = xmalloc((nscanned ? nscanned : 1) * sizeof *sorted);
	memcpy(sorted, scanned, nscanned * sizeof *sorted);
	qsort(sorted, nscanned, sizeof *sorted, cstr_cmp);
	struct users_job j = {a, index, ids, xcalloc(a->len ? a->len : 1, sizeof *j.lens),
			      xcalloc(n ? n : 1, sizeof *j.named)};
	for (size_t i = 0; i < a->len; i++)
		j.lens[i] = strlen(a->items[i].name);
	parallel_for(n, jobs, users_one, &j);
	for (size_t f = 0; f < n; f++) {
		for (size_t i = 0; j.named[f] && i < a->len; i++) {
			if (!j.named[f][i])
				continue;
			vec_push(&users[i], index[f]);
			vec_push(&declares[i], j.named[f][i] == 3);
			if (a->items[i].why_not)
				continue;
			if (is_asm(index[f]))
				a->items[i].why_not = xasprintf("%s is named in assembly code (%s), which expects an "
								"NR_CPUS array", a->items[i].name, index[f]);
			else if (!bsearch(&index[f], sorted, nscanned, sizeof *sorted, cstr_cmp))
				a->items[i].why_not = xasprintf("%s is also used in %s, which is not among the files "
								"scanned", a->items[i].name, index[f]);
		}
		free(j.named[f]);
	}
	free(j.named);
	free(j.lens);
	/* a struct of arrays: the file defining the struct says why when it is left alone (-v only) */
	for (size_t i = 0; i < a->len; i++) {
		bool listed = !a->items[i].soa_tag || (a->items[i].why_not && !verbose);
		for (size_t k = 0; k < users[i].len && !listed; k++)
			listed = strcmp(users[i].items[k], a->items[i].soa_file) == 0;
		if (!listed) {
			vec_push(&users[i], a->items[i].soa_file);
			vec_push(&declares[i], true);
		}
	}
	free(sorted);
	for (size_t i = 0; i < a->len; i++) {
		struct buf b = BUF_INIT;
		for (size_t k = 0; k < users[i].len; k++)
			buf_printf(&b, "%s%s", k ? ", " : "", users[i].items[k]);
		a->items[i].users = buf_detach(&b);
	}
}

/* Does PATH name a field that moves of the struct of arrays T (`x.f`, `x . f`)? */
static bool soa_names_fields(const char *path, const struct tree_array *t)
{
	char *text;
	size_t len, n = strlen(t->name);
	if (overlay_read(path, &text, &len) < 0)
		return true;
	bool found = false;
	for (const char *p = memmem(text, len, t->name, n); p && !found;
	     p = memmem(p + 1, len - (size_t)(p + 1 - text), t->name, n)) {
		if ((p > text && is_ident_char(p[-1])) || is_ident_char(p[n]))
			continue;
		const char *q = p + n;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '.')
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		const char *e = q;
		while (is_ident_char(*e))
			e++;
		char *f = xasprintf(" %.*s ", (int)(e - q), q);
		found = e > q && strstr(t->soa_fields, f) != NULL;
		free(f);
	}
	free(text);
	return found;
}

/*
 * After a round: an array is refused when one file's part of its
 * conversion is not fixable, when a file has a use converted but no part
 * (the part suppressed there), or when no file indexes it by the running
 * CPU; it is kept as it is (unless MODERNIZE) when every file's uses by the
 * running CPU already have preemption off. True if any verdict changed.
 */
static bool arrays_verdicts(tree_array_vec *a, const char_vec *users, const struct scan_result *out, bool modernize)
{
	bool changed = false;
	for (size_t i = 0; i < a->len; i++) {
		struct tree_array *t = &a->items[i];
		if (t->why_not || t->kept)
			continue;
		bool this_cpu = false, guarded = true;
		const struct finding *bad = NULL;
		for (size_t k = 0; k < out->findings.len && !bad; k++) {
			const struct finding *f = &out->findings.items[k];
			if (!f->array || strcmp(f->array, t->name) != 0 || f->protected_site)
				continue;
			this_cpu |= rule_has(f->rule, PROP_ARRAY_DECL) && f->array_this_cpu;
			/* an unprotected use's own finding, or a file's part saying it has one */
			guarded &= rule_has(f->rule, PROP_ARRAY_DECL) && f->array_protected;
			if (f->fix == FIX_NONE)
				bad = f;
		}
		for (size_t u = 0; u < users[i].len && !bad && !t->why_not; u++) {
			bool part = false, converted = false;
			for (size_t k = 0; k < out->findings.len; k++) {
				const struct finding *f = &out->findings.items[k];
				if (f->array && strcmp(f->array, t->name) == 0 && strcmp(f->file, users[i].items[u]) == 0) {
					part |= rule_has(f->rule, PROP_ARRAY_DECL);
					converted = true;
				}
			}
			if (!part && !converted && t->soa_tag && !soa_names_fields(users[i].items[u], t))
				continue; /* only the fields that stay: nothing to convert there */
			if (!part && !is_asm(users[i].items[u])) {
				t->why_not = converted
					? xasprintf("its P008 is off or suppressed in %s", users[i].items[u])
					: xasprintf("%s names it where no use can be converted (a macro, a comment, "
						    "or the file is not C the parser reads)", users[i].items[u]);
				changed = true;
			}
		}
		if (t->why_not)
			continue;
		if (bad)
			t->why_not = xasprintf("its conversion is refused in %s:%u: %s", bad->file, bad->pos.line,
					       bad->fix_note ? bad->fix_note : bad->message);
		else if (!this_cpu)
			t->why_not = xasprintf("%s is never indexed by the running CPU in the tree: a table of the "
					       "CPUs' data", t->name);
		else
			t->kept = guarded && !modernize;
		changed |= t->why_not != NULL || t->kept;
	}
	return changed;
}

/*
 * The arrays defined in the .c files of INDEX that the files SCANNED may
 * index (by name: no other array can change their answer), into OUT. Only
 * the files that may define one are parsed.
 */
static void index_arrays(char *const *index, size_t n, char *const *scanned, size_t nscanned,
			 const struct scan_options *opts, struct scan_result *out)
{
	struct scan_options o = index_options(opts);
	struct strvec names = STRVEC_INIT;
	for (size_t i = 0; i < nscanned; i++) {
		char *text;
		size_t len;
		if (overlay_read(scanned[i], &text, &len) == 0) {
			scan_subscripted_names(text, len, &names);
			free(text);
		}
		error_clear();
	}
	if (names.len)
		qsort(names.items, names.len, sizeof *names.items, cstr_cmp);
	for (size_t i = 0; i < out->arrays.len; i++)
		tree_array_release(&out->arrays.items[i]);
	out->arrays.len = 0;
	for (size_t i = 0; i < n && !interrupted() && names.len; i++) {
		struct scan_result r = SCAN_RESULT_INIT;
		char *text;
		size_t len;
		if (!has_suffix(index[i], ".c") || overlay_read(index[i], &text, &len) < 0)
			continue;
		if (scan_defines_named_array(text, len, &names)) {
			scan_buffer(index[i], text, len, &o, &r);
		}
		free(text);
		for (size_t k = 0; k < r.arrays.len; k++)
			vec_push(&out->arrays, r.arrays.items[k]);
		r.arrays.len = 0;
		scan_result_release(&r);
	}
	strvec_release(&names);
}

/*
 * The non-static NR_CPUS arrays OUT->arrays: their first verdicts and the
 * files naming each (IDS: the index's identifiers, aligned, or NULL).
 * SCANNED are the files judged (the index itself when arrays are judged
 * over it), ASKED the files the user named (whose arrays matter).
 * Returns USERS (one vector per array), or NULL when there is none.
 */
static char_vec *arrays_prepare(char *const *index, size_t n, char *const *scanned, size_t nscanned,
				char *const *asked, size_t nasked,
				const struct scan_options *opts, struct scan_result *out, const struct tree_ids *ids)
{
	tree_array_vec *a = &out->arrays;
	if (opts->arrays_over_index)
		index_arrays(index, n, asked, nasked, opts, out);
	if (opts->whole_tree)
		soa_discover(a, index, n, ids);
	arrays_dedupe(a);
	/* the arrays refused at their declaration have done their part: their files' scans said why */
	size_t kept = 0;
	for (size_t i = 0; i < a->len; i++)
		if (a->items[i].only_dedupe)
			tree_array_release(&a->items[i]);
		else
			a->items[kept++] = a->items[i];
	a->len = kept;
	if (!a->len)
		return NULL;
	for (size_t i = 0; i < a->len && !opts->whole_tree; i++)
		if (!a->items[i].why_not)
			a->items[i].why_not = xasprintf("%s is not static and the files scanned are not a whole tree: "
							"its users elsewhere are unknown (scan the tree's root, or "
							"give --context-root)", a->items[i].name);
	char_vec *users = xcalloc(a->len, sizeof *users);
	bool_vec *declares = xcalloc(a->len, sizeof *declares);
	arrays_users(a, index, n, scanned, nscanned, ids, users, declares, opts->verbose, opts->jobs);
	/* an array refused already: only the files declaring it say why (the others show nothing) */
	for (size_t i = 0; i < a->len; i++) {
		size_t w = 0;
		for (size_t u = 0; u < users[i].len; u++)
			if (!a->items[i].why_not || declares[i].items[u])
				users[i].items[w++] = users[i].items[u];
		if (a->items[i].why_not)
			users[i].len = w;
		vec_release(&declares[i]);
	}
	free(declares);
	return users;
}

/*
 * The files naming each array (USERS, from arrays_prepare(), taken) are
 * scanned again with the tree's verdicts until they hold (a refusal in one
 * file refuses the array in all of them). FIRST (or NULL), the files the
 * tree's contexts change, join the first round: a file is scanned once
 * for both.
 */
static void convert_tree_arrays(const struct scan_options *opts, struct scan_result *out, char_vec *users,
				const char_vec *first)
{
	tree_array_vec *a = &out->arrays;
	struct scan_options o = *opts;
	o.tree = out->tree;
	o.want = false;
	o.ids = NULL;
	o.macros = &out->macros;
	o.arrays = users ? a : NULL;
	o.progress = NULL;
	/* scanned in a round: every array first, then those refused last round (a file's
	 * scan depends only on the verdicts of the arrays it names) */
	bool *rescan = xcalloc(a->len ? a->len : 1, sizeof *rescan);
	for (size_t i = 0; i < a->len; i++)
		rescan[i] = true;
	for (unsigned round = 0; round <= a->len && !interrupted(); round++) {
		char_vec again = VEC_INIT;
		for (size_t i = 0; round == 0 && first && i < first->len; i++)
			vec_push(&again, first->items[i]);
		for (size_t i = 0; users && i < a->len; i++)
			if (rescan[i])
				for (size_t u = 0; u < users[i].len; u++)
					if (!is_asm(users[i].items[u]))
						vec_push(&again, users[i].items[u]);
		if (!again.len) {
			if (round == 0 && first)
				note_preemptible(out, NULL, 0); /* nothing rescanned: every finding keeps its scan */
			vec_release(&again);
			break;
		}
		scan_again(&again, &o, out);
		if (round == 0 && first)
			note_preemptible(out, again.items, again.len);
		vec_release(&again);
		if (!users)
			break;
		for (size_t i = 0; i < a->len; i++)
			rescan[i] = a->items[i].why_not == NULL && !a->items[i].kept;
		if (!arrays_verdicts(a, users, out, opts->modernize))
			break;
		/* newly refused or kept (converted before, not now): scanned again */
		for (size_t i = 0; i < a->len; i++)
			rescan[i] = rescan[i] && (a->items[i].why_not != NULL || a->items[i].kept);
	}
	free(rescan);
	for (size_t i = 0; users && i < a->len; i++)
		vec_release(&users[i]);
	free(users);
}

static bool any_text(const char *text, size_t len)
{
	(void)text;
	(void)len;
	return true;
}

/*
 * explain: the other files of each array to convert, scanned as the tree's
 * own scan scans them first, for the functions whose contexts the tree
 * should decide (their uses' accessors then match `diff` of the tree).
 */
static void users_want(struct scan_result *out, char_vec *users, char *const *scanned, size_t nscanned,
		       const struct scan_options *opts)
{
	struct scan_options o = index_options(opts);
	char_vec done = VEC_INIT;
	for (size_t i = 0; i < out->arrays.len; i++) {
		if (out->arrays.items[i].why_not)
			continue;
		for (size_t u = 0; u < users[i].len; u++) {
			const char *f = users[i].items[u];
			bool seen = is_asm(f);
			for (size_t k = 0; k < nscanned && !seen; k++)
				seen = strcmp(scanned[k], f) == 0;
			for (size_t k = 0; k < done.len && !seen; k++)
				seen = strcmp(done.items[k], f) == 0;
			if (seen)
				continue;
			vec_push(&done, users[i].items[u]);
			struct scan_result r = SCAN_RESULT_INIT;
			if (!index_scan(f, any_text, &o, &r))
				continue;
			for (size_t w = 0; w < r.want.len; w++)
				vec_push(&out->want, r.want.items[w]);
			r.want.len = 0;
			scan_result_release(&r);
		}
	}
	vec_release(&done);
}

/* Each converted array's edits in every file, into its plan (before the other files' findings go). */
static void arrays_plans(struct scan_result *out)
{
	static const char *const ops[] = {"replace", "insert-before", "insert-after"};
	for (size_t i = 0; i < out->arrays.len; i++) {
		struct tree_array *t = &out->arrays.items[i];
		if (t->why_not || t->kept)
			continue;
		struct buf b = BUF_INIT;
		for (size_t k = 0; k < out->findings.len; k++) {
			const struct finding *f = &out->findings.items[k];
			if (!f->array || strcmp(f->array, t->name) != 0 || f->protected_site || f->fix == FIX_NONE)
				continue;
			for (size_t e = 0; e < f->edits.len; e++) {
				const struct edit *x = &f->edits.items[e];
				struct buf line = BUF_INIT;
				buf_printf(&line, "%s:%u:%u: %s", f->file, x->start.line, x->start.column,
					   x->op == EDIT_REPLACE && !x->text[0] ? "remove" : ops[x->op]);
				if (x->text[0]) {
					buf_puts(&line, " \"");
					for (const char *c = x->text; *c; c++) /* one line each */
						buf_puts(&line, *c == '\n' ? "\\n" : *c == '\t' ? "\\t" : (char[]){*c, 0});
					buf_putc(&line, '"');
				}
				/* an edit two findings share (a use and the file's part) is listed once */
				if (!strstr(buf_cstr(&b), buf_cstr(&line)))
					buf_printf(&b, "%s%s", b.len ? "\n" : "", buf_cstr(&line));
				buf_release(&line);
			}
		}
		free(t->plan);
		t->plan = b.len ? buf_detach(&b) : NULL;
		buf_release(&b);
	}
}

void scan_with_tree(char *const *index, size_t n, char *const *scanned, size_t nscanned,
		    const struct scan_options *opts, struct scan_result *out, struct tree_ids *ids)
{
	if (index != scanned)
		index_header_macros(index, n, scanned, nscanned, opts, out);
	char *const *judged = opts->arrays_over_index ? index : scanned;
	size_t njudged = opts->arrays_over_index ? n : nscanned;
	/* before the index takes the identifiers over */
	char_vec *users = arrays_prepare(index, n, judged, njudged, scanned, nscanned, opts, out, ids);
	if (opts->arrays_over_index && users)
		users_want(out, users, scanned, nscanned, opts);
	if (!out->want.len && !out->macros.len) {
		convert_tree_arrays(opts, out, users, NULL);
		if (opts->arrays_over_index)
			arrays_plans(out);
		if (index != scanned)
			filter_files(out, scanned, nscanned, true, index, n);
		resort(out);
		return;
	}
	char_vec again = VEC_INIT;
	/* before the index takes the identifiers over: IDS[i] is SCANNED[i]'s when INDEX starts with it */
	if (out->macros.len)
		macro_users(out, scanned, nscanned, ids && n >= nscanned && index == scanned ? ids : NULL, &again);
	tree_context_build(&out->tree, index, n, &out->want, ids, opts->jobs, opts->memo);
	/*
	 * The files defining a function the tree decided: atomic or bound, their
	 * verdicts change; preemptible, their findings say why the callers leave
	 * it so (the same reason whatever else the file holds).
	 */
	for (size_t i = 0; i < out->want.len; i++) {
		enum fn_context ctx;
		const char *why;
		const char *name = out->want.items[i].name, *file = out->want.items[i].file;
		if (tree_context_lookup(out->tree, name, strlen(name), file, &ctx, &why) ||
		    tree_context_bound(out->tree, name, file))
			vec_push(&again, out->want.items[i].file);
	}
	convert_tree_arrays(opts, out, users, &again);
	vec_release(&again);
	if (opts->arrays_over_index)
		arrays_plans(out);
	if (index != scanned)
		filter_files(out, scanned, nscanned, true, index, n);
	resort(out);
}

/* Per-rule counts and order again, after files were scanned again. */
static void resort(struct scan_result *out)
{
	memset(out->stats.per_rule, 0, sizeof out->stats.per_rule);
	for (size_t i = 0; i < out->findings.len; i++)
		if (!out->findings.items[i].protected_site)
			out->stats.per_rule[out->findings.items[i].rule]++;
	if (out->findings.len > 1)
		qsort(out->findings.items, out->findings.len, sizeof(struct finding), finding_cmp);
	if (out->diagnostics.len > 1)
		qsort(out->diagnostics.items, out->diagnostics.len, sizeof(struct diagnostic), scan_diag_cmp);
}
