#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-fleet.py — a fleet scheduled through the real OpenStack Placement, against nova alone

"""    bench-fleet.py SRIOVD SRIOVD_PLACEMENT SOURCE_DIR

A real Placement (python3-placement, SQLite, noauth2), 8 hosts each with sriovd on its own
fixture tree, its own bus and its own sriovd-placement polling at its default interval, and a
controller that replays a seeded trace as nova's scheduler would: candidates, a claim, the wait
for the host to serve the tenant, a reschedule on refusal. The same trace runs first against
nova alone: each host's VFs as plain inventory of the compute node, first fit, no classes, no
preemption. While the trace runs, sriovd and a connector are killed with SIGKILL and started
again, and Placement is stopped for a while, then killed and started again on its database.
Once, Placement offers a PF whose VFs went to tenants that did not come through Placement, while
its host's connector is stopped, and the claims on it are rescheduled.

Prints both runs side by side with their ratio, and an estimate of Placement's load for 1,000
hosts from the requests counted at the server. Fails when the fleet misses its goals: a
sriov-required tenant not served while the fleet had a VF for it, VF utilization under 85% at
saturation, a mismatch between Placement and a sriovd at a quiet point, or a fault that did not
take effect. Skips (77) without root, dbus-daemon or python3-placement.

Environment: SRIOVD_BENCH_FLEET_SEED (1), SRIOVD_BENCH_FLEET_POLL (the connectors' poll
interval, 2 s), SRIOVD_BENCH_FLEET_SCALE (1: rounds of each phase multiplied),
SRIOVD_BENCH_FLEET_KEEP=1 keeps the work directory.
"""

import os
import sys

SRIOVD, CONNECTOR, SOURCE = sys.argv[1:4]
sys.path.insert(0, os.path.join(SOURCE, "tests", "fleet"))
import replay  # noqa: E402

SEED = int(os.environ.get("SRIOVD_BENCH_FLEET_SEED", "1"))
POLL = float(os.environ.get("SRIOVD_BENCH_FLEET_POLL", "2"))
SCALE = float(os.environ.get("SRIOVD_BENCH_FLEET_SCALE", "1"))
KEEP = os.environ.get("SRIOVD_BENCH_FLEET_KEEP") == "1"
HOSTS = 8


def main():
    # (rounds, arrivals per round, mean lifetime in rounds): fill, a long saturated phase at
    # about 1.4 times the fleet's VFs, and a drain.
    fill, sat, drain = (max(1, round(n * SCALE)) for n in (10, 40, 14))
    phases = [(fill, 10, 40), (sat, 6, 20), (drain, 1, 8)]
    # Spread over the saturated phase, each after a round's claims, while they are in flight.
    faults = replay.with_stale_offer({fill + sat * k // 5: name for k, name in enumerate(
        ["kill-sriovd", "kill-connector", "stop-placement", "kill-placement"], start=1)}, fill + 1)
    return replay.main(SRIOVD, CONNECTOR, SOURCE, phases, faults, fill + sat - 1, hosts=HOSTS, poll=POLL, seed=SEED,
                       keep=KEEP)


if __name__ == "__main__":
    sys.exit(main())
