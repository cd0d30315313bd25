/*
 * test-tool: for each FILE, print "ERRORS FILE": the number of ERROR and
 * MISSING nodes in its parse (after the same neutralisation the scan uses).
 * bench/audit.sh compares these before and after a rewrite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "parse/source.h"
#include "parse/ts.h"

const TSLanguage *tree_sitter_c(void);

int main(int argc, char **argv)
{
	int rc = 0;
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_c());
	for (int i = 1; i < argc; i++) {
		char *text;
		size_t len;
		if (read_file(argv[i], &text, &len) < 0) {
			fprintf(stderr, "parse_errors: %s\n", error_last());
			rc = 1;
			continue;
		}
		struct source src;
		source_init(&src, argv[i], text, len);
		TSTree *t = ts_parser_parse_string(p, NULL, src.parse_text, (uint32_t)len);
		printf("%u %s\n", t ? ts_count_errors(ts_tree_root_node(t)) : 1u, argv[i]);
		ts_tree_delete(t);
		source_release(&src);
	}
	ts_parser_delete(p);
	return rc;
}
