#!/usr/bin/env python3
"""cdg_check.py --topo TOPO --lfts LFTS [--sls SLS]: a channel-dependency-graph
cycle check from infiniband-diags output alone (ibnetdiscover + dump_fts -n).

The channels are the directed switch-to-switch links; a route from a CA port to
a LID that uses link a and then link b adds the dependency a -> b.  Only routes
that traffic from CA ports can take are counted.  A cycle means the routes can
deadlock on one VL.  Exit 0: no cycle; 1: a cycle (printed); 2: bad input.

--sls SLS: lines "SLID DLID SL" (saquery -p answers) for every CA port's base
LID as SLID and every LID as DLID; the channels are then (link, VL), each hop
on the VL its switch's SL-to-VL table gives the pair's SL for the hop's input
and output ports: DIR/sl2vl.LID, `smpquery sl2vl LID OUT` for every output
port of every switch (--sl2vl DIR), or VL = SL without it.  A cycle on one VL
is a deadlock, one across VLs is none.  A pair without a line, or a table
missing, is an error (exit 2)."""
import argparse
import os
import re
import sys

from check_fabric import InputError, parse_lfts, parse_topo


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topo", required=True)
    ap.add_argument("--lfts", required=True)
    ap.add_argument("--sls")
    ap.add_argument("--sl2vl", metavar="DIR")
    a = ap.parse_args(argv)
    try:
        topo = parse_topo(a.topo)
        lfts = parse_lfts(a.lfts)
        sls = read_sls(a.sls) if a.sls else None
    except (InputError, OSError, ValueError) as e:
        print("cdg_check: %s" % e, file=sys.stderr)
        return 2
    if sls is not None:
        try:
            tables = read_sl2vl(topo, a.sl2vl) if a.sl2vl else None
        except (InputError, OSError, ValueError) as e:
            print("cdg_check: %s" % e, file=sys.stderr)
            return 2
        return check_vls(topo, lfts, sls, tables)
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
    cyc = find_cycle(deps)
    if cyc:
        print("cdg_check: CYCLE of %d channels: %s" % (len(cyc) - 1, " -> ".join(
            "%s[%d]" % (topo.nodes[g]["desc"], p) for g, p in cyc)))
        return 1
    nodes = set(deps) | {c for v in deps.values() for c in v}
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


RE_SL2VL = re.compile(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)$')


def read_sl2vl(topo, d):
    """{(switch GUID, in, out): [16 VLs]} from DIR/sl2vl.LID of every switch."""
    tables = {}
    for base, lmc, g, p in topo.lids:
        if topo.nodes[g]["type"] != "SW":
            continue
        path = os.path.join(d, "sl2vl.%d" % base)
        with open(path) as fp:
            for line in fp:
                m = RE_SL2VL.match(line)
                if m:
                    tables[(g, int(m.group(1)), int(m.group(2)))] = [
                        int(v) for v in m.group(3).split("|") if v.strip()]
    if not tables:
        raise InputError("no SL-to-VL table in %s" % d)
    return tables


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


def check_vls(topo, lfts, sls, tables):
    """The per-VL check of --sls: every CA port's routes on its pairs' VLs."""
    is_sw = {g for g, n in topo.nodes.items() if n["type"] == "SW"}
    lids = sorted({base + k for base, lmc, g, p in topo.lids for k in range(1 << lmc)})
    deps, vls, pairs = {}, set(), 0
    for base, lmc, g, p in topo.lids:
        if g in is_sw or (g, p) not in topo.links:
            continue
        s0, in0 = topo.links[(g, p)]
        for lid in lids:
            if lid == base:
                continue
            if (base, lid) not in sls:
                print("cdg_check: no SL for %d -> %d" % (base, lid), file=sys.stderr)
                return 2
            sl = sls[(base, lid)]
            pairs += 1
            s, inp, prev = s0, in0, None
            for _ in range(64):
                port = lfts.get(s, {}).get(lid)
                if port in (None, 0, 255):
                    break
                far = topo.links.get((s, port))
                if far is None or far[0] not in is_sw:
                    break
                if tables is None:
                    vl = sl
                elif (s, inp, port) in tables:
                    vl = tables[(s, inp, port)][sl]
                else:
                    print("cdg_check: no SL-to-VL table of %s in %d out %d"
                          % (topo.nodes[s]["desc"], inp, port), file=sys.stderr)
                    return 2
                vls.add(vl)
                ch = (s, port, vl)
                if prev is not None:
                    deps.setdefault(prev, set()).add(ch)
                prev = ch
                s, inp = far
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
