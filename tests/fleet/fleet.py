# SPDX-License-Identifier: LGPL-2.1-or-later
# fleet.py — a fleet of fixture hosts scheduled through the real OpenStack Placement.
#
# Placement runs as a child process (tests/lib/placementsrv.py) on an SQLite database, so a test
# can stop it, kill it and start it again on the same data. Each host is nova's compute-node
# provider named host-N, a private dbus-daemon, sriovd on its own copy of a fixture tree, and
# its own sriovd-placement connector. A watcher thread per host mirrors sriovd's objects from
# its signals, so the controller waits for events instead of polling sriovd.
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus"))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import minibus  # noqa: E402
import placementsrv  # noqa: E402
import sdnotify  # noqa: E402

PYTHON = "/usr/bin/python3"
NAME = "org.sriovd.Manager1"
ROOT_PATH = "/org/sriovd/Manager1"
MANAGER = "org.sriovd.Manager1"
TENANT = "org.sriovd.Tenant1"
DEVICE = "org.sriovd.Device1"
PROPS = "org.freedesktop.DBus.Properties"
OBJMGR = "org.freedesktop.DBus.ObjectManager"
DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")

VF = "CUSTOM_SRIOVD_VF"
TAG_PREFIX = "CUSTOM_SRIOVD_C_"
CLASS_TRAIT_PREFIX = "CUSTOM_SRIOVD_CLASS_"
# The baseline: nova alone, the VFs as plain inventory of the compute node.
BASE_VF = "SRIOV_NET_VF"
BASE_TRAIT = "CUSTOM_FLEET_BASELINE"
# What every flavor asks of the compute node itself, as nova does; never the limiting resource.
ROOT_ASK = {"VCPU": 2, "MEMORY_MB": 2048}
ROOT_INVENTORY = {"VCPU": {"total": 64, "allocation_ratio": 16.0},
                  "MEMORY_MB": {"total": 1 << 20, "allocation_ratio": 1.0},
                  "DISK_GB": {"total": 4096, "allocation_ratio": 1.0}}
PROJECT = "fleet"


def custom_name(name):
    """A class name as Placement spells it: upper case, every character outside [A-Z0-9] as _."""
    return "".join(c if c.isascii() and (c.isupper() or c.isdigit()) else "_" for c in name.upper())


def tag_class(name):
    return TAG_PREFIX + custom_name(name)


def class_trait(name):
    return CLASS_TRAIT_PREFIX + custom_name(name)


def path_encode(prefix, s):
    """sd_bus_path_encode(): every byte but [A-Za-z0-9], and a leading digit, as _XX."""
    return prefix + "/" + "".join(c if c.isascii() and (c.isalpha() or (c.isdigit() and i > 0)) else "_%02x" % ord(c)
                                  for i, c in enumerate(s))


def class_kinds(classes_dir):
    """{class: vnic} of the .ini files of a tenant-classes.d directory."""
    import configparser
    out = {}
    for f in sorted(os.listdir(classes_dir)):
        if f.endswith(".ini"):
            p = configparser.ConfigParser(inline_comment_prefixes=(";", "#"), strict=False)
            p.read(os.path.join(classes_dir, f))
            out[f[:-4]] = p.get("class", "vnic")
    return out


class Bus(minibus.PrivateBus):
    """minibus's private system bus, started so that it dies with the harness."""

    def __init__(self, tmp, policy):
        self.sock = os.path.join(tmp, "bus.sock")
        self.address = "unix:path=" + self.sock
        self.conf = os.path.join(tmp, "bus.conf")
        with open(self.conf, "w") as f:
            f.write(minibus.BUS_CONF.format(sock=self.sock, policy=policy))
        self.proc = subprocess.Popen(["dbus-daemon", "--config-file=" + self.conf, "--nofork", "--print-address"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     preexec_fn=placementsrv.die_with_parent)
        if not self.proc.stdout.readline().startswith("unix:"):
            raise RuntimeError("dbus-daemon did not start")


def why_not():
    """Why the fleet cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root: only root may own sriovd's name on the bus, as on a host"
    if not shutil.which("dbus-daemon"):
        return "needs dbus-daemon"
    return placementsrv.missing()


def stopped(pid, timeout=2.0):
    """Wait until a process that was sent SIGSTOP shows it; its state letter, T once stopped."""
    deadline = time.monotonic() + timeout
    while True:
        state = process_state(pid)
        if state in ("T", None) or time.monotonic() > deadline:
            return state
        time.sleep(0.02)


def process_state(pid):
    """The state letter of /proc/PID/stat (R, S, T, Z ...), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


# ---- a host: bus, sriovd, connector, and a mirror of sriovd's objects ----

class Host:
    def __init__(self, fleet, index, pristine):
        self.fleet = fleet
        self.index = index
        self.name = f"host-{index}"
        self.dir = os.path.join(fleet.work, self.name)
        os.makedirs(self.dir)
        self.root = os.path.join(self.dir, "root")
        shutil.copytree(pristine, self.root, symlinks=True)
        self.state_dir = os.path.join(self.dir, "state")
        os.mkdir(self.state_dir)
        # sriovd reads its classes beside its configuration: the shipped ones.
        self.classes_dir = os.path.join(self.dir, "tenant-classes.d")
        shutil.copytree(fleet.classes_src, self.classes_dir)
        self.conf = os.path.join(self.dir, "sriovd.conf")
        # No drift checks and no sampling: a fixture's IRQs do not move, and 8 daemons share 2
        # CPUs. The RT CPUs are 3 per node, fewer than the 4 VFs, so rt-vcpu is bounded by them.
        with open(self.conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {self.state_dir}\ndrift_check_sec = 0\nmonitor_interval_sec = 0\n"
                    f"\n[cpus]\nrt = {fleet.rt_cpus}\n")
        self.logs = os.path.join(self.dir, "logs")
        os.mkdir(self.logs)
        self.bus = Bus(self.dir, os.path.join(fleet.source, "conf", "org.sriovd.Manager1.conf"))
        self.uuid = str(uuid.UUID(int=fleet.rng.getrandbits(128), version=4))
        self.sriovd = None
        self.sriovd_starts = 0
        self.connector = None
        self.connector_starts = 0
        self.connector_conf = os.path.join(self.dir, "sriovd-placement.conf")
        self.reader = None
        self.watcher = Watcher(self)

    # sriovd

    def start_sriovd(self, timeout=60.0):
        self.sriovd_starts += 1
        run = os.path.join(self.dir, "run")
        os.makedirs(run, exist_ok=True)
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address, RUNTIME_DIRECTORY=run)
        try:
            with open(os.path.join(self.logs, "sriovd-%02d.log" % self.sriovd_starts), "w") as log:
                self.sriovd = sdnotify.start([self.fleet.sriovd_bin, "--root", self.root, "--config", self.conf],
                                             os.path.join(self.dir, "notify"), env, timeout, stdout=log, stderr=log,
                                             preexec_fn=placementsrv.die_with_parent)
        except RuntimeError as e:
            raise RuntimeError(f"{self.name}: {e}: {self.sriovd_log()[-500:]}") from None
        self.reader = None

    def kill_sriovd(self):
        """kill -9; the signal that ended it."""
        os.kill(self.sriovd.pid, signal.SIGKILL)
        self.sriovd.wait()
        return -self.sriovd.returncode

    # connector

    def write_connector_conf(self):
        url = self.fleet.placement.url
        with open(self.connector_conf, "w") as f:
            f.write(f"[placement]\nauth_type = admin_token\nendpoint = {url}\ntoken = admin:{self.name}\n"
                    f"endpoint_override = {url}\ntimeout = {self.fleet.http_timeout}\n\n"
                    f"[sriovd]\ncompute_node = {self.name}\nbus_address = {self.bus.address}\n"
                    f"poll_interval = {self.fleet.poll_interval}\n")

    def start_connector(self):
        self.connector_starts += 1
        self.write_connector_conf()
        log = open(os.path.join(self.logs, "connector-%02d.log" % self.connector_starts), "w")
        self.connector = subprocess.Popen(self.fleet.connector_cmd + ["--config-file", self.connector_conf],
                                          stdout=log, stderr=log, env=self.fleet.connector_env,
                                          preexec_fn=placementsrv.die_with_parent)
        log.close()

    def kill_connector(self):
        os.kill(self.connector.pid, signal.SIGKILL)
        self.connector.wait()
        return -self.connector.returncode

    def connector_log(self):
        with open(os.path.join(self.logs, "connector-%02d.log" % self.connector_starts), errors="replace") as f:
            return f.read()

    def sriovd_log(self):
        with open(os.path.join(self.logs, "sriovd-%02d.log" % self.sriovd_starts), errors="replace") as f:
            return f.read()

    # reads, from the controller's thread

    def call(self, path, iface, member, sig="", *args):
        for attempt in (0, 1):
            try:
                if self.reader is None:
                    self.reader = minibus.Connection(self.bus.address, timeout=30.0)
                return self.reader.call(NAME, path, iface, member, sig, *args)[0]
            except minibus.Disconnected:
                self.reader = None
                if attempt:
                    raise

    def tenant(self, tid):
        """sriovd's tenant record, or None when it has no such tenant."""
        try:
            return self.call(ROOT_PATH, MANAGER, "GetTenant", "s", tid)[0]
        except minibus.Error as e:
            if e.name == "org.sriovd.Error.UnknownTenant":
                return None
            raise

    def allocate(self, tid, cls, options=None):
        return self.call(ROOT_PATH, MANAGER, "Allocate", "sssa{sv}", tid, cls, "", options or {})[0]

    def release(self, tid):
        self.call(ROOT_PATH, MANAGER, "Release", "s", tid)

    def stop(self):
        self.watcher.stop()
        for p in (self.connector, self.sriovd):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.bus.stop()


class Watcher(threading.Thread):
    """Mirrors one host's sriovd objects from its signals: tenants, PFs and the manager's figures.

    It resynchronises with GetManagedObjects whenever sriovd (re)appears on the bus. Every change
    notifies the fleet's condition, so the controller waits for the event it needs.
    """

    def __init__(self, host):
        super().__init__(daemon=True, name="watch-" + host.name)
        self.host = host
        self.cond = host.fleet.cond
        self.tenants = {}      # id -> Tenant1 properties
        self.devices = {}      # PF address -> Device1 properties
        self.manager = {}      # Manager1 properties
        self.paths = {}        # object path -> ("tenant", id) | ("pf", address)
        self.vf_at = {}        # tenant -> monotonic time it was first seen on a VF
        self.up = False
        self.syncs = 0
        self._stopping = False
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:   # the controller reports it; a dead watcher must not hang a wait
            import traceback
            self.error = traceback.format_exc()
            with self.cond:
                self.cond.notify_all()
            if not self._stopping:
                print(f"{self.host.name}: watcher failed: {e}", flush=True)

    def _run(self):
        conn = minibus.Connection(self.host.bus.address, timeout=0.5)
        self.conn = conn
        conn.call(*DBUS, "AddMatch", "s", f"type='signal',sender='{NAME}'")
        conn.call(*DBUS, "AddMatch", "s", "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                  f"arg0='{NAME}'")
        self._sync(conn)
        while not self._stopping:
            try:
                mtype, _, fields, values = conn._message()
            except minibus.Disconnected as e:
                if "timed out" in str(e) or "timeout" in str(e):
                    continue
                raise
            if mtype != minibus.SIGNAL:
                continue
            member, path = fields.get(3), fields.get(1)
            if member == "NameOwnerChanged":
                if values[2]:
                    self._sync(conn)
                else:
                    with self.cond:
                        self.up = False
                        self.cond.notify_all()
                continue
            with self.cond:
                self._apply(member, path, values)
                self.cond.notify_all()

    def _sync(self, conn):
        conn.signals.clear()
        # The signal loop wakes twice a second to see stop(); a snapshot may take longer.
        conn.sock.settimeout(30.0)
        try:
            objs = conn.call(NAME, ROOT_PATH, OBJMGR, "GetManagedObjects")[0][0]
            man = conn.call(NAME, ROOT_PATH, PROPS, "GetAll", "s", MANAGER)[0][0]
        except minibus.Error:
            # Not on the bus (yet): NameOwnerChanged brings us back.
            with self.cond:
                self.up = False
                self.cond.notify_all()
            return
        finally:
            conn.sock.settimeout(0.5)
        # Signals that came before the replies are older than the snapshot.
        conn.signals.clear()
        with self.cond:
            self.tenants, self.devices, self.paths = {}, {}, {}
            self.manager = dict(man)
            for path, ifaces in objs.items():
                self._added(path, ifaces)
            self.up = True
            self.syncs += 1
            self.cond.notify_all()

    def _added(self, path, ifaces):
        now = time.monotonic()
        if TENANT in ifaces:
            props = dict(ifaces[TENANT])
            self.tenants[props["Id"]] = props
            self.paths[path] = ("tenant", props["Id"])
            if props.get("Kind") == "vf":
                self.vf_at.setdefault(props["Id"], now)
        if DEVICE in ifaces:
            props = dict(ifaces[DEVICE])
            self.devices[props["Address"]] = props
            self.paths[path] = ("pf", props["Address"])

    def _apply(self, member, path, values):
        if member == "InterfacesAdded":
            self._added(values[0], values[1])
        elif member == "InterfacesRemoved":
            what = self.paths.pop(values[0], None)
            if what and what[0] == "tenant":
                self.tenants.pop(what[1], None)
                self.vf_at.pop(what[1], None)
            elif what:
                self.devices.pop(what[1], None)
        elif member == "PropertiesChanged":
            iface, changed = values[0], values[1]
            if iface == MANAGER and path == ROOT_PATH:
                self.manager.update(changed)
                return
            what = self.paths.get(path)
            if what is None:
                return
            target = self.tenants.get(what[1]) if what[0] == "tenant" else self.devices.get(what[1])
            if target is not None:
                target.update(changed)
                if what[0] == "tenant" and target.get("Kind") == "vf":
                    self.vf_at.setdefault(what[1], time.monotonic())

    def stop(self):
        self._stopping = True


# ---- the fleet ----

class Fleet:
    """Placement, the compute nodes in it, and K hosts, each with sriovd and its connector."""

    def __init__(self, work, source, sriovd_bin, connector_cmd, hosts=8, poll_interval=0.5, seed=1,
                 fixture=("large", "--pfs", "2", "--vfs", "4", "--vf-irqs", "1"), rt_cpus="4-6,36-38",
                 http_timeout=3, connector_env=None, log=print):
        import random
        self.work, self.source = work, source
        self.sriovd_bin = sriovd_bin
        self.connector_cmd = list(connector_cmd) if connector_cmd else None
        self.connector_env = connector_env
        self.nhosts = hosts
        self.poll_interval = poll_interval
        self.http_timeout = http_timeout
        self.rng = random.Random(seed)
        self.fixture = fixture
        self.rt_cpus = rt_cpus
        self.log = log
        self.classes_src = os.path.join(source, "conf", "tenant-classes.d")
        self.kinds = class_kinds(self.classes_src)
        self.cond = threading.Condition()
        self.placement = placementsrv.Placement(work)
        self.hosts = []
        self.base = []          # the baseline's compute nodes: {"name", "uuid", "vfs"}
        self.checker = None

    def start(self, connectors=True):
        t0 = time.monotonic()
        pristine = os.path.join(self.work, "pristine")
        subprocess.run([PYTHON, os.path.join(self.source, "tests", "fixtures", "mkhost.py"), self.fixture[0],
                        pristine] + list(self.fixture[1:]), check=True)
        self.placement.start()
        self.log(f"Placement up in {time.monotonic() - t0:.1f} s at {self.placement.url}")
        self.checker = self.placement.client("checker")
        for i in range(1, self.nhosts + 1):
            h = Host(self, i, pristine)
            self.hosts.append(h)
            h.start_sriovd()
            h.watcher.start()
        self.add_compute_nodes()
        if connectors:
            for h in self.hosts:
                h.start_connector()
        self.log(f"{self.nhosts} hosts up in {time.monotonic() - t0:.1f} s")

    def add_compute_nodes(self):
        """nova-compute's providers for the hosts, and the baseline's nova-alone copies of them."""
        c = self.placement.client("nova-compute")
        c.ok("PUT", f"/traits/{BASE_TRAIT}")
        for h in self.hosts:
            vfs = sum(len(d.get("Vfs", [])) for d in h.watcher.devices.values())
            c.ok("POST", "/resource_providers", {"name": h.name, "uuid": h.uuid})
            c.ok("PUT", f"/resource_providers/{h.uuid}/inventories",
                 {"resource_provider_generation": 0, "inventories": ROOT_INVENTORY})
            b = {"name": "nova-" + h.name, "uuid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
                 "vfs": vfs}
            c.ok("POST", "/resource_providers", {"name": b["name"], "uuid": b["uuid"]})
            inv = dict(ROOT_INVENTORY, **{BASE_VF: {"total": vfs}})
            gen = c.ok("PUT", f"/resource_providers/{b['uuid']}/inventories",
                       {"resource_provider_generation": 0, "inventories": inv})["resource_provider_generation"]
            c.ok("PUT", f"/resource_providers/{b['uuid']}/traits",
                 {"resource_provider_generation": gen, "traits": [BASE_TRAIT]})
            self.base.append(b)

    def wait_published(self, timeout=60.0):
        """Wait until every host's connector has put its PFs in Placement; None, or what is missing."""
        deadline = time.monotonic() + timeout
        while True:
            missing = []
            status, doc = self.checker.get("/resource_providers")
            have = {}
            if status == 200:
                for rp in doc["resource_providers"]:
                    have.setdefault(rp["parent_provider_uuid"], []).append(rp["name"])
            for h in self.hosts:
                if h.connector.poll() is not None:
                    raise RuntimeError(f"{h.name}: the connector exited with status {h.connector.returncode}: "
                                       f"{h.connector_log()[-800:]}")
                want = {f"{h.name}:sriovd:{pf}" for pf in h.watcher.devices}
                got = set(have.get(h.uuid, []))
                if not want <= got:
                    missing.append(f"{h.name}: {sorted(want - got)}")
            if not missing:
                return None
            if time.monotonic() > deadline:
                return "; ".join(missing)
            time.sleep(0.3)

    def sanitizer_reports(self):
        """The first line of each ASan, LSan or UBSan report in any sriovd's log, after stop()."""
        out = []
        for h in self.hosts:
            for name in sorted(os.listdir(h.logs)):
                if not name.startswith("sriovd-"):
                    continue
                with open(os.path.join(h.logs, name), errors="replace") as f:
                    for line in f:
                        if "Sanitizer" in line or "runtime error:" in line:
                            out.append(f"{h.name} {name}: {line.strip()}")
                            break
        return out

    def total_vfs(self):
        return sum(b["vfs"] for b in self.base)

    def stop(self):
        for h in self.hosts:
            h.stop()
        self.placement.stop()

    # ---- agreement between Placement and every sriovd ----

    def snapshot(self):
        """Each host's mirrored sriovd objects, copied under the lock."""
        with self.cond:
            return {h.name: {"up": h.watcher.up, "tenants": {k: dict(v) for k, v in h.watcher.tenants.items()},
                             "devices": {k: dict(v) for k, v in h.watcher.devices.items()},
                             "manager": dict(h.watcher.manager)} for h in self.hosts}

    def mismatches(self):
        """Every disagreement between Placement and the hosts' sriovd, one string each."""
        out = []
        c = self.checker
        status, doc = c.get("/resource_providers")
        if status != 200:
            return [f"GET /resource_providers: {status}"]
        rps = doc["resource_providers"]
        snap = self.snapshot()
        tag_to_class = {tag_class(n): n for n in self.kinds}
        for h in self.hosts:
            s = snap[h.name]
            if not s["up"]:
                out.append(f"{h.name}: sriovd is not on the bus")
                continue
            tree = [rp for rp in rps if rp["root_provider_uuid"] == h.uuid]
            prefix = f"{h.name}:sriovd:"
            pf_rps = {rp["name"][len(prefix):]: rp for rp in tree
                      if rp["name"].startswith(prefix) and rp["parent_provider_uuid"] == h.uuid}
            for pf in sorted(set(s["devices"]) - set(pf_rps)):
                out.append(f"{h.name}: PF {pf} has no provider in Placement")
            for pf in sorted(set(pf_rps) - set(s["devices"])):
                out.append(f"{h.name}: provider of PF {pf}, which sriovd does not manage")
            consumers = {}
            for rp in tree:
                inv = c.ok("GET", f"/resource_providers/{rp['uuid']}/inventories")["inventories"]
                pf = rp["name"][len(prefix):] if rp["name"].startswith(prefix) else None
                if pf is None or pf not in pf_rps:
                    if VF in inv:
                        out.append(f"{h.name}: {VF} on {rp['name']}, which is no PF provider: VFs counted twice")
                    continue
                allocs = c.ok("GET", f"/resource_providers/{rp['uuid']}/allocations")["allocations"]
                used = {}
                for consumer, a in allocs.items():
                    for rc, n in a["resources"].items():
                        used[rc] = used.get(rc, 0) + n
                    tags = [r for r in a["resources"] if r in tag_to_class]
                    consumers[consumer] = (pf, tag_to_class[tags[0]] if len(tags) == 1 else f"tags {tags}",
                                           a["resources"].get(VF, 0))
                dev = s["devices"].get(pf)
                if dev is None:
                    continue
                free = self.sriovd_free(s, pf)
                vf = inv.get(VF)
                cap = vf["total"] - vf["reserved"] - used.get(VF, 0) if vf else 0
                if cap != free:
                    out.append(f"{h.name}: PF {pf}: Placement offers {cap} VFs, sriovd has {free} "
                               f"for a sriov-required tenant")
                # Each PF of the fleet's hosts is alone on its NUMA node and far from the tenant limit,
                # so no room is shared, and Placement offers each PF exactly its ClassAvailable.
                avail = dev.get("ClassAvailable")
                if avail is not None:
                    for name, kind in sorted(self.kinds.items()):
                        if kind != "sriov-required":
                            continue
                        t = inv.get(tag_class(name))
                        cap_c = t["total"] - t["reserved"] - used.get(tag_class(name), 0) if t else 0
                        if cap_c != avail.get(name, 0):
                            out.append(f"{h.name}: PF {pf}: Placement offers {cap_c} {name} tenants, "
                                       f"sriovd can serve {avail.get(name, 0)}")
            tenants = {t: (p.get("PinPf", ""), p.get("Class", ""), p.get("Kind"), p.get("Pf", ""))
                       for t, p in s["tenants"].items() if p.get("Owner") == "placement"}
            for consumer, (pf, cls, vfs) in sorted(consumers.items()):
                t = tenants.get(consumer)
                if t is None:
                    out.append(f"{h.name}: consumer {consumer} ({cls} on {pf}) is no sriovd tenant")
                elif (t[0], t[1]) != (pf, cls):
                    out.append(f"{h.name}: consumer {consumer} is {cls} on {pf} in Placement, "
                               f"{t[1]} on {t[0] or '-'} in sriovd")
                elif vfs and (t[2] != "vf" or t[3] != pf):
                    out.append(f"{h.name}: consumer {consumer} holds a VF of {pf} in Placement, "
                               f"sriovd serves it on {t[2]} {t[3]}")
            for t in sorted(set(tenants) - set(consumers)):
                out.append(f"{h.name}: tenant {t} (owner placement) has no allocation in Placement")
        return out

    def sriovd_free(self, s, pf):
        """VFs of a PF that a new sriov-required tenant could get: free plus preemptible."""
        dev = s["devices"][pf]
        if "VfFree" in dev and "VfPreemptible" in dev:
            return dev["VfFree"] + dev["VfPreemptible"]
        held = [t for t in s["tenants"].values() if t.get("Kind") == "vf" and t.get("Pf") == pf]
        pre = [t for t in held if self.kinds.get(t.get("Class")) == "sriov-preferred"]
        return len(dev.get("Vfs", [])) - len(held) + len(pre)

    def settle(self, timeout):
        """Wait until Placement and every sriovd agree: (seconds taken, the mismatches left)."""
        t0 = time.monotonic()
        while True:
            mm = self.mismatches()
            if not mm or time.monotonic() - t0 > timeout:
                return time.monotonic() - t0, mm
            time.sleep(0.2)
