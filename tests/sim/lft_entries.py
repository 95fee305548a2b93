#!/usr/bin/env python3
"""lft_entries.py DUMP: the (switch GUID, LID -> port) entries of a `dump_fts -n`
style dump (infiniband-diags, or `ibsmd --dump-lfts`), one "GUID LID PORT" line
each, sorted: two dumps are equal when these lines are, whatever the order or
the DR-path text in the headers."""
import re
import sys

RE_HEAD = re.compile(r'^Unicast lids .*\bguid\s+(0x[0-9a-fA-F]+)')
RE_ENTRY = re.compile(r'^0x([0-9a-fA-F]+)\s+(\d+)\b')


def main():
    if len(sys.argv) != 2:
        print("usage: lft_entries.py DUMP", file=sys.stderr)
        return 2
    guid = None
    out = []
    with open(sys.argv[1]) as fp:
        for line in fp:
            m = RE_HEAD.match(line)
            if m:
                guid = int(m.group(1), 16)
                continue
            m = RE_ENTRY.match(line)
            if m and guid is not None:
                out.append((guid, int(m.group(1), 16), int(m.group(2))))
    out.sort()
    sys.stdout.writelines("0x%016x %d %d\n" % e for e in out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
