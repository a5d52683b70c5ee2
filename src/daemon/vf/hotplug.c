/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hotplug.c — pin a new VF's vectors as soon as its driver has them, ahead of the cycle */

#include <inttypes.h>
#include <string.h>

#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/sriov.h"
#include "base/log.h"
#include "hotplug.h"

/*
 * A new VF's vectors do not exist until its driver has probed it. The probe enables MSI-X and
 * registers the netdev, between the VF's "add" and "bind" events. A cycle started before then
 * reads the whole host for nothing, which takes 150 ms on 4,000 IRQs, and the "bind" waits
 * behind it. So kernel events wait for a probing VF's "bind", for at most this long. mlx5 probes
 * a VF in well under a second. A probe that fails, or a driver that never comes, delays only the
 * cycle. It never delays a pin, because then there is nothing to pin.
 */
#define PROBE_WAIT_USEC (UINT64_C(1000) * 1000)

#define PCI_DEV "/sys/bus/pci/devices/%s"

/* Finds the index in inv of the PF that owns the VF at addr, through the VF's physfn link.
 * Returns -ENOENT when sriovd manages no such PF. */
static int hotplug_find_pf(Hotplug *h, const Inventory *inv, const char *addr, size_t *ret) {
        _cleanup_free_ char *physfn = NULL;
        int r;

        r = rootfs_readlink_base(h->root, &physfn, PCI_DEV "/physfn", addr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < inv->n_pfs; i++)
                if (streq(inv->pfs[i].addr, physfn)) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

/*
 * Pins the VF's vectors where the plan puts them. Only the VF is read again, which is a few dozen
 * files instead of the host's 70,000. It is planned alone against the CPUs and the PF of the last
 * inventory, with nothing copied. The VF's link settings, netdev tuning and IRQ threads are left
 * to the cycle that follows, which reads the host whole.
 */
static int hotplug_pin_vf(Hotplug *h, const Inventory *inv, const Config *c, size_t pf_i, const char *addr) {
        _cleanup_(host_problems_done) HostProblems problems = {};
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ Irq *irqs = NULL;
        _cleanup_free_ unsigned *vectors = NULL;
        uint64_t t0 = now_usec();
        unsigned written = 0, failed = 0;
        size_t n = 0;
        PlanContext ctx;
        Vf vf;
        int r;

        /*
         * Read the VF even when the last cycle saw it. That cycle may have read the vectors before
         * they were pinned, for example during a link-up. Only their affinities now show what is left.
         */
        r = sriov_read_vf_of(h->root, &inv->pfs[pf_i], addr, &problems, &vf);
        if (r < 0)
                return r == -ENOENT ? 0 : r;   /* The full read leaves this VF out too, and the cycle says why. */
        vectors = vf.irqs;
        if (vf.n_irqs == 0)
                return 0;   /* No vectors yet. A vfio-pci VF has none until its guest enables them. */
        irqs = calloc(vf.n_irqs, sizeof(*irqs));
        if (!irqs)
                return -ENOMEM;
        /* A vector's /proc/irq entry appears with its first handler. A vector without one is left to the cycle. */
        for (size_t i = 0; i < vf.n_irqs; i++)
                if (irq_read(h->root, vf.irqs[i], &irqs[n]) >= 0)
                        n++;
        if (n == 0)
                return 0;

        /* A view with what planning and logging one VF read from an inventory:
         * the host's CPUs, the PF with only this VF, and the VF's vectors. */
        Pf pf = inv->pfs[pf_i];
        pf.vfs = &vf;
        pf.n_vfs = 1;
        const Inventory view = { .topo = inv->topo, .caps = inv->caps, .pfs = &pf, .n_pfs = 1, .irqs = irqs,
                                 .n_irqs = n };

        h->hooks.plan_context(&ctx, h->hooks.userdata);
        /* Pass the whole PF, not the view's copy, because whether its VF count changes
         * depends on the users of all its VFs. */
        r = plan_build_vf_irqs(&view, c, &ctx, &inv->pfs[pf_i], &vf, &plan);
        if (r < 0)
                return r;
        for (size_t i = 0; i < plan->n_actions; i++) {
                Action *a = &plan->actions[i];

                if (a->kind != ACTION_SET_IRQ_AFFINITY || !streq(a->target, addr))
                        continue;
                h->hooks.apply(&view, a, h->hooks.userdata);
                written += a->result > 0;
                failed += a->result < 0;
        }
        /* Log at info level only when something was written. After sriovd creates VFs itself,
         * every bind finds its VF pinned already. */
        log_full_errno(failed ? LOG_WARNING : written ? LOG_INFO : LOG_DEBUG, 0, LOG_FIELDS(.pf = pf.addr, .vf = addr),
                       "New vectors of VF %s: %zu read, %u pinned, %u failed in %.1f ms, ahead of the cycle", addr, n,
                       written, failed, (double) (now_usec() - t0) / 1000.0);
        return 0;
}

void hotplug_init(Hotplug *h, RootFs *root, const HotplugHooks *hooks) {
        *h = (Hotplug) { .root = root, .hooks = *hooks };
}

void hotplug_done(Hotplug *h) {
        pci_set_done(&h->probing);
}

void hotplug_event(Hotplug *h, const Inventory *inv, const Config *c, const char *action, const char *addr) {
        size_t pf_i;
        int r;

        if (!inv || !pci_addr_valid(addr))
                return;
        if (streq(action, "remove") || streq(action, "unbind")) {
                (void) pci_set_remove(&h->probing, addr);
                return;
        }
        if (!streq(action, "add") && !streq(action, "bind"))
                return;
        if (hotplug_find_pf(h, inv, addr, &pf_i) < 0)
                return;
        if (streq(action, "add")) {
                /*
                 * The driver's link appears before its probe, the vectors during it, and the "bind"
                 * after it. So sriovd pins on the "bind". When the PF's sriov_drivers_autoprobe is
                 * off, no driver comes by itself, so there is nothing to wait for. A value of -1
                 * means that the file does not exist, and then the kernel's default is on.
                 */
                if (inv->pfs[pf_i].drivers_autoprobe == 0)
                        return;
                uint64_t until = now_usec() + PROBE_WAIT_USEC;

                r = pci_set_add(&h->probing, addr);
                if (r < 0)
                        log_warning_errno(r, "Failed to note that VF %s is probing, not waiting for its driver: %m",
                                          addr);
                else if (r > 0 && pci_set_size(&h->probing) == 1)
                        h->probing_until_usec = until;
                return;
        }
        (void) pci_set_remove(&h->probing, addr);
        r = hotplug_pin_vf(h, inv, c, pf_i, addr);
        if (r < 0)
                log_warning_errno(r, "Failed to pin the vectors of new VF %s, leaving them to the cycle: %m", addr);
}

void hotplug_link_up(Hotplug *h, const Inventory *inv, const Config *c, int ifindex) {
        int r;

        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        if (inv->pfs[i].vfs[j].ifindex == ifindex) {
                                r = hotplug_pin_vf(h, inv, c, i, inv->pfs[i].vfs[j].addr);
                                if (r < 0)
                                        log_warning_errno(r, "Failed to pin the vectors of VF %s, "
                                                          "leaving them to the cycle: %m", inv->pfs[i].vfs[j].addr);
                                return;
                        }
}

bool hotplug_waiting(Hotplug *h, uint64_t now, uint64_t *ret_until) {
        if (pci_set_size(&h->probing) == 0)
                return false;
        if (now >= h->probing_until_usec) {
                log_info("VF %s (and %zu more) still without a driver after %" PRIu64 " ms: not waiting for it",
                         pci_set_get(&h->probing, 0), pci_set_size(&h->probing) - 1, PROBE_WAIT_USEC / 1000);
                pci_set_clear(&h->probing);
                return false;
        }
        *ret_until = h->probing_until_usec;
        return true;
}
