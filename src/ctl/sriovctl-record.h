/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-record.h — sriovd's replies read generically into json-c values, and the record accessors the commands print from */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* ---- JSON out (json-c) ---- */

/* o pretty-printed on stdout, one document. */
void json_print(json_object *o);
/* A double as people write it (0.85, not json-c's 0.84999999999999998); still a JSON number. NULL: out of memory. */
json_object *json_double(double d);
/* Add value (the caller's reference, now o's; NULL is JSON null) to o as key. */
void json_set(json_object *o, const char *key, json_object *value);

/* ---- records: a{sv} from sriovd, read generically into JSON values ---- */

/*
 * The next value in m, of any type (variants, arrays, dicts and structs included), into *ret:
 * a new reference the caller puts. Negative errno from sd-bus; -EBADMSG at the container's end.
 */
int read_value(sd_bus_message *m, json_object **ret);
/* The container m is in, element by element, into an array (or, for dict entries, an object) in *ret, the caller's. */
int read_elements(sd_bus_message *m, bool dict, json_object **ret);

/* A record's value, or NULL when the key is absent (or of another type: a later API's). Borrowed from rec. */
const char *rec_str(json_object *rec, const char *key);
/* The integer at key into *ret; false (ret untouched) when absent or not an integer. */
bool rec_int(json_object *rec, const char *key, int64_t *ret);
/* True only for a key that is there and true. */
bool rec_bool(json_object *rec, const char *key);
/* The value at key, borrowed from rec; NULL when absent. */
json_object *rec_get(json_object *rec, const char *key);
/* A copy of rec's key for a JSON document (a new reference; JSON null when absent). */
json_object *rec_ref(json_object *rec, const char *key);
/* The record as sriovd sent it, with null for each listed key it does not hold: what scripts index. A new reference. */
json_object *rec_mirror(json_object *rec, const char *const *keys);
/* s, or "-" for a table cell when it is NULL or empty. */
const char *dash(const char *s);
/* An ActiveAlerts record as one line: "NAME METRIC{labels} = VALUE, DIRECTION THRESHOLD". */
char *alert_format(json_object *a, char *buf, size_t size);

static inline void bus_unrefp(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}
static inline void message_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}
static inline void json_putp(json_object **o) {
        json_object_put(*o);
}
#define _cleanup_bus_ __attribute__((cleanup(bus_unrefp)))
#define _cleanup_message_ __attribute__((cleanup(message_unrefp)))
#define _cleanup_json_ __attribute__((cleanup(json_putp)))
