/// 2.4 reschedule check -> cond_resched().
///
/// Sidecar: R sites are the whole if statement (-> cond_resched();).
/// Standalone: if (current->need_resched) schedule(); and the
/// need_resched() / unlikely() / braced / set_current_state(TASK_RUNNING)
/// variants become cond_resched();. After an else, the statement goes on
/// its own line (or stays in the braces when both arms are braced).
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
//   spatch --sp-file cocci/cond-resched.cocci --no-includes [-D report|context|org] driver.c
// From a kernel tree with cocci/ copied or linked into its top directory:
//   make coccicheck MODE=report COCCI=cocci/cond-resched.cocci M=drivers/foo

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

// Sidecar: replace the if (or a macro statement that expands to one) by the
// sites TEXT: cond_resched(); preceded by the comments the if held.
@cr depends on !op_A && !op_B@
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

@depends on cr && !context@
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

// Standalone: the sites, in every mode. (need_resched is written
// need_resched(...): spatch 1.1.1 rejects if (need_resched()) schedule();
// with index already used.)
@s_cr depends on !op_R && !op_A && !op_B@
symbol current;
position p : script:python () { standalone() };
@@
(
  if@p (\(current->need_resched\|unlikely(current->need_resched)\|
          need_resched(...)\|unlikely(need_resched(...))\))
    schedule();
|
  if@p (\(current->need_resched\|unlikely(current->need_resched)\|
          need_resched(...)\|unlikely(need_resched(...))\)) {
    \(set_current_state(TASK_RUNNING);\|current->state = TASK_RUNNING;\)
    schedule();
  }
)

// Patch mode. An else-if site keeps its else: spatch would print
// "else cond_resched();" on one line, so the else arm is written out as
// TEXT with the body on its own line, one tab deeper than the else
// (s_else_text; on the same line when the site was on one line), unless
// both arms are braced, which stay braced. Other sites become the
// statement. A position cannot be inherited over a modification, so one
// rule makes every change.
@s_else depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
position s_cr.p, e; expression E, E1; statement S, S1;
@@
  if (E1) S1 else if@p@e (E) S

@s_plain depends on (patch || !(report || context || org)) && !op_R && !op_A && !op_B@
position s_cr.p, q != s_else.e; expression E; statement S;
@@
  if@p@q (E) S

@script:python s_else_text@
e << s_else.e;
t;
@@
with open(e[0].file) as f:
    line = f.read().split('\n')[int(e[0].line) - 1]
indent = line[:len(line) - len(line.lstrip(' \t'))]
if 'schedule' in line[int(e[0].column):]:
    # The site was on one line: so is the result.
    coccinelle.t = cocci.make_ident("else cond_resched()")
else:
    coccinelle.t = cocci.make_ident("else\n" + indent + "\tcond_resched()")

// (disable braces0: else { ... } would match an unbraced arm too.)
@depends on patch || !(report || context || org) disable braces0@
position s_else.e, s_plain.q; identifier s_else_text.t;
expression E, E1; statement S, S0, S1;
@@
(
  if (E1) { ... } else
- if@e (E)
  {
- S0
- schedule
+ cond_resched
  ();
  }
|
  if (E1) S1
- else if@e (E) S
+ t;
|
- if@q (E) S
+ cond_resched();
)

// Context mode: the site's lines.
@depends on !patch && context@
position s_cr.p; expression E; statement S;
@@
* if@p (E) S

// Report and org modes: one line per site.
@script:python depends on !patch && report@
p << s_cr.p;
@@
coccilib.report.print_report(p[0], "P004: 2.4 reschedule check, use cond_resched()")

@script:python depends on !patch && org@
p << s_cr.p;
@@
coccilib.org.print_todo(p[0], "P004: 2.4 reschedule check, use cond_resched()")
