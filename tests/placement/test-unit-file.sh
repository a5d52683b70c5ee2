#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-file.sh — the generated sriovd-placement.service keeps its conventions, and
# systemd-analyze verify accepts it with the build tree's program in place of the installed one
set -eu
unit=$1
program=$2
# shellcheck source=SCRIPTDIR/../lib/unit-file.sh
. "$(dirname "$0")/../lib/unit-file.sh"

substituted
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

verify_setup
# The user exists only where the package is installed; tools/package-check verifies it there.
sed -e "s|^ExecStart=.*|ExecStart=$program --config-file $dir/placement.conf|" -e '/^User=/d' -e '/^Group=/d' \
        "$unit" > "$dir/sriovd-placement.service"
verify "$dir/sriovd-placement.service"
