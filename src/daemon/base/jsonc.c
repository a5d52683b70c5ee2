/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jsonc.c — build and print json-c trees, with adders that report ENOMEM and text that is always UTF-8 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "sriovd/shared/util.h"
#include "jsonc.h"

int jsonc_add(json_object *obj, const char *key, json_object *o) {
        if (!o)
                return -ENOMEM;
        if (json_object_object_add_ex(obj, key, o, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT) < 0) {
                /* json-c leaves the value to the caller when it cannot insert it. */
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int jsonc_add_null(json_object *obj, const char *key) {
        /* json-c's null is the NULL object. */
        return json_object_object_add_ex(obj, key, NULL, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT) < 0 ? -ENOMEM : 0;
}

int jsonc_append(json_object *arr, json_object *o) {
        if (!o)
                return -ENOMEM;
        if (json_object_array_add(arr, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

/* Copies s with each byte that is not part of valid UTF-8 replaced by U+FFFD, because json-c would print it raw. */
static json_object *text_new(const char *s) {
        _cleanup_free_ char *copy = NULL;
        size_t n = strlen(s), k = 0;
        bool valid = true;

        for (size_t i = 0, len; valid && i < n; i += len)
                valid = (len = utf8_sequence_len((const unsigned char *) s + i, n - i)) > 0;
        if (valid)
                return json_object_new_string_len(s, (int) n);

        copy = malloc(n * 3 + 1);
        if (!copy)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t len = utf8_sequence_len((const unsigned char *) s + i, n - i);
                if (len == 0) {
                        memcpy(copy + k, "\xef\xbf\xbd", 3);
                        k += 3;
                        i++;
                        continue;
                }
                memcpy(copy + k, s + i, len);
                k += len;
                i += len;
        }
        return json_object_new_string_len(copy, (int) k);
}

int jsonc_add_string(json_object *obj, const char *key, const char *s) {
        return s ? jsonc_add(obj, key, text_new(s)) : jsonc_add_null(obj, key);
}

int jsonc_add_int(json_object *obj, const char *key, int64_t v) {
        return jsonc_add(obj, key, json_object_new_int64(v));
}

int jsonc_add_bool(json_object *obj, const char *key, bool v) {
        return jsonc_add(obj, key, json_object_new_boolean(v));
}

int jsonc_append_string(json_object *arr, const char *s) {
        return s ? jsonc_append(arr, text_new(s)) : (json_object_array_add(arr, NULL) < 0 ? -ENOMEM : 0);
}

static int empty_to_string(json_object *o, struct printbuf *pb, int level, int flags) {
        return printbuf_memappend(pb, json_object_is_type(o, json_type_array) ? "[]" : "{}", 2);
}

/* In pretty mode, json-c prints an empty container over two lines. sriovd prints it on one line, as "[]" or "{}". */
static void empty_inline(json_object *o) {
        if (json_object_is_type(o, json_type_array)) {
                size_t n = json_object_array_length(o);
                if (n == 0)
                        json_object_set_serializer(o, empty_to_string, NULL, NULL);
                for (size_t i = 0; i < n; i++)
                        empty_inline(json_object_array_get_idx(o, i));
        } else if (json_object_is_type(o, json_type_object)) {
                if (json_object_object_length(o) == 0)
                        json_object_set_serializer(o, empty_to_string, NULL, NULL);
                json_object_object_foreach(o, key, v) {
                        (void) key;
                        empty_inline(v);
                }
        }
}

const char *jsonc_text(json_object *o, int flags, size_t *ret_len) {
        empty_inline(o);
        return json_object_to_json_string_length(o, flags, ret_len);
}
