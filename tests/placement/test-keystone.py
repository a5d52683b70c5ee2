#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-keystone.py — sriovd-placement authenticates as nova-compute does, against Debian's real
# Keystone: Keystone v3 with a password, then with an application credential, Placement's
# endpoint from the service catalog, and Placement over HTTPS checked with a CA file. A wrong
# secret is logged and retried, never fatal.
#
# sriovd's side is the real sriovd on a fixture host with a private bus (sriovdhost.py). This
# test is about the Placement side.
#
#   test-keystone.py SOURCE_DIR SRIOVD
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.abspath(sys.argv[1])
for d in ("tests/lib", "tests/dbus", "src/placement"):
    sys.path.insert(0, os.path.join(SOURCE, d))
import placementsrv  # noqa: E402

why = placementsrv.why_not(("dbus-daemon", "keystone-manage", "openssl"),
                          ("keystone", "keystoneauth1", "gi.repository.Gio"))
if why:
    print(f"SKIP: {why}")
    sys.exit(77)
from keystoneauth1 import session as ks_session  # noqa: E402
from keystoneauth1.identity import v3  # noqa: E402

import sriovdhost  # noqa: E402

CN_NAME, CN_UUID = "host-k", "7d3e0f52-41a7-4c0e-8b51-2f9e4d1c6a02"
PF0 = "0000:41:00.0"
ADMIN_PASSWORD, AGENT_PASSWORD = "admin-secret", "agent-secret"
SERVE_KEYSTONE = r"""
import os, sys
from wsgiref import simple_server
port = int(sys.argv[1])
os.environ["OS_KEYSTONE_CONFIG_FILES"] = sys.argv[2]
sys.argv = sys.argv[:1]
from keystone.server import wsgi
app = wsgi.initialize_public_application()

class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass

srv = simple_server.make_server("127.0.0.1", port, app, handler_class=Quiet)
print("ready", flush=True)
srv.serve_forever()
"""


def wait_until(pred, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except Exception:
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Keystone:
    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "keystone")
        os.makedirs(self.dir)
        self.port = placementsrv.free_port()
        self.url = f"http://127.0.0.1:{self.port}/v3"
        self.conf = os.path.join(self.dir, "keystone.conf")
        with open(self.conf, "w") as f:
            f.write(f"[DEFAULT]\nuse_stderr = true\n[database]\nconnection = sqlite:///{self.dir}/keystone.db\n"
                    f"[token]\nprovider = fernet\n[fernet_tokens]\nkey_repository = {self.dir}/fernet-keys\n"
                    f"[fernet_receipts]\nkey_repository = {self.dir}/fernet-keys\n"
                    f"[credential]\nkey_repository = {self.dir}/credential-keys\n")
        user = ["--keystone-user", str(os.geteuid()), "--keystone-group", str(os.getegid())]
        log = open(os.path.join(self.dir, "manage.log"), "w")
        for args in (["db_sync"], ["fernet_setup", *user], ["credential_setup", *user],
                     ["bootstrap", "--bootstrap-password", ADMIN_PASSWORD, "--bootstrap-region-id", "RegionOne",
                      "--bootstrap-public-url", self.url, "--bootstrap-internal-url", self.url]):
            subprocess.run(["keystone-manage", "--config-file", self.conf, *args], check=True, stdout=log, stderr=log)
        # Write-ahead logging: a request's open read must not lock the next request's write out.
        db = sqlite3.connect(os.path.join(self.dir, "keystone.db"))
        db.execute("PRAGMA journal_mode=WAL")
        db.close()
        self.log = open(os.path.join(self.dir, "stderr"), "w")
        self.proc = subprocess.Popen([sys.executable, "-c", SERVE_KEYSTONE, str(self.port), self.conf],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.proc.stdout.readline().strip() == "ready", "keystone did not start"

    def session(self, username, password, project, cafile=None):
        auth = v3.Password(auth_url=self.url, username=username, password=password, project_name=project,
                           user_domain_id="default", project_domain_id="default")
        return ks_session.Session(auth=auth, verify=cafile or True)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def make_ca(d):
    """A CA and a certificate for 127.0.0.1 that it signed: (ca.pem, server.pem, server.key)."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=sriovd test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName = IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
    return tuple(os.path.join(d, n) for n in ("ca.pem", "server.pem", "server.key"))


def main():
    tmp = tempfile.mkdtemp(prefix="sriovd-keystone-test-")
    ks = pl = host = conn = None
    logs = []
    try:
        ca, cert, key = make_ca(tmp)
        ks = Keystone(tmp)
        admin = ks.session("admin", ADMIN_PASSWORD, "admin")
        ident = {"service_type": "identity", "interface": "public"}

        def post(path, body):
            return admin.post(path, json=body, endpoint_filter=ident).json()

        def get(path):
            return admin.get(path, endpoint_filter=ident).json()

        service_project = post("/projects", {"project": {"name": "service", "domain_id": "default"}})["project"]
        agent = post("/users", {"user": {"name": "sriovd-agent", "password": AGENT_PASSWORD,
                                         "domain_id": "default"}})["user"]
        admin_role = get("/roles?name=admin")["roles"][0]
        admin.put(f"/projects/{service_project['id']}/users/{agent['id']}/roles/{admin_role['id']}",
                  endpoint_filter=ident)

        # Placement behind Keystone's auth_token middleware, over HTTPS, in the catalog.
        auth = (f"[api]\nauth_strategy = keystone\n[keystone_authtoken]\nwww_authenticate_uri = {ks.url}\n"
                f"auth_url = {ks.url}\nauth_type = password\nusername = admin\npassword = {ADMIN_PASSWORD}\n"
                f"project_name = admin\nuser_domain_id = default\nproject_domain_id = default\n")
        pl = placementsrv.Placement(tmp, auth=auth, tls=(cert, key))
        pl.start()
        svc = post("/services", {"service": {"type": "placement", "name": "placement"}})["service"]
        for interface in ("public", "internal"):
            post("/endpoints", {"endpoint": {"service_id": svc["id"], "interface": interface, "url": pl.url,
                                             "region_id": "RegionOne"}})
        admin_pl = ks.session("admin", ADMIN_PASSWORD, "admin", cafile=ca)
        plf = {"service_type": "placement", "interface": "public"}
        hdr = {"OpenStack-API-Version": "placement 1.39"}
        r = admin_pl.post("/resource_providers", json={"name": CN_NAME, "uuid": CN_UUID}, endpoint_filter=plf,
                          headers=hdr)
        assert r.status_code == 200, r.text

        def providers():
            return admin_pl.get(f"/resource_providers?in_tree={CN_UUID}", endpoint_filter=plf,
                                headers=hdr).json()["resource_providers"]

        host = sriovdhost.Host(tmp, SOURCE, sys.argv[2])

        def connector(name, placement_section):
            path = os.path.join(tmp, name + ".conf")
            with open(path, "w") as f:
                f.write(f"[placement]\nauth_url = {ks.url}\nregion_name = RegionOne\nvalid_interfaces = internal\n"
                        f"cafile = {ca}\ntimeout = 10\n{placement_section}"
                        f"[sriovd]\ncompute_node = {CN_NAME}\nbus_address = {host.bus.address}\n"
                        f"poll_interval = 0.5\n")
            log = os.path.join(tmp, name + ".log")
            logs.append(log)
            env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "src", "placement"))
            env.pop("JOURNAL_STREAM", None)
            return subprocess.Popen([sys.executable, "-m", "sriovd_placement", "--config-file", path], env=env,
                                    stdout=open(log, "w"), stderr=subprocess.STDOUT)

        # Keystone v3 with a password; the endpoint from the catalog; TLS checked with the CA file.
        conn = connector("password", f"auth_type = password\nusername = sriovd-agent\npassword = {AGENT_PASSWORD}\n"
                                     "user_domain_name = Default\nproject_name = service\n"
                                     "project_domain_name = Default\n")
        wait_until(lambda: any(rp["name"] == f"{CN_NAME}:sriovd:{PF0}" for rp in providers()),
                   "the PF provider, created with a password")
        rp0 = next(rp["uuid"] for rp in providers() if rp["name"].endswith(PF0))

        def inventories():
            return admin_pl.get(f"/resource_providers/{rp0}/inventories", endpoint_filter=plf,
                                headers=hdr).json()["inventories"]
        wait_until(lambda: "CUSTOM_SRIOVD_C_LATENCY_CRITICAL" in inventories(), "the PF's inventories")
        conn.kill()
        conn.wait()
        print("ok: Keystone v3 password, catalog endpoint, HTTPS with a CA file")

        # An application credential, as a deployment would hand the connector.
        agent_sess = ks.session("sriovd-agent", AGENT_PASSWORD, "service")
        cred = agent_sess.post(f"/users/{agent['id']}/application_credentials", endpoint_filter=ident,
                               json={"application_credential": {"name": "sriovd-placement"}}).json()
        cred = cred["application_credential"]
        conn = connector("appcred", f"auth_type = v3applicationcredential\napplication_credential_id = {cred['id']}\n"
                                    f"application_credential_secret = {cred['secret']}\n")
        consumer = "c0ffee00-0000-4000-8000-0000000000aa"
        r = admin_pl.put(f"/allocations/{consumer}", endpoint_filter=plf, headers=hdr, json={
            "allocations": {rp0: {"resources": {"CUSTOM_SRIOVD_VF": 1, "CUSTOM_SRIOVD_C_LATENCY_CRITICAL": 1}}},
            "project_id": service_project["id"], "user_id": agent["id"], "consumer_generation": None,
            "consumer_type": "INSTANCE"})
        assert r.status_code == 204, r.text

        def served():
            return consumer in host.tenants()
        wait_until(served, "the tenant, allocated with an application credential")
        conn.kill()
        conn.wait()
        print("ok: Keystone v3 application credential")

        # A wrong secret: logged, retried, and the connector stays up.
        conn = connector("wrong", f"auth_type = v3applicationcredential\napplication_credential_id = {cred['id']}\n"
                                  "application_credential_secret = wrong\n")
        wait_until(lambda: "requires authentication" in open(logs[-1]).read(), "the refusal in the log", 30)
        time.sleep(1)
        assert conn.poll() is None, open(logs[-1]).read()
        print("ok: a wrong secret is logged and retried")
    except BaseException:
        for log in logs:
            print(f"--- {log}\n" + open(log).read())
        raise
    finally:
        if conn and conn.poll() is None:
            conn.kill()
            conn.wait()
        if host:
            host.stop()
        if pl:
            pl.stop()
        if ks:
            ks.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
