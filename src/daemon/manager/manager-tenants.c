/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-tenants.c — the manager's tenants: placement, decisions, grouped saves and the calls the bus makes */

#include "vf/vf-prepare.h"
#include "manager-internal.h"

void manager_emit(Manager *m, ManagerEvent e, const char *subject) {
        if (m->event_fn)
                m->event_fn(m, e, subject, m->event_userdata);
}

/* Mark vf, so that the next cycle counts its changes to vf as sriovd's own doing, not as drift. */
static void manager_expect_vf(Manager *m, const char *vf) {
        if (!vf[0])
                return;
        /*
         * Without the list, the next cycle could report the change as drift. Expecting every
         * change avoids that false report, so a failure here needs no log.
         */
        if (pci_set_add(&m->expect_vfs, vf) < 0)
                m->expect_changes = true;
}

/*
 * Remember which tenant last had the VF, so that the clean can name it. The record is kept until
 * the VF is cleaned or goes to another tenant. Returns -ENOMEM or 0.
 */
static int manager_track_released(Manager *m, const AllocDecision *d) {
        for (size_t i = 0; i < m->n_released;)
                if (streq(m->released[i].vf, d->new_vf) || streq(m->released[i].vf, d->old_vf))
                        m->released[i] = m->released[--m->n_released];
                else
                        i++;
        if (!d->old_vf[0] || streq(d->old_vf, d->new_vf))
                return 0;
        if (GREEDY_REALLOC(m->released, m->allocated_released, m->n_released + 1) < 0)
                return -ENOMEM;
        PlanReleased *r = &m->released[m->n_released++];
        strscpy(r->vf, sizeof(r->vf), d->old_vf);
        strscpy(r->tenant, sizeof(r->tenant), d->tenant);
        return 0;
}

static void on_tenant_decision(const AllocDecision *d, const TenantNicFacts *nic, void *userdata) {
        Manager *m = userdata;
        int r;

        manager_expect_vf(m, d->old_vf);
        manager_expect_vf(m, d->new_vf);
        if (d->old_vf[0] || d->new_vf[0] || d->rt_changed)
                m->saves.decided_vf = true;
        r = manager_track_released(m, d);
        if (r < 0)
                log_warning_errno(r, "Failed to remember that VF %s was tenant %s's, its clean will not name the "
                                  "tenant: %m", d->old_vf, d->tenant);

        /* The decision is saved. Now the guest gets its NIC, or gives it back. */
        if (m->guests)
                guests_on_decision(m->guests, d, nic);
        const char *vf = d->new_vf[0] ? d->new_vf : d->old_vf[0] ? d->old_vf : NULL;

        log_full_errno(d->kind == ALLOC_DECISION_REFUSED ? LOG_WARNING : LOG_INFO, 0,
                       LOG_FIELDS(.tenant = d->tenant, .vf = vf, .message_id = SRIOVD_MESSAGE_ALLOCATION),
                       "Tenant %s: %s: %s -> %s%s (%s)", d->tenant, alloc_decision_kind_to_string(d->kind),
                       d->old_vf[0] ? d->old_vf : "-", d->new_vf[0] ? d->new_vf : alloc_nic_to_string(d->nic),
                       d->remote_numa ? ", remote NUMA node" : "", d->reason);
        manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, d->tenant);
}

/* The VF is prepared against the inventory that the tenants are placed on, during a sync the newer one. */
int manager_prepare_vf(Manager *m, const char *tenant, const char *vf, const TenantNicFacts *f) {
        return vf_prepare(&m->kernel, m->config, m->syncing ?: m->inventory, &m->host.vf_link_unsupported, tenant, vf, f);
}

void manager_watch_guest_irqs(Manager *m, const char *domain, const char *uuid) {
        vf_irq_watcher_guest_started(&m->irq_watch, m->event, m->tenants, m->inventory, domain, uuid);
}

static void on_tenant_problem(int error, const char *tenant, const char *message, void *userdata) {
        log_full_errno(LOG_ERR, error, LOG_FIELDS(.tenant = tenant, .message_id = SRIOVD_MESSAGE_STATE), "%s", message);
}

/*
 * Place the allocations against this inventory. The first cycle places them from the state
 * file, and the first cycle after a reload places them again under the new classes. Later
 * cycles keep them in step with the VFs that come and go.
 */
void manager_sync_tenants(Manager *m, const Inventory *inv) {
        int r;

        if (!m->tenants)
                return;
        /* manager_prepare_vf() prepares a decision's VF from what the kernel shows now. */
        m->syncing = inv;
        if (!m->tenants_configured) {
                r = tenants_configure(m->tenants, m->config, inv);
                if (r >= 0)
                        m->tenants_configured = true;
        } else
                r = tenants_update_pool(m->tenants, m->config, inv);
        m->syncing = NULL;
        m->saves.decided_vf = false;   /* This cycle carries out its own decisions. */
        if (r < 0)
                log_error_errno(r, "Failed to place tenants on this host's VFs: %m");
        manager_rewrite_soon(m);

        m->allocations = mfree(m->allocations);
        m->n_allocations = 0;
        r = tenants_plan_allocations(m->tenants, &m->allocations, &m->n_allocations);
        if (r < 0)
                log_oom();
        /*
         * irq_cpus = vcpu needs the CPU of each running guest's vCPU 0. That is the guest's
         * booked RT CPU, or else the CPU that libvirt reports.
         */
        for (size_t i = 0; m->guests && i < m->n_allocations; i++)
                if (m->allocations[i].vcpu0_cpu < 0)
                        m->allocations[i].vcpu0_cpu =
                                guests_vcpu0_cpu(m->guests, tenants_domain(m->tenants, m->allocations[i].tenant));

        r = tenants_held_vfs(m->tenants, &m->held);
        m->held_known = r >= 0;
        if (r < 0)
                log_error_errno(r, "Failed to list the VFs that guests may still have, cleaning none: %m");
}

/*
 * The allocations survive restarts in the state directory. Under --root, the default state
 * directory belongs to the real host, not to the fixture. So the state is kept in memory,
 * unless the config names a directory, as tests do.
 */
int manager_open_tenants(Manager *m, bool read_only) {
        const TenantsLog log = { on_tenant_decision, on_tenant_problem, manager_on_saved, m };
        /* A dry run plans the saved tenants as the daemon does, but logs nothing about their placement. */
        const TenantsLog quiet = { NULL, on_tenant_problem, NULL, m };
        bool memory = !rootfs_is_real(m->root) && streq(m->config->state_dir, CONFIG_DEFAULT_STATE_DIR);
        int r;

        if (m->tenants)
                return 0;
        if (read_only)
                r = memory ? tenants_new(NULL, &quiet, &m->tenants)
                           : tenants_new_readonly(m->config->state_dir, &quiet, &m->tenants);
        else
                r = tenants_new(memory ? NULL : m->config->state_dir, &log, &m->tenants);
        if (r < 0)
                return log_error_errno(r, "Failed to open the allocation state in %s: %m", m->config->state_dir);
        /* The state file's rewrites go to the writer thread too, whether or not the bus groups changes. */
        if (!read_only)
                tenants_set_writer(m->tenants, m->saves.writer);
        return 0;
}

/* A tenant's VF wants its MAC, VLAN and window now, not at the next drift check. */
void manager_apply_soon(Manager *m, const char *why) {
        manager_recheck(m, why);
}

int manager_save_state(Manager *m) {
        return m->tenants ? tenants_rewrite(m->tenants) : 0;
}

static int on_rewrite(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        /*
         * The rewrite runs on the writer thread when there is one, together with the open group,
         * if any. A failure is logged, and the next change rewrites the file.
         */
        if (m->saves.writer)
                (void) manager_start_saves(m);
        else
                (void) manager_save_state(m);
        return 0;
}

/*
 * Each change is saved as a journal line. Once the journal has grown enough, the whole file is
 * rewritten from a deferred source, after the change is answered. So the change that crosses
 * the limit does not wait for every tenant's bytes, which take 40 ms at 10,000 tenants.
 * Without an event loop, as with --once and in tests, the journal grows up to the bound that
 * tenants_commit() keeps.
 */
void manager_rewrite_soon(Manager *m) {
        if (!m->event || !tenants_want_rewrite(m->tenants))
                return;
        if (!m->saves.rewrite_defer) {
                if (sd_event_add_defer(m->event, &m->saves.rewrite_defer, on_rewrite, m) < 0)
                        return;
                (void) sd_event_source_set_priority(m->saves.rewrite_defer, SD_EVENT_PRIORITY_IDLE);
        }
        (void) sd_event_source_set_enabled(m->saves.rewrite_defer, SD_EVENT_ONESHOT);
}

/* ---- Changes from the bus, saved in groups that share one fdatasync() ---- */

/*
 * A change costs one fdatasync(), the same for one journal line or for sixteen. So the changes
 * that arrive in one wakeup, or while a write is under way, are saved together. sd-event runs
 * one source per iteration, highest priority first. A defer source one step below the bus
 * therefore runs only after the bus has handled every call it had queued. The changes of those
 * calls make up the group. Calls that arrive during the write queue up behind it and form the
 * next group.
 *
 * With a writer thread, the write runs on that thread and the loop goes on. The calls handled
 * meanwhile form the next group, which is written once this one is durable. Each group's
 * replies wait for its own write only, not also for the write before it.
 */


static int on_save(sd_event_source *s, void *userdata) {
        (void) manager_start_saves(userdata);   /* saved_fn receives the outcome. */
        return 0;
}

void manager_set_writer(Manager *m, StateWriter *w) {
        if (m->tenants)
                tenants_set_writer(m->tenants, w);   /* This finishes the write in flight first. */
        state_writer_free(m->saves.writer);
        m->saves.writer = w;
}

void manager_set_saved_fn(Manager *m, ManagerSavedFn fn, void *userdata) {
        m->saves.fn = fn;
        m->saves.userdata = userdata;
}

int manager_saves_join(Manager *m) {
        int r;

        if (!m->saves.fn || !m->tenants)
                return 0;
        /* Without an event loop, as in tests, the caller writes the group with manager_flush_saves(). */
        if (m->event && !m->saves.defer) {
                r = sd_event_add_defer(m->event, &m->saves.defer, on_save, m);
                if (r < 0)
                        return 0;   /* The change is then saved on its own. */
                /*
                 * The bus is attached at NORMAL priority. One step below it, this source runs only
                 * after all of the bus's queued calls.
                 */
                (void) sd_event_source_set_priority(m->saves.defer, SD_EVENT_PRIORITY_NORMAL + 1);
        }
        r = tenants_group_open(m->tenants);
        if (r < 0)
                return r;
        if (m->saves.defer && tenants_group_pending(m->tenants))
                (void) sd_event_source_set_enabled(m->saves.defer, SD_EVENT_ONESHOT);
        return 0;
}

bool manager_saves_pending(const Manager *m) {
        return m->tenants && tenants_group_pending(m->tenants);
}

uint64_t manager_saves_seq(const Manager *m) {
        return m->tenants ? tenants_pending_seq(m->tenants) : 0;
}

int manager_flush_saves(Manager *m) {
        if (m->saves.defer)
                (void) sd_event_source_set_enabled(m->saves.defer, SD_EVENT_OFF);
        return m->tenants ? tenants_flush(m->tenants) : 0;
}

int manager_start_saves(Manager *m) {
        if (m->saves.defer)
                (void) sd_event_source_set_enabled(m->saves.defer, SD_EVENT_OFF);
        return m->tenants ? tenants_flush_start(m->tenants) : 0;
}

/*
 * After a change is saved, the journal is kept short and the properties are announced. A cycle
 * runs only when a VF is to be tuned, because a decision moved one or a tenant on one changed.
 * A cycle reads the whole host, and a change to virtio-net tenants alone gives it nothing to do.
 */
static void after_saved(Manager *m) {
        const char *why = m->saves.why ?: m->saves.decided_vf ? "allocation" : NULL;

        m->saves.why = NULL;
        m->saves.decided_vf = false;
        manager_rewrite_soon(m);
        if (why)
                manager_apply_soon(m, why);
        manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
}

void manager_changed(Manager *m, const char *why, bool vf) {
        /* Only the last change's reason is kept. The cycle looks at everything anyway. */
        if (vf)
                m->saves.why = why;
        if (!manager_saves_pending(m))
                after_saved(m);
}

void manager_changed_tenant(Manager *m, const char *tenant) {
        if (manager_saves_pending(m) &&
            GREEDY_REALLOC(m->saves.tenants, m->saves.allocated_tenants, m->saves.n_tenants + 1) >= 0) {
                ManagerSavedTenant *s = &m->saves.tenants[m->saves.n_tenants++];

                strscpy(s->id, sizeof(s->id), tenant);
                s->seq = manager_saves_seq(m);
                return;
        }
        manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, tenant);
}

void manager_on_saved(int error, size_t n_changes, uint64_t seq, void *userdata) {
        Manager *m = userdata;
        size_t n = 0;

        /* tests/dbus/test-dbus-group.py counts the changes per write in this message. */
        if (n_changes > 0)
                log_full_errno(LOG_DEBUG, error, NULL, "State: %zu change(s) saved with one write%s", n_changes,
                               error < 0 ? ": failed, all undone" : "");
        /* Groups finish in order, so this group's tenants come first in the list. */
        while (n < m->saves.n_tenants && m->saves.tenants[n].seq <= seq)
                n++;
        for (size_t i = 0; error >= 0 && i < n; i++)
                manager_emit(m, MANAGER_EVENT_ALLOCATION_CHANGED, m->saves.tenants[i].id);
        if (n > 0) {
                memmove(m->saves.tenants, m->saves.tenants + n, (m->saves.n_tenants - n) * sizeof(*m->saves.tenants));
                m->saves.n_tenants -= n;
        }
        /*
         * A group opened while this one was written goes next. It starts once the bus's queued
         * calls have joined it.
         */
        if (m->saves.defer)
                (void) sd_event_source_set_enabled(m->saves.defer,
                                                   manager_saves_seq(m) > seq ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
        if (error >= 0 && m->saves.virtio_rates) {
                m->saves.virtio_rates = false;
                guests_reconcile_soon(m->guests);
        }
        if (error >= 0 && n_changes > 0)
                after_saved(m);
        else if (error < 0)
                m->saves.why = NULL;   /* The changes were undone, so there is nothing to tune. */

        if (m->saves.fn)
                m->saves.fn(m, error, seq, m->saves.userdata);
}

/* ---- The calls that the bus makes about tenants ---- */

int manager_allocate(Manager *m, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, TenantInfo *ret, char *reason, size_t reason_size) {
        const TenantOptions none = TENANT_OPTIONS_DEFAULT;
        TenantInfo info, before;
        bool had;
        int r;

        if (!m->tenants)
                return -EAGAIN;
        if (!config_find_class(m->config, class_name))
                return -ENOENT;
        r = manager_saves_join(m);
        if (r < 0)
                return r;
        had = tenants_get(m->tenants, m->inventory, tenant, &before) >= 0;
        r = tenants_allocate(m->tenants, tenant, class_name, domain ?: "", opts ?: &none, reason, reason_size);
        if (r < 0)
                return r;
        r = tenants_get(m->tenants, m->inventory, tenant, &info);
        /* A virtio NIC that stays gets new rates from libvirt, once they are saved. A new NIC has them already. */
        if (r >= 0 && had && streq(info.kind, "virtio") && streq(before.kind, "virtio") &&
            !tx_rates_equal(&before.tx_rates, &info.tx_rates)) {
                if (m->saves.fn)
                        m->saves.virtio_rates = true;
                else
                        guests_reconcile_soon(m->guests);
        }
        /* On a VF, a new MAC or VLAN is not a decision, and the VF takes it now. */
        manager_changed(m, "allocation", r < 0 || info.vf[0]);
        if (ret && r >= 0)
                *ret = info;
        return ret ? r : 0;
}

int manager_release(Manager *m, const char *tenant) {
        int r;

        if (!m->tenants)
                return -ENOENT;
        r = manager_saves_join(m);
        if (r < 0)
                return r;
        /* A running guest gives the VF back when its OS lets go of it in a live detach, not now. */
        r = tenants_release(m->tenants, tenant, guests_domain_running(m->guests, tenants_domain(m->tenants, tenant)));
        if (r < 0)
                return r;
        /* AllocationChanged goes out with the allocator's RELEASED decision. */
        manager_changed(m, "release", false);   /* A decision brings the VF's clean. */

        return 0;
}

void manager_set_vfs_in_guest(Manager *m, const char (*vfs)[PCI_ADDR_MAX], size_t n) {
        int r;

        if (!m->tenants)
                return;
        m->guests_reconciled = true;
        r = tenants_set_vfs_in_guest(m->tenants, vfs, n);
        if (r < 0)
                log_error_errno(r, "Failed to save the tenants served from VFs that left their guests: %m");
        if (r <= 0)
                return;
        manager_rewrite_soon(m);
        manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
        manager_apply_soon(m, "VFs in guests");
}

int manager_set_coalesce(Manager *m, const char *tenant, unsigned rx_usecs, unsigned tx_usecs) {
        int r;

        if (!m->tenants)
                return -ENOENT;
        r = manager_saves_join(m);
        if (r < 0)
                return r;
        r = tenants_set_coalesce(m->tenants, tenant, rx_usecs, tx_usecs);
        if (r < 0)
                return r;
        manager_changed_tenant(m, tenant);
        manager_changed(m, "coalescing override", true);
        return 0;
}

int manager_get_tenant(const Manager *m, const char *tenant, TenantInfo *ret) {
        return m->tenants ? tenants_get(m->tenants, m->inventory, tenant, ret) : -ENOENT;
}

size_t manager_n_tenants(const Manager *m) {
        return m->tenants ? tenants_count(m->tenants) : 0;
}

int manager_tenant(const Manager *m, size_t i, TenantInfo *ret) {
        return m->tenants ? tenants_nth(m->tenants, m->inventory, i, ret) : -ERANGE;
}

void manager_alloc_summary(const Manager *m, AllocSummary *ret) {
        AllocStats st = {};

        if (m->tenants)
                tenants_stats(m->tenants, &st);
        *ret = (AllocSummary) {
                .vfs_total = st.n_vfs,
                .vfs_usable = st.usable,
                .vfs_allocated = st.allocated,
                .utilization = st.utilization,
                .target = m->tenants ? tenants_target(m->tenants) : m->config->vf_target_utilization / 100.0,
                .tenants = st.tenants,
        };
}

void manager_pf_stats(const Manager *m, const char *pf, AllocPfStats *ret) {
        size_t n, max;

        if (!m->tenants) {
                *ret = (AllocPfStats) {};
                return;
        }
        tenants_pf_stats(m->tenants, pf, ret);
        /* Allocate refuses a new tenant at the configured limit, which may be below the allocator's own. */
        n = tenants_count(m->tenants);
        max = m->config && m->config->max_tenants ? m->config->max_tenants : ALLOC_TENANTS_DEFAULT;
        for (size_t i = 0; i < ret->n_classes; i++)
                ret->class_available[i] = (unsigned) MIN((size_t) ret->class_available[i], max > n ? max - n : 0);
}

const char *manager_class_name(const Manager *m, size_t i) {
        return m->tenants ? tenants_class_name(m->tenants, i) : NULL;
}

size_t manager_rt_nodes(const Manager *m, AllocRtNode *ret, size_t n) {
        return m->tenants ? tenants_rt_nodes(m->tenants, ret, n) : 0;
}

int manager_force_num_vfs(Manager *m, const char *pf) {
        int r;

        if (!pci_addr_valid(pf))
                return -EINVAL;
        if (!m->inventory || !inventory_find_pf(m->inventory, pf))
                return -ENODEV;
        r = pci_set_add(&m->force_num_vfs, pf);
        if (r < 0)
                return r;
        manager_apply_soon(m, "forced VF count change");
        return 0;
}

/* ---- The calls that the bus makes about cycles and state ---- */

int manager_run_cycle_now(Manager *m, CycleResult *ret) {
        int r = manager_run_cycle(m);
        if (r >= 0 && ret)
                *ret = m->last;
        manager_notify_status(m, "");
        return r;
}

int manager_plan_now(Manager *m, Plan **ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *p = NULL;
        int r;

        r = manager_observe(m, false, NULL, &inv, &p);
        if (r < 0)
                return r;
        /* The plan also shows the changes to the RT guests' placement that libvirt would have to make. */
        r = guests_plan_append(m->guests, p);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

void manager_set_event_fn(Manager *m, ManagerEventFn fn, void *userdata) {
        m->event_fn = fn;
        m->event_userdata = userdata;
}

const char *manager_state(const Manager *m) {
        if (!m->ready)
                return "starting";
        return m->last.n_failed > 0 || m->last.n_drift > 0 ? "degraded" : "running";
}

int manager_state_reasons(const Manager *m, char ***ret) {
        char **v = calloc(3, sizeof(char *));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        if (m->ready && m->last.n_failed > 0) {
                char failed[512] = "";
                size_t k = 0, shown = 0;

                /* The plan keeps the failures of the first pass. Later passes only count theirs. */
                for (size_t i = 0; m->plan && i < m->plan->n_actions && shown < 3; i++) {
                        const Action *a = &m->plan->actions[i];

                        if (a->skipped || a->result >= 0)
                                continue;
                        strjoin_appendf(failed, sizeof(failed), &k, "%s %s: %s", action_kind_to_string(a->kind),
                                        a->target[0] ? a->target : "host", strerror(-a->result));
                        shown++;
                }
                if (asprintf(&v[n], "%u of the last cycle's actions failed%s%s", m->last.n_failed,
                             failed[0] ? ": " : "", failed) < 0)
                        v[n] = NULL;
                n += !!v[n];
        }
        if (m->ready && m->last.n_drift > 0) {
                if (asprintf(&v[n], "%u changes did not stick in the last cycle (drift)", m->last.n_drift) < 0)
                        v[n] = NULL;
                n += !!v[n];
        }
        *ret = v;
        return 0;
}
