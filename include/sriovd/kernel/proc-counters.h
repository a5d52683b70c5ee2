/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-counters.h — the kernel's counters in /proc: interrupts, softirqs, softnet, per-CPU time and thread CPU time */
#pragma once

#include <sys/types.h>

#include "sriovd/core/counters.h"
#include "sriovd/shared/cpuset.h"
#include "rootfs.h"

/*
 * The parsers are pure: a NUL-terminated buffer goes in and a table comes out. The caller frees
 * the table with counter_table_done(). The table is untouched on failure. Each parser fails with
 * -EBADMSG for what the kernel would not print. That is a missing CPU header, a row with fewer
 * counts than CPUs, a count that is not a number, a row that comes twice, or CPUs out of order.
 * It fails with -ERANGE for a count beyond 64 bits, a CPU at or beyond CPUSET_MAX, an IRQ number
 * beyond 32 bits, or more than COUNTER_ROWS_MAX rows. It fails with -ENOMEM when memory runs
 * out. Each reader reads the file under root and parses it.
 */

/*
 * /proc/interrupts gives numbered rows by IRQ. Its named rows, such as NMI, LOC and RES, become
 * named rows of the table. They count interrupts that no device asked for, and those land on RT
 * CPUs too. A named row is kept only when it has one count per CPU. ERR and MIS are totals, so
 * they are left out. A row with a name longer than COUNTER_NAME_MAX - 1 is left out too, though
 * the architectures we know have none. What follows the counts is not read: the chip, the hwirq
 * and the handler names. Its format changed between 6.1 and 6.12, and the IRQ's owner comes from
 * /proc/irq and sysfs.
 */
int proc_interrupts_parse(const char *buf, CounterTable *ret);
int proc_interrupts_read(RootFs *root, CounterTable *ret);

/*
 * /proc/softirqs gives one named row per softirq, such as HI, TIMER, NET_TX and NET_RX. Its
 * columns are the possible CPUs.
 */
int proc_softirqs_parse(const char *buf, CounterTable *ret);
int proc_softirqs_read(RootFs *root, CounterTable *ret);

/*
 * The cpuN lines of /proc/stat give one named row per field of PROC_CPU_TIME_FIELDS. The values
 * are in clock ticks of USER_HZ. The columns are the online CPUs. The "cpu" total and the other
 * lines are not read. A line needs the 8 fields up to steal, which came in Linux 2.6.11. Later
 * fields are ignored, because guest time is already in user.
 */
#define PROC_CPU_TIME_FIELDS 8
extern const char *const proc_cpu_time_fields[PROC_CPU_TIME_FIELDS];
int proc_cpu_times_parse(const char *buf, CounterTable *ret);
int proc_cpu_times_read(RootFs *root, CounterTable *ret);

/*
 * /proc/net/softnet_stat gives one line per online CPU, in hex. It becomes one named row per
 * field of PROC_SOFTNET_FIELDS: the packets the CPU's NET_RX processed, the packets dropped
 * because its backlog was full, and the times NET_RX stopped with work left, its budget or its
 * time spent. The columns are the online CPUs. An offline CPU has no line. The counts are 32 bits
 * wide in the kernel, so they wrap, and counter_delta() takes a wrap for a reset.
 *
 * Since Linux 5.10 the 13th column is the CPU's number. Before, a line's CPU is only its place
 * among the online CPUs. Such a file needs online, the online CPUs read at the same time: the
 * parser returns -ENODATA without it, and -ESTALE when the lines do not match its count, because
 * a CPU went on- or offline between the two reads. A line needs the 9 columns of Linux 2.6.
 * proc_softnet_read() reads /sys/devices/system/cpu/online only for a file without CPU numbers.
 */
#define PROC_SOFTNET_FIELDS 3
extern const char *const proc_softnet_fields[PROC_SOFTNET_FIELDS];
int proc_softnet_parse(const char *buf, const CpuSet *online, CounterTable *ret);
int proc_softnet_read(RootFs *root, CounterTable *ret);

/*
 * Reads one thread's CPU time from /proc/PID/task/TID/stat with proc_stat_parse(). Returns
 * -ENOENT or -ESRCH when the thread has exited. Returns -EBADMSG for a line that does not parse
 * or that names another TID.
 */
int proc_thread_times_read(RootFs *root, pid_t pid, pid_t tid, ThreadTimes *ret);
/*
 * These keep the same file open between reads. proc_thread_times_open() opens it with
 * rootfs_open_file() and returns the fd, which the caller closes. proc_thread_times_reread()
 * reads it again through the fd. They return the same errors, and -ESRCH once the thread has
 * exited.
 */
int proc_thread_times_open(RootFs *root, pid_t pid, pid_t tid);
/*
 * Parses /proc/PID/schedstat: three numbers, the ns run, the ns waited on a run queue, and the
 * timeslices. It does no I/O. Returns -EBADMSG for anything else.
 */
int proc_schedstat_parse(const char *buf, ThreadSchedstat *ret);
/* Reads /proc/TID/schedstat. Returns -ENOENT when the thread has exited. */
int proc_schedstat_read(RootFs *root, pid_t tid, ThreadSchedstat *ret);
int proc_thread_times_reread(int fd, pid_t pid, pid_t tid, ThreadTimes *ret);

