/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-interrupts.c — parses /proc/interrupts into counts per IRQ and CPU, with named rows such as NMI and LOC kept apart */

#include <errno.h>
#include <string.h>

#include "sriovd/kernel/proc-counters.h"
#include "proc-table-internal.h"

static bool name_char(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Parses the counts after "NAME:" into values. Returns how many it read, at most max, or -EBADMSG or -ERANGE. */
static int parse_counts(const char *p, const char *end, uint64_t *values, size_t max) {
        size_t n = 0;

        for (;;) {
                const char *q = proc_skip_blanks(p, end);
                int r;

                if (n == max || q >= end || *q < '0' || *q > '9')
                        return (int) n;
                r = proc_parse_u64(&q, end, &values[n]);
                if (r == -EBADMSG)
                        return (int) n;   /* text such as "8259A-..." after the counts is the chip's name */
                if (r < 0)
                        return r;
                n++;
                p = q;
        }
}

int proc_interrupts_parse(const char *buf, CounterTable *ret) {
        _cleanup_(proc_table_builder_done) ProcTableBuilder b = {};
        _cleanup_free_ uint64_t *values = NULL;
        const char *p = buf;
        ProcLine line;
        int r;

        r = proc_table_begin(&p, &b, &values);
        if (r < 0)
                return r;
        /* Each count takes at least 11 bytes, from "%10u ". This bounds the number of rows, so the
         * room for every row is reserved at once. That avoids growing the rows by doubling and copying them. */
        r = proc_table_reserve(&b, strlen(p) / (11 * b.t.n_cpus + 1) + 32);
        if (r < 0)
                return r;

        while (proc_next_line(&p, &line)) {
                const char *s = proc_skip_blanks(line.start, line.end), *colon;
                CounterRow row = { .irq = COUNTER_NAMED };
                size_t len;
                int n;

                if (s >= line.end)
                        continue;
                colon = memchr(s, ':', (size_t) (line.end - s));
                if (!colon)
                        return -EBADMSG;
                len = (size_t) (colon - s);

                if (*s >= '0' && *s <= '9') {
                        uint64_t irq;
                        const char *q = s;

                        r = proc_parse_u64(&q, colon, &irq);
                        if (r < 0 || q != colon)
                                return r < 0 ? r : -EBADMSG;
                        if (irq >= COUNTER_NAMED)
                                return -ERANGE;
                        row.irq = (uint32_t) irq;
                } else {
                        bool ok = len > 0 && len < COUNTER_NAME_MAX;
                        for (size_t i = 0; ok && i < len; i++)
                                ok = name_char(s[i]);
                        if (!ok)
                                continue;   /* this is not a row of any known architecture */
                        memcpy(row.name, s, len);
                        row.name[len] = 0;
                }

                n = parse_counts(colon + 1, line.end, values, b.t.n_cpus);
                if (n < 0)
                        return n;
                if ((size_t) n != b.t.n_cpus) {
                        /* A device IRQ has a count on every online CPU.
                         * A named row without one, such as ERR or MIS, is a total and is skipped. */
                        if (row.irq != COUNTER_NAMED)
                                return -EBADMSG;
                        continue;
                }
                r = proc_table_add(&b, &row, values);
                if (r < 0)
                        return r;
        }

        return proc_table_finish(&b, ret);
}

int proc_interrupts_read(RootFs *root, CounterTable *ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = rootfs_read(root, &buf, "/proc/interrupts");
        if (r < 0)
                return r;
        return proc_interrupts_parse(buf, ret);
}
