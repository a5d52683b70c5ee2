#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# mkinitramfs.py — a guest's initramfs for the QEMU test bed, written as a newc cpio by hand:
# busybox, the kernel modules the guest needs in dependency order (kmod's modprobe resolves it
# on the unpacked kernel tree), host binaries with every shared library ldd names (sriovd, ip,
# ethtool), and the files of one test (guest scripts, configuration, state).
import os
import re
import stat
import subprocess
import sys


class Cpio:
    """A newc archive built in memory; parent directories are added as needed."""

    def __init__(self):
        self.out = bytearray()
        self.ino = 1
        self.names = set()

    def _entry(self, name, mode, data=b"", nlink=1):
        name = name.lstrip("/")
        if name in self.names:
            return
        self.names.add(name)
        fields = [self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        self.ino += 1
        self.out += b"070701" + b"".join(b"%08x" % f for f in fields)
        self.out += name.encode() + b"\0"
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def mkdir(self, path):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            if parts[:i] != [""]:
                self._entry("/".join(parts[:i]), stat.S_IFDIR | 0o755, nlink=2)

    def file(self, path, data, mode=0o644):
        self.mkdir(os.path.dirname(path.strip("/")))
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path, target):
        self.mkdir(os.path.dirname(path.strip("/")))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def copy(self, src, dst=None, mode=None):
        with open(src, "rb") as f:
            data = f.read()
        self.file(dst or src, data, mode if mode is not None else (os.stat(src).st_mode & 0o777))

    def finish(self):
        self._entry("TRAILER!!!", 0, nlink=1)
        self.out += b"\0" * (-len(self.out) % 512)
        return bytes(self.out)


def shared_libraries(binary):
    """Every library ldd resolves for binary, with the path the loader will look for."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line) or re.match(r"\s*(/\S+) \(0x", line)
        if m:
            libs.append(m.group(m.lastindex))
    return libs


def add_binary(cpio, binary, dst):
    cpio.copy(binary, dst, 0o755)
    for lib in shared_libraries(binary):
        # The path ldd printed is where the loader looks; the content is the symlink's target.
        cpio.copy(os.path.realpath(lib), lib, 0o755)


def module_order(kroot, modules):
    """The .ko files (under kroot) that load modules, dependencies first, each once."""
    kver = os.listdir(os.path.join(kroot, "lib", "modules"))[0]
    order = []
    for mod in modules:
        out = subprocess.run(["modprobe", "-d", kroot, "-S", kver, "--show-depends", mod],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            words = line.split()
            if words[:1] == ["insmod"] and words[1] not in order:
                order.append(words[1])
    return kver, order


def build(out_path, cache, kernel, modules, files, binaries):
    """files: {guest path: bytes or host path}; binaries: {guest path: host path}."""
    cpio = Cpio()
    for d in ["proc", "sys", "dev", "tmp", "run", "etc", "root", "bin", "sbin", "usr/bin", "usr/sbin"]:
        cpio.mkdir(d)
    cpio.copy(os.path.join(cache, "busybox", "bin", "busybox"), "bin/busybox", 0o755)
    cpio.symlink("bin/sh", "busybox")

    kroot = os.path.join(cache, kernel)
    kver, order = module_order(kroot, modules)
    guest_mods = []
    for ko in order:
        rel = os.path.relpath(ko, kroot)
        cpio.copy(ko, rel, 0o644)
        guest_mods.append("/" + rel)
    cpio.file("etc/modules.order", ("\n".join(guest_mods) + "\n").encode())

    for dst, src in binaries.items():
        add_binary(cpio, src, dst)
    for dst, src in files.items():
        if isinstance(src, bytes):
            cpio.file(dst, src, 0o755 if dst.endswith(".sh") or dst == "/init" else 0o644)
        else:
            cpio.copy(src, dst)
    with open(out_path, "wb") as f:
        f.write(cpio.finish())
    return kver


if __name__ == "__main__":
    # A bare initramfs for poking at a guest by hand: mkinitramfs.py OUT CACHE KERNEL INIT
    build(sys.argv[1], sys.argv[2], sys.argv[3], ["igb", "igbvf", "e1000e", "vfio-pci"],
          {"/init": open(sys.argv[4], "rb").read()}, {})
