/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-metrics.c — the sampler on the daemon's loop: its timer, the last period and the Prometheus file */

#include <malloc.h>
#include <time.h>

#include "sriovd/kernel/netdev-stats.h"
#include "monitor/metrics-file.h"
#include "manager-internal.h"

void manager_metrics_done(Manager *m) {
        m->sample_timer = sd_event_source_disable_unref(m->sample_timer);
        m->sampler = sampler_free(m->sampler);
        metric_snapshot_done(&m->metrics);
        m->have_metrics = false;
        m->sample_interval_sec = 0;
}

const MetricSnapshot *manager_metrics(const Manager *m) {
        return m->have_metrics ? &m->metrics : NULL;
}

/*
 * This runs right after each period's values are taken. The alert rules get the whole snapshot,
 * so that "held for N periods" counts periods of this timer. The alerts that are active after
 * the feed join the snapshot before the file is written. So the file, GetMetrics and
 * ActiveAlerts all report the same period.
 */
static void on_sampled(Manager *m, MetricSnapshot *snap) {
        manager_metrics_sampled(m, snap);
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

static void write_metrics_file(Manager *m) {
        const char *path = m->config->metrics_file;
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
        if (!m->config->metrics_file_set && (!rootfs_is_real(m->root) || !dir_exists(path)))
                return;
        r = sampler_prom_page(&m->metrics, &page, &size);
        if (r >= 0)
                r = metrics_file_write(path, page, size);
        if (r < 0) {
                if (!m->metrics_file_failing)
                        log_warning_errno(r, "Failed to write the metrics file %s, ignoring until it works: %m", path);
                m->metrics_file_failing = true;
                return;
        }
        if (m->metrics_file_failing)
                log_info("Metrics file %s written again", path);
        m->metrics_file_failing = false;
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
static void traffic_read(Manager *m, TrafficRead *ret) {
        const Inventory *inv = m->inventory;
        NlError err;
        int r;

        *ret = (TrafficRead) {};
        if (!m->netlink_live || !m->kernel.route)
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
                r = route_nl_read_stats(m->kernel.route, pf->ifindex, &ret->pf_stats[ret->n_pf_stats], &err);
                if (r < 0) {
                        log_debug("Reading the VF counters of PF %s (ifindex %d) failed, leaving them out: %s%s%s",
                                  pf->addr, pf->ifindex, strerror(-r), err.message[0] ? ": " : "", err.message);
                        continue;
                }
                ret->n_pf_stats++;
        }
        /* A link added or removed during the dump interrupts it. Try once more, then do without it. */
        for (int attempt = 0; attempt < 2; attempt++) {
                r = route_nl_dump_stats(m->kernel.route, &ret->netdevs, &ret->n_netdevs, &err);
                if (r != -EAGAIN)
                        break;
        }
        if (r < 0) {
                log_debug("Dumping the netdevs' counters failed, leaving them out: %s", strerror(-r));
                ret->netdevs = NULL;
                ret->n_netdevs = 0;
        }
}

int manager_sample_now(Manager *m) {
        _cleanup_(traffic_read_done) TrafficRead traffic = {};
        _cleanup_free_ TenantInfo *tenants = NULL;
        AllocRtNode nodes[ALLOC_RT_NODES_MAX];
        size_t n = manager_n_tenants(m), k = 0;
        SamplerInput in;
        int r;

        if (!m->config || m->config->monitor_interval_sec == 0)
                return -ENODATA;
        if (!m->sampler) {
                r = sampler_new(m->root, &m->sampler);
                if (r < 0)
                        return r;
        }
        tenants = calloc(MAX(n, (size_t) 1), sizeof(*tenants));
        if (!tenants)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (manager_tenant(m, i, &tenants[k]) >= 0)
                        k++;
        traffic_read(m, &traffic);
        in = (SamplerInput) {
                .inv = m->inventory,
                .cfg = m->config,
                .tenants = tenants,
                .n_tenants = k,
                .rt_nodes = nodes,
                .n_rt_nodes = MIN(manager_rt_nodes(m, nodes, ELEMENTSOF(nodes)), ELEMENTSOF(nodes)),
                .pf_stats = traffic.pf_stats,
                .n_pf_stats = traffic.n_pf_stats,
                .netdevs = traffic.netdevs,
                .n_netdevs = traffic.n_netdevs,
        };
        manager_latency_input(m, &in);
        r = sampler_sample(m->sampler, &in, now_usec(), realtime_usec(), &m->metrics);
        if (r < 0)
                return r;
        if (m->host_check) {
                _cleanup_(metric_snapshot_done) MetricSnapshot checks = {};

                r = host_check_metrics(m->host_check, &checks);
                if (r >= 0)
                        r = metric_snapshot_append(&m->metrics, &checks);
                if (r < 0)
                        log_debug("Adding the host check to the metrics failed, leaving it out: %s", strerror(-r));
        }
        m->have_metrics = true;
        on_sampled(m, &m->metrics);
        write_metrics_file(m);
        return 0;
}

static int on_sample_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        r = manager_sample_now(m);
        if (r < 0)
                log_debug("Sampling failed, trying again next period: %s", strerror(-r));
        malloc_trim(0);
        r = sd_event_source_set_time_relative(s, (uint64_t) m->sample_interval_sec * 1000000);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the sampler: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int manager_arm_sampler(Manager *m) {
        unsigned interval = m->config ? m->config->monitor_interval_sec : 0;
        uint64_t period = (uint64_t) interval * 1000000;
        int r;

        if (interval == 0) {
                /* With the sampler off, there are no wakeups and no stale values for GetMetrics to hand out. */
                manager_metrics_done(m);
                return 0;
        }
        if (m->sample_timer && interval == m->sample_interval_sec)
                return 0;

        if (!m->sampler) {
                /* This first sample is the baseline for the first period's rates. */
                r = manager_sample_now(m);
                if (r < 0)
                        log_debug("First sample failed, trying again next period: %s", strerror(-r));
        }
        m->sample_interval_sec = interval;
        if (m->sample_timer) {
                r = sd_event_source_set_time_relative(m->sample_timer, period);
                if (r < 0)
                        return r;
                return sd_event_source_set_enabled(m->sample_timer, SD_EVENT_ONESHOT);
        }
        /*
         * The rates divide by the measured time, so a period that ends a little late costs no
         * accuracy. The slack lets this wakeup be batched with others.
         */

        return sd_event_add_time_relative(m->event, &m->sample_timer, CLOCK_MONOTONIC, period,
                                          MIN(period / 10, (uint64_t) 500000), on_sample_timer, m);
}
