/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-objects.c — one object per tenant (org.sriovd.Tenant1) and per PF (org.sriovd.Device1), and their signals */

#include <string.h>

#include "bus-internal.h"
#include "sriovd/bus-protocol.h"
#include "sriovd/kernel.h"
#include "sriovd/log.h"

/*
 * The objects are not kept anywhere: a fallback vtable finds each from its path (the tenant id
 * or PCI address, sd_bus_path_encode()d) when it is called. What the bus daemon's clients were
 * last told is kept, though (Bus.tenants, Bus.devices), so that a change is announced as
 * InterfacesAdded, InterfacesRemoved or PropertiesChanged naming only what changed.
 */

static uint64_t hash_str(uint64_t h, const char *s) {
        /* FNV-1a; the terminating NUL too, so "ab","c" and "a","bc" differ. */
        for (;; s++) {
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
                if (!*s)
                        return h;
        }
}

#define HASH_INIT 14695981039346656037ULL

/* ---- Tenants ---- */

static void tenant_snap(const TenantInfo *t, BusTenantSnap *ret) {
        *ret = (BusTenantSnap) {
                .kind = t->kind,
                .state = t->state,
                .vlan = t->vlan,
                .numa_node = t->numa_node,
                .domain_hash = hash_str(HASH_INIT, t->domain),
                .remote_numa = t->remote_numa,
                .have_coalesce = t->have_coalesce,
                .rx_usecs = t->rx_usecs,
                .tx_usecs = t->tx_usecs,
        };
        strscpy(ret->id, sizeof(ret->id), t->tenant);
        strscpy(ret->class_name, sizeof(ret->class_name), t->class_name);
        strscpy(ret->vf, sizeof(ret->vf), t->vf);
        strscpy(ret->pf, sizeof(ret->pf), t->pf);
        strscpy(ret->netdev, sizeof(ret->netdev), t->netdev);
        strscpy(ret->mac, sizeof(ret->mac), t->mac);
}

/* The Tenant1 properties that differ between a and b, NULL-terminated in ret (room for 16). */
static size_t tenant_changed(const BusTenantSnap *a, const BusTenantSnap *b, const char **ret) {
        size_t n = 0;

#define DIFF(cond, name)        \
        if (cond)               \
                ret[n++] = name
        DIFF(!streq(a->class_name, b->class_name), "Class");
        DIFF(!streq_ptr(a->kind, b->kind), "Kind");
        DIFF(!streq_ptr(a->state, b->state), "State");
        DIFF(!streq(a->mac, b->mac), "Mac");
        DIFF(!streq(a->vf, b->vf), "Address");
        DIFF(!streq(a->pf, b->pf), "Pf");
        DIFF(!streq(a->netdev, b->netdev), "Netdev");
        DIFF(a->vlan != b->vlan, "Vlan");
        DIFF(a->domain_hash != b->domain_hash, "Domain");
        DIFF(a->numa_node != b->numa_node, "NumaNode");
        DIFF(a->remote_numa != b->remote_numa, "RemoteNuma");
        DIFF(a->have_coalesce != b->have_coalesce, "Coalescing");
        DIFF(a->rx_usecs != b->rx_usecs, "CoalesceRxUsecs");
        DIFF(a->tx_usecs != b->tx_usecs, "CoalesceTxUsecs");
#undef DIFF
        ret[n] = NULL;
        return n;
}

static int snap_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const BusTenantSnap *) elem)->id);
}

static int snap_sort_cmp(const void *a, const void *b) {
        return strcmp(((const BusTenantSnap *) a)->id, ((const BusTenantSnap *) b)->id);
}

static BusTenantSnap *snap_find(Bus *b, const char *id, size_t *ret_at) {
        size_t lo = 0, hi = b->n_tenants;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = snap_cmp(id, &b->tenants[mid]);
                if (c == 0)
                        return &b->tenants[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        if (ret_at)
                *ret_at = lo;
        return NULL;
}

static int tenant_lookup(Bus *b, const char *path, TenantInfo *ret) {
        _cleanup_free_ char *id = NULL;
        int r;

        r = sd_bus_path_decode(path, SRIOVD_BUS_TENANT_PREFIX, &id);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        if (!tenant_id_valid(id))
                return -ENOENT;
        return manager_get_tenant(b->manager, id, ret);
}

static int tenant_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                       sd_bus_error *error) {
        Bus *b = userdata;
        TenantInfo t;

        /* One being announced as removed is still there for the signal to name its interface. */
        if (b->removing && streq(path, b->removing)) {
                *ret_found = b;
                return 1;
        }
        if (tenant_lookup(b, path, &t) < 0)
                return 0;
        *ret_found = b;
        return 1;
}

static int tenant_property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        TenantInfo t;
        int r;

        r = tenant_lookup(b, path, &t);
        if (r < 0)
                return bus_error_setf(error, -ESRCH, "No tenant at %s", path);
#define S(name, value) \
        if (streq(property, name)) return sd_bus_message_append(reply, "s", value)
#define I(name, type, value) \
        if (streq(property, name)) return sd_bus_message_append(reply, type, value)
        S("Id", t.tenant);
        S("Class", t.class_name);
        S("Kind", t.kind);
        S("State", t.state);
        S("Mac", t.mac);
        S("Address", t.vf);
        S("Pf", t.pf);
        S("Netdev", t.netdev);
        I("Vlan", "i", (int32_t) t.vlan);
        S("Domain", t.domain);
        I("NumaNode", "i", (int32_t) t.numa_node);
        I("RemoteNuma", "b", (int) t.remote_numa);
        I("Coalescing", "b", (int) t.have_coalesce);
        I("CoalesceRxUsecs", "u", (uint32_t) (t.have_coalesce ? t.rx_usecs : 0));
        I("CoalesceTxUsecs", "u", (uint32_t) (t.have_coalesce ? t.tx_usecs : 0));
#undef S
#undef I
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

#define TENANT_PROPERTY(name, type) \
        SD_BUS_PROPERTY(name, type, tenant_property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable tenant_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", tenant_property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        TENANT_PROPERTY("Class", "s"),
        TENANT_PROPERTY("Kind", "s"),
        TENANT_PROPERTY("State", "s"),
        TENANT_PROPERTY("Mac", "s"),
        TENANT_PROPERTY("Address", "s"),
        TENANT_PROPERTY("Pf", "s"),
        TENANT_PROPERTY("Netdev", "s"),
        TENANT_PROPERTY("Vlan", "i"),
        TENANT_PROPERTY("Domain", "s"),
        TENANT_PROPERTY("NumaNode", "i"),
        TENANT_PROPERTY("RemoteNuma", "b"),
        TENANT_PROPERTY("Coalescing", "b"),
        TENANT_PROPERTY("CoalesceRxUsecs", "u"),
        TENANT_PROPERTY("CoalesceTxUsecs", "u"),
        SD_BUS_VTABLE_END
};

static int tenant_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error) {
        Bus *b = userdata;
        size_t n = manager_n_tenants(b->manager), k = 0;
        char **nodes = calloc(n + 1, sizeof(char *));
        int r = 0;

        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                TenantInfo t;

                if (manager_tenant(b->manager, i, &t) < 0)
                        continue;
                r = bus_tenant_path(t.tenant, &nodes[k]);
                if (r < 0)
                        break;
                k++;
        }
        if (r < 0) {
                for (size_t i = 0; i < k; i++)
                        free(nodes[i]);
                free(nodes);
                return r;
        }
        *ret_nodes = nodes;
        return 1;
}

static void emit_removed(Bus *b, const char *path) {
        int r;

        b->removing = path;
        r = sd_bus_emit_object_removed(b->bus, path);
        b->removing = NULL;
        if (r < 0)
                log_warning_errno(r, "Failed to emit InterfacesRemoved for %s, ignoring: %m", path);
}

static void emit_added(Bus *b, const char *path) {
        int r = sd_bus_emit_object_added(b->bus, path);

        if (r < 0)
                log_warning_errno(r, "Failed to emit InterfacesAdded for %s, ignoring: %m", path);
}

static void emit_changed(Bus *b, const char *path, const char *interface, const char **changed) {
        int r = sd_bus_emit_properties_changed_strv(b->bus, path, interface, (char **) changed);

        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged for %s, ignoring: %m", path);
}

/* Announce what became of one tenant since the last announcement (nothing when nothing). */
static int sync_tenant(Bus *b, const char *id, const TenantInfo *now) {
        _cleanup_free_ char *path = NULL;
        BusTenantSnap next, *old;
        size_t at = 0;
        int r;

        old = snap_find(b, id, &at);
        if (!old && !now)
                return 0;
        r = bus_tenant_path(id, &path);
        if (r < 0)
                return r;
        if (!now) {
                at = (size_t) (old - b->tenants);
                memmove(old, old + 1, (b->n_tenants - at - 1) * sizeof(*old));
                b->n_tenants--;
                emit_removed(b, path);
                return 0;
        }
        tenant_snap(now, &next);
        next.seen = b->sweep;
        if (!old) {
                if (GREEDY_REALLOC(b->tenants, b->allocated_tenants, b->n_tenants + 1) < 0)
                        return -ENOMEM;
                memmove(&b->tenants[at + 1], &b->tenants[at], (b->n_tenants - at) * sizeof(*b->tenants));
                b->tenants[at] = next;
                b->n_tenants++;
                emit_added(b, path);
                return 0;
        }
        const char *changed[16];
        if (tenant_changed(old, &next, changed) > 0)
                emit_changed(b, path, SRIOVD_BUS_TENANT_INTERFACE, changed);
        *old = next;
        return 0;
}

/* ---- PFs ---- */

static uint64_t pf_vfs_hash(const Pf *pf) {
        uint64_t h = HASH_INIT;

        for (size_t j = 0; j < pf->n_vfs; j++)
                h = hash_str(h, pf->vfs[j].addr);
        return h;
}

static void device_snap(const Pf *pf, BusDeviceSnap *ret) {
        *ret = (BusDeviceSnap) {
                .numa_node = pf->numa_node,
                .total_vfs = pf->total_vfs,
                .num_vfs = pf->num_vfs,
                .vfs_hash = pf_vfs_hash(pf),
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

static int device_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                       sd_bus_error *error) {
        Bus *b = userdata;

        if ((b->removing && streq(path, b->removing)) || device_lookup(b, path)) {
                *ret_found = b;
                return 1;
        }
        return 0;
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

static const sd_bus_vtable device_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Address", "s", device_property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Name", "s", device_property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        DEVICE_PROPERTY("Driver", "s"),
        DEVICE_PROPERTY("Netdev", "s"),
        DEVICE_PROPERTY("NumaNode", "i"),
        DEVICE_PROPERTY("TotalVfs", "u"),
        DEVICE_PROPERTY("NumVfs", "u"),
        DEVICE_PROPERTY("Vfs", "as"),
        SD_BUS_VTABLE_END
};

static int device_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error) {
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

/* The PFs as they are now against the last announcement; the inventory is small (a few PFs). */
static int sync_devices(Bus *b, bool announce) {
        const Inventory *inv = manager_inventory(b->manager);
        size_t n = inv ? inv->n_pfs : 0;
        _cleanup_free_ BusDeviceSnap *next = calloc(n ? n : 1, sizeof(*next));
        int r;

        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                device_snap(&inv->pfs[i], &next[i]);
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
                        emit_removed(b, path);
                        continue;
                }
                const char *changed[8];
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
                changed[k] = NULL;
                if (k > 0)
                        emit_changed(b, path, SRIOVD_BUS_DEVICE_INTERFACE, changed);
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
                emit_added(b, path);
        }
        free(b->devices);
        b->devices = TAKE_PTR(next);
        b->n_devices = n;
        return 0;
}

/* What tenants' records take from the inventory (their VF's PF and netdev): when it changed, every tenant is re-read. */
static uint64_t inventory_hash(const Inventory *inv) {
        uint64_t h = HASH_INIT;

        for (size_t i = 0; inv && i < inv->n_pfs; i++) {
                h = hash_str(h, inv->pfs[i].addr);
                for (size_t j = 0; j < inv->pfs[i].n_vfs; j++) {
                        h = hash_str(h, inv->pfs[i].vfs[j].addr);
                        h = hash_str(h, inv->pfs[i].vfs[j].netdev);
                }
        }
        return h;
}

/* Every tenant against the announcement: new ones added, gone ones removed, changed ones told. */
static int sync_all_tenants(Bus *b, bool announce) {
        size_t n = manager_n_tenants(b->manager);
        int r;

        if (!announce) {
                b->n_tenants = 0;
                if (GREEDY_REALLOC(b->tenants, b->allocated_tenants, n ? n : 1) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        TenantInfo t;
                        if (manager_tenant(b->manager, i, &t) < 0)
                                continue;
                        tenant_snap(&t, &b->tenants[b->n_tenants++]);
                }
                /* In id order for snap_find(), whatever order the manager keeps. */
                qsort_safe(b->tenants, b->n_tenants, sizeof(*b->tenants), snap_sort_cmp);
                return 0;
        }
        b->sweep++;
        for (size_t i = 0; i < n; i++) {
                TenantInfo t;
                if (manager_tenant(b->manager, i, &t) < 0)
                        continue;
                r = sync_tenant(b, t.tenant, &t);
                if (r < 0)
                        return r;
        }
        for (size_t i = b->n_tenants; i > 0; i--)
                if (b->tenants[i - 1].seen != b->sweep) {
                        char id[TENANT_ID_MAX];
                        strscpy(id, sizeof(id), b->tenants[i - 1].id);
                        r = sync_tenant(b, id, NULL);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* ---- What bus.c calls ---- */

void bus_objects_mark_tenant(Bus *b, const char *tenant) {
        for (size_t i = 0; i < b->n_dirty; i++)
                if (streq(b->dirty[i], tenant))
                        return;
        if (GREEDY_REALLOC(b->dirty, b->allocated_dirty, b->n_dirty + 1) < 0) {
                b->dirty_all = true;   /* no room to remember which: every tenant, then */
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
                return;   /* off the bus: bus_objects_reset() takes the picture on the way back */
        }
        if (b->dirty_all || h != b->inventory_hash) {
                b->inventory_hash = h;
                b->dirty_all = false;
                b->n_dirty = 0;
                r = sync_all_tenants(b, true);
        }
        for (size_t i = 0; r >= 0 && i < b->n_dirty; i++) {
                TenantInfo t;
                bool have = manager_get_tenant(b->manager, b->dirty[i], &t) >= 0;
                r = sync_tenant(b, b->dirty[i], have ? &t : NULL);
        }
        b->n_dirty = 0;
        if (r >= 0)
                r = sync_devices(b, true);
        if (r < 0)
                log_warning_errno(r, "Failed to announce tenants' and PFs' changes on D-Bus, ignoring: %m");
}

int bus_objects_reset(Bus *b) {
        int r;

        b->n_dirty = 0;
        b->dirty_all = false;
        b->inventory_hash = inventory_hash(manager_inventory(b->manager));
        r = sync_all_tenants(b, false);
        if (r < 0)
                return r;
        return sync_devices(b, false);
}

int bus_objects_register(Bus *b) {
        int r;

        r = sd_bus_add_object_manager(b->bus, &b->object_manager_slot, SRIOVD_BUS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(b->bus, &b->tenant_slot, SRIOVD_BUS_TENANT_PREFIX, SRIOVD_BUS_TENANT_INTERFACE,
                                       tenant_vtable, tenant_find, b);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(b->bus, &b->tenant_enum_slot, SRIOVD_BUS_TENANT_PREFIX, tenant_enumerate, b);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(b->bus, &b->device_slot, SRIOVD_BUS_DEVICE_PREFIX, SRIOVD_BUS_DEVICE_INTERFACE,
                                       device_vtable, device_find, b);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(b->bus, &b->device_enum_slot, SRIOVD_BUS_DEVICE_PREFIX, device_enumerate, b);
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
