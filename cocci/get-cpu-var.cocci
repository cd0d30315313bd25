/// Protect this CPUs per-CPU variable: __get_cpu_var(x) -> get_cpu_var(x) ... put_cpu_var(x).
///
/// Sidecar: R sites are __get_cpu_var(x) calls; A sites insert
/// put_cpu_var(x); after the statement.
/// Standalone: the statements __get_cpu_var(x)++; / --; / op= E; and
/// E = __get_cpu_var(x); get get_cpu_var(x) and put_cpu_var(x); after.
/// Modern target (--target modern): single updates become this_cpu_*;
/// protected reads (*this_cpu_ptr(&x)).
//
// Rules: P002
// Confidence: Medium
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
//   spatch --sp-file cocci/get-cpu-var.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/get-cpu-var.cocci M=drivers/foo

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

@depends on !context && !op_A && !op_B@
expression x, E;
position p : script:python () { site(p, "R", "get_cpu_var") };
@@
(
- __get_cpu_var@p(x)
+ get_cpu_var(x)
|
- per_cpu@p(x, E)
+ get_cpu_var(x)
)

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
expression x;
position p : script:python () { site(p, "R", "(*this_cpu_ptr") };
@@
- __get_cpu_var@p(x)
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
@s_gcv depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
expression x, E;
assignment operator aop;
position p : script:python () { standalone() };
@@
(
- __get_cpu_var@p(x)++;
+ get_cpu_var(x)++;
+ put_cpu_var(x);
|
- __get_cpu_var@p(x)--;
+ get_cpu_var(x)--;
+ put_cpu_var(x);
|
- __get_cpu_var@p(x) aop E;
+ get_cpu_var(x) aop E;
+ put_cpu_var(x);
|
- E = __get_cpu_var@p(x);
+ E = get_cpu_var(x);
+ put_cpu_var(x);
)

// Standalone: the sites, for the other modes.
@s_gcvf depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
expression x, E;
assignment operator aop;
position p : script:python () { standalone() };
@@
(
  __get_cpu_var@p(x)++;
|
  __get_cpu_var@p(x)--;
|
  __get_cpu_var@p(x) aop E;
|
  E = __get_cpu_var@p(x);
)

// Context mode: the site's line.
@depends on !patch && context@
expression x;
position s_gcvf.p;
@@
* __get_cpu_var@p(x)

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_gcvf.p;
@@
coccilib.report.print_report(p[0], "P002: __get_cpu_var() with preemption on, use get_cpu_var() ... put_cpu_var()")

@script:python depends on !patch && org@
p << s_gcvf.p;
@@
coccilib.org.print_todo(p[0], "P002: __get_cpu_var() with preemption on, use get_cpu_var() ... put_cpu_var()")
