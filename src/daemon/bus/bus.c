/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus.c — org.sriovd.Manager1 on the system bus, the API that cloud controllers and sriovctl call */

#include <string.h>
#include <systemd/sd-event.h>

#include "sriovd-config.h"
#include "sriovd/core/allocator.h"
#include "sriovd/kernel/bpf-events.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

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
        const Config *config = manager_config(b->manager);
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
                return BUS_APPEND_RECORDS(reply, p.rt_nodes, p.n_rt_nodes, bus_append_rt_node_record);
        /* The config keeps its classes sorted by name, so the records come in name order. */
        if (streq(property, "Classes"))
                return BUS_APPEND_RECORDS(reply, config->classes, config->n_classes, bus_append_class_record);
        if (streq(property, "StateReasons"))
                return bus_append_state_reasons(reply, b->manager);
        if (streq(property, "ActiveAlerts"))
                return bus_append_active_alerts(reply, manager_alerts(b->manager));
        if (streq(property, "KernelEvents"))
                return append_kernel_events(reply, b->manager);
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

/* Sends one PropertiesChanged signal that names every property changed since the last announcement. */
void bus_announce_properties(Bus *b) {
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

static int method_ping(sd_bus_message *m, void *userdata, sd_bus_error *error) {
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
                                bus_method_allocate, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Release", SD_BUS_ARGS("s", tenant), SD_BUS_NO_RESULT, bus_method_release,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetCoalesce", SD_BUS_ARGS("s", tenant, "u", rx_usecs, "u", tx_usecs),
                                SD_BUS_NO_RESULT, bus_method_set_coalesce, SD_BUS_VTABLE_UNPRIVILEGED),
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
        SD_BUS_METHOD_WITH_ARGS("CheckHost", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", findings),
                                bus_method_check_host, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetMetrics", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("t", period_usec, "a(sa{ss}d)", samples),
                                bus_method_get_metrics, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Verify", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("u", found, "u", repaired, "u", failed, "u", remaining, "as", what),
                                bus_method_verify, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, bus_method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ForceNumVfs", SD_BUS_ARGS("s", pf), SD_BUS_NO_RESULT, bus_method_force_num_vfs,
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
