/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * qemu-vcpu.c — finds and schedules a running guest's vCPU threads
 *
 * libvirt applies <vcpusched> only when QEMU starts. A guest may already run when sriovd books
 * its RT CPU. That guest's vCPU gets SCHED_FIFO here, set on the thread itself, as libvirt would
 * have set it at the start.
 */

#include <ctype.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"

int qemu_vcpu_name_parse(const char *comm) {
        const char *p;
        unsigned long v;
        char *end;

        if (!comm || strncmp(comm, "CPU ", 4) != 0 || !isdigit((unsigned char) comm[4]))
                return -EINVAL;
        errno = 0;
        v = strtoul(comm + 4, &end, 10);
        if (errno || v > INT16_MAX || *end != '/' || !end[1])
                return -EINVAL;
        /* The accelerator's name, such as "KVM", "TCG" or "HVF", has only letters and digits. */
        for (p = end + 1; *p; p++)
                if (!isalnum((unsigned char) *p))
                        return -EINVAL;
        return (int) v;
}

typedef struct VcpuScan {
        VcpuThread *threads;
        size_t n, allocated;
} VcpuScan;

static int scan_one(RootFs *root, const char *dir, pid_t tid, const ProcStat *st, void *userdata) {
        VcpuScan *s = userdata;
        int vcpu;

        vcpu = qemu_vcpu_name_parse(st->comm);
        if (vcpu < 0 || (st->flags & PF_KTHREAD))
                return 0;
        if (GREEDY_REALLOC(s->threads, s->allocated, s->n + 1) < 0)
                return -ENOMEM;
        s->threads[s->n++] = (VcpuThread) { .tid = tid, .vcpu = (unsigned) vcpu, .policy = (int) st->policy,
                                            .priority = (int) st->rt_priority };
        return 0;
}

static int vcpu_thread_cmp(const void *a, const void *b) {
        const VcpuThread *x = a, *y = b;
        if (x->vcpu != y->vcpu)
                return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
        return (x->tid > y->tid) - (x->tid < y->tid);
}

int vcpu_threads_scan(RootFs *root, pid_t qemu, VcpuThread **ret, size_t *ret_n) {
        VcpuScan s = {};
        char task[32];
        int r;

        if (qemu <= 0)
                return -EINVAL;
        snprintf(task, sizeof(task), "/proc/%d/task", (int) qemu);
        r = proc_threads_each(root, task, 0, scan_one, &s);
        if (r < 0) {
                free(s.threads);
                return r == -ENOTDIR ? -ENOENT : r;
        }
        qsort_safe(s.threads, s.n, sizeof(*s.threads), vcpu_thread_cmp);
        *ret = s.threads;
        *ret_n = s.n;
        return 0;
}

int vcpu_thread_set(RootFs *root, pid_t qemu, const VcpuThread *t, int policy, int priority) {
        int now_policy, now_priority, r;
        char task[32];
        ProcStat st;

        snprintf(task, sizeof(task), "/proc/%d/task", (int) qemu);
        r = proc_thread_stat(root, task, t->tid, &st);
        if (r < 0)
                return r;
        if (qemu_vcpu_name_parse(st.comm) != (int) t->vcpu || (st.flags & PF_KTHREAD))
                return -ESRCH;
        r = sched_thread_get(t->tid, &now_policy, &now_priority);
        if (r < 0)
                return r;
        return sched_thread_change(t->tid, NULL, now_policy, now_priority, NULL, policy, priority);
}
