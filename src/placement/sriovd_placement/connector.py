# SPDX-License-Identifier: LGPL-2.1-or-later
# connector.py — the reconcile pass and the main loop that schedules it.
#
# The connector keeps no state that matters across restarts: every pass recomputes what
# Placement and sriovd should say from what they say now. Its caches only save requests, and a
# cache that is wrong costs one 409 and a re-read.
import logging

from gi.repository import GLib

from . import mapping
from . import placement as pl
from . import sriovd as sd

log = logging.getLogger("sriovd-placement")

# Signals come in bursts (an Allocate sends InterfacesAdded, PropertiesChanged and
# AllocationChanged): one pass for the burst.
DEBOUNCE_MS = 100
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 30.0
# A generation conflict means someone wrote the provider between our read and our write: read
# it again and retry, a few times, then leave it to the next pass.
CONFLICT_RETRIES = 5


class Connector:
    def __init__(self, conf, placement, bus, on_fatal=None):
        self.compute_name = conf.compute_node
        self.compute_uuid_conf = conf.compute_node_uuid
        self.poll_ms = int(conf.poll_interval * 1000)
        self.placement = placement
        self.sriovd = sd.Sriovd(bus, self.changed)
        self.on_fatal = on_fatal
        self.compute = None          # (uuid, name) of the compute node's provider
        self.snap = None             # sriovd's (pfs, tenants, max_tenants, classes)
        self.dirty = True
        self.gen = {}                # provider uuid -> its generation as we last saw it
        self.alloc_gen = {}          # provider uuid -> the generation its allocations were read at
        self.allocs = {}             # provider uuid -> {consumer: {rc: amount}}
        self.inv = {}                # provider uuid -> its inventories as we last saw them
        self.traits = {}             # provider uuid -> its traits as we last saw them
        self.refused = {}            # consumer -> why sriovd refused it, until sriovd changes
        self.ctypes = {}             # consumer -> its consumer type, while it has allocations here
        self.said = {}               # what was last logged per subject, so a steady state is quiet
        self.backoff = 0.0
        self.timer = None            # the next full pass
        self.timer_due = None
        self.light_timer = None      # the light pass after a burst of signals

    # ---- scheduling ----
    #
    # Two kinds of pass. A full pass reads Placement's provider tree and allocations, creates
    # and retires providers, and turns allocations into tenants: every poll_interval, at start,
    # when sriovd's name appears, and after a failure. A light pass follows a burst of sriovd's
    # signals: it writes the inventories that sriovd's new figures change, from the allocations
    # the last full pass read, and reads nothing from Placement. A stale generation costs a 409
    # and a re-read; stale allocations are read again by the next full pass.

    def changed(self, reason, appeared=False):
        """sriovd's figures may have changed (a signal), or sriovd came or went (appeared)."""
        log.debug("sriovd: %s", reason)
        self.dirty = True
        self.refused.clear()
        if self.backoff:
            return
        if appeared:
            self.schedule(DEBOUNCE_MS)
        elif self.light_timer is None:
            self.light_timer = GLib.timeout_add(DEBOUNCE_MS, self._light_tick)

    def schedule(self, ms):
        """A full pass in ms, or sooner if one is due sooner."""
        due = GLib.get_monotonic_time() + ms * 1000
        if self.timer is not None and self.timer_due <= due:
            return
        self._set_timer(ms)

    def _set_timer(self, ms):
        if self.timer is not None:
            GLib.source_remove(self.timer)
        self.timer_due = GLib.get_monotonic_time() + ms * 1000
        self.timer = GLib.timeout_add(ms, self._tick)

    def _tick(self):
        self.timer = None
        if self._run(full=True):
            self._set_timer(self.poll_ms)
        return False

    def _light_tick(self):
        self.light_timer = None
        # A full pass that is due anyway covers the burst.
        if self.timer is None or self.timer_due > GLib.get_monotonic_time() + DEBOUNCE_MS * 1000:
            self._run(full=False)
        return False

    def _run(self, full):
        """One pass; True when it succeeded. A failure sets the timer of the next full pass."""
        try:
            self.reconcile(full)
        except pl.Down as e:
            self.backoff = min(BACKOFF_MAX, self.backoff * 2) if self.backoff else BACKOFF_FIRST
            log.warning("Placement failed: %s; trying again in %.0f s", e, self.backoff)
            self._set_timer(int(self.backoff * 1000))
            return False
        except sd.Unavailable as e:
            self.dirty = True
            self.say("sriovd", f"sriovd did not answer ({e}); waiting for it", logging.WARNING)
            # Its name coming back schedules a pass; this one covers a sriovd that hangs.
            self._set_timer(self.poll_ms)
            return False
        except (pl.Failed, pl.Conflict) as e:
            # The compute node may have gone and come back under another UUID: look it up again.
            self.compute = None
            self.say("placement", f"Placement refused a request ({e}); trying again in the next pass",
                     logging.ERROR)
            self._set_timer(self.poll_ms)
            return False
        except Exception:
            # A bug: exit, and let the unit restart a connector that recomputes everything.
            log.exception("unexpected failure in a pass; exiting")
            if self.on_fatal:
                self.on_fatal()
            return False
        self.said.pop("placement", None)
        if self.backoff:
            log.info("Placement answers again; caught up")
            self.backoff = 0.0
            self._set_timer(self.poll_ms)
        return True

    def say(self, subject, text, level=logging.INFO):
        """Log text once while it stays the same for subject."""
        if self.said.get(subject) != text:
            self.said[subject] = text
            log.log(level, "%s", text)

    # ---- the pass ----

    def reconcile(self, full=True):
        if not self.sriovd.present:
            self.say("sriovd", f"waiting for {sd.NAME} on the bus")
            return
        if self.dirty:
            self.dirty = False
            try:
                self.snap = self.sriovd.snapshot()
            except sd.Unavailable:
                self.dirty = True
                raise
            self.say("sriovd", f"sriovd answers: {len(self.snap[0])} managed PFs")
            old = sorted(a for a, pf in self.snap[0].items() if pf["vf_usable"] is None)
            if old:
                self.say("figures", f"sriovd publishes no VF figures for PFs {', '.join(old)}; they are offered "
                                    "nothing until sriovd is upgraded", logging.ERROR)
        if not self.resolve_compute():
            return
        cn_uuid, cn_name = self.compute
        pfs, tenants, max_tenants, records = self.snap
        kinds = self.class_kinds(pfs, records)
        want_uuid = {mapping.provider_uuid(cn_uuid, a): a for a in pfs}
        if not full and any(u not in self.alloc_gen for u in want_uuid):
            full = True   # a PF whose provider this process has not read yet
        # A reload of sriovd may bring a class in a light pass. Known resource classes cost no request.
        for rc in [mapping.VF] + [mapping.tag_class(c) for c in kinds]:
            self.placement.ensure_resource_class(rc)

        if full:
            tree = {rp["uuid"]: rp for rp in self.placement.tree(cn_uuid)}
            for u, rp in tree.items():
                self.gen[u] = rp["generation"]
            prefix = mapping.provider_prefix(cn_name)
            ours = {u for u, rp in tree.items() if rp["name"].startswith(prefix)}
            for u, address in want_uuid.items():
                if u not in tree:
                    self.create_provider(u, mapping.provider_name(cn_name, address), cn_uuid, address)
                    ours.add(u)

            # Allocations: a new one moves the provider's generation, but Placement deletes one
            # without moving it, so a provider that has allocations is read on every full pass.
            for u in ours:
                if self.alloc_gen.get(u) != self.gen[u] or self.allocs.get(u):
                    g, a = self.placement.allocations(u)
                    self.gen[u], self.alloc_gen[u], self.allocs[u] = g, g, a
            for u in list(self.alloc_gen):
                if u not in ours:
                    self.alloc_gen.pop(u)
                    self.allocs.pop(u, None)

            # Allocations against this host's PF providers -> sriovd tenants.
            by_pf = {want_uuid[u]: self.allocs.get(u, {}) for u in ours if u in want_uuid}
            tag_to_class = {mapping.tag_class(c): c for c in kinds}
            want, bad = mapping.desired_tenants(by_pf, tag_to_class)
            for c, why in bad.items():
                self.say("consumer " + c, f"consumer {c}: not a tenant, because {why}", logging.WARNING)
            if any(self.allocs.get(u) for u in ours if u not in want_uuid):
                self.say("orphans", "allocations remain on providers of PFs sriovd no longer manages; "
                                    "their consumers are left as they are", logging.WARNING)
            want = self.drop_migrations(want, tenants)
            granted = {c for u in ours for c in self.allocs.get(u, {})}
            if self.sync_tenants(want, granted, tenants):
                self.snap = self.sriovd.snapshot()
                self.dirty = False
                pfs, tenants, max_tenants, records = self.snap
                kinds = self.class_kinds(pfs, records)
        if max_tenants is None:
            max_tenants = mapping.DEFAULT_MAX_TENANTS

        # sriovd's figures -> traits and inventories. The PFs' inventories are computed together,
        # because PFs share the RT CPUs of their node and the host's tenant limit.
        present = {}
        for u, address in want_uuid.items():
            pf = pfs.get(address)
            if pf is None:
                continue   # gone since the pass began: the next full pass retires it
            if pf["vf_usable"] is None:
                pf = dict(pf, vf_usable=0, vf_free=0, vf_preemptible=0, class_available={})
            present[address] = (u, pf)
        invs = mapping.host_inventories({a: pf for a, (u, pf) in present.items()}, kinds,
                                        {a: self.allocs.get(u, {}) for a, (u, pf) in present.items()},
                                        tenants, max_tenants, mapping.rt_bound(records))
        for address, (u, pf) in sorted(present.items()):
            self.write_traits(u, address, self.known_traits(pf, kinds))
            self.write_inventories(u, address, invs[address], self.allocs.get(u, {}))
        if full:
            for u in ours:
                if u not in want_uuid:
                    self.retire(u, tree.get(u, {}).get("name", u))

    def resolve_compute(self):
        """The compute node's provider, found once; False (logged) while it does not exist."""
        if self.compute is not None:
            return True
        if self.compute_uuid_conf:
            rp = self.placement.provider(self.compute_uuid_conf)
            what = f"no resource provider has UUID {self.compute_uuid_conf} ([sriovd] compute_node_uuid)"
        else:
            rp = self.placement.provider_by_name(self.compute_name)
            what = f"no resource provider is named {self.compute_name} ([sriovd] compute_node)"
        if rp is None:
            self.say("compute", what + "; waiting for nova-compute to create it", logging.WARNING)
            return False
        if rp.get("parent_provider_uuid"):
            self.say("compute", f"provider {rp['name']} ({rp['uuid']}) has a parent, so it is no compute node; "
                                "waiting for the configuration to name one", logging.ERROR)
            return False
        self.compute = (rp["uuid"], rp["name"])
        self.say("compute", f"publishing under compute node {rp['name']} ({rp['uuid']})")
        return True

    def class_kinds(self, pfs, records):
        """{class: vnic} of the classes that sriovd's Classes names and its PFs offer."""
        if records is None:
            self.say("kinds", "sriovd publishes no Classes, so no class's kind is known; the classes get no "
                              "tag inventory until sriovd is upgraded", logging.ERROR)
            return {}
        kinds = {}
        for name, rec in records.items():
            if rec.get("vnic") in sd.VNIC_KINDS:
                kinds[name] = rec["vnic"]
            else:
                self.say("class " + name, f"tenant class {name} has vnic {rec.get('vnic')}, which this connector "
                                          "does not know; it gets no tag inventory", logging.WARNING)
        # ClassAvailable and Classes may differ for a moment around a reload: only a class in both is offered.
        offered = set()
        for pf in pfs.values():
            offered |= set(pf["class_available"])
        missing = sorted(c for c in offered if c not in records)
        if missing:
            self.say("kinds", f"sriovd's PFs offer classes {', '.join(missing)} that its Classes does not name; "
                              "they get no tag inventory until it does", logging.WARNING)
        else:
            self.said.pop("kinds", None)
        kept, clashes = mapping.drop_colliding({c: k for c, k in kinds.items() if c in offered})
        if clashes:
            self.say("collide", "tenant classes " + "; ".join(
                " and ".join(g) + f" all map to {mapping.tag_class(g[0])}" for g in clashes)
                + "; none of them is offered until all but one are renamed", logging.ERROR)
        else:
            self.said.pop("collide", None)
        return kept

    def known_traits(self, pf, kinds):
        """The traits we may set: those of classes whose kind is known, and the NUMA node's."""
        out = {mapping.class_trait(c) for c in pf["class_available"] if c in kinds}
        if pf.get("numa_node", -1) >= 0:
            out.add(mapping.numa_trait(pf["numa_node"]))
        for t in out:
            self.placement.ensure_trait(t)
        return out

    def create_provider(self, u, name, parent, address):
        try:
            self.placement.create_provider(u, name, parent)
        except pl.Conflict as e:
            # Another provider has the name: a PF provider made for another compute node UUID.
            raise pl.Failed(f"cannot create the provider of PF {address}: {e}") from None
        log.info("created provider %s (%s) for PF %s", name, u, address)
        self.gen[u] = 0
        self.inv[u], self.traits[u] = {}, set()

    def drop_migrations(self, want, tenants):
        """want without nova's migrations, whose holds on a PF are no tenants.

        For a resize, a cold migration or an evacuation, nova moves the instance's allocations on
        the source host to the migration's UUID. That consumer names no libvirt domain: its
        allocation keeps the source's VF counted as used, so that a revert finds it, and it is
        never allocated. A consumer that is a tenant already is an instance, so only new consumers
        cost a request, and a consumer's type is asked once.
        """
        for c in list(self.ctypes):
            if c not in want:
                del self.ctypes[c]
        out = {}
        for c, (pf, klass) in want.items():
            if c not in tenants and c not in self.ctypes:
                t = self.placement.consumer_type(c)
                if t == "":
                    continue   # its allocations went since the read: the next pass drops it
                self.ctypes[c] = t
                if t is None:
                    self.say("ctypes", "Placement answers no microversion 1.38, so migrations are not told "
                                       "from instances; every consumer becomes a tenant", logging.WARNING)
            if self.ctypes.get(c) == "MIGRATION":
                self.say("consumer " + c, f"consumer {c}: a migration's hold on PF {pf} (class {klass}); "
                                          "counted as used, and no tenant")
                continue
            out[c] = (pf, klass)
        return out

    def sync_tenants(self, want, granted, tenants):
        """Allocate what Placement granted and sriovd lacks, release what it no longer grants.

        want: {consumer: (pf, class)}; granted: every consumer with allocations on this host's
        providers, including those that cannot become a tenant, whose tenants stay as they are.

        True when a call was made, so the caller re-reads sriovd's figures.
        """
        called = False
        # Releases first: a VF that a deleted allocation frees may be the one a new allocation on
        # the same PF was granted for.
        for tid, t in sorted(tenants.items()):
            if t["owner"] != mapping.OWNER or tid in granted:
                continue
            called = True
            try:
                self.sriovd.release(tid)
            except sd.Refused as e:
                if e.name != "org.sriovd.Error.UnknownTenant":
                    log.warning("sriovd refused to release tenant %s: %s", tid, e)
                continue
            log.info("released tenant %s: Placement holds no allocation for it", tid)
        for consumer, (pf, klass) in sorted(want.items()):
            t = tenants.get(consumer)
            if t is not None and t["owner"] != mapping.OWNER:
                self.say("consumer " + consumer, f"consumer {consumer}: sriovd already has a tenant with this id, "
                         f"owned by {t['owner'] or 'nobody'}; it is left alone", logging.WARNING)
                continue
            if t is not None and t["class"] == klass and t["pin_pf"] == pf:
                continue
            if consumer in self.refused:
                continue
            try:
                if t is not None and t["pin_pf"] != pf:
                    # The allocation moved to another PF: Allocate keeps a tenant's pin, so start over.
                    self.sriovd.release(consumer)
                    log.info("released tenant %s: its allocation moved from PF %s to PF %s", consumer, t["pin_pf"], pf)
                called = True
                rec = self.sriovd.allocate(consumer, klass, pf, mapping.OWNER)
            except sd.Refused as e:
                self.refused[consumer] = str(e)
                log.warning("sriovd refused tenant %s (class %s, PF %s): %s; trying again when sriovd changes",
                            consumer, klass, pf, e)
                continue
            log.info("allocated tenant %s: class %s on PF %s, %s %s", consumer, klass, pf, rec.get("kind", "?"),
                     rec.get("address", rec.get("state", "")))
        return called

    def write_traits(self, u, address, want):
        for _ in range(CONFLICT_RETRIES):
            if u not in self.traits:
                self.gen[u], self.traits[u] = self.placement.traits(u)
            if self.traits[u] == want:
                return
            try:
                g = self.placement.set_traits(u, self.gen[u], want)
            except pl.Conflict:
                del self.traits[u]
                continue
            self._wrote(u, g)
            self.traits[u] = set(want)
            log.info("PF %s: traits %s", address, " ".join(sorted(want)) or "none")
            return
        log.warning("PF %s: traits not set after %d generation conflicts; next pass", address, CONFLICT_RETRIES)

    def write_inventories(self, u, address, want, consumers):
        usage = _usage(consumers)
        for _ in range(CONFLICT_RETRIES):
            if u not in self.inv:
                self.gen[u], self.inv[u] = self.placement.inventories(u)
            # An inventory in use cannot go: capacity 0 keeps its allocations and offers nothing.
            want = dict(want)
            for rc in self.inv[u]:
                if rc not in want and usage.get(rc):
                    want[rc] = {"total": usage[rc], "reserved": usage[rc]}
            if mapping.same_inventories(self.inv[u], want):
                return
            try:
                g = self.placement.set_inventories(u, self.gen[u], want)
            except pl.Conflict as e:
                del self.inv[u]
                if e.code == "placement.inventory.inuse":
                    log.warning("PF %s: %s; keeping the inventory in use", address, e)
                    return
                continue
            self._wrote(u, g)
            self.inv[u] = want
            log.info("PF %s: %s", address, _inv_text(want))
            return
        log.warning("PF %s: inventory not set after %d generation conflicts; next pass", address, CONFLICT_RETRIES)

    def _wrote(self, u, g):
        # Our own write moved the generation: the allocations we read at the old one still hold.
        if self.alloc_gen.get(u) == self.gen.get(u):
            self.alloc_gen[u] = g
        self.gen[u] = g

    def retire(self, u, name):
        """A provider of ours whose PF sriovd no longer manages: gone, or offering nothing."""
        if not self.allocs.get(u):
            self.placement.delete_provider(u)
            for d in (self.gen, self.alloc_gen, self.allocs, self.inv, self.traits):
                d.pop(u, None)
            log.info("deleted provider %s: sriovd manages no such PF", name)
            return
        # Capacity 0: existing allocations stay valid until their consumers go.
        self.write_inventories(u, name, {}, self.allocs[u])


def _usage(consumers):
    out = {}
    for r in consumers.values():
        for rc, n in r.items():
            out[rc] = out.get(rc, 0) + n
    return out


def _inv_text(inv):
    return ", ".join(f"{rc} {i['total'] - i['reserved']}/{i['total']}" for rc, i in sorted(inv.items())) or "no inventory"
