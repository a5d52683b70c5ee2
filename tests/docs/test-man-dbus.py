#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-man-dbus.py — org.sriovd.Manager1(5) documents the D-Bus API that the code serves
#
# usage: test-man-dbus.py SRCDIR [BUILT_MAN_PAGE...]
#
# The page must document every method, property and signal of every interface in
# conf/org.sriovd.Manager1.xml with the XML's signature, and no member the XML lacks. The
# same holds for org.freedesktop.LogControl1 against its vtable in src/daemon/bus/bus-logcontrol.c.
# Its ERRORS section must list exactly the org.sriovd.Error names that src/ and include/ use,
# and it must name no other. Every record key of include/sriovd/protocol/bus-protocol.h must be in it.
# Before it trusts a clean result, the test runs the same checks on altered copies and asserts
# that each alteration is caught. Given the built page (meson passes every built page; -Dman),
# it also renders it with man(1) and looks for every signature in the text.

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

PAGE = 'org.sriovd.Manager1.5'
CONST = 'org.freedesktop.DBus.Property.EmitsChangedSignal'


# ---- what the code serves ----

def method_sig(name, args):
    return '%s(%s)' % (name, ', '.join('%s %s %s' % a for a in args))


def signal_sig(name, args):
    return '%s(%s)' % (name, ', '.join('%s %s' % a for a in args))


def property_sig(name, access, type_, constant):
    return '%s %s %s%s' % (access, type_, name, ' (constant)' if constant else '')


def xml_members(text):
    """{interface: {(kind, name): signature}} of an introspection XML."""
    ifaces = {}
    for iface in ET.fromstring(text).iter('interface'):
        members = ifaces.setdefault(iface.get('name'), {})
        for m in iface.findall('method'):
            args = [(a.get('direction', 'in'), a.get('type'), a.get('name')) for a in m.findall('arg')]
            members[('method', m.get('name'))] = method_sig(m.get('name'), args)
        for s in iface.findall('signal'):
            args = [(a.get('type'), a.get('name')) for a in s.findall('arg')]
            members[('signal', s.get('name'))] = signal_sig(s.get('name'), args)
        for p in iface.findall('property'):
            access = {'read': 'readonly', 'readwrite': 'readwrite', 'write': 'writeonly'}[p.get('access')]
            constant = any(a.get('name') == CONST and a.get('value') == 'const' for a in p.findall('annotation'))
            members[('property', p.get('name'))] = property_sig(p.get('name'), access, p.get('type'), constant)
    return ifaces


def vtable_members(text):
    """The properties of an sd-bus vtable in C: SD_BUS_PROPERTY and SD_BUS_WRITABLE_PROPERTY."""
    members = {}
    for m in re.finditer(r'SD_BUS_(WRITABLE_)?PROPERTY\(\s*"(\w+)"\s*,\s*"([^"]+)"([^;]*?)\)\s*,', text, re.S):
        writable, name, type_, rest = m.groups()
        members[('property', name)] = property_sig(name, 'readwrite' if writable else 'readonly', type_,
                                                   'SD_BUS_VTABLE_PROPERTY_CONST' in rest)
    return members


def code_error_names(srcdir):
    names = set()
    for top in ('src', 'include'):
        for root, _, files in os.walk(os.path.join(srcdir, top)):
            for f in files:
                if f.endswith(('.c', '.h')):
                    with open(os.path.join(root, f), encoding='utf-8') as fh:
                        names |= set(re.findall(r'org\.sriovd\.Error\.[A-Za-z]+', fh.read()))
    return names


def header_keys(text):
    return set(re.findall(r'#define SRIOVD_(?:KEY|OPTION)_\w+ "(\w+)"', text))


# ---- what the page says ----

def unescape(s):
    return s.replace('\\_', '_')


def page_sections(text):
    """[(heading, subheading, line number, line)] for every line of the scdoc source."""
    out, h1, h2 = [], None, None
    for n, line in enumerate(text.split('\n'), 1):
        if line.startswith('# '):
            h1, h2 = line[2:].strip(), None
        elif line.startswith('## '):
            h2 = line[3:].strip()
        out.append((h1, h2, n, line))
    return out


def page_members(text):
    """({interface: {(kind, name): signature}}, problems) of the page's INTERFACE sections."""
    ifaces, problems = {}, []
    for h1, h2, n, line in page_sections(text):
        if not h1 or not h1.startswith('INTERFACE '):
            continue
        iface = h1.split(' ', 1)[1]
        members = ifaces.setdefault(iface, {})
        kind = {'Methods': 'method', 'Properties': 'property', 'Signals': 'signal'}.get(h2)
        # An entry is a line at the left margin that starts like one; anything else there is prose.
        if not kind or not line or line[0].isspace() or line.startswith('#') or \
                not (line.startswith('*') or line.startswith(('readonly ', 'readwrite ', 'writeonly '))):
            continue
        line = unescape(line.rstrip())
        sig = None
        if kind == 'property':
            m = re.fullmatch(r'(readonly|readwrite|writeonly) (\S+) \*(\w+)\*( \(constant\))?', line)
            if m:
                name, sig = m.group(3), property_sig(m.group(3), m.group(1), m.group(2), bool(m.group(4)))
        else:
            m = re.fullmatch(r'\*(\w+)\*\((.*)\)', line)
            if m:
                name, args, parsed = m.group(1), m.group(2), []
                arg_re = r'(in|out) (\S+) _(\w+)_' if kind == 'method' else r'(\S+) _(\w+)_'
                for a in (args.split(', ') if args else []):
                    am = re.fullmatch(arg_re, a)
                    if not am:
                        parsed = None
                        break
                    parsed.append(am.groups())
                if parsed is not None:
                    sig = (method_sig if kind == 'method' else signal_sig)(name, parsed)
        if sig is None:
            problems.append(f'page line {n}: "{line}" under {iface} {h2} is not a {kind} entry in the '
                            f'page\'s format')
            continue
        if (kind, name) in members:
            problems.append(f'page line {n}: {iface} {kind} {name} is documented twice')
        members[(kind, name)] = sig
    return ifaces, problems


def page_error_entries(text):
    return {unescape(m.group(1)) for h1, _, _, line in page_sections(text) if h1 == 'ERRORS'
            for m in [re.fullmatch(r'\*(org\.sriovd\.Error\.\w+)\*', line.rstrip())] if m}


def page_record_keys(text):
    """Keys the RECORDS section defines (its list items), and every bold word of the page."""
    defined = {unescape(m.group(1)) for h1, _, _, line in page_sections(text) if h1 == 'RECORDS'
               for m in [re.match(r'- \*([a-z\\_]+)\* \(', line)] if m}
    bold = {unescape(w) for w in re.findall(r'\*([a-z][a-z0-9\\_-]*)\*', text)}
    return defined, bold


# ---- the comparison ----

def compare(code, page_text, errors, keys):
    """Every difference between the code (interfaces -> members), its error names and record
    keys, and the page, as sentences that name the item."""
    documented, problems = page_members(page_text)
    for iface, members in sorted(code.items()):
        if iface not in documented:
            problems.append(f'{iface}: the interface has no "# INTERFACE {iface}" section in the page')
            continue
        page = documented[iface]
        for (kind, name), sig in sorted(members.items()):
            if (kind, name) not in page:
                problems.append(f'{iface}: {kind} {name} is missing from the page; the code has "{sig}"')
            elif page[(kind, name)] != sig:
                problems.append(f'{iface}: {kind} {name}: the page says "{page[(kind, name)]}", the code "{sig}"')
        for (kind, name), sig in sorted(page.items()):
            if (kind, name) not in members:
                problems.append(f'{iface}: the page documents {kind} {name} ("{sig}"), which the code lacks')
    for iface in sorted(set(documented) - set(code)):
        problems.append(f'the page documents interface {iface}, which the code does not serve')

    listed = page_error_entries(page_text)
    named = {unescape(n) for n in re.findall(r'org\.sriovd\.Error\.[A-Za-z\\_]+', page_text)}
    for e in sorted(errors - listed):
        problems.append(f'{e}: the code has this error, the page\'s ERRORS section does not list it')
    for e in sorted(listed - errors):
        problems.append(f'{e}: the page\'s ERRORS section lists it, the code has no such error')
    for e in sorted(named - errors - listed):
        problems.append(f'{e}: the page names this error, the code has no such error')

    defined, bold = page_record_keys(page_text)
    for k in sorted(keys - bold):
        problems.append(f'record key {k}: bus-protocol.h has it, the page does not name it as *{k}*')
    for k in sorted(defined - keys):
        problems.append(f'record key {k}: the page\'s RECORDS define it, bus-protocol.h has no such key')
    return problems


def render_problems(rendered, code):
    """Each signature as the reader sees it in the rendered page."""
    problems = []
    for iface, members in sorted(code.items()):
        if f'INTERFACE {iface}' not in rendered:
            problems.append(f'{iface}: no "INTERFACE {iface}" heading in the rendered page')
        for (kind, name), sig in sorted(members.items()):
            if sig not in rendered:
                problems.append(f'{iface}: {kind} {name}: "{sig}" is not in the rendered page')
    return problems


# ---- the test of the test ----

def self_check(xml_text, page_text, lc_text, errors, header_text):
    def run(xml=xml_text, page=page_text, lc=lc_text, errs=errors, header=header_text):
        code = xml_members(xml)
        code['org.freedesktop.LogControl1'] = vtable_members(lc)
        return compare(code, page, errs, header_keys(header))

    def alter(text, old, new):
        assert old in text, f'self-check: "{old}" is not in the text to alter; update the self-check'
        return text.replace(old, new, 1)

    cases = [
        ('a method left out of the page', 'Release',
         dict(page=alter(page_text, '*Release*(in s _tenant_)\n', ''))),
        ('an argument type changed', 'SetCoalesce',
         dict(page=alter(page_text, 'in u _rx_usecs_', 'in i _rx_usecs_'))),
        ('an argument renamed', 'GetTenant',
         dict(page=alter(page_text, '*GetTenant*(in s _tenant_, out a{sv} _tenant_record_)',
                         '*GetTenant*(in s _tenant_, out a{sv} _record_)'))),
        ('a direction swapped', 'GetTenant',
         dict(page=alter(page_text, '*GetTenant*(in s _tenant_', '*GetTenant*(out s _tenant_'))),
        ('an argument dropped', 'Verify',
         dict(page=alter(page_text, ', out u _remaining_', ''))),
        ('a method the code lacks', 'Frobnicate',
         dict(page=alter(page_text, '*Ping*()\n', '*Frobnicate*()\n\tNothing.\n\n*Ping*()\n'))),
        ('a method the page lacks', 'Frobnicate',
         dict(xml=alter(xml_text, '<method name="Ping">', '<method name="Frobnicate"/>\n  <method name="Ping">'))),
        ('a property type changed', 'VfTotal',
         dict(page=alter(page_text, 'readonly u *VfTotal*', 'readonly i *VfTotal*'))),
        ('a constant property not marked', 'Version',
         dict(page=alter(page_text, 'readonly s *Version* (constant)', 'readonly s *Version*'))),
        ('a property left out of the page', 'Vfs',
         dict(page=alter(page_text, 'readonly as *Vfs*\n', ''))),
        ('a property written in another format', 'Tenants',
         dict(page=alter(page_text, 'readonly u *Tenants*', '*Tenants* (u)'))),
        ('a signal argument renamed', 'DeviceAdded',
         dict(page=alter(page_text, '*DeviceAdded*(s _address_)', '*DeviceAdded*(s _addr_)'))),
        ('a signal the code lacks', 'DriftDetected',
         dict(xml=re.sub(r'<signal name="DriftDetected">.*?</signal>', '', xml_text, count=1, flags=re.S))),
        ('a LogControl1 property made read-only', 'LogTarget',
         dict(lc=alter(lc_text, 'SD_BUS_WRITABLE_PROPERTY("LogTarget"', 'SD_BUS_PROPERTY("LogTarget"'))),
        ('an interface section renamed', 'org.sriovd.Device1',
         dict(page=alter(page_text, '# INTERFACE org.sriovd.Device1', '# INTERFACE org.sriovd.Device2'))),
        ('an error left out of ERRORS', 'org.sriovd.Error.Busy',
         dict(page=alter(page_text, '\n*org.sriovd.Error.Busy*\n', '\n'))),
        ('an error the page does not know', 'org.sriovd.Error.Frobbed',
         dict(errs=errors | {'org.sriovd.Error.Frobbed'})),
        ('an error name the code lacks', 'org.sriovd.Error.NoSuchDevice',
         dict(page=alter(page_text, '- *org.sriovd.Error.UnknownDevice*:', '- *org.sriovd.Error.NoSuchDevice*:'))),
        ('a record key the page lacks', 'frob',
         dict(header=header_text + '\n#define SRIOVD_KEY_FROB "frob"\n')),
        ('a record key the code lacks', 'vf_number',
         dict(page=alter(page_text, '- *vf\\_index* (u)', '- *vf\\_number* (u)'))),
    ]
    assert not run(), 'self-check: the unaltered texts must agree before the alterations mean anything'
    for what, item, changed in cases:
        problems = run(**changed)
        assert any(item in p for p in problems), f'self-check: {what} ({item}) is not caught: {problems}'

    code = xml_members(xml_text)
    rendered = '\n'.join(['INTERFACE ' + i for i in code] + [s for m in code.values() for s in m.values()])
    assert not render_problems(rendered, code)
    assert any('Allocate' in p for p in render_problems(rendered.replace('Allocate(', 'Allocate ('), code)), \
        'self-check: a signature missing from the rendered page is not caught'
    return len(cases)


def render(page):
    env = dict(os.environ, MANWIDTH='1000', LC_ALL='C.UTF-8')
    env.pop('MAN_KEEP_FORMATTING', None)
    r = subprocess.run(['man', '-l', page], capture_output=True, text=True, env=env)
    assert r.returncode == 0, f'man -l {page} failed: {r.stderr}'
    return r.stdout


def main():
    src = sys.argv[1]
    built = [p for p in sys.argv[2:] if os.path.basename(p) == PAGE]
    paths = {
        'xml': os.path.join(src, 'conf', 'org.sriovd.Manager1.xml'),
        'page': os.path.join(src, 'man', PAGE + '.scd'),
        'lc': os.path.join(src, 'src', 'daemon', 'bus', 'bus-logcontrol.c'),
        'internal': os.path.join(src, 'src', 'daemon', 'bus', 'bus-internal.h'),
        'header': os.path.join(src, 'include', 'sriovd', 'protocol', 'bus-protocol.h'),
    }
    text = {}
    for k, p in paths.items():
        with open(p, encoding='utf-8') as f:
            text[k] = f.read()

    code = xml_members(text['xml'])
    lc_iface = re.search(r'#define BUS_LOG_CONTROL_INTERFACE "([\w.]+)"', text['internal']).group(1)
    code[lc_iface] = vtable_members(text['lc'])
    errors = code_error_names(src)
    keys = header_keys(text['header'])
    assert len(code) == 4 and all(code.values()), f'too few interfaces or members found: {sorted(code)}'
    assert len(errors) >= 10 and len(keys) >= 30, (errors, keys)

    problems = compare(code, text['page'], errors, keys)
    if not problems:
        n = self_check(text['xml'], text['page'], text['lc'], errors, text['header'])
        print(f'self-check: {n} alterations of the page, the XML and the code are each caught')

    for page in built:
        if subprocess.run(['sh', '-c', 'command -v man'], capture_output=True).returncode != 0:
            print(f'man missing: {page} not rendered')
            continue
        found = render_problems(render(page), code)
        problems += [f'{page}: {p}' for p in found]
        print(f'{page}: rendered; {"every signature found" if not found else "signatures missing"}')

    for p in problems:
        print(p)
    n_members = sum(len(m) for m in code.values())
    print(f'{len(code)} interfaces, {n_members} members, {len(errors)} errors, {len(keys)} record keys; '
          f'{len(problems)} problems')
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
