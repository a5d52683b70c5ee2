/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bpf-events.h — what the kernel tells sriovd through BPF: the wakeup-to-run latency of the
 * threads it places, and each change that another process makes to an IRQ's affinity or to a
 * placed thread's scheduling.
 *
 * Two sets of programs load on their own, so that one can work where the other cannot. The
 * latency programs sit on the scheduler's tracepoints (tp_btf), the drift programs on the
 * functions that change an affinity or a scheduling (fexit). Both need BTF and CAP_BPF with
 * CAP_PERFMON. A set that cannot load says why in bpf_events_status(); sriovd then reads
 * /proc/PID/schedstat for latency and polls for drift, as before.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/latency-hist.h"
#include "sriovd/shared/macro.h"

typedef struct BpfEvents BpfEvents;

typedef enum BpfFeature {
        BPF_FEATURE_LATENCY,
        BPF_FEATURE_DRIFT,
        _BPF_FEATURE_MAX,
} BpfFeature;

/* What a tracked thread is. It decides the thread's watch: latency, drift or both. */
#define BPF_TRACK_LATENCY 1u           /* its wakeup-to-run latency goes into a histogram */
#define BPF_TRACK_SCHED   2u           /* a change of its scheduling by someone else is an event */

typedef enum BpfEventKind {
        BPF_EVENT_IRQ_AFFINITY,        /* id is the IRQ */
        BPF_EVENT_SCHED,               /* id is the thread */
        BPF_EVENT_LOST,                /* the ring buffer was full: events were dropped */
} BpfEventKind;

typedef struct BpfEvent {
        BpfEventKind kind;
        unsigned id;
        pid_t writer;                  /* the process that made the change */
        char writer_comm[16];
        uint64_t ktime_ns;             /* CLOCK_MONOTONIC of the change */
} BpfEvent;

typedef void (*BpfEventFn)(const BpfEvent *e, void *userdata);

typedef struct BpfEventsOptions {
        /*
         * libbpf's warnings, such as why a program failed to load, go to stderr. libbpf has one
         * print hook per process, so the last bpf_events_new() decides for the whole process.
         */
        bool libbpf_warnings;
} BpfEventsOptions;

/*
 * Loads what it can and never fails for want of BPF: a set that does not load is only marked
 * unavailable, with the reason. self is the process whose own writes are not events: sriovd's
 * writes are never drift. options may be NULL, for the defaults. Returns -ENOMEM only.
 */
int bpf_events_new(pid_t self, const BpfEventsOptions *options, BpfEvents **ret);
/* A BpfEvents that loads nothing, with reason for every set, for a fixture root or a user's choice. */
int bpf_events_new_disabled(const char *reason, BpfEvents **ret);
BpfEvents *bpf_events_free(BpfEvents *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(BpfEvents *, bpf_events_free);

/* Whether the set is loaded and attached. When it is not, *ret_reason says why. */
bool bpf_events_status(const BpfEvents *b, BpfFeature f, const char **ret_reason);

/*
 * Makes the threads with watch flag (one BPF_TRACK_*) exactly pids; the other watch is not
 * changed. A thread that stays keeps its histogram; one that leaves loses it; a new one starts
 * empty. pids needs no order. Returns -ENOSPC beyond BPF_TRACK_MAX threads in all, and a negative
 * errno from the kernel.
 */
#define BPF_TRACK_MAX 8192
int bpf_events_track(BpfEvents *b, unsigned flag, const pid_t *pids, size_t n);

/* Reads the histogram of a tracked thread, counted since it was first tracked. -ENOENT when
 * the thread is not tracked or has not run since; -EOPNOTSUPP without the latency set. */
int bpf_events_read_latency(BpfEvents *b, pid_t pid, LatencyHist *ret);

/*
 * The drift events. The fd becomes readable when events wait; it is -1 without the drift set.
 * dispatch calls fn for each waiting event and returns how many it read, or a negative errno.
 */
int bpf_events_fd(const BpfEvents *b);
int bpf_events_dispatch(BpfEvents *b, BpfEventFn fn, void *userdata);
