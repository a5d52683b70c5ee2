/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.h — a tiny streaming JSON writer for --json output (no parser needed) */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "sriovd/util.h"   /* utf8_sequence_len(), which the writer's users share */

/* Nesting is tracked so commas are placed automatically. */
typedef struct JsonWriter {
        FILE *f;
        unsigned depth;
        bool need_comma[32];
        bool compact;   /* one line: no newline or indent inside the document */
} JsonWriter;

void json_init(JsonWriter *w, FILE *f);
void json_object_begin(JsonWriter *w, const char *key);   /* key NULL inside arrays/top */
void json_object_end(JsonWriter *w);
void json_array_begin(JsonWriter *w, const char *key);
void json_array_end(JsonWriter *w);
void json_string(JsonWriter *w, const char *key, const char *value);  /* NULL -> null */
void json_int(JsonWriter *w, const char *key, long long value);
void json_bool(JsonWriter *w, const char *key, bool value);
void json_null(JsonWriter *w, const char *key);
void json_double(JsonWriter *w, const char *key, double value);  /* NaN/inf -> null */
