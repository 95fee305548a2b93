#!/usr/bin/env python3
"""link_loads: all-to-all routes per switch-to-switch link, from dumps alone.

    link_loads.py TOPO LFTS [--all-lids | --offset K] [--per-link] [--shared]

TOPO  `ibnetdiscover` output (or `ibsmd --dump-topology`), with LIDs
LFTS  `dump_fts -n` output (or `ibsmd --dump-lfts`)

For every CA port as source and the base LID of every CA port as
destination (every LID of its LMC range with --all-lids, LID base + K with
--offset K: the LIDs of one offset of the LMC ranges), the route is
followed through the LFTs; each directed switch-to-switch link counts the
(source, destination) pairs whose route crosses it.  Prints the number of
directed links and the max / min / mean routes per link, also split into
up and down links (up: towards the switch farther from the CAs, by BFS
distance from the switches with CAs).  --per-link lists every link.
--shared: for every (source, destination port) pair of ports on
different switches whose LMC range has several LIDs, whether the routes
to its LIDs share a switch-to-switch link (the point of LMC is that they
need not): prints the pairs, those sharing one, and the links shared.

Works from one pair of dumps: LIDs may differ between two SMs' dumps of
the same fabric, the numbers compare.  Exit 1 when some pair is not
delivered (a hole, a drop or a loop), 2 on unreadable input.
"""

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fabric import InputError, parse_lfts, parse_topo  # noqa: E402


def switch_links(topo):
    """-> {(sw, port): peer sw} for cabled switch-to-switch ports."""
    out = {}
    for (guid, port), (rguid, _) in topo.links.items():
        if topo.nodes[guid]["type"] == "SW" and \
                topo.nodes.get(rguid, {}).get("type") == "SW":
            out[(guid, port)] = rguid
    return out


def leaf_distance(topo, sw_links):
    adj = collections.defaultdict(list)
    for (a, _), b in sw_links.items():
        adj[a].append(b)
    dist, queue = {}, collections.deque()
    for (guid, port), (rguid, _) in topo.links.items():
        if topo.nodes[guid]["type"] == "SW" and \
                topo.nodes.get(rguid, {}).get("type") != "SW" and guid not in dist:
            dist[guid] = 0
            queue.append(guid)
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def route_links(lfts, sw_links, src, dst, lid, limit):
    """The switch-to-switch links from switch src to switch dst for lid."""
    out, cur = [], src
    while cur != dst and len(out) <= limit:
        p = lfts.get(cur, {}).get(lid)
        peer = sw_links.get((cur, p))
        if peer is None:
            return None
        out.append((cur, p))
        cur = peer
    return out if cur == dst else None


def shared_links(topo, lfts, sw_links, ca_ports, lid_of):
    """-> (pairs, pairs sharing a link, links shared) over the LMC ranges."""
    pairs = sharing = links = 0
    leaves = sorted({sw for _, _, sw, _ in ca_ports})
    srcs = {sw: sum(1 for c in ca_ports if c[2] == sw) for sw in leaves}
    for guid, port, dsw, _ in ca_ports:
        base, lmc = lid_of.get((guid, port), (0, 0))
        if not base or not lmc:
            continue
        for ssw in leaves:
            if ssw == dsw:
                continue
            seen, shared = set(), set()
            for k in range(1 << lmc):
                r = route_links(lfts, sw_links, ssw, dsw, base + k, len(sw_links))
                for link in r or []:
                    (shared if link in seen else seen).add(link)
            pairs += srcs[ssw]
            sharing += srcs[ssw] if shared else 0
            links += srcs[ssw] * len(shared)
    return pairs, sharing, links


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("topo")
    ap.add_argument("lfts")
    ap.add_argument("--all-lids", action="store_true")
    ap.add_argument("--offset", type=int, metavar="K")
    ap.add_argument("--per-link", action="store_true")
    ap.add_argument("--shared", action="store_true")
    args = ap.parse_args(argv)
    try:
        topo = parse_topo(args.topo)
        lfts = parse_lfts(args.lfts)
    except (OSError, InputError) as e:
        print("link_loads: %s" % e, file=sys.stderr)
        return 2

    sw_links = switch_links(topo)
    switches = [g for g, n in topo.nodes.items() if n["type"] == "SW"]
    # sources: CA ports cabled to a switch, counted per switch
    src_on = collections.Counter()
    ca_ports = []       # (node guid, port, switch guid, switch port)
    for (guid, port), (rguid, rport) in topo.links.items():
        if topo.nodes[guid]["type"] != "SW" and \
                topo.nodes.get(rguid, {}).get("type") == "SW":
            src_on[rguid] += 1
            ca_ports.append((guid, port, rguid, rport))
    lid_of = {}
    for base, lmc, guid, port in topo.lids:
        lid_of[(guid, port)] = (base, lmc)
    dests = []          # (lid, switch guid, switch port)
    for guid, port, sw, swport in sorted(ca_ports):
        base, lmc = lid_of.get((guid, port), (0, 0))
        if not base:
            continue
        if args.offset is not None:
            if args.offset < 1 << lmc:
                dests.append((base + args.offset, sw, swport))
            continue
        for k in range(1 << lmc if args.all_lids else 1):
            dests.append((base + k, sw, swport))

    load = {key: 0 for key in sw_links}
    bad = 0
    for lid, dsw, dport in dests:
        nxt = {}
        for sw in switches:
            p = lfts.get(sw, {}).get(lid)
            if p is None or p == 255:
                continue
            nxt[sw] = p
        # depth of each switch along its route, memoised; None: undelivered
        depth = {dsw: 0} if nxt.get(dsw) == dport else {}
        state = {}

        def resolve(sw):
            path = []
            cur = sw
            while cur not in depth:
                if state.get(cur) == 1 or cur not in nxt:
                    for s in path:
                        depth[s] = None
                    return None
                state[cur] = 1
                path.append(cur)
                peer = sw_links.get((cur, nxt[cur]))
                if peer is None:
                    for s in path:
                        depth[s] = None
                    return None
                cur = peer
            d = depth[cur]
            for s in reversed(path):
                d = None if d is None else d + 1
                depth[s] = d
            return depth[sw]

        w = {}
        for sw, n in src_on.items():
            own = 1 if sw == dsw else 0     # the destination itself
            if n - own <= 0:
                continue
            if resolve(sw) is None:
                bad += n - own
                continue
            w[sw] = n - own
        for sw in sorted((s for s in depth if depth[s]), key=lambda s: -depth[s]):
            if sw not in w:
                continue
            key = (sw, nxt[sw])
            load[key] += w[sw]
            peer = sw_links[key]
            w[peer] = w.get(peer, 0) + w[sw]

    dist = leaf_distance(topo, sw_links)

    def summary(name, keys):
        vals = [load[k] for k in keys]
        if not vals:
            return "%s: links=0" % name
        return "%s: links=%d max=%d min=%d mean=%.1f" % (
            name, len(vals), max(vals), min(vals), sum(vals) / len(vals))

    up = [k for k in load if dist.get(sw_links[k], 0) > dist.get(k[0], 0)]
    down = [k for k in load if dist.get(sw_links[k], 0) < dist.get(k[0], 0)]
    print("sources=%d destinations=%d undelivered=%d" %
          (len(ca_ports), len(dests), bad))
    print(summary("all", list(load)))
    print(summary("up", up))
    print(summary("down", down))
    if args.shared:
        pairs, sharing, links = shared_links(topo, lfts, sw_links, ca_ports, lid_of)
        print("shared: pairs=%d sharing=%d links=%d" % (pairs, sharing, links))
    if args.per_link:
        for (sw, port), peer in sorted(sw_links.items()):
            print("%s[%d] -> %s: %d" % (topo.nodes[sw]["desc"], port,
                                         topo.nodes[peer]["desc"],
                                         load[(sw, port)]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
