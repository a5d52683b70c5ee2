# SPDX-License-Identifier: LGPL-2.1-or-later
# sdnotify.py — start sriovd as systemd starts a Type=notify unit, and wait for its READY=1.
import os
import socket
import subprocess
import time


def start(argv, notify_path, env=None, timeout=60.0, **popen):
    """Starts argv with NOTIFY_SOCKET at notify_path and returns its Popen once it sent READY=1.

    env is the environment to add NOTIFY_SOCKET to (os.environ by default). JOURNAL_STREAM goes, so
    that sriovd logs plain lines to the stderr a test reads. A socket left at notify_path by an
    earlier start is replaced. The socket is closed once READY=1 came: nobody reads its STATUS=
    lines afterwards, and a full queue would block sriovd in sd_notify(). Raises RuntimeError
    when the process exits first or sends nothing within timeout seconds; the process is then
    killed. popen: more arguments for subprocess.Popen (stdout, stderr, preexec_fn ...).
    """
    if os.path.exists(notify_path):
        os.unlink(notify_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    env = dict(os.environ if env is None else env, NOTIFY_SOCKET=notify_path)
    env.pop("JOURNAL_STREAM", None)
    deadline = time.monotonic() + timeout
    try:
        proc = subprocess.Popen(argv, env=env, **popen)
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited with status {proc.returncode} before READY=1")
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"{argv[0]} sent no READY=1 within {timeout:.0f} s")
            sock.settimeout(min(left, 0.5))
            try:
                if "READY=1" in sock.recv(4096).decode(errors="replace"):
                    return proc
            except socket.timeout:
                pass
    finally:
        sock.close()
