/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top.c — `sriovctl top`, which shows interrupt and packet rates per CPU and per tenant and redraws them each period */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-record.h"
#include "sriovctl-top.h"

/* ---- one period, aggregated ---- */

typedef struct CpuRow {
        unsigned cpu;
        bool rt;                      /* the daemon samples interference only on RT CPUs, so that marks them */
        double irq, rx, tx, irq_time, softirq_time, interference;
} CpuRow;

#define TENANT_IRQS_MAX 16

typedef struct TenantRow {
        char tenant[64], class_name[64], vf[32], rt_cpus[64];
        unsigned irqs[TENANT_IRQS_MAX];
        size_t n_irqs;
        CpuSet cpus_now, cpus_ever;   /* where its IRQs land this period, and where they have ever landed */
        double irq, packets, drops;
} TenantRow;

/* One RT tenant's threads of one kind, or an RT CPU's ksoftirqd, with the period's latency. */
typedef struct LatencyRow {
        char tenant[64], kind[16], source[16];
        double p99, p999, mean;       /* in seconds; NaN for none, as schedstat has no percentiles */
} LatencyRow;

typedef struct Frame {
        uint64_t period_usec;
        LatencyRow *latency;
        size_t n_latency;
        CpuRow *cpus;
        size_t n_cpus;
        TenantRow *tenants;
        size_t n_tenants;
        json_object *props;           /* the Manager's properties from GetAll */
} Frame;

static void frame_done(Frame *f) {
        free(f->latency);
        free(f->cpus);
        free(f->tenants);
        json_object_put(f->props);
        *f = (Frame) {};
}

/* Adds to a sum of rates. The sum stays NaN until one rate has a value, so "no value yet" stays distinct from 0. */
static void acc(double *sum, double v) {
        if (isnan(v))
                return;
        *sum = isnan(*sum) ? v : *sum + v;
}

static CpuRow *frame_cpu(Frame *f, unsigned cpu) {
        CpuRow *n;

        for (size_t i = 0; i < f->n_cpus; i++)
                if (f->cpus[i].cpu == cpu)
                        return &f->cpus[i];
        n = reallocarray(f->cpus, f->n_cpus + 1, sizeof(*n));
        if (!n)
                return NULL;
        f->cpus = n;
        f->cpus[f->n_cpus] = (CpuRow) { .cpu = cpu, .irq = NAN, .rx = NAN, .tx = NAN, .irq_time = NAN,
                                        .softirq_time = NAN, .interference = NAN };
        return &f->cpus[f->n_cpus++];
}

static TenantRow *frame_tenant(Frame *f, const char *tenant) {
        TenantRow *n;

        for (size_t i = 0; i < f->n_tenants; i++)
                if (streq(f->tenants[i].tenant, tenant))
                        return &f->tenants[i];
        n = reallocarray(f->tenants, f->n_tenants + 1, sizeof(*n));
        if (!n)
                return NULL;
        f->tenants = n;
        f->tenants[f->n_tenants] = (TenantRow) { .irq = NAN, .packets = NAN, .drops = NAN };
        strscpy(f->tenants[f->n_tenants].tenant, sizeof(f->tenants[0].tenant), tenant);
        return &f->tenants[f->n_tenants++];
}

static LatencyRow *frame_latency(Frame *f, const char *tenant, const char *kind) {
        LatencyRow *n;

        for (size_t i = 0; i < f->n_latency; i++)
                if (streq(f->latency[i].tenant, tenant) && streq(f->latency[i].kind, kind))
                        return &f->latency[i];
        n = reallocarray(f->latency, f->n_latency + 1, sizeof(*n));
        if (!n)
                return NULL;
        f->latency = n;
        f->latency[f->n_latency] = (LatencyRow) { .p99 = NAN, .p999 = NAN, .mean = NAN };
        strscpy(f->latency[f->n_latency].tenant, sizeof(f->latency[0].tenant), tenant);
        strscpy(f->latency[f->n_latency].kind, sizeof(f->latency[0].kind), kind);
        return &f->latency[f->n_latency++];
}

/* The per-period latency gauges; the histogram's lines are for Prometheus, which keeps them over time. */
static int frame_add_latency(Frame *f, const char *name, json_object *labels, double v) {
        const char *kind = rec_str(labels, "kind"), *source = rec_str(labels, "source");
        LatencyRow *l;

        if (!kind || !source)
                return 0;
        l = frame_latency(f, rec_str(labels, "tenant") ?: "", kind);
        if (!l)
                return -ENOMEM;
        strscpy(l->source, sizeof(l->source), source);
        if (streq(name, "sriovd_thread_latency_p99_seconds"))
                l->p99 = v;
        else if (streq(name, "sriovd_thread_latency_p999_seconds"))
                l->p999 = v;
        else
                l->mean = v;
        return 0;
}

static bool parse_unsigned(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        if (!s || !*s || *s == '-')
                return false;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > UINT32_MAX)
                return false;
        *ret = (unsigned) v;
        return true;
}

static bool has_prefix_suffix(const char *s, const char *prefix, const char *suffix) {
        size_t n = strlen(s), p = strlen(prefix), q = strlen(suffix);
        return n >= p + q && strncmp(s, prefix, p) == 0 && streq(s + n - q, suffix);
}

/* Adds one sample of GetMetrics to the rows that it concerns. Families that top does not show are skipped. */
static int frame_add_sample(Frame *f, const char *name, json_object *labels, double v) {
        const char *cpu_s = rec_str(labels, "cpu"), *tenant = rec_str(labels, "tenant");
        unsigned cpu = 0, irq;
        bool have_cpu = parse_unsigned(cpu_s, &cpu);
        CpuRow *c = NULL;
        TenantRow *t = NULL;

        if (streq(name, "sriovd_thread_latency_p99_seconds") || streq(name, "sriovd_thread_latency_p999_seconds") ||
            streq(name, "sriovd_thread_latency_mean_seconds"))
                return frame_add_latency(f, name, labels, v);
        if (have_cpu && strncmp(name, "sriovd_", 7) == 0 &&
            (streq(name, "sriovd_irq_rate") || strncmp(name, "sriovd_cpu_", 11) == 0 ||
             streq(name, "sriovd_rt_cpu_interference_rate") || streq(name, "sriovd_ksoftirqd_cpu_ratio"))) {
                c = frame_cpu(f, cpu);
                if (!c)
                        return -ENOMEM;
        }
        if (c) {
                if (streq(name, "sriovd_irq_rate"))
                        acc(&c->irq, v);
                else if (streq(name, "sriovd_cpu_net_rx_softirq_rate"))
                        c->rx = v;
                else if (streq(name, "sriovd_cpu_net_tx_softirq_rate"))
                        c->tx = v;
                else if (streq(name, "sriovd_cpu_irq_time_ratio"))
                        c->irq_time = v;
                else if (streq(name, "sriovd_cpu_softirq_time_ratio"))
                        c->softirq_time = v;
                else if (streq(name, "sriovd_rt_cpu_interference_rate")) {
                        c->rt = true;
                        c->interference = v;
                } else if (streq(name, "sriovd_ksoftirqd_cpu_ratio"))
                        c->rt = true;
        }
        if (!tenant)
                return 0;
        /* These are a tenant's IRQs and its VF's traffic. Packets/s are rx + tx from the sampler's
         * per-VF series only, because sriovd_netdev_* count the same packets again for a host-bound VF. */
        if (streq(name, "sriovd_irq_rate") || streq(name, "sriovd_irq_interrupts_total") ||
            streq(name, "sriovd_vf_drop_rate") || has_prefix_suffix(name, "sriovd_vf_", "_rate")) {
                t = frame_tenant(f, tenant);
                if (!t)
                        return -ENOMEM;
                if (!t->class_name[0] && rec_str(labels, "class"))
                        strscpy(t->class_name, sizeof(t->class_name), rec_str(labels, "class"));
                if (!t->vf[0] && rec_str(labels, "vf"))
                        strscpy(t->vf, sizeof(t->vf), rec_str(labels, "vf"));
        }
        if (!t)
                return 0;
        if (streq(name, "sriovd_irq_rate") || streq(name, "sriovd_irq_interrupts_total")) {
                bool known = false;

                if (parse_unsigned(rec_str(labels, "irq"), &irq)) {
                        for (size_t i = 0; i < t->n_irqs; i++)
                                known = known || t->irqs[i] == irq;
                        if (!known && t->n_irqs < TENANT_IRQS_MAX)
                                t->irqs[t->n_irqs++] = irq;
                }
                if (have_cpu)
                        cpuset_add(&t->cpus_ever, cpu);
                if (streq(name, "sriovd_irq_rate")) {
                        acc(&t->irq, v);
                        if (have_cpu && !isnan(v) && v > 0)
                                cpuset_add(&t->cpus_now, cpu);
                }
        } else if (streq(name, "sriovd_vf_drop_rate"))
                acc(&t->drops, v);
        else if (streq(name, "sriovd_vf_rx_packet_rate") || streq(name, "sriovd_vf_tx_packet_rate"))
                acc(&t->packets, v);
        return 0;
}

/* Reads the (t, a(sa{ss}d)) reply of GetMetrics into f. */
static int frame_read_metrics(Frame *f, sd_bus_message *reply) {
        _cleanup_json_ json_object *samples = NULL;
        int r;

        r = sd_bus_message_read(reply, "t", &f->period_usec);
        if (r < 0)
                return r;
        r = read_value(reply, &samples);
        if (r < 0)
                return r;
        if (!json_object_is_type(samples, json_type_array))
                return -EBADMSG;
        for (size_t i = 0; i < json_object_array_length(samples); i++) {
                json_object *s = json_object_array_get_idx(samples, i);
                json_object *name = json_object_array_get_idx(s, 0), *labels = json_object_array_get_idx(s, 1),
                            *value = json_object_array_get_idx(s, 2);

                if (!json_object_is_type(s, json_type_array) || json_object_array_length(s) != 3 ||
                    !json_object_is_type(name, json_type_string))
                        return -EBADMSG;
                r = frame_add_sample(f, json_object_get_string(name), labels, json_object_get_double(value));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Reads every tenant's class, VF and RT CPUs. That includes tenants without IRQs, such as
 * virtio-net tenants and those whose VF is not in use. */
static int frame_read_tenants(Frame *f, json_object *rows) {
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *rec = json_object_array_get_idx(rows, i), *rt = rec_get(rec, SRIOVD_KEY_RT_CPUS);
                const char *id = rec_str(rec, SRIOVD_KEY_TENANT), *kind = rec_str(rec, SRIOVD_KEY_KIND);
                TenantRow *t;
                size_t k = 0;

                if (!id)
                        continue;
                t = frame_tenant(f, id);
                if (!t)
                        return -ENOMEM;
                if (rec_str(rec, SRIOVD_KEY_CLASS))
                        strscpy(t->class_name, sizeof(t->class_name), rec_str(rec, SRIOVD_KEY_CLASS));
                if (kind && streq(kind, "vf") && rec_str(rec, SRIOVD_KEY_ADDRESS))
                        strscpy(t->vf, sizeof(t->vf), rec_str(rec, SRIOVD_KEY_ADDRESS));
                else if (!t->vf[0] && kind)
                        strscpy(t->vf, sizeof(t->vf), kind);   /* the kind, such as "virtio" */
                for (size_t j = 0; rt && json_object_is_type(rt, json_type_array) &&
                                   j < json_object_array_length(rt) && k + 12 < sizeof(t->rt_cpus); j++)
                        k += (size_t) snprintf(t->rt_cpus + k, sizeof(t->rt_cpus) - k, "%s%d", j ? "," : "",
                                               json_object_get_int(json_object_array_get_idx(rt, j)));
                if (!t->rt_cpus[0] && rec_bool(rec, SRIOVD_KEY_RT_WAITING))
                        strscpy(t->rt_cpus, sizeof(t->rt_cpus), "waiting");
        }
        return 0;
}

static int call_method(sd_bus *bus, const char *interface, const char *method, sd_bus_error *error,
                       sd_bus_message **reply, const char *types, const char *arg) {
        return sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, interface, method, error, reply, types, arg);
}

static int frame_fetch(sd_bus *bus, Frame *f, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *metrics = NULL, *props = NULL, *tenants = NULL;
        _cleanup_json_ json_object *rows = NULL;
        int r;

        r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "GetMetrics", error,
                               &metrics, NULL);
        if (r < 0)
                return r;
        r = call_method(bus, "org.freedesktop.DBus.Properties", "GetAll", error, &props, "s", SRIOVD_BUS_INTERFACE);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, SRIOVD_BUS_NAME, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, "ListTenants", error,
                               &tenants, NULL);
        if (r < 0)
                return r;
        r = read_value(props, &f->props);
        if (r >= 0)
                r = frame_read_metrics(f, metrics);
        if (r >= 0)
                r = read_value(tenants, &rows);
        if (r >= 0 && !json_object_is_type(rows, json_type_array))
                r = -EBADMSG;
        if (r >= 0)
                r = frame_read_tenants(f, rows);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "unexpected reply from sriovd: %s", strerror(-r));
        return 0;
}

/* ---- sorting ---- */

typedef enum SortKey {
        SORT_RATE,                    /* interrupts/s, busiest first, as irqtop does by default */
        SORT_PACKETS,                 /* NET_RX + NET_TX softirqs/s for CPUs, packets/s for tenants */
        SORT_NAME,                    /* the CPU number or the tenant id */
        _SORT_MAX,
} SortKey;

static const char *const sort_names[_SORT_MAX] = { "interrupts", "packets", "name" };
static SortKey sort_key;

/* Sorts in descending order, with "no value" after every value. */
static int cmp_rate(double a, double b) {
        if (isnan(a) || isnan(b))
                return isnan(a) - isnan(b);
        return a < b ? 1 : a > b ? -1 : 0;
}

static double sum2(double a, double b) {
        double s = NAN;
        acc(&s, a);
        acc(&s, b);
        return s;
}

static int cpu_cmp(const void *x, const void *y) {
        const CpuRow *a = x, *b = y;
        int c = 0;

        if (sort_key == SORT_RATE)
                c = cmp_rate(a->irq, b->irq);
        else if (sort_key == SORT_PACKETS)
                c = cmp_rate(sum2(a->rx, a->tx), sum2(b->rx, b->tx));
        return c ?: (a->cpu > b->cpu) - (a->cpu < b->cpu);
}

static int tenant_cmp(const void *x, const void *y) {
        const TenantRow *a = x, *b = y;
        int c = 0;

        if (sort_key == SORT_RATE)
                c = cmp_rate(a->irq, b->irq);
        else if (sort_key == SORT_PACKETS)
                c = cmp_rate(a->packets, b->packets);
        return c ?: strcmp(a->tenant, b->tenant);
}

/* ---- drawing: the frame as lines, which the printer cuts to the terminal's width ---- */

typedef struct Lines {
        char **l;
        size_t n;
} Lines;

static void lines_done(Lines *ls) {
        for (size_t i = 0; i < ls->n; i++)
                free(ls->l[i]);
        free(ls->l);
        *ls = (Lines) {};
}

_printf_(2, 3) static int lines_add(Lines *ls, const char *fmt, ...) {
        char **n, *s;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        n = reallocarray(ls->l, ls->n + 1, sizeof(*n));
        if (!n) {
                free(s);
                return -ENOMEM;
        }
        ls->l = n;
        ls->l[ls->n++] = s;
        return 0;
}

/* Formats a rate for a table cell. It is "-" without a value, and otherwise as wide as it needs to be. */
static const char *fmt_rate(double v, char *buf, size_t size) {
        if (isnan(v))
                return "-";
        if (v >= 100 || v == 0)
                snprintf(buf, size, "%.0f", v);
        else
                snprintf(buf, size, "%.1f", v);
        return buf;
}

static const char *fmt_pct(double ratio, char *buf, size_t size) {
        if (isnan(ratio))
                return "-";
        snprintf(buf, size, "%.1f", ratio * 100);
        return buf;
}

static const char *fmt_irqs(const TenantRow *t, char *buf, size_t size) {
        unsigned v[TENANT_IRQS_MAX];
        size_t n = t->n_irqs, k = 0;

        if (n == 0)
                return "-";
        memcpy(v, t->irqs, n * sizeof(v[0]));
        /* A tenant has only a handful of IRQs, so an insertion sort does.
         * Runs are then written as ranges such as "120-122". */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
                        unsigned x = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = x;
                }
        buf[0] = 0;
        for (size_t i = 0; i < n && k + 24 < size;) {
                size_t j = i;
                while (j + 1 < n && v[j + 1] == v[j] + 1)
                        j++;
                k += (size_t) (j == i ? snprintf(buf + k, size - k, "%s%u", k ? "," : "", v[i])
                                      : snprintf(buf + k, size - k, "%s%u-%u", k ? "," : "", v[i], v[j]));
                i = j + 1;
        }
        return buf;
}

static const char *dash_or(const char *s) {
        return s && *s ? s : "-";
}

static void host_name(char *buf, size_t size) {
        if (gethostname(buf, size) < 0 || !buf[0])
                strscpy(buf, size, "localhost");
        buf[size - 1] = 0;
}

static int draw_header(Lines *ls, const Frame *f, bool live) {
        json_object *p = f->props, *v, *nodes = rec_get(p, "RtCpuNodes");
        int64_t allocated = 0, usable = 0, tenants = 0, rt_cpus = 0, rt_booked = 0;
        double util = 0, target = 0;
        char host[256], when[16] = "", period[32];
        time_t now = time(NULL);
        struct tm tm;
        int r;

        host_name(host, sizeof(host));
        if (localtime_r(&now, &tm))
                strftime(when, sizeof(when), "%H:%M:%S", &tm);
        rec_int(p, "VfAllocated", &allocated);
        rec_int(p, "VfUsable", &usable);
        rec_int(p, "Tenants", &tenants);
        if ((v = rec_get(p, "VfUtilization")))
                util = json_object_get_double(v);
        if ((v = rec_get(p, "VfTarget")))
                target = json_object_get_double(v);
        for (size_t i = 0; nodes && json_object_is_type(nodes, json_type_array) && i < json_object_array_length(nodes);
             i++) {
                int64_t c = 0, b = 0;
                rec_int(json_object_array_get_idx(nodes, i), SRIOVD_KEY_CPUS, &c);
                rec_int(json_object_array_get_idx(nodes, i), SRIOVD_KEY_BOOKED, &b);
                rt_cpus += c;
                rt_booked += b;
        }
        if (f->period_usec)
                snprintf(period, sizeof(period), "%.2f s", (double) f->period_usec / 1e6);
        else
                snprintf(period, sizeof(period), "first sample, no rates yet");
        r = lines_add(ls, "sriovd top - %s  %s  period %s  state %s  sort: %s%s", host, when, period,
                      dash_or(rec_str(p, "State")), sort_names[sort_key], live ? "  (s: sort, q: quit)" : "");
        if (r >= 0)
                r = lines_add(ls, "VFs: %" PRId64 " of %" PRId64 " allocated (%.1f%%, target %.0f%%)  tenants: %" PRId64
                                  "  RT CPUs: %" PRId64 " of %" PRId64 " booked",
                              allocated, usable, util * 100, target * 100, tenants, rt_booked, rt_cpus);
        return r;
}

static int draw_cpus(Lines *ls, const Frame *f, size_t max_rows) {
        int r = lines_add(ls, "%5s %-3s %10s %10s %10s %6s %6s %10s", "CPU", "RT", "NIC-IRQ/s", "NET_RX/s", "NET_TX/s",
                          "IRQ%", "SIRQ%", "INTERF/s");

        for (size_t i = 0; r >= 0 && i < f->n_cpus && i < max_rows; i++) {
                const CpuRow *c = &f->cpus[i];
                char a[32], b[32], d[32], e[32], g[32], h[32];

                r = lines_add(ls, "%5u %-3s %10s %10s %10s %6s %6s %10s", c->cpu, c->rt ? "rt" : "",
                              fmt_rate(c->irq, a, sizeof(a)), fmt_rate(c->rx, b, sizeof(b)),
                              fmt_rate(c->tx, d, sizeof(d)), fmt_pct(c->irq_time, e, sizeof(e)),
                              fmt_pct(c->softirq_time, g, sizeof(g)),
                              c->rt ? fmt_rate(c->interference, h, sizeof(h)) : "");
        }
        if (r >= 0 && f->n_cpus > max_rows)
                r = lines_add(ls, "  ... %zu more CPUs", f->n_cpus - max_rows);
        return r;
}

static int draw_tenants(Lines *ls, const Frame *f, size_t max_rows) {
        int r;

        if (f->n_tenants == 0)
                return lines_add(ls, "Tenants: none");
        r = lines_add(ls, "%-20s %-16s %-14s %-12s %9s %9s %8s %-10s %s", "TENANT", "CLASS", "VF", "IRQS", "IRQ/s",
                      "PKT/s", "DROP/s", "CPUS", "RT-CPUS");
        for (size_t i = 0; r >= 0 && i < f->n_tenants && i < max_rows; i++) {
                const TenantRow *t = &f->tenants[i];
                const CpuSet *where = cpuset_is_empty(&t->cpus_now) ? &t->cpus_ever : &t->cpus_now;
                char irqs[96], cpus[64], a[32], b[32], d[32];

                if (cpuset_is_empty(where))
                        strscpy(cpus, sizeof(cpus), "-");
                else
                        cpuset_format_list(where, cpus, sizeof(cpus));
                r = lines_add(ls, "%-20s %-16s %-14s %-12s %9s %9s %8s %-10s %s", t->tenant, dash_or(t->class_name),
                              dash_or(t->vf), fmt_irqs(t, irqs, sizeof(irqs)), fmt_rate(t->irq, a, sizeof(a)),
                              fmt_rate(t->packets, b, sizeof(b)), fmt_rate(t->drops, d, sizeof(d)), cpus,
                              dash_or(t->rt_cpus));
        }
        if (r >= 0 && f->n_tenants > max_rows)
                r = lines_add(ls, "  ... %zu more tenants", f->n_tenants - max_rows);
        return r;
}

/* A latency in s, µs or ms as fits, or "-" for none. */
static const char *fmt_latency(double v, char *buf, size_t size) {
        if (isnan(v))
                return "-";
        if (v < 1e-3)
                snprintf(buf, size, "%.1fus", v * 1e6);
        else if (v < 1)
                snprintf(buf, size, "%.2fms", v * 1e3);
        else
                snprintf(buf, size, "%.2fs", v);
        return buf;
}

static int latency_cmp(const void *x, const void *y) {
        const LatencyRow *a = x, *b = y;
        int c = strcmp(a->tenant, b->tenant);

        /* The ksoftirqd rows have no tenant: they come last. */
        if (!a->tenant[0] != !b->tenant[0])
                return a->tenant[0] ? -1 : 1;
        return c ?: strcmp(a->kind, b->kind);
}

static int draw_latency(Lines *ls, const Frame *f, size_t max_rows) {
        int r;

        if (f->n_latency == 0)
                return 0;
        r = lines_add(ls, "%-20s %-10s %10s %10s %10s %s", "LATENCY", "KIND", "P99", "P99.9", "MEAN", "SOURCE");
        for (size_t i = 0; r >= 0 && i < f->n_latency && i < max_rows; i++) {
                const LatencyRow *l = &f->latency[i];
                char a[32], b[32], c[32];

                r = lines_add(ls, "%-20s %-10s %10s %10s %10s %s", l->tenant[0] ? l->tenant : "(RT CPUs)", l->kind,
                              fmt_latency(l->p99, a, sizeof(a)), fmt_latency(l->p999, b, sizeof(b)),
                              fmt_latency(l->mean, c, sizeof(c)), l->source);
        }
        if (r >= 0 && f->n_latency > max_rows)
                r = lines_add(ls, "  ... %zu more latency rows", f->n_latency - max_rows);
        if (r >= 0)
                r = lines_add(ls, "%s", "");
        return r;
}

static int draw_alerts(Lines *ls, const Frame *f) {
        json_object *alerts = rec_get(f->props, "ActiveAlerts");
        size_t n = alerts && json_object_is_type(alerts, json_type_array) ? json_object_array_length(alerts) : 0;
        int r;

        if (n == 0)
                return lines_add(ls, "Alerts: none");
        r = lines_add(ls, "Alerts: %zu active", n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char line[1024];
                r = lines_add(ls, "  %s", alert_format(json_object_array_get_idx(alerts, i), line, sizeof(line)));
        }
        return r;
}

/*
 * Draws the whole frame. rows = 0 means no limit, as for --once. Otherwise the CPU and tenant
 * tables share the rows that the header and the alerts leave, so that the busiest of each are on screen.
 */
static int draw(Lines *ls, Frame *f, size_t rows, bool live) {
        size_t n_alerts, room, cpu_rows = SIZE_MAX, tenant_rows = SIZE_MAX, latency_rows = SIZE_MAX;
        json_object *alerts = rec_get(f->props, "ActiveAlerts");
        int r;

        qsort_safe(f->cpus, f->n_cpus, sizeof(*f->cpus), cpu_cmp);
        qsort_safe(f->tenants, f->n_tenants, sizeof(*f->tenants), tenant_cmp);
        qsort_safe(f->latency, f->n_latency, sizeof(*f->latency), latency_cmp);
        n_alerts = 1 + (alerts && json_object_is_type(alerts, json_type_array) ? json_object_array_length(alerts) : 0);
        if (rows) {
                /* two header lines, a blank, the CPU heading, a blank, the tenant heading, a blank and the alerts */
                size_t fixed = 2 + 1 + 1 + 1 + 1 + 1 + MIN(n_alerts, (size_t) 4);

                /* The latency table, when there is one, takes its heading, a blank and up to 4 rows. */
                latency_rows = MIN(f->n_latency, (size_t) 4);
                if (f->n_latency > 0)
                        fixed += 2 + latency_rows + (f->n_latency > latency_rows);
                room = rows > fixed + 2 ? rows - fixed : 2;
                tenant_rows = MAX(MIN(f->n_tenants, room / 2), (size_t) 1);
                cpu_rows = room > tenant_rows ? room - tenant_rows : 1;
                /* a "... more" line takes one row of its table */
                if (f->n_cpus > cpu_rows && cpu_rows > 1)
                        cpu_rows--;
                if (f->n_tenants > tenant_rows && tenant_rows > 1)
                        tenant_rows--;
        }
        r = draw_header(ls, f, live);
        if (r >= 0)
                r = lines_add(ls, "%s", "");
        if (r >= 0)
                r = draw_cpus(ls, f, cpu_rows);
        if (r >= 0)
                r = lines_add(ls, "%s", "");
        if (r >= 0)
                r = draw_tenants(ls, f, tenant_rows);
        if (r >= 0)
                r = lines_add(ls, "%s", "");
        if (r >= 0)
                r = draw_latency(ls, f, latency_rows);
        if (r >= 0)
                r = draw_alerts(ls, f);
        return r;
}

/* ---- --once --json ---- */

static json_object *json_rate(double v) {
        return isnan(v) ? NULL : json_double(v);
}

static void print_json(Frame *f) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *cpus = json_object_new_array(), *tenants = json_object_new_array();
        json_object *latency = json_object_new_array();
        json_object *alerts = rec_get(f->props, "ActiveAlerts");

        qsort_safe(f->cpus, f->n_cpus, sizeof(*f->cpus), cpu_cmp);
        qsort_safe(f->tenants, f->n_tenants, sizeof(*f->tenants), tenant_cmp);
        json_set(o, "period_usec", json_object_new_int64((int64_t) f->period_usec));
        for (size_t i = 0; i < f->n_cpus; i++) {
                const CpuRow *c = &f->cpus[i];
                json_object *j = json_object_new_object();

                json_set(j, "cpu", json_object_new_int64(c->cpu));
                json_set(j, "rt", json_object_new_boolean(c->rt));
                json_set(j, "irq_rate", json_rate(c->irq));
                json_set(j, "net_rx_softirq_rate", json_rate(c->rx));
                json_set(j, "net_tx_softirq_rate", json_rate(c->tx));
                json_set(j, "irq_time_ratio", json_rate(c->irq_time));
                json_set(j, "softirq_time_ratio", json_rate(c->softirq_time));
                json_set(j, "interference_rate", c->rt ? json_rate(c->interference) : NULL);
                json_object_array_add(cpus, j);
        }
        for (size_t i = 0; i < f->n_tenants; i++) {
                const TenantRow *t = &f->tenants[i];
                json_object *j = json_object_new_object(), *irqs = json_object_new_array();
                char list[CPUSET_LIST_MAX];

                for (size_t k = 0; k < t->n_irqs; k++)
                        json_object_array_add(irqs, json_object_new_int64(t->irqs[k]));
                json_set(j, "tenant", json_object_new_string(t->tenant));
                json_set(j, "class", t->class_name[0] ? json_object_new_string(t->class_name) : NULL);
                json_set(j, "vf", t->vf[0] ? json_object_new_string(t->vf) : NULL);
                json_set(j, "irqs", irqs);
                json_set(j, "irq_rate", json_rate(t->irq));
                json_set(j, "packet_rate", json_rate(t->packets));
                json_set(j, "drop_rate", json_rate(t->drops));
                json_set(j, "cpus", json_object_new_string(cpuset_format_list(
                                            cpuset_is_empty(&t->cpus_now) ? &t->cpus_ever : &t->cpus_now, list,
                                            sizeof(list))));
                json_set(j, "rt_cpus", t->rt_cpus[0] ? json_object_new_string(t->rt_cpus) : NULL);
                json_object_array_add(tenants, j);
        }
        qsort_safe(f->latency, f->n_latency, sizeof(*f->latency), latency_cmp);
        for (size_t i = 0; i < f->n_latency; i++) {
                const LatencyRow *l = &f->latency[i];
                json_object *j = json_object_new_object();

                json_set(j, "tenant", l->tenant[0] ? json_object_new_string(l->tenant) : NULL);
                json_set(j, "kind", json_object_new_string(l->kind));
                json_set(j, "source", json_object_new_string(l->source));
                json_set(j, "p99_seconds", json_rate(l->p99));
                json_set(j, "p999_seconds", json_rate(l->p999));
                json_set(j, "mean_seconds", json_rate(l->mean));
                json_object_array_add(latency, j);
        }
        json_set(o, "cpus", cpus);
        json_set(o, "tenants", tenants);
        json_set(o, "latency", latency);
        json_set(o, "alerts", alerts ? json_object_get(alerts) : json_object_new_array());
        json_print(o);
}

/* ---- the terminal ---- */

/* These are file-static, because a signal handler and atexit() need them to put the terminal back. */
static struct termios saved_tio;
static bool tio_saved, screen_on, keys_on;
static volatile sig_atomic_t quit_signal, resized, suspended;

static void term_restore(void) {
        if (screen_on) {
                /* show the cursor, reset the attributes and leave the alternate screen, so the shell's screen is back */
                static const char leave[] = "\033[0m\033[?25h\033[?1049l";
                (void) !write(STDOUT_FILENO, leave, sizeof(leave) - 1);
                screen_on = false;
        }
        if (tio_saved) {
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
                tio_saved = false;
        }
}

static void on_signal(int sig) {
        if (sig == SIGWINCH)
                resized = 1;
        else if (sig == SIGTSTP)
                suspended = 1;
        else
                quit_signal = sig;
}

static void term_size(size_t *cols, size_t *rows) {
        struct winsize ws = {};
        const char *e;

        *cols = 80;
        *rows = 24;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
                *cols = ws.ws_col;
                *rows = ws.ws_row;
                return;
        }
        if ((e = getenv("COLUMNS")) && atoi(e) > 0)
                *cols = (size_t) atoi(e);
        if ((e = getenv("LINES")) && atoi(e) > 0)
                *rows = (size_t) atoi(e);
}

/* Reads keys without Enter and without echo. ISIG stays on, so ^C is a SIGINT and ends the view the same way. */
static int term_enter(bool screen) {
        struct termios t;

        if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
                t = saved_tio;
                t.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
                t.c_cc[VMIN] = 1;
                t.c_cc[VTIME] = 0;
                tio_saved = keys_on = true;
                if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0)
                        return -errno;
        }
        if (screen) {
                static const char enter[] = "\033[?1049h\033[?25l\033[H\033[2J";
                screen_on = true;
                if (write(STDOUT_FILENO, enter, sizeof(enter) - 1) < 0)
                        return -errno;
        }
        return 0;
}

/* Cuts one line to cols bytes, but never inside a UTF-8 sequence. */
static size_t cut(const char *s, size_t cols) {
        size_t n = strlen(s);

        if (n <= cols)
                return n;
        while (cols > 0 && ((unsigned char) s[cols] & 0xC0) == 0x80)
                cols--;
        return cols;
}

static int print_frame(const Lines *ls, size_t cols, size_t rows, bool escapes) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);

        if (!m)
                return -ENOMEM;
        if (escapes)
                fputs("\033[H", m);
        for (size_t i = 0; i < ls->n && (!rows || i < rows); i++) {
                fwrite(ls->l[i], 1, cols ? cut(ls->l[i], cols) : strlen(ls->l[i]), m);
                /* The last row gets no newline, because it would scroll the header away. */
                if (escapes)
                        fputs(i + 1 < MIN(ls->n, rows) ? "\033[K\r\n" : "\033[K", m);
                else
                        fputc('\n', m);
        }
        if (escapes)
                fputs("\033[J", m);
        if (fclose(m) != 0)
                return -ENOMEM;
        for (size_t done = 0; done < size;) {
                ssize_t w = write(STDOUT_FILENO, buf + done, size - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                done += (size_t) w;
        }
        return 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/*
 * Handles ^Z. The shell gets the terminal during the stop, so its screen and modes come back first.
 * At SIGCONT the view takes the terminal again, and the frame is redrawn.
 */
static int suspend(bool screen) {
        struct sigaction dfl = { .sa_handler = SIG_DFL }, ours = { .sa_handler = on_signal };

        suspended = 0;
        term_restore();
        sigemptyset(&dfl.sa_mask);
        sigemptyset(&ours.sa_mask);
        sigaction(SIGTSTP, &dfl, NULL);
        raise(SIGTSTP);
        /* execution continues here after SIGCONT */
        sigaction(SIGTSTP, &ours, NULL);
        return term_enter(screen);
}

/* Reads keys until the deadline. Returns 1 to quit, 2 to redraw now, 3 to fetch now, 4 to suspend and 0 at the deadline. */
static int wait_keys(uint64_t deadline) {
        for (;;) {
                uint64_t now = now_usec();
                struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
                int timeout = now >= deadline ? 0 : (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT32_MAX);
                char c;
                int r;

                if (quit_signal)
                        return 1;
                if (suspended)
                        return 4;
                if (resized) {
                        resized = 0;
                        return 2;
                }
                if (now >= deadline)
                        return 0;
                r = poll(&p, keys_on ? 1 : 0, timeout);
                if (r <= 0)
                        continue;
                r = (int) read(STDIN_FILENO, &c, 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r != 1) {
                        /* stdin is at its end after a hangup, so nobody can press q. The view runs on without keys. */
                        keys_on = false;
                        continue;
                }
                switch (c) {
                case 'q':
                case 'Q':
                        return 1;
                case 's':
                        sort_key = (sort_key + 1) % _SORT_MAX;
                        return 2;
                case 'S':
                        sort_key = (sort_key + _SORT_MAX - 1) % _SORT_MAX;
                        return 2;
                case 'r':
                case ' ':
                        return 3;
                default:
                        break;
                }
        }
}

int top_run(sd_bus *bus, const TopOptions *o, sd_bus_error *error) {
        const char *term = getenv("TERM");
        bool tty = isatty(STDOUT_FILENO), escapes = tty && term && *term && !streq(term, "dumb");
        struct sigaction sa = { .sa_handler = on_signal }, ign = { .sa_handler = SIG_IGN }, old[5], old_pipe;
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP };
        _cleanup_(frame_done) Frame f = {};
        uint64_t next = 0;
        int r, status = 0;

        if (o->once) {
                size_t cols, rows;

                r = frame_fetch(bus, &f, error);
                if (r < 0)
                        return r;
                if (o->json) {
                        print_json(&f);
                        return 0;
                }
                _cleanup_(lines_done) Lines ls = {};
                term_size(&cols, &rows);
                r = draw(&ls, &f, 0, false);
                if (r >= 0)
                        r = print_frame(&ls, tty ? cols : 0, 0, false);
                return r < 0 ? sd_bus_error_set_errnof(error, r, "cannot print: %s", strerror(-r)) : 0;
        }

        /* The first answer comes before the screen changes, so an error appears on the shell's screen. */
        r = frame_fetch(bus, &f, error);
        if (r < 0)
                return r;
        sigemptyset(&sa.sa_mask);
        sigemptyset(&ign.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, &old[i]);
        /* With `sriovctl top | head`, EPIPE ends the loop and the tty is put back.
         * SIGPIPE is ignored, because it would kill the process before that. */
        sigaction(SIGPIPE, &ign, &old_pipe);
        atexit(term_restore);
        r = term_enter(escapes);
        for (bool fetched = true; r >= 0;) {
                _cleanup_(lines_done) Lines ls = {};
                uint64_t interval;
                size_t cols, rows;

                if (!fetched) {
                        frame_done(&f);
                        r = frame_fetch(bus, &f, error);
                        if (r < 0)
                                break;
                }
                interval = o->interval_sec > 0 ? (uint64_t) (o->interval_sec * 1e6)
                                               : f.period_usec ?: 1000000;   /* after the first sample, look again soon */
                if (!fetched || next == 0)
                        next = now_usec() + interval;
                term_size(&cols, &rows);
                /* A dumb terminal gets lines cut to its width, and a pipe gets whole frames. */
                r = draw(&ls, &f, escapes ? rows : 0, true);
                if (r >= 0)
                        r = print_frame(&ls, tty ? cols : 0, escapes ? rows : 0, escapes);
                /* A dumb terminal gets the frames one after another, with a blank line between them. */
                if (r >= 0 && !escapes && write(STDOUT_FILENO, "\n", 1) < 0)
                        r = -errno;
                if (r == -EPIPE) {
                        r = 0;        /* the reader has all it wanted */
                        goto out;
                }
                if (r < 0) {
                        sd_bus_error_set_errnof(error, r, "cannot draw: %s", strerror(-r));
                        break;
                }
                switch (wait_keys(next)) {
                case 1:
                        status = quit_signal ? 128 + quit_signal : 0;
                        goto out;
                case 2:
                        fetched = true;       /* draw the same period again, sorted anew and resized */
                        break;
                case 4:
                        r = suspend(escapes);
                        fetched = true;
                        break;
                default:
                        fetched = false;
                        break;
                }
        }
out:
        term_restore();
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &old[i], NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        return r < 0 ? r : status;
}
