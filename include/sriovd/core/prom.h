/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* prom.h — the Prometheus text exposition format, version 0.0.4, written into a buffer */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/shared/macro.h"

typedef enum PromType {
        PROM_COUNTER,                 /* its name must end in "_total" */
        PROM_GAUGE,
        PROM_HISTOGRAM,               /* its lines are NAME_bucket with le, NAME_sum and NAME_count */
} PromType;

typedef enum PromHistogramLine {
        PROM_HISTOGRAM_BUCKET,
        PROM_HISTOGRAM_SUM,
        PROM_HISTOGRAM_COUNT,
} PromHistogramLine;

typedef struct PromLabel {
        const char *name;             /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
        const char *value;            /* any valid UTF-8, escaped as the format says */
} PromLabel;

#define PROM_FAMILIES_MAX 1024
#define PROM_SIZE_MAX (64u * 1024 * 1024)

/*
 * The writer writes families one after another, as the format requires. Each family is declared
 * once with HELP and TYPE and is followed by all its samples. The first error sticks. Every
 * later call returns it, and so does prom_writer_finish(). So a caller may write a whole page
 * and check once.
 */
typedef struct PromWriter {
        char *buf;
        size_t len, size;
        int error;
        char *family;                 /* the family samples go to now */
        PromType type;                /* the current family's type */
        char **families;              /* every family declared, to refuse a second declaration */
        size_t n_families;
} PromWriter;

void prom_writer_done(PromWriter *w);

/*
 * Starts a family with "# HELP name help" and "# TYPE". Backslashes and newlines in help are
 * escaped. Returns -EINVAL for an invalid metric name, a counter not named *_total, a histogram
 * named *_total, *_bucket, *_sum or *_count, or help that is not UTF-8. Returns -EEXIST for a family declared before. Returns -E2BIG beyond
 * PROM_FAMILIES_MAX families or PROM_SIZE_MAX bytes, and -ENOMEM when memory runs out.
 */
int prom_family(PromWriter *w, const char *name, PromType type, const char *help);
/*
 * Writes one sample of the current family as name{labels} value, and the name is always the
 * family's. Returns -EINVAL when no family was started, for an invalid or repeated label name, or
 * for a label value that is not UTF-8. It also returns -EINVAL for a counter's value that is
 * negative or NaN.
 */
int prom_sample(PromWriter *w, const PromLabel *labels, size_t n_labels, double value);
/*
 * Writes one line of the current histogram family: NAME_bucket, NAME_sum or NAME_count. A bucket's
 * last label must be le. Returns -EINVAL when the family is not a histogram, for a bucket without
 * le last, or for a value that is negative or NaN; the other checks are prom_sample()'s.
 */
int prom_histogram_sample(PromWriter *w, PromHistogramLine line, const PromLabel *labels, size_t n_labels,
                          double value);
/* Does the same for a counter's exact integer, because a double holds integers exactly only up to 2^53. */
int prom_sample_u64(PromWriter *w, const PromLabel *labels, size_t n_labels, uint64_t value);
/*
 * Puts the page in *ret, NUL-terminated, and its size without the NUL in *ret_size. The caller
 * frees *ret. The writer is done either way.
 */
int prom_writer_finish(PromWriter *w, char **ret, size_t *ret_size);

bool prom_metric_name_valid(const char *name);
bool prom_label_name_valid(const char *name);
