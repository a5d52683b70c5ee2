/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan.c — the pure planner on hand-built inventories and on the fixture hosts */

#include <string.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "test-fixture.h"

static const char *fixtures_dir;

static Config *config(const char *text) {
        return test_config(text, NULL);
}

static Inventory *fixture(const char *host) {
        return test_fixture_inventory(fixtures_dir, host, NULL);
}

/* A minimal host: one PF per entry, no IRQs; the planner needs no more for VF counts. */
static Inventory *host(unsigned n_pfs, unsigned total, unsigned num, bool rtnet) {
        Inventory *inv = calloc(1, sizeof(*inv));
        ASSERT(inv);
        ASSERT_EQ(cpuset_parse_list("0-15", &inv->topo.online), 0);
        inv->topo.n_nodes = 2;
        inv->topo.node_cpus = calloc(2, sizeof(CpuSet));
        ASSERT(inv->topo.node_cpus);
        ASSERT_EQ(cpuset_parse_list("0-7", &inv->topo.node_cpus[0]), 0);
        ASSERT_EQ(cpuset_parse_list("8-15", &inv->topo.node_cpus[1]), 0);
        inv->caps.rtnet_prio_present = rtnet;
        inv->caps.iommu = true;
        inv->pfs = calloc(n_pfs, sizeof(Pf));
        ASSERT(inv->pfs);
        inv->n_pfs = n_pfs;
        for (unsigned i = 0; i < n_pfs; i++) {
                Pf *pf = &inv->pfs[i];
                snprintf(pf->addr, sizeof(pf->addr), "0000:%02x:00.0", 0x41 + i);
                pf->vendor = 0x15b3;
                pf->device = 0x101d;
                pf->numa_node = (int) (i % 2);
                pf->total_vfs = total;
                pf->num_vfs = num;
                pf->drivers_autoprobe = 1;
                strcpy(pf->driver, "mlx5_core");
        }
        return inv;
}

static size_t count_actions(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static size_t count_notes(const Plan *p, NoteLevel level, const char *needle) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_notes; i++)
                n += p->notes[i].level == level && strstr(p->notes[i].text, needle);
        return n;
}

TEST(nothing_to_do_without_policy) {
        _cleanup_(inventory_freep) Inventory *inv = host(2, 16, 8, false);
        _cleanup_(config_freep) Config *c = config("");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 0);
        ASSERT_EQ(p->n_notes, 0);
}

TEST(num_vfs_from_match_and_pf) {
        _cleanup_(inventory_freep) Inventory *inv = host(3, 16, 8, false);
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nnum_vfs = 16\n"
                                                    "[pf 0000:42:00.0]\nnum_vfs = 0\n"
                                                    "[pf 0000:43:00.0]\nnum_vfs = 8\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 2);   /* 43:00.0 already has its 8 */
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_NUM_VFS);
        ASSERT_STREQ(p->actions[0].target, "0000:41:00.0");
        ASSERT_EQ(p->actions[0].before, 8);
        ASSERT_EQ(p->actions[0].after, 16);
        ASSERT_STREQ(p->actions[0].effect, "destroys 8 VFs, then creates 16");
        ASSERT_STREQ(p->actions[1].target, "0000:42:00.0");   /* [pf] beats [match] */
        ASSERT_EQ(p->actions[1].after, 0);
        ASSERT_STREQ(p->actions[1].effect, "destroys 8 VFs");
        ASSERT(!p->actions[0].applied);
}

TEST(create_from_zero) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, 16, 0, false);
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 1);
        ASSERT_STREQ(p->actions[0].effect, "creates 4 VFs");
}

TEST(more_than_total_is_a_policy_error) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, 16, 8, false);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 32\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 0);
        ASSERT_EQ(count_notes(p, NOTE_ERROR, "num_vfs = 32 exceeds sriov_totalvfs = 16 (config line 1)"), 1);
}

TEST(no_driver_no_action) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, 16, 0, false);
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        inv->pfs[0].driver[0] = 0;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "no driver bound"), 1);
}

TEST(autoprobe_before_num_vfs) {
        _cleanup_(inventory_freep) Inventory *inv = host(2, 16, 0, false);
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nnum_vfs = 4\ndrivers_autoprobe = no\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 4);
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_AUTOPROBE);
        ASSERT_EQ(p->actions[1].kind, ACTION_SET_AUTOPROBE);
        ASSERT_EQ(p->actions[0].before, 1);
        ASSERT_EQ(p->actions[0].after, 0);
        ASSERT_EQ(p->actions[2].kind, ACTION_SET_NUM_VFS);
        ASSERT_STREQ(p->actions[2].target, "0000:41:00.0");
        ASSERT_STREQ(p->actions[3].target, "0000:42:00.0");
}

TEST(rtnet_prio) {
        _cleanup_(inventory_freep) Inventory *rt = host(1, 16, 8, true);
        _cleanup_(inventory_freep) Inventory *stock = host(1, 16, 8, false);
        _cleanup_(config_freep) Config *c = config("[rt]\nrtnet_prio = 50\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        ASSERT_EQ(plan_build(rt, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 1);
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_RTNET_PRIO);
        ASSERT_EQ(p->actions[0].before, 0);
        ASSERT_EQ(p->actions[0].after, 50);

        /* Not an error where the kernel lacks the partition: said once, as information. */
        ASSERT_EQ(plan_build(stock, c, NULL, &q), 0);
        ASSERT_EQ(q->n_actions, 0);
        ASSERT_EQ(count_notes(q, NOTE_INFO, "RT softirq partition unavailable on this kernel"), 1);
}

TEST(missing_configured_pf) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, 16, 8, false);
        _cleanup_(config_freep) Config *c = config("[daemon]\ndrift_check_sec = 5\n\n[pf 0000:99:00.0]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "configured PF (config line 4) is not on this host"), 1);
        ASSERT_STREQ(p->notes[0].target, "0000:99:00.0");
}

TEST(fixture_two_socket) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nnum_vfs = 8\n[rt]\nrtnet_prio = 50\n");
        _cleanup_(plan_freep) Plan *p = NULL, *p2 = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        /*
         * VF counts already right: the softirq threshold, every NIC vector (all on 0-31) pinned, and
         * the host's other IRQs (timer, ACPI; the NVMe's are kernel-managed) and the default for new
         * ones moved off the RT CPUs 2-7,18-23.
         */
        ASSERT_EQ(p->n_actions, 1 + 1 + 82 + 2);
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_RTNET_PRIO);
        ASSERT_EQ(p->actions[1].kind, ACTION_SET_IRQ_DEFAULT);
        ASSERT_EQ(count_actions(p, ACTION_SET_IRQ_AFFINITY), 82 + 2);
        ASSERT_EQ(p->actions[84].irq, 0);
        ASSERT_EQ(p->actions[85].irq, 9);
        ASSERT_STREQ(p->actions[85].target, "");
        ASSERT_STREQ(p->actions[85].effect, "acpi: off the RT CPUs");
        ASSERT_EQ(count_actions(p, ACTION_SET_IRQ_THREAD), 0);   /* no class asks for a priority */
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "irqbalance is running"), 1);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "IOMMU is off"), 0);

        /* Deterministic: the same inputs give the same plan, byte for byte. */
        ASSERT_EQ(plan_build(inv, c, NULL, &p2), 0);
        ASSERT_EQ(p2->n_actions, p->n_actions);
        ASSERT_EQ(memcmp(p->actions, p2->actions, p->n_actions * sizeof(Action)), 0);
        ASSERT_EQ(p2->n_notes, p->n_notes);
        ASSERT_EQ(memcmp(p->notes, p2->notes, p->n_notes * sizeof(PlanNote)), 0);
}

TEST(fixture_one_socket_cx7) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("one-socket-cx7");
        _cleanup_(config_freep) Config *c = config("[match 15b3:1021]\nnum_vfs = 8\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 1);
        ASSERT_STREQ(p->actions[0].target, "0000:17:00.0");
        ASSERT_STREQ(p->actions[0].effect, "creates 8 VFs");
        /* Node unknown: pinned to housekeeping CPUs (all 8 here, nothing isolated), said so. */
        ASSERT_EQ(count_actions(p, ACTION_SET_IRQ_AFFINITY), 9);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "NUMA node unknown: IRQs spread over all housekeeping CPUs 0-7"), 1);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "NUMA node unknown"), 1);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "IOMMU is off"), 1);
}

TEST(fixture_no_nic) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("no-nic");
        _cleanup_(config_freep) Config *c = config("");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 0);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "no SR-IOV NIC in scope"), 1);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(nothing_to_do_without_policy);
        RUN(num_vfs_from_match_and_pf);
        RUN(create_from_zero);
        RUN(more_than_total_is_a_policy_error);
        RUN(no_driver_no_action);
        RUN(autoprobe_before_num_vfs);
        RUN(rtnet_prio);
        RUN(missing_configured_pf);
        RUN(fixture_two_socket);
        RUN(fixture_one_socket_cx7);
        RUN(fixture_no_nic);
        return 0;
}
