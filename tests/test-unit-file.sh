#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-file.sh — the generated sriovd.service keeps its conventions, and systemd-analyze
# verify accepts it with the built binaries in place of the installed ones
set -eu
unit=$1
sriovd=$2
sriovctl=$3
fail() { echo "$unit: $*"; exit 1; }
need() { grep -qx -- "$1" "$unit" || fail "no line \"$1\""; }

# The template's conventions (why each is there: systemd/sriovd.service.in).
grep -q '@[a-z]*@' "$unit" && fail "unsubstituted @...@ left: $(grep '@[a-z]*@' "$unit")"
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

command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing: skip"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed -e "s|^ExecStart=.*|ExecStart=$sriovd|" -e "s|^ExecReload=.*|ExecReload=$sriovctl reload|" \
        "$unit" > "$dir/sriovd.service"
# --man=no: the pages are installed with the package, not on the build host; tools/package-check
# runs verify with them on the installed unit.
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$dir/sriovd.service" 2>&1) || {
        echo "$out"
        exit 1
}
# verify exits 0 on some warnings; treat any output about our unit as a failure
if printf '%s' "$out" | grep -q sriovd.service; then
        echo "$out"
        exit 1
fi
echo "systemd-analyze verify: ok"
