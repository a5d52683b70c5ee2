#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-mapping.py — sriovd-placement's mapping as data: names, UUIDs, inventories and tenants from
# hand-written figures, no Placement and no bus. Skips (77) where the connector cannot be imported.
#
#   test-mapping.py SOURCE_DIR
import os
import sys

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv[1]), "src", "placement"))
from sriovd_placement import mapping as m  # noqa: E402
# The colliding classes' error is logged by the connector, which needs python3-gi.
try:
    from sriovd_placement import connector
except ImportError as e:
    print(f"SKIP: the connector cannot be imported: {e}")
    sys.exit(77)

KINDS = {"latency-critical": "sriov-required", "throughput": "sriov-preferred", "best-effort": "virtio"}
CN = "0b7c2a10-6b1e-4f43-9f39-1d2c6a1f3e01"
PF = "0000:41:00.0"


def pf(usable, free, pre, avail=None):
    avail = avail if avail is not None else {"latency-critical": free + pre, "throughput": free, "best-effort": 0}
    return {"address": PF, "numa_node": 0, "vf_usable": usable, "vf_free": free, "vf_preemptible": pre,
            "class_available": avail}


def c(n):
    return f"c0ffee00-0000-4000-8000-{n:012d}"


LC = {m.VF: 1, "CUSTOM_SRIOVD_C_LATENCY_CRITICAL": 1}
TP = {"CUSTOM_SRIOVD_C_THROUGHPUT": 1}
ON_VF = {"kind": "vf", "pf": PF}


def vf(inv):
    return inv[m.VF]["total"], inv[m.VF]["reserved"]


def test_names():
    assert m.custom_name("latency-critical") == "LATENCY_CRITICAL"
    assert m.custom_name("rt.vcpu_2") == "RT_VCPU_2"
    assert m.provider_name("host-a", PF) == "host-a:sriovd:0000:41:00.0"
    u = m.provider_uuid(CN, PF)
    assert u == m.provider_uuid(CN, PF) and u != m.provider_uuid(CN, "0000:41:00.1")
    assert m.is_consumer_uuid(c(1)) and not m.is_consumer_uuid("vm-17") and not m.is_consumer_uuid(c(1).upper())


def test_inventories():
    # Nothing held: every usable VF is offered.
    inv = m.inventories(pf(4, 4, 0), KINDS, {}, {}, 64)
    assert vf(inv) == (4, 0), inv
    assert inv["CUSTOM_SRIOVD_C_LATENCY_CRITICAL"]["total"] == 4
    assert inv["CUSTOM_SRIOVD_C_THROUGHPUT"]["total"] == 64 and inv["CUSTOM_SRIOVD_C_BEST_EFFORT"]["total"] == 64
    # A tenant that did not come through Placement holds one VF: reserved.
    assert vf(m.inventories(pf(4, 3, 0), KINDS, {}, {}, 64)) == (4, 1)
    # A served Placement tenant: used, not reserved; the free capacity is what sriovd has free.
    inv = m.inventories(pf(4, 3, 0), KINDS, {c(1): LC}, {c(1): ON_VF}, 64)
    assert vf(inv) == (4, 0) and inv["CUSTOM_SRIOVD_C_LATENCY_CRITICAL"]["total"] == 4, inv
    # Granted but not served yet: its VF is still free in sriovd, and must not be offered twice.
    inv = m.inventories(pf(4, 4, 0), KINDS, {c(1): LC}, {}, 64)
    assert vf(inv) == (4, 0), inv   # 3 free in Placement: 4 free in sriovd, 1 of them granted
    assert inv["CUSTOM_SRIOVD_C_LATENCY_CRITICAL"]["total"] == 4, inv   # 1 used + 4 - 1 pending
    # A preferred tenant on a VF counts as available to a required one (it would be downgraded).
    inv = m.inventories(pf(4, 0, 1), KINDS, {c(2): TP}, {c(2): ON_VF}, 64)
    assert vf(inv) == (4, 3), inv
    # No usable VF, nothing held: no VF inventory at all; with one in use, capacity 0.
    assert m.VF not in m.inventories(pf(0, 0, 0), KINDS, {}, {}, 64)
    assert vf(m.inventories(pf(0, 0, 0), KINDS, {c(1): LC}, {}, 64)) == (1, 0)   # capacity = its use
    # RT CPUs bound a required class below the free VFs.
    inv = m.inventories(pf(4, 4, 0, {"latency-critical": 1}), KINDS, {}, {}, 64)
    assert inv["CUSTOM_SRIOVD_C_LATENCY_CRITICAL"]["total"] == 1 and vf(inv) == (4, 0), inv
    # A class with nothing available and nothing used has no tag inventory (total must be >= 1).
    inv = m.inventories(pf(4, 0, 0), KINDS, {}, {}, 64)
    assert "CUSTOM_SRIOVD_C_LATENCY_CRITICAL" not in inv and vf(inv) == (4, 4), inv


def free_of(invs, tag):
    return {a: inv[tag]["total"] if tag in inv else 0 for a, inv in invs.items()}


def test_shared_rooms():
    # Two PFs of one node and one free RT CPU: each PF reports the node's room, which is offered once.
    RT, LCT = "CUSTOM_SRIOVD_C_RT_VCPU", "CUSTOM_SRIOVD_C_LATENCY_CRITICAL"
    kinds = {"rt-vcpu": "sriov-required", "latency-critical": "sriov-required"}
    a, b, d = "0000:41:00.0", "0000:42:00.0", "0000:c1:00.0"

    def two(avail_a, avail_b, node_a=0, node_b=0, lc=4):
        return {a: dict(pf(4, 4, 0, {"rt-vcpu": avail_a, "latency-critical": lc}), address=a, numa_node=node_a),
                b: dict(pf(4, 4, 0, {"rt-vcpu": avail_b, "latency-critical": lc}), address=b, numa_node=node_b)}
    rt = {"rt-vcpu"}
    invs = m.host_inventories(two(1, 1), kinds, {}, {}, 64, rt)
    assert free_of(invs, RT) == {a: 1, b: 0}, invs
    # Each PF still counts its own VFs; only the class's room is shared.
    assert [vf(invs[x]) for x in (a, b)] == [(4, 0), (4, 0)], invs
    # PFs of different nodes have rooms of their own.
    assert free_of(m.host_inventories(two(1, 1, 0, 1), kinds, {}, {}, 64, rt), RT) == {a: 1, b: 1}
    # A class that falls back, or books no RT CPU, is not bound by the node's room.
    assert free_of(m.host_inventories(two(1, 1), kinds, {}, {}, 64), RT) == {a: 1, b: 1}
    # A claim granted on PF a and not served yet lowers PF b: a has 1 VF and b has 4, the node 2 RT CPUs.
    pfs = two(1, 2)
    invs = m.host_inventories(pfs, kinds, {a: {c(1): {m.VF: 1, RT: 1}}}, {}, 64, rt)
    assert free_of(invs, RT) == {a: 1, b: 1}, invs   # a: 1 used + 0 free; b: the node's 2 less 1 granted
    # Once served, the RT CPU is booked: sriovd's figures drop, and the claim is no longer pending.
    served = {c(1): {"kind": "vf", "pf": a}}
    invs = m.host_inventories(two(0, 1), kinds, {a: {c(1): {m.VF: 1, RT: 1}}}, served, 64, rt)
    assert free_of(invs, RT) == {a: 1, b: 1}, invs
    # A PF of unknown node books on any node's RT CPUs: the host is one room.
    pfs = two(1, 1, -1, 0)
    pfs[d] = dict(pf(4, 4, 0, {"rt-vcpu": 1, "latency-critical": 4}), address=d, numa_node=1)
    assert free_of(m.host_inventories(pfs, kinds, {}, {}, 64, rt), RT) == {a: 1, b: 0, d: 0}
    # A class that books no RT CPU is bound by the host's tenant limit only: 64 less 62 tenants.
    tenants = {f"t{i}": {"kind": "virtio"} for i in range(62)}
    invs = m.host_inventories(two(2, 2, lc=2), kinds, {}, tenants, 64, rt)
    assert free_of(invs, LCT) == {a: 2, b: 0} and free_of(invs, RT) == {a: 2, b: 0}, invs
    assert free_of(m.host_inventories(two(2, 2), kinds, {}, {}, 64, rt), LCT) == {a: 4, b: 4}
    # A consumer granted anywhere that is no tenant yet takes a place under the limit.
    invs = m.host_inventories(two(2, 2, lc=2), kinds, {b: {c(2): TP}}, dict(tenants, **{c(3): {}}), 65, rt)
    assert free_of(invs, LCT) == {a: 1, b: 0}, invs


def test_colliding():
    # low-lat and low_lat would share CUSTOM_SRIOVD_C_LOW_LAT: neither is offered, the others are.
    kinds = dict(KINDS, **{"low-lat": "sriov-required", "low_lat": "virtio", "LOW.LAT": "virtio",
                           "bulk": "virtio", "Bulk": "virtio"})
    kept, clashes = m.drop_colliding(kinds)
    assert kept == KINDS, kept
    assert clashes == [["Bulk", "bulk"], ["LOW.LAT", "low-lat", "low_lat"]], clashes
    assert m.drop_colliding(KINDS) == (KINDS, [])
    # The connector logs an error that names them.
    class Said:
        said = {}
        lines = []

        def say(self, subject, text, level=0):
            self.lines.append((level, text))
    said = Said()
    records = {n: {"name": n, "vnic": k} for n, k in kinds.items()}
    out = connector.Connector.class_kinds(said, {PF: pf(4, 4, 0, dict.fromkeys(kinds, 1))}, records)
    assert out == KINDS, out
    errors = [t for lvl, t in said.lines if lvl == connector.logging.ERROR]
    assert len(errors) == 1 and all(n in errors[0] for n in ("low-lat", "low_lat", "LOW.LAT", "bulk", "Bulk",
                                                              "CUSTOM_SRIOVD_C_LOW_LAT")), said.lines


def test_tenants():
    tags = {m.tag_class(k): k for k in KINDS}
    want, bad = m.desired_tenants({PF: {c(1): LC, c(2): TP}}, tags)
    assert want == {c(1): (PF, "latency-critical"), c(2): (PF, "throughput")} and bad == {}
    want, bad = m.desired_tenants({PF: {"vm-17": TP, c(3): {m.VF: 1}, c(4): {"CUSTOM_SRIOVD_C_GONE": 1},
                                        c(5): dict(LC, CUSTOM_SRIOVD_C_THROUGHPUT=1)},
                                   "0000:c1:00.0": {c(6): TP}, "0000:41:00.1": {c(6): TP}}, tags)
    assert want == {}, want
    assert set(bad) == {"vm-17", c(3), c(4), c(5), c(6)}, bad
    assert "more than one PF" in bad[c(6)] and "no class sriovd knows" in bad[c(4)]


for t in (test_names, test_inventories, test_shared_rooms, test_colliding, test_tenants):
    t()
    print("ok:", t.__name__)
