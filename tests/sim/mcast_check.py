#!/usr/bin/env python3
"""mcast_check.py: judge the multicast trees from infiniband-diags output
alone (tests/sim/t_mcast*.sh; ibnetdiscover's parser from check_fabric.py),
never from the SM's own view.

    mcast_check.py check --topo T --mft F [--mft F...]
                   --group MLID=MEMBER,... [--group ...]
                   [--send-only MLID=MEMBER,...] [--ignore-others]
        T is `ibnetdiscover` output, F the `ibroute -M SWITCH` (or
        `ibroute -M -n`) output of every switch, concatenated.  A MEMBER
        is a CA's node description (H-3, port 1; H-3[2] for port 2), a
        switch's (its port 0) or a port GUID (0x...).  Per MLID, the
        switches whose MFT holds it must form one loop-free tree: every
        port in a mask is cabled; a switch port toward another switch is
        in both switches' masks; the switches are connected and number
        one more than their links; a switch at the end of a branch
        delivers to someone.  The end ports the masks deliver to are
        exactly the MEMBERs (a group of one member may have no entries:
        the member has no one to send to).  A send-only MEMBER's switch
        must be on the tree, its own port may be in a mask or not.
        Every switch of T must have a dump in F; an MLID in F that no
        --group names is an error unless --ignore-others (an empty
        --group MLID= says the MLID must be in no MFT).
        Prints one line per MLID; exit 0 when all is well, 1 with the
        problems, 2 when an input cannot be read.
    mcast_check.py blocks BEFORE AFTER
        the MFT blocks that differ between two such dumps (the F files of
        two runs): one "SWITCH_GUID BLOCK POSITION" line each, then their
        count -- what an SM that writes only changed blocks sends
        (BLOCK = (MLID - 0xC000) / 32, POSITION = port / 16)
    mcast_check.py ports --topo T --mft F --switch NAME --mlid MLID
        the ports in switch NAME's mask for MLID, one a line
    mcast_check.py selftest
        the checks above on hand-made ibroute -M text of a 4-switch
        fabric with a cycle (a good tree; a loop; a non-member port; a
        missing member; a one-way link; a dead branch; a switch without
        a dump; -n format): exit 1 unless every verdict is the expected
        one.
"""

import argparse
import io
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fabric as cf  # noqa: E402

RE_HEAD = re.compile(r'^Multicast mlids \[0x[0-9a-fA-F]+-0x[0-9a-fA-F]+\] of switch '
                     r'.* guid (0x[0-9a-fA-F]+) \(.*\):\s*$')
RE_ENTRY = re.compile(r'^0x([0-9a-fA-F]{4})      (.*)$')


def parse_mft(paths):
    """-> {switch guid: {mlid: set of ports}} from ibroute -M [-n] text."""
    mfts = {}
    for path in paths:
        sw, brief = None, False
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip("\n")
                m = RE_HEAD.match(line)
                if m:
                    sw = int(m.group(1), 16)
                    mfts.setdefault(sw, {})
                    brief = False
                    continue
                if line.startswith(" MLid"):
                    brief = "Port Mask" in line
                    continue
                m = RE_ENTRY.match(line)
                if not m:
                    continue
                if sw is None:
                    raise cf.InputError("%s:%d: an MFT entry before any switch"
                                        % (path, lineno))
                mlid, cells = int(m.group(1), 16), m.group(2)
                ports = set()
                if brief:
                    cells = cells.strip()
                    if not re.fullmatch(r'([0-9a-fA-F]{4})+', cells):
                        raise cf.InputError("%s:%d: bad port mask %r"
                                            % (path, lineno, cells))
                    for chunk in range(len(cells) // 4):
                        mask = int(cells[4 * chunk:4 * chunk + 4], 16)
                        ports |= {16 * chunk + b for b in range(16) if mask >> b & 1}
                else:
                    ports = {i // 2 for i in range(0, len(cells), 2) if cells[i] == "x"}
                if ports:
                    mfts[sw][mlid] = ports
    return mfts


def member_port(topo, text):
    """-> (node guid, port) of a MEMBER: a name, NAME[port] or a port GUID."""
    m = re.fullmatch(r'(.+?)(?:\[(\d+)\])?', text)
    name, port = m.group(1), m.group(2)
    if re.fullmatch(r'0x[0-9a-fA-F]+', name) and port is None:
        g = int(name, 16)
        for key, pg in topo.portguid.items():
            if pg == g:
                return key
        if g in topo.nodes and topo.nodes[g]["type"] == "SW":
            return (g, 0)
        raise cf.InputError("no port with GUID %s in the topology" % name)
    for guid, node in topo.nodes.items():
        if node["desc"] == name:
            if node["type"] == "SW":
                return (guid, 0)
            return (guid, int(port) if port else 1)
    raise cf.InputError("no node named %s in the topology" % name)


def groups_arg(topo, items):
    out = {}
    for item in items or []:
        mlid, _, members = item.partition("=")
        try:
            mlid = int(mlid, 0)
        except ValueError:
            raise cf.InputError("bad MLID in %r" % item)
        out.setdefault(mlid, set()).update(
            member_port(topo, x) for x in members.split(",") if x)
    return out


def check_mlid(topo, mfts, mlid, members, send_only):
    """-> (summary, [problems]) for one MLID."""
    probs = []
    on = {sw: t[mlid] for sw, t in mfts.items() if mlid in t}
    delivered, edges = set(), set()
    for sw, ports in sorted(on.items()):
        for p in sorted(ports):
            if p == 0:
                delivered.add((sw, 0))
                continue
            peer = topo.links.get((sw, p))
            if peer is None:
                probs.append("%s: port %d is in the mask but not cabled"
                             % (topo.name(sw), p))
            elif topo.nodes[peer[0]]["type"] == "SW":
                if peer[1] not in on.get(peer[0], ()):
                    probs.append("%s -> %s: one-way link (not in the peer's mask)"
                                 % (topo.name(sw, p), topo.name(*peer)))
                else:
                    edges.add(tuple(sorted([(sw, p), peer])))
            else:
                delivered.add(peer)
    # loop-free and connected: union-find over the mutual links
    parent = {sw: sw for sw in on}

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for (a, pa), (b, pb) in sorted(edges):
        ra, rb = root(a), root(b)
        if ra == rb:
            probs.append("loop: %s -- %s closes a cycle"
                         % (topo.name(a, pa), topo.name(b, pb)))
        else:
            parent[ra] = rb
    parts = {root(sw) for sw in on}
    if len(parts) > 1:
        probs.append("the tree is in %d pieces" % len(parts))
    degree = {sw: 0 for sw in on}
    for (a, _), (b, _) in edges:
        degree[a] += 1
        degree[b] += 1
    for sw in sorted(on):
        if degree[sw] <= 1 and not any(d[0] == sw or
                                       topo.links.get(d) and topo.links[d][0] == sw
                                       for d in delivered):
            probs.append("%s: a branch that delivers to no one" % topo.name(sw))
    empty_ok = len(members) <= 1 and not on
    if not empty_ok:
        for m in sorted(members - delivered):
            probs.append("member %s is not reached" % topo.name(*m))
    for d in sorted(delivered - members - send_only):
        probs.append("sends to %s, not a member" % topo.name(*d))
    for s in sorted(send_only):
        sw = s[0] if s[1] == 0 else topo.links.get(s, (None,))[0]
        if (members - {s}) and sw not in on:
            probs.append("send-only %s: its switch is not on the tree" % topo.name(*s))
    summary = ("mlid 0x%04x: %d switches, %d links, %d end ports, %d members"
               % (mlid, len(on), len(edges), len(delivered), len(members)))
    return summary, probs


def run_check(a):
    topo = cf.parse_topo(a.topo)
    mfts = parse_mft(a.mft)
    groups = groups_arg(topo, a.group)
    send_only = groups_arg(topo, a.send_only)
    probs = []
    for sw, node in sorted(topo.nodes.items()):
        if node["type"] == "SW" and sw not in mfts:
            probs.append("%s: no ibroute -M dump" % topo.name(sw))
    seen = {mlid for t in mfts.values() for mlid in t}
    for mlid in sorted(seen - set(groups) - set(send_only)):
        if not a.ignore_others:
            probs.append("mlid 0x%04x is in the MFTs of %d switches, no group names it"
                         % (mlid, sum(mlid in t for t in mfts.values())))
    for mlid in sorted(set(groups) | set(send_only)):
        summary, p = check_mlid(topo, mfts, mlid, groups.get(mlid, set()),
                                send_only.get(mlid, set()))
        print("%s: %s" % (summary, "ok" if not p else "%d problems" % len(p)))
        probs += ["mlid 0x%04x: %s" % (mlid, x) for x in p]
    for p in probs:
        print("FAIL " + p)
    return 1 if probs else 0


def cmd_blocks(a):
    before, after = parse_mft([a.before]), parse_mft([a.after])

    def blocks(mfts):
        out = {}
        for sw, t in mfts.items():
            for mlid, ports in t.items():
                for p in ports:
                    key = (sw, (mlid - 0xc000) // 32, p // 16)
                    out.setdefault(key, set()).add((mlid, p))
        return out
    b0, b1 = blocks(before), blocks(after)
    changed = sorted(k for k in set(b0) | set(b1) if b0.get(k) != b1.get(k))
    for sw, block, pos in changed:
        print("0x%016x %d %d" % (sw, block, pos))
    print(len(changed))
    return 0


def cmd_ports(a):
    topo = cf.parse_topo(a.topo)
    sw = member_port(topo, a.switch)[0]
    for p in sorted(parse_mft(a.mft).get(sw, {}).get(int(a.mlid, 0), ())):
        print(p)
    return 0


# ---- selftest: hand-made ibroute -M text ----

SELF_TOPO = """\
Switch	4 "S-0002c90100000000"		# "L0" base port 0 lid 1 lmc 0
[1]	"H-0002c90200000000"[1](2c90200000001) 		# "H-0" lid 5 4xSDR
[2]	"H-0002c90200000004"[1](2c90200000005) 		# "H-1" lid 6 4xSDR
[3]	"S-0002c90100000002"[1]		# "S0" lid 3 4xSDR
[4]	"S-0002c90100000003"[1]		# "S1" lid 4 4xSDR

Switch	4 "S-0002c90100000001"		# "L1" base port 0 lid 2 lmc 0
[1]	"H-0002c90200000008"[1](2c90200000009) 		# "H-2" lid 7 4xSDR
[2]	"H-0002c9020000000c"[1](2c9020000000d) 		# "H-3" lid 8 4xSDR
[3]	"S-0002c90100000002"[2]		# "S0" lid 3 4xSDR
[4]	"S-0002c90100000003"[2]		# "S1" lid 4 4xSDR

Switch	4 "S-0002c90100000002"		# "S0" base port 0 lid 3 lmc 0
[1]	"S-0002c90100000000"[3]		# "L0" lid 1 4xSDR
[2]	"S-0002c90100000001"[3]		# "L1" lid 2 4xSDR

Switch	4 "S-0002c90100000003"		# "S1" base port 0 lid 4 lmc 0
[1]	"S-0002c90100000000"[4]		# "L0" lid 1 4xSDR
[2]	"S-0002c90100000001"[4]		# "L1" lid 2 4xSDR

Ca	1 "H-0002c90200000000"		# "H-0"
[1](2c90200000001) 	"S-0002c90100000000"[1]		# lid 5 lmc 0 "L0" lid 1 4xSDR

Ca	1 "H-0002c90200000004"		# "H-1"
[1](2c90200000005) 	"S-0002c90100000000"[2]		# lid 6 lmc 0 "L0" lid 1 4xSDR

Ca	1 "H-0002c90200000008"		# "H-2"
[1](2c90200000009) 	"S-0002c90100000001"[1]		# lid 7 lmc 0 "L1" lid 2 4xSDR

Ca	1 "H-0002c9020000000c"		# "H-3"
[1](2c9020000000d) 	"S-0002c90100000001"[2]		# lid 8 lmc 0 "L1" lid 2 4xSDR
"""
SELF_SW = {"L0": 0, "L1": 1, "S0": 2, "S1": 3}


def render(masks, brief):
    """ibroute -M text of the 4 switches; masks: {switch: {mlid: ports}}."""
    out = []
    for name, n in SELF_SW.items():
        out.append("Multicast mlids [0xc000-0xc3ff] of switch Lid %d guid "
                   "0x%016x (%s):" % (n + 1, 0x0002c90100000000 + n, name))
        out.append(" MLid       Port Mask" if brief else
                   "     Ports: 0 1 2 3 4 \n MLid")
        rows = masks.get(name, {})
        for mlid in sorted(rows):
            ports = rows[mlid]
            cells = ("%04x" % sum(1 << p for p in ports) if brief else
                     "".join("x " if p in ports else "  " for p in range(5)))
            out.append("0x%04x      %s" % (mlid, cells))
        out.append("%d valid mlids dumped " % len(rows))
    return "\n".join(out) + "\n"


def captured(fn, argv):
    """-> (fn's exit status, what it printed) for argv."""
    real, sys.stdout = sys.stdout, io.StringIO()
    try:
        rc = fn(parse_args(argv))
        return rc, sys.stdout.getvalue()
    finally:
        sys.stdout = real


def selftest():
    good = {"L0": {0xc000: {1, 3}}, "S0": {0xc000: {1, 2}}, "L1": {0xc000: {1, 3}}}
    cases = [
        ("a tree to H-0 and H-2", good, ["0xc000=H-0,H-2"], [], 0),
        ("the same, ibroute -n", good, ["0xc000=H-0,H-2"], ["-n"], 0),
        ("members by port GUID", good, ["0xc000=0x0002c90200000001,0x0002c90200000009"], [], 0),
        ("a loop through S1", {"L0": {0xc000: {1, 3, 4}}, "S0": {0xc000: {1, 2}},
                               "S1": {0xc000: {1, 2}}, "L1": {0xc000: {1, 3, 4}}},
         ["0xc000=H-0,H-2"], [], "closes a cycle"),
        ("H-1 is not a member", {**good, "L0": {0xc000: {1, 2, 3}}},
         ["0xc000=H-0,H-2"], [], "H-1 (0x0002c90200000004) port 1, not a member"),
        ("H-3 is not reached", good, ["0xc000=H-0,H-2,H-3"], [], "member H-3 (0x0002c9020000000c) port 1 is not reached"),
        ("one-way S0 -> L1", {**good, "L1": {0xc000: {1}}}, ["0xc000=H-0,H-2"], [], "one-way link"),
        ("a dead branch to S1", {**good, "S1": {0xc000: {1}},
                                 "L0": {0xc000: {1, 3, 4}}}, ["0xc000=H-0,H-2"], [], "S1 (0x0002c90100000003): a branch that delivers to no one"),
        ("an MLID nobody named", {**good, "L1": {0xc000: {1, 3}, 0xc001: {2}}},
         ["0xc000=H-0,H-2"], [], "mlid 0xc001 is in the MFTs of 1 switches"),
        ("... unless --ignore-others", {**good, "L1": {0xc000: {1, 3}, 0xc001: {2}}},
         ["0xc000=H-0,H-2"], ["--ignore-others"], 0),
        ("one member, no entries", {}, ["0xc000=H-0"], [], 0),
        ("a left group must be gone", good, ["0xc000="], [], "sends to H-0"),
        ("S1 without a dump", good, ["0xc000=H-0,H-2"], ["no-S1"], "S1 (0x0002c90100000003): no ibroute -M dump"),
        ("send-only H-3, its switch L1 on the tree", good, ["0xc000=H-0,H-2"],
         ["--send-only=0xc000=H-3"], 0),
        ("send-only H-2 off the tree", {"L0": {0xc000: {1, 2}}}, ["0xc000=H-0,H-1"],
         ["--send-only=0xc000=H-2"], "send-only H-2 (0x0002c90200000008) port 1: its switch is not on the tree"),
    ]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        topo = os.path.join(d, "topo")
        with open(topo, "w") as f:
            f.write(SELF_TOPO)
        for name, masks, groups, flags, want in cases:
            text = render(masks, "-n" in flags)
            if "no-S1" in flags:
                text = text.split("Multicast mlids [0xc000-0xc3ff] of switch Lid 4")[0]
            mft = os.path.join(d, "mft")
            with open(mft, "w") as f:
                f.write(text)
            argv = ["check", "--topo", topo, "--mft", mft]
            argv += [x for g in groups for x in ("--group", g)]
            argv += [x for x in flags if x == "--ignore-others"]
            argv += [x for f in flags if f.startswith("--send-only=")
                     for x in ("--send-only", f.split("=", 1)[1])]
            got, said = captured(run_check, argv)
            # a failure must be the one the case is about
            fails = [x for x in said.splitlines() if x.startswith("FAIL ")]
            ok = got == 0 if not want else got == 1 and any(want in x for x in fails)
            bad += not ok
            print("%s: %s (exit %d%s)" % ("ok" if ok else "WRONG", name, got,
                                         ", " + repr(want) if want else ""))
            if not ok:
                print(said, end="")
        # blocks: L0 gains port 2 of 0xc000 (block 0), S0 gets 0xc021 (block 1)
        later = {**good, "L0": {0xc000: {1, 2, 3}}, "S0": {0xc000: {1, 2}, 0xc021: {1}}}
        paths = []
        for i, masks in enumerate((good, later)):
            paths.append(os.path.join(d, "b%d" % i))
            with open(paths[-1], "w") as f:
                f.write(render(masks, False))
        said = captured(cmd_blocks, ["blocks"] + paths)[1].split("\n")
        want = ["0x0002c90100000000 0 0", "0x0002c90100000002 1 0", "2", ""]
        ok = said == want
        bad += not ok
        cases.append(None)
        print("%s: blocks: 2 changed blocks (%s)" % ("ok" if ok else "WRONG", said))
    print("selftest: %d of %d verdicts right" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--topo", required=True)
    c.add_argument("--mft", action="append", required=True)
    c.add_argument("--group", action="append")
    c.add_argument("--send-only", action="append")
    c.add_argument("--ignore-others", action="store_true")
    b = sub.add_parser("blocks")
    b.add_argument("before")
    b.add_argument("after")
    p = sub.add_parser("ports")
    p.add_argument("--topo", required=True)
    p.add_argument("--mft", action="append", required=True)
    p.add_argument("--switch", required=True)
    p.add_argument("--mlid", required=True)
    sub.add_parser("selftest")
    return ap.parse_args(argv)


def main(argv):
    a = parse_args(argv)
    try:
        return {"check": run_check, "blocks": cmd_blocks, "ports": cmd_ports,
                "selftest": lambda _: selftest()}[a.cmd](a)
    except (cf.InputError, OSError) as e:
        print("mcast_check: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
