/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.c — the inventory model: scope, lookups and teardown (reading lives in kernel/discover.c) */

#include <string.h>

#include "sriovd/inventory.h"

/* ConnectX-5, 5 Ex, 6, 6 Dx, 6 Lx, 7 physical functions. */
const PciId scope_default_ids[] = {
        { 0x15b3, 0x1017 },
        { 0x15b3, 0x1019 },
        { 0x15b3, 0x101b },
        { 0x15b3, 0x101d },
        { 0x15b3, 0x101f },
        { 0x15b3, 0x1021 },
};
const size_t scope_default_n_ids = ELEMENTSOF(scope_default_ids);

bool scope_contains(const Scope *s, uint16_t vendor, uint16_t device, const char *addr) {
        const PciId *ids = s && s->ids ? s->ids : scope_default_ids;
        size_t n = s && s->ids ? s->n_ids : scope_default_n_ids;

        for (size_t i = 0; i < n; i++)
                if (ids[i].vendor == vendor && ids[i].device == device)
                        return true;
        if (s && addr)
                for (size_t i = 0; i < s->n_addrs; i++)
                        if (streq(s->addrs[i], addr))
                                return true;
        return false;
}

Inventory *inventory_free(Inventory *inv) {
        if (!inv)
                return NULL;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                Pf *pf = &inv->pfs[i];
                for (size_t j = 0; j < pf->n_vfs; j++)
                        free(pf->vfs[j].irqs);
                free(pf->vfs);
                free(pf->irqs);
                free(pf->netdevs);
        }
        free(inv->pfs);
        free(inv->irqs);
        free(inv->topo.node_cpus);
        free(inv);
        return NULL;
}

static int irq_key_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const Irq *) elem)->irq;
        return (k > e) - (k < e);
}

const Irq *inventory_find_irq(const Inventory *inv, unsigned irq) {
        return bsearch_safe(&irq, inv->irqs, inv->n_irqs, sizeof(*inv->irqs), irq_key_cmp);
}

const Pf *inventory_find_pf(const Inventory *inv, const char *addr) {
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (streq(inv->pfs[i].addr, addr))
                        return &inv->pfs[i];
        return NULL;
}
