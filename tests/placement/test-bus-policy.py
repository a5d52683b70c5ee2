#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-bus-policy.py — the bus, not sriovd, refuses sriovd-placement's user everything but reads,
# Allocate and Release. A private dbus-daemon loads the shipped policies of sriovd and of the
# connector, with the connector's user replaced by nobody. Each call is made by this script, run
# again as a client under setpriv.
# A refusal by the bus is org.freedesktop.DBus.Error.AccessDenied. A call the bus lets through
# reaches sriovd, which answers it, or refuses nobody with org.sriovd.Error.NotPermitted. The same
# calls from another unprivileged user (daemon) reach sriovd: so the refusals come from the
# connector's policy. Skips (77) without root, dbus-daemon or setpriv.
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.abspath(sys.argv[1])
SRIOVD = sys.argv[2]
LOGCTL = ("/org/freedesktop/LogControl1", "org.freedesktop.LogControl1")
# A client is a copy of this file in the test's own directory, run as another user: the source
# tree may be out of that user's reach (/root), so a client imports nothing from it.
CLIENT = len(sys.argv) > 5 and sys.argv[3] == "--client"
if not CLIENT:
    for d in ("tests/lib", "tests/dbus", "src/placement"):
        sys.path.insert(0, os.path.join(SOURCE, d))
    import placementsrv

    why = placementsrv.why_not(("dbus-daemon", "setpriv"), ("gi.repository.Gio",))
    if not why and os.geteuid() != 0:
        why = "needs root: sriovd owns its name as root, and the clients run as nobody and daemon"
    if why:
        print(f"SKIP: {why}")
        sys.exit(77)
    import sriovdhost

DENIED = "org.freedesktop.DBus.Error.AccessDenied"
NOT_PERMITTED = "org.sriovd.Error.NotPermitted"
DEST, PATH = "org.sriovd.Manager1", "/org/sriovd/Manager1"
M, PROPS = "org.sriovd.Manager1", "org.freedesktop.DBus.Properties"

# (what, object path, interface, member, signature and arguments, what nobody gets with the
# connector's policy: None for a reply)
CALLS = [
    ("a property read", PATH, PROPS, "Get", ("(ss)", (M, "Version")), None),
    ("all properties", PATH, PROPS, "GetAll", ("(s)", (M,)), None),
    ("the objects", PATH, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", None, None),
    ("Allocate", PATH, M, "Allocate", ("(sssa{sv})", ("t1", "best-effort", "", {})), NOT_PERMITTED),
    ("Release", PATH, M, "Release", ("(s)", ("t1",)), NOT_PERMITTED),
    ("SetCoalesce", PATH, M, "SetCoalesce", ("(suu)", ("t1", 1, 1)), DENIED),
    ("Reload", PATH, M, "Reload", None, DENIED),
    ("Verify", PATH, M, "Verify", None, DENIED),
    ("ForceNumVfs", PATH, M, "ForceNumVfs", ("(s)", ("0000:41:00.0",)), DENIED),
    ("setting the log level", LOGCTL[0], PROPS, "Set",
     ("(ssv)", (LOGCTL[1], "LogLevel", ("s", "emerg"))), DENIED),
    ("a method sriovd may add later", PATH, M, "NoSuchMethodYet", None, DENIED),
]


def client(address, index):
    """Makes call number index on the bus at address; prints the D-Bus error name, or "reply"."""
    from gi.repository import Gio, GLib
    _, path, iface, member, args, _ = CALLS[index]
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    if args:
        sig, values = args
        if member == "Set":
            values = (values[0], values[1], GLib.Variant(*values[2]))
        args = GLib.Variant(sig, values)
    try:
        conn.call_sync(DEST, path, iface, member, args, None, Gio.DBusCallFlags.NONE, 20000, None)
        print("reply")
    except GLib.Error as e:
        print(Gio.DBusError.get_remote_error(e) or e.message)


def call(tmp, address, user, index):
    """The D-Bus error name of call number index made as user, or None when it got a reply."""
    uid = pwd.getpwnam(user).pw_uid
    r = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable,
                        os.path.join(tmp, "client.py"), SOURCE, SRIOVD, "--client", address, str(index)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout.strip()
    return None if out == "reply" else out


def main():
    tmp = tempfile.mkdtemp(prefix="sriovd-bus-policy-")
    os.chmod(tmp, 0o755)    # the unprivileged clients reach the bus socket and their script
    shutil.copy(os.path.abspath(__file__), os.path.join(tmp, "client.py"))
    os.chmod(os.path.join(tmp, "client.py"), 0o644)
    connector = open(os.path.join(SOURCE, "src", "placement", "sriovd-placement.dbus.conf")).read()
    assert 'user="_sriovd-placement"' in connector
    with open(os.path.join(tmp, "connector.conf"), "w") as f:
        f.write(connector.replace('user="_sriovd-placement"', 'user="nobody"'))
    policy = (f'<busconfig><include>{SOURCE}/conf/org.sriovd.Manager1.conf</include>'
              f'<include>{tmp}/connector.conf</include></busconfig>\n')
    host = None
    failed = 0
    try:
        host = sriovdhost.Host(tmp, SOURCE, SRIOVD, policy_text=policy)
        for i, (what, _, _, _, _, want) in enumerate(CALLS):
            got = call(tmp, host.bus.address, "nobody", i)
            other = call(tmp, host.bus.address, "daemon", i)
            ok = got == want and (want != DENIED or other != DENIED)
            print(f"{'ok' if ok else 'FAIL'} {what}: the connector's user gets {got or 'a reply'}"
                  f" (wanted {want or 'a reply'}); another user gets {other or 'a reply'}")
            failed += not ok
    finally:
        if host:
            host.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if CLIENT:
        sys.exit(client(sys.argv[4], int(sys.argv[5])))
    sys.exit(main())
