/// current->need_resched -> need_resched().
///
/// Sidecar: R sites are the field expressions.
/// Standalone: every read of current->need_resched.
//
// Rules: P004
// Confidence: High
// Options: --no-includes (preemptify also passes --very-quiet --no-show-diff --timeout N -o OUT)
// Modes: -D sites=FILE (preemptify: only the listed sites, see cocci/sidecar.cocci);
//        none (standalone: every site matching the standalone rules).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/need-resched-call.cocci --no-includes [-D sites=FILE] driver.c

#include "cocci/sidecar.cocci"

@@
symbol current;
position p : script:python () { site(p, "R", "need_resched()") };
@@
- current@p->need_resched
+ need_resched()

// Standalone.
@@
symbol current;
position p : script:python () { standalone() };
@@
- current@p->need_resched
+ need_resched()
