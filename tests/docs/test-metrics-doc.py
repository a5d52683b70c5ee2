#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-metrics-doc.py — sriovd-metrics(7) documents every metric family sriovd exports, with its type
# and labels, and no doc names a metric sriovd does not export.
#
# The families are the HELP table of src/daemon/monitor/sampler-export.c, since the export takes each
# family's HELP line from it. Each family needs an entry in the METRIC FAMILIES section of
# man/sriovd-metrics.7.scd: a line "*NAME* (TYPE; labels *A*, *B*)" or "*NAME* (TYPE; no labels)",
# where one line may name several families of one type. The type must be the one the source gives:
# the METRIC_COUNTER or METRIC_GAUGE next to the family's name where the code has both together,
# and otherwise the rule of include/sriovd/core/metrics.h that a counter's name ends in _total, which the
# test checks against every pair it found. Each label must be one of src/core/metrics.c, and the
# labels the source states for a family must be there: those the HELP text names ("irq is the
# row") and those include/sriovd/core/alert-metrics.h lists. The page's LABELS section must describe
# every label.
#
# Every sriovd_* name in README.md, docs/*.md, man/*.scd and the shipped sriovd.conf must be an
# exported family, because an alert rule on a misspelled metric never fires. A name cut short, such
# as sriovd_vf_ in sriovd_vf_*_total or sriovd_vf_{rx,tx}_..., is a pattern and is not checked.
#
# The checks run first on altered copies of the page and of a doc, so that they cannot pass by
# catching nothing.
#
#   test-metrics-doc.py SRCDIR
import glob
import os
import re
import sys

PAGE = "man/sriovd-metrics.7.scd"
# A metric name in prose: sriovd_, then a letter (sriovd_0.1.0_amd64.deb is a package), then lower-case
# words. Followed by "..." or by a brace list, it is the start of a pattern.
NAME = re.compile(r"\bsriovd_[a-z][a-z0-9_]*\b(?!\.\.\.|\{[a-z0-9_]*,)")
# An entry line of METRIC FAMILIES: its names, its type, and its labels or "no labels".
ENTRY = re.compile(r"^((?:\*sriovd_\w+\*, )*\*sriovd_\w+\*) \((counters?|gauges?|histograms?); (no labels|labels? .*)\)$")
# A histogram family's own lines, which a doc may name.
HISTOGRAM_LINES = ("_bucket", "_sum", "_count")


def read(path):
    with open(path) as f:
        return f.read()


def source_facts(src):
    """The families, their types and the labels the source states for them."""
    export = read(f"{src}/src/daemon/monitor/sampler-export.c")
    help_text = dict(re.findall(r'\{ "(sriovd_\w+)",\s*"((?:[^"\\]|\\.)*)"', export))
    assert len(help_text) > 20, f"no HELP table found: {sorted(help_text)}"

    labels = set(re.findall(r'\[METRIC_LABEL_\w+\] = "(\w+)"', read(f"{src}/src/core/metrics.c")))
    assert {"pf", "cpu", "alert"} <= labels, f"no label names found in src/core/metrics.c: {sorted(labels)}"

    # Types where the code gives a family's name and its kind together, directly or by a macro.
    code = "".join(read(p) for p in sorted(glob.glob(f"{src}/src/**/*.c", recursive=True)))
    alert_h = read(f"{src}/include/sriovd/core/alert-metrics.h")
    macros = dict(re.findall(r'#define (\w+) "(sriovd_\w+)"', alert_h))
    stated = {}
    for name, kind in re.findall(r'"(sriovd_\w+)",\s*METRIC_(COUNTER|GAUGE)\b', code):
        stated.setdefault(name, set()).add(kind.lower())
    for macro, kind in re.findall(r"\b(ALERT_FAMILY_\w+),\s*METRIC_(COUNTER|GAUGE)\b", code):
        stated.setdefault(macros[macro], set()).add(kind.lower())
    # The naming rule for the rest: it must hold for every pair found.
    assert re.search(r"METRIC_COUNTER,.*name ends in _total", read(f"{src}/include/sriovd/core/metrics.h")), \
        "include/sriovd/core/metrics.h no longer says that a counter's name ends in _total: teach this test the types"
    assert len(stated) >= 10, f"too few families typed in the code: {sorted(stated)}"
    for name, kinds in stated.items():
        rule = "counter" if name.endswith("_total") else "gauge"
        assert kinds == {rule}, f"{name} is a {'/'.join(sorted(kinds))} in the code, against the _total rule"
    types = {name: "counter" if name.endswith("_total") else "gauge" for name in help_text}
    # A histogram's lines are NAME_bucket, NAME_sum and NAME_count, each made as a METRIC_HISTOGRAM.
    for name in set(re.findall(r'"(sriovd_\w+)_bucket",\s*METRIC_HISTOGRAM\b', code)) | \
            {n for n in re.findall(r'\b(\w+_FAMILY) "_bucket",\s*METRIC_HISTOGRAM\b', code)}:
        family = name if name in help_text else dict(re.findall(r'#define (\w+) "(sriovd_\w+)"', code)).get(name)
        assert family in help_text, f"histogram {name} has no HELP entry"
        types[family] = "histogram"
    assert "histogram" in types.values(), "no histogram family found in the code: teach this test where it is made"

    # Labels the source names for a family: its HELP text ("irq is the row"), alert-metrics.h's list.
    needs = {name: {w for w in re.findall(r"\b(\w+) is the\b", text) if w in labels}
             for name, text in help_text.items()}
    for name, said in re.findall(r"^ \*\s+(sriovd_\w+)\s.*?;\s*labels? (.*)$", alert_h, re.M):
        needs.setdefault(name, set()).update(w for w in re.findall(r"\w+", said) if w in labels)
    return set(help_text), types, labels, needs, len(stated)


def check_page(text, families, types, labels, needs):
    """What the page gets wrong: families missing or invented, types, labels."""
    failures = []
    try:
        section = text[text.index("\n# METRIC FAMILIES\n"):]
        section = section[:section.index("\n# ", 1)]
    except ValueError:
        return [f"{PAGE}: no METRIC FAMILIES section"]
    documented = set()
    for n, line in enumerate(section.splitlines()):
        if not line.startswith("*sriovd_"):
            continue
        m = ENTRY.match(line)
        if not m:
            failures.append(f"{PAGE}: not an entry line, *NAME* (TYPE; labels ...): {line}")
            continue
        kind = m.group(2).rstrip("s")
        listed = set() if m.group(3) == "no labels" else set(re.findall(r"\*(\w+)\*", m.group(3)))
        for name in re.findall(r"\*(sriovd_\w+)\*", m.group(1)):
            if name not in families:
                failures.append(f"{PAGE}: {name} is not a metric sriovd exports")
                continue
            documented.add(name)
            if kind != types[name]:
                failures.append(f"{PAGE}: {name} is a {types[name]}, not a {kind}")
            for label in sorted(listed - labels):
                failures.append(f"{PAGE}: {name}: {label} is not a label of sriovd's metrics")
            for label in sorted(needs.get(name, set()) - listed):
                failures.append(f"{PAGE}: {name} has the label {label}, which its entry does not list")
    failures += [f"{PAGE}: exported family {n} is not documented in METRIC FAMILIES" for n in sorted(families - documented)]

    label_section = re.search(r"\n# LABELS\n(.*?)\n# ", text, re.S)
    described = set(re.findall(r"^\*(\w+)\*$", label_section.group(1), re.M)) if label_section else set()
    failures += [f"{PAGE}: LABELS does not describe the label {n}" for n in sorted(labels - described)]
    return failures


def check_names(path, text, families):
    """Every metric name a doc gives must be an exported family."""
    failures = []
    for m in NAME.finditer(text):
        name = m.group(0)
        if name in families or name.endswith("_"):
            continue
        if any(name.endswith(s) and name[:-len(s)] in families for s in HISTOGRAM_LINES):
            continue
        line = text.count("\n", 0, m.start()) + 1
        failures.append(f"{path}:{line}: {name} is not a metric sriovd exports")
    return failures


def self_test(page, families, types, labels, needs):
    """The checks catch what they are for, on altered copies."""
    assert not check_page(page, families, types, labels, needs), "the self-test needs a page that passes"

    # A family whose entry is gone is reported, whether it had a line of its own or shared one.
    for name in ("sriovd_irq_rate", "sriovd_vf_tx_bytes_total"):
        lines = []
        for line in page.splitlines():
            if line.startswith(f"*{name}* ("):
                continue
            lines.append(line.replace(f", *{name}* (", " (").replace(f"*{name}*, ", ""))
        altered = "\n".join(lines)
        assert altered != page, f"the self-test found no entry of {name}"
        got = check_page(altered, families, types, labels, needs)
        assert any(name in f and "not documented" in f for f in got), f"a missing {name} was not reported: {got}"

    # A wrong type, an unknown label, a label the source states but the entry leaves out.
    altered = page.replace("*sriovd_irq_interrupts_total* (counter;", "*sriovd_irq_interrupts_total* (gauge;")
    assert any("sriovd_irq_interrupts_total is a counter" in f
               for f in check_page(altered, families, types, labels, needs)), "a wrong type was not reported"
    altered = page.replace("*sriovd_rt_cpus* (gauge; labels *node*)", "*sriovd_rt_cpus* (gauge; labels *numa*)")
    assert any("numa is not a label" in f
               for f in check_page(altered, families, types, labels, needs)), "an unknown label was not reported"
    altered = page.replace("*sriovd_rt_cpu_arch_interrupt_rate* (gauge; labels *cpu*, *irq*)",
                           "*sriovd_rt_cpu_arch_interrupt_rate* (gauge; labels *cpu*)")
    assert any("has the label irq" in f
               for f in check_page(altered, families, types, labels, needs)), "a missing label was not reported"

    # A doc naming a metric that does not exist; patterns and package names are not names.
    got = check_names("doc", "metric = sriovd_no_such_rate\n", families)
    assert got == ["doc:1: sriovd_no_such_rate is not a metric sriovd exports"], got
    assert not check_names("doc", "sriovd_vf_{rx,tx}_bytes_total, sriovd_vf_*_total, sriovd_vf_rx..., "
                           "sriovd_0.1.0_amd64.deb, sriovd_irq_rate{cpu=\"2\"}.", families)


def main():
    src = sys.argv[1]
    families, types, labels, needs, n_typed = source_facts(src)
    page = read(f"{src}/{PAGE}")
    self_test(page, families, types, labels, needs)

    failures = check_page(page, families, types, labels, needs)
    docs = ["README.md", "conf/sriovd.conf"] + sorted(os.path.relpath(p, src) for p in
                                                      glob.glob(f"{src}/docs/*.md") + glob.glob(f"{src}/man/*.scd"))
    for path in docs:
        if os.path.exists(f"{src}/{path}"):
            failures += check_names(path, read(f"{src}/{path}"), families)

    for f in failures:
        print(f)
    print(f"{len(families)} families ({n_typed} typed in the code, the rest by the _total rule), "
          f"{len(labels)} labels, {len(docs)} docs: {'FAIL' if failures else 'all documented, none invented'}")
    return 1 if failures else 0


sys.exit(main())
