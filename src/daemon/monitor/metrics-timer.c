/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-timer.c — the sampler on the daemon's loop: its timer, the last period and the Prometheus file */

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sriovd/kernel/netdev-stats.h"
#include "sriovd/shared/util.h"
#include "base/log.h"
#include "monitor/metrics-file.h"
#include "monitor/sampler.h"
#include "metrics-timer.h"

struct MetricsTimer {
        MetricsTimerHooks hooks;
        RootFs *root;
        RouteNl *route;
        KernelEvents *kernel_events;
        Sampler *sampler;
        sd_event_source *timer;
        unsigned interval_sec;            /* the timer's interval, or 0 when the sampler is off */
        MetricSnapshot last;
        bool have_last;
        bool file_failing;                /* a failure is logged once, until a write works again */
};

int metrics_timer_new(RootFs *root, RouteNl *route, KernelEvents *kernel_events, const MetricsTimerHooks *hooks,
                      MetricsTimer **ret) {
        MetricsTimer *t;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = (MetricsTimer) {
                .hooks = *hooks,
                .root = root,
                .route = route,
                .kernel_events = kernel_events,
        };
        *ret = t;
        return 0;
}

/* Stop the timer and forget the sampler and its last period. */
static void metrics_timer_stop(MetricsTimer *t) {
        t->timer = sd_event_source_disable_unref(t->timer);
        t->sampler = sampler_free(t->sampler);
        metric_snapshot_done(&t->last);
        t->have_last = false;
        t->interval_sec = 0;
}

MetricsTimer *metrics_timer_free(MetricsTimer *t) {
        if (!t)
                return NULL;
        metrics_timer_stop(t);
        free(t);
        return NULL;
}

const MetricSnapshot *metrics_timer_last(const MetricsTimer *t) {
        return t->have_last ? &t->last : NULL;
}

static const Config *get_config(const MetricsTimer *t) {
        return t->hooks.config ? t->hooks.config(t->hooks.userdata) : NULL;
}

static uint64_t realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static bool dir_exists(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;
        struct stat st;

        if (!slash)
                return false;
        *slash = 0;
        return stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

static void write_metrics_file(MetricsTimer *t, const Config *config) {
        const char *path = config->metrics_file;
        _cleanup_free_ char *page = NULL;
        size_t size = 0;
        int r;

        if (!path || !path[0])
                return;
        /*
         * The default path is in node_exporter's directory. A host without that directory wants no
         * file and no warning. A daemon on a --root fixture tree must not write its figures there,
         * where they would pass for the host's.
         */
        if (!config->metrics_file_set && (!rootfs_is_real(t->root) || !dir_exists(path)))
                return;
        r = sampler_prom_page(&t->last, &page, &size);
        if (r >= 0)
                r = metrics_file_write(path, page, size);
        if (r < 0) {
                if (!t->file_failing)
                        log_warning_errno(r, "Failed to write the metrics file %s, ignoring until it works: %m", path);
                t->file_failing = true;
                return;
        }
        if (t->file_failing)
                log_info("Metrics file %s written again", path);
        t->file_failing = false;
}

/* The traffic counters of one period, in the form that SamplerInput takes them. */
typedef struct TrafficRead {
        NetdevStats *pf_stats;
        size_t n_pf_stats;
        NetdevStats *netdevs;
        size_t n_netdevs;
} TrafficRead;

static void traffic_read_done(TrafficRead *t) {
        netdev_stats_array_free(t->pf_stats, t->n_pf_stats);
        netdev_stats_array_free(t->netdevs, t->n_netdevs);
        *t = (TrafficRead) {};
}

/*
 * Read one RTM_GETLINK per PF and one dump of all netdevs. A PF's reply carries IFLA_VF_STATS
 * for each of its VFs, passed-through VFs included. The dump carries each netdev's
 * IFLA_STATS64. This runs only where rtnetlink sees the netdevs that the root shows, because
 * the ifindexes on a fixture tree are made up. A read that fails is left out of this period:
 * its samples are missing, and their alerts count as gone. The failure is logged at debug
 * level only. The read is tried again in one period, and a PF that went away between the
 * inventory and the read is no news.
 */
static void traffic_read(MetricsTimer *t, const Inventory *inv, TrafficRead *ret) {
        NlError err;
        int r;

        *ret = (TrafficRead) {};
        if (!t->route)
                return;
        if (inv && inv->n_pfs > 0) {
                ret->pf_stats = calloc(inv->n_pfs, sizeof(*ret->pf_stats));
                if (!ret->pf_stats)
                        return;
        }
        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                if (pf->ifindex <= 0)
                        continue;
                r = route_nl_read_stats(t->route, pf->ifindex, &ret->pf_stats[ret->n_pf_stats], &err);
                if (r < 0) {
                        log_debug("Reading the VF counters of PF %s (ifindex %d) failed, leaving them out: %s%s%s",
                                  pf->addr, pf->ifindex, strerror(-r), err.message[0] ? ": " : "", err.message);
                        continue;
                }
                ret->n_pf_stats++;
        }
        /* A link added or removed during the dump interrupts it. Try once more, then do without it. */
        for (int attempt = 0; attempt < 2; attempt++) {
                r = route_nl_dump_stats(t->route, &ret->netdevs, &ret->n_netdevs, &err);
                if (r != -EAGAIN)
                        break;
        }
        if (r < 0) {
                log_debug("Dumping the netdevs' counters failed, leaving them out: %s", strerror(-r));
                ret->netdevs = NULL;
                ret->n_netdevs = 0;
        }
}

int metrics_timer_sample_now(MetricsTimer *t) {
        _cleanup_(traffic_read_done) TrafficRead traffic = {};
        _cleanup_free_ TenantInfo *tenants = NULL;
        const Config *config = get_config(t);
        const Inventory *inv = t->hooks.inventory ? t->hooks.inventory(t->hooks.userdata) : NULL;
        const Tenants *all = t->hooks.tenants ? t->hooks.tenants(t->hooks.userdata) : NULL;
        AllocRtNode nodes[ALLOC_RT_NODES_MAX];
        size_t n = all ? tenants_count(all) : 0, k = 0;
        SamplerInput in;
        int r;

        if (!config || config->monitor_interval_sec == 0)
                return -ENODATA;
        if (!t->sampler) {
                r = sampler_new(t->root, &t->sampler);
                if (r < 0)
                        return r;
        }
        tenants = calloc(MAX(n, (size_t) 1), sizeof(*tenants));
        if (!tenants)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (tenants_nth(all, inv, i, &tenants[k]) >= 0)
                        k++;
        traffic_read(t, inv, &traffic);
        in = (SamplerInput) {
                .inv = inv,
                .cfg = config,
                .tenants = tenants,
                .n_tenants = k,
                .rt_nodes = nodes,
                .n_rt_nodes = MIN(all ? tenants_rt_nodes(all, nodes, ELEMENTSOF(nodes)) : 0, ELEMENTSOF(nodes)),
                .pf_stats = traffic.pf_stats,
                .n_pf_stats = traffic.n_pf_stats,
                .netdevs = traffic.netdevs,
                .n_netdevs = traffic.n_netdevs,
        };
        kernel_events_latency_input(t->kernel_events, &in);
        r = sampler_sample(t->sampler, &in, now_usec(), realtime_usec(), &t->last);
        if (r < 0)
                return r;
        t->have_last = true;
        /*
         * The alert rules get the whole snapshot, so that "held for N periods" counts periods
         * of this timer. The alerts that are active after the feed join the snapshot before the
         * file is written. So the file, GetMetrics and ActiveAlerts all report the same period.
         */
        if (t->hooks.sampled)
                t->hooks.sampled(&t->last, t->hooks.userdata);
        write_metrics_file(t, config);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        MetricsTimer *t = userdata;
        int r;

        r = metrics_timer_sample_now(t);
        if (r < 0)
                log_debug("Sampling failed, trying again next period: %s", strerror(-r));
        malloc_trim(0);
        r = sd_event_source_set_time_relative(s, (uint64_t) t->interval_sec * 1000000);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the sampler: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int metrics_timer_arm(MetricsTimer *t, sd_event *event, unsigned interval_sec) {
        uint64_t period = (uint64_t) interval_sec * 1000000;
        int r;

        if (interval_sec == 0) {
                /* With the sampler off, there are no wakeups and no stale values for GetMetrics to hand out. */
                metrics_timer_stop(t);
                return 0;
        }
        if (t->timer && interval_sec == t->interval_sec)
                return 0;

        if (!t->sampler) {
                /* This first sample is the baseline for the first period's rates. */
                r = metrics_timer_sample_now(t);
                if (r < 0)
                        log_debug("First sample failed, trying again next period: %s", strerror(-r));
        }
        t->interval_sec = interval_sec;
        if (t->timer) {
                r = sd_event_source_set_time_relative(t->timer, period);
                if (r < 0)
                        return r;
                return sd_event_source_set_enabled(t->timer, SD_EVENT_ONESHOT);
        }
        /*
         * The rates divide by the measured time, so a period that ends a little late costs no
         * accuracy. The slack lets this wakeup be batched with others.
         */
        return sd_event_add_time_relative(event, &t->timer, CLOCK_MONOTONIC, period,
                                          MIN(period / 10, (uint64_t) 500000), on_timer, t);
}
