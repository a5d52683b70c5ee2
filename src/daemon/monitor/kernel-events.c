/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel-events.c — the daemon's BPF programs: which ones loaded, the drift they report, and the
 * placed threads whose scheduling they watch
 *
 * An IRQ affinity or a thread's scheduling that someone else changed arrives as an event in a
 * ring buffer, read on the event loop. The event names the IRQ or the thread. A cycle that reads
 * only those then repairs them, in milliseconds. While this works, the drift check runs only at
 * drift_safety_net_sec, for what has no event. Where BPF cannot load, sriovd says why once and
 * checks drift every drift_check_sec, as it did before.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "sriovd/shared/util.h"
#include "base/log.h"
#include "kernel-events.h"

struct KernelEvents {
        KernelEventsHooks hooks;
        BpfEventsOptions options;       /* from SRIOVD_BPF_DEBUG */
        /* Never NULL once started in the daemon. */
        BpfEvents *bpf;
        sd_event_source *source;        /* the drift events' ring buffer */
        bool drift_ok;                  /* the drift events are loaded and read */
        bool loaded_with;               /* the config's bpf = when they were loaded */
        DriftTargets drift;
        /* The RT tenants' threads whose latency is measured; see latency-threads.c. */
        LatencyThreads latency;
};

int kernel_events_new(const BpfEventsOptions *options, const KernelEventsHooks *hooks, KernelEvents **ret) {
        KernelEvents *k;

        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->hooks = *hooks;
        if (options)
                k->options = *options;
        *ret = k;
        return 0;
}

KernelEvents *kernel_events_free(KernelEvents *k) {
        if (!k)
                return NULL;
        kernel_events_stop(k);
        free(k->drift.irqs);
        free(k->drift.pids);
        latency_threads_done(&k->latency);
        free(k);
        return NULL;
}

static unsigned drift_check_sec(const KernelEvents *k) {
        const Config *c = k->hooks.config ? k->hooks.config(k->hooks.userdata) : NULL;
        return c ? c->drift_check_sec : 0;
}

/* The drift events can no longer be trusted: the owner polls again, as without BPF. */
static void drift_failed(KernelEvents *k) {
        k->source = sd_event_source_disable_unref(k->source);
        k->drift_ok = false;
        if (k->hooks.drift_events_failed)
                k->hooks.drift_events_failed(k->hooks.userdata);
}

static void recheck_now(KernelEvents *k, const char *why) {
        if (k->hooks.recheck_now)
                k->hooks.recheck_now(why, k->hooks.userdata);
}

static void log_feature(KernelEvents *k, BpfFeature f, const char *what) {
        const char *why;

        if (bpf_events_status(k->bpf, f, &why))
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_KERNEL_EVENTS),
                               "Kernel events: %s from BPF", what);
        else
                log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_KERNEL_EVENTS),
                               "Kernel events: no %s from BPF: %s", what, why);
}

static bool add_unique_irq(DriftTargets *d, unsigned irq) {
        for (size_t i = 0; i < d->n_irqs; i++)
                if (d->irqs[i] == irq)
                        return true;
        if (GREEDY_REALLOC(d->irqs, d->allocated_irqs, d->n_irqs + 1) < 0)
                return false;
        d->irqs[d->n_irqs++] = irq;
        return true;
}

static bool add_unique_pid(DriftTargets *d, pid_t pid) {
        for (size_t i = 0; i < d->n_pids; i++)
                if (d->pids[i] == pid)
                        return true;
        if (GREEDY_REALLOC(d->pids, d->allocated_pids, d->n_pids + 1) < 0)
                return false;
        d->pids[d->n_pids++] = pid;
        return true;
}

typedef struct Dispatch {
        KernelEvents *k;
        const Inventory *inv;
        unsigned n_targets;
        bool whole;                   /* events were lost, or memory ran out: look at everything */
} Dispatch;

static void on_bpf_event(const BpfEvent *e, void *userdata) {
        Dispatch *d = userdata;
        const Inventory *inv = d->inv;

        switch (e->kind) {
        case BPF_EVENT_IRQ_AFFINITY:
                /* An IRQ sriovd does not know is not sriovd's to keep. A new IRQ is the full read's. */
                if (!inv || (!inventory_find_irq(inv, e->id) && !inventory_find_other_irq(inv, e->id)))
                        return;
                log_debug("Kernel event: IRQ %u's affinity written by %s[%d]", e->id, e->writer_comm,
                          (int) e->writer);
                if (!add_unique_irq(&d->k->drift, e->id))
                        d->whole = true;
                break;
        case BPF_EVENT_SCHED:
                log_debug("Kernel event: thread %u's scheduling set by %s[%d]", e->id, e->writer_comm,
                          (int) e->writer);
                if (!add_unique_pid(&d->k->drift, (pid_t) e->id))
                        d->whole = true;
                break;
        case BPF_EVENT_LOST:
                log_warning("Kernel events: %u drift events were lost, checking the whole host", e->id);
                d->whole = true;
                return;
        }
        d->n_targets++;
}

static int on_bpf_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        KernelEvents *k = userdata;
        Dispatch d = {
                .k = k,
                .inv = k->hooks.inventory ? k->hooks.inventory(k->hooks.userdata) : NULL,
        };
        int r;

        r = bpf_events_dispatch(k->bpf, on_bpf_event, &d);
        if (r < 0) {
                /* The events can no longer be trusted: poll again, as without BPF. */
                log_warning_errno(r, "Failed to read the kernel's drift events, checking drift every %u s: %m",
                                  drift_check_sec(k));
                drift_failed(k);
                recheck_now(k, "drift events failed");
                return 0;
        }
        if (d.whole)
                recheck_now(k, "drift events lost");
        else if (d.n_targets > 0 && k->hooks.repair_soon)
                k->hooks.repair_soon(k->hooks.userdata);
        return 0;
}

int kernel_events_start(KernelEvents *k, sd_event *event, RootFs *root, bool enable) {
        int r, fd;

        if (k->bpf)
                return 0;
        k->loaded_with = enable;
        if (!enable)
                r = bpf_events_new_disabled("turned off with bpf = no", &k->bpf);
        else if (!rootfs_sched_live(root))
                r = bpf_events_new_disabled("the host is a fixture tree, not this machine's kernel", &k->bpf);
        else
                r = bpf_events_new(getpid(), &k->options, &k->bpf);
        if (r < 0)
                return log_oom();
        log_feature(k, BPF_FEATURE_LATENCY, "thread latency");
        log_feature(k, BPF_FEATURE_DRIFT, "drift events");

        k->drift_ok = false;
        fd = bpf_events_fd(k->bpf);
        if (fd < 0 || !event)
                return 0;
        r = sd_event_add_io(event, &k->source, fd, EPOLLIN, on_bpf_io, k);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch the kernel's drift events, checking drift every %u s: %m",
                                  drift_check_sec(k));
                return 0;
        }
        /* Read the events before the cycles that they ask for, like the other monitors. */
        (void) sd_event_source_set_priority(k->source, SD_EVENT_PRIORITY_NORMAL);
        k->drift_ok = true;
        return 0;
}

void kernel_events_stop(KernelEvents *k) {
        k->source = sd_event_source_disable_unref(k->source);
        k->bpf = bpf_events_free(k->bpf);
        k->drift_ok = false;
}

bool kernel_events_started(const KernelEvents *k, bool *ret_enabled) {
        if (ret_enabled)
                *ret_enabled = k->loaded_with;
        return k->bpf != NULL;
}

bool kernel_events_status(const KernelEvents *k, BpfFeature f, const char **ret_reason) {
        if (!k->bpf) {
                *ret_reason = "sriovd does not run as a daemon";
                return false;
        }
        if (!bpf_events_status(k->bpf, f, ret_reason))
                return false;
        if (f == BPF_FEATURE_DRIFT && !k->drift_ok) {
                *ret_reason = "the events could not be read, see the journal";
                return false;
        }
        return true;
}

bool kernel_events_drift_ok(const KernelEvents *k) {
        return k->drift_ok;
}

const DriftTargets *kernel_events_drift(const KernelEvents *k) {
        return &k->drift;
}

int kernel_events_drift_set(KernelEvents *k, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids) {
        DriftTargets *d = &k->drift;

        d->n_irqs = d->n_pids = 0;
        if (GREEDY_REALLOC(d->irqs, d->allocated_irqs, n_irqs) < 0 ||
            GREEDY_REALLOC(d->pids, d->allocated_pids, n_pids) < 0)
                return -ENOMEM;
        memcpy_safe(d->irqs, irqs, n_irqs * sizeof(*irqs));
        memcpy_safe(d->pids, pids, n_pids * sizeof(*pids));
        d->n_irqs = n_irqs;
        d->n_pids = n_pids;
        return 0;
}

void kernel_events_drift_clear(KernelEvents *k) {
        k->drift.n_irqs = k->drift.n_pids = 0;
}

static bool latency_bpf(const KernelEvents *k) {
        return k->bpf && bpf_events_status(k->bpf, BPF_FEATURE_LATENCY, NULL);
}

/* Hand the latency threads' TIDs to BPF. Returns -ENOMEM only; the kernel's refusal is for the next cycle. */
static int track_latency(KernelEvents *k) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        if (!latency_bpf(k))
                return 0;
        pids = malloc(MAX(k->latency.n_threads, (size_t) 1) * sizeof(*pids));
        if (!pids)
                return -ENOMEM;
        for (size_t i = 0; i < k->latency.n_threads; i++)
                pids[n++] = k->latency.threads[i].tid;
        /* bpf_events_track() writes the kernel's maps only where the set changed. */
        r = bpf_events_track(k->bpf, BPF_TRACK_LATENCY, pids, n);
        if (r < 0)
                log_debug("Failed to track the latency of %zu threads, trying again after the next cycle: %s", n, strerror(-r));
        return 0;
}

/*
 * The threads whose scheduling sriovd sets: the NICs' IRQ threads, the kernel threads it places,
 * and the RT guests' vCPU threads and vhost workers that latency-threads.c found. A change to one
 * of them by someone else is an event, and the cycle it runs ends with the guests' placement
 * check. bpf_events_track() writes the kernel's map only where the list changed.
 */
static void watch_sched(KernelEvents *k, const Inventory *inv) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        if (!k->drift_ok || !inv)
                return;
        pids = calloc(inv->n_irqs + inv->n_kthreads + k->latency.n_threads + 1, sizeof(*pids));
        if (!pids) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < inv->n_irqs; i++)
                if (inv->irqs[i].thread > 0)
                        pids[n++] = inv->irqs[i].thread;
        for (size_t i = 0; i < inv->n_kthreads; i++)
                if (inv->kthreads[i].pid > 0)
                        pids[n++] = inv->kthreads[i].pid;
        for (size_t i = 0; i < k->latency.n_threads; i++) {
                const LatencyThread *t = &k->latency.threads[i];

                if (streq(t->kind, "vcpu") || streq(t->kind, "vhost"))
                        pids[n++] = t->tid;
        }
        r = bpf_events_track(k->bpf, BPF_TRACK_SCHED, pids, n);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch %zu placed threads, checking drift every %u s: %m", n,
                                  drift_check_sec(k));
                drift_failed(k);
        }
}

void kernel_events_track(KernelEvents *k, const LatencySources *src) {
        int r;

        r = latency_threads_list(&k->latency, src);
        if (r >= 0)
                r = track_latency(k);
        if (r < 0)
                log_oom();
        watch_sched(k, src->inv);
}

void kernel_events_latency_input(KernelEvents *k, SamplerInput *in) {
        bool bpf = latency_bpf(k);

        in->latency = k->latency.threads;
        in->n_latency = k->latency.n_threads;
        in->latency_source = bpf ? LATENCY_SOURCE_BPF : LATENCY_SOURCE_SCHEDSTAT;
        in->have_bpf = true;
        for (unsigned f = 0; f < _BPF_FEATURE_MAX; f++)
                in->bpf_available[f] = k->bpf && bpf_events_status(k->bpf, (BpfFeature) f, NULL);
        /* The drift events count only while the loop reads them; a failed read falls back to polling. */
        in->bpf_available[BPF_FEATURE_DRIFT] = in->bpf_available[BPF_FEATURE_DRIFT] && k->drift_ok;
        for (size_t i = 0; bpf && i < k->latency.n_threads; i++) {
                LatencyThread *t = &k->latency.threads[i];

                t->have_hist = bpf_events_read_latency(k->bpf, t->tid, &t->hist) >= 0;
        }
}
