#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-commits.py — commits since docs/CONTRIBUTING.md was added follow its format
#
# usage: test-commits.py SRCDIR
#
# The format is "area: imperative summary" in at most 72 characters, then a blank line before
# any body. Merge commits are not checked. Exits 77 outside a git checkout, or where the
# history is too shallow to hold the commit that added CONTRIBUTING.md.

import re
import shutil
import subprocess
import sys

SUBJECT_MAX = 72
# An area is a word, a path or a file name, or a few of them: "daemon", "tests/docs", "README".
SUBJECT_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_./+-]*(, ?[A-Za-z0-9][A-Za-z0-9_./+-]*)*: \S')


def problems(subject, second_line):
    found = []
    if len(subject) > SUBJECT_MAX:
        found.append(f'subject is {len(subject)} characters, more than {SUBJECT_MAX}')
    if not SUBJECT_RE.match(subject):
        found.append('subject is not "area: summary"')
    if subject.endswith('.'):
        found.append('subject ends with a full stop')
    if second_line is not None and second_line.strip():
        found.append('no blank line after the subject')
    return found


def main():
    src = sys.argv[1]
    assert problems('daemon: pin VF IRQs to vCPU 0', None) == []
    assert problems('Pinned the IRQs', None), 'self-check: a subject without an area passes'
    assert problems('core: ' + 'x' * 80, None), 'self-check: a long subject passes'
    assert problems('core: fix it', 'body'), 'self-check: a missing blank line passes'

    if shutil.which('git') is None:
        print('git is not installed: skipped')
        sys.exit(77)
    top = subprocess.run(['git', '-C', src, 'rev-parse', '--show-toplevel'], capture_output=True, text=True)
    if top.returncode != 0:
        print(f'{src} is not a git checkout (a release tarball or a package build): skipped')
        sys.exit(77)
    added = subprocess.run(['git', '-C', src, 'log', '--diff-filter=A', '--format=%H', '--', 'docs/CONTRIBUTING.md'],
                           capture_output=True, text=True, check=True).stdout.split()
    if not added:
        print('the commit that added docs/CONTRIBUTING.md is not in this history (shallow clone?): skipped')
        sys.exit(77)
    start = added[-1]
    log = ''
    for rng in (['-1', start], [f'{start}..HEAD']):
        log += subprocess.run(['git', '-C', src, 'log', '--no-merges', '--format=%h%x00%B%x01'] + rng,
                              capture_output=True, text=True, check=True).stdout
    failures, count = [], 0
    for entry in log.split('\x01'):
        if not entry.strip():
            continue
        short, body = entry.strip('\n').split('\x00', 1)
        lines = body.split('\n')
        count += 1
        for p in problems(lines[0], lines[1] if len(lines) > 1 else None):
            failures.append(f'{short} "{lines[0][:60]}": {p}')
    for f in failures:
        print(f)
    print(f'{count} commits checked, {len(failures)} problems')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
