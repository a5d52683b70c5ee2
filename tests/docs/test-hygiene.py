#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-hygiene.py — the repository speaks only of what a reader of it can check
#
# usage: test-hygiene.py SRCDIR
#
# Fails on any text file in the source tree that mentions an issue number, holds what looks
# like a commit hash, cites a document the repository does not have, or links a Markdown
# file that does not exist. docs/CONTRIBUTING.md gives the rules.

import os
import re
import subprocess
import sys

SKIP_DIRS = {'.git', '__pycache__', 'corpus'}
# Build trees (meson setup NAME) and the package build's leftovers.
SKIP_PREFIXES = ('build', 'obj-', 'debian/sriovd', 'debian/tmp', 'debian/.debhelper')
TEXT_SUFFIXES = ('.c', '.h', '.py', '.sh', '.md', '.scd', '.build', '.txt', '.ini', '.conf',
                 '.in', '.xml', '.json', '.catalog', '.bpf', '.service', '.options')
TEXT_NAMES = ('run', 'rules', 'control', 'changelog', 'copyright', 'README.Debian',
              'meson_options.txt', 'LICENSE')

ISSUE_RE = re.compile(r'\bissues?\s+#?\d+\b|\(#\d+\)', re.I)
# A short or full commit hash: 7 to 12, or 40, hex digits with at least one letter and one
# digit. 32-digit MESSAGE_IDs, UUIDs, MACs and 0x constants are not hashes.
HASH_RE = re.compile(r'(?<![0-9A-Za-z_:.\-])([0-9a-f]{7,12}|[0-9a-f]{40})(?![0-9A-Za-z_:\-])')
# Documents that exist only outside the repository, and the citation style that points there.
FOREIGN_RE = re.compile('\\b(DESIGN|TESTBED|STYLE)\\.md\\b|\\bseeds?\\s+0\\d\\d\\b|\u00a7')
MD_LINK_RE = re.compile(r'\]\(([^)#\s]+\.md)(#[^)]*)?\)')


def hash_checker(src):
    """In a git checkout, a token is a hash when it names a commit of this repository, so hex
    masks such as ff03ff03 pass. Without git, as in a package build, the 7 digits of git's
    default abbreviation are taken as one."""
    def looks_like(token):
        return re.search(r'[a-f]', token) is not None and re.search(r'[0-9]', token) is not None

    if src is None or not os.path.exists(os.path.join(src, '.git')):
        return lambda token: looks_like(token) and len(token) == 7

    def names_commit(token):
        if not looks_like(token):
            return False
        r = subprocess.run(['git', '-C', src, 'cat-file', '-t', token], capture_output=True, text=True)
        return r.returncode == 0 and r.stdout.strip() == 'commit'
    return names_commit


def problems_in(rel, text, exists, is_hash):
    found = []
    for n, line in enumerate(text.split('\n'), 1):
        for m in ISSUE_RE.finditer(line):
            found.append(f'{rel}:{n}: names an issue: "{m.group(0)}"')
        for m in HASH_RE.finditer(line):
            if is_hash(m.group(1)):
                found.append(f'{rel}:{n}: looks like a commit hash: "{m.group(1)}"')
        for m in FOREIGN_RE.finditer(line):
            found.append(f'{rel}:{n}: cites a document the repository does not have: "{m.group(0)}"')
        if rel.endswith('.md'):
            for m in MD_LINK_RE.finditer(line):
                target = m.group(1)
                if '://' in target:
                    continue
                if not exists(os.path.normpath(os.path.join(os.path.dirname(rel), target))):
                    found.append(f'{rel}:{n}: links {target}, which does not exist')
    return found


def self_check():
    """The patterns catch what they are meant to, and leave IDs and addresses alone."""
    # Spelled in pieces, so that this file does not fail its own check.
    bad = ('as issue' + ' 18 asked', 'fixed in (#' + '12)', 'since be7' + '0456 the table',
           'see DESIGN' + '.md', 'seed' + ' 004 says', 'in \u00a74.3', '[x](docs/NOPE.md)')
    for s in bad:
        assert problems_in('x.md', s, lambda p: False, hash_checker(None)), f'self-check: "{s}" is not caught'
    good = ('MESSAGE_ID=5f3b0d2c8a1e4b7f9c6d2e1a0b3c4d5e', 'uuid 3fa85f64-5717-4562-b3fc-2c963f66afa6',
            'mac 7e:ad:7f:1b:cc:34', 'mask 0x00ff00ff', 'the 1000000 ns period', 'R6 in docs/REQUIREMENTS.md',
            'maintainers@users.noreply.a-seed-fc1511e4.example', 'a [link](ok.md)')
    for s in good:
        assert not problems_in('x.md', s, lambda p: True, hash_checker(None)), f'self-check: "{s}" is caught'


def main():
    src = os.path.realpath(sys.argv[1])
    self_check()

    is_hash = hash_checker(src)

    def exists(rel):
        return os.path.exists(os.path.join(src, rel))

    failures, checked = [], 0
    for root, dirs, files in os.walk(src):
        rel_root = os.path.relpath(root, src)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not
                         os.path.join(rel_root, d).lstrip('./').startswith(SKIP_PREFIXES))
        for name in sorted(files):
            if not (name.endswith(TEXT_SUFFIXES) or name in TEXT_NAMES or
                    (rel_root in ('tools', '.ci', 'debian/tests') and '.' not in name)):
                continue
            rel = os.path.normpath(os.path.join(rel_root, name))
            try:
                with open(os.path.join(root, name), encoding='utf-8') as f:
                    text = f.read()
            except UnicodeDecodeError:
                continue
            checked += 1
            failures += problems_in(rel, text, exists, is_hash)

    for f in failures:
        print(f)
    print(f'{checked} files, {len(failures)} problems')
    assert checked > 100, 'too few files found: is SRCDIR the source tree?'
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
