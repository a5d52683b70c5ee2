/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-cpu-times.c — turns the cpuN lines of /proc/stat into a counter table of each CPU's user, system, irq and other times */

#include <errno.h>
#include <string.h>

#include "sriovd/kernel/proc-counters.h"
#include "sriovd/shared/cpuset.h"
#include "proc-table-internal.h"

const char *const proc_cpu_time_fields[PROC_CPU_TIME_FIELDS] = {
        "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

int proc_cpu_times_parse(const char *buf, CounterTable *ret) {
        _cleanup_(proc_table_builder_done) ProcTableBuilder b = {};
        /* The file gives one CPU per line, but the table stores one field per row.
         * So the values are collected by CPU first and then turned into rows. */
        _cleanup_free_ uint64_t *by_cpu = NULL, *row_values = NULL;
        size_t allocated_cpus = 0, allocated_values = 0;
        const char *p = buf;
        ProcLine line;
        int r;

        while (proc_next_line(&p, &line)) {
                const char *q = line.start;
                uint64_t cpu;

                /* The "cpu " line is the sum over all CPUs. Lines such as intr, ctxt and btime are not per CPU. */
                if (line.end - q < 4 || strncmp(q, "cpu", 3) != 0 || q[3] < '0' || q[3] > '9')
                        continue;
                q += 3;
                r = proc_parse_u64(&q, line.end, &cpu);
                if (r < 0)
                        return r;
                if (cpu >= CPUSET_MAX)
                        return -ERANGE;
                if (b.t.n_cpus > 0 && cpu <= b.t.cpus[b.t.n_cpus - 1])
                        return -EBADMSG;
                if (GREEDY_REALLOC(b.t.cpus, allocated_cpus, b.t.n_cpus + 1) < 0 ||
                    GREEDY_REALLOC(by_cpu, allocated_values, (b.t.n_cpus + 1) * PROC_CPU_TIME_FIELDS) < 0)
                        return -ENOMEM;
                for (size_t f = 0; f < PROC_CPU_TIME_FIELDS; f++) {
                        q = proc_skip_blanks(q, line.end);
                        r = proc_parse_u64(&q, line.end, &by_cpu[b.t.n_cpus * PROC_CPU_TIME_FIELDS + f]);
                        if (r < 0)
                                return r;
                }
                b.t.cpus[b.t.n_cpus++] = (unsigned) cpu;
        }
        if (b.t.n_cpus == 0)
                return -EBADMSG;

        row_values = malloc(b.t.n_cpus * sizeof(*row_values));
        if (!row_values)
                return -ENOMEM;
        for (size_t f = 0; f < PROC_CPU_TIME_FIELDS; f++) {
                CounterRow row = { .irq = COUNTER_NAMED };

                strscpy(row.name, sizeof(row.name), proc_cpu_time_fields[f]);
                for (size_t k = 0; k < b.t.n_cpus; k++)
                        row_values[k] = by_cpu[k * PROC_CPU_TIME_FIELDS + f];
                r = proc_table_add(&b, &row, row_values);
                if (r < 0)
                        return r;
        }
        return proc_table_finish(&b, ret);
}

int proc_cpu_times_read(RootFs *root, CounterTable *ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = rootfs_read(root, &buf, "/proc/stat");
        if (r < 0)
                return r;
        return proc_cpu_times_parse(buf, ret);
}
