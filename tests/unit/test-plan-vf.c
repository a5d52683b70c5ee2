/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-vf.c — the VF lifecycle planner (count, link settings, driver) and the VF wait */

#include <linux/if_link.h>
#include <string.h>

#include "sriovd/core/plan.h"
#include "vf/vf-wait.h"
#include "test-fixture.h"

static const char *fixtures_dir;

/* One PF 0000:41:00.0 with n VFs 0000:41:00.2.. on mlx5_core, each in its own IOMMU group. */
static Inventory *host(unsigned n_vfs) {
        Inventory *inv = calloc(1, sizeof(*inv));
        Pf *pf;

        ASSERT(inv);
        ASSERT_EQ(cpuset_parse_list("0-7", &inv->topo.online), 0);
        inv->caps.iommu = true;
        inv->pfs = calloc(1, sizeof(Pf));
        ASSERT(inv->pfs);
        inv->n_pfs = 1;
        pf = &inv->pfs[0];
        strcpy(pf->addr, "0000:41:00.0");
        pf->vendor = 0x15b3;
        pf->device = 0x101d;
        pf->numa_node = 0;
        pf->total_vfs = 16;
        pf->num_vfs = n_vfs;
        pf->drivers_autoprobe = 1;
        pf->ifindex = 4;
        ASSERT(mac_parse("b8:ce:f6:41:00:00", pf->mac));
        pf->have_mac = true;
        strcpy(pf->driver, "mlx5_core");
        pf->vfs = calloc(n_vfs ?: 1, sizeof(Vf));
        ASSERT(pf->vfs);
        pf->n_vfs = n_vfs;
        for (unsigned i = 0; i < n_vfs; i++) {
                Vf *vf = &pf->vfs[i];
                vf->index = i;
                snprintf(vf->addr, sizeof(vf->addr), "0000:41:%02x.%u", (i + 2) / 8, (i + 2) % 8);
                strcpy(vf->driver, "mlx5_core");
                vf->iommu_group = (int) i + 2;
        }
        return inv;
}

/* The rtnetlink view of the PF: every VF at the driver's defaults. */
static void known_links(Pf *pf) {
        pf->vf_links = calloc(pf->n_vfs ?: 1, sizeof(VfLink));
        ASSERT(pf->vf_links);
        pf->n_vf_links = pf->n_vfs;
        pf->vf_links_known = true;
        for (unsigned i = 0; i < pf->n_vfs; i++)
                pf->vf_links[i] = (VfLink) { .vf = i, .spoofchk = 0, .trust = 0, .link_state = IFLA_VF_LINK_STATE_AUTO };
}

static Inventory *fixture_inventory(void) {
        return test_fixture_inventory(fixtures_dir, "two-socket", NULL);
}

static Config *config(const char *text) {
        return test_config(text, NULL);
}

static size_t count_actions(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static const PlanNote *find_note(const Plan *p, NoteLevel level, const char *needle) {
        for (size_t i = 0; i < p->n_notes; i++)
                if (p->notes[i].level == level && strstr(p->notes[i].text, needle))
                        return &p->notes[i];
        return NULL;
}

static PlanAllocation allocation(const char *vf, const char *tenant) {
        PlanAllocation a = { .vlan = -1, .qos = -1 };
        strcpy(a.vf, vf);
        strcpy(a.tenant, tenant);
        return a;
}

TEST(refuses_to_destroy_allocated_vfs) {
        _cleanup_(inventory_freep) Inventory *inv = host(8);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 16\n");
        _cleanup_(plan_freep) Plan *p = NULL, *forced = NULL, *shrink = NULL;
        const PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-a"), allocation("0000:41:00.5", "tenant-b") };
        const char force[][PCI_ADDR_MAX] = { "0000:41:00.0" };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 2 };
        const PlanNote *n;

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 0);
        n = find_note(p, NOTE_ERROR, "num_vfs 8 -> 16 refused");
        ASSERT(n);
        ASSERT_STREQ(n->target, "0000:41:00.0");
        ASSERT_CONTAINS(n->text, "destroys all 8 VFs and 2 are in use (tenant tenant-a; tenant tenant-b); "
                                 "release them or force the change over the API");
        ASSERT_CONTAINS(n->text, "config line 1");
        /* The VFs stay, so they stay pinned and configured. */
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_DRIVER), 0);

        /* Forced over the API: done, and the plan says whose VFs go. */
        ctx.force_num_vfs = force;
        ctx.n_force_num_vfs = 1;
        ASSERT_EQ(plan_build(inv, c, &ctx, &forced), 0);
        ASSERT_EQ(count_actions(forced, ACTION_SET_NUM_VFS), 1);
        ASSERT_STREQ(forced->actions[0].effect, "destroys 8 VFs (forced, allocated to tenant-a, tenant-b), then creates 16");
        ASSERT(!find_note(forced, NOTE_ERROR, "refused"));

        /* Shrinking destroys them just the same. */
        config_free(c);
        c = config("[pf 0000:41:00.0]\nnum_vfs = 4\n");
        ctx.n_force_num_vfs = 0;
        ASSERT_EQ(plan_build(inv, c, &ctx, &shrink), 0);
        ASSERT_EQ(count_actions(shrink, ACTION_SET_NUM_VFS), 0);
        ASSERT(find_note(shrink, NOTE_ERROR, "num_vfs 8 -> 4 refused"));
}

static PlanVfUser vf_user(const char *vf, const char *who, bool running) {
        PlanVfUser u = { .running = running };
        strcpy(u.vf, vf);
        strcpy(u.who, who);
        return u;
}

TEST(foreign_users_block_even_when_forced) {
        _cleanup_(inventory_freep) Inventory *inv = host(8);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 2\n");
        _cleanup_(plan_freep) Plan *p = NULL, *forced = NULL, *gone = NULL;
        const PlanAllocation allocs[] = { allocation("0000:41:00.3", "t1") };
        /* A tenant's guest and its QEMU list the tenant's VF too: those are the tenant's. */
        PlanVfUser users[] = {
                vf_user("0000:41:00.6", "domain foo", true),
                vf_user("0000:41:00.3", "domain t1-guest", true),
                vf_user("0000:41:00.3", "process 77 (qemu-system-x86)", true),
                vf_user("0000:41:00.7", "process 1234 (qemu-system-x86)", true),
                vf_user("0000:41:00.6", "process 1234 (qemu-system-x86)", true),
        };
        const char force[][PCI_ADDR_MAX] = { "0000:41:00.0" };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 1, .vf_users = users, .n_vf_users = 5 };
        const PlanNote *n;

        plan_vf_users_sort(users, ELEMENTSOF(users));
        ASSERT_STREQ(users[0].who, "domain t1-guest");
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 0);
        n = find_note(p, NOTE_ERROR, "num_vfs 8 -> 2 refused");
        ASSERT(n);
        ASSERT_STREQ(n->text, "num_vfs 8 -> 2 refused: it destroys all 8 VFs and 3 are in use (tenant t1; "
                              "domain foo; process 1234 (qemu-system-x86)); "
                              "stop them first: a force covers sriovd's tenants only (config line 1)");

        /* A force is for sriovd's tenants: the others still block, and the note says so. */
        ctx.force_num_vfs = force;
        ctx.n_force_num_vfs = 1;
        ASSERT_EQ(plan_build(inv, c, &ctx, &forced), 0);
        ASSERT_EQ(count_actions(forced, ACTION_SET_NUM_VFS), 0);
        ASSERT(find_note(forced, NOTE_ERROR, "a force covers sriovd's tenants only: stop the others first"));

        /* Once they are gone the forced change goes ahead (a tenant's users never blocked it). */
        ctx.vf_users = &users[0];
        ctx.n_vf_users = 2;   /* the tenant's own guest and QEMU */
        ASSERT_STREQ(users[1].vf, "0000:41:00.3");
        ASSERT_EQ(plan_build(inv, c, &ctx, &gone), 0);
        ASSERT_EQ(count_actions(gone, ACTION_SET_NUM_VFS), 1);
        ASSERT_STREQ(gone->actions[0].effect, "destroys 8 VFs (forced, allocated to t1), then creates 2");
}

TEST(process_user_refused_naming_it) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 8\n");
        _cleanup_(plan_freep) Plan *p = NULL, *none = NULL, *other = NULL;
        const PlanVfUser users[] = { vf_user("0000:41:00.4", "process 4321 (dpdk-testpmd)", true) };
        const PlanVfUser elsewhere[] = { vf_user("0000:c1:00.4", "process 4321 (dpdk-testpmd)", true) };
        PlanContext ctx = { .vf_users = users, .n_vf_users = 1 }, empty = {};
        const PlanNote *n;

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 0);
        n = find_note(p, NOTE_ERROR, "num_vfs 4 -> 8 refused");
        ASSERT(n);
        ASSERT_CONTAINS(n->text, "destroys all 4 VFs and 1 are in use (process 4321 (dpdk-testpmd)); stop them first");
        /* The VFs stay: nothing is planned as if they were replaced. */
        ASSERT(!find_note(p, NOTE_ERROR, "forced"));

        /* No users: allowed. */
        ASSERT_EQ(plan_build(inv, c, &empty, &none), 0);
        ASSERT_EQ(count_actions(none, ACTION_SET_NUM_VFS), 1);
        ASSERT_STREQ(none->actions[0].effect, "destroys 4 VFs, then creates 8");
        ASSERT(!find_note(none, NOTE_ERROR, "refused"));

        /* A user of another PF's VF does not block this one. */
        ctx.vf_users = elsewhere;
        ASSERT_EQ(plan_build(inv, c, &ctx, &other), 0);
        ASSERT_EQ(count_actions(other, ACTION_SET_NUM_VFS), 1);
}

TEST(shut_off_domain_blocks_only_when_its_vf_goes) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *grow = config("[pf 0000:41:00.0]\nnum_vfs = 8\n");
        _cleanup_(config_freep) Config *shrink = config("[pf 0000:41:00.0]\nnum_vfs = 2\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        /* VF index 3: re-created at its address when growing, gone when shrinking to 2. */
        const PlanVfUser users[] = { vf_user("0000:41:00.5", "domain parked", false) };
        PlanContext ctx = { .vf_users = users, .n_vf_users = 1 };
        const PlanNote *n;

        ASSERT_EQ(plan_build(inv, grow, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 1);
        ASSERT_EQ(plan_build(inv, shrink, &ctx, &q), 0);
        ASSERT_EQ(count_actions(q, ACTION_SET_NUM_VFS), 0);
        n = find_note(q, NOTE_ERROR, "num_vfs 4 -> 2 refused");
        ASSERT(n);
        ASSERT_CONTAINS(n->text, "1 are in use (domain parked (shut off))");
}

TEST(many_users_listed_whole) {
        _cleanup_(inventory_freep) Inventory *inv = host(16);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 0\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        PlanVfUser users[16];
        PlanContext ctx = { .vf_users = users, .n_vf_users = 16 };
        const PlanNote *n;

        for (unsigned i = 0; i < 16; i++) {
                char who[PLAN_VF_USER_MAX];
                snprintf(who, sizeof(who), "domain a-rather-long-domain-name-%02u", i);
                users[i] = vf_user(inv->pfs[0].vfs[i].addr, who, true);
        }
        plan_vf_users_sort(users, 16);
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 0);
        n = find_note(p, NOTE_ERROR, "num_vfs 16 -> 0 refused");
        ASSERT(n);
        ASSERT_CONTAINS(n->text, "16 are in use (domain a-rather-long-domain-name-00; ");
        ASSERT_CONTAINS(n->text, "; +14 more); stop them first");
        ASSERT_CONTAINS(n->text, "(config line 1)");
}

TEST(allocations_elsewhere_do_not_block) {
        _cleanup_(inventory_freep) Inventory *inv = host(8);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 16\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanAllocation allocs[] = { allocation("0000:c1:00.3", "tenant-c") };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 1 };

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 1);
        ASSERT_STREQ(p->actions[0].effect, "destroys 8 VFs, then creates 16");
}

TEST(creation_then_configuration_in_order) {
        _cleanup_(inventory_freep) Inventory *inv = host(0);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 4\nvf_spoofchk = on\nvf_trust = off\n"
                                                    "vf_vlan = 100\nvf_qos = 3\ndrivers_autoprobe = off\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        char buf[256];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(p->n_actions, 1 + 1 + 4);
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_AUTOPROBE);
        ASSERT_EQ(p->actions[1].kind, ACTION_SET_NUM_VFS);
        for (unsigned i = 0; i < 4; i++) {
                const Action *a = &p->actions[2 + i];
                ASSERT_EQ(a->kind, ACTION_SET_VF_LINK);
                ASSERT_STREQ(a->target, "0000:41:00.0");
                ASSERT_EQ(a->vf, i);
                ASSERT_EQ(a->ifindex, 4);
                /* Not created yet: nothing to compare with, everything configured is sent. */
                ASSERT(!a->link_before_known);
                ASSERT(a->link_after.set_vlan);
                ASSERT_EQ(a->link_after.vlan, 100);
                ASSERT_EQ(a->link_after.qos, 3);
                ASSERT_EQ(a->link_after.spoofchk, 1);
                ASSERT_EQ(a->link_after.trust, 0);
                ASSERT_EQ(a->link_after.link_state, -1);
                ASSERT(!a->link_after.set_mac);
                ASSERT(!a->link_after.set_rate);
        }
        ASSERT_STREQ(action_format_value(&p->actions[2], false, buf, sizeof(buf)), "?");
        ASSERT_STREQ(action_format_value(&p->actions[2], true, buf, sizeof(buf)), "vlan 100/3, spoofchk on, trust off");
        ASSERT_STREQ(action_kind_to_string(p->actions[2].kind), "vf-link");
}

TEST(only_what_differs_is_sent) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        /* vf_clean off: what the policy does not name is left as found (the min rate below). */
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_spoofchk = on\nvf_link_state = enable\n"
                                                    "vf_max_tx_rate = 10000\nvf_clean = off\n");
        _cleanup_(plan_freep) Plan *p = NULL, *again = NULL;
        Pf *pf = &inv->pfs[0];
        char buf[256];

        known_links(pf);
        /* VF 0 is already as wanted; VF 2 has a min rate that must survive a max-only policy. */
        pf->vf_links[0].spoofchk = 1;
        pf->vf_links[0].link_state = IFLA_VF_LINK_STATE_ENABLE;
        pf->vf_links[0].max_tx_rate = 10000;
        pf->vf_links[2].min_tx_rate = 500;
        pf->vf_links[3].spoofchk = 1;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 3);
        ASSERT_EQ(p->actions[0].vf, 1);
        ASSERT(p->actions[0].link_before_known);
        ASSERT_EQ(p->actions[0].link_after.spoofchk, 1);
        ASSERT_EQ(p->actions[1].vf, 2);
        ASSERT(p->actions[1].link_after.set_rate);
        ASSERT_EQ(p->actions[1].link_after.min_tx_rate, 500);
        ASSERT_EQ(p->actions[1].link_after.max_tx_rate, 10000);
        /* VF 3: spoofchk already on, so only link state and rate go out. */
        ASSERT_EQ(p->actions[2].vf, 3);
        ASSERT_EQ(p->actions[2].link_after.spoofchk, -1);
        ASSERT_STREQ(action_format_value(&p->actions[2], false, buf, sizeof(buf)), "link auto, rate 0-0");
        ASSERT_STREQ(action_format_value(&p->actions[2], true, buf, sizeof(buf)), "link enable, rate 0-10000");

        /* Once the kernel has it all, nothing is planned. */
        for (unsigned i = 0; i < 4; i++) {
                pf->vf_links[i].spoofchk = 1;
                pf->vf_links[i].link_state = IFLA_VF_LINK_STATE_ENABLE;
                pf->vf_links[i].max_tx_rate = 10000;
        }
        ASSERT_EQ(plan_build(inv, c, NULL, &again), 0);
        ASSERT_EQ(count_actions(again, ACTION_SET_VF_LINK), 0);
}

/* libvirt refuses <interface type='hostdev'> while the PF is down: up while it has VFs to hand
 * out (an allocation's attach comes before the next cycle), per pf_link. */
TEST(pf_link) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-a") };
        PlanContext with = { .allocations = allocs, .n_allocations = 1 }, without = {};
        const struct {
                const char *conf;
                const PlanContext *ctx;
                bool down;
                size_t vfs;
                size_t want;
        } cases[] = {
                { "", &with, true, 4, 1 },                              /* auto: a tenant's VF on it */
                { "", &without, true, 4, 1 },                           /* auto: VFs to hand out */
                { "", &without, true, 0, 0 },                           /* auto: nobody needs it up */
                { "[pf 0000:41:00.0]\npf_link = auto\n", &with, true, 4, 1 },
                { "[pf 0000:41:00.0]\npf_link = up\n", &without, true, 0, 1 },
                { "[pf 0000:41:00.0]\npf_link = leave\n", &with, true, 4, 0 },
                { "", &with, false, 4, 0 },                             /* up already (or unknown) */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(config_freep) Config *c = config(cases[i].conf);
                _cleanup_(plan_freep) Plan *p = NULL;

                inv->pfs[0].admin_down = cases[i].down;
                inv->pfs[0].n_vfs = cases[i].vfs;
                ASSERT_EQ(plan_build(inv, c, cases[i].ctx, &p), 0);
                ASSERT_EQ(count_actions(p, ACTION_SET_PF_LINK), cases[i].want);
                for (size_t j = 0; j < p->n_actions; j++)
                        if (p->actions[j].kind == ACTION_SET_PF_LINK) {
                                char b[16], a[16];
                                ASSERT_STREQ(p->actions[j].target, "0000:41:00.0");
                                ASSERT_EQ(p->actions[j].ifindex, inv->pfs[0].ifindex);
                                ASSERT_STREQ(action_format_value(&p->actions[j], false, b, sizeof(b)), "down");
                                ASSERT_STREQ(action_format_value(&p->actions[j], true, a, sizeof(a)), "up");
                                ASSERT_STREQ(action_kind_to_string(p->actions[j].kind), "pf-link");
                        }
        }
        /* A bad value is the config's error, with its line. */
        {
                _cleanup_(config_freep) Config *bad = NULL;
                _cleanup_free_ char *errors = NULL;
                ASSERT(config_load_string("t.conf", "[pf 0000:41:00.0]\npf_link = down\n", NULL, &bad, &errors) < 0);
                ASSERT_CONTAINS(errors, "t.conf:2:");
        }
}

/* A VF as a tenant leaves it: its MAC, a VLAN, trust, no spoof check, a forced link, rates. */
static void dirty(VfLink *l) {
        ASSERT(mac_parse("02:aa:bb:cc:dd:ee", l->mac));
        l->vlan = 200;
        l->qos = 2;
        l->trust = 1;
        l->spoofchk = 0;
        l->link_state = IFLA_VF_LINK_STATE_ENABLE;
        l->min_tx_rate = 100;
        l->max_tx_rate = 1000;
}

/* Every VF already clean: no MAC, untagged, spoof check on, no trust, link auto, no rates. */
static void clean_links(Pf *pf) {
        known_links(pf);
        for (size_t i = 0; i < pf->n_vf_links; i++)
                pf->vf_links[i].spoofchk = 1;
}

/* What a change leaves the VF as: cur with the change applied, as the kernel would. */
static void apply_change(VfLink *cur, const VfLinkChange *c) {
        if (c->set_mac)
                memcpy(cur->mac, c->mac, 6);
        if (c->set_vlan) {
                cur->vlan = c->vlan;
                cur->qos = c->qos;
        }
        if (c->spoofchk >= 0)
                cur->spoofchk = c->spoofchk;
        if (c->trust >= 0)
                cur->trust = c->trust;
        if (c->link_state >= 0)
                cur->link_state = c->link_state;
        if (c->set_rate) {
                cur->min_tx_rate = c->min_tx_rate;
                cur->max_tx_rate = c->max_tx_rate;
        }
}

static void apply_plan(Pf *pf, const Plan *p) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_VF_LINK)
                        apply_change(&pf->vf_links[p->actions[i].vf], &p->actions[i].link_after);
}

static const Action *vf_link_action(const Plan *p, unsigned vf) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_VF_LINK && p->actions[i].vf == vf)
                        return &p->actions[i];
        return NULL;
}

TEST(released_vf_is_cleaned) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *p = NULL, *again = NULL, *anonymous = NULL;
        const PlanReleased released[] = { { "0000:41:00.3", "tenant-a" } };
        PlanContext ctx = { .released = released, .n_released = 1 };
        static const uint8_t zero[6];
        const Action *a;
        char buf[256];

        clean_links(&inv->pfs[0]);
        dirty(&inv->pfs[0].vf_links[1]);
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 1);
        a = vf_link_action(p, 1);
        ASSERT(a);
        ASSERT(a->link_before_known);
        ASSERT(a->link_after.set_mac);
        ASSERT_EQ(memcmp(a->link_after.mac, zero, 6), 0);
        ASSERT(a->link_after.set_vlan);
        ASSERT_EQ(a->link_after.vlan, 0);
        ASSERT_EQ(a->link_after.qos, 0);
        ASSERT_EQ(a->link_after.spoofchk, 1);
        ASSERT_EQ(a->link_after.trust, 0);
        ASSERT_EQ(a->link_after.link_state, IFLA_VF_LINK_STATE_AUTO);
        ASSERT(a->link_after.set_rate);
        ASSERT_EQ(a->link_after.min_tx_rate, 0);
        ASSERT_EQ(a->link_after.max_tx_rate, 0);
        ASSERT_STREQ(a->effect, "clean (released by tenant tenant-a)");
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)),
                     "mac 02:aa:bb:cc:dd:ee, vlan 200/2, spoofchk off, trust on, link enable, rate 100-1000");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)),
                     "mac 00:00:00:00:00:00, vlan 0/0, spoofchk on, trust off, link auto, rate 0-0");

        /* Whoever had it: a dirty VF nobody is known to have released is cleaned all the same. */
        ASSERT_EQ(plan_build(inv, c, NULL, &anonymous), 0);
        ASSERT_EQ(count_actions(anonymous, ACTION_SET_VF_LINK), 1);
        ASSERT_STREQ(anonymous->actions[0].effect, "clean");

        /* Once the kernel has it, nothing more. */
        apply_plan(&inv->pfs[0], p);
        ASSERT_EQ(plan_build(inv, c, &ctx, &again), 0);
        ASSERT_EQ(count_actions(again, ACTION_SET_VF_LINK), 0);
}

/* A free VF whose MAC its host driver picked itself (random) keeps it; an administrative one goes. */
TEST(drivers_own_mac_is_left) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *own = NULL, *admin = NULL;
        static const uint8_t zero[6];
        Vf *vf = &inv->pfs[0].vfs[1];
        const Action *a;

        clean_links(&inv->pfs[0]);
        ASSERT(mac_parse("96:82:cf:13:01:31", inv->pfs[0].vf_links[1].mac));
        memcpy(vf->random_mac, inv->pfs[0].vf_links[1].mac, 6);
        vf->have_random_mac = true;
        ASSERT_EQ(plan_build(inv, c, NULL, &own), 0);
        ASSERT_EQ(count_actions(own, ACTION_SET_VF_LINK), 0);

        /* The PF reports another MAC than the driver made up: someone set it; cleaned. */
        ASSERT(mac_parse("52:54:00:aa:00:02", inv->pfs[0].vf_links[1].mac));
        ASSERT_EQ(plan_build(inv, c, NULL, &admin), 0);
        ASSERT_EQ(count_actions(admin, ACTION_SET_VF_LINK), 1);
        a = vf_link_action(admin, 1);
        ASSERT(a && a->link_after.set_mac);
        ASSERT_EQ(memcmp(a->link_after.mac, zero, 6), 0);
}

/*
 * A free VF with the MAC a derive policy gave it, its netdev still saying "random" (igbvf adopts
 * the PF's MAC on a reset and keeps the flag): that MAC is sriovd's past, not the driver's, and a
 * policy that no longer derives cleans it.
 */
TEST(derived_mac_cleaned_though_marked_random) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *derive = config("[pf 0000:41:00.0]\nnum_vfs = 4\nvf_mac = derive\n");
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 4\n");
        _cleanup_(plan_freep) Plan *d = NULL, *p = NULL;
        static const uint8_t zero[6];
        Vf *vf = &inv->pfs[0].vfs[2];
        const Action *a;

        clean_links(&inv->pfs[0]);
        ASSERT(inv->pfs[0].have_mac);
        ASSERT_EQ(plan_build(inv, derive, NULL, &d), 0);
        a = vf_link_action(d, 2);
        ASSERT(a && a->link_after.set_mac);
        memcpy(inv->pfs[0].vf_links[2].mac, a->link_after.mac, 6);
        memcpy(vf->random_mac, a->link_after.mac, 6);
        vf->have_random_mac = true;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        a = vf_link_action(p, 2);
        ASSERT(a && a->link_after.set_mac);
        ASSERT_EQ(memcmp(a->link_after.mac, zero, 6), 0);
}

TEST(policy_values_win_over_the_baseline) {
        _cleanup_(inventory_freep) Inventory *inv = host(2);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_mac = derive\nvf_vlan = 100\nvf_qos = 1\n"
                                                    "vf_trust = on\nvf_link_state = disable\nvf_max_tx_rate = 5000\n");
        _cleanup_(plan_freep) Plan *p = NULL, *again = NULL;
        const Action *a;
        char buf[256];

        clean_links(&inv->pfs[0]);
        dirty(&inv->pfs[0].vf_links[0]);
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        a = vf_link_action(p, 0);
        ASSERT(a);
        /* The derived MAC, the policy's VLAN, trust, link and maximum; the baseline for the rest. */
        ASSERT_EQ(a->link_after.mac[0] & 0x03, 0x02);
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)) + strlen("mac 02:00:00:00:00:00"),
                     ", vlan 100/1, spoofchk on, link disable, rate 0-5000");
        ASSERT_STREQ(a->effect, "clean");
        /* VF 1 was clean but for the policy's values. */
        a = vf_link_action(p, 1);
        ASSERT(a);
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)) + strlen("mac 02:00:00:00:00:00"),
                     ", vlan 100/1, trust on, link disable, rate 0-5000");

        apply_plan(&inv->pfs[0], p);
        ASSERT_EQ(plan_build(inv, c, NULL, &again), 0);
        ASSERT_EQ(count_actions(again, ACTION_SET_VF_LINK), 0);
}

TEST(tenant_vf_gets_the_baseline) {
        _cleanup_(inventory_freep) Inventory *inv = host(3);
        _cleanup_(config_freep) Config *c = config("");
        _cleanup_(plan_freep) Plan *p = NULL, *again = NULL;
        PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-b") };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 1 };
        uint8_t want[6];
        const Action *a;
        char buf[256];

        /* The previous tenant's trust, spoof check, link and rate; the new one asks for VLAN 300. */
        allocs[0].vlan = 300;
        clean_links(&inv->pfs[0]);
        dirty(&inv->pfs[0].vf_links[1]);
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 1);
        a = vf_link_action(p, 1);
        ASSERT(a);
        mac_derive("tenant-b", want);
        ASSERT_EQ(memcmp(a->link_after.mac, want, 6), 0);
        ASSERT_STREQ(a->effect, "tenant tenant-b");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)) + strlen("mac 02:00:00:00:00:00"),
                     ", vlan 300/0, spoofchk on, trust off, link auto, rate 0-0");

        apply_plan(&inv->pfs[0], p);
        ASSERT_EQ(plan_build(inv, c, &ctx, &again), 0);
        ASSERT_EQ(count_actions(again, ACTION_SET_VF_LINK), 0);
}

static void write_file(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

/* A tenant's rates: its own, else its class's, else the PF's; and the PF's again once it is gone. */
TEST(tenant_rates) {
        char classes[] = "/tmp/sriovd-rates-XXXXXX", cmd[64], buf[256];
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(plan_freep) Plan *p = NULL, *again = NULL, *gone = NULL;
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *errors = NULL;
        PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-a"), allocation("0000:41:00.4", "tenant-b"),
                                    allocation("0000:41:00.5", "tenant-c") };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 3 };
        Config *bad = NULL;

        ASSERT(mkdtemp(classes));
        write_file(classes, "capped.ini", "[class]\nvnic = sriov-preferred\nmax_tx_rate = 200\n");
        write_file(classes, "floor.ini", "[class]\nvnic = sriov-preferred\nmin_tx_rate = 50\nmax_tx_rate = 100\n");
        c = test_config("[pf 0000:41:00.0]\nvf_max_tx_rate = 5000\n", classes);
        strcpy(allocs[0].class_name, "capped");
        strcpy(allocs[1].class_name, "capped");
        allocs[1].tx_rates = (TxRates) { .have_max = true, .max = 300 };
        strcpy(allocs[2].class_name, "floor");
        allocs[2].tx_rates = (TxRates) { .have_min = true, .min = 500 };   /* above the class's maximum */

        clean_links(&inv->pfs[0]);
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 4);
        ASSERT_CONTAINS(action_format_value(vf_link_action(p, 0), true, buf, sizeof(buf)), "rate 0-5000");   /* free: the PF's */
        ASSERT_CONTAINS(action_format_value(vf_link_action(p, 1), true, buf, sizeof(buf)), "rate 0-200");    /* the class's */
        ASSERT_CONTAINS(action_format_value(vf_link_action(p, 2), true, buf, sizeof(buf)), "rate 0-300");    /* its own */
        /* Its own minimum, lowered to the class's maximum, which the kernel would otherwise refuse. */
        ASSERT_CONTAINS(action_format_value(vf_link_action(p, 3), true, buf, sizeof(buf)), "rate 100-100");
        ASSERT_STREQ(vf_link_action(p, 2)->effect, "tenant tenant-b");

        apply_plan(&inv->pfs[0], p);
        ASSERT_EQ(plan_build(inv, c, &ctx, &again), 0);
        ASSERT_EQ(count_actions(again, ACTION_SET_VF_LINK), 0);

        /* The tenants are gone: their VFs take the PF's rates again. */
        ASSERT_EQ(plan_build(inv, c, NULL, &gone), 0);
        ASSERT_EQ(count_actions(gone, ACTION_SET_VF_LINK), 3);
        for (unsigned i = 1; i <= 3; i++)
                ASSERT_CONTAINS(action_format_value(vf_link_action(gone, i), true, buf, sizeof(buf)), "rate 0-5000");

        /* A class whose minimum is above its maximum is refused at the later line. */
        write_file(classes, "upside-down.ini", "[class]\nvnic = virtio\nmax_tx_rate = 100\nmin_tx_rate = 300\n");
        ASSERT_EQ(config_load_string("t.conf", "", classes, &bad, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "upside-down.ini:4: min_tx_rate = 300 exceeds max_tx_rate = 100 in this class");
        snprintf(cmd, sizeof(cmd), "rm -rf %s", classes);
        ASSERT_EQ(system(cmd), 0);
}

/* Only where the state is known and the VF is no guest's: a clean must not move a guest's VLAN. */
TEST(clean_only_what_is_free_and_known) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_vlan = 100\n");
        _cleanup_(config_freep) Config *off = config("[pf 0000:41:00.0]\nvf_clean = off\n");
        const char held[][PCI_ADDR_MAX] = { "0000:41:00.2" };
        PlanContext ctx = { .vfs_held = held, .n_vfs_held = 1 };
        Pf *pf = &inv->pfs[0];
        const Action *a;
        char buf[256];

        clean_links(pf);
        for (unsigned i = 0; i < 4; i++)
                dirty(&pf->vf_links[i]);
        /* VF 1 in vfio-pci: a guest may have it, unless libvirt said which VFs its guests have. */
        strcpy(pf->vfs[1].driver, "vfio-pci");
        /* VF 2's driver reports no trust or spoof check: those are not asked of it. */
        pf->vf_links[2].trust = -1;
        pf->vf_links[2].spoofchk = -1;
        {
                _cleanup_(plan_freep) Plan *p = NULL;
                ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
                /* VF 0 (held) and VF 1 (maybe in a guest) get only the policy's VLAN. */
                ASSERT_STREQ(action_format_value(vf_link_action(p, 0), true, buf, sizeof(buf)), "vlan 100/0");
                ASSERT_STREQ(vf_link_action(p, 0)->effect, "");
                ASSERT_STREQ(action_format_value(vf_link_action(p, 1), true, buf, sizeof(buf)), "vlan 100/0");
                a = vf_link_action(p, 2);
                ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)),
                             "mac 00:00:00:00:00:00, vlan 100/0, link auto, rate 0-0");
                ASSERT_STREQ(a->effect, "clean");
        }
        ctx.guests_known = true;
        {
                _cleanup_(plan_freep) Plan *p = NULL;
                ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
                ASSERT_STREQ(action_format_value(vf_link_action(p, 0), true, buf, sizeof(buf)), "vlan 100/0");
                ASSERT_STREQ(vf_link_action(p, 1)->effect, "clean");
        }
        /* vf_clean = off: as found. */
        {
                _cleanup_(plan_freep) Plan *p = NULL;
                ASSERT_EQ(plan_build(inv, off, &ctx, &p), 0);
                ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 0);
        }
        /* No netlink view (a fixture, a failed read): nothing to tell dirty from clean, nothing cleaned. */
        pf->vf_links_known = false;
        {
                _cleanup_(plan_freep) Plan *p = NULL;
                ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
                ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 4);
                for (unsigned i = 0; i < 4; i++)
                        ASSERT_STREQ(action_format_value(vf_link_action(p, i), true, buf, sizeof(buf)), "vlan 100/0");
        }
}

/* The daemon's before-attach plan: the same action plan_build() has for that VF, and no other. */
TEST(one_vf_link) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_spoofchk = on\n");
        _cleanup_(plan_freep) Plan *all = NULL, *one = NULL, *none = NULL, *unsupported = NULL;
        PlanAllocation allocs[] = { allocation("0000:41:00.4", "tenant-c") };
        const char refused[][PCI_ADDR_MAX] = { "0000:41:00.0" };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 1 };
        Pf *pf = &inv->pfs[0];

        clean_links(pf);
        dirty(&pf->vf_links[1]);
        dirty(&pf->vf_links[2]);
        ASSERT_EQ(plan_build(inv, c, &ctx, &all), 0);
        ASSERT_EQ(count_actions(all, ACTION_SET_VF_LINK), 2);
        ASSERT_EQ(plan_build_vf_link(pf, c, &ctx, 2, &one), 0);
        ASSERT_EQ(one->n_actions, 1);
        ASSERT_EQ(memcmp(&one->actions[0], vf_link_action(all, 2), sizeof(Action)), 0);
        ASSERT_STREQ(one->actions[0].effect, "tenant tenant-c");
        /* A clean VF, and a VF index the PF does not have: nothing. */
        ASSERT_EQ(plan_build_vf_link(pf, c, &ctx, 3, &none), 0);
        ASSERT_EQ(none->n_actions, 0);
        plan_free(none);
        ASSERT_EQ(plan_build_vf_link(pf, c, &ctx, 9, &none), 0);
        ASSERT_EQ(none->n_actions, 0);
        /* A PF whose driver refused VF settings is not asked again. */
        ctx.vf_link_unsupported = refused;
        ctx.n_vf_link_unsupported = 1;
        ASSERT_EQ(plan_build_vf_link(pf, c, &ctx, 2, &unsupported), 0);
        ASSERT_EQ(unsupported->n_actions, 0);
        ASSERT(find_note(unsupported, NOTE_WARNING, "EOPNOTSUPP"));
}

TEST(derived_macs) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_mac = derive\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-a"), allocation("0000:41:00.4", "tenant-b") };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 2 };
        uint8_t want[6];

        ASSERT(mac_parse("52:54:00:12:34:56", allocs[1].mac));
        allocs[1].have_mac = true;

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 4);
        for (unsigned i = 0; i < 4; i++) {
                const uint8_t *mac = p->actions[i].link_after.mac;
                ASSERT(p->actions[i].link_after.set_mac);
                /* Locally administered unicast, never a vendor's. */
                ASSERT_EQ(mac[0] & 0x03, 0x02);
                for (unsigned j = 0; j < i; j++)
                        ASSERT(memcmp(mac, p->actions[j].link_after.mac, 6) != 0);
        }
        /* A tenant's VF carries the tenant's MAC: its own, or one derived from its id. */
        mac_derive("tenant-a", want);
        ASSERT_EQ(memcmp(p->actions[1].link_after.mac, want, 6), 0);
        ASSERT_STREQ(p->actions[1].effect, "tenant tenant-a");
        ASSERT_EQ(memcmp(p->actions[2].link_after.mac, allocs[1].mac, 6), 0);

        /* Same inputs, same MACs; another PF (another host), other MACs for its unallocated VFs. */
        ASSERT(mac_parse("b8:ce:f6:41:00:01", inv->pfs[0].mac));
        ASSERT_EQ(plan_build(inv, c, &ctx, &q), 0);
        ASSERT(memcmp(q->actions[0].link_after.mac, p->actions[0].link_after.mac, 6) != 0);
        ASSERT_EQ(memcmp(q->actions[1].link_after.mac, p->actions[1].link_after.mac, 6), 0);
}

TEST(no_pf_netdev_waits) {
        _cleanup_(inventory_freep) Inventory *inv = host(2);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_trust = on\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        inv->pfs[0].ifindex = 0;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_LINK), 0);
        ASSERT(find_note(p, NOTE_WARNING, "no PF netdev"));
}

TEST(vfio_binding) {
        _cleanup_(inventory_freep) Inventory *inv = host(4);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_driver = vfio-pci\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanNote *n;
        char buf[64];

        strcpy(inv->pfs[0].vfs[1].driver, "vfio-pci");
        inv->pfs[0].vfs[2].iommu_group = -1;
        inv->pfs[0].vfs[3].driver[0] = 0;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_DRIVER), 2);
        ASSERT_STREQ(p->actions[0].target, "0000:41:00.2");
        ASSERT_STREQ(p->actions[0].driver_before, "mlx5_core");
        ASSERT_STREQ(p->actions[0].driver_after, "vfio-pci");
        ASSERT_STREQ(p->actions[1].target, "0000:41:00.5");
        ASSERT_STREQ(action_format_value(&p->actions[1], false, buf, sizeof(buf)), "(none)");
        n = find_note(p, NOTE_ERROR, "no IOMMU group");
        ASSERT(n);
        ASSERT_CONTAINS(n->text, "1 VFs (first 0000:41:00.4)");
}

TEST(host_driver_leaves_tenants_alone) {
        _cleanup_(inventory_freep) Inventory *inv = host(3);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nvf_driver = host\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanAllocation allocs[] = { allocation("0000:41:00.3", "tenant-a") };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 1 };
        char buf[64];

        for (unsigned i = 0; i < 3; i++)
                strcpy(inv->pfs[0].vfs[i].driver, "vfio-pci");
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        /* VF 1 is in a guest: not pulled back. */
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_DRIVER), 2);
        /* The tenant's MAC goes on its VF first (link settings come before drivers). */
        ASSERT_EQ(p->actions[0].kind, ACTION_SET_VF_LINK);
        ASSERT_EQ(p->actions[0].vf, 1);
        ASSERT_STREQ(p->actions[1].target, "0000:41:00.2");
        ASSERT_STREQ(p->actions[2].target, "0000:41:00.4");
        ASSERT_STREQ(action_format_value(&p->actions[1], true, buf, sizeof(buf)), "(native)");
}

TEST(replaced_vfs_are_not_touched) {
        _cleanup_(inventory_freep) Inventory *inv = fixture_inventory();
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nnum_vfs = 4\nvf_driver = vfio-pci\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_actions(p, ACTION_SET_NUM_VFS), 1);
        ASSERT_EQ(count_actions(p, ACTION_SET_VF_DRIVER), 0);
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_IRQ_AFFINITY)
                        ASSERT(strncmp(p->actions[i].target, "0000:41:0", 9) != 0 ||
                               streq(p->actions[i].target, "0000:41:00.0"));
        /* The other PF's VFs are pinned as usual (and the timer and ACPI kept off the RT CPUs). */
        ASSERT_EQ(count_actions(p, ACTION_SET_IRQ_AFFINITY), 9 + 9 + 32 + 2);
}

TEST(vf_config_keys_checked) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;

        ASSERT_EQ(config_load_string("t.conf", "[pf 0000:41:00.0]\nvf_qos = 3\n", NULL, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "t.conf:1: vf_qos = 3 without vf_vlan");
        free(errors);
        errors = NULL;
        ASSERT_EQ(config_load_string("t.conf", "[match 15b3:101d]\nvf_min_tx_rate = 2000\nvf_max_tx_rate = 1000\n",
                                     NULL, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "t.conf:1: vf_min_tx_rate = 2000 exceeds vf_max_tx_rate = 1000");
        free(errors);
        errors = NULL;
        ASSERT_EQ(config_load_string("t.conf", "[pf 0000:41:00.0]\nvf_driver = vfio\n", NULL, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "t.conf:2: vf_driver = \"vfio\" is not valid; expected leave, vfio-pci or host");
        free(errors);
        errors = NULL;
        ASSERT_EQ(config_load_string("t.conf", "[pf 0000:41:00.0]\nvf_link_state = on\n", NULL, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "t.conf:2: vf_link_state = \"on\" is not valid");
        free(errors);
        errors = NULL;
        ASSERT_EQ(config_load_string("t.conf", "[pf 0000:41:00.0]\nvf_vlan = 4095\n", NULL, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "t.conf:2: vf_vlan");
}

TEST(vf_wait_missing) {
        _cleanup_(inventory_freep) Inventory *inv = host(8);
        Pf *pf = &inv->pfs[0];
        char buf[256];

        ASSERT(!vf_wait_missing(pf, 8, buf, sizeof(buf)));
        ASSERT_STREQ(buf, "");
        ASSERT(vf_wait_missing(pf, 12, buf, sizeof(buf)));
        ASSERT_STREQ(buf, "virtfn8-11 missing");
        /* A hole, a lone one, and a VF the driver has not taken yet. */
        memmove(&pf->vfs[3], &pf->vfs[4], 4 * sizeof(Vf));
        pf->n_vfs = 7;
        pf->vfs[0].driver[0] = 0;
        ASSERT(vf_wait_missing(pf, 9, buf, sizeof(buf)));
        ASSERT_STREQ(buf, "virtfn3 missing, virtfn8 missing, 0000:41:00.2 has no driver");
        /* With autoprobe off an unbound VF is what the operator asked for. */
        pf->drivers_autoprobe = 0;
        ASSERT(vf_wait_missing(pf, 9, buf, sizeof(buf)));
        ASSERT_STREQ(buf, "virtfn3 missing, virtfn8 missing");
        ASSERT(vf_wait_missing(NULL, 4, buf, sizeof(buf)));
        ASSERT_STREQ(buf, "the PF is gone");
}

static unsigned n_ready, n_late;
static void on_done(const VfWait *w, bool ready, const char *missing, uint64_t now, void *userdata) {
        if (ready)
                n_ready++;
        else {
                n_late++;
                ASSERT_STREQ(missing, "virtfn8-11 missing");
        }
}

TEST(vf_wait_list) {
        _cleanup_(inventory_freep) Inventory *inv = host(8);
        VfWaitList l = {};

        ASSERT_EQ(vf_wait_add(&l, "0000:41:00.0", 12, 1000, 500), 0);
        ASSERT_EQ(vf_wait_next_deadline(&l), 1500);
        ASSERT(vf_wait_covers(&l, inv, "0000:41:00.2"));
        ASSERT(!vf_wait_covers(&l, inv, "0000:c1:00.2"));
        ASSERT_EQ(vf_wait_check(&l, inv, 1200, on_done, NULL), 1);
        ASSERT_EQ(n_ready + n_late, 0);
        ASSERT_EQ(vf_wait_check(&l, inv, 1500, on_done, NULL), 0);
        ASSERT_EQ(n_late, 1);
        ASSERT_EQ(vf_wait_next_deadline(&l), UINT64_MAX);

        ASSERT_EQ(vf_wait_add(&l, "0000:41:00.0", 8, 2000, 500), 0);
        ASSERT_EQ(vf_wait_check(&l, inv, 2001, on_done, NULL), 0);
        ASSERT_EQ(n_ready, 1);
        vf_wait_list_done(&l);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(refuses_to_destroy_allocated_vfs);
        RUN(allocations_elsewhere_do_not_block);
        RUN(foreign_users_block_even_when_forced);
        RUN(process_user_refused_naming_it);
        RUN(shut_off_domain_blocks_only_when_its_vf_goes);
        RUN(many_users_listed_whole);
        RUN(creation_then_configuration_in_order);
        RUN(only_what_differs_is_sent);
        RUN(derived_macs);
        RUN(released_vf_is_cleaned);
        RUN(drivers_own_mac_is_left);
        RUN(derived_mac_cleaned_though_marked_random);
        RUN(policy_values_win_over_the_baseline);
        RUN(tenant_vf_gets_the_baseline);
        RUN(tenant_rates);
        RUN(clean_only_what_is_free_and_known);
        RUN(one_vf_link);
        RUN(pf_link);
        RUN(no_pf_netdev_waits);
        RUN(vfio_binding);
        RUN(host_driver_leaves_tenants_alone);
        RUN(replaced_vfs_are_not_touched);
        RUN(vf_config_keys_checked);
        RUN(vf_wait_missing);
        RUN(vf_wait_list);
        return 0;
}
