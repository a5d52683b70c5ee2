/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-vhost.c — place a virtio-net tenant's host-side packet thread
 *
 * vhost-net moves a guest's packets in the vhost-QEMUPID worker of the guest's QEMU. This is
 * the host vNIC thread of R11 in docs/REQUIREMENTS.md. Left alone, it runs wherever the
 * scheduler puts it, RT cores included. libvirt has no setting for it. So sriovd finds it by the
 * QEMU's -uuid and places it with sched_setaffinity() and sched_setscheduler(), as it does IRQ
 * threads.
 */

#include <sched.h>
#include <string.h>

#include "sriovd/core/error-class.h"
#include "sriovd/kernel/vhost.h"
#include "guest-vcpu.h"
#include "guest-vhost.h"

/* Appends an action on thread t. Its effect text names the domain and the thread. */
static Action *append(Action **actions, size_t *n, ActionKind kind, const char *domain, pid_t qemu,
                      const VhostThread *t) {
        Action *a = reallocarray(*actions, *n + 1, sizeof(Action));

        if (!a)
                return NULL;
        *actions = a;
        a = &a[(*n)++];
        *a = (Action) { .kind = kind, .pid = t->tid };
        snprintf(a->effect, sizeof(a->effect), "domain %.40s vhost-%d thread %d", domain, (int) qemu, (int) t->tid);
        return a;
}

int guest_vhost_place(RootFs *root, Virt *v, const char *domain, const VhostPlacement *p, bool dry_run,
                      pid_t *qemu_hint, Action **actions, size_t *n_actions, VirtError *err) {
        _cleanup_free_ VhostThread *threads = NULL;
        bool live = rootfs_sched_live(root);
        size_t n = 0;
        pid_t qemu;
        int r;

        r = guest_qemu_pid(root, v, domain, qemu_hint, &qemu, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = vhost_threads_scan(root, qemu, &threads, &n);
        if (r == -ENOENT)
                return 0;   /* QEMU ended in the meantime. */
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                const VhostThread *t = &threads[i];
                bool pin = p->pin && !cpuset_equal(&p->cpus, &t->cpus);
                bool sched = p->fifo_priority > 0 && (t->policy != SCHED_FIFO || t->priority != p->fifo_priority);
                size_t first = *n_actions;
                Action *a;

                if (pin) {
                        a = append(actions, n_actions, ACTION_SET_VHOST_PIN, domain, qemu, t);
                        if (!a)
                                return -ENOMEM;
                        a->cpus_before = t->cpus;
                        a->cpus_after = p->cpus;
                }
                if (sched) {
                        a = append(actions, n_actions, ACTION_SET_VHOST_SCHED, domain, qemu, t);
                        if (!a)
                                return -ENOMEM;
                        a->policy_before = t->policy;
                        a->before = t->priority;
                        a->policy_after = SCHED_FIFO;
                        a->after = p->fifo_priority;
                }
                if (dry_run || first == *n_actions)
                        continue;
                /* A PID in a fixture tree names whatever process has that number on this host.
                 * So sriovd must not touch it. */
                r = live ? vhost_thread_set(root, qemu, t, pin ? &p->cpus : NULL, SCHED_FIFO,
                                            sched ? p->fifo_priority : -1) : 0;
                for (size_t k = first; k < *n_actions; k++) {
                        a = &(*actions)[k];
                        a->skipped = !live;
                        a->applied = live;
                        action_set_result(a, r == -ESRCH ? 0 : r);   /* A thread that is gone needs no placing. */
                }
        }
        return 0;
}
