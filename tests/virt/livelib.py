# SPDX-License-Identifier: LGPL-2.1-or-later
# livelib.py — what the tests against a real libvirtd share: a private mount and network namespace
# with libvirt's directories of its own, libvirtd in it, and small checks and waits.
import os
import shutil
import subprocess
import sys
import time


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def log(msg):
    print(msg, flush=True)


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    log(f"  ok: {what}")


def wait_log(path, text, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.2)
    with open(path, errors="replace") as f:
        sys.stdout.write(f.read()[-3000:])
    return False


def start_libvirtd(tmp):
    conf = f"{tmp}/libvirtd.conf"
    log_f = open(f"{tmp}/libvirtd.log", "ab")
    p = subprocess.Popen(["libvirtd", "-f", conf, "-p", f"{tmp}/libvirtd.pid"], stdout=log_f, stderr=log_f,
                         start_new_session=True)
    sock = f"{tmp}/sock/libvirt-sock"
    deadline = time.monotonic() + 90
    while not os.path.exists(sock):
        if p.poll() is not None or time.monotonic() > deadline:
            raise Fail("libvirtd did not come up; see libvirtd.log")
        time.sleep(0.1)
    return p


def stop(p):
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def setup_namespace(tmp):
    """Private copies of libvirt's directories, passwd/group with the user libvirt 9.0 looks up, lo up."""
    for d in ("etc", "run", "lib", "cache", "log", "sock"):
        os.makedirs(f"{tmp}/{d}", exist_ok=True)
    if os.path.isdir("/etc/libvirt"):
        shutil.copytree("/etc/libvirt", f"{tmp}/etc", dirs_exist_ok=True)
    for src, dst in (("etc", "/etc/libvirt"), ("run", "/run/libvirt"), ("lib", "/var/lib/libvirt"),
                     ("cache", "/var/cache/libvirt"), ("log", "/var/log/libvirt")):
        os.makedirs(dst, exist_ok=True)
        subprocess.run(["mount", "--bind", f"{tmp}/{src}", dst], check=True)
    for f, extra in (("passwd", "libvirt-qemu:x:64055:64055::/var/lib/libvirt:/usr/sbin/nologin\n"),
                     ("group", "libvirt-qemu:x:64055:\nkvm:x:64056:\n")):
        with open(f"/etc/{f}") as i:
            text = i.read()
        with open(f"{tmp}/{f}", "w") as o:
            o.write(text)
            for line in extra.splitlines():
                if not any(x.split(":")[0] == line.split(":")[0] for x in text.splitlines()):
                    o.write(line + "\n")
        subprocess.run(["mount", "--bind", f"{tmp}/{f}", f"/etc/{f}"], check=True)
    with open(f"{tmp}/libvirtd.conf", "w") as f:
        f.write(f'unix_sock_dir = "{tmp}/sock"\nauth_unix_rw = "none"\nauth_unix_ro = "none"\n')
    with open("/etc/libvirt/qemu.conf", "w") as f:
        f.write('user = "root"\ngroup = "root"\nstdio_handler = "file"\ncgroup_controllers = [ ]\n'
                'security_driver = "none"\nnamespaces = [ ]\ndynamic_ownership = 0\n')
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def run_inner(script, args, tools, timeout):
    """Runs script --inner args... in new private mount and network namespaces, and exits with its
    status. Skips (77) without root, one of tools, or namespaces."""
    if os.geteuid() != 0:
        skip("needs root")
    for tool in tools:
        if not shutil.which(tool):
            skip(f"{tool} not installed (tools/install-deps)")
    # A package build's chroot, whose / is no mount point, cannot make / private (EINVAL).
    probe = subprocess.run(["unshare", "-m", "-n", "--propagation", "private", "true"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        skip(f"cannot make private mount and network namespaces: {probe.stderr.strip()}")
    r = subprocess.run(["unshare", "-m", "-n", "--propagation", "private", sys.executable,
                        os.path.abspath(script), "--inner", *args], timeout=timeout)
    sys.exit(r.returncode)
