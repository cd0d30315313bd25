/// 2.4 writes of the need_resched field -> set_tsk_need_resched() / clear_tsk_need_resched().
///
/// Sidecar: R sites are the assignments T->need_resched = K, each
/// listed with its text: set_tsk_need_resched(T) (K a nonzero constant)
/// or clear_tsk_need_resched(T) (K is 0).
/// Standalone: the statements T->need_resched = 1; and
/// T->need_resched = 0; (T any task pointer, current too).
//
// Rules: P004
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
//   spatch --sp-file cocci/resched-flag.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/resched-flag.cocci M=drivers/foo

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
expression T, K;
position p : script:python () { site(p, "R", "set_tsk_need_resched(") };
@@
- T@p->need_resched = K
+ set_tsk_need_resched(T)

@depends on !context && !op_A && !op_B@
expression T, K;
position p : script:python () { site(p, "R", "clear_tsk_need_resched(") };
@@
- T@p->need_resched = K
+ clear_tsk_need_resched(T)

// Standalone: patch mode.
@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
expression T;
position p : script:python () { standalone() };
@@
(
- T@p->need_resched = 0;
+ clear_tsk_need_resched(T);
|
- T@p->need_resched = 1;
+ set_tsk_need_resched(T);
)

// Standalone: the sites, for the other modes.
@s_rf depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
expression T;
position p : script:python () { standalone() };
@@
(
  T@p->need_resched = 0;
|
  T@p->need_resched = 1;
)

// Context mode: the site's line.
@depends on !patch && context@
expression T;
position s_rf.p;
@@
(
* T@p->need_resched = 0;
|
* T@p->need_resched = 1;
)

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_rf.p;
@@
coccilib.report.print_report(p[0], "P004: need_resched written, use set_tsk_need_resched()/clear_tsk_need_resched()")

@script:python depends on !patch && org@
p << s_rf.p;
@@
coccilib.org.print_todo(p[0], "P004: need_resched written, use set_tsk_need_resched()/clear_tsk_need_resched()")
