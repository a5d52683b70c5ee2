/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator-rt.c — RT CPUs booked per guest like VFs: never double-booked, and every change a decision */

/*
 * R11 in docs/REQUIREMENTS.md: an RT guest's vCPU 0 runs on an RT core at SCHED_FIFO, and a
 * spinning FIFO vCPU owns its core. So RT CPUs are handed out like VFs. A guest whose class asks
 * for rt_cpus = N gets N RT CPUs on its NIC's NUMA node, which is its VF's node, or else the
 * guest's own. Each CPU serves at most rt_share guests. An rt_share of 1 gives a guest its own
 * core, and more suits guests with a low duty cycle. A CPU never serves more guests than the
 * least rt_share among them allows.
 *
 * Ties go to the CPU with the fewest guests, then to the lowest CPU number. With no node to
 * follow, the node with the most bookable CPUs wins, then the lowest node. The tenants of one
 * guest share its booking, which is freed with the last of them. When no CPU is free, a class
 * with rt_fallback is placed without one, and its vCPUs stay on housekeeping CPUs. It is
 * served in arrival order when a CPU frees up. Any other class is refused. A booking never
 * moves while its CPUs stay in the pool: NIC moves, re-classes that still fit and restarts
 * all keep it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator-internal.h"

/*
 * A tenant id cannot contain a space. So the key of a tenant's own guest never equals a domain
 * that is named like a tenant id.
 */
void alloc_rt_guest_key(const char *guest, const char *tenant, char *buf, size_t size) {
        if (guest && guest[0])
                strscpy(buf, size, guest);
        else
                snprintf(buf, size, RT_OWN_GUEST_PREFIX "%s", tenant);
}

static uint32_t guest_find(const Allocator *a, const char *key) {
        for (size_t i = 0; i < a->n_guests; i++)
                if (a->guests[i].n_tenants > 0 && streq(a->guests[i].name, key))
                        return (uint32_t) i;
        return NO_GUEST;
}

size_t alloc_rt_cpu_index(const Allocator *a, unsigned cpu) {
        for (size_t i = 0; i < a->n_rt; i++)
                if (a->rt[i].cpu == cpu)
                        return i;
        return SIZE_MAX;
}

static bool rt_bookable(const RtCpu *c, int node, unsigned share) {
        return (node < 0 || c->node == node) && (c->users == 0 || c->users < MIN(c->cap, share));
}

/* The CPU with the fewest guests comes first, then the lowest CPU, so bookings spread before they share. */
static bool rt_better(const RtCpu *x, const RtCpu *y) {
        return x->users != y->users ? x->users < y->users : x->cpu < y->cpu;
}

/*
 * Put the pool indexes of the want best bookable CPUs on exactly node into ret. A node of -1
 * means the CPUs of unknown node. Returns false when there are too few.
 */
static bool pick_on_node(const Allocator *a, int node, unsigned want, unsigned share, size_t *ret) {
        unsigned n = 0;

        for (size_t i = 0; i < a->n_rt; i++) {
                unsigned k;

                if (a->rt[i].node != node || !rt_bookable(&a->rt[i], node, share))
                        continue;
                /* Insert into the best want CPUs so far, which is cheap: want is at most ALLOC_RT_CPUS_MAX. */
                for (k = MIN(n, want); k > 0 && rt_better(&a->rt[i], &a->rt[ret[k - 1]]); k--)
                        if (k < want)
                                ret[k] = ret[k - 1];
                if (k < want) {
                        ret[k] = i;
                        n = MIN(n + 1, want);
                }
        }
        return n == want;
}

/* Where want CPUs go for a guest on node. A node below 0 means the node with the most bookable CPUs. */
static bool rt_pick(const Allocator *a, int node, unsigned want, unsigned share, size_t *ret) {
        unsigned count[N_BUCKETS] = {}, best = N_BUCKETS;

        if (node >= 0)
                return pick_on_node(a, node, want, share, ret);
        /*
         * All of a guest's CPUs are on one node, because its vCPUs share its memory. Ties go to
         * the lowest node, and the unknown node, -1, comes last. One pass counts every node,
         * because ClassAvailable asks this once for each guest it counts.
         */
        for (size_t i = 0; i < a->n_rt; i++)
                count[bucket(a->rt[i].node)] += rt_bookable(&a->rt[i], -1, share);
        for (unsigned k = 1; k <= N_BUCKETS; k++) {
                unsigned b = k % N_BUCKETS;
                if (count[b] > 0 && (best == N_BUCKETS || count[b] > count[best]))
                        best = b;
        }
        if (best == N_BUCKETS || count[best] < want)
                return false;
        return pick_on_node(a, (int) best - 1, want, share, ret);
}

int alloc_rt_node(const Allocator *a, const Tenant *t) {
        if (t->nic == ALLOC_NIC_VF && t->vf != NO_VF && a->pool[t->vf].vf.numa_node >= 0)
                return a->pool[t->vf].vf.numa_node;
        return t->node;
}

static void recompute_cap(Allocator *a, size_t idx) {
        RtCpu *c = &a->rt[idx];

        c->users = 0;
        c->cap = ALLOC_RT_SHARE_MAX;
        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                if (x->n_tenants == 0)
                        continue;
                for (unsigned k = 0; k < x->n_cpus; k++)
                        if (x->cpus[k] == c->cpu) {
                                c->users++;
                                c->cap = MIN(c->cap, x->share);
                        }
        }
}

/* Book n more CPUs for g, given as pool indexes, after those it has. */
static void book(Allocator *a, RtGuest *g, const size_t *idx, unsigned n) {
        for (unsigned k = 0; k < n; k++) {
                RtCpu *c = &a->rt[idx[k]];
                g->cpus[g->n_cpus++] = (uint16_t) c->cpu;
                c->cap = c->users == 0 ? g->share : MIN(c->cap, g->share);
                c->users++;
        }
}

static void unbook(Allocator *a, RtGuest *g) {
        unsigned n = g->n_cpus;
        uint16_t cpus[ALLOC_RT_CPUS_MAX];

        memcpy(cpus, g->cpus, sizeof(cpus));
        g->n_cpus = 0;
        for (unsigned k = 0; k < n; k++) {
                size_t i = alloc_rt_cpu_index(a, cpus[k]);
                if (i != SIZE_MAX)
                        recompute_cap(a, i);
        }
}

/* Format the CPUs as "4,5" for the text of a reason. */
static void format_cpus(const uint16_t *cpus, unsigned n, char *buf, size_t size) {
        size_t k = 0;

        buf[0] = 0;
        for (unsigned i = 0; i < n; i++)
                strjoin_appendf(buf, size, &k, "%u", cpus[i]);
}

/* Explain why nothing is bookable on node: what there is, and who holds it. */
static void explain_full(const Allocator *a, int node, unsigned want, unsigned share, char *buf, size_t size) {
        char who[96] = "";
        size_t k = 0;
        unsigned on_node = 0;

        for (size_t i = 0; i < a->n_rt; i++)
                on_node += node < 0 || a->rt[i].node == node;
        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                if (x->n_tenants == 0 || x->n_cpus == 0 || (node >= 0 && x->node >= 0 && x->node != node))
                        continue;
                strjoin_appendf(who, sizeof(who), &k, "%s", x->name);
        }
        if (a->n_rt == 0)
                snprintf(buf, size, "no RT CPU: the host has none ([cpus] rt, or isolated CPUs)");
        else if (on_node == 0)
                snprintf(buf, size, "no RT CPU on node %d", node);
        else {
                char where[24] = "";
                if (node >= 0)
                        snprintf(where, sizeof(where), " on node %d", node);
                if (want > 1)
                        snprintf(buf, size, "not %u RT CPUs free%s (%u RT CPU%s there, rt_cpu_share %u%s%s)", want,
                                 where, on_node, on_node == 1 ? "" : "s", share, who[0] ? "; held by " : "", who);
                else
                        snprintf(buf, size, "no RT CPU free%s (%u RT CPU%s there, rt_cpu_share %u%s%s)", where,
                                 on_node, on_node == 1 ? "" : "s", share, who[0] ? "; held by " : "", who);
        }
}

static bool guest_has(const RtGuest *g, unsigned cpu) {
        for (unsigned k = 0; k < g->n_cpus; k++)
                if (g->cpus[k] == cpu)
                        return true;
        return false;
}

/*
 * Whether a booked guest can take a tenant that needs want CPUs at share. The guest's CPUs must
 * serve no more guests than share allows, and the CPUs it lacks must be bookable on its node.
 * ret receives the pool indexes of the extra CPUs. The guest's own CPUs are never counted twice.
 */
static bool guest_fits(const Allocator *a, const RtGuest *g, unsigned want, unsigned share, size_t *ret) {
        unsigned n = 0, need = want > g->n_cpus ? want - g->n_cpus : 0;

        for (unsigned k = 0; k < g->n_cpus; k++) {
                size_t i = alloc_rt_cpu_index(a, g->cpus[k]);
                if (i != SIZE_MAX && a->rt[i].users > share)
                        return false;
        }
        for (size_t i = 0; i < a->n_rt && n < need; i++)
                if (!guest_has(g, a->rt[i].cpu) && rt_bookable(&a->rt[i], g->node, share))
                        ret[n++] = i;
        return n == need;
}

bool alloc_rt_feasible(const Allocator *a, const AllocClass *c, const char *guest, const char *tenant, int node,
                       char *why, size_t size) {
        size_t idx[ALLOC_RT_CPUS_MAX];
        char key[ALLOC_GUEST_MAX];
        unsigned want = class_rt_need(c), share = MAX(c->rt_share, 1u);
        uint32_t g;

        if (want == 0 || c->rt_fallback)
                return true;
        alloc_rt_guest_key(guest, tenant, key, sizeof(key));
        g = guest_find(a, key);
        /* Once joined, the guest books at its strictest tenant's share, as join and grow will ask. */
        if (g != NO_GUEST)
                share = MIN(share, a->guests[g].share);
        if (g != NO_GUEST && a->guests[g].n_cpus > 0) {
                if (guest_fits(a, &a->guests[g], want, share, idx))
                        return true;
                explain_full(a, a->guests[g].node, want - MIN(want, a->guests[g].n_cpus), share, why, size);
                return false;
        }
        if (g != NO_GUEST) {
                /* The guest waits for CPUs, and its tenants' CPUs go where it is. */
                node = a->guests[g].node;
                want = MAX(want, a->guests[g].want);
        }
        if (rt_pick(a, node, want, share, idx))
                return true;
        explain_full(a, node, want, share, why, size);
        return false;
}

unsigned alloc_rt_room(const Allocator *a, const AllocClass *c, int node, unsigned cap) {
        _cleanup_free_ RtCpu *rt = NULL;
        unsigned want = class_rt_need(c), share = MAX(c->rt_share, 1u), k;
        Allocator sim;

        if (want == 0 || c->rt_fallback || cap == 0)
                return cap;
        if (a->n_rt == 0)
                return 0;
        /*
         * Greedy booking can strand room that a count of free places would promise, so the
         * guests are booked one after another on a copy of the RT CPUs, as rt_pick() books them.
         * Without memory for the copy, the answer is 0, which never promises too much.
         */
        rt = malloc(a->n_rt * sizeof(RtCpu));
        if (!rt)
                return 0;
        memcpy(rt, a->rt, a->n_rt * sizeof(RtCpu));
        sim = *a;
        sim.rt = rt;
        for (k = 0; k < cap; k++) {
                size_t idx[ALLOC_RT_CPUS_MAX];

                if (!rt_pick(&sim, node, want, share, idx))
                        break;
                for (unsigned j = 0; j < want; j++) {
                        RtCpu *x = &rt[idx[j]];
                        x->cap = x->users == 0 ? share : MIN(x->cap, share);
                        x->users++;
                }
        }
        return k;
}

/* Make a guest for key, as tenant t's class c books it. The caller adds its tenants and CPUs. */
static uint32_t guest_new(Allocator *a, const char *key, const Tenant *t, const AllocClass *c) {
        size_t i;

        for (i = 0; i < a->n_guests; i++)
                if (a->guests[i].n_tenants == 0)
                        break;
        if (i == a->n_guests) {
                if (GREEDY_REALLOC(a->guests, a->n_guests_allocated, a->n_guests + 1) < 0)
                        return NO_GUEST;
                a->n_guests++;
        }
        a->guests[i] = (RtGuest) { .want = (uint8_t) class_rt_need(c), .share = MAX(c->rt_share, 1u),
                                   .node = alloc_rt_node(a, t), .seq = t->seq, .fallback = c->rt_fallback };
        strscpy(a->guests[i].name, sizeof(a->guests[i].name), key);
        return (uint32_t) i;
}

/* The tenant's last decision in d gets the guest's CPUs and text. Without one, a new RT_CPUS decision does. */
static int note_booking(const Tenant *t, const RtGuest *g, AllocDecisions *d, const char *text) {
        AllocDecision *x = NULL;
        size_t len;
        int r;

        for (size_t i = d->n_decisions; i > 0; i--)
                if (streq(d->decisions[i - 1].tenant, t->id)) {
                        x = &d->decisions[i - 1];
                        break;
                }
        if (!x) {
                r = alloc_decide(d, ALLOC_DECISION_RT_CPUS, t, NULL, NULL, "%s", "");
                if (r < 0)
                        return r;
                x = &d->decisions[d->n_decisions - 1];
        }
        x->rt_changed = true;
        x->n_rt_cpus = g->n_cpus;
        memcpy(x->rt_cpus, g->cpus, sizeof(x->rt_cpus));
        len = strlen(x->reason);
        snprintf(x->reason + len, sizeof(x->reason) - len, "%s%s", len ? "; " : "", text);
        return 0;
}

/*
 * The reason for a guest that waits:
 * "<prefix>; <why nothing is free>; vCPUs on housekeeping CPUs until one is".
 */
static void explain_waiting(const Allocator *a, const RtGuest *g, const char *prefix, char *buf, size_t size) {
        size_t len;

        snprintf(buf, size, "%s%s", prefix, prefix[0] ? "; " : "");
        len = strlen(buf);
        explain_full(a, g->node, g->want, g->share, buf + len, size - len);
        len = strlen(buf);
        snprintf(buf + len, size - len, "; vCPUs on housekeeping CPUs until one is");
}

static bool try_book(Allocator *a, RtGuest *g) {
        size_t idx[ALLOC_RT_CPUS_MAX];

        if (!rt_pick(a, g->node, g->want, g->share, idx))
                return false;
        book(a, g, idx, g->want);
        return true;
}

/*
 * A booked guest serves a tenant that needs want CPUs at share. The booking grows to what the
 * neediest tenant's class wants, and the CPUs it has stay, vCPU 0's first. Its share becomes
 * the strictest. Returns 1 when the guest cannot serve the tenant, with nothing changed.
 */
static int guest_grow(Allocator *a, RtGuest *g, const Tenant *t, unsigned want, unsigned share, AllocDecisions *d) {
        size_t idx[ALLOC_RT_CPUS_MAX];
        unsigned old = g->n_cpus;
        char cpus[64], text[ALLOC_REASON_MAX];

        if (share >= g->share && want <= g->n_cpus)
                return 0;
        /* The CPUs that it gains serve the guest at its strictest tenant's share, not at this tenant's. */
        share = MIN(share, g->share);
        if (!guest_fits(a, g, want, share, idx))
                return 1;
        g->share = MIN(g->share, share);
        for (unsigned k = 0; k < g->n_cpus; k++)
                recompute_cap(a, alloc_rt_cpu_index(a, g->cpus[k]));
        if (want <= old)
                return 0;
        book(a, g, idx, want - old);
        g->want = (uint8_t) want;
        format_cpus(g->cpus, g->n_cpus, cpus, sizeof(cpus));
        snprintf(text, sizeof(text), "guest %.64s grows to RT CPUs %s", g->name, cpus);
        return note_booking(t, g, d, text);
}

bool alloc_rt_booked(const Allocator *a, uint32_t s, int *ret_node) {
        const Tenant *t = &a->slots[s];
        unsigned want = class_rt_need(tenant_class(a, t));

        *ret_node = t->guest != NO_GUEST ? a->guests[t->guest].node : alloc_rt_node(a, t);
        return want == 0 || (t->guest != NO_GUEST && a->guests[t->guest].n_cpus >= want);
}

int alloc_rt_refit(Allocator *a, uint32_t s, AllocDecisions *d) {
        Tenant *t = &a->slots[s];
        const AllocClass *c = tenant_class(a, t);
        unsigned want = class_rt_need(c);

        if (t->guest == NO_GUEST || want == 0 || a->guests[t->guest].n_cpus == 0)
                return 1;
        return guest_grow(a, &a->guests[t->guest], t, want, MAX(c->rt_share, 1u), d);
}

int alloc_rt_join(Allocator *a, uint32_t s, const char *guest, AllocDecisions *d) {
        Tenant *t = &a->slots[s];
        const AllocClass *c = tenant_class(a, t);
        unsigned want = class_rt_need(c);
        char key[ALLOC_GUEST_MAX], why[ALLOC_REASON_MAX];
        RtGuest *g;
        uint32_t gi;
        int r;

        if (want == 0)
                return 0;
        alloc_rt_guest_key(guest, t->id, key, sizeof(key));
        gi = guest_find(a, key);
        if (gi == NO_GUEST) {
                gi = guest_new(a, key, t, c);
                if (gi == NO_GUEST)
                        return -ENOMEM;
        }
        g = &a->guests[gi];
        g->n_tenants++;
        t->guest = gi;
        if (g->n_cpus > 0 && g->n_tenants > 1) {
                r = guest_grow(a, g, t, want, MAX(c->rt_share, 1u), d);
                /* Only a class that falls back gets here if growing fails. It shares what there is. */
                return r > 0 ? 0 : r;
        }
        g->want = (uint8_t) MAX(g->want, want);
        g->share = MIN(g->share, MAX(c->rt_share, 1u));
        if (try_book(a, g)) {
                char cpus[64];
                format_cpus(g->cpus, g->n_cpus, cpus, sizeof(cpus));
                snprintf(why, sizeof(why), "RT CPU%s %s", g->n_cpus > 1 ? "s" : "", cpus);
        } else
                explain_waiting(a, g, "", why, sizeof(why));
        return note_booking(t, g, d, why);
}

static const Tenant *guest_first_tenant(const Allocator *a, uint32_t g) {
        for (size_t i = 0; i < a->n_tenants; i++)
                if (a->slots[a->by_id[i]].guest == g)
                        return &a->slots[a->by_id[i]];
        return NULL;
}

static int guest_seq_cmp(const void *x, const void *y, void *userdata) {
        const Allocator *a = userdata;
        uint64_t p = a->guests[*(const uint32_t *) x].seq, q = a->guests[*(const uint32_t *) y].seq;
        return (p > q) - (p < q);
}

/* Serve the guests without CPUs that should have some, in arrival order. Each books what it can. */
int alloc_rt_serve(Allocator *a, AllocDecisions *d) {
        _cleanup_free_ uint32_t *order = NULL;
        size_t n = 0;

        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                n += x->n_tenants > 0 && x->n_cpus == 0 && (x->rebook || x->fallback);
        }
        if (n == 0)
                return 0;
        order = malloc(n * sizeof(uint32_t));
        if (!order)
                return -ENOMEM;
        n = 0;
        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                if (x->n_tenants > 0 && x->n_cpus == 0 && (x->rebook || x->fallback))
                        order[n++] = (uint32_t) g;
        }
        qsort_r(order, n, sizeof(uint32_t), guest_seq_cmp, a);

        for (size_t i = 0; i < n; i++) {
                RtGuest *x = &a->guests[order[i]];
                const Tenant *first = guest_first_tenant(a, order[i]);
                char why[ALLOC_REASON_MAX], cpus[64];
                bool booked = try_book(a, x);
                int r;

                if (!first)
                        return -EUCLEAN;
                if (!booked && !x->rebook)
                        continue;   /* It still waits, as it did, so there is nothing to say. */
                if (booked) {
                        format_cpus(x->cpus, x->n_cpus, cpus, sizeof(cpus));
                        snprintf(why, sizeof(why), "%s%sRT CPU%s %s", x->lost, x->lost[0] ? ": now " : "",
                                 x->n_cpus > 1 ? "s" : "", cpus);
                } else
                        explain_waiting(a, x, x->lost, why, sizeof(why));
                /* A guest restored with nothing to book waits, whatever its class does for a new arrival. */
                x->rebook = false;
                x->fallback = true;
                x->lost[0] = 0;
                r = note_booking(first, x, d, why);
                if (r < 0)
                        return r;
        }
        return 0;
}

int alloc_rt_leave(Allocator *a, uint32_t s, AllocDecisions *d) {
        Tenant *t = &a->slots[s];
        RtGuest *g;

        if (t->guest == NO_GUEST)
                return 0;
        g = &a->guests[t->guest];
        t->guest = NO_GUEST;
        if (--g->n_tenants > 0)
                return 0;
        /*
         * The guest's last tenant is gone. Its decision says that the guest has no RT CPUs any
         * more, so that the guest's placement leaves them before the next guest is put there.
         */
        for (size_t i = d && g->n_cpus > 0 ? d->n_decisions : 0; i > 0; i--)
                if (streq(d->decisions[i - 1].tenant, t->id)) {
                        d->decisions[i - 1].rt_changed = true;
                        d->decisions[i - 1].n_rt_cpus = 0;
                        break;
                }
        unbook(a, g);
        return d ? alloc_rt_serve(a, d) : 0;
}

int alloc_rt_restore(Allocator *a, uint32_t s, const char *guest, const uint16_t *cpus, unsigned n) {
        Tenant *t = &a->slots[s];
        const AllocClass *c = tenant_class(a, t);
        unsigned want = class_rt_need(c);
        size_t idx[ALLOC_RT_CPUS_MAX];
        char key[ALLOC_GUEST_MAX];
        RtGuest *g;
        uint32_t gi;

        if (want == 0)
                return 0;
        alloc_rt_guest_key(guest, t->id, key, sizeof(key));
        gi = guest_find(a, key);
        if (gi != NO_GUEST) {
                g = &a->guests[gi];
                g->n_tenants++;
                t->guest = gi;
                /*
                 * The share is the strictest tenant's, whichever tenant was restored first. The
                 * want grows only to what the booking meets, as when a smaller want was restored
                 * first. A want that the booking does not meet is for the reconcile to book, with
                 * a decision.
                 */
                g->share = MIN(g->share, MAX(c->rt_share, 1u));
                if (g->n_cpus >= want)
                        g->want = (uint8_t) MAX(g->want, want);
                for (unsigned k = 0; k < g->n_cpus; k++)
                        recompute_cap(a, alloc_rt_cpu_index(a, g->cpus[k]));
                return 0;
        }
        gi = guest_new(a, key, t, c);
        if (gi == NO_GUEST)
                return -ENOMEM;
        g = &a->guests[gi];
        g->n_tenants = 1;
        t->guest = gi;

        /*
         * The saved booking is the guest's, and another of its tenants may have grown it past
         * this tenant's class. So all of it is kept, not cut to this class's want.
         */
        if (n >= want && n <= ALLOC_RT_CPUS_MAX)
                want = n;
        g->want = (uint8_t) want;

        /* Book the saved CPUs if each is still an RT CPU with room. Otherwise the reconcile books again. */
        for (unsigned k = 0; k < MIN(n, want); k++) {
                idx[k] = alloc_rt_cpu_index(a, cpus[k]);
                if (idx[k] == SIZE_MAX) {
                        snprintf(g->lost, sizeof(g->lost), "saved RT CPU %u is not an RT CPU now", cpus[k]);
                        break;
                }
                if (!rt_bookable(&a->rt[idx[k]], -1, g->share)) {
                        snprintf(g->lost, sizeof(g->lost), "saved RT CPU %u has no room", cpus[k]);
                        break;
                }
        }
        if (!g->lost[0] && n >= want) {
                book(a, g, idx, want);
                return 0;
        }
        if (!g->lost[0] && n > 0)
                snprintf(g->lost, sizeof(g->lost), "class %s needs %u RT CPUs now", c->name, want);
        g->rebook = true;
        return 0;
}

static int rt_cpu_cmp(const void *x, const void *y) {
        unsigned a = ((const RtCpu *) x)->cpu, b = ((const RtCpu *) y)->cpu;
        return (a > b) - (a < b);
}

int allocator_set_rt_cpus(Allocator *a, const AllocRtCpu *cpus, size_t n, AllocDecisions *ret) {
        _cleanup_free_ RtCpu *rt = NULL;

        if (!a || !ret || (n > 0 && !cpus) || n > ALLOC_RT_POOL_MAX)
                return -EINVAL;
        if (n > 0) {
                rt = calloc(n, sizeof(RtCpu));
                if (!rt)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                if (cpus[i].cpu >= ALLOC_RT_POOL_MAX || cpus[i].numa_node < -1 || cpus[i].numa_node >= ALLOC_NODES_MAX)
                        return -EINVAL;
                rt[i] = (RtCpu) { .cpu = cpus[i].cpu, .node = cpus[i].numa_node, .cap = ALLOC_RT_SHARE_MAX };
        }
        qsort_safe(rt, n, sizeof(RtCpu), rt_cpu_cmp);
        for (size_t i = 1; i < n; i++)
                if (rt[i - 1].cpu == rt[i].cpu)
                        return -EINVAL;
        /* Every cycle hands the RT CPUs over. With the same CPUs, there is nothing to book again or serve. */

        if (n == a->n_rt) {
                bool same = true;
                for (size_t i = 0; i < n && same; i++)
                        same = rt[i].cpu == a->rt[i].cpu && rt[i].node == a->rt[i].node;
                if (same)
                        return 0;
        }
        if (alloc_decisions_reserve(ret, a->n_guests + 1) < 0)
                return -ENOMEM;

        /* Nothing fails from here on. A guest keeps its booking while all its CPUs stay. */
        free(a->rt);
        a->rt = TAKE_PTR(rt);
        a->n_rt = n;
        for (size_t g = 0; g < a->n_guests; g++) {
                RtGuest *x = &a->guests[g];
                if (x->n_tenants == 0 || x->n_cpus == 0)
                        continue;
                for (unsigned k = 0; k < x->n_cpus; k++) {
                        size_t i = alloc_rt_cpu_index(a, x->cpus[k]);
                        if (i == SIZE_MAX) {
                                snprintf(x->lost, sizeof(x->lost), "RT CPU %u left the RT CPUs", (unsigned) x->cpus[k]);
                                x->n_cpus = 0;
                                x->rebook = true;
                                break;
                        }
                }
        }
        for (size_t i = 0; i < a->n_rt; i++)
                recompute_cap(a, i);
        return alloc_rt_serve(a, ret);
}

int alloc_rt_verify(const Allocator *a) {
        for (size_t i = 0; i < a->n_rt; i++) {
                unsigned users = 0, cap = ALLOC_RT_SHARE_MAX;

                if (i > 0 && a->rt[i - 1].cpu >= a->rt[i].cpu)
                        return -EUCLEAN;
                for (size_t g = 0; g < a->n_guests; g++)
                        for (unsigned k = 0; a->guests[g].n_tenants > 0 && k < a->guests[g].n_cpus; k++)
                                if (a->guests[g].cpus[k] == a->rt[i].cpu) {
                                        users++;
                                        cap = MIN(cap, a->guests[g].share);
                                }
                if (users != a->rt[i].users || (users > 0 && (cap != a->rt[i].cap || users > cap)))
                        return -EUCLEAN;
        }
        for (size_t g = 0; g < a->n_guests; g++) {
                const RtGuest *x = &a->guests[g];
                uint32_t n = 0;

                if (x->n_tenants == 0)
                        continue;
                if (x->n_cpus != 0 && x->n_cpus != x->want)
                        return -EUCLEAN;
                for (unsigned k = 0; k < x->n_cpus; k++) {
                        if (alloc_rt_cpu_index(a, x->cpus[k]) == SIZE_MAX)
                                return -EUCLEAN;
                        for (unsigned j = 0; j < k; j++)
                                if (x->cpus[j] == x->cpus[k])
                                        return -EUCLEAN;
                }
                for (size_t i = 0; i < a->n_tenants; i++)
                        n += a->slots[a->by_id[i]].guest == g;
                if (n != x->n_tenants)
                        return -EUCLEAN;
        }
        for (size_t i = 0; i < a->n_tenants; i++) {
                const Tenant *t = &a->slots[a->by_id[i]];
                bool wants = class_rt_need(tenant_class(a, t)) > 0;
                if (wants != (t->guest != NO_GUEST) || (t->guest != NO_GUEST && t->guest >= a->n_guests))
                        return -EUCLEAN;
        }
        return 0;
}
