/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.c — streaming JSON writer: escaped strings, automatic commas, 2-space pretty printing */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/json.h"
#include "sriovd/macro.h"

/*
 * Stream errors are not reported per call: stdio keeps the error flag, so the caller checks
 * ferror()/fflush() once when the document is done instead of after every value.
 */

void json_init(JsonWriter *w, FILE *f) {
        *w = (JsonWriter) { .f = f };
}

static void json_write_string(FILE *f, const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        fputc('"', f);
        while (*p) {
                size_t len;

                switch (*p) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\b':
                        fputs("\\b", f);
                        break;
                case '\f':
                        fputs("\\f", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\r':
                        fputs("\\r", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                default:
                        if (*p < 0x20) {
                                fprintf(f, "\\u%04x", *p);
                                break;
                        }
                        len = utf8_sequence_len(p, SIZE_MAX);
                        if (len == 0) {
                                /*
                                 * Interface and domain names are bytes, not text. Replacing
                                 * a bad byte keeps the whole document parseable.
                                 */
                                fputs("\\ufffd", f);
                                break;
                        }
                        fwrite(p, 1, len, f);
                        p += len;
                        continue;
                }
                p++;
        }
        fputc('"', f);
}

static void json_indent(JsonWriter *w) {
        for (unsigned i = 0; i < w->depth; i++)
                fputs("  ", w->f);
}

/* What goes before any value: its separator, newline and indent (or a space, compact), and its key. */
static void json_value_begin(JsonWriter *w, const char *key) {
        if (w->depth > 0) {
                if (w->need_comma[w->depth])
                        fputs(w->compact ? ", " : ",", w->f);
                if (!w->compact) {
                        fputc('\n', w->f);
                        json_indent(w);
                }
                w->need_comma[w->depth] = true;
        }
        if (key) {
                json_write_string(w->f, key);
                fputs(": ", w->f);
        }
}

/* A document ends with its top-level value; the newline makes it a proper text line. */
static void json_value_end(JsonWriter *w) {
        if (w->depth == 0)
                fputc('\n', w->f);
}

static void json_container_begin(JsonWriter *w, const char *key, char open) {
        /*
         * Nesting depth is fixed by our own output code, never by input, so running out of
         * slots (or closing more than was opened) is a programming error; writing on would
         * corrupt memory or emit a broken document, so stop here in every build type.
         */
        if (w->depth + 1 >= ELEMENTSOF(w->need_comma))
                abort();

        json_value_begin(w, key);
        fputc(open, w->f);
        w->depth++;
        w->need_comma[w->depth] = false;
}

static void json_container_end(JsonWriter *w, char close) {
        bool empty;

        if (w->depth == 0)
                abort();

        /* Empty containers stay on one line, "{}" and "[]", like Python's json.dumps(indent=2). */
        empty = !w->need_comma[w->depth];
        w->depth--;
        if (!empty && !w->compact) {
                fputc('\n', w->f);
                json_indent(w);
        }
        fputc(close, w->f);
        json_value_end(w);
}

void json_object_begin(JsonWriter *w, const char *key) {
        json_container_begin(w, key, '{');
}

void json_object_end(JsonWriter *w) {
        json_container_end(w, '}');
}

void json_array_begin(JsonWriter *w, const char *key) {
        json_container_begin(w, key, '[');
}

void json_array_end(JsonWriter *w) {
        json_container_end(w, ']');
}

void json_string(JsonWriter *w, const char *key, const char *value) {
        json_value_begin(w, key);
        if (value)
                json_write_string(w->f, value);
        else
                fputs("null", w->f);
        json_value_end(w);
}

void json_int(JsonWriter *w, const char *key, long long value) {
        json_value_begin(w, key);
        fprintf(w->f, "%lld", value);
        json_value_end(w);
}

void json_bool(JsonWriter *w, const char *key, bool value) {
        json_value_begin(w, key);
        fputs(value ? "true" : "false", w->f);
        json_value_end(w);
}

void json_null(JsonWriter *w, const char *key) {
        json_value_begin(w, key);
        fputs("null", w->f);
        json_value_end(w);
}

/* Finite values only (JSON has no NaN or infinity): those become null. */
void json_double(JsonWriter *w, const char *key, double value) {
        json_value_begin(w, key);
        if (value != value || value > 1e308 || value < -1e308)
                fputs("null", w->f);
        else
                fprintf(w->f, "%.6g", value);
        json_value_end(w);
}
