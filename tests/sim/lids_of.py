#!/usr/bin/env python3
"""lids_of.py TOPO: print "PORTGUID LID" for every switch (port 0) and CA port
in `ibnetdiscover` output, sorted by GUID.  Used to compare LID assignments
between runs from infiniband-diags output alone."""
import re
import sys

RE_SW = re.compile(r'^Switch\s+\d+\s+"S-([0-9a-fA-F]+)".*\blid\s+(\d+)\b')
RE_CA = re.compile(r'^Ca\s+\d+\s+"')
RE_CAPORT = re.compile(r'^\[\d+\]\(([0-9a-fA-F]+)\)\s+"[^"]+"\[\d+\].*#\s*lid\s+(\d+)\b')


def main():
    if len(sys.argv) != 2:
        print("usage: lids_of.py TOPO", file=sys.stderr)
        return 2
    out = {}
    in_ca = False
    with open(sys.argv[1]) as fp:
        for line in fp:
            m = RE_SW.match(line)
            if m:
                out[int(m.group(1), 16)] = int(m.group(2))
                in_ca = False
                continue
            if RE_CA.match(line):
                in_ca = True
                continue
            if in_ca:
                m = RE_CAPORT.match(line)
                if m:
                    out[int(m.group(1), 16)] = int(m.group(2))
    for guid in sorted(out):
        print("0x%016x %d" % (guid, out[guid]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
