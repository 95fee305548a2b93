#!/usr/bin/env python3
"""topo_loads: ibsmd's routes per link against link_loads.py's.

    topo_loads.py json|dot FILE PER_LINK

FILE      `ibsmctl --json topology` output (json), or the DOT of
          `ibsmd --offline --dot` / `ibsmctl topology --dot` (dot)
PER_LINK  `link_loads.py TOPO LFTS --per-link` output: "DESC[PORT] -> PEER: N"

Every directed switch-to-switch link of FILE, keyed by (switch
description, port, peer description), must carry the routes PER_LINK
gives it, and the two must list the same links.  Prints the number of
directed links and the busiest; exit 1 on a difference (the first few
printed), 2 on unreadable input.
"""

import json
import re
import sys


def from_json(text):
    doc = json.loads(text)
    out = {}
    for link in doc["links"]:
        if "routes_ab" not in link:
            continue  # a host link
        a, b = link["a"], link["b"]
        out[(a["desc"], a["port"], b["desc"])] = link["routes_ab"]
        out[(b["desc"], b["port"], a["desc"])] = link["routes_ba"]
    return out


def from_dot(text):
    names = {m.group(1): m.group(2) for m in
             re.finditer(r'^\s+(s\d+) \[label="((?:[^"\\]|\\.)*?)(?:\\nLID \d+)?"', text, re.M)}
    out = {}
    for m in re.finditer(r'^\s+(s\d+) -- (s\d+) \[(.*)\];$', text, re.M):
        attrs = m.group(3)
        ports = re.search(r'tooltip="port (\d+) -- port (\d+)"', attrs)
        routes = re.search(r'labeltooltip="routes (\d+) up, (\d+) down"', attrs)
        if not ports or not routes:
            continue  # failed, or no routes drawn
        a, b = names[m.group(1)], names[m.group(2)]
        out[(a, int(ports.group(1)), b)] = int(routes.group(2))  # down: upper -> lower
        out[(b, int(ports.group(2)), a)] = int(routes.group(1))
    return out


def from_per_link(text):
    out = {}
    for m in re.finditer(r"^(.*)\[(\d+)\] -> (.*): (\d+)$", text, re.M):
        out[(m.group(1), int(m.group(2)), m.group(3))] = int(m.group(4))
    return out


def main(argv):
    if len(argv) != 3 or argv[0] not in ("json", "dot"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        text = open(argv[1]).read()
        ours = from_json(text) if argv[0] == "json" else from_dot(text)
        theirs = from_per_link(open(argv[2]).read())
    except (OSError, ValueError, KeyError) as e:
        print("topo_loads: %s" % e, file=sys.stderr)
        return 2
    diffs = [(k, ours.get(k), theirs.get(k)) for k in sorted(set(ours) | set(theirs))
             if ours.get(k) != theirs.get(k)]
    for (sw, port, peer), a, b in diffs[:5]:
        print("%s[%d] -> %s: ibsmd %s, link_loads.py %s" % (sw, port, peer, a, b))
    print("topo_loads: %d directed links, busiest %d, %d differ" %
          (len(theirs), max(theirs.values(), default=0), len(diffs)))
    return 1 if diffs or not theirs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
