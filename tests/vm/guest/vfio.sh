# SPDX-License-Identifier: LGPL-2.1-or-later
# vfio.sh — guest 4: vf_driver = vfio-pci binds the VFs for passthrough, a second --once leaves
# them, vf_driver = host gives them back to igbvf. In between, sriovd runs as a daemon while a
# tenant's passed-through VF gets its MSI-X enabled the way QEMU does it for a guest (vfio-msix):
# the kernel's vfio-msix vectors, announced by no uevent, must be found and pinned for the
# tenant's class.
pf_up
sriovd_once vfio-1 /vm/conf-vfio/sriovd.conf
snapshot vfio
sriovd_once vfio-2 /vm/conf-vfio/sriovd.conf

VF0=$(vf_addrs | head -n1)
mkdir -p /tmp/sriovd-state
cp /vm/allocations-vfio.json /tmp/sriovd-state/allocations.json
sriovd --config /vm/conf-vfio/sriovd.conf > /tmp/msix-daemon.log 2>&1 &
DAEMON=$!
wait_for 60 grep -q "Cycle 1:" /tmp/msix-daemon.log
vfio-msix "$VF0" "$PT_VECTORS" > /tmp/vfio-msix.out 2> /tmp/vfio-msix.err &
HOLDER=$!
wait_for 20 grep -q enabled /tmp/vfio-msix.out
T0=$(cut -d' ' -f1 /proc/uptime)
pt_pinned() {   # every MSI-X vector of VF0 is on PT_CPUS
        [ -n "$(ls /sys/bus/pci/devices/$VF0/msi_irqs 2>/dev/null)" ] || return 1
        for i in $(ls /sys/bus/pci/devices/$VF0/msi_irqs); do
                [ "$(cat /proc/irq/$i/smp_affinity_list 2>/dev/null)" = "$PT_CPUS" ] || return 1
        done
        return 0
}
wait_for 20 pt_pinned
T1=$(cut -d' ' -f1 /proc/uptime)
emit "{\"step\":\"msix\",\"enabled\":\"$(head -n1 /tmp/vfio-msix.out)\",\"t0\":\"$T0\",\"t1\":\"$T1\"}"
emit_file vfio-msix-err /tmp/vfio-msix.err
snapshot msix
kill -TERM $HOLDER
wait $HOLDER
kill -TERM $DAEMON
wait $DAEMON
emit_file msix-daemon-log /tmp/msix-daemon.log $?
rm -rf /tmp/sriovd-state

sriovd_once host-1 /vm/conf-host/sriovd.conf
snapshot host
