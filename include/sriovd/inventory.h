/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inventory.h — an immutable snapshot of what the host has: CPUs, kernel features, NICs, IRQs */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/cpuset.h"
#include "sriovd/macro.h"

#define PCI_ADDR_MAX 16   /* "0000:41:00.0" plus NUL, with room */
#define DRIVER_MAX 64
#define PCI_NAME_MAX 160

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
        char action[32];            /* first handler's name; filled for IRQs outside the NICs only */
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

typedef struct Vf {
        unsigned index;             /* N of virtfnN */
        char addr[PCI_ADDR_MAX];
        char driver[DRIVER_MAX];    /* "" = unbound */
        char netdev[IF_NAMESIZE];   /* "" = no host netdev (e.g. vfio-pci) */
        int ifindex;                /* of netdev; 0 = none. Names change under udev, this does not */
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

typedef struct Inventory {
        Topology topo;
        KernelCaps caps;
        Pf *pfs;                    /* in-scope PFs, sorted by address */
        size_t n_pfs;
        Irq *irqs;                  /* IRQs of the PFs and VFs above, sorted by number */
        size_t n_irqs;
        Irq *other_irqs;            /* every other IRQ of the host (disks, other NICs), sorted */
        size_t n_other_irqs;
        CpuSet default_affinity;    /* /proc/irq/default_smp_affinity */
        bool have_default_affinity;
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
 * freed with inventory_free(). Fails only when the tree is unusable (no
 * /sys/bus/pci); a single unreadable attribute is recorded as unknown.
 */
int inventory_read(RootFs *root, const Scope *scope, Inventory **ret);
Inventory *inventory_free(Inventory *inv);
DEFINE_TRIVIAL_CLEANUP_FUNC(Inventory *, inventory_free);

const Irq *inventory_find_irq(const Inventory *inv, unsigned irq);
const Pf *inventory_find_pf(const Inventory *inv, const char *addr);
const VfLink *pf_find_vf_link(const Pf *pf, unsigned vf);

/* "aa:bb:cc:dd:ee:ff" and back; parse returns false on anything else. */
#define MAC_STR_MAX 18
char *mac_format(const uint8_t mac[6], char buf[static MAC_STR_MAX]);
bool mac_parse(const char *s, uint8_t ret[6]);
/* A locally administered unicast MAC derived from key; same key, same MAC, on every host. */
void mac_derive(const char *key, uint8_t ret[6]);
