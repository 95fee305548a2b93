#!/usr/bin/env python3
"""Hubs in the product code: what a reshaping must shrink and never regrow.

  hubs.py OBJDIR [--max-cycle N] [--max-fields N] [--max-users N]

Reports, from the objects' symbols (nm) and the sources:
  - the largest cycle of mutual calls between files: the largest strongly
    connected component of the graph "file A uses a global symbol file B
    defines" (programs' main files left out);
  - the structs with the most fields (members of a struct defined in a
    product header) and how many .c files dereference each one (`v->`
    where v is declared `struct NAME *v`); the bounds hold the daemon's
    context, struct sm;
  - the largest files and functions, in lines.
Exit 1 when a figure is above its bound (the figure of the tree the bound
was set on, so that a hub cannot grow back); 0 otherwise.
"""
import os
import re
import subprocess
import sys

PRODUCT = ['sm', 'mad', 'routing', 'reconfig', 'traps']
MAINS = {'main.c', 'ibsmctl.c', 'ibsm-listen.c'}   # programs' main files, by name


def sources(ext):
    out = []
    for top in PRODUCT:
        for d, _, files in os.walk(top):
            out += [os.path.join(d, f) for f in sorted(files) if f.endswith(ext)]
    return sorted(out)


def symbols(objdir, srcs):
    defs, uses = {}, {}
    for s in srcs:
        o = os.path.join(objdir, s[:-2] + '.o')
        if not os.path.exists(o):
            sys.exit('hubs: no %s: build first' % o)
        out = subprocess.check_output(['nm', o]).decode()
        d, u = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == 'U':
                u.add(parts[1])
            elif len(parts) == 3 and parts[1] in 'TDBRCGSV':
                d.add(parts[2])
        defs[s], uses[s] = d, u
    return defs, uses


def largest_scc(nodes, edges):
    """Tarjan's algorithm, iterative; returns the components, largest first."""
    index, low, onstack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    onstack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in onstack:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return sorted(comps, key=len, reverse=True)


def strip_comments(t):
    t = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), t, flags=re.S)
    return re.sub(r'//[^\n]*', '', t)


STRUCT = re.compile(r'^struct (\w+) \{\n(.*?)^\};', re.M | re.S)


def struct_fields(headers):
    out = {}
    for h in headers:
        t = strip_comments(open(h).read())
        for m in STRUCT.finditer(t):
            depth, n, body = 0, 0, m.group(2)
            stmt = ''
            for ch in body:
                if ch == '{':
                    depth += 1
                elif ch == '}':
                    depth -= 1
                elif ch == ';' and depth == 0:
                    # one declaration may name several fields: "a, b, c;"
                    n += 1 + re.sub(r'\([^)]*\)|\[[^]]*\]', '', stmt).count(',')
                    stmt = ''
                    continue
                if depth == 0:
                    stmt += ch
            out[m.group(1)] = (n, h)
    return out


def deref_files(name, srcs):
    decl = re.compile(r'struct ' + name + r'\s*\*\s*(?:const\s+)?(\w+)')
    users = []
    for s in srcs:
        t = strip_comments(open(s).read())
        names = set(decl.findall(t))
        if any(re.search(r'\b' + re.escape(v) + r'->', t) for v in names):
            users.append(s)
    return users


FUNC = re.compile(r'^(?!static inline)[A-Za-z_][^;=]*?\b(\w+)\([^;]*?\)\s*\{\s*$', re.M)


def functions(srcs):
    out = []
    for s in srcs:
        lines = open(s).read().split('\n')
        start = None
        name = None
        for i, line in enumerate(lines):
            if start is None:
                if re.match(r'^[A-Za-z_]', line) and '(' in line and not line.endswith(';'):
                    # the body opens on this line or a later one, at column 0
                    j = i
                    while j < len(lines) and not lines[j].startswith('{') \
                            and not lines[j].rstrip().endswith('{') and not lines[j].endswith(';'):
                        j += 1
                    if j < len(lines) and (lines[j].startswith('{') or lines[j].rstrip().endswith('{')) \
                            and '=' not in line.split('(')[0]:
                        m = re.search(r'(\w+)\s*\(', line)
                        if m and m.group(1) not in ('if', 'for', 'while', 'switch'):
                            start, name = i, m.group(1)
            elif line.startswith('}'):
                out.append((i - start + 1, '%s:%s' % (s, name)))
                start = None
    return sorted(out, reverse=True)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    objdir = args[0]
    bounds = {}
    for i in range(1, len(args) - 1, 2):
        bounds[args[i].lstrip('-')] = int(args[i + 1])
    srcs = [s for s in sources('.c') if os.path.basename(s) not in MAINS]
    defs, uses = symbols(objdir, srcs)
    owner = {}
    for s, d in defs.items():
        for sym in d:
            owner.setdefault(sym, s)
    edges = {s: {owner[u] for u in uses[s] if u in owner and owner[u] != s} for s in srcs}
    comps = largest_scc(srcs, edges)
    cyc = comps[0] if comps and len(comps[0]) > 1 else []
    print('largest cycle of mutual calls: %d files' % len(cyc))
    if cyc:
        print('  ' + ' '.join(cyc))
    fields = struct_fields(sources('.h'))
    top = sorted(fields.items(), key=lambda kv: -kv[1][0])[:5]
    print('context structs with the most fields:')
    for name, (n, h) in top:
        users = deref_files(name, sources('.c'))
        print('  struct %-16s %3d fields (%s), dereferenced in %d files' % (name, n, h, len(users)))
    sm_users = deref_files('sm', sources('.c')) if 'sm' in fields else []
    if 'sm' in fields:
        print('  struct sm: %d fields, dereferenced in %d files' % (fields['sm'][0], len(sm_users)))
    sizes = sorted(((sum(1 for _ in open(s)), s) for s in sources('.c')), reverse=True)[:5]
    print('largest files: ' + ', '.join('%s %d' % (s, n) for n, s in sizes))
    fns = functions(sources('.c'))[:5]
    print('largest functions: ' + ', '.join('%s %d' % (f, n) for n, f in fns))
    # the bounds hold the daemon's context, struct sm (the policy's struct
    # config grows with every key, and is no hub: nothing but the policy)
    figures = {'max-cycle': len(cyc),
               'max-fields': fields['sm'][0] if 'sm' in fields else 0,
               'max-users': len(sm_users)}
    bad = [k for k, b in bounds.items() if figures.get(k, 0) > b]
    for k in bad:
        print('hubs: %s is %d, above its bound %d' % (k, figures[k], bounds[k]))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
