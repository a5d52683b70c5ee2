/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sriovd-irqbalance-policy.c — an irqbalance --policyscript that answers "ban=true" for the IRQs sriovd pins */

/*
 * irqbalance runs "SCRIPT DEVPATH IRQ" once for each IRQ that it discovers. DEVPATH is the
 * device's directory in sysfs, or the sysfs root for an IRQ without a device. irqbalance reads
 * key=value lines from the script's stdout, and it ignores them after a non-zero exit.
 *
 * This script answers ban=true in two cases. The first is an IRQ listed in the owned-irqs file,
 * with one decimal per line, which sriovd rewrites after each cycle. The second is an IRQ of a
 * device in the owned-devices file, with one PCI address per line: a PF that sriovd manages, or
 * a VF whose DEVPATH/physfn link names such a PF. sriovd writes that file before a cycle
 * changes anything, so it also covers the IRQs that appear before a cycle lists them, such as
 * a new VF's. irqbalance then leaves sriovd's pins alone instead of fighting the drift repair.
 * A missing file means that sriovd is not running, and then it bans nothing.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/shared/macro.h"
#include "sriovd/shared/util.h"

#define OWNED_IRQS_DEFAULT "/run/sriovd/owned-irqs"
#define OWNED_IRQS_ENV "SRIOVD_OWNED_IRQS"
#define OWNED_DEVICES_DEFAULT "/run/sriovd/owned-devices"
#define OWNED_DEVICES_ENV "SRIOVD_OWNED_DEVICES"
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

/* A line of a list: returns 1 when it names the key, 0 when it does not, and -1 when it is malformed. */
typedef int (*LineMatch)(const char *line, size_t len, const void *key);

static int match_irq(const char *line, size_t len, const void *key) {
        unsigned v;

        if (!irq_parse(line, len, &v))
                return -1;
        return v == *(const unsigned *) key;
}

/* The device and the PF behind it, either of them "" when there is none. */
typedef struct Device {
        char addr[PCI_ADDR_MAX];
        char pf[PCI_ADDR_MAX];
} Device;

static int match_device(const char *line, size_t len, const void *key) {
        const Device *d = key;

        /* An embedded NUL makes strlen() shorter than the line. */
        if (strlen(line) != len || !pci_addr_valid(line))
                return -1;
        return streq(line, d->addr) || streq(line, d->pf);
}

/*
 * Returns 1 if a line of path matches key, and 0 if none does or if there is no such file.
 * Returns a negative errno if the file cannot be read. Malformed lines are reported and skipped,
 * because one bad line must not unban everything else.
 */
static int list_contains(const char *path, const char *what, LineMatch match, const void *key) {
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
                int m;

                errno = 0;
                n = getline(&line, &allocated, f);
                if (n < 0)
                        break;
                len = (size_t) n;
                lineno++;
                if (len > 0 && line[len - 1] == '\n')
                        line[--len] = 0;
                m = match(line, len, key);
                if (m < 0) {
                        fprintf(stderr, "%s: %s:%u: not %s, ignoring\n", PROGRAM, path, lineno, what);
                        continue;
                }
                if (m > 0)
                        return 1;
        }
        /* Only the end of the file proves that the key is absent. A read error must not pass for it. */
        if (ferror(f) || errno == ENOMEM)
                return negative_errno();
        return 0;
}

/* The last component of path, when it is a PCI address. */
static bool pci_addr_of(const char *path, char ret[static PCI_ADDR_MAX]) {
        const char *base = strrchr(path, '/');

        base = base ? base + 1 : path;
        if (!pci_addr_valid(base))
                return false;
        strscpy(ret, PCI_ADDR_MAX, base);
        return true;
}

/*
 * Finds the device that devpath names, and the PF of a VF from its physfn link. The link is
 * read under devpath itself. So, when irqbalance runs over another sysfs tree, the link is that
 * tree's. Returns false when devpath is not a PCI device, as for an IRQ without a device.
 */
static bool device_find(const char *devpath, Device *ret) {
        _cleanup_free_ char *link = NULL;
        char target[PATH_MAX];
        ssize_t n;

        *ret = (Device) {};
        if (!pci_addr_of(devpath, ret->addr))
                return false;
        if (asprintf(&link, "%s/physfn", devpath) < 0)
                return true;   /* Without memory, the device's own address is all there is. */
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0) {
                /* A PF or a device without SR-IOV has no physfn. */
                if (errno != ENOENT)
                        fprintf(stderr, "%s: cannot read %s, taking the device for a PF: %m\n", PROGRAM, link);
                return true;
        }
        target[n] = 0;
        if (!pci_addr_of(target, ret->pf))
                fprintf(stderr, "%s: %s does not name a PCI device, ignoring\n", PROGRAM, link);
        return true;
}

static const char *list_path(const char *env, const char *fallback) {
        const char *path = secure_getenv(env);
        return path && path[0] ? path : fallback;
}

/* Asks a list whether it bans. A list that cannot be read bans nothing, because balancing is all irqbalance can do then. */
static bool list_bans(const char *path, const char *what, LineMatch match, const void *key) {
        int r = list_contains(path, what, match, key);

        if (r < 0) {
                errno = -r;
                fprintf(stderr, "%s: cannot read %s, banning nothing from it: %m\n", PROGRAM, path);
                return false;
        }
        return r > 0;
}

int main(int argc, char *argv[]) {
        Device device;
        unsigned irq;
        bool ban;

        if (argc != 3 || argv[1][0] != '/' || !irq_parse(argv[2], strlen(argv[2]), &irq)) {
                fprintf(stderr, "Usage: %s SYSFS-DEVICE-PATH IRQ\n"
                        "Meant for irqbalance --policyscript: prints ban=true when IRQ (decimal) is one sriovd pins,\n"
                        "or when the device is a PF that sriovd manages or one of its VFs.\n",
                        PROGRAM);
                return 2;
        }

        ban = list_bans(list_path(OWNED_IRQS_ENV, OWNED_IRQS_DEFAULT), "an IRQ number", match_irq, &irq);
        if (!ban && device_find(argv[1], &device))
                ban = list_bans(list_path(OWNED_DEVICES_ENV, OWNED_DEVICES_DEFAULT), "a PCI address", match_device,
                                &device);
        if (ban && (fputs("ban=true\n", stdout) == EOF || fflush(stdout) != 0)) {
                fprintf(stderr, "%s: cannot write to stdout: %m\n", PROGRAM);
                return 1;
        }
        return 0;
}
