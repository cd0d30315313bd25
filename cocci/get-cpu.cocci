/// Make a CPU number stable: smp_processor_id() -> get_cpu() ... put_cpu().
///
/// Sidecar: R sites are smp_processor_id() calls; A/B sites insert put_cpu();
/// after the last use / before each exit from the region.
/// Standalone: c = smp_processor_id(); gets get_cpu() and put_cpu();
/// after the NEXT statement only (extend the region by hand; exits are
/// not handled standalone).
//
// Rules: P003, P002
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
//   spatch --sp-file cocci/get-cpu.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/get-cpu.cocci M=drivers/foo

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
position p : script:python () { site(p, "R", "get_cpu") };
@@
- smp_processor_id@p()
+ get_cpu()

// Sidecar: a read hoisted into a local before its statement; TEXT is the
// local's name (R sites whose TEXT is not get_cpu()).
@rn depends on !context && !op_A && !op_B@
position p : script:python () { site(p, "R") and not site(p, "R", "get_cpu") };
@@
  smp_processor_id@p()

@script:python rn_text@
p << rn.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on rn && !context@
position rn.p; identifier rn_text.t;
@@
- smp_processor_id@p()
+ t

// Sidecar: a return inside a region made an assignment to the value's
// local (TEXT "ret = E;"); the region then ends in one return after it.
@rr depends on !context && !op_A && !op_B@
position p : script:python () { site(p, "R") };
expression E;
@@
  return@p E;

@script:python rr_text@
p << rr.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on rr && !context@
position rr.p; identifier rr_text.t; expression E;
@@
- return@p E;
+ t;

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
# "put_cpu(); return ret" (a region's one exit): two lines
coccinelle.t = cocci.make_ident(site_text(p, "A").replace("; return ", ";\nreturn "))

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

// Sidecar: insert the sites TEXT before a return/goto/break/continue,
// an expression statement, or (a hoisted read's get_cpu() or local) an
// if, while or for.
@ib depends on !op_R && !op_A@
position p : script:python () { site(p, "B") and not site(p, "B", "int ") };
expression E; identifier l; statement S1, S2;
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
|
  if@p (E) S1 else S2
|
  if@p (E) S1
|
  while@p (E) S1
|
  for@p (...;...;...) S1
)

@script:python ib_text@
p << ib.p;
t;
@@
# "E; put_cpu()" (a returned call kept in the region): two lines
coccinelle.t = cocci.make_ident(site_text(p, "B").replace("; put_cpu()", ";\nput_cpu()"))

@depends on ib && !context@
position ib.p; identifier ib_text.t; expression E; identifier l; statement S1, S2;
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
|
+ t;
  if@p (E) S1 else S2
|
+ t;
  if@p (E) S1
|
+ t;
  while@p (E) S1
|
+ t;
  for@p (...;...;...) S1
)

// Sidecar: the declaration of a hoisted read's local (TEXT "int ...")
// before the block's first statement, a blank line after it as kernel
// style wants after declarations (plus code after a declaration must be
// a declaration: `int t;`, t the rest of TEXT).
@ibd depends on !op_R && !op_A@
position p : script:python () { site(p, "B", "int ") };
expression E; statement S1, S2;
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
)

@script:python ibd_text@
p << ibd.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "B")[len("int "):])

@depends on ibd && !context@
position ibd.p; identifier ibd_text.t; expression E; statement S1, S2;
@@
(
+ int t;
+
  E@p;
|
+ int t;
+
  if@p (E) S1 else S2
|
+ int t;
+
  if@p (E) S1
|
+ int t;
+
  while@p (E) S1
|
+ int t;
+
  for@p (...;...;...) S1
)

// Standalone: patch mode.
@s_gc depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
expression c; statement S; position p : script:python () { standalone() };
@@
  c =
- smp_processor_id@p()
+ get_cpu()
  ;
  S
+ put_cpu();

// Standalone: the sites, for the other modes.
@s_gcf depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
expression c; statement S; position p : script:python () { standalone() };
@@
  c = smp_processor_id@p();
  S

// Context mode: the site's line.
@depends on !patch && context@
position s_gcf.p;
@@
* smp_processor_id@p()

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_gcf.p;
@@
coccilib.report.print_report(p[0], "P003: CPU number used with preemption on, use get_cpu() ... put_cpu()")

@script:python depends on !patch && org@
p << s_gcf.p;
@@
coccilib.org.print_todo(p[0], "P003: CPU number used with preemption on, use get_cpu() ... put_cpu()")
