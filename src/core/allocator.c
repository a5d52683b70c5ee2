/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator.c — a VF or virtio-net for each tenant, NUMA-local first */

/*
 * docs/ARCHITECTURE.md places the allocator in the design. This comment holds the allocator's
 * own rules.
 *
 * The objectives, most important first:
 *  1. Every sriov-required tenant that can be served holds a VF.
 *  2. VF utilization stays at or above the target whenever demand allows.
 *  3. Tenants move as little as possible.
 *
 * A tenant of class C whose guest is on node g is placed as follows. A g below 0 means that
 * the tenant has no preference.
 *  - virtio: the tenant always gets virtio-net.
 *  - sriov-required: the tenant gets a free VF on g. Failing that, it gets the VF of a
 *    sriov-preferred tenant on g, and that tenant is downgraded to virtio-net. If C allows
 *    remote NUMA, the same two steps follow on the other nodes, and the decision says that
 *    the VF is remote. If nothing is found, the request is refused with the reason. Headroom
 *    does not apply, because the headroom exists for these arrivals. The kind of class
 *    outranks the rank: by objective 1, a required tenant of any rank displaces a preferred
 *    tenant of any rank.
 *  - sriov-preferred: the tenant gets a free VF on g, or elsewhere if C allows remote NUMA.
 *    It takes a VF on a node only while the node has more free VFs than its effective
 *    headroom. Otherwise the tenant gets virtio-net and waits.
 *
 * The headroom is kept on each node, and all unknown nodes count as one node. A
 * sriov-required arrival wants a VF on its guest's node, so free VFs on another node are no
 * headroom for it. A global count would let sriov-preferred tenants empty one node while
 * another node kept the "headroom". A node's effective headroom is
 * min(headroom, usable_n - ceil(target * usable_n)), where usable_n is the node's number of
 * usable VFs. So the target stays a cap, applied per node as well. Held back that way, every
 * node can reach the target with sriov-preferred demand, and so can the host: the sum over
 * the nodes of allocated_n is at least target * usable_n. A global cap shared out between the
 * nodes would need a rule for which node keeps less. A VF change on one node would also move
 * the headroom of another. The price is that a node with few VFs keeps less back: at 85%, a
 * node with 8 VFs keeps 1.
 *
 * Ties are never broken by pointer or slot order:
 *  - A free VF is the one with the lowest address on the node.
 *  - With no preference, or among remote nodes, the node with the most free VFs wins. For a
 *    sriov-preferred tenant, that is the most free VFs above the node's headroom. Then the
 *    lowest node number wins, and an unknown node comes last.
 *  - The downgrade victim has the lowest rank, and then the latest arrival, because its VF
 *    has served it for the shortest time.
 *  - Waiting tenants are served sriov-required first, then by higher rank, then by earlier
 *    arrival, then by id. A pool change places tenants again in the same order.
 * Each allocator counts its own arrivals. allocator_restore_tenant() keeps the arrival
 * sequence across restarts.
 *
 * Whenever VFs become free, the waiting tenants are served in that order. VFs become free on
 * a release, a re-class or a pool change. A sriov-required tenant without a NIC comes first,
 * and it downgrades another tenant if it must. Then sriov-preferred tenants on virtio-net are
 * upgraded, while a node they may use has more free VFs than its effective headroom. A
 * sriov-required tenant is never downgraded. It loses its VF only when the VF itself goes
 * away, and it then waits without a NIC, ahead of everyone else.
 *
 * A tenant may be pinned to one PF. Then only that PF's VFs serve it: the free VF of the PF with
 * the lowest address, or the VF of a sriov-preferred tenant on that PF. A pinned
 * sriov-required tenant waits, or is refused, rather than take another PF's VF, and a pinned
 * sriov-preferred tenant stays on virtio-net. The headroom of the PF's node applies as ever.
 * A scheduler outside the host pins its tenants to the PF it counted them against.
 *
 * A re-class is a request for an existing tenant with another class, node or pin. The tenant
 * keeps its VF when the new class, node and pin still accept it, and no decision is made. Otherwise it is
 * placed as if it had just arrived, but it keeps its arrival sequence. Its old VF is released
 * only once the new placement is certain. A re-class to sriov-required that cannot be met is
 * refused and changes nothing, so the tenant keeps what it has.
 *
 * This file holds the object, the requests and the releases. The rest is split by concern:
 *  - allocator-index.c: the tenant table and its indexes,
 *  - allocator-pick.c: the decisions, and picking a VF,
 *  - allocator-pool.c: pool changes, the reconcile, and the restore at start,
 *  - allocator-rt.c: the RT CPUs that guests book,
 *  - allocator-view.c: reading, statistics and the consistency check.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/util.h"
#include "allocator-internal.h"

static const char *const decision_kind_table[_ALLOC_DECISION_KIND_MAX] = {
        [ALLOC_DECISION_VF] = "vf",
        [ALLOC_DECISION_VIRTIO] = "virtio",
        [ALLOC_DECISION_DOWNGRADE] = "downgrade",
        [ALLOC_DECISION_UPGRADE] = "upgrade",
        [ALLOC_DECISION_REFUSED] = "refused",
        [ALLOC_DECISION_RELEASED] = "released",
        [ALLOC_DECISION_REPLACED] = "re-placed",
        [ALLOC_DECISION_RT_CPUS] = "rt-cpus",
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

static const char *const missing_table[_ALLOC_MISSING_MAX] = {
        [ALLOC_MISSING_NONE] = "none",
        [ALLOC_MISSING_VF] = "vf",
        [ALLOC_MISSING_RT_CPU] = "rt-cpu",
        [ALLOC_MISSING_TENANTS] = "tenants",
};

const char *alloc_missing_to_string(AllocMissing m) {
        return m >= 0 && m < _ALLOC_MISSING_MAX ? missing_table[m] : NULL;
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
        qsort_safe(a->classes, a->n_classes, sizeof(AllocClass), alloc_class_cmp);
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
        free(a->rt);
        free(a->guests);
        free(a);
        return NULL;
}

/* Copy n elements of src into a new array with room for capacity elements, which is at least n. */
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
        c->rt = NULL;
        c->guests = NULL;
        c->n_guests_allocated = a->n_guests;
        /*
         * The indexes rely on these capacities and never grow: a free-list place for every slot,
         * and a place in the waiting list for every tenant.
         */
        c->n_slots_allocated = c->n_free_slots_allocated = a->n_slots;
        c->n_by_id_allocated = c->n_waiting_allocated = a->n_tenants;
        if (dup_array(&c->classes, a->classes, a->n_classes, a->n_classes, sizeof(AllocClass)) < 0 ||
            dup_array(&c->pool, a->pool, a->n_pool, a->n_pool, sizeof(PoolVf)) < 0 ||
            dup_array(&c->slots, a->slots, a->n_slots, a->n_slots, sizeof(Tenant)) < 0 ||
            dup_array(&c->free_slots, a->free_slots, a->n_free_slots, a->n_slots, sizeof(uint32_t)) < 0 ||
            dup_array(&c->by_id, a->by_id, a->n_tenants, a->n_tenants, sizeof(uint32_t)) < 0 ||
            dup_array(&c->waiting, a->waiting, a->n_waiting, a->n_tenants, sizeof(uint32_t)) < 0 ||
            dup_array(&c->rt, a->rt, a->n_rt, a->n_rt, sizeof(RtCpu)) < 0 ||
            dup_array(&c->guests, a->guests, a->n_guests, a->n_guests, sizeof(RtGuest)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
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
                r = alloc_decide(d, ALLOC_DECISION_REFUSED, &tmp, NULL, NULL, "tenant limit of %zu reached", a->max_tenants);
                if (r >= 0)
                        d->decisions[d->n_decisions - 1].missing = ALLOC_MISSING_TENANTS;
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        if (c->vnic == VNIC_SRIOV_REQUIRED && !alloc_pick_required(a, req->numa_node, c, req->pin_pf, NO_SLOT, &p)) {
                Tenant tmp = { .nic = ALLOC_NIC_NONE };
                strscpy(tmp.id, sizeof(tmp.id), req->tenant);
                alloc_explain_required(a, req->numa_node, c, req->pin_pf, why, sizeof(why));
                r = alloc_decide(d, ALLOC_DECISION_REFUSED, &tmp, NULL, NULL, "%s", why);
                if (r >= 0)
                        d->decisions[d->n_decisions - 1].missing = ALLOC_MISSING_VF;
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        s = alloc_tenant_create(a, req->tenant, cls, req->numa_node, a->next_seq);
        t = &a->slots[s];
        strscpy(t->pin, sizeof(t->pin), req->pin_pf ?: "");
        switch (c->vnic) {
        case VNIC_VIRTIO:
                t->nic = ALLOC_NIC_VIRTIO;
                alloc_tenant_relist(a, s);
                return alloc_decide(d, ALLOC_DECISION_VIRTIO, t, NULL, NULL, "class %s is virtio-net", c->name);
        case VNIC_SRIOV_PREFERRED:
                if (alloc_pick_preferred(a, t->node, c, t->pin, &p)) {
                        alloc_vf_take(a, s, p.vf);
                        alloc_tenant_relist(a, s);
                        alloc_where(a, t, why, sizeof(why));
                        return alloc_decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t), "%s", why);
                }
                alloc_explain_virtio(a, t->node, c, t->pin, why, sizeof(why));
                t->nic = ALLOC_NIC_VIRTIO;
                alloc_tenant_relist(a, s);
                return alloc_decide(d, ALLOC_DECISION_VIRTIO, t, NULL, NULL, "%s", why);
        case VNIC_SRIOV_REQUIRED:
                r = alloc_take_pick(a, s, &p, d);
                alloc_tenant_relist(a, s);
                if (r < 0)
                        return r;
                alloc_where(a, t, why, sizeof(why));
                return alloc_decide(d, ALLOC_DECISION_VF, t, NULL, vf_addr(a, t), "%s%s", why,
                              p.victim != NO_SLOT ? ", freed from a sriov-preferred tenant" : "");
        }
        return -EINVAL;
}

/*
 * An existing tenant asks for another class, node or pin. The opening comment describes such a
 * re-class.
 */
static int request_replace(Allocator *a, uint32_t s, uint32_t cls, int node, const char *pin, AllocDecisions *d) {
        Tenant *t = &a->slots[s];
        const AllocClass *c = &a->classes[cls];
        char why[ALLOC_REASON_MAX], old[PCI_ADDR_MAX];
        Pick p;
        int r;

        if (t->nic == ALLOC_NIC_VF && c->vnic != VNIC_VIRTIO && vf_acceptable(&a->pool[t->vf], node, c) &&
            vf_on_pin(&a->pool[t->vf], pin)) {
                /*
                 * The tenant keeps its VF, so nothing moves and no decision is made. As
                 * sriov-preferred, it may now be downgraded for a sriov-required tenant that
                 * waits without a NIC.
                 */
                alloc_tenant_unlist(a, s);
                t->cls = cls;
                t->node = node;
                strscpy(t->pin, sizeof(t->pin), pin);
                t->remote = !vf_local(&a->pool[t->vf], node);
                alloc_tenant_relist(a, s);
                return alloc_fill(a, d);
        }

        if (c->vnic == VNIC_SRIOV_REQUIRED && !alloc_pick_required(a, node, c, pin, s, &p)) {
                alloc_explain_required(a, node, c, pin, why, sizeof(why));
                r = alloc_decide(d, ALLOC_DECISION_REFUSED, t, NULL, NULL,
                           "to class %s: %s; keeps its %s as class %s", c->name, why,
                           alloc_nic_to_string(t->nic), tenant_class(a, t)->name);
                if (r >= 0)
                        d->decisions[d->n_decisions - 1].missing = ALLOC_MISSING_VF;
                return r < 0 ? r : ALLOCATOR_REFUSED;
        }

        strscpy(old, sizeof(old), vf_addr(a, t));
        alloc_tenant_unlist(a, s);
        t->cls = cls;
        t->node = node;
        strscpy(t->pin, sizeof(t->pin), pin);
        switch (c->vnic) {
        case VNIC_VIRTIO:
                if (t->nic == ALLOC_NIC_VF)
                        alloc_vf_drop(a, s);
                if (t->nic != ALLOC_NIC_VIRTIO) {
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = alloc_decide(d, ALLOC_DECISION_VIRTIO, t, old, NULL, "class %s is virtio-net", c->name);
                } else
                        r = 0;
                break;
        case VNIC_SRIOV_PREFERRED:
                if (t->nic == ALLOC_NIC_VF)
                        alloc_vf_drop(a, s);
                if (alloc_pick_preferred(a, node, c, pin, &p)) {
                        alloc_vf_take(a, s, p.vf);
                        alloc_where(a, t, why, sizeof(why));
                        r = alloc_decide(d, ALLOC_DECISION_VF, t, old, vf_addr(a, t), "class %s: %s", c->name, why);
                } else if (t->nic != ALLOC_NIC_VIRTIO) {
                        alloc_explain_virtio(a, node, c, pin, why, sizeof(why));
                        t->nic = ALLOC_NIC_VIRTIO;
                        r = alloc_decide(d, ALLOC_DECISION_VIRTIO, t, old, NULL, "class %s: %s", c->name, why);
                } else
                        r = 0;   /* It stays on virtio-net, and waits in its new place. */
                break;
        case VNIC_SRIOV_REQUIRED:
                /* Downgrade first, because the victim's VF must be free before it is attached here. */
                if (p.victim != NO_SLOT) {
                        r = alloc_evict(a, p.victim, s, d);
                        if (r < 0)
                                break;
                }
                if (t->nic == ALLOC_NIC_VF)
                        alloc_vf_drop(a, s);
                alloc_vf_take(a, s, p.vf);
                alloc_where(a, t, why, sizeof(why));
                r = alloc_decide(d, ALLOC_DECISION_VF, t, old, vf_addr(a, t), "class %s: %s", c->name, why);
                break;
        default:
                r = -EINVAL;
        }
        alloc_tenant_relist(a, s);
        if (r < 0)
                return r;
        return alloc_fill(a, d);
}

/* The node that the tenant's NIC would be on, if it were placed now in class cls. Its RT CPUs go there. */
static int prospective_node(const Allocator *a, uint32_t s, uint32_t cls, int node, const char *pin) {
        const AllocClass *c = &a->classes[cls];
        const Tenant *t = s != NO_SLOT ? &a->slots[s] : NULL;
        Pick p;
        bool picked = false;

        if (t && t->nic == ALLOC_NIC_VF && t->vf != NO_VF && c->vnic != VNIC_VIRTIO &&
            vf_acceptable(&a->pool[t->vf], node, c) && vf_on_pin(&a->pool[t->vf], pin))
                p.vf = t->vf, picked = true;
        else if (c->vnic == VNIC_SRIOV_REQUIRED)
                picked = alloc_pick_required(a, node, c, pin, s, &p);
        else if (c->vnic == VNIC_SRIOV_PREFERRED)
                picked = alloc_pick_preferred(a, node, c, pin, &p);
        if (picked && a->pool[p.vf].vf.numa_node >= 0)
                return a->pool[p.vf].vf.numa_node;
        return node;
}

static bool same_guest(const Allocator *a, const Tenant *t, const char *guest) {
        char key[ALLOC_GUEST_MAX];

        if (t->guest == NO_GUEST)
                return class_rt_need(tenant_class(a, t)) == 0;
        alloc_rt_guest_key(guest, t->id, key, sizeof(key));
        return streq(a->guests[t->guest].name, key);
}

/* After a placement, put the tenant into its guest's booking, if its class has one. */
static int settle_rt(Allocator *a, const char *id, const char *guest, AllocDecisions *d) {
        uint32_t s = alloc_tenant_find(a, id);
        Tenant *t;
        int r;

        if (s == NO_SLOT)
                return 0;
        t = &a->slots[s];
        if (t->guest != NO_GUEST) {
                /* A re-class or node change that still fits keeps its CPUs, so no vCPU moves. */
                if (same_guest(a, t, guest) && class_rt_need(tenant_class(a, t)) > 0) {
                        r = alloc_rt_refit(a, s, d);
                        if (r <= 0)
                                return r;
                }
                /*
                 * The tenant goes into its new booking before anyone waiting is served from its
                 * old one, because the feasibility check counted on what it leaves.
                 */
                (void) alloc_rt_leave(a, s, NULL);
                r = alloc_rt_join(a, s, guest, d);
                if (r < 0)
                        return r;
                return alloc_rt_serve(a, d);
        }
        return alloc_rt_join(a, s, guest, d);
}

/*
 * Refuse the request for want of RT CPUs, for the reason why. This adds one REFUSED decision and
 * changes nothing.
 */
static int refuse_rt(const Allocator *a, const AllocRequest *req, uint32_t cls, const char *why, AllocDecisions *ret) {
        uint32_t s = alloc_tenant_find(a, req->tenant);
        bool existing = s != NO_SLOT;
        Tenant tmp = { .nic = existing ? a->slots[s].nic : ALLOC_NIC_NONE };
        int r;

        strscpy(tmp.id, sizeof(tmp.id), req->tenant);
        r = alloc_decide(ret, ALLOC_DECISION_REFUSED, &tmp, NULL, NULL, "%s%s: %s", existing ? "to class " : "class ",
                         a->classes[cls].name, why);
        if (r < 0)
                return r;
        ret->decisions[ret->n_decisions - 1].missing = ALLOC_MISSING_RT_CPU;
        return ALLOCATOR_REFUSED;
}

int allocator_request(Allocator *a, const AllocRequest *req, AllocDecisions *ret) {
        _cleanup_(allocator_freep) Allocator *undo = NULL;
        char why[ALLOC_REASON_MAX];
        const char *pin = req && req->pin_pf ? req->pin_pf : "";
        Allocator swap;
        size_t n_before;
        uint32_t cls, s;
        int node, r;

        if (!a || !req || !ret || !tenant_id_valid(req->tenant))
                return -EINVAL;
        if (pin[0] && (strnlen(pin, PCI_ADDR_MAX) >= PCI_ADDR_MAX || !pci_addr_valid(pin)))
                return -EINVAL;
        if (req->numa_node < -1 || req->numa_node >= ALLOC_NODES_MAX)
                return -EINVAL;
        if (req->guest && strnlen(req->guest, ALLOC_GUEST_MAX) >= ALLOC_GUEST_MAX)
                return -EINVAL;
        r = alloc_class_find(a, req->class_name, &cls);
        if (r < 0)
                return r;

        s = alloc_tenant_find(a, req->tenant);
        if (s != NO_SLOT && a->slots[s].cls == cls && a->slots[s].node == req->numa_node &&
            streq(a->slots[s].pin, pin) && same_guest(a, &a->slots[s], req->guest)) {
                /*
                 * Nothing changes. But a tenant of a refusing class may be waiting, because its CPU
                 * left the RT set or a restart could not give the CPU back. That tenant does not
                 * have what it asks for, so the request is refused.
                 */
                if (class_rt_need(&a->classes[cls]) > 0 && !a->classes[cls].rt_fallback &&
                    !alloc_rt_booked(a, s, &node)) {
                        r = alloc_decisions_reserve(ret, 1);
                        if (r < 0)
                                return r;
                        if (alloc_rt_feasible(a, &a->classes[cls], req->guest, req->tenant, node, why, sizeof(why)))
                                snprintf(why, sizeof(why), "its guest waits for RT CPUs on node %d", node);
                        return refuse_rt(a, req, cls, why, ret);
                }
                return 0;
        }

        r = alloc_decisions_reserve(ret, alloc_decisions_bound(a) + a->n_guests + 1);
        if (r < 0)
                return r;
        /*
         * Check the RT CPUs first, so that a request whose class cannot get them changes nothing.
         * A change of node alone keeps what the tenant has, so it needs no check. Classes that
         * book no RT CPUs, or that fall back without them, need no check either, and no VF pick
         * to tell the node.
         */
        if (class_rt_need(&a->classes[cls]) > 0 && !a->classes[cls].rt_fallback &&
            !(s != NO_SLOT && a->slots[s].cls == cls && same_guest(a, &a->slots[s], req->guest)) &&
            !alloc_rt_feasible(a, &a->classes[cls], req->guest, req->tenant,
                               prospective_node(a, s, cls, req->numa_node, pin), why, sizeof(why)))
                return refuse_rt(a, req, cls, why, ret);
        /*
         * The check above cannot see everything that the request does: the VF it gets, who is
         * moved for it, and which guests are served first. So a class that refuses without RT
         * CPUs is checked again on the outcome. A request that leaves the tenant without RT CPUs
         * is undone whole.
         */
        if (class_rt_need(&a->classes[cls]) > 0 && !a->classes[cls].rt_fallback) {
                r = allocator_clone(a, &undo);
                if (r < 0)
                        return r;
        }
        n_before = ret->n_decisions;
        if (s != NO_SLOT)
                r = request_replace(a, s, cls, req->numa_node, pin, ret);
        else {
                r = alloc_tenants_reserve(a);
                if (r < 0)
                        return r;
                r = request_new(a, req, cls, ret);
        }
        if (r == 0)
                r = settle_rt(a, req->tenant, req->guest, ret);
        if (r != 0 || !undo)
                return r;
        s = alloc_tenant_find(a, req->tenant);
        if (s == NO_SLOT || alloc_rt_booked(a, s, &node))
                return 0;
        swap = *a;
        *a = *undo;
        *undo = swap;
        ret->n_decisions = n_before;
        /* It was feasible before but not after, because its CPUs went to guests that waited longer. */

        if (alloc_rt_feasible(a, &a->classes[cls], req->guest, req->tenant, node, why, sizeof(why)))
                snprintf(why, sizeof(why), "no RT CPU free on node %d for it (guests waiting longer come first)", node);
        return refuse_rt(a, req, cls, why, ret);
}

int allocator_release(Allocator *a, const char *tenant, AllocDecisions *ret) {
        char old[PCI_ADDR_MAX];
        uint32_t s;
        int r;

        if (!a || !ret || !tenant_id_valid(tenant))
                return -EINVAL;
        s = alloc_tenant_find(a, tenant);
        if (s == NO_SLOT)
                return -ENOENT;
        r = alloc_decisions_reserve(ret, alloc_decisions_bound(a));
        if (r < 0)
                return r;

        strscpy(old, sizeof(old), vf_addr(a, &a->slots[s]));
        alloc_tenant_unlist(a, s);
        if (a->slots[s].nic == ALLOC_NIC_VF)
                alloc_vf_drop(a, s);
        r = alloc_decide(ret, ALLOC_DECISION_RELEASED, &a->slots[s], old, NULL, "released");
        if (r >= 0)
                r = alloc_rt_leave(a, s, ret);
        alloc_tenant_destroy(a, s);
        if (r < 0)
                return r;
        return alloc_fill(a, ret);
}
