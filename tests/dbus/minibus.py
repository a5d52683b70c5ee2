# SPDX-License-Identifier: LGPL-2.1-or-later
# minibus.py — what the D-Bus tests share: a private system-like dbus-daemon with the shipped
# policy, and a minimal pure-Python D-Bus client (no python3-dbus on the test machines).
#
# The client speaks the wire protocol itself (little-endian, AUTH EXTERNAL, Hello) and makes
# synchronous method calls: one connection per thread. A call returns the reply's values and
# the reply's header serial (the sender's own serial: dbus-daemon forwards it unchanged, so the
# replies of one sriovd instance are totally ordered by it), or raises Error with the D-Bus
# error name, or Disconnected. Signals that arrive meanwhile (after an AddMatch) are kept in
# Connection.signals, in order.
import os
import socket
import struct
import subprocess

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"""


class PrivateBus:
    """A dbus-daemon of type system on a socket in tmp, with policy (the shipped .conf) included."""

    def __init__(self, tmp, policy):
        self.sock = os.path.join(tmp, "bus.sock")
        self.address = "unix:path=" + self.sock
        self.conf = os.path.join(tmp, "bus.conf")
        with open(self.conf, "w") as f:
            f.write(BUS_CONF.format(sock=self.sock, policy=policy))
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.proc = subprocess.Popen(["dbus-daemon", "--config-file=" + self.conf, "--nofork", "--print-address"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if not self.proc.stdout.readline().startswith("unix:"):
            raise RuntimeError("dbus-daemon did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Error(Exception):
    def __init__(self, name, message, serial=None):
        super().__init__(f"{name}: {message}")
        self.name, self.message, self.serial = name, message, serial


class Disconnected(Exception):
    pass


# ---- marshalling (little-endian) ----

_FIXED = {"y": ("B", 1), "b": ("I", 4), "n": ("h", 2), "q": ("H", 2), "i": ("i", 4), "u": ("I", 4),
          "x": ("q", 8), "t": ("Q", 8), "d": ("d", 8), "h": ("I", 4)}


def _split(sig):
    """Complete types of a signature."""
    out, i = [], 0
    while i < len(sig):
        j = _type_end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _type_end(sig, i):
    c = sig[i]
    if c == "a":
        return _type_end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        depth, j = 0, i
        while True:
            if sig[j] in "({":
                depth += 1
            elif sig[j] in ")}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return i + 1


def _align(t):
    c = t[0]
    if c in _FIXED:
        return _FIXED[c][1]
    return {"s": 4, "o": 4, "g": 1, "a": 4, "(": 8, "{": 8, "v": 1}[c]


class _Writer:
    def __init__(self):
        self.buf = bytearray()

    def pad(self, n):
        while len(self.buf) % n:
            self.buf.append(0)

    def put(self, t, v):
        c = t[0]
        if c in _FIXED:
            fmt, n = _FIXED[c]
            self.pad(n)
            self.buf += struct.pack("<" + fmt, int(v) if c != "d" else v)
        elif c in "so":
            b = v.encode()
            self.pad(4)
            self.buf += struct.pack("<I", len(b)) + b + b"\0"
        elif c == "g":
            b = v.encode()
            self.buf += struct.pack("<B", len(b)) + b + b"\0"
        elif c == "v":
            sig, val = v
            self.put("g", sig)
            self.put(sig, val)
        elif c == "a":
            elem = t[1:]
            self.pad(4)
            at = len(self.buf)
            self.buf += b"\0\0\0\0"
            self.pad(_align(elem))
            start = len(self.buf)
            items = v.items() if elem[0] == "{" else v
            for item in items:
                self.put(elem, item)
            struct.pack_into("<I", self.buf, at, len(self.buf) - start)
        elif c in "({":
            self.pad(8)
            for sub, val in zip(_split(t[1:-1]), v):
                self.put(sub, val)
        else:
            raise ValueError("cannot marshal type " + t)


class _Reader:
    def __init__(self, buf, pos=0):
        self.buf, self.pos = buf, pos

    def pad(self, n):
        self.pos += (-self.pos) % n

    def get(self, t):
        c = t[0]
        if c in _FIXED:
            fmt, n = _FIXED[c]
            self.pad(n)
            (v,) = struct.unpack_from("<" + fmt, self.buf, self.pos)
            self.pos += n
            return bool(v) if c == "b" else v
        if c in "so":
            self.pad(4)
            (n,) = struct.unpack_from("<I", self.buf, self.pos)
            s = self.buf[self.pos + 4:self.pos + 4 + n].decode()
            self.pos += 4 + n + 1
            return s
        if c == "g":
            n = self.buf[self.pos]
            s = self.buf[self.pos + 1:self.pos + 1 + n].decode()
            self.pos += 1 + n + 1
            return s
        if c == "v":
            sig = self.get("g")
            return self.get(sig)
        if c == "a":
            elem = t[1:]
            self.pad(4)
            (n,) = struct.unpack_from("<I", self.buf, self.pos)
            self.pos += 4
            self.pad(_align(elem))
            end = self.pos + n
            out = []
            while self.pos < end:
                out.append(self.get(elem))
            return dict(out) if elem[0] == "{" else out
        if c in "({":
            self.pad(8)
            return tuple(self.get(sub) for sub in _split(t[1:-1]))
        raise ValueError("cannot unmarshal type " + t)


METHOD_CALL, METHOD_RETURN, ERROR, SIGNAL = 1, 2, 3, 4
_FIELDS = {1: "o", 2: "s", 3: "s", 4: "s", 5: "u", 6: "s", 7: "s", 8: "g", 9: "u"}


class Connection:
    """One client connection to a bus; call() is synchronous and not thread-safe (one per thread)."""

    def __init__(self, address, timeout=30.0):
        assert address.startswith("unix:path="), address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(address[len("unix:path="):])
        self.rbuf = bytearray()
        self.serial = 0
        self.signals = []   # (member, path, values) of the signals received while waiting for replies
        uid = str(os.geteuid()).encode().hex()
        self.sock.sendall(b"\0AUTH EXTERNAL " + uid.encode() + b"\r\n")
        line = self._line()
        if not line.startswith(b"OK "):
            raise Disconnected("authentication refused: %r" % line)
        self.sock.sendall(b"BEGIN\r\n")
        self.unique_name = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                     "Hello")[0][0]

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.rbuf:
            self._fill()
        i = self.rbuf.index(b"\r\n")
        line = bytes(self.rbuf[:i])
        del self.rbuf[:i + 2]
        return line

    def _fill(self):
        try:
            data = self.sock.recv(65536)
        except OSError as e:
            raise Disconnected(str(e))
        if not data:
            raise Disconnected("the bus closed the connection")
        self.rbuf += data

    def _message(self):
        while len(self.rbuf) < 16:
            self._fill()
        if self.rbuf[0:1] != b"l":
            raise Disconnected("big-endian message from the bus")
        mtype, flags, _, body_len, serial, fields_len = struct.unpack_from("<BBBIII", self.rbuf, 1)
        header_len = 16 + fields_len
        header_len += (-header_len) % 8
        total = header_len + body_len
        while len(self.rbuf) < total:
            self._fill()
        msg = bytes(self.rbuf[:total])
        del self.rbuf[:total]
        r = _Reader(msg, 12)
        fields = {}
        for code, value in r.get("a(yv)"):
            fields[code] = value
        sig = fields.get(8, "")
        body = _Reader(msg, header_len)
        values = tuple(body.get(t) for t in _split(sig))
        return mtype, serial, fields, values

    def call(self, dest, path, iface, member, sig="", *args):
        """(values, reply serial); raises Error or Disconnected."""
        self.serial += 1
        serial = self.serial
        body = _Writer()
        for t, v in zip(_split(sig), args):
            body.put(t, v)
        fields = [(1, ("o", path)), (3, ("s", member)), (6, ("s", dest))]
        if iface:
            fields.append((2, ("s", iface)))
        if sig:
            fields.append((8, ("g", sig)))
        h = _Writer()
        h.buf += struct.pack("<cBBBII", b"l", METHOD_CALL, 0, 1, len(body.buf), serial)
        h.put("a(yv)", fields)
        h.pad(8)
        try:
            self.sock.sendall(bytes(h.buf) + bytes(body.buf))
        except OSError as e:
            raise Disconnected(str(e))
        while True:
            mtype, rserial, f, values = self._message()
            if mtype == SIGNAL:
                # In the order the bus delivered them, before this call's reply or after.
                self.signals.append((f.get(3), f.get(1), values))
                continue
            if mtype not in (METHOD_RETURN, ERROR) or f.get(5) != serial:
                continue   # anything else
            if mtype == ERROR:
                raise Error(f.get(4, "?"), values[0] if values and isinstance(values[0], str) else "", rserial)
            return values, rserial
