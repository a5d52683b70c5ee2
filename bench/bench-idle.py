#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-idle.py — an idle sriovd: wakeups and RSS over one window, against `sleep` and with the watchdog

"""Measure what an idle sriovd costs the host.

    bench-idle.py SRIOVD MKHOST [SECONDS]

Three processes run side by side over the same window (SECONDS, default 60, or
$SRIOVD_BENCH_IDLE_SEC): sriovd with drift_check_sec = 0 (must not wake up at
all), sriovd with WATCHDOG_USEC=10 s (sd-event pings WATCHDOG=1 between 1/2 and
3/4 of the period, so about every 5 s), and `sleep infinity` as the baseline.
Each sriovd gets its own two-socket fixture tree and notify socket. Wakeups are
the growth of voluntary + involuntary context switches, summed over all tasks.
Reports figures and ratios; never fails on them, only on a daemon that does
not start, or does not exit 0 on SIGTERM.
"""

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

WATCHDOG_SEC = 10
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
CONFIG = "[daemon]\ndrift_check_sec = 0\n"


def read_status(pid):
    """The fields of /proc/PID/status, values as strings."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def kib(value):
    """ "1234 kB" -> 1234."""
    return int(value.split()[0])


def sample(pid):
    """Context switches summed over every task, plus the process's memory figures."""
    vol = invol = tasks = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            st = read_status(f"{pid}/task/{tid}")
        except FileNotFoundError:
            continue
        vol += int(st["voluntary_ctxt_switches"])
        invol += int(st["nonvoluntary_ctxt_switches"])
        tasks += 1
    st = read_status(pid)
    return {"vol": vol, "invol": invol, "tasks": tasks,
            "rss": kib(st["VmRSS"]), "hwm": kib(st["VmHWM"])}


def smaps_rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                out[key] = kib(value.strip())
    return out


def smaps_by_object(pid):
    """Rss, Private_Dirty and mapping count per mapped object ([heap], a library, anonymous)."""
    objects = {}
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 5)
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                name = head[5].strip() if len(head) == 6 else "[anonymous]"
                current = objects.setdefault(name, {"rss": 0, "dirty": 0, "maps": 0})
                current["maps"] += 1
            elif current is not None and line.startswith("Rss:"):
                current["rss"] += kib(line.split(":", 1)[1])
            elif current is not None and line.startswith("Private_Dirty:"):
                current["dirty"] += kib(line.split(":", 1)[1])
    return objects


class Daemon:
    """One sriovd on its own fixture copy, with its own notify socket."""

    def __init__(self, name, sriovd, tmp, fixture, watchdog_usec=None):
        self.name = name
        self.dir = os.path.join(tmp, name)
        os.mkdir(self.dir)
        self.root = os.path.join(self.dir, "root")
        shutil.copytree(fixture, self.root, symlinks=True)
        self.conf = os.path.join(self.dir, "sriovd.conf")
        with open(self.conf, "w") as f:
            f.write(CONFIG)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(os.path.join(self.dir, "notify"))
        self.messages = []   # (monotonic time, {field: value})
        self.sriovd = sriovd
        self.watchdog_usec = watchdog_usec
        self.log = open(os.path.join(self.dir, "log"), "w+")
        self.proc = None
        self.started = None
        self.ready_after = None

    def start(self):
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM",
                            "LISTEN_FDS", "LISTEN_PID")}
        env["NOTIFY_SOCKET"] = os.path.join(self.dir, "notify")
        if self.watchdog_usec:
            env["WATCHDOG_USEC"] = str(self.watchdog_usec)
        self.started = time.monotonic()
        self.proc = subprocess.Popen([self.sriovd, "--root", self.root, "--config", self.conf],
                                     env=env, stdout=self.log, stderr=self.log,
                                     stdin=subprocess.DEVNULL)

    def receive(self):
        data = self.sock.recv(4096).decode(errors="replace")
        fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
        self.messages.append((time.monotonic(), fields))
        if "READY" in fields and self.ready_after is None:
            self.ready_after = time.monotonic() - self.started
        return fields

    def count(self, key, since=0.0, until=float("inf")):
        return sum(1 for t, f in self.messages if key in f and since <= t <= until)

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def log_lines(self):
        return len(self.log_text().splitlines())


def pump(daemons, deadline):
    """Receive notify messages until deadline."""
    socks = {d.sock: d for d in daemons}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        readable, _, _ = select.select(list(socks), [], [], left)
        for s in readable:
            socks[s].receive()


def wait_ready(daemons):
    deadline = time.monotonic() + READY_TIMEOUT
    while any(d.ready_after is None for d in daemons):
        for d in daemons:
            if d.proc.poll() is not None:
                sys.exit(f"bench-idle: {d.name} sriovd exited with {d.proc.returncode} before READY=1:\n"
                         f"{d.log_text()}")
        if time.monotonic() > deadline:
            sys.exit(f"bench-idle: no READY=1 within {READY_TIMEOUT:.0f} s")
        pump(daemons, min(deadline, time.monotonic() + 0.2))


def stop(daemon):
    daemon.proc.send_signal(signal.SIGTERM)
    try:
        return daemon.proc.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        daemon.proc.kill()
        daemon.proc.wait()
        return None


def mib(k):
    return f"{k / 1024:.1f} MiB"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sriovd, mkhost = sys.argv[1], sys.argv[2]
    window = float(sys.argv[3] if len(sys.argv) == 4 else os.environ.get("SRIOVD_BENCH_IDLE_SEC", "60"))

    tmp = tempfile.mkdtemp(prefix="sriovd-bench-idle-")
    daemons = []
    sleeper = None
    try:
        fixture = os.path.join(tmp, "fixture")
        subprocess.run([sys.executable, mkhost, "two-socket", fixture], check=True,
                       stdout=subprocess.DEVNULL)

        plain = Daemon("idle", sriovd, tmp, fixture)
        watched = Daemon("watchdog", sriovd, tmp, fixture, watchdog_usec=WATCHDOG_SEC * 1000000)
        daemons = [plain, watched]
        for d in daemons:
            d.start()
        sleeper = subprocess.Popen(["sleep", "infinity"], stdin=subprocess.DEVNULL)
        wait_ready(daemons)
        ready_lines = {d.name: d.log_lines() for d in daemons}

        # Let start-up settle (page faults, the READY datagram) before the window opens.
        pump(daemons, time.monotonic() + 1.0)
        procs = {"idle": plain.proc.pid, "watchdog": watched.proc.pid, "sleep": sleeper.pid}
        t0 = time.monotonic()
        before = {k: sample(pid) for k, pid in procs.items()}
        pump(daemons, t0 + window)
        after = {k: sample(pid) for k, pid in procs.items()}
        t1 = time.monotonic()
        elapsed = t1 - t0

        rollup = {k: smaps_rollup(pid) for k, pid in procs.items()}
        objects = smaps_by_object(plain.proc.pid)
        late_lines = {d.name: d.log_lines() - ready_lines[d.name] for d in daemons}
        pings = watched.count("WATCHDOG", t0, t1)
        plain_msgs = sum(1 for t, _ in plain.messages if t0 <= t <= t1)

        rcs = {d.name: stop(d) for d in daemons}
        logs = {d.name: d.log_text() for d in daemons}
    finally:
        for d in daemons:
            if d.proc and d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        if sleeper:
            sleeper.kill()
            sleeper.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    def wakeups(k):
        return (after[k]["vol"] - before[k]["vol"]) + (after[k]["invol"] - before[k]["invol"])

    print(f"sriovd idle benchmark: two-socket fixture, drift_check_sec = 0, window {elapsed:.1f} s")
    print(f"READY=1 after {plain.ready_after * 1000:.0f} ms (idle), "
          f"{watched.ready_after * 1000:.0f} ms (watchdog)\n")

    print(f"  {'process':<28} {'tasks':>5} {'vol':>6} {'invol':>6} {'wakeups':>8} {'per min':>8}"
          f" {'VmRSS':>10} {'VmHWM':>10} {'Pss':>10}")
    rows = [("sleep infinity (baseline)", "sleep"), ("sriovd idle", "idle"),
            (f"sriovd WATCHDOG_USEC={WATCHDOG_SEC}s", "watchdog")]
    for label, k in rows:
        a = after[k]
        print(f"  {label:<28} {a['tasks']:>5} {a['vol'] - before[k]['vol']:>6}"
              f" {a['invol'] - before[k]['invol']:>6} {wakeups(k):>8} {wakeups(k) * 60 / elapsed:>8.1f}"
              f" {mib(a['rss']):>10} {mib(a['hwm']):>10} {mib(rollup[k].get('Pss', 0)):>10}")

    base_rss = after["sleep"]["rss"]
    print(f"\n  sriovd RSS / sleep RSS = {after['idle']['rss'] / base_rss:.2f}x"
          f" ({mib(after['idle']['rss'])} / {mib(base_rss)});"
          f" Pss ratio {rollup['idle']['Pss'] / rollup['sleep']['Pss']:.2f}x")
    print(f"  idle wakeups: sriovd {wakeups('idle')} vs sleep {wakeups('sleep')} "
          f"(expected 0 with drift_check_sec = 0); notify messages in window: {plain_msgs}")
    lo, hi = elapsed / (WATCHDOG_SEC * 0.75), elapsed / (WATCHDOG_SEC * 0.5)
    print(f"  watchdog: expected ~window/{WATCHDOG_SEC / 2:g}s = {hi:.1f} pings"
          f" (sd-event pings at 1/2..3/4 of the period: {int(lo)}..{int(hi)});"
          f" measured {pings} WATCHDOG=1, {wakeups('watchdog')} wakeups")
    print(f"  log lines after READY=1: idle {late_lines['idle']}, watchdog {late_lines['watchdog']}")

    r = rollup["idle"]
    print(f"\n  sriovd smaps_rollup: Rss {r.get('Rss', 0)} kB = Anonymous {r.get('Anonymous', 0)} kB"
          f" + file {r.get('Rss', 0) - r.get('Anonymous', 0)} kB;"
          f" Private_Dirty {r.get('Private_Dirty', 0)} kB, Shared_Clean {r.get('Shared_Clean', 0)} kB")
    print(f"\n  top 5 mappings of sriovd by Rss (summed per object, of {len(objects)} objects)")
    print(f"  {'Rss':>8} {'Dirty':>8} {'maps':>5}  object")
    for name, o in sorted(objects.items(), key=lambda kv: -kv[1]["rss"])[:5]:
        print(f"  {o['rss']:>5} kB {o['dirty']:>5} kB {o['maps']:>5}  {name}")

    print()
    failed = False
    for name, rc in rcs.items():
        status = "exit 0" if rc == 0 else ("did not exit within %.0f s" % STOP_TIMEOUT if rc is None
                                           else f"exit {rc}")
        print(f"  SIGTERM -> sriovd {name}: {status}")
        if rc != 0:
            failed = True
            print(logs[name], file=sys.stderr)
    if failed:
        sys.exit("bench-idle: sriovd did not exit 0 on SIGTERM")


if __name__ == "__main__":
    main()
