/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.h — the policy model: tenant classes, PF policies, the daemon's settings, their
 * defaults and their lookups. It does no I/O. src/daemon/config*.c fills a Config from the INI
 * files, and the planner and the allocator read it. The object and its lookups are named
 * config_, because a Config is the policy as loaded, path included.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"
#include "alert-policy.h"
#include "inventory.h"

#define CLASS_NAME_MAX 64
/*
 * The state directory is fixed and not taken from localstatedir, because the unit's
 * StateDirectory=sriovd is always /var/lib/sriovd.
 */
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
        IRQ_CPUS_NUMA_LOCAL,   /* the housekeeping CPUs of the device's node */
        IRQ_CPUS_RT,           /* the RT CPUs of the device's node */
        IRQ_CPUS_VCPU,         /* the host CPU running the guest's vCPU 0 */
        IRQ_CPUS_LIST,         /* irq_cpu_list */
} IrqCpuPolicy;

/*
 * vhost_cpus says where a virtio-net tenant's vhost workers run. They are its packet threads on the
 * host side.
 */
typedef enum VhostCpuPolicy {
        VHOST_CPUS_LEAVE,      /* not touched, the default */
        VHOST_CPUS_HOUSEKEEPING, /* the housekeeping CPUs of the guest's node */
        VHOST_CPUS_RT,         /* the guest's booked RT CPUs, with vcpu_pinning = rt */
} VhostCpuPolicy;

typedef enum IrqSpread {
        IRQ_SPREAD_SPREAD,
        IRQ_SPREAD_SINGLE,
} IrqSpread;

/* A setting that is on, off or left. LEAVE means sriovd does not touch it. */
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
        int allow_remote_numa;            /* 1 when a tenant may get a VF on another NUMA node than the guest's */
        unsigned coalesce_rx_usecs, coalesce_tx_usecs;
        int coalesce_rx_frames, coalesce_tx_frames;   /* -1 to leave */
        Tristate adaptive_rx, adaptive_tx;
        IrqCpuPolicy irq_cpus;
        CpuSet irq_cpu_list;              /* IRQ_CPUS_LIST only */
        IrqSpread irq_spread;
        int irq_thread_priority;          /* 0 to leave the kernel default, else 1..99 */
        Tristate offload_tso, offload_gso, offload_gro, offload_lro;
        /*
         * The receive work of the class's netdevs. The channels come first. Then NAPI runs in
         * threads, which are placed like the IRQs.
         */
        ChannelsChange channels;          /* channels_combined, _rx and _tx; -1 to leave */
        Tristate napi_threads;            /* /sys/class/net/DEV/threaded; leave by default */
        /* The napi/ threads' SCHED_FIFO. -1, the default, means irq_thread_priority, and 0 means leave. */
        int napi_thread_priority;
        NapiParams napi_params;           /* napi_defer_hard_irqs, napi_gro_flush_timeout_ns, napi_irq_suspend_timeout_ns */

        /* The guest side, in libvirt. */
        int vf_attach_hostdev;            /* 1 for a plain <hostdev> instead of <interface type='hostdev'> */
        bool virtio_bridge;               /* whether virtio_source is a bridge; else it is a libvirt network */
        char virtio_source[64];           /* the network "default" by default */
        int vcpu_pin_rt;                  /* 1 when the guest books RT CPUs for its first rt_vcpus vCPUs */
        int vcpu_fifo_priority;           /* the RT vCPU threads' SCHED_FIFO from the next start; 0 to leave */
        unsigned rt_vcpus;                /* vCPUs 0..rt_vcpus-1 run on booked RT CPUs; 1 by default */
        unsigned rt_cpu_share;            /* how many guests of this class one RT CPU may serve; 1 by default */
        /*
         * 1 places a guest on housekeeping CPUs when no RT CPU is free. The default of 0 refuses
         * the guest then.
         */
        int rt_cpu_fallback;
        VhostCpuPolicy vhost_cpus;
        int vhost_priority;               /* the vhost workers' SCHED_FIFO; 0 to leave */
        /* The L3 ways of the guest's resctrl group, for its RT vCPU threads; 0 for no group. */
        uint64_t l3_cache_mask;
        /*
         * What one tenant may send, in Mbit/s; 0 for no limit, -1 to leave it to the PF's vf_*_tx_rate.
         * A VF takes both as its rates. A virtio-net NIC takes the maximum as libvirt's <bandwidth>.
         */
        int min_tx_rate, max_tx_rate;
} TenantClass;

/* 400 Gbit/s is the fastest ConnectX port, so a larger rate in Mbit/s is a typo. */
#define TX_RATE_MAX 400000

/*
 * The rates that one tenant asked for in Allocate, in Mbit/s. What it did not ask for comes from
 * its class. All zero is nothing asked.
 */
typedef struct TxRates {
        bool have_min, have_max;
        unsigned min, max;
} TxRates;

static inline bool tx_rates_equal(const TxRates *a, const TxRates *b) {
        return a->have_min == b->have_min && a->have_max == b->have_max && (!a->have_min || a->min == b->min) &&
               (!a->have_max || a->max == b->max);
}

/*
 * A tenant's rates: each its own, else its class's, else the fallback (the PF's, or -1 for none).
 * -1 in *ret_min or *ret_max means none. A minimum above the maximum is lowered to the maximum,
 * because the kernel refuses it. cls may be NULL.
 */
void tx_rates_resolve(const TxRates *own, const TenantClass *cls, int fallback_min, int fallback_max,
                      int *ret_min, int *ret_max);

typedef enum VfMacPolicy {
        VF_MAC_LEAVE,
        VF_MAC_DERIVE,          /* from the PF's permanent MAC and the VF index; a tenant's own MAC wins */
} VfMacPolicy;

typedef enum VfLinkStatePolicy {
        VF_LINK_STATE_LEAVE = -1,
        VF_LINK_STATE_AUTO,     /* equal to IFLA_VF_LINK_STATE_AUTO */
        VF_LINK_STATE_ENABLE,
        VF_LINK_STATE_DISABLE,
} VfLinkStatePolicy;

typedef enum VfDriverPolicy {
        VF_DRIVER_LEAVE,
        VF_DRIVER_VFIO,         /* vfio-pci, for passthrough */
        VF_DRIVER_HOST,         /* the VF's native driver, chosen by the kernel */
} VfDriverPolicy;

/* pf_link exists because libvirt refuses <interface type='hostdev'> while the PF's link is down. */
typedef enum PfLinkPolicy {
        PF_LINK_AUTO,                      /* up while tenants hold VFs of it, the default */
        PF_LINK_UP,                        /* always up */
        PF_LINK_LEAVE,                     /* never touched */
        _PF_LINK_MAX,
} PfLinkPolicy;

/* [rt] idle_states: what sriovd does to the RT CPUs' deep idle states. */
typedef enum IdleStatesPolicy {
        IDLE_STATES_LEAVE,                 /* never touched, the default */
        IDLE_STATES_LIMIT,                 /* those above HOST_CHECK_IDLE_LATENCY_MAX_US disabled */
        _IDLE_STATES_MAX,
} IdleStatesPolicy;

/* [rt] cpufreq_governor: the RT CPUs' cpufreq governor. */
typedef enum GovernorPolicy {
        GOVERNOR_LEAVE,                    /* never touched, the default */
        GOVERNOR_PERFORMANCE,
        _GOVERNOR_MAX,
} GovernorPolicy;

/* A [match VVVV:DDDD] or [pf DDDD:BB:DD.F] section. */
typedef struct PfPolicy {
        bool by_addr;
        PciId id;                          /* when not by_addr */
        char addr[PCI_ADDR_MAX];           /* when by_addr */
        int num_vfs;                       /* -1 to leave as found */
        int drivers_autoprobe;             /* -1 to leave, or 0 or 1 */
        PfLinkPolicy pf_link;              /* the PF netdev's administrative state */
        char class_name[CLASS_NAME_MAX];   /* "" for none */

        /* These apply to every VF of the PF, over rtnetlink on the PF. -1 or LEAVE means not touched. */
        VfMacPolicy vf_mac;
        int vf_vlan, vf_qos;
        Tristate vf_spoofchk, vf_trust;
        VfLinkStatePolicy vf_link_state;
        int vf_min_tx_rate, vf_max_tx_rate;   /* in Mbit/s; 0 for unlimited */
        VfDriverPolicy vf_driver;
        /*
         * With 1, the default, what the keys above leave is held at the clean baseline on every
         * VF, free or a tenant's. So no tenant inherits another's settings. The baseline is no
         * MAC, VLAN 0, spoofchk on, trust off, link auto and no rates. With 0, it is left as found,
         * and the operator's own VF settings stay.
         */
        int vf_clean;

        unsigned line;                     /* where the section starts */
        unsigned num_vfs_line;             /* where num_vfs was set; 0 when not set */
} PfPolicy;

/*
 * The policy of a PF without a section. Everything is left as found, but its VFs are kept clean by
 * vf_clean.
 */
extern const PfPolicy pf_policy_default;

typedef struct Config {
        char *path;
        char *classes_dir;

        /* [daemon] */
        char *state_dir;                   /* default /var/lib/sriovd */
        unsigned drift_check_sec;          /* default 5; 0 for events only */
        /* The drift check's period while BPF reports every change as it happens; default 60, 0 for none. */
        unsigned drift_safety_net_sec;
        int bpf;                           /* whether sriovd loads its BPF programs; default yes */
        unsigned vf_timeout_sec;           /* how long new VFs may take to appear; default 30 */
        unsigned vf_headroom;              /* free VFs kept for sriov-required arrivals; default 4 */
        unsigned vf_target_utilization;    /* in percent; default 85 */
        int release_on_stop;               /* whether a guest that stops gives its NIC back; default no */
        /*
         * Whether sriovd puts IRQ threads back when it stops. The default is no, so they keep their
         * settings.
         */
        int restore_on_stop;
        char *access_group;                /* default "sriovd" */
        unsigned access_group_line;        /* where access_group was set; 0 for the default */
        /* How many tenants the D-Bus API admits. The default is 16384, which is STATE_TENANTS_MAX. */
        unsigned max_tenants;
        char *libvirt_uri;                 /* default qemu:///system */
        unsigned monitor_interval_sec;     /* the sampler's period; default 5; 0 for no sampling */
        /*
         * The Prometheus page, or "" for none. The default is node_exporter's textfile directory
         * on Debian, and that is written only while the directory exists. A path set here is
         * always written.
         */
        char *metrics_file;
        bool metrics_file_set;

        /* [cpus] */
        bool have_rt_cpus, have_housekeeping_cpus;
        CpuSet rt_cpus, housekeeping_cpus;
        int keep_irqs_off_rt;              /* move every other IRQ and the default off the RT CPUs; default yes */

        /* [rt] */
        int rtnet_prio;                    /* -1 to leave */
        /*
         * The SCHED_FIFO of the per-CPU kernel threads on the RT CPUs, ksoftirqd/N, ktimers/N and
         * rcuc/N, by KthreadKind. 0 means leave. [KTHREAD_NAPI] is unused, because NAPI threads
         * follow their class.
         */
        int kthread_priority[_KTHREAD_KIND_MAX];
        /* What sriovd writes to the RT CPUs' cpuidle and cpufreq files. Both leave them by default. */
        IdleStatesPolicy idle_states;
        GovernorPolicy cpufreq_governor;

        PfPolicy *pfs;
        size_t n_pfs;
        TenantClass *classes;              /* sorted by name */
        size_t n_classes;

        /*
         * Every alert rule, in force or switched off. The built-in rules come first, then the
         * [alert] sections in file order.
         */
        AlertPolicy *alerts;
        size_t n_alerts;

        /* These are derived at load, and config_scope() hands them out. */
        PciId *scope_ids;                  /* scope_default_ids and every [match] id */
        size_t n_scope_ids;
        char (*scope_addrs)[PCI_ADDR_MAX]; /* every [pf] address */
        size_t n_scope_addrs;
} Config;

/*
 * Returns the [rt] key of a per-CPU kthread kind's priority, such as "ksoftirqd_priority". Returns
 * NULL for KTHREAD_NAPI.
 */
const char *kthread_priority_key(KthreadKind k);
/* Whether a class sets any channel count, or any per-NAPI setting. A cls of NULL means no class. */
bool tenant_class_wants_channels(const TenantClass *cls);
bool tenant_class_wants_napi_params(const TenantClass *cls);
/*
 * Returns the FIFO priority of a class's napi/ threads. That is napi_thread_priority, or the IRQ
 * threads' priority when it is -1. A result of 0 means leave.
 */
int tenant_class_napi_priority(const TenantClass *cls);
/* Returns the RT CPUs that a guest of the class books, or 0 when the class books none. */
unsigned tenant_class_rt_cpus(const TenantClass *cls);
/* Whether the class puts its tenants' IRQs or vCPUs on RT CPUs, which makes them RT tenants. */
bool tenant_class_is_rt(const TenantClass *cls);

/*
 * Makes a Config with the defaults that every setting starts from, before the INI reader fills it.
 * path and classes_dir are copied. The caller frees *ret with config_free().
 */
int config_new(const char *path, const char *classes_dir, Config **ret);
Config *config_free(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);
/* These set the defaults of a class, and of a PF section that starts at line. */
void tenant_class_init(TenantClass *cls);
void pf_policy_init(PfPolicy *pf, unsigned line);
/* Derives the scope that config_scope() hands out from the PF sections. Call it once they are final. */
int config_build_scope(Config *c);

const TenantClass *config_find_class(const Config *c, const char *name);
/* Returns the policy for a PF, or NULL for none. A [pf ADDR] section beats a [match ID] section. */
const PfPolicy *config_pf_policy(const Config *c, const char *addr, uint16_t vendor, uint16_t device);
/*
 * Puts in *ret the device scope that the config implies: the default ConnectX IDs, the [match] IDs
 * and the [pf] addresses.
 */
void config_scope(const Config *c, Scope *ret);

const char *vnic_kind_to_string(VnicKind k);
const char *irq_cpu_policy_to_string(IrqCpuPolicy p);
const char *irq_spread_to_string(IrqSpread s);
const char *tristate_to_string(Tristate t);
const char *vf_driver_policy_to_string(VfDriverPolicy p);

/*
 * The names of each enum's values, in enum order. The INI files spell them so, and --json and the
 * bus print them so. vf_link_state_table is shifted by one, because LEAVE is -1.
 */
#define VNIC_KIND_COUNT 3
#define IRQ_SPREAD_COUNT 2
#define PF_LINK_COUNT _PF_LINK_MAX
#define VF_MAC_COUNT 2
#define VF_LINK_STATE_COUNT 4
#define VF_DRIVER_COUNT 3
#define IDLE_STATES_COUNT _IDLE_STATES_MAX
#define GOVERNOR_COUNT _GOVERNOR_MAX
extern const char *const vnic_kind_table[VNIC_KIND_COUNT];
extern const char *const irq_spread_table[IRQ_SPREAD_COUNT];
extern const char *const pf_link_table[PF_LINK_COUNT];
extern const char *const vf_mac_table[VF_MAC_COUNT];
extern const char *const vf_link_state_table[VF_LINK_STATE_COUNT];
extern const char *const vf_driver_table[VF_DRIVER_COUNT];
extern const char *const idle_states_table[IDLE_STATES_COUNT];
extern const char *const governor_table[GOVERNOR_COUNT];
