# SPDX-License-Identifier: LGPL-2.1-or-later
"""A state directory whose saves can be made to fail, on any file system.

The state directory is a small tmpfs of its own, mounted in a mount namespace of the test's own,
and the fault fills it. A full disk is the common real fault. It fails on any file system, and
on files sriovd already holds open too. A full disk still takes a write into the last page a file
already has, so a journal line may still fit: tests that need a refusal make changes until one
is refused.

Call private_mounts() first, in the main thread before any other thread starts: the namespace is
the calling thread's, and the processes it starts inherit it. It changes nothing outside.
"""
import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
MNT_DETACH = 0x2
TMPFS_MAGIC = 0x01021994
FILLER = "filler"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]


class _Statfs(ctypes.Structure):
    """struct statfs: f_type comes first on every Linux architecture; room for the rest."""
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 120)]


_libc.statfs.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Statfs)]


def _why(what):
    e = ctypes.get_errno()
    return f"{what}: {os.strerror(e)}", e


def private_mounts():
    """Enter a mount namespace of this process's own, where nothing mounted is seen outside.
    None when done, else why it cannot be (no CAP_SYS_ADMIN, or / is no mount point)."""
    if _libc.unshare(CLONE_NEWNS) != 0:
        return _why("unshare(CLONE_NEWNS) (needs CAP_SYS_ADMIN)")[0]
    # Without this, a tmpfs mounted here would appear in the host's mount table too.
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        why, e = _why("cannot make / private in a mount namespace")
        return why + (": / is not a mount point, e.g. a build chroot" if e == errno.EINVAL else "")
    return None


def mount_state(path, size):
    """A tmpfs of size bytes on the directory path, which sriovd has not opened yet.
    Small pages only: a huge one would leave the journal megabytes of room in its last page."""
    opts = f"size={size},mode=0700,huge=never".encode()
    if _libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {path}")


def unmount_state(path, keep=False):
    """The tmpfs on path gone; with keep, its files are copied to the directory under it first,
    since the tmpfs goes with the mount namespace."""
    files = {}
    if keep:
        for name in os.listdir(path):
            if name == FILLER or not os.path.isfile(os.path.join(path, name)):
                continue
            with open(os.path.join(path, name), "rb") as f:
                files[name] = (os.fstat(f.fileno()).st_mode & 0o7777, f.read())
    _libc.umount2(path.encode(), MNT_DETACH)
    for name, (mode, data) in files.items():
        with open(os.path.join(path, name), "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)


def fill(path, size):
    """The disk full: a file takes what the tmpfs on path has left. Checked on the mount first,
    so that a real disk is never filled, and on a new file, which cannot take one byte."""
    st = os.statvfs(path)
    if st.f_blocks * st.f_frsize > size or _fs_type(path) != TMPFS_MAGIC:
        raise AssertionError(f"{path} is not the small tmpfs of its own it should be")
    filler = os.path.join(path, FILLER)
    written = 0
    chunk = bytes(1 << 16)
    with open(filler, "xb", buffering=0) as f:
        while True:
            try:
                written += f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
            if written > size:
                raise AssertionError(f"{filler}: {written} bytes written to a {size}-byte tmpfs")
    probe = os.path.join(path, "probe")
    try:
        with open(probe, "xb", buffering=0) as f:
            f.write(b"x")
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
    else:
        raise AssertionError(f"{path}: a new file took a byte after the disk was filled")
    finally:
        if os.path.exists(probe):
            os.unlink(probe)


def free(path):
    os.unlink(os.path.join(path, FILLER))


def _fs_type(path):
    """statfs()'s f_type, which os.statvfs() does not give."""
    buf = _Statfs()
    if _libc.statfs(path.encode(), ctypes.byref(buf)) != 0:
        raise OSError(ctypes.get_errno(), f"statfs {path}")
    return buf.f_type
