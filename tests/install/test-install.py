#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-install.py — "DESTDIR=... meson install" from a fresh build directory, with --prefix=/usr and
# with meson's default prefix, gives a tree that works: the unit starts the installed sriovd, which
# reads the installed sriovd.conf, the bus policy is where dbus-daemon reads it, the unit where
# systemd reads it; and a second install keeps an edited sriovd.conf.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("SRIOVD_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAILURES = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        FAILURES.append(what)
    return ok


def run(*args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


def dbus_policy_dirs():
    """The directories dbus-daemon's system bus reads policies from, from its own system.conf."""
    dirs = []
    for conf in ["/usr/share/dbus-1/system.conf", "/etc/dbus-1/system.conf"]:
        if os.path.exists(conf):
            for d in re.findall(r"<includedir>([^<]+)</includedir>", open(conf).read()):
                dirs.append(os.path.normpath(os.path.join(os.path.dirname(conf), d)))
    # Without dbus installed: where dbus 1.10 and later read them.
    return dirs or ["/usr/share/dbus-1/system.d", "/etc/dbus-1/system.d"]


def unit_paths():
    try:
        out = subprocess.run(["systemd-analyze", "unit-paths"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        out = ""
    paths = [os.path.normpath(p) for p in out.split()]
    # Without systemd-analyze: the directories every systemd reads.
    return paths or ["/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"]


def installed(dest, path):
    return os.path.join(dest, path.lstrip("/"))


def check_tree(name, dest):
    units = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if f == "sriovd.service"]
    if not check(len(units) == 1, f"{name}: one sriovd.service installed ({units})"):
        return
    unit = open(units[0]).read()
    unit_dir = "/" + os.path.relpath(os.path.dirname(units[0]), dest)
    check(os.path.normpath(unit_dir) in unit_paths(), f"{name}: unit in {unit_dir}, a directory systemd reads")

    exec_start = re.search(r"^ExecStart=(\S+)(.*)$", unit, re.M)
    sriovd = exec_start.group(1)
    if not check(os.access(installed(dest, sriovd), os.X_OK), f"{name}: ExecStart={sriovd} is the installed binary"):
        return
    check(exec_start.group(2).strip() == "", f"{name}: ExecStart= leaves --config to the binary's default")
    reload = re.search(r"^ExecReload=(\S+) reload$", unit, re.M)
    check(reload and os.access(installed(dest, reload.group(1)), os.X_OK),
          f"{name}: ExecReload={reload and reload.group(1)} is the installed sriovctl")
    for doc in re.findall(r"file:(\S+)", re.search(r"^Documentation=(.*)$", unit, re.M).group(1)):
        check(os.path.exists(installed(dest, doc)), f"{name}: Documentation= file:{doc} installed")

    # The config path the installed binary reads: what its --help names as the default.
    help_text = run(installed(dest, sriovd), "--help")
    config = re.search(r"--config FILE\s+configuration \(default (\S+?)\);", help_text).group(1)
    conf_file = installed(dest, config)
    check(os.path.exists(conf_file), f"{name}: sriovd reads {config}, and it is installed")
    classes = os.path.join(os.path.dirname(conf_file), "tenant-classes.d")
    check(os.path.exists(os.path.join(classes, "latency-critical.ini")), f"{name}: tenant classes beside {config}")
    out = subprocess.run([installed(dest, sriovd), "--check-config", "--config", conf_file],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"{name}: the installed configuration is valid: {out.stdout.strip()}{out.stderr.strip()}")

    policies = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if f == "org.sriovd.Manager1.conf"]
    policy_dirs = ["/" + os.path.relpath(os.path.dirname(p), dest) for p in policies]
    check(len(policies) == 1 and policy_dirs[0] in dbus_policy_dirs(),
          f"{name}: D-Bus policy in {policy_dirs}, read by dbus-daemon from {dbus_policy_dirs()}")
    sysusers = sorted(os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if d.endswith("/sysusers.d"))
    sysusers_names = [os.path.basename(f) for f in sysusers]
    check(sysusers_names == ["sriovd-placement.conf", "sriovd.conf"] and
          re.search(r"^g sriovd\b", open(sysusers[1]).read(), re.M),
          f"{name}: a sysusers.d entry creates the sriovd group ({sysusers})")
    check(sysusers_names == ["sriovd-placement.conf", "sriovd.conf"] and
          re.search(r"^u _sriovd-placement\b", open(sysusers[0]).read(), re.M) and
          re.search(r"^m _sriovd-placement sriovd\b", open(sysusers[0]).read(), re.M),
          f"{name}: a sysusers.d entry creates the connector's user, in the sriovd group")
    modules = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if d.endswith("/modules-load.d")]
    check(len(modules) == 1 and re.search(r"^vfio-pci$", open(modules[0]).read(), re.M),
          f"{name}: a modules-load.d entry loads vfio-pci ({modules})")
    # The Grafana dashboard, in the data directory beside the shipped defaults, as valid JSON.
    dashboards = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs if f == "sriovd-dashboard.json"]
    share = "/usr/share/sriovd/grafana" if name == "--prefix=/usr" else "/usr/local/share/sriovd/grafana"
    ok = len(dashboards) == 1 and "/" + os.path.relpath(os.path.dirname(dashboards[0]), dest) == share
    # ... and not copied to the configuration directory as if it were policy (a conffile in the .deb).
    if check(ok, f"{name}: the Grafana dashboard installed in {share}, only there ({dashboards})"):
        with open(dashboards[0]) as f:
            check(json.load(f).get("panels"), f"{name}: the installed dashboard is JSON with panels")
    return conf_file


def main():
    if not shutil.which("meson") or not shutil.which("ninja"):
        print("meson or ninja missing: skip")
        return 77
    scratch = tempfile.mkdtemp(prefix="sriovd-install-")
    try:
        for name, args in [("--prefix=/usr", ["--prefix=/usr"]), ("default prefix", [])]:
            build = os.path.join(scratch, "build" + str(len(args)))
            dest = os.path.join(scratch, "dest" + str(len(args)))
            # -Dwerror=false: CFLAGS from the environment (a package build's _FORTIFY_SOURCE) may
            # warn where the project's own flags do not; warnings are not what this test is about.
            run("meson", "setup", build, SRC, "-Dwerror=false", *args)
            run("ninja", "-C", build)
            env = dict(os.environ, DESTDIR=dest)
            run("meson", "install", "-C", build, "--no-rebuild", env=env)
            conf_file = check_tree(name, dest)
            if not conf_file:
                continue
            # The operator's edits survive a second install; the vendor copy is replaced.
            with open(conf_file, "a") as f:
                f.write("\n# edited by the operator\n")
            vendor = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs
                      if f == "sriovd.conf" and os.path.join(d, f) != conf_file and "/sriovd" in d
                      and not d.endswith(".d")]
            run("meson", "install", "-C", build, "--no-rebuild", env=env)
            check("# edited by the operator" in open(conf_file).read(), f"{name}: a second install keeps an edited sriovd.conf")
            check(len(vendor) == 1 and "# edited" not in open(vendor[0]).read(),
                  f"{name}: the shipped sriovd.conf stays in the data directory ({vendor})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(FAILURES)} install checks failed" if FAILURES else "all install checks passed")
    return 1 if FAILURES else 0


sys.exit(main())
