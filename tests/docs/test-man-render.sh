#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-man-render.sh — the built man pages render at 80 columns without a single groff warning
set -u
command -v man >/dev/null || { echo "man missing: skip"; exit 77; }
fail=0
for page in "$@"; do
        warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null)
        if [ -n "$warnings" ]; then
                echo "$page: $warnings"
                fail=1
        fi
        text=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$page" 2>/dev/null)
        for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
                printf '%s\n' "$text" | grep -qx "$section" || { echo "$page: no $section section"; fail=1; }
        done
        # An @VARIABLE@ left over means man/meson.build did not fill in a path.
        if printf '%s\n' "$text" | grep -q '@[A-Z_]*@'; then
                echo "$page: unsubstituted: $(printf '%s\n' "$text" | grep -o '@[A-Z_]*@' | sort -u | tr '\n' ' ')"
                fail=1
        fi
done
[ $fail = 0 ] && echo "$# man pages render cleanly"
exit $fail
