/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.h — an immutable snapshot of what the host has: CPUs, kernel features, NICs, IRQs */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/cpuset.h"
#include "sriovd/macro.h"
#include "sriovd/util.h"
#define DRIVER_MAX 64
#define PCI_NAME_MAX 160
#define TENANT_ID_MAX 64  /* tenant ids: [A-Za-z0-9._-]{1,63} */
#define KTHREAD_NAME_MAX 64 /* a kernel thread's full name (15 characters on older kernels) */

typedef struct RootFs RootFs;

typedef struct Topology {
        CpuSet online;
        CpuSet isolated;       /* /sys/devices/system/cpu/isolated */
        CpuSet nohz_full;
        unsigned n_nodes;      /* node ids are 0..n_nodes-1; a missing node has an empty set */
        CpuSet *node_cpus;
} Topology;

typedef struct KernelCaps {
        bool preempt_rt;            /* /sys/kernel/realtime == 1 */
        bool threaded_irqs;         /* any irq/N- kernel thread, or threadirqs on the cmdline */
        bool rtnet_prio_present;    /* /proc/sys/net/core/rtnet_prio exists */
        long rtnet_prio;            /* its value when present */
        bool iommu;                 /* /sys/kernel/iommu_groups has groups */
        bool irqbalance;            /* an irqbalance process is running */
} KernelCaps;

typedef struct Irq {
        unsigned irq;
        char action[32];            /* first handler's name; for the NICs' IRQs only when threadless */
        CpuSet affinity;            /* smp_affinity_list */
        CpuSet effective;           /* effective_affinity_list, when the kernel has it */
        bool has_effective;
        bool writable;              /* false: kernel-managed, affinity is read-only */
        pid_t thread;               /* irq/N- kernel thread, 0 = none */
        int thread_policy;          /* SCHED_* of the thread */
        int thread_priority;
} Irq;

/* A VF's link settings as the PF's driver reports them over rtnetlink. */
typedef struct VfLink {
        unsigned vf;                /* VF index on the PF */
        uint8_t mac[6];
        unsigned vlan, qos;
        int spoofchk;               /* 0/1, -1 = the kernel did not say */
        int trust;                  /* 0/1, -1 = unknown */
        int link_state;             /* IFLA_VF_LINK_STATE_*, -1 = unknown */
        unsigned min_tx_rate, max_tx_rate;   /* Mbit/s, 0 = no limit */
} VfLink;

/* What to change on one VF; unset fields are left alone. */
typedef struct VfLinkChange {
        unsigned vf;
        bool set_mac;
        uint8_t mac[6];
        bool set_vlan;
        unsigned vlan, qos;
        int spoofchk;               /* -1 = leave */
        int trust;                  /* -1 = leave */
        int link_state;             /* -1 = leave */
        bool set_rate;
        unsigned min_tx_rate, max_tx_rate;
} VfLinkChange;

/* A change that changes nothing: every field "leave". */
#define VF_LINK_CHANGE_NULL(v) ((VfLinkChange) { .vf = (v), .spoofchk = -1, .trust = -1, .link_state = -1 })

/*
 * Coalescing as the kernel reports it (ETHTOOL_MSG_COALESCE_GET). A field is
 * -1 when the kernel left its attribute out: the driver does not support that
 * parameter (the kernel omits unsupported parameters whose value is 0).
 */
typedef struct Coalesce {
        long rx_usecs, tx_usecs, rx_frames, tx_frames;
        int adaptive_rx, adaptive_tx;   /* 0/1, -1 = absent */
} Coalesce;

/* What to change: -1 = leave; usecs/frames 0..UINT32_MAX, adaptive 0/1. */
typedef struct CoalesceChange {
        long rx_usecs, tx_usecs, rx_frames, tx_frames;
        int adaptive_rx, adaptive_tx;
} CoalesceChange;

/* A change that changes nothing: every field "leave". */
#define COALESCE_CHANGE_NONE ((CoalesceChange) { -1, -1, -1, -1, -1, -1 })

/*
 * The offloads sriovd manages. Each is one or more kernel features
 * (netdev_features_strings names), read and written together:
 *
 *   OFFLOAD_TSO  tx-tcp-segmentation + tx-tcp6-segmentation: TCP segmentation
 *                for IPv4 and IPv6. Not tx-tcp-ecn-segmentation nor
 *                tx-tcp-mangleid-segmentation: those are refinements of TSO
 *                that the kernel itself switches off while their base is off
 *                (netdev_fix_features), and back to their wanted state when it
 *                returns, so "TSO off" really stops TCP segmentation without
 *                sriovd overwriting a refinement the operator chose. ethtool's
 *                own "tso" writes all four.
 *   OFFLOAD_GSO  tx-generic-segmentation
 *   OFFLOAD_GRO  rx-gro
 *   OFFLOAD_LRO  rx-lro
 */
typedef enum Offload {
        OFFLOAD_TSO,
        OFFLOAD_GSO,
        OFFLOAD_GRO,
        OFFLOAD_LRO,
        _OFFLOAD_MAX,
} Offload;

/*
 * Features of a netdev, by Offload. A kernel feature is "present" when it is
 * active or changeable; one neither ("off [fixed]" in ethtool -k) the device
 * does not have. For an offload made of several features, only its present
 * ones count: active is 1 when all of them are on, changeable 1 when all of
 * them can be changed.
 */
typedef struct Features {
        int active[_OFFLOAD_MAX];       /* 0/1, -1 = the device does not have it */
        int changeable[_OFFLOAD_MAX];   /* 0/1: in hw_features and not never-changeable */
} Features;

/*
 * The six fields of Coalesce and CoalesceChange (the same layout), by index,
 * named as ethtool -c names them; flags (adaptive-*) are int 0/1, the rest long.
 */
#define COALESCE_N_FIELDS 6
extern const char *const coalesce_field_names[COALESCE_N_FIELDS];
bool coalesce_field_is_flag(size_t i);
long coalesce_field_get(const void *c, size_t i);   /* a Coalesce or a CoalesceChange */
void coalesce_field_set(void *c, size_t i, long v);

/*
 * Pure: fill ret with only what differs between cur and want (-1 where equal
 * or not wanted); a field cur lacks (-1) counts as differing. Returns the
 * count (at most 6).
 */
unsigned coalesce_diff(const Coalesce *cur, const CoalesceChange *want, CoalesceChange *ret);

/*
 * RSS channels as the kernel reports them (ETHTOOL_MSG_CHANNELS_GET). A count is -1 when the
 * driver has no channels of that kind (its maximum is 0 or absent).
 */
typedef struct Channels {
        long rx, tx, other, combined;
        long max_rx, max_tx, max_other, max_combined;
} Channels;

/* What to change: -1 = leave. */
typedef struct ChannelsChange {
        long rx, tx, combined;
} ChannelsChange;
#define CHANNELS_CHANGE_NONE ((ChannelsChange) { -1, -1, -1 })

/*
 * The per-NAPI settings of netdev genl napi-set (Linux 6.13+); -1 = unknown (the kernel did
 * not report it) in a Napi, leave in a change.
 */
typedef struct NapiParams {
        long defer_hard_irqs;       /* how many times to defer re-enabling the IRQ */
        long gro_flush_timeout;     /* ns */
        long irq_suspend_timeout;   /* ns */
} NapiParams;
#define NAPI_PARAMS_NONE ((NapiParams) { -1, -1, -1 })

/*
 * One NAPI instance of a netdev. With threaded NAPI (/sys/class/net/DEV/threaded) each has a
 * kernel thread "napi/DEV-ID" that does the receive work the softirq would, and that sriovd can
 * pin and raise like an IRQ thread.
 */
typedef struct Napi {
        unsigned id;                /* NAPI id (the thread's name carries it); 0 = unknown */
        unsigned irq;               /* the IRQ that schedules it; 0 = not known */
        pid_t thread;               /* its napi/ kernel thread, 0 = none (not threaded) */
        char thread_name[KTHREAD_NAME_MAX];
        int thread_policy, thread_priority;
        CpuSet thread_cpus;         /* the thread's allowed CPUs */
        NapiParams params;
} Napi;

/* How NAPIs were paired with their IRQs. */
typedef enum NapiPairing {
        NAPI_PAIRED_NONE,           /* not paired (no NAPIs, or nothing to pair them by) */
        NAPI_PAIRED_KERNEL,         /* netdev genl napi-get named each NAPI's IRQ (Linux 6.8+) */
        NAPI_PAIRED_QUEUES,         /* by queue order: NAPI ids ascending against the queue IRQs' indexes */
        _NAPI_PAIRED_MAX,
} NapiPairing;

typedef struct NetdevNapi {
        int threaded;               /* /sys/class/net/DEV/threaded: 0/1; -1 = no such file (before 5.12) */
        Napi *napis;                /* sorted by id */
        size_t n_napis;
        NapiPairing pairing;
        bool have_napi_set;         /* the kernel takes per-NAPI settings (napi-set) */
} NetdevNapi;

/*
 * A netdev's coalescing, offloads, channels and NAPIs (ethtool and netdev netlink, sysfs);
 * filled by the daemon, not by inventory_read().
 */
typedef struct NetdevTune {
        Coalesce coalesce;
        int coalesce_error;         /* 0 = read; <0 = why not (-EOPNOTSUPP: the driver has none) */
        Features features;
        int features_error;
        Channels channels;
        int channels_error;         /* as coalesce_error; -ENODATA = not read (no class wants channels) */
        NetdevNapi napi;
        bool napi_known;            /* napi was read (a class wants threaded NAPI, or per-NAPI settings) */
        bool known;                 /* false: not read (fixture root, no netdev) */
} NetdevTune;
/* Free what a NetdevTune owns (its NAPIs). */
void netdev_tune_done(NetdevTune *t);

typedef struct Vf {
        unsigned index;             /* N of virtfnN */
        char addr[PCI_ADDR_MAX];
        char driver[DRIVER_MAX];    /* "" = unbound */
        char netdev[IF_NAMESIZE];   /* "" = no host netdev (e.g. vfio-pci) */
        int ifindex;                /* of netdev; 0 = none. Names change under udev, this does not */
        /* netdev's address when its driver made it up itself (addr_assign_type 1, random): with no
         * administrative MAC set, igbvf and mlx5 pick one and tell the PF, which then reports it. */
        uint8_t random_mac[6];
        bool have_random_mac;
        NetdevTune tune;
        int iommu_group;            /* -1 = none */
        unsigned *irqs;             /* MSI/MSI-X vectors from msi_irqs/, sorted */
        size_t n_irqs;
} Vf;

typedef struct Pf {
        char addr[PCI_ADDR_MAX];
        uint16_t vendor, device;
        char name[PCI_NAME_MAX];    /* libpci ID lookup */
        char driver[DRIVER_MAX];
        int numa_node;              /* -1 = the kernel does not know; never guessed */
        CpuSet local_cpus;
        char (*netdevs)[IF_NAMESIZE];
        size_t n_netdevs;
        int ifindex;                /* of netdevs[0], the one VFs are configured through; 0 = none */
        uint8_t mac[6];             /* netdevs[0]'s address, seed of derived VF MACs */
        bool have_mac;
        bool admin_down;            /* netdevs[0] read without IFF_UP (false also when unknown) */
        NetdevTune tune;            /* of netdevs[0] */
        unsigned total_vfs, num_vfs;
        int drivers_autoprobe;      /* -1 = file absent */
        int iommu_group;            /* -1 = none */
        unsigned *irqs;
        size_t n_irqs;
        Vf *vfs;                    /* sorted by index */
        size_t n_vfs;
        /* VF settings over rtnetlink; filled by the daemon, not by inventory_read(). */
        VfLink *vf_links;           /* sorted by vf */
        size_t n_vf_links;
        bool vf_links_known;
} Pf;

/*
 * What a tree showed that no kernel would (a VF two PFs claim, sriov_numvfs beyond
 * sriov_totalvfs, a NUMA node the host does not have, a FIFO where an attribute belongs, a
 * link too long to be one): said once per cycle in the plan's notes, with what was done
 * about it (the function left out, or the value taken as unknown). At most
 * HOST_PROBLEMS_MAX are kept; the rest are counted in n_dropped.
 */
#define HOST_PROBLEMS_MAX 64
typedef struct HostProblem {
        char target[PCI_ADDR_MAX];  /* the PCI function; "" for the host */
        char text[224];
} HostProblem;

typedef struct HostProblems {
        HostProblem *items;
        size_t n, allocated;
        size_t n_dropped;
} HostProblems;

/*
 * Record a problem; errno_value (a negative errno, or 0) is what "%m" in fmt prints.
 * Returns 0, or -ENOMEM (nothing recorded).
 */
int host_problem_add(HostProblems *p, const char *target, int errno_value, const char *fmt, ...)
        _printf_(4, 5);
void host_problems_done(HostProblems *p);

/*
 * Kernel threads sriovd places besides IRQ threads, found in the same walk over /proc (kernel
 * threads only: user space can name itself anything).
 */
typedef enum KthreadKind {
        KTHREAD_NAPI,               /* napi/DEV-ID: threaded NAPI; num = the NAPI id */
        KTHREAD_KSOFTIRQD,          /* ksoftirqd/N: softirqs the interrupted context did not finish; num = N */
        KTHREAD_KTIMERS,            /* ktimers/N (PREEMPT_RT): timer softirqs; num = N */
        KTHREAD_RCUC,               /* rcuc/N (RCU callbacks offloaded per CPU); num = N */
        _KTHREAD_KIND_MAX,
} KthreadKind;

typedef struct Kthread {
        KthreadKind kind;
        unsigned num;               /* the CPU, or the NAPI id */
        char netdev[IF_NAMESIZE];   /* KTHREAD_NAPI: DEV of the name (as it was when the thread started) */
        char name[KTHREAD_NAME_MAX];
        pid_t pid;
        int policy, priority;
        CpuSet cpus;                /* allowed CPUs; read for KTHREAD_NAPI only (the others are per-CPU) */
} Kthread;

const char *kthread_kind_to_string(KthreadKind k);
/* Whether a thread name can be recorded in saved-sched (printable ASCII, no space, fits): only those are changed. */
bool kthread_name_savable(const char *name);

typedef struct Inventory {
        Topology topo;
        KernelCaps caps;
        Pf *pfs;                    /* in-scope PFs, sorted by address */
        size_t n_pfs;
        Irq *irqs;                  /* IRQs of the PFs and VFs above, sorted by number */
        size_t n_irqs;
        Irq *other_irqs;            /* every other IRQ of the host (disks, other NICs), sorted */
        size_t n_other_irqs;
        Kthread *kthreads;          /* sorted by kind, then num, then pid */
        size_t n_kthreads;
        CpuSet default_affinity;    /* /proc/irq/default_smp_affinity */
        bool have_default_affinity;
        HostProblems problems;      /* what the tree got wrong, and what was left out for it */
} Inventory;

/* Which PCI functions sriovd manages. */
typedef struct PciId {
        uint16_t vendor, device;
} PciId;

typedef struct Scope {
        const PciId *ids;           /* NULL = the built-in ConnectX list only */
        size_t n_ids;
        const char (*addrs)[PCI_ADDR_MAX];
        size_t n_addrs;
} Scope;

/* The ConnectX PF IDs in scope by default. */
extern const PciId scope_default_ids[];
extern const size_t scope_default_n_ids;
bool scope_contains(const Scope *s, uint16_t vendor, uint16_t device, const char *addr);

/*
 * Read the whole inventory in one pass. The result owns all its memory and is
 * freed with inventory_free(). Fails only when the host itself cannot be read
 * (no /sys/bus/pci, no online CPUs, an unparsable CPU or node list) or on
 * -ENOMEM; a PCI function or IRQ whose attributes are not what a kernel writes
 * is left out (or the attribute taken as unknown) and recorded in problems.
 */
int inventory_read(RootFs *root, const Scope *scope, Inventory **ret);
Inventory *inventory_free(Inventory *inv);
/*
 * A deep copy of src, without what the daemon fills on every observe (VF links, NetdevTune):
 * the base a drift check refreshes (inventory_refresh()). -ENOMEM.
 */
int inventory_dup(const Inventory *src, Inventory **ret);
/* Free what a Pf owns (VFs, their vectors, netdevs, VF links), not the Pf itself. */
void pf_done(Pf *pf);
DEFINE_TRIVIAL_CLEANUP_FUNC(Inventory *, inventory_free);

const Irq *inventory_find_irq(const Inventory *inv, unsigned irq);
/* The same among the other devices' IRQs (other_irqs, sorted by number too). */
const Irq *inventory_find_other_irq(const Inventory *inv, unsigned irq);
/* The kernel thread of kind with num (the first by pid), NULL when none. */
const Kthread *inventory_find_kthread(const Inventory *inv, KthreadKind kind, unsigned num);
const Pf *inventory_find_pf(const Inventory *inv, const char *addr);
const VfLink *pf_find_vf_link(const Pf *pf, unsigned vf);
/* Whether addr is the PF itself or one of its VFs (pf may be NULL: false). */
bool pf_owns(const Pf *pf, const char *addr);
/* The PF that addr is, or whose VF it is (the VF in *ret_vf, NULL for the PF itself); NULL: neither. */
const Pf *inventory_find_function(const Inventory *inv, const char *addr, const Vf **ret_vf);

/* "aa:bb:cc:dd:ee:ff" and back; parse returns false on anything else. */
#define MAC_STR_MAX 18
char *mac_format(const uint8_t mac[6], char buf[static MAC_STR_MAX]);
bool mac_parse(const char *s, uint8_t ret[6]);
/* A locally administered unicast MAC derived from key; same key, same MAC, on every host. */
void mac_derive(const char *key, uint8_t ret[6]);
