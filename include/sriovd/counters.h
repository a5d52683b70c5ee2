/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counters.h — kernel counter samples (IRQs, softirqs, CPU time, VFs, threads) and the rates between two */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/macro.h"

/*
 * A table of per-CPU counters as /proc/interrupts, /proc/softirqs and the cpuN lines
 * of /proc/stat print them: rows (an IRQ, a softirq, a CPU time field) by columns (the
 * CPUs the kernel printed, ascending: the online ones for /proc/interrupts and
 * /proc/stat, the possible ones for /proc/softirqs).
 */
#define COUNTER_NAME_MAX 16           /* "NET_RX", "LOC", "softirq"; longer rows are not ours */
#define COUNTER_ROWS_MAX (1u << 20)   /* beyond any kernel's IRQ count: a hostile file */
#define COUNTER_NAMED UINT32_MAX      /* CounterRow.irq of a named row */

typedef struct CounterRow {
        uint32_t irq;                    /* the IRQ number; COUNTER_NAMED for a named row */
        char name[COUNTER_NAME_MAX];     /* "" for a numbered row */
} CounterRow;

typedef struct CounterTable {
        unsigned *cpus;                  /* column j counts on CPU cpus[j]; ascending, no duplicates */
        size_t n_cpus;
        CounterRow *rows;                /* numbered rows by IRQ, then named rows by name (counter_row_cmp) */
        size_t n_rows;
        /*
         * The counts that are not zero, row after row, each with its column; row i's are entries
         * first[i] .. first[i + 1] - 1, by column (first is NULL in an empty table). On a large
         * host an IRQ counts on the CPU or two it was ever pinned to: dense (IRQs x CPUs) the
         * table was 2.2 MB, written by every parse, kept as the next period's baseline and
         * subtracted from in full, for ~8,000 counts that are not zero.
         */
        size_t *first;
        uint32_t *col;
        uint64_t *values;
        size_t n_entries;
} CounterTable;

/* Room for a table built row by row (counter_table_append). */
typedef struct CounterTableRoom {
        size_t rows, first, col, values;
} CounterTableRoom;

/* Frees what the table holds and zeroes it; the table itself is the caller's. */
void counter_table_done(CounterTable *t);
int counter_row_cmp(const void *a, const void *b);
/* Index of the row, -1 when there is none. */
ssize_t counter_table_find(const CounterTable *t, const CounterRow *key);
ssize_t counter_table_find_cpu(const CounterTable *t, unsigned cpu);
/* The count of row on column col: 0 where the table has none. */
uint64_t counter_table_value(const CounterTable *t, size_t row, size_t col);
/*
 * Append a row of t->n_cpus counts (dense: one per column), keeping those that are not zero.
 * Rows are appended in any order; counter_table_sort() puts them in order. -ERANGE beyond
 * COUNTER_ROWS_MAX rows; -ENOMEM (t is then as before the call).
 */
int counter_table_append(CounterTable *t, CounterTableRoom *room, const CounterRow *row, const uint64_t *values);
/* Rows into counter_row_cmp's order, their counts with them; -EBADMSG for a row twice, -ENOMEM. */
int counter_table_sort(CounterTable *t);

/*
 * The increase of a counter from prev to cur. A decrease is taken as a reset, and the
 * increase as cur, counted from zero: a row whose IRQ was freed and its number given
 * to another device, a VF re-created, a thread's PID reused. A 32-bit counter that
 * wraps (the kernel's per-CPU IRQ counts are unsigned int, on 64-bit hosts too) looks
 * the same and is under-counted for that one period — once in 12 hours at 100,000
 * interrupts a second — where taking a reset for a wrap would report billions a
 * second and raise alerts. *ret_reset (may be NULL) says which way it went.
 */
uint64_t counter_delta(uint64_t prev, uint64_t cur, bool *ret_reset);

/*
 * Rates per second between two samples of the same file, elapsed_usec apart.
 *
 * The result has cur's rows and the CPUs in both samples: a CPU that went offline
 * has nothing to compare; one that came online (or back) has counts from before it
 * went away, so it gets no rate until the next period. A row that disappeared is
 * left out. A row that appeared counts from zero (counter_delta's reset): the kernel
 * prints an IRQ only once it has a handler or a count, so its count at the earlier
 * sample was zero or its descriptor is new; reset[] marks it, as it marks a row in
 * which any counter went down.
 */
typedef struct CounterRates {
        unsigned *cpus;
        size_t n_cpus;
        CounterRow *rows;
        size_t n_rows;
        /* The rates that are not zero, as a CounterTable keeps its counts: row i's are entries
         * first[i] .. first[i + 1] - 1, by column (a count that did not move has no entry). */
        size_t *first;
        uint32_t *col;
        double *rates;                   /* per second */
        size_t n_entries;
        bool *reset;                     /* per row: new, or some counter went down */
} CounterRates;

/* -EINVAL for elapsed_usec 0; -ENOMEM. *ret is the caller's to counter_rates_done(). */
int counter_table_rates(const CounterTable *prev, const CounterTable *cur, uint64_t elapsed_usec,
                        CounterRates *ret);
void counter_rates_done(CounterRates *r);
/* The rate of row on column col: 0 where there is no entry. */
double counter_rates_value(const CounterRates *r, size_t row, size_t col);
/* The row's rate summed over the CPUs. */
double counter_rates_row_total(const CounterRates *r, size_t row);

/*
 * One VF's (or netdev's) traffic counters, as IFLA_VF_STATS and IFLA_STATS64 give them.
 * have says which the kernel gave: a field not in it is "not available" (a kernel before
 * the drop counters, IFLA_STATS64 has no broadcast), not a zero. A driver without
 * ndo_get_vf_stats (igb) gets all-zero VF stats from the kernel, which look like no
 * traffic: no reader can tell.
 */
typedef enum VfCounterField {
        VF_COUNTER_RX_PACKETS = 1u << 0,
        VF_COUNTER_TX_PACKETS = 1u << 1,
        VF_COUNTER_RX_BYTES = 1u << 2,
        VF_COUNTER_TX_BYTES = 1u << 3,
        VF_COUNTER_RX_DROPPED = 1u << 4,
        VF_COUNTER_TX_DROPPED = 1u << 5,
        VF_COUNTER_BROADCAST = 1u << 6,
        VF_COUNTER_MULTICAST = 1u << 7,
} VfCounterField;

typedef struct VfCounters {
        uint64_t rx_packets, tx_packets;
        uint64_t rx_bytes, tx_bytes;
        uint64_t rx_dropped, tx_dropped;
        uint64_t broadcast, multicast;
        uint32_t have;                   /* VF_COUNTER_* the kernel gave */
} VfCounters;

typedef struct VfRates {
        double rx_packets, tx_packets;
        double rx_bytes, tx_bytes;
        double rx_dropped, tx_dropped;
        double broadcast, multicast;
        bool reset;                      /* some counter went down: a VF reset or re-created */
        uint32_t have;                   /* VF_COUNTER_* in both samples; the others' rates are 0 */
} VfRates;

/* -EINVAL for elapsed_usec 0. */
int vf_counters_rates(const VfCounters *prev, const VfCounters *cur, uint64_t elapsed_usec, VfRates *ret);

/* CPU time of one thread (/proc/PID/task/TID/stat utime, stime), in clock ticks (USER_HZ). */
typedef struct ThreadTimes {
        pid_t pid, tid;
        uint64_t utime, stime;
        uint64_t start_time;             /* ticks after boot: tells a reused TID from the same thread */
} ThreadTimes;

/*
 * The share of one CPU the thread used between the samples (1.0 = a whole CPU),
 * ticks_per_sec = sysconf(_SC_CLK_TCK). A different start_time is another thread
 * under a reused TID: its times count from zero. -EINVAL for elapsed_usec or
 * ticks_per_sec 0, or two different TIDs.
 */
int thread_times_cpu_share(const ThreadTimes *prev, const ThreadTimes *cur, uint64_t elapsed_usec,
                           unsigned long ticks_per_sec, double *ret);
