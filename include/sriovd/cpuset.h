/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset.h — fixed-size CPU bitmaps and the kernel's list/mask text forms */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hosts with more CPUs than this are refused by the parsers with -ERANGE. */
#define CPUSET_MAX 1024

typedef struct CpuSet {
        uint64_t bits[CPUSET_MAX / 64];
} CpuSet;

static inline void cpuset_clear(CpuSet *s) {
        *s = (CpuSet) {};
}
static inline void cpuset_add(CpuSet *s, unsigned cpu) {
        if (cpu < CPUSET_MAX)
                s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}
static inline bool cpuset_has(const CpuSet *s, unsigned cpu) {
        return cpu < CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned cpuset_count(const CpuSet *s);
bool cpuset_is_empty(const CpuSet *s);
bool cpuset_equal(const CpuSet *a, const CpuSet *b);
void cpuset_and(CpuSet *ret, const CpuSet *a, const CpuSet *b);
void cpuset_or(CpuSet *ret, const CpuSet *a, const CpuSet *b);
void cpuset_andnot(CpuSet *ret, const CpuSet *a, const CpuSet *b);
/* Index of the n-th (0-based) CPU in the set, or -1. */
int cpuset_nth(const CpuSet *s, unsigned n);

/*
 * Parse the kernel's list form ("0-3,8,10-11", "" = empty, surrounding
 * whitespace and a trailing newline allowed). Returns 0 or -EINVAL on a
 * malformed list, -ERANGE on a CPU >= CPUSET_MAX. *ret is untouched on failure.
 */
int cpuset_parse_list(const char *s, CpuSet *ret);
/* Parse the kernel's hex mask form ("ff,00000001"). Same errors as above. */
int cpuset_parse_mask(const char *s, CpuSet *ret);
/* Format in the kernel's mask form ("ffff00c3", 32-bit groups, as wide as needed); returns buf. */
char *cpuset_format_mask(const CpuSet *s, char *buf, size_t size);
/* Format in list form into buf (always NUL-terminated); returns buf. */
char *cpuset_format_list(const CpuSet *s, char *buf, size_t size);
/* Enough for any set the list form can describe in practice. */
#define CPUSET_LIST_MAX 4096
