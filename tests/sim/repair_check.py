#!/usr/bin/env python3
"""repair_check: did a fault change only the forwarding entries it broke?

    repair_check.py --topo-before T0 --lfts-before F0 --topo-after T1 --lfts-after F1

T0/T1  `ibnetdiscover` output before and after the fault
F0/F1  `dump_fts -n` output before and after

The links of T0 that T1 lacks are the lost ones.  For every switch and
every LID in both dumps, the old route (F0 followed from that switch over
T0) either crossed a lost link or not.  An entry that changed although its
old route did not cross a lost link is an unneeded change: exit 1, listing
the first few.  Prints the changed entries, the entries whose old route
was broken, and the changed LFT blocks (64 LIDs each, as the SM writes
them).  Exit 2 on unreadable input.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fabric import InputError, parse_lfts, parse_topo  # noqa: E402


def lost_links(t0, t1):
    lost = set()
    for a, b in t0.links.items():
        if t1.links.get(a) != b:
            lost.add((a, b))
            lost.add((b, a))
    return lost


def owners(topo):
    """LID -> (node guid, port) for every LID of every range."""
    own = {}
    for base, lmc, node, port in topo.lids:
        for lid in range(base, base + (1 << lmc)):
            own[lid] = (node, port)
    return own


def crosses_lost(t0, f0, own, lost, sw, lid, memo):
    """Does the old route from switch sw to lid cross a lost link?"""
    path = []
    cur = sw
    result = False
    for _ in range(len(f0) + 1):
        key = (cur, lid)
        if key in memo:
            result = memo[key]
            break
        path.append(key)
        port = f0.get(cur, {}).get(lid)
        if port is None or port == 0 or port == 255:
            break
        link = ((cur, port), t0.links.get((cur, port)))
        if link[1] is None:
            break
        if link in lost:
            result = True
            break
        nxt = link[1][0]
        if t0.nodes.get(nxt, {}).get("type") != "SW" or own.get(lid) == link[1]:
            break
        cur = nxt
    for key in path:
        memo[key] = result
    return result


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo-before", required=True)
    ap.add_argument("--lfts-before", required=True)
    ap.add_argument("--topo-after", required=True)
    ap.add_argument("--lfts-after", required=True)
    args = ap.parse_args(argv)
    try:
        t0, t1 = parse_topo(args.topo_before), parse_topo(args.topo_after)
        f0, f1 = parse_lfts(args.lfts_before), parse_lfts(args.lfts_after)
    except (InputError, OSError) as e:
        print("repair_check: %s" % e, file=sys.stderr)
        return 2
    lost = lost_links(t0, t1)
    if not lost:
        print("repair_check: no link was lost between the two topologies",
              file=sys.stderr)
        return 2
    own = owners(t0)
    memo = {}
    changed = broken = 0
    blocks = set()
    needless = []
    for sw, table in f1.items():
        old = f0.get(sw)
        if old is None:
            continue
        for lid, port in table.items():
            if lid not in old:
                continue
            was_broken = crosses_lost(t0, f0, own, lost, sw, lid, memo)
            broken += was_broken
            if old[lid] == port:
                continue
            changed += 1
            blocks.add((sw, lid // 64))
            if not was_broken:
                needless.append((sw, lid, old[lid], port))
    print("lost links: %d; entries changed: %d; entries whose old route was "
          "broken: %d; LFT blocks changed: %d; changed without need: %d"
          % (len(lost) // 2, changed, broken, len(blocks), len(needless)))
    for sw, lid, a, b in needless[:5]:
        print("  %s LID %d: port %d -> %d, its old route was intact"
              % (t0.name(sw), lid, a, b))
    return 1 if needless else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
