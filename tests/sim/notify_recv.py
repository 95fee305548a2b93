#!/usr/bin/env python3
"""notify_recv: a stand-in for systemd's NOTIFY_SOCKET.

    notify_recv.py SOCKET LOG

Binds the datagram socket SOCKET and appends every sd_notify(3) message to
LOG, one assignment per line ("READY=1", "STATUS=..."), each message
followed by a line "--".  Runs until killed.
"""

import os
import socket
import sys


def main(path, log):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    with open(log, "a", buffering=1) as out:
        while True:
            msg = s.recv(65536).decode("utf-8", "replace")
            out.write(msg.rstrip("\n") + "\n--\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
