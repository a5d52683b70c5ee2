/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-allocator-pin.c — tenants pinned to one PF, and the per-PF figures a scheduler reads */

#include <stdint.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "test.h"

static const AllocClass classes[] = {
        { .name = "rt", .vnic = VNIC_SRIOV_REQUIRED, .rank = 100, .rt_cpus = 1, .rt_share = 1 },
        { .name = "trading", .vnic = VNIC_SRIOV_REQUIRED, .rank = 100 },
        { .name = "stream", .vnic = VNIC_SRIOV_PREFERRED, .rank = 50, .allow_remote_numa = true },
        { .name = "web", .vnic = VNIC_VIRTIO, .rank = 0 },
};

#define PF_A "0000:41:00.0"
#define PF_B "0000:42:00.0"

/* Two PFs on node 0 with n VFs each: PF_A's are 0000:41:01.x, PF_B's are 0000:42:01.x. */
static size_t mkpool(AllocVf *vfs, unsigned n) {
        size_t k = 0;

        for (unsigned pf = 0; pf < 2; pf++)
                for (unsigned i = 0; i < n; i++) {
                        AllocVf *v = &vfs[k++];
                        *v = (AllocVf) { .numa_node = 0, .healthy = true };
                        snprintf(v->addr, sizeof(v->addr), "0000:%02x:01.%u", 0x41 + pf, i);
                        snprintf(v->pf, sizeof(v->pf), "0000:%02x:00.0", 0x41 + pf);
                }
        return k;
}

static Allocator *mkalloc(const AllocVf *vfs, size_t n) {
        AllocPolicy pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        AllocDecisions d = {};
        Allocator *a = NULL;

        pol.headroom = 0;
        pol.target_utilization = 1;
        ASSERT_EQ(allocator_new(&pol, &a), 0);
        ASSERT_EQ(allocator_set_pool(a, vfs, n, &d), 0);
        alloc_decisions_done(&d);
        return a;
}

static int req(Allocator *a, const char *id, const char *cls, const char *pin, AllocDecisions *d) {
        AllocRequest r = { .tenant = id, .class_name = cls, .numa_node = -1, .pin_pf = pin };
        alloc_decisions_clear(d);
        return allocator_request(a, &r, d);
}

static const char *vf_of(Allocator *a, const char *id) {
        AllocTenant t;
        ASSERT_EQ(allocator_find_tenant(a, id, &t), 0);
        return t.vf ?: "";
}

static size_t class_index(Allocator *a, const char *name) {
        for (size_t i = 0; i < allocator_n_classes(a); i++)
                if (streq(allocator_class_name(a, i), name))
                        return i;
        abort();
}

/* A pinned sriov-required tenant takes the lowest free VF of its PF, although another PF has a lower one. */
TEST(required_takes_its_pf) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[4];

        a = mkalloc(vfs, mkpool(vfs, 2));
        ASSERT_EQ(req(a, "r1", "trading", PF_B, &d), 0);
        ASSERT_STREQ(vf_of(a, "r1"), "0000:42:01.0");
        ASSERT_EQ(req(a, "r2", "trading", PF_B, &d), 0);
        ASSERT_STREQ(vf_of(a, "r2"), "0000:42:01.1");
        /* PF_B is full of required tenants: a third is refused, and PF_A's free VFs are not offered. */
        ASSERT_EQ(req(a, "r3", "trading", PF_B, &d), ALLOCATOR_REFUSED);
        ASSERT_CONTAINS(d.decisions[0].reason, "PF 0000:42:00.0");
        ASSERT_EQ(allocator_n_tenants(a), 2);
        /* Unpinned, it takes PF_A's. */
        ASSERT_EQ(req(a, "r3", "trading", NULL, &d), 0);
        ASSERT_STREQ(vf_of(a, "r3"), "0000:41:01.0");
        ASSERT_EQ(allocator_verify(a), 0);
}

/* A pinned sriov-required tenant downgrades a sriov-preferred tenant on its PF only. */
TEST(downgrades_only_there) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[4];
        AllocTenant t;

        a = mkalloc(vfs, mkpool(vfs, 2));
        ASSERT_EQ(req(a, "pa", "stream", PF_A, &d), 0);
        ASSERT_EQ(req(a, "pb1", "stream", PF_B, &d), 0);
        ASSERT_EQ(req(a, "pb2", "stream", PF_B, &d), 0);
        ASSERT_STREQ(vf_of(a, "pa"), "0000:41:01.0");
        ASSERT_STREQ(vf_of(a, "pb2"), "0000:42:01.1");
        /* PF_A has a free VF, but the tenant is pinned to PF_B: the latest arrival there is downgraded. */
        ASSERT_EQ(req(a, "r", "trading", PF_B, &d), 0);
        ASSERT_STREQ(vf_of(a, "r"), "0000:42:01.1");
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_DOWNGRADE);
        ASSERT_STREQ(d.decisions[0].tenant, "pb2");
        /* pb2 is pinned to PF_B too, so it does not move to PF_A's free VF. */
        ASSERT_EQ(allocator_find_tenant(a, "pb2", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_VIRTIO);
        ASSERT_STREQ(vf_of(a, "pa"), "0000:41:01.0");
        ASSERT_EQ(allocator_verify(a), 0);
}

/* A pinned sriov-required tenant whose PF loses its VFs waits for that PF, and is served when it has one again. */
TEST(waits_for_its_pf) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[4];
        size_t n = mkpool(vfs, 2);
        AllocTenant t;

        a = mkalloc(vfs, n);
        ASSERT_EQ(req(a, "r", "trading", PF_B, &d), 0);
        ASSERT_STREQ(vf_of(a, "r"), "0000:42:01.0");
        /* PF_B's VFs turn unhealthy. PF_A has free VFs, but the tenant waits without a NIC. */
        vfs[2].healthy = vfs[3].healthy = false;
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_set_pool(a, vfs, n, &d), 0);
        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_NONE);
        ASSERT_EQ(allocator_verify(a), 0);
        /* A preferred tenant pinned to PF_B stays on virtio-net, and says why. */
        ASSERT_EQ(req(a, "p", "stream", PF_B, &d), 0);
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VIRTIO);
        ASSERT_CONTAINS(d.decisions[0].reason, "no usable VF on PF 0000:42:00.0");
        /* PF_B is back: the required tenant comes first, then the preferred one. */
        vfs[2].healthy = vfs[3].healthy = true;
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_set_pool(a, vfs, n, &d), 0);
        ASSERT_STREQ(vf_of(a, "r"), "0000:42:01.0");
        ASSERT_STREQ(vf_of(a, "p"), "0000:42:01.1");
        ASSERT_EQ(allocator_verify(a), 0);
}

/* A release serves the waiting tenants pinned to the PF it frees, and no one pinned elsewhere. */
TEST(release_serves_pinned) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[2];

        a = mkalloc(vfs, mkpool(vfs, 1));
        ASSERT_EQ(req(a, "ra", "trading", PF_A, &d), 0);
        ASSERT_EQ(req(a, "rb", "trading", PF_B, &d), 0);
        ASSERT_EQ(req(a, "pa", "stream", PF_A, &d), 0);
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VIRTIO);
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_release(a, "rb", &d), 0);
        /* PF_B's VF is free, but pa is pinned to PF_A and stays on virtio-net. */
        ASSERT_EQ(d.n_decisions, 1);
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_release(a, "ra", &d), 0);
        ASSERT_EQ(d.n_decisions, 2);
        ASSERT_EQ(d.decisions[1].kind, ALLOC_DECISION_UPGRADE);
        ASSERT_STREQ(vf_of(a, "pa"), "0000:41:01.0");
        ASSERT_EQ(allocator_verify(a), 0);
}

/* A new pin is a re-class: the tenant moves to the new PF, or is refused and keeps what it has. */
TEST(repin) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[2];

        a = mkalloc(vfs, mkpool(vfs, 1));
        ASSERT_EQ(req(a, "r", "trading", PF_A, &d), 0);
        ASSERT_EQ(req(a, "r", "trading", PF_A, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(req(a, "r", "trading", PF_B, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_STREQ(d.decisions[0].old_vf, "0000:41:01.0");
        ASSERT_STREQ(vf_of(a, "r"), "0000:42:01.0");
        ASSERT_EQ(req(a, "s", "trading", PF_A, &d), 0);
        /* PF_A is full now, so a move back is refused and r keeps PF_B's VF and its pin. */
        ASSERT_EQ(req(a, "r", "trading", PF_A, &d), ALLOCATOR_REFUSED);
        ASSERT_STREQ(vf_of(a, "r"), "0000:42:01.0");
        AllocTenant t;
        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_STREQ(t.pin_pf, PF_B);
        /* Unpinned, it keeps its VF without a decision. */
        ASSERT_EQ(req(a, "r", "trading", "", &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_STREQ(t.pin_pf, "");
        ASSERT_EQ(req(a, "x", "trading", "0000:41:00", &d), -EINVAL);
        ASSERT_EQ(allocator_verify(a), 0);
}

/* A clone keeps the pin, and so does a restore. A restored VF off the pin is placed again. */
TEST(clone_and_restore) {
        _cleanup_(allocator_freep) Allocator *a = NULL, *c = NULL, *b = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[4];
        size_t n = mkpool(vfs, 2);
        AllocTenant t;

        a = mkalloc(vfs, n);
        ASSERT_EQ(req(a, "r", "trading", PF_B, &d), 0);
        ASSERT_EQ(allocator_clone(a, &c), 0);
        ASSERT_EQ(req(c, "s", "trading", PF_B, &d), 0);
        ASSERT_EQ(req(c, "x", "trading", PF_B, &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(allocator_find_tenant(c, "r", &t), 0);
        ASSERT_STREQ(t.pin_pf, PF_B);
        ASSERT_EQ(allocator_verify(c), 0);

        b = mkalloc(vfs, n);
        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_EQ(allocator_restore_tenant(b, &t), 0);
        /* Saved on PF_A's VF, as if the file said so, but pinned to PF_B. */
        AllocTenant moved = { .id = "m", .class_name = "trading", .numa_node = -1, .nic = ALLOC_NIC_VF,
                              .vf = "0000:41:01.1", .seq = 7, .pin_pf = PF_B };
        ASSERT_EQ(allocator_restore_tenant(b, &moved), 0);
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_reconcile(b, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_STREQ(d.decisions[0].tenant, "m");
        ASSERT_CONTAINS(d.decisions[0].reason, "pinned");
        ASSERT_STREQ(vf_of(b, "r"), "0000:42:01.0");
        ASSERT_STREQ(vf_of(b, "m"), "0000:42:01.1");
        ASSERT_EQ(allocator_find_tenant(b, "m", &t), 0);
        ASSERT_STREQ(t.pin_pf, PF_B);
        ASSERT_EQ(allocator_verify(b), 0);
        moved.id = "bad";
        moved.pin_pf = "nope";
        ASSERT_EQ(allocator_restore_tenant(b, &moved), -EINVAL);
}

/* The per-PF figures: held, free, preemptible, and what each class could still get there. */
TEST(pf_stats) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[8];
        AllocRtCpu cpus[] = { { .cpu = 4, .numa_node = 0 } };
        AllocPfStats st;

        a = mkalloc(vfs, mkpool(vfs, 4));
        ASSERT_EQ(allocator_set_rt_cpus(a, cpus, 1, &d), 0);
        ASSERT_EQ(req(a, "r", "trading", PF_A, &d), 0);
        ASSERT_EQ(req(a, "p", "stream", PF_A, &d), 0);
        ASSERT_EQ(req(a, "w", "web", NULL, &d), 0);

        allocator_pf_stats(a, PF_A, &st);
        ASSERT_EQ(st.usable, 4);
        ASSERT_EQ(st.allocated, 2);
        ASSERT_EQ(st.free, 2);
        ASSERT_EQ(st.preemptible, 1);
        ASSERT_EQ(st.n_classes, 4);
        ASSERT_EQ(st.class_allocated[class_index(a, "trading")], 1);
        ASSERT_EQ(st.class_allocated[class_index(a, "stream")], 1);
        ASSERT_EQ(st.class_allocated[class_index(a, "web")], 0);
        ASSERT_EQ(st.class_available[class_index(a, "trading")], 3);
        ASSERT_EQ(st.class_available[class_index(a, "rt")], 1);   /* one RT CPU on node 0 */
        ASSERT_EQ(st.class_available[class_index(a, "stream")], 2);   /* no headroom in this policy */
        ASSERT_EQ(st.class_available[class_index(a, "web")], 0);

        allocator_pf_stats(a, PF_B, &st);
        ASSERT_EQ(st.usable, 4);
        ASSERT_EQ(st.allocated, 0);
        ASSERT_EQ(st.class_available[class_index(a, "trading")], 4);

        /* The RT CPU is taken: no more rt tenants anywhere on node 0. */
        ASSERT_EQ(req(a, "q", "rt", PF_B, &d), 0);
        allocator_pf_stats(a, PF_A, &st);
        ASSERT_EQ(st.class_available[class_index(a, "rt")], 0);
        ASSERT_EQ(st.class_available[class_index(a, "trading")], 3);

        allocator_pf_stats(a, "0000:99:00.0", &st);
        ASSERT_EQ(st.usable, 0);
        ASSERT_EQ(st.class_available[class_index(a, "trading")], 0);
        ASSERT_EQ(allocator_max_tenants(a), ALLOC_TENANTS_DEFAULT);
}

/* ---- ClassAvailable is what Allocate accepts ---- */

/*
 * RT CPU 0 serves two guests whose class shares a CPU between 8, and CPUs 1 and 2 serve one
 * guest each whose class shares a CPU between 2. Two guests that need 2 CPUs each would fit on
 * paper: {0, 1} and {0, 2}. But Allocate books the CPUs with the fewest guests, 1 and 2, and
 * then only CPU 0 has room. So ClassAvailable says 1, as Allocate accepts.
 */
TEST(rt_bound_books_as_allocate) {
        static const AllocClass rt_classes[] = {
                { .name = "two", .vnic = VNIC_SRIOV_REQUIRED, .rt_cpus = 2, .rt_share = 8 },
                { .name = "wide", .vnic = VNIC_SRIOV_REQUIRED, .rt_cpus = 1, .rt_share = 8 },
                { .name = "narrow", .vnic = VNIC_SRIOV_REQUIRED, .rt_cpus = 1, .rt_share = 2 },
        };
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocPolicy pol = ALLOC_POLICY_INIT(rt_classes, ELEMENTSOF(rt_classes));
        AllocRtCpu cpus[] = { { 0, 0 }, { 1, 0 }, { 2, 0 } };
        AllocVf vfs[8];
        AllocPfStats st;

        ASSERT_EQ(allocator_new(&pol, &a), 0);
        ASSERT_EQ(allocator_set_pool(a, vfs, mkpool(vfs, 4), &d), 0);
        ASSERT_EQ(allocator_set_rt_cpus(a, cpus, ELEMENTSOF(cpus), &d), 0);
        /* w1 to w3 spread over CPUs 0 to 2, and w4 shares CPU 0. Then CPUs 1 and 2 go to narrow guests. */
        ASSERT_EQ(req(a, "w1", "wide", PF_A, &d), 0);
        ASSERT_EQ(req(a, "w2", "wide", PF_A, &d), 0);
        ASSERT_EQ(req(a, "w3", "wide", PF_A, &d), 0);
        ASSERT_EQ(req(a, "w4", "wide", PF_A, &d), 0);
        ASSERT_EQ(allocator_release(a, "w2", &d), 0);
        ASSERT_EQ(allocator_release(a, "w3", &d), 0);
        ASSERT_EQ(req(a, "n1", "narrow", PF_A, &d), 0);
        ASSERT_EQ(req(a, "n2", "narrow", PF_A, &d), 0);

        allocator_pf_stats(a, PF_B, &st);
        ASSERT_EQ(st.free, 4);
        ASSERT_EQ(st.class_available[class_index(a, "two")], 1);
        ASSERT_EQ(req(a, "t1", "two", PF_B, &d), 0);
        ASSERT_EQ(req(a, "t2", "two", PF_B, &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.decisions[0].missing, ALLOC_MISSING_RT_CPU);
}

/*
 * How many new tenants of class cls, pinned to pf with node, Allocate accepts one after another
 * on a clone of a, each with a VF of pf. Each is its own guest, as a scheduler's tenant is.
 */
static unsigned accepted(const Allocator *a, const char *pf, const char *cls, int node) {
        _cleanup_(allocator_freep) Allocator *c = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        unsigned k;

        ASSERT_EQ(allocator_clone(a, &c), 0);
        for (k = 0; k < 64; k++) {
                AllocRequest r = { .class_name = cls, .numa_node = node, .pin_pf = pf };
                AllocTenant t;
                char id[16];
                int rc;

                snprintf(id, sizeof(id), "new-%u", k);
                r.tenant = id;
                alloc_decisions_clear(&d);
                rc = allocator_request(c, &r, &d);
                ASSERT(rc == 0 || rc == ALLOCATOR_REFUSED);
                if (rc != 0)
                        break;
                ASSERT_EQ(allocator_find_tenant(c, id, &t), 0);
                /* A sriov-preferred or virtio tenant is accepted on virtio-net, and gets no VF of the PF. */
                if (t.nic != ALLOC_NIC_VF)
                        break;
                ASSERT(strncmp(t.vf, pf, 7) == 0);
                ASSERT_EQ(allocator_verify(c), 0);
        }
        ASSERT(k < 64);
        return k;
}

/*
 * For random pools, RT CPUs, classes and tenants, ClassAvailable of every class on every PF
 * equals the pinned tenants that Allocate then accepts one after another. A scheduler's tenant
 * comes without a NUMA node. One with the PF's node must fare the same.
 */
TEST(class_available_is_what_allocate_accepts) {
        for (uint64_t seed = 1; seed <= 2000; seed++) {
                _cleanup_(allocator_freep) Allocator *a = NULL;
                _cleanup_(alloc_decisions_done) AllocDecisions d = {};
                AllocClass cls[6] = {};
                AllocVf vfs[12];
                AllocRtCpu rt[10];
                AllocPolicy pol;
                int pf_node[3];
                uint64_t s = seed * 7919;
                size_t n_cls = 2 + test_rng(&s, 5), n_vfs = 0, n_rt = 0;
                unsigned n_pfs = 2 + (seed % 2);

                for (size_t i = 0; i < n_cls; i++) {
                        AllocClass *c = &cls[i];
                        snprintf(c->name, sizeof(c->name), "c%zu", i);
                        c->vnic = (VnicKind[]) { VNIC_SRIOV_REQUIRED, VNIC_SRIOV_REQUIRED, VNIC_SRIOV_PREFERRED,
                                                 VNIC_VIRTIO }[test_rng(&s, 4)];
                        c->rank = (int) test_rng(&s, 3) * 50;
                        c->allow_remote_numa = test_rng(&s, 2);
                        c->rt_cpus = test_rng(&s, 3) ? 1 + test_rng(&s, 3) : 0;
                        c->rt_share = 1 + test_rng(&s, 5);
                        c->rt_fallback = test_rng(&s, 4) == 0;
                }
                /* The shipped rt-vcpu class is always among them. */
                cls[0] = (AllocClass) { .name = "rt-vcpu", .vnic = VNIC_SRIOV_REQUIRED, .rank = 90, .rt_cpus = 1,
                                        .rt_share = 1 };
                for (unsigned p = 0; p < n_pfs; p++) {
                        unsigned n = 1 + test_rng(&s, 4);
                        pf_node[p] = (int) test_rng(&s, 3) - 1;
                        for (unsigned i = 0; i < n; i++) {
                                AllocVf *v = &vfs[n_vfs++];
                                *v = (AllocVf) { .numa_node = pf_node[p], .healthy = test_rng(&s, 6) != 0 };
                                snprintf(v->addr, sizeof(v->addr), "0000:%02x:01.%u", 0x41 + p, i);
                                snprintf(v->pf, sizeof(v->pf), "0000:%02x:00.0", 0x41 + p);
                        }
                }
                for (unsigned c = 0; c < 10; c++)
                        if (test_rng(&s, 2))
                                rt[n_rt++] = (AllocRtCpu) { c, test_rng(&s, 8) == 0 ? -1 : (int) (c % 2) };

                pol = ALLOC_POLICY_INIT(cls, n_cls);
                pol.headroom = test_rng(&s, 3);
                pol.target_utilization = (double[]) { 0.5, 0.85, 1 }[test_rng(&s, 3)];
                pol.max_tenants = test_rng(&s, 3) == 0 ? 4 + test_rng(&s, 8) : 0;
                ASSERT_EQ(allocator_new(&pol, &a), 0);
                ASSERT_EQ(allocator_set_pool(a, vfs, n_vfs, &d), 0);
                ASSERT_EQ(allocator_set_rt_cpus(a, rt, n_rt, &d), 0);

                /*
                 * Tenants of every kind, some of them guests with two NICs, some pinned. The releases
                 * leave the RT CPUs unevenly booked, which is where a count of free places and the
                 * bookings part ways.
                 */
                for (unsigned step = 0, n = test_rng(&s, 48); step < n; step++) {
                        char id[8], guest[8], pin[PCI_ADDR_MAX];
                        unsigned p = test_rng(&s, n_pfs + 2);
                        int r;

                        snprintf(id, sizeof(id), "t%u", test_rng(&s, 12));
                        snprintf(guest, sizeof(guest), "g%u", test_rng(&s, 6));
                        if (p < n_pfs)
                                snprintf(pin, sizeof(pin), "0000:%02x:00.0", 0x41 + p);
                        else
                                pin[0] = '\0';
                        alloc_decisions_clear(&d);
                        if (test_rng(&s, 3) == 0)
                                r = allocator_release(a, id, &d);
                        else {
                                AllocRequest rq = { .tenant = id, .class_name = cls[test_rng(&s, n_cls)].name,
                                                    .numa_node = (int) test_rng(&s, 3) - 1, .pin_pf = pin,
                                                    .guest = test_rng(&s, 2) ? guest : "" };
                                r = allocator_request(a, &rq, &d);
                        }
                        ASSERT(r == 0 || r == ALLOCATOR_REFUSED || r == -ENOENT);
                }
                ASSERT_EQ(allocator_verify(a), 0);

                for (unsigned p = 0; p < n_pfs; p++) {
                        char pf[PCI_ADDR_MAX];
                        AllocPfStats st;

                        snprintf(pf, sizeof(pf), "0000:%02x:00.0", 0x41 + p);
                        allocator_pf_stats(a, pf, &st);
                        for (size_t i = 0; i < n_cls; i++) {
                                const char *name = allocator_class_name(a, i);
                                unsigned got = accepted(a, pf, name, -1);

                                if (got != st.class_available[i]) {
                                        fprintf(stderr, "seed %llu: PF %s class %s: ClassAvailable %u, accepted %u\n",
                                                (unsigned long long) seed, pf, name, st.class_available[i], got);
                                        abort();
                                }
                                if (pf_node[p] >= 0)
                                        ASSERT_EQ(accepted(a, pf, name, pf_node[p]), got);
                        }
                }
        }
}

int main(void) {
        RUN(required_takes_its_pf);
        RUN(downgrades_only_there);
        RUN(waits_for_its_pf);
        RUN(release_serves_pinned);
        RUN(repin);
        RUN(clone_and_restore);
        RUN(pf_stats);
        RUN(rt_bound_books_as_allocate);
        RUN(class_available_is_what_allocate_accepts);
        return 0;
}
