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

#include <unistd.h>

#include "manager-internal.h"

static void log_feature(Manager *m, BpfFeature f, const char *what) {
        const char *why;

        if (bpf_events_status(m->bpf, f, &why))
                log_full_errno(LOG_INFO, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_KERNEL_EVENTS),
                               "Kernel events: %s from BPF", what);
        else
                log_full_errno(LOG_NOTICE, 0, LOG_FIELDS(.message_id = SRIOVD_MESSAGE_KERNEL_EVENTS),
                               "Kernel events: no %s from BPF: %s", what, why);
}

static bool add_unique_irq(Manager *m, unsigned irq) {
        for (size_t i = 0; i < m->n_drift_irqs; i++)
                if (m->drift_irqs[i] == irq)
                        return true;
        if (GREEDY_REALLOC(m->drift_irqs, m->allocated_drift_irqs, m->n_drift_irqs + 1) < 0)
                return false;
        m->drift_irqs[m->n_drift_irqs++] = irq;
        return true;
}

static bool add_unique_pid(Manager *m, pid_t pid) {
        for (size_t i = 0; i < m->n_drift_pids; i++)
                if (m->drift_pids[i] == pid)
                        return true;
        if (GREEDY_REALLOC(m->drift_pids, m->allocated_drift_pids, m->n_drift_pids + 1) < 0)
                return false;
        m->drift_pids[m->n_drift_pids++] = pid;
        return true;
}

typedef struct Dispatch {
        Manager *m;
        unsigned n_targets;
        bool whole;                   /* events were lost, or memory ran out: look at everything */
} Dispatch;

static void on_bpf_event(const BpfEvent *e, void *userdata) {
        Dispatch *d = userdata;
        Manager *m = d->m;
        const Inventory *inv = m->inventory;

        switch (e->kind) {
        case BPF_EVENT_IRQ_AFFINITY:
                /* An IRQ sriovd does not know is not sriovd's to keep. A new IRQ is the full read's. */
                if (!inv || (!inventory_find_irq(inv, e->id) && !inventory_find_other_irq(inv, e->id)))
                        return;
                log_debug("Kernel event: IRQ %u's affinity written by %s[%d]", e->id, e->writer_comm,
                          (int) e->writer);
                if (!add_unique_irq(m, e->id))
                        d->whole = true;
                break;
        case BPF_EVENT_SCHED:
                log_debug("Kernel event: thread %u's scheduling set by %s[%d]", e->id, e->writer_comm,
                          (int) e->writer);
                if (!add_unique_pid(m, (pid_t) e->id))
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
        Manager *m = userdata;
        Dispatch d = { .m = m };
        int r;

        r = bpf_events_dispatch(m->bpf, on_bpf_event, &d);
        if (r < 0) {
                /* The events can no longer be trusted: poll again, as without BPF. */
                log_warning_errno(r, "Failed to read the kernel's drift events, checking drift every %u s: %m",
                                  m->config->drift_check_sec);
                m->bpf_source = sd_event_source_disable_unref(m->bpf_source);
                manager_drift_events_failed(m);
                manager_recheck_now(m, "drift events failed");
                return 0;
        }
        if (d.whole)
                manager_recheck_now(m, "drift events lost");
        else if (d.n_targets > 0)
                manager_repair_soon(m);
        return 0;
}

int manager_kernel_events_start(Manager *m) {
        int r, fd;

        if (m->bpf)
                return 0;
        m->bpf_loaded_with = m->config->bpf;
        if (!m->config->bpf)
                r = bpf_events_new_disabled("turned off with bpf = no", &m->bpf);
        else if (!rootfs_sched_live(m->root))
                r = bpf_events_new_disabled("the host is a fixture tree, not this machine's kernel", &m->bpf);
        else
                r = bpf_events_new(getpid(), &m->bpf_options, &m->bpf);
        if (r < 0)
                return log_oom();
        log_feature(m, BPF_FEATURE_LATENCY, "thread latency");
        log_feature(m, BPF_FEATURE_DRIFT, "drift events");

        m->drift_events_ok = false;
        fd = bpf_events_fd(m->bpf);
        if (fd < 0 || !m->event)
                return 0;
        r = sd_event_add_io(m->event, &m->bpf_source, fd, EPOLLIN, on_bpf_io, m);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch the kernel's drift events, checking drift every %u s: %m",
                                  m->config->drift_check_sec);
                return 0;
        }
        /* Read the events before the cycles that they ask for, like the other monitors. */
        (void) sd_event_source_set_priority(m->bpf_source, SD_EVENT_PRIORITY_NORMAL);
        m->drift_events_ok = true;
        return 0;
}

void manager_kernel_events_stop(Manager *m) {
        m->bpf_source = sd_event_source_disable_unref(m->bpf_source);
        m->repair_timer = sd_event_source_disable_unref(m->repair_timer);
        m->repair_defer = sd_event_source_disable_unref(m->repair_defer);
        m->bpf = bpf_events_free(m->bpf);
        m->drift_events_ok = false;
}

/*
 * The threads whose scheduling sriovd sets: the NICs' IRQ threads, the kernel threads it places,
 * and the RT guests' vCPU threads and vhost workers that latency-threads.c found. A change to one
 * of them by someone else is an event, and the cycle it runs ends with the guests' placement
 * check. bpf_events_track() writes the kernel's map only where the list changed.
 */
void manager_kernel_events_watch(Manager *m) {
        _cleanup_free_ pid_t *pids = NULL;
        const Inventory *inv = m->inventory;
        size_t n = 0;
        int r;

        if (!m->drift_events_ok || !inv)
                return;
        pids = calloc(inv->n_irqs + inv->n_kthreads + m->latency.n_threads + 1, sizeof(*pids));
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
        for (size_t i = 0; i < m->latency.n_threads; i++) {
                const LatencyThread *t = &m->latency.threads[i];

                if (streq(t->kind, "vcpu") || streq(t->kind, "vhost"))
                        pids[n++] = t->tid;
        }
        r = bpf_events_track(m->bpf, BPF_TRACK_SCHED, pids, n);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch %zu placed threads, checking drift every %u s: %m", n,
                                  m->config->drift_check_sec);
                m->bpf_source = sd_event_source_disable_unref(m->bpf_source);
                manager_drift_events_failed(m);
        }
}

bool manager_kernel_events(const Manager *m, int feature, const char **ret_reason) {
        if (!m->bpf) {
                *ret_reason = "sriovd does not run as a daemon";
                return false;
        }
        if (!bpf_events_status(m->bpf, (BpfFeature) feature, ret_reason))
                return false;
        if (feature == BPF_FEATURE_DRIFT && !m->drift_events_ok) {
                *ret_reason = "the events could not be read, see the journal";
                return false;
        }
        return true;
}
