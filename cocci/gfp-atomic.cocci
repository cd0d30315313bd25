/// An allocation made with GFP_KERNEL where preemption is off -> GFP_ATOMIC.
///
/// Sidecar: R sites are the GFP_KERNEL flags of an allocation P006 found
/// in a context proven atomic (an interrupt, softirq or IPI handler, or a
/// spinlock held on every path), each listed with its text: GFP_ATOMIC.
/// preemptify lists a site only with --fix-sleep, and only when the
/// result is tested for NULL by the very next statement.
/// Standalone: x = kmalloc(E, GFP_KERNEL); directly followed by a test of
/// x for NULL, between spin_lock(L) and spin_unlock(L) (or their _irqsave,
/// _irq and _bh forms).
//
// Rules: P006
// Confidence: High (sidecar); Medium (standalone: the lock may not be held on every path)
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
//   spatch --sp-file cocci/gfp-atomic.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/gfp-atomic.cocci M=drivers/foo

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
symbol GFP_KERNEL;
position p : script:python () { site(p, "R", "GFP_ATOMIC") };
@@
- GFP_KERNEL@p
+ GFP_ATOMIC

// Standalone: the sites, for every mode.
@s_ga depends on !op_R && !op_A && !op_B@
symbol GFP_KERNEL;
expression L, x, E;
position p : script:python () { standalone() };
statement S;
@@
(
spin_lock(L);
|
spin_lock_irq(L);
|
spin_lock_bh(L);
|
spin_lock_irqsave(L, ...);
)
... when != spin_unlock(L)
    when != spin_unlock_irq(L)
    when != spin_unlock_bh(L)
    when != spin_unlock_irqrestore(L, ...)
x = kmalloc(E, GFP_KERNEL@p);
if (x == NULL) S

// Standalone: patch mode.
@depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
symbol GFP_KERNEL;
position s_ga.p;
@@
- GFP_KERNEL@p
+ GFP_ATOMIC

// Context mode: the site's line.
@depends on !patch && context@
symbol GFP_KERNEL;
position s_ga.p;
@@
* GFP_KERNEL@p

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_ga.p;
@@
coccilib.report.print_report(p[0], "P006: kmalloc(GFP_KERNEL) under a spinlock, use GFP_ATOMIC")

@script:python depends on !patch && org@
p << s_ga.p;
@@
coccilib.org.print_todo(p[0], "P006: kmalloc(GFP_KERNEL) under a spinlock, use GFP_ATOMIC")
