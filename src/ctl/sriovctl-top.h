/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top.h — `sriovctl top`, the live view of the daemon's last sampling period */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct TopOptions {
        bool once;              /* draw one frame without escape codes, then exit */
        bool json;              /* with once, print the frame as one JSON document */
        double interval_sec;    /* 0 means the daemon's period, as GetMetrics reports it */
} TopOptions;

/*
 * Runs the view until q, SIGINT, SIGTERM or SIGHUP. Whatever the outcome, the terminal is back as
 * it was before this returns. Returns the exit status, which is 0 on q or after --once and
 * 128 + the signal's number after a signal. Returns a negative errno with *error set when sriovd
 * refused a call, e.g. with org.sriovd.Error.NotMonitoring. The caller then says why, and the
 * terminal is already restored.
 */
int top_run(sd_bus *bus, const TopOptions *o, sd_bus_error *error);
