#!/usr/bin/env python3
"""The include rules of the product folders (ARCHITECTURE.md, "Layers").

Every #include "..." of a product file names a path from the top of the
tree (the build's -I.).  A folder may include only the folders its rule
lists; a folder's subfolders take its rule unless they have their own.
Exit 1, naming file:line and the rule, when an include breaks a rule or
does not name an existing file; 0 with a count otherwise.

  layers.py [ROOT]
"""
import os
import re
import sys

LOWER = ['mad', 'routing', 'reconfig', 'traps']
SM_LOW = ['sm/base', 'sm/model']
# folder -> the folders its files may include.  The longest folder that
# is a prefix of a file's folder gives its rule.
RULES = {
    # the bottom layer: the fabric model, topology files, the log, atomic
    # files, node names, CPUs and worker threads
    'sm/base': ['sm/base'],
    # MADs know nothing of routing, routing nothing of MADs
    'mad': ['mad', 'sm/base'],
    'routing': ['routing', 'sm/base'],
    'reconfig': ['reconfig', 'routing', 'sm/base'],
    'traps': ['traps', 'mad', 'routing', 'sm/base'],
    # the policy and the pure models: no daemon, no owner above them
    'sm/model': LOWER + SM_LOW,
    'sm/render': LOWER + SM_LOW + ['sm/render'],
    # a translator of other SMs' files into a policy: no daemon
    'sm/import': LOWER + SM_LOW + ['sm/import'],
    # the performance manager's pure part: counter arithmetic, health
    # verdicts, the fabric baseline; the owner on the loop is sm/perfmgr.c
    'sm/perf': LOWER + SM_LOW + ['sm/perf'],
    # the offline job replay's pure part: SWF traces, the tree allocator,
    # the event simulation; the driver is sm/offjobs.c
    'sm/jobsim': LOWER + SM_LOW + ['sm/jobsim'],
    'sm/discover': LOWER + SM_LOW + ['sm/discover', 'sm/write'],
    'sm/write': LOWER + SM_LOW + ['sm/discover', 'sm/write'],
    # ibsmctl is a client: its own folder and the protocol header
    'sm/ibsmctl': ['sm/ibsmctl', 'sm/base'],
    # the owners on the loop may include anything of the product
    'sm': LOWER + ['sm'],
}
# Single files a rule names on top of its folders.
EXTRA = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rule_of(folder):
    best = None
    for r in RULES:
        if folder == r or folder.startswith(r + '/'):
            if best is None or len(r) > len(best):
                best = r
    return best


def allowed(rule, target):
    tdir = os.path.dirname(target)
    return any(tdir == a or tdir.startswith(a + '/') for a in RULES[rule]) \
        or target in EXTRA.get(rule, [])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.chdir(root)
    bad = []
    n = 0
    for top in ['sm', 'mad', 'routing', 'reconfig', 'traps']:
        for d, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(d, name)
                rule = rule_of(d)
                if rule is None:
                    bad.append('%s: folder %s has no rule' % (path, d))
                    continue
                with open(path) as fp:
                    for ln, line in enumerate(fp, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        n += 1
                        inc = m.group(1)
                        if not os.path.isfile(inc):
                            bad.append('%s:%d: "%s" is not a path from the '
                                       'top of the tree' % (path, ln, inc))
                        elif not allowed(rule, inc):
                            bad.append('%s:%d: includes %s; %s/ may include '
                                       'only %s' % (path, ln, inc, rule,
                                                    ', '.join(RULES[rule])))
    for b in bad:
        print(b)
    if bad:
        print('layers: %d include(s) break the rules' % len(bad))
        return 1
    print('layers: %d includes, every one within its folder\'s rule' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
