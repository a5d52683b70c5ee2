/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test.h — minimal assertions for the unit tests (exit 77 = skip, as meson expects) */
#pragma once

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_TEST_SKIP 77

/* splitmix64: the randomized tests' generator, fixed seeds giving the same sequence everywhere. */
static inline uint64_t test_rng_next(uint64_t *s) {
        uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* 0..n-1 */
static inline unsigned test_rng(uint64_t *s, unsigned n) {
        return (unsigned) (test_rng_next(s) % n);
}

#define ASSERT(expr)                                                                   \
        do {                                                                           \
                if (!(expr)) {                                                         \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__,     \
                                __LINE__, #expr);                                      \
                        abort();                                                       \
                }                                                                      \
        } while (0)

#define ASSERT_EQ(a, b)                                                                \
        do {                                                                           \
                long long _a = (long long) (a), _b = (long long) (b);                  \
                if (_a != _b) {                                                        \
                        fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",     \
                                __FILE__, __LINE__, #a, #b, _a, _b);                   \
                        abort();                                                       \
                }                                                                      \
        } while (0)

#define ASSERT_STREQ(a, b)                                                             \
        do {                                                                           \
                const char *_a = (a), *_b = (b);                                       \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                               \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
                                __FILE__, __LINE__, #a, #b, _a ? _a : "(null)",        \
                                _b ? _b : "(null)");                                   \
                        abort();                                                       \
                }                                                                      \
        } while (0)

/* Substring check, for error messages. */
#define ASSERT_CONTAINS(haystack, needle)                                              \
        do {                                                                           \
                const char *_h = (haystack), *_n = (needle);                           \
                if (!_h || !strstr(_h, _n)) {                                          \
                        fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n",    \
                                __FILE__, __LINE__, _h ? _h : "(null)", _n);           \
                        abort();                                                       \
                }                                                                      \
        } while (0)

#define TEST(name) static void test_##name(void)
#define RUN(name)                                                                      \
        do {                                                                           \
                fprintf(stderr, "== %s\n", #name);                                     \
                test_##name();                                                         \
        } while (0)

/* Run a shell command built like printf (copying fixtures, cleaning up); it must succeed. */
/* path written whole with text. */
static inline void test_write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        ASSERT(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

static inline void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void sh(const char *fmt, ...) {
        char cmd[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        ASSERT_EQ(system(cmd), 0);
}
