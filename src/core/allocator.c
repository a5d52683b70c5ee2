/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator.c — VF or virtio-net per tenant: NUMA-local first, headroom, downgrade, upgrade, reconcile */

/*
 * The objective, in this order: every feasible sriov-required tenant holds a VF; VF
 * utilization stays at or above target whenever demand allows; as few moves as possible.
 *
 * Placing a tenant of class C whose guest is on node g (g < 0: no preference):
 *  - virtio: virtio-net, always.
 *  - sriov-required: a free VF on g; else the VF of a sriov-preferred tenant on g, who is
 *    downgraded to virtio-net; then, only if C allows remote NUMA, the same two steps on the
 *    other nodes (the decision says remote). Nothing: refused, with the reason. Headroom does
 *    not apply: it exists for these arrivals. The kind of class dominates rank: a required
 *    tenant of any rank displaces a preferred one of any rank (objective 1).
 *  - sriov-preferred: a free VF on g, then elsewhere if C allows remote NUMA, but only while
 *    more VFs are free than the effective headroom; else virtio-net, and the tenant waits.
 * The effective headroom is min(headroom, usable - ceil(target * usable)): held-back VFs
 * never keep utilization below target.
 *
 * Tie-breaks, never pointer or slot order: a free VF is the lowest address on the node;
 * with no preference (or among remote nodes) the node with the most free VFs, then the
 * lowest node number, unknown node last. The downgrade victim is the lowest rank, then the
 * latest arrival (its VF has served it the shortest). Waiting tenants are served
 * sriov-required first, then higher rank, then earlier arrival, then id; that is also the
 * order in which a pool change re-places tenants. The arrival sequence is per allocator,
 * kept across restarts through allocator_restore_tenant().
 *
 * Whenever VFs become free (release, re-class, pool change) the waiting tenants are served
 * in that order: a sriov-required tenant without a NIC first (downgrading if it must), then
 * sriov-preferred tenants on virtio-net are upgraded while more VFs are free than the
 * effective headroom. A sriov-required tenant is never downgraded; it loses its VF only
 * when the VF itself goes away, and then waits without a NIC ahead of everyone else.
 *
 * Re-class (a request for an existing tenant with another class or node): the tenant keeps
 * its VF when the new class and node still accept it (no decision). Otherwise it is placed as
 * if it arrived, keeping its arrival sequence; its old VF is released only once the new
 * placement is certain. A re-class to sriov-required that cannot be met is refused and
 * changes nothing, so the tenant keeps what it has.
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/allocator.h"
#include "sriovd/util.h"

#define NO_VF UINT32_MAX
#define NO_SLOT UINT32_MAX
#define N_BUCKETS (ALLOC_NODES_MAX + 1)   /* [node + 1]; [0] = unknown node */

typedef struct Tenant {
        char id[TENANT_ID_MAX];
        uint32_t cls;             /* index into Allocator.classes */
        int node;                 /* the guest's node, -1 = no preference */
        AllocNic nic;
        uint32_t vf;              /* pool index; NO_VF unless nic == ALLOC_NIC_VF */
        bool remote;
        bool used;
        uint64_t seq;
        /* Set by allocator_set_pool() and allocator_restore_tenant() for the reconcile that
         * follows: the VF it held is gone (or, restored, held by another tenant). */
        char gone_vf[PCI_ADDR_MAX];
        bool gone_held;
        bool recreated;
} Tenant;

typedef struct PoolVf {
        AllocVf vf;
        uint32_t holder;          /* tenant slot, NO_SLOT = free */
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
        /* sriov-preferred tenants on a usable VF: who can be downgraded, per node. */
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
};

/* Where a tenant goes: a VF, freed from victim when that is not NO_SLOT. */
typedef struct Pick {
        uint32_t vf;
        uint32_t victim;
        bool remote;
} Pick;

static const char *const decision_kind_table[_ALLOC_DECISION_KIND_MAX] = {
        [ALLOC_DECISION_VF] = "vf",
        [ALLOC_DECISION_VIRTIO] = "virtio",
        [ALLOC_DECISION_DOWNGRADE] = "downgrade",
        [ALLOC_DECISION_UPGRADE] = "upgrade",
        [ALLOC_DECISION_REFUSED] = "refused",
        [ALLOC_DECISION_RELEASED] = "released",
        [ALLOC_DECISION_REPLACED] = "re-placed",
};

static const char *const nic_table[_ALLOC_NIC_MAX] = {
        [ALLOC_NIC_NONE] = "none",
        [ALLOC_NIC_VF] = "vf",
        [ALLOC_NIC_VIRTIO] = "virtio",
};

const char *alloc_decision_kind_to_string(AllocDecisionKind k) {
        return k >= 0 && k < _ALLOC_DECISION_KIND_MAX ? decision_kind_table[k] : NULL;
}

const char *alloc_nic_to_string(AllocNic n) {
        return n >= 0 && n < _ALLOC_NIC_MAX ? nic_table[n] : NULL;
}

bool tenant_id_valid(const char *id) {
        size_t n;

        if (!id)
                return false;
        n = strnlen(id, TENANT_ID_MAX);
        if (n == 0 || n >= TENANT_ID_MAX || streq(id, ".") || streq(id, ".."))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = id[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-'))
                        return false;
        }
        return true;
}

void alloc_decisions_clear(AllocDecisions *d) {
        d->n_decisions = 0;
}

void alloc_decisions_done(AllocDecisions *d) {
        free(d->decisions);
        *d = (AllocDecisions) {};
}

/* ---- small accessors ---- */

static bool vf_usable(const AllocVf *v) {
        return v->healthy && !v->reserved;
}

static unsigned bucket(int node) {
        return (unsigned) (node + 1);
}

static const AllocClass *tenant_class(const Allocator *a, const Tenant *t) {
        return &a->classes[t->cls];
}

static bool vf_local(const PoolVf *p, int node) {
        return node < 0 || p->vf.numa_node == node;
}

static bool vf_acceptable(const PoolVf *p, int node, const AllocClass *c) {
        return vf_usable(&p->vf) && (vf_local(p, node) || c->allow_remote_numa);
}

static unsigned effective_headroom(const Allocator *a) {
        double want = a->target * a->n_usable;
        unsigned need = (unsigned) want;

        if (need < want - 1e-9)
                need++;
        return MIN(a->headroom, a->n_usable > need ? a->n_usable - need : 0);
}

static int class_cmp(const void *x, const void *y) {
        return strcmp(((const AllocClass *) x)->name, ((const AllocClass *) y)->name);
}

static int class_name_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const AllocClass *) elem)->name);
}

static int class_find(const Allocator *a, const char *name, uint32_t *ret) {
        const AllocClass *c;

        if (!name)
                return -ENOENT;
        c = bsearch_safe(name, a->classes, a->n_classes, sizeof(AllocClass), class_name_cmp);
        if (!c)
                return -ENOENT;
        *ret = (uint32_t) (c - a->classes);
        return 0;
}

static int pool_addr_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const PoolVf *) elem)->vf.addr);
}

static uint32_t pool_find(const Allocator *a, const char *addr) {
        const PoolVf *p = bsearch_safe(addr, a->pool, a->n_pool, sizeof(PoolVf), pool_addr_cmp);
        return p ? (uint32_t) (p - a->pool) : NO_VF;
}

/* Index in by_id where id is or would go. */
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

static uint32_t tenant_find(const Allocator *a, const char *id) {
        size_t i = by_id_lower_bound(a, id);
        return i < a->n_tenants && streq(a->slots[a->by_id[i]].id, id) ? a->by_id[i] : NO_SLOT;
}

/* Service order: sriov-required first, higher rank, earlier arrival, then id (a restored
 * state may repeat a sequence number). VnicKind's order is the kind order. */
static int service_cmp(const Allocator *a, uint32_t x, uint32_t y) {
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

/* ---- the indexes kept beside each tenant: waiting order, downgrade candidates ---- */

static bool tenant_waits(const Allocator *a, const Tenant *t) {
        VnicKind k = tenant_class(a, t)->vnic;
        return (k == VNIC_SRIOV_REQUIRED && t->nic == ALLOC_NIC_NONE) ||
               (k == VNIC_SRIOV_PREFERRED && t->nic == ALLOC_NIC_VIRTIO);
}

static bool tenant_downgradable(const Allocator *a, const Tenant *t) {
        /* t->vf is NO_VF while a tenant whose VF vanished waits for reconcile(). */
        return tenant_class(a, t)->vnic == VNIC_SRIOV_PREFERRED && t->nic == ALLOC_NIC_VF && t->vf != NO_VF &&
               vf_usable(&a->pool[t->vf].vf);
}

static size_t waiting_lower_bound(const Allocator *a, uint32_t s) {
        size_t lo = 0, hi = a->n_waiting;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (service_cmp(a, a->waiting[mid], s) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/*
 * Every change to a tenant's class, node or NIC is bracketed by tenant_unlist() and
 * tenant_relist(), which take it out of and put it back into the indexes. Capacity for the
 * waiting list (one entry per tenant at most) is reserved when the tenant is created.
 */
static void tenant_unlist(Allocator *a, uint32_t s) {
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

static void tenant_relist(Allocator *a, uint32_t s) {
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

/* Between unlist and relist only. */
static void vf_take(Allocator *a, uint32_t s, uint32_t v) {
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

static void vf_drop(Allocator *a, uint32_t s) {
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

/* ---- decisions ---- */

/* Room for n more decisions, reserved before anything changes so that no move goes unreported. */
static int decisions_reserve(AllocDecisions *d, size_t n) {
        if (n > SIZE_MAX / sizeof(AllocDecision) - d->n_decisions)
                return -ENOMEM;
        return GREEDY_REALLOC(d->decisions, d->n_allocated, d->n_decisions + n);
}

_printf_(6, 7) static int decide(AllocDecisions *d, AllocDecisionKind kind, const Tenant *t, const char *old_vf,
                                 const char *new_vf, const char *fmt, ...) {
        AllocDecision *x;
        va_list ap;
        int r;

        /* Reserved by the caller; growing here is the fallback should a bound be wrong. */
        r = decisions_reserve(d, 1);
        if (r < 0)
                return r;
        x = &d->decisions[d->n_decisions++];
        *x = (AllocDecision) {
                .kind = kind,
                .nic = t->nic,
                .remote_numa = new_vf && new_vf[0] && t->remote,
        };
        strscpy(x->tenant, sizeof(x->tenant), t->id);
        strscpy(x->old_vf, sizeof(x->old_vf), old_vf ?: "");
        strscpy(x->new_vf, sizeof(x->new_vf), new_vf ?: "");
        va_start(ap, fmt);
        vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
        va_end(ap);
        return 0;
}

static const char *vf_addr(const Allocator *a, const Tenant *t) {
        return t->nic == ALLOC_NIC_VF && t->vf != NO_VF ? a->pool[t->vf].vf.addr : "";
}

/* Where the VF is, relative to the guest, for a reason text. */
static void where(const Allocator *a, const Tenant *t, char *buf, size_t size) {
        const PoolVf *p = &a->pool[t->vf];

        if (t->node < 0)
                snprintf(buf, size, "on node %d (no NUMA preference)", p->vf.numa_node);
        else if (!t->remote)
                snprintf(buf, size, "NUMA-local on node %d", t->node);
        else if (p->vf.numa_node < 0)
                snprintf(buf, size, "remote NUMA: VF node unknown, guest on node %d; class %s allows it",
                         t->node, tenant_class(a, t)->name);
        else
                snprintf(buf, size, "remote NUMA: VF on node %d, none free on guest's node %d; class %s allows it",
                         p->vf.numa_node, t->node, tenant_class(a, t)->name);
}

/* ---- picking a VF ---- */

/* Bucket with the most free VFs, skipping skip; ties: lowest node, unknown node last. */
static unsigned fullest_bucket(const Allocator *a, unsigned skip) {
        unsigned best = N_BUCKETS;

        for (unsigned k = 1; k <= N_BUCKETS; k++) {
                unsigned b = k % N_BUCKETS;
                if (b == skip || a->free_by_node[b] == 0)
                        continue;
                if (best == N_BUCKETS || a->free_by_node[b] > a->free_by_node[best])
                        best = b;
        }
        return best;
}

/* The free usable VF for a guest on node g: on g, or (g < 0 or remote) on the fullest other node. */
static uint32_t find_free(const Allocator *a, int g, bool remote) {
        unsigned b;

        if (g >= 0 && !remote)
                b = bucket(g);
        else
                b = fullest_bucket(a, g >= 0 ? bucket(g) : N_BUCKETS);
        if (b >= N_BUCKETS || a->free_by_node[b] == 0)
                return NO_VF;
        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                if (p->holder == NO_SLOT && vf_usable(&p->vf) && bucket(p->vf.numa_node) == b)
                        return (uint32_t) v;
        }
        return NO_VF;
}

/* The sriov-preferred tenant to downgrade on node g (remote: off g; g < 0: anywhere). */
static uint32_t find_victim(const Allocator *a, int g, bool remote, uint32_t exclude) {
        uint32_t best = NO_SLOT;
        unsigned there;

        there = g < 0 ? a->pref_on_vf
                : remote ? a->pref_on_vf - a->pref_on_vf_by_node[bucket(g)]
                         : a->pref_on_vf_by_node[bucket(g)];
        if (there == 0)
                return NO_SLOT;

        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                const Tenant *t, *b;

                if (p->holder == NO_SLOT || p->holder == exclude || vf_local(p, g) == remote)
                        continue;
                t = &a->slots[p->holder];
                if (!tenant_downgradable(a, t))
                        continue;
                if (best == NO_SLOT) {
                        best = p->holder;
                        continue;
                }
                b = &a->slots[best];
                if (tenant_class(a, t)->rank < tenant_class(a, b)->rank ||
                    (tenant_class(a, t)->rank == tenant_class(a, b)->rank &&
                     (t->seq > b->seq || (t->seq == b->seq && strcmp(t->id, b->id) > 0))))
                        best = p->holder;
        }
        return best;
}

static bool pick_required(const Allocator *a, int g, const AllocClass *c, uint32_t exclude, Pick *ret) {
        for (int remote = 0; remote <= (g >= 0 && c->allow_remote_numa); remote++) {
                uint32_t v = find_free(a, g, remote), s;

                if (v != NO_VF) {
                        *ret = (Pick) { .vf = v, .victim = NO_SLOT, .remote = remote };
                        return true;
                }
                s = find_victim(a, g, remote, exclude);
                if (s != NO_SLOT) {
                        *ret = (Pick) { .vf = a->slots[s].vf, .victim = s, .remote = remote };
                        return true;
                }
        }
        return false;
}

static bool pick_preferred(const Allocator *a, int g, const AllocClass *c, Pick *ret) {
        if (a->n_free <= effective_headroom(a))
                return false;
        for (int remote = 0; remote <= (g >= 0 && c->allow_remote_numa); remote++) {
                uint32_t v = find_free(a, g, remote);
                if (v != NO_VF) {
                        *ret = (Pick) { .vf = v, .victim = NO_SLOT, .remote = remote };
                        return true;
                }
        }
        return false;
}

/* Whether pick_preferred() can succeed, in O(1): the fill loop asks it of every waiting tenant. */
static bool can_pick_preferred(const Allocator *a, int g, const AllocClass *c) {
        if (a->n_free <= effective_headroom(a))
                return false;
        return g < 0 || a->free_by_node[bucket(g)] > 0 ||
               (c->allow_remote_numa && a->n_free > a->free_by_node[bucket(g)]);
}

static bool can_pick_required(const Allocator *a, int g, const AllocClass *c) {
        if (g < 0)
                return a->n_free > 0 || a->pref_on_vf > 0;
        return a->free_by_node[bucket(g)] > 0 || a->pref_on_vf_by_node[bucket(g)] > 0 ||
               (c->allow_remote_numa && (a->n_free > a->free_by_node[bucket(g)] ||
                                         a->pref_on_vf > a->pref_on_vf_by_node[bucket(g)]));
}

static void explain_required(const Allocator *a, int g, const AllocClass *c, char *buf, size_t size) {
        unsigned usable = g < 0 ? a->n_usable : a->usable_by_node[bucket(g)];
        int k;

        if (g < 0 && usable == 0)
                k = snprintf(buf, size, "no usable VF in the pool");
        else if (g < 0)
                k = snprintf(buf, size, "all %u usable VFs are held by sriov-required tenants", usable);
        else if (usable == 0)
                k = snprintf(buf, size, "no usable VF on NUMA node %d", g);
        else
                k = snprintf(buf, size, "all %u usable VFs on NUMA node %d are held by sriov-required tenants",
                             usable, g);
        if (g < 0 || k < 0 || (size_t) k >= size)
                return;
        if (c->allow_remote_numa)
                snprintf(buf + k, size - (size_t) k, ", and on every other node");
        else if (a->n_usable > usable)
                snprintf(buf + k, size - (size_t) k, "; class %s does not allow remote NUMA (%u VFs free elsewhere)",
                         c->name, a->n_free - a->free_by_node[bucket(g)]);
}

static void explain_virtio(const Allocator *a, int g, const AllocClass *c, char *buf, size_t size) {
        unsigned h = effective_headroom(a);

        if (a->n_usable == 0)
                snprintf(buf, size, "no usable VF in the pool; virtio-net until one appears");
        else if (a->n_free == 0)
                snprintf(buf, size, "all %u usable VFs are held; virtio-net until one frees", a->n_usable);
        else if (a->n_free <= h)
                snprintf(buf, size, "the %u free VFs are the headroom kept for sriov-required tenants (%u); "
                         "virtio-net until one frees", a->n_free, h);
        else
                snprintf(buf, size, "no free VF on NUMA node %d and class %s does not allow remote NUMA; "
                         "virtio-net until one frees", g, c->name);
}

static bool pick_preferred(const Allocator *a, int g, const AllocClass *c, Pick *ret);

/*
 * The sriov-preferred tenant victim gives its VF up for the sriov-required tenant s: straight
 * to another free VF when it could have been upgraded to one right after (one move instead of
 * a downgrade and an upgrade), else to virtio-net.
 */
static int evict(Allocator *a, uint32_t victim, uint32_t s, AllocDecisions *d) {
        Tenant *v = &a->slots[victim];
        char addr[PCI_ADDR_MAX], why[ALLOC_REASON_MAX];
        bool move;
        Pick p;

        strscpy(addr, sizeof(addr), a->pool[v->vf].vf.addr);
        /* Picked while it still holds its VF: the free count is the one an upgrade would see. */
        move = pick_preferred(a, v->node, tenant_class(a, v), &p);
        tenant_unlist(a, victim);
        vf_drop(a, victim);
        v->gone_vf[0] = 0;
        v->gone_held = false;
        v->recreated = false;
        if (move)
                vf_take(a, victim, p.vf);
        else
                v->nic = ALLOC_NIC_VIRTIO;
        tenant_relist(a, victim);
        if (!move)
                return decide(d, ALLOC_DECISION_DOWNGRADE, v, addr, NULL, "freed for sriov-required tenant %s",
                              a->slots[s].id);
        where(a, v, why, sizeof(why));
        return decide(d, ALLOC_DECISION_VF, v, addr, vf_addr(a, v), "freed for sriov-required tenant %s; %s",
                      a->slots[s].id, why);
}

/* Downgrade the victim (when p names one), then put s on p's VF. Between unlist(s) and relist(s).
 * The downgrade comes first: the VF must be detached before it is attached elsewhere. */
static int take_pick(Allocator *a, uint32_t s, const Pick *p, AllocDecisions *d) {
        if (p->victim != NO_SLOT) {
                int r = evict(a, p->victim, s, d);
                if (r < 0)
                        return r;
        }
        vf_take(a, s, p->vf);
        return 0;
}

/*
 * Serve the waiting tenants in service order: sriov-required without a NIC first, then
 * upgrades of sriov-preferred ones while more VFs are free than the headroom.
 */
static int fill(Allocator *a, AllocDecisions *d) {
        size_t i = 0;
        int r;

        while (i < a->n_waiting) {
                uint32_t s = a->waiting[i];
                Tenant *t = &a->slots[s];
                const AllocClass *c = tenant_class(a, t);
                char why[ALLOC_REASON_MAX];
                Pick p;

                if (c->vnic == VNIC_SRIOV_REQUIRED) {
                        if (!can_pick_required(a, t->node, c) || !pick_required(a, t->node, c, s, &p)) {
                                i++;
                                continue;
                        }
                        tenant_unlist(a, s);
                        r = take_pick(a, s, &p, d);
                        tenant_relist(a, s);
                        if (r < 0)
                                return r;
                        where(a, t, why, sizeof(why));
                        r = decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t),
                                   "sriov-required tenant without a NIC gets a VF, %s", why);
                } else {
                        /* Everything from here on is sriov-preferred: all need a VF above the headroom. */
                        if (a->n_free <= effective_headroom(a))
                                break;
                        if (!can_pick_preferred(a, t->node, c) || !pick_preferred(a, t->node, c, &p)) {
                                i++;
                                continue;
                        }
                        tenant_unlist(a, s);
                        vf_take(a, s, p.vf);
                        tenant_relist(a, s);
                        where(a, t, why, sizeof(why));
                        r = decide(d, ALLOC_DECISION_UPGRADE, t, NULL, vf_addr(a, t), "VF free, %s", why);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Upper bound on the decisions one request or release makes: its own, one downgrade, and what
 * fill() can do with at most one more free VF and the sriov-required tenants waiting. */
static size_t decisions_bound(const Allocator *a) {
        return 4 + (size_t) a->n_free + 2 * a->n_waiting_required;
}

/* ---- the object ---- */

int allocator_new(const AllocPolicy *policy, Allocator **ret) {
        _cleanup_(allocator_freep) Allocator *a = NULL;

        if (!policy || !ret || policy->n_classes > ALLOC_CLASSES_MAX || (policy->n_classes > 0 && !policy->classes))
                return -EINVAL;
        if (!(policy->target_utilization > 0 && policy->target_utilization <= 1))
                return -EINVAL;
        if (policy->max_tenants > ALLOC_TENANTS_MAX)
                return -EINVAL;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->headroom = policy->headroom;
        a->target = policy->target_utilization;
        a->max_tenants = policy->max_tenants ?: ALLOC_TENANTS_DEFAULT;

        if (policy->n_classes > 0) {
                a->classes = calloc(policy->n_classes, sizeof(AllocClass));
                if (!a->classes)
                        return -ENOMEM;
                memcpy(a->classes, policy->classes, policy->n_classes * sizeof(AllocClass));
                a->n_classes = policy->n_classes;
        }
        for (size_t i = 0; i < a->n_classes; i++) {
                AllocClass *c = &a->classes[i];
                if (!memchr(c->name, 0, sizeof(c->name)) || !tenant_id_valid(c->name))
                        return -EINVAL;
                if (c->vnic != VNIC_SRIOV_REQUIRED && c->vnic != VNIC_SRIOV_PREFERRED && c->vnic != VNIC_VIRTIO)
                        return -EINVAL;
        }
        qsort_safe(a->classes, a->n_classes, sizeof(AllocClass), class_cmp);
        for (size_t i = 1; i < a->n_classes; i++)
                if (streq(a->classes[i - 1].name, a->classes[i].name))
                        return -EINVAL;

        *ret = TAKE_PTR(a);
        return 0;
}

Allocator *allocator_free(Allocator *a) {
        if (!a)
                return NULL;
        free(a->classes);
        free(a->pool);
        free(a->slots);
        free(a->free_slots);
        free(a->by_id);
        free(a->waiting);
        free(a);
        return NULL;
}

/* n elements of src into a new array with room for capacity (>= n). */
static int dup_array(void *dst, const void *src, size_t n, size_t capacity, size_t size) {
        void *p;

        if (!src) {
                *(void **) dst = NULL;
                return 0;
        }
        p = calloc(capacity ?: 1, size);
        if (!p)
                return -ENOMEM;
        memcpy_safe(p, src, n * size);
        *(void **) dst = p;
        return 0;
}

int allocator_clone(const Allocator *a, Allocator **ret) {
        _cleanup_(allocator_freep) Allocator *c = NULL;

        if (!a || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = *a;
        c->classes = NULL;
        c->pool = NULL;
        c->slots = NULL;
        c->free_slots = c->by_id = c->waiting = NULL;
        /* The capacities the indexes rely on without growing: a freed slot for every slot, a place
         * in the waiting list for every tenant. */
        c->n_slots_allocated = c->n_free_slots_allocated = a->n_slots;
        c->n_by_id_allocated = c->n_waiting_allocated = a->n_tenants;
        if (dup_array(&c->classes, a->classes, a->n_classes, a->n_classes, sizeof(AllocClass)) < 0 ||
            dup_array(&c->pool, a->pool, a->n_pool, a->n_pool, sizeof(PoolVf)) < 0 ||
            dup_array(&c->slots, a->slots, a->n_slots, a->n_slots, sizeof(Tenant)) < 0 ||
            dup_array(&c->free_slots, a->free_slots, a->n_free_slots, a->n_slots, sizeof(uint32_t)) < 0 ||
            dup_array(&c->by_id, a->by_id, a->n_tenants, a->n_tenants, sizeof(uint32_t)) < 0 ||
            dup_array(&c->waiting, a->waiting, a->n_waiting, a->n_tenants, sizeof(uint32_t)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

/* Room for one more tenant in every array, so that creating it cannot fail halfway. */
static int tenants_reserve(Allocator *a) {
        size_t need = a->n_tenants + 1;

        if (GREEDY_REALLOC(a->slots, a->n_slots_allocated, a->n_slots + 1) < 0 ||
            GREEDY_REALLOC(a->free_slots, a->n_free_slots_allocated, a->n_slots + 1) < 0 ||
            GREEDY_REALLOC(a->by_id, a->n_by_id_allocated, need) < 0 ||
            GREEDY_REALLOC(a->waiting, a->n_waiting_allocated, need) < 0)
                return -ENOMEM;
        return 0;
}

/* A tenant on no NIC yet, in by_id but in no other index; space reserved by tenants_reserve(). */
static uint32_t tenant_create(Allocator *a, const char *id, uint32_t cls, int node, uint64_t seq) {
        uint32_t s = a->n_free_slots > 0 ? a->free_slots[--a->n_free_slots] : (uint32_t) a->n_slots++;
        size_t i = by_id_lower_bound(a, id);

        a->slots[s] = (Tenant) { .cls = cls, .node = node, .nic = ALLOC_NIC_NONE, .vf = NO_VF, .used = true,
                                 .seq = seq };
        strscpy(a->slots[s].id, sizeof(a->slots[s].id), id);
        memmove(a->by_id + i + 1, a->by_id + i, (a->n_tenants - i) * sizeof(uint32_t));
        a->by_id[i] = s;
        a->n_tenants++;
        if (seq >= a->next_seq)
                a->next_seq = seq + 1;
        return s;
}

/* Out of by_id and the slot freed; already unlisted and off its VF. */
static void tenant_destroy(Allocator *a, uint32_t s) {
        size_t i = by_id_lower_bound(a, a->slots[s].id);

        memmove(a->by_id + i, a->by_id + i + 1, (a->n_tenants - i - 1) * sizeof(uint32_t));
        a->n_tenants--;
        a->slots[s].used = false;
        a->free_slots[a->n_free_slots++] = s;
}

static int request_new(Allocator *a, const AllocRequest *req, uint32_t cls, AllocDecisions *d) {
        const AllocClass *c = &a->classes[cls];
        char why[ALLOC_REASON_MAX];
        Tenant *t;
        uint32_t s;
        Pick p;
        int r;

        if (a->n_tenants >= a->max_tenants) {
                Tenant tmp = { .nic = ALLOC_NIC_NONE };
                strscpy(tmp.id, sizeof(tmp.id), req->tenant);
                r = decide(d, ALLOC_DECISION_REFUSED, &tmp, NULL, NULL, "tenant limit of %zu reached", a->max_tenants);
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        if (c->vnic == VNIC_SRIOV_REQUIRED && !pick_required(a, req->numa_node, c, NO_SLOT, &p)) {
                Tenant tmp = { .nic = ALLOC_NIC_NONE };
                strscpy(tmp.id, sizeof(tmp.id), req->tenant);
                explain_required(a, req->numa_node, c, why, sizeof(why));
                r = decide(d, ALLOC_DECISION_REFUSED, &tmp, NULL, NULL, "%s", why);
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        s = tenant_create(a, req->tenant, cls, req->numa_node, a->next_seq);
        t = &a->slots[s];
        switch (c->vnic) {
        case VNIC_VIRTIO:
                t->nic = ALLOC_NIC_VIRTIO;
                tenant_relist(a, s);
                return decide(d, ALLOC_DECISION_VIRTIO, t, NULL, NULL, "class %s is virtio-net", c->name);
        case VNIC_SRIOV_PREFERRED:
                if (pick_preferred(a, t->node, c, &p)) {
                        vf_take(a, s, p.vf);
                        tenant_relist(a, s);
                        where(a, t, why, sizeof(why));
                        return decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t), "%s", why);
                }
                explain_virtio(a, t->node, c, why, sizeof(why));
                t->nic = ALLOC_NIC_VIRTIO;
                tenant_relist(a, s);
                return decide(d, ALLOC_DECISION_VIRTIO, t, NULL, NULL, "%s", why);
        case VNIC_SRIOV_REQUIRED:
                r = take_pick(a, s, &p, d);
                tenant_relist(a, s);
                if (r < 0)
                        return r;
                where(a, t, why, sizeof(why));
                return decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t), "%s%s", why,
                              p.victim != NO_SLOT ? ", freed from a sriov-preferred tenant" : "");
        }
        return -EINVAL;
}

/* An existing tenant asks for another class or node: see the opening comment. */
static int request_replace(Allocator *a, uint32_t s, uint32_t cls, int node, AllocDecisions *d) {
        Tenant *t = &a->slots[s];
        const AllocClass *c = &a->classes[cls];
        char why[ALLOC_REASON_MAX], old[PCI_ADDR_MAX];
        Pick p;
        int r;

        if (t->nic == ALLOC_NIC_VF && c->vnic != VNIC_VIRTIO && vf_acceptable(&a->pool[t->vf], node, c)) {
                /* It keeps its VF: no move, no decision. As sriov-preferred it may now be
                 * downgraded for a sriov-required tenant that waits without a NIC. */
                tenant_unlist(a, s);
                t->cls = cls;
                t->node = node;
                t->remote = !vf_local(&a->pool[t->vf], node);
                tenant_relist(a, s);
                return fill(a, d);
        }

        if (c->vnic == VNIC_SRIOV_REQUIRED && !pick_required(a, node, c, s, &p)) {
                explain_required(a, node, c, why, sizeof(why));
                r = decide(d, ALLOC_DECISION_REFUSED, t, NULL, NULL,
                           "to class %s: %s; keeps its %s as class %s", c->name, why,
                           alloc_nic_to_string(t->nic), tenant_class(a, t)->name);
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        strscpy(old, sizeof(old), vf_addr(a, t));
        tenant_unlist(a, s);
        t->cls = cls;
        t->node = node;
        switch (c->vnic) {
        case VNIC_VIRTIO:
                if (t->nic == ALLOC_NIC_VF)
                        vf_drop(a, s);
                if (t->nic != ALLOC_NIC_VIRTIO) {
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = decide(d, ALLOC_DECISION_VIRTIO, t, old, NULL, "class %s is virtio-net", c->name);
                } else
                        r = 0;
                break;
        case VNIC_SRIOV_PREFERRED:
                if (t->nic == ALLOC_NIC_VF)
                        vf_drop(a, s);
                if (pick_preferred(a, node, c, &p)) {
                        vf_take(a, s, p.vf);
                        where(a, t, why, sizeof(why));
                        r = decide(d, ALLOC_DECISION_VF, t, old, vf_addr(a, t), "class %s: %s", c->name, why);
                } else if (t->nic != ALLOC_NIC_VIRTIO) {
                        explain_virtio(a, node, c, why, sizeof(why));
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = decide(d, ALLOC_DECISION_VIRTIO, t, old, NULL, "class %s: %s", c->name, why);
                } else
                        r = 0;   /* stays on virtio-net, waiting in its new place */
                break;
        case VNIC_SRIOV_REQUIRED:
                /* Downgrade first: the victim's VF must be free before it is attached here. */
                if (p.victim != NO_SLOT) {
                        r = evict(a, p.victim, s, d);
                        if (r < 0)
                                break;
                }
                if (t->nic == ALLOC_NIC_VF)
                        vf_drop(a, s);
                vf_take(a, s, p.vf);
                where(a, t, why, sizeof(why));
                r = decide(d, ALLOC_DECISION_VF, t, old, vf_addr(a, t), "class %s: %s", c->name, why);
                break;
        default:
                r = -EINVAL;
        }
        tenant_relist(a, s);
        if (r < 0)
                return r;
        return fill(a, d);
}

int allocator_request(Allocator *a, const AllocRequest *req, AllocDecisions *ret) {
        uint32_t cls, s;
        int r;

        if (!a || !req || !ret || !tenant_id_valid(req->tenant))
                return -EINVAL;
        if (req->numa_node < -1 || req->numa_node >= ALLOC_NODES_MAX)
                return -EINVAL;
        r = class_find(a, req->class_name, &cls);
        if (r < 0)
                return r;

        s = tenant_find(a, req->tenant);
        if (s != NO_SLOT && a->slots[s].cls == cls && a->slots[s].node == req->numa_node)
                return 0;

        r = decisions_reserve(ret, decisions_bound(a));
        if (r < 0)
                return r;
        if (s != NO_SLOT)
                return request_replace(a, s, cls, req->numa_node, ret);
        r = tenants_reserve(a);
        if (r < 0)
                return r;
        return request_new(a, req, cls, ret);
}

int allocator_release(Allocator *a, const char *tenant, AllocDecisions *ret) {
        char old[PCI_ADDR_MAX];
        uint32_t s;
        int r;

        if (!a || !ret || !tenant_id_valid(tenant))
                return -EINVAL;
        s = tenant_find(a, tenant);
        if (s == NO_SLOT)
                return -ENOENT;
        r = decisions_reserve(ret, decisions_bound(a));
        if (r < 0)
                return r;

        strscpy(old, sizeof(old), vf_addr(a, &a->slots[s]));
        tenant_unlist(a, s);
        if (a->slots[s].nic == ALLOC_NIC_VF)
                vf_drop(a, s);
        r = decide(ret, ALLOC_DECISION_RELEASED, &a->slots[s], old, NULL, "released");
        tenant_destroy(a, s);
        if (r < 0)
                return r;
        return fill(a, ret);
}

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
        else if (!p->vf.healthy)
                snprintf(buf, size, "VF %s unhealthy", p->vf.addr);
        else if (t->recreated)
                snprintf(buf, size, "VF %s re-created", p->vf.addr);
        else if (!vf_acceptable(p, t->node, tenant_class(a, t)))
                snprintf(buf, size, "VF %s is on node %d and class %s does not allow remote NUMA",
                         p->vf.addr, p->vf.numa_node, tenant_class(a, t)->name);
        else
                return NULL;
        return buf;
}

static int service_qsort_cmp(const void *x, const void *y, void *userdata) {
        return service_cmp(userdata, *(const uint32_t *) x, *(const uint32_t *) y);
}

/* order: room for every tenant, allocated before anything changed. */
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
                        t->remote = !vf_local(&a->pool[t->vf], t->node);   /* the VF's node may have changed */
                        continue;
                }

                strscpy(old, sizeof(old), t->gone_vf[0] ? t->gone_vf : a->pool[t->vf].vf.addr);
                tenant_unlist(a, s);
                if (t->recreated && !t->gone_vf[0] && vf_acceptable(&a->pool[t->vf], t->node, c)) {
                        /* The same address, a new device: the executor re-attaches it. */
                        t->recreated = false;
                        tenant_relist(a, s);
                        r = decide(d, ALLOC_DECISION_REPLACED, t, old, old, "%s: re-attach", because);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!t->gone_vf[0])
                        vf_drop(a, s);
                t->gone_vf[0] = 0;
                t->gone_held = false;
                t->recreated = false;
                t->vf = NO_VF;
                t->nic = ALLOC_NIC_NONE;

                if (c->vnic == VNIC_SRIOV_REQUIRED && pick_required(a, t->node, c, s, &p)) {
                        r = take_pick(a, s, &p, d);
                        if (r >= 0) {
                                where(a, t, why, sizeof(why));
                                r = decide(d, ALLOC_DECISION_REPLACED, t, old, vf_addr(a, t), "%s; %s", because, why);
                        }
                } else if (c->vnic == VNIC_SRIOV_REQUIRED)
                        r = decide(d, ALLOC_DECISION_REPLACED, t, old, NULL,
                                   "%s; no VF for sriov-required tenant, waits for one without a NIC", because);
                else if (c->vnic == VNIC_SRIOV_PREFERRED && pick_preferred(a, t->node, c, &p)) {
                        vf_take(a, s, p.vf);
                        where(a, t, why, sizeof(why));
                        r = decide(d, ALLOC_DECISION_REPLACED, t, old, vf_addr(a, t), "%s; %s", because, why);
                } else {
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = decide(d, ALLOC_DECISION_REPLACED, t, old, NULL, "%s%s", because,
                                   c->vnic == VNIC_VIRTIO ? "" : "; virtio-net until a VF frees");
                }
                tenant_relist(a, s);
                if (r < 0)
                        return r;
        }
        return fill(a, d);
}

static int pool_vf_cmp(const void *x, const void *y) {
        return strcmp(((const PoolVf *) x)->vf.addr, ((const PoolVf *) y)->vf.addr);
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

        /* Each tenant at most: its own re-placement, a downgrade, an upgrade. */
        r = decisions_reserve(ret, 4 + 3 * a->n_tenants);
        if (r < 0)
                return r;
        order = malloc((a->n_tenants ?: 1) * sizeof(uint32_t));
        if (!order)
                return -ENOMEM;

        /* Nothing fails from here on. Move the holders over; mark what vanished or was re-created. */
        for (size_t v = 0; v < a->n_pool; v++) {
                PoolVf *old = &a->pool[v];
                PoolVf *new;
                Tenant *t;

                if (old->holder == NO_SLOT)
                        continue;
                t = &a->slots[old->holder];
                new = bsearch_safe(old->vf.addr, pool, n_vfs, sizeof(PoolVf), pool_addr_cmp);
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

        /* A tenant whose VF vanished stays "on a VF" with vf = NO_VF, holding nothing and
         * counted nowhere, until reconcile() re-places it. */
        pool_recount(a);
        return reconcile(a, order, ret);
}

int allocator_reconcile(Allocator *a, AllocDecisions *ret) {
        _cleanup_free_ uint32_t *order = NULL;
        int r;

        if (!a || !ret)
                return -EINVAL;
        r = decisions_reserve(ret, 4 + 3 * a->n_tenants);
        if (r < 0)
                return r;
        order = malloc((a->n_tenants ?: 1) * sizeof(uint32_t));
        if (!order)
                return -ENOMEM;
        return reconcile(a, order, ret);
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
        r = class_find(a, t->class_name, &cls);
        if (r < 0)
                return r;
        if (tenant_find(a, t->id) != NO_SLOT)
                return -EEXIST;
        if (a->n_tenants >= a->max_tenants)
                return -ENOSPC;
        r = tenants_reserve(a);
        if (r < 0)
                return r;

        /* Without a VF, a tenant waits the way its class waits (its class may have changed kind). */
        k = a->classes[cls].vnic;
        nic = t->nic;
        if (nic != ALLOC_NIC_VF)
                nic = k == VNIC_SRIOV_REQUIRED ? ALLOC_NIC_NONE : ALLOC_NIC_VIRTIO;
        else
                v = pool_find(a, t->vf);

        s = tenant_create(a, t->id, cls, t->numa_node, t->seq);
        if (v != NO_VF && a->pool[v].holder == NO_SLOT)
                vf_take(a, s, v);
        else if (nic == ALLOC_NIC_VF) {
                /* Its VF is gone (or taken): held by nothing, re-placed by the reconcile that follows. */
                Tenant *n = &a->slots[s];
                n->nic = ALLOC_NIC_VF;
                strscpy(n->gone_vf, sizeof(n->gone_vf), t->vf);
                n->gone_held = v != NO_VF;
        } else
                a->slots[s].nic = nic;
        tenant_relist(a, s);
        return 0;
}

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
        };
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
        s = tenant_find(a, id);
        if (s == NO_SLOT)
                return -ENOENT;
        tenant_view(a, s, ret);
        return 0;
}

const char *allocator_vf_holder(const Allocator *a, const char *vf) {
        uint32_t v;

        if (!a || !vf)
                return NULL;
        v = pool_find(a, vf);
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
        *ret = st;
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
                /* Never: a virtio-class tenant on a VF, a sriov-required one on virtio-net,
                 * a sriov-preferred or virtio one without a NIC. */
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
                if (i > 0 && service_cmp(a, a->waiting[i - 1], a->waiting[i]) >= 0)
                        return -EUCLEAN;
        }
        return 0;
}

void allocator_reserve_seq(Allocator *a, uint64_t seq) {
        if (seq >= a->next_seq)
                a->next_seq = seq + 1;
}
