/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests.c — the libvirt side of tenants: their NICs in their domains, their vCPUs and the domain lifecycle */

#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "sriovd/guest-vcpu.h"
#include "sriovd/guest-vhost.h"
#include "sriovd/guests.h"
#include "sriovd/log.h"
#include "sriovd/manager.h"
#include "sriovd/vf-irq-watch.h"
#include "sriovd/virt.h"

/* What sriovd knows about a running domain, mainly where its vCPU 0 runs. */
typedef struct Running {
        char domain[VIRT_DOMAIN_NAME_MAX];
        char uuid[VIRT_UUID_STRING_MAX];   /* "" when not known */
        int vcpu0_cpu;
        pid_t qemu_pid;               /* its QEMU's PID as guest-vhost.c last found it, or 0 */
} Running;

/*
 * No connection ever blocks the event loop: the libvirt module opens each one on a thread of its
 * own, with a bound, and retries with backoff. At boot, systemd holds libvirt's socket until
 * sriovd is ready, and libvirt may take its whole start-up time to answer.
 */
struct Guests {
        Manager *manager;
        Virt *virt;
        unsigned n_failed;                /* attempts that failed since the last connection */
        Running *running;
        size_t n_running, allocated_running;
        sd_event_source *reconcile_defer; /* reconciles after a NIC left a guest, or may have left it */
};

Virt *guests_virt(const Guests *g) {
        return g->virt;
}

/* The running domain that domain names, by its name or by its UUID as a tenant may. */
static Running *running_find(const Guests *g, const char *domain) {
        for (size_t i = 0; g && domain && domain[0] && i < g->n_running; i++)
                if (virt_domain_ref_is(domain, g->running[i].domain, g->running[i].uuid))
                        return &g->running[i];
        return NULL;
}

int guests_vcpu0_cpu(const Guests *g, const char *domain) {
        const Running *run = running_find(g, domain);
        return run ? run->vcpu0_cpu : -1;
}

pid_t guests_qemu_pid(const Guests *g, const char *domain) {
        const Running *run = running_find(g, domain);
        return run ? run->qemu_pid : 0;
}

/*
 * Sets the vCPU 0 CPU of the domain with name and uuid, where uuid may be NULL. A cpu below 0
 * drops it. Returns -ENOMEM when a new domain cannot be added.
 */
static int running_set(Guests *g, const char *name, const char *uuid, int cpu) {
        for (size_t i = 0; i < g->n_running; i++)
                if (streq(g->running[i].domain, name)) {
                        if (cpu < 0)
                                g->running[i] = g->running[--g->n_running];
                        else {
                                g->running[i].vcpu0_cpu = cpu;
                                if (uuid && uuid[0])
                                        strscpy(g->running[i].uuid, VIRT_UUID_STRING_MAX, uuid);
                        }
                        return 0;
                }
        if (cpu < 0)
                return 0;
        if (GREEDY_REALLOC(g->running, g->allocated_running, g->n_running + 1) < 0)
                return -ENOMEM;
        g->running[g->n_running] = (Running) { .vcpu0_cpu = cpu };
        strscpy(g->running[g->n_running].uuid, VIRT_UUID_STRING_MAX, uuid ?: "");
        strscpy(g->running[g->n_running++].domain, VIRT_DOMAIN_NAME_MAX, name);
        return 0;
}

/* The same, said in the journal when it fails: the IRQs of the domain's tenants then stay where they are. */
static void running_learn(Guests *g, const char *name, const char *uuid, int cpu) {
        int r = running_set(g, name, uuid, cpu);

        if (r < 0)
                log_warning_errno(r, "%s: failed to remember vCPU 0's host CPU %d, its tenants' IRQs stay "
                                  "where they are until it is read again: %m", name, cpu);
}

/* Builds the NIC that a tenant of cls has: the VF, as an interface or a plain hostdev, or virtio-net. */
static int nic_for(const TenantClass *cls, const char *tenant, const char *vf, const TenantNicFacts *f, VirtNic *ret) {
        VirtNic n = VIRT_NIC_INIT;

        if (vf && vf[0]) {
                n.kind = cls && cls->vf_attach_hostdev ? VIRT_NIC_VF_HOSTDEV : VIRT_NIC_VF_INTERFACE;
                strscpy(n.vf, sizeof(n.vf), vf);
                n.vlan = f->vlan > 0 ? f->vlan : -1;
        } else {
                n.kind = cls && cls->virtio_bridge ? VIRT_NIC_VIRTIO_BRIDGE : VIRT_NIC_VIRTIO_NETWORK;
                strscpy(n.source, sizeof(n.source), cls ? cls->virtio_source : "default");
        }
        strscpy(n.mac, sizeof(n.mac), f->mac);
        *ret = n;
        return virt_nic_set_alias(ret, tenant);
}

static void learn_running(Guests *g, const char *domain);
static void place_guest(Guests *g, const char *domain);
static void place_rt_guest(Guests *g, const char *name, const char *uuid);
static void unplace_rt_guest(Guests *g, const AllocDecision *d, const TenantNicFacts *f, const TenantClass *cls);

static int on_reconcile_defer(sd_event_source *s, void *userdata) {
        guests_reconcile(userdata);
        return 0;
}

/* Runs the reconcile from the event loop, not inside the decision or event being handled,
 * because the reconcile may make more decisions. */
static void reconcile_soon(Guests *g) {
        sd_event *e = manager_event_loop(g->manager);

        if (!e) {
                guests_reconcile(g);
                return;
        }
        if (!g->reconcile_defer && sd_event_add_defer(e, &g->reconcile_defer, on_reconcile_defer, g) < 0)
                return;
        (void) sd_event_source_set_enabled(g->reconcile_defer, SD_EVENT_ONESHOT);
}

bool guests_domain_running(Guests *g, const char *domain) {
        VirtError err = {};

        /* While libvirt is away, a domain counts as running. The reconcile at connection finds out. */
        if (!g || !domain || !domain[0])
                return false;
        if (!g->virt || !virt_is_connected(g->virt))
                return true;
        return virt_domain_is_active(g->virt, domain, &err) != 0;
}

void guests_on_decision(Guests *g, const AllocDecision *d, const TenantNicFacts *f) {
        const TenantClass *cls = config_find_class(manager_config(g->manager), f->class_name);
        VirtNic old_nic, new_nic;
        bool have_old, have_new;
        VirtError err = {}, err_back = {};
        int r = 0;

        if (!g->virt || !f->domain[0] || d->kind == ALLOC_DECISION_REFUSED)
                return;
        if (d->kind == ALLOC_DECISION_RT_CPUS) {
                /* The guest's RT CPUs changed but its NIC did not. So the guest is placed on its new booking. */
                place_guest(g, f->domain);
                return;
        }

        /* Before the decision, the tenant had its VF, or virtio-net if it is upgraded from it.
         * After the decision, it has its VF, virtio-net, or nothing. */
        have_old = d->old_vf[0] || d->kind == ALLOC_DECISION_UPGRADE ||
                   (d->kind == ALLOC_DECISION_RELEASED && !d->old_vf[0]);
        have_new = d->new_vf[0] || d->kind == ALLOC_DECISION_VIRTIO || d->kind == ALLOC_DECISION_DOWNGRADE;
        if ((have_old && nic_for(cls, d->tenant, d->old_vf, f, &old_nic) < 0) ||
            (have_new && nic_for(cls, d->tenant, d->new_vf, f, &new_nic) < 0))
                return;

        /* The VF must carry nothing of its previous tenant into this tenant's guest. A failure is logged. */
        if (d->new_vf[0])
                (void) manager_prepare_vf(g->manager, d->tenant, d->new_vf, f);

        if (have_old && have_new) {
                VirtSwapResult res;

                r = virt_swap(g->virt, f->domain, &old_nic, &new_nic, &res, &err, &err_back);
                if (r >= 0 && res != VIRT_SWAP_DONE && res != VIRT_SWAP_PENDING)
                        log_full_errno(LOG_ERR, err.error, LOG_FIELDS(.tenant = d->tenant),
                                       "Tenant %s in %s: NIC swap %s: %s%s%s", d->tenant, f->domain,
                                       virt_swap_result_to_string(res), err.message, err_back.message[0] ? "; " : "",
                                       err_back.message);
        } else if (have_new)
                r = virt_attach(g->virt, f->domain, &new_nic, &err);
        else if (have_old)
                r = virt_detach(g->virt, f->domain, &old_nic, &err);
        /* A VF released from a running guest belongs to no one until the guest has let go of it.
         * So look again soon. */
        if (d->kind == ALLOC_DECISION_RELEASED && d->old_vf[0])
                reconcile_soon(g);
        if (d->kind == ALLOC_DECISION_RELEASED && d->rt_changed && d->n_rt_cpus == 0)
                unplace_rt_guest(g, d, f, cls);

        if (r == -ENOENT)
                log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.tenant = d->tenant),
                               "Tenant %s: domain %s is not defined (yet); its NIC follows when it is", d->tenant,
                               f->domain);
        else if (r < 0) {
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = d->tenant, .vf = d->new_vf[0] ? d->new_vf : NULL),
                               "Tenant %s: failed to change its NIC in %s: %s", d->tenant, f->domain,
                               err.message[0] ? err.message : strerror(-r));
                /* The RT CPUs are booked whether or not the NIC got in. So a running guest goes onto
                 * them now. The next drift check would otherwise call its first placement drift. */
                if (have_new && guests_domain_running(g, f->domain))
                        learn_running(g, f->domain);
        } else {
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = d->tenant),
                               "Tenant %s: NIC %s%s%s in domain %s", d->tenant, have_old ? old_nic.alias : "",
                               have_old && have_new ? " -> " : "", have_new ? new_nic.alias : "", f->domain);
                /* A guest that already runs gets no STARTED event. So its RT tenants are pinned,
                 * and its vCPU 0 is learned, now. */
                if (have_new)
                        learn_running(g, f->domain);
                /* A VF hot-plugged into a running guest gets its vectors when the guest's driver probes it.
                 * So sriovd watches for them. */
                if (have_new && d->new_vf[0])
                        manager_watch_guest_irqs(g->manager, f->domain, NULL);
        }
}

/* What a running guest asks for through one of its tenants: its RT placement and where its vhost workers go. */
typedef struct Wanted {
        GuestPlacement guest;
        VhostPlacement vhost;
} Wanted;

typedef bool (*WantsFn)(Guests *g, const TenantInfo *t, Wanted *ret);

/* The placement that t's guest wants, if t's class pins vCPUs. */
static bool wants_guest(Guests *g, const TenantInfo *t, Wanted *ret) {
        const Inventory *inv = manager_inventory(g->manager);
        const TenantClass *cls = config_find_class(manager_config(g->manager), t->class_name);

        return inv && tenant_domain_ref(t)[0] && cls && cls->vcpu_pin_rt &&
               guest_placement(inv, manager_config(g->manager), cls, t->rt_cpus, t->n_rt_cpus, &ret->guest) >= 0;
}

/* Where t's vhost workers go, if t has virtio-net now and its class places them. */
static bool wants_vhost(Guests *g, const TenantInfo *t, Wanted *ret) {
        const TenantClass *cls = config_find_class(manager_config(g->manager), t->class_name);

        return tenant_domain_ref(t)[0] && streq(t->kind, "virtio") &&
               vhost_placement(manager_inventory(g->manager), manager_config(g->manager), cls, t->rt_cpus,
                               t->n_rt_cpus, t->numa_node, &ret->vhost);
}

/*
 * Finds the first tenant of the domain with name and uuid that wants something. A tenant names
 * its domain either way. Tenants are in ID order, so this is always the same tenant. Its class
 * decides for the whole guest. Returns false when no tenant wants anything, so there is nothing
 * to place.
 */
static bool domain_wants(Guests *g, const char *name, const char *uuid, WantsFn wants, Wanted *ret,
                         TenantInfo *ret_tenant) {
        for (size_t i = 0; i < manager_n_tenants(g->manager); i++)
                if (manager_tenant(g->manager, i, ret_tenant) >= 0 &&
                    virt_domain_ref_is(tenant_domain_ref(ret_tenant), name, uuid) &&
                    wants(g, ret_tenant, ret))
                        return true;
        return false;
}

typedef int (*RunningGuestFn)(Guests *g, Running *r, const Wanted *w, const TenantInfo *t, void *userdata);

/* Calls fn for each running guest that wants something, with the tenant that domain_wants() would find.
 * It makes one pass over the tenants. */
static int for_each_running_guest(Guests *g, WantsFn wants, RunningGuestFn fn, void *userdata) {
        _cleanup_free_ bool *done = NULL;
        int r;

        if (!g || !g->virt || !virt_is_connected(g->virt) || g->n_running == 0)
                return 0;
        done = calloc(g->n_running, sizeof(bool));
        if (!done)
                return -ENOMEM;
        for (size_t i = 0; i < manager_n_tenants(g->manager); i++) {
                TenantInfo t;
                Wanted w;

                if (manager_tenant(g->manager, i, &t) < 0 || !wants(g, &t, &w))
                        continue;
                for (size_t k = 0; k < g->n_running; k++)
                        if (!done[k] && virt_domain_ref_is(tenant_domain_ref(&t), g->running[k].domain,
                                                           g->running[k].uuid)) {
                                done[k] = true;
                                r = fn(g, &g->running[k], &w, &t, userdata);
                                if (r < 0)
                                        return r;
                                break;
                        }
        }
        return 0;
}

static const char *place_kind_to_string(VirtPlaceKind k) {
        static const char *const table[] = {
                [VIRT_PLACE_VCPU_PIN] = "vCPU",
                [VIRT_PLACE_EMULATOR_PIN] = "emulator",
                [VIRT_PLACE_IOTHREAD_PIN] = "iothread",
                [VIRT_PLACE_VCPU_SCHED] = "vcpusched",
                [VIRT_PLACE_NUMATUNE] = "numatune",
        };
        return (unsigned) k < ELEMENTSOF(table) ? table[k] : "?";
}

static ActionKind place_action_kind(VirtPlaceKind k) {
        switch (k) {
        case VIRT_PLACE_VCPU_PIN:
                return ACTION_SET_VCPU_PIN;
        case VIRT_PLACE_EMULATOR_PIN:
                return ACTION_SET_EMULATOR_PIN;
        case VIRT_PLACE_IOTHREAD_PIN:
                return ACTION_SET_IOTHREAD_PIN;
        case VIRT_PLACE_VCPU_SCHED:
                return ACTION_SET_VCPU_SCHED;
        case VIRT_PLACE_NUMATUNE:
                break;
        }
        return ACTION_SET_NUMATUNE;
}

/* Turns a change into a plan action, which is what Plan and the journal show. */
static void place_action(const char *domain, const char *vf, const VirtPlaceChange *c, Action *ret) {
        *ret = (Action) { .kind = place_action_kind(c->kind), .vcpu = c->index, .cpus_before = c->before,
                          .cpus_after = c->after };
        strscpy(ret->target, sizeof(ret->target), vf ?: "");
        if (c->kind == VIRT_PLACE_VCPU_SCHED) {
                ret->before = c->prio_before;
                ret->after = c->prio_after;
        } else if (c->kind == VIRT_PLACE_NUMATUNE) {
                ret->before = c->node_before;
                ret->after = c->node_after;
        }
        if (c->kind == VIRT_PLACE_VCPU_PIN || c->kind == VIRT_PLACE_IOTHREAD_PIN)
                snprintf(ret->effect, sizeof(ret->effect), "domain %.48s %s %u", domain, place_kind_to_string(c->kind),
                         c->index);
        else
                snprintf(ret->effect, sizeof(ret->effect), "domain %.48s%s", domain,
                         c->kind == VIRT_PLACE_VCPU_SCHED || c->kind == VIRT_PLACE_NUMATUNE ? ", from its next start" : "");
}

/* Logs a change made or planned on domain's behalf, once.
 * With drift set, the guest was placed before and has moved since. */
static void log_change(const Action *a, const TenantInfo *t, bool drift) {
        char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX];

        log_full_errno(drift ? LOG_NOTICE : LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant), "%s%s: %s: %s -> %s",
                       drift ? "Drift repaired: " : "", action_kind_to_string(a->kind), a->effect,
                       action_format_value(a, false, before, sizeof(before)),
                       action_format_value(a, true, after, sizeof(after)));
}

/* Logs the thread actions taken on domain's behalf, for vhost workers and vCPU threads.
 * Each change and each failure is logged once. */
static void log_thread_actions(const Action *actions, size_t n, const char *domain, const TenantInfo *t, bool drift) {
        for (size_t i = 0; i < n; i++)
                if (actions[i].result > 0)
                        log_change(&actions[i], t, drift);
                else if (actions[i].result < 0)
                        log_full_errno(LOG_ERR, actions[i].result, LOG_FIELDS(.tenant = t->tenant),
                                       "Failed to place %s's thread %d (%s, tenant %s): %m", domain,
                                       (int) actions[i].pid, action_kind_to_string(actions[i].kind), t->tenant);
}

/* Sets a running domain's vCPU threads to p's scheduling now.
 * <vcpusched> would give it to them only from the domain's next start. */
static void place_vcpu_threads(Guests *g, const char *domain, const GuestPlacement *p, const TenantInfo *t,
                               bool drift) {
        _cleanup_free_ Action *actions = NULL;
        Running *run = running_find(g, domain);
        pid_t hint = run ? run->qemu_pid : 0;
        VirtError err = {};
        size_t n = 0;
        int r;

        r = guest_vcpu_threads_place(manager_root(g->manager), g->virt, domain, t->vf, p, false, &hint, &actions, &n,
                                     &err);
        if (run)
                run->qemu_pid = hint;
        log_thread_actions(actions, n, domain, t, drift);
        if (r < 0)
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant), "Failed to place %s's vCPU threads (tenant %s): %s",
                               domain, t->tenant, err.message[0] ? err.message : strerror(-r));
}

/* Puts domain's RT guest on placement p. This is read-modify-write, so only what differs changes. */
static void place_with(Guests *g, const char *domain, const GuestPlacement *p, const TenantInfo *t, bool drift) {
        _cleanup_(virt_place_changes_done) VirtPlaceChanges ch = {};
        VirtError err = {};
        int r;

        r = virt_place_guest(g->virt, domain, p, false, &ch, &err);
        for (size_t i = 0; i < ch.n; i++) {
                Action a;

                place_action(domain, t->vf, &ch.changes[i], &a);
                log_change(&a, t, drift);
        }
        if (r < 0)
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant), "Failed to place %s (tenant %s's guest): %s",
                               domain, t->tenant, err.message);
        else
                place_vcpu_threads(g, domain, p, t, drift);
}

/* Places domain's vhost workers on p and records the actions in *actions. With dry_run, they are only planned. */
static int vhost_actions(Guests *g, Running *run, const VhostPlacement *p, bool dry_run, Action **actions,
                         size_t *n_actions, VirtError *err) {
        return guest_vhost_place(manager_root(g->manager), g->virt, run->domain, p, dry_run, &run->qemu_pid, actions,
                                 n_actions, err);
}

static int place_vhost(Guests *g, Running *run, const VhostPlacement *p, const TenantInfo *t, bool drift) {
        _cleanup_free_ Action *actions = NULL;
        VirtError err = {};
        size_t n = 0;
        int r;

        r = vhost_actions(g, run, p, false, &actions, &n, &err);
        log_thread_actions(actions, n, run->domain, t, drift);
        if (r < 0)
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant), "Failed to place %s's vhost threads (tenant %s): %s",
                               run->domain, t->tenant, err.message[0] ? err.message : strerror(-r));
        return r == -ENOMEM ? r : 0;
}

static void place_rt_guest(Guests *g, const char *name, const char *uuid) {
        TenantInfo t;
        Wanted w;

        if (g->virt && virt_is_connected(g->virt) && domain_wants(g, name, uuid, wants_guest, &w, &t))
                place_with(g, name, &w.guest, &t, false);
}

/* Places a running domain's vhost workers as its virtio-net tenant's class wants them. */
static void place_guest_vhost(Guests *g, const char *name, const char *uuid) {
        Running *run = running_find(g, name);
        TenantInfo t;
        Wanted w;

        if (run && g->virt && virt_is_connected(g->virt) && domain_wants(g, name, uuid, wants_vhost, &w, &t) &&
            place_vhost(g, run, &w.vhost, &t, false) < 0)
                log_oom();
}

/*
 * The guest's last RT tenant was released, so its RT CPUs are free for the next guest. The guest
 * leaves them and goes back to the placement that its class gives it with no CPUs booked. Every
 * vCPU goes on the housekeeping CPUs. Where the class set SCHED_FIFO, vcpusched is removed and the
 * running vCPU threads go back to SCHED_OTHER. numatune stays, because the memory is where it is.
 */
static void unplace_rt_guest(Guests *g, const AllocDecision *d, const TenantNicFacts *f, const TenantClass *cls) {
        const Inventory *inv = manager_inventory(g->manager);
        VirtError err = {};
        TenantInfo t = {};
        GuestPlacement p;
        int r;

        if (!cls || !cls->vcpu_pin_rt || !inv || guest_placement(inv, manager_config(g->manager), cls, NULL, 0, &p) < 0)
                return;
        r = virt_is_connected(g->virt) ? virt_domain_is_active(g->virt, f->domain, &err) : -ENOTCONN;
        if (r == -ENOENT)
                return;   /* The domain is not defined, so there is nothing left to place. */
        if (r < 0) {
                log_full_errno(LOG_WARNING, r, LOG_FIELDS(.tenant = d->tenant),
                               "Tenant %s released: domain %s keeps its RT placement, "
                               "because libvirt could not be asked: %s",
                               d->tenant, f->domain, err.message[0] ? err.message : strerror(-r));
                return;
        }
        strscpy(t.tenant, sizeof(t.tenant), d->tenant);
        strscpy(t.vf, sizeof(t.vf), d->old_vf);
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = d->tenant),
                       "Tenant %s released: domain %s leaves its RT CPUs (vCPUs on housekeeping CPUs%s)", d->tenant,
                       f->domain, p.fifo_priority < 0 ? ", no SCHED_FIFO" : "");
        place_with(g, f->domain, &p, &t, false);
}

/*
 * Finds the name and UUID of the domain that domain names, by name or by UUID. Returns false
 * when libvirt is away or the domain is not defined, and then there is nothing to place.
 */
static bool domain_id(Guests *g, const char *domain, char name[static VIRT_DOMAIN_NAME_MAX],
                      char uuid[static VIRT_UUID_STRING_MAX]) {
        VirtError err = {};

        return g->virt && virt_is_connected(g->virt) && virt_domain_id(g->virt, domain, name, uuid, &err) >= 0;
}

/* Places domain as its tenants want it: the RT guest and its vhost workers. */
static void place_guest(Guests *g, const char *domain) {
        char name[VIRT_DOMAIN_NAME_MAX], uuid[VIRT_UUID_STRING_MAX];

        if (!domain_id(g, domain, name, uuid))
                return;
        place_rt_guest(g, name, uuid);
        place_guest_vhost(g, name, uuid);
}

static int plan_guest(Guests *g, Running *run, const Wanted *w, const TenantInfo *t, void *userdata) {
        _cleanup_(virt_place_changes_done) VirtPlaceChanges ch = {};
        Plan *plan = userdata;
        VirtError err = {};
        Action *a;
        int r;

        if (virt_place_guest(g->virt, run->domain, &w->guest, true, &ch, &err) < 0)
                return 0;
        if (ch.n > 0) {
                a = reallocarray(plan->actions, plan->n_actions + ch.n, sizeof(Action));
                if (!a)
                        return -ENOMEM;
                plan->actions = a;
                for (size_t k = 0; k < ch.n; k++)
                        place_action(run->domain, t->vf, &ch.changes[k], &plan->actions[plan->n_actions++]);
        }
        r = guest_vcpu_threads_place(manager_root(g->manager), g->virt, run->domain, t->vf, &w->guest, true,
                                     &run->qemu_pid, &plan->actions, &plan->n_actions, &err);
        return r == -ENOMEM ? r : 0;
}

static int plan_vhost(Guests *g, Running *run, const Wanted *w, const TenantInfo *t, void *userdata) {
        Plan *plan = userdata;
        VirtError err = {};
        int r;

        r = vhost_actions(g, run, &w->vhost, true, &plan->actions, &plan->n_actions, &err);
        return r == -ENOMEM ? r : 0;
}

int guests_plan_append(Guests *g, Plan *plan) {
        int r;

        r = for_each_running_guest(g, wants_guest, plan_guest, plan);
        if (r >= 0)
                r = for_each_running_guest(g, wants_vhost, plan_vhost, plan);
        return r;
}

static int check_guest(Guests *g, Running *run, const Wanted *w, const TenantInfo *t, void *userdata) {
        place_with(g, run->domain, &w->guest, t, true);
        return 0;
}

static int check_vhost(Guests *g, Running *run, const Wanted *w, const TenantInfo *t, void *userdata) {
        return place_vhost(g, run, &w->vhost, t, true);
}

/* Runs at each drift check. It checks every running guest's placement, and puts back and logs whatever moved. */
void guests_check_placements(Guests *g) {
        if (for_each_running_guest(g, wants_guest, check_guest, NULL) < 0 ||
            for_each_running_guest(g, wants_vhost, check_vhost, NULL) < 0)
                log_oom();
}

/* Called when the domain with name and uuid runs. It places the RT guest and learns vCPU 0's CPU.
 * Placing again is safe, because placing is idempotent. */
static void learn_running_id(Guests *g, const char *name, const char *uuid) {
        VirtError err = {};
        int cpu;

        /* vCPU 0's CPU is read after the RT placement has put it where it goes.
         * The vhost workers are placed once the domain is known to run. */
        place_rt_guest(g, name, uuid);
        cpu = virt_vcpu0_host_cpu(g->virt, name, &err);
        if (cpu >= 0)
                running_learn(g, name, uuid, cpu);
        place_guest_vhost(g, name, uuid);
}

/* The same for a domain as a tenant names it, by name or by UUID. */
static void learn_running(Guests *g, const char *domain) {
        char name[VIRT_DOMAIN_NAME_MAX], uuid[VIRT_UUID_STRING_MAX];

        if (domain_id(g, domain, name, uuid))
                learn_running_id(g, name, uuid);
}

/*
 * A domain started. Its RT tenants are pinned, vCPU 0's CPU is learned, and the IRQ placement is
 * done again. The VFs' vectors come later, when the guest's driver enables MSI-X. So
 * vf-irq-watch.c looks for them.
 */
static void on_started(Guests *g, const char *name, const char *uuid) {
        learn_running_id(g, name, uuid);
        manager_recheck(g->manager, "libvirt domain started");
        manager_watch_guest_irqs(g->manager, name, uuid);
}

/* Tenants whose domain is gone give their NIC back, whether they name it by name or by UUID.
 * So do tenants whose domain stopped, when release_on_stop says so. */
static void release_domain(Guests *g, const char *domain, const char *uuid, const char *why) {
        for (size_t i = 0; i < manager_n_tenants(g->manager);) {
                TenantInfo t;

                if (manager_tenant(g->manager, i, &t) < 0)
                        break;
                if (!virt_domain_ref_is(tenant_domain_ref(&t), domain, uuid)) {
                        i++;
                        continue;
                }
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = t.tenant), "Tenant %s: domain %s %s, released",
                               t.tenant, domain, why);
                if (manager_release(g->manager, t.tenant) < 0)
                        i++;
        }
}

/*
 * Called when vCPU 0 was pinned again, by virsh vcpupin or by sriovd itself, or when the domain
 * resumed. A resume ends an incoming migration, when the vCPUs first run on this host. It learns
 * where vCPU 0 runs now. If that moved, the IRQs of irq_cpus = vcpu classes follow.
 * Only events trigger this, with no periodic refresh, because libvirt's QEMU driver sends the
 * tunable event for every live vcpupin, whoever makes it. Only a driver that never sends the
 * event, such as the test driver, would need a timer. There, vCPU 0 stays as it was learnt at
 * start and at connection. An unpinned vCPU 0 may still wander without any event, so RT guests
 * should be pinned.
 */
static void relearn_vcpu0(Guests *g, const char *domain, const char *uuid) {
        VirtError err = {};
        int cpu, old = guests_vcpu0_cpu(g, domain);

        /* The running list holds running domains only. A config-only change to a shut-off domain stays out. */
        if (old < 0 && virt_domain_is_active(g->virt, domain, &err) != 1)
                return;
        cpu = virt_vcpu0_host_cpu(g->virt, domain, &err);
        if (cpu < 0 || cpu == old)
                return;
        running_learn(g, domain, uuid, cpu);
        if (old >= 0)
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(), "%s: vCPU 0 now on host CPU %d (was %d)", domain, cpu, old);
        else
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(), "%s: vCPU 0 now on host CPU %d", domain, cpu);
        manager_recheck(g->manager, "libvirt vCPU pinning changed");
}

/* Called once connected. It logs this once and catches up with what happened in the meantime. */
static void guests_connected(Guests *g) {
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(), "Connected to libvirt at %s%s",
                       manager_config(g->manager)->libvirt_uri, g->n_failed > 0 ? " after retrying" : "");
        g->n_failed = 0;
        guests_resync(g);
}

static void on_virt_event(const VirtEvent *ev, void *userdata) {
        Guests *g = userdata;

        switch (ev->kind) {
        case VIRT_EVENT_STARTED:
                on_started(g, ev->domain, ev->uuid);
                break;
        case VIRT_EVENT_STOPPED:
                (void) running_set(g, ev->domain, NULL, -1);   /* a removal, which cannot fail */
                if (manager_config(g->manager)->release_on_stop)
                        release_domain(g, ev->domain, ev->uuid, "stopped");
                reconcile_soon(g);
                manager_recheck(g->manager, "libvirt domain stopped");
                break;
        case VIRT_EVENT_UNDEFINED:
                (void) running_set(g, ev->domain, NULL, -1);   /* a removal, which cannot fail */
                release_domain(g, ev->domain, ev->uuid, "undefined");
                reconcile_soon(g);
                break;
        case VIRT_EVENT_DEFINED:
                guests_reconcile(g);
                break;
        case VIRT_EVENT_TUNABLE:
        case VIRT_EVENT_RESUMED:
                relearn_vcpu0(g, ev->domain, ev->uuid);
                break;
        case VIRT_EVENT_DEVICE_REMOVED:
                /* A guest let go of a device. If it was a VF that no tenant holds, it can be given out now. */
                reconcile_soon(g);
                break;
        case VIRT_EVENT_RECONNECTED:
                /* Events were missed while the connection was down.
                 * Domains may have started, stopped, or been given NICs. */
                guests_resync(g);
                break;
        case VIRT_EVENT_DISCONNECTED:
                log_warning("libvirt connection lost (%s); reconnecting", ev->detail_str ?: "?");
                break;
        case VIRT_EVENT_CONNECTED:
                guests_connected(g);
                break;
        case VIRT_EVENT_CONNECT_FAILED:
                /* Said once at warning level; the attempts that follow at debug level. */
                log_full_errno(g->n_failed++ > 0 ? LOG_DEBUG : LOG_WARNING, ev->detail, LOG_FIELDS(),
                               "Failed to connect to libvirt at %s: %s; tenants' NICs are attached once it answers",
                               manager_config(g->manager)->libvirt_uri, ev->detail_str);
                break;
        default:
                break;
        }
}

void guests_reconcile(Guests *g) {
        _cleanup_free_ VirtExpected *expected = NULL;
        _cleanup_free_ TenantInfo *infos = NULL;
        _cleanup_free_ VirtReconcileItem *items = NULL;
        _cleanup_free_ char (*vfs)[PCI_ADDR_MAX] = NULL;
        const Inventory *inv = manager_inventory(g->manager);
        VirtDomainInfo *domains = NULL;
        size_t n = manager_n_tenants(g->manager), k = 0, n_vfs = 0, n_domains = 0, n_items = 0, n_foreign = 0;
        VirtError err = {};
        int r;

        if (!g->virt || !virt_is_connected(g->virt))
                return;
        r = virt_list_domains(g->virt, &domains, &n_domains, &err);
        if (r < 0) {
                log_warning_errno(r, "Failed to list libvirt domains: %s", err.message);
                return;
        }
        expected = calloc(n ?: 1, sizeof(*expected));
        infos = calloc(n ?: 1, sizeof(*infos));
        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                n_vfs += inv->pfs[i].n_vfs;
        vfs = calloc(n_vfs ?: 1, sizeof(*vfs));
        if (!expected || !infos || !vfs) {
                log_warning_errno(-ENOMEM, "Failed to reconcile the NICs in libvirt's domains, "
                                  "retried at the next domain event: %m");
                goto finish;
        }
        for (size_t i = 0; i < n; i++)
                if (manager_tenant(g->manager, i, &infos[k]) >= 0 && tenant_domain_ref(&infos[k])[0]) {
                        expected[k] = (VirtExpected) { infos[k].tenant, infos[k].vf, infos[k].mac,
                                                       tenant_domain_ref(&infos[k]) };
                        k++;
                }
        n_vfs = 0;
        for (size_t i = 0; inv && i < inv->n_pfs; i++)
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++)
                        strscpy(vfs[n_vfs++], PCI_ADDR_MAX, inv->pfs[i].vfs[j].addr);

        r = virt_reconcile(domains, n_domains, expected, k, (const char(*)[PCI_ADDR_MAX]) vfs, n_vfs, &items, &n_items);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < n_items; i++) {
                const VirtReconcileItem *it = &items[i];

                if (it->finding == VIRT_FINDING_OK)
                        continue;
                if (it->finding == VIRT_FINDING_FOREIGN) {
                        /* The VF is still in a guest. The guest has not let go of it after a release,
                         * or sriovd never put it there. Either way, it is given to no one. */
                        if (n_foreign < n_vfs)
                                strscpy(vfs[n_foreign++], PCI_ADDR_MAX, it->vf);
                        log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.vf = it->vf),
                                       "VF %s is in domain %s and no tenant's: given to no one while it is there",
                                       it->vf, it->domain);
                        continue;
                }
                if (it->finding == VIRT_FINDING_MISSING) {
                        /* The NIC was decided and saved, but it is not in the guest, because sriovd or
                         * libvirt was down. Attach it now. */
                        for (size_t j = 0; j < k; j++)
                                if (streq(infos[j].tenant, it->tenant)) {
                                        TenantNicFacts f = { infos[j].class_name, tenant_domain_ref(&infos[j]), "",
                                                             infos[j].vlan };
                                        AllocDecision d = { .kind = infos[j].vf[0] ? ALLOC_DECISION_VF
                                                                                   : ALLOC_DECISION_VIRTIO };
                                        strscpy(f.mac, sizeof(f.mac), infos[j].mac);
                                        strscpy(d.tenant, sizeof(d.tenant), it->tenant);
                                        strscpy(d.new_vf, sizeof(d.new_vf), infos[j].vf);
                                        guests_on_decision(g, &d, &f);
                                }
                        continue;
                }
                /* The other findings need an operator. They are logged, and never resolved by guessing. */
                log_full_errno(it->finding == VIRT_FINDING_DUPLICATE || it->finding == VIRT_FINDING_ELSEWHERE ? LOG_ERR
                                                                                                            : LOG_WARNING,
                               0, LOG_FIELDS(.tenant = it->tenant[0] ? it->tenant : NULL, .vf = it->vf[0] ? it->vf : NULL),
                               "libvirt reconcile: %s: tenant %s, VF %s, in %s (expected %s)",
                               virt_finding_to_string(it->finding), it->tenant[0] ? it->tenant : "-",
                               it->vf[0] ? it->vf : "-", it->domain[0] ? it->domain : "-",
                               it->expected_domain[0] ? it->expected_domain : "-");
        }
        /* vfs no longer serves as the inventory's list. It now holds the foreign VFs. */
        manager_set_vfs_in_guest(g->manager, (const char(*)[PCI_ADDR_MAX]) vfs, n_foreign);
finish:
        virt_domain_list_free(domains, n_domains);
}

/*
 * After a connection or a reconnection, nothing that sriovd learnt from events can be trusted.
 * So the NICs are reconciled, and the running domains' vCPU 0 CPUs and RT pinning are taken from
 * libvirt itself. A restarted sriovd saw no STARTED event for guests that were already running.
 */
void guests_resync(Guests *g) {
        VirtDomainInfo *domains = NULL;
        size_t n_domains = 0;
        VirtError err = {};
        int r;

        if (!g->virt || !virt_is_connected(g->virt))
                return;
        guests_reconcile(g);
        r = virt_list_domains(g->virt, &domains, &n_domains, &err);
        if (r < 0) {
                log_warning_errno(r, "Failed to list libvirt domains: %s", err.message);
                return;
        }
        g->n_running = 0;
        for (size_t i = 0; i < n_domains; i++)
                if (domains[i].active)
                        learn_running_id(g, domains[i].name, domains[i].uuid);
        virt_domain_list_free(domains, n_domains);
        manager_recheck(g->manager, "libvirt connected");
}

/* Allocates a Guests that is not connected yet. libvirt's events are registered on the manager's event loop. */
static int guests_alloc(Manager *m, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        int r;

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->manager = m;
        r = virt_event_register(manager_event_loop(m));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(g);
        return 0;
}

/* Connects on the calling thread, for --once. */
int guests_new(Manager *m, const char *uri, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        VirtError err = {};
        int r;

        r = guests_alloc(m, &g);
        if (r < 0)
                return r;
        r = virt_new(manager_event_loop(m), uri, on_virt_event, g, &g->virt, &err);
        if (r < 0)
                return log_warning_errno(r, "Failed to connect to libvirt at %s: %s", uri, err.message);
        *ret = TAKE_PTR(g);
        return 0;
}

/* The daemon's: connects from the event loop, and never blocks it. */
int guests_start(Manager *m, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        VirtError err = {};
        int r;

        r = guests_alloc(m, &g);
        if (r < 0)
                return r;
        r = virt_start(manager_event_loop(m), manager_config(m)->libvirt_uri, on_virt_event, g, &g->virt, &err);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the libvirt connection: %s", err.message);
        *ret = TAKE_PTR(g);
        return 0;
}

void guests_set_uri(Guests *g, const char *uri) {
        int r;

        if (!g || !g->virt)
                return;
        r = virt_set_uri(g->virt, uri);
        if (r < 0)
                log_warning_errno(r, "Failed to switch to libvirt at %s, staying with the connection in use: %m", uri);
        else if (r > 0)
                log_info("libvirt_uri changed: connecting to %s", uri);
}

bool guests_connected_now(const Guests *g) {
        return g && g->virt && virt_is_connected(g->virt);
}

Guests *guests_free(Guests *g) {
        if (!g)
                return NULL;
        sd_event_source_disable_unref(g->reconcile_defer);
        virt_free(g->virt);
        free(g->running);
        free(g);
        return NULL;
}
