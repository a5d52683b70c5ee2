/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h — sriovd.conf and tenant-classes.d/NAME.ini, parsed and validated */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/cpuset.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"
#include "sriovd-config.h"

#define CLASS_NAME_MAX 64
/* From meson's sysconfdir, so the binary reads where meson install and the package put it. */
#define CONFIG_DEFAULT_PATH SRIOVD_SYSCONFDIR "/sriovd.conf"
/* Fixed, not localstatedir: the unit's StateDirectory=sriovd is always /var/lib/sriovd. */
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/sriovd"
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

        /* The guest side (libvirt). */
        int vf_attach_hostdev;            /* 1: plain <hostdev> instead of <interface type='hostdev'> */
        bool virtio_bridge;               /* virtio_source is a bridge, else a libvirt network */
        char virtio_source[64];           /* default: the network "default" */
        int vcpu_pin_rt;                  /* 1: vCPUs on the RT CPUs, the emulator on housekeeping ones */
        int vcpu_fifo_priority;           /* 0 = leave; SCHED_FIFO for the vCPU threads (next start) */
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

        unsigned line;                     /* where the section starts */
        unsigned num_vfs_line;             /* where num_vfs was set, 0 = not set */
} PfPolicy;

/* A PF without a section: everything left as found. */
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

        /* [cpus] */
        bool have_rt_cpus, have_housekeeping_cpus;
        CpuSet rt_cpus, housekeeping_cpus;
        int keep_irqs_off_rt;              /* move every other IRQ (and the default) off the RT CPUs; default yes */

        /* [rt] */
        int rtnet_prio;                    /* -1 = leave */

        PfPolicy *pfs;
        size_t n_pfs;
        TenantClass *classes;              /* sorted by name */
        size_t n_classes;

        /* Derived at load: what config_scope() hands out. */
        PciId *scope_ids;                  /* scope_default_ids + every [match] id */
        size_t n_scope_ids;
        char (*scope_addrs)[PCI_ADDR_MAX]; /* every [pf] address */
        size_t n_scope_addrs;
} Config;

/*
 * Load path and every tenant-classes.d/NAME.ini beside it. On failure returns
 * -EINVAL (or the errno of an unreadable file) and sets *ret_errors to one
 * message per line, each "FILE:LINE: what was wrong, what was expected"; the
 * caller frees it. Unknown sections and keys are errors with the nearest valid
 * name suggested. A config that loads is internally consistent (classes named
 * by PFs exist, rt and housekeeping CPUs do not overlap).
 */
int config_load(const char *path, Config **ret, char **ret_errors);
/* Same, for a config held in memory (fuzzing, tests); classes_dir may be NULL. */
int config_load_string(const char *name, const char *text, const char *classes_dir,
                       Config **ret, char **ret_errors);
Config *config_free(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);

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
