#!/usr/bin/env python3
"""Misbehaving clients for ibsmd's control socket (tests/sim/t_control.sh).

  ctlhammer.py idle SOCK N
      opens N connections that send nothing, prints "open N" once they are
      all connected, holds them until stdin closes, then prints how many
      the daemon had closed ("closed K").

  ctlhammer.py hammer SOCK PID [--clients 20] [--first 1000]
                                [--requests 10000]
      20 clients at once: valid requests (a persistent connection, new every
      50 requests), random bytes, requests cut off by a disconnect, and
      clients that send requests and never read the replies.  "requests"
      counts the valid requests answered; the daemon's VmRSS
      (/proc/PID/status) is read after --first and after --requests of
      them.  The valid clients start a second after the others, once
      those have their connections open (the memory they hold).  Prints one JSON document; exit 1 when a valid request went
      unanswered or got something that is not a JSON reply, when the
      daemon went away, or when the second RSS is more than 5% above the
      first.
"""
import json
import os
import random
import socket
import sys
import threading
import time

REPLY_TIMEOUT = 10.0
WARMUP = 1.0


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(REPLY_TIMEOUT)
    s.connect(path)
    return s


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


class Hammer:
    def __init__(self, path, pid):
        self.path = path
        self.pid = pid
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.answered = 0
        self.counts = {"garbage_bytes": 0, "cut_requests": 0,
                       "unread_requests": 0, "dropped_by_daemon": 0,
                       "connect_failures": 0}
        self.errors = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def error(self, msg):
        with self.lock:
            if len(self.errors) < 20:
                self.errors.append(msg)
        self.stop.set()

    def open(self):
        try:
            return connect(self.path)
        except OSError:
            # a full backlog under load: count it, try again
            self.add("connect_failures")
            time.sleep(0.01)
            return None

    def valid(self, rng):
        cmds = [b'{"cmd":"status"}\n', b'{"cmd":"subscribers"}\n',
                b'{"cmd":"nosuchcommand"}\n', b'{"cmd":"status"}\n']
        while not self.stop.is_set():
            s = self.open()
            if s is None:
                continue
            buf = b""
            try:
                for _ in range(50):
                    if self.stop.is_set():
                        break
                    s.sendall(rng.choice(cmds))
                    while b"\n" not in buf:
                        chunk = s.recv(65536)
                        if not chunk:
                            raise OSError("EOF instead of a reply")
                        buf += chunk
                    line, buf = buf.split(b"\n", 1)
                    reply = json.loads(line)
                    if not isinstance(reply, dict) or "ok" not in reply:
                        raise ValueError("not a reply: %r" % line[:200])
                    with self.lock:
                        self.answered += 1
            except (OSError, ValueError) as e:
                self.error("valid client: %s" % e)
            finally:
                s.close()

    def garbage(self, rng):
        while not self.stop.is_set():
            s = self.open()
            if s is None:
                continue
            s.setblocking(False)
            try:
                for _ in range(20):
                    data = bytes(rng.getrandbits(8)
                                 for _ in range(rng.randint(64, 4096)))
                    try:
                        s.send(data)
                        self.add("garbage_bytes", len(data))
                        while s.recv(65536):
                            pass
                    except BlockingIOError:
                        pass
                    time.sleep(0.002)
            except OSError:
                self.add("dropped_by_daemon")
            finally:
                s.close()

    def cut(self, rng):
        req = b'{"cmd":"status"}\n'
        while not self.stop.is_set():
            s = self.open()
            if s is None:
                continue
            try:
                s.sendall(req[:rng.randint(1, len(req) - 1)])
                self.add("cut_requests")
            except OSError:
                pass
            s.close()
            time.sleep(0.002)

    def nonreader(self, rng):
        held = []
        while not self.stop.is_set():
            s = self.open()
            if s is None:
                continue
            s.setblocking(False)
            sent = 0
            try:
                for _ in range(200):
                    s.send(b'{"cmd":"status"}\n')
                    sent += 1
            except BlockingIOError:
                pass  # the daemon stopped reading us: as it should
            except OSError:
                self.add("dropped_by_daemon")
            self.add("unread_requests", sent)
            held.append(s)
            if len(held) > 2:
                held.pop(0).close()
            self.stop.wait(0.2)
        for s in held:
            s.close()

    def run(self, nclients, first, total):
        kinds = [self.valid, self.valid, self.garbage, self.cut,
                 self.nonreader]
        only = os.environ.get("HAMMER_ONLY")  # e.g. "valid,cut": diagnosis
        if only:
            kinds = [k if k.__name__ in only.split(",") else self.valid
                     for k in kinds]
        threads = []
        for i in range(nclients):
            rng = random.Random(i)
            t = threading.Thread(target=kinds[i % len(kinds)], args=(rng,),
                                 daemon=True)
            threads.append(t)
        # The misbehaving clients first: they hold the most memory (up to
        # the server's OUT_HIGH per non-reading connection) once each of
        # them has its connections open; the valid requests, and so the
        # two RSS readings, start when they have (WARMUP seconds).
        start = time.monotonic()
        for i, t in enumerate(threads):
            if kinds[i % len(kinds)] != self.valid:
                t.start()
        trace = []
        if os.environ.get("HAMMER_TRACE"):  # (requests, VmRSS) every 50 ms
            def tracer():
                while not self.stop.wait(0.05):
                    trace.append((self.answered, rss_kb(self.pid)))
            threading.Thread(target=tracer, daemon=True).start()
        self.stop.wait(WARMUP)
        for i, t in enumerate(threads):
            if kinds[i % len(kinds)] == self.valid:
                t.start()
        rss = []
        for mark in (first, total):
            while not self.stop.is_set() and self.answered < mark:
                time.sleep(0.01)
                if not os.path.exists("/proc/%d" % self.pid):
                    self.error("the daemon went away")
            if self.stop.is_set():
                break
            rss.append(rss_kb(self.pid))
        elapsed = time.monotonic() - start
        self.stop.set()
        for t in threads:
            t.join(REPLY_TIMEOUT + 5)
        out = {"clients": nclients, "requests": self.answered,
               "seconds": round(elapsed, 2), "rss_kb": rss}
        out.update(self.counts)
        ok = not self.errors and len(rss) == 2
        if ok:
            out["rss_growth_pct"] = round(100.0 * (rss[1] - rss[0]) / rss[0], 2)
            ok = rss[1] <= rss[0] * 1.05
        out["errors"] = self.errors
        if trace:
            out["trace"] = trace
        print(json.dumps(out))
        return 0 if ok else 1


def connect_retrying(path):
    # AF_UNIX: EAGAIN while the listen backlog is full
    deadline = time.monotonic() + REPLY_TIMEOUT
    while True:
        try:
            return connect(path)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def idle(path, n):
    socks = [connect_retrying(path) for _ in range(n)]
    print("open %d" % n, flush=True)
    sys.stdin.read()
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            while True:
                if not s.recv(65536):
                    closed += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print("closed %d" % closed, flush=True)
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "idle":
        return idle(argv[1], int(argv[2]))
    if len(argv) >= 3 and argv[0] == "hammer":
        opts = {"--clients": 20, "--first": 1000, "--requests": 10000}
        rest = argv[3:]
        while rest:
            if rest[0] not in opts or len(rest) < 2:
                break
            opts[rest[0]] = int(rest[1])
            rest = rest[2:]
        if not rest:
            h = Hammer(argv[1], int(argv[2]))
            return h.run(opts["--clients"], opts["--first"],
                         opts["--requests"])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
