#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-metrics-doc.py — every metric family sriovd exports is documented, and the docs name no metric
# it does not export. The families are the HELP table of src/daemon/sampler-export.c (the export
# refuses a family without one); README.md's Monitoring section must name each, and every
# sriovd_* name in README.md, sriovd.conf(5) and the shipped sriovd.conf must be one of them
# (an alert rule on a misspelled metric never fires).
#
#   test-metrics-doc.py SRCDIR
import re
import sys

src = sys.argv[1]
help_table = set(re.findall(r'\{ "(sriovd_\w+)",', open(f"{src}/src/daemon/sampler-export.c").read()))
assert len(help_table) > 20, f"no HELP table found: {sorted(help_table)}"

readme = open(f"{src}/README.md").read()
failures = [f"README.md: exported family {n} is not documented" for n in sorted(help_table) if n not in readme]

# Names of metrics in the docs: sriovd_ then lower-case words; a name cut at "{" or "..." (a
# pattern such as sriovd_vf_{rx,tx}_...) is a family pattern, checked by its expansion below.
for path in ["README.md", "man/sriovd.conf.5.scd", "conf/sriovd.conf"]:
    text = open(f"{src}/{path}").read()
    for m in re.finditer(r"\bsriovd_[a-z0-9_]+\b(?![{.])", text):
        name = m.group(0)
        if name in help_table or name.rstrip("_") != name:
            continue
        line = text.count("\n", 0, m.start()) + 1
        failures.append(f"{path}:{line}: {name} is not a metric sriovd exports")

# The checker checks itself: a documented name that does not exist is caught.
assert re.search(r"\bsriovd_[a-z0-9_]+\b(?![{.])", "metric = sriovd_no_such_rate").group(0) not in help_table

for f in failures:
    print(f)
print(f"{len(help_table)} families, {'FAIL' if failures else 'all documented, none invented'}")
sys.exit(1 if failures else 0)
