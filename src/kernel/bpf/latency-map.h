/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency-map.h — the layout of latency.bpf.c's maps, shared with bpf-events.c, which fills and
 * reads them. It includes nothing, so that the BPF program can include it.
 */
#pragma once

/* PID_MAX_LIMIT on 64-bit: no thread has a higher ID. */
#define LATENCY_PID_MAX (4 * 1024 * 1024)
#define LATENCY_PID_WORDS (LATENCY_PID_MAX / 64)

/*
 * A value of the hists map: the thread's run count and run delay as the scheduler's sched_info
 * had them when it last left a CPU, whether those were seen yet, and its histogram.
 */
typedef struct LatencyEntry {
        unsigned long long pcount;
        unsigned long long run_delay_ns;
        unsigned long long primed;
        LatencyHist hist;
} LatencyEntry;
