#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-virt-live.py — src/virt/ against a real libvirtd + QEMU (TCG) in private mount and network
# namespaces: hot-plug of virtio-net (ethernet tap, bridge) with device events, swap and its rollback,
# the hostdev error as errno + message, vCPU pinning and SCHED_FIFO vcpusched, the tunable event of
# another client's vcpupin (and sriovd following vCPU 0), reconnect; the sriovd daemon started while
# libvirtd is down connects once it is back.
#
#   test-virt-live.py VIRT_LIVE_HELPER
#
# Skips (77) without root, libvirtd, QEMU or unshare. With a guest kernel and busybox in
# $SRIOVD_VM_CACHE (tools/vm-setup of the vm branch; default /var/cache/sriovd-vm) the guest boots
# and live detaches complete (device-removed); without one a detach stays pending, and that is checked.

import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livelib import Fail, check, log, setup_namespace, start_libvirtd, stop, wait_log, run_inner  # noqa: E402

MAC = "52:54:00:5a:00:01"
DOM = "sriovd-live"
# A PCI address no host has: the hostdev attempt must never touch a real device.
NO_SUCH_VF = "0000:7f:1f.7"


# ---- the initramfs: busybox and an /init that says it is up and waits ----

def cpio_newc(entries):
    out = bytearray()
    ino = 1
    for name, mode, data, rdev in entries + [("TRAILER!!!", 0, b"", (0, 0))]:
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{x:08x}" for x in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(nb), 0))
        ino += 1
        out += hdr.encode() + nb
        out += b"\0" * ((4 - len(out) % 4) % 4)
        out += data
        out += b"\0" * ((4 - len(out) % 4) % 4)
    return bytes(out)


INIT = b"""#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
echo SRIOVD-GUEST-UP > /dev/ttyS0
while true; do /bin/busybox sleep 1000; done
"""


def make_initrd(busybox, path):
    with open(busybox, "rb") as f:
        bb = f.read()
    d = stat.S_IFDIR | 0o755
    entries = [
        ("bin", d, b"", (0, 0)), ("dev", d, b"", (0, 0)), ("proc", d, b"", (0, 0)), ("sys", d, b"", (0, 0)),
        ("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
        ("dev/ttyS0", stat.S_IFCHR | 0o600, b"", (4, 64)),
        ("bin/busybox", stat.S_IFREG | 0o755, bb, (0, 0)),
        ("init", stat.S_IFREG | 0o755, INIT, (0, 0)),
    ]
    with open(path, "wb") as f:
        f.write(cpio_newc(entries))


def domain_xml(tmp, kernel, initrd):
    boot = ""
    if kernel:
        boot = (f"<kernel>{kernel}</kernel><initrd>{initrd}</initrd>"
                "<cmdline>console=ttyS0 panic=-1 rdinit=/init quiet</cmdline>")
    ports = "".join("<controller type='pci' model='pcie-root-port'/>" for _ in range(6))
    return f"""<domain type='qemu'>
  <name>{DOM}</name>
  <memory unit='MiB'>256</memory>
  <vcpu>2</vcpu>
  <features><acpi/></features>
  <os><type arch='x86_64' machine='q35'>hvm</type>{boot}</os>
  <on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot><on_crash>destroy</on_crash>
  <devices>
    <emulator>{shutil.which('qemu-system-x86_64')}</emulator>
    <controller type='pci' model='pcie-root'/>
    {ports}
    <serial type='file'><source path='{tmp}/console.log'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>
"""


# ---- the helper: one command per line ----

class Helper:
    def __init__(self, exe, uri):
        self.p = subprocess.Popen([exe, uri], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.events = []
        self.buf = b""
        first = self.read_answer(30)
        if not first[0].startswith("ok"):
            raise Fail(f"virt_new failed: {first}")

    def read_answer(self, timeout):
        deadline = time.monotonic() + timeout
        extra = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail("helper did not answer in time")
            # select() on the raw fd, lines split here: a buffered reader would hide read-ahead lines.
            if b"\n" not in self.buf:
                r, _, _ = select.select([self.p.stdout.fileno()], [], [], left)
                if not r:
                    continue
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    raise Fail("helper exited")
                self.buf += chunk
                continue
            raw, self.buf = self.buf.split(b"\n", 1)
            line = raw.decode(errors="replace")
            if line.startswith("event "):
                self.events.append(line[6:])
                log(f"    event {line[6:]}")
            elif line.startswith("ok ") or line.startswith("err "):
                return line, extra
            else:
                extra.append(line)

    def cmd(self, line, timeout=60):
        log(f"  > {line}")
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        ans, extra = self.read_answer(timeout)
        log(f"    {ans}" + "".join(f"\n    {x}" for x in extra))
        return ans, extra

    def ok(self, line, timeout=60):
        ans, extra = self.cmd(line, timeout)
        if not ans.startswith("ok"):
            raise Fail(f"{line}: {ans}")
        return int(ans.split()[1]), extra

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(10)
        except Exception:
            self.p.kill()


def nics(h):
    _, extra = h.ok(f"nics {DOM}")
    return [x.split()[1:] for x in extra if x.startswith("nic ")]


# ---- the daemon, on a fixture host, against this libvirtd ----

def start_sriovd(tmp, uri, log_name="sriovd.log"):
    build = os.environ["SRIOVD_BUILD_DIR"]
    root = f"{tmp}/host"
    if not os.path.exists(root):
        shutil.copytree(f"{build}/tests/fixture-two-socket", root, symlinks=True)
    os.makedirs(f"{tmp}/run", exist_ok=True)
    with open(f"{tmp}/sriovd.conf", "w") as f:
        f.write(f"[daemon]\nstate_dir = {tmp}/state\ndrift_check_sec = 0\nlibvirt_uri = {uri}\n")
    env = dict(os.environ, RUNTIME_DIRECTORY=f"{tmp}/run")
    env.pop("NOTIFY_SOCKET", None)
    log_f = open(f"{tmp}/{log_name}", "ab")
    return subprocess.Popen([f"{build}/sriovd", "--root", root, "--config", f"{tmp}/sriovd.conf"], env=env,
                            stdout=log_f, stderr=log_f)


def vcpu_thread_policies(qemu_pid):
    # QEMU names its vCPU threads "CPU N/TCG" (or /KVM); field 41 of stat is the policy.
    out = {}
    for tid in os.listdir(f"/proc/{qemu_pid}/task"):
        try:
            with open(f"/proc/{qemu_pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{qemu_pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if comm.startswith("CPU "):
            out[comm] = (int(fields[38]), int(fields[37]))   # policy, rt_priority
    return out


def restart_vcpu_policies(h):
    # vcpusched applies at a start: the domain restarted, its vCPU threads' policies read.
    h.ok(f"destroy {DOM}")
    h.ok(f"wait stopped {DOM} - 20")
    h.ok(f"start {DOM}")
    h.ok(f"wait started {DOM} - 30")
    with open(f"/run/libvirt/qemu/{DOM}.pid") as f:
        return vcpu_thread_policies(int(f.read().strip()))


def wait_guest(tmp, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"{tmp}/console.log", errors="replace") as f:
                if "SRIOVD-GUEST-UP" in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def diagnose(tmp):
    # What a failure needs to be understood from CI's log alone: libvirtd's and QEMU's own words, the
    # guest's console, and whether QEMU ran at all (its CPU time) on how loaded a machine.
    for name, path, lines in (("libvirtd.log", f"{tmp}/libvirtd.log", 30),
                              ("QEMU's log", f"/var/log/libvirt/qemu/{DOM}.log", 20),
                              ("guest console", f"{tmp}/console.log", 20)):
        try:
            with open(path, errors="replace") as f:
                text = f.readlines()
            log(f"--- {name} ({len(text)} lines, last {lines}):")
            sys.stdout.write("".join(text[-lines:]))
        except OSError as e:
            log(f"--- {name}: {e}")
    try:
        with open("/proc/loadavg") as f:
            log(f"--- load average: {f.read().strip()}")
        with open(f"/run/libvirt/qemu/{DOM}.pid") as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        log(f"--- QEMU pid {pid}: state {fields[0]}, CPU {(int(fields[11]) + int(fields[12])) / tick:.1f} s")
    except (OSError, ValueError) as e:
        log(f"--- QEMU process: {e}")


def inner(helper_exe):
    tmp = tempfile.mkdtemp(prefix="sriovd-virt-live-")
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", tmp], check=True)
    setup_namespace(tmp)
    for c in (["ip", "tuntap", "add", "dev", "tap0", "mode", "tap"], ["ip", "link", "set", "tap0", "up"],
              ["ip", "link", "add", "br0", "type", "bridge"], ["ip", "link", "set", "br0", "up"]):
        subprocess.run(c, check=True)
    cache = os.environ.get("SRIOVD_VM_CACHE", "/var/cache/sriovd-vm")
    kernel, busybox = f"{cache}/kernel-std/vmlinux", f"{cache}/busybox/bin/busybox"
    guest = os.path.exists(kernel) and os.path.exists(busybox)
    initrd = f"{tmp}/initrd"
    if guest:
        make_initrd(busybox, initrd)
    with open(f"{tmp}/domain.xml", "w") as f:
        f.write(domain_xml(tmp, kernel if guest else None, initrd))
    log(f"guest OS: {'booted (' + kernel + ')' if guest else 'none: live detaches stay pending'}")

    t0 = time.monotonic()
    libvirtd = start_libvirtd(tmp)
    log(f"libvirtd up in {time.monotonic() - t0:.1f} s")
    uri = f"qemu+unix:///system?socket={tmp}/sock/libvirt-sock"
    h = None
    try:
        h = Helper(helper_exe, uri)
        h.ok(f"define {tmp}/domain.xml")
        h.ok(f"wait defined {DOM} - 10")

        log("== attach to a shut off domain: config only")
        r, _ = h.ok(f"attach {DOM} virtio-bridge br0 {MAC} t1")
        check(r == 1, "attached to the config")
        r, _ = h.ok(f"attach {DOM} virtio-bridge br0 {MAC} t1")
        check(r == 0, "attach again: already there")
        r, _ = h.ok(f"detach {DOM} virtio-bridge br0 {MAC}")
        check(r == 1 and nics(h) == [], "detached from the config")

        log("== start")
        h.ok(f"start {DOM}")
        h.ok(f"wait started {DOM} - 30")
        if guest:
            # TCG on a loaded 2-CPU machine (the vm suite's guests beside it): seconds here, but give it time.
            t = time.monotonic()
            check(wait_guest(tmp, 240), "the guest OS is up")
            log(f"  guest up in {time.monotonic() - t:.1f} s")

        log("== hot-plug virtio-net on a tap (type ethernet)")
        t = time.monotonic()
        r, _ = h.ok(f"attach {DOM} virtio-ethernet tap0 {MAC} t1")
        check(r == 1, f"attached live + config in {time.monotonic() - t:.2f} s")
        h.ok(f"wait device-added {DOM} ua-sriovd-t1_virtio-ethernet 10")
        check(nics(h) == [["ethernet", "-", MAC, "ua-sriovd-t1_virtio-ethernet"]], "the live XML has it, with our alias")

        log("== swap to a bridge, same MAC (what a downgrade/upgrade does)")
        ans, extra = h.cmd(f"swap {DOM} virtio-ethernet tap0 virtio-bridge br0 {MAC} t1", 60)
        check(ans.startswith("ok"), "swap succeeded")
        if guest:
            # The detach by alias returns at once: done, or pending until device-removed.
            check("swap done" in extra or "swap pending" in extra, f"swap: old out, new in ({extra})")
            h.ok(f"wait device-removed {DOM} ua-sriovd-t1_virtio-ethernet 10")
            h.ok(f"wait device-added {DOM} ua-sriovd-t1_virtio-bridge 10")
            check(nics(h) == [["bridge", "-", MAC, "ua-sriovd-t1_virtio-bridge"]], "only the bridge NIC is left")
        else:
            check("swap pending" in extra, "swap pending: the guest without OS keeps the old NIC")
            h.ok(f"wait device-added {DOM} ua-sriovd-t1_virtio-bridge 10")
            check(sorted(n[0] for n in nics(h)) == ["bridge", "ethernet"], "both NICs live until the guest lets go")

        log("== a VF by hostdev: refused on this host, errno + message")
        for kind in ("vf-interface", "vf-hostdev"):
            ans, _ = h.cmd(f"attach {DOM} {kind} {NO_SUCH_VF} 52:54:00:5a:00:02 t2")
            check(ans.startswith("err "), f"{kind} attach refused: {ans}")
            errno_ = int(ans.split()[1])
            check(errno_ < 0 and len(ans.split(None, 3)) == 4, f"{kind}: negative errno {errno_} with libvirt's message")

        log("== swap to a VF that cannot be attached: the guest keeps its NIC")
        ans, extra = h.cmd(f"swap {DOM} virtio-bridge br0 vf-interface {NO_SUCH_VF} {MAC} t1", 60)
        check(ans.startswith("err -95 ") and "swap old-kept" in extra, f"old kept: {ans}")
        time.sleep(1)   # nothing may follow: no device-removed for the bridge NIC
        check(not any("device-removed" in e and "virtio-bridge" in e for e in h.events), "no removal of the old NIC")
        check(any(n[0] == "bridge" and n[2] == MAC for n in nics(h)), "the bridge NIC is there")

        log("== swap on the shut off domain is tested below (config only); detach")
        r, _ = h.ok(f"detach {DOM} virtio-bridge br0 {MAC}", 30)
        if guest:
            check(r in (1, 2), f"detach answered {r}")
            if r == 2:
                h.ok(f"wait device-removed {DOM} ua-sriovd-t1_virtio-bridge 15")
            check(nics(h) == [], "the live XML has no NIC left")
        else:
            check(r == 2, "detach pending (no guest OS to release the device)")

        if guest:
            # libvirt drops a user alias it does not take (sriovd 0.1 gave VFs "…_vf.0000.41.10.0") and
            # names the device itself; a detach that insists on our alias then finds nothing.
            log("== a NIC without our alias (libvirt named it): detached all the same")
            h.ok(f"attach {DOM} virtio-bridge br0 {MAC} -")
            ours = [n for n in nics(h) if n[2] == MAC]
            check(len(ours) == 1 and not ours[0][3].startswith("ua-"), f"libvirt's own alias: {ours}")
            r, _ = h.ok(f"detach {DOM} virtio-bridge br0 {MAC} t1", 30)
            check(r in (1, 2), f"detach answered {r}")
            deadline = time.monotonic() + 15
            while nics(h) and time.monotonic() < deadline:
                time.sleep(0.2)
            check(nics(h) == [], "the live XML has no NIC left")

        log("== vCPUs: an RT guest's placement (vCPU 0 on its RT CPU, the rest and the emulator on housekeeping)")
        ncpu = os.cpu_count()
        last = ncpu - 1
        r, _ = h.ok(f"place {DOM} {last} 0 0")
        check(r >= 2, f"placed live + config: {r} changes (vCPU pins, emulator), no scheduler change")
        r, _ = h.ok(f"vcpu0 {DOM}")
        check(r == last, f"vCPU 0 runs on host CPU {last}")
        r, _ = h.ok(f"place {DOM} {last} 0 0")
        check(r == 0, "placed again: nothing differs (read-modify-write)")

        log("== vCPU pinning changed: a tunable event with vCPU 0's CPUs, and sriovd follows vCPU 0")
        # sriovd's own pin above is one; the other client's vcpupin below must arrive the same way.
        h.ok(f"wait tunable {DOM} - 10 {last}")
        daemon = start_sriovd(tmp, uri, "sriovd-vcpupin.log")
        # Logged after the resync has learnt vCPU 0 (on CPU {last}): what follows is the event's doing.
        check(wait_log(f"{tmp}/sriovd-vcpupin.log", "Re-checking after kernel event: libvirt connected", 40),
              "sriovd connected and learnt the running domain")
        # That re-check runs 10 ms later; an event before it is folded into it (one reason logged).
        check(wait_log(f"{tmp}/sriovd-vcpupin.log", "Cycle 2:", 20), "the connect's re-check has run")
        h.ok(f"vcpupin {DOM} 0 0")
        h.ok(f"wait tunable {DOM} - 10 0")
        check(f"tunable {DOM} - 0" in h.events, "another client's vcpupin: the event names the domain and CPU 0")
        r, _ = h.ok(f"vcpu0 {DOM}")
        check(r == 0, "vCPU 0 on host CPU 0 now")
        if last != 0:
            check(wait_log(f"{tmp}/sriovd-vcpupin.log", f"{DOM}: vCPU 0 now on host CPU 0 (was {last})", 20),
                  "sriovd re-learnt vCPU 0 from the event alone")
            # The connect's re-check has run: this one is not folded into it.
            check(wait_log(f"{tmp}/sriovd-vcpupin.log", "Re-checking after kernel event: libvirt vCPU pinning changed", 5),
                  "and re-checks the IRQ placement")
        daemon.send_signal(signal.SIGTERM)
        check(daemon.wait(timeout=10) == 0, "sriovd exits 0 on SIGTERM")

        log("== SCHED_FIFO through vcpusched: takes effect at the next start")
        h.ok(f"vcpupin {DOM} 0 {last}")   # vCPU 0 back where the placement put it (the other client moved it)
        r, _ = h.ok(f"place {DOM} {last} 0 1")
        check(r == 1, f"only the persistent XML's vcpusched changed ({r} changes); a restart is needed")
        pol = restart_vcpu_policies(h)
        vcpu0 = [p for k, p in pol.items() if k.startswith("CPU 0/")]
        check(vcpu0 == [(1, 1)] and all(p[0] == 0 for k, p in pol.items() if not k.startswith("CPU 0/")),
              f"vCPU 0's thread SCHED_FIFO 1, the others SCHED_OTHER: {pol}")
        h.ok(f"destroy {DOM}")
        h.ok(f"wait stopped {DOM} - 20")

        log("== one placement per RT guest: vCPU 0 alone on its RT CPU at FIFO, the rest on housekeeping")
        h.ok(f"start {DOM}")
        h.ok(f"wait started {DOM} - 30")
        r, _ = h.ok(f"place {DOM} {last} 0 2")
        check(r >= 1, f"placed: {r} changes (vCPU pins, vcpusched on vCPU 0 only)")
        r, _ = h.ok(f"vcpu0 {DOM}")
        check(r == last, f"vCPU 0 on host CPU {last}")
        r, _ = h.ok(f"place {DOM} {last} 0 2")
        check(r == 0, "placed again: nothing differs (read-modify-write)")
        pol = restart_vcpu_policies(h)
        vcpu0 = [p for k, p in pol.items() if k.startswith("CPU 0/")]
        others = [p for k, p in pol.items() if not k.startswith("CPU 0/")]
        check(vcpu0 == [(1, 2)] and others and all(p[0] == 0 for p in others),
              f"vCPU 0 SCHED_FIFO 2, vCPU 1 SCHED_OTHER: {pol}")
        h.ok(f"destroy {DOM}")
        h.ok(f"wait stopped {DOM} - 20")

        log("== swap on the shut off domain: config only")
        h.ok(f"attach {DOM} virtio-bridge br0 {MAC} t1")
        ans, extra = h.cmd(f"swap {DOM} virtio-bridge br0 virtio-ethernet - {MAC} t1")
        check(ans.startswith("ok") and "swap done" in extra, "swap done in the config")
        check([n[0] for n in nics(h)] == ["ethernet"], "the config has the new NIC only")

        log("== libvirtd restarts: disconnected, then reconnected")
        stop(libvirtd)
        h.ok("wait disconnected - - 20")
        ans, _ = h.cmd(f"nics {DOM}")
        check(ans.startswith("err -107"), "calls meanwhile: -ENOTCONN")
        # The daemon itself, started while libvirtd is down: READY=1 at once, then connected
        # through its attempts on their own threads once libvirtd is back, on its own backoff.
        daemon = start_sriovd(tmp, uri)
        libvirtd = start_libvirtd(tmp)
        check(wait_log(f"{tmp}/sriovd.log", "Connected to libvirt at", 40), "sriovd connected after libvirtd came")
        daemon.send_signal(signal.SIGTERM)
        check(daemon.wait(timeout=10) == 0, "sriovd exits 0 on SIGTERM")
        h.ok("wait reconnected - - 60")
        r, _ = h.ok("connected")
        check(r == 1, "connected again")
        h.ok(f"undefine {DOM}")
        h.ok(f"wait undefined {DOM} - 10")
        log("PASS")
        return 0
    except Fail as e:
        log(f"FAIL: {e}")
        diagnose(tmp)
        return 1
    finally:
        if h:
            try:
                h.cmd(f"destroy {DOM}", 20)
            except Exception:
                pass
            h.close()
        # QEMU outlives libvirtd (re-parented): never leave a guest behind.
        try:
            with open(f"/run/libvirt/qemu/{DOM}.pid") as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        stop(libvirtd)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inner":
        sys.exit(inner(sys.argv[2]))
    if len(sys.argv) != 2:
        print("usage: test-virt-live.py VIRT_LIVE_HELPER", file=sys.stderr)
        sys.exit(2)
    run_inner(__file__, [os.path.abspath(sys.argv[1])], ("libvirtd", "qemu-system-x86_64", "unshare", "ip"), 220)


if __name__ == "__main__":
    main()
