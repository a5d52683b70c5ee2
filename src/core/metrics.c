/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.c — one sampling period's values: building and ordering them */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/metrics.h"
#include "sriovd/util.h"

const char *metric_label_name_to_string(MetricLabelName n) {
        static const char *const table[_METRIC_LABEL_MAX] = {
                [METRIC_LABEL_PF] = "pf",         [METRIC_LABEL_VF] = "vf",   [METRIC_LABEL_TENANT] = "tenant",
                [METRIC_LABEL_CLASS] = "class",   [METRIC_LABEL_CPU] = "cpu", [METRIC_LABEL_IRQ] = "irq",
                [METRIC_LABEL_NODE] = "node",     [METRIC_LABEL_THREAD] = "thread",
        };
        return (unsigned) n < _METRIC_LABEL_MAX ? table[n] : NULL;
}

void metric_snapshot_done(MetricSnapshot *s) {
        free(s->samples);
        *s = (MetricSnapshot) {};
}

int metric_snapshot_add(MetricSnapshot *s, const char *name, MetricKind kind, double value,
                        const MetricLabel *labels, unsigned n_labels) {
        MetricSample *m;

        if (n_labels > METRIC_LABELS_MAX)
                return -E2BIG;
        if (GREEDY_REALLOC(s->samples, s->allocated, s->n_samples + 1) < 0)
                return -ENOMEM;
        m = &s->samples[s->n_samples++];
        *m = (MetricSample) { .name = name, .kind = kind, .value = value, .n_labels = n_labels };
        memcpy_safe(m->labels, labels, n_labels * sizeof(MetricLabel));
        return 0;
}

const char *metric_sample_label(const MetricSample *m, MetricLabelName n) {
        for (unsigned i = 0; i < m->n_labels; i++)
                if (m->labels[i].name == n)
                        return m->labels[i].value;
        return NULL;
}

static int sample_cmp(const void *x, const void *y) {
        const MetricSample *a = x, *b = y;
        /* Names are static strings: one family's samples share the pointer, which saves the
         * strcmp() of a 30-character name in most of a period's 150,000 comparisons. */
        int c = a->name == b->name ? 0 : strcmp(a->name, b->name);

        for (unsigned i = 0; !c && i < MIN(a->n_labels, b->n_labels); i++) {
                c = (a->labels[i].name > b->labels[i].name) - (a->labels[i].name < b->labels[i].name);
                if (!c)
                        c = strcmp(a->labels[i].value, b->labels[i].value);
        }
        return c ?: (a->n_labels > b->n_labels) - (a->n_labels < b->n_labels);
}

void metric_snapshot_sort(MetricSnapshot *s) {
        qsort_safe(s->samples, s->n_samples, sizeof(MetricSample), sample_cmp);
}
