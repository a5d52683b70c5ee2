/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-tune.c — coalescing and offloads per class, per tenant and per device, planned purely */

#include <string.h>
#include <unistd.h>

#include "sriovd/core/plan.h"
#include "test-fixture.h"

static char classes[] = "/tmp/sriovd-tune-XXXXXX";

static void write_class(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.ini", classes, name);
        f = fopen(path, "we");
        ASSERT(f);
        fprintf(f, "[class]\nvnic = sriov-preferred\n%s", text);
        ASSERT_EQ(fclose(f), 0);
}

static Config *config(const char *text) {
        return test_config(text, classes);
}

/* PF 0000:41:00.0 (ifindex 4) with VFs 0-2 on netdevs 10-12 and VF 3 passed through (no netdev). */
static Inventory *host(bool known) {
        Inventory *inv = calloc(1, sizeof(*inv));
        Pf *pf;

        ASSERT(inv);
        ASSERT_EQ(cpuset_parse_list("0-7", &inv->topo.online), 0);
        inv->pfs = calloc(1, sizeof(Pf));
        ASSERT(inv->pfs);
        inv->n_pfs = 1;
        pf = &inv->pfs[0];
        strcpy(pf->addr, "0000:41:00.0");
        pf->vendor = 0x15b3;
        pf->device = 0x101d;
        pf->total_vfs = pf->num_vfs = 4;
        pf->ifindex = 4;
        pf->vfs = calloc(4, sizeof(Vf));
        ASSERT(pf->vfs);
        pf->n_vfs = 4;
        for (unsigned i = 0; i < 4; i++) {
                Vf *vf = &pf->vfs[i];
                vf->index = i;
                snprintf(vf->addr, sizeof(vf->addr), "0000:41:00.%u", i + 2);
                vf->ifindex = i < 3 ? 10 + (int) i : 0;
        }
        /* What a driver reports: 8 us windows, GRO on, LRO absent, TSO fixed off. */
        NetdevTune t = {
                .coalesce = { .rx_usecs = 8, .tx_usecs = 8, .rx_frames = 32, .tx_frames = 32, .adaptive_rx = 1,
                              .adaptive_tx = 1 },
                .features = { .active = { 0, 1, 1, -1 }, .changeable = { 0, 1, 1, 0 } },
                .known = known,
        };
        pf->tune = t;
        for (unsigned i = 0; i < 3; i++)
                pf->vfs[i].tune = t;
        return inv;
}

static size_t count(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static const Action *find(const Plan *p, ActionKind kind, const char *target) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind && streq(p->actions[i].target, target))
                        return &p->actions[i];
        return NULL;
}

static const PlanNote *note(const Plan *p, const char *target, const char *needle) {
        for (size_t i = 0; i < p->n_notes; i++)
                if (streq(p->notes[i].target, target) && strstr(p->notes[i].text, needle))
                        return &p->notes[i];
        return NULL;
}

TEST(class_window_on_every_host_netdev) {
        _cleanup_(inventory_freep) Inventory *inv = host(true);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = tp\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;
        char buf[256];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        /* The PF and the three VFs with a host netdev; adaptive left alone by the class. */
        ASSERT_EQ(count(p, ACTION_SET_COALESCE), 4);
        a = find(p, ACTION_SET_COALESCE, "0000:41:00.0");
        ASSERT(a);
        ASSERT_EQ(a->netdev_ifindex, 4);
        ASSERT_EQ(a->coalesce_after.rx_usecs, 50);
        ASSERT_EQ(a->coalesce_after.tx_usecs, 50);
        ASSERT_EQ(a->coalesce_after.rx_frames, -1);
        ASSERT_EQ(a->coalesce_after.adaptive_rx, -1);
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "rx-usecs 8, tx-usecs 8");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "rx-usecs 50, tx-usecs 50");
        ASSERT_STREQ(a->effect, "class tp");
        ASSERT_EQ(find(p, ACTION_SET_COALESCE, "0000:41:00.4")->netdev_ifindex, 12);
        ASSERT(!find(p, ACTION_SET_COALESCE, "0000:41:00.5"));
        /* No offload wanted: no offload action. */
        ASSERT_EQ(count(p, ACTION_SET_OFFLOADS), 0);
}

TEST(only_what_differs) {
        _cleanup_(inventory_freep) Inventory *inv = host(true);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = lc\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        Pf *pf = &inv->pfs[0];

        /* lc: 0 us, adaptive off. VF 1 already is; the PF has adaptive off but 8 us. */
        pf->vfs[1].tune.coalesce = (Coalesce) { 0, 0, 32, 32, 0, 0 };
        pf->tune.coalesce.adaptive_rx = pf->tune.coalesce.adaptive_tx = 0;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_COALESCE), 3);
        ASSERT(!find(p, ACTION_SET_COALESCE, "0000:41:00.3"));
        const Action *a = find(p, ACTION_SET_COALESCE, "0000:41:00.0");
        ASSERT(a);
        ASSERT_EQ(a->coalesce_after.adaptive_rx, -1);
        ASSERT_EQ(a->coalesce_after.rx_usecs, 0);

        /* On a fixture nothing is known: everything the class sets, from "?". */
        pf->tune.known = false;
        ASSERT_EQ(plan_build(inv, c, NULL, &q), 0);
        a = find(q, ACTION_SET_COALESCE, "0000:41:00.0");
        char buf[128];
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "?");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "rx-usecs 0, tx-usecs 0, adaptive-rx off, adaptive-tx off");
}

TEST(tenants_class_and_own_window) {
        _cleanup_(inventory_freep) Inventory *inv = host(true);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = tp\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        PlanAllocation allocs[3] = {
                { .vf = "0000:41:00.2", .tenant = "trader", .class_name = "lc", .vlan = -1, .qos = -1 },
                { .vf = "0000:41:00.3", .tenant = "video", .class_name = "tp", .have_coalesce = true,
                  .rx_usecs = 200, .tx_usecs = 100, .vlan = -1, .qos = -1 },
                { .vf = "0000:41:00.5", .tenant = "guest", .class_name = "tp", .vlan = -1, .qos = -1 },
        };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 3 };
        const Action *a;
        const PlanNote *n;

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        a = find(p, ACTION_SET_COALESCE, "0000:41:00.2");
        ASSERT_EQ(a->coalesce_after.rx_usecs, 0);   /* the tenant's class, not the PF's */
        ASSERT_STREQ(a->effect, "class lc, tenant trader");
        a = find(p, ACTION_SET_COALESCE, "0000:41:00.3");
        ASSERT_EQ(a->coalesce_after.rx_usecs, 200);
        ASSERT_EQ(a->coalesce_after.tx_usecs, 100);
        ASSERT_STREQ(a->effect, "class tp, tenant video (own window)");
        /* A VF in a guest: said so, not pretended. */
        n = note(p, "0000:41:00.5", "tenant guest: coalescing not enforceable from the host");
        ASSERT(n);
        ASSERT_EQ(n->level, NOTE_INFO);
}

TEST(unsupported_is_said_not_retried) {
        _cleanup_(inventory_freep) Inventory *inv = host(true);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = tp\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const char refused[][PCI_ADDR_MAX] = { "0000:41:00.3" };
        PlanContext ctx = { .coalesce_unsupported = refused, .n_coalesce_unsupported = 1 };

        inv->pfs[0].tune.coalesce_error = -EOPNOTSUPP;
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT(!find(p, ACTION_SET_COALESCE, "0000:41:00.0"));
        ASSERT(note(p, "0000:41:00.0", "coalescing not supported by the driver (EOPNOTSUPP); class tp's 50/50 us"));
        ASSERT(!find(p, ACTION_SET_COALESCE, "0000:41:00.3"));
        ASSERT(note(p, "0000:41:00.3", "refused coalescing changes; not tried again"));
        ASSERT_EQ(count(p, ACTION_SET_COALESCE), 2);

        inv->pfs[0].tune.coalesce_error = -ENODEV;
        ASSERT_EQ(plan_build(inv, c, NULL, &q), 0);
        ASSERT(note(q, "0000:41:00.0", "coalescing could not be read (No such device)"));
}

TEST(offloads) {
        _cleanup_(inventory_freep) Inventory *inv = host(true);
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = lro\n");
        _cleanup_(config_freep) Config *d = config("[pf 0000:41:00.0]\nclass = bulk\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const Action *a;
        char buf[128];

        /* lro: GRO off, LRO off. LRO is absent (already off), GRO changes. */
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_OFFLOADS), 4);
        a = find(p, ACTION_SET_OFFLOADS, "0000:41:00.0");
        ASSERT_EQ(a->offloads_after[OFFLOAD_GRO], 0);
        ASSERT_EQ(a->offloads_after[OFFLOAD_LRO], -1);
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "gro on");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "gro off");

        /* bulk: TSO on (fixed off here) and LRO on (absent): said, not attempted. */
        ASSERT_EQ(plan_build(inv, d, NULL, &q), 0);
        ASSERT_EQ(count(q, ACTION_SET_OFFLOADS), 0);
        ASSERT(note(q, "0000:41:00.0", "class bulk wants tso on, but the device cannot change it"));
        ASSERT(note(q, "0000:41:00.0", "class bulk wants lro on, but the device does not have it"));
}

TEST(class_file_mistakes) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;

        write_class("broken", "offload_lso = off\ncoalesce_rx_usecs = -5\n");
        ASSERT_EQ(config_load_string("t.conf", "", classes, &c, &errors), -EINVAL);
        ASSERT_CONTAINS(errors, "broken.ini:3: unknown key \"offload_lso\" in [class]; did you mean \"offload_tso\"?");
        ASSERT_CONTAINS(errors, "broken.ini:4: coalesce_rx_usecs = -5 is out of range; expected an integer from 0 to 100000");
        char path[256];
        snprintf(path, sizeof(path), "%s/broken.ini", classes);
        ASSERT_EQ(unlink(path), 0);
}

int main(void) {
        ASSERT(mkdtemp(classes));
        write_class("tp", "");
        write_class("lc", "coalesce_rx_usecs = 0\ncoalesce_tx_usecs = 0\nadaptive_rx = off\nadaptive_tx = off\n");
        write_class("lro", "offload_gro = off\noffload_lro = off\n");
        write_class("bulk", "offload_tso = on\noffload_lro = on\n");
        RUN(class_window_on_every_host_netdev);
        RUN(only_what_differs);
        RUN(tenants_class_and_own_window);
        RUN(unsupported_is_said_not_retried);
        RUN(offloads);
        RUN(class_file_mistakes);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", classes);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
