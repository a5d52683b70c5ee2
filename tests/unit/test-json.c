/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-json.c — exact output of the JSON writer, and a strict parser's opinion of it */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sriovd/json.h"
#include "sriovd/macro.h"
#include "test.h"

typedef struct Buffer {
        FILE *f;
        char *data;
        size_t size;
} Buffer;

static void buffer_open(Buffer *b, JsonWriter *w) {
        *b = (Buffer) {};
        b->f = open_memstream(&b->data, &b->size);
        ASSERT(b->f);
        json_init(w, b->f);
}

/* Closes the stream; b->data holds the document and is the caller's to free. */
static char *buffer_close(Buffer *b) {
        ASSERT(!ferror(b->f));
        ASSERT(fclose(b->f) == 0);
        b->f = NULL;
        return b->data;
}

/*
 * Hand the document to Python's json module: 0 if it parses, and, with roundtrip, if
 * json.dumps(indent=2, ensure_ascii=False) reproduces it byte for byte. -1 if python3 is
 * unavailable, so callers can skip rather than fail.
 */
static int python_check_full(const char *doc, bool roundtrip, bool quiet) {
        const char *cmd = roundtrip
                ? "python3 -c 'import json,sys; s=sys.stdin.read(); "
                  "sys.exit(0 if json.dumps(json.loads(s), indent=2, ensure_ascii=False) + "
                  "\"\\n\" == s else 3)'"
                : "python3 -c 'import json,sys; json.load(sys.stdin)'";
        char full[512];
        FILE *p;
        int status;

        /* python3 builds the fixtures, so it is there wherever this runs: its absence fails. */
        ASSERT(system("command -v python3 >/dev/null 2>&1") == 0);
        /* Expected failures need no traceback; real ones keep it for the log. */
        snprintf(full, sizeof(full), "%s%s", cmd, quiet ? " 2>/dev/null" : "");
        p = popen(full, "w");
        ASSERT(p);
        fputs(doc, p);
        status = pclose(p);
        ASSERT(status != -1);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int python_check(const char *doc, bool roundtrip) {
        return python_check_full(doc, roundtrip, false);
}

static char *write_nested(void) {
        JsonWriter w;
        Buffer b;

        buffer_open(&b, &w);
        json_object_begin(&w, NULL);
        json_string(&w, "pf", "0000:41:00.0");
        json_int(&w, "num_vfs", 16);
        json_int(&w, "min", -9223372036854775807LL - 1);
        json_bool(&w, "managed", true);
        json_bool(&w, "rt", false);
        json_null(&w, "tenant");
        json_string(&w, "driver", NULL);
        json_array_begin(&w, "vfs");
        json_object_begin(&w, NULL);
        json_string(&w, "addr", "0000:41:00.2");
        json_array_begin(&w, "irqs");
        json_int(&w, NULL, 140);
        json_int(&w, NULL, 141);
        json_array_end(&w);
        json_object_end(&w);
        json_object_begin(&w, NULL);
        json_object_end(&w);
        json_array_begin(&w, NULL);
        json_array_end(&w);
        json_array_end(&w);
        json_object_begin(&w, "empty");
        json_object_end(&w);
        json_array_begin(&w, "none");
        json_array_end(&w);
        json_object_end(&w);
        return buffer_close(&b);
}

TEST(nested) {
        char *out = write_nested();

        ASSERT_STREQ(out,
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
                     "}\n");

        int r = python_check(out, true);
        ASSERT_EQ(r, 0);
        free(out);
}

TEST(top_level) {
        JsonWriter w;
        Buffer b;
        char *out;

        buffer_open(&b, &w);
        json_array_begin(&w, NULL);
        json_array_end(&w);
        json_object_begin(&w, NULL);
        json_object_end(&w);
        json_int(&w, NULL, 7);
        json_string(&w, NULL, "s");
        json_null(&w, NULL);
        out = buffer_close(&b);
        /* Each top-level value is its own line, so several in a row form JSON Lines. */
        ASSERT_STREQ(out, "[]\n{}\n7\n\"s\"\nnull\n");
        free(out);
}

TEST(escaping) {
        char in[0x20 + 8], key[] = "k\"\\\n\x01";
        char expect[512] = "{\n  \"k\\\"\\\\\\n\\u0001\": \"";
        JsonWriter w;
        Buffer b;
        char *out;

        /* Every control character, in order, then the two that must be escaped. */
        for (int c = 1; c < 0x20; c++)
                in[c - 1] = (char) c;
        strcpy(in + 0x1f, "\"\\/\x7f");

        static const char *const esc[0x20] = {
                [0x08] = "\\b", [0x09] = "\\t", [0x0a] = "\\n", [0x0c] = "\\f", [0x0d] = "\\r",
        };
        for (int c = 1; c < 0x20; c++) {
                char u[8];
                if (esc[c])
                        strcat(expect, esc[c]);
                else {
                        snprintf(u, sizeof(u), "\\u%04x", c);
                        strcat(expect, u);
                }
        }
        /* '/' and DEL need no escape; JSON allows both raw. */
        strcat(expect, "\\\"\\\\/\x7f\"\n}\n");

        buffer_open(&b, &w);
        json_object_begin(&w, NULL);
        json_string(&w, key, in);
        json_object_end(&w);
        out = buffer_close(&b);
        ASSERT_STREQ(out, expect);

        int r = python_check(out, true);
        ASSERT_EQ(r, 0);
        free(out);
}

TEST(utf8) {
        JsonWriter w;
        Buffer b;
        char *out;

        buffer_open(&b, &w);
        json_array_begin(&w, NULL);
        /* 2-, 3- and 4-byte sequences pass through untouched. */
        json_string(&w, NULL, "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x90\xa7");
        /* Stray continuation, truncated sequence, overlong '/', surrogate, > U+10FFFF, 0xff. */
        json_string(&w, NULL, "a\x80" "b\xe2\x82" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80"
                              "f\xff");
        json_string(&w, "\xc3\xa9t\xc3\xa9", "");
        json_array_end(&w);
        out = buffer_close(&b);
        ASSERT_STREQ(out, "[\n"
                          "  \"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x90\xa7\",\n"
                          "  \"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde"
                          "\\ufffd\\ufffd\\ufffd\\ufffdf\\ufffd\",\n"
                          "  \"\xc3\xa9t\xc3\xa9\": \"\"\n"
                          "]\n");

        /* A key inside an array is a caller bug, so only check that the UTF-8 is valid. */
        int r = python_check("[\"gr\xc3\xbc\xc3\x9f\", \"a\\ufffd\"]", false);
        ASSERT_EQ(r, 0);
        free(out);
}

TEST(parser_rejects_garbage) {
        /* Make sure the python check can fail at all; otherwise the passes above prove nothing. */
        int r = python_check_full("{\"a\": 1,}\n", false, true);
        ASSERT(r != 0);
        r = python_check_full("{\n  \"a\": 1\n}", true, true);  /* no trailing newline */
        ASSERT_EQ(r, 3);
}

TEST(deep_nesting) {
        JsonWriter w;
        Buffer b;
        char *out;

        /* 31 levels is the most the writer tracks; all of them must work. */
        buffer_open(&b, &w);
        for (int i = 0; i < 31; i++)
                json_array_begin(&w, NULL);
        json_int(&w, NULL, 1);
        for (int i = 0; i < 31; i++)
                json_array_end(&w);
        out = buffer_close(&b);
        ASSERT_EQ(w.depth, 0);
        int r = python_check(out, true);
        ASSERT_EQ(r, 0);
        free(out);
}

int main(void) {
        RUN(nested);
        RUN(top_level);
        RUN(escaping);
        RUN(utf8);
        RUN(parser_rejects_garbage);
        RUN(deep_nesting);
        return EXIT_SUCCESS;
}
