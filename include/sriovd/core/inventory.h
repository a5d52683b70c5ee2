/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.h — an immutable snapshot of what the host has: CPUs, kernel features, NICs and IRQs */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "sriovd/shared/util.h"
#define DRIVER_MAX 64
#define PCI_NAME_MAX 160
#define TENANT_ID_MAX 64  /* a tenant id matches [A-Za-z0-9._-]{1,63} */
#define KTHREAD_NAME_MAX 64 /* a kernel thread's full name; older kernels cut it at 15 characters */

typedef struct RootFs RootFs;

typedef struct Topology {
        CpuSet online;
        CpuSet isolated;       /* /sys/devices/system/cpu/isolated */
        CpuSet nohz_full;
        unsigned n_nodes;      /* node ids are 0..n_nodes-1, and a missing node has an empty set */
        CpuSet *node_cpus;
} Topology;

typedef struct KernelCaps {
        bool preempt_rt;            /* /sys/kernel/realtime is 1 */
        bool threaded_irqs;         /* an irq/N- kernel thread exists, or threadirqs is on the cmdline */
        bool rtnet_prio_present;    /* /proc/sys/net/core/rtnet_prio exists */
        long rtnet_prio;            /* its value when present */
        bool iommu;                 /* /sys/kernel/iommu_groups has groups */
        bool irqbalance;            /* an irqbalance process is running */
} KernelCaps;

typedef struct Irq {
        unsigned irq;
        char action[32];            /* the first handler's name; for the NICs' IRQs only when threadless */
        CpuSet affinity;            /* smp_affinity_list */
        CpuSet effective;           /* effective_affinity_list, when the kernel has it */
        bool has_effective;
        bool writable;              /* false when the kernel manages it and the affinity is read-only */
        pid_t thread;               /* the irq/N- kernel thread, or 0 for none */
        int thread_policy;          /* SCHED_* of the thread */
        int thread_priority;
} Irq;

/* A VF's link settings as the PF's driver reports them over rtnetlink. */
typedef struct VfLink {
        unsigned vf;                /* the VF index on the PF */
        uint8_t mac[6];
        unsigned vlan, qos;
        int spoofchk;               /* 0 or 1, or -1 when the kernel did not say */
        int trust;                  /* 0 or 1, or -1 when unknown */
        int link_state;             /* IFLA_VF_LINK_STATE_*, or -1 when unknown */
        unsigned min_tx_rate, max_tx_rate;   /* in Mbit/s; 0 for no limit */
} VfLink;

/* What to change on one VF. Fields that are not set are left alone. */
typedef struct VfLinkChange {
        unsigned vf;
        bool set_mac;
        uint8_t mac[6];
        bool set_vlan;
        unsigned vlan, qos;
        int spoofchk;               /* -1 to leave */
        int trust;                  /* -1 to leave */
        int link_state;             /* -1 to leave */
        bool set_rate;
        unsigned min_tx_rate, max_tx_rate;
} VfLinkChange;

/* A change that changes nothing, with every field set to leave. */
#define VF_LINK_CHANGE_NULL(v) ((VfLinkChange) { .vf = (v), .spoofchk = -1, .trust = -1, .link_state = -1 })

/*
 * Coalescing as the kernel reports it in ETHTOOL_MSG_COALESCE_GET. A field is -1 when the kernel
 * left its attribute out, which means the driver does not support that parameter. The kernel
 * omits unsupported parameters whose value is 0.
 */
typedef struct Coalesce {
        long rx_usecs, tx_usecs, rx_frames, tx_frames;
        int adaptive_rx, adaptive_tx;   /* 0 or 1, or -1 when absent */
} Coalesce;

/* What to change. -1 leaves a field. usecs and frames take 0..UINT32_MAX, and adaptive takes 0 or 1. */
typedef struct CoalesceChange {
        long rx_usecs, tx_usecs, rx_frames, tx_frames;
        int adaptive_rx, adaptive_tx;
} CoalesceChange;

/* A change that changes nothing, with every field set to leave. */
#define COALESCE_CHANGE_NONE ((CoalesceChange) { -1, -1, -1, -1, -1, -1 })

/*
 * The offloads sriovd manages. Each is one or more kernel features, named as in
 * netdev_features_strings, and they are read and written together.
 *
 *   OFFLOAD_TSO  tx-tcp-segmentation and tx-tcp6-segmentation, TCP segmentation for IPv4 and IPv6
 *   OFFLOAD_GSO  tx-generic-segmentation
 *   OFFLOAD_GRO  rx-gro
 *   OFFLOAD_LRO  rx-lro
 *
 * TSO leaves out tx-tcp-ecn-segmentation and tx-tcp-mangleid-segmentation. They are refinements
 * of TSO. The kernel itself switches them off while their base is off, in netdev_fix_features().
 * It puts them back in their wanted state when the base returns. So "TSO off" really stops TCP
 * segmentation, and sriovd does not overwrite a refinement that the operator chose. ethtool's
 * own "tso" writes all four.
 */
typedef enum Offload {
        OFFLOAD_TSO,
        OFFLOAD_GSO,
        OFFLOAD_GRO,
        OFFLOAD_LRO,
        _OFFLOAD_MAX,
} Offload;

/*
 * The features of a netdev, by Offload. A kernel feature is present when it is active or
 * changeable. The device does not have a feature that is neither, which ethtool -k shows as
 * "off [fixed]". For an offload made of several features, only its present features count.
 * active is 1 when all of them are on, and changeable is 1 when all of them can be changed.
 */
typedef struct Features {
        int active[_OFFLOAD_MAX];       /* 0 or 1, or -1 when the device does not have it */
        int changeable[_OFFLOAD_MAX];   /* 1 when in hw_features and not never-changeable, else 0 */
} Features;

/*
 * The six fields of Coalesce and CoalesceChange, which share a layout, by index. They are named
 * as ethtool -c names them. The adaptive-* flags are an int of 0 or 1, and the rest are long.
 */
#define COALESCE_N_FIELDS 6
extern const char *const coalesce_field_names[COALESCE_N_FIELDS];
bool coalesce_field_is_flag(size_t i);
long coalesce_field_get(const void *c, size_t i);   /* a Coalesce or a CoalesceChange */
void coalesce_field_set(void *c, size_t i, long v);

/*
 * Fills ret with only what differs between cur and want. It does no I/O. A field is -1 in ret
 * where cur and want are equal or want does not ask for it. A field that cur lacks, which is -1,
 * counts as differing. Returns the count of differing fields, at most 6.
 */
unsigned coalesce_diff(const Coalesce *cur, const CoalesceChange *want, CoalesceChange *ret);

/*
 * RSS channels as the kernel reports them in ETHTOOL_MSG_CHANNELS_GET. A count is -1 when the
 * driver has no channels of that kind, because its maximum is 0 or absent.
 */
typedef struct Channels {
        long rx, tx, other, combined;
        long max_rx, max_tx, max_other, max_combined;
} Channels;

/* What to change. -1 leaves a count. */
typedef struct ChannelsChange {
        long rx, tx, combined;
} ChannelsChange;
#define CHANNELS_CHANGE_NONE ((ChannelsChange) { -1, -1, -1 })

/*
 * The per-NAPI settings of netdev genl napi-set, from Linux 6.13. In a Napi, -1 means unknown,
 * because the kernel did not report it. In a change, -1 means leave.
 */
typedef struct NapiParams {
        long defer_hard_irqs;       /* how many times to defer re-enabling the IRQ */
        long gro_flush_timeout;     /* in ns */
        long irq_suspend_timeout;   /* in ns */
} NapiParams;
#define NAPI_PARAMS_NONE ((NapiParams) { -1, -1, -1 })

/*
 * One NAPI instance of a netdev. With threaded NAPI, set in /sys/class/net/DEV/threaded, each
 * instance has a kernel thread "napi/DEV-ID". The thread does the receive work that the softirq
 * would do. sriovd can pin and raise it like an IRQ thread.
 */
typedef struct Napi {
        unsigned id;                /* the NAPI id, which the thread's name carries; 0 when unknown */
        unsigned irq;               /* the IRQ that schedules it; 0 when not known */
        pid_t thread;               /* its napi/ kernel thread; 0 for none, when not threaded */
        char thread_name[KTHREAD_NAME_MAX];
        int thread_policy, thread_priority;
        CpuSet thread_cpus;         /* the thread's allowed CPUs */
        NapiParams params;
} Napi;

/* How NAPIs were paired with their IRQs. */
typedef enum NapiPairing {
        NAPI_PAIRED_NONE,           /* not paired: there are no NAPIs, or nothing to pair them by */
        NAPI_PAIRED_KERNEL,         /* netdev genl napi-get named each NAPI's IRQ, from Linux 6.8 */
        NAPI_PAIRED_QUEUES,         /* by queue order, NAPI ids ascending against the queue IRQs' indexes */
        _NAPI_PAIRED_MAX,
} NapiPairing;

typedef struct NetdevNapi {
        int threaded;               /* /sys/class/net/DEV/threaded, 0 or 1; -1 for no such file, before 5.12 */
        Napi *napis;                /* sorted by id */
        size_t n_napis;
        NapiPairing pairing;
        bool have_napi_set;         /* the kernel takes per-NAPI settings with napi-set */
} NetdevNapi;

/*
 * A netdev's coalescing, offloads, channels and NAPIs, from ethtool netlink, netdev netlink and
 * sysfs. The daemon fills it, not inventory_read().
 */
typedef struct NetdevTune {
        Coalesce coalesce;
        int coalesce_error;         /* 0 when read, or why not; -EOPNOTSUPP when the driver has none */
        Features features;
        int features_error;
        Channels channels;
        int channels_error;         /* as coalesce_error; -ENODATA when not read, as no class wants channels */
        NetdevNapi napi;
        bool napi_known;            /* napi was read, as a class wants threaded NAPI or per-NAPI settings */
        bool known;                 /* false when not read, on a fixture root or without a netdev */
} NetdevTune;
/* Frees what a NetdevTune owns, which is its NAPIs. */
void netdev_tune_done(NetdevTune *t);

typedef struct Vf {
        unsigned index;             /* the N of virtfnN */
        char addr[PCI_ADDR_MAX];
        char driver[DRIVER_MAX];    /* "" when unbound */
        char netdev[IF_NAMESIZE];   /* "" when there is no host netdev, as on vfio-pci */
        /* The ifindex of netdev, or 0 for none. Names change under udev, but the ifindex does not. */
        int ifindex;
        /*
         * netdev's address when its driver made it up itself, with addr_assign_type 1, random.
         * With no administrative MAC set, igbvf and mlx5 pick one and tell the PF, which then
         * reports it.
         */
        uint8_t random_mac[6];
        bool have_random_mac;
        NetdevTune tune;
        int iommu_group;            /* -1 for none */
        unsigned *irqs;             /* MSI and MSI-X vectors from msi_irqs/, sorted */
        size_t n_irqs;
} Vf;

typedef struct Pf {
        char addr[PCI_ADDR_MAX];
        uint16_t vendor, device;
        char name[PCI_NAME_MAX];    /* from libpci's ID lookup */
        char driver[DRIVER_MAX];
        int numa_node;              /* -1 when the kernel does not know; never guessed */
        CpuSet local_cpus;
        char (*netdevs)[IF_NAMESIZE];
        size_t n_netdevs;
        int ifindex;                /* of netdevs[0], which VFs are configured through; 0 for none */
        uint8_t mac[6];             /* netdevs[0]'s address, the seed of derived VF MACs */
        bool have_mac;
        bool admin_down;            /* netdevs[0] was read without IFF_UP; also false when unknown */
        NetdevTune tune;            /* of netdevs[0] */
        unsigned total_vfs, num_vfs;
        int drivers_autoprobe;      /* -1 when the file is absent */
        int iommu_group;            /* -1 for none */
        unsigned *irqs;
        size_t n_irqs;
        Vf *vfs;                    /* sorted by index */
        size_t n_vfs;
        /* The VF settings over rtnetlink. The daemon fills them, not inventory_read(). */
        VfLink *vf_links;           /* sorted by vf */
        size_t n_vf_links;
        bool vf_links_known;
} Pf;

/*
 * A host problem is something a tree showed that no kernel would show. Examples are a VF that
 * two PFs claim, an sriov_numvfs beyond sriov_totalvfs, a NUMA node that the host does not have,
 * a FIFO where an attribute belongs, and a link too long to be one. Each is said once per cycle
 * in the plan's notes, with what was done about it. The function was left out, or the value was
 * taken as unknown. At most HOST_PROBLEMS_MAX are kept, and the rest are counted in n_dropped.
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
 * Records a problem. errno_value is a negative errno or 0, and it is what "%m" in fmt prints.
 * Returns 0, or -ENOMEM when nothing was recorded.
 */
int host_problem_add(HostProblems *p, const char *target, int errno_value, const char *fmt, ...)
        _printf_(4, 5);
void host_problems_done(HostProblems *p);

/*
 * The kernel threads that sriovd places besides IRQ threads. They are found in the same walk over
 * /proc. Only kernel threads count, because user space can name itself anything.
 */
typedef enum KthreadKind {
        KTHREAD_NAPI,               /* napi/DEV-ID, threaded NAPI; num is the NAPI id */
        KTHREAD_KSOFTIRQD,          /* ksoftirqd/N, softirqs the interrupted context did not finish; num is N */
        KTHREAD_KTIMERS,            /* ktimers/N on PREEMPT_RT, timer softirqs; num is N */
        KTHREAD_RCUC,               /* rcuc/N, RCU callbacks offloaded per CPU; num is N */
        _KTHREAD_KIND_MAX,
} KthreadKind;

typedef struct Kthread {
        KthreadKind kind;
        unsigned num;               /* the CPU, or the NAPI id */
        char netdev[IF_NAMESIZE];   /* for KTHREAD_NAPI, the DEV of the name when the thread started */
        char name[KTHREAD_NAME_MAX];
        pid_t pid;
        int policy, priority;
        CpuSet cpus;                /* allowed CPUs; read for KTHREAD_NAPI only, as the others are per-CPU */
} Kthread;

const char *kthread_kind_to_string(KthreadKind k);

#define HOST_IDLE_STATES_MAX 16
#define HOST_NAME_MAX_LEN 32
/* cpufreq/scaling_available_governors, such as "performance powersave". */
#define CPU_GOVERNORS_MAX 160

typedef struct HostIdleState {
        char name[HOST_NAME_MAX_LEN];  /* cpuidle/stateN/name, such as "C6" */
        unsigned index;                /* N */
        unsigned latency_us;           /* cpuidle/stateN/latency */
        bool disabled;                 /* cpuidle/stateN/disable is 1 */
} HostIdleState;

/*
 * The idle states and the cpufreq governor of one CPU. The daemon reads them only for the CPUs
 * that [rt] idle_states and cpufreq_governor change, or that sriovd has yet to put back.
 */
typedef struct CpuPower {
        unsigned cpu;
        size_t n_idle;
        HostIdleState idle[HOST_IDLE_STATES_MAX];
        char governor[HOST_NAME_MAX_LEN];      /* cpufreq/scaling_governor, or "" without cpufreq */
        char governors[CPU_GOVERNORS_MAX];     /* cpufreq/scaling_available_governors, or "" */
} CpuPower;
/*
 * Whether a thread name can be recorded in saved-sched. It must be printable ASCII without a
 * space, and it must fit. Only threads with such names are changed.
 */
bool kthread_name_savable(const char *name);

typedef struct Inventory {
        Topology topo;
        KernelCaps caps;
        Pf *pfs;                    /* the PFs in scope, sorted by address */
        size_t n_pfs;
        Irq *irqs;                  /* the IRQs of the PFs and VFs above, sorted by number */
        size_t n_irqs;
        Irq *other_irqs;            /* every other IRQ of the host, as of disks and other NICs, sorted */
        size_t n_other_irqs;
        Kthread *kthreads;          /* sorted by kind, then num, then pid */
        size_t n_kthreads;
        CpuSet default_affinity;    /* /proc/irq/default_smp_affinity */
        bool have_default_affinity;
        CpuPower *cpu_power;        /* sorted by CPU; the daemon fills it, not inventory_read() */
        size_t n_cpu_power;
        HostProblems problems;      /* what the tree got wrong, and what was left out for it */
} Inventory;

/* Which PCI functions sriovd manages. */
typedef struct PciId {
        uint16_t vendor, device;
} PciId;

typedef struct Scope {
        const PciId *ids;           /* NULL for the built-in ConnectX list only */
        size_t n_ids;
        const char (*addrs)[PCI_ADDR_MAX];
        size_t n_addrs;
} Scope;

/* The ConnectX PF IDs in scope by default. */
extern const PciId scope_default_ids[];
extern const size_t scope_default_n_ids;
bool scope_contains(const Scope *s, uint16_t vendor, uint16_t device, const char *addr);

Inventory *inventory_free(Inventory *inv);
/*
 * Makes a deep copy of src in *ret, without what the daemon fills on every observe, which is the
 * VF links and NetdevTune. A drift check refreshes this copy with inventory_refresh(). The caller
 * frees *ret with inventory_free(). Returns -ENOMEM when memory runs out.
 */
int inventory_dup(const Inventory *src, Inventory **ret);
/*
 * Copies into inv, a copy of src made with inventory_dup(), what the daemon read over netlink
 * for src: the VFs' link settings and each netdev's coalescing, offloads, channels and NAPIs. A
 * drift event's repair uses it, because such state changes come with netlink events of their
 * own. Returns -ESTALE when inv's PFs or VFs are not src's, and -ENOMEM.
 */
int inventory_copy_netlink(const Inventory *src, Inventory *inv);
/*
 * Frees what a Pf owns, which is its VFs, their vectors, its netdevs and its VF links. It does not
 * free the Pf itself.
 */
void pf_done(Pf *pf);
DEFINE_TRIVIAL_CLEANUP_FUNC(Inventory *, inventory_free);

const Irq *inventory_find_irq(const Inventory *inv, unsigned irq);
/* Does the same among the other devices' IRQs in other_irqs, which is sorted by number too. */
const Irq *inventory_find_other_irq(const Inventory *inv, unsigned irq);
/* Returns the kernel thread of kind with num, the first by pid, or NULL when there is none. */
const Kthread *inventory_find_kthread(const Inventory *inv, KthreadKind kind, unsigned num);
const Pf *inventory_find_pf(const Inventory *inv, const char *addr);
const VfLink *pf_find_vf_link(const Pf *pf, unsigned vf);
/* Whether addr is the PF itself or one of its VFs. pf may be NULL, and then it is false. */
bool pf_owns(const Pf *pf, const char *addr);
/*
 * Returns the PF that addr is, or whose VF it is, or NULL when it is neither. *ret_vf gets the
 * VF, or NULL for the PF itself.
 */
const Pf *inventory_find_function(const Inventory *inv, const char *addr, const Vf **ret_vf);

/* These format a MAC as "aa:bb:cc:dd:ee:ff" and parse it back. mac_parse() returns false on anything else. */
#define MAC_STR_MAX 18
char *mac_format(const uint8_t mac[6], char buf[static MAC_STR_MAX]);
bool mac_parse(const char *s, uint8_t ret[6]);
/* Derives a locally administered unicast MAC from key. The same key gives the same MAC on every host. */
void mac_derive(const char *key, uint8_t ret[6]);
