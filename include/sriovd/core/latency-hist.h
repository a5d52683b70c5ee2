/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * latency-hist.h — the wakeup-to-run latency histogram that the BPF programs fill and the
 * sampler reads. The slot arithmetic is shared with src/kernel/bpf/latency.bpf.c, so this
 * header includes nothing and uses only C types that BPF has.
 *
 * A slot covers a quarter of a power of two, so a percentile read from it is within 25%. Slot 0
 * is everything under 1.024 µs. Slot 1 + 4 * o + q starts at 2^(o + 10) ns plus q quarters of
 * it. The last slot also holds everything above its start, about 17 s.
 */
#pragma once

#define LATENCY_SLOT_SHIFT 10            /* slot 0 ends at 2^10 ns */
#define LATENCY_OCTAVES 24
#define LATENCY_SLOTS (1 + 4 * LATENCY_OCTAVES)

typedef struct LatencyHist {
        unsigned long long count;
        unsigned long long sum_ns;
        unsigned long long slots[LATENCY_SLOTS];
} LatencyHist;

/* The index of the highest bit set in v, which is not 0. Branch-free, for the BPF verifier. */
static inline unsigned latency_log2(unsigned long long v) {
        unsigned r, s;

        r = (v > 0xFFFFFFFFULL) << 5;
        v >>= r;
        s = (v > 0xFFFF) << 4;
        v >>= s;
        r |= s;
        s = (v > 0xFF) << 3;
        v >>= s;
        r |= s;
        s = (v > 0xF) << 2;
        v >>= s;
        r |= s;
        s = (v > 0x3) << 1;
        v >>= s;
        r |= s;
        return r | (unsigned) (v >> 1);
}

static inline unsigned latency_slot(unsigned long long ns) {
        unsigned l, slot;

        if (ns < (1ULL << LATENCY_SLOT_SHIFT))
                return 0;
        l = latency_log2(ns);
        slot = 1 + 4 * (l - LATENCY_SLOT_SHIFT) + (unsigned) ((ns >> (l - 2)) & 3);
        return slot < LATENCY_SLOTS ? slot : LATENCY_SLOTS - 1;
}

#ifndef __bpf__
#include <stdbool.h>
#include <stdint.h>

/* The first latency in ns that slot s holds. */
uint64_t latency_slot_start(unsigned slot);
/* The first latency in ns above slot s, UINT64_MAX for the last slot. */
uint64_t latency_slot_end(unsigned slot);
/*
 * The latency in ns below which a fraction q of the samples lie, 0 < q <= 1, interpolated within
 * its slot. Returns -ENODATA when the histogram is empty.
 */
int latency_hist_quantile(const LatencyHist *h, double q, double *ret_ns);
/* *a += b. */
void latency_hist_add(LatencyHist *a, const LatencyHist *b);
/*
 * *ret = now - before, for a histogram whose counts only grow. Returns false, and *ret = now,
 * when a count went down: the thread was tracked anew and its histogram started again.
 */
bool latency_hist_delta(const LatencyHist *now, const LatencyHist *before, LatencyHist *ret);
#endif
