#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-irqbalance-policy.sh — sriovd-irqbalance-policy bans the IRQs in owned-irqs and those of owned-devices
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
dev=/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0
pass=0
fail=0

ok() {
        pass=$((pass + 1))
}

bad() {
        echo "FAIL: $*"
        fail=$((fail + 1))
}

# expect WANT_STATUS WANT_STDOUT ARGS...: runs the binary, compares exit status and stdout exactly.
expect() {
        want_rc=$1
        want_out=$2
        shift 2
        out=$("$bin" "$@" 2>"$dir/stderr")
        rc=$?
        if [ "$rc" != "$want_rc" ]; then
                bad "$bin $*: exit $rc, expected $want_rc (stderr: $(cat "$dir/stderr"))"
        elif [ "$out" != "$want_out" ]; then
                bad "$bin $*: printed \"$out\", expected \"$want_out\""
        else
                ok
        fi
}

# stderr_has TEXT: the last run explained itself on stderr.
stderr_has() {
        if grep -q -- "$1" "$dir/stderr"; then
                ok
        else
                bad "stderr \"$(cat "$dir/stderr")\" does not mention \"$1\""
        fi
}

SRIOVD_OWNED_IRQS=$dir/owned-irqs
# The device rule is tested below. Until then no device is listed, whatever this host has.
SRIOVD_OWNED_DEVICES=$dir/no-devices
export SRIOVD_OWNED_IRQS SRIOVD_OWNED_DEVICES
printf '0\n7\n42\n130\n4294967295\n' > "$SRIOVD_OWNED_IRQS"

# Listed IRQs are banned, first, middle, last and the largest possible.
for irq in 0 7 42 130 4294967295; do
        expect 0 "ban=true" "$dev" "$irq"
done
# Others are left to irqbalance, prefixes and extensions of listed numbers included.
for irq in 1 4 13 420 1300 4294967294; do
        expect 0 "" "$dev" "$irq"
done
# irqbalance passes its sysfs root for IRQs without a device.
expect 0 "ban=true" /sys 42

# A last line without a newline still counts.
printf '5\n9' > "$SRIOVD_OWNED_IRQS"
expect 0 "ban=true" "$dev" 9
# A malformed line is reported and skipped; the others still ban.
printf '5\nx9\n 11\n12 \n\n013\n17\n' > "$SRIOVD_OWNED_IRQS"
expect 0 "ban=true" "$dev" 17
expect 0 "" "$dev" 11
stderr_has "owned-irqs:3: not an IRQ number"
expect 0 "" "$dev" 12
expect 0 "" "$dev" 13
# An empty list bans nothing.
: > "$SRIOVD_OWNED_IRQS"
expect 0 "" "$dev" 5

# No file: sriovd is not running, nothing is banned, and that is not an error.
SRIOVD_OWNED_IRQS=$dir/missing
expect 0 "" "$dev" 42
# An unreadable list bans nothing either, but says why.
SRIOVD_OWNED_IRQS=$dir
expect 0 "" "$dev" 42
stderr_has "cannot read"
# The default path is used when the variable is empty (whatever this host has, the answer is sane).
SRIOVD_OWNED_IRQS=
out=$("$bin" "$dev" 42 2>/dev/null)
rc=$?
if [ "$rc" = 0 ] && { [ -z "$out" ] || [ "$out" = "ban=true" ]; }; then ok; else bad "default path: exit $rc, \"$out\""; fi
SRIOVD_OWNED_IRQS=$dir/owned-irqs
printf '42\n' > "$SRIOVD_OWNED_IRQS"

# The device rule. A small sysfs: a listed PF with a VF, an unlisted PF with a VF, and another
# device. irqbalance passes /sys/bus/pci/devices/ADDR, a link into /sys/devices.
sys=$dir/sys
pci=$sys/devices/pci0000:40
for fn in 0000:41:00.0 0000:41:00.2 0000:c1:00.0 0000:c1:00.2 0000:03:00.0 0000:41:00.4; do
        mkdir -p "$pci/$fn" "$sys/bus/pci/devices"
        ln -s "../../../devices/pci0000:40/$fn" "$sys/bus/pci/devices/$fn"
done
ln -s ../0000:41:00.0 "$pci/0000:41:00.2/physfn"
ln -s ../0000:c1:00.0 "$pci/0000:c1:00.2/physfn"
ln -s ../not-a-device "$pci/0000:41:00.4/physfn"
SRIOVD_OWNED_DEVICES=$dir/owned-devices
printf '0000:81:00.0\n0000:41:00.0\n' > "$SRIOVD_OWNED_DEVICES"
printf '42\n' > "$SRIOVD_OWNED_IRQS"

# An IRQ that owned-irqs does not list yet is banned for its device: the PF, and its VF by physfn.
expect 0 "ban=true" "$pci/0000:41:00.0" 77
expect 0 "ban=true" "$sys/bus/pci/devices/0000:41:00.0" 77
expect 0 "ban=true" "$pci/0000:41:00.2" 77
expect 0 "ban=true" "$sys/bus/pci/devices/0000:41:00.2" 77
[ ! -s "$dir/stderr" ] && ok || bad "a clean answer wrote to stderr: $(cat "$dir/stderr")"
# The unlisted PF and its VF, another device, and an IRQ without a device are left to irqbalance.
expect 0 "" "$sys/bus/pci/devices/0000:c1:00.0" 77
expect 0 "" "$sys/bus/pci/devices/0000:c1:00.2" 77
expect 0 "" "$sys/bus/pci/devices/0000:03:00.0" 77
expect 0 "" "$sys" 77
# owned-irqs still bans on its own, whatever the device.
expect 0 "ban=true" "$sys/bus/pci/devices/0000:03:00.0" 42
# The address is the path's last component, not a prefix or a part of it.
expect 0 "" "$pci/0000:41:00.0x" 77
expect 0 "" "$pci/0000:41:00.0/net" 77
# A physfn that names no PCI device is reported, and the device counts for itself alone.
expect 0 "" "$pci/0000:41:00.4" 77
stderr_has "physfn does not name a PCI device"
# A malformed line is reported and skipped; the others still ban.
printf '0000:41:00.0 \n0000:41:0.0\nx\n0000:41:00.0\n' > "$SRIOVD_OWNED_DEVICES"
expect 0 "ban=true" "$pci/0000:41:00.2" 77
stderr_has "owned-devices:1: not a PCI address"
printf '0000:41:00.0 \n0000:C1:00.0\n0000:c1:00.0x\n0000:c1:20.0\n0000:c1:00.8\n0000:c1:00.0' > "$SRIOVD_OWNED_DEVICES"
expect 0 "ban=true" "$pci/0000:c1:00.2" 77
expect 0 "" "$pci/0000:41:00.2" 77
stderr_has "owned-devices:2: not a PCI address"
# A NUL inside a line does not end it early.
printf '0000:41:00.0\0000x\n' > "$SRIOVD_OWNED_DEVICES"
expect 0 "" "$pci/0000:41:00.2" 77
stderr_has "owned-devices:1: not a PCI address"
# No file: sriovd is not running, nothing is banned, and that is not an error.
SRIOVD_OWNED_DEVICES=$dir/missing
expect 0 "" "$pci/0000:41:00.2" 77
[ ! -s "$dir/stderr" ] && ok || bad "a missing owned-devices wrote to stderr: $(cat "$dir/stderr")"
# An unreadable list bans nothing from it, says why, and owned-irqs still bans.
SRIOVD_OWNED_DEVICES=$dir
expect 0 "" "$pci/0000:41:00.2" 77
stderr_has "cannot read $dir"
expect 0 "ban=true" "$pci/0000:41:00.2" 42
SRIOVD_OWNED_DEVICES=$dir/no-devices

# Malformed arguments: usage on stderr, exit 2, nothing on stdout.
expect 2 "" "$dev" abc
stderr_has "Usage:"
expect 2 "" "$dev" ""
expect 2 "" "$dev" -42
expect 2 "" "$dev" +42
expect 2 "" "$dev" 042
expect 2 "" "$dev" " 42"
expect 2 "" "$dev" "42 "
expect 2 "" "$dev" 0x2a
expect 2 "" "$dev" 4294967296
expect 2 "" "$dev" 99999999999999999999
expect 2 "" "$dev"
expect 2 ""
expect 2 "" "$dev" 42 extra
expect 2 "" 42 "$dev"
expect 2 "" "" 42

echo "irqbalance-policy: $pass passed, $fail failed"
[ "$fail" = 0 ]
