/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* macro.h — cleanup attributes and small helpers shared by every module */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _public_ __attribute__((visibility("default")))
#define _fallthrough_ __attribute__((fallthrough))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* These hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                     \
        ({                              \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;             \
                _p_;                    \
        })
#define TAKE_FD(fd)                     \
        ({                              \
                int _fd_ = (fd);        \
                (fd) = -EBADF;          \
                _fd_;                   \
        })

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)        \
        static inline void func##p(type *p) {          \
                if (*p)                                \
                        func(*p);                      \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
/*
 * A memcpy() that allows NULL pointers when n is 0, as for an empty array. Plain memcpy() does
 * not allow them.
 */
static inline void *memcpy_safe(void *dst, const void *src, size_t n) {
        return n > 0 ? memcpy(dst, src, n) : dst;
}

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Returns errno as a negative value. It never returns 0, even if errno was not set. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

static inline int streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return __builtin_strcmp(a, b) == 0;
}
#define streq(a, b) (__builtin_strcmp((a), (b)) == 0)

/* Grows *array so that it holds at least need elements of size bytes each. */
int greedy_realloc(void **array, size_t *allocated, size_t need, size_t size);
/*
 * Appends the formatted item to the list in buf, such as "a, b, c". It puts ", " first unless *k
 * is 0. *k is the list's length. It never overruns, and buf is always NUL-terminated. A list that
 * does not fit is cut.
 */
void strjoin_appendf(char *buf, size_t size, size_t *k, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A qsort() and bsearch() comparator for arrays of unsigned, such as IRQ numbers. */
int unsigned_cmp(const void *a, const void *b);
#define GREEDY_REALLOC(array, allocated, need) \
        greedy_realloc((void **) &(array), &(allocated), (need), sizeof((array)[0]))

/* Copies src into dst, cut to fit and always NUL-terminated. Returns dst. */
static inline char *strscpy(char *dst, size_t size, const char *src) {
        size_t n = __builtin_strlen(src);
        if (size == 0)
                return dst;
        if (n >= size)
                n = size - 1;
        __builtin_memcpy(dst, src, n);
        dst[n] = 0;
        return dst;
}

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/*
 * qsort() and bsearch() are undefined for an empty array when base is NULL, and sriovd has many
 * such arrays.
 */
static inline void qsort_safe(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
        if (n > 1)
                qsort(base, n, size, cmp);
}
static inline void *bsearch_safe(const void *key, const void *base, size_t n, size_t size,
                                 int (*cmp)(const void *, const void *)) {
        return n > 0 ? bsearch(key, base, n, size, cmp) : NULL;
}
