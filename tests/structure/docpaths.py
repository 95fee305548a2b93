#!/usr/bin/env python3
"""The paths the documents name exist in the tree.

Every path-looking token of ARCHITECTURE.md, README.md, DEVELOPERS.md and
tests/sim/README.md -- a word that starts with one of the tree's top
folders (sm/, mad/, routing/, reconfig/, traps/, tests/, etc/, man/) and
ends in a file name with an extension (sm/sa/paths.c, tests/RESULTS.md,
etc/ibsmd.yaml) or in a folder followed by / (routing/engines/) -- must
name a file or folder of the tree, from its top.  A glob (sm/sa/sa_*.c,
tests/unit/test_vm*_emu.c) must match at least one.  A path inside
another (/etc/ibsmd/ibsmd.yaml, ../shared/X.md, build/obj/sm/...) is not
one of the tree's and is left alone.

Exit 1 naming document:line and each token that names nothing; 0 with a
count otherwise.

  docpaths.py [ROOT]
"""
import glob
import os
import re
import sys

DOCS = ['ARCHITECTURE.md', 'README.md', 'DEVELOPERS.md', 'tests/sim/README.md']
TOPS = ['sm', 'mad', 'routing', 'reconfig', 'traps', 'tests', 'etc', 'man']
# Extensions that make a token a file name.
EXTS = ('c', 'h', 'py', 'sh', 'md', 'yaml', 'net', 'in', 'svg', '5', '8')

# A top folder not preceded by a character of a path or a word (so not
# /etc/..., ../shared/..., build/obj/sm/...), then path characters.
TOKEN = re.compile(r'(?<![\w./~-])((?:%s)/[\w./*?+-]*)' % '|'.join(TOPS))
FILE = re.compile(r'\.(?:%s)$' % '|'.join(re.escape(e) for e in EXTS))


def candidates(line):
    """The path-looking tokens of a line."""
    for m in TOKEN.finditer(line):
        tok = m.group(1)
        # a sentence or a clause may end right after a path
        tok = tok.rstrip('.,;:')
        if tok.endswith('/') or FILE.search(tok):
            yield tok


def exists(tok):
    if any(c in tok for c in '*?'):
        return bool(glob.glob(tok))
    if tok.endswith('/'):
        return os.path.isdir(tok)
    return os.path.exists(tok)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.chdir(root)
    bad = []
    n = 0
    for doc in DOCS:
        if not os.path.isfile(doc):
            bad.append('%s: no such document' % doc)
            continue
        with open(doc, encoding='utf-8') as fp:
            for ln, line in enumerate(fp, 1):
                for tok in candidates(line):
                    n += 1
                    if not exists(tok):
                        bad.append('%s:%d: %s does not exist' % (doc, ln, tok))
    for b in bad:
        print(b)
    if bad:
        print('docpaths: %d path(s) in the documents name nothing in the tree'
              % len(bad))
        return 1
    print('docpaths: %d paths in %d documents, every one in the tree'
          % (n, len(DOCS)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
