#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-dbus-group.py — state saves grouped: concurrent changing calls share writes, and no
# reply goes before the write that holds its change.
#
# A private dbus-daemon with the shipped policy, the real sriovd (--log-level debug) on a copy of the
# two-socket fixture, its state directory on disk (/var/tmp), 16 client connections (minibus).
#  1. 16 clients x 20 Allocate of new tenants: every write is logged with how many changes it holds
#     ("State: N change(s) saved with one write"): the changes all count, in fewer writes than calls.
#  2. The same clients allocating, then releasing, and sriovd killed (-9) as soon as enough replies
#     came: the state directory (file and journal, read by tests/lib/statefile.py) holds every
#     acknowledged Allocate and none of the acknowledged Releases. Three rounds.
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibus  # noqa: E402
import sdnotify  # noqa: E402
import statefile  # noqa: E402

SRIOVD = sys.argv[1]
SOURCE = os.environ["SRIOVD_SOURCE_DIR"]
BUILD = os.environ["SRIOVD_BUILD_DIR"]
DEST = ["org.sriovd.Manager1", "/org/sriovd/Manager1", "org.sriovd.Manager1"]
CLIENTS, PER_CLIENT = 16, 20
IN_FLIGHT = {"org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
             "org.freedesktop.DBus.Error.NameHasNoOwner"}
SAVED = re.compile(r"State: (\d+) change\(s\) saved with one write")


class Daemon:
    def __init__(self, tmp, bus):
        self.tmp, self.bus = tmp, bus
        self.root = os.path.join(tmp, "root")
        self.state = os.path.join(tmp, "state")
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), self.root, symlinks=True)
        shutil.copytree(os.path.join(SOURCE, "conf", "tenant-classes.d"), os.path.join(tmp, "tenant-classes.d"))
        os.mkdir(self.state)
        self.conf = os.path.join(tmp, "sriovd.conf")
        with open(self.conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {self.state}\ndrift_check_sec = 0\nmax_tenants = 4096\n")
        self.log_path = os.path.join(tmp, "stderr")

    def start(self):
        self.log = open(self.log_path, "w")
        self.proc = sdnotify.start([SRIOVD, "--root", self.root, "--config", self.conf, "--log-level", "debug"],
                                   os.path.join(self.tmp, "notify"), dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address),
                                   stdout=self.log, stderr=self.log)

    def kill(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def groups(self):
        with open(self.log_path) as f:
            return [int(m.group(1)) for m in SAVED.finditer(f.read())]


def run_clients(address, work, stop=None):
    """work(client) -> [(method, tenant)]: each client's calls in order, on its own connection.
    Returns ({(method, tenant)} acknowledged, [errors])."""
    acked, errors, lock = set(), [], threading.Lock()
    barrier = threading.Barrier(CLIENTS)

    def client(c):
        conn = minibus.Connection(address, timeout=60)
        barrier.wait()
        try:
            for method, tenant in work(c):
                if stop is not None and stop.is_set():
                    return
                args = ("sssa{sv}", tenant, "best-effort", "", {}) if method == "Allocate" else ("s", tenant)
                conn.call(*DEST, method, *args)
                with lock:
                    acked.add((method, tenant))
        except minibus.Disconnected:
            pass   # the kill: what had no reply is in flight
        except minibus.Error as e:
            # The kill: the bus answers what sriovd never did, and what was sent to a name gone.
            if stop is None or not stop.is_set() and e.name not in IN_FLIGHT:
                with lock:
                    errors.append(f"{method} {tenant}: {e}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    return threads, acked, errors


def main():
    if not shutil.which("dbus-daemon"):
        print("SKIP: dbus-daemon missing")
        return 77
    if os.geteuid() != 0:
        print("SKIP: the shipped policy lets only root change state")
        return 77
    tmp = tempfile.mkdtemp(prefix="sriovd-test-group-", dir="/var/tmp")
    bus = d = None
    failures = []
    try:
        bus = minibus.PrivateBus(tmp, os.path.join(SOURCE, "conf", "org.sriovd.Manager1.conf"))
        d = Daemon(tmp, bus)
        d.start()

        # 1. Grouping: as many changes saved as acknowledged, in fewer writes.
        threads, acked, errors = run_clients(bus.address,
                                             lambda c: [("Allocate", f"g-{c}-{i}") for i in range(PER_CLIENT)])
        for t in threads:
            t.join()
        groups = d.groups()
        calls = CLIENTS * PER_CLIENT
        print(f"grouping: {calls} Allocate from {CLIENTS} clients -> {len(groups)} writes "
              f"(largest group {max(groups, default=0)}, mean {sum(groups) / max(len(groups), 1):.1f})")
        if errors:
            failures.append(f"grouping: {len(errors)} calls failed: {errors[:3]}")
        if len(acked) != calls:
            failures.append(f"grouping: {len(acked)} of {calls} calls acknowledged")
        if sum(groups) < calls:
            failures.append(f"grouping: the writes hold {sum(groups)} changes, {calls} were acknowledged")
        if not groups or len(groups) >= calls or max(groups) < 2:
            failures.append(f"grouping: {len(groups)} writes for {calls} concurrent changes: not grouped")
        saved = {t["tenant"] for t in statefile.saved(d.state)["tenants"]}
        missing = {t for _, t in acked} - saved
        if missing:
            failures.append(f"grouping: acknowledged but not saved: {sorted(missing)[:5]}")

        # 2. No reply before its write: kill -9 as soon as replies came, then read the directory.
        for rnd in range(3):
            for method in ("Allocate", "Release"):
                stop = threading.Event()
                threads, acked, errors = run_clients(
                    bus.address, lambda c: [(method, f"k{rnd}-{c}-{i}") for i in range(PER_CLIENT)], stop)
                # Released tenants are the ones this round allocated: wait for some acknowledgements.
                deadline = time.monotonic() + 60
                while len(acked) < CLIENTS * PER_CLIENT // 2 and time.monotonic() < deadline:
                    time.sleep(0.001)
                d.kill()
                stop.set()
                for t in threads:
                    t.join()
                doc = statefile.saved(d.state)
                saved = {t["tenant"] for t in doc["tenants"]}
                got = {t for m, t in acked if m == method}
                lost = got - saved if method == "Allocate" else got & saved
                print(f"kill round {rnd} during {method}: {len(got)} acknowledged, {len(saved)} saved, "
                      f"{doc['journal_lines']} journal lines, {len(lost)} lost")
                if errors:
                    failures.append(f"round {rnd} {method}: calls failed: {errors[:3]}")
                if lost:
                    failures.append(f"round {rnd} {method}: acknowledged, not on disk: {sorted(lost)[:5]}")
                d.start()
                if method == "Allocate":
                    # The Release phase releases every one: the allocations finished first.
                    rest, _, errs = run_clients(bus.address, lambda c: [
                        ("Allocate", f"k{rnd}-{c}-{i}") for i in range(PER_CLIENT)])
                    for t in rest:
                        t.join()
                    if errs:
                        failures.append(f"round {rnd}: re-allocating: {errs[:3]}")
    finally:
        if d and d.proc.poll() is None:
            d.kill()
        if bus:
            bus.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
