#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-file.sh — the generated sriovd-placement.service keeps its conventions, and
# systemd-analyze verify accepts it with the build tree's program in place of the installed one
set -eu
unit=$1
program=$2
fail() { echo "$unit: $*"; exit 1; }
need() { grep -qx -- "$1" "$unit" || fail "no line \"$1\""; }

grep -q '@[a-z]*@' "$unit" && fail "unsubstituted @...@ left: $(grep '@[a-z]*@' "$unit")"
# No capabilities, its own user: a bug in the connector cannot change the host.
need 'CapabilityBoundingSet='
need 'User=_sriovd-placement'
need 'NoNewPrivileges=yes'
need 'ProtectSystem=strict'
need 'RestartPreventExitStatus=2'
grep -q '^Documentation=man:sriovd-placement(8)' "$unit" || fail "Documentation= is not man:sriovd-placement(8)"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case $exec_start in /*/sriovd-placement\ --config-file\ /*/placement.conf) ;;
*) fail "ExecStart=$exec_start is not sriovd-placement --config-file .../placement.conf" ;; esac
grep -q '^ConditionPathExists=/.*/placement.conf$' "$unit" || fail "no ConditionPathExists= on placement.conf"

command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing: skip"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The user exists only where the package is installed; tools/package-check verifies it there.
sed -e "s|^ExecStart=.*|ExecStart=$program --config-file $dir/placement.conf|" -e '/^User=/d' -e '/^Group=/d' \
        "$unit" > "$dir/sriovd-placement.service"
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$dir/sriovd-placement.service" 2>&1) || {
        echo "$out"
        exit 1
}
if printf '%s' "$out" | grep -q sriovd-placement.service; then
        echo "$out"
        exit 1
fi
echo "systemd-analyze verify: ok"
