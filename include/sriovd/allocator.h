/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator.h — who gets a VF and who gets virtio-net: pure, deterministic, every move a decision */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/policy.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"

/*
 * The allocator holds the VF pool and the tenants, and answers requests with
 * decisions (typed moves with old/new VF); another module carries them out
 * through libvirt. No I/O, no globals: the same calls in the same order give
 * the same decisions, since every tie is broken by PCI address, NUMA node,
 * tenant id or arrival sequence. The rules are in allocator.c's opening
 * comment.
 */

#define ALLOC_CLASSES_MAX 256
#define ALLOC_NODES_MAX 64            /* NUMA nodes 0..63; -1 = unknown / no preference */
#define ALLOC_VFS_MAX 65536
#define ALLOC_TENANTS_MAX 1000000     /* hard cap on AllocPolicy.max_tenants */
#define ALLOC_TENANTS_DEFAULT 16384
#define ALLOC_HEADROOM_DEFAULT 2
#define ALLOC_TARGET_DEFAULT 0.85
#define ALLOC_REASON_MAX 192
#define ALLOC_GUEST_MAX 256           /* a guest's name with the NUL: the libvirt domain */
#define ALLOC_RT_CPUS_MAX 8           /* RT CPUs one guest may book */
#define ALLOC_RT_SHARE_MAX 64         /* guests one RT CPU may serve */
#define ALLOC_RT_POOL_MAX 1024        /* = CPUSET_MAX */

/* allocator_request() outcome the caller must handle: a REFUSED decision says why. */
#define ALLOCATOR_REFUSED 1

/* A tenant class, filled by the daemon from config.h's TenantClass. */
typedef struct AllocClass {
        char name[CLASS_NAME_MAX];
        VnicKind vnic;
        int rank;                     /* higher keeps its VF longer, and is upgraded first */
        bool allow_remote_numa;       /* may get a VF on another node than the guest's */
        /* RT CPUs the guest's FIFO vCPUs need (0 = none), on its NIC's node; how many guests
         * of this class one RT CPU serves (1 = its own); with none free, placed without (true)
         * or refused (false). */
        unsigned rt_cpus;
        unsigned rt_share;
        bool rt_fallback;
} AllocClass;

/* One RT CPU the allocator may book for guests: the host's RT CPUs, with their node. */
typedef struct AllocRtCpu {
        unsigned cpu;
        int numa_node;                /* -1 = unknown */
} AllocRtCpu;

typedef struct AllocPolicy {
        const AllocClass *classes;    /* copied by allocator_new(); names unique */
        size_t n_classes;
        unsigned headroom;            /* free VFs per NUMA node sriov-preferred tenants may not take */
        double target_utilization;    /* 0 < t <= 1; caps the headroom, see allocator.c */
        size_t max_tenants;           /* 0 = ALLOC_TENANTS_DEFAULT */
} AllocPolicy;

#define ALLOC_POLICY_INIT(c, n)                                              \
        ((AllocPolicy) { .classes = (c), .n_classes = (n),                   \
                         .headroom = ALLOC_HEADROOM_DEFAULT,                 \
                         .target_utilization = ALLOC_TARGET_DEFAULT })

/* One created VF as the daemon sees it. */
typedef struct AllocVf {
        char addr[PCI_ADDR_MAX];
        char pf[PCI_ADDR_MAX];
        int numa_node;                /* -1 = the kernel does not know */
        bool healthy;
        bool reserved;                /* held back by the operator */
        /* Still in a guest although no tenant holds it any more (a live detach the guest has not
         * finished, a domain outside sriovd): given to no one until it is out. */
        bool in_guest;
        /* Bumped by the daemon when the PF's VFs were destroyed and created again:
         * a tenant on a VF whose generation changed is re-placed (re-attached). */
        uint32_t generation;
} AllocVf;

typedef enum AllocNic {
        ALLOC_NIC_NONE,               /* sriov-required tenant whose VF vanished, waiting for one */
        ALLOC_NIC_VF,
        ALLOC_NIC_VIRTIO,
        _ALLOC_NIC_MAX,
} AllocNic;

typedef struct AllocRequest {
        const char *tenant;
        const char *class_name;
        int numa_node;                /* the guest's node; -1 = no preference */
        /* The guest (libvirt domain) the tenant's NIC is in; NULL or "" = a guest of its own.
         * Tenants of one guest share its RT CPUs. */
        const char *guest;
} AllocRequest;

typedef enum AllocDecisionKind {
        ALLOC_DECISION_VF,            /* tenant gets new_vf (old_vf set: moved from it) */
        ALLOC_DECISION_VIRTIO,        /* tenant gets virtio-net (old_vf set: leaves it) */
        ALLOC_DECISION_DOWNGRADE,     /* old_vf -> virtio-net, freed for a sriov-required tenant */
        ALLOC_DECISION_UPGRADE,       /* virtio-net -> new_vf, a waiting sriov-preferred tenant */
        ALLOC_DECISION_REFUSED,       /* nothing changed; reason says why */
        ALLOC_DECISION_RELEASED,      /* tenant gone; old_vf (if any) is free */
        ALLOC_DECISION_REPLACED,      /* pool change: old_vf -> new_vf, or -> "" (virtio-net for
                                       * sriov-preferred, no NIC for sriov-required) */
        ALLOC_DECISION_RT_CPUS,       /* the tenant's guest got other RT CPUs (or none); NIC unchanged */
        _ALLOC_DECISION_KIND_MAX,
} AllocDecisionKind;

/* What a REFUSED decision lacked. */
typedef enum AllocMissing {
        ALLOC_MISSING_NONE,
        ALLOC_MISSING_VF,
        ALLOC_MISSING_RT_CPU,
        ALLOC_MISSING_TENANTS,        /* the tenant limit */
        _ALLOC_MISSING_MAX,
} AllocMissing;

typedef struct AllocDecision {
        AllocDecisionKind kind;
        char tenant[TENANT_ID_MAX];
        char old_vf[PCI_ADDR_MAX];    /* "" = none */
        char new_vf[PCI_ADDR_MAX];    /* "" = none */
        AllocNic nic;                 /* the tenant's NIC after the decision */
        bool remote_numa;             /* new_vf is not on the guest's node */
        AllocMissing missing;         /* REFUSED: what was lacking */
        /* The guest's RT CPUs after the decision (rt_changed: they are not what they were). */
        bool rt_changed;
        uint8_t n_rt_cpus;
        uint16_t rt_cpus[ALLOC_RT_CPUS_MAX];
        char reason[ALLOC_REASON_MAX];
} AllocDecision;

/* Decisions are appended in the order they are to be carried out. */
typedef struct AllocDecisions {
        AllocDecision *decisions;
        size_t n_decisions, n_allocated;
} AllocDecisions;

void alloc_decisions_clear(AllocDecisions *d);  /* n = 0, memory kept */
void alloc_decisions_done(AllocDecisions *d);   /* frees, leaves it empty */

/* A tenant as stored; pointers valid until the next call that changes the allocator. */
typedef struct AllocTenant {
        const char *id;
        const char *class_name;
        int numa_node;
        AllocNic nic;
        const char *vf;               /* ALLOC_NIC_VF: its VF, else NULL */
        bool remote_numa;
        uint64_t seq;                 /* arrival sequence, the tie-break after rank */
        /* Its guest's RT CPUs, if its class books them: the guest's name ("" = none booked:
         * its own), the CPUs, and whether it waits for them (a class that falls back). */
        const char *guest;
        const uint16_t *rt_cpus;
        unsigned n_rt_cpus;
        bool rt_waiting;
} AllocTenant;

/* Every VF counts once: n_vfs = usable + unhealthy + reserved + in_guest (in that order of
 * precedence: reserved, unhealthy, in_guest); usable = allocated + free; tenants = on_vf +
 * on_virtio + waiting. */
typedef struct AllocStats {
        unsigned n_vfs, usable, unhealthy, reserved, in_guest;
        unsigned allocated, free;     /* of the usable ones */
        unsigned held_unusable;       /* held but not usable: only between restore and reconcile */
        size_t tenants, on_vf, on_virtio, waiting;
        size_t remote;                /* tenants on a VF off their guest's node */
        size_t preferred_on_virtio;   /* sriov-preferred tenants waiting for an upgrade */
        double utilization;           /* allocated / usable; 0 when nothing is usable */
        /* RT CPUs: in the pool, booked by at least one guest; guests holding RT CPUs, and those
         * of a falling-back class placed without them (they get one when one is free). */
        unsigned rt_cpus, rt_cpus_booked;
        size_t rt_guests, rt_guests_waiting;
} AllocStats;

/* The RT CPUs of one NUMA node and their use: what operators and controllers see of the pool. */
typedef struct AllocRtNode {
        int numa_node;                /* -1 = unknown (CPUs), or any node (waiting guests) */
        unsigned cpus;                /* RT CPUs of the pool on the node */
        unsigned booked;              /* of them, booked by at least one guest */
        unsigned shared;              /* of the booked, serving more than one guest (rt_share > 1) */
        /* More guests the booked CPUs may still take, each up to the least rt_share of the guests
         * it serves: room only for a class that shares as well. */
        unsigned room;
        unsigned guests;              /* guests holding RT CPUs of the node */
        unsigned waiting;             /* guests of a falling-back class placed without, to be booked here */
} AllocRtNode;
#define ALLOC_RT_NODES_MAX (ALLOC_NODES_MAX + 1)

typedef struct Allocator Allocator;

/* [A-Za-z0-9._-]{1,63}, and not "." or ".." (ids name state files). */
bool tenant_id_valid(const char *id);

/*
 * A new allocator with no pool and no tenants. -EINVAL: a class name that is
 * not a valid id or repeats, a target outside (0, 1], more than
 * ALLOC_CLASSES_MAX classes or max_tenants above ALLOC_TENANTS_MAX. Free with
 * allocator_free().
 */
int allocator_new(const AllocPolicy *policy, Allocator **ret);
Allocator *allocator_free(Allocator *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Allocator *, allocator_free);
/* An independent copy, making the same decisions from here on: what a change that may have to
 * be taken back (it could not be saved) starts from. -ENOMEM. */
int allocator_clone(const Allocator *a, Allocator **ret);

/*
 * Replace the pool (copied; any order) and reconcile: tenants on a VF that
 * vanished, turned unhealthy or reserved, was re-created, or now sits on a
 * node their class may not use are re-placed (REPLACED), sriov-required
 * tenants without a NIC get one where possible (downgrading others), and
 * waiting tenants are upgraded into free VFs. Decisions are appended to
 * *ret. -EINVAL: an invalid or repeated address, a node out of range, more
 * than ALLOC_VFS_MAX VFs; -ENOMEM. On failure nothing changed.
 */
int allocator_set_pool(Allocator *a, const AllocVf *vfs, size_t n_vfs, AllocDecisions *ret);
/*
 * Replace the RT CPU pool (copied; any order; each CPU once, below ALLOC_RT_POOL_MAX). Guests on
 * a CPU that left are booked again (RT_CPUS decisions say why), waiting ones are served. Call it
 * before restoring tenants, so their saved CPUs are found. -EINVAL, -ENOMEM (nothing changed).
 */
int allocator_set_rt_cpus(Allocator *a, const AllocRtCpu *cpus, size_t n, AllocDecisions *ret);
/* The reconcile of allocator_set_pool() on the current pool: after restoring tenants. */
int allocator_reconcile(Allocator *a, AllocDecisions *ret);

/*
 * Place a tenant, or re-place it when its class or NUMA node changed; a
 * repeat of the current class and node returns 0 and decides nothing.
 * Returns 0 (decisions appended, possibly none), ALLOCATOR_REFUSED (one
 * REFUSED decision appended, nothing else changed), -EINVAL (invalid id or
 * node), -ENOENT (unknown class), -ENOMEM (nothing changed).
 */
int allocator_request(Allocator *a, const AllocRequest *req, AllocDecisions *ret);
/* The tenant is gone: RELEASED, then upgrades into its VF. -ENOENT when unknown (no change). */
int allocator_release(Allocator *a, const char *tenant, AllocDecisions *ret);
/*
 * Mark vf as still in a guest, or out of it again. Marked, it is not usable: no one is given it (a
 * tenant that holds it keeps it: release it next, as a release whose guest has yet to let go does).
 * Out again, waiting tenants are served from it (decisions appended). -ENOENT: not in the pool;
 * -EINVAL, -ENOMEM (nothing changed).
 */
int allocator_set_vf_in_guest(Allocator *a, const char *vf, bool in_guest, AllocDecisions *ret);

/*
 * Load a saved placement without decisions (daemon start), never refusing a tenant for
 * what the host or its class became meanwhile: a saved VF that is not in the pool (or is
 * held already) is not kept, and a NIC its class no longer allows (a virtio class on a
 * VF) is not either; allocator_reconcile(), called after the last restore, re-places those
 * tenants with a REPLACED decision that says why, preferring free VFs. A tenant saved
 * without a VF waits as its class waits now (sriov-required: no NIC; else virtio-net).
 * Since no restore takes another tenant's VF, the order of the calls does not matter.
 * RT CPUs likewise: t->guest and t->rt_cpus are the saved booking, kept when every CPU is still
 * in the RT pool with room; else the reconcile books the guest anew and says why.
 * -EINVAL (id, node or NIC invalid), -EEXIST, -ENOENT (class), -ENOSPC, -ENOMEM.
 */
int allocator_restore_tenant(Allocator *a, const AllocTenant *t);

/* Arrival numbers up to seq are taken (by tenants kept outside the allocator): new ones come after. */
void allocator_reserve_seq(Allocator *a, uint64_t seq);
size_t allocator_n_tenants(const Allocator *a);
/* The i-th tenant in id order, for persistence; -ERANGE past the end. */
int allocator_tenant(const Allocator *a, size_t i, AllocTenant *ret);
int allocator_find_tenant(const Allocator *a, const char *id, AllocTenant *ret);
/* The tenant id holding the VF, NULL when free or unknown. */
const char *allocator_vf_holder(const Allocator *a, const char *vf);
/* How many RT CPUs class_name's guests need when the class refuses without them; 0 otherwise. */
unsigned allocator_class_rt_required(const Allocator *a, const char *class_name);
void allocator_stats(const Allocator *a, AllocStats *ret);
/* Per NUMA node with RT CPUs or guests for them, node order with -1 last: up to n rows into ret;
 * returns how many there are (at most ALLOC_RT_NODES_MAX). The rows add up to AllocStats' rt_*. */
size_t allocator_rt_nodes(const Allocator *a, AllocRtNode *ret, size_t n);

/* Internal consistency (holders, counters, the waiting order): 0, or -EUCLEAN. For tests. */
int allocator_verify(const Allocator *a);

const char *alloc_decision_kind_to_string(AllocDecisionKind k);
const char *alloc_nic_to_string(AllocNic n);
const char *alloc_missing_to_string(AllocMissing m);
