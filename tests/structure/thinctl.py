#!/usr/bin/env python3
"""ibsmctl is a client: it links its own folder (sm/ibsmctl/) and nothing
of the daemon, the routing engines, the SA or the sweep.

  thinctl.py BUILD

Exit 1 when build/ibsmctl defines a global symbol that a product object
outside sm/ibsmctl/ defines, needs a library of the daemon's drawing
(Graphviz: the picture is drawn by the daemon), or is not under a fifth
of ibsmd's size; 0 otherwise.
"""
import os
import subprocess
import sys


def defined(path):
    out = subprocess.check_output(['nm', '--defined-only', path]).decode()
    return {l.split()[2] for l in out.splitlines()
            if len(l.split()) == 3 and l.split()[1] in 'TDBRCGSV'}


# Libraries only the daemon may need (ibsmctl topology --svg asks the daemon).
DAEMON_ONLY = ('libgvc', 'libcgraph', 'libcdt', 'libgvplugin')


def needed(path):
    out = subprocess.check_output(['readelf', '-d', path]).decode()
    return [l.split('[')[1].rstrip(']') for l in out.splitlines() if '(NEEDED)' in l]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    ctl = os.path.join(build, 'ibsmctl')
    smd = os.path.join(build, 'ibsmd')
    others = {}
    objroot = os.path.join(build, 'obj')
    for d, _, files in os.walk(objroot):
        rel = os.path.relpath(d, objroot)
        if rel == 'sm/ibsmctl' or rel.startswith('tests'):
            continue
        for f in files:
            if f.endswith('.o'):
                for s in defined(os.path.join(d, f)):
                    others[s] = os.path.join(rel, f)
    leaked = sorted(s for s in defined(ctl) if s in others and s != 'main')
    for s in leaked:
        print('ibsmctl links %s (from %s)' % (s, others[s]))
    drawing = [lib for lib in needed(ctl) if lib.startswith(DAEMON_ONLY)]
    for lib in drawing:
        print('ibsmctl needs %s, a library of the daemon\'s drawing' % lib)
    a, b = os.path.getsize(ctl), os.path.getsize(smd)
    print('ibsmctl %d bytes, ibsmd %d bytes (%.1f%%); %d symbols of the '
          'daemon\'s objects in ibsmctl' % (a, b, 100.0 * a / b, len(leaked)))
    if leaked or drawing or a * 5 >= b:
        print('thinctl: ibsmctl is not a thin client')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
