/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-set.c — a small set of PCI addresses in one array, in the order they came */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/macro.h"
#include "sriovd/shared/pci-set.h"

static size_t pci_set_find(const PciSet *s, const char *addr) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->addrs[i], addr))
                        return i;
        return SIZE_MAX;
}

int pci_set_reserve(PciSet *s, size_t more) {
        if (more > SIZE_MAX - s->n)
                return -ENOMEM;
        return GREEDY_REALLOC(s->addrs, s->allocated, s->n + more);
}

int pci_set_add(PciSet *s, const char *addr) {
        int r;

        if (strlen(addr) >= PCI_ADDR_MAX)
                return -EINVAL;
        if (pci_set_contains(s, addr))
                return 0;
        r = pci_set_reserve(s, 1);
        if (r < 0)
                return r;
        strscpy(s->addrs[s->n++], PCI_ADDR_MAX, addr);
        return 1;
}

bool pci_set_contains(const PciSet *s, const char *addr) {
        return pci_set_find(s, addr) != SIZE_MAX;
}

bool pci_set_remove(PciSet *s, const char *addr) {
        size_t i = pci_set_find(s, addr);

        if (i == SIZE_MAX)
                return false;
        if (i != --s->n)
                memcpy(s->addrs[i], s->addrs[s->n], PCI_ADDR_MAX);
        return true;
}

void pci_set_clear(PciSet *s) {
        s->n = 0;
}

int pci_set_copy_from(PciSet *s, const char (*list)[PCI_ADDR_MAX], size_t n) {
        PciSet copy = {};
        int r;

        r = pci_set_reserve(&copy, n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = pci_set_add(&copy, list[i]);
                if (r < 0) {
                        pci_set_done(&copy);
                        return r;
                }
        }
        pci_set_done(s);
        *s = copy;
        return 0;
}

void pci_set_done(PciSet *s) {
        s->addrs = mfree(s->addrs);
        s->n = s->allocated = 0;
}
