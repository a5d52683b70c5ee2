/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jsonc.h — json-c as sriovd uses it: cleanup helpers, adders that report a lack of memory, and printing */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "sriovd/shared/macro.h"

/*
 * json-c's objects are reference counted. A variable declared as
 * _cleanup_(json_object_putp) json_object *o = NULL; drops the reference that o holds, if any.
 */
DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

/*
 * The adders give obj a member named key. key is a string literal that obj does not have yet,
 * and it is never copied. They return 0, or -ENOMEM when memory runs out. jsonc_add takes o, a
 * new reference. o is NULL when its constructor ran out of memory. obj owns o afterwards, and o
 * is put on failure.
 */
int jsonc_add(json_object *obj, const char *key, json_object *o);
int jsonc_add_null(json_object *obj, const char *key);
/*
 * Adds s as text, and NULL as null. Interface and domain names are bytes, so bytes that are not
 * UTF-8 become U+FFFD.
 */
int jsonc_add_string(json_object *obj, const char *key, const char *s);
int jsonc_add_int(json_object *obj, const char *key, int64_t v);
int jsonc_add_bool(json_object *obj, const char *key, bool v);
/*
 * These append o, as jsonc_add() takes it, or the text s, as jsonc_add_string() takes it, to the
 * array arr.
 */
int jsonc_append(json_object *arr, json_object *o);
int jsonc_append_string(json_object *arr, const char *s);


/*
 * Returns o printed with json-c's JSON_C_TO_STRING_* flags. Empty arrays and objects print as
 * "[]" and "{}" whatever the flags, as sriovd always wrote them. The text belongs to o and stays
 * valid until o changes or is put. *ret_len is the length without the NUL. Returns NULL when
 * memory runs out.
 */
const char *jsonc_text(json_object *o, int flags, size_t *ret_len);

/* sriovd's pretty form indents by 2 spaces, puts ": " after keys and leaves '/' unescaped. */
#define JSONC_PRETTY (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
/* The compact form is one line, as short as it gets. */
#define JSONC_COMPACT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
