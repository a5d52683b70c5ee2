#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-daemon.py — the real sriovd binary on a fixture host: READY/STATUS/WATCHDOG, SIGHUP, SIGTERM
import grp
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SRIOVD = sys.argv[1]
BUILD = os.environ["SRIOVD_BUILD_DIR"]
PF0 = "sys/bus/pci/devices/0000:41:00.0"
PF0_ADDR = "0000:41:00.0"


class Daemon:
    def __init__(self, tmp, conf, env_extra=None, prefix=(), prepare=None):
        self.tmp = tmp
        os.mkdir(os.path.join(tmp, "run"))
        self.root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), self.root, symlinks=True)
        if prepare:
            prepare(self.root)
        self.conf = os.path.join(tmp, "sriovd.conf")
        self.write_conf(conf)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(os.path.join(tmp, "notify"))
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, "notify"),
                   RUNTIME_DIRECTORY=os.path.join(tmp, "run"))
        env.pop("JOURNAL_STREAM", None)
        env.update(env_extra or {})
        self.log = open(os.path.join(tmp, "stderr"), "w+")
        self.proc = subprocess.Popen([*prefix, SRIOVD, "--root", self.root, "--config", self.conf],
                                     env=env, stderr=self.log, stdout=self.log)
        self.messages = []

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    def read(self, path):
        with open(os.path.join(self.root, path)) as f:
            return f.read().strip()

    def write(self, path, value):
        with open(os.path.join(self.root, path), "w") as f:
            f.write(value)

    def wait_for(self, key, timeout=10.0):
        """Wait for a notify datagram holding key; return its fields."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            self.messages.append(fields)
            if key in fields:
                return fields
        raise AssertionError(f"no {key} from sriovd within {timeout}s; got {self.messages}; "
                             f"stderr: {self.stderr()}")

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_lifecycle(tmp):
    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 1\n\n[match 15b3:101d]\nnum_vfs = 8\n\n[rt]\nrtnet_prio = 50\n",
               {"WATCHDOG_USEC": "400000"})
    try:
        ready = d.wait_for("READY")
        assert ready["READY"] == "1"
        status = ready.get("STATUS", "")
        assert "2 PFs, 16 VFs, 82 IRQs" in status, status
        # rtnet_prio + 82 vectors pinned to the housekeeping CPUs of their node, and the timer,
        # ACPI and the default affinity for new IRQs moved off the RT CPUs
        assert "86 actions, 0 failed, 0 drift" in status, status
        # A fixture tree is not this kernel: no BPF, said once per set, and drift is polled.
        for what in ("thread latency", "drift events"):
            line = f"Kernel events: no {what} from BPF: the host is a fixture tree"
            assert d.stderr().count(line) == 1, d.stderr()
        assert d.read("proc/irq/9/smp_affinity_list") == "0-1,8-17,24-31"
        assert d.read("proc/sys/net/core/rtnet_prio") == "50"
        assert d.read("proc/irq/44/smp_affinity_list") == "0"
        # The IRQs sriovd owns, published for sriovd-irqbalance-policy.
        with open(os.path.join(tmp, "run", "owned-irqs")) as f:
            assert [int(x) for x in f.read().split()] == list(range(44, 126))
        # And its PFs, whose VFs' IRQs it bans before a cycle lists them.
        devices = os.path.join(tmp, "run", "owned-devices")
        with open(devices) as f:
            assert f.read() == "0000:41:00.0\n0000:c1:00.0\n"
        devices_inode = os.stat(devices).st_ino

        # sd-event pings the watchdog by itself when WATCHDOG_USEC is set.
        d.wait_for("WATCHDOG", timeout=3)

        # Drift: someone changes the VF count and an IRQ's affinity; the timer puts them back
        # and says what it found.
        d.write(f"{PF0}/sriov_numvfs", "3")
        d.write("proc/irq/60/smp_affinity_list", "2-7")
        assert wait_until(lambda: d.read(f"{PF0}/sriov_numvfs") == "8"), "drift not repaired"
        assert wait_until(lambda: d.read("proc/irq/60/smp_affinity_list") != "2-7"), "IRQ drift not repaired"
        assert wait_until(lambda: "Drift repaired: irq-affinity 0000:41:00.3 IRQ 60: 2-7 ->" in d.stderr()), d.stderr()
        # The same PFs: those cycles did not write the list again.
        assert os.stat(devices).st_ino == devices_inode

        # A broken config at SIGHUP: errors name file:line, the running config stays.
        d.write_conf("[daemon]\ndrift_check_sec = 1\n\n[match 15b3:101d]\nnum_vfs = lots\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for("RELOADING")
        d.wait_for("READY")
        assert d.proc.poll() is None, "sriovd died on a bad reload"
        assert f"{d.conf}:5:" in d.stderr(), d.stderr()
        assert "keeping the one in use" in d.stderr(), d.stderr()
        d.write(f"{PF0}/sriov_numvfs", "3")
        assert wait_until(lambda: d.read(f"{PF0}/sriov_numvfs") == "8"), "old config not kept"

        # A good config at SIGHUP takes effect at once.
        d.write_conf("[daemon]\ndrift_check_sec = 1\n\n[match 15b3:101d]\nnum_vfs = 12\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for("RELOADING")
        d.wait_for("READY")
        assert d.read(f"{PF0}/sriov_numvfs") == "12"

        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=10) == 0
        d.wait_for("STOPPING")
    finally:
        d.stop()


def test_libvirt_that_never_answers(tmp):
    """At boot systemd holds libvirt's socket until sriovd is ready: READY=1 must not wait on it."""
    path = os.path.join(tmp, "libvirt-sock")
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hung.bind(path)
    hung.listen(16)
    held = []   # accepted and never answered (a bare backlog gets a reset from libvirt's client)

    def accept():
        try:
            while True:
                held.append(hung.accept()[0])
        except OSError:
            pass
    threading.Thread(target=accept, daemon=True).start()
    start = time.monotonic()
    d = Daemon(tmp, f"[daemon]\ndrift_check_sec = 0\nlibvirt_uri = qemu+unix:///system?socket={path}\n")
    try:
        # READY while the first attempt still waits on the socket (it gives up after 15 s): the
        # first cycle on the fixture takes well under a second, 12 s leaves room for ASan on a
        # loaded machine and still tells "did not wait" from "waited for the attempt".
        d.wait_for("READY", timeout=12)
        assert time.monotonic() - start < 12, time.monotonic() - start
        assert "did not answer in 15 s" not in d.stderr(), d.stderr()
        time.sleep(0.5)   # the attempt is now waiting on the socket
        t = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=3) == 0, d.stderr()
        assert time.monotonic() - t < 3
        assert "Received SIGTERM" in d.stderr(), d.stderr()
        assert held, "sriovd never tried libvirt's socket"
    finally:
        d.stop()
        hung.shutdown(socket.SHUT_RDWR)
        hung.close()


def test_bad_config_at_start(tmp):
    d = Daemon(tmp, "[deamon]\n")
    try:
        assert d.proc.wait(timeout=10) == 2
        err = d.stderr()
        assert f"{d.conf}:1:" in err and "did you mean" in err, err
    finally:
        d.stop()


def test_sigint_exits_cleanly(tmp):
    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 0\n")
    try:
        d.wait_for("READY")
        d.proc.send_signal(signal.SIGINT)
        assert d.proc.wait(timeout=10) == 0
    finally:
        d.stop()


def test_stop_keeps_tuning_restore_undoes(tmp):
    """Stopping leaves the host tuned by default; sriovd --restore undoes, never under a running daemon."""
    run = os.path.join(tmp, "run")
    saved = os.path.join(run, "saved-sched")
    # What a previous sriovd found on a thread (a PID the fixture does not have: nothing to change).
    entry = "999999 44 0 0\n"

    def seed(root):
        with open(saved, "w") as f:
            f.write(entry)

    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 0\n", prepare=seed)
    env = dict(os.environ, RUNTIME_DIRECTORY=run)
    try:
        d.wait_for("READY")
        assert os.path.exists(os.path.join(run, "owned-irqs"))
        assert os.path.exists(os.path.join(run, "owned-devices"))
        # Not while it runs: its next cycle would redo it.
        r = subprocess.run([SRIOVD, "--root", d.root, "--restore"], capture_output=True, text=True, env=env,
                           timeout=30)
        assert r.returncode == 2 and "sriovd is running" in r.stderr, (r.returncode, r.stdout, r.stderr)
        with open(saved) as f:
            assert f.read() == entry
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=10) == 0
        assert "restore_on_stop = no" in d.stderr(), d.stderr()
        assert "Restored IRQ" not in d.stderr()
        with open(saved) as f:
            assert f.read() == entry, "the originals must outlive a stop"
    finally:
        d.stop()

    # Stopped: --restore puts back what is on record (here: a thread long gone, dropped) and
    # gives the IRQs back to irqbalance. No configuration needed, even a broken one.
    d.write_conf("[deamon]\n")
    r = subprocess.run([SRIOVD, "--root", d.root, "--config", d.conf, "--restore"], capture_output=True, text=True,
                       env=env, timeout=30)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "Restored 0 IRQ threads" in r.stdout, r.stdout
    with open(saved) as f:
        assert f.read() == ""
    assert not os.path.exists(os.path.join(run, "owned-irqs"))
    assert not os.path.exists(os.path.join(run, "owned-devices"))


def test_restore_on_stop(tmp):
    run = os.path.join(tmp, "run")

    def seed(root):
        with open(os.path.join(run, "saved-sched"), "w") as f:
            f.write("999999 44 0 0\n")

    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 0\nrestore_on_stop = yes\n", prepare=seed)
    try:
        d.wait_for("READY")
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=10) == 0
        with open(os.path.join(run, "saved-sched")) as f:
            assert f.read() == "", "restore_on_stop = yes: put back and forgotten at stop"
    finally:
        d.stop()


def run_cli(*args):
    return subprocess.run([SRIOVD, *args], capture_output=True, text=True, timeout=30)


def test_vf_users_block_count_change(tmp):
    """A QEMU sriovd knows nothing of holds a VF of 41:00.0 through vfio: its count is not
    changed under it, and the refusal names the process; c1:00.0, whose VFs nobody holds, is
    changed. Once the process is gone the change goes ahead."""
    root = os.path.join(tmp, "root")
    subprocess.run([sys.executable, os.environ["SRIOVD_MKHOST"], "two-socket", root,
                    "--vfio-user", "7000:qemu-system-x86:0000:41:00.6"], check=True)
    conf = os.path.join(tmp, "sriovd.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\nvf_timeout_sec = 1\n\n[match 15b3:101d]\nnum_vfs = 12\n")

    r = run_cli("--root", root, "--config", conf, "--dry-run", "--json")
    doc = json.loads(r.stdout)
    counts = [a for a in doc["plan"]["actions"] if a["action"] == "sriov-numvfs"]
    assert [a["target"] for a in counts] == ["0000:c1:00.0"], counts
    refusals = [n for n in doc["plan"]["notes"] if n["level"] == "error"]
    assert len(refusals) == 1 and refusals[0]["target"] == PF0_ADDR, refusals
    assert refusals[0]["text"] == ("num_vfs 8 -> 12 refused: it destroys all 8 VFs and 1 are in use "
                                   "(process 7000 (qemu-system-x86)); stop them first: a force covers "
                                   "sriovd's tenants only (config line 4)"), refusals
    assert r.returncode == 1, r.returncode

    r = run_cli("--root", root, "--config", conf, "--once")
    assert "process 7000 (qemu-system-x86)" in r.stderr, r.stderr
    with open(os.path.join(root, PF0, "sriov_numvfs")) as f:
        assert f.read().strip() == "8"

    with open(os.path.join(root, "sys/bus/pci/devices/0000:c1:00.0/sriov_numvfs")) as f:
        assert f.read().strip() == "12"     # the fixture makes no VFs: only the count is written

    shutil.rmtree(os.path.join(root, "proc", "7000"))
    r = run_cli("--root", root, "--config", conf, "--dry-run", "--json")
    doc = json.loads(r.stdout)
    assert [a["target"] for a in doc["plan"]["actions"] if a["action"] == "sriov-numvfs"] == \
        [PF0_ADDR], doc["plan"]["actions"]
    assert not any(n["level"] == "error" for n in doc["plan"]["notes"]), doc["plan"]["notes"]


def test_cli(tmp):
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), root, symlinks=True)
    conf = os.path.join(tmp, "sriovd.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\nvf_timeout_sec = 1\n\n[match 15b3:101d]\nnum_vfs = 12\n\n"
                "[pf 0000:c1:00.0]\nnum_vfs = 99\n")

    # --dry-run --json: one JSON document with the inventory and the plan; nothing changes.
    r = run_cli("--root", root, "--config", conf, "--dry-run", "--json")
    doc = json.loads(r.stdout)
    assert doc["mode"] == "dry-run"
    pfs = doc["inventory"]["pfs"]
    assert [p["address"] for p in pfs] == ["0000:41:00.0", "0000:c1:00.0"]
    assert pfs[0]["numa_node"] == 0 and pfs[0]["num_vfs"] == 8 and len(pfs[0]["vfs"]) == 8
    assert pfs[0]["vfs"][4]["driver"] == "vfio-pci" and pfs[0]["vfs"][4]["netdev"] is None
    assert len(doc["inventory"]["irqs"]) == 82
    assert doc["inventory"]["irqs"][0]["thread"] == {"pid": 1004, "policy": "fifo", "priority": 50}
    actions = [a for a in doc["plan"]["actions"] if a["action"] != "irq-affinity"]
    irq_actions = [a for a in doc["plan"]["actions"] if a["action"] == "irq-affinity"]
    # 41:00.0's VFs are about to be replaced: only its own IRQs are pinned now, the new VFs' next
    # pass; the timer's and ACPI's IRQs leave the RT CPUs.
    assert len(irq_actions) == 82 - 32 + 2, len(irq_actions)
    assert not any(a["target"].startswith("0000:41:0") and a["target"] != PF0_ADDR for a in irq_actions)
    assert irq_actions[0] == {"action": "irq-affinity", "target": "0000:41:00.0", "irq": 44, "before": "0-31",
                              "after": "0", "effect": None, "result": "planned"}, irq_actions[0]
    assert actions == [{"action": "sriov-numvfs", "target": "0000:41:00.0", "before": 8, "after": 12,
                        "effect": "destroys 8 VFs, then creates 12", "result": "planned"},
                       {"action": "irq-default", "target": "host", "before": "0-31", "after": "0-1,8-17,24-31",
                        "effect": "IRQs requested from now on start off the RT CPUs", "result": "planned"}], actions
    assert any(n["level"] == "error" and "exceeds sriov_totalvfs" in n["text"] for n in doc["plan"]["notes"])
    assert r.returncode == 1, r.returncode      # the policy for c1:00.0 cannot be met
    with open(os.path.join(root, PF0, "sriov_numvfs")) as f:
        assert f.read().strip() == "8"

    # --once applies what can be applied and says the rest failed. A fixture creates no VFs: the
    # write goes through, the 8 VFs still shown are pinned in a second pass, and after
    # vf_timeout_sec the 4 that never came are reported by name.
    r = run_cli("--root", root, "--config", conf, "--once", "--json")
    doc = json.loads(r.stdout)
    assert all(a["result"] == "done" for a in doc["plan"]["actions"])
    assert doc["result"] == {"actions": 86, "done": 86, "skipped": 0, "failed": 1, "drift": 0, "policy_errors": 1}, doc["result"]
    assert "12 VFs of 0000:41:00.0 not ready after" in r.stderr and "virtfn8-11 missing" in r.stderr, r.stderr
    assert r.returncode == 1

    # The one-socket host has no VFs yet: creation first, then each new VF's settings, in order.
    conf1 = os.path.join(tmp, "one.conf")
    with open(conf1, "w") as f:
        f.write("[match 15b3:1021]\nnum_vfs = 8\nvf_mac = derive\nvf_spoofchk = on\nvf_vlan = 100\n")
    r = run_cli("--root", os.path.join(BUILD, "tests", "fixture-one-socket-cx7"), "--config", conf1,
                "--dry-run", "--json")
    acts = json.loads(r.stdout)["plan"]["actions"]
    assert [a["action"] for a in acts[:9]] == ["sriov-numvfs"] + ["vf-link"] * 8, acts[:9]
    assert acts[0]["effect"] == "creates 8 VFs"
    assert [a["vf"] for a in acts[1:9]] == list(range(8))
    assert all(a["before"] == "?" and "vlan 100/0, spoofchk on" in a["after"] for a in acts[1:9]), acts[1:9]
    assert len({a["after"] for a in acts[1:9]}) == 8   # a MAC of its own each

    # --check-config: 0 for the shipped config, 1 with file:line for a broken one.
    shipped = os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "conf", "sriovd.conf")
    r = run_cli("--check-config", "--config", shipped)
    assert r.returncode == 0 and "configuration is valid (4 tenant classes)" in r.stdout, r
    with open(conf, "w") as f:
        f.write("[pf 0000:41:00.0]\nnum_vf = 4\n")
    r = run_cli("--check-config", "--config", conf)
    assert r.returncode == 1
    assert f'{conf}:2: unknown key "num_vf" in [pf 0000:41:00.0]; did you mean "num_vfs"?' in r.stderr, r.stderr

    # --check-config against the host (here the fixture, by --root): num_vfs beyond sriov_totalvfs
    # (16 on both PFs) and an access_group that does not exist are errors at their lines.
    with open(conf, "w") as f:
        f.write("[daemon]\naccess_group = no-such-group-sriovd\n\n[match 15b3:101d]\nnum_vfs = 17\n")
    r = run_cli("--check-config", "--config", conf, "--root", root)
    assert r.returncode == 1, r
    assert f"{conf}:5: error: num_vfs = 17 exceeds sriov_totalvfs = 16 of PF 0000:41:00.0" in r.stderr, r.stderr
    assert f"{conf}:5: error: num_vfs = 17 exceeds sriov_totalvfs = 16 of PF 0000:c1:00.0" in r.stderr, r.stderr
    assert f"{conf}:2: error: access_group = no-such-group-sriovd: no such group" in r.stderr, r.stderr
    assert "3 errors against this host" in r.stdout, r.stdout
    # Within the limit and an existing group: valid, and it says the host was consulted.
    group = grp.getgrgid(os.getgid()).gr_name
    with open(conf, "w") as f:
        f.write(f"[daemon]\naccess_group = {group}\n\n[match 15b3:101d]\nnum_vfs = 16\n")
    r = run_cli("--check-config", "--config", conf, "--root", root)
    assert r.returncode == 0 and f"checked against the host at {root}" in r.stdout, r
    # No readable host: the file alone, and it says so.
    with open(conf, "w") as f:
        f.write("[match 15b3:101d]\nnum_vfs = 4000\n")
    r = run_cli("--check-config", "--config", conf, "--root", tmp)
    assert r.returncode == 0 and "checked the file only" in r.stdout, r

    # --check-host: 0 on the well-tuned host, 1 with an error-level finding on the untuned one.
    with open(conf, "w") as f:
        f.write("[cpus]\nrt = 2-7,18-23\n")
    r = run_cli("--check-host", "--config", conf, "--root", os.path.join(BUILD, "tests", "fixture-two-socket"))
    assert r.returncode == 0 and "0 errors, 0 warnings, 0 info" in r.stdout, r
    untuned = os.path.join(BUILD, "tests", "fixture-two-socket-untuned")
    r = run_cli("--check-host", "--config", conf, "--root", untuned)
    assert r.returncode == 1 and "1 errors, 8 warnings, 1 info" in r.stdout, r
    assert "fix: isolcpus=managed_irq,domain,2-7,18-23 on the kernel command line" in r.stdout, r.stdout
    r = run_cli("--check-host", "--json", "--config", conf, "--root", untuned)
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["rt_cpus"] == "2-7,18-23" and doc["errors"] == 1, doc
    assert {f["check"] for f in doc["findings"] if f["result"] == "fail"} == {
        "isolcpus", "managed_irq", "nohz_full", "rcu_nocbs", "irqaffinity", "smt", "cpuidle", "governor",
        "stalld", "iommu_pt"}, doc
    # No CPUs to read: the host cannot be read.
    assert run_cli("--check-host", "--config", conf, "--root", tmp).returncode == 2

    # Usage errors are exit status 2.
    assert run_cli("--bogus").returncode == 2
    assert run_cli("--json").returncode == 2
    assert run_cli("--root", "/nonexistent/sriovd", "--dry-run").returncode == 2


def in_netns(ns):
    """The command prefix that runs a program in network namespace ns (made by ip netns add).

    nsenter joins the network namespace only. ip netns exec and ip -n would also unshare a mount
    namespace and mount --make-rslave / there, which fails (EINVAL) in a chroot whose / is no
    mount point, as a package build's is; sriovd reads the fixture's sysfs through --root, and
    ip link needs no remounted /sys either."""
    return ("nsenter", f"--net=/run/netns/{ns}", "--")


def test_link_up_rechecks(tmp):
    """A link coming up (drivers re-request IRQs on open) makes sriovd re-check at once."""
    ns = f"sriovd-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        # No drift timer: only an event can cause a second cycle.
        d = Daemon(tmp, "[daemon]\ndrift_check_sec = 0\n", prefix=in_netns(ns))
        try:
            d.wait_for("READY")
            d.write("proc/irq/60/smp_affinity_list", "2-7")
            subprocess.run([*in_netns(ns), "ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"],
                           check=True)
            subprocess.run([*in_netns(ns), "ip", "link", "set", "veth0", "up"], check=True)
            assert wait_until(lambda: "Re-checking after kernel event: link ifindex" in d.stderr()), d.stderr()
            assert wait_until(lambda: d.read("proc/irq/60/smp_affinity_list") != "2-7"), d.stderr()
            d.proc.send_signal(signal.SIGTERM)
            assert d.proc.wait(timeout=10) == 0
        finally:
            d.stop()
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_vf_link_errors_reach_the_log(tmp):
    """VF settings go over real rtnetlink to the PF netdev, found by ifindex; the kernel's answer is logged."""
    ns = f"sriovd-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        # The PF's netdev is a veth in the namespace: real rtnetlink, no VFs behind it (no ndo_set_vf_*).
        subprocess.run([*in_netns(ns), "ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"],
                       check=True)
        link = lambda: json.loads(subprocess.run([*in_netns(ns), "ip", "-j", "link", "show", "veth0"], check=True,
                                                 capture_output=True, text=True).stdout)[0]
        before = link()

        def prepare(root):
            # Renamed by udev or not, sriovd goes by ifindex.
            netdir = os.path.join(root, PF0, "net")
            name = os.listdir(netdir)[0]
            with open(os.path.join(netdir, name, "ifindex"), "w") as f:
                f.write(f"{before['ifindex']}\n")

        conf = "[daemon]\ndrift_check_sec = 1\n\n[pf 0000:41:00.0]\nvf_spoofchk = on\nvf_vlan = 100\n"
        d = Daemon(tmp, conf, env_extra={"SRIOVD_TEST_LIVE_NETLINK": "1"}, prefix=in_netns(ns),
                   prepare=prepare)
        try:
            d.wait_for("READY")
            # A couple of drift periods: the refusal is recorded once, not retried every period.
            assert wait_until(lambda: d.stderr().count("Cycle ") >= 3, timeout=15), d.stderr()
            err = d.stderr()
            failures = [line for line in err.splitlines() if "Failed vf-link 0000:41:00.0 VF" in line]
            assert len(failures) == 8, err
            assert "Operation not supported" in failures[0] and "the PF driver cannot set this on its VFs" in failures[0]
            assert "vlan 100/0, spoofchk on" in failures[0], failures[0]
            assert "refused VF link settings (EOPNOTSUPP)" in err, err
            d.proc.send_signal(signal.SIGTERM)
            assert d.proc.wait(timeout=10) == 0
        finally:
            d.stop()
        after = link()
        for key in ("address", "mtu", "flags", "operstate"):
            assert before[key] == after[key], (key, before[key], after[key])
        assert "vfinfo_list" not in after
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_coalescing_and_offloads_in_netns(tmp):
    """Class coalescing and offloads go over real ethtool netlink to the PF netdev (a veth here)."""
    ns = f"sriovd-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run([*in_netns(ns), "ip", "link", "add", "veth0", "numtxqueues", "4", "numrxqueues", "4",
                        "type", "veth", "peer", "name", "veth1"], check=True)
        ifindex = json.loads(subprocess.run([*in_netns(ns), "ip", "-j", "link", "show", "veth0"], check=True,
                                            capture_output=True, text=True).stdout)[0]["ifindex"]
        root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), root, symlinks=True)
        netdir = os.path.join(root, PF0, "net")
        with open(os.path.join(netdir, os.listdir(netdir)[0], "ifindex"), "w") as f:
            f.write(f"{ifindex}\n")
        os.mkdir(os.path.join(tmp, "tenant-classes.d"))
        with open(os.path.join(tmp, "tenant-classes.d", "bulk.ini"), "w") as f:
            f.write("[class]\nvnic = virtio\ncoalesce_rx_usecs = 64\noffload_gro = on\n")
        conf = os.path.join(tmp, "sriovd.conf")
        with open(conf, "w") as f:
            f.write("[cpus]\nkeep_irqs_off_rt = no\n\n[pf 0000:41:00.0]\nclass = bulk\n")

        def once():
            r = subprocess.run([*in_netns(ns), SRIOVD, "--root", root, "--config", conf, "--once",
                                "--json"], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, SRIOVD_TEST_LIVE_NETLINK="1"))
            doc = json.loads(r.stdout)
            mine = [a for a in doc["plan"]["actions"] if a["target"] == PF0_ADDR and
                    a["action"] in ("coalesce", "offloads")]
            notes = [n["text"] for n in doc["plan"]["notes"] if n["target"] == PF0_ADDR]
            return r, mine, notes

        # veth has GRO off and no coalescing at all: GRO is switched on, coalescing is reported
        # as unsupported (read first: EOPNOTSUPP) and never written.
        r, mine, notes = once()
        assert [a["action"] for a in mine] == ["offloads"], mine
        assert mine[0]["ifindex"] == ifindex and mine[0]["result"] == "done", mine
        assert mine[0]["before"] == "gro off" and mine[0]["after"] == "gro on", mine
        assert any("coalescing not supported by the driver (EOPNOTSUPP)" in n and "64/50 us" in n for n in notes), notes

        # The kernel kept it: a second run reads GRO on and has nothing to do for the PF.
        r, mine, notes = once()
        assert mine == [], mine
        assert any("EOPNOTSUPP" in n for n in notes), notes
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_channels_in_netns(tmp):
    """A class's RSS channels go over real ethtool netlink to the PF netdev (a 4-queue veth),
    before anything else of it, and a second run has nothing to do."""
    ns = f"sriovd-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run([*in_netns(ns), "ip", "link", "add", "veth0", "numtxqueues", "4", "numrxqueues", "4",
                        "type", "veth", "peer", "name", "veth1"], check=True)
        ifindex = json.loads(subprocess.run([*in_netns(ns), "ip", "-j", "link", "show", "veth0"], check=True,
                                            capture_output=True, text=True).stdout)[0]["ifindex"]
        root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), root, symlinks=True)
        netdir = os.path.join(root, PF0, "net")
        with open(os.path.join(netdir, os.listdir(netdir)[0], "ifindex"), "w") as f:
            f.write(f"{ifindex}\n")
        os.mkdir(os.path.join(tmp, "tenant-classes.d"))
        with open(os.path.join(tmp, "tenant-classes.d", "few.ini"), "w") as f:
            f.write("[class]\nvnic = virtio\nchannels_rx = 2\nchannels_tx = 1\n")
        conf = os.path.join(tmp, "sriovd.conf")
        with open(conf, "w") as f:
            f.write("[cpus]\nkeep_irqs_off_rt = no\n\n[pf 0000:41:00.0]\nclass = few\n")

        def once():
            r = subprocess.run([*in_netns(ns), SRIOVD, "--root", root, "--config", conf, "--once",
                                "--json"], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, SRIOVD_TEST_LIVE_NETLINK="1"))
            doc = json.loads(r.stdout)
            return r, doc, [a for a in doc["plan"]["actions"] if a["target"] == PF0_ADDR]

        def kernel_channels():
            out = subprocess.run([*in_netns(ns), "ethtool", "-l", "veth0"], capture_output=True, text=True).stdout
            cur = out.split("Current hardware settings:")[-1]
            return {k: int(v) for k, v in re.findall(r"^(RX|TX):\s*(\d+)", cur, re.M)}

        # tools/install-deps installs ethtool; without it this is not a test of the kernel's state.
        assert shutil.which("ethtool"), "ethtool (to read the veth's channels back) is not installed"
        assert kernel_channels() == {"RX": 4, "TX": 4}, kernel_channels()
        r, doc, mine = once()
        assert r.returncode == 0, r.stderr
        chan = [a for a in mine if a["action"] == "channels"]
        assert len(chan) == 1 and chan[0]["result"] == "done", mine
        assert chan[0]["ifindex"] == ifindex and chan[0]["before"] == "rx 4, tx 4" and \
            chan[0]["after"] == "rx 2, tx 1", chan
        # Nothing else of the PF's in the pass that changed its channels: its IRQs are the driver's
        # to request again, pinned on the cycle's next pass.
        assert mine.index(chan[0]) == 0, [a["action"] for a in mine]
        assert kernel_channels() == {"RX": 2, "TX": 1}, kernel_channels()

        r, doc, mine = once()
        assert r.returncode == 0 and not [a for a in mine if a["action"] == "channels"], mine

        # More than the veth has: an error note naming the maximum, nothing sent, the rest applied.
        with open(os.path.join(tmp, "tenant-classes.d", "few.ini"), "w") as f:
            f.write("[class]\nvnic = virtio\nchannels_rx = 8\n")
        r, doc, mine = once()
        notes = [n["text"] for n in doc["plan"]["notes"] if n["target"] == PF0_ADDR and n["level"] == "error"]
        assert not [a for a in mine if a["action"] == "channels"], mine
        assert any("wants 8 rx channels; veth0 has at most 4" in n or "has at most 4" in n for n in notes), notes
        assert kernel_channels() == {"RX": 2, "TX": 1}, kernel_channels()
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def test_transient_errors_retried_with_backoff(tmp):
    """EBUSY on an IRQ is retried soon and backing off, not only at the next drift check."""
    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 0\n", {"SRIOVD_TEST_FAIL_WRITE": "/proc/irq/60/=16"})
    try:
        d.wait_for("READY")
        fails = lambda: d.stderr().count("Failed irq-affinity 0000:41:00.3 IRQ 60")
        # Without a drift timer only the retry can try again: 200 ms, 400 ms, 800 ms ...
        assert wait_until(lambda: fails() >= 4, timeout=15), d.stderr()
        assert "Device or resource busy" in d.stderr() and "transient" in d.stderr()
        # The other IRQs were pinned at once and are not touched again.
        assert d.read("proc/irq/61/smp_affinity_list") != "0-31"
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=10) == 0
    finally:
        d.stop()


def netns_unavailable():
    """Why network namespaces cannot be made here (a package build's chroot), or None."""
    if os.geteuid() != 0:
        return "needs root for network namespaces (ip netns)"
    for tool, package in (("ip", "iproute2"), ("nsenter", "util-linux")):
        if not shutil.which(tool):
            return f"needs {package}'s {tool} for network namespaces"
    # What the tests do with one: make it, and enter it to put a veth pair there.
    ns = f"sriovd-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot make a network namespace: ip netns add: {r.stderr.strip()}"
    try:
        cmd = [*in_netns(ns), "ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return f"cannot use a network namespace: {' '.join(cmd)}: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return None


def test_vector_requested_later(tmp):
    """A vector in a VF's msi_irqs/ whose /proc/irq entry and thread come later, with no event
    (igbvf requests its IRQs when its netdev opens): the next drift check pins it, as new, not
    as drift."""
    hidden = os.path.join(tmp, "hidden")

    def seed(root):
        os.mkdir(hidden)
        shutil.move(os.path.join(root, "proc/irq/58"), os.path.join(hidden, "irq"))
        shutil.move(os.path.join(root, "proc/1018"), os.path.join(hidden, "thread"))

    d = Daemon(tmp, "[daemon]\ndrift_check_sec = 1\n", prepare=seed)
    try:
        ready = d.wait_for("READY")
        assert "81 IRQs" in ready.get("STATUS", ""), ready
        d.wait_for("STATUS")   # the first drift check: a refresh of the start's read
        shutil.move(os.path.join(hidden, "irq"), os.path.join(d.root, "proc/irq/58"))
        shutil.move(os.path.join(hidden, "thread"), os.path.join(d.root, "proc/1018"))
        assert d.read("proc/irq/58/smp_affinity_list") == "0-31"
        assert wait_until(lambda: d.read("proc/irq/58/smp_affinity_list") != "0-31", 5), d.stderr()[-3000:]
        log = d.stderr()
        assert "irq-affinity 0000:41:00.3 IRQ 58: 0-31 ->" in log, log[-3000:]
        assert "Drift repaired" not in log, log[-3000:]
    finally:
        d.stop()


# The ones that need a network namespace are their own meson test (daemon-netns): where it
# cannot be made they skip (77) as a whole, instead of passing without having run.
NETNS_TESTS = [test_link_up_rechecks, test_vf_link_errors_reach_the_log, test_coalescing_and_offloads_in_netns,
               test_channels_in_netns]
def test_softnet_metrics_and_alert(tmp):
    # /proc/net/softnet_stat per online CPU in the metrics file. Drops and time squeezes that grow
    # on RT CPU 2 each period raise the built-in rt-softnet-overload after its 3 periods, and it
    # clears 3 periods after they stop. Housekeeping CPU 0 drops too, but only RT CPUs are watched.
    prom = os.path.join(tmp, "sriovd.prom")
    d = Daemon(tmp, f"[daemon]\nmonitor_interval_sec = 1\nmetrics_file = {prom}\n\n[cpus]\nrt = 2-3\n\n"
                    "[match 15b3:101d]\nnum_vfs = 8\n")
    lines = [line.split() for line in d.read("proc/net/softnet_stat").splitlines()]
    stop = threading.Event()

    def text():
        try:
            with open(prom) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def grow():
        n = 0
        while not stop.wait(0.3):
            n += 1
            for cpu, add in ((0, 5), (2, 1)):
                lines[cpu][1] = "%08x" % (int(lines[cpu][1], 16) + add)
                lines[cpu][2] = "%08x" % (int(lines[cpu][2], 16) + add)
            d.write("proc/net/softnet_stat", "\n".join(" ".join(c) for c in lines) + "\n")

    grower = threading.Thread(target=grow)
    try:
        d.wait_for("READY")
        # The fixture's counts: 0x10000 + 0x100 N packets on CPU N, a squeeze on the odd CPUs.
        assert wait_until(lambda: 'sriovd_softnet_time_squeeze_rate{cpu="3"} 0' in text()), text()
        t = text()
        assert "# TYPE sriovd_softnet_processed_total counter" in t, t
        assert 'sriovd_softnet_processed_total{cpu="1"} 65792\n' in t, t
        assert 'sriovd_softnet_time_squeeze_total{cpu="1"} 1\n' in t, t
        assert 'sriovd_softnet_dropped_total{cpu="31"} 0\n' in t, t
        assert 'sriovd_rt_cpu_softnet_overload_rate{cpu="2"} 0\n' in t, t
        assert 'sriovd_rt_cpu_softnet_overload_rate{cpu="0"}' not in t, t
        assert 'sriovd_alerts_raised_total{alert="rt-softnet-overload"} 0' in t, t

        grower.start()
        assert wait_until(lambda: 'sriovd_alert_active{alert="rt-softnet-overload",cpu="2"} 1' in text(),
                          timeout=15), text()
        t = text()
        assert 'sriovd_alerts_raised_total{alert="rt-softnet-overload"} 1' in t, t
        assert 'alert="rt-softnet-overload",cpu="0"' not in t, t
        assert "Alert rt-softnet-overload raised: sriovd_rt_cpu_softnet_overload_rate" in d.stderr(), d.stderr()
        assert float(re.search(r'sriovd_softnet_dropped_rate\{cpu="0"\} (\S+)', t).group(1)) > 0, t
        stop.set()
        grower.join()
        assert wait_until(lambda: 'alert="rt-softnet-overload",cpu="2"} 1' not in text(), timeout=15), text()
    finally:
        stop.set()
        if grower.is_alive():
            grower.join()
        d.stop()


TESTS = [test_libvirt_that_never_answers, test_transient_errors_retried_with_backoff, test_cli,
         test_vf_users_block_count_change, test_lifecycle, test_vector_requested_later, test_bad_config_at_start,
         test_sigint_exits_cleanly, test_stop_keeps_tuning_restore_undoes, test_restore_on_stop,
         test_softnet_metrics_and_alert]


def main():
    tests = TESTS
    if len(sys.argv) > 2 and sys.argv[2] == "--netns":
        why = netns_unavailable()
        if why:
            print(f"SKIP: {why}")
            sys.exit(77)
        tests = NETNS_TESTS
    for t in tests:
        with tempfile.TemporaryDirectory(prefix="sriovd-daemon-") as tmp:
            print("==", t.__name__, flush=True)
            t(tmp)
    print(f"{len(tests)} passed, 0 failed")


if __name__ == "__main__":
    main()
