/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-timer.h — the sampler on the daemon's loop: its timer, the last period and the Prometheus file */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "sriovd/core/inventory.h"
#include "sriovd/core/metrics.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/macro.h"
#include "config/config.h"
#include "tenants/tenants.h"
#include "kernel-events.h"

/*
 * What a period reads from its owner. The getters return what the owner has now, and may
 * return NULL. sampled runs right after a period's values are taken, before the file is
 * written; it may add samples to the snapshot. Every hook may be NULL.
 */
typedef struct MetricsTimerHooks {
        const Config *(*config)(void *userdata);
        const Inventory *(*inventory)(void *userdata);
        const Tenants *(*tenants)(void *userdata);
        void (*sampled)(MetricSnapshot *snap, void *userdata);
        void *userdata;
} MetricsTimerHooks;

typedef struct MetricsTimer MetricsTimer;

/*
 * The sampler reads the host under root. route reads the traffic counters, and is NULL where
 * rtnetlink does not see the root's netdevs, as on a fixture tree. kernel_events gives the
 * latency threads. Both stay the caller's and must outlive the timer. Nothing is read until
 * the first sample. Returns -ENOMEM only. The caller frees *ret with metrics_timer_free().
 */
int metrics_timer_new(RootFs *root, RouteNl *route, KernelEvents *kernel_events, const MetricsTimerHooks *hooks,
                      MetricsTimer **ret);
MetricsTimer *metrics_timer_free(MetricsTimer *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(MetricsTimer *, metrics_timer_free);

/*
 * Start the timer on event with a period of interval_sec, or change its period. The first
 * start takes a baseline sample. An interval of 0 stops the timer and forgets the sampler and
 * its last period, so there are no wakeups and no stale values.
 */
int metrics_timer_arm(MetricsTimer *t, sd_event *event, unsigned interval_sec);
/*
 * Take one period's sample now, then write the metrics file. Returns -ENODATA when the config
 * turns the sampler off, and the sampler's negative errno when the sample fails.
 */
int metrics_timer_sample_now(MetricsTimer *t);
/* The last period's values, or NULL before the first. They stay the timer's. */
const MetricSnapshot *metrics_timer_last(const MetricsTimer *t);
