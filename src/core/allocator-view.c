/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-view.c — reading the allocator: tenants, holders, statistics, and its own consistency check */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator-internal.h"

/* ---- reading ---- */

static void tenant_view(const Allocator *a, uint32_t s, AllocTenant *ret) {
        const Tenant *t = &a->slots[s];

        *ret = (AllocTenant) {
                .id = t->id,
                .class_name = tenant_class(a, t)->name,
                .numa_node = t->node,
                .nic = t->nic,
                .vf = t->nic == ALLOC_NIC_VF ? a->pool[t->vf].vf.addr : NULL,
                .remote_numa = t->nic == ALLOC_NIC_VF && t->remote,
                .seq = t->seq,
                .guest = "",
                .pin_pf = t->pin,
        };
        if (t->guest != NO_GUEST) {
                const RtGuest *g = &a->guests[t->guest];
                /* A tenant without a domain is its own guest, so there is no name to show. */
                ret->guest = rt_guest_domain(g);
                ret->rt_cpus = g->cpus;
                ret->n_rt_cpus = g->n_cpus;
                ret->rt_waiting = g->n_cpus == 0;
        }
}

size_t allocator_n_tenants(const Allocator *a) {
        return a ? a->n_tenants : 0;
}

int allocator_tenant(const Allocator *a, size_t i, AllocTenant *ret) {
        if (!a || !ret)
                return -EINVAL;
        if (i >= a->n_tenants)
                return -ERANGE;
        tenant_view(a, a->by_id[i], ret);
        return 0;
}

int allocator_find_tenant(const Allocator *a, const char *id, AllocTenant *ret) {
        uint32_t s;

        if (!a || !ret || !tenant_id_valid(id))
                return -EINVAL;
        s = alloc_tenant_find(a, id);
        if (s == NO_SLOT)
                return -ENOENT;
        tenant_view(a, s, ret);
        return 0;
}

const char *allocator_vf_holder(const Allocator *a, const char *vf) {
        uint32_t v;

        if (!a || !vf)
                return NULL;
        v = alloc_pool_find(a, vf);
        return v != NO_VF && a->pool[v].holder != NO_SLOT ? a->slots[a->pool[v].holder].id : NULL;
}

void allocator_stats(const Allocator *a, AllocStats *ret) {
        AllocStats st = {};

        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];

                st.n_vfs++;
                if (p->vf.reserved)
                        st.reserved++;
                else if (!p->vf.healthy)
                        st.unhealthy++;
                else if (p->vf.in_guest)
                        st.in_guest++;
                else if (p->holder != NO_SLOT)
                        st.allocated++;
                else
                        st.free++;
                if (p->holder != NO_SLOT && !vf_usable(&p->vf))
                        st.held_unusable++;
        }
        st.usable = st.allocated + st.free;
        for (size_t i = 0; i < a->n_tenants; i++) {
                const Tenant *t = &a->slots[a->by_id[i]];

                st.tenants++;
                switch (t->nic) {
                case ALLOC_NIC_VF:
                        st.on_vf++;
                        st.remote += t->remote;
                        break;
                case ALLOC_NIC_VIRTIO:
                        st.on_virtio++;
                        st.preferred_on_virtio += tenant_class(a, t)->vnic == VNIC_SRIOV_PREFERRED;
                        break;
                default:
                        st.waiting++;
                }
        }
        st.utilization = st.usable > 0 ? (double) st.allocated / st.usable : 0;
        st.rt_cpus = (unsigned) a->n_rt;
        for (size_t i = 0; i < a->n_rt; i++)
                st.rt_cpus_booked += a->rt[i].users > 0;
        for (size_t g = 0; g < a->n_guests; g++)
                if (a->guests[g].n_tenants > 0) {
                        st.rt_guests += a->guests[g].n_cpus > 0;
                        st.rt_guests_waiting += a->guests[g].n_cpus == 0;
                }
        *ret = st;
}

void allocator_pf_stats(const Allocator *a, const char *pf, AllocPfStats *ret) {
        unsigned room;
        int node = -1;

        *ret = (AllocPfStats) { .n_classes = a->n_classes };
        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];

                if (!streq(p->vf.pf, pf) || !vf_usable(&p->vf))
                        continue;
                node = p->vf.numa_node;
                ret->usable++;
                if (p->holder == NO_SLOT) {
                        ret->free++;
                        continue;
                }
                ret->allocated++;
                ret->class_allocated[a->slots[p->holder].cls]++;
                ret->preemptible += tenant_downgradable(a, &a->slots[p->holder]);
        }
        room = a->n_tenants < a->max_tenants ? (unsigned) MIN(a->max_tenants - a->n_tenants, (size_t) UINT_MAX) : 0;
        for (size_t i = 0; i < a->n_classes; i++) {
                const AllocClass *c = &a->classes[i];
                unsigned n = 0;

                if (c->vnic == VNIC_SRIOV_REQUIRED)
                        n = ret->free + ret->preemptible;
                else if (c->vnic == VNIC_SRIOV_PREFERRED)
                        n = MIN(ret->free, node_spare(a, bucket(node)));
                /*
                 * A class that refuses without its RT CPUs books them on the node of its VF, whatever
                 * the guest's node and remote NUMA allow. So the PF's node bounds it, and each new
                 * tenant is its own new guest there.
                 */
                ret->class_available[i] = alloc_rt_room(a, c, node, MIN(n, room));
        }
}

size_t allocator_n_classes(const Allocator *a) {
        return a->n_classes;
}

const char *allocator_class_name(const Allocator *a, size_t i) {
        return i < a->n_classes ? a->classes[i].name : NULL;
}

size_t allocator_max_tenants(const Allocator *a) {
        return a->max_tenants;
}

size_t allocator_rt_nodes(const Allocator *a, AllocRtNode *ret, size_t n) {
        AllocRtNode rows[N_BUCKETS] = {};
        size_t k = 0;

        for (size_t i = 0; i < a->n_rt; i++) {
                const RtCpu *c = &a->rt[i];
                AllocRtNode *r = &rows[bucket(c->node)];

                r->cpus++;
                r->booked += c->users > 0;
                r->shared += c->users > 1;
                if (c->users > 0 && c->cap > c->users)
                        r->room += c->cap - c->users;
        }
        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                size_t i;

                if (x->n_tenants == 0)
                        continue;
                if (x->n_cpus == 0) {
                        rows[bucket(x->node)].waiting++;
                        continue;
                }
                /* A guest's CPUs are all on one node, so the first CPU's node is the guest's. */
                i = alloc_rt_cpu_index(a, x->cpus[0]);
                if (i != SIZE_MAX)
                        rows[bucket(a->rt[i].node)].guests++;
        }
        /* Node 0 comes first and the unknown node, bucket 0, comes last, as the allocator breaks ties. */
        for (unsigned j = 1; j <= N_BUCKETS; j++) {
                unsigned b = j % N_BUCKETS;
                AllocRtNode *r = &rows[b];

                if (r->cpus == 0 && r->guests == 0 && r->waiting == 0)
                        continue;
                r->numa_node = (int) b - 1;
                if (k < n)
                        ret[k] = *r;
                k++;
        }
        return k;
}

int allocator_verify(const Allocator *a) {
        unsigned usable = 0, nfree = 0, pref = 0, free_by[N_BUCKETS] = {}, pref_by[N_BUCKETS] = {};
        size_t used = 0, waiting = 0, waiting_required = 0;

        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                unsigned b = bucket(p->vf.numa_node);

                if (v > 0 && strcmp(a->pool[v - 1].vf.addr, p->vf.addr) >= 0)
                        return -EUCLEAN;
                if (p->holder != NO_SLOT) {
                        const Tenant *t;
                        if (p->holder >= a->n_slots)
                                return -EUCLEAN;
                        t = &a->slots[p->holder];
                        if (!t->used || t->nic != ALLOC_NIC_VF || t->vf != v)
                                return -EUCLEAN;
                        if (t->remote != !vf_local(p, t->node))
                                return -EUCLEAN;
                }
                if (!vf_usable(&p->vf))
                        continue;
                usable++;
                if (p->holder == NO_SLOT) {
                        nfree++;
                        free_by[b]++;
                } else if (tenant_downgradable(a, &a->slots[p->holder])) {
                        pref++;
                        pref_by[b]++;
                }
        }
        if (usable != a->n_usable || nfree != a->n_free || pref != a->pref_on_vf ||
            memcmp(free_by, a->free_by_node, sizeof(free_by)) != 0 ||
            memcmp(pref_by, a->pref_on_vf_by_node, sizeof(pref_by)) != 0)
                return -EUCLEAN;

        for (size_t s = 0; s < a->n_slots; s++) {
                const Tenant *t = &a->slots[s];
                VnicKind k;

                if (!t->used)
                        continue;
                used++;
                k = tenant_class(a, t)->vnic;
                if (t->nic == ALLOC_NIC_VF && (t->vf >= a->n_pool || a->pool[t->vf].holder != s))
                        return -EUCLEAN;
                if (t->nic != ALLOC_NIC_VF && t->vf != NO_VF)
                        return -EUCLEAN;
                /*
                 * These must never happen: a virtio-class tenant on a VF, a sriov-required tenant
                 * on virtio-net, or a sriov-preferred or virtio tenant without a NIC.
                 */

                if ((k == VNIC_VIRTIO && t->nic != ALLOC_NIC_VIRTIO) ||
                    (k == VNIC_SRIOV_REQUIRED && t->nic == ALLOC_NIC_VIRTIO) ||
                    (k == VNIC_SRIOV_PREFERRED && t->nic == ALLOC_NIC_NONE))
                        return -EUCLEAN;
                if (tenant_waits(a, t)) {
                        waiting++;
                        waiting_required += k == VNIC_SRIOV_REQUIRED;
                }
                if (t->gone_vf[0] || t->gone_held || t->recreated)
                        return -EUCLEAN;
                if (t->nic == ALLOC_NIC_VF && !vf_on_pin(&a->pool[t->vf], t->pin))
                        return -EUCLEAN;
        }
        if (used != a->n_tenants || a->n_tenants > a->max_tenants || waiting != a->n_waiting ||
            waiting_required != a->n_waiting_required)
                return -EUCLEAN;
        for (size_t i = 0; i < a->n_tenants; i++) {
                if (a->by_id[i] >= a->n_slots || !a->slots[a->by_id[i]].used)
                        return -EUCLEAN;
                if (i > 0 && strcmp(a->slots[a->by_id[i - 1]].id, a->slots[a->by_id[i]].id) >= 0)
                        return -EUCLEAN;
        }
        for (size_t i = 0; i < a->n_waiting; i++) {
                if (!tenant_waits(a, &a->slots[a->waiting[i]]))
                        return -EUCLEAN;
                if (i > 0 && alloc_service_cmp(a, a->waiting[i - 1], a->waiting[i]) >= 0)
                        return -EUCLEAN;
        }
        return alloc_rt_verify(a);
}

void allocator_reserve_seq(Allocator *a, uint64_t seq) {
        if (seq >= a->next_seq)
                a->next_seq = seq + 1;
}

unsigned allocator_class_rt_required(const Allocator *a, const char *class_name) {
        uint32_t cls;

        if (!a || !class_name || alloc_class_find(a, class_name, &cls) < 0 || a->classes[cls].rt_fallback)
                return 0;
        return class_rt_need(&a->classes[cls]);
}
