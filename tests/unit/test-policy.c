/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy.c — the policy model without the INI reader: defaults, lookups, scope, names.
 * Linked with the core alone, so a policy the planner reads can be built by hand.
 */

#include "sriovd/core/policy.h"
#include "test.h"

static Config *config_with(PfPolicy *pfs, size_t n_pfs, TenantClass *classes, size_t n_classes) {
        Config *c = NULL;

        ASSERT_EQ(config_new("hand-built.conf", NULL, &c), 0);
        c->pfs = calloc(n_pfs + 1, sizeof(PfPolicy));
        c->classes = calloc(n_classes + 1, sizeof(TenantClass));
        ASSERT(c->pfs && c->classes);
        memcpy(c->pfs, pfs, n_pfs * sizeof(PfPolicy));
        memcpy(c->classes, classes, n_classes * sizeof(TenantClass));
        c->n_pfs = n_pfs;
        c->n_classes = n_classes;
        ASSERT_EQ(config_build_scope(c), 0);
        return c;
}

TEST(defaults) {
        _cleanup_(config_freep) Config *c = NULL;
        TenantClass cls;
        PfPolicy pf;

        ASSERT_EQ(config_new("x.conf", "classes", &c), 0);
        ASSERT_STREQ(c->path, "x.conf");
        ASSERT_STREQ(c->classes_dir, "classes");
        ASSERT_STREQ(c->state_dir, CONFIG_DEFAULT_STATE_DIR);
        ASSERT_STREQ(c->libvirt_uri, CONFIG_DEFAULT_LIBVIRT_URI);
        ASSERT_STREQ(c->access_group, "sriovd");
        ASSERT_EQ(c->drift_check_sec, 5);
        ASSERT_EQ(c->vf_target_utilization, 85);
        ASSERT_EQ(c->rtnet_prio, -1);
        ASSERT(c->keep_irqs_off_rt);

        tenant_class_init(&cls);
        ASSERT_EQ(cls.coalesce_rx_usecs, COALESCE_DEFAULT_USECS);
        ASSERT_EQ(cls.coalesce_rx_frames, -1);
        ASSERT_EQ(cls.irq_cpus, IRQ_CPUS_NUMA_LOCAL);
        ASSERT_EQ(cls.offload_lro, TRISTATE_LEAVE);
        ASSERT_STREQ(cls.virtio_source, "default");

        pf_policy_init(&pf, 7);
        ASSERT_EQ(pf.line, 7);
        ASSERT_EQ(pf.num_vfs, -1);
        ASSERT_EQ(pf.vf_link_state, VF_LINK_STATE_LEAVE);
        ASSERT_EQ(pf.vf_driver, VF_DRIVER_LEAVE);
}

TEST(lookups) {
        _cleanup_(config_freep) Config *c = NULL;
        TenantClass classes[2];
        PfPolicy pfs[2];
        Scope scope;

        tenant_class_init(&classes[0]);
        strcpy(classes[0].name, "rt");
        tenant_class_init(&classes[1]);
        strcpy(classes[1].name, "web");

        pf_policy_init(&pfs[0], 1);
        pfs[0].id = (PciId) { .vendor = 0x15b3, .device = 0x1021 };
        strcpy(pfs[0].class_name, "web");
        pf_policy_init(&pfs[1], 5);
        pfs[1].by_addr = true;
        strcpy(pfs[1].addr, "0000:41:00.0");
        strcpy(pfs[1].class_name, "rt");

        c = config_with(pfs, 2, classes, 2);

        ASSERT(config_find_class(c, "rt") == &c->classes[0]);
        ASSERT(config_find_class(c, "web") == &c->classes[1]);
        ASSERT(!config_find_class(c, "nonesuch"));
        ASSERT(!config_find_class(NULL, "rt"));

        /* [pf ADDR] beats [match ID] for its own address only. */
        ASSERT(config_pf_policy(c, "0000:41:00.0", 0x15b3, 0x1021) == &c->pfs[1]);
        ASSERT(config_pf_policy(c, "0000:42:00.0", 0x15b3, 0x1021) == &c->pfs[0]);
        ASSERT(!config_pf_policy(c, "0000:42:00.0", 0x8086, 0x10c9));

        /* The default IDs, the [match] ID once (CX-7 is a default already), the [pf] address. */
        config_scope(c, &scope);
        ASSERT_EQ(scope.n_ids, scope_default_n_ids);
        ASSERT_EQ(scope.n_addrs, 1);
        ASSERT_STREQ(scope.addrs[0], "0000:41:00.0");
}

TEST(names) {
        for (size_t i = 0; i < VNIC_KIND_COUNT; i++)
                ASSERT_STREQ(vnic_kind_to_string((VnicKind) i), vnic_kind_table[i]);
        for (size_t i = 0; i < IRQ_SPREAD_COUNT; i++)
                ASSERT_STREQ(irq_spread_to_string((IrqSpread) i), irq_spread_table[i]);
        for (size_t i = 0; i < VF_DRIVER_COUNT; i++)
                ASSERT_STREQ(vf_driver_policy_to_string((VfDriverPolicy) i), vf_driver_table[i]);
        ASSERT_STREQ(vf_link_state_table[VF_LINK_STATE_LEAVE + 1], "leave");
        ASSERT_STREQ(vf_link_state_table[VF_LINK_STATE_DISABLE + 1], "disable");
        ASSERT_STREQ(pf_link_table[PF_LINK_LEAVE], "leave");
        ASSERT_STREQ(irq_cpu_policy_to_string(IRQ_CPUS_LIST), "list");
        ASSERT_STREQ(tristate_to_string(TRISTATE_LEAVE), "leave");
        ASSERT(!vnic_kind_to_string((VnicKind) VNIC_KIND_COUNT));
        ASSERT_STREQ(vf_driver_policy_to_string((VfDriverPolicy) VF_DRIVER_COUNT), "unknown");
}

int main(void) {
        RUN(defaults);
        RUN(lookups);
        RUN(names);
        return 0;
}
