#!/usr/bin/env python3
"""By hand, no ibsim (a few minutes): the vSwitch paper's Fig. 8 study.

`ibsmd --offline --migrate-pattern` with vswitch-ftree on Table 4's six
XGFTs (hypervisors of 4 VFs, tests/gen/fabgen.py xgft --vfs 4), the 21
simulations of each (random initial placement: the four patterns at 25,
50 and 75%; uniform: random, consolidate and grouping), seed 1.  Prints
the Markdown tables of tests/RESULTS.md's Fig. 8 section: switches
written per migration (Fig. 8(a)) beside the worst-case marking of
Table 4, and FTreeMinRC's bisection quality against a fresh routing for
the panels (b)-(h).  Usage: tests/sim/fig8_table.py [BUILD/ibsmd] [SEED]
"""

import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FABGEN = os.path.join(ROOT, "tests", "gen", "fabgen.py")

# name, paper's XGFT, fabgen's (Ohring) --m and --w, worst-case marking
TABLE4 = [
    ("4-ary-2-full", "XGFT(2;8,4;4,1)", "4,8", "1,4", 6, 12),
    ("8-ary-2", "XGFT(2;8,8;8,1)", "8,8", "1,8", 10, 16),
    ("4-ary-3-full", "XGFT(3;8,4,4;4,4,1)", "4,4,8", "1,4,4", 26, 80),
    ("16-ary-2", "XGFT(2;16,16;16,1)", "16,16", "1,16", 18, 32),
    ("8-ary-3", "XGFT(3;8,8,8;8,8,1)", "8,8,8", "1,8,8", 82, 192),
    ("8-ary-3-full", "XGFT(3;16,8,8;8,8,1)", "8,8,16", "1,8,8", 82, 320),
]
RUNS = [("random", p, pop) for p in ("random", "consolidate", "grouping", "to-uniform")
        for pop in (25, 50, 75)] + \
       [("uniform", p, pop) for p in ("random", "consolidate", "grouping")
        for pop in (25, 50, 75)]
# Fig. 8's panels: (initial, pattern, population)
PANELS = [("b", "random", "grouping", 25), ("c", "random", "to-uniform", 25),
          ("d", "uniform", "random", 25), ("e", "random", "consolidate", 50),
          ("f", "uniform", "consolidate", 50), ("g", "random", "to-uniform", 75),
          ("h", "uniform", "random", 75)]
POLICY = ("virtualization:\n  lid_scheme: dynamic\n  vswitches: [\"V-*\"]\n"
          "routing:\n  engine: vswitch-ftree\n")


def kv(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def run(ibsmd, tmp, net, initial, pattern, pop, seed):
    out = subprocess.run(
        [ibsmd, "-c", os.path.join(tmp, "p.yaml"), "-S", tmp, "--offline", net,
         "--migrate-pattern", pattern, "--population", str(pop),
         "--initial", initial, "--seed", str(seed)],
        check=True, capture_output=True, text=True).stdout.splitlines()
    migs = [kv(l) for l in out if l.startswith("migration:")]
    quals = [kv(l) for l in out if l.startswith("quality:")]
    summ = kv([l for l in out if l.startswith("migpattern:")][0])
    return migs, quals, summ


def main(argv):
    ibsmd = argv[1] if len(argv) > 1 else os.path.join(ROOT, "build", "ibsmd")
    seed = int(argv[2]) if len(argv) > 2 else 1
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "p.yaml"), "w") as f:
            f.write(POLICY)
        for name, _, m, w, _, _ in TABLE4:
            net = os.path.join(tmp, name + ".net")
            subprocess.run([sys.executable, FABGEN, "xgft", "--m", m, "--w", w,
                            "--vfs", "4", "-o", net], check=True,
                           stderr=subprocess.DEVNULL)
            for initial, pattern, pop in RUNS:
                res[(name, initial, pattern, pop)] = run(
                    ibsmd, tmp, net, initial, pattern, pop, seed)
                print("done %s %s->%s %d%%" % (name, initial, pattern, pop),
                      file=sys.stderr)

    print("Switches written per migration, all 21 simulations of a topology "
          "(seed %d), Fig. 8(a):\n" % seed)
    print("| topology | XGFT (paper) | nodes/switches | migrations | ItRC mean | ItRC max "
          "| FTreeMinRC mean | FTreeMinRC max | Table 4 worst case | reached | "
          "migrations at it |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, xg, m, w, worst, nsw in TABLE4:
        it, ft, marked = [], [], 0
        for initial, pattern, pop in RUNS:
            migs, _, summ = res[(name, initial, pattern, pop)]
            it += [int(x["itrc"]) for x in migs]
            ft += [int(x["ftreeminrc"]) for x in migs]
            marked = max(marked, int(summ["marked_max"]))
            nodes = int(summ["hypervisors"])
        at = sum(1 for x in ft if x == worst)
        print("| %s | %s | %d/%d | %d | %.1f | %d | %.1f | %d | %d/%d | %s | %d |"
              % (name, xg, nodes, nsw, len(it), sum(it) / len(it), max(it),
                 sum(ft) / len(ft), max(ft), worst, nsw,
                 "**yes**" if max(ft) == worst and marked == worst else
                 "no (max %d, marked %d)" % (max(ft), marked), at))

    print("\nBisection quality, FTreeMinRC / fresh vswitch-ftree on the same "
          "placement, after the last migration (lowest over the 10% snapshots "
          "in brackets; ItRC's final ratio after the slash), Fig. 8(b)-(h):\n")
    print("| panel | scenario | population | " +
          " | ".join(t[0] for t in TABLE4) + " |")
    print("|---|---|---|" + "---|" * len(TABLE4))
    for panel, initial, pattern, pop in PANELS:
        cells = []
        for name, *_ in TABLE4:
            _, quals, summ = res[(name, initial, pattern, pop)]
            ratios = [float(q["ftreeminrc"]) / float(q["fresh"]) for q in quals]
            last = quals[-1]
            cells.append("%.3f (%.3f) / %.3f" % (
                ratios[-1], min(ratios),
                float(last["itrc"]) / float(last["fresh"])))
        print("| (%s) | %s→%s | %d%% | %s |" % (panel, initial, pattern, pop,
                                             " | ".join(cells)))

    print("\nFresh vswitch-ftree quality at 0% and after the last migration "
          "(the panels' absolute level):\n")
    print("| panel | " + " | ".join(t[0] for t in TABLE4) + " |")
    print("|---|" + "---|" * len(TABLE4))
    for panel, initial, pattern, pop in PANELS:
        cells = []
        for name, *_ in TABLE4:
            _, quals, _ = res[(name, initial, pattern, pop)]
            cells.append("%.3f → %.3f" % (float(quals[0]["fresh"]),
                                           float(quals[-1]["fresh"])))
        print("| (%s) | %s |" % (panel, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
