/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-object-device.c — org.sriovd.Device1 at /org/sriovd/Manager1/pf/ADDRESS, one per managed PF */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "bus-internal.h"

static uint64_t pf_vfs_hash(const Pf *pf) {
        uint64_t h = BUS_HASH_INIT;

        for (size_t j = 0; j < pf->n_vfs; j++)
                h = bus_hash_str(h, pf->vfs[j].addr);
        return h;
}

/* Hash a class map as ClassAllocated or ClassAvailable sends it: the classes with 0 left out when skip_zero. */
static uint64_t class_map_hash(Manager *m, const unsigned *values, size_t n, bool skip_zero) {
        uint64_t h = BUS_HASH_INIT;

        for (size_t i = 0; i < n; i++) {
                char num[16];
                if (skip_zero && values[i] == 0)
                        continue;
                snprintf(num, sizeof(num), "%u", values[i]);
                h = bus_hash_str(bus_hash_str(h, manager_class_name(m, i) ?: ""), num);
        }
        return h;
}

static void device_snap(Manager *m, const Pf *pf, BusDeviceSnap *ret) {
        AllocPfStats st;

        manager_pf_stats(m, pf->addr, &st);
        *ret = (BusDeviceSnap) {
                .numa_node = pf->numa_node,
                .total_vfs = pf->total_vfs,
                .num_vfs = pf->num_vfs,
                .vfs_hash = pf_vfs_hash(pf),
                .vf_usable = st.usable,
                .vf_allocated = st.allocated,
                .vf_free = st.free,
                .vf_preemptible = st.preemptible,
                .class_allocated_hash = class_map_hash(m, st.class_allocated, st.n_classes, true),
                .class_available_hash = class_map_hash(m, st.class_available, st.n_classes, false),
        };
        strscpy(ret->addr, sizeof(ret->addr), pf->addr);
        strscpy(ret->driver, sizeof(ret->driver), pf->driver);
        strscpy(ret->netdev, sizeof(ret->netdev), pf->n_netdevs ? pf->netdevs[0] : "");
}

static const Pf *device_lookup(Bus *b, const char *path) {
        const Inventory *inv = manager_inventory(b->manager);
        _cleanup_free_ char *addr = NULL;

        if (!inv || sd_bus_path_decode(path, SRIOVD_BUS_DEVICE_PREFIX, &addr) <= 0 || !pci_addr_valid(addr))
                return NULL;
        return inventory_find_pf(inv, addr);
}

int bus_device_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                    sd_bus_error *error) {
        Bus *b = userdata;

        if ((b->removing && streq(path, b->removing)) || device_lookup(b, path)) {
                *ret_found = b;
                return 1;
        }
        return 0;
}

/* A class map: class name to count. ClassAllocated leaves out the classes with 0. */
static int append_class_map(sd_bus_message *reply, Manager *m, const unsigned *values, size_t n, bool skip_zero) {
        int r = sd_bus_message_open_container(reply, 'a', "{su}");

        for (size_t i = 0; r >= 0 && i < n; i++) {
                const char *name = manager_class_name(m, i);
                if (!name || (skip_zero && values[i] == 0))
                        continue;
                r = sd_bus_message_append(reply, "{su}", name, (uint32_t) values[i]);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* The allocator's figures of the PF, which change with every Allocate and Release. */
static int device_stats_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const Pf *pf = device_lookup(b, path);
        _cleanup_free_ AllocPfStats *st = NULL;

        if (!pf)
                return bus_error_setf(error, -ENODEV, "No managed PF at %s", path);
        st = malloc(sizeof(*st));   /* It holds two arrays of ALLOC_CLASSES_MAX, too much for the stack of a callback. */
        if (!st)
                return -ENOMEM;
        manager_pf_stats(b->manager, pf->addr, st);
        if (streq(property, "VfUsable"))
                return sd_bus_message_append(reply, "u", (uint32_t) st->usable);
        if (streq(property, "VfAllocated"))
                return sd_bus_message_append(reply, "u", (uint32_t) st->allocated);
        if (streq(property, "VfFree"))
                return sd_bus_message_append(reply, "u", (uint32_t) st->free);
        if (streq(property, "VfPreemptible"))
                return sd_bus_message_append(reply, "u", (uint32_t) st->preemptible);
        if (streq(property, "ClassAllocated"))
                return append_class_map(reply, b->manager, st->class_allocated, st->n_classes, true);
        if (streq(property, "ClassAvailable"))
                return append_class_map(reply, b->manager, st->class_available, st->n_classes, false);
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

static int device_property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Pf *pf = device_lookup(userdata, path);
        int r;

        if (!pf)
                return bus_error_setf(error, -ENODEV, "No managed PF at %s", path);
        if (streq(property, "Address"))
                return sd_bus_message_append(reply, "s", pf->addr);
        if (streq(property, "Name"))
                return sd_bus_message_append(reply, "s", pf->name);
        if (streq(property, "Driver"))
                return sd_bus_message_append(reply, "s", pf->driver);
        if (streq(property, "Netdev"))
                return sd_bus_message_append(reply, "s", pf->n_netdevs ? pf->netdevs[0] : "");
        if (streq(property, "NumaNode"))
                return sd_bus_message_append(reply, "i", (int32_t) pf->numa_node);
        if (streq(property, "TotalVfs"))
                return sd_bus_message_append(reply, "u", (uint32_t) pf->total_vfs);
        if (streq(property, "NumVfs"))
                return sd_bus_message_append(reply, "u", (uint32_t) pf->num_vfs);
        if (streq(property, "Vfs")) {
                r = sd_bus_message_open_container(reply, 'a', "s");
                for (size_t j = 0; r >= 0 && j < pf->n_vfs; j++)
                        r = sd_bus_message_append(reply, "s", pf->vfs[j].addr);
                return r < 0 ? r : sd_bus_message_close_container(reply);
        }
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

#define DEVICE_PROPERTY(name, type) \
        SD_BUS_PROPERTY(name, type, device_property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

const sd_bus_vtable bus_device_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Address", "s", device_property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Name", "s", device_property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        DEVICE_PROPERTY("Driver", "s"),
        DEVICE_PROPERTY("Netdev", "s"),
        DEVICE_PROPERTY("NumaNode", "i"),
        DEVICE_PROPERTY("TotalVfs", "u"),
        DEVICE_PROPERTY("NumVfs", "u"),
        DEVICE_PROPERTY("Vfs", "as"),
        SD_BUS_PROPERTY("VfUsable", "u", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfAllocated", "u", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfFree", "u", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("VfPreemptible", "u", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ClassAllocated", "a{su}", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ClassAvailable", "a{su}", device_stats_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END
};

int bus_device_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error) {
        Bus *b = userdata;
        const Inventory *inv = manager_inventory(b->manager);
        size_t n = inv ? inv->n_pfs : 0;
        char **nodes = calloc(n + 1, sizeof(char *));
        int r = 0;

        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = bus_device_path(inv->pfs[i].addr, &nodes[i]);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(nodes[i]);
                free(nodes);
                return r;
        }
        *ret_nodes = nodes;
        return 1;
}

/* Keep the figures last announced for the PF, because the change behind new ones is not saved yet. */
static void keep_stats(const Bus *b, BusDeviceSnap *p) {
        for (size_t i = 0; i < b->n_devices; i++) {
                const BusDeviceSnap *o = &b->devices[i];
                if (!streq(o->addr, p->addr))
                        continue;
                p->vf_usable = o->vf_usable;
                p->vf_allocated = o->vf_allocated;
                p->vf_free = o->vf_free;
                p->vf_preemptible = o->vf_preemptible;
                p->class_allocated_hash = o->class_allocated_hash;
                p->class_available_hash = o->class_available_hash;
                return;
        }
}

/* Compares the PFs as they are now with the last announcement. A host has only a few PFs,
 * so the whole list is compared each time. */
int bus_sync_devices(Bus *b, bool announce) {
        const Inventory *inv = manager_inventory(b->manager);
        size_t n = inv ? inv->n_pfs : 0;
        _cleanup_free_ BusDeviceSnap *next = calloc(n ? n : 1, sizeof(*next));
        bool unsaved = announce && manager_saves_pending(b->manager);
        int r;

        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                device_snap(b->manager, &inv->pfs[i], &next[i]);
                /* A client that reads the figures acts on them, so it only hears of saved changes. The save's flush announces them. */
                if (unsaved)
                        keep_stats(b, &next[i]);
        }
        for (size_t i = 0; announce && i < b->n_devices; i++) {
                const BusDeviceSnap *o = &b->devices[i];
                const BusDeviceSnap *p = NULL;
                _cleanup_free_ char *path = NULL;

                for (size_t j = 0; j < n && !p; j++)
                        if (streq(next[j].addr, o->addr))
                                p = &next[j];
                r = bus_device_path(o->addr, &path);
                if (r < 0)
                        return r;
                if (!p) {
                        bus_emit_removed(b, path);
                        continue;
                }
                const char *changed[16];
                size_t k = 0;
                if (!streq(o->driver, p->driver))
                        changed[k++] = "Driver";
                if (!streq(o->netdev, p->netdev))
                        changed[k++] = "Netdev";
                if (o->numa_node != p->numa_node)
                        changed[k++] = "NumaNode";
                if (o->total_vfs != p->total_vfs)
                        changed[k++] = "TotalVfs";
                if (o->num_vfs != p->num_vfs)
                        changed[k++] = "NumVfs";
                if (o->vfs_hash != p->vfs_hash)
                        changed[k++] = "Vfs";
                if (o->vf_usable != p->vf_usable)
                        changed[k++] = "VfUsable";
                if (o->vf_allocated != p->vf_allocated)
                        changed[k++] = "VfAllocated";
                if (o->vf_free != p->vf_free)
                        changed[k++] = "VfFree";
                if (o->vf_preemptible != p->vf_preemptible)
                        changed[k++] = "VfPreemptible";
                if (o->class_allocated_hash != p->class_allocated_hash)
                        changed[k++] = "ClassAllocated";
                if (o->class_available_hash != p->class_available_hash)
                        changed[k++] = "ClassAvailable";
                changed[k] = NULL;
                if (k > 0)
                        bus_emit_changed(b, path, SRIOVD_BUS_DEVICE_INTERFACE, changed);
        }
        for (size_t j = 0; announce && j < n; j++) {
                bool known = false;
                _cleanup_free_ char *path = NULL;

                for (size_t i = 0; i < b->n_devices && !known; i++)
                        known = streq(b->devices[i].addr, next[j].addr);
                if (known)
                        continue;
                r = bus_device_path(next[j].addr, &path);
                if (r < 0)
                        return r;
                bus_emit_added(b, path);
        }
        free(b->devices);
        b->devices = TAKE_PTR(next);
        b->n_devices = n;
        return 0;
}
