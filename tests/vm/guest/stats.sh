# SPDX-License-Identifier: LGPL-2.1-or-later
# stats.sh — guest 5: VF and netdev traffic counters as sriovd's reader gets them (netdev-stats.c,
# through tests/vm/vf-stats.c). VFs made by hand on the igb PF (no sriovd: the reader is what is
# tested), one VF netdev up with its carrier, the e1000e on the same QEMU hub as the receiver;
# vf-stats sends frames out of the VF and reads the PF's IFLA_VF_STATS and the netdevs'
# IFLA_STATS64 before and after.
FRAMES=300
pf_up
echo "$WANT_VFS" > "$PF/sriov_numvfs"
wait_for 60 vf_netdevs_ready
VF0=$(vf_addrs | head -n1)
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
PEER=
for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/device")" = 0x10d3 ] && PEER=$(ls "$d/net" 2>/dev/null | head -n1)
done
"$IP" link set "$VFNET" up
"$IP" link set "$PEER" up
vf0_carrier() {
        [ "$(cat "/sys/class/net/$VFNET/carrier" 2>/dev/null)" = 1 ] &&
                [ "$(cat "/sys/class/net/$PEER/carrier" 2>/dev/null)" = 1 ]
}
settle_carrier vf0_carrier
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
# igbvf may still reset the VF after its link first came up, taking the carrier away for seconds:
# the VF settled first.
settle 40
wait_for 20 vf0_carrier
emit "{\"step\":\"stats-setup\",\"pf\":\"$PF_NETDEV\",\"vf\":\"$VFNET\",\"peer\":\"$PEER\",\"carrier\":\"$(cat /sys/class/net/$VFNET/carrier 2>/dev/null)$(cat /sys/class/net/$PEER/carrier 2>/dev/null)\",\"frames\":$FRAMES}"
step vf-stats vf-stats "$PF_NETDEV" "$VFNET" "$PEER" "$FRAMES"
step iplink-stats "$IP" -s -d link show "$PF_NETDEV"
