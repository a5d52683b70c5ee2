/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* action-log.c — the journal lines of the actions a cycle took, with the fields that find a device */

#include <stdio.h>

#include "action-log.h"
#include "apply.h"

const char *action_describe(const Action *a, char *buf, size_t size) {
        bool irq = a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD;
        bool vf = a->kind == ACTION_SET_VF_LINK || a->kind == ACTION_SET_VF_DRIVER;

        if (irq || vf)
                snprintf(buf, size, "%s %s %s %u", action_kind_to_string(a->kind), a->target[0] ? a->target : "host",
                         irq ? "IRQ" : "VF", irq ? a->irq : a->vf);
        else if (a->thread_name[0])
                snprintf(buf, size, "%s %s %.*s", action_kind_to_string(a->kind), a->target[0] ? a->target : "host",
                         KTHREAD_NAME_MAX - 1, a->thread_name);
        else if (a->kind == ACTION_SET_NAPI_PARAMS)
                snprintf(buf, size, "%s %s NAPI %u", action_kind_to_string(a->kind), a->target, a->napi_id);
        else if (a->kind == ACTION_SET_CPU_IDLE)
                snprintf(buf, size, "%s host CPU %u state %u", action_kind_to_string(a->kind), a->cpu, a->idle_state);
        else if (a->kind == ACTION_SET_CPU_GOVERNOR)
                snprintf(buf, size, "%s host CPU %u", action_kind_to_string(a->kind), a->cpu);
        else
                snprintf(buf, size, "%s %s", action_kind_to_string(a->kind), a->target[0] ? a->target : "host");
        return buf;
}

/*
 * SRIOVD_PF= always names a PF. An event about a VF carries the VF in SRIOVD_VF= and its PF in
 * SRIOVD_PF=. So "journalctl SRIOVD_PF=X" finds everything about one NIC, and SRIOVD_VF= finds
 * everything about one VF. VF link actions target the PF and name the VF by its index. An
 * address that the inventory does not know is a configured PF that is missing, because VFs are
 * only ever found through their PF.
 */
LogFields log_fields_device(const Inventory *inv, const char *addr, int vf_index, int irq, const char *message_id) {
        LogFields f = { .irq = irq, .message_id = message_id };
        const Vf *vf = NULL;
        const Pf *pf;

        if (!addr || !addr[0])
                return f;
        pf = inv ? inventory_find_function(inv, addr, &vf) : NULL;
        if (!pf) {
                f.pf = addr;
                return f;
        }
        f.pf = pf->addr;
        if (!vf && vf_index >= 0)
                for (size_t i = 0; i < pf->n_vfs && !vf; i++)
                        if (pf->vfs[i].index == (unsigned) vf_index)
                                vf = &pf->vfs[i];
        if (vf)
                f.vf = vf->addr;
        return f;
}

LogFields log_fields_action(const Inventory *inv, const Action *a, const char *message_id) {
        bool irq = a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD;
        bool vf = a->kind == ACTION_SET_VF_LINK;

        return log_fields_device(inv, a->target, vf ? (int) a->vf : -1, irq ? (int) a->irq : -1, message_id);
}

void action_log(const Inventory *inv, const Action *a, bool drift) {
        LogFields fields = log_fields_action(inv, a, drift ? SRIOVD_MESSAGE_DRIFT : SRIOVD_MESSAGE_ACTION);
        const LogFields *f = &fields;
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], what[160];

        action_describe(a, what, sizeof(what));
        action_format_value(a, false, before, sizeof(before));
        action_format_value(a, true, after, sizeof(after));

        if (a->result > 0)
                log_full_errno(drift ? LOG_NOTICE : LOG_INFO, 0, f, "%s%s: %s -> %s%s%s%s",
                               drift ? "Drift repaired: " : "", what, before, after,
                               a->effect[0] ? " (" : "", a->effect, a->effect[0] ? ")" : "");
        else if (a->result < 0 && a->kind == ACTION_SET_IRQ_AFFINITY && !a->target[0] &&
                 a->error.class == ERROR_UNMANAGED)
                log_full_errno(LOG_NOTICE, a->result, LOG_FIELDS(.irq = (int) a->irq),
                               "IRQ %u stays where the kernel keeps it (%m); not asked again this boot", a->irq);
        else if (a->result < 0) {
                ErrorInfo e = a->error;
                LogFields ef = log_fields_action(inv, a, e.class == ERROR_UNMANAGED ? SRIOVD_MESSAGE_UNMANAGED
                                                                                : SRIOVD_MESSAGE_ACTION);
                log_full_errno(e.class == ERROR_TRANSIENT ? LOG_WARNING : LOG_ERR, a->result, &ef,
                               "Failed %s: %s -> %s: %m%s%s%s (%s; %s)", what, before, after,
                               a->kernel_message[0] ? " (kernel: " : "", a->kernel_message,
                               a->kernel_message[0] ? ")" : "", e.meaning, error_class_to_string(e.class));
        }
}

void action_log_not_stuck(const Inventory *inv, const Action *a) {
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], what[160];
        LogFields f = log_fields_action(inv, a, SRIOVD_MESSAGE_DRIFT);

        log_full_errno(LOG_WARNING, 0, &f, "Did not stick: %s is %s, want %s", action_describe(a, what, sizeof(what)),
                       action_format_value(a, false, before, sizeof(before)),
                       action_format_value(a, true, after, sizeof(after)));
}

void action_log_notes(const Inventory *inv, const Plan *p) {
        for (size_t i = 0; i < p->n_notes; i++) {
                const PlanNote *n = &p->notes[i];
                int level = n->level == NOTE_ERROR ? LOG_ERR : n->level == NOTE_WARNING ? LOG_WARNING : LOG_INFO;
                LogFields f = log_fields_device(inv, n->target, -1, -1, NULL);
                log_full_errno(level, 0, &f, "%s%s%s", n->target, n->target[0] ? ": " : "", n->text);
        }
}

const char *action_drift_text(const Action *a, const char *outcome, char *buf, size_t size) {
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], what[160];

        snprintf(buf, size, "%s: %s -> %s (%s)", action_describe(a, what, sizeof(what)),
                 action_format_value(a, false, before, sizeof(before)),
                 action_format_value(a, true, after, sizeof(after)), outcome);
        return buf;
}
