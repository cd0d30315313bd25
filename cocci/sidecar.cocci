/// Sidecar support shared by every cocci/<fix-kind>.cocci: not a fix kind.
///
/// Loads the -D sites=FILE sidecar (when given) and defines the Python
/// predicates the fix kinds' rules use: site(), site_line(), site_text(),
/// standalone().
//
// Rules: none (included by every fix kind's .cocci)
// Modes: -D sites=FILE (sidecar) or standalone: patch (also with no -D),
//        report, context, org; the includer declares them (virtual ...).
// Usage: not run on its own. Each fix kind's file starts with
//   #include "cocci/sidecar.cocci"
// which spatch 1.1.1 resolves against its current directory (it has no
// include path for semantic patches; -I is for C headers). So run spatch
// from the directory that holds cocci/, e.g. the repository root:
//   spatch --sp-file cocci/cond-resched.cocci --no-includes driver.c
// preemptify writes its built-in copies to TMP/cocci/ and runs spatch in TMP.

@initialize:python@
@@
# Sidecar mode: -D sites=FILE names a file written by preemptify, one site
# per line, tab-separated: PATH OP LINE COL END_LINE END_COL NODE TEXT
# (PATH: the input file as named on spatch's command line, so one run can
# take many files; OP: R replace, A insert after, B insert before; LINE/COL
# 1-based, COL in bytes; TEXT with \n, \t, \\ escaped). Only listed
# sites change.
# Standalone (no -D sites): only the rules marked standalone run, in the
# mode -D patch|report|context|org chose (patch when none).
SITES = None
NODES = {}

def sites_load(path):
    global SITES
    SITES = {}
    with open(path) as f:
        for ln in f:
            ln = ln.rstrip('\n')
            if not ln or ln[0] == '#':
                continue
            name, op, line, col, el, _ec, node, text = ln.split('\t', 7)
            text = text.replace('\\\\', '\0').replace('\\n', '\n').replace('\\t', '\t').replace('\0', '\\')
            SITES[(name, op, int(line), int(col))] = text
            NODES[(name, op, int(line), int(col))] = (node, int(el))

def site_key(p, op):
    return (p[0].file, op, int(p[0].line), int(p[0].column) + 1)

def site(p, op, prefix='', node=None):
    # node: the tree-sitter node type the site was planned on, when two
    # patterns start at the same token (x[i] and x[i].v).
    if SITES is None:
        return False
    k = site_key(p, op)
    t = SITES.get(k)
    return t is not None and t.startswith(prefix) and (node is None or NODES[k][0] == node)

def site_span_key(p, op, prefix=''):
    # For a name inside a multi-line anchor (the name of a declaration):
    # the listed site whose lines hold p, or None.
    if SITES is None:
        return None
    line = int(p[0].line)
    for k, t in SITES.items():
        if k[0] == p[0].file and k[1] == op and k[2] <= line <= NODES[k][1] and t.startswith(prefix):
            return k
    return None

def site_span_node(p, op, node):
    # The listed site of NODE whose lines hold p (a name inside a
    # declaration, a field of a multi-line declaration), or None.
    if SITES is None:
        return None
    line = int(p[0].line)
    for k in SITES:
        if k[0] == p[0].file and k[1] == op and k[2] <= line <= NODES[k][1] and NODES[k][0] == node:
            return k
    return None

def site_line(p, op, prefix=''):
    # For anchors spatch cannot position at their first token (a
    # declarations storage class): any listed site on the same line.
    if SITES is None:
        return False
    line = int(p[0].line)
    return any(k[0] == p[0].file and k[1] == op and k[2] == line and t.startswith(prefix)
               for k, t in SITES.items())

def decl_parts(p, prefix):
    # (type, name) of the [static ]DEFINE_PER_CPU(T, x); or DECLARE_PER_CPU(T, x);
    # site spanning p, or None.
    import re
    k = site_span_key(p, "R", prefix)
    m = k and re.match(r'^(?:static )?(?:DEFINE|DECLARE)_PER_CPU\((.*), (\w+)\);$', SITES[k])
    return (m.group(1), m.group(2)) if m else None

def site_text(p, op):
    return SITES[site_key(p, op)].strip().rstrip(';').strip()

def standalone():
    return SITES is None

@initialize:python@
s << virtual.sites;
@@
sites_load(s)
