/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jsonc.h — json-c with cleanup helpers: objects are refcounted, and each reference is put once */
#pragma once

#include <json-c/json.h>

#include "sriovd/macro.h"

/* _cleanup_(json_object_putp) json_object *o = NULL;  drops the reference o holds, if any. */
DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

/*
 * Add o (a new reference, NULL when its constructor ran out of memory) to obj under key, a
 * string literal that obj does not have yet: 0, with o's reference moved into obj; -ENOMEM, o put.
 */
static inline int json_add(json_object *obj, const char *key, json_object *o) {
        if (!o)
                return -ENOMEM;
        if (json_object_object_add_ex(obj, key, o, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

/* A null member (json-c's null is the NULL object). */
static inline int json_add_null(json_object *obj, const char *key) {
        return json_object_object_add_ex(obj, key, NULL, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT) < 0 ? -ENOMEM : 0;
}

/* Append o (as json_add) to the array arr. */
static inline int json_append(json_object *arr, json_object *o) {
        if (!o)
                return -ENOMEM;
        if (json_object_array_add(arr, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}
