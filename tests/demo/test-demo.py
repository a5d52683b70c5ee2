#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-demo.py — tools/demo, the README's first command, runs to the end and says what it should:
# both parts' key lines (the daemon part: one tenant per shipped class, the third RT guest refused
# with NoRtCpu, the RT guest's placement, a drift repaired), and leaves no daemon running.
import os
import re
import shutil
import subprocess
import sys

SOURCE = os.environ["SRIOVD_SOURCE_DIR"]
BUILD = os.environ["SRIOVD_BUILD_DIR"]


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def processes_under(path):
    """PIDs whose command line names path: what the demo started and should have stopped."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if path in cmd and int(pid) != os.getpid():
            found.append((int(pid), cmd))
    return found


def main():
    if not shutil.which("dbus-daemon"):
        skip("no dbus-daemon (Debian package dbus, from tools/install-deps): the demo's second part needs one")
    build = os.path.relpath(BUILD, SOURCE)
    r = subprocess.run([os.path.join(SOURCE, "tools", "demo"), build], cwd=SOURCE, capture_output=True, text=True,
                       timeout=180)
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    m = re.search(r"^The demo hosts are in (/tmp/sriovd-demo-\w+) ", out, re.M)
    scratch = m.group(1) if m else None
    try:
        assert r.returncode == 0, (r.returncode, out)
        assert scratch, out
        left = processes_under(scratch)
        assert not left, f"the demo left these running: {left}"
        check(out)
    finally:
        if scratch and os.path.isdir(scratch):
            shutil.rmtree(scratch)
    print("demo output checked")


def check(out):
    def has(pattern):
        assert re.search(pattern, out, re.M), f"not in the demo's output: {pattern!r}\n{out}"

    def hasnt(pattern):
        assert not re.search(pattern, out, re.M), f"in the demo's output: {pattern!r}\n{out}"

    # Part one: check, plan, apply on the fixture.
    has(r"configuration is valid \(4 tenant classes\), checked against the host at root$")
    has(r"^PF 0000:41:00\.0 .*ConnectX-6 Dx")
    has(r"^A second cycle changes nothing")

    # Part two: the daemon on the private bus with libvirt's test driver.
    part2 = out.index("== Part two")
    out = out[part2:]
    # One tenant per class: the trader on node 1's PF, the RT guests and the stream on node 0's.
    has(r"^trader: vf 0000:c1:00\.\d, netdev \S+, MAC ")
    has(r"^rt-a: vf 0000:41:00\.\d, ")
    has(r"^rt-b: vf 0000:41:00\.\d, ")
    has(r"^stream: vf 0000:41:00\.\d, ")
    has(r"^web: virtio -, netdev -, MAC ")
    # Three RT guests, two RT CPUs on node 0: the third refused, its holders named.
    has(r"^sriovctl: allocate: org\.sriovd\.Error\.NoRtCpu: class rt-vcpu: no RT CPU free on node 0 "
        r"\(2 RT CPUs there, .*held by vm-rt-a, vm-rt-b\)$")
    hasnt(r"^rt-c: ")
    has(r"^RT CPUs: +node 0: 2 of 2 booked, 0 shared \(room for 0\), 2 guests, 0 waiting$")
    has(r"^ +node 1: 0 of 6 booked")
    has(r"^VFs: +16 total, 16 usable, 4 allocated")
    has(r"^Tenants: +5$")
    # The tenants table: no owner, then RT CPUs 6 and 7, one each; nothing for the other classes.
    has(r"^TENANT +CLASS +KIND .* RT-CPUS$")
    has(r"^rt-a +rt-vcpu +vf +0000:41:00\.\d .* vm-rt-a +0 +class +- +6$")
    has(r"^rt-b +rt-vcpu +vf +0000:41:00\.\d .* vm-rt-b +0 +class +- +7$")
    has(r"^trader +latency-critical +vf .* vm-trader +1 +class +- +-$")
    has(r"^web +best-effort +virtio .* vm-web +- +class +- +-$")
    has(r"^rt-a: vf 0000:41:00\.\d, class rt-vcpu, .*, allocated, RT CPUs 6$")
    # rt-a's guest placement, from sriovd's log: vCPU 0 on its RT CPU, the rest on housekeeping,
    # FIFO on vCPU 0 only, memory on node 0; its VF's IRQs on vCPU 0's CPU. A first placement is
    # not drift.
    has(r"^info: vcpu-pin: domain vm-rt-a vCPU 0: \S+ -> 6 \[tenant=rt-a\]$")
    has(r"^info: vcpu-pin: domain vm-rt-a vCPU 1: \S+ -> 0-5 \[tenant=rt-a\]$")
    has(r"^info: emulator-pin: domain vm-rt-a: \S+ -> 0-5 \[tenant=rt-a\]$")
    has(r"^info: vcpu-sched: domain vm-rt-a, from its next start: \S+ -> fifo/1 on vCPU 0 \[tenant=rt-a\]$")
    has(r"^info: numatune: domain vm-rt-a, from its next start: none -> strict node 0 \[tenant=rt-a\]$")
    has(r"^info: irq-affinity 0000:41:00\.\d IRQ \d+: \S+ -> 6 \[")
    hasnt(r"Drift repaired")
    # The drift the demo makes, planned and repaired; the IRQ threads' FIFO 99 planned.
    m = re.search(r"^\$ echo 0-31 > /proc/irq/(\d+)/smp_affinity_list", out, re.M)
    assert m, out
    irq = m.group(1)
    has(rf"^irq-affinity +0000:41:00\.\d IRQ {irq}: 0-31 -> 6$")
    has(rf"^irq-thread +0000:41:00\.\d IRQ {irq}: fifo/50 -> fifo/99$")
    has(r"^irq-thread +0000:c1:00\.\d IRQ \d+: fifo/50 -> fifo/99$")
    has(r"^1 found, 1 repaired, 0 failed, 0 still differ$")
    has(rf"^  irq-affinity 0000:41:00\.\d IRQ {irq}: 0-31 -> 6 \(repaired\)$")
    # sriovctl irqs: rt-a's VF on CPU 6, the trader's on one RT CPU of node 1, the stream's spread
    # over node 0's housekeeping CPUs.
    has(rf"^ +{irq} 0000:41:00\.\d +6 ")
    has(r"^ +\d+ 0000:c1:00\.\d +(1[89]|2[0-3]) ")
    rows = re.findall(r"^ +\d+ (0000:41:00\.4) +(\d+) ", out, re.M)
    assert len(rows) == 4 and all(int(c) <= 5 for _, c in rows), (rows, out)


if __name__ == "__main__":
    main()
