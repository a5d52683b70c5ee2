/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hotplug.c — a VF's new vectors pinned as soon as its driver has them (bind, link-up), ahead of the cycle */

#include <string.h>

#include "manager-internal.h"

/*
 * Until a new VF's driver has probed it (enabled MSI-X, registered its netdev: between the VF's
 * "add" and its "bind") its vectors do not exist, and a cycle started then reads the whole host
 * for nothing -- 150 ms on 4,000 IRQs -- while the "bind" waits behind it. So kernel events wait
 * for a probing VF's "bind", this long at most: mlx5 probes a VF in well under a second; a probe
 * that fails or a driver that never comes delays only the cycle, never the pin (there is none).
 */
#define PROBE_WAIT_USEC (UINT64_C(1000) * 1000)

#define PCI_DEV "/sys/bus/pci/devices/%s"

/* The index in inv of the PF whose VF addr is (its physfn link); -ENOENT: none sriovd manages. */
static int hotplug_find_pf(Manager *m, const Inventory *inv, const char *addr, size_t *ret) {
        _cleanup_free_ char *physfn = NULL;
        int r;

        r = rootfs_readlink_base(m->root, &physfn, PCI_DEV "/physfn", addr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (streq(inv->pfs[i].addr, physfn)) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

static void probing_remove(Manager *m, const char *addr) {
        for (size_t i = 0; i < m->n_probing; i++)
                if (streq(m->probing[i], addr)) {
                        memmove(m->probing[i], m->probing[--m->n_probing], PCI_ADDR_MAX);
                        return;
                }
}

/*
 * The VF's vectors where the plan puts them: the VF read anew (a few dozen files, not the host's
 * 70,000) and planned alone against the last inventory's CPUs and its PF, with nothing copied.
 * Its link settings, netdev tuning and IRQ threads are the cycle's, which follows and reads the
 * host whole.
 */
static int manager_pin_vf(Manager *m, size_t pf_i, const char *addr) {
        _cleanup_(host_problems_done) HostProblems problems = {};
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ Irq *irqs = NULL;
        _cleanup_free_ unsigned *vectors = NULL;
        const Inventory *inv = m->inventory;
        uint64_t t0 = now_usec();
        unsigned written = 0, failed = 0;
        size_t n = 0;
        PlanContext ctx;
        Vf vf;
        int r;

        /*
         * Read even when the last cycle saw this VF: it may have read the vectors before they were
         * pinned (a link-up during its read), and only their affinities now say what is left.
         */
        r = sriov_read_vf_of(m->root, &inv->pfs[pf_i], addr, &problems, &vf);
        if (r < 0)
                return r == -ENOENT ? 0 : r;   /* one the full read leaves out too: the cycle says why */
        vectors = vf.irqs;
        if (vf.n_irqs == 0)
                return 0;   /* no vectors (yet, or vfio-pci's until its guest enables them): none to pin */
        irqs = calloc(vf.n_irqs, sizeof(*irqs));
        if (!irqs)
                return -ENOMEM;
        /* A vector whose /proc/irq entry is not there yet gets it with its first handler: the cycle's. */
        for (size_t i = 0; i < vf.n_irqs; i++)
                if (irq_read(m->root, vf.irqs[i], &irqs[n]) >= 0)
                        n++;
        if (n == 0)
                return 0;

        /* What planning and logging one VF read of an inventory: the host's CPUs, its PF with it, its vectors. */
        Pf pf = inv->pfs[pf_i];
        pf.vfs = &vf;
        pf.n_vfs = 1;
        const Inventory view = { .topo = inv->topo, .caps = inv->caps, .pfs = &pf, .n_pfs = 1, .irqs = irqs,
                                 .n_irqs = n };

        manager_plan_context(m, NULL, 0, &ctx);
        /* The whole PF, not the view's: whether its VF count changes depends on all its VFs' users. */
        r = plan_build_vf_irqs(&view, m->config, &ctx, &inv->pfs[pf_i], &vf, &plan);
        if (r < 0)
                return r;
        for (size_t i = 0; i < plan->n_actions; i++) {
                Action *a = &plan->actions[i];

                if (a->kind != ACTION_SET_IRQ_AFFINITY || !streq(a->target, addr))
                        continue;
                manager_apply_action(m, &view, a);
                written += a->result > 0;
                failed += a->result < 0;
        }
        /* Said when it wrote: after sriovd's own VF creation every bind finds its VF pinned. */
        log_full_errno(failed ? LOG_WARNING : written ? LOG_INFO : LOG_DEBUG, 0, LOG_FIELDS(.pf = pf.addr, .vf = addr),
                       "New vectors of VF %s: %zu read, %u pinned, %u failed in %.1f ms, ahead of the cycle", addr, n,
                       written, failed, (double) (now_usec() - t0) / 1000.0);
        return 0;
}

void manager_hotplug_event(Manager *m, const char *action, const char *addr) {
        const Inventory *inv = m->inventory;
        size_t pf_i;
        int r;

        if (!inv || !pci_addr_valid(addr))
                return;
        if (streq(action, "remove") || streq(action, "unbind")) {
                probing_remove(m, addr);
                return;
        }
        if (!streq(action, "add") && !streq(action, "bind"))
                return;
        if (hotplug_find_pf(m, inv, addr, &pf_i) < 0)
                return;
        if (streq(action, "add")) {
                /*
                 * The driver's link appears before its probe, the vectors during it, the "bind"
                 * after: that is the one to pin on. Its PF's sriov_drivers_autoprobe off (-1: no
                 * such file, the kernel's default is on): no driver comes by itself.
                 */
                if (inv->pfs[pf_i].drivers_autoprobe == 0)
                        return;
                if (m->n_probing == 0)
                        m->probing_until_usec = now_usec() + PROBE_WAIT_USEC;
                for (size_t i = 0; i < m->n_probing; i++)
                        if (streq(m->probing[i], addr))
                                return;
                if (GREEDY_REALLOC(m->probing, m->allocated_probing, m->n_probing + 1) < 0) {
                        log_oom();
                        return;
                }
                strscpy(m->probing[m->n_probing++], PCI_ADDR_MAX, addr);
                return;
        }
        probing_remove(m, addr);
        r = manager_pin_vf(m, pf_i, addr);
        if (r < 0)
                log_warning_errno(r, "Failed to pin the vectors of new VF %s, the cycle will: %m", addr);
}

void manager_hotplug_link_up(Manager *m, int ifindex) {
        const Inventory *inv = m->inventory;
        int r;

        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        if (inv->pfs[i].vfs[j].ifindex == ifindex) {
                                r = manager_pin_vf(m, i, inv->pfs[i].vfs[j].addr);
                                if (r < 0)
                                        log_warning_errno(r, "Failed to pin the vectors of VF %s, the cycle will: %m",
                                                          inv->pfs[i].vfs[j].addr);
                                return;
                        }
}

bool manager_hotplug_waiting(Manager *m, uint64_t now, uint64_t *ret_until) {
        if (m->n_probing == 0)
                return false;
        if (now >= m->probing_until_usec) {
                log_info("VF %s (and %zu more) still without a driver after %" PRIu64 " ms: not waiting for it",
                         m->probing[0], m->n_probing - 1, PROBE_WAIT_USEC / 1000);
                m->n_probing = 0;
                return false;
        }
        *ret_until = m->probing_until_usec;
        return true;
}
