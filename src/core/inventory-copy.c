/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inventory-copy.c — a copy of an inventory, for a drift check that re-reads only what can drift
 * (inventory_refresh()) on the last full read rather than reading the whole host again, and for a
 * hotplug that reads only the new VF (inventory_put_vf()).
 */

#include <stdlib.h>
#include <string.h>

#include "sriovd/inventory.h"

/* A copy of n elements of size bytes at src into *ret (NULL for none); -ENOMEM. */
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
        /* Filled by the daemon on every observe, from netlink: read again, not copied. */
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
        r = dup_array(src->problems.items, src->problems.n, sizeof(HostProblem), &inv->problems.items);
        if (r < 0)
                return r;
        inv->problems.n = inv->problems.allocated = src->problems.n;

        inv->pfs = calloc(MAX(src->n_pfs, (size_t) 1), sizeof(Pf));
        if (!inv->pfs)
                return -ENOMEM;
        for (size_t i = 0; i < src->n_pfs; i++) {
                /* Counted before it is whole: inventory_free() frees what pf_dup() got to. */
                inv->n_pfs++;
                r = pf_dup(&src->pfs[i], &inv->pfs[i]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(inv);
        return 0;
}

static int irq_cmp(const void *a, const void *b) {
        const Irq *x = a, *y = b;
        return (x->irq > y->irq) - (x->irq < y->irq);
}

static bool irq_in(const Irq *irqs, size_t n, unsigned irq) {
        return bsearch_safe(&irq, irqs, n, sizeof(*irqs), irq_cmp) != NULL;
}

int inventory_put_vf(Inventory *inv, size_t pf_index, Vf *vf, const Irq *irqs, size_t n_irqs) {
        Pf *pf = &inv->pfs[pf_index];
        const Vf *old = NULL;
        size_t at = pf->n_vfs, n = 0, k = 0;
        _cleanup_free_ Irq *merged = NULL;
        Vf *vfs;

        for (size_t j = 0; j < pf->n_vfs && !old; j++)
                if (pf->vfs[j].index == vf->index || streq(pf->vfs[j].addr, vf->addr)) {
                        old = &pf->vfs[j];
                        at = j;
                }
        if (!old)
                for (at = 0; at < pf->n_vfs && pf->vfs[at].index < vf->index; at++)
                        ;

        /* Everything that can fail first: on -ENOMEM inv is as it was. */
        merged = malloc(MAX(inv->n_irqs + n_irqs, (size_t) 1) * sizeof(*merged));
        if (!merged)
                return -ENOMEM;
        if (!old) {
                vfs = realloc(pf->vfs, (pf->n_vfs + 1) * sizeof(*vfs));
                if (!vfs)
                        return -ENOMEM;
                pf->vfs = vfs;
        }

        /* Both sorted: merged in one pass. The old VF's vectors are its no more; a new one may
         * have been another device's number. */
        for (size_t i = 0, j = 0; i < inv->n_irqs || j < n_irqs;) {
                const Irq *q = &inv->irqs[i];

                if (j < n_irqs && (i == inv->n_irqs || irqs[j].irq <= q->irq)) {
                        merged[n++] = irqs[j++];
                        continue;
                }
                i++;
                if (irq_in(irqs, n_irqs, q->irq) ||
                    (old && bsearch_safe(&q->irq, old->irqs, old->n_irqs, sizeof(unsigned), unsigned_cmp)))
                        continue;
                merged[n++] = *q;
        }
        free(inv->irqs);
        inv->irqs = TAKE_PTR(merged);
        inv->n_irqs = n;
        for (size_t i = 0; i < inv->n_other_irqs; i++)
                if (!irq_in(irqs, n_irqs, inv->other_irqs[i].irq))
                        inv->other_irqs[k++] = inv->other_irqs[i];
        inv->n_other_irqs = k;

        if (old)
                free(pf->vfs[at].irqs);
        else {
                memmove(pf->vfs + at + 1, pf->vfs + at, (pf->n_vfs - at) * sizeof(*pf->vfs));
                pf->n_vfs++;
        }
        pf->vfs[at] = *vf;
        pf->vfs[at].tune = (NetdevTune) {};
        vf->irqs = NULL;
        vf->n_irqs = 0;
        return 0;
}
