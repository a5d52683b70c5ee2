/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-counters.h — the kernel's counters in /proc: interrupts, softirqs, per-CPU time, thread CPU time */
#pragma once

#include <sys/types.h>

#include "sriovd/counters.h"
#include "sriovd/rootfs.h"

/*
 * Pure parsers: a NUL-terminated buffer in, a table out (the caller's to
 * counter_table_done(); untouched on failure). Each fails with -EBADMSG for what the
 * kernel would not print (no CPU header, a row with fewer counts than CPUs, a count
 * that is not a number, a row twice, CPUs out of order), -ERANGE for a count beyond 64
 * bits, a CPU at or beyond CPUSET_MAX, an IRQ number beyond 32 bits or more than
 * COUNTER_ROWS_MAX rows, -ENOMEM. Each reader reads the file under root and parses it.
 */

/*
 * /proc/interrupts: the numbered rows (by IRQ), and the named ones (NMI, LOC, RES, ...:
 * interrupts no device asked for, which land on RT CPUs too) as named rows. A named row
 * is kept only with one count per CPU: ERR and MIS are totals and left out, as is a row
 * with a name longer than COUNTER_NAME_MAX - 1 (none on the architectures we know). What
 * follows the counts (chip, hwirq, handler names) is not read: its format changed
 * between 6.1 and 6.12, and the IRQ's owner comes from /proc/irq and sysfs.
 */
int proc_interrupts_parse(const char *buf, CounterTable *ret);
int proc_interrupts_read(RootFs *root, CounterTable *ret);

/* /proc/softirqs: one named row per softirq (HI, TIMER, NET_TX, NET_RX, ...), columns the possible CPUs. */
int proc_softirqs_parse(const char *buf, CounterTable *ret);
int proc_softirqs_read(RootFs *root, CounterTable *ret);

/*
 * /proc/stat's cpuN lines: one named row per field (PROC_CPU_TIME_FIELDS, in clock
 * ticks, USER_HZ), columns the online CPUs; the "cpu" total and the other lines are
 * not read. A line needs the 8 fields up to steal (Linux 2.6.11); later ones are
 * ignored (guest time is in user already).
 */
#define PROC_CPU_TIME_FIELDS 8
extern const char *const proc_cpu_time_fields[PROC_CPU_TIME_FIELDS];
int proc_cpu_times_parse(const char *buf, CounterTable *ret);
int proc_cpu_times_read(RootFs *root, CounterTable *ret);

/*
 * One thread's CPU time from /proc/PID/task/TID/stat (proc_stat_parse). -ENOENT (or
 * -ESRCH) when it has exited; -EBADMSG for a line that does not parse or names
 * another TID.
 */
int proc_thread_times_read(RootFs *root, pid_t pid, pid_t tid, ThreadTimes *ret);
/*
 * The same file kept open between reads (rootfs_open_file(); the fd is the caller's to close),
 * and read again through it: the same errors, -ESRCH once the thread has exited.
 */
int proc_thread_times_open(RootFs *root, pid_t pid, pid_t tid);
int proc_thread_times_reread(int fd, pid_t pid, pid_t tid, ThreadTimes *ret);

