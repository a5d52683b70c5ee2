/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h — the daemon: one observe → plan → apply → verify cycle, driven by sd-event */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "sriovd/alerts.h"
#include "sriovd/config.h"
#include "sriovd/inventory.h"
#include "sriovd/metrics.h"
#include "sriovd/plan.h"
#include "sriovd/rootfs.h"
#include "sriovd/tenants.h"

typedef enum CycleMode {
        CYCLE_DRY_RUN,      /* observe and plan only */
        CYCLE_APPLY,        /* observe, plan, apply, verify */
} CycleMode;

typedef struct CycleResult {
        unsigned n_actions;
        unsigned n_done;
        unsigned n_skipped;      /* not carried out on purpose (thread priorities on a fixture) */
        unsigned n_failed;
        unsigned n_transient;    /* of the failures, those worth retrying soon (EBUSY, EAGAIN...) */
        unsigned n_drift;        /* actions the verify pass still finds needed */
        unsigned n_policy_errors;
} CycleResult;

typedef struct Manager Manager;

/* config_path NULL = the default path, where a missing file means built-in defaults. */
int manager_new(const char *root, const char *config_path, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Load the configuration; on failure the one in use is kept and errors are logged. */
int manager_load_config(Manager *m);
/*
 * One cycle. The plan (with apply results) and the inventory it was built from
 * stay available until the next cycle. Returns 0 or a negative errno when the
 * host could not be observed at all; action failures are counted in ret.
 */
int manager_cycle(Manager *m, CycleMode mode, CycleResult *ret);
const Inventory *manager_inventory(const Manager *m);
const Plan *manager_plan(const Manager *m);
const Config *manager_config(const Manager *m);
/* The host tree ("/", or --root's fixture): every /proc and /sys access goes through it. */
RootFs *manager_root(const Manager *m);

/*
 * --once: one cycle, then, if it created VFs, follow the kernel's events until
 * they are all there or late, re-checking as they come. ret adds up every cycle;
 * manager_plan() then holds all their actions.
 */
/*
 * The cycle the drift timer runs: its first pass may re-read only what can drift, on the last
 * inventory, while the last full read is recent (cycle.c, FULL_READ_USEC).
 */
int manager_drift_check(Manager *m, CycleResult *ret);
/* How many observes were refreshes rather than full reads (for the benchmark and tests). */
unsigned manager_refreshes(const Manager *m);
int manager_once(Manager *m, CycleResult *ret);

/* ---- Tenants: what the D-Bus API and sriovctl drive ---- */


typedef struct AllocSummary {
        unsigned vfs_total, vfs_usable, vfs_allocated;
        double utilization, target;
        size_t tenants;
} AllocSummary;

/*
 * Allocate a NIC for tenant (idempotent for the same tenant, class and node;
 * another class re-places it). The decision is written to the state file
 * before this returns 0, and the VF's MAC/VLAN/coalescing are applied by a
 * cycle right after. reason (may be NULL) says why on a refusal.
 * -EINVAL bad tenant id, domain or node; -ENOENT unknown class; -ENOSPC
 * refused (no VF for a sriov-required tenant, reason says why); -EUSERS too
 * many tenants; -EIO (or the errno) when the state could not be saved: then
 * nothing changed.
 */
int manager_allocate(Manager *m, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, TenantInfo *ret, char *reason, size_t reason_size);
/* -ENOENT unknown tenant; state errors as above. */
int manager_release(Manager *m, const char *tenant);
/*
 * Before vf goes into tenant's guest (f: the tenant's MAC and VLAN): its link settings, the clean
 * baseline and the tenant's own, applied now rather than by the next cycle. Returns how many
 * actions were applied (0: nothing to change, or not this host's netdevs), <0 when one failed:
 * logged with the tenant and VF, the next cycle retries.
 */
int manager_prepare_vf(Manager *m, const char *tenant, const char *vf, const TenantNicFacts *f);
/* The VFs libvirt's domains have that no tenant holds (guests_reconcile()): given to no one. */
void manager_set_vfs_in_guest(Manager *m, const char (*vfs)[PCI_ADDR_MAX], size_t n);
/* Rewrite the state file whole if its journal has grown enough (the daemon does it after replies). */
int manager_save_state(Manager *m);
/*
 * Changes saved together. Once fn is set (the bus does), manager_allocate(), manager_release()
 * and manager_set_coalesce() return 0 with the change applied in memory but not yet written:
 * every change made before the event loop runs its next lower-priority source (the bus's queued
 * calls) is written with one fdatasync(), then fn is told 0, or the errno with every one of them
 * undone. Until then manager_saves_pending() is true and no change of the group may be
 * acknowledged. manager_flush_saves() writes now; without an event loop, only it does.
 */
typedef void (*ManagerSavedFn)(Manager *m, int error, uint64_t seq, void *userdata);
void manager_set_saved_fn(Manager *m, ManagerSavedFn fn, void *userdata);
bool manager_saves_pending(const Manager *m);
int manager_flush_saves(Manager *m);
/*
 * With a writer (taken; the daemon makes one on its event loop), the group's write goes to its
 * thread: manager_start_saves() (what the loop runs once the bus has no calls queued) returns at
 * once, the calls that arrive meanwhile form the next group, and fn is told each group's outcome
 * by seq, in order, from the writer's event loop. manager_saves_seq(): the group a change made
 * now is saved with (0: none pending), what a held reply waits for.
 */
void manager_set_writer(Manager *m, StateWriter *w);
int manager_start_saves(Manager *m);
uint64_t manager_saves_seq(const Manager *m);
/*
 * The per-guest coalescing override; -ENOENT unknown tenant, -EINVAL beyond 100000 us,
 * -EMEDIUMTYPE for a tenant on virtio-net (nothing changed; an override it has is kept).
 */
int manager_set_coalesce(Manager *m, const char *tenant, unsigned rx_usecs, unsigned tx_usecs);
int manager_get_tenant(const Manager *m, const char *tenant, TenantInfo *ret);
size_t manager_n_tenants(const Manager *m);
/* The i-th tenant in id order; -ERANGE past the end. */
int manager_tenant(const Manager *m, size_t i, TenantInfo *ret);
void manager_alloc_summary(const Manager *m, AllocSummary *ret);
/* The RT CPU pool and its use per NUMA node: up to n rows into ret, returns how many there are. */
size_t manager_rt_nodes(const Manager *m, AllocRtNode *ret, size_t n);
/* Let the next cycle change the VF count of pf although tenants hold its VFs (D-Bus, forced). */
int manager_force_num_vfs(Manager *m, const char *pf);
/* Run a cycle now (D-Bus Verify/Reload, sriovctl); same result as the drift timer's. */
int manager_run_cycle_now(Manager *m, CycleResult *ret);
/*
 * What a cycle would do now, without doing it (D-Bus Plan): observe and plan
 * against the allocations as they stand; nothing is applied or saved. Free
 * *ret with plan_free().
 */
int manager_plan_now(Manager *m, Plan **ret);
/*
 * Reload the configuration and run a cycle, then return: the new policy is in force when this
 * returns 0. On errors the running one stays and the error is returned; ret_errors (may be
 * NULL) gets the "FILE:LINE: ..." lines, one per line, for the caller to hand on (the caller
 * frees them). SIGHUP and the D-Bus Reload both come here; both tell systemd RELOADING=1 and
 * READY=1 around it.
 */
int manager_reload(Manager *m, char **ret_errors);

typedef enum ManagerEvent {
        MANAGER_EVENT_ALLOCATION_CHANGED,   /* subject: tenant id */
        MANAGER_EVENT_DEVICE_ADDED,         /* subject: PF or VF address */
        MANAGER_EVENT_DEVICE_REMOVED,
        MANAGER_EVENT_DRIFT,                /* subject: what drifted, as in the log */
        MANAGER_EVENT_STATE_CHANGED,        /* the daemon's state or the VF figures changed */
} ManagerEvent;
typedef void (*ManagerEventFn)(Manager *m, ManagerEvent event, const char *subject, void *userdata);
void manager_set_event_fn(Manager *m, ManagerEventFn fn, void *userdata);
/* "starting", "running" or "degraded" (the last cycle failed actions or found drift). */
const char *manager_state(const Manager *m);
/*
 * Why the state is "degraded", one sentence each ("2 of the last cycle's actions failed: ...");
 * none otherwise. Active alerts are not among them: they say how traffic fares, "degraded"
 * that sriovd could not bring the host to its policy. A NULL-terminated list, the caller's.
 */
int manager_state_reasons(const Manager *m, char ***ret);

/* ---- Alerts: the rules of the config in force, fed by the sampler ---- */

/*
 * One sampling period's values, for the alert rules (alerts_feed()), which then add the alerts
 * active after it to s (alerts_export()): the sampler calls this once per period, from the
 * event loop (manager-metrics.c), before s is written anywhere; the unit tests call it directly.
 */
void manager_metrics_sampled(Manager *m, MetricSnapshot *s);
/* The alert rules and who is alerting; NULL before a config was loaded. */
const Alerts *manager_alerts(const Manager *m);
/* Told after each raise and clear is logged (the bus: AlertRaised, AlertCleared, ActiveAlerts). */
typedef void (*ManagerAlertFn)(Manager *m, const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata);
void manager_set_alert_fn(Manager *m, ManagerAlertFn fn, void *userdata);
/* The event loop, for the bus connection to attach to (NULL before manager_run()). */
struct sd_event *manager_event_loop(const Manager *m);

/* Pick up what a previous sriovd (that crashed) changed on IRQ threads, from $RUNTIME_DIRECTORY. */
int manager_load_runtime(Manager *m);

/* A re-check cycle soon (10 ms, so that a burst of requests shares it). */
void manager_recheck(Manager *m, const char *why);
/* A re-check once the events already received are read, 5 ms after the last at the soonest. */
void manager_recheck_now(Manager *m, const char *why);
/* Connect to libvirt (config libvirt_uri): 1 connected, 0 not wanted (a fixture without a URI), <0 failed. */
int manager_connect_guests(Manager *m);
/* The daemon's: connect from the event loop, never blocking it, retried with backoff (guests_start()). */
int manager_start_guests(Manager *m);
struct Guests *manager_guests(const Manager *m);

/*
 * --check-config against the host (check-host.c), after a config that loaded: num_vfs above a
 * PF's sriov_totalvfs and an access_group that does not exist, as "FILE:LINE: error: ..." lines
 * on f (warnings too). Returns the number of errors, -ENODEV when the host cannot be read.
 */
int manager_check_host(Manager *m, FILE *f);

/* Put IRQ threads back to the scheduling sriovd found them with, and forget them. */
int manager_restore_sched(Manager *m);
/*
 * What a stopping daemon does to the host: with restore_on_stop = yes, manager_restore_sched();
 * by default nothing, so a restart or an upgrade does not drop RT NIC threads from SCHED_FIFO
 * meanwhile. What sriovd found stays in $RUNTIME_DIRECTORY/saved-sched either way, for the next
 * sriovd or for manager_restore().
 */
int manager_stop(Manager *m);
/*
 * sriovd --restore, with no daemon running: undo what sriovd remembers changing — every IRQ
 * thread in $RUNTIME_DIRECTORY/saved-sched put back (each checked to still be that IRQ's kernel
 * thread), and owned-irqs removed so irqbalance may move those IRQs again. -EBUSY while a
 * daemon holds the runtime directory's lock. Returns the number of threads changed.
 */
int manager_restore(Manager *m);
/*
 * The last sampling period's values (sampler.h), NULL while monitoring is off
 * (monitor_interval_sec = 0) or before the first sample. Valid until the next period.
 */
const struct MetricSnapshot *manager_metrics(const Manager *m);
/* Take a sample now, as the timer does (tests, benchmarks); -ENODATA while monitoring is off. */
int manager_sample_now(Manager *m);

/* Run as a daemon until SIGTERM/SIGINT. */
int manager_run(Manager *m);
