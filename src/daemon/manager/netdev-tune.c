/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-tune.c — the netdev settings that the classes govern, read before planning */

/*
 * For each netdev, this reads the coalescing, the offloads, the channels and the NAPIs. Each
 * NAPI's record says whether it is threaded, and pairs it with its IRQ and its thread. Only
 * what some class wants is read, so a host of idle NICs costs no netlink round trip.
 */

#include <sched.h>

#include "sriovd/core/napi-pair.h"
#include "sriovd/kernel/ethtool.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/napi.h"
#include "sriovd/kernel/netdev-genl.h"
#include "base/log.h"
#include "netdev-tune.h"

/*
 * saved_napi means that sriovd raised some napi/ thread earlier. A netdev whose class no longer
 * asks for NAPI settings is then read too, so that its threads can be put back.
 */
static bool wants_napi(const TenantClass *cls, bool saved_napi) {
        return saved_napi || (cls && cls->napi_threads != TRISTATE_LEAVE) || tenant_class_wants_napi_params(cls);
}

static bool any_saved_napi(const SavedSchedTable *saved) {
        for (size_t i = 0; i < saved->n; i++)
                if (strncmp(saved->items[i].name, "napi/", 5) == 0)
                        return true;
        return false;
}

static int napi_id_cmp(const void *a, const void *b) {
        unsigned x = ((const Napi *) a)->id, y = ((const Napi *) b)->id;
        return (x > y) - (x < y);
}

static void napi_take_thread(Napi *n, const Kthread *k) {
        n->thread = k->pid;
        strscpy(n->thread_name, sizeof(n->thread_name), k->name);
        n->thread_policy = k->policy;
        n->thread_priority = k->priority;
        n->thread_cpus = k->cpus;
}

static bool irq_in(const unsigned *irqs, size_t n, unsigned irq) {
        return bsearch_safe(&irq, irqs, n, sizeof(unsigned), unsigned_cmp) != NULL;
}

/* Linux 6.8 and later list each NAPI with its IRQ and, when it is threaded, its thread's PID. */
static int napis_from_kernel(Kernel *k, const Inventory *inv, int ifindex, const unsigned *irqs, size_t n_irqs,
                             NetdevNapi *ret) {
        _cleanup_free_ NapiInfo *info = NULL;
        size_t n = 0;
        NlError err;
        int r;

        if (!k->netdev)
                return -EOPNOTSUPP;
        r = netdev_nl_napi_list(k->netdev, ifindex, &info, &n, &err);
        if (r < 0)
                return r;
        ret->napis = calloc(n ?: 1, sizeof(Napi));
        if (!ret->napis)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                Napi *x = &ret->napis[ret->n_napis++];
                const Kthread *t = inventory_find_kthread(inv, KTHREAD_NAPI, info[i].id);

                /* An IRQ that is not one of the function's vectors is not trusted. Queue order pairs it. */
                *x = (Napi) { .id = info[i].id, .irq = irq_in(irqs, n_irqs, info[i].irq) ? info[i].irq : 0,
                              .params = info[i].params };
                /*
                 * The walk over /proc found the thread, and its PID must agree with the kernel's.
                 * A thread that restarted in the meantime has a new PID.
                 */
                if (t && (info[i].pid <= 0 || t->pid == info[i].pid))
                        napi_take_thread(x, t);
        }
        /* The kernel's pairing counts only when it named every NAPI's IRQ. igb and igbvf name none. */
        ret->pairing = ret->n_napis > 0 ? NAPI_PAIRED_KERNEL : NAPI_PAIRED_NONE;
        for (size_t i = 0; i < ret->n_napis; i++)
                if (ret->napis[i].irq == 0)
                        ret->pairing = NAPI_PAIRED_NONE;
        ret->have_napi_set = netdev_nl_has_napi_set(k->netdev);
        return 0;
}

/* Before Linux 6.8, the NAPI threads are found by their names, and so are their NAPI ids. */
static int napis_from_threads(const Inventory *inv, const char *netdev, NetdevNapi *ret) {
        size_t n = 0;

        for (size_t i = 0; i < inv->n_kthreads; i++)
                n += inv->kthreads[i].kind == KTHREAD_NAPI && streq(inv->kthreads[i].netdev, netdev);
        ret->napis = calloc(n ?: 1, sizeof(Napi));
        if (!ret->napis)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_kthreads; i++) {
                const Kthread *k = &inv->kthreads[i];
                Napi *x;

                if (k->kind != KTHREAD_NAPI || !streq(k->netdev, netdev))
                        continue;
                x = &ret->napis[ret->n_napis++];
                *x = (Napi) { .id = k->num, .params = NAPI_PARAMS_NONE };
                napi_take_thread(x, k);
        }
        qsort_safe(ret->napis, ret->n_napis, sizeof(Napi), napi_id_cmp);
        return 0;
}

/* Where the kernel did not name the IRQs, pair the NAPIs with the queue vectors by their handlers' names. */
static int napis_pair_by_queues(RootFs *root, const char *netdev, const unsigned *irqs, size_t n_irqs,
                                NetdevNapi *napi) {
        _cleanup_free_ QueueIrq *q = NULL;
        size_t n = 0;

        if (napi->n_napis == 0 || napi->pairing == NAPI_PAIRED_KERNEL)
                return 0;
        q = calloc(n_irqs ?: 1, sizeof(QueueIrq));
        if (!q)
                return -ENOMEM;
        for (size_t i = 0; i < n_irqs; i++) {
                char action[64];
                bool tx_only;
                int queue;

                if (irq_read_action(root, irqs[i], action, sizeof(action)) < 0)
                        continue;
                queue = irq_queue_index(action, netdev, &tx_only);
                if (queue >= 0)
                        q[n++] = (QueueIrq) { .irq = irqs[i], .queue = queue, .tx_only = tx_only };
        }
        if (napi_pair_by_queues(napi->napis, napi->n_napis, q, n) > 0)
                napi->pairing = NAPI_PAIRED_QUEUES;
        return 0;
}

static void read_napi(Kernel *k, const Inventory *inv, const char *netdev, int ifindex, const unsigned *irqs,
                      size_t n_irqs, NetdevTune *t) {
        NetdevNapi *napi = &t->napi;
        int r;

        netdev_tune_done(t);
        *napi = (NetdevNapi) { .threaded = -1 };
        if (!netdev[0])
                return;
        r = netdev_threaded_read(k->root, netdev, &napi->threaded);
        if (r < 0 && r != -ENOENT)
                log_full_errno(LOG_DEBUG, r, LOG_FIELDS(), "Failed to read %s's threaded NAPI, ignoring: %m", netdev);
        if (r < 0)
                napi->threaded = -1;

        r = napis_from_kernel(k, inv, ifindex, irqs, n_irqs, napi);
        if (r < 0 && r != -ENOMEM) {
                netdev_tune_done(t);
                napi->pairing = NAPI_PAIRED_NONE;
                napi->have_napi_set = false;
                r = napis_from_threads(inv, netdev, napi);
        }
        if (r >= 0)
                r = napis_pair_by_queues(k->root, netdev, irqs, n_irqs, napi);
        if (r < 0) {
                log_oom();
                return;
        }
        t->napi_known = true;
}

static void read_tune(Kernel *k, const Inventory *inv, const TenantClass *cls, bool saved_napi, const char *netdev,
                      int ifindex, const unsigned *irqs, size_t n_irqs, NetdevTune *t) {
        NlError err;

        if (k->ethtool) {
                t->coalesce_error = ethtool_coalesce_get(k->ethtool, ifindex, &t->coalesce, &err);
                t->features_error = ethtool_features_get(k->ethtool, ifindex, &t->features, &err);
                t->channels_error = tenant_class_wants_channels(cls)
                                            ? ethtool_channels_get(k->ethtool, ifindex, &t->channels, &err)
                                            : -ENODATA;
                t->known = true;
        }
        /* sysfs and /proc answer under a fixture root too. Netlink's napi-get answers only on the live host. */
        if (wants_napi(cls, saved_napi))
                read_napi(k, inv, netdev, ifindex, irqs, n_irqs, t);
}

static int allocation_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const PlanAllocation *) elem)->vf);
}

static const TenantClass *vf_class(const Config *c, const PlanAllocation *allocations, size_t n_allocations,
                                   const Vf *vf, const TenantClass *pf_cls) {
        const PlanAllocation *a = bsearch_safe(vf->addr, allocations, n_allocations, sizeof(PlanAllocation),
                                               allocation_cmp);
        return a && a->class_name[0] ? config_find_class(c, a->class_name) : pf_cls;
}

void netdev_tune_read(Kernel *k, const Config *c, const SavedSchedTable *saved, const PlanAllocation *allocations,
                      size_t n_allocations, Inventory *inv) {
        bool saved_napi = any_saved_napi(saved);

        for (size_t i = 0; i < inv->n_pfs; i++) {
                Pf *pf = &inv->pfs[i];
                const PfPolicy *pol = config_pf_policy(c, pf->addr, pf->vendor, pf->device);
                const TenantClass *cls = pol && pol->class_name[0] ? config_find_class(c, pol->class_name) : NULL;

                if (pf->ifindex > 0 && (cls || saved_napi))
                        read_tune(k, inv, cls, saved_napi, pf->n_netdevs > 0 ? pf->netdevs[0] : "", pf->ifindex, pf->irqs,
                                  pf->n_irqs, &pf->tune);
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        Vf *vf = &pf->vfs[j];
                        const TenantClass *vcls = vf_class(c, allocations, n_allocations, vf, cls);

                        if (vf->ifindex > 0 && (vcls || saved_napi))
                                read_tune(k, inv, vcls, saved_napi, vf->netdev, vf->ifindex, vf->irqs, vf->n_irqs, &vf->tune);
                }
        }
}
