#!/usr/bin/env python3
"""vm_check.py: judge a VM's place from infiniband-diags output alone
(tests/sim/t_vm.sh; parsers from check_fabric.py).

    vm_check.py walk --topo T --lfts F --lid L --expect NAME
        follow every switch's LFT entry for L hop by hop (dump_fts -n F,
        cables from ibnetdiscover T); exit 0 when every walk ends at the
        CA node NAME (node description), 1 with the switches whose walk
        ends elsewhere, in a hole or a loop
    vm_check.py node --topo T NAME
        "NODEGUID PORTGUID LID" of CA NAME's port 1
    vm_check.py idle --topo T --links L --out PREFIX
        the end ports off the subnet: no LID and not Active (the idle VFs
        of the dynamic scheme, left in INIT by design; a port with only
        one of the two -- a VF a VM left still holding its LID, say -- is
        an error): their names on stdout, one a line, and PREFIX.topo /
        PREFIX.links without them, so that check_fabric.py judges the
        rest of the fabric
    vm_check.py gid GUID
        the link-local GID of interface ID GUID, as saquery writes it
"""

import argparse
import ipaddress
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fabric as cf  # noqa: E402


def ca_by_name(topo, name):
    for guid, node in topo.nodes.items():
        if node["type"] == "CA" and node["desc"] == name:
            return guid
    raise cf.InputError("no CA named %s in the topology" % name)


def walk(topo, lfts, lid, sw):
    """-> (CA node guid or None, text) of the walk for lid from switch sw."""
    seen = set()
    cur = sw
    while True:
        if cur in seen:
            return None, "loop at %s" % topo.name(cur)
        seen.add(cur)
        port = lfts.get(cur, {}).get(lid)
        if port is None or port == 255:
            return None, "no entry at %s" % topo.name(cur)
        if port == 0:
            return None, "ends at switch %s" % topo.name(cur)
        peer = topo.links.get((cur, port))
        if peer is None:
            return None, "dead port %d at %s" % (port, topo.name(cur))
        if topo.nodes[peer[0]]["type"] != "SW":
            return peer[0], "reaches %s" % topo.name(peer[0], peer[1])
        cur = peer[0]


def cmd_walk(a):
    topo = cf.parse_topo(a.topo)
    lfts = cf.parse_lfts(a.lfts)
    want = ca_by_name(topo, a.expect)
    bad = []
    n = 0
    for sw in sorted(g for g, nd in topo.nodes.items() if nd["type"] == "SW"):
        n += 1
        end, text = walk(topo, lfts, a.lid, sw)
        if end != want:
            bad.append("%s: LID %d %s" % (topo.name(sw), a.lid, text))
    if bad:
        print("%d of %d switches do not lead LID %d to %s:"
              % (len(bad), n, a.lid, a.expect))
        print("\n".join(bad[:20]))
        return 1
    print("all %d switches lead LID %d to %s" % (n, a.lid, a.expect))
    return 0


def cmd_node(a):
    topo = cf.parse_topo(a.topo)
    guid = ca_by_name(topo, a.name)
    lid = next((b for b, _, g, p in topo.lids if g == guid and p == 1), 0)
    print("0x%016x 0x%016x %d" % (guid, topo.portguid[(guid, 1)], lid))
    return 0


RE_BLOCK_SPLIT = re.compile(r'\n\s*\n')


def cmd_idle(a):
    topo = cf.parse_topo(a.topo)
    states = cf.parse_links(a.links)
    idle = {}   # CA node guid -> port guid
    half = []   # a LID but not Active, or Active without a LID
    for base, _, guid, port in topo.lids:
        pg = topo.portguid.get((guid, port)) if port else None
        if pg is None:
            continue
        st = states.get((pg, port))
        active = st is None or st[0] == "Active"
        if base == 0 and not active:
            idle[guid] = pg
        elif base == 0 or not active:
            half.append("%s (lid %d, %s)" % (topo.nodes[guid]["desc"], base,
                                             "Active" if active else st[0]))
    if half:
        sys.stderr.write("off the subnet by halves: %s\n" % ", ".join(half))
        return 1
    for guid in sorted(idle):
        print(topo.nodes[guid]["desc"])
    ids = ["H-%016x" % g for g in idle]
    with open(a.topo) as f:
        blocks = RE_BLOCK_SPLIT.split(f.read())
    out = []
    for b in blocks:
        lines = b.split("\n")
        if any(re.match(r'^Ca\s+\d+\s+"%s"' % i, ln) for i in ids for ln in lines):
            continue
        out.append("\n".join(ln for ln in lines
                             if not any('"%s"[' % i in ln for i in ids)))
    with open(a.out + ".topo", "w") as f:
        f.write("\n\n".join(out) + "\n")
    pg = ["0x%016x" % g for g in idle.values()]
    with open(a.links) as f, open(a.out + ".links", "w") as o:
        o.writelines(ln for ln in f if not any(g in ln for g in pg))
    return 0


def cmd_gid(a):
    g = int(a.guid, 16)
    print(ipaddress.IPv6Address((0xfe80 << 112) | g).compressed)
    return 0


def main():
    ap = argparse.ArgumentParser(prog="vm_check.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("walk")
    p.add_argument("--topo", required=True)
    p.add_argument("--lfts", required=True)
    p.add_argument("--lid", type=int, required=True)
    p.add_argument("--expect", required=True)
    p = sub.add_parser("node")
    p.add_argument("--topo", required=True)
    p.add_argument("name")
    p = sub.add_parser("idle")
    p.add_argument("--topo", required=True)
    p.add_argument("--links", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("gid")
    p.add_argument("guid")
    a = ap.parse_args()
    try:
        return {"walk": cmd_walk, "node": cmd_node, "idle": cmd_idle,
                "gid": cmd_gid}[a.cmd](a)
    except (cf.InputError, OSError) as e:
        print("vm_check.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
