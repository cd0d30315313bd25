/* explain for people: reasons wrapped and split into steps, fixes as before/after diffs (explain.h). */
#include "cli/explain.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/edit_text.h"
#include "fix/textdiff.h"

size_t explain_width(void)
{
	const char *c = getenv("COLUMNS");
	long w = c && *c ? strtol(c, NULL, 10) : 0;
	struct winsize ws;
	if (w <= 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		w = ws.ws_col;
	if (w <= 0)
		return SIZE_MAX; /* not a terminal: lines as long as they are, for grep */
	return w < 40 ? 40 : (size_t)w;
}

/* Prints LINE (LEN bytes) wrapped at WIDTH, indented by DEPTH steps under the label's indent. */
static void put_step(const char *line, size_t len, unsigned depth, size_t width)
{
	struct buf in = BUF_INIT, out = BUF_INIT;
	char *first = xasprintf("%*s", (int)(4 + 2 * depth), "");
	char *rest = xasprintf("%*s", (int)(6 + 2 * depth), "");
	buf_add(&in, line, len);
	buf_add_wrapped(&out, buf_cstr(&in), first, rest, width);
	fputs(buf_cstr(&out), stdout);
	free(first);
	free(rest);
	buf_release(&in);
	buf_release(&out);
}

void explain_print_reasons(const char *label, const char *text)
{
	size_t width = explain_width();
	printf("  %s\n", label);
	if (width == SIZE_MAX) { /* not a terminal: the reasoning's own lines, for scripts */
		for (const char *l = text; *l;) {
			size_t n = strcspn(l, "\n");
			printf("    %.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
		return;
	}
	/* a group opens after a blank (" ("); a call's parentheses do not */
	bool group[64];
	unsigned n = 0, depth = 0;
	size_t start = 0;
	for (size_t i = 0;; i++) {
		char c = text[i];
		bool opens = c == '(' && i > 0 && text[i - 1] == ' ' && n < 64;
		bool closes = c == ')' && n && group[n - 1];
		bool clause = c == '\n' || (c == ';' && text[i + 1] == ' ');
		if (c && !opens && !closes && !clause) {
			if (c == '(' && n < 64)
				group[n++] = false;
			else if (c == ')' && n)
				n--;
			continue;
		}
		size_t end = i;
		while (end > start && (text[end - 1] == ' ' || text[end - 1] == ','))
			end--;
		while (start < end && text[start] == ' ')
			start++;
		if (end > start)
			put_step(text + start, end - start, depth, width);
		if (!c)
			break;
		if (opens) {
			group[n++] = true;
			depth++;
		} else if (closes) {
			n--;
			depth--;
		}
		start = i + 1;
	}
}

/* Prints the hunks of DIFF (a unified diff with its file headers), each line indented. */
static void put_hunks(const char *diff)
{
	bool in_hunk = false;
	for (const char *l = diff; *l;) {
		size_t n = strcspn(l, "\n");
		in_hunk = in_hunk || strncmp(l, "@@", 2) == 0;
		if (in_hunk)
			printf("    %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
}

void explain_print_fix(const struct finding *f, const char *src, size_t len)
{
	static const char *const ops[] = {"replace", "insert-before", "insert-after"};
	const char *what = fix_phrases(f->fix)->alone;
	printf("  fix: %s%s%s%s\n", fix_name(f->fix), what ? " (" : "", what ? what : "", what ? ")" : "");
	size_t new_len = 0;
	char *after = src ? edit_text_apply(f, src, len, &new_len) : NULL;
	struct buf diff = BUF_INIT;
	struct textdiff_options o = TEXTDIFF_OPTIONS_INIT;
	o.context = 1;
	if (after && textdiff_unified(&diff, f->file, src, len, after, new_len, &o) == 0 && diff.len) {
		put_hunks(buf_cstr(&diff));
	} else {
		for (size_t k = 0; k < f->edits.len; k++) {
			const struct edit *e = &f->edits.items[k];
			printf("    %s line %u: %s\n", ops[e->op], e->start.line, e->text ? e->text : "");
		}
	}
	error_clear();
	buf_release(&diff);
	free(after);
}
