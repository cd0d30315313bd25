/*
 * Translation validation: the token check on small texts (what spatch may
 * and may not do to a file), then the whole validator on rewrites that a
 * broken rewriter could produce (unbalanced put, region over a sleeping
 * call, parse errors, a second-pass change).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fix/lines.h"
#include "fix/validate.h"
#include "pipeline/verify.h"

static struct edit mk(enum edit_op op, const char *old, const char *anchor, const char *text)
{
	const char *p = strstr(old, anchor);
	struct edit e = {op, {0, 0, 0}, {0, 0, 0}, "expression_statement", (char *)text, false};
	e.start.offset = (size_t)(p - old);
	e.end.offset = e.start.offset + strlen(anchor);
	return e;
}

/* 0 when NEW is accepted as OLD with the one edit E. */
static size_t tokens(const char *old, const char *new_text, const struct edit *e, char **what)
{
	const struct edit *es[] = {e};
	return validate_tokens(old, strlen(old), new_text, strlen(new_text), es, e ? 1 : 0, what);
}

static void expect_ok(const char *name, const char *old, const char *new_text, const struct edit *e)
{
	char *what = NULL;
	size_t at = tokens(old, new_text, e, &what);
	CHECK(at == 0, "%s: refused: %s", name, what ? what : "?");
	free(what);
}

static void expect_refused(const char *name, const char *old, const char *new_text,
			   const struct edit *e, const char *why_word)
{
	char *what = NULL;
	size_t at = tokens(old, new_text, e, &what);
	CHECK(at != 0, "%s: accepted", name);
	CHECK(!what || strstr(what, why_word), "%s: reason '%s' lacks '%s'", name, what, why_word);
	free(what);
}

static void test_tokens(void)
{
	const char *old = "void f(void)\n{\n\ta();\t/* keep */\n\tb();\n}\n";
	struct edit put = mk(EDIT_INSERT_AFTER, old, "a();", "put_cpu();");
	expect_ok("identity", old, old, NULL);
	expect_ok("whitespace only", old, "void f(void) {\n  a(); /* keep */\n b();\n}\n", NULL);
	expect_ok("insert after, trailing comment kept on its line", old,
		  "void f(void)\n{\n\ta();\t/* keep */\n\tput_cpu();\n\tb();\n}\n", &put);
	expect_refused("comment moved onto the inserted line", old,
		       "void f(void)\n{\n\ta();\n\tput_cpu(); /* keep */\n\tb();\n}\n", &put, "moved");
	expect_refused("comment lost", old, "void f(void)\n{\n\ta();\n\tput_cpu();\n\tb();\n}\n",
		       &put, "comment");
	expect_refused("edit not made", old, old, &put, "expected");
	expect_refused("extra change", old,
		       "void f(void)\n{\n\ta();\t/* keep */\n\tput_cpu();\n\tc();\n}\n", &put,
		       "expected");
	expect_refused("truncated", old, "void f(void)\n{\n\ta();\t/* keep */\n\tput_cpu();\n", &put,
		       "the end of the file");

	const char *own = "void f(void)\n{\n\tx = 1;\n\t/* about b */\n\tb();\n}\n";
	struct edit get = mk(EDIT_INSERT_BEFORE, own, "b();", "get_cpu();");
	expect_ok("own-line comment before the insertion", own,
		  "void f(void)\n{\n\tx = 1;\n\t/* about b */\n\tget_cpu();\n\tb();\n}\n", &get);
	expect_ok("own-line comment after the insertion", own,
		  "void f(void)\n{\n\tx = 1;\n\tget_cpu();\n\t/* about b */\n\tb();\n}\n", &get);
	expect_refused("own-line comment joined to code", own,
		       "void f(void)\n{\n\tx = 1;\n\tget_cpu(); /* about b */\n\tb();\n}\n", &get,
		       "moved");
	expect_refused("own-line comment moved past original code", own,
		       "void f(void)\n{\n\tx = 1;\n\tget_cpu();\n\tb();\n\t/* about b */\n}\n", &get,
		       "moved");

	const char *rs = "void f(void)\n{\n\tif (current->need_resched) /* busy */\n\t\tschedule();\n}\n";
	struct edit cr = mk(EDIT_REPLACE, rs, "if (current->need_resched) /* busy */\n\t\tschedule();",
			    "cond_resched();");
	expect_ok("comment of a replaced statement kept", rs,
		  "void f(void)\n{\n\t/* busy */\n\tcond_resched();\n}\n", &cr);
	expect_refused("comment of a replaced statement dropped", rs,
		       "void f(void)\n{\n\tcond_resched();\n}\n", &cr, "comment");
}

/* The whole validator: one applied finding in f() whose planned edits are E[0..n). */
static size_t validate(const char *old, const char *new_text, struct edit *e, size_t n,
		       char **why)
{
	struct finding f = {0};
	struct finding *applied[] = {&f};
	struct scan_options opts = SCAN_OPTIONS_INIT;
	f.rule = RULE_P003;
	f.fix = FIX_GET_CPU;
	f.function = "f";
	for (size_t i = 0; i < n; i++)
		vec_push(&f.edits, e[i]);
	*why = NULL;
	size_t r = validate_rewrite("t.c", old, strlen(old), new_text, strlen(new_text), applied, 1,
				    &opts, why);
	vec_release(&f.edits);
	return r;
}

static void expect_validated(const char *name, const char *old, const char *new_text,
			     struct edit *e, size_t n, const char *why_word)
{
	char *why = NULL;
	size_t r = validate(old, new_text, e, n, &why);
	if (!why_word)
		CHECK(r == 0, "%s: refused: %s", name, why ? why : "?");
	else
		CHECK(r == 1 && why && strstr(why, why_word), "%s: expected a refusal with '%s', got %s",
		      name, why_word, why ? why : "none");
	free(why);
}

static void test_rewrite(void)
{
	const char *old = "extern int v[32];\nvoid g(int);\n"
			  "void f(int x)\n{\n\tint cpu = smp_processor_id();\n"
			  "\tv[cpu]++;\n\tg(cpu);\n}\n";
	const char *good = "extern int v[32];\nvoid g(int);\n"
			   "void f(int x)\n{\n\tint cpu = get_cpu();\n"
			   "\tv[cpu]++;\n\tg(cpu);\n\tput_cpu();\n}\n";
	struct edit e[2] = {mk(EDIT_REPLACE, old, "smp_processor_id()", "get_cpu()"),
			    mk(EDIT_INSERT_AFTER, old, "g(cpu);", "put_cpu();")};
	expect_validated("balanced region", old, good, e, 2, NULL);

	/* the plan itself unbalanced: get_cpu() only when x is set, put_cpu() always */
	const char *cond_old = "extern int v[32];\nvoid g(int);\nvoid f(int x)\n{\n\tint cpu = 0;\n"
			       "\tif (x)\n\t\tcpu = smp_processor_id();\n\tg(cpu);\n}\n";
	const char *cond_new = "extern int v[32];\nvoid g(int);\nvoid f(int x)\n{\n\tint cpu = 0;\n"
			       "\tif (x)\n\t\tcpu = get_cpu();\n\tg(cpu);\n\tput_cpu();\n}\n";
	struct edit c[2] = {mk(EDIT_REPLACE, cond_old, "smp_processor_id()", "get_cpu()"),
			    mk(EDIT_INSERT_AFTER, cond_old, "g(cpu);", "put_cpu();")};
	expect_validated("get_cpu() on one arm only", cond_old, cond_new, c, 2, "not balanced on every path");

	/* a region over a call that may sleep */
	const char *sl_old = "extern int v[32];\nvoid f(int x)\n{\n\tint cpu = smp_processor_id();\n"
			     "\tschedule();\n\tv[cpu]++;\n}\n";
	const char *sl_new = "extern int v[32];\nvoid f(int x)\n{\n\tint cpu = get_cpu();\n"
			     "\tschedule();\n\tv[cpu]++;\n\tput_cpu();\n}\n";
	struct edit s[2] = {mk(EDIT_REPLACE, sl_old, "smp_processor_id()", "get_cpu()"),
			    mk(EDIT_INSERT_AFTER, sl_old, "v[cpu]++;", "put_cpu();")};
	expect_validated("region over schedule()", sl_old, sl_new, s, 2, "may sleep, but preemption is off");

	/* output that does not parse */
	const char *bad = "extern int v[32];\nvoid g(int);\n"
			  "void f(int x)\n{\n\tint cpu = get_cpu(;;\n"
			  "\tv[cpu]++;\n\tg(cpu);\n\tput_cpu();\n}\n";
	struct edit b[2] = {mk(EDIT_REPLACE, old, "smp_processor_id()", "get_cpu(;"),
			    mk(EDIT_INSERT_AFTER, old, "g(cpu);", "put_cpu();")};
	expect_validated("parse error", old, bad, b, 2, "parse");

	/* a DEFINE_PER_CPU conversion that leaves one x[i] behind does not compile */
	const char *pc_old = "static int hits[NR_CPUS];\nvoid g(int);\nvoid f(int i)\n{\n"
			     "\thits[i]++;\n\tg(hits [i]);\n}\n";
	const char *pc_new = "static DEFINE_PER_CPU(int, hits);\nvoid g(int);\nvoid f(int i)\n{\n"
			     "\tper_cpu(hits, i)++;\n\tg(hits [i]);\n}\n";
	struct finding pf = {0};
	struct finding *pap[] = {&pf};
	pf.rule = RULE_P008;
	pf.fix = FIX_DEFINE_PER_CPU;
	pf.function = NULL;
	struct edit pe[2] = {mk(EDIT_REPLACE, pc_old, "static int hits[NR_CPUS];", "static DEFINE_PER_CPU(int, hits);"),
			     mk(EDIT_REPLACE, pc_old, "hits[i]", "per_cpu(hits, i)")};
	vec_push(&pf.edits, pe[0]);
	vec_push(&pf.edits, pe[1]);
	struct scan_options popts = SCAN_OPTIONS_INIT;
	char *pwhy = NULL;
	size_t pr = validate_rewrite("t.c", pc_old, strlen(pc_old), pc_new, strlen(pc_new), pap, 1, &popts,
				     &pwhy);
	CHECK(pr == 1 && pwhy && strstr(pwhy, "hits[...] is left at line 6"),
	      "leftover subscript after DEFINE_PER_CPU: %s", pwhy ? pwhy : "accepted");
	free(pwhy);
	/* ... but one inside #if 0 is not compiled */
	const char *z_old = "static int hits[NR_CPUS];\nvoid g(int);\nvoid f(int i)\n{\n"
			    "\thits[i]++;\n#if 0\n\tg(hits[i]);\n#endif\n}\n";
	const char *z_new = "static DEFINE_PER_CPU(int, hits);\nvoid g(int);\nvoid f(int i)\n{\n"
			    "\tper_cpu(hits, i)++;\n#if 0\n\tg(hits[i]);\n#endif\n}\n";
	pf.edits.len = 0;
	pe[0] = mk(EDIT_REPLACE, z_old, "static int hits[NR_CPUS];", "static DEFINE_PER_CPU(int, hits);");
	pe[1] = mk(EDIT_REPLACE, z_old, "hits[i]", "per_cpu(hits, i)");
	vec_push(&pf.edits, pe[0]);
	vec_push(&pf.edits, pe[1]);
	pwhy = NULL;
	pr = validate_rewrite("t.c", z_old, strlen(z_old), z_new, strlen(z_new), pap, 1, &popts, &pwhy);
	CHECK(pr == 0, "x[i] inside #if 0 after DEFINE_PER_CPU: %s", pwhy ? pwhy : "?");
	free(pwhy);
	vec_release(&pf.edits);

	/* NUL bytes */
	char nul[] = "void f(void)\n{\n}\n";
	nul[3] = '\0';
	char *why = NULL;
	struct finding f0 = {0};
	struct finding *ap[] = {&f0};
	struct scan_options opts = SCAN_OPTIONS_INIT;
	size_t r = validate_rewrite("t.c", old, strlen(old), nul, sizeof nul - 1, ap, 1, &opts, &why);
	CHECK(r == 1 && why && strstr(why, "NUL"), "NUL bytes: %s", why ? why : "accepted");
	free(why);
}

/* Trailing comments spatch moves onto an added line go back; those in place stay. */
static void expect_comments(const char *name, const char *old, const char *spatch_out, const char *want)
{
	size_t n;
	char *got = lines_keep_trailing_comments(old, strlen(old), spatch_out, strlen(spatch_out), &n);
	CHECK(n == strlen(want) && memcmp(got, want, n) == 0, "%s: got\n%s", name, got);
	free(got);
}

static void test_trailing_comments(void)
{
	expect_comments("moved onto the added release",
			"\tf(smp_processor_id());\t/* why */\n\tg();\n",
			"\tf(get_cpu());\n\tput_cpu();\t/* why */\n\tg();\n",
			"\tf(get_cpu());\t/* why */\n\tput_cpu();\n\tg();\n");
	expect_comments("moved onto an inserted statement",
			"\tcpu = smp_processor_id();\n\tlock(&l);\t/* irqs off */\n",
			"\tlock(&l);\n\tcpu = smp_processor_id();\t/* irqs off */\n",
			"\tlock(&l);\t/* irqs off */\n\tcpu = smp_processor_id();\n");
	const char *twice = "\tmb();\n\tmb();  /* magic */\n\tx(smp_processor_id());\n";
	expect_comments("in place after the same code twice", twice,
			"\tmb();\n\tmb();  /* magic */\n\tx(get_cpu());\n\tput_cpu();\n",
			"\tmb();\n\tmb();  /* magic */\n\tx(get_cpu());\n\tput_cpu();\n");
}

static void expect_brace(const char *name, const char *old, const char *spatch_out, const char *want)
{
	size_t n;
	char *got = lines_brace_before_comment(old, strlen(old), spatch_out, strlen(spatch_out), &n);
	CHECK(n == strlen(want) && memcmp(got, want, n) == 0, "%s: got\n%s", name, got);
	free(got);
}

/* A brace spatch opens after a `//` comment goes before the comment; the file's own braces stay. */
static void test_brace_before_comment(void)
{
	expect_brace("after an if with a // comment",
		     "\tif (v < BEGIN) // FIXME\n\t\treturn;\n",
		     "\tif (v < BEGIN) // FIXME\n\t{\n\t\tput_cpu();\n\t\treturn;\n\t}\n",
		     "\tif (v < BEGIN) { // FIXME\n\t\tput_cpu();\n\t\treturn;\n\t}\n");
	expect_brace("after else",
		     "\telse // the rest\n\t\treturn;\n",
		     "\telse // the rest\n\t{\n\t\tput_cpu();\n\t\treturn;\n\t}\n",
		     "\telse { // the rest\n\t\tput_cpu();\n\t\treturn;\n\t}\n");
	const char *own = "\tif (v) // why\n\t{\n\t\treturn;\n\t}\n";
	expect_brace("the file's own brace stays", own,
		     "\tif (v) // why\n\t{\n\t\tput_cpu();\n\t\treturn;\n\t}\n",
		     "\tif (v) // why\n\t{\n\t\tput_cpu();\n\t\treturn;\n\t}\n");
	const char *url = "\tif (v) f(\"http://x\");\n";
	expect_brace("// in a string is no comment", url, "\tif (v) f(\"http://x\");\n\t{\n\t}\n",
		     "\tif (v) f(\"http://x\");\n\t{\n\t}\n");
	const char *call = "\tfoo(a) // note\n";
	expect_brace("a brace after a statement's line is not its block", call, "\tfoo(a); // note\n\t{\n\t}\n",
		     "\tfoo(a); // note\n\t{\n\t}\n");
}

static void expect_spacing(const char *name, const char *old, const char *spatch_out, const char *want)
{
	size_t n;
	char *got = lines_indent_added(old, strlen(old), spatch_out, strlen(spatch_out), &n);
	CHECK(n == strlen(want) && memcmp(got, want, n) == 0, "%s: got\n%s", name, got);
	free(got);
}

/* A changed line keeps the old line's blanks inside ( ) and its indentation; none trails it. */
static void test_changed_line_spacing(void)
{
	expect_spacing("the blank before ) comes back",
		       "  if ( cpu == smp_processor_id() ) {\n\t\tf();\n",
		       "  if ( cpu == get_cpu()) {\n\t\tf();\n",
		       "  if ( cpu == get_cpu() ) {\n\t\tf();\n");
	expect_spacing("the blank after ( comes back",
		       "\tif ( smp_processor_id() != 0 ) {\n",
		       "\tif (get_cpu() != 0 ) {\n",
		       "\tif ( get_cpu() != 0 ) {\n");
	expect_spacing("no blank before ( added: the call keeps spatch's form",
		       "\tint cpu = smp_processor_id ();\n",
		       "\tint cpu = get_cpu();\n",
		       "\tint cpu = get_cpu();\n");
	expect_spacing("no trailing blank on a changed line",
		       "\tint cpu = smp_processor_id(); \n",
		       "\tint cpu = get_cpu();\n",
		       "\tint cpu = get_cpu();\n");
	expect_spacing("a line spatch only reprinted is the old line",
		       "\tx = a +\n\t\tb;  \n",
		       "\tx = a +\n\t\tb;\n",
		       "\tx = a +\n\t\tb;  \n");
	expect_spacing("the old indentation, a first token changed",
		       "\t\tsd[cpu].level = 0;\n",
		       "\t\t\tper_cpu(sd, cpu).level = 0;\n",
		       "\t\tper_cpu(sd, cpu).level = 0;\n");
	expect_spacing("a string on the line: left to spatch",
		       "\tprintk(\"( %d )\", smp_processor_id() );\n",
		       "\tprintk(\"( %d )\", get_cpu());\n",
		       "\tprintk(\"( %d )\", get_cpu());\n");
}

/*
 * A line preemptify adds is indented as the statements beside it are:
 * spaces among space-indented ones, else tabs as checkpatch asks; it ends
 * in no blank.
 */
static void test_added_line_indent(void)
{
	expect_spacing("space-indented neighbours: the added line keeps spaces",
		       "        cpu = smp_processor_id();\n        f(cpu);\n}\n",
		       "        cpu = get_cpu();\n        f(cpu);\n        put_cpu();\n}\n",
		       "        cpu = get_cpu();\n        f(cpu);\n        put_cpu();\n}\n");
	expect_spacing("four spaces: a tab from spatch becomes the block's spaces",
		       "    if (x)\n        f(smp_processor_id());\n",
		       "    if (x) {\n        f(get_cpu());\n\tput_cpu();\n    }\n",
		       "    if (x) {\n        f(get_cpu());\n        put_cpu();\n    }\n");
	expect_spacing("four spaces: the line after a continuation keeps spatch's width",
		       "    f(a,\n      smp_processor_id());\n}\n",
		       "    f(a,\n      get_cpu());\n    put_cpu();\n}\n",
		       "    f(a,\n      get_cpu());\n    put_cpu();\n}\n");
	expect_spacing("four spaces: a region's one exit",
		       "{\n    if (c == smp_processor_id()) {\n        return g();\n    }\n}\n",
		       "{\n    int ret;\n    if (c == get_cpu()) {\n        ret = g();\n    }\n"
		       "    put_cpu();\nreturn ret;\n}\n",
		       "{\n    int ret;\n    if (c == get_cpu()) {\n        ret = g();\n    }\n"
		       "    put_cpu();\n    return ret;\n}\n");
	expect_spacing("twelve columns: a tab and four spaces",
		       "\tif (x) {\n\t    f(smp_processor_id());\n\t}\n",
		       "\tif (x) {\n\t    f(get_cpu());\n            put_cpu();\n\t}\n",
		       "\tif (x) {\n\t    f(get_cpu());\n\t    put_cpu();\n\t}\n");
	expect_spacing("a shallow space indent among tabs becomes one tab",
		       "\tg();\n  f(smp_processor_id());\n",
		       "\tg();\n  f(get_cpu());\n\tg();\n  put_cpu();\n",
		       "\tg();\n  f(get_cpu());\n\tg();\n\tput_cpu();\n");
	expect_spacing("no trailing blank on an added line",
		       "\tf(smp_processor_id());\n",
		       "\tf(get_cpu());\n\tput_cpu();  \n",
		       "\tf(get_cpu());\n\tput_cpu();\n");
	/* after a line that opens a block, the block's own lines are the reference:
	 * the `{` line's indentation would leave put_cpu() one tab short */
	expect_spacing("first line of a block: the indentation of the line after it",
		       "\tif (v) {\n\t\tgoto out;\n\t}\n",
		       "\tif (v) {\n        put_cpu();\n\t\tgoto out;\n\t}\n",
		       "\tif (v) {\n\t\tput_cpu();\n\t\tgoto out;\n\t}\n");
	expect_spacing("first line of a function body",
		       "{\n\tint cpu = smp_processor_id();\n",
		       "{\n    preempt_disable();\n\tint cpu = smp_processor_id();\n",
		       "{\n\tpreempt_disable();\n\tint cpu = smp_processor_id();\n");
}

static void expect_conds(const char *name, const char *old, const char *spatch_out, const char *want)
{
	size_t n;
	char *got = lines_drop_emptied_conditionals(old, strlen(old), spatch_out, strlen(spatch_out), &n);
	CHECK(n == strlen(want) && memcmp(got, want, n) == 0, "%s: got\n%s", name, got);
	free(got);
}

/* A conditional whose code the rewrite removed loses its directives; any other stays. */
static void test_emptied_conditionals(void)
{
	const char *old = "struct s {\n\tint a;\n#ifdef X\n\tint b[NR_CPUS];\n#endif\n\tint c;\n};\n";
	expect_conds("the emptied #ifdef goes", old, "struct s {\n\tint a;\n#ifdef X\n#endif\n\tint c;\n};\n",
		     "struct s {\n\tint a;\n\tint c;\n};\n");
	expect_conds("a conditional that keeps code stays", old, "struct s {\n\tint a;\n#ifdef X\n\tint b;\n#endif\n\tint c;\n};\n",
		     "struct s {\n\tint a;\n#ifdef X\n\tint b;\n#endif\n\tint c;\n};\n");
	const char *arms = "#if A\n\tint x[NR_CPUS];\n#elif B\n\tint y[NR_CPUS];\n#else\n#if C\n\tint z[NR_CPUS];\n#endif\n#endif\n\tint k;\n";
	expect_conds("arms and a nested one, all emptied", arms, "#if A\n#elif B\n#else\n#if C\n#endif\n#endif\n\tint k;\n",
		     "\tint k;\n");
	const char *cmt = "#ifdef X\n\t/* per CPU */\n\tint b[NR_CPUS];\n#endif\n";
	expect_conds("a comment left inside keeps it", cmt, "#ifdef X\n\t/* per CPU */\n#endif\n",
		     "#ifdef X\n\t/* per CPU */\n#endif\n");
	const char *cont = "#if defined(A) \\\n    || defined(B)\n\tint b[NR_CPUS];\n#endif\n\tint c;\n";
	expect_conds("a continued directive goes whole", cont, "#if defined(A) \\\n    || defined(B)\n#endif\n\tint c;\n",
		     "\tint c;\n");
	const char *empty = "#ifdef X\n#endif\n\tint b;\n";
	expect_conds("a conditional empty before is not the rewrite's", empty, "#ifdef X\n#endif\n\tint c;\n",
		     "#ifdef X\n#endif\n\tint c;\n");
}

/* An aligned continuation the rewrite adds keeps its tabs-then-spaces indentation. */
static void test_aligned_continuation(void)
{
	expect_spacing("tabs then spaces: kept next to a tab-indented line",
		       "	int k;\n",
		       "	int k;\n	unsigned int a,\n\t\t     b;\n",
		       "	int k;\n	unsigned int a,\n\t\t     b;\n");
}

/*
 * A directive ends at its line break: a rewrite that moves a line break into
 * or out of one (reliability D3) changes the program though every token is
 * kept, and is refused; the planned edits around directives still pass.
 */
static void test_directive_lines(void)
{
	const char *old = "void f(void)\n{\n#define LIMIT 4\n\tx += 2;\n#ifdef CONFIG_X\n\ta();\n#endif\n\tb();\n}\n";
	struct edit put = mk(EDIT_INSERT_AFTER, old, "a();", "put_cpu();");
	expect_ok("directives kept, edit made", old,
		  "void f(void)\n{\n#define LIMIT 4\n\tx += 2;\n#ifdef CONFIG_X\n\ta();\n\tput_cpu();\n#endif\n\tb();\n}\n", &put);
	expect_ok("blanks inside a directive", old,
		  "void f(void)\n{\n#  define   LIMIT 4\n\tx += 2;\n#ifdef CONFIG_X\n\ta();\n\tput_cpu();\n# endif\n\tb();\n}\n", &put);
	expect_refused("splice: a continuation swallows the next statement into the macro", old,
		       "void f(void)\n{\n#define LIMIT 4 \\\n\tx += 2;\n#ifdef CONFIG_X\n\ta();\n\tput_cpu();\n#endif\n\tb();\n}\n",
		       &put, "continuation");
	expect_refused("join: a statement moved onto the #endif line", old,
		       "void f(void)\n{\n#define LIMIT 4\n\tx += 2;\n#ifdef CONFIG_X\n\ta();\n\tput_cpu();\n#endif b();\n}\n",
		       &put, "end of the directive");
	expect_refused("join: the statement after a #define moved onto it", old,
		       "void f(void)\n{\n#define LIMIT 4 x += 2;\n#ifdef CONFIG_X\n\ta();\n\tput_cpu();\n#endif\n\tb();\n}\n",
		       &put, "end of the directive");
	expect_refused("split: #ifdef cut from its macro", old,
		       "void f(void)\n{\n#define LIMIT 4\n\tx += 2;\n#ifdef\nCONFIG_X\n\ta();\n\tput_cpu();\n#endif\n\tb();\n}\n",
		       &put, "end of the directive");
	expect_refused("split: #ifdef continued on a second line", old,
		       "void f(void)\n{\n#define LIMIT 4\n\tx += 2;\n#ifdef \\\nCONFIG_X\n\ta();\n\tput_cpu();\n#endif\n\tb();\n}\n",
		       &put, "continuation");
	expect_refused("a # that now opens a line is a directive", "void f(void)\n{\n\ts = x # y;\n}\n",
		       "void f(void)\n{\n\ts = x\n# y;\n}\n", NULL, "end of the directive");

	/* a macro body rewritten in place keeps its continuations */
	const char *mac = "#define R \\\n\tdo { \\\n\t\tif (need) \\\n\t\t\tschedule(); \\\n\t} while (0)\nint y;\n";
	const char *p = strstr(mac, "if (need)");
	struct edit cr = {EDIT_REPLACE, {0, 0, 0}, {0, 0, 0}, "if_statement", (char *)"cond_resched();", false};
	cr.start.offset = (size_t)(p - mac);
	cr.end.offset = (size_t)(strstr(mac, "schedule();") - mac) + strlen("schedule();");
	expect_ok("macro body rewritten, continuations kept", mac,
		  "#define R \\\n\tdo { \\\n\t\tcond_resched(); \\\n\t} while (0)\nint y;\n", &cr);
	expect_refused("macro body rewritten, a continuation lost", mac,
		       "#define R \\\n\tdo { \\\n\t\tcond_resched();\n\t} while (0)\nint y;\n", &cr,
		       "continuation");
	/* CRLF line ends are line breaks too */
	const char *crlf = "#define A 1\r\nint x;\r\n";
	expect_ok("CRLF directive kept", crlf, "#define A 1\r\nint x;\r\n", NULL);
	expect_refused("CRLF: a statement joined to the directive", crlf, "#define A 1 int x;\r\n", NULL,
		       "end of the directive");
}

/* verify knows the resched-flag equivalence: T->need_resched = K is set_tsk_need_resched(T) (K
 * not 0) or clear_tsk_need_resched(T) (K 0), T unchanged; anything else is refused. */
static void expect_flag(const char *old, const char *anchor, const char *text, bool ok)
{
	struct finding f;
	memset(&f, 0, sizeof f);
	f.fix = FIX_RESCHED_FLAG;
	struct edit e = mk(EDIT_REPLACE, old, anchor, text);
	e.node = "assignment_expression";
	e.text = xstrdup(text);
	vec_push(&f.edits, e);
	char *why = verify_edits(&f, old, strlen(old));
	CHECK(ok ? why == NULL : why != NULL, "%s -> %s: %s", anchor, text, why ? why : "accepted");
	free(why);
	free(e.text);
	vec_release(&f.edits);
}

static void test_flag_write(void)
{
	const char *old = "void f(struct task_struct *p)\n{\n\tp->need_resched = 1;\n"
			  "\tcurrent -> need_resched = 0UL;\n\tp->need_resched = 2;\n}\n";
	expect_flag(old, "p->need_resched = 1", "set_tsk_need_resched(p)", true);
	expect_flag(old, "current -> need_resched = 0UL", "clear_tsk_need_resched(current)", true);
	expect_flag(old, "p->need_resched = 2", "set_tsk_need_resched(p)", true);
	expect_flag(old, "p->need_resched = 1", "clear_tsk_need_resched(p)", false);
	expect_flag(old, "current -> need_resched = 0UL", "set_tsk_need_resched(current)", false);
	expect_flag(old, "p->need_resched = 1", "set_tsk_need_resched(current)", false);
	expect_flag(old, "p->need_resched = 1", "set_need_resched()", false);
	const char *other = "void g(void)\n{\n\tcurrent->need_resched = -1;\n\tcurrent->need_resched = old;\n"
			    "\tcurrent->need_resched |= 1;\n\tcurrent->need_resched = /* on */ 1;\n}\n";
	expect_flag(other, "current->need_resched = -1", "set_tsk_need_resched(current)", false);
	expect_flag(other, "current->need_resched = old", "set_tsk_need_resched(current)", false);
	expect_flag(other, "current->need_resched |= 1", "set_tsk_need_resched(current)", false);
	expect_flag(other, "current->need_resched = /* on */ 1", "set_tsk_need_resched(current)", false);
}

/* verify knows what a preempt-region plan may do: add one preempt_disable(); and its preempt_enable();s. */
static void expect_region(const char *const *texts, const enum edit_op *ops, size_t n, bool ok)
{
	const char *old = "void f(void)\n{\n\tSET_OWNER(0);\n\tx = 1;\n}\n";
	struct finding f;
	memset(&f, 0, sizeof f);
	f.fix = FIX_PREEMPT_REGION;
	for (size_t i = 0; i < n; i++) {
		struct edit e = mk(ops[i], old, i ? "x = 1;" : "SET_OWNER(0);", texts[i]);
		e.text = xstrdup(texts[i]);
		vec_push(&f.edits, e);
	}
	char *why = verify_edits(&f, old, strlen(old));
	CHECK(ok ? why == NULL : why != NULL, "region %s/%s: %s", texts[0], n > 1 ? texts[1] : "-",
	      why ? why : "accepted");
	free(why);
	for (size_t i = 0; i < n; i++)
		free(f.edits.items[i].text);
	vec_release(&f.edits);
}

static void test_region_edits(void)
{
	const char *good[] = {"preempt_disable();", "preempt_enable();"};
	const char *swapped[] = {"preempt_enable();", "preempt_disable();"};
	const char *other[] = {"preempt_disable();", "put_cpu();"};
	const char *twice[] = {"preempt_disable();", "preempt_disable();"};
	const enum edit_op ops[] = {EDIT_INSERT_BEFORE, EDIT_INSERT_AFTER};
	const enum edit_op before2[] = {EDIT_INSERT_BEFORE, EDIT_INSERT_BEFORE};
	const enum edit_op replace[] = {EDIT_INSERT_BEFORE, EDIT_REPLACE};
	expect_region(good, ops, 2, true);
	expect_region(good, ops, 1, false);
	expect_region(swapped, ops, 2, false);
	expect_region(other, ops, 2, false);
	expect_region(twice, before2, 2, false);
	expect_region(good, replace, 2, false);
}

int main(void)
{
	test_tokens();
	test_directive_lines();
	test_rewrite();
	test_trailing_comments();
	test_brace_before_comment();
	test_changed_line_spacing();
	test_added_line_indent();
	test_emptied_conditionals();
	test_aligned_continuation();
	test_flag_write();
	test_region_edits();
	return check_summary();
}
