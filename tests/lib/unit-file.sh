# SPDX-License-Identifier: LGPL-2.1-or-later
# unit-file.sh — what the unit-file tests share, sourced with $unit set to the generated unit:
# checks on its lines, and systemd-analyze verify of a copy that runs the build tree's programs

# shellcheck shell=sh disable=SC2154
fail() { echo "$unit: $*"; exit 1; }
need() { grep -qx -- "$1" "$unit" || fail "no line \"$1\""; }

# Fails when configure_file left an @...@ placeholder in the unit.
substituted() {
        if grep -q '@[a-z]*@' "$unit"; then
                fail "unsubstituted @...@ left: $(grep '@[a-z]*@' "$unit")"
        fi
}

# Sets $dir to a directory that is removed on exit, or skips without systemd-analyze.
verify_setup() {
        command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing: skip"; exit 77; }
        dir=$(mktemp -d)
        trap 'rm -rf "$dir"' EXIT
}

# The man pages are installed with the package, not on the build host, hence --man=no;
# tools/package-check runs verify with them on the installed unit.
verify() {
        out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$1" 2>&1) || {
                echo "$out"
                exit 1
        }
        # verify exits 0 on some warnings, so any output about the unit is a failure.
        if printf '%s' "$out" | grep -q "$(basename "$1")"; then
                echo "$out"
                exit 1
        fi
        echo "systemd-analyze verify: ok"
}
