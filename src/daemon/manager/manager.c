/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.c — the daemon's state, its start, run and stop; the cycle is in cycle.c */

#include <sys/resource.h>

#include "manager-internal.h"


/* The hooks that tests and developers set in the environment. */
typedef struct TestHooks {
        RootFsOptions root;
        bool live_netlink;
        bool bpf_debug;
} TestHooks;

/*
 * This is the one place that reads the hooks from the environment. The lower layers get them as
 * options. The strings point into the environment, and rootfs_new() copies them.
 */
static TestHooks test_hooks_from_env(void) {
        return (TestHooks) {
                .root = {
                        .sched_live = streq_ptr(getenv("SRIOVD_TEST_LIVE_SCHED"), "1"),
                        .fail_writes = getenv("SRIOVD_TEST_FAIL_WRITE"),
                        .test_kernel = getenv("SRIOVD_TEST_KERNEL"),
                },
                .live_netlink = streq_ptr(getenv("SRIOVD_TEST_LIVE_NETLINK"), "1"),
                .bpf_debug = getenv("SRIOVD_BPF_DEBUG") != NULL,
        };
}

/* ---- The hooks of the rooms below: what they read from the manager and ask of it ---- */

/* The getters that every room below reads the manager's current state through. */
static const Config *hook_config(void *userdata) {
        Manager *m = userdata;
        return m->config;
}

static const Inventory *hook_inventory(void *userdata) {
        Manager *m = userdata;
        return m->inventory;
}

static const Tenants *hook_tenants(void *userdata) {
        Manager *m = userdata;
        return m->tenants;
}

static void hook_repair_soon(void *userdata) {
        manager_repair_soon(userdata);
}

static void hook_recheck_now(const char *why, void *userdata) {
        manager_recheck_now(userdata, why);
}

static void hook_drift_events_failed(void *userdata) {
        manager_drift_events_failed(userdata);
}

static void hook_sampled(MetricSnapshot *snap, void *userdata) {
        manager_metrics_sampled(userdata, snap);
}

static void hook_link_up(int ifindex, void *userdata) {
        manager_hotplug_link_up(userdata, ifindex);
}

static void hook_pci_event(const char *action, const char *addr, void *userdata) {
        manager_hotplug_event(userdata, action, addr);
}

/* A probe cannot be waited for when the events that end it may be lost. */
static void hook_devices_lost(void *userdata) {
        Manager *m = userdata;
        pci_set_clear(&m->hotplug.probing);
}

/* The hooks through which hotplug.c calls up to the manager. */
static void hotplug_plan_context(PlanContext *ret, void *userdata) {
        manager_plan_context(userdata, NULL, 0, ret);
}

static void hotplug_apply(const Inventory *view, Action *a, void *userdata) {
        manager_apply_action(userdata, view, a);
}

int manager_new(const char *root, const char *config_path, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        TestHooks hooks = test_hooks_from_env();
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->runtime_lock_fd = -EBADF;

        r = rootfs_new(root, &hooks.root, &m->root);
        if (r < 0)
                return log_error_errno(r, "Failed to open root directory %s: %m", root ? root : "/");
        m->kernel.root = m->root;
        m->netlink_live = rootfs_is_real(m->root) || hooks.live_netlink;
        if (m->netlink_live) {
                r = route_nl_open(&m->kernel.route);
                if (r < 0)
                        return log_error_errno(r, "Failed to open an rtnetlink socket: %m");
                r = ethtool_nl_open(&m->kernel.ethtool);
                if (r < 0)
                        log_warning_errno(r, "Failed to open ethtool netlink, coalescing and offloads are not managed: %m");
                r = netdev_nl_open(&m->kernel.netdev);
                /* Linux before 6.5 has no netdev netlink family, so per-NAPI settings are unavailable. */
                if (r == -EOPNOTSUPP)
                        log_info("The kernel has no netdev netlink family, per-NAPI settings are unavailable");
                else if (r < 0)
                        log_warning_errno(r, "Failed to open netdev netlink, per-NAPI settings are not managed: %m");
        }

        r = kernel_events_new(&(BpfEventsOptions) { .libbpf_warnings = hooks.bpf_debug },
                              &(KernelEventsHooks) {
                                      .inventory = hook_inventory,
                                      .config = hook_config,
                                      .repair_soon = hook_repair_soon,
                                      .recheck_now = hook_recheck_now,
                                      .drift_events_failed = hook_drift_events_failed,
                                      .userdata = m,
                              }, &m->kernel_events);
        if (r < 0)
                return log_oom();
        r = metrics_timer_new(m->root, m->netlink_live ? m->kernel.route : NULL, m->kernel_events,
                              &(MetricsTimerHooks) {
                                      .config = hook_config,
                                      .inventory = hook_inventory,
                                      .tenants = hook_tenants,
                                      .sampled = hook_sampled,
                                      .userdata = m,
                              }, &m->metrics);
        if (r < 0)
                return log_oom();

        hotplug_init(&m->hotplug, m->root, &(HotplugHooks) { hotplug_plan_context, hotplug_apply, m });
        vf_irq_watcher_init(&m->irq_watch, m->root, &(VfIrqWatchHooks) { hook_inventory, hook_recheck_now, m });
        m->config_optional = !config_path;
        m->expect_changes = true;
        m->config_path = strdup(config_path ?: CONFIG_DEFAULT_PATH);
        if (!m->config_path)
                return -ENOMEM;

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* This finishes the write in flight and reports it while the rest of the manager still exists. */
        manager_set_writer(m, NULL);
        sd_event_source_unref(m->timers.drift);
        sd_event_source_unref(m->timers.guest);
        sd_event_source_unref(m->timers.recheck);
        sd_event_source_unref(m->timers.recheck_defer);
        sd_event_source_unref(m->timers.vf);
        sd_event_source_unref(m->timers.retry);
        sd_event_source_unref(m->saves.rewrite_defer);
        sd_event_source_unref(m->saves.defer);
        free(m->saves.tenants);
        hotplug_done(&m->hotplug);
        metrics_timer_free(m->metrics);
        host_check_free(m->host_check);
        vf_wait_list_done(&m->vf_waits);
        vf_irq_watcher_done(&m->irq_watch);
        monitors_free(m->monitors);
        sd_event_source_disable_unref(m->timers.repair);
        sd_event_source_disable_unref(m->timers.repair_defer);
        kernel_events_free(m->kernel_events);
        sd_event_unref(m->event);
        irq_files_free(m->irq_files);
        rootfs_free(m->root);
        route_nl_free(m->kernel.route);
        ethtool_nl_free(m->kernel.ethtool);
        netdev_nl_free(m->kernel.netdev);
        alerts_free(m->alerts);
        config_free(m->config);
        inventory_free(m->inventory);
        plan_free(m->plan);
        free(m->config_path);
        free(m->config_errors);
        if (m->runtime_lock_fd >= 0)
                close(m->runtime_lock_fd);
        host_memory_done(&m->host);
        owned_devices_done(&m->owned_devices);
        guests_free(m->guests);
        tenants_free(m->tenants);
        free(m->allocations);
        pci_set_done(&m->held);
        free(m->released);
        pci_set_done(&m->expect_vfs);
        pci_set_done(&m->force_num_vfs);
        free(m);
        return NULL;
}

void manager_hotplug_event(Manager *m, const char *action, const char *addr) {
        hotplug_event(&m->hotplug, m->inventory, m->config, action, addr);
}

void manager_hotplug_link_up(Manager *m, int ifindex) {
        hotplug_link_up(&m->hotplug, m->inventory, m->config, ifindex);
}

const Inventory *manager_inventory(const Manager *m) {
        return m->inventory;
}

RootFs *manager_root(const Manager *m) {
        return m->root;
}

const Plan *manager_plan(const Manager *m) {
        return m->plan;
}

const Config *manager_config(const Manager *m) {
        return m->config;
}

struct sd_event *manager_event_loop(const Manager *m) {
        return m->event;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, exiting", si->ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
        sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
        return sd_event_exit(m->event, 0);
}

static int manager_setup_event(Manager *m);

/*
 * sriovd connects to libvirt to attach the tenants' NICs to their guests. On the real root it
 * always connects. A hypervisor without libvirtd still works, because the guests module keeps
 * trying. Under --root, sriovd connects only when the config names its own URI. Tests name
 * libvirt's test driver there.
 *
 * Returns 1 when the guests should be connected and the event loop is ready. Returns 0 when
 * they are connected already, or when a fixture root has no URI of its own.
 */
static int guests_wanted(Manager *m) {
        int r;

        if (m->guests)
                return 0;
        if (!rootfs_is_real(m->root) && streq(m->config->libvirt_uri, CONFIG_DEFAULT_LIBVIRT_URI))
                return 0;
        r = manager_setup_event(m);
        return r < 0 ? r : 1;
}

/* The guests' hooks: what they ask the manager to do. They read it through the shared getters. */
static void guests_hook_recheck(const char *why, void *userdata) {
        manager_recheck(userdata, why);
}

static int guests_hook_release(const char *tenant, void *userdata) {
        return manager_release(userdata, tenant);
}

static void guests_hook_set_vfs_in_guest(const char (*vfs)[PCI_ADDR_MAX], size_t n, void *userdata) {
        manager_set_vfs_in_guest(userdata, vfs, n);
}

static int guests_hook_prepare_vf(const char *tenant, const char *vf, const TenantNicFacts *f, void *userdata) {
        return manager_prepare_vf(userdata, tenant, vf, f);
}

static void guests_hook_watch_irqs(const char *domain, const char *uuid, void *userdata) {
        manager_watch_guest_irqs(userdata, domain, uuid);
}

static GuestsHooks manager_guests_hooks(Manager *m) {
        return (GuestsHooks) {
                .config = hook_config,
                .inventory = hook_inventory,
                .tenants = hook_tenants,
                .recheck = guests_hook_recheck,
                .release = guests_hook_release,
                .set_vfs_in_guest = guests_hook_set_vfs_in_guest,
                .prepare_vf = guests_hook_prepare_vf,
                .watch_irqs = guests_hook_watch_irqs,
                .userdata = m,
        };
}

int manager_connect_guests(Manager *m) {
        GuestsHooks hooks = manager_guests_hooks(m);
        int r;

        r = guests_wanted(m);
        if (r <= 0)
                return r;
        r = guests_new(m->event, m->root, &hooks, m->config->libvirt_uri, &m->guests);
        if (r < 0)
                return r;
        guests_resync(m->guests);
        return 1;
}

/*
 * The daemon uses this version of manager_connect_guests(). It connects from the event loop
 * and never blocks the loop. At boot, systemd holds libvirt's socket until sriovd is ready, so
 * a blocking connect would wait for sriovd itself. The connection is retried with backoff
 * until it succeeds.
 */
int manager_start_guests(Manager *m) {
        GuestsHooks hooks = manager_guests_hooks(m);
        int r;

        r = guests_wanted(m);
        if (r <= 0)
                return r;
        r = guests_start(m->event, m->root, &hooks, m->config->libvirt_uri, &m->guests);
        if (r < 0)
                return r;
        return 1;
}

struct Guests *manager_guests(const Manager *m) {
        return m->guests;
}

/*
 * This sets up the event loop and the kernel event sources. The daemon always uses them.
 * sriovd --once uses them while it waits for new VFs to appear.
 */
static int manager_setup_event(Manager *m) {
        int r;

        if (m->event)
                return 0;
        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        r = monitors_new(m->event, &m->kernel,
                         &(MonitorsHooks) {
                                 .kernel_event = manager_on_kernel_event,
                                 .link_up = hook_link_up,
                                 .pci_event = hook_pci_event,
                                 .devices_lost = hook_devices_lost,
                                 .userdata = m,
                         }, &m->monitors);
        if (r < 0) {
                m->event = sd_event_unref(m->event);
                return log_oom();
        }
        return 0;
}

bool manager_kernel_events(const Manager *m, int feature, const char **ret_reason) {
        return kernel_events_status(m->kernel_events, (BpfFeature) feature, ret_reason);
}

int manager_arm_sampler(Manager *m) {
        return metrics_timer_arm(m->metrics, m->event, m->config ? m->config->monitor_interval_sec : 0);
}

int manager_sample_now(Manager *m) {
        return metrics_timer_sample_now(m->metrics);
}

const MetricSnapshot *manager_metrics(const Manager *m) {
        return metrics_timer_last(m->metrics);
}

int manager_repair(Manager *m, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids,
                   CycleResult *ret) {
        int r;

        r = kernel_events_drift_set(m->kernel_events, irqs, n_irqs, pids, n_pids);
        if (r < 0)
                return r;
        m->refresh_only = m->drift_refresh = true;
        r = manager_cycle(m, CYCLE_APPLY, ret);
        m->refresh_only = m->drift_refresh = false;
        kernel_events_drift_clear(m->kernel_events);
        return r;
}

int manager_drift_check(Manager *m, CycleResult *ret) {
        int r;

        m->drift_refresh = true;
        r = manager_cycle(m, CYCLE_APPLY, ret);
        m->drift_refresh = false;
        return r;
}

unsigned manager_refreshes(const Manager *m) {
        return m->n_refreshes;
}

int manager_once(Manager *m, CycleResult *ret) {
        int r;

        m->once = true;
        m->once_total = (CycleResult) {};
        r = manager_cycle(m, CYCLE_APPLY, NULL);
        if (r < 0)
                return r;

        /* When VFs were created, follow the kernel's events until every VF is there or late. */
        if (m->vf_waits.n > 0) {
                r = manager_setup_event(m);
                if (r < 0)
                        return r;
                manager_arm_vf_timer(m);
                while (m->vf_waits.n > 0) {
                        r = sd_event_run(m->event, UINT64_MAX);
                        if (r < 0)
                                return log_error_errno(r, "Event loop failed: %m");
                }
        }
        *ret = m->once_total;
        return 0;
}

/*
 * A drift check reads every IRQ's affinity file through an fd that it keeps open, see
 * irq-files.c. The sampler does the same with its threads' stat files. That makes thousands
 * of fds on a large host. systemd gives a service a soft limit of 1024 fds, which matters only
 * for select(), and a hard limit of 524288. Nothing in sriovd uses select(), so sriovd raises
 * the soft limit up to NOFILE_WANTED. A quarter of the limit it gets goes to the affinity
 * files, up to IRQ_FILES_MAX.
 */
#define NOFILE_WANTED 65536
#define IRQ_FILES_MAX 16384

static size_t manager_raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 0;
        if (rl.rlim_cur < NOFILE_WANTED && rl.rlim_cur < rl.rlim_max) {
                struct rlimit want = { MIN(rl.rlim_max, (rlim_t) NOFILE_WANTED), rl.rlim_max };
                if (setrlimit(RLIMIT_NOFILE, &want) >= 0)
                        rl = want;
        }
        return rl.rlim_cur == RLIM_INFINITY ? IRQ_FILES_MAX : MIN((size_t) rl.rlim_cur / 4, (size_t) IRQ_FILES_MAX);
}

int manager_check_rt_host(Manager *m, const HostCheck **ret) {
        return host_check_replace(&m->host_check, m->root, m->config, ret);
}

void manager_log_rt_host(Manager *m) {
        const HostCheck *hc;
        int r;

        /* A host that does not keep the RT CPUs quiet is worth a warning, not a refusal. */
        r = manager_check_rt_host(m, &hc);
        if (r < 0)
                log_warning_errno(r, "Failed to check the RT host, ignoring: %m");
        else
                host_check_log(hc);
}

int manager_start(Manager *m) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block signals: %m");

        /* The lock allows one daemon per runtime directory, and no sriovd --restore while it runs. */
        r = runtime_lock(&m->runtime_lock_fd);
        if (r == -EBUSY)
                return log_error_errno(r, "Another sriovd, or sriovd --restore, holds %s/lock: %m",
                                       getenv("RUNTIME_DIRECTORY"));
        if (r < 0)
                return log_error_errno(r, "Failed to lock %s/lock: %m", getenv("RUNTIME_DIRECTORY"));

        r = irq_files_new(manager_raise_nofile(), &m->irq_files);
        if (r < 0)
                return log_oom();
        r = manager_setup_event(m);
        if (r < 0)
                return r;
        r = manager_kernel_events_start(m);
        if (r < 0)
                return r;
        if (!m->saves.writer) {
                StateWriter *w;

                /*
                 * Without the writer thread, the groups of changes from D-Bus are written on
                 * the event loop. That is slower, but just as safe.
                 */
                r = state_writer_new(m->event, &w);
                if (r < 0)
                        log_warning_errno(r, "Failed to start the state writer thread, saving on the event loop: %m");
                else
                        manager_set_writer(m, w);
        }
        (void) manager_load_runtime(m);
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m");
        /* sd-event sends WATCHDOG=1 itself, and only when WatchdogSec= is set. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Failed to enable the watchdog: %m");

        log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_STARTED),
                       "sriovd %s starting on root %s", SRIOVD_VERSION, rootfs_path(m->root));
        manager_log_rt_host(m);

        r = manager_run_cycle(m);
        if (r < 0)
                return r;
        r = manager_arm_drift_timer(m);
        if (r >= 0)
                r = manager_arm_guest_timer(m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the drift timer: %m");
        /* The sampler starts after the first apply, so that its first period measures the tuned host. */
        r = manager_arm_sampler(m);
        if (r < 0)
                log_warning_errno(r, "Failed to start the sampler, no metrics: %m");
        return 0;
}

int manager_run(Manager *m) {
        int r;

        m->ready = true;
        manager_emit(m, MANAGER_EVENT_STATE_CHANGED, NULL);
        manager_notify_status(m, "READY=1\n");

        /*
         * libvirt is connected after READY=1. The unit is ordered before libvirtd, so systemd
         * starts libvirtd only after READY=1.
         */
        r = manager_start_guests(m);
        if (r < 0)
                log_warning_errno(r, "Failed to set up the libvirt connection, tenants' NICs are not attached to guests: %m");

        r = sd_event_loop(m->event);
        (void) manager_stop(m);
        /* The write in flight finishes while the bus can still log, acknowledge and announce it. */
        manager_set_writer(m, NULL);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

/* ---- What a run leaves for the next one: the threads' scheduling that sriovd changed ---- */

int manager_load_runtime(Manager *m) {
        return host_memory_load_saved(&m->host);
}

int manager_restore_sched(Manager *m) {
        return host_memory_restore_saved(&m->host, m->root);
}

unsigned manager_cpu_restored(const Manager *m) {
        return m->host.n_cpu_restored;
}

int manager_stop(Manager *m) {
        if (m->config && m->config->restore_on_stop)
                return manager_restore_sched(m);
        if (m->host.saved.n > 0)
                log_info("Stopping with %zu threads left as sriovd set them (restore_on_stop = no); "
                         "what they were before is kept for the next sriovd, and sriovd --restore puts it back",
                         m->host.saved.n);
        if (m->host.saved_cpu.n > 0)
                log_info("Stopping with %zu CPU idle states and governors left as sriovd set them (restore_on_stop = no); "
                         "sriovd --restore puts them back", m->host.saved_cpu.n);
        return 0;
}

int manager_restore(Manager *m) {
        int r;

        r = runtime_lock(&m->runtime_lock_fd);
        if (r == -EBUSY)
                return log_error_errno(r, "sriovd is running (it holds %s/lock): stop it first "
                                       "(systemctl stop sriovd), or its next cycle would redo what --restore undoes",
                                       getenv("RUNTIME_DIRECTORY"));
        if (r < 0)
                return log_error_errno(r, "Failed to lock %s/lock: %m", getenv("RUNTIME_DIRECTORY"));
        r = manager_load_runtime(m);
        if (r < 0)
                return r;
        r = manager_restore_sched(m);
        if (r < 0)
                return r;
        /* sriovd no longer owns these IRQs and devices, so irqbalance may move them again at its next rescan. */
        static const char *const owned[] = { "owned-irqs", "owned-devices" };
        for (size_t i = 0; i < ELEMENTSOF(owned); i++) {
                int k = runtime_file_remove(owned[i]);
                if (k < 0)
                        return log_error_errno(k, "Failed to remove %s/%s: %m", getenv("RUNTIME_DIRECTORY"), owned[i]);
        }
        return r;
}
