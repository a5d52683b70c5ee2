/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-softnet.c — parses /proc/net/softnet_stat into each online CPU's packets processed, drops and time squeezes */

#include <errno.h>
#include <string.h>

#include "sriovd/kernel/proc-counters.h"
#include "sriovd/shared/cpuset.h"
#include "proc-table-internal.h"

const char *const proc_softnet_fields[PROC_SOFTNET_FIELDS] = {
        "processed", "dropped", "time_squeeze",
};

/*
 * The columns the kernel has printed since 2.6: processed, dropped, time_squeeze, five zeros
 * where fastroute was, and cpu_collision. 2.6.35 added received_rps and 3.11 flow_limit_count.
 * 5.10 added the backlog length and then the CPU's number. 6.x kernels add the input and
 * process queue lengths after it.
 */
#define SOFTNET_COLUMNS_MIN 9
#define SOFTNET_CPU_COLUMN 12
#define SOFTNET_COLUMNS_MAX 64

/* Parses a hex number at *p, as the kernel prints it with %08x, and moves *p past it. */
static int parse_hex(const char **p, const char *end, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;
        size_t n = 0;

        for (; s < end && *s != ' ' && *s != '\t'; s++, n++) {
                unsigned d;

                if (*s >= '0' && *s <= '9')
                        d = (unsigned) (*s - '0');
                else if (*s >= 'a' && *s <= 'f')
                        d = (unsigned) (*s - 'a' + 10);
                else if (*s >= 'A' && *s <= 'F')
                        d = (unsigned) (*s - 'A' + 10);
                else
                        return -EBADMSG;
                if (v >> 60)
                        return -ERANGE;
                v = v << 4 | d;
        }
        if (n == 0)
                return -EBADMSG;
        *p = s;
        *ret = v;
        return 0;
}

int proc_softnet_parse(const char *buf, const CpuSet *online, CounterTable *ret) {
        _cleanup_(proc_table_builder_done) ProcTableBuilder b = {};
        /* As for /proc/stat, the file gives one CPU per line and the table one field per row. */
        _cleanup_free_ uint64_t *by_cpu = NULL, *row_values = NULL;
        size_t allocated_cpus = 0, allocated_values = 0, n_lines = 0;
        int with_cpu = -1;   /* whether the lines carry the CPU's number; -1 before the first line */
        const char *p = buf;
        ProcLine line;
        int r;

        while (proc_next_line(&p, &line)) {
                uint64_t cols[SOFTNET_COLUMNS_MAX];
                const char *q = proc_skip_blanks(line.start, line.end);
                size_t n = 0;
                uint64_t cpu;

                if (q >= line.end)
                        continue;
                while (q < line.end) {
                        if (n >= SOFTNET_COLUMNS_MAX)
                                return -EBADMSG;
                        r = parse_hex(&q, line.end, &cols[n++]);
                        if (r < 0)
                                return r;
                        q = proc_skip_blanks(q, line.end);
                }
                if (n < SOFTNET_COLUMNS_MIN)
                        return -EBADMSG;
                /* Every line of one file comes from the same format. */
                if (with_cpu >= 0 && with_cpu != (n > SOFTNET_CPU_COLUMN))
                        return -EBADMSG;
                with_cpu = n > SOFTNET_CPU_COLUMN;

                if (with_cpu)
                        cpu = cols[SOFTNET_CPU_COLUMN];
                else {
                        /* Before 5.10, a line's CPU is its place among the online CPUs. */
                        int c;

                        if (!online)
                                return -ENODATA;
                        c = cpuset_nth(online, (unsigned) n_lines);
                        if (c < 0)
                                return -ESTALE;
                        cpu = (uint64_t) c;
                }
                n_lines++;
                if (cpu >= CPUSET_MAX)
                        return -ERANGE;
                if (b.t.n_cpus > 0 && cpu <= b.t.cpus[b.t.n_cpus - 1])
                        return -EBADMSG;
                if (GREEDY_REALLOC(b.t.cpus, allocated_cpus, b.t.n_cpus + 1) < 0 ||
                    GREEDY_REALLOC(by_cpu, allocated_values, (b.t.n_cpus + 1) * PROC_SOFTNET_FIELDS) < 0)
                        return -ENOMEM;
                memcpy(&by_cpu[b.t.n_cpus * PROC_SOFTNET_FIELDS], cols, PROC_SOFTNET_FIELDS * sizeof(uint64_t));
                b.t.cpus[b.t.n_cpus++] = (unsigned) cpu;
        }
        if (b.t.n_cpus == 0)
                return -EBADMSG;
        /* The online CPUs changed between the two reads, so the lines cannot be placed. */
        if (!with_cpu && n_lines != cpuset_count(online))
                return -ESTALE;

        row_values = malloc(b.t.n_cpus * sizeof(*row_values));
        if (!row_values)
                return -ENOMEM;
        for (size_t f = 0; f < PROC_SOFTNET_FIELDS; f++) {
                CounterRow row = { .irq = COUNTER_NAMED };

                strscpy(row.name, sizeof(row.name), proc_softnet_fields[f]);
                for (size_t k = 0; k < b.t.n_cpus; k++)
                        row_values[k] = by_cpu[k * PROC_SOFTNET_FIELDS + f];
                r = proc_table_add(&b, &row, row_values);
                if (r < 0)
                        return r;
        }
        return proc_table_finish(&b, ret);
}

int proc_softnet_read(RootFs *root, CounterTable *ret) {
        _cleanup_free_ char *buf = NULL, *list = NULL;
        CpuSet online;
        int r;

        r = rootfs_read(root, &buf, "/proc/net/softnet_stat");
        if (r < 0)
                return r;
        r = proc_softnet_parse(buf, NULL, ret);
        if (r != -ENODATA)
                return r;

        /* A kernel before 5.10: the lines follow the online CPUs. */
        r = rootfs_read(root, &list, "/sys/devices/system/cpu/online");
        if (r < 0)
                return r;
        r = cpuset_parse_list(list, &online);
        if (r < 0)
                return r == -EINVAL ? -EBADMSG : r;
        return proc_softnet_parse(buf, &online, ret);
}
