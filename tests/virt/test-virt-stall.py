#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-virt-stall.py — the daemon against a libvirt that accepts connections and never answers.
# A proxy stands between sriovd and a real libvirtd in private mount and network namespaces. It
# passes the bytes through, or holds each new connection and answers nothing, or answers the first
# call and nothing after it. Three daemons meet three stalls:
#
#   at start               every attempt is held from the first byte;
#   after a good answer    libvirt answers the first call of the open, then nothing;
#   at a reconnect         connected through the proxy, the proxy cuts the connection and holds
#                          the attempts that follow.
#
# In each, D-Bus calls are answered at once all along, each attempt is given up after its bound and
# the next follows after the backoff, and SIGTERM ends the daemon at once with status 0. The
# proxy then passes bytes again, and the daemon connects.
#
#   test-virt-stall.py
#
# Skips (77) without root, libvirtd, dbus-daemon or unshare.

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "dbus"))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from livelib import Fail, check, log, run_inner, setup_namespace, start_libvirtd, stop  # noqa: E402
import minibus  # noqa: E402
import sdnotify  # noqa: E402

DEST = ("org.sriovd.Manager1", "/org/sriovd/Manager1", "org.sriovd.Manager1")
OPEN_TIMEOUT = 15       # the daemon's bound on one attempt, in s
BACKOFF_MIN = 1         # its first wait between attempts


class Proxy:
    """A unix socket in front of libvirtd's. The mode at accept time decides what a connection gets:
    "pass" (bytes both ways), "hold" (read and never answer) or "first" (answer the first call with
    an empty success, then read and never answer)."""

    def __init__(self, path, target):
        self.path, self.target = path, target
        self.mode = "pass"
        self.lock = threading.Lock()
        self.conns = []          # one dict per accepted connection
        self.live = []           # sockets to close at cut()
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def attempts(self, mode=None):
        with self.lock:
            return [c for c in self.conns if mode is None or c["mode"] == mode]

    def cut(self):
        """Closes every connection open now, as a libvirtd that went away would."""
        with self.lock:
            live, self.live = self.live, []
        for s in live:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                rec = {"t": time.monotonic(), "mode": self.mode, "calls": 0}
                self.conns.append(rec)
                self.live.append(c)
            threading.Thread(target=self._serve, args=(c, rec), daemon=True).start()

    def _serve(self, c, rec):
        if rec["mode"] == "pass":
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(self.target)
            with self.lock:
                self.live.append(up)
            threading.Thread(target=self._pump, args=(up, c), daemon=True).start()
            self._pump(c, up)
            return
        try:
            while True:
                msg = self._message(c)
                if msg is None:
                    return
                rec["calls"] += 1
                if rec["mode"] == "first" and rec["calls"] == 1:
                    # The header's program, version, procedure and serial back, as a REPLY with
                    # status OK and an empty list: AUTH_LIST's answer for "no authentication".
                    prog, vers, proc, _, serial, _ = struct.unpack(">IIiiIi", msg[:24])
                    body = struct.pack(">IIiiIi", prog, vers, proc, 1, serial, 0) + b"\0\0\0\0"
                    c.sendall(struct.pack(">I", len(body) + 4) + body)
        except OSError:
            return

    @staticmethod
    def _message(c):
        """One length-prefixed libvirt RPC message, without its length, or None at the end."""
        head = b""
        while len(head) < 4:
            b = c.recv(4 - len(head))
            if not b:
                return None
            head += b
        n = struct.unpack(">I", head)[0] - 4
        body = b""
        while len(body) < n:
            b = c.recv(n - len(body))
            if not b:
                return None
            body += b
        return body

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Daemon:
    def __init__(self, tmp, name, bus, uri):
        build = os.environ["SRIOVD_BUILD_DIR"]
        self.dir = f"{tmp}/{name}"
        os.makedirs(f"{self.dir}/run")
        shutil.copytree(f"{build}/tests/fixture-two-socket", f"{self.dir}/host", symlinks=True)
        with open(f"{self.dir}/sriovd.conf", "w") as f:
            f.write(f"[daemon]\nstate_dir = {self.dir}/state\ndrift_check_sec = 0\nlibvirt_uri = {uri}\n")
        env = dict(os.environ, RUNTIME_DIRECTORY=f"{self.dir}/run", DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        self.log = open(f"{self.dir}/stderr", "a+")
        t = time.monotonic()
        self.proc = sdnotify.start([f"{build}/sriovd", "--root", f"{self.dir}/host", "--config",
                                    f"{self.dir}/sriovd.conf"], f"{self.dir}/notify", env, timeout=60,
                                   stdout=self.log, stderr=self.log)
        self.ready_after = time.monotonic() - t
        self.bus = minibus.Connection(bus.address, timeout=10)

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def ping(self):
        """The slowest of a Ping and a ListTenants, in s: the loop must answer both at once."""
        t = time.monotonic()
        self.bus.call(*DEST, "Ping")
        self.bus.call(*DEST, "ListTenants")
        return time.monotonic() - t

    def answers_while(self, cond, timeout):
        """Calls over D-Bus every 0.5 s until cond() or timeout. Returns the slowest answer."""
        slowest, deadline = 0.0, time.monotonic() + timeout
        while time.monotonic() < deadline and not cond():
            slowest = max(slowest, self.ping())
            time.sleep(0.5)
        return slowest

    def sigterm(self):
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "none within 10 s"
        return rc, time.monotonic() - t

    def close(self):
        self.bus.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def stalled(d, proxy, mode, what):
    """The checks every stall makes: D-Bus answered while two attempts were held, the first given up
    after its bound, the second after the backoff; SIGTERM then ends the daemon."""
    n0 = len(proxy.attempts(mode))
    slowest = d.answers_while(lambda: len(proxy.attempts(mode)) >= n0 + 2, OPEN_TIMEOUT + 30)
    held = proxy.attempts(mode)[n0:]
    check(len(held) >= 2, f"{what}: an attempt held, given up, and the next made ({len(held)} attempts)")
    gap = held[1]["t"] - held[0]["t"]
    check(OPEN_TIMEOUT <= gap <= OPEN_TIMEOUT + 10,
          f"{what}: the next attempt {gap:.1f} s after the first: its bound ({OPEN_TIMEOUT} s) and a backoff")
    check(slowest < 2, f"{what}: D-Bus answered all along, the slowest in {slowest * 1000:.0f} ms")
    check(f"did not answer in {OPEN_TIMEOUT} s" in d.stderr(), f"{what}: the journal says the attempt got no answer")
    return held


def ends_on_sigterm(d, what):
    """SIGTERM ends the daemon with status 0 in under 3 s."""
    rc, took = d.sigterm()
    check(rc == 0 and took < 3, f"{what}: status {rc} in {took:.1f} s")


def connects(d, what):
    """D-Bus answered at once until the daemon said it connected."""
    said = lambda: "Connected to libvirt at" in d.stderr()  # noqa: E731
    check(d.answers_while(said, 40) < 2 and said(), what)


def inner():
    tmp = tempfile.mkdtemp(prefix="sriovd-virt-stall-")
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", tmp], check=True)
    setup_namespace(tmp)
    libvirtd = start_libvirtd(tmp)
    bus = minibus.PrivateBus(tmp, os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "conf", "org.sriovd.Manager1.conf"))
    proxy = Proxy(f"{tmp}/proxy-sock", f"{tmp}/sock/libvirt-sock")
    uri = f"qemu+unix:///system?socket={tmp}/proxy-sock"
    daemons = []
    try:
        log("== at start: every attempt held")
        proxy.mode = "hold"
        d = Daemon(tmp, "start", bus, uri)
        daemons.append(d)
        check(d.ready_after < 10, f"READY=1 in {d.ready_after:.1f} s, not waiting on libvirt")
        stalled(d, proxy, "hold", "at start")
        ends_on_sigterm(d, "at start: SIGTERM while an attempt is held")

        log("== after a good answer: the first call of each open answered, nothing after it")
        proxy.mode = "first"
        d = Daemon(tmp, "first", bus, uri)
        daemons.append(d)
        held = stalled(d, proxy, "first", "after a good answer")
        check(all(c["calls"] >= 2 for c in held[:2]),
              f"after a good answer: the answer was taken, the next call sent ({[c['calls'] for c in held]} calls)")
        proxy.mode = "pass"
        connects(d, "after a good answer: connected once libvirt answers")
        check("after retrying" in d.stderr(), "after a good answer: the journal says it retried")
        ends_on_sigterm(d, "after a good answer: SIGTERM when connected")

        log("== at a reconnect: connected, cut, then every attempt held")
        proxy.mode = "pass"
        d = Daemon(tmp, "reconnect", bus, uri)
        daemons.append(d)
        connects(d, "at a reconnect: connected through the proxy")
        proxy.mode = "hold"
        proxy.cut()
        check(d.answers_while(lambda: "libvirt connection lost" in d.stderr(), 20) < 2
              and "libvirt connection lost" in d.stderr(), "at a reconnect: the lost connection seen")
        stalled(d, proxy, "hold", "at a reconnect")
        ends_on_sigterm(d, "at a reconnect: SIGTERM while an attempt is held")
        log("PASS")
        return 0
    except (Fail, minibus.Error, minibus.Disconnected, RuntimeError) as e:
        log(f"FAIL: {e}")
        for d in daemons:
            log(f"--- {d.dir}/stderr, last lines:")
            sys.stdout.write("".join(d.stderr().splitlines(True)[-25:]))
        return 1
    finally:
        for d in daemons:
            d.close()
        proxy.cut()
        bus.stop()
        stop(libvirtd)


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--inner":
        sys.exit(inner())
    run_inner(__file__, [], ("libvirtd", "dbus-daemon", "unshare", "ip"), 300)


if __name__ == "__main__":
    main()
