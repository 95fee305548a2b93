#!/usr/bin/env python3
"""fabgen: write ibsim net files for the end-to-end tests.

Every record is preceded by an explicit `switchguid=0x...` or
`caguid=0x...` line, so a node's GUIDs do not depend on record order:

    switch n  node/port GUID   0x0002c90100000000 + n
    host n    node GUID        0x0002c90200000000 + 4*n
              port p GUID      node GUID + p   (ibsim's rule; p <= 2)

Names (ibsim node ids, which are also the NodeDescriptions):
    switches  "L<level>-S<index>"  level 0 = the leaves (hosts attach there),
                                   index counted per level
    hosts     "H-<n>"

Subcommands:
    ftree2 --radix K [--leaves L --spines S --hosts-per-leaf H] [--parallel N]
    ftree3 --radix K                 3-level fat tree (K pods of K/2+K/2)
    kary   --k K --n N [--parallel P]  k-ary-n-tree, switches of 2K ports (2KP)
    xgft   --m M1,..,Mh --w W1,..,Wh [--hosts N]
                                     extended generalized fat tree
                                     XGFT(h; M; W): level-i switches have
                                     Mi children and level-(i-1) nodes Wi
                                     parents; host d = a1 + M1*(a2 + M2*..)
                                     ("H-<d>"), only hosts 0..N-1 cabled
                                     (default all), switches with no
                                     cabled host below them left out
                                     (names keep their full-tree index);
                                     down ports 1..Mi by child digit, up
                                     ports Mi+1.. by parent
    xgft   ... --vfs K               the same, each host a hypervisor
                                     "V-<d>" as hyper's (vSwitch, PF
                                     "P-<d>", VFs "F-<d>-<k>"); any
                                     number of levels
    mesh   --x X --y Y [--hosts H]   2-D mesh of switches, H hosts each
    mesh   --dims X,Y[,Z] [--hosts H]
    torus  --dims X,Y[,Z] [--hosts H]
                                     meshes and tori of any dimension:
                                     switch at (c0, c1, ..) is "L0-S<i>",
                                     i = c0 + X*(c1 + Y*c2); ports 2d+1
                                     to +d and 2d+2 to -d (a torus wraps;
                                     a dimension of 2 has one cable,
                                     port 2d+1, as a mesh's), hosts after
                                     the 2*dims switch ports
    dragonfly --a A --p P --h H [--groups G]
                                     canonical Dragonfly (Kim et al., ISCA
                                     2008): G groups (default A*H+1, the
                                     most) of A switches, all-to-all
                                     within a group (ports 1..A-1), H
                                     global ports each (A..A+H-1), P hosts
                                     each; group i's global channel c
                                     (switch c//H, port A+c%H) to group
                                     (i+c+1) mod (A*H+1): the consecutive
                                     arrangement, one link per group pair
                                     when G = A*H+1; switch "L0-S<g*A+r>"
    hyperx --dims S1,S2[,S3] [--hosts H]
                                     HyperX (Ahn et al., SC 2009): switches
                                     on a lattice, each cabled to every
                                     switch that differs in exactly one
                                     coordinate; dimension d's ports in
                                     order of the other coordinate value
    rrg    --switches N --degree D --hosts H --seed S
                                     random D-regular simple connected
                                     switch graph (Jellyfish-like), H hosts
                                     a switch, switch ports 1..D
    random --switches N --radix R --hosts H --seed S [--extra-links E]
    irregular --switches N --seed S  the VOQsw paper's fabrics: N 8-port
                                     switches, ports 1-4 to 4 hosts each,
                                     ports 5-8 to other switches, the
                                     switch graph a random connected
                                     4-regular simple graph (N >= 5)
    hyper  [--leaves 4 --spines 2 --hypervisors-per-leaf 2 --vfs 4
            --hosts-per-leaf 1 --spare-ports 0]
                                     2-level fat tree of hypervisors: each
                                     a vSwitch "V-<leaf>-<i>" (a Switch
                                     record: port 1 to the leaf, port 2 the
                                     PF "P-<leaf>-<i>", ports 3.. the VFs
                                     "F-<leaf>-<i>-<k>", then spare ports
                                     left free, for ibsim's Link), and
                                     plain hosts "H-<n>" (first, so H-n is
                                     host n as in the other fabrics)
Global options (before or after the subcommand):
    --shuffle SEED   emit records (and port lines) in a shuffled order
    --add-host       add one extra host on a free switch port
    --dual-port N    make N hosts dual-ported (port 2 to another switch)
    --fail-links N   remove N switch-to-switch cables, drawn with
                     --fail-seed S (default 1), each one whose loss keeps
                     the switches connected; the summary names them
    -o FILE          output file (default stdout)

A one-line summary goes to stderr.
"""

import argparse
import random
import sys

SWITCH_GUID_BASE = 0x0002c90100000000
CA_GUID_BASE = 0x0002c90200000000
CA_GUID_STRIDE = 4
MAX_PORTS = 254


class FabgenError(Exception):
    pass


class Fabric:
    """Nodes and cables; ports are 1-based, a port holds at most one cable."""

    def __init__(self):
        self.switches = []      # dicts: name, level, nports, peers
        self.hosts = []
        self.by_name = {}
        self.nlinks = 0

    def _add(self, kind, name, nports, level):
        if name in self.by_name:
            raise FabgenError("duplicate node name %s" % name)
        if not 1 <= nports <= MAX_PORTS:
            raise FabgenError("%s: bad port count %d" % (name, nports))
        node = {"kind": kind, "name": name, "nports": nports,
                "level": level, "peers": {}}
        seq = self.switches if kind == "S" else self.hosts
        node["seq"] = len(seq)
        seq.append(node)
        self.by_name[name] = node
        return node

    def add_switch(self, level, index, nports):
        return self._add("S", "L%d-S%d" % (level, index), nports, level)

    def add_host(self, nports=1, name=None):
        if name is None:
            name = "H-%d" % len(self.hosts)
        return self._add("H", name, nports, -1)

    def free_port(self, node):
        for p in range(1, node["nports"] + 1):
            if p not in node["peers"]:
                return p
        return 0

    def nfree(self, node):
        return node["nports"] - len(node["peers"])

    def link(self, a, pa, b, pb):
        if a is b:
            raise FabgenError("%s: self link" % a["name"])
        for n, p in ((a, pa), (b, pb)):
            if not 1 <= p <= n["nports"]:
                raise FabgenError("%s has no port %d" % (n["name"], p))
            if p in n["peers"]:
                raise FabgenError("%s port %d already cabled" % (n["name"], p))
        a["peers"][pa] = (b, pb)
        b["peers"][pb] = (a, pa)
        self.nlinks += 1

    def unlink(self, a, pa):
        b, pb = a["peers"].pop(pa)
        del b["peers"][pb]
        self.nlinks -= 1

    def link_free(self, a, b):
        pa, pb = self.free_port(a), self.free_port(b)
        if not pa or not pb:
            raise FabgenError("no free port to link %s and %s"
                              % (a["name"], b["name"]))
        self.link(a, pa, b, pb)

    def guid(self, node):
        if node["kind"] == "S":
            return SWITCH_GUID_BASE + node["seq"]
        return CA_GUID_BASE + CA_GUID_STRIDE * node["seq"]


# ---------------------------------------------------------------- topologies

def gen_ftree2(fab, radix, leaves, spines, hosts_per_leaf, parallel):
    half = radix // 2
    leaves = half if leaves is None else leaves
    spines = half if spines is None else spines
    hpl = half if hosts_per_leaf is None else hosts_per_leaf
    if min(leaves, spines, parallel) < 1 or hpl < 0:
        raise FabgenError("ftree2: counts must be positive")
    if hpl + spines * parallel > radix:
        raise FabgenError("ftree2: a leaf needs %d ports (%d hosts + %d spines"
                          " x %d), radix is %d" % (hpl + spines * parallel,
                                                   hpl, spines, parallel, radix))
    if leaves * parallel > radix:
        raise FabgenError("ftree2: a spine needs %d ports, radix is %d"
                          % (leaves * parallel, radix))
    lsw = [fab.add_switch(0, i, radix) for i in range(leaves)]
    ssw = [fab.add_switch(1, i, radix) for i in range(spines)]
    for leaf in lsw:
        for j in range(hpl):
            fab.link(leaf, j + 1, fab.add_host(), 1)
    for li, leaf in enumerate(lsw):
        for si, spine in enumerate(ssw):
            for k in range(parallel):
                fab.link(leaf, hpl + si * parallel + k + 1,
                         spine, li * parallel + k + 1)


def gen_ftree3(fab, radix):
    if radix < 2 or radix % 2:
        raise FabgenError("ftree3: radix must be even and >= 2")
    h = radix // 2
    edge = [[fab.add_switch(0, p * h + j, radix) for j in range(h)]
            for p in range(radix)]
    agg = [[fab.add_switch(1, p * h + i, radix) for i in range(h)]
           for p in range(radix)]
    core = [fab.add_switch(2, c, radix) for c in range(h * h)]
    for p in range(radix):
        for j in range(h):
            for k in range(h):
                fab.link(edge[p][j], k + 1, fab.add_host(), 1)
    for p in range(radix):
        for j in range(h):
            for i in range(h):
                fab.link(edge[p][j], h + i + 1, agg[p][i], j + 1)
        for i in range(h):
            for c in range(h):
                fab.link(agg[p][i], h + c + 1, core[i * h + c], p + 1)


def gen_kary(fab, k, n, par=1):
    """k-ary-n-tree: n levels of k^(n-1) switches with 2k ports, k^n hosts.

    A switch is (level m, digits w[0..n-2]); (m, w) links up to (m+1, w')
    when w' differs from w only in digit d = n-2-m: up port k+1+w'[d] on
    the lower switch, down port 1+w[d] on the upper one.  With par > 1
    every switch-to-switch link is cabled par times (switches of 2*k*par
    ports: down ports 1+(w[d]*par+r), up ports k*par+1+(w'[d]*par+r)).
    """
    if k < 1 or n < 1 or par < 1 or 2 * k * par > MAX_PORTS:
        raise FabgenError("kary: need k >= 1, n >= 1, 2*k*parallel <= %d" % MAX_PORTS)
    per_level = k ** (n - 1)
    sw = [[fab.add_switch(m, i, 2 * k * par) for i in range(per_level)]
          for m in range(n)]

    def digit(i, d):
        return (i // k ** d) % k

    for i in range(per_level):
        for j in range(k):
            fab.link(sw[0][i], j + 1, fab.add_host(), 1)
    for m in range(n - 1):
        d = n - 2 - m
        for i in range(per_level):
            wd = digit(i, d)
            for v in range(k):
                up = i + (v - wd) * k ** d
                for r in range(par):
                    fab.link(sw[m][i], k * par + 1 + v * par + r,
                             sw[m + 1][up], 1 + wd * par + r)


def add_hypervisor(fab, tag, vfs, level, nports=None):
    """A hypervisor: a switch node (the vSwitch "V-<tag>") of 2 + vfs
    ports (or nports, spare ports left free), port 2 the PF "P-<tag>",
    ports 3.. the VFs "F-<tag>-<k>": ibsim has no SR-IOV, so the PF and
    each VF are HCAs of their own (DEVELOPERS.md, hypervisors under
    ibsim).  Port 1 is left for the uplink."""
    vsw = fab._add("S", "V-" + tag, nports or 2 + vfs, level)
    fab.link(vsw, 2, fab.add_host(name="P-" + tag), 1)
    for k in range(vfs):
        fab.link(vsw, 3 + k, fab.add_host(name="F-%s-%d" % (tag, k)), 1)
    return vsw


def gen_xgft(fab, m, w, nhosts, vfs=0):
    """XGFT(h; m1..mh; w1..wh) (Ohring et al.), hosts 0..nhosts-1 cabled.

    A level-i node (0: hosts) is labelled by positions 1..h: b_j < w_j at
    positions j <= i, a_j < m_j above.  A level-i switch is the parent of
    the level-(i-1) nodes whose labels equal its own but at position i,
    where the child has a_i and the parent b_i.  The switch's down port
    1 + a_i leads to child a_i; a level-i switch's up port m_i + 1 + b
    leads to its parent b (b_{i+1}); top switches have m_h ports.  Host d
    ("H-<d>") has a_1 = d mod m1, a_2 = (d / m1) mod m2, ...  The
    switches of a level are numbered in label order, position h slowest
    ("L<i-1>-S<index>").  A switch with no cabled host below it is left
    out (its index stays unused): no route of the hosts 0..nhosts-1 goes
    through it (a path rises only above its source and falls only above
    its destination), and with it the empty leaves would have no CA and
    look like switches of another level to an engine inferring levels.
    """
    h = len(m)
    if h < 1 or len(w) != h or min(m) < 1 or min(w) < 1:
        raise FabgenError("xgft: --m and --w need h >= 1 positive entries each")
    total = 1
    for x in m:
        total *= x
    if nhosts is None:
        nhosts = total
    if not 1 <= nhosts <= total:
        raise FabgenError("xgft: --hosts must be 1..%d" % total)

    def nports(i):
        return m[i - 1] + (w[i] if i < h else 0)

    for i in range(1, h + 1):
        if nports(i) > MAX_PORTS:
            raise FabgenError("xgft: level %d switches need %d ports" % (i, nports(i)))

    def labels(i):
        """Level i's labels (tuples by position 1..h), position h slowest."""
        out = [()]
        for j in range(h, 0, -1):
            r = w[j - 1] if j <= i else m[j - 1]
            out = [t + (x,) for t in out for x in range(r)]
        return [tuple(reversed(t)) for t in out]

    def first_host(i, t):
        """The lowest host index below level-i node t (its digits a_j,
        j > i, with every digit below them 0)."""
        d, mul = 0, 1
        for j in range(h):
            if j >= i:
                d += t[j] * mul
            mul *= m[j]
        return d

    if vfs:
        # hypervisors "V-<d>" in place of the hosts (vSwitch, PF, VFs)
        hosts = [add_hypervisor(fab, str(d), vfs, h) for d in range(nhosts)]
    else:
        hosts = [fab.add_host() for _ in range(nhosts)]
    sw = {}
    for i in range(1, h + 1):
        for idx, t in enumerate(labels(i)):
            # no cabled host below: left out (it would carry nothing, and
            # a leaf without hosts looks like a switch of another level)
            if first_host(i, t) < nhosts:
                sw[(i, t)] = fab.add_switch(i - 1, idx, nports(i))
    for i in range(1, h + 1):
        for t in labels(i):
            parent = sw.get((i, t))
            if parent is None:
                continue
            for a in range(m[i - 1]):
                c = t[:i - 1] + (a,) + t[i:]
                if i > 1 and (i - 1, c) not in sw:
                    continue
                if i == 1:
                    d, mul = 0, 1
                    for j in range(h):
                        d += c[j] * mul
                        mul *= m[j]
                    if d < nhosts:
                        fab.link(parent, 1 + a, hosts[d], 1)
                else:
                    fab.link(sw[(i - 1, c)], m[i - 2] + 1 + t[i - 1], parent, 1 + a)


def gen_hyper(fab, leaves, spines, hyps, vfs, hpl, spare):
    """Leaves L0-S<i> and spines L1-S<j>, every leaf to every spine; per
    leaf hpl plain hosts then hyps hypervisors.  A hypervisor is a switch
    node (the vSwitch) of 2 + vfs + spare ports: ibsim has no SR-IOV, so
    the PF and each VF are HCAs of their own (DEVELOPERS.md, hypervisors
    under ibsim)."""
    if min(leaves, spines, hyps, vfs) < 1 or min(hpl, spare) < 0:
        raise FabgenError("hyper: counts must be positive")
    vsw_ports = 2 + vfs + spare
    if vsw_ports > MAX_PORTS:
        raise FabgenError("hyper: %d vSwitch ports" % vsw_ports)
    # plain hosts first: H-n keeps GUID base + 4n as in every fabric here
    hosts = [[fab.add_host() for _ in range(hpl)] for _ in range(leaves)]
    lsw = [fab.add_switch(0, i, hpl + hyps + spines) for i in range(leaves)]
    ssw = [fab.add_switch(1, i, leaves) for i in range(spines)]
    for li, leaf in enumerate(lsw):
        for h in hosts[li]:
            fab.link_free(leaf, h)
        for i in range(hyps):
            tag = "%d-%d" % (li, i)
            vsw = add_hypervisor(fab, tag, vfs, 2, vsw_ports)
            fab.link(vsw, 1, leaf, fab.free_port(leaf))
    for li, leaf in enumerate(lsw):
        for si, spine in enumerate(ssw):
            fab.link(leaf, hpl + hyps + si + 1, spine, li + 1)


def gen_mesh(fab, x, y, hosts):
    if x < 1 or y < 1 or hosts < 0:
        raise FabgenError("mesh: need x, y >= 1 and hosts >= 0")
    # ports 1:+x 2:-x 3:+y 4:-y, hosts on 5..
    sw = [[fab.add_switch(0, j * x + i, 4 + max(hosts, 1)) for i in range(x)]
          for j in range(y)]
    for j in range(y):
        for i in range(x):
            for hi in range(hosts):
                fab.link(sw[j][i], 5 + hi, fab.add_host(), 1)
    for j in range(y):
        for i in range(x):
            if i + 1 < x:
                fab.link(sw[j][i], 1, sw[j][i + 1], 2)
            if j + 1 < y:
                fab.link(sw[j][i], 3, sw[j + 1][i], 4)


def lattice(dims):
    """Every coordinate tuple of dims, in switch-index order (the first
    coordinate fastest), and the index of a tuple."""
    coords = [()]
    for d in dims:
        coords = [c + (v,) for v in range(d) for c in coords]

    def index(c):
        i = 0
        for v, d in zip(reversed(c), reversed(dims)):
            i = i * d + v
        return i
    return coords, index


def check_dims(name, dims, least):
    if not 1 <= len(dims) <= 3 or any(d < least for d in dims):
        raise FabgenError("%s: --dims wants 1 to 3 sizes of at least %d"
                          % (name, least))


def gen_grid(fab, dims, hosts, wrap):
    name = "torus" if wrap else "mesh"
    check_dims(name, dims, 1)
    if hosts < 0:
        raise FabgenError("%s: hosts >= 0" % name)
    coords, index = lattice(dims)
    nsw = 2 * len(dims)
    sw = [fab.add_switch(0, i, nsw + max(hosts, 1))
          for i in range(len(coords))]
    for i in range(len(coords)):
        for hi in range(hosts):
            fab.link(sw[i], nsw + 1 + hi, fab.add_host(), 1)
    for c in coords:
        for d, size in enumerate(dims):
            nxt = c[d] + 1
            if nxt == size:
                # the wrap link; a ring of 2 has its one cable already
                if not wrap or size <= 2:
                    continue
                nxt = 0
            peer = c[:d] + (nxt,) + c[d + 1:]
            fab.link(sw[index(c)], 2 * d + 1, sw[index(peer)], 2 * d + 2)


def gen_dragonfly(fab, a, p, h, groups):
    if a < 1 or p < 0 or h < 1:
        raise FabgenError("dragonfly: need a >= 1, p >= 0, h >= 1")
    gmax = a * h + 1
    g = gmax if groups is None else groups
    if not 2 <= g <= gmax:
        raise FabgenError("dragonfly: groups between 2 and a*h+1 = %d" % gmax)
    nports = (a - 1) + h + max(p, 1)
    sw = [[fab.add_switch(0, gi * a + r, nports) for r in range(a)]
          for gi in range(g)]
    for gi in range(g):
        for r in range(a):
            for k in range(p):
                fab.link(sw[gi][r], a + h + k, fab.add_host(), 1)
    # local: all to all; router r's port to router q is q (q < r) or q-1
    for gi in range(g):
        for r in range(a):
            for q in range(r + 1, a):
                fab.link(sw[gi][r], q, sw[gi][q], r + 1)
    # global: channel c of group i to group (i + c + 1) mod gmax; the
    # far end's channel is the offset back, gmax - (c + 1) - 1
    for gi in range(g):
        for c in range(a * h):
            gj = (gi + c + 1) % gmax
            if gj <= gi or gj >= g:
                continue
            back = gmax - (c + 1) - 1
            fab.link(sw[gi][c // h], a + c % h, sw[gj][back // h], a + back % h)


def gen_hyperx(fab, dims, hosts):
    check_dims("hyperx", dims, 2)
    if hosts < 0:
        raise FabgenError("hyperx: hosts >= 0")
    coords, index = lattice(dims)
    first = [1]
    for d in dims:
        first.append(first[-1] + d - 1)
    nports = first[-1] - 1 + max(hosts, 1)
    sw = [fab.add_switch(0, i, nports) for i in range(len(coords))]
    for i in range(len(coords)):
        for hi in range(hosts):
            fab.link(sw[i], first[-1] + hi, fab.add_host(), 1)

    def port(d, mine, other):	# the port of dimension d towards value other
        return first[d] + (other if other < mine else other - 1)
    for c in coords:
        for d, size in enumerate(dims):
            for v in range(c[d] + 1, size):
                peer = c[:d] + (v,) + c[d + 1:]
                fab.link(sw[index(c)], port(d, c[d], v),
                         sw[index(peer)], port(d, v, c[d]))


def connected(n, edges):
    adj = {v: [] for v in range(n)}
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    seen, todo = {0}, [0]
    while todo:
        for w in adj[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return len(seen) == n


def regular(n, deg, rng):
    """A random connected deg-regular simple graph on n vertices: stubs
    paired one pair at a time, a pair that would make a self loop or a
    parallel edge drawn again, the whole drawn again when no pair fits
    or the graph is not connected (Steger and Wormald's pairing, close
    to uniform for small degrees)."""
    if deg >= n or n * deg % 2:
        raise FabgenError("rrg: no %d-regular simple graph on %d switches"
                          % (deg, n))
    for _ in range(1000):
        stubs = [v for v in range(n) for _ in range(deg)]
        edges = set()
        while stubs:
            for _ in range(100):
                i, j = rng.randrange(len(stubs)), rng.randrange(len(stubs))
                a, b = stubs[i], stubs[j]
                if a != b and (min(a, b), max(a, b)) not in edges:
                    break
            else:
                break
            edges.add((min(a, b), max(a, b)))
            for k in sorted((i, j), reverse=True):
                stubs[k] = stubs[-1]
                stubs.pop()
        if not stubs and connected(n, edges):
            return sorted(edges)
    raise FabgenError("rrg: no connected %d-regular graph found" % deg)


def gen_rrg(fab, nsw, deg, hosts, seed):
    if nsw < 2 or deg < 1 or hosts < 0:
        raise FabgenError("rrg: need switches >= 2, degree >= 1, hosts >= 0")
    rng = random.Random(seed)
    sw = [fab.add_switch(0, i, deg + max(hosts, 1)) for i in range(nsw)]
    for s in sw:
        for hi in range(hosts):
            fab.link(s, deg + 1 + hi, fab.add_host(), 1)
    for a, b in regular(nsw, deg, rng):
        fab.link(sw[a], fab.free_port(sw[a]), sw[b], fab.free_port(sw[b]))


def gen_random(fab, nsw, radix, nhosts, seed, extra):
    if nsw < 1 or radix < 2 or nhosts < 0:
        raise FabgenError("random: need switches >= 1, radix >= 2, hosts >= 0")
    if nsw > 1 and radix < 2:
        raise FabgenError("random: radix too small to connect")
    if nsw * radix - 2 * (nsw - 1) < nhosts:
        raise FabgenError("random: %d hosts do not fit" % nhosts)
    rng = random.Random(seed)
    sw = [fab.add_switch(0, i, radix) for i in range(nsw)]
    # Host ports are reserved first so the spanning tree cannot eat them.
    want = [0] * nsw
    for _ in range(nhosts):
        cand = [i for i in range(nsw)
                if radix - want[i] > (1 if nsw > 1 else 0)]
        if not cand:
            raise FabgenError("random: cannot place hosts and stay connected")
        want[rng.choice(cand)] += 1
    spare = [radix - w for w in want]
    # Random spanning tree: attach each switch to an earlier one with room.
    order = list(range(nsw))
    rng.shuffle(order)
    placed = [order[0]]
    for s in order[1:]:
        cand = [t for t in placed if spare[t] > 0]
        if not cand or spare[s] < 1:
            raise FabgenError("random: ports too few for a spanning tree"
                              " (try fewer hosts or a larger radix)")
        t = rng.choice(cand)
        fab.link_free(sw[s], sw[t])
        spare[s] -= 1
        spare[t] -= 1
        placed.append(s)
    # Extra links close cycles (no parallel links, no self links).
    tries = 0
    while extra > 0 and tries < 100 * (extra + nsw):
        tries += 1
        a, b = rng.randrange(nsw), rng.randrange(nsw)
        if a == b or spare[a] < 1 or spare[b] < 1:
            continue
        if any(peer is sw[b] for peer, _ in sw[a]["peers"].values()):
            continue
        fab.link_free(sw[a], sw[b])
        spare[a] -= 1
        spare[b] -= 1
        extra -= 1
    for i in range(nsw):
        for _ in range(want[i]):
            fab.link_free(sw[i], fab.add_host())


def regular4(nsw, rng):
    """A random connected 4-regular simple graph on nsw vertices: edge
    lists drawn by pairing 4 stubs per vertex, kept when the pairing has
    no self loop, no parallel edge and one component (an unbiased
    draw; a few hundred tries at most for the sizes used)."""
    for _ in range(100000):
        stubs = [v for v in range(nsw) for _ in range(4)]
        rng.shuffle(stubs)
        edges = set()
        ok = True
        for i in range(0, len(stubs), 2):
            a, b = stubs[i], stubs[i + 1]
            e = (min(a, b), max(a, b))
            if a == b or e in edges:
                ok = False
                break
            edges.add(e)
        if ok and connected(nsw, edges):
            return sorted(edges)
    raise FabgenError("irregular: no connected 4-regular graph found")


def gen_irregular(fab, nsw, seed):
    if nsw < 5:
        raise FabgenError("irregular: a 4-regular simple graph needs >= 5"
                          " switches")
    rng = random.Random(seed)
    sw = [fab.add_switch(0, i, 8) for i in range(nsw)]
    for s in sw:
        for p in range(1, 5):
            fab.link(s, p, fab.add_host(), 1)
    for a, b in regular4(nsw, rng):
        fab.link(sw[a], fab.free_port(sw[a]), sw[b], fab.free_port(sw[b]))


# ------------------------------------------------------------- modifiers

def switches_by_level(fab):
    return sorted(fab.switches, key=lambda s: (s["level"], s["seq"]))


def add_extra_host(fab):
    for s in switches_by_level(fab):
        if fab.free_port(s):
            fab.link_free(s, fab.add_host())
            return
    raise FabgenError("--add-host: no free switch port")


def make_dual_port(fab, count):
    if count > len(fab.hosts):
        raise FabgenError("--dual-port %d: only %d hosts"
                          % (count, len(fab.hosts)))
    for h in fab.hosts[:count]:
        if 1 not in h["peers"]:
            raise FabgenError("%s: port 1 is not cabled" % h["name"])
        first = h["peers"][1][0]
        h["nports"] = 2
        for s in switches_by_level(fab):
            if s is not first and fab.free_port(s):
                fab.link(h, 2, s, fab.free_port(s))
                break
        else:
            raise FabgenError("--dual-port: no free port on a second switch"
                              " for %s" % h["name"])


def fail_links(fab, count, seed):
    """Removes count switch-to-switch cables, each one whose loss keeps
    the switches connected; returns them as "A[p]-B[q]"."""
    rng = random.Random(seed)
    idx = {id(s): i for i, s in enumerate(fab.switches)}
    gone = []
    for _ in range(count):
        cables = [(s, p) for s in fab.switches
                  for p, (peer, pp) in sorted(s["peers"].items())
                  if peer["kind"] == "S" and idx[id(s)] < idx[id(peer)]]
        rng.shuffle(cables)
        for s, p in cables:
            peer, pp = s["peers"][p]
            fab.unlink(s, p)
            edges = [(idx[id(a)], idx[id(b)]) for a in fab.switches
                     for b, _ in a["peers"].values() if b["kind"] == "S"]
            if connected(len(fab.switches), edges):
                gone.append('%s[%d]-%s[%d]' % (s["name"], p, peer["name"], pp))
                break
            fab.link(s, p, peer, pp)
        else:
            raise FabgenError("--fail-links: no cable left whose loss keeps"
                              " the switches connected")
    return gone


# ---------------------------------------------------------------- output

def records(fab):
    """One record per node; hosts first, so a client without SIM_HOST
    lands on H-0."""
    out = []
    for node in fab.hosts + fab.switches:
        if node["kind"] == "S":
            head = ["switchguid=0x%016x" % fab.guid(node),
                    'Switch\t%d "%s"' % (node["nports"], node["name"])]
        else:
            head = ["caguid=0x%016x" % fab.guid(node),
                    'Hca\t%d "%s"' % (node["nports"], node["name"])]
        ports = ['[%d]\t"%s"[%d]' % (p, peer["name"], rp)
                 for p, (peer, rp) in sorted(node["peers"].items())]
        out.append((head, ports))
    return out


def render(fab, shuffle_seed, title):
    recs = records(fab)
    if shuffle_seed is not None:
        rng = random.Random(shuffle_seed)
        rng.shuffle(recs)
        for _, ports in recs:
            rng.shuffle(ports)
    lines = ["# %s" % title,
             "# generated by tests/gen/fabgen.py: %d switches, %d hosts,"
             " %d links" % (len(fab.switches), len(fab.hosts), fab.nlinks),
             ""]
    for head, ports in recs:
        lines.extend(head)
        lines.extend(ports)
        lines.append("")
    return "\n".join(lines) + "\n"


def parse_args(argv):
    glob = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    glob.add_argument("--shuffle", type=int, metavar="SEED")
    glob.add_argument("--add-host", action="store_true")
    glob.add_argument("--dual-port", type=int, default=0, metavar="N")
    glob.add_argument("--fail-links", type=int, default=0, metavar="N")
    glob.add_argument("--fail-seed", type=int, default=1, metavar="S")
    glob.add_argument("-o", "--output", metavar="FILE")

    ap = argparse.ArgumentParser(prog="fabgen.py", parents=[glob],
                                 description="write ibsim net files")
    sub = ap.add_subparsers(dest="topo", required=True)

    p = sub.add_parser("ftree2", parents=[glob], help="2-level fat tree")
    p.add_argument("--radix", type=int, required=True)
    p.add_argument("--leaves", type=int)
    p.add_argument("--spines", type=int)
    p.add_argument("--hosts-per-leaf", type=int)
    p.add_argument("--parallel", type=int, default=1)

    p = sub.add_parser("ftree3", parents=[glob], help="3-level fat tree")
    p.add_argument("--radix", type=int, required=True)

    p = sub.add_parser("kary", parents=[glob], help="k-ary-n-tree")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--parallel", type=int, default=1,
                   help="cable every switch-to-switch link this many times")

    p = sub.add_parser("xgft", parents=[glob], help="extended generalized fat tree")
    p.add_argument("--m", required=True, help="M1,..,Mh")
    p.add_argument("--w", required=True, help="W1,..,Wh")
    p.add_argument("--hosts", type=int)
    p.add_argument("--vfs", type=int, default=0,
                   help="hypervisors of this many VFs in place of hosts")

    p = sub.add_parser("mesh", parents=[glob], help="mesh (2-D: --x --y)")
    p.add_argument("--x", type=int)
    p.add_argument("--y", type=int)
    p.add_argument("--dims", help="X,Y[,Z]")
    p.add_argument("--hosts", type=int, default=1)

    p = sub.add_parser("torus", parents=[glob], help="torus")
    p.add_argument("--dims", required=True, help="X,Y[,Z]")
    p.add_argument("--hosts", type=int, default=1)

    p = sub.add_parser("dragonfly", parents=[glob], help="canonical Dragonfly")
    p.add_argument("--a", type=int, required=True, help="switches a group")
    p.add_argument("--p", type=int, required=True, help="hosts a switch")
    p.add_argument("--h", type=int, required=True, help="global ports a switch")
    p.add_argument("--groups", type=int)

    p = sub.add_parser("hyperx", parents=[glob], help="HyperX")
    p.add_argument("--dims", required=True, help="S1,S2[,S3]")
    p.add_argument("--hosts", type=int, default=1)

    p = sub.add_parser("rrg", parents=[glob], help="random regular switch graph")
    p.add_argument("--switches", type=int, required=True)
    p.add_argument("--degree", type=int, required=True)
    p.add_argument("--hosts", type=int, default=1)
    p.add_argument("--seed", type=int, required=True)

    p = sub.add_parser("random", parents=[glob], help="irregular fabric")
    p.add_argument("--switches", type=int, required=True)
    p.add_argument("--radix", type=int, required=True)
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--extra-links", type=int)

    p = sub.add_parser("irregular", parents=[glob],
                       help="8-port switches, 4 hosts each, 4-regular")
    p.add_argument("--switches", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)

    p = sub.add_parser("hyper", parents=[glob],
                       help="fat tree of hypervisors (vSwitch + PF + VFs)")
    p.add_argument("--leaves", type=int, default=4)
    p.add_argument("--spines", type=int, default=2)
    p.add_argument("--hypervisors-per-leaf", type=int, default=2)
    p.add_argument("--vfs", type=int, default=4)
    p.add_argument("--hosts-per-leaf", type=int, default=1)
    p.add_argument("--spare-ports", type=int, default=0,
                   help="free vSwitch ports after the VFs")

    # Global options may come before the subcommand: the subparser would
    # reset them to their defaults, so parse them separately first.
    pre, _ = glob.parse_known_args(argv)
    args = ap.parse_args(argv)
    for key in ("shuffle", "output"):
        if getattr(args, key) is None:
            setattr(args, key, getattr(pre, key))
    args.add_host = args.add_host or pre.add_host
    args.dual_port = args.dual_port or pre.dual_port
    args.fail_links = args.fail_links or pre.fail_links
    if args.fail_seed == 1:
        args.fail_seed = pre.fail_seed
    return args


def int_list(name, text):
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise FabgenError("%s: comma-separated integers, not '%s'"
                          % (name, text))


def build(args):
    fab = Fabric()
    if args.topo == "ftree2":
        gen_ftree2(fab, args.radix, args.leaves, args.spines,
                   args.hosts_per_leaf, args.parallel)
    elif args.topo == "ftree3":
        gen_ftree3(fab, args.radix)
    elif args.topo == "kary":
        gen_kary(fab, args.k, args.n, args.parallel)
    elif args.topo == "xgft":
        try:
            m = [int(x) for x in args.m.split(",")]
            w = [int(x) for x in args.w.split(",")]
        except ValueError:
            raise FabgenError("xgft: --m and --w are comma-separated integers")
        if args.vfs < 0:
            raise FabgenError("xgft: --vfs must be >= 0")
        gen_xgft(fab, m, w, args.hosts, args.vfs)
    elif args.topo == "hyper":
        gen_hyper(fab, args.leaves, args.spines, args.hypervisors_per_leaf,
                  args.vfs, args.hosts_per_leaf, args.spare_ports)
    elif args.topo == "mesh" and args.dims is not None:
        if args.x is not None or args.y is not None:
            raise FabgenError("mesh: --dims or --x/--y, not both")
        gen_grid(fab, int_list("mesh --dims", args.dims), args.hosts, False)
    elif args.topo == "mesh":
        if args.x is None or args.y is None:
            raise FabgenError("mesh: --x and --y, or --dims")
        gen_mesh(fab, args.x, args.y, args.hosts)
    elif args.topo == "torus":
        gen_grid(fab, int_list("torus --dims", args.dims), args.hosts, True)
    elif args.topo == "dragonfly":
        gen_dragonfly(fab, args.a, args.p, args.h, args.groups)
    elif args.topo == "hyperx":
        gen_hyperx(fab, int_list("hyperx --dims", args.dims), args.hosts)
    elif args.topo == "rrg":
        gen_rrg(fab, args.switches, args.degree, args.hosts, args.seed)
    elif args.topo == "irregular":
        gen_irregular(fab, args.switches, args.seed)
    else:
        extra = args.switches if args.extra_links is None else args.extra_links
        gen_random(fab, args.switches, args.radix, args.hosts, args.seed,
                   extra)
    if args.add_host:
        add_extra_host(fab)
    if args.dual_port:
        make_dual_port(fab, args.dual_port)
    fab.failed = fail_links(fab, args.fail_links, args.fail_seed)
    return fab


def main(argv):
    args = parse_args(argv)
    try:
        fab = build(args)
    except FabgenError as e:
        print("fabgen: %s" % e, file=sys.stderr)
        return 2
    text = render(fab, args.shuffle, "fabgen.py " + " ".join(argv))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print("fabgen: %s: switches=%d hosts=%d links=%d%s"
          % (args.topo, len(fab.switches), len(fab.hosts), fab.nlinks,
             " failed=" + ",".join(fab.failed) if fab.failed else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
