/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-internal.h — what the D-Bus files share: the Bus object, access checks and argument rules */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "sriovd/core/plan.h"
#include "manager/manager.h"
#include "bus.h"

/* Each dry-run plan costs a full observe, so callers who may not change anything are rate-limited.
 * They get a burst of plans, then a steady number per second. */
#define BUS_PLAN_BURST 20
#define BUS_PLAN_PER_SEC 10
/* The most keys an Allocate options dictionary may hold. More keys give InvalidArgument. */
#define BUS_OPTIONS_MAX 8
/* The longest libvirt domain name Allocate takes, in bytes. */
#define BUS_DOMAIN_MAX 255

static inline void message_unrefp(sd_bus_message **m) {
        sd_bus_message_unref(*m);
}
#define _cleanup_message_ __attribute__((cleanup(message_unrefp)))

/* The property values last announced, so that sriovd announces only what changed. */
typedef struct BusProps {
        unsigned vf_total, vf_usable, vf_allocated, tenants, max_tenants;
        double utilization, target;
        bool real_time, threaded_irqs, rtnet_prio, iommu;
        const char *state;
        uint64_t state_reasons_hash;        /* a hash of StateReasons */
        uint64_t classes_hash;              /* a hash of Classes, since a reload replaces the classes */
        /* RtCpuNodes. Rows past n_rt_nodes are zero, so the whole arrays can be compared. */
        AllocRtNode rt_nodes[ALLOC_RT_NODES_MAX];
        size_t n_rt_nodes;
} BusProps;

/* A tenant as InterfacesAdded or PropertiesChanged last announced it, so that sriovd announces only what changed. */
typedef struct BusTenantSnap {
        char id[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];
        const char *kind, *state;         /* static strings */
        char vf[PCI_ADDR_MAX], pf[PCI_ADDR_MAX];
        char netdev[IF_NAMESIZE];
        char mac[MAC_STR_MAX];
        int vlan, numa_node;
        uint64_t domain_hash;             /* the domain can be 255 bytes, and a hash shows a change */
        char pin_pf[PCI_ADDR_MAX];
        char domain_uuid[UUID_STR_MAX];
        char owner[TENANT_ID_MAX];
        bool remote_numa, have_coalesce;
        unsigned rx_usecs, tx_usecs;
        unsigned seen;                    /* the number of the sweep that last found it */
} BusTenantSnap;

/* A PF as last announced. */
typedef struct BusDeviceSnap {
        char addr[PCI_ADDR_MAX];
        char driver[DRIVER_MAX];
        char netdev[IF_NAMESIZE];
        int numa_node;
        unsigned total_vfs, num_vfs;
        uint64_t vfs_hash;
        /* The allocator's figures of the PF. The class maps are hashed, because a host may have 256 classes. */
        unsigned vf_usable, vf_allocated, vf_free, vf_preemptible;
        uint64_t class_allocated_hash, class_available_hash;
} BusDeviceSnap;

/* A reply that acknowledges a change. It is held until the write that contains the change is durable. */
typedef struct BusHeld {
        sd_bus_message *call, *reply;
        char tenant[TENANT_ID_MAX];
        char vf[PCI_ADDR_MAX];
        char done[192];                     /* logged once durable, e.g. "D-Bus: released tenant x", or empty */
        char failed[128];                   /* the error text if the write fails, e.g. "Release of x not saved" */
        uint64_t seq;                       /* the write group that this reply waits for */
} BusHeld;

/* Whether a caller may change state. bus-access.c asks the bus daemon once per connection. */
typedef struct BusVerdict {
        char sender[48];                    /* its unique name, never reused while the bus runs */
        char access_group[64];              /* the group the verdict was for */
        bool privileged;
} BusVerdict;

#define BUS_VERDICTS 64

/* The most replies held for one write. A flood of calls could keep the write waiting,
 * so at this many the group is written and answered in one go. */
#define BUS_HELD_MAX 256

struct Bus {
        Manager *manager;
        sd_bus *bus;
        sd_bus_slot *vtable_slot;
        sd_bus_slot *object_manager_slot;
        sd_bus_slot *tenant_slot, *tenant_enum_slot;
        sd_bus_slot *device_slot, *device_enum_slot;
        sd_event_source *flush_defer;       /* announce the tenants and PFs that changed */
        BusTenantSnap *tenants;             /* sorted by id */
        size_t n_tenants, allocated_tenants;
        unsigned sweep;
        BusDeviceSnap *devices;
        size_t n_devices;
        uint64_t inventory_hash;            /* a hash of the inventory fields that tenant records show */
        char (*dirty)[TENANT_ID_MAX];       /* tenants a decision changed, not announced yet */
        size_t n_dirty, allocated_dirty;
        bool dirty_all;
        const char *removing;               /* the path InterfacesRemoved is being sent for */
        sd_bus_slot *log_control_slot;
        sd_bus_slot *disconnect_slot;
        sd_event_source *reconnect_timer;   /* retries after the bus daemon went away, backing off */
        uint64_t reconnect_usec;
        BusProps announced;
        BusHeld *held;                      /* replies waiting for their change's write (bus-saves.c) */
        BusVerdict verdicts[BUS_VERDICTS];  /* the last callers' verdicts, replaced round robin */
        unsigned next_verdict;
        size_t n_held, allocated_held;
        /* Token bucket for unprivileged dry-run plans. */
        double plan_tokens;
        uint64_t plan_tokens_at;
};

/* bus.c: announces the changed tenants and PFs at once. A change's signals must go out before its reply. */
void bus_flush_now(Bus *b);
/* Sends one PropertiesChanged signal that names every Manager1 property changed since the last one. */
void bus_announce_properties(Bus *b);

/*
 * bus-saves.c: sends reply, the method return to call, once the change it acknowledges is durable.
 * When the manager holds no unwritten change, that is at once. Otherwise it is when the change's
 * write group is written. Before the reply goes out, done is logged and the tenant's object is
 * announced. If the write fails, call gets the error "failed: <errno>" with -EIO instead. A change
 * saved on its own would have failed in the same way.
 */
int bus_reply_when_saved(Bus *b, sd_bus_message *call, sd_bus_message *reply, const char *tenant, const char *vf,
                         const char *failed, const char *done);
/* The manager's ManagerSavedFn. It sends, or fails, every reply held for the written group. */
void bus_on_saved(Manager *m, int error, uint64_t seq, void *userdata);
void bus_held_free(Bus *b);

/* bus-access.c: returns 1 when the sender may change state, 0 when not, and a negative errno on error.
 * Root and the members of access_group may change state. */
int bus_sender_privileged(Bus *b, sd_bus_message *m);
/* Returns 0 when allowed. Otherwise it sets NotPermitted in error and returns its errno. */
int bus_check_change(Bus *b, sd_bus_message *m, sd_bus_error *error);

/* bus-args.c: checks of the API's arguments. */
bool bus_domain_valid(const char *s);
bool bus_class_name_valid(const char *s);
/* Reads Allocate's a{sv} options. An unknown key, a wrong type or a bad value sets InvalidArgument in error. */
int bus_read_allocate_options(sd_bus_message *m, TenantOptions *ret, sd_bus_error *error);

/* bus-logcontrol.c: org.freedesktop.LogControl1 on BUS_LOG_CONTROL_PATH; userdata is the Bus. */
#define BUS_LOG_CONTROL_PATH "/org/freedesktop/LogControl1"
#define BUS_LOG_CONTROL_INTERFACE "org.freedesktop.LogControl1"
extern const sd_bus_vtable bus_log_control_vtable[];

/* bus-record.c: the API's a{sv} records and object paths. The record keys are in sriovd/bus-protocol.h. */
int bus_tenant_path(const char *tenant, char **ret);
int bus_device_path(const char *addr, char **ret);
int bus_append_tenant_record(sd_bus_message *m, const TenantInfo *t);
/* Sends a method return that holds one tenant record. */
int bus_reply_tenant_record(sd_bus_message *call, const TenantInfo *t);
/* Builds the same reply but does not send it, because a change's reply waits for its save in bus-saves.c. */
int bus_tenant_record_reply(sd_bus_message *call, const TenantInfo *t, sd_bus_message **ret);
int bus_append_pf_record(sd_bus_message *m, const Pf *pf);
int bus_append_vf_record(sd_bus_message *m, const Pf *pf, const Vf *vf, const char *tenant);
/* Appends one NUMA node's RT CPUs for RtCpuNodes. The numa_node key is absent for the unknown node. */
int bus_append_rt_node_record(sd_bus_message *m, const AllocRtNode *n);
/* Appends one tenant class's record for Classes: what a client needs to know of the class to place it. */
int bus_append_class_record(sd_bus_message *m, const TenantClass *cls);
/* napi is the threaded NAPI that the IRQ schedules, or NULL for none. pairing says how the two were matched. */
int bus_append_irq_record(sd_bus_message *m, const Irq *q, const char *device, const Napi *napi,
                          NapiPairing pairing);
int bus_append_action_record(sd_bus_message *m, const Action *a);
int bus_append_note_record(sd_bus_message *m, const PlanNote *n);
int bus_append_host_finding_record(sd_bus_message *m, const HostFinding *h);
/*
 * Appends the n records of the array items as one aa{sv}, with append(m, &items[i]) for each.
 * Returns 0 or a negative errno from sd-bus. It is a macro so that each append function keeps the
 * type of its record.
 */
#define BUS_APPEND_RECORDS(m, items, n, append)                                         \
        ({                                                                              \
                sd_bus_message *_m = (m);                                               \
                size_t _n = (n);                                                        \
                int _r = sd_bus_message_open_container(_m, 'a', "a{sv}");               \
                for (size_t _i = 0; _r >= 0 && _i < _n; _i++)                           \
                        _r = append(_m, &(items)[_i]);                                  \
                _r >= 0 ? sd_bus_message_close_container(_m) : _r;                      \
        })

/*
 * bus-objects.c: the objects under the ObjectManager at /org/sriovd/Manager1. Each tenant is an
 * org.sriovd.Tenant1 at /org/sriovd/Manager1/tenant/ID. Each PF is an org.sriovd.Device1 at
 * /org/sriovd/Manager1/pf/ADDRESS.
 * register runs on a new connection. It takes what exists now as announced, because a
 * reconnecting client calls GetManagedObjects. mark_tenant records that a decision changed a
 * tenant. flush sends InterfacesAdded, InterfacesRemoved and PropertiesChanged for whatever
 * differs from the last announcement.
 */
int bus_objects_register(Bus *b);
void bus_objects_unregister(Bus *b);
int bus_objects_reset(Bus *b);
void bus_objects_mark_tenant(Bus *b, const char *tenant);
void bus_objects_flush(Bus *b);
void bus_objects_free(Bus *b);
/* Shared by the object files. bus_hash_str is FNV-1a over the string and its NUL.
 * The emit functions log any failure. */
#define BUS_HASH_INIT 14695981039346656037ULL
uint64_t bus_hash_str(uint64_t h, const char *s);
void bus_emit_added(Bus *b, const char *path);
void bus_emit_removed(Bus *b, const char *path);
void bus_emit_changed(Bus *b, const char *path, const char *interface, const char **changed);

/* bus-object-tenant.c: the fallback vtable with its find and enumerate callbacks.
 * bus_sync_tenant records what became of one tenant. A NULL now means that the tenant is gone.
 * bus_sync_all_tenants does the same for all tenants. With announce false, it records the
 * current state without sending any signal. */
extern const sd_bus_vtable bus_tenant_vtable[];
int bus_tenant_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                    sd_bus_error *error);
int bus_tenant_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error);
int bus_sync_tenant(Bus *b, const char *id, const TenantInfo *now);
int bus_sync_all_tenants(Bus *b, bool announce);

/* bus-object-device.c: the same for PFs. A host has only a few PFs, so all of them are synced each time. */
extern const sd_bus_vtable bus_device_vtable[];
int bus_device_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                    sd_bus_error *error);
int bus_device_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error);
int bus_sync_devices(Bus *b, bool announce);

/* bus-alerts.c: ActiveAlerts, StateReasons, AlertRaised and AlertCleared. */
int bus_append_active_alerts(sd_bus_message *m, const Alerts *a);
int bus_append_state_reasons(sd_bus_message *m, Manager *manager);
uint64_t bus_state_reasons_hash(Manager *manager);
/* The manager's alert callback while the bus is up. It sends the alert signal, then PropertiesChanged. */
void bus_on_alert(Manager *m, const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata);

/* bus-change.c: the methods that change state. Each checks the caller first, then every argument. */
int bus_method_allocate(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_release(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_set_coalesce(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_force_num_vfs(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_verify(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_reload(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* bus-read.c: the read-only methods, and the check of a tenant id argument that every method shares. */
int bus_check_tenant_arg(const char *tenant, sd_bus_error *error);
int bus_method_get_tenant(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_tenants(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_devices(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_list_irqs(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_plan(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_check_host(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_method_get_metrics(sd_bus_message *m, void *userdata, sd_bus_error *error);
