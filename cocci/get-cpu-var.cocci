/// Protect this CPUs per-CPU variable: __get_cpu_var(x) -> get_cpu_var(x) ... put_cpu_var(x).
///
/// Sidecar: R sites are __get_cpu_var(x) calls; A sites insert
/// put_cpu_var(x); after the statement.
/// Standalone: the statements __get_cpu_var(x)++; / --; / op= E; and
/// E = __get_cpu_var(x); get get_cpu_var(x) and put_cpu_var(x); after.
/// Modern target (--target modern): single updates become this_cpu_*;
/// protected reads (*this_cpu_ptr(&x)).
//
// Rules: P002
// Confidence: Medium
// Options: --no-includes (preemptify also passes --very-quiet --no-show-diff --timeout N -o OUT)
// Modes: -D sites=FILE (preemptify: only the listed sites, see cocci/sidecar.cocci);
//        none (standalone: every site matching the standalone rules).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/get-cpu-var.cocci --no-includes [-D sites=FILE] driver.c

#include "cocci/sidecar.cocci"

@@
expression x, E;
position p : script:python () { site(p, "R", "get_cpu_var") };
@@
(
- __get_cpu_var@p(x)
+ get_cpu_var(x)
|
- per_cpu@p(x, E)
+ get_cpu_var(x)
)

// Modern target: a single update of a this-CPU slot becomes one this_cpu_*
// statement (the sites TEXT); a slot read where preemption is already off
// becomes (*this_cpu_ptr(&x)).
@tc@
expression E;
position p : script:python () { site(p, "R", "this_cpu_") };
@@
  E@p;

@script:python tc_text@
p << tc.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on tc@
position tc.p; identifier tc_text.t; expression E;
@@
- E@p;
+ t;

@@
expression x;
position p : script:python () { site(p, "R", "(*this_cpu_ptr") };
@@
- __get_cpu_var@p(x)
+ (*this_cpu_ptr(&x))

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

// Standalone.
@s_gcv@
expression x, E;
assignment operator aop;
position p : script:python () { standalone() };
@@
(
- __get_cpu_var@p(x)++;
+ get_cpu_var(x)++;
+ put_cpu_var(x);
|
- __get_cpu_var@p(x)--;
+ get_cpu_var(x)--;
+ put_cpu_var(x);
|
- __get_cpu_var@p(x) aop E;
+ get_cpu_var(x) aop E;
+ put_cpu_var(x);
|
- E = __get_cpu_var@p(x);
+ E = get_cpu_var(x);
+ put_cpu_var(x);
)
