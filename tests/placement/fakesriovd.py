#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# fakesriovd.py — a stand-in for sriovd on a private bus, speaking the part of org.sriovd.Manager1
# the connector uses: GetManagedObjects, MaxTenants, Allocate with pf/domain_uuid/owner, Release,
# the per-PF VF figures and their signals. Its allocator is small: a sriov-required tenant takes a
# free VF of its PF, else one held by a sriov-preferred tenant (which drops to virtio-net), else
# NoCapacity; a sriov-preferred tenant takes a free VF or virtio-net; a virtio tenant never a VF.
# It lets the connector's tests run where the real sriovd lacks these members.
#
#   fakesriovd.py BUS_ADDRESS STATE_JSON PF=NUMA:VFS... (classes: latency-critical required,
#   throughput preferred, best-effort virtio)
import json
import os
import sys

from gi.repository import Gio, GLib

CLASSES = {"latency-critical": "sriov-required", "throughput": "sriov-preferred", "best-effort": "virtio"}
RANK = {"latency-critical": 100, "throughput": 50, "best-effort": 0}
XML = """<node>
 <interface name="org.freedesktop.DBus.ObjectManager">
  <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
  <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
  <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
 </interface>
 <interface name="org.sriovd.Manager1">
  <property name="MaxTenants" type="u" access="read"/>
  <method name="Allocate"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="s" direction="in"/>
   <arg type="a{sv}" direction="in"/><arg type="a{sv}" direction="out"/></method>
  <method name="Release"><arg type="s" direction="in"/></method>
  <signal name="AllocationChanged"><arg type="s"/></signal>
 </interface>
</node>"""
ROOT = "/org/sriovd/Manager1"


def enc(prefix, s):
    return prefix + "/" + "".join(c if c.isascii() and (c.isalpha() or (c.isdigit() and i > 0)) else "_%02x" % ord(c)
                                  for i, c in enumerate(s))


class Fake:
    def __init__(self, conn, state_path, pfs):
        self.conn, self.state_path = conn, state_path
        self.pfs = pfs            # address -> {"numa": n, "vfs": n}
        self.tenants = {}         # id -> {"class", "pf_pin", "owner", "vf_pf" or None, "seq"}
        self.seq = 0
        if os.path.exists(state_path):
            with open(state_path) as f:
                self.tenants = json.load(f)
            self.seq = max([t["seq"] for t in self.tenants.values()] + [0])

    def save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.tenants, f)
        os.rename(tmp, self.state_path)

    def held(self, pf):
        return [tid for tid, t in self.tenants.items() if t["vf_pf"] == pf]

    def device_props(self, pf):
        held = self.held(pf)
        usable = self.pfs[pf]["vfs"]
        pre = sum(1 for tid in held if CLASSES[self.tenants[tid]["class"]] == "sriov-preferred")
        free = usable - len(held)
        avail = {}
        for c, kind in CLASSES.items():
            avail[c] = free + pre if kind == "sriov-required" else (free if kind == "sriov-preferred" else 0)
        alloc = {}
        for tid in held:
            c = self.tenants[tid]["class"]
            alloc[c] = alloc.get(c, 0) + 1
        return {"Address": GLib.Variant("s", pf), "NumaNode": GLib.Variant("i", self.pfs[pf]["numa"]),
                "VfUsable": GLib.Variant("u", usable), "VfAllocated": GLib.Variant("u", len(held)),
                "VfFree": GLib.Variant("u", free), "VfPreemptible": GLib.Variant("u", pre),
                "ClassAllocated": GLib.Variant("a{su}", alloc), "ClassAvailable": GLib.Variant("a{su}", avail)}

    def tenant_props(self, tid):
        t = self.tenants[tid]
        kind = "vf" if t["vf_pf"] else ("none" if CLASSES[t["class"]] == "sriov-required" else "virtio")
        return {"Id": GLib.Variant("s", tid), "Class": GLib.Variant("s", t["class"]),
                "Kind": GLib.Variant("s", kind), "State": GLib.Variant("s", "allocated" if kind != "none" else "waiting"),
                "Pf": GLib.Variant("s", t["vf_pf"] or ""), "PinPf": GLib.Variant("s", t["pf_pin"]),
                "DomainUuid": GLib.Variant("s", t.get("domain_uuid", "")), "Owner": GLib.Variant("s", t["owner"])}

    def record(self, tid):
        p = self.tenant_props(tid)
        rec = {"tenant": p["Id"], "class": p["Class"], "kind": p["Kind"], "state": p["State"]}
        if self.tenants[tid]["vf_pf"]:
            rec["pf"] = p["Pf"]
            rec["address"] = GLib.Variant("s", self.tenants[tid]["vf_pf"] + "/vf")
        return rec

    def emit(self, path, iface, member, sig, args):
        self.conn.emit_signal(None, path, iface, member, GLib.Variant(sig, args))

    def changed_pfs(self, before):
        for pf in self.pfs:
            now = self.device_props(pf)
            if before[pf] != {k: v.unpack() for k, v in now.items()}:
                self.emit(enc(ROOT + "/pf", pf), "org.freedesktop.DBus.Properties", "PropertiesChanged",
                          "(sa{sv}as)", ("org.sriovd.Device1", now, []))

    def snapshot(self):
        return {pf: {k: v.unpack() for k, v in self.device_props(pf).items()} for pf in self.pfs}

    def allocate(self, tid, klass, opts):
        if klass not in CLASSES:
            raise ValueError("org.sriovd.Error.UnknownClass", f"no class {klass}")
        pf = opts.get("pf", "")
        if pf not in self.pfs:
            raise ValueError("org.sriovd.Error.UnknownDevice", f"no managed PF {pf}")
        before = self.snapshot()
        kind = CLASSES[klass]
        old = self.tenants.get(tid)
        if old and old["class"] == klass:
            return self.record(tid)
        vf_pf = None
        victim = None
        free = self.pfs[pf]["vfs"] - len([t for t in self.held(pf) if t != tid])
        if kind == "sriov-required":
            if free > 0:
                vf_pf = pf
            else:
                pre = [t for t in self.held(pf) if CLASSES[self.tenants[t]["class"]] == "sriov-preferred"]
                if not pre:
                    raise ValueError("org.sriovd.Error.NoCapacity", f"no VF free on PF {pf}")
                victim = max(pre, key=lambda t: self.tenants[t]["seq"])
                vf_pf = pf
        elif kind == "sriov-preferred" and free > 0:
            vf_pf = pf
        self.seq += 1
        if victim:
            self.tenants[victim]["vf_pf"] = None
        self.tenants[tid] = {"class": klass, "pf_pin": pf, "owner": opts.get("owner", ""),
                             "domain_uuid": opts.get("domain_uuid", ""), "vf_pf": vf_pf, "seq": self.seq}
        self.save()
        path = enc(ROOT + "/tenant", tid)
        if old:
            self.emit(path, "org.freedesktop.DBus.Properties", "PropertiesChanged", "(sa{sv}as)",
                      ("org.sriovd.Tenant1", self.tenant_props(tid), []))
        else:
            self.emit(ROOT, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "(oa{sa{sv}})",
                      (path, {"org.sriovd.Tenant1": self.tenant_props(tid)}))
        self.changed_pfs(before)
        self.emit(ROOT, "org.sriovd.Manager1", "AllocationChanged", "(s)", (tid,))
        return self.record(tid)

    def release(self, tid):
        if tid not in self.tenants:
            raise ValueError("org.sriovd.Error.UnknownTenant", f"no tenant {tid}")
        before = self.snapshot()
        del self.tenants[tid]
        self.save()
        self.emit(ROOT, "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", "(oas)",
                  (enc(ROOT + "/tenant", tid), ["org.sriovd.Tenant1"]))
        self.changed_pfs(before)
        self.emit(ROOT, "org.sriovd.Manager1", "AllocationChanged", "(s)", (tid,))

    def method(self, conn, sender, path, iface, member, params, inv):
        try:
            if member == "GetManagedObjects":
                objs = {enc(ROOT + "/pf", pf): {"org.sriovd.Device1": self.device_props(pf)} for pf in self.pfs}
                for tid in self.tenants:
                    objs[enc(ROOT + "/tenant", tid)] = {"org.sriovd.Tenant1": self.tenant_props(tid)}
                inv.return_value(GLib.Variant("(a{oa{sa{sv}}})", (objs,)))
            elif member == "Allocate":
                tid, klass, _domain, opts = params.unpack()
                inv.return_value(GLib.Variant("(a{sv})", (self.allocate(tid, klass, opts),)))
            elif member == "Release":
                self.release(params.unpack()[0])
                inv.return_value(None)
        except ValueError as e:
            inv.return_dbus_error(e.args[0], e.args[1])

    def prop(self, conn, sender, path, iface, name):
        return GLib.Variant("u", 64)


def main():
    address, state = sys.argv[1], sys.argv[2]
    pfs = {}
    for a in sys.argv[3:]:
        pf, rest = a.split("=")
        numa, vfs = rest.split(":")
        pfs[pf] = {"numa": int(numa), "vfs": int(vfs)}
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    fake = Fake(conn, state, pfs)
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    for iface in info.interfaces:
        conn.register_object(ROOT, iface, fake.method, fake.prop, None)
    loop = GLib.MainLoop()

    def acquired(c, name):
        print("ready", flush=True)

    Gio.bus_own_name_on_connection(conn, "org.sriovd.Manager1", Gio.BusNameOwnerFlags.NONE, acquired,
                                   lambda c, n: loop.quit())
    loop.run()


if __name__ == "__main__":
    main()
