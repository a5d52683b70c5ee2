/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-util.h — what the C benchmarks share: clocks, statistics, process counters, the fixture tree */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/shared/macro.h"

/* The 'large' fixture host every C benchmark runs on. */
#define BENCH_HOST_PFS 8
#define BENCH_HOST_VFS 64
#define BENCH_HOST_VF_IRQS 8

double bench_now_ms(void);
/* CPU time of this process so far (getrusage(RUSAGE_SELF)), in ms. */
void bench_cpu_ms(double *ret_user, double *ret_sys);

typedef struct Stats {
        double median, min, max;
} Stats;
Stats bench_stats(const double *v, size_t n);

/* Iterations from $SRIOVD_BENCH_ITERATIONS, else dflt. */
unsigned bench_default_iterations(unsigned dflt);

/* A "Key:   123 kB" line of /proc/self/status, in KiB; -1 if absent. */
long bench_status_kib(const char *key);
/* Reset VmHWM to the current RSS (Linux >= 4.0); false where /proc/self/clear_refs is refused. */
bool bench_hwm_reset(void);

/* /proc/self/io (CONFIG_TASK_IO_ACCOUNTING): read()/write() calls and bytes so far. */
typedef struct BenchIo {
        uint64_t syscr, syscw, rchar, wchar;
} BenchIo;
bool bench_io(BenchIo *ret);

/* Run argv (PATH lookup), stdout to /dev/null; 0 when it exits 0. */
int bench_spawn(char *const argv[]);
int bench_tree_remove(const char *path);

/*
 * Make DIR/sriovd-bench-XXXXXX, DIR = /dev/shm when it is a writable directory
 * (generating the tree on a disk-backed /tmp is slow), else $TMPDIR, else /tmp.
 * tmp is "" on failure, when there is nothing to remove.
 */
int bench_mkdtemp(char *tmp, size_t size);
/*
 * Writes DIR/sriovd.conf and DIR/tenant-classes.d/tp.ini: every vector of every PF and VF pinned
 * to the housekeeping CPUs of its node, and nothing else. The path of sriovd.conf goes to
 * config_path.
 */
int bench_write_config(const char *dir, char *config_path, size_t size);
/* mkhost.py large DEST with the BENCH_HOST_* shape; ret_ms = how long it took. */
int bench_mkhost_large(const char *python, const char *mkhost, const char *dest, double *ret_ms);

/* The options every C benchmark takes (see their --help). */
typedef struct BenchOptions {
        const char *mkhost;
        const char *python;
        const char *root;       /* an existing tree instead of a generated one */
        unsigned iterations;
        unsigned warmup;
} BenchOptions;

/* 1 = run, 0 = --help was printed, -EINVAL = bad usage (said on stderr as NAME: ...). */
int bench_parse_argv(int argc, char **argv, const char *name, unsigned default_warmup, void (*help)(void),
                     BenchOptions *o);
