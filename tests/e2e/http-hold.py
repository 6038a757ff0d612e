#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds many connections open to an HTTP server on loopback without ever
completing a request, as a command attacking the agent's port would, and
reports what the server did with them.

  python3 http-hold.py PORT COUNT STATUS_FILE [SOURCES] [SECONDS]

Opens COUNT connections to 127.0.0.1:PORT from SOURCES loopback source
addresses (127.0.0.1, 127.0.0.2, ...; default 1), in turn of three kinds:
silent (sends nothing), partial (half a request line and a header, then
nothing) and trickle (the same, then one more header byte every half
second, so an idle timeout never fires). Keeps them until the server closes
them, SECONDS pass (default 120), or SIGTERM. STATUS_FILE is rewritten
every fifth of a second with a JSON object: opened, refused (connects that
failed), open, closed (by kind), and closed_after_ms (by kind, the least
and the most time from connect to the server's close)."""
import json
import os
import selectors
import signal
import socket
import sys
import time

KINDS = ("silent", "partial", "trickle")
PARTIAL = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def main():
    port, count, status_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    sources = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 120.0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    sel = selectors.DefaultSelector()
    conns = {}  # socket -> [kind, connected at]
    opened = refused = 0
    closed = {k: 0 for k in KINDS}
    after = {k: [] for k in KINDS}
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.%d" % (1 + i % sources), 0))
            s.settimeout(10)
            s.connect(("127.0.0.1", port))
            if kind != "silent":
                s.sendall(PARTIAL)
        except OSError:
            refused += 1
            s.close()
            continue
        s.setblocking(False)
        opened += 1
        conns[s] = [kind, time.monotonic()]
        sel.register(s, selectors.EVENT_READ)

    def write_status():
        tmp = status_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({
                "opened": opened, "refused": refused, "open": len(conns),
                "closed": closed,
                "closed_after_ms": {k: [min(v), max(v)] if v else None
                                    for k, v in after.items()},
            }, f)
        os.replace(tmp, status_path)

    start = last_status = last_trickle = time.monotonic()
    write_status()
    while conns and not stop and time.monotonic() - start < seconds:
        for key, _ in sel.select(0.1):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                continue
            kind, at = conns.pop(s)
            closed[kind] += 1
            after[kind].append(int((time.monotonic() - at) * 1000))
            sel.unregister(s)
            s.close()
        now = time.monotonic()
        if now - last_trickle >= 0.5:
            last_trickle = now
            for s, (kind, _) in conns.items():
                if kind == "trickle":
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
        if now - last_status >= 0.2:
            last_status = now
            write_status()
    write_status()
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()
