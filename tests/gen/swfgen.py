#!/usr/bin/env python3
"""swfgen: synthetic job traces in the Standard Workload Format (SWF),
shaped like the three systems of Table I of Lee et al., "Enhancing
InfiniBand with OpenFlow-Style SDN Capability", for `ibsmd --offline
TOPO --jobs TRACE` (ibsmd(8)) where the Parallel Workloads Archive's
logs are not at hand:

    system    nodes  CPUs/node  utilisation  character
    curie      5904          2        29.3%  general purpose
    thunder    1024          4        87.9%  capacity: small and medium jobs
    atlas      1152          8        64.1%  capability: large jobs

    swfgen.py --system curie|thunder|atlas [--jobs 1200] [--seed 1]
              [--nodes N] [--cpus C] [--util U] [-o FILE]

Job sizes (nodes) come from a per-system mix skewed to small jobs with
some large ones (SIZE_MIX below: a share of single-node jobs, the rest
log-uniform within bands, most rounded to a power of two); run times
log-uniform from a minute to a day, longer for larger jobs.  Arrivals are
a Poisson process whose rate is tuned (a few rounds) until the trace's
utilisation -- node-seconds over nodes times the span from the first
start to the last end -- is the target; jobs then start by conservative backfilling on a node
count alone (placement is the replay's allocator's): in submit order,
each at the earliest time enough nodes are free for its whole run, so the
trace never runs more nodes than the system has.  About 2% extra records are ones the replay's filter drops (status
-1, or run time 0).  Processors = nodes * CPUs/node, some a little fewer
(ceil(processors / CPUs) gives the nodes back).  Deterministic for a seed.
The achieved utilisation of the kept jobs is written in the header and to
stderr.
"""

import argparse
import bisect
import math
import random
import sys

SYSTEMS = {
    #           nodes, CPUs/node, utilisation
    "curie": (5904, 2, 0.293),
    "thunder": (1024, 4, 0.879),
    "atlas": (1152, 8, 0.641),
}

# (share, lowest nodes, highest nodes as a fraction of the system);
# the first band is the single-node jobs.
SIZE_MIX = {
    "curie": [(0.30, 1, 0), (0.40, 2, 16 / 5904), (0.20, 17, 128 / 5904),
              (0.08, 129, 1024 / 5904), (0.02, 1025, 0.7)],
    "thunder": [(0.40, 1, 0), (0.35, 2, 16 / 1024), (0.18, 17, 128 / 1024),
                (0.06, 129, 512 / 1024), (0.01, 513, 1.0)],
    "atlas": [(0.15, 1, 0), (0.25, 2, 16 / 1152), (0.30, 17, 128 / 1152),
              (0.25, 129, 512 / 1152), (0.05, 513, 1.0)],
}
POW2_SHARE = 0.6          # sizes rounded to a power of two
FEWER_PROCS_SHARE = 0.3   # processors a little below nodes * CPUs
DROPPED_SHARE = 0.02      # records the filter drops
RUN_MIN, RUN_MAX = 60, 86400
CALIBRATE_ROUNDS = 8
CALIBRATE_TOLERANCE = 0.005


def job_size(rng, mix, nodes):
    r = rng.random()
    for share, lo, hi in mix:
        if r < share:
            break
        r -= share
    if lo == 1 and hi == 0:
        return 1
    lo = min(lo, nodes)   # a smaller --nodes: the bands shrink with it
    hi = max(lo, min(nodes, int(hi * nodes)))
    n = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
    if rng.random() < POW2_SHARE:
        p = 2 ** int(round(math.log2(n)))
        if lo <= p <= hi:
            n = p
    return max(lo, min(hi, n))


def run_time(rng, size, nodes):
    # larger jobs run longer: the low end rises with the size
    lo = RUN_MIN * (1 + 30 * size / nodes)
    return int(math.exp(rng.uniform(math.log(lo), math.log(RUN_MAX))))


def schedule(jobs, nodes):
    """Conservative backfilling on a node count: in submit order, each
    job starts at the earliest time >= its submit when enough nodes are
    free for its whole run, given the jobs placed before it (ends free
    their nodes at their end time, before any start then)."""
    times = [0]           # step function: free[i] nodes from times[i] on
    free = [nodes]
    for j in jobs:
        need, run = j["nodes"], j["run"]
        i = max(0, bisect.bisect_right(times, j["submit"]) - 1)
        while True:
            t = max(times[i], j["submit"])
            k = i
            while k < len(times) and times[k] < t + run and free[k] >= need:
                k += 1
            if k == len(times) or times[k] >= t + run:
                break
            i = k + 1     # free[k] too low: try after that step
        for edge in (t, t + run):
            p = bisect.bisect_right(times, edge) - 1
            if times[p] != edge:
                times.insert(p + 1, edge)
                free.insert(p + 1, free[p])
        a = bisect.bisect_left(times, t)
        b = bisect.bisect_left(times, t + run)
        for q in range(a, b):
            free[q] -= need
        j["start"] = t


def generate(system, n_jobs, seed, nodes=None, cpus=None, util=None):
    d_nodes, d_cpus, d_util = SYSTEMS[system]
    nodes = nodes or d_nodes
    cpus = cpus or d_cpus
    util = util or d_util
    rng = random.Random(seed)
    mix = SIZE_MIX[system]
    jobs = []
    for _ in range(n_jobs):
        size = job_size(rng, mix, nodes)
        jobs.append({"nodes": size, "run": run_time(rng, size, nodes)})
    work = sum(j["nodes"] * j["run"] for j in jobs)
    gaps = [rng.expovariate(1.0) for _ in jobs]
    rate = util * nodes * n_jobs / work   # arrivals per second
    # the queue and the last jobs' drain lower what a rate gives: the
    # rate is corrected a few times towards the target
    for _ in range(CALIBRATE_ROUNDS):
        t = 0.0
        for j, g in zip(jobs, gaps):
            t += g / rate
            j["submit"] = int(t)
        schedule(jobs, nodes)
        first = min(j["start"] for j in jobs)
        last = max(j["start"] + j["run"] for j in jobs)
        achieved = work / (nodes * max(1, last - first))
        if abs(achieved - util) < CALIBRATE_TOLERANCE:
            break
        rate *= util / achieved
    # the records the filter drops, among the others by submit time
    out = [dict(j, status=1) for j in jobs]
    for j in rng.sample(jobs, max(1, int(DROPPED_SHARE * n_jobs))):
        gone = dict(j, status=-1 if rng.random() < 0.5 else 0, run=0)
        gone["start"] = gone["submit"]
        out.append(gone)
    out.sort(key=lambda j: (j["submit"], j["status"] != 1))
    return out, nodes, cpus, util, achieved


def render(out, system, nodes, cpus, util, achieved, seed, argv):
    lines = [
        "; Version: 2.2",
        "; Computer: synthetic, shaped like %s (Table I)" % system,
        "; Note: generated by swfgen.py %s" % " ".join(argv),
        "; MaxNodes: %d" % nodes,
        "; MaxProcs: %d" % (nodes * cpus),
        "; Note: target utilisation %.1f%%, achieved %.1f%% (seed %d)"
        % (100 * util, 100 * achieved, seed),
    ]
    rng = random.Random(seed + 1)
    for i, j in enumerate(out, 1):
        procs = j["nodes"] * cpus
        if cpus > 1 and rng.random() < FEWER_PROCS_SHARE:
            procs -= rng.randrange(cpus)
        wait = j["start"] - j["submit"]
        f = [i, j["submit"], wait, j["run"], procs, -1, -1, procs, -1, -1,
             j["status"], 1 + i % 97, 1 + i % 13, -1, 1, -1, -1, -1]
        lines.append(" ".join(str(x) for x in f))
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--system", required=True, choices=sorted(SYSTEMS))
    ap.add_argument("--jobs", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--cpus", type=int)
    ap.add_argument("--util", type=float)
    ap.add_argument("-o", dest="output")
    a = ap.parse_args(argv)
    if a.jobs < 1 or (a.nodes is not None and a.nodes < 1) or \
            (a.cpus is not None and a.cpus < 1) or \
            (a.util is not None and not 0 < a.util <= 1):
        print("swfgen: --jobs, --nodes, --cpus >= 1, 0 < --util <= 1",
              file=sys.stderr)
        return 2
    out, nodes, cpus, util, achieved = generate(a.system, a.jobs, a.seed,
                                                a.nodes, a.cpus, a.util)
    text = render(out, a.system, nodes, cpus, util, achieved, a.seed, argv)
    if a.output:
        with open(a.output, "w") as fp:
            fp.write(text)
    else:
        sys.stdout.write(text)
    print("swfgen: %s: %d records, %d nodes, %d CPUs/node, utilisation "
          "%.1f%% (target %.1f%%)" % (a.system, len(out), nodes, cpus,
                                      100 * achieved, 100 * util),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
