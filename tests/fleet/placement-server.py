#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# placement-server.py — the real OpenStack Placement under a threaded wsgiref server on 127.0.0.1.
#
#   placement-server.py CONFIG_DIR PORT REQUEST_LOG
#
# CONFIG_DIR holds placement.conf (noauth2, an SQLite database). Every request is appended to
# REQUEST_LOG as one line, "START WAITED SERVED CALLER METHOD PATH STATUS" (seconds since the
# epoch, then seconds queued and seconds served), before its reply is sent.
# CALLER is the project of the noauth2 token ("admin:host-3" gives "host-3"), so the fleet test
# counts each client's requests at the server. The line is written before the reply, so a
# kill -9 never loses a request that a client saw answered. "READY PORT" on stdout says that the
# server listens; after it, stdout goes where stderr goes.
#
# Requests are served one at a time. SQLite takes one writer at a time, and two transactions
# that both read and then write fail at once with "database is locked" instead of waiting.
# So this is one Placement worker; a production Placement runs several on MySQL.
import faulthandler
import os
import signal
import sys
import threading
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # A restart binds the port that the clients know, while the killed server's sockets linger.
    allow_reuse_address = True


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Counted:
    """WSGI middleware: one line per request in the request log."""

    def __init__(self, app, path):
        self.app = app
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.lock = threading.Lock()
        self.worker = threading.Lock()

    def __call__(self, environ, start_response):
        start = time.time()
        token = environ.get("HTTP_X_AUTH_TOKEN", "")
        caller = token.partition(":")[2] or token or "-"
        path = environ.get("PATH_INFO", "")
        if environ.get("QUERY_STRING"):
            path += "?" + environ["QUERY_STRING"]
        status = []

        def start_counted(st, headers, exc_info=None):
            status.append(st.split()[0])
            return start_response(st, headers, exc_info)

        with self.worker:
            served = time.time()
            body = list(self.app(environ, start_counted))
            end = time.time()
        line = "%.6f %.6f %.6f %s %s %s %s\n" % (start, served - start, end - served, caller,
                                                  environ["REQUEST_METHOD"], path.replace(" ", "%20"),
                                                  status[0] if status else "-")
        with self.lock:
            os.write(self.fd, line.encode())
        return body


def main():
    config_dir, port, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    # SIGUSR1 prints every thread's stack to stderr: what a stuck request waits for.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    os.environ["OS_PLACEMENT_CONFIG_DIR"] = config_dir
    from placement import wsgi
    app = Counted(wsgi.init_application(), log_path)
    server = make_server("127.0.0.1", port, app, Server, Quiet)
    print("READY %d" % server.server_address[1], flush=True)
    # Placement logs every request on stdout: a pipe that nobody reads would stall it once full.
    os.dup2(2, 1)
    server.serve_forever()


if __name__ == "__main__":
    main()
