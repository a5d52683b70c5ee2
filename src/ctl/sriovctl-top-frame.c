/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top-frame.c — top's model of one period, read from GetMetrics, the Manager's properties and ListTenants */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-record.h"
#include "sriovctl-top-internal.h"

void frame_done(Frame *f) {
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

int frame_fetch(sd_bus *bus, Frame *f, sd_bus_error *error) {
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

static int cpu_cmp(const void *x, const void *y, void *userdata) {
        const CpuRow *a = x, *b = y;
        SortKey key = *(const SortKey *) userdata;
        int c = 0;

        if (key == SORT_RATE)
                c = cmp_rate(a->irq, b->irq);
        else if (key == SORT_PACKETS)
                c = cmp_rate(sum2(a->rx, a->tx), sum2(b->rx, b->tx));
        return c ?: (a->cpu > b->cpu) - (a->cpu < b->cpu);
}

static int tenant_cmp(const void *x, const void *y, void *userdata) {
        const TenantRow *a = x, *b = y;
        SortKey key = *(const SortKey *) userdata;
        int c = 0;

        if (key == SORT_RATE)
                c = cmp_rate(a->irq, b->irq);
        else if (key == SORT_PACKETS)
                c = cmp_rate(a->packets, b->packets);
        return c ?: strcmp(a->tenant, b->tenant);
}

static int latency_cmp(const void *x, const void *y) {
        const LatencyRow *a = x, *b = y;
        int c = strcmp(a->tenant, b->tenant);

        /* The ksoftirqd rows have no tenant: they come last. */
        if (!a->tenant[0] != !b->tenant[0])
                return a->tenant[0] ? -1 : 1;
        return c ?: strcmp(a->kind, b->kind);
}

void frame_sort(Frame *f, SortKey key) {
        /* qsort_r() is undefined for an empty array when base is NULL, as qsort() is. */
        if (f->n_cpus > 1)
                qsort_r(f->cpus, f->n_cpus, sizeof(*f->cpus), cpu_cmp, &key);
        if (f->n_tenants > 1)
                qsort_r(f->tenants, f->n_tenants, sizeof(*f->tenants), tenant_cmp, &key);
        qsort_safe(f->latency, f->n_latency, sizeof(*f->latency), latency_cmp);
}
