#include "git/message.h"

#include <stdlib.h>
#include <string.h>

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
	for (size_t i = first; i < dirs.len && i < first + 2; i++)
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
 * Appends TEXT wrapped at WIDTH columns: the first line starts with FIRST,
 * the following ones with CONT. Words longer than a line stay whole.
 */
static void wrap(struct buf *b, const char *first, const char *cont, const char *text, size_t width)
{
	size_t col = strlen(first);
	bool line_empty = true;
	buf_puts(b, first);
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (!*p)
			break;
		size_t w = strcspn(p, " \n\t");
		if (!line_empty && col + 1 + w > width) {
			buf_putc(b, '\n');
			buf_puts(b, cont);
			col = strlen(cont);
			line_empty = true;
		}
		if (!line_empty) {
			buf_putc(b, ' ');
			col++;
		}
		buf_add(b, p, w);
		col += w;
		line_empty = false;
		p += w;
	}
	buf_putc(b, '\n');
}

/* The first sentence of S (up to and including the first ". "), trimmed. */
static char *first_sentence(const char *s)
{
	while (*s == ' ')
		s++;
	const char *end = strstr(s, ". ");
	size_t n = end ? (size_t)(end - s) + 1 : strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		n--;
	return xstrndup(s, n);
}

/* Appends S, ending it with a full stop unless it already has one. */
static void put_sentence(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	buf_puts(b, s);
	if (n && s[n - 1] != '.' && s[n - 1] != '!' && s[n - 1] != '?')
		buf_putc(b, '.');
}

static void bullet(struct buf *b, const struct finding *f, const char *tail_label, const char *tail)
{
	struct buf t = BUF_INIT;
	buf_printf(&t, "%s %s, line %u: ", rule_code(f->rule), rule_name(f->rule), f->pos.line);
	put_sentence(&t, f->message && *f->message ? f->message : rule_summary(f->rule));
	if (tail && *tail) {
		char *s = first_sentence(tail);
		/* the analysis writes its reasons in lower case; here they start a sentence */
		if (!*tail_label && s[0] >= 'a' && s[0] <= 'z')
			s[0] = (char)(s[0] - 'a' + 'A');
		buf_printf(&t, " %s", tail_label);
		put_sentence(&t, s);
		free(s);
	}
	wrap(b, "- ", "  ", buf_cstr(&t), MESSAGE_BODY_WIDTH);
	buf_release(&t);
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
	buf_puts(&b, "\n\n");
	wrap(&b, "", "", "Make this code safe under the 2.6 preemptible kernel.", MESSAGE_BODY_WIDTH);

	for (int pass = 0; pass < 2; pass++) {
		size_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += pass == 0 ? changes[i]->fixed.len : changes[i]->refused.len;
		if (total == 0)
			continue;
		buf_printf(&b, "\n%s\n", pass == 0 ? MESSAGE_FIXED_HEADING : MESSAGE_REFUSED_HEADING);
		for (size_t i = 0; i < n; i++) {
			const struct file_change *c = changes[i];
			size_t count = pass == 0 ? c->fixed.len : c->refused.len;
			if (count == 0)
				continue;
			buf_putc(&b, '\n');
			if (n > 1)
				buf_printf(&b, "%s:\n", paths[i]);
			for (size_t k = 0; k < count; k++) {
				if (pass == 0) {
					const struct finding *f = c->fixed.items[k];
					bullet(&b, f, "", f->evidence);
				} else {
					const struct refusal *r = &c->refused.items[k];
					bullet(&b, r->finding, "Not changed: ", r->reason);
				}
			}
		}
	}
	if (opts->signoff)
		buf_printf(&b, "\nSigned-off-by: %s\n", opts->signoff);
	free(prefix);
	free(summary);
	return buf_detach(&b);
}

void message_count_sites(const char *msg, struct message_sites *out)
{
	int section = -1; /* 0: fixed, 1: refused */
	for (const char *line = msg; line && *line; ) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len == strlen(MESSAGE_FIXED_HEADING) && strncmp(line, MESSAGE_FIXED_HEADING, len) == 0)
			section = 0;
		else if (len == strlen(MESSAGE_REFUSED_HEADING) &&
			 strncmp(line, MESSAGE_REFUSED_HEADING, len) == 0)
			section = 1;
		else if (len >= 14 && strncmp(line, "Signed-off-by:", 14) == 0)
			section = -1;
		else if (section >= 0 && len > 7 && line[0] == '-' && line[1] == ' ') {
			char code[5];
			memcpy(code, line + 2, 4);
			code[4] = '\0';
			int r = line[6] == ' ' ? rule_parse(code) : -1;
			if (r >= 0) {
				if (section == 0)
					out->fixed[r]++;
				else
					out->refused[r]++;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}
