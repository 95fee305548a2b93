#!/usr/bin/env python3
"""emuflow scenarios of the dFtree paper's simulation: every host of a
tree sends 5% of its load to its group's hot-spot and 95% spread over K
random other hosts (one flow each); HOTSPOTS groups of equal size, the
first host of each the hot-spot.  --slow puts every flow to a hot-spot
on SL 1 from the start (the paper's best case, as its generator did; a
host moves all its QPs to a hot-spot's LID).

--dftree END: the SM's dFtree loop moves them instead, the scenario
running END seconds (of wall clock, emuflow's "dftree").

  hotspots.py --hosts 648 --prefix H- --hotspots 3 --gbps 8 \
      [--slow | --dftree END] > s.json
"""
import argparse
import json
import random

ap = argparse.ArgumentParser()
ap.add_argument('--hosts', type=int, required=True)
ap.add_argument('--prefix', default='H-')
ap.add_argument('--hotspots', type=int, required=True)
ap.add_argument('--gbps', type=float, required=True, help='each host\'s load')
ap.add_argument('--k', type=int, default=8, help='uniform flows a host')
ap.add_argument('--seed', type=int, default=1)
ap.add_argument('--slow', action='store_true')
ap.add_argument('--dftree', type=int, metavar='END')
ap.add_argument('--sink', type=float, metavar='GBPS',
                help='what a hot-spot takes in (below its link rate: the '
                'switch port facing it then counts PortXmitWait)')
a = ap.parse_args()
if a.slow and a.dftree:
    ap.error('--slow or --dftree, not both')
rng = random.Random(a.seed)
group = a.hosts // a.hotspots
flows = []
for h in range(a.hosts):
    hot = h // group * group
    if h != hot:
        flows.append({'name': 'h%d' % h, 'from': a.prefix + str(h),
                      'to': a.prefix + str(hot), 'gbps': 0.05 * a.gbps,
                      'sl': 1 if a.slow else 0})
    for i in range(a.k):
        d = rng.randrange(a.hosts - 1)
        d += d >= h
        flows.append({'name': 'u%d.%d' % (h, i), 'from': a.prefix + str(h),
                      'to': a.prefix + str(d), 'gbps': 0.95 * a.gbps / a.k,
                      'sl': 1 if a.slow and d % group == 0 else 0})
sc = {'step': 1, 'end': 1, 'flows': flows}
if a.dftree:
    sc.update(end=a.dftree, dftree=True)
if a.sink is not None:
    sc['sinks'] = {a.prefix + str(h): a.sink
                   for h in range(0, group * a.hotspots, group)}
print(json.dumps(sc))
