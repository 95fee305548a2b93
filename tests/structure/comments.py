#!/usr/bin/env python3
"""Comments explain the code from what is in the repository.

A comment, a test message or a docstring may cite the IBA specification,
a paper by its title, section, figure, table or algorithm, or the
project's own documents (ARCHITECTURE.md, README.md, DEVELOPERS.md,
tests/RESULTS.md, the man pages).  It may not cite what a future
maintainer will not have: an issue number ("issue 16", "issues 12"), a
seed document ("seed 001", "seed-003 notes") or the planning notes
("notes §5", "the notes' fix", "BRIEF-voqsw-spec.md").  Say instead what
the thing is, or why.

Read, every line:
  - the .c and .h files under the product folders sm/ mad/ routing/
    reconfig/ traps/ (in C only comments and strings can hold these
    words);
  - the .c, .h, .sh and .py files under tests/, except tests/structure/
    (this docstring has to name the words it forbids);
  - the scripts under etc/: the .sh files, the shell completion
    (*.bash-completion) and those without an extension that start with
    "#!" (etc/slurm/ibsmd-prolog).  Symbolic links are not read twice.
A citation broken over two lines ("issue" at the end of one, "17" at the
start of the next, after its comment marker) counts too.  The .md files
are documents, not comments: not read.

Exit 1, naming file:line, when one cites an issue, a seed or the notes;
0 with a count otherwise.

  comments.py [ROOT]
"""
import os
import re
import sys

PRODUCT = ['sm', 'mad', 'routing', 'reconfig', 'traps']
TESTS = 'tests'
SKIP = os.path.join('tests', 'structure')
ETC = 'etc'
CITES = re.compile(r"\bissues?[ -]#?\d+|\bseed[ -]00\d|\bnotes §|\bthe notes\b"
                   r"|\bnotes'|\bBRIEF-", re.IGNORECASE)
# what starts a comment's continuation line: C's " * ", "// ", shell's and
# Python's "# "
MARKER = re.compile(r'^\s*(?:\*+|//+|#+)?\s*')


def is_etc_script(path, name):
    if name.endswith(('.sh', '.bash-completion')):
        return True
    if '.' in name:
        return False
    with open(path, 'rb') as fp:
        return fp.read(2) == b'#!'


def files(top, want):
    for d, dirs, names in os.walk(top):
        dirs.sort()
        if d == SKIP or d.startswith(SKIP + os.sep):
            continue
        for name in sorted(names):
            path = os.path.join(d, name)
            if os.path.islink(path) or not want(path, name):
                continue
            yield path


def check(path, bad):
    with open(path, encoding='utf-8') as fp:
        lines = fp.read().split('\n')
    for i, line in enumerate(lines):
        m = CITES.search(line)
        if m:
            bad.append('%s:%d: cites "%s": %s'
                       % (path, i + 1, m.group(0), line.strip()))
            continue
        if i + 1 == len(lines):
            continue
        head = line.rstrip()
        tail = lines[i + 1]
        tail = tail[MARKER.match(tail).end():]
        for m in CITES.finditer(head + ' ' + tail):
            if m.start() < len(head) < m.end():
                bad.append('%s:%d: cites "%s" over two lines: %s'
                           % (path, i + 1, m.group(0), line.strip()))
                break


def main():
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
    paths = []
    for top in PRODUCT:
        paths += files(top, lambda p, n: n.endswith(('.c', '.h')))
    paths += files(TESTS, lambda p, n: n.endswith(('.c', '.h', '.sh', '.py')))
    paths += files(ETC, is_etc_script)
    bad = []
    for path in paths:
        check(path, bad)
    for b in bad:
        print(b)
    if bad:
        print('comments: %d line(s) cite an issue, a seed or the notes'
              % len(bad))
        return 1
    print('comments: %d files, none cites an issue, a seed or the notes'
          % len(paths))
    return 0


if __name__ == '__main__':
    sys.exit(main())
