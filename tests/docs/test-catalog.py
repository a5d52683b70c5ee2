#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-catalog.py — every MESSAGE_ID in log.h has a journal catalog entry, and every entry an ID
#
# usage: test-catalog.py src/daemon/base/log.h BUILT_CATALOG [man/sriovd.8.scd [DOC...]]
# (a DOC such as README.md may quote MESSAGE_ID=..., only ones that exist)
# Checks the entries' fields and, where journalctl exists, that journalctl itself compiles the
# catalog (--update-catalog into a private --root) and lists every ID. Exit 77 only when
# journalctl is missing, after the parsing checks passed.

import os
import re
import shutil
import subprocess
import sys
import tempfile

ID_RE = re.compile(r'^[0-9a-f]{32}$')
# systemd-id128 new makes random (version 4, RFC 4122 variant) IDs; hand-typed ones rarely are.
V4_RE = re.compile(r'^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$')
REQUIRED = ('Subject', 'Defined-By', 'Support', 'Documentation')


def log_h_ids(path):
    ids = {}
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*define\s+(SRIOVD_MESSAGE_\w+)\s+"([^"]*)"', line)
            if m:
                ids[m.group(2)] = (m.group(1), n)
    return ids


def catalog_entries(path):
    """{id: (line, {field: value}, body)}, and a list of problems found while parsing."""
    entries, problems = {}, []
    current = None
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        if line.startswith('-- '):
            words = line[3:].split()
            mid = words[0] if words else ''
            if not ID_RE.match(mid):
                problems.append(f'{path}:{n}: "{line}" is not "-- " and 32 lowercase hex digits')
            if len(words) > 1:
                problems.append(f'{path}:{n}: entry {mid} has a language tag; expected the default language only')
            if mid in entries:
                problems.append(f'{path}:{n}: duplicate entry {mid}, first at line {entries[mid][0]}')
            current = {'line': n, 'fields': {}, 'body': [], 'in_body': False}
            entries[mid] = current
            continue
        if current is None:
            if line and not line.startswith('#'):
                problems.append(f'{path}:{n}: text before the first entry')
            continue
        if not current['in_body']:
            if line == '':
                current['in_body'] = True
                continue
            m = re.match(r'^([A-Za-z-]+): (.+)$', line)
            if not m:
                problems.append(f'{path}:{n}: "{line}" is not a "Field: value" header line')
                continue
            current['fields'][m.group(1)] = m.group(2)
        else:
            current['body'].append(line)
    result = {}
    for mid, e in entries.items():
        result[mid] = (e['line'], e['fields'], '\n'.join(e['body']).strip())
    return result, problems


def main():
    log_h, catalog = sys.argv[1], sys.argv[2]
    man = sys.argv[3] if len(sys.argv) > 3 else None
    docs = sys.argv[4:]
    problems = []

    ids = log_h_ids(log_h)
    if len(ids) < 1:
        print(f'{log_h}: no SRIOVD_MESSAGE_* defines found: the parser is out of date')
        return 1
    for mid, (name, line) in ids.items():
        if not ID_RE.match(mid):
            problems.append(f'{log_h}:{line}: {name} = "{mid}" is not 32 lowercase hex digits')
        elif not V4_RE.match(mid):
            problems.append(f'{log_h}:{line}: {name} = {mid} is not a random (v4) ID; make one with systemd-id128 new')
    with open(log_h, encoding='utf-8') as f:
        defined = re.findall(r'#\s*define\s+(SRIOVD_MESSAGE_\w+)\s+"([^"]*)"', f.read())
    seen = {}
    for name, mid in defined:
        if mid in seen:
            problems.append(f'{log_h}: {name} and {seen[mid]} have the same ID {mid}')
        seen[mid] = name

    entries, parse_problems = catalog_entries(catalog)
    problems += parse_problems

    for mid, (name, line) in sorted(ids.items(), key=lambda kv: kv[1][1]):
        if mid not in entries:
            problems.append(f'{log_h}:{line}: {name} = {mid} has no entry in {catalog}; add "-- {mid}"')
    for mid, (line, fields, body) in entries.items():
        if mid not in ids:
            problems.append(f'{catalog}:{line}: entry {mid} is not a MESSAGE_ID in {log_h}: stale, or a typo')
        for k in REQUIRED:
            if k not in fields:
                problems.append(f'{catalog}:{line}: entry {mid} has no {k}: line')
        if fields.get('Defined-By') not in (None, 'sriovd'):
            problems.append(f'{catalog}:{line}: entry {mid}: Defined-By: {fields["Defined-By"]}, expected sriovd')
        doc = fields.get('Documentation', '')
        if doc and 'man:sriovd(8)' not in doc.split():
            problems.append(f'{catalog}:{line}: entry {mid}: Documentation: does not name man:sriovd(8)')
        if '%SUPPORT_URL%' in fields.get('Support', ''):
            problems.append(f'{catalog}:{line}: entry {mid}: Support: %SUPPORT_URL% was not filled in by the build')
        if len(body) < 80:
            problems.append(f'{catalog}:{line}: entry {mid}: the body says too little (what happened, what to do)')

    # sriovd(8) lists the IDs too: the same set, no stale one.
    if man:
        with open(man, encoding='utf-8') as f:
            quoted = set(re.findall(r'(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])', f.read()))
        for mid, (name, line) in ids.items():
            if mid not in quoted:
                problems.append(f'{log_h}:{line}: {name} = {mid} is not listed in {man} (LOGGING)')
        for mid in sorted(quoted - set(ids)):
            problems.append(f'{man}: {mid} looks like a MESSAGE_ID but is not one in {log_h}')

    for doc in docs:
        with open(doc, encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                for mid in re.findall(r'MESSAGE_ID=([0-9a-fA-F]+)', line):
                    if mid not in ids:
                        problems.append(f'{doc}:{n}: MESSAGE_ID={mid} is not one in {log_h}')

    if problems:
        print('\n'.join(problems))
        return 1
    print(f'{len(ids)} MESSAGE_IDs, {len(entries)} catalog entries: they match')

    journalctl = shutil.which('journalctl')
    if not journalctl:
        print('journalctl missing: the catalog was not compiled by journalctl; skip')
        return 77
    with tempfile.TemporaryDirectory() as root:
        d = os.path.join(root, 'usr/lib/systemd/catalog')
        os.makedirs(d)
        shutil.copy(catalog, os.path.join(d, 'sriovd.catalog'))
        r = subprocess.run([journalctl, f'--root={root}', '--update-catalog'], capture_output=True, text=True)
        # journalctl reports a malformed entry on stderr and goes on; either is a failure here.
        if r.returncode != 0 or r.stderr.strip():
            print(f'journalctl --update-catalog failed ({r.returncode}):\n{r.stderr}')
            return 1
        r = subprocess.run([journalctl, f'--root={root}', '--list-catalog'], capture_output=True, text=True)
        if r.returncode != 0:
            print(f'journalctl --list-catalog failed ({r.returncode}):\n{r.stderr}')
            return 1
        listed = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
        missing = sorted(set(ids) - listed)
        if missing:
            print('journalctl does not list: ' + ', '.join(missing) + '\n' + r.stdout)
            return 1
        for line in r.stdout.splitlines():
            if not line.split(' ', 1)[1].startswith('sriovd: '):
                print(f'journalctl lists an entry not Defined-By sriovd: {line}')
                return 1
    print(f'journalctl --update-catalog compiled it and lists all {len(ids)} IDs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
