/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-top-internal.h — what top's files share: one sampled frame, its sort order and the lines drawn from it */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "sriovd/shared/cpuset.h"

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

typedef enum SortKey {
        SORT_RATE,                    /* interrupts/s, busiest first, as irqtop does by default */
        SORT_PACKETS,                 /* NET_RX + NET_TX softirqs/s for CPUs, packets/s for tenants */
        SORT_NAME,                    /* the CPU number or the tenant id */
        _SORT_MAX,
} SortKey;

/* ---- sriovctl-top-frame.c ---- */

/* Frees the rows and the properties, and leaves f empty for the next fetch. */
void frame_done(Frame *f);
/* Reads one period into an empty f: GetMetrics, the Manager's properties and ListTenants. Returns a
 * negative errno with *error set when sriovd refused a call or replied in a way top cannot read. */
int frame_fetch(sd_bus *bus, Frame *f, sd_bus_error *error);
/* Sorts the CPU and tenant rows by key, and the latency rows by tenant and kind. */
void frame_sort(Frame *f, SortKey key);

/* ---- sriovctl-top-draw.c ---- */

/* The frame as lines of text, which the printer cuts to the terminal's width. */
typedef struct Lines {
        char **l;
        size_t n;
} Lines;

void lines_done(Lines *ls);
/*
 * Sorts f by key and draws it into ls. rows = 0 means no limit, as for --once. Otherwise the CPU and
 * tenant tables share the rows that the header and the alerts leave, so that the busiest of each are
 * on screen. live adds the keys' hint to the header. Returns 0, or -ENOMEM with ls partly filled.
 */
int top_draw(Lines *ls, Frame *f, SortKey key, size_t rows, bool live);
/* Sorts f by key and prints it on stdout as one JSON document, for --once --json. */
void top_print_json(Frame *f, SortKey key);
