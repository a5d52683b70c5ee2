/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-irq.c — IRQ placement and handler-thread priorities planned on the fixture hosts */

#include <sched.h>
#include <string.h>
#include <sys/stat.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "test-fixture.h"

static const char *fixtures_dir;
static char classes[] = "/tmp/sriovd-classes-XXXXXX";

static void write_class(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.ini", classes, name);
        f = fopen(path, "we");
        ASSERT(f);
        fprintf(f, "[class]\n%s", text);
        ASSERT_EQ(fclose(f), 0);
}

static Config *config(const char *text) {
        return test_config(text, classes);
}

static Inventory *fixture(const char *host) {
        return test_fixture_inventory(fixtures_dir, host, NULL);
}

static const Action *find(const Plan *p, ActionKind kind, unsigned irq) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind && p->actions[i].irq == irq)
                        return &p->actions[i];
        return NULL;
}

static const char *list(const CpuSet *s) {
        static char buf[4][CPUSET_LIST_MAX];
        static unsigned i;
        return cpuset_format_list(s, buf[i++ % 4], sizeof(buf[0]));
}

static size_t count_notes(const Plan *p, NoteLevel level, const char *needle) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_notes; i++)
                n += p->notes[i].level == level && strstr(p->notes[i].text, needle);
        return n;
}

/* The CPU the planner must pick: the (ordinal + i)-th of the set, or ordinal-th for single. */
static unsigned expect_cpu(const char *set_list, unsigned ordinal, unsigned i, bool spread) {
        CpuSet set;
        ASSERT_EQ(cpuset_parse_list(set_list, &set), 0);
        return (unsigned) cpuset_nth(&set, (ordinal + (spread ? i : 0)) % cpuset_count(&set));
}

static void check_device(const Plan *p, const unsigned *irqs, size_t n, unsigned ordinal, const char *set,
                         bool spread, int priority) {
        CpuSet allowed;
        ASSERT_EQ(cpuset_parse_list(set, &allowed), 0);
        for (size_t i = 0; i < n; i++) {
                const Action *a = find(p, ACTION_SET_IRQ_AFFINITY, irqs[i]);
                ASSERT(a);
                ASSERT_STREQ(list(&a->cpus_before), "0-31");
                ASSERT_EQ(cpuset_count(&a->cpus_after), 1);
                ASSERT(cpuset_has(&a->cpus_after, expect_cpu(set, ordinal, (unsigned) i, spread)));

                const Action *t = find(p, ACTION_SET_IRQ_THREAD, irqs[i]);
                if (priority == 0) {
                        ASSERT(!t);
                        continue;
                }
                ASSERT(t);
                ASSERT_EQ(t->pid, 960 + irqs[i]);   /* the fixture's thread of IRQ N */
                ASSERT_EQ(t->policy_before, SCHED_FIFO);
                ASSERT_EQ(t->before, 50);
                ASSERT_EQ(t->policy_after, SCHED_FIFO);
                ASSERT_EQ(t->after, priority);
                ASSERT(!t->restore);
        }
}

TEST(rt_and_numa_local) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nclass = tp\n\n"
                                                    "[pf 0000:41:00.0]\nclass = rt\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const Pf *rt = &inv->pfs[0], *tp = &inv->pfs[1];
        HostCpus hc;

        host_cpus(inv, c, &hc);
        ASSERT_STREQ(list(&hc.rt), "2-7,18-23");                 /* the kernel's isolated CPUs */
        ASSERT_STREQ(list(&hc.housekeeping), "0-1,8-17,24-31"); /* online minus rt */

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        /* Every vector of both PFs and their VFs moves: 82 affinities; 41 threads of the RT PF;
         * the default affinity, the timer's and ACPI's IRQs leave the RT CPUs; and both classes'
         * coalescing goes on the 10 host netdevs (unknown before on a fixture). */
        ASSERT_EQ(p->n_actions, 82 + 41 + 3 + 10);

        /* RT PF on node 0: RT cores of node 0, spread, FIFO 99. */
        check_device(p, rt->irqs, rt->n_irqs, 0, "2-7", true, 99);
        for (size_t j = 0; j < rt->n_vfs; j++)
                check_device(p, rt->vfs[j].irqs, rt->vfs[j].n_irqs, rt->vfs[j].index + 1, "2-7", true, 99);

        /* Throughput PF on node 1: housekeeping CPUs of node 1 only, never an RT core; threads left. */
        check_device(p, tp->irqs, tp->n_irqs, 0, "16-17,24-31", true, 0);
        for (size_t j = 0; j < tp->n_vfs; j++)
                check_device(p, tp->vfs[j].irqs, tp->vfs[j].n_irqs, tp->vfs[j].index + 1, "16-17,24-31", true, 0);
        ASSERT_EQ(count_notes(p, NOTE_ERROR, ""), 0);
}

TEST(single_and_explicit_list) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = single\n\n"
                                                    "[pf 0000:c1:00.0]\nclass = list\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        /* single: all of a device's vectors on one RT core, a different one per device. */
        check_device(p, inv->pfs[0].irqs, inv->pfs[0].n_irqs, 0, "2-7", false, 90);
        check_device(p, inv->pfs[0].vfs[2].irqs, 4, 3, "2-7", false, 90);
        /* An explicit list, cut to online CPUs (40-41 do not exist). */
        check_device(p, inv->pfs[1].irqs, inv->pfs[1].n_irqs, 0, "30-31", true, 0);
}

TEST(vcpu_follows_the_guest) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[pf 0000:c1:00.0]\nclass = vcpu\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const Pf *pf = &inv->pfs[1];
        PlanAllocation allocs[] = {
                { .vf = "0000:c1:00.2", .tenant = "g-running", .class_name = "vcpu", .vlan = -1, .qos = -1, .vcpu0_cpu = 27 },
                { .vf = "0000:c1:00.3", .tenant = "g-stopped", .class_name = "vcpu", .vlan = -1, .qos = -1, .vcpu0_cpu = -1 },
        };
        PlanContext ctx = { .allocations = allocs, .n_allocations = 2 };

        /* No tenant: the PF and its VFs belong to no guest, NUMA-local. */
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        check_device(p, pf->irqs, pf->n_irqs, 0, "16-17,24-31", true, 0);
        check_device(p, pf->vfs[0].irqs, pf->vfs[0].n_irqs, 1, "16-17,24-31", true, 0);

        /* R5: a running guest's VF takes its interrupts on the CPU of the guest's vCPU 0. */
        ASSERT_EQ(plan_build(inv, c, &ctx, &q), 0);
        check_device(q, pf->vfs[0].irqs, pf->vfs[0].n_irqs, 1, "27", true, 0);
        /* A stopped guest's CPU is not known: NUMA-local meanwhile, and said. */
        check_device(q, pf->vfs[1].irqs, pf->vfs[1].n_irqs, 2, "16-17,24-31", true, 0);
        ASSERT_EQ(count_notes(q, NOTE_INFO, "tenant g-stopped: vCPU 0's host CPU is not known yet"), 1);
        check_device(q, pf->irqs, pf->n_irqs, 0, "16-17,24-31", true, 0);
}

TEST(tenant_class_beats_pf_class) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = tp\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const Pf *pf = &inv->pfs[0];
        PlanAllocation alloc = { .vf = "0000:41:00.4", .tenant = "trader", .class_name = "rt", .vlan = -1, .qos = -1,
                                 .vcpu0_cpu = -1 };
        PlanContext ctx = { .allocations = &alloc, .n_allocations = 1 };

        /* A latency-critical tenant's VF on a throughput PF: RT cores of the node, FIFO 99; the rest NUMA-local. */
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        check_device(p, pf->vfs[2].irqs, pf->vfs[2].n_irqs, 3, "2-7", true, 99);
        check_device(p, pf->vfs[1].irqs, pf->vfs[1].n_irqs, 2, "0-1,8-15", true, 0);
        check_device(p, pf->irqs, pf->n_irqs, 0, "0-1,8-15", true, 0);
}

TEST(configured_cpus_and_empty_sets) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        /* RT cores only on node 1: the node-0 RT PF has nowhere to go and is left alone. */
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 20-23,40\nhousekeeping = 0-15\n\n"
                                                    "[pf 0000:41:00.0]\nclass = rt\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        HostCpus hc;

        host_cpus(inv, c, &hc);
        ASSERT_STREQ(list(&hc.rt), "20-23");
        ASSERT_STREQ(list(&hc.housekeeping), "0-15");
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "RT CPUs 40 are not online"), 1);
        ASSERT_EQ(count_notes(p, NOTE_ERROR, "leaves no online CPU on NUMA node 0"), 1);
        ASSERT(!find(p, ACTION_SET_IRQ_AFFINITY, 44));
        ASSERT(!find(p, ACTION_SET_IRQ_THREAD, 44));
        /* The unclassed node-1 PF: housekeeping of node 1 is empty with this [cpus] too. */
        ASSERT_EQ(count_notes(p, NOTE_ERROR, "leaves no online CPU on NUMA node 1"), 1);
}

TEST(managed_and_unmanaged_left_alone) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = rt\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        unsigned unmanaged[] = { 45, 60 };
        PlanContext ctx = { .unmanaged_irqs = unmanaged, .n_unmanaged = 2 };

        /* As if the kernel managed IRQ 44 itself. */
        ((Irq *) inventory_find_irq(inv, 44))->writable = false;
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT(!find(p, ACTION_SET_IRQ_AFFINITY, 44));
        ASSERT(!find(p, ACTION_SET_IRQ_AFFINITY, 45));
        ASSERT(!find(p, ACTION_SET_IRQ_AFFINITY, 60));
        ASSERT(find(p, ACTION_SET_IRQ_AFFINITY, 46));
        ASSERT(find(p, ACTION_SET_IRQ_THREAD, 44));   /* its thread is still ours to prioritise */
        ASSERT_EQ(count_notes(p, NOTE_INFO, "1 kernel-managed IRQs (read-only affinity) left to the kernel"), 1);
}

TEST(restore_when_leaving_rt) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[pf 0000:41:00.0]\nclass = tp\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        /* sriovd raised IRQ 44's and 46's threads earlier; 46's PID has since been reused by IRQ 47's. */
        SavedSched saved[] = {
                { .pid = 1004, .irq = 44, .policy = SCHED_OTHER, .priority = 0 },
                { .pid = 1007, .irq = 46, .policy = SCHED_OTHER, .priority = 0 },
        };
        PlanContext ctx = { .saved = saved, .n_saved = 2 };

        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        const Action *t = find(p, ACTION_SET_IRQ_THREAD, 44);
        ASSERT(t);
        ASSERT(t->restore);
        ASSERT_EQ(t->policy_before, SCHED_FIFO);
        ASSERT_EQ(t->policy_after, SCHED_OTHER);
        ASSERT_EQ(t->after, 0);
        ASSERT(!find(p, ACTION_SET_IRQ_THREAD, 47));
        ASSERT(!find(p, ACTION_SET_IRQ_THREAD, 46));
}

TEST(no_threaded_irqs_partially_enforceable) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("one-socket-cx7");
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 6-7\n\n[match 15b3:1021]\nclass = rt\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "runs IRQ handlers unthreaded"), 1);
        /* Node unknown, RT policy: any RT core, never a guessed node. */
        for (unsigned irq = 40; irq <= 48; irq++) {
                const Action *a = find(p, ACTION_SET_IRQ_AFFINITY, irq);
                ASSERT(a);
                ASSERT(cpuset_has(&a->cpus_after, 6 + (irq - 40) % 2));
        }
}

static Irq *other_irq(Inventory *inv, unsigned irq) {
        for (size_t i = 0; i < inv->n_other_irqs; i++)
                if (inv->other_irqs[i].irq == irq)
                        return &inv->other_irqs[i];
        return NULL;
}

TEST(other_irqs_off_rt) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *on = config(""), *off = config("[cpus]\nkeep_irqs_off_rt = no\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;
        Irq *acpi = other_irq(inv, 9), *nvme = other_irq(inv, 40);
        const Action *a;

        /* Discovery: the host's other IRQs by name; the NVMe's are read-only. */
        ASSERT(acpi && nvme);
        ASSERT_STREQ(acpi->action, "acpi");
        ASSERT_STREQ(nvme->action, "nvme0q0");
        ASSERT(!nvme->writable);
        ASSERT(!other_irq(inv, 44));   /* a NIC vector is not "other" */
        ASSERT(inv->have_default_affinity);
        ASSERT_STREQ(list(&inv->default_affinity), "0-31");

        /* An operator's own placement is kept, minus the RT CPUs; wholly RT, it goes to housekeeping. */
        ASSERT_EQ(cpuset_parse_list("1-3", &acpi->affinity), 0);
        ASSERT_EQ(cpuset_parse_list("4", &other_irq(inv, 0)->affinity), 0);
        ASSERT_EQ(plan_build(inv, on, NULL, &p), 0);
        a = find(p, ACTION_SET_IRQ_AFFINITY, 9);
        ASSERT(a);
        ASSERT_STREQ(list(&a->cpus_after), "1");
        a = find(p, ACTION_SET_IRQ_AFFINITY, 0);
        ASSERT(a);
        ASSERT_STREQ(list(&a->cpus_after), "0-1,8-17,24-31");
        ASSERT(!find(p, ACTION_SET_IRQ_AFFINITY, 40));

        /* Managed vectors whose effective CPU is an RT one: only the kernel can move them, said so. */
        ASSERT_EQ(cpuset_parse_list("3", &nvme->effective), 0);
        ASSERT_EQ(plan_build(inv, on, NULL, &q), 0);
        ASSERT_EQ(count_notes(q, NOTE_INFO, "1 kernel-managed IRQs (first: nvme0q0) run on RT CPUs"), 1);

        /* Opted out: nothing but the NICs. */
        ASSERT_EQ(plan_build(inv, off, NULL, &r), 0);
        ASSERT(!find(r, ACTION_SET_IRQ_AFFINITY, 9));
        for (size_t i = 0; i < r->n_actions; i++)
                ASSERT(r->actions[i].kind != ACTION_SET_IRQ_DEFAULT);
}

/* The actions of kind on irq in p, compared field by field with those in q. */
static void same_irq_actions(const Plan *p, const Plan *q, const char *addr) {
        size_t n = 0;

        for (size_t i = 0; i < p->n_actions; i++) {
                const Action *a = &p->actions[i], *b;

                if ((a->kind != ACTION_SET_IRQ_AFFINITY && a->kind != ACTION_SET_IRQ_THREAD) || !streq(a->target, addr))
                        continue;
                n++;
                b = find(q, a->kind, a->irq);
                ASSERT(b);
                ASSERT_STREQ(b->target, addr);
                ASSERT(cpuset_equal(&a->cpus_after, &b->cpus_after));
                ASSERT_EQ(a->after, b->after);
                ASSERT_EQ(a->policy_after, b->policy_after);
        }
        ASSERT(n > 0);
        ASSERT_EQ(q->n_actions, n);
}

/*
 * A hotplug's plan (plan_build_vf_irqs()) is plan_build()'s for that VF, tenant classes and all,
 * and needs of the inventory only the host's CPUs and that VF's vectors. plan_build_pf_irqs() is
 * plan_build()'s for a PF's own vectors.
 */
TEST(hotplug_one_vf) {
        _cleanup_(inventory_freep) Inventory *inv = fixture("two-socket");
        _cleanup_(config_freep) Config *c = config("[match 15b3:101d]\nclass = tp\n\n[pf 0000:41:00.0]\nclass = rt\n");
        _cleanup_(config_freep) Config *recount = config("[pf 0000:c1:00.0]\nnum_vfs = 2\n");
        _cleanup_(plan_freep) Plan *all = NULL, *one = NULL, *none = NULL, *added = NULL;
        PlanAllocation alloc = { .vf = "0000:c1:00.3", .tenant = "trader", .class_name = "rt", .vlan = -1, .qos = -1,
                                 .vcpu0_cpu = -1 };
        PlanContext ctx = { .allocations = &alloc, .n_allocations = 1 };
        Irq fresh[2];

        ASSERT_EQ(plan_build(inv, c, &ctx, &all), 0);
        for (size_t i = 0; i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++) {
                        ASSERT_EQ(plan_build_vf_irqs(inv, c, &ctx, &inv->pfs[i], &inv->pfs[i].vfs[j], &one), 0);
                        same_irq_actions(all, one, inv->pfs[i].vfs[j].addr);
                        one = plan_free(one);
                }
        /* A PF's own vectors, as the repair of a drift event plans them. */
        for (size_t i = 0; i < inv->n_pfs; i++) {
                ASSERT_EQ(plan_build_pf_irqs(inv, c, &ctx, &inv->pfs[i], &one), 0);
                same_irq_actions(all, one, inv->pfs[i].addr);
                one = plan_free(one);
        }
        /* Its PF's VFs are about to be replaced: nothing for them, as in plan_build(). */
        ASSERT_EQ(plan_build_vf_irqs(inv, recount, NULL, &inv->pfs[1], &inv->pfs[1].vfs[0], &none), 0);
        ASSERT_EQ(none->n_actions, 1);
        ASSERT_EQ(none->actions[0].kind, ACTION_SET_NUM_VFS);

        /*
         * A VF index the PF did not have, planned as the daemon's hotplug does: against an inventory
         * of the host's topology and the new VF's vectors only (one not in /proc yet left out).
         */
        unsigned vectors[] = { 9001, 9002, 9003 };
        Vf fresh_vf = { .index = inv->pfs[1].vfs[inv->pfs[1].n_vfs - 1].index + 2, .irqs = vectors, .n_irqs = 3,
                        .iommu_group = -1 };
        strscpy(fresh_vf.addr, sizeof(fresh_vf.addr), "0000:c1:07.7");
        fresh[0] = (Irq) { .irq = 9001, .writable = true };
        fresh[1] = (Irq) { .irq = 9002, .writable = true };
        ASSERT_EQ(cpuset_parse_list("0-31", &fresh[0].affinity), 0);   /* as the kernel makes them */
        fresh[1].affinity = fresh[0].affinity;
        Inventory view = { .topo = inv->topo, .caps = inv->caps, .irqs = fresh, .n_irqs = 2 };
        ASSERT_EQ(plan_build_vf_irqs(&view, c, NULL, &inv->pfs[1], &fresh_vf, &added), 0);
        ASSERT_EQ(added->n_actions, 2);
        check_device(added, vectors, 2, fresh_vf.index + 1, "16-17,24-31", true, 0);
        ASSERT(!find(added, ACTION_SET_IRQ_AFFINITY, 9003));
}

int main(int argc, char **argv) {
        char cmd[256];

        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        ASSERT(mkdtemp(classes));
        write_class("rt", "vnic = sriov-required\nirq_cpus = rt\nirq_spread = spread\nirq_thread_priority = 99\n");
        write_class("single", "vnic = sriov-required\nirq_cpus = rt\nirq_spread = single\nirq_thread_priority = 90\n");
        write_class("tp", "vnic = sriov-preferred\nirq_cpus = numa-local\nirq_spread = spread\n");
        write_class("list", "vnic = sriov-preferred\nirq_cpus = 30-31,40-41\n");
        write_class("vcpu", "vnic = sriov-required\nirq_cpus = vcpu\n");

        RUN(rt_and_numa_local);
        RUN(single_and_explicit_list);
        RUN(vcpu_follows_the_guest);
        RUN(tenant_class_beats_pf_class);
        RUN(configured_cpus_and_empty_sets);
        RUN(managed_and_unmanaged_left_alone);
        RUN(restore_when_leaving_rt);
        RUN(no_threaded_irqs_partially_enforceable);
        RUN(other_irqs_off_rt);
        RUN(hotplug_one_vf);

        snprintf(cmd, sizeof(cmd), "rm -rf %s", classes);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
