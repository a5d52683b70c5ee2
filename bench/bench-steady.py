#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-steady.py — the daemon watching the large host for a minute, beside irqbalance on the same tree

"""What watching the large host costs: sriovd's daemon against irqbalance's.

    bench-steady.py SRIOVD MKHOST [SECONDS]

On copies of one `large` tree (8 PFs x 64 VFs, 4,224 IRQs, on tmpfs, with a 64-CPU
/proc/stat and /proc/softirqs added), side by side over the same window (SECONDS,
default 240, or $SRIOVD_BENCH_STEADY_SEC), after each has placed the host once:

  - sriovd, drift_check_sec = 5, monitor_interval_sec = 0 (drift checks only);
  - sriovd, drift_check_sec = 5, monitor_interval_sec = 5 (the shipped defaults);
  - sriovd as while its BPF drift events work: drift checks only at the 120 s safety net,
    with the monitor off and at 5 s. A fixture tree has no kernel events, so sriovd polls at
    drift_check_sec there; it is set to the safety-net period to stand for healthy events;
  - irqbalance (Debian's), --foreground at its default 10 s interval, and at 5 s.

irqbalance is the baseline: it watches the same IRQs for a living. It runs (tests/lib/irqbalance.py) in a private
mount namespace (and network namespace: its socket is abstract, one per namespace) in which the tree's /proc/interrupts, /proc/stat, /proc/softirqs, /proc/irq
and /sys are bind-mounted over the real ones, and is started only after a check inside that
namespace that /proc/irq is the tree's (same device, same IRQ count): it must never see,
let alone move, this machine's interrupts. Its binary is $SRIOVD_IRQBALANCE, else
irqbalance on PATH, else the one tools/install-deps unpacks (not installs: the package
would start it on this machine) into /var/cache/sriovd-bench/irqbalance.

Figures per process over the window: CPU time (utime + stime of every task), context
switches, VmRSS (and its anonymous and file-backed parts: the latter is mostly shared
libraries, which on a hypervisor libvirtd maps too), VmHWM and Pss at the end; ratios against
irqbalance. After the window, a
detection check: one IRQ's affinity is changed behind each sriovd's back and the time to
its repair is measured (it must come within one drift period, plus a second of margin). The
daemons that stand for healthy events are left out of that check: on a fixture nothing reports
the change, and on a real kernel an event does, which the vm suite's events guests measure.
Exits 77 when irqbalance or the namespace is not available.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
import irqbalance  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_idle", os.path.join(HERE, "bench-idle.py"))
idle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(idle)

DRIFT_SEC = 5
SAFETY_NET_SEC = 120  # drift_safety_net_sec's default: the drift period while the BPF events work
N_CPUS = 64
POLICY = """[daemon]
drift_check_sec = {drift}
drift_safety_net_sec = {drift}
monitor_interval_sec = {monitor}
metrics_file = {metrics}
[cpus]
keep_irqs_off_rt = no
[match 15b3:101d]
class = tp
"""
CLASS = "[class]\nvnic = sriov-preferred\nirq_cpus = numa-local\nirq_spread = spread\n"
SETTLE_SEC = 8.0      # after READY / start: irqbalance's first pass, sriovd's first full read
REPAIR_IRQ = None     # chosen from the tree: the first NIC IRQ


def skip(why):
    print(f"bench-steady: skipped: {why}")
    sys.exit(77)


def cpu_ticks(pid):
    """utime + stime of the whole process (every task), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def measure(pid):
    s = idle.sample(pid)
    s["ticks"] = cpu_ticks(pid)
    st = idle.read_status(pid)
    s["anon"], s["file"] = idle.kib(st["RssAnon"]), idle.kib(st["RssFile"])
    return s


class Irqbalance(irqbalance.Irqbalance):
    """irqbalance over its own copy of the tree (see tests/lib/irqbalance.py for its namespace)."""

    def __init__(self, name, binary, tmp, fixture, interval):
        self.name = name
        self.dir = os.path.join(tmp, name)
        os.mkdir(self.dir)
        root = os.path.join(self.dir, "root")
        shutil.copytree(fixture, root, symlinks=True)
        super().__init__(binary, root, os.path.join(self.dir, "log"), [f"--interval={interval}"])


def cycles(daemon):
    """How many cycles the daemon's log reports so far."""
    return sum(1 for line in daemon.log_text().splitlines() if "Cycle " in line and " actions, " in line)


def read_affinity(root, irq):
    with open(os.path.join(root, f"proc/irq/{irq}/smp_affinity_list")) as f:
        return f.read().strip()


def repair_time(daemon, irq, limit):
    """Write a foreign affinity to irq's file in the daemon's tree, return seconds until it is put back."""
    path = os.path.join(daemon.root, f"proc/irq/{irq}/smp_affinity_list")
    placed = read_affinity(daemon.root, irq)
    foreign = "63" if placed != "63" else "62"
    t0 = time.monotonic()
    with open(path, "w") as f:
        f.write(foreign)
    while time.monotonic() - t0 < limit:
        if read_affinity(daemon.root, irq) == placed:
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def nic_irq(root):
    """An IRQ of the first VF's vectors: one the policy places."""
    with open(os.path.join(root, "proc/interrupts")) as f:
        for line in f:
            if "mlx5_comp" in line and ":" in line:
                return line.split(":", 1)[0].strip()
    sys.exit("bench-steady: no mlx5_comp IRQ in the tree's /proc/interrupts")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sriovd, mkhost = sys.argv[1], sys.argv[2]
    window = float(sys.argv[3] if len(sys.argv) == 4 else os.environ.get("SRIOVD_BENCH_STEADY_SEC", "240"))
    binary = irqbalance.find()
    why = irqbalance.unavailable(binary)
    if why:
        skip(why)

    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="sriovd-bench-steady-", dir=base)
    procs = []
    try:
        fixture = os.path.join(tmp, "fixture")
        subprocess.run([sys.executable, mkhost, "large", fixture], check=True, stdout=subprocess.DEVNULL)
        irqbalance.complete_tree(fixture, N_CPUS)
        irq = nic_irq(fixture)

        daemons = []
        for name, drift, monitor in (("sriovd-drift", DRIFT_SEC, 0), ("sriovd-default", DRIFT_SEC, DRIFT_SEC),
                                     ("sriovd-events", SAFETY_NET_SEC, 0),
                                     ("sriovd-events-default", SAFETY_NET_SEC, DRIFT_SEC)):
            d = idle.Daemon(name, sriovd, tmp, fixture)
            d.drift = drift
            with open(d.conf, "w") as f:
                f.write(POLICY.format(drift=drift, monitor=monitor, metrics=os.path.join(d.dir, "sriovd.prom")))
            os.mkdir(os.path.join(d.dir, "tenant-classes.d"))
            with open(os.path.join(d.dir, "tenant-classes.d", "tp.ini"), "w") as f:
                f.write(CLASS)
            daemons.append(d)
        balancers = [Irqbalance(f"irqbalance-{i}s", binary, tmp, fixture, i) for i in (10, DRIFT_SEC)]
        procs = daemons + balancers
        for p in procs:
            p.start()
        idle.wait_ready(daemons)
        for b in balancers:
            failed = b.wait_started()
            if failed:
                rc, log = failed
                if rc == irqbalance.UNSAFE:
                    sys.exit(f"bench-steady: irqbalance not started, its namespace failed the check:\n{log}")
                if rc is None:
                    sys.exit(f"bench-steady: {log}")
                skip(f"irqbalance exited {rc} at start:\n{log}")
        idle.pump(daemons, time.monotonic() + SETTLE_SEC)
        placed = {d.name: read_affinity(d.root, irq) for d in daemons}
        moved = {b.name: sum(1 for n in os.listdir(os.path.join(b.root, "proc/irq"))
                             if n.isdigit() and os.path.exists(os.path.join(b.root, f"proc/irq/{n}/smp_affinity_list"))
                             and read_affinity(b.root, n) != read_affinity(fixture, n)) for b in balancers}

        pids = {p.name: p.proc.pid for p in procs}
        t0 = time.monotonic()
        before = {k: measure(pid) for k, pid in pids.items()}
        cycles0 = {d.name: cycles(d) for d in daemons}
        idle.pump(daemons, t0 + window)
        after = {k: measure(pid) for k, pid in pids.items()}
        n_cycles = {d.name: cycles(d) - cycles0[d.name] for d in daemons}
        elapsed = time.monotonic() - t0
        rollup = {k: idle.smaps_rollup(pid) for k, pid in pids.items()}
        for b in balancers:
            if b.proc.poll() is not None:
                sys.exit(f"bench-steady: {b.name} exited during the window")

        repairs = {d.name: repair_time(d, irq, DRIFT_SEC + 1.0) for d in daemons if d.drift == DRIFT_SEC}
        rcs = {d.name: idle.stop(d) for d in daemons}
    finally:
        for p in procs:
            if p.proc and p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    hz = os.sysconf("SC_CLK_TCK")

    def cpu_s(k):
        return (after[k]["ticks"] - before[k]["ticks"]) / hz

    def switches(k):
        return (after[k]["vol"] - before[k]["vol"]) + (after[k]["invol"] - before[k]["invol"])

    print(f"sriovd steady-state benchmark: 'large' host (8 PFs x 64 VFs, 4,224 IRQs, tmpfs), window {elapsed:.1f} s")
    print(f"irqbalance: {binary}; IRQs it moved off the tree's 0-63 before the window: "
          + ", ".join(f"{k} {v}" for k, v in moved.items()))
    print(f"\n  {'process':<34} {'CPU s':>7} {'per min':>8} {'% CPU':>7} {'switches':>9}"
          f" {'VmRSS':>10} {'anon':>9} {'file':>9} {'VmHWM':>10} {'Pss':>10}")
    labels = {"sriovd-drift": f"sriovd, drift {DRIFT_SEC} s, monitor off",
              "sriovd-default": f"sriovd, drift {DRIFT_SEC} s, monitor {DRIFT_SEC} s",
              "sriovd-events": f"sriovd, drift {SAFETY_NET_SEC} s, monitor off",
              "sriovd-events-default": f"sriovd, drift {SAFETY_NET_SEC} s, monitor {DRIFT_SEC} s",
              "irqbalance-10s": "irqbalance --interval=10 (default)",
              f"irqbalance-{DRIFT_SEC}s": f"irqbalance --interval={DRIFT_SEC}"}
    for k, label in labels.items():
        a = after[k]
        print(f"  {label:<34} {cpu_s(k):>7.2f} {cpu_s(k) * 60 / elapsed:>8.2f} {cpu_s(k) * 100 / elapsed:>6.2f}%"
              f" {switches(k):>9} {idle.mib(a['rss']):>10} {idle.mib(a['anon']):>9} {idle.mib(a['file']):>9}"
              f" {idle.mib(a['hwm']):>10}"
              f" {idle.mib(rollup[k].get('Pss', 0)):>10}")
    print(f"  (drift {SAFETY_NET_SEC} s: as while the BPF drift events work, at the safety-net period; cycles in the window: "
          + ", ".join(f"{k} {v}" for k, v in n_cycles.items()) + ")")
    print()
    for s in ("sriovd-drift", "sriovd-default", "sriovd-events", "sriovd-events-default"):
        for b in ("irqbalance-10s", f"irqbalance-{DRIFT_SEC}s"):
            cb = cpu_s(b)
            ratio = f"{cpu_s(s) / cb:.2f}x" if cb > 0 else "n/a (irqbalance used no measurable CPU)"
            print(f"  {s} / {b}: CPU {ratio}, RSS {after[s]['rss'] / after[b]['rss']:.2f}x"
                  f" (anon {after[s]['anon'] / max(after[b]['anon'], 1):.2f}x, file {after[s]['file'] / max(after[b]['file'], 1):.2f}x),"
                  f" Pss {rollup[s].get('Pss', 0) / max(rollup[b].get('Pss', 1), 1):.2f}x")
    print()
    failed = False
    for d, t in repairs.items():
        print(f"  {d}: IRQ {irq} (placed {placed[d]}) moved behind its back, put back "
              + (f"after {t:.2f} s (drift period {DRIFT_SEC} s)" if t is not None else "NOT within the period"))
        failed |= t is None
    for d, rc in rcs.items():
        if rc != 0:
            print(f"  SIGTERM -> {d}: {'no exit' if rc is None else f'exit {rc}'}")
            failed = True
    if failed:
        sys.exit("bench-steady: a daemon missed the drift or did not stop cleanly")


if __name__ == "__main__":
    main()
