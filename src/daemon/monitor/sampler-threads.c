/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-threads.c — the CPU share of IRQ, NAPI and ksoftirqd threads, read through kept stat files */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "sriovd/kernel/proc-counters.h"
#include "sampler-internal.h"

void thread_slots_free(ThreadSlot *t, size_t n, size_t *n_fds) {
        for (size_t i = 0; i < n; i++)
                if (t[i].fd >= 0) {
                        close(t[i].fd);
                        (*n_fds)--;
                }
        free(t);
}

static int slot_cmp(const void *a, const void *b) {
        const ThreadSlot *x = a, *y = b;
        return (x->times.tid > y->times.tid) - (x->times.tid < y->times.tid);
}

/*
 * Read one thread's times. Use last period's fd when there is one, and take it out of prev.
 * The fds left in the old slots at the end are closed. Without an fd, open the path, and keep
 * the new fd while the budget lasts.
 */
static int thread_read(Sampler *s, pid_t pid, ThreadSlot *prev, ThreadSlot *ret) {
        int fd = -EBADF, r;

        if (prev && prev->fd >= 0) {
                fd = TAKE_FD(prev->fd);
                r = proc_thread_times_reread(fd, pid, pid, &ret->times);
                if (r >= 0) {
                        ret->fd = fd;
                        return 0;
                }
                /*
                 * The thread exited, with ESRCH. Its TID may be another thread's now, and only the
                 * path finds that one.
                 */
                close(fd);
                s->n_fds--;
        }
        if (s->n_fds >= s->fd_budget) {
                ret->fd = -EBADF;
                return proc_thread_times_read(s->root, pid, pid, &ret->times);
        }
        fd = proc_thread_times_open(s->root, pid, pid);
        if (fd < 0)
                return fd;
        r = proc_thread_times_reread(fd, pid, pid, &ret->times);
        if (r < 0) {
                close(fd);
                return r;
        }
        ret->fd = fd;
        s->n_fds++;
        return 0;
}

/* One thread's share of a CPU since the last period, or NaN when it is new. The thread is appended to *now. */
static int thread_share(Sampler *s, pid_t pid, uint64_t elapsed, ThreadSlot **now, size_t *n_now,
                        size_t *allocated, double *ret) {
        ThreadSlot cur, key = { .times.tid = pid };
        ThreadSlot *prev;
        int r;

        if (GREEDY_REALLOC(*now, *allocated, *n_now + 1) < 0)
                return -ENOMEM;
        prev = bsearch_safe(&key, s->threads, s->n_threads, sizeof(*s->threads), slot_cmp);
        r = thread_read(s, pid, prev, &cur);
        if (r < 0)
                return r;
        (*now)[(*n_now)++] = cur;

        *ret = NAN;
        if (prev && elapsed > 0)
                (void) thread_times_cpu_share(&prev->times, &cur.times, elapsed, s->ticks_per_sec, ret);
        return 0;
}

/*
 * Threaded NAPI: the receive work of the NAPI this IRQ schedules runs in its napi/ thread
 * instead of in softirq context. So the napi/ thread's time is part of the tenant's cost per
 * packet, next to the IRQ thread's time. A NAPI that is not paired with an IRQ has no owner
 * here and is not sampled.
 */
static int sample_napi_threads(Sampler *s, MetricSnapshot *snap, const IrqOwner *o, uint64_t elapsed,
                               ThreadSlot **now, size_t *n_now, size_t *allocated) {
        const NetdevTune *t = o->vf ? &o->vf->tune : &o->pf->tune;
        int r;

        for (size_t k = 0; t->napi_known && k < t->napi.n_napis; k++) {
                const Napi *n = &t->napi.napis[k];
                Labels ls = {};
                double v;

                if (n->irq != o->irq || n->thread <= 0)
                        continue;
                r = thread_share(s, n->thread, elapsed, now, n_now, allocated, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;   /* The thread exited after the inventory was read. */
                irq_owner_labels(&ls, o);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) n->thread);
                r = sampler_add(snap, "sriovd_napi_thread_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

int sampler_threads(Sampler *s, MetricSnapshot *snap, const Inventory *inv, const IrqOwner *owners,
                          size_t n_owners, const CpuSet *rt, uint64_t elapsed) {
        ThreadSlot *now = NULL;
        size_t n_now = 0, allocated = 0;
        int r;

        for (size_t i = 0; i < n_owners; i++) {
                Labels ls = {};
                double v;

                /*
                 * Read the IRQ threads on the RT CPUs, and an RT tenant's threads wherever its IRQs
                 * are. The other threads run on housekeeping CPUs, and the irq and softirq time in
                 * /proc/stat already shows their load. On the large host, the threads read are
                 * 1,564 of 4,168. Each read is an open, an fstat, a read and a close. Reading every
                 * thread took 23 of the 27 ms that a period took.
                 */
                if (!(owners[i].rt || owners[i].on_rt))
                        continue;
                r = sample_napi_threads(s, snap, &owners[i], elapsed, &now, &n_now, &allocated);
                if (r < 0)
                        goto fail;
                if (owners[i].thread <= 0)
                        continue;
                r = thread_share(s, owners[i].thread, elapsed, &now, &n_now, &allocated, &v);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        continue;   /* The thread exited after the inventory was read. */
                irq_owner_labels(&ls, &owners[i]);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) owners[i].thread);
                r = sampler_add(snap, "sriovd_irq_thread_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        goto fail;
        }

        /* Each RT CPU's ksoftirqd, as the inventory's walk over /proc found it. */
        for (unsigned c = 0; inv && c < CPUSET_MAX; c++) {
                const Kthread *k = cpuset_has(rt, c) ? inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, c) : NULL;
                Labels ls = {};
                double v;

                if (!k)
                        continue;
                r = thread_share(s, k->pid, elapsed, &now, &n_now, &allocated, &v);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        continue;   /* The CPU went offline. The next inventory finds its new ksoftirqd. */
                label_u(&ls, METRIC_LABEL_CPU, c);
                label_u(&ls, METRIC_LABEL_THREAD, (unsigned long) k->pid);
                r = sampler_add(snap, "sriovd_ksoftirqd_cpu_ratio", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        goto fail;
        }

        /* Threads not read this period give their fds back. They are gone, or off the RT CPUs now. */
        qsort_safe(now, n_now, sizeof(*now), slot_cmp);
        thread_slots_free(s->threads, s->n_threads, &s->n_fds);
        s->threads = TAKE_PTR(now);
        s->n_threads = n_now;
        return 0;

fail:
        /* The fds taken from last period's slots are in now, so close them there. The old slots keep the rest. */
        thread_slots_free(now, n_now, &s->n_fds);
        return r;
}
