/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci-set.h — a small set of PCI addresses, kept in one array in the order they came */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/*
 * The addresses sit in one array, so a PciSet can be read as the const char (*)[PCI_ADDR_MAX]
 * list that the planner takes. Lookups are linear: the sets hold a few PFs or VFs. A zeroed
 * PciSet is an empty set.
 */
typedef struct PciSet {
        char (*addrs)[PCI_ADDR_MAX];
        size_t n, allocated;
} PciSet;

/*
 * Add addr. Returns 1 when it was added, 0 when it was there already, -EINVAL when it does not
 * fit in PCI_ADDR_MAX, or -ENOMEM. On failure the set is left as it was.
 */
int pci_set_add(PciSet *s, const char *addr);
bool pci_set_contains(const PciSet *s, const char *addr);
/*
 * Make room for more addresses, so that the next adds of that many new addresses cannot fail.
 * Returns -ENOMEM or 0.
 */
int pci_set_reserve(PciSet *s, size_t more);
/* Remove addr. The last address takes its place. Returns whether addr was there. */
bool pci_set_remove(PciSet *s, const char *addr);
/* Empty the set and keep its memory for the next adds. */
void pci_set_clear(PciSet *s);
/* Replace the set's contents with a copy of the n addresses of list. Returns -ENOMEM or 0. */
int pci_set_copy_from(PciSet *s, const char (*list)[PCI_ADDR_MAX], size_t n);
/* Free the set's memory. The set is empty afterwards. */
void pci_set_done(PciSet *s);

static inline size_t pci_set_size(const PciSet *s) {
        return s->n;
}

/* The i-th address, for i below pci_set_size(). Iterate with these two. */
static inline const char *pci_set_get(const PciSet *s, size_t i) {
        return s->addrs[i];
}

/* The whole set as an array of pci_set_size() addresses. It may be NULL when the set is empty. */
static inline const char (*pci_set_array(const PciSet *s))[PCI_ADDR_MAX] {
        return (const char (*)[PCI_ADDR_MAX]) s->addrs;
}
