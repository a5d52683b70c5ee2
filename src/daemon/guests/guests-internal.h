/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests-internal.h — the guests' state, shared by guests.c and its parts */
#pragma once

#include <sys/types.h>
#include <systemd/sd-event.h>

#include "sriovd/virt/virt.h"
#include "base/log.h"
#include "guests.h"

/* What sriovd knows about a running domain, mainly where its vCPU 0 runs. */
typedef struct Running {
        char domain[VIRT_DOMAIN_NAME_MAX];
        char uuid[VIRT_UUID_STRING_MAX];   /* "" when not known */
        int vcpu0_cpu;
        pid_t qemu_pid;               /* its QEMU's PID as guest-vhost.c last found it, or 0 */
        bool cache_misfit_told;       /* its class's l3_cache_mask does not fit, and the journal was told */
} Running;

/*
 * No connection ever blocks the event loop: the libvirt module opens each one on a thread of its
 * own, with a bound, and retries with backoff. At boot, systemd holds libvirt's socket until
 * sriovd is ready, and libvirt may take its whole start-up time to answer.
 */
struct Guests {
        sd_event *event;
        RootFs *root;
        GuestsHooks hooks;                /* what the manager gives to read, and does when asked */
        Virt *virt;
        unsigned n_failed;                /* attempts that failed since the last connection */
        Running *running;
        size_t n_running, allocated_running;
        sd_event_source *reconcile_defer; /* reconciles after a NIC left a guest, or may have left it */
        bool cache_unsupported_told;      /* the journal heard once that resctrl has no L3 here */
};

/* guests.c: what the hooks give. The config is there once guests exist, the others may be NULL. */
const Config *guests_config(const Guests *g);
const Inventory *guests_inventory(const Guests *g);
/* The number of tenants, 0 before they are loaded, and the i-th in id order: -ERANGE past the end. */
size_t guests_n_tenants(const Guests *g);
int guests_tenant(const Guests *g, size_t i, TenantInfo *ret);

/* guests.c: the NIC that a tenant of cls has: its VF, as an interface or a plain hostdev, or virtio-net. */
int guests_nic_for(const TenantClass *cls, const char *tenant, const char *vf, const TenantNicFacts *f, VirtNic *ret);
/*
 * The cap of a virtio-net NIC, libvirt's outbound average in kB/s, from the tenant's own rate or
 * its class's; 0 for no limit. -1 when neither names one: a <bandwidth> that the operator gave the
 * NIC is then left as it is.
 */
int guests_virtio_outbound(const TenantClass *cls, const TxRates *own);

/* guests.c: the running domain that domain names, by its name or by its UUID as a tenant may. */
Running *guests_running_find(const Guests *g, const char *domain);

/* guests-placement.c */
/* Places domain as its tenants want it: the RT guest and its vhost workers. */
void guests_place_guest(Guests *g, const char *domain);
/* Places the running domain with name and uuid as its RT tenant's class wants it. */
void guests_place_rt_guest(Guests *g, const char *name, const char *uuid);
/* Places a running domain's vhost workers as its virtio-net tenant's class wants them. */
void guests_place_guest_vhost(Guests *g, const char *name, const char *uuid);
/* The guest's last RT tenant was released: the guest leaves its RT CPUs. */
void guests_unplace_rt_guest(Guests *g, const AllocDecision *d, const TenantNicFacts *f, const TenantClass *cls);
/*
 * Finds the name and UUID of the domain that domain names, by name or by UUID. Returns false
 * when libvirt is away or the domain is not defined.
 */
bool guests_domain_id(Guests *g, const char *domain, char name[static VIRT_DOMAIN_NAME_MAX],
                      char uuid[static VIRT_UUID_STRING_MAX]);
