/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-pick.c — decisions, and where a tenant goes: a free VF, a downgraded tenant's VF, or virtio-net */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator-internal.h"

/* ---- decisions ---- */

/* Room for n more decisions, reserved before anything changes so that no move goes unreported. */
int alloc_decisions_reserve(AllocDecisions *d, size_t n) {
        if (n > SIZE_MAX / sizeof(AllocDecision) - d->n_decisions)
                return -ENOMEM;
        return GREEDY_REALLOC(d->decisions, d->n_allocated, d->n_decisions + n);
}

_printf_(6, 7) int alloc_decide(AllocDecisions *d, AllocDecisionKind kind, const Tenant *t, const char *old_vf,
                                 const char *new_vf, const char *fmt, ...) {
        AllocDecision *x;
        va_list ap;
        int r;

        /* The caller reserved the room. Growing here is the fallback, in case a bound is wrong. */
        r = alloc_decisions_reserve(d, 1);
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

/* Say where the VF is, relative to the guest, for the text of a reason. */
void alloc_where(const Allocator *a, const Tenant *t, char *buf, size_t size) {
        const PoolVf *p = &a->pool[t->vf];

        if (t->node < 0)
                snprintf(buf, size, "on node %d (no NUMA preference)", p->vf.numa_node);
        else if (!t->remote)
                snprintf(buf, size, "NUMA-local on node %d", t->node);
        else if (p->vf.numa_node < 0)
                snprintf(buf, size, "remote NUMA: VF node unknown, guest on node %d; class %s allows it",
                         t->node, tenant_class(a, t)->name);
        else if (tenant_class(a, t)->vnic == VNIC_SRIOV_PREFERRED)
                snprintf(buf, size, "remote NUMA: VF on node %d, none free above the headroom on guest's node %d; "
                         "class %s allows it", p->vf.numa_node, t->node, tenant_class(a, t)->name);
        else
                snprintf(buf, size, "remote NUMA: VF on node %d, none free on guest's node %d; class %s allows it",
                         p->vf.numa_node, t->node, tenant_class(a, t)->name);
}

/* ---- picking a VF ---- */

/* The bucket with the most free VFs, other than skip. Ties go to the lowest node; the unknown node is last. */
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

/* The bucket with the most free VFs above its headroom, other than skip. Ties go as in fullest_bucket(). */
static unsigned sparest_bucket(const Allocator *a, unsigned skip) {
        unsigned best = N_BUCKETS, most = 0;

        for (unsigned k = 1; k <= N_BUCKETS; k++) {
                unsigned b = k % N_BUCKETS, n;
                if (b == skip)
                        continue;
                n = node_spare(a, b);
                if (n > most) {
                        most = n;
                        best = b;
                }
        }
        return best;
}

unsigned alloc_spare_total(const Allocator *a) {
        unsigned n = 0;

        for (unsigned b = 0; b < N_BUCKETS; b++)
                n += node_spare(a, b);
        return n;
}

/* The lowest-addressed free usable VF of bucket b. */
static uint32_t first_free_on(const Allocator *a, unsigned b) {
        if (b >= N_BUCKETS || a->free_by_node[b] == 0)
                return NO_VF;
        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                if (p->holder == NO_SLOT && vf_usable(&p->vf) && bucket(p->vf.numa_node) == b)
                        return (uint32_t) v;
        }
        return NO_VF;
}

/*
 * The free usable VF for a guest on node g. It is on g, or on the fullest other node when g is
 * below 0 or remote is set.
 */
static uint32_t find_free(const Allocator *a, int g, bool remote) {
        if (g >= 0 && !remote)
                return first_free_on(a, bucket(g));
        return first_free_on(a, fullest_bucket(a, g >= 0 ? bucket(g) : N_BUCKETS));
}

/* The same for a sriov-preferred tenant. Only a node with free VFs above its headroom will do. */
static uint32_t find_spare(const Allocator *a, int g, bool remote) {
        if (g >= 0 && !remote)
                return node_spare(a, bucket(g)) > 0 ? first_free_on(a, bucket(g)) : NO_VF;
        return first_free_on(a, sparest_bucket(a, g >= 0 ? bucket(g) : N_BUCKETS));
}

/*
 * The lowest-addressed free usable VF of the PF pin, on node g, or off g with remote. With
 * spare, it must also be above its node's headroom, as a sriov-preferred tenant needs.
 */
static uint32_t find_pinned(const Allocator *a, int g, bool remote, const char *pin, bool spare) {
        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                if (p->holder != NO_SLOT || !vf_usable(&p->vf) || !vf_on_pin(p, pin) || vf_local(p, g) == remote)
                        continue;
                if (spare && node_spare(a, bucket(p->vf.numa_node)) == 0)
                        continue;
                return (uint32_t) v;
        }
        return NO_VF;
}

/*
 * The sriov-preferred tenant to downgrade on node g. With remote, it is off g. With g below 0,
 * it is anywhere. With a pin, it is on that PF.
 */
static uint32_t find_victim(const Allocator *a, int g, bool remote, const char *pin, uint32_t exclude) {
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

                if (p->holder == NO_SLOT || p->holder == exclude || vf_local(p, g) == remote || !vf_on_pin(p, pin))
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

bool alloc_pick_required(const Allocator *a, int g, const AllocClass *c, const char *pin, uint32_t exclude, Pick *ret) {
        for (int remote = 0; remote <= (g >= 0 && c->allow_remote_numa); remote++) {
                uint32_t v = pin && pin[0] ? find_pinned(a, g, remote, pin, false) : find_free(a, g, remote), s;

                if (v != NO_VF) {
                        *ret = (Pick) { .vf = v, .victim = NO_SLOT, .remote = remote };
                        return true;
                }
                s = find_victim(a, g, remote, pin, exclude);
                if (s != NO_SLOT) {
                        *ret = (Pick) { .vf = a->slots[s].vf, .victim = s, .remote = remote };
                        return true;
                }
        }
        return false;
}

bool alloc_pick_preferred(const Allocator *a, int g, const AllocClass *c, const char *pin, Pick *ret) {
        for (int remote = 0; remote <= (g >= 0 && c->allow_remote_numa); remote++) {
                uint32_t v = pin && pin[0] ? find_pinned(a, g, remote, pin, true) : find_spare(a, g, remote);
                if (v != NO_VF) {
                        *ret = (Pick) { .vf = v, .victim = NO_SLOT, .remote = remote };
                        return true;
                }
        }
        return false;
}

/*
 * Whether alloc_pick_preferred() can succeed, in O(1) given spare = alloc_spare_total(). It must
 * be cheap, because the fill loop asks it of every waiting tenant.
 */
static bool can_pick_preferred(const Allocator *a, int g, const AllocClass *c, unsigned spare) {
        unsigned here;

        if (spare == 0)
                return false;
        if (g < 0)
                return true;
        here = node_spare(a, bucket(g));
        return here > 0 || (c->allow_remote_numa && spare > here);
}

static bool can_pick_required(const Allocator *a, int g, const AllocClass *c) {
        if (g < 0)
                return a->n_free > 0 || a->pref_on_vf > 0;
        return a->free_by_node[bucket(g)] > 0 || a->pref_on_vf_by_node[bucket(g)] > 0 ||
               (c->allow_remote_numa && (a->n_free > a->free_by_node[bucket(g)] ||
                                         a->pref_on_vf > a->pref_on_vf_by_node[bucket(g)]));
}

/* Why a tenant pinned to pin gets no VF: the PF has none usable, none on the node, or all are held. */
static void explain_pinned(const Allocator *a, int g, const AllocClass *c, const char *pin, bool preferred, char *buf,
                           size_t size) {
        unsigned usable = 0, local = 0;
        int node = -1;

        for (size_t v = 0; v < a->n_pool; v++) {
                const PoolVf *p = &a->pool[v];
                if (!vf_usable(&p->vf) || !vf_on_pin(p, pin))
                        continue;
                usable++;
                local += vf_local(p, g);
                node = p->vf.numa_node;
        }
        if (usable == 0)
                snprintf(buf, size, "no usable VF on PF %s, which the tenant is pinned to%s", pin,
                         preferred ? "; virtio-net until one appears" : "");
        else if (local == 0 && !c->allow_remote_numa)
                snprintf(buf, size, "PF %s, which the tenant is pinned to, is on node %d and class %s does not allow "
                         "remote NUMA", pin, node, c->name);
        else if (preferred)
                snprintf(buf, size, "no VF of PF %s, which the tenant is pinned to, is free above its node's headroom; "
                         "virtio-net until one frees", pin);
        else
                snprintf(buf, size, "all %u usable VFs of PF %s, which the tenant is pinned to, are held by "
                         "sriov-required tenants", usable, pin);
}

void alloc_explain_required(const Allocator *a, int g, const AllocClass *c, const char *pin, char *buf, size_t size) {
        unsigned usable = g < 0 ? a->n_usable : a->usable_by_node[bucket(g)];
        int k;

        if (pin && pin[0]) {
                explain_pinned(a, g, c, pin, false, buf, size);
                return;
        }
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

void alloc_explain_virtio(const Allocator *a, int g, const AllocClass *c, const char *pin, char *buf, size_t size) {
        unsigned b = g >= 0 ? bucket(g) : 0;
        unsigned here = g >= 0 ? a->free_by_node[b] : 0, h = g >= 0 ? node_headroom(a, b) : 0;
        unsigned elsewhere = a->n_free - here;
        const char *until = "; virtio-net until one frees";
        int k;

        if (pin && pin[0]) {
                explain_pinned(a, g, c, pin, true, buf, size);
                return;
        }
        if (a->n_usable == 0) {
                snprintf(buf, size, "no usable VF in the pool; virtio-net until one appears");
                return;
        }
        if (a->n_free == 0) {
                snprintf(buf, size, "all %u usable VFs are held%s", a->n_usable, until);
                return;
        }
        if (g < 0) {
                snprintf(buf, size, "the %u free VFs are the headroom each node keeps for sriov-required tenants%s",
                         a->n_free, until);
                return;
        }
        /* Explain the guest's node first, because that is where its VF would be. */
        if (here == 0)
                k = snprintf(buf, size, "no free VF on NUMA node %d", g);
        else
                k = snprintf(buf, size, "the %u free VFs on NUMA node %d are its headroom kept for sriov-required "
                             "tenants (%u)", here, g, h);
        if (k < 0 || (size_t) k >= size)
                return;
        if (elsewhere == 0)
                snprintf(buf + k, size - (size_t) k, "%s", until);
        else if (!c->allow_remote_numa)
                snprintf(buf + k, size - (size_t) k, "; class %s does not allow remote NUMA (%u VFs free elsewhere)%s",
                         c->name, elsewhere, until);
        else
                snprintf(buf + k, size - (size_t) k, ", and the %u free elsewhere are their nodes' headroom%s",
                         elsewhere, until);
}

/*
 * The sriov-preferred tenant victim gives up its VF for the sriov-required tenant s. If victim
 * could be upgraded right after, it goes straight to another free VF. That makes one move
 * instead of a downgrade and an upgrade. Otherwise it goes to virtio-net.
 */
int alloc_evict(Allocator *a, uint32_t victim, uint32_t s, AllocDecisions *d) {
        Tenant *v = &a->slots[victim];
        char addr[PCI_ADDR_MAX], why[ALLOC_REASON_MAX];
        bool move;
        Pick p;

        strscpy(addr, sizeof(addr), a->pool[v->vf].vf.addr);
        /* Pick while the victim still holds its VF, so that the free count is the one an upgrade would see. */
        move = alloc_pick_preferred(a, v->node, tenant_class(a, v), v->pin, &p);
        alloc_tenant_unlist(a, victim);
        alloc_vf_drop(a, victim);
        v->gone_vf[0] = 0;
        v->gone_held = false;
        v->recreated = false;
        if (move)
                alloc_vf_take(a, victim, p.vf);
        else
                v->nic = ALLOC_NIC_VIRTIO;
        alloc_tenant_relist(a, victim);
        if (!move)
                return alloc_decide(d, ALLOC_DECISION_DOWNGRADE, v, addr, NULL, "freed for sriov-required tenant %s",
                              a->slots[s].id);
        alloc_where(a, v, why, sizeof(why));
        return alloc_decide(d, ALLOC_DECISION_VF, v, addr, vf_addr(a, v), "freed for sriov-required tenant %s; %s",
                      a->slots[s].id, why);
}

/*
 * Downgrade the victim, if p names one, and then put s on p's VF. Call this only between
 * unlist(s) and relist(s). The downgrade comes first, because the VF must be detached before it
 * is attached elsewhere.
 */
int alloc_take_pick(Allocator *a, uint32_t s, const Pick *p, AllocDecisions *d) {
        if (p->victim != NO_SLOT) {
                int r = alloc_evict(a, p->victim, s, d);
                if (r < 0)
                        return r;
        }
        alloc_vf_take(a, s, p->vf);
        return 0;
}

/*
 * Serve the waiting tenants in service order. sriov-required tenants without a NIC come first.
 * Then sriov-preferred tenants are upgraded while more VFs are free than the headroom.
 */
int alloc_fill(Allocator *a, AllocDecisions *d) {
        unsigned spare = alloc_spare_total(a);
        size_t i = 0;
        int r;

        while (i < a->n_waiting) {
                uint32_t s = a->waiting[i];
                Tenant *t = &a->slots[s];
                const AllocClass *c = tenant_class(a, t);
                char why[ALLOC_REASON_MAX];
                Pick p;

                if (c->vnic == VNIC_SRIOV_REQUIRED) {
                        if (!can_pick_required(a, t->node, c) || !alloc_pick_required(a, t->node, c, t->pin, s, &p)) {
                                i++;
                                continue;
                        }
                        alloc_tenant_unlist(a, s);
                        r = alloc_take_pick(a, s, &p, d);
                        alloc_tenant_relist(a, s);
                        if (r < 0)
                                return r;
                        alloc_where(a, t, why, sizeof(why));
                        r = alloc_decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t),
                                   "sriov-required tenant without a NIC gets a VF, %s", why);
                        spare = alloc_spare_total(a);
                } else {
                        /* Every tenant from here on is sriov-preferred, and needs a VF above a node's headroom. */
                        if (spare == 0)
                                break;
                        if (!can_pick_preferred(a, t->node, c, spare) || !alloc_pick_preferred(a, t->node, c, t->pin, &p)) {
                                i++;
                                continue;
                        }
                        alloc_tenant_unlist(a, s);
                        alloc_vf_take(a, s, p.vf);
                        alloc_tenant_relist(a, s);
                        alloc_where(a, t, why, sizeof(why));
                        r = alloc_decide(d, ALLOC_DECISION_UPGRADE, t, NULL, vf_addr(a, t), "VF free, %s", why);
                        spare--;   /* One VF above its node's headroom is taken. The headrooms stay. */
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * An upper bound on the decisions that one request or release makes: its own, one downgrade,
 * and what alloc_fill() can do with at most one more free VF and the waiting sriov-required
 * tenants.
 */

size_t alloc_decisions_bound(const Allocator *a) {
        return 4 + (size_t) a->n_free + 2 * a->n_waiting_required;
}
