/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-config.c — loading and reloading the config, and the alert rules that it sets */

#include "manager-internal.h"

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
