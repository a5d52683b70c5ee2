/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* virt.h — libvirt: NIC XML, attach, detach and swap, vCPU facts and pinning, domain events, reconcile */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/core/inventory.h"
#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"

/*
 * This is the only module that talks to libvirt. Like every other module, it never logs. Each
 * failing call returns a negative errno. When the caller passes a VirtError, the call also gives
 * libvirt's own message from virGetLastError(). virt_new() switches off libvirt's default error
 * printing to stderr.
 *
 * The module uses no threads. libvirt's client library runs its sockets and timers on the event
 * loop implementation that virt_event_register() hands it, as sd-event sources. Every callback
 * arrives from sd_event_dispatch() on the caller's thread. Calls into libvirt, such as open,
 * attach and list, are synchronous RPCs on a local socket.
 */

#define VIRT_URI_DEFAULT "qemu:///system"
#define VIRT_DOMAIN_NAME_MAX 256
/* The domain's UUID, as QEMU's -uuid has it. The size is VIR_UUID_STRING_BUFLEN. */
#define VIRT_UUID_STRING_MAX 37
/* VIRT_ALIAS_MAX fits VIRT_ALIAS_PREFIX, a tenant id spelled for an alias, "_" and a suffix. */
#define VIRT_ALIAS_MAX 176
#define VIRT_ERROR_MESSAGE_MAX 512
#define VIRT_SOURCE_MAX 64            /* the name of a libvirt network, a bridge or a tap */
#define VIRT_QUEUES_MAX 256
#define VIRT_VCPUS_MAX 4096
/*
 * The prefix of the user aliases that sriovd gives its NICs, "ua-sriovd-TENANT_SUFFIX"; see
 * virt_nic_set_alias().
 */
#define VIRT_ALIAS_PREFIX "ua-sriovd-"
/*
 * Suffixes such as "vf-0000-41-00-2" and "virtio-ethernet" are at most 31 characters. A tenant id
 * at most doubles in length when spelled for an alias.
 */
_Static_assert(sizeof(VIRT_ALIAS_PREFIX) + 2 * (TENANT_ID_MAX - 1) + 1 + 31 <= VIRT_ALIAS_MAX, "alias fits");

/* An errno and libvirt's message. An error of 0 means no error. */
typedef struct VirtError {
        int error;                    /* negative errno */
        int code;                     /* libvirt's virErrorNumber, or 0 when the error is ours */
        char message[VIRT_ERROR_MESSAGE_MAX];
} VirtError;

/*
 * Returns libvirt's virErrorNumber as a negative errno, from one tested table:
 *   NO_DOMAIN, NO_NETWORK, NO_DOMAIN_…                          -ENOENT
 *   OPERATION_INVALID, for a wrong domain state                 -EBUSY
 *   CONFIG_UNSUPPORTED, NO_SUPPORT, OPERATION_UNSUPPORTED       -EOPNOTSUPP
 *   XML_ERROR, XML_DETAIL, INVALID_ARG                          -EINVAL
 *   AUTH, ACCESS                                                -EACCES
 *   NO_CONNECT, RPC, INVALID_CONN                               -ENOTCONN
 *   OPERATION_TIMEOUT                                           -ETIMEDOUT
 *   DEVICE_MISSING                                              -ENODEV
 *   SYSTEM_ERROR                                                its errno, from int1
 *   NO_MEMORY                                                   -ENOMEM
 *   anything else                                               -EIO
 */
int virt_errno_from_code(int code, int sys_errno);

/* ---- NIC XML, pure ------------------------------------------------------- */

typedef enum VirtNicKind {
        VIRT_NIC_VF_INTERFACE,        /* <interface type='hostdev' managed='yes'>; libvirt sets MAC and VLAN */
        VIRT_NIC_VF_HOSTDEV,          /* <hostdev mode='subsystem' type='pci' managed='yes'>; no MAC in XML */
        VIRT_NIC_VIRTIO_NETWORK,      /* <interface type='network'>; source is the network name */
        VIRT_NIC_VIRTIO_BRIDGE,       /* <interface type='bridge'>; source is the bridge name */
        /* <interface type='ethernet'>; source is an existing tap, with managed='no', or "" */
        VIRT_NIC_VIRTIO_ETHERNET,
        _VIRT_NIC_KIND_MAX,
} VirtNicKind;

typedef enum VirtNicDriver {
        VIRT_NIC_DRIVER_DEFAULT,      /* no name=, so libvirt picks; vhost when /dev/vhost-net opens */
        VIRT_NIC_DRIVER_VHOST,        /* name='vhost', which fails where the host has no vhost-net */
        VIRT_NIC_DRIVER_QEMU,         /* name='qemu', which is userspace virtio */
        _VIRT_NIC_DRIVER_MAX,
} VirtNicDriver;

typedef struct VirtNic {
        VirtNicKind kind;
        char vf[PCI_ADDR_MAX];        /* for the VF kinds, "DDDD:BB:DD.F" */
        char mac[MAC_STR_MAX];        /* "" for none, and libvirt picks one; VF_HOSTDEV ignores it */
        int vlan;                     /* for VF_INTERFACE, 1..4094; -1 or 0 for none */
        char source[VIRT_SOURCE_MAX]; /* for virtio, the network, bridge or tap name */
        unsigned queues;              /* for virtio, up to VIRT_QUEUES_MAX; 0 or 1 for libvirt's single queue */
        VirtNicDriver driver;         /* for virtio only */
        /*
         * For virtio, <bandwidth><outbound average=''/>: what the guest may send, in kilobytes
         * per second (1 Mbit/s is 125), which libvirt enforces with tc on the tap. 0 for no limit.
         */
        unsigned outbound_average;
        /* "" for none, else a user alias "ua-...". It uses libvirt's set of characters, [A-Za-z0-9_-]. */
        char alias[VIRT_ALIAS_MAX];
} VirtNic;

#define VIRT_NIC_INIT ((VirtNic) { .vlan = -1 })

/*
 * Sets nic->alias to the user alias for the tenant's nic. The alias is VIRT_ALIAS_PREFIX, then the
 * tenant id, then "_" and what the NIC is, such as "vf-0000-41-00-2" or "virtio-bridge". In the
 * tenant id, '_' is spelled "__" and '.' is spelled "_-". So the alias uses only the characters
 * that libvirt keeps in a user alias. The suffix keeps a swap's new NIC from taking the alias of
 * an old one whose live detach is still pending. Returns -EINVAL when the tenant id is not valid.
 */
int virt_nic_set_alias(VirtNic *nic, const char *tenant);
/*
 * Reads the tenant id from one of our aliases, such as a device event's. Returns -EINVAL when the
 * alias is not ours.
 */
int virt_alias_tenant(const char *alias, char ret[static TENANT_ID_MAX]);
/*
 * Puts the device XML for nic in *ret. The caller frees *ret. The XML is built as a libxml2 tree
 * and written by libxml2, which escapes every value. It is indented by two spaces and ends in a
 * newline. Returns -EINVAL for an invalid PCI address, MAC, VLAN, queue count or alias. It also
 * returns -EINVAL for a bridge or tap name that is no interface name, or for a source with
 * control characters. So it does for a source that is not UTF-8 or holds a character that XML
 * cannot carry. The fragment is read back with libxml2's parser to tell. Last, it returns -EINVAL
 * for a virtio kind without a source where one is needed.
 */
int virt_nic_xml(const VirtNic *nic, char **ret);

const char *virt_nic_kind_to_string(VirtNicKind k);

/* ---- domain XML, pure, with libxml2 -------------------------------------- */

typedef enum VirtDevKind {
        VIRT_DEV_INTERFACE_HOSTDEV,   /* <interface type='hostdev'> with a PCI source */
        VIRT_DEV_HOSTDEV,             /* <hostdev type='pci'> */
        VIRT_DEV_INTERFACE,           /* any other <interface>, such as virtio-net */
} VirtDevKind;

/* One NIC found in a domain's XML. */
typedef struct VirtDomainNic {
        char domain[VIRT_DOMAIN_NAME_MAX];
        VirtDevKind kind;
        char pci[PCI_ADDR_MAX];       /* the host PCI address for the hostdev kinds, else "" */
        char mac[MAC_STR_MAX];        /* in lower case; "" when the XML has none, as for a plain hostdev */
        char type[16];                /* <interface type=...>; "hostdev" for <hostdev> */
        char alias[VIRT_ALIAS_MAX];   /* "" for none */
        unsigned outbound_average;    /* <bandwidth><outbound average=''/> in kB/s, or 0 for none */
} VirtDomainNic;

typedef struct VirtDomainInfo {
        char name[VIRT_DOMAIN_NAME_MAX];
        char uuid[VIRT_UUID_STRING_MAX];   /* in lower case; "" when the XML has none */
        bool active;                  /* running or paused */
        VirtDomainNic *nics;
        size_t n_nics;
} VirtDomainInfo;

/*
 * Parses one domain's XML from virDomainGetXMLDesc() into *ret. It reads the name and every
 * interface and PCI hostdev. The caller frees *ret with virt_domain_info_done(). Returns -EINVAL
 * when xml is no <domain> document. Devices with unreadable addresses are skipped, and they are
 * not fatal.
 */
int virt_domain_parse_xml(const char *xml, VirtDomainInfo *ret);
void virt_domain_info_done(VirtDomainInfo *d);

/*
 * Puts in *ret the domain XML with <cputune><vcpusched vcpus='0-(n-1)' scheduler='fifo'
 * priority='prio'/> in place of any vcpusched it had. A prio of 0 removes every vcpusched. The
 * result is ready for virDomainDefineXML(), and the caller frees it. Returns 1 with *ret set.
 * Returns 0 and leaves *ret untouched when the XML says so already. Returns -EINVAL for bad XML,
 * for an n_vcpus of 0, or for a prio outside 0..99.
 */
int virt_domain_xml_set_vcpu_fifo(const char *xml, unsigned n_vcpus, int prio, char **ret);
/*
 * Puts in *ret the domain XML with <numatune><memory mode='strict' nodeset='node'/>. Returns 1
 * with *ret set, and 0 when the XML says so already. *ret_before gets the single node the XML had,
 * or -1. Returns -EINVAL for bad XML or a bad node.
 */
int virt_domain_xml_set_numatune(const char *xml, int node, int *ret_before, char **ret);
/*
 * Puts in *ret the domain XML with device_xml appended to its <devices>. device_xml is one element,
 * as virt_nic_xml() makes it. The result is ready for virDomainDefineXML(). It does what a CONFIG
 * attach does, for drivers without one. The caller frees *ret. Returns -EINVAL when xml is no
 * <domain> with <devices>, or when device_xml is not one well-formed element.
 */
int virt_domain_xml_add_device(const char *xml, const char *device_xml, char **ret);

/* ---- reconcile, pure ------------------------------------------------------ */

/*
 * A tenant names its guest by the domain's name, or by the domain's UUID when it was given one.
 * Every function here that takes a domain takes either: a canonical lower-case UUID is looked
 * up with virDomainLookupByUUIDString(), and then, if no domain has that UUID, as a name. This
 * says whether ref names the domain with name and uuid, where uuid may be NULL or "".
 */
bool virt_domain_ref_is(const char *ref, const char *name, const char *uuid);

/* What sriovd believes: a tenant holds vf and should be in domain. */
typedef struct VirtExpected {
        const char *tenant;
        const char *vf;               /* the PCI address; NULL or "" for a virtio tenant, checked by MAC */
        const char *mac;              /* may be NULL */
        const char *domain;           /* its name or UUID, see virt_domain_ref_is(); "" or NULL for no domain yet */
        /* For a virtio tenant with a cap, or with 0 for none: its NIC's cap in kB/s. Else not checked. */
        bool have_outbound;
        unsigned outbound_average;
} VirtExpected;

typedef enum VirtFinding {
        VIRT_FINDING_OK,              /* the VF is in the expected domain */
        VIRT_FINDING_MISSING,         /* the tenant's domain exists, but its NIC is not in it */
        VIRT_FINDING_DOMAIN_GONE,     /* the tenant's domain is not defined any more */
        VIRT_FINDING_ELSEWHERE,       /* the VF sits in another domain than the tenant's */
        VIRT_FINDING_DUPLICATE,       /* the VF is in more than one domain */
        VIRT_FINDING_FOREIGN,         /* a domain holds a VF no tenant holds */
        VIRT_FINDING_MAC_MISMATCH,    /* the VF is where expected, with another MAC */
        VIRT_FINDING_RATE_MISMATCH,   /* the virtio NIC is where expected, with another outbound cap */
        _VIRT_FINDING_MAX,
} VirtFinding;

typedef struct VirtReconcileItem {
        VirtFinding finding;
        char tenant[TENANT_ID_MAX];   /* "" for FOREIGN */
        char vf[PCI_ADDR_MAX];        /* "" for a virtio tenant */
        char domain[VIRT_DOMAIN_NAME_MAX];     /* where it is found; "" for MISSING and DOMAIN_GONE */
        char expected_domain[VIRT_DOMAIN_NAME_MAX];
        char mac[MAC_STR_MAX];        /* as found in the domain */
} VirtReconcileItem;

/*
 * Compares the domains' NICs with the tenants and puts the findings in *ret. The caller frees
 * *ret. There is one item per tenant, and one more per placement of a foreign VF, in tenant order
 * and then VF order. The rules are these.
 *  - A VF in two or more domains gives DUPLICATE for each placement. sriovd detaches nothing on
 *    its own. When the tenant's own domain is among them, it keeps the VF. The others are the
 *    operator's to fix.
 *  - A tenant's VF found only in another domain than its own gives ELSEWHERE. The XML is the
 *    truth of where the device is, so the state is stale or the VF was attached by hand. sriovd
 *    must not hand that VF to anyone else.
 *  - A tenant whose domain is not among the domains gives DOMAIN_GONE. The caller releases the
 *    tenant, or keeps it by its keep-on-undefine policy.
 *  - A tenant with a domain that lacks its NIC gives MISSING, and the caller attaches the NIC.
 *    Virtio tenants are looked up by MAC. A virtio tenant without a MAC is OK whenever its
 *    domain exists. A virtio NIC found with another outbound cap than an expected one gives
 *    RATE_MISMATCH, and the caller updates the NIC.
 *  - A VF in a domain that no tenant holds gives FOREIGN, when its PCI address is in the sorted
 *    vfs_in_scope. It is reported, and the allocator must treat it as taken.
 *  - Tenants without a domain are not checked.
 */
int virt_reconcile(const VirtDomainInfo *domains, size_t n_domains,
                   const VirtExpected *expected, size_t n_expected,
                   const char (*vfs_in_scope)[PCI_ADDR_MAX], size_t n_vfs_in_scope,
                   VirtReconcileItem **ret, size_t *ret_n);

const char *virt_finding_to_string(VirtFinding f);

/* ---- the event loop bridge ------------------------------------------------- */

struct sd_event;

/*
 * Registers libvirt's event loop implementation on e with virEventRegisterImpl(). Handles become
 * sd-event io sources, and timeouts become time sources on CLOCK_MONOTONIC with 1 ms accuracy.
 * libvirt's rule is to register once per process, before any connection is opened. A second call
 * with the same loop returns 0. A call with another loop returns -EBUSY while the first loop still
 * has sources. The bridge is process-global because libvirt's registration is. It holds a
 * reference on e.
 */
int virt_event_register(struct sd_event *e);
/*
 * Runs now the free callbacks that libvirt asked for on removed handles and timeouts. They are
 * deferred otherwise, as libvirt requires.
 */
void virt_event_flush(void);
/* Returns the count of live sources, handles and timeouts, for tests. */
size_t virt_event_n_sources(void);

/* ---- the connection --------------------------------------------------------- */

typedef enum VirtEventKind {
        VIRT_EVENT_DEFINED,           /* a domain was defined, or its config was updated */
        VIRT_EVENT_UNDEFINED,
        VIRT_EVENT_STARTED,           /* including restored and migrated in */
        VIRT_EVENT_STOPPED,           /* shut off, destroyed, crashed, failed, saved or migrated out */
        VIRT_EVENT_SUSPENDED,
        VIRT_EVENT_RESUMED,
        VIRT_EVENT_DEVICE_ADDED,      /* device is the device's alias */
        VIRT_EVENT_DEVICE_REMOVED,
        VIRT_EVENT_DEVICE_REMOVAL_FAILED,
        VIRT_EVENT_DISCONNECTED,      /* the connection closed, detail says why, and it is reconnecting */
        VIRT_EVENT_RECONNECTED,       /* open again; resync, because events were missed while down */
        /*
         * Live tunables such as vcpupin and emulatorpin changed. detail_str is vCPU 0's new
         * pinning as a CPU list if it is among them, else "".
         */
        VIRT_EVENT_TUNABLE,
        VIRT_EVENT_CONNECTED,         /* virt_start()'s first open succeeded */
        /*
         * An open failed, or got no answer within the bound (detail -ETIMEDOUT). detail is a
         * negative errno, detail_str the reason. The next attempt follows after the backoff.
         */
        VIRT_EVENT_CONNECT_FAILED,
        _VIRT_EVENT_KIND_MAX,
} VirtEventKind;

typedef struct VirtEvent {
        VirtEventKind kind;
        const char *domain;           /* NULL for connection events */
        const char *uuid;             /* the domain's UUID in lower case; NULL for connection events */
        /* For device events, the alias, such as "net1", "ua-sriovd-t1_virtio-bridge" or "hostdev0". */
        const char *device;
        int detail;                   /* libvirt's detail code, for a lifecycle or a close reason */
        const char *detail_str;       /* the same as text; for TUNABLE, vCPU 0's pinning or "" */
} VirtEvent;

typedef void (*VirtEventFn)(const VirtEvent *ev, void *userdata);

typedef struct Virt Virt;

/*
 * Opens uri and subscribes to lifecycle, device and tunable events, on the calling thread. A uri
 * of NULL means VIRT_URI_DEFAULT. The events are delivered to fn. fn may be NULL, and it can be
 * set later with virt_set_event_fn(). When the connection drops, fn gets DISCONNECTED. The module
 * then reopens it from an sd-event timer, backing off 1 s, 2 s, 4 s and so on up to 30 s, and fn
 * gets RECONNECTED, or CONNECT_FAILED for each attempt that fails. The caller frees *ret with
 * virt_free(). When the first open fails, it returns an errno such as -ENOTCONN and fills err.
 *
 * Every open but virt_new()'s runs on a thread of its own, bounded by the open timeout (15 s), so
 * that a libvirt that accepts and never answers cannot stop the loop. So does every close of a
 * connection: libvirt asks the server then too. In-process drivers such as test:// open and close
 * on the loop.
 */
int virt_new(struct sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err);
/*
 * Like virt_new(), but returns at once, not connected. The first attempt runs from the loop: fn
 * gets CONNECTED, or CONNECT_FAILED and the attempts go on with the backoff.
 */
int virt_start(struct sd_event *e, const char *uri, VirtEventFn fn, void *userdata, Virt **ret, VirtError *err);
Virt *virt_free(Virt *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(Virt *, virt_free);
void virt_set_event_fn(Virt *v, VirtEventFn fn, void *userdata);
bool virt_is_connected(const Virt *v);
/* Sets the bounds of the reconnect backoff in µs. Tests shorten them. */
void virt_set_backoff(Virt *v, uint64_t min_usec, uint64_t max_usec);
/*
 * Switches to uri: an open or opening connection to another URI is let go, with DISCONNECTED if
 * it was open, and the next attempt, at once, opens uri. Returns 1 when it changed, 0 when uri is
 * the one in use, or -ENOMEM.
 */
int virt_set_uri(Virt *v, const char *uri);
/* Sets how long one attempt to open may wait for libvirt's answer, in µs. Tests shorten it. */
void virt_set_open_timeout(Virt *v, uint64_t usec);

/*
 * Lists every domain, active and inactive, with its NICs. The caller frees *ret with
 * virt_domain_list_free().
 */
int virt_list_domains(Virt *v, VirtDomainInfo **ret, size_t *ret_n, VirtError *err);
void virt_domain_list_free(VirtDomainInfo *d, size_t n);
/* Reads one domain by name or UUID. Returns -ENOENT when it is not defined. */
int virt_get_domain(Virt *v, const char *domain, VirtDomainInfo *ret, VirtError *err);
/*
 * Returns 1 when the domain is running or paused, 0 when it is shut off, and -ENOENT when it is not
 * defined.
 */
int virt_domain_is_active(Virt *v, const char *domain, VirtError *err);

/* ---- actions ---------------------------------------------------------------- */

/*
 * Attaches nic to domain, with LIVE|CONFIG when the domain is active and CONFIG when not. Returns
 * 1 when done, and 0 when the NIC was already there with the same MAC, or the same VF for a
 * hostdev. On failure it returns a negative errno and fills err. An example is -EOPNOTSUPP with
 * "host doesn't support passthrough of host PCI devices".
 */
int virt_attach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err);
/*
 * Detaches nic, matched by MAC and interface type, or by VF for a plain hostdev. It uses
 * LIVE|CONFIG when the domain is active. Returns 1 when the NIC is gone, and 0 when it was not
 * there. Returns VIRT_DETACH_PENDING when the config lost it but the running guest still holds it.
 * A live detach is a request to the guest, and libvirt waits about 5 s for it. The DEVICE_REMOVED
 * event completes it. A VF is not free for another tenant before that event.
 */
#define VIRT_DETACH_PENDING 2
int virt_detach(Virt *v, const char *domain, const VirtNic *nic, VirtError *err);
/*
 * Updates a virtio NIC that the domain has, found by its MAC, to nic: libvirt then sets its
 * <bandwidth> with tc on the running guest's tap, and in the config of a persistent domain.
 * Returns -ENODEV when the domain has no such NIC.
 */
int virt_update(Virt *v, const char *domain, const VirtNic *nic, VirtError *err);

/* What a swap did. */
typedef enum VirtSwapResult {
        VIRT_SWAP_DONE,               /* new is in, and old is out */
        /* new is in, but old's live detach has not completed yet. DEVICE_REMOVED will say. */
        VIRT_SWAP_PENDING,
        /* new was refused, or old was not found. Nothing changed, and the guest keeps old. */
        VIRT_SWAP_OLD_KEPT,
        /*
         * The guest runs and new is in, but old's detach was refused. The guest has both, and err
         * says why.
         */
        VIRT_SWAP_BOTH,
        VIRT_SWAP_ROLLED_BACK,        /* shut off; new was refused, and old was put back into the config */
        /* Shut off; new was refused, and old was refused back. No NIC is left, and err_rollback says why. */
        VIRT_SWAP_NIC_LOST,
} VirtSwapResult;

/*
 * Swaps old_nic out and new_nic in, for a downgrade or an upgrade. The caller gives new the same
 * MAC. No guest is left without a NIC.
 *  - A running guest gets make before break. It attaches new and then detaches old. new's alias
 *    differs from old's; see virt_nic_set_alias(). A live detach is only a request that the guest
 *    completes later. So "detach, attach, and re-attach on failure" could not keep the promise.
 *    Measurements showed that the re-attach finds the old NIC still there, and then its unplug
 *    completes. Until old is gone, the guest sees both NICs with one MAC. A VF is not free before
 *    its DEVICE_REMOVED.
 *  - A guest that is shut off has only its config changed. It detaches old and attaches new, and
 *    it puts old back on failure.
 * Returns 0 with *ret set to DONE or PENDING. Otherwise it returns the failing step's errno, and
 * *ret says where things stand. err holds the failing step's message, and err_rollback holds the
 * message of a failed re-attach.
 */
int virt_swap(Virt *v, const char *domain, const VirtNic *old_nic, const VirtNic *new_nic,
              VirtSwapResult *ret, VirtError *err, VirtError *err_rollback);
const char *virt_swap_result_to_string(VirtSwapResult r);

/* The vCPU count and, for each vCPU, the host CPU it runs on now, or -1 when offline or unknown. */
typedef struct VirtVcpus {
        unsigned n;
        int *cpu;                     /* [n] the live host CPU from virDomainGetVcpus(); -1 when not running */
        CpuSet *pinned;               /* [n] the affinity, live when active, else from the config */
} VirtVcpus;
int virt_get_vcpus(Virt *v, const char *domain, VirtVcpus *ret, VirtError *err);
void virt_vcpus_done(VirtVcpus *vc);
/* One step of a guest's placement that was not so, from before to after. */
typedef enum VirtPlaceKind {
        VIRT_PLACE_VCPU_PIN,          /* index is the vCPU */
        VIRT_PLACE_EMULATOR_PIN,
        VIRT_PLACE_IOTHREAD_PIN,      /* index is the I/O thread id */
        /* vCPUs 0..index-1 at FIFO prio_after from the next start. A prio_after of 0 means none at FIFO. */
        VIRT_PLACE_VCPU_SCHED,
        /* Memory strict on node_after from the next start. A node_before of -1 means none. */
        VIRT_PLACE_NUMATUNE,
} VirtPlaceKind;

typedef struct VirtPlaceChange {
        VirtPlaceKind kind;
        unsigned index;
        CpuSet before, after;
        int prio_before, prio_after;  /* a prio_before of -2 means not read */
        int node_before, node_after;
} VirtPlaceChange;

typedef struct VirtPlaceChanges {
        VirtPlaceChange *changes;
        size_t n, n_allocated;
} VirtPlaceChanges;
void virt_place_changes_done(VirtPlaceChanges *c);

/*
 * Brings domain to placement p. Each vCPU, the emulator and the I/O threads are pinned, and FIFO
 * and numatune are set in its definition. It reads, modifies and writes, so only what differs is
 * changed and appended to out. With dry_run, what differs is appended but not changed. A failure
 * stops the call there, and what was changed before it is in out.
 */
int virt_place_guest(Virt *v, const char *domain, const GuestPlacement *p, bool dry_run, VirtPlaceChanges *out,
                     VirtError *err);

/*
 * Returns the host CPU of vCPU 0, for irq_cpus = vcpu. That is the one CPU that vCPU 0 is pinned
 * to, when it is pinned to exactly one. Otherwise it is the CPU that vCPU 0 runs on right now.
 * That works for active domains only, and vCPU 0 may move, so RT guests should be pinned. Returns
 * -ENXIO when neither holds, for a domain that is inactive and unpinned.
 */
int virt_vcpu0_host_cpu(Virt *v, const char *domain, VirtError *err);

int virt_domain_uuid(Virt *v, const char *domain, char ret[static VIRT_UUID_STRING_MAX], VirtError *err);
/* The name and the UUID of the domain that domain names, by name or by UUID. Returns -ENOENT when it is not defined. */
int virt_domain_id(Virt *v, const char *domain, char ret_name[static VIRT_DOMAIN_NAME_MAX],
                   char ret_uuid[static VIRT_UUID_STRING_MAX], VirtError *err);


/* ---- test helpers, because the test driver has no device attach ------------ */

/* These call virDomainDefineXML, Create, Destroy and Undefine by name, for tests and tools. */
int virt_define_xml(Virt *v, const char *xml, VirtError *err);
int virt_domain_start(Virt *v, const char *domain, VirtError *err);
int virt_domain_destroy(Virt *v, const char *domain, VirtError *err);
int virt_domain_undefine(Virt *v, const char *domain, VirtError *err);
/*
 * Puts the domain XML in *ret, which the caller frees. With inactive false it is the live XML when
 * the domain is active. With inactive true it is the inactive config.
 */
int virt_domain_xml(Virt *v, const char *domain, bool inactive, char **ret, VirtError *err);
