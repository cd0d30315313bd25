/// Read the CPU number inside the lock instead of just before it.
///
/// Sidecar: R sites are cpu = smp_processor_id() init declarators
/// (-> cpu) or whole statements (-> removed); A sites insert
/// cpu = smp_processor_id(); after the lock statement.
/// Standalone: c = smp_processor_id(); immediately followed by a
/// spin_lock*/local_irq_* statement is swapped with it.
//
// Rules: P003
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
//   spatch --sp-file cocci/move-inside.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/move-inside.cocci M=drivers/foo

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
type T; identifier c;
position p : script:python () { site(p, "R") };
@@
  T
- c@p = smp_processor_id()
+ c
  ;

@depends on !context && !op_A && !op_B@
expression c;
position p : script:python () { site(p, "R") };
@@
- c@p = smp_processor_id();

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

// Standalone: patch mode.
@s_mv depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
expression c; identifier lock =~ "^(spin_lock|spin_lock_irq|spin_lock_irqsave|spin_lock_bh|read_lock|read_lock_irq|read_lock_irqsave|read_lock_bh|write_lock|write_lock_irq|write_lock_irqsave|write_lock_bh|local_irq_disable|local_irq_save|preempt_disable)$";
expression list es;
position p : script:python () { standalone() };
@@
- c@p = smp_processor_id();
  lock(es);
+ c = smp_processor_id();

// Standalone: the sites, for the other modes.
@s_mvf depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
expression c; identifier lock =~ "^(spin_lock|spin_lock_irq|spin_lock_irqsave|spin_lock_bh|read_lock|read_lock_irq|read_lock_irqsave|read_lock_bh|write_lock|write_lock_irq|write_lock_irqsave|write_lock_bh|local_irq_disable|local_irq_save|preempt_disable)$";
expression list es;
position p : script:python () { standalone() };
@@
  c@p = smp_processor_id();
  lock(es);

// Context mode: the site's lines.
@depends on !patch && context@
expression c; identifier s_mvf.lock; expression list es;
position s_mvf.p;
@@
* c@p = smp_processor_id();
* lock(es);

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_mvf.p;
lock << s_mvf.lock;
@@
coccilib.report.print_report(p[0], "P003: smp_processor_id() read before %s(), read it after" % lock)

@script:python depends on !patch && org@
p << s_mvf.p;
lock << s_mvf.lock;
@@
coccilib.org.print_todo(p[0], "P003: smp_processor_id() read before %s(), read it after" % lock)
