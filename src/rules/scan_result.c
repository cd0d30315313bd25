/* A scan's result (scan_result.h): kept in part, or released. */
#include "rules/scan_result.h"

#include <stdlib.h>
#include <string.h>

enum target target_parse(const char *s)
{
	return strcmp(s, "2.6") == 0 ? TARGET_26 : strcmp(s, "modern") == 0 ? TARGET_MODERN : TARGET_UNSET;
}

void scan_result_keep(struct scan_result *out, const bool *keep_finding, const bool *keep_diag)
{
	size_t w = 0;
	for (size_t i = 0; i < out->findings.len; i++)
		if (keep_finding[i])
			out->findings.items[w++] = out->findings.items[i];
		else
			finding_release(&out->findings.items[i]);
	out->findings.len = w;
	w = 0;
	for (size_t i = 0; i < out->diagnostics.len; i++)
		if (keep_diag[i])
			out->diagnostics.items[w++] = out->diagnostics.items[i];
		else
			diagnostic_release(&out->diagnostics.items[i]);
	out->diagnostics.len = w;
}

void scan_result_release(struct scan_result *r)
{
	for (size_t i = 0; i < r->arrays.len; i++)
		tree_array_release(&r->arrays.items[i]);
	vec_release(&r->arrays);
	for (size_t i = 0; i < r->macros.len; i++) {
		free(r->macros.items[i].def.name);
		free(r->macros.items[i].def.body);
		free(r->macros.items[i].file);
	}
	vec_release(&r->macros);
	tree_want_release(&r->want);
	tree_context_free(r->tree);
	r->tree = NULL;
	for (size_t i = 0; i < r->findings.len; i++)
		finding_release(&r->findings.items[i]);
	vec_release(&r->findings);
	for (size_t i = 0; i < r->diagnostics.len; i++)
		diagnostic_release(&r->diagnostics.items[i]);
	vec_release(&r->diagnostics);
}
