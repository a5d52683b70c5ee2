/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-schedule.c — when cycles run: the timers, re-checks and repairs, and the config's loads and reloads */

#include <malloc.h>

#include "manager-internal.h"

void manager_notify_status(Manager *m, const char *prefix) {
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
void manager_arm_vf_timer(Manager *m) {
        uint64_t deadline = vf_wait_next_deadline(&m->vf_waits);
        int r;

        if (!m->event)
                return;
        if (deadline == UINT64_MAX) {
                if (m->timers.vf)
                        (void) sd_event_source_set_enabled(m->timers.vf, SD_EVENT_OFF);
                return;
        }
        if (!m->timers.vf)
                r = sd_event_add_time(m->event, &m->timers.vf, CLOCK_MONOTONIC, deadline, 0, on_vf_timer, m);
        else {
                r = sd_event_source_set_time(m->timers.vf, deadline);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->timers.vf, SD_EVENT_ONESHOT);
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
                m->timers.retry_usec = 0;
                if (m->timers.retry)
                        (void) sd_event_source_set_enabled(m->timers.retry, SD_EVENT_OFF);
                return;
        }
        m->timers.retry_usec = m->timers.retry_usec ? MIN(m->timers.retry_usec * 2, cap) : RETRY_FIRST_USEC;
        if (!m->timers.retry)
                r = sd_event_add_time_relative(m->event, &m->timers.retry, CLOCK_MONOTONIC, m->timers.retry_usec, 10 * 1000,
                                               on_retry_timer, m);
        else {
                r = sd_event_source_set_time_relative(m->timers.retry, m->timers.retry_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->timers.retry, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a retry, the drift timer will: %m");
        else
                log_debug("%u transient failures: retrying in %" PRIu64 " ms", n_transient, m->timers.retry_usec / 1000);
}

/*
 * Kernel events that come back to back run cycles at a bounded rate. Without a bound, a storm
 * of events, or a setting whose every write makes an event, would run cycles without pause.
 * MANAGER_EVENT_BURST cycles may start at once. Beyond that, one starts no sooner than
 * MANAGER_EVENT_BURST * EVENT_CYCLE_GAP_USEC after the oldest of the last MANAGER_EVENT_BURST
 * began, so a storm runs one cycle every EVENT_CYCLE_GAP_USEC on average. A lone event never
 * waits, even right after a cycle. The repairs that drift events make without a cycle count too.
 */
#define EVENT_CYCLE_GAP_USEC (5 * 1000)

static void manager_note_start(Manager *m, uint64_t now) {
        m->timers.started_usec[m->timers.next_start] = now;
        m->timers.next_start = (m->timers.next_start + 1) % MANAGER_EVENT_BURST;
}

/* When the next cycle for kernel events may start: 0 while fewer than MANAGER_EVENT_BURST began. */
static uint64_t manager_event_due(const Manager *m) {
        uint64_t oldest = m->timers.started_usec[m->timers.next_start];

        return oldest > 0 ? oldest + MANAGER_EVENT_BURST * EVENT_CYCLE_GAP_USEC : 0;
}

int manager_run_cycle(Manager *m) {
        CycleResult res;
        int r;

        /* This cycle answers every re-check that was asked for before it began. */
        manager_note_start(m, now_usec());
        if (m->timers.recheck)
                (void) sd_event_source_set_enabled(m->timers.recheck, SD_EVENT_OFF);
        if (m->timers.recheck_defer)
                (void) sd_event_source_set_enabled(m->timers.recheck_defer, SD_EVENT_OFF);
        r = manager_cycle(m, CYCLE_APPLY, &res);
        /* Every cycle reads at least what the drift events named: a full read or a refresh covers it. */
        kernel_events_drift_clear(m->kernel_events);
        if (m->timers.repair)
                (void) sd_event_source_set_enabled(m->timers.repair, SD_EVENT_OFF);
        if (m->timers.repair_defer)
                (void) sd_event_source_set_enabled(m->timers.repair_defer, SD_EVENT_OFF);
        manager_arm_vf_timer(m);
        if (r < 0)
                return r;
        manager_arm_retry(m, res.n_transient);
        kernel_events_track(m->kernel_events, &(LatencySources) {
                .root = m->root,
                .inv = m->inventory,
                .config = m->config,
                .tenants = m->tenants,
                .guests = m->guests,
                .full_read = m->n_full_reads,
        });
        r = owned_irqs_write(m->inventory, &m->host.unmanaged);
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
        bool events = kernel_events_drift_ok(m->kernel_events);
        unsigned sec = events ? m->config->drift_safety_net_sec : m->config->drift_check_sec;
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
int manager_arm_drift_timer(Manager *m) {
        return manager_arm_period(m, &m->timers.drift, manager_drift_period_usec(m), on_drift_timer);
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
        m->drift_refresh = !source_armed(m->timers.recheck_defer) && !source_armed(m->timers.recheck);
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

int manager_arm_guest_timer(Manager *m) {
        bool events = kernel_events_drift_ok(m->kernel_events);
        uint64_t period = events ? (uint64_t) m->config->drift_check_sec * 1000000 : 0;
        return manager_arm_period(m, &m->timers.guest, period, on_guest_timer);
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

int manager_kernel_events_start(Manager *m) {
        return kernel_events_start(m->kernel_events, m->event, m->root, m->config->bpf);
}

/* The repairs that the drift events asked for go with them. */
void manager_kernel_events_stop(Manager *m) {
        m->timers.repair = sd_event_source_disable_unref(m->timers.repair);
        m->timers.repair_defer = sd_event_source_disable_unref(m->timers.repair_defer);
        kernel_events_stop(m->kernel_events);
}

/* The drift events stopped working: the drift check goes back to its short period at once. */
void manager_drift_events_failed(Manager *m) {
        int r;

        if (!m->event || !m->timers.drift)
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
 * events do not wait, see manager_on_kernel_event().
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

static int manager_arm_recheck_timer(Manager *m, uint64_t usec) {
        int r;

        if (!m->timers.recheck)
                return sd_event_add_time(m->event, &m->timers.recheck, CLOCK_MONOTONIC, usec, 1000, on_recheck_timer, m);
        r = sd_event_source_set_time(m->timers.recheck, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->timers.recheck, SD_EVENT_ONESHOT);
        return r;
}

/*
 * A device, link or ethtool event runs a cycle at once. A new VF's vectors sit on every CPU,
 * the RT CPUs included, until a cycle pins them. A fixed wait of 10 ms would be half of the
 * reaction time. Still, one cycle per event would be too many: a PF that creates 64 VFs sends
 * hundreds of events. So the cycle is a deferred event source with a lower priority than the
 * monitors' fds, and every event already received is read before it runs. The events that
 * arrive while it runs arm it once more, for one more cycle. That cycle starts at once, or
 * when manager_event_due() says, in a storm. A cycle re-reads everything, so it covers every
 * event that came before it.
 */
void manager_on_kernel_event(const char *what, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec(), due = manager_event_due(m), until;
        int r;

        /*
         * While a VF's driver probes it, the cycle waits for the VF's "bind" event. At that
         * event, hotplug.c pins the VF's vectors before the cycle runs.
         */
        if (hotplug_waiting(&m->hotplug, now, &until)) {
                uint64_t when = UINT64_MAX;

                if (source_armed(m->timers.recheck_defer))
                        (void) sd_event_source_set_enabled(m->timers.recheck_defer, SD_EVENT_OFF);
                if (m->timers.recheck && source_armed(m->timers.recheck))
                        (void) sd_event_source_get_time(m->timers.recheck, &when);
                log_debug("Kernel event %s: the re-check waits for VF %s's driver", what, pci_set_get(&m->hotplug.probing, 0));
                if (when > until) {
                        r = manager_arm_recheck_timer(m, until);
                        if (r < 0)
                                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
                }
                return;
        }
        if (source_armed(m->timers.recheck_defer)) {
                log_debug("Kernel event %s: a re-check is already due", what);
                return;
        }
        if (now < due) {
                uint64_t when = UINT64_MAX;

                if (m->timers.recheck && source_armed(m->timers.recheck))
                        (void) sd_event_source_get_time(m->timers.recheck, &when);
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
        if (!m->timers.recheck_defer) {
                r = sd_event_add_defer(m->event, &m->timers.recheck_defer, on_recheck, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(m->timers.recheck_defer, SD_EVENT_PRIORITY_NORMAL + 1);
                if (r < 0)
                        m->timers.recheck_defer = sd_event_source_unref(m->timers.recheck_defer);
        } else
                r = sd_event_source_set_enabled(m->timers.recheck_defer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
}

static bool manager_repair_at_once(Manager *m, uint64_t now);

static int on_repair(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        if (manager_repair_at_once(m, now_usec()))
                return 0;
        m->refresh_only = m->drift_refresh = true;
        (void) manager_run_cycle(m);
        m->refresh_only = m->drift_refresh = false;
        manager_notify_status(m, "");
        return 0;
}

static int on_repair_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return on_repair(s, userdata);
}

bool manager_cycle_due(const Manager *m) {
        return source_armed(m->timers.recheck_defer) || source_armed(m->timers.recheck) ||
               source_armed(m->timers.repair_defer) || source_armed(m->timers.repair) || m->timers.retry_usec > 0;
}

/* The repair without a cycle, see manager-repair.c, which counts as a start. */
static bool manager_repair_at_once(Manager *m, uint64_t now) {
        if (!manager_repair_named(m))
                return false;
        manager_note_start(m, now);
        return true;
}

/*
 * A drift event runs a repair at once, after the monitors' events already waiting are read. The
 * repair needs no cycle when the last cycle left the named IRQs as planned and nothing else is
 * due, see manager-repair.c. Otherwise it is a cycle that reads only what the events named.
 * Like the other kernel events, these repairs start at a bounded rate, see manager_event_due().
 * So a process that keeps writing cannot keep the loop busy.
 */
void manager_repair_soon(Manager *m) {
        uint64_t now = now_usec(), when = manager_event_due(m);
        int r;

        if (source_armed(m->timers.recheck_defer))
                return;   /* A full re-check is due, and it reads these too. */
        if (source_armed(m->timers.repair_defer) || source_armed(m->timers.repair))
                return;
        /*
         * The repair runs right here when no monitor has events waiting in this wakeup. A
         * deferred source would cost one more turn of the loop, half a millisecond in an
         * emulated guest. Otherwise it waits for them, because a device event may arm a full
         * re-check.
         */
        if (now >= when && !monitors_pending(m->monitors) && manager_repair_at_once(m, now))
                return;
        /* At once unless a storm is held back: a timer would add the timer's own latency, which
         * is milliseconds in an emulated guest. */
        if (now >= when) {
                if (!m->timers.repair_defer) {
                        r = sd_event_add_defer(m->event, &m->timers.repair_defer, on_repair, m);
                        if (r >= 0)
                                r = sd_event_source_set_priority(m->timers.repair_defer, SD_EVENT_PRIORITY_NORMAL + 1);
                } else
                        r = sd_event_source_set_enabled(m->timers.repair_defer, SD_EVENT_ONESHOT);
        } else if (!m->timers.repair) {
                r = sd_event_add_time(m->event, &m->timers.repair, CLOCK_MONOTONIC, when, 1, on_repair_timer, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(m->timers.repair, SD_EVENT_PRIORITY_NORMAL + 1);
        } else {
                r = sd_event_source_set_time(m->timers.repair, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->timers.repair, SD_EVENT_ONESHOT);
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
        if (source_armed(m->timers.recheck) || source_armed(m->timers.recheck_defer))
                return;   /* A re-check is already due. */
        /* Tests and operators grep for these words. */
        log_info("Re-checking after kernel event: %s", why);
        r = manager_arm_recheck_timer(m, now_usec() + RECHECK_DELAY_USEC);
        if (r < 0)
                log_warning_errno(r, "Failed to schedule a re-check, the drift timer will catch up: %m");
}

void manager_recheck_now(Manager *m, const char *why) {
        if (m->event)
                manager_on_kernel_event(why, m);
}

/* ---- Loading and reloading the config, and the alert rules that it sets ---- */

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
        host_memory_forget_refusals(&m->host);
        /* The tenant classes may have changed, so the tenants are placed again under the new ones. */
        m->tenants_configured = false;
        guests_set_uri(m->guests, c->libvirt_uri);
        return 0;
}

int manager_reload(Manager *m, char **ret_errors) {
        bool bpf;
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
        /* The RT CPUs may have changed with the config, so the host check runs again. */
        manager_log_rt_host(m);
        /* So may the classes' rates, which the virtio NICs in the guests carry. */
        guests_reconcile_soon(m->guests);
        /* bpf = changed: load the programs, or unload them, as the daemon would at start. */
        if (kernel_events_started(m->kernel_events, &bpf) && bpf != (m->config->bpf > 0)) {
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

void manager_metrics_sampled(Manager *m, MetricSnapshot *s) {
        int r;

        if (m->host_check) {
                _cleanup_(metric_snapshot_done) MetricSnapshot checks = {};

                r = host_check_metrics(m->host_check, &checks);
                if (r >= 0)
                        r = metric_snapshot_append(s, &checks);
                if (r < 0)
                        log_full_errno(LOG_DEBUG, r, NULL, "Adding the host check to the metrics failed, leaving it out: %m");
        }
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
