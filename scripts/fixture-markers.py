#!/usr/bin/env python3
"""Turn a marked fixture source into a clean fixture and its .expect file.

A marked source carries `@[RULE FIX]` immediately before the token a finding
is reported at, e.g. `cpu = @[P003 get-cpu]smp_processor_id();`.  The marker
is removed and `LINE:COL RULE FIX` is recorded, COL being the 1-based byte
column of the token in the cleaned line (tabs count as one byte).

usage: fixture-markers.py MARKED.c OUT.c      (writes OUT.expect beside OUT.c)
       fixture-markers.py --show MARKED.c      (print findings with context)
"""
import re
import sys

MARK = re.compile(rb'@\[(P00[1-8]) ([a-z-]+)\]')
FIXES = {b'none', b'get-cpu', b'define-per-cpu', b'get-cpu-var', b'move-inside',
         b'cond-resched', b'need-resched-call', b'yield', b'check-resched', b'resched-flag', b'preempt-region'}


def convert(data):
    out_lines, findings = [], []
    for lineno, line in enumerate(data.split(b'\n'), 1):
        clean = b''
        pos = 0
        for m in MARK.finditer(line):
            clean += line[pos:m.start()]
            if m.group(2) not in FIXES:
                sys.exit('line %d: unknown fix %s' % (lineno, m.group(2).decode()))
            findings.append((lineno, len(clean) + 1, m.group(1), m.group(2), line[m.end():m.end() + 30]))
            pos = m.end()
        clean += line[pos:]
        out_lines.append(clean)
    findings.sort(key=lambda f: (f[0], f[1]))
    return b'\n'.join(out_lines), findings


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--show':
        _, fnd = convert(open(sys.argv[2], 'rb').read())
        for f in fnd:
            print('%d:%d %s %s\t%s' % (f[0], f[1], f[2].decode(), f[3].decode(), f[4].decode(errors='replace')))
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, fnd = convert(open(sys.argv[1], 'rb').read())
    with open(sys.argv[2], 'wb') as fh:
        fh.write(src)
    exp = sys.argv[2][:-2] + '.expect'
    with open(exp, 'wb') as fh:
        for f in fnd:
            fh.write(b'%d:%d %s %s\n' % (f[0], f[1], f[2], f[3]))


if __name__ == '__main__':
    main()
