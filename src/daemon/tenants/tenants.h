/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants.h — who holds which NIC: the allocator's decisions, saved before they are acknowledged */
#pragma once

#include "sriovd/core/allocator.h"
#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "sriovd/shared/pci-set.h"
#include "sriovd/shared/util.h"
#include "config/config.h"
#include "state/state-writer.h"

typedef struct Tenants Tenants;

/* What a caller may ask for besides the class. */
typedef struct TenantOptions {
        int numa_node;                /* the guest's node, or -1 for any */
        bool have_mac;                /* when false, the MAC is derived from the tenant id, same on every host */
        uint8_t mac[6];
        int vlan;                     /* the 802.1Q tag on the VF, or -1 for none, which leaves the PF's policy */
        char pin_pf[PCI_ADDR_MAX];    /* the PF that the tenant's VF must come from, or "" for any */
        char domain_uuid[UUID_STR_MAX];   /* the libvirt domain's UUID, or "" to find it by name */
        char owner[TENANT_ID_MAX];    /* who asked for the tenant, or "" */
        TxRates tx_rates;             /* the tenant's own rate caps; the rest come from its class */
} TenantOptions;
#define TENANT_OPTIONS_DEFAULT ((TenantOptions) { .numa_node = -1, .vlan = -1 })

typedef struct TenantInfo {
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];
        const char *kind;             /* "vf", "virtio", or "none" for a sriov-required tenant waiting for a VF */
        char vf[PCI_ADDR_MAX];        /* "" unless kind is "vf" */
        char pf[PCI_ADDR_MAX];        /* the VF's PF, or "" like vf */
        char netdev[IF_NAMESIZE];     /* the VF's host netdev; "" when passed through or virtio */
        char mac[MAC_STR_MAX];        /* the tenant's MAC, on its VF or its virtio NIC */
        int vlan;                     /* -1 for none */
        char domain[256];             /* the libvirt domain, or "" for none */
        int numa_node;                /* the guest's node, or -1 for any */
        bool remote_numa;             /* the VF is not on the guest's node */
        bool have_coalesce;           /* per-guest coalescing override */
        unsigned rx_usecs, tx_usecs;
        const char *state;            /* "allocated" or "waiting" */
        /*
         * The guest's booked RT CPUs, vCPU 0's first, if the tenant's class books them.
         * rt_waiting means that the guest should have some and waits for one to be free.
         */
        unsigned n_rt_cpus;
        uint16_t rt_cpus[ALLOC_RT_CPUS_MAX];
        bool rt_waiting;
        char pin_pf[PCI_ADDR_MAX];    /* "" when not pinned */
        char domain_uuid[UUID_STR_MAX];
        char owner[TENANT_ID_MAX];
        TxRates tx_rates;             /* what the tenant asked for */
} TenantInfo;

/*
 * How sriovd names the tenant's guest to libvirt: the domain's UUID when the tenant has one, else
 * its name. The virt layer takes either.
 */
static inline const char *tenant_domain_ref(const TenantInfo *t) {
        return t->domain_uuid[0] ? t->domain_uuid : t->domain;
}

/* What a decision's NIC carries besides the VF: where it goes, and how it looks. */
typedef struct TenantNicFacts {
        const char *class_name;
        const char *domain;           /* its name or UUID, as tenant_domain_ref(); "" when there is no guest to attach to */
        char mac[MAC_STR_MAX];
        int vlan;
        TxRates tx_rates;             /* the tenant's own; its class gives the rest */
} TenantNicFacts;

/* Callbacks that hear of every decision that moves a tenant, and of every problem with the saved state. */
typedef struct TenantsLog {
        void (*decision)(const AllocDecision *d, const TenantNicFacts *nic, void *userdata);
        void (*problem)(int error, const char *tenant, const char *message, void *userdata);
        /*
         * The write of group seq is done. error is 0 when the group is durable. Otherwise it is
         * the error, and every change of the group was undone.
         */
        void (*saved)(int error, size_t n_changes, uint64_t seq, void *userdata);
        void *userdata;
} TenantsLog;

/*
 * Open the state directory, creating it if needed, and load the saved allocations. The first
 * tenants_configure() places them. A NULL state_dir keeps everything in memory, for dry runs
 * and fixtures. A corrupt file is moved aside and reported through log->problem. sriovd then
 * starts empty rather than not at all.
 */
int tenants_new(const char *state_dir, const TenantsLog *log, Tenants **ret);
/*
 * Read the saved allocations of state_dir without writing, for sriovd --dry-run beside a
 * running daemon. Nothing in the directory is created, removed or moved aside, and every later
 * change stays in memory. A missing directory or file reads as no allocations. A corrupt file
 * is reported through log->problem and read as no allocations.
 */
int tenants_new_readonly(const char *state_dir, const TenantsLog *log, Tenants **ret);
Tenants *tenants_free(Tenants *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Tenants *, tenants_free);

/*
 * Build the allocator, or build it again, from the configuration's classes and the VFs in inv.
 * Then place every known tenant again: as saved where that still holds, and anew otherwise,
 * with a decision for each move. A tenant whose class no longer exists is kept, reported and
 * written back untouched. It is never dropped.
 */
int tenants_configure(Tenants *t, const Config *cfg, const Inventory *inv);
/* The VFs were created, vanished or created again. Place the affected tenants again, and save. */
int tenants_update_pool(Tenants *t, const Config *cfg, const Inventory *inv);
/* sriovd rewrote pf's sriov_numvfs. Its VFs are new devices, and their holders must attach them again. */
void tenants_vfs_recreated(Tenants *t, const char *pf);

int tenants_allocate(Tenants *t, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, char *reason, size_t reason_size);
/*
 * With vf_stays_in_guest, the guest keeps the VF until a live detach completes. The VF goes to
 * no one until tenants_set_vfs_in_guest() no longer lists it.
 */
int tenants_release(Tenants *t, const char *tenant, bool vf_stays_in_guest);
/*
 * Set the VFs that libvirt's domains have although no tenant holds them. That happens after a
 * release whose guest has not let go yet, and for a domain outside sriovd. No one gets these
 * VFs. A VF that is no longer listed serves waiting tenants, and the decisions are saved first.
 * Returns 1 when the set changed, and 0 when not. On a negative errno, nothing changed.
 */
int tenants_set_vfs_in_guest(Tenants *t, const char (*vfs)[PCI_ADDR_MAX], size_t n);
/*
 * Returns -ENOENT for an unknown tenant, -EINVAL out of range, and -EMEDIUMTYPE for a tenant on
 * virtio-net, which has no VF. On these errors, nothing changed.
 */
int tenants_set_coalesce(Tenants *t, const char *tenant, unsigned rx_usecs, unsigned tx_usecs);

/*
 * Each change above is one line appended to the journal. Once the journal has grown enough, the
 * whole file is to be rewritten, which empties the journal. The rewrite runs after the reply,
 * from a deferred source on the event loop, not inside the call.
 */
bool tenants_want_rewrite(const Tenants *t);
int tenants_rewrite(Tenants *t);

/*
 * Changes saved together, see tenants-group.c. After tenants_group_open(), the changes above
 * are applied in memory as ever. But their journal lines are kept, and the decisions' reports
 * are held, until tenants_flush() writes them all with one fdatasync(), or writes the whole
 * file. If that fails, every change since the open is undone, so memory equals what is on disk,
 * and log->saved says so. Any other change flushes first: configure, the pool, VFs in guests
 * and a rewrite. So the group always holds the latest changes, in order. Without an open group,
 * each change is saved on its own.
 */
int tenants_group_open(Tenants *t);
bool tenants_group_pending(const Tenants *t);
int tenants_flush(Tenants *t);
/*
 * The daemon's event loop sets a writer. With a writer, tenants_flush_start() hands the open
 * group's lines to the writer's thread and returns. Groups opened meanwhile wait for it and go
 * next. log->saved tells each group's outcome by its seq, in order. A failed write undoes its
 * group and every group after it, because they were made on top of it. Anything else that
 * writes, tenants_flush() among them, waits for the write in flight first. Without a writer, or
 * when the group is written as the whole file, tenants_flush_start() is tenants_flush().
 */
void tenants_set_writer(Tenants *t, StateWriter *w);
int tenants_flush_start(Tenants *t);
/*
 * The seq of the latest change that is not yet durable: the open group's, or else the one in
 * flight. Returns 0 for none.
 */
uint64_t tenants_pending_seq(const Tenants *t);

/* What a tenant has. inv fills in the VF's PF and host netdev. Returns -ENOENT for an unknown tenant. */
int tenants_get(const Tenants *t, const Inventory *inv, const char *tenant, TenantInfo *ret);
size_t tenants_count(const Tenants *t);
int tenants_nth(const Tenants *t, const Inventory *inv, size_t i, TenantInfo *ret);
void tenants_stats(const Tenants *t, AllocStats *ret);
/* allocator_pf_stats() of the tenants' allocator, all zero before there is an allocator. */
void tenants_pf_stats(const Tenants *t, const char *pf, AllocPfStats *ret);
/* The allocator's i-th class in name order, or NULL past the end or before there is an allocator. */
const char *tenants_class_name(const Tenants *t, size_t i);
/* allocator_rt_nodes() of the tenants' allocator, with 0 rows before there is an allocator. */
size_t tenants_rt_nodes(const Tenants *t, AllocRtNode *ret, size_t n);
double tenants_target(const Tenants *t);
/* The tenant's libvirt domain as tenant_domain_ref() names it, or "" for none or for an unknown tenant. */
const char *tenants_domain(const Tenants *t, const char *tenant);

/*
 * Fill ret with the VFs that no tenant holds but that are not free either. They are in a guest,
 * as set by tenants_set_vfs_in_guest(), or they are an orphan's. Returns -ENOMEM or 0.
 */
int tenants_held_vfs(const Tenants *t, PciSet *ret);
/* The VFs that tenants hold, sorted by VF, with what the planner needs: MAC, VLAN, class and window. */

int tenants_plan_allocations(const Tenants *t, PlanAllocation **ret, size_t *ret_n);
