/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-stat.h — /proc/PID/stat and IRQ thread names, parsed without I/O */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

typedef struct ProcStat {
        pid_t pid;
        char comm[64];
        unsigned long flags;
        unsigned rt_priority;
        unsigned policy;
        uint64_t utime, stime;         /* in clock ticks of USER_HZ */
        uint64_t start_time;           /* clock ticks after boot */
} ProcStat;
#define PF_KTHREAD 0x00200000UL
/* A /proc/PID/stat line has 52 fields of at most 20 digits and a 16-byte name, so it is under 1,100 bytes. */
#define PROC_STAT_MAX 2048

/* Parses /proc/PID/stat. It does no I/O. */
int proc_stat_parse(const char *buf, ProcStat *ret);
/* Returns the IRQ number of a thread named "irq/N-...", or -EINVAL for any other name. */
int irq_thread_name_parse(const char *comm);
