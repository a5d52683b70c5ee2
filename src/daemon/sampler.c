/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler.c — the kernel's counters, read each period and turned into rates per NIC, tenant and CPU */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sampler-internal.h"
#include "sriovd/plan.h"
#include "sriovd/proc-counters.h"

/* The most thread stat files held open at once, whatever the fd limit. */
#define SAMPLER_THREAD_FDS_MAX 4096

/*
 * A thread that the sampler read last period: its times and its stat file. The file is kept
 * open, so that the next read is one pread() instead of a lookup of /proc/PID/task/TID/stat.
 * On the large host's tree, that measured 0.9 us per thread instead of 5.5 us.
 */
typedef struct ThreadSlot {
        ThreadTimes times;
        int fd;                          /* -EBADF when the fd budget was spent and the thread is read by path */
} ThreadSlot;

struct Sampler {
        RootFs *root;
        unsigned long ticks_per_sec;
        bool have_prev;
        uint64_t prev_usec;
        CounterTable interrupts, softirqs, cpu_times;
        ThreadSlot *threads;             /* last period's threads, sorted by tid */
        size_t n_threads;
        size_t n_fds, fd_budget;         /* the thread stat files held open, and how many may be */
        TrafficBaseline traffic;
        LatencyBaseline latency;
        /*
         * The samples of the snapshot before last, to be filled again. They take 4.6 MB on the
         * large host, and fresh pages cost more to fault in than to write.
         */
        MetricSample *spare;
        size_t spare_allocated;
        /* Last period's NIC IRQ rows, by IRQ in the table's order, and the sorted order of their labels. */
        uint32_t *order_irqs;
        size_t *order;
        size_t n_order;
};

static void thread_slots_free(ThreadSlot *t, size_t n, size_t *n_fds) {
        for (size_t i = 0; i < n; i++)
                if (t[i].fd >= 0) {
                        close(t[i].fd);
                        (*n_fds)--;
                }
        free(t);
}

int sampler_new(RootFs *root, Sampler **ret) {
        Sampler *s = calloc(1, sizeof(Sampler));
        long hz = sysconf(_SC_CLK_TCK);
        struct rlimit rl;

        if (!s)
                return -ENOMEM;
        s->root = root;
        s->ticks_per_sec = hz > 0 ? (unsigned long) hz : 100;
        /*
         * Take at most half of the soft fd limit, which systemd sets to 1024 by default. The bus,
         * udev, netlink and libvirt need fds of their own. A host with more threads to watch
         * reads the rest by path.
         */
        s->fd_budget = getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur != RLIM_INFINITY
                ? MIN((size_t) rl.rlim_cur / 2, (size_t) SAMPLER_THREAD_FDS_MAX) : SAMPLER_THREAD_FDS_MAX;
        *ret = s;
        return 0;
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        counter_table_done(&s->interrupts);
        counter_table_done(&s->softirqs);
        counter_table_done(&s->cpu_times);
        thread_slots_free(s->threads, s->n_threads, &s->n_fds);
        traffic_baseline_done(&s->traffic);
        latency_baseline_done(&s->latency);
        free(s->spare);
        free(s->order_irqs);
        free(s->order);
        free(s);
        return NULL;
}

/* Who owns an IRQ: its PF, its VF, and the tenant that holds the VF. vf is NULL for the PF's own IRQs. */
typedef struct IrqOwner {
        unsigned irq;
        const Pf *pf;
        const Vf *vf;
        const TenantInfo *tenant;
        bool rt;                         /* the tenant's class puts its IRQs or vCPUs on RT CPUs */
        bool on_rt;                      /* the IRQ lands on an RT CPU, by effective affinity or else affinity */
        pid_t thread;
} IrqOwner;

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

static int collect_owners(const SamplerInput *in, const CpuSet *rt, IrqOwner **ret, size_t *ret_n) {
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

static void label_node(Labels *ls, int node) {
        if (node >= 0)
                label_u(ls, METRIC_LABEL_NODE, (unsigned) node);
        else
                label(ls, METRIC_LABEL_NODE, "unknown");
}

static void owner_labels(Labels *ls, const IrqOwner *o) {
        label(ls, METRIC_LABEL_PF, o->pf->addr);
        if (o->vf)
                label(ls, METRIC_LABEL_VF, o->vf->addr);
        if (o->tenant) {
                label(ls, METRIC_LABEL_TENANT, o->tenant->tenant);
                label(ls, METRIC_LABEL_CLASS, o->tenant->class_name);
        }
        label_u(ls, METRIC_LABEL_IRQ, o->irq);
}

static int add(MetricSnapshot *snap, const char *name, MetricKind kind, double value, const Labels *ls) {
        return metric_snapshot_add(snap, name, kind, value, ls->l, ls->n);
}

/* The rate of row i on cpu, or NaN without one this period. Row i indexes both cur and the rates. */
static double rate_of(const CounterRates *rates, size_t i, unsigned cpu) {
        CounterTable view;
        ssize_t k;

        if (!rates || i >= rates->n_rows || rates->reset[i])
                return NAN;
        view = (CounterTable) { .cpus = rates->cpus, .n_cpus = rates->n_cpus };
        k = counter_table_find_cpu(&view, cpu);
        return k < 0 ? NAN : counter_rates_value(rates, i, (size_t) k);
}

/*
 * /proc/interrupts of one period, prepared for the two families below. Each row's owner and
 * each column's place in the rates are looked up once per period, not once per row and CPU.
 * On the large host, a lookup per row and CPU took 100,000 binary searches on the RT CPUs alone.
 */
typedef struct IrqTable {
        const CounterTable *cur;
        const CounterRates *rates;       /* NULL when there are no rates this period */
        const IrqOwner **owner;          /* per row; NULL for a named row or an IRQ that no NIC has */
        ssize_t *rate_col;               /* per column, the rates' column of the same CPU, or -1 for none */
} IrqTable;

static void irq_table_done(IrqTable *t) {
        free(t->owner);
        free(t->rate_col);
}

static int irq_table_init(IrqTable *t, const CounterTable *cur, const CounterRates *rates,
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

static int sample_irqs(Sampler *s, MetricSnapshot *snap, const IrqTable *t) {
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
                owner_labels(&rows[n_rows].ls, t->owner[i]);
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
                        r = add(snap, "sriovd_irq_interrupts_total", METRIC_COUNTER, (double) v, &ls);
                        if (r >= 0)
                                r = add(snap, "sriovd_irq_rate", METRIC_GAUGE, irq_table_rate(t, i, j), &ls);
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
static int sample_rt(MetricSnapshot *snap, const IrqTable *t, const CpuSet *rt) {
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
                        r = add(snap, "sriovd_rt_cpu_arch_interrupt_rate", METRIC_GAUGE, irq_table_rate(t, i, j), &named);
                        if (r < 0)
                                return r;
                }
                r = add(snap, "sriovd_rt_cpu_interference_rate", METRIC_GAUGE, t->rates ? sum[k] : NAN, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * A named row of a per-CPU table: its counter per CPU, and its rate. The rate is divided by per,
 * which can make it a ratio of time.
 */
typedef struct CpuRow {
        const char *row, *counter, *rate;
} CpuRow;

static int sample_cpu_rows(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates,
                           const CpuRow *rows, size_t n_rows, double per) {
        int r;

        for (size_t k = 0; k < n_rows; k++) {
                CounterRow key = { .irq = COUNTER_NAMED };
                ssize_t i;

                strscpy(key.name, sizeof(key.name), rows[k].row);
                i = counter_table_find(cur, &key);
                if (i < 0)
                        continue;
                for (size_t j = 0; j < cur->n_cpus; j++) {
                        Labels ls = {};

                        label_u(&ls, METRIC_LABEL_CPU, cur->cpus[j]);
                        r = add(snap, rows[k].counter, METRIC_COUNTER, (double) counter_table_value(cur, (size_t) i, j), &ls);
                        if (r >= 0)
                                r = add(snap, rows[k].rate, METRIC_GAUGE, rate_of(rates, (size_t) i, cur->cpus[j]) / per, &ls);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int sample_softirqs(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates) {
        static const CpuRow rows[] = {
                { "NET_RX", "sriovd_cpu_net_rx_softirqs_total", "sriovd_cpu_net_rx_softirq_rate" },
                { "NET_TX", "sriovd_cpu_net_tx_softirqs_total", "sriovd_cpu_net_tx_softirq_rate" },
        };
        return sample_cpu_rows(snap, cur, rates, rows, ELEMENTSOF(rows), 1.0);
}

/* The irq and softirq time in /proc/stat, as the share of each CPU spent there. 1.0 is the whole CPU. */
static int sample_cpu_times(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates,
                            unsigned long ticks_per_sec) {
        static const CpuRow rows[] = {
                { "irq", "sriovd_cpu_irq_ticks_total", "sriovd_cpu_irq_time_ratio" },
                { "softirq", "sriovd_cpu_softirq_ticks_total", "sriovd_cpu_softirq_time_ratio" },
        };
        return sample_cpu_rows(snap, cur, rates, rows, ELEMENTSOF(rows), (double) ticks_per_sec);
}

static int slot_cmp(const void *a, const void *b) {
        const ThreadSlot *x = a, *y = b;
        return (x->times.tid > y->times.tid) - (x->times.tid < y->times.tid);
}

/*
 * Read one thread's times. Use last period's fd when there is one, and take it out of prev.
 * The fds left in the old slots at the end are closed. Without an fd, open the path, and keep
 * the new fd while the budget lasts.
 */
static int thread_read(Sampler *s, pid_t pid, ThreadSlot *prev, ThreadSlot *ret) {
        int fd = -EBADF, r;

        if (prev && prev->fd >= 0) {
                fd = TAKE_FD(prev->fd);
                r = proc_thread_times_reread(fd, pid, pid, &ret->times);
                if (r >= 0) {
                        ret->fd = fd;
                        return 0;
                }
                /*
                 * The thread exited, with ESRCH. Its TID may be another thread's now, and only the
                 * path finds that one.
                 */
                close(fd);
                s->n_fds--;
        }
        if (s->n_fds >= s->fd_budget) {
                ret->fd = -EBADF;
                return proc_thread_times_read(s->root, pid, pid, &ret->times);
        }
        fd = proc_thread_times_open(s->root, pid, pid);
        if (fd < 0)
                return fd;
        r = proc_thread_times_reread(fd, pid, pid, &ret->times);
        if (r < 0) {
                close(fd);
                return r;
        }
        ret->fd = fd;
        s->n_fds++;
        return 0;
}

/* One thread's share of a CPU since the last period, or NaN when it is new. The thread is appended to *now. */
static int thread_share(Sampler *s, pid_t pid, uint64_t elapsed, ThreadSlot **now, size_t *n_now,
                        size_t *allocated, double *ret) {
        ThreadSlot cur, key = { .times.tid = pid };
        ThreadSlot *prev;
        int r;

        if (GREEDY_REALLOC(*now, *allocated, *n_now + 1) < 0)
                return -ENOMEM;
        prev = bsearch_safe(&key, s->threads, s->n_threads, sizeof(*s->threads), slot_cmp);
        r = thread_read(s, pid, prev, &cur);
        if (r < 0)
                return r;
        (*now)[(*n_now)++] = cur;

        *ret = NAN;
        if (prev && elapsed > 0)
                (void) thread_times_cpu_share(&prev->times, &cur.times, elapsed, s->ticks_per_sec, ret);
        return 0;
}

/*
 * Threaded NAPI: the receive work of the NAPI this IRQ schedules runs in its napi/ thread
 * instead of in softirq context. So the napi/ thread's time is part of the tenant's cost per
 * packet, next to the IRQ thread's time. A NAPI that is not paired with an IRQ has no owner
 * here and is not sampled.
 */
static int sample_napi_threads(Sampler *s, MetricSnapshot *snap, const IrqOwner *o, uint64_t elapsed,
                               ThreadSlot **now, size_t *n_now, size_t *allocated) {
        const NetdevTune *t = o->vf ? &o->vf->tune : &o->pf->tune;
        int r;

        for (size_t k = 0; t->napi_known && k < t->napi.n_napis; k++) {
                const Napi *n = &t->napi.napis[k];
                Labels ls = {};
                double v;

                if (n->irq != o->irq || n->thread <= 0)
                        continue;
                r = thread_share(s, n->thread, elapsed, now, n_now, allocated, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;   /* The thread exited after the inventory was read. */
                owner_labels(&ls, o);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) n->thread);
                r = add(snap, "sriovd_napi_thread_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int sample_threads(Sampler *s, MetricSnapshot *snap, const Inventory *inv, const IrqOwner *owners,
                          size_t n_owners, const CpuSet *rt, uint64_t elapsed) {
        ThreadSlot *now = NULL;
        size_t n_now = 0, allocated = 0;
        int r;

        for (size_t i = 0; i < n_owners; i++) {
                Labels ls = {};
                double v;

                /*
                 * Read the IRQ threads on the RT CPUs, and an RT tenant's threads wherever its IRQs
                 * are. The other threads run on housekeeping CPUs, and the irq and softirq time in
                 * /proc/stat already shows their load. On the large host, the threads read are
                 * 1,564 of 4,168. Each read is an open, an fstat, a read and a close. Reading every
                 * thread took 23 of the 27 ms that a period took.
                 */
                if (!(owners[i].rt || owners[i].on_rt))
                        continue;
                r = sample_napi_threads(s, snap, &owners[i], elapsed, &now, &n_now, &allocated);
                if (r < 0)
                        goto fail;
                if (owners[i].thread <= 0)
                        continue;
                r = thread_share(s, owners[i].thread, elapsed, &now, &n_now, &allocated, &v);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        continue;   /* The thread exited after the inventory was read. */
                owner_labels(&ls, &owners[i]);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) owners[i].thread);
                r = add(snap, "sriovd_irq_thread_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        goto fail;
        }

        /* Each RT CPU's ksoftirqd, as the inventory's walk over /proc found it. */
        for (unsigned c = 0; inv && c < CPUSET_MAX; c++) {
                const Kthread *k = cpuset_has(rt, c) ? inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, c) : NULL;
                Labels ls = {};
                double v;

                if (!k)
                        continue;
                r = thread_share(s, k->pid, elapsed, &now, &n_now, &allocated, &v);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        continue;   /* The CPU went offline. The next inventory finds its new ksoftirqd. */
                label_u(&ls, METRIC_LABEL_CPU, c);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) k->pid);
                r = add(snap, "sriovd_ksoftirqd_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        goto fail;
        }

        /* Threads not read this period give their fds back. They are gone, or off the RT CPUs now. */
        qsort_safe(now, n_now, sizeof(*now), slot_cmp);
        thread_slots_free(s->threads, s->n_threads, &s->n_fds);
        s->threads = TAKE_PTR(now);
        s->n_threads = n_now;
        return 0;

fail:
        /* The fds taken from last period's slots are in now, so close them there. The old slots keep the rest. */
        thread_slots_free(now, n_now, &s->n_fds);
        return r;
}

/* For each PF and each NUMA node: the VFs, those that tenants hold, their share, and the target share. */
static int sample_pools(MetricSnapshot *snap, const SamplerInput *in) {
        unsigned node_vfs[ALLOC_NODES_MAX + 1] = {}, node_alloc[ALLOC_NODES_MAX + 1] = {};
        bool node_seen[ALLOC_NODES_MAX + 1] = {};
        Labels none = {};
        int r;

        for (size_t i = 0; in->inv && i < in->inv->n_pfs; i++) {
                const Pf *pf = &in->inv->pfs[i];
                size_t slot = pf->numa_node >= 0 && pf->numa_node < ALLOC_NODES_MAX ? (size_t) pf->numa_node : ALLOC_NODES_MAX;
                unsigned allocated = 0;
                Labels ls = {};

                for (size_t k = 0; k < in->n_tenants; k++)
                        if (in->tenants[k].vf[0] && streq(in->tenants[k].pf, pf->addr))
                                allocated++;
                label(&ls, METRIC_LABEL_PF, pf->addr);
                label_node(&ls, pf->numa_node);
                r = add(snap, "sriovd_vf_pool_vfs", METRIC_GAUGE, (double) pf->n_vfs, &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_vf_pool_allocated", METRIC_GAUGE, allocated, &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_vf_pool_utilization_ratio", METRIC_GAUGE,
                                pf->n_vfs ? (double) allocated / (double) pf->n_vfs : 0, &ls);
                if (r < 0)
                        return r;
                node_vfs[slot] += (unsigned) pf->n_vfs;
                node_alloc[slot] += allocated;
                node_seen[slot] = true;
        }
        for (size_t slot = 0; slot <= ALLOC_NODES_MAX; slot++) {
                Labels ls = {};

                if (!node_seen[slot])
                        continue;
                label_node(&ls, slot < ALLOC_NODES_MAX ? (int) slot : -1);
                r = add(snap, "sriovd_vf_node_vfs", METRIC_GAUGE, node_vfs[slot], &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_vf_node_allocated", METRIC_GAUGE, node_alloc[slot], &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_vf_node_utilization_ratio", METRIC_GAUGE,
                                node_vfs[slot] ? (double) node_alloc[slot] / node_vfs[slot] : 0, &ls);
                if (r < 0)
                        return r;
        }
        if (in->cfg) {
                unsigned waiting = 0;

                r = add(snap, "sriovd_vf_target_utilization_ratio", METRIC_GAUGE,
                        in->cfg->vf_target_utilization / 100.0, &none);
                if (r < 0)
                        return r;
                /*
                 * Each sriov-preferred tenant on virtio-net would take a VF. The built-in alert on
                 * an underused pool counts a period towards raising only while this is above 0.
                 */
                for (size_t k = 0; k < in->n_tenants; k++) {
                        const TenantClass *c = config_find_class(in->cfg, in->tenants[k].class_name);
                        waiting += c && c->vnic == VNIC_SRIOV_PREFERRED && streq(in->tenants[k].kind, "virtio");
                }
                r = add(snap, "sriovd_tenants_waiting_virtio", METRIC_GAUGE, waiting, &none);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < in->n_rt_nodes; i++) {
                const AllocRtNode *n = &in->rt_nodes[i];
                Labels ls = {};

                label_node(&ls, n->numa_node);
                r = add(snap, "sriovd_rt_cpus", METRIC_GAUGE, n->cpus, &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_rt_cpus_booked", METRIC_GAUGE, n->booked, &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_rt_guests", METRIC_GAUGE, n->guests, &ls);
                if (r >= 0)
                        r = add(snap, "sriovd_rt_guests_waiting", METRIC_GAUGE, n->waiting, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read a table. Where the kernel has no such file, the table is empty, and it gives no samples. */
static int read_optional(int (*reader)(RootFs *, CounterTable *), RootFs *root, CounterTable *ret) {
        int r = reader(root, ret);
        if (r == -ENOENT) {
                *ret = (CounterTable) {};
                return 0;
        }
        return r;
}

int sampler_sample(Sampler *s, const SamplerInput *in, uint64_t mono_usec, uint64_t real_usec,
                   MetricSnapshot *ret) {
        _cleanup_(counter_table_done) CounterTable irqs = {}, soft = {}, times = {};
        _cleanup_(counter_rates_done) CounterRates irq_rates = {}, soft_rates = {}, time_rates = {};
        _cleanup_(metric_snapshot_done) MetricSnapshot snap = {};
        _cleanup_(traffic_baseline_done) TrafficBaseline traffic = {};
        _cleanup_(latency_baseline_done) LatencyBaseline latency = {};
        _cleanup_free_ IrqOwner *owners = NULL;
        _cleanup_(irq_table_done) IrqTable table = {};
        bool have_rates;
        uint64_t elapsed;
        size_t n_owners = 0;
        HostCpus cpus = {};
        int r;

        r = proc_interrupts_read(s->root, &irqs);
        if (r < 0)
                return r;
        snap.samples = TAKE_PTR(s->spare);
        snap.allocated = s->spare_allocated;
        s->spare_allocated = 0;
        r = read_optional(proc_softirqs_read, s->root, &soft);
        if (r < 0)
                return r;
        r = read_optional(proc_cpu_times_read, s->root, &times);
        if (r < 0)
                return r;

        elapsed = s->have_prev && mono_usec > s->prev_usec ? mono_usec - s->prev_usec : 0;
        have_rates = elapsed > 0;
        if (have_rates) {
                r = counter_table_rates(&s->interrupts, &irqs, elapsed, &irq_rates);
                if (r >= 0)
                        r = counter_table_rates(&s->softirqs, &soft, elapsed, &soft_rates);
                if (r >= 0)
                        r = counter_table_rates(&s->cpu_times, &times, elapsed, &time_rates);
                if (r < 0)
                        return r;
        }

        if (in->inv && in->cfg)
                host_cpus(in->inv, in->cfg, &cpus);
        r = collect_owners(in, &cpus.rt, &owners, &n_owners);
        if (r < 0)
                return r;
        r = irq_table_init(&table, &irqs, have_rates ? &irq_rates : NULL, owners, n_owners);
        if (r < 0)
                return r;

        snap.timestamp_usec = real_usec;
        snap.period_usec = elapsed;
        r = sample_irqs(s, &snap, &table);
        if (r >= 0)
                r = sample_rt(&snap, &table, &cpus.rt);
        if (r >= 0)
                r = sample_softirqs(&snap, &soft, have_rates ? &soft_rates : NULL);
        if (r >= 0)
                r = sample_cpu_times(&snap, &times, have_rates ? &time_rates : NULL, s->ticks_per_sec);
        if (r >= 0)
                r = sample_threads(s, &snap, in->inv, owners, n_owners, &cpus.rt, elapsed);
        if (r >= 0)
                r = sample_pools(&snap, in);
        if (r >= 0)
                r = sampler_traffic(&s->traffic, in, elapsed, &snap, &traffic);
        if (r >= 0)
                r = sampler_latency(&s->latency, s->root, in, &snap, &latency);
        if (r >= 0)
                r = sampler_bpf_available(&snap, in);
        if (r < 0)
                return r;
        metric_snapshot_sort(&snap);

        /* This period's counters become the next period's baseline, but only once everything worked. */

        counter_table_done(&s->interrupts);
        counter_table_done(&s->softirqs);
        counter_table_done(&s->cpu_times);
        s->interrupts = irqs;
        s->softirqs = soft;
        s->cpu_times = times;
        irqs = soft = times = (CounterTable) {};
        traffic_baseline_done(&s->traffic);
        s->traffic = traffic;
        traffic = (TrafficBaseline) {};
        latency_baseline_done(&s->latency);
        s->latency = latency;
        latency = (LatencyBaseline) {};
        s->prev_usec = mono_usec;
        s->have_prev = true;

        free(s->spare);
        s->spare = TAKE_PTR(ret->samples);
        s->spare_allocated = ret->allocated;
        metric_snapshot_done(ret);
        *ret = snap;
        snap = (MetricSnapshot) {};
        return 0;
}
