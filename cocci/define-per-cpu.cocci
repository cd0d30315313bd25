/// Turn a file-scope T x[NR_CPUS] array into a per-CPU variable.
///
/// Sidecar: R sites are the declaration (-> [static] DEFINE_PER_CPU(T, x);
/// an extern one -> DECLARE_PER_CPU(T, x); the element type of a padding
/// union is its member's), EXPORT_SYMBOL[_GPL](x) (-> EXPORT_PER_CPU_SYMBOL),
/// x[smp_processor_id()] (-> get_cpu_var(x) or __get_cpu_var(x), as the
/// sites TEXT says) and other x[i] (-> per_cpu(x, i)); A sites insert
/// put_cpu_var(x); after the statement.
/// Standalone: every static T x[NR_CPUS] becomes DEFINE_PER_CPU, every
/// x[smp_processor_id()] becomes __get_cpu_var(x) (protection NOT added:
/// review each), every other x[i] becomes per_cpu(x, i).
/// Modern target (--target modern): single updates become this_cpu_*;
/// protected reads (*this_cpu_ptr(&x)).
//
// Rules: P001, P002, P008
// Confidence: High
// Options: --no-includes
// (make coccicheck passes the rest of that line to spatch: flags only there;
// preemptify adds --very-quiet --no-show-diff --timeout N -o OUT.)
// Modes: patch (the default, also with no -D: rewrite every site the
//        standalone rules match); report and org (one line per site:
//        FILE:LINE:COL or an Org TODO, and the rule); context (the sites'
//        lines as - lines of a diff). Chosen with -D MODE, as make
//        coccicheck MODE=... runs spatch. -D sites=FILE: preemptify's
//        mode, only the listed sites (see cocci/sidecar.cocci).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/define-per-cpu.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/define-per-cpu.cocci M=drivers/foo

virtual patch
virtual report
virtual context
virtual org
// -D op_R|op_A|op_B (preemptify): one operation per run, the others off
virtual op_R
virtual op_A
virtual op_B

#include "cocci/sidecar.cocci"

// Sidecar rules: they match only with -D sites=FILE. Those that change
// code are off with -D context (spatch runs no * rule with a -/+ rule).

// The declaration: the R site spans it; its TEXT gives the element type
// (for a padding union, its member's) and the name. `__cacheline_aligned`
// and an all-zero initialiser go with the old declaration.
@decl_static depends on !op_A && !op_B@
type T; identifier x; expression N; initializer I;
position p : script:python () { decl_parts(p, "static DEFINE_PER_CPU(") is not None };
@@
(
  static T x@p[N] = I;
|
  static T x@p[N];
)

@script:python decl_static_text@
p << decl_static.p;
ty; nm;
@@
m = decl_parts(p, "static DEFINE_PER_CPU(")
coccinelle.ty = cocci.make_ident(m[0])
coccinelle.nm = cocci.make_ident(m[1])

@depends on !context@
type T; identifier x; expression N; initializer I;
position decl_static.p; identifier decl_static_text.ty, decl_static_text.nm;
declarer name DEFINE_PER_CPU;
@@
(
- static T x@p[N] = I;
+ static DEFINE_PER_CPU(ty, nm);
|
- static T x@p[N];
+ static DEFINE_PER_CPU(ty, nm);
)

@decl_global depends on !op_A && !op_B@
type T; identifier x; expression N; initializer I;
position p : script:python () { decl_parts(p, "DEFINE_PER_CPU(") is not None };
@@
(
  T x@p[N] = I;
|
  T x@p[N];
)

@script:python decl_global_text@
p << decl_global.p;
ty; nm;
@@
m = decl_parts(p, "DEFINE_PER_CPU(")
coccinelle.ty = cocci.make_ident(m[0])
coccinelle.nm = cocci.make_ident(m[1])

@depends on !context@
type T; identifier x; expression N; initializer I;
position decl_global.p; identifier decl_global_text.ty, decl_global_text.nm;
declarer name DEFINE_PER_CPU;
@@
(
- T x@p[N] = I;
+ DEFINE_PER_CPU(ty, nm);
|
- T x@p[N];
+ DEFINE_PER_CPU(ty, nm);
)

// An extern declaration of an array converted across the tree's files.
@decl_extern depends on !op_A && !op_B@
type T; identifier x; expression N;
position p : script:python () { decl_parts(p, "DECLARE_PER_CPU(") is not None };
@@
(
  extern T x@p[N];
|
  extern T x@p[];
)

@script:python decl_extern_text@
p << decl_extern.p;
ty; nm;
@@
m = decl_parts(p, "DECLARE_PER_CPU(")
coccinelle.ty = cocci.make_ident(m[0])
coccinelle.nm = cocci.make_ident(m[1])

@depends on !context@
type T; identifier x; expression N;
position decl_extern.p; identifier decl_extern_text.ty, decl_extern_text.nm;
declarer name DECLARE_PER_CPU;
@@
(
- extern T x@p[N];
+ DECLARE_PER_CPU(ty, nm);
|
- extern T x@p[];
+ DECLARE_PER_CPU(ty, nm);
)

// Its EXPORT_SYMBOL: the per-CPU variable's symbol is exported instead.
@depends on !context && !op_A && !op_B@
identifier x;
declarer name EXPORT_SYMBOL, EXPORT_PER_CPU_SYMBOL;
position p : script:python () { site(p, "R", "EXPORT_PER_CPU_SYMBOL(") };
@@
- EXPORT_SYMBOL@p(x);
+ EXPORT_PER_CPU_SYMBOL(x);

@depends on !context && !op_A && !op_B@
identifier x;
declarer name EXPORT_SYMBOL_GPL, EXPORT_PER_CPU_SYMBOL_GPL;
position p : script:python () { site(p, "R", "EXPORT_PER_CPU_SYMBOL_GPL(") };
@@
- EXPORT_SYMBOL_GPL@p(x);
+ EXPORT_PER_CPU_SYMBOL_GPL(x);

@depends on !context && !op_A && !op_B@
identifier x;
position p : script:python () { site(p, "R", "get_cpu_var", "subscript_expression") };
@@
- x@p[smp_processor_id()]
+ get_cpu_var(x)

@depends on !context && !op_A && !op_B@
identifier x;
position p : script:python () { site(p, "R", "__get_cpu_var", "subscript_expression") };
@@
- x@p[smp_processor_id()]
+ __get_cpu_var(x)

@depends on !context && !op_A && !op_B@
identifier x; expression E;
position p : script:python () { site(p, "R", "per_cpu", "subscript_expression") };
@@
- x@p[E]
+ per_cpu(x, E)

// A cache-line padding union: x[i].v is the per-CPU variable itself.
@depends on !context && !op_A && !op_B@
identifier x, v;
position p : script:python () { site(p, "R", "get_cpu_var", "field_expression") };
@@
- x@p[smp_processor_id()].v
+ get_cpu_var(x)

@depends on !context && !op_A && !op_B@
identifier x, v;
position p : script:python () { site(p, "R", "__get_cpu_var", "field_expression") };
@@
- x@p[smp_processor_id()].v
+ __get_cpu_var(x)

@depends on !context && !op_A && !op_B@
identifier x, v; expression E;
position p : script:python () { site(p, "R", "per_cpu", "field_expression") };
@@
- x@p[E].v
+ per_cpu(x, E)

// A struct of per-CPU arrays (2.4 `struct kernel_stat kstat`): the fields
// that move are removed from the struct (R sites on their declarations,
// empty TEXT); the per-CPU part goes after the instance's declaration and
// its extern (A sites: TEXT ends with DEFINE_PER_CPU(T, v) or
// DECLARE_PER_CPU(T, v), after the per-CPU struct where the struct is
// defined); EXPORT_SYMBOL(x) gets EXPORT_PER_CPU_SYMBOL(v) after it (R site,
// TEXT both); x.f[i] becomes the sites TEXT (per_cpu(v, i).f,
// __get_cpu_var(v).f or get_cpu_var(v).f).
@soa_use depends on !op_A && !op_B@
identifier x, f; expression E;
position p : script:python () { site(p, "R", "", "field_subscript") };
@@
  x@p.f[E]

@script:python soa_use_text@
p << soa_use.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on !context@
identifier x, f; expression E; position soa_use.p; identifier soa_use_text.t;
@@
- x@p.f[E]
+ t

@soa_field depends on !context && !op_A && !op_B@
identifier S, f; type T;
position p : script:python () { site_span_node(p, "R", "field_declaration") is not None };
@@
struct S { ...
- T f@p;
  ...
};

@soa_decl depends on !op_R && !op_B@
type T; identifier x;
position p : script:python () { site_span_node(p, "A", "declaration") is not None };
@@
(
  extern T x@p;
|
  static T x@p;
|
  T x@p;
)

@script:python soa_decl_text@
p << soa_decl.p;
dn; ty; nm;
@@
import re
m = re.match(r'^(.*(?:DEFINE|DECLARE)_PER_CPU)\((.*), (\w+)\)$', SITES[site_span_node(p, "A", "declaration")].rstrip().rstrip(';'), re.S)
coccinelle.dn = cocci.make_ident(m.group(1))
coccinelle.ty = cocci.make_ident(m.group(2))
coccinelle.nm = cocci.make_ident(m.group(3))

@depends on !context@
type T; identifier x; position soa_decl.p;
identifier soa_decl_text.ty, soa_decl_text.nm; declarer soa_decl_text.dn;
@@
(
  extern T x@p;
+ dn(ty, nm);
|
  static T x@p;
+ dn(ty, nm);
|
  T x@p;
+ dn(ty, nm);
)

@soa_export depends on !op_A && !op_B@
identifier x;
declarer name EXPORT_SYMBOL;
position p : script:python () { site(p, "R", "EXPORT_SYMBOL(") };
@@
  EXPORT_SYMBOL@p(x);

@script:python soa_export_text@
p << soa_export.p;
dn; nm;
@@
import re
m = re.match(r'^(.*EXPORT_PER_CPU_SYMBOL)\((\w+)\)$', site_text(p, "R"), re.S)
coccinelle.dn = cocci.make_ident(m.group(1))
coccinelle.nm = cocci.make_ident(m.group(2))

@depends on !context@
identifier x; position soa_export.p; identifier soa_export_text.nm; declarer soa_export_text.dn;
declarer name EXPORT_SYMBOL;
@@
- EXPORT_SYMBOL@p(x);
+ dn(nm);

// Modern target: a single update of a this-CPU slot becomes one this_cpu_*
// statement (the sites TEXT); a slot read where preemption is already off
// becomes (*this_cpu_ptr(&x)).
@tc depends on !op_A && !op_B@
expression E;
position p : script:python () { site(p, "R", "this_cpu_") };
@@
  E@p;

@script:python tc_text@
p << tc.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on tc && !context@
position tc.p; identifier tc_text.t; expression E;
@@
- E@p;
+ t;

@depends on !context && !op_A && !op_B@
identifier x;
position p : script:python () { site(p, "R", "(*this_cpu_ptr") };
@@
- x@p[smp_processor_id()]
+ (*this_cpu_ptr(&x))

// Sidecar: insert the sites TEXT after the anchor statement (expression
// statement, if, while, for, declaration). switch and do-while are refused
// by preemptify before they reach here.
@ia depends on !op_R && !op_B@
position p : script:python () { site(p, "A") };
expression E; statement S1, S2; type T; identifier x;
@@
(
  E@p;
|
  if@p (E) S1 else S2
|
  if@p (E) S1
|
  while@p (E) S1
|
  for@p (...;...;...) S1
|
  T@p x = E;
|
  T@p x;
)

@script:python ia_text@
p << ia.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "A"))

@depends on ia && !context@
position ia.p; identifier ia_text.t;
expression E; statement S1, S2; type T; identifier x;
@@
(
  E@p;
+ t;
|
  if@p (E) S1 else S2
+ t;
|
  if@p (E) S1
+ t;
|
  while@p (E) S1
+ t;
|
  for@p (...;...;...) S1
+ t;
|
  T@p x = E;
+ t;
|
  T@p x;
+ t;
)

// Sidecar: insert the sites TEXT before a return, goto, break, continue or
// expression statement (a region closed before the code leaves it).
@ib depends on !op_R && !op_A@
position p : script:python () { site(p, "B") };
expression E; identifier l;
@@
(
  return@p E;
|
  return@p;
|
  goto@p l;
|
  break@p;
|
  continue@p;
|
  E@p;
)

@script:python ib_text@
p << ib.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "B"))

@depends on ib && !context@
position ib.p; identifier ib_text.t; expression E; identifier l;
@@
(
+ t;
  return@p E;
|
+ t;
  return@p;
|
+ t;
  goto@p l;
|
+ t;
  break@p;
|
+ t;
  continue@p;
|
+ t;
  E@p;
)

// Standalone: patch mode.
@s_decl depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
declarer name DEFINE_PER_CPU;
type T; identifier x;
position p : script:python () { standalone() };
@@
- static T@p x[NR_CPUS];
+ static DEFINE_PER_CPU(T, x);

@s_use depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
identifier s_decl.x; expression E;
@@
(
- x[smp_processor_id()]
+ __get_cpu_var(x)
|
- x[E]
+ per_cpu(x, E)
)

// Standalone: the sites, for the other modes: the array and its uses.
@s_declf depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
type T; identifier x;
position p : script:python () { standalone() };
@@
  static T@p x[NR_CPUS];

@s_usef depends on !op_R && !op_A && !op_B@
identifier s_declf.x; expression E; position p;
@@
  x@p[E]

// Context mode: the sites' lines.
@depends on !patch && context@
type T; identifier x;
position s_declf.p;
@@
* static T@p x[NR_CPUS];

@depends on !patch && context@
identifier x; expression E;
position s_usef.p;
@@
* x@p[E]

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_declf.p;
x << s_declf.x;
@@
coccilib.report.print_report(p[0], "P001: %s[NR_CPUS], use DEFINE_PER_CPU" % x)

@script:python depends on !patch && org@
p << s_declf.p;
x << s_declf.x;
@@
coccilib.org.print_todo(p[0], "P001: %s[NR_CPUS], use DEFINE_PER_CPU" % x)

@script:python depends on !patch && report@
p << s_usef.p;
x << s_declf.x;
@@
coccilib.report.print_report(p[0], "P001: %s[...], use per_cpu() or __get_cpu_var() (protect it)" % x)

@script:python depends on !patch && org@
p << s_usef.p;
x << s_declf.x;
@@
coccilib.org.print_todo(p[0], "P001: %s[...], use per_cpu() or __get_cpu_var() (protect it)" % x)
