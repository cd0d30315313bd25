/// current->need_resched -> need_resched().
///
/// Sidecar: R sites are the field expressions.
/// Standalone: every read of current->need_resched.
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
//   spatch --sp-file cocci/need-resched-call.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/need-resched-call.cocci M=drivers/foo

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
symbol current;
position p : script:python () { site(p, "R", "need_resched()") };
@@
- current@p->need_resched
+ need_resched()

// Standalone: patch mode.
@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
symbol current;
position p : script:python () { standalone() };
@@
- current@p->need_resched
+ need_resched()

// Standalone: the sites, for the other modes.
@s_nr depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
symbol current;
position p : script:python () { standalone() };
@@
  current@p->need_resched

// Context mode: the site's line.
@depends on !patch && context@
symbol current;
position s_nr.p;
@@
* current@p->need_resched

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_nr.p;
@@
coccilib.report.print_report(p[0], "P004: current->need_resched, use need_resched()")

@script:python depends on !patch && org@
p << s_nr.p;
@@
coccilib.org.print_todo(p[0], "P004: current->need_resched, use need_resched()")
