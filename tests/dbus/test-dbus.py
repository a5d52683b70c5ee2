#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-dbus.py — org.sriovd.Manager1 end to end: a private system-like dbus-daemon with the shipped
# policy, the real sriovd on a fixture copy, the real sriovctl and busctl as clients.
import concurrent.futures
import grp
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import statefile  # noqa: E402
import savefault  # noqa: E402
import sdnotify  # noqa: E402
import minibus  # noqa: E402  (beside this file)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibus  # noqa: E402

SRIOVD, SRIOVCTL = sys.argv[1], sys.argv[2]
SOURCE = os.environ["SRIOVD_SOURCE_DIR"]
BUILD = os.environ["SRIOVD_BUILD_DIR"]
DEST = ["org.sriovd.Manager1", "/org/sriovd/Manager1"]
IFACE = "org.sriovd.Manager1"
TENANT1, DEVICE1 = "org.sriovd.Tenant1", "org.sriovd.Device1"
OBJMGR = "org.freedesktop.DBus.ObjectManager"
PF0 = "0000:41:00.0"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
E = "org.sriovd.Error."
# The state directory's own tmpfs (tests/lib/savefault.py), which test_failed_save fills.
STATE_TMPFS_SIZE = 8 << 20

BUS_CONF = minibus.BUS_CONF

SEEN_ERRORS = set()


def plain(sig, data):
    """busctl --json's {"type", "data"} of a signature, as plain Python values (a{sv} as a dict)."""
    types = minibus._split(sig)
    if len(types) > 1:
        return [plain(t, x) for t, x in zip(types, data)]
    t = types[0]
    if t == "v":
        return plain(data["type"], data["data"])
    if t.startswith("a{"):
        k, v = minibus._split(t[2:-1])
        return {key: plain(v, val) for key, val in data.items()}
    if t.startswith("a"):
        return [plain(t[1:], x) for x in data]
    if t.startswith("("):
        return [plain(x, y) for x, y in zip(minibus._split(t[1:-1]), data)]
    return data


def path_encode(prefix, s):
    """sd_bus_path_encode(): every byte but [A-Za-z0-9] as _XX, and a leading digit too."""
    return prefix + "/" + "".join(c if c.isascii() and (c.isalpha() or (c.isdigit() and i > 0)) else "_%02x" % ord(c)
                                  for i, c in enumerate(s))


def tenant_path(t):
    return path_encode("/org/sriovd/Manager1/tenant", t)


def pf_path(a):
    return path_encode("/org/sriovd/Manager1/pf", a)


def no_placeholders(rec):
    """A record holds what exists: no "" and no -1 standing for "none"."""
    for k, v in rec.items():
        assert v != "" and v != -1, (k, rec)
        if isinstance(v, dict):
            no_placeholders(v)


def wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


class Bus:
    def __init__(self, tmp):
        self.sock = os.path.join(tmp, "bus.sock")
        self.address = "unix:path=" + self.sock
        self.conf = os.path.join(tmp, "bus.conf")
        with open(self.conf, "w") as f:
            f.write(BUS_CONF.format(sock=self.sock, policy=os.path.join(SOURCE, "conf", "org.sriovd.Manager1.conf")))
        self.start()

    def start(self):
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.proc = subprocess.Popen(["dbus-daemon", "--config-file=" + self.conf, "--nofork", "--print-address"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout.readline().startswith("unix:"), "dbus-daemon did not start"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Daemon:
    def __init__(self, tmp, bus, extra=""):
        self.tmp, self.bus = tmp, bus
        self.root = os.path.join(tmp, "root")
        if not os.path.exists(self.root):
            # With threaded NAPI on every netdev (napi/ threads per queue vector): read only for a
            # class that asks (napi-rt below), so the other tests see the fixture as it always was.
            subprocess.run([sys.executable, os.environ["SRIOVD_MKHOST"], "two-socket", self.root, "--threaded-napi"],
                           check=True)
            shutil.copytree(os.path.join(SOURCE, "conf", "tenant-classes.d"), os.path.join(tmp, "tenant-classes.d"))
            with open(os.path.join(tmp, "tenant-classes.d", "napi-rt.ini"), "w") as f:
                f.write("[class]\nvnic = sriov-required\nrank = 90\nirq_cpus = rt\nirq_thread_priority = 50\n"
                        "napi_threads = on\n")
            os.makedirs(os.path.join(tmp, "state"), exist_ok=True)
        self.state = os.path.join(tmp, "state")
        self.conf = os.path.join(tmp, "sriovd.conf")
        self.write_conf(extra)
        self.start()

    def write_conf(self, extra="", max_tenants=64, monitor=1):
        self.metrics_file = os.path.join(self.tmp, "metrics", "sriovd.prom")
        os.makedirs(os.path.dirname(self.metrics_file), exist_ok=True)
        with open(self.conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {self.tmp}/state\ndrift_check_sec = 0\nvf_headroom = 0\n"
                    f"access_group = staff\nmax_tenants = {max_tenants}\nmonitor_interval_sec = {monitor}\n"
                    f"metrics_file = {self.metrics_file}\n{extra}\n[match 15b3:101d]\nnum_vfs = 8\n")

    def start(self):
        self.run = os.path.join(self.tmp, "run")
        os.makedirs(self.run, exist_ok=True)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address, RUNTIME_DIRECTORY=self.run)
        self.log = open(os.path.join(self.tmp, "stderr"), "a+")
        self.proc = sdnotify.start([SRIOVD, "--root", self.root, "--config", self.conf],
                                   os.path.join(self.tmp, "notify"), env, timeout=30, stdout=self.log, stderr=self.log)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        return self.proc.returncode

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def state_file(self):
        """The saved tenants (file and journal together), as a JSON text: the tenants only, since
        the file's generation and the journal's length change whenever sriovd rewrites the file
        after a reply, which changes nothing that is saved."""
        return json.dumps({"tenants": statefile.saved(self.state)["tenants"]})


class Monitor:
    """busctl monitor: every signal sriovd sends, as JSON lines."""

    def __init__(self, tmp, bus):
        self.path = os.path.join(tmp, "monitor.json")
        self.out = open(self.path, "w")
        self.proc = subprocess.Popen(["busctl", "--address=" + bus.address, "--json=short", "monitor",
                                      "org.sriovd.Manager1"], stdout=self.out, stderr=subprocess.DEVNULL)
        time.sleep(0.3)

    def signals(self, path="/org/sriovd/Manager1"):
        self.out.flush()
        res = []
        with open(self.path) as f:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("type") == "signal" and msg.get("path") == path:
                    res.append((msg["member"], msg["payload"]["data"]))
        return res

    def wait(self, member, pred=lambda data: True, timeout=10, path="/org/sriovd/Manager1"):
        ok = wait_until(lambda: any(m == member and pred(d) for m, d in self.signals(path)), timeout)
        assert ok, f"no {member} signal on {path}; got {self.signals(path)}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Env:
    def __init__(self, bus):
        self.bus = bus

    def ctl(self, *args, user=None, check=None):
        r = subprocess.run([*(user or []), SRIOVCTL, "--address", self.bus.address, *args],
                           capture_output=True, text=True, timeout=60)
        if check is not None:
            assert r.returncode == check, (args, r.returncode, r.stdout, r.stderr)
        for name in re.findall(r"org\.sriovd\.Error\.\w+", r.stderr):
            SEEN_ERRORS.add(name)
        return r

    def ctl_json(self, *args, user=None, check=0):
        r = self.ctl("--json", *args, user=user, check=check)
        return json.loads(r.stdout)

    def ctl_error(self, expect_rc, expect_error, *args, user=None):
        r = self.ctl("--json", *args, user=user, check=expect_rc)
        doc = json.loads(r.stdout)
        assert doc["error"] == expect_error, (args, doc)
        return doc

    def busctl(self, *args, user=None, check=True):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address)
        r = subprocess.run([*(user or []), "busctl", "--system", "--json=short", *args], capture_output=True,
                           text=True, timeout=60, env=env)
        if check:
            assert r.returncode == 0, (args, r.stderr)
            return json.loads(r.stdout) if r.stdout.strip() else None
        return r

    def call(self, method, sig=None, *args, user=None, check=True):
        return self.busctl("call", *DEST, IFACE, method, *([sig, *map(str, args)] if sig else []), user=user,
                           check=check)

    def prop(self, name, user=None):
        return self.busctl("get-property", *DEST, IFACE, name, user=user)["data"]

    def rec(self, method, sig=None, *args, user=None):
        """A method's reply as plain values: a record is a dict, a list of records a list of dicts."""
        r = self.call(method, sig, *args, user=user)
        vals = [plain(t, x) for t, x in zip(minibus._split(r["type"]), r["data"])]
        return vals[0] if len(vals) == 1 else vals

    def tenants(self):
        return self.rec("ListTenants")

    def managed_objects(self):
        r = self.busctl("call", *DEST, OBJMGR, "GetManagedObjects")
        return plain(r["type"], r["data"][0])

    def obj_props(self, path, iface):
        r = self.busctl("call", DEST[0], path, "org.freedesktop.DBus.Properties", "GetAll", "s", iface)
        return plain(r["type"], r["data"][0])


# ---- the tests ----

def interface_xml(text, name):
    """One interface's element, without the XML comments that document the shipped file's record keys."""
    text = re.sub(r"[ \t]*<!--.*?-->\n?", "", text, flags=re.S)
    m = re.search(r'<interface name="%s">.*?</interface>' % re.escape(name), text, re.S)
    assert m, f"no interface {name}"
    return m.group(0)


def test_introspection(env, d, mon):
    with open(os.path.join(SOURCE, "conf", "org.sriovd.Manager1.xml")) as f:
        shipped_text = f.read()
    env.call("Allocate", "sssa{sv}", "t-introspect", "best-effort", "", 0)
    try:
        for path, name in [(DEST[1], IFACE), (tenant_path("t-introspect"), TENANT1), (pf_path(PF0), DEVICE1)]:
            xml = env.busctl("introspect", "--xml-interface", DEST[0], path, check=False).stdout
            live, shipped = interface_xml(xml, name), interface_xml(shipped_text, name)
            assert live == shipped, f"conf/org.sriovd.Manager1.xml's {name} differs from the live introspection"
    finally:
        env.call("Release", "s", "t-introspect")
    live = interface_xml(env.busctl("introspect", "--xml-interface", *DEST, check=False).stdout, IFACE)
    # Every record key sriovd sends is documented in the shipped file (a comment per key).
    for key in ["tenant", "path", "class", "kind", "state", "mac", "address", "pf", "netdev", "vlan", "domain",
                "numa_node", "remote_numa", "coalesce", "driver", "num_vfs", "total_vfs", "vf_index", "irq",
                "device", "affinity", "effective", "writable", "thread", "action", "target", "vf", "before",
                "after", "effect", "level", "text"]:
        assert re.search(r"^\s+%s\s+\(?[a-z{}()]+" % key, shipped_text, re.M), f"record key {key} undocumented"
    # ... and every key bus-protocol.h names (nested ones such as rx_usecs inside their record's line).
    with open(os.path.join(SOURCE, "include", "sriovd", "protocol", "bus-protocol.h")) as f:
        header_keys = re.findall(r'#define SRIOVD_(?:KEY|OPTION)_\w+ "(\w+)"', f.read())
    assert len(header_keys) > 30, header_keys
    for key in header_keys:
        assert re.search(r"\b%s\b" % key, shipped_text), f"bus-protocol.h key {key} not in the shipped XML"
    for m in ["Allocate", "Release", "SetCoalesce", "GetTenant", "ListDevices", "ListTenants", "ListIrqs", "Plan",
              "CheckHost", "GetMetrics", "Verify", "Reload", "ForceNumVfs", "Ping"]:
        assert f'<method name="{m}">' in live or f'<method name="{m}"/>' in live, m
    for s in ["AllocationChanged", "DeviceAdded", "DeviceRemoved", "DriftDetected"]:
        assert f'<signal name="{s}">' in live, s


def test_metrics(env, d, mon):
    # monitor_interval_sec = 1: a period has passed once period_usec is about a second.
    def metrics():
        r = env.call("GetMetrics")
        assert r["type"] == "ta(sa{ss}d)", r["type"]
        return r["data"][0], r["data"][1]
    assert wait_until(lambda: metrics()[0] > 0, timeout=10), metrics()[0]
    period, samples = metrics()
    assert 500000 < period < 5000000, period
    names = {s[0] for s in samples}
    for n in ["sriovd_vf_pool_vfs", "sriovd_vf_pool_utilization_ratio", "sriovd_vf_target_utilization_ratio",
              "sriovd_vf_node_vfs", "sriovd_irq_interrupts_total", "sriovd_rt_cpu_interference_rate"]:
        assert n in names, (n, sorted(names))
    pools = {s[1]["pf"]: s[2] for s in samples if s[0] == "sriovd_vf_pool_vfs"}
    devices = env.rec("ListDevices")
    assert pools == {p["address"]: float(p["num_vfs"]) for p in devices if p["kind"] == "pf"}, (pools, devices)
    irq = next(s for s in samples if s[0] == "sriovd_irq_interrupts_total")
    assert set(irq[1]) >= {"pf", "irq", "cpu"} and irq[2] > 0, irq
    # /proc/net/softnet_stat of the fixture, per online CPU: 0x10000 + 0x100 N packets on CPU N.
    softnet = {s[1]["cpu"]: s[2] for s in samples if s[0] == "sriovd_softnet_processed_total"}
    assert len(softnet) == 32 and softnet["1"] == 0x10100, softnet
    assert {s[0] for s in samples} >= {"sriovd_softnet_dropped_total", "sriovd_softnet_time_squeeze_total",
                                        "sriovd_rt_cpu_softnet_overload_rate"}
    # The same period in the file, for node_exporter.
    text = open(d.metrics_file).read()
    assert "# TYPE sriovd_irq_interrupts_total counter" in text and "sriovd_vf_pool_vfs{" in text, text[:500]
    assert 'sriovd_softnet_processed_total{cpu="1"} 65792\n' in text, text[:500]
    # Off: NotMonitoring, and no file written any more; on again at the next reload.
    d.write_conf(monitor=0)
    env.ctl("reload", check=0)
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call(*DEST, IFACE, "GetMetrics", "")
        raise AssertionError("GetMetrics answered with monitoring off")
    except minibus.Error as e:
        assert e.name == E + "NotMonitoring" and "monitor_interval_sec = 0" in e.message, (e.name, e.message)
        SEEN_ERRORS.add(e.name)
    finally:
        conn.close()
    d.write_conf()
    env.ctl("reload", check=0)
    assert wait_until(lambda: metrics()[0] > 0, timeout=10)


def test_alerts(env, d, mon):
    # Fed by the sampler each period (1 s here): a rule on node 0's VF pool raises after exactly its
    # 2 periods over 0.4 once 4 of its 8 VFs are held, is an ActiveAlerts record and in sriovctl
    # status, and clears (hysteresis: at or below 0.2) once they are given back.
    d.write_conf(extra="[alert pool-busy]\nmetric = sriovd_vf_node_utilization_ratio\nthreshold = 0.4\n"
                       "clear = 0.2\ndirection = above\nperiods = 2\nnode = 0\n")
    env.ctl("reload", check=0)
    for i in range(4):
        env.ctl("allocate", f"busy-{i}", "latency-critical", "--numa-node", "0", check=0)
    mon.wait("AlertRaised", lambda data: data[0] == "pool-busy" and data[2] == {"node": "0"} and data[3] == 0.5,
             timeout=15)
    active = plain("aa{sv}", env.prop("ActiveAlerts"))
    assert [a["name"] for a in active] == ["pool-busy"], active
    assert "pool-busy" in env.ctl("status").stdout
    assert [a["name"] for a in env.ctl_json("status")["alerts"]] == ["pool-busy"]
    # Per-PF pools in status, as ListDevices has them: node 0's PF holds the 4.
    devs = env.rec("ListDevices")
    want = {p["address"]: (p["num_vfs"], sum(1 for v in devs if v["kind"] == "vf" and v.get("pf") == p["address"]
                                              and "tenant" in v)) for p in devs if p["kind"] == "pf"}
    pools = {p["pf"]: (p["vfs"], p["allocated"]) for p in env.ctl_json("status")["pools"]}
    assert pools == want and pools["0000:41:00.0"] == (8, 4), (pools, want)
    text = env.ctl("status").stdout
    assert "Pools:       0000:41:00.0 (node 0): 8 VFs, 4 allocated (50.0%)" in text, text
    for i in range(4):
        env.ctl("release", f"busy-{i}", check=0)
    mon.wait("AlertCleared", lambda data: data[0] == "pool-busy", timeout=15)
    assert plain("aa{sv}", env.prop("ActiveAlerts")) == []
    d.write_conf()
    env.ctl("reload", check=0)


def test_properties(env, d, mon):
    assert env.prop("Version") == "0.1.0"
    assert env.prop("ApiVersion") == 2
    assert env.ctl_json("status")["api_version"] == 2
    assert env.prop("VfTotal") == 16 and env.prop("VfAllocated") == 0
    assert env.prop("VfUtilization") == 0.0 and abs(env.prop("VfTarget") - 0.85) < 1e-9
    assert env.prop("State") == "running"
    for p in ["RealTime", "ThreadedIrqs", "RtnetPrio", "Iommu"]:
        assert isinstance(env.prop(p), bool), p
    st = env.ctl_json("status")
    assert st["state"] == "running" and st["vf_total"] == 16 and st["version"] == "0.1.0"
    # Nothing feeds the alert rules yet (the sampler is not wired in): no alerts, and running is
    # not degraded, so no reasons either. The properties and their shapes are what is checked.
    assert plain("aa{sv}", env.prop("ActiveAlerts")) == [], env.prop("ActiveAlerts")
    assert env.prop("StateReasons") == [], env.prop("StateReasons")
    assert st["alerts"] == [] and st["state_reasons"] == [], st
    assert re.search(r"^Alerts: +none$", env.ctl("status", check=0).stdout, re.M)
    # A fixture tree is not this kernel: both kinds of kernel events are polled, and say why.
    fixture = "off: the host is a fixture tree, not this machine's kernel"
    assert plain("a{ss}", env.prop("KernelEvents")) == {"drift": fixture, "latency": fixture}, env.prop("KernelEvents")
    assert st["kernel"]["events"] == {"drift": fixture, "latency": fixture}, st["kernel"]
    assert re.search(r"^Events: +drift polled \(off: the host is a fixture tree.*\); latency polled",
                     env.ctl("status", check=0).stdout, re.M), env.ctl("status", check=0).stdout
    env.call("Ping")



def test_classes(env, d, mon):
    # Classes: every class of tenant-classes.d with what a client needs to place its tenants, in
    # name order. These are the shipped classes and the fixture's napi-rt.
    def classes():
        return plain("aa{sv}", env.prop("Classes"))

    def row(name, vnic, rank, rt_cpus=0, rt_fallback=False, allow_remote_numa=False):
        return {"name": name, "vnic": vnic, "rank": rank, "rt_cpus": rt_cpus, "rt_fallback": rt_fallback,
                "allow_remote_numa": allow_remote_numa}

    shipped = [row("best-effort", "virtio", 0), row("latency-critical", "sriov-required", 100),
               row("napi-rt", "sriov-required", 90), row("rt-vcpu", "sriov-required", 90, rt_cpus=1),
               row("throughput", "sriov-preferred", 50, allow_remote_numa=True)]
    assert classes() == shipped, classes()
    # A reload that adds a class announces it before Reload returns, so a client that follows
    # the signals knows the class's kind before it can be asked to place a tenant of it.
    path = os.path.join(d.tmp, "tenant-classes.d", "a-bulk.ini")
    with open(path, "w") as f:
        f.write("[class]\nvnic = sriov-preferred\nrank = 10\nvcpu_pinning = rt\nrt_vcpus = 2\n"
                "rt_cpu_fallback = housekeeping\n")
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        conn.call(*DEST, IFACE, "Reload")
        changed = [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == DEST[1] and v[0] == IFACE]
    finally:
        conn.close()
        os.unlink(path)
    added = [row("a-bulk", "sriov-preferred", 10, rt_cpus=2, rt_fallback=True)] + shipped
    assert [c["Classes"] for c in changed if "Classes" in c] == [added], changed
    assert classes() == added, classes()
    # Taking it away is a change too. A reload that changes no class announces none.
    env.ctl("reload", check=0)
    mon.wait("PropertiesChanged", lambda data: "Classes" in data[1] and
             plain("aa{sv}", data[1]["Classes"]["data"]) == shipped)
    assert classes() == shipped, classes()
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        conn.call(*DEST, IFACE, "Reload")
        assert not any(m == "PropertiesChanged" and "Classes" in v[1] for m, p, v in conn.signals), conn.signals
    finally:
        conn.close()

def test_allocate(env, d, mon):
    r = env.rec("Allocate", "sssa{sv}", "t-vf", "latency-critical", "vm-1", 1, "numa_node", "i", 1)
    kind, addr, netdev, mac = r["kind"], r["address"], r["netdev"], r["mac"]
    assert kind == "vf" and addr.startswith("0000:c1:") and netdev and re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", mac), r
    # The reply is the tenant's record: every key that has a value, none that has not.
    assert r["tenant"] == "t-vf" and r["class"] == "latency-critical" and r["state"] == "allocated", r
    assert r["domain"] == "vm-1" and r["numa_node"] == 1 and r["pf"] == "0000:c1:00.0", r
    assert r["path"] == tenant_path("t-vf") and r["remote_numa"] is False, r
    assert "vlan" not in r and "coalesce" not in r, r
    no_placeholders(r)
    # Idempotent: the same answer, no new decision.
    again = env.rec("Allocate", "sssa{sv}", "t-vf", "latency-critical", "vm-1", 1, "numa_node", "u", 1)
    assert again == r, (again, r)
    assert env.rec("GetTenant", "s", "t-vf") == r
    # Another domain for the same tenant: kept, and saved.
    env.call("Allocate", "sssa{sv}", "t-vf", "latency-critical", "vm-2", 1, "numa_node", "i", 1)
    assert [t["domain"] for t in json.loads(d.state_file())["tenants"] if t["tenant"] == "t-vf"] == ["vm-2"]
    env.call("Allocate", "sssa{sv}", "t-vf", "latency-critical", "vm-1", 1, "numa_node", "i", 1)
    # The controller's own MAC and VLAN for a tenant: answered, and saved with it.
    own = env.rec("Allocate", "sssa{sv}", "t-own", "throughput", "", 2, "mac", "s", "52:54:00:ab:cd:ef",
                  "vlan", "u", 100)
    assert own["kind"] == "vf" and own["mac"] == "52:54:00:ab:cd:ef" and own["vlan"] == 100, own
    assert "domain" not in own and "numa_node" not in own, own
    saved = [t for t in json.loads(d.state_file())["tenants"] if t["tenant"] == "t-own"][0]
    assert saved["mac"] == "52:54:00:ab:cd:ef" and saved["vlan"] == 100, saved
    env.call("Release", "s", "t-own")
    v = env.ctl_json("allocate", "t-virtio", "best-effort")
    assert v["kind"] == "virtio" and v["address"] is None and v["netdev"] is None
    assert env.ctl_json("tenant", "t-virtio")["state"] == "allocated"
    # On the bus, a virtio tenant has no VF keys at all (sriovctl --json shows them as null).
    virtio = env.rec("GetTenant", "s", "t-virtio")
    assert not {"address", "pf", "netdev", "remote_numa", "domain", "numa_node", "vlan"} & set(virtio), virtio
    no_placeholders(virtio)
    # sriovctl's tenant JSON is the record: the same keys and values, plus null for the absent ones.
    assert {k: x for k, x in env.ctl_json("tenant", "t-vf").items() if x is not None} == r
    mon.wait("AllocationChanged", lambda data: data == ["t-vf"])
    mon.wait("AllocationChanged", lambda data: data == ["t-virtio"])
    mon.wait("PropertiesChanged", lambda data: "VfAllocated" in data[1] and data[1]["VfAllocated"]["data"] == 1)
    assert env.prop("VfAllocated") == 1 and env.prop("Tenants") == 2
    rows = {t["tenant"]: t for t in env.tenants()}
    assert rows["t-vf"] == r, rows["t-vf"]
    for t in rows.values():
        no_placeholders(t)
    devs = {x["address"]: x for x in env.rec("ListDevices")}
    assert devs[addr]["kind"] == "vf" and devs[addr]["tenant"] == "t-vf" and devs[addr]["pf"] == "0000:c1:00.0"
    assert devs[PF0]["kind"] == "pf" and devs[PF0]["num_vfs"] == 8 and devs[PF0]["total_vfs"] >= 8
    assert not {"pf", "tenant", "vf_index"} & set(devs[PF0]), devs[PF0]
    free = [x for x in devs.values() if x["kind"] == "vf" and x["pf"] == PF0 and x["vf_index"] == 0][0]
    assert "tenant" not in free, free
    assert len(devs) == 18
    for x in devs.values():
        no_placeholders(x)
    irqs = env.rec("ListIrqs")
    assert len(irqs) == 82 and irqs[0]["irq"] == 44 and irqs[0]["device"] == PF0, irqs[0]
    assert all(isinstance(q["writable"], bool) and "affinity" in q for q in irqs)
    assert env.ctl("devices", check=0).stdout.count(" vf ") == 16
    assert len(env.ctl_json("irqs")) == 82
    # SetCoalesce: the per-guest window, shown by ListTenants.
    env.ctl("coalesce", "t-vf", "0", "8", check=0)
    row = [t for t in env.tenants() if t["tenant"] == "t-vf"][0]
    assert row["coalesce"] == {"rx_usecs": 0, "tx_usecs": 8}, row
    saved = [t for t in json.loads(d.state_file())["tenants"] if t["tenant"] == "t-vf"][0]
    assert saved["coalesce"] == {"rx_usecs": 0, "tx_usecs": 8}, saved
    # Release, then it is gone.
    env.ctl("release", "t-virtio", check=0)
    env.ctl_error(1, E + "UnknownTenant", "tenant", "t-virtio")


def test_irqs_napi(env, d, mon):
    """A threaded-NAPI tenant's VF: each queue IRQ's napi/ thread in ListIrqs and sriovctl irqs,
    with how it was paired (the fixture has no napi-get: queue order)."""
    t = env.rec("Allocate", "sssa{sv}", "t-napi", "napi-rt", "", 0)
    vf, netdev = t["address"], t["netdev"]
    try:
        def napi_rows():
            return [q for q in env.rec("ListIrqs") if q.get("device") == vf and "napi" in q]
        assert wait_until(lambda: napi_rows(), timeout=15), env.rec("ListIrqs")
        rows = napi_rows()
        ids = [q["napi"]["id"] for q in rows]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), rows
        for q in rows:
            n = q["napi"]
            assert n["name"] == f"napi/{netdev}-{n['id']}" and n["paired"] == "queue-order" and n["pid"] > 0, q
        # The VF's mailbox-like async vector schedules no NAPI: no record there.
        assert all("napi" not in q for q in env.rec("ListIrqs") if q.get("device") == vf
                   and q["irq"] not in [r["irq"] for r in rows]), rows
        out = env.ctl("irqs", check=0).stdout
        assert "NAPI THREAD" in out.splitlines()[0], out[:300]
        line = next(ln for ln in out.splitlines() if ln.split()[:1] == [str(rows[0]["irq"])])
        assert f"napi/{netdev}-{rows[0]['napi']['id']}" in line and "(queue-order)" in line, line
        js = [q for q in env.ctl_json("irqs") if q.get("irq") == rows[0]["irq"]]
        assert js and js[0]["napi"]["paired"] == "queue-order", js
    finally:
        env.call("Release", "s", "t-napi")


def test_object_manager(env, d, mon):
    """One object per tenant and PF under the ObjectManager; signals for what comes, goes and changes."""
    objs = env.managed_objects()
    tenants = {t["tenant"]: t for t in env.tenants()}
    assert {p for p in objs if "/tenant/" in p} == {tenant_path(t) for t in tenants}, sorted(objs)
    for t, rec in tenants.items():
        props = objs[tenant_path(t)][TENANT1]
        assert props["Id"] == t and props["Class"] == rec["class"] and props["Kind"] == rec["kind"], props
        assert props["Address"] == rec.get("address", "") and props["Mac"] == rec["mac"], props
        assert props["NumaNode"] == rec.get("numa_node", -1) and props["State"] == rec["state"], props
    pfs = {x["address"]: x for x in env.rec("ListDevices") if x["kind"] == "pf"}
    assert {p for p in objs if "/pf/" in p} == {pf_path(a) for a in pfs}, sorted(objs)
    dev = objs[pf_path(PF0)][DEVICE1]
    assert dev["Address"] == PF0 and dev["NumVfs"] == 8 and dev["TotalVfs"] == pfs[PF0]["total_vfs"], dev
    assert len(dev["Vfs"]) == 8 and dev["Driver"] == pfs[PF0]["driver"], dev
    assert pfs[PF0]["path"] == pf_path(PF0)

    # A controller's connection that follows the signals: each change's signals come before its reply.
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        path = tenant_path("t-om.1")
        (rec,), _ = conn.call(*DEST, IFACE, "Allocate", "sssa{sv}", "t-om.1", "throughput", "vm-om",
                              {"numa_node": ("i", 0)})
        # Acknowledged means saved: the state file has the tenant when the reply is here.
        assert "t-om.1" in [t["tenant"] for t in statefile.saved(d.state)["tenants"]]
        assert rec["path"] == path, rec
        added = [v for m, p, v in conn.signals if m == "InterfacesAdded" and v[0] == path]
        assert added, conn.signals
        props = added[0][1][TENANT1]
        assert props["Id"] == "t-om.1" and props["Class"] == "throughput" and props["Domain"] == "vm-om", props
        assert props["Address"] == rec["address"] and props["NumaNode"] == 0, props
        assert env.obj_props(path, TENANT1) == props
        # A per-guest window on its VF: PropertiesChanged naming it.
        del conn.signals[:]
        conn.call(*DEST, IFACE, "SetCoalesce", "suu", "t-om.1", 7, 9)
        changed = [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == path]
        assert changed and changed[0]["Coalescing"] is True and changed[0]["CoalesceRxUsecs"] == 7, changed
        # A class change: PropertiesChanged on the tenant's object, naming what changed. The window
        # is kept, on virtio-net, for the VF it may get again.
        del conn.signals[:]
        conn.call(*DEST, IFACE, "Allocate", "sssa{sv}", "t-om.1", "best-effort", "vm-om", {"numa_node": ("i", 0)})
        changed = [v for m, p, v in conn.signals if m == "PropertiesChanged" and p == path]
        assert changed and changed[0][0] == TENANT1, conn.signals
        assert changed[0][1]["Class"] == "best-effort" and changed[0][1]["Kind"] == "virtio", changed
        assert "Id" not in changed[0][1] and "Mac" not in changed[0][1], changed
        assert "Coalescing" not in changed[0][1], changed
        kept = env.obj_props(path, TENANT1)
        assert kept["Coalescing"] is True and kept["CoalesceRxUsecs"] == 7 and kept["CoalesceTxUsecs"] == 9, kept
        # On virtio-net a new window is refused (NotOnVf, saying why): nothing changed, signalled or saved.
        saved_before = statefile.saved(d.state)
        del conn.signals[:]
        try:
            conn.call(*DEST, IFACE, "SetCoalesce", "suu", "t-om.1", 1, 2)
            raise AssertionError("SetCoalesce on a virtio-net tenant was accepted")
        except minibus.Error as e:
            assert e.name == E + "NotOnVf", e.name
            assert "t-om.1 is on virtio-net, not a VF" in e.message and "has no interrupt coalescing" in e.message, e
        r = env.ctl("coalesce", "t-om.1", "1", "2", check=1)
        assert "sriovctl: SetCoalesce: org.sriovd.Error.NotOnVf: Tenant t-om.1 is on virtio-net" in r.stderr, r.stderr
        assert env.ctl_error(1, E + "NotOnVf", "coalesce", "t-om.1", "3", "4")["message"].startswith("Tenant t-om.1")
        assert not [v for m, p, v in conn.signals if m == "PropertiesChanged" and p == path], conn.signals
        assert env.obj_props(path, TENANT1) == kept
        assert statefile.saved(d.state) == saved_before
        row = [t for t in env.tenants() if t["tenant"] == "t-om.1"][0]
        assert row["coalesce"] == {"rx_usecs": 7, "tx_usecs": 9}, row
        # Release: InterfacesRemoved naming the interface; the object is gone.
        del conn.signals[:]
        conn.call(*DEST, IFACE, "Release", "s", "t-om.1")
        removed = [v for m, p, v in conn.signals if m == "InterfacesRemoved" and v[0] == path]
        assert removed and TENANT1 in removed[0][1], conn.signals
        assert path not in env.managed_objects()
        try:
            conn.call(DEST[0], path, "org.freedesktop.DBus.Properties", "Get", "ss", TENANT1, "Id")
            raise AssertionError("a released tenant's object still answers")
        except minibus.Error as e:
            assert e.name in ("org.freedesktop.DBus.Error.UnknownObject",
                              "org.freedesktop.DBus.Error.UnknownInterface"), e.name
    finally:
        conn.close()
    # busctl monitor saw the same on the ObjectManager's path.
    mon.wait("InterfacesAdded", lambda data: data[0] == path)
    mon.wait("InterfacesRemoved", lambda data: data[0] == path)
    mon.wait("PropertiesChanged", lambda data: "Class" in data[1], path=path)


def pf_figures(env, pf):
    """Device1's allocator figures of one PF."""
    p = env.obj_props(pf_path(pf), DEVICE1)
    return {k: p[k] for k in ["VfUsable", "VfAllocated", "VfFree", "VfPreemptible", "ClassAllocated",
                              "ClassAvailable"]}


def test_pf_figures(env, d, mon):
    """Device1's allocator figures, with PropertiesChanged before the reply of the Allocate or
    Release that changed them; and MaxTenants."""
    assert env.prop("MaxTenants") == 64
    pfs = [x["address"] for x in env.rec("ListDevices") if x["kind"] == "pf"]
    for pf in pfs:
        f = pf_figures(env, pf)
        assert f["VfUsable"] == f["VfAllocated"] + f["VfFree"] and f["VfUsable"] <= 8, f
        assert sum(f["ClassAllocated"].values()) == f["VfAllocated"] and 0 not in f["ClassAllocated"].values(), f
        assert set(f["ClassAvailable"]) == {"best-effort", "latency-critical", "napi-rt", "rt-vcpu", "throughput"}, f
        assert f["ClassAvailable"]["best-effort"] == 0, f
        assert f["ClassAvailable"]["latency-critical"] == f["VfFree"] + f["VfPreemptible"], f
        # The fixture keeps no headroom (vf_headroom = 0).
        assert f["ClassAvailable"]["throughput"] == f["VfFree"], f
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        before = {pf: pf_figures(env, pf) for pf in pfs}
        (rec,), _ = conn.call(*DEST, IFACE, "Allocate", "sssa{sv}", "t-fig", "throughput", "", {})
        pf = rec["pf"]
        # The signal came before the reply, and names what changed.
        changed = [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == pf_path(pf)]
        assert changed and changed[-1]["VfAllocated"] == before[pf]["VfAllocated"] + 1, conn.signals
        assert changed[-1]["VfFree"] == before[pf]["VfFree"] - 1, changed
        assert changed[-1]["VfPreemptible"] == before[pf]["VfPreemptible"] + 1, changed
        after = pf_figures(env, pf)
        assert after["ClassAllocated"].get("throughput", 0) == before[pf]["ClassAllocated"].get("throughput", 0) + 1
        assert after["ClassAvailable"]["latency-critical"] == before[pf]["ClassAvailable"]["latency-critical"]
        assert after["ClassAvailable"]["throughput"] == before[pf]["ClassAvailable"]["throughput"] - 1
        # Release: back to what it was, announced before the reply too.
        del conn.signals[:]
        conn.call(*DEST, IFACE, "Release", "s", "t-fig")
        changed = [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == pf_path(pf)]
        assert changed and changed[-1]["VfAllocated"] == before[pf]["VfAllocated"], conn.signals
        assert pf_figures(env, pf) == before[pf]
    finally:
        conn.close()
    mon.wait("PropertiesChanged", lambda data: data[0] == DEVICE1 and "VfFree" in data[1], path=pf_path(pf))


UUID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"


def test_pin_and_labels(env, d, mon):
    """Allocate's options pf, domain_uuid and owner: honoured, shown, saved, and refused by name when bad."""
    PF1 = "0000:c1:00.0"
    for tenant, pf in [("t-pin-a", PF0), ("t-pin-b", PF1)]:
        r = env.rec("Allocate", "sssa{sv}", tenant, "latency-critical", "", 3, "pf", "s", pf,
                    "domain_uuid", "s", UUID, "owner", "s", "placement")
        assert r["pf"] == pf and r["pin_pf"] == pf and r["kind"] == "vf", r
        assert r["domain_uuid"] == UUID and r["owner"] == "placement", r
        props = env.obj_props(tenant_path(tenant), TENANT1)
        assert props["PinPf"] == pf and props["DomainUuid"] == UUID and props["Owner"] == "placement", props
    saved = {t["tenant"]: t for t in json.loads(d.state_file())["tenants"]}
    assert saved["t-pin-a"]["pin_pf"] == PF0 and saved["t-pin-a"]["owner"] == "placement", saved["t-pin-a"]
    assert saved["t-pin-b"]["domain_uuid"] == UUID, saved["t-pin-b"]
    line = env.ctl("tenant", "t-pin-a", check=0).stdout
    assert f"pinned to PF {PF0}, domain UUID {UUID}, owner placement" in line, line
    # A tenant without them has no such keys, and "" as properties.
    plain_t = env.rec("Allocate", "sssa{sv}", "t-unpinned", "best-effort", "", 0)
    assert not {"pin_pf", "domain_uuid", "owner"} & set(plain_t), plain_t
    assert env.obj_props(tenant_path("t-unpinned"), TENANT1)["PinPf"] == ""
    assert "pin_pf" not in [t for t in json.loads(d.state_file())["tenants"] if t["tenant"] == "t-unpinned"][0]
    env.call("Release", "s", "t-unpinned")
    # Bad values: an error that names the key, and nothing changes.
    before = snapshot(env, d)
    for key, value, error in [("pf", "0000:99:00.0", "UnknownDevice"), ("pf", "41:00.0", "InvalidArgument"),
                              ("pf", "0000:41:00.0 ", "InvalidArgument"),
                              ("domain_uuid", UUID.upper(), "InvalidArgument"),
                              ("domain_uuid", UUID[:-1], "InvalidArgument"), ("domain_uuid", "", "InvalidArgument"),
                              ("owner", "", "InvalidArgument"), ("owner", "a b", "InvalidArgument"),
                              ("owner", "o" * 64, "InvalidArgument")]:
        r = env.call("Allocate", "sssa{sv}", "t-bad", "latency-critical", "", 1, key, "s", value, check=False)
        assert r.returncode != 0 and key in r.stderr, (key, value, r.stderr)
        doc = env.ctl_error(1 if error == "UnknownDevice" else 2, E + error, "allocate", "t-bad", "latency-critical",
                            "--" + key.replace("_", "-"), value)
        assert key in doc["message"], doc
    for key, good in [("pf", PF0), ("domain_uuid", UUID), ("owner", "x")]:
        r = env.call("Allocate", "sssa{sv}", "t-bad", "best-effort", "", 1, key, "u", 1, check=False)
        assert r.returncode != 0 and f"Option {key} must be of type s" in r.stderr, r.stderr
        r = env.call("Allocate", "sssa{sv}", "t-bad", "best-effort", "", 2, key, "s", good, key, "s", good, check=False)
        assert r.returncode != 0 and f"Option {key} given twice" in r.stderr, r.stderr
    assert snapshot(env, d) == before, "a rejected call changed something"
    # A new owner alone is a change: saved, and announced on the tenant's object before the reply.
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        conn.call(*DEST, IFACE, "Allocate", "sssa{sv}", "t-pin-b", "latency-critical", "",
                  {"pf": ("s", PF1), "domain_uuid": ("s", UUID), "owner": ("s", "someone-else")})
        changed = [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == tenant_path("t-pin-b")]
        assert changed and changed[0] == {"Owner": "someone-else"}, conn.signals
        assert [t for t in json.loads(d.state_file())["tenants"] if t["tenant"] == "t-pin-b"][0]["owner"] == \
            "someone-else"
    finally:
        conn.close()
    env.call("Release", "s", "t-pin-a")
    env.call("Release", "s", "t-pin-b")
    # One stays for test_restart, which checks that the keys survive a restart: a virtio tenant holds no VF.
    env.ctl("allocate", "t-labels", "best-effort", "--pf", PF1, "--domain-uuid", UUID, "--owner", "placement",
            check=0)


def test_rates(env, d, mon):
    """Allocate's min_tx_rate and max_tx_rate: shown, saved, a change when they change, refused by name when bad."""
    def saved(tenant):
        return [t for t in json.loads(d.state_file())["tenants"] if t["tenant"] == tenant][0]

    r = env.rec("Allocate", "sssa{sv}", "t-rate", "best-effort", "", 2, "min_tx_rate", "u", 100, "max_tx_rate", "i", 500)
    assert r["min_tx_rate"] == 100 and r["max_tx_rate"] == 500, r
    assert saved("t-rate")["min_tx_rate"] == 100 and saved("t-rate")["max_tx_rate"] == 500, saved("t-rate")
    line = env.ctl("tenant", "t-rate", check=0).stdout
    assert "min 100 Mbit/s, max 500 Mbit/s" in line, line
    # The same call again: the same answer, and no write.
    before = d.state_file()
    assert env.rec("Allocate", "sssa{sv}", "t-rate", "best-effort", "", 2, "min_tx_rate", "u", 100,
                   "max_tx_rate", "u", 500) == r
    assert d.state_file() == before
    # Another rate is a change, saved before the reply; one left out is cleared, as every option is.
    doc = json.loads(env.ctl("--json", "allocate", "t-rate", "best-effort", "--max-tx-rate", "0", check=0).stdout)
    assert doc["max_tx_rate"] == 0 and "min_tx_rate" not in doc, doc
    assert saved("t-rate")["max_tx_rate"] == 0 and "min_tx_rate" not in saved("t-rate"), saved("t-rate")
    plain = env.rec("Allocate", "sssa{sv}", "t-rate-none", "best-effort", "", 0)
    assert not {"min_tx_rate", "max_tx_rate"} & set(plain), plain
    assert not {"min_tx_rate", "max_tx_rate"} & set(saved("t-rate-none")), saved("t-rate-none")
    env.call("Release", "s", "t-rate-none")
    # Bad values: an error that names the key, and nothing changes.
    before = snapshot(env, d)
    for args, what in [((1, "max_tx_rate", "u", 400001), "max_tx_rate 400001 is out of range"),
                       ((1, "min_tx_rate", "i", 2 ** 31 - 1), "min_tx_rate 2147483647 is out of range"),
                       ((1, "max_tx_rate", "s", "100"), "Option max_tx_rate must be of type i or u"),
                       ((2, "max_tx_rate", "u", 1, "max_tx_rate", "u", 2), "Option max_tx_rate given twice"),
                       ((2, "min_tx_rate", "u", 300, "max_tx_rate", "u", 100),
                        "min_tx_rate 300 exceeds max_tx_rate 100")]:
        r = env.call("Allocate", "sssa{sv}", "t-rate", "best-effort", "", *args, check=False)
        assert r.returncode != 0 and what in r.stderr, (args, r.stderr)
    doc = env.ctl_error(2, E + "InvalidArgument", "allocate", "t-rate", "best-effort", "--min-tx-rate", "9",
                        "--max-tx-rate", "8")
    assert "min_tx_rate 9 exceeds max_tx_rate 8" in doc["message"], doc
    assert env.ctl("allocate", "t-rate", "best-effort", "--max-tx-rate", "x", check=2).stderr
    assert snapshot(env, d) == before, "a rejected call changed something"
    # It stays for test_restart, which checks that the rates survive a restart.
    env.ctl("allocate", "t-rate", "best-effort", "--max-tx-rate", "250", check=0)


def test_allocation_is_no_drift(env, d, mon):
    """What sriovd changes for an allocation is its own plan; only a change behind its back is drift."""
    def drifts():
        return [x for m, x in mon.signals() if m == "DriftDetected"]
    before = len(drifts())
    vfs = []
    for t in ["t-nodrift-1", "t-nodrift-2"]:
        vfs.append(env.rec("Allocate", "sssa{sv}", t, "latency-critical", "", 1, "numa_node", "i", 1)["address"])
    # The tenants' VF IRQs move to their class's CPUs in the cycle that follows; run one more to be sure.
    env.ctl_json("verify")
    time.sleep(0.3)
    assert len(drifts()) == before, drifts()[before:]
    assert "Drift repaired" not in d.stderr(), d.stderr()[-3000:]
    # An owned IRQ of the tenant's VF changed from outside: that is drift.
    irq = [i for i in env.rec("ListIrqs") if i.get("device") == vfs[0]][0]["irq"]
    path = os.path.join(d.root, f"proc/irq/{irq}/smp_affinity_list")
    with open(path, "w") as f:
        f.write("2-7")
    v = env.ctl_json("verify")
    assert v["found"] >= 1, v
    mon.wait("DriftDetected", lambda data: f"IRQ {irq}: 2-7" in data[0])
    for t in ["t-nodrift-1", "t-nodrift-2"]:
        env.call("Release", "s", t)


def test_dry_run_and_once_beside_the_daemon(env, d, mon):
    """--dry-run plans the daemon's saved tenants, read only; --once refuses while the daemon runs."""
    vf = env.rec("Allocate", "sssa{sv}", "t-dry", "latency-critical", "", 1, "numa_node", "i", 1)["address"]
    env.ctl_json("verify")
    irqs = {i["irq"] for i in env.rec("ListIrqs") if i.get("device") == vf}
    assert irqs

    def snapshot():
        out = {}
        for name in sorted(os.listdir(d.state)):
            st = os.stat(os.path.join(d.state, name))
            with open(os.path.join(d.state, name), "rb") as f:
                out[name] = (st.st_mtime_ns, f.read())
        return out, os.stat(d.state).st_mtime_ns

    def dry_run(conf):
        r = subprocess.run([SRIOVD, "--dry-run", "--json", "--root", d.root, "--config", conf], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, RUNTIME_DIRECTORY=d.run))
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        doc = json.loads(r.stdout)
        return doc, {a.get("irq") for a in doc["plan"]["actions"] if a["action"] == "irq-affinity"}

    before = snapshot()
    doc, moved = dry_run(d.conf)
    assert doc["daemon_running"] is True, doc.keys()
    assert not moved & irqs, (sorted(moved & irqs), doc["plan"]["actions"][:5])
    assert snapshot() == before, "the dry run wrote the state directory"
    # Without the tenants (an empty state directory) the same dry run would move them back.
    other = os.path.join(d.tmp, "sriovd-empty.conf")
    os.makedirs(os.path.join(d.tmp, "state-empty"), exist_ok=True)
    with open(d.conf) as f, open(other, "w") as g:
        g.write(f.read().replace(f"state_dir = {d.tmp}/state\n", f"state_dir = {d.tmp}/state-empty\n"))
    _, moved = dry_run(other)
    assert moved & irqs, "the control dry run should plan the tenant's IRQs back"
    os.unlink(other)

    r = subprocess.run([SRIOVD, "--once", "--root", d.root, "--config", d.conf], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, RUNTIME_DIRECTORY=d.run))
    assert r.returncode == 2 and "holds" in r.stderr and "--once would race it" in r.stderr, (r.returncode, r.stderr)
    env.call("Release", "s", "t-dry")


def test_plan_verify_drift(env, d, mon):
    plan = env.ctl_json("plan")
    assert set(plan) == {"actions", "notes"}
    raw = env.rec("Plan")
    assert len(raw) == 2
    for rec in raw[0] + raw[1]:
        no_placeholders(rec)
    assert all({"action", "before", "after"} <= set(a) for a in raw[0]), raw[0][:3]
    assert all("vf" in a for a in raw[0] if a["action"] == "vf-link")
    assert all("irq" in a for a in raw[0] if a["action"] in ("irq-affinity", "irq-thread"))
    # Someone moves an IRQ: a dry run sees it and changes nothing; Verify repairs and signals it.
    # First a cycle now: it answers the re-check the last test's Release asked for (10 ms after its
    # reply), which would otherwise repair the move before the dry run could see it.
    env.ctl_json("verify")
    path = os.path.join(d.root, "proc/irq/60/smp_affinity_list")
    with open(path, "w") as f:
        f.write("2-7")
    plan = env.ctl_json("plan")
    assert any(a["action"] == "irq-affinity" and a.get("irq") == 60 and a["before"] == "2-7" for a in plan["actions"]), plan
    assert open(path).read().strip() == "2-7"
    v = env.ctl_json("verify")
    assert v["found"] >= 1 and v["repaired"] >= 1 and any("IRQ 60: 2-7" in w for w in v["drift"]), v
    assert open(path).read().strip() != "2-7"
    mon.wait("DriftDetected", lambda data: "IRQ 60: 2-7" in data[0])
    assert env.ctl_json("verify")["found"] == 0


HOST_CHECKS = ["isolcpus", "managed_irq", "nohz_full", "rcu_nocbs", "irqaffinity", "smt", "cpuidle", "governor",
               "rt_throttling", "stalld", "iommu", "iommu_pt"]
# The checks two-socket-untuned fails with [cpus] rt = 2-7,18-23, and a part of each fix
# (tests/fixtures/README.md lists how the two hosts differ).
UNTUNED_FIXES = {
    "isolcpus": "isolcpus=managed_irq,domain,2-7,18-23 on the kernel command line",
    "managed_irq": "isolcpus=managed_irq,domain,2-7,18-23 on the kernel command line",
    "nohz_full": "nohz_full=2-7,18-23 on the kernel command line",
    "rcu_nocbs": "rcu_nocbs=2-7,18-23 on the kernel command line",
    "irqaffinity": "irqaffinity=0-1,8-17,24-31 on the kernel command line",
    "smt": "of CPUs 10-15,26-31",
    "cpuidle": "processor.max_cstate=1 intel_idle.max_cstate=0",
    "governor": "write performance to /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor",
    "stalld": "systemctl enable --now stalld",
    "iommu_pt": "iommu=pt on the kernel command line",
}


def test_check_host(env, d, mon):
    # The well-tuned host: every check passes, for anyone, and no record holds a fix.
    recs = env.rec("CheckHost", user=NOBODY)
    assert [r["check"] for r in recs] == HOST_CHECKS, recs
    for r in recs:
        no_placeholders(r)
        assert r["result"] == "pass" and "fix" not in r and r["seen"] and r["expected"], r
    assert {r["check"]: r["severity"] for r in recs}["isolcpus"] == "error"
    out = env.ctl("check-host", check=0).stdout
    assert "0 errors, 0 warnings, 0 info" in out and "fix:" not in out, out
    doc = env.ctl_json("check-host", user=NOBODY)
    assert doc["errors"] == doc["warnings"] == doc["info"] == 0, doc
    assert all(f["fix"] is None for f in doc["findings"]), doc
    assert wait_until(lambda: 'sriovd_host_check_failed{check="isolcpus",severity="error"} 0'
                      in open(d.metrics_file).read()), open(d.metrics_file).read()

    # The badly tuned host, on a bus of its own: exactly the differences fail, each with its fix.
    tmp2 = os.path.join(d.tmp, "untuned")
    os.makedirs(os.path.join(tmp2, "state"))
    os.chmod(tmp2, 0o755)
    subprocess.run([sys.executable, os.environ["SRIOVD_MKHOST"], "two-socket-untuned", os.path.join(tmp2, "root")],
                   check=True)
    shutil.copytree(os.path.join(SOURCE, "conf", "tenant-classes.d"), os.path.join(tmp2, "tenant-classes.d"))
    bus2 = Bus(tmp2)
    d2 = None
    try:
        d2 = Daemon(tmp2, bus2, "[cpus]\nrt = 2-7,18-23\n")
        env2 = Env(bus2)
        doc = env2.ctl_json("check-host", check=1)
        failed = {f["check"]: f for f in doc["findings"] if f["result"] == "fail"}
        assert sorted(failed) == sorted(UNTUNED_FIXES), sorted(failed)
        for check, fix in UNTUNED_FIXES.items():
            assert fix in failed[check]["fix"], (check, failed[check])
        assert (doc["errors"], doc["warnings"], doc["info"]) == (1, 8, 1), doc
        out = env2.ctl("check-host", check=1).stdout
        assert "fix: nohz_full=2-7,18-23 on the kernel command line" in out and "1 errors, 8 warnings, 1 info" in out, out
        # At start, one warning per failed check.
        for check in UNTUNED_FIXES:
            assert d2.stderr().count(f"Host check {check} (") == 1, (check, d2.stderr()[-3000:])
        assert wait_until(lambda: 'sriovd_host_check_failed{check="smt",severity="warning"} 1'
                          in open(d2.metrics_file).read()), open(d2.metrics_file).read()
        assert 'sriovd_host_check_failed{check="rt_throttling",severity="warning"} 0' in open(d2.metrics_file).read()
        # A reload runs the check again, since [cpus] rt may have changed.
        env2.ctl("reload", check=0)
        assert d2.stderr().count("Host check smt (") == 2, d2.stderr()[-3000:]
    finally:
        if d2:
            d2.stop(signal.SIGKILL)
        bus2.stop()


def test_devices_come_and_go(env, d, mon):
    link = os.path.join(d.root, "sys/bus/pci/devices/0000:41:00.0/virtfn7")
    target = os.readlink(link)
    vf = os.path.basename(target)
    os.unlink(link)
    env.ctl("verify")
    mon.wait("DeviceRemoved", lambda data: data == [vf])
    # The PF's object says it too: its Vfs property changed.
    mon.wait("PropertiesChanged", lambda data: "Vfs" in data[1] and vf not in data[1]["Vfs"]["data"],
             path=pf_path(PF0))
    os.symlink(target, link)
    env.ctl("verify")
    mon.wait("DeviceAdded", lambda data: data == [vf])
    mon.wait("PropertiesChanged", lambda data: "Vfs" in data[1] and vf in data[1]["Vfs"]["data"],
             path=pf_path(PF0))


def test_force_num_vfs(env, d, mon):
    env.call("ForceNumVfs", "s", "0000:41:00.0")
    env.ctl("force-num-vfs", "0000:41:00.0", check=0)
    env.ctl_error(1, E + "UnknownDevice", "force-num-vfs", "0000:99:00.0")
    env.ctl_error(2, E + "InvalidArgument", "force-num-vfs", "0000:41:00.0/../x")


def snapshot(env, d):
    return env.tenants(), d.state_file()


def test_invalid_arguments(env, d, mon):
    before = snapshot(env, d)
    for args in [("allocate", "bad id", "best-effort"), ("allocate", "x" * 64, "best-effort"),
                 ("allocate", "..", "best-effort"), ("allocate", "t1", "Best Effort"),
                 ("allocate", "t1", "best-effort", "--domain", "a/b"),
                 ("allocate", "t1", "best-effort", "--domain", "d" * 256),
                 ("allocate", "t1", "best-effort", "--domain", "x\ty"),
                 ("allocate", "t1", "best-effort", "--numa-node", "64"),
                 ("allocate", "t1", "best-effort", "--numa-node", "-2"),
                 ("coalesce", "t-vf", "100001", "0"),
                 ("release", "a" * 100), ("tenant", "../etc"), ("coalesce", "t/1", "1", "1")]:
        env.ctl_error(2, E + "InvalidArgument", *args)
    # What sriovctl cannot send: unknown keys, wrong types, too many options, a huge string.
    bad = [("sssa{sv}", "t1", "best-effort", "", 1, "colour", "s", "red"),
           ("sssa{sv}", "t1", "best-effort", "", 1, "numa_node", "s", "1"),
           ("sssa{sv}", "t1", "best-effort", "", 2, "numa_node", "i", 0, "numa_node", "i", 1),
           ("sssa{sv}", "t1", "best-effort", "", 1, "numa_node", "u", 4294967295),
           ("sssa{sv}", "t1", "best-effort", "", 1, "vlan", "u", 4095),
           ("sssa{sv}", "t1", "best-effort", "", 1, "mac", "s", "01:00:5e:00:00:01"),
           ("sssa{sv}", "t1", "best-effort", "", 1, "mac", "s", "52:54:00:zz:00:01"),
           ("sssa{sv}", "t1", "best-effort", "", 9, *sum((["k%d" % i, "i", i] for i in range(9)), [])),
           ("sssa{sv}", "t" * 70000, "best-effort", "", 0)]
    for args in bad:
        r = env.call("Allocate", *args, check=False)
        assert r.returncode != 0, args
        assert re.search(r"Unknown option|must be of type|given twice|out of range|More than|Invalid tenant|"
                         r"not a unicast MAC",
                         r.stderr), (args[:6], r.stderr)
    r = env.busctl("call", *DEST, IFACE, "Allocate", "ss", "t1", "best-effort", check=False)
    assert r.returncode != 0
    assert snapshot(env, d) == before, "a rejected call changed something"


def test_unprivileged(env, d, mon):
    before = snapshot(env, d)
    # Every change: NotPermitted (exit 3), nothing changes.
    for args in [("allocate", "nobody-t", "best-effort"), ("release", "t-vf"), ("coalesce", "t-vf", "1", "1"),
                 ("force-num-vfs", "0000:41:00.0"), ("verify",), ("reload",)]:
        env.ctl_error(3, E + "NotPermitted", *args, user=NOBODY)
    r = env.call("Allocate", "sssa{sv}", "nobody-t", "best-effort", "", 0, user=NOBODY, check=False)
    assert r.returncode != 0 and "needs root" in r.stderr, r.stderr
    assert snapshot(env, d) == before
    # Every read works.
    for args in [("status",), ("devices",), ("irqs",), ("tenants",), ("tenant", "t-vf"), ("plan",)]:
        env.ctl("--json", *args, user=NOBODY, check=0)
    for m, sig, args in [("GetTenant", "s", ["t-vf"]), ("ListTenants", None, []), ("ListDevices", None, []),
                         ("ListIrqs", None, []), ("Plan", None, []), ("Ping", None, [])]:
        env.call(m, sig, *args, user=NOBODY)
    assert env.prop("State", user=NOBODY) == "running"
    # The objects too: GetManagedObjects (the bus policy lets everyone call the ObjectManager) and properties.
    objs = env.busctl("call", *DEST, OBJMGR, "GetManagedObjects", user=NOBODY)["data"][0]
    assert tenant_path("t-vf") in objs and pf_path(PF0) in objs, sorted(objs)
    assert env.busctl("get-property", DEST[0], tenant_path("t-vf"), TENANT1, "Class",
                      user=NOBODY)["data"] == "latency-critical"
    assert env.busctl("introspect", *DEST, user=NOBODY, check=False).returncode == 0
    # The access group may change things.
    try:
        gid = grp.getgrnam("staff").gr_gid
    except KeyError:
        return
    member = ["setpriv", "--reuid=65534", "--regid=65534", f"--groups={gid}"]
    env.ctl("allocate", "staff-t", "best-effort", user=member, check=0)
    env.ctl("release", "staff-t", user=member, check=0)


def test_busy(env, d, mon):
    # Dry runs read all of sysfs: callers without change rights get a bounded share (10 a second,
    # bursts of 20). Eight callers at once, so the rate does not hang on one client's start-up
    # time (a sanitizer build's sriovctl alone can be slower than 10 a second).
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: env.ctl("--json", "plan", user=NOBODY), range(200)))
    refused = [r for r in results if r.returncode != 0]
    for r in refused:
        assert r.returncode == 1 and json.loads(r.stdout)["error"] == E + "Busy", r.stdout
    assert refused, "200 unprivileged dry runs, none refused"
    env.ctl("plan", check=0)       # root is not limited


def test_rt_cpus(env, d, mon):
    # RT CPUs are booked per guest like VFs: node 0 of the fixture has RT CPUs 2-7. Six rt-vcpu
    # guests there get one each, none twice; a seventh is refused with NoRtCpu naming the node; a
    # second NIC of a booked guest shares its CPU; a release frees the CPU for the next guest.
    def rt_nodes():
        return plain("aa{sv}", env.prop("RtCpuNodes"))

    def node0(rows):
        [row] = [r for r in rows if r.get("numa_node") == 0]
        return row

    def pf0_changes(*call):
        """The PropertiesChanged of PF0's Device1 that come before the reply to call."""
        conn = minibus.Connection(env.bus.address)
        try:
            conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                      "type='signal',sender='org.sriovd.Manager1'")
            conn.call(*DEST, IFACE, *call)
            return [v[1] for m, p, v in conn.signals if m == "PropertiesChanged" and p == pf_path(PF0)]
        finally:
            conn.close()

    # Capacity and use per NUMA node, on the Manager (RtCpuNodes) and in sriovctl status.
    before = rt_nodes()
    assert node0(before) == {"numa_node": 0, "cpus": 6, "booked": 0, "shared": 0, "room": 0, "guests": 0,
                             "waiting": 0}, before
    # PF0 is on node 0. Its ClassAvailable for rt-vcpu is what node 0's six RT CPUs can take as well.
    fig = pf_figures(env, PF0)
    assert fig["ClassAvailable"]["rt-vcpu"] == min(6, fig["VfFree"] + fig["VfPreemptible"]), fig
    assert env.ctl_json("status")["rt_cpus"] == before
    got = {}
    for i in range(6):
        r = env.rec("Allocate", "sssa{sv}", f"rt-{i}", "rt-vcpu", f"vm-rt-{i}", 1, "numa_node", "i", 0)
        assert r.get("rt_cpus") and len(r["rt_cpus"]) == 1 and r.get("rt_waiting") is False, r
        got[f"rt-{i}"] = r["rt_cpus"][0]
    assert sorted(got.values()) == [2, 3, 4, 5, 6, 7], got
    full = {"numa_node": 0, "cpus": 6, "booked": 6, "shared": 0, "room": 0, "guests": 6, "waiting": 0}
    assert node0(rt_nodes()) == full, rt_nodes()
    # PF0 still has free VFs, but no rt-vcpu tenant would be accepted there: ClassAvailable says 0,
    # and PropertiesChanged said so.
    fig = pf_figures(env, PF0)
    assert fig["VfFree"] > 0 and fig["ClassAvailable"]["rt-vcpu"] == 0, fig
    assert fig["ClassAvailable"]["latency-critical"] == fig["VfFree"] + fig["VfPreemptible"], fig
    mon.wait("PropertiesChanged", lambda data: data[0] == DEVICE1 and "ClassAvailable" in data[1] and
             plain("a{su}", data[1]["ClassAvailable"]["data"])["rt-vcpu"] == 0, path=pf_path(PF0))
    # PropertiesChanged said so: the last RtCpuNodes announced has node 0 full.
    mon.wait("PropertiesChanged", lambda data: "RtCpuNodes" in data[1] and
             node0(plain("aa{sv}", data[1]["RtCpuNodes"]["data"])) == full)
    st = env.ctl_json("status")
    assert node0(st["rt_cpus"]) == full, st
    # Every row of --json has each key (null when absent), as sriovd sent it otherwise.
    assert all(set(r) == set(full) for r in st["rt_cpus"]), st
    text = env.ctl("status", check=0).stdout
    assert re.search(r"^RT CPUs: +node 0: 6 of 6 booked, 0 shared \(room for 0\), 6 guests, 0 waiting$", text, re.M), text
    doc = env.ctl_error(1, E + "NoRtCpu", "allocate", "rt-6", "rt-vcpu", "--domain", "vm-rt-6", "--numa-node", "0")
    assert "no RT CPU free on node 0" in doc["message"] and "vm-rt-0" in doc["message"], doc
    assert not any(t["tenant"] == "rt-6" for t in env.tenants())
    second = env.rec("Allocate", "sssa{sv}", "rt-0-b", "rt-vcpu", "vm-rt-0", 1, "numa_node", "i", 0)
    assert second["rt_cpus"] == [got["rt-0"]], (second, got)
    assert node0(rt_nodes()) == full, rt_nodes()   # one more NIC, not one more guest
    # What an operator reads: the tenant's line and the tenants table name the guest's RT CPU.
    line = env.ctl("tenant", "rt-0-b").stdout
    assert line.rstrip().endswith(f", RT CPUs {got['rt-0']}"), line
    table = env.ctl("tenants").stdout.splitlines()
    assert table[0].split()[-1] == "RT-CPUS", table[0]
    rows = {l.split()[0]: l.split() for l in table[1:]}
    assert rows["rt-1"][-1] == str(got["rt-1"]) and rows.get("t-virtio", ["-"])[-1] == "-", rows
    assert env.ctl_json("tenant", "rt-1")["rt_cpus"] == [got["rt-1"]]
    # A release frees a VF and an RT CPU: PF0 offers one rt-vcpu tenant again, and says so first.
    changed = pf0_changes("Release", "s", "rt-3")
    assert changed and changed[-1]["ClassAvailable"]["rt-vcpu"] == 1, changed
    assert node0(rt_nodes()) == dict(full, booked=5, guests=5), rt_nodes()
    mon.wait("PropertiesChanged", lambda data: "RtCpuNodes" in data[1] and
             node0(plain("aa{sv}", data[1]["RtCpuNodes"]["data"]))["booked"] == 5)
    assert pf_figures(env, PF0)["ClassAvailable"]["rt-vcpu"] == 1
    r = env.rec("Allocate", "sssa{sv}", "rt-6", "rt-vcpu", "vm-rt-6", 1, "numa_node", "i", 0)
    assert r["rt_cpus"] == [got["rt-3"]], (r, got)
    for t in ["rt-0", "rt-0-b", "rt-1", "rt-2", "rt-4", "rt-5", "rt-6"]:
        env.ctl("release", t, check=0)
    assert rt_nodes() == before, rt_nodes()

    # A reload that takes RT CPUs away changes no VF, yet ClassAvailable drops with them, and
    # PropertiesChanged says so before Reload returns. The same when they come back.
    fig = pf_figures(env, PF0)
    for rt, want in [("2-3,18-23", 2), (None, fig["ClassAvailable"]["rt-vcpu"])]:
        d.write_conf("[cpus]\nrt = %s\n" % rt if rt else "")
        changed = pf0_changes("Reload")
        assert changed and changed[-1] == {"ClassAvailable": dict(fig["ClassAvailable"], **{"rt-vcpu": want})}, \
            (rt, changed)
        assert pf_figures(env, PF0) == dict(fig, ClassAvailable=changed[-1]["ClassAvailable"])
    assert pf_figures(env, PF0) == fig


def test_capacity_and_limits(env, d, mon):
    env.ctl_error(1, E + "UnknownClass", "allocate", "t1", "no-such-class")
    env.ctl_error(1, E + "UnknownTenant", "release", "no-such-tenant")
    env.ctl_error(1, E + "UnknownTenant", "coalesce", "no-such-tenant", "1", "1")
    # sriov-required tenants until the VFs run out.
    for i in range(20):
        r = env.ctl("--json", "allocate", f"lc-{i}", "latency-critical")
        if r.returncode != 0:
            doc = json.loads(r.stdout)
            assert r.returncode == 1 and doc["error"] == E + "NoCapacity", (r.stdout, r.stderr)
            break
    else:
        raise AssertionError("16 VFs, 20 sriov-required tenants, none refused")
    assert env.prop("VfAllocated") == 16
    for i in range(20):
        env.ctl("release", f"lc-{i}")
    # TooManyTenants: the limit lowered to the count; existing tenants may still change.
    # MaxTenants follows the reload and announces it, so a client that counts rooms sees the new limit.
    n = len(env.tenants())
    d.write_conf(max_tenants=n)
    env.ctl("reload", check=0)
    assert env.prop("MaxTenants") == n
    mon.wait("PropertiesChanged", lambda data: data[1].get("MaxTenants", {}).get("data") == n)
    env.ctl_error(1, E + "TooManyTenants", "allocate", "one-more", "best-effort")
    env.ctl("allocate", "t-vf", "latency-critical", check=0)
    d.write_conf()
    env.ctl("reload", check=0)
    assert env.prop("MaxTenants") == 64
    mon.wait("PropertiesChanged", lambda data: data[1].get("MaxTenants", {}).get("data") == 64)
    # A broken configuration: Failed, with every FILE:LINE: mistake in the reply and on sriovctl's
    # stderr (ExecReload= shows it), exit 1; the running one stays.
    with open(d.conf, "a") as f:
        f.write("[daemon]\nno_such_key = 1\n[cpus]\nrt = x\n")
    lines = open(d.conf).read().splitlines()
    key_line, rt_line = lines.index("no_such_key = 1") + 1, lines.index("rt = x") + 1
    doc = env.ctl_error(1, E + "Failed", "reload")
    assert f"{d.conf}:{key_line}: " in doc["message"], doc
    r = env.ctl("reload", check=1)
    err = r.stderr.splitlines()
    assert any(ln.startswith(f"{d.conf}:{key_line}: unknown key") for ln in err), r.stderr
    assert any(ln.startswith(f"{d.conf}:{rt_line}: ") for ln in err), r.stderr
    assert env.prop("VfTarget") == 0.85
    # A good one is in force when Reload returns: VfTarget follows vf_target_utilization at once.
    d.write_conf("vf_target_utilization = 70\n")
    env.ctl("reload", check=0)
    assert env.prop("VfTarget") == 0.7
    d.write_conf()
    env.ctl("reload", check=0)
    assert env.prop("VfTarget") == 0.85


def test_failed_save(env, d, mon):
    """The state cannot be saved: Failed, nothing changes. The state directory is a tmpfs of its
    own (see main()), filled here: the disk is full for the journal sriovd appends to, on the fd
    it holds open, and for the file it then writes whole."""
    env.ctl("allocate", "opens-journal", "best-effort", check=0)
    env.ctl("release", "opens-journal", check=0)
    savefault.fill(d.state, STATE_TMPFS_SIZE)
    try:
        pad_until_refused(env)
        before = snapshot(env, d)
        env.ctl_error(1, E + "Failed", "allocate", "unsaved", "best-effort")
    finally:
        savefault.free(d.state)
    assert snapshot(env, d) == before
    # The next change writes everything whole, and the journal starts again.
    env.ctl("allocate", "saved-after", "best-effort", check=0)
    assert "saved-after" in [t["tenant"] for t in statefile.saved(d.state)["tenants"]]
    env.ctl("release", "saved-after", check=0)
    if "pad" in [t["tenant"] for t in env.tenants()]:
        env.ctl("release", "pad", check=0)


def pad_until_refused(env):
    """A full disk still takes a journal line that fits in the journal's last page. So the tenant
    "pad" changes (a new domain each time) until a change is refused. From then on sriovd writes
    the file whole, and a full disk refuses every change. A line is longer than 64 bytes, so a
    page holds fewer than page size / 64 of them."""
    for i in range(os.sysconf("SC_PAGESIZE") // 64 + 8):
        r = env.ctl("--json", "allocate", "pad", "best-effort", "--domain", f"vm-pad-{i}-" + "x" * 200)
        if r.returncode != 0:
            assert r.returncode == 1 and json.loads(r.stdout)["error"] == E + "Failed", (r.stdout, r.stderr)
            print(f"note: the full disk took {i} change(s), then refused one")
            return
    raise AssertionError("a full disk took every change")


def test_sriovctl_exit_codes(env, d, mon):
    assert env.ctl(check=2).stderr
    env.ctl("frobnicate", check=2)
    env.ctl("allocate", "only-one", check=2)
    env.ctl("coalesce", "t", "x", "1", check=2)
    env.ctl("plan", "--numa-node", "1", check=2)
    r = subprocess.run([SRIOVCTL, "--address", "unix:path=/nonexistent/bus", "status"], capture_output=True, text=True)
    assert r.returncode == 4, r
    r = subprocess.run([SRIOVCTL, "status"], capture_output=True, text=True,
                       env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=env.bus.address))
    assert r.returncode == 0 and "running" in r.stdout, r
    assert subprocess.run([SRIOVCTL, "--help"], capture_output=True).returncode == 0


def test_concurrency(env, d, mon):
    classes = ["latency-critical", "throughput", "best-effort"]

    def client(i):
        for j in range(6):
            t = f"c{i}-{j}"
            r = env.ctl("allocate", t, classes[(i + j) % 3], "--numa-node", str(j % 2))
            assert r.returncode in (0, 1), r.stderr
            if j % 2:
                env.ctl("release", t)
        return i

    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(client, range(16)))
    rows = env.tenants()
    vfs = [r["address"] for r in rows if "address" in r]
    assert len(vfs) == len(set(vfs)), "a VF is held twice"
    assert all(r["kind"] == "vf" for r in rows if "address" in r)
    state = json.loads(d.state_file())
    saved = {t["tenant"]: (t["class"], t["kind"], t["vf"] or "", t["mac"]) for t in state["tenants"]}
    listed = {r["tenant"]: (r["class"], r["kind"], r.get("address", ""), r["mac"]) for r in rows}
    assert saved == listed, (saved, listed)
    assert env.prop("VfAllocated") == len(vfs)


def test_restart(env, d, mon):
    before = env.tenants()
    assert before
    labels = [t for t in before if t["tenant"] == "t-labels"]
    assert labels and labels[0]["pin_pf"] and labels[0]["domain_uuid"] and labels[0]["owner"], labels
    assert [t["max_tx_rate"] for t in before if t["tenant"] == "t-rate"] == [250], before
    assert d.stop(signal.SIGTERM) == 0
    d.start()
    assert env.tenants() == before
    assert env.rec("GetTenant", "s", before[0]["tenant"]) == before[0]
    assert {p for p in env.managed_objects() if "/tenant/" in p} == {t["path"] for t in before}
    d.stop(signal.SIGKILL)
    d.start()
    assert env.tenants() == before


def test_bus_daemon_restart(env, d, mon):
    """dbus-daemon restarts under sriovd: the API comes back by itself, tenants intact."""
    before = env.tenants()
    env.bus.stop()
    env.bus.start()
    assert wait_until(lambda: env.call("Ping", check=False).returncode == 0, timeout=20), d.stderr()[-3000:]
    assert "Lost the system bus" in d.stderr() and "back on the bus" in d.stderr()
    assert env.tenants() == before
    # The objects are back with the connection: what a reconnecting controller reads first.
    assert {p for p in env.managed_objects() if "/tenant/" in p} == {t["path"] for t in before}
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                  "type='signal',sender='org.sriovd.Manager1'")
        conn.call(*DEST, IFACE, "Allocate", "sssa{sv}", "t-after-bus", "best-effort", "", {})
        conn.call(*DEST, IFACE, "Release", "s", "t-after-bus")
        members = [m for m, p, v in conn.signals if p == DEST[1] and v and v[0] == tenant_path("t-after-bus")]
        assert members == ["InterfacesAdded", "InterfacesRemoved"], conn.signals
    finally:
        conn.close()


LOGCTL = ["org.sriovd.Manager1", "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1"]


def test_log_control(env, d, mon):
    """org.freedesktop.LogControl1, what systemctl service-log-level calls: read open, write privileged."""
    def get(name, user=None):
        return env.busctl("get-property", *LOGCTL, name, user=user)["data"]

    assert get("LogLevel") == "info"
    assert get("SyslogIdentifier") == "sriovd"
    assert get("LogTarget") == "auto"
    # Debug messages appear only after the switch (a change call logs its caller at debug level).
    env.busctl("set-property", *LOGCTL, "LogLevel", "s", "debug")
    assert get("LogLevel") == "debug"
    assert get("LogLevel", user=NOBODY) == "debug"
    assert "Log level set to debug over D-Bus" in d.stderr()
    mark = len(d.stderr())
    env.call("Verify")
    assert "debug: " in d.stderr()[mark:], d.stderr()[mark:][-2000:]
    # syslog's spelling back, whatever was written: systemctl compares against these names.
    env.busctl("set-property", *LOGCTL, "LogLevel", "s", "3")
    assert get("LogLevel") == "err"
    env.busctl("set-property", *LOGCTL, "LogLevel", "s", "info")
    mark = len(d.stderr())
    env.call("Verify")
    assert "debug: " not in d.stderr()[mark:]
    # An invalid level: InvalidArgs (the error name, read off the wire), nothing changed.
    r = env.busctl("set-property", *LOGCTL, "LogLevel", "s", "verbose", check=False)
    assert r.returncode != 0 and "Invalid log level" in r.stderr, r.stderr
    conn = minibus.Connection(env.bus.address)
    try:
        conn.call(LOGCTL[0], LOGCTL[1], "org.freedesktop.DBus.Properties", "Set", "ssv", LOGCTL[2], "LogLevel",
                  ("s", "verbose"))
        raise AssertionError("LogLevel = verbose accepted")
    except minibus.Error as e:
        assert e.name == "org.freedesktop.DBus.Error.InvalidArgs", e.name
    finally:
        conn.close()
    assert get("LogLevel") == "info"
    r = env.busctl("set-property", *LOGCTL, "LogTarget", "s", "kmsg", check=False)
    assert r.returncode != 0 and "unsupported log target" in r.stderr, r.stderr
    assert get("LogTarget") == "auto"
    # Unprivileged writers: refused with NotPermitted, nothing changed.
    r = env.busctl("set-property", *LOGCTL, "LogLevel", "s", "debug", user=NOBODY, check=False)
    assert r.returncode != 0 and "needs root" in r.stderr, r.stderr
    assert get("LogLevel") == "info"
    r = env.busctl("set-property", *LOGCTL, "LogTarget", "s", "console", user=NOBODY, check=False)
    assert r.returncode != 0
    assert get("LogTarget") == "auto"


TESTS = [test_introspection, test_metrics, test_alerts, test_properties, test_classes, test_rt_cpus, test_allocation_is_no_drift, test_allocate, test_irqs_napi,
         test_object_manager, test_pf_figures, test_pin_and_labels, test_rates,
         test_dry_run_and_once_beside_the_daemon, test_plan_verify_drift, test_check_host, test_devices_come_and_go,
         test_force_num_vfs, test_invalid_arguments, test_unprivileged, test_busy, test_capacity_and_limits,
         test_failed_save, test_sriovctl_exit_codes, test_concurrency, test_log_control, test_restart, test_bus_daemon_restart]
ALL_ERRORS = {E + n for n in ["NoCapacity", "NoRtCpu", "UnknownTenant", "UnknownClass", "UnknownDevice", "InvalidArgument",
                              "Busy", "NotPermitted", "TooManyTenants", "Failed", "NotOnVf", "NotMonitoring"]}


def main():
    for tool in ["dbus-daemon", "busctl", "setpriv"]:
        if not shutil.which(tool):
            print(f"SKIP: {tool} missing")
            return 77
    # The clients act as root (changes) and as nobody (refusals): setpriv needs root for that.
    if os.geteuid() != 0:
        print("SKIP: needs root: clients run as root and, through setpriv, as nobody")
        return 77
    # With --only NAME, just that test runs: meson runs the failed save that way, as a test of
    # its own that can skip where the fault cannot be made.
    only = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--only" else None
    tests = [t for t in TESTS if t.__name__ == only or (not only and t is not test_failed_save)]
    assert tests, f"no test named {only}"
    no_fault = savefault.private_mounts()
    if test_failed_save in tests and no_fault:
        print(f"SKIP: the failed save cannot be injected: {no_fault}")
        return 77
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="sriovd-dbus-")
    os.chmod(tmp, 0o755)    # the unprivileged client reaches the bus socket
    # The state directory on a small tmpfs of its own, which test_failed_save fills.
    if not no_fault:
        os.mkdir(os.path.join(tmp, "state"))
        savefault.mount_state(os.path.join(tmp, "state"), STATE_TMPFS_SIZE)
    bus = Bus(tmp)
    d = mon = None
    try:
        d = Daemon(tmp, bus)
        mon = Monitor(tmp, bus)
        env = Env(bus)
        for t in tests:
            try:
                t(env, d, mon)
                print(f"ok {t.__name__}")
                passed += 1
            except Exception as e:
                import traceback
                traceback.print_exc()
                print(f"FAIL {t.__name__}: {e}")
                failed += 1
        missing = ALL_ERRORS - SEEN_ERRORS
        # One test alone cannot produce every error name; the whole run must.
        if not only and missing:
            print(f"FAIL error names never produced: {sorted(missing)}")
            failed += 1
        elif not only:
            print("ok every error name produced")
            passed += 1
        if failed:
            print(d.stderr()[-5000:])
    finally:
        if mon:
            mon.stop()
        if d:
            d.stop(signal.SIGKILL)
        bus.stop()
        savefault.unmount_state(os.path.join(tmp, "state"))
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
