#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-completion.sh — bash completion of sriovd and sriovctl, driven as bash drives it
#
# usage: test-completion.sh SRIOVD_COMPLETION SRIOVCTL_COMPLETION SRIOVCTL
# COMP_WORDS/COMP_CWORD are set as readline would and the completion function called; no daemon:
# the daemon's answers come from a stand-in sriovctl printing what the real one prints, and the
# real sriovctl is pointed at a bus that does not exist, where completion must say nothing.
set -u

bc=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
[[ -r $bc ]] || { echo "bash-completion missing ($bc): skip"; exit 77; }
sriovd_completion=$1 sriovctl_completion=$2 sriovctl=$3

# bash_completion wants an interactive-looking shell; its errors would hide ours.
set +u
source "$bc"
source "$sriovd_completion"
source "$sriovctl_completion"
set -u

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# complete "WORDS..." expected — the last word is the one completed ("" for a new word).
check() {
        local line=$1 want=$2 got func
        # As readline splits: at blanks, and ":" and "=" (COMP_WORDBREAKS) are words of their own.
        local w
        COMP_WORDS=()
        for w in $line; do
                while read -r t; do COMP_WORDS+=("$t"); done < <(grep -oE '[^:=]+|[:=]+' <<<"$w")
        done
        [[ $line == *' ' ]] && COMP_WORDS+=('')
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$line COMP_POINT=${#line}
        COMPREPLY=()
        func=_${COMP_WORDS[0]}
        "$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>"$tmp/stderr"
        got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
        got=${got% }
        if [[ $got != "$want" ]]; then
                echo "FAIL '$line': got '$got', want '$want'"
                fail=1
        elif [[ -s $tmp/stderr ]]; then
                echo "FAIL '$line': printed on stderr: $(cat "$tmp/stderr")"
                fail=1
        else
                echo "ok   '$line' -> '$got'"
        fi
}

# sriovd's flags; --config completes files, --root directories, --log-level the levels.
check 'sriovd --log' '--log-level'
check 'sriovd --log-level w' 'warning'
check 'sriovd --log-level ' 'crit debug err info notice warning'
check 'sriovd --ch' '--check-config --check-host'
check 'sriovd --d' '--dry-run'
mkdir "$tmp/hosts" "$tmp/hosts/two-socket" && touch "$tmp/hosts/my.conf"
cd "$tmp/hosts"
check 'sriovd --config m' 'my.conf'
check 'sriovd --root t' 'two-socket'
check 'sriovd --root m' ''
cd - >/dev/null

# sriovctl's commands and options; allocate's own options only after allocate.
check 'sriovctl st' 'status'
check 'sriovctl ch' 'check-host'
check 'sriovctl t' 'tenant tenants top'
check 'sriovctl to' 'top'
check 'sriovctl top --' '--address --help --interval --json --once --version'
check 'sriovctl status --o' ''
check 'sriovctl top --interval ' '1 10 2 5'
check 'sriovctl top --interval 5 --o' '--once'
check 'sriovctl f' 'force-num-vfs'
check 'sriovctl --j' '--json'
check 'sriovctl allocate --n' '--numa-node'
check 'sriovctl status --n' ''
check 'sriovctl --json re' 'release reload'
check 'sriovctl plan ' ''

# The daemon's tenants, classes and PFs, through a stand-in sriovctl on PATH.
mkdir "$tmp/bin"
cat >"$tmp/bin/sriovctl" <<'FAKE'
#!/bin/sh
# Prints what sriovctl --json prints; anything but a --json list is a mistake of the completion.
[ "$1" = --address ] && { [ "$2" = unix:path=/other ] || exit 9; shift 2; }
[ "$1" = --json ] || exit 9
case $2 in
tenants) cat <<'JSON'
[
  {
    "tenant": "vm-17-nic0",
    "class": "latency-critical",
    "kind": "vf",
    "address": "0000:c1:00.2",
    "netdev": null,
    "mac": "7e:ad:7f:1b:cc:34",
    "state": "allocated",
    "domain": "vm-17",
    "numa_node": 1,
    "coalesce": null
  },
  {
    "tenant": "vm-18-nic0",
    "class": "legacy",
    "kind": "virtio",
    "address": null,
    "netdev": null,
    "mac": "7e:ad:7f:1b:cc:35",
    "state": "allocated",
    "domain": null,
    "numa_node": null,
    "coalesce": null
  }
]
JSON
;;
devices) cat <<'JSON'
[
  {
    "address": "0000:41:00.0",
    "kind": "pf",
    "pf": null,
    "numa_node": 0,
    "driver": "mlx5_core",
    "netdev": "enp65s0f0np0",
    "num_vfs": 8,
    "total_vfs": 16
  },
  {
    "address": "0000:41:00.2",
    "kind": "vf",
    "pf": "0000:41:00.0",
    "numa_node": 0,
    "driver": "vfio-pci",
    "netdev": null,
    "vf_index": 0,
    "tenant": null
  }
]
JSON
;;
*) exit 9 ;;
esac
FAKE
chmod +x "$tmp/bin/sriovctl"
PATH=$tmp/bin:$PATH
hash -r
check 'sriovctl release vm-' 'vm-17-nic0 vm-18-nic0'
check 'sriovctl tenant vm-17' 'vm-17-nic0'
check 'sriovctl coalesce vm-17-nic0 ' ''
check 'sriovctl allocate vm-19-nic0 ' 'best-effort latency-critical legacy rt-vcpu throughput'
check 'sriovctl allocate --numa-node 1 vm-19-nic0 th' 'throughput'
check 'sriovctl allocate a b ' ''
check 'sriovctl force-num-vfs ' '0000:41:00.0'
# Readline replaces only what follows the last ":", so that is what completion must offer.
check 'sriovctl force-num-vfs 0000:4' '41:00.0'
check 'sriovctl --address ' 'unix:path='
check 'sriovctl --address unix:p' 'path='
check 'sriovctl --address unix:path=/other release vm-18' 'vm-18-nic0'
check 'sriovctl --address=unix:path=/other release vm-18' 'vm-18-nic0'

# The real sriovctl with no daemon: nothing from it, nothing on stderr, and quickly.
mkdir "$tmp/real" && ln -s "$sriovctl" "$tmp/real/sriovctl"
PATH=$tmp/real:${PATH#"$tmp/bin:"}
hash -r
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-bus
start=$SECONDS
check 'sriovctl release ' ''
check 'sriovctl allocate t ' 'best-effort latency-critical rt-vcpu throughput'
if ((SECONDS - start > 3)); then
        echo "FAIL: completion without a daemon took $((SECONDS - start)) s"
        fail=1
fi

exit $fail
