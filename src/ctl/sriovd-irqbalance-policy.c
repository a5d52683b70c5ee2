/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovd-irqbalance-policy.c — an irqbalance --policyscript that answers "ban=true" for the IRQs sriovd pins */

/*
 * irqbalance runs "SCRIPT DEVPATH IRQ" once for each IRQ that it discovers. It reads key=value
 * lines from the script's stdout, and it ignores them after a non-zero exit. This script answers
 * ban=true when IRQ is listed in the owned-IRQs file that sriovd keeps, with one decimal per line.
 * irqbalance then leaves sriovd's pins alone instead of fighting the drift repair. A missing file
 * means that sriovd is not running, and then nothing is banned.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/macro.h"

#define OWNED_IRQS_DEFAULT "/run/sriovd/owned-irqs"
#define OWNED_IRQS_ENV "SRIOVD_OWNED_IRQS"
#define PROGRAM "sriovd-irqbalance-policy"

/*
 * The parser is strict. It takes decimal digits only, with no sign, no space and no leading zero,
 * and the value must fit in an unsigned int. irqbalance prints "%d", so "012" or "+5" is a mistake,
 * not an IRQ.
 */
static bool irq_parse(const char *s, size_t n, unsigned *ret) {
        unsigned long v = 0;

        if (n == 0 || (s[0] == '0' && n > 1))
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned long) (s[i] - '0');
                if (v > UINT_MAX)
                        return false;
        }
        *ret = (unsigned) v;
        return true;
}

/*
 * Returns 1 if irq is listed in path, and 0 if it is not or if there is no such file. Returns a
 * negative errno if the file cannot be read. Malformed lines are reported and skipped, because
 * one bad line must not unban every other IRQ.
 */
static int owned_irqs_contains(const char *path, unsigned irq) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t allocated = 0;
        unsigned lineno = 0;
        ssize_t n;

        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : negative_errno();

        for (;;) {
                size_t len;
                unsigned v;

                errno = 0;
                n = getline(&line, &allocated, f);
                if (n < 0)
                        break;
                len = (size_t) n;
                lineno++;
                if (len > 0 && line[len - 1] == '\n')
                        len--;
                if (!irq_parse(line, len, &v)) {
                        fprintf(stderr, "%s: %s:%u: not an IRQ number, ignoring\n", PROGRAM, path, lineno);
                        continue;
                }
                if (v == irq)
                        return 1;
        }
        /* Only the end of the file proves that the IRQ is absent. A read error must not pass for it. */
        if (ferror(f) || errno == ENOMEM)
                return negative_errno();
        return 0;
}

int main(int argc, char *argv[]) {
        const char *path;
        unsigned irq;
        int r;

        if (argc != 3 || argv[1][0] != '/' || !irq_parse(argv[2], strlen(argv[2]), &irq)) {
                fprintf(stderr, "Usage: %s SYSFS-DEVICE-PATH IRQ\n"
                        "Meant for irqbalance --policyscript: prints ban=true when IRQ (decimal) is one sriovd pins.\n",
                        PROGRAM);
                return 2;
        }

        path = secure_getenv(OWNED_IRQS_ENV);
        if (!path || !path[0])
                path = OWNED_IRQS_DEFAULT;

        r = owned_irqs_contains(path, irq);
        if (r < 0) {
                /* This is not fatal for irqbalance. Without the list, balancing this IRQ is all it can do. */
                errno = -r;
                fprintf(stderr, "%s: cannot read %s, banning nothing: %m\n", PROGRAM, path);
                return 0;
        }
        if (r > 0 && (fputs("ban=true\n", stdout) == EOF || fflush(stdout) != 0)) {
                fprintf(stderr, "%s: cannot write to stdout: %m\n", PROGRAM);
                return 1;
        }
        return 0;
}
