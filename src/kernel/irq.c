/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq.c — /proc/irq affinities and the irq/N- handler threads */

#include <ctype.h>
#include <sched.h>
#include <string.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"

int irq_read_effective(RootFs *root, unsigned irq, CpuSet *ret) {
        char eff[CPUSET_LIST_MAX];
        int r;

        r = rootfs_read_attr(root, eff, sizeof(eff), "/proc/irq/%u/effective_affinity_list", irq);
        if (r < 0)
                return r;
        return cpuset_parse_list(eff, ret);
}

int irq_read(RootFs *root, unsigned irq, Irq *ret) {
        _cleanup_free_ char *list = NULL;
        Irq q = { .irq = irq };
        struct stat st;
        int r;

        r = rootfs_read_stat(root, &list, &st, "/proc/irq/%u/smp_affinity_list", irq);
        if (r < 0)
                return r;
        /* Kernel-managed vectors have read-only files with mode 0444. The mode is checked
         * because root could still open them for writing. */
        q.writable = (st.st_mode & 0222) != 0;
        r = cpuset_parse_list(list, &q.affinity);
        if (r < 0)
                return r;
        q.has_effective = irq_read_effective(root, irq, &q.effective) >= 0;

        *ret = q;
        return 0;
}

int irq_set_affinity(RootFs *root, unsigned irq, const CpuSet *cpus) {
        char buf[CPUSET_LIST_MAX];
        int r;

        /* There is no read first, because the plan read the value a moment ago and the verify step reads it again. */
        r = rootfs_write(root, cpuset_format_list(cpus, buf, sizeof(buf)), "/proc/irq/%u/smp_affinity_list", irq);
        return r < 0 ? r : 1;
}

int irq_list(RootFs *root, unsigned **ret, size_t *ret_n) {
        return rootfs_list_numbers(root, ret, ret_n, "/proc/irq");
}

int irq_read_action(RootFs *root, unsigned irq, char *buf, size_t size) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        buf[0] = 0;
        r = rootfs_opendir(root, &d, "/proc/irq/%u", irq);
        if (r < 0)
                return r;
        /* Every handler registered on the IRQ has a directory named after it. The files are settings, not handlers. */
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                        strscpy(buf, size, de->d_name);
                        break;
                }
        return 0;
}

int irq_read_default_affinity(RootFs *root, CpuSet *ret) {
        _cleanup_free_ char *mask = NULL;
        int r;

        r = rootfs_read(root, &mask, "/proc/irq/default_smp_affinity");
        if (r < 0)
                return r;
        return cpuset_parse_mask(mask, ret);
}

int irq_set_default_affinity(RootFs *root, const CpuSet *cpus) {
        char buf[CPUSET_LIST_MAX];
        CpuSet now;
        int r;

        r = irq_read_default_affinity(root, &now);
        if (r >= 0 && cpuset_equal(&now, cpus))
                return 0;
        /* The file takes only a mask. It has no list form. */
        r = rootfs_write(root, cpuset_format_mask(cpus, buf, sizeof(buf)), "/proc/irq/default_smp_affinity");
        return r < 0 ? r : 1;
}

static int irq_thread_cmp(const void *a, const void *b) {
        const IrqThread *x = a, *y = b;
        if (x->irq != y->irq)
                return (x->irq > y->irq) - (x->irq < y->irq);
        return (x->pid > y->pid) - (x->pid < y->pid);
}

static int kthread_cmp(const void *a, const void *b) {
        const Kthread *x = a, *y = b;
        if (x->kind != y->kind)
                return (x->kind > y->kind) - (x->kind < y->kind);
        if (x->num != y->num)
                return (x->num > y->num) - (x->num < y->num);
        return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Fills *k for a napi/, ksoftirqd/, ktimers/ or rcuc/ kernel thread.
 * Returns false for any other thread and for a thread that exited meanwhile. */
static bool kthread_from_stat(RootFs *root, const ProcStat *st, Kthread *k) {
        *k = (Kthread) { .pid = st->pid, .policy = (int) st->policy, .priority = (int) st->rt_priority };
        if (kthread_name_parse(st->comm, &k->kind, &k->num, k->netdev) < 0)
                return false;
        strscpy(k->name, sizeof(k->name), st->comm);
        if (rootfs_sched_live(root) && sched_thread_get(st->pid, &k->policy, &k->priority) < 0)
                return false;
        /* The kernel binds the per-CPU threads. Only a NAPI thread's CPUs are for sriovd to set. */
        if (k->kind == KTHREAD_NAPI && sched_thread_cpus_get(root, st->pid, &k->cpus) < 0)
                return false;
        return true;
}

int irq_threads_scan(RootFs *root, IrqThread **ret, size_t *ret_n, Kthread **ret_kthreads, size_t *ret_n_kthreads,
                     bool *ret_irqbalance) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ IrqThread *threads = NULL;
        _cleanup_free_ Kthread *kthreads = NULL;
        size_t n = 0, allocated = 0, n_k = 0, allocated_k = 0;
        bool irqbalance = false;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, "/proc");
        if (r < 0)
                return r;

        while ((de = readdir(d))) {
                char buf[PROC_STAT_MAX];
                ProcStat st;
                Kthread k;
                int irq;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                /* Processes come and go during the walk, so a vanished one is not an error. */
                if (rootfs_read_attr(root, buf, sizeof(buf), "/proc/%s/stat", de->d_name) < 0)
                        continue;
                if (proc_stat_parse(buf, &st) < 0)
                        continue;
                if (!(st.flags & PF_KTHREAD)) {
                        if (streq(st.comm, "irqbalance"))
                                irqbalance = true;
                        continue;   /* a user-space process can name itself irq/N-x */
                }
                irq = irq_thread_name_parse(st.comm);
                if (irq < 0) {
                        if (!kthread_from_stat(root, &st, &k))
                                continue;
                        if (GREEDY_REALLOC(kthreads, allocated_k, n_k + 1) < 0)
                                return -ENOMEM;
                        kthreads[n_k++] = k;
                        continue;
                }

                if (GREEDY_REALLOC(threads, allocated, n + 1) < 0)
                        return -ENOMEM;
                threads[n++] = (IrqThread) {
                        .irq = (unsigned) irq,
                        .pid = st.pid,
                        .policy = (int) st.policy,
                        .priority = (int) st.rt_priority,
                };
                /* Where the PIDs are live, the scheduler is the authority rather than a file. */
                if (rootfs_sched_live(root) &&
                    sched_thread_get(st.pid, &threads[n - 1].policy, &threads[n - 1].priority) < 0)
                        n--;   /* the thread exited meanwhile */
        }

        qsort_safe(threads, n, sizeof(*threads), irq_thread_cmp);
        qsort_safe(kthreads, n_k, sizeof(*kthreads), kthread_cmp);
        *ret = TAKE_PTR(threads);
        *ret_n = n;
        *ret_kthreads = TAKE_PTR(kthreads);
        *ret_n_kthreads = n_k;
        *ret_irqbalance = irqbalance;
        return 0;
}
