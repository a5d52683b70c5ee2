#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-dbus.py — org.sriovd.Manager1 round trips: Allocate (saved with fsync before the reply),
# idempotent Allocate, GetTenant and Release, against Ping on the same connection kind as the floor

"""    bench-dbus.py SRIOVD CLIENT FIXTURE_DIR CLASSES_DIR

A private system-like dbus-daemon, the real sriovd on a copy of the two-socket
fixture with its state directory on this machine's disk (so Allocate pays the
real fsync), and bench-dbus-client with 1, 4 and 16 concurrent connections.
Ping is the floor: the same daemon, the same bus, a method that does nothing.
Prints p50/p99 and calls per second, and each method's p99 as a multiple of
Ping's at the same concurrency (target: within 3x). Never fails on timing.
Calls per level from $SRIOVD_BENCH_DBUS_CALLS (default 2000; Ping and GetTenant 5x).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

SRIOVD, CLIENT, FIXTURE, CLASSES = sys.argv[1:5]
CALLS = int(os.environ.get("SRIOVD_BENCH_DBUS_CALLS", "2000"))
LEVELS = [int(c) for c in os.environ.get("SRIOVD_BENCH_DBUS_CLIENTS", "1,4,16").split(",")]

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
  </policy>
</busconfig>
"""


def main():
    if not shutil.which("dbus-daemon"):
        print("SKIP: dbus-daemon missing")
        return 77
    # On disk, not tmpfs: the fsync must cost what it costs on a host.
    tmp = tempfile.mkdtemp(prefix="sriovd-bench-dbus-", dir=os.environ.get("SRIOVD_BENCH_DIR", "/var/tmp"))
    bus = d = None
    try:
        sock = os.path.join(tmp, "bus.sock")
        with open(os.path.join(tmp, "bus.conf"), "w") as f:
            f.write(BUS_CONF.format(sock=sock))
        bus = subprocess.Popen(["dbus-daemon", "--config-file=" + os.path.join(tmp, "bus.conf"), "--nofork",
                                "--print-address"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        bus.stdout.readline()
        address = "unix:path=" + sock
        root = os.path.join(tmp, "root")
        shutil.copytree(FIXTURE, root, symlinks=True)
        shutil.copytree(CLASSES, os.path.join(tmp, "tenant-classes.d"))
        os.mkdir(os.path.join(tmp, "state"))
        conf = os.path.join(tmp, "sriovd.conf")
        with open(conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {tmp}/state\ndrift_check_sec = 0\nmax_tenants = 16384\n")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(os.path.join(tmp, "notify"))
        notify.settimeout(60)
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, "notify"), DBUS_SYSTEM_BUS_ADDRESS=address)
        env.pop("JOURNAL_STREAM", None)
        d = subprocess.Popen([SRIOVD, "--root", root, "--config", conf, "--log-level", "warning"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while "READY=1" not in notify.recv(4096).decode():
            pass
        # Nobody reads STATUS= after this: a full datagram queue would block sriovd in sd_notify().
        notify.close()

        def run(method, clients, calls, prefix, same=False):
            args = [CLIENT, "-a", address, "-m", method, "-c", str(clients), "-n", str(calls), "-p", prefix]
            out = subprocess.run(args + (["-s"] if same else []), capture_output=True, text=True, timeout=600)
            if out.returncode != 0:
                raise SystemExit(f"bench-dbus-client {method} failed: {out.stderr[-2000:]}")
            return json.loads(out.stdout)

        print(f"{'method':<14} {'clients':>7} {'calls':>6} {'p50 us':>9} {'p99 us':>9} {'calls/s':>9}  p99/Ping")
        for clients in LEVELS:
            prefix = f"b{clients}"
            rows = [run("Ping", clients, CALLS * 5, prefix)]
            rows.append(run("Allocate", clients, CALLS, prefix))            # new tenants: saved + fsync
            rows.append(run("AllocateSame", clients, CALLS, prefix))        # idempotent: nothing saved
            rows.append(run("GetTenant", clients, CALLS * 5, prefix, same=True))
            rows.append(run("Release", clients, CALLS, prefix))             # saved + fsync
            floor = rows[0]["p99_us"]
            for r in rows:
                print(f"{r['method']:<14} {r['clients']:>7} {r['calls']:>6} {r['p50_us']:>9.1f} {r['p99_us']:>9.1f} "
                      f"{r['per_sec']:>9.0f}  {r['p99_us'] / floor:6.1f}x")
        print("Allocate/Release write the state file (temp, fsync, rename, directory fsync) before replying;")
        print("AllocateSame and GetTenant are the API's own cost over the Ping floor.")
    finally:
        if d:
            d.kill()
            d.wait()
        if bus:
            bus.kill()
            bus.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
