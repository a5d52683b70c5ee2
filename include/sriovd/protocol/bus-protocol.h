/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-protocol.h — the D-Bus API as sriovd and its clients both spell it: names, paths, keys, errors */
#pragma once

/*
 * The one header that sriovd's bus code and sriovctl share. sriovctl includes nothing else of
 * the daemon's. conf/org.sriovd.Manager1.xml documents every name here, and
 * org.sriovd.Manager1(5) says how to use them. Names are append-only. A client written against
 * ApiVersion N keeps working against N+1, which may add keys, properties, methods and objects,
 * but never renames or retypes one.
 */

#include <systemd/sd-bus.h>

#define SRIOVD_BUS_NAME "org.sriovd.Manager1"
#define SRIOVD_BUS_PATH "/org/sriovd/Manager1"
#define SRIOVD_BUS_INTERFACE "org.sriovd.Manager1"

/*
 * The Manager1 property ApiVersion: 1 was the positional-struct API of 0.1 (never announced
 * as such), 2 the a{sv} records, the per-tenant and per-PF objects and the ObjectManager.
 */
#define SRIOVD_API_VERSION 2

/* One object per tenant and per managed PF, children of SRIOVD_BUS_PATH (its ObjectManager). */
#define SRIOVD_BUS_TENANT_PREFIX SRIOVD_BUS_PATH "/tenant"   /* + sd_bus_path_encode()d tenant id */
#define SRIOVD_BUS_TENANT_INTERFACE "org.sriovd.Tenant1"
#define SRIOVD_BUS_DEVICE_PREFIX SRIOVD_BUS_PATH "/pf"       /* + sd_bus_path_encode()d PCI address */
#define SRIOVD_BUS_DEVICE_INTERFACE "org.sriovd.Device1"

/*
 * Record keys (a{sv}): GetTenant, Allocate's reply and ListTenants' rows are tenant records;
 * ListDevices, ListIrqs and Plan have their own. A key whose value does not exist is absent,
 * never a placeholder. The type and when each key is there: conf/org.sriovd.Manager1.xml.
 */
/* Tenant records */
#define SRIOVD_KEY_TENANT "tenant"            /* s, always */
#define SRIOVD_KEY_PATH "path"                /* o, always: the tenant's (or PF's) object */
#define SRIOVD_KEY_CLASS "class"              /* s, always */
#define SRIOVD_KEY_KIND "kind"                /* s, always: vf | virtio | none (tenants); pf | vf (devices) */
#define SRIOVD_KEY_STATE "state"              /* s, always: allocated | waiting */
#define SRIOVD_KEY_MAC "mac"                  /* s, always */
#define SRIOVD_KEY_ADDRESS "address"          /* s: the VF (tenants, kind vf); the function (devices) */
#define SRIOVD_KEY_PF "pf"                    /* s: the VF's PF, when the VF is on the host */
#define SRIOVD_KEY_NETDEV "netdev"            /* s: the host netdev, when there is one */
#define SRIOVD_KEY_VLAN "vlan"                /* u: when one was asked for */
#define SRIOVD_KEY_DOMAIN "domain"            /* s: the libvirt domain, when given */
#define SRIOVD_KEY_NUMA_NODE "numa_node"      /* i: the guest's node (tenants) or the device's, when known */
#define SRIOVD_KEY_REMOTE_NUMA "remote_numa"  /* b: with address: the VF is not on the guest's node */
#define SRIOVD_KEY_COALESCE "coalesce"        /* a{sv} {rx_usecs u, tx_usecs u}: a per-guest override */
#define SRIOVD_KEY_RX_USECS "rx_usecs"
#define SRIOVD_KEY_TX_USECS "tx_usecs"
#define SRIOVD_KEY_RT_CPUS "rt_cpus"          /* au: its guest's booked RT CPUs, vCPU 0's first, when booked */
#define SRIOVD_KEY_RT_WAITING "rt_waiting"    /* b: its class books RT CPUs: true while none is free for it */
#define SRIOVD_KEY_PIN_PF "pin_pf"            /* s: the PF its VF must be on, when Allocate pinned it */
#define SRIOVD_KEY_DOMAIN_UUID "domain_uuid"  /* s: the libvirt domain's UUID, when given */
#define SRIOVD_KEY_OWNER "owner"              /* s: who asked for the tenant, when given */
#define SRIOVD_KEY_MIN_TX_RATE "min_tx_rate"  /* u: Mbit/s, when Allocate asked for one */
#define SRIOVD_KEY_MAX_TX_RATE "max_tx_rate"  /* u: Mbit/s, when Allocate asked for one */
/* An RT CPU node record (the Manager's RtCpuNodes property), with numa_node when the node is known. */
#define SRIOVD_KEY_CPUS "cpus"                /* u, always: RT CPUs of the node */
#define SRIOVD_KEY_BOOKED "booked"            /* u, always: of them, booked by a guest */
#define SRIOVD_KEY_SHARED "shared"            /* u, always: of the booked, serving more than one guest */
#define SRIOVD_KEY_ROOM "room"                /* u, always: guests the booked CPUs may still take (rt_share) */
#define SRIOVD_KEY_GUESTS "guests"            /* u, always: guests holding RT CPUs there */
#define SRIOVD_KEY_WAITING "waiting"          /* u, always: guests placed without, waiting for one there */
/* A class record (the Manager's Classes property), besides name and rt_cpus (u there: 0 for none) */
#define SRIOVD_KEY_VNIC "vnic"                /* s, always: virtio | sriov-required | sriov-preferred */
#define SRIOVD_KEY_RANK "rank"                /* i, always */
#define SRIOVD_KEY_RT_FALLBACK "rt_fallback"  /* b, always: placed without an RT CPU when none is free */
#define SRIOVD_KEY_ALLOW_REMOTE_NUMA "allow_remote_numa" /* b, always */
/* Alert records (the Manager's ActiveAlerts property) */
#define SRIOVD_KEY_NAME "name"                /* s, always: the rule, as in [alert NAME]; the class in class records */
#define SRIOVD_KEY_METRIC "metric"            /* s, always */
#define SRIOVD_KEY_LABELS "labels"            /* a{ss}, always: the subject (pf, vf, tenant, class, cpu, ...) */
#define SRIOVD_KEY_VALUE "value"              /* d, always: the value that raised it */
#define SRIOVD_KEY_THRESHOLD "threshold"      /* d, always */
#define SRIOVD_KEY_CLEAR "clear"              /* d, always: the level it clears at */
#define SRIOVD_KEY_DIRECTION "direction"      /* s, always: above | below */
#define SRIOVD_KEY_PERIODS "periods"          /* u, always */
#define SRIOVD_KEY_SINCE "since"              /* t, always: CLOCK_REALTIME usec of the sample that raised it */
/* Device records (besides address, kind, pf, netdev, numa_node, path, tenant) */
#define SRIOVD_KEY_DRIVER "driver"            /* s: when bound */
#define SRIOVD_KEY_NUM_VFS "num_vfs"          /* u, PFs */
#define SRIOVD_KEY_TOTAL_VFS "total_vfs"      /* u, PFs */
#define SRIOVD_KEY_VF_INDEX "vf_index"        /* u, VFs */
/* IRQ records */
#define SRIOVD_KEY_IRQ "irq"                  /* u, always (also Plan actions on an IRQ) */
#define SRIOVD_KEY_DEVICE "device"            /* s: the PCI function that owns it, when managed */
#define SRIOVD_KEY_AFFINITY "affinity"        /* s, always: a CPU list */
#define SRIOVD_KEY_EFFECTIVE "effective"      /* s: when the kernel says */
#define SRIOVD_KEY_WRITABLE "writable"        /* b, always */
#define SRIOVD_KEY_THREAD "thread"            /* a{sv} {pid i, policy s, priority i}: threaded IRQs */
#define SRIOVD_KEY_PID "pid"
#define SRIOVD_KEY_POLICY "policy"
#define SRIOVD_KEY_PRIORITY "priority"
/* a{sv} {id u, name s, pid i, policy s, priority i, cpus s, paired s}: the threaded NAPI this IRQ
 * schedules; paired says how sriovd knows ("napi-get": the kernel said, "queue-order": by queue). */
#define SRIOVD_KEY_NAPI "napi"
#define SRIOVD_KEY_ID "id"
#define SRIOVD_KEY_PAIRED "paired"
/* Plan actions and notes */
#define SRIOVD_KEY_ACTION "action"            /* s, always */
#define SRIOVD_KEY_TARGET "target"            /* s: the PCI function; absent for the host */
#define SRIOVD_KEY_VF "vf"                    /* u: VF actions on a PF (vf-link): the VF's index */
#define SRIOVD_KEY_BEFORE "before"            /* s, always */
#define SRIOVD_KEY_AFTER "after"              /* s, always */
#define SRIOVD_KEY_EFFECT "effect"            /* s: what else it does, when anything */
#define SRIOVD_KEY_LEVEL "level"              /* s, always (notes) */
#define SRIOVD_KEY_TEXT "text"                /* s, always (notes) */

/* CheckHost findings */
#define SRIOVD_KEY_CHECK "check"              /* s, always: isolcpus, nohz_full, ... */
#define SRIOVD_KEY_SEVERITY "severity"        /* s, always: error | warning | info */
#define SRIOVD_KEY_RESULT "result"            /* s, always: pass | fail | skip */
#define SRIOVD_KEY_SEEN "seen"                /* s, always: what the host shows */
#define SRIOVD_KEY_EXPECTED "expected"        /* s, always: what sriovd expects, and why */
#define SRIOVD_KEY_FIX "fix"                  /* s: when it failed, the parameter or setting that fixes it */

/* Allocate's option keys */
#define SRIOVD_OPTION_NUMA_NODE "numa_node"   /* i or u, -1 = any */
#define SRIOVD_OPTION_MAC "mac"               /* s */
#define SRIOVD_OPTION_VLAN "vlan"             /* i or u, 0-4094 */
#define SRIOVD_OPTION_PF "pf"                 /* s: a managed PF; the tenant's VF comes from it only */
#define SRIOVD_OPTION_DOMAIN_UUID "domain_uuid" /* s: the libvirt domain's UUID, canonical lower case */
#define SRIOVD_OPTION_OWNER "owner"           /* s: [A-Za-z0-9._-]{1,63}, a label stored with the tenant */
#define SRIOVD_OPTION_MIN_TX_RATE "min_tx_rate" /* u: Mbit/s the tenant's VF is promised, 0-400000; 0 = none */
#define SRIOVD_OPTION_MAX_TX_RATE "max_tx_rate" /* u: Mbit/s the tenant may send, 0-400000; 0 = no limit */

#define SRIOVD_ERROR_NO_CAPACITY "org.sriovd.Error.NoCapacity"
#define SRIOVD_ERROR_NO_RT_CPU "org.sriovd.Error.NoRtCpu"
#define SRIOVD_ERROR_UNKNOWN_TENANT "org.sriovd.Error.UnknownTenant"
#define SRIOVD_ERROR_UNKNOWN_CLASS "org.sriovd.Error.UnknownClass"
#define SRIOVD_ERROR_UNKNOWN_DEVICE "org.sriovd.Error.UnknownDevice"
#define SRIOVD_ERROR_INVALID_ARGUMENT "org.sriovd.Error.InvalidArgument"
#define SRIOVD_ERROR_BUSY "org.sriovd.Error.Busy"
#define SRIOVD_ERROR_NOT_PERMITTED "org.sriovd.Error.NotPermitted"
#define SRIOVD_ERROR_TOO_MANY_TENANTS "org.sriovd.Error.TooManyTenants"
#define SRIOVD_ERROR_FAILED "org.sriovd.Error.Failed"
#define SRIOVD_ERROR_NOT_ON_VF "org.sriovd.Error.NotOnVf"         /* a VF's setting, for a tenant without one */
#define SRIOVD_ERROR_NOT_MONITORING "org.sriovd.Error.NotMonitoring" /* GetMetrics with monitor_interval_sec = 0 */

/*
 * name <-> errno (src/protocol/bus-protocol.c, linked by sriovd and sriovctl). Several errnos
 * may share a name (EPERM and EACCES are both NotPermitted); a name maps back to the first
 * errno listed for it. Registered with sd_bus_error_add_map(), so sd_bus_error_get_errno() on
 * a client gives these errnos too. Terminated by SD_BUS_ERROR_MAP_END.
 */
extern const sd_bus_error_map sriovd_bus_errors[];

/* The org.sriovd.Error name for a negative errno; anything unlisted is Failed. */
const char *bus_error_name_from_errno(int error);
/* The errno (positive) of an org.sriovd.Error name; 0 when it is not one. */
int bus_error_errno_from_name(const char *name);
/* Set e from a negative errno with the API's name and message (printf-style). */
int bus_error_setf(sd_bus_error *e, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
