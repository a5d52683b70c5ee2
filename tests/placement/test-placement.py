#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-placement.py — sriovd-placement against the real OpenStack Placement: providers and traits
# under a compute node, inventories that follow sriovd's figures, allocations that become
# Allocate calls and deletions that become releases, a 409 retried, and catching up after the
# connector is killed, after Placement is stopped and after sriovd is killed. A reload of sriovd
# that adds a class reaches Placement, and one that takes it away too. A migration's allocation
# is counted as used and becomes no tenant.
#
# sriovd's side is the real sriovd on a fixture host with a private bus (sriovdhost.py).
#
#   test-placement.py SOURCE_DIR SRIOVD
import os
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.abspath(sys.argv[1])
for d in ("tests/lib", "tests/dbus", "src/placement"):
    sys.path.insert(0, os.path.join(SOURCE, d))
import placementsrv  # noqa: E402

why = placementsrv.why_not(("dbus-daemon",), ("gi.repository.Gio", "keystoneauth1", "oslo_config"))
if why:
    print(f"SKIP: {why}")
    sys.exit(77)

from gi.repository import Gio  # noqa: E402
import sriovdhost  # noqa: E402
from sriovd_placement import connector, mapping, placement, sriovd  # noqa: E402
from sriovd_placement import config as cconfig  # noqa: E402

CN_NAME, CN_UUID = "host-a", "0b7c2a10-6b1e-4f43-9f39-1d2c6a1f3e01"
PF0, PF1 = "0000:41:00.0", "0000:c1:00.0"
RP0, RP1 = mapping.provider_uuid(CN_UUID, PF0), mapping.provider_uuid(CN_UUID, PF1)
SRIOVD = sys.argv[2]
LC, TP, BE = "CUSTOM_SRIOVD_C_LATENCY_CRITICAL", "CUSTOM_SRIOVD_C_THROUGHPUT", "CUSTOM_SRIOVD_C_BEST_EFFORT"
VF = mapping.VF


def consumer(n):
    return f"c0ffee00-0000-4000-8000-{n:012d}"


def wait_until(pred, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except (OSError, AssertionError, KeyError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Connector:
    def __init__(self, tmp, pl, host):
        self.conf = os.path.join(tmp, "sriovd-placement.conf")
        with open(self.conf, "w") as f:
            f.write(pl.conf_section() + f"timeout = 5\n[sriovd]\ncompute_node = {CN_NAME}\n"
                    f"bus_address = {host.bus.address}\npoll_interval = 0.5\n")
        self.log_path = os.path.join(tmp, "connector.log")
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "a")
        env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "src", "placement"))
        env.pop("JOURNAL_STREAM", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "sriovd_placement", "--config-file", self.conf],
                                     env=env, stdout=self.log, stderr=self.log)

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        assert self.proc.poll() is None, "the connector exited:\n" + self.text()


def inventory(pl, rp):
    return pl.get(f"/resource_providers/{rp}/inventories")["inventories"]


def free(pl, rp, rc):
    inv = inventory(pl, rp).get(rc)
    if inv is None:
        return 0
    used = pl.get(f"/resource_providers/{rp}/usages")["usages"].get(rc, 0)
    return inv["total"] - inv["reserved"] - used


def claim(pl, c, rp, resources):
    status, body = pl.request("PUT", f"/allocations/{c}", {
        "allocations": {rp: {"resources": resources}}, "project_id": "p", "user_id": "u",
        "consumer_generation": None, "consumer_type": "INSTANCE"})
    assert status == 204, (c, status, body)


def unclaim(pl, c):
    status, body = pl.request("DELETE", f"/allocations/{c}")
    assert status == 204, (c, status, body)


def agree(pl, host):
    """Placement's allocations and sriovd's placement-owned tenants are the same set, each on the
    PF of its provider, and each PF's free VFs in Placement are what sriovd could serve."""
    tenants = {t: v for t, v in host.tenants().items() if v["owner"] == "placement"}
    pfs = host.pfs()
    want = {}
    for rp, pf in ((RP0, PF0), (RP1, PF1)):
        allocs = pl.get(f"/resource_providers/{rp}/allocations")["allocations"]
        for c in allocs:
            want[c] = pf
        served = sum(1 for c, a in allocs.items() if a["resources"].get(VF) and tenants.get(c, {}).get("pf") == pf)
        used = sum(a["resources"].get(VF, 0) for a in allocs.values())
        assert served == used, (pf, "placement VFs not served", allocs, tenants)
        assert free(pl, rp, VF) == pfs[pf]["vf_free"] + pfs[pf]["vf_preemptible"], (pf, inventory(pl, rp), pfs[pf])
    assert {t: v["pin_pf"] for t, v in tenants.items()} == want, (tenants, want)
    return True


def snapshot_kinds(host):
    return {name: rec["vnic"] for name, rec in host.client.snapshot()[3].items()}


def shipped_kinds():
    return {"best-effort": "virtio", "latency-critical": "sriov-required", "rt-vcpu": "sriov-required",
            "throughput": "sriov-preferred"}


def main():
    tmp = tempfile.mkdtemp(prefix="sriovd-placement-test-")
    pl = host = conn = None
    try:
        pl = placementsrv.Placement(tmp)
        pl.start()
        host = sriovdhost.Host(tmp, SOURCE, SRIOVD)
        status, body = pl.request("POST", "/resource_providers", {"name": CN_NAME, "uuid": CN_UUID})
        assert status == 200, (status, body)
        n0 = host.pfs()[PF0]["vf_usable"]
        classes = set(host.pfs()[PF0]["class_available"])
        assert n0 >= 4 and {"latency-critical", "throughput", "best-effort"} <= classes, host.pfs()
        # A tenant that did not come through Placement holds a VF of PF0: it must be reserved.
        host.client.conn.call_sync(sriovd.NAME, sriovd.PATH, sriovd.MANAGER, "Allocate",
                                   sriovd.GLib.Variant("(sssa{sv})", ("vm-local", "latency-critical", "",
                                                                      {"pf": sriovd.GLib.Variant("s", PF0)})),
                                   None, Gio.DBusCallFlags.NONE, 10000, None)
        conn = Connector(tmp, pl, host)

        # --- Providers, names, traits and inventories.
        wait_until(lambda: VF in inventory(pl, RP1) and VF in inventory(pl, RP0), "the PF providers' inventories")
        tree = {rp["uuid"]: rp for rp in pl.get(f"/resource_providers?in_tree={CN_UUID}")["resource_providers"]}
        assert tree[RP0]["name"] == f"{CN_NAME}:sriovd:{PF0}" and tree[RP0]["parent_provider_uuid"] == CN_UUID, tree
        assert tree[RP1]["name"] == f"{CN_NAME}:sriovd:{PF1}", tree
        assert set(pl.get(f"/resource_providers/{RP0}/traits")["traits"]) == {
            "CUSTOM_SRIOVD_NUMA_0"} | {mapping.class_trait(c) for c in classes}
        assert "CUSTOM_SRIOVD_NUMA_1" in pl.get(f"/resource_providers/{RP1}/traits")["traits"]
        inv0 = inventory(pl, RP0)
        assert (inv0[VF]["total"], inv0[VF]["reserved"]) == (n0, 1), inv0
        assert inv0[LC]["total"] == n0 - 1 and inv0[TP]["total"] == 64 and inv0[BE]["total"] == 64, inv0
        assert inventory(pl, CN_UUID) == {}, "the compute node's own inventory is nova's"
        print("ok: providers, traits and inventories under the compute node")

        # --- A reload of sriovd that adds a class: its trait and tag inventory follow, without a
        # restart of the connector. Taking it away takes them away.
        bulk, bulk_trait = "CUSTOM_SRIOVD_C_BULK", mapping.class_trait("bulk")
        with open(os.path.join(host.classes, "bulk.ini"), "w") as f:
            f.write("[class]\nvnic = sriov-preferred\nrank = 10\n")
        reasons = []
        watcher = sriovd.Sriovd(host.conn, lambda reason, appeared=False: reasons.append(reason))
        host.reload()
        # The connector's client hears of the class itself, not only of the PFs' figures.
        ctx = sriovd.GLib.MainContext.default()
        wait_until(lambda: [ctx.iteration(False) for _ in range(10)] and "Classes changed on /org/sriovd/Manager1" in
                   reasons, "PropertiesChanged of Classes")
        assert snapshot_kinds(host) == dict(shipped_kinds(), bulk="sriov-preferred"), snapshot_kinds(host)
        del watcher
        wait_until(lambda: bulk in inventory(pl, RP0) and bulk in inventory(pl, RP1), "the new class's inventory")
        assert inventory(pl, RP0)[bulk]["total"] == 64, inventory(pl, RP0)
        assert bulk_trait in pl.get(f"/resource_providers/{RP0}/traits")["traits"]
        os.unlink(os.path.join(host.classes, "bulk.ini"))
        host.reload()
        wait_until(lambda: bulk not in inventory(pl, RP0) and bulk not in inventory(pl, RP1),
                   "the class's inventory gone")
        assert bulk_trait not in pl.get(f"/resource_providers/{RP0}/traits")["traits"]
        print("ok: a class that a reload adds or takes away reaches Placement")

        # --- A scheduler's request finds the PFs by class.
        status, ac = pl.request("GET", f"/allocation_candidates?resources1={VF}:1,{LC}:1"
                                f"&required1=CUSTOM_SRIOVD_CLASS_LATENCY_CRITICAL&group_policy=none")
        assert status == 200 and len(ac["allocation_requests"]) == 2, ac

        # --- Allocations become tenants, pinned to the provider's PF.
        claim(pl, consumer(1), RP0, {VF: 1, LC: 1})
        wait_until(lambda: host.tenants().get(consumer(1), {}).get("kind") == "vf", "tenant 1 on a VF")
        t = host.tenants()[consumer(1)]
        assert (t["owner"], t["pin_pf"], t["pf"], t["class"]) == ("placement", PF0, PF0, "latency-critical"), t
        claim(pl, consumer(2), RP0, {TP: 1})
        wait_until(lambda: host.tenants().get(consumer(2), {}).get("kind") == "vf", "preferred tenant 2 on a VF")
        wait_until(lambda: agree(pl, host), "agreement after two claims")
        # PF0: one VF local, one required, one preferred (preemptible): the rest and the preferred
        # one's for required tenants.
        assert free(pl, RP0, VF) == n0 - 2, inventory(pl, RP0)
        last = 2 + n0 - 2
        for i in range(3, last + 1):
            claim(pl, consumer(i), RP0, {VF: 1, LC: 1})
        wait_until(lambda: host.tenants().get(consumer(last), {}).get("kind") == "vf", "the last tenant on a VF")
        wait_until(lambda: agree(pl, host), "agreement after preemption")
        assert host.tenants()[consumer(2)]["kind"] == "virtio", "the preferred tenant was not downgraded"
        assert free(pl, RP0, VF) == 0 and free(pl, RP0, LC) == 0, inventory(pl, RP0)
        status, ac = pl.request("GET", f"/allocation_candidates?resources={VF}:1,{LC}:1")
        assert [list(a["allocations"]) for a in ac["allocation_requests"]] == [[RP1]], ac
        print("ok: allocations become tenants; a full PF is offered no more")

        # --- Deleted allocations become releases; tenants of other owners stay.
        unclaim(pl, consumer(1))
        wait_until(lambda: consumer(1) not in host.tenants(), "tenant 1 released")
        wait_until(lambda: agree(pl, host), "agreement after a deletion")
        assert "vm-local" in host.tenants()
        print("ok: a deleted allocation is released; the local tenant is left alone")

        # --- kill -9 the connector; Placement and sriovd change meanwhile; a restart catches up.
        conn.kill()
        unclaim(pl, consumer(3))
        claim(pl, consumer(105), RP1, {VF: 1, LC: 1})
        claim(pl, consumer(106), RP1, {BE: 1})

        # A 409: the connector writes with a generation someone else has moved; it re-reads and
        # retries. Driven in this process, against the same Placement, while the daemon is down.
        from oslo_config import cfg
        c = cfg.ConfigOpts()
        cconfig.register(c)
        c(["--config-file", conn.conf], project="sriovd", default_config_files=[])
        pclient = placement.Placement(cconfig.adapter(c))
        seen = []
        real = pclient._do

        def spy(method, url, body=None, ok=(200,)):
            try:
                return real(method, url, body, ok)
            except placement.Conflict as e:
                seen.append(e.code)
                raise
        pclient._do = spy
        cx = connector.Connector(c.sriovd, pclient, host.conn)
        gen, inv = pclient.inventories(RP1)
        pclient.set_traits(RP1, gen, set(pl.get(f"/resource_providers/{RP1}/traits")["traits"]) | {"HW_NIC_SRIOV"})
        cx.gen[RP1], cx.inv[RP1] = gen, {}
        want = {k: {"total": v["total"], "reserved": v["reserved"]} for k, v in inv.items()}
        want[VF]["reserved"] = 1
        cx.write_inventories(RP1, PF1, want, {})
        assert seen == ["placement.concurrent_update"], seen
        assert inventory(pl, RP1)[VF]["reserved"] == 1
        print("ok: a generation conflict is re-read and retried")

        conn.start()
        wait_until(lambda: consumer(3) not in host.tenants() and consumer(105) in host.tenants()
                   and consumer(106) in host.tenants(), "the restarted connector catching up")
        wait_until(lambda: agree(pl, host), "agreement after a connector restart")
        assert host.tenants()[consumer(106)]["kind"] == "virtio"
        print("ok: after kill -9 of the connector, nothing lost and nothing counted twice")

        # --- Placement stopped: sriovd changes, the connector backs off and catches up.
        pl.stop()
        host.client.release("vm-local")
        time.sleep(3)
        conn.alive()
        pl.start()
        wait_until(lambda: inventory(pl, RP0)[VF]["reserved"] == 0, "the inventory after Placement's return")
        wait_until(lambda: agree(pl, host), "agreement after Placement's return")
        log = conn.text()
        assert "Placement failed" in log and "Placement answers again" in log, log
        print("ok: Placement stopped and back: the connector caught up")

        # --- kill -9 sriovd: claims made meanwhile are served when it is back; nothing twice.
        host.kill_sriovd()
        claim(pl, consumer(107), RP1, {VF: 1, LC: 1})
        time.sleep(2)
        conn.alive()
        host.start_sriovd()
        wait_until(lambda: consumer(107) in host.tenants(), "tenant 107 after sriovd's restart")
        wait_until(lambda: agree(pl, host), "agreement after sriovd's restart")
        placement_tenants = [t for t, v in host.tenants().items() if v["owner"] == "placement"]
        assert sorted(placement_tenants) == sorted([consumer(2)] + [consumer(i) for i in range(4, last + 1)] +
                                                   [consumer(105), consumer(106), consumer(107)]), placement_tenants
        print("ok: after kill -9 of sriovd, the connector waited and caught up")

        # --- A move: nova holds the source's VF under the migration's UUID, a consumer of type
        # MIGRATION. It names no domain, so it is no tenant, and its VF stays counted as used.
        mig = consumer(900)
        status, body = pl.request("PUT", f"/allocations/{mig}", {
            "allocations": {RP1: {"resources": {VF: 1, LC: 1}}}, "project_id": "p", "user_id": "u",
            "consumer_generation": None, "consumer_type": "MIGRATION"}, "1.38")
        assert status == 204, (status, body)
        wait_until(lambda: f"consumer {mig}: a migration's hold" in conn.text(), "the migration noticed")

        def held():
            pfs = host.pfs()
            return free(pl, RP1, VF) == pfs[PF1]["vf_free"] + pfs[PF1]["vf_preemptible"] - 1
        wait_until(held, "the migration's VF counted as used")
        time.sleep(1.5)   # a few more passes
        assert mig not in host.tenants(), host.tenants()
        assert held(), (inventory(pl, RP1), host.pfs()[PF1])
        assert conn.text().count(f"consumer {mig}:") == 1, conn.text()
        unclaim(pl, mig)
        wait_until(lambda: agree(pl, host), "agreement after the migration's hold is gone")
        print("ok: a migration's allocation is counted as used and is no tenant")
        conn.alive()
        conn.kill()
    except BaseException:
        if conn:
            print("--- connector log\n" + conn.text())
        raise
    finally:
        if conn and conn.proc.poll() is None:
            conn.kill()
        if host:
            host.stop()
        if pl:
            pl.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
