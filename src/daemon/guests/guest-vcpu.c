/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-vcpu.c — set the scheduling of a running RT guest's vCPU threads
 *
 * sriovd writes <vcpusched> into the domain, and libvirt applies it when QEMU starts. But a guest
 * usually runs already when its RT CPU is booked, because the controller allocates for a running
 * guest. Its vCPU 0 would then stay at SCHED_OTHER on the RT CPU until the guest's next start.
 * So the thread is set here, as libvirt would set it, and put back when it drifts.
 */

#include <sched.h>
#include <string.h>

#include "sriovd/core/error-class.h"
#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/vhost.h"
#include "guest-vcpu.h"

int guest_qemu_pid(RootFs *root, Virt *v, const char *domain, pid_t *qemu_hint, pid_t *ret, VirtError *err) {
        char uuid[VIRT_UUID_STRING_MAX];
        int r;

        r = virt_domain_uuid(v, domain, uuid, err);
        if (r < 0)
                return r;
        r = qemu_pid_find(root, uuid, *qemu_hint, ret);
        if (r < 0)
                return r;
        *qemu_hint = *ret;
        return 0;
}

int guest_vcpu_threads(RootFs *root, Virt *v, const char *domain, pid_t *qemu_hint, VcpuThread **ret, size_t *ret_n,
                       VirtError *err) {
        pid_t qemu;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = guest_qemu_pid(root, v, domain, qemu_hint, &qemu, err);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        r = vcpu_threads_scan(root, qemu, ret, ret_n);
        return r == -ENOENT ? 0 : r;   /* QEMU may have ended in the meantime. */
}

/* Works out the policy and priority that vCPU thread t should run at under placement p.
 * Returns false when p leaves the thread as it is. */
static bool wanted(const GuestPlacement *p, const VcpuThread *t, int *policy, int *priority) {
        bool rt_now = t->policy == SCHED_FIFO || t->policy == SCHED_RR;

        if (p->fifo_priority > 0 && t->vcpu < p->n_rt) {
                *policy = SCHED_FIFO;
                *priority = p->fifo_priority;
        } else if (p->fifo_priority != 0 && rt_now) {
                /* The guest's housekeeping vCPUs go back to the default.
                 * So do all of its vCPUs when FIFO was removed. */
                *policy = SCHED_OTHER;
                *priority = 0;
        } else
                return false;
        return t->policy != *policy || t->priority != *priority;
}

int guest_vcpu_threads_place(RootFs *root, Virt *v, const char *domain, const char *vf, const GuestPlacement *p,
                             bool dry_run, pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err) {
        _cleanup_free_ VcpuThread *threads = NULL;
        bool live = rootfs_sched_live(root);
        size_t n = 0;
        int r;

        if (p->fifo_priority == 0)
                return 0;
        r = guest_vcpu_threads(root, v, domain, qemu_hint, &threads, &n, err);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                const VcpuThread *t = &threads[i];
                int policy, priority;
                Action *a;

                if (!wanted(p, t, &policy, &priority))
                        continue;
                a = reallocarray(*actions, *n_actions + 1, sizeof(Action));
                if (!a)
                        return -ENOMEM;
                *actions = a;
                a = &a[(*n_actions)++];
                *a = (Action) { .kind = ACTION_SET_VCPU_THREAD, .pid = t->tid, .vcpu = t->vcpu,
                                .policy_before = t->policy, .before = t->priority,
                                .policy_after = policy, .after = priority };
                strscpy(a->target, sizeof(a->target), vf ?: "");
                snprintf(a->effect, sizeof(a->effect), "domain %.40s vCPU %u thread %d", domain, t->vcpu,
                         (int) t->tid);
                if (dry_run)
                        continue;
                /* A PID in a fixture tree names whatever process has that number on this host.
                 * So sriovd must not touch it. */
                r = live ? vcpu_thread_set(root, *qemu_hint, t, policy, priority) : 0;
                a->skipped = !live;
                a->applied = live;
                action_set_result(a, r == -ESRCH ? 0 : r);   /* A thread that is gone needs no placing. */
        }
        return 0;
}
