/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-alerts.c — alerts on org.sriovd.Manager1: ActiveAlerts, StateReasons and the alert signals */

#include <stdlib.h>

#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

static int append_labels(sd_bus_message *m, const AlertInfo *a) {
        int r = sd_bus_message_open_container(m, 'a', "{ss}");

        for (unsigned i = 0; r >= 0 && i < a->n_labels; i++)
                r = sd_bus_message_append(m, "{ss}", metric_label_name_to_string(a->labels[i].name),
                                          a->labels[i].value);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int append_alert_record(sd_bus_message *m, const AlertInfo *a) {
        const AlertPolicy *p = a->policy;
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_NAME, "s", p->name);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_METRIC, "s", p->metric);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", SRIOVD_KEY_LABELS);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "a{ss}");
        if (r >= 0)
                r = append_labels(m, a);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_VALUE, "d", a->value);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_THRESHOLD, "d", p->rule.threshold);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_CLEAR, "d", p->rule.clear);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_DIRECTION, "s",
                                          alert_direction_to_string(p->rule.direction));
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_PERIODS, "u",
                                          (uint32_t) (p->rule.periods ?: ALERT_PERIODS_DEFAULT));
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", SRIOVD_KEY_SINCE, "t", a->since_usec);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_append_active_alerts(sd_bus_message *m, const Alerts *a) {
        size_t n = a ? alerts_n_active(a) : 0;
        int r = sd_bus_message_open_container(m, 'a', "a{sv}");

        for (size_t i = 0; r >= 0 && i < n; i++) {
                AlertInfo info;

                r = alerts_get_active(a, i, &info);
                if (r >= 0)
                        r = append_alert_record(m, &info);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static void strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

int bus_append_state_reasons(sd_bus_message *m, Manager *manager) {
        char **v = NULL;
        int r;

        r = manager_state_reasons(manager, &v);
        if (r >= 0)
                r = sd_bus_message_append_strv(m, v);
        strv_free(v);
        return r;
}

uint64_t bus_state_reasons_hash(Manager *manager) {
        uint64_t h = BUS_HASH_INIT;
        char **v = NULL;

        if (manager_state_reasons(manager, &v) < 0)
                return 0;
        for (size_t i = 0; v[i]; i++)
                h = bus_hash_str(h, v[i]);
        strv_free(v);
        return h;
}

void bus_on_alert(Manager *m, const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata) {
        _cleanup_message_ sd_bus_message *s = NULL;
        Bus *b = userdata;
        int r;

        if (!b->bus)
                return;   /* sriovd is off the bus. Clients read the property afresh once it is back. */
        r = sd_bus_message_new_signal(b->bus, &s, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE,
                                      raised ? "AlertRaised" : "AlertCleared");
        if (r >= 0)
                r = sd_bus_message_append(s, "ss", a->policy->name, a->policy->metric);
        if (r >= 0)
                r = append_labels(s, a);
        if (r >= 0)
                r = sd_bus_message_append(s, "d", a->value);
        if (r >= 0)
                r = raised ? sd_bus_message_append(s, "d", a->policy->rule.threshold)
                           : sd_bus_message_append(s, "s", alert_clear_reason_to_string(reason));
        if (r >= 0)
                r = sd_bus_send(b->bus, s, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to emit %s on D-Bus, ignoring: %m", raised ? "AlertRaised" : "AlertCleared");
        r = sd_bus_emit_properties_changed(b->bus, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "ActiveAlerts", NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged on D-Bus, ignoring: %m");
}
