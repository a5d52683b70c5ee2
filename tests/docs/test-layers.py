#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-layers.py — every #include in src/ and include/sriovd/ points down the layers
#
# usage: test-layers.py SOURCE_ROOT
#
# The layers of docs/ARCHITECTURE.md, lowest first: shared (leaf utilities) < core (policy model,
# inventory, plan, allocator: pure) < kernel, virt (the effectors, side by side, neither including
# the other) < daemon; beside them the bus protocol, which the daemon and sriovctl (src/ctl)
# share, and on which sriovctl builds with the shared utilities only. A source file is in the
# layer of its directory (src/core/... is core); a header in include/sriovd/ is in the layer
# HEADERS says, and a header missing from HEADERS fails the test, so a new one is placed on
# purpose. Checked: every #include "sriovd/...", every #include "...-internal.h" (only from its
# own directory), and the external libraries each layer may use (the core and the shared utilities
# none). The layer diagram as the includes draw it is printed. The checker first checks itself on
# synthetic files (an upward include, an unknown header, a foreign -internal.h, a library the core
# must not use), so it cannot pass by catching nothing.
#
# The linker checks the same arrows from the other side: tests/layers/meson.build.

import os
import re
import sys

LAYERS = ['shared', 'core', 'kernel', 'virt', 'protocol', 'daemon', 'ctl']

# What each layer may include, itself included.
ALLOWED = {
    'shared': {'shared'},
    'core': {'shared', 'core'},
    'kernel': {'shared', 'core', 'kernel'},
    'virt': {'shared', 'core', 'virt'},
    'protocol': {'shared', 'protocol'},
    'daemon': {'shared', 'core', 'kernel', 'virt', 'protocol', 'daemon'},
    'ctl': {'shared', 'protocol', 'ctl'},
}

HEADERS = {
    # leaf utilities
    'macro.h': 'shared',
    'cpuset.h': 'shared',
    'util.h': 'shared',
    'pci-set.h': 'shared',
    # the pure core
    'inventory.h': 'core',
    'policy.h': 'core',
    'plan.h': 'core',
    'error-class.h': 'core',
    'allocator.h': 'core',
    'guest-placement.h': 'core',
    'metrics.h': 'core',
    'counters.h': 'core',
    'alert.h': 'core',
    'alert-policy.h': 'core',
    'alert-metrics.h': 'core',
    'prom.h': 'core',
    # kernel effectors
    'rootfs.h': 'kernel',
    'kernel.h': 'kernel',
    'bpf-events.h': 'kernel',
    'latency-hist.h': 'core',
    'netlink.h': 'kernel',
    'netdev-stats.h': 'kernel',
    'ethtool.h': 'kernel',
    'netdev-genl.h': 'kernel',
    'napi-pair.h': 'core',
    'monitor.h': 'kernel',
    'vfio-users.h': 'kernel',
    'vhost.h': 'kernel',
    'qemu-vcpu.h': 'kernel',
    'proc-counters.h': 'kernel',
    # libvirt
    'virt.h': 'virt',
    # what the daemon and sriovctl share on the bus
    'bus-error.h': 'protocol',
    'bus-protocol.h': 'protocol',
    # the daemon
    'config.h': 'daemon',
    'log.h': 'daemon',
    'jsonc.h': 'daemon',
    'output.h': 'daemon',
    'apply.h': 'daemon',
    'manager.h': 'daemon',
    'runtime.h': 'daemon',
    'state.h': 'daemon',
    'state-writer.h': 'daemon',
    'metrics-file.h': 'daemon',
    'alerts.h': 'daemon',
    'sampler.h': 'daemon',
    'tenants.h': 'daemon',
    'guests.h': 'daemon',
    'guest-vhost.h': 'daemon',
    'guest-vcpu.h': 'daemon',
    'vf-wait.h': 'daemon',
    'vf-irq-watch.h': 'daemon',
    'bus.h': 'daemon',
}

# Headers outside include/sriovd/ that src/ includes by quotes: meson's generated build
# configuration (version, sysconfdir) is a leaf; bpftool's skeletons of src/kernel/bpf/ are the
# kernel layer's, and so are the BPF programs' own kernel types.
OTHER_HEADERS = {
    'sriovd-config.h': 'shared',
    'drift.skel.h': 'kernel',
    'latency.skel.h': 'kernel',
    'vmlinux-min.h': 'kernel',
    'bpf/latency-map.h': 'kernel',
    'latency-map.h': 'kernel',
}

SOURCE_DIRS = {
    'src/shared': 'shared',
    'src/core': 'core',
    'src/kernel': 'kernel',
    'src/virt': 'virt',
    'src/daemon': 'daemon',
    'src/ctl': 'ctl',
}

# External libraries by the prefix of their headers, and the layers that may use them.
LIBRARIES = {
    'libudev.h': {'kernel', 'daemon'},
    'pci/': {'kernel', 'daemon'},
    'netlink/': {'kernel', 'daemon'},
    'libvirt/': {'virt', 'daemon'},
    'libxml/': {'virt', 'daemon'},
    'systemd/': {'virt', 'protocol', 'daemon', 'ctl'},
    'ini.h': {'daemon'},
    'json-c/': {'daemon', 'ctl'},
    'bpf/': {'kernel'},
}

# Includes that break a rule today and are being removed in a parallel change; each names who
# removes it. An entry that no longer matches an include fails the test: delete it then.
KNOWN = {
}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)


def layer_of_file(path):
    """The layer of a file under src/ or include/sriovd/, None for anything else."""
    if path.startswith('include/sriovd/'):
        return HEADERS.get(path[len('include/sriovd/'):], 'unknown')
    d = os.path.dirname(path)
    return SOURCE_DIRS.get(d)


def check(files):
    """files: {relative path: text}. Returns (violations, edges, used_known)."""
    violations = []
    edges = {}          # (from layer, to layer) -> number of includes
    edge_files = {}     # (from layer, to layer) -> set of including files
    used_known = set()

    for path, text in sorted(files.items()):
        if path.startswith('include/sriovd/'):
            name = path[len('include/sriovd/'):]
            if name not in HEADERS:
                violations.append(f'{path}: header not placed in a layer; add it to HEADERS in {__file__}')
                continue
        src = layer_of_file(path)
        if src is None:
            continue
        d = os.path.dirname(path)

        for m in INCLUDE.finditer(text):
            kind, inc = m.group(1), m.group(2)
            line = text.count('\n', 0, m.start()) + 1
            where = f'{path}:{line}'

            if kind == '<':
                for prefix, layers in LIBRARIES.items():
                    if inc.startswith(prefix) and src not in layers:
                        violations.append(f'{where}: <{inc}> in layer {src}; only {", ".join(sorted(layers))} may use it')
                continue

            if inc.startswith('sriovd/'):
                dst = HEADERS.get(inc[len('sriovd/'):])
                if dst is None:
                    violations.append(f'{where}: "{inc}" is not a header this test knows; add it to HEADERS')
                    continue
            elif inc.endswith('-internal.h'):
                target = os.path.normpath(os.path.join(d, inc))
                if os.path.dirname(target) != d or os.path.dirname(inc):
                    violations.append(f'{where}: "{inc}" is another directory\'s internal header')
                    continue
                if target not in files:
                    violations.append(f'{where}: "{inc}" does not exist in {d}')
                    continue
                dst = src
            elif inc in OTHER_HEADERS:
                dst = OTHER_HEADERS[inc]
            else:
                target = os.path.normpath(os.path.join(d, inc))
                if target in files and layer_of_file(target):
                    dst = layer_of_file(target)
                else:
                    violations.append(f'{where}: "{inc}" is not a header this test knows')
                    continue

            edges[(src, dst)] = edges.get((src, dst), 0) + 1
            edge_files.setdefault((src, dst), set()).add(path)
            if dst not in ALLOWED[src]:
                if (path, inc) in KNOWN:
                    used_known.add((path, inc))
                    continue
                violations.append(f'{where}: "{inc}" ({dst}) included from layer {src}, '
                                  f'which may include only {", ".join(sorted(ALLOWED[src]))}')

    return violations, edges, edge_files, used_known


def self_test():
    base = {
        'include/sriovd/macro.h': '#pragma once\n',
        'include/sriovd/plan.h': '#include "sriovd/macro.h"\n',
        'include/sriovd/manager.h': '#include "sriovd/plan.h"\n',
        'src/core/plan.c': '#include "plan-internal.h"\n',
        'src/core/plan-internal.h': '#include "sriovd/plan.h"\n',
        'src/daemon/manager.c': '#include "sriovd/manager.h"\n#include <ini.h>\n',
    }
    v, _, _, _ = check(base)
    assert v == [], v

    cases = [
        ('src/core/allocator.c', '#include <stdio.h>\n\n#include "sriovd/manager.h"\n',
         'src/core/allocator.c:3: "sriovd/manager.h" (daemon) included from layer core'),
        ('include/sriovd/plan.h', '#include "sriovd/manager.h"\n',
         'include/sriovd/plan.h:1: "sriovd/manager.h" (daemon) included from layer core'),
        ('include/sriovd/brand-new.h', '#pragma once\n',
         'include/sriovd/brand-new.h: header not placed in a layer'),
        ('src/kernel/irq.c', '#include "sriovd/nonesuch.h"\n',
         'src/kernel/irq.c:1: "sriovd/nonesuch.h" is not a header this test knows'),
        ('src/virt/virt.c', '#include "../core/plan-internal.h"\n',
         'src/virt/virt.c:1: "../core/plan-internal.h" is another directory\'s internal header'),
        ('src/core/plan-vf.c', '#include <libudev.h>\n',
         'src/core/plan-vf.c:1: <libudev.h> in layer core'),
        ('src/ctl/sriovctl.c', '#include "sriovd/manager.h"\n',
         'src/ctl/sriovctl.c:1: "sriovd/manager.h" (daemon) included from layer ctl'),
        ('src/kernel/sched.c', '#include "sriovd/virt.h"\n',
         'src/kernel/sched.c:1: "sriovd/virt.h" (virt) included from layer kernel'),
    ]
    for path, text, expected in cases:
        files = dict(base)
        files[path] = text
        v, _, _, _ = check(files)
        if len(v) != 1 or not v[0].startswith(expected):
            sys.exit(f'self-test: {path} with {text!r}: expected one violation "{expected}...", got {v}')


def read_tree(root):
    files = {}
    for top in ('src', 'include/sriovd'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    full = os.path.join(dirpath, n)
                    with open(full, encoding='utf-8') as f:
                        files[os.path.relpath(full, root)] = f.read()
    return files


def diagram(edges, edge_files):
    print('Layer diagram, as the includes draw it ("A -> B: N includes in M files": files of layer A')
    print('include N times headers of layer B; a layer\'s includes of itself are left out):')
    for src in LAYERS:
        outs = [(dst, edges[(src, dst)], len(edge_files[(src, dst)]))
                for dst in LAYERS if dst != src and (src, dst) in edges]
        if not outs:
            print(f'  {src:<8} -> (nothing)')
            continue
        for i, (dst, n, m) in enumerate(outs):
            head = f'  {src:<8} ->' if i == 0 else ' ' * 13
            print(f'{head} {dst:<8} {n:4} includes in {m:3} files')
    up = [(s, d) for (s, d) in edges if s != d and d not in ALLOWED[s]]
    print('Arrows pointing up or sideways:', ', '.join(f'{s} -> {d}' for s, d in sorted(up)) or 'none')


def main():
    if len(sys.argv) != 2:
        sys.exit(f'usage: {sys.argv[0]} SOURCE_ROOT')
    self_test()

    files = read_tree(sys.argv[1])
    violations, edges, edge_files, used_known = check(files)
    diagram(edges, edge_files)

    for (path, inc), who in sorted(KNOWN.items()):
        if (path, inc) in used_known:
            print(f'known, being removed ({who}): {path} includes "{inc}"')
        else:
            violations.append(f'{path}: no longer includes "{inc}"; delete its KNOWN entry in {__file__}')

    if violations:
        print(f'\n{len(violations)} include(s) cross a layer the wrong way:', file=sys.stderr)
        for v in violations:
            print('  ' + v, file=sys.stderr)
        sys.exit(1)
    print(f'{len(files)} files checked, every include points down')


if __name__ == '__main__':
    main()
