/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * refresh.c — the drift check's read, which re-reads only what can change without an event
 *
 * The check works on a copy of the last full inventory. It re-reads the IRQ affinities, the
 * scheduling of the threads that sriovd places, the vectors of VFs in guests, rtnet_prio and the
 * default affinity. A guest's driver that enables MSI-X sends no uevent, so the VF vectors are
 * on this list. A change that comes with an event, such as a new device, driver, netdev or VF
 * count, is for the full read, on that event or on the daemon's slow full pass.
 * docs/ARCHITECTURE.md describes the drift check.
 */

#include <string.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/refresh.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"

/* Reads the thread's current scheduling. Returns -ESTALE when pid is no longer that thread,
 * because only the full read can find the new one. */
static int refresh_sched(RootFs *root, pid_t pid, const char *name, unsigned irq, int *policy, int *priority) {
        char buf[PROC_STAT_MAX];
        ProcStat st;
        int r;

        if (rootfs_sched_live(root)) {
                /* The scheduler is the authority. A PID that is gone or reused is left to the full read. */
                r = sched_thread_get(pid, policy, priority);
                return r < 0 ? -ESTALE : 0;
        }
        r = rootfs_read_attr(root, buf, sizeof(buf), "/proc/%d/stat", (int) pid);
        if (r < 0 || proc_stat_parse(buf, &st) < 0 || !(st.flags & PF_KTHREAD))
                return -ESTALE;
        if (name ? !streq(st.comm, name) : irq_thread_name_parse(st.comm) != (int) irq)
                return -ESTALE;
        *policy = (int) st.policy;
        *priority = (int) st.rt_priority;
        return 0;
}

static int refresh_irq(RootFs *root, IrqFiles *files, Irq *q, bool threaded) {
        char list[CPUSET_LIST_MAX], action[sizeof(q->action)];
        CpuSet affinity;
        int r;

        /*
         * The effective affinity follows the affinity, so it is read only when the affinity moved.
         * Whether the file is writable is fixed when the IRQ is set up. A kernel-managed vector's
         * file is not writable. An IRQ that is set up again is left to the full read, on its event
         * or at the end of its period.
         */
        r = irq_files_read_affinity(files, root, q->irq, list, sizeof(list));
        if (r < 0 || cpuset_parse_list(list, &affinity) < 0)
                return -ESTALE;
        if (!cpuset_equal(&affinity, &q->affinity)) {
                q->affinity = affinity;
                q->has_effective = irq_read_effective(root, q->irq, &q->effective) >= 0;
        }
        if (q->thread > 0)
                return refresh_sched(root, q->thread, NULL, q->irq, &q->thread_policy, &q->thread_priority);
        /* A handler requested since the full read has a new thread. igbvf requests one when the
         * netdev opens, and vfio does when the guest unmasks the vector. */
        if (threaded && !q->action[0] && irq_read_action(root, q->irq, action, sizeof(action)) >= 0 && action[0])
                return -ESTALE;
        return 0;
}

/*
 * Looks for vectors that the device names in msi_irqs/ but that /proc/irq did not have at the
 * full read. The kernel makes the /proc/irq entry of a dynamically allocated vector when its first
 * handler is requested, for example by igbvf at open or by vfio when the guest unmasks the vector.
 * Nothing tells a refresh about it. The check costs one read per missing vector, and none on a
 * host whose NICs are all open. A vector that could not be read then and still cannot is no news.
 */
static int refresh_unlisted(RootFs *root, const Inventory *inv, const unsigned *irqs, size_t n) {
        char list[CPUSET_LIST_MAX];

        for (size_t i = 0; i < n; i++)
                if (!inventory_find_irq(inv, irqs[i]) &&
                    rootfs_read_attr(root, list, sizeof(list), "/proc/irq/%u/smp_affinity_list", irqs[i]) >= 0)
                        return -ESTALE;
        return 0;
}

/* A passthrough VF's vectors appear when its guest's driver enables MSI-X, and no uevent says so. */
static int refresh_vf_vectors(RootFs *root, const Vf *vf) {
        _cleanup_free_ unsigned *irqs = NULL;
        size_t n;
        int r;

        if (!streq(vf->driver, "vfio-pci"))
                return 0;
        r = pci_read_irqs(root, vf->addr, &irqs, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || n != vf->n_irqs || (n > 0 && memcmp(irqs, vf->irqs, n * sizeof(unsigned)) != 0))
                return -ESTALE;
        return 0;
}

/* Catches a VF count or an autoprobe setting written behind sriovd's back. A real kernel sends
 * uevents for the VFs, but a fixture tree may not. The check costs one read of each per PF,
 * so a full read follows in either case. */
static int refresh_pf(RootFs *root, const Pf *pf) {
        long v;

        if (rootfs_read_long(root, &v, "/sys/bus/pci/devices/%s/sriov_numvfs", pf->addr) < 0 || v != pf->num_vfs)
                return -ESTALE;
        if (pf->drivers_autoprobe >= 0 &&
            (rootfs_read_long(root, &v, "/sys/bus/pci/devices/%s/sriov_drivers_autoprobe", pf->addr) < 0 ||
             v != pf->drivers_autoprobe))
                return -ESTALE;
        return 0;
}

int inventory_refresh(RootFs *root, IrqFiles *files, Inventory *inv) {
        long v;
        int r;

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                r = refresh_pf(root, pf);
                if (r < 0)
                        return r;
                r = refresh_unlisted(root, inv, pf->irqs, pf->n_irqs);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        r = refresh_vf_vectors(root, &pf->vfs[j]);
                        if (r < 0)
                                return r;
                        r = refresh_unlisted(root, inv, pf->vfs[j].irqs, pf->vfs[j].n_irqs);
                        if (r < 0)
                                return r;
                }
        }
        for (size_t i = 0; i < inv->n_irqs; i++) {
                r = refresh_irq(root, files, &inv->irqs[i], inv->caps.threaded_irqs);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < inv->n_other_irqs; i++) {
                r = refresh_irq(root, files, &inv->other_irqs[i], false);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < inv->n_kthreads; i++) {
                Kthread *k = &inv->kthreads[i];

                r = refresh_sched(root, k->pid, k->name, 0, &k->policy, &k->priority);
                if (r < 0)
                        return r;
                if (k->kind == KTHREAD_NAPI && sched_thread_cpus_get(root, k->pid, &k->cpus) < 0)
                        return -ESTALE;
        }
        inv->have_default_affinity = irq_read_default_affinity(root, &inv->default_affinity) >= 0;
        if (inv->caps.rtnet_prio_present) {
                r = rootfs_read_long(root, &v, "/proc/sys/net/core/rtnet_prio");
                if (r < 0)
                        return -ESTALE;
                inv->caps.rtnet_prio = v;
        }
        return 0;
}

/* Irq is const in the inventory's lookups; the refresh owns its copy, so it may write. */
static Irq *find_irq_mut(Inventory *inv, unsigned irq, bool *ret_other) {
        const Irq *q = inventory_find_irq(inv, irq);

        *ret_other = !q;
        if (!q)
                q = inventory_find_other_irq(inv, irq);
        return (Irq *) q;
}

int inventory_refresh_only(RootFs *root, IrqFiles *files, Inventory *inv, const unsigned *irqs, size_t n_irqs,
                           const pid_t *pids, size_t n_pids) {
        bool other;
        int r;

        for (size_t i = 0; i < n_irqs; i++) {
                Irq *q = find_irq_mut(inv, irqs[i], &other);

                if (!q)
                        continue;
                r = refresh_irq(root, files, q, !other && inv->caps.threaded_irqs);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n_pids; i++) {
                for (size_t j = 0; j < inv->n_irqs; j++) {
                        Irq *q = &inv->irqs[j];

                        if (q->thread != pids[i])
                                continue;
                        r = refresh_sched(root, q->thread, NULL, q->irq, &q->thread_policy, &q->thread_priority);
                        if (r < 0)
                                return r;
                }
                for (size_t j = 0; j < inv->n_kthreads; j++) {
                        Kthread *k = &inv->kthreads[j];

                        if (k->pid != pids[i])
                                continue;
                        r = refresh_sched(root, k->pid, k->name, 0, &k->policy, &k->priority);
                        if (r < 0)
                                return r;
                        if (k->kind == KTHREAD_NAPI && sched_thread_cpus_get(root, k->pid, &k->cpus) < 0)
                                return -ESTALE;
                }
        }
        return 0;
}

int irq_refresh_named(RootFs *root, IrqFiles *files, Irq *q, bool affinity, bool thread) {
        char list[CPUSET_LIST_MAX];
        int r;

        if (affinity) {
                r = irq_files_read_affinity(files, root, q->irq, list, sizeof(list));
                if (r < 0 || cpuset_parse_list(list, &q->affinity) < 0)
                        return -ESTALE;
        }
        if (thread && q->thread > 0)
                return refresh_sched(root, q->thread, NULL, q->irq, &q->thread_policy, &q->thread_priority);
        return 0;
}
