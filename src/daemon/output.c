/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.c — the inventory and the plan as readable tables or JSON */

#include <sched.h>
#include <string.h>

#include "sriovd/apply.h"
#include "sriovd/output.h"

/* "40-48" for a contiguous run, else "40,42,...". */
static const char *irq_list(const unsigned *irqs, size_t n, char *buf, size_t size) {
        CpuSet s = {};
        bool fits = true;

        for (size_t i = 0; i < n; i++) {
                if (irqs[i] >= CPUSET_MAX)
                        fits = false;
                cpuset_add(&s, irqs[i]);
        }
        if (n == 0)
                return strscpy(buf, size, "-");
        if (!fits) {
                snprintf(buf, size, "%u..%u", irqs[0], irqs[n - 1]);
                return buf;
        }
        return cpuset_format_list(&s, buf, size);
}

void output_inventory_text(FILE *f, const Inventory *inv) {
        const Topology *t = &inv->topo;
        const KernelCaps *c = &inv->caps;
        char a[CPUSET_LIST_MAX], b[CPUSET_LIST_MAX];
        size_t managed = 0, threaded = 0;

        fprintf(f, "Host: %u CPUs online (%s), %u NUMA node%s\n", cpuset_count(&t->online),
                cpuset_format_list(&t->online, a, sizeof(a)), t->n_nodes, t->n_nodes == 1 ? "" : "s");
        for (unsigned n = 0; n < t->n_nodes; n++)
                fprintf(f, "  node %u: CPUs %s\n", n, cpuset_format_list(&t->node_cpus[n], a, sizeof(a)));
        fprintf(f, "  isolated: %s   nohz_full: %s\n",
                cpuset_is_empty(&t->isolated) ? "none" : cpuset_format_list(&t->isolated, a, sizeof(a)),
                cpuset_is_empty(&t->nohz_full) ? "none" : cpuset_format_list(&t->nohz_full, b, sizeof(b)));
        fprintf(f, "Kernel: PREEMPT_RT %s, threaded IRQs %s, rtnet_prio ", c->preempt_rt ? "yes" : "no",
                c->threaded_irqs ? "yes" : "no");
        if (c->rtnet_prio_present)
                fprintf(f, "%ld", c->rtnet_prio);
        else
                fputs("unavailable", f);
        fprintf(f, ", IOMMU %s, irqbalance %s\n", c->iommu ? "on" : "off",
                c->irqbalance ? "running" : "not running");

        if (inv->n_pfs == 0)
                fputs("\nNo SR-IOV NIC in scope.\n", f);

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                fprintf(f, "\nPF %s  %s [%04x:%04x]\n", pf->addr, pf->name, pf->vendor, pf->device);
                fprintf(f, "  driver %s, NUMA node ", pf->driver[0] ? pf->driver : "(none)");
                if (pf->numa_node >= 0)
                        fprintf(f, "%d", pf->numa_node);
                else
                        fputs("unknown", f);
                fprintf(f, ", local CPUs %s, netdev", cpuset_format_list(&pf->local_cpus, a, sizeof(a)));
                if (pf->n_netdevs == 0)
                        fputs(" (none)", f);
                for (size_t j = 0; j < pf->n_netdevs; j++)
                        fprintf(f, " %s", pf->netdevs[j]);
                if (pf->iommu_group >= 0)
                        fprintf(f, ", IOMMU group %d", pf->iommu_group);
                fputc('\n', f);
                fprintf(f, "  SR-IOV: %u of %u VFs, drivers_autoprobe %s, IRQs %s\n", pf->num_vfs,
                        pf->total_vfs,
                        pf->drivers_autoprobe < 0 ? "n/a" : pf->drivers_autoprobe ? "on" : "off",
                        irq_list(pf->irqs, pf->n_irqs, a, sizeof(a)));
                if (pf->n_vfs == 0)
                        continue;
                fprintf(f, "  %-4s %-13s %-10s %-16s %-6s %s\n", "VF", "ADDRESS", "DRIVER", "NETDEV",
                        "IOMMU", "IRQS");
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const Vf *vf = &pf->vfs[j];
                        char g[16] = "-";
                        if (vf->iommu_group >= 0)
                                snprintf(g, sizeof(g), "%d", vf->iommu_group);
                        fprintf(f, "  %-4u %-13s %-10s %-16s %-6s %s\n", vf->index, vf->addr,
                                vf->driver[0] ? vf->driver : "-", vf->netdev[0] ? vf->netdev : "-", g,
                                irq_list(vf->irqs, vf->n_irqs, a, sizeof(a)));
                }
        }

        for (size_t i = 0; i < inv->n_irqs; i++) {
                managed += !inv->irqs[i].writable;
                threaded += inv->irqs[i].thread > 0;
        }
        fprintf(f, "\nIRQs: %zu (%zu kernel-managed, %zu with handler threads)\n", inv->n_irqs, managed,
                threaded);
        if (inv->n_irqs > 0)
                fprintf(f, "  %-6s %-16s %-10s %-9s %s\n", "IRQ", "AFFINITY", "EFFECTIVE", "MANAGED",
                        "THREAD");
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const Irq *q = &inv->irqs[i];
                char th[48] = "-";
                if (q->thread > 0)
                        snprintf(th, sizeof(th), "%d %s/%d", (int) q->thread,
                                 sched_policy_to_string(q->thread_policy), q->thread_priority);
                fprintf(f, "  %-6u %-16s %-10s %-9s %s\n", q->irq,
                        cpuset_format_list(&q->affinity, a, sizeof(a)),
                        q->has_effective ? cpuset_format_list(&q->effective, b, sizeof(b)) : "-",
                        q->writable ? "no" : "yes", th);
        }
}

static void action_result_text(const Action *a, char *buf, size_t size) {
        if (a->skipped)
                strscpy(buf, size, "skipped");
        else if (!a->applied)
                strscpy(buf, size, "planned");
        else if (a->result > 0)
                strscpy(buf, size, "done");
        else if (a->result == 0)
                strscpy(buf, size, "already so");
        else
                snprintf(buf, size, "FAILED: %s%s%s%s (%s)", strerror(-a->result),
                         a->kernel_message[0] ? " (kernel: " : "", a->kernel_message, a->kernel_message[0] ? ")" : "",
                         kernel_error_classify(a->kind, a->result).meaning);
}

static const char *action_target(const Action *a) {
        return a->target[0] ? a->target : "host";
}

static const char *action_what(const Action *a, char *buf, size_t size) {
        if (a->kind == ACTION_SET_IRQ_AFFINITY)
                snprintf(buf, size, "IRQ %u", a->irq);
        else if (a->kind == ACTION_SET_IRQ_THREAD)
                snprintf(buf, size, "IRQ %u pid %d", a->irq, (int) a->pid);
        else if (a->kind == ACTION_SET_VF_LINK || a->kind == ACTION_SET_VF_DRIVER)
                snprintf(buf, size, "VF %u", a->vf);
        else if (a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS)
                snprintf(buf, size, "ifindex %d", a->netdev_ifindex);
        else
                buf[0] = 0;
        return buf;
}

void output_plan_text(FILE *f, const Plan *plan) {
        fprintf(f, "\nPlan: %zu action%s\n", plan->n_actions, plan->n_actions == 1 ? "" : "s");
        if (plan->n_actions > 0)
                fprintf(f, "  %-13s %-13s %-16s %-20s %s\n", "ACTION", "TARGET", "WHAT", "CHANGE", "EFFECT / RESULT");
        for (size_t i = 0; i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                char res[256], what[48], before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], change[256];

                action_result_text(a, res, sizeof(res));
                snprintf(change, sizeof(change), "%s -> %s", action_format_value(a, false, before, sizeof(before)),
                         action_format_value(a, true, after, sizeof(after)));
                fprintf(f, "  %-13s %-13s %-16s %-20s %s%s%s%s\n", action_kind_to_string(a->kind), action_target(a),
                        action_what(a, what, sizeof(what)), change, a->restore ? "restore; " : "", a->effect,
                        a->effect[0] ? "; " : "", res);
        }
        if (plan->n_notes > 0)
                fputs("Notes:\n", f);
        for (size_t i = 0; i < plan->n_notes; i++) {
                const PlanNote *n = &plan->notes[i];
                fprintf(f, "  %-8s %s%s%s\n", note_level_to_string(n->level), n->target,
                        n->target[0] ? ": " : "", n->text);
        }
}

static void json_cpuset(JsonWriter *w, const char *key, const CpuSet *s) {
        char buf[CPUSET_LIST_MAX];
        json_string(w, key, cpuset_format_list(s, buf, sizeof(buf)));
}

static void json_irqs(JsonWriter *w, const unsigned *irqs, size_t n) {
        json_array_begin(w, "irqs");
        for (size_t i = 0; i < n; i++)
                json_int(w, NULL, irqs[i]);
        json_array_end(w);
}

void output_inventory_json(JsonWriter *w, const Inventory *inv) {
        json_object_begin(w, "inventory");

        json_object_begin(w, "host");
        json_cpuset(w, "online", &inv->topo.online);
        json_cpuset(w, "isolated", &inv->topo.isolated);
        json_cpuset(w, "nohz_full", &inv->topo.nohz_full);
        json_array_begin(w, "nodes");
        for (unsigned n = 0; n < inv->topo.n_nodes; n++) {
                json_object_begin(w, NULL);
                json_int(w, "node", n);
                json_cpuset(w, "cpus", &inv->topo.node_cpus[n]);
                json_object_end(w);
        }
        json_array_end(w);
        json_object_end(w);

        json_object_begin(w, "kernel");
        json_bool(w, "preempt_rt", inv->caps.preempt_rt);
        json_bool(w, "threaded_irqs", inv->caps.threaded_irqs);
        if (inv->caps.rtnet_prio_present)
                json_int(w, "rtnet_prio", inv->caps.rtnet_prio);
        else
                json_null(w, "rtnet_prio");
        json_bool(w, "iommu", inv->caps.iommu);
        json_bool(w, "irqbalance", inv->caps.irqbalance);
        json_object_end(w);

        json_array_begin(w, "pfs");
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                char id[16];

                json_object_begin(w, NULL);
                json_string(w, "address", pf->addr);
                snprintf(id, sizeof(id), "%04x:%04x", pf->vendor, pf->device);
                json_string(w, "id", id);
                json_string(w, "name", pf->name);
                json_string(w, "driver", pf->driver[0] ? pf->driver : NULL);
                if (pf->numa_node >= 0)
                        json_int(w, "numa_node", pf->numa_node);
                else
                        json_null(w, "numa_node");
                json_cpuset(w, "local_cpus", &pf->local_cpus);
                json_array_begin(w, "netdevs");
                for (size_t j = 0; j < pf->n_netdevs; j++)
                        json_string(w, NULL, pf->netdevs[j]);
                json_array_end(w);
                json_int(w, "total_vfs", pf->total_vfs);
                json_int(w, "num_vfs", pf->num_vfs);
                if (pf->drivers_autoprobe >= 0)
                        json_bool(w, "drivers_autoprobe", pf->drivers_autoprobe);
                else
                        json_null(w, "drivers_autoprobe");
                if (pf->iommu_group >= 0)
                        json_int(w, "iommu_group", pf->iommu_group);
                else
                        json_null(w, "iommu_group");
                json_irqs(w, pf->irqs, pf->n_irqs);
                json_array_begin(w, "vfs");
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const Vf *vf = &pf->vfs[j];
                        json_object_begin(w, NULL);
                        json_int(w, "index", vf->index);
                        json_string(w, "address", vf->addr);
                        json_string(w, "driver", vf->driver[0] ? vf->driver : NULL);
                        json_string(w, "netdev", vf->netdev[0] ? vf->netdev : NULL);
                        if (vf->iommu_group >= 0)
                                json_int(w, "iommu_group", vf->iommu_group);
                        else
                                json_null(w, "iommu_group");
                        json_irqs(w, vf->irqs, vf->n_irqs);
                        json_object_end(w);
                }
                json_array_end(w);
                json_object_end(w);
        }
        json_array_end(w);

        json_array_begin(w, "irqs");
        for (size_t i = 0; i < inv->n_irqs; i++) {
                const Irq *q = &inv->irqs[i];
                json_object_begin(w, NULL);
                json_int(w, "irq", q->irq);
                json_cpuset(w, "affinity", &q->affinity);
                if (q->has_effective)
                        json_cpuset(w, "effective", &q->effective);
                else
                        json_null(w, "effective");
                json_bool(w, "managed", !q->writable);
                if (q->thread > 0) {
                        json_object_begin(w, "thread");
                        json_int(w, "pid", q->thread);
                        json_string(w, "policy", sched_policy_to_string(q->thread_policy));
                        json_int(w, "priority", q->thread_priority);
                        json_object_end(w);
                } else
                        json_null(w, "thread");
                json_object_end(w);
        }
        json_array_end(w);

        json_object_end(w);
}

void output_plan_json(JsonWriter *w, const Plan *plan) {
        json_object_begin(w, "plan");
        json_array_begin(w, "actions");
        for (size_t i = 0; i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                json_object_begin(w, NULL);
                json_string(w, "action", action_kind_to_string(a->kind));
                json_string(w, "target", action_target(a));
                if (a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD)
                        json_int(w, "irq", a->irq);
                if (a->kind == ACTION_SET_IRQ_THREAD) {
                        json_int(w, "pid", a->pid);
                        json_bool(w, "restore", a->restore);
                }
                if (a->kind == ACTION_SET_VF_LINK || a->kind == ACTION_SET_VF_DRIVER)
                        json_int(w, "vf", a->vf);
                if (a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS)
                        json_int(w, "ifindex", a->netdev_ifindex);
                if (a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD ||
                    a->kind == ACTION_SET_IRQ_DEFAULT || a->kind == ACTION_SET_VF_LINK ||
                    a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS || a->kind == ACTION_SET_VF_DRIVER) {
                        char buf[CPUSET_LIST_MAX];
                        json_string(w, "before", action_format_value(a, false, buf, sizeof(buf)));
                        json_string(w, "after", action_format_value(a, true, buf, sizeof(buf)));
                } else {
                        json_int(w, "before", a->before);
                        json_int(w, "after", a->after);
                }
                json_string(w, "effect", a->effect[0] ? a->effect : NULL);
                if (a->kernel_message[0])
                        json_string(w, "kernel_message", a->kernel_message);
                if (a->skipped)
                        json_string(w, "result", "skipped");
                else if (!a->applied)
                        json_string(w, "result", "planned");
                else if (a->result >= 0)
                        json_string(w, "result", a->result > 0 ? "done" : "already so");
                else {
                        ErrorInfo e = kernel_error_classify(a->kind, a->result);
                        json_string(w, "result", "failed");
                        json_string(w, "error", strerror(-a->result));
                        json_int(w, "errno", -a->result);
                        json_string(w, "error_class", error_class_to_string(e.class));
                        json_string(w, "meaning", e.meaning);
                }
                json_object_end(w);
        }
        json_array_end(w);
        json_array_begin(w, "notes");
        for (size_t i = 0; i < plan->n_notes; i++) {
                json_object_begin(w, NULL);
                json_string(w, "level", note_level_to_string(plan->notes[i].level));
                json_string(w, "target", plan->notes[i].target[0] ? plan->notes[i].target : NULL);
                json_string(w, "text", plan->notes[i].text);
                json_object_end(w);
        }
        json_array_end(w);
        json_object_end(w);
}
