#!/usr/bin/env python3
"""Reads the status page's DOM (chromium --dump-dom) as a reader sees it.

  page_text.py FILE state       the SM's state (the "state" row)
  page_text.py FILE unhealthy   one line "NODE PORT" per unhealthy port

Exit 1 with the reason when the page lacks the part asked for.
"""
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    """Rows of the tables, each under the last h2/h3 heading seen."""

    def __init__(self):
        super().__init__()
        self.heading = None
        self.in_heading = False
        self.rows = []          # (heading, [cell texts])
        self.row = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        if tag in ('h2', 'h3'):
            self.in_heading = True
            self.heading = ''
        elif tag == 'tr':
            self.row = []
        elif tag in ('td', 'th') and self.row is not None:
            self.cell = ''

    def handle_endtag(self, tag):
        if tag in ('h2', 'h3'):
            self.in_heading = False
        elif tag in ('td', 'th') and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == 'tr' and self.row is not None:
            self.rows.append((self.heading, self.row))
            self.row = None

    def handle_data(self, data):
        if self.in_heading:
            self.heading += data
        elif self.cell is not None:
            self.cell += data


def main():
    p = Page()
    p.feed(open(sys.argv[1], encoding='utf-8').read())
    what = sys.argv[2]
    if what == 'state':
        for h, r in p.rows:
            if h == 'Subnet manager' and len(r) == 2 and r[0] == 'state':
                print(r[1])
                return 0
        print('no state row under "Subnet manager"')
        return 1
    if what == 'unhealthy':
        rows = [r for h, r in p.rows if h == 'Unhealthy ports' and r and r[0] != 'node']
        for r in rows:
            print(r[0], r[1] if len(r) > 1 else '?')
        return 0 if rows else 1
    print('what: state or unhealthy')
    return 1


if __name__ == '__main__':
    sys.exit(main())
