#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-client.py — sriovd-placement's Placement client against a server that cuts its replies
# short, as a Placement that stops while it answers does. Each such reply must count as a
# Placement that is down, which the connector backs off from, and never as a bug that ends it.
#
#   test-client.py SOURCE_DIR
import os
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv[1]), "src", "placement"))
try:
    from oslo_config import cfg
    from sriovd_placement import config, placement
except ImportError as e:
    print(f"SKIP: {e.name or e} is not installed")
    sys.exit(77)

# A success whose body is shorter than its Content-Length says, then none at all.
REPLIES = [b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"resource_pro',
           b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n"]


def serve(sock, reply):
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        with conn:
            conn.recv(65536)
            conn.sendall(reply)


def main():
    for reply in REPLIES:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        threading.Thread(target=serve, args=(sock, reply), daemon=True).start()
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write(f"[placement]\nendpoint_override = http://127.0.0.1:{sock.getsockname()[1]}\ntimeout = 5\n")
            f.flush()
            conf = cfg.ConfigOpts()
            config.register(conf)
            conf(["--config-file", f.name], project="sriovd", default_config_files=[])
            client = placement.Placement(config.adapter(conf))
        try:
            client.tree("6a0d1e52-3c1b-4a8e-9d57-2f5c8e7b4a10")
        except placement.Down as e:
            print(f"ok: a reply cut short is Placement down: {e}")
        else:
            raise AssertionError(f"a reply cut short was taken for an answer: {reply!r}")
        sock.close()


main()
