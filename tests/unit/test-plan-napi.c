/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-napi.c — NAPIs paired with IRQs, threaded NAPI and channels per class, planned purely */

#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/core/napi-pair.h"
#include "sriovd/core/plan.h"
#include "test-fixture.h"

static char classes[] = "/tmp/sriovd-napi-XXXXXX";

static void write_class(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.ini", classes, name);
        f = fopen(path, "we");
        ASSERT(f);
        fprintf(f, "[class]\nvnic = sriov-preferred\n%s", text);
        ASSERT_EQ(fclose(f), 0);
}

/* Class "rt" with what the keys would set (the INI keys have their own tests). */
static Config *config(Tristate threaded, long combined, NapiParams params) {
        Config *c = test_config("[pf 0000:41:00.0]\nclass = rt\n", classes);
        TenantClass *cls = (TenantClass *) config_find_class(c, "rt");

        ASSERT(cls);
        cls->napi_threads = threaded;
        cls->channels.combined = combined;
        cls->napi_params = params;
        return c;
}

/*
 * PF 0000:41:00.0, netdev enp65s0 (ifindex 4), no VFs, IRQs 44 (mailbox), 45-46 (TxRx-0/1) on
 * CPUs 0-7; with threaded NAPI its NAPIs 8193/8194 have threads 901/902 on every CPU, SCHED_OTHER.
 */
static Inventory *host(int threaded, bool paired) {
        Inventory *inv = calloc(1, sizeof(*inv));
        Pf *pf;
        NetdevNapi *n;

        ASSERT(inv);
        ASSERT_EQ(cpuset_parse_list("0-7", &inv->topo.online), 0);
        inv->pfs = calloc(1, sizeof(Pf));
        ASSERT(inv->pfs);
        inv->n_pfs = 1;
        pf = &inv->pfs[0];
        strcpy(pf->addr, "0000:41:00.0");
        pf->vendor = 0x15b3;
        pf->device = 0x101d;
        pf->numa_node = -1;
        pf->ifindex = 4;
        pf->netdevs = calloc(1, IF_NAMESIZE);
        ASSERT(pf->netdevs);
        strcpy(pf->netdevs[0], "enp65s0");
        pf->n_netdevs = 1;
        pf->irqs = calloc(3, sizeof(unsigned));
        ASSERT(pf->irqs);
        inv->irqs = calloc(3, sizeof(Irq));
        ASSERT(inv->irqs);
        for (unsigned i = 0; i < 3; i++) {
                pf->irqs[i] = 44 + i;
                inv->irqs[i] = (Irq) { .irq = 44 + i, .writable = true };
                ASSERT_EQ(cpuset_parse_list("0-7", &inv->irqs[i].affinity), 0);
        }
        pf->n_irqs = inv->n_irqs = 3;
        pf->tune = (NetdevTune) {
                .channels = { .rx = -1, .tx = -1, .other = 1, .combined = 2, .max_combined = 4 },
                .known = true,
                .napi_known = true,
        };
        n = &pf->tune.napi;
        n->threaded = threaded;
        if (threaded > 0) {
                n->napis = calloc(2, sizeof(Napi));
                ASSERT(n->napis);
                n->n_napis = 2;
                for (unsigned i = 0; i < 2; i++) {
                        Napi *x = &n->napis[i];
                        *x = (Napi) { .id = 8193 + i, .irq = paired ? 45 + i : 0, .thread = 901 + (pid_t) i,
                                      .thread_policy = SCHED_OTHER, .params = { 0, 0, 0 } };
                        snprintf(x->thread_name, sizeof(x->thread_name), "napi/enp65s0-%u", x->id);
                        ASSERT_EQ(cpuset_parse_list("0-7", &x->thread_cpus), 0);
                }
                n->pairing = paired ? NAPI_PAIRED_QUEUES : NAPI_PAIRED_NONE;
        }
        return inv;
}

static size_t count(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static const Action *find_pid(const Plan *p, ActionKind kind, pid_t pid) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind && p->actions[i].pid == pid)
                        return &p->actions[i];
        return NULL;
}

static const Action *find_irq(const Plan *p, ActionKind kind, unsigned irq) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind && p->actions[i].irq == irq)
                        return &p->actions[i];
        return NULL;
}

static const PlanNote *note(const Plan *p, NoteLevel level, const char *needle) {
        for (size_t i = 0; i < p->n_notes; i++)
                if (p->notes[i].level == level && strstr(p->notes[i].text, needle))
                        return &p->notes[i];
        return NULL;
}

static const Action *find(const Plan *p, ActionKind kind) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind)
                        return &p->actions[i];
        return NULL;
}

static size_t index_of(const Plan *p, const Action *a) {
        return (size_t) (a - p->actions);
}

static int queue_of(const char *action, const char *netdev, bool want_tx_only) {
        bool tx_only = !want_tx_only;
        int q = irq_queue_index(action, netdev, &tx_only);

        ASSERT_EQ(tx_only, want_tx_only);
        return q;
}

TEST(queue_index_from_handler_names) {
        ASSERT_EQ(queue_of("enp65s0-TxRx-0", "enp65s0", false), 0);
        ASSERT_EQ(queue_of("enp65s0-TxRx-12", "enp65s0", false), 12);
        ASSERT_EQ(queue_of("enp65s0v0-rx-0", "enp65s0v0", false), 0);
        ASSERT_EQ(queue_of("enp65s0v0-tx-0", "enp65s0v0", true), 0);
        ASSERT_EQ(queue_of("i40e-ens1f0-TxRx-3", "ens1f0", false), 3);
        ASSERT_EQ(queue_of("mlx5_comp7@pci:0000:41:00.0", "enp65s0f0np0", false), 7);
        /* Not queue vectors: the mailbox, another netdev's, a prefix of a longer name, no number. */
        ASSERT_EQ(queue_of("enp65s0", "enp65s0", false), -1);
        ASSERT_EQ(queue_of("enp65s1-TxRx-0", "enp65s0", false), -1);
        ASSERT_EQ(queue_of("enp65s0v0-TxRx-1", "enp65s0", false), -1);
        ASSERT_EQ(queue_of("enp65s0-TxRx-", "enp65s0", false), -1);
        ASSERT_EQ(queue_of("enp65s0-TxRx-1x", "enp65s0", false), -1);
        ASSERT_EQ(queue_of("mlx5_async0@pci:0000:41:00.0", "x", false), -1);
        ASSERT_EQ(queue_of("", "", false), -1);
}

TEST(napis_paired_by_vector_order) {
        Napi napis[3] = { { .id = 8193 }, { .id = 8194 }, { .id = 8195 } };
        /* igb with queue pairs, listed out of order. */
        QueueIrq q[3] = { { 60, 2, false }, { 58, 0, false }, { 59, 1, false } };
        /* igbvf: rx-0, tx-0 (cleaned in the hard IRQ: no NAPI of its own). */
        QueueIrq vf[2] = { { 71, 0, true }, { 70, 0, false } };
        /* igb with separate vectors: rx vectors first, then tx, each with a NAPI. */
        QueueIrq sep[2] = { { 81, 0, true }, { 80, 0, false } };

        ASSERT_EQ(napi_pair_by_queues(napis, 3, q, 3), 3);
        ASSERT_EQ(napis[0].irq, 58);
        ASSERT_EQ(napis[1].irq, 59);
        ASSERT_EQ(napis[2].irq, 60);

        ASSERT_EQ(napi_pair_by_queues(napis, 1, vf, 2), 1);
        ASSERT_EQ(napis[0].irq, 70);
        ASSERT_EQ(napi_pair_by_queues(napis, 2, sep, 2), 2);
        ASSERT_EQ(napis[0].irq, 80);
        ASSERT_EQ(napis[1].irq, 81);

        /* Names cut at 15 characters: every id the same, no order to pair by. */
        Napi cut[2] = { { .id = 8 }, { .id = 8 } };
        QueueIrq two[2] = { { 58, 0, false }, { 59, 1, false } };
        ASSERT_EQ(napi_pair_by_queues(cut, 2, two, 2), 0);
        ASSERT_EQ(cut[0].irq, 0);

        /* Counts that agree neither way: nothing guessed. */
        for (size_t i = 0; i < 3; i++)
                napis[i].irq = 0;
        ASSERT_EQ(napi_pair_by_queues(napis, 3, q, 2), 0);
        ASSERT_EQ(napi_pair_by_queues(napis, 3, sep, 2), 0);
        for (size_t i = 0; i < 3; i++)
                ASSERT_EQ(napis[i].irq, 0);
        ASSERT_EQ(napi_pair_by_queues(napis, 0, q, 0), 0);
}

TEST(threaded_switched_on_threads_placed_next_pass) {
        _cleanup_(inventory_freep) Inventory *inv = host(0, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_ON, -1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;
        char buf[64];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_THREADED), 1);
        a = find(p, ACTION_SET_NAPI_THREADED);
        ASSERT(a);
        ASSERT_STREQ(a->netdev, "enp65s0");
        ASSERT_EQ(a->before, 0);
        ASSERT_EQ(a->after, 1);
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "on");
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PIN), 0);

        /* A kernel without the file: said, never an error. */
        plan_free(TAKE_PTR(p));
        inv->pfs[0].tune.napi.threaded = -1;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_THREADED), 0);
        ASSERT(note(p, NOTE_INFO, "threaded NAPI unavailable"));
}

TEST(threads_follow_their_irqs_at_the_class_priority) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_ON, -1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *pin0, *pin1, *aff0, *sched;
        char buf[64];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        /* irq_cpus = 2-3 spread: IRQ 44 on 2, 45 on 3, 46 on 2; each NAPI follows its IRQ. */
        aff0 = find_irq(p, ACTION_SET_IRQ_AFFINITY, 45);
        ASSERT(aff0);
        ASSERT_STREQ(cpuset_format_list(&aff0->cpus_after, buf, sizeof(buf)), "3");
        pin0 = find_pid(p, ACTION_SET_NAPI_PIN, 901);
        pin1 = find_pid(p, ACTION_SET_NAPI_PIN, 902);
        ASSERT(pin0 && pin1);
        ASSERT_EQ(pin0->irq, 45);
        ASSERT_STREQ(pin0->thread_name, "napi/enp65s0-8193");
        ASSERT_STREQ(action_format_value(pin0, false, buf, sizeof(buf)), "0-7");
        ASSERT_STREQ(action_format_value(pin0, true, buf, sizeof(buf)), "3");
        ASSERT_STREQ(action_format_value(pin1, true, buf, sizeof(buf)), "2");
        ASSERT(strstr(pin0->effect, "queue order"));
        /* After the IRQs they follow; each onto its CPUs before it is raised. */
        ASSERT(index_of(p, pin0) > index_of(p, aff0));
        ASSERT(index_of(p, find_pid(p, ACTION_SET_NAPI_SCHED, 901)) > index_of(p, pin0));
        /* napi_thread_priority follows irq_thread_priority (60). */
        sched = find_pid(p, ACTION_SET_NAPI_SCHED, 901);
        ASSERT(sched);
        ASSERT_EQ(sched->after, 60);
        ASSERT_EQ(sched->policy_after, SCHED_FIFO);
        ASSERT_STREQ(action_format_value(sched, true, buf, sizeof(buf)), "fifo/60");
        ASSERT(find_pid(p, ACTION_SET_NAPI_SCHED, 902));

        /* Once there, nothing: the second pass plans no NAPI action. */
        plan_free(TAKE_PTR(p));
        for (size_t i = 0; i < 2; i++) {
                Napi *n = &inv->pfs[0].tune.napi.napis[i];
                n->thread_policy = SCHED_FIFO;
                n->thread_priority = 60;
        }
        for (size_t i = 0; i < 3; i++) {
                cpuset_clear(&inv->irqs[i].affinity);
                cpuset_add(&inv->irqs[i].affinity, i == 1 ? 3 : 2);
        }
        cpuset_clear(&inv->pfs[0].tune.napi.napis[0].thread_cpus);
        cpuset_add(&inv->pfs[0].tune.napi.napis[0].thread_cpus, 3);
        cpuset_clear(&inv->pfs[0].tune.napi.napis[1].thread_cpus);
        cpuset_add(&inv->pfs[0].tune.napi.napis[1].thread_cpus, 2);
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PIN) + count(p, ACTION_SET_NAPI_SCHED) + count(p, ACTION_SET_IRQ_AFFINITY), 0);

        /* napi_thread_priority 0: the threads' priority is left alone, their CPUs still follow. */
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->napi_thread_priority = 0;
        inv->pfs[0].tune.napi.napis[0].thread_priority = 1;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_SCHED), 0);
}

TEST(restored_once_the_class_lets_go) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_LEAVE, -1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;
        /* sriovd found 901 at other/0 and raised it; 902's PID is now another thread's. */
        const SavedSched saved[] = {
                { .pid = 901, .policy = SCHED_OTHER, .priority = 0, .name = "napi/enp65s0-8193" },
                { .pid = 902, .policy = SCHED_OTHER, .priority = 0, .name = "napi/enp65s0-7000" },
        };
        PlanContext ctx = { .saved = saved, .n_saved = 2 };
        const Action *a;

        for (size_t i = 0; i < 2; i++) {
                inv->pfs[0].tune.napi.napis[i].thread_policy = SCHED_FIFO;
                inv->pfs[0].tune.napi.napis[i].thread_priority = 60;
        }
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_SCHED), 1);
        a = find_pid(p, ACTION_SET_NAPI_SCHED, 901);
        ASSERT(a);
        ASSERT(a->restore);
        ASSERT_EQ(a->policy_after, SCHED_OTHER);
        ASSERT_EQ(a->after, 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PIN), 0);   /* where it runs is left as it is */

        /* Still the class's, at its priority: no restore. */
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->napi_threads = TRISTATE_ON;
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_SCHED), 0);
}

TEST(unpaired_threads_are_said_not_guessed) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, false);
        _cleanup_(config_freep) Config *c = config(TRISTATE_ON, -1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PIN), 0);
        /* Raised while it may still run anywhere, it would preempt whatever runs on the RT CPUs. */
        ASSERT_EQ(count(p, ACTION_SET_NAPI_SCHED), 0);
        ASSERT(note(p, NOTE_WARNING, "2 napi/ threads of enp65s0 not paired"));
}

TEST(leave_touches_nothing) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_LEAVE, -1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_THREADED) + count(p, ACTION_SET_NAPI_PIN) + count(p, ACTION_SET_NAPI_SCHED),
                  0);
        ASSERT_EQ(count(p, ACTION_SET_IRQ_AFFINITY), 3);

        /* off: threaded switched off; its threads go with it, nothing placed. */
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->napi_threads = TRISTATE_OFF;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_THREADED), 1);
        ASSERT_EQ(find(p, ACTION_SET_NAPI_THREADED)->after, 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PIN), 0);
}

TEST(channels_first_irqs_next_pass) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_ON, 1, NAPI_PARAMS_NONE);
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;
        char buf[64];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_CHANNELS), 1);
        a = find(p, ACTION_SET_CHANNELS);
        ASSERT(a);
        /* Before coalescing and everything else of the netdev. */
        ASSERT_EQ(index_of(p, a), 0);
        ASSERT_EQ(a->netdev_ifindex, 4);
        ASSERT_EQ(a->channels_after.combined, 1);
        ASSERT_EQ(a->channels_after.rx, -1);
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "combined 2");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "combined 1");
        /* The old IRQs are still planned: if the driver refuses the change they stay pinned (the
         * daemon drops them once a change went through: the driver requested new ones). */
        ASSERT_EQ(count(p, ACTION_SET_IRQ_AFFINITY), 3);
        ASSERT(index_of(p, find(p, ACTION_SET_IRQ_AFFINITY)) > index_of(p, a));

        /* Already so: nothing, and the IRQs are placed. */
        plan_free(TAKE_PTR(p));
        inv->pfs[0].tune.channels.combined = 1;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_CHANNELS), 0);
        ASSERT_EQ(count(p, ACTION_SET_IRQ_AFFINITY), 3);

        /* Beyond what the driver has: refused in the plan, the kernel is not asked. */
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->channels.combined = 8;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_CHANNELS), 0);
        ASSERT(note(p, NOTE_ERROR, "wants 8 combined channels; enp65s0 has at most 4"));
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->channels = (ChannelsChange) { .rx = 2, .tx = -1, .combined = -1 };
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT(note(p, NOTE_ERROR, "wants 2 rx channels; enp65s0 has none"));

        /* A driver that refused for good: not asked again. */
        plan_free(TAKE_PTR(p));
        ((TenantClass *) config_find_class(c, "rt"))->channels = (ChannelsChange) { .rx = -1, .tx = -1, .combined = 2 };
        inv->pfs[0].tune.channels.combined = 4;
        const char refused[][PCI_ADDR_MAX] = { "0000:41:00.0" };
        PlanContext ctx = { .channels_unsupported = refused, .n_channels_unsupported = 1 };
        ASSERT_EQ(plan_build(inv, c, &ctx, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_CHANNELS), 0);
        ASSERT(note(p, NOTE_WARNING, "refused channel changes"));

        /* Not read (a fixture root): nothing to compare with, nothing sent. */
        plan_free(TAKE_PTR(p));
        inv->pfs[0].tune.known = false;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_CHANNELS), 0);
        inv->pfs[0].tune.known = true;

        /* A driver without channel ops. */
        plan_free(TAKE_PTR(p));
        inv->pfs[0].tune.channels_error = -EOPNOTSUPP;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT(note(p, NOTE_INFO, "no channel counts"));
}

TEST(per_napi_settings_only_where_the_kernel_has_them) {
        _cleanup_(inventory_freep) Inventory *inv = host(1, true);
        _cleanup_(config_freep) Config *c = config(TRISTATE_LEAVE, -1, (NapiParams) { 2, 20000, -1 });
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;
        char buf[128];

        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PARAMS), 0);
        ASSERT(note(p, NOTE_INFO, "per-NAPI settings unavailable"));

        plan_free(TAKE_PTR(p));
        inv->pfs[0].tune.napi.have_napi_set = true;
        inv->pfs[0].tune.napi.napis[1].params.defer_hard_irqs = 2;
        ASSERT_EQ(plan_build(inv, c, NULL, &p), 0);
        ASSERT_EQ(count(p, ACTION_SET_NAPI_PARAMS), 2);
        a = find(p, ACTION_SET_NAPI_PARAMS);
        ASSERT_EQ(a->napi_id, 8193);
        ASSERT_STREQ(action_format_value(a, false, buf, sizeof(buf)), "defer-hard-irqs 0, gro-flush-timeout 0");
        ASSERT_STREQ(action_format_value(a, true, buf, sizeof(buf)), "defer-hard-irqs 2, gro-flush-timeout 20000");
        /* The second NAPI has its defer already: only what differs. */
        a++;
        ASSERT_EQ(a->kind, ACTION_SET_NAPI_PARAMS);
        ASSERT_EQ(a->napi_after.defer_hard_irqs, -1);
        ASSERT_EQ(a->napi_after.gro_flush_timeout, 20000);
}

int main(void) {
        ASSERT(mkdtemp(classes));
        write_class("rt", "irq_cpus = 2-3\nirq_thread_priority = 60\n");
        RUN(queue_index_from_handler_names);
        RUN(napis_paired_by_vector_order);
        RUN(threaded_switched_on_threads_placed_next_pass);
        RUN(threads_follow_their_irqs_at_the_class_priority);
        RUN(restored_once_the_class_lets_go);
        RUN(unpaired_threads_are_said_not_guessed);
        RUN(leave_touches_nothing);
        RUN(channels_first_irqs_next_pass);
        RUN(per_napi_settings_only_where_the_kernel_has_them);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", classes);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
