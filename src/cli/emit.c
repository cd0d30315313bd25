/*
 * Emit: a scan_result as compiler-style text, JSON (docs/json-schema.md) or
 * SARIF 2.1.0. Output is a pure function of the result (and, for SARIF,
 * of the struct sarif_run the caller passes): no clock, no working
 * directory read here, so two runs on the same tree give byte-identical
 * output.
 */
#include "cli/emit.h"

#include "cli/account.h"
#include "cli/edit_text.h"

#include <stdlib.h>
#include <string.h>

#ifndef PREEMPTIFY_VERSION
#define PREEMPTIFY_VERSION "0"
#endif
/* Where `cmake --install` puts rules.md (SARIF helpUri). */
#ifndef PREEMPTIFY_DOCDIR
#define PREEMPTIFY_DOCDIR "/usr/local/share/doc/preemptify"
#endif

int output_format_parse(const char *s)
{
	static const char *const names[] = {[FORMAT_TEXT] = "text", [FORMAT_JSON] = "json",
					    [FORMAT_SARIF] = "sarif"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

static const char *edit_op_name(enum edit_op op)
{
	static const char *const n[] = {"replace", "insert-before", "insert-after"};
	return n[op];
}

static const char *diag_kind_name(enum diag_kind k)
{
	static const char *const n[] = {"unparsed", "io", "tool"};
	return n[k];
}

/* Findings shown: every flagged one, protected sites only when verbose. */
static bool shown(const struct finding *f, bool verbose)
{
	return !f->protected_site || verbose;
}

/* The message without a leading "FILE: " (read_file() and walk name the path themselves). */
static const char *diag_text(const struct diagnostic *d)
{
	return after_path(d->message, d->file);
}

/* ---- text ---------------------------------------------------------------- */

/*
 * Colours as gcc paints its diagnostics (GCC_COLORS' defaults): the
 * location bold, the level and the [rule] tag in the level's colour.
 * Without colour every escape is "".
 */
struct paint {
	const char *bold, *level, *reset;
};

static struct paint paint_for(bool color, const char *level)
{
	if (!color)
		return (struct paint){"", "", ""};
	const char *c = strcmp(level, "error") == 0 ? "\033[01;31m" : strcmp(level, "warning") == 0 ? "\033[01;35m" :
											   "\033[01;36m";
	return (struct paint){"\033[01m", c, "\033[m"};
}

/*
 * Writes TEXT as notes at F's location, "file:line:col: note: LABEL: ...",
 * one per line (later lines indented under the first), so that every line
 * of -v output is one entry of an editor's quickfix list.
 */
static void put_notes(FILE *out, const struct finding *f, const char *label, const char *text, bool color)
{
	struct paint p = paint_for(color, "note");
	const char *t = text;
	bool first = true;
	do {
		size_t n = strcspn(t, "\n");
		fprintf(out, "%s%s:%u:%u:%s %snote:%s %s%*s%.*s\n", p.bold, f->file, f->pos.line, f->pos.column,
			p.reset, p.level, p.reset, first ? label : "", first ? 0 : (int)strlen(label), "", (int)n, t);
		first = false;
		t += n + (t[n] == '\n');
	} while (*t);
}

static void text_finding(FILE *out, const struct finding *f, bool verbose, bool color)
{
	const char *level = f->protected_site ? "note" : severity_name(f->severity);
	struct paint p = paint_for(color, level);
	fprintf(out, "%s%s:%u:%u:%s %s%s:%s %s%s [%s%s%s%s]\n", p.bold, f->file, f->pos.line, f->pos.column,
		p.reset, p.level, level, p.reset, f->protected_site ? "protected: " : "", f->message, p.level,
		rule_code(f->rule), !f->protected_site && f->fix != FIX_NONE ? ", fixable" : "", p.reset);
	if (!verbose)
		return;
	if (f->evidence && *f->evidence)
		put_notes(out, f, "why: ", f->evidence, color);
	if (!f->protected_site) {
		char *fix = xasprintf("%s%s%s", fix_name(f->fix), f->fix_note ? " - " : "",
				      f->fix_note ? f->fix_note : "");
		put_notes(out, f, "fix: ", fix, color);
		free(fix);
	}
}

static void text_diagnostic(FILE *out, const struct diagnostic *d, bool color)
{
	const char *level = d->kind == DIAG_UNPARSED ? "note" : "error";
	struct paint p = paint_for(color, level);
	const char *msg = diag_text(d);
	const char *prefix = d->kind == DIAG_UNPARSED && strncmp(msg, "unparsed: ", 10) != 0 ? "unparsed: " : "";
	if (d->line)
		fprintf(out, "%s%s:%u:%u:%s %s%s:%s %s%s\n", p.bold, d->file, d->line, d->column, p.reset, p.level,
			level, p.reset, prefix, msg);
	else
		fprintf(out, "%s%s:%s %s%s:%s %s%s\n", p.bold, d->file, p.reset, p.level, level, p.reset, prefix, msg);
}

/* Diagnostic D goes before finding F: same file order, position order. */
static bool diag_first(const struct diagnostic *d, const struct finding *f)
{
	int c = strcmp(d->file, f->file);
	if (c)
		return c < 0;
	if (d->line != f->pos.line)
		return d->line < f->pos.line;
	return d->column <= f->pos.column;
}

void emit_text(FILE *out, const struct scan_result *r, bool verbose, bool color)
{
	size_t i = 0, k = 0;
	while (i < r->findings.len || k < r->diagnostics.len) {
		if (k < r->diagnostics.len &&
		    (i == r->findings.len || diag_first(&r->diagnostics.items[k], &r->findings.items[i]))) {
			text_diagnostic(out, &r->diagnostics.items[k++], color);
			continue;
		}
		const struct finding *f = &r->findings.items[i++];
		if (shown(f, verbose))
			text_finding(out, f, verbose, color);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_str(struct buf *b, const char *s)
{
	if (!s) {
		buf_puts(b, "null");
		return;
	}
	buf_putc(b, '"');
	buf_json_str(b, s);
	buf_putc(b, '"');
}

/* "key": "value" with a leading ", " unless FIRST. */
static void json_kv(struct buf *b, const char *key, const char *val, bool first)
{
	buf_printf(b, "%s\"%s\": ", first ? "" : ", ", key);
	json_str(b, val);
}

/* "key": "value", or null when VAL is absent or empty: nothing to say is null, never "". */
static void json_kv_opt(struct buf *b, const char *key, const char *val)
{
	json_kv(b, key, val && *val ? val : NULL, false);
}

static void json_pos(struct buf *b, const char *key, unsigned v)
{
	if (v)
		buf_printf(b, ", \"%s\": %u", key, v);
	else
		buf_printf(b, ", \"%s\": null", key);
}

static void json_finding(struct buf *b, const struct finding *f, bool verbose)
{
	buf_putc(b, '{');
	json_kv(b, "file", f->file, true);
	buf_printf(b, ", \"line\": %u, \"column\": %u", f->pos.line, f->pos.column);
	json_kv(b, "function", f->function, false);
	json_kv(b, "rule", rule_code(f->rule), false);
	json_kv(b, "rule_name", rule_name(f->rule), false);
	json_kv(b, "severity", severity_name(f->severity), false);
	json_kv(b, "confidence", confidence_name(f->confidence), false);
	buf_printf(b, ", \"fixable\": %s", f->fix != FIX_NONE ? "true" : "false");
	json_kv(b, "fix", fix_name(f->fix), false);
	json_kv(b, "message", f->message, false);
	json_kv_opt(b, "evidence", f->evidence);
	json_kv_opt(b, "fix_note", f->fix_note);
	if (verbose)
		buf_printf(b, ", \"protected\": %s", f->protected_site ? "true" : "false");
	buf_puts(b, ", \"edits\": [");
	for (size_t k = 0; k < f->edits.len; k++) {
		const struct edit *e = &f->edits.items[k];
		buf_puts(b, k ? ", {" : "{");
		json_kv(b, "op", edit_op_name(e->op), true);
		buf_printf(b, ", \"line\": %u, \"column\": %u, \"end_line\": %u, \"end_column\": %u",
			   e->start.line, e->start.column, e->end.line, e->end.column);
		json_kv(b, "node", e->node, false);
		json_kv(b, "text", e->text ? e->text : "", false);
		buf_putc(b, '}');
	}
	buf_puts(b, "]}");
}

static void emit_json(FILE *out, const struct scan_result *r, bool verbose)
{
	struct buf b = BUF_INIT;
	size_t per_rule[RULE_COUNT] = {0}, flagged = 0, fixable = 0, protected_sites = 0;
	buf_puts(&b, "{\n  \"version\": 1,\n  \"tool\": {\"name\": \"preemptify\", \"version\": ");
	json_str(&b, PREEMPTIFY_VERSION);
	buf_puts(&b, "},\n  \"findings\": [");
	bool first = true;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->protected_site)
			protected_sites++;
		else {
			flagged++;
			fixable += f->fix != FIX_NONE;
			per_rule[f->rule]++;
		}
		if (!shown(f, verbose))
			continue;
		buf_puts(&b, first ? "\n    " : ",\n    ");
		first = false;
		json_finding(&b, f, verbose);
	}
	buf_puts(&b, first ? "],\n" : "\n  ],\n");
	buf_puts(&b, "  \"diagnostics\": [");
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		buf_puts(&b, i ? ",\n    {" : "\n    {");
		json_kv(&b, "kind", diag_kind_name(d->kind), true);
		json_kv(&b, "file", d->file, false);
		json_pos(&b, "line", d->line);
		json_pos(&b, "column", d->column);
		json_kv(&b, "message", d->message, false);
		buf_putc(&b, '}');
	}
	buf_puts(&b, r->diagnostics.len ? "\n  ],\n" : "],\n");
	buf_printf(&b, "  \"stats\": {\"files\": %zu, \"bytes\": %zu, \"parsed\": %zu, \"findings\": %zu, "
		   "\"fixable\": %zu", r->stats.files, r->stats.bytes, r->stats.parsed, flagged, fixable);
	if (verbose)
		buf_printf(&b, ", \"protected\": %zu", protected_sites);
	buf_printf(&b, ", \"diagnostics\": %zu, \"per_rule\": {", r->diagnostics.len);
	for (int k = 0; k < RULE_COUNT; k++)
		buf_printf(&b, "%s\"%s\": %zu", k ? ", " : "", rule_code((enum rule_id)k), per_rule[k]);
	buf_puts(&b, "}}\n}\n");
	fwrite(b.ptr, 1, b.len, out);
	buf_release(&b);
}

/* ---- SARIF 2.1.0 --------------------------------------------------------- */

static const char *sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

/* The level a rule's findings usually have (a finding may still differ). */
/*
 * The rule's defaultConfiguration level: its usual severity, or "warning"
 * when some of its results in R are warnings. Every result names its level,
 * which wins by the spec, but SARIF viewers built on Microsoft's SDK
 * (Multitool 5.7) take an explicit "warning" for "absent" and show the
 * default: an irq-only P006 would show as an error.
 */
static const char *rule_default_level(enum rule_id r, const struct scan_result *res)
{
	for (size_t i = 0; i < res->findings.len; i++)
		if (res->findings.items[i].rule == r && !res->findings.items[i].protected_site &&
		    res->findings.items[i].severity == SEV_WARNING)
			return "warning";
	return sarif_level(rule_severity(r));
}

/* PATH with the bytes outside RFC 3986's unreserved and sub-delim sets percent-encoded. */
static void uri_encode(struct buf *b, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/!$&'()*+,;=:@", *p))
			buf_putc(b, (char)*p);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

/* ABS (absolute) with "." and ".." resolved and repeated '/' dropped, lexically. Owned. */
static char *path_normalize(const char *abs)
{
	struct buf b = BUF_INIT;
	const char *p = abs;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (b.len && b.ptr[b.len - 1] != '/')
				b.len--;
			if (b.len)
				b.len--;
		} else {
			buf_putc(&b, '/');
			buf_add(&b, p, n);
		}
		p += n;
	}
	if (!b.len)
		buf_putc(&b, '/');
	return buf_detach(&b);
}

/*
 * The artifactLocation of PATH. With RUN's root, a path under it becomes a
 * URI relative to %SRCROOT% (RUN's originalUriBaseIds) and any other a
 * file:// URI; without one, relative paths (less a leading "./") are taken
 * as relative to %SRCROOT% and absolute ones become file:// URIs.
 */
static void sarif_artifact(struct buf *b, const char *path, const struct sarif_run *run)
{
	char *abs = NULL;
	const char *rel = NULL;
	if (run && run->root) {
		char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", run->cwd, path);
		abs = path_normalize(joined);
		free(joined);
		size_t rl = strlen(run->root);
		if (strncmp(abs, run->root, rl) == 0 && abs[rl])
			rel = abs + rl;
	} else {
		while (path[0] == '.' && path[1] == '/')
			path += 2;
		if (path[0] != '/')
			rel = path;
	}
	struct buf uri = BUF_INIT;
	if (!rel)
		buf_puts(&uri, "file://");
	uri_encode(&uri, rel ? rel : abs ? abs : path);
	buf_puts(b, "{");
	json_kv(b, "uri", buf_cstr(&uri), true);
	if (rel)
		buf_puts(b, ", \"uriBaseId\": \"%SRCROOT%\"");
	buf_putc(b, '}');
	buf_release(&uri);
	free(abs);
}

/*
 * A region from START to END (exclusive; columns in bytes). END with line
 * 0 is unknown: the region is then START's line from START's column on
 * (no endColumn: SARIF reads that as the end of the line). A START column
 * of 0 is the whole line.
 */
static void sarif_region(struct buf *b, struct srcpos start, struct srcpos end, bool offsets)
{
	buf_printf(b, "{\"startLine\": %u", start.line);
	if (start.column)
		buf_printf(b, ", \"startColumn\": %u", start.column);
	buf_printf(b, ", \"endLine\": %u", end.line ? end.line : start.line);
	if (end.line && end.column)
		buf_printf(b, ", \"endColumn\": %u", end.column);
	if (offsets)
		buf_printf(b, ", \"byteOffset\": %zu, \"byteLength\": %zu", start.offset,
			   end.offset > start.offset ? end.offset - start.offset : 0);
	buf_putc(b, '}');
}

/*
 * One location object; START line 0: the whole file. FUNCTION (may be
 * NULL) adds a logical location, MESSAGE (may be NULL) a message.
 */
static void sarif_location(struct buf *b, const char *file, struct srcpos start, struct srcpos end,
			   const char *function, const char *message, const struct sarif_run *run)
{
	buf_puts(b, "{\"physicalLocation\": {\"artifactLocation\": ");
	sarif_artifact(b, file, run);
	if (start.line) {
		buf_puts(b, ", \"region\": ");
		sarif_region(b, start, end, false);
	}
	buf_putc(b, '}');
	if (function) {
		buf_puts(b, ", \"logicalLocations\": [{");
		json_kv(b, "name", function, true);
		buf_puts(b, ", \"kind\": \"function\"}]");
	}
	if (message) {
		buf_puts(b, ", \"message\": {");
		json_kv(b, "text", message, true);
		buf_putc(b, '}');
	}
	buf_putc(b, '}');
}

/* The URI of the installed document NAME (under PREEMPTIFY_DOCDIR), with FRAGMENT if not NULL. */
static void doc_uri(struct buf *b, const char *name, const char *fragment)
{
	struct buf uri = BUF_INIT;
	buf_puts(&uri, "file://");
	uri_encode(&uri, PREEMPTIFY_DOCDIR "/");
	uri_encode(&uri, name);
	if (fragment)
		buf_printf(&uri, "#%s", fragment);
	json_str(b, buf_cstr(&uri));
	buf_release(&uri);
}

static void sarif_rules(struct buf *b, const struct scan_result *res)
{
	for (int k = 0; k < RULE_COUNT; k++) {
		enum rule_id r = (enum rule_id)k;
		buf_puts(b, k ? ",\n          {" : "\n          {");
		json_kv(b, "id", rule_code(r), true);
		json_kv(b, "name", rule_name(r), false);
		buf_puts(b, ", \"shortDescription\": {");
		json_kv(b, "text", rule_summary(r), true);
		buf_puts(b, "}, \"fullDescription\": {");
		json_kv(b, "text", rule_help(r), true);
		buf_puts(b, "}, \"help\": {");
		json_kv(b, "text", rule_help(r), true);
		buf_puts(b, "}, \"helpUri\": ");
		doc_uri(b, "rules.md", rule_code(r));
		buf_puts(b, ", \"defaultConfiguration\": {");
		json_kv(b, "level", rule_default_level(r, res), true);
		buf_puts(b, "}}");
	}
}

/* ---- SARIF: fixes from the planned edits ---- */

/* result.fixes: one fix, one artifactChange, the edits' replacements in file order. */
static void sarif_fixes(struct buf *b, const struct finding *f, const struct sarif_run *run)
{
	replacement_vec reps = VEC_INIT;
	for (size_t k = 0; k < f->edits.len; k++)
		edit_replacements(&f->edits.items[k], &reps);
	replacements_sort(&reps);
	buf_puts(b, ", \"fixes\": [{\"description\": {");
	char *what = xasprintf("%s (preemptify fix %s)", fix_phrases(f->fix)->alone, fix_name(f->fix));
	json_kv(b, "text", what, true);
	free(what);
	buf_puts(b, "}, \"artifactChanges\": [{\"artifactLocation\": ");
	sarif_artifact(b, f->file, run);
	buf_puts(b, ", \"replacements\": [");
	for (size_t k = 0; k < reps.len; k++) {
		buf_puts(b, k ? ", {\"deletedRegion\": " : "{\"deletedRegion\": ");
		sarif_region(b, reps.items[k].start, reps.items[k].end, true);
		buf_puts(b, ", \"insertedContent\": {");
		json_kv(b, "text", reps.items[k].text, true);
		buf_puts(b, "}}");
	}
	buf_puts(b, "]}]}]");
	replacements_release(&reps);
}

/* ---- SARIF: the reasoning as a code flow ---- */

/* One place the evidence names: "line 12" (the finding's file) or "path/x.c:12". */
struct evidence_ref {
	const char *file; /* the finding's, or a pointer into the evidence (file_len bytes) */
	size_t file_len;
	unsigned line;
	size_t at, len; /* the reference's bytes in the evidence */
};

static bool path_char(char c)
{
	return is_ident_char(c) || c == '.' || c == '/' || c == '-' || c == '+';
}

/* A reference starting at E[I], or false. */
static bool evidence_ref_at(const char *e, size_t i, const struct finding *f, struct evidence_ref *out)
{
	const char *p = e + i;
	size_t k = 0;
	if (strncmp(p, "line ", 5) == 0 && (i == 0 || !is_ident_char(e[i - 1]))) {
		k = 5;
		out->file = f->file;
		out->file_len = strlen(f->file);
	} else if (path_char(*p) && (i == 0 || !path_char(e[i - 1]))) {
		while (path_char(p[k]))
			k++;
		const char *dot = memchr(p, '.', k);
		if (p[k] != ':' || !dot || p[k - 1] == '.')
			return false;
		out->file = p;
		out->file_len = k;
		k++;
	} else {
		return false;
	}
	if (p[k] < '0' || p[k] > '9')
		return false;
	unsigned long line = 0;
	while (p[k] >= '0' && p[k] <= '9' && line < 100000000)
		line = line * 10 + (unsigned)(p[k++] - '0');
	if (line == 0 || is_ident_char(p[k]))
		return false;
	out->line = (unsigned)line;
	out->at = i;
	out->len = k;
	return true;
}

/*
 * The clause of evidence E around byte AT. Clauses end at "; ", ": ", a
 * newline, and the parentheses of a group (one opened after a blank, not a
 * call's): "from f() at line 3 (g() holds a lock taken at line 2)" is the
 * clause "from f() at line 3" and, one group deeper, the clause "g() holds
 * a lock taken at line 2". *DEPTH is the number of groups open at AT.
 */
static void evidence_clause(const char *e, size_t at, size_t *out_start, size_t *out_end, unsigned *depth)
{
	bool group[64]; /* per open parenthesis: a group, or a call's */
	unsigned n = 0;
	size_t start = 0;
	*depth = 0;
	for (size_t i = 0; i < at; i++) {
		if (e[i] == '(' && n < ARRAY_SIZE(group)) {
			group[n] = i == 0 || e[i - 1] == ' ';
			if (group[n])
				start = i + 1, (*depth)++;
			n++;
		} else if (e[i] == ')' && n) {
			if (group[--n])
				start = i + 1, (*depth)--; /* the clause goes on after the group */
		} else if (e[i] == '\n' || ((e[i] == ';' || e[i] == ':') && e[i + 1] == ' ')) {
			start = i + 1;
		}
	}
	unsigned calls = 0;
	size_t end = at;
	for (; e[end]; end++) {
		if (e[end] == '(' && e[end - 1] == ' ')
			break;
		if (e[end] == '(')
			calls++;
		else if (e[end] == ')' && !calls)
			break;
		else if (e[end] == ')')
			calls--;
		else if (!calls && (e[end] == '\n' || ((e[end] == ';' || e[end] == ':') && e[end + 1] == ' ')))
			break;
	}
	/* a group opening the clause: "tasklet function (DECLARE_TASKLET at line 37)" keeps its head */
	if (start > 1 && e[start - 1] == '(' && e[start - 2] == ' ') {
		size_t h = start - 2;
		for (unsigned closed = 0; h > 0; h--) {
			char ch = e[h - 1];
			if (ch == ')')
				closed++;
			else if (ch == '(' && closed)
				closed--;
			else if (ch == '(' || ch == '\n' || ((ch == ';' || ch == ':') && e[h] == ' '))
				break;
		}
		if (end < strlen(e) && e[end] == ')')
			end++;
		start = h;
	}
	while (e[start] == ' ')
		start++;
	while (end > start && e[end - 1] == ' ')
		end--;
	if (end > start && e[end - 1] == ',')
		end--;
	*out_start = start;
	*out_end = end;
}

/*
 * result.codeFlows: the places the reasoning names (a lock taken at line N,
 * a caller at FILE:N, a registration ...), each with the clause that names
 * it and its nesting in the reasoning, then the site itself. Nothing when
 * the reasoning names no place.
 */
static void sarif_code_flow(struct buf *b, const struct finding *f, const struct sarif_run *run)
{
	const char *e = f->evidence ? f->evidence : "";
	bool any = false;
	for (size_t i = 0; e[i]; i++) {
		struct evidence_ref ref;
		if (!evidence_ref_at(e, i, f, &ref))
			continue;
		size_t cs, ce;
		unsigned depth;
		evidence_clause(e, ref.at, &cs, &ce, &depth);
		char *file = xstrndup(ref.file, ref.file_len), *text = xstrndup(e + cs, ce - cs);
		struct srcpos line = {ref.line, 0, 0}, none = {0, 0, 0};
		buf_puts(b, any ? ",\n          " : ", \"codeFlows\": [{\"threadFlows\": [{\"locations\": [\n          ");
		any = true;
		buf_puts(b, "{\"location\": ");
		sarif_location(b, file, line, none, NULL, text, run);
		buf_printf(b, ", \"nestingLevel\": %u}", depth);
		free(file);
		free(text);
		i = ref.at + ref.len - 1;
	}
	if (!any)
		return;
	buf_puts(b, ",\n          {\"location\": ");
	sarif_location(b, f->file, f->pos, f->end, f->function, f->message, run);
	buf_puts(b, ", \"nestingLevel\": 0}]}]}]");
}

static void sarif_result(struct buf *b, const struct finding *f, const struct sarif_run *run)
{
	buf_puts(b, "{");
	json_kv(b, "ruleId", rule_code(f->rule), true);
	buf_printf(b, ", \"ruleIndex\": %d", (int)f->rule);
	if (f->protected_site)
		buf_puts(b, ", \"kind\": \"pass\", \"level\": \"none\"");
	else
		buf_printf(b, ", \"kind\": \"fail\", \"level\": \"%s\"", sarif_level(f->severity));
	buf_puts(b, ", \"message\": {");
	json_kv(b, "text", f->message, true);
	buf_puts(b, "}, \"locations\": [");
	sarif_location(b, f->file, f->pos, f->end, f->function, NULL, run);
	buf_putc(b, ']');
	sarif_code_flow(b, f, run);
	if (!f->protected_site && f->fix != FIX_NONE && f->edits.len)
		sarif_fixes(b, f, run);
	buf_puts(b, ", \"properties\": {");
	json_kv(b, "confidence", confidence_name(f->confidence), true);
	json_kv(b, "fix", fix_name(f->fix), false);
	/* a property bag leaves out what is absent, as SARIF does */
	if (f->evidence && *f->evidence)
		json_kv(b, "evidence", f->evidence, false);
	if (f->fix_note && *f->fix_note)
		json_kv(b, "fixNote", f->fix_note, false);
	buf_puts(b, "}}");
}

/* run.originalUriBaseIds and run.versionControlProvenance, from RUN. */
static void sarif_run_info(struct buf *b, const struct sarif_run *run)
{
	if (!run || !run->root)
		return;
	struct buf uri = BUF_INIT;
	buf_puts(&uri, "file://");
	uri_encode(&uri, run->root);
	buf_puts(b, "      \"originalUriBaseIds\": {\"%SRCROOT%\": {");
	json_kv(b, "uri", buf_cstr(&uri), true);
	buf_puts(b, ", \"description\": {");
	json_kv(b, "text", run->in_git ? "the root of the git working tree scanned" : "the directory preemptify ran in",
		true);
	buf_puts(b, "}}},\n");
	if (run->in_git) {
		buf_puts(b, "      \"versionControlProvenance\": [{");
		json_kv(b, "repositoryUri", run->repo_uri ? run->repo_uri : buf_cstr(&uri), true);
		if (run->revision)
			json_kv(b, "revisionId", run->revision, false);
		if (run->branch)
			json_kv(b, "branch", run->branch, false);
		buf_puts(b, ", \"mappedTo\": {\"uriBaseId\": \"%SRCROOT%\"}}],\n");
	}
	buf_release(&uri);
}

void emit_sarif(FILE *out, const struct scan_result *r, bool verbose, const struct sarif_run *run)
{
	struct buf b = BUF_INIT;
	bool failed = false;
	buf_puts(&b, "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
		 "  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n"
		 "      \"tool\": {\"driver\": {\"name\": \"preemptify\", \"version\": ");
	json_str(&b, PREEMPTIFY_VERSION);
	/* no informationUri: the project names no public home page, and a file:// path of
	 * this machine means nothing where the log is read (SARIF allows leaving it out);
	 * each rule carries its help text (fullDescription, help) */
	buf_puts(&b, ",\n        \"rules\": [");
	sarif_rules(&b, r);
	buf_puts(&b, "\n        ]}},\n");
	sarif_run_info(&b, run);
	buf_puts(&b, "      \"results\": [");
	bool first = true;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (!shown(f, verbose))
			continue;
		buf_puts(&b, first ? "\n        " : ",\n        ");
		first = false;
		sarif_result(&b, f, run);
	}
	buf_puts(&b, first ? "],\n" : "\n      ],\n");
	/* Diagnostics are not results: they say what the tool could not do. */
	buf_puts(&b, "      \"invocations\": [{\"toolExecutionNotifications\": [");
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		if (d->kind != DIAG_UNPARSED)
			failed = true;
		buf_puts(&b, i ? ",\n          {" : "\n          {");
		json_kv(&b, "level", d->kind == DIAG_UNPARSED ? "note" : "error", true);
		buf_puts(&b, ", \"descriptor\": {");
		json_kv(&b, "id", diag_kind_name(d->kind), true);
		buf_puts(&b, "}, \"message\": {");
		json_kv(&b, "text", d->message, true);
		buf_puts(&b, "}, \"locations\": [");
		struct srcpos start = {d->line, d->column, 0}, end = {d->end_column ? d->line : 0, d->end_column, 0};
		sarif_location(&b, d->file, start, end, NULL, NULL, run);
		buf_puts(&b, "]}");
	}
	buf_printf(&b, "%s], \"executionSuccessful\": %s}]\n    }\n  ]\n}\n",
		   r->diagnostics.len ? "\n        " : "", failed ? "false" : "true");
	fwrite(b.ptr, 1, b.len, out);
	buf_release(&b);
}

void emit_result(FILE *out, enum output_format fmt, const struct scan_result *r, bool verbose)
{
	switch (fmt) {
	case FORMAT_TEXT: emit_text(out, r, verbose, false); break;
	case FORMAT_JSON: emit_json(out, r, verbose); break;
	case FORMAT_SARIF: emit_sarif(out, r, verbose, NULL); break;
	}
}

void emit_summary(FILE *out, const struct scan_result *r)
{
	struct account a = ACCOUNT_INIT;
	struct buf b = BUF_INIT;
	size_t total = 0;
	account_build(r, NULL, NULL, NULL, &a);
	for (size_t i = 0; i < r->findings.len; i++)
		total += !r->findings.items[i].protected_site;
	buf_printf(&b, "preemptify: %zu finding%s in %zu file%s", total, total == 1 ? "" : "s", r->stats.files,
		   r->stats.files == 1 ? "" : "s");
	if (r->stats.parsed == 0 && r->stats.files) /* the prefilter's: no file it skips can hold a site */
		buf_printf(&b, " (not analysed: %s no preemption word)", r->stats.files == 1 ? "it holds" : "they hold");
	else if (r->stats.parsed < r->stats.files)
		buf_printf(&b, " (%zu analysed, the other%s no preemption word)", r->stats.parsed,
			   r->stats.files - r->stats.parsed == 1 ? " holds" : "s hold");
	if (total)
		buf_printf(&b, ": %zu fixable by preemptify diff, %zu need%s hand work", a.fixed, a.left,
			   a.left == 1 ? "s" : "");
	if (a.notes)
		buf_printf(&b, ", %zu note%s need%s no change", a.notes, a.notes == 1 ? "" : "s", a.notes == 1 ? "s" : "");
	if (r->diagnostics.len)
		buf_printf(&b, "; %zu diagnostic%s", r->diagnostics.len, r->diagnostics.len == 1 ? "" : "s");
	buf_putc(&b, '\n');
	fputs(buf_cstr(&b), out);
	buf_release(&b);
	account_release(&a);
}
