/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-prepare.c — a VF's link settings, applied before the VF goes into a tenant's guest */

#include "sriovd/kernel/vf-netlink.h"
#include "base/log.h"
#include "vf-prepare.h"

/*
 * libvirt attaches the VF as soon as the allocator decides. The cycle that sets the VF's link
 * runs only after that attach. The cycle sets the clean baseline and the new tenant's MAC and
 * VLAN. Without this function, the new tenant's guest would see, for that while, what the
 * previous tenant left: its VLAN, trust and rate. The planner itself plans the change, as one
 * VF's ACTION_SET_VF_LINK, against the PF as the kernel shows it now. The action is applied like
 * any other. A failure is logged once and left to the next cycle.
 */
int vf_prepare(Kernel *k, const Config *c, const Inventory *inv, PciSet *vf_link_unsupported, const char *tenant,
               const char *vf, const TenantNicFacts *f) {
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ VfLink *links = NULL;
        PlanAllocation alloc = { .vlan = f->vlan, .qos = -1, .vcpu0_cpu = -1, .tx_rates = f->tx_rates };
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX];
        const Vf *v = NULL;
        const Pf *pf;
        Pf now;
        NlError err = {};
        int r;

        /* A fixture's netdevs are not this host's, so there is nothing to set. The cycle skips them too. */
        if (!k->route || !inv)
                return 0;
        pf = inventory_find_function(inv, vf, &v);
        if (!pf || !v || pf->ifindex <= 0)
                return 0;   /* The VF or its PF netdev is not seen yet. The cycle that finds them sets the VF. */

        now = *pf;
        r = route_nl_read_vfs(k->route, pf->ifindex, &links, &now.n_vf_links, &err);
        if (r < 0) {
                log_full_errno(LOG_WARNING, r, LOG_FIELDS(.tenant = tenant, .pf = pf->addr, .vf = vf),
                               "Tenant %s: could not read VF %s's link settings before its guest gets it, "
                               "the next cycle sets them: %m%s%s",
                               tenant, vf, err.message[0] ? ": " : "", err.message);
                return r;
        }
        now.vf_links = links;
        now.vf_links_known = true;

        strscpy(alloc.vf, sizeof(alloc.vf), vf);
        strscpy(alloc.tenant, sizeof(alloc.tenant), tenant);
        strscpy(alloc.class_name, sizeof(alloc.class_name), f->class_name ?: "");
        alloc.have_mac = mac_parse(f->mac, alloc.mac);
        PlanContext ctx = {
                .allocations = &alloc,
                .n_allocations = 1,
                .vf_link_unsupported = pci_set_array(vf_link_unsupported),
                .n_vf_link_unsupported = pci_set_size(vf_link_unsupported),
                .guests_known = true,
        };
        r = plan_build_vf_link(&now, c, &ctx, v->index, &plan);
        if (r < 0)
                return log_oom();

        for (size_t i = 0; i < plan->n_actions; i++) {
                Action *a = &plan->actions[i];
                LogFields fields = { .tenant = tenant, .pf = pf->addr, .vf = vf, .irq = -1,
                                     .message_id = SRIOVD_MESSAGE_ACTION };

                action_apply(k, a);
                action_format_value(a, false, before, sizeof(before));
                action_format_value(a, true, after, sizeof(after));
                if (a->result >= 0) {
                        if (a->result > 0)
                                log_full_errno(LOG_INFO, 0, &fields,
                                               "Tenant %s: VF %s set before its guest gets it: %s -> %s", tenant, vf,
                                               before, after);
                        continue;
                }
                r = a->result;
                if (a->error.class == ERROR_UNMANAGED) {
                        int q = pci_set_add(vf_link_unsupported, a->target);
                        if (q < 0)
                                log_warning_errno(q, "Failed to remember that PF %s refuses VF link settings, "
                                                  "it is asked again next cycle: %m", a->target);
                }
                log_full_errno(LOG_ERR, a->result, &fields,
                               "Tenant %s: failed to set VF %s before its guest gets it (%s -> %s): %m%s%s%s; "
                               "attached as it is, the next cycle retries",
                               tenant, vf, before, after, a->kernel_message[0] ? " (kernel: " : "",
                               a->kernel_message, a->kernel_message[0] ? ")" : "");
        }
        return r < 0 ? r : (int) plan->n_actions;
}
