/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counters.h — samples of the kernel's counters for IRQs, softirqs, CPU time, VFs and threads, and their rates */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/shared/macro.h"

/*
 * A table of per-CPU counters, as /proc/interrupts, /proc/softirqs and the cpuN lines of
 * /proc/stat print them. Each row is an IRQ, a softirq or a CPU time field. The columns are the
 * CPUs that the kernel printed, in ascending order. Those are the online CPUs for
 * /proc/interrupts and /proc/stat, and the possible CPUs for /proc/softirqs.
 */
#define COUNTER_NAME_MAX 16           /* fits "NET_RX", "LOC" and "softirq"; longer rows are not ours */
#define COUNTER_ROWS_MAX (1u << 20)   /* beyond any kernel's IRQ count, so more means a hostile file */
#define COUNTER_NAMED UINT32_MAX      /* CounterRow.irq of a named row */

typedef struct CounterRow {
        uint32_t irq;                    /* the IRQ number; COUNTER_NAMED for a named row */
        char name[COUNTER_NAME_MAX];     /* "" for a numbered row */
} CounterRow;

typedef struct CounterTable {
        unsigned *cpus;                  /* column j counts on CPU cpus[j]; ascending, no duplicates */
        size_t n_cpus;
        CounterRow *rows;                /* numbered rows by IRQ, then named rows by name: counter_row_cmp() */
        size_t n_rows;
        /*
         * The table keeps only the counts that are not zero, row after row, each with its column.
         * Row i's counts are entries first[i] to first[i + 1] - 1, by column. first is NULL in an
         * empty table. On a large host an IRQ counts only on the CPU or two it was ever pinned
         * to. A dense table of IRQs by CPUs would be 2.2 MB there, for about 8,000 counts that
         * are not zero. Every parse would write it, and it would be kept as the next period's
         * baseline and subtracted from in full.
         */
        size_t *first;
        uint32_t *col;
        uint64_t *values;
        size_t n_entries;
} CounterTable;

/* The room reserved for a table built row by row with counter_table_append(). */
typedef struct CounterTableRoom {
        size_t rows, first, col, values;
} CounterTableRoom;

/* Frees what the table holds and zeroes it. The table itself belongs to the caller. */
void counter_table_done(CounterTable *t);
int counter_row_cmp(const void *a, const void *b);
/*
 * Returns the index of the row, or -1 when there is none. counter_table_find_cpu() returns the
 * column of a CPU in the same way.
 */
ssize_t counter_table_find(const CounterTable *t, const CounterRow *key);
ssize_t counter_table_find_cpu(const CounterTable *t, unsigned cpu);
/* Returns the count of row on column col, or 0 where the table has none. */
uint64_t counter_table_value(const CounterTable *t, size_t row, size_t col);
/*
 * Appends a row of t->n_cpus counts, one per column, and keeps those that are not zero. Rows are
 * appended in any order, and counter_table_sort() puts them in order. Returns -ERANGE beyond
 * COUNTER_ROWS_MAX rows. Returns -ENOMEM when memory runs out, and t is then as before the call.
 */
int counter_table_append(CounterTable *t, CounterTableRoom *room, const CounterRow *row, const uint64_t *values);
/*
 * Sorts the rows into the order of counter_row_cmp(), and their counts go with them. Returns
 * -EBADMSG for a row that comes twice, and -ENOMEM when memory runs out.
 */
int counter_table_sort(CounterTable *t);

/*
 * Returns the increase of a counter from prev to cur. A decrease is taken as a reset, and the
 * increase is then cur, counted from zero. Resets happen when an IRQ was freed and its number
 * given to another device, when a VF was re-created, or when a thread's PID was reused. A 32-bit
 * counter that wraps looks the same. The kernel's per-CPU IRQ counts are unsigned int, on 64-bit
 * hosts too. Such a counter is under-counted for that one period, which happens once in 12
 * hours at 100,000 interrupts a second. Taking a reset for a wrap instead would report billions
 * a second and raise alerts. *ret_reset says which way it went, and ret_reset may be NULL.
 */
uint64_t counter_delta(uint64_t prev, uint64_t cur, bool *ret_reset);

/*
 * Rates per second between two samples of the same file, taken elapsed_usec apart.
 *
 * The result has cur's rows and the CPUs that are in both samples. A CPU that went offline has
 * nothing to compare. A CPU that came online, or came back, has counts from before it went away,
 * so it gets no rate until the next period. A row that disappeared is left out. A row that
 * appeared counts from zero, as for a reset in counter_delta(). The kernel prints an IRQ only
 * once it has a handler or a count, so its count at the earlier sample was zero or its
 * descriptor is new. reset[] marks such a row, as it marks a row in which any counter went down.
 */
typedef struct CounterRates {
        unsigned *cpus;
        size_t n_cpus;
        CounterRow *rows;
        size_t n_rows;
        /*
         * The rates that are not zero, kept as a CounterTable keeps its counts. Row i's rates
         * are entries first[i] to first[i + 1] - 1, by column. A count that did not move has no entry.
         */
        size_t *first;
        uint32_t *col;
        double *rates;                   /* per second */
        size_t n_entries;
        bool *reset;                     /* per row: the row is new, or some counter went down */
} CounterRates;

/*
 * Computes the rates from prev to cur into *ret. The caller frees *ret with counter_rates_done().
 * Returns -EINVAL for an elapsed_usec of 0, and -ENOMEM when memory runs out.
 */
int counter_table_rates(const CounterTable *prev, const CounterTable *cur, uint64_t elapsed_usec,
                        CounterRates *ret);
void counter_rates_done(CounterRates *r);
/* Returns the rate of row on column col, or 0 where there is no entry. */
double counter_rates_value(const CounterRates *r, size_t row, size_t col);
/* Returns the row's rate summed over the CPUs. */
double counter_rates_row_total(const CounterRates *r, size_t row);

/*
 * The traffic counters of one VF or netdev, as IFLA_VF_STATS and IFLA_STATS64 give them. have
 * says which counters the kernel gave. A field not in have is not available, and it is not a
 * zero. That happens on a kernel from before the drop counters, and for broadcast, which
 * IFLA_STATS64 does not have. For a driver without ndo_get_vf_stats, such as igb, the kernel
 * gives VF stats that are all zero. They look like no traffic, and no reader can tell.
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
        uint32_t have;                   /* the VF_COUNTER_* fields the kernel gave */
} VfCounters;

typedef struct VfRates {
        double rx_packets, tx_packets;
        double rx_bytes, tx_bytes;
        double rx_dropped, tx_dropped;
        double broadcast, multicast;
        bool reset;                      /* some counter went down: the VF was reset or re-created */
        uint32_t have;                   /* the VF_COUNTER_* in both samples; the others' rates are 0 */
} VfRates;

/* Computes the rates from prev to cur into *ret. Returns -EINVAL for an elapsed_usec of 0. */
int vf_counters_rates(const VfCounters *prev, const VfCounters *cur, uint64_t elapsed_usec, VfRates *ret);

/* The CPU time of one thread, from utime and stime of /proc/PID/task/TID/stat, in clock ticks of USER_HZ. */
typedef struct ThreadTimes {
        pid_t pid, tid;
        uint64_t utime, stime;
        uint64_t start_time;             /* ticks after boot; it tells a reused TID from the same thread */
} ThreadTimes;

/*
 * One thread's /proc/PID/schedstat: the time it ran, the time it waited on a run queue, and the
 * number of times it got the CPU. The times are in ns. Needs CONFIG_SCHED_INFO, which Debian has.
 */
typedef struct ThreadSchedstat {
        uint64_t run_ns, wait_ns, timeslices;
} ThreadSchedstat;

/*
 * Puts in *ret_wait_ns the time the thread waited on a run queue between the samples, and in
 * *ret_timeslices the times it got the CPU. Their quotient is the mean wait per timeslice: a
 * mean, not a percentile. Returns -ERANGE when a counter went down, as when the TID was reused.
 */
int thread_schedstat_delta(const ThreadSchedstat *prev, const ThreadSchedstat *cur, uint64_t *ret_wait_ns,
                           uint64_t *ret_timeslices);

/*
 * Puts in *ret the share of one CPU that the thread used between the samples, where 1.0 is a
 * whole CPU. ticks_per_sec is sysconf(_SC_CLK_TCK). A different start_time means another thread
 * under a reused TID, and its times count from zero. Returns -EINVAL for an elapsed_usec or
 * ticks_per_sec of 0, or for two different TIDs.
 */
int thread_times_cpu_share(const ThreadTimes *prev, const ThreadTimes *cur, uint64_t elapsed_usec,
                           unsigned long ticks_per_sec, double *ret);
