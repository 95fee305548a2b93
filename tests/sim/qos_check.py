#!/usr/bin/env python3
"""qos_check.py: t_qos.sh's judge, from infiniband-diags output only.

  qos_check.py pairs --topo TOPO --max-vls N
      One line "SRC SRCLID DST DSTLID SL" for every ordered pair of CA
      ports (names from ibnetdiscover's comments): the SL the vFtree
      policy must give, computed here independently of ibsmd: the leaves
      are the switches with a CA attached, numbered in ascending node GUID
      order; the thesis's Algorithm 1 (seed-003 notes, section 1.3) fills
      VL[src leaf][dst leaf], symmetric, 0 within a leaf; SL = VL.
      `--max-vls 1` gives SL 0 everywhere (mode none).
  qos_check.py matrix --leaves L --max-vls N
      Algorithm 1's matrix for L leaves (a self-test: the notes' 6-leaf,
      maxvl 4 matrix).
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


def cmd_pairs(a):
    _, cas = topo(a.topo)
    if not cas:
        print("no CA port with a LID in %s" % a.topo, file=sys.stderr)
        return 1
    leaves = sorted({leaf for _, _, leaf in cas})
    index = {g: i for i, g in enumerate(leaves)}
    vl = algorithm1(len(leaves), a.max_vls)
    for sname, slid, sleaf in sorted(cas):
        for dname, dlid, dleaf in sorted(cas):
            if sname != dname:
                print(sname, slid, dname, dlid, vl[index[sleaf]][index[dleaf]])
    return 0


def cmd_matrix(a):
    for row in algorithm1(a.leaves, a.max_vls):
        print("[" + ",".join(str(v) for v in row) + "]")
    return 0


def cmd_sl2vl(a):
    switches, cas = topo(a.topo)
    if a.expect is not None:
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
            tables += 1
            if vls != want:
                bad.append("LID %d in %d out %d: %s, expected %s" %
                           (lid, key[0], key[1], vls, want))
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


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("pairs")
    s.add_argument("--topo", required=True)
    s.add_argument("--max-vls", type=int, required=True)
    s = sub.add_parser("matrix")
    s.add_argument("--leaves", type=int, required=True)
    s.add_argument("--max-vls", type=int, required=True)
    s = sub.add_parser("sl2vl")
    s.add_argument("--topo", required=True)
    s.add_argument("--dir", required=True)
    s.add_argument("--max-vls", type=int)
    s.add_argument("--expect")
    s.add_argument("--pairs", choices=("all", "linked"), default="all")
    s = sub.add_parser("vlarb")
    s.add_argument("--max-vls", type=int, required=True)
    s.add_argument("file")
    a = p.parse_args()
    if a.cmd == "sl2vl" and (a.max_vls is None) == (a.expect is None):
        p.error("sl2vl: one of --max-vls and --expect")
    return {"pairs": cmd_pairs, "matrix": cmd_matrix, "sl2vl": cmd_sl2vl,
            "vlarb": cmd_vlarb}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
