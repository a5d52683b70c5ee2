# SPDX-License-Identifier: LGPL-2.1-or-later
# daemon.sh — guest 3: sriovd as a daemon (no udevd here: the drift timer notices). The PF's
# driver is unbound and bound again (its VFs vanish); VF links are brought up as a host using
# them would (igbvf requests its vectors at open); sriovd must bring back the VFs, their
# link settings and IRQ pins; an IRQ affinity overwritten behind its back must be put back.
# Then a second daemon with conf-napi: the napi/ threads placed, one moved behind its back put
# back, and after a PF driver reload (new netdevs, threaded NAPI off again) all placed again.
pf_up
sriovd --config /vm/conf/sriovd.conf > /tmp/daemon.log 2>&1 &
DAEMON=$!

# Done when the VFs are there with their VLAN and every PF/VF vector is on the expected CPUs.
configured() {
        find_pf || return 1
        [ "$(cat "$PF/sriov_numvfs")" = "$WANT_VFS" ] || return 1
        [ "$("$IP" -d link show "$PF_NETDEV" 2>/dev/null | grep -c "vlan $WANT_VLAN")" = "$WANT_VFS" ] || return 1
        for v in "$PF_ADDR" $(vf_addrs); do
                for i in $(ls "/sys/bus/pci/devices/$v/msi_irqs" 2>/dev/null); do
                        [ "$(cat /proc/irq/$i/smp_affinity_list 2>/dev/null)" = "$WANT_CPUS" ] || return 1
                done
        done
        return 0
}

# The VF MACs are not in configured(): igbvf sends its own MAC to the PF at each reset of its VF
# (trusted, the PF takes it), and sriovd (checking every second) puts the configured one back. Once
# every VF has carrier, a cycle with nothing to do, begun after that, says sriovd saw the host as
# configured; the snapshot that shows the MACs is taken on a settled host (settled_snapshot, lib.sh).
idle_cycle() {
        wait_for 30 vfs_carrier
        _at=$(wc -l < /tmp/daemon.log)
        wait_for 30 sh -c "tail -n +$((_at + 1)) /tmp/daemon.log | grep -q 'Cycle [0-9]*: 0 actions'"
}

wait_for 120 vf_netdevs_ready
vfs_up
wait_for 60 configured
idle_cycle
settled_snapshot started

echo "$PF_ADDR" > /sys/bus/pci/drivers/igb/unbind
wait_for 30 [ ! -e "$PF/virtfn0" ]
snapshot unbound
echo "$PF_ADDR" > /sys/bus/pci/drivers/igb/bind
pf_up
wait_for 120 vf_netdevs_ready
vfs_up
wait_for 60 configured
idle_cycle
settled_snapshot rebound

# The affinity files sriovd's drift checks hold open (irq-files.c), by IRQ: after the PF's driver
# came back (its old vectors freed, their held files failing) every vector of the PF and its VFs
# is read through one, the one overwritten below too.
held_irqs() {
        for l in /proc/$DAEMON/fd/*; do readlink "$l"; done 2>/dev/null |
                sed -n 's|^/proc/irq/\([0-9]*\)/smp_affinity_list$|\1|p' | sort -n | tr '\n' ' '
}
pf_vectors() {
        for v in "$PF_ADDR" $(vf_addrs); do ls "/sys/bus/pci/devices/$v/msi_irqs"; done | sort -n | tr '\n' ' '
}
all_held() {
        _h=" $(held_irqs) "
        for i in $(pf_vectors); do case "$_h" in *" $i "*) ;; *) return 1 ;; esac; done
}
wait_for 10 all_held
emit "{\"step\":\"held-files\",\"held\":\"$(held_irqs)\",\"vectors\":\"$(pf_vectors)\",\"irqs\":\"$(ls /proc/irq | grep -E '^[0-9]+$' | sort -n | tr '\n' ' ')\"}"

# An affinity changed behind sriovd's back: the first VF's first vector onto CPU 0.
VF0=$(vf_addrs | head -n1)
IRQ=$(ls "/sys/bus/pci/devices/$VF0/msi_irqs" | head -n1)
echo 0 > /proc/irq/$IRQ/smp_affinity_list
_rc=$?
# With BPF drift events, the read may already see the repair: the log's "0 -> " proves the write.
emit "{\"step\":\"overwritten\",\"irq\":$IRQ,\"rc\":$_rc,\"affinity\":\"$(cat /proc/irq/$IRQ/smp_affinity_list)\"}"
wait_for 30 [ "$(cat /proc/irq/$IRQ/smp_affinity_list)" = "$WANT_CPUS" ]
snapshot repaired

kill -TERM $DAEMON
wait $DAEMON
emit_file daemon-log /tmp/daemon.log $?

# Threaded NAPI: every napi/ thread of the PF and its VFs on the RT CPU at the class's FIFO
# priority, at least one per netdev (the PF has 1 channel: rx and tx vectors, each a NAPI).
napi_placed() {
        _n=0
        for p in /proc/[0-9]*; do
                case "$(cat "$p/comm" 2>/dev/null)" in napi/*) ;; *) continue ;; esac
                [ "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$p/status")" = "$WANT_CPUS" ] || return 1
                [ "$(sed 's/.*) //' "$p/stat" | awk '{print $39 ":" $38}')" = "1:$NAPI_PRIO" ] || return 1
                _n=$((_n + 1))
        done
        [ $_n -ge $((WANT_VFS + 1)) ]
}
sriovd --config /vm/conf-napi/sriovd.conf > /tmp/daemon-napi.log 2>&1 &
DAEMON=$!
wait_for 120 napi_placed
snapshot napi-started
NAPI=$(for p in /proc/[0-9]*; do case "$(cat $p/comm)" in napi/*) echo ${p#/proc/}; break ;; esac; done)
# taskset's own report proves the move; a read-back could already see sriovd's repair (CI saw it).
MASK=$(taskset -p 0x1 "$NAPI" | sed -n 's/.*new affinity mask: *//p')
emit "{\"step\":\"napi-moved\",\"pid\":$NAPI,\"comm\":\"$(cat /proc/$NAPI/comm)\",\"mask\":\"$MASK\"}"
wait_for 30 napi_placed
snapshot napi-repaired
echo "$PF_ADDR" > /sys/bus/pci/drivers/igb/unbind
wait_for 30 [ ! -e "$PF/virtfn0" ]
echo "$PF_ADDR" > /sys/bus/pci/drivers/igb/bind
pf_up
wait_for 120 vf_netdevs_ready
vfs_up
wait_for 120 napi_placed
snapshot napi-rebound
kill -TERM $DAEMON
wait $DAEMON
emit_file daemon-napi-log /tmp/daemon-napi.log $?
