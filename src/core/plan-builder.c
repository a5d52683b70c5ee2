/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-builder.c — the plan under construction: adding actions and notes, and answering the parts' questions */

/*
 * plan-irq.c, plan-vf.c and plan-tune.c build on this file only. plan.c runs them in order and
 * sits above all of them.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan-internal.h"

Action *plan_add_action(PlanBuilder *b, ActionKind kind, const char *target, long before,
                               long after) {
        Action *a;

        if (b->error < 0)
                return NULL;
        if (GREEDY_REALLOC(b->plan->actions, b->allocated_actions, b->plan->n_actions + 1) < 0) {
                b->error = -ENOMEM;
                return NULL;
        }
        a = &b->plan->actions[b->plan->n_actions++];
        *a = (Action) { .kind = kind, .before = before, .after = after };
        strscpy(a->target, sizeof(a->target), target);
        return a;
}

void plan_add_note(PlanBuilder *b, NoteLevel level, const char *target, const char *fmt, ...) {
        PlanNote *n;
        va_list ap;

        if (b->error < 0)
                return;
        if (GREEDY_REALLOC(b->plan->notes, b->allocated_notes, b->plan->n_notes + 1) < 0) {
                b->error = -ENOMEM;
                return;
        }
        n = &b->plan->notes[b->plan->n_notes++];
        *n = (PlanNote) { .level = level };
        strscpy(n->target, sizeof(n->target), target);
        va_start(ap, fmt);
        vsnprintf(n->text, sizeof(n->text), fmt, ap);
        va_end(ap);
}

static int allocation_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const PlanAllocation *) elem)->vf);
}

const PlanAllocation *plan_find_allocation(const PlanBuilder *b, const char *vf) {
        return bsearch_safe(vf, b->ctx->allocations, b->ctx->n_allocations, sizeof(PlanAllocation),
                            allocation_cmp);
}

bool plan_pf_vfs_replaced(const PlanBuilder *b, const Pf *pf) {
        /* Count changes come first in the plan and are few, so a scan is enough. */
        for (size_t i = 0; i < b->plan->n_actions; i++) {
                const Action *a = &b->plan->actions[i];
                if (a->kind == ACTION_SET_NUM_VFS && streq(a->target, pf->addr))
                        return true;
                if (a->kind > ACTION_SET_NUM_VFS)
                        break;
        }
        return false;
}

/*
 * The PF's netdev gets the PF's class. A VF's host netdev gets the class of the tenant that holds
 * it, or else the PF's. A VF in a guest has no host netdev. fn sees it with ifindex 0, so that it
 * can say so for the tenant rather than pretend. PFs whose VFs this plan replaces, and VFs that it
 * binds to vfio-pci, are left for the next pass.
 */

void plan_for_each_netdev(PlanBuilder *b, PlanNetdevFn fn, void *userdata) {
        const Inventory *inv = b->inv;

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                const TenantClass *pf_cls = plan_pf_class(b, pf);

                if (plan_pf_vfs_replaced(b, pf))
                        continue;
                if (pf->ifindex > 0)
                        fn(b, &(PlanNetdev) { .addr = pf->addr, .ifindex = pf->ifindex,
                                              .name = pf->n_netdevs > 0 ? pf->netdevs[0] : "",
                                              .tune = &pf->tune, .cls = pf_cls, .irqs = pf->irqs,
                                              .n_irqs = pf->n_irqs }, userdata);
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const Vf *vf = &pf->vfs[j];
                        const PlanAllocation *alloc = plan_find_allocation(b, vf->addr);
                        const TenantClass *cls =
                                alloc && alloc->class_name[0] ? config_find_class(b->cfg, alloc->class_name) : pf_cls;

                        if (vf->ifindex > 0 && plan_vf_leaves_host(b, vf->addr))
                                continue;
                        fn(b, &(PlanNetdev) { .addr = vf->addr, .ifindex = vf->ifindex, .name = vf->netdev,
                                              .tune = &vf->tune, .cls = cls, .alloc = alloc, .irqs = vf->irqs,
                                              .n_irqs = vf->n_irqs }, userdata);
                }
        }
}

bool plan_vf_leaves_host(const PlanBuilder *b, const char *vf) {
        for (size_t i = 0; i < b->plan->n_actions; i++) {
                const Action *a = &b->plan->actions[i];
                if (a->kind == ACTION_SET_VF_DRIVER && streq(a->target, vf) && streq(a->driver_after, "vfio-pci"))
                        return true;
        }
        return false;
}

const TenantClass *plan_pf_class(const PlanBuilder *b, const Pf *pf) {
        const PfPolicy *pol = config_pf_policy(b->cfg, pf->addr, pf->vendor, pf->device);
        return pol && pol->class_name[0] ? config_find_class(b->cfg, pol->class_name) : NULL;
}

static int saved_pid_cmp(const void *key, const void *elem) {
        pid_t k = *(const pid_t *) key, e = ((const SavedSched *) elem)->pid;
        return (k > e) - (k < e);
}

const SavedSched *plan_find_saved(const PlanBuilder *b, pid_t pid, unsigned irq, const char *name) {
        const SavedSched *s = bsearch_safe(&pid, b->ctx->saved, b->ctx->n_saved, sizeof(SavedSched), saved_pid_cmp);

        if (!s || s->irq != irq || !streq(s->name, name))
                return NULL;
        return s;
}
