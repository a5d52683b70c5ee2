#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# placementsrv.py — the real OpenStack Placement (python3-placement) for tests.
#
# Placement runs on an SQLite database under a threaded wsgiref server on 127.0.0.1, with noauth2
# or Keystone, and with TLS when given a certificate. It runs in a child process, so that a test
# can stop it, kill it and start it again on the same database and port. Run as a script, this
# file is that child:
#
#   placementsrv.py CONFIG_DIR PORT REQUEST_LOG [CERT KEY]
#
# CONFIG_DIR holds placement.conf. Every request is appended to REQUEST_LOG as one line,
# "START WAITED SERVED CALLER METHOD PATH STATUS" (seconds since the epoch, then seconds queued
# and seconds served), before its reply is sent. CALLER is the project of the noauth2 token
# ("admin:host-3" gives "host-3"), so a test counts each client's requests at the server. The
# line is written before the reply, so a kill -9 never loses a request that a client saw
# answered. "READY PORT" is the only line on stdout, and it says that the server listens.
#
# Requests are served one at a time. SQLite takes one writer at a time, and two transactions
# that both read and then write fail at once with "database is locked" instead of waiting.
# So this is one Placement worker; a production Placement runs several on MySQL.
import faulthandler
import http.client
import importlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

PYTHON = "/usr/bin/python3"
MICROVERSION = "1.39"
NOAUTH = "[api]\nauth_strategy = noauth2\n"


def missing():
    """Why the real Placement cannot run here, or None."""
    r = subprocess.run([PYTHON, "-c", "import placement.wsgi, placement.cmd.manage"],
                       capture_output=True, text=True)
    if r.returncode:
        return "python3-placement is not installed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return None


def why_not(programs=(), modules=()):
    """Why a test of Placement cannot run here, or None: Placement, then each program and module."""
    why = missing()
    if why:
        return why
    for prog in programs:
        if not shutil.which(prog):
            return f"{prog} is not installed"
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            return f"{e.name or module} is not installed"
    return None


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def die_with_parent():
    """In a child before exec: SIGKILL when the harness dies, so that nothing outlives a killed test."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


class Placement:
    """The real Placement service in a child process, on an SQLite database in work.

    auth: the [api] and [keystone_authtoken] sections for Keystone, else noauth2; tls: the
    (certificate, key) files to serve HTTPS with. The first start() creates the database and
    picks a free port; later starts reuse both."""

    def __init__(self, work, auth=None, tls=None):
        self.dir = os.path.join(work, "placement")
        os.makedirs(self.dir, exist_ok=True)
        self.db = os.path.join(self.dir, "placement.db")
        self.conf = os.path.join(self.dir, "placement.conf")
        self.log_path = os.path.join(self.dir, "requests.log")
        self.stderr_path = os.path.join(self.dir, "stderr")
        self.tls = tls
        with open(self.conf, "w") as f:
            f.write(f"[DEFAULT]\ndebug = false\n\n{auth or NOAUTH}\n"
                    f"[placement_database]\nconnection = sqlite:///{self.db}\n")
        self.proc = None
        self.port = 0
        self.starts = 0
        self.admin = None

    def sync(self):
        r = subprocess.run([PYTHON, "-c", "import sys; from placement.cmd import manage; "
                            "sys.argv = ['placement-manage', '--config-file', sys.argv[1], 'db', 'sync']; "
                            "sys.exit(manage.main())", self.conf], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"placement-manage db sync failed: {r.stderr.strip()[-500:]}")

    def start(self, timeout=90.0):
        """Start the server and wait until it answers."""
        if not self.starts:
            self.sync()
        self.starts += 1
        err = open(self.stderr_path, "a")
        self.proc = subprocess.Popen([PYTHON, os.path.abspath(__file__), self.dir, str(self.port), self.log_path,
                                      *(self.tls or ())],
                                     stdout=subprocess.PIPE, stderr=err, text=True,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1"), preexec_fn=die_with_parent)
        err.close()
        deadline = time.monotonic() + timeout
        line = self._readline(deadline)
        # The server writes nothing more on stdout: no pipe is left for nobody to read.
        self.proc.stdout.close()
        if not line.startswith("READY "):
            with open(self.stderr_path) as f:
                raise RuntimeError(f"Placement did not start: {line!r}; {self.stderr_path}:\n{f.read()[-3000:]}")
        self.port = int(line.split()[1])
        self.admin = Client(self.url, "admin")
        # This client speaks plain HTTP; over TLS, READY is the only sign of life.
        while not self.tls:
            try:
                if self.admin.get("/")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("Placement does not answer GET /")
            time.sleep(0.2)

    def _readline(self, deadline):
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if r:
                return self.proc.stdout.readline().strip()
            if self.proc.poll() is not None:
                return f"exited with status {self.proc.returncode}"
        return "no READY line in time"

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def client(self, caller, timeout=30.0):
        """A client whose requests the request log counts as caller's."""
        return Client(self.url, "admin:" + caller, timeout)

    def request(self, method, path, body=None, version=MICROVERSION):
        """(status, JSON body or text), as the admin."""
        return self.admin.request(method, path, body, version)

    def get(self, path):
        status, body = self.request("GET", path)
        assert status == 200, (path, status, body)
        return body

    def conf_section(self):
        """The [placement] section a connector needs to reach this Placement."""
        return f"[placement]\nauth_type = admin_token\nendpoint = {self.url}\ntoken = admin\n"

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self):
        """kill -9; returns the signal that ended it (SIGKILL when the kill took effect)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        return -self.proc.returncode

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def requests(self):
        """Every request the server saw: (start, seconds served, caller, method, path, status, seconds queued)."""
        out = []
        try:
            with open(self.log_path) as f:
                for line in f:
                    p = line.split()
                    if len(p) == 7:
                        out.append((float(p[0]), float(p[2]), p[3], p[4], p[5], p[6], float(p[1])))
        except FileNotFoundError:
            pass
        return out


class Client:
    """Blocking JSON requests to Placement over HTTP; (status, body) for each."""

    def __init__(self, url, token, timeout=30.0):
        self.host, self.port = url[len("http://"):].split(":")
        self.token, self.timeout = token, timeout
        self.requests = 0

    def request(self, method, path, body=None, microversion=MICROVERSION):
        self.requests += 1
        conn = http.client.HTTPConnection(self.host, int(self.port), timeout=self.timeout)
        headers = {"X-Auth-Token": self.token, "Accept": "application/json",
                   "OpenStack-API-Version": "placement " + microversion}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, data, headers)
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:
            doc = raw.decode(errors="replace")
        return r.status, doc

    def get(self, path):
        return self.request("GET", path)

    def ok(self, method, path, body=None, codes=(200, 201, 204)):
        """The body of a request that must succeed; RuntimeError naming the request otherwise."""
        status, doc = self.request(method, path, body)
        if status not in codes:
            raise RuntimeError(f"{method} {path}: {status} {doc}")
        return doc


# ---- the server, in the child ----

def serve(config_dir, port, log_path, tls=None):
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        # A restart binds the port that the clients know, while the killed server's sockets linger.
        allow_reuse_address = True

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    # Placement logs every request on stdout: a pipe that nobody reads would stall it once full.
    # So stdout goes where stderr goes, and only READY goes to the pipe.
    ready = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    # SIGUSR1 prints every thread's stack to stderr: what a stuck request waits for.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    os.environ["OS_PLACEMENT_CONFIG_DIR"] = config_dir
    from placement import wsgi
    app = Counted(wsgi.init_application(), log_path)
    server = make_server("127.0.0.1", port, app, Server, Quiet)
    if tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print("READY %d" % server.server_address[1], file=ready, flush=True)
    ready.close()
    server.serve_forever()


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


if __name__ == "__main__":
    a = sys.argv[1:]
    serve(a[0], int(a[1]), a[2], tuple(a[3:5]) or None)
