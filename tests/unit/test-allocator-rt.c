/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-allocator-rt.c — RT CPUs booked per guest: scenarios, then random sequences (no CPU over-booked, determinism) */

#include <stdint.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "sriovd/core/guest-placement.h"
#include "test.h"

static const AllocClass classes[] = {
        { .name = "rt", .vnic = VNIC_SRIOV_REQUIRED, .rank = 100, .rt_cpus = 1, .rt_share = 1 },
        { .name = "rt2", .vnic = VNIC_SRIOV_REQUIRED, .rank = 90, .rt_cpus = 2, .rt_share = 1 },
        { .name = "rt-soft", .vnic = VNIC_SRIOV_PREFERRED, .rank = 50, .rt_cpus = 1, .rt_share = 1, .rt_fallback = true },
        { .name = "rt-shared", .vnic = VNIC_SRIOV_PREFERRED, .rank = 40, .rt_cpus = 1, .rt_share = 3,
          .allow_remote_numa = true },
        { .name = "plain", .vnic = VNIC_SRIOV_PREFERRED, .rank = 10, .allow_remote_numa = true },
        { .name = "web", .vnic = VNIC_VIRTIO },
};

/* 4 VFs per node on 2 nodes; RT CPUs 2,3 on node 0 and 6,7 on node 1 (unless given). */
static Allocator *mk(const AllocRtCpu *rt, size_t n_rt) {
        static const AllocRtCpu def[] = { { 2, 0 }, { 3, 0 }, { 6, 1 }, { 7, 1 } };
        AllocPolicy pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        AllocVf vfs[8];
        AllocDecisions d = {};
        Allocator *a = NULL;

        for (unsigned i = 0; i < 8; i++) {
                vfs[i] = (AllocVf) { .numa_node = (int) (i / 4), .healthy = true };
                snprintf(vfs[i].addr, sizeof(vfs[i].addr), "0000:%02x:10.%u", 0x41 + 0x40 * (i / 4), i % 4);
                snprintf(vfs[i].pf, sizeof(vfs[i].pf), "0000:%02x:00.0", 0x41 + 0x40 * (i / 4));
        }
        pol.headroom = 0;
        ASSERT_EQ(allocator_new(&pol, &a), 0);
        ASSERT_EQ(allocator_set_rt_cpus(a, rt ?: def, rt ? n_rt : ELEMENTSOF(def), &d), 0);
        ASSERT_EQ(allocator_set_pool(a, vfs, 8, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        alloc_decisions_done(&d);
        return a;
}

static int req(Allocator *a, const char *id, const char *cls, int node, const char *guest, AllocDecisions *d) {
        AllocRequest r = { .tenant = id, .class_name = cls, .numa_node = node, .guest = guest };
        alloc_decisions_clear(d);
        return allocator_request(a, &r, d);
}

/* The tenant's RT CPUs as "2,3" ("" = none). */
static const char *cpus_of(Allocator *a, const char *id) {
        static char buf[64];
        AllocTenant t;
        size_t k = 0;

        ASSERT_EQ(allocator_find_tenant(a, id, &t), 0);
        buf[0] = 0;
        for (unsigned i = 0; i < t.n_rt_cpus; i++)
                k += (size_t) snprintf(buf + k, sizeof(buf) - k, "%s%u", i ? "," : "", t.rt_cpus[i]);
        return buf;
}

/* Scarce RT CPUs: 3 RT guests, 2 RT CPUs on their node. Two are placed, each on its own CPU;
 * the third is refused naming the RT CPU (refusing class), or placed without one (falling-back
 * class) and given the CPU the first one frees. */
TEST(three_guests_two_cpus) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        AllocDecisions d = {};

        ASSERT_EQ(req(a, "g1-nic", "rt", 0, "g1", &d), 0);
        ASSERT_STREQ(cpus_of(a, "g1-nic"), "2");
        ASSERT(d.decisions[0].rt_changed);
        ASSERT(strstr(d.decisions[0].reason, "RT CPU 2"));
        ASSERT_EQ(req(a, "g2-nic", "rt", 0, "g2", &d), 0);
        ASSERT_STREQ(cpus_of(a, "g2-nic"), "3");

        ASSERT_EQ(req(a, "g3-nic", "rt", 0, "g3", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_EQ(d.decisions[0].missing, ALLOC_MISSING_RT_CPU);
        ASSERT(strstr(d.decisions[0].reason, "no RT CPU free on node 0"));
        ASSERT(strstr(d.decisions[0].reason, "g1, g2"));
        ASSERT_EQ(allocator_n_tenants(a), 2);   /* nothing changed: no VF taken */

        /* The falling-back class: placed (a VF), vCPUs on housekeeping, waiting for a CPU. */
        ASSERT_EQ(req(a, "g3-nic", "rt-soft", 0, "g3", &d), 0);
        ASSERT_STREQ(cpus_of(a, "g3-nic"), "");
        ASSERT(strstr(d.decisions[d.n_decisions - 1].reason, "until one is"));
        {
                AllocTenant t;
                AllocStats st;
                ASSERT_EQ(allocator_find_tenant(a, "g3-nic", &t), 0);
                ASSERT(t.rt_waiting);
                ASSERT_EQ(t.nic, ALLOC_NIC_VF);
                allocator_stats(a, &st);
                ASSERT_EQ(st.rt_cpus, 4);
                ASSERT_EQ(st.rt_cpus_booked, 2);
                ASSERT_EQ(st.rt_guests, 2);
                ASSERT_EQ(st.rt_guests_waiting, 1);

                /* Per node: node 0's two CPUs booked by g1 and g2, g3 waiting there; node 1 idle. */
                AllocRtNode rows[ALLOC_RT_NODES_MAX];
                ASSERT_EQ(allocator_rt_nodes(a, rows, ELEMENTSOF(rows)), 2);
                ASSERT_EQ(rows[0].numa_node, 0);
                ASSERT_EQ(rows[0].cpus, 2);
                ASSERT_EQ(rows[0].booked, 2);
                ASSERT_EQ(rows[0].shared, 0);
                ASSERT_EQ(rows[0].room, 0);
                ASSERT_EQ(rows[0].guests, 2);
                ASSERT_EQ(rows[0].waiting, 1);
                ASSERT_EQ(rows[1].numa_node, 1);
                ASSERT_EQ(rows[1].cpus, 2);
                ASSERT_EQ(rows[1].booked + rows[1].guests + rows[1].waiting, 0);
                /* A short buffer gets the first rows; the count is still all of them. */
                ASSERT_EQ(allocator_rt_nodes(a, rows, 1), 2);
        }
        /* g1 leaves: its RELEASED decision says its guest has no RT CPU any more (so it is moved
         * off it first), then the CPU goes to g3, said in an RT_CPUS decision after it. */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_release(a, "g1-nic", &d), 0);
        ASSERT_STREQ(cpus_of(a, "g3-nic"), "2");
        {
                bool seen = false, released = false;
                for (size_t i = 0; i < d.n_decisions; i++)
                        if (d.decisions[i].kind == ALLOC_DECISION_RELEASED) {
                                ASSERT_STREQ(d.decisions[i].tenant, "g1-nic");
                                ASSERT(d.decisions[i].rt_changed && d.decisions[i].n_rt_cpus == 0);
                                ASSERT(!seen);
                                released = true;
                        } else if (d.decisions[i].kind == ALLOC_DECISION_RT_CPUS) {
                                ASSERT_STREQ(d.decisions[i].tenant, "g3-nic");
                                ASSERT(strstr(d.decisions[i].reason, "RT CPU 2"));
                                seen = true;
                        }
                ASSERT(seen && released);
        }
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* Tenants of one guest share its booking; it is freed with the last of them. */
TEST(guest_shares) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        AllocDecisions d = {};

        ASSERT_EQ(req(a, "a1", "rt", 1, "vm", &d), 0);
        ASSERT_EQ(req(a, "a2", "rt", 1, "vm", &d), 0);
        ASSERT_STREQ(cpus_of(a, "a1"), "6");
        ASSERT_STREQ(cpus_of(a, "a2"), "6");
        ASSERT_EQ(req(a, "b", "rt2", 1, "other", &d), ALLOCATOR_REFUSED);   /* 7 alone is not 2 */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_release(a, "a1", &d), 0);
        ASSERT_STREQ(cpus_of(a, "a2"), "6");
        ASSERT(!d.decisions[0].rt_changed);   /* a2 keeps the guest on its CPU */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_release(a, "a2", &d), 0);
        ASSERT(d.decisions[0].kind == ALLOC_DECISION_RELEASED && d.decisions[0].rt_changed);
        ASSERT_EQ(req(a, "b", "rt2", 1, "other", &d), 0);
        ASSERT_STREQ(cpus_of(a, "b"), "6,7");
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* rt_share: one CPU serves up to that many guests, and never more than the strictest allows. */
TEST(share) {
        static const AllocRtCpu one[] = { { 5, 0 } };
        _cleanup_(allocator_freep) Allocator *a = mk(one, 1);
        AllocDecisions d = {};

        ASSERT_EQ(req(a, "s1", "rt-shared", 0, "v1", &d), 0);
        {
                /* Booked by one guest of a class sharing with 3: room for 2 more such guests. */
                AllocRtNode rows[ALLOC_RT_NODES_MAX];
                ASSERT_EQ(allocator_rt_nodes(a, rows, ELEMENTSOF(rows)), 1);
                ASSERT_EQ(rows[0].booked, 1);
                ASSERT_EQ(rows[0].shared, 0);
                ASSERT_EQ(rows[0].room, 2);
        }
        ASSERT_EQ(req(a, "s2", "rt-shared", 0, "v2", &d), 0);
        ASSERT_EQ(req(a, "s3", "rt-shared", 0, "v3", &d), 0);
        ASSERT_STREQ(cpus_of(a, "s3"), "5");
        {
                AllocRtNode rows[ALLOC_RT_NODES_MAX];
                ASSERT_EQ(allocator_rt_nodes(a, rows, ELEMENTSOF(rows)), 1);
                ASSERT_EQ(rows[0].numa_node, 0);
                ASSERT_EQ(rows[0].cpus, 1);
                ASSERT_EQ(rows[0].booked, 1);
                ASSERT_EQ(rows[0].shared, 1);
                ASSERT_EQ(rows[0].room, 0);
                ASSERT_EQ(rows[0].guests, 3);
        }
        ASSERT_EQ(req(a, "s4", "rt-shared", 0, "v4", &d), ALLOCATOR_REFUSED);
        /* An exclusive guest does not join a shared CPU. */
        ASSERT_EQ(req(a, "x", "rt", 0, "vx", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* A refusing class joining a guest that waits at a stricter share (a falling-back tenant's) is
 * checked at that share, as its join books: refused, not accepted to wait. It once was: the check
 * asked at its own share 3 and found CPU 5 with room, the join asked at the guest's 1. */
TEST(join_checked_at_guest_share) {
        static const AllocRtCpu one[] = { { 5, 0 } };
        _cleanup_(allocator_freep) Allocator *a = mk(one, 1);
        AllocDecisions d = {};
        AllocTenant t;

        ASSERT_EQ(req(a, "s1", "rt-shared", 0, "v1", &d), 0);
        ASSERT_STREQ(cpus_of(a, "s1"), "5");
        ASSERT_EQ(req(a, "f1", "rt-soft", 0, "w", &d), 0);
        ASSERT_EQ(allocator_find_tenant(a, "f1", &t), 0);
        ASSERT(t.rt_waiting);
        ASSERT_EQ(req(a, "r1", "rt-shared", 0, "w", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.decisions[d.n_decisions - 1].missing, ALLOC_MISSING_RT_CPU);
        ASSERT_EQ(allocator_find_tenant(a, "r1", &t), -ENOENT);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/*
 * A refusing class is refused whatever the path: here a tenant that lost its CPU (it left the RT
 * set) waits, as a restart or a re-book leaves it; a node change of it then takes no look first
 * (it keeps what it has), and would have been accepted waiting. Refused, it stays as it was.
 */
TEST(refused_on_outcome) {
        static const AllocRtCpu two[] = { { 2, 0 }, { 3, 0 } }, one[] = { { 2, 0 } };
        _cleanup_(allocator_freep) Allocator *a = mk(two, 2);
        AllocDecisions d = {};
        AllocTenant t;
        char vf[PCI_ADDR_MAX];

        ASSERT_EQ(req(a, "a", "rt", 0, "ga", &d), 0);
        ASSERT_EQ(req(a, "b", "rt", 0, "gb", &d), 0);
        ASSERT_STREQ(cpus_of(a, "b"), "3");
        ASSERT_EQ(allocator_set_rt_cpus(a, one, 1, &d), 0);
        ASSERT_EQ(allocator_find_tenant(a, "b", &t), 0);
        ASSERT(t.rt_waiting);
        strscpy(vf, sizeof(vf), t.vf);

        ASSERT_EQ(req(a, "b", "rt", 1, "gb", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_REFUSED);
        ASSERT_EQ(d.decisions[0].missing, ALLOC_MISSING_RT_CPU);
        ASSERT_CONTAINS(d.decisions[0].reason, "no RT CPU free on node 0");
        ASSERT_EQ(allocator_find_tenant(a, "b", &t), 0);
        ASSERT(t.rt_waiting && t.numa_node == 0 && streq(t.vf, vf));   /* as it was */
        ASSERT_STREQ(cpus_of(a, "a"), "2");
        ASSERT_EQ(allocator_verify(a), 0);
        /* The same request again changes nothing, and is no yes either. */
        ASSERT_EQ(req(a, "b", "rt", 0, "gb", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.decisions[0].missing, ALLOC_MISSING_RT_CPU);
        ASSERT_EQ(allocator_find_tenant(a, "b", &t), 0);
        ASSERT(t.rt_waiting && t.numa_node == 0 && streq(t.vf, vf));
        /* A falling-back class may wait: the same change of it is made. */
        ASSERT_EQ(req(a, "b", "rt-soft", 1, "gb", &d), 0);
        ASSERT_EQ(allocator_find_tenant(a, "b", &t), 0);
        ASSERT(t.rt_waiting && t.numa_node == 1);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* The VF's node decides where the CPUs are: a guest with no preference gets both on one node. */
TEST(node_follows_vf) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        AllocDecisions d = {};
        AllocTenant t;

        ASSERT_EQ(req(a, "n", "rt2", -1, "vm", &d), 0);
        ASSERT_EQ(allocator_find_tenant(a, "n", &t), 0);
        ASSERT(t.vf);
        ASSERT_STREQ(cpus_of(a, "n"), strncmp(t.vf, "0000:41", 7) == 0 ? "2,3" : "6,7");
        /* A virtio-net class with RT CPUs would book them on the guest's node. */
        ASSERT_EQ(req(a, "w", "web", 1, "vm2", &d), 0);
        ASSERT_STREQ(cpus_of(a, "w"), "");
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* A re-class that still fits keeps the CPUs; one that no longer books gives them back. */
TEST(reclass) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        AllocDecisions d = {};

        ASSERT_EQ(req(a, "r", "rt", 0, "vm", &d), 0);
        ASSERT_STREQ(cpus_of(a, "r"), "2");
        ASSERT_EQ(req(a, "r", "rt-soft", 0, "vm", &d), 0);
        ASSERT_STREQ(cpus_of(a, "r"), "2");
        ASSERT_EQ(req(a, "r", "plain", 0, "vm", &d), 0);
        ASSERT_STREQ(cpus_of(a, "r"), "");
        ASSERT_EQ(req(a, "q", "rt2", 0, "vq", &d), 0);
        ASSERT_STREQ(cpus_of(a, "q"), "2,3");
        /* A re-class that would need a CPU there is not: refused, keeps what it has. */
        ASSERT_EQ(req(a, "r", "rt", 0, "vm", &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.decisions[0].missing, ALLOC_MISSING_RT_CPU);
        ASSERT_STREQ(alloc_missing_to_string(d.decisions[0].missing), "rt-cpu");
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* Restore keeps a saved booking while it holds; else the reconcile re-books and says why. */
TEST(restore) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        static const uint16_t three[] = { 3 }, nine[] = { 9 };
        AllocTenant t1 = { .id = "t1", .class_name = "rt", .numa_node = 0, .nic = ALLOC_NIC_VF, .vf = "0000:41:10.0",
                           .seq = 1, .guest = "vm1", .rt_cpus = three, .n_rt_cpus = 1 };
        AllocTenant t2 = { .id = "t2", .class_name = "rt", .numa_node = 0, .nic = ALLOC_NIC_VF, .vf = "0000:41:10.1",
                           .seq = 2, .guest = "vm2", .rt_cpus = nine, .n_rt_cpus = 1 };
        AllocDecisions d = {};

        ASSERT_EQ(allocator_restore_tenant(a, &t1), 0);
        ASSERT_EQ(allocator_restore_tenant(a, &t2), 0);
        ASSERT_STREQ(cpus_of(a, "t1"), "3");      /* kept, not the "better" 2 */
        ASSERT_STREQ(cpus_of(a, "t2"), "");
        ASSERT_EQ(allocator_reconcile(a, &d), 0);
        ASSERT_STREQ(cpus_of(a, "t2"), "2");
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_RT_CPUS);
        ASSERT(strstr(d.decisions[0].reason, "saved RT CPU 9 is not an RT CPU now: now RT CPU 2"));
        ASSERT_EQ(allocator_verify(a), 0);

        /* The RT CPUs change: the guest on a CPU that left is re-booked where there is room. */
        {
                static const AllocRtCpu fewer[] = { { 2, 0 }, { 4, 0 } };
                alloc_decisions_clear(&d);
                ASSERT_EQ(allocator_set_rt_cpus(a, fewer, 2, &d), 0);
                ASSERT_STREQ(cpus_of(a, "t2"), "2");
                ASSERT_STREQ(cpus_of(a, "t1"), "4");
                ASSERT(strstr(d.decisions[0].reason, "RT CPU 3 left the RT CPUs: now RT CPU 4"));
        }
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(invalid) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        static const AllocRtCpu dup[] = { { 2, 0 }, { 2, 0 } }, far[] = { { 5000, 0 } }, node[] = { { 1, 99 } };
        AllocDecisions d = {};

        ASSERT_EQ(allocator_set_rt_cpus(a, dup, 2, &d), -EINVAL);
        ASSERT_EQ(allocator_set_rt_cpus(a, far, 1, &d), -EINVAL);
        ASSERT_EQ(allocator_set_rt_cpus(a, node, 1, &d), -EINVAL);
        ASSERT_EQ(req(a, "r", "rt", 0, "vm", &d), 0);
        ASSERT_STREQ(cpus_of(a, "r"), "2");   /* the refused pools changed nothing */
        alloc_decisions_done(&d);
}

/* ---- random sequences ---- */

/* No CPU serves more guests than the strictest share among them; no guest books a CPU twice; a
 * guest's tenants agree on its CPUs; every tenant of a refusing RT class holds what it needs. */
static void check(Allocator *a) {
        unsigned users[16] = {}, cap[16];
        char guests[16][8][16];
        AllocStats st;

        for (unsigned c = 0; c < 16; c++)
                cap[c] = ALLOC_RT_SHARE_MAX;
        ASSERT_EQ(allocator_verify(a), 0);
        memset(guests, 0, sizeof(guests));
        for (size_t i = 0; i < allocator_n_tenants(a); i++) {
                AllocTenant t;
                const AllocClass *c = NULL;

                ASSERT_EQ(allocator_tenant(a, i, &t), 0);
                for (size_t k = 0; k < ELEMENTSOF(classes); k++)
                        if (streq(classes[k].name, t.class_name))
                                c = &classes[k];
                ASSERT(c);
                if (c->rt_cpus == 0) {
                        ASSERT_EQ(t.n_rt_cpus, 0);
                        continue;
                }
                /* A guest's booking is its neediest tenant's (a falling-back one shares what it has). */
                ASSERT(t.n_rt_cpus == 0 || t.n_rt_cpus >= c->rt_cpus || c->rt_fallback);
                ASSERT(t.n_rt_cpus > 0 || c->rt_fallback || t.rt_waiting);
                for (unsigned k = 0; k < t.n_rt_cpus; k++) {
                        unsigned cpu = t.rt_cpus[k];
                        bool known = false;
                        ASSERT(cpu < 16);
                        for (unsigned j = 0; j < k; j++)
                                ASSERT(t.rt_cpus[j] != cpu);
                        /* Count each guest once per CPU. */
                        for (unsigned g = 0; g < 8 && guests[cpu][g][0]; g++)
                                known |= streq(guests[cpu][g], t.guest);
                        if (!known) {
                                unsigned g = users[cpu]++;
                                ASSERT(g < 8);
                                strscpy(guests[cpu][g], sizeof(guests[cpu][g]), t.guest);
                        }
                        if (!c->rt_fallback)
                                cap[cpu] = MIN(cap[cpu], c->rt_share);
                }
        }
        for (unsigned c = 0; c < 16; c++)
                ASSERT(users[c] <= cap[c]);
        allocator_stats(a, &st);
        ASSERT(st.rt_cpus_booked <= st.rt_cpus);

        /* The per-node rows add up to the totals, in node order, unknown node last. */
        {
                AllocRtNode rows[ALLOC_RT_NODES_MAX];
                size_t n = allocator_rt_nodes(a, rows, ELEMENTSOF(rows));
                unsigned cpus = 0, booked = 0, holding = 0, waiting = 0;

                ASSERT(n <= ELEMENTSOF(rows));
                for (size_t i = 0; i < n; i++) {
                        ASSERT(rows[i].cpus > 0 || rows[i].guests > 0 || rows[i].waiting > 0);
                        ASSERT(rows[i].booked <= rows[i].cpus && rows[i].shared <= rows[i].booked);
                        ASSERT_EQ(rows[i].booked > 0, rows[i].guests > 0);
                        if (i > 0)
                                ASSERT(rows[i].numa_node < 0 ||
                                       (rows[i - 1].numa_node >= 0 && rows[i - 1].numa_node < rows[i].numa_node));
                        cpus += rows[i].cpus;
                        booked += rows[i].booked;
                        holding += rows[i].guests;
                        waiting += rows[i].waiting;
                }
                ASSERT_EQ(cpus, st.rt_cpus);
                ASSERT_EQ(booked, st.rt_cpus_booked);
                ASSERT_EQ(holding, st.rt_guests);
                ASSERT_EQ(waiting, st.rt_guests_waiting);
        }
}

static void run(uint64_t seed, unsigned steps, unsigned clone_every, char **log, size_t *log_size) {
        _cleanup_(allocator_freep) Allocator *a = mk(NULL, 0);
        _cleanup_fclose_ FILE *f = open_memstream(log, log_size);
        AllocDecisions d = {};
        uint64_t s = seed;

        ASSERT(f);
        for (unsigned step = 0; step < steps; step++) {
                unsigned op = test_rng(&s, 100);
                char id[8], guest[8];
                int r;

                if (clone_every > 0 && step % clone_every == 0) {
                        Allocator *c = NULL;
                        ASSERT_EQ(allocator_clone(a, &c), 0);
                        allocator_free(a);
                        a = c;
                }
                alloc_decisions_clear(&d);
                snprintf(id, sizeof(id), "t%u", test_rng(&s, 12));
                snprintf(guest, sizeof(guest), "g%u", test_rng(&s, 8));
                if (op < 55) {
                        AllocRequest rq = { .tenant = id, .guest = guest, .numa_node = (int) test_rng(&s, 3) - 1,
                                            .class_name = classes[test_rng(&s, ELEMENTSOF(classes))].name };
                        r = allocator_request(a, &rq, &d);
                        ASSERT(r == 0 || r == ALLOCATOR_REFUSED);
                        if (r == ALLOCATOR_REFUSED)
                                ASSERT(d.n_decisions == 1 && d.decisions[0].missing != ALLOC_MISSING_NONE);
                } else if (op < 85) {
                        r = allocator_release(a, id, &d);
                        ASSERT(r == 0 || r == -ENOENT);
                } else {
                        /* The RT CPUs change: a random subset of 0..9 over two nodes. */
                        AllocRtCpu rt[10];
                        size_t n = 0;
                        for (unsigned c = 0; c < 10; c++)
                                if (test_rng(&s, 3))
                                        rt[n++] = (AllocRtCpu) { c, (int) (c / 5) };
                        ASSERT_EQ(allocator_set_rt_cpus(a, rt, n, &d), 0);
                }
                if (getenv("SRIOVD_TEST_ALLOC_TRACE"))
                        for (size_t i = 0; i < d.n_decisions; i++)
                                fprintf(stderr, "%llu/%u %s %s %s %u\n", (unsigned long long) seed, step,
                                        alloc_decision_kind_to_string(d.decisions[i].kind), d.decisions[i].tenant,
                                        d.decisions[i].reason, d.decisions[i].n_rt_cpus);
                check(a);
                for (size_t i = 0; i < d.n_decisions; i++) {
                        const AllocDecision *x = &d.decisions[i];
                        fprintf(f, "%u %s %s %s>%s %u:%u %s\n", step, alloc_decision_kind_to_string(x->kind), x->tenant,
                                x->old_vf, x->new_vf, x->n_rt_cpus, x->n_rt_cpus ? x->rt_cpus[0] : 0, x->reason);
                }
        }
        alloc_decisions_done(&d);
}

TEST(property) {
        for (uint64_t seed = 1; seed <= 600; seed++) {
                _cleanup_free_ char *log1 = NULL, *log2 = NULL, *log3 = NULL;
                size_t n1 = 0, n2 = 0, n3 = 0;

                run(seed, 120, 0, &log1, &n1);
                run(seed, 120, 0, &log2, &n2);
                run(seed, 120, 1 + seed % 5, &log3, &n3);
                if (n1 != n2 || memcmp(log1, log2, n1) != 0 || n1 != n3 || memcmp(log1, log3, n1) != 0) {
                        fprintf(stderr, "seed %llu: decisions differ between runs (or a clone)\n",
                                (unsigned long long) seed);
                        abort();
                }
        }
}

/* The booking made a placement: RT vCPUs on their CPUs, the rest on the node's housekeeping CPUs. */
TEST(placement) {
        _cleanup_(config_freep) Config *cfg = NULL;
        CpuSet nodes[2] = {};
        Inventory inv = { .topo = { .n_nodes = 2, .node_cpus = nodes } };
        TenantClass cls;
        GuestPlacement p;
        static const uint16_t rt[] = { 6, 7 };
        char buf[64];

        for (unsigned c = 0; c < 8; c++) {
                cpuset_add(&inv.topo.online, c);
                cpuset_add(&nodes[c / 4], c);
        }
        ASSERT_EQ(config_new("/x.conf", "/x.d", &cfg), 0);
        cfg->have_rt_cpus = true;
        cpuset_add(&cfg->rt_cpus, 2);
        cpuset_add(&cfg->rt_cpus, 3);
        cpuset_add(&cfg->rt_cpus, 6);
        cpuset_add(&cfg->rt_cpus, 7);
        tenant_class_init(&cls);
        ASSERT_EQ(guest_placement(&inv, cfg, &cls, rt, 2, &p), -EINVAL);   /* vcpu_pinning = none */
        cls.vcpu_pin_rt = 1;
        cls.vcpu_fifo_priority = 90;
        ASSERT_EQ(guest_placement(&inv, cfg, &cls, rt, 1, &p), 0);
        ASSERT_EQ(p.node, 1);
        ASSERT_EQ(p.memory_node, 1);
        ASSERT_EQ(p.fifo_priority, 90);
        ASSERT_EQ(guest_placement_vcpu_cpu(&p, 0), 6);
        ASSERT_EQ(guest_placement_vcpu_cpu(&p, 1), -1);
        ASSERT_STREQ(cpuset_format_list(&p.housekeeping, buf, sizeof(buf)), "4-5");
        /* Nothing booked yet: all on housekeeping CPUs, FIFO taken away, memory left. */
        ASSERT_EQ(guest_placement(&inv, cfg, &cls, NULL, 0, &p), 0);
        ASSERT_EQ(p.fifo_priority, -1);
        ASSERT_EQ(p.memory_node, -1);
        ASSERT_STREQ(cpuset_format_list(&p.housekeeping, buf, sizeof(buf)), "0-1,4-5");
        /* FIFO left as it is when the class says so. */
        cls.vcpu_fifo_priority = 0;
        ASSERT_EQ(guest_placement(&inv, cfg, &cls, rt, 2, &p), 0);
        ASSERT_EQ(p.fifo_priority, 0);
        ASSERT_EQ(p.n_rt, 2);
}

int main(void) {
        RUN(three_guests_two_cpus);
        RUN(guest_shares);
        RUN(share);
        RUN(join_checked_at_guest_share);
        RUN(refused_on_outcome);
        RUN(node_follows_vf);
        RUN(reclass);
        RUN(restore);
        RUN(invalid);
        RUN(property);
        RUN(placement);
        return 0;
}
