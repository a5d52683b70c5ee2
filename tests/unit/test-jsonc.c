/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-jsonc.c — json-c as sriovd prints it: the layout the JsonWriter had, text that is UTF-8, no leaks */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "base/jsonc.h"
#include "test.h"

/* The document the old JsonWriter built (test-json, gone with it), as a tree: the same bytes, "[]" and "{}" included. */
TEST(pretty_as_before) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *vfs, *vf, *irqs;
        const char *text;
        size_t len;

        ASSERT(o);
        ASSERT_EQ(jsonc_add_string(o, "pf", "0000:41:00.0"), 0);
        ASSERT_EQ(jsonc_add_int(o, "num_vfs", 16), 0);
        ASSERT_EQ(jsonc_add_int(o, "min", INT64_MIN), 0);
        ASSERT_EQ(jsonc_add_bool(o, "managed", true), 0);
        ASSERT_EQ(jsonc_add_bool(o, "rt", false), 0);
        ASSERT_EQ(jsonc_add_null(o, "tenant"), 0);
        ASSERT_EQ(jsonc_add_string(o, "driver", NULL), 0);
        vfs = json_object_new_array();
        ASSERT_EQ(jsonc_add(o, "vfs", vfs), 0);
        vf = json_object_new_object();
        ASSERT_EQ(jsonc_append(vfs, vf), 0);
        ASSERT_EQ(jsonc_add_string(vf, "addr", "0000:41:00.2"), 0);
        irqs = json_object_new_array();
        ASSERT_EQ(jsonc_add(vf, "irqs", irqs), 0);
        ASSERT_EQ(jsonc_append(irqs, json_object_new_int(140)), 0);
        ASSERT_EQ(jsonc_append(irqs, json_object_new_int(141)), 0);
        ASSERT_EQ(jsonc_append(vfs, json_object_new_object()), 0);
        ASSERT_EQ(jsonc_append(vfs, json_object_new_array()), 0);
        ASSERT_EQ(jsonc_add(o, "empty", json_object_new_object()), 0);
        ASSERT_EQ(jsonc_add(o, "none", json_object_new_array()), 0);

        text = jsonc_text(o, JSONC_PRETTY, &len);
        ASSERT(text);
        ASSERT_EQ(strlen(text), len);
        ASSERT_STREQ(text,
                     "{\n"
                     "  \"pf\": \"0000:41:00.0\",\n"
                     "  \"num_vfs\": 16,\n"
                     "  \"min\": -9223372036854775808,\n"
                     "  \"managed\": true,\n"
                     "  \"rt\": false,\n"
                     "  \"tenant\": null,\n"
                     "  \"driver\": null,\n"
                     "  \"vfs\": [\n"
                     "    {\n"
                     "      \"addr\": \"0000:41:00.2\",\n"
                     "      \"irqs\": [\n"
                     "        140,\n"
                     "        141\n"
                     "      ]\n"
                     "    },\n"
                     "    {},\n"
                     "    []\n"
                     "  ],\n"
                     "  \"empty\": {},\n"
                     "  \"none\": []\n"
                     "}");
        ASSERT_STREQ(jsonc_text(o, JSONC_COMPACT, NULL),
                     "{\"pf\":\"0000:41:00.0\",\"num_vfs\":16,\"min\":-9223372036854775808,\"managed\":true,\"rt\":false,"
                     "\"tenant\":null,\"driver\":null,\"vfs\":[{\"addr\":\"0000:41:00.2\",\"irqs\":[140,141]},{},[]],"
                     "\"empty\":{},\"none\":[]}");
}

/* Escapes: what JSON needs, '/' and DEL raw, as the JsonWriter wrote them. */
TEST(escaping) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_array();

        ASSERT(o);
        ASSERT_EQ(jsonc_append_string(o, "\"\\/\x7f\b\t\n\f\r\x01\x1f"), 0);
        ASSERT_STREQ(jsonc_text(o, JSONC_COMPACT, NULL), "[\"\\\"\\\\/\x7f\\b\\t\\n\\f\\r\\u0001\\u001f\"]");
}

/* Names are bytes: what is not UTF-8 becomes U+FFFD, one per byte, so the document stays JSON. */
TEST(utf8) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_array();

        ASSERT(o);
        ASSERT_EQ(jsonc_append_string(o, "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x90\xa7"), 0);
        /* Stray continuation, truncated sequence, overlong '/', surrogate, > U+10FFFF, 0xff. */
        ASSERT_EQ(jsonc_append_string(o, "a\x80" "b\xe2\x82" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xff"), 0);
        ASSERT_EQ(jsonc_append_string(o, NULL), 0);
#define R "\xef\xbf\xbd"
        ASSERT_STREQ(jsonc_text(o, JSONC_COMPACT, NULL),
                     "[\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x90\xa7\","
                     "\"a" R "b" R R "c" R R "d" R R R "e" R R R R "f" R "\",null]");
#undef R
        ASSERT_EQ(utf8_sequence_len((const unsigned char *) "\xf4\x8f\xbf\xbf", 4), 4);   /* U+10FFFF */
        ASSERT_EQ(utf8_sequence_len((const unsigned char *) "\xe0\x9f\xbf", 3), 0);       /* overlong */
        ASSERT_EQ(utf8_sequence_len((const unsigned char *) "\xc3", 1), 0);               /* cut short */
}

/* Every adder takes the reference it is given, and gives it back (puts it) when it cannot. */
TEST(references) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *s = json_object_new_string("x");

        ASSERT(o && s);
        ASSERT_EQ(jsonc_add(o, "a", NULL), -ENOMEM);          /* a constructor that failed */
        ASSERT_EQ(jsonc_append(json_object_object_get(o, "none"), NULL), -ENOMEM);
        json_object_get(s);                                    /* one for o, one for here */
        ASSERT_EQ(jsonc_add(o, "s", s), 0);
        ASSERT_EQ(json_object_put(s), 0);                      /* o still holds it */
        ASSERT_STREQ(json_object_get_string(json_object_object_get(o, "s")), "x");
}

int main(void) {
        RUN(pretty_as_before);
        RUN(escaping);
        RUN(utf8);
        RUN(references);
        return EXIT_SUCCESS;
}
