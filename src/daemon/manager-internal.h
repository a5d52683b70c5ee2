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
#include "sriovd/apply.h"
#include "sriovd/bus.h"
#include "sriovd/guests.h"
#include "sriovd/kernel.h"
#include "sriovd/log.h"
#include "sriovd/manager.h"
#include "sriovd/monitor.h"
#include "sriovd/runtime.h"
#include "sriovd/sampler.h"
#include "sriovd/ethtool.h"
#include "sriovd/netdev-genl.h"
#include "sriovd/netlink.h"
#include "sriovd/util.h"
#include "sriovd/vf-irq-watch.h"
#include "sriovd/vf-wait.h"

/* A tenant whose AllocationChanged waits for group seq's write. */
typedef struct ManagerSavedTenant {
        char id[TENANT_ID_MAX];
        uint64_t seq;
} ManagerSavedTenant;

struct Manager {
        sd_event *event;
        sd_event_source *drift_timer;
        sd_event_source *recheck_timer;   /* D-Bus and libvirt requests coalesced into one cycle */
        sd_event_source *recheck_defer;   /* kernel events: one cycle once the pending ones are read */
        sd_event_source *vf_timer;        /* the next VF creation deadline */
        sd_event_source *retry_timer;     /* transient failures, retried with backoff */
        sd_event_source *rewrite_defer;   /* the state file rewritten whole, after the reply */
        sd_event_source *save_defer;      /* the grouped changes written, once the bus has none queued */
        ManagerSavedFn saved_fn;          /* set: the bus's changes are grouped (manager-saves.c) */
        void *saved_userdata;
        const char *saved_why;            /* a saved change wants a cycle: why */
        bool decided_vf;                  /* a saved decision moved a VF (or RT CPUs): a cycle is due */
        ManagerSavedTenant *saved_tenants;   /* AllocationChanged owed once their group is written */
        size_t n_saved_tenants, allocated_saved_tenants;
        StateWriter *writer;              /* the grouped changes' fdatasync() off the loop; NULL: on it */
        uint64_t retry_usec;              /* the next backoff; 0 = none pending */
        uint64_t cycle_started_usec;      /* CLOCK_MONOTONIC; 0 = none yet */
        LinkMonitor *link_monitor;
        EthtoolMonitor *ethtool_monitor;
        DeviceMonitor *device_monitor;
        RootFs *root;
        Kernel kernel;
        /* Whether rtnetlink talks about the netdevs the root's sysfs shows (real root, or a test's netns). */
        bool netlink_live;
        char *config_path;
        int runtime_lock_fd;      /* $RUNTIME_DIRECTORY/lock, held while the daemon or --restore runs */
        char *config_errors;      /* the last failed load's "FILE:LINE: ..." lines, NULL after a good one */
        bool config_optional;    /* default path: absent file = built-in defaults */
        Config *config;
        Inventory *inventory;
        Plan *plan;
        CycleResult last;
        unsigned n_cycles;
        /* A drift check's first pass re-reads only what can drift (inventory_refresh()) while the
         * last full read is younger than FULL_READ_USEC: set by the drift timer for its cycle. */
        bool drift_refresh;
        uint64_t full_read_usec;          /* CLOCK_MONOTONIC of the last full read, 0 = none */
        IrqFiles *irq_files;              /* the affinity files the refresh holds open (manager_run) */
        unsigned n_full_reads, n_refreshes;
        bool ready;
        /* Changes are expected after start and reload; later ones repair drift. */
        bool expect_changes;
        /*
         * VFs whose tenant changed since the last cycle: what sriovd plans for them (their IRQs,
         * link, driver, coalescing) follows the allocation and is not drift either.
         */
        char (*expect_vfs)[PCI_ADDR_MAX];
        size_t n_expect_vfs, allocated_expect_vfs;

        /* What sriovd changed on IRQ threads, restored when sriovd stops (sorted by pid). */
        SavedSched *saved;
        size_t n_saved, allocated_saved;
        bool saved_dirty;         /* to be written to $RUNTIME_DIRECTORY/saved-sched */
        /* IRQs whose affinity the kernel refused for good (sorted); kept across runs of this boot. */
        unsigned *unmanaged;
        size_t n_unmanaged, allocated_unmanaged;
        bool unmanaged_loaded, unmanaged_dirty;

        /* Devices whose netdev refused coalescing / offload changes for good. */
        char (*coalesce_unsupported)[PCI_ADDR_MAX];
        size_t n_coalesce_unsupported, allocated_coalesce_unsupported;
        char (*offloads_unsupported)[PCI_ADDR_MAX];
        size_t n_offloads_unsupported, allocated_offloads_unsupported;
        char (*channels_unsupported)[PCI_ADDR_MAX];
        size_t n_channels_unsupported, allocated_channels_unsupported;

        /* PFs whose driver does not take VF link settings (sorted). */
        char (*vf_link_unsupported)[PCI_ADDR_MAX];
        size_t n_vf_link_unsupported, allocated_vf_link_unsupported;

        /* Who holds which NIC; NULL in dry runs. */
        Tenants *tenants;
        bool tenants_configured;          /* placed against this config (reset by reload) */
        PlanAllocation *allocations;      /* the planner's view of it, for this cycle */
        size_t n_allocations;
        char (*held)[PCI_ADDR_MAX];       /* VFs no tenant holds that a guest may have: not cleaned */
        size_t n_held;
        bool guests_reconciled;           /* libvirt told which VFs its guests have, at least once */
        /* VFs tenants gave back and not cleaned yet, and whose they were (for the plan's words). */
        PlanReleased *released;
        size_t n_released, allocated_released;
        /* The inventory tenants are being placed against (manager_sync_tenants()), newer than ->inventory. */
        const Inventory *syncing;
        char (*force_num_vfs)[PCI_ADDR_MAX];
        size_t n_force_num_vfs, allocated_force_num_vfs;
        ManagerEventFn event_fn;
        void *event_userdata;
        /* The config's alert rules; kept across reloads, so unchanged rules keep their state. */
        Alerts *alerts;
        ManagerAlertFn alert_fn;
        void *alert_userdata;
        Bus *bus;
        Guests *guests;

        /* VFs asked for and not yet seen. */
        VfWaitList vf_waits;
        /* Started guests' passthrough VFs, looked at for the vectors the guest enables (vf-irq-watch.c). */
        VfIrqWatchList irq_watches;
        sd_event_source *irq_watch_timer;
        /* The sampler (manager-metrics.c): its timer, the last period's values, the file's state. */
        Sampler *sampler;
        sd_event_source *sample_timer;
        unsigned sample_interval_sec;     /* what the timer is armed with; 0 = off */
        MetricSnapshot metrics;
        bool have_metrics;
        bool metrics_file_failing;        /* logged once until a write works again */
        /* hotplug.c: VFs between their "add" and their driver's "bind" (kernel events wait for
         * them until probing_until_usec). */
        char (*probing)[PCI_ADDR_MAX];
        size_t n_probing, allocated_probing;
        uint64_t probing_until_usec;
        /* --once: plans and results of every cycle add up until the VFs settle. */
        bool once;
        CycleResult once_total;
};

/* cycle.c */
/* Remember a device that refused a kind of change for good, so it is not asked every cycle. */
void addr_list_add(char (**list)[PCI_ADDR_MAX], size_t *n, size_t *allocated, const char *addr);
/* base: refresh a copy of it (a drift check, a verify after writes a refresh shows), NULL: read the host whole. */
int manager_observe(Manager *m, bool sync_tenants, const Inventory *base, Inventory **ret_inv, Plan **ret_plan);
/* What the planner takes from the manager (tenants, saved scheduling, refusals), with users. */
void manager_plan_context(const Manager *m, const PlanVfUser *users, size_t n_users, PlanContext *ret);
/* One action outside a cycle (a hotplug's pin): carried out, logged and recorded as a cycle's are. */
void manager_apply_action(Manager *m, const Inventory *inv, Action *a);

/* hotplug.c */
/* A PCI device event ("add", "bind", "unbind", "remove" of a function), before the cycle it asks
 * for: a VF of a managed PF is waited for while its driver probes it, and pinned at its "bind". */
void manager_hotplug_event(Manager *m, const char *action, const char *addr);
/* A link came up: a VF's driver requests its vectors at open (igbvf), and they are pinned then. */
void manager_hotplug_link_up(Manager *m, int ifindex);
/* Whether kernel events' cycle waits for a probing VF now, and until when; forgets them after. */
bool manager_hotplug_waiting(Manager *m, uint64_t now, uint64_t *ret_until);
bool manager_guests_known(const Manager *m);
/* $RUNTIME_DIRECTORY/owned-irqs for sriovd-irqbalance-policy. */
int manager_write_owned_irqs(Manager *m);

/* vf-irq-watch.c */
/* Whether irq is a vector the device at addr did not have in old (or had on another driver). */
bool device_irq_is_new(const Inventory *old, const Inventory *inv, const char *addr, unsigned irq);
/* Once per new set: the vfio-msix vectors of tenants' VFs that inv has and old had not, where they went. */
void manager_log_vf_irqs_found(Manager *m, const Inventory *old, const Inventory *inv, const Plan *plan);
/* vf-users.c: who outside sriovd's tenants uses the VFs a pending count change destroys (sorted). */
int manager_read_vf_users(Manager *m, const Inventory *inv, PlanVfUser **ret, size_t *ret_n);
/* netdev-tune.c: coalescing, offloads, channels and NAPIs of the netdevs some class governs. */
void manager_read_tune(Manager *m, Inventory *inv);

/* manager-metrics.c: start, re-arm (interval changed) or stop the sampler after a cycle or reload. */
int manager_arm_sampler(Manager *m);
void manager_metrics_done(Manager *m);

/* manager-tenants.c: tenants, their decisions, and the API the bus calls. */
void manager_emit(Manager *m, ManagerEvent e, const char *subject);
/* read_only: sriovd --dry-run, reading the state directory and never writing it. */
int manager_open_tenants(Manager *m, bool read_only);
void manager_sync_tenants(Manager *m, const Inventory *inv);
/* A re-check cycle soon, when an event loop runs (a tenant's VF wants its MAC, VLAN, window). */
void manager_apply_soon(Manager *m, const char *why);
/* manager-tenants.c: the file written whole from the loop, once the journal has grown enough. */
void manager_rewrite_soon(Manager *m);
/* manager-saves.c: before a change from the bus, the group it joins (if the bus groups them);
 * after it, what follows a saved change, now or once the group is written. */
int manager_saves_join(Manager *m);
void manager_changed(Manager *m, const char *why, bool vf);
/* A change to tenant no decision reports (its coalescing): AllocationChanged, now or once written. */
void manager_changed_tenant(Manager *m, const char *tenant);
void manager_on_saved(int error, size_t n_changes, uint64_t seq, void *userdata);
