#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-man-keys.py — sriovd.conf(5) documents exactly the keys the config parser accepts
#
# usage: test-man-keys.py src/daemon/config/config-keys.c man/sriovd.conf.5.scd conf/ [SRIOVD]
#
# The parser's side comes from config-keys.c's tables: SECTION("daemon", ..., daemon_keys) names each
# section's key table, and each table's KEY*("name", ...) or { .name = "name", ... } its keys,
# with the min/max of integer keys. The man page's side: a key is a line "*key* = ..." under a
# "## [section ...]" subsection (several sections may share one: "## [match ...], [pf ...]").
# Both ways, per section; each integer key's paragraph must state its range as "MIN..MAX".
# Then the example blocks: a block whose first line is "# .../NAME" (a shipped file in conf/)
# must hold exactly that file's non-comment lines; with SRIOVD, every example configuration is
# run through `sriovd --check-config` together with the example classes.

import os
import re
import subprocess
import sys
import tempfile


def parser_keys(config_c):
    with open(config_c, encoding='utf-8') as f:
        src = f.read()

    tables = {}
    for m in re.finditer(r'static const KeyDef (\w+)\[\] = \{(.*?)\n\};', src, re.S):
        keys = {}
        body = m.group(2)
        for km in re.finditer(r'KEY(?:_[A-Z]+)?\(\s*"(\w+)"([^)]*)\)', body):
            rng = None
            if re.match(r'KEY_(INT|UNSIGNED)', body[km.start():]):
                args = [a.strip() for a in km.group(2).split(',')]
                rng = (args[-2], args[-1])
            keys[km.group(1)] = rng
        for km in re.finditer(r'\{\s*\.name\s*=\s*"(\w+)"(.*?)\}', body, re.S):
            mm = re.search(r'\.min\s*=\s*(-?\w+),\s*\.max\s*=\s*(-?\w+)', km.group(2))
            keys[km.group(1)] = (mm.group(1), mm.group(2)) if mm else None
        tables[m.group(1)] = keys

    # Symbolic bounds (#define VF_RATE_MAX 400000) resolved to their numbers.
    defines = dict(re.findall(r'^#define\s+(\w+)\s+(-?\d+)\s*$', src, re.M))
    for keys in tables.values():
        for k, rng in keys.items():
            if rng:
                keys[k] = tuple(defines.get(x, x) for x in rng)

    sections = {}
    for m in re.finditer(r'SECTION\(\s*"(\w+)",\s*\w+,\s*[^,]+,\s*(\w+)\)', src):
        name, table = m.group(1), m.group(2)
        if table not in tables:
            sys.exit(f'{config_c}: section [{name}] uses key table {table}, which this test did not find')
        sections[name] = tables[table]
    if len(sections) < 2 or any(len(k) == 0 for k in sections.values()):
        sys.exit(f'{config_c}: found sections {sorted(sections)}; the extraction is out of date')
    return sections


def man_keys(scd):
    """{section: {key: (line, paragraph)}}, and the example blocks [(line, [lines])]."""
    with open(scd, encoding='utf-8') as f:
        lines = f.read().split('\n')
    doc, blocks = {}, []
    current, key, in_block = [], None, None
    for n, line in enumerate(lines, 1):
        if line.startswith('```'):
            if in_block is None:
                in_block = (n, [])
            else:
                blocks.append(in_block)
                in_block = None
            continue
        if in_block is not None:
            in_block[1].append(line)
            continue
        if line.startswith('#'):
            key = None
            current = re.findall(r'\[(\w+)', line) if line.startswith('## ') else []
            continue
        m = re.match(r'^\*(\w+)\* = ', line)
        if m and current:
            key = m.group(1)
            for s in current:
                if key in doc.setdefault(s, {}):
                    print(f'{scd}:{n}: key {key} documented twice in [{s}]')
                    sys.exit(1)
                doc[s][key] = [n, line]
            continue
        if key and (line.startswith('\t') or line == ''):
            for s in current:
                doc[s][key][1] += '\n' + line
        elif line and not line.startswith('\t'):
            key = None
    return doc, blocks


def content_lines(text):
    return [' '.join(l.split()) for l in text.split('\n') if l.strip() and not l.lstrip().startswith(('#', ';'))]


def main():
    config_c, scd, conf_dir = sys.argv[1:4]
    sriovd = sys.argv[4] if len(sys.argv) > 4 else None
    problems = []

    parsed = parser_keys(config_c)
    documented, blocks = man_keys(scd)

    for section, keys in parsed.items():
        for k, rng in keys.items():
            if k not in documented.get(section, {}):
                problems.append(f'{config_c}: [{section}] key {k} is not documented in {scd} '
                                f'(expected a line "*{k}* = ..." under "## [{section}...]")')
                continue
            line, para = documented[section][k]
            if rng and f'{rng[0]}..{rng[1]}' not in para:
                problems.append(f'{scd}:{line}: [{section}] {k}: the range {rng[0]}..{rng[1]} from {config_c} is not stated')
    for section, keys in documented.items():
        for k, (line, _) in keys.items():
            if section not in parsed:
                problems.append(f'{scd}:{line}: section [{section}] is not one the parser knows')
            elif k not in parsed[section]:
                problems.append(f'{scd}:{line}: [{section}] key {k} is documented but the parser does not accept it')

    # The shipped files, as the examples show them.
    shipped = {'sriovd.conf': os.path.join(conf_dir, 'sriovd.conf')}
    classes_dir = os.path.join(conf_dir, 'tenant-classes.d')
    for name in sorted(os.listdir(classes_dir)):
        if name.endswith('.ini'):
            shipped[name] = os.path.join(classes_dir, name)
    shown = {}
    for line, body in blocks:
        m = re.match(r'^# \S*/([\w.-]+)$', body[0]) if body else None
        if m:
            shown[m.group(1)] = (line, body)
    for name, path in shipped.items():
        with open(path, encoding='utf-8') as f:
            want = content_lines(f.read())
        if name not in shown:
            problems.append(f'{scd}: no example block for the shipped {path} (first line "# .../{name}")')
        elif content_lines('\n'.join(shown[name][1])) != want:
            problems.append(f'{scd}:{shown[name][0]}: the example of {name} differs from {path}:\n'
                            f'  man page: {content_lines(chr(10).join(shown[name][1]))}\n  shipped:  {want}')

    if problems:
        print('\n'.join(problems))
        return 1
    n_keys = sum(len(k) for k in parsed.values())
    print(f'{n_keys} keys in {len(parsed)} sections: all documented, nothing else; '
          f'{len(shipped)} shipped files match their examples')

    if not sriovd:
        return 0
    # Every example must be a valid configuration: each sriovd.conf-like block with all class blocks.
    confs, classes = [], {}
    for line, body in blocks:
        text = '\n'.join(body)
        if not re.search(r'^\[', text, re.M):
            continue
        m = re.match(r'^# \S*/tenant-classes\.d/([\w-]+)\.ini$', body[0])
        if m:
            classes[m.group(1)] = text
        else:
            confs.append((line, text))
    for line, text in confs:
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, 'tenant-classes.d'))
            for name, ctext in classes.items():
                with open(os.path.join(d, 'tenant-classes.d', name + '.ini'), 'w') as f:
                    f.write(ctext + '\n')
            with open(os.path.join(d, 'sriovd.conf'), 'w') as f:
                f.write(text + '\n')
            r = subprocess.run([sriovd, '--check-config', '--config', os.path.join(d, 'sriovd.conf')],
                               capture_output=True, text=True)
            if r.returncode != 0:
                problems.append(f'{scd}:{line}: the example is not a valid configuration:\n{r.stdout}{r.stderr}')
    if problems:
        print('\n'.join(problems))
        return 1
    print(f'{len(confs)} example configurations with {len(classes)} example classes pass sriovd --check-config')
    return 0


if __name__ == '__main__':
    sys.exit(main())
