/*
 * Unit tests for the rule and fix-kind registry (src/rules/rules.def,
 * src/rules/fixes.def): every table generated from it is complete.
 * argv[1] is the source tree (for cocci/ and grammars/sites.scm).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules/ctx.h"
#include "rules/finding.h"
#include "rules/rules.h"

static int passed, failed;

#define CHECK(cond, ...) do { \
	if (cond) { passed++; } else { failed++; \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

static bool nonempty(const char *s)
{
	return s && *s;
}

/* Every fix kind but FIX_NONE: a name, phrases for message.c, a cocci file in cocci/. */
static void test_fixes(const char *srcdir)
{
	CHECK(strcmp(fix_name(FIX_NONE), "none") == 0, "FIX_NONE is \"none\"");
	CHECK(fix_cocci(FIX_NONE) == NULL, "FIX_NONE has no cocci file");
	for (int k = 1; k < FIX_COUNT; k++) {
		enum fix_kind f = (enum fix_kind)k;
		const struct fix_phrases *p = fix_phrases(f);
		const char *n = fix_name(f);
		CHECK(nonempty(n), "fix %d has a name", k);
		CHECK(fix_parse(n) == k, "fix_parse(%s)", n);
		CHECK(nonempty(p->alone), "%s: alone", n);
		CHECK(nonempty(p->alone_short), "%s: alone_short", n);
		CHECK(nonempty(p->token), "%s: token", n);
		CHECK(nonempty(p->clause) || nonempty(p->use_item), "%s: a clause or a use_item", n);
		CHECK(nonempty(fix_cocci(f)), "%s: cocci file named", n);
		if (!fix_cocci(f))
			continue;
		char *path = xasprintf("%s/cocci/%s", srcdir, fix_cocci(f));
		CHECK(access(path, R_OK) == 0, "%s: %s exists", n, path);
		free(path);
	}
}

/* Every rule: code, name, summary, help; parseable; its fixes are real kinds. */
static void test_rules(void)
{
	for (int k = 0; k < RULE_COUNT; k++) {
		enum rule_id r = (enum rule_id)k;
		CHECK(nonempty(rule_code(r)), "rule %d has a code", k);
		CHECK(nonempty(rule_name(r)), "rule %d has a name", k);
		CHECK(nonempty(rule_summary(r)), "rule %d has a summary", k);
		CHECK(nonempty(rule_help(r)), "rule %d has help", k);
		CHECK(rule_parse(rule_code(r)) == k, "rule_parse(%s)", rule_code(r));
		CHECK(rule_parse(rule_name(r)) == k, "rule_parse(%s)", rule_name(r));
		const enum fix_kind *fx = rule_fixes(r);
		CHECK(fx[RULE_MAX_FIXES - 1] == FIX_NONE, "%s: fix list ends with FIX_NONE", rule_code(r));
		for (int j = 0; j < RULE_MAX_FIXES; j++)
			CHECK(fx[j] >= FIX_NONE && fx[j] < FIX_COUNT, "%s: fix %d is a fix kind", rule_code(r), j);
	}
}

/* Every @site.<kind> of grammars/sites.scm is decided by some rule's checker. */
static void test_sites(const char *srcdir)
{
	char *path = xasprintf("%s/grammars/sites.scm", srcdir);
	FILE *fp = fopen(path, "r");
	CHECK(fp != NULL, "open %s", path);
	char line[512];
	int sites = 0;
	while (fp && fgets(line, sizeof line, fp)) {
		if (line[0] == ';')
			continue;
		/* every string a pattern tests holds a word the query's body filter looks for
		 * (`current` and `current->policy` go with need_resched and SCHED_YIELD) */
		for (const char *p = line; (p = strchr(p, '"')); ) {
			const char *e = strchr(p + 1, '"');
			if (!e)
				break;
			char *str = xstrndup(p + 1, (size_t)(e - p - 1));
			size_t nw;
			const char *const *w = rules_site_words(&nw);
			bool held = strcmp(str, "current") == 0 || strcmp(str, "current->policy") == 0;
			for (size_t k = 0; k < nw && !held; k++)
				held = strstr(str, w[k]) != NULL;
			CHECK(held, "sites.scm's \"%s\" holds a word of rules_site_words()", str);
			free(str);
			p = e + 1;
		}
		for (const char *p = line; (p = strstr(p, "@site.")); ) {
			p += 6;
			size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
			char *kind = xstrndup(p, n);
			CHECK(rules_site_rule(kind) >= 0, "site kind %s has a checker", kind);
			sites++;
			free(kind);
			p += n;
		}
	}
	if (fp)
		fclose(fp);
	CHECK(sites > 0, "sites.scm has sites");
	CHECK(rules_site_rule(RULE_SITE_FUNCTION) == RULE_P007, "P007 runs once per function");
	CHECK(rules_site_rule("no_such_kind") == -1, "unknown kind");
	free(path);
}

/* The early exit of in_dead_code(): false only where no `#if 0` arm can be. */
static void test_if0(void)
{
	static const struct {
		const char *text;
		bool may;
	} cases[] = {
		{"#if 0\nx\n#endif\n", true},
		{"  #  if 0 /* off */\n#endif\n", true},
		{"#if X\n#elif 0\n#endif\n", true},
		{"#if \\\n 0\n#endif\n", true},
		{"#if /* why */ 0\n#endif\n", true},
		{"#if 0", true},
		{"#if 01\n#endif\n", false},
		{"#if 0x1\n#endif\n", false},
		{"#if (0)\n#endif\n", false},
		{"#ifdef X0\n#endif\n", false},
		{"#include <linux/sched.h>\nint f(void) { return 0; }\n", false},
		{"#if 10\n#endif\n", false},
		{"", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(text_may_have_if0(cases[i].text, strlen(cases[i].text)) == cases[i].may,
		      "text_may_have_if0(\"%s\") is %d", cases[i].text, cases[i].may);
}

/* The prefilter skips no body the site query would read: every site word holds a prefilter word. */
static void test_prefilter_words(void)
{
	size_t ns, np;
	const char *const *site = rules_site_words(&ns);
	const char *const *pre = rules_prefilter_words(&np);
	for (size_t i = 0; i < ns; i++) {
		bool held = false;
		for (size_t k = 0; k < np && !held; k++)
			held = strstr(site[i], pre[k]) != NULL;
		CHECK(held, "site word %s holds a word of rules_prefilter_words()", site[i]);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_rules SRCDIR\n");
		return 2;
	}
	test_fixes(argv[1]);
	test_rules();
	test_prefilter_words();
	test_sites(argv[1]);
	test_if0();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
