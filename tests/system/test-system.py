#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-system.py — the system suite: a whole hypervisor in a QEMU (TCG) guest. The guest boots the
# Debian 12 image tools/system-setup caches (systemd as PID 1, udev, dbus, libvirtd socket-
# activated, QEMU), with an igb SR-IOV NIC on NUMA node 1 of two behind an intel-iommu. Boot 1
# installs the .debs built from this tree, sriovd and sriovd-placement (dpkg -i), runs the
# autopkgtests that need a whole machine, writes the operator's policy, enables sriovd and
# powers off; boot 2 starts sriovd at boot and runs guest/scenarios.sh (its scenarios 1-9)
# against it as an operator and a controller would. The guest writes PASS/FAIL lines to its
# second serial port; any FAIL, or a missing END, fails this test.
#
#   test-system.py SRCDIR
#   SRIOVD_SYSTEM_DEB=FILE       sriovd's .deb to test (tools/package-check's), with the
#                                sriovd-placement .deb of its version beside it; default: build both
#   SRIOVD_SYSTEM_CACHE=DIR      tools/system-setup's cache (default /var/cache/sriovd-system)
#   SRIOVD_VM_CACHE=DIR          tools/vm-setup's (QEMU 10 itself is installed on the host)
#   SRIOVD_SYSTEM=0              skip it even where the image is cached
#   SRIOVD_SYSTEM_REQUIRED=1     run it, and fail instead of skipping (77) when something is missing
#   SRIOVD_SYSTEM_KEEP=1         keep the run's directory (console log, overlay) even on success
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
import mkinitramfs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("SRIOVD_SYSTEM_CACHE", "/var/cache/sriovd-system")
VM_CACHE = os.environ.get("SRIOVD_VM_CACHE", "/var/cache/sriovd-vm")
REQUIRED = os.environ.get("SRIOVD_SYSTEM_REQUIRED") == "1"
QEMU = shutil.which("qemu-system-x86_64")
# Boot 1 also starts the real Placement and the connector, both Python, under TCG.
INSTALL_TIMEOUT = 900
TEST_TIMEOUT = int(os.environ.get("SRIOVD_SYSTEM_TIMEOUT", "1200"))
T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def skip(why):
    if REQUIRED:
        print(f"FAIL: {why} (SRIOVD_SYSTEM_REQUIRED=1)")
        sys.exit(1)
    print(f"SKIP: {why}")
    sys.exit(77)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build_deb(src, out):
    """dpkg-buildpackage from a copy of the tree (git's files), tests skipped: the suite runs them."""
    tree = os.path.join(out, "src")
    os.mkdir(tree)
    files = subprocess.run(["git", "-C", src, "ls-files", "-co", "--exclude-standard", "-z"],
                           check=True, capture_output=True).stdout
    subprocess.run(["tar", "-C", src, "--null", "-T", "-", "-cf", os.path.join(out, "src.tar")],
                   input=files, check=True)
    run(["tar", "-C", tree, "-xf", os.path.join(out, "src.tar")])
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck")
    with open(os.path.join(out, "build.log"), "w") as f:
        r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, env=env, stdout=f,
                           stderr=subprocess.STDOUT)
    if r.returncode != 0:
        print(open(os.path.join(out, "build.log")).read()[-4000:])
        raise SystemExit("FAIL: dpkg-buildpackage")
    return glob.glob(os.path.join(out, "sriovd_*.deb"))[0]


def newer_deb(deb, dst, suffix="+system1"):
    """The same package with a higher version, written to dst: the upgrades of boot 1 and scenario 3."""
    d = dst + ".tree"
    run(["dpkg-deb", "-R", deb, d])
    control = os.path.join(d, "DEBIAN", "control")
    text = open(control).read()
    text = re.sub(r"^Version: (.*)$", lambda m: f"Version: {m.group(1)}{suffix}", text, flags=re.M)
    open(control, "w").write(text)
    run(["dpkg-deb", "-Zxz", "-b", d, dst], stdout=subprocess.DEVNULL)
    shutil.rmtree(d)
    return dst


def placement_deb(deb):
    """The sriovd-placement .deb that dpkg-buildpackage wrote beside deb, of the same version."""
    version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True, capture_output=True,
                             text=True).stdout.strip()
    found = glob.glob(os.path.join(os.path.dirname(os.path.abspath(deb)),
                                   f"sriovd-placement_{version.partition(':')[2] or version}_all.deb"))
    if not found:
        raise SystemExit(f"FAIL: no sriovd-placement .deb of version {version} beside {deb}")
    return found[0]


def qemu(run_dir, image, name, timeout):
    """Boot the overlay; the console goes to NAME.console, ttyS1 to NAME.out. Returns ttyS1's text."""
    console, out = os.path.join(run_dir, name + ".console"), os.path.join(run_dir, name + ".out")
    cmd = [QEMU, "-accel", "tcg", "-machine", "q35,kernel-irqchip=split", "-smp", "2", "-m", "3G",
           "-object", "memory-backend-ram,id=m0,size=1536M",
           "-object", "memory-backend-ram,id=m1,size=1536M",
           "-numa", "node,nodeid=0,cpus=0,memdev=m0", "-numa", "node,nodeid=1,cpus=1,memdev=m1",
           "-device", "intel-iommu,intremap=on,caching-mode=on",
           "-device", "pxb-pcie,id=pxb1,bus_nr=0x40,numa_node=1,bus=pcie.0",
           "-device", "pcie-root-port,id=rp1,bus=pxb1,chassis=1",
           "-netdev", "hubport,id=n0,hubid=0",
           "-device", "igb,bus=rp1,netdev=n0,mac=52:54:00:00:00:b0",
           "-nic", "none",
           "-drive", f"file={run_dir}/root.raw,if=none,id=root,format=raw",
           "-device", "virtio-blk-pci,drive=root,bus=pcie.0,addr=0x4",
           "-drive", f"file={run_dir}/test.img,if=none,id=test,format=raw,readonly=on",
           "-device", "virtio-blk-pci,drive=test,bus=pcie.0,addr=0x5",
           "-kernel", os.path.join(image, "vmlinuz"), "-initrd", os.path.join(image, "initrd.img"),
           # no_timer_check: under load the kernel's check that the timer IRQ arrives through the
           # remapped IO-APIC can time out in TCG, and the kernel panics at boot.
           "-append", "root=/dev/vda rw console=ttyS0 intel_iommu=on iommu=pt threadirqs panic=-1 "
                      "no_timer_check systemd.show_status=false",
           "-display", "none", "-monitor", "none", "-no-reboot",
           "-serial", f"file:{console}", "-serial", f"file:{out}"]
    log(f"boot {name} (timeout {timeout} s)")
    t = time.monotonic()
    # Guarded: killed at the timeout, and 60 s after the guest said END if it has not powered off.
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    timed_out, ended = False, None
    while proc.poll() is None:
        time.sleep(1)
        now = time.monotonic()
        if ended is None and os.path.exists(out) and re.search(r"^END", open(out, errors="replace").read(), re.M):
            ended = now
        if now - t > timeout or (ended is not None and now - ended > 60):
            timed_out = ended is None
            if ended is not None:
                log(f"boot {name}: no power-off 60 s after END; killing QEMU")
            proc.kill()
            proc.wait()
    log(f"boot {name}: {'TIMED OUT' if timed_out else 'powered off'} after {time.monotonic() - t:.0f} s")
    text = open(out, errors="replace").read() if os.path.exists(out) else ""
    return text, timed_out, console


def tail(path, n=60):
    try:
        return "".join(open(path, errors="replace").readlines()[-n:])
    except OSError:
        return ""


def main():
    src = sys.argv[1]
    # Like the vm suite: runs where tools/system-setup cached its image, skips (77) where not; CI
    # makes the image and runs it strict (SRIOVD_SYSTEM_REQUIRED=1).
    if os.environ.get("SRIOVD_SYSTEM") == "0" and not REQUIRED:
        skip("SRIOVD_SYSTEM=0")
    image = os.path.join(CACHE, "current")
    if not os.path.exists(os.path.join(image, ".done")):
        skip(f"no system image in {CACHE} (run tools/system-setup as root)")
    if not os.path.exists(os.path.join(VM_CACHE, "kernel-std", "vmlinux")):
        skip(f"no kernel-std/vmlinux in {VM_CACHE} (run tools/vm-setup as root)")
    if not QEMU or b'"igb"' not in subprocess.run([QEMU, "-device", "help"], capture_output=True).stdout:
        skip("no QEMU with the igb device (run tools/vm-setup as root)")
    for tool in ("mkfs.ext4", "dpkg-deb"):
        if not shutil.which(tool):
            skip(f"no {tool}")

    run_dir = tempfile.mkdtemp(prefix="sriovd-system-", dir="/var/tmp")
    log(f"run directory {run_dir}")
    deb = os.environ.get("SRIOVD_SYSTEM_DEB")
    if not deb:
        if not shutil.which("dpkg-buildpackage"):
            skip("no dpkg-buildpackage and no SRIOVD_SYSTEM_DEB")
        log("dpkg-buildpackage (set SRIOVD_SYSTEM_DEB to reuse a built .deb)")
        deb = build_deb(src, run_dir)
    log(f"the package: {deb}")

    pdeb = placement_deb(deb)
    log(f"the connector's package: {pdeb}")
    disk = os.path.join(run_dir, "disk")
    shutil.copytree(os.path.join(HERE, "guest"), disk)
    shutil.copy(deb, os.path.join(disk, "sriovd.deb"))
    shutil.copy(pdeb, os.path.join(disk, "sriovd-placement.deb"))
    newer_deb(deb, os.path.join(disk, "sriovd-newer.deb"))
    # Boot 1's upgrade of both packages, with both services running: a version below scenario 3's.
    os.mkdir(os.path.join(disk, "newer-placement"))
    for d, name in ((deb, "sriovd.deb"), (pdeb, "sriovd-placement.deb")):
        newer_deb(d, os.path.join(disk, "newer-placement", name), "+placement1")
    # The package's autopkgtests that need a whole machine, run at boot 1 before any policy is
    # written. Their fixture host is made here. placement-service runs from a part of the source
    # tree, as autopkgtest runs it from the whole tree.
    shutil.copy(os.path.join(src, "debian", "tests", "systemd-service"), os.path.join(disk, "autopkgtest-systemd-service"))
    for f in ("debian/tests/placement-service", "tests/lib/placementsrv.py"):
        os.makedirs(os.path.join(disk, "src", os.path.dirname(f)), exist_ok=True)
        shutil.copy(os.path.join(src, f), os.path.join(disk, "src", f))
    run([sys.executable, os.path.join(src, "tests", "fixtures", "mkhost.py"), "two-socket",
         os.path.join(disk, "fixture-two-socket")])
    # The second-level domain l2-a: the vm suite's uncompressed std kernel (PVH: no decompression
    # under nested TCG) and a busybox initramfs that loads igbvf for its passed-through VF.
    shutil.copy(os.path.join(VM_CACHE, "kernel-std", "vmlinux"), os.path.join(disk, "l2-vmlinux"))
    mkinitramfs.build(os.path.join(disk, "l2-initrd"), VM_CACHE, "kernel-std", ["igbvf"],
                      {"/init": open(os.path.join(HERE, "guest", "l2-init"), "rb").read()},
                      {"/usr/bin/ip": shutil.which("ip")})
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(disk) for f in fs)
    run(["mkfs.ext4", "-q", "-F", "-L", "sriovd-test", "-d", disk, os.path.join(run_dir, "test.img"),
         f"{size // 2**20 + 64}M"])
    # A sparse copy of the cached image (under a second): both boots write it, the cache stays clean.
    run(["cp", "--sparse=always", os.path.join(image, "disk.raw"), os.path.join(run_dir, "root.raw")])

    failed = []
    text, timed_out, console = qemu(run_dir, image, "install", INSTALL_TIMEOUT)
    print(text, end="")
    if timed_out or "END install" not in text or "FAIL " in text:
        print(tail(console))
        print(f"FAIL: the install boot {'timed out' if timed_out else 'failed'}; run directory {run_dir}")
        return 1
    text, timed_out, console = qemu(run_dir, image, "test", TEST_TIMEOUT)
    print(text, end="")
    passes = [l for l in text.splitlines() if l.startswith("PASS ")]
    failed = [l for l in text.splitlines() if l.startswith("FAIL ")]
    ok = not timed_out and re.search(r"^END$", text, re.M) and not failed
    print(f"\n=== system: {len(passes)} passed, {len(failed)} failed{', TIMED OUT' if timed_out else ''}"
          f"{'' if re.search(r'^END$', text, re.M) else ', no END from the guest'} "
          f"({time.monotonic() - T0:.0f} s)")
    for l in failed:
        print(l)
    if not ok:
        print("--- the guest's console (tail):")
        print(tail(console, 40))
        print(f"run directory kept: {run_dir}")
        return 1
    if os.environ.get("SRIOVD_SYSTEM_KEEP") != "1":
        shutil.rmtree(run_dir)
    return 0


sys.exit(main())
