/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-threads.h — the threads under a /proc directory, with their stat */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * Parses a /proc entry's name as a PID, which has decimal digits only and is above 0. It does no
 * I/O. Returns -EINVAL for any other name.
 */
int proc_pid_parse(const char *s, pid_t *ret);
/*
 * Reads the stat of thread tid under dir. Returns -ESRCH when the thread is gone, or when what is
 * there is no stat. It may also return -EMFILE, -ENFILE and -ENOMEM.
 */
int proc_thread_stat(RootFs *root, const char *dir, pid_t tid, ProcStat *ret);
typedef int (*ProcThreadFn)(RootFs *root, const char *dir, pid_t tid, const ProcStat *st, void *userdata);
/*
 * Calls fn with its stat for each thread under dir, except skip. dir is "/proc/QEMU/task", or
 * "/proc" for kernel threads. A thread that is gone meanwhile, or whose stat does not parse, is
 * passed over. When fn returns a negative errno, the walk ends and returns it.
 */
int proc_threads_each(RootFs *root, const char *dir, pid_t skip, ProcThreadFn fn, void *userdata);
