/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kernel-events.h — the daemon's BPF programs, the drift they report and the threads they watch */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/bpf-events.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/macro.h"
#include "config/config.h"
#include "monitor/sampler.h"
#include "latency-threads.h"

/*
 * What the kernel events ask of their owner. The getters return what the owner has now, and
 * may return NULL. The others are asked for from the event loop, when the events are read.
 */
typedef struct KernelEventsHooks {
        const Inventory *(*inventory)(void *userdata);   /* the last cycle's, to know its IRQs */
        const Config *(*config)(void *userdata);         /* for drift_check_sec in the log */
        /* Drift events named IRQs or threads: run a cycle that repairs only those, soon. */
        void (*repair_soon)(void *userdata);
        /* Events were lost or failed: re-check the whole host, as after a kernel event named why. */
        void (*recheck_now)(const char *why, void *userdata);
        /* The drift events stopped working: the drift check polls at drift_check_sec again. */
        void (*drift_events_failed)(void *userdata);
        void *userdata;
} KernelEventsHooks;

/* What drift events named since the last cycle. A cycle that reads only them repairs them. */
typedef struct DriftTargets {
        unsigned *irqs;
        size_t n_irqs, allocated_irqs;
        pid_t *pids;
        size_t n_pids, allocated_pids;
} DriftTargets;

typedef struct KernelEvents KernelEvents;

/*
 * Nothing is loaded until kernel_events_start(). options are copied; NULL means the defaults.
 * Returns -ENOMEM only. The caller frees *ret with kernel_events_free().
 */
int kernel_events_new(const BpfEventsOptions *options, const KernelEventsHooks *hooks, KernelEvents **ret);
KernelEvents *kernel_events_free(KernelEvents *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(KernelEvents *, kernel_events_free);

/*
 * Load the BPF programs, or say in the journal why not, and read the drift events on event.
 * A NULL event loads them without reading the events. enable is the config's bpf =. It does
 * nothing when they are loaded already. Returns -ENOMEM only.
 */
int kernel_events_start(KernelEvents *k, sd_event *event, RootFs *root, bool enable);
/* Unload the programs. The drift targets and the thread list stay. */
void kernel_events_stop(KernelEvents *k);
/* Whether the programs were started, and with which bpf = then. */
bool kernel_events_started(const KernelEvents *k, bool *ret_enabled);
/*
 * Whether the kind of kernel events (a BpfFeature) comes from BPF now. When it does not,
 * *ret_reason says why. The drift events count only while they are read.
 */
bool kernel_events_status(const KernelEvents *k, BpfFeature f, const char **ret_reason);
/* The drift events are loaded and read: the drift check is only a safety net. */
bool kernel_events_drift_ok(const KernelEvents *k);

/* The IRQs and threads named since the last kernel_events_drift_clear(). */
const DriftTargets *kernel_events_drift(const KernelEvents *k);
/* Name these instead, for a repair that tests and benchmarks ask for. Returns -ENOMEM only. */
int kernel_events_drift_set(KernelEvents *k, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids);
void kernel_events_drift_clear(KernelEvents *k);

/*
 * After each cycle: list the latency threads from src and hand their TIDs to BPF, then watch
 * the scheduling of the threads that sriovd places. Each is written to the kernel only when it
 * changed. A failure is logged; a failed watch falls back to polling.
 */
void kernel_events_track(KernelEvents *k, const LatencySources *src);
/*
 * Fill in the latency part of in for one period: the threads, where their latency comes from,
 * and which BPF programs are loaded. With BPF, each thread's histogram is read now. The
 * threads stay k's, until the next kernel_events_track().
 */
void kernel_events_latency_input(KernelEvents *k, SamplerInput *in);
