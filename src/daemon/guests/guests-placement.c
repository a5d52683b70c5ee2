/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests-placement.c — the RT guests' vCPU and vhost placement through libvirt: placed, planned and checked */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "guest-cache.h"
#include "guest-vcpu.h"
#include "guest-vhost.h"

#include "guests-internal.h"

/* What a running guest asks for through one of its tenants: its RT placement and where its vhost workers go. */
typedef struct Wanted {
        GuestPlacement guest;
        VhostPlacement vhost;
} Wanted;

typedef bool (*WantsFn)(Guests *g, const TenantInfo *t, Wanted *ret);

/* The placement that t's guest wants, if t's class pins vCPUs. */
static bool wants_guest(Guests *g, const TenantInfo *t, Wanted *ret) {
        const Inventory *inv = guests_inventory(g);
        const TenantClass *cls = config_find_class(guests_config(g), t->class_name);

        return inv && tenant_domain_ref(t)[0] && cls && cls->vcpu_pin_rt &&
               guest_placement(inv, guests_config(g), cls, t->rt_cpus, t->n_rt_cpus, &ret->guest) >= 0;
}

/* Where t's vhost workers go, if t has virtio-net now and its class places them. */
static bool wants_vhost(Guests *g, const TenantInfo *t, Wanted *ret) {
        const TenantClass *cls = config_find_class(guests_config(g), t->class_name);

        return tenant_domain_ref(t)[0] && streq(t->kind, "virtio") &&
               vhost_placement(guests_inventory(g), guests_config(g), cls, t->rt_cpus,
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
        for (size_t i = 0; i < guests_n_tenants(g); i++)
                if (guests_tenant(g, i, ret_tenant) >= 0 &&
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
        for (size_t i = 0; i < guests_n_tenants(g); i++) {
                TenantInfo t;
                Wanted w;

                if (guests_tenant(g, i, &t) < 0 || !wants(g, &t, &w))
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
        Running *run = guests_running_find(g, domain);
        pid_t hint = run ? run->qemu_pid : 0;
        VirtError err = {};
        size_t n = 0;
        int r;

        r = guest_vcpu_threads_place(g->root, g->virt, domain, t->vf, p, false, &hint, &actions, &n,
                                     &err);
        if (run)
                run->qemu_pid = hint;
        log_thread_actions(actions, n, domain, t, drift);
        if (r < 0)
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant), "Failed to place %s's vCPU threads (tenant %s): %s",
                               domain, t->tenant, err.message[0] ? err.message : strerror(-r));
}

/*
 * Puts the guest's RT vCPU threads in its L3 cache group, as its class's l3_cache_mask asks. A
 * guest without RT CPUs, or whose class names no mask, has no group, and one left over goes.
 */
static void place_cache(Guests *g, const char *domain, const GuestPlacement *p, const TenantInfo *t, bool drift) {
        const TenantClass *cls = config_find_class(guests_config(g), t->class_name);
        uint64_t mask = cls && p->n_rt > 0 ? cls->l3_cache_mask : 0;
        Running *run = guests_running_find(g, domain);
        pid_t hint = run ? run->qemu_pid : 0;
        GuestCacheResult res;
        VirtError err = {};
        int r;

        if (mask == 0) {
                r = guest_cache_remove(g->root, domain, &res);
                if (r > 0)
                        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant[0] ? t->tenant : NULL),
                                       "Domain %s has no RT vCPUs with an L3 mask now: L3 cache group %s removed",
                                       domain, res.group);
                else if (r < 0)
                        log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant[0] ? t->tenant : NULL),
                                       "Failed to remove L3 cache group %s of domain %s: %m", res.group, domain);
                return;
        }
        r = guest_cache_place(g->root, g->virt, domain, mask, p, false, &hint, &res, &err);
        if (run)
                run->qemu_pid = hint;
        if (res.unsupported) {
                if (!g->cache_unsupported_told)
                        log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.tenant = t->tenant),
                                       "L3 cache partitions are not supported here: no /sys/fs/resctrl/info/L3 "
                                       "(the CPU has no CAT, or resctrl is not mounted). Class %s's l3_cache_mask "
                                       "is not applied.", cls->name);
                g->cache_unsupported_told = true;
                return;
        }
        if (res.why[0]) {
                if (!run || !run->cache_misfit_told)
                        log_full_errno(LOG_WARNING, 0, LOG_FIELDS(.tenant = t->tenant),
                                       "Domain %s gets no L3 cache group (tenant %s): %s", domain, t->tenant, res.why);
                if (run)
                        run->cache_misfit_told = true;
                return;
        }
        if (run)
                run->cache_misfit_told = false;
        if (res.created)
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant), "Domain %s: L3 cache group %s made (tenant %s)",
                               domain, res.group, t->tenant);
        if (res.mask_set)
                log_full_errno(drift && !res.created ? LOG_NOTICE : LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant),
                               "%sL3 cache group %s: mask %llx on every L3 domain", drift && !res.created ?
                               "Drift repaired: " : "", res.group, (unsigned long long) mask);
        if (res.n_moved > 0)
                log_full_errno(drift && !res.created ? LOG_NOTICE : LOG_INFO, 0, LOG_FIELDS(.tenant = t->tenant),
                               "%sL3 cache group %s: %u RT vCPU thread(s) of domain %s moved in",
                               drift && !res.created ? "Drift repaired: " : "", res.group, res.n_moved, domain);
        if (r < 0)
                log_full_errno(LOG_ERR, r, LOG_FIELDS(.tenant = t->tenant),
                               "Failed to put %s's RT vCPU threads in L3 cache group %s (tenant %s): %s", domain,
                               res.group, t->tenant, err.message[0] ? err.message : strerror(-r));
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
        else {
                place_vcpu_threads(g, domain, p, t, drift);
                place_cache(g, domain, p, t, drift);
        }
}

/* Places domain's vhost workers on p and records the actions in *actions. With dry_run, they are only planned. */
static int vhost_actions(Guests *g, Running *run, const VhostPlacement *p, bool dry_run, Action **actions,
                         size_t *n_actions, VirtError *err) {
        return guest_vhost_place(g->root, g->virt, run->domain, p, dry_run, &run->qemu_pid, actions,
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

void guests_place_rt_guest(Guests *g, const char *name, const char *uuid) {
        TenantInfo t;
        Wanted w;

        if (g->virt && virt_is_connected(g->virt) && domain_wants(g, name, uuid, wants_guest, &w, &t))
                place_with(g, name, &w.guest, &t, false);
}

/* Places a running domain's vhost workers as its virtio-net tenant's class wants them. */
void guests_place_guest_vhost(Guests *g, const char *name, const char *uuid) {
        Running *run = guests_running_find(g, name);
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
void guests_unplace_rt_guest(Guests *g, const AllocDecision *d, const TenantNicFacts *f, const TenantClass *cls) {
        const Inventory *inv = guests_inventory(g);
        VirtError err = {};
        TenantInfo t = {};
        GuestPlacement p;
        int r;

        if (!cls || !cls->vcpu_pin_rt || !inv || guest_placement(inv, guests_config(g), cls, NULL, 0, &p) < 0)
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
bool guests_domain_id(Guests *g, const char *domain, char name[static VIRT_DOMAIN_NAME_MAX],
                      char uuid[static VIRT_UUID_STRING_MAX]) {
        VirtError err = {};

        return g->virt && virt_is_connected(g->virt) && virt_domain_id(g->virt, domain, name, uuid, &err) >= 0;
}

/* Places domain as its tenants want it: the RT guest and its vhost workers. */
void guests_place_guest(Guests *g, const char *domain) {
        char name[VIRT_DOMAIN_NAME_MAX], uuid[VIRT_UUID_STRING_MAX];

        if (!guests_domain_id(g, domain, name, uuid))
                return;
        guests_place_rt_guest(g, name, uuid);
        guests_place_guest_vhost(g, name, uuid);
}

/* Appends a note to plan, once: the same text for the same target is not repeated. */
_printf_(4, 5) static int plan_note(Plan *plan, NoteLevel level, const char *target, const char *fmt, ...) {
        PlanNote note = { .level = level }, *n;
        va_list ap;

        strscpy(note.target, sizeof(note.target), target);
        va_start(ap, fmt);
        vsnprintf(note.text, sizeof(note.text), fmt, ap);
        va_end(ap);
        for (size_t i = 0; i < plan->n_notes; i++)
                if (streq(plan->notes[i].text, note.text) && streq(plan->notes[i].target, note.target))
                        return 0;
        n = reallocarray(plan->notes, plan->n_notes + 1, sizeof(PlanNote));
        if (!n)
                return -ENOMEM;
        plan->notes = n;
        plan->notes[plan->n_notes++] = note;
        return 0;
}

/* What the guest's L3 cache group would need, as notes: a group to make, or a mask that does not fit. */
static int plan_cache(Guests *g, Running *run, const GuestPlacement *p, const TenantInfo *t, Plan *plan) {
        const TenantClass *cls = config_find_class(guests_config(g), t->class_name);
        GuestCacheResult res;
        VirtError err = {};

        if (!cls || cls->l3_cache_mask == 0 || p->n_rt == 0 ||
            guest_cache_place(g->root, g->virt, run->domain, cls->l3_cache_mask, p, true, &run->qemu_pid, &res,
                              &err) < 0 || res.unsupported)
                return 0;
        if (res.why[0])
                return plan_note(plan, NOTE_WARNING, t->vf, "domain %.64s gets no L3 cache group: %s", run->domain,
                                 res.why);
        if (res.created)
                return plan_note(plan, NOTE_INFO, t->vf, "domain %.64s: L3 cache group %s with mask %llx, "
                                 "for its RT vCPU threads", run->domain, res.group,
                                 (unsigned long long) cls->l3_cache_mask);
        return 0;
}

/* Whether a class names an L3 mask on a host whose resctrl has no L3: the plan says so once. */
static int plan_cache_unsupported(Guests *g, Plan *plan) {
        const Config *c = guests_config(g);
        CacheInfo info;

        for (size_t i = 0; c && i < c->n_classes; i++)
                if (c->classes[i].l3_cache_mask != 0)
                        return resctrl_info_read(g->root, &info) != -EOPNOTSUPP ? 0 :
                               plan_note(plan, NOTE_WARNING, "", "L3 cache partitions are not supported here: no "
                                         "/sys/fs/resctrl/info/L3; class %s's l3_cache_mask is not applied",
                                         c->classes[i].name);
        return 0;
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
        r = guest_vcpu_threads_place(g->root, g->virt, run->domain, t->vf, &w->guest, true,
                                     &run->qemu_pid, &plan->actions, &plan->n_actions, &err);
        if (r != -ENOMEM)
                r = plan_cache(g, run, &w->guest, t, plan);
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

        r = g ? plan_cache_unsupported(g, plan) : 0;
        if (r >= 0)
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
