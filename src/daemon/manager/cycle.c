/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cycle.c — one cycle: observe, plan and apply, then observe again for new work and changes that did not stick */

#include "sriovd/kernel/discover.h"
#include "sriovd/kernel/refresh.h"
#include "apply/action-log.h"
#include "apply/drift-expected.h"
#include "vf/vf-users.h"
#include "manager-internal.h"
#include "netdev-tune.h"

/* Reads the VFs' link settings from the PF driver over rtnetlink. Settings that cannot be read are planned in full. */
static void manager_read_vf_links(Manager *m, Inventory *inv) {
        if (!m->kernel.route)
                return;
        for (size_t i = 0; i < inv->n_pfs; i++) {
                Pf *pf = &inv->pfs[i];
                NlError err;
                int r;

                if (pf->ifindex <= 0 || pf->num_vfs == 0)
                        continue;
                r = route_nl_read_vfs(m->kernel.route, pf->ifindex, &pf->vf_links, &pf->n_vf_links, &err);
                if (r < 0)
                        log_full_errno(LOG_DEBUG, r, LOG_FIELDS(.pf = pf->addr),
                                       "Failed to read the VF settings of %s (ifindex %d), planning them in full: %m%s%s",
                                       pf->addr, pf->ifindex, err.message[0] ? ": " : "", err.message);
                else
                        pf->vf_links_known = true;
        }
}

/*
 * Whether sriovd knows which VFs the guests have. It knows once libvirt has answered, or when
 * there is no libvirt to ask, as in a fixture without a URI of its own. The daemon's first cycle
 * comes before libvirt's answer, and --once never asks. Until sriovd knows, no free vfio-pci VF
 * is cleaned, because the VF may be in a guest.
 */
bool manager_guests_known(const Manager *m) {
        if (!rootfs_is_real(m->root) && streq(m->config->libvirt_uri, CONFIG_DEFAULT_LIBVIRT_URI))
                return true;
        return m->guests_reconciled;
}

/*
 * A drift check's refresh does not see every change. Some changes come with an event from udev,
 * netlink or libvirt, and each event leads to a full read: a device, a driver, a netdev or a VF
 * count. Other changes come with no event at all: another device's new IRQ, irqbalance
 * starting, a CPU going offline, or threaded NAPI switched on by hand. A full read at least this
 * often bounds how late sriovd notices those. With the default 5 s drift check, every 12th check
 * is a full read. So the steady state costs about a twelfth of a full read per check more than
 * the refresh alone.
 */
#define FULL_READ_USEC (UINT64_C(60) * 1000000)

/*
 * Reads the host as it is. Usually the host is read whole. For a drift check soon after a full
 * read, a copy of the last inventory is refreshed instead, with only what can drift without an
 * event. If the refresh finds that the copy is out of date, for example because an IRQ or a
 * thread is gone, the host is read whole after all.
 */
static int manager_read_inventory(Manager *m, const Inventory *base, Inventory **ret, bool *ret_refreshed) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        uint64_t now = now_usec();
        Scope scope;
        int r;

        /* A drift event's repair reads only what the events named, however old the full read is. */
        if (base && (m->refresh_only || (m->full_read_usec > 0 && now - m->full_read_usec < FULL_READ_USEC))) {
                const DriftTargets *d = kernel_events_drift(m->kernel_events);

                r = inventory_dup(base, &inv);
                if (r < 0)
                        return r;
                r = m->refresh_only ? inventory_refresh_only(m->root, m->irq_files, inv, d->irqs, d->n_irqs,
                                                             d->pids, d->n_pids)
                                    : inventory_refresh(m->root, m->irq_files, inv);
                if (r >= 0) {
                        m->n_refreshes++;
                        *ret = TAKE_PTR(inv);
                        *ret_refreshed = true;
                        return 0;
                }
                if (r != -ESTALE)
                        return r;
                log_debug("The host changed since the last full read (an IRQ or a thread is gone): reading it whole");
                inv = inventory_free(inv);
        }
        config_scope(m->config, &scope);
        r = inventory_read(m->root, &scope, &inv);
        if (r < 0)
                return r;
        m->full_read_usec = now;
        m->n_full_reads++;
        irq_files_prune(m->irq_files, inv);
        *ret = TAKE_PTR(inv);
        return 0;
}

/* Whether a drift event named one of inv's NAPI threads. */
static bool names_napi_thread(const Manager *m, const Inventory *inv) {
        const DriftTargets *d = kernel_events_drift(m->kernel_events);

        for (size_t i = 0; i < d->n_pids; i++)
                for (size_t j = 0; j < inv->n_kthreads; j++)
                        if (inv->kthreads[j].kind == KTHREAD_NAPI && inv->kthreads[j].pid == d->pids[i])
                                return true;
        return false;
}

int manager_observe(Manager *m, bool sync_tenants, const Inventory *base, Inventory **ret_inv, Plan **ret_plan) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        bool refreshed = false;
        _cleanup_free_ PlanVfUser *users = NULL;
        size_t n_users = 0;
        int r;

        r = manager_read_inventory(m, base, &inv, &refreshed);
        if (r < 0)
                return log_error_errno(r, "Failed to read the host inventory under %s: %m",
                                       rootfs_path(m->root));
        /*
         * A drift event names an IRQ or a thread. The netlink state, VF links, coalescing and
         * offloads, changes with netlink events of its own, so a repair keeps what the last cycle
         * read. That saves dozens of netlink requests per repair. A NAPI thread's scheduling is in
         * that state, so a repair that names one reads it all.
         */
        bool copied = m->refresh_only && refreshed && !names_napi_thread(m, inv) && inventory_copy_netlink(base, inv) >= 0;
        if (!copied)
                manager_read_vf_links(m, inv);
        saved_sched_table_prune(&m->host.saved, inv);
        if (!copied)
                netdev_tune_read(&m->kernel, m->config, &m->host.saved, m->allocations, m->n_allocations, inv);
        /* A drift event never names a CPU file, so a repair keeps what the copy holds. */
        if (!(m->refresh_only && refreshed)) {
                r = saved_cpu_observe(m->root, m->config, &m->host.saved_cpu, inv);
                if (r < 0)
                        return log_oom();
        }
        if (sync_tenants)
                manager_sync_tenants(m, inv);
        r = vf_users_read(m->root, m->config, guests_connected_now(m->guests) ? guests_virt(m->guests) : NULL, inv,
                          &users, &n_users);
        if (r < 0)
                return r;
        PlanContext ctx;
        manager_plan_context(m, users, n_users, &ctx);
        r = plan_build(inv, m->config, &ctx, ret_plan);
        if (r < 0)
                return log_error_errno(r, "Failed to build the plan: %m");
        *ret_inv = TAKE_PTR(inv);
        return 0;
}

void manager_plan_context(const Manager *m, const PlanVfUser *users, size_t n_users, PlanContext *ret) {
        *ret = (PlanContext) {
                .allocations = m->allocations,
                .n_allocations = m->n_allocations,
                .force_num_vfs = pci_set_array(&m->force_num_vfs),
                .n_force_num_vfs = pci_set_size(&m->force_num_vfs),
                .vf_users = users,
                .n_vf_users = n_users,
                .vfs_held = pci_set_array(&m->held),
                .n_vfs_held = pci_set_size(&m->held),
                .guests_known = m->held_known && manager_guests_known(m),
                .released = m->released,
                .n_released = m->n_released,
        };
        host_memory_plan_context(&m->host, ret);
}

/* Emits DriftDetected with a text such as "irq-affinity 0000:41:00.3 IRQ 60: 2-7 -> 0-1 (repaired)". */
void manager_emit_drift(Manager *m, const Action *a, const char *outcome) {
        char text[ACTION_DRIFT_TEXT_MAX];

        if (!m->event_fn)
                return;
        manager_emit(m, MANAGER_EVENT_DRIFT, action_drift_text(a, outcome, text, sizeof(text)));
}

/* Emits event e for each PF and VF that is in from but not in to. For added devices, from is the
 * new inventory and to is the old one. For removed devices, it is the other way round. */
static void manager_emit_devices(Manager *m, const Inventory *from, const Inventory *to, ManagerEvent e) {
        for (size_t i = 0; i < from->n_pfs; i++) {
                const Pf *pf = &from->pfs[i];
                if (!inventory_find_function(to, pf->addr, NULL))
                        manager_emit(m, e, pf->addr);
                for (size_t j = 0; j < pf->n_vfs; j++)
                        if (!inventory_find_function(to, pf->vfs[j].addr, NULL))
                                manager_emit(m, e, pf->vfs[j].addr);
        }
}

/* Records an applied action's result. What cannot be recorded is asked again, so a warning is enough. */
void manager_record(Manager *m, const Action *a) {
        char what[160];
        int r;

        r = host_memory_learn(&m->host, a);
        if (r < 0)
                log_warning_errno(r, "Failed to record the result of %s, ignoring: %m",
                                  action_describe(a, what, sizeof(what)));
}

static void on_vf_wait_done(const VfWait *w, bool ready, const char *missing, uint64_t now, void *userdata) {
        CycleResult *res = userdata;
        uint64_t ms = (now - w->since) / 1000;

        if (ready) {
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.pf = w->pf, .message_id = SRIOVD_MESSAGE_VFS_READY),
                               "%u VFs of %s ready after %" PRIu64 " ms", w->want, w->pf, ms);
                return;
        }
        res->n_failed++;
        log_full_errno(LOG_ERR, 0, LOG_FIELDS(.pf = w->pf, .message_id = SRIOVD_MESSAGE_VFS_MISSING),
                       "%u VFs of %s not ready after %" PRIu64 " ms: %s", w->want, w->pf, ms, missing);
}

/* Whether an action was skipped on purpose, because a fixture's PIDs and netdevs are not this host's.
 * Such an action is not drift. */
static bool manager_action_not_ours(const Manager *m, const Action *a) {
        bool thread = a->kind == ACTION_SET_IRQ_THREAD || a->kind == ACTION_SET_NAPI_PIN ||
                      a->kind == ACTION_SET_NAPI_SCHED || a->kind == ACTION_SET_KTHREAD_SCHED;
        bool ethtool = a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS || a->kind == ACTION_SET_CHANNELS;

        return (thread && !rootfs_sched_live(m->root)) || (a->kind == ACTION_SET_VF_LINK && !m->kernel.route) ||
               (ethtool && !m->kernel.ethtool) || (a->kind == ACTION_SET_NAPI_PARAMS && !m->kernel.netdev);
}

void manager_apply_action(Manager *m, const Inventory *inv, Action *a) {
        action_apply(&m->kernel, a);
        action_log(inv, a, false);
        manager_record(m, a);
}

/*
 * Records what a cycle already tried. Then a follow-up pass does only new work, such as the
 * VFs that a count change created or the netdevs that a rebinding brought. The verify can also
 * tell "did not stick" from "new". An action did not stick when it was tried, succeeded, and is
 * still needed.
 */
typedef struct ActionKey {
        ActionKind kind;
        char target[PCI_ADDR_MAX];
        unsigned irq, vf, napi_id, cpu, idle_state;
        pid_t pid;
        bool ok;
} ActionKey;

typedef struct Attempted {
        ActionKey *keys;
        size_t n, allocated;
} Attempted;

static void attempted_done(Attempted *t) {
        free(t->keys);
}

/* napi_id is in a union, and only NAPI_PARAMS actions have one. */
static unsigned action_napi_id(const Action *a) {
        return a->kind == ACTION_SET_NAPI_PARAMS ? a->napi_id : 0;
}

static bool action_key_match(const ActionKey *k, const Action *a) {
        return k->kind == a->kind && k->irq == a->irq && k->vf == a->vf && k->pid == a->pid &&
               k->napi_id == action_napi_id(a) && k->cpu == a->cpu && k->idle_state == a->idle_state &&
               streq(k->target, a->target);
}

static const ActionKey *attempted_find(const Attempted *t, const Action *a) {
        for (size_t i = 0; i < t->n; i++)
                if (action_key_match(&t->keys[i], a))
                        return &t->keys[i];
        return NULL;
}

static int attempted_add(Attempted *t, const Action *a) {
        ActionKey *k;

        if (GREEDY_REALLOC(t->keys, t->allocated, t->n + 1) < 0)
                return -ENOMEM;
        k = &t->keys[t->n++];
        *k = (ActionKey) { .kind = a->kind, .irq = a->irq, .vf = a->vf, .pid = a->pid, .napi_id = action_napi_id(a),
                           .cpu = a->cpu, .idle_state = a->idle_state, .ok = a->result >= 0 };
        strscpy(k->target, sizeof(k->target), a->target);
        return 0;
}

static void plan_drop(Plan *p, size_t i) {
        memmove(p->actions + i, p->actions + i + 1, (p->n_actions - i - 1) * sizeof(Action));
        p->n_actions--;
}

/* Whether a names IRQs or NAPIs. A channel change makes these stale, because the driver creates
 * the netdev's IRQs and NAPIs again. */
static bool names_irqs(const Action *a) {
        return a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD ||
               a->kind == ACTION_SET_NAPI_THREADED || a->kind == ACTION_SET_NAPI_PARAMS ||
               a->kind == ACTION_SET_NAPI_PIN || a->kind == ACTION_SET_NAPI_SCHED;
}

/*
 * Applies a plan, and records every action carried out in tried. A VF count change resets
 * the PF itself, and its driver requests its vectors again. So the actions planned earlier
 * for the PF and its VFs are stale, and this pass drops them. The next pass plans them from
 * what the kernel shows then.
 */
#define RESET_MAX 16
static void manager_apply(Manager *m, const Inventory *inv, Plan *plan, CycleResult *res, Attempted *tried) {
        char reset[RESET_MAX][PCI_ADDR_MAX], rechanneled[RESET_MAX][PCI_ADDR_MAX];
        const ExpectedChanges expect = {
                .all = m->expect_changes,
                .last = m->inventory,
                .last_plan = m->plan,
                .vfs = &m->expect_vfs,
        };
        size_t n_reset = 0, n_rechanneled = 0;
        char what[160];
        int r;

        /* A failed action is reported, and the independent actions still run. */
        for (size_t i = 0; i < plan->n_actions; i++) {
                Action *a = &plan->actions[i];
                bool stale = false, expected;

                for (size_t k = 0; k < n_reset && !stale; k++)
                        stale = streq(reset[k], a->target) || pf_owns(inventory_find_pf(inv, reset[k]), a->target);
                for (size_t k = 0; k < n_rechanneled && !stale; k++)
                        stale = streq(rechanneled[k], a->target) && names_irqs(a);
                if (stale) {
                        plan_drop(plan, i--);
                        res->n_actions--;
                        continue;
                }

                action_apply(&m->kernel, a);
                r = attempted_add(tried, a);
                if (r < 0)
                        log_warning_errno(r, "Failed to note %s as tried, a later pass may report it as new work: %m",
                                          action_describe(a, what, sizeof(what)));
                expected = action_expected(&expect, inv, a);
                action_log(inv, a, !expected);
                if (!expected && !a->skipped && a->result != 0)
                        manager_emit_drift(m, a, a->result > 0 ? "repaired" : "repair failed");
                manager_record(m, a);
                if (a->skipped)
                        res->n_skipped++;
                else if (a->result > 0)
                        res->n_done++;
                else if (a->result < 0 && a->kind == ACTION_SET_IRQ_AFFINITY && !a->target[0] &&
                         a->error.class == ERROR_UNMANAGED)
                        /* Keeping the host's other IRQs off the RT CPUs is best effort.
                         * Some of them, like the timer's, cannot move. */
                        res->n_skipped++;
                else if (a->result < 0) {
                        res->n_failed++;
                        res->n_transient += a->error.class == ERROR_TRANSIENT;
                }

                if (a->kind == ACTION_SET_NUM_VFS && a->result > 0) {
                        if (m->tenants)
                                tenants_vfs_recreated(m->tenants, a->target);
                        /* A forced change applies once, not for good. */
                        (void) pci_set_remove(&m->force_num_vfs, a->target);
                }
                /* The driver requested its vectors again.
                 * So an action that names the old vectors or their NAPIs is stale. */
                if (a->kind == ACTION_SET_CHANNELS && a->result > 0 && n_rechanneled < RESET_MAX)
                        strscpy(rechanneled[n_rechanneled++], PCI_ADDR_MAX, a->target);
                if (a->kind == ACTION_SET_NUM_VFS && a->result > 0) {
                        r = a->after > 0 ? vf_wait_add(&m->vf_waits, a->target, (unsigned) a->after, now_usec(),
                                                       (uint64_t) m->config->vf_timeout_sec * 1000000)
                                         : 0;
                        if (r < 0)
                                log_warning_errno(r, "Failed to wait for the new VFs of %s, not reporting when they "
                                                  "are ready: %m", a->target);
                        if (n_reset < RESET_MAX)
                                strscpy(reset[n_reset++], PCI_ADDR_MAX, a->target);
                }
        }
}

/*
 * Sorts a later pass's plan. An action that was tried and succeeded, but is still needed, did
 * not stick. That is drift, so it is reported and dropped. An action that failed was counted
 * already, so it is dropped too. The rest is new work for this pass. Returns the number of
 * actions left.
 */
static size_t manager_verify(Manager *m, Plan *p, const Inventory *inv, const Attempted *tried, CycleResult *res) {
        size_t kept = 0;

        /* The actions kept move up in one pass: dropping them one at a time moved the rest each
         * time, which cost a cold apply of the large host 10^9 instructions. */
        for (size_t i = 0; i < p->n_actions; i++) {
                const Action *a = &p->actions[i];
                const ActionKey *k = attempted_find(tried, a);

                if (!k) {
                        /* New work that the previous pass made possible, such as new VFs or netdevs. */
                        if (kept != i)
                                p->actions[kept] = *a;
                        kept++;
                        continue;
                }
                /* VFs that are still arriving get configured once they appear, so they are not drift. */
                if (!k->ok || manager_action_not_ours(m, a) || vf_wait_covers(&m->vf_waits, inv, a->target))
                        continue;
                res->n_drift++;
                action_log_not_stuck(inv, a);
                manager_emit_drift(m, a, "did not stick");
        }
        p->n_actions = kept;
        return kept;
}

/* --once keeps every pass's actions, so that the output shows all that was done. */
static int manager_keep_plan(Manager *m, Plan **plan) {
        if (m->once && m->plan) {
                int r = plan_merge(m->plan, *plan);
                if (r < 0)
                        return r;
                *plan = plan_free(*plan);
                return 0;
        }
        plan_free(m->plan);
        m->plan = TAKE_PTR(*plan);
        return 0;
}

/* New VFs are configured in the cycle that created them, if the kernel already shows them. */
#define CYCLE_PASSES_MAX 3

/*
 * Whether the next observe can show all that p's actions write without a full read. A refresh
 * reads affinities, thread scheduling and the two IRQ sysctls again. Every observe reads
 * coalescing and offloads anew over netlink. For such a plan, the verify refreshes the pass's
 * inventory instead of reading the host whole. On a large host, that saves a third of a cold
 * apply. Any other action may bring new devices, netdevs, IRQs or threads.
 */
static bool refresh_shows(const Plan *p) {
        for (size_t i = 0; i < p->n_actions; i++)
                switch (p->actions[i].kind) {
                case ACTION_SET_RTNET_PRIO:
                case ACTION_SET_IRQ_DEFAULT:
                case ACTION_SET_IRQ_AFFINITY:
                case ACTION_SET_IRQ_THREAD:
                case ACTION_SET_NAPI_PIN:
                case ACTION_SET_NAPI_SCHED:
                case ACTION_SET_KTHREAD_SCHED:
                case ACTION_SET_CPU_IDLE:
                case ACTION_SET_CPU_GOVERNOR:
                case ACTION_SET_COALESCE:
                case ACTION_SET_OFFLOADS:
                        continue;
                default:
                        return false;
                }
        return true;
}

static bool named(const void *set, size_t n, size_t size, const void *key) {
        for (size_t i = 0; i < n; i++)
                if (memcmp((const char *) set + i * size, key, size) == 0)
                        return true;
        return false;
}

/*
 * Whether every action of p is on an IRQ or a thread that the drift events named. A repair may
 * plan more, such as a change of sriovd's own that no cycle has applied yet. Its verify must then
 * read what those actions wrote, not only what the events named.
 */
static bool repair_within_named(const Manager *m, const Plan *p) {
        const DriftTargets *d = kernel_events_drift(m->kernel_events);

        for (size_t i = 0; i < p->n_actions; i++) {
                const Action *a = &p->actions[i];
                bool irq = a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD;
                bool thread = a->kind == ACTION_SET_IRQ_THREAD || a->kind == ACTION_SET_NAPI_PIN ||
                              a->kind == ACTION_SET_NAPI_SCHED || a->kind == ACTION_SET_KTHREAD_SCHED;

                if (!a->skipped && !(irq && named(d->irqs, d->n_irqs, sizeof(unsigned), &a->irq)) &&
                    !(thread && named(d->pids, d->n_pids, sizeof(pid_t), &a->pid)))
                        return false;
        }
        return true;
}

int manager_cycle(Manager *m, CycleMode mode, CycleResult *ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(attempted_done) Attempted tried = {};
        CycleResult res = {};
        bool notes_changed = false;
        int r;

        /* A dry run changes nothing, not even the state directory. It only reads the saved tenants. */
        r = manager_open_tenants(m, mode != CYCLE_APPLY);
        if (r < 0)
                return r;
        if (mode == CYCLE_APPLY && !m->host.unmanaged.loaded) {
                r = unmanaged_irqs_load_boot(&m->host.unmanaged, m->root, m->config->state_dir);
                if (r < 0)
                        log_warning_errno(r, "Failed to read the IRQs the kernel will not move, ignoring: %m");
        }

        /*
         * Observe, plan and apply. After any write, observe again. That observe verifies what
         * was written. It also starts the next pass, for the work that the writes made possible,
         * such as the VFs that a count change created or the netdevs that a rebinding brought.
         * A cycle has at most CYCLE_PASSES_MAX passes.
         */
        bool refreshable = m->drift_refresh;
        for (unsigned pass = 0;; pass++) {
                _cleanup_(plan_freep) Plan *p = NULL;
                unsigned written = res.n_done + res.n_failed;
                Inventory *i = NULL;

                r = manager_observe(m, true, refreshable ? (pass == 0 ? m->inventory : inv) : NULL, &i, &p);
                if (r < 0)
                        return r;
                inventory_free(inv);
                inv = i;
                if (mode == CYCLE_APPLY)
                        vf_wait_check(&m->vf_waits, inv, now_usec(), on_vf_wait_done, &res);
                /*
                 * The PFs go out before this pass writes anything. irqbalance may see the IRQs of
                 * VFs that this cycle creates before the cycle ends and lists them in owned-irqs.
                 */
                if (mode == CYCLE_APPLY && !m->once) {
                        r = owned_devices_publish(&m->owned_devices, inv);
                        if (r < 0)
                                log_warning_errno(r, "Failed to publish the devices sriovd manages for irqbalance, ignoring: %m");
                }

                res.n_policy_errors = 0;
                for (size_t k = 0; k < p->n_notes; k++)
                        res.n_policy_errors += p->notes[k].level == NOTE_ERROR;
                if (pass == 0)
                        notes_changed = !m->plan || m->plan->n_notes != p->n_notes;

                if (pass > 0 && manager_verify(m, p, inv, &tried, &res) == 0) {
                        /* Nothing is new. Keep the latest notes with what was done. */
                        if (plan_merge(plan, p) < 0)
                                return log_oom();
                        break;
                }
                res.n_actions += (unsigned) p->n_actions;
                if (mode == CYCLE_APPLY && pass < CYCLE_PASSES_MAX)
                        manager_apply(m, inv, p, &res, &tried);
                /* Such a repair verifies as a drift check does. The caller sets refresh_only again. */
                if (m->refresh_only && !repair_within_named(m, p))
                        m->refresh_only = false;
                refreshable = refresh_shows(p);
                if (!plan)
                        plan = TAKE_PTR(p);
                else if (plan_merge(plan, p) < 0)
                        return log_oom();
                /* Only what was written can have changed what the kernel shows. */
                if (mode != CYCLE_APPLY || pass >= CYCLE_PASSES_MAX || res.n_done + res.n_failed == written)
                        break;
        }

        if (mode == CYCLE_APPLY) {
                /* Notes repeat every cycle, so log them in the first cycle and when they change. */
                if (m->n_cycles == 0 || notes_changed)
                        action_log_notes(inv, plan);
                vf_irq_watch_log_found(m->root, m->allocations, m->n_allocations, m->inventory, inv, plan);
                vf_irq_watch_seen(&m->irq_watch.list, inv);
                r = unmanaged_irqs_save_boot(&m->host.unmanaged, m->root, m->config->state_dir);
                if (r < 0)
                        log_warning_errno(r, "Failed to remember the IRQs the kernel will not move, ignoring: %m");
                host_memory_save_dirty(&m->host);
                m->expect_changes = false;
                pci_set_clear(&m->expect_vfs);
                /* The RT guests' placement drifts too, for example through virsh vcpupin or an edited definition. */
                guests_check_placements(m->guests);
                /* Released VFs that no guest holds any more were cleaned in this cycle, so their entries can go. */
                for (size_t i = 0; i < m->n_released;)
                        if (!pci_set_contains(&m->held, m->released[i].vf))
                                m->released[i] = m->released[--m->n_released];
                        else
                                i++;
        }

        m->n_cycles++;
        m->last = res;
        if (m->once) {
                m->once_total.n_actions += res.n_actions;
                m->once_total.n_done += res.n_done;
                m->once_total.n_skipped += res.n_skipped;
                m->once_total.n_failed += res.n_failed;
                m->once_total.n_drift = res.n_drift;
                m->once_total.n_policy_errors = res.n_policy_errors;
        }
        _cleanup_(inventory_freep) Inventory *old = m->inventory;
        m->inventory = TAKE_PTR(inv);
        r = manager_keep_plan(m, &plan);
        if (r < 0)
                return log_oom();
        /* Emit DeviceAdded and DeviceRemoved for what the kernel's device events or a drift check brought. */
        if (mode == CYCLE_APPLY && old && m->event_fn) {
                manager_emit_devices(m, m->inventory, old, MANAGER_EVENT_DEVICE_ADDED);
                manager_emit_devices(m, old, m->inventory, MANAGER_EVENT_DEVICE_REMOVED);
        }
        if (mode == CYCLE_APPLY)
                manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
        if (ret)
                *ret = res;
        return 0;
}
