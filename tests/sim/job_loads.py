#!/usr/bin/env python3
"""job_loads: each job's largest link load, from infiniband-diags dumps alone.

    job_loads.py TOPO LFTS JOB...

TOPO  `ibnetdiscover` output;  LFTS  `dump_fts -n` output
JOB   ID:PATTERN:NAME,NAME,...  (the job's hosts in rank order, by node
      description; PATTERN ring, 2dnn or 3dnn)

The flows of each pattern are made here, not taken from ibsmd: ring r ->
r+1 and r -> r-1 (wrapping); 2dnn and 3dnn the ranks row-major on a
ceil(sqrt n)^2 / ceil(cbrt n)^3 grid, each to its 4 / 6 neighbours with
wrap-around over the whole grid, a neighbour on an empty point skipped;
rank pairs counted once, no self pairs.  A flow s -> d weighs
min(1/out-degree(s), 1/in-degree(d)) within its job.  Each flow is walked
from s's CA port through the LFTs to d's base LID; its weight goes on
every directed channel it uses (the CA's own port, each switch output
port, the last one the link into d).  A job's load is the largest total
load (every job's flows) of a channel its flows use.  Prints "ID LOAD"
per job (LOAD exact as a fraction and as a float); exit 1 when a flow is
not delivered, 2 on bad input.
"""

import collections
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fabric import InputError, parse_lfts, parse_topo  # noqa: E402


def iroot(n, k):
    """The least s with s**k >= n."""
    s = 0
    while s ** k < n:
        s += 1
    return s


def pattern_pairs(pattern, n):
    pairs = []
    if pattern == "ring":
        for r in range(n if n > 1 else 0):
            pairs += [(r, (r + 1) % n), (r, (r - 1) % n)]
    elif pattern in ("2dnn", "3dnn"):
        dims = 2 if pattern == "2dnn" else 3
        s = iroot(n, dims)
        for r in range(n):
            coord = [(r // s ** i) % s for i in range(dims)]
            for i in range(dims):
                for step in (1, -1):
                    c = list(coord)
                    c[i] = (c[i] + step) % s
                    q = sum(c[j] * s ** j for j in range(dims))
                    if q < n:
                        pairs.append((r, q))
    else:
        raise InputError("pattern %r: ring, 2dnn or 3dnn" % pattern)
    seen, out = set(), []
    for p in pairs:
        if p[0] != p[1] and p not in seen:
            seen.add(p)
            out.append(p)
    return out


def weights(pairs):
    out_deg = collections.Counter(s for s, _ in pairs)
    in_deg = collections.Counter(d for _, d in pairs)
    return [(s, d, min(Fraction(1, out_deg[s]), Fraction(1, in_deg[d])))
            for s, d in pairs]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        topo = parse_topo(argv[0])
        lfts = parse_lfts(argv[1])
        jobs = []
        for spec in argv[2:]:
            jid, pattern, names = spec.split(":", 2)
            jobs.append((jid, pattern, names.split(",")))
    except (OSError, InputError, ValueError) as e:
        print("job_loads: %s" % e, file=sys.stderr)
        return 2
    port_of = {}    # node description -> (CA guid, port 1)
    lid_of = {}
    for base, _, guid, port in topo.lids:
        if port:
            lid_of[(guid, port)] = base
    for guid, node in topo.nodes.items():
        if node["type"] == "CA" and (guid, 1) in topo.links:
            port_of[node["desc"]] = (guid, 1)
    load = collections.Counter()        # (node guid, port) -> total
    used = {}                           # job -> channels
    bad = 0
    for jid, pattern, names in jobs:
        try:
            ends = [port_of[n] for n in names]
            flows = weights(pattern_pairs(pattern, len(names)))
        except (KeyError, InputError) as e:
            print("job_loads: job %s: %s" % (jid, e), file=sys.stderr)
            return 2
        used[jid] = set()
        for s, d, w in flows:
            dst = ends[d]
            lid = lid_of[dst]
            ch = ends[s]
            for _ in range(64):
                load[ch] += w
                used[jid].add(ch)
                peer = topo.links.get(ch)
                if peer is None or peer == dst:
                    break
                out = lfts.get(peer[0], {}).get(lid)
                if out is None:
                    peer = None
                    break
                ch = (peer[0], out)
            if peer != dst:
                print("job_loads: job %s: %s -> %s (LID %d) not delivered"
                      % (jid, names[s], names[d], lid), file=sys.stderr)
                bad += 1
    for jid, _, _ in jobs:
        m = max((load[c] for c in used[jid]), default=Fraction(0))
        print("%s %s %.9f" % (jid, m, float(m)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
