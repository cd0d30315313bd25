/*
 * Emit: a scan_result as compiler-style text, JSON (docs/json-schema.md) or
 * SARIF 2.1.0. Output is a pure function of the result: no clock, no
 * working directory, no absolute paths that were not given, so two runs on
 * the same tree give byte-identical output.
 */
#include "cli/emit.h"

#include <stdlib.h>
#include <string.h>

#ifndef PREEMPTIFY_VERSION
#define PREEMPTIFY_VERSION "0"
#endif
/* SARIF tool.driver.informationUri; a placeholder until the project has a public home. */
#ifndef PREEMPTIFY_INFO_URI
#define PREEMPTIFY_INFO_URI "https://preemptify.invalid/"
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
 * Writes TEXT as notes at F's location, "file:line:col: note: LABEL: ...",
 * one per line (later lines indented under the first), so that every line
 * of -v output is one entry of an editor's quickfix list.
 */
static void put_notes(FILE *out, const struct finding *f, const char *label, const char *text)
{
	const char *p = text;
	bool first = true;
	do {
		size_t n = strcspn(p, "\n");
		fprintf(out, "%s:%u:%u: note: %s%*s%.*s\n", f->file, f->pos.line, f->pos.column,
			first ? label : "", first ? 0 : (int)strlen(label), "", (int)n, p);
		first = false;
		p += n + (p[n] == '\n');
	} while (*p);
}

static void text_finding(FILE *out, const struct finding *f, bool verbose)
{
	if (f->protected_site) {
		fprintf(out, "%s:%u:%u: note: protected: %s [%s]\n", f->file, f->pos.line, f->pos.column,
			f->message, rule_code(f->rule));
	} else {
		fprintf(out, "%s:%u:%u: %s: %s [%s]\n", f->file, f->pos.line, f->pos.column,
			severity_name(f->severity), f->message, rule_code(f->rule));
	}
	if (!verbose)
		return;
	if (f->evidence && *f->evidence)
		put_notes(out, f, "why: ", f->evidence);
	if (!f->protected_site) {
		char *fix = xasprintf("%s%s%s", fix_name(f->fix), f->fix_note ? " - " : "",
				      f->fix_note ? f->fix_note : "");
		put_notes(out, f, "fix: ", fix);
		free(fix);
	}
}

static void text_diagnostic(FILE *out, const struct diagnostic *d)
{
	const char *level = d->kind == DIAG_UNPARSED ? "note" : "error";
	const char *msg = diag_text(d);
	const char *prefix = d->kind == DIAG_UNPARSED && strncmp(msg, "unparsed: ", 10) != 0 ? "unparsed: " : "";
	if (d->line)
		fprintf(out, "%s:%u:%u: %s: %s%s\n", d->file, d->line, d->column, level, prefix, msg);
	else
		fprintf(out, "%s: %s: %s%s\n", d->file, level, prefix, msg);
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

/* Findings and diagnostics (each sorted) merged so a file's lines stay together. */
static void emit_text(FILE *out, const struct scan_result *r, bool verbose)
{
	size_t i = 0, k = 0;
	while (i < r->findings.len || k < r->diagnostics.len) {
		if (k < r->diagnostics.len &&
		    (i == r->findings.len || diag_first(&r->diagnostics.items[k], &r->findings.items[i]))) {
			text_diagnostic(out, &r->diagnostics.items[k++]);
			continue;
		}
		const struct finding *f = &r->findings.items[i++];
		if (shown(f, verbose))
			text_finding(out, f, verbose);
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
	json_kv(b, "evidence", f->evidence ? f->evidence : "", false);
	json_kv(b, "fix_note", f->fix_note, false);
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
	size_t per_rule[RULE_COUNT] = {0}, flagged = 0, protected_sites = 0;
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
	buf_printf(&b, "  \"stats\": {\"files\": %zu, \"bytes\": %zu, \"parsed\": %zu, \"findings\": %zu",
		   r->stats.files, r->stats.bytes, r->stats.parsed, flagged);
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
static const char *rule_default_level(enum rule_id r)
{
	return sarif_level(rule_severity(r));
}

/*
 * A path as a URI reference: relative paths (without "./") are resolved
 * against %SRCROOT%; absolute ones become file:// URIs. Bytes outside the
 * RFC 3986 unreserved and sub-delim sets are percent-encoded.
 */
static void sarif_uri(struct buf *b, const char *path, bool *out_relative)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	*out_relative = path[0] != '/';
	if (!*out_relative)
		buf_puts(b, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/!$&'()*+,;=:@", *p))
			buf_putc(b, (char)*p);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

/* One location object; FUNCTION (may be NULL) adds a logical location. */
static void sarif_location(struct buf *b, const char *file, unsigned line, unsigned column,
			   const char *function)
{
	struct buf uri = BUF_INIT;
	bool relative;
	sarif_uri(&uri, file, &relative);
	buf_puts(b, "{\"physicalLocation\": {\"artifactLocation\": {");
	json_kv(b, "uri", buf_cstr(&uri), true);
	if (relative)
		buf_puts(b, ", \"uriBaseId\": \"%SRCROOT%\"");
	buf_putc(b, '}');
	if (line) {
		buf_printf(b, ", \"region\": {\"startLine\": %u", line);
		if (column)
			buf_printf(b, ", \"startColumn\": %u", column);
		buf_putc(b, '}');
	}
	buf_putc(b, '}');
	if (function) {
		buf_puts(b, ", \"logicalLocations\": [{");
		json_kv(b, "name", function, true);
		buf_puts(b, ", \"kind\": \"function\"}]");
	}
	buf_putc(b, '}');
	buf_release(&uri);
}

static void sarif_rules(struct buf *b)
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
		buf_puts(b, "}, \"defaultConfiguration\": {");
		json_kv(b, "level", rule_default_level(r), true);
		buf_puts(b, "}}");
	}
}

static void sarif_result(struct buf *b, const struct finding *f)
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
	sarif_location(b, f->file, f->pos.line, f->pos.column, f->function);
	buf_puts(b, "], \"properties\": {");
	json_kv(b, "confidence", confidence_name(f->confidence), true);
	json_kv(b, "fix", fix_name(f->fix), false);
	json_kv(b, "evidence", f->evidence ? f->evidence : "", false);
	if (f->fix_note)
		json_kv(b, "fixNote", f->fix_note, false);
	buf_puts(b, "}}");
}

static void emit_sarif(FILE *out, const struct scan_result *r, bool verbose)
{
	struct buf b = BUF_INIT;
	bool failed = false;
	buf_puts(&b, "{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
		 "  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n"
		 "      \"tool\": {\"driver\": {\"name\": \"preemptify\", \"version\": ");
	json_str(&b, PREEMPTIFY_VERSION);
	buf_puts(&b, ", \"informationUri\": \"" PREEMPTIFY_INFO_URI "\",\n        \"rules\": [");
	sarif_rules(&b);
	buf_puts(&b, "\n        ]}},\n      \"results\": [");
	bool first = true;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (!shown(f, verbose))
			continue;
		buf_puts(&b, first ? "\n        " : ",\n        ");
		first = false;
		sarif_result(&b, f);
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
		sarif_location(&b, d->file, d->line, d->column, NULL);
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
	case FORMAT_TEXT: emit_text(out, r, verbose); break;
	case FORMAT_JSON: emit_json(out, r, verbose); break;
	case FORMAT_SARIF: emit_sarif(out, r, verbose); break;
	}
}

void emit_summary(FILE *out, const struct scan_result *r)
{
	size_t per_rule[RULE_COUNT] = {0}, total = 0;
	for (size_t i = 0; i < r->findings.len; i++)
		if (!r->findings.items[i].protected_site) {
			per_rule[r->findings.items[i].rule]++;
			total++;
		}
	fprintf(out, "preemptify: %zu finding%s", total, total == 1 ? "" : "s");
	const char *sep = " (";
	for (int k = 0; k < RULE_COUNT; k++)
		if (per_rule[k]) {
			fprintf(out, "%s%s: %zu", sep, rule_code((enum rule_id)k), per_rule[k]);
			sep = ", ";
		}
	fprintf(out, "%s in %zu file%s", total ? ")" : "", r->stats.files, r->stats.files == 1 ? "" : "s");
	if (r->diagnostics.len)
		fprintf(out, ", %zu diagnostic%s", r->diagnostics.len, r->diagnostics.len == 1 ? "" : "s");
	fputc('\n', out);
	if (r->tree) {
		const struct tree_stats *t = tree_context_stats(r->tree);
		fprintf(out, "preemptify: callers across files: %zu function%s followed, %zu found atomic "
			"(%zu files parsed, %u round%s, %.2f s)\n", t->names, t->names == 1 ? "" : "s",
			t->atomic, t->files_analysed, t->rounds, t->rounds == 1 ? "" : "s", t->seconds);
	}
}
