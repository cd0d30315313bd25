/*
 * Unit tests for the CFG and the preemption-state data-flow, on small
 * source strings. A statement `mark_X();` marks a point whose state is
 * checked: protected (preemption off on every path) or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <tree_sitter/api.h>

#include "check.h"
#include "analysis/cfg.h"
#include "analysis/flow.h"
#include "analysis/tree_internal.h"
#include "pipeline/scan.h"
#include "analysis/tree.h"
#include "util/parallel.h"
#include "parse/source.h"

const TSLanguage *tree_sitter_c(void);

struct parsed {
	struct source src;
	TSParser *parser;
	TSTree *tree;
	struct file_analysis fa;
};

static void parse(struct parsed *p, const char *code)
{
	source_init(&p->src, "test.c", xstrdup(code), strlen(code));
	p->parser = ts_parser_new();
	ts_parser_set_language(p->parser, tree_sitter_c());
	p->tree = ts_parser_parse_string(p->parser, NULL, p->src.parse_text, (uint32_t)p->src.len);
	analysis_run(&p->fa, &p->src, p->tree, NULL);
}

static void done(struct parsed *p)
{
	analysis_release(&p->fa);
	ts_tree_delete(p->tree);
	ts_parser_delete(p->parser);
	source_release(&p->src);
}

/* Is preemption off at the n-th occurrence (from 0) of `mark_NAME` in the code? -1 if not found. */
static int protected_at(struct parsed *p, const char *name, int nth)
{
	char needle[64];
	snprintf(needle, sizeof needle, "mark_%s(", name);
	const char *at = p->src.parse_text;
	for (int i = 0; i <= nth; i++) {
		at = strstr(i ? at + 1 : at, needle);
		if (!at)
			return -1;
	}
	uint32_t off = (uint32_t)(at - p->src.parse_text);
	const struct fn *f = analysis_fn_at(&p->fa, off);
	if (!f)
		return -1;
	struct point_state ps = flow_state_at(f, off);
	return point_protected(&ps);
}

static const struct fn *fn_named(struct parsed *p, const char *name)
{
	int i = analysis_fn_index(&p->fa, name, strlen(name));
	return i < 0 ? NULL : &p->fa.fns.items[i];
}

static void test_cfg_shapes(void)
{
	struct parsed p;
	parse(&p, "void f(int x) {\n"
		  "  switch (x) { case 1: a(); case 2: b(); break; default: c(); }\n"
		  "  do { d(); } while (0);\n"
		  "  for (;;) { if (x) break; }\n"
		  "  goto out;\n"
		  "  e();\n"
		  "out:\n"
		  "  return;\n"
		  "}\n");
	const struct fn *f = fn_named(&p, "f");
	CHECK(f != NULL, "function f found");
	struct buf dump = BUF_INIT;
	cfg_dump(&f->cfg, p.src.parse_text, &dump);
	/* case 1 falls through into case 2: the join of `b();` has two predecessors */
	size_t preds_b = 0;
	for (size_t i = 0; i < f->cfg.nodes.len; i++)
		for (size_t k = 0; k < f->cfg.nodes.items[i].succ.len; k++) {
			uint32_t to = f->cfg.nodes.items[i].succ.items[k].to;
			const struct cfg_node *t = &f->cfg.nodes.items[to];
			if (t->kind == CFG_JOIN && t->succ.len == 1) {
				const struct cfg_node *after = &f->cfg.nodes.items[t->succ.items[0].to];
				if (after->kind == CFG_STMT && ts_text_is(after->ast, p.src.parse_text, "b();"))
					preds_b++;
			}
		}
	CHECK(preds_b == 2, "case 2 has the switch and case 1's fall-through as predecessors (%zu)\n%s",
	      preds_b, buf_cstr(&dump));
	/* do { } while (0): the condition has no true edge back */
	bool back = false;
	for (size_t i = 0; i < f->cfg.nodes.len; i++) {
		const struct cfg_node *n = &f->cfg.nodes.items[i];
		if (n->kind == CFG_COND && ts_text_is(n->ast, p.src.parse_text, "(0)"))
			for (size_t k = 0; k < n->succ.len; k++)
				back |= n->succ.items[k].label == EDGE_TRUE;
	}
	CHECK(!back, "do-while(0) never loops");
	/* e() after goto is unreachable */
	uint32_t e = cfg_node_at(&f->cfg, (uint32_t)(strstr(p.src.parse_text, "e();") - p.src.parse_text));
	CHECK(e != UINT32_MAX && !f->reached[e], "code after goto is unreachable");
	buf_release(&dump);
	done(&p);
}

static void test_lock_regions(void)
{
	struct parsed p;
	parse(&p, "static spinlock_t l;\n"
		  "void f(void) {\n"
		  "  unsigned long flags;\n"
		  "  mark_a();\n"
		  "  spin_lock_irqsave(&l, flags);\n"
		  "  mark_b();\n"
		  "  spin_unlock(&l);\n"
		  "  mark_c();\n" /* irqs still off */
		  "  local_irq_restore(flags);\n"
		  "  mark_d();\n"
		  "  spin_lock(&l);\n"
		  "  spin_unlock(&l);\n"
		  "  schedule();\n"
		  "  spin_lock(&l);\n"
		  "  mark_e();\n"
		  "  spin_unlock(&l);\n"
		  "}\n");
	CHECK(protected_at(&p, "a", 0) == 0, "before the lock");
	CHECK(protected_at(&p, "b", 0) == 1, "under spin_lock_irqsave");
	CHECK(protected_at(&p, "c", 0) == 1, "spin_unlock keeps irqs off");
	CHECK(protected_at(&p, "d", 0) == 0, "after local_irq_restore");
	CHECK(protected_at(&p, "e", 0) == 1, "lock retaken after schedule()");
	done(&p);
	/* a lock dropped and retaken in a loop, released once after it: nothing held at the end */
	parse(&p, "static spinlock_t l;\n"
		  "void g(int x) {\n"
		  "  spin_lock(&l);\n"
		  "  while (x--) { mark_a(); spin_unlock(&l); schedule(); spin_lock(&l); }\n"
		  "  spin_unlock(&l);\n"
		  "  mark_b();\n"
		  "}\n");
	CHECK(protected_at(&p, "a", 0) == 1, "loop head: one of the two acquisitions held on every path");
	const char *b = strstr(p.src.parse_text, "mark_b");
	struct point_state ps = flow_state_at(fn_named(&p, "g"), (uint32_t)(b - p.src.parse_text));
	CHECK(ps.may_acq < 0 && ps.must_acq < 0, "after the last unlock no path holds the lock");
	done(&p);
}

static void test_paths(void)
{
	struct parsed p;
	parse(&p, "static spinlock_t l;\n"
		  "int f(int x) {\n"
		  "  if (x)\n"
		  "    spin_lock(&l);\n"
		  "  mark_a();\n"            /* held on one path only */
		  "  if (spin_trylock(&l)) {\n"
		  "    mark_b();\n"
		  "    spin_unlock(&l);\n"
		  "  } else {\n"
		  "    mark_c();\n"
		  "  }\n"
		  "  if (!spin_trylock(&l))\n"
		  "    return 0;\n"
		  "  mark_d();\n"
		  "  spin_unlock(&l);\n"
		  "  preempt_disable();\n"
		  "  while (x--) {\n"
		  "    mark_e();\n"
		  "    if (x == 3) { preempt_enable(); goto out; }\n"
		  "  }\n"
		  "  preempt_enable();\n"
		  "out:\n"
		  "  mark_f();\n"
		  "  return 1;\n"
		  "}\n");
	CHECK(protected_at(&p, "a", 0) == 0, "must-analysis: a lock on one path is no protection");
	CHECK(protected_at(&p, "b", 0) == 1, "trylock success branch");
	CHECK(protected_at(&p, "c", 0) == 0, "trylock failure branch");
	CHECK(protected_at(&p, "d", 0) == 1, "!trylock -> return: locked after");
	CHECK(protected_at(&p, "e", 0) == 1, "loop body under preempt_disable");
	CHECK(protected_at(&p, "f", 0) == 0, "both exits released");
	done(&p);
}

static void test_preproc_and_switch(void)
{
	struct parsed p;
	parse(&p, "static spinlock_t l;\n"
		  "void f(int x) {\n"
		  "#ifdef CONFIG_SMP\n"
		  "  spin_lock(&l);\n"
		  "#endif\n"
		  "  mark_a();\n"            /* the #ifdef arm may be absent */
		  "#if 0\n"
		  "  spin_unlock(&l);\n"
		  "#endif\n"
		  "  switch (x) {\n"
		  "  case 0: spin_lock(&l);\n"
		  "  case 1: mark_b(); break;\n" /* case 1 entered directly: unlocked */
		  "  case 2: spin_lock(&l); mark_c(); spin_unlock(&l); break;\n"
		  "  }\n"
		  "}\n");
	CHECK(protected_at(&p, "a", 0) == 0, "an #ifdef arm is optional");
	CHECK(protected_at(&p, "b", 0) == 0, "case 1 reached with and without the lock");
	CHECK(protected_at(&p, "c", 0) == 1, "case 2 under its own lock");
	done(&p);
}

/* A loop left by break: what follows is reached through the break, in the state at the break. */
static void test_break_exits(void)
{
	struct parsed p;
	parse(&p, "static spinlock_t l;\n"
		  "void f(int x) {\n"
		  "  for (;;) {\n"
		  "    spin_lock(&l);\n"
		  "    if (x) break;\n"
		  "    spin_unlock(&l);\n"
		  "  }\n"
		  "  mark_a();\n"          /* only through the break: the lock held */
		  "  spin_unlock(&l);\n"
		  "  do {\n"
		  "    if (x > 3) break;\n"
		  "    spin_lock(&l);\n"
		  "    spin_unlock(&l);\n"
		  "  } while (x--);\n"
		  "  mark_b();\n"
		  "}\n");
	const struct fn *f = fn_named(&p, "f");
	CHECK(f != NULL, "function f found");
	if (f) {
		const char *a = strstr(p.src.parse_text, "mark_a");
		uint32_t n = cfg_node_at(&f->cfg, (uint32_t)(a - p.src.parse_text));
		CHECK(n != UINT32_MAX && f->reached[n], "after for (;;): reached through the break");
	}
	CHECK(protected_at(&p, "a", 0) == 1, "after for (;;): the lock taken before the break is held");
	CHECK(protected_at(&p, "b", 0) == 0, "after the do-while: the lock is not held");
	done(&p);
}

static void test_contexts(void)
{
	struct parsed p;
	parse(&p, "static spinlock_t l;\n"
		  "static struct timer_list t;\n"
		  "static void helper(void) { mark_a(); }\n"
		  "static void both(void) { mark_b(); }\n"
		  "static void isr(int irq, void *dev, struct pt_regs *regs) { helper(); both(); }\n"
		  "static void tick(unsigned long d) { mark_c(); }\n"
		  "static void tl(unsigned long d) { mark_d(); }\n"
		  "static void deep(void) { mark_e(); }\n"
		  "static void mid(void) { deep(); }\n"
		  "void api(void) {\n"
		  "  both();\n"
		  "  spin_lock(&l); mid(); spin_unlock(&l);\n"
		  "  init_timer(&t); t.function = tick;\n"
		  "  tasklet_init(&x, tl, 0);\n"
		  "}\n");
	CHECK(protected_at(&p, "a", 0) == 1, "helper called only from an IRQ handler");
	CHECK(protected_at(&p, "b", 0) == 0, "helper also called from process context");
	CHECK(protected_at(&p, "c", 0) == 1, "timer function");
	CHECK(protected_at(&p, "d", 0) == 1, "tasklet function");
	CHECK(protected_at(&p, "e", 0) == 1, "two levels of callers under a lock (fixed point)");
	done(&p);
	/* a parameter or variable of a function's name is not its address taken (2.4 ppc uart.c: `int xmon`) */
	parse(&p, "static spinlock_t l;\n"
		  "static void probe(void) { mark_a(); }\n"
		  "static void wait_key(int idx, int probe, char *obuf) { if (!probe) mark_x(); }\n"
		  "static void scan(void) { int probe = 1; mark_y(probe); }\n"
		  "static void kick(void) { mark_b(); }\n"
		  "static void store(void) { void (*f)(void) = kick; f(); }\n"
		  "void api(void) { spin_lock(&l); probe(); kick(); spin_unlock(&l); }\n");
	CHECK(protected_at(&p, "a", 0) == 1, "a parameter and a local named like the function: still called only under a lock");
	CHECK(!fn_named(&p, "probe")->addr_taken, "the parameter is not an address taken");
	CHECK(fn_named(&p, "kick")->addr_taken && protected_at(&p, "b", 0) == 0, "a real address taken still counts");
	done(&p);
}

static void test_neutraliser(void)
{
	const char *code = "static int __init foo_init(void) { return 0; }\n"
			   "EXPORT_SYMBOL(foo_init);\n"
			   "static struct file_operations fops = {\n\towner:\tTHIS_MODULE,\n\tread:\tfoo_read,\n};\n";
	struct source s;
	source_init(&s, "n.c", xstrdup(code), strlen(code));
	CHECK(strlen(s.parse_text) == strlen(code), "same length");
	CHECK(strstr(s.parse_text, "__init") == NULL, "__init blanked");
	CHECK(strstr(s.parse_text, "EXPORT_SYMBOL") == NULL, "EXPORT_SYMBOL blanked");
	CHECK(strstr(s.parse_text, ".owner=") != NULL, "2.4 initialiser made C99: %s", s.parse_text);
	CHECK(s.uses.len == 1 && strcmp(s.uses.items[0].args.items[0], "foo_init") == 0, "use recorded");
	source_release(&s);

	/* inside a function: `#if 0` arms and type arguments of list_entry()/min_t() */
	const char *fn = "void f(void)\n{\n\tprintk(\"%d %d\",\n\t\ta,\n#if 0\n\t\tb\n#else\n\t\tc\n#endif\n\t);\n"
			 "\tq = list_entry(p, struct net_device, poll_list);\n\tn = min_t(unsigned int, x, y);\n"
			 "#if 0\n\tdead();\n#endif\n}\n";
	source_init(&s, "f.c", xstrdup(fn), strlen(fn));
	CHECK(strlen(s.parse_text) == strlen(fn), "same length");
	CHECK(strstr(s.parse_text, "#if") == NULL && strstr(s.parse_text, "#else") == NULL &&
		      strstr(s.parse_text, "#endif") == NULL && strstr(s.parse_text, "\t\tb\n") == NULL &&
		      strstr(s.parse_text, "dead") == NULL,
	      "#if 0 arms, #else and #endif blanked: %s", s.parse_text);
	CHECK(strstr(s.parse_text, "\t\tc\n") != NULL, "the #else arm kept");
	CHECK(strstr(s.parse_text, "list_entry(p, struct_net_device, poll_list)") != NULL &&
		      strstr(s.parse_text, "min_t(unsigned_int, x, y)") != NULL,
	      "type arguments made one identifier: %s", s.parse_text);
	source_release(&s);
	/* at file scope `#if 0` is left to the grammar (a preproc_if it reads) */
	const char *top = "#if 0\nint x;\n#endif\n";
	source_init(&s, "t.c", xstrdup(top), strlen(top));
	CHECK(strstr(s.parse_text, "#if 0") != NULL, "file-scope #if 0 kept");
	source_release(&s);

	/* `#ifdef __cplusplus` arms are dead in the kernel at any depth: `extern "C" {` hid the file */
	const char *cxx = "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void)\n{\n\treturn 0;\n}\n"
			  "#ifdef __cplusplus\n}\n#endif\n#ifdef __cplusplus_not\nint g;\n#endif\n";
	source_init(&s, "x.c", xstrdup(cxx), strlen(cxx));
	CHECK(strlen(s.parse_text) == strlen(cxx), "__cplusplus: same length");
	CHECK(!strstr(s.parse_text, "extern") && !strstr(s.parse_text, "#ifdef __cplusplus\n") &&
	      strstr(s.parse_text, "int f(void)") && strstr(s.parse_text, "#ifdef __cplusplus_not"),
	      "__cplusplus arms blanked, a longer name kept: %s", s.parse_text);
	source_release(&s);
	struct parsed q;
	parse(&q, cxx);
	CHECK(ts_count_errors(ts_tree_root_node(q.tree)) == 0 && fn_named(&q, "f"),
	      "the function after extern \"C\" { parses");
	done(&q);

	/*
	 * Two arms that open the same brace (2.4 e1000_probe()), and a
	 * function's declarator given once per configuration: the parse
	 * keeps the first arm; the functions after them are found.
	 */
	const char *split = "int g(int a)\n{\n#ifdef X\n\tif (a) {\n#else\n\tif (!a) {\n#endif\n"
			    "\t\tmark_in(a);\n\t}\n\treturn 0;\n}\n"
			    "static int\n#ifdef Y\nh(int a, int b)\n#else\nh(int a)\n#endif\n{\n\treturn a;\n}\n"
			    "int k(void)\n{\n\tspin_lock(&l);\n\tmark_k();\n\tspin_unlock(&l);\n\treturn 1;\n}\n";
	source_init(&s, "s.c", xstrdup(split), strlen(split));
	CHECK(strlen(s.parse_text) == strlen(split), "split arms: same length");
	CHECK(strstr(s.parse_text, "if (a) {") && !strstr(s.parse_text, "if (!a)") && !strstr(s.parse_text, "#ifdef") &&
		      !strstr(s.parse_text, "#else") && !strstr(s.parse_text, "#endif"),
	      "the first arm kept, the rest blanked: %s", s.parse_text);
	CHECK(strstr(s.parse_text, "h(int a, int b)") && !strstr(s.parse_text, "h(int a)\n"),
	      "the first declarator kept: %s", s.parse_text);
	source_release(&s);
	struct parsed p;
	parse(&p, split);
	CHECK(ts_count_errors(ts_tree_root_node(p.tree)) == 0, "split arms parse without an error");
	CHECK(fn_named(&p, "g") && fn_named(&p, "h") && fn_named(&p, "k"), "every function found");
	CHECK(protected_at(&p, "k", 0) == 1, "the function after them analysed");
	done(&p);
	/* arms whose braces balance, or that differ, are the grammar's */
	const char *kept = "void f(void)\n{\n#ifdef X\n\ta();\n#else\n\tb();\n#endif\n"
			   "#ifdef Y\n\tif (a) {\n#else\n\tc();\n#endif\n\t}\n}\n";
	source_init(&s, "k.c", xstrdup(kept), strlen(kept));
	CHECK(strstr(s.parse_text, "#ifdef X") && strstr(s.parse_text, "#ifdef Y") && strstr(s.parse_text, "c();"),
	      "balanced or unequal arms left as they are: %s", s.parse_text);
	source_release(&s);
	/* arms that open the same parentheses of one `if`, and an arm holding only an `if` head */
	const char *heads = "void f(int a)\n{\n\tcli();\n#ifdef X\n\tif ((a & 1) ==\n#else\n\tif ((g(a) & 1) ==\n#endif\n"
			    "\t    1)\n\t\tb();\n#ifdef Y\n\tif (a)\n#endif\n\t\tc();\n\tsti();\n}\n";
	source_init(&s, "h.c", xstrdup(heads), strlen(heads));
	CHECK(strlen(s.parse_text) == strlen(heads) && strstr(s.parse_text, "if ((a & 1) ==") &&
		      !strstr(s.parse_text, "g(a)") && strstr(s.parse_text, "\tif (a)\n") && !strchr(s.parse_text, '#'),
	      "split parentheses: the first arm; an if head: its arm kept, the directives blanked: %s", s.parse_text);
	source_release(&s);
	parse(&p, heads);
	CHECK(ts_count_errors(ts_tree_root_node(p.tree)) == 0, "statement heads in #if arms parse without an error");
	done(&p);
	/* an attribute after a declarator: 2.4 traps.c's idt_table left the rest of the file unread */
	const char *attr = "struct desc t[256] __attribute__((__section__(\".data.idt\"))) = { {0, 0}, };\n"
			   "static int u __attribute__ ((unused)), v;\n"
			   "void die(void) __attribute__((noreturn));\n"
			   "static __attribute__((unused)) int w;\n"
			   "void k(void)\n{\n\tspin_lock(&l);\n\tmark_k();\n\tspin_unlock(&l);\n}\n";
	source_init(&s, "a.c", xstrdup(attr), strlen(attr));
	CHECK(strlen(s.parse_text) == strlen(attr), "attributes: same length");
	CHECK(strstr(s.parse_text, "static __attribute__((unused)) int w;") && strstr(s.parse_text, "t[256]") &&
		      strstr(s.parse_text, "= { {0, 0}, };") && !strstr(s.parse_text, "__section__") &&
		      !strstr(s.parse_text, "noreturn") && !strstr(s.parse_text, "(unused)),"),
	      "only the attributes after a declarator blanked: %s", s.parse_text);
	source_release(&s);
	parse(&p, attr);
	CHECK(ts_count_errors(ts_tree_root_node(p.tree)) == 0, "attributes after declarators parse without an error");
	CHECK(protected_at(&p, "k", 0) == 1, "the function after them analysed");
	done(&p);
}

static void deep_nesting(size_t i, void *ctx)
{
	(void)i;
	(void)ctx;
	/* 3000 nested blocks and a long expression chain: no recursion limit on the walk */
	struct buf b = BUF_INIT;
	buf_puts(&b, "void f(int x) {\n");
	for (int i = 0; i < 3000; i++)
		buf_puts(&b, "{");
	buf_puts(&b, "x = 1");
	for (int i = 0; i < 20000; i++)
		buf_puts(&b, " + x");
	buf_puts(&b, "; mark_a();");
	for (int i = 0; i < 3000; i++)
		buf_puts(&b, "}");
	buf_puts(&b, "\n}\n");
	struct parsed p;
	parse(&p, buf_cstr(&b));
	CHECK(fn_named(&p, "f") != NULL, "deeply nested function analysed");
	CHECK(protected_at(&p, "a", 0) == 0, "state computed at depth 3000");
	done(&p);
	buf_release(&b);
}

/* The tree index's fixed point over files written to a temporary directory. */
static void test_tree_fixed_point(void)
{
	char dir[] = "/tmp/preemptify-tree-XXXXXX";
	if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp"))
		return;
	static const struct {
		const char *name, *text;
	} files[] = {
		/* ring_a() and ring_b() call each other with preemption on; top_caller() holds a lock */
		{"a.c", "void ring_a(void) { int c = smp_processor_id(); use(c); ring_b(); }\n"
			"void top_caller(void) { spin_lock(&l); ring_a(); spin_unlock(&l); }\n"},
		{"b.c", "void ring_b(void) { int c = smp_processor_id(); use(c); ring_a(); }\n"},
		/* lock_e() and lock_f() call each other with a lock held; lock_g() too: all atomic */
		{"e.c", "void lock_e(void) { int c = smp_processor_id(); use(c); spin_lock(&m); lock_f(); spin_unlock(&m); }\n"
			"void lock_g(void) { spin_lock(&m); lock_e(); spin_unlock(&m); }\n"},
		{"f.c", "void lock_f(void) { int c = smp_processor_id(); use(c); spin_lock(&m); lock_e(); spin_unlock(&m); }\n"},
		/* helper_h() is called only by handler_k(), an IRQ handler */
		{"h.c", "void helper_h(void) { int c = smp_processor_id(); use(c); }\n"},
		{"k.c", "static void handler_k(int irq, void *d, struct pt_regs *r) { helper_h(); }\n"
			"void setup_x(void) { request_irq(1, handler_k, 0, \"k\", 0); }\n"},
		/* hooked_n() is also reached through a function pointer: unknown callers */
		{"n.c", "void hooked_n(void) { int c = smp_processor_id(); use(c); }\n"
			"void (*hook)(void) = hooked_n;\n"
			"void caller_p(void) { spin_lock(&m); hooked_n(); spin_unlock(&m); }\n"},
	};
	char *paths[ARRAY_SIZE(files)];
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		paths[i] = xasprintf("%s/%s", dir, files[i].name);
		CHECK(write_file(paths[i], files[i].text, strlen(files[i].text)) == 0, "write %s", paths[i]);
	}
	tree_want_vec want = VEC_INIT;
	static const char *const names[] = {"ring_a", "ring_b", "lock_e", "lock_f", "helper_h", "hooked_n", "f"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct tree_want w = {xstrdup(names[i]), xstrdup("-")};
		vec_push(&want, w);
	}
	struct tree_context *t = NULL;
	tree_context_build(&t, paths, ARRAY_SIZE(files), &want, NULL, 2, NULL);
	enum fn_context ctx = CTX_HARDIRQ;
	const char *why = NULL;
	CHECK(tree_context_lookup(t, "ring_a", 6, "-", &ctx, &why) && ctx == CTX_PROCESS && strstr(why, "cycle"),
	      "a cycle with preemption on stays preemptible (pessimistic): %s", why ? why : "(none)");
	CHECK(tree_context_lookup(t, "ring_b", 6, "-", &ctx, &why) && ctx == CTX_PROCESS, "b: the other half of the cycle");
	CHECK(tree_context_lookup(t, "lock_e", 6, "-", &ctx, &why) && ctx == CTX_CALLERS && strstr(why, "from lock_g()"),
	      "e: every call holds a lock, across the cycle: %s", why ? why : "(none)");
	CHECK(tree_context_lookup(t, "lock_f", 6, "-", &ctx, &why) && ctx == CTX_CALLERS, "f: called from e() with m held");
	CHECK(tree_context_lookup(t, "helper_h", 8, "-", &ctx, &why) && ctx == CTX_CALLERS && strstr(why, "hard-IRQ"),
	      "h: its only caller is an interrupt handler in another file: %s", why ? why : "(none)");
	CHECK(tree_context_lookup(t, "hooked_n", 8, "-", &ctx, &why) && ctx == CTX_PROCESS &&
		      strstr(why, "stored in the pointer hook") && strstr(why, "no caller"),
	      "n: stored in a pointer nothing calls: preemptible: %s", why ? why : "(none)");
	CHECK(!tree_context_lookup(t, "top_caller", 10, "-", &ctx, &why), "a name never asked about is not followed");
	CHECK(tree_context_atomic(t, "lock_e", "-") && !tree_context_atomic(t, "ring_a", "-"), "tree_context_atomic()");
	static const char calls_e[] = "void x(void) { lock_e(); }", calls_a[] = "void x(void) { ring_a(); my_lock_e(); }";
	CHECK(tree_context_names_atomic(t, "-", calls_e, strlen(calls_e)) &&
		      !tree_context_names_atomic(t, "-", calls_a, strlen(calls_a)) &&
		      !tree_context_names_atomic(NULL, "-", calls_e, strlen(calls_e)),
	      "tree_context_names_atomic(): a text naming a function the tree made atomic, as a whole word");
	CHECK(tree_context_lookup(t, "f", 1, "-", &ctx, &why) && ctx == CTX_PROCESS && strstr(why, "fewer than"),
	      "a name too short to follow stays preemptible: %s", why ? why : "(none)");
	tree_context_free(t);
	tree_want_release(&want);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		remove(paths[i]);
		free(paths[i]);
	}
	rmdir(dir);
}

/* The P004 findings of CODE (no plan verification): how many, and the fix of the first. */
static size_t define_sites(const char *code, enum fix_kind *fix, bool *in_define)
{
	struct scan_options o = SCAN_OPTIONS_INIT;
	struct scan_result r = SCAN_RESULT_INIT;
	o.no_verify = true;
	scan_buffer("body.c", code, strlen(code), &o, &r);
	size_t n = 0;
	for (size_t i = 0; i < r.findings.len; i++) {
		const struct finding *f = &r.findings.items[i];
		if (f->rule != RULE_P004 || f->protected_site)
			continue;
		if (n++ == 0) {
			*fix = f->fix;
			*in_define = f->edits.len == 1 && f->edits.items[0].in_define;
		}
	}
	scan_result_release(&r);
	return n;
}

/* Reschedule checks inside #define bodies: which bodies are sites, and how they are fixed. */
static void test_define_bodies(void)
{
	static const struct {
		const char *code;
		size_t sites;
		enum fix_kind fix;
		const char *what;
	} cases[] = {
		{"#define A do { if (current->need_resched) schedule(); } while (0)\n", 1, FIX_COND_RESCHED,
		 "do/while check: cond_resched() in the body"},
		{"#define A \\\n\tif (unlikely(current->need_resched)) { \\\n\t\tschedule(); \\\n\t}\n", 1,
		 FIX_COND_RESCHED, "a braced check over continuation lines"},
		{"#define B() if (current->need_resched) schedule()\n", 0, FIX_NONE,
		 "no `;`: spatch cannot parse it, so its uses are the sites"},
		{"#define C do { if (current->need_resched) schedule(); else idle(); } while (0)\n", 0, FIX_NONE,
		 "an else arm: not the reschedule check alone"},
		{"#define D() (current->need_resched = 1)\n", 0, FIX_NONE, "a write to the flag is the scheduler's"},
		{"#define D2() (&current->need_resched)\n", 0, FIX_NONE, "its address is the scheduler's"},
		{"#if LINUX_VERSION_CODE < KERNEL_VERSION(2,5,0)\n#define E do { if (current->need_resched) schedule(); } "
		 "while (0)\n#endif\n", 0, FIX_NONE, "a version-guarded compatibility definition"},
		{"#define need_resched() (current->need_resched)\n", 0, FIX_NONE, "a shim defining the 2.6 API itself"},
		{"#define F(t) ((t)->need_resched)\n", 0, FIX_NONE, "a test of a task given: its uses decide"},
		{"#define G (current->need_resched)\n", 1, FIX_NEED_RESCHED_CALL, "a test: need_resched() in the body"},
		{"#define H do { if (current->need_resched) schedule(); } while (0)\nvoid f(void)\n{\n\tH;\n\tH;\n}\n", 1,
		 FIX_COND_RESCHED, "the uses of a rewritten macro are not sites"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum fix_kind fix = FIX_NONE;
		bool in_define = false;
		size_t n = define_sites(cases[i].code, &fix, &in_define);
		CHECK(n == cases[i].sites && (n == 0 || (fix == cases[i].fix && in_define)),
		      "%s: %zu sites (want %zu), fix %d (want %d), edit in the #define: %d", cases[i].what, n,
		      cases[i].sites, (int)fix, (int)cases[i].fix, in_define);
	}
}

/*
 * Architectures: a function defined under arch/alpha meets the callers of
 * generic code and of alpha, not those of arch/mips (another family), and
 * the mips function of the same name is followed on its own.
 */
/*
 * Families that share sources but not with each other: m68k meets sparc
 * (its asm-sparc headers) and ppc (the Amiga and Mac buses), sparc and ppc
 * do not meet (2.6.9 ppc64's pte_clear() is not the one arch/sparc takes
 * the address of).
 */
static void test_tree_family_meets(void)
{
	unsigned ppc64 = tree_arch_family("include/asm-ppc64/pgtable.h");
	unsigned sparc = tree_arch_family("arch/sparc/mm/srmmu.c");
	unsigned m68k = tree_arch_family("arch/m68k/kernel/ints.c"), ppc = tree_arch_family("arch/ppc/mm/init.c");
	unsigned zorro = tree_arch_family("drivers/zorro/zorro.c"), sparc64 = tree_arch_family("arch/sparc64/mm/tlb.c");
	CHECK(!tree_families_meet(ppc64, sparc), "ppc64 and sparc do not meet");
	CHECK(!tree_families_meet(ppc, sparc64), "ppc and sparc64 do not meet");
	CHECK(tree_families_meet(ppc, ppc64) && tree_families_meet(sparc, sparc64), "ppc with ppc64, sparc with sparc64");
	CHECK(tree_families_meet(m68k, sparc) && tree_families_meet(m68k, ppc64), "m68k meets sparc and ppc");
	CHECK(tree_families_meet(zorro, ppc) && tree_families_meet(zorro, m68k), "the Amiga bus meets ppc and m68k");
	CHECK(tree_families_meet(0, sparc) && tree_families_meet(ppc64, 0), "generic code meets all");
}

static void test_tree_arch_families(void)
{
	char dir[] = "/tmp/preemptify-tree-XXXXXX";
	if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp"))
		return;
	static const struct {
		const char *name, *text;
	} files[] = {
		{"arch/alpha/kernel/irq.c", "void dispatch_irq(int irq) { int c = smp_processor_id(); use(c, irq); }\n"},
		{"arch/alpha/kernel/entry.c", "void alpha_int(int irq, void *d, struct pt_regs *r) { dispatch_irq(irq); }\n"
					      "void alpha_setup(void) { request_irq(1, alpha_int, 0, \"a\", 0); }\n"},
		{"arch/mips/kernel/irq.c", "void dispatch_irq(int irq) { int c = smp_processor_id(); use(c, irq); }\n"
					   "void mips_poll(void) { dispatch_irq(3); }\n"},
		{"kernel/generic.c", "void core_hook(void) { int c = smp_processor_id(); use(c); }\n"},
		{"arch/mips/kernel/hook.c", "void mips_hook(void) { core_hook(); }\n"},
		{"arch/alpha/kernel/hook.c", "void alpha_hook(void) { spin_lock(&l); core_hook(); spin_unlock(&l); }\n"},
	};
	char *paths[ARRAY_SIZE(files)];
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		paths[i] = xasprintf("%s/%s", dir, files[i].name);
		for (char *sl = strchr(paths[i] + strlen(dir) + 1, '/'); sl; sl = strchr(sl + 1, '/')) {
			*sl = '\0';
			mkdir(paths[i], 0700);
			*sl = '/';
		}
		CHECK(write_file(paths[i], files[i].text, strlen(files[i].text)) == 0, "write %s", paths[i]);
	}
	tree_want_vec want = VEC_INIT;
	struct tree_want w[] = {{xstrdup("dispatch_irq"), xstrdup(paths[0])},
				{xstrdup("dispatch_irq"), xstrdup(paths[2])},
				{xstrdup("core_hook"), xstrdup(paths[3])}};
	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		vec_push(&want, w[i]);
	struct tree_context *t = NULL;
	tree_context_build(&t, paths, ARRAY_SIZE(files), &want, NULL, 2, NULL);
	enum fn_context ctx = CTX_HARDIRQ;
	const char *why = NULL;
	CHECK(tree_context_lookup(t, "dispatch_irq", 12, paths[0], &ctx, &why) && ctx == CTX_CALLERS,
	      "alpha's dispatch_irq(): called only from alpha's IRQ handler; the mips call is another function: %s",
	      why ? why : "(none)");
	CHECK(tree_context_lookup(t, "dispatch_irq", 12, paths[2], &ctx, &why) && ctx == CTX_PROCESS,
	      "mips's dispatch_irq(): called with preemption on: %s", why ? why : "(none)");
	CHECK(tree_context_lookup(t, "core_hook", 9, paths[3], &ctx, &why) && ctx == CTX_PROCESS,
	      "generic code meets every architecture's callers: %s", why ? why : "(none)");
	tree_context_free(t);
	tree_want_release(&want);
	for (size_t i = ARRAY_SIZE(files); i-- > 0;) {
		remove(paths[i]);
		free(paths[i]);
	}
	static const char *const dirs[] = {"arch/alpha/kernel", "arch/alpha", "arch/mips/kernel", "arch/mips", "arch",
					   "kernel"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *d = xasprintf("%s/%s", dir, dirs[i]);
		rmdir(d);
		free(d);
	}
	rmdir(dir);
}

/* A .S file's comments name no function: only what is left can be a call. */
static void test_asm_comments(void)
{
	const char *in = "/* calls do_x() */\n\tcall do_y\t/* then\n   do_z */\n\t.ascii \"/* do_w\"\n/* open";
	char *t = xstrdup(in);
	size_t n = strlen(t);
	asm_blank_comments(t, n);
	CHECK(strlen(t) == n && !text_has_word(t, n, "do_x") && !text_has_word(t, n, "do_z"), "comments blanked: %s", t);
	CHECK(text_has_word(t, n, "do_y") && text_has_word(t, n, "do_w"), "code and strings kept: %s", t);
	CHECK(strchr(t, '\n') && strstr(t, "\n\t.ascii") != NULL, "newlines kept: %s", t);
	CHECK(strstr(t, "open") == NULL, "an unterminated comment runs to the end: %s", t);
	free(t);
	const char *lines = "# is done in do_a().\n#define X do_b\n  #include \"do_c.h\"\n"
			    "\tcall do_d // then do_e\n#ifdef CONFIG_X\n# 12 \"f.S\"\n\tmov r, 1 # do_f\n";
	t = xstrdup(lines);
	n = strlen(t);
	asm_blank_comments(t, n);
	CHECK(!text_has_word(t, n, "do_a") && !text_has_word(t, n, "do_e"), "# line and // comments blanked: %s", t);
	CHECK(text_has_word(t, n, "do_b") && text_has_word(t, n, "do_d") && text_has_word(t, n, "CONFIG_X") &&
	      strstr(t, "do_c.h") && strstr(t, "# 12") && text_has_word(t, n, "do_f"),
	      "directives, code, line markers and a # after code kept: %s", t);
	free(t);
}

struct leaves {
	VEC(TSNode) v;
};

static bool leaf_visit(TSNode n, void *ctx)
{
	struct leaves *l = ctx;
	if (ts_node_child_count(n) == 0 && ts_node_end_byte(n) > ts_node_start_byte(n))
		vec_push(&l->v, n);
	return true;
}

/* ts_seek_range(): each leaf of a walk, sought in order, is found as itself. */
static void test_seek(void)
{
	static const char code[] =
		"/* f() in a comment */\n"
		"static int f(int *p) { return 1; }\n"
		"#define M(x) f(x)\n"
		"static struct ops o = { .open = f, 0 };\n"
		"static void g(int *pAC)\n{\n\tint a = 0; /* f */\n"
		"#define D pAC->info\n"
		"\tif (!f(pAC) && -a) {\n\t\tif (D.x == 1) a = f(&a) + (f)(0);\n\t}\n"
		"\tchar *s = \"f(\";\n\tgoto out;\nout:\n\ta = f(p ? q : r)[1];\n"
		"\tswitch (a) { case 1: f(0); }\n"
		"\tint )( broken = f;\n}\n";
	struct parsed p;
	parse(&p, code);
	struct leaves l = {VEC_INIT};
	ts_walk(ts_tree_root_node(p.tree), leaf_visit, &l);
	CHECK(l.v.len > 100, "the walk found the leaves (%zu)", l.v.len);
	struct ts_seek k;
	ts_seek_init(&k, ts_tree_root_node(p.tree));
	size_t same = 0;
	for (size_t i = 0; i < l.v.len; i++) {
		TSNode n = l.v.items[i];
		TSNode got = ts_seek_range(&k, ts_node_start_byte(n), ts_node_end_byte(n));
		bool ok = ts_node_eq(got, n);
		same += ok;
		CHECK(ok, "leaf %zu '%s' at %u: got '%s' at %u", i, ts_node_type(n), ts_node_start_byte(n),
		      ts_node_is_null(got) ? "(null)" : ts_node_type(got), ts_node_start_byte(got));
	}
	CHECK(same == l.v.len, "every leaf sought in order is found (%zu of %zu)", same, l.v.len);
	ts_seek_release(&k);
	/* only some, as fn_idents() seeks: the cursor comes down from higher up */
	ts_seek_init(&k, ts_tree_root_node(p.tree));
	size_t fs = 0;
	for (size_t i = 0; i < l.v.len; i++) {
		TSNode n = l.v.items[i];
		if (!ts_type_is(n, "identifier") || !ts_text_is(n, p.src.parse_text, "f"))
			continue;
		fs++;
		TSNode got = ts_seek_range(&k, ts_node_start_byte(n), ts_node_end_byte(n));
		CHECK(ts_node_eq(got, n), "f at %u: got '%s' at %u", ts_node_start_byte(n),
		      ts_node_is_null(got) ? "(null)" : ts_node_type(got), ts_node_start_byte(got));
	}
	CHECK(fs >= 8, "the f identifiers sought (%zu)", fs);
	ts_seek_release(&k);
	/* a range inside a comment: the comment spans it */
	ts_seek_init(&k, ts_tree_root_node(p.tree));
	const char *c = strstr(code, "f() in");
	TSNode in = ts_seek_range(&k, (uint32_t)(c - code), (uint32_t)(c - code) + 1);
	CHECK(ts_type_is(in, "comment"), "a name in a comment is no identifier: %s", ts_node_type(in));
	ts_seek_release(&k);
	vec_release(&l.v);
	done(&p);
}

/* api_text_words(): the classes of the prefilter of P006 and P007, in code only. */
static void test_api_words(void)
{
	static const struct {
		const char *text;
		unsigned want;
	} cases[] = {
		{"f() { spin_lock_irqsave(&l, fl); }", API_WORD_LOCK},
		{"f() { restore_flags(fl); }", API_WORD_LOCK},
		{"f() { cli(); } /* sti */", API_WORD_LOCK},
		{"f() { clients(); still(); } /* spin_lock(&l) */ char *s = \"cli()\";", 0},
		{"f() { schedule(); }", API_WORD_SLEEP},
		{"f() { p = kmalloc(n, GFP_KERNEL); }", API_WORD_SLEEP},
		{"f() { request_irq(1, h, 0, \"h\", 0); }", API_WORD_SLEEP | API_WORD_CONTEXT},
		{"void h(int i, void *d, struct pt_regs *r) { }", API_WORD_CONTEXT},
		{"static struct timer_list t = { function: tick };", API_WORD_CONTEXT},
		{"DECLARE_TASKLET_DISABLED(t, run, 0);", API_WORD_CONTEXT},
		{"static struct packet_type pt = { 0, 0, rcv };", API_WORD_CONTEXT},
		{"f() { my_wait(); }", 0},
	};
	unsigned all = API_WORD_LOCK | API_WORD_SLEEP | API_WORD_CONTEXT;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned got = api_text_words(cases[i].text, strlen(cases[i].text), all);
		CHECK(got == cases[i].want, "%s: classes %u, want %u", cases[i].text, got, cases[i].want);
	}
	kernel_api_add_sleeper("my_wait");
	CHECK(api_text_words("f() { my_wait(); }", 18, all) == API_WORD_SLEEP, "the user's sleeper is a sleep word");
	kernel_api_reset_sleepers();
}

/* tree_ids_of(): every word wherever it falls against the 64-byte blocks of the fast path. */
static void test_tree_ids(void)
{
	static const char *const fillers[] = {" ", "(", "\n", "\x80", "-"};
	char word[101];
	memset(word, 'w', 100);
	word[0] = '_', word[99] = '$', word[100] = '\0';
	const char *names[] = {"do_timer", "irq", word, "x$y_z"};
	for (size_t w = 0; w < sizeof names / sizeof names[0]; w++)
		for (size_t f = 0; f < sizeof fillers / sizeof fillers[0]; f++)
			for (size_t at = 0; at < 200; at++) {
				struct buf b = BUF_INIT;
				for (size_t i = 0; i < at; i++)
					buf_puts(&b, fillers[f]);
				buf_puts(&b, names[w]);
				buf_puts(&b, fillers[f]);
				buf_puts(&b, "0x1234abcd 12345678 abc");
				for (size_t i = 0; i < at % 70; i++)
					buf_puts(&b, fillers[f]);
				struct tree_ids ids = {NULL, 0};
				tree_ids_of(b.ptr, b.len, &ids);
				bool want = strlen(names[w]) >= TREE_MIN_NAME;
				CHECK(ids.n == (want ? 1u : 0u) && tree_ids_has(&ids, names[w]) == want,
				      "%s at %zu after '%s': %zu ids", names[w], at, fillers[f], ids.n);
				free(ids.ids);
				buf_release(&b);
			}
}

int main(void)
{
	test_cfg_shapes();
	test_lock_regions();
	test_paths();
	test_preproc_and_switch();
	test_break_exits();
	test_contexts();
	test_neutraliser();
	test_tree_fixed_point();
	test_tree_arch_families();
	test_tree_family_meets();
	test_define_bodies();
	test_asm_comments();
	test_tree_ids();
	test_api_words();
	test_seek();
	/* like the scanner, on a worker thread's stack */
	parallel_for(1, 1, deep_nesting, NULL);
	return check_summary();
}
