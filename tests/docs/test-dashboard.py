#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-dashboard.py — the shipped Grafana dashboard asks only for metrics sriovd really exports
#
# usage: test-dashboard.py DASHBOARD.json SRIOVD SAMPLER_EXPORT_C [--prometheus]
#        (env: SRIOVD_SOURCE_DIR, SRIOVD_BUILD_DIR, SRIOVD_MKHOST)
#
# The exported names come from the real daemon, not from a list copied here: sriovd runs on a copy
# of the two-socket fixture (with the /proc files the sampler reads and the fixture does not model:
# /proc/softirqs, /proc/stat, the IRQ threads' task stat files, the RT CPUs' ksoftirqd) with
# monitor_interval_sec = 1, and the families are the "# TYPE" lines of the metrics file it writes.
# That file is exactly what node_exporter's textfile collector serves, so a name in it is a name
# Prometheus will have. The HELP table in src/daemon/monitor/sampler-export.c is read only to check that
# the fixture daemon produced every family (a family it cannot produce here would make a correct
# query fail). Then every PromQL expression of the dashboard (panel targets, rows' panels,
# template variable queries) is parsed down to its metric names, each of which must be in that
# file; none may be node_exporter's own (node_*: the dashboard must work with sriovd's file alone).
# The queries' syntax goes through `promtool check rules` where promtool is installed. The
# dashboard's shape is checked as Grafana imports it. The checker first runs on synthetic bad
# dashboards (an unknown metric, a node_* metric, a misspelled traffic family, a panel without a
# datasource), so it cannot pass by catching nothing.
#
# One exception, explicit and printed: the VF and netdev traffic families (LIVE_ONLY) come over
# rtnetlink from a live kernel only, never on a --root fixture (its ifindexes are made up), so the
# fixture daemon's file cannot have them. A query may name them when they are in the HELP table
# (the families sriovd declares); every such query is listed, and in --prometheus mode a query
# naming only those must still evaluate but may return no series. The vm-traffic test (a real
# kernel with igb VFs) checks those families' values.
#
# --prometheus: the queries on real data instead. The real sriovd with two tenants (allocated on a
# private bus) while interrupts arrive in the fixture's /proc/interrupts, its file served by a
# real prometheus-node-exporter and scraped each second by a real Prometheus; then every query,
# as Grafana sends it for this host, must evaluate and return series (but the LIVE_ONLY traffic
# queries above), the heatmap's "RT" rows must be exactly the fixture's RT CPUs and its other rows
# none of them, each tenant must have a rate, the active-alerts table (the daemon's own
# sriovd_alert_active) the built-in rt-cpu-interference alert for the RT CPU taking foreign
# interrupts once held for its periods, its raise counter at least 1, and the pool panel's target
# line vf_target_utilization's 0.85.

import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

# PromQL's functions (Prometheus 2.x and 3.x), aggregation operators and keywords: never metrics.
FUNCTIONS = set("""
abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil changes clamp clamp_max
clamp_min cos cosh count_over_time day_of_month day_of_week day_of_year days_in_month deg delta deriv exp
floor histogram_avg histogram_count histogram_fraction histogram_quantile histogram_stddev histogram_stdvar
histogram_sum holt_winters double_exponential_smoothing hour idelta increase info irate label_join
label_replace last_over_time ln log10 log2 mad_over_time max_over_time min_over_time minute month pi
predict_linear present_over_time quantile_over_time rad rate resets round scalar sgn sin sinh sort
sort_desc sort_by_label sort_by_label_desc sqrt stddev_over_time stdvar_over_time sum_over_time tan tanh
time timestamp vector year
""".split())
AGGREGATIONS = set("sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk "
                   "limit_ratio".split())
KEYWORDS = set("by without on ignoring group_left group_right and or unless bool offset atan2 inf nan "
               "start end".split())
# Grafana's template functions in variable queries: label_values(METRIC, LABEL), ...
TEMPLATE_FUNCTIONS = {"label_values", "label_names", "metrics", "query_result"}

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"

# Families only a live kernel gives (see the top): its rtnetlink, or its BPF programs for the thread
# latency's histogram and percentiles. Never sampled on a fixture root.
LIVE_ONLY = re.compile(r"sriovd_(netdev_|vf_(rx|tx)_|vf_drop_rate|vf_stats_from|thread_latency_(seconds|p99_|p999_))")
# A histogram's lines: a query names NAME_bucket, NAME_sum or NAME_count of the family NAME.
HISTOGRAM_LINE = re.compile(r"(.+)_(bucket|sum|count)$")


def family_of(name, families):
    """The family a query's name belongs to: itself, or the histogram whose line it is."""
    m = HISTOGRAM_LINE.match(name)
    return m.group(1) if m and name not in families and m.group(1) in families else name

# An alert rule in the fixture daemon's config that holds on any host from the first period, so
# that the alert families have samples in the file (the built-in rules need load to raise).
ALWAYS_ALERT = "[alert fixture-always]\nmetric = sriovd_vf_target_utilization_ratio\nthreshold = 0.5\nperiods = 1\n"


def help_families(export_c):
    """The families sriovd declares: the HELP table of src/daemon/monitor/sampler-export.c."""
    with open(export_c) as f:
        table = set(re.findall(r'\{ "(sriovd_\w+)",', f.read()))
    assert len(table) > 20, f"no HELP table in {export_c}: {table}"
    return table


def live_only_families(help_table):
    return {n for n in help_table if LIVE_ONLY.match(n)}


def strip_grafana(expr):
    """Grafana's variables as PromQL would see them once substituted."""
    expr = re.sub(r"\$__(rate_)?interval\b|\$__range\b|\[\[\w+\]\]", "5m", expr)
    return re.sub(r"\$\{[^}]*\}|\$\w+", "x", expr)


def metric_names(expr):
    """The metric names an expression selects: what is left of its identifiers once strings, label
    matchers, durations, grouping clauses, functions and keywords are taken out. Raises ValueError
    on an identifier used as a function that PromQL does not have (a typo must not hide a name)."""
    e = strip_grafana(expr)
    # Grafana's label_values(SELECTOR, LABEL): the label is no metric (label_values(LABEL) has none).
    m = re.fullmatch(r"\s*label_values\s*\((.*?)(?:,\s*%s)?\s*\)\s*" % NAME, e, re.S)
    if m:
        e = m.group(1) if "," in expr else ""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', e)
    e = re.sub(r"\{[^}]*\}", " {} ", e)
    e = re.sub(r"\[[^\]]*\]", " [] ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\boffset\s+-?\w+", " ", e)
    e = re.sub(r"@\s*[\w.()]+", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])(%s)(\s*\()?" % NAME, e):
        word, call = m.group(1), m.group(2)
        if word in KEYWORDS:
            continue
        if call:
            if word not in FUNCTIONS | AGGREGATIONS | TEMPLATE_FUNCTIONS:
                raise ValueError(f"{word}() is no PromQL function (in {expr!r})")
            continue
        if word in AGGREGATIONS:       # "sum by (x) (...)": the call comes after the clause
            continue
        names.add(word)
    return names


def is_number(s):
    return re.fullmatch(r"[0-9.eExX+-]+", s) is not None


def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


def expressions(dash):
    """(where, PromQL) of every query in the dashboard."""
    for p in walk_panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                yield f"panel {p.get('title')!r} target {t.get('refId')}", t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            if q:
                yield f"variable {v.get('name')}", q


def check_shape(dash):
    """Problems with the dashboard as Grafana would import it (a list of strings, empty when fine)."""
    bad = []
    if not isinstance(dash.get("title"), str) or not dash["title"]:
        bad.append("no title")
    if not isinstance(dash.get("uid"), str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dash.get("uid", "")):
        bad.append("no uid Grafana accepts (1-40 of [A-Za-z0-9_-])")
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        bad.append(f"schemaVersion {dash.get('schemaVersion')} < 36")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        bad.append("no datasource variable of type prometheus")
    inst = variables.get("instance", {})
    if inst.get("type") != "query" or "$datasource" not in json.dumps(inst.get("datasource")).replace("{", "").replace("}", ""):
        bad.append("no instance query variable on $datasource")
    panels = list(walk_panels(dash.get("panels", [])))
    if not [p for p in panels if p.get("type") != "row"]:
        bad.append("no panels")
    ids = [p.get("id") for p in panels]
    if len(ids) != len(set(ids)) or not all(isinstance(i, int) for i in ids):
        bad.append(f"panel ids not unique integers: {ids}")
    cells = {}
    for p in panels:
        name = f"panel {p.get('id')} {p.get('title')!r}"
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24:
            bad.append(f"{name}: gridPos {g} outside Grafana's 24 columns")
        else:
            for x in range(g["x"], g["x"] + g["w"]):
                for y in range(g["y"], g["y"] + g["h"]):
                    if (x, y) in cells:
                        bad.append(f"{name}: overlaps {cells[(x, y)]}")
                        break
                    cells[(x, y)] = name
                else:
                    continue
                break
        if p.get("type") == "row":
            continue
        if not p.get("type") or not p.get("title"):
            bad.append(f"{name}: no type or title")
        if json.dumps(p.get("datasource")) != json.dumps({"type": "prometheus", "uid": "${datasource}"}):
            bad.append(f"{name}: datasource is not the $datasource variable: {p.get('datasource')}")
        targets = p.get("targets") or []
        if not targets:
            bad.append(f"{name}: no targets")
        refs = [t.get("refId") for t in targets]
        if len(refs) != len(set(refs)) or not all(refs):
            bad.append(f"{name}: refIds {refs}")
        for t in targets:
            if not t.get("expr"):
                bad.append(f"{name}: target {t.get('refId')} has no expr")
            if t.get("datasource") not in (None, p.get("datasource")):
                bad.append(f"{name}: target {t.get('refId')} names another datasource")
        if not p.get("description"):
            bad.append(f"{name}: no description (say what the figure is and where it comes from)")
    return bad


def check_names(dash, exported, live=frozenset(), live_queries=None):
    """Problems with the metrics the dashboard's queries name. A name in live (LIVE_ONLY families
    of the HELP table) is accepted though the fixture's file lacks it; the queries naming one are
    appended to live_queries, for the caller to list."""
    bad, used = [], set()
    for where, expr in expressions(dash):
        try:
            names = metric_names(expr)
        except ValueError as e:
            bad.append(f"{where}: {e}")
            continue
        if not names:
            bad.append(f"{where}: names no metric: {expr!r}")
        for n in sorted(family_of(n, exported | live) for n in names):
            used.add(n)
            if n.startswith("node_"):
                bad.append(f"{where}: needs node_exporter's own {n}")
            elif n in live and n not in exported:
                if live_queries is not None and where not in live_queries:
                    live_queries.append(where)
            elif n not in exported:
                bad.append(f"{where}: {n} is not a metric sriovd exports")
    return bad, used


def check_promql(dash):
    """promtool's parser on every query, as recording rules; None when promtool is missing."""
    promtool = shutil.which("promtool")
    if not promtool:
        return None
    exprs = list(expressions(dash))
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:q{i}", "expr": strip_grafana(e)} for i, (w, e) in enumerate(exprs)
        if not re.match(r"\s*(label_values|label_names|metrics|query_result)\s*\(", e)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        json.dump(rules, f)   # JSON is YAML
    try:
        r = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return [] if r.returncode == 0 else [f"promtool check rules: {r.stdout}{r.stderr}"]


# ---- the names sriovd exports, from the real daemon ----

def add_proc_files(root, mkhost):
    """What the sampler reads and the fixture has not: kernel-shaped, with nonzero counts."""
    with open(os.path.join(root, "proc", "interrupts")) as f:
        ncpus = len(f.readline().split())
    header = "".join("%11s" % f"CPU{c}" for c in range(ncpus))
    rows = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"]
    with open(os.path.join(root, "proc", "softirqs"), "w") as f:
        f.write("      " + header.lstrip() + "\n")
        for i, r in enumerate(rows):
            f.write("%10s:" % r + "".join(" %10d" % (1000 * (i + 1) + c) for c in range(ncpus)) + "\n")
    with open(os.path.join(root, "proc", "stat"), "w") as f:
        f.write("cpu  %s\n" % " ".join(["100"] * 10))
        for c in range(ncpus):
            f.write(f"cpu{c} 10 0 20 1000 5 {3 + c} {7 + c} 0 0 0\n")
        f.write("intr 0\nctxt 1\nbtime 1700000000\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n")
    # The IRQ threads' own task files (the sampler reads /proc/PID/task/PID/stat).
    pids = [d for d in os.listdir(os.path.join(root, "proc")) if d.isdigit()]
    for pid in pids:
        task = os.path.join(root, "proc", pid, "task", pid)
        os.makedirs(task, exist_ok=True)
        shutil.copy(os.path.join(root, "proc", pid, "stat"), os.path.join(task, "stat"))
    # The fixture has ksoftirqd/N of every CPU (tests/fixtures/mkhost.py); their task files came above.
    # Each thread's /proc/PID/schedstat, for the latency's fallback; FixtureDaemon.bump_schedstat() runs them.
    for pid in pids:
        with open(os.path.join(root, "proc", pid, "schedstat"), "w") as f:
            f.write("1000000 0 0\n")


NAPI_CLASS = "[class]\nvnic = sriov-preferred\nirq_cpus = rt\nirq_thread_priority = 50\nnapi_threads = on\n"


class FixtureDaemon:
    """The real sriovd on a copy of the two-socket fixture, sampling every second into its own
    metrics file; bus: a private bus's address, or None for none at all (never this host's)."""

    def __init__(self, sriovd, tmp, bus=None, napi=False):
        sys.path.insert(0, os.path.dirname(os.environ["SRIOVD_MKHOST"]))
        import mkhost  # noqa: E402  (tests/fixtures)

        self.tmp = tmp
        self.root = os.path.join(tmp, "root")
        if napi:
            # Threaded NAPI on every netdev (napi/ threads per queue vector, paired by queue order).
            subprocess.run([sys.executable, os.environ["SRIOVD_MKHOST"], "two-socket", self.root,
                            "--threaded-napi"], check=True)
        else:
            shutil.copytree(os.path.join(os.environ["SRIOVD_BUILD_DIR"], "tests", "fixture-two-socket"), self.root,
                            symlinks=True)
        add_proc_files(self.root, mkhost)
        for d in ["state", "run", "metrics"]:
            os.mkdir(os.path.join(tmp, d))
        shutil.copytree(os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "conf", "tenant-classes.d"),
                        os.path.join(tmp, "tenant-classes.d"))
        if napi:
            with open(os.path.join(tmp, "tenant-classes.d", "napi-test.ini"), "w") as f:
                f.write(NAPI_CLASS)
        self.prom = os.path.join(tmp, "metrics", "sriovd.prom")
        conf = os.path.join(tmp, "sriovd.conf")
        with open(conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {tmp}/state\ndrift_check_sec = 0\nmonitor_interval_sec = 1\n"
                    f"metrics_file = {self.prom}\naccess_group = root\n\n[match 15b3:101d]\nnum_vfs = 8\n"
                    + ("class = napi-test\n" if napi else "") + "\n" + ALWAYS_ALERT)
        sys.path.insert(0, os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "tests", "lib"))
        import sdnotify  # noqa: E402
        # Without a bus sriovd keeps trying to connect and samples meanwhile.
        env = dict(os.environ, RUNTIME_DIRECTORY=os.path.join(tmp, "run"),
                   DBUS_SYSTEM_BUS_ADDRESS=bus or "unix:path=" + os.path.join(tmp, "no-bus"))
        self.log = open(os.path.join(tmp, "stderr"), "w+")
        try:
            self.proc = sdnotify.start([sriovd, "--root", self.root, "--config", conf], os.path.join(tmp, "notify"),
                                       env, stdout=self.log, stderr=self.log)
        except RuntimeError as e:
            self.log.seek(0)
            sys.exit(f"sriovd: {e}:\n{self.log.read()[-3000:]}")

    def fail(self, why):
        self.stop()
        self.log.seek(0)
        sys.exit(f"sriovd: {why}:\n{self.log.read()[-3000:]}")

    def second_period(self, timeout=30):
        """The metrics file once rates have values (the second period on): every family has samples."""
        deadline, text = time.monotonic() + timeout, ""
        while time.monotonic() < deadline and self.proc.poll() is None:
            if os.path.exists(self.prom):
                with open(self.prom) as f:
                    text = f.read()
                if re.search(r"^sriovd_irq_rate\{", text, re.M) and \
                        re.search(r"^sriovd_cpu_net_rx_softirq_rate\{", text, re.M) and \
                        re.search(r"^sriovd_thread_latency_mean_seconds\{", text, re.M):
                    return text
            self.bump_schedstat()
            time.sleep(0.1)
        self.fail(f"no second period in {self.prom} (rc {self.proc.poll()}); the file: {text[:1000]}")

    def bump_schedstat(self):
        """Every thread ran once more and waited 2 ms for it: the schedstat mean of each series is 2 ms."""
        proc = os.path.join(self.root, "proc")
        for pid in (d for d in os.listdir(proc) if d.isdigit()):
            path = os.path.join(proc, pid, "schedstat")
            if os.path.exists(path):
                with open(path) as f:
                    run, wait, slices = (int(x) for x in f.read().split())
                with open(path + ".new", "w") as f:
                    f.write(f"{run + 1000} {wait + 2000000} {slices + 1}\n")
                os.rename(path + ".new", path)

    def bump_interrupts(self, n):
        """Interrupts arriving: n more on every CPU an IRQ has landed on, and on CPU 2 (an RT CPU
        of the fixture) from IRQ 9, which no RT tenant owns. Replaced by rename, as the kernel's
        file is never seen half written."""
        path = os.path.join(self.root, "proc", "interrupts")
        with open(path) as f:
            lines = f.read().splitlines()
        ncpus = len(lines[0].split())
        out = [lines[0]]
        for line in lines[1:]:
            head, _, rest = line.partition(":")
            fields = rest.split()
            if not head.strip().isdigit() or len(fields) < ncpus:
                out.append(line)
                continue
            counts = [int(x) for x in fields[:ncpus]]
            counts = [c + n if c else c for c in counts]
            if head.strip() == "9":
                counts[2] += n
            out.append(head + ":" + "".join(" %10d" % c for c in counts) + " " + " ".join(fields[ncpus:]))
        with open(path + ".new", "w") as f:
            f.write("\n".join(out) + "\n")
        os.rename(path + ".new", path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)


def exported_families(sriovd, tmp):
    """The families of the metrics file the real sriovd writes on a fixture host, with samples; its
    PFs with threaded NAPI, so that the napi/ threads' family has samples too."""
    d = FixtureDaemon(sriovd, tmp, napi=True)
    try:
        text = d.second_period()
    finally:
        d.stop()
    families = dict(re.findall(r"^# TYPE (%s) (\w+)$" % NAME, text, re.M))
    sampled = set(re.findall(r"^(%s)[{ ]" % NAME, text, re.M))
    return families, sampled


# ---- the queries on real data: sriovd -> node_exporter -> Prometheus ----

RT_CPUS = set(range(2, 8)) | set(range(18, 24))      # the fixture's isolcpus
TENANTS = {"t-lc": "latency-critical", "t-tp": "throughput"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def prom_query(port, query):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.loads(e.read() or b"{}") or {"status": "error", "error": str(e)}
    except (urllib.error.URLError, ConnectionError):
        return {"status": "error", "error": "no answer"}


def as_promql(expr, instance):
    """A dashboard query as Grafana sends it for this host; label_values() as its selector."""
    e = expr.replace("$__rate_interval", "10s").replace("$instance", instance)
    m = re.fullmatch(r"\s*label_values\s*\((.*),\s*\w+\s*\)\s*", e, re.S)
    return m.group(1) if m else e


def evaluate(dash, sriovd, tmp, live):
    """Every query of the dashboard on what Prometheus scraped from a real sriovd through a real
    node_exporter: it must evaluate, and return series (the ones that may be empty are named),
    and the panels that mark or compare must do so on this host's facts. 77 without the tools."""
    tools = ["dbus-daemon", "busctl", "prometheus", "prometheus-node-exporter"]
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed (Debian: dbus, systemd, prometheus, prometheus-node-exporter)")
        return 77
    sys.path.insert(0, os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "tests", "dbus"))
    import minibus  # noqa: E402

    procs = []
    bus = minibus.PrivateBus(tmp, os.path.join(os.environ["SRIOVD_SOURCE_DIR"], "conf", "org.sriovd.Manager1.conf"))
    d = FixtureDaemon(sriovd, tmp, bus.address)
    try:
        for tenant, cls in TENANTS.items():
            r = subprocess.run(["busctl", "--address=" + bus.address, "call", "org.sriovd.Manager1",
                                "/org/sriovd/Manager1", "org.sriovd.Manager1", "Allocate", "sssa{sv}", tenant, cls,
                                "vm-" + tenant, "0"], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, f"Allocate {tenant}: {r.stderr}"
        d.second_period()
        ne_port, prom_port = free_port(), free_port()
        instance = f"127.0.0.1:{ne_port}"
        procs.append(subprocess.Popen(["prometheus-node-exporter", "--collector.disable-defaults", "--collector.textfile",
                                       "--collector.textfile.directory=" + os.path.dirname(d.prom),
                                       f"--web.listen-address={instance}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        conf = os.path.join(tmp, "prometheus.yml")
        with open(conf, "w") as f:
            json.dump({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                       "scrape_configs": [{"job_name": "sriovd", "static_configs": [{"targets": [instance]}]}]}, f)
        procs.append(subprocess.Popen(["prometheus", "--config.file=" + conf, "--storage.tsdb.path=" + tmp + "/tsdb",
                                       f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=error"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # Interrupts keep arriving; enough scrapes for rate() over 10 s, and interference above
        # the built-in threshold on RT CPU 2.
        deadline, ready = time.monotonic() + 60, False
        while time.monotonic() < deadline and not ready:
            d.bump_interrupts(200)
            d.bump_schedstat()
            time.sleep(0.5)
            n = prom_query(prom_port, f'count_over_time(sriovd_vf_target_utilization_ratio{{instance="{instance}"}}[1m])')
            hot = prom_query(prom_port, f'sriovd_rt_cpu_interference_rate{{instance="{instance}", cpu="2"}} > 10')
            # The daemon's own alert: raised once the interference held for the rule's 3 periods.
            held = prom_query(prom_port, f'sriovd_alert_active{{instance="{instance}", '
                                         f'alert="rt-cpu-interference", cpu="2"}}')
            ready = (n.get("status") == "success" and n["data"]["result"] and
                     float(n["data"]["result"][0]["value"][1]) >= 8 and hot.get("data", {}).get("result") and
                     held.get("data", {}).get("result"))
        assert ready, (f"Prometheus has not scraped sriovd's file 8 times with interference on CPU 2 and its "
                       f"alert active: {n} {hot} {held}")

        results, failures = {}, []
        for where, expr in expressions(dash):
            q = as_promql(expr, instance)
            r = prom_query(prom_port, q)
            if r.get("status") != "success":
                failures.append(f"{where}: Prometheus: {r.get('error')} ({q})")
                continue
            results[where] = r["data"]["result"]
            # The one exception (see the top): traffic only a live kernel's rtnetlink gives.
            names = {family_of(n, live) for n in metric_names(expr)}
            may_be_empty = bool(names) and names <= live
            if not results[where] and not may_be_empty:
                failures.append(f"{where}: no series on a host with tenants and interrupts: {q}")
            print(f"{len(results[where]):3} series: {where}"
                  + (" (rtnetlink or BPF: none on a --root fixture; may be empty)" if may_be_empty else ""))

        def series(title, ref):
            return results.get(f"panel {title!r} target {ref}", [])

        def panel_title(prefix):
            return next(p["title"] for p in walk_panels(dash["panels"]) if p["title"].startswith(prefix))

        heat = panel_title("NIC interrupts per CPU")
        rt_rows = {int(s["metric"]["cpu"]) for s in series(heat, "A")}
        other_rows = {int(s["metric"]["cpu"]) for s in series(heat, "B")}
        if not rt_rows or not rt_rows <= RT_CPUS or other_rows & RT_CPUS:
            failures.append(f"heatmap: RT rows {sorted(rt_rows)}, others {sorted(other_rows)}; RT CPUs {sorted(RT_CPUS)}")
        by_tenant = {s["metric"].get("tenant"): float(s["value"][1])
                     for s in series(panel_title("Interrupts per second by tenant"), "A")}
        if set(by_tenant) != set(TENANTS) or not all(v > 0 for v in by_tenant.values()):
            failures.append(f"interrupts by tenant: {by_tenant}, want a positive rate for each of {sorted(TENANTS)}")
        by_class = {s["metric"].get("class") for s in series(panel_title("Interrupts per second by tenant class"), "A")}
        if by_class != set(TENANTS.values()):
            failures.append(f"interrupts by class: {by_class}")
        alerts = [(s["metric"].get("alert"), s["metric"].get("cpu")) for s in series(panel_title("Active alerts (the"), "A")]
        if ("rt-cpu-interference", "2") not in alerts or ("fixture-always", None) not in alerts:
            failures.append(f"alert table: no rt-cpu-interference row for CPU 2 or no fixture-always row: {alerts}")
        raised = {s["metric"].get("alert"): float(s["value"][1]) for s in series(panel_title("Alerts raised"), "A")}
        if raised.get("rt-cpu-interference", 0) < 1 or raised.get("fixture-always", 0) < 1:
            failures.append(f"alerts raised: {raised}, want rt-cpu-interference and fixture-always at 1 or more")
        target = series(panel_title("VF pool utilization per PF"), "B")
        if [float(s["value"][1]) for s in target] != [0.85]:
            failures.append(f"VF pool panel's target line: {target}")
        held = {s["metric"]["pf"]: float(s["value"][1]) for s in series(panel_title("VFs per PF"), "A")}
        if sum(held.values()) != len(TENANTS):
            failures.append(f"VFs held per PF: {held}, want {len(TENANTS)} in all")
        for f in failures:
            print("FAIL: " + f)
        if failures:
            return 1
        print(f"{len(results)} queries evaluated by Prometheus on sriovd's file through node_exporter ({instance}): "
              f"heatmap RT rows {sorted(rt_rows)}, tenants {by_tenant}, alert rows {alerts}")
        return 0
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=20)
        d.stop()
        bus.stop()


def self_test(good, exported, live):
    """The checker on dashboards that must fail, each for its own reason."""
    def with_query(expr):
        d = copy.deepcopy(good)
        d["panels"][-1]["targets"].append({"refId": "ZZ", "expr": expr})
        return d

    cases = [
        (with_query('sum by (tenant) (rate(sriovd_irq_interupts_total{tenant=~".+"}[$__rate_interval]))'),
         "sriovd_irq_interupts_total is not a metric sriovd exports"),
        # A traffic family's shape but not one sriovd declares: the live-only exception does not cover it.
        (with_query("rate(sriovd_vf_rx_packet_total[5m])"), "sriovd_vf_rx_packet_total is not a metric sriovd exports"),
        (with_query('rate(node_interrupts_total{instance="$instance"}[5m])'), "needs node_exporter's own"),
        (with_query("rated(sriovd_irq_interrupts_total[5m])"), "rated() is no PromQL function"),
        (with_query('sum(rate(sriovd_irq_interrupts_total[5m])) / on (instance) sriovd_nope'),
         "sriovd_nope is not a metric"),
    ]
    for dash, want in cases:
        bad, _ = check_names(dash, exported, live)
        assert any(want in b for b in bad), f"the checker missed {want!r}: {bad}"
    # A live-only family the HELP table declares passes, and is listed; without the exception it fails.
    listed = []
    d = with_query("rate(sriovd_vf_rx_packets_total[5m])")
    assert not check_names(d, exported, live, listed)[0] and "panel" in " ".join(listed), f"live-only: {listed}"
    assert check_names(d, exported)[0], "a live-only family passed without the exception"
    d = copy.deepcopy(good)
    d["templating"]["list"].append({"type": "query", "name": "pf", "query": {"query": "label_values(sriovd_pf_info, pf)"}})
    assert any("sriovd_pf_info is not" in b for b in check_names(d, exported)[0]), "a variable's query unchecked"
    d = copy.deepcopy(good)
    del next(p for p in walk_panels(d["panels"]) if p.get("type") != "row")["datasource"]
    assert any("datasource is not" in b for b in check_shape(d)), "a panel without a datasource passed"
    d = copy.deepcopy(good)
    next(p for p in walk_panels(d["panels"]) if p.get("type") != "row")["targets"] = []
    assert any("no targets" in b for b in check_shape(d)), "a panel without targets passed"
    d = copy.deepcopy(good)
    d["panels"].append(copy.deepcopy(d["panels"][-1]))
    d["panels"][-1]["id"] = 999
    assert any("overlaps" in b for b in check_shape(d)), "overlapping panels passed"
    # The parser on shapes the dashboard may come to use.
    for expr, want in [
        ('sum by (tenant, class) (rate(sriovd_irq_interrupts_total{instance="$instance", tenant!=""}[$__rate_interval]))',
         {"sriovd_irq_interrupts_total"}),
        ('label_replace(sriovd_a and on (instance, cpu) sriovd_b, "rt", "RT CPU $1", "cpu", "(.*)")',
         {"sriovd_a", "sriovd_b"}),
        ("sriovd_a < on (instance) group_left sriovd_b offset 5m", {"sriovd_a", "sriovd_b"}),
        ("max without (pf) (sriovd_a) > bool 0.85", {"sriovd_a"}),
        ("label_values(sriovd_a, instance)", {"sriovd_a"}),
        ("sum(sriovd_a) by (node) / 1e2", {"sriovd_a"}),
    ]:
        got = metric_names(expr)
        assert got == want, f"metric_names({expr!r}) = {got}, want {want}"
    if shutil.which("promtool"):
        assert check_promql(with_query("sum by (tenant (sriovd_irq_rate)")), "promtool let a broken query through"


def main():
    dashboard_path, sriovd, export_c = sys.argv[1:4]
    with open(dashboard_path) as f:
        dash = json.load(f)
    help_table = help_families(export_c)
    live_only = live_only_families(help_table)
    if sys.argv[4:] == ["--prometheus"]:
        tmp = tempfile.mkdtemp(prefix="sriovd-dashboard-")
        try:
            return evaluate(dash, sriovd, tmp, live_only)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    tmp = tempfile.mkdtemp(prefix="sriovd-dashboard-")
    try:
        families, sampled = exported_families(sriovd, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    exported = set(families)
    print(f"sriovd on the fixture exported {len(exported)} families ({len(sampled)} with samples)")
    # Every family of the HELP table, with samples: else a query on a real one could fail here.
    # VF and netdev traffic comes over rtnetlink from a live kernel only (a fixture's ifindexes are
    # made up): those families are never sampled here; queries may name them (see the top).
    assert not (live_only & sampled), f"the fixture sampled live-only families {sorted(live_only & sampled)}: " \
                                      "drop them from LIVE_ONLY"
    missing = sorted(help_table - sampled - live_only)
    assert not missing, f"the fixture daemon produced no samples of {missing}: the host model needs them"
    assert exported <= help_table, f"families without a HELP entry: {sorted(exported - help_table)}"
    exported -= live_only

    self_test(dash, exported, live_only)
    print("checker self-test: bad metric, node_* metric, misspelled traffic family, bad function, bad variable, "
          "missing datasource, missing targets, overlapping panels: all caught; a live-only family listed")

    failures = check_shape(dash)
    live_queries = []
    bad, used = check_names(dash, exported, live_only, live_queries)
    failures += bad
    for where in live_queries:
        print(f"live-only (a live kernel's rtnetlink or BPF, not on this fixture; in the HELP table): {where}")
    promql = check_promql(dash)
    if promql is None:
        print("promtool not installed (Debian package prometheus): query syntax not checked")
    else:
        failures += promql
    n_queries = len(list(expressions(dash)))
    n_panels = len([p for p in walk_panels(dash["panels"]) if p.get("type") != "row"])
    for f in failures:
        print("FAIL: " + f)
    if failures:
        return 1
    print(f"{n_panels} panels, {n_queries} queries, {len(used)} metrics, all exported by sriovd: {sorted(used)}")
    print("unused families: " + ", ".join(sorted((exported | live_only) - used)))
    return 0


sys.exit(main())
