/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alerts.c — alert rules that check each period's metrics and log each raise and clear once */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/alert-metrics.h"
#include "sriovd/shared/util.h"
#include "base/log.h"
#include "alerts.h"

typedef struct Subject {
        MetricLabel labels[METRIC_LABELS_MAX];
        unsigned n_labels;
        AlertState state;
        double value;              /* the value that raised the alert while it is active, else the last value */
        uint64_t since_usec;
        unsigned seen;             /* the generation of the last feed that held this subject */
        const char *family;        /* the family it was watched in: the rule's metric or its fallback */
} Subject;

typedef struct RuleState {
        AlertPolicy policy;
        Subject *subjects;         /* sorted by labels */
        size_t n_subjects, allocated_subjects;
        uint64_t n_raised;         /* raised under this rule's name since the daemon started */
} RuleState;

struct Alerts {
        RuleState *rules;
        size_t n_rules;
        unsigned generation;
        AlertsEventFn event_fn;
        void *event_userdata;
};

const char *alert_clear_reason_to_string(AlertClearReason r) {
        static const char *const table[_ALERT_CLEAR_MAX] = {
                [ALERT_CLEAR_BACK] = "back",
                [ALERT_CLEAR_GONE] = "gone",
                [ALERT_CLEAR_RULE_CHANGED] = "rule-changed",
                [ALERT_CLEAR_RULE_DISABLED] = "rule-disabled",
                [ALERT_CLEAR_RULE_REMOVED] = "rule-removed",
        };
        return (unsigned) r < _ALERT_CLEAR_MAX ? table[r] : "unknown";
}

int alerts_new(Alerts **ret) {
        Alerts *a = calloc(1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        *ret = a;
        return 0;
}

static void rule_state_done(RuleState *r) {
        free(r->subjects);
        r->subjects = NULL;
        r->n_subjects = r->allocated_subjects = 0;
}

Alerts *alerts_free(Alerts *a) {
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n_rules; i++)
                rule_state_done(&a->rules[i]);
        free(a->rules);
        free(a);
        return NULL;
}

void alerts_set_event_fn(Alerts *a, AlertsEventFn fn, void *userdata) {
        a->event_fn = fn;
        a->event_userdata = userdata;
}

/* Returns the subject's index. If it is absent, sets *found to false and returns where it belongs. */
static size_t subject_find(const RuleState *r, const MetricSample *m, bool *found) {
        size_t lo = 0, hi = r->n_subjects;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = metric_labels_sample_cmp(r->subjects[mid].labels, r->subjects[mid].n_labels, m);

                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

/* Each transition gets one journal entry, because that entry is what an operator searches for.
 * The message ID lets journalctl -x explain it. */
static void alert_log(const AlertPolicy *p, const Subject *s, bool raised, AlertClearReason reason) {
        char fields[LOG_EXTRA_MAX][ALERT_METRIC_MAX + METRIC_LABEL_VALUE_MAX + 24];
        const char *extra[LOG_EXTRA_MAX + 1];
        const char *pf = NULL, *vf = NULL, *tenant = NULL;
        char subject[METRIC_LABELS_MAX * (METRIC_LABEL_VALUE_MAX + 12)] = "";
        size_t n = 0, k = 0;
        int irq = -1;

#define EXTRA(fmt, ...)                                                                 \
        do {                                                                            \
                if (n < LOG_EXTRA_MAX) {                                                \
                        snprintf(fields[n], sizeof(fields[n]), fmt, __VA_ARGS__);       \
                        extra[n] = fields[n];                                           \
                        n++;                                                            \
                }                                                                       \
        } while (0)
        EXTRA("SRIOVD_ALERT=%s", p->name);
        EXTRA("SRIOVD_METRIC=%s", s->family ?: p->metric);
        EXTRA("SRIOVD_VALUE=%g", s->value);
        EXTRA("SRIOVD_THRESHOLD=%g", p->rule.threshold);
        EXTRA("SRIOVD_CLEAR=%g", p->rule.clear);
        EXTRA("SRIOVD_DIRECTION=%s", alert_direction_to_string(p->rule.direction));
        EXTRA("SRIOVD_PERIODS=%u", p->rule.periods ?: ALERT_PERIODS_DEFAULT);
        if (!raised)
                EXTRA("SRIOVD_REASON=%s", alert_clear_reason_to_string(reason));
        for (unsigned i = 0; i < s->n_labels; i++) {
                const MetricLabel *l = &s->labels[i];
                const char *name = metric_label_name_to_string(l->name);

                strjoin_appendf(subject, sizeof(subject), &k, "%s=%s", name, l->value);
                /* Every sriovd entry uses the same fields for these labels, so one journalctl query finds all. */
                switch (l->name) {
                case METRIC_LABEL_PF:
                        pf = l->value;
                        break;
                case METRIC_LABEL_VF:
                        vf = l->value;
                        break;
                case METRIC_LABEL_TENANT:
                        tenant = l->value;
                        break;
                case METRIC_LABEL_IRQ:
                        irq = atoi(l->value);
                        break;
                default: {
                        char upper[16];
                        size_t j;

                        for (j = 0; name[j] && j < sizeof(upper) - 1; j++)
                                upper[j] = (char) (name[j] - 'a' + 'A');
                        upper[j] = 0;
                        EXTRA("SRIOVD_%s=%s", upper, l->value);
                        break;
                }
                }
        }
#undef EXTRA
        extra[n] = NULL;

        if (raised)
                log_full_errno(LOG_WARNING, 0,
                               LOG_FIELDS(.message_id = SRIOVD_MESSAGE_ALERT_RAISED, .pf = pf, .vf = vf,
                                          .tenant = tenant, .irq = irq, .extra = extra),
                               "Alert %s raised: %s = %g %s %g for %u periods (%s)", p->name, s->family ?: p->metric, s->value,
                               alert_direction_to_string(p->rule.direction), p->rule.threshold,
                               p->rule.periods ?: ALERT_PERIODS_DEFAULT, subject[0] ? subject : "no labels");
        else
                log_full_errno(LOG_NOTICE, 0,
                               LOG_FIELDS(.message_id = SRIOVD_MESSAGE_ALERT_CLEARED, .pf = pf, .vf = vf,
                                          .tenant = tenant, .irq = irq, .extra = extra),
                               "Alert %s cleared (%s): %s = %g (%s)", p->name, alert_clear_reason_to_string(reason),
                               s->family ?: p->metric, s->value, subject[0] ? subject : "no labels");
}

static void alert_tell(Alerts *a, const AlertPolicy *p, const Subject *s, bool raised, AlertClearReason reason) {
        AlertInfo info = {
                .policy = p,
                .labels = s->labels,
                .n_labels = s->n_labels,
                .value = s->value,
                .since_usec = s->since_usec,
        };

        alert_log(p, s, raised, reason);
        if (a->event_fn)
                a->event_fn(&info, raised, reason, a->event_userdata);
}

static void rule_clear_all(Alerts *a, RuleState *r, AlertClearReason reason) {
        for (size_t i = 0; i < r->n_subjects; i++)
                if (r->subjects[i].state.active) {
                        r->subjects[i].state.active = false;
                        alert_tell(a, &r->policy, &r->subjects[i], false, reason);
                }
}

int alerts_set_rules(Alerts *a, const AlertPolicy *rules, size_t n) {
        RuleState *next;

        next = calloc(MAX(n, (size_t) 1), sizeof(RuleState));
        if (!next)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                next[i].policy = rules[i];
                for (size_t j = 0; j < a->n_rules; j++) {
                        RuleState *old = &a->rules[j];

                        if (!streq(old->policy.name, rules[i].name))
                                continue;
                        /* The counter belongs to the rule's name.
                         * A dashboard sees a rule with a changed threshold as the same alert. */
                        next[i].n_raised = old->n_raised;
                        if (!old->subjects)
                                break;
                        if (alert_policy_equal(&old->policy, &rules[i])) {
                                /* An unchanged rule keeps its subjects in the state they had. */
                                next[i].subjects = TAKE_PTR(old->subjects);
                                next[i].n_subjects = old->n_subjects;
                                next[i].allocated_subjects = old->allocated_subjects;
                                old->n_subjects = old->allocated_subjects = 0;
                        } else
                                rule_clear_all(a, old, rules[i].enabled ? ALERT_CLEAR_RULE_CHANGED
                                                                        : ALERT_CLEAR_RULE_DISABLED);
                        break;
                }
        }
        /* An alert still active here belongs to a rule that the new set no longer has. */
        for (size_t j = 0; j < a->n_rules; j++) {
                rule_clear_all(a, &a->rules[j], ALERT_CLEAR_RULE_REMOVED);
                rule_state_done(&a->rules[j]);
        }
        free(a->rules);
        a->rules = next;
        a->n_rules = n;
        return 0;
}

/* Sums the gate metric's samples that agree with m on every label they share. NaN samples count as nothing. */
static double gate_value(const MetricSnapshot *s, const char *gate, const MetricSample *m) {
        double sum = 0;

        for (size_t i = 0; i < s->n_samples; i++) {
                const MetricSample *g = &s->samples[i];
                bool agree = true;

                if (!streq(g->name, gate) || isnan(g->value))
                        continue;
                for (unsigned j = 0; j < g->n_labels && agree; j++) {
                        const char *v = metric_sample_label(m, g->labels[j].name);
                        agree = !v || streq(v, g->labels[j].value);
                }
                if (agree)
                        sum += g->value;
        }
        return sum;
}

static int rule_feed(Alerts *a, RuleState *r, const MetricSnapshot *s) {
        const AlertPolicy *p = &r->policy;
        const char *family = alert_policy_family(p, s);
        int n = 0;

        for (size_t i = 0; i < s->n_samples; i++) {
                const MetricSample *m = &s->samples[i];
                AlertTransition t;
                Subject *sub;
                double v;
                bool found;
                size_t at;

                if (!alert_policy_matches_family(p, family, m))
                        continue;
                at = subject_find(r, m, &found);
                if (!found) {
                        if (GREEDY_REALLOC(r->subjects, r->allocated_subjects, r->n_subjects + 1) < 0)
                                return -ENOMEM;
                        memmove(r->subjects + at + 1, r->subjects + at, (r->n_subjects - at) * sizeof(Subject));
                        r->n_subjects++;
                        sub = &r->subjects[at];
                        *sub = (Subject) { .n_labels = m->n_labels, .family = m->name };
                        for (unsigned k = 0; k < m->n_labels; k++) {
                                sub->labels[k].name = m->labels[k].name;
                                strscpy(sub->labels[k].value, sizeof(sub->labels[k].value), m->labels[k].value);
                        }
                } else
                        sub = &r->subjects[at];
                /* A subject that appears twice in one snapshot is one measurement, not two periods. */
                if (found && sub->seen == a->generation)
                        continue;
                sub->seen = a->generation;

                v = m->value;
                /* A gate that sums to zero means that the condition does not hold.
                 * It breaks a run of periods and counts towards clearing. */
                if (p->gate[0] && !isnan(v) && !(gate_value(s, p->gate, m) > 0))
                        v = p->rule.direction == ALERT_ABOVE ? -INFINITY : INFINITY;
                t = alert_feed(&p->rule, &sub->state, v);
                if (t == ALERT_RAISED) {
                        r->n_raised++;
                        sub->value = m->value;
                        sub->since_usec = s->timestamp_usec;
                        alert_tell(a, p, sub, true, ALERT_CLEAR_BACK);
                        n++;
                } else if (t == ALERT_CLEARED) {
                        sub->value = m->value;
                        alert_tell(a, p, sub, false, ALERT_CLEAR_BACK);
                        n++;
                } else if (!sub->state.active)
                        sub->value = m->value;
        }

        /* A subject that is missing from this snapshot is gone, so its alert clears. */
        for (size_t i = 0; i < r->n_subjects;) {
                Subject *sub = &r->subjects[i];

                if (sub->seen == a->generation) {
                        i++;
                        continue;
                }
                if (sub->state.active) {
                        sub->state.active = false;
                        alert_tell(a, p, sub, false, ALERT_CLEAR_GONE);
                        n++;
                }
                memmove(sub, sub + 1, (r->n_subjects - i - 1) * sizeof(Subject));
                r->n_subjects--;
        }
        return n;
}

int alerts_feed(Alerts *a, const MetricSnapshot *s) {
        int n = 0, k;

        /* A new subject starts with seen at 0, so no feed may use 0 as its generation. */
        if (++a->generation == 0)
                a->generation = 1;
        for (size_t i = 0; i < a->n_rules; i++) {
                if (!a->rules[i].policy.enabled)
                        continue;
                k = rule_feed(a, &a->rules[i], s);
                if (k < 0)
                        return k;
                n += k;
        }
        return n;
}

size_t alerts_n_active(const Alerts *a) {
        size_t n = 0;

        for (size_t i = 0; i < a->n_rules; i++)
                for (size_t j = 0; j < a->rules[i].n_subjects; j++)
                        n += a->rules[i].subjects[j].state.active;
        return n;
}

int alerts_get_active(const Alerts *a, size_t k, AlertInfo *ret) {
        for (size_t i = 0; i < a->n_rules; i++)
                for (size_t j = 0; j < a->rules[i].n_subjects; j++) {
                        const Subject *s = &a->rules[i].subjects[j];

                        if (!s->state.active || k-- > 0)
                                continue;
                        *ret = (AlertInfo) {
                                .policy = &a->rules[i].policy,
                                .labels = s->labels,
                                .n_labels = s->n_labels,
                                .value = s->value,
                                .since_usec = s->since_usec,
                        };
                        return 0;
                }
        return -ERANGE;
}

size_t alerts_n_rules(const Alerts *a) {
        return a->n_rules;
}

const AlertPolicy *alerts_rule(const Alerts *a, size_t i) {
        return i < a->n_rules ? &a->rules[i].policy : NULL;
}

int alerts_export(const Alerts *a, MetricSnapshot *s) {
        _cleanup_(metric_snapshot_done) MetricSnapshot add = {};
        int r = 0;

        for (size_t i = 0; r >= 0 && i < a->n_rules; i++) {
                const RuleState *rs = &a->rules[i];

                if (!rs->policy.enabled)
                        continue;
                r = alert_metrics_add_raised(&add, rs->policy.name, rs->n_raised);
                for (size_t j = 0; r >= 0 && j < rs->n_subjects; j++)
                        if (rs->subjects[j].state.active)
                                r = alert_metrics_add_active(&add, rs->policy.name, rs->subjects[j].labels,
                                                             rs->subjects[j].n_labels);
        }
        if (r < 0)
                return r;
        /* The rules are in config order, not in name order. So the few alert samples are sorted here.
         * They then go after the period's own samples. */
        metric_snapshot_sort(&add);
        return metric_snapshot_append(s, &add);
}
