#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-hostile.py — sriovd on seeded random mutations of a fixture host: no crash, hang, leak or escape
"""sriovd --dry-run and --once on hostile host trees.

    test-hostile.py SRIOVD [--seed N] [--trees N] [--keep DIR]

The two-socket fixture host (tests/fixtures/mkhost.py) is mutated with 1-4 seeded random
changes per tree: huge, negative and garbage numbers in numeric attributes, FIFOs, sockets
and directories where files are, missing files, dangling, looping, overlong and escaping
symlinks, duplicate virtfn links, virtfn -> PF, truncated /proc files, binary junk. Each
tree gets `sriovd --root TREE --dry-run`, and a copy of it `--once --json`, each under a
timeout. Exit 1 or 2 with a message is fine; what fails the test:

  crash   a signal, an ASan/UBSan report, or an exit status sriovd does not document
  hang    the run outlived its timeout
  leak    a LeakSanitizer report (run from the ASan build; CI sets detect_leaks=1)
  escape  a canary's content in the output

Escapes: canary files outside the root hold a token, and escaping symlinks (absolute,
and relative with more ".." than the tree is deep) point at them from attributes whose
value sriovd prints or names in a note when it reads one (numa_node, sriov_totalvfs,
sriov_numvfs, a netdev's directory, msi_irqs). Neither strace nor a mount namespace is
needed, so it runs anywhere the suite runs, under ASan too; and it cannot pass by being
blind: first, control trees plant the same links pointing at the same canaries copied
*inside* the root, and the token must show up in their output.

Figures at the end: trees, runs, crashes, hangs, leaks, escapes.
Exit 77 when a tool it needs is missing.
"""

import argparse
import concurrent.futures
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

TOKEN = "48879"               # the canaries' content: a number each planted attribute prints
NETDEV_TOKEN = "canary48879"  # a netdev name, inside a canary net/ directory
PF0 = "sys/devices/pci0000:40/0000:41:00.0"
PF1 = "sys/devices/pci0000:c0/0000:c1:00.0"
PFS = (PF0, PF1)
RUN_TIMEOUT = 30

CONFIG = """[daemon]
vf_timeout_sec = 1
state_dir = {state}

[match 15b3:101d]
num_vfs = 8
class = hostile
vf_mac = derive
"""
# The shipped throughput class, and what reads more of the tree: channels, threaded NAPI (the
# fixture has it: mkhost --threaded-napi) and per-NAPI settings.
HOSTILE_CLASS = """[class]
vnic = sriov-preferred
rank = 10
channels_combined = 4
napi_threads = on
napi_thread_priority = 10
napi_defer_hard_irqs = 2
"""


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


# ---------------------------------------------------------------------------------------
# The tree


def all_paths(root):
    """(rel path, kind) of everything under root; kind 'f' file, 'l' link, 'd' directory."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in dirnames:
            p = os.path.join(dirpath, n)
            out.append((os.path.normpath(os.path.join(rel, n)), "l" if os.path.islink(p) else "d"))
        for n in filenames:
            p = os.path.join(dirpath, n)
            out.append((os.path.normpath(os.path.join(rel, n)), "l" if os.path.islink(p) else "f"))
    out.sort()
    return out


def functions(paths):
    return sorted({p.rsplit("/", 1)[0] for p, k in paths
                   if p.startswith("sys/devices/pci") and p.endswith("/vendor")})


def remove(path):
    if os.path.islink(path) or not os.path.isdir(path):
        if os.path.lexists(path):
            os.unlink(path)
    else:
        shutil.rmtree(path)


def relink(path, target):
    remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def write(path, data):
    remove(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def escape_target(rng, outside, name):
    """A link target leaving the root for the canary: absolute, or climbing with '..'."""
    dest = os.path.join(outside, name)
    if rng.random() < 0.5:
        return dest
    return "../" * rng.randint(12, 30) + dest.lstrip("/")


def make_canaries(d):
    """Canary files and directories (in d) that would show TOKEN if read."""
    os.makedirs(os.path.join(d, "msi_irqs"), exist_ok=True)
    with open(os.path.join(d, "msi_irqs", TOKEN), "w") as f:
        f.write("msix\n")
    nd = os.path.join(d, "net", NETDEV_TOKEN)
    os.makedirs(nd, exist_ok=True)
    with open(os.path.join(nd, "ifindex"), "w") as f:
        f.write(TOKEN + "\n")
    for name in ("numa_node", "sriov_totalvfs", "sriov_numvfs", "value"):
        with open(os.path.join(d, name), "w") as f:
            f.write(TOKEN + "\n")


# Attributes whose value sriovd prints or names in a note: where an escape would show.
ESCAPES = [("numa_node", "numa_node"), ("sriov_totalvfs", "sriov_totalvfs"),
           ("sriov_numvfs", "sriov_numvfs"), ("msi_irqs", "msi_irqs"), ("net", "net")]

NUMBERS = [b"2147483647\n", b"-1\n", b"-2147483648\n", b"99999999999999999999999\n",
           b"0x7fffffff\n", b"65536\n", b"4096\n", b"1e9\n", b"", b"\n", b" \n", b"abc\n",
           b"18446744073709551615\n", b"0-1023\n", b"0-4294967295\n", b"3-1\n", b"1,,2\n",
           b"7\n", b"-0\n", b"+5\n", b"0x\n", b"00000000000000000000000000000000016\n"]
NUMERIC_ATTRS = ["sriov_numvfs", "sriov_totalvfs", "numa_node", "vendor", "device", "class",
                 "sriov_drivers_autoprobe", "local_cpulist", "irq", "sriov_offset"]
HOST_NUMERIC = ["sys/devices/system/cpu/isolated", "sys/devices/system/cpu/nohz_full",
                "sys/devices/system/node/online", "sys/devices/system/node/node1/cpulist",
                "sys/kernel/realtime", "proc/sys/net/core/rtnet_prio",
                "proc/irq/default_smp_affinity"]


class Mutator:
    def __init__(self, rng, root, outside):
        self.rng = rng
        self.root = root
        self.outside = outside
        self.paths = all_paths(root)
        self.fns = functions(self.paths)
        self.files = [p for p, k in self.paths if k == "f"]
        self.links = [p for p, k in self.paths if k == "l"]
        self.done = []

    def p(self, rel):
        return os.path.join(self.root, rel)

    def pick_file(self):
        # Half the time something sriovd reads for sure: a PF's, a VF's or an IRQ's attribute.
        if self.rng.random() < 0.5:
            fn = self.rng.choice(self.fns)
            cands = [p for p in self.files if p.startswith(fn + "/")]
            if cands:
                return self.rng.choice(cands)
        return self.rng.choice(self.files)

    def numeric(self):
        r = self.rng
        if r.random() < 0.7:
            rel = r.choice(self.fns) + "/" + r.choice(NUMERIC_ATTRS)
        elif r.random() < 0.5:
            rel = "proc/irq/%d/%s" % (r.randint(40, 125), r.choice(
                ["smp_affinity_list", "effective_affinity_list", "smp_affinity"]))
        else:
            rel = r.choice(HOST_NUMERIC)
        v = r.choice(NUMBERS)
        write(self.p(rel), v)
        return "number %r in %s" % (v, rel)

    def fifo(self):
        rel = self.pick_file()
        remove(self.p(rel))
        os.mkfifo(self.p(rel))
        return "fifo at " + rel

    def sock(self):
        rel = self.pick_file()
        remove(self.p(rel))
        cwd = os.getcwd()
        os.chdir(os.path.dirname(self.p(rel)))   # sun_path is short; bind relative
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.basename(rel))
            s.close()
        finally:
            os.chdir(cwd)
        return "socket at " + rel

    def directory(self):
        rel = self.pick_file()
        remove(self.p(rel))
        os.mkdir(self.p(rel))
        return "directory at " + rel

    def missing(self):
        rel = self.rng.choice(self.files + self.links)
        remove(self.p(rel))
        return "missing " + rel

    def dangling(self):
        rel = self.rng.choice(self.links + [self.pick_file()])
        relink(self.p(rel), "../nonexistent/" + os.path.basename(rel))
        return "dangling link " + rel

    def loop(self):
        rel = self.rng.choice(self.links + [self.pick_file()])
        if self.rng.random() < 0.5:
            relink(self.p(rel), os.path.basename(rel))
        else:
            other = rel + ".loop"
            relink(self.p(other), os.path.basename(rel))
            relink(self.p(rel), os.path.basename(other))
        return "looping link " + rel

    def overlong(self):
        r = self.rng
        fn = r.choice(self.fns)
        name = r.choice(["driver", "iommu_group", "physfn", "virtfn0", "numa_node", "subsystem"])
        n = r.choice([1023, 1024, 1025, 2048, 4000])
        tail = r.choice(["mlx5_core", "11", "0000:41:00.2", "x" * 200])
        head = "../" * 3
        target = head + "./" * ((n - len(head) - len(tail)) // 2) + tail
        relink(self.p(fn + "/" + name), target)
        return "%d-byte link %s/%s" % (len(target), fn, name)

    def escape(self):
        r = self.rng
        attr, canary = r.choice(ESCAPES)
        # Mostly the PFs: theirs are the attributes whose values show up in the output.
        fn = r.choice(PFS) if r.random() < 0.75 else r.choice(self.fns)
        relink(self.p(fn + "/" + attr), escape_target(r, self.outside, canary))
        return "escaping link %s/%s" % (fn, attr)

    def escape_proc(self):
        r = self.rng
        rel = r.choice(["proc/irq/%d/smp_affinity_list" % r.randint(40, 125), "proc/cmdline",
                        "proc/irq/%d" % r.randint(40, 125), "sys/bus/pci/devices",
                        "sys/devices/system/cpu/online", "proc/%d/stat" % r.randint(1000, 1085)])
        relink(self.p(rel), escape_target(r, self.outside, "value"))
        return "escaping link " + rel

    def dup_virtfn(self):
        r = self.rng
        pf, other = r.sample(PFS, 2)
        vfs = [p for p in self.links if p.startswith(other + "/virtfn")]
        if not vfs:
            return "no virtfn left to duplicate"
        src = os.readlink(self.p(r.choice(vfs)))
        vf = os.path.normpath(os.path.join(other, src))
        into = r.choice([pf, other])
        name = "virtfn%d" % r.choice([0, 3, 9, 15, 16, 65535])
        relink(self.p(into + "/" + name), os.path.relpath(vf, into))
        return "%s/%s -> %s" % (into, name, vf)

    def virtfn_pf(self):
        r = self.rng
        pf = r.choice(PFS)
        target = r.choice(PFS + (self.rng.choice(self.fns),))
        name = "virtfn%d" % r.choice([0, 5, 7, 12])
        relink(self.p(pf + "/" + name), os.path.relpath(target, pf))
        return "%s/%s -> %s" % (pf, name, target)

    def physfn(self):
        r = self.rng
        vfs = [p for p in self.links if p.endswith("/physfn")]
        rel = r.choice(vfs)
        fn = rel.rsplit("/", 1)[0]
        relink(self.p(rel), os.path.relpath(r.choice(PFS + (fn,)), fn))
        return "physfn " + rel

    def truncate(self):
        r = self.rng
        cands = [p for p in self.files if p.startswith("proc/")]
        rel = r.choice(cands)
        with open(self.p(rel), "rb") as f:
            data = f.read()
        write(self.p(rel), data[:r.randint(0, max(0, len(data) - 1))])
        return "truncated " + rel

    def junk(self):
        r = self.rng
        rel = self.pick_file()
        n = r.choice([1, 7, 64, 4095, 4096, 4097, 65536, 1 << 20])
        write(self.p(rel), bytes(r.getrandbits(8) for _ in range(min(n, 4097))) * (n // 4097 + 1))
        return "%d bytes of junk in %s" % (n, rel)

    def bad_entry(self):
        r = self.rng
        name = r.choice(["not-a-function", "0000:41:00", "10000:e1:00.0", "0000:41:00.9",
                         "ffff:ff:1f.7", "0000:41:00.0 ", "\u00e9"])
        rel = "sys/bus/pci/devices/" + name
        if r.random() < 0.5:
            os.makedirs(self.p(rel), exist_ok=True)
        else:
            relink(self.p(rel), "../../../devices/" + PF0.split("/", 2)[2])
        return "entry %r in /sys/bus/pci/devices" % name

    KINDS = ["numeric", "numeric", "numeric", "fifo", "sock", "directory", "missing", "dangling",
             "loop", "overlong", "overlong", "escape", "escape", "escape_proc", "dup_virtfn",
             "virtfn_pf", "physfn", "truncate", "junk", "bad_entry"]

    def mutate(self, n):
        for _ in range(n):
            kind = self.rng.choice(self.KINDS)
            try:
                self.done.append(getattr(self, kind)())
            except (OSError, IndexError, ValueError) as e:
                self.done.append("%s: not applied (%s)" % (kind, e))
        return self.done


# ---------------------------------------------------------------------------------------
# Running sriovd


def env_for(tmp):
    env = dict(os.environ)
    asan = env.get("ASAN_OPTIONS", "")
    if "detect_leaks" not in asan:
        asan = (asan + ":" if asan else "") + "detect_leaks=1"
    env["ASAN_OPTIONS"] = asan
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    env["RUNTIME_DIRECTORY"] = os.path.join(tmp, "run")
    env.pop("JOURNAL_STREAM", None)
    env.pop("NOTIFY_SOCKET", None)
    env.pop("SRIOVD_TEST_KERNEL", None)
    env.pop("SRIOVD_TEST_FAIL_WRITE", None)
    return env


def run(sriovd, root, conf, tmp, mode):
    os.makedirs(os.path.join(tmp, "run"), exist_ok=True)
    args = [sriovd, "--root", root, "--config", conf] + (["--dry-run"] if mode == "dry-run"
                                                          else ["--once", "--json"])
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, capture_output=True, env=env_for(tmp), timeout=RUN_TIMEOUT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        return "hang", out.decode(errors="replace"), time.monotonic() - t0
    out = (p.stdout + p.stderr).decode(errors="replace")
    if "LeakSanitizer" in out:
        verdict = "leak"
    elif p.returncode < 0 or "AddressSanitizer" in out or "runtime error:" in out \
            or "UndefinedBehaviorSanitizer" in out or p.returncode not in (0, 1, 2):
        verdict = "crash"
    elif TOKEN in out:
        verdict = "escape"
    else:
        verdict = "ok"
    return verdict, out, time.monotonic() - t0


def write_config(d):
    state = os.path.join(d, "state")
    os.makedirs(state, exist_ok=True)
    conf = os.path.join(d, "sriovd.conf")
    with open(conf, "w") as f:
        f.write(CONFIG.format(state=state))
    src = os.path.join(os.environ.get("SRIOVD_SOURCE_DIR", "."), "conf", "tenant-classes.d")
    if os.path.isdir(src):
        shutil.copytree(src, os.path.join(d, "tenant-classes.d"))
    os.makedirs(os.path.join(d, "tenant-classes.d"), exist_ok=True)
    with open(os.path.join(d, "tenant-classes.d", "hostile.ini"), "w") as f:
        f.write(HOSTILE_CLASS)
    return conf


def one_tree(sriovd, base, work, seed, i):
    """Mutate a copy of base; run --dry-run on it and --once on a copy. Returns results."""
    d = os.path.join(work, "t%03d" % i)
    os.makedirs(d)
    conf = write_config(d)
    results = []
    trees = []
    # --once writes, so it gets a tree of its own, mutated the same way (the same seed: FIFOs
    # and sockets do not copy).
    for name in ("root", "root-once"):
        root = os.path.join(d, name)
        shutil.copytree(base, root, symlinks=True)
        rng = random.Random("%d/%d" % (seed, i))
        what = Mutator(rng, root, os.path.join(work, "outside")).mutate(rng.randint(1, 4))
        trees.append(root)
    for mode, r in (("dry-run", trees[0]), ("once", trees[1])):
        verdict, out, secs = run(sriovd, r, conf, d, mode)
        results.append((mode, verdict, out, secs))
    bad = any(v != "ok" for _, v, _, _ in results)
    if not bad:
        shutil.rmtree(d, ignore_errors=True)
    return i, what, results, d


def controls(sriovd, base, work):
    """The escape detector sees each kind of plant when the link stays inside the root."""
    failures = []
    for n, (attr, canary) in enumerate(ESCAPES):
        d = os.path.join(work, "control%d" % n)
        root = os.path.join(d, "root")
        os.makedirs(d)
        shutil.copytree(base, root, symlinks=True)
        make_canaries(os.path.join(root, "sys", "canary"))
        relink(os.path.join(root, PF0, attr), "/sys/canary/" + canary)
        conf = write_config(d)
        verdict, out, _ = run(sriovd, root, conf, d, "dry-run")
        if verdict != "escape":
            failures.append("control %s: the canary does not show when read (%s)\n%s"
                            % (attr, verdict, out[-2000:]))
        shutil.rmtree(d, ignore_errors=True)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sriovd")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SRIOVD_HOSTILE_SEED", "13")))
    ap.add_argument("--trees", type=int, default=int(os.environ.get("SRIOVD_HOSTILE_TREES", "150")))
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--keep", help="copy trees that failed here")
    args = ap.parse_args()

    mkhost = os.environ.get("SRIOVD_MKHOST")
    if not mkhost or not os.path.exists(mkhost):
        skip("SRIOVD_MKHOST (tests/fixtures/mkhost.py) not given")
    if not hasattr(os, "mkfifo"):
        skip("no mkfifo")
    if not os.access(args.sriovd, os.X_OK):
        print("FAIL: %s is not executable" % args.sriovd)
        return 1
    with open(args.sriovd, "rb") as f:
        asan = b"__asan_init" in f.read()

    t0 = time.monotonic()
    tmpbase = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="sriovd-hostile-", dir=tmpbase) as work:
        base = os.path.join(work, "base")
        subprocess.run([sys.executable, mkhost, "two-socket", base, "--threaded-napi"], check=True)
        make_canaries(os.path.join(work, "outside"))

        failures = controls(args.sriovd, base, work)
        counts = dict(crash=0, hang=0, leak=0, escape=0)
        runs = 0
        slowest = 0.0
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futs = [pool.submit(one_tree, args.sriovd, base, work, args.seed, i)
                    for i in range(args.trees)]
            for fut in concurrent.futures.as_completed(futs):
                i, what, results, d = fut.result()
                for mode, verdict, out, secs in results:
                    runs += 1
                    slowest = max(slowest, secs)
                    if verdict == "ok":
                        continue
                    counts[verdict] += 1
                    failures.append("tree %d (seed %d) %s: %s after %.1fs; mutations: %s\n%s"
                                    % (i, args.seed, mode, verdict.upper(), secs, "; ".join(what),
                                       out[-3000:]))
                    if args.keep:
                        shutil.copytree(d, os.path.join(args.keep, os.path.basename(d)),
                                        symlinks=True, dirs_exist_ok=True)

    for f in sorted(failures):
        print("FAIL: " + f)
    print("hostile trees: seed %d, sriovd %s%s" % (args.seed, args.sriovd,
                                                  " (ASan)" if asan else " (no sanitizers)"))
    print("trees %d, runs %d, crashes %d, hangs %d, leaks %d, escapes %d, controls %d/%d, "
          "slowest run %.1fs, runtime %.0fs"
          % (args.trees, runs, counts["crash"], counts["hang"], counts["leak"], counts["escape"],
             len(ESCAPES) - sum(f.startswith("control") for f in failures), len(ESCAPES),
             slowest, time.monotonic() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
