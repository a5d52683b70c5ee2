# SPDX-License-Identifier: LGPL-2.1-or-later
# irqbalance.py — Debian's irqbalance over a fixture tree, in a mount namespace of its own
"""Debian's irqbalance on a fixture tree, never on this machine's interrupts.

irqbalance runs in a private mount namespace and network namespace. Its socket is abstract, so it
needs a network namespace of its own. The tree's /proc/interrupts, /proc/stat, /proc/softirqs,
/proc/irq and /sys are bind-mounted over the real ones, and a tmpfs goes over /run. irqbalance
starts only after a check inside that namespace that /proc/irq and /proc/interrupts are the
tree's. bench/bench-steady.py and tests/daemon/test-irqbalance.py use this module.

A fixture tree has no kernel behind it. irqbalance reads and writes smp_affinity, a hex mask,
and sriovd reads and writes smp_affinity_list. AffinityShim keeps the two files of each IRQ
equal, as the kernel's one affinity does, and records who changed which IRQ.
"""

import ctypes
import os
import select
import shutil
import struct
import subprocess
import threading
import time

CACHE_BINARY = "/var/cache/sriovd-bench/irqbalance/usr/sbin/irqbalance"
UNSAFE = 3   # the exit status of the namespace check


def find():
    """$SRIOVD_IRQBALANCE, else irqbalance on PATH, else the one tools/install-deps unpacks."""
    for cand in (os.environ.get("SRIOVD_IRQBALANCE"), shutil.which("irqbalance"), CACHE_BINARY):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def unavailable(binary):
    """Why irqbalance cannot run here, or None."""
    if not binary:
        return "no irqbalance (set SRIOVD_IRQBALANCE, or run tools/install-deps, which unpacks Debian's)"
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "irqbalance's private mount namespace needs root and unshare(1)"
    return None


def complete_tree(root, ncpus):
    """What a kernel has and mkhost's trees do not: /proc/stat and /proc/softirqs of ncpus CPUs.
    irqbalance reads both, and would read this machine's without them."""
    with open(os.path.join(root, "proc/stat"), "w") as f:
        f.write("cpu  1 2 3 4 5 6 7 8 0 0\n")
        for c in range(ncpus):
            f.write(f"cpu{c} 123456 12 34567 9876543 123 456 789 0 0 0\n")
        f.write("intr 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n")
    with open(os.path.join(root, "proc/softirqs"), "w") as f:
        f.write(" " * 16 + "".join(f"CPU{c:<8}" for c in range(ncpus)) + "\n")
        for name in ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"):
            f.write(f"{name:>12}:" + "".join(f" {123456 + c * 7:10}" for c in range(ncpus)) + "\n")


def quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Irqbalance:
    """irqbalance --foreground over root. args: more options. Its stdout and stderr go to log_path."""

    def __init__(self, binary, root, log_path, args=(), env=None):
        self.binary = binary
        self.root = root
        self.args = list(args)
        self.env = env
        self.log_path = log_path
        self.log = open(log_path, "w+")
        self.proc = None

    def start(self):
        r = quote(self.root)
        n = len(os.listdir(os.path.join(self.root, "proc/irq")))
        # Its log is printf() to a file: stdbuf makes it line-buffered, so a test reads it as it goes.
        stdbuf = ["stdbuf", "-oL"] if shutil.which("stdbuf") else []
        argv = " ".join(quote(a) for a in stdbuf + [self.binary, "--foreground"] + self.args)
        script = f"""set -e
for f in interrupts stat softirqs; do mount --bind {r}/proc/$f /proc/$f; done
mount --bind {r}/proc/irq /proc/irq
mount --bind {r}/sys /sys
mount -t tmpfs tmpfs /run
[ "$(stat -c %d /proc/irq)" = "$(stat -c %d {r})" ] || {{ echo 'unsafe: /proc/irq is not the tree' >&2; exit {UNSAFE}; }}
[ "$(ls /proc/irq | wc -l)" = {n} ] || {{ echo 'unsafe: /proc/irq has not the tree IRQ count' >&2; exit {UNSAFE}; }}
grep -q "$(head -c 64 {r}/proc/interrupts)" /proc/interrupts || {{ echo 'unsafe: /proc/interrupts' >&2; exit {UNSAFE}; }}
exec {argv}
"""
        self.proc = subprocess.Popen(["unshare", "--mount", "--net", "--propagation", "private", "sh", "-c", script],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=self.env)

    def exec_done(self):
        """True once the shell has become irqbalance (same PID)."""
        try:
            return os.readlink(f"/proc/{self.proc.pid}/exe").endswith("irqbalance")
        except OSError:
            return False

    def wait_started(self, timeout=10.0):
        """None once irqbalance runs; else (exit status, log): UNSAFE when the check failed."""
        deadline = time.monotonic() + timeout
        while not self.exec_done():
            if self.proc.poll() is not None:
                return self.proc.returncode, self.text()
            if time.monotonic() > deadline:
                return None, f"irqbalance did not start within {timeout:.0f} s\n" + self.text()
            time.sleep(0.05)
        return None

    def text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def parse_list(text):
    cpus = set()
    for part in text.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(cpus)


def parse_mask(text):
    v = int(text.strip().replace(",", "") or "0", 16)
    return frozenset(c for c in range(v.bit_length()) if v >> c & 1)


def format_list(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def format_mask(cpus, ncpus):
    v = sum(1 << c for c in cpus)
    groups = [f"{(v >> pos) & 0xffffffff:08x}" for pos in range(((ncpus + 31) // 32 - 1) * 32, -1, -32)]
    return ",".join(groups)


IN_CLOSE_WRITE = 0x8
EVENT = struct.Struct("iIII")


class AffinityShim:
    """One affinity per IRQ behind smp_affinity and smp_affinity_list, as the kernel keeps it.

    A write to either file, once closed, is copied to the other and to the effective affinity
    (its first CPU). inotify tells of each write. changes holds (time, irq, file, cpus) for each
    write that changed an IRQ's affinity: file "smp_affinity" is irqbalance's, "smp_affinity_list"
    sriovd's or the test's. Read-only files (kernel-managed IRQs) are left alone.
    """

    def __init__(self, root, ncpus):
        self.root = root
        self.ncpus = ncpus
        self.changes = []
        self.lock = threading.Lock()
        self.state = {}
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.wd = {}
        for name in os.listdir(os.path.join(root, "proc/irq")):
            if name.isdigit():
                self.watch(int(name))
        self.stop_r, self.stop_w = os.pipe()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def watch(self, irq):
        """Keeps irq's two files equal from now on, unless the kernel manages it (read-only).
        A test calls it for an IRQ that it adds to the tree."""
        path = os.path.join(self.root, f"proc/irq/{irq}")
        if not os.stat(os.path.join(path, "smp_affinity_list")).st_mode & 0o200:
            return
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), IN_CLOSE_WRITE)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
        with self.lock:
            self.wd[wd] = irq
            self.state[irq] = self.read(irq, "smp_affinity_list")

    def path(self, irq, name):
        return os.path.join(self.root, f"proc/irq/{irq}/{name}")

    def read(self, irq, name):
        with open(self.path(irq, name)) as f:
            text = f.read()
        if not text.strip():
            return None
        return parse_mask(text) if name == "smp_affinity" else parse_list(text)

    def write(self, irq, name, text):
        with open(self.path(irq, name), "w") as f:
            f.write(text)

    def affinity(self, irq):
        with self.lock:
            return self.state[irq]

    def run(self):
        while True:
            ready, _, _ = select.select([self.fd, self.stop_r], [], [])
            if self.stop_r in ready:
                return
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            off = 0
            while off < len(buf):
                wd, _mask, _cookie, length = EVENT.unpack_from(buf, off)
                name = buf[off + EVENT.size:off + EVENT.size + length].rstrip(b"\0").decode()
                off += EVENT.size + length
                if wd in self.wd and name in ("smp_affinity", "smp_affinity_list"):
                    self.on_write(self.wd[wd], name)

    def on_write(self, irq, name):
        try:
            cpus = self.read(irq, name)
        except (OSError, ValueError):
            return
        with self.lock:
            if cpus is None or cpus == self.state[irq]:
                return
            self.state[irq] = cpus
            self.changes.append((time.monotonic(), irq, name, cpus))
        other = "smp_affinity_list" if name == "smp_affinity" else "smp_affinity"
        self.write(irq, other, format_list(cpus) if other == "smp_affinity_list" else format_mask(cpus, self.ncpus))
        first = min(cpus)
        self.write(irq, "effective_affinity", format_mask([first], self.ncpus))
        self.write(irq, "effective_affinity_list", str(first))

    def settle(self, timeout=5.0):
        """Waits until every IRQ's smp_affinity_list says what the shim holds, and returns that."""
        deadline = time.monotonic() + timeout
        while True:
            files = {irq: self.read(irq, "smp_affinity_list") for irq in self.state}
            with self.lock:
                if files == self.state:
                    return dict(self.state)
            if time.monotonic() > deadline:
                raise AssertionError("the affinity shim did not catch up with the writes")
            time.sleep(0.05)

    def changes_since(self, t0, name=None):
        with self.lock:
            return [c for c in self.changes if c[0] >= t0 and (name is None or c[2] == name)]

    def close(self):
        os.write(self.stop_w, b"x")
        self.thread.join()
        for fd in (self.fd, self.stop_r, self.stop_w):
            os.close(fd)
