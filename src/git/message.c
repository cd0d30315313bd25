/*
 * Commit messages as a kernel developer writes them (message.h): a subject
 * with the subsystem's prefix, then one paragraph of prose per kind of
 * change saying what changes and why under a preemptible kernel.
 */
#include "git/message.h"

#include <stdlib.h>
#include <string.h>

#ifndef PREEMPTIFY_VERSION
#define PREEMPTIFY_VERSION "0"
#endif

/* Directories that only group subsystems: the subsystem is the next one. */
static const char *const container_dirs[] = {"drivers", "fs", "arch"};

/* The prefix components of PATH, following the rule in message.h. */
static void prefix_components(const char *path, struct strvec *out)
{
	struct strvec dirs = VEC_INIT;
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	const char *p = path;
	for (;;) {
		while (*p == '/')
			p++;
		const char *slash = strchr(p, '/');
		if (!slash)
			break;
		if (slash - p != 1 || p[0] != '.')
			vec_push(&dirs, xstrndup(p, (size_t)(slash - p)));
		p = slash + 1;
	}
	const char *dot = strrchr(p, '.');
	char *stem = xstrndup(p, dot && dot != p ? (size_t)(dot - p) : strlen(p));

	size_t first = 0;
	if (dirs.len > 0)
		for (size_t i = 0; i < ARRAY_SIZE(container_dirs); i++)
			if (strcmp(dirs.items[0], container_dirs[i]) == 0)
				first = 1;
	for (size_t i = first; i < dirs.len && i < first + 1; i++)
		vec_push(out, xstrdup(dirs.items[i]));
	if (stem[0] && (out->len == 0 || strcmp(out->items[out->len - 1], stem) != 0))
		vec_push(out, stem);
	else
		free(stem);
	strvec_release(&dirs);
}

static char *join_components(char *const *items, size_t n)
{
	struct buf b = BUF_INIT;
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i ? ": " : "", items[i]);
	return buf_detach(&b);
}

char *message_prefix(const char *path)
{
	struct strvec c = VEC_INIT;
	prefix_components(path, &c);
	char *s = join_components(c.items, c.len);
	strvec_release(&c);
	return s;
}

char *message_common_prefix(const char *const *paths, size_t n)
{
	if (n == 0)
		return xstrdup("");
	struct strvec common = VEC_INIT;
	prefix_components(paths[0], &common);
	for (size_t i = 1; i < n; i++) {
		struct strvec c = VEC_INIT;
		prefix_components(paths[i], &c);
		size_t k = 0;
		while (k < common.len && k < c.len && strcmp(common.items[k], c.items[k]) == 0)
			k++;
		while (common.len > k)
			free(common.items[--common.len]);
		strvec_release(&c);
	}
	char *s = join_components(common.items, common.len);
	strvec_release(&common);
	return s;
}

/*
 * Per fix kind, its phrases (rules/fixes.def): the phrase when it is the
 * only kind (long, and short for a tight subject line), and its part in a
 * combined phrase. Kinds whose part is an API name (`use_item`) share one
 * "use A, B and C" clause. A phrase the registry leaves NULL falls back to
 * the fix's name, so no NULL ever reaches strlen() or buf_puts().
 */
static const char *phrase(enum fix_kind f, const char *p)
{
	return p ? p : fix_name(f);
}

/* Appends ITEMS[0..n) as "a", "a and b", "a, b and c". */
static void join_and(struct buf *b, const char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_puts(b, i + 1 == n ? " and " : ", ");
		buf_puts(b, items[i]);
	}
}

char *message_summary(const struct file_change *const *changes, size_t n, size_t budget)
{
	bool seen[FIX_COUNT] = {false};
	size_t kinds = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < changes[i]->fixed.len; k++) {
			enum fix_kind f = changes[i]->fixed.items[k]->fix;
			if (f == FIX_NONE || f >= FIX_COUNT)
				continue;
			/* define-per-cpu and get-cpu-var read the same: count once */
			if (f == FIX_GET_CPU_VAR)
				f = FIX_DEFINE_PER_CPU;
			if (!seen[f])
				kinds++;
			seen[f] = true;
		}
	if (kinds == 0)
		return xstrdup("make preempt-safe for 2.6");
	if (kinds == 1) {
		for (int f = 0; f < FIX_COUNT; f++) {
			if (!seen[f])
				continue;
			const char *alone = phrase(f, fix_phrases(f)->alone);
			return xstrdup(strlen(alone) <= budget ? alone : phrase(f, fix_phrases(f)->alone_short));
		}
	}
	const char *clauses[FIX_COUNT + 1], *items[FIX_COUNT], *tokens[FIX_COUNT];
	size_t nclauses = 0, nitems = 0, ntokens = 0;
	for (int f = 0; f < FIX_COUNT; f++) {
		if (!seen[f])
			continue;
		const struct fix_phrases *ph = fix_phrases(f);
		tokens[ntokens++] = phrase(f, ph->token);
		if (ph->clause)
			clauses[nclauses++] = ph->clause;
		else
			items[nitems++] = phrase(f, ph->use_item);
	}
	struct buf use = BUF_INIT, b = BUF_INIT;
	if (nitems) {
		buf_puts(&use, "use ");
		join_and(&use, items, nitems);
		clauses[nclauses++] = buf_cstr(&use);
	}
	for (size_t i = 0; i < nclauses; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", clauses[i]);
	if (b.len > budget) {
		buf_clear(&b);
		buf_puts(&b, "make preempt-safe: ");
		join_and(&b, tokens, ntokens);
	}
	if (b.len > budget) {
		buf_clear(&b);
		buf_printf(&b, "make preempt-safe (%zu kinds of fix)", kinds);
	}
	buf_release(&use);
	return buf_detach(&b);
}

/*
 * Per fix kind, the paragraph of the body: what changes and why, with %s
 * for the functions (or arrays) it changes and %s for a verb's "s" where
 * the sentence needs the agreement. Kinds that only rename an API say so.
 * Every kind but NONE has one (tests/test_repo.c checks it).
 */
static const char *const paragraphs[FIX_COUNT] = {
	[FIX_GET_CPU] = "%s read%s the CPU number with smp_processor_id() and go%s on using it. "
		"Under the 2.6 preemptible kernel the task can be preempted and moved to another CPU after "
		"the read, and then works with a number that is no longer its own CPU's. Read it with "
		"get_cpu(), which disables preemption, and release it with put_cpu() after its last use, "
		"so that the task stays on that CPU in between.",
	[FIX_DEFINE_PER_CPU] = "%s, indexed by the running CPU's number, become%s per-CPU data declared "
		"with DEFINE_PER_CPU(), as 2.6 declares such data. The running CPU's copy is reached with "
		"get_cpu_var() and put_cpu_var(), which keep preemption off while it is in use, or with "
		"__get_cpu_var() where preemption is already off; another CPU's copy with per_cpu().",
	[FIX_MOVE_INSIDE] = "%s read%s the CPU number before taking the lock that protects its uses. "
		"Under the 2.6 preemptible kernel the task can be preempted and moved to another CPU "
		"between the read and the lock. Read it once the lock is held, where preemption is off.",
	[FIX_COND_RESCHED] = "2.6 keeps need_resched in the thread flags and offers cond_resched() as "
		"the voluntary reschedule point. Replace the open-coded 2.4 check in %s%s, which tests "
		"current->need_resched and calls schedule(), with cond_resched(). This is an API "
		"conversion: the code still reschedules at the same place.",
	[FIX_NEED_RESCHED_CALL] = "The need_resched field of struct task_struct is gone in 2.6, where "
		"the flag is a thread flag. Test it with need_resched() in %s%s. This is an API rename; "
		"the behaviour is unchanged.",
	[FIX_YIELD] = "2.6 has no SCHED_YIELD policy bit: a task gives up the CPU with yield(). "
		"Replace the 2.4 sequence in %s%s that sets SCHED_YIELD and calls schedule() with "
		"yield(). This is an API rename; the behaviour is unchanged.",
	[FIX_CHECK_RESCHED] = "preempt_enable_no_resched() turns preemption back on without acting on a "
		"reschedule that became due while it was off. Follow it with preempt_check_resched() in "
		"%s%s, so that a pending reschedule is not held off until the next preemption point.",
	[FIX_RESCHED_FLAG] = "The need_resched field of struct task_struct is gone in 2.6, where the "
		"flag is a thread flag. Set it with set_tsk_need_resched() and clear it with "
		"clear_tsk_need_resched() in %s%s. This is an API rename; the behaviour is unchanged.",
	[FIX_PREEMPT_REGION] = "A macro used in %s%s reads the CPU number with smp_processor_id(). Under "
		"the 2.6 preemptible kernel the task can be moved to another CPU between that read and "
		"the work done with it. Hold preemption off with preempt_disable() and "
		"preempt_enable() around the statement that expands the macro, and the uses of what it "
		"returns.",
	[FIX_GFP_ATOMIC] = "%s allocate%s memory with GFP_KERNEL where preemption is off: in an interrupt, "
		"softirq or IPI handler, or with a spinlock held. GFP_KERNEL may sleep to reclaim memory, "
		"which the 2.6 preemptible kernel reports as scheduling while atomic. Allocate with "
		"GFP_ATOMIC there, which never sleeps.",
};

/* define-per-cpu and get-cpu-var read the same in a message: one paragraph. */
static enum fix_kind paragraph_kind(enum fix_kind f)
{
	return f == FIX_GET_CPU_VAR ? FIX_DEFINE_PER_CPU : f;
}

bool message_has_paragraph(enum fix_kind f)
{
	return f > FIX_NONE && f < FIX_COUNT && paragraphs[paragraph_kind(f)] != NULL;
}

/*
 * The array a per-CPU conversion declares, from its DEFINE_PER_CPU(T, x)
 * edit ("x"), or NULL. Owned.
 */
static char *defined_array(const struct finding *f)
{
	for (size_t k = 0; k < f->edits.len; k++) {
		const char *t = f->edits.items[k].text, *d = t ? strstr(t, "DEFINE_PER_CPU(") : NULL;
		if (!d)
			continue;
		const char *close = strchr(d, ')'), *comma = close ? close : NULL;
		while (comma && comma > d && *comma != ',')
			comma--;
		if (!close || comma <= d)
			continue;
		comma++;
		while (*comma == ' ')
			comma++;
		return xstrndup(comma, (size_t)(close - comma));
	}
	return f->array ? xstrdup(f->array) : NULL;
}

/* Adds S to NAMES unless it is there already; takes S. */
static void add_name(struct strvec *names, char *s)
{
	for (size_t i = 0; i < names->len; i++)
		if (strcmp(names->items[i], s) == 0) {
			free(s);
			return;
		}
	vec_push(names, s);
}

/* "a", "a and b", "a, b and c", "a, b, c and 4 other functions". */
static void join_names(struct buf *b, const struct strvec *names, const char *others)
{
	size_t n = names->len, shown = n > 4 ? 3 : n;
	for (size_t i = 0; i < shown; i++) {
		if (i)
			buf_puts(b, i + 1 == n ? " and " : ", ");
		buf_puts(b, names->items[i]);
	}
	if (shown < n)
		buf_printf(b, " and %zu other %s", n - shown, others);
}

/*
 * What a GFP_ATOMIC allocation may now do, and the NULL checks that
 * handle it, from the gfp-atomic fixes' notes ("...; the NULL check at
 * line N handles it"): "GFP_ATOMIC: the allocation may now fail under
 * memory pressure; the NULL check at line N handles it.", the lines
 * joined when there are several. Appended to T.
 */
static void fail_sentence(struct buf *t, const struct file_change *const *changes, size_t n)
{
	struct strvec lines = STRVEC_INIT;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < changes[i]->fixed.len; j++) {
			const struct finding *f = changes[i]->fixed.items[j];
			const char *at = f->fix == FIX_GFP_ATOMIC && f->fix_note ? strstr(f->fix_note, "at line ") : NULL;
			if (at)
				add_name(&lines, xasprintf("%lu", strtoul(at + 8, NULL, 10)));
		}
	if (lines.len) {
		bool one = lines.len == 1;
		buf_printf(t, " GFP_ATOMIC: the %s may now fail under memory pressure; the NULL %s at %s ",
			   one ? "allocation" : "allocations", one ? "check" : "checks", one ? "line" : "lines");
		for (size_t i = 0; i < lines.len; i++)
			buf_printf(t, "%s%s", i == 0 ? "" : i + 1 == lines.len ? " and " : ", ", lines.items[i]);
		buf_printf(t, " %s it.", one ? "handles" : "handle");
	}
	strvec_release(&lines);
}

/* The paragraph for fix kind K over the fixed findings of CHANGES[0..n). Appended to B, wrapped. */
static void kind_paragraph(struct buf *b, enum fix_kind k, const struct file_change *const *changes, size_t n)
{
	struct strvec names = STRVEC_INIT;
	bool arrays = k == FIX_DEFINE_PER_CPU;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < changes[i]->fixed.len; j++) {
			const struct finding *f = changes[i]->fixed.items[j];
			if (paragraph_kind(f->fix) != k)
				continue;
			char *name = arrays ? defined_array(f) : f->function ? xasprintf("%s()", f->function) : NULL;
			if (name)
				add_name(&names, name);
		}
	struct buf who = BUF_INIT, t = BUF_INIT;
	bool one = names.len == 1;
	if (arrays) {
		buf_printf(&who, "The 2.4 per-CPU %s ", one ? "array" : "arrays");
		if (names.len)
			join_names(&who, &names, "arrays");
		else
			buf_puts(&who, "of this code");
	} else if (names.len) {
		join_names(&who, &names, "functions");
	} else {
		buf_puts(&who, "this code");
		one = true;
	}
	const char *s = one ? "s" : "";
	/* sentences that open on the functions take a verb; the others name them mid-sentence */
	bool leads = k == FIX_GET_CPU || k == FIX_MOVE_INSIDE || k == FIX_GFP_ATOMIC || arrays;
	if (k == FIX_GET_CPU)
		buf_printf(&t, paragraphs[k], buf_cstr(&who), s, one ? "es" : "");
	else if (leads)
		buf_printf(&t, paragraphs[k], buf_cstr(&who), arrays ? (one ? "s" : "") : s);
	else
		buf_printf(&t, paragraphs[k], buf_cstr(&who), "");
	/* a shared array: its declarations and exports change with it */
	bool decl = false, exp = false;
	for (size_t i = 0; arrays && i < n; i++)
		for (size_t j = 0; j < changes[i]->fixed.len; j++)
			for (size_t e = 0; e < changes[i]->fixed.items[j]->edits.len; e++) {
				const char *et = changes[i]->fixed.items[j]->edits.items[e].text;
				decl |= et && strstr(et, "DECLARE_PER_CPU(") != NULL;
				exp |= et && strstr(et, "EXPORT_PER_CPU_SYMBOL") != NULL;
			}
	if (k == FIX_GFP_ATOMIC)
		fail_sentence(&t, changes, n);
	if (decl || exp)
		buf_printf(&t, " %s%s%s.", decl ? "Its extern declarations become DECLARE_PER_CPU()" : "",
			   decl && exp ? " and its export " : exp ? "Its export becomes " : "",
			   exp ? "EXPORT_PER_CPU_SYMBOL()" : "");
	buf_add_wrapped(b, buf_cstr(&t), "", "", MESSAGE_BODY_WIDTH);
	buf_release(&who);
	buf_release(&t);
	strvec_release(&names);
}

char *message_build(const struct file_change *const *changes, const char *const *paths,
		    size_t n, const struct message_options *opts)
{
	struct message_options defaults = MESSAGE_OPTIONS_INIT;
	if (!opts)
		opts = &defaults;
	char *prefix = NULL;
	if (opts->prefix) {
		size_t len = strlen(opts->prefix);
		while (len > 0 && (opts->prefix[len - 1] == ':' || opts->prefix[len - 1] == ' '))
			len--;
		prefix = xstrndup(opts->prefix, len);
	} else {
		prefix = n == 1 ? message_prefix(paths[0]) : message_common_prefix(paths, n);
	}
	/* A prefix too long to leave room for a summary keeps its ends only. */
	if (strlen(prefix) > MESSAGE_SUBJECT_MAX / 2) {
		char *first = strstr(prefix, ": ");
		char *last = NULL;
		for (char *p = prefix; (p = strstr(p, ": ")); p += 2)
			last = p;
		if (first && last && last != first) {
			char *s = xasprintf("%.*s%s", (int)(first - prefix), prefix, last);
			free(prefix);
			prefix = s;
		}
	}
	size_t used = prefix[0] ? strlen(prefix) + 2 : 0;
	size_t budget = used < MESSAGE_SUBJECT_MAX ? MESSAGE_SUBJECT_MAX - used : 0;
	char *summary = message_summary(changes, n, budget);

	struct buf b = BUF_INIT;
	if (prefix[0])
		buf_printf(&b, "%s: ", prefix);
	buf_puts(&b, summary);
	if (b.len > MESSAGE_SUBJECT_MAX) {
		b.len = MESSAGE_SUBJECT_MAX;
		b.ptr[b.len] = '\0';
	}
	buf_putc(&b, '\n');
	bool seen[FIX_COUNT] = {false}, named[FIX_COUNT] = {false};
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < changes[i]->fixed.len; k++) {
			enum fix_kind f = changes[i]->fixed.items[k]->fix;
			if (f > FIX_NONE && f < FIX_COUNT)
				seen[paragraph_kind(f)] = named[f] = true;
		}
	for (int k = 1; k < FIX_COUNT; k++)
		if (seen[k] && paragraphs[k]) {
			buf_putc(&b, '\n');
			kind_paragraph(&b, (enum fix_kind)k, changes, n);
		}
	buf_printf(&b, "\nGenerated by: preemptify %s (", PREEMPTIFY_VERSION);
	for (int k = 1, first = 1; k < FIX_COUNT; k++)
		if (named[k]) {
			buf_printf(&b, "%s%s", first ? "" : ", ", fix_name(k));
			first = 0;
		}
	buf_puts(&b, ")\n");
	if (opts->signoff)
		buf_printf(&b, "Signed-off-by: %s\n", opts->signoff);
	free(prefix);
	free(summary);
	return buf_detach(&b);
}
