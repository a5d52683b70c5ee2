# SPDX-License-Identifier: LGPL-2.1-or-later
# config.py — the options: [placement] as nova-compute reads them, [sriovd] the connector's own.
import re
import socket

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

PLACEMENT = "placement"
SRIOVD = "sriovd"
# Seconds a Placement request may take.
DEFAULT_TIMEOUT = 30

sriovd_opts = [
    cfg.StrOpt("compute_node", default=socket.gethostname(), sample_default="<host name>",
               help="The name of nova's compute-node provider, which is the host's name in nova."),
    cfg.StrOpt("compute_node_uuid",
               help="The compute node provider's UUID; by default it is looked up by compute_node."),
    cfg.FloatOpt("poll_interval", default=2.0, min=0.1,
                 help="Seconds between two reads of the provider tree, which show new and deleted "
                      "allocations."),
    cfg.StrOpt("bus_address",
               help="The D-Bus address where sriovd is; by default the system bus."),
    cfg.StrOpt("log_level", default="info", choices=["debug", "info", "warning", "error"],
               help="The least severe message that is logged."),
]


def register(conf):
    conf.register_opts(sriovd_opts, group=SRIOVD)
    # The same options, with the same names and defaults, as nova-compute's [placement].
    ks_loading.register_session_conf_options(conf, PLACEMENT)
    ks_loading.register_auth_conf_options(conf, PLACEMENT)
    ks_loading.register_adapter_conf_options(conf, PLACEMENT, include_deprecated=False)
    conf.set_default("service_type", "placement", group=PLACEMENT)
    conf.set_default("valid_interfaces", ["internal", "public"], group=PLACEMENT)
    # keystoneauth1 waits forever by default, and a Placement that never answers would stall
    # every pass: a timeout lets the connector back off and try again.
    conf.set_default("timeout", DEFAULT_TIMEOUT, group=PLACEMENT)


def check(conf):
    """Reads every option once, so that a bad value stops the start: cfg.Error names the file, the
    option and the reason. oslo.config converts a value only when it is first read. Without this, a
    bad value would be found in the main loop, as a traceback and exit status 1, and systemd would
    restart the connector into the same mistake forever."""
    for group in (SRIOVD, PLACEMENT):
        for name in conf[group]:
            try:
                getattr(conf[group], name)
            except cfg.ConfigFileValueError as e:
                where = re.search(r"detail='([^']*)'", str(e))
                raise cfg.Error(f"{where[1] + ': ' if where else ''}[{group}] {describe(e)}") from None


def describe(e):
    """An oslo.config error in one line, without the Python repr of the value's origin."""
    if isinstance(e, cfg.ConfigSourceValueError):
        m = re.match(r"Value for option (\S+) from .* is not valid: (.*)$", str(e), re.S)
        if m:
            return f"{m.group(1)} is not valid: {m.group(2)}"
    return str(e)


def adapter(conf):
    """A keystoneauth1 adapter for Placement from [placement]: auth, TLS, endpoint, timeouts."""
    auth = ks_loading.load_auth_from_conf_options(conf, PLACEMENT)
    if auth is None and not conf[PLACEMENT].endpoint_override:
        # Without a plugin nothing names Placement's URL: every request would fail the same way.
        raise cfg.Error("it sets neither auth_type nor endpoint_override, so nothing says where "
                        "Placement is")
    session = ks_loading.load_session_from_conf_options(conf, PLACEMENT, auth=auth)
    return ks_loading.load_adapter_from_conf_options(conf, PLACEMENT, session=session, auth=auth)


def list_opts():
    """For oslo-config-generator: every option of the configuration file."""
    session = ks_loading.get_session_conf_options()
    for opt in session:
        if opt.dest == "timeout":
            opt.default = DEFAULT_TIMEOUT
    return [(SRIOVD, sriovd_opts),
            (PLACEMENT, session + ks_loading.get_auth_common_conf_options()
             + ks_loading.get_adapter_conf_options(include_deprecated=False))]
