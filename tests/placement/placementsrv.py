# SPDX-License-Identifier: LGPL-2.1-or-later
# placementsrv.py — the real OpenStack Placement (python3-placement) for tests: SQLite, noauth2 or
# Keystone, under the standard library's WSGI server on 127.0.0.1, with TLS when given a
# certificate, in a process of its own so that a test can stop it and start it again on the same
# database and port.
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SERVE = r"""
import os, sys, logging
# Standard output carries "ready" only; the logs (oslo.log writes to stdout) go to the log file.
ready = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
from wsgiref import simple_server
logging.basicConfig(level=logging.WARNING)
from placement import wsgi
app = wsgi.init_application()

class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass

# PLACEMENT_ACCESS_LOG=FILE: one line per request, "METHOD PATH STATUS", for counting requests.
access = os.environ.get("PLACEMENT_ACCESS_LOG")
if access:
    out = open(access, "a", buffering=1)
    inner = app

    def app(environ, start_response):
        def start(status, headers, exc_info=None):
            out.write(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']} {status.split()[0]}\n")
            return start_response(status, headers, exc_info)
        return inner(environ, start)

class Server(simple_server.WSGIServer):
    allow_reuse_address = True

srv = simple_server.make_server("127.0.0.1", int(sys.argv[1]), app, server_class=Server, handler_class=Quiet)
if len(sys.argv) > 2:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[2], sys.argv[3])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready", file=ready, flush=True)
srv.serve_forever()
"""


def available():
    """None when python3-placement can run here, else why not."""
    try:
        import placement  # noqa: F401
    except ImportError:
        return "python3-placement is not installed"
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Placement:
    """auth: the [api] and [keystone_authtoken] sections for Keystone, else noauth2; tls: the
    (certificate, key) files to serve HTTPS with."""

    def __init__(self, tmp, port=None, auth=None, tls=None):
        self.dir = os.path.join(tmp, "placement")
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.tls = tls
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        conf = os.path.join(self.dir, "placement.conf")
        with open(conf, "w") as f:
            f.write((auth or "[api]\nauth_strategy = noauth2\n") + "[placement_database]\n"
                    f"connection = sqlite:///{self.dir}/placement.db\n")
        self.env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=self.dir)
        subprocess.run([sys.executable, "-c", "import sys; from placement.cmd import manage; "
                        "sys.exit(manage.main())", "--config-file", conf, "db", "sync"],
                       env=self.env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.proc = None
        self.start()

    def start(self):
        self.log = open(os.path.join(self.dir, "stderr"), "a")
        self.proc = subprocess.Popen([sys.executable, "-c", SERVE, str(self.port), *(self.tls or ())], env=self.env,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            self.log.close()
            with open(self.log.name) as f:
                raise RuntimeError("placement did not start:\n" + f.read()[-3000:])
        if self.tls:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.get("/")
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("placement does not answer")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def request(self, method, path, body=None, version="1.39"):
        """(status, JSON body or None)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("X-Auth-Token", "admin")
        req.add_header("OpenStack-API-Version", "placement " + version)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")

    def get(self, path):
        status, body = self.request("GET", path)
        assert status == 200, (path, status, body)
        return body

    def conf_section(self):
        """The [placement] section a connector needs to reach this Placement."""
        return f"[placement]\nauth_type = admin_token\nendpoint = {self.url}\ntoken = admin\n"
