/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guests.h — the libvirt side of tenants: their NICs in their domains, their vCPUs, domain lifecycles */
#pragma once

#include "sriovd/allocator.h"
#include "sriovd/plan.h"
#include "sriovd/tenants.h"

typedef struct Manager Manager;
typedef struct Guests Guests;
typedef struct Virt Virt;

/*
 * Connect to libvirt at uri on the manager's event loop, now (blocking: for
 * in-process drivers and tests). Once connected, a connection that drops is
 * reopened by the libvirt module itself (backoff, then a resync).
 */
int guests_new(Manager *m, const char *uri, Guests **ret);
/*
 * The daemon's way: connect from the event loop, never blocking it. Each
 * attempt is tried by a child process first (killed after 15 s without an
 * answer), then opened; failures are retried after 1 s, doubling to 30 s,
 * with the URI the configuration names at that time. Once connected: the
 * NICs reconciled (attached where missing) and the running domains' vCPU 0
 * CPUs and RT pinning learnt (guests_resync()). SIGCHLD must be blocked.
 */
int guests_start(Manager *m, Guests **ret);
/* Whether the libvirt connection is open now. */
bool guests_connected_now(const Guests *g);
/* After a (re)connection: reconcile, and learn the running domains' vCPU 0 CPUs, pin their RT tenants. */
void guests_resync(Guests *g);
Guests *guests_free(Guests *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(Guests *, guests_free);

/* Carry an allocator decision out in the tenant's domain: attach, detach, or swap keeping the MAC. */
void guests_on_decision(Guests *g, const AllocDecision *d, const TenantNicFacts *nic);
/* The host CPU of domain's vCPU 0 while it runs (for irq_cpus = vcpu), -1 when not known. */
int guests_vcpu0_cpu(const Guests *g, const char *domain);
/* Running RT guests on their placement again: drift repaired and logged. */
void guests_check_placements(Guests *g);
/* What placing the running RT guests would change, appended to plan as guest actions (dry run). */
int guests_plan_append(Guests *g, Plan *plan);
/* Compare what libvirt's domains hold with the tenants, and attach what is missing. */
void guests_reconcile(Guests *g);
/* Whether domain runs (true when libvirt cannot be asked now: the reconcile at connection tells). */
bool guests_domain_running(Guests *g, const char *domain);
/* The connection, for tests that drive the libvirt test driver in-process. */
Virt *guests_virt(const Guests *g);
