#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-unit-file.sh — systemd-analyze verify accepts systemd/sriovd.service (with the built binary)
set -eu
unit=$1
sriovd=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing: skip"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|^ExecStart=.*|ExecStart=$sriovd|" "$unit" > "$dir/sriovd.service"
grep -q '^Type=notify$' "$dir/sriovd.service"
grep -q '^ExecReload=' "$dir/sriovd.service"
grep -q '^WatchdogSec=' "$dir/sriovd.service"
grep -q '^StateDirectory=sriovd$' "$dir/sriovd.service"
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$dir/sriovd.service" 2>&1) || {
        echo "$out"
        exit 1
}
# verify exits 0 on some warnings; treat any output about our unit as a failure
if printf '%s' "$out" | grep -q sriovd.service; then
        echo "$out"
        exit 1
fi
echo "systemd-analyze verify: ok"
