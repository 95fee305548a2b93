#!/usr/bin/env python3
"""netshape.py FAMILY NET PARAMS: checks an ibsim net file written by
tests/gen/fabgen.py against what its family defines; exit 1 naming the
first switch that differs.  Read back from the file alone (names, ports,
peers), so it judges fabgen's output, not its code.

  torus|mesh NET X,Y[,Z]     ports 2d+1 (+d) and 2d+2 (-d)
  dragonfly NET A,P,H,G      groups of A, G groups, one cable a group pair
                             when G = A*H+1
  hyperx NET S1,S2[,S3]
  rrg NET N,D                simple, connected, D-regular
  failed WHOLE NET K         NET is WHOLE less K switch cables, connected
"""
import re
import sys


def read(path):
    """{name: {port: (peer, peer_port)}} for switches; host names."""
    sw, hosts, cur = {}, set(), None
    for line in open(path):
        m = re.match(r'(Switch|Hca)\s+\d+\s+"([^"]+)"', line)
        if m:
            cur = m.group(2)
            if m.group(1) == "Switch":
                sw[cur] = {}
            else:
                hosts.add(cur)
                cur = None
            continue
        m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
        if m and cur is not None:
            sw[cur][int(m.group(1))] = (m.group(2), int(m.group(3)))
    return sw, hosts


def sw_links(sw):
    return {p: v for p, v in sw.items() if v[0].startswith("L")}


def idx(name):
    return int(name.split("-S")[1])


def coords(i, dims):
    c = []
    for d in dims:
        c.append(i % d)
        i //= d
    return tuple(c)


def index(c, dims):
    i = 0
    for v, d in zip(reversed(c), reversed(dims)):
        i = i * d + v
    return i


def bad(msg):
    print("netshape: " + msg)
    sys.exit(1)


def connected(sw):
    names = list(sw)
    seen, todo = {names[0]}, [names[0]]
    while todo:
        for peer, _ in sw_links(sw[todo.pop()]).values():
            if peer not in seen:
                seen.add(peer)
                todo.append(peer)
    return len(seen) == len(names)


def lattice_size(sw, dims):
    n = 1
    for d in dims:
        n *= d
    if len(sw) != n:
        bad("%d switches, want %d" % (len(sw), n))


def grid(sw, dims, wrap):
    lattice_size(sw, dims)
    for name, ports in sw.items():
        c = coords(idx(name), dims)
        want = {}
        for d, size in enumerate(dims):
            up, down = c[d] + 1, c[d] - 1
            if wrap and size > 2:
                up, down = up % size, down % size
            if 0 <= up < size:
                want[2 * d + 1] = ("L0-S%d" % index(c[:d] + (up,) + c[d + 1:], dims), 2 * d + 2)
            if 0 <= down < size and not (size == 2 and wrap and c[d] == 0):
                want[2 * d + 2] = ("L0-S%d" % index(c[:d] + (down,) + c[d + 1:], dims), 2 * d + 1)
        if sw_links(ports) != want:
            bad("%s at %s: %s, want %s" % (name, c, sw_links(ports), want))


def dragonfly(sw, a, p, h, g):
    if len(sw) != a * g:
        bad("%d switches, want %d" % (len(sw), a * g))
    pairs = {}
    for name, ports in sw.items():
        gi, r = divmod(idx(name), a)
        local = {q for q in range(1, a)}
        for port in local:
            peer = ports.get(port)
            q = port - 1 if port - 1 < r else port
            if peer is None or divmod(idx(peer[0]), a) != (gi, q):
                bad("%s port %d: %s, want router %d of group %d" % (name, port, peer, q, gi))
        for port in range(a, a + h):
            if port not in ports:
                continue
            gj = idx(ports[port][0]) // a
            if gj == gi:
                bad("%s port %d: a global port inside its group" % (name, port))
            key = (min(gi, gj), max(gi, gj))
            pairs[key] = pairs.get(key, 0) + 1
        hosts = [v for v in ports.values() if not v[0].startswith("L")]
        if len(hosts) != p:
            bad("%s: %d hosts, want %d" % (name, len(hosts), p))
    want = g * (g - 1) // 2
    # each cable counted from both ends
    if sorted(set(pairs.values())) != [2] or len(pairs) != want:
        bad("global cables per group pair: %d pairs cabled of %d, counts %s"
            % (len(pairs), want, sorted(set(pairs.values()))))


def hyperx(sw, dims):
    lattice_size(sw, dims)
    for name, ports in sw.items():
        c = coords(idx(name), dims)
        got = {idx(v[0]) for v in sw_links(ports).values()}
        want = {index(c[:d] + (v,) + c[d + 1:], dims)
                for d, size in enumerate(dims) for v in range(size) if v != c[d]}
        if got != want or len(sw_links(ports)) != len(want):
            bad("%s at %s: peers %s, want %s" % (name, c, sorted(got), sorted(want)))


def rrg(sw, n, deg):
    if len(sw) != n:
        bad("%d switches, want %d" % (len(sw), n))
    for name, ports in sw.items():
        peers = [v[0] for v in sw_links(ports).values()]
        if len(peers) != deg or len(set(peers)) != deg or name in peers:
            bad("%s: peers %s (want %d distinct, not itself)" % (name, peers, deg))
    if not connected(sw):
        bad("not connected")


def failed(whole, sw, k):
    cables = lambda s: {tuple(sorted([(a, p), v])) for a, ps in s.items()
                        for p, v in sw_links(ps).items()}
    gone, new = cables(whole) - cables(sw), cables(sw) - cables(whole)
    if len(gone) != k or new:
        bad("%d cables gone (want %d), %d new" % (len(gone), k, len(new)))
    if not connected(sw):
        bad("not connected after the failures")


def main(argv):
    fam, net = argv[0], argv[1]
    sw, _ = read(net)
    if fam == "failed":
        failed(sw, read(argv[2])[0], int(argv[3]))
        return 0
    par = [int(x) for x in argv[2].split(",")]
    if fam in ("torus", "mesh"):
        grid(sw, par, fam == "torus")
    elif fam == "dragonfly":
        dragonfly(sw, *par)
    elif fam == "hyperx":
        hyperx(sw, par)
    elif fam == "rrg":
        rrg(sw, *par)
    else:
        bad("unknown family " + fam)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
