/// 2.4 SCHED_YIELD idiom -> yield().
///
/// Sidecar: R sites are current->policy |= SCHED_YIELD; (-> removed)
/// and the schedule() call (-> yield()).
/// Standalone: current->policy |= SCHED_YIELD; directly followed by
/// schedule(); becomes yield();.
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
//   spatch --sp-file cocci/yield.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/yield.cocci M=drivers/foo

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

// schedule() first: a rule that deletes a line would shift the
// positions the next rule sees (spatch re-parses after each modifying rule).
@depends on !context && !op_A && !op_B@
position p : script:python () { site(p, "R", "yield") };
@@
- schedule@p()
+ yield()

@depends on !context && !op_A && !op_B@
symbol current;
position p : script:python () { site(p, "R") };
@@
- current@p->policy |= SCHED_YIELD;

// Standalone: patch mode.
@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
symbol current;
position p : script:python () { standalone() };
@@
- current@p->policy |= SCHED_YIELD;
- schedule();
+ yield();

// Standalone: the sites, for the other modes.
@s_y depends on (!patch && (report || context || org)) && !op_R && !op_A && !op_B@
symbol current;
position p : script:python () { standalone() };
@@
  current@p->policy |= SCHED_YIELD;
  schedule();

// Context mode: the site's lines.
@depends on !patch && context@
symbol current;
position s_y.p;
@@
* current@p->policy |= SCHED_YIELD;
* schedule();

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_y.p;
@@
coccilib.report.print_report(p[0], "P004: SCHED_YIELD and schedule(), use yield()")

@script:python depends on !patch && org@
p << s_y.p;
@@
coccilib.org.print_todo(p[0], "P004: SCHED_YIELD and schedule(), use yield()")
