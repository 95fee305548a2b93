#!/usr/bin/env python3
"""check_fabric: verify a subnet from infiniband-diags output alone.

    check_fabric.py --topo T --lfts F [--links L] [--max-report N]

T  `ibnetdiscover` output: nodes, GUIDs, cabled ports, LIDs (LMC honoured)
F  `dump_fts -n` output: every switch's unicast LFT (`ibsmd --dump-lfts`
   writes the same format)
L  `iblinkinfo --line` output: port states (without it the state check is
   skipped, and said so)

Checks:
  1. every cabled port is Active (both ends are listed by iblinkinfo);
  2. every CA port and every switch port 0 has a non-zero LID, and no two
     ports' LID ranges overlap;
  3. for every CA port as source and every assigned LID as destination,
     following the LFTs from the CA's switch reaches the port owning that
     LID, with no loop, no hole and no dead end; the same from every
     switch (traps and SMP replies start there) unless --ca-only.
     max_hops counts links from the source CA port.
The routes are resolved per (switch, destination LID) with memoisation,
not per pair, so a 3456-host fabric takes seconds.

Exit 0 when all is well; 1 with the first failures listed otherwise;
2 when an input cannot be read or parsed.
"""

import argparse
import functools
import re
import sys

RE_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?(.*)$')
RE_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\]'
                     r'(?:\(([0-9a-fA-F]+)\))?\s*(?:#(.*))?$')
RE_LIDLMC = re.compile(r'\blid\s+(\d+)\s+lmc\s+(\d+)')
RE_LFT_HEAD = re.compile(r'^Unicast lids .*\bguid\s+(0x[0-9a-fA-F]+).*$', re.M)
RE_LFT_ENTRY = re.compile(r'^0x([0-9a-fA-F]+)[ \t]+(\d+)', re.M)
RE_LINK = re.compile(r'^(0x[0-9a-fA-F]+)\s+"([^"]*)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+'
                     r'==\((.*)\)==>\s*(.*)$')
RE_PEER = re.compile(r'^(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+)\[')
RE_STATE = re.compile(r'(\w+)/\s*(\w+)\s*$')


class InputError(Exception):
    pass


def id_guid(nodeid):
    """ibnetdiscover node ids are "S-<guid>", "H-<guid>", "R-<guid>"."""
    try:
        return int(nodeid.split("-", 1)[1], 16)
    except (IndexError, ValueError):
        raise InputError("unexpected node id %r" % nodeid)


class Topology:
    def __init__(self):
        self.nodes = {}     # node guid -> {type, desc, nports}
        self.links = {}     # (node guid, port) -> (node guid, port)
        self.portguid = {}  # (CA node guid, port) -> port guid
        self.lids = []      # (base, lmc, node guid, port) for CA ports, sw port 0

    def name(self, guid, port=None):
        node = self.nodes.get(guid)
        desc = node["desc"] if node else "?"
        text = "%s (0x%016x)" % (desc, guid)
        return text if port is None else "%s port %d" % (text, port)


def parse_topo(path):
    topo = Topology()
    cur = None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = RE_NODE.match(line)
            if m:
                kind, nports, nodeid, desc, rest = m.groups()
                cur = id_guid(nodeid)
                topo.nodes[cur] = {"type": {"Switch": "SW", "Ca": "CA",
                                            "Rt": "RT"}[kind],
                                   "desc": desc if desc is not None else nodeid,
                                   "nports": int(nports)}
                if kind == "Switch":
                    lm = RE_LIDLMC.search(rest or "")
                    if not lm:
                        raise InputError("%s:%d: switch without a LID"
                                         % (path, lineno))
                    topo.lids.append((int(lm.group(1)), int(lm.group(2)),
                                      cur, 0))
                continue
            if not line.startswith("["):
                if not line.strip():
                    cur = None
                continue
            m = RE_PORT.match(line)
            if not m or cur is None:
                raise InputError("%s:%d: cannot parse %r" % (path, lineno, line))
            port, pguid, rid, rport, _, comment = m.groups()
            port, rport = int(port), int(rport)
            topo.links[(cur, port)] = (id_guid(rid), rport)
            if topo.nodes[cur]["type"] != "SW":
                topo.portguid[(cur, port)] = int(pguid, 16) if pguid else cur + port
                lm = RE_LIDLMC.search(comment or "")
                if not lm:
                    raise InputError("%s:%d: CA port without a LID"
                                     % (path, lineno))
                topo.lids.append((int(lm.group(1)), int(lm.group(2)), cur, port))
    if not topo.nodes:
        raise InputError("%s: no nodes" % path)
    return topo


def parse_lfts(path):
    """-> {switch guid: {lid: port}}.  Whole-file regexes: a 3456-host
    fabric's dump has three million entries."""
    with open(path) as f:
        text = f.read()
    lfts = {}
    heads = list(RE_LFT_HEAD.finditer(text))
    first = heads[0].start() if heads else len(text)
    if RE_LFT_ENTRY.search(text, 0, first):
        raise InputError("%s: LFT entry before a header" % path)
    hex16 = functools.partial(int, base=16)
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        block = text[m.end():end]
        lids = RE_LFT_ENTRY.findall(block)
        table = lfts.setdefault(int(m.group(1), 16), {})
        table.update(zip(map(hex16, (e[0] for e in lids)),
                         map(int, (e[1] for e in lids))))
    return lfts


def parse_links(path):
    """-> {(guid, port): (state, physstate, peer or None)}; guid is the
    switch GUID or the CA port GUID, as iblinkinfo prints them."""
    states = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            m = RE_LINK.match(line.strip())
            if not m:
                continue
            guid, _, _, port, mid, rest = m.groups()
            st = RE_STATE.search(mid)
            if not st:
                raise InputError("%s:%d: no port state in %r"
                                 % (path, lineno, line))
            pm = RE_PEER.match(rest)
            peer = (int(pm.group(1), 16), int(pm.group(3))) if pm else None
            states[(int(guid, 16), int(port))] = (st.group(1), st.group(2), peer)
    return states


class Report:
    """Counts every problem, keeps the text of the first `keep`."""

    def __init__(self, keep):
        self.keep = keep
        self.lines = []
        self.count = 0

    def add(self, text):
        self.count += 1
        if len(self.lines) < self.keep:
            self.lines.append(text)


def check_states(topo, states, rep):
    checked = 0
    for (guid, port) in sorted(topo.links):
        key = (guid, port)
        if topo.nodes[guid]["type"] != "SW":
            key = (topo.portguid[(guid, port)], port)
        st = states.get(key)
        checked += 1
        if st is None:
            rep.add("state: %s: cabled in the topology, missing from"
                    " iblinkinfo" % topo.name(guid, port))
        elif st[0] != "Active":
            rep.add("state: %s is %s/%s, not Active"
                    % (topo.name(guid, port), st[0], st[1]))
    return checked


def check_lids(topo, rep):
    """-> {lid: (node guid, port)} for every assigned LID."""
    owner = {}
    for base, lmc, guid, port in sorted(topo.lids):
        what = topo.name(guid, port)
        if base == 0:
            rep.add("lid: %s has no LID" % what)
            continue
        if base >= 0xc000:
            rep.add("lid: %s has LID 0x%x outside the unicast range"
                    % (what, base))
            continue
        if lmc and base & ((1 << lmc) - 1):
            rep.add("lid: %s: LID %d not aligned to LMC %d" % (what, base, lmc))
        for lid in range(base, base + (1 << lmc)):
            if lid in owner:
                rep.add("lid: LID %d of %s is also %s's"
                        % (lid, what, topo.name(*owner[lid])))
            else:
                owner[lid] = (guid, port)
    return owner


UNKNOWN, ONPATH, FAIL = -3, -2, -1


class Router:
    """Follows the LFTs for one destination LID at a time: every switch is
    resolved once per LID (memoised), whatever the number of sources."""

    def __init__(self, topo, lfts, rep):
        self.topo = topo
        self.rep = rep
        self.sw = sorted(g for g, n in topo.nodes.items() if n["type"] == "SW")
        self.idx = {g: i for i, g in enumerate(self.sw)}
        self.lft = [lfts.get(g) for g in self.sw]
        for g, table in zip(self.sw, self.lft):
            if table is None:
                rep.add("lft: no LFT dumped for switch %s" % topo.name(g))
        # peer[s][port]: a switch index, or (CA guid, port)
        self.peer = []
        for g in self.sw:
            row = {}
            for p in range(1, topo.nodes[g]["nports"] + 1):
                far = topo.links.get((g, p))
                if far is None:
                    continue
                if topo.nodes.get(far[0], {}).get("type") == "SW":
                    row[p] = self.idx[far[0]]
                else:
                    row[p] = far
            self.peer.append(row)

    def _step(self, s, lid, dest):
        """-> (next switch, None) or (None, hops) or (None, reason)."""
        table = self.lft[s]
        if table is None:
            return None, "no LFT"
        port = table.get(lid)
        if port is None or port == 255:
            return None, "no LFT entry"
        if port == 0:
            if dest == (self.sw[s], 0):
                return None, 0
            return None, "port 0, but the LID is not this switch's"
        nxt = self.peer[s].get(port)
        if nxt is None:
            return None, "port %d is not cabled" % port
        if isinstance(nxt, tuple):
            if nxt == dest:
                return None, 1
            return None, "port %d leads to %s" % (port, self.topo.name(*nxt))
        return nxt, None

    def resolve(self, lid, dest, starts):
        """-> memo: per switch index, hops (links) to the port owning
        `lid`, FAIL, or UNKNOWN for switches no start leads through."""
        memo = [UNKNOWN] * len(self.sw)
        lft, peer = self.lft, self.peer
        for start in starts:
            if memo[start] != UNKNOWN:
                continue
            path = []
            s = start
            while True:
                m = memo[s]
                if m == ONPATH:
                    cycle = path[path.index(s):] + [s]
                    self._fail(s, lid, dest, "loop through " + " -> ".join(
                        self.topo.nodes[self.sw[i]]["desc"] for i in cycle))
                    res = FAIL
                    break
                if m != UNKNOWN:
                    res = m
                    break
                memo[s] = ONPATH
                path.append(s)
                # fast path: the LFT leads to another switch
                table = lft[s]
                if table is not None:
                    nxt = peer[s].get(table.get(lid, -1))
                    if nxt is not None and nxt.__class__ is int:
                        s = nxt
                        continue
                nxt, out = self._step(s, lid, dest)
                if nxt is not None:
                    s = nxt
                    continue
                path.pop()
                if isinstance(out, str):
                    self._fail(s, lid, dest, out)
                    out = FAIL
                memo[s] = res = out
                break
            for t in reversed(path):
                if res != FAIL:
                    res += 1
                memo[t] = res
        return memo

    def _fail(self, s, lid, dest, reason):
        self.rep.add("route: at %s, LID %d (%s): %s"
                     % (self.topo.name(self.sw[s]), lid,
                        self.topo.name(*dest), reason))


def check_routes(topo, lfts, owner, rep, switch_sources):
    """-> (CA pairs, switch pairs, bad pairs, max hops from a CA port)."""
    router = Router(topo, lfts, rep)
    ca_at = {}          # switch index -> CA ports cabled to it
    ca_first = {}       # (CA guid, port) -> switch index
    direct = []         # CA ports cabled to another CA
    for (guid, port), far in sorted(topo.links.items()):
        if topo.nodes[guid]["type"] == "SW":
            continue
        if topo.nodes.get(far[0], {}).get("type") == "SW":
            i = router.idx[far[0]]
            ca_at[i] = ca_at.get(i, 0) + 1
            ca_first[(guid, port)] = i
        else:
            direct.append(((guid, port), far))
    nca = sum(ca_at.values())
    ca_sw = sorted(ca_at)
    starts = range(len(router.sw)) if switch_sources else ca_sw
    pairs = sw_pairs = bad = max_hops = 0
    for lid in sorted(owner):
        dest = owner[lid]
        memo = router.resolve(lid, dest, starts)
        own = ca_first.get(dest)
        pairs += nca - (1 if own is not None else 0)
        for i in ca_sw:
            h = memo[i]
            if h == FAIL:
                bad += ca_at[i] - (1 if i == own else 0)
            elif h + 1 > max_hops:
                max_hops = h + 1
        if switch_sources:
            own_sw = router.idx.get(dest[0]) if dest[1] == 0 else None
            sw_pairs += len(memo) - (1 if own_sw is not None else 0)
            bad += sum(1 for i, h in enumerate(memo)
                       if h == FAIL and i != own_sw)
        for src, far in direct:
            if src == dest:
                continue
            pairs += 1
            if far == dest:
                max_hops = max(max_hops, 1)
            else:
                bad += 1
                rep.add("route: %s is cabled to a CA, cannot reach LID %d"
                        % (topo.name(*src), lid))
    return pairs, sw_pairs, bad, max_hops


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topo", required=True, help="ibnetdiscover output")
    ap.add_argument("--lfts", required=True, help="dump_fts -n output")
    ap.add_argument("--links", help="iblinkinfo --line output")
    ap.add_argument("--max-report", type=int, default=20)
    ap.add_argument("--ca-only", action="store_true",
                    help="route only from CA ports, not from every switch")
    args = ap.parse_args(argv)
    try:
        topo = parse_topo(args.topo)
        lfts = parse_lfts(args.lfts)
        states = parse_links(args.links) if args.links else None
    except (OSError, InputError) as e:
        print("check_fabric: %s" % e, file=sys.stderr)
        return 2
    rep = Report(args.max_report)
    if states is None:
        nstates = 0
        print("check_fabric: no --links: port states not checked")
    else:
        nstates = check_states(topo, states, rep)
    owner = check_lids(topo, rep)
    pairs, sw_pairs, bad, max_hops = check_routes(topo, lfts, owner, rep,
                                                  not args.ca_only)
    nsw = sum(1 for n in topo.nodes.values() if n["type"] == "SW")
    summary = ("switches=%d cas=%d ca_ports=%d lids=%d ports_checked=%d"
               " pairs=%d switch_pairs=%d bad_pairs=%d max_hops=%d"
               % (nsw, len(topo.nodes) - nsw, len(topo.portguid), len(owner),
                  nstates, pairs, sw_pairs, bad, max_hops))
    if rep.count == 0:
        print("check_fabric: OK: %s" % summary)
        return 0
    print("check_fabric: FAIL: %d problems: %s" % (rep.count, summary))
    for line in rep.lines[:args.max_report]:
        print("  " + line)
    if rep.count > args.max_report:
        print("  ... %d more" % (rep.count - args.max_report))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
