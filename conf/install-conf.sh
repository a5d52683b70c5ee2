#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# install-conf.sh — meson install script: copy the vendor defaults into the configuration
# directory, each file only where the operator has none, so a reinstall never overwrites an
# edited sriovd.conf or class file (the Debian package ships them as conffiles instead).
set -eu
vendor=$1
etc=$2
dest=${DESTDIR:-}
cd "$dest$vendor"
# grafana/ is data for Grafana, not this host's configuration: it stays in the vendor directory.
find . -path ./grafana -prune -o -type f -print | sort | while read -r f; do
        target="$dest$etc/${f#./}"
        if [ -e "$target" ]; then
                echo "Keeping $etc/${f#./} (the shipped one is $vendor/${f#./})"
                continue
        fi
        mkdir -p "$(dirname "$target")"
        cp "$f" "$target"
        echo "Installing $etc/${f#./}"
done
