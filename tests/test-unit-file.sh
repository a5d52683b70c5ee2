#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-file.sh — the generated sriovd.service keeps its conventions, and systemd-analyze
# verify accepts it with the built binaries in place of the installed ones
set -eu
unit=$1
sriovd=$2
sriovctl=$3
# shellcheck source=SCRIPTDIR/lib/unit-file.sh
. "$(dirname "$0")/lib/unit-file.sh"

# The template's conventions (why each is there: systemd/sriovd.service.in).
substituted
need 'Type=notify'
need 'BusName=org.sriovd.Manager1'
need 'RestartPreventExitStatus=2'
need 'RuntimeDirectoryPreserve=yes'
need 'StateDirectory=sriovd'
grep -q '^WatchdogSec=' "$unit" || fail "no WatchdogSec="
grep -q '^Documentation=man:sriovd(8)' "$unit" || fail "Documentation= does not start with man:sriovd(8)"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
reload=$(sed -n 's/^ExecReload=//p' "$unit")
case $exec_start in /*/sriovd) ;; *) fail "ExecStart=$exec_start is not an absolute path to sriovd" ;; esac
case $reload in /*/sriovctl\ reload) ;; *) fail "ExecReload=$reload is not a synchronous sriovctl reload" ;; esac

verify_setup
sed -e "s|^ExecStart=.*|ExecStart=$sriovd|" -e "s|^ExecReload=.*|ExecReload=$sriovctl reload|" \
        "$unit" > "$dir/sriovd.service"
verify "$dir/sriovd.service"
