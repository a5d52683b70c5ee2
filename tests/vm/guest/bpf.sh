# SPDX-License-Identifier: LGPL-2.1-or-later
# bpf.sh — the BPF programs on a real kernel (tests/unit/test-bpf-events.c). First the kernel's
# BTF and the functions the drift programs hook, then the test's own run: a tracked thread's
# latency histogram, scheduling changes as events. Then its IRQ mode on a PF vector and a VF
# vector while their netdevs are up, and on the VF vector again once its netdev is down, which
# frees the IRQ: the kernel then only records the affinity for when it is started again.
emit "{\"step\":\"bpf-kernel\",\"release\":\"$(uname -r)\",\"btf\":\"$(ls -l /sys/kernel/btf/vmlinux 2>&1 | tr -d '"\\')\",\"hooks\":\"$(grep -E ' (irq_set_affinity_locked|__sched_setscheduler|sched_setaffinity)$' /proc/kallsyms | awk '{print $3}' | sort | tr '\n' ' ')\"}"
step bpf-events test-bpf-events

pf_up
echo 2 > "$PF/sriov_numvfs"
WANT_VFS=2
wait_for 60 vf_netdevs_ready
VF0=$(vf_addrs | head -n1)
VFNET=$(ls "/sys/bus/pci/devices/$VF0/net" | head -n1)
"$IP" link set "$VFNET" up
wait_for 20 [ -n "$(ls "/sys/bus/pci/devices/$VF0/msi_irqs" 2>/dev/null)" ]
PFIRQ=$(ls "/sys/bus/pci/devices/$PF_ADDR/msi_irqs" | sort -n | tail -n1)
VFIRQ=$(ls "/sys/bus/pci/devices/$VF0/msi_irqs" | sort -n | head -n1)
emit "{\"step\":\"bpf-irqs\",\"pf\":\"$PFIRQ\",\"vf\":\"$VFIRQ\",\"vf_actions\":\"$(grep "^ *$VFIRQ:" /proc/interrupts | tr -s ' ' | cut -c1-200)\"}"
step bpf-irq test-bpf-events irq "$PFIRQ" "$VFIRQ"

"$IP" link set "$VFNET" down
# igbvf frees its vectors as the netdev goes down; on PREEMPT_RT that can finish after "ip" returns.
vf_irq_freed() {
        _l=$(grep "^ *$VFIRQ:" /proc/interrupts)
        case "$_l" in *eth*) return 1 ;; esac
}
wait_for 10 vf_irq_freed
emit "{\"step\":\"bpf-irq-freed\",\"irq\":\"$VFIRQ\",\"exists\":\"$(ls -d /proc/irq/$VFIRQ 2>&1 | tr -d '"\\')\",\"actions\":\"$(grep "^ *$VFIRQ:" /proc/interrupts | tr -s ' ' | cut -c1-200)\"}"
step bpf-irq-down test-bpf-events irq "$VFIRQ"
