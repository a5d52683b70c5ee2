# SPDX-License-Identifier: LGPL-2.1-or-later
# traffic.sh — guest 6: sriovd's sampler on a real kernel. sriovd runs as a daemon with a 1 s
# monitor period, a metrics file and an alert rule on VF 0's tx packet rate; frames sent out of
# VF 0's netdev at a steady rate for a while (the e1000e on the same QEMU hub receives them)
# must show in the file and raise the alert after its periods, and clear it once they stop.
# The guest has no journald: traffic-probe binds its socket and records sriovd's entries (with
# their MESSAGE_IDs) and every version of the metrics file, in the order they came.
RATE=100
SECONDS_ON=8
mkdir -p /run/systemd/journal
traffic-probe watch /run/systemd/journal/socket /tmp/sriovd.prom > /tmp/watch.out 2> /tmp/watch.err &
WATCH=$!
wait_for 10 [ -s /tmp/watch.out ]

pf_up
: > /tmp/daemon.log
# journald's own rule (JOURNAL_STREAM names stderr): sriovd logs natively, with its fields.
JOURNAL_STREAM=$(stat -c '%d:%i' /tmp/daemon.log) sriovd --config /vm/conf-traffic/sriovd.conf >> /tmp/daemon.log 2>&1 &
DAEMON=$!

wait_for 120 vf_netdevs_ready
VF0=$(vf_addrs | head -n1)
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
PEER=
for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/device")" = 0x10d3 ] && PEER=$(ls "$d/net" 2>/dev/null | head -n1)
done
vfs_up
"$IP" link set "$PEER" up
carrier() {
        [ "$(cat "/sys/class/net/$VFNET/carrier" 2>/dev/null)" = 1 ] &&
                [ "$(cat "/sys/class/net/$PEER/carrier" 2>/dev/null)" = 1 ]
}
# Every VF's, not just VF 0's: a VF that opens late makes igb reset its siblings' links (CI saw
# VF 3 up 2 s after the rest take VF 0's carrier away for 10 s, through the whole traffic).
settle_carrier vfs_carrier
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
wait_for 60 carrier
# The VF's vectors (there once its netdev is up) in the exported file: the drift checks re-read the inventory.
vf_irqs_sampled() {
        grep -q "^sriovd_irq_interrupts_total{.*vf=\"$VF0\"" /tmp/sriovd.prom 2>/dev/null
}
wait_for 60 vf_irqs_sampled
# igbvf may still reset a VF after its link first came up (CI saw VF 0's go down 2 s after, for 10 s,
# through the traffic): the VFs settled first, VF 0's carrier changes recorded around the traffic.
settle 40
wait_for 20 carrier
# A few quiet periods first: the rule's baseline.
sleep 4
emit "{\"step\":\"traffic-setup\",\"vf\":\"$VF0\",\"vfnet\":\"$VFNET\",\"peer\":\"$PEER\",\"carrier\":\"$(cat /sys/class/net/$VFNET/carrier 2>/dev/null)$(cat /sys/class/net/$PEER/carrier 2>/dev/null)\",\"carrier_changes\":\"$(cat /sys/class/net/$VFNET/carrier_changes)\",\"rate\":$RATE,\"seconds\":$SECONDS_ON}"
step send traffic-probe send "$VFNET" "$RATE" "$SECONDS_ON"
emit "{\"step\":\"traffic-sent\",\"carrier_changes\":\"$(cat /sys/class/net/$VFNET/carrier_changes)\"}"
# Cleared once 3 quiet periods follow; the deadline only bounds a broken run.
cleared() {
        grep -q 58fcbe781d9a41a396bbf0b5c90aa369 /tmp/watch.out
}
wait_for 60 cleared
sleep 2
snapshot traffic

kill -TERM $DAEMON
wait $DAEMON
RC=$?
kill -TERM $WATCH
wait $WATCH
emit_file daemon-log /tmp/daemon.log $RC
emit_file watch /tmp/watch.out
emit_file watch-err /tmp/watch.err
