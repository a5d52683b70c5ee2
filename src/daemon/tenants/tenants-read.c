/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-read.c — what each tenant holds, as the bus, the planner and the statistics read it */

#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "tenants-internal.h"

static void fill_info(const Tenants *t, const Inventory *inv, const AllocTenant *a, TenantInfo *ret) {
        const Extra *e = tenants_extra_find(t, a->id);
        uint8_t mac[6];

        *ret = (TenantInfo) {
                .vlan = e ? e->vlan : -1,
                .kind = alloc_nic_to_string(a->nic),
                .numa_node = a->numa_node,
                .remote_numa = a->remote_numa,
                .state = a->nic == ALLOC_NIC_NONE ? "waiting" : "allocated",
        };
        strscpy(ret->tenant, sizeof(ret->tenant), a->id);
        strscpy(ret->class_name, sizeof(ret->class_name), a->class_name);
        strscpy(ret->pin_pf, sizeof(ret->pin_pf), a->pin_pf ?: "");
        if (e) {
                memcpy(mac, e->mac, sizeof(mac));
                strscpy(ret->domain, sizeof(ret->domain), e->domain);
                strscpy(ret->domain_uuid, sizeof(ret->domain_uuid), e->domain_uuid);
                strscpy(ret->owner, sizeof(ret->owner), e->owner);
                ret->have_coalesce = e->have_coalesce;
                ret->rx_usecs = e->rx_usecs;
                ret->tx_usecs = e->tx_usecs;
                ret->tx_rates = e->tx_rates;
        } else
                mac_derive(a->id, mac);
        mac_format(mac, ret->mac);
        ret->n_rt_cpus = MIN(a->n_rt_cpus, (unsigned) ALLOC_RT_CPUS_MAX);
        memcpy_safe(ret->rt_cpus, a->rt_cpus, ret->n_rt_cpus * sizeof(uint16_t));
        ret->rt_waiting = a->rt_waiting;
        if (a->vf) {
                strscpy(ret->vf, sizeof(ret->vf), a->vf);
                const Vf *vf = NULL;
                const Pf *pf = inv ? inventory_find_function(inv, a->vf, &vf) : NULL;

                if (pf && vf) {
                        strscpy(ret->pf, sizeof(ret->pf), pf->addr);
                        strscpy(ret->netdev, sizeof(ret->netdev), vf->netdev);
                }
        }
}

int tenants_get(const Tenants *t, const Inventory *inv, const char *tenant, TenantInfo *ret) {
        AllocTenant a;
        int r;

        if (!t->alloc)
                return -ENOENT;
        r = allocator_find_tenant(t->alloc, tenant, &a);
        if (r < 0)
                return r;
        fill_info(t, inv, &a, ret);
        return 0;
}

size_t tenants_count(const Tenants *t) {
        return t->alloc ? allocator_n_tenants(t->alloc) : 0;
}

int tenants_nth(const Tenants *t, const Inventory *inv, size_t i, TenantInfo *ret) {
        AllocTenant a;
        int r;

        if (!t->alloc)
                return -ERANGE;
        r = allocator_tenant(t->alloc, i, &a);
        if (r < 0)
                return r;
        fill_info(t, inv, &a, ret);
        return 0;
}

void tenants_stats(const Tenants *t, AllocStats *ret) {
        if (t->alloc)
                allocator_stats(t->alloc, ret);
        else
                *ret = (AllocStats) {};
}

void tenants_pf_stats(const Tenants *t, const char *pf, AllocPfStats *ret) {
        if (t->alloc)
                allocator_pf_stats(t->alloc, pf, ret);
        else
                *ret = (AllocPfStats) {};
}

const char *tenants_class_name(const Tenants *t, size_t i) {
        return t->alloc ? allocator_class_name(t->alloc, i) : NULL;
}

size_t tenants_rt_nodes(const Tenants *t, AllocRtNode *ret, size_t n) {
        return t->alloc ? allocator_rt_nodes(t->alloc, ret, n) : 0;
}

const char *tenants_domain(const Tenants *t, const char *tenant) {
        const Extra *e = tenants_extra_find(t, tenant);
        return !e ? "" : e->domain_uuid[0] ? e->domain_uuid : e->domain;
}

double tenants_target(const Tenants *t) {
        return t->target;
}

int tenants_held_vfs(const Tenants *t, PciSet *ret) {
        int r;

        pci_set_clear(ret);
        for (size_t i = 0; i < pci_set_size(&t->in_guest); i++) {
                r = pci_set_add(ret, pci_set_get(&t->in_guest, i));
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < t->n_orphans; i++)
                if (t->orphans[i].kind == STATE_KIND_VF && t->orphans[i].vf[0]) {
                        r = pci_set_add(ret, t->orphans[i].vf);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int plan_allocation_cmp(const void *a, const void *b) {
        return strcmp(((const PlanAllocation *) a)->vf, ((const PlanAllocation *) b)->vf);
}

int tenants_plan_allocations(const Tenants *t, PlanAllocation **ret, size_t *ret_n) {
        size_t n = t->alloc ? allocator_n_tenants(t->alloc) : 0, k = 0;
        PlanAllocation *p = calloc(n ?: 1, sizeof(PlanAllocation));

        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const Extra *e;
                AllocTenant a;

                if (allocator_tenant(t->alloc, i, &a) < 0 || a.nic != ALLOC_NIC_VF || !a.vf)
                        continue;
                e = tenants_extra_find(t, a.id);
                /* A booked RT guest's vCPU 0 runs on its first RT CPU, so that is known before libvirt says so. */

                p[k] = (PlanAllocation) { .vlan = e ? e->vlan : -1, .qos = -1,
                                          .vcpu0_cpu = a.n_rt_cpus > 0 ? a.rt_cpus[0] : -1 };
                strscpy(p[k].vf, sizeof(p[k].vf), a.vf);
                strscpy(p[k].tenant, sizeof(p[k].tenant), a.id);
                strscpy(p[k].class_name, sizeof(p[k].class_name), a.class_name);
                if (e) {
                        p[k].have_mac = true;
                        memcpy(p[k].mac, e->mac, sizeof(p[k].mac));
                        p[k].have_coalesce = e->have_coalesce;
                        p[k].rx_usecs = e->rx_usecs;
                        p[k].tx_usecs = e->tx_usecs;
                        p[k].tx_rates = e->tx_rates;
                }
                k++;
        }
        qsort_safe(p, k, sizeof(*p), plan_allocation_cmp);
        *ret = p;
        *ret_n = k;
        return 0;
}
