/// Hold preemption off around a statement whose macro reads the CPU number,
/// or around a read and the calls on this CPU's own state beside it:
/// preempt_disable(); STATEMENT ... preempt_enable();.
///
/// Sidecar: B sites insert preempt_disable(); before the statement that
/// expands the macro, or before the first statement of the run holding the
/// read and the calls (an if, while or for too), and preempt_enable();
/// before each exit from the region; A sites insert preempt_enable(); after
/// its last statement.
/// Standalone: for each function-like macro of the file whose body reads
/// smp_processor_id() (or the one -D macro=NAME names, from a header),
/// every statement NAME(...); or x = NAME(...); gets preempt_disable();
/// before it and preempt_enable(); after it (a region that must reach
/// further, as to the last use of x, is extended by hand).
//
// Rules: P003
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
//        Standalone, -D macro=NAME adds a macro defined in a header.
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/preempt-region.cocci --no-includes [-D macro=NAME] [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/preempt-region.cocci M=drivers/foo
//   SPFLAGS="-D macro=NAME"

virtual patch
virtual report
virtual context
virtual org
// -D op_R|op_A|op_B (preemptify): one operation per run, the others off
virtual op_R
virtual op_A
virtual op_B

#include "cocci/sidecar.cocci"

@initialize:python@
@@
MACRO = None

@initialize:python@
m << virtual.macro;
@@
MACRO = m

// Sidecar rules: they match only with -D sites=FILE. Those that change
// code are off with -D context (spatch runs no * rule with a -/+ rule).

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

// Sidecar: insert the sites TEXT before the region's first statement (an
// expression statement, or an if, while or for when the region covers a
// read and the calls on this CPU's own state: preempt_disable();) or
// before a return/goto/break/continue leaving it (preempt_enable();).
@ib depends on !op_R && !op_A@
position p : script:python () { site(p, "B") };
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
coccinelle.t = cocci.make_ident(site_text(p, "B"))

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

// Standalone: the function-like macros of the file whose body reads the
// CPU number, or the one -D macro=NAME names (a header's).
@mac depends on !op_R && !op_A && !op_B@
identifier M : script:python () { standalone() };
@@
#define M(...) <+... smp_processor_id() ...+>

// Standalone: patch mode.
@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
identifier f : script:python () { standalone() and f == MACRO };
expression list es; expression E; position p;
@@
(
+ preempt_disable();
  f@p(es);
+ preempt_enable();
|
+ preempt_disable();
  E = f@p(es);
+ preempt_enable();
)

@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
identifier mac.M; expression list es; expression E; position p;
@@
(
+ preempt_disable();
  M@p(es);
+ preempt_enable();
|
+ preempt_disable();
  E = M@p(es);
+ preempt_enable();
)

// Standalone: the sites, for the other modes.
@s_pr depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
identifier f : script:python () { standalone() and f == MACRO };
expression list es; expression E; position p;
@@
(
  f@p(es);
|
  E = f@p(es);
)

@s_prm depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
identifier mac.M; expression list es; expression E; position p;
@@
(
  M@p(es);
|
  E = M@p(es);
)

// Context mode: the site's line.
@depends on !patch && context@
identifier s_pr.f; expression list es; position s_pr.p;
@@
* f@p(es)

@depends on !patch && context@
identifier mac.M; expression list es; position s_prm.p;
@@
* M@p(es)

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_pr.p;
f << s_pr.f;
@@
coccilib.report.print_report(p[0], "P003: %s() reads the CPU number, hold preempt_disable() ... preempt_enable() around it" % f)

@script:python depends on !patch && report@
p << s_prm.p;
f << mac.M;
@@
coccilib.report.print_report(p[0], "P003: %s() reads the CPU number, hold preempt_disable() ... preempt_enable() around it" % f)

@script:python depends on !patch && org@
p << s_pr.p;
f << s_pr.f;
@@
coccilib.org.print_todo(p[0], "P003: %s() reads the CPU number, hold preempt_disable() ... preempt_enable() around it" % f)

@script:python depends on !patch && org@
p << s_prm.p;
f << mac.M;
@@
coccilib.org.print_todo(p[0], "P003: %s() reads the CPU number, hold preempt_disable() ... preempt_enable() around it" % f)
