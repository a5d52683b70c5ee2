/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.c — the inventory and the plan as readable tables or JSON */

#include <sched.h>
#include <string.h>

#include "apply/apply.h"
#include "output.h"

/* Format the IRQs as "40-48" for a contiguous run, else as "40,42,...". */
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
                         a->error.meaning);
}

static const char *action_target(const Action *a) {
        return a->target[0] ? a->target : "host";
}

static const char *action_what(const Action *a, char *buf, size_t size) {
        if (a->kind == ACTION_SET_IRQ_AFFINITY)
                snprintf(buf, size, "IRQ %u", a->irq);
        else if (a->kind == ACTION_SET_IRQ_THREAD)
                snprintf(buf, size, "IRQ %u pid %d", a->irq, (int) a->pid);
        else if (a->kind == ACTION_SET_VHOST_PIN || a->kind == ACTION_SET_VHOST_SCHED ||
                 a->kind == ACTION_SET_VCPU_THREAD || a->kind == ACTION_SET_KTHREAD_SCHED)
                snprintf(buf, size, "pid %d", (int) a->pid);
        else if (a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED)
                snprintf(buf, size, "%s", a->thread_name);
        else if (a->kind == ACTION_SET_NAPI_PARAMS)
                snprintf(buf, size, "%s NAPI %u", a->netdev, a->napi_id);
        else if (a->kind == ACTION_SET_CPU_IDLE)
                snprintf(buf, size, "CPU %u state %u", a->cpu, a->idle_state);
        else if (a->kind == ACTION_SET_CPU_GOVERNOR)
                snprintf(buf, size, "CPU %u", a->cpu);
        else if (a->kind == ACTION_SET_CHANNELS || a->kind == ACTION_SET_NAPI_THREADED)
                snprintf(buf, size, "%s", a->netdev);
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
                char res[256], what[80], before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], change[256];

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

static int add_cpuset(json_object *o, const char *key, const CpuSet *s) {
        char buf[CPUSET_LIST_MAX];
        return jsonc_add_string(o, key, cpuset_format_list(s, buf, sizeof(buf)));
}

static int add_int_or_null(json_object *o, const char *key, bool have, int64_t v) {
        return have ? jsonc_add_int(o, key, v) : jsonc_add_null(o, key);
}

static int add_irqs(json_object *o, const unsigned *irqs, size_t n) {
        json_object *a = json_object_new_array_ext((int) n);
        int r;

        r = jsonc_add(o, "irqs", a);   /* o owns a now. */
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = jsonc_append(a, json_object_new_int64(irqs[i]));
        return r;
}

/* Add an empty array to o under key, for the caller to fill. o owns it. Returns NULL when out of memory. */
static json_object *add_array(json_object *o, const char *key) {
        json_object *a = json_object_new_array();
        return jsonc_add(o, key, a) < 0 ? NULL : a;
}

static json_object *host_json(const Inventory *inv) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *nodes;

        if (!o || add_cpuset(o, "online", &inv->topo.online) < 0 ||
            add_cpuset(o, "isolated", &inv->topo.isolated) < 0 ||
            add_cpuset(o, "nohz_full", &inv->topo.nohz_full) < 0 ||
            !(nodes = add_array(o, "nodes")))
                return NULL;
        for (unsigned n = 0; n < inv->topo.n_nodes; n++) {
                json_object *node = json_object_new_object();
                if (jsonc_append(nodes, node) < 0 || jsonc_add_int(node, "node", n) < 0 ||
                    add_cpuset(node, "cpus", &inv->topo.node_cpus[n]) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

static json_object *kernel_json(const Inventory *inv) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add_bool(o, "preempt_rt", inv->caps.preempt_rt) < 0 ||
            jsonc_add_bool(o, "threaded_irqs", inv->caps.threaded_irqs) < 0 ||
            add_int_or_null(o, "rtnet_prio", inv->caps.rtnet_prio_present, inv->caps.rtnet_prio) < 0 ||
            jsonc_add_bool(o, "iommu", inv->caps.iommu) < 0 ||
            jsonc_add_bool(o, "irqbalance", inv->caps.irqbalance) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *vf_json(const Vf *vf) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add_int(o, "index", vf->index) < 0 ||
            jsonc_add_string(o, "address", vf->addr) < 0 ||
            jsonc_add_string(o, "driver", vf->driver[0] ? vf->driver : NULL) < 0 ||
            jsonc_add_string(o, "netdev", vf->netdev[0] ? vf->netdev : NULL) < 0 ||
            add_int_or_null(o, "iommu_group", vf->iommu_group >= 0, vf->iommu_group) < 0 ||
            add_irqs(o, vf->irqs, vf->n_irqs) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *pf_json(const Pf *pf) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *netdevs, *vfs;
        char id[16];

        snprintf(id, sizeof(id), "%04x:%04x", pf->vendor, pf->device);
        if (!o || jsonc_add_string(o, "address", pf->addr) < 0 ||
            jsonc_add_string(o, "id", id) < 0 ||
            jsonc_add_string(o, "name", pf->name) < 0 ||
            jsonc_add_string(o, "driver", pf->driver[0] ? pf->driver : NULL) < 0 ||
            add_int_or_null(o, "numa_node", pf->numa_node >= 0, pf->numa_node) < 0 ||
            add_cpuset(o, "local_cpus", &pf->local_cpus) < 0 ||
            !(netdevs = add_array(o, "netdevs")))
                return NULL;
        for (size_t j = 0; j < pf->n_netdevs; j++)
                if (jsonc_append_string(netdevs, pf->netdevs[j]) < 0)
                        return NULL;
        if (jsonc_add_int(o, "total_vfs", pf->total_vfs) < 0 ||
            jsonc_add_int(o, "num_vfs", pf->num_vfs) < 0 ||
            (pf->drivers_autoprobe >= 0 ? jsonc_add_bool(o, "drivers_autoprobe", pf->drivers_autoprobe)
                                        : jsonc_add_null(o, "drivers_autoprobe")) < 0 ||
            add_int_or_null(o, "iommu_group", pf->iommu_group >= 0, pf->iommu_group) < 0 ||
            add_irqs(o, pf->irqs, pf->n_irqs) < 0 ||
            !(vfs = add_array(o, "vfs")))
                return NULL;
        for (size_t j = 0; j < pf->n_vfs; j++)
                if (jsonc_append(vfs, vf_json(&pf->vfs[j])) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

static json_object *irq_json(const Irq *q) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add_int(o, "irq", q->irq) < 0 ||
            add_cpuset(o, "affinity", &q->affinity) < 0 ||
            (q->has_effective ? add_cpuset(o, "effective", &q->effective) : jsonc_add_null(o, "effective")) < 0 ||
            jsonc_add_bool(o, "managed", !q->writable) < 0)
                return NULL;
        if (q->thread > 0) {
                json_object *t = json_object_new_object();
                if (jsonc_add(o, "thread", t) < 0 || jsonc_add_int(t, "pid", q->thread) < 0 ||
                    jsonc_add_string(t, "policy", sched_policy_to_string(q->thread_policy)) < 0 ||
                    jsonc_add_int(t, "priority", q->thread_priority) < 0)
                        return NULL;
        } else if (jsonc_add_null(o, "thread") < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *output_inventory_json(const Inventory *inv) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *pfs, *irqs;

        if (!o || jsonc_add(o, "host", host_json(inv)) < 0 || jsonc_add(o, "kernel", kernel_json(inv)) < 0 ||
            !(pfs = add_array(o, "pfs")))
                return NULL;
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (jsonc_append(pfs, pf_json(&inv->pfs[i])) < 0)
                        return NULL;
        if (!(irqs = add_array(o, "irqs")))
                return NULL;
        for (size_t i = 0; i < inv->n_irqs; i++)
                if (jsonc_append(irqs, irq_json(&inv->irqs[i])) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

static json_object *action_json(const Action *a) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        int r;

        if (!o || jsonc_add_string(o, "action", action_kind_to_string(a->kind)) < 0 ||
            jsonc_add_string(o, "target", action_target(a)) < 0)
                return NULL;
        r = 0;
        if (a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD)
                r = jsonc_add_int(o, "irq", a->irq);
        if (r >= 0 && a->kind == ACTION_SET_IRQ_THREAD) {
                r = jsonc_add_int(o, "pid", a->pid);
                if (r >= 0)
                        r = jsonc_add_bool(o, "restore", a->restore);
        }
        if (r >= 0 && (a->kind == ACTION_SET_VHOST_PIN || a->kind == ACTION_SET_VHOST_SCHED ||
                       a->kind == ACTION_SET_VCPU_THREAD))
                r = jsonc_add_int(o, "pid", a->pid);
        if (r >= 0 && (a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED ||
                       a->kind == ACTION_SET_KTHREAD_SCHED)) {
                r = jsonc_add_int(o, "pid", a->pid);
                if (r >= 0)
                        r = jsonc_add_string(o, "thread", a->thread_name);
                if (r >= 0 && a->kind != ACTION_SET_KTHREAD_SCHED)
                        r = jsonc_add_int(o, "irq", a->irq);
                if (r >= 0 && a->kind != ACTION_SET_NAPI_PIN)
                        r = jsonc_add_bool(o, "restore", a->restore);
        }
        if (r >= 0 && (a->kind == ACTION_SET_CHANNELS || a->kind == ACTION_SET_NAPI_THREADED ||
                       a->kind == ACTION_SET_NAPI_PARAMS)) {
                r = jsonc_add_int(o, "ifindex", a->netdev_ifindex);
                if (r >= 0)
                        r = jsonc_add_string(o, "netdev", a->netdev);
                if (r >= 0 && a->kind == ACTION_SET_NAPI_PARAMS)
                        r = jsonc_add_int(o, "napi", a->napi_id);
        }
        if (r >= 0 && (a->kind == ACTION_SET_VF_LINK || a->kind == ACTION_SET_VF_DRIVER))
                r = jsonc_add_int(o, "vf", a->vf);
        if (r >= 0 && (a->kind == ACTION_SET_CPU_IDLE || a->kind == ACTION_SET_CPU_GOVERNOR)) {
                r = jsonc_add_int(o, "cpu", a->cpu);
                if (r >= 0 && a->kind == ACTION_SET_CPU_IDLE)
                        r = jsonc_add_int(o, "idle_state", a->idle_state);
                if (r >= 0)
                        r = jsonc_add_bool(o, "restore", a->restore);
        }
        if (r >= 0 && (a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS))
                r = jsonc_add_int(o, "ifindex", a->netdev_ifindex);
        if (r < 0)
                return NULL;
        /*
         * These kinds show their values as text. The guest's kinds come last in plan.h, from
         * ACTION_SET_VCPU_PIN on, and show CPU lists, FIFO priorities or nodes.
         */
        if (a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD ||
            a->kind == ACTION_SET_IRQ_DEFAULT || a->kind == ACTION_SET_VF_LINK ||
            a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS || a->kind == ACTION_SET_VF_DRIVER ||
            a->kind == ACTION_SET_CHANNELS || a->kind == ACTION_SET_NAPI_THREADED ||
            a->kind == ACTION_SET_NAPI_PARAMS || a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED ||
            a->kind == ACTION_SET_KTHREAD_SCHED || a->kind == ACTION_SET_CPU_IDLE ||
            a->kind == ACTION_SET_CPU_GOVERNOR || a->kind >= ACTION_SET_VCPU_PIN) {

                char buf[CPUSET_LIST_MAX];
                if (jsonc_add_string(o, "before", action_format_value(a, false, buf, sizeof(buf))) < 0 ||
                    jsonc_add_string(o, "after", action_format_value(a, true, buf, sizeof(buf))) < 0)
                        return NULL;
        } else if (jsonc_add_int(o, "before", a->before) < 0 || jsonc_add_int(o, "after", a->after) < 0)
                return NULL;
        if (jsonc_add_string(o, "effect", a->effect[0] ? a->effect : NULL) < 0 ||
            (a->kernel_message[0] && jsonc_add_string(o, "kernel_message", a->kernel_message) < 0))
                return NULL;
        if (a->skipped)
                r = jsonc_add_string(o, "result", "skipped");
        else if (!a->applied)
                r = jsonc_add_string(o, "result", "planned");
        else if (a->result >= 0)
                r = jsonc_add_string(o, "result", a->result > 0 ? "done" : "already so");
        else {
                ErrorInfo e = a->error;
                if (jsonc_add_string(o, "result", "failed") < 0 ||
                    jsonc_add_string(o, "error", strerror(-a->result)) < 0 ||
                    jsonc_add_int(o, "errno", -a->result) < 0 ||
                    jsonc_add_string(o, "error_class", error_class_to_string(e.class)) < 0)
                        return NULL;
                r = jsonc_add_string(o, "meaning", e.meaning);
        }
        return r < 0 ? NULL : TAKE_PTR(o);
}

static json_object *note_json(const PlanNote *n) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add_string(o, "level", note_level_to_string(n->level)) < 0 ||
            jsonc_add_string(o, "target", n->target[0] ? n->target : NULL) < 0 ||
            jsonc_add_string(o, "text", n->text) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *output_plan_json(const Plan *plan) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *actions, *notes;

        if (!o || !(actions = add_array(o, "actions")))
                return NULL;
        for (size_t i = 0; i < plan->n_actions; i++)
                if (jsonc_append(actions, action_json(&plan->actions[i])) < 0)
                        return NULL;
        if (!(notes = add_array(o, "notes")))
                return NULL;
        for (size_t i = 0; i < plan->n_notes; i++)
                if (jsonc_append(notes, note_json(&plan->notes[i])) < 0)
                        return NULL;
        return TAKE_PTR(o);
}
