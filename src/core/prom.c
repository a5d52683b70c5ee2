/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* prom.c — the Prometheus text format: checked names, escaped text, one declaration per family */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/prom.h"
#include "sriovd/shared/util.h"

void prom_writer_done(PromWriter *w) {
        free(w->buf);
        free(w->family);
        for (size_t i = 0; i < w->n_families; i++)
                free(w->families[i]);
        free(w->families);
        *w = (PromWriter) {};
}

static bool is_alpha_(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

bool prom_metric_name_valid(const char *name) {
        if (!name || !(is_alpha_(name[0]) || name[0] == ':'))
                return false;
        for (const char *p = name + 1; *p; p++)
                if (!is_alpha_(*p) && !is_digit(*p) && *p != ':')
                        return false;
        return true;
}

bool prom_label_name_valid(const char *name) {
        if (!name || !is_alpha_(name[0]) || strncmp(name, "__", 2) == 0)
                return false;
        for (const char *p = name + 1; *p; p++)
                if (!is_alpha_(*p) && !is_digit(*p))
                        return false;
        return true;
}

static bool utf8_valid(const char *s) {
        size_t n = strlen(s);

        for (size_t i = 0; i < n;) {
                size_t k;

                /* Every label value that sriovd makes is ASCII, and ASCII needs no decoding. */
                if ((unsigned char) s[i] < 0x80) {
                        i++;
                        continue;
                }
                k = utf8_sequence_len((const unsigned char *) s + i, n - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

static int fail(PromWriter *w, int error) {
        if (w->error == 0)
                w->error = error;
        return w->error;
}

static int reserve(PromWriter *w, size_t more) {
        size_t size;
        char *b;

        if (more > PROM_SIZE_MAX || w->len + more + 1 > PROM_SIZE_MAX)
                return fail(w, -E2BIG);
        if (w->len + more + 1 <= w->size)
                return 0;
        size = MAX(w->size * 2, (size_t) 4096);
        while (size < w->len + more + 1)
                size *= 2;
        b = realloc(w->buf, size);
        if (!b)
                return fail(w, -ENOMEM);
        w->buf = b;
        w->size = size;
        return 0;
}

static int put(PromWriter *w, const char *s, size_t n) {
        if (reserve(w, n) < 0)
                return w->error;
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        w->buf[w->len] = 0;
        return 0;
}

static int puts_(PromWriter *w, const char *s) {
        return put(w, s, strlen(s));
}

/*
 * HELP text escapes backslash and newline, and label values also escape the double quote. The
 * runs between them are copied whole, because copying a byte at a time took a third of the
 * page's time.
 */
static int put_escaped(PromWriter *w, const char *s, bool quote) {
        const char *special = quote ? "\\\n\"" : "\\\n";

        for (const char *p = s; *p; p++) {
                size_t n = strcspn(p, special);

                if (n > 0 && put(w, p, n) < 0)
                        return w->error;
                p += n;
                if (!*p)
                        break;
                if (puts_(w, *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : "\\\"") < 0)
                        return w->error;
        }
        return 0;
}

int prom_family(PromWriter *w, const char *name, PromType type, const char *help) {
        size_t n;
        char *copy;
        char **f;

        if (w->error)
                return w->error;
        if (!prom_metric_name_valid(name) || !help || !utf8_valid(help))
                return fail(w, -EINVAL);
        n = strlen(name);
        /* By the format's convention, which promtool checks, counters and only counters end in _total. */
        if ((type == PROM_COUNTER) != (n > 6 && streq(name + n - 6, "_total")))
                return fail(w, -EINVAL);
        if (type != PROM_COUNTER && type != PROM_GAUGE && type != PROM_HISTOGRAM)
                return fail(w, -EINVAL);
        /* A histogram's own lines take these suffixes, so its name must not end in one. */
        if (type == PROM_HISTOGRAM &&
            ((n > 7 && streq(name + n - 7, "_bucket")) || (n > 4 && streq(name + n - 4, "_sum")) ||
             (n > 6 && streq(name + n - 6, "_count"))))
                return fail(w, -EINVAL);
        for (size_t i = 0; i < w->n_families; i++)
                if (streq(w->families[i], name))
                        return fail(w, -EEXIST);
        if (w->n_families >= PROM_FAMILIES_MAX)
                return fail(w, -E2BIG);

        copy = strdup(name);
        f = realloc(w->families, (w->n_families + 1) * sizeof(*f));
        if (!copy || !f) {
                free(copy);
                if (f)
                        w->families = f;
                return fail(w, -ENOMEM);
        }
        w->families = f;
        w->families[w->n_families++] = copy;
        free(w->family);
        w->family = strdup(name);
        if (!w->family)
                return fail(w, -ENOMEM);
        w->type = type;

        puts_(w, "# HELP ");
        puts_(w, name);
        puts_(w, " ");
        put_escaped(w, help, false);
        puts_(w, "\n# TYPE ");
        puts_(w, name);
        puts_(w, type == PROM_COUNTER ? " counter\n" : type == PROM_HISTOGRAM ? " histogram\n" : " gauge\n");
        return w->error;
}

static int sample_start(PromWriter *w, const char *suffix, const PromLabel *labels, size_t n_labels) {
        if (w->error)
                return w->error;
        if (!w->family)
                return fail(w, -EINVAL);
        for (size_t i = 0; i < n_labels; i++) {
                if (!prom_label_name_valid(labels[i].name) || !labels[i].value || !utf8_valid(labels[i].value))
                        return fail(w, -EINVAL);
                for (size_t j = 0; j < i; j++)
                        if (labels[i].name[0] == labels[j].name[0] && streq(labels[i].name, labels[j].name))
                                return fail(w, -EINVAL);
        }

        /*
         * Make room for the whole line at once, so that the pieces below are copied without a
         * check each. An escaped value is at most twice as long, and the number needs 32 bytes.
         */
        {
                size_t need = strlen(w->family) + strlen(suffix) + 2 + 32, n;
                char *p;

                for (size_t i = 0; i < n_labels; i++)
                        need += strlen(labels[i].name) + 2 * strlen(labels[i].value) + 4;
                if (reserve(w, need) < 0)
                        return w->error;
                p = w->buf + w->len;
#define COPY(s, len) do { memcpy(p, (s), (len)); p += (len); } while (0)
                n = strlen(w->family);
                COPY(w->family, n);
                n = strlen(suffix);
                COPY(suffix, n);
                for (size_t i = 0; i < n_labels; i++) {
                        *p++ = i == 0 ? '{' : ',';
                        n = strlen(labels[i].name);
                        COPY(labels[i].name, n);
                        *p++ = '=';
                        *p++ = '"';
                        for (const char *v = labels[i].value; *v; v++) {
                                if (*v == '\\' || *v == '"')
                                        *p++ = '\\', *p++ = *v;
                                else if (*v == '\n')
                                        *p++ = '\\', *p++ = 'n';
                                else
                                        *p++ = *v;
                        }
                        *p++ = '"';
                }
                if (n_labels > 0)
                        *p++ = '}';
                *p++ = ' ';
#undef COPY
                *p = 0;
                w->len = (size_t) (p - w->buf);
        }
        return 0;
}

static bool family_is_counter(const PromWriter *w) {
        size_t n = strlen(w->family);
        return n > 6 && streq(w->family + n - 6, "_total");
}

/* Write the decimal digits of v into buf, which holds at least 21 bytes, with a NUL. Returns buf. */
static char *format_u64(uint64_t v, char *buf) {
        char tmp[24], *p = tmp + sizeof(tmp);
        size_t n;

        do
                *--p = (char) ('0' + v % 10);
        while ((v /= 10) > 0);
        n = (size_t) (tmp + sizeof(tmp) - p);
        memcpy(buf, p, n);
        buf[n] = 0;
        return buf;
}

/*
 * Format v as the shorter of %.15g and %.17g that reads back as the same double. So 0.1 prints
 * as 0.1, not as 0.10000000000000001.
 */
static void format_double(double v, char buf[static 32]) {
        /*
         * Whole numbers below 10^15 print as %.15g would print them, without the cost of %.15g
         * and strtod(). Counts are such numbers, and so are most rates of an idle NIC, which are 0.
         */

        if (v >= 0 && v < 1e15 && v == (double) (uint64_t) v)
                format_u64((uint64_t) v, buf);
        else if (v < 0 && v > -1e15 && v == -(double) (uint64_t) -v) {
                buf[0] = '-';
                format_u64((uint64_t) -v, buf + 1);
        } else if (isnan(v))
                strcpy(buf, "NaN");
        else if (isinf(v))
                strcpy(buf, v > 0 ? "+Inf" : "-Inf");
        else {
                snprintf(buf, 32, "%.15g", v);
                if (strtod(buf, NULL) != v)
                        snprintf(buf, 32, "%.17g", v);
        }
}

int prom_sample(PromWriter *w, const PromLabel *labels, size_t n_labels, double value) {
        char buf[32];

        if (!w->error && w->family && family_is_counter(w) && !(value >= 0))
                return fail(w, -EINVAL);
        if (!w->error && w->family && w->type == PROM_HISTOGRAM)
                return fail(w, -EINVAL);
        if (sample_start(w, "", labels, n_labels) < 0)
                return w->error;
        format_double(value, buf);
        puts_(w, buf);
        return puts_(w, "\n");
}

int prom_sample_u64(PromWriter *w, const PromLabel *labels, size_t n_labels, uint64_t value) {
        char buf[32];

        if (!w->error && w->family && w->type == PROM_HISTOGRAM)
                return fail(w, -EINVAL);
        if (sample_start(w, "", labels, n_labels) < 0)
                return w->error;
        puts_(w, format_u64(value, buf));
        return puts_(w, "\n");
}

int prom_histogram_sample(PromWriter *w, PromHistogramLine line, const PromLabel *labels, size_t n_labels,
                          double value) {
        static const char *const suffixes[] = {
                [PROM_HISTOGRAM_BUCKET] = "_bucket",
                [PROM_HISTOGRAM_SUM] = "_sum",
                [PROM_HISTOGRAM_COUNT] = "_count",
        };
        char buf[32];

        if (w->error)
                return w->error;
        if (!w->family || w->type != PROM_HISTOGRAM || (unsigned) line >= ELEMENTSOF(suffixes) || !(value >= 0))
                return fail(w, -EINVAL);
        if ((line == PROM_HISTOGRAM_BUCKET) != (n_labels > 0 && labels[n_labels - 1].name &&
                                               streq(labels[n_labels - 1].name, "le")))
                return fail(w, -EINVAL);
        if (sample_start(w, suffixes[line], labels, n_labels) < 0)
                return w->error;
        format_double(value, buf);
        puts_(w, buf);
        return puts_(w, "\n");
}

int prom_writer_finish(PromWriter *w, char **ret, size_t *ret_size) {
        int r = w->error;

        /* An empty page is a valid one. */
        if (r == 0 && !w->buf)
                r = put(w, "", 0);
        if (r == 0) {
                *ret = TAKE_PTR(w->buf);
                if (ret_size)
                        *ret_size = w->len;
        }
        prom_writer_done(w);
        return r;
}
