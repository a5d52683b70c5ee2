/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-irqs.c — the NIC IRQs: who owns each, its interrupts per CPU, and the interference on RT CPUs */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/plan.h"
#include "sampler-internal.h"

static int owner_cmp(const void *a, const void *b) {
        const IrqOwner *x = a, *y = b;
        return (x->irq > y->irq) - (x->irq < y->irq);
}

static bool class_is_rt(const Config *cfg, const char *name) {
        return tenant_class_is_rt(cfg && name ? config_find_class(cfg, name) : NULL);
}

static bool irq_on_rt(const Irq *q, const CpuSet *rt) {
        CpuSet both;

        /*
         * An irq/N- thread runs where its IRQ is delivered. The kernel's
         * irq_thread_check_affinity() gives the thread the IRQ's effective affinity.
         */
        cpuset_and(&both, q->has_effective ? &q->effective : &q->affinity, rt);
        return !cpuset_is_empty(&both);
}

int irq_owners_collect(const SamplerInput *in, const CpuSet *rt, IrqOwner **ret, size_t *ret_n) {
        _cleanup_free_ IrqOwner *o = NULL;
        const Inventory *inv = in->inv;
        size_t n = 0, allocated = 0;

        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                for (size_t j = 0; j <= pf->n_vfs; j++) {
                        const Vf *vf = j < pf->n_vfs ? &pf->vfs[j] : NULL;
                        const unsigned *irqs = vf ? vf->irqs : pf->irqs;
                        size_t n_irqs = vf ? vf->n_irqs : pf->n_irqs;
                        const TenantInfo *t = vf ? sampler_tenant_of_vf(in, vf->addr) : NULL;

                        for (size_t k = 0; k < n_irqs; k++) {
                                const Irq *q = inventory_find_irq(inv, irqs[k]);

                                if (GREEDY_REALLOC(o, allocated, n + 1) < 0)
                                        return -ENOMEM;
                                o[n++] = (IrqOwner) {
                                        .irq = irqs[k], .pf = pf, .vf = vf, .tenant = t,
                                        .rt = t && class_is_rt(in->cfg, t->class_name),
                                        .on_rt = q && irq_on_rt(q, rt),
                                        .thread = q ? q->thread : 0,
                                };
                        }
                }
        }
        /* The kernel numbers the vectors of PFs and VFs in order, so the list is usually sorted already. */
        for (size_t i = 1; i < n; i++)
                if (owner_cmp(&o[i - 1], &o[i]) > 0) {
                        qsort_safe(o, n, sizeof(*o), owner_cmp);
                        break;
                }
        *ret = TAKE_PTR(o);
        *ret_n = n;
        return 0;
}

void irq_owner_labels(Labels *ls, const IrqOwner *o) {
        label(ls, METRIC_LABEL_PF, o->pf->addr);
        if (o->vf)
                label(ls, METRIC_LABEL_VF, o->vf->addr);
        if (o->tenant) {
                label(ls, METRIC_LABEL_TENANT, o->tenant->tenant);
                label(ls, METRIC_LABEL_CLASS, o->tenant->class_name);
        }
        label_u(ls, METRIC_LABEL_IRQ, o->irq);
}

void irq_table_done(IrqTable *t) {
        free(t->owner);
        free(t->rate_col);
}

int irq_table_init(IrqTable *t, const CounterTable *cur, const CounterRates *rates,
                          const IrqOwner *owners, size_t n_owners) {
        *t = (IrqTable) { .cur = cur, .rates = rates };
        t->owner = calloc(MAX(cur->n_rows, (size_t) 1), sizeof(*t->owner));
        t->rate_col = malloc(MAX(cur->n_cpus, (size_t) 1) * sizeof(*t->rate_col));
        if (!t->owner || !t->rate_col)
                return -ENOMEM;
        /*
         * Each pair of lists ascends, so one merge pairs them. The CPUs are paired first. Then the
         * rows are paired with the owners, both sorted by IRQ number.
         */
        for (size_t j = 0, k = 0; j < cur->n_cpus; j++) {
                while (rates && k < rates->n_cpus && rates->cpus[k] < cur->cpus[j])
                        k++;
                t->rate_col[j] = rates && k < rates->n_cpus && rates->cpus[k] == cur->cpus[j] ? (ssize_t) k : -1;
        }
        for (size_t i = 0, k = 0; i < cur->n_rows && cur->rows[i].irq != COUNTER_NAMED; i++) {
                while (k < n_owners && owners[k].irq < cur->rows[i].irq)
                        k++;
                if (k < n_owners && owners[k].irq == cur->rows[i].irq)
                        t->owner[i] = &owners[k];
        }
        return 0;
}

/* The rate of row i on column j, or NaN without one this period. */
static double irq_table_rate(const IrqTable *t, size_t i, size_t j) {
        if (!t->rates || i >= t->rates->n_rows || t->rates->reset[i] || t->rate_col[j] < 0)
                return NAN;
        return counter_rates_value(t->rates, i, (size_t) t->rate_col[j]);
}

/* A NIC IRQ's row and its labels. The rows are sorted by their labels. */
typedef struct RowLabels {
        Labels ls;
        size_t row;
} RowLabels;

static int row_index_cmp(const void *x, const void *y, void *userdata) {
        const RowLabels *rows = userdata, *a = &rows[*(const size_t *) x], *b = &rows[*(const size_t *) y];
        return metric_labels_cmp(a->ls.l, a->ls.n, b->ls.l, b->ls.n);
}

/* Compare CPU numbers by their decimal text, as label values sort, so 10 comes before 2. */
static int cpu_text_cmp(const void *x, const void *y, void *userdata) {
        const unsigned *cpus = userdata;
        char a[16], b[16];

        snprintf(a, sizeof(a), "%u", cpus[*(const size_t *) x]);
        snprintf(b, sizeof(b), "%u", cpus[*(const size_t *) y]);
        return strcmp(a, b);
}

int sampler_irqs(Sampler *s, MetricSnapshot *snap, const IrqTable *t) {
        const CounterTable *cur = t->cur;
        _cleanup_free_ RowLabels *rows = NULL;
        _cleanup_free_ size_t *cols = NULL, *rank = NULL, *run = NULL, *order = NULL;
        _cleanup_free_ uint32_t *irqs = NULL;
        size_t n_rows = 0;
        int r;

        /*
         * The samples are made in the order in which they sort: rows by their labels, and CPUs by
         * their text. So the two families need no sort of their 8,336 samples on the large host,
         * only a check.
         */
        rows = malloc(MAX(cur->n_rows, (size_t) 1) * sizeof(*rows));
        irqs = malloc(MAX(cur->n_rows, (size_t) 1) * sizeof(*irqs));
        cols = malloc(MAX(cur->n_cpus, (size_t) 1) * sizeof(*cols));
        rank = malloc(MAX(cur->n_cpus, (size_t) 1) * sizeof(*rank));
        run = malloc(MAX(cur->n_cpus, (size_t) 1) * sizeof(*run));
        if (!rows || !irqs || !cols || !rank || !run)
                return -ENOMEM;
        for (size_t j = 0; j < cur->n_cpus; j++)
                cols[j] = j;
        qsort_r(cols, cur->n_cpus, sizeof(*cols), cpu_text_cmp, cur->cpus);
        for (size_t c = 0; c < cur->n_cpus; c++)
                rank[cols[c]] = c;
        for (size_t i = 0; i < cur->n_rows && cur->rows[i].irq != COUNTER_NAMED; i++) {
                if (!t->owner[i])
                        continue;
                rows[n_rows] = (RowLabels) { .row = i };
                irq_owner_labels(&rows[n_rows].ls, t->owner[i]);
                irqs[n_rows++] = cur->rows[i].irq;
        }
        /*
         * With the same IRQs as last period, reuse last period's order instead of sorting 4,168
         * label lists again. When a tenant came or went, the labels changed, and a family may be
         * out of order. metric_snapshot_sort() then sorts it. So the result is never wrong, only
         * slower once.
         */
        if (s->order && s->n_order == n_rows && memcmp(s->order_irqs, irqs, n_rows * sizeof(*irqs)) == 0)
                order = TAKE_PTR(s->order);
        else {
                order = malloc(MAX(n_rows, (size_t) 1) * sizeof(*order));
                if (!order)
                        return -ENOMEM;
                for (size_t k = 0; k < n_rows; k++)
                        order[k] = k;
                qsort_r(order, n_rows, sizeof(*order), row_index_cmp, rows);
                free(s->order_irqs);
                s->order_irqs = TAKE_PTR(irqs);
                s->n_order = n_rows;
        }

        /*
         * Make one series per IRQ and per CPU that it has landed on. Those are the table's
         * entries, and the rest would be thousands of zeros. Each row's CPUs are put in the order
         * of their text. A row usually has one CPU or two.
         */
        for (size_t k = 0; k < n_rows; k++) {
                const RowLabels *row = &rows[order[k]];
                size_t i = row->row, n_run = 0;

                if (cur->first[i + 1] - cur->first[i] <= 8)
                        for (size_t e = cur->first[i]; e < cur->first[i + 1]; e++) {
                                size_t at = n_run++;
                                for (; at > 0 && rank[cur->col[run[at - 1]]] > rank[cur->col[e]]; at--)
                                        run[at] = run[at - 1];
                                run[at] = e;
                        }
                else {
                        /*
                         * An IRQ counted on many CPUs, on a host that never pinned it, is
                         * sorted by rank in one pass.
                         */
                        for (size_t c = 0; c < cur->n_cpus; c++)
                                run[c] = SIZE_MAX;
                        for (size_t e = cur->first[i]; e < cur->first[i + 1]; e++)
                                run[rank[cur->col[e]]] = e;
                        for (size_t c = 0; c < cur->n_cpus; c++)
                                if (run[c] != SIZE_MAX)
                                        run[n_run++] = run[c];
                }
                for (size_t x = 0; x < n_run; x++) {
                        size_t j = cur->col[run[x]];
                        uint64_t v = cur->values[run[x]];
                        Labels ls;

                        ls = row->ls;
                        label_u(&ls, METRIC_LABEL_CPU, cur->cpus[j]);
                        r = sampler_add(snap, "sriovd_irq_interrupts_total", METRIC_COUNTER, (double) v, &ls);
                        if (r >= 0)
                                r = sampler_add(snap, "sriovd_irq_rate", METRIC_GAUGE, irq_table_rate(t, i, j), &ls);
                        if (r < 0)
                                goto finish;
                }
        }
        r = 0;
finish:
        free(s->order);
        s->order = TAKE_PTR(order);
        return r;
}

/*
 * Interference on RT cores: the interrupts per second on each RT CPU from device IRQs that no RT
 * tenant owns. An RT tenant is one whose class puts IRQs or vCPUs on RT CPUs. Every IRQ of the
 * host counts, except the VF vectors of RT tenants. The named rows, such as LOC, RES, CAL and
 * TLB, are the CPU's own timer and IPIs, which no IRQ affinity moves. Each named row is a series
 * of its own, so that a rule may count them or not.
 */
int sampler_rt(MetricSnapshot *snap, const IrqTable *t, const CpuSet *rt) {
        const CounterTable *cur = t->cur;
        const CounterRates *rates = t->rates;
        _cleanup_free_ double *sum = NULL;
        _cleanup_free_ size_t *cols = NULL;
        _cleanup_free_ ssize_t *slot = NULL;
        size_t n_cols = 0;
        int r;

        sum = calloc(MAX(cur->n_cpus, (size_t) 1), sizeof(*sum));
        cols = malloc(MAX(cur->n_cpus, (size_t) 1) * sizeof(*cols));
        slot = malloc(MAX(rates ? rates->n_cpus : 0, (size_t) 1) * sizeof(*slot));
        if (!sum || !cols || !slot)
                return -ENOMEM;
        for (size_t k = 0; rates && k < rates->n_cpus; k++)
                slot[k] = -1;
        for (size_t j = 0; j < cur->n_cpus; j++)
                if (cpuset_has(rt, cur->cpus[j])) {
                        if (rates && t->rate_col[j] >= 0)
                                slot[t->rate_col[j]] = (ssize_t) n_cols;
                        cols[n_cols++] = j;
                }
        if (n_cols == 0)
                return 0;

        /*
         * Sum each row's rates that are not zero. A row that is new this period is marked as
         * reset and has no rate yet. It counts from the next period.
         */
        for (size_t i = 0; rates && i < cur->n_rows && cur->rows[i].irq != COUNTER_NAMED; i++) {
                if ((t->owner[i] && t->owner[i]->rt) || i >= rates->n_rows || rates->reset[i])
                        continue;
                for (size_t e = rates->first[i]; e < rates->first[i + 1]; e++)
                        if (slot[rates->col[e]] >= 0)
                                sum[slot[rates->col[e]]] += rates->rates[e];
        }
        for (size_t k = 0; k < n_cols; k++) {
                size_t j = cols[k];
                Labels ls = {};

                label_u(&ls, METRIC_LABEL_CPU, cur->cpus[j]);
                for (size_t i = 0; i < cur->n_rows; i++) {
                        Labels named;

                        if (cur->rows[i].irq != COUNTER_NAMED)
                                continue;
                        named = ls;
                        label(&named, METRIC_LABEL_IRQ, cur->rows[i].name);
                        r = sampler_add(snap, "sriovd_rt_cpu_arch_interrupt_rate", METRIC_GAUGE, irq_table_rate(t, i, j), &named);
                        if (r < 0)
                                return r;
                }
                r = sampler_add(snap, "sriovd_rt_cpu_interference_rate", METRIC_GAUGE, t->rates ? sum[k] : NAN, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}
