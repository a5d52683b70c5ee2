#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-host-fixes.py — [rt] idle_states and cpufreq_governor on the untuned fixture: apply, drift, restore
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
RT = [2, 3, 4, 5, 6, 7, 18, 19, 20, 21, 22, 23]
CPU = "sys/devices/system/cpu/cpu%d"
KEYS_ON = "[rt]\nidle_states = limit\ncpufreq_governor = performance\n"


def conf_text(keys):
    return "[daemon]\ndrift_check_sec = 1\n\n[cpus]\nrt = 2-7,18-23\n\n" + keys


class Host:
    """A copy of the untuned fixture, a runtime directory and a config."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.root = os.path.join(tmp, "root")
        self.run_dir = os.path.join(tmp, "run")
        os.mkdir(self.run_dir)
        shutil.copytree(os.path.join(BUILD, "tests", "fixture-two-socket-untuned"), self.root, symlinks=True)
        self.conf = os.path.join(tmp, "sriovd.conf")
        self.env = dict(os.environ, RUNTIME_DIRECTORY=self.run_dir)
        self.env.pop("NOTIFY_SOCKET", None)

    def write_conf(self, keys):
        with open(self.conf, "w") as f:
            f.write(conf_text(keys))

    def path(self, rel):
        return os.path.join(self.root, rel)

    def read(self, rel):
        with open(self.path(rel)) as f:
            return f.read().strip()

    def write(self, rel, value):
        with open(self.path(rel), "w") as f:
            f.write(value)

    def idle(self, cpu, state=3):
        return self.read(CPU % cpu + "/cpuidle/state%d/disable" % state)

    def governor(self, cpu):
        return self.read(CPU % cpu + "/cpufreq/scaling_governor")

    def saved(self):
        p = os.path.join(self.run_dir, "saved-cpu")
        if not os.path.exists(p):
            return None
        with open(p) as f:
            return f.read()

    def cli(self, *args):
        return subprocess.run([SRIOVD, "--root", self.root, "--config", self.conf, *args], capture_output=True,
                              text=True, env=self.env, timeout=60)

    def check(self):
        """The results of the cpuidle and governor host checks."""
        r = self.cli("--check-host")
        assert r.returncode in (0, 1), r
        results = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) >= 3 and f[0] in ("cpuidle", "governor"):
                results[f[0]] = f[2]
        return results


def untouched(h):
    """The untuned fixture as generated: C6 (290 us) enabled, powersave, on every RT CPU."""
    return all(h.idle(c, 3) == "0" and h.idle(c, 2) == "0" and h.governor(c) == "powersave" for c in RT)


def fixed(h):
    """C6 disabled and performance on every RT CPU; C1E, at 2 us, is within the bound and stays."""
    return all(h.idle(c, 3) == "1" and h.idle(c, 2) == "0" and h.governor(c) == "performance" for c in RT)


def wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_default_reports_only(tmp):
    h = Host(tmp)
    h.write_conf("")
    assert h.check() == {"cpuidle": "fail", "governor": "fail"}
    r = h.cli("--dry-run")
    assert r.returncode == 0, r
    assert "cpu-idle" not in r.stdout and "cpu-governor" not in r.stdout, r.stdout
    r = h.cli("--once")
    assert r.returncode == 0, r
    assert untouched(h), "the keys are off by default: nothing is written"
    assert h.saved() in (None, ""), h.saved()


def test_once_check_restore(tmp):
    h = Host(tmp)
    h.write_conf(KEYS_ON)
    assert h.check() == {"cpuidle": "fail", "governor": "fail"}
    # The plan names each file; a dry run writes none of them.
    r = h.cli("--dry-run")
    assert r.returncode == 0, r
    assert "CPU 3 state 3" in r.stdout and "enabled -> disabled" in r.stdout, r.stdout
    assert "powersave -> performance" in r.stdout, r.stdout
    assert untouched(h)

    r = h.cli("--once")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert fixed(h), "C6 disabled, performance, on every RT CPU"
    # The housekeeping CPUs are not touched.
    assert h.idle(0) == "0" and h.governor(0) == "powersave" and h.governor(17) == "powersave"
    assert h.check() == {"cpuidle": "pass", "governor": "pass"}
    saved = h.saved().splitlines()
    assert len(saved) == 2 * len(RT), saved
    assert "3 idle 3 0" in saved and "3 governor powersave" in saved, saved
    # A second run changes nothing and keeps the originals.
    r = h.cli("--once")
    assert r.returncode == 0 and "cpu-idle" not in r.stderr, r.stderr
    assert len(h.saved().splitlines()) == 2 * len(RT)

    # --restore needs no configuration and puts every file back.
    h.write_conf("[deamon]\n")
    r = h.cli("--restore")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "and 24 CPU idle states and governors" in r.stdout, r.stdout
    assert untouched(h)
    assert h.saved() == ""
    h.write_conf(KEYS_ON)
    assert h.check() == {"cpuidle": "fail", "governor": "fail"}


def test_daemon_drift_reload_stop(tmp):
    h = Host(tmp)
    h.write_conf(KEYS_ON)
    notify = os.path.join(tmp, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify)
    sock.settimeout(0.2)
    log = open(os.path.join(tmp, "stderr"), "w+")
    env = dict(h.env, NOTIFY_SOCKET=notify)
    env.pop("JOURNAL_STREAM", None)
    proc = subprocess.Popen([SRIOVD, "--root", h.root, "--config", h.conf], env=env, stderr=log, stdout=log)

    def stderr():
        log.flush()
        log.seek(0)
        return log.read()

    def wait_ready(n):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                data = sock.recv(4096).decode()
            except socket.timeout:
                continue
            if "READY=1" in data.splitlines():
                n -= 1
                if n == 0:
                    return
        raise AssertionError("no READY=1: " + stderr())

    try:
        wait_ready(1)
        assert fixed(h), stderr()

        # Drift: C6 enabled again on CPU 3 and the governor changed on CPU 20 behind sriovd's back.
        h.write(CPU % 3 + "/cpuidle/state3/disable", "0")
        h.write(CPU % 20 + "/cpufreq/scaling_governor", "powersave")
        assert h.idle(3) == "0" and h.governor(20) == "powersave", "the fault did not take"
        assert wait_until(lambda: h.idle(3) == "1" and h.governor(20) == "performance"), stderr()
        assert wait_until(lambda: "Drift repaired: cpu-idle host CPU 3 state 3: enabled -> disabled" in stderr() and
                          "Drift repaired: cpu-governor host CPU 20: powersave -> performance" in stderr()), stderr()
        # The original stays what sriovd found first, not what the drift wrote.
        assert "20 governor powersave" in h.saved().splitlines()

        # A reload that turns the keys off puts the files back and forgets them.
        h.write_conf("")
        proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: untouched(h)), stderr()
        assert wait_until(lambda: h.saved() == ""), h.saved()

        # On again, then a stop: restore_on_stop = no leaves the host tuned, and the record stays.
        h.write_conf(KEYS_ON)
        proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: fixed(h)), stderr()
        assert wait_until(lambda: len((h.saved() or "").splitlines()) == 2 * len(RT))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert fixed(h)
        assert "24 CPU idle states and governors left as sriovd set them" in stderr(), stderr()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # restore_on_stop = yes puts them back at the stop.
    text = conf_text(KEYS_ON).replace("drift_check_sec = 1\n", "drift_check_sec = 1\nrestore_on_stop = yes\n")
    with open(h.conf, "w") as f:
        f.write(text)
    # A fresh socket, so that no READY=1 of the first daemon's reloads is taken for this one's.
    sock.close()
    os.unlink(notify)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify)
    sock.settimeout(0.2)
    proc = subprocess.Popen([SRIOVD, "--root", h.root, "--config", h.conf], env=env, stderr=log, stdout=log)
    try:
        wait_ready(1)
        assert fixed(h)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, stderr()
        assert untouched(h), stderr()
        assert h.saved() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


TESTS = [test_default_reports_only, test_once_check_restore, test_daemon_drift_reload_stop]


def main():
    for t in TESTS:
        with tempfile.TemporaryDirectory(prefix="sriovd-host-fixes-") as tmp:
            print("==", t.__name__, flush=True)
            t(tmp)
    print(f"{len(TESTS)} passed, 0 failed")


if __name__ == "__main__":
    main()
