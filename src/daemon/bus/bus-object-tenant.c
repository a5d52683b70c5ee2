/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-object-tenant.c — org.sriovd.Tenant1 at /org/sriovd/Manager1/tenant/ID and its change signals */

#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/protocol/bus-protocol.h"
#include "bus-internal.h"

static void tenant_snap(const TenantInfo *t, BusTenantSnap *ret) {
        *ret = (BusTenantSnap) {
                .kind = t->kind,
                .state = t->state,
                .vlan = t->vlan,
                .numa_node = t->numa_node,
                .domain_hash = bus_hash_str(BUS_HASH_INIT, t->domain),
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
        strscpy(ret->pin_pf, sizeof(ret->pin_pf), t->pin_pf);
        strscpy(ret->domain_uuid, sizeof(ret->domain_uuid), t->domain_uuid);
        strscpy(ret->owner, sizeof(ret->owner), t->owner);
}

/* Lists in ret the Tenant1 properties that differ between a and b, ending with NULL.
 * ret must have room for 24 entries. */
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
        DIFF(!streq(a->pin_pf, b->pin_pf), "PinPf");
        DIFF(!streq(a->domain_uuid, b->domain_uuid), "DomainUuid");
        DIFF(!streq(a->owner, b->owner), "Owner");
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

int bus_tenant_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                    sd_bus_error *error) {
        Bus *b = userdata;
        TenantInfo t;

        /* A tenant being announced as removed must still be found, so that the signal can name its interface. */
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
        S("PinPf", t.pin_pf);
        S("DomainUuid", t.domain_uuid);
        S("Owner", t.owner);
#undef S
#undef I
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property %s", property);
}

#define TENANT_PROPERTY(name, type) \
        SD_BUS_PROPERTY(name, type, tenant_property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

const sd_bus_vtable bus_tenant_vtable[] = {
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
        TENANT_PROPERTY("PinPf", "s"),
        TENANT_PROPERTY("DomainUuid", "s"),
        TENANT_PROPERTY("Owner", "s"),
        SD_BUS_VTABLE_END
};

int bus_tenant_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes, sd_bus_error *error) {
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

/* Announces what became of one tenant since the last announcement. Nothing is sent when nothing changed. */
int bus_sync_tenant(Bus *b, const char *id, const TenantInfo *now) {
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
                bus_emit_removed(b, path);
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
                bus_emit_added(b, path);
                return 0;
        }
        const char *changed[24];
        if (tenant_changed(old, &next, changed) > 0)
                bus_emit_changed(b, path, SRIOVD_BUS_TENANT_INTERFACE, changed);
        *old = next;
        return 0;
}

/* Compares every tenant with the last announcement. New tenants are added, gone ones are removed,
 * and changed ones are announced. With announce false, it records the tenants without any signal. */
int bus_sync_all_tenants(Bus *b, bool announce) {
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
                /* snap_find() needs the tenants in ID order, whatever order the manager keeps. */
                qsort_safe(b->tenants, b->n_tenants, sizeof(*b->tenants), snap_sort_cmp);
                return 0;
        }
        b->sweep++;
        for (size_t i = 0; i < n; i++) {
                TenantInfo t;
                if (manager_tenant(b->manager, i, &t) < 0)
                        continue;
                r = bus_sync_tenant(b, t.tenant, &t);
                if (r < 0)
                        return r;
        }
        for (size_t i = b->n_tenants; i > 0; i--)
                if (b->tenants[i - 1].seen != b->sweep) {
                        char id[TENANT_ID_MAX];
                        strscpy(id, sizeof(id), b->tenants[i - 1].id);
                        r = bus_sync_tenant(b, id, NULL);
                        if (r < 0)
                                return r;
                }
        return 0;
}
