# SPDX-License-Identifier: LGPL-2.1-or-later
# main.py — sriovd-placement's command line, logging, and main loop.
import logging
import os
import signal
import sys

from oslo_config import cfg

from . import config

# Exit statuses (sriovd-placement(8)): 0 stopped by a signal, 1 the bus went away or a runtime
# failure, 2 a bad configuration or command line.
EXIT_FAILURE, EXIT_CONFIG = 1, 2

_SD_PREFIX = {logging.DEBUG: "<7>", logging.INFO: "<6>", logging.WARNING: "<4>", logging.ERROR: "<3>",
              logging.CRITICAL: "<2>"}


class _JournalFormatter(logging.Formatter):
    """Under journald, the syslog level as a <N> prefix, which journald reads from stderr."""

    def format(self, record):
        return _SD_PREFIX.get(record.levelno, "<6>") + super().format(record)


def _logging(level):
    h = logging.StreamHandler(sys.stderr)
    if os.environ.get("JOURNAL_STREAM"):
        h.setFormatter(_JournalFormatter("%(message)s"))
    else:
        h.setFormatter(logging.Formatter("sriovd-placement: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(level.upper())
    # keystoneauth1 logs every request at debug; ours is the one line per event.
    for name in ("keystoneauth", "urllib3"):
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))


def main(argv=None):
    conf = cfg.ConfigOpts()
    config.register(conf)
    try:
        conf(argv if argv is not None else sys.argv[1:], project="sriovd", prog="sriovd-placement",
             default_config_files=[])
        config.check(conf)
    except (cfg.Error, OSError) as e:
        print(f"sriovd-placement: {config.describe(e)}", file=sys.stderr)
        return EXIT_CONFIG
    _logging(conf.sriovd.log_level)
    log = logging.getLogger("sriovd-placement")

    # Imported here so that --help works without GLib and keystoneauth1's plugins.
    from gi.repository import GLib
    from keystoneauth1 import exceptions as ks_exc
    from . import connector, placement, sriovd

    try:
        adapter = config.adapter(conf)
    except (ks_exc.ClientException, cfg.Error) as e:
        log.error("[placement] is not usable: %s", config.describe(e))
        return EXIT_CONFIG
    try:
        bus = sriovd.connect(conf.sriovd.bus_address)
    except GLib.Error as e:
        log.error("cannot connect to the bus %s: %s", conf.sriovd.bus_address or "(system)", e.message)
        return EXIT_FAILURE

    loop = GLib.MainLoop()
    status = [0]

    def closed(conn, remote_peer_vanished, error):
        log.error("the bus connection closed%s; exiting so that systemd restarts us",
                  f": {error.message}" if error else "")
        status[0] = EXIT_FAILURE
        loop.quit()

    def stop(signame):
        log.info("%s: stopping", signame)
        loop.quit()
        return GLib.SOURCE_REMOVE

    bus.set_exit_on_close(False)
    bus.connect("closed", closed)
    for signum, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, signum, stop, name)
    def fatal():
        status[0] = EXIT_FAILURE
        loop.quit()

    c = connector.Connector(conf.sriovd, placement.Placement(adapter), bus, fatal)
    log.info("started: compute node %s, polling Placement every %g s",
             conf.sriovd.compute_node_uuid or conf.sriovd.compute_node, conf.sriovd.poll_interval)
    c.schedule(0)
    loop.run()
    return status[0]
