#!/usr/bin/env python3
"""qos_check.py: t_qos.sh's judge, from infiniband-diags output only.

  qos_check.py pairs --topo TOPO --max-vls N
      One line "SRC SRCLID DST DSTLID SL" for every ordered pair of CA
      ports (names from ibnetdiscover's comments): the SL the vFtree
      policy must give, computed here independently of ibsmd: the leaves
      are the switches with a CA attached, numbered in ascending node GUID
      order; the thesis's Algorithm 1 (Paper III, vFtree) fills
      VL[src leaf][dst leaf], symmetric, 0 within a leaf; SL = VL.
      `--max-vls 1` gives SL 0 everywhere (mode none).
  qos_check.py matrix --leaves L --max-vls N
      Algorithm 1's matrix for L leaves (a self-test: its matrix for 6
      leaves and 4 VLs).
  qos_check.py sl2vl --topo TOPO --dir DIR (--max-vls N | --expect ROW)
      DIR/sl2vl.LID holds `smpquery sl2vl LID [OUT]` outputs (a switch:
      one per output port 0..N; a CA: one).  Every switch must show every
      (in, out) pair 0..N once and every CA port one table; every table
      must be SL i -> VL i for i < N and VL 0 for the other SLs, or equal
      ROW (16 VLs, space separated).  `--pairs linked` judges on a switch
      only the pairs a packet can take: input != output, both port 0 or
      a linked port (the others must still answer).  Prints the number of
      tables judged and of those left out.
  qos_check.py vlarb --max-vls N FILE
      FILE is `smpquery vlarb` output: the low-priority table must weight
      exactly VLs 0..N-1, each with the same total weight; the high
      table must weight no VL at or above N.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fabric  # noqa: E402  (its ibnetdiscover and dump_fts parsers)

RE_SW = re.compile(r'^Switch\s+(\d+)\s+"S-([0-9a-fA-F]+)".*\blid\s+(\d+)\b')
RE_CA = re.compile(r'^Ca\s+\d+\s+"[^"]*"\s*#\s*"([^"]*)"')
RE_CAPORT = re.compile(
    r'^\[(\d+)\]\(([0-9a-fA-F]+)\)\s+"S-([0-9a-fA-F]+)"\[\d+\].*#\s*lid\s+(\d+)\b')
RE_ROW = re.compile(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)$')


def topo(path):
    """switches {lid: (guid, nports, linked ports)}, cas [(name, lid,
    leaf guid)]"""
    switches, cas, ca, sw = {}, [], None, None
    with open(path) as fp:
        for line in fp:
            m = RE_SW.match(line)
            if m:
                sw = (int(m.group(2), 16), int(m.group(1)), set())
                switches[int(m.group(3))] = sw
                ca = None
                continue
            m = re.match(r'^\[(\d+)\]\s+"', line)
            if m and sw is not None:
                sw[2].add(int(m.group(1)))
                continue
            if not line.strip() or line.startswith(("Ca", "vendid")):
                sw = None
            m = RE_CA.match(line)
            if m:
                ca = m.group(1)
                continue
            if line.startswith(("Switch", "vendid")):
                ca = None
            if ca is not None:
                m = RE_CAPORT.match(line)
                if m:
                    name = ca if m.group(1) == "1" else "%s/%s" % (ca, m.group(1))
                    cas.append((name, int(m.group(4)), int(m.group(3), 16)))
    return switches, cas


def algorithm1(n, maxvl):
    """VL[src][dst] for n leaves, the thesis's Algorithm 1 as written."""
    vl_of = [[None] * n for _ in range(n)]
    for s in range(n):
        if ((s * 2) // maxvl) % 2 == 1:
            vl = ((s * 2) % maxvl) + 1
        else:
            vl = (s * 2) % maxvl
        for d in range(n):
            if d > s:
                if vl_of[s][d] is None:
                    vl_of[s][d] = vl
                if vl_of[d][s] is None:
                    vl_of[d][s] = vl
                vl = (vl + 1) % maxvl
            elif d == s:
                vl_of[s][s] = 0
    return vl_of


# ------------------------------------------------------------- VOQsw
#
# An independent VOQsw (the VOQsw paper, Section 3, with ibsmd's rules 1-5
# of routing/qos/voqsw.c): the fabric from ibnetdiscover, the routes from
# dump_fts, nothing from ibsmd.

class Fabric:
    """What VOQsw reads: switches {guid: nports}, links {(guid, port):
    (guid, port)}, end ports [(base lid, lmc, ca guid, port, switch guid,
    switch port)] sorted by base LID, lft {switch guid: {lid: port}}."""

    def __init__(self, switches, links, endports, lft, names=None):
        self.switches = switches
        self.links = links
        self.endports = sorted(endports)
        self.lft = lft
        self.names = names or {}


def fabric_from_dump(topo_path, lfts_path):
    topo = check_fabric.parse_topo(topo_path)
    lft = check_fabric.parse_lfts(lfts_path)
    switches = {g: n["nports"] for g, n in topo.nodes.items() if n["type"] == "SW"}
    endports, names = [], {}
    for base, lmc, guid, port in topo.lids:
        if port == 0:
            continue	# a switch's port 0: not an end port
        peer = topo.links.get((guid, port))
        if peer is None or peer[0] not in switches:
            continue
        endports.append((base, lmc, guid, port, peer[0], peer[1]))
        desc = topo.nodes[guid]["desc"]
        names[(guid, port)] = desc if port == 1 else "%s/%d" % (desc, port)
    return Fabric(switches, topo.links, endports, lft, names)


def voqsw_paths(fab):
    """Rule 2: [(source (guid, port), source base LID, dlid, [tuple])] in
    path order; pairs with no path (same switch, drop, loop) carry no
    tuple and are listed with tuples None when undeliverable."""
    owner = {}
    for base, lmc, guid, port, _, _ in fab.endports:
        for lid in range(base, base + (1 << lmc)):
            owner[lid] = (guid, port)
    paths = []
    for base, _, guid, port, sw0, ip0 in fab.endports:
        for d in sorted(owner):
            if owner[d] == (guid, port):
                continue
            sw, ip, tuples = sw0, ip0, []
            for _ in range(len(fab.switches) + 1):
                op = fab.lft.get(sw, {}).get(d)
                peer = fab.links.get((sw, op)) if op else None
                if peer is None:
                    tuples = None	# a hole, port 0 or an unlinked port
                    break
                if peer[0] not in fab.switches:
                    if peer != owner[d]:
                        tuples = None	# a CA that is not the destination
                    break
                nsw, nip = peer
                nop = fab.lft.get(nsw, {}).get(d)
                if not nop:
                    tuples = None
                    break
                tuples.append((sw, ip, op, nop))
                sw, ip = nsw, nip
            else:
                tuples = None	# a loop
            paths.append(((guid, port), base, d, tuples))
    return paths


class Voqsw:
    """Stages 1-5 over a Fabric for n_sls SLs (None: unlimited) and
    n_vls VLs on every link (ibsim: every port has the same VLCap)."""

    def __init__(self, fab, n_sls, n_vls):
        self.fab, self.n_sls, self.n_vls = fab, n_sls, n_vls
        self.paths = voqsw_paths(fab)
        weight = {}
        for _, _, _, tuples in self.paths:
            for t in tuples or ():
                weight[t] = weight.get(t, 0) + 1
        order = sorted(weight, key=lambda t: (-weight[t],) + t)
        self.weight = weight
        self.rank = {t: i for i, t in enumerate(order)}
        self.x_max = len(order)
        if n_sls is None:
            ok, sls, used = self.compute_sls(self.x_max, None)
            self.x = self.x_max
        else:
            ok, sls, used = self.compute_sls(self.x_max, n_sls)
            self.x = self.x_max
            if not ok:
                lo, hi = 0, self.x_max
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if self.compute_sls(mid, n_sls)[0]:
                        lo = mid
                    else:
                        hi = mid
                self.x = lo
                ok, sls, used = self.compute_sls(lo, n_sls)
        assert ok
        self.path_sl, self.used = sls, used

    def compute_sls(self, x, n_sls):
        """Rule 4: (ok, [SL per path], {tuple: SL mask})."""
        used, owned, sls = {}, {}, []
        for _, _, _, tuples in self.paths:
            mine = [t for t in tuples or () if self.rank[t] < x]
            invalid = 0
            for t in mine:
                invalid |= owned.get(t[:3], 0) & ~used.get(t, 0)
            sl = 0
            while invalid >> sl & 1:
                sl += 1
            if n_sls is not None and sl >= n_sls:
                return False, None, None
            sls.append(sl)
            for t in mine:
                used[t] = used.get(t, 0) | 1 << sl
                owned[t[:3]] = owned.get(t[:3], 0) | 1 << sl
        return True, sls, used

    def sl_of(self):
        """{(source base LID, dlid): SL}"""
        return {(p[1], p[2]): sl for p, sl in zip(self.paths, self.path_sl)}

    def uniform(self, n):
        return [s % n if s < self.n_sls else 0 for s in range(16)]

    def vl_of(self, nsw, nop, n):
        nports = self.fab.switches[nsw]
        return nop - 1 if nports <= n else ((nop - 1) * n) // nports

    def switch_tables(self, sw):
        """Rule 5: {(ip, op): [VL per SL]} for ip != op in 0..nports."""
        nports = self.fab.switches[sw]
        tables = {}
        for ip in range(nports + 1):
            for op in range(nports + 1):
                if ip != op:
                    tables[(ip, op)] = self.uniform(self.n_vls)
        for t, mask in self.used.items():
            if t[0] != sw:
                continue
            nsw = self.fab.links[(sw, t[2])][0]
            row = tables[(t[1], t[2])]
            for s in range(16):
                if mask >> s & 1:
                    row[s] = self.vl_of(nsw, t[3], self.n_vls)
        for row in tables.values():
            assert all(v != 15 and v < self.n_vls for v in row), row
        return tables

    def figures(self):
        """Rule 6: paths, x, x_max, weight considered, total weight,
        paths covered, SLs used (undeliverable pairs left out)."""
        real = [(p, sl) for p, sl in zip(self.paths, self.path_sl) if p[3] is not None]
        return {"paths": len(real), "x": self.x, "x_max": self.x_max,
                "weight_x": sum(w for t, w in self.weight.items() if self.rank[t] < self.x),
                "weight": sum(self.weight.values()),
                "covered": sum(1 for p, _ in real if all(self.rank[t] < self.x for t in p[3])),
                "sls": len(set(sl for _, sl in real))}

    def report(self):
        return ("paths %(paths)d, tuples %(x)d of %(x_max)d, weight %(weight_x)d of %(weight)d, "
                "paths covered %(covered)d, SLs used %(sls)d" % self.figures())


def cmd_pairs(a):
    _, cas = topo(a.topo)
    if not cas:
        print("no CA port with a LID in %s" % a.topo, file=sys.stderr)
        return 1
    if a.voqsw:
        v = voqsw_of(a)
        sl_of = v.sl_of()
        print("voqsw: %s" % v.report(), file=sys.stderr)
        pair_sl = lambda s, d: sl_of.get((s[1], d[1]), 0)  # noqa: E731
    else:
        leaves = sorted({leaf for _, _, leaf in cas})
        index = {g: i for i, g in enumerate(leaves)}
        vl = algorithm1(len(leaves), a.max_vls)
        pair_sl = lambda s, d: vl[index[s[2]]][index[d[2]]]  # noqa: E731
    for src in sorted(cas):
        for dst in sorted(cas):
            if src[0] != dst[0]:
                print(src[0], src[1], dst[0], dst[1], pair_sl(src, dst))
    return 0


def voqsw_of(a):
    if a.sls is None or not 1 <= a.sls <= 16:
        sys.exit("--voqsw needs --sls 1..16")
    return Voqsw(fabric_from_dump(a.topo, a.voqsw), a.sls, a.max_vls)


def cmd_voqsw_report(a):
    """What ibsmd's "qos: voqsw:" lines must contain for these routes:
    the parts between the |s, spaces included."""
    fab = fabric_from_dump(a.topo, a.voqsw)
    print(": %(x)d of %(x_max)d tuples, |, paths covered %(covered)d of %(paths)d (|, SLs used %(sls)d of "
          % Voqsw(fab, a.sls, a.max_vls).figures())
    if a.full:
        print("full VOQ needs %d SLs" % (1 + max(Voqsw(fab, None, a.max_vls).path_sl)))
    return 0


def cmd_voqsw_changed(a):
    """The switch SL2VL tables VOQsw changes from routes 0 to routes 1 on
    the pairs a packet can take over routes 1 (port 0 or linked ports):
    what a sweep writing only what differs writes."""
    old = Voqsw(fabric_from_dump(a.topo0, a.lfts0), a.sls, a.max_vls)
    new = Voqsw(fabric_from_dump(a.topo1, a.lfts1), a.sls, a.max_vls)
    n = 0
    for sw in new.fab.switches:
        if sw not in old.fab.switches:
            continue
        before, after = old.switch_tables(sw), new.switch_tables(sw)
        for key, row in after.items():
            if all(p == 0 or (sw, p) in new.fab.links for p in key) and before.get(key) != row:
                n += 1
    print(n)
    return 0


def cmd_cut(a):
    """The switch-to-switch link the most CA-to-CA routes cross whose loss
    leaves every switch connected: "SWITCH PORT" (ibsim names)."""
    fab = fabric_from_dump(a.topo, a.lfts)
    desc = {g: n["desc"] for g, n in check_fabric.parse_topo(a.topo).nodes.items()}
    load = {}
    for _, _, _, tuples in voqsw_paths(fab):
        for sw, _, op, _ in tuples or ():
            key = min((sw, op), fab.links[(sw, op)])
            load[key] = load.get(key, 0) + 1
    for key in sorted(load, key=lambda k: (-load[k], k)):
        cut = {key, fab.links[key]}
        seen, todo = set(), [min(fab.switches)]
        while todo:
            sw = todo.pop()
            if sw in seen:
                continue
            seen.add(sw)
            for p in range(1, fab.switches[sw] + 1):
                peer = fab.links.get((sw, p))
                if peer and peer[0] in fab.switches and (sw, p) not in cut:
                    todo.append(peer[0])
        if len(seen) == len(fab.switches):
            print(desc[key[0]], key[1], load[key])
            return 0
    print("no switch link whose loss leaves the switches connected", file=sys.stderr)
    return 1


def cmd_voqsw_example(a):
    """A hand-worked example: a line of three switches, two hosts each,
    LIDs in host order; prints what it finds, exit 1 when it is not the
    figures worked by hand."""
    S = [0x100 + i for i in range(3)]
    H = [0x200 + i for i in range(6)]
    links = {}

    def link(a_, pa, b, pb):
        links[(a_, pa)] = (b, pb)
        links[(b, pb)] = (a_, pa)
    for i, h in enumerate(H):
        link(S[i // 2], 1 + i % 2, h, 1)
    link(S[0], 3, S[1], 3)
    link(S[1], 4, S[2], 3)
    lid = {h: 1 + i for i, h in enumerate(H)}
    lft = {s: {} for s in S}
    for i, h in enumerate(H):
        home = i // 2
        for k, s in enumerate(S):
            if k == home:
                lft[s][lid[h]] = 1 + i % 2
            elif k < home:
                lft[s][lid[h]] = 3 if k == 0 else 4
            else:
                lft[s][lid[h]] = 3
    endports = [(lid[h], 0, h, 1, S[i // 2], 1 + i % 2) for i, h in enumerate(H)]
    fab = Fabric({s: 4 for s in S}, links, endports, lft)
    bad = []
    full = Voqsw(fab, None, 8)
    sls = full.sl_of()
    row = lambda src: [sls.get((src, d), 0) for d in range(1, 7) if d != src]  # noqa: E731
    need = 1 + max(full.path_sl)
    print("tuples %d, full VOQ %d SLs; from h0 %s, from h4 %s" %
          (full.x_max, need, row(1), row(5)))
    if full.x_max != 24 or need != 4 or row(1) != [0, 0, 1, 2, 3] or \
            row(5) != [0, 1, 2, 3, 0]:
        bad.append("not the hand-worked 24 tuples, 4 SLs, h0: 0 0 1 2 3, h4: 0 1 2 3 0")
    four = Voqsw(fab, 4, 8)
    t = four.switch_tables(S[0])[(1, 3)][:4]
    u = four.switch_tables(S[1])[(3, 4)][2:4]
    print("S0 (in 1, out 3), 4 SLs, 8 VLs: SL0-3 -> VL %s; S1 (in 3, out 4): SL2-3 -> VL %s; from h2 %s"
          % (t, u, row(3)))
    if t != [0, 1, 3, 3] or u != [0, 1] or row(3) != [0, 1, 0, 0, 1]:
        bad.append("S0 (1, 3) is not SL0->VL0 SL1->VL1 SL2->VL3 SL3->VL3, S1 (3, 4) not SL2->VL0 SL3->VL1,"
                   " or h2 not 0 1 0 0 1 (as worked by hand)")
    for n, linear in ((2, 8), (3, 9)):
        x = Voqsw(fab, n, 8).x
        print("SLmax %d: binary search x = %d (a linear search: %d)" % (n, x, linear))
        if x != linear:
            bad.append("SLmax %d: x = %d, a linear search's %d" % (n, x, linear))
    for line in bad:
        print("FAIL: " + line)
    return 1 if bad else 0


def cmd_matrix(a):
    for row in algorithm1(a.leaves, a.max_vls):
        print("[" + ",".join(str(v) for v in row) + "]")
    return 0


def cmd_sl2vl(a):
    switches, cas = topo(a.topo)
    expect = None
    if a.voqsw:
        v = voqsw_of(a)
        expect = {lid: v.switch_tables(sw[0]) for lid, sw in switches.items()}
        want = v.uniform(a.max_vls)
    elif a.expect is not None:
        want = [int(v) for v in a.expect.split()]
        if len(want) != 16:
            print("--expect needs 16 VLs", file=sys.stderr)
            return 2
    else:
        want = [sl if sl < a.max_vls else 0 for sl in range(16)]
    bad, tables = [], 0
    nodes = [(lid, sw[1], sw[2]) for lid, sw in switches.items()]
    nodes += [(lid, None, None) for _, lid, _ in cas]
    skipped = 0
    for lid, nports, linked in sorted(nodes):
        path = os.path.join(a.dir, "sl2vl.%d" % lid)
        if not os.path.exists(path):
            bad.append("LID %d: no smpquery sl2vl output" % lid)
            continue
        seen = {}
        with open(path) as fp:
            for line in fp:
                m = RE_ROW.match(line)
                if not m:
                    continue
                key = (int(m.group(1)), int(m.group(2)))
                vls = [int(v) for v in m.group(3).split("|") if v.strip()]
                if key in seen:
                    bad.append("LID %d in %d out %d: twice" % (lid, key[0], key[1]))
                seen[key] = vls
        if nports is None:
            need = {(0, 0)}
        else:
            need = {(i, o) for i in range(nports + 1) for o in range(nports + 1)}
        for key in sorted(need - set(seen)):
            bad.append("LID %d in %d out %d: not answered" % (lid, key[0], key[1]))
        if nports is not None and a.pairs == "linked":
            ports = {0} | linked
            need = {(i, o) for i, o in need if i != o and i in ports and o in ports}
        for key, vls in sorted(seen.items()):
            if key not in need:
                skipped += 1
                continue
            exp = want
            if expect is not None and nports is not None:
                exp = expect[lid].get(key)
                if exp is None:
                    skipped += 1	# in == out: VOQsw defines no table
                    continue
            tables += 1
            if vls != exp:
                bad.append("LID %d in %d out %d: %s, expected %s" %
                           (lid, key[0], key[1], vls, exp))
    for line in bad[:20]:
        print(line)
    if bad:
        print("%d of %d tables wrong or missing" % (len(bad), tables))
        return 1
    print(tables, skipped)
    return 0


def cmd_vlarb(a):
    tables, cur, vls = {}, None, None
    with open(a.file) as fp:
        for line in fp:
            if line.startswith("# Low priority"):
                cur = "low"
            elif line.startswith("# High priority"):
                cur = "high"
            elif line.startswith("VL ") and cur:
                vls = [int(v, 0) for v in line.split(":", 1)[1].split("|") if v.strip()]
            elif line.startswith("WEIGHT") and cur and vls is not None:
                ws = [int(v, 0) for v in line.split(":", 1)[1].split("|") if v.strip()]
                t = tables.setdefault(cur, {})
                for vl, w in zip(vls, ws):
                    if w:
                        t[vl] = t.get(vl, 0) + w
                vls = None
    if "low" not in tables:
        print("no low-priority table")
        return 1
    low, high = tables["low"], tables.get("high", {})
    bad = []
    if sorted(low) != list(range(a.max_vls)):
        bad.append("low table weights VLs %s" % sorted(low))
    if len(set(low.values())) > 1:
        bad.append("unequal low weights %s" % low)
    if [vl for vl in high if vl >= a.max_vls]:
        bad.append("high table weights VLs %s" % sorted(high))
    if bad:
        print("; ".join(bad))
        return 1
    print("low VLs %s weight %d each, high %s" %
          (sorted(low), next(iter(low.values())), sorted(high) or "none"))
    return 0


def voqsw_args(s):
    s.add_argument("--voqsw", metavar="LFTS",
                   help="VOQsw over these dump_fts LFTs (with --sls)")
    s.add_argument("--sls", type=int)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("pairs")
    s.add_argument("--topo", required=True)
    s.add_argument("--max-vls", type=int, required=True)
    voqsw_args(s)
    s = sub.add_parser("matrix")
    s.add_argument("--leaves", type=int, required=True)
    s.add_argument("--max-vls", type=int, required=True)
    s = sub.add_parser("sl2vl")
    s.add_argument("--topo", required=True)
    s.add_argument("--dir", required=True)
    s.add_argument("--max-vls", type=int)
    s.add_argument("--expect")
    s.add_argument("--pairs", choices=("all", "linked"), default="all")
    voqsw_args(s)
    s = sub.add_parser("vlarb")
    s.add_argument("--max-vls", type=int, required=True)
    s.add_argument("file")
    sub.add_parser("voqsw-example")
    s = sub.add_parser("voqsw-report")
    s.add_argument("--topo", required=True)
    s.add_argument("--max-vls", type=int, required=True)
    s.add_argument("--full", action="store_true")
    voqsw_args(s)
    s = sub.add_parser("voqsw-changed")
    for k in ("topo0", "lfts0", "topo1", "lfts1"):
        s.add_argument("--" + k, required=True)
    s.add_argument("--sls", type=int, required=True)
    s.add_argument("--max-vls", type=int, required=True)
    s = sub.add_parser("cut")
    s.add_argument("--topo", required=True)
    s.add_argument("--lfts", required=True)
    a = p.parse_args()
    if a.cmd == "sl2vl" and (a.max_vls is None) == (a.expect is None):
        p.error("sl2vl: one of --max-vls and --expect")
    return {"pairs": cmd_pairs, "matrix": cmd_matrix, "sl2vl": cmd_sl2vl,
            "vlarb": cmd_vlarb, "voqsw-example": cmd_voqsw_example,
            "voqsw-report": cmd_voqsw_report, "voqsw-changed": cmd_voqsw_changed,
            "cut": cmd_cut}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
