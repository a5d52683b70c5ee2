# SPDX-License-Identifier: LGPL-2.1-or-later
# lib.sh — what every guest script uses: results out as JSON lines on fd 3 (the second serial
# port), the PF found by PCI ID, snapshots of the kernel's state for the host-side assertions.
# The guest has no python: it records, the host (tests/vm/test-vm.py) decides.

IGB_ID=0x10c9
# iproute2's ip (VF details with -d); busybox sh would run its own applet for a bare "ip".
IP=/usr/local/sbin/ip

emit() {        # emit JSON: one line to the host
        printf '%s\n' "$1" >&3
}

emit_file() {   # emit_file STEP FILE [RC]: a file's bytes (base64) with an exit status
        printf '{"step":"%s","rc":%s,"data":"%s"}\n' "$1" "${3:-0}" "$(base64 < "$2" | tr -d '\n')" >&3
}

step() {        # step NAME CMD...: run CMD as step NAME
        STEP=$1
        shift
        "$@" > /tmp/"$STEP".out 2> /tmp/"$STEP".err
        _rc=$?
        printf '{"step":"%s","rc":%s,"data":"%s","stderr":"%s"}\n' "$STEP" "$_rc" \
                "$(base64 < /tmp/"$STEP".out | tr -d '\n')" "$(base64 < /tmp/"$STEP".err | tr -d '\n')" >&3
        return $_rc
}

find_pf() {     # sets PF (sysfs path), PF_ADDR and PF_NETDEV for the igb PF
        for d in /sys/bus/pci/devices/*; do
                if [ "$(cat "$d/device")" = "$IGB_ID" ] && [ -e "$d/sriov_totalvfs" ]; then
                        PF=$d
                        PF_ADDR=${d##*/}
                        PF_NETDEV=$(ls "$d/net" 2>/dev/null | head -n1)
                        return 0
                fi
        done
        return 1
}

vf_addrs() {    # the PF's VFs' PCI addresses, virtfn order
        for l in "$PF"/virtfn*; do
                [ -e "$l" ] || continue
                v=$(readlink "$l")
                echo "${v##*/}"
        done
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds; the deadline only bounds a
# broken run, the assertions are on the state found afterwards.
wait_for() {
        _n=$(($1 * 5))
        shift
        while [ $_n -gt 0 ]; do
                "$@" && return 0
                sleep 0.2
                _n=$((_n - 1))
        done
        return 1
}

snapshot() {    # snapshot NAME: the kernel's view of the PF, its VFs, their IRQs and threads
        find_pf
        {
                echo "## pf"
                echo "$PF_ADDR ${PF_NETDEV:--}"
                echo "## numvfs"
                cat "$PF/sriov_numvfs"
                echo "## vfs"
                for v in $(vf_addrs); do
                        drv=$(readlink "/sys/bus/pci/devices/$v/driver")
                        net=$(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null | head -n1)
                        echo "$v ${drv##*/} ${net:--} $(cat /sys/bus/pci/devices/$v/driver_override)"
                done
                echo "## vfmac"
                for v in $(vf_addrs); do
                        net=$(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null | head -n1)
                        [ -n "$net" ] && echo "$v $(cat /sys/class/net/$net/address) $(cat /sys/class/net/$net/addr_assign_type)"
                done
                echo "## msi"
                for v in "$PF_ADDR" $(vf_addrs); do
                        echo "$v $(ls /sys/bus/pci/devices/$v/msi_irqs 2>/dev/null | tr '\n' ' ')"
                done
                echo "## affinity"
                for f in /proc/irq/*/smp_affinity_list; do
                        n=${f#/proc/irq/}
                        echo "${n%%/*} $(cat "$f")"
                done
                echo "## threads"
                for p in /proc/[0-9]*; do
                        case "$(cat "$p/comm" 2>/dev/null)" in
                        irq/*) cat "$p/stat" ;;
                        esac
                done
                echo "## kthreads"
                for p in /proc/[0-9]*; do
                        case "$(cat "$p/comm" 2>/dev/null)" in
                        napi/*|ksoftirqd/*|ktimers/*|rcuc/*)
                                echo "$(cat "$p/stat") CPUS $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$p/status")" ;;
                        esac
                done
                echo "## threaded"
                for n in "$PF_NETDEV" $(for v in $(vf_addrs); do ls "/sys/bus/pci/devices/$v/net" 2>/dev/null; done); do
                        echo "$n $(cat /sys/class/net/$n/threaded 2>/dev/null || echo -)"
                done
                echo "## channels"
                ethtool -l "$PF_NETDEV"
                echo "## iplink"
                "$IP" -d link show "$PF_NETDEV"
                echo "## coalesce"
                for n in "$PF_NETDEV" $(for v in $(vf_addrs); do ls "/sys/bus/pci/devices/$v/net" 2>/dev/null; done); do
                        echo "# $n"
                        ethtool -c "$n"
                done
                echo "## vfio"
                ls /dev/vfio
                echo "## interrupts"
                cat /proc/interrupts
        } > /tmp/snap-"$1" 2>&1
        emit_file "snapshot-$1" /tmp/snap-"$1"
}

sriovd_once() { # sriovd_once STEP CONFIG: sriovd --once --json with CONFIG
        step "$1" sriovd --once --json --config "$2"
}

pf_up() {       # the PF's link up, as on a host (igbvf waits for the PF otherwise)
        find_pf && "$IP" link set "$PF_NETDEV" up
}

vfs_up() {      # the VF netdevs up, as a host using them would: their IRQs exist only then
        for v in $(vf_addrs); do
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        "$IP" link set "$n" up
                done
        done
}

vfs_carrier() {  # every VF netdev has carrier (the PF answered its reset; the VF settled)
        for v in $(vf_addrs); do
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        [ "$(cat "/sys/class/net/$n/carrier" 2>/dev/null)" = 1 ] || return 1
                done
        done
        return 0
}

# settle_carrier CHECK...: CHECK true within 20 s, else the PF bounced once and 40 s more.
# QEMU's igb (CI saw it, on a loaded machine, in two guests of one run) can leave a VF whose reset
# the PF never answered: igbvf logs "PF still resetting" every 12 s and its link never comes up.
# The PF's own reset (down, up) answers every VF, as it would on a host. Reported as a step: the
# host prints it, so a bounce is seen, not hidden.
settle_carrier() {
        wait_for 20 "$@" && return 0
        emit "{\"step\":\"pf-bounced\",\"pf\":\"$PF_NETDEV\",\"check\":\"$1\"}"
        "$IP" link set "$PF_NETDEV" down
        "$IP" link set "$PF_NETDEV" up
        wait_for 40 "$@"
}

vf_netdevs_ready() {    # all WANT_VFS VFs there, each with a netdev
        find_pf || return 1
        [ "$(cat "$PF/sriov_numvfs")" = "$WANT_VFS" ] || return 1
        for v in $(vf_addrs); do
                [ -n "$(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null)" ] || return 1
        done
        return 0
}
