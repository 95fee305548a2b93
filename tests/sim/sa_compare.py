#!/usr/bin/env python3
"""Compares two SAs' saquery answers (t_sarecords.sh): OPENSM IBSMD TYPES.

Each file holds "### QUESTION" lines, each followed by saquery's answer.
The answers are cut into records and compared after the named
normalisations (NORMS: what is legitimately different), each counted
when it made two answers equal.  Exit 1 with the differences; else one summary line.
"""
import re
import sys


def blocks(path):
    out, key = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("### "):
            key = line[4:]
            out[key] = []
        elif key is not None:
            out[key].append(line.strip())
    return out


EMBEDDED = ("PortInfo dump:", "SMInfo dump:", "SwitchInfo dump:")


def records(lines):
    """The answer cut into records (a line ending in 'dump:' starts one)."""
    recs, cur = [], None
    for l in lines:
        if (l.endswith("dump:") and l not in EMBEDDED) or cur is None:
            cur = [l]
            recs.append(cur)
        else:
            cur.append(l)
    return recs


def field(rec, name):
    for l in rec:
        m = re.match(r"^%s\.*(.*)$" % re.escape(name), l)
        if m:
            return m.group(1)
    return None


def swap16(v):
    return ((v & 0xff) << 8) | (v >> 8)


def sub(recs, pat, rep):
    return [[re.sub(pat, rep, l) for l in r] for r in recs]


# ---- legitimately different (t_sarecords.sh's header says why) ----

def n_actcount(t, side, recs):
    return sub(recs, r"^(ActCount\.+).*", r"\1N") if t == "SMIR" else recs


def n_cpi(t, side, recs):
    if t != "ClassPortInfo":
        return recs
    return sub(recs, r"^(Capability mask( 2)?\.+).*", r"\1N")


def n_pkt_life(t, side, recs):
    return sub(recs, r"^(pkt_life\.+).*", r"\1N") if t == "PR" else recs


def n_pktr_block(t, side, recs):
    if t != "PKTR" or side != "ibsmd":
        return recs
    return sub(recs, r"^(Block\.+)(\d+)$",
               lambda m: m.group(1) + str(swap16(int(m.group(2)))))


def n_sl2vl_cut(t, side, recs):
    if t != "SL2VL" or len(recs) != 12:
        return recs
    return recs[:11] + [[l for l in recs[11] if not l.startswith("VL:")]]

NORMS = [("actcount", n_actcount), ("cpi", n_cpi), ("pkt-life", n_pkt_life),
         ("pktr-block", n_pktr_block), ("sl2vl-cut", n_sl2vl_cut)]


def main():
    osm, ibs = blocks(sys.argv[1]), blocks(sys.argv[2])
    types = list(dict.fromkeys(l.split()[0] for l in sys.argv[3].splitlines() if l.strip()))
    if sorted(osm) != sorted(ibs):
        print("questions differ:", sorted(set(osm) ^ set(ibs)))
        return 1
    bad, used, per = 0, {}, {}
    for key in osm:
        t = key.split()[0]
        a, b = records(osm[key]), records(ibs[key])
        per[t] = per.get(t, 0) + sum(
            1 for r in a if r[0].endswith("dump:") or r[0].startswith("SA ClassPortInfo"))
        for name, fn in NORMS:
            na, nb = fn(t, "osm", a), fn(t, "ibsmd", b)
            if a != b and na == nb:
                used[name] = used.get(name, 0) + 1
            a, b = na, nb
        if a != b:
            bad += 1
            fa, fb = sum(a, []), sum(b, [])
            print("=== %s: OpenSM | ibsmd" % key)
            for i in range(max(len(fa), len(fb))):
                x = fa[i] if i < len(fa) else "<none>"
                y = fb[i] if i < len(fb) else "<none>"
                if x != y:
                    print("  %-50s | %s" % (x, y))
    if bad:
        print("%d of %d answers differ" % (bad, len(osm)))
        return 1
    print("%d questions; records per type: %s; equal only after: %s" % (
        len(osm), " ".join("%s=%d" % (t, per.get(t, 0)) for t in types),
        " ".join("%s=%d" % kv for kv in sorted(used.items())) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
