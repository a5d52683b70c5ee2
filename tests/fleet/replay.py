# SPDX-License-Identifier: LGPL-2.1-or-later
# replay.py — a seeded trace of tenants replayed through Placement as nova's scheduler would,
# against sriovd's providers and against a nova-alone baseline; the figures of both runs.
#
# The trace is a list of rounds, one unit of trace time each. A round holds departures and
# arrivals. The controller claims every arrival of a round in trace order, then waits until
# every host serves what it was given. The end of a round is a quiet point: nothing is in
# flight, and Placement and every sriovd must agree there. Utilization is weighted by trace
# time, so a slow round counts as much as a fast one.
import math
import os
import random
import signal
import time
import urllib.parse
import uuid

from fleet import BASE_TRAIT, BASE_VF, PROJECT, ROOT_ASK, VF, class_trait, minibus, stopped, tag_class

# The shipped classes in the proportions of a mixed cloud.
MIX = (("latency-critical", 0.20), ("rt-vcpu", 0.15), ("throughput", 0.40), ("best-effort", 0.25))
# nova's [scheduler] max_attempts: a claim that sriovd refuses is retried on another candidate.
MAX_ATTEMPTS = 3


def poisson(rng, lam):
    k, p, limit = 0, 1.0, math.exp(-lam)
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def make_trace(seed, phases):
    """Rounds of events from phases [(rounds, arrivals per round, mean lifetime in rounds)].

    An event is ("arrive", consumer, class) or ("depart", consumer). Consumers are UUIDs drawn
    from the seed, so one seed gives one trace.
    """
    rng = random.Random(seed)
    names = [n for n, _ in MIX]
    weights = [w for _, w in MIX]
    alive, rounds = [], []
    for count, lam, life in phases:
        for _ in range(count):
            events = []
            for c in list(alive):
                if rng.random() < 1.0 / life:
                    alive.remove(c)
                    events.append(("depart", c))
            for _ in range(poisson(rng, lam)):
                c = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                alive.append(c)
                events.append(("arrive", c, rng.choices(names, weights)[0]))
            rng.shuffle(events)
            rounds.append(events)
    return rounds


def with_stale_offer(faults, after):
    """faults, and a stale-offer in the first round from after on that has a latency-critical
    arrival and no other fault: a function of the trace, for run_fleet."""
    def pick(trace):
        out = dict(faults)
        for r in range(after, len(trace)):
            if r not in out and any(ev[0] == "arrive" and ev[2] == "latency-critical" for ev in trace[r]):
                out[r] = "stale-offer"
                break
        return out
    return pick


def query(params):
    return "/allocation_candidates?" + urllib.parse.urlencode(params, safe=":,!")


def root_ask():
    return ",".join(f"{k}:{v}" for k, v in ROOT_ASK.items())


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    k = (len(v) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


class Figures:
    """What one run measured, round by round and tenant by tenant."""

    def __init__(self, name, total_vfs):
        self.name = name
        self.total_vfs = total_vfs
        self.rounds = []            # per quiet point: {"used", "demand", "pref_alive", "pref_vf"}
        self.required = 0           # sriov-required arrivals
        self.required_served = 0
        self.required_had_vf = 0    # of them, arrived while the fleet had a VF for them
        self.required_had_vf_served = 0
        self.preferred = 0
        self.preferred_vf_at_arrival = 0
        self.attach = []            # seconds from claim to VF attached, in rounds without a fault
        self.attach_faults = []     # the same in the rounds with a fault
        self.changes = 0            # arrivals and departures
        self.reschedules = 0
        self.no_candidates = {}     # class -> arrivals Placement had no candidate for
        self.unserved = []          # why each unserved required tenant was not served
        self.window = None          # (start, end) wall clock of the replay, for request counts
        self.quiet_points = 0
        self.mismatch_points = []   # (round, [mismatch])
        self.settle = []            # seconds each quiet point took to agree
        self.faults = []            # (round, name, what happened)
        self.idle = None            # (start, end) wall clock of a pause with nothing to do

    def utilization(self):
        if not self.rounds:
            return float("nan")
        return sum(r["used"] for r in self.rounds) / (len(self.rounds) * self.total_vfs)

    def saturated(self):
        return [r for r in self.rounds if r["demand"] >= self.total_vfs]

    def utilization_saturated(self):
        s = self.saturated()
        if not s:
            return float("nan")
        return sum(r["used"] for r in s) / (len(s) * self.total_vfs)

    def preferred_on_vf(self):
        alive = sum(r["pref_alive"] for r in self.rounds)
        return sum(r["pref_vf"] for r in self.rounds) / alive if alive else float("nan")


# ---- the nova-alone baseline ----

def run_baseline(fleet, trace, kinds, log=print):
    """The trace against the baseline's compute nodes: VFs as plain inventory, first fit, no
    classes, no preemption. Nothing runs on the hosts: a claim is the whole placement."""
    c = fleet.placement.client("scheduler-base")
    fig = Figures("nova alone", fleet.total_vfs())
    by_uuid = {b["uuid"]: b for b in fleet.base}
    live = {}       # consumer -> (class, holds a VF)
    t0 = time.time()
    for events in trace:
        for ev in events:
            if ev[0] == "depart":
                # A refused tenant never started, so it does not leave either.
                if ev[1] in live:
                    fig.changes += 1
                    c.ok("DELETE", f"/allocations/{ev[1]}", codes=(204,))
                    live.pop(ev[1])
                continue
            fig.changes += 1
            consumer, cls = ev[1], ev[2]
            kind = kinds[cls]
            vfs_used = sum(1 for _, v in live.values() if v)
            pref_held = sum(1 for k, v in live.values() if v and kinds[k] == "sriov-preferred")
            had_vf = vfs_used - pref_held < fig.total_vfs
            got = None
            if kind in ("sriov-required", "sriov-preferred"):
                got = _claim_first(c, consumer, {"resources": root_ask() + f",{BASE_VF}:1", "required": BASE_TRAIT})
            vf = got is not None
            if got is None and kind != "sriov-required":
                got = _claim_first(c, consumer, {"resources": root_ask(), "required": BASE_TRAIT})
            if kind == "sriov-required":
                fig.required += 1
                fig.required_had_vf += had_vf
                fig.required_served += vf
                fig.required_had_vf_served += had_vf and vf
                if not vf:
                    fig.no_candidates[cls] = fig.no_candidates.get(cls, 0) + 1
                    if had_vf:
                        fig.unserved.append(f"{consumer} ({cls}): every VF held, {pref_held} by "
                                            f"sriov-preferred tenants, and nova cannot take them back")
            elif kind == "sriov-preferred":
                fig.preferred += 1
                fig.preferred_vf_at_arrival += vf
            if got is not None:
                live[consumer] = (cls, vf)
                assert got in by_uuid
        used = sum(1 for _, v in live.values() if v)
        demand = sum(1 for k, _ in live.values() if kinds[k] in ("sriov-required", "sriov-preferred"))
        demand += sum(1 for ev in events if ev[0] == "arrive" and ev[1] not in live
                      and kinds[ev[2]] == "sriov-required")
        pref = [v for k, v in live.values() if kinds[k] == "sriov-preferred"]
        fig.rounds.append({"used": used, "demand": demand, "pref_alive": len(pref), "pref_vf": sum(pref)})
    fig.window = (t0, time.time())
    # Placement's own count must be the controller's.
    usages = 0
    for b in fleet.base:
        usages += c.ok("GET", f"/resource_providers/{b['uuid']}/usages")["usages"].get(BASE_VF, 0)
    if usages != fig.rounds[-1]["used"]:
        raise RuntimeError(f"baseline: Placement counts {usages} VFs in use, the controller {fig.rounds[-1]['used']}")
    for consumer in list(live):
        c.ok("DELETE", f"/allocations/{consumer}", codes=(204,))
    return fig


def _claim_first(c, consumer, params):
    """Claim the first allocation candidate; the root provider's UUID, or None without one."""
    doc = c.ok("GET", query(params))
    for req in doc["allocation_requests"]:
        if _claim(c, consumer, req) == 204:
            return next(iter(req["allocations"]))
    return None


def _claim(c, consumer, req):
    body = {"allocations": {rp: {"resources": a["resources"]} for rp, a in req["allocations"].items()},
            "consumer_generation": None, "project_id": PROJECT, "user_id": "fleet", "consumer_type": "INSTANCE"}
    status, doc = c.request("PUT", f"/allocations/{consumer}", body)
    if status not in (204, 409):
        raise RuntimeError(f"PUT /allocations/{consumer}: {status} {doc}")
    return status


# ---- sriovd's providers, through the connectors ----

class Controller:
    """nova's scheduler against sriovd's providers: candidates, a claim, the wait for the host.

    faults: {round: name}; each fault is injected after that round's claims, while they are in
    flight. attach_timeout: seconds a host may take to serve a claim before the claim counts as
    refused; fault_timeout replaces it in a fault's round.
    """

    def __init__(self, fleet, kinds, attach_timeout, fault_timeout=90.0, settle_timeout=20.0,
                 placement_stop=6.0, log=print):
        self.fleet = fleet
        self.kinds = kinds
        self.c = fleet.placement.client("scheduler", timeout=60.0)
        self.attach_timeout = attach_timeout
        self.fault_timeout = fault_timeout
        self.settle_timeout = settle_timeout
        self.placement_stop = placement_stop
        self.log = log
        self.live = {}          # consumer -> {"cls", "host", "pf", "rp"}
        self.rps = {}           # PF provider UUID -> (host, pf address)
        self.hosts = {h.name: h for h in fleet.hosts}
        self.local = []         # (host, tenant) allocated straight on sriovd, not through Placement
        self.errors = []        # what went wrong that is not a figure: a stuck release, a dead watcher

    def refresh_providers(self):
        doc = self.fleet.checker.ok("GET", "/resource_providers")
        for rp in doc["resource_providers"]:
            name = rp["name"]
            if ":sriovd:" in name:
                host, _, pf = name.partition(":sriovd:")
                if host in self.hosts:
                    self.rps[rp["uuid"]] = (self.hosts[host], pf)

    def flavor(self, cls):
        """The flavor's request: the compute node's own resources, and one granular group."""
        p = {"resources": root_ask(), "group_policy": "none"}
        if self.kinds[cls] == "sriov-required":
            p["resources1"] = f"{VF}:1,{tag_class(cls)}:1"
            p["required1"] = class_trait(cls)
        else:
            p["resources1"] = f"{tag_class(cls)}:1"
        return p

    def order(self, cls, reqs, summaries):
        """nova's weighing of the candidates. A sriov-required tenant takes the first one, as the
        baseline does. A sriov-preferred tenant asks Placement for no VF, so the weigher prefers
        the PF with the most VFs that Placement shows free, less the sriov-preferred tenants
        already there: those may hold the VFs that Placement counts as free."""
        if self.kinds[cls] != "sriov-preferred":
            return reqs
        pref_tags = [tag_class(n) for n, k in self.kinds.items() if k == "sriov-preferred"]

        def spare(req):
            s = summaries[req["mappings"]["1"][0]]["resources"]
            vf = s.get(VF, {"capacity": 0, "used": 0})
            return vf["capacity"] - vf["used"] - sum(s.get(t, {}).get("used", 0) for t in pref_tags)
        return sorted(reqs, key=spare, reverse=True)

    def schedule(self, consumer, st):
        """Claim the best candidate not tried yet; True when a claim was made."""
        if st["attempts"] >= MAX_ATTEMPTS:
            return False
        doc = self.c.ok("GET", query(self.flavor(st["cls"])))
        reqs = [r for r in doc["allocation_requests"] if r["mappings"]["1"][0] not in st["tried"]]
        for req in self.order(st["cls"], reqs, doc["provider_summaries"]):
            rp = req["mappings"]["1"][0]
            if rp not in self.rps:
                self.refresh_providers()
            if _claim(self.c, consumer, req) == 204:
                host, pf = self.rps[rp]
                st.update(rp=rp, host=host, pf=pf, t_claim=time.monotonic(), attempts=st["attempts"] + 1)
                st["tried"].add(rp)
                return True
        if not doc["allocation_requests"]:
            st["no_candidates"] = True
        return False

    def truth(self):
        """What each PF could give a new sriov-required tenant now, in sriovd's own figures."""
        out = {}
        snap = self.fleet.snapshot()
        for h in self.fleet.hosts:
            s = snap[h.name]
            for pf, dev in s["devices"].items():
                d = {"vf": self.fleet.sriovd_free(s, pf)}
                avail = dev.get("ClassAvailable")
                for n, k in self.kinds.items():
                    if k == "sriov-required":
                        d[n] = avail.get(n, 0) if avail is not None else d["vf"]
                out[(h.name, pf)] = d
        return out

    def run(self, trace, faults=None, idle_after=None, idle_seconds=0.0):
        """Replay the trace. After round idle_after, pause idle_seconds with nothing to do: the
        requests the connectors make then are the ones they make without any change."""
        faults = faults or {}
        fig = Figures("sriovd", self.fleet.total_vfs())
        self.refresh_providers()
        t0 = time.time()
        for r, events in enumerate(trace):
            self.round(r, events, faults.get(r), fig)
            if r == idle_after:
                i0 = time.time()
                time.sleep(idle_seconds)
                fig.idle = (i0, time.time())
        fig.window = (t0, time.time())
        return fig

    def round(self, r, events, fault, fig):
        truth = self.truth()
        pending, departing, refused_required = {}, {}, 0
        reschedules = fig.reschedules
        if fault == "stale-offer":
            stale = self.stale_offer()
        for ev in events:
            consumer = ev[1]
            if ev[0] == "depart":
                if consumer in self.live:
                    fig.changes += 1
                    self.c.ok("DELETE", f"/allocations/{consumer}", codes=(204,))
                    departing[consumer] = self.live.pop(consumer)["host"]
                continue
            fig.changes += 1
            cls = ev[2]
            kind = self.kinds[cls]
            st = {"cls": cls, "kind": kind, "attempts": 0, "tried": set(), "why": []}
            if kind == "sriov-required":
                fig.required += 1
                st["had_vf"] = any(min(d["vf"], d[cls]) > 0 for d in truth.values())
                fig.required_had_vf += st["had_vf"]
            elif kind == "sriov-preferred":
                fig.preferred += 1
            if self.schedule(consumer, st):
                if kind == "sriov-required":
                    d = truth[(st["host"].name, st["pf"])]
                    for n in d:
                        d[n] -= 1
                pending[consumer] = st
            else:
                refused_required += self.unserved(consumer, st, fig, "Placement had no candidate")
        timeout = self.attach_timeout
        if fault == "stale-offer":
            os.kill(stale["host"].connector.pid, signal.SIGCONT)
        elif fault:
            fig.faults.append((r, fault, self.inject(fault, pending, departing)))
            timeout = self.fault_timeout
        refused_required += self.wait(pending, departing, timeout, fig, fig.attach_faults if fault else fig.attach)
        if fault == "stale-offer":
            for tid in stale["local"]:
                stale["host"].release(tid)
            n = fig.reschedules - reschedules
            fig.faults.append((r, fault, (stale["state"] == "T" and n > 0,
                                          f"{stale['host'].name}: connector stopped (state {stale['state']}) while "
                                          f"{len(stale['local'])} tenants, owner none, took PF {stale['pf']}'s VFs; "
                                          f"{n} claims on the stale offer were refused and rescheduled")))
        self.quiet(r, fig, refused_required)

    def unserved(self, consumer, st, fig, why):
        """Book a tenant that got no place; 1 when it was a sriov-required one."""
        if st.get("no_candidates"):
            fig.no_candidates[st["cls"]] = fig.no_candidates.get(st["cls"], 0) + 1
        if st["kind"] != "sriov-required":
            # A tenant that does not need a VF always has a place: this is a failure.
            self.errors.append(f"{consumer} ({st['cls']}) got no place: {'; '.join(st['why'] + [why])}")
            return 0
        if st["had_vf"]:
            fig.unserved.append(f"{consumer} ({st['cls']}): {'; '.join(st['why'] + [why])}")
        return 1

    def wait(self, pending, departing, timeout, fig, attach):
        """Wait until every claim is served or refused, and every departure released."""
        cond = self.fleet.cond
        refused_required = 0
        release_deadline = time.monotonic() + timeout
        for st in pending.values():
            st["deadline"] = st["t_claim"] + timeout
        while pending or departing:
            actions = []
            with cond:
                for h in self.fleet.hosts:
                    if h.watcher.error:
                        raise RuntimeError(f"{h.name}: the watcher failed:\n{h.watcher.error}")
                now = time.monotonic()
                for consumer, st in pending.items():
                    w = st["host"].watcher
                    t = w.tenants.get(consumer)
                    if t is not None and t.get("State") == "allocated" and (
                            st["kind"] != "sriov-required" or (t.get("Kind") == "vf" and t.get("Pf") == st["pf"])):
                        actions.append(("served", consumer, t.get("Kind"), w.vf_at.get(consumer)))
                    elif st["kind"] == "sriov-required" and t is not None and t.get("State") == "waiting":
                        actions.append(("refused", consumer, f"{st['host'].name} has it waiting for a VF of {st['pf']}"))
                    elif now > st["deadline"]:
                        what = f"kind {t.get('Kind')} state {t.get('State')}" if t else "no tenant"
                        actions.append(("refused", consumer, f"{st['host'].name}: {what} after {timeout:.0f} s"))
                for consumer, h in departing.items():
                    if h.watcher.up and consumer not in h.watcher.tenants:
                        actions.append(("gone", consumer))
                    elif now > release_deadline:
                        actions.append(("stuck", consumer))
                if not actions:
                    cond.wait(0.25)
                    continue
            for a in actions:
                consumer = a[1]
                if a[0] == "gone":
                    departing.pop(consumer)
                elif a[0] == "stuck":
                    self.errors.append(f"{departing.pop(consumer).name}: {consumer} not released "
                                       f"{timeout:.0f} s after its allocation was deleted")
                elif a[0] == "served":
                    st = pending.pop(consumer)
                    self.live[consumer] = {"cls": st["cls"], "host": st["host"], "pf": st["pf"], "rp": st["rp"]}
                    if st["kind"] == "sriov-required":
                        fig.required_served += 1
                        fig.required_had_vf_served += st["had_vf"]
                        if a[3] is not None:
                            attach.append(max(0.0, a[3] - st["t_claim"]))
                    elif st["kind"] == "sriov-preferred":
                        fig.preferred_vf_at_arrival += a[2] == "vf"
                else:
                    st = pending.pop(consumer)
                    st["why"].append(a[2])
                    fig.reschedules += 1
                    self.c.ok("DELETE", f"/allocations/{consumer}", codes=(204,))
                    if self.schedule(consumer, st):
                        st["deadline"] = st["t_claim"] + timeout
                        pending[consumer] = st
                    else:
                        refused_required += self.unserved(consumer, st, fig, "no candidate left")
        return refused_required

    def quiet(self, r, fig, refused_required):
        took, mm = self.fleet.settle(self.settle_timeout)
        fig.quiet_points += 1
        fig.settle.append(took)
        if mm:
            fig.mismatch_points.append((r, mm))
            self.log(f"round {r}: {len(mm)} mismatches after {took:.1f} s: " + "; ".join(mm[:4]))
        snap = self.fleet.snapshot()
        # The trace's tenants only: the faults' own tenants are not in the baseline's run.
        used = sum(1 for s in snap.values() for t in s["tenants"].values()
                   if t.get("Kind") == "vf" and t.get("Owner") == "placement")
        demand = refused_required + sum(1 for v in self.live.values()
                                        if self.kinds[v["cls"]] in ("sriov-required", "sriov-preferred"))
        pref = [c for c, v in self.live.items() if self.kinds[v["cls"]] == "sriov-preferred"]
        pref_vf = sum(1 for c in pref if snap[self.live[c]["host"].name]["tenants"].get(c, {}).get("Kind") == "vf")
        fig.rounds.append({"used": used, "demand": demand, "pref_alive": len(pref), "pref_vf": pref_vf})

    # ---- faults ----

    def stale_offer(self):
        """Make Placement offer a PF that sriovd cannot serve: stop the connector of the PF that a
        latency-critical claim would take first, then give that PF's VFs to tenants that do not
        come through Placement. Claims on the stale offer are refused, and must be rescheduled."""
        doc = self.c.ok("GET", query(self.flavor("latency-critical")))
        host, pf = self.rps[doc["allocation_requests"][0]["mappings"]["1"][0]]
        os.kill(host.connector.pid, signal.SIGSTOP)
        state = stopped(host.connector.pid)
        local = []
        while True:
            tid = f"local-{pf[5:7]}-{len(local)}"
            try:
                host.allocate(tid, "latency-critical", {"pf": ("s", pf)})
            except minibus.Error as e:
                if e.name != "org.sriovd.Error.NoCapacity":
                    raise
                break
            local.append(tid)
        return {"host": host, "pf": pf, "state": state, "local": local}

    def target(self, pending):
        """The host of a claim in flight, so the fault hits work under way; host-2 otherwise."""
        for st in pending.values():
            return st["host"]
        return self.fleet.hosts[min(1, len(self.fleet.hosts) - 1)]

    def inject(self, fault, pending, departing):
        if fault == "kill-sriovd":
            h = self.target(pending)
            before = set(h.watcher.tenants)
            syncs = h.watcher.syncs
            old = h.sriovd.pid
            sig = h.kill_sriovd()
            time.sleep(2.0)     # the unit's RestartSec
            h.start_sriovd()
            with self.fleet.cond:
                self.fleet.cond.wait_for(lambda: h.watcher.up and h.watcher.syncs > syncs, 30.0)
                lost = sorted(before - set(h.watcher.tenants) - set(departing))
            ok = sig == 9 and h.sriovd.pid != old and not lost
            return (ok, f"{h.name}: sriovd pid {old} ended by signal {sig}, restarted as pid {h.sriovd.pid}; "
                        f"{len(before)} tenants before, lost {lost or 'none'}")
        if fault == "kill-connector":
            h = self.target(pending)
            old = h.connector.pid
            sig = h.kill_connector()
            time.sleep(2.0)
            h.start_connector()
            return (sig == 9 and h.connector.pid != old,
                    f"{h.name}: connector pid {old} ended by signal {sig}, restarted as pid {h.connector.pid}")
        if fault == "stop-placement":
            p = self.fleet.placement
            p.pause()
            state = stopped(p.proc.pid)
            probe = p.client("probe", timeout=1.0)
            try:
                answered = probe.get("/")[0]
            except OSError:
                answered = None
            # A tenant that does not come through Placement takes a VF while Placement is away:
            # the connector must reserve it once Placement is back. It goes where sriovd has a
            # VF for it; on a full fleet it takes virtio-net, which changes no inventory.
            snap = self.fleet.snapshot()
            free = {h.name: sum(self.fleet.sriovd_free(snap[h.name], pf) for pf in snap[h.name]["devices"])
                    for h in self.fleet.hosts}
            h = max(self.fleet.hosts, key=lambda x: free[x.name])
            tid = f"local-{len(self.local)}"
            rec = h.allocate(tid, "latency-critical" if free[h.name] else "best-effort")
            self.local.append((h, tid))
            time.sleep(self.placement_stop)
            p.resume()
            return (state == "T" and answered is None,
                    f"Placement stopped {self.placement_stop:.0f} s (state {state}, a request "
                    f"{'timed out' if answered is None else f'got {answered}'}); meanwhile {h.name} gave "
                    f"{tid}, owner none, a {rec.get('kind')}")
        if fault == "kill-placement":
            p = self.fleet.placement
            before = len(self.fleet.checker.ok("GET", "/resource_providers")["resource_providers"])
            old = p.proc.pid
            sig = p.kill()
            released = []
            for h, tid in self.local:
                h.release(tid)
                released.append(f"{h.name} {tid}")
            self.local = []
            p.start()
            after = len(self.fleet.checker.ok("GET", "/resource_providers")["resource_providers"])
            return (sig == 9 and before == after,
                    f"Placement pid {old} ended by signal {sig}, restarted on the same database as pid "
                    f"{p.proc.pid} with {after} of {before} providers; released meanwhile: {released or 'none'}")
        raise ValueError(f"unknown fault {fault!r}")


# ---- the report ----

TREE = "/resource_providers?in_tree="
# What the estimate assumes of a cloud of 1,000 hosts.
EST_HOSTS = 1000
EST_POLL_INTERVAL = 2.0         # the connector's default
EST_CHANGES_PER_HOST_MIN = 1.0  # a busy cloud: one tenant change per host and minute


def request_figures(placement, fig, nhosts):
    """Placement requests of a run, as the server counted them, by who made them.

    A connector's pass reads the provider tree and the allocations of its PF providers that
    have any; its writes (inventories, traits, providers) follow sriovd's changes. The idle
    pause gives the reads of a pass when nothing changes.
    """
    t0, t1 = fig.window
    rs = [r for r in placement.requests() if t0 <= r[0] <= t1]
    sched = [r for r in rs if r[2] in ("scheduler", "scheduler-base")]
    agents = [r for r in rs if r[2].startswith("host-")]
    writes = [r for r in agents if r[3] != "GET"]
    idle, idle_secs = [], 0.0
    if fig.idle:
        idle = [r for r in agents if fig.idle[0] <= r[0] <= fig.idle[1]]
        idle_secs = fig.idle[1] - fig.idle[0]
    passes = [r for r in idle if r[3] == "GET" and r[4].startswith(TREE)]
    changes = max(fig.changes, 1)

    def mean_s(lst):
        return sum(r[1] for r in lst) / len(lst) if lst else float("nan")
    return {"changes": fig.changes, "seconds": t1 - t0,
            "scheduler": len(sched) / changes, "sched_s": mean_s(sched),
            "writes": len(writes) / changes, "write_s": mean_s(writes),
            "agents": len(agents) / changes,
            "idle_per_host_s": len(idle) / (nhosts * idle_secs) if idle_secs else float("nan"),
            "passes_per_host_s": len(passes) / (nhosts * idle_secs) if idle_secs else float("nan"),
            "reads_per_pass": len(idle) / len(passes) if passes else float("nan"), "read_s": mean_s(idle),
            "queued_s": sum(r[6] for r in rs) / len(rs) if rs else float("nan"),
            "errors": sorted({f"{r[2]} {r[3]} {r[4].split('?')[0]} {r[5]}" for r in rs if r[5][0] == "5"})}


def estimate(q):
    """Placement's load for EST_HOSTS hosts, from the requests measured in the sriovd run. A
    change costs the scheduler's requests, the connector's writes, and at most one more pass."""
    idle = EST_HOSTS / EST_POLL_INTERVAL * q["reads_per_pass"]
    changes = EST_HOSTS * EST_CHANGES_PER_HOST_MIN / 60.0
    per_change = q["scheduler"] + q["writes"] + q["reads_per_pass"]
    busy = idle * q["read_s"] + changes * (q["scheduler"] * q["sched_s"] + q["writes"] * q["write_s"]
                                           + q["reads_per_pass"] * q["read_s"])
    return {"idle": idle, "changes": changes, "per_change": per_change, "change_req": changes * per_change,
            "total": idle + changes * per_change, "busy": busy}


def fmt_pct(x):
    return "-" if x != x else f"{100 * x:.1f}%"


def fmt_ratio(a, b):
    if a != a or b != b or not b:
        return "-"
    return f"{a / b:.2f}x"


def report(base, sd, qb, qs, poll_interval, log=print):
    """The side-by-side table; returns the lines too."""
    rows = []

    def row(name, b, s, ratio=""):
        rows.append((name, b, s, ratio))
    row("fleet VF utilization, time-weighted", fmt_pct(base.utilization()), fmt_pct(sd.utilization()),
        fmt_ratio(sd.utilization(), base.utilization()))
    row(f"  at saturation ({len(base.saturated())} | {len(sd.saturated())} rounds)",
        fmt_pct(base.utilization_saturated()), fmt_pct(sd.utilization_saturated()),
        fmt_ratio(sd.utilization_saturated(), base.utilization_saturated()))
    row("sriov-required tenants served", f"{base.required_served}/{base.required}",
        f"{sd.required_served}/{sd.required}")
    row("  of those arriving while the fleet had a VF for them",
        f"{base.required_had_vf_served}/{base.required_had_vf} = "
        f"{fmt_pct(base.required_had_vf_served / base.required_had_vf if base.required_had_vf else float('nan'))}",
        f"{sd.required_had_vf_served}/{sd.required_had_vf} = "
        f"{fmt_pct(sd.required_had_vf_served / sd.required_had_vf if sd.required_had_vf else float('nan'))}")
    row("sriov-preferred tenants on a VF, at arrival", f"{base.preferred_vf_at_arrival}/{base.preferred}",
        f"{sd.preferred_vf_at_arrival}/{sd.preferred}")
    row("  share of their time on a VF", fmt_pct(base.preferred_on_vf()), fmt_pct(sd.preferred_on_vf()),
        fmt_ratio(sd.preferred_on_vf(), base.preferred_on_vf()))
    row("claim to VF attached, p50 / p99", "- (no agent)",
        f"{percentile(sd.attach, 50) * 1000:.0f} / {percentile(sd.attach, 99) * 1000:.0f} ms")
    row("  in the rounds with a fault", "-",
        f"{percentile(sd.attach_faults, 50) * 1000:.0f} / {percentile(sd.attach_faults, 99) * 1000:.0f} ms")
    row("Placement requests per tenant change", f"{qb['scheduler']:.2f}",
        f"{qs['scheduler'] + qs['agents']:.2f}")
    row("  scheduler", f"{qb['scheduler']:.2f}", f"{qs['scheduler']:.2f}")
    row("  host agents' writes", "-", f"{qs['writes']:.2f}")
    row("  host agents' reads, polls included", "-", f"{qs['agents'] - qs['writes']:.2f}")
    row(f"idle host agent: requests per second ({qs['reads_per_pass']:.1f} a pass)", "-",
        f"{qs['idle_per_host_s']:.2f}")
    row("reschedules", "0", str(sd.reschedules))
    row(f"mismatches at quiet points ({sd.quiet_points})", "-",
        str(sum(len(m) for _, m in sd.mismatch_points)))
    w = max(len(r[0]) for r in rows)
    wb = max(len(r[1]) for r in rows + [("", "nova alone", "", "")])
    ws = max(len(r[2]) for r in rows + [("", "", "sriovd", "")])
    lines = [f"{'':{w}}  {'nova alone':>{wb}}  {'sriovd':>{ws}}  sriovd/nova"]
    for name, b, s, ratio in rows:
        lines.append(f"{name:{w}}  {b:>{wb}}  {s:>{ws}}  {ratio}")
    e = estimate(qs)
    lines += ["",
              f"Placement at {EST_HOSTS} hosts, connectors polling every {EST_POLL_INTERVAL:g} s: "
              f"{e['idle']:.0f} requests/s without changes ({qs['reads_per_pass']:.1f} a pass), plus "
              f"{e['change_req']:.0f}/s for {e['changes']:.1f} tenant changes/s (one per host and minute; "
              f"{e['per_change']:.2f} requests each: the scheduler's, the connector's writes and one more pass): "
              f"{e['total']:.0f} requests/s.",
              f"At the service times measured here ({qs['read_s'] * 1000:.0f} ms a connector's read, "
              f"{qs['write_s'] * 1000:.0f} ms a write, {qs['sched_s'] * 1000:.0f} ms a scheduler's request), "
              f"that keeps {e['busy']:.1f} Placement workers busy."]
    for ln in lines:
        log(ln)
    return lines


# ---- one run of both ----

def replay_both(fleet, trace, faults, attach_timeout, idle_after=None, idle_seconds=0.0, log=print):
    """The trace against the baseline, then through sriovd: (baseline, sriovd, controller)."""
    base = run_baseline(fleet, trace, fleet.kinds, log=log)
    log(f"baseline: {len(trace)} rounds in {base.window[1] - base.window[0]:.0f} s")
    ctl = Controller(fleet, fleet.kinds, attach_timeout=attach_timeout, log=log)
    sd = ctl.run(trace, faults=faults, idle_after=idle_after, idle_seconds=idle_seconds)
    log(f"sriovd: {len(trace)} rounds in {sd.window[1] - sd.window[0]:.0f} s")
    for r, name, (ok, what) in sd.faults:
        log(f"fault in round {r}, {name}: {'took effect' if ok else 'DID NOT TAKE EFFECT'}: {what}; "
            f"the round's claims settled, then Placement and sriovd agreed after {sd.settle[r]:.1f} s")
    for ln in sd.unserved:
        log(f"sriovd: not served: {ln}")
    for e in ctl.errors:
        log(f"error: {e}")
    return base, sd, ctl


def main(sriovd, connector, source, phases, faults, idle_after, **kw):
    """run_fleet() for a script: its exit status, 77 when the fleet cannot run here."""
    import fleet
    why = fleet.why_not()
    if why:
        print(f"SKIP: {why}")
        return 77
    failures = run_fleet(sriovd, connector, source, phases, faults, idle_after,
                         log=lambda *a: print(*a, flush=True), **kw)
    return 1 if failures else 0


def run_fleet(sriovd, connector, source, phases, faults, idle_after, hosts=8, poll=0.5, seed=1, keep=False,
              min_utilization=0.85, min_saturated=5, log=print):
    """A fleet, the trace through both, the report and the verdict: the list of failures.

    The failures are what the fleet's goals forbid: a sriov-required tenant not served while the
    fleet had a VF for it, VF utilization under min_utilization at saturation, a mismatch at a
    quiet point, a fault that did not take effect, a server error, a tenant without a place.
    """
    import os
    import shutil
    import signal
    import sys
    import tempfile
    import fleet
    # meson's timeout sends SIGTERM: stop the fleet on the way out, as on any failure.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    base_dir = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="sriovd-fleet-", dir=base_dir)
    t0 = time.monotonic()
    f = fleet.Fleet(work, source, sriovd, [connector], hosts=hosts, poll_interval=poll, seed=seed, log=log)
    failures = []
    try:
        f.start()
        missing = f.wait_published()
        if missing:
            raise RuntimeError(f"the connectors did not publish every PF: {missing}")
        took, mm = f.settle(20.0)
        if mm:
            failures.append(f"Placement and sriovd disagree before the trace: {mm}")
        trace = make_trace(seed, phases)
        if callable(faults):
            faults = faults(trace)
        log(f"seed {seed}: {len(trace)} rounds, {sum(len(r) for r in trace)} events, {hosts} hosts, "
            f"{f.total_vfs()} VFs, connectors poll every {poll:g} s; work directory {work}")
        base, sd, ctl = replay_both(f, trace, faults, attach_timeout=max(10.0, 8 * poll),
                                    idle_after=idle_after, idle_seconds=max(5.0, 10 * poll), log=log)
        took, mm = f.settle(20.0)
        if mm:
            failures.append(f"Placement and sriovd disagree at the end: {mm}")
        qb = request_figures(f.placement, base, hosts)
        qs = request_figures(f.placement, sd, hosts)
        log("")
        report(base, sd, qb, qs, poll, log=log)
        log(f"quiet points agreed within {max(sd.settle):.1f} s at most; Placement's requests waited "
            f"{qs['queued_s'] * 1000:.0f} ms on average for its one worker")
        log("")
        if sd.required_had_vf_served != sd.required_had_vf:
            failures.append(f"{sd.required_had_vf - sd.required_had_vf_served} sriov-required tenants were not "
                            f"served while the fleet had a VF for them")
        if len(sd.saturated()) < min_saturated:
            failures.append(f"the trace saturated the fleet in {len(sd.saturated())} rounds, fewer than {min_saturated}")
        elif not sd.utilization_saturated() >= min_utilization:
            failures.append(f"VF utilization at saturation {fmt_pct(sd.utilization_saturated())} is below "
                            f"{fmt_pct(min_utilization)}")
        for r, mm in sd.mismatch_points:
            failures.append(f"round {r}: {len(mm)} mismatches: {'; '.join(mm)}")
        for r, name, (ok, what) in sd.faults:
            if not ok:
                failures.append(f"fault {name} in round {r} did not take effect: {what}")
        if len(sd.faults) != len(faults):
            failures.append(f"{len(sd.faults)} of {len(faults)} faults were injected")
        failures += ctl.errors
        for q in (qb, qs):
            failures += [f"Placement answered with a server error: {e}" for e in q["errors"]]
    except Exception:
        import traceback
        failures.append("the run failed:\n" + traceback.format_exc())
    finally:
        f.stop()
    # Leaks are reported when a daemon exits, so only now.
    failures += [f"sanitizer report: {x}" for x in f.sanitizer_reports()]
    log(f"{time.monotonic() - t0:.0f} s in all")
    if failures or keep:
        log(f"work directory kept: {work} (each host's logs/ holds its sriovd and connector logs)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    for x in failures:
        log(f"FAIL: {x}")
    return failures
