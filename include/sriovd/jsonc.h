/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jsonc.h — json-c as sriovd uses it: cleanup helpers for its refcounted objects, adders that report memory, printing */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "sriovd/macro.h"

/* _cleanup_(json_object_putp) json_object *o = NULL;  drops the reference o holds, if any. */
DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

/*
 * The adders: obj gets a member key (a string literal, never copied, that obj does not have
 * yet). 0, or -ENOMEM. jsonc_add takes o (a new reference; NULL when its constructor ran out
 * of memory), which obj owns afterwards, or which is put on failure.
 */
int jsonc_add(json_object *obj, const char *key, json_object *o);
int jsonc_add_null(json_object *obj, const char *key);
/* s as text: NULL is null; bytes that are not UTF-8 (interface and domain names are bytes) become U+FFFD. */
int jsonc_add_string(json_object *obj, const char *key, const char *s);
int jsonc_add_int(json_object *obj, const char *key, int64_t v);
int jsonc_add_bool(json_object *obj, const char *key, bool v);
/* Append o (as jsonc_add) or the text s (as jsonc_add_string) to the array arr. */
int jsonc_append(json_object *arr, json_object *o);
int jsonc_append_string(json_object *arr, const char *s);


/*
 * o printed with json-c's flags (JSON_C_TO_STRING_*), empty arrays and objects as "[]" and "{}"
 * whatever the flags, as sriovd always wrote them. The text belongs to o (valid until o changes
 * or is put); *ret_len without the NUL. NULL when out of memory.
 */
const char *jsonc_text(json_object *o, int flags, size_t *ret_len);

/* sriovd's pretty form: 2-space indent, ": " after keys, '/' unescaped. */
#define JSONC_PRETTY (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
/* One line, as short as it gets. */
#define JSONC_COMPACT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
