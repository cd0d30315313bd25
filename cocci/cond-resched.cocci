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
// Modes: -D sites=FILE (preemptify: only the listed sites, see below);
//        none (standalone: every site matching the standalone rules).
// Usage: spatch --sp-file THIS.cocci [-D sites=FILE] file.c

@initialize:python@
@@
# Sidecar mode: -D sites=FILE names a file written by preemptify, one site
# per line, tab-separated: OP LINE COL END_LINE END_COL NODE TEXT
# (OP: R replace, A insert after, B insert before; LINE/COL 1-based, COL in
# bytes; TEXT with \n, \t, \\ escaped). Only listed sites change.
# Standalone mode (no -D sites): only the rules marked standalone run.
SITES = None

def sites_load(path):
    global SITES
    SITES = {}
    with open(path) as f:
        for ln in f:
            ln = ln.rstrip('\n')
            if not ln or ln[0] == '#':
                continue
            op, line, col, _el, _ec, _node, text = ln.split('\t', 6)
            text = text.replace('\\\\', '\0').replace('\\n', '\n').replace('\\t', '\t').replace('\0', '\\')
            SITES[(op, int(line), int(col))] = text

def site_key(p, op):
    return (op, int(p[0].line), int(p[0].column) + 1)

def site(p, op, prefix=''):
    if SITES is None:
        return False
    t = SITES.get(site_key(p, op))
    return t is not None and t.startswith(prefix)

def site_line(p, op, prefix=''):
    # For anchors spatch cannot position at their first token (a
    # declarations storage class): any listed site on the same line.
    if SITES is None:
        return False
    line = int(p[0].line)
    return any(k[0] == op and k[1] == line and t.startswith(prefix)
               for k, t in SITES.items())

def site_text(p, op):
    return SITES[site_key(p, op)].strip().rstrip(';').strip()

def standalone():
    return SITES is None

@initialize:python@
s << virtual.sites;
@@
sites_load(s)

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
