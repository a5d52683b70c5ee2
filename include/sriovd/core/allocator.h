/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* allocator.h — who gets a VF and who gets virtio-net, without I/O, deterministic, every move a decision */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/shared/macro.h"
#include "inventory.h"
#include "policy.h"

/*
 * The allocator holds the VF pool and the tenants. It answers requests with decisions, which
 * are typed moves with an old and a new VF. Another module carries them out through libvirt.
 * The allocator has no I/O and no globals. The same calls in the same order give the same
 * decisions, because every tie is broken by PCI address, NUMA node, tenant id or arrival
 * sequence. allocator.c's opening comment states the rules.
 */

#define ALLOC_CLASSES_MAX 256
#define ALLOC_NODES_MAX 64            /* NUMA nodes 0..63; -1 means unknown, or no preference */
#define ALLOC_VFS_MAX 65536
#define ALLOC_TENANTS_MAX 1000000     /* the hard cap on AllocPolicy.max_tenants */
#define ALLOC_TENANTS_DEFAULT 16384
#define ALLOC_HEADROOM_DEFAULT 2
#define ALLOC_TARGET_DEFAULT 0.85
#define ALLOC_REASON_MAX 192
#define ALLOC_GUEST_MAX 256           /* a guest's name, the libvirt domain, with the NUL */
#define ALLOC_RT_CPUS_MAX 8           /* the RT CPUs that one guest may book */
#define ALLOC_RT_SHARE_MAX 64         /* the guests that one RT CPU may serve */
#define ALLOC_RT_POOL_MAX 1024        /* the same as CPUSET_MAX */

/* An outcome of allocator_request() that the caller must handle. A REFUSED decision says why. */
#define ALLOCATOR_REFUSED 1

/* A tenant class, filled by the daemon from config.h's TenantClass. */
typedef struct AllocClass {
        char name[CLASS_NAME_MAX];
        VnicKind vnic;
        int rank;                     /* a higher rank keeps its VF longer, and is upgraded first */
        bool allow_remote_numa;       /* the tenant may get a VF on another node than the guest's */
        /*
         * rt_cpus is the number of RT CPUs that the guest's FIFO vCPUs need on its NIC's node,
         * or 0 for none. rt_share is how many guests of this class one RT CPU serves, and 1
         * gives a guest its own CPU. When no RT CPU is free, a class with rt_fallback is placed
         * without one, and any other class is refused.
         */
        unsigned rt_cpus;
        unsigned rt_share;
        bool rt_fallback;
} AllocClass;

/* One RT CPU that the allocator may book for guests. These are the host's RT CPUs, with their nodes. */
typedef struct AllocRtCpu {
        unsigned cpu;
        int numa_node;                /* -1 when unknown */
} AllocRtCpu;

typedef struct AllocPolicy {
        const AllocClass *classes;    /* copied by allocator_new(); the names are unique */
        size_t n_classes;
        unsigned headroom;            /* the free VFs per NUMA node that sriov-preferred tenants may not take */
        double target_utilization;    /* above 0 and at most 1; it caps the headroom, see allocator.c */
        size_t max_tenants;           /* 0 means ALLOC_TENANTS_DEFAULT */
} AllocPolicy;

#define ALLOC_POLICY_INIT(c, n)                                              \
        ((AllocPolicy) { .classes = (c), .n_classes = (n),                   \
                         .headroom = ALLOC_HEADROOM_DEFAULT,                 \
                         .target_utilization = ALLOC_TARGET_DEFAULT })

/* One created VF as the daemon sees it. */
typedef struct AllocVf {
        char addr[PCI_ADDR_MAX];
        char pf[PCI_ADDR_MAX];
        int numa_node;                /* -1 when the kernel does not know */
        bool healthy;
        bool reserved;                /* held back by the operator */
        /*
         * The VF is still in a guest although no tenant holds it any more. That happens during a
         * live detach that the guest has not finished, and for a domain outside sriovd. No one
         * gets the VF until it is out.
         */
        bool in_guest;
        /*
         * The daemon bumps this when the PF's VFs were destroyed and created again. A tenant on a
         * VF whose generation changed is placed again, which attaches the VF again.
         */
        uint32_t generation;
} AllocVf;

typedef enum AllocNic {
        ALLOC_NIC_NONE,               /* a sriov-required tenant without a VF, waiting for one */
        ALLOC_NIC_VF,
        ALLOC_NIC_VIRTIO,
        _ALLOC_NIC_MAX,
} AllocNic;

typedef struct AllocRequest {
        const char *tenant;
        const char *class_name;
        int numa_node;                /* the guest's node, or -1 for no preference */
        /*
         * The guest, a libvirt domain, that the tenant's NIC is in. NULL or "" means a guest of
         * the tenant's own. The tenants of one guest share its RT CPUs.
         */
        const char *guest;
        /*
         * A PF's address, or NULL or "" for any PF. A pinned tenant gets a VF of that PF only.
         * A sriov-required tenant then waits rather than take another PF's VF, and a
         * sriov-preferred tenant stays on virtio-net.
         */
        const char *pin_pf;
} AllocRequest;

typedef enum AllocDecisionKind {
        ALLOC_DECISION_VF,            /* the tenant gets new_vf; if old_vf is set, it moved from there */
        ALLOC_DECISION_VIRTIO,        /* the tenant gets virtio-net; if old_vf is set, it leaves that */
        ALLOC_DECISION_DOWNGRADE,     /* old_vf to virtio-net, freed for a sriov-required tenant */
        ALLOC_DECISION_UPGRADE,       /* virtio-net to new_vf, for a waiting sriov-preferred tenant */
        ALLOC_DECISION_REFUSED,       /* nothing changed, and reason says why */
        ALLOC_DECISION_RELEASED,      /* the tenant is gone, and old_vf, if any, is free */
        /*
         * A pool change moves the tenant from old_vf to new_vf, or to "". "" means virtio-net for
         * a sriov-preferred tenant, and no NIC for a sriov-required tenant.
         */
        ALLOC_DECISION_REPLACED,
        ALLOC_DECISION_RT_CPUS,       /* the guest got other RT CPUs, or none; the NIC is unchanged */
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
        char old_vf[PCI_ADDR_MAX];    /* "" for none */
        char new_vf[PCI_ADDR_MAX];    /* "" for none */
        AllocNic nic;                 /* the tenant's NIC after the decision */
        bool remote_numa;             /* new_vf is not on the guest's node */
        AllocMissing missing;         /* for REFUSED, what was lacking */
        /* The guest's RT CPUs after the decision. rt_changed means that they are not what they were. */
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

void alloc_decisions_clear(AllocDecisions *d);  /* sets n to 0 and keeps the memory */
void alloc_decisions_done(AllocDecisions *d);   /* frees the memory and leaves d empty */

/* A tenant as stored. The pointers stay valid until the next call that changes the allocator. */
typedef struct AllocTenant {
        const char *id;
        const char *class_name;
        int numa_node;
        AllocNic nic;
        const char *vf;               /* its VF for ALLOC_NIC_VF, else NULL */
        bool remote_numa;
        uint64_t seq;                 /* the arrival sequence, which breaks ties after rank */
        /*
         * The guest's RT CPUs, if the tenant's class books them: the guest's name, the CPUs, and
         * whether the guest waits for them, as a class that falls back does. The name is "" for
         * a guest of the tenant's own.
         */
        const char *guest;
        const uint16_t *rt_cpus;
        unsigned n_rt_cpus;
        bool rt_waiting;
        const char *pin_pf;           /* the PF that the tenant's VF must be on, or "" for any */
} AllocTenant;

/*
 * Every VF counts once, so n_vfs = usable + unhealthy + reserved + in_guest. A VF that is more
 * than one of these counts as reserved first, then unhealthy, then in_guest. Also,
 * usable = allocated + free, and tenants = on_vf + on_virtio + waiting.
 */
typedef struct AllocStats {
        unsigned n_vfs, usable, unhealthy, reserved, in_guest;
        unsigned allocated, free;     /* among the usable VFs */
        unsigned held_unusable;       /* held but not usable, which happens only between restore and reconcile */
        size_t tenants, on_vf, on_virtio, waiting;
        size_t remote;                /* tenants on a VF off their guest's node */
        size_t preferred_on_virtio;   /* sriov-preferred tenants waiting for an upgrade */
        double utilization;           /* allocated / usable, or 0 when nothing is usable */
        /*
         * The RT CPUs in the pool, and those booked by at least one guest. The guests that hold
         * RT CPUs, and the guests of a falling-back class placed without them, which get one
         * when one is free.
         */
        unsigned rt_cpus, rt_cpus_booked;
        size_t rt_guests, rt_guests_waiting;
} AllocStats;

/* The RT CPUs of one NUMA node and their use. This is what operators and controllers see of the pool. */
typedef struct AllocRtNode {
        int numa_node;                /* -1 for CPUs of unknown node, or for waiting guests of any node */
        unsigned cpus;                /* the pool's RT CPUs on the node */
        unsigned booked;              /* those booked by at least one guest */
        unsigned shared;              /* the booked ones that serve more than one guest, with rt_share > 1 */
        /*
         * How many more guests the booked CPUs may take. Each CPU takes up to the least rt_share
         * of the guests it serves, so the room is only for a class that shares as well.
         */
        unsigned room;
        unsigned guests;              /* the guests that hold RT CPUs of the node */
        unsigned waiting;             /* guests of a falling-back class placed without CPUs, to be booked here */
} AllocRtNode;
#define ALLOC_RT_NODES_MAX (ALLOC_NODES_MAX + 1)

/*
 * One PF's VFs and what they can still take, for a scheduler outside the host. usable =
 * allocated + free. The class arrays follow allocator_class_name()'s order.
 */
typedef struct AllocPfStats {
        unsigned usable, allocated, free;
        unsigned preemptible;         /* held by sriov-preferred tenants that a sriov-required arrival would downgrade */
        size_t n_classes;
        /* The PF's usable VFs held by tenants of each class. */
        unsigned class_allocated[ALLOC_CLASSES_MAX];
        /*
         * How many more tenants of each class, pinned to this PF, would get one of its VFs now.
         * sriov-required: free + preemptible, bounded by the RT CPUs free on the PF's node when
         * the class refuses without them. sriov-preferred: the free VFs above the node's
         * headroom. virtio: 0. All are bounded by the room left under the tenant limit.
         */
        unsigned class_available[ALLOC_CLASSES_MAX];
} AllocPfStats;

typedef struct Allocator Allocator;

/* Whether id matches [A-Za-z0-9._-]{1,63} and is not "." or "..". Ids name state files. */
bool tenant_id_valid(const char *id);

/*
 * Make a new allocator with no pool and no tenants. Returns -EINVAL for a class name that is
 * not a valid id or repeats, a target outside (0, 1], more than ALLOC_CLASSES_MAX classes, or a
 * max_tenants above ALLOC_TENANTS_MAX. Free it with allocator_free().
 */
int allocator_new(const AllocPolicy *policy, Allocator **ret);
Allocator *allocator_free(Allocator *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Allocator *, allocator_free);
/*
 * Make an independent copy, which makes the same decisions from here on. A change that may
 * have to be taken back, because it could not be saved, starts from a copy. Returns -ENOMEM
 * when out of memory.
 */
int allocator_clone(const Allocator *a, Allocator **ret);

/*
 * Replace the pool, which is copied and may come in any order, and reconcile. A tenant is
 * placed again, with REPLACED, when its VF vanished, turned unhealthy or reserved, was created
 * again, or now sits on a node that its class may not use. sriov-required tenants without a NIC
 * get one where possible, and may downgrade others. Waiting tenants are upgraded into free VFs.
 * Decisions are appended to *ret. Returns -EINVAL for an invalid or repeated address, a node
 * out of range, or more than ALLOC_VFS_MAX VFs, and -ENOMEM. On failure, nothing changed.
 */
int allocator_set_pool(Allocator *a, const AllocVf *vfs, size_t n_vfs, AllocDecisions *ret);
/*
 * Replace the RT CPU pool, which is copied and may come in any order. Each CPU appears once,
 * below ALLOC_RT_POOL_MAX. Guests on a CPU that left are booked again, with RT_CPUS decisions
 * that say why, and waiting guests are served. Call this before restoring tenants, so that
 * their saved CPUs are found. Returns -EINVAL or -ENOMEM, and then nothing changed.
 */
int allocator_set_rt_cpus(Allocator *a, const AllocRtCpu *cpus, size_t n, AllocDecisions *ret);
/* Run the reconcile of allocator_set_pool() on the current pool, after restoring tenants. */
int allocator_reconcile(Allocator *a, AllocDecisions *ret);

/*
 * Place a tenant, or place it again when its class or NUMA node changed. A repeat of the
 * current class and node returns 0 and decides nothing. Returns:
 *  - 0 with decisions appended, possibly none,
 *  - ALLOCATOR_REFUSED with one REFUSED decision appended and nothing else changed,
 *  - -EINVAL for an invalid id or node,
 *  - -ENOENT for an unknown class,
 *  - -ENOMEM, with nothing changed.
 */
int allocator_request(Allocator *a, const AllocRequest *req, AllocDecisions *ret);
/*
 * The tenant is gone. This decides RELEASED, and then upgrades into its VF. Returns -ENOENT, with
 * no change, for an unknown tenant.
 */
int allocator_release(Allocator *a, const char *tenant, AllocDecisions *ret);
/*
 * Mark vf as still in a guest, or as out of it again. A marked VF is not usable, and no one is
 * given it. A tenant that holds it keeps it, so release that tenant next, as a release whose
 * guest has yet to let go does. Once the VF is out again, waiting tenants are served from it,
 * and the decisions are appended. Returns -ENOENT when the VF is not in the pool, and -EINVAL
 * or -ENOMEM with nothing changed.
 */
int allocator_set_vf_in_guest(Allocator *a, const char *vf, bool in_guest, AllocDecisions *ret);

/*
 * Load a saved placement without decisions, at daemon start. A tenant is never refused for
 * what the host or its class became in the meantime. A saved VF that is not in the pool, or is
 * held already, is not kept. Neither is a NIC that the class no longer allows, such as a VF for
 * a virtio class. allocator_reconcile(), called after the last restore, places those tenants
 * again with a REPLACED decision that says why, and prefers free VFs. A tenant saved without a
 * VF waits as its class waits now: sriov-required with no NIC, and otherwise on virtio-net. No
 * restore takes another tenant's VF, so the order of the calls does not matter. RT CPUs work
 * the same way. t->guest and t->rt_cpus are the saved booking, which is kept when every CPU is
 * still in the RT pool with room. Otherwise the reconcile books the guest anew and says why.
 * Returns -EINVAL for an invalid id, node or NIC, -EEXIST, -ENOENT for an unknown class,
 * -ENOSPC and -ENOMEM.
 */
int allocator_restore_tenant(Allocator *a, const AllocTenant *t);

/* Tenants kept outside the allocator hold the arrival numbers up to seq, so new numbers come after. */
void allocator_reserve_seq(Allocator *a, uint64_t seq);
size_t allocator_n_tenants(const Allocator *a);
/* The i-th tenant in id order, for persistence. Returns -ERANGE past the end. */
int allocator_tenant(const Allocator *a, size_t i, AllocTenant *ret);
int allocator_find_tenant(const Allocator *a, const char *id, AllocTenant *ret);
/* The id of the tenant that holds the VF, or NULL when the VF is free or unknown. */
const char *allocator_vf_holder(const Allocator *a, const char *vf);
/* How many RT CPUs class_name's guests need when the class refuses without them, and 0 otherwise. */
unsigned allocator_class_rt_required(const Allocator *a, const char *class_name);
void allocator_stats(const Allocator *a, AllocStats *ret);
/* The figures of the VFs whose PF is pf, in one pass over the pool. An unknown PF has all zero. */
void allocator_pf_stats(const Allocator *a, const char *pf, AllocPfStats *ret);
/* The classes, sorted by name, and the tenant limit. */
size_t allocator_n_classes(const Allocator *a);
const char *allocator_class_name(const Allocator *a, size_t i);
size_t allocator_max_tenants(const Allocator *a);
/*
 * Put one row per NUMA node with RT CPUs, or with guests for them, into ret, up to n rows. The
 * rows are in node order, with -1 last. Returns how many rows there are, at most
 * ALLOC_RT_NODES_MAX. The rows add up to the rt_* fields of AllocStats.
 */
size_t allocator_rt_nodes(const Allocator *a, AllocRtNode *ret, size_t n);

/* Check the consistency of holders, counters and the waiting order, for tests. Returns 0, or -EUCLEAN. */

int allocator_verify(const Allocator *a);

const char *alloc_decision_kind_to_string(AllocDecisionKind k);
const char *alloc_nic_to_string(AllocNic n);
const char *alloc_missing_to_string(AllocMissing m);
