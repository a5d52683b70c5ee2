/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt.h — libvirt: NIC XML, attach/detach/swap, vCPU facts and pinning, domain events, reconcile */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/cpuset.h"
#include "sriovd/guest-placement.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"

/*
 * The only module that talks to libvirt. Like every other module it never
 * logs: each failing call returns a negative errno and, when the caller
 * passes a VirtError, libvirt's own message (virGetLastError()) with it.
 * libvirt's default error printing to stderr is switched off by virt_new().
 *
 * Threads: none. libvirt's client library runs its sockets and timers on
 * the event loop implementation virt_event_register() hands it (sd-event
 * sources), and every callback arrives from sd_event_dispatch() on the
 * caller's thread. Calls into libvirt (open, attach, list) are synchronous
 * RPCs on a local socket.
 */

#define VIRT_URI_DEFAULT "qemu:///system"
#define VIRT_DOMAIN_NAME_MAX 256
#define VIRT_ALIAS_MAX 176           /* fits VIRT_ALIAS_PREFIX + a tenant id spelled for an alias + "_" + suffix */
#define VIRT_ERROR_MESSAGE_MAX 512
#define VIRT_SOURCE_MAX 64            /* a libvirt network or a bridge / tap name */
#define VIRT_QUEUES_MAX 256
#define VIRT_VCPUS_MAX 4096
/* Prefix of the user aliases sriovd gives its NICs: "ua-sriovd-TENANT_SUFFIX", see virt_nic_set_alias(). */
#define VIRT_ALIAS_PREFIX "ua-sriovd-"
/* Suffixes are at most 31 characters ("vf-0000-41-00-2", "virtio-ethernet"); ids double at most. */
_Static_assert(sizeof(VIRT_ALIAS_PREFIX) + 2 * (TENANT_ID_MAX - 1) + 1 + 31 <= VIRT_ALIAS_MAX, "alias fits");

/* errno + libvirt's message; error 0 = no error. */
typedef struct VirtError {
        int error;                    /* negative errno */
        int code;                     /* libvirt's virErrorNumber, 0 when the error is ours */
        char message[VIRT_ERROR_MESSAGE_MAX];
} VirtError;

/*
 * libvirt's virErrorNumber as a negative errno; one tested table:
 * NO_DOMAIN/NO_NETWORK/NO_DOMAIN_… → -ENOENT, OPERATION_INVALID → -EBUSY
 * (wrong domain state), CONFIG_UNSUPPORTED/NO_SUPPORT/OPERATION_UNSUPPORTED
 * → -EOPNOTSUPP, XML_ERROR/XML_DETAIL/INVALID_ARG → -EINVAL, AUTH/ACCESS
 * → -EACCES, NO_CONNECT/RPC/INVALID_CONN → -ENOTCONN, OPERATION_TIMEOUT →
 * -ETIMEDOUT, DEVICE_MISSING → -ENODEV, SYSTEM_ERROR → its errno (int1),
 * NO_MEMORY → -ENOMEM, anything else → -EIO.
 */
int virt_errno_from_code(int code, int sys_errno);

/* ---- NIC XML (pure) ------------------------------------------------------ */

typedef enum VirtNicKind {
        VIRT_NIC_VF_INTERFACE,        /* <interface type='hostdev' managed='yes'>: MAC + VLAN set by libvirt */
        VIRT_NIC_VF_HOSTDEV,          /* <hostdev mode='subsystem' type='pci' managed='yes'>: no MAC in XML */
        VIRT_NIC_VIRTIO_NETWORK,      /* <interface type='network'>, source = network name */
        VIRT_NIC_VIRTIO_BRIDGE,       /* <interface type='bridge'>, source = bridge name */
        VIRT_NIC_VIRTIO_ETHERNET,     /* <interface type='ethernet'>, source = an existing tap (managed='no'), or "" */
        _VIRT_NIC_KIND_MAX,
} VirtNicKind;

typedef enum VirtNicDriver {
        VIRT_NIC_DRIVER_DEFAULT,      /* no name=: libvirt picks (vhost when /dev/vhost-net opens) */
        VIRT_NIC_DRIVER_VHOST,        /* name='vhost': fails where the host has no vhost-net */
        VIRT_NIC_DRIVER_QEMU,         /* name='qemu': userspace virtio */
        _VIRT_NIC_DRIVER_MAX,
} VirtNicDriver;

typedef struct VirtNic {
        VirtNicKind kind;
        char vf[PCI_ADDR_MAX];        /* VF kinds: "DDDD:BB:DD.F" */
        char mac[MAC_STR_MAX];        /* "" = none (libvirt picks one); ignored by VF_HOSTDEV */
        int vlan;                     /* VF_INTERFACE: 1..4094, -1 or 0 = none */
        char source[VIRT_SOURCE_MAX]; /* virtio: network / bridge / tap name */
        unsigned queues;              /* virtio: 0 or 1 = libvirt's single queue, up to VIRT_QUEUES_MAX */
        VirtNicDriver driver;         /* virtio only */
        char alias[VIRT_ALIAS_MAX];   /* "" = none; else a user alias "ua-..." ([A-Za-z0-9_-], libvirt's set) */
} VirtNic;

#define VIRT_NIC_INIT ((VirtNic) { .vlan = -1 })

/*
 * The user alias for tenant's nic, set into nic->alias: VIRT_ALIAS_PREFIX +
 * tenant ('_' as "__", '.' as "_-") + "_" + what the NIC is ("vf-0000-41-00-2",
 * "virtio-bridge", ...), in the only characters libvirt keeps in a user alias.
 * The suffix keeps a swap's new NIC from taking the alias of an old one whose
 * live detach is still pending. -EINVAL when the tenant id is not valid.
 */
int virt_nic_set_alias(VirtNic *nic, const char *tenant);
/* The tenant id in one of our aliases (a device event's); -EINVAL when the alias is not ours. */
int virt_alias_tenant(const char *alias, char ret[static TENANT_ID_MAX]);
/*
 * The device XML for nic, built as a libxml2 tree and written by libxml2
 * (which escapes every value), two-space indented, ending in a newline.
 * -EINVAL: an invalid PCI address, MAC, VLAN, queue count or alias, a bridge
 * or tap name that is no interface name, a source with control characters,
 * a source that is not UTF-8 or holds a character XML cannot carry (the
 * fragment is read back with libxml2's parser to tell), a virtio kind without
 * source where one is needed. *ret is freed by the caller.
 */
int virt_nic_xml(const VirtNic *nic, char **ret);

const char *virt_nic_kind_to_string(VirtNicKind k);

/* ---- domain XML (pure, libxml2) -------------------------------------------- */

typedef enum VirtDevKind {
        VIRT_DEV_INTERFACE_HOSTDEV,   /* <interface type='hostdev'> with a PCI source */
        VIRT_DEV_HOSTDEV,             /* <hostdev type='pci'> */
        VIRT_DEV_INTERFACE,           /* any other <interface> (virtio-net, ...) */
} VirtDevKind;

/* One NIC found in a domain's XML. */
typedef struct VirtDomainNic {
        char domain[VIRT_DOMAIN_NAME_MAX];
        VirtDevKind kind;
        char pci[PCI_ADDR_MAX];       /* the host PCI address (hostdev kinds), "" otherwise */
        char mac[MAC_STR_MAX];        /* lower case; "" when the XML has none (plain hostdev) */
        char type[16];                /* <interface type=...>; "hostdev" for <hostdev> */
        char alias[VIRT_ALIAS_MAX];   /* "" = none */
} VirtDomainNic;

typedef struct VirtDomainInfo {
        char name[VIRT_DOMAIN_NAME_MAX];
        bool active;                  /* running or paused */
        VirtDomainNic *nics;
        size_t n_nics;
} VirtDomainInfo;

/*
 * Parse one domain's XML (virDomainGetXMLDesc()): its name and every
 * interface and PCI hostdev. -EINVAL when xml is no <domain> document;
 * devices with unreadable addresses are skipped, not fatal.
 */
int virt_domain_parse_xml(const char *xml, VirtDomainInfo *ret);
void virt_domain_info_done(VirtDomainInfo *d);

/*
 * The domain XML with <cputune><vcpusched vcpus='0-(n-1)' scheduler='fifo'
 * priority='prio'/> in place of any vcpusched it had (prio 0: every
 * vcpusched removed), ready for virDomainDefineXML(). Returns 1 with *ret
 * set, or 0 (and *ret untouched) when the XML says so already. -EINVAL on
 * bad XML, n_vcpus 0 or prio outside 0..99.
 */
int virt_domain_xml_set_vcpu_fifo(const char *xml, unsigned n_vcpus, int prio, char **ret);
/*
 * The domain XML with <numatune><memory mode='strict' nodeset='node'/>: 1 with *ret set, 0 when
 * so already. *ret_before: the single node it had, else -1. -EINVAL on bad XML or node.
 */
int virt_domain_xml_set_numatune(const char *xml, int node, int *ret_before, char **ret);
/*
 * The domain XML with device_xml (one element, virt_nic_xml()'s) appended to
 * its <devices>, ready for virDomainDefineXML(): what a CONFIG attach does,
 * for drivers without one. *ret freed by the caller. -EINVAL when xml is no
 * <domain> with <devices> or device_xml is not one well-formed element.
 */
int virt_domain_xml_add_device(const char *xml, const char *device_xml, char **ret);

/* ---- reconcile (pure) ---------------------------------------------------- */

/* What sriovd believes: a tenant holds vf and should be in domain. */
typedef struct VirtExpected {
        const char *tenant;
        const char *vf;               /* PCI address; NULL/"" = a virtio tenant (checked by MAC) */
        const char *mac;              /* may be NULL */
        const char *domain;           /* "" or NULL = no domain yet */
} VirtExpected;

typedef enum VirtFinding {
        VIRT_FINDING_OK,              /* the VF is in the expected domain */
        VIRT_FINDING_MISSING,         /* the tenant's domain exists, its NIC is not in it */
        VIRT_FINDING_DOMAIN_GONE,     /* the tenant's domain is not defined any more */
        VIRT_FINDING_ELSEWHERE,       /* the VF sits in another domain than the tenant's */
        VIRT_FINDING_DUPLICATE,       /* the VF is in more than one domain */
        VIRT_FINDING_FOREIGN,         /* a domain holds a VF no tenant holds */
        VIRT_FINDING_MAC_MISMATCH,    /* the VF is where expected, with another MAC */
        _VIRT_FINDING_MAX,
} VirtFinding;

typedef struct VirtReconcileItem {
        VirtFinding finding;
        char tenant[TENANT_ID_MAX];   /* "" for FOREIGN */
        char vf[PCI_ADDR_MAX];        /* "" for a virtio tenant */
        char domain[VIRT_DOMAIN_NAME_MAX];     /* where it is found ("" for MISSING/DOMAIN_GONE) */
        char expected_domain[VIRT_DOMAIN_NAME_MAX];
        char mac[MAC_STR_MAX];        /* as found in the domain */
} VirtReconcileItem;

/*
 * Compare the domains' NICs with the tenants. The rules (one item per
 * tenant, plus one per foreign VF placement, in tenant then VF order):
 *  - A VF in two or more domains: DUPLICATE for each placement. Nothing is
 *    detached by sriovd on its own; the tenant's own domain, when among
 *    them, keeps it — the others are the operator's to fix.
 *  - A tenant's VF found only in another domain than its own: ELSEWHERE
 *    (the XML is the truth of where the device is; the state is stale or the
 *    VF was attached by hand); sriovd must not hand that VF to anyone else.
 *  - A tenant whose domain is not among the domains: DOMAIN_GONE — the
 *    caller releases it (or keeps it, by its keep-on-undefine policy).
 *  - A tenant with a domain that lacks its NIC: MISSING — the caller attaches.
 *    Virtio tenants are looked up by MAC; a virtio tenant without MAC is OK
 *    whenever its domain exists.
 *  - A VF (PCI address in vfs_in_scope, sorted) in a domain and held by no
 *    tenant: FOREIGN — reported; the allocator must treat it as taken.
 *  - Tenants without a domain are not checked.
 * *ret is freed by the caller.
 */
int virt_reconcile(const VirtDomainInfo *domains, size_t n_domains,
                   const VirtExpected *expected, size_t n_expected,
                   const char (*vfs_in_scope)[PCI_ADDR_MAX], size_t n_vfs_in_scope,
                   VirtReconcileItem **ret, size_t *ret_n);

const char *virt_finding_to_string(VirtFinding f);

/* ---- the event loop bridge ------------------------------------------------- */

struct sd_event;

/*
 * Register libvirt's event loop implementation (virEventRegisterImpl) on e:
 * handles become sd-event io sources, timeouts time sources (CLOCK_MONOTONIC,
 * 1 ms accuracy). Once per process, before any connection is opened (a
 * libvirt rule): again with the same loop returns 0, with another loop
 * -EBUSY while the first still has sources. The bridge is process-global
 * because libvirt's registration is; it holds a reference on e.
 */
int virt_event_register(struct sd_event *e);
/* Run the free callbacks libvirt asked for on removed handles/timeouts now (they are deferred, as libvirt requires). */
void virt_event_flush(void);
/* Live sources (handles + timeouts), for tests. */
size_t virt_event_n_sources(void);

/* ---- the connection --------------------------------------------------------- */

typedef enum VirtEventKind {
        VIRT_EVENT_DEFINED,           /* domain defined or its config updated */
        VIRT_EVENT_UNDEFINED,
        VIRT_EVENT_STARTED,           /* incl. restored, migrated in */
        VIRT_EVENT_STOPPED,           /* shut off, destroyed, crashed, failed, saved, migrated out */
        VIRT_EVENT_SUSPENDED,
        VIRT_EVENT_RESUMED,
        VIRT_EVENT_DEVICE_ADDED,      /* device: the device's alias */
        VIRT_EVENT_DEVICE_REMOVED,
        VIRT_EVENT_DEVICE_REMOVAL_FAILED,
        VIRT_EVENT_DISCONNECTED,      /* the connection closed; detail = why; reconnecting */
        VIRT_EVENT_RECONNECTED,       /* open again: resync (events were missed while down) */
        VIRT_EVENT_TUNABLE,           /* live tunables changed (vcpupin, emulatorpin, ...); detail_str:
                                       * vCPU 0's new pinning (a CPU list) if among them, else "" */
        _VIRT_EVENT_KIND_MAX,
} VirtEventKind;

typedef struct VirtEvent {
        VirtEventKind kind;
        const char *domain;           /* NULL for connection events */
        const char *device;           /* device events: alias ("net1", "ua-sriovd-t1_virtio-bridge", "hostdev0") */
        int detail;                   /* libvirt's detail code (lifecycle / close reason) */
        const char *detail_str;       /* the same as text; TUNABLE: vCPU 0's pinning or "" */
} VirtEvent;

typedef void (*VirtEventFn)(const VirtEvent *ev, void *userdata);

typedef struct Virt Virt;

/*
 * Open uri (NULL = VIRT_URI_DEFAULT) and subscribe to lifecycle, device and
 * tunable events, delivered to fn (may be NULL; set later with virt_set_event_fn()).
 * virt_event_register() must have been called. When the connection drops,
 * fn gets DISCONNECTED and the module reopens it from an sd-event timer with
 * backoff 1 s, 2 s, 4 s ... 30 s, then RECONNECTED. Returns -ENOTCONN (etc.)
 * with err filled when the first open fails.
 */
int virt_new(struct sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err);
Virt *virt_free(Virt *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(Virt *, virt_free);
void virt_set_event_fn(Virt *v, VirtEventFn fn, void *userdata);
bool virt_is_connected(const Virt *v);
/* Reconnect backoff bounds in µs (tests shorten them). */
void virt_set_backoff(Virt *v, uint64_t min_usec, uint64_t max_usec);

/* Every domain (active and inactive) with its NICs. Free with virt_domain_list_free(). */
int virt_list_domains(Virt *v, VirtDomainInfo **ret, size_t *ret_n, VirtError *err);
void virt_domain_list_free(VirtDomainInfo *d, size_t n);
/* One domain by name; -ENOENT when undefined. */
int virt_get_domain(Virt *v, const char *domain, VirtDomainInfo *ret, VirtError *err);
/* 1 running or paused, 0 shut off, -ENOENT undefined. */
int virt_domain_is_active(Virt *v, const char *domain, VirtError *err);

/* ---- actions ---------------------------------------------------------------- */

/*
 * Attach nic to domain: LIVE|CONFIG when the domain is active, CONFIG when
 * not. Returns 1 when done, 0 when the NIC was already there (same MAC, or
 * same VF for a hostdev), negative errno with err on failure (e.g.
 * -EOPNOTSUPP "host doesn't support passthrough of host PCI devices").
 */
int virt_attach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err);
/*
 * Detach nic (matched by MAC and interface type, or by VF for a plain
 * hostdev): LIVE|CONFIG when active. Returns 1 when it is gone, 0 when it
 * was not there, VIRT_DETACH_PENDING when the config lost it but the running
 * guest still holds it: a live detach is a request to the guest (libvirt
 * waits ~5 s for it), completed by the DEVICE_REMOVED event. A VF is not
 * free for another tenant before that event.
 */
#define VIRT_DETACH_PENDING 2
int virt_detach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err);

/* What a swap did. */
typedef enum VirtSwapResult {
        VIRT_SWAP_DONE,               /* new in, old out */
        VIRT_SWAP_PENDING,            /* new in, old's live detach not completed yet (DEVICE_REMOVED will say) */
        VIRT_SWAP_OLD_KEPT,           /* new refused (or old not found): nothing changed, the guest keeps old */
        VIRT_SWAP_BOTH,               /* running: new in, but old's detach refused: the guest has both (err) */
        VIRT_SWAP_ROLLED_BACK,        /* shut off: new refused, old put back into the config */
        VIRT_SWAP_NIC_LOST,           /* shut off: new refused and old refused back: no NIC (err_rollback) */
} VirtSwapResult;

/*
 * Downgrade/upgrade: old_nic out, new_nic in (the caller gives new the same
 * MAC). No guest is left without a NIC:
 *  - running: make before break — attach new (its alias differs from old's,
 *    see virt_nic_set_alias()), then detach old. A live detach is only a
 *    request the guest completes later, so "detach, attach, re-attach on
 *    failure" could not keep that promise (measured: the re-attach finds the
 *    old NIC still there, then its unplug completes). Until old is gone the
 *    guest sees both NICs with one MAC; a VF is not free before its
 *    DEVICE_REMOVED.
 *  - shut off (config only): detach old, attach new, old back on failure.
 * Returns 0 with *ret DONE or PENDING; else the failing step's errno (err
 * its message, err_rollback the failed re-attach's) and *ret where things stand.
 */
int virt_swap(Virt *v, const char *domain, const VirtNic *old_nic, const VirtNic *new_nic,
              VirtSwapResult *ret, VirtError *err, VirtError *err_rollback);
const char *virt_swap_result_to_string(VirtSwapResult r);

/* The vCPU count and, per vCPU, the host CPU it runs on now (-1 = offline/unknown). */
typedef struct VirtVcpus {
        unsigned n;
        int *cpu;                     /* [n] live host CPU (virDomainGetVcpus), -1 when not running */
        CpuSet *pinned;               /* [n] affinity (live when active, else config) */
} VirtVcpus;
int virt_get_vcpus(Virt *v, const char *domain, VirtVcpus *ret, VirtError *err);
void virt_vcpus_done(VirtVcpus *vc);
/*
 * "The host CPU of vCPU 0", for irq_cpus = vcpu: the one CPU vCPU 0 is
 * pinned to when pinned to exactly one; else the CPU it runs on right now
 * (active domains only, and it may move: pin RT guests). -ENXIO when
 * neither (inactive and unpinned).
 */
/* One step of a guest's placement that was not so (before -> after). */
typedef enum VirtPlaceKind {
        VIRT_PLACE_VCPU_PIN,          /* index = the vCPU */
        VIRT_PLACE_EMULATOR_PIN,
        VIRT_PLACE_IOTHREAD_PIN,      /* index = the I/O thread id */
        VIRT_PLACE_VCPU_SCHED,        /* vCPUs 0..index-1 at FIFO prio_after (0: none at FIFO); next start */
        VIRT_PLACE_NUMATUNE,          /* memory strict on node_after (node_before -1: none); next start */
} VirtPlaceKind;

typedef struct VirtPlaceChange {
        VirtPlaceKind kind;
        unsigned index;
        CpuSet before, after;
        int prio_before, prio_after;  /* prio_before -2: not read */
        int node_before, node_after;
} VirtPlaceChange;

typedef struct VirtPlaceChanges {
        VirtPlaceChange *changes;
        size_t n, n_allocated;
} VirtPlaceChanges;
void virt_place_changes_done(VirtPlaceChanges *c);

/*
 * Bring domain to placement p: each vCPU, the emulator and the I/O threads pinned, FIFO and
 * numatune in its definition. Read-modify-write: only what differs is changed, and appended to
 * out (dry_run: appended, not changed). A failure stops there; what was changed before it is in out.
 */
int virt_place_guest(Virt *v, const char *domain, const GuestPlacement *p, bool dry_run, VirtPlaceChanges *out,
                     VirtError *err);

int virt_vcpu0_host_cpu(Virt *v, const char *domain, VirtError *err);

/* The domain's UUID, as QEMU's -uuid has it (VIR_UUID_STRING_BUFLEN). */
#define VIRT_UUID_STRING_MAX 37
int virt_domain_uuid(Virt *v, const char *domain, char ret[static VIRT_UUID_STRING_MAX], VirtError *err);


/* ---- test helpers (the test driver has no device attach) ---------------------- */

/* virDomainDefineXML / Create / Destroy / Undefine by name, for tests and tools. */
int virt_define_xml(Virt *v, const char *xml, VirtError *err);
int virt_domain_start(Virt *v, const char *domain, VirtError *err);
int virt_domain_destroy(Virt *v, const char *domain, VirtError *err);
int virt_domain_undefine(Virt *v, const char *domain, VirtError *err);
/* The domain XML (flags: 0 = live when active; 1 = the inactive config). */
int virt_domain_xml(Virt *v, const char *domain, bool inactive, char **ret, VirtError *err);
