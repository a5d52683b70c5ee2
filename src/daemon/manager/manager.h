/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h — the daemon: an observe, plan, apply and verify cycle, driven by sd-event */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "sriovd/core/host-check.h"
#include "sriovd/core/inventory.h"
#include "sriovd/core/metrics.h"
#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"
#include "config/config.h"
#include "monitor/alerts.h"
#include "tenants/tenants.h"

typedef enum CycleMode {
        CYCLE_DRY_RUN,      /* observe and plan only */
        CYCLE_APPLY,        /* observe, plan, apply, verify */
} CycleMode;

typedef struct CycleResult {
        unsigned n_actions;
        unsigned n_done;
        unsigned n_skipped;      /* not carried out on purpose, such as thread priorities on a fixture */
        unsigned n_failed;
        unsigned n_transient;    /* the failures worth retrying soon, such as EBUSY and EAGAIN */
        unsigned n_drift;        /* actions the verify pass still finds needed */
        unsigned n_policy_errors;
} CycleResult;

typedef struct Manager Manager;

/* A NULL config_path means the default path, where a missing file means the built-in defaults. */
int manager_new(const char *root, const char *config_path, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Load the configuration. On failure, the one in use is kept and the errors are logged. */
int manager_load_config(Manager *m);
/*
 * Run one cycle. The plan, with the results of applying it, and the inventory it was built from
 * stay available until the next cycle. Returns 0, or a negative errno when the host could not
 * be observed at all. Failed actions are counted in ret.
 */
int manager_cycle(Manager *m, CycleMode mode, CycleResult *ret);
const Inventory *manager_inventory(const Manager *m);
const Plan *manager_plan(const Manager *m);
const Config *manager_config(const Manager *m);
/* The host tree, which is "/" or --root's fixture. Every /proc and /sys access goes through it. */
RootFs *manager_root(const Manager *m);

/*
 * The cycle that the drift timer runs. While the last full read is recent, its first pass may
 * re-read only what can drift, on the last inventory. cycle.c defines FULL_READ_USEC.
 */
int manager_drift_check(Manager *m, CycleResult *ret);
/*
 * The cycle that a drift event runs when manager_repair_fast() cannot repair it: its first pass
 * re-reads only the named IRQs and threads, on the last inventory, and repairs what differs. The
 * daemon runs it for what the BPF events named; the benchmark and the tests name what they
 * changed.
 */
int manager_repair(Manager *m, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids,
                   CycleResult *ret);
/*
 * What a drift event tries first: the named NIC vectors, and the vectors whose handler threads
 * are named, put back without a cycle. Each is read again and planned alone, with its device. It
 * is written back only when the last cycle left it at the value planned now, and when no cycle is
 * due. The write, its journal line and DriftDetected are a cycle's. Returns 1 when every named
 * target is as planned now, 0 when a cycle must look at some of them, and -ENOMEM. ret, when not
 * NULL, counts what was written. tests/unit/test-repair.c shows when it applies.
 */
int manager_repair_fast(Manager *m, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids,
                        CycleResult *ret);
/*
 * Whether the kind of kernel events (a BpfFeature) comes from BPF now. When it does not, *ret_reason
 * says why. The drift events count only while they are read; without a daemon, never.
 */
bool manager_kernel_events(const Manager *m, int feature, const char **ret_reason);
/* How many observes were refreshes rather than full reads, for the benchmark and the tests. */
unsigned manager_refreshes(const Manager *m);
/*
 * sriovd --once runs one cycle. If the cycle created VFs, it then follows the kernel's events
 * until all of them are there or late, and checks again as they come. ret adds up every cycle,
 * and manager_plan() then holds all their actions.
 */
int manager_once(Manager *m, CycleResult *ret);

/* ---- Tenants: what the D-Bus API and sriovctl drive ---- */

typedef struct AllocSummary {
        unsigned vfs_total, vfs_usable, vfs_allocated;
        double utilization, target;
        size_t tenants;
} AllocSummary;

/*
 * Allocate a NIC for tenant. A repeat for the same tenant, class and node changes nothing, and
 * another class places the tenant again. The decision is written to the state file before this
 * returns 0. A cycle right after applies the VF's MAC, VLAN and coalescing. On a refusal,
 * reason says why; reason may be NULL. Returns:
 *  - -EINVAL for a bad tenant id, domain or node,
 *  - -ENOENT for an unknown class,
 *  - -ENOSPC on a refusal, such as no VF for a sriov-required tenant, with reason saying why,
 *  - -EUSERS for too many tenants,
 *  - -EIO, or the errno, when the state could not be saved. Then nothing changed.
 */
int manager_allocate(Manager *m, const char *tenant, const char *class_name, const char *domain,
                     const TenantOptions *opts, TenantInfo *ret, char *reason, size_t reason_size);
/* Returns -ENOENT for an unknown tenant, and the state errors as above. */
int manager_release(Manager *m, const char *tenant);
/*
 * Apply vf's link settings before vf goes into tenant's guest, rather than in the next cycle.
 * The settings are the clean baseline and the tenant's own. f holds the tenant's MAC and VLAN.
 * Returns how many actions were applied. It returns 0 when there is nothing to change, or when
 * the netdevs are not this host's. It returns a negative errno when an action failed. The
 * failure is logged with the tenant and the VF, and the next cycle retries.
 */
int manager_prepare_vf(Manager *m, const char *tenant, const char *vf, const TenantNicFacts *f);
/*
 * guests.c calls this on libvirt's STARTED event, to watch the VFs that the domain's tenants hold.
 * domain is its name or a tenant's name for it, and uuid, which may be NULL, its UUID.
 */
void manager_watch_guest_irqs(Manager *m, const char *domain, const char *uuid);
/* Set the VFs that libvirt's domains have but no tenant holds, from guests_reconcile(). No one gets them. */
void manager_set_vfs_in_guest(Manager *m, const char (*vfs)[PCI_ADDR_MAX], size_t n);
/* Rewrite the whole state file if its journal has grown enough. The daemon does this after replies. */
int manager_save_state(Manager *m);
/*
 * Changes saved together. Once fn is set, as the bus does, manager_allocate(),
 * manager_release() and manager_set_coalesce() return 0 with the change applied in memory but
 * not yet written. The event loop handles the bus's queued calls first. Every change made
 * before the loop runs its next lower-priority source is written with one fdatasync(). Then fn
 * is told 0, or the errno with every one of the changes undone. Until then,
 * manager_saves_pending() is true, and no change of the group may be acknowledged.
 * manager_flush_saves() writes now. Without an event loop, only manager_flush_saves() writes.
 */
typedef void (*ManagerSavedFn)(Manager *m, int error, uint64_t seq, void *userdata);
void manager_set_saved_fn(Manager *m, ManagerSavedFn fn, void *userdata);
bool manager_saves_pending(const Manager *m);
int manager_flush_saves(Manager *m);
/*
 * manager_set_writer() takes the writer. The daemon makes one on its event loop. With a writer,
 * the group's write goes to the writer's thread. The loop runs manager_start_saves() once the
 * bus has no calls queued, and it returns at once. The calls that arrive meanwhile form the next
 * group. fn is told each group's outcome by seq, in order, from the writer's event loop.
 * manager_saves_seq() returns the group that a change made now is saved with, or 0 when none is
 * pending. A held reply waits for that group.
 */
void manager_set_writer(Manager *m, StateWriter *w);
int manager_start_saves(Manager *m);
uint64_t manager_saves_seq(const Manager *m);
/*
 * Set the per-guest coalescing override. Returns -ENOENT for an unknown tenant, -EINVAL beyond
 * 100000 us, and -EMEDIUMTYPE for a tenant on virtio-net. In that last case nothing changes,
 * and an override the tenant has is kept.
 */
int manager_set_coalesce(Manager *m, const char *tenant, unsigned rx_usecs, unsigned tx_usecs);
int manager_get_tenant(const Manager *m, const char *tenant, TenantInfo *ret);
size_t manager_n_tenants(const Manager *m);
/* The i-th tenant in id order. Returns -ERANGE past the end. */
int manager_tenant(const Manager *m, size_t i, TenantInfo *ret);
void manager_alloc_summary(const Manager *m, AllocSummary *ret);
/*
 * The figures of pf's VFs, for Device1. All are zero before the tenants are placed. The class
 * arrays follow manager_class_name()'s order.
 */
void manager_pf_stats(const Manager *m, const char *pf, AllocPfStats *ret);
const char *manager_class_name(const Manager *m, size_t i);
/* The RT CPU pool and its use per NUMA node. Puts up to n rows into ret, and returns how many there are. */
size_t manager_rt_nodes(const Manager *m, AllocRtNode *ret, size_t n);
/* Let the next cycle change the VF count of pf although tenants hold its VFs. D-Bus forces it with this. */
int manager_force_num_vfs(Manager *m, const char *pf);
/* Run a cycle now, for D-Bus Verify and Reload and for sriovctl. The result is the same as the drift timer's. */
int manager_run_cycle_now(Manager *m, CycleResult *ret);
/*
 * What a cycle would do now, without doing it, for D-Bus Plan. This observes and plans against
 * the allocations as they stand. Nothing is applied or saved. Free *ret with plan_free().
 */
int manager_plan_now(Manager *m, Plan **ret);
/*
 * Reload the configuration and run a cycle, then return. The new policy is in force when this
 * returns 0. On errors, the running configuration stays and the error is returned. ret_errors
 * may be NULL. Otherwise it gets the "FILE:LINE: ..." lines, one per line, for the caller to
 * hand on, and the caller frees them. SIGHUP and the D-Bus Reload both come here, and both
 * send systemd RELOADING=1 before and READY=1 after.
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
/* "starting", "running" or "degraded". "degraded" means the last cycle had failed actions or found drift. */
const char *manager_state(const Manager *m);
/*
 * Why the state is "degraded", one sentence for each reason, such as "2 of the last cycle's
 * actions failed: ...". The list is empty otherwise. Active alerts are not among the reasons.
 * Alerts say how traffic fares, while "degraded" says that sriovd could not bring the host to
 * its policy. The list is NULL-terminated, and the caller owns it.
 */
int manager_state_reasons(const Manager *m, char ***ret);

/* ---- Alerts: the rules of the config in force, fed by the sampler ---- */

/*
 * Hand one sampling period's values to the alert rules with alerts_feed(). Then add the alerts
 * that are active after it to s with alerts_export(). The sampler in metrics-timer.c calls
 * this through a hook once per period from the event loop, before s is written anywhere. The
 * unit tests call it directly.
 */
void manager_metrics_sampled(Manager *m, MetricSnapshot *s);
/* The alert rules and who is alerting, or NULL before a config was loaded. */
const Alerts *manager_alerts(const Manager *m);
/* Called after each raise and clear is logged. The bus uses it for AlertRaised, AlertCleared and ActiveAlerts. */
typedef void (*ManagerAlertFn)(Manager *m, const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata);
void manager_set_alert_fn(Manager *m, ManagerAlertFn fn, void *userdata);
/* The event loop, for the bus connection to attach to. It is NULL before manager_run(). */
struct sd_event *manager_event_loop(const Manager *m);

/* Pick up, from $RUNTIME_DIRECTORY, what a previous sriovd that crashed changed on IRQ threads. */
int manager_load_runtime(Manager *m);

/* Run a re-check cycle soon, after 10 ms, so that a burst of requests shares it. */
void manager_recheck(Manager *m, const char *why);
/* Run a re-check once the events already received are read, at the soonest 5 ms after the last cycle began. */
void manager_recheck_now(Manager *m, const char *why);
/*
 * Connect to libvirt at the config's libvirt_uri. Returns 1 when connected, 0 when no
 * connection is wanted, as on a fixture without a URI, and a negative errno on failure.
 */
int manager_connect_guests(Manager *m);
/* The daemon connects from the event loop, never blocking it, and guests_start() retries with backoff. */
int manager_start_guests(Manager *m);
struct Guests *manager_guests(const Manager *m);

/*
 * Runs the RT host check of src/daemon/monitor/host-check.c on the host now, against the loaded
 * config's CPUs. The result is kept for the metric sriovd_host_check_failed, and *ret points to
 * it until the next call. Returns 0 or a negative errno.
 */
int manager_check_rt_host(Manager *m, const HostCheck **ret);

/*
 * Put IRQ threads back to the scheduling sriovd found them with, and the CPUs' idle states and
 * governors back to what sriovd found, and forget them. Returns the number of threads changed.
 */
int manager_restore_sched(Manager *m);
/* How many CPU idle states and governors the last manager_restore_sched() put back. */
unsigned manager_cpu_restored(const Manager *m);
/*
 * What a stopping daemon does to the host. With restore_on_stop = yes, it calls
 * manager_restore_sched(). By default it does nothing, so that a restart or an upgrade does not
 * drop RT NIC threads from SCHED_FIFO in the meantime. Either way, what sriovd found stays in
 * $RUNTIME_DIRECTORY/saved-sched and saved-cpu, for the next sriovd or for manager_restore().
 */
int manager_stop(Manager *m);
/*
 * sriovd --restore, with no daemon running, undoes what sriovd remembers changing. Every IRQ
 * thread in $RUNTIME_DIRECTORY/saved-sched is put back, after a check that it is still that
 * IRQ's kernel thread, and every CPU file in saved-cpu gets its value back. owned-irqs and
 * owned-devices are removed, so that irqbalance may move those IRQs again.
 * Returns -EBUSY while a daemon holds the runtime directory's lock, or else the number of
 * threads changed.
 */
int manager_restore(Manager *m);
/*
 * The last sampling period's values, see sampler.h. They are NULL while monitoring is off, with
 * monitor_interval_sec = 0, or before the first sample. They stay valid until the next period.
 */
const struct MetricSnapshot *manager_metrics(const Manager *m);
/* Take a sample now, as the timer does, for tests and benchmarks. Returns -ENODATA while monitoring is off. */
int manager_sample_now(Manager *m);

/*
 * The daemon's start: the runtime lock, the event loop, the kernel's events, the state writer,
 * the first cycle and the timers. The D-Bus API attaches to the loop after it, so that no
 * caller sees the API before the host is in order.
 */
int manager_start(Manager *m);
/* Tell systemd that sriovd is ready, connect to libvirt, and run until SIGTERM or SIGINT. */
int manager_run(Manager *m);
