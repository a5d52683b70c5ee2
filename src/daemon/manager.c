/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.c — the daemon's state, event loop, timers, signals and kernel monitors; the cycle is in cycle.c */

#include <sys/resource.h>
#include <malloc.h>

#include "manager-internal.h"


/* The hooks that tests and developers set in the environment. */
typedef struct TestHooks {
        RootFsOptions root;
        bool live_netlink;
        bool bpf_debug;
} TestHooks;

/*
 * This is the one place that reads the hooks from the environment. The lower layers get them as
 * options. The strings point into the environment, and rootfs_new() copies them.
 */
static TestHooks test_hooks_from_env(void) {
        return (TestHooks) {
                .root = {
                        .sched_live = streq_ptr(getenv("SRIOVD_TEST_LIVE_SCHED"), "1"),
                        .fail_writes = getenv("SRIOVD_TEST_FAIL_WRITE"),
                        .test_kernel = getenv("SRIOVD_TEST_KERNEL"),
                },
                .live_netlink = streq_ptr(getenv("SRIOVD_TEST_LIVE_NETLINK"), "1"),
                .bpf_debug = getenv("SRIOVD_BPF_DEBUG") != NULL,
        };
}

int manager_new(const char *root, const char *config_path, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        TestHooks hooks = test_hooks_from_env();
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        r = rootfs_new(root, &hooks.root, &m->root);
        if (r < 0)
                return log_error_errno(r, "Failed to open root directory %s: %m", root ? root : "/");
        m->kernel.root = m->root;
        m->netlink_live = rootfs_is_real(m->root) || hooks.live_netlink;
        m->bpf_options.libbpf_warnings = hooks.bpf_debug;
        if (m->netlink_live) {
                r = route_nl_open(&m->kernel.route);
                if (r < 0)
                        return log_error_errno(r, "Failed to open an rtnetlink socket: %m");
                r = ethtool_nl_open(&m->kernel.ethtool);
                if (r < 0)
                        log_warning_errno(r, "Failed to open ethtool netlink, coalescing and offloads are not managed: %m");
                r = netdev_nl_open(&m->kernel.netdev);
                /* Linux before 6.5 has no netdev netlink family, so per-NAPI settings are unavailable. */
                if (r == -EOPNOTSUPP)
                        log_info("The kernel has no netdev netlink family, per-NAPI settings are unavailable");
                else if (r < 0)
                        log_warning_errno(r, "Failed to open netdev netlink, per-NAPI settings are not managed: %m");
        }

        m->runtime_lock_fd = -EBADF;
        m->config_optional = !config_path;
        m->expect_changes = true;
        m->config_path = strdup(config_path ?: CONFIG_DEFAULT_PATH);
        if (!m->config_path)
                return -ENOMEM;

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* This finishes the write in flight and reports it while the rest of the manager still exists. */
        manager_set_writer(m, NULL);
        sd_event_source_unref(m->drift_timer);
        sd_event_source_unref(m->guest_timer);
        sd_event_source_unref(m->recheck_timer);
        sd_event_source_unref(m->recheck_defer);
        sd_event_source_unref(m->vf_timer);
        sd_event_source_unref(m->retry_timer);
        sd_event_source_unref(m->rewrite_defer);
        sd_event_source_unref(m->save_defer);
        free(m->saved_tenants);
        pci_set_done(&m->probing);
        sd_event_source_unref(m->irq_watch_timer);
        manager_metrics_done(m);
        vf_wait_list_done(&m->vf_waits);
        vf_irq_watch_list_done(&m->irq_watches);
        link_monitor_free(m->link_monitor);
        device_monitor_free(m->device_monitor);
        manager_kernel_events_stop(m);
        free(m->drift_irqs);
        free(m->drift_pids);
        latency_threads_done(&m->latency);
        sd_event_unref(m->event);
        irq_files_free(m->irq_files);
        rootfs_free(m->root);
        route_nl_free(m->kernel.route);
        ethtool_nl_free(m->kernel.ethtool);
        netdev_nl_free(m->kernel.netdev);
        ethtool_monitor_free(m->ethtool_monitor);
        alerts_free(m->alerts);
        config_free(m->config);
        inventory_free(m->inventory);
        plan_free(m->plan);
        free(m->config_path);
        free(m->config_errors);
        if (m->runtime_lock_fd >= 0)
                close(m->runtime_lock_fd);
        saved_sched_table_done(&m->saved);
        unmanaged_irqs_done(&m->unmanaged);
        pci_set_done(&m->vf_link_unsupported);
        bus_free(m->bus);
        guests_free(m->guests);
        tenants_free(m->tenants);
        free(m->allocations);
        pci_set_done(&m->held);
        free(m->released);
        pci_set_done(&m->expect_vfs);
        pci_set_done(&m->force_num_vfs);
        pci_set_done(&m->coalesce_unsupported);
        pci_set_done(&m->offloads_unsupported);
        pci_set_done(&m->channels_unsupported);
        free(m);
        return NULL;
}

static void on_alert(const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata) {
        Manager *m = userdata;

        if (m->alert_fn)
                m->alert_fn(m, a, raised, reason, m->alert_userdata);
}

/*
 * This runs before the new config replaces the old one. A rule that the new config lacks is
 * then cleared while its old copy still exists.
 */
static int manager_set_alert_rules(Manager *m, const Config *c) {
        int r;

        if (!m->alerts) {
                r = alerts_new(&m->alerts);
                if (r < 0)
                        return r;
                alerts_set_event_fn(m->alerts, on_alert, m);
        }
        return alerts_set_rules(m->alerts, c->alerts, c->n_alerts);
}

int manager_load_config(Manager *m) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;
        int r;

        if (m->config_optional && access(m->config_path, F_OK) < 0 && errno == ENOENT) {
                r = config_load_string(m->config_path, "", NULL, &c, &errors);
                if (r >= 0)
                        log_notice("%s does not exist, running with built-in defaults", m->config_path);
        } else
                r = config_load(m->config_path, &c, &errors);
        free(m->config_errors);
        m->config_errors = NULL;
        if (r < 0) {
                /* The whole text is kept for the error reply to a D-Bus Reload call. */
                m->config_errors = errors ? strdup(errors) : NULL;
                /* Each line already names the file and the line, and says what was wrong. */
                for (char *line = errors, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = 0;
                        log_error("%s", line);
                }
                return log_error_errno(r, "Failed to load configuration %s%s: %m", m->config_path,
                                       m->config ? ", keeping the one in use" : "");
        }

        r = manager_set_alert_rules(m, c);
        if (r < 0) {
                config_free(c);
                return log_error_errno(r, "Failed to set up the alert rules of %s%s: %m", m->config_path,
                                       m->config ? ", keeping the configuration in use" : "");
        }
        config_free(m->config);
        m->config = c;
        m->expect_changes = true;
        /*
         * A reload is how the operator asks sriovd to try again, for example after a firmware
         * update. So sriovd forgets which devices refused a kind of change.
         */
        pci_set_clear(&m->vf_link_unsupported);
        pci_set_clear(&m->coalesce_unsupported);
        pci_set_clear(&m->offloads_unsupported);
        pci_set_clear(&m->channels_unsupported);
        /* The tenant classes may have changed, so the tenants are placed again under the new ones. */
        m->tenants_configured = false;
        guests_set_uri(m->guests, c->libvirt_uri);
        return 0;
}

const Inventory *manager_inventory(const Manager *m) {
        return m->inventory;
}

RootFs *manager_root(const Manager *m) {
        return m->root;
}

const Plan *manager_plan(const Manager *m) {
        return m->plan;
}

const Config *manager_config(const Manager *m) {
        return m->config;
}

static void manager_notify_status(Manager *m, const char *prefix) {
        const Inventory *inv = m->inventory;
        unsigned vfs = 0;

        if (!inv)
                return;
        for (size_t i = 0; i < inv->n_pfs; i++)
                vfs += (unsigned) inv->pfs[i].n_vfs;
        sd_notifyf(false, "%sSTATUS=%zu PFs, %u VFs, %zu IRQs; last cycle: %u actions, %u failed, %u drift%s",
                   prefix, inv->n_pfs, vfs, inv->n_irqs, m->last.n_actions, m->last.n_failed,
                   m->last.n_drift,
                   inv->caps.rtnet_prio_present ? "" : "; RT softirq partition unavailable on this kernel");
}

static int on_vf_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* The timer reports late VFs at their deadline, even if no kernel event ever comes. */
static void manager_arm_vf_timer(Manager *m) {
        uint64_t deadline = vf_wait_next_deadline(&m->vf_waits);
        int r;

        if (!m->event)
                return;
        if (deadline == UINT64_MAX) {
                if (m->vf_timer)
                        (void) sd_event_source_set_enabled(m->vf_timer, SD_EVENT_OFF);
                return;
        }
        if (!m->vf_timer)
                r = sd_event_add_time(m->event, &m->vf_timer, CLOCK_MONOTONIC, deadline, 0, on_vf_timer, m);
        else {
                r = sd_event_source_set_time(m->vf_timer, deadline);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->vf_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to arm the VF creation deadline, the drift timer will report it: %m");
}

static int on_retry_timer(sd_event_source *s, uint64_t usec, void *userdata);

/*
 * A transient failure is worth another try soon, not only at the next drift check. Examples
 * are EBUSY on an IRQ that the kernel is moving, EAGAIN, and a PF in the middle of a reset.
 * The delay starts at 200 ms and doubles at each retry, so a failure that persists costs
 * little. It grows up to the drift check period, or up to 30 s when there is no drift check.
 */
#define RETRY_FIRST_USEC (200 * 1000)
static void manager_arm_retry(Manager *m, unsigned n_transient) {
        uint64_t cap = m->config->drift_check_sec ? (uint64_t) m->config->drift_check_sec * 1000000 : 30 * 1000000;
        int r;

        if (!m->event)
                return;
        if (n_transient == 0) {
                m->retry_usec = 0;
                if (m->retry_timer)
                        (void) sd_event_source_set_enabled(m->retry_timer, SD_EVENT_OFF);
                return;
        }
        m->retry_usec = m->retry_usec ? MIN(m->retry_usec * 2, cap) : RETRY_FIRST_USEC;
        if (!m->retry_timer)
                r = sd_event_add_time_relative(m->event, &m->retry_timer, CLOCK_MONOTONIC, m->retry_usec, 10 * 1000,
                                               on_retry_timer, m);
        else {
                r = sd_event_source_set_time_relative(m->retry_timer, m->retry_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->retry_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a retry, the drift timer will: %m");
        else
                log_debug("%u transient failures: retrying in %" PRIu64 " ms", n_transient, m->retry_usec / 1000);
}

static int manager_run_cycle(Manager *m) {
        CycleResult res;
        int r;

        /* This cycle answers every re-check that was asked for before it began. */
        m->cycle_started_usec = now_usec();
        if (m->recheck_timer)
                (void) sd_event_source_set_enabled(m->recheck_timer, SD_EVENT_OFF);
        if (m->recheck_defer)
                (void) sd_event_source_set_enabled(m->recheck_defer, SD_EVENT_OFF);
        r = manager_cycle(m, CYCLE_APPLY, &res);
        /* Every cycle reads at least what the drift events named: a full read or a refresh covers it. */
        m->n_drift_irqs = m->n_drift_pids = 0;
        if (m->repair_timer)
                (void) sd_event_source_set_enabled(m->repair_timer, SD_EVENT_OFF);
        if (m->repair_defer)
                (void) sd_event_source_set_enabled(m->repair_defer, SD_EVENT_OFF);
        manager_arm_vf_timer(m);
        if (r < 0)
                return r;
        manager_arm_retry(m, res.n_transient);
        if (manager_latency_track(m) < 0)
                log_oom();
        manager_kernel_events_watch(m);
        r = manager_write_owned_irqs(m);
        if (r < 0)
                log_warning_errno(r, "Failed to publish the IRQs sriovd owns for irqbalance, ignoring: %m");

        log_full_errno(res.n_failed || res.n_drift ? LOG_WARNING : LOG_INFO, 0,
                       LOG_FIELDS(.message_id = SRIOVD_MESSAGE_CYCLE),
                       "Cycle %u: %u actions, %u done, %u failed, %u drift", m->n_cycles, res.n_actions,
                       res.n_done, res.n_failed, res.n_drift);
        return 0;
}

static int on_retry_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) manager_run_cycle(m);
        manager_notify_status(m, "");
        return 0;
}

static bool source_armed(sd_event_source *s) {
        int enabled = SD_EVENT_OFF;

        if (s)
                (void) sd_event_source_get_enabled(s, &enabled);
        return enabled != SD_EVENT_OFF;
}

/*
 * While the drift events work, a drift check only catches what has no event, so it runs at the
 * long safety-net period. Without them, it is how sriovd finds drift.
 */
static uint64_t manager_drift_period_usec(const Manager *m) {
        unsigned sec = m->drift_events_ok ? m->config->drift_safety_net_sec : m->config->drift_check_sec;
        return (uint64_t) sec * 1000000;
}

/*
 * Arms *s to fire once, period from now, or removes it for a period of 0. An accuracy of 1 s lets
 * the wakeup be batched with others.
 */
static int manager_arm_period(Manager *m, sd_event_source **s, uint64_t period, sd_event_time_handler_t fn) {
        int r;

        if (period == 0) {
                *s = sd_event_source_disable_unref(*s);
                return 0;
        }
        if (!*s)
                return sd_event_add_time_relative(m->event, s, CLOCK_MONOTONIC, period, 1000000, fn, m);
        r = sd_event_source_set_time_relative(*s, period);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
}

static int on_drift_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* With a period of 0, only events run cycles, so an idle daemon never wakes up. */
static int manager_arm_drift_timer(Manager *m) {
        return manager_arm_period(m, &m->drift_timer, manager_drift_period_usec(m), on_drift_timer);
}

static int on_drift_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        /*
         * The cycle also answers any re-check that is due, see manager_run_cycle(). An event
         * asks for a re-check when, for example, a link came up and its driver just requested
         * IRQs. Such a re-check must read the whole host. A refresh would mark the event as
         * handled without looking at what it changed. So the drift check refreshes only when
         * no re-check is due.
         */
        m->drift_refresh = !source_armed(m->recheck_defer) && !source_armed(m->recheck_timer);
        (void) manager_run_cycle(m);
        m->drift_refresh = false;
        manager_notify_status(m, "");
        malloc_trim(0);
        r = manager_arm_drift_timer(m);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the drift timer: %m");
        return 0;
}

/*
 * The guests' placement is found through libvirt, and a guest that just started may not be
 * watched yet. So while the drift events work, the guests' placement keeps its own check every
 * drift_check_sec, without a cycle. Without the events, the drift check covers it.
 */
static int on_guest_timer(sd_event_source *s, uint64_t usec, void *userdata);

static int manager_arm_guest_timer(Manager *m) {
        uint64_t period = m->drift_events_ok ? (uint64_t) m->config->drift_check_sec * 1000000 : 0;
        return manager_arm_period(m, &m->guest_timer, period, on_guest_timer);
}

static int on_guest_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        guests_check_placements(m->guests);
        r = manager_arm_guest_timer(m);
        if (r < 0)
                return log_error_errno(r, "Failed to re-arm the guests' placement check: %m");
        return 0;
}

/* The drift events stopped working: the drift check goes back to its short period at once. */
void manager_drift_events_failed(Manager *m) {
        int r;

        m->drift_events_ok = false;
        if (!m->event || !m->drift_timer)
                return;
        r = manager_arm_drift_timer(m);
        if (r >= 0)
                r = manager_arm_guest_timer(m);
        if (r < 0)
                log_error_errno(r, "Failed to set up the drift timer: %m");
}

/*
 * A re-check asked for by the D-Bus API or by libvirt waits this long before its cycle runs.
 * A burst of calls, such as 16 clients that allocate at once, then shares one cycle. Kernel
 * events do not wait, see on_kernel_event().
 */
#define RECHECK_DELAY_USEC (10 * 1000)

static int on_vf_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        (void) manager_run_cycle(m);
        manager_notify_status(m, "");
        return 0;
}

static int on_recheck(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        (void) manager_run_cycle(m);
        manager_notify_status(m, "");
        return 0;
}

static int on_recheck_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return on_recheck(s, userdata);
}

/*
 * Kernel events that come back to back run cycles at most this often. Without a bound, a storm
 * of events, or a setting whose every write makes an event, would run cycles without pause.
 * The first event after a quiet spell is never held back.
 */
#define EVENT_CYCLE_GAP_USEC (5 * 1000)

static int manager_arm_recheck_timer(Manager *m, uint64_t usec) {
        int r;

        if (!m->recheck_timer)
                return sd_event_add_time(m->event, &m->recheck_timer, CLOCK_MONOTONIC, usec, 1000, on_recheck_timer, m);
        r = sd_event_source_set_time(m->recheck_timer, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->recheck_timer, SD_EVENT_ONESHOT);
        return r;
}

/*
 * A device, link or ethtool event runs a cycle at once. A new VF's vectors sit on every CPU,
 * the RT CPUs included, until a cycle pins them. A fixed wait of 10 ms would be half of the
 * reaction time. Still, one cycle per event would be too many: a PF that creates 64 VFs sends
 * hundreds of events. So the cycle is a deferred event source with a lower priority than the
 * monitors' fds, and every event already received is read before it runs. The events that
 * arrive while it runs arm it once more, for one more cycle. That cycle starts no sooner than
 * EVENT_CYCLE_GAP_USEC after the last one began. A cycle re-reads everything, so it covers
 * every event that came before it.
 */
static void on_kernel_event(const char *what, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(), due = m->cycle_started_usec + EVENT_CYCLE_GAP_USEC, until;
        int r;

        /*
         * While a VF's driver probes it, the cycle waits for the VF's "bind" event. At that
         * event, hotplug.c pins the VF's vectors before the cycle runs.
         */
        if (manager_hotplug_waiting(m, now, &until)) {
                uint64_t when = UINT64_MAX;

                if (source_armed(m->recheck_defer))
                        (void) sd_event_source_set_enabled(m->recheck_defer, SD_EVENT_OFF);
                if (m->recheck_timer && source_armed(m->recheck_timer))
                        (void) sd_event_source_get_time(m->recheck_timer, &when);
                log_debug("Kernel event %s: the re-check waits for VF %s's driver", what, pci_set_get(&m->probing, 0));
                if (when > until) {
                        r = manager_arm_recheck_timer(m, until);
                        if (r < 0)
                                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
                }
                return;
        }
        if (source_armed(m->recheck_defer)) {
                log_debug("Kernel event %s: a re-check is already due", what);
                return;
        }
        if (m->cycle_started_usec > 0 && now < due) {
                uint64_t when = UINT64_MAX;

                if (m->recheck_timer && source_armed(m->recheck_timer))
                        (void) sd_event_source_get_time(m->recheck_timer, &when);
                if (when <= due) {
                        log_debug("Kernel event %s: a re-check is already due", what);
                        return;
                }
                log_info("Re-checking after kernel event: %s", what);
                r = manager_arm_recheck_timer(m, due);
                if (r < 0)
                        log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
                return;
        }
        log_info("Re-checking after kernel event: %s", what);
        if (!m->recheck_defer) {
                r = sd_event_add_defer(m->event, &m->recheck_defer, on_recheck, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(m->recheck_defer, SD_EVENT_PRIORITY_NORMAL + 1);
                if (r < 0)
                        m->recheck_defer = sd_event_source_unref(m->recheck_defer);
        } else
                r = sd_event_source_set_enabled(m->recheck_defer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
}

static int on_repair(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        m->refresh_only = m->drift_refresh = true;
        (void) manager_run_cycle(m);
        m->refresh_only = m->drift_refresh = false;
        manager_notify_status(m, "");
        return 0;
}

static int on_repair_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return on_repair(s, userdata);
}

/*
 * A drift event runs a cycle that reads only what the events named, at once: it runs after the
 * events already waiting are read. Like the other kernel events, these cycles start at
 * most every EVENT_CYCLE_GAP_USEC, so a process that keeps writing cannot keep the loop busy.
 */
void manager_repair_soon(Manager *m) {
        uint64_t now = now_usec(), when = m->cycle_started_usec + EVENT_CYCLE_GAP_USEC;
        int r;

        if (source_armed(m->recheck_defer))
                return;   /* A full re-check is due, and it reads these too. */
        if (source_armed(m->repair_defer) || source_armed(m->repair_timer))
                return;
        /* At once when the gap is over: a timer would add the timer's own latency, which is
         * milliseconds in an emulated guest. */
        if (now >= when) {
                if (!m->repair_defer) {
                        r = sd_event_add_defer(m->event, &m->repair_defer, on_repair, m);
                        if (r >= 0)
                                r = sd_event_source_set_priority(m->repair_defer, SD_EVENT_PRIORITY_NORMAL + 1);
                } else
                        r = sd_event_source_set_enabled(m->repair_defer, SD_EVENT_ONESHOT);
        } else if (!m->repair_timer) {
                r = sd_event_add_time(m->event, &m->repair_timer, CLOCK_MONOTONIC, when, 1, on_repair_timer, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(m->repair_timer, SD_EVENT_PRIORITY_NORMAL + 1);
        } else {
                r = sd_event_source_set_time(m->repair_timer, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->repair_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to schedule a repair, re-checking the whole host: %m");
                manager_recheck_now(m, "drift event");
        }
}

void manager_recheck(Manager *m, const char *why) {
        int r;

        if (!m->event)
                return;
        if (source_armed(m->recheck_timer) || source_armed(m->recheck_defer))
                return;   /* A re-check is already due. */
        /* Tests and operators grep for these words. */
        log_info("Re-checking after kernel event: %s", why);
        r = manager_arm_recheck_timer(m, now_usec() + RECHECK_DELAY_USEC);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
}

void manager_recheck_now(Manager *m, const char *why) {
        if (m->event)
                on_kernel_event(why, m);
}

static void on_link_event(int ifindex, void *userdata) {
        Manager *m = userdata;
        char what[64];

        if (ifindex <= 0) {
                on_kernel_event("rtnetlink notifications lost", m);
                return;
        }
        manager_hotplug_link_up(m, ifindex);
        snprintf(what, sizeof(what), "link ifindex %d came up", ifindex);
        on_kernel_event(what, m);
}

static int on_link_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = link_monitor_dispatch(m->link_monitor);
        if (r < 0)
                log_warning_errno(r, "Failed to read rtnetlink notifications, ignoring: %m");
        return 0;
}

static void on_ethtool_event(int ifindex, const char *what, void *userdata) {
        char buf[64];

        snprintf(buf, sizeof(buf), "ethtool %s ifindex %d", what, ifindex);
        on_kernel_event(buf, userdata);
}

static int on_ethtool_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = ethtool_monitor_dispatch(m->ethtool_monitor);
        if (r < 0)
                log_warning_errno(r, "Failed to read ethtool notifications, ignoring: %m");
        return 0;
}

static void on_device_event(const char *subsystem, const char *action, const char *sysname, void *userdata) {
        Manager *m = userdata;
        char what[160];

        if (!subsystem) {
                /*
                 * The lost events could have named any device. So no probe is waited for, and
                 * the whole host is re-checked.
                 */
                pci_set_clear(&m->probing);
                on_kernel_event("udev events lost (receive buffer overflow)", m);
                return;
        }
        if (streq(subsystem, "pci"))
                manager_hotplug_event(m, action, sysname);
        snprintf(what, sizeof(what), "%s %s %s", subsystem, action, sysname);
        on_kernel_event(what, m);
}

static int on_device_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        (void) device_monitor_dispatch(m->device_monitor);
        return 0;
}

/*
 * sriovd still works without these monitors, on the drift timer alone. So a monitor that
 * fails to start is a warning, not an error.
 */
static void manager_add_monitors(Manager *m) {
        int r;

        r = link_monitor_new(on_link_event, m, &m->link_monitor);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, link_monitor_fd(m->link_monitor), EPOLLIN, on_link_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch rtnetlink link events, relying on the drift timer: %m");

        /*
         * With this monitor, sriovd repairs at once a change to coalescing or offloads that was
         * made behind its back, for example with ethtool -C.
         */
        if (m->kernel.ethtool) {
                r = ethtool_monitor_new(on_ethtool_event, m, &m->ethtool_monitor);
                if (r >= 0)
                        r = sd_event_add_io(m->event, NULL, ethtool_monitor_fd(m->ethtool_monitor), EPOLLIN,
                                            on_ethtool_io, m);
                if (r < 0)
                        log_warning_errno(r, "Failed to watch ethtool notifications, relying on the drift timer: %m");
        }

        r = device_monitor_new(on_device_event, m, &m->device_monitor);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, device_monitor_fd(m->device_monitor), EPOLLIN, on_device_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch udev device events, relying on the drift timer: %m");
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, exiting", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
        return sd_event_exit(m->event, 0);
}

static int manager_setup_event(Manager *m);

/*
 * sriovd connects to libvirt to attach the tenants' NICs to their guests. On the real root it
 * always connects. A hypervisor without libvirtd still works, because the guests module keeps
 * trying. Under --root, sriovd connects only when the config names its own URI. Tests name
 * libvirt's test driver there.
 *
 * Returns 1 when the guests should be connected and the event loop is ready. Returns 0 when
 * they are connected already, or when a fixture root has no URI of its own.
 */
static int guests_wanted(Manager *m) {
        int r;

        if (m->guests)
                return 0;
        if (!rootfs_is_real(m->root) && streq(m->config->libvirt_uri, CONFIG_DEFAULT_LIBVIRT_URI))
                return 0;
        r = manager_setup_event(m);
        return r < 0 ? r : 1;
}

int manager_connect_guests(Manager *m) {
        int r;

        r = guests_wanted(m);
        if (r <= 0)
                return r;
        r = guests_new(m, m->config->libvirt_uri, &m->guests);
        if (r < 0)
                return r;
        guests_resync(m->guests);
        return 1;
}

/*
 * The daemon uses this version of manager_connect_guests(). It connects from the event loop
 * and never blocks the loop. At boot, systemd holds libvirt's socket until sriovd is ready, so
 * a blocking connect would wait for sriovd itself. The connection is retried with backoff
 * until it succeeds.
 */
int manager_start_guests(Manager *m) {
        int r;

        r = guests_wanted(m);
        if (r <= 0)
                return r;
        r = guests_start(m, &m->guests);
        if (r < 0)
                return r;
        return 1;
}

struct Guests *manager_guests(const Manager *m) {
        return m->guests;
}

/*
 * This sets up the event loop and the kernel event sources. The daemon always uses them.
 * sriovd --once uses them while it waits for new VFs to appear.
 */
static int manager_setup_event(Manager *m) {
        int r;

        if (m->event)
                return 0;
        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        manager_add_monitors(m);
        return 0;
}

int manager_repair(Manager *m, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids,
                   CycleResult *ret) {
        int r = 0;

        m->n_drift_irqs = m->n_drift_pids = 0;
        if (GREEDY_REALLOC(m->drift_irqs, m->allocated_drift_irqs, n_irqs) < 0 ||
            GREEDY_REALLOC(m->drift_pids, m->allocated_drift_pids, n_pids) < 0)
                return -ENOMEM;
        memcpy_safe(m->drift_irqs, irqs, n_irqs * sizeof(*irqs));
        memcpy_safe(m->drift_pids, pids, n_pids * sizeof(*pids));
        m->n_drift_irqs = n_irqs;
        m->n_drift_pids = n_pids;
        m->refresh_only = m->drift_refresh = true;
        r = manager_cycle(m, CYCLE_APPLY, ret);
        m->refresh_only = m->drift_refresh = false;
        m->n_drift_irqs = m->n_drift_pids = 0;
        return r;
}

int manager_drift_check(Manager *m, CycleResult *ret) {
        int r;

        m->drift_refresh = true;
        r = manager_cycle(m, CYCLE_APPLY, ret);
        m->drift_refresh = false;
        return r;
}

unsigned manager_refreshes(const Manager *m) {
        return m->n_refreshes;
}

int manager_once(Manager *m, CycleResult *ret) {
        int r;

        m->once = true;
        m->once_total = (CycleResult) {};
        r = manager_cycle(m, CYCLE_APPLY, NULL);
        if (r < 0)
                return r;

        /* When VFs were created, follow the kernel's events until every VF is there or late. */
        if (m->vf_waits.n > 0) {
                r = manager_setup_event(m);
                if (r < 0)
                        return r;
                manager_arm_vf_timer(m);
                while (m->vf_waits.n > 0) {
                        r = sd_event_run(m->event, UINT64_MAX);
                        if (r < 0)
                                return log_error_errno(r, "Event loop failed: %m");
                }
        }
        *ret = m->once_total;
        return 0;
}

/*
 * A drift check reads every IRQ's affinity file through an fd that it keeps open, see
 * irq-files.c. The sampler does the same with its threads' stat files. That makes thousands
 * of fds on a large host. systemd gives a service a soft limit of 1024 fds, which matters only
 * for select(), and a hard limit of 524288. Nothing in sriovd uses select(), so sriovd raises
 * the soft limit up to NOFILE_WANTED. A quarter of the limit it gets goes to the affinity
 * files, up to IRQ_FILES_MAX.
 */
#define NOFILE_WANTED 65536
#define IRQ_FILES_MAX 16384

static size_t manager_raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 0;
        if (rl.rlim_cur < NOFILE_WANTED && rl.rlim_cur < rl.rlim_max) {
                struct rlimit want = { MIN(rl.rlim_max, (rlim_t) NOFILE_WANTED), rl.rlim_max };
                if (setrlimit(RLIMIT_NOFILE, &want) >= 0)
                        rl = want;
        }
        return rl.rlim_cur == RLIM_INFINITY ? IRQ_FILES_MAX : MIN((size_t) rl.rlim_cur / 4, (size_t) IRQ_FILES_MAX);
}

int manager_run(Manager *m) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block signals: %m");

        /* The lock allows one daemon per runtime directory, and no sriovd --restore while it runs. */
        r = runtime_lock(&m->runtime_lock_fd);
        if (r == -EBUSY)
                return log_error_errno(r, "Another sriovd, or sriovd --restore, holds %s/lock: %m",
                                       getenv("RUNTIME_DIRECTORY"));
        if (r < 0)
                return log_error_errno(r, "Failed to lock %s/lock: %m", getenv("RUNTIME_DIRECTORY"));

        r = irq_files_new(manager_raise_nofile(), &m->irq_files);
        if (r < 0)
                return log_oom();
        r = manager_setup_event(m);
        if (r < 0)
                return r;
        r = manager_kernel_events_start(m);
        if (r < 0)
                return r;
        if (!m->writer) {
                StateWriter *w;

                /*
                 * Without the writer thread, the groups of changes from D-Bus are written on
                 * the event loop. That is slower, but just as safe.
                 */
                r = state_writer_new(m->event, &w);
                if (r < 0)
                        log_warning_errno(r, "Failed to start the state writer thread, saving on the event loop: %m");
                else
                        manager_set_writer(m, w);
        }
        (void) manager_load_runtime(m);
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m");
        /* sd-event sends WATCHDOG=1 itself, and only when WatchdogSec= is set. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Failed to enable the watchdog: %m");

        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_STARTED),
                       "sriovd %s starting on root %s", SRIOVD_VERSION, rootfs_path(m->root));

        r = manager_run_cycle(m);
        if (r < 0)
                return r;
        r = manager_arm_drift_timer(m);
        if (r >= 0)
                r = manager_arm_guest_timer(m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the drift timer: %m");
        /* The sampler starts after the first apply, so that its first period measures the tuned host. */
        r = manager_arm_sampler(m);
        if (r < 0)
                log_warning_errno(r, "Failed to start the sampler, no metrics: %m");

        /* The API starts after the first cycle, so that no caller sees it before the host is in order. */
        r = bus_new(m, &m->bus);
        if (r < 0)
                log_warning_errno(r, "D-Bus API org.sriovd.Manager1 unavailable, running without it: %m");

        m->ready = true;
        manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
        manager_notify_status(m, "READY=1\n");

        /*
         * libvirt is connected after READY=1. The unit is ordered before libvirtd, so systemd
         * starts libvirtd only after READY=1.
         */
        r = manager_start_guests(m);
        if (r < 0)
                log_warning_errno(r, "Failed to set up the libvirt connection, tenants' NICs are not attached to guests: %m");

        r = sd_event_loop(m->event);
        (void) manager_stop(m);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

/* ---- The calls that the D-Bus API makes ---- */

int manager_run_cycle_now(Manager *m, CycleResult *ret) {
        int r = manager_run_cycle(m);
        if (r >= 0 && ret)
                *ret = m->last;
        manager_notify_status(m, "");
        return r;
}

int manager_plan_now(Manager *m, Plan **ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        int r;

        r = manager_observe(m, false, NULL, &inv, &p);
        if (r < 0)
                return r;
        /* The plan also shows the changes to the RT guests' placement that libvirt would have to make. */
        r = guests_plan_append(m->guests, p);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int manager_reload(Manager *m, char **ret_errors) {
        int r;

        /* Units with Type=notify-reload need MONOTONIC_USEC. Older systemd versions ignore it. */
        sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading configuration", now_usec());
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_RELOAD),
                       "Reloading configuration %s", m->config_path);
        r = manager_load_config(m);
        if (r < 0) {
                manager_notify_status(m, "READY=1\n");
                if (ret_errors)
                        *ret_errors = m->config_errors ? strdup(m->config_errors) : NULL;
                return r;
        }
        /* bpf = changed: load the programs, or unload them, as the daemon would at start. */
        if (m->bpf && m->bpf_loaded_with != (m->config->bpf > 0)) {
                manager_kernel_events_stop(m);
                r = manager_kernel_events_start(m);
                if (r < 0)
                        return r;
        }
        /* The reply waits for the cycle, so that the new policy is in force, not merely read. */
        (void) manager_run_cycle(m);
        if (m->event) {
                r = manager_arm_drift_timer(m);
                if (r >= 0)
                        r = manager_arm_guest_timer(m);
                if (r < 0)
                        log_error_errno(r, "Failed to set up the drift timer: %m");
                r = manager_arm_sampler(m);
                if (r < 0)
                        log_warning_errno(r, "Failed to re-arm the sampler, no metrics: %m");
        }
        manager_notify_status(m, "READY=1\n");
        if (ret_errors)
                *ret_errors = NULL;
        return 0;
}

void manager_set_event_fn(Manager *m, ManagerEventFn fn, void *userdata) {
        m->event_fn = fn;
        m->event_userdata = userdata;
}

const char *manager_state(const Manager *m) {
        if (!m->ready)
                return "starting";
        return m->last.n_failed > 0 || m->last.n_drift > 0 ? "degraded" : "running";
}

int manager_state_reasons(const Manager *m, char ***ret) {
        char **v = calloc(3, sizeof(char *));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        if (m->ready && m->last.n_failed > 0) {
                char failed[512] = "";
                size_t k = 0, shown = 0;

                /* The plan keeps the failures of the first pass. Later passes only count theirs. */
                for (size_t i = 0; m->plan && i < m->plan->n_actions && shown < 3; i++) {
                        const Action *a = &m->plan->actions[i];

                        if (a->skipped || a->result >= 0)
                                continue;
                        strjoin_appendf(failed, sizeof(failed), &k, "%s %s: %s", action_kind_to_string(a->kind),
                                        a->target[0] ? a->target : "host", strerror(-a->result));
                        shown++;
                }
                if (asprintf(&v[n], "%u of the last cycle's actions failed%s%s", m->last.n_failed,
                             failed[0] ? ": " : "", failed) < 0)
                        v[n] = NULL;
                n += !!v[n];
        }
        if (m->ready && m->last.n_drift > 0) {
                if (asprintf(&v[n], "%u changes did not stick in the last cycle (drift)", m->last.n_drift) < 0)
                        v[n] = NULL;
                n += !!v[n];
        }
        *ret = v;
        return 0;
}

void manager_metrics_sampled(Manager *m, MetricSnapshot *s) {
        int r;

        if (!m->alerts)
                return;
        r = alerts_feed(m->alerts, s);
        if (r < 0)
                log_warning_errno(r, "Failed to check this period's metrics against the alert rules, "
                                  "trying again next period: %m");
        /*
         * Export the alerts that are active after this period's feed, even if the feed stopped
         * part way. ActiveAlerts reports the same set.
         */

        r = alerts_export(m->alerts, s);
        if (r < 0)
                log_warning_errno(r, "Failed to add the active alerts to this period's metrics, "
                                  "leaving them out of it: %m");
}

const Alerts *manager_alerts(const Manager *m) {
        return m->alerts;
}

void manager_set_alert_fn(Manager *m, ManagerAlertFn fn, void *userdata) {
        m->alert_fn = fn;
        m->alert_userdata = userdata;
}

struct sd_event *manager_event_loop(const Manager *m) {
        return m->event;
}
