#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# testkernel.py — a umockdev testbed with kernel semantics for the sysfs/procfs writes sriovd makes

"""A fake kernel for sriovd's umockdev tests and benchmarks.

A umockdev testbed holds a host laid out by mkhost.py (its root directory is
sriovd's --root).  sriovd runs with LD_PRELOAD=libumockdev-preload.so.0 and
UMOCKDEV_DIR=<root>, so its libudev monitor receives the uevents this module
emits, and with SRIOVD_TEST_KERNEL=<socket>, so every write it makes through
rootfs_write() arrives here as one SOCK_SEQPACKET message "PATH\\0VALUE".  The
kernel answers with an errno in decimal ("0" = done) after it performed the
write and its side effects, as a sysfs store() method does:

  sriov_numvfs        N over a non-zero count: EBUSY, nothing changes; 0: the
                      VFs are unbound and removed (remove uevents); N over 0: N
                      VFs created as mkhost.py lays them out, bound per
                      sriov_drivers_autoprobe (IRQs, /proc/irq, netdev, uevents);
                      ENOENT while the PF has no driver, ERANGE above totalvfs.
  smp_affinity_list   stored (smp_affinity, effective_affinity[_list] follow);
                      EINVAL for a list with no online CPU or bad syntax, ERANGE
                      for a CPU beyond nr_cpu_ids, EIO on a managed vector.
  driver_override, drivers/X/bind, drivers/X/unbind, bus/pci/drivers_probe
                      move the driver link as the driver core does; bind and
                      unbind uevents.
  anything else       a plain write (EACCES on a read-only attribute, ENOENT on
                      a missing one).

Every write is logged with its arrival and reply times (time.monotonic_ns(),
CLOCK_MONOTONIC, comparable with other processes), and so is every uevent.
The kernel can also unbind and rebind a PF (pf_unbind/pf_bind), as an mlx5_core
reload does.  Used in-process: TestKernel(...).start(), then run sriovd with
kernel.env(); a server thread answers sriovd, the test calls methods, one lock
serialises both.
"""

import argparse
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import mkhost  # noqa: E402

PRELOAD = "libumockdev-preload.so.0"
UEVENT_QLEN = 65536     # net.unix.max_dgram_qlen in the test's network namespace

# Drivers the ID tables would pick (PF and VF IDs of the fixture hosts), and which make netdevs.
ID_DRIVERS = {0x15b3: "mlx5_core", (0x8086, 0x1521): "igb", (0x8086, 0x1520): "igbvf",
              (0x8086, 0x0a54): "nvme", (0x1af4, 0x1041): "virtio-pci"}
NET_DRIVERS = {"mlx5_core", "igb", "igbvf"}


def umockdev_available():
    """(True, "") or (False, why): the gi typelib and the preload library."""
    try:
        import ctypes
        import gi
        gi.require_version("UMockdev", "1.0")
        from gi.repository import UMockdev  # noqa: F401
        ctypes.CDLL(PRELOAD)
    except (ImportError, ValueError, OSError) as e:
        return False, str(e)
    return True, ""


def enter_testbed_process():
    """Make this script's process one that can drive a testbed, or exit 77.

    umockdev_testbed_uevent() works only in a process that has the preload library, and
    nothing here may reach the host's /proc/irq: re-exec the running script with a python3
    that has gi (the system one when the first on PATH lacks it), LD_PRELOAD set, in
    private mount and network namespaces (unshare -m -n; -r too when not root) with a
    tmpfs over /proc/irq. Returns in the re-executed process; children (sriovd) inherit
    all of it.

    The network namespace is for net.unix.max_dgram_qlen: umockdev delivers uevents as
    AF_UNIX datagrams, and with the default queue of 10 a burst (8 VFs = 25 uevents)
    sent while sriovd is busy in a write makes sendmsg() fail with EAGAIN, on which
    libumockdev aborts. The kernel's netlink socket queues far more (udev asks for a
    128 MiB receive buffer), so the namespace gets a queue of UEVENT_QLEN.
    """
    if os.environ.get("SRIOVD_TESTKERNEL_STAGE") == "in":
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mount(b"none", b"/proc/irq", b"tmpfs", 0, b"size=64k") != 0:
            sys.exit("cannot mount a tmpfs over /proc/irq: %s" % os.strerror(ctypes.get_errno()))
        with open("/proc/sys/net/unix/max_dgram_qlen", "w") as f:
            f.write("%d\n" % UEVENT_QLEN)
        return
    python = None
    for cand in (sys.executable, "/usr/bin/python3"):
        ok = subprocess.run([cand, "-c", "import sys; sys.path.insert(0, %r); import testkernel; "
                             "ok, why = testkernel.umockdev_available(); "
                             "sys.exit(0 if ok else why)" % HERE],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if ok.returncode == 0:
            python = cand
            break
        why = ok.stderr.strip().splitlines()[-1:] or ["?"]
    if python is None:
        print("SKIP: umockdev unusable (%s): install umockdev gir1.2-umockdev-1.0 python3-gi"
              % why[0])
        sys.exit(77)
    env = dict(os.environ, SRIOVD_TESTKERNEL_STAGE="in",
               LD_PRELOAD=(PRELOAD + " " + os.environ.get("LD_PRELOAD", "")).strip())
    argv = [python, os.path.abspath(sys.argv[0])] + sys.argv[1:]
    if not shutil.which("unshare"):
        print("SKIP: unshare(1) is needed for private mount and network namespaces")
        sys.exit(77)
    ns = ["unshare", "-m", "-n", "--propagation", "private"]
    if os.geteuid() != 0:
        ns.append("-r")
    if subprocess.run(ns + ["true"], stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIP: cannot make private mount and network namespaces (%s)" % " ".join(ns))
        sys.exit(77)
    argv = ns + ["--"] + argv
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)


def parse_cpulist(s):
    """The kernel's bitmap_parselist, enough for what sriovd writes: set or ValueError."""
    cpus = set()
    s = s.strip()
    if not s:
        return cpus
    for part in s.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi) if hi else int(lo)
        if a > b or a < 0:
            raise ValueError(part)
        cpus.update(range(a, b + 1))
    return cpus


class KernelError(Exception):
    def __init__(self, err):
        super().__init__(os.strerror(err))
        self.errno = err


class TestKernel:
    def __init__(self, host="one-socket-cx7", pfs=None, vfs=None, vf_irqs=None,
                 hotplug_vf_irqs=4, tmpdir=None):
        import gi
        gi.require_version("UMockdev", "1.0")
        from gi.repository import UMockdev

        if tmpdir:
            os.environ["TMPDIR"] = tmpdir      # where umockdev makes its root
        self.testbed = UMockdev.Testbed.new()
        self.root = self.testbed.get_root_dir()
        args = argparse.Namespace(pfs=8 if pfs is None else pfs, vfs=64 if vfs is None else vfs,
                                  vf_irqs=8 if vf_irqs is None else vf_irqs,
                                  truncated_comm=False)
        self.h = mkhost.HOSTS[host](args)
        self.h.finish()
        self.t = mkhost.build(self.h, self.root, args)
        self.vf_irqs = args.vf_irqs if host == "large" else hotplug_vf_irqs
        self.fns = {fn.name: fn for fn in self.h.fns}
        for fn in self.h.fns:
            # What the driver asks for when it binds again, and the netdev it makes.
            fn.nvec = len(fn.irqs)
            fn.netdev_template = dict(fn.netdev) if fn.netdev else None
            fn.override = None
        self.next_irq = self.h.last_irq + 1
        ifindexes = [fn.netdev["ifindex"] for fn in self.h.fns if fn.netdev]
        self.next_ifindex = max(ifindexes + [1]) + 1
        self.next_group = sum(1 for fn in self.h.fns if fn.iommu_group is not None)
        self.online = set(self.h.all_cpus())
        # smp_affinity_list of every IRQ, kept in step with the files: cheap to poll.
        self.affinity = {q.number: mkhost.cpulist(q.affinity if q.affinity is not None
                                                  else self.h.all_cpus())
                         for q in self.h.irqs()}
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.writes = []       # dict(t, done, path, value, errno)
        self.events = []       # (t, action, devpath)
        self.bugs = []         # writes the test kernel itself failed on
        self.sock_path = os.path.join(self.root, "testkernel.sock")
        self.listener = None
        self.thread = None
        self.stopping = False

    # ---------------------------------------------------------------- process plumbing

    def env(self, base=None):
        """The environment sriovd runs with under this kernel."""
        env = dict(os.environ if base is None else base)
        env["LD_PRELOAD"] = (PRELOAD + " " + env.get("LD_PRELOAD", "")).strip()
        env["UMOCKDEV_DIR"] = self.root
        env["SRIOVD_TEST_KERNEL"] = self.sock_path
        env["SYSTEMD_DEVICE_VERIFY_SYSFS"] = "0"
        # An ASan-built sriovd: the preload library is loaded before ASan's runtime, which is
        # harmless here (umockdev wraps libc calls ASan does not intercept), so let it start.
        env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"), "verify_asan_link_order=0") if x)
        return env

    def start(self):
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(self.sock_path)
        self.listener.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping = True
        if self.listener:
            try:
                self.listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.listener.close()
        if self.thread:
            self.thread.join(timeout=2)

    def cleanup(self):
        """Stop serving; the testbed removes its root when it is finalized."""
        self.stop()
        self.testbed = None

    def _serve(self):
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.listener, selectors.EVENT_READ)
        while not self.stopping:
            try:
                ready = sel.select(timeout=0.5)
            except (OSError, ValueError):
                return
            for key, _ in ready:
                if key.fileobj is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        return
                    sel.register(conn, selectors.EVENT_READ)
                    continue
                conn = key.fileobj
                try:
                    msg = conn.recv(65536)
                except OSError:
                    msg = b""
                if not msg:
                    sel.unregister(conn)
                    conn.close()
                    continue
                t = time.monotonic_ns()
                path, _, value = msg.partition(b"\0")
                err = self.handle_write(path.decode(), value.decode(), t)
                conn.send(str(err).encode())

    # ---------------------------------------------------------------- the write path

    def handle_write(self, path, value, t=None):
        """Perform one write as the kernel would; returns the errno (0 = done)."""
        t = time.monotonic_ns() if t is None else t
        with self.lock:
            try:
                self._write(path, value)
                err = 0
            except KernelError as e:
                err = e.errno
            except Exception:
                # A bug here, not a kernel answer: say so loudly, and let sriovd go on.
                import traceback
                traceback.print_exc()
                self.bugs.append((path, value))
                err = errno.EIO
            self.writes.append(dict(t=t, done=time.monotonic_ns(), path=path, value=value,
                                    errno=err))
            self.changed.notify_all()
        return err

    def _rel(self, path):
        """A kernel path resolved beneath the root, symlinks followed: relative tree path."""
        if not path.startswith("/"):
            raise KernelError(errno.EINVAL)
        real = os.path.realpath(os.path.join(self.root, path.lstrip("/")))
        if os.path.commonpath([real, self.root]) != self.root:
            raise KernelError(errno.EXDEV)
        return os.path.relpath(real, self.root)

    def _fn_of_dir(self, rel):
        name = os.path.basename(rel)
        fn = self.fns.get(name)
        if fn is None or fn.rel != rel:
            raise KernelError(errno.ENODEV)
        return fn

    def _write(self, path, value):
        rel = self._rel(path)
        full = os.path.join(self.root, rel)
        base, parent = os.path.basename(rel), os.path.dirname(rel)
        if not os.path.lexists(full):
            raise KernelError(errno.ENOENT)
        if base == "sriov_numvfs":
            return self._store_numvfs(self._fn_of_dir(parent), value)
        if base == "smp_affinity_list" and parent.startswith("proc/irq/"):
            return self._store_affinity(int(os.path.basename(parent)), value)
        if base == "driver_override":
            v = value.strip()
            self._fn_of_dir(parent).override = v or None
            return self._plain(full, (v or "(null)") + "\n")
        if rel == "sys/bus/pci/drivers_probe":
            return self._probe(self._fn_named(value))
        if parent.startswith("sys/bus/pci/drivers/") and base in ("bind", "unbind"):
            drv = os.path.basename(parent)
            fn = self._fn_named(value)
            if base == "unbind":
                if fn.driver != drv:
                    raise KernelError(errno.ENODEV)
                return self._unbind(fn)
            if fn.driver:
                raise KernelError(errno.EBUSY)
            if fn.override and fn.override != drv:
                raise KernelError(errno.ENODEV)
            return self._bind(fn, drv)
        if not os.stat(full).st_mode & 0o222:
            raise KernelError(errno.EACCES)
        return self._plain(full, value)

    def _fn_named(self, value):
        fn = self.fns.get(value.strip())
        if fn is None:
            raise KernelError(errno.ENODEV)
        return fn

    def _rmtree(self, rel):
        """Remove a tree path, and forget it in mkhost's cache of directories made."""
        shutil.rmtree(os.path.join(self.root, rel), ignore_errors=True)
        self.t.dirs = {d for d in self.t.dirs if d != rel and not d.startswith(rel + "/")}

    @staticmethod
    def _plain(full, value):
        fd = os.open(full, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, value.encode())
        finally:
            os.close(fd)

    # ---------------------------------------------------------------- uevents

    def uevent(self, devrel, action):
        """Emit one uevent for the device at tree path devrel (sys/devices/...); logged with
        the time the emission started."""
        t = time.monotonic_ns()
        self.testbed.uevent("/" + devrel, action)
        self.events.append((t, action, "/" + devrel))

    # ---------------------------------------------------------------- IRQs

    def _store_affinity(self, irq, value):
        p = "proc/irq/%d" % irq
        full = os.path.join(self.root, p)
        if not os.stat(full + "/smp_affinity_list").st_mode & 0o222:
            raise KernelError(errno.EIO)       # managed: irq_can_set_affinity_usr() says no
        try:
            cpus = parse_cpulist(value)
        except ValueError:
            raise KernelError(errno.EINVAL)
        if any(c >= self.h.ncpus for c in cpus):
            raise KernelError(errno.ERANGE)    # bitmap_parselist beyond nr_cpu_ids
        online = sorted(cpus & self.online)
        if not online:
            raise KernelError(errno.EINVAL)    # no online CPU in the mask
        w = lambda f, v: self._plain(full + "/" + f, v + "\n")
        self.affinity[irq] = mkhost.cpulist(cpus)
        w("smp_affinity_list", self.affinity[irq])
        w("smp_affinity", mkhost.cpumask(cpus, self.h.ncpus))
        w("effective_affinity_list", str(online[0]))
        w("effective_affinity", mkhost.cpumask([online[0]], self.h.ncpus))

    def _alloc_irqs(self, fn, actions, first=None):
        fn.irqs = actions
        for i, q in enumerate(actions):
            q.fn, q.index = fn, i
        if first is None:
            self.next_irq = mkhost.number_irqs(self.h, fn, self.next_irq)
        else:
            mkhost.number_irqs(self.h, fn, first)
        for q in actions:
            self.affinity[q.number] = mkhost.cpulist(self.h.all_cpus())
        mkhost.write_msi_irqs(self.t, fn)
        mkhost.write_fn_irqs(self.t, self.h, fn)

    def _free_irqs(self, fn):
        if fn.irqs:
            fn.freed_irq = min(q.number for q in fn.irqs)
        for q in fn.irqs:
            self.affinity.pop(q.number, None)
            self._rmtree("proc/irq/%d" % q.number)
            if q.pid:
                self._rmtree("proc/%d" % q.pid)
        self._rmtree(fn.rel + "/msi_irqs")
        self.t.mkdir(fn.rel + "/msi_irqs")
        fn.irqs = []

    # ---------------------------------------------------------------- drivers

    def _id_driver(self, fn):
        return ID_DRIVERS.get((fn.vendor, fn.device)) or ID_DRIVERS.get(fn.vendor)

    def _probe(self, fn):
        if fn.driver:
            return
        drv = fn.override or self._id_driver(fn)
        if drv:
            self._bind(fn, drv)

    def _irq_actions(self, fn, drv):
        if fn.physfn is not None:
            return mkhost.vf_irq_actions(fn.name, drv, self.vf_irqs)
        if drv == "mlx5_core":
            return mkhost.mlx5_irqs(fn.name, fn.nvec)
        if drv == "vfio-pci":
            return []
        return [mkhost.Irq("%s-%d" % (drv, i)) for i in range(fn.nvec)]

    def _bind(self, fn, drv, reuse_irqs=False):
        """Probe: the driver enables MSI-X, registers its netdev, then the bind uevent."""
        fn.driver = drv
        mkhost.write_driver_link(self.t, fn)
        mkhost.write_pci_uevent(self.t, fn)
        first = getattr(fn, "freed_irq", None) if reuse_irqs else None
        self._alloc_irqs(fn, self._irq_actions(fn, drv), first)
        if drv in NET_DRIVERS and fn.netdev_template:
            fn.netdev = dict(fn.netdev_template, ifindex=self.next_ifindex)
            self.next_ifindex += 1
            mkhost.write_netdev(self.t, fn)
            self.uevent(mkhost.netdev_rel(fn), "add")
        self.uevent(fn.rel, "bind")

    def _unbind(self, fn):
        """Driver remove: SR-IOV off (a PF driver disables its VFs), netdev gone, IRQs freed."""
        if fn.sriov and fn.vfs:
            self._disable_sriov(fn)
        if fn.netdev:
            n = mkhost.netdev_rel(fn)
            self.uevent(n, "remove")
            os.unlink(os.path.join(self.root, "sys/class/net", fn.netdev["name"]))
            self._rmtree(n)
            fn.netdev = None
        self._free_irqs(fn)
        os.unlink(os.path.join(self.root, "sys/bus/pci/drivers", fn.driver, fn.name))
        os.unlink(os.path.join(self.root, fn.rel, "driver"))
        fn.driver = None
        mkhost.write_pci_uevent(self.t, fn)
        self.uevent(fn.rel, "unbind")

    # ---------------------------------------------------------------- SR-IOV

    def _store_numvfs(self, pf, value):
        if not pf.sriov:
            raise KernelError(errno.ENOENT)
        try:
            n = int(value.strip(), 0)
        except ValueError:
            raise KernelError(errno.EINVAL)
        if n < 0:
            raise KernelError(errno.EINVAL)
        cur = len(pf.vfs)
        if n == cur:
            return
        if not pf.driver:
            raise KernelError(errno.ENOENT)    # "no driver bound to device"
        if n > pf.sriov["totalvfs"]:
            raise KernelError(errno.ERANGE)
        if n and cur:
            raise KernelError(errno.EBUSY)     # "%d VFs already enabled. Disable before enabling %d VFs"
        if n:
            self._enable_sriov(pf, n)
        else:
            self._disable_sriov(pf)
        self.uevent(pf.rel, "change")

    def _set_numvfs_file(self, pf, n):
        pf.sriov["numvfs"] = n
        self._plain(os.path.join(self.root, pf.rel, "sriov_numvfs"), "%d\n" % n)

    def _enable_sriov(self, pf, n):
        with open(os.path.join(self.root, pf.rel, "sriov_drivers_autoprobe")) as f:
            autoprobe = f.read().strip() != "0"
        self._set_numvfs_file(pf, n)
        for k in range(n):
            vf = mkhost.make_vf(pf, k, 0, None, None)
            if pf.netdev_template:
                vf.netdev_template = mkhost.vf_netdev(pf.netdev_template["name"], k, 0, vf.addr)
            else:
                vf.netdev_template = None
            vf.nvec, vf.override = self.vf_irqs, None
            if self.h.iommu:
                vf.iommu_group = self.next_group
                self.next_group += 1
            vf.bar = (pf.iov_bar[0] + 0x100000 * k, 0x100000, mkhost.RES_MEM64_PREF) \
                if pf.iov_bar else None
            self.h.fns.append(vf)
            self.fns[vf.name] = vf
            mkhost.write_fn(self.t, self.h, vf)
            self.t.link(pf.rel + "/virtfn%d" % k, vf.rel)
            self.uevent(vf.rel, "add")
            if autoprobe:
                self._probe(vf)

    def _disable_sriov(self, pf):
        for vf in reversed(pf.vfs):
            if vf.driver:
                self._unbind(vf)
            os.unlink(os.path.join(self.root, pf.rel, "virtfn%d" % pf.vfs.index(vf)))
            self.uevent(vf.rel, "remove")
            if vf.iommu_group is not None:
                self._rmtree("sys/kernel/iommu_groups/%d" % vf.iommu_group)
            os.unlink(os.path.join(self.root, "sys/bus/pci/devices", vf.name))
            self._rmtree(vf.rel)
            self.h.fns.remove(vf)
            del self.fns[vf.name]
        pf.vfs = []
        self._set_numvfs_file(pf, 0)

    # ---------------------------------------------------------------- what tests call

    def pf_unbind(self, addr):
        """mlx5_core going away from a PF (first half of a driver reload)."""
        with self.lock:
            self._unbind(self.fns[addr])
            self.changed.notify_all()

    def pf_bind(self, addr, driver="mlx5_core", reuse_irqs=False):
        """The driver probing the PF again: back with 0 VFs, new IRQ numbers (or, reuse_irqs, the
        ones it freed, as Linux hands out freed numbers again), its netdev."""
        with self.lock:
            self._bind(self.fns[addr], driver, reuse_irqs)
            self.changed.notify_all()

    def set_affinity_behind_back(self, irq, cpus):
        """Someone else (irqbalance, an operator) writes an IRQ's affinity."""
        with self.lock:
            self._store_affinity(irq, cpus)

    def set_numvfs(self, addr, n):
        """Someone other than sriovd writes sriov_numvfs (not logged as sriovd's write)."""
        with self.lock:
            try:
                self._store_numvfs(self.fns[addr], str(n))
            finally:
                self.changed.notify_all()

    def planned_affinity(self, pf_addr):
        """({irq: cpulist}, allowed CPUs) the planner wants for a PF without a class and its
        VFs: vector i of device d on the (d + i)-th CPU of the PF's NUMA-local housekeeping
        CPUs (d = 0 for the PF, VF index + 1 for a VF; plan_device() in src/core/plan-irq.c),
        housekeeping = online CPUs minus the isolated ones (sriovd's default)."""
        with self.lock:
            h = self.h
            pf = self.fns[pf_addr]
            cpus = [c for c in h.node_cpus(pf.node) if c not in h.isolated]
            want = {}
            for ordinal, fn in [(0, pf)] + [(k + 1, vf) for k, vf in enumerate(pf.vfs)]:
                for i, q in enumerate(sorted(fn.irqs, key=lambda q: q.number)):
                    want[q.number] = str(cpus[(ordinal + i) % len(cpus)])
            return want, set(cpus)

    def affinities(self, irqs):
        """{irq: smp_affinity_list} from the kernel's own record (files are kept in step)."""
        with self.lock:
            return {n: self.affinity.get(n) for n in irqs}

    def read(self, rel):
        with self.lock, open(os.path.join(self.root, rel)) as f:
            return f.read().strip()

    def vf_irqs_of(self, addr):
        """{irq: smp_affinity_list} of every VF of a PF."""
        with self.lock:
            return {q.number: self.read("proc/irq/%d/smp_affinity_list" % q.number)
                    for vf in self.fns[addr].vfs for q in vf.irqs}

    def wait(self, pred, timeout=10.0):
        """Wait until pred() (called under the lock) holds; returns its last value."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                v = pred()
                left = deadline - time.monotonic()
                if v or left <= 0:
                    return v
                self.changed.wait(min(left, 0.05))

    def writes_to(self, suffix):
        with self.lock:
            return [w for w in self.writes if w["path"].endswith(suffix)]


class Sriovd:
    """The sriovd binary on this kernel's testbed, with a notify socket and its log."""

    def __init__(self, kernel, sriovd, tmp, conf):
        self.tmp = tmp
        self.conf = os.path.join(tmp, "sriovd.conf")
        self.write_conf(conf)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(os.path.join(tmp, "notify"))
        env = kernel.env()
        env["NOTIFY_SOCKET"] = os.path.join(tmp, "notify")
        env.pop("JOURNAL_STREAM", None)
        self.log = open(os.path.join(tmp, "stderr"), "w+")
        self.proc = subprocess.Popen([sriovd, "--root", kernel.root, "--config", self.conf],
                                     env=env, stdout=self.log, stderr=self.log)

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    def wait_for(self, key, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            if key in fields:
                return fields
        raise AssertionError("no %s from sriovd within %ss; stderr:\n%s" %
                             (key, timeout, self.stderr()))

    def reload(self, conf, timeout=60.0):
        # READY comes after the reload's cycle, which may create (and wait for) dozens of VFs.
        self.write_conf(conf)
        self.proc.send_signal(signal.SIGHUP)
        self.wait_for("RELOADING")
        self.wait_for("READY", timeout)

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
