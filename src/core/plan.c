/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan.c — the pure planner: what must change so that the host matches the policy */

#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan-internal.h"

static void plan_pf_autoprobe(PlanBuilder *b, const Pf *pf, const PfPolicy *pol) {
        if (!pol || pol->drivers_autoprobe < 0 || pf->drivers_autoprobe < 0)
                return;
        if (pol->drivers_autoprobe != pf->drivers_autoprobe)
                plan_add_action(b, ACTION_SET_AUTOPROBE, pf->addr, pf->drivers_autoprobe,
                                pol->drivers_autoprobe);
}

/* Whether a tenant holds one of pf's VFs. */
static bool pf_has_tenants(const PlanBuilder *b, const Pf *pf) {
        for (size_t i = 0; i < b->ctx->n_allocations; i++)
                if (pf_owns(pf, b->ctx->allocations[i].vf))
                        return true;
        return false;
}

/*
 * With auto, the PF's link is up while the PF has VFs to hand out, not only once a tenant holds
 * one. The allocation's attach goes to libvirt at once, before the next cycle could bring the
 * link up, and libvirt refuses a VF of a PF that is not online.
 */
static void plan_pf_link(PlanBuilder *b, const Pf *pf, const PfPolicy *pol) {
        PfLinkPolicy want = pol ? pol->pf_link : PF_LINK_AUTO;
        Action *a;

        if (want == PF_LINK_LEAVE || !pf->admin_down || pf->ifindex <= 0)
                return;
        if (want == PF_LINK_AUTO && pf->n_vfs == 0 && !pf_has_tenants(b, pf))
                return;
        a = plan_add_action(b, ACTION_SET_PF_LINK, pf->addr, 0, 1);
        if (a)
                a->ifindex = pf->ifindex;
}

static void plan_host(PlanBuilder *b, const Inventory *inv, const Config *cfg) {
        if (cfg->rtnet_prio >= 0) {
                if (!inv->caps.rtnet_prio_present)
                        plan_add_note(b, NOTE_INFO, "",
                                      "RT softirq partition unavailable on this kernel "
                                      "(no net.core.rtnet_prio); rtnet_prio = %d not applied",
                                      cfg->rtnet_prio);
                else if (inv->caps.rtnet_prio != cfg->rtnet_prio)
                        plan_add_action(b, ACTION_SET_RTNET_PRIO, "", inv->caps.rtnet_prio,
                                        cfg->rtnet_prio);
        }

        if (inv->caps.irqbalance)
                plan_add_note(b, NOTE_WARNING, "",
                              "irqbalance is running and will move the NIC IRQs sriovd pins; make "
                              "sriovd-irqbalance-policy its --policyscript (see sriovd(8))");
        if (inv->n_pfs > 0 && !inv->caps.iommu)
                plan_add_note(b, NOTE_WARNING, "",
                              "IOMMU is off (no /sys/kernel/iommu_groups): VFs cannot be passed "
                              "through; enable VT-d and boot with intel_iommu=on");
        if (inv->n_pfs == 0)
                plan_add_note(b, NOTE_INFO, "", "no SR-IOV NIC in scope on this host");

        /* Report what the tree got wrong in every cycle while it lasts, but never act on it. */
        for (size_t i = 0; i < inv->problems.n; i++)
                plan_add_note(b, NOTE_WARNING, inv->problems.items[i].target, "%s", inv->problems.items[i].text);
        if (inv->problems.n_dropped > 0)
                plan_add_note(b, NOTE_WARNING, "", "%zu more problems in the host's sysfs/procfs not shown",
                              inv->problems.n_dropped);
}

void host_cpus(const Inventory *inv, const Config *cfg, HostCpus *ret) {
        const CpuSet *online = &inv->topo.online;

        /* Offline CPUs can take no IRQ, so every set is cut to the online CPUs. */
        cpuset_and(&ret->rt, cfg->have_rt_cpus ? &cfg->rt_cpus : &inv->topo.isolated, online);
        if (cfg->have_housekeeping_cpus)
                cpuset_and(&ret->housekeeping, &cfg->housekeeping_cpus, online);
        else
                cpuset_andnot(&ret->housekeeping, online, &ret->rt);
}

/* Return the plan that was built, or the first error that its parts ran into, keeping nothing of the plan. */
static int plan_finish(PlanBuilder *b, Plan **ret) {
        if (b->error < 0) {
                plan_free(b->plan);
                return b->error;
        }
        *ret = b->plan;
        return 0;
}

/* Start a builder for inv under cfg, with its host CPUs worked out. Returns -ENOMEM on failure. */
static int plan_start(const Inventory *inv, const Config *cfg, const PlanContext *ctx, PlanBuilder *ret) {
        static const PlanContext empty = {};

        *ret = (PlanBuilder) { .inv = inv, .cfg = cfg, .ctx = ctx ?: &empty };
        ret->plan = calloc(1, sizeof(Plan));
        if (!ret->plan)
                return -ENOMEM;
        host_cpus(inv, cfg, &ret->cpus);
        return 0;
}

int plan_build(const Inventory *inv, const Config *cfg, const PlanContext *ctx, Plan **ret) {
        PlanBuilder b;

        if (plan_start(inv, cfg, ctx, &b) < 0)
                return -ENOMEM;

        plan_host(&b, inv, cfg);

        /* One pass per kind keeps the actions ordered by kind, and then by PF address. */
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                plan_pf_autoprobe(&b, pf, config_pf_policy(cfg, pf->addr, pf->vendor, pf->device));
        }
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                plan_pf_num_vfs(&b, pf, config_pf_policy(cfg, pf->addr, pf->vendor, pf->device));
        }
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                plan_pf_link(&b, pf, config_pf_policy(cfg, pf->addr, pf->vendor, pf->device));
        }
        /* Tenants' VFs get their MAC and VLAN whether or not the PF has a policy of its own. */
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                const PfPolicy *pol = config_pf_policy(cfg, pf->addr, pf->vendor, pf->device);
                plan_pf_vf_links(&b, pf, pol ?: &pf_policy_default);
        }
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                const PfPolicy *pol = config_pf_policy(cfg, pf->addr, pf->vendor, pf->device);
                if (pol)
                        plan_pf_vf_drivers(&b, pf, pol);
        }

        plan_tune(&b);
        plan_napi(&b);
        plan_irq_default(&b);
        plan_irqs(&b);
        plan_napi_threads(&b);
        plan_other_irqs(&b);
        plan_kthreads(&b);
        plan_cpu_power(&b);

        /* A [pf ADDR] that the operator named but the host does not show is worth a note. */
        for (size_t i = 0; i < cfg->n_pfs; i++)
                if (cfg->pfs[i].by_addr && !inventory_find_pf(inv, cfg->pfs[i].addr))
                        plan_add_note(&b, NOTE_WARNING, cfg->pfs[i].addr,
                                      "configured PF (config line %u) is not on this host or is "
                                      "not SR-IOV capable",
                                      cfg->pfs[i].line);

        return plan_finish(&b, ret);
}

int plan_build_vf_link(const Pf *pf, const Config *cfg, const PlanContext *ctx, unsigned vf, Plan **ret) {
        static const PlanContext empty = {};
        PlanBuilder b = { .cfg = cfg, .ctx = ctx ?: &empty };
        const PfPolicy *pol = config_pf_policy(cfg, pf->addr, pf->vendor, pf->device);

        b.plan = calloc(1, sizeof(Plan));
        if (!b.plan)
                return -ENOMEM;
        plan_vf_link_one(&b, pf, pol ?: &pf_policy_default, vf);
        return plan_finish(&b, ret);
}

int plan_build_vf_irqs(const Inventory *inv, const Config *cfg, const PlanContext *ctx, const Pf *pf, const Vf *vf,
                       Plan **ret) {
        PlanBuilder b;

        if (plan_start(inv, cfg, ctx, &b) < 0)
                return -ENOMEM;
        /* As in plan_build(), a PF whose VFs are about to be replaced has none worth pinning. */
        plan_pf_num_vfs(&b, pf, config_pf_policy(cfg, pf->addr, pf->vendor, pf->device));
        plan_vf_irqs(&b, pf, vf);
        return plan_finish(&b, ret);
}

int plan_build_pf_irqs(const Inventory *inv, const Config *cfg, const PlanContext *ctx, const Pf *pf, Plan **ret) {
        PlanBuilder b;

        if (plan_start(inv, cfg, ctx, &b) < 0)
                return -ENOMEM;
        plan_pf_irqs(&b, pf);
        return plan_finish(&b, ret);
}

int plan_merge(Plan *into, const Plan *from) {
        Action *actions;
        PlanNote *notes = NULL;

        actions = reallocarray(into->actions, into->n_actions + from->n_actions, sizeof(Action));
        if (!actions && into->n_actions + from->n_actions > 0)
                return -ENOMEM;
        into->actions = actions;
        if (from->n_notes > 0) {
                notes = malloc(from->n_notes * sizeof(PlanNote));
                if (!notes)
                        return -ENOMEM;
                memcpy(notes, from->notes, from->n_notes * sizeof(PlanNote));
        }
        memcpy_safe(into->actions + into->n_actions, from->actions, from->n_actions * sizeof(Action));
        into->n_actions += from->n_actions;
        free(into->notes);
        into->notes = notes;
        into->n_notes = from->n_notes;
        return 0;
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        free(p->actions);
        free(p->notes);
        free(p);
        return NULL;
}

const char *action_kind_to_string(ActionKind k) {
        static const char *const table[_ACTION_KIND_MAX] = {
                [ACTION_SET_AUTOPROBE] = "sriov-autoprobe",
                [ACTION_SET_NUM_VFS] = "sriov-numvfs",
                [ACTION_SET_VF_LINK] = "vf-link",
                [ACTION_SET_VF_DRIVER] = "vf-driver",
                [ACTION_SET_COALESCE] = "coalesce",
                [ACTION_SET_OFFLOADS] = "offloads",
                [ACTION_SET_CHANNELS] = "channels",
                [ACTION_SET_NAPI_THREADED] = "napi-threaded",
                [ACTION_SET_NAPI_PARAMS] = "napi-params",
                [ACTION_SET_NAPI_PIN] = "napi-pin",
                [ACTION_SET_NAPI_SCHED] = "napi-sched",
                [ACTION_SET_KTHREAD_SCHED] = "kthread-sched",
                [ACTION_SET_CPU_IDLE] = "cpu-idle",
                [ACTION_SET_CPU_GOVERNOR] = "cpu-governor",
                [ACTION_SET_RTNET_PRIO] = "rtnet-prio",
                [ACTION_SET_IRQ_DEFAULT] = "irq-default",
                [ACTION_SET_IRQ_AFFINITY] = "irq-affinity",
                [ACTION_SET_IRQ_THREAD] = "irq-thread",
                [ACTION_SET_PF_LINK] = "pf-link",
                [ACTION_SET_VCPU_PIN] = "vcpu-pin",
                [ACTION_SET_EMULATOR_PIN] = "emulator-pin",
                [ACTION_SET_IOTHREAD_PIN] = "iothread-pin",
                [ACTION_SET_VCPU_SCHED] = "vcpu-sched",
                [ACTION_SET_NUMATUNE] = "numatune",
                [ACTION_SET_VCPU_THREAD] = "vcpu-thread",
                [ACTION_SET_VHOST_PIN] = "vhost-pin",
                [ACTION_SET_VHOST_SCHED] = "vhost-sched",
        };
        return (unsigned) k < _ACTION_KIND_MAX ? table[k] : "unknown";
}

const char *note_level_to_string(NoteLevel l) {
        switch (l) {
        case NOTE_INFO:
                return "info";
        case NOTE_WARNING:
                return "warning";
        case NOTE_ERROR:
                return "error";
        }
        return "unknown";
}

const char *sched_policy_to_string(int policy) {
        switch (policy) {
        case SCHED_OTHER:
                return "other";
        case SCHED_FIFO:
                return "fifo";
        case SCHED_RR:
                return "rr";
        case SCHED_BATCH:
                return "batch";
        case SCHED_IDLE:
                return "idle";
        }
        return "unknown";
}

/* Format only the fields that the action changes, such as "mac 02:..., vlan 100/0, spoofchk on". */

static char *vf_link_format(const Action *a, bool after, char *buf, size_t size) {
        const VfLinkChange *c = &a->link_after;
        const VfLink *l = &a->link_before;
        static const char *const states[] = { "auto", "enable", "disable" };
        char mac[MAC_STR_MAX];
        size_t k = 0;

#define APPEND(...) strjoin_appendf(buf, size, &k, __VA_ARGS__)

        buf[0] = 0;
        if (!after && !a->link_before_known) {
                snprintf(buf, size, "?");
                return buf;
        }
        if (c->set_mac)
                APPEND("mac %s", mac_format(after ? c->mac : l->mac, mac));
        if (c->set_vlan)
                APPEND("vlan %u/%u", after ? c->vlan : l->vlan, after ? c->qos : l->qos);
        if (c->spoofchk >= 0)
                APPEND("spoofchk %s", (after ? c->spoofchk : l->spoofchk) > 0 ? "on" : "off");
        if (c->trust >= 0)
                APPEND("trust %s", (after ? c->trust : l->trust) > 0 ? "on" : "off");
        if (c->link_state >= 0) {
                int s = after ? c->link_state : l->link_state;
                APPEND("link %s", s >= 0 && s < 3 ? states[s] : "?");
        }
        if (c->set_rate)
                APPEND("rate %u-%u", after ? c->min_tx_rate : l->min_tx_rate, after ? c->max_tx_rate : l->max_tx_rate);
#undef APPEND
        return buf;
}

char *action_format_value(const Action *a, bool after, char *buf, size_t size) {
        switch (a->kind) {
        case ACTION_SET_VF_LINK:
                return vf_link_format(a, after, buf, size);
        case ACTION_SET_COALESCE:
        case ACTION_SET_OFFLOADS:
        case ACTION_SET_CHANNELS:
        case ACTION_SET_NAPI_PARAMS:
                return tune_format(a, after, buf, size);
        case ACTION_SET_NAPI_THREADED:
                snprintf(buf, size, "%s", (after ? a->after : a->before) ? "on" : "off");
                return buf;
        case ACTION_SET_VF_DRIVER: {
                const char *d = after ? a->driver_after : a->driver_before;
                snprintf(buf, size, "%s", d[0] ? d : after ? "(native)" : "(none)");
                return buf;
        }
        case ACTION_SET_IRQ_DEFAULT:
        case ACTION_SET_IRQ_AFFINITY:
        case ACTION_SET_VCPU_PIN:
        case ACTION_SET_EMULATOR_PIN:
        case ACTION_SET_IOTHREAD_PIN:
        case ACTION_SET_VHOST_PIN:
        case ACTION_SET_NAPI_PIN:
                return cpuset_format_list(after ? &a->cpus_after : &a->cpus_before, buf, size);
        case ACTION_SET_VCPU_SCHED:
                if (!after && a->before < -1)
                        snprintf(buf, size, "?");
                else if ((after ? a->after : a->before) <= 0)
                        snprintf(buf, size, "none");
                else if (a->vcpu <= 1)
                        snprintf(buf, size, "fifo/%ld on vCPU 0", after ? a->after : a->before);
                else
                        snprintf(buf, size, "fifo/%ld on vCPUs 0-%u", after ? a->after : a->before, a->vcpu - 1);
                return buf;
        case ACTION_SET_NUMATUNE:
                if ((after ? a->after : a->before) < 0)
                        snprintf(buf, size, "none");
                else
                        snprintf(buf, size, "strict node %ld", after ? a->after : a->before);
                return buf;
        case ACTION_SET_PF_LINK:
                snprintf(buf, size, "%s", (after ? a->after : a->before) ? "up" : "down");
                return buf;
        case ACTION_SET_CPU_IDLE:
                snprintf(buf, size, "%s", (after ? a->after : a->before) ? "disabled" : "enabled");
                return buf;
        case ACTION_SET_CPU_GOVERNOR:
                snprintf(buf, size, "%s", after ? a->governor_after : a->governor_before);
                return buf;
        case ACTION_SET_IRQ_THREAD:
        case ACTION_SET_VHOST_SCHED:
        case ACTION_SET_VCPU_THREAD:
        case ACTION_SET_NAPI_SCHED:
        case ACTION_SET_KTHREAD_SCHED:
                snprintf(buf, size, "%s/%ld", sched_policy_to_string(after ? a->policy_after : a->policy_before),
                         after ? a->after : a->before);
                return buf;
        default:
                snprintf(buf, size, "%ld", after ? a->after : a->before);
                return buf;
        }
}
