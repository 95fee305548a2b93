#!/usr/bin/env python3
"""Checks the fabric's picture (ibsmd's /fabric.svg, ibsmctl topology --svg).

  svg_check.py FILE --switches N [--failed NODE NODE]

Exit 0 when FILE is SVG with exactly N node groups of class "switch"
and, with --failed, exactly one edge of class "failed", dashed
(stroke-dasharray), between the nodes labelled NODE and NODE (and no
other dashed edge); prints what it counted.  Exit 1 saying why not.
"""
import argparse
import sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'


def text_of(g):
    return ' '.join(t.text or '' for t in g.iter(NS + 'text'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--switches', type=int, required=True)
    ap.add_argument('--failed', nargs=2)
    a = ap.parse_args()
    root = ET.parse(a.file).getroot()
    groups = list(root.iter(NS + 'g'))
    classes = lambda g: (g.get('class') or '').split()
    switches = [g for g in groups if 'node' in classes(g) and 'switch' in classes(g)]
    names = {g.find(NS + 'title').text: text_of(g).split()[0] for g in groups
             if 'node' in classes(g) and g.find(NS + 'title') is not None and text_of(g)}
    if len(switches) != a.switches:
        print('%d switch node groups, not %d' % (len(switches), a.switches))
        return 1
    edges = [g for g in groups if 'edge' in classes(g)]
    dashed = [g for g in edges if any(p.get('stroke-dasharray') for p in g.iter(NS + 'path'))]
    failed = [g for g in edges if 'failed' in classes(g)]
    msg = '%d switch node groups, %d edges' % (len(switches), len(edges))
    if a.failed:
        if len(failed) != 1 or dashed != failed:
            print('%s: %d failed, %d dashed, not the same one' % (msg, len(failed), len(dashed)))
            return 1
        ends = failed[0].find(NS + 'title').text.split('--')
        got = sorted(names.get(e.strip(), e) for e in ends)
        if got != sorted(a.failed):
            print('%s: the failed edge is between %s, not %s' % (msg, got, sorted(a.failed)))
            return 1
        msg += ', the one dashed, failed edge %s -- %s' % tuple(got)
    print(msg)
    return 0


if __name__ == '__main__':
    sys.exit(main())
