/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tenants.h — who holds which NIC: the allocator's decisions, saved before they are acknowledged */
#pragma once

#include "sriovd/allocator.h"
#include "sriovd/config.h"
#include "sriovd/inventory.h"
#include "sriovd/plan.h"
#include "sriovd/state-writer.h"

typedef struct Tenants Tenants;

/* What a caller may ask for besides the class. */
typedef struct TenantOptions {
        int numa_node;                /* the guest's node, -1 = any */
        bool have_mac;                /* false: derived from the tenant id (stable across hosts) */
        uint8_t mac[6];
        int vlan;                     /* 802.1Q tag on the tenant's VF, -1 = none (the PF's policy) */
} TenantOptions;
#define TENANT_OPTIONS_DEFAULT ((TenantOptions) { .numa_node = -1, .vlan = -1 })

typedef struct TenantInfo {
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];
        const char *kind;             /* "vf", "virtio", or "none" (a sriov-required tenant waiting for a VF) */
        char vf[PCI_ADDR_MAX];        /* "" unless kind is "vf" */
        char pf[PCI_ADDR_MAX];        /* the VF's PF, "" likewise */
        char netdev[IF_NAMESIZE];     /* the VF's host netdev; "" when passed through or virtio */
        char mac[MAC_STR_MAX];        /* the tenant's MAC (VF or virtio NIC) */
        int vlan;                     /* -1 = none */
        char domain[256];             /* libvirt domain, "" = none */
        int numa_node;                /* the guest's node, -1 = any */
        bool remote_numa;             /* the VF is not on the guest's node */
        bool have_coalesce;           /* per-guest coalescing override */
        unsigned rx_usecs, tx_usecs;
        const char *state;            /* "allocated" or "waiting" */
        /* Its guest's booked RT CPUs (vCPU 0's first), if its class books them; rt_waiting: it
         * should have some and waits for one to be free. */
        unsigned n_rt_cpus;
        uint16_t rt_cpus[ALLOC_RT_CPUS_MAX];
        bool rt_waiting;
} TenantInfo;

/* What a decision's NIC carries besides the VF: where it goes and how it looks. */
typedef struct TenantNicFacts {
        const char *class_name;
        const char *domain;           /* "" = no guest to attach to */
        char mac[MAC_STR_MAX];
        int vlan;
} TenantNicFacts;

/* Told every decision that moves a tenant, and every problem with the saved state. */
typedef struct TenantsLog {
        void (*decision)(const AllocDecision *d, const TenantNicFacts *nic, void *userdata);
        void (*problem)(int error, const char *tenant, const char *message, void *userdata);
        /* Group seq's write is done: 0 durable, else the error, every change of it undone. */
        void (*saved)(int error, size_t n_changes, uint64_t seq, void *userdata);
        void *userdata;
} TenantsLog;

/*
 * Open (creating it) the state directory and load the saved allocations; they
 * are placed by the first tenants_configure(). state_dir NULL keeps everything
 * in memory (dry runs, fixtures). A corrupt file is moved aside and reported
 * through log->problem, then sriovd starts empty rather than not at all.
 */
int tenants_new(const char *state_dir, const TenantsLog *log, Tenants **ret);
/*
 * The saved allocations of state_dir, read only (sriovd --dry-run beside a running daemon):
 * nothing in the directory is created, removed or moved aside, and every later change stays in
 * memory. A missing directory or file reads as no allocations; a corrupt one is reported through
 * log->problem and read as none.
 */
int tenants_new_readonly(const char *state_dir, const TenantsLog *log, Tenants **ret);
Tenants *tenants_free(Tenants *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Tenants *, tenants_free);

/*
 * (Re)build the allocator from the configuration's classes and the VFs in inv,
 * and place every known tenant again: as saved where that still holds,
 * otherwise anew (each move a decision). A tenant whose class no longer
 * exists is kept, reported, and written back untouched: never dropped.
 */
int tenants_configure(Tenants *t, const Config *cfg, const Inventory *inv);
/* The VFs changed (created, vanished, re-created): re-place who is affected and save. */
int tenants_update_pool(Tenants *t, const Config *cfg, const Inventory *inv);
/* sriovd rewrote pf's sriov_numvfs: its VFs are new devices, whose holders must re-attach. */
void tenants_vfs_recreated(Tenants *t, const char *pf);

int tenants_allocate(Tenants *t, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, char *reason, size_t reason_size);
/* vf_stays_in_guest: its guest has the VF until a live detach completes; the VF is given to no one
 * until tenants_set_vfs_in_guest() no longer lists it. */
int tenants_release(Tenants *t, const char *tenant, bool vf_stays_in_guest);
/*
 * The VFs libvirt's domains have although no tenant holds them (a release whose guest has not let go
 * yet, a domain outside sriovd): given to no one. A VF no longer listed serves waiting tenants
 * (saved first). 1 when the set changed, 0 when not; <0: nothing changed.
 */
int tenants_set_vfs_in_guest(Tenants *t, const char (*vfs)[PCI_ADDR_MAX], size_t n);
/* -ENOENT unknown, -EINVAL out of range, -EMEDIUMTYPE on virtio-net (no VF): nothing changed. */
int tenants_set_coalesce(Tenants *t, const char *tenant, unsigned rx_usecs, unsigned tx_usecs);

/* Each change above is one line appended to the journal. Once it has grown enough, the file is to
 * be rewritten whole, which empties it: after the reply, from the event loop, not in it. */
bool tenants_want_rewrite(const Tenants *t);
int tenants_rewrite(Tenants *t);

/*
 * Changes saved together (tenants-group.c). After tenants_group_open(), the changes above are
 * applied in memory as ever, but their journal lines are kept, and the decisions' reports held,
 * until tenants_flush() writes them all with one fdatasync() (or the file whole). If that fails,
 * every change since the open is undone: memory equals what is on disk, log->saved says so. Any
 * other change (configure, the pool, VFs in guests, a rewrite) flushes first, so the group is
 * always the latest changes, in order. Without an open group, each change is saved on its own.
 */
int tenants_group_open(Tenants *t);
bool tenants_group_pending(const Tenants *t);
int tenants_flush(Tenants *t);
/*
 * With a writer (the daemon's event loop), tenants_flush_start() hands the open group's lines to
 * its thread and returns; groups opened meanwhile wait for it and go next, and log->saved tells
 * each group's outcome by its seq, in order. A failed write undoes its group and every one after
 * it (they were made on top of it). Whatever else writes (tenants_flush() among them) waits for
 * the write in flight first. Without a writer, or when the group is the file written whole, it
 * is tenants_flush().
 */
void tenants_set_writer(Tenants *t, StateWriter *w);
int tenants_flush_start(Tenants *t);
/* The seq of the latest change not yet durable (the open group's, else the one in flight); 0 none. */
uint64_t tenants_pending_seq(const Tenants *t);

/* What a tenant has; inv fills in the VF's PF and host netdev. -ENOENT when unknown. */
int tenants_get(const Tenants *t, const Inventory *inv, const char *tenant, TenantInfo *ret);
size_t tenants_count(const Tenants *t);
int tenants_nth(const Tenants *t, const Inventory *inv, size_t i, TenantInfo *ret);
void tenants_stats(const Tenants *t, AllocStats *ret);
/* allocator_rt_nodes() of the tenants' allocator (0 rows before there is one). */
size_t tenants_rt_nodes(const Tenants *t, AllocRtNode *ret, size_t n);
double tenants_target(const Tenants *t);
/* The tenant's libvirt domain, "" for none or an unknown tenant. */
const char *tenants_domain(const Tenants *t, const char *tenant);

/* The VFs no tenant holds that are not free either: in a guest (tenants_set_vfs_in_guest()), or an
 * orphan's. The caller frees *ret. */
int tenants_held_vfs(const Tenants *t, char (**ret)[PCI_ADDR_MAX], size_t *ret_n);
/* The VFs tenants hold, with what the planner needs (MAC, VLAN, class, window), sorted by VF. */
int tenants_plan_allocations(const Tenants *t, PlanAllocation **ret, size_t *ret_n);
