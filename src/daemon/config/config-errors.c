/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-errors.c — collect each mistake the INI reader finds as "FILE:LINE: what, expected what" */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config-internal.h"

void error_list_done(ErrorList *l) {
        for (size_t i = 0; i < l->n_items; i++)
                free(l->items[i].text);
        free(l->items);
        *l = (ErrorList) {};
}

_printf_(5, 0) void error_addv(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                                      const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;
        char *text;
        int k;

        if (l->n_items >= CONFIG_ERRORS_MAX) {
                l->n_dropped++;
                return;
        }

        if (vasprintf(&msg, fmt, ap) < 0) {
                msg = NULL;
                l->oom = true;
                return;
        }
        if (line > 0)
                k = asprintf(&text, "%s:%u: %s", file, line, msg);
        else
                k = asprintf(&text, "%s: %s", file, msg);
        if (k < 0 || GREEDY_REALLOC(l->items, l->allocated, l->n_items + 1) < 0) {
                if (k >= 0)
                        free(text);
                l->oom = true;
                return;
        }

        l->items[l->n_items++] = (ConfigError) {
                .file = file_idx,
                .line = line,
                .seq = l->seq++,
                .text = text,
        };
}

_printf_(5, 6) void error_add(ErrorList *l, unsigned file_idx, const char *file, unsigned line,
                                     const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_addv(l, file_idx, file, line, fmt, ap);
        va_end(ap);
}

static int error_compare(const void *a, const void *b) {
        const ConfigError *x = a, *y = b;

        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Joins the errors in file order, then line order. Each error is one line, with no trailing newline. */
int error_list_join(ErrorList *l, const char *main_file, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (l->oom)
                return -ENOMEM;

        qsort_safe(l->items, l->n_items, sizeof(ConfigError), error_compare);

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < l->n_items; i++)
                fprintf(f, "%s%s", i > 0 ? "\n" : "", l->items[i].text);
        if (l->n_dropped > 0)
                fprintf(f, "\n%s: %u more error%s not shown", main_file, l->n_dropped,
                        l->n_dropped == 1 ? "" : "s");
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;

        *ret = TAKE_PTR(buf);
        return 0;
}

/* Returns -EINVAL, so that checks can "return parser_error(...)". */
int parser_error(Parser *p, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        error_addv(p->errors, p->file_idx, p->file, p->line, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/*
 * Makes operator input safe to echo in a message. It cuts the input to QUOTE_MAX and
 * replaces control and non-ASCII bytes. So garbage cannot break the one-error-per-line
 * output or the journal.
 */
const char *config_quote(char *buf, const char *s) {
        size_t i;

        for (i = 0; s[i] && i < QUOTE_MAX; i++) {
                unsigned char c = (unsigned char) s[i];
                buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char) c;
        }
        if (s[i]) {
                memcpy(buf + i, "...", 3);
                i += 3;
        }
        buf[i] = 0;
        return buf;
}

/* Formats a list as "a, b or c" for messages. */
void format_alternatives(char *buf, size_t size, const char *const *values, size_t n) {
        size_t k = 0;

        buf[0] = 0;
        for (size_t i = 0; i < n && k < size; i++) {
                int w = snprintf(buf + k, size - k, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", values[i]);
                if (w < 0)
                        break;
                k += (size_t) w;
        }
}
