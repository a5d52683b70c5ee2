/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests.h — the libvirt side of tenants: their NICs in their domains, their vCPUs, domain lifecycles */
#pragma once

#include <systemd/sd-event.h>

#include "sriovd/core/allocator.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"
#include "tenants/tenants.h"

typedef struct Guests Guests;
typedef struct Virt Virt;

/*
 * What the guests read from the manager and ask it to do. The config, the inventory and the
 * tenants are replaced at runtime, so each is asked for when needed. Each getter may return
 * NULL while there is none yet.
 */
typedef struct GuestsHooks {
        const Config *(*config)(void *userdata);
        const Inventory *(*inventory)(void *userdata);
        const Tenants *(*tenants)(void *userdata);
        /* Runs a re-check cycle soon. why goes to the journal. */
        void (*recheck)(const char *why, void *userdata);
        /* Releases tenant, whose domain is gone or stopped. Returns a negative errno on failure. */
        int (*release)(const char *tenant, void *userdata);
        /* Sets the VFs that libvirt's domains have but no tenant holds. No one gets them. */
        void (*set_vfs_in_guest)(const char (*vfs)[PCI_ADDR_MAX], size_t n, void *userdata);
        /* Applies vf's link settings before vf goes into tenant's guest. Logs its own failure. */
        int (*prepare_vf)(const char *tenant, const char *vf, const TenantNicFacts *f, void *userdata);
        /* Watches for the vectors of the VFs in a started guest. uuid may be NULL. */
        void (*watch_irqs)(const char *domain, const char *uuid, void *userdata);
        void *userdata;
} GuestsHooks;

/*
 * Connects to libvirt at uri on the event loop e at once. The call blocks, which suits
 * in-process drivers and tests. Once connected, the libvirt module itself reopens a connection
 * that drops. It backs off and then resyncs. root is the host tree, for the guests' threads in
 * /proc. The Guests keeps e, root and a copy of hooks. Returns 0 and the new Guests in *ret,
 * which the caller frees with guests_free(), or a negative errno.
 */
int guests_new(sd_event *e, RootFs *root, const GuestsHooks *hooks, const char *uri, Guests **ret);
/*
 * Connects to uri from the event loop and never blocks it, as the daemon does. Each attempt
 * runs on a thread of its own and is given up after 15 s without an answer. A failure is retried
 * after 1 s, and the wait doubles up to 30 s. Once connected, guests_resync() reconciles the NICs
 * and attaches those missing. It also learns the running domains' vCPU 0 CPUs and RT pinning.
 * The parameters are as for guests_new().
 */
int guests_start(sd_event *e, RootFs *root, const GuestsHooks *hooks, const char *uri, Guests **ret);
/* Switches to the URI a reload named, if it differs: the next attempt, at once, opens it. */
void guests_set_uri(Guests *g, const char *uri);
/* Whether the libvirt connection is open now. */
bool guests_connected_now(const Guests *g);
/*
 * Runs after each connection and reconnection. It reconciles, learns the running domains' vCPU 0
 * CPUs and pins their RT tenants.
 */
void guests_resync(Guests *g);
Guests *guests_free(Guests *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(Guests *, guests_free);

/*
 * Carries out an allocator decision in the tenant's domain. It attaches, detaches, or swaps and
 * keeps the MAC.
 */
void guests_on_decision(Guests *g, const AllocDecision *d, const TenantNicFacts *nic);
/*
 * Returns the host CPU of the domain's vCPU 0 while it runs, or -1 when it is not known. irq_cpus =
 * vcpu needs it.
 */
int guests_vcpu0_cpu(const Guests *g, const char *domain);
/*
 * Returns the PID of the domain's QEMU as the last placement found it, or 0 when it is not known.
 * It asks neither libvirt nor /proc, so it is cheap enough for every cycle.
 */
pid_t guests_qemu_pid(const Guests *g, const char *domain);
/* Puts running RT guests back on their placement. It repairs drift and logs it. */
void guests_check_placements(Guests *g);
/* Appends to plan, as guest actions, what placing the running RT guests would change. Nothing is changed. */
int guests_plan_append(Guests *g, Plan *plan);
/*
 * Compares what libvirt's domains hold with the tenants, attaches what is missing, and gives a
 * virtio NIC the cap its tenant has now.
 */
void guests_reconcile(Guests *g);
/* The same from the event loop, after what is running now. g may be NULL. */
void guests_reconcile_soon(Guests *g);
/*
 * Whether the domain runs. It is true when libvirt cannot be asked now, because the reconcile at
 * connection will tell.
 */
bool guests_domain_running(Guests *g, const char *domain);
/* Returns the connection, for tests that drive the libvirt test driver in-process. */
Virt *guests_virt(const Guests *g);
