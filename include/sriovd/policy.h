/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.h — the policy model: tenant classes, PF policies, the daemon's settings, their
 * defaults and lookups. No I/O: src/daemon/config*.c fills a Config from the INI files, the
 * planner and the allocator read it. The object and its lookups keep the config_ names they
 * had when the INI reader held them: a Config is the policy as loaded, path included.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/alert-policy.h"
#include "sriovd/cpuset.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"

#define CLASS_NAME_MAX 64
/* Fixed, not localstatedir: the unit's StateDirectory=sriovd is always /var/lib/sriovd. */
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/sriovd"
#define CONFIG_DEFAULT_METRICS_FILE "/var/lib/prometheus/node-exporter/sriovd.prom"
#define DEFAULT_MONITOR_INTERVAL_SEC 5
#define CONFIG_DEFAULT_LIBVIRT_URI "qemu:///system"
#define COALESCE_DEFAULT_USECS 50

typedef enum VnicKind {
        VNIC_SRIOV_REQUIRED,
        VNIC_SRIOV_PREFERRED,
        VNIC_VIRTIO,
} VnicKind;

typedef enum IrqCpuPolicy {
        IRQ_CPUS_NUMA_LOCAL,   /* housekeeping CPUs of the device's node */
        IRQ_CPUS_RT,           /* RT CPUs of the device's node */
        IRQ_CPUS_VCPU,         /* the host CPU running the guest's vCPU 0 */
        IRQ_CPUS_LIST,         /* irq_cpu_list */
} IrqCpuPolicy;

/* vhost_cpus: where a virtio-net tenant's vhost workers (its host-side packet threads) run. */
typedef enum VhostCpuPolicy {
        VHOST_CPUS_LEAVE,      /* not touched (the default) */
        VHOST_CPUS_HOUSEKEEPING, /* the housekeeping CPUs of the guest's node */
        VHOST_CPUS_RT,         /* the guest's booked RT CPUs (vcpu_pinning = rt) */
} VhostCpuPolicy;

typedef enum IrqSpread {
        IRQ_SPREAD_SPREAD,
        IRQ_SPREAD_SINGLE,
} IrqSpread;

/* on/off/leave settings: LEAVE means sriovd does not touch it. */
typedef enum Tristate {
        TRISTATE_LEAVE = -1,
        TRISTATE_OFF = 0,
        TRISTATE_ON = 1,
} Tristate;

typedef struct TenantClass {
        char name[CLASS_NAME_MAX];        /* file name without .ini */
        char *file;
        VnicKind vnic;
        int rank;
        int allow_remote_numa;            /* 1: may get a VF on another NUMA node than the guest's */
        unsigned coalesce_rx_usecs, coalesce_tx_usecs;
        int coalesce_rx_frames, coalesce_tx_frames;   /* -1 = leave */
        Tristate adaptive_rx, adaptive_tx;
        IrqCpuPolicy irq_cpus;
        CpuSet irq_cpu_list;              /* IRQ_CPUS_LIST only */
        IrqSpread irq_spread;
        int irq_thread_priority;          /* 0 = leave the kernel default, else 1..99 */
        Tristate offload_tso, offload_gso, offload_gro, offload_lro;
        /* The receive work of the class's netdevs: channels first, then NAPI in threads placed like the IRQs. */
        ChannelsChange channels;          /* channels_combined/_rx/_tx; -1 = leave */
        Tristate napi_threads;            /* /sys/class/net/DEV/threaded; default leave */
        int napi_thread_priority;         /* SCHED_FIFO of the napi/ threads; -1 (default) = irq_thread_priority, 0 = leave */
        NapiParams napi_params;           /* napi_defer_hard_irqs, napi_gro_flush_timeout_ns, napi_irq_suspend_timeout_ns */

        /* The guest side (libvirt). */
        int vf_attach_hostdev;            /* 1: plain <hostdev> instead of <interface type='hostdev'> */
        bool virtio_bridge;               /* virtio_source is a bridge, else a libvirt network */
        char virtio_source[64];           /* default: the network "default" */
        int vcpu_pin_rt;                  /* 1: the guest books RT CPUs for its first rt_vcpus vCPUs */
        int vcpu_fifo_priority;           /* 0 = leave; SCHED_FIFO for the RT vCPU threads (next start) */
        unsigned rt_vcpus;                /* vCPUs 0..rt_vcpus-1 on booked RT CPUs; default 1 */
        unsigned rt_cpu_share;            /* guests of this class one RT CPU may serve; default 1 */
        int rt_cpu_fallback;              /* 1: placed on housekeeping CPUs when no RT CPU is free; default 0: refused */
        VhostCpuPolicy vhost_cpus;
        int vhost_priority;               /* 0 = leave; SCHED_FIFO for the vhost workers */
} TenantClass;

typedef enum VfMacPolicy {
        VF_MAC_LEAVE,
        VF_MAC_DERIVE,          /* from the PF's permanent MAC and the VF index; a tenant's own wins */
} VfMacPolicy;

typedef enum VfLinkStatePolicy {
        VF_LINK_STATE_LEAVE = -1,
        VF_LINK_STATE_AUTO,     /* = IFLA_VF_LINK_STATE_AUTO */
        VF_LINK_STATE_ENABLE,
        VF_LINK_STATE_DISABLE,
} VfLinkStatePolicy;

typedef enum VfDriverPolicy {
        VF_DRIVER_LEAVE,
        VF_DRIVER_VFIO,         /* vfio-pci, for passthrough */
        VF_DRIVER_HOST,         /* the VF's native driver, chosen by the kernel */
} VfDriverPolicy;

/* pf_link: libvirt refuses <interface type='hostdev'> while the PF's link is down. */
typedef enum PfLinkPolicy {
        PF_LINK_AUTO,                      /* up while tenants hold VFs of it (the default) */
        PF_LINK_UP,                        /* always up */
        PF_LINK_LEAVE,                     /* never touched */
        _PF_LINK_MAX,
} PfLinkPolicy;

/* A [match VVVV:DDDD] or [pf DDDD:BB:DD.F] section. */
typedef struct PfPolicy {
        bool by_addr;
        PciId id;                          /* !by_addr */
        char addr[PCI_ADDR_MAX];           /* by_addr */
        int num_vfs;                       /* -1 = leave as found */
        int drivers_autoprobe;             /* -1 = leave, 0/1 */
        PfLinkPolicy pf_link;              /* the PF netdev's administrative state */
        char class_name[CLASS_NAME_MAX];   /* "" = none */

        /* Every VF of the PF, over rtnetlink on the PF; -1 / LEAVE = not touched. */
        VfMacPolicy vf_mac;
        int vf_vlan, vf_qos;
        Tristate vf_spoofchk, vf_trust;
        VfLinkStatePolicy vf_link_state;
        int vf_min_tx_rate, vf_max_tx_rate;   /* Mbit/s, 0 = unlimited */
        VfDriverPolicy vf_driver;
        /*
         * 1 (the default): what the keys above leave is held at the clean baseline (no MAC, VLAN 0,
         * spoofchk on, trust off, link auto, no rates) on every VF, free or a tenant's, so no tenant
         * inherits another's settings. 0: left as found (the operator's own VF settings stay).
         */
        int vf_clean;

        unsigned line;                     /* where the section starts */
        unsigned num_vfs_line;             /* where num_vfs was set, 0 = not set */
} PfPolicy;

/* A PF without a section: everything left as found, but its VFs kept clean (vf_clean). */
extern const PfPolicy pf_policy_default;

typedef struct Config {
        char *path;
        char *classes_dir;

        /* [daemon] */
        char *state_dir;                   /* default /var/lib/sriovd */
        unsigned drift_check_sec;          /* default 5; 0 = event-driven only */
        unsigned vf_timeout_sec;           /* default 30: how long new VFs may take to appear */
        unsigned vf_headroom;              /* default 4: free VFs kept for sriov-required arrivals */
        unsigned vf_target_utilization;    /* percent, default 85 */
        int release_on_stop;               /* a guest that stops gives its NIC back; default no */
        int restore_on_stop;               /* sriovd stopping puts IRQ threads back; default no: they keep it */
        char *access_group;                /* default "sriovd" */
        unsigned access_group_line;        /* where access_group was set, 0 = the default */
        unsigned max_tenants;              /* default 16384 (STATE_TENANTS_MAX): tenants the D-Bus API admits */
        char *libvirt_uri;                 /* default qemu:///system */
        unsigned monitor_interval_sec;     /* default 5: the sampler's period; 0 = no sampling */
        /* The Prometheus page; "" = none. The default is node_exporter's textfile directory on
         * Debian, written only while that directory exists; a path set here is always written. */
        char *metrics_file;
        bool metrics_file_set;

        /* [cpus] */
        bool have_rt_cpus, have_housekeeping_cpus;
        CpuSet rt_cpus, housekeeping_cpus;
        int keep_irqs_off_rt;              /* move every other IRQ (and the default) off the RT CPUs; default yes */

        /* [rt] */
        int rtnet_prio;                    /* -1 = leave */
        /* SCHED_FIFO of the per-CPU kernel threads on the RT CPUs (ksoftirqd/N, ktimers/N, rcuc/N), by
         * KthreadKind; 0 = leave. [KTHREAD_NAPI] is unused: NAPI threads follow their class. */
        int kthread_priority[_KTHREAD_KIND_MAX];

        PfPolicy *pfs;
        size_t n_pfs;
        TenantClass *classes;              /* sorted by name */
        size_t n_classes;

        /* Every alert rule in force or switched off: the built-ins first, then [alert] sections in file order. */
        AlertPolicy *alerts;
        size_t n_alerts;

        /* Derived at load: what config_scope() hands out. */
        PciId *scope_ids;                  /* scope_default_ids + every [match] id */
        size_t n_scope_ids;
        char (*scope_addrs)[PCI_ADDR_MAX]; /* every [pf] address */
        size_t n_scope_addrs;
} Config;

/* The [rt] key of a per-CPU kthread kind's priority ("ksoftirqd_priority"); NULL for KTHREAD_NAPI. */
const char *kthread_priority_key(KthreadKind k);
/* Whether a class (NULL: none) sets any channel count / any per-NAPI setting. */
bool tenant_class_wants_channels(const TenantClass *cls);
bool tenant_class_wants_napi_params(const TenantClass *cls);
/* The FIFO priority of a class's napi/ threads: napi_thread_priority, or its IRQ threads' when -1; 0 = leave. */
int tenant_class_napi_priority(const TenantClass *cls);

/* The defaults every setting starts from, before the INI reader fills it; path and classes_dir copied. */
int config_new(const char *path, const char *classes_dir, Config **ret);
Config *config_free(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);
/* The defaults of a class and of a PF section starting at line. */
void tenant_class_init(TenantClass *cls);
void pf_policy_init(PfPolicy *pf, unsigned line);
/* Derives the scope (config_scope()) from the PF sections; once they are final. */
int config_build_scope(Config *c);

const TenantClass *config_find_class(const Config *c, const char *name);
/* The policy for a PF: a [pf ADDR] section beats a [match ID]; NULL = none. */
const PfPolicy *config_pf_policy(const Config *c, const char *addr, uint16_t vendor, uint16_t device);
/* The device scope the config implies: default ConnectX IDs + [match] IDs + [pf] addresses. */
void config_scope(const Config *c, Scope *ret);

const char *vnic_kind_to_string(VnicKind k);
const char *irq_cpu_policy_to_string(IrqCpuPolicy p);
const char *irq_spread_to_string(IrqSpread s);
const char *tristate_to_string(Tristate t);
const char *vf_driver_policy_to_string(VfDriverPolicy p);

/*
 * The names of each enum's values, in enum order: what the INI files spell and what
 * --json and the bus print. vf_link_state_table is shifted by one (LEAVE is -1).
 */
#define VNIC_KIND_COUNT 3
#define IRQ_SPREAD_COUNT 2
#define PF_LINK_COUNT _PF_LINK_MAX
#define VF_MAC_COUNT 2
#define VF_LINK_STATE_COUNT 4
#define VF_DRIVER_COUNT 3
extern const char *const vnic_kind_table[VNIC_KIND_COUNT];
extern const char *const irq_spread_table[IRQ_SPREAD_COUNT];
extern const char *const pf_link_table[PF_LINK_COUNT];
extern const char *const vf_mac_table[VF_MAC_COUNT];
extern const char *const vf_link_state_table[VF_LINK_STATE_COUNT];
extern const char *const vf_driver_table[VF_DRIVER_COUNT];
