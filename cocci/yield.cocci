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
