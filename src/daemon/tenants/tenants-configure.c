/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants-configure.c — the tenants placed again under a new policy or VF pool, with orphans kept */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "state/state.h"
#include "tenants-internal.h"

static uint32_t pf_generation(const Tenants *t, const char *pf) {
        for (size_t i = 0; i < t->n_gens; i++)
                if (streq(t->gens[i].pf, pf))
                        return t->gens[i].generation;
        return 0;
}

void tenants_vfs_recreated(Tenants *t, const char *pf) {
        for (size_t i = 0; i < t->n_gens; i++)
                if (streq(t->gens[i].pf, pf)) {
                        t->gens[i].generation++;
                        return;
                }
        if (GREEDY_REALLOC(t->gens, t->allocated_gens, t->n_gens + 1) < 0)
                return;   /* The pool check places the holders again instead. */
        t->gens[t->n_gens] = (PfGeneration) { .generation = 1 };
        strscpy(t->gens[t->n_gens++].pf, PCI_ADDR_MAX, pf);
}

static bool state_holds_vf(const StateTenant *tenants, size_t n, const char *vf) {
        for (size_t i = 0; i < n; i++)
                if (tenants[i].kind == STATE_KIND_VF && streq(tenants[i].vf, vf))
                        return true;
        return false;
}

/* Sort by address, then by PF. Of a VF claimed twice, the one under the lower PF is kept. */
static int alloc_vf_cmp(const void *a, const void *b) {
        const AllocVf *x = a, *y = b;
        return strcmp(x->addr, y->addr) ?: strcmp(x->pf, y->pf);
}

/* Whether a tenant holds vf, in the allocator in force or among the tenants about to be placed in known. */
static bool vf_held(const Tenants *t, const State *known, const char *vf) {
        return (t->alloc && allocator_vf_holder(t->alloc, vf)) ||
               (known && state_holds_vf(known->tenants, known->n, vf));
}

/*
 * Build the VF pool, less what the allocator cannot hold: a VF claimed by two PFs, or a VF on a
 * NUMA node past ALLOC_NODES_MAX. Such functions are left out, and reported when their number
 * changes. The rest of the host is still served. The VF that an orphan was saved on is held
 * back, because it is that tenant's until it is released.
 */
static int pool_from_inventory(Tenants *t, const StateTenant *orphans, size_t n_orphans, const State *known,
                               const Inventory *inv, AllocVf **ret, size_t *ret_n) {
        char first[256] = "";
        size_t n = 0, k = 0, out = 0;
        AllocVf *vfs;

        for (size_t i = 0; i < inv->n_pfs; i++)
                n += inv->pfs[i].n_vfs;
        vfs = calloc(n ?: 1, sizeof(AllocVf));
        if (!vfs)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        AllocVf *v = &vfs[k];
                        *v = (AllocVf) {
                                .numa_node = pf->numa_node,
                                /*
                                 * A VF that a driver holds is a working function. An unbound VF is
                                 * not working yet, unless a tenant holds it already. libvirt
                                 * unbinds a managed hostdev on its way between vfio-pci and the
                                 * host driver at every stop and start of the guest. That must
                                 * move no tenant.
                                 */
                                .healthy = pf->vfs[j].driver[0] != 0 || pf->drivers_autoprobe == 0 ||
                                           vf_held(t, known, pf->vfs[j].addr),
                                .reserved = state_holds_vf(orphans, n_orphans, pf->vfs[j].addr),
                                .in_guest = tenants_vf_in_guest(t, pf->vfs[j].addr),
                                .generation = pf_generation(t, pf->addr),
                        };
                        strscpy(v->addr, sizeof(v->addr), pf->vfs[j].addr);
                        strscpy(v->pf, sizeof(v->pf), pf->addr);
                        if (!pci_addr_valid(v->addr) || !pci_addr_valid(v->pf) || v->numa_node < -1 ||
                            v->numa_node >= ALLOC_NODES_MAX) {
                                if (out++ == 0)
                                        snprintf(first, sizeof(first), "VF %s of PF %s on NUMA node %d", v->addr,
                                                 v->pf, v->numa_node);
                                continue;
                        }
                        k++;
                }
        }
        qsort_safe(vfs, k, sizeof(AllocVf), alloc_vf_cmp);
        n = k;
        k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k > 0 && streq(vfs[k - 1].addr, vfs[i].addr)) {
                        if (out++ == 0)
                                snprintf(first, sizeof(first), "VF %s listed under PF %s and PF %s", vfs[i].addr,
                                         vfs[k - 1].pf, vfs[i].pf);
                        continue;
                }
                vfs[k++] = vfs[i];
        }
        if (out != t->n_left_out && out > 0)
                tenants_problem(t, -EINVAL, NULL, "%zu VF%s cannot be handed out and %s left out of the pool (first: %s)",
                        out, out == 1 ? "" : "s", out == 1 ? "is" : "are", first);
        t->n_left_out = out;
        *ret = vfs;
        *ret_n = k;
        return 0;
}

/*
 * The RT CPUs that guests may book, with their nodes. They are the host's RT CPUs: those that
 * the config names, or else the isolated CPUs.
 */
static int rt_pool(const Config *cfg, const Inventory *inv, Allocator *a, AllocDecisions *d) {
        _cleanup_free_ AllocRtCpu *cpus = NULL;
        HostCpus hc;
        size_t n = 0;

        host_cpus(inv, cfg, &hc);
        cpus = calloc(cpuset_count(&hc.rt) ?: 1, sizeof(AllocRtCpu));
        if (!cpus)
                return -ENOMEM;
        for (unsigned c = 0; c < ALLOC_RT_POOL_MAX; c++) {
                if (!cpuset_has(&hc.rt, c))
                        continue;
                cpus[n] = (AllocRtCpu) { .cpu = c, .numa_node = -1 };
                for (unsigned node = 0; node < inv->topo.n_nodes && node < ALLOC_NODES_MAX; node++)
                        if (cpuset_has(&inv->topo.node_cpus[node], c))
                                cpus[n].numa_node = (int) node;
                n++;
        }
        return allocator_set_rt_cpus(a, cpus, n, d);
}

static int class_table(const Config *cfg, AllocClass **ret) {
        AllocClass *c = calloc(cfg->n_classes ?: 1, sizeof(AllocClass));

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_classes; i++) {
                strscpy(c[i].name, sizeof(c[i].name), cfg->classes[i].name);
                c[i].vnic = cfg->classes[i].vnic;
                c[i].rank = cfg->classes[i].rank;
                c[i].allow_remote_numa = cfg->classes[i].allow_remote_numa;
                c[i].rt_cpus = tenant_class_rt_cpus(&cfg->classes[i]);
                c[i].rt_share = cfg->classes[i].rt_cpu_share;
                c[i].rt_fallback = cfg->classes[i].rt_cpu_fallback;
        }
        *ret = c;
        return 0;
}

static int state_tenant_cmp(const void *a, const void *b) {
        return strcmp(((const StateTenant *) a)->tenant, ((const StateTenant *) b)->tenant);
}

static int orphan_add(StateTenant **orphans, size_t *n_orphans, const StateTenant *st) {
        StateTenant *o = reallocarray(*orphans, *n_orphans + 1, sizeof(StateTenant));

        if (!o)
                return -ENOMEM;
        *orphans = o;
        o[(*n_orphans)++] = *st;
        return 0;
}

/* A tenant that the allocator cannot hold is kept as saved and written back, never dropped. error says why. */
static int place_orphan(Tenants *t, Allocator *a, const StateTenant *st, int error, StateTenant **orphans,
                        size_t *n_orphans) {
        if (orphan_add(orphans, n_orphans, st) < 0)
                return -ENOMEM;
        allocator_reserve_seq(a, st->seq);
        if (error == -ENOENT)
                tenants_problem(t, error, st->tenant, "tenant %s's class %s is not defined any more; kept as it was saved "
                        "(%s %s), not managed until the class is back", st->tenant, st->class_name,
                        state_kind_to_string(st->kind), st->vf);
        else
                tenants_problem(t, error, st->tenant, "tenant %s cannot be placed as saved (%s); kept as it was saved (%s %s), "
                        "not managed", st->tenant, strerror(-error), state_kind_to_string(st->kind), st->vf);
        return 0;
}

/*
 * Restore one known tenant in the new allocator, as it was. The saved placement may no longer
 * hold, because its VF is gone or its class is of another kind. Then the reconcile after the
 * last tenant places it again, so that no tenant takes another's VF first. A tenant that the
 * allocator cannot hold is kept as saved, as an orphan that is written back, never dropped.
 */
static int place(Tenants *t, Allocator *a, const StateTenant *st, StateTenant **orphans, size_t *n_orphans) {
        AllocTenant at = {
                .id = st->tenant,
                .class_name = st->class_name,
                .numa_node = st->numa_node,
                .nic = tenants_alloc_nic_of(st->kind),
                .vf = st->kind == STATE_KIND_VF ? st->vf : NULL,
                .seq = st->seq,
                .guest = st->domain,
                .rt_cpus = st->rt_cpus,
                .n_rt_cpus = st->n_rt_cpus,
                .pin_pf = st->pin_pf,
        };
        AllocTenant now;
        int r;

        r = allocator_restore_tenant(a, &at);
        if (r >= 0) {
                if (at.nic != ALLOC_NIC_VF && allocator_find_tenant(a, st->tenant, &now) >= 0 && now.nic != at.nic)
                        tenants_problem(t, 0, st->tenant, "tenant %s was saved %s; its class %s is %s now, so it %s",
                                st->tenant, st->kind == STATE_KIND_WAITING ? "waiting for a VF" : "on virtio-net",
                                st->class_name, now.nic == ALLOC_NIC_NONE ? "sriov-required" : "not",
                                now.nic == ALLOC_NIC_NONE ? "waits for a VF" : "goes on virtio-net");
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        return place_orphan(t, a, st, r, orphans, n_orphans);
}

int tenants_configure(Tenants *t, const Config *cfg, const Inventory *inv) {
        _cleanup_(allocator_freep) Allocator *a = NULL;
        _cleanup_free_ AllocClass *classes = NULL;
        _cleanup_free_ AllocVf *vfs = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        _cleanup_free_ StateTenant *orphans = NULL;
        _cleanup_(state_done) State snapshot = {};
        const State *known;
        size_t n_vfs, n_orphans = 0, n_placed_orphans;
        AllocPolicy pol;
        int r;

        /* The placement starts from what is saved, so the group's changes are written, or undone, first. */
        (void) tenants_flush(t);
        r = class_table(cfg, &classes);
        if (r < 0)
                return r;
        pol = ALLOC_POLICY_INIT(classes, cfg->n_classes);
        pol.headroom = cfg->vf_headroom;
        pol.target_utilization = cfg->vf_target_utilization / 100.0;
        r = allocator_new(&pol, &a);
        if (r < 0)
                return r;
        /* The RT pool comes before any restore, because the saved bookings are looked up in it. */
        r = rt_pool(cfg, inv, a, &d);
        if (r < 0)
                return r;

        /*
         * At start, place the tenants of the saved file. The file's contents are kept until they
         * are placed, so that a failure can retry. On reload, place what the old allocator held.
         */
        if (!t->placed) {
                qsort_safe(t->loaded.tenants, t->loaded.n, sizeof(StateTenant), state_tenant_cmp);
                for (size_t i = 0; i < t->loaded.n; i++) {
                        const StateTenant *st = &t->loaded.tenants[i];
                        Extra e = { .vlan = st->vlan, .have_coalesce = st->have_coalesce, .rx_usecs = st->rx_usecs,
                                    .tx_usecs = st->tx_usecs, .tx_rates = st->tx_rates };
                        strscpy(e.tenant, sizeof(e.tenant), st->tenant);
                        strscpy(e.domain, sizeof(e.domain), st->domain);
                        strscpy(e.domain_uuid, sizeof(e.domain_uuid), st->domain_uuid);
                        strscpy(e.owner, sizeof(e.owner), st->owner);
                        memcpy(e.mac, st->mac, sizeof(e.mac));
                        r = tenants_extra_add(t, &e);
                        if (r < 0)
                                return r;
                }
                known = &t->loaded;
        } else {
                r = tenants_snapshot(t, &snapshot);
                if (r < 0)
                        return r;
                known = &snapshot;
        }

        /* Tenants whose class is gone come first, so that the VFs they were saved on go to no one else. */
        for (size_t i = 0; i < known->n; i++)
                if (!config_find_class(cfg, known->tenants[i].class_name)) {
                        r = place_orphan(t, a, &known->tenants[i], -ENOENT, &orphans, &n_orphans);
                        if (r < 0)
                                return r;
                }
        n_placed_orphans = n_orphans;
        r = pool_from_inventory(t, orphans, n_orphans, known, inv, &vfs, &n_vfs);
        if (r < 0)
                return r;
        r = allocator_set_pool(a, vfs, n_vfs, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < known->n; i++) {
                if (!config_find_class(cfg, known->tenants[i].class_name))
                        continue;
                r = place(t, a, &known->tenants[i], &orphans, &n_orphans);
                if (r < 0)
                        return r;
        }
        if (n_orphans > n_placed_orphans) {
                /* Some tenants could not be restored after all, so their VFs are held back too. */
                vfs = mfree(vfs);
                r = pool_from_inventory(t, orphans, n_orphans, known, inv, &vfs, &n_vfs);
                if (r >= 0)
                        r = allocator_set_pool(a, vfs, n_vfs, &d);
                if (r < 0)
                        return r;
        }
        r = allocator_reconcile(a, &d);
        if (r < 0)
                return r;

        allocator_free(t->alloc);
        t->alloc = TAKE_PTR(a);
        free(t->orphans);
        t->orphans = TAKE_PTR(orphans);
        t->n_orphans = n_orphans;
        t->target = pol.target_utilization;
        if (!t->placed)
                state_done(&t->loaded);
        t->placed = true;
        tenants_report(t, &d);
        if (d.n_decisions > 0 || t->must_rewrite)
                (void) tenants_save(t);
        return 0;
}

int tenants_update_pool(Tenants *t, const Config *cfg, const Inventory *inv) {
        _cleanup_free_ AllocVf *vfs = NULL;
        _cleanup_(alloc_decisions_done) AllocDecisions d = {};
        size_t n;
        int r;

        if (!t->alloc)
                return 0;
        (void) tenants_flush(t);   /* The pool's decisions come after the group's changes, on disk too. */

        r = pool_from_inventory(t, t->orphans, t->n_orphans, NULL, inv, &vfs, &n);
        if (r < 0)
                return r;
        r = allocator_set_pool(t->alloc, vfs, n, &d);
        if (r < 0)
                return r;
        r = rt_pool(cfg, inv, t->alloc, &d);
        if (r < 0)
                return r;
        tenants_report(t, &d);
        return d.n_decisions > 0 ? tenants_commit(t, NULL, &d) : 0;
}
