/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovctl-record.h — reads sriovd's replies generically into json-c values, with the record accessors that the commands print from */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* ---- JSON out (json-c) ---- */

/* Pretty-prints o on stdout as one document. */
void json_print(json_object *o);
/* Writes a double as people write it, 0.85 rather than json-c's 0.84999999999999998. It is still a JSON number.
 * Returns NULL when out of memory. */
json_object *json_double(double d);
/* Adds value to o as key. o takes over the caller's reference. A NULL value becomes JSON null. */
void json_set(json_object *o, const char *key, json_object *value);

/* ---- records: sriovd's a{sv} dictionaries, read generically into JSON values ---- */

/*
 * Reads the next value in m into *ret. The value may be of any type, including variants, arrays,
 * dicts and structs. *ret is a new reference that the caller puts. Returns a negative errno from
 * sd-bus, or -EBADMSG at the container's end.
 */
int read_value(sd_bus_message *m, json_object **ret);
/* Reads the container that m is in, element by element, into an array in *ret. Dict entries go into an object
 * instead. The caller owns *ret. */
int read_elements(sd_bus_message *m, bool dict, json_object **ret);

/* Returns a record's string value, borrowed from rec. Returns NULL when the key is absent or has another type,
 * as a later API's key may. */
const char *rec_str(json_object *rec, const char *key);
/* Reads the integer at key into *ret. Returns false and leaves *ret untouched when the key is absent or not an integer. */
bool rec_int(json_object *rec, const char *key, int64_t *ret);
/* Returns true only for a key that is there and true. */
bool rec_bool(json_object *rec, const char *key);
/* Returns the value at key, borrowed from rec, or NULL when the key is absent. */
json_object *rec_get(json_object *rec, const char *key);
/* Returns rec's value at key for a JSON document, as a new reference. An absent key gives JSON null. */
json_object *rec_ref(json_object *rec, const char *key);
/* Returns the record as sriovd sent it, with null for each listed key that it does not hold, as a new reference.
 * Scripts index these keys, so every one must be there. */
json_object *rec_mirror(json_object *rec, const char *const *keys);
/* Returns s, or "-" for a table cell when s is NULL or empty. */
const char *dash(const char *s);
/* Formats an ActiveAlerts record as one line: "NAME METRIC{labels} = VALUE, DIRECTION THRESHOLD". */
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
