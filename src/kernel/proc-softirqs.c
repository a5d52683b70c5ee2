/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-softirqs.c — parses /proc/softirqs into each softirq's count per possible CPU, NET_RX and NET_TX among them */

#include <errno.h>
#include <string.h>

#include "sriovd/kernel/proc-counters.h"
#include "proc-table-internal.h"

int proc_softirqs_parse(const char *buf, CounterTable *ret) {
        _cleanup_(proc_table_builder_done) ProcTableBuilder b = {};
        _cleanup_free_ uint64_t *values = NULL;
        const char *p = buf;
        ProcLine line;
        int r;

        r = proc_table_begin(&p, &b, &values);
        if (r < 0)
                return r;

        while (proc_next_line(&p, &line)) {
                const char *s = proc_skip_blanks(line.start, line.end), *colon, *q;
                CounterRow row = { .irq = COUNTER_NAMED };
                size_t len;

                if (s >= line.end)
                        continue;
                colon = memchr(s, ':', (size_t) (line.end - s));
                if (!colon)
                        return -EBADMSG;
                len = (size_t) (colon - s);
                /* The names come from the kernel's softirq_to_name[]. They are short and upper-case,
                 * and the kernel always prints all of them. */
                if (len == 0 || len >= COUNTER_NAME_MAX)
                        return -EBADMSG;
                for (size_t i = 0; i < len; i++)
                        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                                return -EBADMSG;
                memcpy(row.name, s, len);
                row.name[len] = 0;

                q = colon + 1;
                for (size_t k = 0; k < b.t.n_cpus; k++) {
                        q = proc_skip_blanks(q, line.end);
                        r = proc_parse_u64(&q, line.end, &values[k]);
                        if (r < 0)
                                return r;
                }
                if (proc_skip_blanks(q, line.end) != line.end)
                        return -EBADMSG;   /* the line has more counts than CPUs */

                r = proc_table_add(&b, &row, values);
                if (r < 0)
                        return r;
        }

        return proc_table_finish(&b, ret);
}

int proc_softirqs_read(RootFs *root, CounterTable *ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = rootfs_read(root, &buf, "/proc/softirqs");
        if (r < 0)
                return r;
        return proc_softirqs_parse(buf, ret);
}
