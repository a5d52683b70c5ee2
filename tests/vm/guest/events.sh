# SPDX-License-Identifier: LGPL-2.1-or-later
# events.sh — the daemon with its BPF drift events on a real kernel. sriovd configures the host
# with a 1 s drift check, as the other daemon guests do, since no udevd runs here. Then a reload
# puts both drift periods at an hour, so that only a drift event can explain a repair. A child
# process writes a pinned VF vector's affinity, and chrt sets its IRQ thread's priority; the
# time until the kernel shows the planned value again is measured many times (repair-probe).
# Last, the daemon runs without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN: it must say why once,
# export sriovd_bpf_available as 0, and still repair drift by polling.
REPAIRS=${REPAIRS:-50}
WRONG_CPU=0
# util-linux's, by path: busybox sh would run its own setpriv applet, which lacks --bounding-set.
CHRT=/usr/local/bin/chrt
SETPRIV=/usr/local/bin/setpriv

# Done when the VFs are there and every PF/VF vector is on the expected CPUs.
configured() {
        find_pf || return 1
        [ "$(cat "$PF/sriov_numvfs")" = "$WANT_VFS" ] || return 1
        for v in "$PF_ADDR" $(vf_addrs); do
                for i in $(ls "/sys/bus/pci/devices/$v/msi_irqs" 2>/dev/null); do
                        [ "$(cat /proc/irq/$i/smp_affinity_list 2>/dev/null)" = "$WANT_CPUS" ] || return 1
                done
        done
}

cycles() {      # cycles LOG: how many cycles LOG reports
        grep -c 'Cycle [0-9]*:' "$1"
}

irq_thread() {  # irq_thread N: the PID of IRQ N's irq/N- thread
        for p in /proc/[0-9]*; do
                case "$(cat "$p/comm" 2>/dev/null)" in "irq/$1-"*) echo "${p#/proc/}"; return ;; esac
        done
}

pf_up
mkdir -p /tmp/conf
cp -r /vm/conf-events/. /tmp/conf/
sriovd --config /tmp/conf/sriovd.conf > /tmp/daemon.log 2>&1 &
DAEMON=$!
wait_for 120 vf_netdevs_ready
vfs_up
wait_for 60 configured
settle

# The reload: both drift periods an hour. Then the host stays quiet for 3 s: no cycle runs.
cp /tmp/conf/sriovd-quiet.conf /tmp/conf/sriovd.conf
_c=$(cycles /tmp/daemon.log)
kill -HUP $DAEMON
wait_for 30 sh -c "[ \$(grep -c 'Cycle [0-9]*:' /tmp/daemon.log) -gt $_c ]"
sleep 1
_c=$(cycles /tmp/daemon.log)
sleep 3
VF0=$(vf_addrs | head -n1)
IRQ=$(ls "/sys/bus/pci/devices/$VF0/msi_irqs" | sort -n | head -n1)
TID=$(irq_thread "$IRQ")
emit "{\"step\":\"events-quiet\",\"cycles\":$(($(cycles /tmp/daemon.log) - _c)),\"irq\":$IRQ,\"thread\":\"$TID\",\"affinity\":\"$(cat /proc/irq/$IRQ/smp_affinity_list)\",\"configured\":\"$(configured && echo yes)\"}"

_c=$(cycles /tmp/daemon.log)
step repair-irq repair-probe irq "$IRQ" "$WRONG_CPU" "$WANT_CPUS" "$REPAIRS"
emit "{\"step\":\"repair-irq-cycles\",\"cycles\":$(($(cycles /tmp/daemon.log) - _c))}"
if [ -n "$TID" ]; then
        step repair-thread repair-probe thread "$TID" $((PRIORITY - 20)) "$PRIORITY" "$REPAIRS"
        # And chrt itself, once.
        $CHRT -f -p $((PRIORITY + 5)) "$TID"
        _rc=$?
        wait_for 5 sh -c "$CHRT -p $TID | grep -q 'priority: $PRIORITY\$'"
        emit "{\"step\":\"chrt\",\"rc\":$_rc,\"now\":\"$($CHRT -p "$TID" | tr '\n' ';')\"}"
fi
emit "{\"step\":\"events-end\",\"cycles\":$(cycles /tmp/daemon.log)}"
kill -TERM $DAEMON
wait $DAEMON
emit_file events-log /tmp/daemon.log $?

# The floor: the same changes against the least that repairs on the same events.
floor() {       # floor STEP KIND ID WANT PROBE-ARGS...: repair-probe's run against the floor
        _f_step=$1 _f_kind=$2 _f_id=$3 _f_want=$4
        shift 4
        # A file of its own: the shell truncates it only once the child runs, and an old
        # "ready" read before that would start the changes before the floor listens.
        repair-probe floor "$_f_kind" "$_f_id" "$_f_want" > "/tmp/$_f_step.out" 2>&1 &
        _f_pid=$!
        wait_for 30 grep -q ready "/tmp/$_f_step.out"
        step "$_f_step" repair-probe "$@"
        kill -TERM $_f_pid
        wait $_f_pid
        emit_file "$_f_step-floor" "/tmp/$_f_step.out" $?
}
floor floor-irq irq "$IRQ" "$WANT_CPUS" irq "$IRQ" "$WRONG_CPU" "$WANT_CPUS" "$REPAIRS"
[ -n "$TID" ] && floor floor-thread thread "$TID" "$PRIORITY" thread "$TID" $((PRIORITY - 20)) "$PRIORITY" "$REPAIRS"

# Without the capabilities BPF needs. CAP_SYS_ADMIN would grant them too, and sriovd needs it not.
$SETPRIV --bounding-set=-bpf,-perfmon,-sys_admin sriovd --config /vm/conf-fallback/sriovd.conf \
        > /tmp/daemon-fallback.log 2>&1 &
DAEMON=$!
wait_for 30 grep -q 'sriovd_bpf_available' /tmp/sriovd.prom
emit "{\"step\":\"fallback-caps\",\"caps\":\"$(grep -E '^Cap(Eff|Bnd)' /proc/$DAEMON/status | tr '\t\n' ' ;')\"}"
wait_for 30 configured
step repair-fallback repair-probe irq "$IRQ" "$WRONG_CPU" "$WANT_CPUS" 5 5000
cp /tmp/sriovd.prom /tmp/fallback.prom
emit_file fallback-metrics /tmp/fallback.prom
kill -TERM $DAEMON
wait $DAEMON
emit_file fallback-log /tmp/daemon-fallback.log $?
