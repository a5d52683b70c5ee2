/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-internal.h — the daemon's state, shared by the files that make up the manager */
#pragma once

#include <fcntl.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/stat.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "sriovd-config.h"
#include "sriovd/kernel/bpf-events.h"
#include "sriovd/kernel/ethtool.h"
#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/netdev-genl.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/shared/pci-set.h"
#include "sriovd/shared/util.h"
#include "apply/apply.h"
#include "apply/host-memory.h"
#include "apply/owned-devices.h"
#include "base/log.h"
#include "base/runtime.h"
#include "guests/guests.h"
#include "monitor/host-check.h"
#include "monitor/kernel-events.h"
#include "monitor/metrics-timer.h"
#include "monitor/monitors.h"
#include "monitor/sampler.h"
#include "vf/hotplug.h"
#include "vf/vf-irq-watch.h"
#include "vf/vf-wait.h"
#include "manager.h"

/* A tenant whose AllocationChanged signal waits until the group numbered seq is written. */
typedef struct ManagerSavedTenant {
        char id[TENANT_ID_MAX];
        uint64_t seq;
} ManagerSavedTenant;

/* Kernel events start at most this many cycles and repairs in a row at once: see manager-schedule.c. */
#define MANAGER_EVENT_BURST 3

/* When cycles run: see manager-schedule.c. */
typedef struct ManagerTimers {
        sd_event_source *drift;
        sd_event_source *guest;           /* the guests' placement check, while drift events cover the host */
        sd_event_source *recheck;         /* one cycle for a burst of D-Bus and libvirt requests */
        sd_event_source *recheck_defer;   /* one cycle for kernel events, after the pending ones are read */
        sd_event_source *vf;              /* the next VF creation deadline */
        sd_event_source *retry;           /* retries transient failures with backoff */
        uint64_t retry_usec;              /* the next backoff, or 0 when no retry is pending */
        sd_event_source *repair_defer;    /* a cycle that reads only what drift events named, after the events waiting */
        sd_event_source *repair;          /* the same, when too many cycles began in the last 15 ms */
        /* When the last MANAGER_EVENT_BURST cycles and repairs began, oldest at next_start; 0 for none. */
        uint64_t started_usec[MANAGER_EVENT_BURST];
        unsigned next_start;
} ManagerTimers;

/* The bus's changes, saved in groups that share one fdatasync(): see manager-tenants.c. */
typedef struct ManagerSaves {
        sd_event_source *rewrite_defer;   /* rewrites the whole state file after the reply */
        sd_event_source *defer;           /* writes the grouped changes once the bus has no calls queued */
        ManagerSavedFn fn;                /* when set, the bus's changes are grouped */
        void *userdata;
        const char *why;                  /* why a saved change wants a cycle */
        bool decided_vf;                  /* a saved decision moved a VF or RT CPUs, so a cycle is due */
        bool virtio_rates;                /* a virtio tenant's rates changed: its NIC is updated once saved */
        ManagerSavedTenant *tenants;      /* tenants owed an AllocationChanged once their group is written */
        size_t n_tenants, allocated_tenants;
        StateWriter *writer;              /* runs the groups' fdatasync() off the loop; NULL runs it on the loop */
} ManagerSaves;

struct Manager {
        /* The loop and the host. */
        sd_event *event;
        RootFs *root;
        Kernel kernel;
        /*
         * Whether rtnetlink sees the netdevs that the root's sysfs shows. That is true on the real
         * root, and in a test that runs in its own network namespace.
         */
        bool netlink_live;
        int runtime_lock_fd;              /* $RUNTIME_DIRECTORY/lock, held while the daemon or --restore runs */
        bool ready;

        /* The configuration, and the alert rules it sets. */
        char *config_path;
        char *config_errors;              /* the "FILE:LINE: ..." lines of the last failed load; NULL after a good one */
        bool config_optional;             /* the default path: a missing file means the built-in defaults */
        Config *config;
        /* The config's alert rules. They are kept across reloads, so an unchanged rule keeps its state. */
        Alerts *alerts;

        /* The cycle: see cycle.c. */
        Inventory *inventory;
        Plan *plan;
        CycleResult last;
        unsigned n_cycles;
        bool refresh_only;                /* the cycle in progress reads only the drift events' targets */
        /*
         * The drift timer sets this for its cycle. The cycle's first pass then re-reads only what
         * can drift, see inventory_refresh(). It does so while the last full read is younger than
         * FULL_READ_USEC.
         */
        bool drift_refresh;
        uint64_t full_read_usec;          /* CLOCK_MONOTONIC time of the last full read, or 0 for none */
        IrqFiles *irq_files;              /* the affinity files that the refresh holds open, see manager_start() */
        unsigned n_full_reads, n_refreshes;
        /* Changes are expected after a start or a reload. Later changes repair drift. */
        bool expect_changes;
        /*
         * VFs whose tenant changed since the last cycle. What sriovd plans for their IRQs, link,
         * driver and coalescing follows the new allocation, so it is not drift either.
         */
        PciSet expect_vfs;
        /* With --once, the results of every cycle add up until the VFs settle. */
        bool once;
        CycleResult once_total;
        ManagerTimers timers;

        /* Which tenant holds which NIC. The first cycle opens it, read-only in a dry run. */
        Tenants *tenants;
        bool tenants_configured;          /* the tenants are placed under this config; a reload resets it */
        PlanAllocation *allocations;      /* the planner's view of the tenants, for this cycle */
        size_t n_allocations;
        PciSet held;                      /* VFs that no tenant holds but a guest may have; not cleaned */
        bool held_known;                  /* held was found from the tenants */
        bool guests_reconciled;           /* libvirt has said at least once which VFs its guests have */
        /* VFs that tenants gave back and that are not cleaned yet. The plan names each one's tenant. */
        PlanReleased *released;
        size_t n_released, allocated_released;
        /* The inventory that manager_sync_tenants() places tenants against. It is newer than ->inventory. */
        const Inventory *syncing;
        PciSet force_num_vfs;             /* PFs whose VF count may change once, though VFs are allocated */
        ManagerSaves saves;

        /* What the rooms below keep. */
        HostMemory host;                  /* apply: threads to put back, changes the host refused for good */
        OwnedDevices owned_devices;       /* apply: the PFs that irqbalance's policy script bans */
        VfWaitList vf_waits;              /* vf: VFs asked for and not yet seen */
        VfIrqWatcher irq_watch;           /* vf: started guests' passthrough VFs, watched for new vectors */
        Hotplug hotplug;                  /* vf: VFs between their "add" and their driver's "bind" */
        Monitors *monitors;               /* monitor: the link, ethtool and device monitors */
        KernelEvents *kernel_events;      /* monitor: BPF thread latency and drift events; never NULL */
        MetricsTimer *metrics;            /* monitor: the sampler, its timer and the metrics file; never NULL */
        HostCheck *host_check;            /* monitor: the last RT host check, for its metric */
        Guests *guests;                   /* guests: libvirt's side of the tenants */

        /* The bus's callbacks. */
        ManagerEventFn event_fn;
        void *event_userdata;
        ManagerAlertFn alert_fn;
        void *alert_userdata;
};

/* cycle.c */
/*
 * Read the host and plan. A non-NULL base is refreshed in a copy, as a drift check does, and as
 * the verify after writes does when a refresh can see them. A NULL base reads the whole host.
 */
int manager_observe(Manager *m, bool sync_tenants, const Inventory *base, Inventory **ret_inv, Plan **ret_plan);
/* Fill in what the planner takes from the manager: tenants, saved scheduling, refusals and users. */
void manager_plan_context(const Manager *m, const PlanVfUser *users, size_t n_users, PlanContext *ret);
/* Carry out one action outside a cycle, such as a hotplug pin. It is logged and recorded as a cycle's are. */
void manager_apply_action(Manager *m, const Inventory *inv, Action *a);
/* Emit DriftDetected for a, with outcome such as "repaired". */
void manager_emit_drift(Manager *m, const Action *a, const char *outcome);
/* Remember what an applied action's result teaches, in m->host. */
void manager_record(Manager *m, const Action *a);

bool manager_guests_known(const Manager *m);

/* manager.c: a device event or a link that came up, handed to hotplug.c with the last inventory. */
void manager_hotplug_event(Manager *m, const char *action, const char *addr);
void manager_hotplug_link_up(Manager *m, int ifindex);

/* manager-schedule.c: load the BPF programs, or say why not, and unload them with their repairs. */
int manager_kernel_events_start(Manager *m);
void manager_kernel_events_stop(Manager *m);
/* manager-schedule.c: repair what drift events named, at once if it can, else in a cycle that reads only them, soon. */
void manager_repair_soon(Manager *m);
/* manager-schedule.c: whether a cycle is armed, such as a re-check, a repair or a retry. */
bool manager_cycle_due(const Manager *m);
/* manager-repair.c: repair what the drift events named without a cycle, if it can, and forget them then. */
bool manager_repair_named(Manager *m);
/* manager-schedule.c: the drift events stopped working; the drift check polls at drift_check_sec again. */
void manager_drift_events_failed(Manager *m);
/* manager-schedule.c: run a cycle now, then arm what follows it: retries, the VF deadline and events. */
int manager_run_cycle(Manager *m);
/* Tell systemd the host's size and the last cycle's counts, after prefix, such as "READY=1\n". */
void manager_notify_status(Manager *m, const char *prefix);
/* Arm the next VF creation deadline, or stop its timer when no VF is awaited. */
void manager_arm_vf_timer(Manager *m);
/* Arm the drift check and the guests' placement check for their current periods. */
int manager_arm_drift_timer(Manager *m);
int manager_arm_guest_timer(Manager *m);
/* A kernel event named what: run a re-check cycle soon. The monitors call this; userdata is the Manager. */
void manager_on_kernel_event(const char *what, void *userdata);
/* manager.c: start, re-arm or stop the sampler after a cycle or a reload. */
int manager_arm_sampler(Manager *m);
/* Runs the RT host check, keeps it for the metric, and logs each failed check as a warning. */
void manager_log_rt_host(Manager *m);

/* manager-tenants.c: tenants, their decisions, and the API the bus calls. */
void manager_emit(Manager *m, ManagerEvent e, const char *subject);
/* read_only is for sriovd --dry-run, which reads the state directory and never writes it. */
int manager_open_tenants(Manager *m, bool read_only);
void manager_sync_tenants(Manager *m, const Inventory *inv);
/*
 * Run a re-check cycle soon, if an event loop runs. A tenant's VF wants its MAC, VLAN and
 * window set without waiting for the drift check.
 */
void manager_apply_soon(Manager *m, const char *why);
/* manager-tenants.c: rewrite the whole state file from the loop, once the journal has grown enough. */
void manager_rewrite_soon(Manager *m);
/*
 * manager-tenants.c: manager_saves_join() comes before a change from the bus. It joins the change
 * to the open group when the bus groups its changes. manager_changed() comes after the change.
 * It does what follows a saved change, now or once the group is written.
 */
int manager_saves_join(Manager *m);
void manager_changed(Manager *m, const char *why, bool vf);
/*
 * Send AllocationChanged for a change to tenant that no decision reports, such as its coalescing.
 * The signal goes out now, or once the group is written.
 */

void manager_changed_tenant(Manager *m, const char *tenant);
void manager_on_saved(int error, size_t n_changes, uint64_t seq, void *userdata);
