/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan.h — the pure planner: from the inventory and the policy to typed actions with before and after values */
#pragma once

#include <stdbool.h>

#include "sriovd/shared/macro.h"
#include "inventory.h"
#include "policy.h"

/* The kinds come in the order they are applied, so VFs exist before they are configured, bound and pinned. */
typedef enum ActionKind {
        ACTION_SET_AUTOPROBE,       /* the PF's sriov_drivers_autoprobe, set before VFs appear */
        ACTION_SET_NUM_VFS,         /* the PF's sriov_numvfs */
        ACTION_SET_VF_LINK,         /* one VF's MAC, VLAN, spoofchk, trust, link and rate, on the PF */
        ACTION_SET_VF_DRIVER,       /* bind a VF to vfio-pci, or give it back to its native driver */
        /*
         * Channels come before anything that names the netdev's IRQs. A channel change makes the
         * driver request its IRQs anew. Once the change is done, what the same pass planned for
         * the old IRQs is dropped.
         */
        ACTION_SET_CHANNELS,        /* a netdev's RSS channel counts, by ethtool netlink */
        ACTION_SET_COALESCE,        /* a netdev's interrupt coalescing, by ethtool netlink */
        ACTION_SET_OFFLOADS,        /* a netdev's TSO, GSO, GRO and LRO, by ethtool netlink */
        ACTION_SET_NAPI_THREADED,   /* /sys/class/net/DEV/threaded, which runs NAPI in napi/ kernel threads */
        ACTION_SET_NAPI_PARAMS,     /* one NAPI's defer-hard-irqs and others, by netdev genl napi-set */
        ACTION_SET_RTNET_PRIO,      /* net.core.rtnet_prio */
        ACTION_SET_IRQ_DEFAULT,     /* /proc/irq/default_smp_affinity, for IRQs requested later */
        ACTION_SET_IRQ_AFFINITY,    /* /proc/irq/N/smp_affinity_list */
        ACTION_SET_IRQ_THREAD,      /* sched_setscheduler() of the irq/N- thread */
        ACTION_SET_NAPI_PIN,        /* a napi/ thread onto its IRQ's CPUs, in after; irq is that IRQ */
        ACTION_SET_NAPI_SCHED,      /* sched_setscheduler() of a napi/ thread */
        ACTION_SET_KTHREAD_SCHED,   /* of ksoftirqd/N, ktimers/N or rcuc/N on an RT CPU, by [rt] *_priority */
        ACTION_SET_CPU_IDLE,        /* cpuN/cpuidle/stateK/disable of cpu and idle_state: before -> after */
        ACTION_SET_CPU_GOVERNOR,    /* cpuN/cpufreq/scaling_governor of cpu: governor_before -> governor_after */
        ACTION_SET_PF_LINK,         /* the PF netdev's IFF_UP, by rtnetlink; libvirt needs it for VF interfaces */
        /*
         * A guest's placement, see guest-placement.h, goes through libvirt. The daemon's libvirt
         * side plans and carries it out, never apply. effect names the domain.
         */
        ACTION_SET_VCPU_PIN,        /* vcpu: cpus_before -> cpus_after */
        ACTION_SET_EMULATOR_PIN,
        ACTION_SET_IOTHREAD_PIN,    /* vcpu is the I/O thread id */
        ACTION_SET_VCPU_SCHED,      /* vCPUs 0..vcpu-1 at SCHED_FIFO priority after, none for 0; at next start */
        ACTION_SET_NUMATUNE,        /* memory on node after; a before of -1 means none; at next start */
        ACTION_SET_VCPU_THREAD,     /* a running guest's vCPU thread (pid, vcpu): policy/before -> policy/after */
        /* A virtio-net tenant's vhost workers, see vhost.h. The daemon's libvirt side handles them too. */
        ACTION_SET_VHOST_PIN,       /* pid: cpus_before -> cpus_after */
        ACTION_SET_VHOST_SCHED,     /* pid: policy/before -> policy/after */
        _ACTION_KIND_MAX,
} ActionKind;

/* What a failed action's kernel error means; see error-class.h. */
typedef enum ErrorClass {
        ERROR_TRANSIENT,     /* try again next cycle */
        ERROR_UNMANAGED,     /* the device or feature cannot take it: record it once and stop trying */
        ERROR_FATAL,         /* the policy or the host is wrong, and an operator must act */
} ErrorClass;

typedef struct ErrorInfo {
        ErrorClass class;
        const char *meaning; /* for the operator; never NULL for a failure */
} ErrorInfo;

typedef struct Action {
        ActionKind kind;
        char target[PCI_ADDR_MAX];  /* the PF or VF address, the PF for VF_LINK; "" for host-wide actions */
        long before, after;         /* counts, flags, sysctl values, thread priorities */
        unsigned irq;               /* IRQ actions */
        unsigned vf;                /* VF actions: the VF index on its PF */
        unsigned vcpu;              /* guest actions: the vCPU, the I/O thread or a count */
        pid_t pid;                  /* ACTION_SET_IRQ_THREAD, the vhost, NAPI and kthread actions */
        int policy_before, policy_after;
        /*
         * The thread's name for the NAPI and kthread actions. It is checked again before the write,
         * because PIDs are reused.
         */
        char thread_name[KTHREAD_NAME_MAX];
        unsigned cpu;               /* ACTION_SET_CPU_IDLE and ACTION_SET_CPU_GOVERNOR */
        unsigned idle_state;        /* ACTION_SET_CPU_IDLE: the K of stateK */
        union {
                struct {            /* ACTION_SET_IRQ_AFFINITY, ACTION_SET_IRQ_DEFAULT, the guest pins */
                        CpuSet cpus_before, cpus_after;
                };
                struct {            /* ACTION_SET_VF_LINK; link_after carries only what changes */
                        VfLink link_before;
                        bool link_before_known;   /* false for a VF not created yet, or without netlink */
                        VfLinkChange link_after;
                        int ifindex;              /* of the PF */
                };
                struct {            /* ACTION_SET_VF_DRIVER; an after of "" means the kernel's choice */
                        char driver_before[DRIVER_MAX], driver_after[DRIVER_MAX];
                };
                struct {            /* ACTION_SET_CPU_GOVERNOR */
                        char governor_before[HOST_NAME_MAX_LEN], governor_after[HOST_NAME_MAX_LEN];
                };
                struct {            /* ACTION_SET_COALESCE, _OFFLOADS, _CHANNELS, _NAPI_*: on netdev ifindex of target */
                        int netdev_ifindex;
                        char netdev[IF_NAMESIZE];
                        bool tune_before_known;   /* false when not read, as on a fixture root */
                        Coalesce coalesce_before;
                        CoalesceChange coalesce_after;   /* only what changes */
                        Features features_before;
                        int offloads_after[_OFFLOAD_MAX];  /* -1 to leave, 0 for off, 1 for on */
                        Channels channels_before;
                        ChannelsChange channels_after;   /* only what changes */
                        unsigned napi_id;                /* ACTION_SET_NAPI_PARAMS */
                        NapiParams napi_before, napi_after;   /* napi_after holds only what changes */
                };
        };
        /*
         * Puts back what sriovd changed: a thread that left its RT class, or a CPU setting that
         * [rt] no longer asks for.
         */
        bool restore;
        /* What else the action does, for the operator, such as "destroys 8 VFs". */
        char effect[96];
        /* apply fills this in: 1 when it changed something, 0 when it was already so, or a negative errno. */
        int result;
        ErrorInfo error;            /* for a negative result, its class and meaning, set with the result */
        char kernel_message[128];   /* the kernel's own words on a failure, from the netlink extack, or "" */
        bool applied;
        bool skipped;               /* not carried out on purpose, and effect says why */
} Action;

typedef enum NoteLevel {
        NOTE_INFO,
        NOTE_WARNING,
        NOTE_ERROR,                 /* the policy cannot be met, and nothing is planned for it */
} NoteLevel;

/* Something the operator should know that is not an action. */
typedef struct PlanNote {
        NoteLevel level;
        char target[PCI_ADDR_MAX];
        char text[256];             /* room for a refusal that names who uses the VFs */
} PlanNote;

/* What sriovd changed on IRQ threads, and on NAPI and per-CPU kernel threads, to restore it later. */
typedef struct SavedSched {
        pid_t pid;
        unsigned irq;                   /* the irq/N- thread's IRQ; 0 for the others */
        int policy, priority;
        char name[KTHREAD_NAME_MAX];    /* a NAPI or per-CPU kernel thread's name, or "" for the IRQ thread */
} SavedSched;

/*
 * What sriovd found in one CPU file before it first wrote it, to put it back later: an idle
 * state's disable, or the cpufreq governor.
 */
typedef struct SavedCpu {
        unsigned cpu;
        int idle_state;                 /* the K of cpuidle/stateK, or -1 for the governor */
        char value[HOST_NAME_MAX_LEN];  /* "0" or "1" for an idle state; the governor's name */
} SavedCpu;
/* Orders SavedCpu by CPU, then the governor first, then by idle state, for qsort() and bsearch(). */
int saved_cpu_cmp(const void *a, const void *b);

/* A VF that a tenant holds by the allocator's decision, and what the tenant needs on it. */
typedef struct PlanAllocation {
        char vf[PCI_ADDR_MAX];
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];  /* for its coalescing and offloads; "" for the PF's class */
        bool have_coalesce;             /* a per-guest override of the class's window */
        unsigned rx_usecs, tx_usecs;
        int vcpu0_cpu;                  /* the host CPU of the guest's vCPU 0, from libvirt; -1 if unknown */
        bool have_mac;                  /* when false, the MAC is derived from the tenant id */
        uint8_t mac[6];
        int vlan, qos;                  /* -1 for the PF's policy */
        TxRates tx_rates;               /* what the tenant asked for; the rest comes from its class, then the PF */
} PlanAllocation;

/*
 * Who, besides sriovd's tenants, uses a VF: a libvirt domain that names it, or a process that
 * holds its IOMMU group or vfio device open. The daemon gathers them only for PFs whose count is
 * about to change, see plan_pf_num_vfs_destroys(). The planner refuses a change that would
 * destroy such VFs.
 */
#define PLAN_VF_USER_MAX 96
typedef struct PlanVfUser {
        char vf[PCI_ADDR_MAX];
        char who[PLAN_VF_USER_MAX];     /* such as "domain foo" or "process 1234 (qemu-system-x86)" */
        /*
         * false for a shut-off domain that names the VF. It needs the VF to exist when it starts,
         * so only a change that leaves no VF at that address is refused for it.
         */
        bool running;
} PlanVfUser;
/* Sort users for PlanContext, by VF and then by who. */
void plan_vf_users_sort(PlanVfUser *users, size_t n);
/* Whether pol asks pf for a VF count change that plan_build() would try and that destroys its VFs. */
bool plan_pf_num_vfs_destroys(const Pf *pf, const PfPolicy *pol);
/*
 * A VF that is not clean yet, and the tenant that gave it back. The tenant released it, moved,
 * or was preempted.
 */
typedef struct PlanReleased {
        char vf[PCI_ADDR_MAX];
        char tenant[TENANT_ID_MAX];
} PlanReleased;

/* The state that the planner needs besides the inventory and the policy. All of it is optional. */
typedef struct PlanContext {
        const SavedSched *saved;        /* sorted by pid */
        size_t n_saved;
        const SavedCpu *saved_cpu;      /* sorted by saved_cpu_cmp() */
        size_t n_saved_cpu;
        const unsigned *unmanaged_irqs; /* the IRQs that the kernel refused for good, sorted */
        size_t n_unmanaged;
        const PlanAllocation *allocations;
        size_t n_allocations;
        /* PFs whose VF count may change even though VFs are allocated, as forced over the API. */
        const char (*force_num_vfs)[PCI_ADDR_MAX];
        size_t n_force_num_vfs;
        /*
         * The users of VFs outside sriovd's tenants, sorted by plan_vf_users_sort(). A force does
         * not override them.
         */
        const PlanVfUser *vf_users;
        size_t n_vf_users;
        /* Devices whose netdev refused coalescing, offload or channel changes for good. Never asked again. */
        const char (*coalesce_unsupported)[PCI_ADDR_MAX];
        size_t n_coalesce_unsupported;
        const char (*offloads_unsupported)[PCI_ADDR_MAX];
        size_t n_offloads_unsupported;
        const char (*channels_unsupported)[PCI_ADDR_MAX];
        size_t n_channels_unsupported;
        /* PFs whose driver answered EOPNOTSUPP to VF link settings. They are not asked again. */
        const char (*vf_link_unsupported)[PCI_ADDR_MAX];
        size_t n_vf_link_unsupported;
        /*
         * VFs that no tenant holds but that are not free either, for vf_clean. They are in a
         * guest that has not let go of them yet, or an orphan's, or a domain's outside sriovd.
         * They are never cleaned while they are there, because the clean would put that guest on
         * another VLAN.
         */
        const char (*vfs_held)[PCI_ADDR_MAX];
        size_t n_vfs_held;
        /*
         * Whether vfs_held is the whole truth, because libvirt said which VFs its guests have, or
         * because there is no libvirt to ask. When it is not, a free VF bound to vfio-pci may be
         * in a guest, and it is not cleaned.
         */
        bool guests_known;
        const PlanReleased *released;   /* whose each VF being cleaned was, for the operator's log */
        size_t n_released;
} PlanContext;

/*
 * The CPUs that IRQs may go to, after defaults. The RT CPUs are the config's, or else the
 * isolated CPUs. The housekeeping CPUs are the rest.
 */
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
 * Build a plan. This reads only its arguments, allocates the result, and never touches the
 * system. The same inputs give the same plan, with the actions ordered by kind and then by
 * target.
 */
int plan_build(const Inventory *inv, const Config *cfg, const PlanContext *ctx, Plan **ret);
/*
 * Plan only the link settings of VF index vf of pf, as plan_build() plans them, without I/O.
 * The plan holds at most one ACTION_SET_VF_LINK, with its notes. The daemon applies it before
 * the VF goes into a guest.
 */
int plan_build_vf_link(const Pf *pf, const Config *cfg, const PlanContext *ctx, unsigned vf, Plan **ret);
/*
 * Plan only the affinities and handler threads of the vectors of vf, a VF of pf, as
 * plan_build() plans them, without I/O. If pf has a VF count change, the plan holds that change
 * and nothing for vf. The daemon pins a hotplugged VF with this plan before its cycle, and it
 * repairs a drift event on one of the VF's vectors with it. Of inv, only the topology and vf's
 * vectors are read.
 */
int plan_build_vf_irqs(const Inventory *inv, const Config *cfg, const PlanContext *ctx, const Pf *pf, const Vf *vf,
                       Plan **ret);
/*
 * Plan only the affinities and handler threads of pf's own vectors, as plan_build() plans them,
 * without I/O. Of inv, only the topology and the vectors it holds are read. The daemon repairs a
 * drift event with this plan when nothing else changed.
 */
int plan_build_pf_irqs(const Inventory *inv, const Config *cfg, const PlanContext *ctx, const Pf *pf, Plan **ret);
/*
 * The before value of an action, with after false, or its after value, as text such as "8",
 * "0-31" or "fifo/99".
 */
char *action_format_value(const Action *a, bool after, char *buf, size_t size);
const char *sched_policy_to_string(int policy);
/* Append from's actions to into's. from's notes replace into's, because they describe the later state. */
int plan_merge(Plan *into, const Plan *from);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

const char *action_kind_to_string(ActionKind k);
/* Put the fields of want that differ from cur into ret, without I/O. Returns how many differ. */

unsigned vf_link_diff(const VfLink *cur, const VfLinkChange *want, VfLinkChange *ret);
const char *note_level_to_string(NoteLevel l);
