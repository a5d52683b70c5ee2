/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-record.c — reads sriovd's replies generically into json-c values, so that keys a later sriovd adds come through too */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/protocol/bus-protocol.h"
#include "sriovd/shared/macro.h"
#include "sriovctl-record.h"

/* ---- JSON out (json-c) ---- */

void json_print(json_object *o) {
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Writes a double as people write it, 0.85 rather than json-c's 0.84999999999999998. It is still a JSON number. */
json_object *json_double(double d) {
        char buf[32];

        snprintf(buf, sizeof(buf), "%.15g", d);
        if (!strpbrk(buf, ".eEn"))
                strcat(buf, ".0");
        return json_object_new_double_s(d, buf);
}

void json_set(json_object *o, const char *key, json_object *value) {
        json_object_object_add(o, key, value);   /* a NULL value becomes JSON null */
}

/* ---- records: sriovd's a{sv} dictionaries, read generically into JSON values ---- */

/* Reads the container that m is in, element by element, into an array. Dict entries go into an object instead. */
int read_elements(sd_bus_message *m, bool dict, json_object **ret) {
        _cleanup_json_ json_object *o = dict ? json_object_new_object() : json_object_new_array();
        char type;
        const char *contents;
        int r;

        if (!o)
                return -ENOMEM;
        while ((r = sd_bus_message_peek_type(m, &type, &contents)) > 0) {
                _cleanup_json_ json_object *key = NULL, *value = NULL;

                if (!dict) {
                        r = read_value(m, &value);
                        if (r < 0)
                                return r;
                        json_object_array_add(o, TAKE_PTR(value));
                        continue;
                }
                r = sd_bus_message_enter_container(m, 'e', contents);
                if (r < 0)
                        return r;
                r = read_value(m, &key);
                if (r >= 0)
                        r = read_value(m, &value);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                /* The keys in sriovd's records are strings. A key of any other basic type becomes its JSON text. */
                json_object_object_add(o, json_object_get_type(key) == json_type_string ? json_object_get_string(key)
                                                                                       : json_object_to_json_string(key),
                                       TAKE_PTR(value));
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* Reads one value of any type, so that both what sriovd sends today and what a later sriovd may add come through. */
int read_value(sd_bus_message *m, json_object **ret) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (type == 'v' || type == 'a' || type == 'r') {
                bool dict = type == 'a' && contents[0] == '{';
                r = sd_bus_message_enter_container(m, type, contents);
                if (r < 0)
                        return r;
                if (type == 'v')
                        r = read_value(m, ret);
                else
                        r = read_elements(m, dict, ret);
                if (r < 0)
                        return r;
                return sd_bus_message_exit_container(m);
        }
        union {
                uint8_t y;
                int i;            /* for type b */
                int16_t n;
                uint16_t q;
                int32_t i32;
                uint32_t u;
                int64_t x;
                uint64_t t;
                double d;
                const char *s;
        } v;
        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        switch (type) {
        case 'y': *ret = json_object_new_int(v.y); break;
        case 'b': *ret = json_object_new_boolean(v.i); break;
        case 'n': *ret = json_object_new_int(v.n); break;
        case 'q': *ret = json_object_new_int(v.q); break;
        case 'i': *ret = json_object_new_int(v.i32); break;
        case 'h': *ret = json_object_new_int(v.i32); break;
        case 'u': *ret = json_object_new_int64(v.u); break;
        case 'x': *ret = json_object_new_int64(v.x); break;
        case 't': *ret = json_object_new_uint64(v.t); break;
        case 'd': *ret = json_double(v.d); break;
        default: *ret = json_object_new_string(v.s); break;   /* types s, o and g */
        }
        return *ret ? 0 : -ENOMEM;
}

/* Returns a record's string value. Returns NULL when the key is absent or has another type, as a later API's key may. */
const char *rec_str(json_object *rec, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(rec, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

bool rec_int(json_object *rec, const char *key, int64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(rec, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

bool rec_bool(json_object *rec, const char *key) {
        json_object *v;

        return json_object_object_get_ex(rec, key, &v) && json_object_get_boolean(v);
}

json_object *rec_get(json_object *rec, const char *key) {
        json_object *v;

        return json_object_object_get_ex(rec, key, &v) ? v : NULL;
}

/* Returns rec's value at key for a JSON document, as a new reference. An absent key gives JSON null. */
json_object *rec_ref(json_object *rec, const char *key) {
        return json_object_get(rec_get(rec, key));
}

/* Returns the record as sriovd sent it, with null for each listed key that it does not hold.
 * Scripts index these keys, so every one must be there. */
json_object *rec_mirror(json_object *rec, const char *const *keys) {
        json_object *o = json_object_get(rec);

        for (; *keys; keys++)
                if (!rec_get(o, *keys))
                        json_set(o, *keys, NULL);
        return o;
}

const char *dash(const char *s) {
        return s && *s ? s : "-";
}

char *alert_format(json_object *a, char *buf, size_t size) {
        json_object *labels = rec_get(a, SRIOVD_KEY_LABELS), *v;
        double value = NAN, threshold = NAN;
        char subject[512] = "";
        size_t k = 0;

        if (labels && json_object_is_type(labels, json_type_object)) {
                json_object_object_foreach(labels, key, val) {
                        int w = snprintf(subject + k, sizeof(subject) - k, "%s%s=\"%s\"", k ? "," : "", key,
                                         json_object_get_string(val));
                        if (w > 0)
                                k = MIN(k + (size_t) w, sizeof(subject) - 1);
                }
        }
        if ((v = rec_get(a, SRIOVD_KEY_VALUE)))
                value = json_object_get_double(v);
        if ((v = rec_get(a, SRIOVD_KEY_THRESHOLD)))
                threshold = json_object_get_double(v);
        snprintf(buf, size, "%-24s %s{%s} = %g, %s %g", dash(rec_str(a, SRIOVD_KEY_NAME)),
                 dash(rec_str(a, SRIOVD_KEY_METRIC)), subject, value, dash(rec_str(a, SRIOVD_KEY_DIRECTION)), threshold);
        return buf;
}
