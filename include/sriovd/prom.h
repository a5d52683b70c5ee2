/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* prom.h — the Prometheus text exposition format (version 0.0.4), written into a buffer */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/macro.h"

typedef enum PromType {
        PROM_COUNTER,                 /* its name must end in "_total" */
        PROM_GAUGE,
} PromType;

typedef struct PromLabel {
        const char *name;             /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
        const char *value;            /* any valid UTF-8; escaped as the format says */
} PromLabel;

#define PROM_FAMILIES_MAX 1024
#define PROM_SIZE_MAX (64u * 1024 * 1024)

/*
 * Families one after another, each declared once (HELP, TYPE) and followed by all its
 * samples, as the format requires. The first error sticks: every later call returns it,
 * and prom_writer_finish() too, so a caller may write a whole page and check once.
 */
typedef struct PromWriter {
        char *buf;
        size_t len, size;
        int error;
        char *family;                 /* the family samples go to now */
        char **families;              /* every family declared, to refuse a second declaration */
        size_t n_families;
} PromWriter;

void prom_writer_done(PromWriter *w);

/*
 * Start a family: "# HELP name help" (help escaped: backslash, newline) and "# TYPE".
 * -EINVAL for an invalid metric name, a counter not named *_total, help not UTF-8;
 * -EEXIST for a family declared before; -E2BIG beyond PROM_FAMILIES_MAX families or
 * PROM_SIZE_MAX bytes; -ENOMEM.
 */
int prom_family(PromWriter *w, const char *name, PromType type, const char *help);
/*
 * One sample of the current family: name{labels} value. -EINVAL for a name other than
 * the family's, no family, an invalid or repeated label name, a value not UTF-8, a
 * counter's value negative or NaN.
 */
int prom_sample(PromWriter *w, const PromLabel *labels, size_t n_labels, double value);
/* The same, a counter's exact integer (a double holds integers exactly only up to 2^53). */
int prom_sample_u64(PromWriter *w, const PromLabel *labels, size_t n_labels, uint64_t value);
/* The page, NUL-terminated (size without the NUL); the caller frees it. The writer is done either way. */
int prom_writer_finish(PromWriter *w, char **ret, size_t *ret_size);

bool prom_metric_name_valid(const char *name);
bool prom_label_name_valid(const char *name);
