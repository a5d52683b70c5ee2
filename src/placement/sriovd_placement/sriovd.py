# SPDX-License-Identifier: LGPL-2.1-or-later
# sriovd.py — sriovd over D-Bus: one snapshot of PFs and tenants, the tenant calls, the signals.
from gi.repository import Gio, GLib

NAME = "org.sriovd.Manager1"
PATH = "/org/sriovd/Manager1"
MANAGER = "org.sriovd.Manager1"
DEVICE = "org.sriovd.Device1"
TENANT = "org.sriovd.Tenant1"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
# Allocate waits for the decision to be saved and the VF to be attached: seconds, not minutes.
CALL_TIMEOUT_MS = 120000
VNIC_KINDS = ("sriov-required", "sriov-preferred", "virtio")


class Unavailable(Exception):
    """sriovd is not on the bus, or did not answer."""


class Refused(Exception):
    """sriovd answered a tenant call with an error; name is the D-Bus error name."""

    def __init__(self, name, message):
        super().__init__(f"{name}: {message}")
        self.name = name


def connect(address):
    """The bus connection: the system bus, or the bus at address (tests run a private one)."""
    if not address:
        return Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
    flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
             Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    return Gio.DBusConnection.new_for_address_sync(address, flags, None, None)


class Sriovd:
    def __init__(self, conn, on_change):
        """on_change(reason, appeared=False) is called from the main loop for every signal that may
        change a figure, and with appeared=True when sriovd's name comes or goes."""
        self.conn = conn
        self.on_change = on_change
        self.present = False
        # The figures the connector reads: PFs' and tenants' properties, the objects themselves,
        # and the classes.
        subs = [(MANAGER, "AllocationChanged", None), (MANAGER, "DeviceAdded", None),
                (MANAGER, "DeviceRemoved", None), (OBJECT_MANAGER, "InterfacesAdded", None),
                (OBJECT_MANAGER, "InterfacesRemoved", None), (PROPERTIES, "PropertiesChanged", DEVICE),
                (PROPERTIES, "PropertiesChanged", TENANT)]
        for iface, member, arg0 in subs:
            conn.signal_subscribe(NAME, iface, member, None, arg0, Gio.DBusSignalFlags.NONE,
                                  self._signal, None)
        # Manager1's other properties (utilization, alerts) change often and say nothing it reads.
        conn.signal_subscribe(NAME, PROPERTIES, "PropertiesChanged", PATH, MANAGER, Gio.DBusSignalFlags.NONE,
                              self._manager_changed, None)
        Gio.bus_watch_name_on_connection(conn, NAME, Gio.BusNameWatcherFlags.NONE,
                                         self._appeared, self._vanished)

    def _signal(self, conn, sender, path, iface, member, params, data):
        self.on_change(f"{member} on {path}")

    def _manager_changed(self, conn, sender, path, iface, member, params, data):
        changed, invalidated = params[1], params[2]
        for name in ("Classes", "MaxTenants"):
            if name in changed or name in invalidated:
                self.on_change(f"{name} changed on {path}")

    def _appeared(self, conn, name, owner):
        self.present = True
        self.on_change(f"{name} appeared as {owner}", appeared=True)

    def _vanished(self, conn, name):
        was = self.present
        self.present = False
        if was:
            self.on_change(f"{name} left the bus", appeared=True)

    def _call(self, path, iface, method, args, reply):
        try:
            v = self.conn.call_sync(NAME, path, iface, method, args, GLib.VariantType(reply) if reply else None,
                                    Gio.DBusCallFlags.NONE, CALL_TIMEOUT_MS, None)
        except GLib.Error as e:
            name = Gio.DBusError.get_remote_error(e) or ""
            if not name.startswith("org.sriovd.Error."):
                raise Unavailable(f"{method}: {e.message}") from None
            Gio.DBusError.strip_remote_error(e)
            raise Refused(name, e.message) from None
        return v.unpack() if v is not None else None

    def snapshot(self):
        """sriovd's PFs and tenants now, from one GetManagedObjects, and its Manager1 properties.

        Returns (pfs, tenants, max_tenants, classes). classes is {name: class record}, or None from
        a sriovd without the Classes property; max_tenants is None from one without MaxTenants.
        """
        try:
            (objs,) = self._call(PATH, OBJECT_MANAGER, "GetManagedObjects", None, "(a{oa{sa{sv}}})")
            (props,) = self._call(PATH, PROPERTIES, "GetAll", GLib.Variant("(s)", (MANAGER,)), "(a{sv})")
        except Refused as e:
            raise Unavailable(str(e)) from None
        max_tenants = props.get("MaxTenants")
        classes = None
        if "Classes" in props:
            classes = {c["name"]: c for c in props["Classes"] if "name" in c}
        pfs, tenants = {}, {}
        for ifaces in objs.values():
            d = ifaces.get(DEVICE)
            if d is not None:
                pfs[d["Address"]] = {
                    "address": d["Address"],
                    "numa_node": d.get("NumaNode", -1),
                    # None: a sriovd older than the per-PF figures.
                    "vf_usable": d.get("VfUsable"),
                    "vf_free": d.get("VfFree", 0),
                    "vf_preemptible": d.get("VfPreemptible", 0),
                    "class_available": dict(d.get("ClassAvailable", {})),
                }
            t = ifaces.get(TENANT)
            if t is not None:
                tenants[t["Id"]] = {
                    "class": t.get("Class", ""),
                    "kind": t.get("Kind", ""),
                    "state": t.get("State", ""),
                    "pf": t.get("Pf", ""),
                    "pin_pf": t.get("PinPf", ""),
                    "owner": t.get("Owner", ""),
                }
        return pfs, tenants, max_tenants, classes

    def allocate(self, tenant, klass, pf, owner):
        opts = {"pf": GLib.Variant("s", pf), "domain_uuid": GLib.Variant("s", tenant),
                "owner": GLib.Variant("s", owner)}
        return self._call(PATH, MANAGER, "Allocate", GLib.Variant("(sssa{sv})", (tenant, klass, "", opts)),
                          "(a{sv})")[0]

    def release(self, tenant):
        self._call(PATH, MANAGER, "Release", GLib.Variant("(s)", (tenant,)), None)
