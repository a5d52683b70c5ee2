/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top-draw.c — top's frame as lines of text for the terminal, or as one JSON document for --once --json */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-record.h"
#include "sriovctl-top-internal.h"

static const char *const sort_names[_SORT_MAX] = { "interrupts", "packets", "name" };

void lines_done(Lines *ls) {
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

static int draw_header(Lines *ls, const Frame *f, SortKey key, bool live) {
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
                      dash_or(rec_str(p, "State")), sort_names[key], live ? "  (s: sort, q: quit)" : "");
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
int top_draw(Lines *ls, Frame *f, SortKey key, size_t rows, bool live) {
        size_t n_alerts, room, cpu_rows = SIZE_MAX, tenant_rows = SIZE_MAX, latency_rows = SIZE_MAX;
        json_object *alerts = rec_get(f->props, "ActiveAlerts");
        int r;

        frame_sort(f, key);
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
        r = draw_header(ls, f, key, live);
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

void top_print_json(Frame *f, SortKey key) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *cpus = json_object_new_array(), *tenants = json_object_new_array();
        json_object *latency = json_object_new_array();
        json_object *alerts = rec_get(f->props, "ActiveAlerts");

        frame_sort(f, key);
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
