/// 2.4 reschedule check -> cond_resched().
///
/// Sidecar: R sites are the whole if statement (-> cond_resched();).
/// Standalone: if (current->need_resched) schedule(); and the
/// need_resched() / unlikely() / braced / set_current_state(TASK_RUNNING)
/// variants become cond_resched();.
//
// Rules: P004
// Confidence: High
// Options: --no-includes (preemptify also passes --very-quiet --no-show-diff --timeout N -o OUT)
// Modes: -D sites=FILE (preemptify: only the listed sites, see cocci/sidecar.cocci);
//        none (standalone: every site matching the standalone rules).
// Usage (from the directory that holds cocci/, e.g. the repository root,
// as the #include below is resolved against the current directory):
//   spatch --sp-file cocci/cond-resched.cocci --no-includes [-D sites=FILE] driver.c

#include "cocci/sidecar.cocci"

// Sidecar: replace the if (or a macro statement that expands to one) by the
// sites TEXT: cond_resched(); preceded by the comments the if held.
@cr@
expression E; statement S;
position p : script:python () { site(p, "R") };
@@
(
  if@p (E) S
|
  E@p;
)

@script:python cr_text@
p << cr.p;
t;
@@
coccinelle.t = cocci.make_ident(site_text(p, "R"))

@depends on cr@
position cr.p; identifier cr_text.t;
expression E; statement S;
@@
(
- if@p (E) S
+ t;
|
- E@p;
+ t;
)

// Standalone. (need_resched is written need_resched(...):
// spatch 1.1.1 rejects if (need_resched()) schedule();
// with index already used.)

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (current->need_resched) schedule();
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (current->need_resched) {
-   set_current_state(TASK_RUNNING);
-   schedule();
- }
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (current->need_resched) {
-   current->state = TASK_RUNNING;
-   schedule();
- }
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (unlikely(current->need_resched)) schedule();
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (unlikely(current->need_resched)) {
-   set_current_state(TASK_RUNNING);
-   schedule();
- }
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (unlikely(current->need_resched)) {
-   current->state = TASK_RUNNING;
-   schedule();
- }
+ cond_resched();

@@
position p : script:python () { standalone() };
@@
- if@p (need_resched(...)) schedule();
+ cond_resched();

@@
position p : script:python () { standalone() };
@@
- if@p (need_resched(...)) {
-   set_current_state(TASK_RUNNING);
-   schedule();
- }
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (need_resched(...)) {
-   current->state = TASK_RUNNING;
-   schedule();
- }
+ cond_resched();

@@
position p : script:python () { standalone() };
@@
- if@p (unlikely(need_resched(...))) schedule();
+ cond_resched();

@@
position p : script:python () { standalone() };
@@
- if@p (unlikely(need_resched(...))) {
-   set_current_state(TASK_RUNNING);
-   schedule();
- }
+ cond_resched();

@@
symbol current;
position p : script:python () { standalone() };
@@
- if@p (unlikely(need_resched(...))) {
-   current->state = TASK_RUNNING;
-   schedule();
- }
+ cond_resched();
