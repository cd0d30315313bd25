#include "emit.h"

#include <string.h>

int output_format_parse(const char *s)
{
	if (strcmp(s, "text") == 0)
		return FORMAT_TEXT;
	if (strcmp(s, "json") == 0)
		return FORMAT_JSON;
	if (strcmp(s, "sarif") == 0)
		return FORMAT_SARIF;
	return -1;
}

static void emit_text(FILE *out, const struct scan_result *r, bool verbose)
{
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->protected_site) {
			if (verbose)
				fprintf(out, "%s:%u:%u: note: protected: %s: %s [%s]\n", f->file, f->pos.line,
					f->pos.column, f->message, f->evidence, rule_code(f->rule));
			continue;
		}
		fprintf(out, "%s:%u:%u: %s: %s [%s]\n", f->file, f->pos.line, f->pos.column,
			severity_name(f->severity), f->message, rule_code(f->rule));
		if (verbose) {
			fprintf(out, "    why: %s\n", f->evidence);
			fprintf(out, "    fix: %s%s%s\n", fix_name(f->fix), f->fix_note ? " - " : "",
				f->fix_note ? f->fix_note : "");
		}
	}
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		if (d->line)
			fprintf(out, "%s:%u:%u: note: %s\n", d->file, d->line, d->column, d->message);
		else
			fprintf(out, "%s: error: %s\n", d->file, d->message);
	}
}

static void json_kv(struct buf *b, const char *key, const char *val, bool comma)
{
	buf_printf(b, "\"%s\": ", key);
	if (!val) {
		buf_puts(b, "null");
	} else {
		buf_putc(b, '"');
		buf_json_str(b, val);
		buf_putc(b, '"');
	}
	if (comma)
		buf_puts(b, ", ");
}

static void json_finding(struct buf *b, const struct finding *f, bool verbose)
{
	static const char *const ops[] = {"replace", "insert-before", "insert-after"};
	buf_puts(b, "{");
	json_kv(b, "file", f->file, true);
	buf_printf(b, "\"line\": %u, \"column\": %u, ", f->pos.line, f->pos.column);
	json_kv(b, "function", f->function, true);
	json_kv(b, "rule", rule_code(f->rule), true);
	json_kv(b, "rule_name", rule_name(f->rule), true);
	json_kv(b, "severity", severity_name(f->severity), true);
	json_kv(b, "confidence", confidence_name(f->confidence), true);
	buf_printf(b, "\"fixable\": %s, ", f->fix != FIX_NONE ? "true" : "false");
	json_kv(b, "fix", fix_name(f->fix), true);
	json_kv(b, "message", f->message, true);
	json_kv(b, "evidence", f->evidence, true);
	json_kv(b, "fix_note", f->fix_note, true);
	if (verbose)
		buf_printf(b, "\"protected\": %s, ", f->protected_site ? "true" : "false");
	buf_puts(b, "\"edits\": [");
	for (size_t k = 0; k < f->edits.len; k++) {
		const struct edit *e = &f->edits.items[k];
		buf_printf(b, "%s{\"op\": \"%s\", \"line\": %u, \"column\": %u, \"end_line\": %u, "
			   "\"end_column\": %u, \"node\": \"%s\", ", k ? ", " : "", ops[e->op], e->start.line,
			   e->start.column, e->end.line, e->end.column, e->node);
		json_kv(b, "text", e->text, false);
		buf_puts(b, "}");
	}
	buf_puts(b, "]}");
}

static void emit_json(FILE *out, const struct scan_result *r, bool verbose)
{
	struct buf b = BUF_INIT;
	buf_printf(&b, "{\"version\": 1, \"tool\": {\"name\": \"preemptify\", \"version\": \"%s\"},\n"
		   "\"findings\": [", PREEMPTIFY_VERSION);
	bool first = true;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->protected_site && !verbose)
			continue;
		buf_puts(&b, first ? "\n  " : ",\n  ");
		first = false;
		json_finding(&b, f, verbose);
	}
	buf_puts(&b, "\n],\n\"diagnostics\": [");
	for (size_t i = 0; i < r->diagnostics.len; i++) {
		const struct diagnostic *d = &r->diagnostics.items[i];
		static const char *const kinds[] = {"unparsed", "io", "tool"};
		buf_printf(&b, "%s\n  {\"kind\": \"%s\", ", i ? "," : "", kinds[d->kind]);
		json_kv(&b, "file", d->file, true);
		buf_printf(&b, "\"line\": %u, \"column\": %u, ", d->line, d->column);
		json_kv(&b, "message", d->message, false);
		buf_puts(&b, "}");
	}
	buf_printf(&b, "\n],\n\"stats\": {\"files\": %zu, \"bytes\": %zu, \"parsed\": %zu, \"per_rule\": {",
		   r->stats.files, r->stats.bytes, r->stats.parsed);
	for (int k = 0; k < RULE_COUNT; k++)
		buf_printf(&b, "%s\"%s\": %zu", k ? ", " : "", rule_code(k), r->stats.per_rule[k]);
	buf_puts(&b, "}}}\n");
	fwrite(b.ptr, 1, b.len, out);
	buf_free(&b);
}

static const char *sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

static void emit_sarif(FILE *out, const struct scan_result *r, bool verbose)
{
	struct buf b = BUF_INIT;
	buf_puts(&b, "{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\",\n"
		 "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"preemptify\", ");
	buf_printf(&b, "\"version\": \"%s\", \"informationUri\": \"https://example.invalid/preemptify\", \"rules\": [",
		   PREEMPTIFY_VERSION);
	for (int k = 0; k < RULE_COUNT; k++) {
		buf_printf(&b, "%s\n  {\"id\": \"%s\", \"name\": \"%s\", ", k ? "," : "", rule_code(k), rule_name(k));
		buf_puts(&b, "\"shortDescription\": {");
		json_kv(&b, "text", rule_summary(k), false);
		buf_puts(&b, "}, \"fullDescription\": {");
		json_kv(&b, "text", rule_help(k), false);
		buf_puts(&b, "}, \"help\": {");
		json_kv(&b, "text", rule_help(k), false);
		buf_printf(&b, "}, \"defaultConfiguration\": {\"level\": \"%s\"}}",
			   k == RULE_P006 ? "error" : "warning");
	}
	buf_puts(&b, "]}},\n\"originalUriBaseIds\": {\"%SRCROOT%\": {\"uri\": \"./\"}},\n\"results\": [");
	bool first = true;
	for (size_t i = 0; i < r->findings.len; i++) {
		const struct finding *f = &r->findings.items[i];
		if (f->protected_site && !verbose)
			continue;
		const char *uri = f->file;
		while (uri[0] == '.' && uri[1] == '/')
			uri += 2;
		buf_printf(&b, "%s\n  {\"ruleId\": \"%s\", \"ruleIndex\": %d, ", first ? "" : ",",
			   rule_code(f->rule), (int)f->rule);
		first = false;
		if (f->protected_site)
			buf_puts(&b, "\"kind\": \"pass\", \"level\": \"none\", ");
		else
			buf_printf(&b, "\"kind\": \"fail\", \"level\": \"%s\", ", sarif_level(f->severity));
		buf_puts(&b, "\"message\": {");
		json_kv(&b, "text", f->message, false);
		buf_puts(&b, "}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {");
		json_kv(&b, "uri", uri, true);
		buf_printf(&b, "\"uriBaseId\": \"%%SRCROOT%%\"}, \"region\": {\"startLine\": %u, \"startColumn\": %u}}",
			   f->pos.line, f->pos.column);
		if (f->function) {
			buf_puts(&b, ", \"logicalLocations\": [{");
			json_kv(&b, "name", f->function, true);
			buf_puts(&b, "\"kind\": \"function\"}]");
		}
		buf_puts(&b, "}], \"properties\": {");
		json_kv(&b, "confidence", confidence_name(f->confidence), true);
		json_kv(&b, "fix", fix_name(f->fix), true);
		json_kv(&b, "evidence", f->evidence, f->fix_note != NULL);
		if (f->fix_note)
			json_kv(&b, "fixNote", f->fix_note, false);
		buf_puts(&b, "}}");
	}
	buf_puts(&b, "\n]}]}\n");
	fwrite(b.ptr, 1, b.len, out);
	buf_free(&b);
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
	size_t total = 0;
	for (int k = 0; k < RULE_COUNT; k++)
		total += r->stats.per_rule[k];
	fprintf(out, "preemptify: %zu finding%s", total, total == 1 ? "" : "s");
	const char *sep = " (";
	for (int k = 0; k < RULE_COUNT; k++)
		if (r->stats.per_rule[k]) {
			fprintf(out, "%s%s: %zu", sep, rule_code(k), r->stats.per_rule[k]);
			sep = ", ";
		}
	fprintf(out, "%s in %zu file%s (%zu parsed, %zu bytes), %zu diagnostic%s\n", total ? ")" : "",
		r->stats.files, r->stats.files == 1 ? "" : "s", r->stats.parsed, r->stats.bytes,
		r->diagnostics.len, r->diagnostics.len == 1 ? "" : "s");
}
