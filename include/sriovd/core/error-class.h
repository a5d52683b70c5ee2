/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* error-class.h — the one table that says what a kernel error means for each kind of action */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* A set of action kinds, one bit per ActionKind. */
#define ACTION_KINDS(k) (UINT32_C(1) << (k))

/*
 * One row of the table. The first row that matches an action's kind and errno gives the class
 * and the meaning. A row with kinds 0 matches every kind, and a row with error 0 matches every
 * errno. So the rows for one kind come before the rows for all kinds, and a kind's catch-all
 * row ends that kind's rows.
 */
typedef struct ErrorClassRow {
        uint32_t kinds;         /* ACTION_KINDS() of each kind, or 0 for every kind */
        int error;              /* a positive errno, or 0 for any other */
        ErrorClass class;
        const char *meaning;    /* for the operator; never NULL */
} ErrorClassRow;

/* The table's rows in the order they are matched. Returns the first row and sets *ret_n. */
const ErrorClassRow *error_class_table(size_t *ret_n);
/* The row that answers for error, negative or positive, and an action of kind. Never NULL. */
const ErrorClassRow *error_class_lookup(ActionKind kind, int error);
/* The class and meaning of that row. */
ErrorInfo kernel_error_classify(ActionKind kind, int error);
const char *error_class_to_string(ErrorClass c);
/*
 * Sets a's result to r, and for a failure the class and meaning of r in a->error, so that they
 * are looked up once.
 */
void action_set_result(Action *a, int r);
