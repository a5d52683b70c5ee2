/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests.c — the libvirt side of tenants: their NICs in their domains, the running domains and libvirt's events */

#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guests-internal.h"

Virt *guests_virt(const Guests *g) {
        return g->virt;
}

const Config *guests_config(const Guests *g) {
        return g->hooks.config(g->hooks.userdata);
}

const Inventory *guests_inventory(const Guests *g) {
        return g->hooks.inventory(g->hooks.userdata);
}

size_t guests_n_tenants(const Guests *g) {
        const Tenants *t = g->hooks.tenants(g->hooks.userdata);

        return t ? tenants_count(t) : 0;
}

int guests_tenant(const Guests *g, size_t i, TenantInfo *ret) {
        const Tenants *t = g->hooks.tenants(g->hooks.userdata);

        return t ? tenants_nth(t, guests_inventory(g), i, ret) : -ERANGE;
}

Running *guests_running_find(const Guests *g, const char *domain) {
        for (size_t i = 0; g && domain && domain[0] && i < g->n_running; i++)
                if (virt_domain_ref_is(domain, g->running[i].domain, g->running[i].uuid))
                        return &g->running[i];
        return NULL;
}

int guests_vcpu0_cpu(const Guests *g, const char *domain) {
        const Running *run = guests_running_find(g, domain);
        return run ? run->vcpu0_cpu : -1;
}

pid_t guests_qemu_pid(const Guests *g, const char *domain) {
        const Running *run = guests_running_find(g, domain);
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

int guests_virtio_outbound(const TenantClass *cls, const TxRates *own) {
        int min_rate, max_rate;

        /* virtio-net has no minimum to promise. Its cap is tc's on the tap, which libvirt sets. */
        tx_rates_resolve(own, cls, -1, -1, &min_rate, &max_rate);
        return max_rate > 0 ? max_rate * 125 : max_rate;
}

int guests_nic_for(const TenantClass *cls, const char *tenant, const char *vf, const TenantNicFacts *f, VirtNic *ret) {
        VirtNic n = VIRT_NIC_INIT;

        if (vf && vf[0]) {
                n.kind = cls && cls->vf_attach_hostdev ? VIRT_NIC_VF_HOSTDEV : VIRT_NIC_VF_INTERFACE;
                strscpy(n.vf, sizeof(n.vf), vf);
                n.vlan = f->vlan > 0 ? f->vlan : -1;
        } else {
                n.kind = cls && cls->virtio_bridge ? VIRT_NIC_VIRTIO_BRIDGE : VIRT_NIC_VIRTIO_NETWORK;
                strscpy(n.source, sizeof(n.source), cls ? cls->virtio_source : "default");
                n.outbound_average = (unsigned) MAX(guests_virtio_outbound(cls, &f->tx_rates), 0);
        }
        strscpy(n.mac, sizeof(n.mac), f->mac);
        *ret = n;
        return virt_nic_set_alias(ret, tenant);
}

static void learn_running(Guests *g, const char *domain);

static int on_reconcile_defer(sd_event_source *s, void *userdata) {
        guests_reconcile(userdata);
        return 0;
}

/* Runs the reconcile from the event loop, not inside the decision or event being handled,
 * because the reconcile may make more decisions. */
void guests_reconcile_soon(Guests *g) {
        if (!g)
                return;
        if (!g->event) {
                guests_reconcile(g);
                return;
        }
        if (!g->reconcile_defer && sd_event_add_defer(g->event, &g->reconcile_defer, on_reconcile_defer, g) < 0)
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
        const TenantClass *cls = config_find_class(guests_config(g), f->class_name);
        VirtNic old_nic, new_nic;
        bool have_old, have_new;
        VirtError err = {}, err_back = {};
        int r = 0;

        if (!g->virt || !f->domain[0] || d->kind == ALLOC_DECISION_REFUSED)
                return;
        if (d->kind == ALLOC_DECISION_RT_CPUS) {
                /* The guest's RT CPUs changed but its NIC did not. So the guest is placed on its new booking. */
                guests_place_guest(g, f->domain);
                return;
        }

        /* Before the decision, the tenant had its VF, or virtio-net if it is upgraded from it.
         * After the decision, it has its VF, virtio-net, or nothing. */
        have_old = d->old_vf[0] || d->kind == ALLOC_DECISION_UPGRADE ||
                   (d->kind == ALLOC_DECISION_RELEASED && !d->old_vf[0]);
        have_new = d->new_vf[0] || d->kind == ALLOC_DECISION_VIRTIO || d->kind == ALLOC_DECISION_DOWNGRADE;
        if ((have_old && guests_nic_for(cls, d->tenant, d->old_vf, f, &old_nic) < 0) ||
            (have_new && guests_nic_for(cls, d->tenant, d->new_vf, f, &new_nic) < 0))
                return;

        /* The VF must carry nothing of its previous tenant into this tenant's guest. A failure is logged. */
        if (d->new_vf[0])
                (void) g->hooks.prepare_vf(d->tenant, d->new_vf, f, g->hooks.userdata);

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
                guests_reconcile_soon(g);
        if (d->kind == ALLOC_DECISION_RELEASED && d->rt_changed && d->n_rt_cpus == 0)
                guests_unplace_rt_guest(g, d, f, cls);

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
                        g->hooks.watch_irqs(f->domain, NULL, g->hooks.userdata);
        }
}

/* Called when the domain with name and uuid runs. It places the RT guest and learns vCPU 0's CPU.
 * Placing again is safe, because placing is idempotent. */
static void learn_running_id(Guests *g, const char *name, const char *uuid) {
        VirtError err = {};
        int cpu;

        /* vCPU 0's CPU is read after the RT placement has put it where it goes.
         * The vhost workers are placed once the domain is known to run. */
        guests_place_rt_guest(g, name, uuid);
        cpu = virt_vcpu0_host_cpu(g->virt, name, &err);
        if (cpu >= 0)
                running_learn(g, name, uuid, cpu);
        guests_place_guest_vhost(g, name, uuid);
}

/* The same for a domain as a tenant names it, by name or by UUID. */
static void learn_running(Guests *g, const char *domain) {
        char name[VIRT_DOMAIN_NAME_MAX], uuid[VIRT_UUID_STRING_MAX];

        if (guests_domain_id(g, domain, name, uuid))
                learn_running_id(g, name, uuid);
}

/*
 * A domain started. Its RT tenants are pinned, vCPU 0's CPU is learned, and the IRQ placement is
 * done again. The VFs' vectors come later, when the guest's driver enables MSI-X. So
 * vf-irq-watch.c looks for them.
 */
static void on_started(Guests *g, const char *name, const char *uuid) {
        learn_running_id(g, name, uuid);
        g->hooks.recheck("libvirt domain started", g->hooks.userdata);
        g->hooks.watch_irqs(name, uuid, g->hooks.userdata);
}

/* Tenants whose domain is gone give their NIC back, whether they name it by name or by UUID.
 * So do tenants whose domain stopped, when release_on_stop says so. */
static void release_domain(Guests *g, const char *domain, const char *uuid, const char *why) {
        for (size_t i = 0; i < guests_n_tenants(g);) {
                TenantInfo t;

                if (guests_tenant(g, i, &t) < 0)
                        break;
                if (!virt_domain_ref_is(tenant_domain_ref(&t), domain, uuid)) {
                        i++;
                        continue;
                }
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.tenant = t.tenant), "Tenant %s: domain %s %s, released",
                               t.tenant, domain, why);
                if (g->hooks.release(t.tenant, g->hooks.userdata) < 0)
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
        g->hooks.recheck("libvirt vCPU pinning changed", g->hooks.userdata);
}

/* Called once connected. It logs this once and catches up with what happened in the meantime. */
static void guests_connected(Guests *g) {
        log_full_errno(LOG_INFO, 0, LOG_FIELDS(), "Connected to libvirt at %s%s",
                       guests_config(g)->libvirt_uri, g->n_failed > 0 ? " after retrying" : "");
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
                if (guests_config(g)->release_on_stop)
                        release_domain(g, ev->domain, ev->uuid, "stopped");
                guests_reconcile_soon(g);
                g->hooks.recheck("libvirt domain stopped", g->hooks.userdata);
                break;
        case VIRT_EVENT_UNDEFINED:
                (void) running_set(g, ev->domain, NULL, -1);   /* a removal, which cannot fail */
                release_domain(g, ev->domain, ev->uuid, "undefined");
                guests_reconcile_soon(g);
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
                guests_reconcile_soon(g);
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
                               guests_config(g)->libvirt_uri, ev->detail_str);
                break;
        default:
                break;
        }
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
        g->hooks.recheck("libvirt connected", g->hooks.userdata);
}

/* Allocates a Guests that is not connected yet. libvirt's events are registered on the event loop e. */
static int guests_alloc(sd_event *e, RootFs *root, const GuestsHooks *hooks, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        int r;

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->event = e;
        g->root = root;
        g->hooks = *hooks;
        r = virt_event_register(e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(g);
        return 0;
}

/* Connects on the calling thread, for --once. */
int guests_new(sd_event *e, RootFs *root, const GuestsHooks *hooks, const char *uri, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        VirtError err = {};
        int r;

        r = guests_alloc(e, root, hooks, &g);
        if (r < 0)
                return r;
        r = virt_new(e, uri, on_virt_event, g, &g->virt, &err);
        if (r < 0)
                return log_warning_errno(r, "Failed to connect to libvirt at %s: %s", uri, err.message);
        *ret = TAKE_PTR(g);
        return 0;
}

/* The daemon's: connects from the event loop, and never blocks it. */
int guests_start(sd_event *e, RootFs *root, const GuestsHooks *hooks, const char *uri, Guests **ret) {
        _cleanup_(guests_freep) Guests *g = NULL;
        VirtError err = {};
        int r;

        r = guests_alloc(e, root, hooks, &g);
        if (r < 0)
                return r;
        r = virt_start(e, uri, on_virt_event, g, &g->virt, &err);
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
