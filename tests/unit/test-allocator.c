/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-allocator.c — the tenant allocator: one scenario per rule, then a randomized property test */

#include <stdint.h>
#include <string.h>

#include "sriovd/core/allocator.h"
#include "test.h"

static const AllocClass classes[] = {
        { .name = "trading", .vnic = VNIC_SRIOV_REQUIRED, .rank = 100 },
        { .name = "storage", .vnic = VNIC_SRIOV_REQUIRED, .rank = 20, .allow_remote_numa = true },
        { .name = "stream", .vnic = VNIC_SRIOV_PREFERRED, .rank = 50, .allow_remote_numa = true },
        { .name = "batch", .vnic = VNIC_SRIOV_PREFERRED, .rank = 10, .allow_remote_numa = true },
        { .name = "local", .vnic = VNIC_SRIOV_PREFERRED, .rank = 10 },
        { .name = "web", .vnic = VNIC_VIRTIO, .rank = 0 },
};

/* per_node VFs on each of n_nodes nodes, PF i on bus 0x41 + 0x40 * i, node i. */
static size_t mkpool(AllocVf *vfs, unsigned n_nodes, unsigned per_node) {
        size_t n = 0;

        for (unsigned node = 0; node < n_nodes; node++)
                for (unsigned i = 0; i < per_node; i++) {
                        AllocVf *v = &vfs[n++];
                        *v = (AllocVf) { .numa_node = (int) node, .healthy = true };
                        snprintf(v->addr, sizeof(v->addr), "0000:%02x:%02x.%u", 0x41 + 0x40 * node, 1 + i / 8, i % 8);
                        snprintf(v->pf, sizeof(v->pf), "0000:%02x:00.0", 0x41 + 0x40 * node);
                }
        return n;
}

static Allocator *mkalloc(unsigned headroom, double target, const AllocVf *vfs, size_t n) {
        AllocPolicy pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        AllocDecisions d = {};
        Allocator *a = NULL;

        pol.headroom = headroom;
        pol.target_utilization = target;
        ASSERT_EQ(allocator_new(&pol, &a), 0);
        ASSERT_EQ(allocator_set_pool(a, vfs, n, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        alloc_decisions_done(&d);
        return a;
}

static int req(Allocator *a, const char *id, const char *cls, int node, AllocDecisions *d) {
        AllocRequest r = { .tenant = id, .class_name = cls, .numa_node = node };
        alloc_decisions_clear(d);
        return allocator_request(a, &r, d);
}

static int setpool(Allocator *a, const AllocVf *vfs, size_t n, AllocDecisions *d) {
        alloc_decisions_clear(d);
        return allocator_set_pool(a, vfs, n, d);
}

static int rel(Allocator *a, const char *id, AllocDecisions *d) {
        alloc_decisions_clear(d);
        return allocator_release(a, id, d);
}

static const char *vf_of(Allocator *a, const char *id) {
        AllocTenant t;
        ASSERT_EQ(allocator_find_tenant(a, id, &t), 0);
        return t.vf;
}

static AllocNic nic_of(Allocator *a, const char *id) {
        AllocTenant t;
        ASSERT_EQ(allocator_find_tenant(a, id, &t), 0);
        return t.nic;
}

static void expect(const AllocDecisions *d, size_t i, AllocDecisionKind kind, const char *tenant,
                   const char *old_vf, const char *new_vf) {
        ASSERT(i < d->n_decisions);
        ASSERT_STREQ(alloc_decision_kind_to_string(d->decisions[i].kind), alloc_decision_kind_to_string(kind));
        ASSERT_STREQ(d->decisions[i].tenant, tenant);
        ASSERT_STREQ(d->decisions[i].old_vf, old_vf);
        ASSERT_STREQ(d->decisions[i].new_vf, new_vf);
}

TEST(tenant_id) {
        static const struct {
                const char *id;
                bool valid;
        } table[] = {
                { "vm-1", true },  { "A.b_c-9", true }, { "x", true },    { "", false },
                { ".", false },    { "..", false },     { "...", true },  { "a/b", false },
                { "a b", false },  { "é", false },      { "vm:1", false }, { "-a", true },
        };
        char max[TENANT_ID_MAX + 1];

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                ASSERT_EQ(tenant_id_valid(table[i].id), table[i].valid);
        ASSERT(!tenant_id_valid(NULL));
        memset(max, 'a', sizeof(max));
        max[63] = 0;
        ASSERT(tenant_id_valid(max));
        max[63] = 'a';
        max[64] = 0;
        ASSERT(!tenant_id_valid(max));
}

TEST(new_invalid) {
        AllocClass dup[] = { { .name = "a" }, { .name = "a" } }, bad[] = { { .name = "a/b" } };
        AllocPolicy pol = ALLOC_POLICY_INIT(dup, 2);
        Allocator *a = NULL;

        ASSERT_EQ(allocator_new(&pol, &a), -EINVAL);
        pol = ALLOC_POLICY_INIT(bad, 1);
        ASSERT_EQ(allocator_new(&pol, &a), -EINVAL);
        pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        pol.target_utilization = 0;
        ASSERT_EQ(allocator_new(&pol, &a), -EINVAL);
        pol.target_utilization = 1.01;
        ASSERT_EQ(allocator_new(&pol, &a), -EINVAL);
        pol.target_utilization = 1;
        pol.max_tenants = ALLOC_TENANTS_MAX + 1;
        ASSERT_EQ(allocator_new(&pol, &a), -EINVAL);
        ASSERT(!a);
}

TEST(pool_invalid) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[4];

        mkpool(vfs, 2, 2);
        a = mkalloc(0, 0.85, vfs, 4);
        ASSERT_EQ(req(a, "vm", "stream", 0, &d), 0);

        strcpy(vfs[1].addr, vfs[0].addr);
        ASSERT_EQ(setpool(a, vfs, 4, &d), -EINVAL);
        mkpool(vfs, 2, 2);
        strcpy(vfs[1].addr, "0000:41:00.8");
        ASSERT_EQ(setpool(a, vfs, 4, &d), -EINVAL);
        mkpool(vfs, 2, 2);
        vfs[2].numa_node = ALLOC_NODES_MAX;
        ASSERT_EQ(setpool(a, vfs, 4, &d), -EINVAL);
        /* Nothing changed. */
        ASSERT_STREQ(vf_of(a, "vm"), "0000:41:01.0");
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(numa_local_first) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[8];
        AllocTenant t;

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 2, 4));
        ASSERT_EQ(req(a, "vm-1", "stream", 1, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "vm-1", "", "0000:81:01.0");
        ASSERT(!d.decisions[0].remote_numa);
        ASSERT_CONTAINS(d.decisions[0].reason, "NUMA-local on node 1");

        /* Lowest address on the node next. */
        ASSERT_EQ(req(a, "vm-2", "trading", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "vm-2", "", "0000:81:01.1");

        /* No preference: the node with the most free VFs (node 0: 4 free, node 1: 2). */
        ASSERT_EQ(req(a, "vm-3", "stream", -1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "vm-3", "", "0000:41:01.0");
        ASSERT_CONTAINS(d.decisions[0].reason, "no NUMA preference");
        ASSERT_EQ(allocator_find_tenant(a, "vm-3", &t), 0);
        ASSERT(!t.remote_numa);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(remote_only_if_allowed) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[4];
        AllocTenant t;

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 2, 2));
        ASSERT_EQ(req(a, "n1-a", "trading", 1, &d), 0);
        ASSERT_EQ(req(a, "n1-b", "trading", 1, &d), 0);

        /* Node 1 is full. "local" may not go remote: virtio-net, said why. */
        ASSERT_EQ(req(a, "loc", "local", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "loc", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason, "does not allow remote NUMA");

        /* "stream" may: a VF on node 0, flagged remote. */
        ASSERT_EQ(req(a, "str", "stream", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "str", "", "0000:41:01.0");
        ASSERT(d.decisions[0].remote_numa);
        ASSERT_CONTAINS(d.decisions[0].reason, "remote NUMA: VF on node 0");
        ASSERT_EQ(allocator_find_tenant(a, "str", &t), 0);
        ASSERT(t.remote_numa);

        /* sriov-required without remote: refused, with the reason. */
        ASSERT_EQ(req(a, "tr", "trading", 1, &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_REFUSED, "tr", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason, "all 2 usable VFs on NUMA node 1 are held by sriov-required tenants");
        ASSERT_CONTAINS(d.decisions[0].reason, "class trading does not allow remote NUMA (1 VFs free elsewhere)");
        ASSERT_EQ(allocator_find_tenant(a, "tr", &t), -ENOENT);

        /* sriov-required with remote: the free VF on node 0. */
        ASSERT_EQ(req(a, "st", "storage", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "st", "", "0000:41:01.1");
        ASSERT(d.decisions[0].remote_numa);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(headroom) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[8];
        char id[16];

        /* 8 VFs, headroom 2, target 0.5: the target leaves room for 4, so 2 are held back. */
        a = mkalloc(2, 0.5, vfs, mkpool(vfs, 1, 8));
        for (int i = 0; i < 6; i++) {
                snprintf(id, sizeof(id), "p%d", i);
                ASSERT_EQ(req(a, id, "stream", 0, &d), 0);
                ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VF);
        }
        ASSERT_EQ(req(a, "p6", "stream", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "p6", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason, "headroom kept for sriov-required tenants (2)");

        /* A sriov-required arrival takes the headroom, without a move. */
        ASSERT_EQ(req(a, "r0", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "r0", "", "0000:41:01.6");
        allocator_free(a);

        /* Same, target 0.85: ceil(6.8) = 7 VFs must be usable by demand, so the headroom is 1. */
        a = mkalloc(2, 0.85, vfs, 8);
        for (int i = 0; i < 7; i++) {
                snprintf(id, sizeof(id), "p%d", i);
                ASSERT_EQ(req(a, id, "stream", 0, &d), 0);
                ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VF);
        }
        ASSERT_EQ(req(a, "p7", "stream", 0, &d), 0);
        ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VIRTIO);
        AllocStats st;
        allocator_stats(a, &st);
        ASSERT(st.utilization >= 0.85);
        ASSERT_EQ(st.free, 1);
        alloc_decisions_done(&d);
}

/* The headroom is kept on each node: free VFs on another node are no headroom for a
 * sriov-required arrival that wants a NUMA-local one. Under a global count all of these fail. */
TEST(headroom_per_node) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[16];
        char id[16];

        /* 2 nodes of 4 VFs, headroom 2, target 0.5: each node keeps min(2, 4 - 2) = 2. */
        a = mkalloc(2, 0.5, vfs, mkpool(vfs, 2, 4));
        ASSERT_EQ(req(a, "p0", "local", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "p0", "", "0000:41:01.0");
        ASSERT_EQ(req(a, "p1", "local", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "p1", "", "0000:41:01.1");

        /* Node 0 is down to its headroom, node 1 has 4 free: a sriov-preferred tenant on node 0 whose
         * class stays NUMA-local waits on virtio-net (globally 6 > 2 free: it took 41:01.2) ... */
        ASSERT_EQ(req(a, "p2", "local", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "p2", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason,
                        "the 2 free VFs on NUMA node 0 are its headroom kept for sriov-required tenants (2)");
        ASSERT_CONTAINS(d.decisions[0].reason, "class local does not allow remote NUMA (4 VFs free elsewhere)");
        /* ... and one whose class allows remote NUMA gets a node-1 VF, said so. */
        ASSERT_EQ(req(a, "p3", "stream", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "p3", "", "0000:81:01.0");
        ASSERT(d.decisions[0].remote_numa);
        ASSERT_CONTAINS(d.decisions[0].reason, "none free above the headroom on guest's node 0");

        /* sriov-required tenants on node 0 still get node-0 VFs: the headroom, no move. */
        ASSERT_EQ(req(a, "r0", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "r0", "", "0000:41:01.2");
        ASSERT(!d.decisions[0].remote_numa);
        ASSERT_EQ(req(a, "r1", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "r1", "", "0000:41:01.3");

        /* One VF frees on node 0: 1 free there, below its headroom, so p2 still waits (globally
         * 1 + 3 free > 2: it was upgraded). */
        ASSERT_EQ(rel(a, "p0", &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_RELEASED, "p0", "0000:41:01.0", "");
        ASSERT_EQ(nic_of(a, "p2"), ALLOC_NIC_VIRTIO);
        /* No NUMA preference: the node with the most free above its headroom (node 1, 3 - 2). */
        ASSERT_EQ(req(a, "any", "local", -1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "any", "", "0000:81:01.1");
        ASSERT_EQ(req(a, "any2", "local", -1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "any2", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason, "headroom each node keeps for sriov-required tenants");
        /* Node 1's headroom is its own too: a NUMA-local sriov-required arrival there takes it. */
        ASSERT_EQ(req(a, "r2", "trading", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "r2", "", "0000:81:01.2");
        ASSERT_EQ(allocator_verify(a), 0);
        allocator_free(a);

        /* The target caps each node's headroom: 2 nodes of 8 VFs at 0.85 keep 8 - ceil(6.8) = 1 each
         * (globally 16 - ceil(13.6) = 2, which node 0 alone would have kept). */
        a = mkalloc(2, 0.85, vfs, mkpool(vfs, 2, 8));
        for (int i = 0; i < 7; i++) {
                snprintf(id, sizeof(id), "p%d", i);
                ASSERT_EQ(req(a, id, "local", 0, &d), 0);
                ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_VF);
        }
        ASSERT_EQ(req(a, "p7", "local", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "p7", "", "");
        ASSERT_CONTAINS(d.decisions[0].reason, "the 1 free VFs on NUMA node 0 are its headroom");
        ASSERT_EQ(req(a, "r0", "trading", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "r0", "", "0000:41:01.7");
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(downgrade) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[4];
        AllocTenant t;

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 1, 4));
        ASSERT_EQ(req(a, "hi", "stream", 0, &d), 0);       /* rank 50 */
        ASSERT_EQ(req(a, "lo-old", "batch", 0, &d), 0);    /* rank 10, arrived earlier */
        ASSERT_EQ(req(a, "lo-new", "batch", 0, &d), 0);    /* rank 10, the latest */
        ASSERT_EQ(req(a, "req", "trading", 0, &d), 0);
        ASSERT_EQ(req(a, "wait", "batch", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "wait", "", "");

        /* Pool exhausted, a sriov-required tenant arrives: the latest of the lowest rank goes. */
        ASSERT_EQ(req(a, "req-2", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 2);
        expect(&d, 0, ALLOC_DECISION_DOWNGRADE, "lo-new", "0000:41:01.2", "");
        ASSERT_STREQ(d.decisions[0].reason, "freed for sriov-required tenant req-2");
        ASSERT_EQ(d.decisions[0].nic, ALLOC_NIC_VIRTIO);
        expect(&d, 1, ALLOC_DECISION_VF, "req-2", "", "0000:41:01.2");
        ASSERT_CONTAINS(d.decisions[1].reason, "freed from a sriov-preferred tenant");

        ASSERT_EQ(req(a, "req-3", "trading", 0, &d), 0);
        expect(&d, 0, ALLOC_DECISION_DOWNGRADE, "lo-old", "0000:41:01.1", "");
        ASSERT_EQ(req(a, "req-4", "storage", 0, &d), 0);   /* rank 20 < 50: kind beats rank */
        expect(&d, 0, ALLOC_DECISION_DOWNGRADE, "hi", "0000:41:01.0", "");

        /* Only sriov-required tenants hold VFs: never downgraded, the next one is refused. */
        ASSERT_EQ(req(a, "req-5", "trading", 0, &d), ALLOCATOR_REFUSED);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_CONTAINS(d.decisions[0].reason, "all 4 usable VFs on NUMA node 0 are held by sriov-required tenants");
        ASSERT_EQ(allocator_find_tenant(a, "req", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_VF);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(upgrade) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[2];

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 1, 2));
        ASSERT_EQ(req(a, "a", "batch", 0, &d), 0);
        ASSERT_EQ(req(a, "b", "batch", 0, &d), 0);
        ASSERT_EQ(req(a, "w-batch-1", "batch", 0, &d), 0);
        ASSERT_EQ(req(a, "w-batch-2", "batch", 0, &d), 0);
        ASSERT_EQ(req(a, "w-stream", "stream", 0, &d), 0);
        ASSERT_EQ(req(a, "w-web", "web", 0, &d), 0);

        /* Higher rank first, even though it arrived last. */
        ASSERT_EQ(rel(a, "a", &d), 0);
        ASSERT_EQ(d.n_decisions, 2);
        expect(&d, 0, ALLOC_DECISION_RELEASED, "a", "0000:41:01.0", "");
        expect(&d, 1, ALLOC_DECISION_UPGRADE, "w-stream", "", "0000:41:01.0");
        /* Then the earlier arrival of the same rank. */
        ASSERT_EQ(rel(a, "b", &d), 0);
        expect(&d, 1, ALLOC_DECISION_UPGRADE, "w-batch-1", "", "0000:41:01.1");
        /* A virtio-net tenant leaving frees nothing. */
        ASSERT_EQ(rel(a, "w-web", &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_RELEASED, "w-web", "", "");
        ASSERT_EQ(rel(a, "w-web", &d), -ENOENT);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

/* A VF still in a guest (its live detach pending) is given to no one until it is out. */
TEST(vf_in_guest) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocStats st;
        AllocVf vfs[2];

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 1, 2));
        ASSERT_EQ(req(a, "a", "trading", 0, &d), 0);
        ASSERT_EQ(req(a, "b", "trading", 0, &d), 0);
        ASSERT_EQ(req(a, "w-batch", "batch", 0, &d), 0);
        ASSERT_EQ(nic_of(a, "w-batch"), ALLOC_NIC_VIRTIO);

        /* Marked while a holds it: a keeps it, nothing moves. */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_set_vf_in_guest(a, "0000:41:01.0", true, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_STREQ(vf_of(a, "a"), "0000:41:01.0");
        ASSERT_EQ(allocator_verify(a), 0);
        /* Released: no one is served from it. */
        ASSERT_EQ(rel(a, "a", &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_RELEASED, "a", "0000:41:01.0", "");
        ASSERT_EQ(nic_of(a, "w-batch"), ALLOC_NIC_VIRTIO);
        allocator_stats(a, &st);
        ASSERT_EQ(st.in_guest, 1u);
        ASSERT_EQ(st.free, 0u);
        ASSERT_EQ(st.n_vfs, st.usable + st.unhealthy + st.reserved + st.in_guest);
        ASSERT_EQ(allocator_verify(a), 0);
        /* A pool rebuild that carries the mark keeps it held. */
        vfs[0].in_guest = true;
        ASSERT_EQ(setpool(a, vfs, 2, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(nic_of(a, "w-batch"), ALLOC_NIC_VIRTIO);
        /* A required arrival is refused rather than given it. */
        ASSERT_EQ(req(a, "c", "trading", 0, &d), ALLOCATOR_REFUSED);
        /* Out of the guest: the waiting tenant gets it. */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_set_vf_in_guest(a, "0000:41:01.0", false, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_UPGRADE, "w-batch", "", "0000:41:01.0");
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_set_vf_in_guest(a, "0000:41:01.0", false, &d), 0);   /* a repeat: nothing */
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(allocator_set_vf_in_guest(a, "0000:99:00.1", true, &d), -ENOENT);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(idempotent_and_reclass) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[4];

        a = mkalloc(0, 0.85, vfs, mkpool(vfs, 2, 2));
        ASSERT_EQ(req(a, "vm", "stream", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        ASSERT_EQ(req(a, "vm", "stream", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_STREQ(vf_of(a, "vm"), "0000:41:01.0");

        /* Re-class that still accepts the VF: kept, no decision. */
        ASSERT_EQ(req(a, "vm", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_STREQ(vf_of(a, "vm"), "0000:41:01.0");

        /* Guest moved to node 1, class forbids remote: moved to a local VF in one decision. */
        ASSERT_EQ(req(a, "vm", "trading", 1, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_VF, "vm", "0000:41:01.0", "0000:81:01.0");

        /* To virtio-net: the VF is freed and a waiting tenant gets it. */
        ASSERT_EQ(req(a, "x1", "trading", 1, &d), 0);
        ASSERT_EQ(req(a, "x2", "local", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "x2", "", "");
        ASSERT_EQ(req(a, "vm", "web", 1, &d), 0);
        ASSERT_EQ(d.n_decisions, 2);
        expect(&d, 0, ALLOC_DECISION_VIRTIO, "vm", "0000:81:01.0", "");
        expect(&d, 1, ALLOC_DECISION_UPGRADE, "x2", "", "0000:81:01.0");

        /* virtio -> sriov-required on a full node, no remote: refused, nothing changes. */
        ASSERT_EQ(req(a, "x2", "trading", 1, &d), 0);   /* keeps its VF */
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(req(a, "vm", "trading", 1, &d), ALLOCATOR_REFUSED);
        ASSERT_CONTAINS(d.decisions[0].reason, "keeps its virtio as class web");
        ASSERT_EQ(nic_of(a, "vm"), ALLOC_NIC_VIRTIO);
        /* ... with remote allowed: a VF on node 0. */
        ASSERT_EQ(req(a, "vm", "storage", 1, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "vm", "", "0000:41:01.0");
        ASSERT(d.decisions[0].remote_numa);

        /* Errors change nothing and decide nothing. */
        ASSERT_EQ(req(a, "vm", "nope", 1, &d), -ENOENT);
        ASSERT_EQ(req(a, "v/m", "web", 1, &d), -EINVAL);
        ASSERT_EQ(req(a, "vm", "web", 64, &d), -EINVAL);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(tenant_limit) {
        AllocPolicy pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};

        pol.max_tenants = 2;
        ASSERT_EQ(allocator_new(&pol, &a), 0);
        ASSERT_EQ(req(a, "a", "web", -1, &d), 0);
        ASSERT_EQ(req(a, "b", "web", -1, &d), 0);
        ASSERT_EQ(req(a, "c", "web", -1, &d), ALLOCATOR_REFUSED);
        ASSERT_STREQ(d.decisions[0].reason, "tenant limit of 2 reached");
        /* No pool at all: sriov-required is refused, sriov-preferred waits on virtio-net. */
        ASSERT_EQ(rel(a, "b", &d), 0);
        ASSERT_EQ(req(a, "c", "trading", -1, &d), ALLOCATOR_REFUSED);
        ASSERT_CONTAINS(d.decisions[0].reason, "no usable VF in the pool");
        ASSERT_EQ(req(a, "c", "stream", -1, &d), 0);
        ASSERT_CONTAINS(d.decisions[0].reason, "no usable VF in the pool");
        ASSERT_EQ(allocator_n_tenants(a), 2);
        alloc_decisions_done(&d);
}

TEST(reconcile) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        AllocDecisions d = {};
        AllocVf vfs[6];
        size_t n = mkpool(vfs, 2, 3);

        a = mkalloc(0, 0.85, vfs, n);
        ASSERT_EQ(req(a, "req", "trading", 0, &d), 0);      /* 41:01.0 */
        ASSERT_EQ(req(a, "pref", "batch", 0, &d), 0);       /* 41:01.1 */
        ASSERT_EQ(req(a, "pref2", "local", 1, &d), 0);      /* 81:01.0 */

        /* req's VF vanishes: the free local one. */
        memmove(&vfs[0], &vfs[1], (n - 1) * sizeof(vfs[0]));
        n--;
        ASSERT_EQ(setpool(a, vfs, n, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "req", "0000:41:01.0", "0000:41:01.2");
        ASSERT_CONTAINS(d.decisions[0].reason, "VF 0000:41:01.0 vanished");

        /* req's new VF turns unhealthy: node 0 is full, so pref gives its VF up; it may go
         * remote and a VF is free on node 1, so it moves there in one decision. */
        vfs[1].healthy = false;
        ASSERT_EQ(setpool(a, vfs, n, &d), 0);
        ASSERT_EQ(d.n_decisions, 2);
        expect(&d, 0, ALLOC_DECISION_VF, "pref", "0000:41:01.1", "0000:81:01.1");
        ASSERT(d.decisions[0].remote_numa);
        ASSERT_CONTAINS(d.decisions[0].reason, "freed for sriov-required tenant req; remote NUMA");
        expect(&d, 1, ALLOC_DECISION_REPLACED, "req", "0000:41:01.2", "0000:41:01.1");
        ASSERT_CONTAINS(d.decisions[1].reason, "VF 0000:41:01.2 unhealthy");

        /* The operator reserves pref2's VF: it is local-only, node 1 has one free VF left. */
        vfs[2].reserved = true;
        ASSERT_EQ(setpool(a, vfs, n, &d), 0);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "pref2", "0000:81:01.0", "0000:81:01.2");
        ASSERT_CONTAINS(d.decisions[0].reason, "reserved by the operator");

        /* Node 0's PF re-creates its VFs: the same address, a new device, re-attached. */
        vfs[0].generation++;
        vfs[1].generation++;
        ASSERT_EQ(setpool(a, vfs, n, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "req", "0000:41:01.1", "0000:41:01.1");
        ASSERT_CONTAINS(d.decisions[0].reason, "re-created: re-attach");

        /* Node 0 goes away entirely: req may not go remote and waits without a NIC. */
        ASSERT_EQ(setpool(a, vfs + 2, n - 2, &d), 0);
        ASSERT_EQ(d.n_decisions, 1);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "req", "0000:41:01.1", "");
        ASSERT_EQ(d.decisions[0].nic, ALLOC_NIC_NONE);
        ASSERT_CONTAINS(d.decisions[0].reason, "waits for one without a NIC");
        ASSERT_EQ(nic_of(a, "req"), ALLOC_NIC_NONE);
        /* A repeated request of a waiting tenant decides nothing either. */
        ASSERT_EQ(req(a, "req", "trading", 0, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);

        /* It comes back: req first. */
        ASSERT_EQ(setpool(a, vfs, n, &d), 0);
        expect(&d, 0, ALLOC_DECISION_VF, "req", "", "0000:41:01.1");
        ASSERT_CONTAINS(d.decisions[0].reason, "without a NIC");

        AllocStats st;
        allocator_stats(a, &st);
        ASSERT_EQ(st.n_vfs, 5);
        ASSERT_EQ(st.reserved, 1);
        ASSERT_EQ(st.unhealthy, 1);
        ASSERT_EQ(st.usable, 3);
        ASSERT_EQ(st.allocated, 3);
        ASSERT_EQ(st.tenants, 3);
        ASSERT_EQ(st.on_vf, 3);
        ASSERT_EQ(st.remote, 1);
        ASSERT_EQ(allocator_verify(a), 0);
        alloc_decisions_done(&d);
}

TEST(restore) {
        _cleanup_(allocator_freep) Allocator *a = NULL, *b = NULL;
        AllocDecisions d = {};
        AllocVf vfs[4];
        size_t n = mkpool(vfs, 2, 2);
        AllocTenant t;

        a = mkalloc(0, 0.85, vfs, n);
        ASSERT_EQ(req(a, "r", "trading", 1, &d), 0);
        ASSERT_EQ(req(a, "p", "stream", 1, &d), 0);
        ASSERT_EQ(req(a, "q", "stream", 1, &d), 0);   /* remote */
        ASSERT_EQ(req(a, "w", "web", -1, &d), 0);

        /* Save and load into a fresh allocator: the same state, no decisions. */
        b = mkalloc(0, 0.85, vfs, n);
        ASSERT_EQ(allocator_n_tenants(a), 4);
        for (size_t i = 0; i < allocator_n_tenants(a); i++) {
                ASSERT_EQ(allocator_tenant(a, i, &t), 0);
                ASSERT_EQ(allocator_restore_tenant(b, &t), 0);
        }
        ASSERT_EQ(allocator_tenant(a, 4, &t), -ERANGE);
        ASSERT_EQ(allocator_tenant(b, 0, &t), 0);
        ASSERT_STREQ(t.id, "p");   /* id order */
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_reconcile(b, &d), 0);
        ASSERT_EQ(d.n_decisions, 0);
        ASSERT_EQ(allocator_find_tenant(b, "q", &t), 0);
        ASSERT(t.remote_numa);
        ASSERT_STREQ(allocator_vf_holder(b, "0000:81:01.0"), "r");
        ASSERT_EQ(allocator_verify(b), 0);

        /* The arrival sequence carries over: a new tenant comes after the restored ones. */
        ASSERT_EQ(req(b, "late", "batch", 0, &d), 0);
        ASSERT_EQ(allocator_find_tenant(b, "late", &t), 0);
        ASSERT_EQ(t.seq, 4);

        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_EQ(allocator_restore_tenant(b, &t), -EEXIST);
        t.class_name = "gone";
        ASSERT_EQ(allocator_restore_tenant(b, &t), -ENOENT);
        t.class_name = "trading";
        t.id = "bad/id";
        ASSERT_EQ(allocator_restore_tenant(b, &t), -EINVAL);
        t.id = "r2";
        t.numa_node = ALLOC_NODES_MAX;
        ASSERT_EQ(allocator_restore_tenant(b, &t), -EINVAL);
        ASSERT_EQ(allocator_verify(b), 0);

        /* Restored onto a VF that is unusable by now: the reconcile moves it. */
        allocator_free(b);
        vfs[2].healthy = false;
        b = mkalloc(0, 0.85, vfs, n);
        ASSERT_EQ(allocator_find_tenant(a, "r", &t), 0);
        ASSERT_EQ(allocator_restore_tenant(b, &t), 0);
        AllocStats st;
        allocator_stats(b, &st);
        ASSERT_EQ(st.held_unusable, 1);
        alloc_decisions_clear(&d);
        ASSERT_EQ(allocator_reconcile(b, &d), 0);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "r", "0000:81:01.0", "0000:81:01.1");
        allocator_stats(b, &st);
        ASSERT_EQ(st.held_unusable, 0);
        alloc_decisions_done(&d);
}

/* What a restart finds: saved VFs gone, a class of another kind now; nobody refused, nobody moved
 * but those who must, each with its reason; free VFs before anyone's. */
TEST(restore_before_replace) {
        _cleanup_(allocator_freep) Allocator *b = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        AllocVf vfs[4];
        size_t n = mkpool(vfs, 2, 2);   /* node 0: 0000:41:01.0, .1; node 1: 0000:81:01.0, .1 */
        AllocTenant t;

        /* r1's VF 41:01.0 is gone; r2 is restored after r1 on its own VF 41:01.1; a second
         * sriov-required tenant r3 saved on the missing 41:05.0; p on virtio would take a free VF. */
        b = mkalloc(0, 1.0, vfs + 1, n - 1);
        AllocTenant saved[] = {
                { .id = "r1", .class_name = "trading", .numa_node = 0, .nic = ALLOC_NIC_VF, .vf = "0000:41:01.0", .seq = 1 },
                { .id = "r2", .class_name = "trading", .numa_node = 0, .nic = ALLOC_NIC_VF, .vf = "0000:41:01.1", .seq = 2 },
                { .id = "r3", .class_name = "trading", .numa_node = 0, .nic = ALLOC_NIC_VF, .vf = "0000:41:05.0", .seq = 3 },
                { .id = "w", .class_name = "trading", .numa_node = 1, .nic = ALLOC_NIC_NONE, .seq = 4 },
                { .id = "x", .class_name = "web", .numa_node = -1, .nic = ALLOC_NIC_VF, .vf = "0000:81:01.1", .seq = 5 },
                { .id = "y", .class_name = "trading", .numa_node = 1, .nic = ALLOC_NIC_VIRTIO, .seq = 6 },
        };
        for (size_t i = 0; i < ELEMENTSOF(saved); i++)
                ASSERT_EQ(allocator_restore_tenant(b, &saved[i]), 0);
        ASSERT_EQ(allocator_n_tenants(b), ELEMENTSOF(saved));
        /* Restored: r2 kept its VF although r1, before it, lost its own. */
        ASSERT_STREQ(allocator_vf_holder(b, "0000:41:01.1"), "r2");
        ASSERT_EQ(allocator_find_tenant(b, "w", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_NONE);
        ASSERT_EQ(allocator_find_tenant(b, "y", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_NONE);   /* sriov-required saved on virtio-net: waits for a VF */

        ASSERT_EQ(allocator_reconcile(b, &d), 0);
        ASSERT_EQ(allocator_verify(b), 0);
        /* r1 and r3 lost theirs; node 0 has nothing free (r2 is required), so they wait, kept. */
        ASSERT_STREQ(allocator_vf_holder(b, "0000:41:01.1"), "r2");
        for (size_t i = 0; i < d.n_decisions; i++)
                ASSERT(!streq(d.decisions[i].tenant, "r2"));
        ASSERT_EQ(allocator_find_tenant(b, "r1", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_NONE);
        ASSERT_EQ(allocator_find_tenant(b, "r3", &t), 0);
        ASSERT_EQ(t.nic, ALLOC_NIC_NONE);
        expect(&d, 0, ALLOC_DECISION_REPLACED, "r1", "0000:41:01.0", "");
        ASSERT(strstr(d.decisions[0].reason, "VF 0000:41:01.0 vanished"));
        expect(&d, 1, ALLOC_DECISION_REPLACED, "r3", "0000:41:05.0", "");
        /* x's class is virtio-net: it leaves its VF, saying why. */
        expect(&d, 2, ALLOC_DECISION_REPLACED, "x", "0000:81:01.1", "");
        ASSERT(strstr(d.decisions[2].reason, "class web is virtio-net"));
        /* Then the waiting, in service order: w and y get node 1's two free VFs. */
        expect(&d, 3, ALLOC_DECISION_VF, "w", "", "0000:81:01.0");
        expect(&d, 4, ALLOC_DECISION_VF, "y", "", "0000:81:01.1");
        ASSERT_EQ(d.n_decisions, 5);
}

/* ---- the randomized property test ---- */

#define P_IDS 24
#define P_VFS 10      /* 2 PFs x 5 */

/* What the decisions say the state is, built from the decisions alone. */
typedef struct Shadow {
        bool present;
        AllocNic nic;
        char vf[PCI_ADDR_MAX];
        const AllocClass *cls;
} Shadow;

static const AllocClass *class_by_name(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(classes); i++)
                if (streq(classes[i].name, name))
                        return &classes[i];
        return NULL;
}

static void shadow_apply(Shadow *sh, const AllocDecisions *d) {
        for (size_t i = 0; i < d->n_decisions; i++) {
                const AllocDecision *x = &d->decisions[i];
                int k;

                ASSERT_EQ(sscanf(x->tenant, "t%d", &k), 1);
                ASSERT(k >= 0 && k < P_IDS);
                ASSERT(tenant_id_valid(x->tenant));
                ASSERT(x->reason[0]);
                switch (x->kind) {
                case ALLOC_DECISION_REFUSED:
                        continue;
                case ALLOC_DECISION_RELEASED:
                        ASSERT(sh[k].present);
                        ASSERT_STREQ(x->old_vf, sh[k].vf);
                        sh[k] = (Shadow) {};
                        continue;
                case ALLOC_DECISION_DOWNGRADE:
                        /* Invariant: a sriov-required tenant is never downgraded. */
                        ASSERT(sh[k].cls->vnic == VNIC_SRIOV_PREFERRED);
                        ASSERT_EQ(sh[k].nic, ALLOC_NIC_VF);
                        ASSERT_STREQ(x->old_vf, sh[k].vf);
                        break;
                case ALLOC_DECISION_UPGRADE:
                        ASSERT(sh[k].cls->vnic == VNIC_SRIOV_PREFERRED);
                        ASSERT_EQ(sh[k].nic, ALLOC_NIC_VIRTIO);
                        break;
                case ALLOC_DECISION_VF:
                case ALLOC_DECISION_VIRTIO:
                        break;
                case ALLOC_DECISION_REPLACED:
                        ASSERT(sh[k].present);
                        ASSERT_STREQ(x->old_vf, sh[k].vf);
                        break;
                default:
                        ASSERT(false);
                }
                sh[k].present = true;
                sh[k].nic = x->nic;
                strscpy(sh[k].vf, sizeof(sh[k].vf), x->new_vf);
                ASSERT_EQ(x->nic == ALLOC_NIC_VF, x->new_vf[0] != 0);
        }
}

static void check_invariants(Allocator *a, const AllocPolicy *pol, const AllocVf *pool, size_t n_pool, Shadow *sh) {
        unsigned free_by_node[2] = {}, usable_by_node[2] = {}, free_all = 0, usable = 0;
        bool held[P_VFS] = {};
        AllocStats st;
        size_t n_vf = 0, n_virtio = 0, n_none = 0;

        ASSERT_EQ(allocator_verify(a), 0);
        allocator_stats(a, &st);

        for (size_t i = 0; i < allocator_n_tenants(a); i++) {
                AllocTenant t;
                int k;

                ASSERT_EQ(allocator_tenant(a, i, &t), 0);
                ASSERT_EQ(sscanf(t.id, "t%d", &k), 1);
                /* The decisions told the whole story. */
                ASSERT(sh[k].present);
                ASSERT_EQ(t.nic, sh[k].nic);
                ASSERT_STREQ(t.vf ?: "", sh[k].vf);
                ASSERT_STREQ(t.class_name, sh[k].cls->name);

                switch (t.nic) {
                case ALLOC_NIC_VF: {
                        size_t v;
                        for (v = 0; v < n_pool && !streq(pool[v].addr, t.vf); v++)
                                ;
                        ASSERT(v < n_pool);
                        /* No VF held by two tenants; only usable ones held. */
                        ASSERT(!held[v]);
                        held[v] = true;
                        ASSERT(pool[v].healthy && !pool[v].reserved);
                        ASSERT_STREQ(allocator_vf_holder(a, t.vf), t.id);
                        ASSERT(sh[k].cls->vnic != VNIC_VIRTIO);
                        ASSERT_EQ(t.remote_numa, t.numa_node >= 0 && pool[v].numa_node != t.numa_node);
                        ASSERT(!t.remote_numa || sh[k].cls->allow_remote_numa);
                        n_vf++;
                        break;
                }
                case ALLOC_NIC_VIRTIO:
                        ASSERT(sh[k].cls->vnic != VNIC_SRIOV_REQUIRED);
                        n_virtio++;
                        break;
                case ALLOC_NIC_NONE:
                        ASSERT(sh[k].cls->vnic == VNIC_SRIOV_REQUIRED);
                        n_none++;
                        break;
                default:
                        ASSERT(false);
                }
        }
        for (int k = 0; k < P_IDS; k++)
                if (sh[k].present) {
                        char id[8];
                        AllocTenant t;
                        snprintf(id, sizeof(id), "t%d", k);
                        ASSERT_EQ(allocator_find_tenant(a, id, &t), 0);
                }

        /* The figures add up. */
        for (size_t v = 0; v < n_pool; v++)
                if (pool[v].healthy && !pool[v].reserved) {
                        usable++;
                        usable_by_node[pool[v].numa_node]++;
                        if (!held[v]) {
                                free_all++;
                                free_by_node[pool[v].numa_node]++;
                        }
                }
        ASSERT_EQ(st.n_vfs, n_pool);
        ASSERT_EQ(st.usable + st.unhealthy + st.reserved, st.n_vfs);
        ASSERT_EQ(st.usable, usable);
        ASSERT_EQ(st.allocated + st.free, st.usable);
        ASSERT_EQ(st.free, free_all);
        ASSERT_EQ(st.held_unusable, 0);
        ASSERT_EQ(st.on_vf, n_vf);
        ASSERT_EQ(st.allocated, n_vf);
        ASSERT_EQ(st.on_virtio, n_virtio);
        ASSERT_EQ(st.waiting, n_none);
        ASSERT_EQ(st.tenants, st.on_vf + st.on_virtio + st.waiting);
        ASSERT(st.usable == 0 || (st.utilization > (double) st.allocated / st.usable - 1e-12 &&
                                  st.utilization < (double) st.allocated / st.usable + 1e-12));

        /* Work-conserving: nobody who may take a free VF waits for one. The headroom is per node:
         * a sriov-preferred tenant waits only while every node it may use has no more VFs free
         * than that node's headroom, min(headroom, usable_n - ceil(target * usable_n)). */
        {
                unsigned spare[2], spare_all = 0;
                bool reach_all = false;

                for (unsigned n = 0; n < 2; n++) {
                        double want = pol->target_utilization * usable_by_node[n];
                        unsigned need = (unsigned) want, h;
                        if (need < want - 1e-9)
                                need++;
                        h = MIN(pol->headroom, usable_by_node[n] > need ? usable_by_node[n] - need : 0);
                        spare[n] = free_by_node[n] > h ? free_by_node[n] - h : 0;
                        spare_all += spare[n];
                }
                for (size_t i = 0; i < allocator_n_tenants(a); i++) {
                        AllocTenant t;
                        const AllocClass *c;
                        bool local_free, other_free, local_spare, other_spare;

                        ASSERT_EQ(allocator_tenant(a, i, &t), 0);
                        c = class_by_name(t.class_name);
                        local_free = t.numa_node < 0 ? free_all > 0 : free_by_node[t.numa_node] > 0;
                        other_free = t.numa_node >= 0 && free_all > free_by_node[t.numa_node];
                        local_spare = t.numa_node < 0 ? spare_all > 0 : spare[t.numa_node] > 0;
                        other_spare = t.numa_node >= 0 && spare_all > spare[t.numa_node];
                        if (t.nic == ALLOC_NIC_NONE)
                                ASSERT(!local_free && !(c->allow_remote_numa && other_free));
                        if (t.nic == ALLOC_NIC_VIRTIO && c->vnic == VNIC_SRIOV_PREFERRED)
                                ASSERT(!local_spare && !(c->allow_remote_numa && other_spare));
                        /* The target: met on every node with a free VF a waiting tenant may use. */
                        if (t.nic == ALLOC_NIC_VIRTIO && c->vnic == VNIC_SRIOV_PREFERRED)
                                for (unsigned n = 0; n < 2; n++) {
                                        bool may = t.numa_node < 0 || (int) n == t.numa_node || c->allow_remote_numa;
                                        if (may && free_by_node[n] > 0)
                                                ASSERT((double) (usable_by_node[n] - free_by_node[n]) >=
                                                       pol->target_utilization * usable_by_node[n] - 1e-9);
                                }
                        if (t.nic == ALLOC_NIC_VIRTIO && c->vnic == VNIC_SRIOV_PREFERRED &&
                            (t.numa_node < 0 || c->allow_remote_numa))
                                reach_all = true;
                }
                /* ... and so on the host, when a waiting tenant may use every node. */
                if (reach_all && free_all > 0)
                        ASSERT(st.utilization >= pol->target_utilization - 1e-9);
        }
}

/* One randomized run; every decision appended to *log (kind, tenant, VFs, reason). */
/* clone_every: every that many steps the allocator is replaced by its allocator_clone(), which
 * must then decide exactly as the original would have (0: never). */
static void property_run(uint64_t seed, unsigned steps, bool shuffle_pool, unsigned clone_every, char **log,
                         size_t *log_size) {
        AllocPolicy pol = ALLOC_POLICY_INIT(classes, ELEMENTSOF(classes));
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_fclose_ FILE *f = open_memstream(log, log_size);
        AllocVf pool[P_VFS], given[P_VFS];
        Shadow sh[P_IDS] = {};
        AllocDecisions d = {};
        uint64_t s = seed;
        size_t n_pool;

        ASSERT(f);
        pol.headroom = test_rng(&s, 3);
        pol.target_utilization = test_rng(&s, 2) ? 0.85 : 0.5;
        pol.max_tenants = 20;
        ASSERT_EQ(allocator_new(&pol, &a), 0);
        n_pool = mkpool(pool, 2, P_VFS / 2);
        ASSERT_EQ(allocator_set_pool(a, pool, n_pool, &d), 0);

        for (unsigned step = 0; step < steps; step++) {
                unsigned op = test_rng(&s, 100);

                if (clone_every > 0 && step % clone_every == clone_every - 1) {
                        Allocator *c = NULL;
                        ASSERT_EQ(allocator_clone(a, &c), 0);
                        ASSERT_EQ(allocator_verify(c), 0);
                        allocator_free(a);
                        a = c;
                }
                const char *cls;
                char id[8];
                int r;

                alloc_decisions_clear(&d);
                snprintf(id, sizeof(id), "t%u", test_rng(&s, P_IDS));
                if (op < 55) {
                        AllocRequest rq = { .tenant = id, .numa_node = (int) test_rng(&s, 3) - 1 };
                        cls = rq.class_name = classes[test_rng(&s, ELEMENTSOF(classes))].name;
                        r = allocator_request(a, &rq, &d);
                        ASSERT(r == 0 || r == ALLOCATOR_REFUSED);
                        /* Accepted: the tenant has the class now, moved or not. */
                        if (r == 0)
                                sh[atoi(id + 1)].cls = class_by_name(cls);
                        ASSERT_EQ(r == ALLOCATOR_REFUSED, d.n_decisions == 1 && d.decisions[0].kind == ALLOC_DECISION_REFUSED);
                } else if (op < 85) {
                        r = allocator_release(a, id, &d);
                        ASSERT(r == 0 || r == -ENOENT);
                        if (r == 0)
                                ASSERT_EQ(d.decisions[0].kind, ALLOC_DECISION_RELEASED);
                } else {
                        /* A pool change: a VF vanishes or comes back, turns (un)healthy or
                         * (un)reserved, or a PF re-creates its VFs. */
                        unsigned v = test_rng(&s, P_VFS), what = test_rng(&s, 5);
                        AllocVf full[P_VFS];
                        size_t n = mkpool(full, 2, P_VFS / 2), k = 0;

                        if (what == 0) {
                                bool present = false;
                                for (size_t i = 0; i < n_pool; i++)
                                        present |= streq(pool[i].addr, full[v].addr);
                                if (present) {
                                        for (size_t i = 0; i < n_pool; i++)
                                                if (!streq(pool[i].addr, full[v].addr))
                                                        pool[k++] = pool[i];
                                        n_pool = k;
                                } else
                                        pool[n_pool++] = full[v];
                        } else if (n_pool > 0) {
                                AllocVf *p = &pool[v % n_pool];
                                if (what == 1)
                                        p->healthy = !p->healthy;
                                else if (what == 2)
                                        p->reserved = !p->reserved;
                                else
                                        for (size_t i = 0; i < n_pool; i++)
                                                if (streq(pool[i].pf, p->pf))
                                                        pool[i].generation++;
                        }
                        (void) n;
                        memcpy(given, pool, n_pool * sizeof(AllocVf));
                        if (shuffle_pool)
                                for (size_t i = n_pool; i > 1; i--) {
                                        size_t j = test_rng_next(&(uint64_t) { seed + step + i }) % i;
                                        AllocVf tmp = given[i - 1];
                                        given[i - 1] = given[j];
                                        given[j] = tmp;
                                }
                        ASSERT_EQ(allocator_set_pool(a, given, n_pool, &d), 0);
                        for (size_t i = 0; i < d.n_decisions; i++)
                                ASSERT(d.decisions[i].kind != ALLOC_DECISION_RELEASED &&
                                       d.decisions[i].kind != ALLOC_DECISION_REFUSED);
                }

                if (getenv("SRIOVD_TEST_ALLOC_TRACE"))
                        for (size_t i = 0; i < d.n_decisions; i++)
                                fprintf(stderr, "%u op=%u %s %s %s>%s %s\n", step, op,
                                        alloc_decision_kind_to_string(d.decisions[i].kind), d.decisions[i].tenant,
                                        d.decisions[i].old_vf, d.decisions[i].new_vf, d.decisions[i].reason);
                shadow_apply(sh, &d);
                check_invariants(a, &pol, pool, n_pool, sh);
                for (size_t i = 0; i < d.n_decisions; i++) {
                        const AllocDecision *x = &d.decisions[i];
                        fprintf(f, "%u %s %s %s>%s %d %s\n", step, alloc_decision_kind_to_string(x->kind), x->tenant,
                                x->old_vf, x->new_vf, x->remote_numa, x->reason);
                }
        }
        alloc_decisions_done(&d);
}

TEST(property) {
        unsigned seeds = 2000, steps = 150;
        const char *e = getenv("SRIOVD_TEST_ALLOC_SEEDS");

        if (e)
                seeds = (unsigned) strtoul(e, NULL, 10);
        for (uint64_t seed = 1; seed <= seeds; seed++) {
                _cleanup_free_ char *log1 = NULL, *log2 = NULL;
                size_t n1 = 0, n2 = 0;

                property_run(seed, steps, false, 0, &log1, &n1);
                /* Determinism: again, with the pool handed over in another order each time. */
                property_run(seed, steps, true, 0, &log2, &n2);
                if (n1 != n2 || memcmp(log1, log2, n1) != 0) {
                        fprintf(stderr, "seed %llu: decisions differ between two runs\n", (unsigned long long) seed);
                        abort();
                }
                /* And with the allocator cloned every few steps: a clone is the same allocator. */
                free(log2);
                log2 = NULL;
                property_run(seed, steps, false, 1 + seed % 7, &log2, &n2);
                if (n1 != n2 || memcmp(log1, log2, n1) != 0) {
                        fprintf(stderr, "seed %llu: a clone decides differently\n", (unsigned long long) seed);
                        abort();
                }
        }
}

int main(void) {
        RUN(tenant_id);
        RUN(new_invalid);
        RUN(pool_invalid);
        RUN(numa_local_first);
        RUN(remote_only_if_allowed);
        RUN(headroom);
        RUN(headroom_per_node);
        RUN(downgrade);
        RUN(upgrade);
        RUN(vf_in_guest);
        RUN(idempotent_and_reclass);
        RUN(tenant_limit);
        RUN(reconcile);
        RUN(restore);
        RUN(restore_before_replace);
        RUN(property);
        return 0;
}
