#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-daemon.py — the real sriovd binary on a fixture host: READY/STATUS/WATCHDOG, SIGHUP, SIGTERM
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRIOVD = sys.argv[1]
BUILD = os.environ["SRIOVD_BUILD_DIR"]
PF0 = "sys/bus/pci/devices/0000:41:00.0"


class Daemon:
    def __init__(self, tmp, conf, env_extra=None):
        self.tmp = tmp
        self.root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket"), self.root, symlinks=True)
        self.conf = os.path.join(tmp, "sriovd.conf")
        self.write_conf(conf)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(os.path.join(tmp, "notify"))
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, "notify"))
        env.pop("JOURNAL_STREAM", None)
        env.update(env_extra or {})
        self.log = open(os.path.join(tmp, "stderr"), "w+")
        self.proc = subprocess.Popen([SRIOVD, "--root", self.root, "--config", self.conf],
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
        assert "1 actions, 0 failed, 0 drift" in status, status
        assert d.read("proc/sys/net/core/rtnet_prio") == "50"

        # sd-event pings the watchdog by itself when WATCHDOG_USEC is set.
        d.wait_for("WATCHDOG", timeout=3)

        # Drift: someone changes the VF count; the timer puts it back.
        d.write(f"{PF0}/sriov_numvfs", "3")
        assert wait_until(lambda: d.read(f"{PF0}/sriov_numvfs") == "8"), "drift not repaired"

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


def main():
    tests = [test_lifecycle, test_bad_config_at_start, test_sigint_exits_cleanly]
    for t in tests:
        with tempfile.TemporaryDirectory(prefix="sriovd-daemon-") as tmp:
            print("==", t.__name__, flush=True)
            t(tmp)
    print(f"{len(tests)} passed, 0 failed")


if __name__ == "__main__":
    main()
