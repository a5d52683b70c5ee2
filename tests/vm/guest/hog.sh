# SPDX-License-Identifier: LGPL-2.1-or-later
# hog.sh — an RT tenant's latency on a real kernel. sriovd runs as a daemon with a 1 s monitor
# period and a metrics file; tenant vm-rt-1 of an RT class holds VF 0, so VF 0's IRQ threads are
# tracked by the latency programs. Frames sent out of VF 0 wake those threads. After a few
# periods without it, a SCHED_FIFO hog above the threads' priority spins on the RT CPU in
# bursts: the threads' wakeup-to-run latency must show it in their histogram, and the built-in
# rule rt-thread-latency must raise its alert within its periods. As in traffic.sh,
# traffic-probe stands in for journald and records every version of the metrics file.
RATE=200
SECONDS_QUIET=8
HOG_SECONDS=15
HOG_PRIO=90
HOG_ON_MS=200
HOG_OFF_MS=20
mkdir -p /run/systemd/journal
# Only each period's p99, and the histogram before and after the hog: on PREEMPT_RT, the whole
# file of every period was more than the results port could send before the kernel found its
# IRQ unanswered too often and disabled it.
traffic-probe watch /run/systemd/journal/socket /tmp/sriovd.prom sriovd_thread_latency_p99_seconds \
        > /tmp/watch.out 2> /tmp/watch.err &
WATCH=$!
wait_for 10 [ -s /tmp/watch.out ]

mkdir -p /tmp/sriovd-state
cp /vm/allocations.json /tmp/sriovd-state/allocations.json
pf_up
: > /tmp/daemon.log
JOURNAL_STREAM=$(stat -c '%d:%i' /tmp/daemon.log) sriovd --config /vm/conf-hog/sriovd.conf >> /tmp/daemon.log 2>&1 &
DAEMON=$!

wait_for 120 vf_netdevs_ready
VF0=$(vf_addrs | head -n1)
PEER=
for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/device")" = 0x10d3 ] && PEER=$(ls "$d/net" 2>/dev/null | head -n1)
done
# VF 0 alone up: a sibling that opens later makes igb reset the others' links.
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
"$IP" link set "$VFNET" up
"$IP" link set "$PEER" up
carrier() {
        [ "$(cat "/sys/class/net/$VFNET/carrier" 2>/dev/null)" = 1 ] &&
                [ "$(cat "/sys/class/net/$PEER/carrier" 2>/dev/null)" = 1 ]
}
settle_carrier carrier
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
wait_for 60 carrier
# The tenant's IRQ threads tracked by BPF: their latency series in the file.
tracked() {
        grep -q '^sriovd_thread_latency_seconds_count{.*kind="irq"' /tmp/sriovd.prom 2>/dev/null
}
wait_for 60 tracked
settle 40
wait_for 20 carrier
emit "{\"step\":\"hog-setup\",\"vf\":\"$VF0\",\"vfnet\":\"$VFNET\",\"threads\":\"$(for i in $(ls /sys/bus/pci/devices/$VF0/msi_irqs); do for p in /proc/[0-9]*; do case "$(cat $p/comm 2>/dev/null)" in "irq/$i-"*) echo "${p#/proc/}:$(cat $p/comm):$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' $p/status)" ;; esac; done; done | tr '\n' ' ')\"}"
traffic-probe send "$VFNET" "$RATE" $((SECONDS_QUIET + HOG_SECONDS + 6)) > /tmp/send.out 2> /tmp/send.err &
SEND=$!
sleep "$SECONDS_QUIET"
grep '^sriovd_thread_latency_seconds_' /tmp/sriovd.prom > /tmp/hist-before
step hog traffic-probe hog "$WANT_CPUS" "$HOG_PRIO" "$HOG_ON_MS" "$HOG_OFF_MS" "$HOG_SECONDS"
grep '^sriovd_thread_latency_seconds_' /tmp/sriovd.prom > /tmp/hist-after
emit_file hist-before /tmp/hist-before
emit_file hist-after /tmp/hist-after
wait $SEND
emit_step send $?
sleep 2

kill -TERM $DAEMON
wait $DAEMON
RC=$?
kill -TERM $WATCH
wait $WATCH
emit_file daemon-log /tmp/daemon.log $RC
emit_file watch /tmp/watch.out
emit_file watch-err /tmp/watch.err
