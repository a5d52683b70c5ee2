/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset.c — CPU bitmaps and the kernel's "0-3,8" list and "ff,00000001" mask forms */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/shared/cpuset.h"

unsigned cpuset_count(const CpuSet *s) {
        unsigned n = 0;
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                n += (unsigned) __builtin_popcountll(s->bits[i]);
        return n;
}

bool cpuset_is_empty(const CpuSet *s) {
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                if (s->bits[i])
                        return false;
        return true;
}

bool cpuset_equal(const CpuSet *a, const CpuSet *b) {
        return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

void cpuset_and(CpuSet *ret, const CpuSet *a, const CpuSet *b) {
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] & b->bits[i];
}

void cpuset_or(CpuSet *ret, const CpuSet *a, const CpuSet *b) {
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] | b->bits[i];
}

void cpuset_andnot(CpuSet *ret, const CpuSet *a, const CpuSet *b) {
        for (size_t i = 0; i < CPUSET_MAX / 64; i++)
                ret->bits[i] = a->bits[i] & ~b->bits[i];
}

int cpuset_nth(const CpuSet *s, unsigned n) {
        for (unsigned cpu = 0; cpu < CPUSET_MAX; cpu++)
                if (cpuset_has(s, cpu) && n-- == 0)
                        return (int) cpu;
        return -1;
}

static const char *skip_space(const char *p) {
        while (*p && isspace((unsigned char) *p))
                p++;
        return p;
}

/* The parser is strict: it takes only digits, no sign, and no number at or above CPUSET_MAX. */
static int parse_cpu(const char **p, unsigned *ret) {
        const char *q = *p;
        unsigned long v = 0;

        if (!isdigit((unsigned char) *q))
                return -EINVAL;
        while (isdigit((unsigned char) *q)) {
                v = v * 10 + (unsigned long) (*q - '0');
                if (v >= CPUSET_MAX)
                        return -ERANGE;
                q++;
        }
        *p = q;
        *ret = (unsigned) v;
        return 0;
}

int cpuset_parse_list(const char *s, CpuSet *ret) {
        CpuSet set = {};
        const char *p = skip_space(s);
        int r;

        while (*p) {
                unsigned lo, hi;

                r = parse_cpu(&p, &lo);
                if (r < 0)
                        return r;
                hi = lo;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &hi);
                        if (r < 0)
                                return r;
                        if (hi < lo)
                                return -EINVAL;
                }
                for (unsigned c = lo; c <= hi; c++)
                        cpuset_add(&set, c);

                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                        continue;
                }
                p = skip_space(p);
                if (*p)
                        return -EINVAL;
        }

        *ret = set;
        return 0;
}

int cpuset_parse_mask(const char *s, CpuSet *ret) {
        CpuSet set = {};
        const char *start = skip_space(s), *end = start + strlen(start);
        unsigned bit = 0;

        while (end > start && isspace((unsigned char) end[-1]))
                end--;
        if (end == start)
                return -EINVAL;

        /* The walk starts at the rightmost digit, which is the least significant. */
        for (const char *p = end; p > start; p--) {
                char c = p[-1];
                int v;

                if (c == ',')
                        continue;
                if (!isxdigit((unsigned char) c))
                        return -EINVAL;
                v = isdigit((unsigned char) c) ? c - '0' : tolower((unsigned char) c) - 'a' + 10;
                for (unsigned i = 0; i < 4; i++) {
                        if (!(v & (1 << i)))
                                continue;
                        if (bit + i >= CPUSET_MAX)
                                return -ERANGE;
                        cpuset_add(&set, bit + i);
                }
                bit += 4;
        }

        *ret = set;
        return 0;
}

char *cpuset_format_mask(const CpuSet *s, char *buf, size_t size) {
        int top = CPUSET_MAX / 32 - 1;
        size_t n = 0;

        if (size == 0)
                return buf;
        while (top > 0 && !(uint32_t) (s->bits[top / 2] >> (32 * (top % 2))))
                top--;
        for (int g = top; g >= 0; g--) {
                uint32_t v = (uint32_t) (s->bits[g / 2] >> (32 * (g % 2)));
                int w = snprintf(buf + n, n < size ? size - n : 0, g == top ? "%x" : ",%08x", v);
                n += w > 0 ? (size_t) w : 0;
        }
        return buf;
}

char *cpuset_format_list(const CpuSet *s, char *buf, size_t size) {
        size_t n = 0;
        bool first = true;

        if (size == 0)
                return buf;
        buf[0] = 0;

        for (unsigned cpu = 0; cpu < CPUSET_MAX; cpu++) {
                unsigned end = cpu;
                int k;

                /* Most sets hold only a few of the CPUSET_MAX CPUs, so an empty word is skipped whole.
                 * This matters because a host's 4,224 IRQs are formatted for every --once run and
                 * for the log of every drift check. */
                if (cpu % 64 == 0 && s->bits[cpu / 64] == 0) {
                        cpu += 63;
                        continue;
                }
                if (!cpuset_has(s, cpu))
                        continue;
                while (end + 1 < CPUSET_MAX && cpuset_has(s, end + 1))
                        end++;

                if (end == cpu)
                        k = snprintf(buf + n, size - n, "%s%u", first ? "" : ",", cpu);
                else
                        k = snprintf(buf + n, size - n, "%s%u-%u", first ? "" : ",", cpu, end);
                if (k < 0 || (size_t) k >= size - n) {
                        buf[n] = 0;   /* the output must never end in half a range */
                        break;
                }
                n += (size_t) k;
                first = false;
                cpu = end;
        }
        return buf;
}
