/*
 * Unit tests for the parse helpers the pipeline shares: the memo of recent
 * parses (ts_parse_text(): a repeated text gives its own copy of the same
 * tree, a text over the bound is kept too, eviction keeps answers right),
 * what a file's own directives say of a macro (text_defined_before()), and
 * the per-function facts' index by name (verify_facts.c's fact_for()).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "parse/source.h"
#include "parse/ts.h"
#include "pipeline/verify_internal.h"

#define LEN(s) (sizeof(s) - 1)

/* The S-expression of TEXT's parse (owned), or NULL. */
static char *sexp(const char *text, size_t len)
{
	TSTree *t = ts_parse_text(text, len, NULL);
	if (!t)
		return NULL;
	char *s = ts_node_string(ts_tree_root_node(t));
	ts_parent_forget(t);
	ts_tree_delete(t);
	return s;
}

static void test_memo_copies(void)
{
	static const char a[] = "int f(int x)\n{\n\treturn x + 1;\n}\n";
	static const char b[] = "int f(int x)\n{\n\treturn g(x);\n}\n";
	TSTree *t1 = ts_parse_text(a, LEN(a), NULL), *t2 = ts_parse_text(a, LEN(a), NULL);
	if (!CHECK(t1 && t2))
		return;
	CHECK(t1 != t2, "each caller gets its own tree");
	char *s1 = ts_node_string(ts_tree_root_node(t1));
	ts_parent_forget(t1);
	ts_tree_delete(t1);
	char *s2 = ts_node_string(ts_tree_root_node(t2)); /* the copy outlives the other */
	CHECK(strcmp(s1, s2) == 0, "the same tree: %s / %s", s1, s2);
	char *s3 = sexp(b, LEN(b));
	CHECK(s3 && strcmp(s3, s1) != 0, "another text is parsed anew: %s", s3 ? s3 : "(null)");
	CHECK(s3 && strstr(s3, "call_expression") != NULL && strstr(s1, "call_expression") == NULL);
	ts_parent_forget(t2);
	ts_tree_delete(t2);
	free(s1);
	free(s2);
	free(s3);
}

/* Many texts, one over the bound: every answer is its own text's parse. */
static void test_memo_eviction(void)
{
	char *first = sexp("int a0;\n", 8);
	for (int i = 1; i < 80; i++) {
		char text[64];
		int n = snprintf(text, sizeof text, "int a%d = %d;\n", i, i);
		char *s = sexp(text, (size_t)n);
		CHECK(s && strstr(s, "init_declarator"), "text %d: %s", i, s ? s : "(null)");
		free(s);
	}
	size_t big = (size_t)6 << 20;
	char *t = xmalloc(big + 1);
	for (size_t i = 0; i < big; i++)
		t[i] = i % 64 == 63 ? '\n' : ' ';
	memcpy(t + big - 16, "int zz;        \n", 16);
	char *b1 = sexp(t, big), *b2 = sexp(t, big);
	CHECK(b1 && b2 && strcmp(b1, b2) == 0 && strstr(b1, "declaration"), "a text over the bound, twice");
	char *again = sexp("int a0;\n", 8);
	CHECK(first && again && strcmp(first, again) == 0, "an evicted text parses again the same");
	free(t);
	free(b1);
	free(b2);
	free(first);
	free(again);
}

static void test_defined_before(void)
{
	static const char t[] = "#define A 1\n"
				"#ifdef B\n#define C\n#endif\n"
				"#define D\n#undef D\n"
				"#define AB\n"
				"/* #define E */\n"
				"int x;\n";
	size_t len = LEN(t);
	CHECK(text_defined_before(t, len, "A", 1) == 1, "#define at file scope");
	CHECK(text_defined_before(t, len, "C", 1) == -1, "a #define inside #ifdef decides nothing");
	CHECK(text_defined_before(t, len, "D", 1) == 0, "the last directive, an #undef, wins");
	CHECK(text_defined_before(t, len, "E", 1) == -1, "a directive in a comment is no directive");
	CHECK(text_defined_before(t, 5, "A", 1) == -1, "only what comes before UPTO counts");
	CHECK(text_defined_before(t, len, "B", 1) == -1, "#ifdef names but does not define");
	CHECK(text_defined_before(t, len, "AB", 2) == 1 && text_defined_before(t, len, "ABC", 3) == -1,
	      "whole names only");
}

static void test_fact_index(void)
{
	fact_vec v = FACT_VEC_INIT;
	char name[32];
	struct fn_fact *file = fact_for(&v, NULL);
	file->errors = 7;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "fn_%d", i);
		fact_for(&v, name)->fixable = (unsigned)i;
	}
	CHECK(v.len == 5001, "one entry per name: %zu", v.len);
	bool all = true;
	for (int i = 4999; i >= 0; i--) {
		snprintf(name, sizeof name, "fn_%d", i);
		struct fn_fact *f = fact_for(&v, name);
		all = all && f->fixable == (unsigned)i && strcmp(f->name, name) == 0;
	}
	CHECK(all && v.len == 5001, "every name finds its own facts, in any order");
	CHECK(fact_for(&v, NULL)->errors == 7 && fact_for(&v, NULL)->name == NULL, "file scope is its own entry");
	facts_release(&v);
	CHECK(v.len == 0 && v.index == NULL);
}

int main(void)
{
	test_memo_copies();
	test_memo_eviction();
	test_defined_before();
	test_fact_index();
	return check_summary();
}
