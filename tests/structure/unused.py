#!/usr/bin/env python3
"""Exported functions nobody uses.

  unused.py OBJDIR

Lists the global (non-static) functions defined in the product's objects
(OBJDIR/<source>.o of every .c under the product folders, read with nm)
that no other product object references (an undefined symbol there), nor
a program's main file built without an object of its own, nor the unit
tests and the test tools (tests/unit, tests/tools: a textual search for
the name as a word).  A function used only in its own file should be
static; one used nowhere should go.  Exit 1 naming them, 0 otherwise.
Run from the top of the tree.
"""
import os
import re
import subprocess
import sys

PRODUCT = ['sm', 'mad', 'routing', 'reconfig', 'traps']
TESTS = ['tests/unit', 'tests/tools']
FUNC_TYPES = 'TWi'      # nm: text, weak, indirect function


def sources(tops, exts):
    out = []
    for top in tops:
        for d, _, files in os.walk(top):
            out += [os.path.join(d, f) for f in files if f.endswith(exts)]
    return sorted(out)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.strip())
    objdir = argv[1]
    defs = {}           # function -> the source whose object defines it
    uses = {}           # symbol -> the sources whose objects reference it
    no_object = []      # sources built straight into a program (ibsm-listen.c)
    for s in sources(PRODUCT, ('.c',)):
        o = os.path.join(objdir, s[:-2] + '.o')
        if not os.path.exists(o):
            no_object.append(s)
            continue
        out = subprocess.check_output(['nm', o]).decode()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == 'U':
                uses.setdefault(parts[1], set()).add(s)
            elif len(parts) == 3 and parts[1] in FUNC_TYPES:
                defs[parts[2]] = s
    if not defs:
        sys.exit('unused: no objects under %s: build first' % objdir)
    # Text searched by name: the programs' main files without an object,
    # the unit tests and the test tools.
    text = ''
    for s in no_object + sources(TESTS, ('.c', '.h')):
        with open(s, errors='replace') as f:
            text += f.read() + '\n'
    words = set(re.findall(r'\b[A-Za-z_]\w*\b', text))
    unused = []
    for fn, src in sorted(defs.items()):
        if fn == 'main':
            continue
        if uses.get(fn, set()) - {src} or fn in words:
            continue
        unused.append((src, fn))
    for src, fn in sorted(unused):
        print('%s: %s is exported but used by no other file: '
              'make it static or remove it' % (src, fn))
    print('unused: %d exported functions, %d unused elsewhere'
          % (len(defs), len(unused)), file=sys.stderr)
    return 1 if unused else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
