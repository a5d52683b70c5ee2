/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* latency-threads.c — which threads the RT tenants wait on */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/vhost.h"
#include "sriovd/shared/util.h"
#include "latency-threads.h"

void latency_threads_done(LatencyThreads *t) {
        for (size_t i = 0; i < t->n_qemus; i++) {
                free(t->qemus[i].vcpus);
                free(t->qemus[i].vhosts);
        }
        free(t->qemus);
        free(t->threads);
        *t = (LatencyThreads) {};
}

static int thread_add(LatencyThreads *t, pid_t tid, const char *kind, const TenantInfo *tenant) {
        LatencyThread *n;

        if (tid <= 0)
                return 0;
        if (GREEDY_REALLOC(t->threads, t->allocated, t->n_threads + 1) < 0)
                return -ENOMEM;
        n = &t->threads[t->n_threads++];
        *n = (LatencyThread) { .tid = tid, .kind = kind };
        if (tenant) {
                strscpy(n->tenant, sizeof(n->tenant), tenant->tenant);
                strscpy(n->class_name, sizeof(n->class_name), tenant->class_name);
        }
        return 0;
}

/* The QEMU's threads, from the cache or read now. NULL when it cannot be read, as when it exited. */
static LatencyQemu *qemu_threads(LatencyThreads *t, const LatencySources *src, pid_t qemu) {
        _cleanup_free_ VcpuThread *vcpus = NULL;
        _cleanup_free_ VhostThread *vhosts = NULL;
        size_t n_vcpus = 0, n_vhosts = 0;
        LatencyQemu *q = NULL, *grown;

        for (size_t i = 0; i < t->n_qemus; i++)
                if (t->qemus[i].qemu == qemu)
                        q = &t->qemus[i];
        /* A full read of the host happens at least every minute, and it catches a vCPU hotplug too. */
        if (q && q->full_read == src->full_read) {
                q->used = true;
                return q;
        }
        if (vcpu_threads_scan(src->root, qemu, &vcpus, &n_vcpus) < 0)
                return NULL;
        if (vhost_threads_scan(src->root, qemu, &vhosts, &n_vhosts) < 0)
                n_vhosts = 0;
        if (!q) {
                grown = reallocarray(t->qemus, t->n_qemus + 1, sizeof(*t->qemus));
                if (!grown)
                        return NULL;
                t->qemus = grown;
                q = &t->qemus[t->n_qemus++];
                *q = (LatencyQemu) { .qemu = qemu };
        }
        free(q->vcpus);
        free(q->vhosts);
        q->vcpus = calloc(MAX(n_vcpus ? vcpus[n_vcpus - 1].vcpu + 1 : 0, 1u), sizeof(pid_t));
        q->vhosts = calloc(MAX(n_vhosts, (size_t) 1), sizeof(pid_t));
        q->n_vcpus = q->n_vhosts = 0;
        if (!q->vcpus || !q->vhosts)
                return NULL;
        /* vcpu_threads_scan() sorts by vCPU, so the last one is the highest. */
        for (size_t i = 0; i < n_vcpus; i++)
                q->vcpus[vcpus[i].vcpu] = vcpus[i].tid;
        q->n_vcpus = n_vcpus ? vcpus[n_vcpus - 1].vcpu + 1 : 0;
        for (size_t i = 0; i < n_vhosts; i++)
                q->vhosts[q->n_vhosts++] = vhosts[i].tid;
        q->full_read = src->full_read;
        q->used = true;
        return q;
}

/* The guest's vCPU threads that the class puts on RT CPUs, or all of them when it books none, and its vhost workers. */
static int add_guest(LatencyThreads *t, const LatencySources *src, const TenantInfo *ti, const TenantClass *cls) {
        pid_t qemu = src->guests ? guests_qemu_pid(src->guests, tenant_domain_ref(ti)) : 0;
        LatencyQemu *q = qemu > 0 ? qemu_threads(t, src, qemu) : NULL;
        unsigned n_rt = tenant_class_rt_cpus(cls);
        int r;

        if (!q)
                return 0;
        for (size_t v = 0; v < q->n_vcpus && (n_rt == 0 || v < n_rt); v++) {
                r = thread_add(t, q->vcpus[v], "vcpu", ti);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; streq_ptr(ti->kind, "virtio") && k < q->n_vhosts; k++) {
                r = thread_add(t, q->vhosts[k], "vhost", ti);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The VF's IRQ threads and the napi/ threads of its host netdev. */
static int add_vf(LatencyThreads *t, const Inventory *inv, const TenantInfo *ti) {
        const Vf *vf = NULL;
        int r;

        if (!ti->vf[0] || !inventory_find_function(inv, ti->vf, &vf) || !vf)
                return 0;
        for (size_t k = 0; k < vf->n_irqs; k++) {
                const Irq *q = inventory_find_irq(inv, vf->irqs[k]);

                r = thread_add(t, q ? q->thread : 0, "irq", ti);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; vf->tune.napi_known && k < vf->tune.napi.n_napis; k++) {
                r = thread_add(t, vf->tune.napi.napis[k].thread, "napi", ti);
                if (r < 0)
                        return r;
        }
        /* Without netdev genl, the napi/ threads are known by the netdev in their names. */
        for (size_t k = 0; vf->netdev[0] && !vf->tune.napi_known && k < inv->n_kthreads; k++) {
                const Kthread *kt = &inv->kthreads[k];

                if (kt->kind == KTHREAD_NAPI && streq(kt->netdev, vf->netdev)) {
                        r = thread_add(t, kt->pid, "napi", ti);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int latency_threads_list(LatencyThreads *t, const LatencySources *src) {
        const Inventory *inv = src->inv;
        size_t n = src->tenants ? tenants_count(src->tenants) : 0;
        HostCpus cpus = {};
        int r;

        t->n_threads = 0;
        if (!inv || !src->config)
                return 0;
        for (size_t i = 0; i < t->n_qemus; i++)
                t->qemus[i].used = false;
        for (size_t i = 0; i < n; i++) {
                const TenantClass *cls;
                TenantInfo ti;

                if (tenants_nth(src->tenants, inv, i, &ti) < 0)
                        continue;
                cls = config_find_class(src->config, ti.class_name);
                if (!tenant_class_is_rt(cls))
                        continue;
                r = add_vf(t, inv, &ti);
                if (r >= 0)
                        r = add_guest(t, src, &ti, cls);
                if (r < 0)
                        return r;
        }
        /* A ksoftirqd runs the softirqs its RT CPU's IRQ threads left over, for every RT tenant there. */
        host_cpus(inv, src->config, &cpus);
        for (unsigned c = 0; c < CPUSET_MAX; c++) {
                const Kthread *k = cpuset_has(&cpus.rt, c) ? inventory_find_kthread(inv, KTHREAD_KSOFTIRQD, c) : NULL;

                if (k) {
                        r = thread_add(t, k->pid, "ksoftirqd", NULL);
                        if (r < 0)
                                return r;
                }
        }
        /* The QEMUs no tenant's guest runs in any more are forgotten. */
        for (size_t i = 0; i < t->n_qemus;) {
                LatencyQemu *q = &t->qemus[i];

                if (q->used) {
                        i++;
                        continue;
                }
                free(q->vcpus);
                free(q->vhosts);
                *q = t->qemus[--t->n_qemus];
        }
        return 0;
}
