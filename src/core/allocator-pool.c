/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-pool.c — changes of the VF pool under the tenants, the reconcile, and the restore at start */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "allocator-internal.h"

/* ---- pool changes ---- */

static void pool_recount(Allocator *a) {
        a->n_usable = a->n_free = a->pref_on_vf = 0;
        memset(a->usable_by_node, 0, sizeof(a->usable_by_node));
        memset(a->free_by_node, 0, sizeof(a->free_by_node));
        memset(a->pref_on_vf_by_node, 0, sizeof(a->pref_on_vf_by_node));
        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                unsigned b = bucket(p->vf.numa_node);

                if (!vf_usable(&p->vf))
                        continue;
                a->n_usable++;
                a->usable_by_node[b]++;
                if (p->holder == NO_SLOT) {
                        a->n_free++;
                        a->free_by_node[b]++;
                } else if (tenant_downgradable(a, &a->slots[p->holder])) {
                        a->pref_on_vf++;
                        a->pref_on_vf_by_node[b]++;
                }
        }
}

/* Why a tenant on a VF must move, or NULL when it may stay. */
static const char *replace_reason(const Allocator *a, const Tenant *t, char *buf, size_t size) {
        const PoolVf *p;

        if (t->gone_vf[0]) {
                snprintf(buf, size, t->gone_held ? "saved VF %s is held by another tenant" : "VF %s vanished",
                         t->gone_vf);
                return buf;
        }
        p = &a->pool[t->vf];
        if (tenant_class(a, t)->vnic == VNIC_VIRTIO)
                snprintf(buf, size, "class %s is virtio-net now", tenant_class(a, t)->name);
        else if (p->vf.reserved)
                snprintf(buf, size, "VF %s reserved by the operator", p->vf.addr);
        else if (p->vf.in_guest)
                snprintf(buf, size, "VF %s is still in a guest", p->vf.addr);
        else if (!p->vf.healthy)
                snprintf(buf, size, "VF %s unhealthy", p->vf.addr);
        else if (t->recreated)
                snprintf(buf, size, "VF %s re-created", p->vf.addr);
        else if (!vf_on_pin(p, t->pin))
                snprintf(buf, size, "VF %s is not on PF %s, which the tenant is pinned to", p->vf.addr, t->pin);
        else if (!vf_acceptable(p, t->node, tenant_class(a, t)))
                snprintf(buf, size, "VF %s is on node %d and class %s does not allow remote NUMA",
                         p->vf.addr, p->vf.numa_node, tenant_class(a, t)->name);
        else
                return NULL;
        return buf;
}

static int service_qsort_cmp(const void *x, const void *y, void *userdata) {
        return alloc_service_cmp(userdata, *(const uint32_t *) x, *(const uint32_t *) y);
}

/* order has room for every tenant, and was allocated before anything changed. */
static int reconcile(Allocator *a, uint32_t *order, AllocDecisions *d) {
        size_t n = a->n_tenants;
        int r;

        if (n > 0) {
                memcpy(order, a->by_id, n * sizeof(uint32_t));
                qsort_r(order, n, sizeof(uint32_t), service_qsort_cmp, a);
        }

        for (size_t i = 0; i < n; i++) {
                uint32_t s = order[i];
                Tenant *t = &a->slots[s];
                const AllocClass *c = tenant_class(a, t);
                char because[ALLOC_REASON_MAX], why[ALLOC_REASON_MAX], old[PCI_ADDR_MAX];
                Pick p;

                if (t->nic != ALLOC_NIC_VF)
                        continue;
                if (!replace_reason(a, t, because, sizeof(because))) {
                        t->remote = !vf_local(&a->pool[t->vf], t->node);   /* The VF's node may have changed. */
                        continue;
                }

                strscpy(old, sizeof(old), t->gone_vf[0] ? t->gone_vf : a->pool[t->vf].vf.addr);
                alloc_tenant_unlist(a, s);
                if (t->recreated && !t->gone_vf[0] && vf_acceptable(&a->pool[t->vf], t->node, c) &&
                    vf_on_pin(&a->pool[t->vf], t->pin)) {
                        /* The address is the same but the device is new, so the executor attaches it again. */
                        t->recreated = false;
                        alloc_tenant_relist(a, s);
                        r = alloc_decide(d, ALLOC_DECISION_REPLACED, t, old, old, "%s: re-attach", because);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!t->gone_vf[0])
                        alloc_vf_drop(a, s);
                t->gone_vf[0] = 0;
                t->gone_held = false;
                t->recreated = false;
                t->vf = NO_VF;
                t->nic = ALLOC_NIC_NONE;

                if (c->vnic == VNIC_SRIOV_REQUIRED && alloc_pick_required(a, t->node, c, t->pin, s, &p)) {
                        r = alloc_take_pick(a, s, &p, d);
                        if (r >= 0) {
                                alloc_where(a, t, why, sizeof(why));
                                r = alloc_decide(d, ALLOC_DECISION_REPLACED, t, old, vf_addr(a, t), "%s; %s", because, why);
                        }
                } else if (c->vnic == VNIC_SRIOV_REQUIRED)
                        r = alloc_decide(d, ALLOC_DECISION_REPLACED, t, old, NULL,
                                   "%s; no VF for sriov-required tenant, waits for one without a NIC", because);
                else if (c->vnic == VNIC_SRIOV_PREFERRED && alloc_pick_preferred(a, t->node, c, t->pin, &p)) {
                        alloc_vf_take(a, s, p.vf);
                        alloc_where(a, t, why, sizeof(why));
                        r = alloc_decide(d, ALLOC_DECISION_REPLACED, t, old, vf_addr(a, t), "%s; %s", because, why);
                } else {
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = alloc_decide(d, ALLOC_DECISION_REPLACED, t, old, NULL, "%s%s", because,
                                   c->vnic == VNIC_VIRTIO ? "" : "; virtio-net until a VF frees");
                }
                alloc_tenant_relist(a, s);
                if (r < 0)
                        return r;
        }
        return alloc_fill(a, d);
}

static int pool_vf_cmp(const void *x, const void *y) {
        return strcmp(((const PoolVf *) x)->vf.addr, ((const PoolVf *) y)->vf.addr);
}

/* Allocate what reconcile() needs before anything changes. */
static int reconcile_prepare(Allocator *a, AllocDecisions *ret, uint32_t **ret_order) {
        /* Each tenant makes three decisions at most: its own new placement, a downgrade and an upgrade. */
        int r = alloc_decisions_reserve(ret, 4 + 3 * a->n_tenants);

        if (r < 0)
                return r;
        *ret_order = malloc((a->n_tenants ?: 1) * sizeof(uint32_t));
        return *ret_order ? 0 : -ENOMEM;
}

int allocator_set_vf_in_guest(Allocator *a, const char *vf, bool in_guest, AllocDecisions *ret) {
        uint32_t v;
        int r;

        if (!a || !ret || !vf)
                return -EINVAL;
        v = alloc_pool_find(a, vf);
        if (v == NO_VF)
                return -ENOENT;
        r = alloc_decisions_reserve(ret, alloc_decisions_bound(a));
        if (r < 0)
                return r;
        if (a->pool[v].vf.in_guest == in_guest)
                return 0;
        a->pool[v].vf.in_guest = in_guest;
        pool_recount(a);
        return in_guest ? 0 : alloc_fill(a, ret);
}

int allocator_set_pool(Allocator *a, const AllocVf *vfs, size_t n_vfs, AllocDecisions *ret) {
        _cleanup_free_ PoolVf *pool = NULL;
        _cleanup_free_ uint32_t *order = NULL;
        int r;

        if (!a || !ret || (n_vfs > 0 && !vfs) || n_vfs > ALLOC_VFS_MAX)
                return -EINVAL;

        if (n_vfs > 0) {
                pool = calloc(n_vfs, sizeof(PoolVf));
                if (!pool)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n_vfs; i++) {
                const AllocVf *v = &vfs[i];
                if (!memchr(v->addr, 0, sizeof(v->addr)) || !pci_addr_valid(v->addr) ||
                    !memchr(v->pf, 0, sizeof(v->pf)) || (v->pf[0] && !pci_addr_valid(v->pf)) ||
                    v->numa_node < -1 || v->numa_node >= ALLOC_NODES_MAX)
                        return -EINVAL;
                pool[i] = (PoolVf) { .vf = *v, .holder = NO_SLOT };
        }
        qsort_safe(pool, n_vfs, sizeof(PoolVf), pool_vf_cmp);
        for (size_t i = 1; i < n_vfs; i++)
                if (streq(pool[i - 1].vf.addr, pool[i].vf.addr))
                        return -EINVAL;

        r = reconcile_prepare(a, ret, &order);
        if (r < 0)
                return r;

        /* Nothing fails from here on. Move the holders over, and mark what vanished or was created again. */
        for (size_t v = 0; v < a->n_pool; v++) {
                PoolVf *old = &a->pool[v];
                PoolVf *new;
                Tenant *t;

                if (old->holder == NO_SLOT)
                        continue;
                t = &a->slots[old->holder];
                new = bsearch_safe(old->vf.addr, pool, n_vfs, sizeof(PoolVf), alloc_pool_addr_cmp);
                if (!new) {
                        strscpy(t->gone_vf, sizeof(t->gone_vf), old->vf.addr);
                        t->vf = NO_VF;
                        continue;
                }
                new->holder = old->holder;
                t->vf = (uint32_t) (new - pool);
                t->recreated = new->vf.generation != old->vf.generation;
        }
        free(a->pool);
        a->pool = TAKE_PTR(pool);
        a->n_pool = n_vfs;

        /*
         * A tenant whose VF vanished stays "on a VF" with vf = NO_VF. It holds nothing and is
         * counted nowhere, until reconcile() places it again.
         */
        pool_recount(a);
        return reconcile(a, order, ret);
}

int allocator_reconcile(Allocator *a, AllocDecisions *ret) {
        _cleanup_free_ uint32_t *order = NULL;
        int r;

        if (!a || !ret)
                return -EINVAL;
        r = reconcile_prepare(a, ret, &order);
        if (r < 0)
                return r;
        r = reconcile(a, order, ret);
        if (r < 0)
                return r;
        return alloc_rt_serve(a, ret);
}

int allocator_restore_tenant(Allocator *a, const AllocTenant *t) {
        uint32_t cls, v = NO_VF, s;
        AllocNic nic;
        VnicKind k;
        int r;

        if (!a || !t || !tenant_id_valid(t->id) || t->numa_node < -1 || t->numa_node >= ALLOC_NODES_MAX)
                return -EINVAL;
        if (t->nic != ALLOC_NIC_NONE && t->nic != ALLOC_NIC_VF && t->nic != ALLOC_NIC_VIRTIO)
                return -EINVAL;
        if (t->nic == ALLOC_NIC_VF && !t->vf)
                return -EINVAL;
        r = alloc_class_find(a, t->class_name, &cls);
        if (r < 0)
                return r;
        if (alloc_tenant_find(a, t->id) != NO_SLOT)
                return -EEXIST;
        if (a->n_tenants >= a->max_tenants)
                return -ENOSPC;
        r = alloc_tenants_reserve(a);
        if (r < 0)
                return r;

        /* Without a VF, a tenant waits the way its class waits, since the class may have changed kind. */
        k = a->classes[cls].vnic;
        nic = t->nic;
        if (nic != ALLOC_NIC_VF)
                nic = k == VNIC_SRIOV_REQUIRED ? ALLOC_NIC_NONE : ALLOC_NIC_VIRTIO;
        else
                v = alloc_pool_find(a, t->vf);

        if (t->guest && strnlen(t->guest, ALLOC_GUEST_MAX) >= ALLOC_GUEST_MAX)
                return -EINVAL;
        if (t->n_rt_cpus > ALLOC_RT_CPUS_MAX || (t->n_rt_cpus > 0 && !t->rt_cpus))
                return -EINVAL;
        if (t->pin_pf && t->pin_pf[0] && !pci_addr_valid(t->pin_pf))
                return -EINVAL;
        if (a->n_guests >= a->n_guests_allocated &&
            GREEDY_REALLOC(a->guests, a->n_guests_allocated, a->n_guests + 1) < 0)
                return -ENOMEM;   /* Grow now, so that the RT restore below cannot fail. */

        s = alloc_tenant_create(a, t->id, cls, t->numa_node, t->seq);
        /* A saved VF off the pinned PF is kept for now, and the reconcile places the tenant again. */
        strscpy(a->slots[s].pin, sizeof(a->slots[s].pin), t->pin_pf ?: "");
        if (v != NO_VF && a->pool[v].holder == NO_SLOT)
                alloc_vf_take(a, s, v);
        else if (nic == ALLOC_NIC_VF) {
                /*
                 * Its VF is gone or taken. The tenant holds nothing, and the reconcile that follows
                 * places it again.
                 */

                Tenant *n = &a->slots[s];
                n->nic = ALLOC_NIC_VF;
                strscpy(n->gone_vf, sizeof(n->gone_vf), t->vf);
                n->gone_held = v != NO_VF;
        } else
                a->slots[s].nic = nic;
        alloc_tenant_relist(a, s);
        return alloc_rt_restore(a, s, t->guest, t->rt_cpus, t->n_rt_cpus);
}
