#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-top.py — `sriovctl top` against the real sriovd (monitor_interval_sec = 1) on a fixture copy
# and a private bus (tests/dbus's harness): a tenant's IRQ made to fire ~200/s by rewriting the
# fixture's /proc/interrupts, then --once (text and --json) read as a script would, an alert rule
# tripped and shown at the bottom, and the live view run in a real terminal under tmux: drawn,
# sorted with s, squeezed by a resize, left with q, ^C and SIGTERM, stopped with ^Z and brought back
# with fg, the shell's screen and its tty modes back each time; NotMonitoring with monitoring off. Skips (77) without dbus-daemon, busctl
# or tmux.
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus"))   # minibus, which test-dbus.py imports from beside it
_spec = importlib.util.spec_from_file_location("testdbus", os.path.join(HERE, "..", "dbus", "test-dbus.py"))
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

SRIOVCTL = sys.argv[2]
TENANT = "top-a"
RATE = 200           # interrupts/s the bumper adds to the tenant's first IRQ
TICK = 0.1
RT_CPUS = set(range(2, 8)) | set(range(18, 24))   # the fixture's isolated CPUs: sriovd's RT CPUs


class Bumper(threading.Thread):
    """Adds RATE * TICK to one IRQ's count on one CPU every TICK seconds, as a busy NIC would."""

    def __init__(self, path, irq, cpu):
        super().__init__(daemon=True)
        self.path, self.irq, self.cpu = path, irq, cpu
        self.stop = threading.Event()

    def run(self):
        ticks = 0
        while not self.stop.wait(TICK):
            ticks += 1
            if ticks % 5 == 0:
                bump_schedstat(os.path.dirname(self.path))
            with open(self.path) as f:
                lines = f.read().split("\n")
            header = lines[0].split()
            col = header.index(f"CPU{self.cpu}")
            for i, line in enumerate(lines):
                m = re.match(rf"^(\s*{self.irq}:)(.*)$", line)
                if not m:
                    continue
                fields = re.split(r"(\s+)", m.group(2))
                # fields: ['', ' ', count0, ' ', count1, ...]: the counts at the even indexes from 2
                k = 2 + 2 * col
                fields[k] = str(int(fields[k]) + int(RATE * TICK))
                lines[i] = m.group(1) + "".join(fields)
            tmp = self.path + ".new"
            with open(tmp, "w") as f:
                f.write("\n".join(lines))
            os.replace(tmp, self.path)


def bump_schedstat(proc):
    """Every thread of the fixture ran once more and waited 2 ms for it (/proc/PID/schedstat), so the
    latency's fallback has a mean of 2 ms in every period."""
    for pid in (d for d in os.listdir(proc) if d.isdigit()):
        path = os.path.join(proc, pid, "schedstat")
        try:
            with open(path) as f:
                run, wait, slices = (int(x) for x in f.read().split())
        except FileNotFoundError:
            run, wait, slices = 0, 0, 0
        with open(path + ".new", "w") as f:
            f.write(f"{run + 1000} {wait + 2000000} {slices + 1}\n")
        os.replace(path + ".new", path)


def ctl(bus, *args, timeout=30):
    return subprocess.run([SRIOVCTL, "--address", bus.address, *args], capture_output=True, text=True,
                          timeout=timeout)


def tenant_rate(env):
    samples = env.call("GetMetrics")["data"][1]
    rates = [s[2] for s in samples if s[0] == "sriovd_irq_rate" and s[1].get("tenant") == TENANT]
    return sum(r for r in rates if r == r)


def check_once(bus, irq, cpu):
    r = ctl(bus, "top", "--once")
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    out = r.stdout
    assert "\x1b" not in out, repr(out[:300])
    assert re.search(r"^sriovd top - \S+ .* period 1\.\d\d s  state running  sort: interrupts$", out, re.M), out
    assert re.search(r"^VFs: 1 of 16 allocated \(6\.2%, target 85%\)  tenants: 1  RT CPUs: 0 of \d+ booked$",
                     out, re.M), out
    assert re.search(r"^  CPU RT   NIC-IRQ/s   NET_RX/s   NET_TX/s   IRQ%  SIRQ%   INTERF/s$", out, re.M), out
    # Sorted by interrupts: the bumped CPU first, marked RT (latency-critical: irq_cpus = rt).
    first = re.search(r"NIC-IRQ/s.*\n\s*(\d+) (rt |   ) +(\S+)", out)
    assert first and int(first.group(1)) == cpu and first.group(2) == "rt ", (cpu, out)
    assert 100 <= float(first.group(3)) <= 400, out
    m = re.search(rf"^{TENANT} +latency-critical +(0000:41:00\.\d+) +(\S+) +(\S+) +(\S+) +(\S+) +(\S+) +(\S+)$",
                  out, re.M)
    assert m, out
    irqs, rate, pkts, drops, cpus, rt = m.groups()[1:]
    assert str(irq) in re.split(r"[,-]", irqs), (irq, irqs)
    assert 100 <= float(rate) <= 400 and cpus == str(cpu) and rt == "-", m.group(0)
    assert re.search(r"^Alerts: none$", out, re.M), out
    # The latency of the RT tenant's IRQ threads and of the RT CPUs' ksoftirqd: schedstat's mean only,
    # since BPF does not load on a fixture root.
    assert re.search(r"^LATENCY +KIND +P99 +P99\.9 +MEAN +SOURCE$", out, re.M), out
    assert re.search(rf"^{TENANT} +irq +- +- +2\.00ms +schedstat$", out, re.M), out
    assert re.search(r"^\(RT CPUs\) +ksoftirqd +- +- +2\.00ms +schedstat$", out, re.M), out

    r = ctl(bus, "--json", "top")
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    assert 500000 < doc["period_usec"] < 5000000, doc["period_usec"]
    t = next(t for t in doc["tenants"] if t["tenant"] == TENANT)
    assert t["class"] == "latency-critical" and irq in t["irqs"] and 100 <= t["irq_rate"] <= 400, t
    c = next(c for c in doc["cpus"] if c["cpu"] == cpu)
    assert c["rt"] and 100 <= c["irq_rate"] <= 400, c
    assert doc["alerts"] == [], doc["alerts"]
    lat = next(x for x in doc["latency"] if x.get("tenant") == TENANT and x["kind"] == "irq")
    assert lat["source"] == "schedstat" and lat.get("p99_seconds") is None and \
        abs(lat["mean_seconds"] - 0.002) < 1e-9, lat
    # Options belong to top.
    r = ctl(bus, "status", "--once")
    assert r.returncode == 2 and "go with top" in r.stderr, (r.returncode, r.stderr)
    print("ok --once and --json")


def check_alert(env, d, bus):
    # A rule node 0's pool trips at once (1 of its 8 VFs held: 0.125): the alert at the bottom.
    d.write_conf(extra="[alert pool-low]\nmetric = sriovd_vf_node_utilization_ratio\nthreshold = 0.05\n"
                       "clear = 0.01\ndirection = above\nperiods = 1\nnode = 0\n")
    env.ctl("reload", check=0)
    assert H.wait_until(lambda: H.plain("aa{sv}", env.prop("ActiveAlerts")), timeout=10), env.prop("ActiveAlerts")
    r = ctl(bus, "top", "--once")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert re.search(r"^Alerts: 1 active\n  pool-low +sriovd_vf_node_utilization_ratio\{node=\"0\"\} = 0\.125, "
                     r"above 0\.05$", r.stdout, re.M), r.stdout
    doc = json.loads(ctl(bus, "--json", "top").stdout)
    assert [a["name"] for a in doc["alerts"]] == ["pool-low"], doc["alerts"]
    print("ok an active alert at the bottom")


class Tmux:
    def __init__(self, tmp, bus):
        self.sock = os.path.join(tmp, "tmux.sock")
        self.bus = bus
        # A plain shell with a known prompt; no user's tmux.conf.
        env = dict(os.environ, PS1="$ ", TERM="xterm")
        subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40",
                        "-s", "t", "bash --norc --noprofile"], check=True, env=env)

    def keys(self, *keys):
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", "t", *keys], check=True)

    def screen(self):
        return subprocess.run(["tmux", "-S", self.sock, "capture-pane", "-p", "-t", "t"], check=True,
                              capture_output=True, text=True).stdout

    def wait(self, pred, what, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.screen()
            if pred(s):
                return s
            time.sleep(0.1)
        raise AssertionError(f"tmux: {what}; the screen:\n{self.screen()}")

    def run_top(self, marker):
        self.keys(f"{SRIOVCTL} --address {self.bus.address} top; echo {marker} $?", "Enter")
        return self.wait(lambda s: "sriovd top - " in s and re.search(rf"^{TENANT} ", s, re.M), "no top view")

    def child(self):
        """The PID of what the pane's shell runs now (sriovctl): by its parent, never by name."""
        shell = subprocess.run(["tmux", "-S", self.sock, "display-message", "-p", "-t", "t", "#{pane_pid}"],
                               check=True, capture_output=True, text=True).stdout.strip()
        with open(f"/proc/{shell}/task/{shell}/children") as f:
            kids = f.read().split()
        assert len(kids) == 1, kids
        return int(kids[0])

    def stop(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)


def tty_restored(tm, marker):
    # Bash's readline hands a command the modes it found at the prompt: what top left behind.
    # The marker is typed split in two, so the line typed does not look like the answer.
    tm.keys("stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '; echo '"
            + marker[:-1] + "'" + marker[-1], "Enter")
    s = tm.wait(lambda s: re.search(rf"^.*{marker}$", s, re.M), "stty did not answer")
    assert re.search(rf"^icanon echo {marker}$", s, re.M), s


def check_live(tmp, bus, cpu):
    tm = Tmux(tmp, bus)
    try:
        s = tm.run_top("TOP-EXITED")
        lines = s.split("\n")
        assert lines[0].startswith("sriovd top - ") and "(s: sort, q: quit)" in lines[0], s
        assert re.search(r"^VFs: 1 of 16 allocated", s, re.M), s
        assert re.search(r"^  CPU RT   NIC-IRQ/s ", s, re.M) and re.search(rf"^ +{cpu} rt +\d", s, re.M), s
        assert re.search(rf"^{TENANT} +latency-critical +0000:41:00\.\d+ ", s, re.M), s
        assert re.search(r"^Alerts: 1 active\n  pool-low ", s, re.M), s
        # s: the next sort, redrawn at once.
        tm.keys("s")
        tm.wait(lambda s: "sort: packets " in s, "s did not change the sort")
        tm.keys("s")
        s = tm.wait(lambda s: "sort: name " in s, "s did not change the sort again")
        # By name: the CPUs in order, 0 first.
        assert re.search(r"NIC-IRQ/s.*\n +0 ", s), s
        # A narrow, short terminal: every line cut to it, the header still on the first row.
        subprocess.run(["tmux", "-S", tm.sock, "resize-window", "-t", "t", "-x", "50", "-y", "14"], check=True)
        # (until the redraw, tmux shows the bottom of the old frame: no header on the first row)
        s = tm.wait(lambda s: s.startswith("sriovd top - ") and len(s.rstrip("\n").split("\n")) <= 14
                    and "more CPUs" in s, "no redraw at 50x14")
        rows = s.rstrip("\n").split("\n")
        assert rows[0].startswith("sriovd top - ") and all(len(r) <= 50 for r in rows), s
        subprocess.run(["tmux", "-S", tm.sock, "resize-window", "-t", "t", "-x", "120", "-y", "40"], check=True)
        # q: exit 0, the alternate screen left (the shell's line with the command is back), tty modes back.
        tm.keys("q")
        s = tm.wait(lambda s: re.search(r"^TOP-EXITED \d+$", s, re.M), "q did not end top")
        assert re.search(r"^TOP-EXITED 0$", s, re.M) and "sriovd top - " not in s, s
        assert re.search(r"^\S*[$#] \S*sriovctl --address ", s, re.M), s
        tty_restored(tm, "MODES-1")
        # ^C: SIGINT, exit 130, restored the same way.
        tm.run_top("TOP-INT")
        tm.keys("C-c")
        s = tm.wait(lambda s: re.search(r"^TOP-INT \d+$", s, re.M), "^C did not end top")
        assert re.search(r"^TOP-INT 130$", s, re.M) and "sriovd top - " not in s, s
        tty_restored(tm, "MODES-2")
        # SIGTERM from elsewhere: 143, restored.
        tm.run_top("TOP-TERM")
        os.kill(tm.child(), signal.SIGTERM)
        s = tm.wait(lambda s: re.search(r"^TOP-TERM \d+$", s, re.M), "SIGTERM did not end top")
        assert re.search(r"^TOP-TERM 143$", s, re.M) and "sriovd top - " not in s, s
        tty_restored(tm, "MODES-3")
        # ^Z: stopped with the shell's screen and modes back; fg: the view again, and q still works.
        tm.run_top("TOP-FG")
        tm.keys("C-z")
        s = tm.wait(lambda s: "Stopped" in s and "sriovd top - " not in s, "^Z did not give the shell back")
        tty_restored(tm, "MODES-4")
        # (the shell went on to the echo at the stop: fg's own status is what tells)
        assert re.search(r"^TOP-FG 148$", s, re.M), s
        tm.keys("fg; echo FG-EXITED $?", "Enter")
        tm.wait(lambda s: s.startswith("sriovd top - "), "fg did not bring the view back")
        tm.keys("q")
        s = tm.wait(lambda s: re.search(r"^FG-EXITED \d+$", s, re.M), "q after fg did not end top")
        assert re.search(r"^FG-EXITED 0$", s, re.M) and "sriovd top - " not in s, s
        tty_restored(tm, "MODES-5")
        # Into a pipe that closes: whole lines without escapes, exit 0 at EPIPE, tty modes back.
        tm.keys("clear; " + f"{SRIOVCTL} --address {tm.bus.address} top | head -2; echo PIPE-EXITED "
                "${PIPESTATUS[0]}", "Enter")
        s = tm.wait(lambda s: re.search(r"^PIPE-EXITED \d+$", s, re.M), "top into a closed pipe did not end",
                    timeout=20)
        assert re.search(r"^PIPE-EXITED 0$", s, re.M), s
        assert re.search(r"^sriovd top - .*\(s: sort, q: quit\)\nVFs: 1 of 16 allocated .* booked\nPIPE-EXITED",
                         s, re.M), s
        tty_restored(tm, "MODES-6")
        print("ok live view under tmux: drawn, s, resize, q, ^C, SIGTERM, ^Z and fg")
    finally:
        tm.stop()


def check_not_monitoring(env, d, bus):
    d.write_conf(monitor=0)
    env.ctl("reload", check=0)
    for args in (["top", "--once"], ["top"]):
        r = ctl(bus, *args)
        assert r.returncode == 1 and "org.sriovd.Error.NotMonitoring" in r.stderr, (args, r.returncode, r.stderr)
        assert "\x1b" not in r.stdout + r.stderr, repr(r.stdout)
    r = ctl(bus, "--json", "top")
    assert r.returncode == 1 and json.loads(r.stdout)["error"] == "org.sriovd.Error.NotMonitoring", r.stdout
    print("ok NotMonitoring")


def main():
    for tool in ["dbus-daemon", "busctl", "tmux"]:
        if not shutil.which(tool):
            print(f"SKIP: {tool} missing (tools/install-deps installs it)")
            return 77
    tmp = tempfile.mkdtemp(prefix="sriovd-top-")
    bus = H.Bus(tmp)
    d = bumper = None
    try:
        d = H.Daemon(tmp, bus)
        env = H.Env(bus)
        t = env.ctl_json("allocate", TENANT, "latency-critical", "--numa-node", "0")
        # Its IRQs pinned by the cycle the allocation starts: latency-critical has irq_cpus = rt.
        def first_irq():
            irqs = [q for q in env.rec("ListIrqs") if q.get("device") == t["address"]]
            cpu = int(re.split(r"[,-]", irqs[0]["affinity"])[0]) if irqs else -1
            return irqs[0]["irq"] if irqs else None, cpu
        assert H.wait_until(lambda: first_irq()[1] in RT_CPUS, timeout=15), (first_irq(), env.rec("ListIrqs"))
        irq, cpu = first_irq()
        bumper = Bumper(os.path.join(d.root, "proc", "interrupts"), irq, cpu)
        bumper.start()
        # Two periods of the bumper: a rate over a whole one.
        assert H.wait_until(lambda: tenant_rate(env) > 100, timeout=15), tenant_rate(env)
        time.sleep(1.2)
        check_once(bus, irq, cpu)
        check_alert(env, d, bus)
        check_live(tmp, bus, cpu)
        check_not_monitoring(env, d, bus)
    except Exception:
        if d:
            print(d.stderr()[-3000:])
        raise
    finally:
        if bumper:
            bumper.stop.set()
        if d:
            d.stop()
        bus.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
