#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-fleet.py — 8 hosts scheduled through the real OpenStack Placement, with faults.
#
#   test-fleet.py SRIOVD
#
# A real Placement (python3-placement, SQLite, noauth2), 8 hosts each with sriovd on its own
# fixture tree, its own bus and its own sriovd-placement, and a controller that replays a seeded
# trace as nova's scheduler would. The same trace also runs against a nova-alone baseline. While
# the trace runs, sriovd and a connector are killed with SIGKILL and started again, and Placement
# is stopped for a while, then killed and started again on its database.
#
# It passes when every sriov-required tenant that arrived while the fleet had a VF for it is
# served, the fleet's VFs are at least 85% used at saturation, every fault took effect, and
# Placement and every sriovd agree at every quiet point. Skips (77) without root, dbus-daemon
# or python3-placement.
#
# Environment: SRIOVD_FLEET_SEED (1), SRIOVD_FLEET_POLL (the connectors' poll interval, 0.5 s),
# SRIOVD_FLEET_KEEP=1 keeps the work directory, which a failure always keeps.
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet  # noqa: E402
import replay  # noqa: E402

SRIOVD = sys.argv[1]
SOURCE = os.environ.get("SRIOVD_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SEED = int(os.environ.get("SRIOVD_FLEET_SEED", "1"))
POLL = float(os.environ.get("SRIOVD_FLEET_POLL", "0.5"))
KEEP = os.environ.get("SRIOVD_FLEET_KEEP") == "1"
HOSTS = 8
# (rounds, arrivals per round, mean lifetime in rounds): the fleet fills, stays over its VFs,
# then drains. The saturated phase asks for about 1.4 times the fleet's 64 VFs.
PHASES = [(8, 10, 30), (18, 6, 20), (6, 1, 6)]
# Each in a saturated round, after the round's claims, while they are in flight.
FAULTS = {12: "kill-sriovd", 15: "kill-connector", 18: "stop-placement", 22: "kill-placement"}
# A pause at the end of the saturated phase, with tenants on every PF: the connectors' requests
# without changes.
IDLE_AFTER = 25
MIN_UTILIZATION = 0.85
MIN_SATURATED_ROUNDS = 5


def log(*a):
    print(*a, flush=True)


def main():
    why = fleet.why_not()
    if why:
        print(f"SKIP: {why}")
        return 77
    kinds = fleet.class_kinds(os.path.join(SOURCE, "conf", "tenant-classes.d"))
    if not {"sriov-required", "sriov-preferred", "virtio"} <= set(kinds.values()):
        print(f"FAIL: the shipped classes {kinds} do not cover every vnic kind")
        return 1
    base_dir = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="sriovd-fleet-", dir=base_dir)
    t0 = time.monotonic()
    f = fleet.Fleet(work, SOURCE, SRIOVD, [fleet.PYTHON, "-m", "sriovd_placement"], hosts=HOSTS,
                    poll_interval=POLL, seed=SEED,
                    connector_env=dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "src", "placement")), log=log)
    failures = []
    try:
        f.start()
        missing = f.wait_published()
        if missing:
            raise RuntimeError(f"the connectors did not publish every PF: {missing}")
        took, mm = f.settle(20.0)
        if mm:
            failures.append(f"Placement and sriovd disagree before the trace: {mm}")
        trace = replay.make_trace(SEED, PHASES)
        log(f"seed {SEED}: {len(trace)} rounds, {sum(len(r) for r in trace)} events, {HOSTS} hosts, "
            f"{f.total_vfs()} VFs, connectors poll every {POLL:g} s; work directory {work}")
        base, sd, ctl = replay.replay_both(f, trace, FAULTS, attach_timeout=max(10.0, 8 * POLL),
                                           idle_after=IDLE_AFTER, idle_seconds=10 * POLL, log=log)
        took, mm = f.settle(20.0)
        if mm:
            failures.append(f"Placement and sriovd disagree at the end: {mm}")
        qb = replay.request_figures(f.placement, base, HOSTS)
        qs = replay.request_figures(f.placement, sd, HOSTS)
        log("")
        replay.report(base, sd, qb, qs, POLL, log=log)
        log("")
        if sd.required_had_vf_served != sd.required_had_vf:
            failures.append(f"{sd.required_had_vf - sd.required_had_vf_served} sriov-required tenants were not "
                            f"served while the fleet had a VF for them")
        if len(sd.saturated()) < MIN_SATURATED_ROUNDS:
            failures.append(f"the trace saturated the fleet in {len(sd.saturated())} rounds, "
                            f"fewer than {MIN_SATURATED_ROUNDS}")
        elif not sd.utilization_saturated() >= MIN_UTILIZATION:
            failures.append(f"VF utilization at saturation {fmt(sd.utilization_saturated())} is below "
                            f"{fmt(MIN_UTILIZATION)}")
        for r, mm in sd.mismatch_points:
            failures.append(f"round {r}: {len(mm)} mismatches: {'; '.join(mm)}")
        for r, name, (ok, what) in sd.faults:
            if not ok:
                failures.append(f"fault {name} in round {r} did not take effect: {what}")
        if len(sd.faults) != len(FAULTS):
            failures.append(f"{len(sd.faults)} of {len(FAULTS)} faults were injected")
        failures += ctl.errors
        for q in (qb, qs):
            failures += [f"Placement answered with a server error: {e}" for e in q["errors"]]
    except Exception:
        import traceback
        failures.append("the test failed to run:\n" + traceback.format_exc())
    finally:
        f.stop()
    log(f"{time.monotonic() - t0:.0f} s in all")
    if failures or KEEP:
        log(f"work directory kept: {work} (each host's logs/ holds its sriovd and connector logs)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    for x in failures:
        log(f"FAIL: {x}")
    if failures:
        return 1
    log("PASS")
    return 0


def fmt(x):
    return f"{100 * x:.1f}%"


if __name__ == "__main__":
    sys.exit(main())
