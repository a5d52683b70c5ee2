/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* discover.c — reads the whole inventory of CPUs, kernel features, PFs, VFs and IRQs in one pass */

#include <string.h>

#include "sriovd/kernel/discover.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/topology.h"
#include "pci.h"

static int irq_thread_key_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const IrqThread *) elem)->irq;
        return (k > e) - (k < e);
}

static int collect_irqs(const Inventory *inv, unsigned **ret, size_t *ret_n) {
        size_t n = 0, k = 0;
        unsigned *all;

        for (size_t i = 0; i < inv->n_pfs; i++) {
                n += inv->pfs[i].n_irqs;
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        n += inv->pfs[i].vfs[j].n_irqs;
        }
        all = malloc(MAX(n, (size_t) 1) * sizeof(*all));
        if (!all)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                memcpy_safe(all + k, pf->irqs, pf->n_irqs * sizeof(*all));
                k += pf->n_irqs;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        memcpy_safe(all + k, pf->vfs[j].irqs, pf->vfs[j].n_irqs * sizeof(*all));
                        k += pf->vfs[j].n_irqs;
                }
        }
        qsort_safe(all, n, sizeof(*all), unsigned_cmp);

        /* A vector belongs to one function. A broken tree might show it twice, so duplicates are dropped. */
        k = 0;
        for (size_t i = 0; i < n; i++)
                if (k == 0 || all[k - 1] != all[i])
                        all[k++] = all[i];
        *ret = all;
        *ret_n = k;
        return 0;
}

static int read_irqs(RootFs *root, Inventory *inv, const IrqThread *threads, size_t n_threads) {
        _cleanup_free_ unsigned *nums = NULL;
        size_t n;
        int r;

        r = collect_irqs(inv, &nums, &n);
        if (r < 0)
                return r;
        inv->irqs = calloc(MAX(n, (size_t) 1), sizeof(*inv->irqs));
        if (!inv->irqs)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++) {
                Irq *q = &inv->irqs[inv->n_irqs];
                const IrqThread *t;

                /* msi_irqs can name a vector that /proc/irq no longer has, after a race with an unbind. */
                r = irq_read(root, nums[i], q);
                if (r == -ENOENT)
                        continue;
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* sriovd can neither pin nor verify this vector. It still handles the other vectors. */
                        r = host_problem_add(&inv->problems, "", r,
                                             "IRQ %u: smp_affinity_list unreadable (%m): left alone", nums[i]);
                        if (r < 0)
                                return r;
                        continue;
                }
                t = bsearch_safe(&nums[i], threads, n_threads, sizeof(*threads), irq_thread_key_cmp);
                if (t) {
                        q->thread = t->pid;
                        q->thread_policy = t->policy;
                        q->thread_priority = t->priority;
                } else if (inv->caps.threaded_irqs)
                        /* The IRQ has no handler yet, e.g. because its netdev is not open.
                         * A handler requested later brings its own thread, and no event says so.
                         * The refresh in a drift check looks for that thread. */
                        (void) irq_read_action(root, nums[i], q->action, sizeof(q->action));
                inv->n_irqs++;
        }
        return 0;
}

static int irq_cmp(const void *key, const void *elem) {
        unsigned k = *(const unsigned *) key, e = ((const Irq *) elem)->irq;
        return (k > e) - (k < e);
}

/* Reads the IRQs that do not belong to the managed NICs. sriovd keeps these off the RT CPUs. */
static int read_other_irqs(RootFs *root, Inventory *inv) {
        _cleanup_free_ unsigned *all = NULL;
        size_t n;
        int r;

        inv->have_default_affinity = irq_read_default_affinity(root, &inv->default_affinity) >= 0;
        r = irq_list(root, &all, &n);
        if (r < 0)
                return r;
        inv->other_irqs = calloc(MAX(n, (size_t) 1), sizeof(Irq));
        if (!inv->other_irqs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                Irq *q = &inv->other_irqs[inv->n_other_irqs];

                if (bsearch_safe(&all[i], inv->irqs, inv->n_irqs, sizeof(Irq), irq_cmp))
                        continue;
                /* IRQ 0 and a few others have no affinity file. They cannot move, so they are not listed. */
                if (irq_read(root, all[i], q) < 0)
                        continue;
                (void) irq_read_action(root, all[i], q->action, sizeof(q->action));
                inv->n_other_irqs++;
        }
        return 0;
}

int inventory_read(RootFs *root, const Scope *scope, Inventory **ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_free_ PciFunction *fns = NULL;
        _cleanup_free_ IrqThread *threads = NULL;
        _cleanup_free_ char *physfn = NULL;
        size_t n_fns = 0, n_threads = 0, allocated = 0;
        bool irqbalance = false;
        int r;

        inv = calloc(1, sizeof(*inv));
        if (!inv)
                return -ENOMEM;

        r = topology_read(root, &inv->topo);
        if (r < 0)
                return r;

        r = irq_threads_scan(root, &threads, &n_threads, &inv->kthreads, &inv->n_kthreads, &irqbalance);
        if (r < 0)
                return r;
        r = kernel_caps_read(root, n_threads > 0, irqbalance, &inv->caps);
        if (r < 0)
                return r;

        r = pci_scan(root, &inv->problems, &fns, &n_fns);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n_fns; i++) {
                const PciFunction *f = &fns[i];
                Pf *pf;

                if (!scope_contains(scope, f->vendor, f->device, f->addr))
                        continue;
                /*
                 * A VF of an in-scope PF has its own device ID, but one may match the scope anyway.
                 * A function with a physfn link is a VF and is skipped. The link itself counts,
                 * not its target, so a VF with a dangling physfn link is still not a PF.
                 */
                r = rootfs_readlink(root, &physfn, "/sys/bus/pci/devices/%s/physfn", f->addr);
                physfn = mfree(physfn);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && r != -ENOENT &&
                    host_problem_add(&inv->problems, f->addr, r, "physfn is not a readable link (%m): left out") < 0)
                        return -ENOMEM;
                if (r != -ENOENT)
                        continue;

                if (GREEDY_REALLOC(inv->pfs, allocated, inv->n_pfs + 1) < 0)
                        return -ENOMEM;
                pf = &inv->pfs[inv->n_pfs];
                *pf = (Pf) {
                        .vendor = f->vendor,
                        .device = f->device,
                        .numa_node = f->numa_node,
                        .iommu_group = f->iommu_group,
                };
                strscpy(pf->addr, sizeof(pf->addr), f->addr);
                strscpy(pf->name, sizeof(pf->name), f->name);
                strscpy(pf->driver, sizeof(pf->driver), f->driver);

                /* A node that the host does not have would index past the end of the topology's nodes. */
                if (pf->numa_node >= 0 && (unsigned) pf->numa_node >= inv->topo.n_nodes) {
                        r = host_problem_add(&inv->problems, pf->addr, 0,
                                             "numa_node %d is not a node of this host (%u): taken as unknown",
                                             pf->numa_node, inv->topo.n_nodes);
                        if (r < 0)
                                return r;
                        pf->numa_node = -1;
                }

                /* -ENOENT means that the function is not SR-IOV capable or not bound yet, so sriovd skips it.
                 * 1 means that the PF is left out and a host problem says why. */
                r = sriov_read_pf(root, pf, &inv->problems);
                if (r != 0) {
                        pf_done(pf);
                        if (r < 0 && r != -ENOENT)
                                return r;
                        continue;
                }
                inv->n_pfs++;
        }

        r = read_irqs(root, inv, threads, n_threads);
        if (r < 0)
                return r;
        r = read_other_irqs(root, inv);
        if (r < 0 && r != -ENOENT)
                return r;

        *ret = TAKE_PTR(inv);
        return 0;
}
