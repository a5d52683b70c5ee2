/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-index.c — classes, the pool and the tenant table, and the indexes kept beside each tenant */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator-internal.h"

int alloc_class_cmp(const void *x, const void *y) {
        return strcmp(((const AllocClass *) x)->name, ((const AllocClass *) y)->name);
}

static int class_name_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const AllocClass *) elem)->name);
}

int alloc_class_find(const Allocator *a, const char *name, uint32_t *ret) {
        const AllocClass *c;

        if (!name)
                return -ENOENT;
        c = bsearch_safe(name, a->classes, a->n_classes, sizeof(AllocClass), class_name_cmp);
        if (!c)
                return -ENOENT;
        *ret = (uint32_t) (c - a->classes);
        return 0;
}

int alloc_pool_addr_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const PoolVf *) elem)->vf.addr);
}

uint32_t alloc_pool_find(const Allocator *a, const char *addr) {
        const PoolVf *p = bsearch_safe(addr, a->pool, a->n_pool, sizeof(PoolVf), alloc_pool_addr_cmp);
        return p ? (uint32_t) (p - a->pool) : NO_VF;
}

/* The index in by_id where id is, or would go. */
static size_t by_id_lower_bound(const Allocator *a, const char *id) {
        size_t lo = 0, hi = a->n_tenants;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(a->slots[a->by_id[mid]].id, id) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

uint32_t alloc_tenant_find(const Allocator *a, const char *id) {
        size_t i = by_id_lower_bound(a, id);
        return i < a->n_tenants && streq(a->slots[a->by_id[i]].id, id) ? a->by_id[i] : NO_SLOT;
}

/*
 * The service order: sriov-required first, then higher rank, then earlier arrival, then id. The
 * id breaks ties because a restored state may repeat a sequence number. VnicKind's order is the
 * order of the kinds.
 */
int alloc_service_cmp(const Allocator *a, uint32_t x, uint32_t y) {
        const Tenant *s = &a->slots[x], *t = &a->slots[y];
        const AllocClass *c = tenant_class(a, s), *d = tenant_class(a, t);

        if (c->vnic != d->vnic)
                return c->vnic < d->vnic ? -1 : 1;
        if (c->rank != d->rank)
                return c->rank > d->rank ? -1 : 1;
        if (s->seq != t->seq)
                return s->seq < t->seq ? -1 : 1;
        return strcmp(s->id, t->id);
}

static size_t waiting_lower_bound(const Allocator *a, uint32_t s) {
        size_t lo = 0, hi = a->n_waiting;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (alloc_service_cmp(a, a->waiting[mid], s) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/*
 * Every change to a tenant's class, node or NIC is bracketed by alloc_tenant_unlist() and
 * alloc_tenant_relist(), which take it out of the indexes and put it back. The waiting list
 * holds one entry per tenant at most, and that room is reserved when the tenant is created.
 */
void alloc_tenant_unlist(Allocator *a, uint32_t s) {
        const Tenant *t = &a->slots[s];

        if (tenant_waits(a, t)) {
                size_t i = waiting_lower_bound(a, s);
                memmove(a->waiting + i, a->waiting + i + 1, (a->n_waiting - i - 1) * sizeof(uint32_t));
                a->n_waiting--;
                if (tenant_class(a, t)->vnic == VNIC_SRIOV_REQUIRED)
                        a->n_waiting_required--;
        }
        if (tenant_downgradable(a, t)) {
                a->pref_on_vf--;
                a->pref_on_vf_by_node[bucket(a->pool[t->vf].vf.numa_node)]--;
        }
}

void alloc_tenant_relist(Allocator *a, uint32_t s) {
        const Tenant *t = &a->slots[s];

        if (tenant_waits(a, t)) {
                size_t i = waiting_lower_bound(a, s);
                memmove(a->waiting + i + 1, a->waiting + i, (a->n_waiting - i) * sizeof(uint32_t));
                a->waiting[i] = s;
                a->n_waiting++;
                if (tenant_class(a, t)->vnic == VNIC_SRIOV_REQUIRED)
                        a->n_waiting_required++;
        }
        if (tenant_downgradable(a, t)) {
                a->pref_on_vf++;
                a->pref_on_vf_by_node[bucket(a->pool[t->vf].vf.numa_node)]++;
        }
}

/* Call this only between unlist and relist. */
void alloc_vf_take(Allocator *a, uint32_t s, uint32_t v) {
        PoolVf *p = &a->pool[v];
        Tenant *t = &a->slots[s];

        p->holder = s;
        if (vf_usable(&p->vf)) {
                a->n_free--;
                a->free_by_node[bucket(p->vf.numa_node)]--;
        }
        t->nic = ALLOC_NIC_VF;
        t->vf = v;
        t->remote = !vf_local(p, t->node);
}

void alloc_vf_drop(Allocator *a, uint32_t s) {
        Tenant *t = &a->slots[s];
        PoolVf *p = &a->pool[t->vf];

        p->holder = NO_SLOT;
        if (vf_usable(&p->vf)) {
                a->n_free++;
                a->free_by_node[bucket(p->vf.numa_node)]++;
        }
        t->vf = NO_VF;
        t->remote = false;
}

/* Room for one more tenant in every array, so that creating it cannot fail halfway. */
int alloc_tenants_reserve(Allocator *a) {
        size_t need = a->n_tenants + 1;

        if (GREEDY_REALLOC(a->slots, a->n_slots_allocated, a->n_slots + 1) < 0 ||
            GREEDY_REALLOC(a->free_slots, a->n_free_slots_allocated, a->n_slots + 1) < 0 ||
            GREEDY_REALLOC(a->by_id, a->n_by_id_allocated, need) < 0 ||
            GREEDY_REALLOC(a->waiting, a->n_waiting_allocated, need) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Create a tenant on no NIC yet. It is in by_id but in no other index. alloc_tenants_reserve()
 * reserved the space.
 */
uint32_t alloc_tenant_create(Allocator *a, const char *id, uint32_t cls, int node, uint64_t seq) {
        uint32_t s = a->n_free_slots > 0 ? a->free_slots[--a->n_free_slots] : (uint32_t) a->n_slots++;
        size_t i = by_id_lower_bound(a, id);

        a->slots[s] = (Tenant) { .cls = cls, .node = node, .nic = ALLOC_NIC_NONE, .vf = NO_VF, .used = true,
                                 .seq = seq, .guest = NO_GUEST };
        strscpy(a->slots[s].id, sizeof(a->slots[s].id), id);
        memmove(a->by_id + i + 1, a->by_id + i, (a->n_tenants - i) * sizeof(uint32_t));
        a->by_id[i] = s;
        a->n_tenants++;
        if (seq >= a->next_seq)
                a->next_seq = seq + 1;
        return s;
}

/* Take the tenant out of by_id and free its slot. It must already be unlisted and off its VF. */

void alloc_tenant_destroy(Allocator *a, uint32_t s) {
        size_t i = by_id_lower_bound(a, a->slots[s].id);

        memmove(a->by_id + i, a->by_id + i + 1, (a->n_tenants - i - 1) * sizeof(uint32_t));
        a->n_tenants--;
        a->slots[s].used = false;
        a->free_slots[a->n_free_slots++] = s;
}
