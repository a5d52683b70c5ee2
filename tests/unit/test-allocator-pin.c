/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-allocator-pin.c — tenants pinned to one PF, and the per-PF figures a scheduler reads */

#include <stdint.h>
#include <string.h>

#include "sriovd/allocator.h"
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

int main(void) {
        RUN(required_takes_its_pf);
        RUN(downgrades_only_there);
        RUN(waits_for_its_pf);
        RUN(release_serves_pinned);
        RUN(repin);
        RUN(clone_and_restore);
        RUN(pf_stats);
        return 0;
}
