/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-change.c — requests, releases and settings, each undone when it cannot be saved */

#include <stdio.h>
#include <string.h>

#include "state/state.h"
#include "tenants-internal.h"

StateTenant *tenants_orphan_find(const Tenants *t, const char *tenant) {
        for (size_t i = 0; i < t->n_orphans; i++)
                if (streq(t->orphans[i].tenant, tenant))
                        return &t->orphans[i];
        return NULL;
}

/*
 * Take the orphan out of the list by moving it just past the end. orphan_unremove() then puts
 * it back without allocating.
 */
static bool orphan_remove(Tenants *t, const char *tenant) {
        StateTenant *o = tenants_orphan_find(t, tenant), tmp;

        if (!o)
                return false;
        tmp = *o;
        *o = t->orphans[t->n_orphans - 1];
        t->orphans[--t->n_orphans] = tmp;
        return true;
}

static void orphan_unremove(Tenants *t) {
        t->n_orphans++;
}

/* Swap back the allocator as it was before a change that could not be saved. */
static void swap_allocators(Allocator **a, Allocator **b) {
        Allocator *x = *a;
        *a = *b;
        *b = x;
}

/*
 * A change saved on its own waits for the write in flight first. A change is saved on its own
 * when no group is open: without a bus, or for a caller outside a group. The change's line
 * names the file's generation, which a rewrite in flight is about to change. Also, a failed
 * write in flight takes memory back to before that write. Within a group, the group's own order
 * takes care of both.
 */
static void settle_before_change(Tenants *t) {
        if (!t->group.open)
                (void) tenants_flight_wait(t);
}

int tenants_allocate(Tenants *t, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, char *reason, size_t reason_size) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocRequest req = { .tenant = tenant, .class_name = class_name, .numa_node = opts->numa_node, .guest = domain,
                             .pin_pf = opts->pin_pf };
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        Extra e = { .vlan = -1 }, before;
        bool is_new, repeat, had_extra;
        AllocTenant cur;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        settle_before_change(t);
        if (!tenant_id_valid(tenant))
                return -EINVAL;
        if (strlen(domain) >= sizeof(e.domain) || strchr(domain, '/'))
                return -EINVAL;
        /* Refuse what the state file would refuse to hold: a multicast MAC, or a VLAN outside 802.1Q. */
        if ((opts->have_mac && (opts->mac[0] & 1)) || opts->vlan < -1 || opts->vlan > STATE_VLAN_MAX ||
            opts->tx_rates.min > TX_RATE_MAX || opts->tx_rates.max > TX_RATE_MAX)
                return -EINVAL;
        if ((opts->pin_pf[0] && !pci_addr_valid(opts->pin_pf)) || (opts->domain_uuid[0] && !uuid_valid(opts->domain_uuid)) ||
            (opts->owner[0] && !tenant_id_valid(opts->owner) && !streq(opts->owner, ".") && !streq(opts->owner, "..")))
                return -EINVAL;
        is_new = allocator_find_tenant(t->alloc, tenant, &cur) < 0;
        /* An orphan is a saved tenant whose class is gone. Asked for again, it is replaced, not added. */
        if (is_new && !tenants_orphan_find(t, tenant) && allocator_n_tenants(t->alloc) + t->n_orphans >= STATE_TENANTS_MAX)
                return -EUSERS;

        /*
         * A repeat of the tenant's class and node changes nothing in the allocator. Anything else
         * works on a copy of the allocator, which is taken back whole if the change cannot be saved.
         */
        repeat = !is_new && streq(cur.class_name, class_name) && cur.numa_node == opts->numa_node &&
                 streq(cur.pin_pf, opts->pin_pf) &&
                 ((cur.n_rt_cpus == 0 && !cur.rt_waiting) || streq(cur.guest, domain));
        if (!repeat) {
                r = allocator_clone(t->alloc, &saved);
                if (r < 0)
                        return r;
        }
        r = allocator_request(t->alloc, &req, &d);
        if (r == ALLOCATOR_REFUSED) {
                if (reason)
                        snprintf(reason, reason_size, "%s",
                                 d.n_decisions ? d.decisions[d.n_decisions - 1].reason : "refused");
                /* -EXFULL means that an RT CPU was missing, not a VF. It has its own bus error. */
                return d.n_decisions && d.decisions[d.n_decisions - 1].missing == ALLOC_MISSING_RT_CPU ? -EXFULL
                                                                                                    : -ENOSPC;
        }
        if (r < 0) {
                if (saved)
                        swap_allocators(&t->alloc, &saved);   /* It should be unchanged, but that is not relied on. */
                return r;
        }
        /*
         * A class that refuses without RT CPUs never gets a yes-and-waiting answer. The allocator
         * already refuses such an outcome. This check holds the contract at the boundary, whatever
         * path led there. Nothing of the change stays.
         */
        if (allocator_find_tenant(t->alloc, tenant, &cur) >= 0) {
                if (cur.n_rt_cpus < allocator_class_rt_required(t->alloc, class_name)) {
                        if (saved)
                                swap_allocators(&t->alloc, &saved);
                        if (reason)
                                snprintf(reason, reason_size, "class %s: no RT CPU for guest %s now", class_name,
                                         domain[0] ? domain : tenant);
                        return -EXFULL;
                }
        }

        had_extra = tenants_extra_find(t, tenant);
        if (had_extra)
                e = *tenants_extra_find(t, tenant);
        else {
                strscpy(e.tenant, sizeof(e.tenant), tenant);
                mac_derive(tenant, e.mac);
        }
        before = e;
        strscpy(e.domain, sizeof(e.domain), domain);
        if (opts->have_mac)
                memcpy(e.mac, opts->mac, sizeof(e.mac));
        e.vlan = opts->vlan;
        strscpy(e.domain_uuid, sizeof(e.domain_uuid), opts->domain_uuid);
        strscpy(e.owner, sizeof(e.owner), opts->owner);
        e.tx_rates = opts->tx_rates;
        r = tenants_extra_add(t, &e);
        /*
         * Any change is acknowledged only once it is saved. That includes a new class or node that
         * keeps the NIC, which makes no decision, and a new domain, MAC or VLAN alone.
         */
        if (r >= 0 && (!repeat || d.n_decisions > 0 || memcmp(&before, &e, sizeof(e)) != 0))
                r = tenants_commit(t, tenant, &d);
        if (r < 0) {
                /* The change was not saved, so it is not acknowledged. Nothing of it stays, in any tenant. */
                if (saved)
                        swap_allocators(&t->alloc, &saved);
                if (had_extra)
                        (void) tenants_extra_add(t, &before);
                else
                        tenants_extra_remove(t, tenant);
                return r;
        }
        orphan_remove(t, tenant);
        tenants_report(t, &d);
        return 0;
}

bool tenants_vf_in_guest(const Tenants *t, const char *vf) {
        return pci_set_contains(&t->in_guest, vf);
}

int tenants_release(Tenants *t, const char *tenant, bool vf_stays_in_guest) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        char held[PCI_ADDR_MAX] = "";
        AllocTenant cur;
        bool known;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        settle_before_change(t);
        if (tenants_orphan_find(t, tenant) && allocator_find_tenant(t->alloc, tenant, &(AllocTenant) {}) < 0) {
                /* The tenant was kept only because its class was gone. Now the operator lets it go. */
                orphan_remove(t, tenant);
                r = tenants_commit(t, tenant, NULL);
                if (r < 0) {
                        orphan_unremove(t);
                        return r;
                }
                tenants_extra_remove(t, tenant);
                return 0;
        }
        r = allocator_clone(t->alloc, &saved);
        if (r < 0)
                return r;
        t->releasing[0] = t->releasing_class[0] = 0;
        known = allocator_find_tenant(t->alloc, tenant, &cur) >= 0;
        if (known) {
                strscpy(t->releasing, sizeof(t->releasing), tenant);
                strscpy(t->releasing_class, sizeof(t->releasing_class), cur.class_name);
        }
        /* The guest lets go of the VF in its own time, in a live detach. Until then, the VF is no one's. */
        if (vf_stays_in_guest && known && cur.vf) {
                strscpy(held, sizeof(held), cur.vf);
                /* The room is made now, because nothing may fail once the change is saved. */
                r = pci_set_reserve(&t->in_guest, 1);
                if (r < 0)
                        return r;
                r = allocator_set_vf_in_guest(t->alloc, held, true, &d);
                if (r < 0) {
                        swap_allocators(&t->alloc, &saved);
                        return r;
                }
        }
        r = allocator_release(t->alloc, tenant, &d);
        if (r < 0) {
                swap_allocators(&t->alloc, &saved);
                return r;
        }
        r = tenants_commit(t, tenant, &d);
        if (r < 0) {
                swap_allocators(&t->alloc, &saved);
                return r;
        }
        if (held[0])
                (void) pci_set_add(&t->in_guest, held);   /* The room was made above, so this cannot fail. */
        /* Report before the tenant's domain and MAC are forgotten, because its NIC is detached from them. */
        tenants_report(t, &d);
        tenants_extra_remove(t, tenant);
        return 0;
}

int tenants_set_vfs_in_guest(Tenants *t, const char (*vfs)[PCI_ADDR_MAX], size_t n) {
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_(allocator_freep) Allocator *saved = NULL;
        _cleanup_(pci_set_done) PciSet now = {};
        size_t n_out = 0;
        int r;

        if (!t->alloc)
                return -EAGAIN;
        (void) tenants_flush(t);   /* What came before is saved, or undone, first. */
        r = pci_set_reserve(&now, n);
        if (r < 0)
                return r;
        r = allocator_clone(t->alloc, &saved);
        if (r < 0)
                return r;
        /*
         * These VFs are marked first. So when the VFs let out below serve waiting tenants, none of
         * these can be given to anyone.
         */
        for (size_t i = 0; i < n; i++) {
                if (pci_set_contains(&now, vfs[i]))
                        continue;
                /*
                 * Only a VF that no tenant holds is marked. A VF that a tenant holds is where the
                 * reconcile says it is.
                 */
                if (allocator_vf_holder(t->alloc, vfs[i]))
                        continue;
                r = allocator_set_vf_in_guest(t->alloc, vfs[i], true, &d);
                if (r == -ENOENT)
                        continue;   /* The VF is not in the pool. */
                if (r < 0)
                        goto fail;
                /* The room was made above, so this cannot fail. */
                (void) pci_set_add(&now, vfs[i]);
        }
        for (size_t i = 0; i < pci_set_size(&t->in_guest); i++)
                if (!pci_set_contains(&now, pci_set_get(&t->in_guest, i))) {
                        r = allocator_set_vf_in_guest(t->alloc, pci_set_get(&t->in_guest, i), false, &d);
                        if (r < 0 && r != -ENOENT)
                                goto fail;
                        n_out++;
                }
        /* Nothing was let out, and as many were marked as before, so the set is the same. */
        if (n_out == 0 && pci_set_size(&now) == pci_set_size(&t->in_guest))
                return 0;
        /* VFs that left their guest serve the waiting tenants. The decisions are saved before anyone is told. */
        if (d.n_decisions > 0) {
                r = tenants_commit(t, NULL, &d);
                if (r < 0)
                        goto fail;
        }
        pci_set_done(&t->in_guest);
        t->in_guest = now;
        now = (PciSet) {};
        tenants_report(t, &d);
        return 1;

fail:
        swap_allocators(&t->alloc, &saved);
        return r;
}

int tenants_set_coalesce(Tenants *t, const char *tenant, unsigned rx_usecs, unsigned tx_usecs) {
        Extra *e;
        AllocTenant cur;
        int r;

        settle_before_change(t);
        /* An orphan, whose class is gone, is kept as saved but not managed. It has nothing to tune. */
        e = tenants_extra_find(t, tenant);
        if (!e || !t->alloc || allocator_find_tenant(t->alloc, tenant, &cur) < 0)
                return -ENOENT;
        if (rx_usecs > STATE_COALESCE_USECS_MAX || tx_usecs > STATE_COALESCE_USECS_MAX)
                return -EINVAL;
        /*
         * The coalescing window belongs to the VF, and ethtool sets it on the VF's host netdev. A
         * tenant on virtio-net has no window that sriovd could set, so a new one is refused rather
         * than kept unused. An override set while the tenant had a VF stays, for the VF it gets
         * back. That happens to a sriov-preferred tenant that was downgraded. A waiting
         * sriov-required tenant has no NIC yet, and may set a window for the VF to come.
         */
        if (cur.nic == ALLOC_NIC_VIRTIO)
                return -EMEDIUMTYPE;
        Extra before = *e;
        e->have_coalesce = true;
        e->rx_usecs = rx_usecs;
        e->tx_usecs = tx_usecs;
        r = tenants_commit(t, tenant, NULL);
        if (r < 0)
                *tenants_extra_find(t, tenant) = before;   /* It was not saved, so it is not changed. */

        return r;
}
