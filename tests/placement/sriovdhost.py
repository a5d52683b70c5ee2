# SPDX-License-Identifier: LGPL-2.1-or-later
# sriovdhost.py — the real sriovd on a two-socket fixture host with its own private bus, as the
# connector's tests run it: PFs 0000:41:00.0 (node 0) and 0000:c1:00.0 (node 1), the shipped
# tenant classes, and a bus policy that lets any user own sriovd's name.
import os
import shutil
import subprocess
import sys

import minibus
import sdnotify
from sriovd_placement import sriovd

POLICY = """<busconfig>
 <policy context="default">
  <allow own="org.sriovd.Manager1"/>
  <allow send_destination="org.sriovd.Manager1"/>
 </policy>
</busconfig>
"""


class Host:
    def __init__(self, tmp, source, binary, policy_text=POLICY):
        self.tmp, self.binary = tmp, binary
        policy = os.path.join(tmp, "policy.conf")
        with open(policy, "w") as f:
            f.write(policy_text)
        self.bus = minibus.PrivateBus(tmp, policy)
        self.proc = None
        self.root = os.path.join(tmp, "root")
        subprocess.run([sys.executable, os.path.join(source, "tests", "fixtures", "mkhost.py"), "two-socket",
                        self.root], check=True, stdout=subprocess.DEVNULL)
        self.classes = os.path.join(tmp, "tenant-classes.d")
        shutil.copytree(os.path.join(source, "conf", "tenant-classes.d"), self.classes)
        os.makedirs(os.path.join(tmp, "state"))
        os.makedirs(os.path.join(tmp, "run"))
        self.conf = os.path.join(tmp, "sriovd.conf")
        with open(self.conf, "w") as f:
            f.write(f"[daemon]\nstate_dir = {tmp}/state\ndrift_check_sec = 0\nvf_headroom = 0\n"
                    f"max_tenants = 64\nmonitor_interval_sec = 0\n")
        self.start_sriovd()
        self.conn = sriovd.connect(self.bus.address)
        self.client = sriovd.Sriovd(self.conn, lambda *args, **kwargs: None)

    def start_sriovd(self):
        """Starts sriovd and returns once it told systemd's notify socket that it is ready."""
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address, RUNTIME_DIRECTORY=os.path.join(self.tmp, "run"))
        with open(os.path.join(self.tmp, "sriovd.log"), "a") as log:
            self.proc = sdnotify.start([self.binary, "--root", self.root, "--config", self.conf],
                                       os.path.join(self.tmp, "notify"), env, stdout=log, stderr=log)

    def kill_sriovd(self):
        self.proc.kill()
        self.proc.wait()

    def reload(self):
        self.conn.call_sync(sriovd.NAME, sriovd.PATH, sriovd.MANAGER, "Reload", None, None,
                            sriovd.Gio.DBusCallFlags.NONE, 60000, None)

    def tenants(self):
        return self.client.snapshot()[1]

    def pfs(self):
        return self.client.snapshot()[0]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.kill_sriovd()
        self.bus.stop()
