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
// Options: --no-includes (preemptify also passes --very-quiet --no-show-diff --timeout N -o OUT)
// Modes: -D sites=FILE (preemptify: only the listed sites, see cocci/sidecar.cocci);
//        none (standalone: every site matching the standalone rules).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/get-cpu.cocci --no-includes [-D sites=FILE] driver.c

#include "cocci/sidecar.cocci"

@@
position p : script:python () { site(p, "R", "get_cpu") };
@@
- smp_processor_id@p()
+ get_cpu()

// Sidecar: insert the sites TEXT after the anchor statement (expression
// statement, if, while, for, declaration). switch and do-while are refused
// by preemptify before they reach here.
@ia@
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

@depends on ia@
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

// Sidecar: insert the sites TEXT before a return/goto/break/continue
// (or, for check-resched, an expression statement).
@ib@
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

@depends on ib@
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

// Standalone.
@s_gc@
expression c; statement S; position p : script:python () { standalone() };
@@
  c =
- smp_processor_id@p()
+ get_cpu()
  ;
  S
+ put_cpu();
