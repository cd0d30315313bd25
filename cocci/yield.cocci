/// 2.4 SCHED_YIELD idiom -> yield().
///
/// Sidecar: R sites are current->policy |= SCHED_YIELD; (-> removed)
/// and the schedule() call (-> yield()).
/// Standalone: current->policy |= SCHED_YIELD; directly followed by
/// schedule(); becomes yield();.
//
// Rules: P004
// Confidence: High
// Options: --no-includes (preemptify also passes --very-quiet --no-show-diff --timeout N -o OUT)
// Modes: -D sites=FILE (preemptify: only the listed sites, see cocci/sidecar.cocci);
//        none (standalone: every site matching the standalone rules).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/yield.cocci --no-includes [-D sites=FILE] driver.c

#include "cocci/sidecar.cocci"

// schedule() first: a rule that deletes a line would shift the
// positions the next rule sees (spatch re-parses after each modifying rule).
@@
position p : script:python () { site(p, "R", "yield") };
@@
- schedule@p()
+ yield()

@@
symbol current;
position p : script:python () { site(p, "R") };
@@
- current@p->policy |= SCHED_YIELD;

// Standalone.
@@
symbol current;
position p : script:python () { standalone() };
@@
- current@p->policy |= SCHED_YIELD;
- schedule();
+ yield();
