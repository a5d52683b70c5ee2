#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-fleet.py — 8 hosts scheduled through the real OpenStack Placement, with faults.
#
#   test-fleet.py SRIOVD SRIOVD_PLACEMENT
#
# A real Placement (python3-placement, SQLite, noauth2), 8 hosts each with sriovd on its own
# fixture tree, its own bus and its own sriovd-placement, and a controller that replays a seeded
# trace as nova's scheduler would. The same trace also runs against a nova-alone baseline. While
# the trace runs, sriovd and a connector are killed with SIGKILL and started again, and Placement
# is stopped for a while, then killed and started again on its database. Once, Placement offers a
# PF whose VFs went to tenants that did not come through Placement, and the claims on it must be
# rescheduled.
#
# It passes when every sriov-required tenant that arrived while the fleet had a VF for it is
# served, the fleet's VFs are at least 85% used at saturation, every fault took effect, and
# Placement and every sriovd agree at every quiet point. Skips (77) without root, dbus-daemon
# or python3-placement.
#
# Environment: SRIOVD_FLEET_SEED (1), SRIOVD_FLEET_POLL (the connectors' poll interval, 0.5 s),
# SRIOVD_FLEET_KEEP=1 keeps the work directory, which a failure always keeps.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet  # noqa: E402
import replay  # noqa: E402

SRIOVD, CONNECTOR = sys.argv[1:3]
SOURCE = os.environ.get("SRIOVD_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SEED = int(os.environ.get("SRIOVD_FLEET_SEED", "1"))
POLL = float(os.environ.get("SRIOVD_FLEET_POLL", "0.5"))
KEEP = os.environ.get("SRIOVD_FLEET_KEEP") == "1"
HOSTS = 8
# (rounds, arrivals per round, mean lifetime in rounds): the fleet fills, stays over its VFs,
# then drains. The saturated phase asks for about 1.4 times the fleet's 64 VFs.
PHASES = [(8, 10, 30), (18, 6, 20), (6, 1, 6)]
# Each in a saturated round, after the round's claims, while they are in flight. The stale offer
# comes before a round's claims: a PF that Placement still offers has no VF left on its host.
FAULTS = replay.with_stale_offer({12: "kill-sriovd", 15: "kill-connector", 18: "stop-placement",
                                  22: "kill-placement"}, 9)
# A pause at the end of the saturated phase, with tenants on every PF: the connectors' requests
# without changes.
IDLE_AFTER = 25


def main():
    kinds = fleet.class_kinds(os.path.join(SOURCE, "conf", "tenant-classes.d"))
    if not {"sriov-required", "sriov-preferred", "virtio"} <= set(kinds.values()):
        print(f"FAIL: the shipped classes {kinds} do not cover every vnic kind")
        return 1
    status = replay.main(SRIOVD, CONNECTOR, SOURCE, PHASES, FAULTS, IDLE_AFTER, hosts=HOSTS, poll=POLL, seed=SEED,
                         keep=KEEP)
    if status == 0:
        print("PASS")
    return status


if __name__ == "__main__":
    sys.exit(main())
