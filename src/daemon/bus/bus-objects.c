/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-objects.c — the objects under the ObjectManager at /org/sriovd/Manager1, and their signals */

#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "base/log.h"
#include "bus-internal.h"

/*
 * sriovd keeps no object for each tenant or PF. A fallback vtable finds each one from its path
 * when it is called. The path holds the tenant ID or the PCI address, encoded with
 * sd_bus_path_encode(). What the clients were last told is kept in Bus.tenants and Bus.devices.
 * So a change is announced as InterfacesAdded, InterfacesRemoved or PropertiesChanged, and it
 * names only what changed.
 */
uint64_t bus_hash_str(uint64_t h, const char *s) {
        /* This is FNV-1a. The terminating NUL is hashed too, so that "ab","c" and "a","bc" differ. */
        for (;; s++) {
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
                if (!*s)
                        return h;
        }
}

void bus_emit_removed(Bus *b, const char *path) {
        int r;

        b->removing = path;
        r = sd_bus_emit_object_removed(b->bus, path);
        b->removing = NULL;
        if (r < 0)
                log_warning_errno(r, "Failed to emit InterfacesRemoved for %s, ignoring: %m", path);
}

void bus_emit_added(Bus *b, const char *path) {
        int r = sd_bus_emit_object_added(b->bus, path);

        if (r < 0)
                log_warning_errno(r, "Failed to emit InterfacesAdded for %s, ignoring: %m", path);
}

void bus_emit_changed(Bus *b, const char *path, const char *interface, const char **changed) {
        int r = sd_bus_emit_properties_changed_strv(b->bus, path, interface, (char **) changed);

        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged for %s, ignoring: %m", path);
}

/* Hashes what tenant records take from the inventory: each VF's PF and netdev.
 * When the hash changes, every tenant is read again. */
static uint64_t inventory_hash(const Inventory *inv) {
        uint64_t h = BUS_HASH_INIT;

        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                h = bus_hash_str(h, inv->pfs[i].addr);
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++) {
                        h = bus_hash_str(h, inv->pfs[i].vfs[j].addr);
                        h = bus_hash_str(h, inv->pfs[i].vfs[j].netdev);
                }
        }
        return h;
}

/* ---- What bus.c calls ---- */

/* When more tenants than this change at once, one sweep of all tenants is cheaper.
 * A reload that places the tenants again is such a case. */
#define BUS_DIRTY_MAX 64

void bus_objects_mark_tenant(Bus *b, const char *tenant) {
        if (b->dirty_all)
                return;
        if (b->n_dirty >= BUS_DIRTY_MAX) {
                b->dirty_all = true;
                b->n_dirty = 0;
                return;
        }
        for (size_t i = 0; i < b->n_dirty; i++)
                if (streq(b->dirty[i], tenant))
                        return;
        if (GREEDY_REALLOC(b->dirty, b->allocated_dirty, b->n_dirty + 1) < 0) {
                b->dirty_all = true;   /* There is no memory to record which tenant, so sweep them all. */
                return;
        }
        strscpy(b->dirty[b->n_dirty++], TENANT_ID_MAX, tenant);
}

void bus_objects_flush(Bus *b) {
        const Inventory *inv = manager_inventory(b->manager);
        uint64_t h = inventory_hash(inv);
        int r = 0;

        if (!b->bus) {
                b->n_dirty = 0;
                return;   /* sriovd is off the bus. bus_objects_reset() records the state again on reconnect. */
        }
        if (b->dirty_all || h != b->inventory_hash) {
                b->inventory_hash = h;
                b->dirty_all = false;
                b->n_dirty = 0;
                r = bus_sync_all_tenants(b, true);
        }
        for (size_t i = 0; r >= 0 && i < b->n_dirty; i++) {
                TenantInfo t;
                bool have = manager_get_tenant(b->manager, b->dirty[i], &t) >= 0;
                r = bus_sync_tenant(b, b->dirty[i], have ? &t : NULL);
        }
        b->n_dirty = 0;
        if (r >= 0)
                r = bus_sync_devices(b, true);
        if (r < 0)
                log_warning_errno(r, "Failed to announce tenants' and PFs' changes on D-Bus, ignoring: %m");
}

int bus_objects_reset(Bus *b) {
        int r;

        b->n_dirty = 0;
        b->dirty_all = false;
        b->inventory_hash = inventory_hash(manager_inventory(b->manager));
        r = bus_sync_all_tenants(b, false);
        if (r < 0)
                return r;
        return bus_sync_devices(b, false);
}

int bus_objects_register(Bus *b) {
        int r;

        r = sd_bus_add_object_manager(b->bus, &b->object_manager_slot, SRIOVD_BUS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(b->bus, &b->tenant_slot, SRIOVD_BUS_TENANT_PREFIX, SRIOVD_BUS_TENANT_INTERFACE,
                                       bus_tenant_vtable, bus_tenant_find, b);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(b->bus, &b->tenant_enum_slot, SRIOVD_BUS_TENANT_PREFIX, bus_tenant_enumerate, b);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(b->bus, &b->device_slot, SRIOVD_BUS_DEVICE_PREFIX, SRIOVD_BUS_DEVICE_INTERFACE,
                                       bus_device_vtable, bus_device_find, b);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(b->bus, &b->device_enum_slot, SRIOVD_BUS_DEVICE_PREFIX, bus_device_enumerate, b);
        if (r < 0)
                return r;
        return bus_objects_reset(b);
}

void bus_objects_unregister(Bus *b) {
        b->object_manager_slot = sd_bus_slot_unref(b->object_manager_slot);
        b->tenant_slot = sd_bus_slot_unref(b->tenant_slot);
        b->tenant_enum_slot = sd_bus_slot_unref(b->tenant_enum_slot);
        b->device_slot = sd_bus_slot_unref(b->device_slot);
        b->device_enum_slot = sd_bus_slot_unref(b->device_enum_slot);
}

void bus_objects_free(Bus *b) {
        bus_objects_unregister(b);
        b->tenants = mfree(b->tenants);
        b->n_tenants = b->allocated_tenants = 0;
        b->devices = mfree(b->devices);
        b->n_devices = 0;
        b->dirty = mfree(b->dirty);
        b->n_dirty = b->allocated_dirty = 0;
}
