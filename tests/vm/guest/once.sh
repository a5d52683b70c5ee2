# SPDX-License-Identifier: LGPL-2.1-or-later
# once.sh — guests 1 and 2 (std + threadirqs, PREEMPT_RT): sriovd --once creates and configures
# 4 VFs, a second --once finds nothing to do, a third pins the VFs' vectors once their links are
# up (igbvf requests them at open) and a fourth finds nothing to do again, and a VF count change is refused while a tenant
# holds a VF (allocations.json seeded by the host, as sriovd would have saved it). Then vf_clean: a
# tenant's VF gets the clean baseline for what it does not set, and once released (its tenant gone
# from the state) a VF the tenant left with trust, no spoof check, a rate and a forced link is clean.
# Then a rate cap per tenant, from its class and its own, on the VFs, and gone at release.
# Last, RT softirq work on a stock kernel (conf-napi): threaded NAPI on the PF and the VFs, one
# channel on the PF (new IRQs pinned in the same --once), ksoftirqd (and ktimers, rcuc where the
# kernel has them) on the RT CPU at their [rt] priorities; a second --once changes nothing.
# Each check that a run changes nothing is made with once_again (lib.sh): on a settled host, with
# the MACs igbvf sent of its own put back first.
pf_up
emit "{\"step\":\"cmdline\",\"text\":\"$(cat /proc/cmdline)\"}"
sriovd_once once-1 /vm/conf/sriovd.conf
snapshot after-1
once_again once-2 /vm/conf/sriovd.conf
# The VF netdevs up: igbvf requests its vectors (and their irq/N- threads appear) only now.
vfs_up
# Settled first: a trusted VF's driver sets its own MAC at each reset while it opens.
once_settled once-3 /vm/conf/sriovd.conf 30
snapshot after-3
once_again once-4 /vm/conf/sriovd.conf
mkdir -p /tmp/sriovd-state
cp /vm/allocations.json /tmp/sriovd-state/allocations.json
settle
sriovd_once refuse /vm/conf-2vfs/sriovd.conf
snapshot after-refuse

# vf_clean, with a policy that names none of the VF settings (conf-clean).
rm -rf /tmp/sriovd-state
mkdir -p /tmp/sriovd-state
cp /vm/allocations-clean.json /tmp/sriovd-state/allocations.json
once_settled clean-tenant /vm/conf-clean/sriovd.conf
snapshot clean-tenant
# What the tenant's time left on VF 1, each alone: one the driver refuses does not stop the rest.
for s in "trust on" "spoofchk off" "max_tx_rate 100" "state enable"; do
        "$IP" link set "$PF_NETDEV" vf 1 $s 2> /tmp/dirty.err
        _rc=$?
        emit "{\"step\":\"dirty-${s%% *}\",\"rc\":$_rc,\"data\":\"$(base64 < /tmp/dirty.err | tr -d '\n')\"}"
done
# igb resets VF 1 at each of those changes, and igbvf then announces its MAC again: wait for the
# tenant's MAC, so the release below does not read VF 1 mid-reset (MAC zero, nothing to clean)
# and see igbvf put the tenant's MAC back after it.
wait_for 10 sh -c "\"$IP\" link show \"$PF_NETDEV\" | grep 'vf 1 ' | grep -q 52:54:00:aa:00:02"
snapshot clean-dirty
# Released: the tenant is no longer in the saved state.
rm -rf /tmp/sriovd-state
sriovd_once clean-release /vm/conf-clean/sriovd.conf
snapshot clean-released
# The clean itself makes igb reset VF 1, and igbvf then sends the PF its MAC: a clean leaves a MAC
# the driver picked alone.
once_again clean-again /vm/conf-clean/sriovd.conf

# Rates per tenant (conf-rates): the class caps its tenants, and one tenant has a cap of its own.
# igb takes a VF's maximum rate only, and only while the PF's link is up.
rm -rf /tmp/sriovd-state
mkdir -p /tmp/sriovd-state
cp /vm/allocations-rates.json /tmp/sriovd-state/allocations.json
once_settled rates-1 /vm/conf-rates/sriovd.conf
settled_snapshot rates-1
once_again rates-2 /vm/conf-rates/sriovd.conf
rm -rf /tmp/sriovd-state
once_settled rates-release /vm/conf-rates/sriovd.conf
settled_snapshot rates-released

rm -rf /tmp/sriovd-state
mkdir -p /tmp/sriovd-state
settle
snapshot napi-0
sriovd_once napi-1 /vm/conf-napi/sriovd.conf
snapshot napi-1
# The channel change resets the PF, and with it every VF.
once_again napi-2 /vm/conf-napi/sriovd.conf
