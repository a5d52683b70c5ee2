/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.c — org.sriovd.Manager1 on the system bus, the API that cloud controllers and sriovctl call */

#include <string.h>
#include <systemd/sd-event.h>

#include "bus-internal.h"
#include "sriovd-config.h"
#include "sriovd/allocator.h"
#include "sriovd/bpf-events.h"
#include "sriovd/bus-protocol.h"
#include "sriovd/kernel.h"
#include "sriovd/log.h"

/* A hash of every field that Classes shows. The classes are few, so hashing them all each time is cheap. */
static uint64_t classes_hash(const Config *c) {
        uint64_t h = BUS_HASH_INIT;
        char figures[64];

        for (size_t i = 0; c && i < c->n_classes; i++) {
                const TenantClass *cls = &c->classes[i];

                snprintf(figures, sizeof(figures), "%d %d %u %d %d", (int) cls->vnic, cls->rank,
                         tenant_class_rt_cpus(cls), cls->rt_cpu_fallback != 0, cls->allow_remote_numa != 0);
                h = bus_hash_str(bus_hash_str(h, cls->name), figures);
        }
        return h;
}

static void bus_props_read(Bus *b, BusProps *ret) {
        const Inventory *inv = manager_inventory(b->manager);
        AllocSummary s;
        size_t n;

        manager_alloc_summary(b->manager, &s);
        *ret = (BusProps) {
                .vf_total = s.vfs_total,
                .vf_usable = s.vfs_usable,
                .vf_allocated = s.vfs_allocated,
                .tenants = (unsigned) s.tenants,
                .max_tenants = manager_config(b->manager)->max_tenants ?: ALLOC_TENANTS_DEFAULT,
                .utilization = s.utilization,
                .target = s.target,
                .real_time = inv && inv->caps.preempt_rt,
                .threaded_irqs = inv && inv->caps.threaded_irqs,
                .rtnet_prio = inv && inv->caps.rtnet_prio_present,
                .iommu = inv && inv->caps.iommu,
                .state = manager_state(b->manager),
                .state_reasons_hash = bus_state_reasons_hash(b->manager),
                .classes_hash = classes_hash(manager_config(b->manager)),
        };
        n = manager_rt_nodes(b->manager, ret->rt_nodes, ELEMENTSOF(ret->rt_nodes));
        ret->n_rt_nodes = MIN(n, ELEMENTSOF(ret->rt_nodes));
}

static int append_rt_nodes(sd_bus_message *reply, const BusProps *p) {
        int r = sd_bus_message_open_container(reply, 'a', "a{sv}");

        for (size_t i = 0; r >= 0 && i < p->n_rt_nodes; i++)
                r = bus_append_rt_node_record(reply, &p->rt_nodes[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* The config keeps its classes sorted by name, so the records come in name order. */
static int append_classes(sd_bus_message *reply, const Config *c) {
        int r = sd_bus_message_open_container(reply, 'a', "a{sv}");

        for (size_t i = 0; r >= 0 && c && i < c->n_classes; i++)
                r = bus_append_class_record(reply, &c->classes[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int append_kernel_events(sd_bus_message *reply, const Manager *m) {
        static const char *const kinds[] = { [BPF_FEATURE_LATENCY] = "latency", [BPF_FEATURE_DRIFT] = "drift" };
        char value[200];
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        for (unsigned f = 0; r >= 0 && f < ELEMENTSOF(kinds); f++) {
                const char *why = NULL;

                if (manager_kernel_events(m, f, &why))
                        strscpy(value, sizeof(value), "bpf");
                else
                        snprintf(value, sizeof(value), "off: %s", why ?: "not loaded");
                r = sd_bus_message_append(reply, "{ss}", kinds[f], value);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        BusProps p;

        bus_props_read(b, &p);
        if (streq(property, "Version"))
                return sd_bus_message_append(reply, "s", SRIOVD_VERSION);
        if (streq(property, "ApiVersion"))
                return sd_bus_message_append(reply, "u", (uint32_t) SRIOVD_API_VERSION);
        if (streq(property, "MaxTenants"))
                return sd_bus_message_append(reply, "u", (uint32_t) p.max_tenants);
        if (streq(property, "VfTotal"))
                return sd_bus_message_append(reply, "u", p.vf_total);
        if (streq(property, "VfUsable"))
                return sd_bus_message_append(reply, "u", p.vf_usable);
        if (streq(property, "VfAllocated"))
                return sd_bus_message_append(reply, "u", p.vf_allocated);
        if (streq(property, "Tenants"))
                return sd_bus_message_append(reply, "u", p.tenants);
        if (streq(property, "VfUtilization"))
                return sd_bus_message_append(reply, "d", p.utilization);
        if (streq(property, "VfTarget"))
                return sd_bus_message_append(reply, "d", p.target);
        if (streq(property, "RealTime"))
                return sd_bus_message_append(reply, "b", (int) p.real_time);
        if (streq(property, "ThreadedIrqs"))
                return sd_bus_message_append(reply, "b", (int) p.threaded_irqs);
        if (streq(property, "RtnetPrio"))
                return sd_bus_message_append(reply, "b", (int) p.rtnet_prio);
        if (streq(property, "Iommu"))
                return sd_bus_message_append(reply, "b", (int) p.iommu);
        if (streq(property, "State"))
                return sd_bus_message_append(reply, "s", p.state);
        if (streq(property, "RtCpuNodes"))
                return append_rt_nodes(reply, &p);
        if (streq(property, "Classes"))
                return append_classes(reply, manager_config(b->manager));
        if (streq(property, "StateReasons"))
                return bus_append_state_reasons(reply, b->manager);
        if (streq(property, "ActiveAlerts"))
                return bus_append_active_alerts(reply, manager_alerts(b->manager));
        if (streq(property, "KernelEvents"))
                return append_kernel_events(reply, b->manager);
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

/* Sends one PropertiesChanged signal that names every property changed since the last announcement. */
static void bus_announce_properties(Bus *b) {
        const char *changed[16];
        size_t n = 0;
        BusProps p, *o = &b->announced;
        int r;

        bus_props_read(b, &p);
#define CHANGED(field, name)            \
        if (p.field != o->field)        \
                changed[n++] = name
        CHANGED(vf_total, "VfTotal");
        CHANGED(vf_usable, "VfUsable");
        CHANGED(vf_allocated, "VfAllocated");
        CHANGED(tenants, "Tenants");
        CHANGED(max_tenants, "MaxTenants");
        CHANGED(utilization, "VfUtilization");
        CHANGED(target, "VfTarget");
        CHANGED(real_time, "RealTime");
        CHANGED(threaded_irqs, "ThreadedIrqs");
        CHANGED(rtnet_prio, "RtnetPrio");
        CHANGED(iommu, "Iommu");
#undef CHANGED
        if (!streq_ptr(p.state, o->state))
                changed[n++] = "State";
        if (p.state_reasons_hash != o->state_reasons_hash)
                changed[n++] = "StateReasons";
        if (p.n_rt_nodes != o->n_rt_nodes || memcmp(p.rt_nodes, o->rt_nodes, sizeof(p.rt_nodes)) != 0)
                changed[n++] = "RtCpuNodes";
        if (p.classes_hash != o->classes_hash)
                changed[n++] = "Classes";
        changed[n] = NULL;
        *o = p;
        if (n == 0)
                return;
        r = sd_bus_emit_properties_changed_strv(b->bus, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, (char **) changed);
        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged on D-Bus, ignoring: %m");
}

static int on_flush(sd_event_source *s, void *userdata) {
        bus_objects_flush(userdata);
        return 0;
}

/* Schedules the objects' signals on the event loop instead of sending them now.
 * A decision for one tenant may change others, so the signals wait for all of them. */
static void bus_flush_soon(Bus *b) {
        int r;

        if (!b->flush_defer) {
                r = sd_event_add_defer(manager_event_loop(b->manager), &b->flush_defer, on_flush, b);
                if (r < 0) {
                        bus_objects_flush(b);   /* Without a defer source, send them now. */
                        return;
                }
        }
        (void) sd_event_source_set_enabled(b->flush_defer, SD_EVENT_ONESHOT);
}

/* Sends a change's signals before its reply, so a client that follows the signals is never behind the reply. */
void bus_flush_now(Bus *b) {
        bus_objects_flush(b);
        if (b->flush_defer)
                (void) sd_event_source_set_enabled(b->flush_defer, SD_EVENT_OFF);
}

static void on_manager_event(Manager *m, ManagerEvent e, const char *subject, void *userdata) {
        static const char *const signals[] = {
                [MANAGER_EVENT_ALLOCATION_CHANGED] = "AllocationChanged",
                [MANAGER_EVENT_DEVICE_ADDED] = "DeviceAdded",
                [MANAGER_EVENT_DEVICE_REMOVED] = "DeviceRemoved",
                [MANAGER_EVENT_DRIFT] = "DriftDetected",
        };
        Bus *b = userdata;
        int r;

        if (!b->bus)
                return;   /* sriovd is off the bus, so there is nobody to tell. */

        if (e == MANAGER_EVENT_ALLOCATION_CHANGED && subject)
                bus_objects_mark_tenant(b, subject);
        bus_flush_soon(b);
        if (e == MANAGER_EVENT_STATE_CHANGED) {
                bus_announce_properties(b);
                return;
        }
        if ((size_t) e >= ELEMENTSOF(signals) || !signals[e] || !subject)
                return;
        r = sd_bus_emit_signal(b->bus, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, signals[e], "s", subject);
        if (r < 0)
                log_warning_errno(r, "Failed to emit %s on D-Bus, ignoring: %m", signals[e]);
}

/* ---- Methods that change state: each checks the caller first, then every argument ---- */

static int check_tenant_arg(const char *tenant, sd_bus_error *error) {
        if (!tenant_id_valid(tenant))
                return bus_error_setf(error, -EINVAL, "Invalid tenant id \"%.64s\"; expected [A-Za-z0-9._-]{1,63}",
                                      tenant);
        return 0;
}

static int method_ping(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, NULL);
}

static int method_allocate(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *tenant, *class_name, *domain;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char reason[256] = "", mac[MAC_STR_MAX], done[192];
        TenantOptions opts;
        TenantInfo t;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "sss", &tenant, &class_name, &domain);
        if (r < 0)
                return r;
        r = check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        if (!bus_class_name_valid(class_name))
                return bus_error_setf(error, -EINVAL, "Invalid class name \"%.64s\"; expected [a-z0-9][a-z0-9_-]{0,62}",
                                      class_name);
        if (!bus_domain_valid(domain))
                return bus_error_setf(error, -EINVAL,
                                      "Invalid domain name; expected at most %d of the characters A-Za-z0-9._+:@-",
                                      BUS_DOMAIN_MAX);
        r = bus_read_allocate_options(m, &opts, error);
        if (r < 0)
                return r;
        if (opts.pin_pf[0] && !(manager_inventory(b->manager) && inventory_find_pf(manager_inventory(b->manager), opts.pin_pf)))
                return bus_error_setf(error, -ENODEV, "Option pf: %s is not a PF that sriovd manages", opts.pin_pf);

        r = manager_get_tenant(b->manager, tenant, &t);
        /* A new tenant may not go beyond the configured limit, but an existing tenant may still change. */
        if (r == -ENOENT && manager_n_tenants(b->manager) >= manager_config(b->manager)->max_tenants)
                return bus_error_setf(error, -EUSERS, "Tenant limit of %u reached", manager_config(b->manager)->max_tenants);
        /* Controllers retry. The same request again gets the same answer, without a save or a cycle. */
        if (r >= 0 && streq(t.class_name, class_name) && streq(t.domain, domain) && t.numa_node == opts.numa_node &&
            t.vlan == opts.vlan && (!opts.have_mac || streq(t.mac, mac_format(opts.mac, mac))) &&
            streq(t.pin_pf, opts.pin_pf) && streq(t.domain_uuid, opts.domain_uuid) && streq(t.owner, opts.owner) &&
            streq(t.state, "allocated")) {
                /* The tenant may be part of the group that is not written yet. So the reply waits for that write. */
                r = bus_tenant_record_reply(m, &t, &reply);
                if (r < 0)
                        return r;
                return bus_reply_when_saved(b, m, reply, NULL, NULL, "Allocation not saved, nothing changed", NULL);
        }

        r = manager_allocate(b->manager, tenant, class_name, domain, &opts, &t, reason, sizeof(reason));
        switch (r) {
        case 0:
                break;
        case -ENOENT:
                return bus_error_setf(error, -ENOENT, "No tenant class \"%s\"", class_name);
        case -ENOSPC:
                return bus_error_setf(error, -ENOSPC, "%s", reason[0] ? reason : "no NIC available");
        case -EXFULL:
                return bus_error_setf(error, -EXFULL, "%s", reason[0] ? reason : "no RT CPU free");
        case -EINVAL:
                return bus_error_setf(error, -EINVAL, "Invalid tenant, domain, NUMA node, MAC, VLAN, pf, domain_uuid or owner");
        case -EUSERS:
                return bus_error_setf(error, -EUSERS, "Too many tenants");
        case -EAGAIN:
                return bus_error_setf(error, -EAGAIN, "Tenants are not placed yet; try again shortly");
        default:
                return bus_error_setf(error, -EIO, "Allocation not saved, nothing changed: %s", strerror(-r));
        }
        r = bus_tenant_record_reply(m, &t, &reply);
        if (r < 0)
                return r;
        snprintf(done, sizeof(done), "D-Bus: allocated %s to tenant %s (class %s)", t.vf[0] ? t.vf : t.kind, tenant,
                 class_name);
        /* A new domain or MAC is not an allocator decision, so no event marks the tenant.
         * Passing the tenant here marks it in any case. */
        return bus_reply_when_saved(b, m, reply, tenant, t.vf, "Allocation not saved, nothing changed", done);
}

static int method_release(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char failed[128], done[128];
        const char *tenant;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "s", &tenant);
        if (r < 0)
                return r;
        r = check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        r = manager_release(b->manager, tenant);
        if (r == -ENOENT)
                return bus_error_setf(error, -ESRCH, "No tenant \"%s\"", tenant);
        if (r < 0)
                return bus_error_setf(error, -EIO, "Release of %s not saved: %s", tenant, strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        snprintf(failed, sizeof(failed), "Release of %s not saved", tenant);
        snprintf(done, sizeof(done), "D-Bus: released tenant %s", tenant);
        return bus_reply_when_saved(b, m, reply, tenant, NULL, failed, done);
}

static int method_set_coalesce(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        _cleanup_message_ sd_bus_message *reply = NULL;
        char failed[128];
        const char *tenant;
        uint32_t rx, tx;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "suu", &tenant, &rx, &tx);
        if (r < 0)
                return r;
        r = check_tenant_arg(tenant, error);
        if (r < 0)
                return r;
        r = manager_set_coalesce(b->manager, tenant, rx, tx);
        if (r == -ENOENT)
                return bus_error_setf(error, -ESRCH, "No tenant \"%s\"", tenant);
        if (r == -EINVAL)
                return bus_error_setf(error, -EINVAL, "Coalescing %u/%u us out of range 0..100000", rx, tx);
        if (r == -EMEDIUMTYPE)
                return bus_error_setf(error, -EMEDIUMTYPE,
                                      "Tenant %s is on virtio-net, not a VF: coalescing is set on a VF's netdev, "
                                      "and the virtio-net host side has no interrupt coalescing sriovd manages; "
                                      "nothing changed (an override it had on a VF is kept for its next VF)",
                                      tenant);
        if (r < 0)
                return bus_error_setf(error, -EIO, "Coalescing of %s not saved: %s", tenant, strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        snprintf(failed, sizeof(failed), "Coalescing of %s not saved", tenant);
        return bus_reply_when_saved(b, m, reply, tenant, NULL, failed, NULL);
}

static int method_force_num_vfs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *pf;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "s", &pf);
        if (r < 0)
                return r;
        if (!pci_addr_valid(pf))
                return bus_error_setf(error, -EINVAL, "Invalid PCI address \"%.16s\"; expected e.g. 0000:41:00.0", pf);
        r = manager_force_num_vfs(b->manager, pf);
        if (r == -ENODEV)
                return bus_error_setf(error, -ENODEV, "No managed PF %s", pf);
        if (r < 0)
                return bus_error_setf(error, r, "Failed to force the VF count of %s: %s", pf, strerror(-r));
        log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.pf = pf), "D-Bus: VF count change of %s forced", pf);
        return sd_bus_reply_method_return(m, NULL);
}

/* Runs a cycle now. Whatever the cycle finds different is drift, whether it was repaired or is still there. */
static int method_verify(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_message_ sd_bus_message *reply = NULL;
        Bus *b = userdata;
        CycleResult res = {};
        const Plan *plan;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        r = manager_run_cycle_now(b->manager, &res);
        if (r < 0)
                return bus_error_setf(error, -EIO, "The host could not be observed: %s", strerror(-r));
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                /* An action skipped on purpose is not drift. Fixture threads and a missing netlink are such cases. */
                r = sd_bus_message_append(reply, "uuuu", res.n_actions - res.n_skipped, res.n_done, res.n_failed,
                                          res.n_drift);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        plan = manager_plan(b->manager);
        for (size_t i = 0; r >= 0 && plan && i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                bool irq = a->kind == ACTION_SET_IRQ_AFFINITY || a->kind == ACTION_SET_IRQ_THREAD;
                char before[CPUSET_LIST_MAX], after[CPUSET_LIST_MAX], what[KTHREAD_NAME_MAX + 16], line[CPUSET_LIST_MAX * 2 + 176];

                if (a->skipped)
                        continue;
                if (irq)
                        snprintf(what, sizeof(what), " IRQ %u", a->irq);
                else if (a->thread_name[0])
                        snprintf(what, sizeof(what), " %s", a->thread_name);
                else
                        what[0] = 0;
                snprintf(line, sizeof(line), "%s %s%s: %s -> %s (%s)", action_kind_to_string(a->kind),
                         a->target[0] ? a->target : "host", what,
                         action_format_value(a, false, before, sizeof(before)),
                         action_format_value(a, true, after, sizeof(after)),
                         a->result > 0 ? "repaired" : a->result < 0 ? strerror(-a->result) : "already so");
                r = sd_bus_message_append(reply, "s", line);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* A reply carries at most this many bytes of the FILE:LINE list. The journal has all of it. */
#define RELOAD_ERRORS_MAX 8192

/*
 * Reload is synchronous. The reply comes after the new policy is loaded and a cycle has applied
 * it. On errors, the reply is Failed and lists every FILE:LINE: mistake. So `sriovctl reload`,
 * which ExecReload= runs, can show the mistakes and fail the reload. The operator does not have
 * to dig in the journal.
 */
static int method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *errors = NULL;
        Bus *b = userdata;
        int r;

        r = bus_check_change(b, m, error);
        if (r < 0)
                return r;
        log_info("D-Bus: reload requested by %s", sd_bus_message_get_sender(m) ?: "?");
        r = manager_reload(b->manager, &errors);
        if (r < 0) {
                size_t n = errors ? strlen(errors) : 0;
                if (n == 0)
                        return bus_error_setf(error, -EIO, "The configuration could not be loaded (%s); "
                                              "the running one stays", strerror(-r));
                return bus_error_setf(error, -EIO, "The configuration has errors; the running one stays:\n%.*s%s",
                                      (int) MIN(n, (size_t) RELOAD_ERRORS_MAX), errors,
                                      n > RELOAD_ERRORS_MAX ? "\n... (the rest in the journal)" : "");
        }
        /*
         * The new policy can change what each PF offers, for example when [cpus] rt changes.
         * So its signals go first, as for any change, and a client that reads after the reply is
         * never ahead of them. The Manager's properties, Classes among them, are announced
         * even when the cycle could not run.
         */
        bus_announce_properties(b);
        bus_flush_now(b);
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ApiVersion", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxTenants", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfTotal", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfUsable", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfAllocated", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfUtilization", "d", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfTarget", "d", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Tenants", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RealTime", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ThreadedIrqs", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RtnetPrio", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Iommu", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("State", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RtCpuNodes", "aa{sv}", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Classes", "aa{sv}", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("StateReasons", "as", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ActiveAlerts", "aa{sv}", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("KernelEvents", "a{ss}", property_get, 0, 0),

        /* Without UNPRIVILEGED, sd-bus would demand CAP_SYS_ADMIN. Each method checks access itself. */
        SD_BUS_METHOD_WITH_ARGS("Ping", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_ping, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Allocate",
                                SD_BUS_ARGS("s", tenant, "s", class, "s", domain, "a{sv}", options),
                                SD_BUS_RESULT("a{sv}", tenant_record),
                                method_allocate, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Release", SD_BUS_ARGS("s", tenant), SD_BUS_NO_RESULT, method_release,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetCoalesce", SD_BUS_ARGS("s", tenant, "u", rx_usecs, "u", tx_usecs),
                                SD_BUS_NO_RESULT, method_set_coalesce, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetTenant", SD_BUS_ARGS("s", tenant),
                                SD_BUS_RESULT("a{sv}", tenant_record),
                                bus_method_get_tenant, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListTenants", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", tenants),
                                bus_method_list_tenants, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", devices),
                                bus_method_list_devices, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListIrqs", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", irqs),
                                bus_method_list_irqs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Plan", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", actions, "aa{sv}", notes),
                                bus_method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("t", period_usec, "a(sa{ss}d)", samples),
                                bus_method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Verify", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("u", found, "u", repaired, "u", failed, "u", remaining, "as", what),
                                method_verify, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ForceNumVfs", SD_BUS_ARGS("s", pf), SD_BUS_NO_RESULT, method_force_num_vfs,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("AllocationChanged", SD_BUS_ARGS("s", tenant), 0),
        SD_BUS_SIGNAL_WITH_ARGS("DeviceAdded", SD_BUS_ARGS("s", address), 0),
        SD_BUS_SIGNAL_WITH_ARGS("DeviceRemoved", SD_BUS_ARGS("s", address), 0),
        SD_BUS_SIGNAL_WITH_ARGS("DriftDetected", SD_BUS_ARGS("s", what), 0),
        SD_BUS_SIGNAL_WITH_ARGS("AlertRaised",
                                SD_BUS_ARGS("s", name, "s", metric, "a{ss}", labels, "d", value, "d", threshold), 0),
        SD_BUS_SIGNAL_WITH_ARGS("AlertCleared",
                                SD_BUS_ARGS("s", name, "s", metric, "a{ss}", labels, "d", value, "s", reason), 0),
        SD_BUS_VTABLE_END
};

static int bus_connect(Bus *b);

static void bus_disconnect(Bus *b) {
        /* A new bus daemon hands out the same unique names again, so the cached verdicts must go. */
        memset(b->verdicts, 0, sizeof(b->verdicts));
        bus_objects_unregister(b);
        b->vtable_slot = sd_bus_slot_unref(b->vtable_slot);
        b->log_control_slot = sd_bus_slot_unref(b->log_control_slot);
        b->disconnect_slot = sd_bus_slot_unref(b->disconnect_slot);
        b->bus = sd_bus_flush_close_unref(b->bus);
}

/* When dbus-daemon restarts or crashes, sriovd tries again after 1 s.
 * The wait doubles, up to 30 s, until the bus is back. */
#define RECONNECT_FIRST_USEC (1000 * 1000)
#define RECONNECT_MAX_USEC (30 * 1000 * 1000)

static int on_reconnect_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Bus *b = userdata;
        int r;

        bus_disconnect(b);
        r = bus_connect(b);
        if (r >= 0) {
                log_info("D-Bus API %s back on the bus", SRIOVD_BUS_NAME);
                b->reconnect_usec = 0;
                return 0;
        }
        bus_disconnect(b);
        b->reconnect_usec = MIN(b->reconnect_usec * 2, (uint64_t) RECONNECT_MAX_USEC);
        log_warning_errno(r, "Failed to reconnect to the system bus, trying again in %" PRIu64 " s: %m",
                          b->reconnect_usec / 1000000);
        r = sd_event_source_set_time_relative(s, b->reconnect_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return r;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        int r;

        log_full_errno(LOG_WARNING, 0, NULL, "Lost the system bus; the D-Bus API is away until it is back");
        b->reconnect_usec = RECONNECT_FIRST_USEC;
        /* A connection must not be closed from inside its own callback. So the timer drops and reopens it. */
        if (!b->reconnect_timer)
                r = sd_event_add_time_relative(manager_event_loop(b->manager), &b->reconnect_timer, CLOCK_MONOTONIC,
                                               b->reconnect_usec, 100 * 1000, on_reconnect_timer, b);
        else {
                r = sd_event_source_set_time_relative(b->reconnect_timer, b->reconnect_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(b->reconnect_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_error_errno(r, "Failed to schedule reconnecting to the system bus: %m");
        return 0;
}

static int bus_connect(Bus *b) {
        int r;

        r = sd_bus_open_system_with_description(&b->bus, "sriovd");
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(b->bus, &b->vtable_slot, SRIOVD_BUS_PATH, SRIOVD_BUS_INTERFACE, manager_vtable, b);
        if (r < 0)
                return r;
        r = bus_objects_register(b);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(b->bus, &b->log_control_slot, BUS_LOG_CONTROL_PATH, BUS_LOG_CONTROL_INTERFACE,
                                     bus_log_control_vtable, b);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(b->bus, &b->disconnect_slot, "org.freedesktop.DBus.Local",
                                "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local", "Disconnected",
                                on_disconnected, b);
        if (r < 0)
                return r;
        r = sd_bus_request_name(b->bus, SRIOVD_BUS_NAME, 0);
        if (r < 0)
                return r;
        return sd_bus_attach_event(b->bus, manager_event_loop(b->manager), SD_EVENT_PRIORITY_NORMAL);
}

int bus_new(Manager *m, Bus **ret) {
        _cleanup_(bus_freep) Bus *b = NULL;
        int r;

        if (!manager_event_loop(m))
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->manager = m;
        b->plan_tokens = BUS_PLAN_BURST;

        r = sd_bus_error_add_map(sriovd_bus_errors);
        if (r < 0)
                return r;
        r = bus_connect(b);
        if (r < 0)
                return r;
        bus_props_read(b, &b->announced);
        manager_set_event_fn(m, on_manager_event, b);
        manager_set_alert_fn(m, bus_on_alert, b);
        manager_set_saved_fn(m, bus_on_saved, b);
        log_info("D-Bus API %s ready at %s", SRIOVD_BUS_NAME, SRIOVD_BUS_PATH);
        *ret = TAKE_PTR(b);
        return 0;
}

Bus *bus_free(Bus *b) {
        if (!b)
                return NULL;
        if (b->manager) {
                /* Held replies belong to changes that were never written. So they are never sent,
                 * and those changes are never acknowledged. */
                manager_set_saved_fn(b->manager, NULL, NULL);
                manager_set_event_fn(b->manager, NULL, NULL);
                manager_set_alert_fn(b->manager, NULL, NULL);
        }
        bus_held_free(b);
        sd_event_source_unref(b->reconnect_timer);
        sd_event_source_unref(b->flush_defer);
        bus_disconnect(b);
        bus_objects_free(b);
        free(b);
        return NULL;
}
