/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* drift-expected.c — whether a planned action is sriovd's own change or the repair of a drift */

#include "sriovd/shared/macro.h"
#include "sriovd/shared/util.h"
#include "drift-expected.h"

/* The vectors that the device at addr, a PF or a VF, has in inv, and the driver that it has them under. */
static const unsigned *device_irqs(const Inventory *inv, const char *addr, const char **ret_driver, size_t *ret_n) {
        const Vf *vf = NULL;
        const Pf *pf = inv ? inventory_find_function(inv, addr, &vf) : NULL;

        if (!pf)
                return NULL;
        *ret_driver = vf ? vf->driver : pf->driver;
        *ret_n = vf ? vf->n_irqs : pf->n_irqs;
        return vf ? vf->irqs : pf->irqs;
}

/* Whether irq is a vector that the device at addr did not have in old, or had under another driver. */
static bool device_irq_is_new(const Inventory *old, const Inventory *inv, const char *addr, unsigned irq) {
        const char *was_driver = NULL, *driver = NULL;
        const unsigned *was;
        size_t n_was = 0, n = 0;

        if (!old)
                return false;   /* Nothing was seen before. At start-up, everything is expected. */
        /*
         * The vector is listed, but it was not in /proc/irq then. So its first handler was
         * requested since, as igbvf does at open.
         */
        if (!inventory_find_irq(old, irq))
                return true;
        was = device_irqs(old, addr, &was_driver, &n_was);
        /* A number that the kernel hands out again to another driver, as from igbvf to vfio, is a new vector. */
        if (!was || !device_irqs(inv, addr, &driver, &n) || !streq(was_driver, driver))
                return true;
        return !bsearch_safe(&irq, was, n_was, sizeof(unsigned), unsigned_cmp);
}

/* Whether the last cycle saw this handler thread on that IRQ.
 * A thread requested since then, for example when a netdev opened, is new. */
static bool irq_thread_seen(const Inventory *old, const Action *a) {
        const Irq *q = old ? inventory_find_irq(old, a->irq) : NULL;

        return q && q->thread == a->pid;
}

static bool napi_thread_seen(const Inventory *old, const Action *a) {
        for (size_t i = 0; old && i < old->n_kthreads; i++)
                if (old->kthreads[i].kind == KTHREAD_NAPI && old->kthreads[i].pid == a->pid)
                        return streq(old->kthreads[i].name, a->thread_name);
        return false;
}

/*
 * Whether the PF at addr, or the PF of the VF at addr, was probed again since the last cycle.
 * That is so when its netdev or driver is not the one it had, or when the last cycle did not see
 * it. A driver reload leaves the PF as its probe sets it up, with its vectors at their default
 * affinity and no VFs. The kernel may give the vectors the numbers they had before. So what
 * sriovd then writes is its own setup, not drift. The uevents say so too, but the cycle that the
 * unbind started can read the host before the bind event arrives.
 */
static bool pf_reprobed(const Inventory *old, const Inventory *inv, const char *addr) {
        const Pf *pf = inventory_find_pf(inv, addr), *was;

        for (size_t i = 0; !pf && i < inv->n_pfs; i++)
                if (pf_owns(&inv->pfs[i], addr))
                        pf = &inv->pfs[i];
        if (!pf || !old)
                return false;
        /* A PF that was missing last time is new, like a hot-plugged one.
         * This happens when it was unbound and a cycle ran before the bind. */
        was = inventory_find_pf(old, pf->addr);
        return !was || was->ifindex != pf->ifindex || !streq(was->driver, pf->driver);
}

/* Whether the last cycle tried a and failed, for example on a PF whose driver was still probing.
 * Trying it again is a retry of sriovd's own change, not the repair of a drift. */
static bool failed_last_cycle(const Plan *last, const Action *a) {
        for (size_t i = 0; last && i < last->n_actions; i++) {
                const Action *b = &last->actions[i];

                if (b->result < 0 && b->kind == a->kind && b->irq == a->irq && b->vf == a->vf && b->pid == a->pid &&
                    b->cpu == a->cpu && b->idle_state == a->idle_state && streq(b->target, a->target))
                        return true;
        }
        return false;
}

bool action_expected(const ExpectedChanges *e, const Inventory *inv, const Action *a) {
        const Pf *pf;

        if (e->all)
                return true;
        if (a->target[0] && pf_reprobed(e->last, inv, a->target))
                return true;
        if (failed_last_cycle(e->last_plan, a))
                return true;
        /*
         * A vector that the last cycle did not see is new, not drifted. A guest's driver may enable
         * MSI-X on its passthrough VF, and no uevent says so. A driver may also request its vectors
         * at link-up.
         */
        if ((a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD) && a->target[0] &&
            device_irq_is_new(e->last, inv, a->target, a->irq))
                return true;
        if (a->kind == ACTION_SET_IRQ_THREAD && a->target[0] && e->last && !irq_thread_seen(e->last, a))
                return true;
        /* The same holds for a NAPI thread that the last cycle did not see.
         * Threaded NAPI may have been switched on, or a driver reloaded. */
        if ((a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED) && !napi_thread_seen(e->last, a))
                return true;
        if (pci_set_size(e->vfs) == 0 || !a->target[0])
                return false;
        if (pci_set_contains(e->vfs, a->target))
                return true;
        /* With pf_link = auto, the PF's link goes up for the first tenant on one of its VFs. */
        if (a->kind == ACTION_SET_PF_LINK) {
                pf = inventory_find_pf(inv, a->target);
                for (size_t i = 0; pf && i < pci_set_size(e->vfs); i++)
                        if (pf_owns(pf, pci_set_get(e->vfs, i)))
                                return true;
                return false;
        }
        /* VF link settings are actions on the PF that name the VF by its index. */
        pf = a->kind == ACTION_SET_VF_LINK ? inventory_find_pf(inv, a->target) : NULL;
        for (size_t j = 0; pf && j < pf->n_vfs; j++)
                if (pf->vfs[j].index == a->vf && pci_set_contains(e->vfs, pf->vfs[j].addr))
                        return true;
        return false;
}
