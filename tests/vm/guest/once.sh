# SPDX-License-Identifier: LGPL-2.1-or-later
# once.sh — guests 1 and 2 (std + threadirqs, PREEMPT_RT): sriovd --once creates and configures
# 4 VFs, a second --once finds nothing to do, a third pins the VFs' vectors once their links are
# up (igbvf requests them at open) and a fourth finds nothing to do again, and a VF count change is refused while a tenant
# holds a VF (allocations.json seeded by the host, as sriovd would have saved it).
pf_up
emit "{\"step\":\"cmdline\",\"text\":\"$(cat /proc/cmdline)\"}"
sriovd_once once-1 /vm/conf/sriovd.conf
snapshot after-1
sriovd_once once-2 /vm/conf/sriovd.conf
# The VF netdevs up: igbvf requests its vectors (and their irq/N- threads appear) only now.
vfs_up
# Settled first: a trusted VF's driver may still set its own MAC while it opens.
wait_for 30 vfs_carrier
sriovd_once once-3 /vm/conf/sriovd.conf
snapshot after-3
sriovd_once once-4 /vm/conf/sriovd.conf
mkdir -p /tmp/sriovd-state
cp /vm/allocations.json /tmp/sriovd-state/allocations.json
sriovd_once refuse /vm/conf-2vfs/sriovd.conf
snapshot after-refuse
