#!/usr/bin/env python3
"""A stand-in for ibsmd's control socket, to test what ibsmctl sends and
how it prints a reply without a daemon: answers each request line on
SOCKET with REPLY (a JSON file), appends the request to LOG, and exits
after COUNT requests or 30 s.

  fakectl.py SOCKET REPLY LOG COUNT
"""
import json
import os
import socket
import sys


def main():
    path, reply_file, log, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(reply_file) as fp:
        reply = json.dumps(json.load(fp)) + '\n'
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    srv.settimeout(30)
    for _ in range(count):
        conn, _ = srv.accept()
        conn.settimeout(10)
        buf = b''
        while not buf.endswith(b'\n'):
            chunk = conn.recv(4096)
            if not chunk:
                break
            buf += chunk
        with open(log, 'a') as fp:
            fp.write(buf.decode())
        if buf:
            conn.sendall(reply.encode())
        conn.close()


if __name__ == '__main__':
    main()
