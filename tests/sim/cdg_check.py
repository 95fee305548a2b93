#!/usr/bin/env python3
"""cdg_check.py --topo TOPO --lfts LFTS [--sls SLS]: a channel-dependency-graph
cycle check from infiniband-diags output alone (ibnetdiscover + dump_fts -n).

The channels are the directed switch-to-switch links; a route from a CA port to
a LID that uses link a and then link b adds the dependency a -> b.  Only routes
that traffic from CA ports can take are counted.  A cycle means the routes can
deadlock on one VL.  Exit 0: no cycle; 1: a cycle (printed); 2: bad input.

--sls SLS: lines "SLID DLID SL" (saquery -p answers) for every CA port's base
LID as SLID and every LID as DLID; each route then runs on the VL of its SL
(every port's SL-to-VL table the identity, as the test checked with smpquery
sl2vl) and the channels are (link, VL): a cycle on one VL is a deadlock, one
across VLs is none.  A pair without a line is an error (exit 2)."""
import argparse
import sys

from check_fabric import InputError, parse_lfts, parse_topo


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topo", required=True)
    ap.add_argument("--lfts", required=True)
    ap.add_argument("--sls")
    a = ap.parse_args(argv)
    try:
        topo = parse_topo(a.topo)
        lfts = parse_lfts(a.lfts)
        sls = read_sls(a.sls) if a.sls else None
    except (InputError, OSError, ValueError) as e:
        print("cdg_check: %s" % e, file=sys.stderr)
        return 2
    if sls is not None:
        return check_vls(topo, lfts, sls)
    sw = sorted(g for g, n in topo.nodes.items() if n["type"] == "SW")
    is_sw = set(sw)
    # the switch each CA port hangs off
    starts = set()
    for (g, p), (rg, rp) in topo.links.items():
        if g not in is_sw and rg in is_sw:
            starts.add(rg)
    lids = sorted({base + k for base, lmc, g, p in topo.lids for k in range(1 << lmc)})
    deps = {}     # channel (s, port) -> set of channels
    for lid in lids:
        seen = set()
        for s0 in starts:
            s = s0
            prev = None
            for _ in range(64):
                port = lfts.get(s, {}).get(lid)
                if port in (None, 0, 255):
                    break
                far = topo.links.get((s, port))
                if far is None or far[0] not in is_sw:
                    break
                ch = (s, port)
                if prev is not None:
                    deps.setdefault(prev, set()).add(ch)
                if ch in seen:
                    break       # the rest of this path is already counted
                seen.add(ch)
                prev = ch
                s = far[0]
    # iterative DFS for a cycle
    WHITE, GREY, BLACK = 0, 1, 2
    color = {}
    nodes = set(deps) | {c for v in deps.values() for c in v}
    for root in sorted(nodes):
        if color.get(root, WHITE) != WHITE:
            continue
        stack = [(root, iter(sorted(deps.get(root, ()))))]
        color[root] = GREY
        path = [root]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = BLACK
                stack.pop()
                path.pop()
                continue
            c = color.get(nxt, WHITE)
            if c == GREY:
                cyc = path[path.index(nxt):] + [nxt]
                print("cdg_check: CYCLE of %d channels: %s" % (len(cyc) - 1, " -> ".join(
                    "%s[%d]" % (topo.nodes[g]["desc"], p) for g, p in cyc)))
                return 1
            if c == WHITE:
                color[nxt] = GREY
                path.append(nxt)
                stack.append((nxt, iter(sorted(deps.get(nxt, ())))))
    ndeps = sum(len(v) for v in deps.values())
    print("cdg_check: OK: %d channels, %d dependencies, no cycle" % (len(nodes), ndeps))
    return 0


def read_sls(path):
    sls = {}
    for line in open(path):
        f = line.split()
        if f:
            sls[(int(f[0], 0), int(f[1], 0))] = int(f[2], 0)
    return sls


def find_cycle(deps):
    """A cycle of the graph deps (node -> set of nodes) as a list, or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {}
    nodes = set(deps) | {c for v in deps.values() for c in v}
    for root in sorted(nodes):
        if color.get(root, WHITE) != WHITE:
            continue
        stack = [(root, iter(sorted(deps.get(root, ()))))]
        color[root] = GREY
        path = [root]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = BLACK
                stack.pop()
                path.pop()
                continue
            c = color.get(nxt, WHITE)
            if c == GREY:
                return path[path.index(nxt):] + [nxt]
            if c == WHITE:
                color[nxt] = GREY
                path.append(nxt)
                stack.append((nxt, iter(sorted(deps.get(nxt, ())))))
    return None


def check_vls(topo, lfts, sls):
    """The per-VL check of --sls: every CA port's routes on its pairs' VLs."""
    is_sw = {g for g, n in topo.nodes.items() if n["type"] == "SW"}
    lids = sorted({base + k for base, lmc, g, p in topo.lids for k in range(1 << lmc)})
    deps, vls, pairs = {}, set(), 0
    for base, lmc, g, p in topo.lids:
        if g in is_sw or (g, p) not in topo.links:
            continue
        s0 = topo.links[(g, p)][0]
        for lid in lids:
            if lid == base:
                continue
            if (base, lid) not in sls:
                print("cdg_check: no SL for %d -> %d" % (base, lid), file=sys.stderr)
                return 2
            vl = sls[(base, lid)]
            vls.add(vl)
            pairs += 1
            s, prev = s0, None
            for _ in range(64):
                port = lfts.get(s, {}).get(lid)
                if port in (None, 0, 255):
                    break
                far = topo.links.get((s, port))
                if far is None or far[0] not in is_sw:
                    break
                ch = (s, port, vl)
                if prev is not None:
                    deps.setdefault(prev, set()).add(ch)
                prev = ch
                s = far[0]
    cyc = find_cycle(deps)
    if cyc:
        print("cdg_check: CYCLE of %d channels: %s" % (len(cyc) - 1, " -> ".join(
            "%s[%d]/VL%d" % (topo.nodes[g]["desc"], p, v) for g, p, v in cyc)))
        return 1
    nodes = set(deps) | {c for v in deps.values() for c in v}
    print("cdg_check: OK: %d pairs on VLs %s: %d channels, %d dependencies, no cycle"
          % (pairs, ",".join(str(v) for v in sorted(vls)), len(nodes),
             sum(len(v) for v in deps.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
