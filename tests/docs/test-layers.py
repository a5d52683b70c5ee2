#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-layers.py — every #include in src/ and include/sriovd/ points down the layers
#
# usage: test-layers.py SOURCE_ROOT
#
# The layers of docs/ARCHITECTURE.md, lowest first: shared (leaf utilities) < core (policy model,
# inventory, plan, allocator: pure) < kernel, virt (the effectors, side by side, neither including
# the other) < daemon; beside them the bus protocol, which the daemon and sriovctl (src/ctl)
# share, and on which sriovctl builds with the shared utilities only. A file is in the layer of
# its directory: src/core/... and include/sriovd/core/... are core. No table says which header is
# where. An include is found as the compiler finds it: beside the includer, then in include/, then
# in src/daemon/. Checked: every quoted include exists and points down; an "...-internal.h" is
# included only from its own directory; a header in include/sriovd/ sits in a layer's folder and
# is included from another layer (a header used in one layer only lives beside its code); and the
# external libraries each layer may use (the core and the shared utilities none).
#
# The daemon is built of rooms, one folder each (src/daemon/bus/, state/, ...), under main.c at
# src/daemon/ itself. Their includes must not form a circle: each room includes only rooms below
# it. The layer diagram and the daemon's rooms, floor by floor, are printed. The checker first
# checks itself on synthetic files (an upward include, a header outside a layer folder, a header
# no other layer needs, a foreign -internal.h, a library the core must not use, a circle of
# rooms), so it cannot pass by catching nothing.
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

# Headers that the build makes, which src/ includes by quotes: meson's build configuration (version,
# sysconfdir) is a leaf; bpftool's skeletons of src/kernel/bpf/ are the kernel layer's.
GENERATED = {
    'sriovd-config.h': 'shared',
    'drift.skel.h': 'kernel',
    'latency.skel.h': 'kernel',
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

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)

# Where the compiler looks for a quoted include after the includer's own directory.
SEARCH = ('include', 'src/daemon')


def layer_of_file(path):
    """The layer of a file under src/ or include/sriovd/LAYER/, None for anything else."""
    parts = path.split('/')
    if parts[:2] == ['include', 'sriovd'] and len(parts) == 4 and parts[2] in LAYERS:
        return parts[2]
    if parts[0] == 'src' and len(parts) >= 3 and parts[1] in LAYERS:
        return parts[1]
    return None


def room_of_file(path):
    """The daemon room of a file: its folder under src/daemon/, or main for src/daemon/ itself."""
    parts = path.split('/')
    if parts[:2] != ['src', 'daemon']:
        return None
    return parts[2] if len(parts) > 3 else 'main'


def resolve(files, includer, inc):
    for base in (os.path.dirname(includer),) + SEARCH:
        target = os.path.normpath(os.path.join(base, inc))
        if target in files:
            return target
    return None


def circles(graph):
    """The strongly connected sets of more than one node in graph {node: set(nodes)} (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(files):
    """files: {relative path: text}. Returns (violations, edges, edge_files, rooms)."""
    violations = []
    edges = {}          # (from layer, to layer) -> number of includes
    edge_files = {}     # (from layer, to layer) -> set of including files
    rooms = {}          # daemon room -> {room it includes: [file:line, ...]}
    header_users = {}   # header in include/sriovd/ -> set of (includer, includer's layer)

    for path in files:
        if path.startswith('include/') and layer_of_file(path) is None:
            violations.append(f'{path}: a header in include/ belongs in include/sriovd/LAYER/, '
                              f'LAYER one of {", ".join(LAYERS)}')
    for path, text in sorted(files.items()):
        src = layer_of_file(path)
        if src is None:
            continue
        room = room_of_file(path)
        if room:
            rooms.setdefault(room, {})

        for m in INCLUDE.finditer(text):
            kind, inc = m.group(1), m.group(2)
            line = text.count('\n', 0, m.start()) + 1
            where = f'{path}:{line}'

            if kind == '<':
                for prefix, layers in LIBRARIES.items():
                    if inc.startswith(prefix) and src not in layers:
                        violations.append(f'{where}: <{inc}> in layer {src}; only {", ".join(sorted(layers))} may use it')
                continue
            if inc in GENERATED:
                dst, target = GENERATED[inc], None
            else:
                target = resolve(files, path, inc)
                if target is None:
                    violations.append(f'{where}: "{inc}" is no file beside it, in include/ or in src/daemon/')
                    continue
                dst = layer_of_file(target)
                if dst is None:
                    violations.append(f'{where}: "{inc}" is in no layer')
                    continue
                if target.endswith('-internal.h') and os.path.dirname(target) != os.path.dirname(path):
                    violations.append(f'{where}: "{inc}" is another directory\'s internal header')
                    continue
                if target.startswith('include/'):
                    header_users.setdefault(target, set()).add((path, src))
                to_room = room_of_file(target)
                if room and to_room and to_room != room:
                    rooms[room].setdefault(to_room, []).append(where)

            edges[(src, dst)] = edges.get((src, dst), 0) + 1
            edge_files.setdefault((src, dst), set()).add(path)
            if dst not in ALLOWED[src]:
                violations.append(f'{where}: "{inc}" ({dst}) included from layer {src}, '
                                  f'which may include only {", ".join(sorted(ALLOWED[src]))}')

    # A header in include/sriovd/ is there for another layer: one includes it, or it comes with one that is.
    public = {h for h, users in header_users.items() if any(layer != layer_of_file(h) for _, layer in users)}
    grew = True
    while grew:
        grew = False
        for h, users in header_users.items():
            if h not in public and any(u in public for u, _ in users):
                public.add(h)
                grew = True
    for h in sorted(f for f in files if layer_of_file(f) and f.startswith('include/')):
        if h not in public:
            violations.append(f'{h}: no other layer includes it; move it beside its code in src/{layer_of_file(h)}/')

    graph = {r: set(tos) for r, tos in rooms.items()}
    for circle in circles(graph):
        ties = [f'{a} -> {b} ({rooms[a][b][0]})' for a in circle for b in circle if b in rooms[a]]
        violations.append(f'the daemon\'s rooms {", ".join(circle)} include each other in a circle: ' + '; '.join(ties))
    return violations, edges, edge_files, rooms


def self_test():
    base = {
        'include/sriovd/shared/macro.h': '#pragma once\n',
        'include/sriovd/core/plan.h': '#include "sriovd/shared/macro.h"\n',
        'src/core/plan.c': '#include "plan-internal.h"\n',
        'src/core/plan-internal.h': '#include "sriovd/core/plan.h"\n',
        'src/daemon/main.c': '#include "manager/manager.h"\n',
        'src/daemon/manager/manager.h': '#include "sriovd/core/plan.h"\n',
        'src/daemon/manager/manager.c': '#include "manager.h"\n#include "bus/bus.h"\n#include <ini.h>\n',
        'src/daemon/bus/bus.h': '#pragma once\n',
        'src/daemon/bus/bus.c': '#include "bus.h"\n#include "sriovd/shared/macro.h"\n',
    }
    v, _, _, _ = check(base)
    assert v == [], v

    cases = [
        ('src/core/allocator.c', '#include <stdio.h>\n\n#include "manager/manager.h"\n',
         'src/core/allocator.c:3: "manager/manager.h" (daemon) included from layer core'),
        ('include/sriovd/core/plan.h', '#include "manager/manager.h"\n',
         'include/sriovd/core/plan.h:1: "manager/manager.h" (daemon) included from layer core'),
        ('include/sriovd/brand-new.h', '#pragma once\n',
         'include/sriovd/brand-new.h: a header in include/ belongs in include/sriovd/LAYER/'),
        ('include/sriovd/kernel/lonely.h', '#pragma once\n',
         'include/sriovd/kernel/lonely.h: no other layer includes it'),
        ('src/kernel/irq.c', '#include "sriovd/kernel/nonesuch.h"\n',
         'src/kernel/irq.c:1: "sriovd/kernel/nonesuch.h" is no file'),
        ('src/virt/virt.c', '#include "../core/plan-internal.h"\n',
         'src/virt/virt.c:1: "../core/plan-internal.h" is another directory\'s internal header'),
        ('src/core/plan-vf.c', '#include <libudev.h>\n',
         'src/core/plan-vf.c:1: <libudev.h> in layer core'),
        ('src/ctl/sriovctl.c', '#include "manager/manager.h"\n',
         'src/ctl/sriovctl.c:1: "manager/manager.h" (daemon) included from layer ctl'),
        ('src/daemon/bus/bus.c', '#include "bus.h"\n#include "manager/manager.h"\n',
         'the daemon\'s rooms bus, manager include each other in a circle'),
    ]
    for path, text, expected in cases:
        files = dict(base)
        files[path] = text
        v, _, _, _ = check(files)
        if len(v) != 1 or not v[0].startswith(expected):
            sys.exit(f'self-test: {path} with {text!r}: expected one violation "{expected}...", got {v}')


def read_tree(root):
    files = {}
    for top in ('src', 'include'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    full = os.path.join(dirpath, n)
                    with open(full, encoding='utf-8') as f:
                        files[os.path.relpath(full, root)] = f.read()
    return files


def diagram(edges, edge_files, rooms):
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

    floor = {}

    def floor_of(r, seen=()):
        if r not in floor:
            below = [floor_of(t, seen + (r,)) for t in rooms.get(r, {}) if t not in seen]
            floor[r] = 1 + max(below, default=0)
        return floor[r]

    print('The daemon\'s rooms, top floor first ("room -> the rooms it includes"):')
    for r in sorted(rooms, key=lambda r: (-floor_of(r), r)):
        print(f'  {floor_of(r):2}  {r:<8} -> {", ".join(sorted(rooms[r])) or "(nothing)"}')


def main():
    if len(sys.argv) != 2:
        sys.exit(f'usage: {sys.argv[0]} SOURCE_ROOT')
    self_test()

    files = read_tree(sys.argv[1])
    violations, edges, edge_files, rooms = check(files)
    diagram(edges, edge_files, rooms)

    if violations:
        print(f'\n{len(violations)} problem(s) with the layers:', file=sys.stderr)
        for v in violations:
            print('  ' + v, file=sys.stderr)
        sys.exit(1)
    print(f'{len(files)} files checked, every include points down, and no rooms form a circle')


if __name__ == '__main__':
    main()
