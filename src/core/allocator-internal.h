/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-internal.h — the allocator's state and what its parts share; allocator.c states the policy */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sriovd/core/allocator.h"

#define NO_VF UINT32_MAX
#define NO_SLOT UINT32_MAX
#define N_BUCKETS (ALLOC_NODES_MAX + 1)   /* indexed by node + 1, so [0] is the unknown node */
#define NO_GUEST UINT32_MAX
/* When a tenant has no domain, its own guest's key is RT_OWN_GUEST_PREFIX followed by its id. */
#define RT_OWN_GUEST_PREFIX "tenant "

typedef struct Tenant {
        char id[TENANT_ID_MAX];
        uint32_t cls;             /* index into Allocator.classes */
        int node;                 /* the guest's node, or -1 for no preference */
        AllocNic nic;
        uint32_t vf;              /* pool index; NO_VF unless nic == ALLOC_NIC_VF */
        bool remote;
        bool used;
        uint64_t seq;
        /*
         * allocator_set_pool() and allocator_restore_tenant() set these for the reconcile that
         * follows. They mean that the VF the tenant held is gone, or, after a restore, that
         * another tenant holds it.
         */
        char gone_vf[PCI_ADDR_MAX];
        bool gone_held;
        bool recreated;
        uint32_t guest;           /* index into Allocator.guests, which holds its RT CPUs; NO_GUEST for none */
        char pin[PCI_ADDR_MAX];   /* the PF that its VF must be on, or "" for any */
} Tenant;

/* One RT CPU of the pool, and how it is booked. */
typedef struct RtCpu {
        unsigned cpu;
        int node;
        unsigned users;           /* guests booked on it */
        unsigned cap;             /* the least rt_share among them; users never exceeds it */
} RtCpu;

/*
 * A guest that books RT CPUs, shared by its tenants of RT classes. A guest of a class that
 * falls back may hold no CPUs while want is above 0. It is served when a CPU frees up, in
 * arrival order.
 */
typedef struct RtGuest {
        char name[ALLOC_GUEST_MAX];
        uint32_t n_tenants;       /* 0 for a free entry */
        uint16_t cpus[ALLOC_RT_CPUS_MAX];   /* CPU numbers in booking order, vCPU 0's first */
        uint8_t n_cpus;
        uint8_t want;             /* the CPUs it needs */
        unsigned share;           /* its class's rt_share */
        int node;                 /* where its CPUs must be, or -1 for any node */
        uint64_t seq;             /* its first tenant's arrival */
        bool fallback;            /* placed without CPUs when none is free */
        bool rebook;              /* restored with CPUs it cannot have, so the reconcile books it again */
        char lost[96];            /* why it is booked again, for the decision */
} RtGuest;

typedef struct PoolVf {
        AllocVf vf;
        uint32_t holder;          /* tenant slot, or NO_SLOT when free */
} PoolVf;

struct Allocator {
        AllocClass *classes;      /* sorted by name */
        size_t n_classes;
        unsigned headroom;
        double target;
        size_t max_tenants;

        PoolVf *pool;             /* sorted by address */
        size_t n_pool;
        unsigned n_usable, n_free;
        unsigned usable_by_node[N_BUCKETS], free_by_node[N_BUCKETS];
        /* The sriov-preferred tenants on a usable VF, who can be downgraded, in total and per node. */
        unsigned pref_on_vf, pref_on_vf_by_node[N_BUCKETS];

        Tenant *slots;
        size_t n_slots, n_slots_allocated;
        uint32_t *free_slots;
        size_t n_free_slots, n_free_slots_allocated;
        uint32_t *by_id;          /* slots, sorted by id */
        size_t n_tenants, n_by_id_allocated;
        uint32_t *waiting;        /* slots waiting for a VF, in service order */
        size_t n_waiting, n_waiting_allocated, n_waiting_required;

        uint64_t next_seq;

        RtCpu *rt;                /* the RT CPU pool, sorted by CPU */
        size_t n_rt;
        RtGuest *guests;
        size_t n_guests, n_guests_allocated;
};

/* Where a tenant goes: a VF, which is freed from victim unless victim is NO_SLOT. */
typedef struct Pick {
        uint32_t vf;
        uint32_t victim;
        bool remote;
} Pick;

/* ---- small accessors ---- */

static inline bool vf_usable(const AllocVf *v) {
        return v->healthy && !v->reserved && !v->in_guest;
}

static inline unsigned bucket(int node) {
        return (unsigned) (node + 1);
}

static inline const AllocClass *tenant_class(const Allocator *a, const Tenant *t) {
        return &a->classes[t->cls];
}

static inline bool vf_local(const PoolVf *p, int node) {
        return node < 0 || p->vf.numa_node == node;
}

static inline bool vf_acceptable(const PoolVf *p, int node, const AllocClass *c) {
        return vf_usable(&p->vf) && (vf_local(p, node) || c->allow_remote_numa);
}

/* Whether the VF is on the PF that pin names. An empty or NULL pin takes any PF. */
static inline bool vf_on_pin(const PoolVf *p, const char *pin) {
        return !pin || !pin[0] || streq(p->vf.pf, pin);
}

/*
 * The headroom kept on one node, bucket b: min(headroom, usable_b - ceil(target * usable_b)).
 * It is kept per node, because a sriov-required arrival wants a VF on its own node, and free
 * VFs elsewhere are no headroom for it. The target caps it per node too, so that every node,
 * and with them the host, can reach the target. allocator.c's opening comment explains more.
 */
static inline unsigned node_headroom(const Allocator *a, unsigned b) {
        unsigned usable = a->usable_by_node[b];
        double want = a->target * usable;
        unsigned need = (unsigned) want;

        if (need < want - 1e-9)
                need++;
        return MIN(a->headroom, usable > need ? usable - need : 0);
}

/* The free VFs of bucket b that a sriov-preferred tenant may take: those above the node's headroom. */
static inline unsigned node_spare(const Allocator *a, unsigned b) {
        unsigned h = node_headroom(a, b);
        return a->free_by_node[b] > h ? a->free_by_node[b] - h : 0;
}

static inline bool tenant_waits(const Allocator *a, const Tenant *t) {
        VnicKind k = tenant_class(a, t)->vnic;
        return (k == VNIC_SRIOV_REQUIRED && t->nic == ALLOC_NIC_NONE) ||
               (k == VNIC_SRIOV_PREFERRED && t->nic == ALLOC_NIC_VIRTIO);
}

static inline bool tenant_downgradable(const Allocator *a, const Tenant *t) {
        /* t->vf is NO_VF while a tenant whose VF vanished waits for the reconcile. */
        return tenant_class(a, t)->vnic == VNIC_SRIOV_PREFERRED && t->nic == ALLOC_NIC_VF && t->vf != NO_VF &&
               vf_usable(&a->pool[t->vf].vf);
}

static inline const char *vf_addr(const Allocator *a, const Tenant *t) {
        return t->nic == ALLOC_NIC_VF && t->vf != NO_VF ? a->pool[t->vf].vf.addr : "";
}

/*
 * allocator-index.c: the classes, the pool and the tenant table, and the indexes kept beside
 * the tenants: by id, by waiting order, and of downgrade candidates.
 */
int alloc_class_cmp(const void *x, const void *y);
int alloc_class_find(const Allocator *a, const char *name, uint32_t *ret);
int alloc_pool_addr_cmp(const void *key, const void *elem);
uint32_t alloc_pool_find(const Allocator *a, const char *addr);
uint32_t alloc_tenant_find(const Allocator *a, const char *id);
int alloc_service_cmp(const Allocator *a, uint32_t x, uint32_t y);
void alloc_tenant_unlist(Allocator *a, uint32_t s);
void alloc_tenant_relist(Allocator *a, uint32_t s);
void alloc_vf_take(Allocator *a, uint32_t s, uint32_t v);
void alloc_vf_drop(Allocator *a, uint32_t s);
int alloc_tenants_reserve(Allocator *a);
uint32_t alloc_tenant_create(Allocator *a, const char *id, uint32_t cls, int node, uint64_t seq);
void alloc_tenant_destroy(Allocator *a, uint32_t s);

/* allocator-pick.c: decisions, and picking a VF for a tenant, free or taken from a downgrade victim. */
int alloc_decisions_reserve(AllocDecisions *d, size_t n);
_printf_(6, 7) int alloc_decide(AllocDecisions *d, AllocDecisionKind kind, const Tenant *t, const char *old_vf,
                                const char *new_vf, const char *fmt, ...);
void alloc_where(const Allocator *a, const Tenant *t, char *buf, size_t size);
/* pin is the PF the tenant is pinned to, or "" for any PF. */
bool alloc_pick_required(const Allocator *a, int g, const AllocClass *c, const char *pin, uint32_t exclude, Pick *ret);
bool alloc_pick_preferred(const Allocator *a, int g, const AllocClass *c, const char *pin, Pick *ret);
/* The free VFs above the headroom, over every node. */
unsigned alloc_spare_total(const Allocator *a);
void alloc_explain_required(const Allocator *a, int g, const AllocClass *c, const char *pin, char *buf, size_t size);
void alloc_explain_virtio(const Allocator *a, int g, const AllocClass *c, const char *pin, char *buf, size_t size);
int alloc_evict(Allocator *a, uint32_t victim, uint32_t s, AllocDecisions *d);
int alloc_take_pick(Allocator *a, uint32_t s, const Pick *p, AllocDecisions *d);
int alloc_fill(Allocator *a, AllocDecisions *d);
size_t alloc_decisions_bound(const Allocator *a);

/* allocator-rt.c: RT CPUs booked per guest. */
/* The key of a tenant's guest: its domain, or else the key of the tenant's own guest. */
void alloc_rt_guest_key(const char *guest, const char *tenant, char *buf, size_t size);
/* The guest's domain, or "" for a tenant's own guest. */
static inline const char *rt_guest_domain(const RtGuest *g) {
        return strncmp(g->name, RT_OWN_GUEST_PREFIX, strlen(RT_OWN_GUEST_PREFIX)) == 0 ? "" : g->name;
}
static inline unsigned class_rt_need(const AllocClass *c) {
        return MIN(c->rt_cpus, (unsigned) ALLOC_RT_CPUS_MAX);
}
/*
 * Whether a tenant of class c for guest on node can get the RT CPUs that its class needs, or
 * can fall back. When it returns false, why holds the reason for a REFUSED decision.
 */
bool alloc_rt_feasible(const Allocator *a, const AllocClass *c, const char *guest, const char *tenant, int node,
                       char *why, size_t size);
/*
 * How many new guests of class c, each a tenant's own, alloc_rt_join() would book one after
 * another on node, counted up to cap. A node below 0 sends each to the node with the most
 * bookable CPUs, as for a VF of unknown node. A class that books none or falls back gets cap.
 */
unsigned alloc_rt_room(const Allocator *a, const AllocClass *c, int node, unsigned cap);
/*
 * The placed tenant s joins guest. The guest books its CPUs now, or waits for them if its class
 * falls back. The tenant's last decision in d gets the CPUs.
 */
int alloc_rt_join(Allocator *a, uint32_t s, const char *guest, AllocDecisions *d);
/*
 * Tenant s leaves its guest. The guest's CPUs are freed with its last tenant, and the waiting
 * guests are served with RT_CPUS decisions. With d NULL, they are not served yet, and the
 * caller serves them.
 */
int alloc_rt_leave(Allocator *a, uint32_t s, AllocDecisions *d);
/*
 * Tenant s, now of a new class, stays in its booked guest if the booking can serve the class,
 * grown if need be. Returns 0 then, or 1 when it cannot, with nothing changed.
 */
int alloc_rt_refit(Allocator *a, uint32_t s, AllocDecisions *d);
int alloc_rt_serve(Allocator *a, AllocDecisions *d);
/* Whether tenant s's guest holds all the RT CPUs that its class needs. *ret_node says where they should be. */
bool alloc_rt_booked(const Allocator *a, uint32_t s, int *ret_node);
/* At a restore, join the guest with its saved CPUs, where they still hold. */
int alloc_rt_restore(Allocator *a, uint32_t s, const char *guest, const uint16_t *cpus, unsigned n);
/* The node that the tenant's RT CPUs belong on: its VF's node, or else its guest's. */

int alloc_rt_node(const Allocator *a, const Tenant *t);
int alloc_rt_verify(const Allocator *a);
/* The pool index of RT CPU cpu, SIZE_MAX when it is not in the pool. */
size_t alloc_rt_cpu_index(const Allocator *a, unsigned cpu);
