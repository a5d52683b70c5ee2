#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-config.py — sriovd-placement's configuration: the defaults it sets on keystoneauth1's
# [placement] options, a configuration file that overrides them, and the mistakes found at
# start. No Placement and no bus.
#
#   test-config.py SOURCE_DIR
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv[1]), "src", "placement"))
try:
    from keystoneauth1 import loading as ks_loading
    from oslo_config import cfg
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)
from sriovd_placement import config  # noqa: E402


def load(text):
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(text)
        f.flush()
        conf = cfg.ConfigOpts()
        config.register(conf)
        conf(["--config-file", f.name], project="sriovd", default_config_files=[])
        return conf


def test_timeout():
    # keystoneauth1's own default is no timeout: a Placement that never answers would block forever.
    conf = load("[placement]\nendpoint_override = http://127.0.0.1:1\n")
    assert conf.placement.timeout == 30, conf.placement.timeout
    assert ks_loading.load_session_from_conf_options(conf, config.PLACEMENT).timeout == 30
    conf = load("[placement]\ntimeout = 7\n")
    assert conf.placement.timeout == 7, conf.placement.timeout
    assert ks_loading.load_session_from_conf_options(conf, config.PLACEMENT).timeout == 7
    # The sample configuration says the same default.
    opts = dict(config.list_opts())[config.PLACEMENT]
    assert [o.default for o in opts if o.dest == "timeout"] == [30], opts


def test_bad_values():
    # oslo.config converts a value when it is read. A bad one must stop the start with exit 2 (the
    # unit's RestartPreventExitStatus=) and name the file and the option, never fail later.
    import contextlib
    import io
    from sriovd_placement import main
    for text, what in (("[sriovd]\npoll_interval = soon\n", "[sriovd] poll_interval is not valid: could not convert"),
                       ("[sriovd]\npoll_interval = 0.01\n", "[sriovd] poll_interval is not valid: Should be greater"),
                       ("[sriovd]\nlog_level = loud\n", "[sriovd] log_level is not valid: Valid values are"),
                       ("[placement]\ntimeout = soon\n", "[placement] timeout is not valid: invalid literal")):
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write(text)
            f.flush()
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = main.main(["--config-file", f.name])
            assert rc == main.EXIT_CONFIG, (text, rc, err.getvalue())
            assert f"sriovd-placement: {f.name}: {what}" in err.getvalue(), (text, err.getvalue())


def test_no_placement():
    # Without auth_type and endpoint_override nothing says where Placement is: a configuration
    # error, not a Placement that is down.
    try:
        config.adapter(load("[sriovd]\ncompute_node = x\n"))
    except cfg.Error as e:
        assert "neither auth_type nor endpoint_override" in str(e), str(e)
    else:
        raise AssertionError("an empty [placement] gave an adapter")
    assert config.adapter(load("[placement]\nendpoint_override = http://127.0.0.1:1\n")) is not None


for t in (test_timeout, test_bad_values, test_no_placement):
    t()
    print("ok:", t.__name__)
