/* The account of a run: sites fixed, findings left for hand work, in the porter's words (account.h). */
#include "cli/account.h"

#include "cli/commands.h"

#include <stdlib.h>
#include <string.h>

/*
 * What one finding of a rule left for hand work is, in the porter's words,
 * by rule name (the registry's codes may be renumbered, its names are the
 * interface). A rule not listed reads as its summary.
 */
static const struct {
	const char *rule, *one, *many;
} hand_work[] = {
	{"percpu-array", "per-CPU array access to protect by hand", "per-CPU array accesses to protect by hand"},
	{"percpu-unguarded", "per-CPU access to protect by hand", "per-CPU accesses to protect by hand"},
	{"cpu-id", "CPU number to protect by hand", "CPU numbers to protect by hand"},
	{"resched", "reschedule check to convert by hand", "reschedule checks to convert by hand"},
	{"noresched", "preempt_enable_no_resched() to complete by hand",
	 "preempt_enable_no_resched() calls to complete by hand"},
	{"sleep-in-atomic", "call that may sleep with preemption off", "calls that may sleep with preemption off"},
	{"unbalanced", "unbalanced lock", "unbalanced locks"},
	{"percpu-array-convertible", "per-CPU array to convert by hand", "per-CPU arrays to convert by hand"},
};

static const char *hand_work_phrase(enum rule_id r, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(hand_work); i++)
		if (strcmp(hand_work[i].rule, rule_name(r)) == 0)
			return n == 1 ? hand_work[i].one : hand_work[i].many;
	return rule_summary(r);
}

void account_release(struct account *a)
{
	vec_release(&a->items);
	strvec_release(&a->elsewhere);
	*a = (struct account)ACCOUNT_INIT;
}

static bool in_list(const struct strvec *v, const char *s)
{
	for (size_t i = 0; v && i < v->len; i++)
		if (strcmp(v->items[i], s) == 0)
			return true;
	return false;
}

static bool unchanged(const struct file_change *c)
{
	return !c->new_text || (c->new_len == c->old_len && memcmp(c->new_text, c->old_text, c->old_len) == 0);
}

/* Per finding of SR, the fix made (fixed) or the reason it was not (why), from RR. */
static void mark_rewrite(const struct scan_result *sr, const struct rewrite_result *rr, const struct strvec *skipped,
			 const char *skip_why, bool *fixed, const char **why, struct account *out)
{
	const struct finding *base = sr->findings.items;
	size_t n = sr->findings.len;
	for (size_t i = 0; i < rr->files.len; i++) {
		const struct file_change *c = &rr->files.items[i];
		bool skip = in_list(skipped, c->path);
		if (!unchanged(c) && !skip && c->fixed.len)
			out->files++;
		for (size_t k = 0; k < c->fixed.len; k++) {
			size_t at = (size_t)(c->fixed.items[k] - base);
			if (at < n && !skip)
				fixed[at] = true;
			else if (at < n)
				why[at] = skip_why;
		}
		for (size_t k = 0; k < c->refused.len; k++) {
			size_t at = (size_t)(c->refused.items[k].finding - base);
			if (at < n)
				why[at] = c->refused.items[k].reason;
		}
		if (c->error) /* the file failed: each of its fixable findings is left, for that reason */
			for (size_t k = 0; k < n; k++)
				if (!fixed[k] && !why[k] && base[k].fix != FIX_NONE && strcmp(base[k].file, c->path) == 0)
					why[k] = c->error;
	}
}

/* Does SR hold a finding of FILE that is part of ARRAY's conversion? */
static bool has_part(const struct scan_result *sr, const char *array, const char *file, size_t flen)
{
	for (size_t i = 0; i < sr->findings.len; i++) {
		const struct finding *f = &sr->findings.items[i];
		if (f->array && strcmp(f->array, array) == 0 && strlen(f->file) == flen &&
		    memcmp(f->file, file, flen) == 0)
			return true;
	}
	return false;
}

/* OUT->elsewhere: the files naming a converted shared array that SR has no part of. */
static void conversions_elsewhere(const struct scan_result *sr, struct account *out)
{
	for (size_t i = 0; i < sr->findings.len; i++) {
		const struct finding *f = &sr->findings.items[i];
		if (!f->array || f->protected_site || f->fix == FIX_NONE)
			continue;
		const struct tree_array *t = tree_array_find(&sr->arrays, f->array, NULL);
		for (const char *u = t && !t->why_not ? t->users : NULL; u && *u;) {
			size_t n = strcspn(u, ",");
			if (!has_part(sr, f->array, u, n)) {
				char *file = xstrndup(u, n);
				if (in_list(&out->elsewhere, file))
					free(file);
				else
					vec_push(&out->elsewhere, file);
			}
			u += n;
			while (*u == ',' || *u == ' ')
				u++;
		}
	}
}

void account_build(const struct scan_result *sr, const struct rewrite_result *rr, const struct strvec *skipped,
		   const char *skip_why, struct account *out)
{
	size_t n = sr->findings.len;
	bool *fixed = xcalloc(n + 1, sizeof *fixed);
	const char **why = xcalloc(n + 1, sizeof *why);
	const char *last_file = NULL;
	if (rr)
		mark_rewrite(sr, rr, skipped, skip_why, fixed, why, out);
	out->unanalysed = sr->stats.files > sr->stats.parsed ? sr->stats.files - sr->stats.parsed : 0;
	for (size_t i = 0; i < n; i++) {
		const struct finding *f = &sr->findings.items[i];
		if (f->protected_site)
			continue;
		if (!rr && f->fix != FIX_NONE && !f->edits.len)
			continue; /* a marker of a conversion: its sites carry the edits */
		if (!rr && f->fix != FIX_NONE) { /* before a rewrite: what diff would do */
			out->fixed++;
			out->files += !last_file || strcmp(last_file, f->file) != 0;
			last_file = f->file;
			continue;
		}
		if (fixed[i]) {
			out->fixed++;
			continue;
		}
		if (f->fix != FIX_NONE && !why[i] && !f->edits.len)
			continue; /* a part of a conversion whose edits are its sites' (a shared array's marker) */
		if (f->fix != FIX_NONE) {
			out->failed++;
			why[i] = why[i] ? why[i] : "the rewrite did not make it";
		} else if (f->severity == SEV_NOTE && rule_severity(f->rule) != SEV_NOTE) {
			out->notes++; /* made a note below its rule's level: left as 2.6 left it */
			continue;
		} else {
			out->left_rule[f->rule]++;
		}
		out->left++;
		struct account_item it = {f, why[i]};
		vec_push(&out->items, it);
	}
	free(fixed);
	free(why);
	conversions_elsewhere(sr, out);
}

void account_sentence(const struct account *a, const char *done, struct buf *out)
{
	buf_printf(out, "%zu site%s %s", a->fixed, a->fixed == 1 ? "" : "s", done);
	if (a->fixed)
		buf_printf(out, " in %zu file%s", a->files, a->files == 1 ? "" : "s");
	if (!a->left) {
		buf_puts(out, "; nothing left for you");
	} else {
		buf_printf(out, "; %zu finding%s need%s you: ", a->left, a->left == 1 ? "" : "s", a->left == 1 ? "s" : "");
		const char *sep = "";
		if (a->failed) {
			buf_printf(out, "%zu fixable site%s that could not be fixed", a->failed,
				   a->failed == 1 ? "" : "s");
			sep = ", ";
		}
		/* the biggest share first, as a porter plans the work */
		bool done_rule[RULE_COUNT] = {false};
		for (;;) {
			int best = -1;
			for (int k = 0; k < RULE_COUNT; k++)
				if (!done_rule[k] && a->left_rule[k] && (best < 0 || a->left_rule[k] > a->left_rule[best]))
					best = k;
			if (best < 0)
				break;
			done_rule[best] = true;
			buf_printf(out, "%s%zu %s", sep, a->left_rule[best],
				   hand_work_phrase((enum rule_id)best, a->left_rule[best]));
			sep = ", ";
		}
	}
	if (a->notes)
		buf_printf(out, " (%zu note%s need%s no change)", a->notes, a->notes == 1 ? "" : "s",
			   a->notes == 1 ? "s" : "");
	if (a->elsewhere.len) {
		buf_printf(out, "; the per-CPU conversion also changes %zu file%s not given here (", a->elsewhere.len,
			   a->elsewhere.len == 1 ? "" : "s");
		for (size_t i = 0; i < a->elsewhere.len; i++)
			buf_printf(out, "%s%s", i ? ", " : "", a->elsewhere.items[i]);
		buf_puts(out, "): give them too, or the tree will not build");
	}
	/* "nothing left" is only true of what was read: say what was not */
	if (a->unanalysed && !a->fixed && !a->left)
		buf_printf(out, "; %zu file%s not analysed (no preemption word, no locking call, no sleep "
			   "where preemption could be off)", a->unanalysed, a->unanalysed == 1 ? "" : "s");
}

void account_list(const struct account *a, struct buf *out)
{
	for (size_t i = 0; i < a->items.len; i++) {
		const struct finding *f = a->items.items[i].f;
		buf_printf(out, "%s:%u:%u: note: left for you: %s", f->file, f->pos.line, f->pos.column, f->message);
		if (a->items.items[i].why)
			buf_printf(out, "; not fixed: %.*s", (int)strcspn(a->items.items[i].why, "\n"),
				   a->items.items[i].why);
		buf_printf(out, " [%s]\n", rule_code(f->rule));
	}
}

void account_print(const struct account *a, const char *done, bool quiet)
{
	struct buf b = BUF_INIT;
	if (!quiet)
		account_list(a, &b);
	buf_puts(&b, "preemptify: ");
	account_sentence(a, done, &b);
	buf_putc(&b, '\n');
	fputs(buf_cstr(&b), stderr);
	buf_release(&b);
}

/* How the callers of the PATHs' functions were found, in one line (the counts behind -v). */
static void story_tree(const struct scan_cli *a, const struct strvec *paths, const struct scan_result *r)
{
	const struct tree_stats *t = r->tree ? tree_context_stats(r->tree) : NULL;
	if (a->no_tree) {
		fputs("preemptify: each file analysed alone (--no-tree): callers in other files were not followed\n",
		      stderr);
		return;
	}
	if (a->tree_root)
		fprintf(stderr, "preemptify: callers followed through the %s at %s, found above %s",
			a->tree_git ? "git work tree" : "kernel tree", a->tree_root, paths->items[0]);
	else if (a->context_root)
		fprintf(stderr, "preemptify: callers followed through the tree at %s (--context-root)", a->context_root);
	else if (t && t->names)
		fputs("preemptify: callers followed through the files scanned", stderr);
	else
		return; /* no function's context came from other files: nothing to say */
	if (t && t->names)
		fprintf(stderr, ": %zu function%s whose callers decide a finding, %zu of them always called with "
			"preemption off", t->names, t->names == 1 ? "" : "s", t->atomic);
	fputc('\n', stderr);
	if (a->tree_root && a->verbose)
		fputs("preemptify: --context-root DIR names another tree, --no-tree none\n", stderr);
	if (t && a->verbose)
		fprintf(stderr, "preemptify: tree index: %zu functions followed, %zu found atomic, %zu files parsed, "
			"%u round%s, %.2f s\n", t->names, t->atomic, t->files_analysed, t->rounds,
			t->rounds == 1 ? "" : "s", t->seconds);
}

void scan_cli_story(const struct scan_cli *a, const struct strvec *paths, const struct scan_result *r)
{
	if (a->quiet)
		return;
	story_tree(a, paths, r);
	if (a->verbose && a->files_asked)
		fprintf(stderr, "preemptify: cache: %zu of %zu file results reused from earlier runs, the others "
			"scanned\n", a->files_reused, a->files_asked);
	if (a->verbose && a->tree_asked)
		fprintf(stderr, "preemptify: cache: %zu of %zu analyses of the tree index's files reused from earlier "
			"runs, the others made\n", a->tree_reused, a->tree_asked);
	if (a->hidden_baseline)
		fprintf(stderr, "preemptify: %zu finding%s not shown: recorded in the baseline %s\n", a->hidden_baseline,
			a->hidden_baseline == 1 ? "" : "s", a->baseline);
	if (a->hidden_config)
		fprintf(stderr, "preemptify: %zu finding%s not shown: ignored by [ignore-paths] in %s\n",
			a->hidden_config, a->hidden_config == 1 ? "" : "s", a->cfg ? a->cfg->path : "the config");
	if (a->ignore.len) {
		fputs("preemptify: rules not run (--ignore or the config's ignore): ", stderr);
		for (size_t i = 0; i < a->ignore.len; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", a->ignore.items[i]);
		fputc('\n', stderr);
	}
}
