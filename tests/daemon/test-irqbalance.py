#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-irqbalance.py — Debian's irqbalance beside the real sriovd, with and without the policy script
"""irqbalance beside sriovd, on one fixture tree.

    test-irqbalance.py SRIOVD POLICY-SCRIPT

The tree is mkhost's two-socket host with --other-nic: 82 ConnectX IRQs that sriovd owns, and
an I350 port, the timer and ACPI that it only keeps off the RT CPUs (isolated and nohz_full
2-7,18-23). sriovd starts first and places its IRQs. Then Debian's irqbalance runs over the same
tree (see tests/lib/irqbalance.py) with --interval=1. After some intervals the test sends it
SIGHUP, which makes it rescan: it asks the policy script again about every IRQ and places every
IRQ that it balances anew. Two runs:

  - with --policyscript: irqbalance asks the script about every IRQ at its start and at the
    rescan, bans sriovd's, never writes their affinity, and still moves the others. sriovd
    repairs no drift. No IRQ lands on a CPU that irqbalance bans by itself.
  - without it, the control: irqbalance moves sriovd's IRQs, and sriovd repairs them.
  - irqbalance started first: it balances sriovd's IRQs until its rescan, which bans them.
  - a VF's IRQs added later: the four vectors of 0000:41:00.3 are out of the tree while sriovd
    starts, and sriovd has no drift check. They are put back while both run. irqbalance finds
    them at its next scan, while owned-irqs does not list them yet, and the script bans them
    because owned-devices lists the VF's PF. irqbalance never writes them. sriovd's next
    cycle, at a SIGHUP, lists and places them.

Skips (77) without irqbalance, root or unshare(1).
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import irqbalance  # noqa: E402
import sdnotify  # noqa: E402

SRIOVD, POLICY = sys.argv[1], sys.argv[2]
NCPUS = 32
INTERVALS = 5           # irqbalance intervals before the rescan, and again after it
DRIFT_SEC = 1
CONF = f"[daemon]\ndrift_check_sec = {DRIFT_SEC}\n"
CONF_NO_DRIFT_CHECK = "[daemon]\ndrift_check_sec = 0\n"
LATE_VF = "0000:41:00.3"   # a VF of the PF 0000:41:00.0, with IRQs 57-60
SEPARATOR = "-" * 77    # irqbalance --debug prints it at the start of each interval

WRAPPER = """#!/bin/sh
# Logs each question irqbalance asks, the answer, and whether owned-irqs listed the IRQ then.
# Then it answers as the real script did. irqbalance runs under stdbuf, whose LD_PRELOAD the
# script must not inherit: an ASan build refuses to start after another preloaded library.
unset LD_PRELOAD
out=$({policy} "$@" 2>> {log}.stderr)
rc=$?
listed=no
grep -qx "$2" {owned} 2>/dev/null && listed=yes
echo "$2 $1 rc=$rc ${{out:-none}} listed=$listed" >> {log}
[ -z "$out" ] || echo "$out"
exit $rc
"""


def skip(why):
    print(f"irqbalance: skipped: {why}")
    sys.exit(77)


def read_cpus(root, name):
    with open(os.path.join(root, "sys/devices/system/cpu", name)) as f:
        text = f.read().strip()
    return irqbalance.parse_list("" if text == "(null)" else text)


class Run:
    """sriovd on a fresh tree, then irqbalance over it; with_script says whether it gets the script."""

    def __init__(self, tmp, binary, with_script, irqbalance_first=False, late_vf=False):
        self.name = "with the policy script" if with_script else "without the policy script"
        if irqbalance_first:
            self.name += ", irqbalance started first"
        if late_vf:
            self.name += ", a VF's IRQs added later"
        self.dir = os.path.join(tmp, re.sub(r"[^a-z]+", "-", self.name))  # irqbalance runs the script through sh -c
        self.irqbalance_first = irqbalance_first
        os.mkdir(self.dir)
        self.root = os.path.join(self.dir, "root")
        subprocess.run([sys.executable, os.environ["SRIOVD_MKHOST"], "two-socket", self.root, "--other-nic"],
                       check=True, stdout=subprocess.DEVNULL)
        irqbalance.complete_tree(self.root, NCPUS)
        self.run_dir = os.path.join(self.dir, "run")
        os.mkdir(self.run_dir)
        self.conf = os.path.join(self.dir, "sriovd.conf")
        with open(self.conf, "w") as f:
            # Without a drift check, sriovd lists a late VF's IRQs only at the cycle the test asks for.
            f.write(CONF_NO_DRIFT_CHECK if late_vf else CONF)
        self.late = set()
        if late_vf:
            self.hide_vf()
        self.script_log = os.path.join(self.dir, "policy-calls")
        self.wrapper = os.path.join(self.dir, "policy-wrapper")
        with open(self.wrapper, "w") as f:
            f.write(WRAPPER.format(policy=irqbalance.quote(POLICY), log=irqbalance.quote(self.script_log),
                                   owned=irqbalance.quote(os.path.join(self.run_dir, "owned-irqs"))))
        os.chmod(self.wrapper, 0o755)
        self.binary = binary
        self.with_script = with_script
        self.sriovd = self.balancer = self.shim = None
        self.sriovd_log = open(os.path.join(self.dir, "sriovd.log"), "w+")

    def start(self):
        # The shim first: sriovd's own writes must reach smp_affinity, which irqbalance reads.
        self.shim = irqbalance.AffinityShim(self.root, NCPUS)
        if self.irqbalance_first:
            self.start_irqbalance()
            self.wait_intervals(2)
        env = dict(os.environ, RUNTIME_DIRECTORY=self.run_dir)
        self.sriovd = sdnotify.start([SRIOVD, "--root", self.root, "--config", self.conf],
                                     os.path.join(self.dir, "notify"), env=env,
                                     stdout=self.sriovd_log, stderr=self.sriovd_log)
        self.t_ready = time.monotonic()
        with open(os.path.join(self.run_dir, "owned-irqs")) as f:
            self.owned = {int(x) for x in f.read().split()}
        self.placed = self.shim.settle()
        self.others = set(self.placed) - self.owned
        with open(os.path.join(self.root, "proc/interrupts")) as f:
            self.i350 = {int(line.split(":")[0]) for line in f if "IR-PCI-MSIX-0000:03:00.0" in line}
        if not self.irqbalance_first:
            self.start_irqbalance()

    def start_irqbalance(self):
        args = ["--debug", "--interval=1"]
        if self.with_script:
            args.append(f"--policyscript={self.wrapper}")
        env = dict(os.environ, SRIOVD_OWNED_IRQS=os.path.join(self.run_dir, "owned-irqs"),
                   SRIOVD_OWNED_DEVICES=os.path.join(self.run_dir, "owned-devices"))
        self.balancer = irqbalance.Irqbalance(self.binary, self.root, os.path.join(self.dir, "irqbalance.log"),
                                              args, env)
        self.balancer.start()
        failed = self.balancer.wait_started()
        if failed:
            rc, log = failed
            if rc == irqbalance.UNSAFE:
                sys.exit(f"irqbalance: not started, its namespace failed the check:\n{log}")
            skip(f"irqbalance exited {rc} at start:\n{log}")

    def hide_vf(self):
        """Takes LATE_VF's vectors out of the tree, as before its driver requests them: the
        msi_irqs entries, /proc/irq/N, the irq/N- threads and the /proc/interrupts lines."""
        path = os.path.join(self.root, "proc/interrupts")
        with open(path) as f:
            self.interrupts = f.read()
        kept = []
        for line in self.interrupts.splitlines(keepends=True):
            if f"IR-PCI-MSIX-{LATE_VF} " in line:
                self.late.add(int(line.split(":")[0]))
            else:
                kept.append(line)
        assert len(self.late) == 4, f"{LATE_VF} has IRQs {sorted(self.late)} in the tree, not 4"
        with open(path, "w") as f:
            f.write("".join(kept))
        self.hidden = []
        for irq in self.late:
            self.hidden.append(f"proc/irq/{irq}")
            self.hidden.append(f"sys/bus/pci/devices/{LATE_VF}/msi_irqs/{irq}")
            for pid in os.listdir(os.path.join(self.root, "proc")):
                comm = os.path.join(self.root, "proc", pid, "comm")
                if pid.isdigit() and os.path.exists(comm):
                    with open(comm) as f:
                        if f.read().startswith(f"irq/{irq}-"):
                            self.hidden.append(f"proc/{pid}")
        os.mkdir(os.path.join(self.dir, "hidden"))
        for i, rel in enumerate(self.hidden):
            os.rename(os.path.join(self.root, rel), os.path.join(self.dir, "hidden", str(i)))

    def reveal_vf(self):
        """Puts LATE_VF's vectors back while sriovd and irqbalance run: sysfs and /proc/irq first,
        /proc/interrupts last. That file is irqbalance's through a bind mount, so it is rewritten
        in place, with one write of the longer text."""
        for i, rel in enumerate(self.hidden):
            os.rename(os.path.join(self.dir, "hidden", str(i)), os.path.join(self.root, rel))
        for irq in self.late:
            self.shim.watch(irq)
        fd = os.open(os.path.join(self.root, "proc/interrupts"), os.O_WRONLY)
        try:
            data = self.interrupts.encode()
            assert os.write(fd, data) == len(data)
        finally:
            os.close(fd)
        self.t_reveal = time.monotonic()

    def late_vf_cycle(self):
        """SIGHUP to sriovd: its reload's cycle lists and places the late VF's IRQs."""
        self.t_listed_asked = time.monotonic()
        self.sriovd.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while not self.late <= self.read_owned():
            assert time.monotonic() < deadline, f"sriovd did not list IRQs {sorted(self.late)}:\n{self.sriovd_text()}"
            time.sleep(0.1)

    def read_owned(self):
        with open(os.path.join(self.run_dir, "owned-irqs")) as f:
            return {int(x) for x in f.read().split()}

    def intervals(self):
        return self.balancer.text().count(SEPARATOR)

    def wait_intervals(self, n, timeout=30.0):
        deadline = time.monotonic() + timeout
        while self.intervals() < n:
            assert self.balancer.proc.poll() is None, f"irqbalance exited:\n{self.balancer.text()[-3000:]}"
            assert not self.sriovd or self.sriovd.poll() is None, f"sriovd exited:\n{self.sriovd_text()}"
            assert time.monotonic() < deadline, f"irqbalance ran {self.intervals()} of {n} intervals in {timeout:.0f} s"
            time.sleep(0.1)

    def exercise(self):
        """INTERVALS intervals, SIGHUP, the rescan, INTERVALS more, then one drift period for sriovd."""
        self.wait_intervals(INTERVALS)
        self.before_rescan = self.balancer.text()
        self.t_rescan = time.monotonic()
        self.balancer.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "Rescanning cpu topology" not in self.balancer.text():
            assert time.monotonic() < deadline, "irqbalance did not rescan after SIGHUP"
            time.sleep(0.1)
        self.wait_intervals(self.intervals() + INTERVALS)
        time.sleep(DRIFT_SEC + 1.0)
        self.n_intervals = self.intervals()

    def exercise_late_vf(self):
        """Two intervals; the late VF's IRQs appear; irqbalance asks about them at its next scan;
        INTERVALS intervals; sriovd's cycle lists them; a rescan; INTERVALS intervals."""
        self.wait_intervals(2)
        self.reveal_vf()
        deadline = time.monotonic() + 10
        while not self.late <= {a[0] for a in self.script_asks()}:
            assert self.balancer.proc.poll() is None, f"irqbalance exited:\n{self.balancer.text()[-3000:]}"
            assert time.monotonic() < deadline, \
                f"irqbalance did not ask about the new IRQs {sorted(self.late)}:\n{self.balancer.text()[-3000:]}"
            time.sleep(0.1)
        self.wait_intervals(self.intervals() + INTERVALS)
        self.before_listed = self.balancer.text()
        self.late_vf_cycle()
        self.t_rescan = time.monotonic()
        self.balancer.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while self.balancer.text().count("Rescanning cpu topology") < 1:
            assert time.monotonic() < deadline, "irqbalance did not rescan after SIGHUP"
            time.sleep(0.1)
        self.wait_intervals(self.intervals() + INTERVALS)
        self.n_intervals = self.intervals()

    def sriovd_text(self):
        self.sriovd_log.flush()
        self.sriovd_log.seek(0)
        return self.sriovd_log.read()

    def moves(self, since=None):
        """irqbalance's writes that changed an IRQ's affinity: (irq, cpus)."""
        return [(irq, cpus) for _, irq, _, cpus in self.shim.changes_since(since or self.t_ready, "smp_affinity")]

    def repairs(self):
        return sorted({int(m) for m in re.findall(r"Drift repaired: irq-affinity \S* ?IRQ (\d+):", self.sriovd_text())})

    def balanced(self, text=None):
        """The IRQs in irqbalance's last tree dump: those it balances, not those it bans."""
        text = text or self.balancer.text()
        last = text[text.rfind(SEPARATOR):]
        return {int(m) for m in re.findall(r"Interrupt (\d+) node_num", last)}

    def script_calls(self):
        """irqbalance's questions to the script: {irq: [answer, ...]}."""
        calls = {}
        for irq, _path, rc, answer, _listed in self.script_asks():
            calls.setdefault(irq, []).append((rc, answer))
        return calls

    def script_stderr(self):
        """What the script said on stderr, for a failure's message."""
        try:
            with open(self.script_log + ".stderr") as f:
                return f.read()[-2000:]
        except FileNotFoundError:
            return ""

    def script_asks(self):
        """Every question in order: (irq, DEVPATH, "rc=N", answer, whether owned-irqs listed the IRQ)."""
        asks = []
        if os.path.exists(self.script_log):
            with open(self.script_log) as f:
                for line in f:
                    irq, path, rc, answer, listed = line.split()
                    asks.append((int(irq), path, rc, answer, listed == "listed=yes"))
        return asks

    def stop(self):
        if self.balancer:
            self.balancer.stop()
        if self.sriovd and self.sriovd.poll() is None:
            self.sriovd.send_signal(signal.SIGTERM)
            try:
                self.sriovd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.sriovd.kill()
                self.sriovd.wait()
        if self.shim:
            self.shim.close()
            self.shim = None


def banned_cpus(run):
    """The CPUs irqbalance reports it bans: "Banned CPUs: MASK" at its start."""
    m = re.search(r"^Banned CPUs: ([0-9a-f,]+)$", run.balancer.text(), re.M)
    assert m, "irqbalance did not report its banned CPUs"
    return irqbalance.parse_mask(m.group(1))


def check_with_script(run, rt):
    owned, others = run.owned, run.others
    calls = run.script_calls()
    # (a) The script was asked about every IRQ of the tree's devices, twice (start and rescan),
    # and it answered ban=true for sriovd's IRQs alone; irqbalance took the answer.
    asked = set(calls)
    assert owned <= asked, f"the script was never asked about IRQs {sorted(owned - asked)}"
    for irq in owned:
        answers = calls[irq]
        assert len(answers) >= 2 and all(a == ("rc=0", "ban=true") for a in answers), \
            (irq, answers, run.script_stderr())
    for irq in asked - owned:
        assert all(a == ("rc=0", "none") for a in calls[irq]), (irq, calls[irq])
    text = run.balancer.text()
    overrides = {int(m) for m in re.findall(r"IRQ (\d+): Override ban to true", text)}
    assert overrides == owned, f"irqbalance banned {sorted(overrides ^ owned)} differently from the list"
    balanced = run.balanced()
    assert not balanced & owned, f"irqbalance balances sriovd's IRQs {sorted(balanced & owned)}"
    # (b) None of sriovd's IRQs was written by irqbalance or moved from where sriovd put it, and
    # sriovd repaired no drift.
    moves = run.moves()
    hit = sorted({irq for irq, _ in moves if irq in owned})
    assert not hit, f"irqbalance moved sriovd's IRQs {hit}"
    changed = sorted(irq for irq in owned if run.shim.affinity(irq) != run.placed[irq])
    assert not changed, f"sriovd's IRQs {changed} are not where sriovd put them"
    assert not run.repairs(), f"sriovd repaired drift on IRQs {run.repairs()}:\n{run.sriovd_text()}"
    # (c) irqbalance is alive and balances the rest: it moved IRQs that sriovd does not own.
    moved_others = sorted({irq for irq, _ in moves if irq in others})
    assert moved_others, f"irqbalance moved none of the IRQs that sriovd leaves to it: {sorted(others)}"
    assert len(run.i350) == 9 and run.i350 <= balanced, f"irqbalance balances {sorted(balanced)}, not the I350's {sorted(run.i350)}"
    # (d) irqbalance put nothing on the RT CPUs, and sriovd's plan agrees with where things are.
    on_rt = sorted(irq for irq, cpus in moves if cpus & rt)
    assert not on_rt, f"irqbalance put IRQs {on_rt} on the RT CPUs {irqbalance.format_list(rt)}"
    return moved_others


def check_control(run):
    moves = run.moves()
    hit = sorted({irq for irq, _ in moves if irq in run.owned})
    assert hit, "without the script irqbalance moved none of sriovd's IRQs: the control proves nothing"
    repaired = run.repairs()
    assert set(hit) <= set(repaired), f"sriovd did not repair IRQs {sorted(set(hit) - set(repaired))}"
    back = sorted(irq for irq in run.owned if run.shim.affinity(irq) != run.placed[irq])
    assert not back, f"sriovd's IRQs {back} were not put back"
    assert not run.script_calls(), "the control ran the policy script"
    again = sorted({irq for irq, _ in run.moves(run.t_rescan) if irq in run.owned})
    assert again, "after its rescan irqbalance left sriovd's repaired IRQs alone: the fight is not shown"
    return hit, again, repaired


def check_irqbalance_first(run):
    """irqbalance asked the script before sriovd had published anything: it balances sriovd's
    IRQs until its next rescan, which bans them."""
    calls = run.script_calls()
    early = sorted(irq for irq in run.owned if calls.get(irq, [("", "")])[0] != ("rc=0", "none"))
    assert not early, f"before sriovd ran, the script did not answer 'none' for IRQs {early}"
    before = run.balanced(run.before_rescan)
    assert run.owned <= before, f"before the rescan irqbalance bans {sorted(run.owned - before)} already"
    after = run.balanced()
    assert not after & run.owned, f"after the rescan irqbalance still balances {sorted(after & run.owned)}"
    late = sorted(irq for irq in run.owned if calls[irq][-1] != ("rc=0", "ban=true"))
    assert not late, f"at the rescan the script did not ban IRQs {late}"
    back = sorted(irq for irq in run.owned if run.shim.affinity(irq) != run.placed[irq])
    assert not back, f"sriovd's IRQs {back} are not where sriovd put them"
    return len(before & run.owned)


def check_late_vf(run):
    """A VF's IRQs appeared while both ran, before sriovd's next cycle listed them: irqbalance
    asked the script, which banned them by their device, and never wrote them."""
    late = run.late
    assert not late & run.owned, f"sriovd listed IRQs {sorted(late & run.owned)} before they were in the tree"
    asks = [a for a in run.script_asks() if a[0] in late]
    first = {}
    for irq, path, rc, answer, listed in asks:
        first.setdefault(irq, (path, rc, answer, listed))
    # The fault took effect: irqbalance asked about each one while owned-irqs did not list it.
    unlisted = sorted(irq for irq, (_, _, _, listed) in first.items() if not listed)
    assert unlisted == sorted(late), f"owned-irqs listed IRQs {sorted(late - set(unlisted))} when first asked about"
    for irq, (path, rc, answer, _) in sorted(first.items()):
        assert path.endswith("/" + LATE_VF), f"irqbalance asked about IRQ {irq} for {path}, not {LATE_VF}"
        assert (rc, answer) == ("rc=0", "ban=true"), f"the script answered {rc} {answer} for IRQ {irq} of {path}"
    bad = [a for a in asks if a[2:4] != ("rc=0", "ban=true")]
    assert not bad, f"the script did not ban the late IRQs every time: {bad}"
    overrides = {int(m) for m in re.findall(r"IRQ (\d+): Override ban to true", run.before_listed)}
    assert late <= overrides, f"irqbalance did not ban IRQs {sorted(late - overrides)}"
    for text in (run.before_listed, run.balancer.text()):
        assert not run.balanced(text) & late, f"irqbalance balances IRQs {sorted(run.balanced(text) & late)}"
    moved = sorted({irq for irq, _ in run.moves(run.t_reveal) if irq in late})
    assert not moved, f"irqbalance moved the late IRQs {moved}"
    # sriovd's cycle then placed them, and nothing moved them since.
    placed = {irq: cpus for _, irq, _, cpus in run.shim.changes_since(run.t_listed_asked, "smp_affinity_list")
              if irq in late}
    assert set(placed) == late, f"sriovd did not place IRQs {sorted(late - set(placed))}:\n{run.sriovd_text()}"
    off = sorted(irq for irq in late if run.shim.affinity(irq) != placed[irq])
    assert not off, f"the late IRQs {off} are not where sriovd put them"
    assert not run.repairs(), f"sriovd repaired drift on IRQs {run.repairs()}"
    return len(first), sum(1 for a in asks if a[4])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary = irqbalance.find()
    why = irqbalance.unavailable(binary)
    if why:
        skip(why)

    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="sriovd-test-irqbalance-", dir=base) as tmp:
        runs = []
        try:
            script = Run(tmp, binary, True)
            runs.append(script)
            script.start()
            rt = read_cpus(script.root, "isolated") | read_cpus(script.root, "nohz_full")
            script.exercise()
            assert banned_cpus(script) == rt, \
                f"irqbalance bans {irqbalance.format_list(banned_cpus(script))}, the tree isolates {irqbalance.format_list(rt)}"
            moved_others = check_with_script(script, rt)
            script.stop()

            control = Run(tmp, binary, False)
            runs.append(control)
            control.start()
            control.exercise()
            hit, again, repaired = check_control(control)
            control.stop()

            first = Run(tmp, binary, True, irqbalance_first=True)
            runs.append(first)
            first.start()
            first.exercise()
            n_first = check_irqbalance_first(first)
            first.stop()

            late = Run(tmp, binary, True, late_vf=True)
            runs.append(late)
            late.start()
            late.exercise_late_vf()
            n_late, n_late_listed = check_late_vf(late)
            late.stop()
            questions = sum(len(v) for k, v in script.script_calls().items() if k in script.owned)
        except BaseException:
            for r in runs:
                r.stop()
                print(f"--- {r.name}: sriovd\n{r.sriovd_text()[-4000:]}")
                if r.balancer:
                    print(f"--- {r.name}: irqbalance\n{r.balancer.text()[-4000:]}")
            raise

    print(f"irqbalance: {binary}; tree two-socket --other-nic, {len(script.placed)} IRQs with writable affinity; "
          f"RT CPUs (isolated, nohz_full) {irqbalance.format_list(rt)}, which irqbalance bans by itself")
    print(f"with the policy script: sriovd owns {len(script.owned)} IRQs, all banned after "
          f"{questions} questions; "
          f"over {script.n_intervals} intervals and a rescan irqbalance moved 0 of them and "
          f"{len(moved_others)} of the {len(script.others)} others ({irqbalance.format_list(moved_others)}); "
          "sriovd repaired no drift")
    print(f"without it: over {control.n_intervals} intervals and a rescan irqbalance moved {len(hit)} of sriovd's "
          f"{len(control.owned)} IRQs, {len(again)} of them again after the rescan; sriovd repaired {len(repaired)}, "
          "and all are back where it put them")
    print(f"irqbalance started before sriovd: it balanced all {n_first} of sriovd's IRQs until its rescan, "
          "which banned them all (hence Before=irqbalance.service in sriovd.service)")
    print(f"a VF's IRQs appeared after both started: irqbalance asked about {n_late} of them before owned-irqs "
          f"listed them, and the script banned them by the VF's PF; after sriovd's next cycle it asked "
          f"{n_late_listed} more times; irqbalance never moved them, and they stay where sriovd put them")


if __name__ == "__main__":
    main()
