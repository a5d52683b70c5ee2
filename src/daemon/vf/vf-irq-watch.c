/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-irq-watch.c — a started guest's passthrough VFs, watched for the vectors that its driver enables */

#include <stdio.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "vf-irq-watch.h"

/*
 * The watch looks 1, 2, 4 and so on up to 64 s after STARTED. A guest's driver enables MSI-X
 * once the guest has booted that far, and no event tells when. That takes seconds on real
 * hardware, and took 46 s for a nested TCG guest in the system suite. Doubling puts the first
 * look close to an early driver. It also bounds the series at 7 reads of one small directory
 * per VF. No look is a cycle, because a cycle runs only when a look finds vectors. Past 64 s,
 * the drift check is the safety net, unless drift_check_sec is 0. It re-reads every msi_irqs/
 * anyway.
 *
 * QEMU does not enable a VF's vectors all at once. Vector 0 comes first, and the others follow
 * as the guest unmasks them. So a look that found vectors is followed by one more a second
 * later. The watch ends at the first look that finds nothing new. VF_IRQ_WATCH_LOOKS_MAX bounds
 * the looks for a guest that keeps changing its vectors. After that, the drift check finds them.
 */
#define VF_IRQ_WATCH_LOOKS_MAX (2 * VF_IRQ_WATCH_LOOKS)

bool vf_irq_watch_driver_is_vfio(const char *driver) {
        /* vfio-pci, or a vendor's variant such as mlx5_vfio_pci. vfio-pci-core names all their vectors alike. */
        return driver && strstr(driver, "vfio");
}

int vf_irq_watch_add(VfIrqWatchList *l, const char *vf, uint64_t now) {
        VfIrqWatch *w = NULL;

        for (size_t i = 0; i < l->n && !w; i++)
                if (streq(l->items[i].vf, vf))
                        w = &l->items[i];
        if (!w) {
                if (GREEDY_REALLOC(l->items, l->allocated, l->n + 1) < 0)
                        return -ENOMEM;
                w = &l->items[l->n++];
        }
        *w = (VfIrqWatch) { .since = now, .next = now + VF_IRQ_WATCH_FIRST_USEC };
        strscpy(w->vf, sizeof(w->vf), vf);
        return 0;
}

uint64_t vf_irq_watch_next(const VfIrqWatchList *l) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < l->n; i++)
                next = MIN(next, l->items[i].next);
        return next;
}

/* Whether the VF's msi_irqs/ lists a vector that inv does not know of. Only a VF bound to vfio is read. */
static int vf_has_news(RootFs *root, const Inventory *inv, const char *addr) {
        _cleanup_free_ unsigned *irqs = NULL;
        const Vf *vf = NULL;
        size_t n = 0;
        int r;

        if (!inv || !inventory_find_function(inv, addr, &vf) || !vf || !vf_irq_watch_driver_is_vfio(vf->driver))
                return 0;
        r = pci_read_irqs(root, addr, &irqs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;   /* The VF went away meanwhile. The cycle that its uevent starts will say so. */
        for (size_t i = 0; i < n; i++)
                if (!bsearch_safe(&irqs[i], vf->irqs, vf->n_irqs, sizeof(unsigned), unsigned_cmp))
                        return 1;
        return 0;
}

int vf_irq_watch_look(VfIrqWatchList *l, RootFs *root, const Inventory *inv, uint64_t now, char *ret_vf) {
        int n_news = 0;

        for (size_t i = 0; i < l->n;) {
                VfIrqWatch *w = &l->items[i];
                bool done;
                int r;

                if (w->next > now) {
                        i++;
                        continue;
                }
                r = vf_has_news(root, inv, w->vf);
                if (r < 0)
                        return r;
                w->looks++;
                if (r > 0) {
                        if (n_news++ == 0)
                                strscpy(ret_vf, PCI_ADDR_MAX, w->vf);
                        w->found = true;
                        w->next = now + VF_IRQ_WATCH_FIRST_USEC;
                        done = w->looks >= VF_IRQ_WATCH_LOOKS_MAX;
                } else if (w->found)
                        done = true;
                else {
                        /*
                         * A look made late, after a busy loop or a suspended host, is not made up
                         * for. The next look is the next one due.
                         */
                        while (w->looks < VF_IRQ_WATCH_LOOKS &&
                               w->since + ((uint64_t) VF_IRQ_WATCH_FIRST_USEC << w->looks) <= now)
                                w->looks++;
                        done = w->looks >= VF_IRQ_WATCH_LOOKS;
                        w->next = w->since + ((uint64_t) VF_IRQ_WATCH_FIRST_USEC << w->looks);
                }
                if (done)
                        *w = l->items[--l->n];
                else
                        i++;
        }
        return n_news;
}

void vf_irq_watch_seen(VfIrqWatchList *l, const Inventory *inv) {
        for (size_t i = 0; i < l->n; i++) {
                const Vf *vf = NULL;

                if (inventory_find_function(inv, l->items[i].vf, &vf) && vf && vf->n_irqs > 0 &&
                    vf_irq_watch_driver_is_vfio(vf->driver))
                        l->items[i].found = true;
        }
}

void vf_irq_watch_list_done(VfIrqWatchList *l) {
        l->items = mfree(l->items);
        l->n = l->allocated = 0;
}

/* ---- The watcher: a timer for the looks, and a cycle when one finds vectors ---- */

void vf_irq_watcher_init(VfIrqWatcher *w, RootFs *root, const VfIrqWatchHooks *hooks) {
        *w = (VfIrqWatcher) { .root = root, .hooks = *hooks };
}

void vf_irq_watcher_done(VfIrqWatcher *w) {
        w->timer = sd_event_source_unref(w->timer);
        vf_irq_watch_list_done(&w->list);
}

static int on_irq_watch_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void vf_irq_watcher_arm(VfIrqWatcher *w, sd_event *event) {
        uint64_t next = vf_irq_watch_next(&w->list);
        int r;

        if (!event)
                return;
        if (next == UINT64_MAX) {
                if (w->timer)
                        (void) sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
                return;
        }
        /* 100 ms of accuracy suffice, because a guest's boot is not that precise. Wakeups can then be batched. */
        if (!w->timer)
                r = sd_event_add_time(event, &w->timer, CLOCK_MONOTONIC, next, 100 * 1000, on_irq_watch_timer, w);
        else {
                r = sd_event_source_set_time(w->timer, next);
                if (r >= 0)
                        r = sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to arm the look for a started guest's VF vectors, "
                                  "the drift timer will find them: %m");
}

static int on_irq_watch_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        VfIrqWatcher *w = userdata;
        char vf[PCI_ADDR_MAX], why[96];
        int r;

        r = vf_irq_watch_look(&w->list, w->root, w->hooks.inventory(w->hooks.userdata), now_usec(), vf);
        if (r < 0)
                log_oom();
        else if (r > 0) {
                snprintf(why, sizeof(why), "MSI-X vectors of passthrough VF %s%s", vf, r > 1 ? " and others" : "");
                w->hooks.found(why, w->hooks.userdata);
        }
        vf_irq_watcher_arm(w, sd_event_source_get_event(s));
        return 0;
}

void vf_irq_watcher_guest_started(VfIrqWatcher *w, sd_event *event, const Tenants *tenants, const Inventory *inv,
                                  const char *domain, const char *uuid) {
        size_t n = tenants ? tenants_count(tenants) : 0;
        uint64_t now = now_usec();

        for (size_t i = 0; i < n; i++) {
                TenantInfo t;

                if (tenants_nth(tenants, inv, i, &t) < 0 || !virt_domain_ref_is(tenant_domain_ref(&t), domain, uuid) ||
                    !t.vf[0])
                        continue;
                if (vf_irq_watch_add(&w->list, t.vf, now) < 0) {
                        log_oom();
                        return;
                }
                log_full_errno(LOG_DEBUG, 0, LOG_FIELDS(.tenant = t.tenant, .vf = t.vf),
                               "Tenant %s: %s started, looking for VF %s's MSI-X vectors", t.tenant, domain, t.vf);
        }
        vf_irq_watcher_arm(w, event);
}

static bool irq_pin_failed(const Plan *plan, const char *addr, unsigned irq) {
        for (size_t i = 0; plan && i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                if (a->kind == ACTION_SET_IRQ_AFFINITY && a->irq == irq && streq(a->target, addr) && a->result < 0)
                        return true;
        }
        return false;
}

void vf_irq_watch_log_found(RootFs *root, const PlanAllocation *allocations, size_t n_allocations,
                            const Inventory *old, const Inventory *inv, const Plan *plan) {
        for (size_t i = 0; i < n_allocations; i++) {
                const PlanAllocation *a = &allocations[i];
                char text[768], cpus[CPUSET_LIST_MAX];
                unsigned n_new = 0, n_failed = 0, first = 0;
                const Vf *vf = NULL, *was = NULL;
                const Pf *pf;
                size_t k = 0;

                pf = inventory_find_function(inv, a->vf, &vf);
                if (!pf || !vf || vf->n_irqs == 0 || !vf_irq_watch_driver_is_vfio(vf->driver))
                        continue;
                /* At start-up, without an old inventory, the vectors of running guests are logged once too. */
                if (old && inventory_find_function(old, a->vf, &was) && was && !streq(was->driver, vf->driver))
                        was = NULL;   /* Those were its host driver's vectors, not these. */

                text[0] = 0;
                for (size_t j = 0; j < vf->n_irqs; j++) {
                        const Irq *q = inventory_find_irq(inv, vf->irqs[j]);
                        char action[64];

                        if (was && bsearch_safe(&vf->irqs[j], was->irqs, was->n_irqs, sizeof(unsigned), unsigned_cmp))
                                continue;
                        if (n_new++ == 0)
                                first = vf->irqs[j];
                        n_failed += irq_pin_failed(plan, vf->addr, vf->irqs[j]);
                        if (irq_read_action(root, vf->irqs[j], action, sizeof(action)) < 0 || !action[0])
                                strscpy(action, sizeof(action), "?");
                        strjoin_appendf(text, sizeof(text), &k, "IRQ %u %s on CPU %s", vf->irqs[j], action,
                                        q ? cpuset_format_list(&q->affinity, cpus, sizeof(cpus)) : "?");
                }
                if (n_new == 0)
                        continue;
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = a->tenant, .vf = vf->addr, .pf = pf->addr,
                                                       .irq = (int) first),
                               "Tenant %s: %u new vfio-msix vectors of VF %s (its guest enabled MSI-X), placed for "
                               "class %s: %s%s", a->tenant, n_new, vf->addr, a->class_name[0] ? a->class_name : "(PF's)",
                               text, n_failed ? " (some could not be pinned, see above)" : "");
        }
}
