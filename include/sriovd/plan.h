/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan.h — the pure planner: (inventory, policy) -> typed actions with before/after values */
#pragma once

#include <stdbool.h>

#include "sriovd/policy.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"

/* In the order they are applied: VFs exist before they are configured, bound and pinned. */
typedef enum ActionKind {
        ACTION_SET_AUTOPROBE,       /* PF sriov_drivers_autoprobe: before VFs appear */
        ACTION_SET_NUM_VFS,         /* PF sriov_numvfs */
        ACTION_SET_VF_LINK,         /* one VF's MAC/VLAN/spoofchk/trust/link/rate, rtnetlink on the PF */
        ACTION_SET_VF_DRIVER,       /* bind a VF to vfio-pci, or give it back to its native driver */
        /* Before anything that names the netdev's IRQs: a channel change makes the driver request
         * them anew, and what the same pass planned for the old ones is dropped once it is done. */
        ACTION_SET_CHANNELS,        /* a netdev's RSS channel counts, ethtool netlink */
        ACTION_SET_COALESCE,        /* a netdev's interrupt coalescing, ethtool netlink */
        ACTION_SET_OFFLOADS,        /* a netdev's TSO/GSO/GRO/LRO, ethtool netlink */
        ACTION_SET_NAPI_THREADED,   /* /sys/class/net/DEV/threaded: NAPI in napi/ kernel threads */
        ACTION_SET_NAPI_PARAMS,     /* one NAPI's defer-hard-irqs etc., netdev genl napi-set */
        ACTION_SET_RTNET_PRIO,      /* net.core.rtnet_prio */
        ACTION_SET_IRQ_DEFAULT,     /* /proc/irq/default_smp_affinity: IRQs requested later */
        ACTION_SET_IRQ_AFFINITY,    /* /proc/irq/N/smp_affinity_list */
        ACTION_SET_IRQ_THREAD,      /* sched_setscheduler() of the irq/N- thread */
        ACTION_SET_NAPI_PIN,        /* a napi/ thread onto its IRQ's CPUs (after); irq = that IRQ */
        ACTION_SET_NAPI_SCHED,      /* sched_setscheduler() of a napi/ thread */
        ACTION_SET_KTHREAD_SCHED,   /* of ksoftirqd/N, ktimers/N, rcuc/N on an RT CPU ([rt] *_priority) */
        ACTION_SET_PF_LINK,         /* the PF netdev's IFF_UP (rtnetlink): libvirt needs it for VF interfaces */
        /* A guest's placement (guest-placement.h), through libvirt: planned and carried out by the
         * daemon's libvirt side, never by apply; effect names the domain. */
        ACTION_SET_VCPU_PIN,        /* vcpu: cpus_before -> cpus_after */
        ACTION_SET_EMULATOR_PIN,
        ACTION_SET_IOTHREAD_PIN,    /* vcpu = the I/O thread id */
        ACTION_SET_VCPU_SCHED,      /* vCPUs 0..vcpu-1 at SCHED_FIFO after (0: none); next start */
        ACTION_SET_NUMATUNE,        /* memory on node after (before -1: none); next start */
        ACTION_SET_VCPU_THREAD,     /* a running guest's vCPU thread (pid, vcpu): policy/before -> policy/after */
        /* A virtio-net tenant's vhost workers (vhost.h), by the daemon's libvirt side likewise. */
        ACTION_SET_VHOST_PIN,       /* pid: cpus_before -> cpus_after */
        ACTION_SET_VHOST_SCHED,     /* pid: policy/before -> policy/after */
        _ACTION_KIND_MAX,
} ActionKind;

typedef struct Action {
        ActionKind kind;
        char target[PCI_ADDR_MAX];  /* PF or VF address (the PF for VF_LINK); "" for host-wide actions */
        long before, after;         /* counts, flags, sysctl values, thread priorities */
        unsigned irq;               /* IRQ actions */
        unsigned vf;                /* VF actions: the VF index on its PF */
        unsigned vcpu;              /* guest actions: the vCPU (or I/O thread, or count) */
        pid_t pid;                  /* ACTION_SET_IRQ_THREAD, the vhost, NAPI and kthread actions */
        int policy_before, policy_after;
        /* The thread's name for the NAPI and kthread actions: checked again before the write (PIDs are reused). */
        char thread_name[KTHREAD_NAME_MAX];
        union {
                struct {            /* ACTION_SET_IRQ_AFFINITY, ACTION_SET_IRQ_DEFAULT, the guest pins */
                        CpuSet cpus_before, cpus_after;
                };
                struct {            /* ACTION_SET_VF_LINK; link_after carries only what changes */
                        VfLink link_before;
                        bool link_before_known;   /* false: VF not created yet, or no netlink view */
                        VfLinkChange link_after;
                        int ifindex;              /* of the PF */
                };
                struct {            /* ACTION_SET_VF_DRIVER; "" after = the kernel's choice */
                        char driver_before[DRIVER_MAX], driver_after[DRIVER_MAX];
                };
                struct {            /* ACTION_SET_COALESCE, _OFFLOADS, _CHANNELS, _NAPI_*: on netdev ifindex of target */
                        int netdev_ifindex;
                        char netdev[IF_NAMESIZE];
                        bool tune_before_known;   /* false: not read (fixture root) */
                        Coalesce coalesce_before;
                        CoalesceChange coalesce_after;   /* only what changes */
                        Features features_before;
                        int offloads_after[_OFFLOAD_MAX];  /* -1 leave, 0 off, 1 on */
                        Channels channels_before;
                        ChannelsChange channels_after;   /* only what changes */
                        unsigned napi_id;                /* ACTION_SET_NAPI_PARAMS */
                        NapiParams napi_before, napi_after;   /* after: only what changes */
                };
        };
        bool restore;               /* puts back what sriovd changed (thread left its RT class) */
        /* What else the action does, for the operator ("destroys 8 VFs"). */
        char effect[96];
        /* Filled by apply: 1 changed, 0 already so, <0 errno. */
        int result;
        char kernel_message[128];   /* the kernel's own words on a failure (netlink extack), or "" */
        bool applied;
        bool skipped;               /* not carried out on purpose; see effect */
} Action;

typedef enum NoteLevel {
        NOTE_INFO,
        NOTE_WARNING,
        NOTE_ERROR,                 /* policy cannot be met; nothing planned for it */
} NoteLevel;

/* Something the operator should know that is not an action. */
typedef struct PlanNote {
        NoteLevel level;
        char target[PCI_ADDR_MAX];
        char text[256];             /* room for a refusal that names who uses the VFs */
} PlanNote;

/* What sriovd changed on IRQ threads (and NAPI and per-CPU kernel threads), to restore it later. */
typedef struct SavedSched {
        pid_t pid;
        unsigned irq;                   /* the irq/N- thread's IRQ; 0 for the others */
        int policy, priority;
        char name[KTHREAD_NAME_MAX];    /* a NAPI or per-CPU kernel thread's name; "" = the IRQ thread */
} SavedSched;

/* A VF held by a tenant (the allocator's decision), and what the tenant needs on it. */
typedef struct PlanAllocation {
        char vf[PCI_ADDR_MAX];
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];  /* its coalescing and offloads; "" = the PF's class */
        bool have_coalesce;             /* a per-guest override of the class's window */
        unsigned rx_usecs, tx_usecs;
        int vcpu0_cpu;                  /* host CPU running the guest's vCPU 0 (libvirt), -1 = unknown */
        bool have_mac;                  /* false: derived from the tenant id */
        uint8_t mac[6];
        int vlan, qos;                  /* -1 = the PF's policy */
} PlanAllocation;

/*
 * Who besides sriovd's tenants uses a VF: a libvirt domain that names it, a process that holds
 * its IOMMU group or vfio device open. The daemon gathers them only for PFs whose count is about
 * to change (plan_pf_num_vfs_destroys()); the planner refuses a change that would destroy them.
 */
#define PLAN_VF_USER_MAX 96
typedef struct PlanVfUser {
        char vf[PCI_ADDR_MAX];
        char who[PLAN_VF_USER_MAX];     /* "domain foo", "process 1234 (qemu-system-x86)" */
        /* false: a shut-off domain that names the VF. It needs the VF to exist when it starts, so
         * only a change that leaves no VF at that address is refused for it. */
        bool running;
} PlanVfUser;
/* Sort users for PlanContext (by VF, then who). */
void plan_vf_users_sort(PlanVfUser *users, size_t n);
/* Whether pol asks pf for a VF count change that plan_build() would try and that destroys its VFs. */
bool plan_pf_num_vfs_destroys(const Pf *pf, const PfPolicy *pol);
/* A VF whose tenant gave it back (released, moved, preempted) and is not clean yet: who had it. */
typedef struct PlanReleased {
        char vf[PCI_ADDR_MAX];
        char tenant[TENANT_ID_MAX];
} PlanReleased;

/* State the planner needs besides inventory and policy; all optional. */
typedef struct PlanContext {
        const SavedSched *saved;        /* sorted by pid */
        size_t n_saved;
        const unsigned *unmanaged_irqs; /* sorted; IRQs the kernel refused for good */
        size_t n_unmanaged;
        const PlanAllocation *allocations;
        size_t n_allocations;
        /* PFs whose VF count may change even though VFs are allocated (forced over the API). */
        const char (*force_num_vfs)[PCI_ADDR_MAX];
        size_t n_force_num_vfs;
        /* Users of VFs outside sriovd's tenants, sorted (plan_vf_users_sort()); a force does not
         * override them. */
        const PlanVfUser *vf_users;
        size_t n_vf_users;
        /* Devices whose netdev refused coalescing / offload / channel changes for good: not asked again. */
        const char (*coalesce_unsupported)[PCI_ADDR_MAX];
        size_t n_coalesce_unsupported;
        const char (*offloads_unsupported)[PCI_ADDR_MAX];
        size_t n_offloads_unsupported;
        const char (*channels_unsupported)[PCI_ADDR_MAX];
        size_t n_channels_unsupported;
        /* PFs whose driver answered EOPNOTSUPP to VF link settings: not asked again. */
        const char (*vf_link_unsupported)[PCI_ADDR_MAX];
        size_t n_vf_link_unsupported;
        /*
         * VFs no tenant holds that are not free either (vf_clean): in a guest that has not let go of
         * them yet, an orphan's, a domain's outside sriovd. Never cleaned while they are there: the
         * clean would put that guest on another VLAN.
         */
        const char (*vfs_held)[PCI_ADDR_MAX];
        size_t n_vfs_held;
        /*
         * Whether vfs_held is the whole truth: libvirt told which VFs its guests have, or there is no
         * libvirt to ask. When not, a free VF bound to vfio-pci may be in a guest and is not cleaned.
         */
        bool guests_known;
        const PlanReleased *released;   /* whose each VF being cleaned was, for the operator */
        size_t n_released;
} PlanContext;

/* The CPUs IRQs may go to, after defaults: RT = config or isolated, housekeeping = the rest. */
typedef struct HostCpus {
        CpuSet rt, housekeeping;
} HostCpus;
void host_cpus(const Inventory *inv, const Config *cfg, HostCpus *ret);

typedef struct Plan {
        Action *actions;
        size_t n_actions;
        PlanNote *notes;
        size_t n_notes;
} Plan;

/*
 * Pure: reads only its arguments, allocates the result, never touches the
 * system. Same inputs, same plan (actions ordered by kind, then target).
 */
int plan_build(const Inventory *inv, const Config *cfg, const PlanContext *ctx, Plan **ret);
/*
 * Pure: only the link settings of VF index vf of pf, as plan_build() plans them (at most one
 * ACTION_SET_VF_LINK, with its notes): what the daemon applies before the VF goes into a guest.
 */
int plan_build_vf_link(const Pf *pf, const Config *cfg, const PlanContext *ctx, unsigned vf, Plan **ret);
/*
 * Pure: only the affinities and handler threads of vf's vectors (vf a VF of pf), as plan_build()
 * plans them, with pf's VF count change if it has one (then nothing for vf): what the daemon pins
 * a hotplugged VF with before its cycle. Of inv only the topology and vf's vectors are read.
 */
int plan_build_vf_irqs(const Inventory *inv, const Config *cfg, const PlanContext *ctx, const Pf *pf, const Vf *vf,
                       Plan **ret);
/* The before (after = false) or after value of an action as text: "8", "0-31", "fifo/99". */
char *action_format_value(const Action *a, bool after, char *buf, size_t size);
const char *sched_policy_to_string(int policy);
/* Append from's actions to into's; from's notes replace into's (they describe the later state). */
int plan_merge(Plan *into, const Plan *from);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

const char *action_kind_to_string(ActionKind k);
/* Pure: the fields of want that differ from cur, into ret; returns how many. */
unsigned vf_link_diff(const VfLink *cur, const VfLinkChange *want, VfLinkChange *ret);
const char *note_level_to_string(NoteLevel l);
