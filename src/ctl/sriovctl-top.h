/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top.h — `sriovctl top`: the live view of the daemon's last sampling period */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct TopOptions {
        bool once;              /* one frame, no escape codes, then exit */
        bool json;              /* with once: the frame as one JSON document */
        double interval_sec;    /* 0: the daemon's period, as GetMetrics reports it */
} TopOptions;

/*
 * Run the view until q, SIGINT, SIGTERM or SIGHUP; the terminal is back as it was before this
 * returns, whatever the outcome. Returns the exit status (0 on q or after --once, 128 + the
 * signal's number), or negative errno with *error set when sriovd refused a call (e.g.
 * org.sriovd.Error.NotMonitoring): the caller says why, the terminal is already restored.
 */
int top_run(sd_bus *bus, const TopOptions *o, sd_bus_error *error);
