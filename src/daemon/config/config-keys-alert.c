/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-keys-alert.c — how the keys of an [alert NAME] section are read */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/alert-metrics.h"
#include "config-internal.h"

static AlertLines *alert_lines(Parser *p) {
        /* A scratch section's keys are checked, but their lines are not kept. */
        return p->scratch ? NULL : &p->alert_lines[p->alert_index];
}

int key_alert_metric(Parser *p, const KeyDef *k, const char *value, void *data) {
        AlertPolicy *a = data;
        AlertLines *l = alert_lines(p);

        if (!alert_metric_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid metric name; expected [a-zA-Z_:][a-zA-Z0-9_:]*, at most %d characters, e.g. sriovd_vf_drop_rate",
                                    k->name, Q(value), ALERT_METRIC_MAX - 1);
        if (alert_metrics_family(value))
                return parser_error(p, "%s = %s is made from the alert rules' own outcomes after they are checked; no rule can watch it",
                                    k->name, value);
        strcpy(a->metric, value);
        if (l)
                l->metric = p->line;
        return 0;
}

/* A metric name that a rule reads besides its own: a gate or a fallback. Empty removes a built-in one. */
static int alert_other_metric(Parser *p, const KeyDef *k, const char *value, char *dst) {
        if (value[0] && !alert_metric_name_valid(value))
                return parser_error(p, "%s = \"%s\" is not a valid metric name; expected [a-zA-Z_:][a-zA-Z0-9_:]*, at most %d characters, or nothing",
                                    k->name, Q(value), ALERT_METRIC_MAX - 1);
        if (alert_metrics_family(value))
                return parser_error(p, "%s = %s is made from the alert rules' own outcomes after they are checked; no rule can watch it",
                                    k->name, value);
        strcpy(dst, value);
        return 0;
}

int key_alert_gate(Parser *p, const KeyDef *k, const char *value, void *data) {
        return alert_other_metric(p, k, value, ((AlertPolicy *) data)->gate);
}

int key_alert_fallback(Parser *p, const KeyDef *k, const char *value, void *data) {
        return alert_other_metric(p, k, value, ((AlertPolicy *) data)->fallback);
}

/* Accepts a decimal number, optionally with a fraction or exponent. "inf", "nan" and hex floats are mistakes. */
int key_alert_level(Parser *p, const KeyDef *k, const char *value, void *data) {
        AlertPolicy *a = data;
        AlertLines *l = alert_lines(p);
        const char *digits = value + (value[0] == '-' || value[0] == '+');
        char *end;
        double d;

        errno = 0;
        d = strtod(value, &end);
        if (!(isdigit((unsigned char) digits[0]) || (digits[0] == '.' && isdigit((unsigned char) digits[1]))) ||
            strpbrk(value, "xXpP") || *end || errno == ERANGE || !isfinite(d))
                return parser_error(p, "%s = \"%s\" is not a number; expected a decimal number such as 10, 0.85 or 1e6",
                                    k->name, Q(value));
        if (streq(k->name, "threshold")) {
                a->rule.threshold = d;
                /* The operator's threshold wins over the one that [daemon] vf_target_utilization gives. */
                a->follows_target = false;
                if (l)
                        l->threshold = p->line;
        } else {
                a->rule.clear = d;
                if (l)
                        l->clear = p->line;
        }
        return 0;
}

int key_alert_enabled(Parser *p, const KeyDef *k, const char *value, void *data) {
        int b = 0, r;

        r = key_bool(p, &(KeyDef) { .name = k->name, .offset = 0 }, value, &b);
        if (r >= 0)
                ((AlertPolicy *) data)->enabled = b;
        return r;
}

/* A label filter is a glob on that label's value. Each label has one filter, which replaces a built-in rule's. */
int key_alert_filter(Parser *p, const KeyDef *k, const char *value, void *data) {
        AlertPolicy *a = data;
        int label = metric_label_name_from_string(k->name);
        unsigned i;

        if (label < 0)
                return parser_error(p, "%s is not a metric label", k->name);
        if (!value[0] || strlen(value) >= ALERT_FILTER_MAX || has_control_chars(value))
                return parser_error(p, "%s = \"%s\" is not a valid label filter; expected a value or a glob such as web-*, at most %d characters",
                                    k->name, Q(value), ALERT_FILTER_MAX - 1);
        for (i = 0; i < a->n_filters; i++)
                if (a->filters[i].label == (MetricLabelName) label)
                        break;
        if (i == a->n_filters)
                a->n_filters++;
        a->filters[i].label = (MetricLabelName) label;
        strcpy(a->filters[i].pattern, value);
        return 0;
}
