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

run_step() {    # run_step NAME CMD...: run CMD, its output kept for emit_step NAME
        _r_name=$1
        shift
        "$@" > /tmp/"$_r_name".out 2> /tmp/"$_r_name".err
}

emit_step() {   # emit_step NAME RC: what run_step NAME kept, as step NAME with exit status RC
        printf '{"step":"%s","rc":%s,"data":"%s","stderr":"%s"}\n' "$1" "$2" \
                "$(base64 < /tmp/"$1".out | tr -d '\n')" "$(base64 < /tmp/"$1".err | tr -d '\n')" >&3
}

step() {        # step NAME CMD...: run CMD as step NAME
        STEP=$1
        shift
        run_step "$STEP" "$@"
        _rc=$?
        emit_step "$STEP" "$_rc"
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

# settle_carrier CHECK...: CHECK true within 20 s, else the PF bounced once and 20 s more, else
# the VF driver bound again to each VF that is up without carrier and 40 s more.
# QEMU's igb (CI saw it, on a loaded machine, in two guests of one run) can leave a VF whose reset
# the PF never answered: igbvf logs "PF still resetting" every 12 s and its link never comes up.
# The PF's own reset (down, up) answers every VF, as it would on a host. A VF whose probe met the
# PF still resetting (its VFs were being made) stayed that way through the PF's reset in a soak
# run; a new probe starts its driver over. Each is reported as a step: the host prints it, so it
# is seen, not hidden. A VF bound again has a new netdev, up as the old one was. A VF that stays
# stuck through all of that (a soak saw one) is the emulated NIC's fault: the guest says so with
# the step vf-stuck and powers off, and the host boots a new guest once.
settle_carrier() {
        wait_for 20 "$@" && return 0
        emit "{\"step\":\"pf-bounced\",\"pf\":\"$PF_NETDEV\",\"check\":\"$1\"}"
        "$IP" link set "$PF_NETDEV" down
        "$IP" link set "$PF_NETDEV" up
        wait_for 20 "$@" && return 0
        _c_stuck=
        for v in $(vf_addrs); do
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        [ $(($(cat "/sys/class/net/$n/flags") & 1)) = 1 ] || continue
                        [ "$(cat "/sys/class/net/$n/carrier" 2>/dev/null)" = 1 ] || _c_stuck="$_c_stuck $v"
                done
        done
        emit "{\"step\":\"vf-rebound\",\"vfs\":\"$_c_stuck\",\"check\":\"$1\"}"
        for v in $_c_stuck; do
                echo "$v" > /sys/bus/pci/drivers/igbvf/unbind
                echo "$v" > /sys/bus/pci/drivers/igbvf/bind
                wait_for 20 vf_has_netdev "$v"
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        "$IP" link set "$n" up
                done
        done
        wait_for 40 "$@" && return 0
        emit "{\"step\":\"vf-stuck\",\"vfs\":\"$_c_stuck\",\"check\":\"$1\"}"
        emit '{"step":"end"}'
        poweroff -f
}

vf_has_netdev() {       # vf_has_netdev ADDR: the VF at ADDR has a netdev
        [ -n "$(ls "/sys/bus/pci/devices/$1/net" 2>/dev/null)" ]
}

vf_netdevs_ready() {    # all WANT_VFS VFs there, each with a netdev
        find_pf || return 1
        [ "$(cat "$PF/sriov_numvfs")" = "$WANT_VFS" ] || return 1
        for v in $(vf_addrs); do
                [ -n "$(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null)" ] || return 1
        done
        return 0
}

vf_netdevs() {  # the VFs' netdevs, virtfn order
        for v in $(vf_addrs); do
                ls "/sys/bus/pci/devices/$v/net" 2>/dev/null
        done
}

# vf_own_macs: "INDEX MAC" for each VF whose PF entry holds the MAC of the VF's own netdev. igbvf
# sends that MAC (the one it picked at probe) to the PF at every reset of its VF, and a trusted
# VF's replaces the one the PF set. A VF its driver cannot reset ("PF still resetting") tries again
# every 10 s, with no carrier change to show for it. Where sriovd sets the MAC, this is the driver's
# doing, never sriovd's.
vf_own_macs() {
        _o_table=$("$IP" -d link show "$PF_NETDEV" | grep '^ *vf ')
        _o_i=0
        for v in $(vf_addrs); do
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        _o_mac=$(cat "/sys/class/net/$n/address")
                        echo "$_o_table" | grep -q "^ *vf $_o_i .*link/ether $_o_mac " && echo "$_o_i $_o_mac"
                done
                _o_i=$((_o_i + 1))
        done
}

vf_netdev_macs() {      # "INDEX MAC," for each VF netdev: the MAC its driver sends the PF
        _m_i=0
        for v in $(vf_addrs); do
                for n in $(ls "/sys/bus/pci/devices/$v/net" 2>/dev/null); do
                        printf '%s %s,' "$_m_i" "$(cat "/sys/class/net/$n/address")"
                done
                _m_i=$((_m_i + 1))
        done
}

# settle [SECONDS]: wait until the VF drivers are done with the PF: a run whose result is checked
# starts then. A VF's driver resets it on its own schedule (at open, when the PF resets it, when
# its mailbox times out) and sends its own MAC each time. Settled: the VFs that are up have carrier
# (for at most SECONDS, 10 by default: under load QEMU's igb may leave one without for good), and
# neither the VFs' carrier changes nor the PF's view of its VFs changed for QUIET seconds, two of
# igbvf's watchdog periods. A host that does not settle within 60 s is reported as a step. One sample a second, a
# few processes each: the guest's CPUs are emulated on one host thread, and a busier loop delays
# the PF's answers to its VFs past igbvf's mailbox timeout ("PF still resetting").
QUIET=4
SETTLES=0
settle() {
        SETTLES=$((SETTLES + 1))
        find_pf || return 1
        _s_files=/dev/null
        _s_carriers=/dev/null
        for n in $(vf_netdevs); do
                _s_files="$_s_files /sys/class/net/$n/carrier_changes"
                [ $(($(cat "/sys/class/net/$n/flags") & 1)) = 1 ] && _s_carriers="$_s_carriers /sys/class/net/$n/carrier"
        done
        _s_last=
        _s_same=0
        _s_n=0
        while [ $_s_n -lt 60 ]; do
                _s_now="$(cat $_s_files $_s_carriers 2>&1 | tr '\n' ' ') $("$IP" -d link show "$PF_NETDEV" | grep '^ *vf ')"
                # Anything but a 1 from an up VF's carrier: one without.
                if [ "$_s_now" = "$_s_last" ] && { [ $_s_n -ge "${1:-10}" ] || [ -z "$(cat $_s_carriers 2>&1 | tr -d '1\n')" ]; }; then
                        _s_same=$((_s_same + 1))
                        [ $_s_same -ge $QUIET ] && return 0
                else
                        _s_same=0
                fi
                _s_last=$_s_now
                sleep 1
                _s_n=$((_s_n + 1))
        done
        emit "{\"step\":\"unsettled-$SETTLES\",\"state\":\"$(echo "$_s_now" | tr '\n' ';' | tr -d '"\\')\"}"
        return 1
}

# once_settled STEP CONFIG [SECONDS]: sriovd --once with CONFIG as STEP, on a settled host.
once_settled() {
        settle "$3"
        sriovd_once "$1" "$2"
}

# once_again STEP CONFIG: the run that must change nothing, after a run with the same CONFIG, on
# a settled host. A VF's driver may still have sent its own MAC since (vf_own_macs): when the run
# then set a VF's link, it is kept as STEP-converge-N, the VF netdevs' MACs as step vf-own-STEP-N,
# and STEP runs again (at most 3 times). The host checks that a converge run only put back a
# policy's MAC over the one the VF's driver sent, and prints each.
once_again() {
        _a_try=0
        while :; do
                settle
                run_step "$1-try" sriovd --once --json --config "$2"
                _rc=$?
                if [ $_a_try -ge 3 ] || ! grep -q '"action": "vf-link"' "/tmp/$1-try.out"; then
                        mv "/tmp/$1-try.out" "/tmp/$1.out"
                        mv "/tmp/$1-try.err" "/tmp/$1.err"
                        emit_step "$1" "$_rc"
                        return
                fi
                _a_try=$((_a_try + 1))
                mv "/tmp/$1-try.out" "/tmp/$1-converge-$_a_try.out"
                mv "/tmp/$1-try.err" "/tmp/$1-converge-$_a_try.err"
                emit_step "$1-converge-$_a_try" "$_rc"
                emit "{\"step\":\"vf-own-$1-$_a_try\",\"macs\":\"$(vf_netdev_macs)\"}"
        done
}

# settled_snapshot NAME: snapshot NAME of a host sriovd keeps configured as a daemon, with the
# policy's MACs: taken on a settled host, and again (at most 3 times) while a VF's PF entry held
# its driver's own MAC (vf_own_macs), which the daemon puts back within a drift check. Each retake
# is a step vf-own-NAME-N.
settled_snapshot() {
        _n_try=0
        while :; do
                settle
                snapshot "$1"
                _n_own=$(vf_own_macs | tr '\n' ',')
                [ -z "$_n_own" ] && return 0
                _n_try=$((_n_try + 1))
                emit "{\"step\":\"vf-own-$1-$_n_try\",\"own\":\"$_n_own\"}"
                [ $_n_try -lt 3 ] || return 1
        done
}
