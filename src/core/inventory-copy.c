/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory-copy.c — a copy of an inventory, which a drift check refreshes instead of reading the host again */

/*
 * A drift check copies the last full read and re-reads only what can drift into the copy, with
 * inventory_refresh(). That is cheaper than reading the whole host again.
 */

#include <stdlib.h>
#include <string.h>

#include "sriovd/core/inventory.h"

/* Copy n elements of size bytes from src into *ret, which is NULL when n is 0. Returns -ENOMEM on failure. */
static int dup_array(const void *src, size_t n, size_t size, void *ret) {
        void *p = NULL;

        if (n > 0) {
                p = malloc(n * size);
                if (!p)
                        return -ENOMEM;
                memcpy(p, src, n * size);
        }
        *(void **) ret = p;
        return 0;
}

static int pf_dup(const Pf *src, Pf *ret) {
        int r;

        *ret = *src;
        /* The daemon fills these from netlink on every observe, so they are read again, not copied. */
        ret->vf_links = NULL;
        ret->n_vf_links = 0;
        ret->vf_links_known = false;
        ret->tune = (NetdevTune) {};
        ret->vfs = NULL;
        ret->irqs = NULL;
        ret->netdevs = NULL;
        ret->n_vfs = ret->n_irqs = ret->n_netdevs = 0;

        r = dup_array(src->irqs, src->n_irqs, sizeof(unsigned), &ret->irqs);
        if (r < 0)
                return r;
        ret->n_irqs = src->n_irqs;
        r = dup_array(src->netdevs, src->n_netdevs, sizeof(*src->netdevs), &ret->netdevs);
        if (r < 0)
                return r;
        ret->n_netdevs = src->n_netdevs;
        r = dup_array(src->vfs, src->n_vfs, sizeof(Vf), &ret->vfs);
        if (r < 0)
                return r;
        for (size_t j = 0; j < src->n_vfs; j++) {
                ret->vfs[j].tune = (NetdevTune) {};
                ret->vfs[j].irqs = NULL;
                ret->vfs[j].n_irqs = 0;
        }
        ret->n_vfs = src->n_vfs;
        for (size_t j = 0; j < src->n_vfs; j++) {
                r = dup_array(src->vfs[j].irqs, src->vfs[j].n_irqs, sizeof(unsigned), &ret->vfs[j].irqs);
                if (r < 0)
                        return r;
                ret->vfs[j].n_irqs = src->vfs[j].n_irqs;
        }
        return 0;
}

int inventory_dup(const Inventory *src, Inventory **ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        int r;

        inv = calloc(1, sizeof(*inv));
        if (!inv)
                return -ENOMEM;
        inv->topo = src->topo;
        inv->topo.node_cpus = NULL;
        inv->caps = src->caps;
        inv->default_affinity = src->default_affinity;
        inv->have_default_affinity = src->have_default_affinity;
        inv->problems.n_dropped = src->problems.n_dropped;

        r = dup_array(src->topo.node_cpus, src->topo.n_nodes, sizeof(CpuSet), &inv->topo.node_cpus);
        if (r < 0)
                return r;
        r = dup_array(src->irqs, src->n_irqs, sizeof(Irq), &inv->irqs);
        if (r < 0)
                return r;
        inv->n_irqs = src->n_irqs;
        r = dup_array(src->other_irqs, src->n_other_irqs, sizeof(Irq), &inv->other_irqs);
        if (r < 0)
                return r;
        inv->n_other_irqs = src->n_other_irqs;
        r = dup_array(src->kthreads, src->n_kthreads, sizeof(Kthread), &inv->kthreads);
        if (r < 0)
                return r;
        inv->n_kthreads = src->n_kthreads;
        r = dup_array(src->cpu_power, src->n_cpu_power, sizeof(CpuPower), &inv->cpu_power);
        if (r < 0)
                return r;
        inv->n_cpu_power = src->n_cpu_power;
        r = dup_array(src->problems.items, src->problems.n, sizeof(HostProblem), &inv->problems.items);
        if (r < 0)
                return r;
        inv->problems.n = inv->problems.allocated = src->problems.n;

        inv->pfs = calloc(MAX(src->n_pfs, (size_t) 1), sizeof(Pf));
        if (!inv->pfs)
                return -ENOMEM;
        for (size_t i = 0; i < src->n_pfs; i++) {
                /* The PF is counted before it is whole, so that inventory_free() frees what pf_dup() got to. */

                inv->n_pfs++;
                r = pf_dup(&src->pfs[i], &inv->pfs[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(inv);
        return 0;
}

static int tune_copy(const NetdevTune *src, NetdevTune *ret) {
        *ret = *src;
        ret->napi.napis = NULL;
        ret->napi.n_napis = 0;
        if (dup_array(src->napi.napis, src->napi.n_napis, sizeof(Napi), &ret->napi.napis) < 0)
                return -ENOMEM;
        ret->napi.n_napis = src->napi.n_napis;
        return 0;
}

int inventory_copy_netlink(const Inventory *src, Inventory *inv) {
        if (src->n_pfs != inv->n_pfs)
                return -ESTALE;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *from = &src->pfs[i];
                Pf *pf = &inv->pfs[i];

                if (!streq(from->addr, pf->addr) || from->n_vfs != pf->n_vfs)
                        return -ESTALE;
                netdev_tune_done(&pf->tune);
                if (tune_copy(&from->tune, &pf->tune) < 0)
                        return -ENOMEM;
                free(pf->vf_links);
                pf->vf_links = NULL;
                pf->n_vf_links = 0;
                if (dup_array(from->vf_links, from->n_vf_links, sizeof(VfLink), &pf->vf_links) < 0)
                        return -ENOMEM;
                pf->n_vf_links = from->n_vf_links;
                pf->vf_links_known = from->vf_links_known;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        if (from->vfs[j].index != pf->vfs[j].index)
                                return -ESTALE;
                        netdev_tune_done(&pf->vfs[j].tune);
                        if (tune_copy(&from->vfs[j].tune, &pf->vfs[j].tune) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}
