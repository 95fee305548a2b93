#!/usr/bin/env python3
"""Product comments explain the code from what is in the repository.

A comment or message may cite the IBA specification, a paper by its
title, section, figure or table, or the project's own documents
(ARCHITECTURE.md, README.md, DEVELOPERS.md, the man pages).  It may not
cite what a future maintainer will not have: an issue number ("issue
16"), a seed document ("seed 001") or the planning notes ("notes §5",
"the notes' fix").  Say instead what the thing is, or why.

Every line of the .c and .h files under the product folders is read (in
C only comments and strings can hold these words).  Exit 1, naming
file:line, when one cites an issue, a seed or the notes; 0 with a count
otherwise.

  comments.py [ROOT]
"""
import os
import re
import sys

FOLDERS = ['sm', 'mad', 'routing', 'reconfig', 'traps']
CITES = re.compile(r'\bissues?[ -]#?\d+|\bseed 00\d|\bnotes §|\bthe notes\b',
                   re.IGNORECASE)


def main():
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
    bad = []
    n = 0
    for top in FOLDERS:
        for d, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(d, name)
                n += 1
                with open(path, encoding='utf-8') as fp:
                    for ln, line in enumerate(fp, 1):
                        m = CITES.search(line)
                        if m:
                            bad.append('%s:%d: cites "%s": %s'
                                       % (path, ln, m.group(0), line.strip()))
    for b in bad:
        print(b)
    if bad:
        print('comments: %d line(s) cite an issue, a seed or the notes'
              % len(bad))
        return 1
    print('comments: %d files, none cites an issue, a seed or the notes' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
